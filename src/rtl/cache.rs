//! Set-associative, sectored, write-back cache with an MSHR file: the metadata caches of
//! PACT'12 (docs/FORMATS.md, PACT'12 §6 `md_cache` + `md_mshr`) and ISCA'20 (docs/FORMATS.md, Buddy §7
//! `meta_cache_slice`). The golden model is [`crate::model::cache`]; this controller handles
//! the same events in the same order, so every output matches it beat for beat.
//!
//! Channels (hwzip streams):
//! * `req` in: `{id, field, we, wdata}`, a lookup of one `field_bits` field;
//! * `resp` out: `{id, hit, data}`, in the order the model answers;
//! * `mreq` out: `{we, addr, wdata}`, a sector read (MSHR allocation) or a write-back of one
//!   dirty sector, on one channel so a later read never passes an earlier write;
//! * `mfill` in: `{data, addr}`, a sector read answer, in any order across MSHRs.
//!
//! One event at a time (an in-order controller, `state_q`):
//! * `idle`: a fill is taken first (once no LRU update is pending); else a lookup, when the
//!   model would accept it (a hit, a merge into a non-full MSHR of its sector, or a free
//!   MSHR) and both output registers can load. A hit answers in the same cycle (read or read-modify-write of the line);
//!   a miss parks the request and sends the sector read.
//! * `wb`: the victim's dirty sectors go out, one per cycle, in sector order;
//! * `install`: the sector is written, tag/valid/dirty and LRU updated;
//! * `release`: the parked requests are answered one per cycle, then the MSHR is freed.
//!
//! Storage: the data array is a RAM (`u_data`, [`crate::hdl::ram`]: one word per sector,
//! sets x ways x sectors words, one write enable per field, one synchronous read port);
//! tags, per-sector valid/dirty bits and LRU ranks are flops; the MSHR file holds
//! `mshr_slots` requests per entry. Counters `cnt_hits_o`, `cnt_misses_o`, `cnt_merges_o`
//! count like the model, one cycle after the lookup that they count. An access's LRU update
//! and dirty bit are written a cycle later too (`touch_*_q`, [`way_update`]): a fill, which
//! reads them for its victim, waits for a pending one.
//!
//! The RAM's read register is the data half of both output registers: a read access loads
//! `resp` with the field's position and the RAM reads the sector at the same edge; a
//! write-back loads `mreq` and the RAM reads the victim's sector. A field write or a sector
//! fill writes only its lanes, so no access reads a line to modify it. The read register
//! belongs to the output that read it last until that beat leaves: a release's read for
//! `resp` waits while `mreq` holds a write-back that is not leaving (a lookup or a fill is
//! taken only when both outputs are free, so no other read can find the register taken;
//! docs/MEMORIES.md).

use crate::hdl::blocks::{any_of, first_set, mux_tree, onehot_index, or_tree};
use crate::hdl::pipe::{Pipeline, Policy};
use crate::hdl::ram::{self, RamPorts, RamSpec};
use crate::hdl::stream::{self, Layout, Stream};
use crate::hdl::{clog2, Expr, Fsm, HdlError, Module, ModuleBuilder, Net, Reg};
use crate::model::cache::CacheParams;
use std::sync::Arc;

/// Hardware parameters: the cache (geometry and policies of the model) and port widths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheRtlParams {
    /// Geometry, field width, MSHRs.
    pub cache: CacheParams,
    /// Width of the field index (PACT'12: 22-bit block index per MC).
    pub field_addr_bits: u32,
    /// Width of the request tag.
    pub id_bits: u32,
}

impl CacheRtlParams {
    /// PACT'12 MD cache with 22-bit block indices.
    pub fn pact12_md() -> CacheRtlParams {
        CacheRtlParams {
            cache: CacheParams::pact12_md(),
            field_addr_bits: 22,
            id_bits: 8,
        }
    }

