//! `hwzip compress` / `decompress` for the line-codec engines, through
//! [`crate::model::line_container`]: adaptive (BDI, FPC and C-Pack+Z, the shortest per line),
//! buddy (BPC per entry). The container's params hold what rebuilds the codec list.

use super::Packed;
use crate::config::Config;
use crate::model::bdi::BdiParams;
use crate::model::bpc::BpcParams;
use crate::model::codec::LineCodec;
use crate::model::container::{self, Header};
use crate::model::cpack::CpackParams;
use crate::model::fpc::FpcParams;
use crate::model::line_container::{self as lc, LineStats};
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
fn open<'a>(engine: &str, data: &'a [u8]) -> Result<(Header, &'a [u8]), String> {
    let (h, payload) = container::open(data).map_err(|e| e.to_string())?;
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
    let f: AdaptiveFile = serde_json::from_str(&h.params_json)
        .map_err(|e| format!("container: bad adaptive params: {e}"))?;
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
    let p: BpcParams = serde_json::from_str(&h.params_json)
        .map_err(|e| format!("container: bad BPC params: {e}"))?;
    p.validate().map_err(|e| format!("container: {e}"))?;
    unpack("buddy", &h, payload, &[&p], data.len())
}
