//! `hwzip eval --engine cpack-lossy` (docs/FORMATS.md, PACT'12 §5, "Metrics to produce"):
//! for one set of blocks, lossless C-Pack beside lossy `t` = 8/12/16 in both layouts, with the
//! block statistics of [`super::stats`] and, for the lossy rows, the accuracy of the restored
//! FP32 values (every block round-trips through the decoder and must equal `trunc_t`).

use super::fp::{error_stats, ErrorStats, TruncLayout};
use super::stats::BlockStats;
use super::{compress, decompress, expected_roundtrip, Check, LossyParams};
use crate::model::ModelError;
use serde::Serialize;
use std::fmt::Write as _;

/// One configuration's results on a set of blocks.
#[derive(Clone, Debug, Serialize)]
pub struct EvalRow {
    /// `lossless`, `t=8 packed`, …
    pub config: String,
    /// Truncated mantissa bits.
    pub t: u32,
    /// Layout of the truncated words (lossy rows).
    pub layout: Option<TruncLayout>,
    /// Block statistics.
    pub stats: BlockStats,
    /// Stored / uncompressed bits.
    pub ratio_bits: f64,
    /// Chunks moved / raw chunks.
    pub ratio_chunks: f64,
    /// Raw chunks / mean N (`8/mean(N)` at 128 B).
    pub bandwidth_factor: f64,
    /// Accuracy of the restored values against the originals (lossy rows).
    pub error: Option<ErrorStats>,
}

/// Every configuration on one set of blocks.
#[derive(Clone, Debug, Serialize)]
pub struct ClassEval {
    /// Class or trace name.
    pub name: String,
    /// Whether the lossy rows apply (FP32 data).
    pub fp: bool,
    /// Lossless first, then `t` ascending, packed before shifted.
    pub rows: Vec<EvalRow>,
}

/// Evaluates `blocks` (each `p.block_bytes`) lossless and, when `fp`, with every non-zero
/// `t` of `p.t_table` in both layouts. An error if a block does not round-trip.
pub fn evaluate(
    p: &LossyParams,
    name: &str,
    blocks: &[Vec<u8>],
    fp: bool,
) -> Result<ClassEval, ModelError> {
    p.validate()?;
    let mut rows = vec![row(p, blocks, 0)?];
    if fp && p.md_bits == 8 {
        for tc in 1..4u8 {
            if p.t_of(tc) == 0 {
                continue;
            }
            for layout in [TruncLayout::Packed, TruncLayout::Shifted] {
                let q = LossyParams {
                    layout,
                    ..p.clone()
                };
                rows.push(row(&q, blocks, tc)?);
            }
        }
    }
    Ok(ClassEval {
        name: name.to_string(),
        fp,
        rows,
    })
}

fn row(p: &LossyParams, blocks: &[Vec<u8>], tcode: u8) -> Result<EvalRow, ModelError> {
    let t = p.t_of(tcode);
    let mut stats = BlockStats::default();
    let (mut orig, mut approx) = (Vec::new(), Vec::new());
    for b in blocks {
        stats.add(p, b, tcode)?;
        let c = compress(p, b, tcode)?;
        let back = decompress(p, c.md, &c.chunks, Check::Strict)?;
        if back != expected_roundtrip(p, b, tcode) {
            return Err(ModelError::Corrupt(format!(
                "block {} of t = {t} does not round-trip",
                stats.blocks - 1
            )));
        }
        if t > 0 {
            let f = |v: &[u8]| -> Vec<f64> {
                v.chunks_exact(4)
                    .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]]) as f64)
                    .collect()
            };
            orig.extend(f(b));
            approx.extend(f(&back));
        }
    }
    Ok(EvalRow {
        config: if t == 0 {
            "lossless".into()
        } else {
            format!("t={t} {}", layout_name(p.layout))
        },
        t,
        layout: (t > 0).then_some(p.layout),
        ratio_bits: stats.ratio_bits(),
        ratio_chunks: stats.ratio_chunks(p),
        bandwidth_factor: stats.bandwidth_factor(p),
        error: (t > 0).then(|| error_stats(&orig, &approx)),
        stats,
    })
}

fn layout_name(l: TruncLayout) -> &'static str {
    match l {
        TruncLayout::Packed => "packed",
        TruncLayout::Shifted => "shifted",
    }
}

impl ClassEval {
    /// A Markdown table: one row per configuration.
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "### {} ({} blocks{})\n\n",
            self.name,
            self.rows.first().map_or(0, |r| r.stats.blocks),
            if self.fp { ", FP32" } else { "" }
        );
        s += "| config | ratio (bits) | ratio (chunks) | raw chunks / mean N | raw % \
              | zzzz/xxxx/mmmm/mmxx/zzzx/mmmx % | max rel err | NRMSE (range) \
              | NRMSE (mean) |\n";
        s += "|---|---:|---:|---:|---:|---|---:|---:|---:|\n";
        for r in &self.rows {
            let tot: u64 = r.stats.patterns.iter().sum::<u64>().max(1);
            let pats: Vec<String> = r
                .stats
                .patterns
                .iter()
                .map(|&x| format!("{:.0}", 100.0 * x as f64 / tot as f64))
                .collect();
            let (mx, nr, nm) = match &r.error {
                Some(e) => (
                    format!("{:.2e}", e.max_rel),
                    format!("{:.2e}", e.nrmse_range),
                    format!("{:.2e}", e.nrmse_mean),
                ),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(
                s,
                "| {} | {:.3} | {:.3} | {:.2} | {:.1} | {} | {} | {} | {} |",
                r.config,
                r.ratio_bits,
                r.ratio_chunks,
                r.bandwidth_factor,
                100.0 * r.stats.raw_rate(),
                pats.join("/"),
                mx,
                nr,
                nm
            );
        }
        s
    }
}
