//! The §6 data classes of Buddy Compression (docs/FORMATS.md, Buddy §6) as 128 B memory
//! entries: trivial pages, pointer and index arrays, HPC FP fields, DL tensors and random
//! data. Every class is seeded and deterministic; the BPC and Buddy scoreboards
//! (`cosim::buddy`) and `hwzip eval --engine buddy` draw from them.

use super::synthetic::relu_tensor;
use super::Layout;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Bytes per entry.
pub const ENTRY_BYTES: usize = 128;

/// One §6 class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryClass {
    /// All-zero pages (memset buffers).
    Zero,
    /// One random 32-bit word repeated.
    Constant,
    /// Monotone int32 indices with small strides.
    IndexI32,
    /// Monotone int64 pointers (8-byte aligned, small strides).
    PointerI64,
    /// CSR column indices: sorted, random gaps within a row, restarting per row.
    CsrCols,
    /// Smooth 3-D stencil field (sin·cos plus noise at a random mantissa entropy), FP64.
    StencilF64,
    /// The same field in FP32.
    StencilF32,
    /// A wavefront spreading into a zero-initialised FP64 grid: entries ahead of the front are
    /// zero, behind it smooth (355.seismic's drift).
    WavefrontF64,
    /// Lattice-Boltzmann distributions: 19 FP64 weights per cell near their equilibria.
    LbmF64,
    /// Array of structs: an int32 id, an int32 flag, two FP64 and 8 B of zero padding.
    AosMixed,
    /// FP32 weights, He initialisation (Gaussian, σ = sqrt(2/fan-in)).
    DlWeights,
    /// Post-ReLU FP32 activations with 30% zeros.
    Relu30,
    /// 50% zeros.
    Relu50,
    /// 70% zeros.
    Relu70,
    /// 90% zeros.
    Relu90,
    /// 95% zeros.
    Relu95,
    /// Small-magnitude FP32 gradients (Gaussian, σ = 1e-4, a quarter of them zero).
    Gradients,
    /// FP16 activations (the ReLU field at 50% zeros, rounded to half precision).
    Fp16,
    /// BF16 weights (Gaussian, rounded to bfloat16).
    Bf16,
    /// Uniform random bytes.
    Random,
}

impl EntryClass {
    /// Every class, in report order.
    pub const ALL: [EntryClass; 20] = [
        EntryClass::Zero,
        EntryClass::Constant,
        EntryClass::IndexI32,
        EntryClass::PointerI64,
        EntryClass::CsrCols,
        EntryClass::StencilF64,
        EntryClass::StencilF32,
        EntryClass::WavefrontF64,
        EntryClass::LbmF64,
        EntryClass::AosMixed,
        EntryClass::DlWeights,
        EntryClass::Relu30,
        EntryClass::Relu50,
        EntryClass::Relu70,
        EntryClass::Relu90,
        EntryClass::Relu95,
        EntryClass::Gradients,
        EntryClass::Fp16,
        EntryClass::Bf16,
        EntryClass::Random,
    ];

