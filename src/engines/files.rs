//! `hwzip compress` / `decompress` for the line-codec engines, through
//! [`crate::model::line_container`]: adaptive (BDI, FPC and C-Pack+Z, the shortest per line),
//! buddy (BPC per entry). The container's params hold what rebuilds the codec list.
//! cpack-lossy stores its blocks as the memory does: per block its 8-bit MD entry, then its
//! chunks ([`cpack_lossy_compress`]).

use super::Packed;
use crate::config::Config;
use crate::model::bdi::BdiParams;
use crate::model::bpc::BpcParams;
use crate::model::codec::LineCodec;
use crate::model::container::{self, Header};
use crate::model::cpack::CpackParams;
use crate::model::fpc::FpcParams;
use crate::model::line_container::{self as lc, LineStats};
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// The adaptive engine's container params: the enabled codecs in tag order and their
/// parameters.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AdaptiveFile {
    codecs: Vec<String>,
    bdi: BdiParams,
    fpc: FpcParams,
    cpack: CpackParams,
}

impl AdaptiveFile {
    fn list(&self) -> Result<Vec<&dyn LineCodec>, String> {
        self.bdi.validate().map_err(|e| e.to_string())?;
        self.fpc.validate().map_err(|e| e.to_string())?;
        self.cpack.validate().map_err(|e| e.to_string())?;
        let mut v: Vec<&dyn LineCodec> = Vec::new();
        for c in &self.codecs {
            let codec: &dyn LineCodec = match c.as_str() {
                "bdi" => &self.bdi,
                "fpc" => &self.fpc,
                "cpack" => &self.cpack,
                other => {
                    return Err(format!(
                        "unknown codec {:?} (bdi, fpc, cpack)",
                        crate::files::quote(other)
                    ))
                }
            };
            if v.iter().any(|x| x.name() == codec.name()) {
                return Err(format!("codec {c} listed twice"));
            }
            v.push(codec);
        }
        if v.is_empty() {
            return Err("no codec enabled (adaptive.use_bdi/use_fpc/use_cpack)".into());
        }
        Ok(v)
    }
}

fn stats_text(engine: &str, st: &LineStats, raw: usize, stored: usize) -> String {
    format!(
        "{engine}: {} lines of {} B, {raw} -> {stored} bytes (ratio {:.3})\n\n{}",
        st.lines(),
        st.line_bytes,
        raw as f64 / stored.max(1) as f64,
        st.to_markdown()
    )
}

fn pack(
    engine: &str,
    params: &str,
    codecs: &[&dyn LineCodec],
    data: &[u8],
) -> Result<Packed, String> {
    let (bytes, st) = lc::compress(engine, params, codecs, data).map_err(|e| e.to_string())?;
    let stats = stats_text(engine, &st, data.len(), bytes.len());
    Ok(Packed { bytes, stats })
}

fn unpack(
    engine: &str,
    h: &Header,
    payload: &[u8],
    codecs: &[&dyn LineCodec],
    stored: usize,
) -> Result<Packed, String> {
    let (bytes, st) = lc::decompress(h, payload, codecs).map_err(|e| e.to_string())?;
    let stats = stats_text(engine, &st, bytes.len(), stored);
    Ok(Packed { bytes, stats })
}

/// Opens a container and checks that `engine` wrote it.
pub(super) fn open<'a>(engine: &str, data: &'a [u8]) -> Result<(Header, &'a [u8]), String> {
    let (h, payload) = container::open(data).map_err(|e| e.to_string())?;
    if h.engine == container::ENGINE_CODEC && engine != h.engine {
        return Err(format!(
            "the container was written by `compress --codec`, not engine {engine}: \
             decompress it without --engine"
        ));
    }
    if h.engine != engine {
        return Err(format!(
            "the container was written by engine {:?}, not {engine}: use --engine {}",
            crate::files::quote(&h.engine),
            crate::files::quote(&h.engine)
        ));
    }
    Ok((h, payload))
}

