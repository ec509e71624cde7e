//! `buddy_mc_ctrl` (docs/FORMATS.md, Buddy §3.3-§3.4, §4.1-§4.2, §7 item 7): one memory
//! controller's request splitter and merger between the L2 and two memories, device HBM and
//! the buddy memory behind the link, around the BPC compressor and decompressor, the size
//! mapper, the address generator and the metadata-cache slice. It is the hardware of
//! [`crate::model::buddy::system::System`] for the entries of one controller, access for
//! access.
//!
//! Requests are handled one at a time, in order:
//! * **Read** (an entry and a sector mask): the 4-bit code through the metadata slice (a
//!   compressed page) or raw (a 1× page: no metadata); then the device sectors and the buddy
//!   pieces the size mapper names are read in parallel on the two channels, concatenated in
//!   stream order, decompressed (a zero entry moves no data and returns zeros; a raw entry
//!   bypasses the decoder), and the requested sectors returned (the others zero).
//! * **Full write**: compressed, its device sectors and buddy pieces written, then its code
//!   through the slice (an all-zero entry writes the code alone). A 1× page writes the four
//!   sectors raw.
//! * **Partial write** (mask not `1111`): the read path, the written sectors merged into the
//!   decoded entry, then the write path (read-modify-write; the paper does not discuss it).
//!
//! Every access moves whole stored entries, as the system model accounts them (a raw entry's
//! read does not narrow to the requested sectors; §7's optional optimisation is not built).
//!
//! Addresses: entry `e` of a page at device `base` with buddy offset `boff` and target `T`
//! (`D = 128 / T` device bytes): device piece `k` at `base + e·D + 32k` (at 16× the one 8 B
//! slot, `small` set and data in bits 63:0), buddy piece `m` at `GBBR + boff·page + e·(128 −
//! D) + 32m` holding stream bytes `[D + 32m, D + 32m + 32)`. The metadata index is
//! `boff·entries_per_page + e`; this controller owns the indices `≡ its number (mod mcs)`
//! and its slice is indexed by `index / mcs`.
//!
//! Channels: `req` (one beat: op, target, page base, buddy offset, entry, mask, 128 B data),
//! `rsp` (one beat: data, write, err), `hreq`/`hrsp` (HBM: a 32 B sector per beat, reads
//! answered in any order with the piece number as tag), `breq`/`brsp` (the buddy link, the
//! same), `mreq`/`mfill` (the slice's 32 B metadata sectors). `gbbr_i` is the global buddy
//! base register. Counters: accesses (a partial write counts two), accesses that touched
//! buddy memory, zero-entry accesses, and the slice's hits, misses and merges.

use super::{addr_gen, size_mapper, BuddyRtlParams};
use crate::hdl::blocks::{counter_split, first_set, mux_tree, onehot_index};
use crate::hdl::stream::{self, Layout, OutPort, Stream};
use crate::hdl::{Expr, Fsm, HdlError, Inst, Module, ModuleBuilder, Reg};
use crate::model::buddy::Target;
use crate::rtl::bpc::{self, SPEC};
use std::sync::Arc;

/// Request opcode: read the sectors of `mask`.
pub const OP_READ: u64 = 0;
/// Request opcode: write the sectors of `mask` (all four: a full write).
pub const OP_WRITE: u64 = 1;

/// Bits of a piece (a 32 B sector of the 128 B entry).
const PIECE_BITS: u32 = 256;

/// Width of the event counters.
const CNT_BITS: u32 = 32;

/// Checks what the controller needs beyond the units' parameters: 128 B entries and a
/// slice index wide enough for every metadata index of this controller.
pub fn check(p: &BuddyRtlParams) -> Result<(), String> {
    p.validate()?;
    if p.bpc.entry_bytes != 128 {
        return Err(format!(
            "the memory controller needs buddy.bpc.entry_bytes = 128 (Buddy's memory entry), \
             not {}",
            p.bpc.entry_bytes
        ));
    }
    let need = p.addr.boff_bits + p.entry_bits() - p.mc.mcs.trailing_zeros();
    if p.meta.entry_bits < need {
        return Err(format!(
            "buddy.meta.entry_bits = {} is too narrow for the controller: {} buddy-offset bits \
             and {} entry bits over {} MCs need {need}",
            p.meta.entry_bits,
            p.addr.boff_bits,
            p.entry_bits(),
            p.mc.mcs
        ));
    }
    Ok(())
}

/// Bits `[lo, lo + w)` of `v`, zero past its end.
fn seg(v: &Expr, lo: u32, w: u32) -> Expr {
    if lo >= v.width() {
        Expr::zero(w)
    } else {
        v.slice(lo, w.min(v.width() - lo)).zext(w)
    }
}

