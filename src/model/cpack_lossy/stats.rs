//! Block statistics for the evaluation (docs/FORMATS.md, PACT'12 §5, "Metrics to
//! produce"): L and N histograms, `ratio_bits`, `ratio_chunks`, the effective-bandwidth
//! factor `8/mean(N)`, pattern frequencies and the raw-fallback rate.

use super::{compress, LossyParams};
use crate::model::cpack::CpackPattern;
use crate::model::ModelError;
use serde::Serialize;

/// Width of one bin of the L histogram, in bits.
pub const L_BIN: usize = 64;

/// Statistics over a set of blocks compressed with one `tcode`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BlockStats {
    /// Blocks.
    pub blocks: u64,
    /// Blocks stored raw (or truncated raw).
    pub raw: u64,
    /// Blocks by chunk count (index N, 1..=8).
    pub n_hist: [u64; 9],
    /// Blocks by C-Pack stream length, in bins of [`L_BIN`] bits (the last bin holds
    /// everything from 1088 bits up).
    pub l_hist: Vec<u64>,
    /// Tokens by pattern: zzzz, xxxx, mmmm, mmxx, zzzx, mmmx.
    pub patterns: [u64; 6],
    /// Sum of the stored sizes in bits (L when compressed, the raw size otherwise).
    pub stored_bits: u64,
    /// Sum of the uncompressed sizes in bits.
    pub block_bits: u64,
    /// Sum of N.
    pub chunks: u64,
}

/// The pattern order of [`BlockStats::patterns`].
pub const PATTERNS: [CpackPattern; 6] = CpackPattern::WORD_PATTERNS;

impl BlockStats {
    /// Adds one block compressed with `tcode`.
    pub fn add(&mut self, p: &LossyParams, block: &[u8], tcode: u8) -> Result<(), ModelError> {
        let b = compress(p, block, tcode)?;
        if self.l_hist.is_empty() {
            self.l_hist = vec![0; 1088 / L_BIN + 1];
        }
        self.blocks += 1;
        self.raw += !b.md.c as u64;
        self.n_hist[b.md.n as usize] += 1;
        let bin = (b.stream_bits / L_BIN).min(self.l_hist.len() - 1);
        self.l_hist[bin] += 1;
        for t in &b.tokens {
            if let Some(i) = PATTERNS.iter().position(|&x| x == t.pattern) {
                self.patterns[i] += 1;
            }
        }
        self.stored_bits += if b.md.c {
            b.stream_bits
        } else {
            p.raw_bits(tcode)
        } as u64;
        self.block_bits += 8 * p.block_bytes as u64;
        self.chunks += b.md.n as u64;
        Ok(())
    }

    /// Statistics of `blocks` compressed with `tcode`.
    pub fn of(p: &LossyParams, blocks: &[Vec<u8>], tcode: u8) -> Result<BlockStats, ModelError> {
        let mut s = BlockStats::default();
        for b in blocks {
            s.add(p, b, tcode)?;
        }
        Ok(s)
    }

    /// Stored over uncompressed bits (lower is better; the paper's ratio).
    pub fn ratio_bits(&self) -> f64 {
        ratio(self.stored_bits, self.block_bits)
    }

    /// Chunks moved over the raw chunks (8 per 128 B block).
    pub fn ratio_chunks(&self, p: &LossyParams) -> f64 {
        ratio(self.chunks, self.blocks * p.raw_chunks() as u64)
    }

    /// Effective-bandwidth factor `raw chunks / mean(N)` (`8/mean(N)` at 128 B).
    pub fn bandwidth_factor(&self, p: &LossyParams) -> f64 {
        ratio(self.blocks * p.raw_chunks() as u64, self.chunks)
    }

    /// Fraction of blocks stored raw.
    pub fn raw_rate(&self) -> f64 {
        ratio(self.raw, self.blocks)
    }

    /// Mean chunk count.
    pub fn mean_n(&self) -> f64 {
        ratio(self.chunks, self.blocks)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
