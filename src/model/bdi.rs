//! Base-Delta-Immediate (BDI) golden model, bit-exact (Pekhimenko et al., PACT'12, with the
//! encodings of Tavana et al., IPDPS'19, Table II; docs/FORMATS.md, adaptive §2.0,
//! §2.1).
//!
//! A line of `line_bytes` (32, 64 or 128; 64 by default; 16 for proofs, where Base8-Δ4 is
//! longer than the line and never sent) is compressed as a whole into one of
//! eight encodings with a 4-bit prefix, or sent uncompressed (signalled out of band, by the
//! message header's Comp Alg field):
//!
//! | Prefix | Encoding | k × n (64 B) | d | Total bits (64 B) |
//! |---|---|---|---|---|
//! | 0000 | zero line | – | – | 4 |
//! | 0001 | repeated 8-byte value | 8 × 8 | – | 68 |
//! | 0010 | Base8-Δ1 | 8 × 8 | 1 | 140 |
//! | 0011 | Base8-Δ2 | 8 × 8 | 2 | 204 |
//! | 0100 | Base8-Δ4 | 8 × 8 | 4 | 332 |
//! | 0101 | Base4-Δ1 | 4 × 16 | 1 | 180 |
//! | 0110 | Base4-Δ2 | 4 × 16 | 2 | 308 |
//! | 0111 | Base2-Δ1 | 2 × 32 | 1 | 308 |
//! | – | uncompressed | – | – | 512 |
//!
//! * **Two bases**: an explicit base B (k bytes) and the implicit zero base. Element `v_i`
//!   fits if `v_i` (immediate) or `v_i − B` (mod 2^(8k)), read as a signed k-byte value, lies in
//!   `[−2^(8d−1), 2^(8d−1)−1]` (signed sign-extension check; *not* gem5's off-by-one limit).
//!   The per-element mask bit is 1 for the explicit base and 0 for the zero base; an element
//!   that fits both ways is an immediate.
//! * **Base choice** ([`BaseRule`]): element 0 (the paper, default) or the first element that is
//!   not an immediate (gem5/common reading; B = 0 if every element is an immediate).
//! * **Selection**: the minimum total size over all encodings that apply; on equal size the
//!   smaller data part wins (Base2-Δ1 over Base4-Δ2 at 308 bits for 64 B lines, §2.1), then
//!   the lower prefix.
//! * **Stream** (MSB-first, [`super::bits`]): `enc[3:0] | mask (element 0 first, n bits) |
//!   B (8k bits) | Δ_0 … Δ_{n−1} (8d bits each, two's complement)`; the repeated encoding is
//!   `enc | value (64 bits)`; the zero line is `enc` alone. The last byte is zero-padded.
//!   Elements are little-endian k-byte values (byte 0 of the line is the least significant
//!   byte of element 0).
//! * **Uncompressed**: the raw line, `8·line_bytes` bits, no prefix. Every compressed stream
//!   is shorter than the line, so [`decompress`] treats `nbits == 8·line_bytes` as raw.
//!
//! See `docs/FORMATS.md`, section "Adaptive link compression".

use super::bits::{BitReader, BitWriter};
use super::ModelError;
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// How the explicit base is chosen (FORMATS §2.1, "Base choice: ambiguous").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum BaseRule {
    /// The first element of the line, whatever it is (the paper's text; default).
    #[default]
    Element0,
    /// The first element that is not representable as an immediate (gem5 `bdi.cc`, the
    /// common reading of the original BDI); B = 0 when every element is an immediate.
    FirstNonImmediate,
}

/// Parameters of the BDI model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BdiParams {
    /// Line size in bytes: 32, 64 (default, the paper) or 128; 16 for proofs.
    pub line_bytes: usize,
    /// Base selection rule.
    pub base_rule: BaseRule,
}

impl Default for BdiParams {
    fn default() -> Self {
        BdiParams {
            line_bytes: 64,
            base_rule: BaseRule::Element0,
        }
    }
}

impl BdiParams {
    /// 64 B lines with the given base rule.
    pub fn with_rule(base_rule: BaseRule) -> Self {
        BdiParams {
            base_rule,
            ..Self::default()
        }
    }
}

impl LineParams for BdiParams {
    fn line_bytes(&self) -> usize {
        self.line_bytes
    }
}