    /// ISCA'20 metadata-cache slice (4 KB) with 24-bit entry indices.
    pub fn buddy_slice() -> CacheRtlParams {
        CacheRtlParams {
            cache: CacheParams::buddy_slice(),
            field_addr_bits: 27,
            id_bits: 8,
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        self.cache.validate()?;
        let c = &self.cache;
        let low = self.line_field_bits() + clog2(c.sets as u64);
        if self.field_addr_bits <= low || self.field_addr_bits > 48 {
            return Err(format!(
                "field_addr_bits = {} (needs more than {} for the line offset and set, at most 48)",
                self.field_addr_bits, low
            ));
        }
        if !(1..=16).contains(&self.id_bits) {
            return Err(format!("id_bits = {} (1-16)", self.id_bits));
        }
        Ok(())
    }

    fn fps_bits(&self) -> u32 {
        clog2(self.cache.fields_per_sector())
    }
    fn sec_bits(&self) -> u32 {
        clog2(self.cache.sectors() as u64)
    }
    fn line_field_bits(&self) -> u32 {
        self.fps_bits() + self.sec_bits()
    }
    /// The data array's RAM: one word per sector of every way of every set, one write
    /// enable per field.
    pub fn data_ram(&self) -> RamSpec {
        let c = &self.cache;
        RamSpec {
            words: (c.sets * c.ways * c.sectors()).max(2),
            width: c.sector_bytes * 8,
            lane: c.field_bits,
        }
    }
    /// Width of a sector address.
    pub fn sector_addr_bits(&self) -> u32 {
        self.field_addr_bits - self.fps_bits()
    }
    fn tag_bits(&self) -> u32 {
        self.field_addr_bits - self.line_field_bits() - clog2(self.cache.sets as u64)
    }

    /// Module-name tag.
    pub fn name_tag(&self) -> String {
        let c = &self.cache;
        format!(
            "s{}_w{}_l{}_sec{}_f{}_m{}x{}",
            c.sets, c.ways, c.line_bytes, c.sector_bytes, c.field_bits, c.mshrs, c.mshr_slots
        )
    }
}

/// Per-way state of one set.
struct WayRegs {
    tag: Reg,
    valid: Reg,
    dirty: Reg,
    rank: Reg,
}

/// One MSHR entry.
struct MshrRegs {
    valid: Reg,
    addr: Reg,
    count: Reg,
    slots: Vec<[Reg; 4]>, // id, field-in-line, we, wdata
}

/// Widths and counts of one cache (from [`CacheRtlParams`]).
struct Geo {
    nsets: usize,
    nways: usize,
    /// Sectors per line.
    spl: usize,
    sbits: u32,
    fb: u32,
    idw: u32,
    setw: u32,
    wayw: u32,
    secw: u32,
    /// Field-in-line, tag, sector-address and LRU-rank widths.
    lfw: u32,
    tagw: u32,
    saw: u32,
    rankw: u32,
    /// MSHRs, slots per MSHR, slot-count width.
    nm: usize,
    ns: usize,
    cntw: u32,
}

impl Geo {
    fn of(p: &CacheRtlParams) -> Geo {
        let c = &p.cache;
        let ns = c.mshr_slots as usize;
        Geo {
            nsets: c.sets as usize,
            nways: c.ways as usize,
            spl: c.sectors() as usize,
            sbits: c.sector_bytes * 8,
            fb: c.field_bits,
            idw: p.id_bits,
            setw: clog2(c.sets as u64).max(1),
            wayw: clog2(c.ways as u64).max(1),
            secw: p.sec_bits().max(1),
            lfw: p.line_field_bits(),
            tagw: p.tag_bits(),
            saw: p.sector_addr_bits(),
            rankw: clog2(c.ways as u64).max(1),
            nm: c.mshrs as usize,
            ns,
            cntw: clog2(ns as u64 + 1),
        }
    }
}

/// The controller's state: FSM, output registers, per-way tags/valid/dirty/LRU, the MSHR
/// file, the data array, the counters and the fill in progress.
struct Regs {
    st: Fsm,
    resp_p: Reg,
    /// The response's data is the RAM's read data, at field `resp_lane_q` of the sector.
    resp_ram: Reg,
    resp_lane: Option<Reg>,
    mreq_p: Reg,
    ways: Vec<Vec<WayRegs>>,
    mshr: Vec<MshrRegs>,
    /// The data RAM's read data (driven by its instance in [`controller`]).
    rdata: Net,
    cnt_hits: Reg,
    cnt_misses: Reg,
    cnt_merges: Reg,
    f_addr: Reg,
    f_data: Reg,
    f_mshr: Reg,
    /// The fill's MSHR, one-hot: selects the entry's slots into the release buffer.
    f_mshr_oh: Reg,
    f_way: Reg,
    f_new: Reg,
    wb_mask: Reg,
    wb_tag: Reg,
    rel_k: Reg,
    /// Release buffer: the fill's MSHR slots and count, loaded in `install`, so that a
    /// release picks among `mshr_slots` registers, not among every MSHR's.
    rel_slots: Vec<[Reg; 4]>,
    rel_count: Reg,
    /// An LRU/dirty update is pending (see [`way_update`]).
    touch: Reg,
}

/// The cache controller.
pub fn cache(p: &CacheRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(|e| HdlError {
        module: "cache".into(),
        problems: vec![e],
    })?;
    let c = &p.cache;
    let g = Geo::of(p);
    let mut m = ModuleBuilder::new(format!("cache_{}", p.name_tag()));
    m.header("Generator: hwzip::rtl::cache::cache");
    m.header(format!(
        "Parameters: sets={} ways={} line={}B sector={}B field={}b mshrs={}x{} field_addr={}b id={}b",
        c.sets,
        c.ways,
        c.line_bytes,
        c.sector_bytes,
        g.fb,
        c.mshrs,
        c.mshr_slots,
        p.field_addr_bits,
        g.idw
    ));
    m.header(
        "Spec: docs/FORMATS.md, PACT'12 §6 (md_cache, md_mshr); \
         Buddy §3.4, §7 (meta_cache_slice)",
    );
    m.header("Policies: write-back, write-allocate, true LRU, allocate on fill, MSHR per sector");

    // ---- Ports ----
    let req = stream::input(
        &mut m,
        "req",
        &Layout::new(&[
            ("id", g.idw),
            ("field", p.field_addr_bits),
            ("we", 1),
            ("wdata", g.fb),
        ]),
    );
    let fill = stream::input(
        &mut m,
        "mfill",
        &Layout::new(&[("data", g.sbits), ("addr", g.saw)]),
    );
    let resp_l = Layout::new(&[("id", g.idw), ("hit", 1), ("data", g.fb)]);
    let mreq_l = Layout::new(&[("we", 1), ("addr", g.saw), ("wdata", g.sbits)]);
    // The write-back data of `mreq` is the RAM's read data: the register holds the rest.
    let mreq_reg_l = Layout::new(&[("we", 1), ("addr", g.saw)]);
    let r = state(&mut m, p, &g, &resp_l, &mreq_reg_l);
    let outs_pay = out_payloads(&mut m, &g, &r, [&resp_l, &mreq_l, &mreq_reg_l]);

    // ---- Output streams: each an output register, a one-stage pipeline fed by the
    // controller's take (which already waits for the register to be free) ----
    let mut pipes = Vec::new();
    let mut streams = Vec::new();
    let mut outs = Outs {
        free: Vec::new(),
        take: Vec::new(),
        load: Vec::new(),
    };
    for ((name, l), pay) in [("resp", &resp_l), ("mreq", &mreq_l)]
        .into_iter()
        .zip(&outs_pay)
    {
        let take = m.wire_decl(&format!("{}_take", name), 1);
        let mut pipe = Pipeline::new(&mut m, name, Policy::Bubble, &take.expr());
        let st = pipe.stage(&mut m, name);
        streams.push(Stream::new(
            &mut m,
            &format!("{}_out", name),
            &st.valid(),
            pay,
            l,
        ));
        outs.free.push(pipe.in_ready());
        outs.take.push(take);
        outs.load.push(st.load());
        pipes.push(pipe);
    }

    let lk = lookup(&mut m, p, &g, &r, &req, &fill, &outs.free);
    let fd = fill_decode(&mut m, p, &g, &r, &fill);
    let a = line_access(&mut m, p, &g, &r, &req, &lk);
    let ctl = controller(
        &mut m,
        p,
        &g,
        &r,
        &lk,
        &fd,
        &a,
        &outs,
        [&resp_l, &mreq_reg_l],
    )?;
    way_update(&mut m, &g, &r, &a, &ctl);
    mshr_update(&mut m, &g, &r, &req, &lk, &ctl);

    // ---- Ports out ----
    req.accept(&mut m, &lk.req_take);
    fill.accept(&mut m, &lk.fill_take);
    for ((pipe, st), name) in pipes.into_iter().zip(streams).zip(["resp", "mreq"]) {
        let _ = pipe.finish(&mut m, &st.ready());
        stream::output(&mut m, name, st);
    }
    m.output_expr("cnt_hits_o", &r.cnt_hits.q());
    m.output_expr("cnt_misses_o", &r.cnt_misses.q());
    m.output_expr("cnt_merges_o", &r.cnt_merges.q());
    m.finish()
}

/// The output streams' payloads: `resp` carries the written field or the RAM's read field,
/// `mreq` a read request or the RAM's read sector.
fn out_payloads(m: &mut ModuleBuilder, g: &Geo, r: &Regs, l: [&Layout; 3]) -> [Expr; 2] {
    let [resp_l, mreq_l, mreq_reg_l] = l;
    let rdata = r.rdata.expr();
    let field = match &r.resp_lane {
        Some(lane) => mux_tree(&lane.q(), &rdata.lanes(g.fb)),
        None => rdata.clone(),
    };
    let field = m.wire("resp_ram_field", &field);
    let resp = resp_l.pack(&[
        ("id", resp_l.get(&r.resp_p.q(), "id")),
        ("hit", resp_l.get(&r.resp_p.q(), "hit")),
        (
            "data",
            r.resp_ram
                .q()
                .select(&field, &resp_l.get(&r.resp_p.q(), "data")),
        ),
    ]);
    let we = mreq_reg_l.get(&r.mreq_p.q(), "we");
    let mreq = mreq_l.pack(&[
        ("we", we.clone()),
        ("addr", mreq_reg_l.get(&r.mreq_p.q(), "addr")),
        ("wdata", we.select(&rdata, &Expr::zero(g.sbits))),
    ]);
    [m.wire("resp_payload", &resp), m.wire("mreq_payload", &mreq)]
}

/// Registers of the controller (see [`Regs`]).
fn state(
    m: &mut ModuleBuilder,
    p: &CacheRtlParams,
    g: &Geo,
    resp_l: &Layout,
    mreq_l: &Layout,
) -> Regs {
    let (spl, tagw, saw) = (g.spl as u32, g.tagw, g.saw);
    m.comment("State: controller, output registers, tags/valid/dirty/LRU, MSHR file");
    let st = m.fsm("state_q", &["idle", "wb", "install", "release"]);
    let resp_p = m.reg("resp_payload_q", resp_l.width(), None);
    let resp_ram = m.reg("resp_ram_q", 1, None);
    let fpsw = p.fps_bits();
    let resp_lane = (fpsw > 0).then(|| m.reg("resp_lane_q", fpsw, None));
    let mreq_p = m.reg("mreq_payload_q", mreq_l.width(), None);
    // Per-way arrays over the sets, and per-field arrays over the MSHRs.
    let per_way = |m: &mut ModuleBuilder, f: &str, w: u32, reset: &dyn Fn(usize) -> u64| {
        (0..g.nways)
            .map(|k| {
                m.reg_array(
                    &format!("{}_w{}_q", f, k),
                    w,
                    g.nsets as u32,
                    Some(reset(k)),
                )
            })
            .collect::<Vec<_>>()
    };
    let tag = per_way(m, "tag", tagw, &|_| 0);
    let valid = per_way(m, "valid", spl, &|_| 0);
    let dirty = per_way(m, "dirty", spl, &|_| 0);
    let rank = per_way(m, "rank", g.rankw, &|w| w as u64);
    let ways: Vec<Vec<WayRegs>> = (0..g.nsets)
        .map(|s| {
            (0..g.nways)
                .map(|w| WayRegs {
                    tag: tag[w][s].clone(),
                    valid: valid[w][s].clone(),
                    dirty: dirty[w][s].clone(),
                    rank: rank[w][s].clone(),
                })
                .collect()
        })
        .collect();
    let nm = g.nm as u32;
    let m_valid = m.reg_array("mshr_valid_q", 1, nm, Some(0));
    let m_addr = m.reg_array("mshr_addr_q", saw, nm, None);
    let m_count = m.reg_array("mshr_count_q", g.cntw, nm, Some(0));
    let slot_w = [g.idw, g.lfw.max(1), 1, g.fb];
    let slot_f = ["id", "field", "we", "wdata"];
    let slots: Vec<Vec<Vec<Reg>>> = (0..g.ns)
        .map(|k| {
            (0..4)
                .map(|i| m.reg_array(&format!("mshr_s{}_{}_q", k, slot_f[i]), slot_w[i], nm, None))
                .collect()
        })
        .collect();
    let mshr: Vec<MshrRegs> = (0..g.nm)
        .map(|e| MshrRegs {
            valid: m_valid[e].clone(),
            addr: m_addr[e].clone(),
            count: m_count[e].clone(),
            slots: (0..g.ns)
                .map(|k| std::array::from_fn(|i| slots[k][i][e].clone()))
                .collect(),
        })
        .collect();
    let rdata = m.wire_decl("data_rdata", g.sbits);
    let cnt_hits = m.reg("cnt_hits_q", 32, Some(0));
    let cnt_misses = m.reg("cnt_misses_q", 32, Some(0));
    let cnt_merges = m.reg("cnt_merges_q", 32, Some(0));
    // Fill in progress.
    let f_addr = m.reg("fill_addr_q", saw, None);
    let f_data = m.reg("fill_data_q", g.sbits, None);
    let f_mshr = m.reg("fill_mshr_q", clog2(g.nm as u64).max(1), None);
    let f_mshr_oh = m.reg("fill_mshr_oh_q", g.nm as u32, None);
    let f_way = m.reg("fill_way_q", g.wayw, None);
    let f_new = m.reg("fill_new_q", 1, None);
    let wb_mask = m.reg("wb_mask_q", spl, None);
    let wb_tag = m.reg("wb_tag_q", tagw, None);
    let rel_k = m.reg("rel_k_q", g.cntw, None);
    let rel_f: Vec<Vec<Reg>> = (0..4)
        .map(|i| {
            m.reg_array(
                &format!("rel_{}_q", slot_f[i]),
                slot_w[i],
                g.ns as u32,
                None,
            )
        })
        .collect();
    let rel_slots = (0..g.ns)
        .map(|k| std::array::from_fn(|i| rel_f[i][k].clone()))
        .collect();
    let rel_count = m.reg("rel_count_q", g.cntw, None);
    let touch = m.reg("touch_q", 1, Some(0));
    Regs {
        st,
        resp_p,
        resp_ram,
        resp_lane,
        mreq_p,
        ways,
        mshr,
        rdata,
        cnt_hits,
        cnt_misses,
        cnt_merges,
        f_addr,
        f_data,
        f_mshr,
        f_mshr_oh,
        f_way,
        f_new,
        wb_mask,
        wb_tag,
        rel_k,
        rel_slots,
        rel_count,
        touch,
    }
}

/// Field `f` of way `w` in the set `set` selects.
fn set_sel(g: &Geo, r: &Regs, set: &Expr, f: &dyn Fn(&WayRegs) -> Expr, w: usize) -> Expr {
    let opts: Vec<Expr> = (0..g.nsets).map(|s| f(&r.ways[s][w])).collect();
    mux_tree(set, &opts)
}

/// Bit `sec` of a per-sector vector.
fn sec_bit(g: &Geo, valid: &Expr, sec: &Expr) -> Expr {
    let opts: Vec<Expr> = (0..g.spl).map(|j| valid.bit(j as u32)).collect();
    mux_tree(sec, &opts)
}

/// Tag and valid bits of every way of one set, as named wires `<prefix>_tag_w<w>` etc.
fn way_state(
    m: &mut ModuleBuilder,
    g: &Geo,
    r: &Regs,
    prefix: &str,
    set: &Expr,
) -> Vec<(Expr, Expr)> {
    (0..g.nways)
        .map(|w| {
            let t = m.wire(
                &format!("{}_tag_w{}", prefix, w),
                &set_sel(g, r, set, &|x| x.tag.q(), w),
            );
            let v = m.wire(
                &format!("{}_valid_w{}", prefix, w),
                &set_sel(g, r, set, &|x| x.valid.q(), w),
            );
            (t, v)
        })
        .collect()
}

/// The request's lookup, decoded in `idle`.
struct Lookup {
    /// Field in line, sector in line, sector address, set of the request.
    r_fil: Expr,
    r_sec: Expr,
    r_sector: Expr,
    r_set: Expr,
    r_hit: Expr,
    r_way: Expr,
    /// Per MSHR: it holds the request's sector.
    r_match: Vec<Expr>,
    r_match_any: Expr,
    /// The first free MSHR, one-hot.
    free: Vec<Expr>,
    /// The request's tag.
    req_id: Expr,
    idle: Expr,
    fill_take: Expr,
    req_take: Expr,
}

/// Lookup: set/tag/sector of the request, way match, MSHR match, free MSHR, and whether a
/// fill or the request is taken this cycle.
fn lookup(
    m: &mut ModuleBuilder,
    p: &CacheRtlParams,
    g: &Geo,
    r: &Regs,
    req: &Stream,
    fill: &Stream,
    outs_free: &[Expr],
) -> Lookup {
    let c = &p.cache;
    let (lfw, saw) = (g.lfw, g.saw);
    m.comment("Lookup: set/tag/sector of the request, way match, MSHR match, free MSHR");
    let rf = req.field("field");
    let r_fil = if lfw > 0 {
        rf.slice(0, lfw)
    } else {
        Expr::zero(1)
    };
    let r_sec = if p.sec_bits() > 0 {
        rf.slice(p.fps_bits(), p.sec_bits())
    } else {
        Expr::zero(1)
    };
    let r_sector = rf.slice(p.fps_bits(), saw);
    let r_sector = m.wire("req_sector", &r_sector);
    let r_set = if c.sets > 1 {
        rf.slice(lfw, g.setw)
    } else {
        Expr::zero(1)
    };
    let r_tag = rf.slice(lfw + clog2(c.sets as u64), g.tagw);
    let r_fil = m.wire("req_fil", &r_fil);
    let r_sec = m.wire("req_sec", &r_sec);
    let r_set = m.wire("req_set", &r_set);
    let mut r_hit_w = Vec::new();
    for (w, (t, v)) in way_state(m, g, r, "req", &r_set).into_iter().enumerate() {
        r_hit_w.push(m.wire(
            &format!("req_hit_w{}", w),
            &(t.eq(&r_tag) & sec_bit(g, &v, &r_sec)),
        ));
    }
    let r_hit = m.wire("req_hit", &any_of(&r_hit_w));
    let r_way = m.wire("req_way", &onehot_index(&r_hit_w, g.wayw));
    let r_match: Vec<Expr> = r
        .mshr
        .iter()
        .enumerate()
        .map(|(e, x)| {
            m.wire(
                &format!("req_match{}", e),
                &(x.valid.q() & x.addr.q().eq(&r_sector)),
            )
        })
        .collect();
    let r_match_any = m.wire("req_match_any", &any_of(&r_match));
    let r_match_full = m.wire(
        "req_match_full",
        &any_of(
            &(0..g.nm)
                .map(|e| &r_match[e] & &r.mshr[e].count.q().eq_lit(g.ns as u64))
                .collect::<Vec<_>>(),
        ),
    );
    let free: Vec<Expr> = first_set(&r.mshr.iter().map(|x| !x.valid.q()).collect::<Vec<_>>());
    let free_any = m.wire("mshr_free_any", &any_of(&free));
    let can = m.wire(
        "req_can",
        &(&r_hit | &(&r_match_any & &!&r_match_full) | &(&!&r_match_any & &free_any)),
    );
    let idle = r.st.is("idle");
    let outs_free = m.wire("outs_free", &(&outs_free[0] & &outs_free[1]));
    // A fill reads the ranks and dirty bits for its victim: it waits for a pending update.
    let fill_take = m.wire(
        "fill_take",
        &(&idle & &fill.valid & &outs_free & &!&r.touch.q()),
    );
    let req_take = m.wire(
        "req_take",
        &(&idle & &!&fill.valid & &req.valid & &outs_free & &can),
    );
    Lookup {
        r_fil,
        r_sec,
        r_sector,
        r_set,
        r_hit,
        r_way,
        r_match,
        r_match_any,
        free,
        req_id: req.field("id"),
        idle,
        fill_take,
        req_take,
    }
}

/// A fill's decode: its MSHR, the way it goes to and the victim's write-back.
struct FillDec {
    addr: Expr,
    data: Expr,
    mshr: Expr,
    mshr_oh: Expr,
    present: Expr,
    victim: Expr,
    vtag: Expr,
    wb_first_mask: Expr,
}

/// Fill: MSHR of the sector, way (present line, invalid way, LRU way), victim.
fn fill_decode(
    m: &mut ModuleBuilder,
    p: &CacheRtlParams,
    g: &Geo,
    r: &Regs,
    fill: &Stream,
) -> FillDec {
    let c = &p.cache;
    let wayw = g.wayw;
    m.comment("Fill: MSHR of the sector, way (present line, invalid way, LRU way), victim");
    let fa = fill.field("addr");
    let fi_set = if c.sets > 1 {
        fa.slice(p.sec_bits(), g.setw)
    } else {
        Expr::zero(1)
    };
    let fi_tag = fa.slice(p.sec_bits() + clog2(c.sets as u64), g.tagw);
    let fi_set = m.wire("fill_in_set", &fi_set);
    let fi_mshr: Vec<Expr> = r
        .mshr
        .iter()
        .map(|x| &x.valid.q() & &x.addr.q().eq(&fa))
        .collect();
    let fi_mshr_oh = Expr::cat_lsb(&fi_mshr);
    let fi_mshr = m.wire(
        "fill_in_mshr",
        &onehot_index(&fi_mshr, clog2(g.nm as u64).max(1)),
    );
    let mut present = Vec::new();
    let mut invalid = Vec::new();
    let mut lru = Vec::new();
    for (w, (t, v)) in way_state(m, g, r, "fill", &fi_set).into_iter().enumerate() {
        let rk = set_sel(g, r, &fi_set, &|x| x.rank.q(), w);
        present.push(&t.eq(&fi_tag) & &v.any());
        invalid.push(!v.any());
        lru.push(rk.eq_lit(c.ways as u64 - 1));
    }
    let pres_any = m.wire("fill_present", &any_of(&present));
    let inv_first = first_set(&invalid);
    let inv_any = any_of(&invalid);
    let victim = m.wire(
        "fill_victim",
        &pres_any.select(
            &onehot_index(&present, wayw),
            &inv_any.select(&onehot_index(&inv_first, wayw), &onehot_index(&lru, wayw)),
        ),
    );
    let of_victim = |f: &dyn Fn(&WayRegs) -> Expr| {
        mux_tree(
            &victim,
            &(0..g.nways)
                .map(|w| set_sel(g, r, &fi_set, f, w))
                .collect::<Vec<_>>(),
        )
    };
    let vdirty = of_victim(&|x| x.dirty.q());
    let vtag = of_victim(&|x| x.tag.q());
    let wb_first_mask = m.wire(
        "fill_wb_mask",
        &pres_any.select(&Expr::zero(g.spl as u32), &vdirty),
    );
    FillDec {
        addr: fa,
        data: fill.field("data"),
        mshr: fi_mshr,
        mshr_oh: fi_mshr_oh,
        present: pres_any,
        victim,
        vtag,
        wb_first_mask,
    }
}

/// The access of a cycle: the request's sector in idle, the fill's otherwise.
struct Access {
    fset: Expr,
    fsec: Expr,
    ftag: Expr,
    /// Set, way and sector of the access (request in idle, fill otherwise).
    acc_set: Expr,
    acc_way: Expr,
    acc_sec: Expr,
    /// The accessed field's lane in its sector (`None`: a field is a sector).
    acc_lane: Option<Expr>,
    /// RAM word of the access and of the write-back's sector.
    acc_word: Expr,
    wb_word: Expr,
    rel_id: Expr,
    acc_we: Expr,
    acc_wd: Expr,
    wb_one: Vec<Expr>,
    wb_sec: Expr,
}

/// Data array: the RAM words of the access (request or fill) and of the write-back, the
/// field an access reads and writes.
fn line_access(
    m: &mut ModuleBuilder,
    p: &CacheRtlParams,
    g: &Geo,
    r: &Regs,
    req: &Stream,
    lk: &Lookup,
) -> Access {
    let c = &p.cache;
    let (spl, lfw) = (g.spl, g.lfw);
    m.comment("Data array: RAM words of the access and of the write-back, the accessed field");
    let fset = if c.sets > 1 {
        r.f_addr.q().slice(p.sec_bits(), g.setw)
    } else {
        Expr::zero(1)
    };
    let fsec = if p.sec_bits() > 0 {
        r.f_addr.q().slice(0, p.sec_bits())
    } else {
        Expr::zero(1)
    };
    let ftag = r
        .f_addr
        .q()
        .slice(p.sec_bits() + clog2(c.sets as u64), g.tagw);
    let fset = m.wire("fill_set", &fset);
    let fsec = m.wire("fill_sec", &fsec);
    let idle = &lk.idle;
    let acc_set = m.wire("acc_set", &idle.select(&lk.r_set, &fset));
    let acc_way = m.wire("acc_way", &idle.select(&lk.r_way, &r.f_way.q()));
    let acc_sec = m.wire("acc_sec", &idle.select(&lk.r_sec, &fsec));
    // RAM word: {set, way, sector}, each part only where it has more than one value.
    let aw = p.data_ram().addr_bits();
    let word = |set: &Expr, way: &Expr, sec: &Expr| -> Expr {
        let parts: Vec<Expr> = [(c.sets, set), (c.ways, way), (c.sectors(), sec)]
            .into_iter()
            .filter(|(n, _)| *n > 1)
            .map(|(_, e)| e.clone())
            .collect();
        match parts.len() {
            0 => Expr::zero(aw),
            _ => Expr::cat(&parts).zext(aw),
        }
    };
    let acc_word = m.wire("acc_word", &word(&acc_set, &acc_way, &acc_sec));
    // The field an access reads: request in idle, the parked slot in release (from the
    // release buffer).
    let pick = |i: usize, w: u32| -> Expr {
        let opts: Vec<Expr> = r.rel_slots.iter().map(|x| x[i].q()).collect();
        let v = mux_tree(&r.rel_k.q(), &opts);
        debug_assert_eq!(v.width(), w);
        v
    };
    let rel_id = m.wire("rel_id", &pick(0, g.idw));
    let rel_fil = m.wire("rel_fil", &pick(1, lfw.max(1)));
    let rel_we = m.wire("rel_we", &pick(2, 1));
    let rel_wd = m.wire("rel_wdata", &pick(3, g.fb));
    let acc_fil = m.wire(
        "acc_fil",
        &idle.select(&lk.r_fil.resize(lfw.max(1)), &rel_fil),
    );
    let acc_we = m.wire("acc_we", &idle.select(&req.field("we"), &rel_we));
    let acc_wd = m.wire("acc_wdata", &idle.select(&req.field("wdata"), &rel_wd));
    let fpsw = p.fps_bits();
    let acc_lane = (fpsw > 0).then(|| m.wire("acc_lane", &acc_fil.slice(0, fpsw)));
    if fpsw < acc_fil.width() {
        // The sector bits: an access's sector is the request's or the fill's.
        m.unused(&acc_fil);
    }
    let wb_one = first_set(
        &(0..spl)
            .map(|j| r.wb_mask.q().bit(j as u32))
            .collect::<Vec<_>>(),
    );
    let wb_sec = m.wire("wb_sec", &onehot_index(&wb_one, g.secw));
    let wb_word = m.wire("wb_word", &word(&fset, &r.f_way.q(), &wb_sec));
    if spl == 1 {
        m.unused(&wb_sec);
    }
    Access {
        fset,
        fsec,
        ftag,
        acc_set,
        acc_way,
        acc_sec,
        acc_lane,
        acc_word,
        wb_word,
        rel_id,
        acc_we,
        acc_wd,
        wb_one,
        wb_sec,
    }
}

/// The output registers (`resp`, `mreq`): free to load, the controller's take (driven by
/// [`controller`]) and the registers' load.
struct Outs {
    free: Vec<Expr>,
    take: Vec<Net>,
    load: Vec<Expr>,
}

/// What the controller takes this cycle.
struct Takes {
    in_rel: Expr,
    rel_more: Expr,
    acc_take: Expr,
    install: Expr,
    miss_take: Expr,
    merge_take: Expr,
}

/// Controller: idle (fill or lookup), wb, install, release; the data RAM, the output
/// registers and the counters.
#[allow(clippy::too_many_arguments)]
fn controller(
    m: &mut ModuleBuilder,
    p: &CacheRtlParams,
    g: &Geo,
    r: &Regs,
    lk: &Lookup,
    fd: &FillDec,
    a: &Access,
    outs: &Outs,
    [resp_l, mreq_l]: [&Layout; 2],
) -> Result<Takes, HdlError> {
    let c = &p.cache;
    let (st, idle, spl) = (&r.st, &lk.idle, g.spl);
    let (resp_free, mreq_free) = (&outs.free[0], &outs.free[1]);
    m.comment("Controller: idle (fill or lookup), wb, install, release");
    let in_rel = st.is("release");
    let rel_more = m.wire("rel_more", &r.rel_k.q().lt(&r.rel_count.q()));
    // The RAM's read data belongs to the output that read it until that beat leaves.
    let mreq_we_q = mreq_l.get(&r.mreq_p.q(), "we");
    let mreq_lets_read = m.wire("mreq_lets_read", &(mreq_free | &!&mreq_we_q));
    let hit_take = m.wire("hit_take", &(&lk.req_take & &lk.r_hit));
    let rel_take = m.wire(
        "rel_take",
        &(&in_rel & &rel_more & resp_free & &(&a.acc_we | &mreq_lets_read)),
    );
    let acc_take = m.wire("acc_take", &(&hit_take | &rel_take));
    let install = st.is("install");
    // A write-back needs no such wait: a fill is taken only when `resp` is free, so `resp`
    // is empty from `wb` until `release`.
    let wb_go = m.wire("wb_go", &(&st.is("wb") & &r.wb_mask.q().any() & mreq_free));
    data_ram(m, p, r, a, [&acc_take, &install, &wb_go])?;
    // Output registers.
    let resp_pay = resp_l.pack(&[
        ("id", idle.select(&lk.req_id, &a.rel_id)),
        ("hit", idle.clone()),
        ("data", a.acc_wd.clone()),
    ]);
    m.drive(&outs.take[0], &acc_take);
    m.next(&r.resp_p, &resp_pay, Some(&outs.load[0]));
    m.next(&r.resp_ram, &!&a.acc_we, Some(&outs.load[0]));
    if let (Some(reg), Some(lane)) = (&r.resp_lane, &a.acc_lane) {
        m.next(reg, lane, Some(&outs.load[0]));
    }
    let miss_take = m.wire(
        "miss_take",
        &(&lk.req_take & &!&lk.r_hit & &!&lk.r_match_any),
    );
    let merge_take = m.wire(
        "merge_take",
        &(&lk.req_take & &!&lk.r_hit & &lk.r_match_any),
    );
    let mut wb_parts = vec![r.wb_tag.q()];
    if c.sets > 1 {
        wb_parts.push(a.fset.clone());
    }
    if p.sec_bits() > 0 {
        wb_parts.push(a.wb_sec.clone());
    }
    let wb_addr = Expr::cat(&wb_parts);
    let miss_req = mreq_l.pack(&[("we", Expr::zero(1)), ("addr", lk.r_sector.clone())]);
    let wb_req = mreq_l.pack(&[("we", Expr::ones(1)), ("addr", wb_addr)]);
    m.drive(&outs.take[1], &(&miss_take | &wb_go));
    m.next(
        &r.mreq_p,
        &wb_go.select(&wb_req, &miss_req),
        Some(&outs.load[1]),
    );
    m.when(&wb_go, |m| {
        let clr: Vec<Expr> = (0..spl)
            .map(|j| &r.wb_mask.q().bit(j as u32) & &!&a.wb_one[j])
            .collect();
        m.set(&r.wb_mask, &Expr::cat_lsb(&clr));
    });
    // Counters: each take is registered first (`cnt_*_take_q`), so a counter's 32-bit
    // load does not wait for the lookup; it counts one cycle later, when the take's
    // response or memory request appears.
    for (cnt, take, name) in [
        (&r.cnt_hits, &hit_take, "cnt_hit_take_q"),
        (&r.cnt_misses, &miss_take, "cnt_miss_take_q"),
        (&r.cnt_merges, &merge_take, "cnt_merge_take_q"),
    ] {
        let took = m.reg_next(name, Some(0), take, None);
        m.when(&took, |m| m.set(cnt, &(cnt.q() + Expr::lit(32, 1))));
    }
    // State machine.
    m.when(&lk.fill_take, |m| {
        m.set(&r.f_addr, &fd.addr);
        m.set(&r.f_data, &fd.data);
        m.set(&r.f_mshr, &fd.mshr);
        m.set(&r.f_mshr_oh, &fd.mshr_oh);
        m.set(&r.f_way, &fd.victim);
        m.set(&r.f_new, &!&fd.present);
        m.set(&r.wb_mask, &fd.wb_first_mask);
        m.set(&r.wb_tag, &fd.vtag);
        st.go(m, "wb");
    });
    m.when(&(&st.is("wb") & &!&r.wb_mask.q().any()), |m| {
        st.go(m, "install")
    });
    // The release buffer: the fill's MSHR entry, selected by its one-hot register.
    let of_fill = |f: &dyn Fn(&MshrRegs) -> Expr, w: u32| -> Expr {
        let terms: Vec<Expr> = (0..g.nm)
            .map(|e| &f(&r.mshr[e]) & &r.f_mshr_oh.q().bit(e as u32).repeat(w))
            .collect();
        or_tree(terms, w)
    };
    m.when(&install, |m| {
        m.set(&r.rel_k, &Expr::zero(g.cntw));
        m.set(&r.rel_count, &of_fill(&|x| x.count.q(), g.cntw));
        for (k, slot) in r.rel_slots.iter().enumerate() {
            for (i, reg) in slot.iter().enumerate() {
                m.set(reg, &of_fill(&|x| x.slots[k][i].q(), reg.width()));
            }
        }
        st.go(m, "release");
    });
    m.when(&rel_take, |m| {
        m.set(&r.rel_k, &(r.rel_k.q() + Expr::lit(g.cntw, 1)))
    });
    m.when(&(&in_rel & &!&rel_more), |m| st.go(m, "idle"));
    Ok(Takes {
        in_rel,
        rel_more,
        acc_take,
        install,
        miss_take,
        merge_take,
    })
}

/// The data RAM: a field write (hit or release) or a sector fill (install) writes its
/// lanes; a field read (hit or release) or a write-back reads a sector.
fn data_ram(
    m: &mut ModuleBuilder,
    p: &CacheRtlParams,
    r: &Regs,
    a: &Access,
    [acc_take, install, wb_go]: [&Expr; 3],
) -> Result<(), HdlError> {
    let spec = p.data_ram();
    let we = m.wire("data_we", &((acc_take & &a.acc_we) | install.clone()));
    let re = m.wire("data_re", &((acc_take & &!&a.acc_we) | wb_go.clone()));
    let fps = spec.lanes();
    let wdata = m.wire(
        "data_wdata",
        &install.select(&r.f_data.q(), &a.acc_wd.repeat(fps)),
    );
    let wmask = match &a.acc_lane {
        Some(lane) => {
            let one = Expr::lit(fps, 1).shl_var(lane);
            let mask = install.select(&Expr::ones(fps), &one);
            Some(m.wire("data_wmask", &mask))
        }
        None => None,
    };
    let raddr = m.wire("data_raddr", &wb_go.select(&a.wb_word, &a.acc_word));
    let ports = RamPorts {
        we,
        waddr: a.acc_word.clone(),
        wdata,
        wmask,
        re,
        raddr,
    };
    let rdata = ram::place(m, &spec, "u_data", &ports)?;
    m.drive(&r.rdata, &rdata);
    Ok(())
}

/// Per-way state: tag/valid/dirty on an install (from the fill registers); LRU ranks on
/// every access and dirty on a write access, registered first (`touch_*_q`) and applied in
/// the next cycle, so the update does not wait for the lookup that decides it. Ranks and
/// dirty bits are read only by the next update (which sees this one applied) and by a
/// fill's victim choice, which waits for a pending update (`fill_take`).
fn way_update(m: &mut ModuleBuilder, g: &Geo, r: &Regs, a: &Access, t: &Takes) {
    let (spl, rankw) = (g.spl, g.rankw);
    let install = &t.install;
    let sec_onehot = |s: &Expr| -> Expr {
        Expr::cat_lsb(&(0..spl).map(|j| s.eq_lit(j as u64)).collect::<Vec<_>>())
    };
    let in_sets = |m: &mut ModuleBuilder, name: &str, set: &Expr| -> Vec<Expr> {
        let sets: Vec<Expr> = (0..g.nsets).map(|s| set.eq_lit(s as u64)).collect();
        m.wire_array(name, &sets)
    };
    // The install: the fill's set, way and sector.
    let fill_sec_oh = m.wire("install_sec_onehot", &sec_onehot(&a.fsec));
    let fill_in_set = in_sets(m, "install_in_set", &a.fset);
    // The registered update: set, way, sector and write of the access.
    let touch = m.wire("lru_touch", &(&t.acc_take | install));
    m.next(&r.touch, &touch, None);
    let touch_we = m.reg_next("touch_we_q", Some(0), &(&t.acc_take & &a.acc_we), None);
    let t_set = m.reg_next("touch_set_q", None, &a.acc_set, None);
    let t_way = m.reg_next("touch_way_q", None, &a.acc_way, None);
    let t_sec = m.reg_next("touch_sec_q", None, &sec_onehot(&a.acc_sec), None);
    let in_set = in_sets(m, "touch_in_set", &t_set);
    let touched: Vec<Expr> = r
        .ways
        .iter()
        .map(|set_ways| {
            mux_tree(
                &t_way,
                &set_ways.iter().map(|x| x.rank.q()).collect::<Vec<_>>(),
            )
        })
        .collect();
    let tr = m.wire_array("touched_rank", &touched);
    // One field of every way at a time, so each per-way array's loads are one run.
    let each = |m: &mut ModuleBuilder,
                f: &mut dyn FnMut(&mut ModuleBuilder, &WayRegs, Expr, Expr)| {
        for w in 0..g.nways {
            for (s, set_ways) in r.ways.iter().enumerate() {
                let filled = install & &fill_in_set[s] & &r.f_way.q().eq_lit(w as u64);
                let touched = &in_set[s] & &t_way.eq_lit(w as u64);
                f(m, &set_ways[w], filled, touched);
            }
        }
    };
    each(m, &mut |m, x, filled, _| {
        m.when(&filled, |m| m.set(&x.tag, &a.ftag));
    });
    each(m, &mut |m, x, filled, _| {
        m.when(&filled, |m| {
            let grown = x.valid.q() | fill_sec_oh.clone();
            m.set(&x.valid, &r.f_new.q().select(&fill_sec_oh, &grown));
        });
    });
    each(m, &mut |m, x, filled, touched| {
        m.when(&(&filled & &r.f_new.q()), |m| {
            m.set(&x.dirty, &Expr::zero(spl as u32))
        });
        m.when(&(&touch_we & &touched), |m| {
            m.set(&x.dirty, &(x.dirty.q() | t_sec.clone()));
        });
    });
    for w in 0..g.nways {
        for (s, set_ways) in r.ways.iter().enumerate() {
            let x = &set_ways[w];
            let newer = x.rank.q().lt(&tr[s]);
            m.when(&(&r.touch.q() & &in_set[s]), |m| {
                let rk = t_way.eq_lit(w as u64).select(
                    &Expr::zero(rankw),
                    &newer.select(&(x.rank.q() + Expr::lit(rankw, 1)), &x.rank.q()),
                );
                m.set(&x.rank, &rk);
            });
        }
    }
}

/// MSHR file: allocate on a miss, merge a request into its sector's MSHR, free after the
/// release.
fn mshr_update(m: &mut ModuleBuilder, g: &Geo, r: &Regs, req: &Stream, lk: &Lookup, t: &Takes) {
    let cntw = g.cntw;
    let r_slot = (
        req.field("id"),
        lk.r_fil.resize(g.lfw.max(1)),
        req.field("we"),
        req.field("wdata"),
    );
    let alloc: Vec<Expr> = (0..g.nm).map(|e| &t.miss_take & &lk.free[e]).collect();
    let alloc = m.wire_array("mshr_alloc", &alloc);
    let merge: Vec<Expr> = (0..g.nm).map(|e| &t.merge_take & &lk.r_match[e]).collect();
    let merge = m.wire_array("mshr_merge", &merge);
    let last = &t.in_rel & &!&t.rel_more;
    let done: Vec<Expr> = (0..g.nm)
        .map(|e| &last & &r.f_mshr.q().eq_lit(e as u64))
        .collect();
    let done = m.wire_array("mshr_done", &done);
    // One field of every MSHR at a time, so each array's loads are one run.
    for (e, x) in r.mshr.iter().enumerate() {
        m.when(&alloc[e], |m| m.set(&x.valid, &Expr::ones(1)));
        m.when(&done[e], |m| m.set(&x.valid, &Expr::zero(1)));
    }
    // A free entry's address is unused: every free entry loads the offered request's
    // sector, so the allocation's address does not wait for the lookup.
    for x in &r.mshr {
        m.when(&(&req.valid & &!&x.valid.q()), |m| {
            m.set(&x.addr, &lk.r_sector)
        });
    }
    for (e, x) in r.mshr.iter().enumerate() {
        m.when(&alloc[e], |m| m.set(&x.count, &Expr::lit(cntw, 1)));
        m.when(&merge[e], |m| {
            m.set(&x.count, &(x.count.q() + Expr::lit(cntw, 1)))
        });
        m.when(&done[e], |m| m.set(&x.count, &Expr::zero(cntw)));
    }
    // The offered request is written into the first free slot of every entry whenever one
    // is offered: a free slot holds nothing, and the take (which waits for the lookup)
    // only counts it in. An allocation writes slot 0 (a free entry's count is 0), a merge
    // slot `count`.
    let fields = [r_slot.0, r_slot.1, r_slot.2, r_slot.3];
    for k in 0..g.ns {
        for (i, value) in fields.iter().enumerate() {
            for x in &r.mshr {
                let at = &req.valid & &x.count.q().eq_lit(k as u64);
                m.when(&at, |m| m.set(&x.slots[k][i], value));
            }
        }
    }
}
