//! NumPy `.npy` files (format versions 1-3): the header is validated before the data is used.
//!
//! The header is a Python dict literal with exactly the keys `descr`, `fortran_order` and
//! `shape`. Accepted: little-endian (or byte-wide) integer, float and bool dtypes in C order.
//! The shape's element count times the item size is computed with checked arithmetic and must
//! equal the data length exactly; a header that disagrees with its data is an error.

/// Largest header accepted (NumPy itself writes at most a few hundred bytes).
const MAX_HEADER: usize = 1 << 16;

/// A validated `.npy` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The dtype string, e.g. `<f4`.
    pub descr: String,
    /// Bytes per element.
    pub item_bytes: usize,
    /// Array shape.
    pub shape: Vec<usize>,
    /// Offset of the data.
    pub data_offset: usize,
}

/// The array data of a `.npy` file, after [`parse`] checked the header against it.
pub fn data(raw: &[u8]) -> Result<Vec<u8>, String> {
    let h = parse(raw)?;
    Ok(raw[h.data_offset..].to_vec())
}

/// Parses and validates the header of `raw` (the whole file).
pub fn parse(raw: &[u8]) -> Result<Header, String> {
    if raw.len() < 10 || &raw[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (missing \\x93NUMPY magic)".into());
    }
    let (hlen, start): (usize, usize) = match raw[6] {
        1 => (u16::from_le_bytes([raw[8], raw[9]]) as usize, 10),
        2 | 3 if raw.len() >= 12 => (
            u32::from_le_bytes([raw[8], raw[9], raw[10], raw[11]]) as usize,
            12,
        ),
        v => {
            return Err(format!(
                ".npy format version {} is not supported (1, 2, 3)",
                v
            ))
        }
    };
    if hlen > MAX_HEADER {
        return Err(format!(
            ".npy header of {} bytes is over {} bytes",
            hlen, MAX_HEADER
        ));
    }
    let end = start
        .checked_add(hlen)
        .filter(|&e| e <= raw.len())
        .ok_or_else(|| {
            format!(
                ".npy header of {} bytes runs past the end of the file",
                hlen
            )
        })?;
    let text =
        std::str::from_utf8(&raw[start..end]).map_err(|_| ".npy header is not text".to_string())?;
    let (descr, fortran, shape) = dict(text)?;
    if fortran {
        return Err(".npy arrays in Fortran order are not supported".into());
    }
    let item_bytes = dtype_bytes(&descr)?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .and_then(|n| n.checked_mul(item_bytes))
        .ok_or_else(|| format!(".npy shape {:?} overflows", shape))?;
    let have = raw.len() - end;
    if count != have {
        return Err(format!(
            ".npy header says shape {:?} of '{}' ({} bytes) but the file has {} data bytes",
            shape, descr, count, have
        ));
    }
    Ok(Header {
        descr,
        item_bytes,
        shape,
        data_offset: end,
    })
}

fn dtype_bytes(descr: &str) -> Result<usize, String> {
    let shown = crate::files::quote(descr);
    let mut c = descr.chars();
    let (order, kind) = (c.next(), c.next());
    let size: usize = c
        .as_str()
        .parse()
        .map_err(|_| format!(".npy dtype '{}' is not supported", shown))?;
    let byte_wide = size == 1 && matches!(order, Some('|' | '<' | '>' | '='));
    if !(byte_wide || order == Some('<')) {
        return Err(format!(
            ".npy dtype '{}' is not little-endian; convert with arr.astype('<{}{}')",
            shown,
            kind.unwrap_or('f'),
            size
        ));
    }
    match (kind, size) {
        (Some('u' | 'i'), 1 | 2 | 4 | 8) | (Some('f'), 2 | 4 | 8) | (Some('b'), 1) => Ok(size),
        _ => Err(format!(
            ".npy dtype '{}' is not supported (integers, floats, bool)",
            shown
        )),
    }
}

