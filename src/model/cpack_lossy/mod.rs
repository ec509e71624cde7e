//! Memory-link C-Pack with lossy FP32 truncation (Sathish, Schulte, Kim, PACT'12; spec
//! docs/FORMATS.md, PACT'12): the block codec, its metadata (MD) entry, and the memory-side
//! models ([`mc`]).
//!
//! A block (128 B by default) is compressed with the original C-Pack code table through the
//! shared C-Pack model ([`crate::model::cpack`]: one implementation, two code tables), after an
//! optional truncation of `t` LSBs of every 32-bit word ([`fp`]):
//!
//! 1. `t = t_table[tcode]`; the words are the block's little-endian u32s (t = 0), their
//!    packed `(32 − t)`-bit fields (Option A, default) or `w >> t` (Option B).
//! 2. C-Pack with a fresh dictionary gives a stream of `L` bits (§2.3–§2.4), written MSB-first
//!    from chunk 0 (stream bit 0 = bit 7 of byte 0) and zero-padded to `N = ceil(L/128)` chunks
//!    of 16 B.
//! 3. The block is stored compressed iff its stream is smaller than the raw block: in bytes
//!    at t = 0 (§2.4: `ceil(L/8) < n·4`, `L ≤ 1016` at 128 B), in bits for t > 0 (§2.6:
//!    `L < n(32 − t)`; `lossy_fallback: bytes` keeps the byte rule) and, with
//!    `raw_if_n_eq_raw`, `N` is below the raw chunk count. Otherwise it is stored raw:
//!    the block's bytes (t = 0), or its packed truncated words as little-endian bytes, in
//!    `ceil(n(32 − t)/128)` chunks (8; 6, 5, 4 for t = 8, 12, 16).
//! 4. The MD entry ([`MdEntry`]) records `c`, `N − 1` and `tcode`: 4 bits `{c, nm1}` for a
//!    lossless build, 8 bits `{c, nm1, tcode, rsv}` for a lossy one (§2.5). A raw entry writes
//!    `nm1 = 0`: its chunk count is implied by `tcode`, so an all-zero MD region reads as
//!    "raw, t = 0".
//!
//! Every choice is recorded in `docs/FORMATS.md`, section "PACT'12 memory-link C-Pack".

pub mod eval;
pub mod fp;
pub mod kernels;
pub mod mc;
pub mod md_eval;
pub mod stats;

use super::bits::BitReader;
use super::cpack::{self, CodeTable, CpackParams, CpackPattern, PushPolicy};
use super::ModelError;
use crate::model::LineParams;
use fp::{LossyFallback, RestoreFill, TruncLayout};
use serde::{Deserialize, Serialize};

/// DRAM transfer granularity: one 16 B chunk (GDDR3 burst, §2.1).
pub const CHUNK_BYTES: usize = 16;
/// Bits in a chunk.
pub const CHUNK_BITS: usize = 8 * CHUNK_BYTES;

/// Parameters of the block codec.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LossyParams {
    /// Block size in bytes: 32, 64 or 128 (default, one coalesced warp access).
    pub block_bytes: usize,
    /// C-Pack code table (the original one by default; §2.2).
    pub codes: CodeTable,
    /// Dictionary push policy (default: after `xxxx`, `mmxx`, `mmmx`; §2.3 step 4).
    pub push: PushPolicy,
    /// Dictionary entries (16; a power of two).
    pub dict_entries: usize,
    /// Store raw whenever the compressed block would need as many chunks as the raw one
    /// (`raw_if_N_eq_8` of §2.4, generalized to truncated blocks; off by default).
    pub raw_if_n_eq_raw: bool,
    /// `t` for each 2-bit `tcode` (§2.5; default `{0, 8, 12, 16}`; `t_table[0]` must be 0).
    pub t_table: [u32; 4],
    /// Layout of truncated words before C-Pack (§2.6; packed by default).
    pub layout: TruncLayout,
    /// Restore fill (§2.6; zeros by default).
    pub fill: RestoreFill,
    /// MD entry width: 4 (lossless builds, `tcode` always 0) or 8 (default; §2.5).
    pub md_bits: u32,
    /// When a truncated block falls back to truncated raw words (§2.6; `bits` by default).
    pub lossy_fallback: LossyFallback,
}

