//! Frequent Pattern Compression (FPC) golden model (Alameldeen & Wood, UW TR-1500, 2004, as
//! used by Tavana et al., IPDPS'19; docs/FORMATS.md, adaptive §2.0, §2.2).
//!
//! A line (64 B by default; 32 and 128 B allowed) is split into little-endian 32-bit words
//! and every word is classified into one of the patterns of the paper's Table II
//! ([`FpcPattern`], numbered 1–9 as in the paper so that histograms compare with Table VI).
//! Two modes ([`FpcMode`]):
//!
//! * [`FpcMode::Original`] (default, bit-exact and decodable, the RTL's format): the original
//!   Alameldeen–Wood prefixes — `000` zero run (3-bit run length − 1, runs of 1–8 words, 6 bits),
//!   `001` 4-bit sign-extended, `010` byte sign-extended, `011` halfword sign-extended, `100`
//!   halfword padded with a zero halfword, `101` two halfwords each a sign-extended byte, `110`
//!   repeated bytes, `111` uncompressed word (3 + 32 bits). Zero runs are maximal runs of zero
//!   words, cut every 8 words. The line falls back to uncompressed (raw, `8·line_bytes` bits,
//!   signalled in the header) when the stream is ≥ `8·line_bytes` bits.
//! * [`FpcMode::PaperSize`] (size only, cannot be decoded): the paper's accounting, which is the
//!   only one that reproduces Table V (§2.2, §2.6): a zero line costs 3 bits; otherwise each word
//!   of patterns 2–8 costs 3 + payload bits and each unmatched word 32 bits (no prefix); the sum
//!   is capped at `8·line_bytes`.
//!
//! Pattern choice (both modes): the smallest encoding; on equal size the lower Table II number
//! (so `0x007F0000` is "halfword padded", pattern 7, not pattern 8). Payloads are written
//! MSB-first: 4-bit `w[3:0]`, byte `w[7:0]`, halfword `w[15:0]`, padded `w[31:16]`, two
//! halfwords `w[23:16]` then `w[7:0]`, repeated byte `w[7:0]`, uncompressed `w[31:0]`.
//!
//! See `docs/FORMATS.md`, section "Adaptive link compression".

use super::bits::{BitReader, BitWriter};
use super::ModelError;
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// FPC accounting mode (FORMATS §2.2 recommendation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FpcMode {
    /// Decodable Alameldeen–Wood format with zero runs and 35-bit uncompressed words.
    #[default]
    Original,
    /// The paper's size-only model (unmatched word = 32 bits, zero line = 3 bits).
    PaperSize,
}

/// Parameters of the FPC model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FpcParams {
    /// Accounting mode.
    pub mode: FpcMode,
    /// Line size in bytes: 32, 64 (default) or 128.
    pub line_bytes: usize,
}

impl Default for FpcParams {
    fn default() -> Self {
        FpcParams {
            mode: FpcMode::Original,
            line_bytes: 64,
        }
    }
}

impl FpcParams {
    /// 64 B lines in the given mode.
    pub fn with_mode(mode: FpcMode) -> Self {
        FpcParams {
            mode,
            ..Self::default()
        }
    }
}

impl LineParams for FpcParams {
    fn line_bytes(&self) -> usize {
        self.line_bytes
    }
}

/// FPC patterns, numbered as in the paper's Table II (the discriminant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FpcPattern {
    /// 1: all-zero line (line level).
    ZeroBlock = 1,
    /// 2: zero word.
    ZeroWord = 2,
    /// 3: word of four equal bytes `N8N8N8N8`.
    RepeatedBytes = 3,
    /// 4: 4-bit value sign-extended `X28N4`.
    Sext4 = 4,
    /// 5: byte sign-extended `X24N8`.
    Sext8 = 5,
    /// 6: halfword sign-extended `X16N16`.
    Sext16 = 6,
    /// 7: halfword padded with a zero halfword `N16Z16` (low half zero).
    HalfPadded = 7,
    /// 8: two halfwords, each a sign-extended byte `X8N8X8N8`.
    TwoHalves = 8,
    /// 9: uncompressed (an unmatched word; at line level, the raw line).
    Uncompressed = 9,
}

