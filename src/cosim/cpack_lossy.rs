//! Scoreboards of the PACT'12 memory-link units (`rtl::cpack_lossy`) against the golden model
//! (`model::cpack_lossy`), on the one-in/one-out stream runner with random gaps and stalls.
//!
//! Stimulus: the §5 block classes (`trace::blocks`) in turn; FP classes take a random
//! truncation code, INT classes code 0 (INT data is never truncated, §2.6).

use super::dut::Dut;
use super::stream::{run_stream, Beat, RunStats, Stream, StreamConfig, Txn};
use crate::hdl::Module;
use crate::model::cpack_lossy as model;
use crate::rtl::cpack_lossy::LossyRtlParams;
use crate::trace::blocks::BlockClass;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Little-endian u32 words of `bytes` (a multiple of 4).
fn le_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Blocks of the §5 classes with their truncation codes: block `i` of class `i mod 8`,
/// generated in batches of 64 per class from `seed`.
pub struct BlockStim {
    rng: ChaCha8Rng,
    seed: u64,
    batch: Vec<(Vec<u8>, u8)>,
    made: u64,
    block_bytes: usize,
}

impl BlockStim {
    /// A stimulus stream for blocks of `block_bytes`.
    pub fn new(block_bytes: usize, seed: u64) -> BlockStim {
        BlockStim {
            rng: ChaCha8Rng::seed_from_u64(seed),
            seed,
            batch: Vec::new(),
            made: 0,
            block_bytes,
        }
    }

