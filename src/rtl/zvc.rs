//! ZVC compressor and decompressor generators (cDMA, HPCA'18; docs/FORMATS.md, ZVC §3.2, §3.3).
//!
//! Both units speak the exact golden byte stream of FORMATS §2.2 (see `model::zvc`) as beats of
//! `lanes × word_bits` bits, little-endian (stream byte 0 = bits 7:0 of the beat).
//!
//! Compressor (`zvc_comp_*`), one input sector of `lanes` elements per cycle:
//! 1. zero detect + parallel-prefix count (registered). Every non-final output beat carries
//!    exactly `lanes` elements, so each sector's lane offset in the packer (stream position
//!    mod lanes) is known here from a running count; for up to 8 lanes stage 1 also decodes
//!    each element's destination lane into one-hot route registers;
//! 2. compaction (FORMATS §3.2) fused with the rotation to that lane: a one-level crossbar on the
//!    registered routes (≤ 8 lanes) or the LSB-first log shifter plus a rotator (wider),
//!    written into a sector FIFO of S+1 entries (S = sectors per window): the window's mask
//!    must precede its payload in the stream, so a window's sectors wait there until the
//!    window is complete;
//! 3. a packer that ORs `{mask, payload}` chunks into an accumulator at the running count
//!    (payload lane k lands on position ≡ k mod lanes: no shifter in the loop) and emits dense
//!    beats (a constant one-beat shift). A beat is emitted once more than one beat of data is
//!    held (or while flushing), so a transfer never ends with an empty `last` beat.
//!
//! Decompressor (`zvc_decomp_*`): a realignment buffer of `2·lanes + 2·M` elements (M = mask
//! elements), per-sector popcount + prefix count on the mask segment, a per-lane gather of the
//! payload, and a registered output: first sector two cycles after the beat that completes
//! its mask and payload. The one-sector-per-cycle loop is kept short by construction:
//! - an arriving beat is placed behind the buffered elements as they stand before this
//!   cycle's sector leaves (at the registered count, in bounded-fan-out register copies), and
//!   the sector's elements are dropped from the merged buffer, chosen by `fire` last;
//! - with `lanes <= word_bits`, every buffered element carries the need it would have as a
//!   window's mask (its segment's popcount + M, counted as its beat arrives), so a window's
//!   first sector reads its need from a register instead of counting the buffer;
//! - the window's first sector and its later ones are expanded by two gathers from registers,
//!   each a one-hot AND-OR on selects decoded from the prefix count, chosen at the end.

use crate::hdl::blocks::{
    mux_tree, or_tree, popcount, prefix_count, prefix_onehot, rotate_lanes, shift_lanes,
    shift_lanes_copies, PrefixTopology,
};
use crate::hdl::pipe::{Pipeline, Policy};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{clog2, Expr, HdlError, Module, ModuleBuilder, Net, Reg};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Spec reference printed in every module header.
const SPEC: &str = "docs/FORMATS.md, ZVC";

/// Parameters of the ZVC hardware.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZvcRtlParams {
    /// Element width in bits: 8, 16 or 32.
    pub word_bits: u32,
    /// Elements per cycle (input sector and output beat): 4, 8, 16 or 32.
    pub lanes: u32,
    /// Elements per compression window (one mask): a multiple of `lanes` and of `word_bits`.
    pub window: u32,
    /// Prefix-count network topology of stage 1.
    pub prefix: PrefixTopology,
}

impl Default for ZvcRtlParams {
    fn default() -> Self {
        ZvcRtlParams {
            word_bits: 32,
            lanes: 8,
            window: 32,
            prefix: PrefixTopology::BrentKung,
        }
    }
}

impl ZvcRtlParams {
    /// Checks the parameter set; the message names the bad value and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if ![8, 16, 32].contains(&self.word_bits) {
            return Err(format!(
                "word_bits = {} is not supported (allowed: 8, 16, 32)",
                self.word_bits
            ));
        }
        if ![4, 8, 16, 32].contains(&self.lanes) {
            return Err(format!(
                "lanes = {} is not supported (allowed: 4, 8, 16, 32)",
                self.lanes
            ));
        }
        if self.window < 8 || self.window > 256 || !self.window.is_multiple_of(8) {
            return Err(format!(
                "window = {} must be a multiple of 8 in 8..=256",
                self.window
            ));
        }
        if !self.window.is_multiple_of(self.lanes) {
            return Err(format!(
                "window = {} must be a multiple of lanes = {} (whole sectors per window)",
                self.window, self.lanes
            ));
        }
        if !self.window.is_multiple_of(self.word_bits) {
            return Err(format!(
                "window = {} must be a multiple of word_bits = {} (the mask is a whole number of elements)",
                self.window, self.word_bits
            ));
        }
        Ok(())
    }

    /// Sectors per window (S).
    pub fn sectors(&self) -> u32 {
        self.window / self.lanes
    }
    /// Mask elements per window (M).
    pub fn mask_elems(&self) -> u32 {
        self.window / self.word_bits
    }
    /// Bytes per beat/sector.
    pub fn beat_bytes(&self) -> u32 {
        self.lanes * self.word_bits / 8
    }
    /// Width of the byte-count field.
    pub fn bytes_width(&self) -> u32 {
        clog2(self.beat_bytes() as u64 + 1)
    }
    /// Parameter suffix used in module names.
    pub fn tag(&self) -> String {
        format!("w{}_l{}_n{}", self.word_bits, self.lanes, self.window)
    }
    /// Human-readable parameter line for headers and reports.
    pub fn describe(&self) -> String {
        format!(
            "word_bits={} lanes={} window={} prefix={}",
            self.word_bits,
            self.lanes,
            self.window,
            self.prefix.tag()
        )
    }
    /// The matching golden-model parameters.
    pub fn model(&self) -> crate::model::zvc::ZvcParams {
        crate::model::zvc::ZvcParams {
            word_bits: self.word_bits,
            window: self.window as usize,
        }
    }
}

fn err(msg: String) -> HdlError {
    HdlError {
        module: "zvc".into(),
        problems: vec![msg],
    }
}

/// Widest sector whose stage-2 compaction is a decoded crossbar (L² route registers);
/// wider sectors use the log-shifter compaction plus a rotator.
const XBAR_MAX_LANES: u32 = 8;

/// `zvc_compact`: LSB-first logarithmic compaction (FORMATS §3.2 stage 2). Lane i holds a
/// non-zero element that moves down by `zb[i]` (zeros in front of it); level b applies shift
/// bit b. Zero elements are all-zero words, and lanes left empty are driven to 0.
pub fn compact(p: &ZvcRtlParams) -> Result<Arc<Module>, HdlError> {
    let (w, l) = (p.word_bits, p.lanes);
    let sw = clog2(l as u64).max(1);
    let mut m = ModuleBuilder::new(format!("zvc_compact_w{}_l{}", w, l));
    m.header("Generator: hwzip::rtl::zvc::compact");
    m.header(format!("Parameters: word_bits={} lanes={}", w, l));
    m.header(format!(
        "Spec: {} §3.2 stage 2 (LSB-first log shifter, collision-free for all masks)",
        SPEC
    ));
    let data = m.input("data_i", l * w);
    let nz = m.input("nz_i", l);
    let zb = m.input("zb_i", l * sw);
    let mut d: Vec<Expr> = data.lanes(w);
    let mut v: Vec<Expr> = (0..l).map(|i| nz.bit(i)).collect();
    let mut s: Vec<Expr> = zb.lanes(sw);
    let levels = clog2(l as u64);
    for b in 0..levels {
        let dist = 1usize << b;
        m.comment(format!(
            "level {}: elements whose shift bit {} is set move down {} lane(s)",
            b, b, dist
        ));
        let n = l as usize;
        let mut nd = Vec::new();
        let mut nv = Vec::new();
        let mut ns = Vec::new();
        for i in 0..n {
            let stay = &v[i] & &!s[i].bit(b);
            let (from_hi, hd, hs) = if i + dist < n {
                (
                    v[i + dist].clone() & s[i + dist].bit(b),
                    d[i + dist].clone(),
                    s[i + dist].clone(),
                )
            } else {
                (Expr::zero(1), Expr::zero(w), Expr::zero(sw))
            };
            let dd = from_hi.select(&hd, &stay.gate(&d[i]));
            let ss = from_hi.select(&hs, &s[i]);
            nd.push(m.wire(&format!("d{}_{}", b + 1, i), &dd));
            nv.push(m.wire(&format!("v{}_{}", b + 1, i), &(&from_hi | &stay)));
            ns.push(m.wire(&format!("s{}_{}", b + 1, i), &ss));
        }
        d = nd;
        v = nv;
        s = ns;
    }
    // The valid flags and residual shift bits after the last level are implied by the data.
    let unused: Vec<Expr> = v.iter().chain(s.iter()).cloned().collect();
    if levels > 0 {
        m.unused(&Expr::cat(&unused));
    }
    m.output_expr("packed_o", &Expr::cat_lsb(&d));
    m.finish()
}

