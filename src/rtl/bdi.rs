//! BDI compressor and decompressor generators (Tavana et al., IPDPS'19, Table II; spec
//! docs/FORMATS.md, adaptive §2.1, §3, §6 `bdi_comp` / `bdi_decomp`).
//!
//! Both units speak the golden model's bitstream ([`crate::model::bdi`]) on a bus of
//! `L = 8·line_bytes` bits, **left-aligned**: stream bit p (MSB-first, p = 0 is bit 7 of
//! stream byte 0) is bus bit `L−1−p`; bits after the stream are 0. An uncompressed line is its
//! bytes in order (byte 0 in bits `[L−1:L−8]`), `ok = 0`, `enc = 15`, `len = L`. The line
//! ports hold byte i in bits `[8i+7:8i]` (little-endian words, word 0 at the LSB end).
//!
//! Compressor (`bdi_comp_*`), one line per cycle, two register stages (the paper's 2 cycles;
//! 3 counting the acceptance cycle as 1):
//! 1. fit checks only: zero/repeated detection and the six base/delta units
//!    (8,1)(8,2)(8,4)(4,1)(4,2)(2,1), each giving one "applies" bit. The base fit needs only
//!    the carry of a d-byte add (of `v_lo` with its MSB inverted and `~B_lo + 1`), which picks
//!    one of three compares of `v_hi` with `B_hi`, `B_hi ± 1` made without an incrementer
//!    (`is_succ`). Registered: the line, the applies bits in priority order, and every
//!    applicable encoding's mask and deltas (the d-byte subtraction results, or the
//!    immediates) — and its base for `first-non-immediate`;
//! 2. the priority select (Table II sizes are constants: ascending total bits, then data
//!    bits, then prefix — the model's tie rule) as one gate level from the 8 flops, driving an
//!    AND-OR select of the eight constant stream layouts. Registered output: `ok`, `enc`,
//!    `len`, `payload`. Nangate45 typical: 0.959 ns.
//!
//! Decompressor (`bdi_decomp_*`), one line per cycle, `bdi_decomp_stages` register stages:
//! 1 (the paper's 1 cycle; 2 counting the acceptance cycle): the prefix is decoded, each
//! encoding adds `(mask_i ? B : 0) + sext(Δ_i)` for its fixed fields (one adder per element
//! per encoding), the results (not the operands) are selected on the prefix and registered.
//! 2 (`_s2`): the adds (carry-select halves above 16 bits), zeroed for the encodings not
//! selected, the raw/repeated line and byte flags of `B_hi` are registered; stage 2 finishes
//! the carry select, forms `B_hi ± 1` and ORs with selects that are products of several
//! flops. `s_comp_i = 0` passes the raw line. A reserved prefix (`1xxx`) sets `m_err_o` with
//! an all-zero line. Bits after the stream are not inspected (as
//! [`crate::model::bdi::decompress_prefix`]).

use super::adaptive::{AdaptiveRtlParams, SPEC};
use crate::hdl::blocks::or_tree;
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder, Pipeline, Policy};
use crate::model::bdi::{BaseRule, BdiEncoding};
use std::collections::HashMap;
use std::sync::Arc;

fn err(msg: String) -> HdlError {
    HdlError {
        module: "bdi".into(),
        problems: vec![msg],
    }
}

/// The six base-delta encodings, grouped by element size k (8, 4, 2 bytes).
const BD: &[BdiEncoding] = BdiEncoding::BASE_DELTA;

/// The compressed encodings that can win, in selection priority order: ascending total size,
/// then data bits, then prefix (the model's `select`), keeping only sizes below the line.
pub fn priority(line_bytes: usize) -> Vec<BdiEncoding> {
    let mut v: Vec<BdiEncoding> = BdiEncoding::COMPRESSED
        .into_iter()
        .filter(|e| e.size_bits(line_bytes) < line_bytes * 8)
        .collect();
    v.sort_by_key(|e| (e.size_bits(line_bytes), e.data_bits(line_bytes), *e as u8));
    v
}

fn kd(e: BdiEncoding) -> (usize, usize) {
    e.base_delta().expect("a base-delta encoding")
}

fn tag(e: BdiEncoding) -> &'static str {
    e.name()
}

/// Whether the `kbits`-bit value `v`, read as signed, is the sign extension of `dbits` bits:
/// its top `kbits − dbits + 1` bits are all equal.
fn fits(v: &Expr, dbits: u32) -> Expr {
    let t = v.slice(dbits - 1, v.width() - dbits + 1);
    t.all() | !t.any()
}

/// `a + b + cin` as a `w + 1`-bit named wire (carry out at the MSB).
///
/// Behavioural: a Kogge-Stone prefix adder written out here measured no faster after ABC
/// (Nangate45: decompressor 1.59 ns against 1.49 ns, compressor 1.80 ns against 1.82 ns) and
/// larger, since ABC rebuilds the carry chain either way.
fn add(m: &mut ModuleBuilder, name: &str, a: &Expr, b: &Expr, cin: bool) -> Expr {
    let w = a.width() + 1;
    let r = a.zext(w) + b.zext(w) + Expr::lit(w, cin as u64);
    m.wire(name, &r)
}

/// `a ± 1` modulo `2^w` (named).
fn step(m: &mut ModuleBuilder, name: &str, a: &Expr, up: bool) -> Expr {
    let w = a.width();
    let r = if up {
        a + &Expr::lit(w, 1)
    } else {
        a - &Expr::lit(w, 1)
    };
    m.wire(name, &r)
}