/// A BDI encoding (FORMATS §2.1 / paper Table II). The discriminant is the 4-bit prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BdiEncoding {
    /// `0000` all-zero line.
    Zero = 0,
    /// `0001` the same 8-byte value repeated over the whole line.
    Repeated = 1,
    /// `0010` Base8-Δ1.
    B8D1 = 2,
    /// `0011` Base8-Δ2.
    B8D2 = 3,
    /// `0100` Base8-Δ4.
    B8D4 = 4,
    /// `0101` Base4-Δ1.
    B4D1 = 5,
    /// `0110` Base4-Δ2.
    B4D2 = 6,
    /// `0111` Base2-Δ1.
    B2D1 = 7,
    /// Sent raw (no prefix; Comp Alg = 0 in the header).
    Uncompressed = 15,
}

impl BdiEncoding {
    /// The eight compressed encodings in prefix order.
    pub const COMPRESSED: [BdiEncoding; 8] = [
        BdiEncoding::Zero,
        BdiEncoding::Repeated,
        BdiEncoding::B8D1,
        BdiEncoding::B8D2,
        BdiEncoding::B8D4,
        BdiEncoding::B4D1,
        BdiEncoding::B4D2,
        BdiEncoding::B2D1,
    ];

    /// The six base-delta encodings (the compressed ones after zero and repeated), grouped
    /// by element size (8, 4, 2 bytes).
    pub const BASE_DELTA: &'static [BdiEncoding] = Self::COMPRESSED.split_at(2).1;

    /// The 4-bit prefix, `None` for [`BdiEncoding::Uncompressed`].
    pub fn prefix(self) -> Option<u8> {
        match self {
            BdiEncoding::Uncompressed => None,
            e => Some(e as u8),
        }
    }

    /// Decodes a 4-bit prefix (0..=7); 8..=15 are reserved.
    pub fn from_prefix(p: u8) -> Option<Self> {
        Self::COMPRESSED.get(p as usize).copied()
    }

    /// Pattern number of the paper's Table II (1..=9: prefix + 1, 9 = uncompressed).
    pub fn table_ii_number(self) -> u8 {
        match self {
            BdiEncoding::Uncompressed => 9,
            e => e as u8 + 1,
        }
    }

    /// `(k, d)`: element and delta size in bytes of a base-delta encoding.
    pub fn base_delta(self) -> Option<(usize, usize)> {
        match self {
            BdiEncoding::B8D1 => Some((8, 1)),
            BdiEncoding::B8D2 => Some((8, 2)),
            BdiEncoding::B8D4 => Some((8, 4)),
            BdiEncoding::B4D1 => Some((4, 1)),
            BdiEncoding::B4D2 => Some((4, 2)),
            BdiEncoding::B2D1 => Some((2, 1)),
            _ => None,
        }
    }

    /// Data bits (base + deltas, or the repeated value) for a line of `line_bytes`.
    pub fn data_bits(self, line_bytes: usize) -> usize {
        match self {
            BdiEncoding::Zero => 0,
            BdiEncoding::Repeated => 64,
            BdiEncoding::Uncompressed => line_bytes * 8,
            e => {
                let (k, d) = e.base_delta().unwrap_or((8, 8));
                8 * k + (line_bytes / k) * 8 * d
            }
        }
    }

    /// Metadata bits (4-bit prefix + n-bit mask; 0 for uncompressed).
    pub fn meta_bits(self, line_bytes: usize) -> usize {
        match self {
            BdiEncoding::Uncompressed => 0,
            e => 4 + e.base_delta().map_or(0, |(k, _)| line_bytes / k),
        }
    }

    /// Total size in bits (data + metadata), Table II's last column for 64 B lines.
    pub fn size_bits(self, line_bytes: usize) -> usize {
        self.data_bits(line_bytes) + self.meta_bits(line_bytes)
    }

    /// Short name (`zero`, `rep8`, `b8d1`, …, `uncompressed`).
    pub fn name(self) -> &'static str {
        match self {
            BdiEncoding::Zero => "zero",
            BdiEncoding::Repeated => "rep8",
            BdiEncoding::B8D1 => "b8d1",
            BdiEncoding::B8D2 => "b8d2",
            BdiEncoding::B8D4 => "b8d4",
            BdiEncoding::B4D1 => "b4d1",
            BdiEncoding::B4D2 => "b4d2",
            BdiEncoding::B2D1 => "b2d1",
            BdiEncoding::Uncompressed => "uncompressed",
        }
    }
}