/// `zvc_compact_xbar`: compaction and rotation as a one-level crossbar (FORMATS §3.2 stage 2,
/// with the destination lanes decoded in stage 1). `route_i[j*lanes + i]` sends element i to
/// lane j; the routes are one-hot per lane, so lane j is the OR of the gated elements
/// `d<i+1>_<j>` (element i gated onto lane j). Lanes without a route are 0.
pub fn compact_xbar(p: &ZvcRtlParams) -> Result<Arc<Module>, HdlError> {
    let (w, l) = (p.word_bits, p.lanes);
    let mut m = ModuleBuilder::new(format!("zvc_compact_xbar_w{}_l{}", w, l));
    m.header("Generator: hwzip::rtl::zvc::compact_xbar");
    m.header(format!("Parameters: word_bits={} lanes={}", w, l));
    m.header(format!(
        "Spec: {} §3.2 stage 2 (compaction; routes decoded from the stage-1 prefix count)",
        SPEC
    ));
    let data = m.input("data_i", l * w);
    let route = m.input("route_i", l * l);
    let d = data.lanes(w);
    let mut out = Vec::new();
    for j in 0..l {
        let terms: Vec<Expr> = d
            .iter()
            .enumerate()
            .map(|(i, di)| {
                m.wire(
                    &format!("d{}_{}", i + 1, j),
                    &route.bit(j * l + i as u32).gate(di),
                )
            })
            .collect();
        // Balanced OR of the gated elements.
        out.push(m.wire(&format!("lane_{}", j), &or_tree(terms, w)));
    }
    m.output_expr("packed_o", &Expr::cat_lsb(&out));
    m.finish()
}

/// `zvc_expand`: per-lane gather (FORMATS §3.3 stage 2): lane i takes payload element
/// `prefix(nz)[i]` when its mask bit is set, else 0.
pub fn expand(p: &ZvcRtlParams) -> Result<Arc<Module>, HdlError> {
    let (w, l) = (p.word_bits, p.lanes);
    let mut m = ModuleBuilder::new(format!("zvc_expand_w{}_l{}_{}", w, l, p.prefix.tag()));
    m.header("Generator: hwzip::rtl::zvc::expand");
    m.header(format!(
        "Parameters: word_bits={} lanes={} prefix={}",
        w,
        l,
        p.prefix.tag()
    ));
    m.header(format!(
        "Spec: {} §3.3 (popcount/prefix on the mask segment, lane mux)",
        SPEC
    ));
    let win = m.input("payload_i", l * w);
    let nz = m.input("nz_i", l);
    let flags: Vec<Expr> = (0..l).map(|i| nz.bit(i)).collect();
    let lanes = win.lanes(w);
    // Lane i gathers from payload lanes 0..=i: a one-hot AND-OR whose selects are decoded
    // per lane (each drives one lane's bits; a binary mux tree would hang every lane's bits
    // on the count's few bits). Up to `XBAR_MAX_LANES` lanes the counts are built one-hot
    // (`prefix_onehot`), so nothing is decoded after the prefix network.
    let counts: Vec<Vec<Expr>> = if l <= XBAR_MAX_LANES {
        prefix_onehot(&mut m, "pos", &flags)
    } else {
        let (excl, total) = prefix_count(&mut m, "pos", &flags, p.prefix);
        m.unused(&total);
        excl.iter()
            .enumerate()
            .map(|(i, ex)| {
                let used = clog2(i as u64 + 1);
                let ew = ex.width();
                if used < ew {
                    m.unused(&ex.slice(used, ew - used));
                }
                (0..=i)
                    .map(|k| ex.slice(0, used).eq_lit(k as u64))
                    .collect()
            })
            .collect()
    };
    let mut out = Vec::new();
    for (i, cnt) in counts.iter().enumerate() {
        let g = if i == 0 {
            nz.bit(0).gate(&lanes[0])
        } else {
            let terms: Vec<Expr> = (0..=i)
                .map(|k| {
                    let sel = m.wire(&format!("sel_{i}_{k}"), &(nz.bit(i as u32) & &cnt[k]));
                    sel.gate(&lanes[k])
                })
                .collect();
            or_tree(terms, w)
        };
        out.push(m.wire(&format!("lane_{}", i), &g));
    }
    m.output_expr("data_o", &Expr::cat_lsb(&out));
    m.finish()
}

/// `zvc_comp`: the ZVC compressor top (FORMATS §3.2).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_data_i`/`s_last_i` (one sector per beat; `s_last_i`
/// marks the final sector of a transfer, closing its window and flushing the stream);
/// `m_valid_o`/`m_ready_i`/`m_data_o`/`m_bytes_o`/`m_last_o` (dense compressed stream).
pub fn compressor(p: &ZvcRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let d = CompDims::of(p);

    let mut m = ModuleBuilder::new(format!("zvc_comp_{}_{}", p.tag(), p.prefix.tag()));
    m.header("Generator: hwzip::rtl::zvc::compressor");
    m.header(format!("Parameters: {}", p.describe()));
    m.header(format!(
        "Spec: {} §2.2 (byte stream), §3.2 (3-stage compressor)",
        SPEC
    ));
    m.header(format!(
        "Stream: per window, mask ({} B, bit i = element i non-zero) then the non-zero elements, little-endian",
        p.window / 8
    ));

    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[("data", d.l * d.w), ("last", 1)]),
    );
    let s_data = s_in.field("data");
    let s_last = s_in.field("last");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    let s1 = stage1(&mut m, p, &d, &s_data, &s_last);
    let a = stage1_regs(&mut m, &d, s_in, &s1, &s_data, &s_last);
    let packed = compaction(&mut m, p, &d, &s1, &a)?;
    let wm = window_mask(&mut m, p, &d, &a);
    let f = sector_fifo(&mut m, &d, &a, &wm.a_first, packed);
    let hm = head_window_mask(&mut m, &d, &f, &a);
    let pk = packer_output(&mut m, p, &d, out, &m_ready);
    let (mask_ready, accept) = chunk_accept(&mut m, &d, &pk, &f, &hm, &m_ready);
    let ins = chunk_placement(&mut m, &d, &pk, &f, &hm, &wm.mask_full, &mask_ready);
    packer_next(&mut m, &d, &pk, &f, &ins, &accept);

    let inc = a.push.expr().gate(&Expr::lit(f.fcw, 1));
    let dec = accept.gate(&Expr::lit(f.fcw, 1));
    m.next(&f.fcount, &(f.fcount.q() + inc - dec), None);

    m.finish()
}

/// Sizes of the compressor's datapath and the widths of its counts and indices.
struct CompDims {
    w: u32,
    l: u32,
    s_cnt: u32,
    mel: u32,
    /// Bits of a lane index, of an element count `0..=lanes`, of a sector index.
    sw: u32,
    cw: u32,
    secw: u32,
    /// Bits of a lane offset mod lanes.
    rw: u32,
    /// Stage 2 is a crossbar on registered routes (up to `XBAR_MAX_LANES` lanes).
    xbar: bool,
}

impl CompDims {
    /// The sizes for the parameter set `p`.
    fn of(p: &ZvcRtlParams) -> CompDims {
        let l = p.lanes;
        CompDims {
            w: p.word_bits,
            l,
            s_cnt: p.sectors(),
            mel: p.mask_elems(),
            sw: clog2(l as u64).max(1),
            cw: clog2(l as u64 + 1),
            secw: clog2(p.sectors() as u64).max(1),
            rw: clog2(l as u64),
            xbar: l <= XBAR_MAX_LANES,
        }
    }
}

