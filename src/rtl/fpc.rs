//! FPC compressor and decompressor generators (Alameldeen & Wood, UW TR-1500, 2004, as used
//! by Tavana et al., IPDPS'19, Table II; docs/FORMATS.md, adaptive §2.2, §3, §6
//! `fpc_comp` / `fpc_decomp`).
//!
//! Both units speak the golden model's Original-mode bitstream ([`crate::model::fpc`],
//! [`crate::model::fpc::FpcMode::Original`]) on a bus of `L = 8·line_bytes` bits,
//! **left-aligned** as BDI's ([`super::bdi`]): stream bit p (MSB-first) is bus bit `L−1−p`,
//! bits after the stream are 0; an uncompressed line is its bytes in order (byte 0 in bits
//! `[L−1:L−8]`), `ok = 0`, `len = L`. The line ports hold byte i in bits `[8i+7:8i]`
//! (little-endian 32-bit words, word 0 at the LSB end). `N = line_bytes / 4` words.
//!
//! Compressor (`fpc_comp_*`), one line per cycle, two register stages (latency 3 cycles
//! counting the acceptance cycle, as BDI's and the paper's "3 cycles"):
//! 1. N word classifiers in parallel (zero, 4-bit / byte / halfword sign-extended, halfword
//!    padded, two sign-extended bytes, repeated bytes, the model's smallest-size-then-Table-II
//!    priority), zero-run heads (a zero word whose run of preceding zero words has a length
//!    ≡ 0 mod 8 starts a `000`+`run−1` token; its run length is the count of zero words from it,
//!    capped at 8; the other zero words of the run emit nothing — the model's cut every 8
//!    words), each word's token left-aligned in 35 bits with its length (0, 6, 7, 11, 19, 35);
//!    then the first levels of the packer, a **log-depth merge tree**: adjacent token groups
//!    are merged pairwise (`a` at the top, `b` shifted right by `len(a)` with an LSB-first
//!    logarithmic shifter, lengths added), level widths capped at `L` (a longer stream falls
//!    back to raw anyway). Stage 1 builds `log2 N − 2` levels, leaving 4 groups, and their
//!    offsets (exclusive Sklansky prefix sum of the group lengths), the total and `len` (`L`
//!    when the stream is ≥ `L` bits: raw fallback). Every length sum is a gate-level
//!    Kogge-Stone adder ([`crate::hdl::blocks::add_ks`]): written with `+`, Yosys's `alumacc`
//!    grouped the chain of sums into multi-operand adders of a depth that varied with the
//!    statement order (docs/TOOLCHAIN.md). Registered: the groups, the offsets decoded to
//!    one-hot radix-4 selects in bounded-fan-out copies ([`comp_sel_copies`]),
//!    `len`, the line;
//! 2. groups 1–3 shifted to their offsets by parallel radix-4 shifters and ORed with group 0;
//!    `ok = len ≠ L` selects the stream or the raw line. Registered output: `ok`, `len`,
//!    `payload`.
//!
//! Decompressor (`fpc_decomp_*`), one line per cycle, `fpc_decomp_stages` register stages (4
//! by default: latency 5 cycles counting the acceptance cycle, the paper's 5; 8 or 16 for a
//! faster clock): the parse is sequential, one token per step, N steps (every token yields
//! at least one word), N/stages steps per stage. The remaining
//! stream is kept **left-aligned** in a buffer: a step decodes the 3-bit prefix at the top,
//! takes the word from the top 35 bits, and shifts the buffer left by the token length (a 5:1
//! mux per bit for lengths 6, 7, 11, 19, 35; the buffer loses 6 bits per step, the minimum
//! token, so step k holds `L − 6k` bits). The word index advances by 1 or by the zero-run
//! length; the word is written into line slot `idx` (zero runs write nothing: the line starts
//! at zero). `s_comp_i = 0` passes the raw line (the parse starts finished with the raw line
//! loaded). `m_err_o` = the model's [`crate::model::fpc::decompress_prefix`] error: a zero run
//! past the last word, or a token that reads past the `L`-bit bus; the line is then all zero
//! (cleared behind the output register). An error does not end the parse, so the bit
//! position stays off the word-index chain. Bits after the stream are not inspected.

use super::adaptive::{AdaptiveRtlParams, SPEC};
use crate::hdl::blocks::{add_ks, or_tree};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{clog2, Expr, HdlError, Module, ModuleBuilder, Pipeline, Policy, Stage};
use std::sync::Arc;

fn err(msg: String) -> HdlError {
    HdlError {
        module: "fpc".into(),
        problems: vec![msg],
    }
}

/// Token lengths by Original-mode prefix (`000` zero run … `111` uncompressed).
pub const TOKEN_LEN: [u32; 8] = [6, 7, 11, 19, 19, 19, 11, 35];

/// Copies of each registered compressor placement select: one per 64 output bits, at most
/// 8 (the distinct forms `sel_copies` can make).
pub fn comp_sel_copies(l: u32) -> usize {
    ((l / 64) as usize).clamp(1, 8)
}

/// Merge-tree levels built in compressor stage 1 (the rest in stage 2), for `n` words.
pub fn comp_stage1_levels(n: usize) -> usize {
    (n.trailing_zeros() as usize).saturating_sub(2)
}

/// Whether the value `v` is the sign extension of its low `bits` bits.
fn fits(v: &Expr, bits: u32) -> Expr {
    let t = v.slice(bits - 1, v.width() - bits + 1);
    t.all() | !t.any()
}

fn header(m: &mut ModuleBuilder, generator: &str, p: &AdaptiveRtlParams, spec: &str) {
    let spec = format!("{SPEC} {spec}");
    m.provenance(&format!("fpc::{generator}"), &p.describe(), &spec);
    m.header(super::line_codec::LINE_BUS);
}

