//! Base+XOR Transfer golden model, bit-exact (Lee, O'Connor, Chatterjee, HPCA'18; spec
//! docs/FORMATS.md, Base+XOR §2.0–§2.3, §2.5).
//!
//! A transaction of `t_bytes` (default one 32 B sector) is re-encoded in place, without
//! metadata, so that similar elements turn into mostly-zero bits:
//!
//! * **N-byte** (§2.1): element 0 goes out raw, element i as `e_i ^ e_{i-1}` (adjacent) or
//!   `e_i ^ e_0` (`fixed_base`); decode is a prefix-XOR.
//! * **Universal** (§2.3): a fixed halving tree; unit j is XORed with unit `partner(j)` = j with
//!   its most-significant set bit cleared (units of `t_bytes / 2^stages` bytes).
//! * **Zero Data Remapping** (§2.2), per `zdr_bits` chunk against the chunk's XOR partner:
//!   `x == 0 → C`, `x == base ^ C → base`, else `x ^ base` (C = `1 << (zdr_bits - 2)` by default,
//!   i.e. 0x4000_0000 for 32 bits).
//!
//! Element order (§2.0): the sector is loaded as little-endian 32-bit words W\[k\] (bytes
//! 4k..4k+3), W\[0\] is the left-most element. At 16-bit granularity the *upper* half of a word
//! is the left one by default ([`HalfOrder::UpperFirst`]); 64-bit chunks are little-endian
//! `W[2i] | W[2i+1] << 32` (the ZDR constant of a 64-bit chunk is bit 62, in the second word).
//!
//! Internally every scheme is the same thing: the transaction is cut into *units* of
//! [`BaseXorParams::unit_bits`] bits, each unit has at most one partner with a smaller index,
//! encode XORs (or ZDR-encodes) every unit with its partner's original value and decode walks
//! the units in increasing order using the partner's decoded value. See `docs/FORMATS.md`,
//! section "Base+XOR".

use super::ModelError;
use serde::{Deserialize, Serialize};

/// Which Base+XOR scheme (FORMATS §2.1, §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// No XOR transform (raw data; DBI may still apply).
    None,
    /// N-byte Base+XOR (fixed element size `n_bytes`). YAML `nbyte`, as [`Scheme::name`]
    /// and the config documentation say (kebab-case alone would make it `n-byte`).
    #[serde(rename = "nbyte", alias = "n-byte")]
    NByte,
    /// Universal Base+XOR (halving XOR tree over `stages` stages).
    #[default]
    Universal,
}

impl Scheme {
    /// Name as used in YAML and reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::None => "none",
            Scheme::NByte => "nbyte",
            Scheme::Universal => "universal",
        }
    }
}

/// Order of the two 16-bit halves of a 32-bit word (FORMATS §2.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum HalfOrder {
    /// `[31:16]` is the left (base) half: H\[2k\] = W\[k\]\[31:16\] (the spec's default,
    /// inferred from Fig. 8b's `0x400e 215f`).
    #[default]
    UpperFirst,
    /// Byte-address order: H\[2k\] = W\[k\]\[15:0\].
    Address,
}

/// Parameters of the Base+XOR transform (everything but DBI).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BaseXorParams {
    /// Scheme.
    pub scheme: Scheme,
    /// Transaction size in bytes: 16, 32 (a GDDR5X sector, default) or 64.
    pub t_bytes: u32,
    /// Element size of the N-byte scheme: 2, 4 or 8.
    pub n_bytes: u32,
    /// N-byte variant: XOR every element with element 0 instead of its left neighbour.
    pub fixed_base: bool,
    /// Universal: number of halving stages (smallest base = `t_bytes >> stages` ≥ 2 bytes).
    pub stages: u32,
    /// Zero Data Remapping on every XORed chunk.
    pub zdr: bool,
    /// ZDR chunk width in bits (16, 32 or 64); `None` = the spec's default: 16 when the XOR
    /// pairing is at 2-byte granularity, 32 otherwise.
    pub zdr_bits: Option<u32>,
    /// ZDR constant; `None` = `1 << (zdr_bits - 2)` (0x4000_0000 for 32 bits).
    pub zdr_const: Option<u64>,
    /// Extension, not in the paper (§2.2): leave a chunk unremapped when its base is zero.
    pub zdr_skip_zero_base: bool,
    /// Halfword order at 16-bit granularity.
    pub half_order: HalfOrder,
}

