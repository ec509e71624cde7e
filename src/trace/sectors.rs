//! Seeded sector-trace generators for the Base+XOR engine (docs/FORMATS.md, Base+XOR §5).
//!
//! The paper's traces (32 B sectors at an NVIDIA memory controller, 187 applications) are not
//! public, so these classes reproduce the *shapes* the paper describes: structure-of-arrays
//! floats whose sign/exponent/upper mantissa repeat (the `0x390c` of Fig. 3), doubles, narrow
//! integers, monotone indices and pointers, pixels, zero-heavy and mixed data, arrays of
//! structures with odd strides, and the controls (random, constant, adversarial). Each class
//! returns little-endian 32-bit words, a whole number of 32 B sectors, deterministic in `seed`
//! (ChaCha8).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Words per 32 B sector.
pub const SECTOR_WORDS: usize = 8;

/// A named sector data class (FORMATS §5 "Generators").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SectorClass {
    /// fp32 structure-of-arrays from smooth fields: a heat-diffusion (hotspot-like) stencil,
    /// sin/cos grids and slow random walks.
    Fp32Soa,
    /// fp64 arrays: CoMD/lulesh-like particle positions and velocities.
    Fp64,
    /// fp16 and int16 arrays (half-precision fields, 16-bit audio-like signals).
    Half16,
    /// int32 indices and 64-bit pointers: CSR row offsets, column indices, BFS frontiers,
    /// addresses with common upper bits.
    Indices,
    /// RGBA8 framebuffers (gradients, flat regions, noise), fp32 depth, 10:10:10:2 normals.
    Pixels,
    /// All-zero sectors, sparse arrays (p ∈ {0.1, 0.3, 0.5, 0.7}) and clustered zeros.
    ZeroMixed,
    /// Arrays of structures with 12 B and 20 B strides and mixed field sizes.
    Aos,
    /// Uniform random data (expected ≈ 0% for the XOR schemes, ≈ −18% for byte DBI).
    Random,
    /// Constant sectors and the adversarial cases of §5: e_i = e_{i−1} ^ C, bases equal to C.
    Adversarial,
}

impl SectorClass {
    /// Every class, in a fixed order.
    pub const ALL: [SectorClass; 9] = [
        SectorClass::Fp32Soa,
        SectorClass::Fp64,
        SectorClass::Half16,
        SectorClass::Indices,
        SectorClass::Pixels,
        SectorClass::ZeroMixed,
        SectorClass::Aos,
        SectorClass::Random,
        SectorClass::Adversarial,
    ];

    /// kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            SectorClass::Fp32Soa => "fp32-soa",
            SectorClass::Fp64 => "fp64",
            SectorClass::Half16 => "half16",
            SectorClass::Indices => "indices",
            SectorClass::Pixels => "pixels",
            SectorClass::ZeroMixed => "zero-mixed",
            SectorClass::Aos => "aos",
            SectorClass::Random => "random",
            SectorClass::Adversarial => "adversarial",
        }
    }

    /// Looks a class up by name; the error lists the known names.
    pub fn from_name(s: &str) -> Result<SectorClass, String> {
        crate::files::by_name("sector class", &SectorClass::ALL, SectorClass::name, s)
    }

    /// `sectors` sectors of this class (8 words each), deterministic in `seed`.
    pub fn generate(self, sectors: usize, seed: u64) -> Vec<u32> {
        let n = sectors * SECTOR_WORDS;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5bd1_e995 ^ (self as u64) << 32);
        let mut out = Vec::with_capacity(n + 64);
        // Concatenate arrays ("allocations") of a few KB until the trace is long enough; each
        // array is one sub-kind of the class with its own parameters.
        while out.len() < n {
            let len = rng.gen_range(32..=256usize) * SECTOR_WORDS;
            let arr = match self {
                SectorClass::Fp32Soa => fp32_soa(&mut rng, len),
                SectorClass::Fp64 => fp64(&mut rng, len),
                SectorClass::Half16 => half16(&mut rng, len),
                SectorClass::Indices => indices(&mut rng, len),
                SectorClass::Pixels => pixels(&mut rng, len),
                SectorClass::ZeroMixed => zero_mixed(&mut rng, len),
                SectorClass::Aos => aos(&mut rng, len),
                SectorClass::Random => (0..len).map(|_| rng.gen()).collect(),
                SectorClass::Adversarial => adversarial(&mut rng, len),
            };
            // Arrays start on a sector boundary (allocations are aligned).
            let mut arr = arr;
            arr.resize(arr.len().div_ceil(SECTOR_WORDS) * SECTOR_WORDS, 0);
            out.extend(arr);
        }
        out.truncate(n);
        out
    }
}