/// `n` register stages (`st1`, `st2`, ...) that load when they are free (BDI's scheme).
fn stages(m: &mut ModuleBuilder, n: usize, s_valid: &Expr) -> (Pipeline, Vec<Stage>) {
    let mut pl = Pipeline::new(m, "pipe", Policy::Bubble, s_valid);
    let st = (0..n)
        .map(|k| pl.stage(m, &format!("st{}", k + 1)))
        .collect();
    (pl, st)
}

/// `v` (left-aligned) shifted right by `amt` into a `wo`-bit field (`wo ≥ width(v)`), zero
/// filled: an LSB-first logarithmic shifter, one named stage `<name>_s<bit>` per amount bit.
fn place(m: &mut ModuleBuilder, name: &str, v: &Expr, amt: &Expr, wo: u32) -> Expr {
    let mut x = if v.width() == wo {
        v.clone()
    } else {
        Expr::cat(&[v.clone(), Expr::zero(wo - v.width())])
    };
    for j in 0..amt.width() {
        let d = 1u32 << j;
        if d >= wo {
            let hi = m.wire(
                &format!("{}_out", name),
                &amt.slice(j, amt.width() - j).any(),
            );
            return m.wire(&format!("{}_s{}", name, j), &hi.select(&Expr::zero(wo), &x));
        }
        x = m.wire(
            &format!("{}_s{}", name, j),
            &amt.bit(j).select(&x.shr(d), &x),
        );
    }
    x
}

/// Stage-1 → stage-2 registered select copies for [`place_sel`]: for every radix-4 digit of
/// the amount `amt` (bits `j`, `j+1`), the one-hot selects `amt[j+1:j] == k` of the shifts
/// `k·2^j` below `wo`, decoded in stage 1 and registered in `copies` structurally distinct
/// copies (`<name>_d<j>_<k>_c<c>_q`), so that no flop drives more than one output slice.
/// Yosys merges flops with the same D and enable, so copy `c` stores the select inverted
/// (odd `c`) and/or combined with a qualifier that is true whenever the register loads
/// (`quals[c/2]`: ANDed, or its complement ORed); both are exact under the load enable `en`.
/// Returns `sel[c][digit][k]` (polarity undone, `None` where the shift is ≥ `wo` or where
/// copy `c`'s output slice only ever takes zeros, [`live_bits`]).
#[allow(clippy::too_many_arguments)]
fn sel_copies(
    m: &mut ModuleBuilder,
    name: &str,
    amt: &Expr,
    vw: u32,
    wo: u32,
    copies: usize,
    quals: &[Expr],
    en: &Expr,
) -> Vec<Vec<Vec<Option<Expr>>>> {
    let aw = amt.width();
    let digits: Vec<u32> = (0..aw)
        .step_by(2)
        .map(|j| if j + 1 < aw { 2 } else { 1 })
        .collect();
    let (live, _) = live_bits(vw, wo, copies, &digits);
    let mut out = vec![Vec::new(); copies];
    let mut j = 0;
    while j < aw {
        let nb = if j + 1 < aw { 2 } else { 1 };
        let dig = amt.slice(j, nb);
        let d = 1u64 << j;
        let di = (j / 2) as usize;
        let mut per_copy: Vec<Vec<Option<Expr>>> = vec![Vec::new(); copies];
        for k in 0..(1u64 << nb) {
            let used = |c: usize| live[c][di][k as usize];
            if k * d >= wo as u64 || !(0..copies).any(used) {
                for pc in per_copy.iter_mut() {
                    pc.push(None);
                }
                continue;
            }
            let s = m.wire(&format!("{}_d{}_{}", name, j, k), &dig.eq_lit(k));
            for (c, pc) in per_copy.iter_mut().enumerate() {
                if !used(c) {
                    // Its output slice only ever takes zeros for this digit value.
                    pc.push(None);
                    continue;
                }
                let inv = c % 2 == 1;
                let qi = c / 2;
                // Qualifier: none, then each of `quals` ANDed, then each complement ORed.
                let mut dv = if qi == 0 {
                    s.clone()
                } else if qi <= quals.len() {
                    &s & &quals[qi - 1]
                } else {
                    &s | &!&quals[qi - 1 - quals.len()]
                };
                if inv {
                    dv = !&dv;
                }
                let q = m.reg_next(
                    &format!("{}_d{}_{}_c{}_q", name, j, k, c),
                    None,
                    &dv,
                    Some(en),
                );
                pc.push(Some(if inv { !&q } else { q }));
            }
        }
        for (c, pc) in per_copy.into_iter().enumerate() {
            out[c].push(pc);
        }
        j += 2;
    }
    out
}

/// Which selects of [`place_sel`] can pass a non-zero bit, `[copy][digit][value]`: a
/// `vw`-bit value at the top of `wo` bits, shifted right by each radix-4 digit in turn
/// (`digits`: bits per digit), output bit `b` selected by copy `b·copies/wo`.
/// Also returns, for each shifter stage, the bits of its output that can be 1.
#[allow(clippy::type_complexity)]
fn live_bits(
    vw: u32,
    wo: u32,
    copies: usize,
    digits: &[u32],
) -> (Vec<Vec<Vec<bool>>>, Vec<Vec<bool>>) {
    let wo = wo as usize;
    let mut x: Vec<bool> = (0..wo).map(|i| i + vw as usize >= wo).collect();
    let mut stages = Vec::new();
    let mut out = vec![Vec::new(); copies];
    for (di, nb) in digits.iter().enumerate() {
        let d = 1usize << (2 * di);
        let mut next = vec![false; wo];
        for (c, oc) in out.iter_mut().enumerate() {
            let lo = c * wo / copies;
            let hi = (c + 1) * wo / copies;
            let mut per_k = Vec::new();
            for k in 0..(1usize << nb) {
                let src = |i: usize| i + k * d < wo && x[i + k * d];
                let live = (lo..hi).any(src);
                if live {
                    for (i, n) in next.iter_mut().enumerate().take(hi).skip(lo) {
                        *n |= src(i);
                    }
                }
                per_k.push(live);
            }
            oc.push(per_k);
        }
        x = next;
        stages.push(x.clone());
    }
    (out, stages)
}

