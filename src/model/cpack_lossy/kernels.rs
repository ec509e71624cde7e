//! Lossy-mode accuracy on small kernels (docs/FORMATS.md, PACT'12 §5 item 9): each kernel's
//! FP32 inputs go through the block codec with truncation code `tcode` (compress, then
//! decompress, 128 B at a time, as DRAM would return them), the kernel runs in double precision
//! on the original and on the returned inputs, and the outputs are compared (NRMSE, both
//! normalizations; the paper reports a geometric mean of 1e-5 to 1e-3 for 8–16 LSBs). Every
//! returned input element is also checked against the bound `rel_err < 2^(t−23)`.

use super::fp::{self, ErrorStats};
use super::{compress, decompress, Check, LossyParams};
use crate::model::ModelError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// A kernel of §5 item 9.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Kernel {
    /// Sparse matrix × vector (CSR, 512 × 512, 8 non-zeros per row).
    Spmv,
    /// Eight explicit HotSpot steps on a 64 × 64 temperature grid with a power map.
    Hotspot,
    /// A dense layer (256 → 128) followed by a sigmoid.
    DenseSigmoid,
    /// A 1024-point complex FFT (radix 2) of a noisy two-tone signal.
    Fft,
}

impl Kernel {
    /// Every kernel.
    pub const ALL: [Kernel; 4] = [
        Kernel::Spmv,
        Kernel::Hotspot,
        Kernel::DenseSigmoid,
        Kernel::Fft,
    ];

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Spmv => "spmv",
            Kernel::Hotspot => "hotspot",
            Kernel::DenseSigmoid => "dense+sigmoid",
            Kernel::Fft => "fft",
        }
    }
}

/// The inputs of a kernel: FP32 arrays (truncated) and INT arrays (never truncated).
struct Inputs {
    fp: Vec<Vec<f32>>,
    int: Vec<Vec<u32>>,
}

fn inputs(k: Kernel, seed: u64) -> Inputs {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    match k {
        Kernel::Spmv => {
            let n = 512;
            let mut cols = Vec::new();
            let mut vals = Vec::new();
            for _ in 0..n {
                for _ in 0..8 {
                    cols.push(rng.gen_range(0..n as u32));
                    vals.push(rng.gen_range(-1.0f32..1.0));
                }
            }
            let x: Vec<f32> = (0..n).map(|_| rng.gen_range(0.0f32..10.0)).collect();
            Inputs {
                fp: vec![vals, x],
                int: vec![cols],
            }
        }
        Kernel::Hotspot => {
            let s = 64 * 64;
            let temp: Vec<f32> = (0..s).map(|_| rng.gen_range(320.0f32..340.0)).collect();
            let power: Vec<f32> = (0..s).map(|_| rng.gen_range(0.0f32..0.01)).collect();
            Inputs {
                fp: vec![temp, power],
                int: vec![],
            }
        }
        Kernel::DenseSigmoid => {
            let w: Vec<f32> = (0..256 * 128)
                .map(|_| rng.gen_range(-0.1f32..0.1))
                .collect();
            let x: Vec<f32> = (0..256).map(|_| rng.gen::<f32>()).collect();
            let b: Vec<f32> = (0..128).map(|_| rng.gen_range(-0.5f32..0.5)).collect();
            Inputs {
                fp: vec![w, x, b],
                int: vec![],
            }
        }
        Kernel::Fft => {
            let n = 1024;
            let re: Vec<f32> = (0..n)
                .map(|i| {
                    let t = i as f32 / n as f32;
                    (2.0 * std::f32::consts::PI * 50.0 * t).sin()
                        + 0.5 * (2.0 * std::f32::consts::PI * 120.0 * t).cos()
                        + rng.gen_range(-0.1f32..0.1)
                })
                .collect();
            let im = vec![0.0f32; n];
            Inputs {
                fp: vec![re, im],
                int: vec![],
            }
        }
    }
}