/// A deliberate defect, for showing that the controller's scoreboard catches it
/// (`cosim::buddy_mc` tests; the interpreter runs these variants in a second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McFault {
    /// The read-modify-write merge takes sector 0 from the old entry whatever the mask.
    RmwMerge,
    /// Buddy pieces of 2× pages are cut at the 4× device size.
    BuddyOffset,
    /// The metadata update stores the code with its low bit flipped.
    MetaCode,
    /// The 16× device slot is written as a whole 32 B sector.
    SlotWidth,
    /// Writes do not count buddy accesses.
    BuddyCount,
}

/// `buddy_mc_ctrl`: see the module documentation.
pub fn mc_ctrl(p: &BuddyRtlParams) -> Result<Arc<Module>, HdlError> {
    build(p, None)
}

/// [`mc_ctrl`] with the defect `f` (a test hook; the module name says `faulty`).
pub fn mc_ctrl_faulty(p: &BuddyRtlParams, f: McFault) -> Result<Arc<Module>, HdlError> {
    build(p, Some(f))
}

fn build(p: &BuddyRtlParams, fault: Option<McFault>) -> Result<Arc<Module>, HdlError> {
    let name = format!(
        "buddy_mc_ctrl_{}_m{}",
        match p.addr.page {
            crate::model::buddy::PageSize::M2 => "2m",
            crate::model::buddy::PageSize::K64 => "64k",
        },
        p.mc.mcs
    ) + if fault.is_some() { "_faulty" } else { "" };
    check(p).map_err(|e| HdlError {
        module: name.clone(),
        problems: vec![e],
    })?;
    let cp = p.meta.rtl();
    let cache_m = crate::rtl::cache::cache(&cp)?;
    let comp_m = bpc::compressor(&p.bpc)?;
    let dec_m = bpc::decompressor(&p.bpc)?;
    let sm_m = size_mapper(p)?;
    // The combinational unit is read in the cycle it is asked (piece k at piece 0 + 32k); a
    // pipelined one is asked for the four pieces' addresses in turn, which are kept.
    let ag_m = addr_gen(p)?;
    let pa = p.addr.pa_bits;
    let eb = p.entry_bits();
    let ob = p.addr.boff_bits;
    let ew = bpc::ENTRY_BITS;
    let sbits = cp.cache.sector_bytes * 8;
    let saw = cp.sector_addr_bits();

    let mut m = ModuleBuilder::new(&name);
    m.header("Generator: hwzip::rtl::buddy::mc_ctrl");
    m.header(format!("Parameters: {}", p.describe()));
    m.header(format!("Metadata: {}", p.meta.describe()));
    m.header(format!(
        "Spec: {SPEC} §3.3-§3.4 (codes, slice), §4.1-§4.2, §7 item 7 (splitter/merger)"
    ));
    m.header("One request at a time, in order; whole stored entries move (the system model)");

    // ---- Ports ----
    let gbbr = m.input("gbbr_i", pa);
    let req = stream::input(
        &mut m,
        "req",
        &Layout::new(&[
            ("op", 1),
            ("tgt", 3),
            ("base", pa),
            ("boff", ob),
            ("entry", eb),
            ("mask", 4),
            ("data", ew),
        ]),
    );
    let piece_l = Layout::new(&[("data", PIECE_BITS), ("tag", 2)]);
    let hrsp = stream::input(&mut m, "hrsp", &piece_l);
    let brsp = stream::input(&mut m, "brsp", &piece_l);
    let mfill = stream::input(
        &mut m,
        "mfill",
        &Layout::new(&[("data", sbits), ("addr", saw)]),
    );
    let rsp = stream::output_port(&mut m, "rsp");
    let rsp_ready = rsp.ready();
    let hreq = stream::output_port(&mut m, "hreq");
    let breq = stream::output_port(&mut m, "breq");
    let mreq = stream::output_port(&mut m, "mreq");
    let mreq_ready = mreq.ready();

    // ---- State ----
    m.comment("Request state: the L2 request, the entry's code, pieces in and out");
    let st = m.fsm(
        "state_q",
        &[
            "idle", "addr", "lookup", "mwait", "rd_go", "fetch", "dec", "decw", "post", "comp",
            "compw", "wr_go", "wr", "upd", "updw", "rsp",
        ],
    );
    let wr = m.reg("is_write_q", 1, None);
    let tgt = m.reg("tgt_q", 3, None);
    let base = m.reg("base_q", pa, None);
    let boff = m.reg("boff_q", ob, None);
    let ent = m.reg("entry_q", eb, None);
    let mask = m.reg("mask_q", 4, None);
    let wbuf = m.reg("wbuf_q", ew, None);
    let rbuf = m.reg("rbuf_q", ew, None);
    let cst = m.reg("cstream_q", ew, None);
    let code = m.reg("code_q", 4, None);
    let err_q = m.reg("err_q", 1, None);
    let pieces = if p.addr_stages == 0 { 1 } else { 4 };
    let dev_addr = m.reg_array("dev_addr_q", pa, pieces, None);
    let bud_addr = m.reg_array("bud_addr_q", pa, pieces, None);
    let dbuf: Vec<_> = (0..4)
        .map(|k| m.reg(&format!("dbuf{k}_q"), PIECE_BITS, None))
        .collect();
    let bbuf: Vec<_> = (0..4)
        .map(|k| m.reg(&format!("bbuf{k}_q"), PIECE_BITS, None))
        .collect();
    let dleft = m.reg("dev_left_q", 4, Some(0));
    let bleft = m.reg("bud_left_q", 4, Some(0));
    let dgot = m.reg("dev_got_q", 4, None);
    let bgot = m.reg("bud_got_q", 4, None);

    let tgt_is = |t: Target| tgt.q().eq_lit(t.code() as u64);
    let x1 = m.wire("tgt_x1", &tgt_is(Target::X1));
    let x16 = m.wire("tgt_x16", &tgt_is(Target::X16));
    let full = m.wire("full_write", &(&wr.q() & &mask.q().eq_lit(0xF)));

    let c = Ctl {
        st,
        wr,
        tgt,
        base,
        boff,
        ent,
        mask,
        wbuf,
        rbuf,
        cst,
        code,
        err_q,
        dev_addr,
        bud_addr,
        dbuf,
        bbuf,
        dleft,
        bleft,
        dgot,
        bgot,
        x1,
        x16,
        full,
        fault,
    };
    requests(&mut m, &c, req);
    let s = split(&mut m, &c, &ag_m, &sm_m, &gbbr);
    let cache = metadata(&mut m, &c, p, &cache_m, &mfill, &mreq_ready);
    let counts = access_start(&mut m, &c, &s);
    memory_requests(&mut m, &c, pa, hreq, breq);
    read_data(&mut m, &c, &s, hrsp, brsp);
    decompress(&mut m, &c, &s, &dec_m);
    rmw(&mut m, &c);
    compress(&mut m, &c, &comp_m);
    let Ctl {
        st,
        wr,
        mask,
        rbuf,
        err_q,
        ..
    } = c;

    // ---- Responses ----
    m.comment("Responses: the requested sectors of a read; a write's acknowledgement");
    let sect_mask = Expr::cat_lsb(
        &(0..4)
            .map(|k| mask.q().bit(k).repeat(PIECE_BITS))
            .collect::<Vec<_>>(),
    );
    let rsp_data = m.wire(
        "rsp_data",
        &(&wr.q() | &err_q.q()).select(&Expr::zero(ew), &(rbuf.q() & sect_mask)),
    );
    let rsp_v = st.is("rsp");
    m.when(&(&rsp_v & &rsp_ready), |m| st.go(m, "idle"));
    rsp.drive(
        &mut m,
        &rsp_v,
        &[("data", rsp_data), ("write", wr.q()), ("err", err_q.q())],
    );
    mfill.accept(&mut m, &cache.out("mfill_ready_o"));
    mreq.drive(
        &mut m,
        &cache.out("mreq_valid_o"),
        &[
            ("we", cache.out("mreq_we_o")),
            ("addr", cache.out("mreq_addr_o")),
            ("data", cache.out("mreq_wdata_o")),
        ],
    );
    m.output_expr("cnt_access_o", &counts[0]);
    m.output_expr("cnt_buddy_o", &counts[1]);
    m.output_expr("cnt_zero_o", &counts[2]);
    m.output_expr("meta_hits_o", &cache.out("cnt_hits_o"));
    m.output_expr("meta_misses_o", &cache.out("cnt_misses_o"));
    m.output_expr("meta_merges_o", &cache.out("cnt_merges_o"));
    m.finish()
}

