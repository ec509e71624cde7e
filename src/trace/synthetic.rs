//! Seeded, deterministic stimulus generators usable outside proptest (docs/FORMATS.md, ZVC §5.2–5.3).
//!
//! All generators use `ChaCha8Rng::seed_from_u64(seed)`, so a `(generator, arguments, seed)`
//! triple always yields the same data on every platform.

use super::Layout;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Separable box blur of radius `r` over an `h × w` plane, in place (edges clamp the window).
fn box_blur(plane: &mut [f64], tmp: &mut [f64], h: usize, w: usize, r: usize) {
    // horizontal
    for y in 0..h {
        let row = &plane[y * w..(y + 1) * w];
        for x in 0..w {
            let lo = x.saturating_sub(r);
            let hi = (x + r).min(w - 1);
            let s: f64 = row[lo..=hi].iter().sum();
            tmp[y * w + x] = s / (hi - lo + 1) as f64;
        }
    }
    // vertical
    for x in 0..w {
        for y in 0..h {
            let lo = y.saturating_sub(r);
            let hi = (y + r).min(h - 1);
            let s: f64 = (lo..=hi).map(|yy| tmp[yy * w + x]).sum();
            plane[y * w + x] = s / (hi - lo + 1) as f64;
        }
    }
}

/// ReLU-activation-like FP32 tensor (FORMATS §5.2), returned as raw `f32` bit patterns.
///
/// `shape` is `[n, c, h, w]`. For every `(n, c)` plane a smooth Gaussian-like field is made
/// from white noise blurred twice with a radius-2 box; each channel gets a bias drawn around
/// 0 (about 12% of channels are pushed strongly negative, i.e. near-dead); a global offset is
/// then chosen so that exactly `round(sparsity · len)` elements are ≤ 0 (the offset is the
/// corresponding order statistic, the closed form of the bisection in the spec), and ReLU is
/// applied. Non-zero values are positive FP32. The tensor is generated in NCHW order and
/// permuted to `layout` (`Flat` = NCHW). `sparsity` is clamped to `0..=1`.
pub fn relu_tensor(shape: [usize; 4], sparsity: f64, layout: Layout, seed: u64) -> Vec<u32> {
    let [n, c, h, w] = shape;
    let len = n * c * h * w;
    if len == 0 {
        return Vec::new();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let plane = h * w;
    let mut field = vec![0f64; len];
    let mut tmp = vec![0f64; plane];
    for p in field.chunks_mut(plane) {
        for v in p.iter_mut() {
            *v = rng.gen::<f64>() * 2.0 - 1.0;
        }
        box_blur(p, &mut tmp, h, w, 2);
        box_blur(p, &mut tmp, h, w, 2);
    }
    // normalise the field to unit standard deviation
    let mean = field.iter().sum::<f64>() / len as f64;
    let var = field.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / len as f64;
    let inv = if var > 0.0 { 1.0 / var.sqrt() } else { 1.0 };
    let biases: Vec<f64> = (0..c)
        .map(|_| {
            // approx N(0, 0.5) from the sum of 3 uniforms; some channels near-dead
            let g: f64 = (0..3).map(|_| rng.gen::<f64>() - 0.5).sum::<f64>();
            let dead = if rng.gen::<f64>() < 0.12 { -4.0 } else { 0.0 };
            g + dead
        })
        .collect();
    for (i, v) in field.iter_mut().enumerate() {
        let ch = (i / plane) % c;
        *v = (*v - mean) * inv + biases[ch];
    }
    let s = sparsity.clamp(0.0, 1.0);
    let k = ((s * len as f64).round() as usize).min(len);
    let threshold = if k == 0 {
        field.iter().cloned().fold(f64::INFINITY, f64::min) - 1e-6
    } else {
        let mut sorted = field.clone();
        let (_, t, _) = sorted.select_nth_unstable_by(k - 1, |a, b| a.total_cmp(b));
        *t
    };
    let nchw: Vec<u32> = field
        .iter()
        .map(|&v| {
            if v <= threshold {
                0
            } else {
                // positive and finite; keep away from f32 underflow
                ((v - threshold) as f32).max(f32::MIN_POSITIVE).to_bits()
            }
        })
        .collect();
    layout.from_nchw(&nchw, shape)
}

fn max_for(word_bits: u32) -> u32 {
    if word_bits >= 32 {
        u32::MAX
    } else {
        (1u32 << word_bits) - 1
    }
}

/// i.i.d. elements: each is non-zero with probability `density`; non-zero values are uniform in
/// `1..=2^word_bits−1`.
pub fn uniform_density(n: usize, density: f64, word_bits: u32, seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let max = max_for(word_bits);
    (0..n)
        .map(|_| {
            if rng.gen::<f64>() < density {
                rng.gen_range(1..=max)
            } else {
                0
            }
        })
        .collect()
}

/// Geometric run length with the given mean (≥ 1).
fn geometric(rng: &mut ChaCha8Rng, mean: f64) -> usize {
    let mean = mean.max(1.0);
    if mean <= 1.0 {
        return 1;
    }
    let p = 1.0 / mean;
    let u: f64 = rng.gen::<f64>().max(1e-300);
    1 + (u.ln() / (1.0 - p).ln()).floor() as usize
}

/// Alternating runs of zeros (geometric, mean `mean_run`) and non-zeros (geometric, mean chosen
/// so the overall density is `density`); non-zero values are positive FP32 bit patterns.
pub fn clustered(n: usize, mean_run: f64, density: f64, seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let d = density.clamp(0.0, 1.0);
    if d <= 0.0 {
        return vec![0; n];
    }
    let mut out = Vec::with_capacity(n);
    if d >= 1.0 {
        out.extend((0..n).map(|_| rng.gen_range(0.001f32..4.0).to_bits()));
        return out;
    }
    let mean_nz = mean_run.max(1.0) * d / (1.0 - d);
    let mut zero = rng.gen::<f64>() >= d;
    while out.len() < n {
        let run = geometric(&mut rng, if zero { mean_run } else { mean_nz }).min(n - out.len());
        for _ in 0..run {
            out.push(if zero {
                0
            } else {
                rng.gen_range(0.001f32..4.0).to_bits()
            });
        }
        zero = !zero;
    }
    out
}

/// Special FP32 patterns the zero test must treat as non-zero (FORMATS §5.2 item 4), mixed with
/// zeros and ordinary floats: `0x8000_0000` (−0.0), denormals of both signs, quiet and
/// signalling NaNs, ±Inf, and normal values.
pub fn float_specials(n: usize, seed: u64) -> Vec<u32> {
    const SPECIAL: [u32; 8] = [
        0x8000_0000, // -0.0
        0x7f80_0000, // +Inf
        0xff80_0000, // -Inf
        0x7fc0_0000, // qNaN
        0x7f80_0001, // sNaN
        0xffc0_0000, // -qNaN
        0x0000_0001, // smallest denormal
        0x007f_ffff, // largest denormal
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| match rng.gen_range(0..10) {
            0..=2 => 0,
            3..=5 => SPECIAL[rng.gen_range(0..SPECIAL.len())],
            6 => rng.gen_range(1..0x0080_0000) | (rng.gen::<u32>() & 0x8000_0000),
            _ => rng.gen_range(-100.0f32..100.0).to_bits(),
        })
        .collect()
}

/// Narrow 32-bit patterns to `word_bits` by keeping the top bits (FP32 → bfloat16-like for 16),
/// which preserves zero-ness of FP32 zeros, −0.0 and the specials' sign/exponent patterns.
fn narrow(v: Vec<u32>, word_bits: u32) -> Vec<u32> {
    if word_bits >= 32 {
        return v;
    }
    v.into_iter().map(|x| x >> (32 - word_bits)).collect()
}

/// Named data classes, so the co-simulation scoreboard and the CLI can draw stimulus by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataClass {
    /// Every element zero.
    AllZero,
    /// Every element non-zero (uniform in `1..=max`).
    AllNonZero,
    /// Uniform random words over the whole `word_bits` range (zeros only by chance).
    UniformRandom,
    /// i.i.d. zeros with a density drawn uniformly from `0..=1` (from the seed), the other
    /// elements uniform non-zero.
    SparseRandom,
    /// Clustered zero/non-zero runs (mean run 1..=64, density 0.1..=0.9, from the seed).
    Clustered,
    /// ReLU-activation-like tensor, sparsity 0.3..=0.95 from the seed, NCHW.
    Relu,
    /// FP32 specials (−0.0, denormals, NaN, ±Inf) mixed with zeros and normal values.
    FloatSpecials,
}

