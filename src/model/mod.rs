//! Bit-exact golden models (one file per algorithm).
//!
//! * [`adaptive`]  adaptive selection among BDI/FPC/C-Pack+Z (penalty, phases, vote) and the
//!   link message/fabric model (IPDPS'19)
//! * [`bdi`]       Base-Delta-Immediate, Table II encodings (adaptive link compression, IPDPS'19)
//! * [`fpc`]       Frequent Pattern Compression: decodable original and the paper's size model
//! * [`cpack`]     C-Pack+Z (paper codes) and original C-Pack, dictionary push policies
//! * [`cpack_lossy`] PACT'12 memory-link C-Pack: 128 B blocks in 16 B chunks, MD entries, lossy
//!   FP32 truncation, the MD cache and memory-controller models
//! * [`bits`]      MSB-first bit writer/reader shared by the line compressors
//! * [`cache`]     set-associative sectored write-back cache with MSHRs (the metadata caches
//!   of PACT'12 and ISCA'20)
//! * [`codec`]     the line-codec trait (compress, decompress, size-only) over BDI/FPC/C-Pack
//! * [`base_xor`]  Base+XOR Transfer, Universal XOR tree, Zero Data Remapping (HPCA'18)
//! * [`dbi`]       DC bus inversion and the full Base+XOR link codec
//! * [`ones`]      ones / toggles / I/O-energy accounting backing `hwzip eval --engine base-xor`
//! * [`zvc`]       Zero-Value Compression (cDMA, HPCA'18), the reference for the ZVC hardware
//! * [`container`] small self-describing file container used by `hwzip compress/decompress`
//! * [`rle`]       RLE-A / RLE-B baselines (ratio comparison only, docs/FORMATS.md, ZVC §2.3)
//! * [`zlib`]      zlib / raw-DEFLATE baselines per 4 KB chunk (docs/FORMATS.md, ZVC §2.4)
//! * [`compare`]   side-by-side ratio comparison backing `hwzip eval --engine zvc`
//!
//! The byte and bit formats are recorded in `docs/FORMATS.md`.

pub mod adaptive;
pub mod base_xor;
pub mod bdi;
pub mod bits;
pub mod bpc;
pub mod buddy;
pub mod cache;
pub mod codec;
pub mod compare;
pub mod container;
pub mod cpack;
pub mod cpack_lossy;
pub mod dbi;
pub mod fpc;
pub mod line_container;
pub mod ones;
pub mod rle;
pub mod zlib;
pub mod zvc;
pub mod zvc_line;

pub use bits::LineParams;

use thiserror::Error;

/// Errors shared by all golden models.
///
/// Every variant carries enough numbers to locate the problem in the input; models never
/// panic on malformed input and report one of these instead.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// A model parameter is outside its allowed set.
    #[error("invalid parameter {name} = {value}: {allowed}")]
    InvalidParam {
        /// Parameter name (e.g. `word_bits`).
        name: &'static str,
        /// The offending value, rendered as text.
        value: String,
        /// Human-readable description of the allowed values.
        allowed: String,
    },
    /// An input element does not fit in the configured element width.
    #[error("element {index} = {value:#x} does not fit in {word_bits} bits")]
    ElementTooWide {
        /// Index of the element in the input.
        index: usize,
        /// The element value.
        value: u32,
        /// Configured element width in bits.
        word_bits: u32,
    },
    /// A byte buffer's length is not a whole number of elements.
    #[error("byte length {len} is not a multiple of the element size {elem_bytes} B")]
    BadByteLength {
        /// Length of the buffer in bytes.
        len: usize,
        /// Element size in bytes.
        elem_bytes: usize,
    },
    /// A cache line does not have the configured line size.
    #[error("line of {len} bytes, expected {expected} bytes")]
    BadLineLength {
        /// Length of the given line in bytes.
        len: usize,
        /// Configured line size in bytes.
        expected: usize,
    },
    /// The compressed stream ended early.
    #[error("truncated stream: {what} at byte offset {offset} needs {needed} bytes, only {available} left")]
    Truncated {
        /// What was being read (e.g. "mask of window 3").
        what: String,
        /// Byte offset in the stream where the read started.
        offset: usize,
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// Bytes remain after all expected elements were decoded.
    #[error("{extra} trailing bytes after the last window (stream is {total} bytes, decoded data ends at {used})")]
    TrailingBytes {
        /// Number of unexpected bytes.
        extra: usize,
        /// Total stream length.
        total: usize,
        /// Offset where decoding finished.
        used: usize,
    },
    /// The compressed stream is structurally invalid.
    #[error("corrupt stream: {0}")]
    Corrupt(String),
}

impl ModelError {
    pub(crate) fn param(
        name: &'static str,
        value: impl ToString,
        allowed: impl Into<String>,
    ) -> Self {
        ModelError::InvalidParam {
            name,
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}

/// Splits little-endian bytes into elements of `elem_bytes` (1, 2 or 4) bytes each; `None` if
/// the length is not a multiple of the element size. Shared by the models and trace readers.
pub fn split_le(bytes: &[u8], elem_bytes: usize) -> Option<Vec<u32>> {
    if elem_bytes == 0 || elem_bytes > 4 || !bytes.len().is_multiple_of(elem_bytes) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(elem_bytes)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..elem_bytes].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect(),
    )
}