/// `bh ± 1` in stage 2 of the two-stage decompressor from the registered `bh` and per-byte
/// flags registered in stage 1 (`full[b]`: byte b of `bh` is all ones for `+1`, all zeros for
/// `−1`): bit j flips when the bits below it in its byte and every lower byte are full. Depth
/// is bounded by the byte size; ABC ripples a whole-width increment (Nangate45: 1.27 ns for a
/// 56-bit one, 1.14 ns with a Kogge-Stone prefix that it re-chains).
fn step_blocks(m: &mut ModuleBuilder, name: &str, bh: &Expr, full: &[Expr], up: bool) -> Expr {
    let w = bh.width();
    let bits: Vec<Expr> = (0..w)
        .map(|j| {
            let (b, r) = (j / 8, j % 8);
            let mut terms: Vec<Expr> = (0..r)
                .map(|x| {
                    let v = bh.bit(8 * b + x);
                    if up {
                        v
                    } else {
                        !v
                    }
                })
                .collect();
            terms.extend(full[..b as usize].iter().cloned());
            if terms.is_empty() {
                !bh.bit(j)
            } else {
                bh.bit(j) ^ Expr::cat(&terms).all()
            }
        })
        .collect();
    m.wire(name, &Expr::cat_lsb(&bits))
}

/// Whether `x == y + 1` modulo `2^w`, without a carry chain: `x + ~y == 0`, and a sum is 0
/// exactly when every bit's required carry in, `x_i XNOR y_i`, is the carry out of the bit
/// below it, `x_{i-1} | ~y_{i-1}` (0 for bit 0). Replaces a `w`-bit incrementer and compare in
/// the compressor's base fit (Nangate45: 1.249 ns to the fit register with `B_hi ± 1`).
fn is_succ(x: &Expr, y: &Expr) -> Expr {
    let w = x.width();
    let t = !(x ^ y);
    let below = if w == 1 {
        Expr::zero(1)
    } else {
        let g = x.slice(0, w - 1) | !y.slice(0, w - 1);
        Expr::cat(&[g, Expr::zero(1)])
    };
    !(&t ^ &below).any()
}

fn header(m: &mut ModuleBuilder, generator: &str, p: &AdaptiveRtlParams, spec: &str) {
    let spec = format!("{SPEC} {spec}");
    m.provenance(&format!("bdi::{generator}"), &p.describe(), &spec);
    m.header(super::line_codec::LINE_BUS);
}

/// Left-aligns `parts` (MSB first) on an `l`-bit bus.
fn left_align(parts: &[Expr], l: u32) -> Expr {
    let s = Expr::cat(parts);
    if s.width() == l {
        s
    } else {
        let pad = Expr::zero(l - s.width());
        Expr::cat(&[s, pad])
    }
}

/// `bdi_comp`: line in, BDI stream out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_line_i[L-1:0]` → `m_valid_o`/`m_ready_i`/`m_ok_o`/
/// `m_enc_o[3:0]`/`m_len_o`/`m_payload_o[L-1:0]`.
pub fn compressor(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let d = CompDims::of(p);
    let rtag = match d.rule {
        BaseRule::Element0 => "e0",
        BaseRule::FirstNonImmediate => "fni",
    };
    let mut m = ModuleBuilder::new(format!("bdi_comp_l{}_{}", d.lb, rtag));
    header(
        &mut m,
        "compressor",
        p,
        "§2.1 (encodings, fit, selection, stream), §6 bdi_comp (2 stages, II = 1)",
    );
    m.header(format!(
        "Priority (min size, then data bits, then prefix): {}",
        d.order
            .iter()
            .map(|e| tag(*e))
            .collect::<Vec<_>>()
            .join(" > ")
    ));
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("line", d.l)]));
    let s_valid = s_in.valid.clone();
    let line = s_in.field("line");
    let out = stream::output_port(&mut m, "m");

    let fit = stage1(&mut m, &d, &line);
    // ---- Stage-1 registers: the fit results and every encoding's fields ----
    // Stage 1 ends at the fit checks: the priority select is made in stage 2 from 8 flops.
    let mut pl = Pipeline::new(&mut m, "pipe", Policy::Bubble, &s_valid);
    let ld1 = pl.stage(&mut m, "s1").load();
    let r = stage1_regs(&mut m, &d, &fit, &line, &ld1);
    let pk = priority_select(&mut m, &d, &r.fit_q);
    let (payload, len) = layouts(&mut m, &d, &r, &pk);
    let st = pl.stage(&mut m, "out");
    let okq = st.reg(&mut m, "ok_q", &!&pk.none);
    let enc2 = st.reg(&mut m, "out_enc_q", &pk.enc);
    let lenq = st.reg(&mut m, "len_q", &len);
    let payq = st.reg(&mut m, "payload_q", &payload);
    let fields = [("ok", okq), ("enc", enc2), ("len", lenq), ("payload", payq)];
    pl.finish_ports(&mut m, s_in, out, &fields);
    m.finish()
}

/// Sizes of the compressor (line bytes and bits, length bits), its base rule and priorities.
struct CompDims {
    lb: usize,
    l: u32,
    lw: u32,
    rule: BaseRule,
    /// The encodings that can win, in priority order; the base-delta ones among them.
    order: Vec<BdiEncoding>,
    order_bd: Vec<BdiEncoding>,
}