fn f32w(x: f64) -> u32 {
    (x as f32).to_bits()
}

/// Smooth fp32 fields stored as arrays (SoA).
fn fp32_soa(rng: &mut ChaCha8Rng, len: usize) -> Vec<u32> {
    match rng.gen_range(0..3) {
        0 => {
            // Hotspot-like heat diffusion on a w×h grid: a few explicit steps from random power.
            let w = 64usize;
            let h = len.div_ceil(w);
            let ambient = rng.gen_range(300.0..340.0);
            let mut t: Vec<f64> = (0..w * h)
                .map(|_| ambient + rng.gen_range(0.0..20.0))
                .collect();
            for _ in 0..8 {
                let prev = t.clone();
                for y in 0..h {
                    for x in 0..w {
                        let at = |xx: usize, yy: usize| prev[yy.min(h - 1) * w + xx.min(w - 1)];
                        let c = prev[y * w + x];
                        let lap = at(x + 1, y)
                            + at(x.saturating_sub(1), y)
                            + at(x, y + 1)
                            + at(x, y.saturating_sub(1))
                            - 4.0 * c;
                        t[y * w + x] = c + 0.2 * lap;
                    }
                }
            }
            t.truncate(len);
            t.into_iter().map(f32w).collect()
        }
        1 => {
            // sin/cos grid with a random amplitude, frequency and offset.
            let a = rng.gen_range(0.1..1000.0);
            let f = rng.gen_range(0.001..0.05);
            let off = rng.gen_range(-a..a);
            (0..len)
                .map(|i| f32w(off + a * (2.0 * PI * f * i as f64).sin()))
                .collect()
        }
        _ => {
            // Slow random walk around a random magnitude.
            let mut v: f64 = rng.gen_range(0.5..4.0) * 10f64.powi(rng.gen_range(-3..4));
            let step = v.abs() * rng.gen_range(1e-4..1e-2);
            (0..len)
                .map(|_| {
                    v += rng.gen_range(-step..step);
                    f32w(v)
                })
                .collect()
        }
    }
}

/// fp64 positions/velocities (little-endian: low word first).
fn fp64(rng: &mut ChaCha8Rng, len: usize) -> Vec<u32> {
    let n = len / 2;
    let lattice = rng.gen_range(1.0..6.0);
    let kind = rng.gen_range(0..3);
    let mut out = Vec::with_capacity(2 * n);
    for i in 0..n {
        let x = match kind {
            // lattice positions with thermal jitter (CoMD-like)
            0 => (i / 3) as f64 * lattice + rng.gen_range(-0.05..0.05),
            // velocities: small, random sign
            1 => rng.gen_range(-1e-3..1e-3),
            // smooth mesh coordinate (lulesh-like)
            _ => lattice * (1.0 + 0.1 * (i as f64 * 0.01).sin()),
        };
        let b = x.to_bits();
        out.push(b as u32);
        out.push((b >> 32) as u32);
    }
    out
}

fn f16_bits(x: f32) -> u16 {
    // Round-toward-zero fp32 → fp16 (normal range only; enough for stimulus).
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    if exp <= 0 {
        return sign;
    }
    if exp >= 31 {
        return sign | 0x7c00;
    }
    sign | (exp as u16) << 10 | ((b >> 13) & 0x3ff) as u16
}

/// fp16 fields and int16 signals, two per word (element 2k in the low half: address order).
fn half16(rng: &mut ChaCha8Rng, len: usize) -> Vec<u32> {
    let n = len * 2;
    let halves: Vec<u16> = if rng.gen_bool(0.5) {
        let a = rng.gen_range(0.5..50.0f32);
        let f = rng.gen_range(0.002..0.03f32);
        (0..n)
            .map(|i| f16_bits(a + a * 0.2 * (i as f32 * f).sin()))
            .collect()
    } else {
        let a = rng.gen_range(100.0..12000.0f32);
        let f = rng.gen_range(0.005..0.05f32);
        (0..n)
            .map(|i| {
                let s = a * (i as f32 * f).sin() + rng.gen_range(-50.0..50.0);
                s as i16 as u16
            })
            .collect()
    };
    halves
        .chunks_exact(2)
        .map(|c| c[0] as u32 | (c[1] as u32) << 16)
        .collect()
}

