//! Seeded synthetic cache lines for the adaptive link compression engine (spec
//! docs/FORMATS.md, adaptive §5): pattern primitives, per-benchmark mixes calibrated to
//! the paper's Tables V and VI, phase traces for the adaptive controller, byte entropy and a
//! proptest strategy.
//!
//! Every generator is `ChaCha8Rng::seed_from_u64(seed)`-driven, so `(profile, line_bytes, n,
//! seed)` always gives the same lines. Lines are byte vectors of `line_bytes` (a multiple of 8;
//! 64 for the paper); 32-bit words are little-endian.

use crate::model::adaptive::paper::Bench;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// A line profile (§5 "pattern primitives" and "per-benchmark profiles").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineProfile {
    /// All-zero lines.
    Zero,
    /// Mostly zero words (≈85%), a fifth of the lines entirely zero.
    ZeroHeavy,
    /// Low dynamic range: k-byte elements (k ∈ {2, 4, 8}) = base + small deltas, some
    /// immediates, pointer arrays (base + i·stride); deltas include the sign-extension limits.
    SmallDelta,
    /// Narrow words: 4/8/16-bit sign-extended, zero-extended bytes, zero-padded halfwords,
    /// pairs of sign-extended bytes, repeated bytes, zeros.
    Narrow,
    /// Repeated values: one 8-byte value, one 32-bit word or repeated-byte words.
    Repeated,
    /// Low-dynamic-range float32: a shared exponent and upper mantissa per line.
    Floats,
    /// float32 with a zero low halfword (bfloat16-like).
    HalfZeroFloats,
    /// Uniformly random bytes.
    Random,
    /// Any of the primitives above, chosen per line.
    Mixed,
    /// A per-benchmark mix calibrated to Tables V and VI.
    Bench(Bench),
}

impl LineProfile {
    /// The pattern primitives (everything but `Mixed` and the benchmarks).
    pub const PRIMITIVES: [LineProfile; 8] = [
        LineProfile::Zero,
        LineProfile::ZeroHeavy,
        LineProfile::SmallDelta,
        LineProfile::Narrow,
        LineProfile::Repeated,
        LineProfile::Floats,
        LineProfile::HalfZeroFloats,
        LineProfile::Random,
    ];

    /// Name as used on the command line (`bench-sc` etc. for the benchmarks).
    pub fn name(&self) -> String {
        match self {
            LineProfile::Zero => "zero".into(),
            LineProfile::ZeroHeavy => "zero-heavy".into(),
            LineProfile::SmallDelta => "small-delta".into(),
            LineProfile::Narrow => "narrow".into(),
            LineProfile::Repeated => "repeated".into(),
            LineProfile::Floats => "floats".into(),
            LineProfile::HalfZeroFloats => "half-zero-floats".into(),
            LineProfile::Random => "random".into(),
            LineProfile::Mixed => "mixed".into(),
            LineProfile::Bench(b) => format!("bench-{}", b.name().to_lowercase()),
        }
    }

    /// Parses [`LineProfile::name`].
    pub fn from_name(s: &str) -> Option<LineProfile> {
        if let Some(b) = s.strip_prefix("bench-") {
            return Bench::from_name(b).map(LineProfile::Bench);
        }
        Self::PRIMITIVES
            .into_iter()
            .chain([LineProfile::Mixed])
            .find(|p| p.name() == s)
    }
}

/// A seeded stream of lines of one profile.
#[derive(Clone, Debug)]
pub struct LineGen {
    rng: ChaCha8Rng,
    profile: LineProfile,
    line_bytes: usize,
}

impl LineGen {
    /// A generator; `line_bytes` must be a non-zero multiple of 8.
    ///
    /// # Panics
    /// If `line_bytes` is not a non-zero multiple of 8 (a programming error).
    pub fn new(profile: LineProfile, line_bytes: usize, seed: u64) -> Self {
        assert!(
            line_bytes > 0 && line_bytes.is_multiple_of(8),
            "line_bytes {line_bytes} must be a non-zero multiple of 8"
        );
        LineGen {
            rng: ChaCha8Rng::seed_from_u64(seed),
            profile,
            line_bytes,
        }
    }