/// [`place4`] driven by registered one-hot selects from [`sel_copies`]: output bit `b` (of
/// `wo`) uses copy `b·copies/wo`, so each select flop drives at most `⌈wo/copies⌉` AND-OR
/// terms per shifter stage.
fn place_sel(
    m: &mut ModuleBuilder,
    name: &str,
    v: &Expr,
    sel: &[Vec<Vec<Option<Expr>>>],
    wo: u32,
) -> Expr {
    let copies = sel.len();
    let digits: Vec<u32> = sel[0].iter().map(|k| k.len().trailing_zeros()).collect();
    let (_, masks) = live_bits(v.width(), wo, copies, &digits);
    let mut x = Expr::cat(&[v.clone(), Expr::zero(wo - v.width())]);
    for (di, _) in sel[0].iter().enumerate() {
        let d = 1u32 << (2 * di);
        // Slices from the MSB end (bit wo-1) down, as `cat` takes them.
        let mut slices = Vec::new();
        for c in (0..copies).rev() {
            let lo = (c as u64 * wo as u64 / copies as u64) as u32;
            let hi = ((c as u64 + 1) * wo as u64 / copies as u64) as u32;
            if hi == lo {
                continue;
            }
            let terms: Vec<Expr> = sel[c][di]
                .iter()
                .enumerate()
                .filter_map(|(k, s)| {
                    s.as_ref()
                        .map(|s| s.gate(&x.shr(k as u32 * d).slice(lo, hi - lo)))
                })
                .collect();
            slices.push(or_tree(terms, hi - lo));
        }
        x = m.wire(&format!("{}_s{}", name, 2 * di), &Expr::cat(&slices));
        if di + 1 < sel[0].len() {
            // Bits that are always 0 are not read by the next stage's live selects.
            let mut i = 0;
            while i < wo as usize {
                let run = masks[di][i..].iter().take_while(|b| !**b).count();
                if run > 0 {
                    m.unused(&x.slice(i as u32, run as u32));
                }
                i += run.max(1);
            }
        }
    }
    x
}

/// One packer merge: `a` (left-aligned, `la` bits used) followed by `b` (left-aligned):
/// `b` shifted right by `la` with an LSB-first logarithmic shifter, ORed under `a`. The
/// result is `min(width(a) + width(b), cap)` bits wide.
fn merge(
    m: &mut ModuleBuilder,
    name: &str,
    a: &(Expr, Expr),
    b: &(Expr, Expr),
    cap: u32,
) -> (Expr, Expr) {
    let v = merge_value(m, name, (&a.0, &a.1), &b.0, cap);
    (v, merge_len(m, name, &a.1, &b.1))
}

/// The value of [`merge`]: `bv` shifted right by `a`'s length `al`, ORed under `av`.
fn merge_value(m: &mut ModuleBuilder, name: &str, a: (&Expr, &Expr), bv: &Expr, cap: u32) -> Expr {
    let (av, al) = a;
    let wo = (av.width() + bv.width()).min(cap);
    let x = place(m, name, bv, al, wo);
    let ahi = if av.width() == wo {
        av.clone()
    } else {
        Expr::cat(&[av.clone(), Expr::zero(wo - av.width())])
    };
    m.wire(&format!("{}_v", name), &(ahi | x))
}

/// The length of [`merge`]: `al + bl` (a Kogge-Stone adder, one bit wider).
fn merge_len(m: &mut ModuleBuilder, name: &str, al: &Expr, bl: &Expr) -> Expr {
    let lw = al.width().max(bl.width()) + 1;
    add_ks(m, &format!("{}_len", name), &al.zext(lw), &bl.zext(lw))
}

/// `fpc_comp`: line in, FPC stream out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_line_i[L-1:0]` → `m_valid_o`/`m_ready_i`/`m_ok_o`/
/// `m_len_o`/`m_payload_o[L-1:0]`.
pub fn compressor(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let d = CompDims::of(p);
    let mut m = ModuleBuilder::new(if p.fpc_comp_stages == 2 {
        format!("fpc_comp_l{}", d.lb)
    } else {
        format!("fpc_comp_l{}_s{}", d.lb, p.fpc_comp_stages)
    });
    header(
        &mut m,
        "compressor",
        p,
        &format!(
            "§2.2 (Original-mode patterns, zero runs cut every 8 words, raw fallback), \
             §6 fpc_comp ({} stages, II = 1)",
            p.fpc_comp_stages
        ),
    );
    m.header(match p.fpc_comp_stages {
        2 => format!(
            "Packer: {} merge-tree level(s) in stage 1, then 4 groups placed at their offsets \
             in stage 2",
            d.s1_levels
        ),
        3 => format!(
            "Packer: merge level 1 in stage 1, {} more level(s) in stage 2, then 4 groups \
             placed at their offsets in stage 3",
            d.s1_levels - 1
        ),
        _ => format!(
            "Packer: tokens registered in stage 1; merge level 1 and the node lengths in \
             stage 2; {} more level(s) and the group offsets in stage 3; 4 groups placed at \
             their offsets in stage 4",
            d.s1_levels - 1
        ),
    });
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("line", d.l)]));
    let s_valid = s_in.valid.clone();
    let line = s_in.field("line");
    let out = stream::output_port(&mut m, "m");

    let toks = word_tokens(&mut m, &d, &line);
    let ns = p.fpc_comp_stages as usize;
    let (nodes, line, pl, st) = if ns == 2 {
        let nodes = merge_tree(&mut m, &d, toks, 1..=usize::MAX);
        let (pl, st) = stages(&mut m, ns, &s_valid);
        (nodes, line, pl, st)
    } else {
        let (pl, st) = stages(&mut m, ns, &s_valid);
        let (nodes, line) = if ns == 3 {
            front3(&mut m, &d, toks, &line, &st)
        } else {
            front4(&mut m, &d, toks, &line, &st)
        };
        (nodes, line, pl, st)
    };
    // The select copies are made different functions, equal whenever their register loads
    // (see `sel_copies`): ANDed with signals that are 1 then.
    let quals = if ns == 2 {
        [s_valid.clone(), pl.in_ready(), st[0].load()]
    } else {
        [st[ns - 3].valid(), st[ns - 2].free(), st[ns - 2].load()]
    };
    let ld1 = st[ns - 2].load();
    let ld2 = st[ns - 1].load();
    let g = group_offsets(&mut m, &d, &nodes);
    let r = stage1_regs(&mut m, &d, &line, &nodes, &g, &quals, &ld1);
    let fields = stage2(&mut m, &d, &r, &ld2);
    pl.finish_ports(&mut m, s_in, out, &fields);
    m.finish()
}