impl CompDims {
    /// The sizes for the parameter set `p`.
    fn of(p: &AdaptiveRtlParams) -> CompDims {
        let order = priority(p.line_bytes);
        let order_bd: Vec<BdiEncoding> = BD.iter().copied().filter(|e| order.contains(e)).collect();
        CompDims {
            lb: p.line_bytes,
            l: p.line_bits(),
            lw: p.len_bits(),
            rule: p.bdi_base_rule,
            order,
            order_bd,
        }
    }
}

/// Stage 1's results per encoding: whether it applies, its mask, base and deltas.
struct Fits {
    ok: HashMap<BdiEncoding, Expr>,
    masks: HashMap<BdiEncoding, Expr>,
    bases: HashMap<BdiEncoding, Expr>,
    deltas1: HashMap<BdiEncoding, Vec<Expr>>,
}

/// Stage 1: zero and repeated-word detection and the base-delta fit units (the six that
/// can win; five on 16 B lines).
fn stage1(m: &mut ModuleBuilder, d: &CompDims, line: &Expr) -> Fits {
    // ---- Stage 1: fit vectors, selection ----
    let count = ["no", "one", "two", "three", "four", "five", "six"];
    m.comment(format!(
        "Stage 1: zero / repeated detection and the {} base-delta units",
        count[d.order_bd.len()]
    ));
    let is_zero = m.wire("is_zero", &!line.any());
    let w8 = line.lanes(64);
    let rep_terms: Vec<Expr> = w8[1..].iter().map(|w| w.eq(&w8[0])).collect();
    let is_rep = m.wire("is_rep", &Expr::cat(&rep_terms).all());
    let mut ok = HashMap::new();
    let mut masks = HashMap::new();
    let mut bases = HashMap::new();
    let mut deltas1 = HashMap::new();
    ok.insert(BdiEncoding::Zero, is_zero.clone());
    ok.insert(BdiEncoding::Repeated, is_rep.clone());
    for &e in &d.order_bd {
        let u = base_delta_unit(m, d.rule, e, line);
        deltas1.insert(e, u.deltas);
        ok.insert(e, u.ok);
        masks.insert(e, u.mask);
        bases.insert(e, u.base);
    }
    Fits {
        ok,
        masks,
        bases,
        deltas1,
    }
}

/// One base-delta unit's result: it applies, its mask (1 = base-relative), base and deltas.
struct Unit {
    ok: Expr,
    mask: Expr,
    base: Expr,
    deltas: Vec<Expr>,
}

/// The base of a base-delta unit: element 0, or the first element that is not an immediate.
fn unit_base(rule: BaseRule, el: &[Expr], imm_v: &Expr, kb: u32) -> Expr {
    match rule {
        BaseRule::Element0 => el[0].clone(),
        BaseRule::FirstNonImmediate => {
            // One-hot first non-immediate element (0 when every element is immediate).
            let mut all_before = Expr::ones(1);
            let mut terms = Vec::new();
            for (i, v) in el.iter().enumerate() {
                let first = &all_before & &!imm_v.bit(i as u32);
                terms.push(first.gate(v));
                all_before = &all_before & &imm_v.bit(i as u32);
            }
            or_tree(terms, kb)
        }
    }
}

/// A base-delta unit: each element's immediate and base fit (a d-byte add's carry picking
/// one of three compares of the high parts) and the delta sent for it.
fn base_delta_unit(m: &mut ModuleBuilder, rule: BaseRule, e: BdiEncoding, line: &Expr) -> Unit {
    let (k, d) = kd(e);
    let (kb, db) = (8 * k as u32, 8 * d as u32);
    let t = tag(e);
    let el = line.lanes(kb);
    let imm: Vec<Expr> = el.iter().map(|v| fits(v, db)).collect();
    let imm_v = m.wire(&format!("{}_imm", t), &Expr::cat_lsb(&imm));
    let base = unit_base(rule, &el, &imm_v, kb);
    let base = m.wire(&format!("{}_base", t), &base);
    // Base fit without a full-width subtraction: split at the delta width. With
    // (borrow, lo) = v_lo − B_lo, the high part v_hi − B_hi − borrow must be the sign
    // extension of lo's MSB, i.e. v_hi equals B_hi, B_hi + 1 or B_hi − 1 (shared per unit).
    let hw = kb - db;
    let bl = base.slice(0, db);
    let bh = base.slice(db, hw);
    let nbl = m.wire(&format!("{}_nbl", t), &!&bl);
    let mut okel = Vec::new();
    let mut dsel = Vec::new();
    for (i, v) in el.iter().enumerate() {
        let ii = i as u32;
        if i == 0 && rule == BaseRule::Element0 {
            // v0 − v0 = 0 always fits. Immediate: its low bytes; else the base itself, Δ = 0.
            okel.push(Expr::ones(1));
            dsel.push(m.wire(&format!("{}_dsel0", t), &imm_v.bit(0).gate(&v.slice(0, db))));
            continue;
        }
        // The delta: v_lo + ~B_lo + 1 at the delta width.
        let vl = v.slice(0, db);
        let lo = m.wire(&format!("{}_dlo{}", t, i), &(&vl + &nbl + Expr::lit(db, 1)));
        // Fit: u = v − B + 2^(db−1) must be below 2^db. Its low part is
        // (v_lo ^ 2^(db−1)) + ~B_lo + 1 + vm·2^db (vm = v_lo's MSB), whose carry out
        // c + vm ∈ {0, 1, 2} must cancel v_hi − B_hi − 1: v_hi = B_hi + 1, B_hi, B_hi − 1.
        // Only the carry c of a d-byte add is late; it picks one of three early compares.
        let vm = vl.bit(db - 1);
        let vlf = Expr::cat(&[!&vm, vl.slice(0, db - 1)]);
        let fc = add(m, &format!("{}_fc{}", t, i), &vlf, &nbl, true);
        m.unused(&fc.slice(0, db)); // only the carry is needed
        let c = fc.bit(db);
        let vh = v.slice(db, hw);
        let eq = vh.eq(&bh);
        let bfit = c.select(
            &vm.select(&is_succ(&bh, &vh), &eq),
            &vm.select(&eq, &is_succ(&vh, &bh)),
        );
        let bfit = m.wire(&format!("{}_bfit{}", t, i), &bfit);
        okel.push(imm_v.bit(ii) | bfit);
        // The delta as sent: the immediate's low bytes, or v − B at the delta width.
        dsel.push(m.wire(
            &format!("{}_dsel{}", t, i),
            &imm_v.bit(ii).select(&v.slice(0, db), &lo.slice(0, db)),
        ));
    }
    let okv = m.wire(&format!("{}_ok", t), &Expr::cat_lsb(&okel).all());
    Unit {
        ok: okv,
        mask: !&imm_v,
        base,
        deltas: dsel,
    }
}

