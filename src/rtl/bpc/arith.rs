//! Arithmetic cells of the BPC datapaths: exact and carry-select adders, carry-save trees,
//! the Kogge-Stone prefix sum and the LSB-first growing shifter.

use super::{LANES_PER_COPY, SPEC};
use crate::hdl::blocks::{add_csel, add_split, csa_reduce, PrefixTopology};
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `v` (stream order) shifted up by `amts`, LSB first, growing to at most `cap` bits. The
/// amount comes as equal copies: with more than one, output bits `[32c, 32c + 32)` of every
/// level are selected by copy `c` (the last copy takes the rest), so no copy drives more than
/// 32 muxes per level.
pub(super) fn shl_grow(
    m: &mut ModuleBuilder,
    name: &str,
    v: &Expr,
    amts: &[Expr],
    cap: u32,
) -> Expr {
    let mut cur = v.clone();
    for k in 0..amts[0].width() {
        let sh = 1u32 << k;
        let w = (cur.width() + sh).min(cap);
        let up = Expr::cat(&[cur.clone(), Expr::zero(sh)]).resize(w);
        let keep = cur.zext(w);
        let next = if amts.len() == 1 {
            amts[0].bit(k).select(&up, &keep)
        } else {
            let parts: Vec<Expr> = (0..w.div_ceil(LANES_PER_COPY))
                .map(|c| {
                    let lo = c * LANES_PER_COPY;
                    let n = LANES_PER_COPY.min(w - lo);
                    let a = &amts[(c as usize).min(amts.len() - 1)];
                    a.bit(k).select(&up.slice(lo, n), &keep.slice(lo, n))
                })
                .collect();
            Expr::cat_lsb(&parts)
        };
        cur = m.wire(&format!("{}_l{}", name, k), &next);
    }
    cur
}

/// `a − b` exact for `w`-bit signed operands (a `w + 1`-bit result), split over two
/// register stages ([`add_split`] of the sign-extended `a` and `!b` with a carry in), joined
/// by [`add_join`].
pub(super) fn sub_split(m: &mut ModuleBuilder, name: &str, a: &Expr, b: &Expr) -> [Expr; 3] {
    let sa = Expr::cat(&[a.bit(a.width() - 1), a.clone()]);
    let sb = Expr::cat(&[b.bit(b.width() - 1), b.clone()]);
    let sa = m.wire(&format!("{name}_a"), &sa);
    let nb = m.wire(&format!("{name}_nb"), &!&sb);
    let parts = add_split(m, name, (&sa, &nb), true, 2);
    [parts[0].clone(), parts[1].clone(), parts[2].clone()]
}

/// (any, more than one) of a vector, as a balanced tree.
pub(super) fn any_many(v: &Expr) -> (Expr, Expr) {
    let mut cur: Vec<(Expr, Expr)> = (0..v.width()).map(|i| (v.bit(i), Expr::zero(1))).collect();
    while cur.len() > 1 {
        cur = cur
            .chunks(2)
            .map(|p| {
                if p.len() == 2 {
                    let (a, b) = (&p[0], &p[1]);
                    (&a.0 | &b.0, &a.1 | &b.1 | (&a.0 & &b.0))
                } else {
                    p[0].clone()
                }
            })
            .collect();
    }
    cur.pop().unwrap_or((Expr::zero(1), Expr::zero(1)))
}

/// The sum of equal-width terms by a carry-save (3:2) tree and one final add; the width
/// is kept (the caller sizes it for the sum).
pub(super) fn csa_sum(m: &mut ModuleBuilder, name: &str, v: &[Expr]) -> Expr {
    let w = v.first().map(|x| x.width()).unwrap_or(1);
    let cur = csa_reduce(m, name, v);
    match cur.len() {
        0 => Expr::zero(w),
        1 => cur[0].clone(),
        _ => &cur[0] + &cur[1],
    }
}

