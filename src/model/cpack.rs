//! C-Pack golden model, bit-exact: C-Pack+Z with the code table of Tavana et al., IPDPS'19
//! (Table II), and the original C-Pack code table of Chen et al., TVLSI'10 (spec
//! docs/FORMATS.md, adaptive §2.0, §2.3; docs/FORMATS.md, PACT'12 §2.2–§2.3).
//!
//! The line (64 B by default; 32 and 128 B allowed) is split into little-endian 32-bit words.
//! The dictionary (16 × 32 bits by default) starts empty (all entries invalid) for every line
//! and is rebuilt identically by the decompressor. Each word, in order:
//!
//! 1. `w == 0` → zero word (`zzzz`);
//! 2. else `w[31:8] == 0` → narrow word (`zzzx`, payload `w[7:0]`);
//! 3. else the best match among the valid entries: full (`mmmm`, index), upper 24 bits
//!    (`mmmx`, index + `w[7:0]`), upper 16 bits (`mmxx`, index + `w[15:0]`); ties → lowest slot;
//! 4. else a new word (`xxxx`, payload `w`).
//!
//! Then the word is pushed into the dictionary according to [`PushPolicy`] (FIFO: slot =
//! number of pushes mod entries; the emitted index is the slot). With the paper's codes
//! ([`CodeTable::Paper`], C-Pack+Z), an all-zero line is the single 2-bit token `00` (zero
//! block); `00` is illegal anywhere else. Tokens are `code | index | payload`, all MSB-first.
//!
//! | Pattern (Table II #) | Paper code (bits) | Original code (bits) |
//! |---|---|---|
//! | 1 zero block | `00` (2) | – |
//! | 2 zero word `zzzz` | `01` (2) | `00` (2) |
//! | 3 new word `xxxx` | `10` + 32 (34) | `01` + 32 (34) |
//! | 4 full match `mmmm` | `1100` + 4 (8) | `10` + 4 (6) |
//! | 5 halfword match `mmxx` | `1101` + 4 + 16 (24) | `1100` + 4 + 16 (24) |
//! | 6 narrow `zzzx` | `1110` + 8 (12) | `1101` + 8 (12) |
//! | 7 three bytes `mmmx` | `1111` + 4 + 8 (16) | `1110` + 4 + 8 (16) |
//!
//! The line is sent uncompressed (raw, `8·line_bytes` bits, Comp Alg = 0 in the header) when
//! the stream is ≥ `8·line_bytes` bits (at most 16 × 34 = 544 for 64 B).
//!
//! See `docs/FORMATS.md`, section "Adaptive link compression".

use super::bits::{BitReader, BitWriter};
use super::ModelError;
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// Which code table to emit (FORMATS §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CodeTable {
    /// Tavana et al. Table II (C-Pack+Z): zero block, 8-bit full match (default).
    #[default]
    Paper,
    /// Chen et al. original C-Pack (no zero block, 6-bit full match; `1111` illegal), as
    /// needed by the PACT'12 link-compression spec.
    Original,
}

/// When a word is pushed into the dictionary (docs/FORMATS.md, C-Pack §2.3 step 3; PACT'12
/// §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PushPolicy {
    /// Only after a new word (`xxxx`): "if no match is found … inserted" (Tavana; default).
    #[default]
    NewOnly,
    /// After `xxxx`, `mmxx` and `mmmx` but not `mmmm` (the PACT'12 spec's reading of C-Pack).
    NoFullMatch,
    /// After every non-zero-pattern word (`xxxx`, `mmmm`, `mmxx`, `mmmx`), as gem5 does.
    AllNonZero,
}