/// Splits the dict literal into its three values.
fn dict(text: &str) -> Result<(String, bool, Vec<usize>), String> {
    let bad = |what: &str| format!(".npy header is malformed: {}", what);
    let t = text.trim_end_matches(['\n', ' ', '\0']).trim();
    let body = t
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or_else(|| bad("not a {...} dict"))?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    let mut rest = body.trim();
    while !rest.is_empty() {
        let (key, after) = quoted(rest).ok_or_else(|| bad("expected a quoted key"))?;
        let after = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| bad("expected ':' after a key"))?
            .trim_start();
        let after = match key {
            "descr" if descr.is_none() => {
                let (v, a) = quoted(after).ok_or_else(|| bad("descr is not a string"))?;
                descr = Some(v.to_string());
                a
            }
            "fortran_order" if fortran.is_none() => {
                if let Some(a) = after.strip_prefix("False") {
                    fortran = Some(false);
                    a
                } else if let Some(a) = after.strip_prefix("True") {
                    fortran = Some(true);
                    a
                } else {
                    return Err(bad("fortran_order is not True or False"));
                }
            }
            "shape" if shape.is_none() => {
                let inner = after
                    .strip_prefix('(')
                    .ok_or_else(|| bad("shape is not a tuple"))?;
                let close = inner
                    .find(')')
                    .ok_or_else(|| bad("shape tuple is not closed"))?;
                let mut dims = Vec::new();
                for d in inner[..close]
                    .split(',')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                {
                    let d = d.trim_end_matches('L');
                    dims.push(
                        d.parse::<usize>()
                            .map_err(|_| bad("a shape entry is not a size"))?,
                    );
                }
                if dims.len() > 32 {
                    return Err(bad("more than 32 dimensions"));
                }
                shape = Some(dims);
                &inner[close + 1..]
            }
            _ => {
                return Err(bad(&format!(
                    "unexpected or repeated key '{}'",
                    crate::files::quote(key)
                )))
            }
        };
        let after = after.trim_start();
        rest = match after.strip_prefix(',') {
            Some(a) => a.trim_start(),
            None if after.is_empty() => after,
            None => return Err(bad("expected ',' between entries")),
        };
    }
    match (descr, fortran, shape) {
        (Some(d), Some(f), Some(s)) => Ok((d, f, s)),
        _ => Err(bad("descr, fortran_order and shape are all required")),
    }
}

/// A `'...'` or `"..."` string at the start of `s`, and what follows it.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let q = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let end = s[1..].find(q)? + 1;
    Some((&s[1..end], &s[end + 1..]))
}

/// A `.npy` file (version 1) of `data` with the given dtype and shape (tests and examples).
pub fn encode(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut h = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
        descr, tuple
    );
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h.as_bytes());
    out.extend(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_must_agree_with_their_data() {
        let data: Vec<u8> = (0..24).collect();
        let f = encode("<f4", &[2, 3], &data);
        let h = parse(&f).unwrap();
        assert_eq!((h.item_bytes, h.shape.clone()), (4, vec![2, 3]));
        assert_eq!(self::data(&f).unwrap(), data);
        assert_eq!(parse(&encode("|u1", &[24], &data)).unwrap().shape, vec![24]);
        assert_eq!(
            parse(&encode("<i2", &[], &data[..2])).unwrap().shape,
            Vec::<usize>::new()
        );
        let cases: &[(Vec<u8>, &str)] = &[
            (encode("<f4", &[2, 4], &data), "32 bytes"),
            (encode("<f4", &[usize::MAX, 2], &data), "overflows"),
            (encode(">f4", &[2, 3], &data), "little-endian"),
            (encode("<c8", &[3], &data), "not supported"),
            (encode("<U3", &[2], &data), "not supported"),
            (data.clone(), "magic"),
        ];
        for (f, want) in cases {
            let e = parse(f).unwrap_err();
            assert!(e.contains(want), "{e} !~ {want}");
        }
        let mut f = encode("<f4", &[2, 3], &data);
        let h = String::from_utf8_lossy(&f[10..74]).replace("False", "True ");
        f.splice(10..74, h.bytes());
        assert!(parse(&f).unwrap_err().contains("Fortran"));
        for hdr in [
            "{'descr': '<f4', 'shape': (6,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}",
            "{'descr': '<f4' 'fortran_order': False, 'shape': (6,)}",
            "['descr']",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }",
        ] {
            let mut f = b"\x93NUMPY\x01\x00".to_vec();
            f.extend((hdr.len() as u16).to_le_bytes());
            f.extend(hdr.as_bytes());
            f.extend(&data);
            assert!(parse(&f).unwrap_err().contains("malformed"), "{hdr}");
        }
    }
}
