//! Reusable datapath blocks, written as log-depth networks with named intermediate wires.
//!
//! Every block takes the builder and a name prefix; intermediate nets are called
//! `<prefix>_<stage>_<lane>`, so the emitted Verilog reads like the network diagram.

use super::expr::Expr;
use super::module::{clog2, ModuleBuilder};
use serde::{Deserialize, Serialize};

/// Parallel-prefix network topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PrefixTopology {
    /// Serial chain: n−1 operators, depth n−1.
    Ripple,
    /// Sklansky (divide and conquer): (n/2)·log2 n operators, depth log2 n, high fan-out.
    Sklansky,
    /// Kogge–Stone: n·log2 n − n + 1 operators, depth log2 n, fan-out 2.
    KoggeStone,
    /// Brent–Kung: 2n − 2 − log2 n operators, depth 2·log2 n − 1 (the cDMA paper's 11 adders
    /// for n = 8).
    #[default]
    BrentKung,
}

impl PrefixTopology {
    /// Short tag used in module names.
    pub fn tag(self) -> &'static str {
        match self {
            PrefixTopology::Ripple => "rc",
            PrefixTopology::Sklansky => "sk",
            PrefixTopology::KoggeStone => "ks",
            PrefixTopology::BrentKung => "bk",
        }
    }

    /// The operator schedule for `n` inputs: levels of `(target, source)` pairs meaning
    /// `x[target] = op(x[source], x[target])`, with `source < target`; operations in one level
    /// are independent.
    pub fn schedule(self, n: usize) -> Vec<Vec<(usize, usize)>> {
        let mut levels = Vec::new();
        if n < 2 {
            return levels;
        }
        match self {
            PrefixTopology::Ripple => {
                for i in 1..n {
                    levels.push(vec![(i, i - 1)]);
                }
            }
            PrefixTopology::KoggeStone => {
                let mut d = 1;
                while d < n {
                    levels.push((d..n).map(|i| (i, i - d)).collect());
                    d *= 2;
                }
            }
            PrefixTopology::Sklansky => {
                let mut d = 1;
                while d < n {
                    // Blocks of size 2d: the upper half takes the last element of the lower half.
                    let lvl: Vec<(usize, usize)> = (0..n)
                        .filter(|i| (i / d) % 2 == 1)
                        .map(|i| (i, (i / d) * d - 1))
                        .collect();
                    levels.push(lvl);
                    d *= 2;
                }
            }
            PrefixTopology::BrentKung => {
                // Up-sweep.
                let mut d = 1;
                while d < n {
                    let lvl: Vec<(usize, usize)> = (0..n)
                        .filter(|i| (i + 1) % (2 * d) == 0)
                        .map(|i| (i, i - d))
                        .collect();
                    if !lvl.is_empty() {
                        levels.push(lvl);
                    }
                    d *= 2;
                }
                // Down-sweep.
                d /= 2;
                while d >= 1 {
                    let lvl: Vec<(usize, usize)> = (0..n)
                        .filter(|i| (i + 1) % (2 * d) == d && *i >= 2 * d)
                        .map(|i| (i, i - d))
                        .collect();
                    if !lvl.is_empty() {
                        levels.push(lvl);
                    }
                    if d == 1 {
                        break;
                    }
                    d /= 2;
                }
            }
        }
        levels
    }

    /// Number of operators for `n` inputs.
    pub fn op_count(self, n: usize) -> usize {
        self.schedule(n).iter().map(|l| l.len()).sum()
    }
}

/// Inclusive parallel prefix over `xs` with the associative operator `op`
/// (`out[i] = x[0] op … op x[i]`). Each level's results are named `<name>_s<level>_<i>`.
pub fn prefix(
    m: &mut ModuleBuilder,
    name: &str,
    xs: &[Expr],
    topo: PrefixTopology,
    op: &dyn Fn(&Expr, &Expr) -> Expr,
) -> Vec<Expr> {
    let mut cur: Vec<Expr> = xs.to_vec();
    for (li, level) in topo.schedule(xs.len()).iter().enumerate() {
        let mut next = cur.clone();
        for &(t, s) in level {
            next[t] = m.wire(
                &format!("{}_s{}_{}", name, li + 1, t),
                &op(&cur[s], &cur[t]),
            );
        }
        cur = next;
    }
    cur
}

/// `a + b` modulo `2^w` (`w` = the wider operand) as gates: a Kogge-Stone carry network of
/// (generate, propagate) vectors, one pair of wires `<name>_g<d>`/`<name>_p<d>` per span `d`,
/// and the sum `<name>` = propagate XOR carries. Written without `+`, so Yosys's `alumacc`
/// cannot merge it into a wider multi-operand adder: the depth is this network's
/// (`2 + 2 log2 w` gate levels), whatever the sums around it.
pub fn add_ks(m: &mut ModuleBuilder, name: &str, a: &Expr, b: &Expr) -> Expr {
    let w = a.width().max(b.width());
    let (a, b) = (a.zext(w), b.zext(w));
    if w == 1 {
        return m.wire(name, &(&a ^ &b));
    }
    let p0 = m.wire(&format!("{}_p", name), &(&a ^ &b));
    let mut g = m.wire(&format!("{}_g", name), &(&a & &b));
    let mut p = p0.clone();
    let mut d = 1;
    while d < w {
        let ng = &g | &(&p & &g.shl(d));
        g = m.wire(&format!("{}_g{}", name, d), &ng);
        d *= 2;
        if d < w {
            // Spans reaching bit 0 no longer need a propagate: shifting in zeros is enough.
            p = m.wire(&format!("{}_p{}", name, d / 2), &(&p & &p.shl(d / 2)));
        }
    }
    // No carry leaves the top bit.
    m.unused(&g.bit(w - 1));
    m.wire(name, &(&p0 ^ &g.shl(1)))
}