/// The controller's state machine and request registers, shared by its sections.
#[derive(Clone)]
struct Ctl {
    st: Fsm,
    wr: Reg,
    tgt: Reg,
    base: Reg,
    boff: Reg,
    ent: Reg,
    mask: Reg,
    wbuf: Reg,
    rbuf: Reg,
    cst: Reg,
    code: Reg,
    err_q: Reg,
    /// The pieces' addresses on each memory: piece 0 only (the combinational address
    /// generator), or pieces 0-3 (a pipelined one).
    dev_addr: Vec<Reg>,
    bud_addr: Vec<Reg>,
    dbuf: Vec<Reg>,
    bbuf: Vec<Reg>,
    dleft: Reg,
    bleft: Reg,
    dgot: Reg,
    bgot: Reg,
    /// The target is 1x (raw, no metadata) or 16x; a full-entry write.
    x1: Expr,
    x16: Expr,
    full: Expr,
    fault: Option<McFault>,
}

/// The size mapper's outputs for the request's code and target.
#[derive(Clone)]
struct Split {
    dev_mask: Expr,
    bud_mask: Expr,
    is_zero: Expr,
    is_raw: Expr,
    code_bad: Expr,
}

/// L2 requests: one beat each, taken when idle.
fn requests(m: &mut ModuleBuilder, c: &Ctl, req: Stream) {
    let Ctl {
        st,
        wr,
        tgt,
        base,
        boff,
        ent,
        mask,
        wbuf,
        err_q,
        ..
    } = c.clone();
    m.comment("L2 requests: one beat each, taken when idle");
    let req_fire = m.wire("req_fire", &(&req.valid & &st.is("idle")));
    m.when(&req_fire, |m| {
        m.set(&wr, &req.field("op"));
        m.set(&tgt, &req.field("tgt"));
        m.set(&base, &req.field("base"));
        m.set(&boff, &req.field("boff"));
        m.set(&ent, &req.field("entry"));
        m.set(&mask, &req.field("mask"));
        m.set(&wbuf, &req.field("data"));
        m.set(&err_q, &Expr::zero(1));
        st.go(m, "addr");
    });
    req.accept(m, &st.is("idle"));
}