/// Stage 1 on the input sector: its zero flags, window position, packer lane and count.
struct Stage1 {
    nz_in: Expr,
    sec_in: Reg,
    line_end_in: Expr,
    tot: Reg,
    rot_in: Expr,
    cnt_in: Expr,
    /// One-hot routes (crossbar) or zeros in front of each element (log shifter).
    route_in: Expr,
}

/// Stage 1: zero detect, window position, first packer lane and prefix count of a sector.
fn stage1(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    d: &CompDims,
    s_data: &Expr,
    s_last: &Expr,
) -> Stage1 {
    let (w, l, rw) = (d.w, d.l, d.rw);
    // ---------------- Stage 1: zero detect + prefix count (FORMATS §3.2 stage 1) ----------------
    // Up to XBAR_MAX_LANES lanes, stage 1 also decodes each element's destination lane and
    // stage 2 is a one-level AND-OR crossbar; wider sectors use the log shifters.
    let in_lanes = s_data.lanes(w);
    let nz_in: Vec<Expr> = in_lanes.iter().map(|x| x.any()).collect();
    let nz_in = m.wire("nz_in", &Expr::cat_lsb(&nz_in));

    let sec_in = m.reg("sec_in_q", d.secw, Some(0));
    m.annotate("sector index of the next input sector within its window");
    let line_end_in = m.wire(
        "line_end_in",
        &(s_last | &sec_in.q().eq_lit(d.s_cnt as u64 - 1)),
    );

    // Every non-final beat carries exactly `lanes` elements, so a chunk's lane offset inside
    // the packer (its stream position mod lanes) is fixed when the sector is taken: the
    // payload is rotated to that lane before the sector FIFO, off the packer's loop.
    let tot = m.reg("tot_q", rw, Some(0));
    m.annotate("elements of the transfer ahead of the next input sector, mod lanes");
    let first_in = sec_in.q().eq_lit(0);
    let rot_in = m.wire_c(
        "rot_in",
        &(tot.q() + first_in.select(&Expr::lit(rw, (d.mel % l) as u64), &Expr::zero(rw))),
        "lane of the sector's first payload element in the packer (after its mask)",
    );

    let (cnt_in, route_in) = if d.xbar {
        crossbar_routes(m, p, d, &nz_in, &rot_in)
    } else {
        zero_prefix(m, p, d, &nz_in)
    };
    Stage1 {
        nz_in,
        sec_in,
        line_end_in,
        tot,
        rot_in,
        cnt_in,
        route_in,
    }
}

/// Stage 1 up to 8 lanes: the non-zero count and each element's one-hot destination lane.
fn crossbar_routes(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    d: &CompDims,
    nz_in: &Expr,
    rot_in: &Expr,
) -> (Expr, Expr) {
    let (l, rw) = (d.l, d.rw);
    m.comment("Stage 1: zero detect (bitwise: -0.0 is non-zero), non-zeros-in-front prefix");
    m.comment("count (rank), destination decode: element i goes to lane (rot + rank_i) mod lanes");
    let nz_flags: Vec<Expr> = (0..l).map(|i| nz_in.bit(i)).collect();
    let (rank, total) = prefix_count(m, "nzpc", &nz_flags, p.prefix);
    let cnt_in = m.wire_c(
        "cnt_in",
        &total.resize(d.cw),
        "non-zero elements in the sector",
    );
    // rank_i + rot == j  <=>  rank_i == j - rot: the right side only depends on registers.
    let mut sel = Vec::new();
    for j in 0..l {
        let tgt = m.wire(
            &format!("rank_for_lane_{}", j),
            &(Expr::lit(rw, j as u64) - rot_in),
        );
        for (i, r) in rank.iter().enumerate() {
            sel.push(nz_in.bit(i as u32) & r.resize(rw).eq(&tgt));
        }
    }
    for r in rank.iter() {
        if r.width() > rw {
            m.unused(&r.slice(rw, r.width() - rw));
        }
    }
    let route = m.wire_c(
        "route_in",
        &Expr::cat_lsb(&sel),
        "bit j*lanes+i: input element i goes to packed lane j",
    );
    (cnt_in, route)
}

/// Stage 1 above 8 lanes: the non-zero count and the zeros in front of each element.
fn zero_prefix(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    d: &CompDims,
    nz_in: &Expr,
) -> (Expr, Expr) {
    let (l, cw) = (d.l, d.cw);
    m.comment("Stage 1: zero detect (bitwise: -0.0 is non-zero) and zeros-in-front prefix count");
    let zero_flags: Vec<Expr> = (0..l).map(|i| !nz_in.bit(i)).collect();
    let (zb, zeros) = prefix_count(m, "zpc", &zero_flags, p.prefix);
    let cnt_in = m.wire_c(
        "cnt_in",
        &(Expr::lit(cw, l as u64) - &zeros),
        "non-zero elements in the sector",
    );
    let zb_in = m.wire(
        "zb_in",
        &Expr::cat_lsb(&zb.iter().map(|z| z.resize(d.sw)).collect::<Vec<_>>()),
    );
    (cnt_in, zb_in)
}

/// The stage 1 register (the sector taken, its flags and count) and the push into the FIFO.
struct Stage1Regs {
    fifo_full: Net,
    a_valid: Expr,
    push: Net,
    take: Expr,
    a_data: Expr,
    a_nz: Expr,
    a_cnt: Expr,
    a_sec: Expr,
    a_end: Expr,
    a_xlast: Expr,
}

/// Input handshake and the stage 1 register; the window position and packer lane advance.
fn stage1_regs(
    m: &mut ModuleBuilder,
    d: &CompDims,
    s_in: stream::Stream,
    s1: &Stage1,
    s_data: &Expr,
    s_last: &Expr,
) -> Stage1Regs {
    let (cw, rw, secw) = (d.cw, d.rw, d.secw);
    // Stage 1 is a one-stage pipeline whose consumer is the FIFO (ready while not full).
    let fifo_full = m.wire_decl("fifo_full", 1);
    let push = m.wire_decl("push", 1);
    let mut pl = Pipeline::new(m, "a", Policy::Bubble, &s_in.valid);
    let st = pl.stage(m, "a");
    let ends = pl.finish(m, &!fifo_full.expr());
    let a_valid = ends.out_valid;
    let take = m.wire("take", &st.load());
    s_in.accept(m, &ends.in_ready);
    m.next(
        &s1.sec_in,
        &s1.line_end_in
            .select(&Expr::zero(secw), &(s1.sec_in.q() + Expr::lit(secw, 1))),
        Some(&take),
    );
    m.next(
        &s1.tot,
        &s_last.select(&Expr::zero(rw), &(&s1.rot_in + &s1.cnt_in.resize(rw))),
        Some(&take),
    );
    if cw > rw {
        m.unused(&s1.cnt_in.slice(rw, cw - rw));
    }
    let a_data = m.reg_next("a_data_q", None, s_data, Some(&take));
    let a_nz = m.reg_next("a_nz_q", None, &s1.nz_in, Some(&take));
    let a_cnt = m.reg_next("a_cnt_q", None, &s1.cnt_in, Some(&take));
    let a_sec = m.reg_next("a_sec_q", None, &s1.sec_in.q(), Some(&take));
    let a_end = m.reg_next("a_end_q", None, &s1.line_end_in, Some(&take));
    let a_xlast = m.reg_next("a_xlast_q", None, s_last, Some(&take));
    Stage1Regs {
        fifo_full,
        a_valid,
        push,
        take,
        a_data,
        a_nz,
        a_cnt,
        a_sec,
        a_end,
        a_xlast,
    }
}

