//! Seeded 128 B block classes for the PACT'12 memory-link engine (docs/FORMATS.md, PACT'12
//! §5, stimulus plan items 1–8): structured and incompressible INT, FP constants, smooth and
//! random FP fields, mixed blocks, edge cases and a drifting stencil.
//!
//! Every generator is `ChaCha8Rng::seed_from_u64(seed)`-driven; blocks are `block_bytes`
//! long (a multiple of 4) and hold little-endian 32-bit words. Each class says whether its
//! data is FP32 (the classes a `cudaMemcpy` would tag for truncation).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A stimulus class of §5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockClass {
    /// §5.1: zero blocks, `a[i] = i`, pixels below 256, CSR row pointers and column
    /// indices, bitmasks.
    StructuredInt,
    /// §5.2: uniform random u32 (AES/SHA-like; the raw fallback).
    RandomInt,
    /// §5.3: `1.0f` fills, integers stored as float, floats with only the top 8 mantissa
    /// bits (RAY-like, low 16 bits zero).
    FpConstants,
    /// §5.4: smooth 2-D fields (HotSpot-like 300–350 with small noise, Laplace gradients).
    SmoothFp,
    /// §5.5: uniform [0,1), Gaussian and sparse-matrix values.
    RandomFp,
    /// §5.6: FP/INT interleaved structs and partially zero blocks.
    Mixed,
    /// §5.7: ±0, ±Inf, NaNs, denormals, extreme normals, every token at every position,
    /// dictionary wrap.
    Edge,
    /// §5.8: a Jacobi stencil's field after 0–63 iterations (ratio drift).
    Stencil,
}

impl BlockClass {
    /// Every class, in report order.
    pub const ALL: [BlockClass; 8] = [
        BlockClass::StructuredInt,
        BlockClass::RandomInt,
        BlockClass::FpConstants,
        BlockClass::SmoothFp,
        BlockClass::RandomFp,
        BlockClass::Mixed,
        BlockClass::Edge,
        BlockClass::Stencil,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            BlockClass::StructuredInt => "int-structured",
            BlockClass::RandomInt => "int-random",
            BlockClass::FpConstants => "fp-constants",
            BlockClass::SmoothFp => "fp-smooth",
            BlockClass::RandomFp => "fp-random",
            BlockClass::Mixed => "mixed",
            BlockClass::Edge => "edge",
            BlockClass::Stencil => "fp-stencil",
        }
    }

    /// The class called `s`; the error lists the names.
    pub fn from_name(s: &str) -> Result<BlockClass, String> {
        crate::files::by_name("block class", &BlockClass::ALL, BlockClass::name, s)
    }

    /// Whether the class is FP32 data (truncation applies).
    pub fn is_fp(self) -> bool {
        matches!(
            self,
            BlockClass::FpConstants
                | BlockClass::SmoothFp
                | BlockClass::RandomFp
                | BlockClass::Stencil
        )
    }

    /// `n` blocks of `block_bytes` (a multiple of 4), deterministic in `seed`.
    pub fn generate(self, n: usize, block_bytes: usize, seed: u64) -> Vec<Vec<u8>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (self as u64) << 56);
        let nw = block_bytes / 4;
        if self == BlockClass::Stencil {
            return stencil(n, nw, &mut rng);
        }
        (0..n)
            .map(|i| {
                let w = match self {
                    BlockClass::StructuredInt => structured_int(nw, &mut rng),
                    BlockClass::RandomInt => (0..nw).map(|_| rng.gen()).collect(),
                    BlockClass::FpConstants => fp_constants(nw, &mut rng),
                    BlockClass::SmoothFp => smooth_fp(nw, &mut rng),
                    BlockClass::RandomFp => random_fp(nw, &mut rng),
                    BlockClass::Mixed => mixed(nw, &mut rng),
                    BlockClass::Edge => edge(nw, i, &mut rng),
                    BlockClass::Stencil => unreachable!("handled above"),
                };
                w.iter().flat_map(|x| x.to_le_bytes()).collect()
            })
            .collect()
    }
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