fn run(k: Kernel, inp: &Inputs) -> Vec<f64> {
    let f = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    match k {
        Kernel::Spmv => {
            let (vals, x, cols) = (f(&inp.fp[0]), f(&inp.fp[1]), &inp.int[0]);
            (0..x.len())
                .map(|r| {
                    (r * 8..r * 8 + 8)
                        .map(|j| vals[j] * x[cols[j] as usize])
                        .sum()
                })
                .collect()
        }
        Kernel::Hotspot => {
            let (mut t, p) = (f(&inp.fp[0]), f(&inp.fp[1]));
            let s = 64;
            for _ in 0..8 {
                let prev = t.clone();
                for y in 0..s {
                    for x in 0..s {
                        let c = prev[y * s + x];
                        let at = |yy: usize, xx: usize| prev[yy * s + xx];
                        let n = if y > 0 { at(y - 1, x) } else { c };
                        let so = if y + 1 < s { at(y + 1, x) } else { c };
                        let w = if x > 0 { at(y, x - 1) } else { c };
                        let e = if x + 1 < s { at(y, x + 1) } else { c };
                        t[y * s + x] = c
                            + 0.1 * (n + so + w + e - 4.0 * c)
                            + p[y * s + x]
                            + 0.001 * (300.0 - c);
                    }
                }
            }
            t
        }
        Kernel::DenseSigmoid => {
            let (w, x, b) = (f(&inp.fp[0]), f(&inp.fp[1]), f(&inp.fp[2]));
            (0..128)
                .map(|o| {
                    let z: f64 = b[o] + (0..256).map(|i| w[o * 256 + i] * x[i]).sum::<f64>();
                    1.0 / (1.0 + (-z).exp())
                })
                .collect()
        }
        Kernel::Fft => {
            let (mut re, mut im) = (f(&inp.fp[0]), f(&inp.fp[1]));
            fft(&mut re, &mut im);
            re.iter()
                .zip(&im)
                .map(|(a, b)| (a * a + b * b).sqrt())
                .collect()
        }
    }
}

/// In-place iterative radix-2 FFT (length a power of two).
fn fft(re: &mut [f64], im: &mut [f64]) {
    let n = re.len();
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let ang = -2.0 * std::f64::consts::PI / len as f64;
        for start in (0..n).step_by(len) {
            for k in 0..len / 2 {
                let (c, s) = ((ang * k as f64).cos(), (ang * k as f64).sin());
                let (a, b) = (start + k, start + k + len / 2);
                let tr = re[b] * c - im[b] * s;
                let ti = re[b] * s + im[b] * c;
                re[b] = re[a] - tr;
                im[b] = im[a] - ti;
                re[a] += tr;
                im[a] += ti;
            }
        }
        len <<= 1;
    }
}

/// `data` through the codec with `tcode`, 128 B blocks (the tail zero-padded), each element
/// checked against the bound; the returned values.
fn through_codec(p: &LossyParams, data: &[f32], tcode: u8) -> Result<(Vec<f32>, f64), String> {
    let t = p.t_of(tcode);
    let per = p.block_bytes / 4;
    let mut out = Vec::with_capacity(data.len());
    let mut max_rel = 0f64;
    for chunk in data.chunks(per) {
        let mut blk: Vec<u8> = chunk
            .iter()
            .flat_map(|x| x.to_bits().to_le_bytes())
            .collect();
        blk.resize(p.block_bytes, 0);
        let b = compress(p, &blk, tcode).map_err(|e: ModelError| e.to_string())?;
        let back = decompress(p, b.md, &b.chunks, Check::Strict).map_err(|e| e.to_string())?;
        for (i, &x) in chunk.iter().enumerate() {
            let y = u32::from_le_bytes([
                back[4 * i],
                back[4 * i + 1],
                back[4 * i + 2],
                back[4 * i + 3],
            ]);
            fp::check_bound(x.to_bits(), y, t)?;
            let (xf, yf) = (x as f64, f32::from_bits(y) as f64);
            if xf.abs() >= f32::MIN_POSITIVE as f64 {
                max_rel = max_rel.max((xf - yf).abs() / xf.abs());
            }
            out.push(f32::from_bits(y));
        }
    }
    Ok((out, max_rel))
}

/// What one kernel gave at one truncation.
#[derive(Clone, Debug, Serialize)]
pub struct KernelResult {
    /// Kernel name.
    pub kernel: &'static str,
    /// Truncated LSBs.
    pub t: u32,
    /// FP32 input elements (all within the bound).
    pub inputs: usize,
    /// Largest relative error of an input element.
    pub input_max_rel: f64,
    /// The outputs against the exact-input run.
    pub output: ErrorStats,
}

/// Runs `k` with its FP32 inputs truncated by `tcode` through the codec.
pub fn accuracy(p: &LossyParams, k: Kernel, tcode: u8, seed: u64) -> Result<KernelResult, String> {
    let exact = inputs(k, seed);
    let mut lossy = Inputs {
        fp: Vec::new(),
        int: exact.int.clone(),
    };
    let mut max_rel = 0f64;
    let mut n = 0;
    for a in &exact.fp {
        let (v, r) = through_codec(p, a, tcode)?;
        max_rel = max_rel.max(r);
        n += a.len();
        lossy.fp.push(v);
    }
    let (y, yh) = (run(k, &exact), run(k, &lossy));
    Ok(KernelResult {
        kernel: k.name(),
        t: p.t_of(tcode),
        inputs: n,
        input_max_rel: max_rel,
        output: fp::error_stats(&y, &yh),
    })
}
