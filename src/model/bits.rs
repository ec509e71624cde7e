//! Small MSB-first bit writer and reader shared by the line compressors (BDI, FPC, C-Pack).
//!
//! Bit order (docs/FORMATS.md, adaptive §2.0 \[proposal\]): the first bit written is bit 7
//! of byte 0; every multi-bit field is written most significant bit first; the last byte is
//! right-padded with zero bits. A stream is therefore a `(bytes, nbits)` pair with
//! `bytes.len() == nbits.div_ceil(8)`.

use super::ModelError;

/// MSB-first bit writer.
#[derive(Clone, Debug, Default)]
pub struct BitWriter {
    bytes: Vec<u8>,
    nbits: usize,
}

impl BitWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the low `n` (≤ 64) bits of `v`, most significant first. Bits of `v` above `n`
    /// are ignored.
    pub fn put(&mut self, v: u64, n: u32) {
        debug_assert!(n <= 64);
        for i in (0..n).rev() {
            let bit = (v >> i) & 1;
            if self.nbits.is_multiple_of(8) {
                self.bytes.push(0);
            }
            if bit != 0 {
                let last = self.bytes.len() - 1;
                self.bytes[last] |= 0x80 >> (self.nbits % 8);
            }
            self.nbits += 1;
        }
    }

    /// Appends bytes, each MSB first (byte-string fields such as a raw line).
    pub fn put_bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.put(b as u64, 8);
        }
    }

    /// Number of bits written so far.
    pub fn nbits(&self) -> usize {
        self.nbits
    }

    /// The stream: `nbits.div_ceil(8)` bytes (zero-padded) and the bit count.
    pub fn finish(self) -> (Vec<u8>, usize) {
        (self.bytes, self.nbits)
    }
}

/// MSB-first bit reader over the first `nbits` bits of a byte slice, with bounds checks.
#[derive(Clone, Debug)]
pub struct BitReader<'a> {
    data: &'a [u8],
    nbits: usize,
    pos: usize,
}

impl<'a> BitReader<'a> {
    /// A reader over `data[..]` limited to `nbits` bits; `nbits` larger than the data is an
    /// error ([`ModelError::Truncated`]).
    pub fn new(data: &'a [u8], nbits: usize) -> Result<Self, ModelError> {
        if nbits > data.len() * 8 {
            return Err(ModelError::Truncated {
                what: format!("stream of {nbits} bits"),
                offset: 0,
                needed: nbits.div_ceil(8),
                available: data.len(),
            });
        }
        Ok(BitReader {
            data,
            nbits,
            pos: 0,
        })
    }

    /// A reader over all bits of `data`.
    pub fn whole(data: &'a [u8]) -> Self {
        BitReader {
            data,
            nbits: data.len() * 8,
            pos: 0,
        }
    }

    /// Reads `n` (≤ 64) bits, MSB first. `what` names the field in the error.
    pub fn get(&mut self, n: u32, what: &str) -> Result<u64, ModelError> {
        debug_assert!(n <= 64);
        if self.pos + n as usize > self.nbits {
            return Err(ModelError::Truncated {
                what: format!("{what} ({n} bits at bit {})", self.pos),
                offset: self.pos / 8,
                needed: (self.pos + n as usize).div_ceil(8) - self.pos / 8,
                available: self.nbits.div_ceil(8) - self.pos / 8,
            });
        }
        let mut v = 0u64;
        for _ in 0..n {
            let b = (self.data[self.pos / 8] >> (7 - self.pos % 8)) & 1;
            v = (v << 1) | b as u64;
            self.pos += 1;
        }
        Ok(v)
    }

    /// Reads `n` bytes (each MSB first).
    pub fn get_bytes(&mut self, n: usize, what: &str) -> Result<Vec<u8>, ModelError> {
        // check once so the error names the whole field
        if self.pos + 8 * n > self.nbits {
            return Err(ModelError::Truncated {
                what: format!("{what} ({n} bytes at bit {})", self.pos),
                offset: self.pos / 8,
                needed: n,
                available: (self.nbits - self.pos) / 8,
            });
        }
        (0..n).map(|_| self.get(8, what).map(|b| b as u8)).collect()
    }

    /// Bits consumed so far.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bits left before the `nbits` limit.
    pub fn remaining(&self) -> usize {
        self.nbits - self.pos
    }

    /// Checks that exactly `nbits` bits were consumed, that the data is exactly
    /// `nbits.div_ceil(8)` bytes long and that the pad bits of the last byte are zero.
    pub fn finish(&self) -> Result<(), ModelError> {
        if self.pos != self.nbits {
            return Err(ModelError::Corrupt(format!(
                "decoding ended at bit {} but the stream has {} bits",
                self.pos, self.nbits
            )));
        }
        let used = self.nbits.div_ceil(8);
        if self.data.len() != used {
            return Err(ModelError::TrailingBytes {
                extra: self.data.len() - used,
                total: self.data.len(),
                used,
            });
        }
        if !self.nbits.is_multiple_of(8) {
            let pad = self.data[used - 1] & (0xFFu8 >> (self.nbits % 8));
            if pad != 0 {
                return Err(ModelError::Corrupt(format!(
                    "non-zero pad bits {pad:#04x} after bit {}",
                    self.nbits
                )));
            }
        }
        Ok(())
    }
}

/// Bytes as lower-case hex digits, for test messages and golden vectors.
#[cfg(test)]
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The parameters of a line codec: a line size and the checks of the rest.
pub trait LineParams {
    /// Line size in bytes.
    fn line_bytes(&self) -> usize;

    /// Checks every parameter (by default the line size alone).
    fn validate(&self) -> Result<(), ModelError> {
        check_line_bytes(self.line_bytes())
    }