/// The address generator (piece 0 of each memory) and the size mapper (code, target).
fn split(
    m: &mut ModuleBuilder,
    c: &Ctl,
    ag_m: &Arc<Module>,
    sm_m: &Arc<Module>,
    gbbr: &Expr,
) -> Split {
    let Ctl {
        st,
        tgt,
        base,
        boff,
        ent,
        wbuf,
        cst,
        code,
        err_q,
        dev_addr,
        bud_addr,
        dbuf,
        bbuf,
        x1,
        full,
        ..
    } = c.clone();
    m.comment("Address generator (the pieces of each memory) and size mapper (code, target)");
    let pipelined = dev_addr.len() > 1;
    // A pipelined generator is asked for pieces 0-3 in turn (`ag_k_q`, the pieces asked)
    // and its answers are kept in order (`ag_got_q`); the combinational one for piece 0.
    let ak = pipelined.then(|| m.reg("ag_k_q", 3, None));
    let ag_ask = match &ak {
        Some(ak) => m.wire("ag_ask", &(st.is("addr") & !ak.q().bit(2))),
        None => Expr::lit(1, 1),
    };
    let ag = m.instance(
        ag_m,
        "u_addr_gen",
        &[
            ("s_valid_i", ag_ask.clone()),
            ("s_entry_i", ent.q()),
            ("s_base_i", base.q()),
            ("s_boff_i", boff.q()),
            ("s_tgt_i", tgt.q()),
            ("s_gbbr_i", gbbr.clone()),
            (
                "s_k_i",
                ak.as_ref().map_or(Expr::zero(2), |k| k.q().slice(0, 2)),
            ),
            ("m_ready_i", Expr::lit(1, 1)),
        ],
    );
    m.unused(&ag.out("m_is_buddy_o"));
    let addr_done = match &ak {
        Some(ak) => {
            m.unused(&ag.out("s_ready_o"));
            let got = m.reg("ag_got_q", 2, None);
            let ans = m.wire("ag_answer", &ag.out("m_valid_o"));
            m.when(&!st.is("addr"), |m| {
                m.set(ak, &Expr::zero(3));
                m.set(&got, &Expr::zero(2));
            });
            m.when(&ag_ask, |m| m.set(ak, &(ak.q() + Expr::lit(3, 1))));
            m.when(&ans, |m| m.set(&got, &(got.q() + Expr::lit(2, 1))));
            for (k, (d, b)) in dev_addr.iter().zip(&bud_addr).enumerate() {
                m.when(&(&ans & &got.q().eq_lit(k as u64)), |m| {
                    m.set(d, &ag.out("m_dev_addr_o"));
                    m.set(b, &ag.out("m_bud_addr_o"));
                });
            }
            m.wire("addr_done", &(&ans & &got.q().eq_lit(3)))
        }
        None => {
            m.unused(&Expr::cat(&[ag.out("s_ready_o"), ag.out("m_valid_o")]));
            m.when(&st.is("addr"), |m| {
                m.set(&dev_addr[0], &ag.out("m_dev_addr_o"));
                m.set(&bud_addr[0], &ag.out("m_bud_addr_o"));
            });
            Expr::lit(1, 1)
        }
    };
    let sm = m.instance(
        sm_m,
        "u_size_mapper",
        &[
            ("s_valid_i", Expr::lit(1, 1)),
            ("s_size_i", code.q()),
            ("s_tgt_i", tgt.q()),
            ("m_ready_i", Expr::lit(1, 1)),
        ],
    );
    m.unused(&Expr::cat(&[
        sm.out("s_ready_o"),
        sm.out("m_valid_o"),
        sm.out("m_n_dev_o"),
        sm.out("m_n_bud_o"),
        sm.out("m_fits_dev_o"),
    ]));
    let dev_mask = m.wire("dev_mask", &sm.out("m_dev_mask_o"));
    let bud_mask = m.wire("bud_mask", &sm.out("m_bud_mask_o"));
    let is_zero = m.wire("is_zero", &sm.out("m_is_zero_o"));
    let is_raw = m.wire("is_raw", &sm.out("m_is_raw_o"));
    let code_bad = m.wire("code_reserved", &sm.out("m_err_o"));
    m.when(&(st.is("addr") & addr_done), |m| {
        for r in dbuf.iter().chain(&bbuf) {
            m.set(r, &Expr::zero(PIECE_BITS));
        }
        m.when(&ag.out("m_err_o"), |m| {
            m.set(&err_q, &Expr::lit(1, 1));
            st.go(m, "rsp");
        })
        .elsewhen(m, &x1, |m| {
            // A 1x page: the entry is raw, no metadata.
            m.set(&code, &Expr::lit(4, 4));
            m.set(&cst, &wbuf.q());
            m.when(&full, |m| st.go(m, "wr_go"))
                .otherwise(m, |m| st.go(m, "rd_go"));
        })
        .elsewhen(m, &full, |m| st.go(m, "comp"))
        .otherwise(m, |m| st.go(m, "lookup"));
    });
    Split {
        dev_mask,
        bud_mask,
        is_zero,
        is_raw,
        code_bad,
    }
}