/// `a + b` modulo `2^w` as carry-select blocks of `block` bits: each block adds for both
/// carries in, and a mux chain on the block carries picks the sums (ABC ripples a plain
/// 32-bit add; block wires `<name>_b<i>c0`, `..c1`, `<name>_b<i>`).
pub fn add_csel(m: &mut ModuleBuilder, name: &str, a: &Expr, b: &Expr, block: u32) -> Expr {
    let w = a.width();
    let mut parts = Vec::new();
    let mut carry: Option<Expr> = None;
    let mut lo = 0;
    let mut i = 0;
    while lo < w {
        let bw = block.min(w - lo);
        let (ab, bb) = (a.slice(lo, bw).zext(bw + 1), b.slice(lo, bw).zext(bw + 1));
        let s0 = m.wire(&format!("{name}_b{i}c0"), &(&ab + &bb));
        match &carry {
            None => {
                parts.push(s0.slice(0, bw));
                carry = Some(s0.bit(bw));
            }
            Some(c) => {
                let s1 = m.wire(
                    &format!("{name}_b{i}c1"),
                    &(&ab + &bb + Expr::lit(bw + 1, 1)),
                );
                let sel = m.wire(&format!("{name}_b{i}"), &c.select(&s1, &s0));
                parts.push(sel.slice(0, bw));
                carry = Some(sel.bit(bw));
            }
        }
        lo += bw;
        i += 1;
    }
    if let Some(c) = carry {
        m.unused(&c);
    }
    parts.reverse();
    m.wire(name, &Expr::cat(&parts))
}

/// `a + b + cin` modulo `2^w` (`w` = the wider operand) split over two register stages, in
/// `parts` blocks: the low block's sum with its carry out (`<name>_lo`), and every higher
/// block's sums for both carries in (`<name>_b<k>c0`, `<name>_b<k>c1`, with a carry out
/// except the top one), to be registered and joined by [`add_join`] one stage later. Each
/// stage then holds a block-wide add or a short chain of muxes, not a `w`-bit carry chain:
/// ABC maps every adder here as a ripple chain (about 40 ps a bit on Nangate45), whatever
/// network it is written as.
pub fn add_split(
    m: &mut ModuleBuilder,
    name: &str,
    (a, b): (&Expr, &Expr),
    cin: bool,
    parts: u32,
) -> Vec<Expr> {
    let w = a.width().max(b.width());
    let edges: Vec<u32> = (1..parts).map(|k| k * w / parts).collect();
    add_split_at(m, name, (a, b), cin, &edges)
}

/// [`add_split`] with the blocks' edges given (increasing, inside the width): a low block
/// narrower than the others, for example, where its operands arrive later.
pub fn add_split_at(
    m: &mut ModuleBuilder,
    name: &str,
    (a, b): (&Expr, &Expr),
    cin: bool,
    edges: &[u32],
) -> Vec<Expr> {
    let w = a.width().max(b.width());
    let (a, b) = (a.zext(w), b.zext(w));
    // A carry in is a set bit below both operands: one adder, not an add and an increment
    // in series (as Yosys maps `a + b + 1`).
    let add = |m: &mut ModuleBuilder, nm: &str, lo: u32, hi: u32, c: bool, ow: u32| {
        let (x, y) = (a.slice(lo, hi - lo).zext(ow), b.slice(lo, hi - lo).zext(ow));
        if !c {
            return m.wire(nm, &(x + y));
        }
        let one = Expr::ones(1);
        let s = m.wire(
            &format!("{nm}_c"),
            &(Expr::cat(&[x, one.clone()]) + Expr::cat(&[y, one])),
        );
        m.unused(&s.bit(0));
        m.wire(nm, &s.slice(1, ow))
    };
    let parts = edges.len() as u32 + 1;
    let edge = |k: u32| match k {
        0 => 0,
        k if k == parts => w,
        k => edges[k as usize - 1],
    };
    let mut out = vec![add(m, &format!("{name}_lo"), 0, edge(1), cin, edge(1) + 1)];
    for k in 1..parts {
        let (lo, hi) = (edge(k), edge(k + 1));
        let ow = hi - lo + u32::from(k + 1 < parts);
        for c in [false, true] {
            let nm = format!("{name}_b{k}c{}", c as u32);
            out.push(add(m, &nm, lo, hi, c, ow));
        }
    }
    out
}

/// The sum from the registered parts of [`add_split`]: each higher block chosen by the
/// carry below it (`<name>_b<k>` for the blocks that pass a carry on).
pub fn add_join(m: &mut ModuleBuilder, name: &str, parts: &[Expr]) -> Expr {
    let lo = &parts[0];
    let mut carry = lo.bit(lo.width() - 1);
    let mut out = vec![lo.slice(0, lo.width() - 1)];
    let pairs: Vec<&[Expr]> = parts[1..].chunks(2).collect();
    for (k, pr) in pairs.iter().enumerate() {
        let sel = carry.select(&pr[1], &pr[0]);
        if k + 1 == pairs.len() {
            out.push(sel);
        } else {
            let sel = m.wire(&format!("{name}_b{}", k + 1), &sel);
            carry = sel.bit(sel.width() - 1);
            out.push(sel.slice(0, sel.width() - 1));
        }
    }
    out.reverse();
    Expr::cat(&out)
}