/// Stage 2: compaction of the registered sector, rotated to its packer lane, into the FIFO.
fn compaction(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    d: &CompDims,
    s1: &Stage1,
    a: &Stage1Regs,
) -> Result<Expr, HdlError> {
    let w = d.w;
    let take = &a.take;
    // ---------------- Stage 2: compaction into the sector FIFO ----------------
    let packed = if d.xbar {
        m.comment("Stage 2: compaction + rotation as a crossbar with registered one-hot routes");
        let a_route = m.reg_next("a_route_q", None, &s1.route_in, Some(take));
        m.annotate("bit j*lanes+i: element i goes to packed lane j (one register per route, bounded fan-out)");
        let xbar_mod = compact_xbar(p)?;
        let u_xbar = m.instance(
            &xbar_mod,
            "u_compact",
            &[("data_i", a.a_data.clone()), ("route_i", a_route)],
        );
        u_xbar.out("packed_o").lanes(w)
    } else {
        m.comment("Stage 2: LSB-first log-shifter compaction, then rotation to the packer lane");
        let a_zb = m.reg_next("a_zb_q", None, &s1.route_in, Some(take));
        let a_rot = m.reg_next("a_rot_q", None, &s1.rot_in, Some(take));
        let compact_mod = compact(p)?;
        let u_compact = m.instance(
            &compact_mod,
            "u_compact",
            &[
                ("data_i", a.a_data.clone()),
                ("nz_i", a.a_nz.clone()),
                ("zb_i", a_zb.clone()),
            ],
        );
        let packed = u_compact.out("packed_o");
        // The rotate amount goes through a gate so that synthesis can buffer its fan-out.
        let rot_amt = m.wire("rot_amt", &a.a_valid.gate(&a_rot));
        rotate_lanes(m, "rot", &packed.lanes(w), &rot_amt, true)
    };
    let packed = m.wire_c(
        "packed_rot",
        &Expr::cat_lsb(&packed),
        "compacted payload, element k at lane (rot + k) mod lanes",
    );
    m.drive(&a.push, &(&a.a_valid & &!a.fifo_full.expr()));
    Ok(packed)
}

/// The mask of the window being filled, with the sector being pushed.
struct WindowMask {
    a_first: Expr,
    mask_full: Expr,
}

/// Window mask accumulation: sector s of the window fills mask bits `[s*lanes, +lanes)`.
fn window_mask(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    d: &CompDims,
    a: &Stage1Regs,
) -> WindowMask {
    let l = d.l;
    // Window mask accumulation: sector s fills mask[s*lanes +: lanes].
    let mask_acc = m.reg("mask_acc_q", p.window, Some(0));
    m.annotate("mask bits of the window being filled");
    let a_first = m.wire("a_first", &a.a_sec.eq_lit(0));
    let segs: Vec<Expr> = (0..d.s_cnt)
        .map(|s| {
            let here = a.a_sec.eq_lit(s as u64);
            let old = a_first.select(&Expr::zero(l), &mask_acc.q().slice(s * l, l));
            here.select(&a.a_nz, &old)
        })
        .collect();
    let mask_full = m.wire_c(
        "mask_full",
        &Expr::cat_lsb(&segs),
        "window mask including the sector being pushed",
    );
    m.next(&mask_acc, &mask_full, Some(&a.push.expr()));
    WindowMask { a_first, mask_full }
}

/// The sector FIFO: its count, entries and the fields of its head entry.
struct SectorFifo {
    fcw: u32,
    fcount: Reg,
    pop: Net,
    slots: Vec<Reg>,
    /// Entry bits, and the bit that marks a window's last sector.
    ew: u32,
    end_bit: u32,
    h_data: Expr,
    h_cnt: Expr,
    h_first: Expr,
    h_xlast: Expr,
    f_nonempty: Expr,
}

/// The sector FIFO of S+1 entries, a shift register whose head is always entry 0.
fn sector_fifo(
    m: &mut ModuleBuilder,
    d: &CompDims,
    a: &Stage1Regs,
    a_first: &Expr,
    packed: Expr,
) -> SectorFifo {
    let (w, l, cw) = (d.w, d.l, d.cw);
    let push = &a.push;
    // Sector FIFO as a shift register: the head is always entry 0 (no read multiplexer, so
    // no register fans out to the whole datapath); entries move down on a pop and a push
    // writes at `count - pop`. Entry: {nz, xfer_last, line_end, first, cnt, data}; the nz bits
    // let the head window's mask be assembled from the entries themselves, whatever the
    // number of (possibly short) windows waiting behind it.
    let depth = d.s_cnt + 1;
    let ew = l * w + cw + 3 + l;
    let fcw = clog2(depth as u64 + 1);
    let fcount = m.reg("fifo_count_q", fcw, Some(0));
    m.annotate("sectors held in the FIFO");
    m.drive(&a.fifo_full, &fcount.q().eq_lit(depth as u64));
    let entry = Expr::cat(&[
        a.a_nz.clone(),
        a.a_xlast.clone(),
        a.a_end.clone(),
        a_first.clone(),
        a.a_cnt.clone(),
        packed,
    ]);
    let pop = m.wire_decl("pop", 1);
    let slots: Vec<_> = (0..depth)
        .map(|i| m.reg(&format!("fifo{}_q", i), ew, Some(0)))
        .collect();
    // Both candidates of every slot are formed from registers; `pop` (late: it depends on
    // the output handshake) only picks one of them.
    for i in 0..depth as usize {
        let wr_if_pop = m.wire(
            &format!("fifo{}_wr_pop", i),
            &(push.expr() & fcount.q().eq_lit(i as u64 + 1)),
        );
        let wr_if_hold = m.wire(
            &format!("fifo{}_wr_hold", i),
            &(push.expr() & fcount.q().eq_lit(i as u64)),
        );
        let below = if i + 1 < depth as usize {
            slots[i + 1].q()
        } else {
            Expr::zero(ew)
        };
        let if_pop = wr_if_pop.select(&entry, &below);
        let if_hold = wr_if_hold.select(&entry, &slots[i].q());
        m.next(&slots[i], &pop.expr().select(&if_pop, &if_hold), None);
    }
    let end_bit = l * w + cw + 1;
    let head = slots[0].q();
    let h_data = head.slice(0, l * w);
    let h_cnt = head.slice(l * w, cw);
    let h_first = head.bit(l * w + cw);
    let h_xlast = head.bit(l * w + cw + 2);
    let f_nonempty = m.wire("fifo_nonempty", &fcount.q().ne(&Expr::zero(fcw)));
    SectorFifo {
        fcw,
        fcount,
        pop,
        slots,
        ew,
        end_bit,
        h_data,
        h_cnt,
        h_first,
        h_xlast,
        f_nonempty,
    }
}

/// The mask of the head window, once all of its sectors are known.
struct HeadMask {
    head_window_done: Expr,
    fifo_mask: Expr,
    mq_push: Expr,
}

/// Head window mask, from the FIFO entries of the head window, and whether it is complete.
fn head_window_mask(
    m: &mut ModuleBuilder,
    d: &CompDims,
    f: &SectorFifo,
    a: &Stage1Regs,
) -> HeadMask {
    let (l, ew, end_bit) = (d.l, f.ew, f.end_bit);
    m.comment(
        "Head window mask: sector s of the window is FIFO entry s while no earlier entry ends it",
    );
    let mut open = Expr::ones(1);
    let mut segs = Vec::new();
    let mut ended = Expr::zero(1);
    for (i, slot) in f.slots.iter().enumerate().take(d.s_cnt as usize) {
        let e = slot.q();
        let valid = f.fcount.q().gt(&Expr::lit(f.fcw, i as u64));
        let take_seg = m.wire(&format!("hm_take{}", i), &(&open & &valid));
        segs.push(take_seg.gate(&e.slice(ew - l, l)));
        ended = &ended | &(&take_seg & &e.bit(end_bit));
        open = &open & &!e.bit(end_bit);
    }
    for slot in f.slots.iter().skip(d.s_cnt as usize) {
        m.unused(&slot.q().slice(ew - l, l));
        m.unused(&slot.q().bit(end_bit));
    }
    let head_window_done = m.wire("head_window_done", &ended);
    let fifo_mask = m.wire("fifo_mask", &Expr::cat_lsb(&segs));
    let mq_push = m.wire("window_completes", &(a.push.expr() & &a.a_end));
    HeadMask {
        head_window_done,
        fifo_mask,
        mq_push,
    }
}

/// The packer's accumulator, its count and flush state, and the beat leaving this cycle.
struct Packer {
    /// Accumulator capacity in elements, and the bits of its count.
    acap: u32,
    acw: u32,
    acc: Reg,
    ac: Reg,
    flushing: Reg,
    m_valid_q: Reg,
    /// `lanes` at the count's width.
    lw: Expr,
    m_last: Expr,
    emit: Expr,
    ac_after: Expr,
}