/// The metadata slice: code lookups (read path) and updates (write path).
fn metadata(
    m: &mut ModuleBuilder,
    c: &Ctl,
    p: &BuddyRtlParams,
    cache_m: &Arc<Module>,
    mfill: &Stream,
    mreq_ready: &Expr,
) -> Inst {
    let cp = p.meta.rtl();
    let (ob, fb) = (p.addr.boff_bits, p.meta.entry_bits);
    let Ctl {
        st,
        boff,
        ent,
        code,
        ..
    } = c.clone();
    let is = |f: McFault| c.fault == Some(f);
    m.comment("Metadata slice: code lookups (read path) and updates (write path)");
    let mreq_ready_n = m.wire_decl("mreq_ready_n", 1);
    let lk_valid = m.wire("lk_valid", &(st.is("lookup") | st.is("upd")));
    let page_bits = p.entry_bits();
    let index = m.wire("meta_index", &Expr::cat(&[boff.q(), ent.q()]));
    let mcs_bits = p.mc.mcs.trailing_zeros();
    // Registered in `addr` (a lookup is at least a cycle later): the slice's tag compare
    // then starts at a flop, not behind the address generator's fan-out.
    let field = m.reg("meta_field_q", fb, None);
    m.when(&st.is("addr"), |m| {
        m.set(
            &field,
            &index.slice(mcs_bits, ob + page_bits - mcs_bits).zext(fb),
        )
    });
    let cache = m.instance(
        cache_m,
        "u_meta_slice",
        &[
            ("req_valid_i", lk_valid.clone()),
            ("req_id_i", Expr::zero(cp.id_bits)),
            ("req_field_i", field.q()),
            ("req_we_i", st.is("upd")),
            (
                "req_wdata_i",
                if is(McFault::MetaCode) {
                    code.q() ^ Expr::lit(4, 1)
                } else {
                    code.q()
                },
            ),
            ("mfill_valid_i", mfill.valid.clone()),
            ("mfill_data_i", mfill.field("data")),
            ("mfill_addr_i", mfill.field("addr")),
            ("resp_ready_i", Expr::lit(1, 1)),
            ("mreq_ready_i", mreq_ready_n.expr()),
        ],
    );
    m.drive(&mreq_ready_n, mreq_ready);
    m.unused(&Expr::cat(&[
        cache.out("resp_id_o"),
        cache.out("resp_hit_o"),
    ]));
    if mcs_bits > 0 {
        m.unused(&index.slice(0, mcs_bits));
    }
    let lk_fire = m.wire("lk_fire", &(&lk_valid & &cache.out("req_ready_o")));
    let resp_v = m.wire("meta_resp_valid", &cache.out("resp_valid_o"));
    m.when(&(&st.is("lookup") & &lk_fire), |m| st.go(m, "mwait"));
    m.when(&(&st.is("upd") & &lk_fire), |m| st.go(m, "updw"));
    m.when(&(&st.is("mwait") & &resp_v), |m| {
        m.set(&code, &cache.out("resp_data_o"));
        st.go(m, "rd_go");
    });
    m.when(&(&st.is("updw") & &resp_v), |m| st.go(m, "rsp"));
    cache
}

