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
    /// The dtype of an array file (`<f4`, `|u1`, ...), `None` for raw data.
    pub descr: Option<String>,
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

/// Whether `path` names a YAML trace description (`.yaml` / `.yml`, any case).
pub fn is_description(path: &Path) -> bool {
    matches!(ext_of(path).as_str(), "yaml" | "yml")
}

/// The lowercase extension of `path` (empty when it has none).
fn ext_of(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// What a data file says of its elements.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Width {
    /// Raw data: the reader chooses.
    Raw,
    /// An array file whose elements are all this many bits wide.
    Bits(u32),
    /// An array file whose tensors have elements of different widths.
    Mixed,
}

/// The data of a trace data file.
struct Data {
    bytes: Vec<u8>,
    /// The dtype (`<f4`, ...) when the file has one that NumPy spells.
    descr: Option<String>,
    width: Width,
}

/// Loads a trace: `.yaml` / `.yml` -> description (its `file:` read as below); a `.npy` or
/// `.safetensors` file -> its array data, with the element width of its dtype; `.gz` ->
/// gunzipped (`x.npy.gz` is a gzipped array); anything else -> raw data of
/// `default_word_bits`-bit elements with a flat layout. Every engine reads traces here.
pub fn load_trace(path: &Path, default_word_bits: u32) -> Result<Trace, TraceError> {
    if !is_description(path) {
        let Data {
            bytes,
            descr,
            width,
        } = read_data(path)?;
        let word_bits = element_bits(path, &width, None, default_word_bits)?;
        let elems = split(path, &bytes, word_bits)?;
        return Ok(Trace {
            path: path.to_path_buf(),
            data_path: path.to_path_buf(),
            word_bits,
            layout: Layout::Flat,
            shape: None,
            elems,
            descr,
        });
    }
    let desc = read_description(path)?;
    let layout = desc.layout.unwrap_or_default();
    check_shape(path, layout, desc.shape.as_deref())?;
    if let Some(w) = desc.word_bits {
        check_word_bits(path, w)?;
    }
    let data_path = if desc.file.is_absolute() {
        desc.file.clone()
    } else {
        path.parent().unwrap_or(Path::new(".")).join(&desc.file)
    };
    if is_description(&data_path) {
        return Err(TraceError::BadFormat {
            path: path.to_path_buf(),
            msg: format!(
                "file: {} is another trace description; it must name the data",
                data_path.display()
            ),
        });
    }
    let Data {
        bytes,
        descr,
        width,
    } = read_data(&data_path)?;
    let word_bits = element_bits(&data_path, &width, desc.word_bits, default_word_bits)?;
    let elems = split(&data_path, &bytes, word_bits)?;
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
        descr,
    })
}

/// Reads and parses a YAML trace description.
fn read_description(path: &Path) -> Result<TraceDesc, TraceError> {
    let text =
        input::read_to_string(path, Purpose::TraceDesc).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    input::check_yaml_nesting(&text).map_err(|msg| TraceError::Yaml {
        path: path.to_path_buf(),
        msg,
    })?;
    serde_yaml::from_str(&text).map_err(|e| TraceError::Yaml {
        path: path.to_path_buf(),
        msg: crate::files::clip(&e.to_string()),
    })
}

/// Checks a description's shape against its layout.
fn check_shape(path: &Path, layout: Layout, shape: Option<&[usize]>) -> Result<(), TraceError> {
    let bad = |msg: String| {
        Err(TraceError::BadShape {
            path: path.to_path_buf(),
            msg,
        })
    };
    match shape {
        Some([]) => bad("shape is empty".into()),
        Some(s) if layout != Layout::Flat && s.len() != 4 => bad(format!(
            "layout {} needs a 4-entry shape [n, c, h, w], got {} entries {:?}",
            layout.name(),
            s.len(),
            s
        )),
        None if layout != Layout::Flat => bad(format!(
            "layout {} needs a shape [n, c, h, w]",
            layout.name()
        )),
        _ => Ok(()),
    }
}

/// The element width of a data file: its dtype's (an array file), which a description's
/// `word_bits` must agree with; else the description's, else `default`.
fn element_bits(
    path: &Path,
    width: &Width,
    declared: Option<u32>,
    default: u32,
) -> Result<u32, TraceError> {
    let bad = |msg: String| {
        Err(TraceError::BadFormat {
            path: path.to_path_buf(),
            msg,
        })
    };
    let bits = match *width {
        Width::Raw => {
            let w = declared.unwrap_or(default);
            check_word_bits(path, w)?;
            return Ok(w);
        }
        Width::Mixed => {
            return bad(
                "its tensors have elements of different widths; an element trace \
                        needs one width"
                    .into(),
            )
        }
        Width::Bits(b) => b,
    };
    if !matches!(bits, 8 | 16 | 32) {
        return bad(format!(
            "its elements are {}-bit; element traces take 8, 16 or 32 bits (convert with \
             arr.astype('<f4') or similar)",
            bits
        ));
    }
    match declared {
        Some(w) if w != bits => bad(format!(
            "the description says word_bits: {} but the array's elements are {}-bit",
            w, bits
        )),
        _ => Ok(bits),
    }
}