/// A `w`-bit counter (reset 0) that adds 1 in the cycles `en` holds, with no carry chain
/// longer than half its width (ABC ripples carries, `docs/TOOLCHAIN.md`): the low half
/// (`<name>_lo_q`) increments, and the high half (`<name>_hi_q`) loads its own increment,
/// registered a cycle earlier (`<name>_hi1_q`), when the low half wraps. Exact at every
/// cycle, since the low half cannot wrap in two cycles running. Returns the count.
pub fn counter_split(m: &mut ModuleBuilder, name: &str, w: u32, en: &Expr) -> Expr {
    let h = w / 2;
    let lo = m.reg(&format!("{name}_lo_q"), h, Some(0));
    let hi = m.reg(&format!("{name}_hi_q"), w - h, Some(0));
    let hi1 = m.reg(&format!("{name}_hi1_q"), w - h, Some(1));
    let wrap = m.wire(&format!("{name}_wrap"), &(en & &lo.q().eq(&Expr::ones(h))));
    m.next(&lo, &(lo.q() + Expr::lit(h, 1)), Some(en));
    m.next(&hi, &hi1.q(), Some(&wrap));
    m.next(&hi1, &(hi.q() + Expr::lit(w - h, 1)), None);
    Expr::cat(&[hi.q(), lo.q()])
}

/// Equal-width terms reduced to at most two with the same sum (mod 2^width) by layers of
/// carry-save (3:2) adders (`<name>_l<layer>_<i>s` sums, `..m` majorities before their
/// shift); the width is kept.
pub fn csa_reduce(m: &mut ModuleBuilder, name: &str, v: &[Expr]) -> Vec<Expr> {
    let w = v.first().map(|x| x.width()).unwrap_or(1);
    let mut cur = v.to_vec();
    let mut lvl = 0;
    while cur.len() > 2 {
        let mut nxt = Vec::new();
        for (i, c) in cur.chunks(3).enumerate() {
            if c.len() == 3 {
                let sum = m.wire(&format!("{name}_l{lvl}_{i}s"), &(&c[0] ^ &c[1] ^ &c[2]));
                let maj = (&c[0] & &c[1]) | (&c[0] & &c[2]) | (&c[1] & &c[2]);
                let maj = m.wire(&format!("{name}_l{lvl}_{i}m"), &maj);
                m.unused(&maj.bit(w - 1));
                nxt.push(sum);
                nxt.push(Expr::cat(&[maj.slice(0, w - 1), Expr::zero(1)]));
            } else {
                nxt.extend(c.iter().cloned());
            }
        }
        cur = nxt;
        lvl += 1;
    }
    cur
}

/// The sum of `terms` modulo `2^w` as gates: [`csa_reduce`] to two operands, then
/// [`add_ks`]. Depth: one full adder per layer (about `log1.5(n / 2)` layers) plus the
/// Kogge-Stone network, whatever `alumacc` would have grouped.
pub fn sum_ks(m: &mut ModuleBuilder, name: &str, terms: &[Expr], w: u32) -> Expr {
    let ops: Vec<Expr> = terms.iter().map(|t| t.resize(w)).collect();
    let mut ops = csa_reduce(m, name, &ops).into_iter();
    match (ops.next(), ops.next()) {
        (None, _) => Expr::zero(w),
        (Some(a), None) => m.wire(name, &a),
        (Some(a), Some(b)) => add_ks(m, name, &a, &b),
    }
}

/// Prefix counts of 1-bit flags. Returns `(exclusive, total)`: `exclusive[i]` = number of set
/// flags below lane i (width `clog2(n)`, at least 1), `total` = number set (width `clog2(n+1)`).
pub fn prefix_count(
    m: &mut ModuleBuilder,
    name: &str,
    flags: &[Expr],
    topo: PrefixTopology,
) -> (Vec<Expr>, Expr) {
    let n = flags.len();
    let tw = clog2(n as u64 + 1).max(1);
    let xs: Vec<Expr> = flags.iter().map(|f| f.zext(tw)).collect();
    let incl = prefix(m, name, &xs, topo, &|a, b| a + b);
    let ew = clog2(n as u64).max(1);
    let mut excl = vec![Expr::zero(ew)];
    for x in incl.iter().take(n.saturating_sub(1)) {
        excl.push(x.resize(ew));
        // x[i] <= i < n needs only `ew` bits; the carry bit of these nodes is never read.
        if tw > ew {
            m.unused(&x.slice(ew, tw - ew));
        }
    }
    (excl, incl[n - 1].clone())
}