impl Default for LossyParams {
    fn default() -> Self {
        LossyParams {
            block_bytes: 128,
            codes: CodeTable::Original,
            push: PushPolicy::NoFullMatch,
            dict_entries: 16,
            raw_if_n_eq_raw: false,
            t_table: [0, 8, 12, 16],
            layout: TruncLayout::Packed,
            fill: RestoreFill::Zero,
            md_bits: 8,
            lossy_fallback: LossyFallback::Bits,
        }
    }
}

impl LossyParams {
    /// The C-Pack parameters the codec runs with.
    pub fn cpack(&self) -> CpackParams {
        CpackParams {
            codes: self.codes,
            push: self.push,
            line_bytes: self.block_bytes,
            dict_entries: self.dict_entries,
            dict_init_zero: false,
        }
    }

    /// Checks the parameters; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ModelError> {
        self.cpack().validate()?;
        if self.t_table[0] != 0 {
            return Err(ModelError::param(
                "t_table",
                format!("{:?}", self.t_table),
                "t_table[0] = 0 (tcode 0 is the lossless code for INT arrays)",
            ));
        }
        let n = self.words();
        for &t in &self.t_table {
            if t > 23 || !(n * (32 - t.min(32) as usize)).is_multiple_of(32) {
                return Err(ModelError::param(
                    "t_table",
                    format!("{:?}", self.t_table),
                    "each t in 0..=23 with (words x (32 - t)) a multiple of 32",
                ));
            }
        }
        if ![4, 8].contains(&self.md_bits) {
            return Err(ModelError::param("md_bits", self.md_bits, "4 or 8"));
        }
        Ok(())
    }

    /// 32-bit words per block.
    pub fn words(&self) -> usize {
        self.block_bytes / 4
    }

    /// Chunks of a raw block (8 at 128 B).
    pub fn raw_chunks(&self) -> usize {
        self.block_bytes / CHUNK_BYTES
    }

    /// `t` of a `tcode` (its low 2 bits).
    pub fn t_of(&self, tcode: u8) -> u32 {
        self.t_table[(tcode & 3) as usize]
    }

    /// Bits of the (truncated) raw block: `n·(32 − t)`.
    pub fn raw_bits(&self, tcode: u8) -> usize {
        self.words() * (32 - self.t_of(tcode) as usize)
    }

    /// The longest C-Pack stream stored compressed with this `tcode`: `n·32 − 8` bits at
    /// t = 0 (§2.4: fewer bytes than the raw block), `n(32 − t) − 1` for t > 0 (§2.6: fewer
    /// bits than the truncated raw block; `n(32 − t) − 8` with the `bytes` fallback), and with
    /// `raw_if_n_eq_raw` at most one chunk below the raw chunk count.
    pub fn max_compressed_bits(&self, tcode: u8) -> usize {
        let raw = self.raw_bits(tcode);
        let bits_rule = self.t_of(tcode) > 0 && self.lossy_fallback == LossyFallback::Bits;
        let max = if bits_rule { raw - 1 } else { raw - 8 };
        if self.raw_if_n_eq_raw {
            max.min((self.raw_chunks_t(tcode) - 1) * CHUNK_BITS)
        } else {
            max
        }
    }

    /// Chunks of the (truncated) raw block: 8 at t = 0; 6, 5, 4 for t = 8, 12, 16 at 128 B.
    pub fn raw_chunks_t(&self, tcode: u8) -> usize {
        self.raw_bits(tcode).div_ceil(CHUNK_BITS)
    }

    /// Words C-Pack runs on for this `tcode`.
    pub fn cpack_words(&self, tcode: u8) -> usize {
        match (self.t_of(tcode), self.layout) {
            (0, _) | (_, TruncLayout::Shifted) => self.words(),
            (_, TruncLayout::Packed) => self.raw_bits(tcode) / 32,
        }
    }

    /// MD entries per 128 B MD line (256 with 4-bit entries, 128 with 8-bit ones).
    pub fn md_per_line(&self) -> u64 {
        1024 / self.md_bits as u64
    }

    /// One-line description for headers and reports.
    pub fn describe(&self) -> String {
        format!(
            "block_bytes={} codes={} push={} dict_entries={} raw_if_n_eq_raw={} t_table={:?} \
             layout={} fill={} md_bits={} lossy_fallback={}",
            self.block_bytes,
            match self.codes {
                CodeTable::Original => "original",
                CodeTable::Paper => "paper",
            },
            match self.push {
                PushPolicy::NewOnly => "new-only",
                PushPolicy::NoFullMatch => "no-full-match",
                PushPolicy::AllNonZero => "all-non-zero",
            },
            self.dict_entries,
            self.raw_if_n_eq_raw,
            self.t_table,
            match self.layout {
                TruncLayout::Packed => "packed",
                TruncLayout::Shifted => "shifted",
            },
            match self.fill {
                RestoreFill::Zero => "zero",
                RestoreFill::Midpoint => "midpoint",
            },
            self.md_bits,
            match self.lossy_fallback {
                LossyFallback::Bits => "bits",
                LossyFallback::Bytes => "bytes",
            }
        )
    }
}

