//! Scoreboards of the PACT'12 memory-link units (`rtl::cpack_lossy`) against the golden model
//! (`model::cpack_lossy`), on the one-in/one-out stream runner with random gaps and stalls.
//!
//! Stimulus: the §5 block classes (`trace::blocks`) in turn; FP classes and the edge class
//! (its FP specials) take a random truncation code, INT classes code 0 (INT data is never
//! truncated, §2.6).

pub use super::block_stim::BlockStim;
use super::dut::Dut;
use super::run::{run_counted, Counted, RunConfig};
use super::stream::{Beat, RunStats, Stream, StreamConfig, Timing, Txn};
use crate::hdl::Module;
use crate::model::cpack_lossy as model;
use crate::rtl::cpack_lossy::LossyRtlParams;
pub use crate::rtl::designs::cpack_lossy::{top, Unit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Little-endian u32 words of `bytes` (a multiple of 4).
fn le_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The words C-Pack runs on for a block ([`model::cpack_input`]), `k` per beat, with
/// `last` and the code: the compressor's input and the truncation unit's output.
fn cpack_beats(p: &LossyRtlParams, block: &[u8], tcode: u8) -> Vec<Beat> {
    let words = model::cpack_input(&p.codec, block, tcode);
    let k = p.words_per_cycle;
    let beats = words.len() / k;
    words
        .chunks(k)
        .enumerate()
        .map(|(i, w)| {
            Beat::new()
                .with("data", w.to_vec())
                .num("last", (i + 1 == beats).into())
                .num("tcode", tcode.into())
        })
        .collect()
}

/// The compressor's transaction for one block: the words C-Pack runs on, `k` per beat, and
/// the model's chunks with the block's metadata on every beat.
pub fn comp_txn(p: &LossyRtlParams, block: &[u8], tcode: u8) -> Result<Txn, String> {
    let c = &p.codec;
    let inputs = cpack_beats(p, block, tcode);
    let b = model::compress(c, block, tcode).map_err(|e| e.to_string())?;
    let expected = chunk_beats(&b.chunks, b.md.c, tcode)
        .map(|beat| {
            beat.num("n", b.md.n.into())
                .num("bits", b.stream_bits as u64)
        })
        .collect();
    Ok(Txn { inputs, expected })
}

/// A stored block's chunks, one per beat (`chunk`, `last`), each with the block's `c` and
/// `tcode`.
fn chunk_beats(chunks: &[u8], c: bool, tcode: u8) -> impl Iterator<Item = Beat> + '_ {
    let n = chunks.len() / model::CHUNK_BYTES;
    chunks
        .chunks_exact(model::CHUNK_BYTES)
        .enumerate()
        .map(move |(i, ch)| {
            Beat::new()
                .with("chunk", le_words(ch))
                .num("last", (i + 1 == n).into())
                .num("c", c.into())
                .num("tcode", tcode.into())
        })
}

/// What the decompressor must emit for a block stored as (`c`, `tcode`, `chunks`), every
/// beat with the block's `c` and `tcode`: a raw
/// block's chunks as they are; a compressed block's C-Pack words, 4 per beat, decoded as the
/// hardware does (`Check::Hardware` over the chunks given), where the beat holding the first
/// faulty token and every later beat carry `err = 1` and zero words; a short last beat has
/// its missing words 0.
pub fn decomp_expected(p: &LossyRtlParams, c: bool, tcode: u8, chunks: &[u8]) -> Vec<Beat> {
    let beat = |w: Vec<u32>, last: bool, err: bool| {
        Beat::new()
            .with("words", w)
            .num("last", last.into())
            .num("err", err.into())
            .num("c", c.into())
            .num("tcode", tcode.into())
    };
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
    Txn {
        inputs: chunk_beats(chunks, c, tcode).collect(),
        expected: decomp_expected(p, c, tcode, chunks),
    }
}