/// Exclusive prefix counts of 1-bit flags as one-hot vectors: `result[i][k]` is 1 when
/// exactly `k` of `flags[0..i]` are set (`result[i]` has `i + 1` bits, `result[0]` = `[1]`).
/// Built divide-and-conquer (Sklansky): the counts of a right half are the one-hot
/// convolution (`OR_j a[j] & b[k-j]`) of the left half's total with the right half's own
/// counts, so each level is one AND-OR and no binary count is decoded after the network.
/// Cost grows as n² per level: meant for a sector's handful of lanes. Wire `<name>_<a>_<b>`
/// is the one-hot count of flags `a..=b`.
pub fn prefix_onehot(m: &mut ModuleBuilder, name: &str, flags: &[Expr]) -> Vec<Vec<Expr>> {
    fn conv(a: &Expr, b: &Expr) -> Expr {
        let bits: Vec<Expr> = (0..a.width() + b.width() - 1)
            .map(|k| {
                let terms: Vec<Expr> = (0..a.width())
                    .filter(|&j| k >= j && k - j < b.width())
                    .map(|j| a.bit(j) & b.bit(k - j))
                    .collect();
                or_tree(terms, 1)
            })
            .collect();
        Expr::cat_lsb(&bits)
    }
    // The inclusive counts of `f` (flags `lo..`), one per flag; without the last one unless
    // `last` (the whole range's count is read only as a left half's total).
    fn incl(m: &mut ModuleBuilder, name: &str, f: &[Expr], lo: usize, last: bool) -> Vec<Expr> {
        if f.len() == 1 {
            if !last {
                return Vec::new();
            }
            let v = Expr::cat_lsb(&[!&f[0], f[0].clone()]);
            return vec![m.wire(&format!("{name}_{lo}_{lo}"), &v)];
        }
        let h = f.len() / 2;
        let mut left = incl(m, name, &f[..h], lo, true);
        let total = left[h - 1].clone();
        for (j, r) in incl(m, name, &f[h..], lo + h, last).iter().enumerate() {
            let v = conv(&total, r);
            left.push(m.wire(&format!("{name}_{lo}_{}", lo + h + j), &v));
        }
        left
    }
    let mut out = vec![vec![Expr::ones(1)]];
    if flags.is_empty() {
        return out;
    }
    for v in incl(m, name, flags, 0, false) {
        out.push((0..v.width()).map(|k| v.bit(k)).collect());
    }
    out
}

/// Population count of `v` as a balanced adder tree; result width `clog2(width+1)`.
/// Levels are named `<name>_l<level>_<i>`.
pub fn popcount(m: &mut ModuleBuilder, name: &str, v: &Expr) -> Expr {
    let ow = clog2(v.width() as u64 + 1).max(1);
    let mut cur: Vec<Expr> = (0..v.width()).map(|i| v.bit(i)).collect();
    let mut w = 1;
    let mut level = 0;
    while cur.len() > 1 {
        level += 1;
        w += 1;
        let ww = w.min(ow);
        let mut next = Vec::new();
        for (k, pair) in cur.chunks(2).enumerate() {
            let s = if pair.len() == 2 {
                pair[0].zext(ww) + pair[1].zext(ww)
            } else {
                pair[0].zext(ww)
            };
            next.push(m.wire(&format!("{}_l{}_{}", name, level, k), &s));
        }
        cur = next;
    }
    cur[0].zext(ow)
}

/// Balanced OR of equal-width terms (zero of `width` bits for none).
pub fn or_tree(terms: Vec<Expr>, width: u32) -> Expr {
    let mut cur = terms;
    if cur.is_empty() {
        return Expr::zero(width);
    }
    while cur.len() > 1 {
        cur = cur
            .chunks(2)
            .map(|p| {
                if p.len() == 2 {
                    &p[0] | &p[1]
                } else {
                    p[0].clone()
                }
            })
            .collect();
    }
    cur.pop().unwrap_or_else(|| Expr::zero(width))
}

/// OR of 1-bit terms (0 for none).
pub fn any_of(v: &[Expr]) -> Expr {
    v.iter()
        .cloned()
        .reduce(|a, b| a | b)
        .unwrap_or_else(|| Expr::zero(1))
}

/// AND of 1-bit terms (1 for none).
pub fn all_of(v: &[Expr]) -> Expr {
    v.iter()
        .cloned()
        .reduce(|a, b| a & b)
        .unwrap_or_else(|| Expr::ones(1))
}

/// One-hot of the first (lowest-index) 1 among 1-bit terms, as a ripple chain (for the
/// handful of requesters of an arbiter, way or MSHR select).
pub fn first_set(v: &[Expr]) -> Vec<Expr> {
    let mut seen = Expr::zero(1);
    v.iter()
        .map(|x| {
            let g = x & &!&seen;
            seen = &seen | x;
            g
        })
        .collect()
}

/// Binary index of a one-hot vector of 1-bit terms, `w` bits wide (0 when none is set).
pub fn onehot_index(onehot: &[Expr], w: u32) -> Expr {
    let mut v = Expr::zero(w);
    for (i, b) in onehot.iter().enumerate().skip(1) {
        v = v | b.gate(&Expr::lit(w, i as u64));
    }
    v
}

/// Mux tree: `opts[sel]`, as a balanced tree of 2:1 muxes on the select bits, LSB first.
/// Out-of-range selects give the last option. All options must have equal width.
pub fn mux_tree(sel: &Expr, opts: &[Expr]) -> Expr {
    let mut cur: Vec<Expr> = opts.to_vec();
    let mut bit = 0;
    while cur.len() > 1 {
        let s = if bit < sel.width() {
            sel.bit(bit)
        } else {
            Expr::zero(1)
        };
        cur = cur
            .chunks(2)
            .map(|p| {
                if p.len() == 2 {
                    s.select(&p[1], &p[0])
                } else {
                    p[0].clone()
                }
            })
            .collect();
        bit += 1;
    }
    cur.into_iter().next().unwrap_or_else(|| Expr::zero(1))
}

/// The lane that lane `i` takes in a shift by `d` of `n` lanes (None: zero fill).
fn src_lane(i: usize, d: usize, n: usize, left: bool) -> Option<usize> {
    if left {
        i.checked_sub(d)
    } else {
        Some(i + d).filter(|j| *j < n)
    }
}

