//! C-Pack+Z compressor and decompressor generators (Tavana et al., IPDPS'19, Table II; Chen et
//! al., TVLSI'10; docs/FORMATS.md, adaptive §2.3, §3, §6 `cpack_comp` /
//! `cpack_decomp`).
//!
//! Both units speak the golden model's bitstream ([`crate::model::cpack`]) on a bus of
//! `L = 8·line_bytes` bits, **left-aligned** as the BDI units ([`super::bdi`]): stream bit p
//! (MSB-first) is bus bit `L−1−p`, zero after the stream; an uncompressed line is its bytes in
//! order, `ok = 0`, `len = L`. Line ports hold byte i in bits `[8i+7:8i]` (word i, little
//! endian, in `[32i+31:32i]`).
//!
//! Both units are iterative: `k = cpack_words_per_cycle` words (2 by default: the original
//! C-Pack pair pipeline, the second word of a pair also compared with the first one when
//! that one is pushed) per cycle, `P = line_bytes / 4k` cycles per line (8 at 64 B). Latency
//! counts the acceptance cycle as 1 (as `cosim::adaptive::measure`).
//!
//! Compressor (`cpack_comp_*`): latency `P + 4` (12 at 64 B), II = `P` (8):
//! 1. accept: the line register (rotated by `32k` bits every step, so it is back in place
//!    after the last one) and an empty dictionary;
//! 2. `P` classify steps (stage C): each word's four byte-equalities against every entry
//!    (valid bits; the pair forwarding), formed one step ahead and registered (`PreMatch`;
//!    the dictionary writes land a cycle after their step), zero / narrow detection, three
//!    lowest-index priority encoders (full, 3 bytes, 2 bytes), the pattern, the token (right-aligned, constant
//!    layouts) and the dictionary push (FIFO pointer). Registered (stage T): tokens, one-hot
//!    patterns, the pair length;
//! 3. accumulate (stage E): `acc = ((acc << n0) | tok0) << n1 | tok1` — the shifts are one-hot
//!    muxes over the few token lengths, no barrel shifter per cycle; `rem = L − len` counts
//!    down. After the last pair: the zero block (paper codes, all-zero line), the raw fallback
//!    (`rem ≤ 0`) or the stream, with its left-align amount `rem`, are registered (stage F);
//! 4. left-align (stage F → output register): one logarithmic shifter (`rem` bits).
//!
//! Decompressor (`cpack_decomp_*`): latency `P + 1` (9 at 64 B), II = `P` (8). The first `k`
//! tokens are parsed in the acceptance cycle straight from `s_payload_i` (the dictionary is
//! empty then), the rest from a left-aligned buffer that shifts by the step's length (a
//! one-hot mux); with two tokens a step, token 1 is decoded at every length token 0 may have
//! and token 0's length chooses ([`decode_step`]). The dictionary is rebuilt identically
//! (token 1 reads token 0's word when it was pushed into the slot it names). `s_comp_i = 0` passes the raw line (latency 2); a zero
//! block ends the line in the acceptance cycle (latency 2). `m_err_o = 1` with an all-zero
//! line when `model::cpack::decompress_prefix` rejects the stream: an illegal code (`00` after
//! the first token with the paper's codes; `1111` with the original ones), an index of an
//! entry not yet filled, or a stream running past `L` bits. Bits after the stream are not
//! inspected.

use crate::hdl::blocks::{mux_tree, or_tree, shift_lanes};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{clog2, Expr, HdlError, Module, ModuleBuilder, Pipeline, Policy, Reg, Stage};
use crate::model::cpack::{CodeTable, CpackParams, CpackPattern, PushPolicy};
use crate::model::LineParams;
use std::sync::Arc;

/// The spec this generator follows (cited in every module header).
const SPEC: &str = "docs/FORMATS.md, adaptive";

fn err(msg: String) -> HdlError {
    HdlError {
        module: "cpack".into(),
        problems: vec![msg],
    }
}

/// Per-word patterns of the stream (the zero block is handled per line), in one-hot order.
const PATS: [CpackPattern; 6] = CpackPattern::WORD_PATTERNS;
const PZ: usize = 0;
const PX: usize = 1;
const PF: usize = 2;
const PH: usize = 3;
const PN: usize = 4;
const PT: usize = 5;

/// Widest token (new word: 2-bit code + 32 bits).
pub(crate) const TOK_W: u32 = 34;

/// Lowest set position of `v` (1-bit terms, a power of two of them): (any, index), a
/// binary tree of 2:1 muxes (log depth).
fn lowest(v: &[Expr]) -> (Expr, Expr) {
    if v.len() == 1 {
        return (v[0].clone(), Expr::zero(0));
    }
    let h = v.len() / 2;
    let (alo, ilo) = lowest(&v[..h]);
    let (ahi, ihi) = lowest(&v[h..]);
    let any = &alo | &ahi;
    let idx = if ilo.width() == 0 {
        !&alo
    } else {
        Expr::cat(&[!&alo, alo.select(&ilo, &ihi)])
    };
    (any, idx)
}

/// Token lengths grouped: (length, one-hot pattern positions with that length).
pub(crate) fn length_groups(cp: &CpackParams) -> Vec<(u32, Vec<usize>)> {
    let mut g: Vec<(u32, Vec<usize>)> = Vec::new();
    for (i, pat) in PATS.iter().enumerate() {
        let n = cp.token_bits(*pat) as u32;
        match g.iter_mut().find(|(l, _)| *l == n) {
            Some((_, v)) => v.push(i),
            None => g.push((n, vec![i])),
        }
    }
    g
}

/// `v << n` (same width) by a one-hot choice among the token lengths.
pub(crate) fn shift_by_onehot(v: &Expr, sel: &Expr, groups: &[(u32, Vec<usize>)]) -> Expr {
    let terms: Vec<Expr> = groups
        .iter()
        .zip(length_sel(sel, groups))
        .map(|((n, _), s)| s.gate(&v.shl(*n)))
        .collect();
    or_tree(terms, v.width())
}

/// Per token length (`groups`), whether the token whose one-hot pattern is `oh` has it.
pub(crate) fn length_sel(oh: &Expr, groups: &[(u32, Vec<usize>)]) -> Vec<Expr> {
    groups
        .iter()
        .map(|(_, pats)| {
            Expr::cat(&pats.iter().map(|i| oh.bit(*i as u32)).collect::<Vec<_>>()).any()
        })
        .collect()
}

/// A decode step's inputs: the stream (first bit on top), the dictionary, its valid bits and
/// write pointer as the step sees them, and whether this is a line's first step.
struct StepIn {
    buf: Expr,
    dict: Vec<Expr>,
    valid: Expr,
    wptr: Expr,
    first: Expr,
}

/// A decode step's tokens: their words and pushes, whether any is an error, the step's
/// length (`(n, flag)`: the step's tokens are `n` bits long, one flag set), and the first
/// token's zero-block code (the paper's codes).
struct StepDec {
    words: Vec<Expr>,
    pushes: Vec<Expr>,
    err: Expr,
    lens: Vec<(u32, Expr)>,
    zb0: Expr,
}

/// `v` shifted by the step's length (one-hot `lens`).
fn step_shift(v: &Expr, lens: &[(u32, Expr)]) -> Expr {
    let terms: Vec<Expr> = lens.iter().map(|(n, s)| s.gate(&v.shl(*n))).collect();
    or_tree(terms, v.width())
}

