//! `mc_comp_top` (docs/FORMATS.md, PACT'12 §3, §6 item 9): one memory controller's
//! compression path, from the SM/DMA side to DRAM, around the PACT'12 units.
//!
//! Requests are handled one at a time, in order (the transaction-level model
//! [`crate::model::cpack_lossy::mc::Mc`] step for step):
//! * `g_rd`: MD lookup; on a hit `N` chunks are fetched; on a miss the read goes out at once
//!   as the raw chunk count while the MD line is fetched on the MD channel (the data waits
//!   in the chunk buffer for the entry); the first `N` chunks go through the decompressor
//!   and the restore unit, 16 B per beat, to the response channel;
//! * `g_wr`, full: compressed with the request's `tcode` (a tagged DMA copy) or, without
//!   one, with the block's sticky `tcode` from an MD read lookup; the chunks are written,
//!   then the MD entry is updated through the cache; one acknowledgement beat;
//! * `g_wr`, partial (read-modify-write): the read path, the restored beats merged under
//!   the byte mask into the write buffer, then the write path with the entry's `tcode`;
//! * `l_rd` / `l_wr`: the local region, 8 raw chunks, no MD (the `l_*` bypass; a local read
//!   passes the decompressor and restore units as a raw `t = 0` block).
//!
//! Channels: `sm` (request beats: a read is one beat, a write `block_bytes/16` beats of
//! data and byte mask), `rsp` (8 data beats per read, one beat per write), `dreq`/`dresp`
//! (DRAM data: one 16 B chunk per request beat, `addr = {local, blk, chunk}`, reads answered
//! in any order with their chunk index as tag), `mdreq`/`mdresp` (the MD cache's line reads
//! and write-backs on their own channel, so the DRAM scheduler can serve them first; the MD
//! channel is never held behind data). The MD cache's hit/miss/merge counters are outputs.
//!
//! Queues of Table 2 ([`McQueueParams`]): request beats queue in front (`pre_compQ`, 16
//! beats of 16 B = 32 × 8 B) and response beats behind (`*_respQ`, 32 × 16 B); inside, the
//! one request in progress has one block of write buffer and one block of chunk buffer
//! (`pre_decompQ`, filled in any order). Requests do not overlap inside the controller.

use super::mc::{md_decode, md_encode};
use super::{compressor, decompressor, err, header, trunc_pack, unpack_restore, LossyRtlParams};
use crate::hdl::blocks::{all_of, mux_tree};
use crate::hdl::stream::{self, Layout, Stream};
use crate::hdl::{clog2, Expr, Fsm, HdlError, Inst, Module, ModuleBuilder, Reg};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Queue depths of `mc_comp_top` (`cpack_lossy: {queues: {...}}`), in beats; 0 = none.
/// Defaults after Table 2: `pre_compQ` 32 × 8 B = 16 request beats of 16 B, `*_respQ`
/// 32 × 16 B = 32 response beats.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McQueueParams {
    /// Request beats queued in front of the controller (`pre_compQ`).
    pub req_beats: u32,
    /// Response beats queued behind it (`*_respQ`).
    pub rsp_beats: u32,
}

impl Default for McQueueParams {
    fn default() -> Self {
        McQueueParams {
            req_beats: 16,
            rsp_beats: 32,
        }
    }
}

impl McQueueParams {
    /// Checks the depths: 0 or a power of two up to 1024.
    pub fn validate(&self) -> Result<(), String> {
        for (n, v) in [("req_beats", self.req_beats), ("rsp_beats", self.rsp_beats)] {
            if v != 0 && (!v.is_power_of_two() || v > 1024) {
                return Err(format!(
                    "queues.{n} = {v} (0 for none, or a power of two up to 1024)"
                ));
            }
        }
        Ok(())
    }
}

/// SM request opcodes (`sm_op`).
pub const OP_G_RD: u64 = 0;
/// Global write (full or partial by the byte masks).
pub const OP_G_WR: u64 = 1;
/// Local-region read.
pub const OP_L_RD: u64 = 2;
/// Local-region write.
pub const OP_L_WR: u64 = 3;

/// Width of the response's chunk count (a read-modify-write moves up to twice the raw
/// chunk count, at most 8 + 8).
pub const CHUNKS_BITS: u32 = 5;

