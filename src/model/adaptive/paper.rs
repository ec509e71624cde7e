//! The paper's characterisation data (Tavana et al., IPDPS'19, Tables V and VI; spec
//! docs/FORMATS.md, adaptive §4.3), used by the §2.6 cross-check and to calibrate the
//! per-benchmark line generators of [`crate::trace::lines`].

use super::Alg;
use serde::{Deserialize, Serialize};

/// The seven OpenCL benchmarks of the paper (Table IV).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bench {
    /// AES-256 (Hetero-Mark).
    Aes,
    /// Bitonic sort (AMD APP SDK).
    Bs,
    /// FIR filter (Hetero-Mark).
    Fir,
    /// Gradient descent (the authors').
    Gd,
    /// KMeans (Hetero-Mark).
    Km,
    /// Matrix transpose (AMD APP SDK).
    Mt,
    /// Simple convolution (AMD APP SDK).
    Sc,
}

/// One row of Table V.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableV {
    /// Remote reads, thousands.
    pub reads_k: u32,
    /// Remote writes, thousands.
    pub writes_k: u32,
    /// Normalised byte-level entropy.
    pub entropy: f64,
    /// Compression ratio of BDI.
    pub bdi: f64,
    /// Compression ratio of FPC.
    pub fpc: f64,
    /// Compression ratio of C-Pack+Z.
    pub cpack: f64,
}

impl TableV {
    /// The ratio reported for one algorithm (`Alg::None` → 1).
    pub fn ratio(&self, alg: Alg) -> f64 {
        match alg {
            Alg::None => 1.0,
            Alg::Bdi => self.bdi,
            Alg::Fpc => self.fpc,
            Alg::Cpack => self.cpack,
        }
    }

    /// Decimal places the ratio is reported with (BS: 9.6 has one; all others two).
    pub fn decimals(&self, alg: Alg) -> u32 {
        if alg == Alg::Bdi && self.bdi == 9.6 {
            1
        } else {
            2
        }
    }
}

/// One Table VI entry: pattern number (Table II numbering) and its share in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    /// Table II pattern number.
    pub pattern: u8,
    /// Share in percent as printed.
    pub pct: f64,
    /// Printed as "<pct%".
    pub less_than: bool,
}

const fn s(pattern: u8, pct: f64) -> Share {
    Share {
        pattern,
        pct,
        less_than: false,
    }
}

const fn lt(pattern: u8, pct: f64) -> Share {
    Share {
        pattern,
        pct,
        less_than: true,
    }
}

impl Bench {
    /// All benchmarks in the paper's order.
    pub const ALL: [Bench; 7] = [
        Bench::Aes,
        Bench::Bs,
        Bench::Fir,
        Bench::Gd,
        Bench::Km,
        Bench::Mt,
        Bench::Sc,
    ];

