//! Hugging Face `.safetensors` files: an 8-byte little-endian header length, a JSON header
//! naming each tensor's dtype, shape and byte range, then the tensor data.
//!
//! Everything is validated before the data is used: the header length against the file and
//! [`MAX_HEADER`], the JSON (an object whose values are tensor descriptions, plus an optional
//! `__metadata__` map of strings), each dtype against the format's list, the element count
//! times the item size (checked arithmetic) against the byte range, each range against the
//! data, and the ranges against each other (no overlaps).

use serde_json::Value;

/// Largest header accepted (16 MiB; the format allows 100 MB, real files use kilobytes).
pub const MAX_HEADER: u64 = 16 << 20;

/// One tensor of a `.safetensors` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// Its name in the header (e.g. `encoder.layer.0.attention.self.query.weight`).
    pub name: String,
    /// Its dtype as the format spells it (`F32`, `BF16`, `I64`, ...).
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its bytes: `start..end` in the whole file.
    pub start: usize,
    /// End of its bytes in the whole file (exclusive).
    pub end: usize,
}

impl Tensor {
    /// Bytes per element (0 for a dtype the format does not define; parsing refuses those).
    pub fn item_bytes(&self) -> usize {
        item_bytes(&self.dtype).unwrap_or(0)
    }

    /// The NumPy-style dtype string of this tensor (`<f4`, `<f2`, `<i2`, ...), if it has one.
    pub fn npy_descr(&self) -> Option<&'static str> {
        Some(match self.dtype.as_str() {
            "F64" => "<f8",
            "F32" => "<f4",
            "F16" => "<f2",
            "I64" => "<i8",
            "I32" => "<i4",
            "I16" => "<i2",
            "I8" => "|i1",
            "U8" => "|u1",
            "BOOL" => "|b1",
            _ => return None,
        })
    }
}

/// Bytes per element of a safetensors dtype, `None` for a dtype the format does not define.
fn item_bytes(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" => 1,
        "I16" | "U16" | "F16" | "BF16" => 2,
        "I32" | "U32" | "F32" => 4,
        "I64" | "U64" | "F64" => 8,
        _ => return None,
    })
}

/// Parses and validates `raw` (the whole file); returns its tensors in data order.
pub fn parse(raw: &[u8]) -> Result<Vec<Tensor>, String> {
    if raw.len() < 8 {
        return Err("not a .safetensors file (shorter than its 8-byte header length)".into());
    }
    let hlen = u64::from_le_bytes(raw[..8].try_into().expect("8 bytes"));
    if hlen > MAX_HEADER {
        return Err(format!(
            "safetensors header of {hlen} bytes is larger than the {MAX_HEADER}-byte limit"
        ));
    }
    let data_start = 8 + hlen as usize;
    if data_start > raw.len() {
        return Err(format!(
            "safetensors header of {hlen} bytes runs past the end of the {}-byte file",
            raw.len()
        ));
    }
    let header: Value = serde_json::from_slice(&raw[8..data_start])
        .map_err(|e| format!("safetensors header is not valid JSON: {e}"))?;
    let Value::Object(map) = header else {
        return Err("safetensors header is not a JSON object".into());
    };
    let data_len = raw.len() - data_start;
    let mut tensors = Vec::with_capacity(map.len());
    for (name, desc) in &map {
        if name == "__metadata__" {
            let ok = desc
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_string));
            if !ok {
                return Err("safetensors `__metadata__` is not a map of strings".into());
            }
            continue;
        }
        tensors.push(tensor(name, desc, data_start, data_len)?);
    }
    tensors.sort_by_key(|t| (t.start, t.end));
    for w in tensors.windows(2) {
        if w[1].start < w[0].end {
            return Err(format!(
                "safetensors tensors `{}` and `{}` overlap",
                w[0].name, w[1].name
            ));
        }
    }
    Ok(tensors)
}