    /// Line size in bits (the uncompressed size).
    fn line_bits(&self) -> usize {
        self.line_bytes() * 8
    }

    /// Checks the parameters and that `line` is exactly one line.
    fn check_line(&self, line: &[u8]) -> Result<(), ModelError> {
        self.validate()?;
        check_line_len(line, self.line_bytes())
    }
}

/// Line sizes the line compressors (BDI, FPC, C-Pack) and their hardware support: 16 B is
/// the proofs' configuration (docs/FORMATS.md, adaptive §2.0), the others the papers'.
pub const LINE_BYTES: [usize; 4] = [16, 32, 64, 128];

/// Line sizes the line compressors (BDI, FPC, C-Pack) support ([`LINE_BYTES`]).
pub(crate) fn check_line_bytes(line_bytes: usize) -> Result<(), ModelError> {
    if !LINE_BYTES.contains(&line_bytes) {
        return Err(ModelError::param(
            "line_bytes",
            line_bytes,
            "16 (a proof configuration), 32, 64 or 128",
        ));
    }
    Ok(())
}

/// A line must be exactly `line_bytes` long.
pub(crate) fn check_line_len(line: &[u8], line_bytes: usize) -> Result<(), ModelError> {
    if line.len() != line_bytes {
        return Err(ModelError::BadLineLength {
            len: line.len(),
            expected: line_bytes,
        });
    }
    Ok(())
}

/// Decodes one self-delimiting stream from the start of `data` with `decode`; returns the
/// line and the number of bits consumed (bits after the stream are not inspected).
pub(crate) fn decode_prefix(
    data: &[u8],
    decode: impl FnOnce(&mut BitReader) -> Result<Vec<u8>, ModelError>,
) -> Result<(Vec<u8>, usize), ModelError> {
    let mut r = BitReader::whole(data);
    let line = decode(&mut r)?;
    Ok((line, r.pos()))
}

/// Decodes a stream of exactly `nbits` bits: `nbits == 8·line_bytes` is the raw line (no
/// in-band code), anything else goes through `decode`; trailing bits are an error.
pub(crate) fn decode_exact(
    bits: &[u8],
    nbits: usize,
    line_bytes: usize,
    decode: impl FnOnce(&mut BitReader<'_>) -> Result<Vec<u8>, ModelError>,
) -> Result<Vec<u8>, ModelError> {
    let mut r = BitReader::new(bits, nbits)?;
    let line = if nbits == 8 * line_bytes {
        r.get_bytes(line_bytes, "raw line")?
    } else {
        decode(&mut r)?
    };
    r.finish()?;
    Ok(line)
}

/// The codecs' corruption property on a stream of `nbits` bits: its first `cut % nbits`
/// bits (a strict prefix, the bits after it cleared) are rejected by `decode`, and with bit
/// `flip % nbits` inverted it goes through `decode` and `decode_prefix` without a panic.
/// Returns whether the prefix was rejected.
#[cfg(test)]
pub(crate) fn rejects_damage<T, E, U>(
    bits: &[u8],
    nbits: usize,
    (cut, flip): (usize, usize),
    decode: impl Fn(&[u8], usize) -> Result<T, E>,
    decode_prefix: impl Fn(&[u8]) -> U,
) -> bool {
    let n = cut % nbits;
    let mut prefix = bits[..n.div_ceil(8)].to_vec();
    if !n.is_multiple_of(8) {
        let last = prefix.len() - 1;
        prefix[last] &= 0xFFu8 << (8 - n % 8);
    }
    let mut flipped = bits.to_vec();
    let i = flip % nbits;
    flipped[i / 8] ^= 0x80 >> (i % 8);
    let _ = decode(&flipped, nbits);
    let _ = decode_prefix(&flipped);
    decode(&prefix, n).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msb_first_layout() {
        let mut w = BitWriter::new();
        w.put(0b101, 3);
        w.put(0x1F, 5);
        w.put(0xABC, 12);
        assert_eq!(w.nbits(), 20);
        let (b, n) = w.finish();
        assert_eq!(n, 20);
        assert_eq!(b, vec![0b1011_1111, 0xAB, 0xC0]);
        let mut r = BitReader::new(&b, n).unwrap();
        assert_eq!(r.get(3, "a").unwrap(), 0b101);
        assert_eq!(r.get(5, "b").unwrap(), 0x1F);
        assert_eq!(r.get(12, "c").unwrap(), 0xABC);
        assert_eq!(r.remaining(), 0);
        r.finish().unwrap();
        assert!(r.clone().get(1, "past end").is_err());
    }

    #[test]
    fn checks() {
        assert!(BitReader::new(&[0], 9).is_err());
        let mut r = BitReader::new(&[0xFF, 0x80], 9).unwrap();
        assert!(r.finish().is_err());
        assert_eq!(r.get(9, "x").unwrap(), 0x1FF);
        r.finish().unwrap();
        // non-zero pad
        let mut r = BitReader::new(&[0xFF, 0xC0], 9).unwrap();
        r.get(9, "x").unwrap();
        assert!(r.finish().is_err());
        // trailing byte
        let mut r = BitReader::new(&[0xFF, 0x80, 0], 9).unwrap();
        r.get(9, "x").unwrap();
        assert!(matches!(r.finish(), Err(ModelError::TrailingBytes { .. })));
        let mut w = BitWriter::new();
        w.put(u64::MAX, 64);
        w.put_bytes(&[1, 2]);
        let (b, n) = w.finish();
        let mut r = BitReader::whole(&b);
        assert_eq!(r.get(64, "x").unwrap(), u64::MAX);
        assert_eq!(r.get_bytes(2, "y").unwrap(), vec![1, 2]);
        assert!(r.get_bytes(1, "z").is_err());
        assert_eq!(n, 80);
    }
}
