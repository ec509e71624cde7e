//! The BPC decompressor's output: the words from the base and the deltas,
//! `w[i] = base + d[1] + ... + d[i]`, as carry-save Kogge-Stone prefix sums over
//! `dec_sum_stages` register stages.

use super::arith::{lane_sums, prefix_levels_cs, prefix_sums_cs, split_cells};
use super::*;
use crate::hdl::blocks::PrefixTopology;
use crate::hdl::Pipeline;

/// The sums' input: the base, then the deltas d[1..n), delta i + 1 holding bit i of every
/// plane (a transpose, wiring only).
pub(super) fn deltas_of_planes(g: Geo, base: &Expr, planes: &[Expr]) -> Expr {
    let mut el = vec![base.clone()];
    el.extend(
        (0..g.n - 1).map(|kk| Expr::cat_lsb(&planes.iter().map(|f| f.bit(kk)).collect::<Vec<_>>())),
    );
    Expr::cat_lsb(&el)
}

/// The flags that travel with an entry through the sums: an error and a zero entry give
/// zeros; with `raw`, a raw entry's input holds its words, which pass the sums unchanged
/// (without it, a raw entry comes as its own deltas).
pub(super) struct Flags {
    err: Expr,
    kill: Expr,
    raw: Option<Expr>,
}

impl Flags {
    /// The flags of the entry entering the sums.
    pub(super) fn new(err: &Expr, zero: &Expr, raw: Option<&Expr>) -> Flags {
        Flags {
            err: err.clone(),
            kill: zero.clone(),
            raw: raw.cloned(),
        }
    }

    /// The flags registered in `st` (`err<k>_q`, `kill<k>_q`, `raw<k>_q`).
    fn reg(&self, m: &mut ModuleBuilder, st: &crate::hdl::Stage, k: usize) -> Flags {
        Flags {
            err: st.reg(m, &format!("err{k}_q"), &self.err),
            kill: st.reg(m, &format!("kill{k}_q"), &self.kill),
            raw: self
                .raw
                .as_ref()
                .map(|r| st.reg(m, &format!("raw{k}_q"), r)),
        }
    }

    /// `sums`, or a raw entry's words `words`.
    fn pass(&self, words: &[Expr], sums: Vec<Expr>) -> Vec<Expr> {
        match &self.raw {
            Some(r) => words
                .iter()
                .zip(sums)
                .map(|(w, s)| r.select(w, &s))
                .collect(),
            None => sums,
        }
    }

    /// Carry-save terms after some levels, or a raw entry's words as (word, 0), from the
    /// terms before them (whose first term is the word).
    fn pass_terms(&self, before: &[Vec<Expr>], after: Vec<Vec<Expr>>) -> Vec<Vec<Expr>> {
        let Some(r) = &self.raw else { return after };
        before
            .iter()
            .zip(after)
            .map(|(b, a)| match a.len() {
                2 => vec![r.select(&b[0], &a[0]), (!r).gate(&a[1])],
                _ => a,
            })
            .collect()
    }
}

/// Output: w[i] = base + d[1] + ... + d[i] from `el_in` (base and deltas, or a raw entry's
/// words with [`Flags`] `raw`) registered in el1, as carry-save Kogge-Stone sums in
/// `dec_sum_stages` stages: 1, every level and a carry-select add per word; 2, the first half
/// of the levels and their add before el2, the rest after it; 3, the levels in two halves
/// whose carry-save pairs are registered (el2, el3) and Kogge-Stone adds alone in the last
/// stage; 4, as 3 with each add split over el4 in 16-bit halves (`docs/TOOLCHAIN.md`: ABC
/// ripples every carry chain). Returns the entry and error registers (an error or a zero
/// entry gives zeros).
pub(super) fn sums(
    m: &mut ModuleBuilder,
    pl: &mut Pipeline,
    p: &BpcRtlParams,
    g: Geo,
    el_in: &Expr,
    f: Flags,
) -> Result<(Expr, Expr), HdlError> {
    m.comment(format!(
        "Output: base and deltas (el1); carry-save Kogge-Stone sums in {} stage(s)",
        p.dec_sum_stages
    ));
    let st = pl.stage(m, "el1");
    let e1 = st.reg(m, "el1_q", el_in);
    let mut f = f.reg(m, &st, 1);
    let nl = PrefixTopology::KoggeStone.schedule(g.n as usize).len();
    let lanes = e1.lanes(g.s);
    let words = match p.dec_sum_stages {
        1 => {
            // Named: `hwzip prove` checks the network from `el1_q` to `sum_words`.
            let w = prefix_sums_cs(m, "ps", &lanes, 0..nl)?;
            let w = m.wire("sum_words", &Expr::cat_lsb(&w)).lanes(g.s);
            f.pass(&lanes, w)
        }
        2 => {
            // Levels [0, nl/2) and their add before el2_q, the rest after.
            let part = prefix_sums_cs(m, "psa", &lanes, 0..nl / 2)?;
            let part = f.pass(&lanes, part);
            let st = pl.stage(m, "el2");
            let e2 = st.reg(m, "el2_q", &Expr::cat_lsb(&part));
            f = f.reg(m, &st, 2);
            let lanes = e2.lanes(g.s);
            let w = prefix_sums_cs(m, "ps", &lanes, nl / 2..nl)?;
            f.pass(&lanes, w)
        }
        s => {
            let cut = nl.div_ceil(2);
            let mut terms: Vec<Vec<Expr>> = lanes.iter().map(|x| vec![x.clone()]).collect();
            for (k, (add, lv)) in [("psa", 0..cut), ("psb", cut..nl)].into_iter().enumerate() {
                let after = prefix_levels_cs(m, add, terms.clone(), lv)?;
                let after = f.pass_terms(&terms, after);
                if k == 1 {
                    // A raw entry's words are (word, 0) from here on: the adds pass them.
                    f.raw = None;
                }
                // Register each lane's one or two carry-save terms.
                let counts: Vec<usize> = after.iter().map(Vec::len).collect();
                let st = pl.stage(m, &format!("el{}", k + 2));
                let r = st.reg(
                    m,
                    &format!("el{}_q", k + 2),
                    &Expr::cat_lsb(&after.concat()),
                );
                f = f.reg(m, &st, k + 2);
                let mut it = r.lanes(g.s).into_iter();
                terms = counts
                    .iter()
                    .map(|&c| (0..c).filter_map(|_| it.next()).collect())
                    .collect();
            }
            if s == 3 {
                lane_sums(m, "ps", &terms, true)?
            } else {
                let (parts, join) = split_cells(m, "ps", &terms)?;
                let st = pl.stage(m, "el4");
                let r = st.reg(m, "el4_q", &parts);
                f = f.reg(m, &st, 4);
                join(m, &r)
            }
        }
    };
    let res = (!(&f.err | &f.kill)).gate(&Expr::cat_lsb(&words));
    let st = pl.stage(m, "out");
    let oblk = st.reg(m, "out_blk_q", &res);
    let oerr = st.reg(m, "out_err_q", &f.err);
    Ok((oblk, oerr))
}

/// The module-name suffix of the sums' stages.
pub(super) fn sum_suffix(p: &BpcRtlParams) -> String {
    match p.dec_sum_stages {
        1 => String::new(),
        s => format!("_o{s}"),
    }
}