/// `cpack_lossy_mc`: see the module documentation.
pub fn mc_top(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let c = &p.codec;
    let cp = p.md_cache.rtl(c.md_bits);
    let subs = Subs {
        cache: crate::rtl::cache::cache(&cp)?,
        trunc: trunc_pack(p)?,
        comp: compressor(p)?,
        dec: decompressor(p)?,
        rest: unpack_restore(p)?,
    };
    let bw = cp.field_addr_bits;
    let nraw = c.raw_chunks() as u32;
    let cb = clog2(nraw as u64).max(1);
    let chw = CHUNKS_BITS;
    let sbits = cp.cache.sector_bytes * 8;
    let saw = cp.sector_addr_bits();
    let mut name = format!("cpack_lossy_mc_{}", p.tag());
    if p.md_cache != super::mc::MdCacheParams::default() || c.md_bits != 8 {
        name += &format!("_{}", cp.name_tag());
    }
    if p.queues != McQueueParams::default() {
        name += &format!("_q{}x{}", p.queues.req_beats, p.queues.rsp_beats);
    }
    let mut m = ModuleBuilder::new(name);
    header(
        &mut m,
        "mc_top::mc_top",
        p,
        "§3 (read/write paths, MD miss, RMW, l_* bypass), §6 items 6-9",
    );
    m.header(format!("MD cache: {}", p.md_cache.describe(c.md_bits)));
    m.header("One request at a time, in order; MD lines on their own channel");

    // ---- Ports ----
    let sm_port = stream::input(
        &mut m,
        "sm",
        &Layout::new(&[
            ("op", 2),
            ("blk", bw),
            ("tcode_v", 1),
            ("tcode", 2),
            ("mask", 16),
            ("data", 128),
            ("last", 1),
        ]),
    );
    let q = &p.queues;
    let sm = if q.req_beats > 0 {
        m.comment("pre_compQ: request beats queue in front of the controller");
        stream::fifo(&mut m, "pre_compq", q.req_beats, sm_port)
    } else {
        sm_port
    };
    let dresp = stream::input(&mut m, "dresp", &Layout::new(&[("data", 128), ("tag", cb)]));
    let mdresp = stream::input(
        &mut m,
        "mdresp",
        &Layout::new(&[("data", sbits), ("addr", saw)]),
    );
    let rsp_q_ready = m.wire_decl("rsp_ready_int", 1);
    let rsp_ready = rsp_q_ready.expr();
    let dreq = stream::output_port(&mut m, "dreq");
    let dreq_ready = dreq.ready();
    let mdreq = stream::output_port(&mut m, "mdreq");
    let mdreq_ready = mdreq.ready();

    let t = state(&mut m, p, bw, cb);
    let taking = requests(&mut m, &t, &sm);
    dispatch(&mut m, &t);
    let cache = metadata(&mut m, &t, p, &subs.cache, &mdresp, &mdreq_ready);
    let dq = dram_requests(&mut m, &t, &subs, &dreq_ready);
    chunk_buffer(&mut m, &t, &dresp, &dq.fetch_fire);
    let r = read_path(&mut m, &t, &subs, &rsp_ready, &dq.fetching);

    // ---- Responses ----
    m.comment("Responses: read beats from the restore unit, one acknowledgement per write");
    let st = &t.st;
    let ack = st.is("ack");
    let rsp_valid = m.wire(
        "rsp_valid",
        &(&ack | &(&(&st.is("read") & &!t.rmw.clone()) & &(&r.valid & &!t.rdone.q()))),
    );
    m.when(&(&ack & &rsp_ready), |m| st.go(m, "idle"));
    let rsp_chunks = ack.select(&t.ack_chunks.q(), &t.fetched.q().zext(chw));

    sm.accept(&mut m, &taking);
    dresp.accept(&mut m, &Expr::lit(1, 1));
    mdresp.accept(&mut m, &cache.out("mfill_ready_o"));
    let rsp_fields = [
        ("data", ack.select(&Expr::zero(128), &r.data)),
        ("last", &ack | &r.last),
        ("err", &!ack.clone() & &r.err),
        ("write", ack.clone()),
        ("md_hit", t.hit.q()),
        ("chunks", rsp_chunks),
    ];
    let rsp_l = Layout::new(
        &rsp_fields
            .iter()
            .map(|(n, e)| (*n, e.width()))
            .collect::<Vec<_>>(),
    );
    let rsp_int = stream::Stream::new(
        &mut m,
        "rsp_int",
        &rsp_valid,
        &rsp_l.pack(&rsp_fields),
        &rsp_l,
    );
    m.drive(&rsp_q_ready, &rsp_int.ready());
    let rsp_out = if q.rsp_beats > 0 {
        m.comment("respQ: response beats queue behind the controller");
        stream::fifo(&mut m, "respq", q.rsp_beats, rsp_int)
    } else {
        rsp_int
    };
    stream::output(&mut m, "rsp", rsp_out);
    dreq.drive(
        &mut m,
        &dq.valid,
        &[
            ("we", dq.we),
            ("addr", Expr::cat(&[dq.local, t.blk.q(), dq.chunk.clone()])),
            ("data", dq.data),
            ("tag", dq.chunk),
        ],
    );
    mdreq.drive(
        &mut m,
        &cache.out("mreq_valid_o"),
        &[
            ("we", cache.out("mreq_we_o")),
            ("addr", cache.out("mreq_addr_o")),
            ("data", cache.out("mreq_wdata_o")),
        ],
    );
    m.output_expr("md_hits_o", &cache.out("cnt_hits_o"));
    m.output_expr("md_misses_o", &cache.out("cnt_misses_o"));
    m.output_expr("md_merges_o", &cache.out("cnt_merges_o"));
    m.finish()
}

