//! Bit-Plane Compression (BPC) golden model (Kim, Sullivan, Choukse, Erez, ISCA 2016, as used
//! by Buddy Compression, Choukse et al., ISCA 2020; docs/FORMATS.md, Buddy §2.4).
//!
//! A block (128 B by default) is read as `n` little-endian symbols of `sym_bits` (32, or 64
//! for the wide-symbol variant; 16 and 8 give the proofs' configurations fewer planes), taken
//! as signed integers:
//!
//! 1. the base is symbol 0;
//! 2. `n − 1` deltas `d[i] = w[i] − w[i−1]`, exact (`sym_bits + 1` bits, signed);
//! 3. bit-plane transpose: plane `DBP[j]` (`j = 0..=sym_bits`) holds bit `j` of every delta,
//!    delta `i + 1` at plane bit `i`;
//! 4. `DBX[top] = DBP[top]`, `DBX[j] = DBP[j] ^ DBP[j+1]` below;
//! 5. the base code, then `DBX[top]` down to `DBX[0]`, each plane coded as
//!    (priority order, first match wins):
//!
//! | plane | code | bits (32-bit symbols) |
//! |---|---|---|
//! | run of 2.. all-zero planes | `01` + (run − 2) | 2 + 5 |
//! | one all-zero plane | `001` | 3 |
//! | all ones | 5-bit prefix | 5 |
//! | `DBP[j] == 0` | 5-bit prefix | 5 |
//! | two consecutive ones | 5-bit prefix + position of the lower one | 5 + 5 |
//! | one one | 5-bit prefix + its position | 5 + 5 |
//! | anything else | `1` + the plane, its bit `n − 2` first | 1 + 31 |
//!
//! The base code is `000` (zero), `001` + 4 bits, `010` + 8 bits, `011` + 16 bits (signed
//! values that fit, in forms narrower than the symbol), else `1` + the whole symbol. A
//! decoder given a value at least as wide as the symbol keeps its low `sym_bits` bits. The
//! four 5-bit prefixes follow [`BpcPrefixes`]. Widths scale with the block: planes are
//! `n − 1` bits, positions `ceil(log2(n − 1))` bits and the run field `ceil(log2(sym_bits))`
//! bits (5, 4 and 6 for 64-bit symbols in 128 B).
//!
//! The stream can be longer than the block (1,089 bits at 32-bit symbols): [`encode`] gives
//! it whole, and the line as sent ([`compress`], [`size_bits`]) is the raw block whenever the
//! stream is not shorter than it. Buddy's own raw threshold (above 96 B) belongs to the size
//! mapper, not to the codec.
//!
//! The decoder keeps the previous plane `prevDBP` (0 above the top plane): zero planes and
//! runs repeat it, all-ones flips it, the `DBP == 0` code clears it, positional and raw codes
//! XOR into it. It flags a stream that ends early, a zero run past plane 0 and a position
//! outside the plane. See `docs/FORMATS.md`, "Buddy Compression".

use super::bits::{BitReader, BitWriter};
use super::ModelError;
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// Assignment of the four 5-bit plane prefixes (FORMATS §2.4: the lengths agree across public
/// coders, the prefixes do not; compressed sizes are the same either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum BpcPrefixes {
    /// The BPC paper's table (spec default): all ones `00000`, `DBP == 0` `00001`, two ones
    /// `00010`, one one `00011`.
    #[default]
    Kim2016,
    /// The other public simulator's comment: one one `00000`, two ones `00001`, `DBP == 0`
    /// `00010`, all ones `00011`.
    Alternate,
}

/// The classes of a non-zero plane that have a 5-bit prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlaneCode {
    /// All-zero planes, merged into a run (2..) or the single-plane code.
    Zero,
    /// Every bit set.
    AllOnes,
    /// `DBX != 0` and `DBP == 0`.
    DbpZero,
    /// Exactly two adjacent ones.
    TwoOnes,
    /// Exactly one one.
    OneOne,
    /// Sent as is.
    Raw,
}

impl PlaneCode {
    /// Every class, in priority order.
    pub const ALL: [PlaneCode; 6] = [
        PlaneCode::Zero,
        PlaneCode::AllOnes,
        PlaneCode::DbpZero,
        PlaneCode::TwoOnes,
        PlaneCode::OneOne,
        PlaneCode::Raw,
    ];