    /// The next block and its truncation code.
    pub fn next_block(&mut self) -> (Vec<u8>, u8) {
        if self.batch.is_empty() {
            let round = self.made / 64;
            for c in BlockClass::ALL {
                let blocks = c.generate(8, self.block_bytes, self.seed ^ round << 20);
                for b in blocks {
                    let tc = if c.is_fp() {
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
        self.batch
            .pop()
            .unwrap_or_else(|| (vec![0; self.block_bytes], 0))
    }
}

/// The compressor's transaction for one block: the words C-Pack runs on, `k` per beat, and
/// the model's chunks with the block's metadata on every beat.
pub fn comp_txn(p: &LossyRtlParams, block: &[u8], tcode: u8) -> Result<Txn, String> {
    let c = &p.codec;
    let words = model::cpack_input(c, block, tcode);
    let k = p.words_per_cycle;
    let beats = words.len() / k;
    let inputs = words
        .chunks(k)
        .enumerate()
        .map(|(i, w)| {
            Beat(vec![
                w.to_vec(),
                vec![(i + 1 == beats) as u32],
                vec![tcode as u32],
            ])
        })
        .collect();
    let b = model::compress(c, block, tcode).map_err(|e| e.to_string())?;
    let n = b.md.n as usize;
    let expected = b
        .chunks
        .chunks_exact(model::CHUNK_BYTES)
        .enumerate()
        .map(|(i, ch)| {
            Beat(vec![
                le_words(ch),
                vec![(i + 1 == n) as u32],
                vec![b.md.c as u32],
                vec![n as u32],
                vec![b.stream_bits as u32],
                vec![tcode as u32],
            ])
        })
        .collect();
    Ok(Txn { inputs, expected })
}

/// Runs `blocks` blocks of [`BlockStim`] through the compressor `top` (built from `p`).
pub fn run_comp(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
    blocks: u64,
    cfg: &StreamConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let (sin, sout) = Stream::of_unit(top)?;
    let mut stim = BlockStim::new(p.codec.block_bytes, cfg.seed);
    let mut left = blocks;
    let mut err = None;
    let mut next = || {
        if left == 0 || err.is_some() {
            return None;
        }
        left -= 1;
        let (b, tc) = stim.next_block();
        match comp_txn(p, &b, tc) {
            Ok(t) => Some(t),
            Err(e) => {
                err = Some(e);
                None
            }
        }
    };
    let st = run_stream(dut, &sin, &sout, &mut next, cfg, &mut |_| {}, progress)?;
    match err {
        Some(e) => Err(e),
        None => Ok(st),
    }
}

/// What the decompressor must emit for a block stored as (`c`, `tcode`, `chunks`): a raw
/// block's chunks as they are; a compressed block's C-Pack words, 4 per beat, decoded as the
/// hardware does (`Check::Hardware` over the chunks given), where the beat holding the first
/// faulty token and every later beat carry `err = 1` and zero words; a short last beat has
/// its missing words 0.
pub fn decomp_expected(p: &LossyRtlParams, c: bool, tcode: u8, chunks: &[u8]) -> Vec<Beat> {
    let beat =
        |w: Vec<u32>, last: bool, err: bool| Beat(vec![w, vec![last as u32], vec![err as u32]]);
    let n = chunks.len() / model::CHUNK_BYTES;
    if !c {
        return chunks
            .chunks_exact(model::CHUNK_BYTES)
            .enumerate()
            .map(|(i, ch)| beat(le_words(ch), i + 1 == n, false))
            .collect();
    }
    let cod = &p.codec;
    let cp = cod.cpack();
    let words = cod.cpack_words(tcode);
    let t = cod.t_of(tcode);
    let shifted = cod.layout == crate::model::cpack_lossy::fp::TruncLayout::Shifted && t > 0;
    let nb = crate::rtl::cpack_lossy::decomp_beats(cod, tcode);
    let decode = |upto: usize| -> Option<Vec<u32>> {
        let mut r = crate::model::bits::BitReader::new(chunks, n * model::CHUNK_BITS).ok()?;
        let w = crate::model::cpack::decode_words(&cp, &mut r, upto).ok()?;
        if shifted && w.iter().any(|x| x >> (32 - t) != 0) {
            return None;
        }
        Some(w)
    };
    let mut out = Vec::with_capacity(nb);
    let mut failed = false;
    for b in 0..nb {
        let upto = words.min(4 * (b + 1));
        let got = if failed { None } else { decode(upto) };
        match got {
            Some(w) => {
                let mut v = w[4 * b..upto].to_vec();
                v.resize(4, 0);
                out.push(beat(v, b + 1 == nb, false))
            }
            None => {
                failed = true;
                out.push(beat(vec![0; 4], b + 1 == nb, true));
            }
        }
    }
    out
}

/// The decompressor's transaction for a block stored as (`c`, `tcode`, `chunks`).
pub fn decomp_txn(p: &LossyRtlParams, c: bool, tcode: u8, chunks: &[u8]) -> Txn {
    let n = chunks.len() / model::CHUNK_BYTES;
    let inputs = chunks
        .chunks_exact(model::CHUNK_BYTES)
        .enumerate()
        .map(|(i, ch)| {
            Beat(vec![
                le_words(ch),
                vec![(i + 1 == n) as u32],
                vec![c as u32],
                vec![tcode as u32],
            ])
        })
        .collect();
    Txn {
        inputs,
        expected: decomp_expected(p, c, tcode, chunks),
    }
}

/// Runs `blocks` blocks through the decompressor `top`: the model's compressed blocks of
/// [`BlockStim`], and with probability `corrupt` a compressed block whose chunks are random
/// or have 1-3 bits flipped, or lose or gain a chunk (illegal codes, empty entries, overruns).
pub fn run_decomp(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
    blocks: u64,
    corrupt: f64,
    cfg: &StreamConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let (sin, sout) = Stream::of_unit(top)?;
    let mut stim = BlockStim::new(p.codec.block_bytes, cfg.seed);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xdec0);
    let mut left = blocks;
    let mut err = None;
    let mut next = || {
        if left == 0 || err.is_some() {
            return None;
        }
        left -= 1;
        let (b, tc) = stim.next_block();
        let blk = match model::compress(&p.codec, &b, tc) {
            Ok(x) => x,
            Err(e) => {
                err = Some(e.to_string());
                return None;
            }
        };
        let mut chunks = blk.chunks;
        let mut c = blk.md.c;
        if rng.gen_bool(corrupt) {
            c = true;
            match rng.gen_range(0..4) {
                0 => chunks.iter_mut().for_each(|x| *x = rng.gen()),
                1 => {
                    for _ in 0..rng.gen_range(1..=3) {
                        let bit = rng.gen_range(0..chunks.len() * 8);
                        chunks[bit / 8] ^= 1 << (bit % 8);
                    }
                }
                2 if chunks.len() > model::CHUNK_BYTES => {
                    chunks.truncate(chunks.len() - model::CHUNK_BYTES)
                }
                _ if chunks.len() < 8 * model::CHUNK_BYTES => {
                    chunks.extend((0..model::CHUNK_BYTES).map(|_| rng.gen::<u8>()))
                }
                _ => chunks[0] ^= 0xF0,
            }
        }
        Some(decomp_txn(p, c, tc, &chunks))
    };
    let st = run_stream(dut, &sin, &sout, &mut next, cfg, &mut |_| {}, progress)?;
    match err {
        Some(e) => Err(e),
        None => Ok(st),
    }
}

#[cfg(test)]
#[path = "cpack_lossy_tests.rs"]
mod tests;