/// Stage 1's registers: the line, the fit bits in priority order, each encoding's fields.
struct Stage1Regs {
    line_q: Expr,
    fit_q: Expr,
    mask_q: HashMap<BdiEncoding, Expr>,
    dl_q: HashMap<BdiEncoding, Vec<Expr>>,
    base_q: HashMap<BdiEncoding, Expr>,
}

/// Stage 1 registers: the line, which encodings apply, and every applicable encoding's mask,
/// deltas and (first-non-immediate) base.
fn stage1_regs(
    m: &mut ModuleBuilder,
    d: &CompDims,
    fit: &Fits,
    line: &Expr,
    ld1: &Expr,
) -> Stage1Regs {
    let line_q = m.reg_next("line_q", None, line, Some(ld1));
    let fit_v = Expr::cat_lsb(
        &d.order
            .iter()
            .map(|e| fit.ok[e].clone())
            .collect::<Vec<_>>(),
    );
    let fit_q = m.reg_next("fit_q", None, &fit_v, Some(ld1));
    m.annotate("bit j: the j-th encoding in priority order applies");
    let mut mask_q = HashMap::new();
    let mut dl_q = HashMap::new();
    let mut base_q = HashMap::new();
    for e in &d.order_bd {
        let (k, dd) = kd(*e);
        let t = tag(*e);
        mask_q.insert(
            *e,
            m.reg_next(&format!("{}_mask_q", t), None, &fit.masks[e], Some(ld1)),
        );
        let dq = m.reg_next(
            &format!("{}_dl_q", t),
            None,
            &Expr::cat_lsb(&fit.deltas1[e]),
            Some(ld1),
        );
        dl_q.insert(*e, dq.lanes(8 * dd as u32));
        let b = match d.rule {
            BaseRule::Element0 => line_q.slice(0, 8 * k as u32),
            BaseRule::FirstNonImmediate => {
                m.reg_next(&format!("{}_base_q", t), None, &fit.bases[e], Some(ld1))
            }
        };
        base_q.insert(*e, b);
    }
    Stage1Regs {
        line_q,
        fit_q,
        mask_q,
        dl_q,
        base_q,
    }
}

/// The one-hot encoding picks, the raw fallback and the chosen encoding's prefix.
struct Picks {
    pick: HashMap<BdiEncoding, Expr>,
    none: Expr,
    enc: Expr,
}

/// Stage 2: the first applicable encoding in priority order (one gate level from the flops).
fn priority_select(m: &mut ModuleBuilder, d: &CompDims, fit_q: &Expr) -> Picks {
    // ---- Stage 2: priority select, the constant layouts, AND-OR select ----
    m.comment("Stage 2: the first applicable encoding in priority order selects its layout");
    // One-hot picks: one gate level from the flops (logic outputs, so the synthesis buffers
    // their 512-bit fanout).
    let mut pick = HashMap::new();
    for (j, e) in d.order.iter().enumerate() {
        let jj = j as u32;
        let c = if j == 0 {
            fit_q.bit(0)
        } else {
            &fit_q.bit(jj) & &!fit_q.slice(0, jj).any()
        };
        pick.insert(*e, m.wire(&format!("pick_{}", tag(*e)), &c));
    }
    let none = m.wire("pick_raw", &!fit_q.any());
    let enc_terms: Vec<Expr> = d
        .order
        .iter()
        .map(|e| pick[e].gate(&Expr::lit(4, *e as u64)))
        .collect();
    let enc = m.wire(
        "enc_s2",
        &(or_tree(enc_terms, 4) | none.gate(&Expr::lit(4, 15))),
    );
    Picks { pick, none, enc }
}