/// Stage 3, the packer's registers and output beat: dense data, its byte count and `last`.
fn packer_output(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    d: &CompDims,
    out: stream::OutPort,
    m_ready: &Expr,
) -> Packer {
    let (w, l) = (d.w, d.l);
    // ---------------- Stage 3: packer ----------------
    m.comment("Stage 3: append {mask, payload} chunks at the running offset; emit dense beats");
    let acap = 2 * l + d.mel; // accumulator capacity in elements
    let acw = clog2(acap as u64 + 1);
    let acc = m.reg("acc_q", acap * w, Some(0));
    let ac = m.reg("acc_count_q", acw, Some(0));
    m.annotate("elements held in the accumulator");
    let flushing = m.reg("flush_q", 1, Some(0));
    m.annotate("final chunk of the transfer accepted: drain the accumulator");
    let lw = Expr::lit(acw, l as u64);
    // out_valid_q == (count > L) | (flushing & count != 0), kept as a register: `emit`
    // selects the whole accumulator and must not wait for a compare.
    let m_valid_q = m.reg("out_valid_q", 1, Some(0));
    m.annotate("a beat is ready: more than one beat held, or flushing a non-empty accumulator");
    let m_valid = m_valid_q.q();
    let out_elems = m.wire("out_elems", &ac.q().gt(&lw).select(&lw, &ac.q()));
    let bw = p.bytes_width();
    let eb = w / 8;
    // bytes = elements * (word_bits / 8): a constant multiply, written as a shift.
    let bytes = out_elems.resize(bw.max(acw)).shl(clog2(eb as u64));
    let bytes = m.wire("out_bytes", &bytes.resize(bw));
    let m_last = m.wire("out_last", &(flushing.q() & ac.q().le(&lw)));
    out.drive(
        m,
        &m_valid,
        &[
            ("bytes", bytes),
            ("data", acc.q().slice(0, l * w)),
            ("last", m_last.clone()),
        ],
    );
    let emit = m.wire("emit", &(&m_valid & m_ready));
    let ac_after = m.wire(
        "acc_count_emit",
        &emit.select(&(ac.q() - &out_elems), &ac.q()),
    );
    Packer {
        acap,
        acw,
        acc,
        ac,
        flushing,
        m_valid_q,
        lw,
        m_last,
        emit,
        ac_after,
    }
}

/// The packer takes the head chunk (a FIFO pop) once its mask is known and it fits.
fn chunk_accept(
    m: &mut ModuleBuilder,
    d: &CompDims,
    pk: &Packer,
    f: &SectorFifo,
    hm: &HeadMask,
    m_ready: &Expr,
) -> (Expr, Expr) {
    let (ac, lw) = (&pk.ac, &pk.lw);
    // A window's first sector may leave in the very cycle its last sector completes the mask
    // (mask bypass from `mask_full`): this gives the paper's 6-cycle line latency.
    let mask_ready = m.wire(
        "mask_ready",
        &(hm.head_window_done.clone() | hm.mq_push.clone()),
    );
    let can_pop = m.wire("can_pop", &(&f.f_nonempty & &(!&f.h_first | &mask_ready)));
    // Room for a chunk: at most `lanes` elements left after this cycle's beat. A beat leaves
    // with `lanes` elements unless flushing, and no chunk is accepted while flushing.
    // (emit ? count <= 2L : count <= L), written out with m_ready last: while not flushing
    // a beat leaves exactly when count > L and m_ready is high.
    let fits = m.wire(
        "fits",
        &(ac.q().le(lw) | (ac.q().le(&Expr::lit(pk.acw, 2 * d.l as u64)) & m_ready.clone())),
    );
    let accept = m.wire("accept", &(&can_pop & &!pk.flushing.q() & &fits));
    m.drive(&f.pop, &accept);
    (mask_ready, accept)
}

/// Chunk placement: every accumulator position ORs in the head chunk element landing on it.
fn chunk_placement(
    m: &mut ModuleBuilder,
    d: &CompDims,
    pk: &Packer,
    f: &SectorFifo,
    hm: &HeadMask,
    mask_full: &Expr,
    mask_ready: &Expr,
) -> Vec<Expr> {
    let (w, l, mel) = (d.w, d.l, d.mel);
    let (acap, ac) = (pk.acap, &pk.ac);
    m.comment("Chunk placement, in pre-emit positions x (element x of the accumulator before");
    m.comment("this cycle's beat leaves): the mask goes to [count, count+M), the payload to");
    m.comment("[count + M*first, +lanes). The payload arrives rotated to its lane (stage 2),");
    m.comment("so position x simply takes payload lane x mod lanes: no shifter in this loop.");
    m.comment("The head chunk is written every cycle it is present (not only on accept): it");
    m.comment("always lands on the same, otherwise empty, positions until it is accepted, so");
    m.comment("the wide datapath depends only on registers and `emit`; `accept` only moves");
    m.comment("the count and the FIFO. The mask is written once final (`mask_ready`).");
    let xcap = acap + l; // pre-emit positions that can land in the accumulator
    let xw = clog2((xcap + mel) as u64 + 1);
    let spec_ok = m.wire("chunk_present", &(&f.f_nonempty & &!pk.flushing.q()));
    let pay_at = m.wire(
        "payload_at",
        &(ac.q().zext(xw)
            + f.h_first
                .select(&Expr::lit(xw, mel as u64), &Expr::zero(xw))),
    );
    let pay_end = m.wire("payload_end", &(&pay_at + &Expr::lit(xw, l as u64)));
    let head_mask = m.wire(
        "head_mask",
        &hm.head_window_done.select(&hm.fifo_mask, mask_full),
    );
    let mask_ok = m.wire("mask_write", &(&spec_ok & &f.h_first & mask_ready));
    let mask_els = m.wire("mask_data", &mask_ok.gate(&head_mask)).lanes(w);
    let pay_lanes = f.h_data.lanes(w);
    let acc_els = pk.acc.q().lanes(w);
    (0..xcap as usize)
        .map(|x| {
            let xl = Expr::lit(xw, x as u64);
            let hit = &spec_ok & &pay_at.le(&xl) & &xl.lt(&pay_end);
            let hit = m.wire(&format!("pay_hit_{}", x), &hit);
            let mut v = hit.gate(&pay_lanes[x % l as usize]);
            for (k, me) in mask_els.iter().enumerate().take((x + 1).min(mel as usize)) {
                if x - k <= acap as usize {
                    v = &v | &ac.q().eq_lit((x - k) as u64).gate(me);
                }
            }
            let held = if x < acap as usize {
                acc_els[x].clone()
            } else {
                Expr::zero(w)
            };
            m.wire(&format!("acc_ins_{}", x), &(&held | &v))
        })
        .collect()
}

/// The packer's next state: accumulator after the beat, count, flush state, output valid.
fn packer_next(
    m: &mut ModuleBuilder,
    d: &CompDims,
    pk: &Packer,
    f: &SectorFifo,
    ins: &[Expr],
    accept: &Expr,
) {
    let (l, mel, acw) = (d.l, d.mel, pk.acw);
    let (emit, lw) = (&pk.emit, &pk.lw);
    m.comment("Beat leaves: the accumulator moves down by one beat (a constant shift)");
    let acc_next: Vec<Expr> = (0..pk.acap as usize)
        .map(|p| emit.select(&ins[p + l as usize], &ins[p]))
        .collect();
    let chunk_cnt = m.wire(
        "chunk_cnt",
        &(f.h_cnt.zext(acw)
            + f.h_first
                .select(&Expr::lit(acw, mel as u64), &Expr::zero(acw))),
    );
    m.next(&pk.acc, &Expr::cat_lsb(&acc_next), None);
    let ac_next = m.wire("acc_count_next", &(&pk.ac_after + accept.gate(&chunk_cnt)));
    m.next(&pk.ac, &ac_next, None);
    let flush_next = m.wire(
        "flush_next",
        &((pk.flushing.q() & !(emit & &pk.m_last)) | (accept & &f.h_xlast)),
    );
    m.next(&pk.flushing, &flush_next, None);
    m.next(
        &pk.m_valid_q,
        &(ac_next.gt(lw) | (&flush_next & &ac_next.ne(&Expr::zero(acw)))),
        None,
    );
}

