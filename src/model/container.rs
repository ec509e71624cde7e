//! Self-describing file container for `hwzip compress` / `hwzip decompress`.
//!
//! Layout (all integers little-endian; see `docs/FORMATS.md`, "Container"):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `b"HWZP"` |
//! | 4 | 1 | format version (= 1) |
//! | 5 | 1 | engine id length `E` (1..=32) |
//! | 6 | E | engine id, ASCII (`"zvc"`) |
//! | 6+E | 2 | params length `P` (u16) |
//! | 8+E | P | params, compact JSON (`{"word_bits":32,"window":32}`) |
//! | 8+E+P | 8 | original byte length (u64) |
//! | 16+E+P | … | raw engine stream (ZVC: exactly as [`crate::model::zvc::compress`]) |
//! | end − 4 | 4 | version 2: CRC-32 (IEEE 802.3, reflected, as zlib/gzip) of every byte before it |
//!
//! The original file may have any length: the last element is padded with zero bytes for
//! compression and the output is truncated back on decompression (the pad bytes must decode
//! to zero, otherwise the container is reported corrupt).
//!
//! Version 2 adds the CRC trailer: any single-bit flip, any odd
//! number of flipped bits and any burst of up to 32 bits in header or payload is detected
//! before decoding. CRC-32 comes from `crc32fast` (maintained, SIMD, already in the tree
//! through `flate2`); CRC-32C would need another crate for the same guarantees at this size.
//! Version 1 (no trailer) is still read. The declared original length is checked against the
//! most a ZVC stream of the payload's size can expand to before anything is allocated.

use super::zvc::{self, ZvcParams};
use super::ModelError;

/// Container magic bytes.
pub const MAGIC: [u8; 4] = *b"HWZP";
/// Current container format version (2: with the CRC-32 trailer).
pub const VERSION: u8 = 2;
/// Oldest version still read (1: no trailer).
pub const MIN_VERSION: u8 = 1;
/// Engine id of the ZVC golden model.
pub const ENGINE_ZVC: &str = "zvc";

/// Parsed container header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version byte.
    pub version: u8,
    /// Engine id string (e.g. `"zvc"`).
    pub engine: String,
    /// Engine parameters as the stored JSON text.
    pub params_json: String,
    /// Length of the original (uncompressed) file in bytes.
    pub orig_len: u64,
    /// Offset of the engine stream inside the container.
    pub payload_offset: usize,
}

fn bad(msg: impl Into<String>) -> ModelError {
    ModelError::Corrupt(format!("container: {}", msg.into()))
}

/// The engine id of a file written by `hwzip compress --codec` (one line codec alone).
pub const ENGINE_CODEC: &str = "codec";

/// The engine parameters a container carries, read strictly: every engine's params type
/// refuses unknown keys, and the error names the engine (`what`) with the parser's message
/// clipped.
pub fn read_params<T: serde::de::DeserializeOwned>(
    h: &Header,
    what: &str,
) -> Result<T, ModelError> {
    serde_json::from_str(&h.params_json).map_err(|e| {
        bad(format!(
            "bad {what} params: {}",
            crate::files::clip(&e.to_string())
        ))
    })
}

/// Compress a whole file with ZVC and wrap it in a container.
pub fn compress_file(p: &ZvcParams, data: &[u8]) -> Result<Vec<u8>, ModelError> {
    p.validate()?;
    let wb = p.word_bytes();
    let mut padded;
    let bytes = if data.len().is_multiple_of(wb) {
        data
    } else {
        padded = data.to_vec();
        padded.resize(data.len().div_ceil(wb) * wb, 0);
        &padded[..]
    };
    let elems = zvc::elems_from_le_bytes(p, bytes)?;
    let stream = zvc::compress(p, &elems)?;
    let params = serde_json::to_string(p).map_err(|e| bad(format!("params encode: {e}")))?;
    Ok(wrap(ENGINE_ZVC, &params, data.len() as u64, &stream))
}