/// Stage 2: the constant stream layout of each encoding and the raw line, AND-OR selected by
/// the picks; returns the payload and the stream length.
fn layouts(m: &mut ModuleBuilder, d: &CompDims, r: &Stage1Regs, pk: &Picks) -> (Expr, Expr) {
    let (lb, l, lw) = (d.lb, d.l, d.lw);
    let pick = &pk.pick;
    // (select, layout, size) of each choice. The zero line's layout is all zero: it adds
    // only its length.
    let mut opts: Vec<(Expr, Expr, u64)> = Vec::new();
    opts.push((
        pick[&BdiEncoding::Zero].clone(),
        Expr::zero(l),
        BdiEncoding::Zero.size_bits(lb) as u64,
    ));
    if let Some(s) = pick.get(&BdiEncoding::Repeated) {
        opts.push((
            s.clone(),
            left_align(&[Expr::lit(4, 1), r.line_q.slice(0, 64)], l),
            BdiEncoding::Repeated.size_bits(lb) as u64,
        ));
    }
    for e in &d.order_bd {
        let (k, dd) = kd(*e);
        let n = lb / k;
        let mut parts = vec![Expr::lit(4, *e as u64)];
        parts.extend((0..n).map(|i| r.mask_q[e].bit(i as u32)));
        parts.push(r.base_q[e].clone());
        parts.extend(r.dl_q[e].iter().map(|dv| dv.slice(0, 8 * dd as u32)));
        let lay = m.wire(&format!("lay_{}", tag(*e)), &left_align(&parts, l));
        opts.push((pick[e].clone(), lay, e.size_bits(lb) as u64));
    }
    // Raw: byte 0 first (lanes() lists byte 0 first; cat() puts the first part at the MSB end).
    opts.push((pk.none.clone(), Expr::cat(&r.line_q.lanes(8)), l as u64));
    let payload = or_tree(opts.iter().map(|(s, v, _)| s.gate(v)).collect(), l);
    let len = or_tree(
        opts.iter()
            .map(|(s, _, n)| s.gate(&Expr::lit(lw, *n)))
            .collect(),
        lw,
    );
    let payload = m.wire("payload_s2", &payload);
    let len = m.wire("len_s2", &len);
    (payload, len)
}

/// Output-register bits per load-enable copy in the two-stage decompressor.
const OUT_SLICE_BITS: u32 = 32;

/// `bdi_decomp`: BDI stream (or raw line) in, line out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_comp_i` (1 = compressed, i.e. Comp Alg = BDI; 0 = raw
/// line)/`s_payload_i[L-1:0]` → `m_valid_o`/`m_ready_i`/`m_line_o[L-1:0]`/`m_err_o`.
pub fn decompressor(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let lb = p.line_bytes;
    let l = p.line_bits();
    let two = p.bdi_decomp_stages == 2;
    let mut m = ModuleBuilder::new(if two {
        format!("bdi_decomp_l{}_s2", lb)
    } else {
        format!("bdi_decomp_l{}", lb)
    });
    header(
        &mut m,
        "decompressor",
        p,
        if two {
            "§2.1 (decode: v_i = (mask_i ? B : 0) + sext(Δ_i)), §6 bdi_decomp (2 stages: adders | select)"
        } else {
            "§2.1 (decode: v_i = (mask_i ? B : 0) + sext(Δ_i)), §6 bdi_decomp (1 stage)"
        },
    );
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("comp", 1), ("payload", l)]));
    let s_valid = s_in.valid.clone();
    let comp_i = s_in.field("comp");
    let pay_i = s_in.field("payload");
    let out = stream::output_port(&mut m, "m");
    // Stages: [s1,] out, each loading when it is free (as `bdi_comp`).
    let mut pl = Pipeline::new(&mut m, "pipe", Policy::Bubble, &s_valid);
    let ld1 = two.then(|| pl.stage(&mut m, "s1").load());
    let v = input_view(&mut m, l, comp_i, pay_i, ld1.as_ref());
    // Encodings no shorter than the line (Base8-Δ4 on 16 B lines) are never sent: their
    // prefixes read past the bus, an error as in the model.
    let sent = priority(lb);
    let s = prefix_decode(&mut m, &v, ld1.as_ref(), &sent);
    let mut outs = Vec::new();
    for &e in BD {
        if sent.contains(&e) {
            outs.push(decode_unit(&mut m, lb, e, &v, &s, ld1.as_ref()));
        }
    }
    outs.extend(raw_repeated(&mut m, lb, &v, &s, ld1.as_ref()));
    let line = m.wire("line_dec", &or_tree(outs, l));
    // Output register: one line per cycle, holds while m_ready_i is low.
    let st = pl.stage(&mut m, "out");
    let lq = if two {
        // Loaded in slices of 32 bits, each by its own copy of the load enable: at 1 GHz a
        // single enable net to 512 flops costs more than the slack of the select stage.
        let loads = pl.load_copies(&mut m, &st, (l / OUT_SLICE_BITS).max(1) as usize);
        st.reg_lanes(&mut m, "line_q", &line, &loads)
    } else {
        st.reg(&mut m, "line_q", &line)
    };
    let eq = st.reg(&mut m, "err_q", &s.bad);
    // The zero-line encoding contributes nothing to the OR (its line is 0).
    m.unused(&s.sel[&BdiEncoding::Zero]);
    pl.finish_ports(&mut m, s_in, out, &[("line", lq), ("err", eq)]);
    m.finish()
}

/// The decompressor's input (`comp`, payload) and its stage-2 view (registered with two
/// stages).
struct DecView {
    l: u32,
    comp_i: Expr,
    pay_i: Expr,
    comp: Expr,
    pay: Expr,
}

impl DecView {
    /// Stream field of the input at bit position `pos`, `w` bits wide.
    fn field_i(&self, pos: usize, w: u32) -> Expr {
        self.pay_i.slice(self.l - pos as u32 - w, w)
    }

    /// Stream field of the stage-2 view at bit position `pos`, `w` bits wide.
    fn field(&self, pos: usize, w: u32) -> Expr {
        self.pay.slice(self.l - pos as u32 - w, w)
    }
}