/// The 3-stage compressor's first stage: the first merge level, then a register (the token
/// pairs, their lengths, the line). Returns the packer's groups and the registered line.
fn front3(
    m: &mut ModuleBuilder,
    d: &CompDims,
    toks: Vec<(Expr, Expr)>,
    line: &Expr,
    st: &[Stage],
) -> (Vec<(Expr, Expr)>, Expr) {
    let pairs = merge_tree(m, d, toks, 1..=1);
    m.comment("Stage 1 registers (3-stage compressor): the merged token pairs, the line");
    let pairs = reg_nodes(m, ("pair_q", "pair_len_q"), pairs, &st[0].load());
    let line = st[0].reg(m, "line0_q", line);
    (merge_tree(m, d, pairs, 2..=usize::MAX), line)
}

/// Registers merge-tree nodes under `en`: values in the array `names.0`, lengths in
/// `names.1`.
fn reg_nodes(
    m: &mut ModuleBuilder,
    names: (&str, &str),
    nodes: Vec<(Expr, Expr)>,
    en: &Expr,
) -> Vec<(Expr, Expr)> {
    let (tv, tl): (Vec<Expr>, Vec<Expr>) = nodes.into_iter().unzip();
    let vq = m.reg_array_next(names.0, None, &tv, Some(en));
    let lq = m.reg_array_next(names.1, None, &tl, Some(en));
    vq.into_iter().zip(lq).collect()
}

/// The 4-stage compressor's first two stages: the word tokens registered; then the first
/// merge level beside the lengths of every later merge-tree node (adders only), registered,
/// so that the third stage shifts by registered lengths and sums only the group offsets.
fn front4(
    m: &mut ModuleBuilder,
    d: &CompDims,
    toks: Vec<(Expr, Expr)>,
    line: &Expr,
    st: &[Stage],
) -> (Vec<(Expr, Expr)>, Expr) {
    m.comment("Stage 1 registers (4-stage compressor): every word's token and length, the line");
    let toks = reg_nodes(m, ("tok_q", "tok_len_q"), toks, &st[0].load());
    let line = st[0].reg(m, "line0_q", line);
    let pairs = merge_tree(m, d, toks, 1..=1);
    m.comment("Stage 2: the lengths of the later merge levels (the shift amounts, the groups)");
    let mut lens = vec![pairs.iter().map(|(_, l)| l.clone()).collect::<Vec<_>>()];
    for level in 2..=d.s1_levels {
        let prev = &lens[lens.len() - 1];
        let next = prev
            .chunks(2)
            .enumerate()
            .map(|(j, pr)| merge_len(m, &format!("mg{}_{}", level, j), &pr[0], &pr[1]))
            .collect();
        lens.push(next);
    }
    m.comment("Stage 2 registers (4-stage compressor): the token pairs, the node lengths");
    let (pv, _): (Vec<Expr>, Vec<Expr>) = pairs.into_iter().unzip();
    let en = st[1].load();
    let mut nodes = m.reg_array_next("pair_q", None, &pv, Some(&en));
    let lens_q: Vec<Vec<Expr>> = lens
        .iter()
        .enumerate()
        .map(|(k, lv)| m.reg_array_next(&format!("lv{}_len_q", k + 1), None, lv, Some(&en)))
        .collect();
    let line = st[1].reg(m, "line1_q", &line);
    m.comment("Packer merge tree, later levels shifted by the registered lengths");
    for level in 2..=d.s1_levels {
        let al = &lens_q[level - 2];
        nodes = nodes
            .chunks(2)
            .enumerate()
            .map(|(j, pr)| {
                let name = format!("mg{}_{}", level, j);
                merge_value(m, &name, (&pr[0], &al[2 * j]), &pr[1], d.l)
            })
            .collect();
    }
    let groups = nodes
        .into_iter()
        .zip(lens_q[d.s1_levels - 1].clone())
        .collect();
    (groups, line)
}

/// Sizes of the compressor: line bytes, bits, length bits, words, merge levels in stage 1.
struct CompDims {
    lb: usize,
    l: u32,
    lw: u32,
    n: usize,
    s1_levels: usize,
}

impl CompDims {
    /// The sizes for the parameter set `p`.
    fn of(p: &AdaptiveRtlParams) -> CompDims {
        let n = p.line_bytes / 4;
        CompDims {
            lb: p.line_bytes,
            l: p.line_bits(),
            lw: p.len_bits(),
            n,
            s1_levels: comp_stage1_levels(n),
        }
    }
}

/// Whether the words `a..b` (b > a) are all zero.
fn all_zero(zero: &[Expr], a: usize, b: usize) -> Expr {
    Expr::cat(&zero[a..b]).all()
}