/// Result of compressing one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BdiCompressed {
    /// Chosen encoding.
    pub encoding: BdiEncoding,
    /// Explicit base B of a base-delta encoding (the repeated value for `Repeated`, else 0).
    pub base: u64,
    /// Mask of a base-delta encoding, bit i = element i (1 = explicit base), else 0.
    pub mask: u64,
    /// The stream, `nbits.div_ceil(8)` bytes, MSB-first, zero-padded (the raw line when
    /// uncompressed).
    pub bits: Vec<u8>,
    /// Stream length in bits (`8·line_bytes` when uncompressed).
    pub nbits: usize,
}

impl BdiCompressed {
    /// Whether the line is sent compressed.
    pub fn is_compressed(&self) -> bool {
        self.encoding != BdiEncoding::Uncompressed
    }
}

/// Little-endian k-byte elements of the line.
fn elements(line: &[u8], k: usize) -> Vec<u64> {
    line.chunks_exact(k)
        .map(|c| c.iter().rev().fold(0u64, |a, &b| (a << 8) | b as u64))
        .collect()
}

fn kmask(k: usize) -> u64 {
    if k == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * k)) - 1
    }
}

/// Whether the k-byte value `v`, read as signed, is the sign extension of a d-byte value.
fn fits(v: u64, k: usize, d: usize) -> bool {
    let sh = 64 - 8 * k as u32;
    let s = ((v << sh) as i64) >> sh;
    let lim = 1i64 << (8 * d - 1);
    (-lim..lim).contains(&s)
}

/// A successful base-delta fit: base, mask and the d-byte deltas (as k-byte differences).
struct Fit {
    base: u64,
    mask: u64,
    deltas: Vec<u64>,
}

fn try_base_delta(line: &[u8], k: usize, d: usize, rule: BaseRule) -> Option<Fit> {
    let e = elements(line, k);
    let m = kmask(k);
    let base = match rule {
        BaseRule::Element0 => e[0],
        BaseRule::FirstNonImmediate => e.iter().copied().find(|&v| !fits(v, k, d)).unwrap_or(0),
    };
    let mut mask = 0u64;
    let mut deltas = Vec::with_capacity(e.len());
    for (i, &v) in e.iter().enumerate() {
        if fits(v, k, d) {
            deltas.push(v);
        } else {
            let dv = v.wrapping_sub(base) & m;
            if !fits(dv, k, d) {
                return None;
            }
            mask |= 1 << i;
            deltas.push(dv);
        }
    }
    Some(Fit { base, mask, deltas })
}

/// Every encoding that applies to the line, with its base/mask data (uncompressed excluded).
fn candidates(p: &BdiParams, line: &[u8]) -> Vec<(BdiEncoding, Fit)> {
    let mut out = Vec::new();
    if line.iter().all(|&b| b == 0) {
        out.push((
            BdiEncoding::Zero,
            Fit {
                base: 0,
                mask: 0,
                deltas: vec![],
            },
        ));
    }
    let w8 = elements(line, 8);
    if w8.iter().all(|&w| w == w8[0]) {
        out.push((
            BdiEncoding::Repeated,
            Fit {
                base: w8[0],
                mask: 0,
                deltas: vec![],
            },
        ));
    }
    for enc in &BdiEncoding::COMPRESSED[2..] {
        let (k, d) = enc.base_delta().unwrap_or((8, 8));
        if let Some(f) = try_base_delta(line, k, d, p.base_rule) {
            out.push((*enc, f));
        }
    }
    out
}

fn select(p: &BdiParams, line: &[u8]) -> Option<(BdiEncoding, Fit)> {
    let lb = p.line_bytes;
    candidates(p, line)
        .into_iter()
        .min_by_key(|(e, _)| (e.size_bits(lb), e.data_bits(lb), *e as u8))
        .filter(|(e, _)| e.size_bits(lb) < p.line_bits())
}