/// Monotone CSR offsets, sorted column indices, frontiers and 64-bit pointers.
fn indices(rng: &mut ChaCha8Rng, len: usize) -> Vec<u32> {
    match rng.gen_range(0..4) {
        0 => {
            let mut v = rng.gen_range(0..1u32 << 20);
            let deg = rng.gen_range(1..32u32);
            (0..len)
                .map(|_| {
                    v = v.wrapping_add(rng.gen_range(0..=2 * deg));
                    v
                })
                .collect()
        }
        1 => {
            let nodes = rng.gen_range(1000..1u32 << 22);
            let mut out = Vec::with_capacity(len);
            while out.len() < len {
                let deg = rng.gen_range(1..24usize);
                let mut row: Vec<u32> = (0..deg).map(|_| rng.gen_range(0..nodes)).collect();
                row.sort_unstable();
                out.extend(row);
            }
            out.truncate(len);
            out
        }
        2 => {
            // BFS frontier: mostly -1 (unvisited, 0xffffffff) or small levels.
            let level = rng.gen_range(1..20u32);
            (0..len)
                .map(|_| {
                    if rng.gen_bool(0.6) {
                        u32::MAX
                    } else {
                        level - rng.gen_range(0..level.min(3))
                    }
                })
                .collect()
        }
        _ => {
            // 64-bit pointers into a heap: common upper bits, 16 B aligned.
            let base: u64 = 0x7f00_0000_0000 | (rng.gen_range(0..1u64 << 28) << 12);
            (0..len / 2)
                .flat_map(|i| {
                    let p = base + (i as u64) * rng.gen_range(1..8) * 16;
                    [p as u32, (p >> 32) as u32]
                })
                .collect()
        }
    }
}

/// Graphics-like buffers.
fn pixels(rng: &mut ChaCha8Rng, len: usize) -> Vec<u32> {
    let w = 64usize;
    match rng.gen_range(0..4) {
        0 => {
            // RGBA8 gradient with a flat region and mild noise.
            let (r0, g0, b0) = (rng.gen::<u8>(), rng.gen::<u8>(), rng.gen::<u8>());
            let noise = rng.gen_range(0..8i32);
            (0..len)
                .map(|i| {
                    let (x, y) = ((i % w) as i32, (i / w) as i32);
                    let flat = x < 24;
                    let mut c = |base: u8, d: i32| -> u32 {
                        let n = if noise > 0 {
                            rng.gen_range(-noise..=noise)
                        } else {
                            0
                        };
                        let v = if flat {
                            base as i32
                        } else {
                            base as i32 + d + n
                        };
                        v.clamp(0, 255) as u32
                    };
                    c(r0, x) | c(g0, y) << 8 | c(b0, (x + y) / 2) << 16 | 0xff << 24
                })
                .collect()
        }
        1 => {
            // Noise texture (RGBA8).
            (0..len).map(|_| rng.gen::<u32>() | 0xff00_0000).collect()
        }
        2 => {
            // fp32 depth buffer: near-constant exponent, planes of slowly varying depth.
            let z0 = rng.gen_range(0.2..0.99);
            let dz = rng.gen_range(1e-6..1e-4);
            (0..len)
                .map(|i| f32w(z0 + dz * (i % w) as f64 + dz * 0.5 * (i / w) as f64))
                .collect()
        }
        _ => {
            // 10:10:10:2 normal map of a gently curved surface.
            (0..len)
                .map(|i| {
                    let (x, y) = ((i % w) as f64 / w as f64, (i / w) as f64 / 64.0);
                    let nx = ((0.5 + 0.2 * (x * 6.0).sin()) * 1023.0) as u32;
                    let ny = ((0.5 + 0.2 * (y * 6.0).cos()) * 1023.0) as u32;
                    let nz = 900 + rng.gen_range(0..8);
                    nx | ny << 10 | nz << 20 | 3 << 30
                })
                .collect()
        }
    }
}

