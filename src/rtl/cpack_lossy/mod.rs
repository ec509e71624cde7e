//! PACT'12 memory-link C-Pack generators (Sathish, Schulte, Kim; docs/FORMATS.md, PACT'12
//! §2, §3, §6): the streaming block compressor here, the decompressor in `decomp`, the
//! truncation units in [`fp`].
//!
//! Conventions (`docs/FORMATS.md`, "PACT'12 memory-link C-Pack"): a 128 B block is 32
//! little-endian words; input word k of a beat sits at bits `[32k+31:32k]`. Output chunks are
//! 16 B with byte i at bits `[8i+7:8i]`; chunk 0 holds stream bits 0..127, stream bit 0 being
//! bit 7 of byte 0 (the golden model's `chunks`).
//!
//! `cpack_lossy_comp_*` (§6 item 2): `k` words per cycle (2: the paper's 64 bits/cycle),
//! four stages after the beat is accepted, so the first chunk of a 32-word block is valid
//! 16 + 4 cycles after its first word (Table 4: 16 + 3; one stage more for 1 GHz on
//! Nangate45, `docs/FORMATS.md`):
//! * **C** (acceptance cycle): the dictionary loop alone ([`comp_match`]): the words against
//!   the dictionary (byte-equality CAM; the previous beat's pushes, which reach the entry
//!   registers a cycle late, compared directly; word 1's flags for both outcomes of word 0's
//!   push), the pushes and the one-hot write pointer. The dictionary empties after a block's
//!   last beat;
//! * **M → T**: the registered match vectors are merged and the patterns, indices and tokens
//!   formed ([`super::cpack::word_token`], the adaptive engine's token logic); the raw words
//!   go to a block buffer;
//! * **T → E**: tokens accumulate as `acc = ((acc << n0) | tok0) << n1 | tok1` (one-hot
//!   shifts over the few token lengths), `len` adds up and `rem = 1024 − len` counts down;
//!   after the block's last beat the compressed-or-raw decision (`ceil(L/8)` below the raw
//!   bytes of the block's `tcode`, and with `raw_if_n_eq_raw` N below the raw chunk count),
//!   N, the stream and the raw image are registered (stage F);
//! * **F → output**: a 7-stage logarithmic shifter moves the stream by `rem mod 128`
//!   (amount and select from one register copy per 32 lanes); the output register then
//!   shifts out N chunks, one per cycle, from chunk `rem / 128` (a one-hot select), each
//!   beat carrying the block's metadata (`c`, `n`, the stream length `bits`, `tcode`).
//!
//! A block ends with the beat marked `last`, or after `block_bytes/4` words whatever `last`
//! says. Its `tcode` is sampled with its first beat. The input words are what C-Pack runs
//! on: the block's words at t = 0, else the output of `fp_trunc_pack` (packed fields, or
//! `w >> t` with the shifted layout, whose raw fallback is packed here by fixed wiring).

mod comp_match;
mod decomp;
pub mod fp;
pub mod mc;
pub mod mc_top;

pub use decomp::decompressor;
pub use fp::{trunc_pack, unpack_restore};
pub use mc::{chunk_sizer, reqsize_mod};
pub use mc_top::mc_top;

use super::cpack::{
    dict_slots2, dict_store, pick_lowest, shift_by_onehot, token_regs, word_token, CompDims,
    MATCH_KINDS, TOK_W,
};
use crate::hdl::blocks::shift_lanes_copies;
use crate::hdl::stream::{self, Layout};
use crate::hdl::{clog2, Expr, HdlError, Module, ModuleBuilder, Pipeline, Policy, Reg, Stage};
use crate::model::cpack::{CodeTable, PushPolicy};
use crate::model::cpack_lossy::fp::TruncLayout;
use crate::model::cpack_lossy::{LossyParams, CHUNK_BITS};
use comp_match::{beat_match, merge, BeatMatch, DictView};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The spec this generator follows (cited in every module header).
const SPEC: &str = "docs/FORMATS.md, PACT'12";

fn err(msg: String) -> HdlError {
    HdlError {
        module: "cpack_lossy".into(),
        problems: vec![msg],
    }
}

/// Parameters of the PACT'12 hardware: the codec (the golden model's parameters) and the
/// compressor's input width (`cpack_lossy:` section of the YAML configuration).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LossyRtlParams {
    /// Block size, code table, push policy, dictionary, `t` table, layout, MD width.
    pub codec: LossyParams,
    /// 32-bit words the compressor takes per cycle (1 or 2; 2 is the paper's 64 bits).
    pub words_per_cycle: usize,
    /// The MD cache and its MSHRs.
    pub md_cache: mc::MdCacheParams,
    /// Queue depths of the memory-controller top.
    pub queues: mc_top::McQueueParams,
    /// A register stage in front of the compressor's dictionary match (one cycle more, module
    /// suffix `_ci`): the match starts at the unit's own registers, not behind its input
    /// port (the memory-controller top's 1 GHz form).
    pub comp_in_stage: bool,
}