/// `zvc_decomp`: the ZVC decompressor top (FORMATS §3.3).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_data_i`/`s_bytes_i`/`s_last_i` (the compressed stream as
/// produced by the compressor); `m_valid_o`/`m_ready_i`/`m_data_o`/`m_last_o`/`m_err_o`
/// (one decompressed sector per beat; every window yields all of its sectors; `m_last_o`
/// marks the last sector of the transfer; `m_err_o` with `m_last_o` reports a stream that
/// ended inside a window, after which the unit is ready for the next transfer).
pub fn decompressor(p: &ZvcRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let (w, l) = (p.word_bits, p.lanes);
    let s_cnt = p.sectors();
    let mel = p.mask_elems();
    let secw = clog2(s_cnt as u64).max(1);
    let expand_mod = expand(p)?;

    let mut m = ModuleBuilder::new(format!("zvc_decomp_{}_{}", p.tag(), p.prefix.tag()));
    m.header("Generator: hwzip::rtl::zvc::decompressor");
    m.header(format!("Parameters: {}", p.describe()));
    m.header(format!(
        "Spec: {} §2.2 (byte stream), §3.3 (2-stage decompressor), §3.7 (realignment window)",
        SPEC
    ));

    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[("data", l * w), ("bytes", p.bytes_width()), ("last", 1)]),
    );
    let s_data = s_in.field("data");
    let s_last = s_in.field("last");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    let bcap = 2 * l + 2 * mel; // realignment buffer, elements
    let bcw = clog2(bcap as u64 + 1);
    let buf = m.reg("buf_q", bcap * w, Some(0));
    m.annotate("realignment buffer: the next stream elements, element 0 at the LSB");
    let bc = m.reg("buf_count_q", bcw, Some(0));
    let in_done = m.reg("in_done_q", 1, Some(0));
    m.annotate("the transfer's last beat has been absorbed");
    let empty_end = m.reg("empty_end_q", 1, Some(0));
    m.annotate("that last beat carried no element: the transfer ends with an error beat");
    let sec = m.reg("sec_q", secw, Some(0));

    m.comment("Stage 1: mask segment, popcount and need for this sector");
    // `sec_q == 0`, registered: one copy for the control and one per 64 bits of the
    // payload window's select (`docs/TOOLCHAIN.md`, bounded fan-out).
    let win_copies = if s_cnt > 1 {
        (l as usize * w as usize).div_ceil(64)
    } else {
        0
    };
    let first_reps = m.reg_replicas("first_q", 1, Some(1), 1 + win_copies);
    m.annotate("copies of (sec_q == 0): the sector is its window's first");
    let first = first_reps[0].q();
    let fire_decl = m.wire_decl("fire", 1);
    let buf_mask = buf.q().slice(0, p.window);
    // The segment and popcount of a window's later sectors are registered one sector ahead
    // (`seg_q`, `seg_cnt_q`); only a first sector counts its segment straight from the buffer.
    // With one sector per window there are no later sectors and no such registers.
    let seg_first = buf_mask.slice(0, l);
    let (bufn, need_first) = first_need(&mut m, p, (bcap, bcw), &seg_first);
    let later = (s_cnt > 1).then(|| {
        later_segment(
            &mut m,
            p,
            (&buf_mask, &sec.q(), &first),
            bcw,
            &fire_decl.expr(),
        )
    });
    let need = match &later {
        Some(ls) => first.select(&need_first, &ls.seg_cnt_q.q()),
        None => need_first.clone(),
    };
    let need = m.wire("need", &need);
    let seg_later = later.as_ref().map(|ls| ls.seg_q.q());
    let mask_here = m.wire(
        "mask_here",
        &(!&first | bc.q().ge(&Expr::lit(bcw, mel as u64))),
    );
    let has_data = m.wire("has_data", &(&mask_here & &bc.q().ge(&need)));
    // The output register is a one-stage pipeline: it takes a sector when the buffer holds
    // one, or an error beat when the transfer ended without enough elements (`corrupt`).
    let offer = m.wire("out_offer", &(&has_data | &in_done.q()));
    let mut out_pipe = Pipeline::new(&mut m, "out", Policy::Bubble, &offer);
    let st_out = out_pipe.stage(&mut m, "out");
    let load = st_out.load();
    m.drive(&fire_decl, &(&has_data & &load));
    let fire = fire_decl.expr();
    let corrupt = m.wire("corrupt", &(!&has_data & &load));

    m.comment("Stage 2: lane mux (payload element or zero) into the output register");
    let sector = gather_sector(
        &mut m,
        &expand_mod,
        (&buf.q(), mel * w, l * w),
        (&seg_first, seg_later.as_ref()),
        &first_reps,
    );

    let consumed = m.wire("consumed", &fire.gate(&need));
    let bc_after = m.wire("buf_count_used", &(bc.q() - &consumed));
    let kw = clog2((l + mel) as u64 + 1);

    let last_sec = m.wire("last_sector", &sec.q().eq_lit(s_cnt as u64 - 1));
    let end_xfer = m.wire(
        "end_of_transfer",
        &(&fire & &last_sec & &in_done.q() & !empty_end.q() & bc_after.eq_lit(0)),
    );

    m.comment("Refill: absorb a beat at the end of the buffered elements");
    let regs = (&buf.q(), &bc.q(), &in_done.q());
    let Refill {
        take,
        in_elems,
        pos_reps,
        posw,
        merged,
    } = refill(&mut m, p, s_in, regs, (bcap, bcw));
    let pos: Vec<Expr> = pos_reps.iter().map(|r| r.q()).collect();
    m.unused(&need.slice(kw.min(bcw - 1), bcw - kw.min(bcw - 1)));
    let drop = need.resize(kw);
    let dropped = shift_lanes(&mut m, "drop", &merged.lanes(w), &drop, false);

    m.comment(
        "Corrupt stream (ended inside a window): report with the last sector and drop the rest",
    );
    let buf_next = m.wire("buf_next", &buffer_next(&dropped, &merged, &fire, &corrupt));
    m.next(&buf, &buf_next, None);
    let bc_in = m.wire("buf_count_in", &(bc.q() + take.gate(&in_elems)));
    let needs = (&need_first, later.as_ref().map(|ls| ls.seg_cnt_q.q()));
    let bc_next = count_next(&mut m, &bc_in, needs, &first, (&fire, &corrupt));
    m.next(&bc, &bc_next, None);
    for r in &pos_reps {
        m.next(r, &bc_next.resize(posw), None);
    }
    let done_next = (&in_done.q() | (&take & &s_last)) & !(&end_xfer | &corrupt);
    m.next(&in_done, &done_next, None);
    // A last beat without elements is corrupt whenever it comes (the compressor never sends
    // an empty beat): the windows before it leave without `m_last_o`, then an error beat.
    let empty_next = (&empty_end.q() | (&take & &s_last & in_elems.eq_lit(0))) & !&corrupt;
    m.next(&empty_end, &empty_next, None);
    let sec_next =
        (&last_sec | &corrupt).select(&Expr::zero(secw), &(sec.q() + Expr::lit(secw, 1)));
    let sec_next = m.wire("sec_next", &sec_next);
    m.next(&sec, &sec_next, Some(&(&fire | &corrupt)));
    for r in &first_reps {
        m.next(r, &sec_next.eq_lit(0), Some(&(&fire | &corrupt)));
    }
    if let Some(bufn) = &bufn {
        // Never above `buf_count_q`, which `in_ready` keeps within `posw` bits when a beat
        // is taken.
        let left = m.wire("buf_count_left", &(bc.q() - &need));
        if posw < bcw {
            m.unused(&left.slice(posw, bcw - posw));
        }
        let pos_fired = left.resize(posw);
        let n = NeedSide {
            s_data: &s_data,
            in_elems: &in_elems,
            take: &take,
            pos: &pos,
            pos_fired: &pos_fired,
        };
        need_side_next(&mut m, p, bufn, &n, &drop, (&fire, &corrupt));
    }
    if let Some(ls) = &later {
        m.next(&ls.mask_q, &buf_mask, Some(&(&fire & &first)));
    }

    // An error beat's data is zero: cleared behind the register, off the path of `corrupt`.
    let o_data = st_out.reg(&mut m, "out_data_q", &sector);
    let o_last = st_out.reg(&mut m, "out_last_q", &(&end_xfer | &corrupt));
    let o_err = st_out.reg(&mut m, "out_err_q", &corrupt);
    let o_data = m.wire("out_data", &o_err.select(&Expr::zero(l * w), &o_data));
    let ends = out_pipe.finish(&mut m, &m_ready);
    out.drive(
        &mut m,
        &ends.out_valid,
        &[("data", o_data), ("last", o_last), ("err", o_err)],
    );
    m.finish()
}