    /// Name for `--class` and reports.
    pub fn name(self) -> &'static str {
        match self {
            EntryClass::Zero => "zero",
            EntryClass::Constant => "constant",
            EntryClass::IndexI32 => "index-i32",
            EntryClass::PointerI64 => "pointer-i64",
            EntryClass::CsrCols => "csr-cols",
            EntryClass::StencilF64 => "stencil-f64",
            EntryClass::StencilF32 => "stencil-f32",
            EntryClass::WavefrontF64 => "wavefront-f64",
            EntryClass::LbmF64 => "lbm-f64",
            EntryClass::AosMixed => "aos-mixed",
            EntryClass::DlWeights => "dl-weights",
            EntryClass::Relu30 => "relu-30",
            EntryClass::Relu50 => "relu-50",
            EntryClass::Relu70 => "relu-70",
            EntryClass::Relu90 => "relu-90",
            EntryClass::Relu95 => "relu-95",
            EntryClass::Gradients => "gradients",
            EntryClass::Fp16 => "fp16",
            EntryClass::Bf16 => "bf16",
            EntryClass::Random => "random",
        }
    }

    /// The class called `s`; the error lists the names.
    pub fn from_name(s: &str) -> Result<EntryClass, String> {
        crate::files::by_name("entry class", &EntryClass::ALL, EntryClass::name, s)
    }

    /// Whether the class holds FP64 values (where 64-bit BPC symbols matter).
    pub fn is_fp64(self) -> bool {
        matches!(
            self,
            EntryClass::StencilF64
                | EntryClass::WavefrontF64
                | EntryClass::LbmF64
                | EntryClass::AosMixed
        )
    }

    /// Whether the class is one of the DL tensors (the paper's DL geomean) rather than HPC.
    pub fn is_dl(self) -> bool {
        matches!(
            self,
            EntryClass::DlWeights
                | EntryClass::Relu30
                | EntryClass::Relu50
                | EntryClass::Relu70
                | EntryClass::Relu90
                | EntryClass::Relu95
                | EntryClass::Gradients
                | EntryClass::Fp16
                | EntryClass::Bf16
        )
    }

    /// `n` entries of 128 B, deterministic in `seed`; consecutive entries are consecutive
    /// memory of one buffer (fields and tensors run across entry boundaries).
    pub fn generate(self, n: usize, seed: u64) -> Vec<Vec<u8>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((self as u64 + 1) << 52));
        let bytes = self.buffer(n * ENTRY_BYTES, &mut rng, seed);
        bytes
            .chunks_exact(ENTRY_BYTES)
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn buffer(self, len: usize, rng: &mut ChaCha8Rng, seed: u64) -> Vec<u8> {
        let n32 = len / 4;
        let n64 = len / 8;
        let mut out: Vec<u8> = match self {
            EntryClass::Zero => vec![0; len],
            EntryClass::Constant => {
                let w: u32 = rng.gen();
                le32((0..n32).map(|_| w))
            }
            EntryClass::IndexI32 => {
                let mut v: u32 = rng.gen_range(0..1 << 20);
                let stride = [1, 1, 2, 4, 8][rng.gen_range(0..5)];
                le32((0..n32).map(|_| {
                    v = v.wrapping_add(stride + (rng.gen_range(0..16) == 0) as u32);
                    v
                }))
            }
            EntryClass::PointerI64 => {
                let mut v: u64 = 0x7f00_0000_0000 + (rng.gen_range(0..1u64 << 24) << 3);
                let stride = [8u64, 16, 24, 64][rng.gen_range(0..4)];
                le64((0..n64).map(|_| {
                    v += stride * rng.gen_range(1..3);
                    v
                }))
            }
            EntryClass::CsrCols => {
                let cols = rng.gen_range(1000..1_000_000u32);
                let mut c = 0u32;
                le32((0..n32).map(|_| {
                    if rng.gen_range(0..12) == 0 || c >= cols {
                        c = rng.gen_range(0..64);
                    } else {
                        c += rng.gen_range(1..40);
                    }
                    c
                }))
            }
            EntryClass::StencilF64 | EntryClass::StencilF32 => {
                let (nx, ny) = (32usize, 32usize);
                let f = [rng.gen_range(0.05..0.3), rng.gen_range(0.05..0.3)];
                let amp = rng.gen_range(1.0..100.0);
                // Mantissa entropy: noise from none to 1e-3 of the amplitude.
                let noise = [0.0, 1e-9, 1e-6, 1e-3][rng.gen_range(0..4)] * amp;
                let n = if self == EntryClass::StencilF64 {
                    n64
                } else {
                    n32
                };
                let vals = (0..n).map(|i| {
                    let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
                    amp * (f[0] * x as f64 + 0.1 * z as f64).sin() * (f[1] * y as f64).cos()
                        + 300.0
                        + noise * gauss(rng)
                });
                if self == EntryClass::StencilF64 {
                    le64(vals.map(f64::to_bits))
                } else {
                    le32(vals.map(|v| (v as f32).to_bits()))
                }
            }
            EntryClass::WavefrontF64 => {
                // The front sits at a random point of the buffer; behind it a decaying wave.
                let front = rng.gen_range(0..=n64);
                let k = rng.gen_range(0.01..0.2);
                le64((0..n64).map(|i| {
                    if i >= front {
                        0
                    } else {
                        let r = (front - i) as f64;
                        ((k * r).sin() * (-0.01 * r).exp()).to_bits()
                    }
                }))
            }
            EntryClass::LbmF64 => {
                // D3Q19 equilibrium weights: rest 1/3, 6 face neighbours 1/18, 12 edge 1/36.
                let w = |i: usize| match i % 19 {
                    0 => 1.0 / 3.0,
                    1..=6 => 1.0 / 18.0,
                    _ => 1.0 / 36.0,
                };
                let rho = rng.gen_range(0.9..1.1);
                le64((0..n64).map(|i| (w(i) * rho * (1.0 + 0.01 * gauss(rng))).to_bits()))
            }
            EntryClass::AosMixed => {
                // 32 B structs: id (i32), flag (i32), x (f64), v (f64), 8 B padding.
                let mut id: u32 = rng.gen_range(0..1 << 16);
                let mut b = Vec::with_capacity(len);
                while b.len() < len {
                    id += 1;
                    b.extend_from_slice(&id.to_le_bytes());
                    b.extend_from_slice(&(rng.gen_range(0..4u32)).to_le_bytes());
                    b.extend_from_slice(&(id as f64 * 0.5 + 0.01 * gauss(rng)).to_le_bytes());
                    b.extend_from_slice(&(gauss(rng) * 3.0).to_le_bytes());
                    b.extend_from_slice(&[0; 8]);
                }
                b
            }
            EntryClass::DlWeights => {
                let sigma = (2.0 / rng.gen_range(64..4096) as f64).sqrt();
                le32((0..n32).map(|_| ((gauss(rng) * sigma) as f32).to_bits()))
            }
            EntryClass::Relu30
            | EntryClass::Relu50
            | EntryClass::Relu70
            | EntryClass::Relu90
            | EntryClass::Relu95 => {
                let s = match self {
                    EntryClass::Relu30 => 0.3,
                    EntryClass::Relu50 => 0.5,
                    EntryClass::Relu70 => 0.7,
                    EntryClass::Relu90 => 0.9,
                    _ => 0.95,
                };
                le32(relu_words(n32, s, seed ^ rng.gen::<u64>()).into_iter())
            }
            EntryClass::Gradients => le32((0..n32).map(|_| {
                if rng.gen_range(0..4) == 0 {
                    0
                } else {
                    ((gauss(rng) * 1e-4) as f32).to_bits()
                }
            })),
            EntryClass::Fp16 => {
                let w = relu_words(len / 2, 0.5, seed ^ rng.gen::<u64>());
                w.iter()
                    .flat_map(|x| f32_to_f16(f32::from_bits(*x)).to_le_bytes())
                    .collect()
            }
            EntryClass::Bf16 => (0..len / 2)
                .flat_map(|_| f32_to_bf16((gauss(rng) * 0.05) as f32).to_le_bytes())
                .collect(),
            EntryClass::Random => (0..len).map(|_| rng.gen()).collect(),
        };
        out.resize(len, 0);
        out
    }
}