impl Default for LossyRtlParams {
    fn default() -> Self {
        LossyRtlParams {
            codec: LossyParams::default(),
            words_per_cycle: 2,
            md_cache: mc::MdCacheParams::default(),
            queues: mc_top::McQueueParams::default(),
            comp_in_stage: false,
        }
    }
}

impl LossyRtlParams {
    /// Checks what the hardware supports; the message names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        self.codec.validate().map_err(|e| e.to_string())?;
        if ![1, 2].contains(&self.words_per_cycle) {
            return Err(format!(
                "words_per_cycle = {} is not supported (allowed: 1, 2)",
                self.words_per_cycle
            ));
        }
        for tc in 0..4u8 {
            if !self
                .codec
                .cpack_words(tc)
                .is_multiple_of(self.words_per_cycle)
            {
                return Err(format!(
                    "t = {} gives {} words per block, not a multiple of words_per_cycle = {}",
                    self.codec.t_of(tc),
                    self.codec.cpack_words(tc),
                    self.words_per_cycle
                ));
            }
        }
        self.md_cache
            .rtl(self.codec.md_bits)
            .validate()
            .map_err(|e| format!("md_cache: {e}"))?;
        self.queues.validate()?;
        Ok(())
    }

    /// Block width in bits.
    pub fn block_bits(&self) -> u32 {
        self.codec.block_bytes as u32 * 8
    }

    /// Width of the stream-length field: holds `34 · words` (1088 at 128 B).
    pub fn len_bits(&self) -> u32 {
        clog2(TOK_W as u64 * self.codec.words() as u64 + 1)
    }

    /// Human-readable parameter line (headers and reports).
    pub fn describe(&self) -> String {
        format!(
            "{} words_per_cycle={}{}",
            self.codec.describe(),
            self.words_per_cycle,
            if self.comp_in_stage {
                " comp_in_stage"
            } else {
                ""
            }
        )
    }

    /// Module-name suffix: every parameter that changes the hardware.
    fn tag(&self) -> String {
        let c = &self.codec;
        let mut s = format!("b{}", c.block_bytes);
        if self.words_per_cycle != 2 {
            s += &format!("_w{}", self.words_per_cycle);
        }
        if self.comp_in_stage {
            s += "_ci";
        }
        if c.dict_entries != 16 {
            s += &format!("_d{}", c.dict_entries);
        }
        match c.push {
            PushPolicy::NoFullMatch => {}
            PushPolicy::NewOnly => s += "_pnew",
            PushPolicy::AllNonZero => s += "_pall",
        }
        if c.codes == CodeTable::Paper {
            s += "_zcodes";
        }
        if c.raw_if_n_eq_raw {
            s += "_rawn";
        }
        if c.t_table != [0, 8, 12, 16] {
            s += "_t";
            for t in c.t_table {
                s += &format!("{t}");
            }
        }
        if c.layout == TruncLayout::Shifted {
            s += "_shifted";
        }
        s
    }
}

fn header(m: &mut ModuleBuilder, generator: &str, p: &LossyRtlParams, spec: &str) {
    let spec = format!("{SPEC} {spec}");
    m.provenance(&format!("cpack_lossy::{generator}"), &p.describe(), &spec);
    m.header("Chunks: byte i at bits [8i+7:8i]; stream bit 0 = bit 7 of byte 0 of chunk 0");
}

/// The bytes of `v` in order from the top: byte 0 (bits `[7:0]`) becomes the most
/// significant byte (the left-aligned bus the stream is built on).
fn bytes_from_top(v: &Expr) -> Expr {
    Expr::cat(&v.lanes(8))
}

/// `fp::pack` of `n` words `w >> t` (the shifted layout's words), by wiring: the packed
/// stream's bit p (MSB-first in word p/32) is bit `31 − t − (p mod (32 − t))` of word
/// `p / (32 − t)`. Words past the packed count are zero.
fn pack_wiring(words: &[Expr], t: u32) -> Expr {
    let n = words.len();
    let fb = (32 - t) as usize;
    let total = n * fb;
    let mut out_words = Vec::new();
    for k in 0..n {
        let bits: Vec<Expr> = (0..32)
            .map(|b| {
                // Bit b (LSB = 0) of packed word k is stream position 32k + 31 − b.
                let p = 32 * k + 31 - b;
                if p >= total {
                    Expr::zero(1)
                } else {
                    let (src, off) = (p / fb, p % fb);
                    words[src].bit((fb - 1 - off) as u32)
                }
            })
            .collect();
        out_words.push(Expr::cat_lsb(&bits));
    }
    Expr::cat_lsb(&out_words)
}

/// `cpack_lossy_loopback_*`: compressor → decompressor, for the round-trip tests (cosim and
/// `hwzip prove`): C-Pack's words in, `k` per beat, and the same words out, 4 per beat
/// (the compressor's `n` and `bits` are not needed by the decompressor).
pub fn loopback(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    let comp = compressor(p)?;
    let decomp = decompressor(p)?;
    let mut m = ModuleBuilder::new(format!("cpack_lossy_loopback_{}", p.tag()));
    m.header("Generator: hwzip::rtl::cpack_lossy::loopback");
    m.header(format!("Parameters: {}", p.describe()));
    m.header("Spec: docs/FORMATS.md, PACT'12 Sec. 2.2-Sec. 2.4 (round trip through both units)");
    stream::chain(&mut m, &[("u_comp", &comp), ("u_decomp", &decomp)], &[]);
    m.finish()
}