/// `hwzip compress --engine adaptive`.
pub fn adaptive_compress(cfg: &Config, data: &[u8]) -> Result<Packed, String> {
    let a = &cfg.adaptive;
    let names = [
        ("bdi", a.use_bdi),
        ("fpc", a.use_fpc),
        ("cpack", a.use_cpack),
    ];
    let f = AdaptiveFile {
        codecs: names
            .iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| n.to_string())
            .collect(),
        bdi: a.bdi(),
        fpc: a.fpc(),
        cpack: a.cpack(),
    };
    let params = serde_json::to_string(&f).map_err(|e| e.to_string())?;
    pack("adaptive", &params, &f.list()?, data)
}

/// `hwzip decompress --engine adaptive`.
pub fn adaptive_decompress(data: &[u8]) -> Result<Packed, String> {
    let (h, payload) = open("adaptive", data)?;
    let f: AdaptiveFile = container::read_params(&h, "adaptive").map_err(|e| e.to_string())?;
    let list = f.list().map_err(|e| format!("container: {e}"))?;
    unpack("adaptive", &h, payload, &list, data.len())
}

/// `hwzip compress --engine buddy`: BPC per entry of `buddy.bpc.entry_bytes`.
pub fn buddy_compress(cfg: &Config, data: &[u8]) -> Result<Packed, String> {
    let p = cfg.buddy.bpc.model();
    p.validate().map_err(|e| e.to_string())?;
    let params = serde_json::to_string(&p).map_err(|e| e.to_string())?;
    pack("buddy", &params, &[&p], data)
}

/// `hwzip decompress --engine buddy`.
pub fn buddy_decompress(data: &[u8]) -> Result<Packed, String> {
    let (h, payload) = open("buddy", data)?;
    let p: BpcParams = container::read_params(&h, "buddy").map_err(|e| e.to_string())?;
    p.validate().map_err(|e| format!("container: {e}"))?;
    unpack("buddy", &h, payload, &[&p], data.len())
}

/// The cpack-lossy container's params: the codec and the truncation code of every block.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LossyFile {
    codec: crate::model::cpack_lossy::LossyParams,
    tcode: u8,
}

/// `hwzip compress --engine cpack-lossy [--truncate T]`: every block of
/// `cpack_lossy.codec.block_bytes` compressed with truncation code `tcode` (the index of `T`
/// in `t_table`; 0 is lossless) and stored as its MD entry (8-bit form) and its chunks.
/// Lossy files decompress to the restored values; the statistics give the FP32 error.
pub fn cpack_lossy_compress(cfg: &Config, data: &[u8]) -> Result<Packed, String> {
    use crate::model::cpack_lossy as cl;
    let p = cfg.cpack_lossy.codec.clone();
    p.validate().map_err(|e| e.to_string())?;
    let t = cfg.compress_truncate;
    let tcode = (0..4u8).find(|&c| p.t_of(c) == t).ok_or_else(|| {
        format!(
            "--truncate {t} is not in cpack_lossy.codec.t_table {:?}",
            p.t_table
        )
    })?;
    if p.md_bits == 4 && tcode != 0 {
        return Err(format!(
            "--truncate {t} needs 8-bit MD entries (cpack_lossy.codec.md_bits: 8)"
        ));
    }
    let bb = p.block_bytes;
    let mut body = Vec::with_capacity(data.len() / 2 + 16);
    let mut hist = vec![0u64; p.raw_chunks() + 1];
    let mut restored = Vec::with_capacity(data.len());
    let mut block = vec![0u8; bb];
    for chunk in data.chunks(bb) {
        block.fill(0);
        block[..chunk.len()].copy_from_slice(chunk);
        let b = cl::compress(&p, &block, tcode).map_err(|e| e.to_string())?;
        body.push(b.md.encode(8) as u8);
        body.extend_from_slice(&b.chunks[..b.md.n as usize * cl::CHUNK_BYTES]);
        hist[if b.md.c { b.md.n as usize } else { 0 }] += 1;
        if tcode != 0 {
            restored.extend(cl::expected_roundtrip(&p, &block, tcode));
        }
    }
    let params = serde_json::to_string(&LossyFile {
        codec: p.clone(),
        tcode,
    })
    .map_err(|e| e.to_string())?;
    let bytes = container::wrap("cpack-lossy", &params, data.len() as u64, &body);
    let mut stats = lossy_stats(&p, t, &hist, data.len(), bytes.len());
    if tcode != 0 {
        stats.push_str(&error_text(data, &restored, t));
    }
    Ok(Packed { bytes, stats })
}