/// The units `mc_comp_top` instantiates.
struct Subs {
    cache: Arc<Module>,
    trunc: Arc<Module>,
    comp: Arc<Module>,
    dec: Arc<Module>,
    rest: Arc<Module>,
}

/// The request in progress: the FSM, the request's registers, the write and chunk buffers,
/// the MD entry and the counters of each path, with the decodes every section reads.
struct Top {
    st: Fsm,
    /// Raw chunks per block, their index width, 16 B beats per block.
    nraw: u32,
    cb: u32,
    nw4: u32,
    /// Beats into the truncation unit per block, and the bits of one.
    nfeed: u32,
    feed_lane: u32,
    op: Reg,
    blk: Reg,
    tcv: Reg,
    tc_in: Reg,
    beat: Reg,
    wbuf: Vec<Reg>,
    wmask: Vec<Reg>,
    rbuf: Vec<Reg>,
    rv: Reg,
    hit: Reg,
    miss: Reg,
    known: Reg,
    ent_c: Reg,
    ent_n: Reg,
    ent_tc: Reg,
    fleft: Reg,
    fidx: Reg,
    fetched: Reg,
    outst: Reg,
    feed: Reg,
    feed_done: Reg,
    rdone: Reg,
    merge: Reg,
    tfeed: Reg,
    tdone: Reg,
    wchunk: Reg,
    tc: Reg,
    cc: Reg,
    cn: Reg,
    ack_chunks: Reg,
    is_gwr: Expr,
    is_lrd: Expr,
    is_lwr: Expr,
    full: Expr,
    rmw: Expr,
    read_like: Expr,
}