/// `cpack_lossy_lossy_loopback_*`: the whole lossy path, for the round-trip tests (cosim
/// and `hwzip prove`): a block's words and its `tcode` in, `k` words per beat, through
/// truncation, compressor, decompressor (which passes each block's `c` and `tcode` on) and
/// restore; the restored words out, 4 per beat.
pub fn lossy_loopback(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    let trunc = trunc_pack(p)?;
    let comp = compressor(p)?;
    let decomp = decompressor(p)?;
    let restore = unpack_restore(p)?;
    let mut m = ModuleBuilder::new(format!("cpack_lossy_lossy_loopback_{}", p.tag()));
    m.header("Generator: hwzip::rtl::cpack_lossy::lossy_loopback");
    m.header(format!("Parameters: {}", p.describe()));
    m.header("Spec: docs/FORMATS.md, PACT'12 Sec. 2.2-Sec. 2.6 (lossy round trip, all four units)");
    stream::chain(
        &mut m,
        &[
            ("u_trunc", &trunc),
            ("u_comp", &comp),
            ("u_decomp", &decomp),
            ("u_restore", &restore),
        ],
        &[],
    );
    m.finish()
}

/// `cpack_lossy_comp`: words in, chunks out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_data_i[32k-1:0]`/`s_last_i`/`s_tcode_i[1:0]` →
/// `m_valid_o`/`m_ready_i`/`m_chunk_o[127:0]`/`m_last_o`/`m_c_o`/`m_n_o[3:0]`/
/// `m_bits_o`/`m_tcode_o[1:0]`.
pub fn compressor(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let c = &p.codec;
    let d = CompDims::new(
        p.codec.cpack(),
        (p.block_bits(), p.len_bits()),
        p.words_per_cycle,
    );
    let mut m = ModuleBuilder::new(format!("cpack_lossy_comp_{}", p.tag()));
    header(
        &mut m,
        "compressor",
        p,
        "§2.2-§2.4 (codes, dictionary, chunks, raw fallback), §2.6 (truncated raw), §6 item 2",
    );
    m.header(format!(
        "{} words per cycle; first chunk {} cycles after a {}-word block's first word \
         (acceptance counted), then N chunks",
        d.k,
        d.steps + 4 + usize::from(p.comp_in_stage),
        d.nw
    ));
    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[("data", 32 * d.k as u32), ("last", 1), ("tcode", 2)]),
    );
    let s_valid = s_in.valid.clone();
    let data = s_in.field("data");
    let s_last = s_in.field("last");
    let s_tcode = s_in.field("tcode");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    let r = stage_c_regs(&mut m, &d);
    // Stages: M (a beat's matches), T (its tokens; a block's last beat goes on), F (the
    // block), out (N chunks from one block).
    let mut pl = Pipeline::new(&mut m, "pipe", Policy::Bubble, &s_valid);
    // With `comp_in_stage`, stage I registers the beat in front of the match.
    let (data, s_last, s_tcode) = if p.comp_in_stage {
        let ist = pl.stage(&mut m, "i");
        (
            ist.reg(&mut m, "i_data_q", &data),
            ist.reg(&mut m, "i_last_q", &s_last),
            ist.reg(&mut m, "i_tcode_q", &s_tcode),
        )
    } else {
        (data, s_last, s_tcode)
    };
    let mst = pl.stage(&mut m, "m");
    let tst = pl.stage(&mut m, "t");
    let last_t = m.reg("t_last_q", 1, None);

    let sc = stage_c(&mut m, &d, &r, &data, &s_last, &s_tcode);
    let h = handshake(&mut m, &mut pl, &mst, &tst, last_t, &m_ready);
    stage_c_next(&mut m, &d, &r, &sc, &h.accept);
    let sm = stage_m_regs(&mut m, &sc, &h.accept);
    let tk = tokens(&mut m, &d, &sm);
    let st = stage_t_regs(&mut m, &d, &r, &sc, &sm, &tk, &h);
    let e = stage_e(&mut m, c, &d, &st, &h);
    let raw_img = raw_image(&mut m, c, &d, &st);
    let f = stage_f_regs(&mut m, &d, &e, &raw_img, &st.tcode_t, &h.f_load);
    let aligned = stage_f_align(&mut m, &d, &f);
    let fields = output(&mut m, &d, &f, &h, &aligned);
    pl.finish_ports(&mut m, s_in, out, &fields);
    m.finish()
}

/// Stage C's registers: block position, `tcode`, dictionary, pointer, pending writes, raw words.
struct DictRegs {
    first: Reg,
    beat: Reg,
    tcode_q: Reg,
    valid: Reg,
    dict_ok: Reg,
    wsel: Reg,
    raw: Reg,
    dict: Vec<Reg>,
    pend_w: Vec<Reg>,
    pend_we: Vec<Reg>,
    pend_live: Vec<Reg>,
}