fn le32(v: impl Iterator<Item = u32>) -> Vec<u8> {
    v.flat_map(u32::to_le_bytes).collect()
}

fn le64(v: impl Iterator<Item = u64>) -> Vec<u8> {
    v.flat_map(u64::to_le_bytes).collect()
}

/// Approximately standard normal (Irwin-Hall of 12 uniforms).
fn gauss(rng: &mut ChaCha8Rng) -> f64 {
    (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0
}

/// `n` post-ReLU FP32 words at `sparsity` from [`relu_tensor`] tiles of 16 × 16 × 16.
fn relu_words(n: usize, sparsity: f64, seed: u64) -> Vec<u32> {
    let mut v = Vec::with_capacity(n);
    let mut k = 0u64;
    while v.len() < n {
        v.extend(relu_tensor(
            [1, 16, 16, 16],
            sparsity,
            Layout::Flat,
            seed ^ k,
        ));
        k += 1;
    }
    v.truncate(n);
    v
}

/// IEEE binary16 of `x`, rounded to nearest even; out-of-range values saturate to infinity.
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xFF) as i32;
    let man = b & 0x7F_FFFF;
    if exp == 0xFF {
        return sign | 0x7C00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7C00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // Subnormal: the implicit one shifted in, rounded to nearest even.
        let m = man | 0x80_0000;
        let sh = (14 - e) as u32;
        let half = 1u32 << (sh - 1);
        let r = m >> sh;
        let rem = m & ((1 << sh) - 1);
        let r = if rem > half || (rem == half && r & 1 == 1) {
            r + 1
        } else {
            r
        };
        return sign | r as u16;
    }
    let r = (e as u32) << 10 | man >> 13;
    let rem = man & 0x1FFF;
    let r = if rem > 0x1000 || (rem == 0x1000 && r & 1 == 1) {
        r + 1
    } else {
        r
    };
    sign | r.min(0x7C00) as u16
}