    /// The next line.
    pub fn next_line(&mut self) -> Vec<u8> {
        let n = self.line_bytes / 4;
        let w = match self.profile {
            LineProfile::Bench(b) => bench_words(&mut self.rng, b, n),
            LineProfile::Mixed => {
                let k = self.rng.gen_range(0..LineProfile::PRIMITIVES.len());
                primitive_words(&mut self.rng, LineProfile::PRIMITIVES[k], n)
            }
            p => primitive_words(&mut self.rng, p, n),
        };
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
}

/// `n` lines of `profile`.
pub fn lines(profile: LineProfile, line_bytes: usize, n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut g = LineGen::new(profile, line_bytes, seed);
    (0..n).map(|_| g.next_line()).collect()
}

/// A phase trace: the segments' lines concatenated (segment i uses seed `seed + i`), e.g.
/// `[(Bench(Sc), 500), (SmallDelta, 500)]` for a C-Pack-then-BDI trace (§5 item 3).
pub fn phase_trace(
    segments: &[(LineProfile, usize)],
    line_bytes: usize,
    seed: u64,
) -> Vec<Vec<u8>> {
    segments
        .iter()
        .enumerate()
        .flat_map(|(i, &(p, n))| lines(p, line_bytes, n, seed.wrapping_add(i as u64)))
        .collect()
}

/// Byte-level Shannon entropy in bits per byte (0..=8) (§5).
pub fn byte_entropy(data: &[u8]) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let mut h = [0usize; 256];
    for &b in data {
        h[b as usize] += 1;
    }
    let n = data.len() as f64;
    h.iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let q = c as f64 / n;
            -q * q.log2()
        })
        .sum()
}

/// Entropy normalised both ways of §5: `(H/8, H/log2(min(len, 256)))`; the second is the
/// per-transfer normalisation (log2 64 = 6 for a 64 B line).
pub fn normalized_entropy(data: &[u8]) -> (f64, f64) {
    let h = byte_entropy(data);
    let m = (data.len().clamp(2, 256) as f64).log2();
    (h / 8.0, h / m)
}