    /// Short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            PlaneCode::Zero => "zero",
            PlaneCode::AllOnes => "all-ones",
            PlaneCode::DbpZero => "dbp-zero",
            PlaneCode::TwoOnes => "two-ones",
            PlaneCode::OneOne => "one-one",
            PlaneCode::Raw => "raw",
        }
    }
}

impl BpcPrefixes {
    /// The assignment's name (`kim2016`, `alternate`), as configs spell it.
    pub fn name(self) -> &'static str {
        match self {
            BpcPrefixes::Kim2016 => "kim2016",
            BpcPrefixes::Alternate => "alternate",
        }
    }

    /// The 5-bit prefix of a prefixed class (`None` for zero planes and raw).
    pub fn prefix(self, c: PlaneCode) -> Option<u8> {
        let (ones, dbp0, two, one) = match self {
            BpcPrefixes::Kim2016 => (0b00000, 0b00001, 0b00010, 0b00011),
            BpcPrefixes::Alternate => (0b00011, 0b00010, 0b00001, 0b00000),
        };
        match c {
            PlaneCode::AllOnes => Some(ones),
            PlaneCode::DbpZero => Some(dbp0),
            PlaneCode::TwoOnes => Some(two),
            PlaneCode::OneOne => Some(one),
            PlaneCode::Zero | PlaneCode::Raw => None,
        }
    }

    /// The class of a 5-bit prefix (`000xx`).
    pub fn class(self, prefix: u8) -> PlaneCode {
        [
            PlaneCode::AllOnes,
            PlaneCode::DbpZero,
            PlaneCode::TwoOnes,
            PlaneCode::OneOne,
        ]
        .into_iter()
        .find(|c| self.prefix(*c) == Some(prefix & 3))
        .unwrap_or(PlaneCode::Raw)
    }
}

/// Parameters of the BPC model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BpcParams {
    /// Block size in bytes: 32, 64 or 128 (default; Buddy's memory-entry); 16 is accepted
    /// (the line compressors' proof size) and tested, but no BPC unit is built for it.
    pub line_bytes: usize,
    /// Symbol width: 32 (default, BPC), 64 (the wide-symbol variant, FORMATS §2.4
    /// \[proposal\]), 16 or 8 (fewer bit-planes, for proofs; 2 to 64 symbols per block).
    pub sym_bits: u32,
    /// The 5-bit prefix assignment.
    pub prefixes: BpcPrefixes,
}

impl Default for BpcParams {
    fn default() -> Self {
        BpcParams {
            line_bytes: 128,
            sym_bits: 32,
            prefixes: BpcPrefixes::Kim2016,
        }
    }
}

/// `ceil(log2(v))` for `v ≥ 1`.
fn clog2(v: u32) -> u32 {
    32 - (v - 1).leading_zeros()
}

impl BpcParams {
    /// The default with `sym_bits` symbols.
    pub fn with_sym_bits(sym_bits: u32) -> Self {
        BpcParams {
            sym_bits,
            ..Self::default()
        }
    }

    /// Symbols per block.
    pub fn symbols(&self) -> usize {
        self.line_bits() / self.sym_bits as usize
    }

    /// Bits per plane (the deltas): `symbols − 1`.
    pub fn plane_bits(&self) -> u32 {
        self.symbols() as u32 - 1
    }

    /// Planes per block: `sym_bits + 1` (the deltas are one bit wider than the symbols).
    pub fn planes(&self) -> usize {
        self.sym_bits as usize + 1
    }

    /// Width of a position field.
    pub fn pos_bits(&self) -> u32 {
        clog2(self.plane_bits())
    }

    /// Width of a run's `run − 2` field (runs of 2..=planes).
    pub fn run_bits(&self) -> u32 {
        clog2(self.planes() as u32 - 1)
    }

    /// A bound on the stream: the widest base code and every plane in its widest code
    /// (tight at 32-bit symbols: 1,089 bits for 128 B, every plane raw).
    pub fn max_stream_bits(&self) -> usize {
        let plane = (1 + self.plane_bits()).max(5 + self.pos_bits()) as usize;
        1 + self.sym_bits as usize + self.planes() * plane
    }

    /// The low `sym_bits` bits.
    fn sym_mask(&self) -> u64 {
        u64::MAX >> (64 - self.sym_bits)
    }

    fn plane_mask(&self) -> u64 {
        (1u64 << self.plane_bits()) - 1
    }
}

impl LineParams for BpcParams {
    fn line_bytes(&self) -> usize {
        self.line_bytes
    }