/// Logarithmic shifter on lanes: shifts `lanes` (lane 0 = least significant) towards higher
/// lanes (`left = true`) or lower lanes by `amount` lanes, zero filling, one named stage per
/// amount bit, least significant bit first. Returns the shifted lanes.
pub fn shift_lanes(
    m: &mut ModuleBuilder,
    name: &str,
    lanes: &[Expr],
    amount: &Expr,
    left: bool,
) -> Vec<Expr> {
    shift_lanes_copies(m, name, lanes, std::slice::from_ref(amount), left)
}

/// [`shift_lanes`] with the amount given as equal copies (e.g. register replicas): output
/// lane `i` of every stage is selected by copy `i · copies / n`, so no copy drives more
/// than `ceil(n / copies)` muxes per stage (`docs/TOOLCHAIN.md`, bounded fan-out). One copy
/// selects each stage as one vector ([`shift_lanes`]).
pub fn shift_lanes_copies(
    m: &mut ModuleBuilder,
    name: &str,
    lanes: &[Expr],
    amounts: &[Expr],
    left: bool,
) -> Vec<Expr> {
    let n = lanes.len();
    let w = lanes.first().map(|l| l.width()).unwrap_or(1);
    let copies = amounts.len().max(1);
    let aw = amounts.first().map(|a| a.width()).unwrap_or(0);
    // Selected groups: (first lane, end, copy), the runs of lanes that one copy selects
    // (one copy: the whole vector).
    let mut groups: Vec<(usize, usize, usize)> = Vec::new();
    for i in 0..n {
        let c = i * copies / n;
        match groups.last_mut() {
            Some(g) if g.2 == c => g.1 = i + 1,
            _ => groups.push((i, i + 1, c)),
        }
    }
    // One stage: group (lo, hi) takes `moved(lo, hi)` where its copy's `sel` is set, else
    // keeps `cur`.
    let stage =
        |sel: &dyn Fn(&Expr) -> Expr, moved: &dyn Fn(usize, usize) -> Expr, cur: &[Expr]| -> Expr {
            let parts: Vec<Expr> = groups
                .iter()
                .map(|&(lo, hi, c)| {
                    sel(&amounts[c]).select(&moved(lo, hi), &Expr::cat_lsb(&cur[lo..hi]))
                })
                .collect();
            Expr::cat_lsb(&parts)
        };
    let mut cur = lanes.to_vec();
    for b in 0..aw {
        let d = 1usize << b;
        if d >= n {
            // Any higher set bit shifts everything out.
            let zeros = |lo: usize, hi: usize| Expr::zero((hi - lo) as u32 * w);
            let v = stage(&|a: &Expr| a.slice(b, aw - b).any(), &zeros, &cur);
            let z = m.wire(&format!("{}_s{}", name, b), &v);
            cur = z.lanes(w);
            break;
        }
        let moved: Vec<Expr> = (0..n)
            .map(|i| match src_lane(i, d, n, left) {
                Some(j) => cur[j].clone(),
                None => Expr::zero(w),
            })
            .collect();
        let v = stage(
            &|a: &Expr| a.bit(b),
            &|lo: usize, hi: usize| Expr::cat_lsb(&moved[lo..hi]),
            &cur,
        );
        let z = m.wire(&format!("{}_s{}", name, b), &v);
        cur = z.lanes(w);
    }
    cur
}

/// Logarithmic rotator on lanes: rotates `lanes` towards higher lanes (`left = true`, lane i
/// moves to lane `(i + amount) mod n`) or lower lanes, one named stage per amount bit, least
/// significant bit first. `n` must be a power of two; amount bits at or above `log2 n` are
/// ignored (a full turn). Returns the rotated lanes.
pub fn rotate_lanes(
    m: &mut ModuleBuilder,
    name: &str,
    lanes: &[Expr],
    amount: &Expr,
    left: bool,
) -> Vec<Expr> {
    let n = lanes.len();
    assert!(
        n.is_power_of_two(),
        "rotate_lanes: {} lanes is not a power of two",
        n
    );
    let w = lanes.first().map(|l| l.width()).unwrap_or(1);
    let mut cur = lanes.to_vec();
    for b in 0..amount.width() {
        let d = 1usize << b;
        if d >= n {
            m.unused(&amount.slice(b, amount.width() - b));
            break;
        }
        let moved: Vec<Expr> = (0..n)
            .map(|i| {
                let j = if left { (i + n - d) % n } else { (i + d) % n };
                cur[j].clone()
            })
            .collect();
        let v = amount
            .bit(b)
            .select(&Expr::cat_lsb(&moved), &Expr::cat_lsb(&cur));
        let z = m.wire(&format!("{}_s{}", name, b), &v);
        cur = z.lanes(w);
    }
    cur
}

/// Outputs of a [`skid_buffer`].
#[derive(Clone, Debug)]
pub struct Skid {
    /// Downstream `valid` (registered).
    pub valid: Expr,
    /// Downstream data (registered).
    pub data: Expr,
    /// Upstream `ready` (registered: no combinational path from the downstream `ready`).
    pub ready: Expr,
}