impl Default for BaseXorParams {
    /// The spec's recommended pipeline transform (§2.5): Universal, T = 32 B, S = 3, ZDR.
    fn default() -> Self {
        BaseXorParams {
            scheme: Scheme::Universal,
            t_bytes: 32,
            n_bytes: 4,
            fixed_base: false,
            stages: 3,
            zdr: true,
            zdr_bits: None,
            zdr_const: None,
            zdr_skip_zero_base: false,
            half_order: HalfOrder::UpperFirst,
        }
    }
}

impl BaseXorParams {
    /// N-byte adjacent Base+XOR on a 32 B sector, with or without ZDR.
    pub fn nbyte(n_bytes: u32, zdr: bool) -> Self {
        BaseXorParams {
            scheme: Scheme::NByte,
            n_bytes,
            zdr,
            ..Self::default()
        }
    }

    /// Universal Base+XOR on a 32 B sector with `stages` stages.
    pub fn universal(stages: u32, zdr: bool) -> Self {
        BaseXorParams {
            scheme: Scheme::Universal,
            stages,
            zdr,
            ..Self::default()
        }
    }

    /// No transform.
    pub fn none() -> Self {
        BaseXorParams {
            scheme: Scheme::None,
            zdr: false,
            ..Self::default()
        }
    }

    /// Bits of the XOR pairing granularity (element size for N-byte, smallest base for
    /// Universal, the whole transaction for `None`).
    pub fn pair_bits(&self) -> u32 {
        match self.scheme {
            Scheme::None => self.t_bytes * 8,
            Scheme::NByte => self.n_bytes * 8,
            Scheme::Universal => (self.t_bytes >> self.stages.min(31)) * 8,
        }
    }

    /// Effective ZDR chunk width in bits.
    pub fn zdr_width(&self) -> u32 {
        self.zdr_bits
            .unwrap_or(if self.pair_bits() == 16 { 16 } else { 32 })
    }

    /// Effective ZDR constant.
    pub fn zdr_constant(&self) -> u64 {
        self.zdr_const.unwrap_or(1u64 << (self.zdr_width() - 2))
    }

    /// Width of the units the transform works on: the pairing granularity, refined to the ZDR
    /// chunk width when ZDR is on.
    pub fn unit_bits(&self) -> u32 {
        let p = self.pair_bits().min(64);
        if self.zdr && self.scheme != Scheme::None {
            p.min(self.zdr_width())
        } else if self.scheme == Scheme::None {
            32
        } else {
            p
        }
    }

    /// Number of units in a transaction.
    pub fn units(&self) -> usize {
        (self.t_bytes * 8 / self.unit_bits()) as usize
    }

    /// The partner of every unit (`None` for base units), always with a smaller index.
    pub fn partners(&self) -> Vec<Option<usize>> {
        let n = self.units();
        let r = (self.pair_bits() / self.unit_bits()) as usize; // units per pairing element
        (0..n)
            .map(|j| {
                let (e, s) = (j / r, j % r);
                let pe = match self.scheme {
                    Scheme::None => None,
                    Scheme::NByte if e == 0 => None,
                    Scheme::NByte if self.fixed_base => Some(0),
                    Scheme::NByte => Some(e - 1),
                    Scheme::Universal if e == 0 => None,
                    Scheme::Universal => {
                        Some(e - (1usize << (usize::BITS - 1 - e.leading_zeros())))
                    }
                };
                pe.map(|p| p * r + s)
            })
            .collect()
    }

    /// XOR levels of the decoder's critical path in the plain (serial) structure of the
    /// paper: T/N − 1 for adjacent N-byte, 1 for fixed base, S for Universal, 0 for none.
    pub fn decode_depth(&self) -> u32 {
        let p = self.partners();
        let mut depth = vec![0u32; p.len()];
        for j in 0..p.len() {
            if let Some(q) = p[j] {
                depth[j] = depth[q] + 1;
            }
        }
        depth.into_iter().max().unwrap_or(0)
    }

