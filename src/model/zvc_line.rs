//! ZVC on single cache lines through the line-codec interface, for Buddy's Fig. 5a comparison
//! (docs/FORMATS.md, Buddy §2.5): one mask over the line's words, then the non-zero words
//! (the ZVC stream of [`super::zvc`] with `window` = words per line, its bytes in order), or
//! the raw line when that is not smaller (a line with more than 31 of 32 words non-zero).
//! The stream is byte-oriented (the mask little-endian, LSB = word 0), so its bit length is
//! always a multiple of 8.

use super::zvc::{self, ZvcParams};
use super::ModelError;
use serde::{Deserialize, Serialize};

/// A line size and a word width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZvcLineParams {
    /// Line size in bytes: 32, 64 or 128 (default).
    pub line_bytes: usize,
    /// Word width: 8, 16 or 32 (default); the words per line must be a multiple of 8 and of
    /// the word width (128 B at 32 bits, 32 B or more at 8 bits).
    pub word_bits: u32,
}

impl Default for ZvcLineParams {
    fn default() -> Self {
        ZvcLineParams {
            line_bytes: 128,
            word_bits: 32,
        }
    }
}

impl ZvcLineParams {
    /// The ZVC window that covers one line.
    pub fn zvc(&self) -> ZvcParams {
        ZvcParams {
            word_bits: self.word_bits,
            window: self.line_bytes * 8 / self.word_bits.max(1) as usize,
        }
    }

    /// Checks the line size and that one mask covers the line.
    pub fn validate(&self) -> Result<(), ModelError> {
        super::bits::check_line_bytes(self.line_bytes)?;
        self.zvc().validate()
    }

    fn words(&self, line: &[u8]) -> Result<Vec<u32>, ModelError> {
        self.validate()?;
        super::bits::check_line_len(line, self.line_bytes)?;
        zvc::elems_from_le_bytes(&self.zvc(), line)
    }
}

/// One line as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZvcLineCompressed {
    /// Whether the ZVC stream is sent (else the raw line).
    pub compressed: bool,
    /// The stream or the line.
    pub bits: Vec<u8>,
    /// Bits sent (a multiple of 8).
    pub nbits: usize,
}

/// Compresses one line: the ZVC stream, or the line when the stream is not shorter.
pub fn compress(p: &ZvcLineParams, line: &[u8]) -> Result<ZvcLineCompressed, ModelError> {
    let stream = zvc::compress(&p.zvc(), &p.words(line)?)?;
    if stream.len() >= p.line_bytes {
        return Ok(ZvcLineCompressed {
            bits: line.to_vec(),
            nbits: 8 * p.line_bytes,
            compressed: false,
        });
    }
    Ok(ZvcLineCompressed {
        nbits: 8 * stream.len(),
        bits: stream,
        compressed: true,
    })
}

/// Size in bits of the line as sent.
pub fn size_bits(p: &ZvcLineParams, line: &[u8]) -> Result<usize, ModelError> {
    let bytes = zvc::compressed_size(&p.zvc(), &p.words(line)?);
    Ok(8 * bytes.min(p.line_bytes))
}

/// Decodes the stream at the start of `payload` (its length follows from the mask).
pub fn decompress_prefix(
    p: &ZvcLineParams,
    payload: &[u8],
) -> Result<(Vec<u8>, usize), ModelError> {
    p.validate()?;
    let z = p.zvc();
    let mb = z.mask_bytes();
    let mask = payload.get(..mb).ok_or_else(|| ModelError::Truncated {
        what: "ZVC mask".into(),
        offset: 0,
        needed: mb,
        available: payload.len(),
    })?;
    let nnz: usize = mask.iter().map(|b| b.count_ones() as usize).sum();
    let len = (mb + nnz * z.word_bytes()).min(payload.len());
    let words = zvc::decompress(&z, &payload[..len], z.window)?;
    Ok((zvc::elems_to_le_bytes(&z, &words), 8 * len))
}

/// Decompresses exactly `nbits` bits: the raw line at `8·line_bytes`, else a ZVC stream of
/// whole bytes with nothing after it.
pub fn decompress(p: &ZvcLineParams, bits: &[u8], nbits: usize) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    if !nbits.is_multiple_of(8) {
        return Err(ModelError::Corrupt(format!(
            "a ZVC stream is whole bytes, not {nbits} bits"
        )));
    }
    if bits.len() != nbits / 8 {
        return Err(ModelError::Corrupt(format!(
            "{} bytes given for a {nbits}-bit stream",
            bits.len()
        )));
    }
    if nbits == 8 * p.line_bytes {
        return Ok(bits.to_vec());
    }
    let z = p.zvc();
    let words = zvc::decompress(&z, bits, z.window)?;
    Ok(zvc::elems_to_le_bytes(&z, &words))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_round_trips() {
        let p = ZvcLineParams::default();
        let mut line = vec![0u8; 128];
        assert_eq!(size_bits(&p, &line).unwrap(), 32);
        line[4..8].copy_from_slice(&7u32.to_le_bytes());
        line[120..124].copy_from_slice(&9u32.to_le_bytes());
        let c = compress(&p, &line).unwrap();
        assert_eq!((c.nbits, c.compressed), (8 * (4 + 8), true));
        assert_eq!(c.bits[..4], [0b10, 0, 0, 0b0100_0000]);
        assert_eq!(decompress(&p, &c.bits, c.nbits).unwrap(), line);
        let mut padded = c.bits.clone();
        padded.resize(128, 0xEE);
        assert_eq!(
            decompress_prefix(&p, &padded).unwrap(),
            (line.clone(), c.nbits)
        );
        // 31 non-zero words: 4 + 124 = 128 B, not smaller: raw.
        let dense: Vec<u8> = (0..32u32)
            .flat_map(|i| if i == 3 { 0 } else { i + 1 }.to_le_bytes())
            .collect();
        let c = compress(&p, &dense).unwrap();
        assert_eq!((c.nbits, c.compressed), (1024, false));
        assert_eq!(decompress(&p, &c.bits, c.nbits).unwrap(), dense);
        assert_eq!(size_bits(&p, &dense).unwrap(), 1024);
        // Other widths and errors.
        let q = ZvcLineParams {
            line_bytes: 32,
            word_bits: 8,
        };
        let b: Vec<u8> = (0..32).map(|i| if i % 3 == 0 { i } else { 0 }).collect();
        let c = compress(&q, &b).unwrap();
        assert_eq!(decompress(&q, &c.bits, c.nbits).unwrap(), b);
        let bad = ZvcLineParams {
            line_bytes: 64,
            word_bits: 32,
        };
        assert!(bad.validate().is_err());
        assert!(decompress(&p, &c.bits, 9).is_err());
        assert!(decompress_prefix(&p, &[0xFF]).is_err());
        assert!(decompress_prefix(&p, &[0xFF, 0, 0, 0, 1]).is_err());
    }
}