/// The stage-2 view of the input: the stage 1 `comp` and payload registers with two stages.
fn input_view(
    m: &mut ModuleBuilder,
    l: u32,
    comp_i: Expr,
    pay_i: Expr,
    ld1: Option<&Expr>,
) -> DecView {
    // The stage-2 view of the input (registered with two stages).
    let (comp, pay) = match ld1 {
        Some(ld1) => {
            let pq = m.reg_next("payload_q", None, &pay_i, Some(ld1));
            // Stage 2 reads only the prefix, masks, base high parts and delta signs; the
            // synthesis drops the other flops.
            m.unused(&pq);
            (m.reg_next("comp_q", None, &comp_i, Some(ld1)), pq)
        }
        None => (comp_i.clone(), pay_i.clone()),
    };
    DecView {
        l,
        comp_i,
        pay_i,
        comp,
        pay,
    }
}

/// The decoded prefix: one select per encoding (and, with two stages, of the input), raw, error.
struct Selects {
    sel: HashMap<BdiEncoding, Expr>,
    raw: Expr,
    sel_in: HashMap<BdiEncoding, Expr>,
    bad: Expr,
}

/// Prefix decode: the selects of the encodings in `sent`, the raw line select and the error:
/// a reserved prefix, or one of an encoding not sent (too long for the bus). With two
/// stages (`ld1`, stage 1's load), the selects stage 2 uses are decoded from the input and
/// registered in stage 1 (`sel_<e>_q`), so no decode sits in front of their fan-out into
/// stage 2's selects.
fn prefix_decode(
    m: &mut ModuleBuilder,
    v: &DecView,
    ld1: Option<&Expr>,
    sent: &[BdiEncoding],
) -> Selects {
    let two = ld1.is_some();
    let comp = &v.comp;
    let pre = m.wire("prefix", &v.field(0, 4));
    // With two stages, stage 1 zeroes the adder results of the encodings not selected and
    // registers the raw / repeated line: stage 2's wide ORs then need no select.
    let mut sel_in = HashMap::new();
    if two {
        let pre_i = m.wire("prefix_in", &v.field_i(0, 4));
        for e in BdiEncoding::COMPRESSED
            .into_iter()
            .filter(|e| sent.contains(e))
        {
            sel_in.insert(
                e,
                m.wire(
                    &format!("sel_in_{}", tag(e)),
                    &(&v.comp_i & &pre_i.eq_lit(e as u64)),
                ),
            );
        }
    }
    let mut sel = HashMap::new();
    for e in BdiEncoding::COMPRESSED
        .into_iter()
        .filter(|e| sent.contains(e))
    {
        let name = format!("sel_{}", tag(e));
        let s = match (ld1, sel_in.get(&e)) {
            (Some(ld1), Some(si)) => m.reg_next(&format!("{name}_q"), None, si, Some(ld1)),
            _ => m.wire(&name, &(comp & &pre.eq_lit(e as u64))),
        };
        sel.insert(e, s);
    }
    if two {
        // Stage 2 reads only the reserved bit of the registered prefix.
        m.unused(&pre);
    }
    let raw = m.wire("sel_raw", &!comp);
    let mut bad = pre.bit(3);
    for e in BdiEncoding::COMPRESSED
        .into_iter()
        .filter(|e| !sent.contains(e))
    {
        bad = bad | pre.eq_lit(e as u64);
    }
    let bad = m.wire("reserved", &(comp & &bad));
    Selects {
        sel,
        raw,
        sel_in,
        bad,
    }
}

/// `B_hi + 1` and `B_hi − 1` of a base-delta decoder: from per-byte flags registered in stage
/// 1 with two stages, else incrementers on the input.
fn bhi_steps(
    m: &mut ModuleBuilder,
    t: &str,
    bh: &Expr,
    bh_i: &Expr,
    ld1: Option<&Expr>,
) -> (Expr, Expr) {
    match ld1 {
        Some(ld1) => {
            // Flags of every byte but the top one (no bit above it needs them).
            let lanes = bh_i.lanes(8);
            let low = &lanes[..lanes.len() - 1];
            let mut ones = Vec::new();
            let mut zeros = Vec::new();
            for (b, x) in low.iter().enumerate() {
                let o = m.reg_next(&format!("{}_bhi_ones{}_q", t, b), None, &x.all(), Some(ld1));
                let z = m.reg_next(
                    &format!("{}_bhi_zeros{}_q", t, b),
                    None,
                    &!x.any(),
                    Some(ld1),
                );
                ones.push(o);
                zeros.push(z);
            }
            (
                step_blocks(m, &format!("{}_bhi_p1", t), bh, &ones, true),
                step_blocks(m, &format!("{}_bhi_m1", t), bh, &zeros, false),
            )
        }
        None => (
            step(m, &format!("{}_bhi_p1", t), bh_i, true),
            step(m, &format!("{}_bhi_m1", t), bh_i, false),
        ),
    }
}