/// The truncation unit's transaction for one block: the block's words, `k` per beat, with
/// its code; out the words C-Pack runs on ([`model::cpack_input`]), `k` per beat, with
/// `last` and the code.
pub fn trunc_txn(p: &LossyRtlParams, block: &[u8], tcode: u8) -> Txn {
    let k = p.words_per_cycle;
    let inputs = le_words(block)
        .chunks(k)
        .map(|w| {
            Beat::new()
                .with("data", w.to_vec())
                .num("tcode", tcode.into())
        })
        .collect();
    Txn {
        inputs,
        expected: cpack_beats(p, block, tcode),
    }
}

/// What the restore unit must emit for the decompressor's beats (`words`, `last`, `err`) of a
/// block stored as (`c`, `tcode`): the block's words restored from the fields (packed, or
/// `w >> t` in whole words for a compressed shifted-layout block; missing bits zero), 4 per
/// beat; a beat carries `err` when any of its fields' bits come from the first beat marked
/// `err` or later.
pub fn restore_expected(p: &LossyRtlParams, c: bool, tcode: u8, beats: &[Beat]) -> Vec<Beat> {
    use crate::model::cpack_lossy::fp;
    let cod = &p.codec;
    let nw = cod.words();
    let t = cod.t_of(tcode);
    let shifted = c && t > 0 && cod.layout == fp::TruncLayout::Shifted;
    let fb = if t == 0 || shifted {
        32
    } else {
        32 - t as usize
    };
    let mut words: Vec<u32> = beats
        .iter()
        .flat_map(|b| b.get("words").unwrap_or(&[]).to_vec())
        .collect();
    let vals = if t == 0 || shifted {
        words.resize(nw, 0);
        words
    } else {
        fp::unpack(&words, t, nw)
    };
    let first_err = beats.iter().position(|b| b.u64("err") == 1);
    let nb = nw / 4;
    (0..nb)
        .map(|j| {
            let w: Vec<u32> = vals[4 * j..4 * j + 4]
                .iter()
                .map(|&v| fp::restore(v, t, cod.fill))
                .collect();
            let err = first_err.is_some_and(|e| (j + 1) * 4 * fb > 128 * e);
            Beat::new()
                .with("data", w)
                .num("last", (j + 1 == nb).into())
                .num("err", err.into())
        })
        .collect()
}

/// The restore unit's transaction for a block stored as (`c`, `tcode`, `chunks`): in, the
/// decompressor's beats ([`decomp_expected`], which carry `c` and `tcode`); out,
/// [`restore_expected`].
pub fn restore_txn(p: &LossyRtlParams, c: bool, tcode: u8, chunks: &[u8]) -> Txn {
    let beats = decomp_expected(p, c, tcode, chunks);
    let expected = restore_expected(p, c, tcode, &beats);
    Txn {
        inputs: beats,
        expected,
    }
}

/// Runs up to `blocks` blocks of `stim` through `unit` (`top`, built from `p`; the units
/// that take blocks): the compressor and the truncation unit get the blocks, the
/// decompressor and the restore unit the model's compressed blocks, with probability
/// `corrupt` of a corrupted one ([`block_txn`]).
#[allow(clippy::too_many_arguments)]
pub fn run_blocks(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
    unit: Unit,
    stim: &mut BlockStim,
    blocks: u64,
    corrupt: f64,
    cfg: &StreamConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    if matches!(unit, Unit::MdCache | Unit::McTop) {
        return Err(format!("the {} unit does not take blocks", unit.name()));
    }
    let salt = if unit == Unit::Decompressor {
        0xdec0
    } else {
        0x7e57
    };
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ salt);
    let bb = p.codec.block_bytes;
    run_counted(dut, top, blocks, bb, cfg, progress, &mut || {
        let (b, tc) = stim.next_block()?;
        Some(block_txn(p, unit, &b, tc, corrupt, &mut rng))
    })
}