/// Cuts `bytes` into little-endian elements of `word_bits` bits.
fn split(path: &Path, bytes: &[u8], word_bits: u32) -> Result<Vec<u32>, TraceError> {
    if bytes.is_empty() {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    let wb = (word_bits / 8) as usize;
    crate::model::split_le(bytes, wb).ok_or_else(|| TraceError::OddLength {
        path: path.to_path_buf(),
        len: bytes.len() as u64,
        elem_bytes: wb,
        word_bits,
    })
}

/// [`load_trace`] for a consumer of exactly `word_bits`-bit elements: a description or an
/// array file that declares another width is an error (never silently widened or truncated).
/// `consumer` names the setting to change, e.g. `zvc.word_bits`.
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
/// dtype), its dtype string (`<f4`, `<f8`, `<i2`, ...).
pub fn load_bytes_typed(path: &Path) -> Result<(Vec<u8>, Option<String>), TraceError> {
    if is_description(path) {
        // A description's shape counts elements: 32-bit unless it or its array says otherwise.
        let t = load_trace(path, 32)?;
        let wb = (t.word_bits / 8) as usize;
        let bytes = t
            .elems
            .iter()
            .flat_map(|e| e.to_le_bytes()[..wb].to_vec())
            .collect();
        return Ok((bytes, t.descr));
    }
    let Data { bytes, descr, .. } = read_data(path)?;
    if bytes.is_empty() {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok((bytes, descr))
}

/// The data bytes of a trace data file and its dtype when the file has one: `.gz` is
/// gunzipped (then read by its inner extension, so `x.npy.gz` is an array), `.npy` loses its
/// validated header, `.safetensors` gives its tensors' data in data order, anything else is
/// raw bytes.
fn read_data(path: &Path) -> Result<Data, TraceError> {
    let raw = input::read(path, Purpose::Trace).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |msg| TraceError::BadFormat {
        path: path.to_path_buf(),
        msg,
    };
    let mut ext = ext_of(path);
    let raw = if ext == "gz" {
        ext = path
            .file_stem()
            .map(|s| ext_of(Path::new(s)))
            .unwrap_or_default();
        input::gunzip(&raw, Purpose::Trace).map_err(|e| bad(e.to_string()))?
    } else {
        raw
    };
    Ok(match ext.as_str() {
        "npy" => {
            let h = super::npy::parse(&raw).map_err(bad)?;
            Data {
                bytes: raw[h.data_offset..].to_vec(),
                descr: Some(h.descr),
                width: Width::Bits(8 * h.item_bytes as u32),
            }
        }
        "safetensors" => {
            let tensors = tensors_of(path, &raw)?;
            let first = tensors.first().and_then(|t| t.npy_descr());
            let same = tensors.iter().all(|t| t.npy_descr() == first);
            let item = tensors.first().map_or(0, |t| t.item_bytes());
            let width = if tensors.iter().all(|t| t.item_bytes() == item) {
                Width::Bits(8 * item as u32)
            } else {
                Width::Mixed
            };
            let bytes = tensors
                .iter()
                .flat_map(|t| raw[t.start..t.end].iter().copied())
                .collect();
            Data {
                bytes,
                descr: first.filter(|_| same).map(str::to_string),
                width,
            }
        }
        _ => Data {
            bytes: raw,
            descr: None,
            width: Width::Raw,
        },
    })
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

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, bytes).unwrap();
        e.finish().unwrap()
    }

    /// Every engine's element reader decodes array and gzip files, as the byte reader does.
    #[test]
    fn element_reader_decodes_every_format() {
        let dir = tempfile::tempdir().unwrap();
        let elems: Vec<u32> = vec![0, 7, 0, 0x3f80_0000, 0, 0, 1, 2];
        let le: Vec<u8> = elems.iter().flat_map(|e| e.to_le_bytes()).collect();
        let npy = crate::trace::npy::encode("<f4", &[8], &le);
        let at = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let p_npy = at("x.npy", &npy);
        let t = load_trace_exact(&p_npy, 32, "zvc.word_bits").unwrap();
        assert_eq!(
            (t.elems.clone(), t.descr.as_deref()),
            (elems.clone(), Some("<f4"))
        );
        for (name, bytes) in [("x.bin.gz", gz(&le)), ("y.npy.gz", gz(&npy))] {
            let p = at(name, &bytes);
            assert_eq!(load_trace(&p, 32).unwrap().elems, elems, "{name}");
        }
        // A description's data file is read the same way.
        at("data.bin.gz", &gz(&le));
        for file in ["x.npy", "data.bin.gz", "y.npy.gz"] {
            let y = at(
                "d.yaml",
                format!("file: {file}\nshape: [2, 4]\n").as_bytes(),
            );
            let t = load_trace(&y, 32).unwrap();
            assert_eq!((t.elems, t.word_bits), (elems.clone(), 32), "{file}");
            assert_eq!(load_bytes(&y).unwrap(), le, "{file}");
        }
        // The array's width is the trace's: another consumer width is refused, not cut.
        let e = load_trace_exact(&p_npy, 16, "zvc.word_bits")
            .unwrap_err()
            .to_string();
        assert!(e.contains("32-bit elements but zvc.word_bits is 16"), "{e}");
        let y = at("w.yaml", b"file: x.npy\nword_bits: 16\n");
        let e = load_trace(&y, 32).unwrap_err().to_string();
        assert!(e.contains("word_bits: 16") && e.contains("32-bit"), "{e}");
        let f8 = at("f8.npy", &crate::trace::npy::encode("<f8", &[1], &[0; 8]));
        let e = load_trace(&f8, 32).unwrap_err().to_string();
        assert!(e.contains("64-bit") && e.contains("f8.npy"), "{e}");
        assert_eq!(load_bytes(&f8).unwrap().len(), 8);
        // Headers and gzip are checked, never read as elements.
        let e = load_trace(&at("bad.npy", &le), 32).unwrap_err().to_string();
        assert!(e.contains("NUMPY"), "{e}");
        let e = load_trace(&at("bad.gz", &le), 32).unwrap_err().to_string();
        assert!(e.contains("gzip"), "{e}");
        let y = at("loop.yaml", b"file: d.yaml\n");
        let e = load_trace(&y, 32).unwrap_err().to_string();
        assert!(e.contains("another trace description"), "{e}");
    }
}