/// The low parts of a base-delta decoder's elements, `(mask_i ? B_lo : 0) + Δ_i` with their
/// carries (arrays over the elements): registered in stage 1 with two stages (zeroed when
/// the encoding is not selected); above 16 bits a carry-select add, the upper part added for
/// both carries and picked by the low part's carry (ABC keeps the mux; it ripples a long
/// add. Nangate45, decompressor: 1.306 ns, against 1.491 ns with a plain 32-bit add and
/// 1.356 ns with 8-bit carry-select blocks); with two stages the halves are registered and
/// the select is made in stage 2.
fn element_lows(
    m: &mut ModuleBuilder,
    t: &str,
    se_in: Option<&Expr>,
    bsel: &[Expr],
    dv: &[Expr],
    ld1: Option<&Expr>,
) -> Vec<Expr> {
    let db = dv[0].width();
    let sum = |a: &Expr, b: &Expr, cin: bool| {
        let w = a.width() + 1;
        a.zext(w) + b.zext(w) + Expr::lit(w, cin as u64)
    };
    // A register array of the gated sums with two stages, else a wire array.
    let keep = |m: &mut ModuleBuilder, name: &str, v: Vec<Expr>| match (ld1, se_in) {
        (Some(ld1), Some(se)) => {
            let v: Vec<Expr> = v.iter().map(|x| se.gate(x)).collect();
            m.reg_array_next(&format!("{name}_q"), None, &v, Some(ld1))
        }
        _ => m.wire_array(name, &v),
    };
    let name = format!("{t}_lo");
    if db <= 16 {
        let v = bsel.iter().zip(dv).map(|(a, b)| sum(a, b, false)).collect();
        return keep(m, &name, v);
    }
    let part = |lo: u32, w: u32, cin: bool| -> Vec<Expr> {
        bsel.iter()
            .zip(dv)
            .map(|(a, b)| sum(&a.slice(lo, w), &b.slice(lo, w), cin))
            .collect()
    };
    let l16 = keep(m, &format!("{name}_l"), part(0, 16, false));
    let h0 = keep(m, &format!("{name}_h0"), part(16, db - 16, false));
    let h1 = keep(m, &format!("{name}_h1"), part(16, db - 16, true));
    let lows: Vec<Expr> = (0..bsel.len())
        .map(|i| {
            let hi = l16[i].bit(16).select(&h1[i], &h0[i]);
            Expr::cat(&[hi, l16[i].slice(0, 16)])
        })
        .collect();
    m.wire_array(&name, &lows)
}

/// A base-delta decoder: each element's `(mask_i ? B : 0) + sext(Δ_i)`, split at the delta
/// width; with one stage, gated by the encoding's select. Every per-element quantity is an
/// array over the elements (`<e>_bl[i]`, `<e>_lo[i]`, ..., `<e>_v[i]`).
fn decode_unit(
    m: &mut ModuleBuilder,
    lb: usize,
    e: BdiEncoding,
    v: &DecView,
    s: &Selects,
    ld1: Option<&Expr>,
) -> Expr {
    let two = ld1.is_some();
    let (k, d) = kd(e);
    let (kb, db) = (8 * k as u32, 8 * d as u32);
    let hw = kb - db;
    let n = lb / k;
    let t = tag(e);
    m.comment(format!(
        "{}: v_i = (mask_i ? B : 0) + sext(Δ_i), split at the delta width",
        t
    ));
    // Low part: a d-byte add; high part: B_hi + carry − sign ∈ {B_hi − 1, B_hi, B_hi + 1}
    // (shared per encoding), or the delta's sign extension for an immediate.
    let bl_i = v.field_i(4 + n, kb).slice(0, db);
    let b = v.field(4 + n, kb);
    let bh = b.slice(db, hw);
    // With two stages, B_hi ± 1 are computed from the input and registered.
    let bh_i = v.field_i(4 + n, kb).slice(db, hw);
    let (bp, bm) = bhi_steps(m, t, &bh, &bh_i, ld1);
    let delta = |i: usize| 4 + n + 8 * k + 8 * d * i;
    let bsel: Vec<Expr> = (0..n).map(|i| v.field_i(4 + i, 1).gate(&bl_i)).collect();
    let bsel = m.wire_array(&format!("{t}_bl"), &bsel);
    let dv: Vec<Expr> = (0..n).map(|i| v.field_i(delta(i), db)).collect();
    let lo = element_lows(m, t, s.sel_in.get(&e), &bsel, &dv, ld1);
    let mk: Vec<Expr> = (0..n).map(|i| v.field(4 + i, 1)).collect();
    let sign: Vec<Expr> = (0..n).map(|i| v.field(delta(i), db).bit(db - 1)).collect();
    let carry: Vec<Expr> = lo.iter().map(|x| x.bit(db)).collect();
    let per = |f: &dyn Fn(usize) -> Expr| (0..n).map(f).collect::<Vec<Expr>>();
    let vals = if two {
        // Stage 2 reads flops: every wide select is a product of several flops and the
        // encoding select (logic, so the synthesis buffers it), AND-OR form.
        let se = &s.sel[&e];
        let up = per(&|i| se & &mk[i] & &carry[i] & &!&sign[i]);
        let up = m.wire_array(&format!("{t}_up"), &up);
        let dn = per(&|i| se & &mk[i] & &sign[i] & &!&carry[i]);
        let dn = m.wire_array(&format!("{t}_dn"), &dn);
        let keep = per(&|i| se & &mk[i] & &!(&carry[i] ^ &sign[i]));
        let keep = m.wire_array(&format!("{t}_keep"), &keep);
        let neg = per(&|i| se & &!&mk[i] & &sign[i]);
        let neg = m.wire_array(&format!("{t}_neg"), &neg);
        per(&|i| {
            let hi = up[i].gate(&bp) | dn[i].gate(&bm) | keep[i].gate(&bh) | neg[i].repeat(hw);
            Expr::cat(&[hi, lo[i].slice(0, db)])
        })
    } else {
        per(&|i| {
            let (c, sg) = (&carry[i], &sign[i]);
            let hi_base = (c & &!sg).select(&bp, &(sg & &!c).select(&bm, &bh));
            let hi = mk[i].select(&hi_base, &sg.repeat(hw));
            Expr::cat(&[hi, lo[i].slice(0, db)])
        })
    };
    let val = Expr::cat_lsb(&m.wire_array(&format!("{t}_v"), &vals));
    if two {
        val
    } else {
        s.sel[&e].gate(&val)
    }
}