/// Stage C registers: block position, `tcode`, dictionary entries, pointer, pending writes.
fn stage_c_regs(m: &mut ModuleBuilder, d: &CompDims) -> DictRegs {
    let (k, ne) = (d.k, d.ne);
    // ---- Stage C registers ----
    let first = m.reg("first_q", 1, Some(1));
    let beat = m.reg("beat_q", d.cw, Some(0));
    let tcode_q = m.reg("tcode_q", 2, None);
    let valid = m.reg("dict_valid_q", ne as u32, Some(0));
    // Valid entries whose register is up to date (no pending write).
    let dict_ok = m.reg("dict_ok_q", ne as u32, Some(0));
    // The write pointer, one-hot (it selects entries in the compare loop).
    let wsel = m.reg("dict_wsel_q", ne as u32, Some(1));
    let raw = m.reg("raw_q", d.l, None);
    let dict: Vec<_> = (0..ne)
        .map(|j| m.reg(&format!("dict{}_q", j), 32, None))
        .collect();
    // The previous beat's pushes reach the dictionary registers one cycle late.
    let pend_w: Vec<_> = (0..k)
        .map(|i| m.reg(&format!("pend_word{}_q", i), 32, None))
        .collect();
    let pend_we: Vec<_> = (0..k)
        .map(|i| m.reg(&format!("pend_we{}_q", i), ne as u32, Some(0)))
        .collect();
    let pend_live: Vec<_> = (0..k)
        .map(|i| m.reg(&format!("pend_live{}_q", i), 1, Some(0)))
        .collect();
    DictRegs {
        first,
        beat,
        tcode_q,
        valid,
        dict_ok,
        wsel,
        raw,
        dict,
        pend_w,
        pend_we,
        pend_live,
    }
}

/// The beat in stage C: its words, block end, `tcode` and matches against the dictionary.
struct StageC {
    beat_cur: Expr,
    blk_end: Expr,
    tcode_cur: Expr,
    wsel0: Expr,
    words: Vec<Expr>,
    bm: BeatMatch,
}

/// Stage C: the beat's words against the dictionary and its pending writes, and the pushes.
fn stage_c(
    m: &mut ModuleBuilder,
    d: &CompDims,
    r: &DictRegs,
    data: &Expr,
    s_last: &Expr,
    s_tcode: &Expr,
) -> StageC {
    let k = d.k;
    let dq: Vec<Expr> = r.dict.iter().map(|r| r.q()).collect();
    m.comment("Stage C: match the beat's words (the dictionary empties after a block's last beat)");
    let fst = r.first.q();
    let beat_cur = r.beat.q();
    let blk_end = m.wire("blk_end", &(s_last | &beat_cur.eq_lit(d.steps as u64 - 1)));
    let tcode_cur = m.wire("tcode_cur", &fst.select(s_tcode, &r.tcode_q.q()));
    let wsel0 = r.wsel.q();
    let words: Vec<Expr> = (0..k)
        .map(|i| m.wire(&format!("in_w{}", i), &data.slice(32 * i as u32, 32)))
        .collect();
    let pending: Vec<(Expr, Expr, Expr)> = (0..k)
        .map(|i| (r.pend_w[i].q(), r.pend_we[i].q(), r.pend_live[i].q()))
        .collect();
    let bm = beat_match(
        m,
        &d.cp,
        &words,
        &DictView {
            dq: &dq,
            valid: r.valid.q(),
            dict_ok: r.dict_ok.q(),
            wsel0: wsel0.clone(),
            pending,
        },
    );
    StageC {
        beat_cur,
        blk_end,
        tcode_cur,
        wsel0,
        words,
        bm,
    }
}

/// The pipeline's load enables, stage T's block-end register and the output's chunk counter.
struct Handshake {
    last_t: Reg,
    ocnt: Reg,
    on: Reg,
    o_last: Expr,
    o_fire: Expr,
    t_adv: Expr,
    m_adv: Expr,
    accept: Expr,
    f_load: Expr,
    o_load: Expr,
}

/// Handshake: stages F and out, the output's chunk count, and when each stage loads.
fn handshake(
    m: &mut ModuleBuilder,
    pl: &mut Pipeline,
    mst: &Stage,
    tst: &Stage,
    last_t: Reg,
    m_ready: &Expr,
) -> Handshake {
    // ---- Handshake ----
    let fst = pl.stage(m, "f");
    let ost = pl.stage(m, "out");
    let ocnt = m.reg("out_cnt_q", 4, None);
    let on = m.reg("out_n_q", 4, None);
    let o_last = m.wire("out_last", &ocnt.q().eq(&(on.q() - Expr::lit(4, 1))));
    let o_fire = m.wire("out_fire", &(&ost.valid() & m_ready));
    pl.filter(m, tst, &last_t.q());
    // Stage F takes a block only when empty: the output handshake stays off the 2048
    // stage-F load enables (a block needs 16 beats in, at most 8 chunks out).
    pl.cut(&fst);
    pl.repeat(m, &ost, &o_last);
    let t_adv = pl.leaves(m, tst);
    let m_adv = tst.load();
    let accept = mst.load();
    let f_load = fst.load();
    let o_load = ost.load();
    Handshake {
        last_t,
        ocnt,
        on,
        o_last,
        o_fire,
        t_adv,
        m_adv,
        accept,
        f_load,
        o_load,
    }
}