/// The `k` (1 or 2) tokens of a decode step. With two, the second token is parsed at every
/// length the first may have, beside the first (`t1_at<n>`): its error and the step's
/// length (`pair_len<n>`) are chosen by the first token's length, so neither waits for two
/// decodes in a row; its word comes from the window the first's length selects (`t1_win`).
fn decode_step(m: &mut ModuleBuilder, cp: &CpackParams, k: usize, x: &StepIn) -> StepDec {
    let groups = length_groups(cp);
    let l = x.buf.width();
    let t0w = m.wire("t0_win", &x.buf.slice(l - TOK_W, TOK_W));
    let t0 = parse(m, "t0", cp, &t0w);
    let mut words = Vec::new();
    let mut pushes = Vec::new();
    let d0 = m.wire("t0_dict", &mux_tree(&t0.idx, &x.dict));
    words.push(m.wire("t0_word", &token_word(&t0, &d0)));
    pushes.push(m.wire("t0_push", &token_push(cp.push, &t0.oh)));
    let v0 = mux_tree(&t0.idx, &x.valid.lanes(1));
    let e0 = &(&t0.illegal | &(&uses_index(&t0.oh) & &!&v0)) | &(&t0.zb & &!&x.first);
    let mut errs = vec![m.wire("t0_err", &e0)];
    let sel0: Vec<Expr> = length_sel(&t0.oh, &groups)
        .iter()
        .zip(&groups)
        .map(|(e, (n, _))| m.wire(&format!("t0_len{}", n), e))
        .collect();
    let lens = if k == 1 {
        groups.iter().map(|(n, _)| *n).zip(sel0).collect()
    } else {
        // The second token at each length of the first.
        let cands: Vec<(Expr, Parsed)> = groups
            .iter()
            .map(|(a, _)| {
                let t = format!("t1_at{}", a);
                let w = m.wire(&format!("{}_win", t), &x.buf.slice(l - a - TOK_W, TOK_W));
                let pr = parse(m, &t, cp, &w);
                (w, pr)
            })
            .collect();
        let choose = |f: &dyn Fn(&(Expr, Parsed)) -> Expr, w: u32| {
            or_tree(
                cands
                    .iter()
                    .zip(&sel0)
                    .map(|(c, s)| s.gate(&f(c)))
                    .collect(),
                w,
            )
        };
        // The second token's pattern and index chosen among the candidates', its literal
        // fields from the window chosen the same way.
        let t1w = m.wire("t1_win", &choose(&|c| c.0.clone(), TOK_W));
        let oh1 = m.wire("t1_pat", &choose(&|c| c.1.oh.clone(), 6));
        let idx1 = m.wire("t1_idx", &choose(&|c| c.1.idx.clone(), cp.index_bits()));
        // Its code bits and zero-word flag were read in the candidates.
        m.unused(&t1w.slice(TOK_W - 2, 2));
        m.unused(&oh1.bit(PZ as u32));
        let t1 = Parsed::from_fields(&t1w, oh1, Expr::zero(1), Expr::zero(1), idx1);
        // Forwarding: the entry the first token pushes to is valid and holds its word.
        let push0 = pushes[0].clone();
        let fwd = |idx: &Expr| &push0 & &idx.eq(&x.wptr);
        let hit = m.wire("t1_fwd", &choose(&|c| fwd(&c.1.idx), 1));
        let d1 = hit.select(&words[0], &mux_tree(&t1.idx, &x.dict));
        let d1 = m.wire("t1_dict", &d1);
        words.push(m.wire("t1_word", &token_word(&t1, &d1)));
        pushes.push(m.wire("t1_push", &token_push(cp.push, &t1.oh)));
        let e1 = choose(
            &|(_, c)| {
                let v = &fwd(&c.idx) | &mux_tree(&c.idx, &x.valid.lanes(1));
                &(&c.illegal | &(&uses_index(&c.oh) & &!&v)) | &c.zb
            },
            1,
        );
        errs.push(m.wire("t1_err", &e1));
        let mut sums: std::collections::BTreeMap<u32, Vec<Expr>> = Default::default();
        for (((a, _), s0), (_, c)) in groups.iter().zip(&sel0).zip(&cands) {
            for ((b, _), s1) in groups.iter().zip(length_sel(&c.oh, &groups)) {
                sums.entry(a + b).or_default().push(s0 & &s1);
            }
        }
        sums.into_iter()
            .map(|(n, t)| (n, m.wire(&format!("pair_len{}", n), &Expr::cat(&t).any())))
            .collect()
    };
    StepDec {
        words,
        pushes,
        err: Expr::cat(&errs).any(),
        lens,
        zb0: t0.zb.clone(),
    }
}

/// Length of the token whose one-hot pattern is `oh`, `width` bits wide.
pub(crate) fn token_len(oh: &Expr, groups: &[(u32, Vec<usize>)], width: u32) -> Expr {
    or_tree(
        groups
            .iter()
            .zip(length_sel(oh, groups))
            .map(|((n, _), s)| s.gate(&Expr::lit(width, *n as u64)))
            .collect(),
        width,
    )
}

/// The word a parsed token stands for, with `d` the dictionary entry its index selects.
pub(crate) fn token_word(pr: &Parsed, d: &Expr) -> Expr {
    let oh = &pr.oh;
    let terms = vec![
        oh.bit(PX as u32).gate(&pr.lit32),
        oh.bit(PN as u32).gate(&pr.lit_n.zext(32)),
        oh.bit(PF as u32).gate(d),
        oh.bit(PT as u32)
            .gate(&Expr::cat(&[d.slice(8, 24), pr.lit_t.clone()])),
        oh.bit(PH as u32)
            .gate(&Expr::cat(&[d.slice(16, 16), pr.lit_h.clone()])),
    ];
    or_tree(terms, 32)
}

/// Whether a decoded token reads the dictionary (full, halfword or 3-byte match).
pub(crate) fn uses_index(oh: &Expr) -> Expr {
    oh.bit(PF as u32) | oh.bit(PH as u32) | oh.bit(PT as u32)
}

/// Whether a decoded token pushes its word (the model's `PushPolicy`), from its one-hot
/// pattern.
pub(crate) fn token_push(policy: PushPolicy, oh: &Expr) -> Expr {
    match policy {
        PushPolicy::NewOnly => oh.bit(PX as u32),
        PushPolicy::NoFullMatch => oh.bit(PX as u32) | oh.bit(PH as u32) | oh.bit(PT as u32),
        PushPolicy::AllNonZero => oh.bit(PX as u32) | uses_index(oh),
    }
}

/// Dictionary writes of up to two words per cycle: word 0 into the slot `wsel0` selects
/// (one-hot), word 1 into the next slot if word 0 pushed, else the same; each entry written
/// when `step` and its slot is chosen. Returns the one-hot of the written slots (`we0|we1`).
pub(crate) fn dict_write2(
    m: &mut ModuleBuilder,
    dict: &[Reg],
    words: &[Expr],
    pushes: &[Expr],
    wsel0: &Expr,
    step: &Expr,
) -> Expr {
    let we = dict_slots2(m, dict.len() as u32, pushes, wsel0);
    dict_store(m, dict, words, &we, Some(step));
    we.iter().skip(1).fold(we[0].clone(), |a, w| &a | w)
}

/// Writes entry `j` of `dict` with the last of `words` whose one-hot `wes` has bit `j` set
/// (when `step`, if given).
pub(crate) fn dict_store(
    m: &mut ModuleBuilder,
    dict: &[Reg],
    words: &[Expr],
    wes: &[Expr],
    step: Option<&Expr>,
) {
    for (j, r) in dict.iter().enumerate() {
        let ju = j as u32;
        let mut nv = words[0].clone();
        let mut en = wes[0].bit(ju);
        for (w, we) in words.iter().zip(wes).skip(1) {
            nv = we.bit(ju).select(w, &nv);
            en = &en | &we.bit(ju);
        }
        match step {
            Some(s) => m.next(r, &nv, Some(&(s & &en))),
            None => m.next(r, &nv, Some(&en)),
        }
    }
}

/// The entries up to two pushed words go to (one-hot each): word 0 into the slot `wsel0`
/// selects if it pushes, word 1 into the next slot if word 0 pushed, else the same one.
pub(crate) fn dict_slots2(
    m: &mut ModuleBuilder,
    ne: u32,
    pushes: &[Expr],
    wsel0: &Expr,
) -> Vec<Expr> {
    let we0 = m.wire("we0", &(pushes[0].repeat(ne) & wsel0.clone()));
    if pushes.len() < 2 {
        return vec![we0];
    }
    let rot1 = Expr::cat(&[wsel0.slice(0, ne - 1), wsel0.bit(ne - 1)]);
    let ws1 = pushes[0].select(&rot1, wsel0);
    vec![we0, m.wire("we1", &(pushes[1].repeat(ne) & ws1))]
}

/// Whether a pattern pushes its word (the model's `PushPolicy`), from the word's flags:
/// `nz` (upper 24 bits not zero), `af` (a full match), `a2` (any match, ≥ 2 bytes).
pub(crate) fn push_flag(policy: PushPolicy, nz: &Expr, af: &Expr, a2: &Expr) -> Expr {
    match policy {
        PushPolicy::NewOnly => nz & &!a2,
        PushPolicy::NoFullMatch => nz & &!af,
        PushPolicy::AllNonZero => nz.clone(),
    }
}

/// Parameters of the C-Pack+Z hardware: the codec (the golden model's parameters) and the
/// datapath width. The adaptive engine derives them from its configuration
/// (`AdaptiveRtlParams::cpack_rtl`); the PACT'12 engine will set them directly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpackRtlParams {
    /// Code table, push policy, line size (32, 64 or 128 B) and dictionary entries.
    pub codec: CpackParams,
    /// 32-bit words compressed or decompressed per cycle (1 or 2).
    pub words_per_cycle: usize,
}