impl DataClass {
    /// Every class, in a fixed order.
    pub const ALL: [DataClass; 7] = [
        DataClass::AllZero,
        DataClass::AllNonZero,
        DataClass::UniformRandom,
        DataClass::SparseRandom,
        DataClass::Clustered,
        DataClass::Relu,
        DataClass::FloatSpecials,
    ];

    /// snake_case name (as in serde / on the command line).
    pub fn name(&self) -> &'static str {
        match self {
            DataClass::AllZero => "all_zero",
            DataClass::AllNonZero => "all_non_zero",
            DataClass::UniformRandom => "uniform_random",
            DataClass::SparseRandom => "sparse_random",
            DataClass::Clustered => "clustered",
            DataClass::Relu => "relu",
            DataClass::FloatSpecials => "float_specials",
        }
    }

    /// Look a class up by its snake_case name.
    pub fn from_name(s: &str) -> Option<DataClass> {
        DataClass::ALL.iter().copied().find(|c| c.name() == s)
    }

    /// Generate `n` elements that fit in `word_bits` (8, 16 or 32), deterministically from `seed`.
    /// For narrower words FP32-based classes keep the top `word_bits` bits of each pattern.
    pub fn generate(&self, n: usize, word_bits: u32, seed: u64) -> Vec<u32> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
        let max = max_for(word_bits);
        match self {
            DataClass::AllZero => vec![0; n],
            DataClass::AllNonZero => (0..n).map(|_| rng.gen_range(1..=max)).collect(),
            DataClass::UniformRandom => (0..n).map(|_| rng.gen_range(0..=max)).collect(),
            DataClass::SparseRandom => {
                let d = rng.gen::<f64>();
                uniform_density(n, d, word_bits, seed)
            }
            DataClass::Clustered => {
                let run = rng.gen_range(1.0..=64.0);
                let d = rng.gen_range(0.1..=0.9);
                narrow(clustered(n, run, d, seed), word_bits)
            }
            DataClass::Relu => {
                let s = rng.gen_range(0.3..=0.95);
                let (h, w) = (8usize, 8usize);
                let c = n.div_ceil(h * w).max(1);
                let mut v = relu_tensor([1, c, h, w], s, Layout::Nchw, seed);
                v.truncate(n);
                narrow(v, word_bits)
            }
            DataClass::FloatSpecials => narrow(float_specials(n, seed), word_bits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::compare::compare;
    use crate::model::zvc::ZvcParams;

    fn sparsity(v: &[u32]) -> f64 {
        v.iter().filter(|&&x| x == 0).count() as f64 / v.len() as f64
    }

    /// `uniform_random` is uniform words for every seed (zeros only by chance, every byte
    /// value about equally often); the sparse class keeps its seed-drawn density of zeros.
    #[test]
    fn uniform_random_is_uniform_words() {
        for seed in 1..=4 {
            for bits in [8u32, 16, 32] {
                let v = DataClass::UniformRandom.generate(8192, bits, seed);
                let max = max_for(bits) as f64;
                assert!(sparsity(&v) < 0.01, "seed {seed}: {} zeros", sparsity(&v));
                let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
                assert!(
                    (mean / max - 0.5).abs() < 0.02,
                    "seed {seed}, {bits} bits: mean {mean}"
                );
            }
        }
        let zeros: Vec<f64> = (1..=8)
            .map(|s| sparsity(&DataClass::SparseRandom.generate(8192, 32, s)))
            .collect();
        assert!(
            zeros.iter().any(|&z| z > 0.5) && zeros.iter().any(|&z| z < 0.5),
            "{zeros:?}"
        );
    }

    #[test]
    fn relu_hits_target_and_is_deterministic() {
        for &s in &[0.0, 0.3, 0.5, 0.6, 0.93, 1.0] {
            let v = relu_tensor([2, 16, 13, 13], s, Layout::Nchw, 7);
            assert!(
                (sparsity(&v) - s).abs() < 0.01,
                "target {s} got {}",
                sparsity(&v)
            );
            // positive finite FP32 values
            assert!(v
                .iter()
                .all(|&x| x == 0 || (f32::from_bits(x) > 0.0 && f32::from_bits(x).is_finite())));
        }
        let a = relu_tensor([1, 4, 8, 8], 0.6, Layout::Nhwc, 3);
        assert_eq!(a, relu_tensor([1, 4, 8, 8], 0.6, Layout::Nhwc, 3));
        assert_ne!(a, relu_tensor([1, 4, 8, 8], 0.6, Layout::Nhwc, 4));
    }

    /// FORMATS §5.2 sanity check: ZVC layout-invariant; RLE-A better on NCHW than NHWC.
    #[test]
    fn layout_sanity_check() {
        let shape = [4, 32, 27, 27];
        let p = ZvcParams::default();
        let mut res = Vec::new();
        for layout in [Layout::Nchw, Layout::Nhwc, Layout::Chwn] {
            let v = relu_tensor(shape, 0.684, layout, 11);
            res.push(compare(&v, &p));
        }
        for (l, c) in ["nchw", "nhwc", "chwn"].iter().zip(&res) {
            let r: Vec<String> = c
                .rows()
                .iter()
                .map(|r| format!("{} {:.2}", r.name, r.ratio))
                .collect();
            println!("{l} sparsity {:.3}: {}", c.sparsity, r.join(", "));
        }
        let [nchw, nhwc, chwn] = [&res[0], &res[1], &res[2]];
        assert!((nchw.zvc.ratio - nhwc.zvc.ratio).abs() < 0.01);
        assert!((nchw.zvc.ratio - chwn.zvc.ratio).abs() < 0.01);
        assert!((nchw.zvc.ratio - 32.0 / (1.0 + 32.0 * (1.0 - 0.684))).abs() < 0.05);
        assert!(nchw.rle_a_8_8.ratio > nhwc.rle_a_8_8.ratio);
        assert!(nchw.rle_a_8_8.ratio > chwn.rle_a_8_8.ratio);
        assert!(nchw.zlib.ratio > nhwc.zlib.ratio);
        assert!(nchw.rle_a_16_16.ratio > nhwc.rle_a_16_16.ratio);
    }

    #[test]
    fn generators() {
        let u = uniform_density(100_000, 0.4, 16, 1);
        assert!((1.0 - sparsity(&u) - 0.4).abs() < 0.01);
        assert!(u.iter().all(|&x| x <= 0xffff));
        let c = clustered(200_000, 20.0, 0.3, 2);
        assert_eq!(c.len(), 200_000);
        assert!((1.0 - sparsity(&c) - 0.3).abs() < 0.03, "{}", sparsity(&c));
        let f = float_specials(1000, 3);
        assert!(f.contains(&0x8000_0000) && f.contains(&0x7f80_0000) && f.contains(&0x7fc0_0000));
        for class in DataClass::ALL {
            assert_eq!(DataClass::from_name(class.name()), Some(class));
            for wb in [8, 16, 32] {
                let v = class.generate(777, wb, 5);
                assert_eq!(v.len(), 777, "{class:?}");
                assert!(v.iter().all(|&x| x <= max_for(wb)), "{class:?} {wb}");
                assert_eq!(v, class.generate(777, wb, 5));
            }
        }
        assert!(DataClass::AllZero
            .generate(10, 32, 0)
            .iter()
            .all(|&x| x == 0));
        assert!(DataClass::AllNonZero
            .generate(10, 8, 0)
            .iter()
            .all(|&x| x != 0));
        let j = serde_json::to_string(&DataClass::FloatSpecials).unwrap();
        assert_eq!(j, "\"float_specials\"");
    }
}