/// Validates one tensor description.
fn tensor(name: &str, desc: &Value, data_start: usize, data_len: usize) -> Result<Tensor, String> {
    let bad = |what: &str| format!("safetensors tensor `{name}`: {what}");
    let obj = desc.as_object().ok_or_else(|| bad("not a JSON object"))?;
    if let Some(k) = obj
        .keys()
        .find(|k| !["dtype", "shape", "data_offsets"].contains(&k.as_str()))
    {
        return Err(bad(&format!("unknown key `{k}`")));
    }
    let dtype = obj
        .get("dtype")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("missing string `dtype`"))?;
    let item = item_bytes(dtype).ok_or_else(|| bad(&format!("unknown dtype `{dtype}`")))?;
    let dims = |key: &str| -> Result<Vec<usize>, String> {
        obj.get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| bad(&format!("missing array `{key}`")))?
            .iter()
            .map(|v| {
                v.as_u64()
                    .and_then(|x| usize::try_from(x).ok())
                    .ok_or_else(|| bad(&format!("`{key}` holds {v}, not a size")))
            })
            .collect()
    };
    let shape = dims("shape")?;
    let offsets = dims("data_offsets")?;
    let [b, e] = offsets[..] else {
        return Err(bad("`data_offsets` is not [begin, end]"));
    };
    if b > e || e > data_len {
        return Err(bad(&format!(
            "bytes {b}..{e} lie outside the {data_len} bytes of data"
        )));
    }
    let bytes = shape
        .iter()
        .try_fold(item, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad("shape overflows"))?;
    if bytes != e - b {
        return Err(bad(&format!(
            "shape {shape:?} of {dtype} needs {bytes} bytes, its range holds {}",
            e - b
        )));
    }
    Ok(Tensor {
        name: name.to_string(),
        dtype: dtype.to_string(),
        shape,
        start: data_start + b,
        end: data_start + e,
    })
}

/// The group a tensor belongs to: its name with every all-digit component replaced by `*`
/// (`encoder.layer.3.output.dense.weight` -> `encoder.layer.*.output.dense.weight`), so the
/// same tensor of every layer falls into one group.
pub fn group(name: &str) -> String {
    name.split('.')
        .map(|c| {
            if !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                c
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend(header.as_bytes());
        v.extend(data);
        v
    }

    #[test]
    fn parses_in_data_order() {
        let h = r#"{"__metadata__":{"format":"pt"},
            "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},
            "a":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}"#;
        let raw = file(h, &[0; 12]);
        let t = parse(&raw).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].name, "a");
        assert_eq!(t[0].npy_descr(), Some("<i2"));
        assert_eq!((t[1].start, t[1].end), (8 + h.len() + 4, 8 + h.len() + 12));
        assert_eq!(t[1].shape, vec![2]);
    }

    #[test]
    fn rejects_malformed_headers() {
        let cases: [(&str, usize, &str); 9] = [
            ("[1]", 0, "not a JSON object"),
            ("{", 0, "not valid JSON"),
            (
                r#"{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}"#,
                4,
                "unknown dtype",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
                4,
                "needs 8 bytes",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}}"#,
                4,
                "outside",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}"#,
                4,
                "outside",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,4]}}"#,
                4,
                "overflows",
            ),
            (
                r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},
                    "b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}}"#,
                4,
                "overlap",
            ),
            (r#"{"__metadata__":{"x":1}}"#, 0, "map of strings"),
        ];
        for (h, n, want) in cases {
            let e = parse(&file(h, &vec![0; n])).unwrap_err();
            assert!(e.contains(want), "{h}: {e}");
        }
        assert!(parse(&[1, 2, 3]).unwrap_err().contains("shorter"));
        let mut big = (MAX_HEADER + 1).to_le_bytes().to_vec();
        big.extend([0; 8]);
        assert!(parse(&big).unwrap_err().contains("limit"));
        let mut past = 100u64.to_le_bytes().to_vec();
        past.extend(b"{}");
        assert!(parse(&past).unwrap_err().contains("past the end"));
    }

    #[test]
    fn groups_layers() {
        assert_eq!(
            group("encoder.layer.13.output.dense.weight"),
            "encoder.layer.*.output.dense.weight"
        );
        assert_eq!(group("embeddings.w2.weight"), "embeddings.w2.weight");
    }
}