impl Default for CpackRtlParams {
    fn default() -> Self {
        CpackRtlParams {
            codec: CpackParams::default(),
            words_per_cycle: 2,
        }
    }
}

impl CpackRtlParams {
    /// Checks what the hardware supports; the message names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        if !crate::model::bits::LINE_BYTES.contains(&self.codec.line_bytes) {
            return Err(format!(
                "line_bytes = {} is not supported (allowed: 16 for proofs, 32, 64, 128)",
                self.codec.line_bytes
            ));
        }
        if ![1, 2].contains(&self.words_per_cycle) {
            return Err(format!(
                "cpack_words_per_cycle = {} is not supported (allowed: 1, 2)",
                self.words_per_cycle
            ));
        }
        if self.codec.dict_init_zero {
            return Err(
                "dict_init_zero: the hardware starts each line with an empty dictionary".into(),
            );
        }
        self.codec
            .validate()
            .map_err(|e| format!("cpack_dict_entries: {}", e))
    }

    /// Line width in bits.
    pub fn line_bits(&self) -> u32 {
        self.codec.line_bytes as u32 * 8
    }

    /// Width of the compressed-length fields: `clog2(line_bits + 1)`.
    pub fn len_bits(&self) -> u32 {
        clog2(self.line_bits() as u64 + 1)
    }

    /// Human-readable parameter line (headers and reports).
    pub fn describe(&self) -> String {
        format!(
            "line_bytes={} cpack_words_per_cycle={} cpack_dict_entries={} cpack_push={} cpack_codes={}",
            self.codec.line_bytes,
            self.words_per_cycle,
            self.codec.dict_entries,
            match self.codec.push {
                PushPolicy::NewOnly => "new-only",
                PushPolicy::NoFullMatch => "no-full-match",
                PushPolicy::AllNonZero => "all-non-zero",
            },
            match self.codec.codes {
                CodeTable::Paper => "paper",
                CodeTable::Original => "original",
            }
        )
    }
}

fn header(m: &mut ModuleBuilder, generator: &str, p: &CpackRtlParams, spec: &str) {
    let spec = format!("{SPEC} {spec}");
    m.provenance(&format!("cpack::{generator}"), &p.describe(), &spec);
    m.header(super::line_codec::LINE_BUS);
}

fn tag(p: &CpackRtlParams) -> String {
    let mut s = format!("l{}", p.codec.line_bytes);
    if p.words_per_cycle != 2 {
        s += &format!("_w{}", p.words_per_cycle);
    }
    if p.codec.dict_entries != 16 {
        s += &format!("_d{}", p.codec.dict_entries);
    }
    match p.codec.push {
        PushPolicy::NewOnly => {}
        PushPolicy::NoFullMatch => s += "_pnf",
        PushPolicy::AllNonZero => s += "_pall",
    }
    if p.codec.codes == CodeTable::Original {
        s += "_orig";
    }
    s
}

/// `(code, code bits)` of a per-word pattern.
fn code(cp: &CpackParams, pat: CpackPattern) -> (u64, u32) {
    let (c, n) = cp.code(pat).unwrap_or((0, 0));
    (c as u64, n)
}

/// `cpack_comp`: line in, C-Pack stream out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_line_i[L-1:0]` → `m_valid_o`/`m_ready_i`/`m_ok_o`/
/// `m_len_o`/`m_payload_o[L-1:0]`.
pub fn compressor(p: &CpackRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let d = CompDims::new(p.codec, (p.line_bits(), p.len_bits()), p.words_per_cycle);
    let mut m = ModuleBuilder::new(format!("cpack_comp_{}", tag(p)));
    header(
        &mut m,
        "compressor",
        p,
        "§2.3 (patterns, dictionary, codes, zero block, raw fallback), §6 cpack_comp",
    );
    m.header(format!(
        "{} words per step, {} steps per line; latency {} (acceptance counted), II {}",
        d.k,
        d.steps,
        d.steps + 4,
        d.steps
    ));
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("line", d.l)]));
    let s_valid = s_in.valid.clone();
    let line_in = s_in.field("line");
    let out = stream::output_port(&mut m, "m");

    // ---- Stage C registers ----
    // Stages: C (one input line, a word group per step), T (a token group per step; the
    // line's last goes on), F (line fields), out.
    let mut pl = Pipeline::new(&mut m, "pipe", Policy::Bubble, &s_valid);
    let cst = pl.stage(&mut m, "c");
    let r = stage_c_regs(&mut m, &d);
    // ---- Stage T registers (declared here, driven below) ----
    let tst = pl.stage(&mut m, "t");
    let last_t = m.reg("t_last_q", 1, None);
    let first_t = m.reg("t_first_q", 1, None);

    let sc = stage_c(&mut m, &d, &r);
    let h = handshake(&mut m, &mut pl, &cst, &tst, &sc.is_last, &last_t);
    let rot = stage_c_next(&mut m, &d, &r, &sc, &line_in, &h);
    let st = stage_t_regs(&mut m, &r, &sc, &last_t, &first_t, &rot, &h);
    let e = stage_e(&mut m, &d, &st, &first_t, &tst.valid(), &h.t_adv);
    let f = stage_f_regs(&mut m, &d, &e, &st, &last_t, &h.f_load);
    let fields = stage_f_align(&mut m, &f, &h);
    pl.finish_ports(&mut m, s_in, out, &fields);
    m.finish()
}

/// Sizes of a C-Pack compressor (the whole-line one here and the PACT'12 streaming one):
/// line, length field, words per step and per line, dictionary.
pub(crate) struct CompDims {
    pub cp: CpackParams,
    /// Line bits and compressed-length bits.
    pub l: u32,
    pub lw: u32,
    /// Words per step, per line, steps per line and the bits of a step count.
    pub k: usize,
    pub nw: usize,
    pub steps: usize,
    pub cw: u32,
    /// Dictionary entries and the bits of an entry index.
    pub ne: usize,
    pub ib: u32,
    /// Token lengths and the patterns of each.
    pub groups: Vec<(u32, Vec<usize>)>,
}

impl CompDims {
    /// The sizes of a compressor of `cp` lines of `l` bits with `lw`-bit lengths that takes
    /// `k` words a step.
    pub fn new(cp: CpackParams, (l, lw): (u32, u32), k: usize) -> CompDims {
        let nw = l as usize / 32;
        let steps = nw / k;
        CompDims {
            l,
            lw,
            k,
            nw,
            steps,
            cw: clog2(steps as u64).max(1),
            ne: cp.dict_entries,
            ib: cp.index_bits(),
            groups: length_groups(&cp),
            cp,
        }
    }

    /// Whether the codes are the paper's table (with its zero block).
    pub fn paper(&self) -> bool {
        self.cp.codes == CodeTable::Paper
    }
}

/// Stage C's registers: step count, the rotating line, dictionary entries, valid bits, pointer.
struct DictRegs {
    cnt: Reg,
    line_q: Reg,
    valid: Reg,
    wptr: Reg,
    allz: Reg,
    dict: Vec<Reg>,
    dq: Vec<Expr>,
    pre: PreMatch,
}

/// The match flags of a step's words, compared one step ahead ([`pre_match_next`]): word `i`
/// against every valid entry as the dictionary was before the previous step's writes
/// (`m_q[i][c]`, one bit per entry; `c` = full, three bytes, halfword), against each word
/// `w` of the previous step (`p_q[i][w][c]`), word 1 against word 0 (`f_q[c]`); and the
/// previous step's writes, per word its entry one-hot (`we_q[w]`) and the word (`w_q[w]`),
/// which reach the dictionary registers one cycle later (the step's loop ends at `we_q`,
/// not at the 32 flops of every entry).
struct PreMatch {
    m_q: Vec<[Reg; 3]>,
    p_q: Vec<Vec<[Reg; 3]>>,
    f_q: Option<[Reg; 3]>,
    we_q: Vec<Reg>,
    w_q: Vec<Reg>,
}

/// The match classes in `bytes_eq` order: full word, upper three bytes, upper halfword.
pub(crate) const MATCH_KINDS: [&str; 3] = ["full", "three", "half"];