    /// The paper's abbreviation.
    pub fn name(self) -> &'static str {
        match self {
            Bench::Aes => "AES",
            Bench::Bs => "BS",
            Bench::Fir => "FIR",
            Bench::Gd => "GD",
            Bench::Km => "KM",
            Bench::Mt => "MT",
            Bench::Sc => "SC",
        }
    }

    /// Parses an abbreviation (case-insensitive).
    pub fn from_name(s: &str) -> Option<Bench> {
        Self::ALL
            .iter()
            .copied()
            .find(|b| b.name().eq_ignore_ascii_case(s))
    }

    /// Table V row.
    pub fn table_v(self) -> TableV {
        let r = |reads_k, writes_k, entropy, bdi, fpc, cpack| TableV {
            reads_k,
            writes_k,
            entropy,
            bdi,
            fpc,
            cpack,
        };
        match self {
            Bench::Aes => r(3522, 49, 0.96, 1.00, 1.03, 1.04),
            Bench::Bs => r(1336, 1321, 0.02, 9.6, 31.68, 37.10),
            Bench::Fir => r(1945, 98, 0.50, 2.41, 1.00, 1.73),
            Bench::Gd => r(990, 198, 0.46, 1.26, 1.38, 1.20),
            Bench::Km => r(4129, 203, 0.11, 1.37, 5.63, 7.79),
            Bench::Mt => r(3146, 3146, 0.29, 2.84, 3.10, 2.69),
            Bench::Sc => r(5464, 49, 0.49, 2.69, 1.03, 1.82),
        }
    }

    /// Table VI: the three most frequent patterns of an algorithm (AES/BDI lists two).
    /// Shares are per word for FPC and C-Pack+Z (a zero line counts once) and per line for
    /// BDI (FORMATS §2.6). `Alg::None` has no entries.
    pub fn table_vi(self, alg: Alg) -> Vec<Share> {
        use Bench::*;
        match (alg, self) {
            (Alg::None, _) => vec![],
            (Alg::Fpc, Aes) => vec![s(9, 96.0), lt(2, 3.0), lt(1, 1.0)],
            (Alg::Fpc, Bs) => vec![s(2, 52.0), s(1, 35.0), s(9, 11.0)],
            (Alg::Fpc, Fir) => vec![s(9, 99.0), lt(7, 1.0), lt(8, 1.0)],
            (Alg::Fpc, Gd) => vec![s(7, 66.0), s(9, 33.0), lt(2, 1.0)],
            (Alg::Fpc, Km) => vec![s(2, 86.0), s(9, 12.0), s(1, 1.0)],
            (Alg::Fpc, Mt) => vec![s(5, 83.0), s(4, 15.0), s(2, 1.0)],
            (Alg::Fpc, Sc) => vec![s(9, 94.0), s(6, 5.0), lt(8, 1.0)],
            (Alg::Cpack, Aes) => vec![s(3, 95.0), s(2, 4.0), lt(1, 1.0)],
            (Alg::Cpack, Bs) => vec![s(2, 52.0), s(1, 35.0), s(3, 11.0)],
            (Alg::Cpack, Fir) => vec![s(7, 76.0), s(5, 17.0), s(3, 6.0)],
            (Alg::Cpack, Gd) => vec![s(3, 63.0), s(7, 28.0), s(4, 4.0)],
            (Alg::Cpack, Km) => vec![s(2, 86.0), s(3, 6.0), s(7, 4.0)],
            (Alg::Cpack, Mt) => vec![s(6, 98.0), s(2, 1.0), lt(3, 1.0)],
            (Alg::Cpack, Sc) => vec![s(7, 87.0), s(5, 6.0), s(3, 6.0)],
            (Alg::Bdi, Aes) => vec![s(9, 99.0), lt(3, 1.0)],
            (Alg::Bdi, Bs) => vec![s(1, 89.0), s(9, 9.0), lt(6, 1.0)],
            (Alg::Bdi, Fir) => vec![s(6, 74.0), s(7, 25.0), lt(8, 1.0)],
            (Alg::Bdi, Gd) => vec![s(9, 66.0), s(6, 29.0), s(7, 4.0)],
            (Alg::Bdi, Km) => vec![s(9, 56.0), s(5, 25.0), s(1, 18.0)],
            (Alg::Bdi, Mt) => vec![s(6, 99.0), lt(5, 1.0), lt(9, 1.0)],
            (Alg::Bdi, Sc) => vec![s(6, 91.0), s(7, 8.0), lt(9, 1.0)],
        }
    }
}

/// Raw and compressed bits of one Table VI event of `pattern` (Table II numbering), from the
/// models' size tables: per line for BDI (raw 512), per word for FPC and C-Pack+Z (raw 32; a
/// zero-block event is a whole line, raw 512). `fpc_unmatched_bits` is the cost of an FPC
/// pattern-9 word: 32 in the paper's accounting, 35 in the original format (§2.2). `None`
/// for pattern numbers the algorithm does not have.
pub fn event_bits(alg: Alg, pattern: u8, fpc_unmatched_bits: usize) -> Option<(f64, f64)> {
    use crate::model::bdi::BdiEncoding;
    use crate::model::cpack::{CpackParams, CpackPattern};
    use crate::model::fpc::FpcPattern;
    let line = 512.0;
    match alg {
        Alg::None => None,
        Alg::Bdi => {
            let e = if pattern == 9 {
                BdiEncoding::Uncompressed
            } else {
                BdiEncoding::from_prefix(pattern.checked_sub(1)?)?
            };
            Some((line, e.size_bits(64) as f64))
        }
        Alg::Fpc => {
            let p = *FpcPattern::WORD_PATTERNS
                .iter()
                .chain([&FpcPattern::ZeroBlock])
                .find(|p| p.table_ii_number() == pattern)?;
            Some(match p {
                FpcPattern::ZeroBlock => (line, p.paper_size() as f64),
                FpcPattern::Uncompressed => (32.0, fpc_unmatched_bits as f64),
                _ => (32.0, p.paper_size() as f64),
            })
        }
        Alg::Cpack => {
            use CpackPattern::*;
            let p = [
                ZeroBlock,
                ZeroWord,
                NewWord,
                FullMatch,
                HalfMatch,
                Narrow,
                ThreeByteMatch,
            ]
            .into_iter()
            .find(|p| p.table_ii_number() == pattern)?;
            let raw = if p == ZeroBlock { line } else { 32.0 };
            Some((raw, CpackParams::default().token_bits(p) as f64))
        }
    }
}