/// A current-version container around `payload` (an engine's stream): the header with
/// `engine` (1-32 ASCII bytes; longer is cut), `params_json` (at most 65,535 bytes; longer is cut, which
/// the engine's own check then rejects) and `orig_len`, then the CRC-32 trailer.
pub fn wrap(engine: &str, params_json: &str, orig_len: u64, payload: &[u8]) -> Vec<u8> {
    let e = &engine.as_bytes()[..engine.len().min(32)];
    let p = &params_json.as_bytes()[..params_json.len().min(u16::MAX as usize)];
    let mut out = Vec::with_capacity(20 + e.len() + p.len() + payload.len());
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.push(e.len() as u8);
    out.extend_from_slice(e);
    out.extend_from_slice(&(p.len() as u16).to_le_bytes());
    out.extend_from_slice(p);
    out.extend_from_slice(&orig_len.to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Parses the header and checks the CRC-32 trailer (version 2); returns the header and the
/// payload (the bytes between the header and the trailer).
pub fn open(bytes: &[u8]) -> Result<(Header, &[u8]), ModelError> {
    let h = parse_header(bytes)?;
    let body = checked_body(bytes, &h)?;
    let payload = &body[h.payload_offset..];
    Ok((h, payload))
}

fn take<'a>(
    bytes: &'a [u8],
    pos: &mut usize,
    n: usize,
    what: &str,
) -> Result<&'a [u8], ModelError> {
    let avail = bytes.len().saturating_sub(*pos);
    if avail < n {
        return Err(ModelError::Truncated {
            what: format!("container {what}"),
            offset: *pos,
            needed: n,
            available: avail,
        });
    }
    let s = &bytes[*pos..*pos + n];
    *pos += n;
    Ok(s)
}

/// Parse and check the container header (magic, version, engine id, params, length).
pub fn parse_header(bytes: &[u8]) -> Result<Header, ModelError> {
    let mut pos = 0;
    let magic = take(bytes, &mut pos, 4, "magic")?;
    if magic != MAGIC {
        return Err(bad(format!(
            "bad magic {magic:02x?}, expected {MAGIC:02x?} (\"HWZP\"): not an hwzip container"
        )));
    }
    let version = take(bytes, &mut pos, 1, "version")?[0];
    if !(MIN_VERSION..=VERSION).contains(&version) {
        return Err(bad(format!(
            "unsupported format version {version} (this build reads versions \
             {MIN_VERSION}..={VERSION})"
        )));
    }
    let elen = take(bytes, &mut pos, 1, "engine id length")?[0] as usize;
    if elen == 0 || elen > 32 {
        return Err(bad(format!("engine id length {elen} outside 1..=32")));
    }
    let engine = std::str::from_utf8(take(bytes, &mut pos, elen, "engine id")?)
        .map_err(|_| bad("engine id is not valid UTF-8"))?
        .to_string();
    let plen_b = take(bytes, &mut pos, 2, "params length")?;
    let plen = u16::from_le_bytes([plen_b[0], plen_b[1]]) as usize;
    let params_json = std::str::from_utf8(take(bytes, &mut pos, plen, "params")?)
        .map_err(|_| bad("params are not valid UTF-8"))?
        .to_string();
    let ol = take(bytes, &mut pos, 8, "original length")?;
    let mut olb = [0u8; 8];
    olb.copy_from_slice(ol);
    Ok(Header {
        version,
        engine,
        params_json,
        orig_len: u64::from_le_bytes(olb),
        payload_offset: pos,
    })
}

/// The container without its CRC trailer, after checking it (version 2; version 1 has none).
fn checked_body<'a>(bytes: &'a [u8], h: &Header) -> Result<&'a [u8], ModelError> {
    if h.version < 2 {
        return Ok(bytes);
    }
    if bytes.len() < h.payload_offset + 4 {
        return Err(ModelError::Truncated {
            what: "container CRC-32 trailer".into(),
            offset: h.payload_offset,
            needed: 4,
            available: bytes.len() - h.payload_offset,
        });
    }
    let (body, tail) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let actual = crc32fast::hash(body);
    if stored != actual {
        return Err(bad(format!(
            "CRC-32 mismatch (stored {stored:08x}, computed {actual:08x}): the file is damaged"
        )));
    }
    Ok(body)
}

/// Decode a container produced by [`compress_file`] back to the original bytes.
pub fn decompress_file(bytes: &[u8]) -> Result<Vec<u8>, ModelError> {
    let h = parse_header(bytes)?;
    let bytes = checked_body(bytes, &h)?;
    if h.engine != ENGINE_ZVC {
        return Err(bad(format!(
            "unknown engine id {:?} (supported: {ENGINE_ZVC:?})",
            h.engine
        )));
    }
    let p: ZvcParams = read_params(&h, "zvc")?;
    p.validate()?;
    let orig_len = usize::try_from(h.orig_len)
        .map_err(|_| bad(format!("original length {} too large", h.orig_len)))?;
    // A window of `window` elements takes at least its `window / 8`-byte mask, so the stream
    // expands by at most 8 x word_bytes (plus one window of padding).
    let payload = bytes.len() - h.payload_offset;
    let max_len = (payload as u128 + 1) * 8 * p.word_bytes() as u128
        + (p.window as u128) * p.word_bytes() as u128;
    if orig_len as u128 > max_len {
        return Err(bad(format!(
            "original length {orig_len} cannot come from a {payload}-byte ZVC stream \
             (at most {max_len})"
        )));
    }
    let n_elems = orig_len.div_ceil(p.word_bytes());
    let elems = zvc::decompress(&p, &bytes[h.payload_offset..], n_elems)?;
    let mut out = zvc::elems_to_le_bytes(&p, &elems);
    if out[orig_len..].iter().any(|&b| b != 0) {
        return Err(bad(format!(
            "padding bytes after original length {orig_len} are not zero"
        )));
    }
    out.truncate(orig_len);
    Ok(out)
}