/// The refill side of the decompressor ([`refill`]).
struct Refill {
    /// An input beat is taken this cycle.
    take: Expr,
    /// The beat's element count (a malformed `bytes` counts as a full beat).
    in_elems: Expr,
    /// Register copies of the buffer count's low bits: the beat's placement.
    pos_reps: Vec<Reg>,
    /// Width of a placement.
    posw: u32,
    /// The buffer with the beat's elements placed after the buffered ones.
    merged: Expr,
}

/// Refill (FORMATS §3.3): take a beat while the transfer is open and the buffer has room for
/// a full one, count its elements and place them after the buffered elements. `regs` are
/// `buf_q`, `buf_count_q` and `in_done_q`; `cap` the buffer's capacity and count width.
fn refill(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    s_in: stream::Stream,
    regs: (&Expr, &Expr, &Expr),
    cap: (u32, u32),
) -> Refill {
    let (w, l) = (p.word_bits, p.lanes);
    let (buf_q, bc_q, in_done_q) = regs;
    let (bcap, bcw) = cap;
    let s_data = s_in.field("data");
    let s_bytes = s_in.field("bytes");
    let s_ready = m.wire(
        "in_ready",
        &(!in_done_q & bc_q.le(&Expr::lit(bcw, (bcap - l) as u64))),
    );
    let take = m.wire("take", &s_in.fire());
    s_in.accept(m, &s_ready);
    let eb_shift = clog2((w / 8) as u64);
    // A beat adds at most its lanes: a `bytes` above the bus width (a malformed beat) counts
    // as a full beat, so the buffer count stays consistent (docs/FORMATS.md, ZVC §3.3).
    let cw = bcw.max(s_bytes.width());
    let claimed = s_bytes.shr(eb_shift).resize(cw);
    let full = Expr::lit(cw, l as u64);
    let clamped = m.wire("in_elems_full", &claimed.gt(&full).select(&full, &claimed));
    let in_elems = m.wire("in_elems", &clamped.resize(bcw));
    if cw > bcw {
        // At most `lanes` (< 2^bcw): the high bits are zero.
        m.unused(&clamped.slice(bcw, cw - bcw));
    }
    if eb_shift > 0 {
        m.unused(&s_bytes.slice(0, eb_shift));
    }
    // The beat is placed after the buffered elements as they are before this cycle's sector
    // leaves (at `buf_count_q`, which `in_ready` keeps at most `bcap - lanes`), and the
    // sector's elements are dropped from the merged buffer afterwards: the placement depends
    // on registers only, and the drop is chosen by `fire` at the end (both orders give the
    // same buffer).
    let posw = clog2((bcap - l) as u64 + 1);
    // The placement shifter's selects come from register copies of the count's low bits,
    // one per 128 buffer bits (`docs/TOOLCHAIN.md`, bounded fan-out).
    let copies = (bcap as usize * w as usize).div_ceil(128);
    let pos_reps = m.reg_replicas("buf_pos_q", posw, Some(0), copies);
    m.annotate("copies of buf_count_q[posw-1:0]: the beat's placement");
    let pos: Vec<Expr> = pos_reps.iter().map(|r| r.q()).collect();
    // A copy whose lanes only ever see zeros below them does not need the low bits.
    for p in &pos {
        m.unused(p);
    }
    let in_lanes2 = beat_lanes(m, (&s_data, &in_elems), w, bcap);
    let placed = shift_lanes_copies(m, "ins", &in_lanes2, &pos, true);
    let placed = Expr::cat_lsb(&placed);
    let merged = m.wire("buf_merged", &(buf_q | &take.gate(&placed)));
    Refill {
        take,
        in_elems,
        pos_reps,
        posw,
        merged,
    }
}

/// The element count after this cycle (`buf_count_next`) from the count with the arriving
/// beat (`bc_in`): less the sector's need when it fires (the first sector's or, with later
/// sectors, the registered one), 0 after a corrupt stream. Both differences are taken from
/// registers in parallel with `has_data`, so `fire` only selects.
fn count_next(
    m: &mut ModuleBuilder,
    bc_in: &Expr,
    (need_first, need_later): (&Expr, Option<Expr>),
    first: &Expr,
    (fire, corrupt): (&Expr, &Expr),
) -> Expr {
    let fired = match need_later {
        Some(nl) => first.select(&(bc_in - need_first), &(bc_in - &nl)),
        None => bc_in - need_first,
    };
    let fired = m.wire("buf_count_fired", &fired);
    let next = corrupt.select(&Expr::zero(bc_in.width()), &fire.select(&fired, bc_in));
    m.wire("buf_count_next", &next)
}

/// The arriving beat's elements as `bcap` buffer lanes: only the `in_elems` valid ones of a
/// partial beat are kept, the lanes above the beat are zero.
fn beat_lanes(
    m: &mut ModuleBuilder,
    (data, in_elems): (&Expr, &Expr),
    w: u32,
    bcap: u32,
) -> Vec<Expr> {
    let l = data.width() / w;
    let bcw = in_elems.width();
    let keep: Vec<Expr> = (0..l)
        .map(|i| Expr::lit(bcw, i as u64).lt(in_elems).repeat(w))
        .collect();
    let keep = m.wire("in_keep", &Expr::cat_lsb(&keep));
    let in_masked = m.wire("in_masked", &(data & &keep));
    in_masked
        .lanes(w)
        .into_iter()
        .chain((0..(bcap - l)).map(|_| Expr::zero(w)))
        .collect()
}

/// The need of a window's first sector (its mask elements plus the popcount of its segment
/// `seg_first`). When a segment fits in one element (lanes <= word_bits), every buffered
/// element carries the need it would have as a window's mask, counted when its beat arrives
/// and shifted along with it (`buf_need_q`, returned; [`need_side_next`]): the need is then
/// a register, not a popcount of the buffer in the loop.
fn first_need(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    (bcap, bcw): (u32, u32),
    seg_first: &Expr,
) -> (Option<Reg>, Expr) {
    if p.lanes <= p.word_bits {
        let r = m.reg("buf_need_q", bcap * bcw, Some(0));
        m.annotate("per buffered element: its need as a window's mask element");
        let need = m.wire("need_first", &r.q().slice(0, bcw));
        return (Some(r), need);
    }
    let cnt = popcount(m, "segpop", seg_first);
    let cnt = m.wire("seg_cnt_first", &cnt.zext(bcw));
    let need = &cnt + &Expr::lit(bcw, p.mask_elems() as u64);
    (None, m.wire("need_first", &need))
}

/// The registers of a window's later sectors (windows of more than one sector).
struct LaterSegment {
    mask_q: Reg,
    seg_q: Reg,
    seg_cnt_q: Reg,
}

/// A window's later sectors: the window's mask (`mask_q`, loaded with its first sector) and
/// the next sector's segment and popcount (after sector `sec`), registered one sector
/// ahead on `fire`.
fn later_segment(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    (buf_mask, sec, first): (&Expr, &Expr, &Expr),
    bcw: u32,
    fire: &Expr,
) -> LaterSegment {
    let l = p.lanes;
    let mask_q = m.reg("mask_q", p.window, Some(0));
    m.annotate("mask of the window being expanded");
    let seg_q = m.reg("seg_q", l, Some(0));
    m.annotate("mask segment of the current sector when it is not the window's first");
    let seg_cnt_q = m.reg("seg_cnt_q", bcw, Some(0));
    m.annotate("popcount of seg_q");
    let cur_mask = m.wire("cur_mask", &first.select(buf_mask, &mask_q.q()));
    let segs: Vec<Expr> = (0..p.sectors()).map(|s| cur_mask.slice(s * l, l)).collect();
    let sec_inc = m.wire("sec_inc", &(sec + &Expr::lit(sec.width(), 1)));
    let seg_next = m.wire("seg_next", &mux_tree(&sec_inc, &segs));
    let cnt_next = popcount(m, "nextpop", &seg_next);
    m.next(&seg_q, &seg_next, Some(fire));
    m.next(&seg_cnt_q, &cnt_next.zext(bcw), Some(fire));
    LaterSegment {
        mask_q,
        seg_q,
        seg_cnt_q,
    }
}