/// The request state and its decodes.
fn state(m: &mut ModuleBuilder, p: &LossyRtlParams, bw: u32, cb: u32) -> Top {
    let c = &p.codec;
    let nraw = c.raw_chunks() as u32;
    let nw4 = c.words() as u32 / 4;
    let k = p.words_per_cycle as u32;
    let nfeed = c.words() as u32 / k;
    let fw = clog2(nfeed as u64).max(1);
    m.comment("Request state: opcode, block, write buffer (pre_compQ) and chunk buffer");
    let st = m.fsm(
        "state_q",
        &[
            "idle", "recv", "dispatch", "lookup", "mdwait", "read", "comp", "upd", "updwait",
            "lwrite", "ack",
        ],
    );
    let op = m.reg("op_q", 2, None);
    let blk = m.reg("blk_q", bw, None);
    let tcv = m.reg("tcode_v_q", 1, None);
    let tc_in = m.reg("tcode_in_q", 2, None);
    let beat = m.reg("beat_q", cb, Some(0));
    let wbuf: Vec<_> = (0..nw4)
        .map(|b| m.reg(&format!("wbuf{}_q", b), 128, None))
        .collect();
    let wmask: Vec<_> = (0..nw4)
        .map(|b| m.reg(&format!("wmask{}_q", b), 16, None))
        .collect();
    let rbuf: Vec<_> = (0..nraw)
        .map(|j| m.reg(&format!("rbuf{}_q", j), 128, None))
        .collect();
    let rv = m.reg("rbuf_valid_q", nraw, Some(0));
    let hit = m.reg("md_hit_q", 1, None);
    let miss = m.reg("md_miss_q", 1, Some(0));
    let known = m.reg("ent_known_q", 1, Some(0));
    let ent_c = m.reg("ent_c_q", 1, None);
    let ent_n = m.reg("ent_n_q", 4, None);
    let ent_tc = m.reg("ent_tcode_q", 2, None);
    let fleft = m.reg("fetch_left_q", 4, Some(0));
    let fidx = m.reg("fetch_idx_q", cb, None);
    let fetched = m.reg("fetched_q", 4, None);
    let outst = m.reg("outstanding_q", 4, Some(0));
    let feed = m.reg("feed_q", cb, None);
    let feed_done = m.reg("feed_done_q", 1, None);
    let rdone = m.reg("read_done_q", 1, None);
    let merge = m.reg("merge_q", cb, None);
    let tfeed = m.reg("tfeed_q", fw, None);
    let tdone = m.reg("tfeed_done_q", 1, None);
    let wchunk = m.reg("wchunk_q", cb, None);
    let tc = m.reg("tcode_q", 2, None);
    let cc = m.reg("comp_c_q", 1, None);
    let cn = m.reg("comp_n_q", 4, None);
    let ack_chunks = m.reg("ack_chunks_q", CHUNKS_BITS, None);

    let is_grd = m.wire("is_g_rd", &op.q().eq_lit(OP_G_RD));
    let is_gwr = m.wire("is_g_wr", &op.q().eq_lit(OP_G_WR));
    let is_lrd = m.wire("is_l_rd", &op.q().eq_lit(OP_L_RD));
    let is_lwr = m.wire("is_l_wr", &op.q().eq_lit(OP_L_WR));
    let full = m.wire(
        "full_write",
        &all_of(
            &wmask
                .iter()
                .map(|r| r.q().eq(&Expr::ones(16)))
                .collect::<Vec<_>>(),
        ),
    );
    let rmw = m.wire("rmw", &(&is_gwr & &!full.clone()));
    let read_like = m.wire("read_like", &(&is_grd | &rmw));
    Top {
        st,
        nraw,
        cb,
        nw4,
        nfeed,
        feed_lane: 32 * k,
        op,
        blk,
        tcv,
        tc_in,
        beat,
        wbuf,
        wmask,
        rbuf,
        rv,
        hit,
        miss,
        known,
        ent_c,
        ent_n,
        ent_tc,
        fleft,
        fidx,
        fetched,
        outst,
        feed,
        feed_done,
        rdone,
        merge,
        tfeed,
        tdone,
        wchunk,
        tc,
        cc,
        cn,
        ack_chunks,
        is_gwr,
        is_lrd,
        is_lwr,
        full,
        rmw,
        read_like,
    }
}

/// SM request beats into the request registers and the write buffer; returns when the
/// controller takes a beat (idle or receiving).
fn requests(m: &mut ModuleBuilder, t: &Top, sm: &Stream) -> Expr {
    m.comment("SM requests: a read is one beat, a write one beat per 16 B with its byte mask");
    let (st, cb) = (&t.st, t.cb);
    let taking = m.wire("sm_taking", &(st.is("idle") | st.is("recv")));
    let sm_fire = m.wire("sm_fire", &(&sm.valid & &taking));
    let wpos = m.wire(
        "sm_beat",
        &st.is("idle").select(&Expr::zero(cb), &t.beat.q()),
    );
    m.when(&(&sm_fire & &st.is("idle")), |m| {
        m.set(&t.op, &sm.field("op"));
        m.set(&t.blk, &sm.field("blk"));
        m.set(&t.tcv, &sm.field("tcode_v"));
        m.set(&t.tc_in, &sm.field("tcode"));
    });
    let (sm_mask, sm_data) = (sm.field("mask"), sm.field("data"));
    for b in 0..t.nw4 {
        let here = &sm_fire & &wpos.eq_lit(b as u64);
        m.when(&here, |m| {
            m.set(&t.wbuf[b as usize], &sm_data);
            m.set(&t.wmask[b as usize], &sm_mask);
        });
    }
    m.when(&sm_fire, |m| {
        m.set(&t.beat, &(wpos.clone() + Expr::lit(cb, 1)));
        m.when(&sm.field("last"), |m| st.go(m, "dispatch"))
            .otherwise(m, |m| st.go(m, "recv"));
    });
    taking
}