/// All-zero, sparse and clustered-zero arrays of similar floats (ZDR's cases).
fn zero_mixed(rng: &mut ChaCha8Rng, len: usize) -> Vec<u32> {
    let base = rng.gen_range(0.01..100.0f64);
    let kind = rng.gen_range(0..3);
    let p = [0.1, 0.3, 0.5, 0.7][rng.gen_range(0..4)];
    let mut r = ChaCha8Rng::seed_from_u64(rng.gen());
    let mut vr = ChaCha8Rng::seed_from_u64(rng.gen());
    let mut val = || f32w(base * (1.0 + vr.gen_range(-0.01..0.01)));
    match kind {
        0 => vec![0; len],
        1 => (0..len)
            .map(|_| if r.gen_bool(p) { 0 } else { val() })
            .collect(),
        _ => {
            let mut out = Vec::with_capacity(len);
            while out.len() < len {
                let run = r.gen_range(1..40);
                let zero = r.gen_bool(0.5);
                for _ in 0..run {
                    out.push(if zero { 0 } else { val() });
                }
            }
            out.truncate(len);
            out
        }
    }
}

/// Arrays of structures with 12 B or 20 B strides and mixed field sizes.
fn aos(rng: &mut ChaCha8Rng, len: usize) -> Vec<u32> {
    let mut bytes: Vec<u8> = Vec::with_capacity(len * 4);
    let twenty = rng.gen_bool(0.5);
    let mut id: u32 = rng.gen_range(0..100_000);
    let mut pos = rng.gen_range(-100.0..100.0f32);
    while bytes.len() < len * 4 {
        id += 1;
        pos += rng.gen_range(-0.01..0.01);
        if twenty {
            // struct { f32 x, y, z; u32 id; u16 flags; u16 type; }
            for v in [pos, pos * 0.5, pos + 1.0] {
                bytes.extend(v.to_le_bytes());
            }
            bytes.extend(id.to_le_bytes());
            bytes.extend((rng.gen_range(0..4u16)).to_le_bytes());
            bytes.extend(7u16.to_le_bytes());
        } else {
            // struct { f32 value; u32 index; u16 a; u8 b; u8 c; }
            bytes.extend(pos.to_le_bytes());
            bytes.extend(id.to_le_bytes());
            bytes.extend(rng.gen_range(0..1000u16).to_le_bytes());
            bytes.push(rng.gen_range(0..3));
            bytes.push(0);
        }
    }
    bytes.truncate(len * 4);
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Constants, e_i = e_{i−1} ^ C chains and bases equal to C.
fn adversarial(rng: &mut ChaCha8Rng, len: usize) -> Vec<u32> {
    const C: u32 = 0x4000_0000;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let mut s = [0u32; SECTOR_WORDS];
        match rng.gen_range(0..4) {
            0 => s = [rng.gen(); SECTOR_WORDS],
            1 => {
                s[0] = rng.gen();
                for i in 1..SECTOR_WORDS {
                    s[i] = s[i - 1] ^ C;
                }
            }
            2 => {
                for (i, w) in s.iter_mut().enumerate() {
                    *w = if i % 2 == 0 { C } else { rng.gen_range(0..4) };
                }
            }
            _ => {
                s[0] = rng.gen();
                for i in 1..SECTOR_WORDS {
                    s[i] = if rng.gen_bool(0.5) { 0 } else { s[0] ^ C };
                }
            }
        }
        out.extend(s);
    }
    out.truncate(len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_deterministic_and_sized() {
        for c in SectorClass::ALL {
            let a = c.generate(100, 7);
            assert_eq!(a.len(), 800, "{}", c.name());
            assert_eq!(a, c.generate(100, 7));
            assert_ne!(a, c.generate(100, 8), "{}", c.name());
            assert_eq!(SectorClass::from_name(c.name()), Ok(c));
        }
        assert!(SectorClass::from_name("nope")
            .unwrap_err()
            .contains("fp32-soa"));
    }

    #[test]
    fn soa_floats_share_upper_bits() {
        // The Fig. 3 shape: adjacent fp32 words agree in their top byte most of the time.
        let v = SectorClass::Fp32Soa.generate(500, 1);
        let same = v.windows(2).filter(|w| w[0] >> 24 == w[1] >> 24).count();
        assert!(same * 3 > v.len() * 2, "{} of {}", same, v.len());
    }
}