/// The transaction of `unit` for block `b` with code `tc`, and the bytes stored for it
/// (chunks; the truncation unit: the bytes of its output beats). The decompressor and the
/// restore unit get the block as stored, with probability `corrupt` corrupted (random
/// chunks, flipped bits, a chunk lost or gained, inverted top bits); an uncorrupted block's
/// expected restore output must be the model's round trip ([`model::expected_roundtrip`]),
/// or this is an error.
pub fn block_txn(
    p: &LossyRtlParams,
    unit: Unit,
    b: &[u8],
    tc: u8,
    corrupt: f64,
    rng: &mut ChaCha8Rng,
) -> Counted {
    match unit {
        Unit::Compressor => {
            let t = comp_txn(p, b, tc)?;
            let stored = t.expected.len() * model::CHUNK_BYTES;
            Ok((t, stored))
        }
        Unit::Loopback => {
            // The compressor's input, and what the decompressor gives back for the model's
            // chunks: C-Pack's words again, 4 per beat.
            let inputs = cpack_beats(p, b, tc);
            let cb = model::compress(&p.codec, b, tc).map_err(|e| e.to_string())?;
            let expected = decomp_expected(p, cb.md.c, tc, &cb.chunks);
            Ok((Txn { inputs, expected }, cb.chunks.len()))
        }
        Unit::LossyLoopback => {
            // The truncation unit's input, and what the restore unit gives back for the
            // model's chunks: the block's words, truncated (and filled) as the model stores
            // them.
            let inputs = trunc_txn(p, b, tc).inputs;
            let cb = model::compress(&p.codec, b, tc).map_err(|e| e.to_string())?;
            let beats = decomp_expected(p, cb.md.c, tc, &cb.chunks);
            let expected = restore_expected(p, cb.md.c, tc, &beats);
            Ok((Txn { inputs, expected }, cb.chunks.len()))
        }
        Unit::TruncPack => {
            let t = trunc_txn(p, b, tc);
            let stored = t.expected.len() * 4 * p.words_per_cycle;
            Ok((t, stored))
        }
        Unit::Decompressor => {
            let (c, chunks, _) = stored(p, b, tc, corrupt, rng)?;
            Ok((decomp_txn(p, c, tc, &chunks), chunks.len()))
        }
        Unit::UnpackRestore => {
            let (c, chunks, bad) = stored(p, b, tc, corrupt, rng)?;
            let t = restore_txn(p, c, tc, &chunks);
            if !bad {
                let got: Vec<u32> = t
                    .expected
                    .iter()
                    .flat_map(|b| b.get("data").unwrap_or(&[]).to_vec())
                    .collect();
                if got != le_words(&model::expected_roundtrip(&p.codec, b, tc)) {
                    return Err(format!(
                        "model: restored block (c = {c}, tcode = {tc}) is not the round trip"
                    ));
                }
            }
            Ok((t, chunks.len()))
        }
        Unit::MdCache | Unit::McTop => {
            Err(format!("the {} unit does not take blocks", unit.name()))
        }
    }
}

/// Block `b` as stored with code `tc` (its `c` and chunks) and, with probability `corrupt`,
/// corrupted ([`corrupt_chunks`], taken as compressed): (`c`, chunks, corrupted).
fn stored(
    p: &LossyRtlParams,
    b: &[u8],
    tc: u8,
    corrupt: f64,
    rng: &mut ChaCha8Rng,
) -> Result<(bool, Vec<u8>, bool), String> {
    let blk = model::compress(&p.codec, b, tc).map_err(|e| e.to_string())?;
    let mut chunks = blk.chunks;
    if rng.gen_bool(corrupt) {
        corrupt_chunks(&mut chunks, rng);
        return Ok((true, chunks, true));
    }
    Ok((blk.md.c, chunks, false))
}