/// Access start: the pieces to move; the access, buddy and zero-entry counters.
/// Returns the access, buddy-access and zero-entry counts.
fn access_start(m: &mut ModuleBuilder, c: &Ctl, s: &Split) -> [Expr; 3] {
    let Split {
        dev_mask,
        bud_mask,
        is_zero,
        code_bad,
        ..
    } = s.clone();
    let Ctl {
        st,
        err_q,
        dleft,
        bleft,
        dgot,
        bgot,
        x1,
        ..
    } = c.clone();
    let is = |f: McFault| c.fault == Some(f);
    m.comment("Access start: the pieces to move; access, buddy and zero-entry counters");
    let go = m.wire("access_go", &(st.is("rd_go") | st.is("wr_go")));
    let counted = m.wire("access_counted", &(&go & &!(&st.is("rd_go") & &code_bad)));
    let bud_counted = if is(McFault::BuddyCount) {
        &bud_mask.any() & &st.is("rd_go")
    } else {
        bud_mask.any()
    };
    // Counters whose carry chains are half their width (`counter_split`), counting a cycle
    // after the access starts (their enables registered).
    let ens = [
        ("cnt_access", counted.clone()),
        ("cnt_buddy", &counted & &bud_counted),
        ("cnt_zero", &counted & &is_zero & !x1.clone()),
    ];
    let counts = ens.map(|(name, en)| {
        let en = m.reg_next(&format!("{name}_en_q"), Some(0), &en, None);
        counter_split(m, name, CNT_BITS, &en)
    });
    m.when(&counted, |m| {
        m.set(&dleft, &dev_mask);
        m.set(&bleft, &bud_mask);
        m.set(&dgot, &Expr::zero(4));
        m.set(&bgot, &Expr::zero(4));
    });
    m.when(&st.is("rd_go"), |m| {
        m.when(&code_bad, |m| {
            m.set(&err_q, &Expr::lit(1, 1));
            st.go(m, "rsp");
        })
        .otherwise(m, |m| st.go(m, "fetch"));
    });
    m.when(&st.is("wr_go"), |m| st.go(m, "wr"));
    counts
}

/// Memory requests: the lowest piece left on each channel, reads or writes.
fn memory_requests(m: &mut ModuleBuilder, c: &Ctl, pa: u32, hreq: OutPort, breq: OutPort) {
    let (hreq_ready, breq_ready) = (hreq.ready(), breq.ready());
    let Ctl {
        st,
        cst,
        dev_addr,
        bud_addr,
        dleft,
        bleft,
        x16,
        ..
    } = c.clone();
    let is = |f: McFault| c.fault == Some(f);
    let tgt_is = |t: Target| c.tgt.q().eq_lit(t.code() as u64);
    m.comment("Memory requests: the lowest piece left on each channel, reads or writes");
    let moving = m.wire("moving", &(st.is("fetch") | st.is("wr")));
    let writing = st.is("wr");
    let dsel = first_set(&dleft.q().lanes(1));
    let dk = m.wire("dev_k", &onehot_index(&dsel, 2));
    let bsel = first_set(&bleft.q().lanes(1));
    let bk = m.wire("bud_k", &onehot_index(&bsel, 2));
    let h_valid = m.wire("hreq_valid", &(&moving & &dleft.q().any()));
    let b_valid = m.wire("breq_valid", &(&moving & &bleft.q().any()));
    let h_fire = m.wire("hreq_fire", &(&h_valid & &hreq_ready));
    let b_fire = m.wire("breq_fire", &(&b_valid & &breq_ready));
    m.when(&h_fire, |m| {
        m.set(&dleft, &(dleft.q() & !Expr::cat_lsb(&dsel)))
    });
    m.when(&b_fire, |m| {
        m.set(&bleft, &(bleft.q() & !Expr::cat_lsb(&bsel)))
    });
    // Piece k: piece 0 + 32k, or the address kept for it.
    let piece = |regs: &[Reg], k: &Expr| match regs {
        [r0] => r0.q() + Expr::cat(&[k.clone(), Expr::zero(5)]).zext(pa),
        _ => mux_tree(k, &regs.iter().map(Reg::q).collect::<Vec<_>>()),
    };
    let h_addr = m.wire("hreq_addr", &piece(&dev_addr, &dk));
    let b_addr = m.wire("breq_addr", &piece(&bud_addr, &bk));
    // Write data: device sector k of the stored stream (16x: its first 8 bytes); buddy
    // piece m, stream bytes [D + 32m, D + 32m + 32) for the page's D.
    let cs = cst.q();
    let h_lane = m.wire("dev_lane", &mux_tree(&dk, &cs.lanes(PIECE_BITS)));
    let h_data = m.wire(
        "hreq_wdata",
        &if is(McFault::SlotWidth) {
            h_lane.clone()
        } else {
            x16.select(&seg(&h_lane, 0, 64).zext(PIECE_BITS), &h_lane)
        },
    );
    let mut b_terms = Vec::new();
    for t in Target::ALL.into_iter().skip(1) {
        let d = if is(McFault::BuddyOffset) && t == Target::X2 {
            8 * Target::X4.device_bytes() as u32
        } else {
            8 * t.device_bytes() as u32
        };
        let lanes: Vec<Expr> = (0..4)
            .map(|j| seg(&cs, d + PIECE_BITS * j, PIECE_BITS))
            .collect();
        let pick = m.wire(&format!("bud_wdata_{}", t.code()), &mux_tree(&bk, &lanes));
        b_terms.push(tgt_is(t).gate(&pick));
    }
    let b_data = m.wire(
        "breq_wdata",
        &crate::hdl::blocks::or_tree(b_terms, PIECE_BITS),
    );
    hreq.drive(
        m,
        &h_valid,
        &[
            ("we", writing.clone()),
            ("addr", h_addr),
            ("data", writing.gate(&h_data)),
            ("tag", dk.clone()),
            ("small", x16.clone()),
        ],
    );
    breq.drive(
        m,
        &b_valid,
        &[
            ("we", writing.clone()),
            ("addr", b_addr),
            ("data", writing.gate(&b_data)),
            ("tag", bk.clone()),
        ],
    );
}