/// Stage 1: the word classifiers and zero-run heads; each word's token (left-aligned in 35
/// bits) and its length. Each per-word quantity is an array over the words (`w_zero[i]`,
/// `w_head[i]`, ..., `w_tok[i]`, `w_len[i]`), written as loops where the words share a form.
fn word_tokens(m: &mut ModuleBuilder, d: &CompDims, line: &Expr) -> Vec<(Expr, Expr)> {
    let n = d.n;
    // ---- Stage 1: classifiers, zero runs, tokens ----
    m.comment("Stage 1: word classifiers and zero-run heads");
    let w = line.lanes(32);
    let zero: Vec<Expr> = w.iter().map(|v| !v.any()).collect();
    let zero = m.wire_array("w_zero", &zero);
    let (heads, runs): (Vec<Expr>, Vec<Expr>) = (0..n).map(|i| zero_run(n, i, &zero)).unzip();
    let head = m.wire_array("w_head", &heads);
    let runm1 = m.wire_array("w_runm1", &runs);
    let mut cands: Vec<Vec<Cand>> = w.iter().map(candidates).collect();
    // Pattern k of word i matches (`w_m<k>[i]`); it is picked (`w_p<k>[i]`) when no earlier
    // pattern (nor a zero word) matches.
    m.comment(
        "Patterns in priority order: m0 4-bit sign-extended, m1 repeated bytes, m2 8-bit \
         sign-extended, m3 16-bit sign-extended, m4 zero-padded halfword, m5 two sign-extended \
         bytes",
    );
    let npat = cands[0].len();
    for k in 0..npat {
        let mk: Vec<Expr> = cands.iter().map(|c| c[k].0.clone()).collect();
        let mk = m.wire_array(&format!("w_m{}", k), &mk);
        for (c, e) in cands.iter_mut().zip(mk) {
            c[k].0 = e;
        }
    }
    let mut none_before: Vec<Expr> = zero.iter().map(|z| !z.clone()).collect();
    let mut picks: Vec<Vec<Expr>> = vec![Vec::new(); n];
    for k in 0..npat {
        let pk: Vec<Expr> = none_before
            .iter()
            .zip(&cands)
            .map(|(nb, c)| nb & &c[k].0)
            .collect();
        let pk = m.wire_array(&format!("w_p{}", k), &pk);
        let words = none_before.iter_mut().zip(&cands).zip(picks.iter_mut());
        for (((nb, c), pick), p) in words.zip(pk) {
            *nb = &*nb & &!c[k].0.clone();
            pick.push(p);
        }
    }
    let unc = m.wire_array("w_unc", &none_before);
    let (tv, tl): (Vec<Expr>, Vec<Expr>) = (0..n)
        .map(|i| word_token(&w[i], &cands[i], &picks[i], &unc[i], &head[i], &runm1[i]))
        .unzip();
    let tok = m.wire_array("w_tok", &tv);
    let len = m.wire_array("w_len", &tl);
    tok.into_iter().zip(len).collect()
}

/// Zero-run detection of word `i`: whether a zero token starts here, and its run length − 1.
fn zero_run(n: usize, i: usize, zero: &[Expr]) -> (Expr, Expr) {
    // Head of a zero token: the run of zero words before i has a length ≡ 0 mod 8.
    let mut head_terms = Vec::new();
    let mut r = 0;
    while r <= i {
        // Exactly r zero words before i.
        let mut t = if r == 0 {
            Expr::ones(1)
        } else {
            all_zero(zero, i - r, i)
        };
        if r < i {
            t = &t & &!zero[i - r - 1].clone();
        }
        head_terms.push(t);
        r += 8;
    }
    let head = &zero[i] & &or_tree(head_terms, 1);
    // Run length − 1: the thermometer a_k = zero[i..=i+k], k = 1..7, as a binary count.
    let a: Vec<Expr> = (0..8)
        .map(|k| {
            if k == 0 {
                Expr::ones(1)
            } else if i + k < n {
                all_zero(zero, i + 1, i + k + 1)
            } else {
                Expr::zero(1)
            }
        })
        .collect();
    let b2 = a[4].clone();
    let b1 = (&a[2] & &!&a[4]) | a[6].clone();
    let b0 = (&a[1] & &!&a[2]) | (&a[3] & &!&a[4]) | (&a[5] & &!&a[6]) | a[7].clone();
    (head, Expr::cat(&[b2, b1, b0]))
}

/// A word pattern: whether the word matches, its prefix and its payload fields.
type Cand = (Expr, u64, Vec<Expr>);

/// The patterns of word `v`, in the model's priority (smallest size, then Table II number).
fn candidates(v: &Expr) -> Vec<Cand> {
    let s4 = fits(v, 4);
    let rep = v.slice(8, 24).eq(&v.slice(0, 8).repeat(3));
    let s8 = fits(v, 8);
    let s16 = fits(v, 16);
    let hp = !v.slice(0, 16).any();
    let th = fits(&v.slice(16, 16), 8) & fits(&v.slice(0, 16), 8);
    vec![
        (s4, 0b001u64, vec![v.slice(0, 4)]),
        (rep, 0b110, vec![v.slice(0, 8)]),
        (s8, 0b010, vec![v.slice(0, 8)]),
        (s16, 0b011, vec![v.slice(0, 16)]),
        (hp, 0b100, vec![v.slice(16, 16)]),
        (th, 0b101, vec![v.slice(16, 8), v.slice(0, 8)]),
    ]
}

/// The token of word `v` (left-aligned in 35 bits) and its length, from its pattern picks
/// (`picks[k]`: pattern k is the first that matches), `unc` (none matches), and its
/// zero-run head and run length − 1.
fn word_token(
    v: &Expr,
    cands: &[Cand],
    picks: &[Expr],
    unc: &Expr,
    head: &Expr,
    runm1: &Expr,
) -> (Expr, Expr) {
    let mut tv = vec![head.gate(&Expr::cat(&[
        Expr::lit(3, 0),
        runm1.clone(),
        Expr::zero(29),
    ]))];
    let mut tl = vec![head.gate(&Expr::lit(6, 6))];
    for ((_, pre, pay), pick) in cands.iter().zip(picks) {
        let mut parts = vec![Expr::lit(3, *pre)];
        parts.extend(pay.iter().cloned());
        let bits: u32 = parts.iter().map(|x| x.width()).sum();
        parts.push(Expr::zero(35 - bits));
        tv.push(pick.gate(&Expr::cat(&parts)));
        tl.push(pick.gate(&Expr::lit(6, bits as u64)));
    }
    tv.push(unc.gate(&Expr::cat(&[Expr::lit(3, 0b111), v.clone()])));
    tl.push(unc.gate(&Expr::lit(6, 35)));
    (or_tree(tv, 35), or_tree(tl, 6))
}