/// Kogge-Stone prefix sums of `lanes` over the schedule's `levels`, kept in carry-save form:
/// each level's lanes reduce their terms and their partner's (3 or 4 of them) to two with
/// one carry-save cell per lane (`bpc_csa<n>_w<w>`, a family `u_<add><level>_c<n>` per term
/// count), and one carry-select adder per lane (`bpc_add_cs_w<w>`, family `u_<add>_add`)
/// gives each lane's sum.
pub(super) fn prefix_sums_cs(
    m: &mut ModuleBuilder,
    add: &str,
    lanes: &[Expr],
    levels: std::ops::Range<usize>,
) -> Result<Vec<Expr>, HdlError> {
    let w = lanes.first().map_or(1, Expr::width);
    let mut cur: Vec<Vec<Expr>> = lanes.iter().map(|x| vec![x.clone()]).collect();
    let sched = PrefixTopology::KoggeStone.schedule(lanes.len());
    for (li, lvl) in sched.iter().enumerate().take(levels.end).skip(levels.start) {
        let mut nxt = cur.clone();
        // The lanes that reduce, by their number of terms, in lane order.
        let mut groups: BTreeMap<usize, Vec<(usize, Vec<Expr>)>> = BTreeMap::new();
        for &(t, s) in lvl {
            let terms: Vec<Expr> = cur[t].iter().chain(&cur[s]).cloned().collect();
            match terms.len() {
                0..=2 => nxt[t] = terms,
                n => groups.entry(n).or_default().push((t, terms)),
            }
        }
        for (n, mut group) in groups {
            group.sort_by_key(|(t, _)| *t);
            let cell = csa_cell(n, w)?;
            let ports: Vec<String> = (0..n).map(|j| format!("t{j}_i")).collect();
            let name = format!("u_{add}{}_c{n}", li + 1);
            let u = m.instance_array(&cell, &name, group.len() as u32, |k| {
                let terms = &group[k as usize].1;
                ports
                    .iter()
                    .map(String::as_str)
                    .zip(terms.iter().cloned())
                    .collect()
            });
            for ((t, _), u) in group.iter().zip(&u) {
                nxt[*t] = vec![u.out("s_o"), u.out("c_o")];
            }
        }
        cur = nxt;
    }
    let pairs: Vec<usize> = (0..cur.len()).filter(|&i| cur[i].len() == 2).collect();
    let adder = add_cell(w)?;
    let u = m.instance_array(&adder, &format!("u_{add}_add"), pairs.len() as u32, |k| {
        let t = &cur[pairs[k as usize]];
        vec![("a_i", t[0].clone()), ("b_i", t[1].clone())]
    });
    let mut sums: Vec<Expr> = cur.iter().map(|t| t[0].clone()).collect();
    for (&i, u) in pairs.iter().zip(&u) {
        sums[i] = u.out("y_o");
    }
    Ok(sums)
}

/// The carry-save cell of the prefix sums, `bpc_csa<n>_w<w>`: `n` terms `t<j>_i` reduced by
/// 3:2 levels to a sum `s_o` and a carry `c_o` (shifted up one bit, the top carry dropped).
fn csa_cell(n: usize, w: u32) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("bpc_csa{n}_w{w}"));
    m.header("Generator: hwzip::rtl::bpc::arith::csa_cell");
    m.header(format!("Parameters: {n} terms of {w} bits"));
    m.header(format!(
        "Spec: {SPEC} §2.4 (decoder: prefix sums of the deltas)"
    ));
    let terms: Vec<Expr> = (0..n).map(|j| m.input(&format!("t{j}_i"), w)).collect();
    let r = csa_reduce(&mut m, "csa", &terms);
    m.output_expr("s_o", &r[0]);
    m.output_expr("c_o", &r[1]);
    m.finish()
}

/// The carry-select adder of the prefix sums as a cell, `bpc_add_cs_w<w>`: `y_o = a_i + b_i`
/// modulo `2^w` ([`add_csel`], 8-bit blocks).
fn add_cell(w: u32) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("bpc_add_cs_w{w}"));
    m.header("Generator: hwzip::rtl::bpc::arith::add_cell");
    m.header(format!("Parameters: {w} bits, 8-bit carry-select blocks"));
    m.header(format!(
        "Spec: {SPEC} §2.4 (decoder: prefix sums of the deltas)"
    ));
    let a = m.input("a_i", w);
    let b = m.input("b_i", w);
    let y = add_csel(&mut m, "sum", &a, &b, 8);
    m.output_expr("y_o", &y);
    m.finish()
}