/// Parameters of the C-Pack model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpackParams {
    /// Code table.
    pub codes: CodeTable,
    /// Dictionary push policy.
    pub push: PushPolicy,
    /// Line size in bytes: 32, 64 (default) or 128.
    pub line_bytes: usize,
    /// Dictionary entries: a power of two, 2..=64 (16 by default; index = log2 bits).
    pub dict_entries: usize,
    /// Start every line with all entries valid and zero instead of invalid (an option for
    /// other C-Pack models; default `false`).
    pub dict_init_zero: bool,
}

impl Default for CpackParams {
    fn default() -> Self {
        CpackParams {
            codes: CodeTable::Paper,
            push: PushPolicy::NewOnly,
            line_bytes: 64,
            dict_entries: 16,
            dict_init_zero: false,
        }
    }
}

impl CpackParams {
    /// The original C-Pack (Chen et al.) with the PACT'12 spec's defaults for a line of
    /// `line_bytes`: original codes, push after `xxxx`/`mmxx`/`mmmx`.
    pub fn original(line_bytes: usize) -> Self {
        CpackParams {
            codes: CodeTable::Original,
            push: PushPolicy::NoFullMatch,
            line_bytes,
            ..Self::default()
        }
    }

    /// Dictionary index width in bits.
    pub fn index_bits(&self) -> u32 {
        self.dict_entries.trailing_zeros()
    }

    /// `(code, code length)` of a pattern in the configured table; `None` if the table has
    /// no code for it (zero block or uncompressed in the original table).
    pub fn code(&self, pat: CpackPattern) -> Option<(u8, u32)> {
        use CpackPattern::*;
        match (self.codes, pat) {
            (_, Uncompressed) => None,
            (CodeTable::Paper, ZeroBlock) => Some((0b00, 2)),
            (CodeTable::Paper, ZeroWord) => Some((0b01, 2)),
            (CodeTable::Paper, NewWord) => Some((0b10, 2)),
            (CodeTable::Paper, FullMatch) => Some((0b1100, 4)),
            (CodeTable::Paper, HalfMatch) => Some((0b1101, 4)),
            (CodeTable::Paper, Narrow) => Some((0b1110, 4)),
            (CodeTable::Paper, ThreeByteMatch) => Some((0b1111, 4)),
            (CodeTable::Original, ZeroBlock) => None,
            (CodeTable::Original, ZeroWord) => Some((0b00, 2)),
            (CodeTable::Original, NewWord) => Some((0b01, 2)),
            (CodeTable::Original, FullMatch) => Some((0b10, 2)),
            (CodeTable::Original, HalfMatch) => Some((0b1100, 4)),
            (CodeTable::Original, Narrow) => Some((0b1101, 4)),
            (CodeTable::Original, ThreeByteMatch) => Some((0b1110, 4)),
        }
    }

    /// Size in bits of one token of this pattern (code + index + payload; the whole line for
    /// `Uncompressed`, 0 if the table has no such code).
    pub fn token_bits(&self, pat: CpackPattern) -> usize {
        if pat == CpackPattern::Uncompressed {
            return self.line_bits();
        }
        match self.code(pat) {
            None => 0,
            Some((_, len)) => {
                let idx = if pat.has_index() {
                    self.index_bits() as usize
                } else {
                    0
                };
                len as usize + idx + pat.payload_bits()
            }
        }
    }

    /// Whether a word of pattern `pat` is pushed into the dictionary (the push policy).
    pub(crate) fn pushes(&self, pat: CpackPattern) -> bool {
        use CpackPattern::*;
        match self.push {
            PushPolicy::NewOnly => pat == NewWord,
            PushPolicy::NoFullMatch => matches!(pat, NewWord | HalfMatch | ThreeByteMatch),
            PushPolicy::AllNonZero => {
                matches!(pat, NewWord | FullMatch | HalfMatch | ThreeByteMatch)
            }
        }
    }
}

impl LineParams for CpackParams {
    fn line_bytes(&self) -> usize {
        self.line_bytes
    }