impl FpcPattern {
    /// Word patterns in Table II order (2–9).
    pub const WORD_PATTERNS: [FpcPattern; 8] = [
        FpcPattern::ZeroWord,
        FpcPattern::RepeatedBytes,
        FpcPattern::Sext4,
        FpcPattern::Sext8,
        FpcPattern::Sext16,
        FpcPattern::HalfPadded,
        FpcPattern::TwoHalves,
        FpcPattern::Uncompressed,
    ];

    /// Table II pattern number (1–9).
    pub fn table_ii_number(self) -> u8 {
        self as u8
    }

    /// Payload bits of the pattern (0 for zero patterns, 32 for an unmatched word).
    pub fn payload_bits(self) -> usize {
        match self {
            FpcPattern::ZeroBlock | FpcPattern::ZeroWord => 0,
            FpcPattern::Sext4 => 4,
            FpcPattern::RepeatedBytes | FpcPattern::Sext8 => 8,
            FpcPattern::Sext16 | FpcPattern::HalfPadded | FpcPattern::TwoHalves => 16,
            FpcPattern::Uncompressed => 32,
        }
    }

    /// The paper's Table II 3-bit prefix (`None` for uncompressed, which has none).
    pub fn paper_prefix(self) -> Option<u8> {
        match self {
            FpcPattern::Uncompressed => None,
            p => Some(p as u8 - 1),
        }
    }

    /// The original Alameldeen–Wood 3-bit prefix (`None` for the zero block, which the
    /// original format does not have; zero words are coded as runs with prefix `000`).
    pub fn original_prefix(self) -> Option<u8> {
        match self {
            FpcPattern::ZeroBlock => None,
            FpcPattern::ZeroWord => Some(0b000),
            FpcPattern::Sext4 => Some(0b001),
            FpcPattern::Sext8 => Some(0b010),
            FpcPattern::Sext16 => Some(0b011),
            FpcPattern::HalfPadded => Some(0b100),
            FpcPattern::TwoHalves => Some(0b101),
            FpcPattern::RepeatedBytes => Some(0b110),
            FpcPattern::Uncompressed => Some(0b111),
        }
    }

    /// Size of one word (or of the zero line) in the paper's accounting: 3 + payload, 32 for
    /// an unmatched word.
    pub fn paper_size(self) -> usize {
        match self {
            FpcPattern::Uncompressed => 32,
            p => 3 + p.payload_bits(),
        }
    }

    /// Whether the pattern matches the word (patterns 2–9; 9 matches everything).
    pub fn matches(self, w: u32) -> bool {
        let sext = |bits: u32| {
            let s = (w as i32) >> (bits - 1);
            s == 0 || s == -1
        };
        let sext8_16 = |h: u32| {
            let h = h as u16 as i16;
            (-128..=127).contains(&h)
        };
        match self {
            FpcPattern::ZeroBlock => false,
            FpcPattern::ZeroWord => w == 0,
            FpcPattern::RepeatedBytes => w == (w & 0xFF).wrapping_mul(0x0101_0101),
            FpcPattern::Sext4 => sext(4),
            FpcPattern::Sext8 => sext(8),
            FpcPattern::Sext16 => sext(16),
            FpcPattern::HalfPadded => w & 0xFFFF == 0,
            FpcPattern::TwoHalves => sext8_16(w >> 16) && sext8_16(w & 0xFFFF),
            FpcPattern::Uncompressed => true,
        }
    }

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            FpcPattern::ZeroBlock => "zero-block",
            FpcPattern::ZeroWord => "zero-word",
            FpcPattern::RepeatedBytes => "repeated-bytes",
            FpcPattern::Sext4 => "sext4",
            FpcPattern::Sext8 => "sext8",
            FpcPattern::Sext16 => "sext16",
            FpcPattern::HalfPadded => "half-padded",
            FpcPattern::TwoHalves => "two-halves",
            FpcPattern::Uncompressed => "uncompressed",
        }
    }
}

