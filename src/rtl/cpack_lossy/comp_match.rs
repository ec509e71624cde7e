//! Stage C of the PACT'12 compressor: the dictionary loop alone (FORMATS §2.3, §6 item 1).
//!
//! Per beat, `k` words are compared against the dictionary. Only what the next beat needs is
//! decided here: the pushes and their entries. The match vectors are registered in parts for
//! stage T, which merges them, applies the pair forwarding and forms the tokens with
//! [`crate::rtl::cpack::word_token`]. Three measures keep the loop short on Nangate45
//! (`docs/FORMATS.md`):
//! * the dictionary registers take a beat's pushes one cycle late; the entries still pending
//!   are masked out of the dictionary compare and matched against the pending words, whose
//!   one compare result per word enters the match flags once (an OR term), not per entry;
//! * word 1's match flags are computed for both outcomes of word 0's push (entry `wptr`
//!   replaced by word 0 or not) and chosen by it at the end;
//! * the patterns, indices and tokens are formed in stage T.

use crate::hdl::{Expr, ModuleBuilder};
use crate::model::cpack::{CpackParams, PushPolicy};
use crate::rtl::cpack::{bytes_eq, push_flag, MATCH_KINDS};

/// One beat's results. A word's match vector of class `c` over the entries is
/// `mv[c] | OR_p (pend_eq[p][c] & pend_valid[p])`, with word 1's entry `fwd.1` then replaced
/// by `fwd.0[c]`.
pub(crate) struct BeatMatch {
    /// Per word: matches against the dictionary registers, valid entries without a pending
    /// write only.
    pub mv: Vec<[Expr; 3]>,
    /// Per word, per pending write: the word against the pending word.
    pub pend_eq: Vec<Vec<[Expr; 3]>>,
    /// Per pending write: its entry (one-hot) when that entry is valid.
    pub pend_valid: Vec<Expr>,
    /// Word 1 against word 0 and the one-hot of the entry word 0 goes to (zero when it does
    /// not push).
    pub fwd: Option<([Expr; 3], Expr)>,
    /// Per word: whether it is pushed.
    pub pushes: Vec<Expr>,
}

/// The dictionary as stage C sees it.
pub(crate) struct DictView<'a> {
    /// The entry registers.
    pub dq: &'a [Expr],
    /// Valid entries.
    pub valid: Expr,
    /// Valid entries whose register is up to date (no pending write; registered).
    pub dict_ok: Expr,
    /// One-hot of the write pointer.
    pub wsel0: Expr,
    /// Pending writes: (word, one-hot of its entry, live). Live when it is the previous
    /// beat's push of the same block, so its entry is valid and is not the pointer's.
    pub pending: Vec<(Expr, Expr, Expr)>,
}

/// Matches `words` (1 or 2) against the dictionary `dv`.
pub(crate) fn beat_match(
    m: &mut ModuleBuilder,
    cp: &CpackParams,
    words: &[Expr],
    dv: &DictView,
) -> BeatMatch {
    let (dq, valid, dict_ok, wsel0) = (dv.dq, &dv.valid, &dv.dict_ok, &dv.wsel0);
    let pending = &dv.pending;
    let ne = dq.len() as u32;
    let pend_valid: Vec<Expr> = pending
        .iter()
        .enumerate()
        .map(|(p, (_, pwe, _))| m.wire(&format!("c_pend{}_valid", p), &(valid & pwe)))
        .collect();
    let mut mvs: Vec<[Expr; 3]> = Vec::new();
    let mut pend_eqs: Vec<Vec<[Expr; 3]>> = Vec::new();
    let mut pushes: Vec<Expr> = Vec::new();
    let mut fwd = None;
    for (i, w) in words.iter().enumerate() {
        let pend_eq: Vec<[Expr; 3]> = pending
            .iter()
            .enumerate()
            .map(|(p, (pw, _, _))| {
                let e = bytes_eq(w, pw);
                [0, 1, 2].map(|c| m.wire(&format!("c{}_pend{}_{}", i, p, MATCH_KINDS[c]), &e[c]))
            })
            .collect();
        let mut direct: [Vec<Expr>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for (j, d) in dq.iter().enumerate() {
            let e = bytes_eq(w, d);
            for c in 0..3 {
                direct[c].push(&dict_ok.bit(j as u32) & &e[c]);
            }
        }
        let direct = [0, 1, 2].map(|c| {
            m.wire(
                &format!("c{}_d{}", i, MATCH_KINDS[c]),
                &Expr::cat_lsb(&direct[c]),
            )
        });
        // Any match of class c, the dictionary entries in `mask` only (a live pending entry
        // is never the pointer's).
        let any_in = |c: usize, mask: Option<&Expr>| {
            let d = match mask {
                Some(k) => (&direct[c] & k).any(),
                None => direct[c].any(),
            };
            pend_eq
                .iter()
                .zip(pending)
                .fold(d, |a, (pe, (_, _, live))| &a | &(&pe[c] & live))
        };
        let nz = m.wire(&format!("c{}_wide", i), &w.slice(8, 24).any());
        // The push needs the full-word and halfword flags (`push_flag`).
        let any = if i == 0 {
            [0, 2].map(|c| any_in(c, None))
        } else {
            // Word 0 pushed: entry `wptr` holds word 0.
            let f = bytes_eq(w, &words[0]);
            let f = [0, 1, 2].map(|c| m.wire(&format!("c{}_fw_{}", i, MATCH_KINDS[c]), &f[c]));
            let p0 = &pushes[0];
            let not_w = !wsel0.clone();
            let any = [0, 2].map(|c| {
                let a_keep = any_in(c, None);
                let a_fwd = &any_in(c, Some(&not_w)) | &f[c];
                p0.select(&a_fwd, &a_keep)
            });
            let fsel = m.wire(&format!("c{}_fwd", i), &(p0.repeat(ne) & wsel0));
            fwd = Some((f, fsel));
            any
        };
        let push = push_flag(cp.push, &nz, &any[0], &any[1]);
        pushes.push(m.wire(&format!("c{}_push", i), &push));
        mvs.push(direct);
        pend_eqs.push(pend_eq);
    }
    if cp.push == PushPolicy::AllNonZero && !pending.is_empty() {
        // Every non-zero word pushes: the match flags, and the live bits, go unused.
        let live: Vec<Expr> = pending.iter().map(|(_, _, l)| l.clone()).collect();
        m.unused(&Expr::cat(&live));
    }
    BeatMatch {
        mv: mvs,
        pend_eq: pend_eqs,
        pend_valid,
        fwd,
        pushes,
    }
}

/// Stage T's merge of the registered parts (see [`BeatMatch`]): word `i`'s three match
/// vectors.
pub(crate) fn merge(
    mv: &[Expr; 3],
    pend_eq: &[[Expr; 3]],
    pend_valid: &[Expr],
    fwd: Option<&([Expr; 3], Expr)>,
) -> [Expr; 3] {
    [0, 1, 2].map(|c| {
        let v = pend_eq
            .iter()
            .zip(pend_valid)
            .fold(mv[c].clone(), |a, (pe, pv)| {
                a | (pe[c].repeat(pv.width()) & pv.clone())
            });
        match fwd {
            Some((f, sel)) => (sel.clone() & f[c].repeat(sel.width())) | (v & !sel.clone()),
            None => v,
        }
    })
}