/// Stage C registers: step count, line, dictionary valid bits and pointer, all-zero flag, entries.
fn stage_c_regs(m: &mut ModuleBuilder, d: &CompDims) -> DictRegs {
    let ne = d.ne;
    let cnt = m.reg("step_q", d.cw, None);
    let line_q = m.reg("line_q", d.l, None);
    let valid = m.reg("dict_valid_q", ne as u32, None);
    let wptr = m.reg("dict_wptr_q", d.ib, None);
    let allz = m.reg("allz_q", 1, None);
    let dict: Vec<_> = (0..ne)
        .map(|j| m.reg(&format!("dict{}_q", j), 32, None))
        .collect();
    let dq: Vec<Expr> = dict.iter().map(|r| r.q()).collect();
    let k = d.k;
    let flags = |m: &mut ModuleBuilder, name: &str, w: u32| -> [Reg; 3] {
        MATCH_KINDS.map(|c| m.reg(&format!("{name}_{c}_q"), w, None))
    };
    let pre = PreMatch {
        m_q: (0..k)
            .map(|i| flags(m, &format!("pm{i}"), ne as u32))
            .collect(),
        p_q: (0..k)
            .map(|i| (0..k).map(|w| flags(m, &format!("pp{i}_{w}"), 1)).collect())
            .collect(),
        f_q: (k > 1).then(|| flags(m, "pf1", 1)),
        we_q: (0..k)
            .map(|w| m.reg(&format!("pwe{w}_q"), ne as u32, Some(0)))
            .collect(),
        w_q: (0..k)
            .map(|w| m.reg(&format!("pw{w}_q"), 32, None))
            .collect(),
    };
    DictRegs {
        cnt,
        line_q,
        valid,
        wptr,
        allz,
        dict,
        dq,
        pre,
    }
}

/// The match flags of this step's words from the registers of [`PreMatch`]: an entry the
/// previous step wrote takes the flag against the word written there, any other the flag
/// against the dictionary registered then. The dictionary compare is off the step's loop.
fn pre_matches(m: &mut ModuleBuilder, pre: &PreMatch) -> Vec<[Expr; 3]> {
    let ne = pre.we_q[0].q().width();
    (0..pre.m_q.len())
        .map(|i| {
            [0, 1, 2].map(|c| {
                let bits: Vec<Expr> = (0..ne)
                    .map(|j| {
                        let mut v = pre.m_q[i][c].q().bit(j);
                        for (w, we) in pre.we_q.iter().enumerate() {
                            v = we.q().bit(j).select(&pre.p_q[i][w][c].q(), &v);
                        }
                        v
                    })
                    .collect();
                m.wire(
                    &format!("w{i}_pre_{}", MATCH_KINDS[c]),
                    &Expr::cat_lsb(&bits),
                )
            })
        })
        .collect()
}

/// Next state of [`PreMatch`], loaded with the step registers (`en`): the next step's words
/// (of the rotated line `rot`) against the dictionary and valid bits as they are now,
/// against this step's words, and each other; this step's write enables (`wes`). A line's
/// acceptance (`accept`) empties the dictionary: no flags and no writes, and only word 1
/// against word 0 is taken from the accepted line (`line_in`). `accept` thus only gates and
/// selects compare results: it is late where the unit sits behind a controller (`tx`).
#[allow(clippy::too_many_arguments)]
fn pre_match_next(
    m: &mut ModuleBuilder,
    r: &DictRegs,
    (rot, line_in): (&Expr, &Expr),
    words: &[Expr],
    wes: &[Expr],
    accept: &Expr,
    en: &Expr,
) {
    let pre = &r.pre;
    let k = pre.m_q.len();
    let nw: Vec<Expr> = (0..k)
        .map(|i| m.wire(&format!("nw{i}"), &rot.slice(32 * i as u32, 32)))
        .collect();
    let live = !accept;
    // The entries as the previous step left them: its writes are still pending.
    let ne = r.dq.len() as u32;
    let entries: Vec<Expr> = (0..ne)
        .map(|j| {
            let mut e = r.dq[j as usize].clone();
            for (we, w) in pre.we_q.iter().zip(&pre.w_q) {
                e = we.q().bit(j).select(&w.q(), &e);
            }
            m.wire(&format!("dict{j}_now"), &e)
        })
        .collect();
    for (i, w) in nw.iter().enumerate() {
        let per_entry: Vec<[Expr; 3]> = entries.iter().map(|d| bytes_eq(w, d)).collect();
        for c in 0..3 {
            let bits: Vec<Expr> = per_entry.iter().map(|e| e[c].clone()).collect();
            let v = Expr::cat_lsb(&bits) & r.valid.q() & live.repeat(ne);
            m.next(&pre.m_q[i][c], &v, Some(en));
        }
        for (wi, cur) in words.iter().enumerate() {
            for (r, e) in pre.p_q[i][wi].iter().zip(bytes_eq(w, cur)) {
                m.next(r, &e, Some(en));
            }
        }
    }
    if let Some(f) = &pre.f_q {
        let acc = bytes_eq(&line_in.slice(32, 32), &line_in.slice(0, 32));
        for ((r, e), a) in f.iter().zip(bytes_eq(&nw[1], &nw[0])).zip(acc) {
            m.next(r, &accept.select(&a, &e), Some(en));
        }
    }
    for (wi, (we, w)) in wes.iter().zip(words).enumerate() {
        m.next(&pre.we_q[wi], &(we & &live.repeat(we.width())), Some(en));
        m.next(&pre.w_q[wi], w, Some(en));
    }
    // The previous step's writes land now (again while they stay registered: the same word).
    let pend_we: Vec<Expr> = pre.we_q.iter().map(|r| r.q()).collect();
    let pend_w: Vec<Expr> = pre.w_q.iter().map(|r| r.q()).collect();
    dict_store(m, &r.dict, &pend_w, &pend_we, None);
}

/// The step in stage C: its words' tokens and pushes, the pair length, the all-zero flag.
struct StageC {
    is_last: Expr,
    wsel0: Expr,
    enc: WordEnc,
    plen: Expr,
    allz_pair: Expr,
}

/// Stage C: `k` words of the line classified against the dictionary (pair forwarding).
fn stage_c(m: &mut ModuleBuilder, d: &CompDims, r: &DictRegs) -> StageC {
    let ne = d.ne;
    m.comment("Stage C: classify k words against the dictionary (pair forwarding), push");
    let is_last = m.wire("is_last", &r.cnt.q().eq_lit(d.steps as u64 - 1));
    let wsel0: Vec<Expr> = (0..ne).map(|j| r.wptr.q().eq_lit(j as u64)).collect();
    let wsel0 = m.wire("wsel0", &Expr::cat_lsb(&wsel0));
    let line_w = r.line_q.q();
    let matches = pre_matches(m, &r.pre);
    let fwd = r.pre.f_q.as_ref().map(|f| [0, 1, 2].map(|c| f[c].q()));
    let enc = word_enc(
        m,
        &d.cp,
        d.k,
        &mut |m, i| m.wire(&format!("w{}", i), &line_w.slice(32 * i as u32, 32)),
        (&matches, fwd.as_ref()),
        &wsel0,
    );
    // Pair length and the line's all-zero flag. The pair's length is one AND-OR over the
    // pairs of token lengths its one-hot patterns select (no adder after the patterns).
    let plen = if d.k == 2 {
        let sel0 = length_sel(&enc.onehots[0], &d.groups);
        let sel1 = length_sel(&enc.onehots[1], &d.groups);
        let mut terms = Vec::new();
        for ((n0, _), s0) in d.groups.iter().zip(&sel0) {
            for ((n1, _), s1) in d.groups.iter().zip(&sel1) {
                terms.push((s0 & s1).gate(&Expr::lit(7, (n0 + n1) as u64)));
            }
        }
        or_tree(terms, 7)
    } else {
        enc.lens.iter().fold(Expr::zero(7), |a, n| a + n.zext(7))
    };
    let plen = m.wire("pair_len", &plen);
    let allz_pair = m.wire("allz_line", &(&r.allz.q() & &Expr::cat(&enc.zeros).all()));
    StageC {
        is_last,
        wsel0,
        enc,
        plen,
        allz_pair,
    }
}

/// The pipeline's load enables: a line's steps in stage C, its last token group on from T.
struct Handshake {
    fst: Stage,
    t_adv: Expr,
    c_adv: Expr,
    accept: Expr,
    c_done: Expr,
    f_load: Expr,
    o_load: Expr,
}

/// Handshake: stages F and out, stage C repeating for a line's steps, and when each stage loads.
fn handshake(
    m: &mut ModuleBuilder,
    pl: &mut Pipeline,
    cst: &Stage,
    tst: &Stage,
    is_last: &Expr,
    last_t: &Reg,
) -> Handshake {
    // ---- Handshake ----
    let fst = pl.stage(m, "f");
    let ost = pl.stage(m, "out");
    pl.repeat(m, cst, is_last);
    pl.filter(m, tst, &last_t.q());
    let t_adv = pl.leaves(m, tst);
    // A step of stage C is a load of stage T.
    let c_adv = tst.load();
    let accept = cst.load();
    let c_done = m.wire("c_done", &(&c_adv & is_last));
    let f_load = fst.load();
    let o_load = ost.load();
    Handshake {
        fst,
        t_adv,
        c_adv,
        accept,
        c_done,
        f_load,
        o_load,
    }
}