/// The pattern FPC uses for one word: the smallest matching pattern, ties by Table II order.
/// Sizes are ordered identically in both modes, so the choice does not depend on the mode.
pub fn classify_word(w: u32) -> FpcPattern {
    FpcPattern::WORD_PATTERNS
        .iter()
        .copied()
        .filter(|p| p.matches(w))
        .min_by_key(|p| (p.paper_size(), *p as u8))
        .unwrap_or(FpcPattern::Uncompressed)
}

/// Per-line classification (independent of the mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FpcClass {
    /// The whole line is zero (Table II pattern 1).
    pub zero_line: bool,
    /// Pattern of every word (patterns 2–9), word 0 first.
    pub words: Vec<FpcPattern>,
}

impl FpcClass {
    /// Table VI events: one [`FpcPattern::ZeroBlock`] for a zero line, else one per word.
    pub fn events(&self) -> Vec<FpcPattern> {
        if self.zero_line {
            vec![FpcPattern::ZeroBlock]
        } else {
            self.words.clone()
        }
    }
}

fn words(line: &[u8]) -> Vec<u32> {
    line.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Classifies every word of the line.
pub fn classify(p: &FpcParams, line: &[u8]) -> Result<FpcClass, ModelError> {
    p.check_line(line)?;
    let w = words(line);
    Ok(FpcClass {
        zero_line: w.iter().all(|&x| x == 0),
        words: w.iter().map(|&x| classify_word(x)).collect(),
    })
}

/// Result of compressing one line (Original mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FpcCompressed {
    /// Word classification (Table II numbering).
    pub class: FpcClass,
    /// Whether the line is sent compressed (else raw, Comp Alg = 0).
    pub compressed: bool,
    /// Length of the FPC token stream before the raw fallback (may exceed the line).
    pub stream_bits: usize,
    /// The stream (`nbits.div_ceil(8)` bytes, MSB-first, zero-padded), or the raw line.
    pub bits: Vec<u8>,
    /// Bits sent: `stream_bits` if compressed, else `8·line_bytes`.
    pub nbits: usize,
}

/// Writes the Original-mode token stream.
fn encode_original(words: &[u32], class: &[FpcPattern]) -> BitWriter {
    let mut w = BitWriter::new();
    let mut i = 0;
    while i < words.len() {
        let pat = class[i];
        let v = words[i];
        if pat == FpcPattern::ZeroWord {
            let mut run = 1;
            while run < 8 && i + run < words.len() && words[i + run] == 0 {
                run += 1;
            }
            w.put(0b000, 3);
            w.put(run as u64 - 1, 3);
            i += run;
            continue;
        }
        w.put(pat.original_prefix().unwrap_or(0b111) as u64, 3);
        let payload = match pat {
            FpcPattern::HalfPadded => v >> 16,
            FpcPattern::TwoHalves => ((v >> 8) & 0xFF00) | (v & 0xFF),
            _ => v,
        };
        w.put(payload as u64, pat.payload_bits() as u32);
        i += 1;
    }
    w
}

/// Size in bits of the line as sent, in the configured mode (capped at `8·line_bytes`): the
/// size-only fast path. Word sizes come from [`word_size`] and zero runs are counted in place,
/// with no classification vector or bit stream; `tests::size_only_equals_stream_length`
/// checks it against [`compress`].
pub fn size_bits(p: &FpcParams, line: &[u8]) -> Result<usize, ModelError> {
    p.check_line(line)?;
    let raw = p.line_bits();
    let mut n = 0usize;
    match p.mode {
        FpcMode::PaperSize => {
            let mut all_zero = true;
            for c in line.chunks_exact(4) {
                let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                all_zero &= w == 0;
                n += word_size(w, 32) as usize;
            }
            if all_zero {
                return Ok(FpcPattern::ZeroBlock.paper_size());
            }
        }
        FpcMode::Original => {
            // A run of up to 8 zero words is one 6-bit token.
            let mut run = 0usize;
            for c in line.chunks_exact(4) {
                let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                if w == 0 {
                    if run.is_multiple_of(8) {
                        n += 6;
                    }
                    run += 1;
                } else {
                    run = 0;
                    n += word_size(w, 35) as usize;
                }
            }
        }
    }
    Ok(n.min(raw))
}