fn lossy_stats(
    p: &crate::model::cpack_lossy::LossyParams,
    t: u32,
    hist: &[u64],
    raw: usize,
    stored: usize,
) -> String {
    let blocks: u64 = hist.iter().sum();
    let mut s = format!(
        "cpack-lossy: {blocks} blocks of {} B, t = {t}, {raw} -> {stored} bytes (ratio {:.3})\n\n\
         | Stored as | Blocks | Share |\n|---|---:|---:|\n",
        p.block_bytes,
        raw as f64 / stored.max(1) as f64
    );
    for (n, c) in hist.iter().enumerate() {
        let name = if n == 0 {
            "raw".to_string()
        } else {
            format!("{n} chunk{}", if n > 1 { "s" } else { "" })
        };
        s.push_str(&format!(
            "| {name} | {c} | {:.1} % |\n",
            100.0 * *c as f64 / blocks.max(1) as f64
        ));
    }
    s
}

/// The FP32 error of `restored` against `data` (little-endian words; a partial last word is
/// left out).
fn error_text(data: &[u8], restored: &[u8], t: u32) -> String {
    let f = |b: &[u8]| -> Vec<f64> {
        b.chunks_exact(4)
            .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]]) as f64)
            .collect()
    };
    let n = data.len() / 4 * 4;
    let e = crate::model::cpack_lossy::fp::error_stats(&f(&data[..n]), &f(&restored[..n]));
    format!(
        "\nFP32 error (t = {t}, bound 2^({t}-23) = {:.2e}): {} finite values, RMSE {:.3e}, \
         NRMSE {:.3e} of the range, {:.3e} of the mean |x|, max relative {:.3e}\n",
        2f64.powi(t as i32 - 23),
        e.n,
        e.rmse,
        e.nrmse_range,
        e.nrmse_mean,
        e.max_rel
    )
}