    fn validate(&self) -> Result<(), ModelError> {
        super::bits::check_line_bytes(self.line_bytes)?;
        if !(2..=64).contains(&self.dict_entries) || !self.dict_entries.is_power_of_two() {
            return Err(ModelError::param(
                "dict_entries",
                self.dict_entries,
                "a power of two in 2..=64",
            ));
        }
        Ok(())
    }
}

/// C-Pack patterns, numbered as in the paper's Table II (the discriminant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CpackPattern {
    /// 1: all-zero line (paper codes only).
    ZeroBlock = 1,
    /// 2: zero word `zzzz`.
    ZeroWord = 2,
    /// 3: new word `xxxx` (no match).
    NewWord = 3,
    /// 4: full match `mmmm`.
    FullMatch = 4,
    /// 5: upper halfword matched `mmxx`.
    HalfMatch = 5,
    /// 6: narrow word `zzzx` (upper 24 bits zero).
    Narrow = 6,
    /// 7: upper three bytes matched `mmmx`.
    ThreeByteMatch = 7,
    /// 8: the raw line.
    Uncompressed = 8,
}

impl CpackPattern {
    /// Per-word patterns in Table II order (2–7): zzzz, xxxx, mmmm, mmxx, zzzx, mmmx.
    pub const WORD_PATTERNS: [CpackPattern; 6] = [
        CpackPattern::ZeroWord,
        CpackPattern::NewWord,
        CpackPattern::FullMatch,
        CpackPattern::HalfMatch,
        CpackPattern::Narrow,
        CpackPattern::ThreeByteMatch,
    ];

    /// Table II pattern number (1–8).
    pub fn table_ii_number(self) -> u8 {
        self as u8
    }

    /// Whether the token carries a dictionary index.
    pub fn has_index(self) -> bool {
        matches!(
            self,
            CpackPattern::FullMatch | CpackPattern::HalfMatch | CpackPattern::ThreeByteMatch
        )
    }

    /// Literal payload bits after the code and index (0 for `Uncompressed`, which is the raw
    /// line, see [`CpackParams::token_bits`]).
    pub fn payload_bits(self) -> usize {
        match self {
            CpackPattern::NewWord => 32,
            CpackPattern::HalfMatch => 16,
            CpackPattern::Narrow | CpackPattern::ThreeByteMatch => 8,
            _ => 0,
        }
    }

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            CpackPattern::ZeroBlock => "zero-block",
            CpackPattern::ZeroWord => "zzzz",
            CpackPattern::NewWord => "xxxx",
            CpackPattern::FullMatch => "mmmm",
            CpackPattern::HalfMatch => "mmxx",
            CpackPattern::Narrow => "zzzx",
            CpackPattern::ThreeByteMatch => "mmmx",
            CpackPattern::Uncompressed => "uncompressed",
        }
    }
}

/// One token of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpackToken {
    /// Pattern.
    pub pattern: CpackPattern,
    /// Dictionary slot of a match (0 otherwise).
    pub index: u8,
    /// The word it encodes.
    pub word: u32,
    /// Slot the word was pushed into, if it was pushed.
    pub pushed: Option<u8>,
}

/// The per-line dictionary (valid entries, FIFO write pointer).
#[derive(Clone, Debug)]
struct Dict {
    entries: Vec<Option<u32>>,
    pushes: usize,
}

impl Dict {
    fn new(p: &CpackParams) -> Self {
        let init = if p.dict_init_zero { Some(0) } else { None };
        Dict {
            entries: vec![init; p.dict_entries],
            pushes: 0,
        }
    }

    /// Best match for `w`: (class 4/3/2, slot), lowest slot on ties.
    fn best(&self, w: u32) -> Option<(u8, u8)> {
        let mut best: Option<(u8, u8)> = None;
        for (j, e) in self.entries.iter().enumerate() {
            let Some(d) = *e else { continue };
            let class = if d == w {
                4
            } else if d >> 8 == w >> 8 {
                3
            } else if d >> 16 == w >> 16 {
                2
            } else {
                0
            };
            if class > 0 && best.is_none_or(|(c, _)| class > c) {
                best = Some((class, j as u8));
            }
        }
        best
    }