/// The encoding BDI selects for `line` (without building the stream): the size-only fast
/// path. It tries the encodings from the smallest (same order and tie-break as
/// [`compress`]) and stops at the first that fits, reading the line in place without
/// allocating; `tests::size_only_equals_stream_length` checks it against [`compress`].
pub fn classify(p: &BdiParams, line: &[u8]) -> Result<BdiEncoding, ModelError> {
    p.check_line(line)?;
    let raw = p.line_bits();
    // Element-0 base: one pass per element size gives the delta width every encoding of
    // that size needs (`need_bytes`), computed when first asked.
    let mut need: [Option<Option<usize>>; 3] = [None; 3];
    for &e in size_order(p.line_bytes) {
        if e.size_bits(p.line_bytes) >= raw {
            break;
        }
        let ok = match e {
            BdiEncoding::Zero => line.iter().all(|&b| b == 0),
            BdiEncoding::Repeated => line.chunks_exact(8).all(|c| c == &line[..8]),
            _ => {
                let (k, d) = e.base_delta().unwrap_or((8, 8));
                if p.base_rule == BaseRule::Element0 {
                    let slot = match k {
                        8 => 0,
                        4 => 1,
                        _ => 2,
                    };
                    let n = *need[slot].get_or_insert_with(|| match k {
                        8 => need_bytes::<8>(line, 4),
                        4 => need_bytes::<4>(line, 2),
                        _ => need_bytes::<2>(line, 1),
                    });
                    n.is_some_and(|n| n <= d)
                } else {
                    fits_in_place(line, k, d, p.base_rule)
                }
            }
        };
        if ok {
            return Ok(e);
        }
    }
    Ok(BdiEncoding::Uncompressed)
}

/// The compressed encodings by (size, data bits, prefix): [`select`]'s order.
fn size_order(line_bytes: usize) -> &'static [BdiEncoding; 8] {
    use super::bits::LINE_BYTES;
    static ORDERS: std::sync::OnceLock<[[BdiEncoding; 8]; LINE_BYTES.len()]> =
        std::sync::OnceLock::new();
    let orders = ORDERS.get_or_init(|| {
        LINE_BYTES.map(|lb| {
            let mut o = BdiEncoding::COMPRESSED;
            o.sort_by_key(|e| (e.size_bits(lb), e.data_bits(lb), *e as u8));
            o
        })
    });
    // Parameters are validated before any line is read; 64 B is the default.
    let i = LINE_BYTES.iter().position(|&lb| lb == line_bytes);
    &orders[i.unwrap_or(2)]
}

/// Bytes of a signed value: the smallest d with `-2^(8d-1) <= s < 2^(8d-1)`.
fn signed_bytes(s: i64) -> usize {
    let bits = 64 - (s ^ (s >> 63)).leading_zeros() as usize;
    (bits + 8) / 8
}

/// With element 0 as the base: the delta width in bytes that every K-byte element needs
/// (each element the narrower of its immediate and its delta from the base), or `None` once
/// it exceeds `max_d` (then no encoding of this element size fits).
fn need_bytes<const K: usize>(line: &[u8], max_d: usize) -> Option<usize> {
    let sh = 64 - 8 * K as u32;
    let elem = |c: &[u8]| {
        let mut b = [0u8; 8];
        b[..K].copy_from_slice(&c[..K]);
        u64::from_le_bytes(b)
    };
    let sext = |v: u64| ((v << sh) as i64) >> sh;
    let base = elem(line);
    let mut need = 1;
    for c in line.chunks_exact(K) {
        let v = elem(c);
        let n = signed_bytes(sext(v)).min(signed_bytes(sext(v.wrapping_sub(base))));
        if n > need {
            if n > max_d {
                return None;
            }
            need = n;
        }
    }
    Some(need)
}

/// [`try_base_delta`] without building the fit: whether every k-byte element is an
/// immediate (a d-byte sign extension) or within a d-byte delta of the base.
fn fits_in_place(line: &[u8], k: usize, d: usize, rule: BaseRule) -> bool {
    match k {
        2 => fits_k::<2>(line, d, rule),
        4 => fits_k::<4>(line, d, rule),
        _ => fits_k::<8>(line, d, rule),
    }
}