/// Stage C next state: dictionary entries and pending writes, pointer, block position.
fn stage_c_next(m: &mut ModuleBuilder, d: &CompDims, r: &DictRegs, sc: &StageC, accept: &Expr) {
    let (k, ne, sw) = (d.k, d.ne, d.cw);
    let (blk_end, pushes) = (&sc.blk_end, &sc.bm.pushes);
    // Stage C next state: dictionary, pointer, block position, raw words.
    m.next(&r.first, blk_end, Some(accept));
    let beat_next = blk_end.select(&Expr::zero(sw), &(sc.beat_cur.clone() + Expr::lit(sw, 1)));
    m.next(&r.beat, &beat_next, Some(accept));
    m.next(&r.tcode_q, &sc.tcode_cur, Some(accept));
    let we = dict_slots2(m, ne as u32, pushes, &sc.wsel0);
    for i in 0..k {
        m.next(&r.pend_w[i], &sc.words[i], Some(accept));
        m.next(&r.pend_we[i], &we[i], Some(accept));
        m.next(
            &r.pend_live[i],
            &(&pushes[i] & &!blk_end.clone()),
            Some(accept),
        );
    }
    // The entry registers take the pending words; writing the same words again while no
    // beat arrives is harmless.
    let pw: Vec<Expr> = r.pend_w.iter().map(|r| r.q()).collect();
    let pwe: Vec<Expr> = r.pend_we.iter().map(|r| r.q()).collect();
    dict_store(m, &r.dict, &pw, &pwe, None);
    let wrote = we.iter().fold(Expr::zero(ne as u32), |a, w| a | w.clone());
    let valid_next = blk_end.select(&Expr::zero(ne as u32), &(r.valid.q() | wrote.clone()));
    m.next(&r.valid, &valid_next, Some(accept));
    let ok_next = blk_end.select(&Expr::zero(ne as u32), &(r.valid.q() & !wrote.clone()));
    m.next(&r.dict_ok, &ok_next, Some(accept));
    // The pointer moves by the pushes: rotate the one-hot once per push.
    let nu = ne as u32;
    let rot = |v: &Expr| Expr::cat(&[v.slice(0, nu - 1), v.bit(nu - 1)]);
    let mut wsel_next = sc.wsel0.clone();
    for (i, p) in pushes.iter().enumerate() {
        wsel_next = m.wire(
            &format!("wsel_after{}", i),
            &p.select(&rot(&wsel_next), &wsel_next),
        );
    }
    let wsel_next = blk_end.select(&Expr::lit(nu, 1), &wsel_next);
    m.next(&r.wsel, &wsel_next, Some(accept));
}

/// Stage M's registers: the beat's words, block end, `tcode` and match vectors.
struct StageM {
    last_m: Expr,
    tcode_m: Expr,
    words_m: Vec<Expr>,
    mv_m: Vec<[Expr; 3]>,
    pend_eq_m: Vec<Vec<[Expr; 3]>>,
    pend_valid_m: Vec<Expr>,
    fwd_m: Option<([Expr; 3], Expr)>,
}

/// Stage M registers: the words and their match vectors, in parts, as the beat is accepted.
fn stage_m_regs(m: &mut ModuleBuilder, sc: &StageC, accept: &Expr) -> StageM {
    // ---- Stage M registers: words and match vectors ----
    let last_m = m.reg_next("m_last_q", None, &sc.blk_end, Some(accept));
    let tcode_m = m.reg_next("m_tcode_q", None, &sc.tcode_cur, Some(accept));
    let words_m: Vec<Expr> = sc
        .words
        .iter()
        .enumerate()
        .map(|(i, w)| m.reg_next(&format!("m_word{}_q", i), None, w, Some(accept)))
        .collect();
    let reg =
        |m: &mut ModuleBuilder, name: String, v: &Expr| m.reg_next(&name, None, v, Some(accept));
    let mv_m: Vec<[Expr; 3]> = sc
        .bm
        .mv
        .iter()
        .enumerate()
        .map(|(i, v)| [0, 1, 2].map(|c| reg(m, format!("m_{}{}_q", MATCH_KINDS[c], i), &v[c])))
        .collect();
    let pend_eq_m: Vec<Vec<[Expr; 3]>> = sc
        .bm
        .pend_eq
        .iter()
        .enumerate()
        .map(|(i, pw)| {
            pw.iter()
                .enumerate()
                .map(|(p, e)| {
                    [0, 1, 2]
                        .map(|c| reg(m, format!("m_pend{}_{}{}_q", p, MATCH_KINDS[c], i), &e[c]))
                })
                .collect()
        })
        .collect();
    let pend_valid_m: Vec<Expr> = sc
        .bm
        .pend_valid
        .iter()
        .enumerate()
        .map(|(p, v)| reg(m, format!("m_pend{}_valid_q", p), v))
        .collect();
    let fwd_m = sc.bm.fwd.as_ref().map(|(f, sel)| {
        let f = [0, 1, 2].map(|c| reg(m, format!("m_fw_{}_q", MATCH_KINDS[c]), &f[c]));
        (f, reg(m, "m_fwd_q".into(), sel))
    });
    StageM {
        last_m,
        tcode_m,
        words_m,
        mv_m,
        pend_eq_m,
        pend_valid_m,
        fwd_m,
    }
}

