//! Arithmetic cells of the BPC datapaths: exact and carry-select adders, carry-save trees,
//! the Kogge-Stone prefix sum and the LSB-first growing shifter.

use super::{LANES_PER_COPY, SPEC};
use crate::hdl::blocks::{
    add_csel, add_join, add_ks, add_split, add_split_at, csa_reduce, PrefixTopology,
};
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
/// register stages ([`add_split_at`] of the sign-extended `a` and `!b` with a carry in), joined
/// by [`add_join`].
pub(super) fn sub_split(m: &mut ModuleBuilder, name: &str, a: &Expr, b: &Expr) -> [Expr; 3] {
    let sa = Expr::cat(&[a.bit(a.width() - 1), a.clone()]);
    let sb = Expr::cat(&[b.bit(b.width() - 1), b.clone()]);
    let sa = m.wire(&format!("{name}_a"), &sa);
    let nb = m.wire(&format!("{name}_nb"), &!&sb);
    // The low block two bits short of half: its operands come from the input port (or the
    // register in front of the unit), with its carry in as one more bit of chain.
    let w = sa.width();
    let parts = add_split_at(m, name, (&sa, &nb), true, &[w / 2 - 2]);
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
    let terms: Vec<Vec<Expr>> = lanes.iter().map(|x| vec![x.clone()]).collect();
    let cur = prefix_levels_cs(m, add, terms, levels)?;
    lane_sums(m, add, &cur, false)
}

/// The carry-save part of [`prefix_sums_cs`]: `levels` of the Kogge-Stone schedule over
/// lanes given as one or two terms each; returns each lane's one or two terms.
pub(super) fn prefix_levels_cs(
    m: &mut ModuleBuilder,
    add: &str,
    lanes: Vec<Vec<Expr>>,
    levels: std::ops::Range<usize>,
) -> Result<Vec<Vec<Expr>>, HdlError> {
    let w = lanes.first().and_then(|t| t.first()).map_or(1, Expr::width);
    let mut cur = lanes;
    let sched = PrefixTopology::KoggeStone.schedule(cur.len());
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
    Ok(cur)
}

