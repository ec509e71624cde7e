//! The compressor's radix-4 merge tree: segments, their offsets and group lengths, and the
//! registered offset copies that bound the shifters' select fan-out.

use super::arith::{csa_sum, shl_grow};
use crate::hdl::blocks::or_tree;
use crate::hdl::{Expr, ModuleBuilder};

/// One segment of the merge tree: stream-order bits, a length, and its offset within the
/// group of four it merges into next (the sum of its elder siblings' lengths), as equal
/// copies: registered offsets that steer a wide shifter are replicated, one copy per
/// [`LANES_PER_COPY`] output bits (`docs/TOOLCHAIN.md`, bounded fan-out).
pub(super) struct Seg {
    pub(super) bits: Expr,
    pub(super) len: Expr,
    pub(super) off: Vec<Expr>,
}

/// Shifter output bits (or raw-select bits) steered by one register copy of their select.
pub(super) const LANES_PER_COPY: u32 = 32;

/// Sets each segment's offset within its group of four: the sum of the lengths before it
/// (named `<prefix><i>_off`), by one carry-save sum of at most three lengths.
pub(super) fn with_offsets(m: &mut ModuleBuilder, prefix: &str, segs: &mut [Seg]) {
    let lw = segs.iter().map(|s| s.len.width()).max().unwrap_or(1) + 2;
    for i in 0..segs.len() {
        let g = i / 4 * 4;
        segs[i].off = if i == g {
            vec![Expr::zero(1)]
        } else {
            let terms: Vec<Expr> = segs[g..i].iter().map(|s| s.len.zext(lw)).collect();
            let name = format!("{prefix}{i}_off");
            let sum = csa_sum(m, &format!("{name}_csa"), &terms);
            vec![m.wire(&name, &sum)]
        };
    }
}

/// The length of each group of four segments (the next level's segment lengths), by a
/// carry-save sum; registered with the segments ([`reg_glens`]), so the next stage's offsets
/// and sums start from registers and no stage adds more than four lengths.
pub(super) fn group_sums(m: &mut ModuleBuilder, prefix: &str, segs: &[Seg]) -> Vec<Expr> {
    let lw = segs.iter().map(|s| s.len.width()).max().unwrap_or(1) + 2;
    segs.chunks(4)
        .enumerate()
        .map(|(h, grp)| {
            let terms: Vec<Expr> = grp.iter().map(|s| s.len.zext(lw)).collect();
            let sum = csa_sum(m, &format!("{prefix}_gsum{h}_csa"), &terms);
            m.wire(&format!("{prefix}_gsum{h}"), &sum)
        })
        .collect()
}

/// Registers group lengths (`<prefix>_glen<h>_q`; the last level's single one is
/// `total_q`, the whole stream's length).
pub(super) fn reg_glens(
    m: &mut ModuleBuilder,
    prefix: &str,
    glens: &[Expr],
    en: &Expr,
) -> Vec<Expr> {
    glens
        .iter()
        .enumerate()
        .map(|(h, g)| {
            let name = if glens.len() == 1 {
                "total_q".to_string()
            } else {
                format!("{prefix}_glen{h}_q")
            };
            m.reg_next(&name, None, g, Some(en))
        })
        .collect()
}

/// `len` resized to `w` bits (its value always fits; the bits above are marked unused).
pub(super) fn fit_len(m: &mut ModuleBuilder, len: &Expr, w: u32) -> Expr {
    if len.width() > w {
        m.unused(&len.slice(w, len.width() - w));
    }
    len.resize(w)
}

pub(super) fn chunk_segs(segs: Vec<Seg>, k: usize) -> Vec<Vec<Seg>> {
    let mut out: Vec<Vec<Seg>> = Vec::new();
    for (i, s) in segs.into_iter().enumerate() {
        if i % k == 0 {
            out.push(Vec::new());
        }
        if let Some(last) = out.last_mut() {
            last.push(s);
        }
    }
    out
}