/// Random chunks, 1-3 flipped bits, a chunk lost or gained, or the first byte's top bits
/// inverted.
fn corrupt_chunks(chunks: &mut Vec<u8>, rng: &mut ChaCha8Rng) {
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

/// Fraction of corrupt blocks the decompressor gets from the generated classes.
pub const CORRUPT: f64 = 0.1;

super::run::unit_bench!(LossyRtlParams, Unit, RunConfig);

/// Runs `unit` on `dut` for the engine-independent settings of `s`: `lines` blocks of the
/// §5 classes (the decompressor and the restore unit with [`CORRUPT`] of them corrupted), or
/// `lines` MD lookups (reads and updates, the `trace::lookups` patterns) through the MD cache
/// with a reordering memory, its hit, miss and merge counters checked too
/// ([`super::cache::run_unit`]; a trace's data does not apply to it), or the blocks of a trace
/// (`s.data`, lossless, nothing corrupted).
pub fn run_with(
    dut: &mut dyn Dut,
    p: &LossyRtlParams,
    unit: Unit,
    s: &crate::cosim::run::RunConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    p.validate()?;
    let t = top(p, unit)?;
    let cfg = s.harness();
    let (mut stim, corrupt) = match s.data_bytes() {
        Some(bytes) => (BlockStim::fixed(&p.codec, &bytes), 0.0),
        None => (BlockStim::new(&p.codec, s.seed), CORRUPT),
    };
    match unit {
        Unit::MdCache => {
            super::cache::run_unit(dut, &t, &p.md_cache.rtl(p.codec.md_bits), s.lines, &cfg)
        }
        Unit::McTop => run_mc_top(dut, &t, p, s.lines, &cfg),
        _ => run_blocks(
            dut, &t, p, unit, &mut stim, s.lines, corrupt, &cfg, progress,
        ),
    }
}

/// Runs `n` mixed requests through the MC top `top` ([`super::cpack_lossy_mc::run`]): the
/// responses, the chunks and MD lines moved, the MD cache's counters and the final memory
/// contents must equal the model's.
pub fn run_mc_top(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
    n: u64,
    cfg: &StreamConfig,
) -> Result<RunStats, String> {
    let r = super::cpack_lossy_mc::run(dut, top, p, n, cfg)?.checked()?;
    let mut st = r.stats;
    st.lines = n;
    // Ratio: the blocks requested against the chunks moved on the DRAM bus.
    st.raw_bytes = r.requests.iter().sum::<u64>() * p.codec.block_bytes as u64;
    let m = r.rtl;
    st.comp_bytes = (m.chunks_read + m.chunks_written + m.local_chunks) * 16;
    Ok(st)
}

/// A block of narrow words `5i` (12-bit tokens: the first four fit in one chunk).
pub fn narrow_block(block_bytes: usize) -> Vec<u8> {
    (0..block_bytes as u32 / 4)
        .flat_map(|i| (i * 5).to_le_bytes())
        .collect()
}

/// Latency of an isolated block of narrow words ([`narrow_block`]) and the rate over 2,000
/// generated blocks without stalls (the decompressor's uncorrupted).
pub fn measure(dut: &mut dyn Dut, p: &LossyRtlParams, unit: Unit) -> Result<Timing, String> {
    p.validate()?;
    let t = top(p, unit)?;
    let (sin, sout) = match unit {
        Unit::MdCache => {
            let cp = p.md_cache.rtl(p.codec.md_bits);
            return super::cache::timing(dut, &t, &cp, p.codec.block_bytes);
        }
        Unit::McTop => return super::cpack_lossy_mc::measure(dut, &t, p),
        _ => Stream::of_unit(&t)?,
    };
    let block = narrow_block(p.codec.block_bytes);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (txn, _) = block_txn(p, unit, &block, 0, 0.0, &mut rng)?;
    let cfg = RunConfig::quiet(2000).harness();
    let mut stim = BlockStim::new(&p.codec, 7);
    super::run::measure(dut, &sin, &sout, &txn, |dut| {
        run_blocks(dut, &t, p, unit, &mut stim, 2000, 0.0, &cfg, &mut |_| {})
    })
}

#[cfg(test)]
#[path = "cpack_lossy_tests.rs"]
mod tests;
