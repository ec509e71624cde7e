//! Lossy FP32 LSB truncation (PACT'12, docs/FORMATS.md, PACT'12 §2.6): truncation, the two
//! layouts C-Pack runs on, restore, the per-element error bound and the accuracy metrics.
//!
//! * `trunc_t(w) = (w >> t) << t`: keep the upper `32 − t` bits (round toward zero in
//!   magnitude, IEEE-754 being sign-magnitude); restore fills the low bits with zeros, or with
//!   the mid-point `1 << (t − 1)` as an off-by-default option (never for an exponent of all
//!   ones, so ±Inf stays ±Inf).
//! * **Packed** (Option A, default): the `(32 − t)`-bit fields of the words, MSB-first, cut
//!   into `n·(32 − t)/32` whole 32-bit words (24 for t = 8 at 128 B).
//! * **Shifted** (Option B): the `n` words `w >> t`.

use serde::{Deserialize, Serialize};

/// How the truncated words are laid out before C-Pack (§2.6, "Layout before C-Pack").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TruncLayout {
    /// Option A: the `(32 − t)`-bit fields concatenated into `n(32 − t)/32` words (default).
    #[default]
    Packed,
    /// Option B: each word shifted right by `t` (byte alignment of values kept).
    Shifted,
}

/// When a truncated block (t > 0) is stored as truncated raw words (§2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LossyFallback {
    /// Raw when the C-Pack stream is not smaller than the truncated raw block in bits:
    /// compressed iff `L < n(32 − t)` (default; the paper's rule).
    #[default]
    Bits,
    /// The lossless byte rule carried over: compressed iff `ceil(L/8) < n(32 − t)/8`, i.e.
    /// `L ≤ n(32 − t) − 8` (raw for the last 7 stream lengths below the raw size).
    Bytes,
}

/// How restore fills the `t` dropped bits (§2.6, "Truncation and restore").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RestoreFill {
    /// Zeros (default; RAY's zero LSBs come back exactly).
    #[default]
    Zero,
    /// The mid-point `1 << (t − 1)`, except for words whose exponent is all ones.
    Midpoint,
}

/// `trunc_t(w)`: the low `t` bits cleared (what a zero-fill round trip returns).
pub fn trunc(w: u32, t: u32) -> u32 {
    if t == 0 {
        w
    } else if t >= 32 {
        0
    } else {
        (w >> t) << t
    }
}

/// Restores a truncated field `v = w >> t` with the given fill.
pub fn restore(v: u32, t: u32, fill: RestoreFill) -> u32 {
    if t == 0 {
        return v;
    }
    let w = v << t;
    match fill {
        RestoreFill::Zero => w,
        RestoreFill::Midpoint if (w >> 23) & 0xFF == 0xFF => w,
        RestoreFill::Midpoint => w | 1 << (t - 1),
    }
}

/// Option A: the `(32 − t)`-bit fields of `words`, MSB-first, as whole 32-bit words (the
/// caller keeps `words.len()·(32 − t)` a multiple of 32; a partial last word is zero-padded).
pub fn pack(words: &[u32], t: u32) -> Vec<u32> {
    let fb = 32 - t.min(31);
    let total = words.len() * fb as usize;
    let mut out = vec![0u32; total.div_ceil(32)];
    let mut pos = 0usize;
    for &w in words {
        let v = (w as u64) >> (32 - fb);
        // Field bits, MSB first, placed at stream positions pos..pos+fb.
        for i in 0..fb as usize {
            let bit = (v >> (fb as usize - 1 - i)) & 1;
            let p = pos + i;
            out[p / 32] |= (bit as u32) << (31 - p % 32);
        }
        pos += fb as usize;
    }
    out
}

/// The inverse of [`pack`]: `n` fields `w >> t` read from the packed words (missing bits
/// read as zero).
pub fn unpack(packed: &[u32], t: u32, n: usize) -> Vec<u32> {
    let fb = 32 - t.min(31) as usize;
    (0..n)
        .map(|k| {
            (0..fb).fold(0u32, |acc, i| {
                let p = k * fb + i;
                let bit = packed.get(p / 32).map_or(0, |w| (w >> (31 - p % 32)) & 1);
                (acc << 1) | bit
            })
        })
        .collect()
}