    fn validate(&self) -> Result<(), ModelError> {
        super::bits::check_line_bytes(self.line_bytes)?;
        if ![8, 16, 32, 64].contains(&self.sym_bits) {
            return Err(ModelError::param(
                "sym_bits",
                self.sym_bits,
                "8, 16, 32 or 64",
            ));
        }
        if !(2..=64).contains(&self.symbols()) {
            return Err(ModelError::param(
                "sym_bits",
                self.sym_bits,
                "2 to 64 symbols per block (planes of at most 63 bits)",
            ));
        }
        Ok(())
    }
}

/// The little-endian symbols of a block (zero-extended to 64 bits).
fn symbols(p: &BpcParams, line: &[u8]) -> Vec<u64> {
    let sb = p.sym_bits as usize / 8;
    line.chunks_exact(sb)
        .map(|c| c.iter().rev().fold(0u64, |v, b| (v << 8) | *b as u64))
        .collect()
}

/// A symbol as a signed value.
fn signed(p: &BpcParams, v: u64) -> i128 {
    let sh = 64 - p.sym_bits;
    (((v << sh) as i64) >> sh) as i128
}

/// The delta bit-planes `DBP[0..=sym_bits]` of a block.
pub fn planes(p: &BpcParams, line: &[u8]) -> Result<Vec<u64>, ModelError> {
    p.check_line(line)?;
    let w = symbols(p, line);
    let mut dbp = vec![0u64; p.planes()];
    for (k, pair) in w.windows(2).enumerate() {
        let d = signed(p, pair[1]) - signed(p, pair[0]);
        for (j, plane) in dbp.iter_mut().enumerate() {
            *plane |= (((d >> j) & 1) as u64) << k;
        }
    }
    Ok(dbp)
}

/// The class of one non-zero-run plane (`dbx != 0`).
fn classify_plane(p: &BpcParams, dbx: u64, dbp: u64) -> PlaneCode {
    if dbx == 0 {
        PlaneCode::Zero
    } else if dbx == p.plane_mask() {
        PlaneCode::AllOnes
    } else if dbp == 0 {
        PlaneCode::DbpZero
    } else if dbx.count_ones() == 2 && dbx == 3 << dbx.trailing_zeros() {
        PlaneCode::TwoOnes
    } else if dbx.count_ones() == 1 {
        PlaneCode::OneOne
    } else {
        PlaneCode::Raw
    }
}

/// The base code: `(code, code bits, value bits)`.
fn base_code(p: &BpcParams, base: u64) -> (u64, u32, u32) {
    let s = signed(p, base);
    let fits = |bits: u32| {
        let h = 1i128 << (bits - 1);
        (-h..h).contains(&s)
    };
    if s == 0 {
        (0b000, 3, 0)
    } else if fits(4) {
        (0b001, 3, 4)
    } else if p.sym_bits > 8 && fits(8) {
        (0b010, 3, 8)
    } else if p.sym_bits > 16 && fits(16) {
        (0b011, 3, 16)
    } else {
        (0b1, 1, p.sym_bits)
    }
}

/// One coded item of a block: the base, a run of zero planes, or one plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    /// The base code with its value bits.
    Base {
        /// Code bits (`000`..`011` or `1`).
        code: u64,
        /// Width of the code.
        code_bits: u32,
        /// Value bits after the code.
        value_bits: u32,
    },
    /// `run` (≥ 1) all-zero planes from plane `top` down.
    ZeroRun {
        /// Highest plane of the run.
        top: usize,
        /// Planes in the run.
        run: usize,
    },
    /// One plane of another class.
    Plane {
        /// Plane index.
        j: usize,
        /// Its class.
        class: PlaneCode,
    },
}

impl Token {
    /// Bits of this token.
    pub fn bits(&self, p: &BpcParams) -> usize {
        match *self {
            Token::Base {
                code_bits,
                value_bits,
                ..
            } => (code_bits + value_bits) as usize,
            Token::ZeroRun { run: 1, .. } => 3,
            Token::ZeroRun { .. } => 2 + p.run_bits() as usize,
            Token::Plane { class, .. } => match class {
                PlaneCode::AllOnes | PlaneCode::DbpZero => 5,
                PlaneCode::TwoOnes | PlaneCode::OneOne => 5 + p.pos_bits() as usize,
                PlaneCode::Raw => 1 + p.plane_bits() as usize,
                PlaneCode::Zero => 0,
            },
        }
    }
}

