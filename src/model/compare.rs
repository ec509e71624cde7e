//! Side-by-side compression-ratio comparison of ZVC against the baselines (backs
//! `hwzip eval --engine zvc --trace F`).
//!
//! ZVC runs on the elements at `word_bits`. The baselines (RLE-A, RLE-B, zlib, raw DEFLATE)
//! run on the same bytes reinterpreted as little-endian 32-bit words in 4096 B chunks (the byte
//! image is zero-padded to a multiple of 4 bytes for the RLE baselines only).

use super::rle::{self, RleAParams, RleBParams};
use super::zlib;
use super::zvc::{self, ZvcParams};
use serde::Serialize;

/// Size and ratio of one scheme.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchemeResult {
    /// Scheme label, e.g. `"RLE-A(8,8)"`.
    pub name: String,
    /// Compressed size in bytes.
    pub bytes: usize,
    /// `original_bytes / bytes` (infinite if `bytes == 0`, which happens only for empty input).
    pub ratio: f64,
}

/// Result of [`compare`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// ZVC parameters used.
    pub params: ZvcParams,
    /// Number of elements.
    pub n_elems: usize,
    /// Original size in bytes (`n_elems · word_bits / 8`).
    pub original_bytes: usize,
    /// Number of non-zero elements (bitwise test).
    pub nnz: usize,
    /// Fraction of zero elements (0 for empty input).
    pub sparsity: f64,
    /// ZVC result.
    pub zvc: SchemeResult,
    /// RLE-A with ZB = LB = 8.
    pub rle_a_8_8: SchemeResult,
    /// RLE-A with ZB = LB = 16.
    pub rle_a_16_16: SchemeResult,
    /// RLE-B with CB = 8.
    pub rle_b: SchemeResult,
    /// zlib level 6, zlib wrapper, per 4 KB chunk.
    pub zlib: SchemeResult,
    /// Raw DEFLATE level 6 per 4 KB chunk.
    pub deflate: SchemeResult,
}

fn result(name: &str, original: usize, bytes: usize) -> SchemeResult {
    SchemeResult {
        name: name.to_string(),
        bytes,
        ratio: if bytes == 0 {
            f64::INFINITY
        } else {
            original as f64 / bytes as f64
        },
    }
}

/// Compare ZVC with the baselines on `elems` (word-bit-limited element values).
///
/// `p` should be valid (check with [`ZvcParams::validate`] first); invalid parameters are
/// replaced by [`ZvcParams::default`] (recorded in [`Comparison::params`]) rather than panicking.
/// Elements wider than `word_bits` are truncated to `word_bits` in the byte image.
pub fn compare(elems: &[u32], p: &ZvcParams) -> Comparison {
    let p = &if p.validate().is_ok() {
        *p
    } else {
        ZvcParams::default()
    };
    let bytes = zvc::elems_to_le_bytes(p, elems);
    let original = bytes.len();
    let mut padded = bytes.clone();
    padded.resize(original.div_ceil(4) * 4, 0);
    let words: Vec<u32> = padded
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let nnz = elems.iter().filter(|&&x| x != 0).count();
    let zvc_bytes = zvc::size_from_counts(p, elems.len(), nnz);
    // Default baseline parameters are statically valid, so the Results are always Ok.
    let rle_a = |zb, lb| rle::rle_a_size(&RleAParams::new(zb, lb), &words).unwrap_or(0);
    let rle_b = rle::rle_b_size(&RleBParams::default(), &words).unwrap_or(0);
    let zl = zlib::zlib_size(&bytes, zlib::DEFAULT_CHUNK_BYTES, zlib::DEFAULT_LEVEL).unwrap_or(0);
    let df =
        zlib::deflate_size(&bytes, zlib::DEFAULT_CHUNK_BYTES, zlib::DEFAULT_LEVEL).unwrap_or(0);
    Comparison {
        params: *p,
        n_elems: elems.len(),
        original_bytes: original,
        nnz,
        sparsity: if elems.is_empty() {
            0.0
        } else {
            1.0 - nnz as f64 / elems.len() as f64
        },
        zvc: result("ZVC", original, zvc_bytes),
        rle_a_8_8: result("RLE-A(8,8)", original, rle_a(8, 8)),
        rle_a_16_16: result("RLE-A(16,16)", original, rle_a(16, 16)),
        rle_b: result("RLE-B(8)", original, rle_b),
        zlib: result("zlib-6", original, zl),
        deflate: result("deflate-6", original, df),
    }
}

impl Comparison {
    /// All scheme results in table order.
    pub fn rows(&self) -> [&SchemeResult; 6] {
        [
            &self.zvc,
            &self.rle_a_8_8,
            &self.rle_a_16_16,
            &self.rle_b,
            &self.zlib,
            &self.deflate,
        ]
    }

    /// Render as a Markdown table (one row per scheme).
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "{} elements × {} bit = {} B, sparsity {:.1}% (ZVC window {})\n\n",
            self.n_elems,
            self.params.word_bits,
            self.original_bytes,
            100.0 * self.sparsity,
            self.params.window
        );
        s.push_str("| Scheme | Bytes | Ratio |\n|---|---:|---:|\n");
        for r in self.rows() {
            s.push_str(&format!("| {} | {} | {:.3}× |\n", r.name, r.bytes, r.ratio));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zvc_ratio_formula() {
        // 60% i.i.d.-like sparsity: exactly 40% non-zero, r = 32/(1+32·0.4) = 2.3188
        let x: Vec<u32> = (0..10240u32)
            .map(|i| if i % 5 < 3 { 0 } else { 0x3f80_0000 + i })
            .collect();
        let c = compare(&x, &ZvcParams::default());
        assert!((c.zvc.ratio - 32.0 / (1.0 + 32.0 * 0.4)).abs() < 1e-9);
        assert!((c.sparsity - 0.6).abs() < 1e-12);
        let md = c.to_markdown();
        assert!(
            md.contains("| ZVC |") && md.contains("RLE-A(16,16)"),
            "{md}"
        );
        let j = serde_json::to_string(&c).unwrap();
        assert!(j.contains("\"rle_b\""));
    }

    #[test]
    fn all_zero() {
        let c = compare(&vec![0; 1024], &ZvcParams::default());
        assert_eq!(c.zvc.bytes, 128);
        assert_eq!(c.rle_a_8_8.bytes, 10);
        assert_eq!(c.sparsity, 1.0);
        let e = compare(&[], &ZvcParams::default());
        assert_eq!(e.zvc.bytes, 0);
    }
}
