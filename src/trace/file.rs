//! Trace files.
//!
//! * **Raw**: little-endian binary of elements, `word_bits / 8` bytes each, nothing else.
//! * **YAML description** (`.yaml` / `.yml`):
//!
//!   ```yaml
//!   file: data.bin        # raw element file, relative to the YAML file's directory
//!   word_bits: 32         # 8, 16 or 32 (optional; defaults to the caller's default)
//!   layout: nchw          # nchw | nhwc | chwn | flat (optional; default flat)
//!   shape: [4, 32, 27, 27]  # logical [n, c, h, w] (optional; product must equal the count)
//!   ```
//!
//! Unknown keys, odd-length data, shape mismatches and missing files are errors that name the
//! file and the numbers involved.

use super::Layout;
use crate::files::input::{self, Purpose};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Errors while loading a trace.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// File path.
        path: PathBuf,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// The file could not be written.
    #[error("{path}: cannot write: {source}")]
    WriteIo {
        /// File path.
        path: PathBuf,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// The YAML description is malformed or has unknown keys.
    #[error("{path}: invalid trace description: {msg}")]
    Yaml {
        /// YAML file path.
        path: PathBuf,
        /// Parser message (includes the line and the offending key).
        msg: String,
    },
    /// The element width is not supported.
    #[error("{path}: word_bits = {word_bits} is not supported (allowed: 8, 16, 32)")]
    BadWordBits {
        /// File path.
        path: PathBuf,
        /// The width given.
        word_bits: u32,
    },
    /// The data length is not a whole number of elements.
    #[error("{path}: length {len} bytes is not a multiple of the element size {elem_bytes} B ({word_bits}-bit elements); file truncated?")]
    OddLength {
        /// Data file path.
        path: PathBuf,
        /// Length in bytes.
        len: u64,
        /// Element size in bytes.
        elem_bytes: usize,
        /// Element width in bits.
        word_bits: u32,
    },
    /// The shape does not match the data.
    #[error(
        "{path}: shape {shape:?} (product {product}) does not match {n_elems} elements in {data}"
    )]
    ShapeMismatch {
        /// YAML file path.
        path: PathBuf,
        /// Data file path.
        data: PathBuf,
        /// Shape from the description.
        shape: Vec<usize>,
        /// Product of the shape.
        product: usize,
        /// Elements found in the data file.
        n_elems: usize,
    },
    /// A container format (gzip, .npy) is malformed.
    #[error("{path}: {msg}")]
    BadFormat {
        /// File path.
        path: PathBuf,
        /// Explanation.
        msg: String,
    },
    /// The trace holds no data.
    #[error("{path}: the trace is empty (no elements)")]
    Empty {
        /// File path.
        path: PathBuf,
    },
    /// The shape is not usable with the layout.
    #[error("{path}: {msg}")]
    BadShape {
        /// YAML file path.
        path: PathBuf,
        /// Explanation.
        msg: String,
    },
}

/// A YAML trace description (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceDesc {
    /// Raw data file, relative to the YAML file's directory (or absolute).
    pub file: PathBuf,
    /// Element width in bits (8, 16, 32).
    #[serde(default)]
    pub word_bits: Option<u32>,
    /// Memory layout of the data.
    #[serde(default)]
    pub layout: Option<Layout>,
    /// Logical shape `[n, c, h, w]` (4 entries for nchw/nhwc/chwn; any rank for flat).
    #[serde(default)]
    pub shape: Option<Vec<usize>>,
}

/// A loaded trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// Path given to [`load_trace`].
    pub path: PathBuf,
    /// Path of the raw element data actually read.
    pub data_path: PathBuf,
    /// Element width in bits.
    pub word_bits: u32,
    /// Memory layout.
    pub layout: Layout,
    /// Logical shape, if described.
    pub shape: Option<Vec<usize>>,
    /// Elements (each fits in `word_bits`).
    pub elems: Vec<u32>,
}

fn check_word_bits(path: &Path, word_bits: u32) -> Result<(), TraceError> {
    if matches!(word_bits, 8 | 16 | 32) {
        Ok(())
    } else {
        Err(TraceError::BadWordBits {
            path: path.to_path_buf(),
            word_bits,
        })
    }
}