/// The repeated-word and raw lines: selected and registered in stage 1 with two stages,
/// else selected from the input.
fn raw_repeated(
    m: &mut ModuleBuilder,
    lb: usize,
    v: &DecView,
    s: &Selects,
    ld1: Option<&Expr>,
) -> Vec<Expr> {
    let l = v.l;
    let mut outs = Vec::new();
    if let Some(ld1) = ld1 {
        let rep = v.field_i(4, 64).repeat(l / 64);
        let raw_line = Expr::cat_lsb(&(0..lb).map(|j| v.field_i(8 * j, 8)).collect::<Vec<_>>());
        let lr = s.sel_in[&BdiEncoding::Repeated].gate(&rep) | (!&v.comp_i).gate(&raw_line);
        outs.push(m.reg_next("rawrep_q", None, &lr, Some(ld1)));
        m.unused(&Expr::cat(&[
            s.raw.clone(),
            s.sel[&BdiEncoding::Repeated].clone(),
            s.sel_in[&BdiEncoding::Zero].clone(),
        ]));
    } else {
        let rep = v.field(4, 64).repeat(l / 64);
        outs.push(s.sel[&BdiEncoding::Repeated].gate(&rep));
        let raw_line = Expr::cat_lsb(&(0..lb).map(|j| v.field(8 * j, 8)).collect::<Vec<_>>());
        outs.push(s.raw.gate(&raw_line));
    }
    outs
}

/// `bdi_loopback`: `bdi_comp` → `bdi_decomp` (`m_ok_o` drives `s_comp_i`), for the RTL round
/// trip test: every line comes back unchanged with `m_err_o` = 0.
pub fn loopback(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    let c = compressor(p)?;
    let d = decompressor(p)?;
    let mut m = ModuleBuilder::new(if p.bdi_decomp_stages == 2 {
        format!("bdi_loopback_l{}_s2", p.line_bytes)
    } else {
        format!("bdi_loopback_l{}", p.line_bytes)
    });
    header(
        &mut m,
        "loopback",
        p,
        "§6 (bdi_comp → bdi_decomp round trip)",
    );
    super::line_codec::comp_decomp_loopback(m, &c, &d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_follows_the_model_tie_rule() {
        let p = priority(64);
        assert_eq!(p[0], BdiEncoding::Zero);
        assert_eq!(p[1], BdiEncoding::Repeated);
        let i2 = p.iter().position(|e| *e == BdiEncoding::B2D1).unwrap();
        let i4 = p.iter().position(|e| *e == BdiEncoding::B4D2).unwrap();
        assert!(i2 < i4, "B2D1 wins the 308-bit tie");
        let p128 = priority(128);
        let a = p128.iter().position(|e| *e == BdiEncoding::B2D1).unwrap();
        let b = p128.iter().position(|e| *e == BdiEncoding::B8D4).unwrap();
        assert!(a < b, "B2D1 wins the 596-bit tie at 128 B");
    }

    #[test]
    fn is_succ_matches_increment_exhaustively() {
        use crate::hdl::sim::Sim;
        for w in [1u32, 2, 5] {
            let mut m = ModuleBuilder::new(format!("succ{}", w));
            let x = m.input("x_i", w);
            let y = m.input("y_i", w);
            m.output_expr("s_o", &is_succ(&x, &y));
            let mut sim = Sim::new(&m.finish().unwrap()).unwrap();
            let mask = (1u64 << w) - 1;
            for a in 0..=mask {
                for b in 0..=mask {
                    sim.set_u64("x_i", a).unwrap();
                    sim.set_u64("y_i", b).unwrap();
                    sim.eval();
                    let want = a == (b + 1) & mask;
                    assert_eq!(sim.get_u64("s_o") == 1, want, "w={} x={} y={}", w, a, b);
                }
            }
        }
    }

    #[test]
    fn units_generate_for_every_line_size_rule_and_depth() {
        for lb in [32, 64, 128] {
            for r in [BaseRule::Element0, BaseRule::FirstNonImmediate] {
                for stages in [1, 2] {
                    let p = AdaptiveRtlParams {
                        line_bytes: lb,
                        bdi_base_rule: r,
                        bdi_decomp_stages: stages,
                        ..AdaptiveRtlParams::default()
                    };
                    compressor(&p).unwrap();
                    let d = decompressor(&p).unwrap();
                    assert_eq!(d.name.ends_with("_s2"), stages == 2, "{}", d.name);
                    loopback(&p).unwrap();
                }
            }
        }
    }

    #[test]
    fn decompressor_depth_is_validated() {
        for stages in [0, 3] {
            let p = AdaptiveRtlParams {
                bdi_decomp_stages: stages,
                ..AdaptiveRtlParams::default()
            };
            let e = decompressor(&p).unwrap_err();
            assert!(format!("{:?}", e).contains("bdi_decomp_stages"), "{:?}", e);
        }
    }
}