/// proptest strategy: lines of `line_bytes` from every profile (primitives, mixes and the
/// benchmarks), sometimes with a few bytes flipped to land near encoding boundaries, and
/// plain random bytes.
pub fn arb_line(line_bytes: usize) -> BoxedStrategy<Vec<u8>> {
    let mut profiles: Vec<LineProfile> = LineProfile::PRIMITIVES.to_vec();
    profiles.push(LineProfile::Mixed);
    profiles.extend(Bench::ALL.iter().map(|&b| LineProfile::Bench(b)));
    let np = profiles.len();
    let seeded = (0..np, any::<u64>()).prop_map(move |(i, seed)| {
        let mut g = LineGen::new(profiles[i], line_bytes, seed);
        g.next_line()
    });
    let flips = proptest::collection::vec((0..line_bytes, any::<u8>()), 1..4);
    prop_oneof![
        4 => seeded.clone(),
        2 => (seeded, flips).prop_map(|(mut l, f)| {
            for (i, b) in f {
                l[i] = b;
            }
            l
        }),
        1 => proptest::collection::vec(any::<u8>(), line_bytes),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------
// primitives

/// A positive float32 bit pattern with magnitude ~1e-5..6e4 whose low halfword is non-zero
/// (so FPC never sees a padded halfword by accident).
fn float_bits(rng: &mut ChaCha8Rng) -> u32 {
    let e: u32 = rng.gen_range(0x70..0x8F);
    let w = (e << 23) | (rng.gen::<u32>() & 0x7F_FFFF);
    if w & 0xFFFF == 0 {
        w | 1
    } else {
        w
    }
}

/// A 32-bit word no FPC pattern matches and that is not narrow for C-Pack.
fn unmatched_word(rng: &mut ChaCha8Rng) -> u32 {
    loop {
        let w: u32 = rng.gen();
        if w >> 24 != 0 && w & 0xFFFF != 0 && !crate::model::fpc::FpcPattern::TwoHalves.matches(w) {
            let b = w & 0xFF;
            if w != b * 0x0101_0101 {
                return w;
            }
        }
    }
}

fn pick_sext(rng: &mut ChaCha8Rng, bits: u32) -> i64 {
    let lim = 1i64 << (bits - 1);
    // a quarter of the draws sit on the limits
    match rng.gen_range(0..8) {
        0 => -lim,
        1 => lim - 1,
        _ => rng.gen_range(-lim..lim),
    }
}

fn primitive_words(rng: &mut ChaCha8Rng, p: LineProfile, n: usize) -> Vec<u32> {
    match p {
        LineProfile::Zero => vec![0; n],
        LineProfile::ZeroHeavy => {
            if rng.gen_bool(0.2) {
                return vec![0; n];
            }
            (0..n)
                .map(|_| {
                    if rng.gen_bool(0.85) {
                        0
                    } else if rng.gen_bool(0.5) {
                        rng.gen_range(1..256)
                    } else {
                        rng.gen()
                    }
                })
                .collect()
        }
        LineProfile::SmallDelta => small_delta_words(rng, n),
        LineProfile::Narrow => (0..n).map(|_| narrow_word(rng)).collect(),
        LineProfile::Repeated => match rng.gen_range(0..3) {
            0 => {
                let v: u64 = rng.gen();
                (0..n).map(|i| (v >> (32 * (i % 2))) as u32).collect()
            }
            1 => vec![rng.gen(); n],
            _ => (0..n)
                .map(|_| (rng.gen::<u8>() as u32) * 0x0101_0101)
                .collect(),
        },
        LineProfile::Floats => {
            let keep_bits = [8u32, 12, 16][rng.gen_range(0..3)];
            let w0 = float_bits(rng);
            let m = (1u32 << keep_bits) - 1;
            (0..n).map(|_| (w0 & !m) | (rng.gen::<u32>() & m)).collect()
        }
        LineProfile::HalfZeroFloats => (0..n).map(|_| float_bits(rng) & 0xFFFF_0000).collect(),
        LineProfile::Random => (0..n).map(|_| rng.gen()).collect(),
        LineProfile::Mixed | LineProfile::Bench(_) => unreachable!("not a primitive"),
    }
}

fn narrow_word(rng: &mut ChaCha8Rng) -> u32 {
    match rng.gen_range(0..8) {
        0 => 0,
        1 => pick_sext(rng, 4) as u32,
        2 => pick_sext(rng, 8) as u32,
        3 => pick_sext(rng, 16) as u32,
        4 => rng.gen_range(0..256),
        5 => (rng.gen::<u16>() as u32) << 16,
        6 => {
            let hi = pick_sext(rng, 8) as u32 & 0xFFFF;
            let lo = pick_sext(rng, 8) as u32 & 0xFFFF;
            (hi << 16) | lo
        }
        _ => (rng.gen::<u8>() as u32) * 0x0101_0101,
    }
}

fn small_delta_words(rng: &mut ChaCha8Rng, n: usize) -> Vec<u32> {
    let k = [2usize, 4, 8][rng.gen_range(0..3)];
    let d_choices: &[u32] = match k {
        2 => &[1],
        4 => &[1, 2],
        _ => &[1, 2, 4],
    };
    let d = d_choices[rng.gen_range(0..d_choices.len())];
    let kbits = 8 * k as u32;
    let kmask = if k == 8 {
        u64::MAX
    } else {
        (1u64 << kbits) - 1
    };
    let base: u64 = rng.gen::<u64>() & kmask;
    let elems = n * 4 / k;
    let pointer = rng.gen_bool(0.3);
    let stride = [1u64, 4, 8, 16][rng.gen_range(0..4)];
    let imm_p = [0.0, 0.2, 0.5][rng.gen_range(0..3)];
    let mut bytes = Vec::with_capacity(n * 4);
    for i in 0..elems {
        let v = if rng.gen_bool(imm_p) {
            pick_sext(rng, 8 * d) as u64
        } else if pointer {
            base.wrapping_add(i as u64 * stride)
        } else {
            base.wrapping_add(pick_sext(rng, 8 * d) as u64)
        } & kmask;
        bytes.extend_from_slice(&v.to_le_bytes()[..k]);
    }
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

// ---------------------------------------------------------------------------------------
// per-benchmark mixes (FORMATS §5 item 2; calibration in docs/FORMATS.md)

/// 16 floats clustered around `w0`: deltas in ±`r`; `far` words at ±(128..=4000) instead
/// (so BDI needs Base4-Δ2). With `no_cross` the low byte of w0 leaves room for ±r, so every
/// near word shares w0's upper 24 bits.
fn cluster_words(rng: &mut ChaCha8Rng, n: usize, w0: u32, r: i32, far: usize) -> Vec<u32> {
    let mut w: Vec<u32> = (0..n)
        .map(|i| {
            if i == 0 {
                w0
            } else {
                w0.wrapping_add(rng.gen_range(-r..=r) as u32)
            }
        })
        .collect();
    for _ in 0..far {
        let i = rng.gen_range(1..n);
        let m: i32 = rng.gen_range(128..=4000);
        let s = if rng.gen_bool(0.5) { m } else { -m };
        w[i] = w0.wrapping_add(s as u32);
    }
    w
}

fn float_no_cross(rng: &mut ChaCha8Rng, r: u32) -> u32 {
    let w = float_bits(rng);
    (w & !0xFF) | rng.gen_range(r..=255 - r)
}

fn bench_words(rng: &mut ChaCha8Rng, b: Bench, n: usize) -> Vec<u32> {
    let u: f64 = rng.gen();
    match b {
        // random data with ≈3.5% zero words; rare zero lines and counter (B8Δ1) lines
        Bench::Aes => {
            if u < 0.003 {
                vec![0; n]
            } else if u < 0.008 {
                let base: u64 = rng.gen::<u64>() & !0xFF;
                (0..n / 2)
                    .map(|i| base + i as u64)
                    .flat_map(|v| [v as u32, (v >> 32) as u32])
                    .collect()
            } else {
                (0..n)
                    .map(|_| if rng.gen_bool(0.035) { 0 } else { rng.gen() })
                    .collect()
            }
        }
        // 89% zero lines; kernel-argument lines (3 unmatched words, some repeated) and
        // a few small-dimension lines
        Bench::Bs => {
            let mut w = vec![0u32; n];
            if u < 0.89 {
                return w;
            }
            if u < 0.99 {
                let mut prev: Option<u32> = None;
                for _ in 0..3 {
                    let i = rng.gen_range(0..n);
                    let v = match prev {
                        Some(p) if rng.gen_bool(0.15) => p,
                        _ => unmatched_word(rng),
                    };
                    w[i] = v;
                    prev = Some(v);
                }
            } else {
                for _ in 0..4 {
                    let i = rng.gen_range(0..n);
                    w[i] = rng.gen_range(8..128);
                }
                let odd = rng.gen_range(0..n / 2) * 2 + 1;
                w[odd] = rng.gen_range(8..128);
            }
            w
        }
        // 32-bit signal samples sharing the upper bytes: 74% within ±80 of word 0 (BDI
        // Base4-Δ1), 26% with 1–3 words further away (Base4-Δ2)
        Bench::Fir => {
            let far = if u < 0.74 { 0 } else { rng.gen_range(1..=3) };
            let w0 = float_bits(rng);
            cluster_words(rng, n, w0, 80, far)
        }
        // 66% lines of zero-low-halfword values (7% repeats), 29% tight float clusters,
        // 4% looser clusters, 1% random
        Bench::Gd => {
            if u < 0.66 {
                let mut w: Vec<u32> = Vec::with_capacity(n);
                for _ in 0..n {
                    let v = if !w.is_empty() && rng.gen_bool(0.07) {
                        w[rng.gen_range(0..w.len())]
                    } else {
                        float_bits(rng) & 0xFFFF_0000
                    };
                    w.push(v);
                }
                w
            } else if u < 0.95 {
                let w0 = float_no_cross(rng, 40);
                cluster_words(rng, n, w0, 40, 0)
            } else if u < 0.99 {
                let w0 = float_no_cross(rng, 40);
                let far = rng.gen_range(1..=3);
                cluster_words(rng, n, w0, 40, far)
            } else {
                (0..n).map(|_| rng.gen()).collect()
            }
        }
        // 18% zero lines; otherwise 1–3 float words (sharing upper bytes) in words 2.. of a
        // zero line
        Bench::Km => {
            let mut w = vec![0u32; n];
            if u < 0.18 {
                return w;
            }
            // (no more than the words 2.. a short line has)
            let c = match rng.gen_range(0..100) {
                0..=29 => 1,
                30..=69 => 2,
                _ => 3,
            }
            .min(n - 2);
            let w0 = float_bits(rng);
            let mut pos: Vec<usize> = Vec::new();
            while pos.len() < c {
                let i = rng.gen_range(2..n);
                if !pos.contains(&i) {
                    pos.push(i);
                }
            }
            pos.sort_unstable();
            for (j, &i) in pos.iter().enumerate() {
                w[i] = if j == 0 {
                    w0
                } else if rng.gen_bool(0.8) {
                    (w0 & !0xFF) | rng.gen_range(0..256)
                } else {
                    let v = (w0 & 0xFFFF_0000) | rng.gen_range(0..0x1_0000);
                    if v >> 8 == w0 >> 8 {
                        v ^ 0x100
                    } else {
                        v
                    }
                };
            }
            w
        }
        // small positive integers: 1% zero, 15% in 1..=7, 84% in 8..=127
        Bench::Mt => (0..n)
            .map(|_| match rng.gen_range(0..100) {
                0 => 0,
                1..=15 => rng.gen_range(1..8),
                _ => rng.gen_range(8..128),
            })
            .collect(),
        // like FIR but tighter: 86% clusters within ±28, 8% with 1–2 far words, 5% lines of
        // halfword integers (FPC halfword pattern), 0.5% random
        Bench::Sc => {
            if u < 0.86 {
                let w0 = float_bits(rng);
                cluster_words(rng, n, w0, 28, 0)
            } else if u < 0.94 {
                let far = rng.gen_range(1..=2);
                let w0 = float_bits(rng);
                cluster_words(rng, n, w0, 28, far)
            } else if u < 0.995 {
                let w0 = rng.gen_range(0x400..0x7000);
                cluster_words(rng, n, w0, 28, 0)
            } else {
                (0..n).map(|_| rng.gen()).collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_sized() {
        for p in LineProfile::PRIMITIVES
            .into_iter()
            .chain([LineProfile::Mixed])
            .chain(Bench::ALL.map(LineProfile::Bench))
        {
            for lb in [32, 64, 128] {
                let a = lines(p, lb, 20, 7);
                assert_eq!(a, lines(p, lb, 20, 7));
                assert!(a.iter().all(|l| l.len() == lb));
            }
            assert_eq!(LineProfile::from_name(&p.name()), Some(p));
        }
        assert_eq!(LineProfile::from_name("nope"), None);
        let t = phase_trace(&[(LineProfile::Zero, 3), (LineProfile::Random, 2)], 64, 1);
        assert_eq!(t.len(), 5);
        assert!(t[..3].iter().all(|l| l.iter().all(|&b| b == 0)));
    }

    #[test]
    fn entropy() {
        assert_eq!(byte_entropy(&[]), 0.0);
        assert_eq!(byte_entropy(&[7; 64]), 0.0);
        let all: Vec<u8> = (0..=255).collect();
        assert!((byte_entropy(&all) - 8.0).abs() < 1e-12);
        let l: Vec<u8> = (0..64).collect();
        let (a, b) = normalized_entropy(&l);
        assert!((a - 0.75).abs() < 1e-12 && (b - 1.0).abs() < 1e-12);
    }
}