/// A block's tokens, in stream order, with its planes (`dbp`, `dbx`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BpcTokens {
    /// The base, then the planes from the top down.
    pub tokens: Vec<Token>,
    /// Symbol 0.
    pub base: u64,
    /// `DBP[0..=sym_bits]`.
    pub dbp: Vec<u64>,
    /// `DBX[0..=sym_bits]`.
    pub dbx: Vec<u64>,
}

impl BpcTokens {
    /// Stream length in bits.
    pub fn bits(&self, p: &BpcParams) -> usize {
        self.tokens.iter().map(|t| t.bits(p)).sum()
    }
}

/// Tokenizes a block (the encoder's decisions, without the stream).
pub fn tokens(p: &BpcParams, line: &[u8]) -> Result<BpcTokens, ModelError> {
    let dbp = planes(p, line)?;
    let base = symbols(p, line)[0];
    let top = p.planes() - 1;
    let dbx: Vec<u64> = (0..=top)
        .map(|j| {
            if j == top {
                dbp[j]
            } else {
                dbp[j] ^ dbp[j + 1]
            }
        })
        .collect();
    let (code, code_bits, value_bits) = base_code(p, base);
    let mut tokens = vec![Token::Base {
        code,
        code_bits,
        value_bits,
    }];
    let mut j = top as isize;
    while j >= 0 {
        let ju = j as usize;
        let class = classify_plane(p, dbx[ju], dbp[ju]);
        if class == PlaneCode::Zero {
            let mut run = 1;
            while run <= ju && dbx[ju - run] == 0 {
                run += 1;
            }
            tokens.push(Token::ZeroRun { top: ju, run });
            j -= run as isize;
        } else {
            tokens.push(Token::Plane { j: ju, class });
            j -= 1;
        }
    }
    Ok(BpcTokens {
        tokens,
        base,
        dbp,
        dbx,
    })
}

/// The BPC stream of a block: `(bytes, nbits)`, MSB-first, zero-padded; may be longer than
/// the block (at most [`BpcParams::max_stream_bits`]).
pub fn encode(p: &BpcParams, line: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
    let t = tokens(p, line)?;
    let mut w = BitWriter::new();
    for tok in &t.tokens {
        match *tok {
            Token::Base {
                code,
                code_bits,
                value_bits,
            } => {
                w.put(code, code_bits);
                w.put(t.base, value_bits);
            }
            Token::ZeroRun { run: 1, .. } => w.put(0b001, 3),
            Token::ZeroRun { run, .. } => {
                w.put(0b01, 2);
                w.put(run as u64 - 2, p.run_bits());
            }
            Token::Plane { j, class } => {
                let x = t.dbx[j];
                match class {
                    PlaneCode::Raw => {
                        w.put(1, 1);
                        w.put(x, p.plane_bits());
                    }
                    c => {
                        w.put(p.prefixes.prefix(c).unwrap_or(0) as u64, 5);
                        if matches!(c, PlaneCode::TwoOnes | PlaneCode::OneOne) {
                            w.put(x.trailing_zeros() as u64, p.pos_bits());
                        }
                    }
                }
            }
        }
    }
    Ok(w.finish())
}

/// Length in bits of the whole BPC stream (no raw fallback), without building it.
pub fn stream_bits(p: &BpcParams, line: &[u8]) -> Result<usize, ModelError> {
    Ok(tokens(p, line)?.bits(p))
}

/// Result of compressing one block as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BpcCompressed {
    /// Whether the stream is sent (else the raw block).
    pub compressed: bool,
    /// The BPC stream's length, also when it is not sent.
    pub stream_bits: usize,
    /// The stream or the raw block.
    pub bits: Vec<u8>,
    /// Bits sent.
    pub nbits: usize,
}

/// Compresses one block: the BPC stream if it is shorter than the block, else the block.
pub fn compress(p: &BpcParams, line: &[u8]) -> Result<BpcCompressed, ModelError> {
    let (bits, stream_bits) = encode(p, line)?;
    if stream_bits >= p.line_bits() {
        return Ok(BpcCompressed {
            compressed: false,
            stream_bits,
            bits: line.to_vec(),
            nbits: p.line_bits(),
        });
    }
    Ok(BpcCompressed {
        compressed: true,
        stream_bits,
        bits,
        nbits: stream_bits,
    })
}