/// [`fits_in_place`] for a constant element size (the element loads compile to plain loads).
fn fits_k<const K: usize>(line: &[u8], d: usize, rule: BaseRule) -> bool {
    let elem = |c: &[u8]| {
        let mut b = [0u8; 8];
        b[..K].copy_from_slice(&c[..K]);
        u64::from_le_bytes(b)
    };
    let m = kmask(K);
    let mut base = match rule {
        BaseRule::Element0 => Some(elem(line)),
        BaseRule::FirstNonImmediate => None,
    };
    for c in line.chunks_exact(K) {
        let v = elem(c);
        if fits(v, K, d) {
            continue;
        }
        let b = *base.get_or_insert(v);
        if !fits(v.wrapping_sub(b) & m, K, d) {
            return false;
        }
    }
    true
}

/// Size in bits of the line as sent: the selected encoding's total, or `8·line_bytes` raw.
pub fn size_bits(p: &BdiParams, line: &[u8]) -> Result<usize, ModelError> {
    Ok(classify(p, line)?.size_bits(p.line_bytes))
}

/// Compresses one line.
pub fn compress(p: &BdiParams, line: &[u8]) -> Result<BdiCompressed, ModelError> {
    p.check_line(line)?;
    let Some((encoding, fit)) = select(p, line) else {
        return Ok(BdiCompressed {
            encoding: BdiEncoding::Uncompressed,
            base: 0,
            mask: 0,
            bits: line.to_vec(),
            nbits: p.line_bits(),
        });
    };
    let mut w = BitWriter::new();
    w.put(encoding as u64, 4);
    match encoding.base_delta() {
        None => {
            if encoding == BdiEncoding::Repeated {
                w.put(fit.base, 64);
            }
        }
        Some((k, d)) => {
            let n = p.line_bytes / k;
            for i in 0..n {
                w.put((fit.mask >> i) & 1, 1);
            }
            w.put(fit.base, 8 * k as u32);
            for &dv in &fit.deltas {
                w.put(dv, 8 * d as u32);
            }
        }
    }
    let (bits, nbits) = w.finish();
    debug_assert_eq!(nbits, encoding.size_bits(p.line_bytes));
    Ok(BdiCompressed {
        encoding,
        base: fit.base,
        mask: fit.mask,
        bits,
        nbits,
    })
}

/// Decodes one compressed line from the start of `data` (self-delimiting, no raw mode) and
/// returns it with the number of bits consumed. Bits after the stream are not inspected.
pub fn decompress_prefix(p: &BdiParams, data: &[u8]) -> Result<(Vec<u8>, usize), ModelError> {
    p.validate()?;
    super::bits::decode_prefix(data, |r| decode(p, r))
}

fn decode(p: &BdiParams, r: &mut BitReader) -> Result<Vec<u8>, ModelError> {
    let lb = p.line_bytes;
    let pre = r.get(4, "BDI encoding")? as u8;
    let enc = BdiEncoding::from_prefix(pre)
        .ok_or_else(|| ModelError::Corrupt(format!("reserved BDI encoding {pre:04b}")))?;
    let mut line = Vec::with_capacity(lb);
    match enc.base_delta() {
        None => {
            let v = if enc == BdiEncoding::Repeated {
                r.get(64, "BDI repeated value")?
            } else {
                0
            };
            for _ in 0..lb / 8 {
                line.extend_from_slice(&v.to_le_bytes());
            }
        }
        Some((k, d)) => {
            let n = lb / k;
            let mut mask = 0u64;
            for i in 0..n {
                mask |= r.get(1, "BDI mask")? << i;
            }
            let base = r.get(8 * k as u32, "BDI base")?;
            for i in 0..n {
                let dv = r.get(8 * d as u32, "BDI delta")?;
                let sh = 64 - 8 * d as u32;
                let sext = (((dv << sh) as i64) >> sh) as u64;
                let b = if (mask >> i) & 1 == 1 { base } else { 0 };
                let v = b.wrapping_add(sext) & kmask(k);
                line.extend_from_slice(&v.to_le_bytes()[..k]);
            }
        }
    }
    Ok(line)
}

/// Decompresses a stream of exactly `nbits` bits in `bits` (`nbits.div_ceil(8)` bytes, zero
/// pad bits). `nbits == 8·line_bytes` is the raw line. Truncated, over-long or corrupt
/// streams (reserved prefixes, non-zero pad bits, trailing bytes) are errors.
pub fn decompress(p: &BdiParams, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    super::bits::decode_exact(bits, nbits, p.line_bytes, |r| decode(p, r))
}

#[cfg(test)]
mod tests;