/// Checks one element against §2.6's bounds: sign and exponent unchanged; ±Inf kept; a NaN
/// stays NaN when its payload survives the truncation, else becomes the Inf of its sign;
/// normal values `|x − x̂|/|x| < 2^(t−23)`; zeros and denormals `|x − x̂| < 2^(t−149)`.
/// `t ≤ 23`. The message names the values.
pub fn check_bound(x: u32, xhat: u32, t: u32) -> Result<(), String> {
    if t == 0 {
        return if x == xhat {
            Ok(())
        } else {
            Err(format!("t = 0 but {x:#010x} came back as {xhat:#010x}"))
        };
    }
    if x >> 23 != xhat >> 23 {
        return Err(format!(
            "sign or exponent changed: {x:#010x} -> {xhat:#010x} (t = {t})"
        ));
    }
    let (fx, fh) = (f32::from_bits(x), f32::from_bits(xhat));
    let exp = (x >> 23) & 0xFF;
    if exp == 0xFF {
        let kept = (x & 0x7F_FFFF) >> t;
        let ok = if x & 0x7F_FFFF == 0 {
            xhat == x
        } else if kept != 0 {
            fh.is_nan()
        } else {
            fh.is_infinite()
        };
        return if ok {
            Ok(())
        } else {
            Err(format!(
                "special value {x:#010x} restored as {xhat:#010x} (t = {t})"
            ))
        };
    }
    let err = (fx as f64 - fh as f64).abs();
    if exp == 0 {
        let bound = 2f64.powi(t as i32 - 149);
        if err >= bound {
            return Err(format!(
                "denormal {x:#010x} -> {xhat:#010x}: |error| {err:e} >= 2^({t}-149)"
            ));
        }
        return Ok(());
    }
    let rel = err / (fx as f64).abs();
    let bound = 2f64.powi(t as i32 - 23);
    if rel >= bound {
        return Err(format!(
            "{x:#010x} -> {xhat:#010x}: relative error {rel:e} >= 2^({t}-23) = {bound:e}"
        ));
    }
    Ok(())
}

/// Accuracy of an approximation (§2.6, "Accuracy metric"), in double precision over the
/// finite elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ErrorStats {
    /// Elements compared (finite in the original).
    pub n: usize,
    /// Root of the mean squared error.
    pub rmse: f64,
    /// RMSE / (max − min) of the original (0 when the range is 0).
    pub nrmse_range: f64,
    /// RMSE / mean |x| of the original (0 when that is 0).
    pub nrmse_mean: f64,
    /// Largest `|x − x̂| / |x|` over non-zero normal elements.
    pub max_rel: f64,
}

/// [`ErrorStats`] of `approx` against `orig` (same length; non-finite originals skipped).
pub fn error_stats(orig: &[f64], approx: &[f64]) -> ErrorStats {
    let mut s = ErrorStats::default();
    let (mut lo, mut hi, mut sq, mut abs) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0);
    for (&x, &y) in orig.iter().zip(approx) {
        if !x.is_finite() {
            continue;
        }
        s.n += 1;
        lo = lo.min(x);
        hi = hi.max(x);
        sq += (x - y) * (x - y);
        abs += x.abs();
        if x != 0.0 && x.abs() >= f32::MIN_POSITIVE as f64 {
            s.max_rel = s.max_rel.max((x - y).abs() / x.abs());
        }
    }
    if s.n == 0 {
        return s;
    }
    s.rmse = (sq / s.n as f64).sqrt();
    if hi > lo {
        s.nrmse_range = s.rmse / (hi - lo);
    }
    let mean = abs / s.n as f64;
    if mean > 0.0 {
        s.nrmse_mean = s.rmse / mean;
    }
    s
}
