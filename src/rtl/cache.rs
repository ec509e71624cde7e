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
//! * `idle`: a fill is taken first; else a lookup, when the model would accept it (a hit,
//!   a merge into a non-full MSHR of its sector, or a free MSHR) and both output registers
//!   can load. A hit answers in the same cycle (read or read-modify-write of the line);
//!   a miss parks the request and sends the sector read.
//! * `wb`: the victim's dirty sectors go out, one per cycle, in sector order;
//! * `install`: the sector is written, tag/valid/dirty and LRU updated;
//! * `release`: the parked requests are answered one per cycle, then the MSHR is freed.
//!
//! Storage: the data array is a register array (`data_q`, sets x ways lines, asynchronous
//! read: flops after synthesis), tags, per-sector valid/dirty bits and LRU ranks are flops;
//! the MSHR file holds `mshr_slots` requests per entry. Counters `cnt_hits_o`,
//! `cnt_misses_o`, `cnt_merges_o` count like the model.

use crate::hdl::blocks::{any_of, first_set, mux_tree, onehot_index};
use crate::hdl::stream::{self, Layout, Stream};
use crate::hdl::{clog2, Expr, HdlError, Module, ModuleBuilder, Reg};
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

/// The cache controller.
pub fn cache(p: &CacheRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(|e| HdlError {
        module: "cache".into(),
        problems: vec![e],
    })?;
    let c = &p.cache;
    let (nsets, nways) = (c.sets as usize, c.ways as usize);
    let spl = c.sectors() as usize;
    let sbits = c.sector_bytes * 8;
    let lbits = c.line_bytes * 8;
    let fb = c.field_bits;
    let (fw, idw) = (p.field_addr_bits, p.id_bits);
    let (setw, wayw) = (clog2(c.sets as u64).max(1), clog2(c.ways as u64).max(1));
    let (secw, lfw, tagw, saw) = (
        p.sec_bits().max(1),
        p.line_field_bits(),
        p.tag_bits(),
        p.sector_addr_bits(),
    );
    let rankw = clog2(c.ways as u64).max(1);
    let nm = c.mshrs as usize;
    let ns = c.mshr_slots as usize;
    let cntw = clog2(ns as u64 + 1);
    let mut m = ModuleBuilder::new(format!("cache_{}", p.name_tag()));
    m.header("Generator: hwzip::rtl::cache::cache");
    m.header(format!(
        "Parameters: sets={} ways={} line={}B sector={}B field={}b mshrs={}x{} field_addr={}b id={}b",
        c.sets, c.ways, c.line_bytes, c.sector_bytes, fb, c.mshrs, c.mshr_slots, fw, idw
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
        &Layout::new(&[("id", idw), ("field", fw), ("we", 1), ("wdata", fb)]),
    );
    let fill = stream::input(
        &mut m,
        "mfill",
        &Layout::new(&[("data", sbits), ("addr", saw)]),
    );
    let resp_l = Layout::new(&[("id", idw), ("hit", 1), ("data", fb)]);
    let mreq_l = Layout::new(&[("we", 1), ("addr", saw), ("wdata", sbits)]);

    // ---- State ----
    m.comment("State: controller, output registers, tags/valid/dirty/LRU, MSHR file");
    let st = m.fsm("state_q", &["idle", "wb", "install", "release"]);
    let resp_v = m.reg("resp_valid_q", 1, Some(0));
    let resp_p = m.reg("resp_payload_q", resp_l.width(), None);
    let mreq_v = m.reg("mreq_valid_q", 1, Some(0));
    let mreq_p = m.reg("mreq_payload_q", mreq_l.width(), None);
    let ways: Vec<Vec<WayRegs>> = (0..nsets)
        .map(|s| {
            (0..nways)
                .map(|w| WayRegs {
                    tag: m.reg(&format!("tag_s{}_w{}_q", s, w), tagw, Some(0)),
                    valid: m.reg(&format!("valid_s{}_w{}_q", s, w), spl as u32, Some(0)),
                    dirty: m.reg(&format!("dirty_s{}_w{}_q", s, w), spl as u32, Some(0)),
                    rank: m.reg(&format!("rank_s{}_w{}_q", s, w), rankw, Some(w as u64)),
                })
                .collect()
        })
        .collect();
    let mshr: Vec<MshrRegs> = (0..nm)
        .map(|e| MshrRegs {
            valid: m.reg(&format!("mshr{}_valid_q", e), 1, Some(0)),
            addr: m.reg(&format!("mshr{}_addr_q", e), saw, None),
            count: m.reg(&format!("mshr{}_count_q", e), cntw, Some(0)),
            slots: (0..ns)
                .map(|k| {
                    [
                        m.reg(&format!("mshr{}_s{}_id_q", e, k), idw, None),
                        m.reg(&format!("mshr{}_s{}_field_q", e, k), lfw.max(1), None),
                        m.reg(&format!("mshr{}_s{}_we_q", e, k), 1, None),
                        m.reg(&format!("mshr{}_s{}_wdata_q", e, k), fb, None),
                    ]
                })
                .collect(),
        })
        .collect();
    let data = m.memory("data_q", lbits, (nsets * nways).max(2) as u32);
    let cnt_hits = m.reg("cnt_hits_q", 32, Some(0));
    let cnt_misses = m.reg("cnt_misses_q", 32, Some(0));
    let cnt_merges = m.reg("cnt_merges_q", 32, Some(0));
    // Fill in progress.
    let f_addr = m.reg("fill_addr_q", saw, None);
    let f_data = m.reg("fill_data_q", sbits, None);
    let f_mshr = m.reg("fill_mshr_q", clog2(nm as u64).max(1), None);
    let f_way = m.reg("fill_way_q", wayw, None);
    let f_new = m.reg("fill_new_q", 1, None);
    let wb_mask = m.reg("wb_mask_q", spl as u32, None);
    let wb_tag = m.reg("wb_tag_q", tagw, None);
    let rel_k = m.reg("rel_k_q", cntw, None);

    // ---- Output streams ----
    let resp_s = Stream::new(&mut m, "resp_out", &resp_v.q(), &resp_p.q(), &resp_l);
    let resp_free = m.wire("resp_free", &(!resp_v.q() | resp_s.ready()));
    let mreq_s = Stream::new(&mut m, "mreq_out", &mreq_v.q(), &mreq_p.q(), &mreq_l);
    let mreq_free = m.wire("mreq_free", &(!mreq_v.q() | mreq_s.ready()));

    // ---- Lookup decode (idle) ----
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
        rf.slice(lfw, setw)
    } else {
        Expr::zero(1)
    };
    let r_tag = rf.slice(lfw + clog2(c.sets as u64), tagw);
    let r_fil = m.wire("req_fil", &r_fil);
    let r_sec = m.wire("req_sec", &r_sec);
    let r_set = m.wire("req_set", &r_set);
    let set_sel = |x: &Expr, f: &dyn Fn(&WayRegs) -> Expr, w: usize| -> Expr {
        let opts: Vec<Expr> = (0..nsets).map(|s| f(&ways[s][w])).collect();
        mux_tree(x, &opts)
    };
    let sec_bit = |valid: &Expr, sec: &Expr| -> Expr {
        let opts: Vec<Expr> = (0..spl).map(|j| valid.bit(j as u32)).collect();
        mux_tree(sec, &opts)
    };
    // Tag and valid bits of every way of one set, as named wires `<prefix>_tag_w<w>` etc.
    let way_state = |m: &mut ModuleBuilder, prefix: &str, set: &Expr| -> Vec<(Expr, Expr)> {
        (0..nways)
            .map(|w| {
                let t = m.wire(
                    &format!("{}_tag_w{}", prefix, w),
                    &set_sel(set, &|x| x.tag.q(), w),
                );
                let v = m.wire(
                    &format!("{}_valid_w{}", prefix, w),
                    &set_sel(set, &|x| x.valid.q(), w),
                );
                (t, v)
            })
            .collect()
    };
    let mut r_hit_w = Vec::new();
    for (w, (t, v)) in way_state(&mut m, "req", &r_set).into_iter().enumerate() {
        r_hit_w.push(m.wire(
            &format!("req_hit_w{}", w),
            &(t.eq(&r_tag) & sec_bit(&v, &r_sec)),
        ));
    }
    let r_hit = m.wire("req_hit", &any_of(&r_hit_w));
    let r_way = m.wire("req_way", &onehot_index(&r_hit_w, wayw));
    let r_match: Vec<Expr> = mshr
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
            &(0..nm)
                .map(|e| &r_match[e] & &mshr[e].count.q().eq_lit(ns as u64))
                .collect::<Vec<_>>(),
        ),
    );
    let free: Vec<Expr> = first_set(&mshr.iter().map(|x| !x.valid.q()).collect::<Vec<_>>());
    let free_any = m.wire("mshr_free_any", &any_of(&free));
    let can = m.wire(
        "req_can",
        &(&r_hit | &(&r_match_any & &!&r_match_full) | &(&!&r_match_any & &free_any)),
    );
    let idle = st.is("idle");
    let outs_free = m.wire("outs_free", &(&resp_free & &mreq_free));
    let fill_take = m.wire("fill_take", &(&idle & &fill.valid & &outs_free));
    let req_take = m.wire(
        "req_take",
        &(&idle & &!&fill.valid & &req.valid & &outs_free & &can),
    );

    // ---- Fill decode ----
    m.comment("Fill: MSHR of the sector, way (present line, invalid way, LRU way), victim");
    let fa = fill.field("addr");
    let fi_set = if c.sets > 1 {
        fa.slice(p.sec_bits(), setw)
    } else {
        Expr::zero(1)
    };
    let fi_tag = fa.slice(p.sec_bits() + clog2(c.sets as u64), tagw);
    let fi_set = m.wire("fill_in_set", &fi_set);
    let fi_mshr: Vec<Expr> = mshr
        .iter()
        .map(|x| &x.valid.q() & &x.addr.q().eq(&fa))
        .collect();
    let fi_mshr = m.wire(
        "fill_in_mshr",
        &onehot_index(&fi_mshr, clog2(nm as u64).max(1)),
    );
    let mut present = Vec::new();
    let mut invalid = Vec::new();
    let mut lru = Vec::new();
    for (w, (t, v)) in way_state(&mut m, "fill", &fi_set).into_iter().enumerate() {
        let rk = set_sel(&fi_set, &|x| x.rank.q(), w);
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
    let vdirty = mux_tree(
        &victim,
        &(0..nways)
            .map(|w| set_sel(&fi_set, &|x| x.dirty.q(), w))
            .collect::<Vec<_>>(),
    );
    let vtag = mux_tree(
        &victim,
        &(0..nways)
            .map(|w| set_sel(&fi_set, &|x| x.tag.q(), w))
            .collect::<Vec<_>>(),
    );
    let wb_first_mask = m.wire(
        "fill_wb_mask",
        &pres_any.select(&Expr::zero(spl as u32), &vdirty),
    );

    // ---- Line access: request in idle, the fill's line otherwise ----
    m.comment("Data array: one line read and (at most) one line written per cycle");
    let fset = if c.sets > 1 {
        f_addr.q().slice(p.sec_bits(), setw)
    } else {
        Expr::zero(1)
    };
    let fsec = if p.sec_bits() > 0 {
        f_addr.q().slice(0, p.sec_bits())
    } else {
        Expr::zero(1)
    };
    let ftag = f_addr.q().slice(p.sec_bits() + clog2(c.sets as u64), tagw);
    let fset = m.wire("fill_set", &fset);
    let fsec = m.wire("fill_sec", &fsec);
    let aw = clog2((nsets * nways).max(2) as u64).max(1);
    let index = |set: &Expr, way: &Expr| -> Expr {
        if nways == 1 {
            set.zext(aw)
        } else if nsets == 1 {
            way.zext(aw)
        } else {
            Expr::cat(&[set.clone(), way.clone()]).zext(aw)
        }
    };
    let line_idx = m.wire(
        "line_idx",
        &idle.select(&index(&r_set, &r_way), &index(&fset, &f_way.q())),
    );
    let line = m.wire("line", &data.read(&line_idx));
    let lanes = line.lanes(fb);
    // The field an access reads: request in idle, the parked slot in release.
    let pick = |i: usize, w: u32| -> Expr {
        let per_entry: Vec<Expr> = (0..nm)
            .map(|e| {
                mux_tree(
                    &rel_k.q(),
                    &(0..ns).map(|k| mshr[e].slots[k][i].q()).collect::<Vec<_>>(),
                )
            })
            .collect();
        let v = mux_tree(&f_mshr.q(), &per_entry);
        debug_assert_eq!(v.width(), w);
        v
    };
    let rel_id = m.wire("rel_id", &pick(0, idw));
    let rel_fil = m.wire("rel_fil", &pick(1, lfw.max(1)));
    let rel_we = m.wire("rel_we", &pick(2, 1));
    let rel_wd = m.wire("rel_wdata", &pick(3, fb));
    let acc_fil = m.wire("acc_fil", &idle.select(&r_fil.resize(lfw.max(1)), &rel_fil));
    let acc_we = m.wire("acc_we", &idle.select(&req.field("we"), &rel_we));
    let acc_wd = m.wire("acc_wdata", &idle.select(&req.field("wdata"), &rel_wd));
    let acc_rd = m.wire("acc_rdata", &mux_tree(&acc_fil, &lanes));
    let written: Vec<Expr> = (0..lanes.len())
        .map(|i| (&acc_we & &acc_fil.eq_lit(i as u64)).select(&acc_wd, &lanes[i]))
        .collect();
    let line_w = m.wire("line_written", &Expr::cat_lsb(&written));
    let sectors = line.lanes(sbits);
    let filled: Vec<Expr> = (0..spl)
        .map(|j| fsec.eq_lit(j as u64).select(&f_data.q(), &sectors[j]))
        .collect();
    let line_f = m.wire("line_filled", &Expr::cat_lsb(&filled));
    let wb_one = first_set(
        &(0..spl)
            .map(|j| wb_mask.q().bit(j as u32))
            .collect::<Vec<_>>(),
    );
    let wb_sec = m.wire("wb_sec", &onehot_index(&wb_one, secw));
    let wb_data = m.wire("wb_data", &mux_tree(&wb_sec, &sectors));
    if spl == 1 {
        m.unused(&wb_sec);
    }

    // ---- Controller ----
    m.comment("Controller: idle (fill or lookup), wb, install, release");
    let in_rel = st.is("release");
    let rel_count = mux_tree(
        &f_mshr.q(),
        &mshr.iter().map(|x| x.count.q()).collect::<Vec<_>>(),
    );
    let rel_more = m.wire("rel_more", &rel_k.q().lt(&rel_count));
    let hit_take = m.wire("hit_take", &(&req_take & &r_hit));
    let rel_take = m.wire("rel_take", &(&in_rel & &rel_more & &resp_free));
    let acc_take = m.wire("acc_take", &(&hit_take | &rel_take));
    let install = st.is("install");
    let wb_go = m.wire("wb_go", &(&st.is("wb") & &wb_mask.q().any() & &mreq_free));
    // Data array write: access write (hit or release), or the sector fill.
    let dw_en = m.wire("data_we", &((&acc_take & &acc_we) | install.clone()));
    m.mem_write(&data, &dw_en, &line_idx, &install.select(&line_f, &line_w));
    // Output registers.
    let resp_pay = resp_l.pack(&[
        ("id", idle.select(&req.field("id"), &rel_id)),
        ("hit", idle.clone()),
        ("data", acc_we.select(&acc_wd, &acc_rd)),
    ]);
    m.when(&resp_s.fire(), |m| m.set(&resp_v, &Expr::zero(1)));
    m.when(&acc_take, |m| {
        m.set(&resp_v, &Expr::ones(1));
        m.set(&resp_p, &resp_pay);
    });
    let miss_take = m.wire("miss_take", &(&req_take & &!&r_hit & &!&r_match_any));
    let merge_take = m.wire("merge_take", &(&req_take & &!&r_hit & &r_match_any));
    let mut wb_parts = vec![wb_tag.q()];
    if c.sets > 1 {
        wb_parts.push(fset.clone());
    }
    if p.sec_bits() > 0 {
        wb_parts.push(wb_sec.clone());
    }
    let wb_addr = Expr::cat(&wb_parts);
    m.when(&mreq_s.fire(), |m| m.set(&mreq_v, &Expr::zero(1)));
    m.when(&miss_take, |m| {
        m.set(&mreq_v, &Expr::ones(1));
        m.set(
            &mreq_p,
            &mreq_l.pack(&[
                ("we", Expr::zero(1)),
                ("addr", r_sector.clone()),
                ("wdata", Expr::zero(sbits)),
            ]),
        );
    });
    m.when(&wb_go, |m| {
        m.set(&mreq_v, &Expr::ones(1));
        m.set(
            &mreq_p,
            &mreq_l.pack(&[
                ("we", Expr::ones(1)),
                ("addr", wb_addr.clone()),
                ("wdata", wb_data.clone()),
            ]),
        );
        let clr: Vec<Expr> = (0..spl)
            .map(|j| &wb_mask.q().bit(j as u32) & &!&wb_one[j])
            .collect();
        m.set(&wb_mask, &Expr::cat_lsb(&clr));
    });
    // Counters.
    m.when(&hit_take, |m| {
        m.set(&cnt_hits, &(cnt_hits.q() + Expr::lit(32, 1)))
    });
    m.when(&miss_take, |m| {
        m.set(&cnt_misses, &(cnt_misses.q() + Expr::lit(32, 1)))
    });
    m.when(&merge_take, |m| {
        m.set(&cnt_merges, &(cnt_merges.q() + Expr::lit(32, 1)))
    });
    // State machine.
    m.when(&fill_take, |m| {
        m.set(&f_addr, &fa);
        m.set(&f_data, &fill.field("data"));
        m.set(&f_mshr, &fi_mshr);
        m.set(&f_way, &victim);
        m.set(&f_new, &!&pres_any);
        m.set(&wb_mask, &wb_first_mask);
        m.set(&wb_tag, &vtag);
        st.go(m, "wb");
    });
    m.when(&(&st.is("wb") & &!&wb_mask.q().any()), |m| {
        st.go(m, "install")
    });
    m.when(&install, |m| {
        m.set(&rel_k, &Expr::zero(cntw));
        st.go(m, "release");
    });
    m.when(&rel_take, |m| {
        m.set(&rel_k, &(rel_k.q() + Expr::lit(cntw, 1)))
    });
    m.when(&(&in_rel & &!&rel_more), |m| st.go(m, "idle"));

    // Per-way state: install, access (dirty, LRU).
    let acc_set = idle.select(&r_set, &fset);
    let acc_way = idle.select(&r_way, &f_way.q());
    let acc_sec = idle.select(&r_sec, &fsec);
    let acc_set = m.wire("acc_set", &acc_set);
    let acc_way = m.wire("acc_way", &acc_way);
    let acc_sec = m.wire("acc_sec", &acc_sec);
    let touch = m.wire("lru_touch", &(&acc_take | &install));
    let sec_onehot = |s: &Expr| -> Expr {
        Expr::cat_lsb(&(0..spl).map(|j| s.eq_lit(j as u64)).collect::<Vec<_>>())
    };
    let acc_sec_oh = m.wire("acc_sec_onehot", &sec_onehot(&acc_sec));
    for (s, set_ways) in ways.iter().enumerate() {
        let in_set = m.wire(&format!("acc_set{}", s), &acc_set.eq_lit(s as u64));
        let touched_rank = mux_tree(
            &acc_way,
            &set_ways.iter().map(|x| x.rank.q()).collect::<Vec<_>>(),
        );
        let tr = m.wire(&format!("touched_rank_s{}", s), &touched_rank);
        for (w, x) in set_ways.iter().enumerate() {
            let here = &in_set & &acc_way.eq_lit(w as u64);
            m.when(&(&install & &here), |m| {
                m.set(&x.tag, &ftag);
                m.set(
                    &x.valid,
                    &f_new
                        .q()
                        .select(&acc_sec_oh, &(x.valid.q() | acc_sec_oh.clone())),
                );
                m.when(&f_new.q(), |m| m.set(&x.dirty, &Expr::zero(spl as u32)));
            });
            m.when(&(&acc_take & &acc_we & &here), |m| {
                m.set(&x.dirty, &(x.dirty.q() | acc_sec_oh.clone()));
            });
            let newer = x.rank.q().lt(&tr);
            m.when(&(&touch & &in_set), |m| {
                let r = acc_way.eq_lit(w as u64).select(
                    &Expr::zero(rankw),
                    &newer.select(&(x.rank.q() + Expr::lit(rankw, 1)), &x.rank.q()),
                );
                m.set(&x.rank, &r);
            });
        }
    }
    // MSHR file: allocate, merge, free.
    let r_slot = (
        req.field("id"),
        r_fil.resize(lfw.max(1)),
        req.field("we"),
        req.field("wdata"),
    );
    for (e, x) in mshr.iter().enumerate() {
        let alloc = m.wire(&format!("mshr{}_alloc", e), &(&miss_take & &free[e]));
        let merge = m.wire(&format!("mshr{}_merge", e), &(&merge_take & &r_match[e]));
        m.when(&alloc, |m| {
            m.set(&x.valid, &Expr::ones(1));
            m.set(&x.addr, &r_sector);
            m.set(&x.count, &Expr::lit(cntw, 1));
        });
        m.when(&merge, |m| {
            m.set(&x.count, &(x.count.q() + Expr::lit(cntw, 1)))
        });
        let done = &(&in_rel & &!&rel_more) & &f_mshr.q().eq_lit(e as u64);
        m.when(&done, |m| {
            m.set(&x.valid, &Expr::zero(1));
            m.set(&x.count, &Expr::zero(cntw));
        });
        for (k, sl) in x.slots.iter().enumerate() {
            let at = (&alloc & &Expr::lit(1, (k == 0) as u64))
                | (&merge & &x.count.q().eq_lit(k as u64));
            m.when(&at, |m| {
                m.set(&sl[0], &r_slot.0);
                m.set(&sl[1], &r_slot.1);
                m.set(&sl[2], &r_slot.2);
                m.set(&sl[3], &r_slot.3);
            });
        }
    }

    // ---- Ports out ----
    req.accept(&mut m, &req_take);
    fill.accept(&mut m, &fill_take);
    stream::output(&mut m, "resp", resp_s);
    stream::output(&mut m, "mreq", mreq_s);
    m.output_expr("cnt_hits_o", &cnt_hits.q());
    m.output_expr("cnt_misses_o", &cnt_misses.q());
    m.output_expr("cnt_merges_o", &cnt_merges.q());
    m.finish()
}