/// The packer's merge-tree levels in stage 1: adjacent token groups merged pairwise.
fn merge_tree(
    m: &mut ModuleBuilder,
    d: &CompDims,
    toks: Vec<(Expr, Expr)>,
    levels: std::ops::RangeInclusive<usize>,
) -> Vec<(Expr, Expr)> {
    // ---- Packer: merge tree ----
    let mut level = *levels.start();
    let mut nodes = toks;
    m.comment("Packer merge tree, stage 1 levels");
    while level <= (*levels.end()).min(d.s1_levels) {
        nodes = nodes
            .chunks(2)
            .enumerate()
            .map(|(j, pr)| merge(m, &format!("mg{}_{}", level, j), &pr[0], &pr[1], d.l))
            .collect();
        level += 1;
    }
    nodes
}

/// Where each token group starts in the stream, and the stream length.
struct Groups {
    offs: Vec<Expr>,
    /// The stream length, `L` when the stream does not fit (raw fallback).
    len: Expr,
}

/// The group offsets (a Sklansky prefix sum of the group lengths) and `len` (`L` when the
/// stream does not fit: raw fallback).
fn group_offsets(m: &mut ModuleBuilder, d: &CompDims, nodes: &[(Expr, Expr)]) -> Groups {
    let (l, lw) = (d.l, d.lw);
    // The group offsets (exclusive prefix sum of the group lengths), the total, the fallback.
    let tw = clog2(35 * d.n as u64 + 1);
    // Group ends: a Sklansky prefix sum (log depth) of the group lengths.
    let mut ends: Vec<Expr> = nodes.iter().map(|(_, ln)| ln.zext(tw)).collect();
    let mut span = 1;
    while span < ends.len() {
        for i in 0..ends.len() {
            if (i / span) % 2 == 1 {
                let src = (i / span) * span - 1;
                let nm = format!("grp{}_end_p{}", i, span);
                ends[i] = add_ks(m, &nm, &ends[src], &ends[i]);
            }
        }
        span *= 2;
    }
    let mut offs = vec![Expr::zero(tw)];
    offs.extend(ends[..ends.len() - 1].iter().cloned());
    let total = ends[ends.len() - 1].clone();
    let ok = m.wire("ok_s1", &total.lt(&Expr::lit(tw, l as u64)));
    let len = m.wire(
        "len_s1",
        &ok.select(&total.resize(lw), &Expr::lit(lw, l as u64)),
    );
    if tw > lw {
        m.unused(&total.slice(lw, tw - lw));
    }
    Groups { offs, len }
}

/// A registered token group and its placement selects (none for group 0).
type GroupQ = (Expr, Vec<Vec<Vec<Option<Expr>>>>);

/// Stage 1's registers: the line, `len` (and `ok` from it), the groups with their selects.
struct Stage1Regs {
    line_q: Expr,
    len_q1: Expr,
    ok_q1: Expr,
    nq: Vec<GroupQ>,
}

/// Stage 1 registers: the line, `len`, the groups and their offsets decoded to one-hot
/// radix-4 selects in bounded-fan-out copies.
fn stage1_regs(
    m: &mut ModuleBuilder,
    d: &CompDims,
    line: &Expr,
    nodes: &[(Expr, Expr)],
    g: &Groups,
    quals: &[Expr; 3],
    ld1: &Expr,
) -> Stage1Regs {
    let (l, lw) = (d.l, d.lw);
    let line_q = m.reg_next("line_q", None, line, Some(ld1));
    let len_q1 = m.reg_next("len1_q", None, &g.len, Some(ld1));
    // Stage 2 derives `ok` from `len` (logic, not a flop: it selects all L payload bits).
    let ok_q1 = m.wire("ok_s2", &len_q1.ne(&Expr::lit(lw, l as u64)));
    // The offsets cross the register already decoded (one-hot per radix-4 digit) and
    // replicated per output slice: a flop's fan-out is bounded (`docs/TOOLCHAIN.md`).
    let copies = comp_sel_copies(l);
    let mut nq = Vec::new();
    for (j, ((v, _), o)) in nodes.iter().zip(&g.offs).enumerate() {
        let vq = m.reg_next(&format!("grp{}_q", j), None, v, Some(ld1));
        // Group 0 starts at bit 0.
        let sel = if j == 0 {
            Vec::new()
        } else {
            sel_copies(m, &format!("pl{}", j), o, v.width(), l, copies, quals, ld1)
        };
        nq.push((vq, sel));
    }
    Stage1Regs {
        line_q,
        len_q1,
        ok_q1,
        nq,
    }
}