/// Read data: pieces by tag, in any order, on both channels.
fn read_data(m: &mut ModuleBuilder, c: &Ctl, s: &Split, hrsp: Stream, brsp: Stream) {
    let Split {
        dev_mask, bud_mask, ..
    } = s.clone();
    let Ctl {
        st,
        dleft,
        bleft,
        dgot,
        bgot,
        dbuf,
        bbuf,
        x1,
        ..
    } = c.clone();
    m.comment("Read data: pieces by tag, any order, on both channels");
    let (h_tag, h_rd) = (hrsp.field("tag"), hrsp.field("data"));
    let (b_tag, b_rd) = (brsp.field("tag"), brsp.field("data"));
    for j in 0..4u32 {
        m.when(&(&hrsp.valid & &h_tag.eq_lit(j as u64)), |m| {
            m.set(&dbuf[j as usize], &h_rd)
        });
        m.when(&(&brsp.valid & &b_tag.eq_lit(j as u64)), |m| {
            m.set(&bbuf[j as usize], &b_rd)
        });
    }
    let onehot = |t: &Expr| Expr::cat_lsb(&(0..4).map(|j| t.eq_lit(j)).collect::<Vec<_>>());
    m.when(&hrsp.valid, |m| m.set(&dgot, &(dgot.q() | onehot(&h_tag))));
    m.when(&brsp.valid, |m| m.set(&bgot, &(bgot.q() | onehot(&b_tag))));
    hrsp.accept(m, &Expr::lit(1, 1));
    brsp.accept(m, &Expr::lit(1, 1));
    let sent = m.wire("sent", &(&!dleft.q().any() & &!bleft.q().any()));
    // The size mapper's masks hold through the fetch (code and target do not change).
    let fetched = m.wire(
        "fetched",
        &(&sent & &(&dgot.q().eq(&dev_mask) & &bgot.q().eq(&bud_mask))),
    );
    m.when(&(&st.is("fetch") & &fetched), |m| st.go(m, "dec"));
    m.when(&(&st.is("wr") & &sent), |m| {
        m.when(&x1, |m| st.go(m, "rsp"))
            .otherwise(m, |m| st.go(m, "upd"));
    });
}