fn gauss(rng: &mut ChaCha8Rng) -> f64 {
    (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0
}

fn structured_int(nw: usize, rng: &mut ChaCha8Rng) -> Vec<u32> {
    let start: u32 = rng.gen_range(0..4096) * 32;
    match rng.gen_range(0..5) {
        0 => vec![0; nw],
        1 => (0..nw as u32).map(|i| start + i).collect(),
        2 => (0..nw).map(|_| rng.gen_range(0..256)).collect(),
        3 => {
            // CSR: monotone row pointers or column indices with small deltas.
            let mut v = start;
            (0..nw)
                .map(|_| {
                    v += rng.gen_range(0..24);
                    v
                })
                .collect()
        }
        _ => (0..nw)
            .map(|_| match rng.gen_range(0..4) {
                0 => 0,
                1 => u32::MAX,
                _ => 1u32 << rng.gen_range(0..32),
            })
            .collect(),
    }
}

fn fp_constants(nw: usize, rng: &mut ChaCha8Rng) -> Vec<u32> {
    match rng.gen_range(0..3) {
        0 => vec![f(1.0); nw],
        1 => (0..nw).map(|_| f(rng.gen_range(0..256) as f32)).collect(),
        _ => (0..nw)
            .map(|_| f(rng.gen_range(-4.0f32..4.0)) & 0xFFFF_0000)
            .collect(),
    }
}

fn smooth_fp(nw: usize, rng: &mut ChaCha8Rng) -> Vec<u32> {
    let base = rng.gen_range(300.0..350.0);
    let slope = rng.gen_range(-0.5..0.5);
    let noise = [0.0, 0.01, 0.1, 1.0][rng.gen_range(0..4)];
    (0..nw)
        .map(|i| f((base + slope * i as f64 + noise * gauss(rng)) as f32))
        .collect()
}

fn random_fp(nw: usize, rng: &mut ChaCha8Rng) -> Vec<u32> {
    match rng.gen_range(0..3) {
        0 => (0..nw).map(|_| f(rng.gen::<f32>())).collect(),
        1 => (0..nw).map(|_| f(gauss(rng) as f32)).collect(),
        _ => (0..nw)
            .map(|_| {
                if rng.gen_bool(0.3) {
                    f(rng.gen_range(-10.0f32..10.0))
                } else {
                    0
                }
            })
            .collect(),
    }
}

fn mixed(nw: usize, rng: &mut ChaCha8Rng) -> Vec<u32> {
    if rng.gen_bool(0.5) {
        // struct { float x; int id; } interleaved.
        let id0: u32 = rng.gen_range(0..100_000);
        (0..nw)
            .map(|i| {
                if i % 2 == 0 {
                    f(rng.gen_range(0.0f32..100.0))
                } else {
                    id0 + i as u32 / 2
                }
            })
            .collect()
    } else {
        let nz = rng.gen_range(0..nw);
        let mut w: Vec<u32> = (0..nw).map(|_| rng.gen()).collect();
        for x in w.iter_mut().skip(nz) {
            *x = 0;
        }
        w
    }
}

/// Edge blocks: the specials, then (by block index) a token sequence that places every
/// pattern at every position, and a dictionary-wrapping block.
fn edge(nw: usize, i: usize, rng: &mut ChaCha8Rng) -> Vec<u32> {
    const SPECIALS: [u32; 12] = [
        0x0000_0000,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7F80_0001,
        0xFFC0_1234,
        0x0000_0001,
        0x007F_FFFF,
        0x0080_0000,
        0x7F7F_FFFF,
        0xFF7F_FFFF,
    ];
    match i % 4 {
        0 => (0..nw)
            .map(|_| SPECIALS[rng.gen_range(0..SPECIALS.len())])
            .collect(),
        1 => {
            // Rotate a six-token pattern sequence by the block index.
            let base = 0x5A00_0000 | rng.gen_range(0..0x10000) << 8;
            (0..nw)
                .map(|k| match (k + i / 4) % 6 {
                    0 => 0,
                    1 => rng.gen_range(1..256),
                    2 => base,
                    3 => base | rng.gen_range(1..256),
                    4 => base ^ rng.gen_range(0x100..0x10000),
                    _ => rng.gen::<u32>() | 0x100,
                })
                .collect()
        }
        2 => (0..nw as u32)
            .map(|k| 0x1000_0000u32.wrapping_add(k % 20 * 0x0100_0000))
            .collect(),
        _ => (0..nw)
            .map(|_| {
                if rng.gen_bool(0.5) {
                    rng.gen_range(1..0x0080_0000) // denormals
                } else {
                    SPECIALS[rng.gen_range(0..SPECIALS.len())]
                }
            })
            .collect(),
    }
}

/// A 2-D Jacobi relaxation of a random field: blocks of the field after 0, 1, 2, 4, …
/// iterations (the ratio of FFT/STN-like data drifts as the field evolves).
fn stencil(n: usize, nw: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    const S: usize = 64;
    let mut g: Vec<f32> = (0..S * S)
        .map(|k| {
            if k % S == 0 {
                350.0
            } else {
                300.0 + rng.gen_range(0.0..1.0)
            }
        })
        .collect();
    let mut out = Vec::with_capacity(n);
    let mut iter = 0usize;
    let snaps = S * S / nw;
    while out.len() < n {
        for b in 0..snaps {
            if out.len() == n {
                break;
            }
            out.push(
                g[b * nw..(b + 1) * nw]
                    .iter()
                    .flat_map(|x| x.to_bits().to_le_bytes())
                    .collect(),
            );
        }
        let steps = if iter == 0 { 1 } else { iter };
        for _ in 0..steps.min(63) {
            let prev = g.clone();
            for y in 1..S - 1 {
                for x in 1..S - 1 {
                    g[y * S + x] = 0.25
                        * (prev[y * S + x - 1]
                            + prev[y * S + x + 1]
                            + prev[(y - 1) * S + x]
                            + prev[(y + 1) * S + x]);
                }
            }
        }
        iter += steps;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_deterministic_and_sized() {
        for c in BlockClass::ALL {
            let a = c.generate(40, 128, 3);
            assert_eq!(a, c.generate(40, 128, 3), "{}", c.name());
            assert_ne!(a, c.generate(40, 128, 4), "{}", c.name());
            assert!(a.iter().all(|b| b.len() == 128));
            assert_eq!(BlockClass::from_name(c.name()).unwrap(), c);
        }
        assert!(BlockClass::from_name("nope")
            .unwrap_err()
            .contains("fp-smooth"));
    }

    /// The classes do what their names say under the PACT'12 codec: random INT is raw,
    /// structured INT compresses well, truncation helps FP data, every block round-trips.
    #[test]
    fn classes_under_the_pact12_codec() {
        use crate::model::cpack_lossy::stats::BlockStats;
        use crate::model::cpack_lossy::{self as cl, Check, LossyParams};
        let p = LossyParams::default();
        for c in BlockClass::ALL {
            let blocks = c.generate(400, 128, 1);
            let s0 = BlockStats::of(&p, &blocks, 0).unwrap();
            let s1 = BlockStats::of(&p, &blocks, 1).unwrap();
            eprintln!(
                "{:>15}: lossless ratio {:.3} (chunks {:.3}, raw {:.2}), t=8 chunks {:.3}",
                c.name(),
                s0.ratio_bits(),
                s0.ratio_chunks(&p),
                s0.raw_rate(),
                s1.ratio_chunks(&p)
            );
            assert_eq!(s0.blocks, 400);
            assert_eq!(s0.n_hist.iter().sum::<u64>(), 400);
            assert!(s1.chunks <= s0.chunks, "{}", c.name());
            for b in &blocks {
                let x = cl::compress(&p, b, 0).unwrap();
                assert_eq!(
                    &cl::decompress(&p, x.md, &x.chunks, Check::Strict).unwrap(),
                    b
                );
            }
            match c {
                BlockClass::RandomInt => assert_eq!(s0.raw, 400),
                BlockClass::StructuredInt => assert!(s0.ratio_chunks(&p) < 0.6),
                BlockClass::RandomFp | BlockClass::SmoothFp => {
                    assert!(s1.ratio_chunks(&p) < s0.ratio_chunks(&p))
                }
                _ => {}
            }
        }
    }
}