/// bfloat16 of `x` (the top half of its FP32 bits), rounded to nearest even.
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return (b >> 16) as u16 | 0x40;
    }
    let r = b + 0x7FFF + ((b >> 16) & 1);
    (r >> 16) as u16
}

/// Entries of every class in turn, in batches of 16 per class from `seed`: the stimulus of the
/// BPC scoreboards, endless.
pub struct EntryStim {
    seed: u64,
    round: u64,
    batch: Vec<Vec<u8>>,
}

impl EntryStim {
    /// A stimulus stream from `seed`.
    pub fn new(seed: u64) -> EntryStim {
        EntryStim {
            seed,
            round: 0,
            batch: Vec::new(),
        }
    }

    /// The next entry and its class.
    pub fn next_entry(&mut self) -> Vec<u8> {
        if self.batch.is_empty() {
            let s = self.seed ^ self.round.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            for c in EntryClass::ALL {
                self.batch.extend(c.generate(16, s));
            }
            self.batch.reverse();
            self.round += 1;
        }
        self.batch.pop().unwrap_or_else(|| vec![0; ENTRY_BYTES])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_sized_named_and_deterministic() {
        for c in EntryClass::ALL {
            let a = c.generate(20, 5);
            assert_eq!(a.len(), 20);
            assert!(a.iter().all(|e| e.len() == ENTRY_BYTES));
            assert_eq!(a, c.generate(20, 5), "{}", c.name());
            assert_eq!(EntryClass::from_name(c.name()).unwrap(), c);
        }
        assert!(EntryClass::from_name("nope")
            .unwrap_err()
            .contains("relu-50"));
        assert!(EntryClass::Zero
            .generate(3, 1)
            .iter()
            .flatten()
            .all(|b| *b == 0));
    }

    #[test]
    fn relu_sparsity_and_half_precision() {
        let zeros = |c: EntryClass| {
            let e = c.generate(256, 9);
            let w: Vec<u32> = e
                .iter()
                .flat_map(|x| {
                    x.chunks_exact(4)
                        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                })
                .collect();
            w.iter().filter(|x| **x == 0).count() as f64 / w.len() as f64
        };
        assert!((zeros(EntryClass::Relu30) - 0.3).abs() < 0.05);
        assert!((zeros(EntryClass::Relu90) - 0.9).abs() < 0.05);
        assert_eq!(f32_to_f16(1.0), 0x3C00);
        assert_eq!(f32_to_f16(-2.5), 0xC100);
        assert_eq!(f32_to_f16(65504.0), 0x7BFF);
        assert_eq!(f32_to_f16(1e9), 0x7C00);
        assert_eq!(f32_to_f16(5.960_464_5e-8), 1);
        assert_eq!(f32_to_bf16(1.0), 0x3F80);
        assert_eq!(f32_to_bf16(-3.0), 0xC040);
    }
}
