//! Block stimulus of the PACT'12 scoreboards (`cosim::cpack_lossy`,
//! `cosim::cpack_lossy_mc`): the §5 block classes in turn, FP classes and the edge class
//! (its FP specials) with a random truncation code when MD entries have 8 bits, or the blocks
//! of fixed data.

use crate::model::cpack_lossy as model;
use crate::trace::blocks::BlockClass;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Blocks of the §5 classes with their truncation codes: block `i` of class `i mod 8`,
/// generated in batches of 64 per class from `seed` (FP and edge classes with a random
/// `tcode` when the codec has 8-bit MD entries, else 0); or the blocks of fixed data (a
/// trace, lossless, the last block zero-padded), once.
pub struct BlockStim {
    rng: ChaCha8Rng,
    seed: u64,
    batch: Vec<(Vec<u8>, u8)>,
    made: u64,
    block_bytes: usize,
    lossy: bool,
    fixed: Option<Vec<u8>>,
}

impl BlockStim {
    /// A stimulus stream for the blocks of codec `p`.
    pub fn new(p: &model::LossyParams, seed: u64) -> BlockStim {
        BlockStim {
            rng: ChaCha8Rng::seed_from_u64(seed),
            seed,
            batch: Vec::new(),
            made: 0,
            block_bytes: p.block_bytes,
            lossy: p.md_bits == 8,
            fixed: None,
        }
    }

    /// The blocks of `data`, in order, with `tcode` 0.
    pub fn fixed(p: &model::LossyParams, data: &[u8]) -> BlockStim {
        let mut s = BlockStim::new(p, 0);
        s.fixed = Some(data.to_vec());
        s
    }

    /// The next block and its truncation code (`None` after the end of fixed data).
    pub fn next_block(&mut self) -> Option<(Vec<u8>, u8)> {
        if let Some(d) = &self.fixed {
            let at = self.made as usize * self.block_bytes;
            if at >= d.len() {
                return None;
            }
            let mut b = d[at..d.len().min(at + self.block_bytes)].to_vec();
            b.resize(self.block_bytes, 0);
            self.made += 1;
            return Some((b, 0));
        }
        if self.batch.is_empty() {
            let round = self.made / 64;
            for c in BlockClass::ALL {
                let blocks = c.generate(8, self.block_bytes, self.seed ^ round << 20);
                for b in blocks {
                    // Edge blocks hold the FP specials (±Inf, NaN, denormals): truncated too.
                    let tc = if (c.is_fp() || c == BlockClass::Edge) && self.lossy {
                        self.rng.gen_range(0..4)
                    } else {
                        0
                    };
                    self.batch.push((b, tc));
                }
            }
            self.batch.reverse();
        }
        self.made += 1;
        Some(
            self.batch
                .pop()
                .unwrap_or_else(|| (vec![0; self.block_bytes], 0)),
        )
    }
}
