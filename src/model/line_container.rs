//! File compression with line codecs (BDI, FPC, C-Pack+Z, BPC, …) in the `hwzip compress`
//! container ([`super::container`]: magic, version, engine id, params, original length,
//! CRC-32 trailer).
//!
//! The file is cut into lines of `line_bytes` (the last one padded with zero bytes). Each
//! line is stored as a tag byte and its codec's stream:
//!
//! | tag | then |
//! |---|---|
//! | 0 | the raw line (`line_bytes` bytes) |
//! | k = 1..=N | `nbits` (u16, little-endian, 1 ≤ nbits < 8·`line_bytes`), then the stream of codec k − 1 of the engine's list, `nbits.div_ceil(8)` bytes (MSB-first, zero-padded) |
//!
//! A line takes the shortest stream among the codecs (ties: the first in the list); a line no
//! codec makes shorter than itself is stored raw. Decoding checks every tag, length and
//! stream (a codec error, a stream that does not end where its length says, a non-zero pad
//! of the last line or bytes after the last line are corrupt containers) and bounds the
//! original length by the payload (each line takes at least one byte) before allocating.

use super::codec::LineCodec;
use super::container::{self, Header};
use super::ModelError;

fn bad(msg: impl Into<String>) -> ModelError {
    ModelError::Corrupt(format!("container: {}", msg.into()))
}

/// Per-tag line counts of a compressed file (`hwzip compress --stats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineStats {
    /// Line size in bytes.
    pub line_bytes: usize,
    /// `(name, lines, stored bits)` per tag: `raw`, then each codec.
    pub per_tag: Vec<(String, u64, u64)>,
}

impl LineStats {
    /// No lines yet: a `raw` row and one per codec.
    fn empty(line_bytes: usize, codecs: &[&dyn LineCodec]) -> LineStats {
        LineStats {
            line_bytes,
            per_tag: std::iter::once("raw".to_string())
                .chain(codecs.iter().map(|c| c.name().to_string()))
                .map(|n| (n, 0, 0))
                .collect(),
        }
    }

    /// Lines in the file.
    pub fn lines(&self) -> u64 {
        self.per_tag.iter().map(|t| t.1).sum()
    }

    /// The encoding histogram as a Markdown table (lines, share, mean stored bits per line).
    pub fn to_markdown(&self) -> String {
        let n = self.lines().max(1) as f64;
        let mut s = String::from("| Encoding | Lines | Share | Mean bits / line |\n");
        s.push_str("|---|---:|---:|---:|\n");
        for (name, lines, bits) in &self.per_tag {
            let mean = if *lines > 0 {
                *bits as f64 / *lines as f64
            } else {
                0.0
            };
            s.push_str(&format!(
                "| {name} | {lines} | {:.1} % | {mean:.1} |\n",
                100.0 * *lines as f64 / n
            ));
        }
        s
    }
}

/// Compresses `data` line by line with the best of `codecs` and wraps it in a container for
/// `engine` with `params_json` (which must let the engine rebuild the same codec list).
pub fn compress(
    engine: &str,
    params_json: &str,
    codecs: &[&dyn LineCodec],
    data: &[u8],
) -> Result<(Vec<u8>, LineStats), ModelError> {
    let lb = line_bytes(codecs)?;
    let mut stats = LineStats::empty(lb, codecs);
    let mut body = Vec::with_capacity(data.len() / 2 + 16);
    let mut line = vec![0u8; lb];
    for chunk in data.chunks(lb) {
        line.fill(0);
        line[..chunk.len()].copy_from_slice(chunk);
        let mut best: Option<(usize, super::codec::Coded)> = None;
        for (k, c) in codecs.iter().enumerate() {
            let coded = c.compress(&line)?;
            let shorter = best.as_ref().is_none_or(|(_, b)| coded.nbits < b.nbits);
            if coded.compressed && coded.nbits > 0 && coded.nbits < 8 * lb && shorter {
                best = Some((k, coded));
            }
        }
        match best {
            Some((k, coded)) => {
                body.push(k as u8 + 1);
                body.extend_from_slice(&(coded.nbits as u16).to_le_bytes());
                body.extend_from_slice(&coded.bits[..coded.nbits.div_ceil(8)]);
                stats.per_tag[k + 1].1 += 1;
                stats.per_tag[k + 1].2 += coded.nbits as u64;
            }
            None => {
                body.push(0);
                body.extend_from_slice(&line);
                stats.per_tag[0].1 += 1;
                stats.per_tag[0].2 += 8 * lb as u64;
            }
        }
    }
    Ok((
        container::wrap(engine, params_json, data.len() as u64, &body),
        stats,
    ))
}