/// A realignment buffer's next state (merged lanes and the same lanes with the sector
/// dropped): the dropped ones when the sector leaves (`fire`), zero on `corrupt`.
fn buffer_next(dropped: &[Expr], merged: &Expr, fire: &Expr, corrupt: &Expr) -> Expr {
    let after = fire.select(&Expr::cat_lsb(dropped), merged);
    corrupt.select(&Expr::zero(after.width()), &after)
}

/// The decompressor's output sector: two gathers from registers, chosen at the end by the
/// copies `first_reps[1..]` of the first-sector flag, one per 64 bits. A window's first
/// sector takes its mask segment `seg_first` and its payload after the mask elements
/// (`buf` from bit `mel_bits`); a later one takes `seg_later` and the buffer's head.
/// Selecting the segment first put the select, the prefix count and the gather in series.
fn gather_sector(
    m: &mut ModuleBuilder,
    expand_mod: &Arc<Module>,
    (buf, mel_bits, sw): (&Expr, u32, u32),
    (seg_first, seg_later): (&Expr, Option<&Expr>),
    first_reps: &[Reg],
) -> Expr {
    let gather = |m: &mut ModuleBuilder, name: &str, payload: Expr, nz: &Expr| {
        m.instance(
            expand_mod,
            name,
            &[("payload_i", payload), ("nz_i", nz.clone())],
        )
        .out("data_o")
    };
    let first = gather(m, "u_expand_first", buf.slice(mel_bits, sw), seg_first);
    let Some(seg_q) = seg_later else {
        return first;
    };
    let later = gather(m, "u_expand_later", buf.slice(0, sw), seg_q);
    let parts: Vec<Expr> = first_reps[1..]
        .iter()
        .enumerate()
        .map(|(c, sel)| {
            let lo = c as u32 * 64;
            let n = 64.min(sw - lo);
            sel.q().select(&first.slice(lo, n), &later.slice(lo, n))
        })
        .collect();
    m.wire("sector", &Expr::cat_lsb(&parts))
}

/// What the per-element needs take from the input side: the beat, its element count, whether
/// it is taken this cycle, and the placement copies of the count.
struct NeedSide<'a> {
    s_data: &'a Expr,
    in_elems: &'a Expr,
    take: &'a Expr,
    pos: &'a [Expr],
    /// The beat's position when this cycle's sector leaves: `buf_count_q - need`.
    pos_fired: &'a Expr,
}

/// The next state of `buf_need_q`: each arriving element's need as a window's mask
/// (`popcount(low lanes bits) + M`), giving the same buffer as the data's placement and drop.
/// The beat is placed twice, at `buf_count_q` and at the position it has when the sector
/// leaves, and only the buffered needs are dropped: the late count of the arriving beat
/// passes one shifter, not the placement and the drop in series.
fn need_side_next(
    m: &mut ModuleBuilder,
    p: &ZvcRtlParams,
    bufn: &Reg,
    n: &NeedSide,
    drop: &Expr,
    (fire, corrupt): (&Expr, &Expr),
) {
    let (w, l, mel) = (p.word_bits, p.lanes, p.mask_elems());
    let bcw = n.in_elems.width();
    let bcap = bufn.q().width() / bcw;
    let in_need: Vec<Expr> = n
        .s_data
        .lanes(w)
        .iter()
        .enumerate()
        .map(|(i, e)| {
            // The mask elements are counted as `mel` set bits of the adder tree, which
            // folds the constant into its first levels instead of adding it after them.
            let bits = Expr::cat_lsb(&[e.slice(0, l), Expr::ones(mel)]);
            let c = popcount(m, &format!("in_need{i}"), &bits).resize(bcw);
            Expr::lit(bcw, i as u64).lt(n.in_elems).gate(&c)
        })
        .chain((0..(bcap - l)).map(|_| Expr::zero(bcw)))
        .collect();
    let placed = shift_lanes_copies(m, "ins_need", &in_need, n.pos, true);
    let merged = m.wire(
        "buf_need_merged",
        &(bufn.q() | n.take.gate(&Expr::cat_lsb(&placed))),
    );
    let placed_fired = shift_lanes(m, "ins_need_fired", &in_need, n.pos_fired, true);
    let dropped = shift_lanes(m, "drop_need", &bufn.q().lanes(bcw), drop, false);
    let dropped = m.wire(
        "buf_need_dropped",
        &(Expr::cat_lsb(&dropped) | n.take.gate(&Expr::cat_lsb(&placed_fired))),
    );
    let next = m.wire(
        "buf_need_next",
        &buffer_next(&dropped.lanes(bcw), &merged, fire, corrupt),
    );
    m.next(bufn, &next, None);
}

/// `zvc_loopback`: compressor → decompressor, for the RTL round-trip test (the decompressor
/// returns whole windows; the scoreboard expects the input padded to whole windows).
pub fn loopback(p: &ZvcRtlParams) -> Result<Arc<Module>, HdlError> {
    let comp = compressor(p)?;
    let decomp = decompressor(p)?;
    let mut m = ModuleBuilder::new(format!("zvc_loopback_{}_{}", p.tag(), p.prefix.tag()));
    m.header("Generator: hwzip::rtl::zvc::loopback");
    m.header(format!("Parameters: {}", p.describe()));
    m.header(format!("Spec: {} §6 (round trip through both units)", SPEC));
    stream::chain(&mut m, &[("u_comp", &comp), ("u_decomp", &decomp)], &[]);
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosim::dut::SimDut;
    use crate::cosim::run::RunConfig;
    use crate::cosim::zvc::{measure, run_clean, top, StimConfig, Unit};

    fn check(p: &ZvcRtlParams, unit: Unit, lines: u64, seed: u64) {
        let mut dut = SimDut::new(&top(p, unit).unwrap()).unwrap();
        let cfg = StimConfig {
            run: RunConfig::seeded(lines, seed),
            max_windows: 4,
            ..StimConfig::default()
        };
        run_clean(&mut dut, p, unit, &cfg).unwrap();
    }

    #[test]
    fn rejects_bad_parameters() {
        for (w, l, n) in [
            (12, 8, 32),
            (32, 6, 32),
            (32, 8, 36),
            (32, 8, 4),
            (32, 16, 8),
            (32, 8, 48),
        ] {
            let p = ZvcRtlParams {
                word_bits: w,
                lanes: l,
                window: n,
                ..Default::default()
            };
            let e = compressor(&p).unwrap_err().to_string();
            assert!(e.contains("must") || e.contains("not supported"), "{}", e);
        }
    }

    #[test]
    fn interpreter_matches_model_default() {
        let p = ZvcRtlParams::default();
        check(&p, Unit::Compressor, 300, 1);
        check(&p, Unit::Decompressor, 300, 2);
        check(&p, Unit::Loopback, 150, 3);
    }

    #[test]
    fn interpreter_matches_model_other_shapes() {
        for (w, l, n) in [
            (16, 32, 32),
            (8, 4, 32),
            (32, 4, 64),
            (16, 8, 16),
            (32, 32, 32),
        ] {
            let p = ZvcRtlParams {
                word_bits: w,
                lanes: l,
                window: n,
                ..Default::default()
            };
            check(&p, Unit::Compressor, 60, 11);
            check(&p, Unit::Decompressor, 60, 12);
        }
    }

    #[test]
    fn timing_at_defaults() {
        let p = ZvcRtlParams::default();
        let mut dut = SimDut::new(&compressor(&p).unwrap()).unwrap();
        let t = measure(&mut dut, &p, Unit::Compressor).unwrap();
        eprintln!("compressor timing {:?}", t);
        let mut dut = SimDut::new(&decompressor(&p).unwrap()).unwrap();
        let t2 = measure(&mut dut, &p, Unit::Decompressor).unwrap();
        eprintln!("decompressor timing {:?}", t2);
        // The paper's figures (FORMATS §3.2, §6): 6-cycle line latency, 1 sector per cycle;
        // decompressor output 2 cycles after its data (3 counting the accept cycle).
        assert_eq!(t.latency_cycles, 6, "{:?}", t);
        assert!(t.in_beats_per_cycle > 0.98, "{:?}", t);
        assert!(t2.latency_cycles <= 4, "{:?}", t2);
        assert!(
            t2.raw_bytes_per_cycle > 0.98 * p.beat_bytes() as f64,
            "{:?}",
            t2
        );
    }
}