/// Stage C next state: step count, rotated line, all-zero flag, dictionary writes, pointer.
/// Returns the rotated line (back in place after the last step).
fn stage_c_next(
    m: &mut ModuleBuilder,
    d: &CompDims,
    r: &DictRegs,
    sc: &StageC,
    line_in: &Expr,
    h: &Handshake,
) -> Expr {
    let (l, cw, ne, ib) = (d.l, d.cw, d.ne, d.ib);
    let (accept, c_adv) = (&h.accept, &h.c_adv);
    // Stage C next state.
    let one = Expr::lit(cw, 1);
    m.next(
        &r.cnt,
        &accept.select(&Expr::zero(cw), &(r.cnt.q() + one)),
        Some(&(accept | c_adv)),
    );
    let g = 32 * d.k as u32;
    let rot = Expr::cat(&[r.line_q.q().slice(0, g), r.line_q.q().slice(g, l - g)]);
    let rot = m.wire("line_rot", &rot);
    let line_next = m.wire("line_next", &accept.select(line_in, &rot));
    m.next(&r.line_q, &line_next, Some(&(accept | c_adv)));
    m.next(
        &r.allz,
        &accept.select(&Expr::ones(1), &sc.allz_pair),
        Some(&(accept | c_adv)),
    );
    // Dictionary writes: word 0 into slot wptr, word 1 into wptr + push0.
    let pushes = &sc.enc.pushes;
    let wes = dict_slots2(m, ne as u32, pushes, &sc.wsel0);
    let wrote = wes.iter().skip(1).fold(wes[0].clone(), |a, w| &a | w);
    pre_match_next(
        m,
        r,
        (&rot, line_in),
        &sc.enc.words,
        &wes,
        accept,
        &(accept | c_adv),
    );
    m.next(
        &r.valid,
        &accept.select(&Expr::zero(ne as u32), &(r.valid.q() | wrote)),
        Some(&(accept | c_adv)),
    );
    // The pointer moves by the number of pushes: its two successors are formed from the
    // register and the late pushes only select.
    let w = r.wptr.q();
    let succ = |m: &mut ModuleBuilder, n: u64| {
        m.wire(&format!("dict_wptr_p{n}"), &(&w + Expr::lit(ib, n)))
    };
    let w1 = succ(m, 1);
    let w2 = (pushes.len() > 1).then(|| succ(m, 2));
    let moved = match &w2 {
        Some(w2) => {
            let (p0, p1) = (&pushes[0], &pushes[1]);
            (p0 & p1).select(w2, &(p0 | p1).select(&w1, &w))
        }
        None => pushes[0].select(&w1, &w),
    };
    m.next(
        &r.wptr,
        &accept.select(&Expr::zero(ib), &moved),
        Some(&(accept | c_adv)),
    );
    rot
}

/// Stage T's registers: a step's tokens, one-hot patterns, pair length, the line's raw bytes.
struct StageT {
    tok_t: Vec<Expr>,
    oh_t: Vec<Expr>,
    plen_t: Expr,
    allz_t: Expr,
    raw_t: Expr,
}

/// Stage T registers: the tokens and patterns of a step, its first / last flags, the raw line.
fn stage_t_regs(
    m: &mut ModuleBuilder,
    r: &DictRegs,
    sc: &StageC,
    last_t: &Reg,
    first_t: &Reg,
    rot: &Expr,
    h: &Handshake,
) -> StageT {
    let c_adv = &h.c_adv;
    // Stage T registers.
    m.next(last_t, &sc.is_last, Some(c_adv));
    m.next(first_t, &r.cnt.q().eq_lit(0), Some(c_adv));
    let (tok_t, oh_t) = token_regs(m, &sc.enc.toks, &sc.enc.onehots, c_adv);
    let plen_t = m.reg_next("t_len_q", None, &sc.plen, Some(c_adv));
    let allz_t = m.reg_next("t_allz_q", None, &sc.allz_pair, Some(c_adv));
    // The raw line (the rotated register is back in place after the last step), bytes in
    // order for the left-aligned bus; loaded with the last step only.
    let orig = rot.clone();
    let raw_bus = Expr::cat(&orig.lanes(8));
    let raw_t = m.reg_next("t_raw_q", None, &raw_bus, Some(&h.c_done));
    StageT {
        tok_t,
        oh_t,
        plen_t,
        allz_t,
        raw_t,
    }
}

/// Stage E's result: the accumulated stream after a step and the bits still free in the line.
struct StageE {
    acc: Expr,
    rem_next: Expr,
    /// `rem_next > 0`: the stream so far fits the line.
    fits: Expr,
}

/// Stage E: the token accumulator (one-hot shifts by the token lengths) and the free-bit count.
fn stage_e(
    m: &mut ModuleBuilder,
    d: &CompDims,
    st: &StageT,
    first_t: &Reg,
    vt: &Expr,
    t_adv: &Expr,
) -> StageE {
    let l = d.l;
    // ---- Stage E: accumulate ----
    m.comment("Stage E: acc = ((acc << n0) | tok0) << n1 | tok1; rem = L - len");
    let acc = m.reg("acc_q", l, None);
    let rw = clog2((TOK_W as u64) * d.nw as u64 + l as u64) + 1;
    let rem = m.reg("rem_q", rw, None);
    // Wide selects come from logic, not straight from a flop (docs/TOOLCHAIN.md: ABC
    // buffers logic nets, not flop outputs): each is ANDed with the stage's valid.
    let first_v = m.wire("t_first_v", &(&first_t.q() & vt));
    let acc_in = m.wire("acc_in", &first_v.select(&Expr::zero(l), &acc.q()));
    let rem_in = first_v.select(&Expr::lit(rw, l as u64), &rem.q());
    let mut a = acc_in;
    // Every token is at least `minlen` bits: the top bits of each shift input drop out.
    let minlen = d.groups.iter().map(|(n, _)| *n).min().unwrap_or(1);
    for i in 0..d.k {
        m.unused(&a.slice(l - minlen, minlen));
        let ohv = m.wire(&format!("t_pat{}_v", i), &(&st.oh_t[i] & &vt.repeat(6)));
        let sh = shift_by_onehot(&a, &ohv, &d.groups);
        a = m.wire(&format!("acc_s{}", i), &(sh | st.tok_t[i].zext(l)));
    }
    let rem_next = m.wire("rem_next", &(rem_in - st.plen_t.zext(rw)));
    // `rem_next > 0` as `rem_in > len`, compared for both choices of `rem_in` and chosen at
    // the end: the stage's valid only selects (it steers the 512-bit raw/stream choice).
    let plen = st.plen_t.zext(rw - 1);
    let fits_first = Expr::lit(rw - 1, l as u64).gt(&plen);
    let rq = rem.q();
    let fits_later = !rq.bit(rw - 1) & rq.slice(0, rw - 1).gt(&plen);
    let fits = m.wire("fits", &first_v.select(&fits_first, &fits_later));
    m.next(&acc, &a, Some(t_adv));
    m.next(&rem, &rem_next, Some(t_adv));
    StageE {
        acc: a,
        rem_next,
        fits,
    }
}

/// Stage F's registers: the line's stream before alignment, its shift, `ok` and length.
struct StageF {
    pre_q: Expr,
    sh_q: Expr,
    okf_q: Expr,
    lenf_q: Expr,
}

/// Stage F registers: zero block, stream or raw fallback, with the left-align amount and length.
fn stage_f_regs(
    m: &mut ModuleBuilder,
    d: &CompDims,
    e: &StageE,
    st: &StageT,
    last_t: &Reg,
    f_load: &Expr,
) -> StageF {
    let (l, lw) = (d.l, d.lw);
    let (a, rem_next) = (&e.acc, &e.rem_next);
    // Handoff: compressed when rem > 0 (stream < L) or a zero block.
    let fits = e.fits.clone();
    let zb = if d.paper() {
        &st.allz_t & &last_t.q()
    } else {
        Expr::zero(1)
    };
    if !d.paper() {
        m.unused(&st.allz_t);
    }
    let zb = m.wire("zero_block", &zb);
    let okf = m.wire("ok_f", &(&zb | &fits));
    let pre = zb.select(&Expr::zero(l), &fits.select(a, &st.raw_t));
    let shw = clog2(l as u64 + 1);
    let sh_amt = zb.select(
        &Expr::zero(shw),
        &fits.select(&rem_next.slice(0, shw), &Expr::zero(shw)),
    );
    let len_f = zb.select(
        &Expr::lit(lw, 2),
        &fits.select(
            &m.wire(
                "len_next",
                &(Expr::lit(lw, l as u64) - rem_next.slice(0, lw)),
            ),
            &Expr::lit(lw, l as u64),
        ),
    );
    let pre_q = m.reg_next("f_pre_q", None, &pre, Some(f_load));
    let sh_q = m.reg_next("f_shift_q", None, &sh_amt, Some(f_load));
    let okf_q = m.reg_next("f_ok_q", None, &okf, Some(f_load));
    let lenf_q = m.reg_next("f_len_q", None, &len_f, Some(f_load));
    StageF {
        pre_q,
        sh_q,
        okf_q,
        lenf_q,
    }
}