/// A block's metadata entry (§2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MdEntry {
    /// Stored compressed.
    pub c: bool,
    /// Chunks the block occupies (1..=8; implied by `tcode` when raw).
    pub n: u8,
    /// Truncation code (index into `t_table`).
    pub tcode: u8,
}

impl MdEntry {
    /// The entry's bits: `{c, nm1[2:0]}` (4 bits) or `{c, nm1[2:0], tcode[1:0], 2'b00}` (8
    /// bits); `nm1` is `N − 1` when compressed and 0 when raw.
    pub fn encode(&self, md_bits: u32) -> u64 {
        let nm1 = if self.c {
            (self.n.saturating_sub(1) & 7) as u64
        } else {
            0
        };
        let c = self.c as u64;
        if md_bits == 4 {
            c << 3 | nm1
        } else {
            c << 7 | nm1 << 4 | ((self.tcode & 3) as u64) << 2
        }
    }

    /// Reads an entry (every bit pattern is an entry; reserved bits are ignored). A raw
    /// entry's `n` is the raw chunk count of its `tcode`.
    pub fn decode(p: &LossyParams, bits: u64) -> MdEntry {
        let (c, nm1, tcode) = if p.md_bits == 4 {
            (bits >> 3 & 1 == 1, (bits & 7) as u8, 0)
        } else {
            (
                bits >> 7 & 1 == 1,
                (bits >> 4 & 7) as u8,
                (bits >> 2 & 3) as u8,
            )
        };
        let n = if c {
            nm1 + 1
        } else {
            p.raw_chunks_t(tcode) as u8
        };
        MdEntry { c, n, tcode }
    }
}

/// A compressed block as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Its MD entry.
    pub md: MdEntry,
    /// The `md.n` chunks (`16·n` bytes).
    pub chunks: Vec<u8>,
    /// Length `L` of the C-Pack stream in bits (also when the block is stored raw).
    pub stream_bits: usize,
    /// The C-Pack tokens (pattern statistics).
    pub tokens: Vec<cpack::CpackToken>,
}