/// The stored stream in stream order, decompressed.
fn decompress(m: &mut ModuleBuilder, c: &Ctl, s: &Split, dec_m: &Arc<Module>) {
    let ew = bpc::ENTRY_BITS;
    let Split {
        is_zero, is_raw, ..
    } = s.clone();
    let Ctl {
        st,
        rbuf,
        code,
        err_q,
        dbuf,
        bbuf,
        ..
    } = c.clone();
    let tgt_is = |t: Target| c.tgt.q().eq_lit(t.code() as u64);
    m.comment("The stored stream in stream order: device bytes [0, D), then the buddy pieces");
    let d = |k: usize| dbuf[k].q();
    let b = |k: usize| bbuf[k].q();
    let stored_by_target = [
        (Target::X1, Expr::cat(&[d(3), d(2), d(1), d(0)])),
        (Target::X4_3, Expr::cat(&[b(0), d(2), d(1), d(0)])),
        (Target::X2, Expr::cat(&[b(1), b(0), d(1), d(0)])),
        (Target::X4, Expr::cat(&[b(2), b(1), b(0), d(0)])),
        (
            Target::X16,
            Expr::cat(&[b(3).slice(0, 192), b(2), b(1), b(0), d(0).slice(0, 64)]),
        ),
    ];
    // At 16x the stream ends 8 bytes into the last buddy piece's slot (128 = 8 + 3 x 32 + 24).
    m.unused(&b(3).slice(192, 64));
    let stored = m.wire(
        "stored",
        &crate::hdl::blocks::or_tree(
            stored_by_target
                .iter()
                .map(|(t, v)| tgt_is(*t).gate(v))
                .collect(),
            ew,
        ),
    );
    // The stream is kept in `rbuf` while the pieces arrive (complete in the cycle `fetch`
    // ends): the decoder reads a register, not the target's select.
    m.when(&st.is("fetch"), |m| m.set(&rbuf, &stored));
    // Zero and raw entries skip the decoder; the flag is registered (the code is known
    // cycles before `dec`), so the decoder's valid, which selects its stream registers, is a
    // state decode and a flop.
    let skip = m.reg_next("dec_skip_q", None, &(&is_zero | &is_raw), None);
    let dec = m.instance(
        dec_m,
        "u_bpc_dec",
        &[
            ("s_valid_i", &st.is("dec") & &!skip),
            ("s_stream_i", rbuf.q()),
            ("s_size_i", code.q()),
            ("m_ready_i", st.is("decw")),
        ],
    );
    m.when(&st.is("dec"), |m| {
        m.when(&is_zero, |m| {
            m.set(&rbuf, &Expr::zero(ew));
            st.go(m, "post");
        })
        .elsewhen(m, &is_raw, |m| st.go(m, "post"))
        .elsewhen(m, &dec.out("s_ready_o"), |m| st.go(m, "decw"));
    });
    m.when(&(&st.is("decw") & &dec.out("m_valid_o")), |m| {
        m.set(&rbuf, &dec.out("m_blk_o"));
        m.set(&err_q, &dec.out("m_err_o"));
        st.go(m, "post");
    });
}

/// After a read: respond, or merge the written sectors and write (read-modify-write).
fn rmw(m: &mut ModuleBuilder, c: &Ctl) {
    let Ctl {
        st,
        wr,
        mask,
        wbuf,
        rbuf,
        cst,
        err_q,
        x1,
        ..
    } = c.clone();
    let is = |f: McFault| c.fault == Some(f);
    m.comment("After a read: respond, or merge the written sectors and write (RMW)");
    let merged = m.wire(
        "merged",
        &Expr::cat_lsb(
            &(0..4)
                .map(|k| {
                    let sel = if is(McFault::RmwMerge) && k == 0 {
                        Expr::zero(1)
                    } else {
                        mask.q().bit(k)
                    };
                    sel.select(
                        &wbuf.q().slice(PIECE_BITS * k, PIECE_BITS),
                        &rbuf.q().slice(PIECE_BITS * k, PIECE_BITS),
                    )
                })
                .collect::<Vec<_>>(),
        ),
    );
    m.when(&st.is("post"), |m| {
        m.when(&(&wr.q() & &!err_q.q()), |m| {
            m.set(&wbuf, &merged);
            m.set(&cst, &merged);
            m.when(&x1, |m| st.go(m, "wr_go"))
                .otherwise(m, |m| st.go(m, "comp"));
        })
        .otherwise(m, |m| st.go(m, "rsp"));
    });
}

/// The write path: compress, then the pieces, then the code.
fn compress(m: &mut ModuleBuilder, c: &Ctl, comp_m: &Arc<Module>) {
    let Ctl {
        st,
        wbuf,
        cst,
        code,
        ..
    } = c.clone();
    m.comment("Write path: compress, then the pieces, then the code");
    let comp = m.instance(
        comp_m,
        "u_bpc_comp",
        &[
            ("s_valid_i", st.is("comp")),
            ("s_blk_i", wbuf.q()),
            ("m_ready_i", st.is("compw")),
        ],
    );
    m.unused(&Expr::cat(&[comp.out("m_nbits_o"), comp.out("m_raw_o")]));
    m.when(&(&st.is("comp") & &comp.out("s_ready_o")), |m| {
        st.go(m, "compw")
    });
    m.when(&(&st.is("compw") & &comp.out("m_valid_o")), |m| {
        m.set(&cst, &comp.out("m_stream_o"));
        m.set(&code, &comp.out("m_size_o"));
        st.go(m, "wr_go");
    });
}