/// Valid/ready register slice with a skid register: full throughput (one beat per cycle),
/// every output registered, and `ready` towards the source driven from a register, so long
/// ready chains are cut. Registers: `<name>_valid_q`, `<name>_data_q`, `<name>_skid_valid_q`,
/// `<name>_skid_data_q`.
pub fn skid_buffer(
    m: &mut ModuleBuilder,
    name: &str,
    in_valid: &Expr,
    in_data: &Expr,
    out_ready: &Expr,
) -> Skid {
    let w = in_data.width();
    let valid = m.reg(&format!("{}_valid_q", name), 1, Some(0));
    let data = m.reg(&format!("{}_data_q", name), w, None);
    let skid_valid = m.reg(&format!("{}_skid_valid_q", name), 1, Some(0));
    let skid_data = m.reg(&format!("{}_skid_data_q", name), w, None);
    let in_ready = !skid_valid.q();
    let in_fire = m.wire(&format!("{}_in_fire", name), &(in_valid & &in_ready));
    let main_free = m.wire(
        &format!("{}_main_free", name),
        &(!valid.q() | out_ready.clone()),
    );
    m.next(
        &valid,
        &main_free.select(&(skid_valid.q() | in_fire.clone()), &Expr::ones(1)),
        None,
    );
    m.next(
        &data,
        &skid_valid.q().select(&skid_data.q(), in_data),
        Some(&main_free),
    );
    m.next(
        &skid_valid,
        &skid_valid
            .q()
            .select(&!&main_free, &(&in_fire & &!&main_free)),
        None,
    );
    m.next(&skid_data, in_data, Some(&(&in_fire & &!&main_free)));
    Skid {
        valid: valid.q(),
        data: data.q(),
        ready: in_ready,
    }
}

/// Valid/ready slice that only cuts `ready`: a beat the consumer does not take is parked in
/// a skid register (`<name>_skid_valid_q`, `<name>_skid_data_q`), and the source's `ready`
/// is "the skid register is empty" (a register). Valid and data pass through (the parked
/// beat first, by a 2:1 mux), so there is no added latency and one beat per cycle: the
/// source's pipeline no longer waits on the consumer's `ready` chain. In the returned
/// [`Skid`], `valid` and `data` are logic, `ready` is registered.
pub fn skid_bypass(
    m: &mut ModuleBuilder,
    name: &str,
    in_valid: &Expr,
    in_data: &Expr,
    out_ready: &Expr,
) -> Skid {
    skid_bypass_split(m, name, in_valid, in_data, 0, out_ready)
}

/// [`skid_bypass`] whose low `fast` data bits take their 2:1 mux select from a register of
/// their own (`<name>_skid_empty_q`, stored inverted so that synthesis keeps it apart from
/// `<name>_skid_valid_q`): a few bits on a critical path do not wait behind the buffer tree
/// of a wide select.
pub fn skid_bypass_split(
    m: &mut ModuleBuilder,
    name: &str,
    in_valid: &Expr,
    in_data: &Expr,
    fast: u32,
    out_ready: &Expr,
) -> Skid {
    let w = in_data.width();
    let skid_valid = m.reg(&format!("{}_skid_valid_q", name), 1, Some(0));
    let skid_data = m.reg(&format!("{}_skid_data_q", name), w, None);
    let valid = m.wire(&format!("{}_valid", name), &(&skid_valid.q() | in_valid));
    let data = if fast == 0 {
        skid_valid.q().select(&skid_data.q(), in_data)
    } else {
        let empty = m.reg(&format!("{}_skid_empty_q", name), 1, Some(1));
        m.next(
            &empty,
            &skid_valid
                .q()
                .select(out_ready, &!park_of(&skid_valid.q(), in_valid, out_ready)),
            None,
        );
        let lo = empty
            .q()
            .select(&in_data.slice(0, fast), &skid_data.q().slice(0, fast));
        let hi = skid_valid.q().select(
            &skid_data.q().slice(fast, w - fast),
            &in_data.slice(fast, w - fast),
        );
        Expr::cat(&[hi, lo])
    };
    let data = m.wire(&format!("{}_data", name), &data);
    // Parked: the source's beat is taken (the skid register is empty) but not passed on.
    let park = m.wire(
        &format!("{}_park", name),
        &park_of(&skid_valid.q(), in_valid, out_ready),
    );
    m.next(
        &skid_valid,
        &skid_valid.q().select(&!out_ready.clone(), &park),
        None,
    );
    m.next(&skid_data, in_data, Some(&park));
    Skid {
        valid,
        data,
        ready: !skid_valid.q(),
    }
}

/// A [`skid_bypass`] parks the source's beat: the skid register is empty, the source offers
/// and the consumer does not take.
fn park_of(skid_valid: &Expr, in_valid: &Expr, out_ready: &Expr) -> Expr {
    &(!skid_valid.clone() & in_valid.clone()) & &!out_ready.clone()
}

/// A FIFO's output side and its input `ready` ([`fifo`]).
#[derive(Clone, Debug)]
pub struct Fifo {
    /// Head entry present.
    pub valid: Expr,
    /// Head entry (asynchronous read of the storage).
    pub data: Expr,
    /// Not full (towards the source; a function of registers only).
    pub ready: Expr,
}

/// Storage above which a [`fifo`] keeps its entries in a RAM ([`super::ram`]), in bits.
pub const RAM_FIFO_BITS: u64 = 4096;