/// Test helper: `open` refuses every one-bit flip and every truncation of the container `c`
/// (the CRC and the framing catch them; none may decode to different data).
#[cfg(test)]
pub(crate) fn assert_damage_refused<T, E>(c: &[u8], open: impl Fn(&[u8]) -> Result<T, E>) {
    for bit in 0..8 * c.len() {
        let mut v = c.to_vec();
        v[bit / 8] ^= 1 << (bit % 8);
        assert!(open(&v).is_err(), "flip of bit {bit} not detected");
    }
    for cut in 0..c.len() {
        assert!(open(&c[..cut]).is_err(), "cut at {cut}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_odd_lengths() {
        for p in [
            ZvcParams::default(),
            ZvcParams {
                word_bits: 16,
                window: 64,
            },
            ZvcParams {
                word_bits: 8,
                window: 8,
            },
        ] {
            for len in [0usize, 1, 3, 5, 127, 128, 129, 1000] {
                let data: Vec<u8> = (0..len)
                    .map(|i| if i % 3 == 0 { 0 } else { i as u8 })
                    .collect();
                let c = compress_file(&p, &data).unwrap();
                let h = parse_header(&c).unwrap();
                assert_eq!(h.engine, "zvc");
                assert_eq!(h.orig_len, len as u64);
                assert_eq!(decompress_file(&c).unwrap(), data);
            }
        }
    }

    /// Every single-bit flip and every cut of a small container is an error, never a
    /// different output.
    #[test]
    fn every_bit_flip_and_cut_is_detected() {
        let data: Vec<u8> = (0..200u32)
            .map(|i| if i % 5 < 2 { 0 } else { (i * 7) as u8 })
            .collect();
        let c = compress_file(&ZvcParams::default(), &data).unwrap();
        assert_eq!(decompress_file(&c).unwrap(), data);
        assert_damage_refused(&c, decompress_file);
    }

    /// Version 1 (no trailer) is still read; a huge declared length is refused before any
    /// allocation.
    #[test]
    fn version_1_and_impossible_lengths() {
        let data = vec![0u8, 1, 2, 3, 0, 0, 0, 9, 5];
        let c = compress_file(&ZvcParams::default(), &data).unwrap();
        let mut v1 = c[..c.len() - 4].to_vec();
        v1[4] = 1;
        assert_eq!(parse_header(&v1).unwrap().version, 1);
        assert_eq!(decompress_file(&v1).unwrap(), data);
        let h = parse_header(&v1).unwrap();
        let at = h.payload_offset - 8;
        v1[at..at + 8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
        let e = decompress_file(&v1).unwrap_err().to_string();
        assert!(e.contains("cannot come from"), "{e}");
    }

    #[test]
    fn foreign_and_corrupt() {
        let c = compress_file(&ZvcParams::default(), &[1, 2, 3, 4, 5]).unwrap();
        let e = decompress_file(b"PK\x03\x04garbage")
            .unwrap_err()
            .to_string();
        assert!(e.contains("magic"), "{e}");
        assert!(decompress_file(&c[..3]).is_err());
        let mut v = c.clone();
        v[4] = 9;
        assert!(decompress_file(&v)
            .unwrap_err()
            .to_string()
            .contains("version 9"));
        // An unknown engine with a valid CRC (the CRC alone would catch the edit).
        let mut v = c[..c.len() - 4].to_vec();
        v[6] = b'x';
        let crc = crc32fast::hash(&v);
        v.extend_from_slice(&crc.to_le_bytes());
        assert!(decompress_file(&v)
            .unwrap_err()
            .to_string()
            .contains("engine"));
        let mut v = c.clone();
        v.push(0);
        assert!(decompress_file(&v).is_err());
        // non-zero padding in the last element (with a valid CRC, so the decoder sees it)
        let mut v = c[..c.len() - 4].to_vec();
        let last = v.len() - 1; // MSB of the padded 2nd element (byte 7 of the data)
        v[last] = 0x77;
        let crc = crc32fast::hash(&v);
        v.extend_from_slice(&crc.to_le_bytes());
        assert!(decompress_file(&v)
            .unwrap_err()
            .to_string()
            .contains("padding"));
        // bad params
        let mut v = c.clone();
        let off = 6 + 3 + 2;
        v[off + 13] = b'7'; // {"word_bits":32 -> 72
        assert!(decompress_file(&v).is_err());
    }
}