fn line_bytes(codecs: &[&dyn LineCodec]) -> Result<usize, ModelError> {
    let lb = codecs.first().map(|c| c.line_bytes()).unwrap_or(0);
    if lb == 0 || codecs.len() > 254 || codecs.iter().any(|c| c.line_bytes() != lb) {
        return Err(ModelError::InvalidParam {
            name: "codecs",
            value: format!("{} codecs", codecs.len()),
            allowed: "1 to 254 codecs with one line size".into(),
        });
    }
    Ok(lb)
}

/// Decodes the payload of a container opened with [`container::open`] (its header `h`)
/// with the codec list the engine rebuilt from the header's params.
pub fn decompress(
    h: &Header,
    payload: &[u8],
    codecs: &[&dyn LineCodec],
) -> Result<(Vec<u8>, LineStats), ModelError> {
    let lb = line_bytes(codecs)?;
    let orig = usize::try_from(h.orig_len)
        .map_err(|_| bad(format!("original length {} too large", h.orig_len)))?;
    let lines = orig.div_ceil(lb);
    if lines > payload.len() {
        return Err(bad(format!(
            "original length {orig} needs {lines} lines of {lb} B, more than a \
             {}-byte payload can hold",
            payload.len()
        )));
    }
    let mut stats = LineStats::empty(lb, codecs);
    let mut out = Vec::with_capacity(lines * lb);
    let mut pos = 0usize;
    let take =
        |pos: &mut usize, n: usize, what: &str| -> Result<std::ops::Range<usize>, ModelError> {
            if payload.len() - *pos < n {
                return Err(bad(format!(
                    "{what} at payload byte {} needs {n} bytes, {} left",
                    *pos,
                    payload.len() - *pos
                )));
            }
            *pos += n;
            Ok(*pos - n..*pos)
        };
    for i in 0..lines {
        let tag = payload[take(&mut pos, 1, "tag")?.start] as usize;
        if tag == 0 {
            let r = take(&mut pos, lb, "raw line")?;
            out.extend_from_slice(&payload[r]);
            stats.per_tag[0].1 += 1;
            stats.per_tag[0].2 += 8 * lb as u64;
            continue;
        }
        let Some(c) = codecs.get(tag - 1) else {
            return Err(bad(format!("line {i}: tag {tag} names no codec")));
        };
        let r = take(&mut pos, 2, "stream length")?;
        let nbits = u16::from_le_bytes([payload[r.start], payload[r.start + 1]]) as usize;
        if nbits == 0 || nbits >= 8 * lb {
            return Err(bad(format!(
                "line {i}: {} stream of {nbits} bits (1..{})",
                c.name(),
                8 * lb
            )));
        }
        let r = take(&mut pos, nbits.div_ceil(8), "stream")?;
        let bits = &payload[r];
        if !nbits.is_multiple_of(8) && bits[bits.len() - 1] & (0xff >> (nbits % 8)) != 0 {
            return Err(bad(format!("line {i}: bits after the stream are not zero")));
        }
        let l = c
            .decompress(bits, nbits)
            .map_err(|e| bad(format!("line {i}: {} stream: {e}", c.name())))?;
        if l.len() != lb {
            return Err(bad(format!(
                "line {i}: {} gave {} bytes",
                c.name(),
                l.len()
            )));
        }
        out.extend_from_slice(&l);
        stats.per_tag[tag].1 += 1;
        stats.per_tag[tag].2 += nbits as u64;
    }
    if pos != payload.len() {
        return Err(bad(format!(
            "{} bytes after the last line",
            payload.len() - pos
        )));
    }
    if out[orig..].iter().any(|&b| b != 0) {
        return Err(bad(format!(
            "padding bytes after original length {orig} are not zero"
        )));
    }
    out.truncate(orig);
    Ok((out, stats))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bdi::BdiParams;
    use crate::model::bpc::BpcParams;
    use crate::model::cpack::CpackParams;
    use crate::model::fpc::FpcParams;

    fn data(n: usize) -> Vec<u8> {
        (0..n as u32)
            .flat_map(|i| {
                let w = match (i / 40) % 4 {
                    0 => 0,
                    1 => 1000 + i,
                    2 => {
                        let mut x = i.wrapping_mul(2_654_435_761) ^ 0x9e37_79b9;
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^ (x << 5)
                    }
                    _ => 7,
                };
                w.to_le_bytes()
            })
            .collect()
    }

    #[test]
    fn round_trips_and_counts_lines() {
        let bdi = BdiParams::default();
        let fpc = FpcParams::default();
        let cp = CpackParams::default();
        let codecs: Vec<&dyn LineCodec> = vec![&bdi, &fpc, &cp];
        for len in [0usize, 1, 63, 64, 65, 1000, 4001] {
            let d: Vec<u8> = data(len.div_ceil(4)).into_iter().take(len).collect();
            let (c, st) = compress("adaptive", "{}", &codecs, &d).unwrap();
            let (h, payload) = container::open(&c).unwrap();
            assert_eq!(h.orig_len, len as u64);
            let (back, st2) = decompress(&h, payload, &codecs).unwrap();
            assert_eq!(back, d);
            assert_eq!(st, st2);
            assert_eq!(st.lines() as usize, len.div_ceil(codecs[0].line_bytes()));
        }
        let bpc = BpcParams::default();
        let codecs: Vec<&dyn LineCodec> = vec![&bpc];
        let d = data(3000);
        let (c, st) = compress("buddy", "{}", &codecs, &d).unwrap();
        assert!(c.len() < d.len(), "{} vs {}", c.len(), d.len());
        assert!(st.per_tag[1].1 > 0 && st.per_tag[0].1 > 0, "{st:?}");
        let (h, payload) = container::open(&c).unwrap();
        assert_eq!(decompress(&h, payload, &codecs).unwrap().0, d);
    }

    /// Every single-bit flip and every cut of a small container is an error.
    #[test]
    fn corrupt_containers_are_errors() {
        let bdi = BdiParams::default();
        let fpc = FpcParams::default();
        let codecs: Vec<&dyn LineCodec> = vec![&bdi, &fpc];
        let d = data(100);
        let (c, _) = compress("adaptive", "{}", &codecs, &d).unwrap();
        let dec = |b: &[u8]| -> Result<Vec<u8>, ModelError> {
            let (h, p) = container::open(b)?;
            Ok(decompress(&h, p, &codecs)?.0)
        };
        assert_eq!(dec(&c).unwrap(), d);
        container::assert_damage_refused(&c, dec);
        // Past the CRC: a bad tag, a huge declared length.
        let h = container::parse_header(&c).unwrap();
        let reseal = |mut v: Vec<u8>| {
            v.truncate(v.len() - 4);
            let crc = crc32fast::hash(&v);
            v.extend_from_slice(&crc.to_le_bytes());
            v
        };
        let mut v = c.clone();
        v[h.payload_offset] = 9;
        let e = dec(&reseal(v)).unwrap_err().to_string();
        assert!(e.contains("tag 9"), "{e}");
        let mut v = c.clone();
        let at = h.payload_offset - 8;
        v[at..at + 8].copy_from_slice(&(u64::MAX / 4).to_le_bytes());
        let e = dec(&reseal(v)).unwrap_err().to_string();
        assert!(e.contains("more than"), "{e}");
    }
}