/// Valid/ready FIFO of `depth` entries (a power of two, at least 2): entry registers with
/// write and read pointers and an occupancy counter. From [`RAM_FIFO_BITS`] of storage the
/// entries are in a RAM instead ([`fifo_ram`], the same cycle behaviour). Push when
/// `in_valid` and not full, pop when not empty and `out_ready`; both may happen in the same
/// cycle. No combinational path
/// from input to output (a pushed entry appears the next cycle). The head is an AND-OR select
/// on the decoded read pointer, and each entry's write enable is decoded from the write
/// pointer, so no pointer flop drives the wide selects directly (ABC buffers logic outputs,
/// not flop outputs; see `docs/TOOLCHAIN.md`). Registers: `<name>_wr_q`, `<name>_rd_q`,
/// `<name>_count_q`, `<name><k>_q`.
pub fn fifo(
    m: &mut ModuleBuilder,
    name: &str,
    depth: u32,
    in_valid: &Expr,
    in_data: &Expr,
    out_ready: &Expr,
) -> Fifo {
    if depth as u64 * in_data.width() as u64 >= RAM_FIFO_BITS {
        return fifo_ram(m, name, depth, in_valid, in_data, out_ready);
    }
    let c = FifoCtl::new(m, name, depth, in_valid, out_ready);
    let (rd, push) = (&c.rd, c.push.clone());
    let mut head = Expr::zero(in_data.width());
    for (k, e) in c.entries(m, name, depth, in_data).iter().enumerate() {
        let rs = m.wire(&format!("{}_rs{}", name, k), &rd.q().eq_lit(k as u64));
        head = head | rs.gate(e);
    }
    let head = m.wire(&format!("{}_head", name), &head);
    let pop = c.pop.clone();
    c.finish(m, &push, &pop, head)
}

/// [`fifo`] (flop entries) whose head is a register, `<name>_head_q`, loaded with the entry
/// that will be the head after each edge: a pushed entry into an empty FIFO (or one whose
/// only entry leaves), the entry after the head on a pop, else the head kept. The same
/// pointers, counter and cycle behaviour; what reads the head waits for no pointer decode.
pub fn fifo_head_reg(
    m: &mut ModuleBuilder,
    name: &str,
    depth: u32,
    in_valid: &Expr,
    in_data: &Expr,
    out_ready: &Expr,
) -> Fifo {
    let c = FifoCtl::new(m, name, depth, in_valid, out_ready);
    let (rd, push, pop) = (&c.rd, c.push.clone(), c.pop.clone());
    let aw = rd.width();
    let next_rd = m.wire(&format!("{}_rd_next", name), &(rd.q() + Expr::lit(aw, 1)));
    let mut second = Expr::zero(in_data.width());
    for (k, e) in c.entries(m, name, depth, in_data).iter().enumerate() {
        second = second | next_rd.eq_lit(k as u64).gate(e);
    }
    let second = m.wire(&format!("{}_second", name), &second);
    let head = m.reg(&format!("{}_head_q", name), in_data.width(), None);
    let n = &c.count.q();
    let take_in = n.eq_lit(0) | (&pop & &n.eq_lit(1));
    let head_d = take_in.select(in_data, &pop.select(&second, &head.q()));
    m.next(&head, &head_d, None);
    c.finish(m, &push, &pop, head.q())
}

/// A FIFO's pointers, occupancy counter and handshake ([`fifo`], [`fifo_ram`]).
struct FifoCtl {
    wr: super::module::Reg,
    rd: super::module::Reg,
    count: super::module::Reg,
    valid: Expr,
    ready: Expr,
    push: Expr,
    pop: Expr,
}

impl FifoCtl {
    /// `<name>_wr_q`, `<name>_rd_q`, `<name>_count_q`; valid, ready, push and pop.
    fn new(
        m: &mut ModuleBuilder,
        name: &str,
        depth: u32,
        in_valid: &Expr,
        out_ready: &Expr,
    ) -> FifoCtl {
        let aw = clog2(depth as u64).max(1);
        let cw = clog2(depth as u64 + 1);
        let wr = m.reg(&format!("{}_wr_q", name), aw, Some(0));
        let rd = m.reg(&format!("{}_rd_q", name), aw, Some(0));
        let count = m.reg(&format!("{}_count_q", name), cw, Some(0));
        let valid = m.wire(&format!("{}_valid", name), &count.q().ne(&Expr::zero(cw)));
        let ready = m.wire(
            &format!("{}_ready", name),
            &count.q().ne(&Expr::lit(cw, depth as u64)),
        );
        let push = m.wire(&format!("{}_push", name), &(in_valid & &ready));
        let pop = m.wire(&format!("{}_pop", name), &(&valid & out_ready));
        FifoCtl {
            wr,
            rd,
            count,
            valid,
            ready,
            push,
            pop,
        }
    }

    /// The entry registers `<name><k>_q`, each loaded with `in_data` on a push at its index.
    fn entries(&self, m: &mut ModuleBuilder, name: &str, depth: u32, in_data: &Expr) -> Vec<Expr> {
        (0..depth)
            .map(|k| {
                let e = m.reg(&format!("{}{}_q", name, k), in_data.width(), None);
                let we = m.wire(
                    &format!("{}_we{}", name, k),
                    &(&self.push & &self.wr.q().eq_lit(k as u64)),
                );
                m.next(&e, in_data, Some(&we));
                e.q()
            })
            .collect()
    }

    /// Advances the write pointer on `wr_en`, the read pointer on `rd_en`, counts pushes
    /// and pops, and returns the FIFO with head `data`.
    fn finish(self, m: &mut ModuleBuilder, wr_en: &Expr, rd_en: &Expr, data: Expr) -> Fifo {
        let (wr, rd, count) = (&self.wr, &self.rd, &self.count);
        let (aw, cw) = (wr.width(), count.width());
        m.next(wr, &(wr.q() + Expr::lit(aw, 1)), Some(wr_en));
        m.next(rd, &(rd.q() + Expr::lit(aw, 1)), Some(rd_en));
        let up = &self.push & &!&self.pop;
        let down = &self.pop & &!&self.push;
        let cnt_n = up.select(
            &(count.q() + Expr::lit(cw, 1)),
            &(count.q() - Expr::lit(cw, 1)),
        );
        m.next(count, &cnt_n, Some(&(&up | &down)));
        Fifo {
            valid: self.valid,
            data,
            ready: self.ready,
        }
    }
}