fn le_words(block: &[u8]) -> Vec<u32> {
    block
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn le_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The words C-Pack runs on for `block` and `tcode`: the block's words (t = 0), their packed
/// `(32 − t)`-bit fields (Option A) or `w >> t` (Option B). What `fp_trunc_pack` feeds the
/// compressor.
pub fn cpack_input(p: &LossyParams, block: &[u8], tcode: u8) -> Vec<u32> {
    let t = p.t_of(tcode);
    let w = le_words(block);
    match (t, p.layout) {
        (0, _) => w,
        (_, TruncLayout::Packed) => fp::pack(&w, t),
        (_, TruncLayout::Shifted) => w.iter().map(|&x| x >> t).collect(),
    }
}

/// A block whose C-Pack input with code `tcode` is `words`: their `32 − t`-bit fields (packed
/// or shifted, as the layout reads them) in the top bits of the block's words, the dropped
/// bits zero. The inverse of [`cpack_input`] for words that fit the layout.
pub fn block_of_cpack_words(p: &LossyParams, tcode: u8, words: &[u32]) -> Vec<u8> {
    let t = p.t_of(tcode);
    let fields = match p.layout {
        TruncLayout::Packed => fp::unpack(words, t, p.words()),
        TruncLayout::Shifted => words.iter().map(|x| x >> t).collect(),
    };
    fields.iter().flat_map(|f| (f << t).to_le_bytes()).collect()
}

/// `n` structured words for C-Pack stimulus (tests, scoreboards): mostly new words (their
/// share drawn from 0.7..1), the others zero, narrow, or the last new word repeated whole or
/// in its upper 3 or 2 bytes, so that streams run close to the raw size.
pub fn structured_words(n: usize, rng: &mut dyn rand::RngCore) -> Vec<u32> {
    use rand::Rng;
    let p_new = rng.gen_range(0.7..1.0);
    let mut last = 0x8000_0000u32;
    (0..n)
        .map(|_| {
            if rng.gen_bool(p_new) {
                last = rng.gen_range(0x100..=u32::MAX);
                return last;
            }
            match rng.gen_range(0..5) {
                0 => 0,
                1 => rng.gen_range(1..256),
                2 => last ^ rng.gen_range(1..256),
                3 => last ^ rng.gen_range(256..65536),
                _ => last,
            }
        })
        .collect()
}

/// The MD entry of a block whose C-Pack stream has `stream_bits` bits, with code `tcode`
/// (§2.4, §2.6): compressed in `N = max(1, ceil(bits/128))` chunks iff `stream_bits` is at
/// most [`LossyParams::max_compressed_bits`]; else raw in the code's raw chunk count.
pub fn chunk_size(p: &LossyParams, stream_bits: usize, tcode: u8) -> MdEntry {
    let n = stream_bits.div_ceil(CHUNK_BITS).max(1);
    let raw_n = p.raw_chunks_t(tcode);
    let c = stream_bits <= p.max_compressed_bits(tcode);
    MdEntry {
        c,
        n: if c { n as u8 } else { raw_n as u8 },
        tcode,
    }
}

/// Compresses one block with truncation code `tcode`.
pub fn compress(p: &LossyParams, block: &[u8], tcode: u8) -> Result<Block, ModelError> {
    p.validate()?;
    super::bits::check_line_len(block, p.block_bytes)?;
    if tcode > 3 || (p.md_bits == 4 && tcode != 0) {
        return Err(ModelError::param(
            "tcode",
            tcode,
            if p.md_bits == 4 {
                "0 (4-bit MD entries hold no tcode)"
            } else {
                "0..=3"
            },
        ));
    }
    let t = p.t_of(tcode);
    let w = le_words(block);
    let cw = cpack_input(p, block, tcode);
    let cp = p.cpack();
    let tokens = cpack::tokenize(&cp, &cw);
    let (mut bits, stream_bits) = cpack::write_tokens(&cp, &tokens);
    let md = chunk_size(p, stream_bits, tcode);
    let raw_n = p.raw_chunks_t(tcode);
    let (md, chunks) = if md.c {
        bits.resize(md.n as usize * CHUNK_BYTES, 0);
        (md, bits)
    } else {
        let mut raw = if t == 0 {
            block.to_vec()
        } else {
            le_bytes(&fp::pack(&w, t))
        };
        raw.resize(raw_n * CHUNK_BYTES, 0);
        (
            MdEntry {
                c: false,
                n: raw_n as u8,
                tcode,
            },
            raw,
        )
    };
    Ok(Block {
        md,
        chunks,
        stream_bits,
        tokens,
    })
}

/// How strictly [`decompress`] reads the chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// As the hardware: the stream must fit in the `N` chunks and use legal codes and filled
    /// dictionary entries; bits after it are not inspected.
    Hardware,
    /// Also: the stream ends in the last chunk and every pad bit after it is zero (what
    /// [`compress`] writes).
    Strict,
}