    /// Checks the parameter set; the error names the value and what is allowed.
    pub fn validate(&self) -> Result<(), ModelError> {
        if !matches!(self.t_bytes, 16 | 32 | 64) {
            return Err(ModelError::param(
                "t_bytes",
                self.t_bytes,
                "allowed values are 16, 32, 64",
            ));
        }
        // Every key is checked, whether the scheme uses it or not: a value that would be
        // wrong for its own scheme is a mistake in the file either way.
        if !matches!(self.n_bytes, 2 | 4 | 8) {
            return Err(ModelError::param(
                "n_bytes",
                self.n_bytes,
                "allowed values are 2, 4, 8",
            ));
        }
        if self.stages == 0 || self.stages > 5 || (self.t_bytes >> self.stages) < 2 {
            return Err(ModelError::param(
                "stages",
                self.stages,
                format!(
                    "must be ≥ 1 with t_bytes / 2^stages ≥ 2 bytes (t_bytes = {}: at most {})",
                    self.t_bytes,
                    (self.t_bytes / 2).trailing_zeros()
                ),
            ));
        }
        if self.zdr && self.scheme != Scheme::None {
            let w = self.zdr_width();
            if !matches!(w, 16 | 32 | 64) || w > self.pair_bits() {
                return Err(ModelError::param(
                    "zdr_bits",
                    w,
                    format!(
                        "allowed values are 16, 32, 64, at most the XOR pairing granularity ({} bits)",
                        self.pair_bits()
                    ),
                ));
            }
            let c = self.zdr_constant();
            if c == 0 || (w < 64 && c >> w != 0) {
                return Err(ModelError::param(
                    "zdr_const",
                    format!("{:#x}", c),
                    format!("must be non-zero and fit in zdr_bits = {}", w),
                ));
            }
        }
        Ok(())
    }

    /// Short description for reports (`universal s3 zdr32`).
    pub fn describe(&self) -> String {
        let mut s = match self.scheme {
            Scheme::None => "none".to_string(),
            Scheme::NByte => format!(
                "{}-byte{}",
                self.n_bytes,
                if self.fixed_base { " fixed-base" } else { "" }
            ),
            Scheme::Universal => format!("universal s{}", self.stages),
        };
        if self.t_bytes != 32 {
            s.push_str(&format!(" t{}", self.t_bytes));
        }
        if self.zdr && self.scheme != Scheme::None {
            s.push_str(&format!(" zdr{}", self.zdr_width()));
            if self.zdr_const.is_some() {
                s.push_str(&format!(" c={:#x}", self.zdr_constant()));
            }
            if self.zdr_skip_zero_base {
                s.push_str(" skip-zero-base");
            }
        }
        if self.unit_bits() == 16 && self.half_order == HalfOrder::Address {
            s.push_str(" half-address");
        }
        s
    }
}

/// ZDR encode of one chunk (FORMATS §2.2, Fig. 10): `x` the element, `base` its partner's original
/// value, `c` the constant.
pub fn zdr_encode(x: u64, base: u64, c: u64) -> u64 {
    if x == 0 {
        c
    } else if x ^ base ^ c == 0 {
        base
    } else {
        x ^ base
    }
}

/// ZDR decode of one chunk (FORMATS §2.2, derived): `y` the code, `base` the partner's decoded
/// value. The `y == c` test comes first (degenerate case `base == c`).
pub fn zdr_decode(y: u64, base: u64, c: u64) -> u64 {
    if y == c {
        0
    } else if y == base {
        base ^ c
    } else {
        y ^ base
    }
}