/// A received request: the path's counters cleared, then local traffic bypasses MD and a
/// tagged full write skips the MD read.
fn dispatch(m: &mut ModuleBuilder, t: &Top) {
    m.comment("Dispatch: local traffic bypasses MD; a tagged full write skips the MD read");
    let (st, cb, nraw) = (&t.st, t.cb, t.nraw);
    m.when(&st.is("dispatch"), |m| {
        m.set(&t.rv, &Expr::zero(nraw));
        m.set(&t.miss, &Expr::zero(1));
        m.set(&t.known, &Expr::zero(1));
        m.set(&t.feed, &Expr::zero(cb));
        m.set(&t.feed_done, &Expr::zero(1));
        m.set(&t.rdone, &Expr::zero(1));
        m.set(&t.merge, &Expr::zero(cb));
        m.set(&t.fidx, &Expr::zero(cb));
        m.set(&t.fetched, &Expr::zero(4));
        m.set(&t.tfeed, &Expr::zero(t.tfeed.width()));
        m.set(&t.tdone, &Expr::zero(1));
        m.set(&t.wchunk, &Expr::zero(cb));
        m.set(&t.beat, &Expr::zero(cb));
        m.when(&t.is_lrd, |m| {
            m.set(&t.hit, &Expr::zero(1));
            m.set(&t.known, &Expr::lit(1, 1));
            m.set(&t.ent_c, &Expr::zero(1));
            m.set(&t.ent_n, &Expr::lit(4, nraw as u64));
            m.set(&t.ent_tc, &Expr::zero(2));
            m.set(&t.fleft, &Expr::lit(4, nraw as u64));
            m.set(&t.fetched, &Expr::lit(4, nraw as u64));
            st.go(m, "read");
        })
        .elsewhen(m, &t.is_lwr, |m| st.go(m, "lwrite"))
        .elsewhen(m, &(&(&t.is_gwr & &t.full) & &t.tcv.q()), |m| {
            m.set(&t.hit, &Expr::lit(1, 1));
            m.set(&t.tc, &t.tc_in.q());
            st.go(m, "comp");
        })
        .otherwise(m, |m| st.go(m, "lookup"));
    });
}

/// The MD cache instance: lookups and updates from the FSM, MD lines on their own channel,
/// the entry of a lookup into the request's registers.
fn metadata(
    m: &mut ModuleBuilder,
    t: &Top,
    p: &LossyRtlParams,
    cache_m: &Arc<Module>,
    mdresp: &Stream,
    mdreq_ready: &Expr,
) -> Inst {
    let c = &p.codec;
    let cp = p.md_cache.rtl(c.md_bits);
    let (st, nraw) = (&t.st, t.nraw);
    m.comment("MD cache (md_cache + md_mshr): lookups from the FSM, lines on the MD channel");
    let mdreq_ready_n = m.wire_decl("mdreq_ready_n", 1);
    let lk_valid = m.wire("lk_valid", &(st.is("lookup") | st.is("upd")));
    let entry_e = md_encode(m, c, &t.cc.q(), &t.cn.q(), &t.tc.q());
    let entry_w = m.wire("entry_new", &entry_e);
    let cache = m.instance(
        cache_m,
        "u_md_cache",
        &[
            ("req_valid_i", lk_valid.clone()),
            ("req_id_i", Expr::zero(cp.id_bits)),
            ("req_field_i", t.blk.q()),
            ("req_we_i", st.is("upd")),
            ("req_wdata_i", entry_w),
            ("mfill_valid_i", mdresp.valid.clone()),
            ("mfill_data_i", mdresp.field("data")),
            ("mfill_addr_i", mdresp.field("addr")),
            ("resp_ready_i", Expr::lit(1, 1)),
            ("mreq_ready_i", mdreq_ready_n.expr()),
        ],
    );
    m.drive(&mdreq_ready_n, mdreq_ready);
    let lk_fire = m.wire("lk_fire", &(&lk_valid & &cache.out("req_ready_o")));
    let resp_v = m.wire("md_resp_valid", &cache.out("resp_valid_o"));
    m.unused(&cache.out("resp_id_o"));
    let md_rd = m.wire(
        "md_line_read",
        &(&(&cache.out("mreq_valid_o") & mdreq_ready) & &!cache.out("mreq_we_o")),
    );
    m.when(&(&st.is("lookup") & &lk_fire), |m| st.go(m, "mdwait"));
    m.when(&(&st.is("upd") & &lk_fire), |m| st.go(m, "updwait"));
    m.when(&(&st.is("updwait") & &resp_v), |m| {
        let chw = CHUNKS_BITS;
        m.set(
            &t.ack_chunks,
            &(t.fetched.q().zext(chw) + t.cn.q().zext(chw)),
        );
        st.go(m, "ack");
    });
    let f = md_decode(m, c, &cache.out("resp_data_o"));
    let raw_n = Expr::lit(4, nraw as u64);
    m.comment("MD read: a miss sends the read out at once as the raw chunk count");
    m.when(&st.is("mdwait"), |m| {
        m.when(&(&(&md_rd & &t.read_like) & &!t.miss.q()), |m| {
            m.set(&t.miss, &Expr::lit(1, 1));
            m.set(&t.fleft, &raw_n);
            m.set(&t.fetched, &raw_n);
        });
        m.when(&resp_v, |m| {
            m.set(&t.hit, &cache.out("resp_hit_o"));
            m.set(&t.known, &Expr::lit(1, 1));
            m.set(&t.ent_c, &f.c);
            m.set(&t.ent_n, &f.n);
            m.set(&t.ent_tc, &f.tcode);
            m.set(&t.tc, &f.tcode);
            m.when(&t.read_like, |m| {
                m.when(&!t.miss.q(), |m| {
                    m.set(&t.fleft, &f.n);
                    m.set(&t.fetched, &f.n);
                });
                st.go(m, "read");
            })
            .otherwise(m, |m| st.go(m, "comp"));
        });
    });
    cache
}