/// All pattern numbers of an algorithm that can appear in Table VI.
fn patterns(alg: Alg) -> std::ops::Range<u8> {
    match alg {
        Alg::None => 1..1,
        Alg::Bdi | Alg::Fpc => 1..10,
        Alg::Cpack => 1..8,
    }
}

/// The FORMATS §2.6 reconstruction of a Table V ratio from the Table VI mix: every listed share
/// (a "<x%" entry counted as x%) weights its event's raw and compressed bits;
/// CR = Σ share·raw / Σ share·size (the listed shares are thereby renormalised to 100%).
pub fn table_vi_estimate(bench: Bench, alg: Alg, fpc_unmatched_bits: usize) -> f64 {
    let (mut u, mut c) = (0.0, 0.0);
    for s in bench.table_vi(alg) {
        if let Some((r, n)) = event_bits(alg, s.pattern, fpc_unmatched_bits) {
            u += s.pct * r;
            c += s.pct * n;
        }
    }
    u / c
}

/// The range of ratios consistent with the Table VI entry when its rounding is taken
/// literally: a share printed as p% lies in [p − 0.5, p + 0.5], "<p%" in [0, p]; the
/// unlisted remainder is spread over the algorithm's other patterns, each no larger than the
/// third-ranked share (Table VI lists the top three; two entries mean no other pattern has a
/// share worth listing, here ≤ 1%). Returns `(min, max)` of Σ raw / Σ size over all such mixes.
pub fn table_vi_interval(bench: Bench, alg: Alg, fpc_unmatched_bits: usize) -> (f64, f64) {
    let listed = bench.table_vi(alg);
    let cap = if listed.len() >= 3 {
        listed
            .iter()
            .map(|s| if s.less_than { s.pct } else { s.pct + 0.5 })
            .fold(f64::INFINITY, f64::min)
    } else {
        1.0
    };
    // (raw, size, lo, hi) per pattern
    let mut boxes: Vec<(f64, f64, f64, f64)> = Vec::new();
    for pat in patterns(alg) {
        let Some((r, n)) = event_bits(alg, pat, fpc_unmatched_bits) else {
            continue;
        };
        let (lo, hi) = match listed.iter().find(|s| s.pattern == pat) {
            Some(Share {
                pct,
                less_than: true,
                ..
            }) => (0.0, *pct),
            Some(s) => ((s.pct - 0.5).max(0.0), s.pct + 0.5),
            None => (0.0, cap),
        };
        boxes.push((r, n, lo, hi));
    }
    // max over the mixes of sign·Σ w(raw − R·size), Σ w = 100 (fractional knapsack)
    let best = |ratio: f64, sign: f64| -> Option<f64> {
        let mut v: Vec<(f64, f64, f64)> = boxes
            .iter()
            .map(|&(r, n, lo, hi)| (sign * (r - ratio * n), lo, hi))
            .collect();
        let base: f64 = v.iter().map(|x| x.1).sum();
        if base > 100.0 {
            return None;
        }
        let mut val: f64 = v.iter().map(|x| x.0 * x.1).sum();
        let mut rem = 100.0 - base;
        v.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (c, lo, hi) in v {
            let a = (hi - lo).min(rem);
            val += c * a;
            rem -= a;
        }
        (rem <= 1e-9).then_some(val)
    };
    let bisect = |sign: f64| {
        let (mut a, mut b) = (0.01f64, 1000.0f64);
        for _ in 0..200 {
            let m = 0.5 * (a + b);
            let feasible = best(m, sign).is_some_and(|v| v >= 0.0);
            // sign +1: ratio ≥ m reachable ⇔ feasible; sign −1: ratio ≤ m reachable ⇔ feasible
            if feasible == (sign > 0.0) {
                a = m;
            } else {
                b = m;
            }
        }
        0.5 * (a + b)
    };
    (bisect(-1.0), bisect(1.0))
}