    fn push(&mut self, w: u32) -> u8 {
        let slot = self.pushes % self.entries.len();
        self.entries[slot] = Some(w);
        self.pushes += 1;
        slot as u8
    }

    fn get(&self, j: u64) -> Result<u32, ModelError> {
        self.entries
            .get(j as usize)
            .copied()
            .flatten()
            .ok_or_else(|| ModelError::Corrupt(format!("C-Pack index {j} names an empty entry")))
    }
}

/// Tokenizes a sequence of words with a fresh dictionary (no zero-block check, no
/// fallback). The PACT'12 lossy layouts run C-Pack on 16, 20 or 24 packed words
/// ([`crate::model::cpack_lossy`]); a line is `line_bytes / 4` words.
pub fn tokenize(p: &CpackParams, words: &[u32]) -> Vec<CpackToken> {
    let mut dict = Dict::new(p);
    let mut out = Vec::with_capacity(words.len());
    for &w in words {
        let (pattern, index) = if w == 0 {
            (CpackPattern::ZeroWord, 0)
        } else if w >> 8 == 0 {
            (CpackPattern::Narrow, 0)
        } else {
            match dict.best(w) {
                Some((4, j)) => (CpackPattern::FullMatch, j),
                Some((3, j)) => (CpackPattern::ThreeByteMatch, j),
                Some((_, j)) => (CpackPattern::HalfMatch, j),
                None => (CpackPattern::NewWord, 0),
            }
        };
        let pushed = p.pushes(pattern).then(|| dict.push(w));
        out.push(CpackToken {
            pattern,
            index,
            word: w,
            pushed,
        });
    }
    out
}