/// The DRAM request channel's beat, from one source at a time.
struct DramReq {
    valid: Expr,
    we: Expr,
    chunk: Expr,
    local: Expr,
    data: Expr,
    /// Chunk reads are going out.
    fetching: Expr,
    /// A chunk read goes out this cycle.
    fetch_fire: Expr,
}

/// DRAM requests: chunk reads, the compressed chunks of a write (the truncation unit and
/// the compressor fed from the write buffer), or the raw chunks of a local write.
fn dram_requests(m: &mut ModuleBuilder, t: &Top, s: &Subs, dreq_ready: &Expr) -> DramReq {
    m.comment("DRAM requests: chunk reads, compressed chunks, local chunks (one source at a time)");
    let (st, cb, nraw) = (&t.st, t.cb, t.nraw);
    let fw = t.tfeed.width();
    let fetching = m.wire("fetching", &t.fleft.q().ne(&Expr::zero(4)));
    let comp_ready_n = m.wire_decl("comp_m_ready", 1);
    let trunc_ready_n = m.wire_decl("trunc_m_ready", 1);
    let words_all = Expr::cat_lsb(&t.wbuf.iter().map(|r| r.q()).collect::<Vec<_>>());
    let feed_words = mux_tree(&t.tfeed.q(), &words_all.lanes(t.feed_lane));
    let trunc = m.instance(
        &s.trunc,
        "u_trunc",
        &[
            ("s_valid_i", &st.is("comp") & &!t.tdone.q()),
            ("s_data_i", feed_words),
            ("s_tcode_i", t.tc.q()),
            ("m_ready_i", trunc_ready_n.expr()),
        ],
    );
    let comp = m.instance(
        &s.comp,
        "u_comp",
        &[
            ("s_valid_i", trunc.out("m_valid_o")),
            ("s_data_i", trunc.out("m_data_o")),
            ("s_last_i", trunc.out("m_last_o")),
            ("s_tcode_i", trunc.out("m_tcode_o")),
            ("m_ready_i", comp_ready_n.expr()),
        ],
    );
    m.drive(&trunc_ready_n, &comp.out("s_ready_o"));
    m.unused(&Expr::cat(&[comp.out("m_bits_o"), comp.out("m_tcode_o")]));
    let tfire = m.wire(
        "tfeed_fire",
        &(&(&st.is("comp") & &!t.tdone.q()) & &trunc.out("s_ready_o")),
    );
    m.when(&tfire, |m| {
        m.set(&t.tfeed, &(t.tfeed.q() + Expr::lit(fw, 1)));
        m.when(&t.tfeed.q().eq_lit(t.nfeed as u64 - 1), |m| {
            m.set(&t.tdone, &Expr::lit(1, 1))
        });
    });
    let comp_v = m.wire("comp_valid", &(&st.is("comp") & &comp.out("m_valid_o")));
    let lw_v = st.is("lwrite");
    let dq_valid = m.wire("dreq_valid", &(&(&fetching | &comp_v) | &lw_v));
    let dq_we = m.wire("dreq_we", &!fetching.clone());
    let dq_chunk = m.wire(
        "dreq_chunk",
        &fetching.select(&t.fidx.q(), &comp_v.select(&t.wchunk.q(), &t.beat.q())),
    );
    let dq_local = m.wire("dreq_local", &(&t.is_lrd | &t.is_lwr));
    let lw_data = mux_tree(
        &t.beat.q(),
        &t.wbuf.iter().map(|r| r.q()).collect::<Vec<_>>(),
    );
    let dq_data = m.wire(
        "dreq_data",
        &comp_v.select(
            &comp.out("m_chunk_o"),
            &fetching.select(&Expr::zero(128), &lw_data),
        ),
    );
    let dq_fire = m.wire("dreq_fire", &(&dq_valid & dreq_ready));
    m.drive(&comp_ready_n, &(&st.is("comp") & dreq_ready));
    let fetch_fire = m.wire("fetch_fire", &(&dq_fire & &fetching));
    m.when(&fetch_fire, |m| {
        m.set(&t.fleft, &(t.fleft.q() - Expr::lit(4, 1)));
        m.set(&t.fidx, &(t.fidx.q() + Expr::lit(cb, 1)));
    });
    m.when(&(&dq_fire & &comp_v), |m| {
        m.set(&t.wchunk, &(t.wchunk.q() + Expr::lit(cb, 1)));
        m.when(&comp.out("m_last_o"), |m| {
            m.set(&t.cc, &comp.out("m_c_o"));
            m.set(&t.cn, &comp.out("m_n_o"));
            st.go(m, "upd");
        });
    });
    m.when(&(&dq_fire & &lw_v), |m| {
        m.set(&t.beat, &(t.beat.q() + Expr::lit(cb, 1)));
        m.when(&t.beat.q().eq_lit(nraw as u64 - 1), |m| {
            m.set(&t.hit, &Expr::zero(1));
            m.set(&t.ack_chunks, &Expr::lit(CHUNKS_BITS, nraw as u64));
            st.go(m, "ack");
        });
    });
    DramReq {
        valid: dq_valid,
        we: dq_we,
        chunk: dq_chunk,
        local: dq_local,
        data: dq_data,
        fetching,
        fetch_fire,
    }
}