/// Stage 2: every group shifted to its offset by parallel shifters and ORed, the raw
/// fallback, and the output registers (`ok`, `len`, payload).
fn stage2(
    m: &mut ModuleBuilder,
    d: &CompDims,
    r: &Stage1Regs,
    ld2: &Expr,
) -> [(&'static str, Expr); 3] {
    let l = d.l;
    // ---- Stage 2: groups placed at their offsets, raw fallback ----
    m.comment("Stage 2: every group shifted to its offset (parallel shifters), OR, raw fallback");
    let placed: Vec<Expr> =
        r.nq.iter()
            .enumerate()
            .map(|(j, (v, o))| {
                if j == 0 {
                    Expr::cat(&[v.clone(), Expr::zero(l - v.width())])
                } else {
                    place_sel(m, &format!("pl{}", j), v, o, l)
                }
            })
            .collect();
    let stream = m.wire("stream_s2", &or_tree(placed, l));
    let raw = Expr::cat(&r.line_q.lanes(8));
    let payload = m.wire("payload_s2", &r.ok_q1.select(&stream, &raw));
    let okq = m.reg_next("ok_q", None, &r.ok_q1, Some(ld2));
    let lenq = m.reg_next("len_q", None, &r.len_q1, Some(ld2));
    let payq = m.reg_next("payload_q", None, &payload, Some(ld2));
    [("ok", okq), ("len", lenq), ("payload", payq)]
}

/// Parse state between decompressor steps.
#[derive(Clone)]
struct Parse {
    /// Remaining stream, left-aligned (`L − 6k` bits at step k).
    buf: Expr,
    /// Next word index (`clog2(N+1)` bits).
    idx: Expr,
    /// Bits consumed (`clog2(L+1)` bits).
    pos: Expr,
    /// Parse finished (line complete, error or raw line).
    done: Expr,
    /// Error seen.
    err: Expr,
    /// Words written so far, word 0 at the LSB end.
    line: Vec<Expr>,
}

/// One decompressor step `k` (see the module docs).
fn step(m: &mut ModuleBuilder, k: usize, n: usize, l: u32, s: &Parse) -> Parse {
    let t = format!("k{}", k);
    let bw = s.buf.width();
    let top = m.wire(&format!("{}_top", t), &s.buf.slice(bw - 35, 35));
    let pre = top.slice(32, 3);
    let sel: Vec<Expr> = (0..8)
        .map(|c| m.wire(&format!("{}_is{}", t, c), &pre.eq_lit(c)))
        .collect();
    let act = m.wire(&format!("{}_act", t), &!&s.done);
    let z = sel[0].clone();
    // Token length, one-hot by length class.
    let by_len: [(u32, Expr); 5] = [
        (6, sel[0].clone()),
        (7, sel[1].clone()),
        (11, &sel[2] | &sel[6]),
        (19, &sel[3] | &sel[4] | sel[5].clone()),
        (35, sel[7].clone()),
    ];
    // The word.
    let sx = |v: Expr, w: u32| {
        let sign = v.bit(v.width() - 1);
        Expr::cat(&[sign.repeat(w - v.width()), v])
    };
    let vals = [
        (sel[1].clone(), sx(top.slice(28, 4), 32)),
        (sel[2].clone(), sx(top.slice(24, 8), 32)),
        (sel[3].clone(), sx(top.slice(16, 16), 32)),
        (
            sel[4].clone(),
            Expr::cat(&[top.slice(16, 16), Expr::zero(16)]),
        ),
        (
            sel[5].clone(),
            Expr::cat(&[sx(top.slice(24, 8), 16), sx(top.slice(16, 8), 16)]),
        ),
        (sel[6].clone(), top.slice(24, 8).repeat(4)),
        (sel[7].clone(), top.slice(0, 32)),
    ];
    let val = m.wire(
        &format!("{}_val", t),
        &or_tree(vals.iter().map(|(s, v)| s.gate(v)).collect(), 32),
    );
    // Word index and bit position.
    let iw = s.idx.width();
    let nw = clog2(n as u64 + 9);
    let adv = z.select(
        &(top.slice(29, 3).zext(nw) + Expr::lit(nw, 1)),
        &Expr::lit(nw, 1),
    );
    let nidx = m.wire(&format!("{}_nidx", t), &(s.idx.zext(nw) + adv));
    let pw = s.pos.width();
    let qw = clog2(l as u64 + 36);
    // The position after the token and the read-past check, for each token length from
    // the position alone: the late one-hot length only selects (no adder after it).
    let pz = s.pos.zext(qw);
    let npos = m.wire(
        &format!("{}_npos", t),
        &or_tree(
            by_len
                .iter()
                .map(|(tl, c)| c.gate(&(&pz + &Expr::lit(qw, *tl as u64))))
                .collect(),
            qw,
        ),
    );
    let past = or_tree(
        by_len
            .iter()
            .map(|(tl, c)| c & &pz.gt(&Expr::lit(qw, (l - tl) as u64)))
            .collect(),
        1,
    );
    let overrun = &z & &nidx.gt(&Expr::lit(nw, n as u64));
    let e = m.wire(&format!("{}_err", t), &(&act & &(overrun | past)));
    // An error does not end the parse: the line is all zero in the end either way, so the
    // position's adders and the error stay off the word-index chain.
    let fin = nidx.ge(&Expr::lit(nw, n as u64));
    let done = m.wire(&format!("{}_done", t), &(&s.done | &fin));
    let errn = m.wire(&format!("{}_errq", t), &(&s.err | &e));
    let idx = m.wire(&format!("{}_idx", t), &nidx.resize(iw));
    let pos = m.wire(&format!("{}_pos", t), &npos.resize(pw));
    if nw > iw {
        m.unused(&nidx.slice(iw, nw - iw));
    }
    if qw > pw {
        m.unused(&npos.slice(pw, qw - pw));
    }
    // Write the word into slot idx (slots below k cannot be written at step k).
    let wr = m.wire(&format!("{}_wr", t), &(&act & &!&z));
    let mut line = s.line.clone();
    for (j, slot) in line.iter_mut().enumerate().skip(k) {
        let hit = &wr & &s.idx.eq_lit(j as u64);
        *slot = m.wire(&format!("{}_slot{}", t, j), &hit.select(&val, slot));
    }
    // Shift the buffer left by the token length; the bottom 6 bits are always fill.
    let nbw = bw - 6;
    let opts: Vec<Expr> = by_len
        .iter()
        .map(|(tl, c)| {
            let body = s.buf.slice(0, bw - tl);
            let v = if *tl > 6 {
                Expr::cat(&[body, Expr::zero(tl - 6)])
            } else {
                body
            };
            c.gate(&v)
        })
        .collect();
    let buf = m.wire(&format!("{}_buf", t), &or_tree(opts, nbw));
    Parse {
        buf,
        idx,
        pos,
        done,
        err: errn,
        line,
    }
}

/// `fpc_decomp`: FPC stream (or raw line) in, line out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_comp_i` (1 = compressed, Comp Alg = FPC; 0 = raw line)/
/// `s_payload_i[L-1:0]` → `m_valid_o`/`m_ready_i`/`m_line_o[L-1:0]`/`m_err_o` (all-zero line
/// with `m_err_o` = 1 for a stream the model rejects).
pub fn decompressor(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let lb = p.line_bytes;
    let l = p.line_bits();
    let n = lb / 4;
    let stages_n = p.fpc_decomp_stages as usize;
    let per = n / stages_n;
    let mut m = ModuleBuilder::new(if stages_n == 4 {
        format!("fpc_decomp_l{}", lb)
    } else {
        format!("fpc_decomp_l{}_s{}", lb, stages_n)
    });
    header(
        &mut m,
        "decompressor",
        p,
        &format!(
            "§2.2 (Original-mode decode, zero-run overrun and read past the line are errors), \
             §6 fpc_decomp ({} stages, II = 1)",
            stages_n
        ),
    );
    m.header(format!(
        "Parse: {} token steps, {} per stage; left-aligned buffer shifted by 6/7/11/19/35 bits",
        n, per
    ));
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("comp", 1), ("payload", l)]));
    let s_valid = s_in.valid.clone();
    let comp = s_in.field("comp");
    let pay = s_in.field("payload");
    let out = stream::output_port(&mut m, "m");
    let (pl, st) = stages(&mut m, stages_n, &s_valid);
    let loads: Vec<Expr> = st.iter().map(Stage::load).collect();
    // Raw line: stream byte j is line byte j.
    let raw = Expr::cat_lsb(
        &(0..lb as u32)
            .map(|j| pay.slice(l - 8 - 8 * j, 8))
            .collect::<Vec<_>>(),
    );
    let raw = m.wire("raw_line", &raw);
    let iw = clog2(n as u64 + 1);
    let pw = clog2(l as u64 + 1);
    let lines_raw = raw.lanes(32);
    let mut st = Parse {
        buf: pay.clone(),
        idx: Expr::zero(iw),
        pos: Expr::zero(pw),
        done: !&comp,
        err: Expr::zero(1),
        line: lines_raw
            .iter()
            .map(|w| comp.select(&Expr::zero(32), w))
            .collect(),
    };
    for (g, ld) in loads.iter().enumerate() {
        m.comment(format!(
            "Stage {}: steps {}..{}",
            g + 1,
            g * per,
            (g + 1) * per - 1
        ));
        for k in g * per..(g + 1) * per {
            st = step(&mut m, k, n, l, &st);
        }
        let sfx = g + 1;
        if g + 1 < stages_n {
            st = Parse {
                buf: m.reg_next(&format!("buf{}_q", sfx), None, &st.buf, Some(ld)),
                idx: m.reg_next(&format!("idx{}_q", sfx), None, &st.idx, Some(ld)),
                pos: m.reg_next(&format!("pos{}_q", sfx), None, &st.pos, Some(ld)),
                done: m.reg_next(&format!("done{}_q", sfx), None, &st.done, Some(ld)),
                err: m.reg_next(&format!("err{}_q", sfx), None, &st.err, Some(ld)),
                line: vec![m.reg_next(
                    &format!("line{}_q", sfx),
                    None,
                    &Expr::cat_lsb(&st.line),
                    Some(ld),
                )],
            };
            st.line = st.line[0].lanes(32);
        } else {
            m.unused(&Expr::cat(&[
                st.buf.clone(),
                st.idx.clone(),
                st.pos.clone(),
                st.done.clone(),
            ]));
        }
    }
    let ld = &loads[stages_n - 1];
    let lq = m.reg_next("line_q", None, &Expr::cat_lsb(&st.line), Some(ld));
    let eq = m.reg_next("err_q", None, &st.err, Some(ld));
    // A stream with an error gives the all-zero line: cleared behind the register, where the
    // error is a register output, not in front of it where it comes last.
    let line = m.wire("line_out", &(&lq & &!eq.repeat(l)));
    pl.finish_ports(&mut m, s_in, out, &[("line", line), ("err", eq)]);
    m.finish()
}