fn words(line: &[u8]) -> Vec<u32> {
    line.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Result of compressing one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpackCompressed {
    /// The tokens (a single `ZeroBlock` token for a zero line with the paper's codes).
    pub tokens: Vec<CpackToken>,
    /// Whether the line is sent compressed (else raw, Comp Alg = 0).
    pub compressed: bool,
    /// Length of the token stream before the raw fallback (may exceed the line).
    pub stream_bits: usize,
    /// The stream (`nbits.div_ceil(8)` bytes, MSB-first, zero-padded), or the raw line.
    pub bits: Vec<u8>,
    /// Bits sent: `stream_bits` if compressed, else `8·line_bytes`.
    pub nbits: usize,
}

impl CpackCompressed {
    /// Table VI events: one pattern per token (a zero line is one `ZeroBlock` event with the
    /// paper's codes).
    pub fn events(&self) -> Vec<CpackPattern> {
        self.tokens.iter().map(|t| t.pattern).collect()
    }
}

/// Tokens of a line: the zero-block token (paper codes, all-zero line) or one per word.
pub fn tokens(p: &CpackParams, line: &[u8]) -> Result<Vec<CpackToken>, ModelError> {
    p.check_line(line)?;
    let w = words(line);
    if p.codes == CodeTable::Paper && w.iter().all(|&x| x == 0) {
        return Ok(vec![CpackToken {
            pattern: CpackPattern::ZeroBlock,
            index: 0,
            word: 0,
            pushed: None,
        }]);
    }
    Ok(tokenize(p, &w))
}

/// Size in bits of the line as sent (the stream, or `8·line_bytes` when that is not smaller).
///
/// The size-only fast path: no token list, a fixed dictionary array, the match class from
/// `dict ^ word` (the slot is not needed for the size); checked against the token stream by
/// `codec::tests` and `size_only_matches_tokens_for_every_option`.
pub fn size_bits(p: &CpackParams, line: &[u8]) -> Result<usize, ModelError> {
    use CpackPattern::*;
    p.check_line(line)?;
    if p.codes == CodeTable::Paper && line.iter().all(|&b| b == 0) {
        return Ok(p.token_bits(ZeroBlock).min(p.line_bits()));
    }
    // (bits, pushes) per outcome: zero, narrow, no match, half, three-byte, full.
    let cost = [
        ZeroWord,
        Narrow,
        NewWord,
        HalfMatch,
        ThreeByteMatch,
        FullMatch,
    ]
    .map(|pat| (p.token_bits(pat), p.pushes(pat)));
    let n = p.dict_entries.clamp(1, 64);
    let mut dict = [0u32; 64];
    let mut valid = if p.dict_init_zero { n } else { 0 };
    let mut pushes = 0usize;
    let mut total = 0usize;
    for c in line.chunks_exact(4) {
        let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let k = if w == 0 {
            0
        } else if w >> 8 == 0 {
            1
        } else {
            // 2: none, 3: upper half, 4: upper three bytes, 5: full.
            let mut k = 2;
            for &d in &dict[..valid] {
                let x = d ^ w;
                let c = if x == 0 {
                    5
                } else if x >> 8 == 0 {
                    4
                } else if x >> 16 == 0 {
                    3
                } else {
                    2
                };
                if c > k {
                    k = c;
                    if k == 5 {
                        break;
                    }
                }
            }
            k
        };
        let (bits, push) = cost[k];
        total += bits;
        if push {
            dict[pushes % n] = w;
            pushes += 1;
            valid = valid.max(pushes.min(n));
        }
    }
    Ok(total.min(p.line_bits()))
}

/// The MSB-first stream of `toks` (code, index, payload per token): bytes and bit count.
pub fn write_tokens(p: &CpackParams, toks: &[CpackToken]) -> (Vec<u8>, usize) {
    let mut w = BitWriter::new();
    let ib = p.index_bits();
    for t in toks {
        let (code, len) = p.code(t.pattern).unwrap_or((0, 0));
        w.put(code as u64, len);
        if t.pattern.has_index() {
            w.put(t.index as u64, ib);
        }
        let payload = match t.pattern {
            CpackPattern::HalfMatch => t.word & 0xFFFF,
            CpackPattern::Narrow | CpackPattern::ThreeByteMatch => t.word & 0xFF,
            _ => t.word,
        };
        w.put(payload as u64, t.pattern.payload_bits() as u32);
    }
    w.finish()
}

/// Compresses one line.
pub fn compress(p: &CpackParams, line: &[u8]) -> Result<CpackCompressed, ModelError> {
    let toks = tokens(p, line)?;
    let (bits, stream_bits) = write_tokens(p, &toks);
    if stream_bits >= p.line_bits() {
        return Ok(CpackCompressed {
            tokens: toks,
            compressed: false,
            stream_bits,
            bits: line.to_vec(),
            nbits: p.line_bits(),
        });
    }
    Ok(CpackCompressed {
        tokens: toks,
        compressed: true,
        stream_bits,
        bits,
        nbits: stream_bits,
    })
}

fn decode(p: &CpackParams, r: &mut BitReader) -> Result<Vec<u8>, ModelError> {
    let out = decode_words(p, r, p.line_bytes / 4)?;
    Ok(out.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// Decodes `n` words from `r` with a fresh dictionary (the inverse of [`tokenize`] and
/// [`write_tokens`]; with the paper's codes a leading `00` is the zero block of `n` words).
pub fn decode_words(p: &CpackParams, r: &mut BitReader, n: usize) -> Result<Vec<u32>, ModelError> {
    use CpackPattern::*;
    let ib = p.index_bits();
    let mut dict = Dict::new(p);
    let mut out: Vec<u32> = Vec::with_capacity(n);
    while out.len() < n {
        let c2 = r.get(2, "C-Pack code")? as u8;
        let pat = match (p.codes, c2) {
            (CodeTable::Paper, 0b00) if out.is_empty() => ZeroBlock,
            (CodeTable::Paper, 0b00) => {
                return Err(ModelError::Corrupt(format!(
                    "C-Pack+Z zero-block code 00 at word {}",
                    out.len()
                )))
            }
            (CodeTable::Paper, 0b01) | (CodeTable::Original, 0b00) => ZeroWord,
            (CodeTable::Paper, 0b10) | (CodeTable::Original, 0b01) => NewWord,
            (CodeTable::Original, 0b10) => FullMatch,
            _ => {
                let c4 = r.get(2, "C-Pack code suffix")? as u8;
                match (p.codes, c4) {
                    (CodeTable::Paper, 0b00) => FullMatch,
                    (CodeTable::Paper, 0b01) | (CodeTable::Original, 0b00) => HalfMatch,
                    (CodeTable::Paper, 0b10) | (CodeTable::Original, 0b01) => Narrow,
                    (CodeTable::Paper, 0b11) | (CodeTable::Original, 0b10) => ThreeByteMatch,
                    _ => {
                        return Err(ModelError::Corrupt(format!(
                            "illegal C-Pack code 1111 at word {}",
                            out.len()
                        )))
                    }
                }
            }
        };
        let w = match pat {
            ZeroBlock => {
                out.resize(n, 0);
                break;
            }
            ZeroWord => 0,
            NewWord => r.get(32, "C-Pack new word")? as u32,
            Narrow => r.get(8, "C-Pack narrow byte")? as u32,
            FullMatch => dict.get(r.get(ib, "C-Pack index")?)?,
            ThreeByteMatch => {
                let d = dict.get(r.get(ib, "C-Pack index")?)?;
                (d & 0xFFFF_FF00) | r.get(8, "C-Pack low byte")? as u32
            }
            HalfMatch => {
                let d = dict.get(r.get(ib, "C-Pack index")?)?;
                (d & 0xFFFF_0000) | r.get(16, "C-Pack low halfword")? as u32
            }
            Uncompressed => unreachable!("no code decodes to Uncompressed"),
        };
        if p.pushes(pat) {
            dict.push(w);
        }
        out.push(w);
    }
    Ok(out)
}

/// Decodes one compressed line from the start of `data` (self-delimiting, no raw mode);
/// returns the line and the number of bits consumed.
pub fn decompress_prefix(p: &CpackParams, data: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
    p.validate()?;
    super::bits::decode_prefix(data, |r| decode(p, r))
}

/// Decompresses a stream of exactly `nbits` bits. `nbits == 8·line_bytes` is the raw line.
/// Truncated, over-long or corrupt streams (illegal codes, indices of empty entries,
/// non-zero pad bits, trailing bytes) are errors.
pub fn decompress(p: &CpackParams, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    super::bits::decode_exact(bits, nbits, p.line_bytes, |r| decode(p, r))
}

/// The PACT'12 §2.7 golden vector (original codes, push after `xxxx`/`mmxx`/`mmmx`), shared
/// by the 64 B and 128 B codecs' tests: its words (the rest of the block is zero), each
/// word's pattern and the dictionary slot each word is pushed to.
#[cfg(test)]
pub(crate) mod golden {
    use super::CpackPattern::{self, *};

    pub const WORDS: [u32; 7] = [
        0x0000_0000,
        0x0000_00FF,
        0x1234_5678,
        0x1234_5678,
        0x1234_56AB,
        0x1234_ABCD,
        0xDEAD_BEEF,
    ];
    pub const PATTERNS: [CpackPattern; 7] = [
        ZeroWord,
        Narrow,
        NewWord,
        FullMatch,
        ThreeByteMatch,
        HalfMatch,
        NewWord,
    ];
    pub const PUSHED: [Option<u8>; 7] = [None, None, Some(0), None, Some(1), Some(2), Some(3)];
}

#[cfg(test)]
mod tests;