/// Little-endian 32-bit words of a byte buffer (length a multiple of 4).
pub fn words_le(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Bytes of little-endian 32-bit words.
pub fn bytes_le(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Cuts words into units of `bits` (16, 32, 64; or 128+ for a whole `None` transaction is
/// never needed: `None` uses 32-bit units) in element order.
fn to_units(words: &[u32], bits: u32, order: HalfOrder) -> Vec<u64> {
    match bits {
        16 => words
            .iter()
            .flat_map(|&w| {
                let (hi, lo) = ((w >> 16) as u64, (w & 0xffff) as u64);
                match order {
                    HalfOrder::UpperFirst => [hi, lo],
                    HalfOrder::Address => [lo, hi],
                }
            })
            .collect(),
        32 => words.iter().map(|&w| w as u64).collect(),
        _ => words
            .chunks_exact(2)
            .map(|c| c[0] as u64 | (c[1] as u64) << 32)
            .collect(),
    }
}

/// Words from units of `bits` (16, 32, 64) in element order: the inverse of the unit split
/// used by [`encode_words`] (16-bit units in `order`, 64-bit units little-endian over two
/// words). Unit values are truncated to `bits`.
pub fn from_units(units: &[u64], bits: u32, order: HalfOrder) -> Vec<u32> {
    match bits {
        16 => units
            .chunks_exact(2)
            .map(|c| {
                let (a, b) = (c[0] as u32 & 0xffff, c[1] as u32 & 0xffff);
                match order {
                    HalfOrder::UpperFirst => a << 16 | b,
                    HalfOrder::Address => b << 16 | a,
                }
            })
            .collect(),
        32 => units.iter().map(|&u| u as u32).collect(),
        _ => units
            .iter()
            .flat_map(|&u| [u as u32, (u >> 32) as u32])
            .collect(),
    }
}

fn check_len(p: &BaseXorParams, len: usize) -> Result<(), ModelError> {
    if len != p.t_bytes as usize {
        return Err(ModelError::param(
            "transaction length",
            len,
            format!("must be t_bytes = {} bytes", p.t_bytes),
        ));
    }
    Ok(())
}

/// Encodes one transaction of 32-bit words (`t_bytes / 4` of them).
pub fn encode_words(p: &BaseXorParams, words: &[u32]) -> Result<Vec<u32>, ModelError> {
    p.validate()?;
    check_len(p, words.len() * 4)?;
    let ub = p.unit_bits();
    let e = to_units(words, ub, p.half_order);
    let partners = p.partners();
    let zdr = p.zdr && p.scheme != Scheme::None;
    let c = p.zdr_constant();
    let out: Vec<u64> = e
        .iter()
        .zip(&partners)
        .map(|(&x, q)| match q {
            None => x,
            Some(q) => {
                let b = e[*q];
                if zdr && !(p.zdr_skip_zero_base && b == 0) {
                    zdr_encode(x, b, c)
                } else {
                    x ^ b
                }
            }
        })
        .collect();
    Ok(from_units(&out, ub, p.half_order))
}

/// Decodes one transaction of 32-bit words (inverse of [`encode_words`]; every code word
/// decodes, since each unit's map is a bijection for a fixed base).
pub fn decode_words(p: &BaseXorParams, words: &[u32]) -> Result<Vec<u32>, ModelError> {
    p.validate()?;
    check_len(p, words.len() * 4)?;
    let ub = p.unit_bits();
    let y = to_units(words, ub, p.half_order);
    let partners = p.partners();
    let zdr = p.zdr && p.scheme != Scheme::None;
    let c = p.zdr_constant();
    let mut d = vec![0u64; y.len()];
    for j in 0..y.len() {
        d[j] = match partners[j] {
            None => y[j],
            Some(q) => {
                let b = d[q];
                if zdr && !(p.zdr_skip_zero_base && b == 0) {
                    zdr_decode(y[j], b, c)
                } else {
                    y[j] ^ b
                }
            }
        };
    }
    Ok(from_units(&d, ub, p.half_order))
}

/// Encodes one transaction given as bytes.
pub fn encode(p: &BaseXorParams, sector: &[u8]) -> Result<Vec<u8>, ModelError> {
    check_len(p, sector.len())?;
    Ok(bytes_le(&encode_words(p, &words_le(sector))?))
}

/// Decodes one transaction given as bytes.
pub fn decode(p: &BaseXorParams, sector: &[u8]) -> Result<Vec<u8>, ModelError> {
    check_len(p, sector.len())?;
    Ok(bytes_le(&decode_words(p, &words_le(sector))?))
}

/// Ones in a slice of words.
pub fn ones(words: &[u32]) -> u64 {
    words.iter().map(|w| w.count_ones() as u64).sum()
}

#[cfg(test)]
mod tests;