/// DRAM read data into the chunk buffer by its chunk tag, in any order; the count of reads
/// outstanding.
fn chunk_buffer(m: &mut ModuleBuilder, t: &Top, dresp: &Stream, fetch_fire: &Expr) {
    m.comment("DRAM read data: chunk `tag` into the chunk buffer (pre_decompQ), any order");
    let nraw = t.nraw;
    let dr_fire = m.wire("dresp_fire", &dresp.valid.clone());
    let dr_tag = dresp.field("tag");
    let dr_data = dresp.field("data");
    for j in 0..nraw {
        let here = &dr_fire & &dr_tag.eq_lit(j as u64);
        m.when(&here, |m| m.set(&t.rbuf[j as usize], &dr_data));
    }
    let tag_onehot = Expr::cat_lsb(
        &(0..nraw)
            .map(|j| dr_tag.eq_lit(j as u64))
            .collect::<Vec<_>>(),
    );
    m.when(&dr_fire, |m| m.set(&t.rv, &(t.rv.q() | tag_onehot)));
    let inc = fetch_fire.zext(4);
    let dec = dr_fire.zext(4);
    m.when(&(fetch_fire | &dr_fire), |m| {
        m.set(&t.outst, &(t.outst.q() + inc - dec));
    });
}

/// The restore unit's output beat.
struct Restored {
    valid: Expr,
    data: Expr,
    last: Expr,
    err: Expr,
}