/// The beat's tokens: one-hot patterns, tokens and the pair's total length.
struct Tokens {
    toks: Vec<Expr>,
    onehots: Vec<Expr>,
    plen: Expr,
}

/// Stage T logic: the registered match vectors merged, then each word's pattern and token.
fn tokens(m: &mut ModuleBuilder, d: &CompDims, sm: &StageM) -> Tokens {
    m.comment("Stage T: match vectors merged (pending writes, pair forwarding), then tokens");
    let mut toks = Vec::new();
    let mut onehots = Vec::new();
    let mut plen = Expr::zero(7);
    for (i, (w, v)) in sm.words_m.iter().zip(&sm.mv_m).enumerate() {
        let fw = if i == 1 { sm.fwd_m.as_ref() } else { None };
        let v = merge(v, &sm.pend_eq_m[i], &sm.pend_valid_m, fw);
        let picks = pick_lowest(m, &format!("w{i}"), &v);
        let t = word_token(m, &d.cp, i, w, picks, false);
        plen = plen + t.len.zext(7);
        toks.push(t.tok);
        onehots.push(t.oh);
    }
    Tokens {
        toks,
        onehots,
        plen,
    }
}

/// Stage T's registers: the beat's tokens, patterns and length, and the block's raw words.
struct StageT {
    tok_t: Vec<Expr>,
    oh_t: Vec<Expr>,
    tcode_t: Expr,
    plen_t: Expr,
    raw_t: Expr,
}

/// Stage T registers: tokens and length of the beat; the raw words into the block buffer.
fn stage_t_regs(
    m: &mut ModuleBuilder,
    d: &CompDims,
    r: &DictRegs,
    sc: &StageC,
    sm: &StageM,
    tk: &Tokens,
    h: &Handshake,
) -> StageT {
    let m_adv = &h.m_adv;
    // ---- Stage T registers ----
    m.next(&h.last_t, &sm.last_m, Some(m_adv));
    let (tok_t, oh_t) = token_regs(m, &tk.toks, &tk.onehots, m_adv);
    let tcode_t = m.reg_next("t_tcode_q", None, &sm.tcode_m, Some(m_adv));
    let plen_t = m.reg_next("t_len_q", None, &tk.plen, Some(m_adv));
    // Raw words: slot `beat` takes the beat as it leaves stage M (the input port drives
    // the compare only). Slots past a short (truncated) block's words keep stale words;
    // stage E masks them (no wide clear).
    let beat_m = m.reg_next("m_beat_q", None, &sc.beat_cur, Some(&h.accept));
    let sb = 32 * d.k as u32;
    let data_m = Expr::cat_lsb(&sm.words_m);
    let raw_slots: Vec<Expr> = (0..d.steps)
        .map(|j| {
            let keep = r.raw.q().slice(sb * j as u32, sb);
            beat_m.eq_lit(j as u64).select(&data_m, &keep)
        })
        .collect();
    let raw_d = m.wire("raw_next", &Expr::cat_lsb(&raw_slots));
    m.next(&r.raw, &raw_d, Some(m_adv));
    // The block's raw words as its last beat moves on.
    let blk_mv = m.wire("blk_move", &(m_adv & &sm.last_m));
    let raw_t = m.reg_next("t_raw_q", None, &raw_d, Some(&blk_mv));
    StageT {
        tok_t,
        oh_t,
        tcode_t,
        plen_t,
        raw_t,
    }
}

/// Stage E's results: the accumulated stream, its length and `rem`, and the size decision.
struct StageE {
    a: Expr,
    len_next: Expr,
    rem_next: Expr,
    fits: Expr,
    n_f: Expr,
}