/// Read a raw little-endian element file.
pub fn read_raw(path: &Path, word_bits: u32) -> Result<Vec<u32>, TraceError> {
    check_word_bits(path, word_bits)?;
    let bytes = input::read(path, Purpose::Trace).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if bytes.is_empty() {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    let wb = (word_bits / 8) as usize;
    crate::model::split_le(&bytes, wb).ok_or_else(|| TraceError::OddLength {
        path: path.to_path_buf(),
        len: bytes.len() as u64,
        elem_bytes: wb,
        word_bits,
    })
}

/// Write elements as a raw little-endian file of `word_bits / 8` bytes each.
pub fn write_raw(path: &Path, elems: &[u32], word_bits: u32) -> Result<(), TraceError> {
    check_word_bits(path, word_bits)?;
    let wb = (word_bits / 8) as usize;
    let mut bytes = Vec::with_capacity(elems.len() * wb);
    for &x in elems {
        bytes.extend_from_slice(&x.to_le_bytes()[..wb]);
    }
    crate::files::write_atomic(path, &bytes).map_err(|source| TraceError::WriteIo {
        path: path.to_path_buf(),
        source,
    })
}

/// Load a trace: `.yaml` / `.yml` → description, anything else → raw data of
/// `default_word_bits`-bit elements with a flat layout.
pub fn load_trace(path: &Path, default_word_bits: u32) -> Result<Trace, TraceError> {
    let is_yaml = matches!(
        path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()),
        Some(ref e) if e == "yaml" || e == "yml"
    );
    if !is_yaml {
        let elems = read_raw(path, default_word_bits)?;
        return Ok(Trace {
            path: path.to_path_buf(),
            data_path: path.to_path_buf(),
            word_bits: default_word_bits,
            layout: Layout::Flat,
            shape: None,
            elems,
        });
    }
    let text =
        input::read_to_string(path, Purpose::TraceDesc).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    input::check_yaml_nesting(&text).map_err(|msg| TraceError::Yaml {
        path: path.to_path_buf(),
        msg,
    })?;
    let desc: TraceDesc = serde_yaml::from_str(&text).map_err(|e| TraceError::Yaml {
        path: path.to_path_buf(),
        msg: crate::files::clip(&e.to_string()),
    })?;
    let word_bits = desc.word_bits.unwrap_or(default_word_bits);
    check_word_bits(path, word_bits)?;
    let layout = desc.layout.unwrap_or_default();
    let data_path = if desc.file.is_absolute() {
        desc.file.clone()
    } else {
        path.parent().unwrap_or(Path::new(".")).join(&desc.file)
    };
    if let Some(shape) = &desc.shape {
        if layout != Layout::Flat && shape.len() != 4 {
            return Err(TraceError::BadShape {
                path: path.to_path_buf(),
                msg: format!(
                    "layout {} needs a 4-entry shape [n, c, h, w], got {} entries {:?}",
                    layout.name(),
                    shape.len(),
                    shape
                ),
            });
        }
        if shape.is_empty() {
            return Err(TraceError::BadShape {
                path: path.to_path_buf(),
                msg: "shape is empty".into(),
            });
        }
    } else if layout != Layout::Flat {
        return Err(TraceError::BadShape {
            path: path.to_path_buf(),
            msg: format!("layout {} needs a shape [n, c, h, w]", layout.name()),
        });
    }
    let elems = read_raw(&data_path, word_bits)?;
    if let Some(shape) = &desc.shape {
        let product = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .unwrap_or(usize::MAX);
        if product != elems.len() {
            return Err(TraceError::ShapeMismatch {
                path: path.to_path_buf(),
                data: data_path,
                shape: shape.clone(),
                product,
                n_elems: elems.len(),
            });
        }
    }
    Ok(Trace {
        path: path.to_path_buf(),
        data_path,
        word_bits,
        layout,
        shape: desc.shape,
        elems,
    })
}