/// Bits of one word as [`classify_word`] codes it: 3 + payload, or `unmatched` for a word no
/// pattern fits (32 in the paper's accounting, 35 = prefix + word in the original format).
/// Zero words cost 3 (paper accounting).
#[inline]
fn word_size(w: u32, unmatched: u32) -> u32 {
    let s = w as i32;
    let sext = |bits: u32| {
        let t = s >> (bits - 1);
        t == 0 || t == -1
    };
    let half8 = |h: u32| (h as u16 as i16 as i32 + 128) as u32 <= 255;
    if w == 0 {
        3
    } else if sext(4) {
        7
    } else if sext(8) || w == (w & 0xFF).wrapping_mul(0x0101_0101) {
        11
    } else if sext(16) || w & 0xFFFF == 0 || (half8(w >> 16) && half8(w & 0xFFFF)) {
        19
    } else {
        unmatched
    }
}

/// Compresses one line (Original mode only; PaperSize is size-only and returns
/// [`ModelError::InvalidParam`]).
pub fn compress(p: &FpcParams, line: &[u8]) -> Result<FpcCompressed, ModelError> {
    if p.mode != FpcMode::Original {
        return Err(ModelError::param(
            "mode",
            "paper-size",
            "original (paper-size is a size-only model, use size_bits)",
        ));
    }
    let class = classify(p, line)?;
    let (bits, stream_bits) = encode_original(&words(line), &class.words).finish();
    if stream_bits >= p.line_bits() {
        return Ok(FpcCompressed {
            class,
            compressed: false,
            stream_bits,
            bits: line.to_vec(),
            nbits: p.line_bits(),
        });
    }
    Ok(FpcCompressed {
        class,
        compressed: true,
        stream_bits,
        bits,
        nbits: stream_bits,
    })
}

fn sext(v: u64, bits: u32) -> u32 {
    let sh = 32 - bits;
    (((v as u32) << sh) as i32 >> sh) as u32
}

fn decode(p: &FpcParams, r: &mut BitReader) -> Result<Vec<u8>, ModelError> {
    let n = p.line_bytes / 4;
    let mut out: Vec<u32> = Vec::with_capacity(n);
    while out.len() < n {
        let pre = r.get(3, "FPC prefix")?;
        let w = match pre {
            0b000 => {
                let run = r.get(3, "FPC zero-run length")? as usize + 1;
                if out.len() + run > n {
                    return Err(ModelError::Corrupt(format!(
                        "FPC zero run of {run} words at word {} overruns the {n}-word line",
                        out.len()
                    )));
                }
                out.resize(out.len() + run, 0);
                continue;
            }
            0b001 => sext(r.get(4, "FPC 4-bit payload")?, 4),
            0b010 => sext(r.get(8, "FPC byte payload")?, 8),
            0b011 => sext(r.get(16, "FPC halfword payload")?, 16),
            0b100 => (r.get(16, "FPC padded halfword")? as u32) << 16,
            0b101 => {
                let hi = sext(r.get(8, "FPC upper byte")?, 8) & 0xFFFF;
                let lo = sext(r.get(8, "FPC lower byte")?, 8) & 0xFFFF;
                (hi << 16) | lo
            }
            0b110 => (r.get(8, "FPC repeated byte")? as u32).wrapping_mul(0x0101_0101),
            _ => r.get(32, "FPC uncompressed word")? as u32,
        };
        out.push(w);
    }
    Ok(out.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// Decodes one compressed (Original-mode) line from the start of `data` (self-delimiting, no
/// raw mode); returns the line and the number of bits consumed.
pub fn decompress_prefix(p: &FpcParams, data: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
    p.validate()?;
    super::bits::decode_prefix(data, |r| decode(p, r))
}

/// Decompresses a stream of exactly `nbits` bits (Original mode). `nbits == 8·line_bytes` is
/// the raw line. Truncated, over-long or corrupt streams (zero runs past the line end,
/// non-zero pad bits, trailing bytes) are errors.
pub fn decompress(p: &FpcParams, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    if p.mode != FpcMode::Original {
        return Err(ModelError::param(
            "mode",
            "paper-size",
            "original (paper-size streams cannot be decoded)",
        ));
    }
    super::bits::decode_exact(bits, nbits, p.line_bytes, |r| decode(p, r))
}

#[cfg(test)]
mod tests;