/// Decompresses a block from its MD entry and its chunks (at least `md.n` of them; more are
/// ignored, as after an 8-chunk read on an MD miss). Lossy blocks come back restored.
pub fn decompress(
    p: &LossyParams,
    md: MdEntry,
    chunks: &[u8],
    check: Check,
) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    let n = md.n as usize;
    let need = n * CHUNK_BYTES;
    if n == 0 || n > p.raw_chunks() || chunks.len() < need {
        return Err(ModelError::Truncated {
            what: format!("block of {n} chunks"),
            offset: 0,
            needed: need.max(CHUNK_BYTES),
            available: chunks.len(),
        });
    }
    let chunks = &chunks[..need];
    let t = p.t_of(md.tcode);
    let restore = |v: Vec<u32>| -> Vec<u8> {
        le_bytes(
            &v.iter()
                .map(|&x| fp::restore(x, t, p.fill))
                .collect::<Vec<_>>(),
        )
    };
    if !md.c {
        if t == 0 {
            return Ok(chunks.to_vec());
        }
        let packed = le_words(&chunks[..p.raw_bits(md.tcode) / 8]);
        return Ok(restore(fp::unpack(&packed, t, p.words())));
    }
    let cp = p.cpack();
    let mut r = BitReader::new(chunks, n * CHUNK_BITS)?;
    let words = cpack::decode_words(&cp, &mut r, p.cpack_words(md.tcode))?;
    if check == Check::Strict {
        let end = r.pos();
        if end.div_ceil(CHUNK_BITS).max(1) != n {
            return Err(ModelError::Corrupt(format!(
                "stream of {end} bits in {n} chunks"
            )));
        }
        if (end..n * CHUNK_BITS).any(|b| chunks[b / 8] >> (7 - b % 8) & 1 == 1) {
            return Err(ModelError::Corrupt(format!(
                "non-zero pad bits after bit {end}"
            )));
        }
    }
    Ok(match (t, p.layout) {
        (0, _) => le_bytes(&words),
        (_, TruncLayout::Packed) => restore(fp::unpack(&words, t, p.words())),
        (_, TruncLayout::Shifted) => {
            if let Some(k) = words.iter().position(|&x| x >> (32 - t) != 0) {
                return Err(ModelError::Corrupt(format!(
                    "shifted word {k} = {:#x} has more than {} bits",
                    words[k],
                    32 - t
                )));
            }
            restore(words)
        }
    })
}

/// What a round trip must give: the block with every word `trunc_t` (zero fill) or restored
/// with the configured fill.
pub fn expected_roundtrip(p: &LossyParams, block: &[u8], tcode: u8) -> Vec<u8> {
    let t = p.t_of(tcode);
    le_bytes(
        &le_words(block)
            .iter()
            .map(|&w| fp::restore(if t == 0 { w } else { w >> t }, t, p.fill))
            .collect::<Vec<_>>(),
    )
}

/// Pattern of every token (for frequency tables), in stream order.
pub fn patterns(b: &Block) -> impl Iterator<Item = CpackPattern> + '_ {
    b.tokens.iter().map(|t| t.pattern)
}

#[cfg(test)]
mod tests;