/// [`load_trace`] for a consumer of exactly `word_bits`-bit elements: a description that
/// declares another width is an error (never silently widened or truncated). `consumer`
/// names the setting to change, e.g. `zvc.word_bits`.
pub fn load_trace_exact(path: &Path, word_bits: u32, consumer: &str) -> Result<Trace, TraceError> {
    let t = load_trace(path, word_bits)?;
    if t.word_bits != word_bits {
        return Err(TraceError::BadFormat {
            path: path.to_path_buf(),
            msg: format!(
                "the trace has {}-bit elements but {} is {} bits; make them agree (never \
                 widened or truncated)",
                t.word_bits, consumer, word_bits
            ),
        });
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().expect("tempdir")
    }

    #[test]
    fn raw_and_yaml() {
        let d = dir();
        let bin = d.path().join("data.bin");
        let elems: Vec<u32> = (0..2 * 3 * 2 * 2).map(|i| i * 0x101).collect();
        write_raw(&bin, &elems, 32).unwrap();
        let t = load_trace(&bin, 32).unwrap();
        assert_eq!(t.elems, elems);
        assert_eq!(t.layout, Layout::Flat);
        let t16 = load_trace(&bin, 16).unwrap();
        assert_eq!(t16.elems.len(), 2 * elems.len());
        let y = d.path().join("t.yaml");
        std::fs::write(
            &y,
            "file: data.bin\nword_bits: 32\nlayout: nhwc\nshape: [2, 3, 2, 2]\n",
        )
        .unwrap();
        let t = load_trace(&y, 8).unwrap();
        assert_eq!(t.elems, elems);
        assert_eq!(t.word_bits, 32);
        assert_eq!(t.layout, Layout::Nhwc);
        assert_eq!(t.shape, Some(vec![2, 3, 2, 2]));
        assert_eq!(t.data_path, bin);
        // defaults
        let y2 = d.path().join("t2.YML");
        std::fs::write(&y2, "file: data.bin\n").unwrap();
        let t = load_trace(&y2, 16).unwrap();
        assert_eq!((t.word_bits, t.layout), (16, Layout::Flat));
        // A 32-bit description for a 16-bit consumer is refused, not reinterpreted.
        let e = load_trace_exact(&y, 16, "zvc.word_bits")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("32-bit elements but zvc.word_bits is 16 bits"),
            "{e}"
        );
        assert_eq!(
            load_trace_exact(&y, 32, "zvc.word_bits").unwrap().elems,
            elems
        );
    }

    #[test]
    fn errors_name_file_and_numbers() {
        let d = dir();
        let bin = d.path().join("odd.bin");
        std::fs::write(&bin, [1u8, 2, 3, 4, 5, 6]).unwrap();
        let e = load_trace(&bin, 32).unwrap_err();
        assert!(matches!(
            e,
            TraceError::OddLength {
                len: 6,
                elem_bytes: 4,
                ..
            }
        ));
        let m = e.to_string();
        assert!(
            m.contains("odd.bin") && m.contains('6') && m.contains('4'),
            "{m}"
        );

        let missing = d.path().join("nope.bin");
        let e = load_trace(&missing, 32).unwrap_err();
        assert!(matches!(e, TraceError::Io { .. }) && e.to_string().contains("nope.bin"));

        let y = d.path().join("bad.yaml");
        std::fs::write(&y, "file: odd.bin\nwordbits: 32\n").unwrap();
        let e = load_trace(&y, 32).unwrap_err();
        assert!(matches!(e, TraceError::Yaml { .. }));
        assert!(
            e.to_string().contains("wordbits") && e.to_string().contains("bad.yaml"),
            "{e}"
        );

        std::fs::write(&y, "file: nope.bin\n").unwrap();
        let e = load_trace(&y, 32).unwrap_err();
        assert!(e.to_string().contains("nope.bin"), "{e}");

        std::fs::write(
            &y,
            "file: odd.bin\nword_bits: 16\nlayout: nchw\nshape: [1, 2, 2, 2]\n",
        )
        .unwrap();
        let e = load_trace(&y, 32).unwrap_err();
        match &e {
            TraceError::ShapeMismatch {
                product, n_elems, ..
            } => assert_eq!((*product, *n_elems), (8, 3)),
            other => panic!("unexpected {other}"),
        }
        assert!(e.to_string().contains("odd.bin"), "{e}");

        std::fs::write(&y, "file: odd.bin\nword_bits: 12\n").unwrap();
        assert!(matches!(
            load_trace(&y, 32),
            Err(TraceError::BadWordBits { word_bits: 12, .. })
        ));
        std::fs::write(&y, "file: odd.bin\nlayout: chwn\n").unwrap();
        assert!(matches!(
            load_trace(&y, 8),
            Err(TraceError::BadShape { .. })
        ));
        std::fs::write(&y, "file: odd.bin\nlayout: nchw\nshape: [6]\n").unwrap();
        assert!(matches!(
            load_trace(&y, 8),
            Err(TraceError::BadShape { .. })
        ));
        std::fs::write(&y, "file: odd.bin\nlayout: diagonal\n").unwrap();
        assert!(matches!(load_trace(&y, 8), Err(TraceError::Yaml { .. })));
        std::fs::write(&y, "file: [unclosed\n").unwrap();
        assert!(matches!(load_trace(&y, 8), Err(TraceError::Yaml { .. })));
        assert!(matches!(
            load_trace(&bin, 24),
            Err(TraceError::BadWordBits { .. })
        ));
    }
}