/// `fpc_loopback`: `fpc_comp` → `fpc_decomp` (`m_ok_o` drives `s_comp_i`), for the RTL round
/// trip test: every line comes back unchanged with `m_err_o` = 0.
pub fn loopback(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    let c = compressor(p)?;
    let d = decompressor(p)?;
    let mut m = ModuleBuilder::new(format!("fpc_loopback_l{}", p.line_bytes));
    header(
        &mut m,
        "loopback",
        p,
        "§6 (fpc_comp → fpc_decomp round trip)",
    );
    super::line_codec::comp_decomp_loopback(m, &c, &d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fpc::FpcPattern;

    #[test]
    fn token_lengths_follow_the_model() {
        for p in FpcPattern::WORD_PATTERNS {
            let pre = p.original_prefix().unwrap() as usize;
            let want = if p == FpcPattern::ZeroWord {
                6
            } else {
                3 + p.payload_bits() as u32
            };
            assert_eq!(TOKEN_LEN[pre], want, "{:?}", p);
        }
    }

    #[test]
    fn units_generate_for_every_line_size() {
        for lb in [32, 64, 128] {
            let p = AdaptiveRtlParams {
                line_bytes: lb,
                ..AdaptiveRtlParams::default()
            };
            compressor(&p).unwrap();
            decompressor(&p).unwrap();
            loopback(&p).unwrap();
        }
    }
}