/// Each lane's sum from its one or two terms: one adder per two-term lane (family
/// `u_<add>_add`), carry-select (`bpc_add_cs_w<w>`) or, with `ks`, Kogge-Stone
/// (`bpc_add_ks_w<w>`).
pub(super) fn lane_sums(
    m: &mut ModuleBuilder,
    add: &str,
    cur: &[Vec<Expr>],
    ks: bool,
) -> Result<Vec<Expr>, HdlError> {
    let w = cur.first().and_then(|t| t.first()).map_or(1, Expr::width);
    let pairs: Vec<usize> = (0..cur.len()).filter(|&i| cur[i].len() == 2).collect();
    let adder = add_cell(w, ks)?;
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

/// The adder of the prefix sums as a cell: `y_o = a_i + b_i` modulo `2^w`, carry-select in
/// 8-bit blocks (`bpc_add_cs_w<w>`, [`add_csel`]; ABC ripples a plain 32-bit add) or, with
/// `ks`, Kogge-Stone (`bpc_add_ks_w<w>`, [`add_ks`]).
fn add_cell(w: u32, ks: bool) -> Result<Arc<Module>, HdlError> {
    let kind = if ks { "ks" } else { "cs" };
    let mut m = ModuleBuilder::new(format!("bpc_add_{kind}_w{w}"));
    m.header("Generator: hwzip::rtl::bpc::arith::add_cell");
    m.header(if ks {
        format!("Parameters: {w} bits, Kogge-Stone carries")
    } else {
        format!("Parameters: {w} bits, 8-bit carry-select blocks")
    });
    m.header(format!(
        "Spec: {SPEC} §2.4 (decoder: prefix sums of the deltas)"
    ));
    let a = m.input("a_i", w);
    let b = m.input("b_i", w);
    let y = if ks {
        add_ks(&mut m, "sum", &a, &b)
    } else {
        add_csel(&mut m, "sum", &a, &b, 8)
    };
    m.output_expr("y_o", &y);
    m.finish()
}

/// The second half of [`split_cells`]: the lanes' sums from their registered parts.
pub(super) type Join = Box<dyn FnOnce(&mut ModuleBuilder, &Expr) -> Vec<Expr>>;

/// Each lane's sum from its one or two terms split over a register: the parts to register
/// (per lane in order: a one-term lane's term, a two-term lane's [`add_split`] parts from
/// `bpc_add_split_w<w>`, family `u_<add>_split`), and the join that picks the sums from the
/// registered parts (`bpc_add_join_w<w>`, family `u_<add>_join`).
pub(super) fn split_cells(
    m: &mut ModuleBuilder,
    add: &str,
    terms: &[Vec<Expr>],
) -> Result<(Expr, Join), HdlError> {
    let w = terms.first().and_then(|t| t.first()).map_or(1, Expr::width);
    let (split, join) = (split_cell(w)?, join_cell(w)?);
    let pairs: Vec<usize> = (0..terms.len()).filter(|&i| terms[i].len() == 2).collect();
    let u = m.instance_array(&split, &format!("u_{add}_split"), pairs.len() as u32, |k| {
        let t = &terms[pairs[k as usize]];
        vec![("a_i", t[0].clone()), ("b_i", t[1].clone())]
    });
    let mut flat: Vec<Expr> = terms.iter().map(|t| t[0].clone()).collect();
    for (&i, u) in pairs.iter().zip(&u) {
        flat[i] = Expr::cat_lsb(&[u.out("lo_o"), u.out("c0_o"), u.out("c1_o")]);
    }
    let widths: Vec<u32> = flat.iter().map(Expr::width).collect();
    let add = add.to_string();
    let join_fn = move |m: &mut ModuleBuilder, r: &Expr| {
        let mut lo = 0;
        let parts: Vec<Expr> = widths
            .iter()
            .map(|&wd| {
                lo += wd;
                r.slice(lo - wd, wd)
            })
            .collect();
        let h = w / 2;
        let u = m.instance_array(&join, &format!("u_{add}_join"), pairs.len() as u32, |k| {
            let x = &parts[pairs[k as usize]];
            vec![
                ("lo_i", x.slice(0, h + 1)),
                ("c0_i", x.slice(h + 1, w - h)),
                ("c1_i", x.slice(w + 1, w - h)),
            ]
        });
        let mut words = parts;
        for (&i, u) in pairs.iter().zip(&u) {
            words[i] = u.out("y_o");
        }
        words
    };
    Ok((Expr::cat_lsb(&flat), Box::new(join_fn)))
}

/// `bpc_add_split_w<w>`: `a_i + b_i` in two halves ([`add_split`]): the low half's sum with
/// its carry `lo_o`, the high half's sums for carries in 0 and 1, `c0_o` and `c1_o`.
fn split_cell(w: u32) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("bpc_add_split_w{w}"));
    m.header("Generator: hwzip::rtl::bpc::arith::split_cell");
    m.header(format!("Parameters: {w} bits in two halves"));
    m.header(format!(
        "Spec: {SPEC} §2.4 (decoder: prefix sums of the deltas)"
    ));
    let a = m.input("a_i", w);
    let b = m.input("b_i", w);
    let parts = add_split(&mut m, "sum", (&a, &b), false, 2);
    m.output_expr("lo_o", &parts[0]);
    m.output_expr("c0_o", &parts[1]);
    m.output_expr("c1_o", &parts[2]);
    m.finish()
}

/// `bpc_add_join_w<w>`: the sum from the registered halves of `bpc_add_split_w<w>`
/// ([`add_join`]).
fn join_cell(w: u32) -> Result<Arc<Module>, HdlError> {
    let h = w / 2;
    let mut m = ModuleBuilder::new(format!("bpc_add_join_w{w}"));
    m.header("Generator: hwzip::rtl::bpc::arith::join_cell");
    m.header(format!("Parameters: {w} bits in two halves"));
    m.header(format!(
        "Spec: {SPEC} §2.4 (decoder: prefix sums of the deltas)"
    ));
    let lo = m.input("lo_i", h + 1);
    let c0 = m.input("c0_i", w - h);
    let c1 = m.input("c1_i", w - h);
    let y = add_join(&mut m, "sum", &[lo, c0, c1]);
    m.output_expr("y_o", &y);
    m.finish()
}