/// Reads a file as a byte stream for sector-level engines (Base+XOR): `.gz` files are
/// gunzipped, `.npy` arrays lose their header (the array data, in file order), `.safetensors`
/// files give their tensors' data in data order, a `.yaml`/`.yml`
/// trace description is followed to its data file, and anything else is read as raw bytes.
/// The byte stream is returned as it lies in memory; callers cut it into transactions.
pub fn load_bytes(path: &Path) -> Result<Vec<u8>, TraceError> {
    Ok(load_bytes_typed(path)?.0)
}

/// [`load_bytes`] and, for a `.npy` array (or a `.safetensors` file whose tensors share one
/// dtype), its dtype string (`<f4`, `<f8`, `<i2`, …).
pub fn load_bytes_typed(path: &Path) -> Result<(Vec<u8>, Option<String>), TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    if ext == "yaml" || ext == "yml" {
        let t = load_trace(path, 32)?;
        let wb = (t.word_bits / 8) as usize;
        let bytes = t
            .elems
            .iter()
            .flat_map(|e| e.to_le_bytes()[..wb].to_vec())
            .collect();
        return Ok((bytes, None));
    }
    let raw = input::read(path, Purpose::Trace).map_err(io)?;
    let mut descr = None;
    let data = if ext == "gz" {
        input::gunzip(&raw, Purpose::Trace).map_err(|e| TraceError::BadFormat {
            path: path.to_path_buf(),
            msg: e.to_string(),
        })?
    } else if ext == "npy" {
        let bad = |msg| TraceError::BadFormat {
            path: path.to_path_buf(),
            msg,
        };
        let h = super::npy::parse(&raw).map_err(bad)?;
        descr = Some(h.descr);
        raw[h.data_offset..].to_vec()
    } else if is_safetensors(path) {
        let tensors = tensors_of(path, &raw)?;
        let first = tensors.first().and_then(|t| t.npy_descr());
        if tensors.iter().all(|t| t.npy_descr() == first) {
            descr = first.map(str::to_string);
        }
        tensors
            .iter()
            .flat_map(|t| raw[t.start..t.end].iter().copied())
            .collect()
    } else {
        raw
    };
    if data.is_empty() {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok((data, descr))
}

/// Whether `path` names a `.safetensors` file (by its extension, as [`load_bytes`] reads it).
pub fn is_safetensors(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"))
}

/// Parses the header of a `.safetensors` file read as `raw`.
fn tensors_of(path: &Path, raw: &[u8]) -> Result<Vec<super::safetensors::Tensor>, TraceError> {
    super::safetensors::parse(raw).map_err(|msg| TraceError::BadFormat {
        path: path.to_path_buf(),
        msg,
    })
}

/// The tensors of a `.safetensors` file, each with its bytes, in data order; an error for a
/// file of another kind or one without tensors.
pub fn load_tensors(path: &Path) -> Result<Vec<(super::safetensors::Tensor, Vec<u8>)>, TraceError> {
    let raw = input::read(path, Purpose::Trace).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let tensors = tensors_of(path, &raw)?;
    if tensors.iter().all(|t| t.start == t.end) {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(tensors
        .into_iter()
        .map(|t| {
            let bytes = raw[t.start..t.end].to_vec();
            (t, bytes)
        })
        .collect())
}

#[cfg(test)]
mod bytes_tests {
    use super::*;

    #[test]
    fn gz_npy_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..100u8).collect();
        let gz = dir.path().join("a.bin.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &data).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        assert_eq!(load_bytes(&gz).unwrap(), data);
        let bad = dir.path().join("b.gz");
        std::fs::write(&bad, b"not gzip").unwrap();
        assert!(load_bytes(&bad).unwrap_err().to_string().contains("gzip"));
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        let h = b"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }      \n";
        npy.extend((h.len() as u16).to_le_bytes());
        npy.extend(h);
        npy.extend(1.5f64.to_le_bytes());
        npy.extend(2.5f64.to_le_bytes());
        let p = dir.path().join("c.npy");
        std::fs::write(&p, &npy).unwrap();
        assert_eq!(load_bytes(&p).unwrap().len(), 16);
        std::fs::write(&p, &npy[..12]).unwrap();
        assert!(load_bytes(&p).unwrap_err().to_string().contains("header"));
        assert!(load_bytes(&dir.path().join("missing")).is_err());
    }
}