/// Stage F: the left-align shifter and the output registers (`ok`, length, payload).
fn stage_f_align(m: &mut ModuleBuilder, f: &StageF, h: &Handshake) -> [(&'static str, Expr); 3] {
    let o_load = &h.o_load;
    // ---- Stage F: left-align ----
    m.comment("Stage F: left-align the stream (logarithmic shifter, LSB first)");
    let amt = m.wire(
        "align_amt",
        &(&f.sh_q & &h.fst.valid().repeat(f.sh_q.width())),
    );
    let lanes = shift_lanes(m, "align", &f.pre_q.lanes(1), &amt, true);
    let payload = m.wire("payload_f", &Expr::cat_lsb(&lanes));
    let okq = m.reg_next("ok_q", None, &f.okf_q, Some(o_load));
    let lenq = m.reg_next("len_q", None, &f.lenf_q, Some(o_load));
    let payq = m.reg_next("payload_q", None, &payload, Some(o_load));
    [("ok", okq), ("len", lenq), ("payload", payq)]
}

/// Stage C of a C-Pack compressor (`cpack_word_enc`, FORMATS §6 item 1): `k` words (word `i`
/// made by `word`, which names its wire) classified by their match flags against the
/// dictionary (`matches[i]`: full, three-byte and halfword, one bit per valid entry;
/// `wsel0` one-hot of the write pointer), word 1 also against word 0 (`fwd`: its flags
/// against word 0) when that one is pushed (pair forwarding).
pub(crate) struct WordEnc {
    /// The words.
    pub words: Vec<Expr>,
    /// One-hot patterns (`PATS` order).
    pub onehots: Vec<Expr>,
    /// Tokens, right-aligned on `TOK_W` bits.
    pub toks: Vec<Expr>,
    /// Whether each word is pushed.
    pub pushes: Vec<Expr>,
    /// Token lengths (6 bits).
    pub lens: Vec<Expr>,
    /// Whether each word is zero.
    pub zeros: Vec<Expr>,
}

/// Stage T's token registers: each word's token `t_tok<i>_q` and one-hot pattern
/// `t_pat<i>_q`, loaded on `en`.
pub(crate) fn token_regs(
    m: &mut ModuleBuilder,
    toks: &[Expr],
    onehots: &[Expr],
    en: &Expr,
) -> (Vec<Expr>, Vec<Expr>) {
    let mut regs = |what: &str, v: &[Expr]| -> Vec<Expr> {
        v.iter()
            .enumerate()
            .map(|(i, t)| m.reg_next(&format!("t_{what}{i}_q"), None, t, Some(en)))
            .collect()
    };
    (regs("tok", toks), regs("pat", onehots))
}

/// Byte equality of `w` and the entry `d`: [full word, upper three bytes, upper halfword].
pub(crate) fn bytes_eq(w: &Expr, d: &Expr) -> [Expr; 3] {
    let b3 = d.slice(24, 8).eq(&w.slice(24, 8));
    let b2 = d.slice(16, 8).eq(&w.slice(16, 8));
    let b1 = d.slice(8, 8).eq(&w.slice(8, 8));
    let b0 = d.slice(0, 8).eq(&w.slice(0, 8));
    let half = &b3 & &b2;
    let three = &half & &b1;
    let full = &three & &b0;
    [full, three, half]
}

/// The token of word `i` (`w`) from its match vectors.
pub(crate) struct WordToken {
    /// One-hot pattern (`PATS` order).
    pub oh: Expr,
    /// Token, right-aligned on `TOK_W` bits.
    pub tok: Expr,
    /// Whether the word is pushed (when asked for).
    pub push: Option<Expr>,
    /// Token length (6 bits).
    pub len: Expr,
    /// Whether the word is zero.
    pub zero: Expr,
}

/// For each of a word's full, three-byte and halfword match vectors `mv` (valid entries
/// only; wire `<p>_m<kind>`): whether any bit is set and the lowest set slot (wires
/// `<p>_any_<kind>`, `<p>_idx_<kind>`).
pub(crate) fn pick_lowest(m: &mut ModuleBuilder, p: &str, mv: &[Expr; 3]) -> [(Expr, Expr); 3] {
    [0, 1, 2].map(|c| {
        let kind = MATCH_KINDS[c];
        let vec = m.wire(&format!("{p}_m{kind}"), &mv[c]);
        let (a, ix) = lowest(&vec.lanes(1));
        (
            m.wire(&format!("{p}_any_{kind}"), &a),
            m.wire(&format!("{p}_idx_{kind}"), &ix),
        )
    })
}

/// Word `i`'s pattern, index and token from `picks` ([`pick_lowest`] of its match vectors:
/// lowest-slot priority), the pattern order of §6 item 1 and the code table's token layout.
pub(crate) fn word_token(
    m: &mut ModuleBuilder,
    cp: &CpackParams,
    i: usize,
    w: &Expr,
    picks: [(Expr, Expr); 3],
    with_push: bool,
) -> WordToken {
    let groups = length_groups(cp);
    let (anys, idxs): (Vec<Expr>, Vec<Expr>) = picks.into_iter().unzip();
    let z = m.wire(&format!("w{}_zero", i), &!w.any());
    let nz = m.wire(&format!("w{}_wide", i), &w.slice(8, 24).any());
    let (af, a3, a2) = (&anys[0], &anys[1], &anys[2]);
    let mut oh = vec![Expr::zero(1); 6];
    oh[PZ] = z.clone();
    oh[PN] = &!&z & &!&nz;
    oh[PF] = &nz & af;
    oh[PT] = &(&nz & &!af) & a3;
    oh[PH] = &(&nz & &!a3) & a2;
    oh[PX] = &nz & &!a2;
    let oh = m.wire(&format!("w{}_pat", i), &Expr::cat_lsb(&oh));
    let idx_ta = m.wire(&format!("w{}_idx_th", i), &a3.select(&idxs[1], &idxs[2]));
    let idx = m.wire(&format!("w{}_idx", i), &af.select(&idxs[0], &idx_ta));
    let push = with_push.then(|| m.wire(&format!("w{}_push", i), &push_flag(cp.push, &nz, af, a2)));
    // Token, right-aligned on TOK_W bits: code | index | payload.
    let mut terms = Vec::new();
    for (pi, pat) in PATS.iter().enumerate() {
        let (c, cn) = code(cp, *pat);
        let mut parts = vec![Expr::lit(cn, c)];
        if pat.has_index() {
            parts.push(idx.clone());
        }
        let pb = pat.payload_bits() as u32;
        if pb > 0 {
            parts.push(w.slice(0, pb));
        }
        terms.push(oh.bit(pi as u32).gate(&Expr::cat(&parts).zext(TOK_W)));
    }
    let tok = m.wire(&format!("w{}_tok", i), &or_tree(terms, TOK_W));
    let len = token_len(&oh, &groups, 6);
    WordToken {
        oh,
        tok,
        push,
        len,
        zero: z,
    }
}

/// See [`WordEnc`].
pub(crate) fn word_enc(
    m: &mut ModuleBuilder,
    cp: &CpackParams,
    k: usize,
    word: &mut dyn FnMut(&mut ModuleBuilder, usize) -> Expr,
    (matches, fwd): (&[[Expr; 3]], Option<&[Expr; 3]>),
    wsel0: &Expr,
) -> WordEnc {
    let ne = cp.dict_entries;
    let mut words = Vec::new();
    let mut onehots = Vec::new();
    let mut toks = Vec::new();
    let mut pushes: Vec<Expr> = Vec::new();
    let mut lens = Vec::new();
    let mut zeros = Vec::new();
    for (i, mi) in matches.iter().enumerate().take(k) {
        let w = word(m, i);
        // Forwarded entry (word 1): word 0 of the pair, when pushed, in slot wptr.
        // (Evaluating both outcomes of word 0's push and choosing at the end measured
        // slower, 1.565 ns against 1.491 ns, when the compares were in the same cycle; with
        // the flags registered it is faster: docs/FORMATS.md.)
        // Word 1 with the forwarding (slot `wptr`, one-hot `wsel0`, holds word 0's flags when
        // word 0 pushes): its matches for both outcomes, chosen by word 0's push at the end,
        // so the pattern, index and push wait for it by one mux only.
        let picks = match (i, fwd) {
            (1, Some(f)) => {
                let fwd_vec = [0, 1, 2].map(|c| {
                    let bits: Vec<Expr> = (0..ne as u32)
                        .map(|j| wsel0.bit(j).select(&f[c], &mi[c].bit(j)))
                        .collect();
                    Expr::cat_lsb(&bits)
                });
                let with_fwd = pick_lowest(m, "w1f", &fwd_vec);
                let without = pick_lowest(m, "w1n", mi);
                let p0 = &pushes[0];
                [0, 1, 2].map(|c| {
                    let (af, xf) = &with_fwd[c];
                    let (an, xn) = &without[c];
                    let kind = MATCH_KINDS[c];
                    (
                        m.wire(&format!("w1_any_{kind}"), &p0.select(af, an)),
                        m.wire(&format!("w1_idx_{kind}"), &p0.select(xf, xn)),
                    )
                })
            }
            _ => pick_lowest(m, &format!("w{i}"), mi),
        };
        let WordToken {
            oh,
            tok,
            push,
            len: n,
            zero: z,
        } = word_token(m, cp, i, &w, picks, true);
        let push = push.unwrap_or_else(|| Expr::zero(1));
        lens.push(n);
        zeros.push(z);
        words.push(w);
        onehots.push(oh);
        toks.push(tok);
        pushes.push(push);
    }
    WordEnc {
        words,
        onehots,
        toks,
        pushes,
        lens,
        zeros,
    }
}

/// One token decoded from a 34-bit window (MSB = its first stream bit).
pub(crate) struct Parsed {
    /// One-hot per-word pattern (`PATS` order).
    pub(crate) oh: Expr,
    /// Code `00` with the paper's codes (zero block; legal only as the first token).
    pub(crate) zb: Expr,
    /// Illegal code (`1111` with the original codes).
    pub(crate) illegal: Expr,
    /// Dictionary index field.
    pub(crate) idx: Expr,
    /// The word's literal bits: new word (32), narrow / 3-byte low byte, halfword low part.
    pub(crate) lit32: Expr,
    pub(crate) lit_n: Expr,
    pub(crate) lit_t: Expr,
    pub(crate) lit_h: Expr,
}

/// The one-hot pattern (`PATS` order) of a code whose first two bits are `c2` and next two
/// `c4`, with the zero-block flag (the paper's codes) and the illegal flag (the original's).
fn code_pattern(cp: &CpackParams, c2: &Expr, c4: &Expr) -> (Vec<Expr>, Expr, Expr) {
    let long = c2.eq_lit(3);
    let mut oh = vec![Expr::zero(1); 6];
    match cp.codes {
        CodeTable::Paper => {
            oh[PZ] = c2.eq_lit(1);
            oh[PX] = c2.eq_lit(2);
            oh[PF] = &long & &c4.eq_lit(0);
            oh[PH] = &long & &c4.eq_lit(1);
            oh[PN] = &long & &c4.eq_lit(2);
            oh[PT] = &long & &c4.eq_lit(3);
            (oh, c2.eq_lit(0), Expr::zero(1))
        }
        CodeTable::Original => {
            oh[PZ] = c2.eq_lit(0);
            oh[PX] = c2.eq_lit(1);
            oh[PF] = c2.eq_lit(2);
            oh[PH] = &long & &c4.eq_lit(0);
            oh[PN] = &long & &c4.eq_lit(1);
            oh[PT] = &long & &c4.eq_lit(2);
            (oh, Expr::zero(1), &long & &c4.eq_lit(3))
        }
    }
}

/// Decodes the token at the top of `win` (`TOK_W` bits, its first stream bit on top; wires
/// `<name>_c2`, `<name>_c4`, `<name>_pat`, `<name>_idx`).
pub(crate) fn parse(m: &mut ModuleBuilder, name: &str, cp: &CpackParams, win: &Expr) -> Parsed {
    let ib = cp.index_bits();
    let f = |pos: u32, w: u32| win.slice(TOK_W - pos - w, w);
    let c2 = m.wire(&format!("{}_c2", name), &f(0, 2));
    let c4 = m.wire(&format!("{}_c4", name), &f(2, 2));
    let (oh, zb, illegal) = code_pattern(cp, &c2, &c4);
    let idx = match cp.codes {
        CodeTable::Paper => f(4, ib),
        CodeTable::Original => c2
            .bit(1)
            .select(&c2.bit(0).select(&f(4, ib), &f(2, ib)), &f(4, ib)),
    };
    let oh = m.wire(&format!("{}_pat", name), &Expr::cat_lsb(&oh));
    let idx = m.wire(&format!("{}_idx", name), &idx);
    Parsed::from_fields(win, oh, zb, illegal, idx)
}

impl Parsed {
    /// A token's fields from its `TOK_W`-bit window (first stream bit on top; a named
    /// signal), its one-hot pattern, flags and index (`ib` = the index width).
    pub(crate) fn from_fields(win: &Expr, oh: Expr, zb: Expr, illegal: Expr, idx: Expr) -> Parsed {
        let ib = idx.width();
        let f = |pos: u32, w: u32| win.slice(TOK_W - pos - w, w);
        Parsed {
            lit32: f(2, 32),
            lit_n: f(4, 8),
            lit_t: f(4 + ib, 8),
            lit_h: f(4 + ib, 16),
            oh,
            zb,
            illegal,
            idx,
        }
    }
}

/// Token lengths of the original C-Pack codes at many stream positions at once: `b[i]` holds
/// bit `i` of the token starting at each position (bitwise vectors of equal width). Returns,
/// per distinct token length, the positions whose token has that length; the illegal code
/// `1111` counts with the halfword match (its length is never used: the token is an error).
pub(crate) fn position_lengths(cp: &CpackParams, b: &[Expr; 4]) -> Vec<(u32, Expr)> {
    assert!(
        cp.codes == CodeTable::Original,
        "position_lengths: original codes only"
    );
    let (b0, b1, b2, b3) = (&b[0], &b[1], &b[2], &b[3]);
    let long = b0 & b1;
    let mut pats = vec![Expr::zero(b0.width()); 6];
    pats[PZ] = !b0 & !b1;
    pats[PX] = !b0 & b1.clone();
    pats[PF] = b0 & &!b1;
    pats[PH] = &long & &!(b2 ^ b3);
    pats[PN] = &long & &(!b2 & b3.clone());
    pats[PT] = &long & &(b2 & &!b3);
    length_groups(cp)
        .into_iter()
        .map(|(n, ps)| {
            let terms: Vec<Expr> = ps.iter().map(|i| pats[*i].clone()).collect();
            (n, or_tree(terms, b0.width()))
        })
        .collect()
}

/// `cpack_decomp`: C-Pack stream (or raw line) in, line out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_comp_i` (1 = compressed, Comp Alg = C-Pack+Z; 0 = raw
/// line)/`s_payload_i[L-1:0]` → `m_valid_o`/`m_ready_i`/`m_line_o[L-1:0]`/`m_err_o`.
pub fn decompressor(p: &CpackRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let cp = p.codec;
    let l = p.line_bits();
    let lb = p.codec.line_bytes;
    let k = p.words_per_cycle;
    let nw = lb / 4;
    let steps = nw / k;
    let ne = cp.dict_entries;
    let ib = cp.index_bits();
    let mut m = ModuleBuilder::new(format!("cpack_decomp_{}", tag(p)));
    header(
        &mut m,
        "decompressor",
        p,
        "§2.3 (decode, dictionary rebuilt identically), §6 cpack_decomp",
    );
    m.header(format!(
        "{} tokens per step, {} steps per line (the first in the acceptance cycle); latency {}, II {}",
        k,
        steps,
        steps + 1,
        steps
    ));
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("comp", 1), ("payload", l)]));
    let s_valid = s_in.valid.clone();
    let comp = s_in.field("comp");
    let pay = s_in.field("payload");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    let cw = clog2(steps as u64).max(1);
    let pw = clog2(TOK_W as u64 * nw as u64 + 1);
    // Busy = a step count other than 0 (it wraps to 0 after the last step: P is a power of
    // two), registered in one copy per 32 line bits for the parse input's select.
    let cnt = m.reg("step_q", cw, Some(0));
    let busy_reps = m.reg_replicas("busy_q", 1, Some(0), (l as usize).div_ceil(32));
    let buf = m.reg("buf_q", l, None);
    let valid = m.reg("dict_valid_q", ne as u32, None);
    let wptr = m.reg("dict_wptr_q", ib, None);
    let pos = m.reg("pos_q", pw, None);
    let errq = m.reg("err_q", 1, None);
    // Words collected so far (the last step's words complete the line).
    let lacc = m.reg("line_acc_q", l - 32 * k as u32, None);
    let dict: Vec<_> = (0..ne)
        .map(|j| m.reg(&format!("dict{}_q", j), 32, None))
        .collect();
    let dq: Vec<Expr> = dict.iter().map(|r| r.q()).collect();

    // The decode stage's valid bit is the pipeline's; the data path selects with `busy`.
    let mut pl = Pipeline::new(&mut m, "dec", Policy::Bubble, &s_valid);
    let st_dec = pl.stage(&mut m, "dec");
    m.comment("Parse k tokens: from s_payload_i in the acceptance cycle, else from buf_q");
    let b = m.wire("busy", &cnt.q().any());
    let buf_in = Expr::cat_lsb(
        &busy_reps
            .iter()
            .enumerate()
            .map(|(c, r)| {
                let (lo, w) = (32 * c as u32, 32.min(l - 32 * c as u32));
                r.q().select(&buf.q().slice(lo, w), &pay.slice(lo, w))
            })
            .collect::<Vec<_>>(),
    );
    let buf_in = m.wire("buf_in", &buf_in);
    let bq = busy_reps[0].q();
    let v_in = m.wire("valid_in", &bq.gate(&valid.q()));
    let wptr_in = m.wire("wptr_in", &bq.gate(&wptr.q()));
    let pos_in = m.wire("pos_in", &bq.gate(&pos.q()));
    let err_in = bq.gate(&errq.q());
    let first = !&bq;
    let ins = StepIn {
        buf: buf_in.clone(),
        dict: dq.clone(),
        valid: v_in.clone(),
        wptr: wptr_in.clone(),
        first: first.clone(),
    };
    let sd = decode_step(&mut m, &cp, k, &ins);
    let (words, pushes) = (sd.words, sd.pushes);
    let cur = m.wire("buf_rest", &step_shift(&buf_in, &sd.lens));
    let zbf = m.wire("zero_block", &(&first & &sd.zb0));
    // The position moves by the step's length; past the line's end is an error, compared
    // per length from the position in (no add before the compare).
    let pos_next = or_tree(
        sd.lens
            .iter()
            .map(|(n, s)| s.gate(&(pos_in.clone() + Expr::lit(pw, *n as u64))))
            .collect(),
        pw,
    );
    let pos_next = m.wire("pos_next", &pos_next);
    let over: Vec<Expr> = sd
        .lens
        .iter()
        .map(|(n, s)| match (l as u64).checked_sub(*n as u64) {
            Some(room) => s & &pos_in.gt(&Expr::lit(pw, room)),
            None => s.clone(),
        })
        .collect();
    let over = m.wire("over", &Expr::cat(&over).any());
    let err_next = m.wire("err_next", &(&(&err_in | &over) | &sd.err));
    let mut lparts: Vec<Expr> = words.iter().rev().cloned().collect();
    lparts.push(lacc.q());
    let line_next = m.wire("line_next", &Expr::cat(&lparts));

    // ---- Control: the decode stage holds a compressed line for its steps; raw lines and
    // zero blocks bypass it into the output register ----
    let is_last = m.wire("is_last", &cnt.q().eq_lit(steps as u64 - 1));
    let skip = m.wire("skip", &(!comp.clone() | zbf.clone()));
    pl.hold(&mut m, &st_dec, &is_last);
    pl.bypass(&mut m, &st_dec, &skip);
    let st_out = pl.stage(&mut m, "out");
    let accept = m.wire("accept", &(&s_valid & &pl.in_ready()));
    let adv = m.wire("adv", &(&b & &(!is_last.clone() | st_out.free())));
    let done = m.wire("done", &(&adv & &is_last));
    let raw = m.wire("take_raw", &(&accept & &!&comp));
    let zbl = m.wire("take_zero", &(&(&accept & &comp) & &zbf));
    let start = st_dec.load();
    let step = m.wire("step", &(&start | &adv));
    let cnt_next = step.select(
        &start.select(&Expr::lit(cw, 1), &(cnt.q() + Expr::lit(cw, 1))),
        &cnt.q(),
    );
    let cnt_next = m.wire("step_next", &cnt_next);
    m.next(&cnt, &cnt_next, None);
    for r in &busy_reps {
        m.next(r, &cnt_next.any(), None);
    }
    m.next(&buf, &cur, Some(&step));
    m.next(&pos, &pos_next, Some(&step));
    m.next(&errq, &err_next, Some(&step));
    m.next(
        &lacc,
        &line_next.slice(32 * k as u32, l - 32 * k as u32),
        Some(&step),
    );
    let wsel0: Vec<Expr> = (0..ne).map(|j| wptr_in.eq_lit(j as u64)).collect();
    let wsel0 = m.wire("wsel0", &Expr::cat_lsb(&wsel0));
    let wrote = dict_write2(&mut m, &dict, &words, &pushes, &wsel0, &step);
    m.next(&valid, &(v_in.clone() | wrote), Some(&step));
    let npush = pushes.iter().fold(Expr::zero(ib), |a, x| a + x.zext(ib));
    m.next(&wptr, &(wptr_in.clone() + npush), Some(&step));

    // ---- Output register ----
    let raw_line = Expr::cat_lsb(
        &(0..lb)
            .map(|j| pay.slice(l - 8 * (j as u32 + 1), 8))
            .collect::<Vec<_>>(),
    );
    // A line with an error leaves as zeros: the error bit gates the register's output, so
    // the line's 512 loads do not wait for the error's decode.
    let out_line = raw.select(&raw_line, &zbl.select(&Expr::zero(l), &line_next));
    let lq = st_out.reg(&mut m, "line_q", &out_line);
    let eq = st_out.reg(&mut m, "out_err_q", &(&done & &err_next));
    let line_o = m.wire("line_out", &(!eq.clone()).gate(&lq));
    let ends = pl.finish(&mut m, &m_ready);
    s_in.accept(&mut m, &ends.in_ready);
    out.drive(
        &mut m,
        &ends.out_valid,
        &[("line", line_o), ("err", eq.clone())],
    );
    m.finish()
}

