//! zlib / raw-DEFLATE baselines (docs/FORMATS.md, ZVC §2.4): software-only upper-bound references.
//!
//! Each chunk (default 4096 B) is compressed independently at level 6, with the zlib wrapper
//! (2 B header + 4 B Adler-32) or as raw DEFLATE. Sizes are the sum of the per-chunk sizes.

use super::ModelError;
use flate2::read::{DeflateDecoder, ZlibDecoder};
use flate2::write::{DeflateEncoder, ZlibEncoder};
use flate2::Compression;
use std::io::{Read, Write};

/// Default independently compressed chunk size in bytes.
pub const DEFAULT_CHUNK_BYTES: usize = 4096;
/// Default zlib level (as `zlib.compress(level=6)`).
pub const DEFAULT_LEVEL: u32 = 6;

fn check(chunk_bytes: usize, level: u32) -> Result<(), ModelError> {
    if chunk_bytes == 0 {
        return Err(ModelError::param("chunk_bytes", 0, "must be positive"));
    }
    if level > 9 {
        return Err(ModelError::param("level", level, "allowed range is 0..=9"));
    }
    Ok(())
}

fn io_err(e: std::io::Error) -> ModelError {
    ModelError::Corrupt(format!("zlib: {e}"))
}

/// Compresses each `chunk_bytes` chunk of `data` independently with `encode`.
fn chunked(
    data: &[u8],
    chunk_bytes: usize,
    level: u32,
    encode: impl Fn(&[u8], Compression) -> std::io::Result<Vec<u8>>,
) -> Result<Vec<Vec<u8>>, ModelError> {
    check(chunk_bytes, level)?;
    data.chunks(chunk_bytes)
        .map(|c| encode(c, Compression::new(level)).map_err(io_err))
        .collect()
}

/// Compress each `chunk_bytes` chunk of `data` independently with the zlib wrapper.
pub fn zlib_chunks(
    data: &[u8],
    chunk_bytes: usize,
    level: u32,
) -> Result<Vec<Vec<u8>>, ModelError> {
    chunked(data, chunk_bytes, level, |c, l| {
        let mut e = ZlibEncoder::new(Vec::new(), l);
        e.write_all(c)?;
        e.finish()
    })
}

/// Compress each chunk independently as raw DEFLATE (no wrapper).
pub fn deflate_chunks(
    data: &[u8],
    chunk_bytes: usize,
    level: u32,
) -> Result<Vec<Vec<u8>>, ModelError> {
    chunked(data, chunk_bytes, level, |c, l| {
        let mut e = DeflateEncoder::new(Vec::new(), l);
        e.write_all(c)?;
        e.finish()
    })
}

/// Total zlib-wrapped size of `data` compressed per chunk.
pub fn zlib_size(data: &[u8], chunk_bytes: usize, level: u32) -> Result<usize, ModelError> {
    Ok(zlib_chunks(data, chunk_bytes, level)?
        .iter()
        .map(Vec::len)
        .sum())
}

/// Total raw-DEFLATE size of `data` compressed per chunk.
pub fn deflate_size(data: &[u8], chunk_bytes: usize, level: u32) -> Result<usize, ModelError> {
    Ok(deflate_chunks(data, chunk_bytes, level)?
        .iter()
        .map(Vec::len)
        .sum())
}

/// Decompress zlib chunks produced by [`zlib_chunks`] and concatenate them.
pub fn zlib_decompress_chunks(chunks: &[Vec<u8>]) -> Result<Vec<u8>, ModelError> {
    let mut out = Vec::new();
    for c in chunks {
        ZlibDecoder::new(&c[..])
            .read_to_end(&mut out)
            .map_err(io_err)?;
    }
    Ok(out)
}

/// Decompress raw-DEFLATE chunks produced by [`deflate_chunks`] and concatenate them.
pub fn deflate_decompress_chunks(chunks: &[Vec<u8>]) -> Result<Vec<u8>, ModelError> {
    let mut out = Vec::new();
    for c in chunks {
        DeflateDecoder::new(&c[..])
            .read_to_end(&mut out)
            .map_err(io_err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let data: Vec<u8> = (0..20_000u32)
            .map(|i| if i % 7 < 4 { 0 } else { (i * 31) as u8 })
            .collect();
        let z = zlib_chunks(&data, 4096, 6).unwrap();
        assert_eq!(z.len(), 5);
        assert_eq!(z[0][0], 0x78);
        assert_eq!(zlib_decompress_chunks(&z).unwrap(), data);
        let d = deflate_chunks(&data, 4096, 6).unwrap();
        assert_eq!(deflate_decompress_chunks(&d).unwrap(), data);
        // zlib = raw + 6 B per chunk
        assert_eq!(
            zlib_size(&data, 4096, 6).unwrap(),
            deflate_size(&data, 4096, 6).unwrap() + 6 * 5
        );
        assert!(zlib_size(&data, 0, 6).is_err());
        assert!(zlib_decompress_chunks(&[vec![1, 2, 3]]).is_err());
    }
}