/// [`fifo`] with its entries in a RAM (`<name>_ram`, one word per entry): the same ports,
/// the same occupancy counter and so the same cycle behaviour. The head is the RAM's read
/// register, or a bypass register (`<name>_byp_q`) for an entry pushed into an empty FIFO:
/// whenever the head leaves (or there is none), the next entry is read from the RAM in the
/// same edge if the RAM holds one, else a pushed entry goes straight to the bypass. So the
/// RAM's read data is only replaced when the head it holds leaves. Registers:
/// `<name>_wr_q`, `<name>_rd_q`, `<name>_count_q`, `<name>_src_q`, `<name>_byp_q`.
pub fn fifo_ram(
    m: &mut ModuleBuilder,
    name: &str,
    depth: u32,
    in_valid: &Expr,
    in_data: &Expr,
    out_ready: &Expr,
) -> Fifo {
    let w = in_data.width();
    let c = FifoCtl::new(m, name, depth, in_valid, out_ready);
    let (push, pop, cw) = (c.push.clone(), c.pop.clone(), c.count.width());
    let src = m.reg(&format!("{}_src_q", name), 1, None);
    let byp = m.reg(&format!("{}_byp_q", name), w, None);
    // Entries behind the head (in the RAM): count - 1 when there is a head.
    let in_ram = m.wire(
        &format!("{}_in_ram", name),
        &!c.count.q().lt(&Expr::lit(cw, 2)),
    );
    let free = &pop | &!&c.valid;
    let from_ram = m.wire(&format!("{}_from_ram", name), &(&free & &in_ram));
    let bypass = m.wire(&format!("{}_bypass", name), &(&free & &!&in_ram & &push));
    let to_ram = m.wire(&format!("{}_to_ram", name), &(&push & &!&bypass));
    let spec = super::ram::RamSpec {
        words: depth.max(2),
        width: w,
        lane: w,
    };
    let ports = super::ram::RamPorts {
        we: to_ram.clone(),
        waddr: c.wr.q(),
        wdata: in_data.clone(),
        wmask: None,
        re: from_ram.clone(),
        raddr: c.rd.q(),
    };
    let rdata = match super::ram::place(m, &spec, &format!("u_{}_ram", name), &ports) {
        Ok(e) => e,
        Err(e) => {
            m.problem(e.to_string());
            Expr::zero(w)
        }
    };
    m.next(&byp, in_data, Some(&bypass));
    m.next(&src, &bypass, Some(&(&from_ram | &bypass)));
    let head = m.wire(&format!("{}_head", name), &src.q().select(&byp.q(), &rdata));
    c.finish(m, &to_ram, &from_ram, head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_keeps_order_under_random_push_pop() {
        use crate::hdl::sim::Sim;
        use rand::{Rng, SeedableRng};
        let mut m = ModuleBuilder::new("fifo_t");
        let v = m.input("v_i", 1);
        let d = m.input("d_i", 8);
        let r = m.input("r_i", 1);
        let f = fifo(&mut m, "q", 4, &v, &d, &r);
        m.output_expr("v_o", &f.valid);
        m.output_expr("d_o", &f.data);
        m.output_expr("rdy_o", &f.ready);
        let top = m.finish().unwrap();
        let mut sim = Sim::new(&top).unwrap();
        sim.reset(2);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut next_in, mut next_out, mut max_fill) = (0u64, 0u64, 0u64);
        for _ in 0..2000 {
            let push = rng.gen_bool(0.6);
            let pop = rng.gen_bool(0.5);
            sim.set_u64("v_i", push as u64).unwrap();
            sim.set_u64("d_i", next_in & 0xff).unwrap();
            sim.set_u64("r_i", pop as u64).unwrap();
            sim.eval();
            if sim.get_u64("v_o") == 1 && pop {
                assert_eq!(sim.get_u64("d_o"), next_out & 0xff, "order");
                next_out += 1;
            }
            if push && sim.get_u64("rdy_o") == 1 {
                next_in += 1;
            }
            max_fill = max_fill.max(next_in - next_out);
            sim.tick();
        }
        assert!(next_out > 900, "{next_out} popped");
        assert_eq!(max_fill, 4, "fills to its depth");
    }

    #[test]
    fn brent_kung_eight_has_eleven_ops() {
        assert_eq!(PrefixTopology::BrentKung.op_count(8), 11);
        assert_eq!(PrefixTopology::Sklansky.op_count(8), 12);
        assert_eq!(PrefixTopology::KoggeStone.op_count(8), 17);
        assert_eq!(PrefixTopology::Ripple.op_count(8), 7);
    }

    #[test]
    fn schedules_compute_prefix_sums() {
        for topo in [
            PrefixTopology::Ripple,
            PrefixTopology::Sklansky,
            PrefixTopology::KoggeStone,
            PrefixTopology::BrentKung,
        ] {
            for n in 1..=40 {
                let mut x: Vec<u64> = (0..n as u64).map(|i| 1 << (i % 7)).collect();
                let want: Vec<u64> = x
                    .iter()
                    .scan(0, |acc, v| {
                        *acc += v;
                        Some(*acc)
                    })
                    .collect();
                for level in topo.schedule(n) {
                    let prev = x.clone();
                    for (t, s) in level {
                        assert!(s < t);
                        x[t] = prev[s] + prev[t];
                    }
                }
                assert_eq!(x, want, "{:?} n={}", topo, n);
            }
        }
    }
}