/// `cpack_loopback`: `cpack_comp` → `cpack_decomp` (`m_ok_o` drives `s_comp_i`), for the RTL
/// round trip test: every line comes back unchanged with `m_err_o` = 0.
pub fn loopback(p: &CpackRtlParams) -> Result<Arc<Module>, HdlError> {
    let c = compressor(p)?;
    let d = decompressor(p)?;
    let mut m = ModuleBuilder::new(format!("cpack_loopback_{}", tag(p)));
    header(
        &mut m,
        "loopback",
        p,
        "§6 (cpack_comp → cpack_decomp round trip)",
    );
    super::line_codec::comp_decomp_loopback(m, &c, &d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_generate_for_every_option() {
        for lb in [32, 64, 128] {
            for k in [1, 2] {
                for (push, codes) in [
                    (PushPolicy::NewOnly, CodeTable::Paper),
                    (PushPolicy::NoFullMatch, CodeTable::Original),
                    (PushPolicy::AllNonZero, CodeTable::Paper),
                ] {
                    let p = CpackRtlParams {
                        codec: CpackParams {
                            line_bytes: lb,
                            push,
                            codes,
                            ..CpackParams::default()
                        },
                        words_per_cycle: k,
                    };
                    compressor(&p).unwrap();
                    decompressor(&p).unwrap();
                    loopback(&p).unwrap();
                }
            }
        }
    }

    #[test]
    fn bad_parameters_are_rejected() {
        for (k, e) in [(3, 16), (0, 16), (2, 3), (2, 128)] {
            let p = CpackRtlParams {
                codec: CpackParams {
                    dict_entries: e,
                    ..CpackParams::default()
                },
                words_per_cycle: k,
            };
            assert!(compressor(&p).is_err(), "k={k} entries={e}");
            assert!(decompressor(&p).is_err(), "k={k} entries={e}");
        }
        let p = CpackRtlParams {
            codec: CpackParams {
                dict_init_zero: true,
                ..CpackParams::default()
            },
            ..CpackRtlParams::default()
        };
        let e = compressor(&p).unwrap_err().to_string();
        assert!(e.contains("dict_init_zero"), "{e}");
    }
}