/// Size in bits of the block as sent (the stream, or the block when the stream is not
/// shorter).
pub fn size_bits(p: &BpcParams, line: &[u8]) -> Result<usize, ModelError> {
    Ok(stream_bits(p, line)?.min(p.line_bits()))
}

/// Decodes the planes and the block from a reader (the stream's own end is self-delimiting).
fn decode(p: &BpcParams, r: &mut BitReader) -> Result<Vec<u8>, ModelError> {
    let base = if r.get(1, "BPC base code")? == 1 {
        r.get(p.sym_bits, "BPC base value")?
    } else {
        let bits = [0, 4, 8, 16][r.get(2, "BPC base code")? as usize];
        let v = if bits == 0 {
            0
        } else {
            r.get(bits, "BPC base value")?
        };
        // Sign-extend to the symbol width (a value wider than the symbol, which no
        // compressor writes, keeps its low `sym_bits` bits).
        let sh = 64 - bits.max(1);
        let s = ((v << sh) as i64 >> sh) as u64;
        s & p.sym_mask()
    };
    let np = p.planes();
    let n = p.plane_bits();
    let mask = p.plane_mask();
    let mut dbp = vec![0u64; np];
    let mut prev = 0u64;
    let mut j = np;
    while j > 0 {
        let plane = j - 1;
        let here = |what: &str| format!("BPC {what} (plane {plane})");
        if r.get(1, &here("code"))? == 1 {
            prev ^= r.get(n, &here("raw plane"))?;
            dbp[plane] = prev;
            j -= 1;
            continue;
        }
        if r.get(1, &here("code"))? == 1 {
            let run = r.get(p.run_bits(), &here("zero-run length"))? as usize + 2;
            if run > j {
                return Err(ModelError::Corrupt(format!(
                    "BPC zero run of {run} planes at plane {plane} runs past plane 0"
                )));
            }
            dbp[j - run..j].fill(prev);
            j -= run;
            continue;
        }
        if r.get(1, &here("code"))? == 1 {
            dbp[plane] = prev;
            j -= 1;
            continue;
        }
        let pre = r.get(2, &here("code"))? as u8;
        match p.prefixes.class(pre) {
            PlaneCode::AllOnes => prev ^= mask,
            PlaneCode::DbpZero => prev = 0,
            c => {
                let pos = r.get(p.pos_bits(), &here("position"))? as u32;
                let (ones, width) = if c == PlaneCode::TwoOnes {
                    (3u64, 2)
                } else {
                    (1u64, 1)
                };
                if pos + width > n {
                    return Err(ModelError::Corrupt(format!(
                        "BPC {} position {pos} outside the {n}-bit plane {plane}",
                        c.name()
                    )));
                }
                prev ^= ones << pos;
            }
        }
        dbp[plane] = prev;
        j -= 1;
    }
    // The symbols: each delta's low `sym_bits` bits, summed modulo 2^sym_bits.
    let sym_mask = p.sym_mask();
    let mut w = base;
    let mut out = Vec::with_capacity(p.line_bytes);
    let sb = p.sym_bits as usize / 8;
    out.extend_from_slice(&w.to_le_bytes()[..sb]);
    for k in 0..n {
        let d = (0..p.sym_bits as usize).fold(0u64, |d, jj| d | (((dbp[jj] >> k) & 1) << jj));
        w = w.wrapping_add(d) & sym_mask;
        out.extend_from_slice(&w.to_le_bytes()[..sb]);
    }
    Ok(out)
}

/// Decodes one BPC stream from the start of `data` (self-delimiting, no raw mode); returns
/// the block and the number of bits consumed.
pub fn decompress_prefix(p: &BpcParams, data: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
    p.validate()?;
    super::bits::decode_prefix(data, |r| decode(p, r))
}

/// Decodes the stream at the start of `data` reading at most its first `limit` bits (the
/// decompressor unit: an entry's metadata code bounds its stream, bits after the stream are
/// not inspected); returns the block.
pub fn decompress_within(p: &BpcParams, data: &[u8], limit: usize) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    let mut r = BitReader::new(data, limit)?;
    decode(p, &mut r)
}

/// Decompresses a stream of exactly `nbits` bits; `nbits == 8·line_bytes` is the raw block.
/// Truncated, over-long or corrupt streams are errors.
pub fn decompress(p: &BpcParams, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    super::bits::decode_exact(bits, nbits, p.line_bytes, |r| decode(p, r))
}

#[cfg(test)]
mod tests;