/// The read path: buffered chunks in order into the decompressor and the restore unit;
/// restored beats to the response, or merged under the byte mask into the write buffer (a
/// read-modify-write).
fn read_path(
    m: &mut ModuleBuilder,
    t: &Top,
    s: &Subs,
    rsp_ready: &Expr,
    fetching: &Expr,
) -> Restored {
    m.comment("Read path: chunks in order into the decompressor, restored beats out");
    let (st, cb) = (&t.st, t.cb);
    let rsp_ready_n = m.wire_decl("rest_m_ready", 1);
    let cur_chunk = mux_tree(
        &t.feed.q(),
        &t.rbuf.iter().map(|r| r.q()).collect::<Vec<_>>(),
    );
    let rv_cur = mux_tree(&t.feed.q(), &t.rv.q().lanes(1));
    let d_valid = m.wire(
        "dec_valid",
        &(&(&(&st.is("read") & &t.known.q()) & &!t.feed_done.q()) & &rv_cur),
    );
    let d_last = m.wire(
        "dec_last",
        &t.feed.q().zext(4).eq(&(t.ent_n.q() - Expr::lit(4, 1))),
    );
    let rest_ready_n = m.wire_decl("dec_m_ready", 1);
    let dec = m.instance(
        &s.dec,
        "u_decomp",
        &[
            ("s_valid_i", d_valid.clone()),
            ("s_chunk_i", cur_chunk),
            ("s_last_i", d_last.clone()),
            ("s_c_i", t.ent_c.q()),
            ("s_tcode_i", t.ent_tc.q()),
            ("m_ready_i", rest_ready_n.expr()),
        ],
    );
    let rest = m.instance(
        &s.rest,
        "u_restore",
        &[
            ("s_valid_i", dec.out("m_valid_o")),
            ("s_words_i", dec.out("m_words_o")),
            ("s_last_i", dec.out("m_last_o")),
            ("s_err_i", dec.out("m_err_o")),
            ("s_c_i", t.ent_c.q()),
            ("s_tcode_i", t.ent_tc.q()),
            ("m_ready_i", rsp_ready_n.expr()),
        ],
    );
    m.drive(&rest_ready_n, &rest.out("s_ready_o"));
    // The restore unit takes the block's `c` and `tcode` from the MD entry, as the
    // decompressor does; the copies the decompressor passes on are not needed here.
    m.unused(&dec.out("m_c_o"));
    m.unused(&dec.out("m_tcode_o"));
    let d_fire = m.wire("dec_fire", &(&d_valid & &dec.out("s_ready_o")));
    m.when(&d_fire, |m| {
        m.set(&t.feed, &(t.feed.q() + Expr::lit(cb, 1)));
        m.when(&d_last, |m| m.set(&t.feed_done, &Expr::lit(1, 1)));
    });
    let r_valid = rest.out("m_valid_o");
    let r_data = rest.out("m_data_o");
    let r_last = rest.out("m_last_o");
    // Reads answer the SM; a read-modify-write merges the beat into the write buffer.
    let r_ready = m.wire(
        "rest_ready",
        &(&(&st.is("read") & &!t.rdone.q()) & &(&t.rmw | rsp_ready)),
    );
    m.drive(&rsp_ready_n, &r_ready);
    let r_fire = m.wire("rest_fire", &(&r_valid & &r_ready));
    m.when(&(&r_fire & &r_last), |m| m.set(&t.rdone, &Expr::lit(1, 1)));
    m.comment("Read-modify-write: restored bytes where the mask is clear");
    for b in 0..t.nw4 {
        let here = &(&r_fire & &t.rmw) & &t.merge.q().eq_lit(b as u64);
        let mask = t.wmask[b as usize].q();
        let old = t.wbuf[b as usize].q();
        let bytes: Vec<Expr> = (0..16)
            .map(|i| {
                mask.bit(i)
                    .select(&old.slice(8 * i, 8), &r_data.slice(8 * i, 8))
            })
            .collect();
        let merged = Expr::cat_lsb(&bytes);
        m.when(&here, |m| m.set(&t.wbuf[b as usize], &merged));
    }
    m.when(&(&r_fire & &t.rmw), |m| {
        m.set(&t.merge, &(t.merge.q() + Expr::lit(cb, 1)))
    });
    let drained = m.wire(
        "drained",
        &(&(&t.rdone.q() & &!fetching.clone()) & &t.outst.q().eq_lit(0)),
    );
    m.when(&(&st.is("read") & &drained), |m| {
        m.when(&t.rmw, |m| st.go(m, "comp"))
            .otherwise(m, |m| st.go(m, "idle"));
    });
    Restored {
        valid: r_valid,
        data: r_data,
        last: r_last,
        err: rest.out("m_err_o"),
    }
}