/// Registers segments (`<prefix><i>_bits_q`, `<prefix><i>_off_q`). An offset that steers
/// more than 64 shifter outputs (its shift grows to its group's width, at most `cap`) is
/// registered as one copy per [`LANES_PER_COPY`] outputs: copy c (`<prefix><i>_off_c<c>_q`)
/// holds only the amount bits of the shifter levels that reach output bit 32c.
pub(super) fn reg_segs(
    m: &mut ModuleBuilder,
    prefix: &str,
    segs: Vec<Seg>,
    en: &Expr,
    cap: u32,
) -> Vec<Seg> {
    let widths: Vec<u32> = segs.iter().map(|s| s.bits.width()).collect();
    segs.into_iter()
        .enumerate()
        .map(|(i, s)| {
            let off = if i % 4 == 0 {
                vec![Expr::zero(1)]
            } else {
                let g = i / 4 * 4;
                let total = widths[g..(g + 4).min(widths.len())]
                    .iter()
                    .sum::<u32>()
                    .min(cap);
                reg_offset(m, &format!("{prefix}{i}"), &s.off[0], widths[i], total, en)
            };
            Seg {
                bits: m.reg_next(&format!("{prefix}{i}_bits_q"), None, &s.bits, Some(en)),
                // The lengths travel as group sums (`reg_glens`).
                len: Expr::zero(1),
                off,
            }
        })
        .collect()
}

/// Registers the offset `off` of a `bits`-wide segment whose shift grows to `total` bits
/// ([`shl_grow`]): one register, or copies as [`reg_segs`] describes, each returned
/// full-width (the amount bits a copy does not hold read as 0 and are never selected).
pub(super) fn reg_offset(
    m: &mut ModuleBuilder,
    name: &str,
    off: &Expr,
    bits: u32,
    total: u32,
    en: &Expr,
) -> Vec<Expr> {
    let aw = off.width();
    // Output width after each shifter level.
    let mut lvl_w = Vec::new();
    let mut cur = bits;
    for k in 0..aw {
        cur = (cur + (1 << k)).min(total);
        lvl_w.push(cur);
    }
    if cur <= 2 * LANES_PER_COPY {
        return vec![m.reg_next(&format!("{name}_off_q"), None, off, Some(en))];
    }
    (0..cur.div_ceil(LANES_PER_COPY))
        .map(|c| {
            let lo = lvl_w
                .iter()
                .position(|w| *w > c * LANES_PER_COPY)
                .expect("the last level reaches every copy") as u32;
            let r = m.reg_kept(&format!("{name}_off_c{c}_q"), aw - lo, None);
            m.next(&r, &off.slice(lo, aw - lo), Some(en));
            if lo == 0 {
                r.q()
            } else {
                Expr::cat(&[r.q(), Expr::zero(lo)])
            }
        })
        .collect()
}

/// Concatenates a group: segment i shifted up by its registered offset (the lengths
/// before it), ORed; bits at `cap` (the raw threshold) and above dropped. `len` is the
/// group's length (registered by the stage before).
pub(super) fn merge_group(
    m: &mut ModuleBuilder,
    name: &str,
    grp: Vec<Seg>,
    len: &Expr,
    cap: u32,
) -> Seg {
    let total_w: u32 = grp.iter().map(|s| s.bits.width()).sum::<u32>().min(cap);
    let mut terms = Vec::new();
    for (i, s) in grp.iter().enumerate() {
        let sh = if i == 0 {
            s.bits.resize(total_w)
        } else {
            shl_grow(m, &format!("{name}_s{i}"), &s.bits, &s.off, total_w)
        };
        terms.push(sh.zext(total_w));
    }
    let bits = m.wire(&format!("{name}_bits"), &or_tree(terms, total_w));
    Seg {
        bits,
        len: len.clone(),
        off: vec![Expr::zero(1)],
    }
}