/// Stage E: tokens shifted into the accumulator, `len` and `rem` counted, then the decision.
fn stage_e(
    m: &mut ModuleBuilder,
    c: &LossyParams,
    d: &CompDims,
    st: &StageT,
    h: &Handshake,
) -> StageE {
    let (l, lw, t_adv) = (d.l, d.lw, &h.t_adv);
    // ---- Stage E: accumulate, decide ----
    m.comment(format!(
        "Stage E: acc = ((acc << n0) | tok0) << n1 | tok1; len += n0 + n1; rem = {} - len; \
         decide",
        l
    ));
    let acc = m.reg("acc_q", l, None);
    // A block's last beat restarts the length and `rem` for the next block (reset values
    // for the first). The accumulator keeps the old bits: they sit above `len` and the
    // alignment of stage F shifts them out.
    let len = m.reg("len_q", lw, Some(0));
    let rem = m.reg("rem_q", lw, Some(l as u64));
    let len_in = len.q();
    let mut a = acc.q();
    let minlen = d.groups.iter().map(|(n, _)| *n).min().unwrap_or(1);
    for (i, (oh, tok)) in st.oh_t.iter().zip(&st.tok_t).enumerate() {
        m.unused(&a.slice(l - minlen, minlen));
        let sh = shift_by_onehot(&a, oh, &d.groups);
        a = m.wire(&format!("acc_s{}", i), &(sh | tok.zext(l)));
    }
    // The pair's length comes registered from stage T; `rem` counts down beside `len` so
    // the alignment amount needs no subtraction after the sum.
    let len_next = m.wire("len_next", &(len_in + st.plen_t.zext(lw)));
    let rem_next = m.wire("rem_next", &(rem.q() - st.plen_t.zext(lw)));
    m.next(&acc, &a, Some(t_adv));
    let lt = h.last_t.q();
    m.next(&len, &lt.select(&Expr::zero(lw), &len_next), Some(t_adv));
    let rem_start = Expr::lit(lw, l as u64);
    m.next(&rem, &lt.select(&rem_start, &rem_next), Some(t_adv));
    let (fits, n_f) = mc::size_logic(m, c, &len_next, &st.tcode_t);
    StageE {
        a,
        len_next,
        rem_next,
        fits,
        n_f,
    }
}

/// The block's raw image: its C-Pack words (the shifted layout's packed), bytes from the top.
fn raw_image(m: &mut ModuleBuilder, c: &LossyParams, d: &CompDims, st: &StageT) -> Expr {
    let tcode_t = &st.tcode_t;
    // The raw image, bytes in order from the top; the shifted layout's words packed. A
    // truncated block's C-Pack words end early: the slots after them read as zero.
    let mut word_mask = Vec::new();
    for j in 0..d.nw {
        let short: Vec<Expr> = (0..4u8)
            .filter(|&tc| c.cpack_words(tc) <= j)
            .map(|tc| tcode_t.eq_lit(tc as u64))
            .collect();
        word_mask.push(if short.is_empty() {
            Expr::ones(32)
        } else {
            (!Expr::cat(&short).any()).repeat(32)
        });
    }
    let raw_t = m.wire(
        "t_raw_words",
        &(st.raw_t.clone() & Expr::cat_lsb(&word_mask)),
    );
    match c.layout {
        TruncLayout::Packed => raw_t.clone(),
        TruncLayout::Shifted => {
            let w = raw_t.lanes(32);
            let mut img = raw_t.clone();
            for tc in 1..4u8 {
                let t = c.t_of(tc);
                if t > 0 {
                    img = tcode_t.eq_lit(tc as u64).select(&pack_wiring(&w, t), &img);
                }
            }
            m.wire("raw_packed", &img)
        }
    }
}

/// Stage F's registers: stream, raw image, alignment copies, chunk offset and output fields.
struct StageF {
    /// Chunks per block; register copies of the shift amount and select.
    nq: usize,
    reps: usize,
    acc_fq: Expr,
    raw_fq: Expr,
    sh_reps: Vec<Reg>,
    sel_reps: Vec<Reg>,
    q_fq: Expr,
    c_fq: Expr,
    n_fq: Expr,
    bits_fq: Expr,
    tc_fq: Expr,
}

/// Stage F registers: the decided block, a bit shift below one chunk and a chunk offset.
fn stage_f_regs(
    m: &mut ModuleBuilder,
    d: &CompDims,
    e: &StageE,
    raw_img: &Expr,
    tcode_t: &Expr,
    f_load: &Expr,
) -> StageF {
    let (l, cb) = (d.l, CHUNK_BITS as u32);
    let shw = clog2(l as u64 + 1);
    // A raw image is not shifted: stage F picks it after the shifter.
    let sh_amt = m.wire("align_amt", &e.rem_next.resize(shw));
    // The alignment splits into a bit shift below one chunk (stage F) and a whole-chunk
    // offset (the output's chunk select), so no path crosses more than 7 shifter stages.
    let rb = clog2(cb as u64);
    let nq = (l / cb) as usize;
    // (A raw image starts at chunk 0: the output select applies `c`.)
    let q_oh: Vec<Expr> = (0..nq)
        .map(|j| sh_amt.slice(rb, shw - rb).eq_lit(j as u64))
        .collect();
    // Stream and raw image registered apart: the decision's fan-out stays out of stage E.
    let acc_fq = m.reg_next("f_acc_q", None, &e.a, Some(f_load));
    let raw_fq = m.reg_next("f_raw_q", None, &bytes_from_top(raw_img), Some(f_load));
    // The shift amount and the stream-or-raw select steer 1024 lanes: one register copy per
    // 32 lanes (bounded fan-out, `docs/TOOLCHAIN.md`; 128 lanes per copy measured 0.36 ns of
    // buffers on Nangate45).
    let reps = (l / 32).max(1) as usize;
    let sh_reps = m.reg_replicas("f_shift_q", rb, None, reps);
    let sel_reps = m.reg_replicas("f_sel_q", 1, None, reps);
    for (r, sr) in sh_reps.iter().zip(&sel_reps) {
        m.next(r, &sh_amt.slice(0, rb), Some(f_load));
        m.next(sr, &e.fits, Some(f_load));
    }
    let q_fq = m.reg_next("f_chunk_q", None, &Expr::cat_lsb(&q_oh), Some(f_load));
    let c_fq = m.reg_next("f_c_q", None, &e.fits, Some(f_load));
    let n_fq = m.reg_next("f_n_q", None, &e.n_f, Some(f_load));
    let bits_fq = m.reg_next("f_bits_q", None, &e.len_next, Some(f_load));
    let tc_fq = m.reg_next("f_tcode_q", None, tcode_t, Some(f_load));
    StageF {
        nq,
        reps,
        acc_fq,
        raw_fq,
        sh_reps,
        sel_reps,
        q_fq,
        c_fq,
        n_fq,
        bits_fq,
        tc_fq,
    }
}