/// `hwzip decompress --engine cpack-lossy`: every MD entry and chunk checked (strictly: the
/// stream ends in its last chunk, zero pad bits).
pub fn cpack_lossy_decompress(data: &[u8]) -> Result<Packed, String> {
    use crate::model::cpack_lossy as cl;
    let (h, payload) = open("cpack-lossy", data)?;
    let f: LossyFile = container::read_params(&h, "cpack-lossy").map_err(|e| e.to_string())?;
    let p = f.codec;
    p.validate().map_err(|e| format!("container: {e}"))?;
    if f.tcode > 3 || (p.md_bits == 4 && f.tcode != 0) {
        return Err(format!("container: tcode {} not allowed", f.tcode));
    }
    let bb = p.block_bytes;
    let orig = usize::try_from(h.orig_len).map_err(|_| "container: length too large")?;
    let blocks = orig.div_ceil(bb);
    if blocks > payload.len() / (1 + cl::CHUNK_BYTES) {
        return Err(format!(
            "container: original length {orig} needs {blocks} blocks, more than a {}-byte \
             payload holds",
            payload.len()
        ));
    }
    // The entries are stored in the 8-bit form whatever the build's MD width.
    let p8 = cl::LossyParams {
        md_bits: 8,
        ..p.clone()
    };
    let mut out = Vec::with_capacity(blocks * bb);
    let mut hist = vec![0u64; p.raw_chunks() + 1];
    let mut pos = 0usize;
    for i in 0..blocks {
        let bad = |m: String| format!("container: block {i}: {m}");
        let Some(&mdb) = payload.get(pos) else {
            return Err(bad("no MD entry".into()));
        };
        pos += 1;
        let md = cl::MdEntry::decode(&p8, mdb as u64);
        if mdb & 3 != 0 || md.tcode != f.tcode || (!md.c && mdb >> 4 & 7 != 0) {
            return Err(bad(format!("bad MD entry {mdb:#04x}")));
        }
        let need = md.n as usize * cl::CHUNK_BYTES;
        let Some(chunks) = payload.get(pos..pos + need) else {
            return Err(bad(format!("{} chunks missing", md.n)));
        };
        pos += need;
        let blk =
            cl::decompress(&p, md, chunks, cl::Check::Strict).map_err(|e| bad(e.to_string()))?;
        out.extend_from_slice(&blk);
        hist[if md.c { md.n as usize } else { 0 }] += 1;
    }
    if pos != payload.len() {
        return Err(format!(
            "container: {} bytes after the last block",
            payload.len() - pos
        ));
    }
    // Lossy blocks restore zero words with the fill, so only lossless pads must be zero.
    if f.tcode == 0 && out[orig..].iter().any(|&b| b != 0) {
        return Err(format!(
            "container: padding bytes after original length {orig} are not zero"
        ));
    }
    out.truncate(orig);
    let t = p.t_of(f.tcode);
    let stats = lossy_stats(&p, t, &hist, out.len(), data.len());
    Ok(Packed { bytes: out, stats })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine's container reader refuses params with a key it does not know, with the
    /// same message.
    #[test]
    fn every_params_reader_refuses_unknown_keys() {
        let data = floats(4096);
        let mut engines = 0;
        for e in super::super::ALL {
            let Ok(packed) = e.compress(&Config::default(), &data) else {
                continue;
            };
            assert!(e.decompress(&packed.bytes).is_ok(), "{}", e.name());
            let (h, payload) = container::open(&packed.bytes).unwrap();
            let json = h.params_json.replacen('{', "{\"extra\":1,", 1);
            let bad = container::wrap(&h.engine, &json, h.orig_len, payload);
            let msg = e.decompress(&bad).unwrap_err();
            assert!(
                msg.contains(&format!("bad {} params", e.name())) && msg.contains("extra"),
                "{}: {msg}",
                e.name()
            );
            engines += 1;
        }
        assert_eq!(
            engines, 4,
            "zvc, adaptive, cpack-lossy and buddy have containers"
        );
    }

    fn floats(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| ((i as f32 / 40.0).sin() * 50.0).to_le_bytes())
            .collect()
    }

    /// Lossless files round-trip; lossy ones give the model's restored values; every bit
    /// flip and cut of a small container is an error.
    #[test]
    fn cpack_lossy_files() {
        use crate::model::cpack_lossy as cl;
        let mut cfg = Config::default();
        let data: Vec<u8> = floats(700).into_iter().chain([1, 2, 3]).collect();
        for t in [0u32, 8, 12, 16] {
            cfg.compress_truncate = t;
            let c = cpack_lossy_compress(&cfg, &data).unwrap();
            let d = cpack_lossy_decompress(&c.bytes).unwrap();
            let p = &cfg.cpack_lossy.codec;
            let tcode = (0..4).find(|&k| p.t_of(k) == t).unwrap();
            let want: Vec<u8> = data
                .chunks(p.block_bytes)
                .flat_map(|b| {
                    let mut blk = b.to_vec();
                    blk.resize(p.block_bytes, 0);
                    cl::expected_roundtrip(p, &blk, tcode)
                })
                .take(data.len())
                .collect();
            assert_eq!(d.bytes, want, "t = {t}");
            if t == 0 {
                assert_eq!(d.bytes, data);
            } else {
                assert!(c.stats.contains("FP32 error"), "{}", c.stats);
                assert!(c.bytes.len() < data.len());
            }
        }
        cfg.compress_truncate = 12;
        let c = cpack_lossy_compress(&cfg, &floats(64)).unwrap().bytes;
        crate::model::container::assert_damage_refused(&c, cpack_lossy_decompress);
        cfg.compress_truncate = 5;
        let e = cpack_lossy_compress(&cfg, &data).unwrap_err();
        assert!(e.contains("t_table"), "{e}");
        // Another engine's container is refused by name.
        let b = buddy_compress(&Config::default(), &data).unwrap().bytes;
        let e = cpack_lossy_decompress(&b).unwrap_err();
        assert!(e.contains("written by engine"), "{e}");
        // ZVC says the same.
        use crate::engines::Engine;
        let e = crate::engines::zvc::Zvc.decompress(&b).unwrap_err();
        assert_eq!(
            e,
            "the container was written by engine \"buddy\", not zvc: use --engine buddy"
        );
    }
}