/// Stage F: the stream left-aligned below one chunk by a log shifter, or the raw image.
fn stage_f_align(m: &mut ModuleBuilder, d: &CompDims, f: &StageF) -> Expr {
    let l = d.l;
    // ---- Stage F: left-align; output: N chunks ----
    m.comment(format!(
        "Stage F: shift the stream left by ({} - len) mod 128 (log shifter, LSB first)",
        l
    ));
    let amts: Vec<Expr> = f.sh_reps.iter().map(|r| r.q()).collect();
    let lanes = shift_lanes_copies(m, "align", &f.acc_fq.lanes(1), &amts, true);
    let shifted_acc = Expr::cat_lsb(&lanes);
    let gw = l / f.reps as u32;
    let img: Vec<Expr> = f
        .sel_reps
        .iter()
        .enumerate()
        .map(|(g, r)| {
            let lo = gw * g as u32;
            r.q()
                .select(&shifted_acc.slice(lo, gw), &f.raw_fq.slice(lo, gw))
        })
        .collect();
    m.wire("aligned", &Expr::cat_lsb(&img))
}

/// Output register: N chunks of the aligned block, one per beat, with the block's fields.
fn output(
    m: &mut ModuleBuilder,
    d: &CompDims,
    f: &StageF,
    h: &Handshake,
    aligned: &Expr,
) -> [(&'static str, Expr); 6] {
    let (l, cb, nq) = (d.l, CHUNK_BITS as u32, f.nq);
    let (o_load, ocnt) = (&h.o_load, &h.ocnt);
    m.comment(format!(
        "Output: one chunk per beat from chunk ({} - len) / 128 on (one-hot select)",
        l
    ));
    let pay = m.reg("out_img_q", l, None);
    // A one-chunk block (16 B) has nothing behind its first chunk.
    let shifted = if l > cb {
        Expr::cat(&[pay.q().slice(0, l - cb), Expr::zero(cb)])
    } else {
        Expr::zero(l)
    };
    m.next(
        &pay,
        &o_load.select(aligned, &shifted),
        Some(&(o_load | &h.o_fire)),
    );
    m.next(
        ocnt,
        &o_load.select(&Expr::zero(4), &(ocnt.q() + Expr::lit(4, 1))),
        Some(&(o_load | &h.o_fire)),
    );
    m.next(&h.on, &f.n_fq, Some(o_load));
    let first_chunk = Expr::lit(nq as u32, 1);
    let oq = m.reg_next(
        "out_chunk_sel_q",
        None,
        &f.c_fq.select(&f.q_fq, &first_chunk),
        Some(o_load),
    );
    let oc = m.reg_next("out_c_q", None, &f.c_fq, Some(o_load));
    let obits = m.reg_next("out_bits_q", None, &f.bits_fq, Some(o_load));
    let otc = m.reg_next("out_tcode_q", None, &f.tc_fq, Some(o_load));
    // Chunk j from the top of the image, selected by the one-hot offset (none set: zero).
    let top = (0..nq).fold(Expr::zero(cb), |acc, j| {
        acc | (pay.q().slice(l - cb * (j as u32 + 1), cb) & oq.bit(j as u32).repeat(cb))
    });
    let top = m.wire("out_top", &top);
    let chunk = m.wire("out_chunk", &Expr::cat(&top.lanes(8)));

    [
        ("chunk", chunk),
        ("last", h.o_last.clone()),
        ("c", oc),
        ("n", h.on.q()),
        ("bits", obits),
        ("tcode", otc),
    ]
}

/// Output beats of a compressed block with code `tc`: its C-Pack words, 4 per beat.
pub fn decomp_beats(c: &LossyParams, tc: u8) -> usize {
    c.cpack_words(tc).div_ceil(4)
}

/// Words in the last output beat of a compressed block with code `tc` (1 to 4).
fn last_beat_words(c: &LossyParams, tc: u8) -> usize {
    c.cpack_words(tc) - 4 * (decomp_beats(c, tc) - 1)
}
