//! Every line codec alone on a file: `hwzip compress --codec C` (the line container of
//! [`crate::model::line_container`] with one codec, engine id `codec`) and
//! `hwzip eval --codecs all` (every codec side by side with zlib and zstd).
//!
//! | codec | what | parameters from the configuration |
//! |---|---|---|
//! | `bdi` | Base-Delta-Immediate (IPDPS'19) | `adaptive` (line size, base rule) |
//! | `fpc` | Frequent Pattern Compression | `adaptive` |
//! | `cpack` | C-Pack+Z, the link codec | `adaptive` (line size, code table, dictionary) |
//! | `cpack128` | original C-Pack on 128 B blocks (PACT'12, lossless) | `cpack_lossy.codec` |
//! | `bpc` | Bit-Plane Compression (ISCA'20) | `buddy.bpc` |
//! | `zvc` | zero-value compression of one 128 B line | `zvc.word_bits` |

use super::Packed;
use crate::config::Config;
use crate::model::bdi::BdiParams;
use crate::model::bpc::BpcParams;
use crate::model::codec::LineCodec;
use crate::model::container;
use crate::model::cpack::CpackParams;
use crate::model::fpc::FpcParams;
use crate::model::line_container as lc;
use crate::model::zvc_line::ZvcLineParams;
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// The container engine id of a single-codec file.
pub const ENGINE_ID: &str = container::ENGINE_CODEC;

/// The codec names `--codec` takes.
pub const NAMES: [&str; 6] = ["bdi", "fpc", "cpack", "cpack128", "bpc", "zvc"];

/// One codec with its parameters.
enum Codec {
    Bdi(BdiParams),
    Fpc(FpcParams),
    Cpack(CpackParams),
    Cpack128(CpackParams),
    Bpc(BpcParams),
    Zvc(ZvcLineParams),
}

impl Codec {
    /// The codec `name` with the parameters of `cfg`.
    fn from_config(name: &str, cfg: &Config) -> Result<Codec, String> {
        Ok(match name {
            "bdi" => Codec::Bdi(cfg.adaptive.bdi()),
            "fpc" => Codec::Fpc(cfg.adaptive.fpc()),
            "cpack" => Codec::Cpack(cfg.adaptive.cpack()),
            "cpack128" => Codec::Cpack128(cfg.cpack_lossy.codec.cpack()),
            "bpc" => Codec::Bpc(cfg.buddy.bpc.model()),
            "zvc" => Codec::Zvc(ZvcLineParams {
                line_bytes: 128,
                word_bits: cfg.zvc.word_bits,
            }),
            other => return Err(unknown(other)),
        })
    }

    /// The codec `name` with the parameters a container stored.
    fn from_json(name: &str, params: serde_json::Value) -> Result<Codec, String> {
        fn p<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Result<T, String> {
            serde_json::from_value(v)
                .map_err(|e| format!("bad codec params: {}", crate::files::clip(&e.to_string())))
        }
        Ok(match name {
            "bdi" => Codec::Bdi(p(params)?),
            "fpc" => Codec::Fpc(p(params)?),
            "cpack" => Codec::Cpack(p(params)?),
            "cpack128" => Codec::Cpack128(p(params)?),
            "bpc" => Codec::Bpc(p(params)?),
            "zvc" => Codec::Zvc(p(params)?),
            other => return Err(unknown(other)),
        })
    }

    fn name(&self) -> &'static str {
        match self {
            Codec::Bdi(_) => "bdi",
            Codec::Fpc(_) => "fpc",
            Codec::Cpack(_) => "cpack",
            Codec::Cpack128(_) => "cpack128",
            Codec::Bpc(_) => "bpc",
            Codec::Zvc(_) => "zvc",
        }
    }

    /// The parameters as JSON, after checking them.
    fn params(&self) -> Result<serde_json::Value, String> {
        fn checked<T: Serialize>(
            valid: Result<(), crate::model::ModelError>,
            p: &T,
        ) -> Result<serde_json::Value, String> {
            valid.map_err(|e| e.to_string())?;
            serde_json::to_value(p).map_err(|e| e.to_string())
        }
        match self {
            Codec::Bdi(p) => checked(p.validate(), p),
            Codec::Fpc(p) => checked(p.validate(), p),
            Codec::Cpack(p) | Codec::Cpack128(p) => checked(p.validate(), p),
            Codec::Bpc(p) => checked(p.validate(), p),
            Codec::Zvc(p) => checked(p.validate(), p),
        }
    }

    fn codec(&self) -> &dyn LineCodec {
        match self {
            Codec::Bdi(p) => p,
            Codec::Fpc(p) => p,
            Codec::Cpack(p) | Codec::Cpack128(p) => p,
            Codec::Bpc(p) => p,
            Codec::Zvc(p) => p,
        }
    }
}

fn unknown(name: &str) -> String {
    format!(
        "unknown codec `{}` (codecs: {})",
        crate::files::quote(name),
        NAMES.join(", ")
    )
}

/// `name` as one of [`NAMES`], or the error that lists them.
pub fn check_name(name: &str) -> Result<&'static str, String> {
    NAMES
        .iter()
        .copied()
        .find(|n| *n == name)
        .ok_or_else(|| unknown(name))
}

/// The container params of a single-codec file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CodecFile {
    codec: String,
    params: serde_json::Value,
}

/// `hwzip compress --codec NAME`: every line of the file through codec `name` alone (a line
/// it does not shorten is stored raw).
pub fn compress(name: &str, cfg: &Config, data: &[u8]) -> Result<Packed, String> {
    let c = Codec::from_config(name, cfg)?;
    let (bytes, st) = pack(&c, data)?;
    let stats = stats_text(c.name(), &st, data.len(), bytes.len());
    Ok(Packed { bytes, stats })
}

/// The container of `data` through codec `c` alone, and its line statistics.
fn pack(c: &Codec, data: &[u8]) -> Result<(Vec<u8>, lc::LineStats), String> {
    let f = CodecFile {
        codec: c.name().into(),
        params: c.params()?,
    };
    let params = serde_json::to_string(&f).map_err(|e| e.to_string())?;
    lc::compress(ENGINE_ID, &params, &[c.codec()], data).map_err(|e| e.to_string())
}

/// `hwzip decompress` of a file written by [`compress`].
pub fn decompress(data: &[u8]) -> Result<Packed, String> {
    let (h, payload) = super::files::open(ENGINE_ID, data)?;
    let f: CodecFile = container::read_params(&h, ENGINE_ID).map_err(|e| e.to_string())?;
    let c = Codec::from_json(&f.codec, f.params).map_err(|e| format!("container: {e}"))?;
    c.params().map_err(|e| format!("container: {e}"))?;
    let (bytes, st) = lc::decompress(&h, payload, &[c.codec()]).map_err(|e| e.to_string())?;
    let stats = stats_text(c.name(), &st, bytes.len(), data.len());
    Ok(Packed { bytes, stats })
}

fn stats_text(name: &str, st: &lc::LineStats, raw: usize, stored: usize) -> String {
    format!(
        "{name}: {} lines of {} B, {raw} -> {stored} bytes (ratio {:.3})\n\n{}",
        st.lines(),
        st.line_bytes,
        raw as f64 / stored.max(1) as f64,
        st.to_markdown()
    )
}

/// One row of [`side_by_side`].
#[derive(Clone, Debug, Serialize)]
pub struct CodecRow {
    /// Codec (or `zlib-6`, `zstd-3`).
    pub codec: String,
    /// Line size in bytes (0 for the stream compressors).
    pub line_bytes: usize,
    /// Container (or stream) size in bytes.
    pub bytes: usize,
    /// Input bytes over stored bytes.
    pub ratio: f64,
    /// Share of lines the codec shortened (`None` for the stream compressors).
    pub compressed_lines: Option<f64>,
    /// Compression throughput in MB/s of input (one core).
    pub mb_per_s: f64,
}

/// The codecs `names` each alone on `data` (each file round-tripped), then zlib level 6
/// and zstd level 3 as software references.
pub fn side_by_side(cfg: &Config, data: &[u8], names: &[&str]) -> Result<Vec<CodecRow>, String> {
    let mut rows = Vec::new();
    let rate =
        |t: std::time::Instant| data.len() as f64 / 1e6 / t.elapsed().as_secs_f64().max(1e-9);
    for &name in names {
        let c = Codec::from_config(name, cfg)?;
        let t = std::time::Instant::now();
        let (bytes, st) = pack(&c, data)?;
        let mb_per_s = rate(t);
        if decompress(&bytes)?.bytes != data {
            return Err(format!("{name}: the round trip changed the data"));
        }
        let lines = st.lines().max(1) as f64;
        let shortened = st.per_tag.iter().skip(1).map(|t| t.1).sum::<u64>() as f64;
        rows.push(CodecRow {
            codec: name.into(),
            line_bytes: c.codec().line_bytes(),
            bytes: bytes.len(),
            ratio: data.len() as f64 / bytes.len().max(1) as f64,
            compressed_lines: Some(shortened / lines),
            mb_per_s,
        });
    }
    let t = std::time::Instant::now();
    let z = crate::model::zlib::zlib_size(data, data.len().max(1), 6).map_err(|e| e.to_string())?;
    rows.push(stream_row("zlib-6", data.len(), z, rate(t)));
    let t = std::time::Instant::now();
    if let Some(zs) = zstd_size(data, 3)? {
        rows.push(stream_row("zstd-3", data.len(), zs, rate(t)));
    }
    Ok(rows)
}

/// Bytes `zstd -<level>` makes of `data`: the `zstd` program (Debian's `zstd`, which
/// `scripts/setup.sh` installs) reads `data` on its standard input and its output is counted,
/// not kept. `None` when the program is not installed (the table then has no zstd row). The
/// throughput of that row includes the pipe.
pub fn zstd_size(data: &[u8], level: u8) -> Result<Option<usize>, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new("zstd");
    cmd.args([
        format!("-{level}").as_str(),
        "-q",
        "-c",
        "--no-progress",
        "-",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut child = match crate::proc::spawn(&mut cmd) {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("zstd: {e}")),
    };
    let stdin = child.child().stdin.take();
    let stdout = child.child().stdout.take();
    let counted = std::thread::scope(|s| {
        let writer = s.spawn(move || -> std::io::Result<()> {
            let mut w = stdin.ok_or_else(|| std::io::Error::other("no pipe to zstd"))?;
            w.write_all(data)
            // Dropping `w` closes the pipe: zstd sees the end of its input.
        });
        let mut r = stdout.ok_or_else(|| std::io::Error::other("no pipe from zstd"))?;
        let n = std::io::copy(&mut r, &mut std::io::sink())?;
        writer
            .join()
            .map_err(|_| std::io::Error::other("the writer to zstd panicked"))??;
        Ok::<usize, std::io::Error>(n as usize)
    });
    let n = counted.map_err(|e| format!("zstd: {e}"))?;
    let status = child.wait().map_err(|e| format!("zstd: {e}"))?;
    if !status.success() {
        return Err(format!("zstd -{level} failed ({status})"));
    }
    Ok(Some(n))
}

fn stream_row(name: &str, raw: usize, bytes: usize, mb_per_s: f64) -> CodecRow {
    CodecRow {
        codec: name.into(),
        line_bytes: 0,
        bytes,
        ratio: raw as f64 / bytes.max(1) as f64,
        compressed_lines: None,
        mb_per_s,
    }
}

/// [`side_by_side`] as a Markdown table.
pub fn markdown(rows: &[CodecRow], raw: usize) -> String {
    let mut s = format!(
        "{raw} bytes\n\n| Codec | Line | Bytes | Ratio | Lines compressed | MB/s |\n\
         |---|---:|---:|---:|---:|---:|\n"
    );
    for r in rows {
        let line = if r.line_bytes == 0 {
            "stream".to_string()
        } else {
            format!("{} B", r.line_bytes)
        };
        let share = r
            .compressed_lines
            .map_or("-".to_string(), |x| format!("{:.1} %", 100.0 * x));
        s.push_str(&format!(
            "| {} | {} | {} | {:.3} | {} | {:.0} |\n",
            r.codec, line, r.bytes, r.ratio, share, r.mb_per_s
        ));
    }
    if !rows.iter().any(|r| r.codec.starts_with("zstd")) {
        s.push_str("\nNo zstd row: the `zstd` program is not installed (scripts/setup.sh).\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mixed data: zeros, small integers, floats and random bytes, 40 kB plus a partial line.
    fn sample() -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..10_000u32 {
            let w = match (i / 256) % 4 {
                0 => 0,
                1 => i % 97,
                2 => ((i as f32) * 0.37).sin().to_bits(),
                _ => i.wrapping_mul(2_654_435_761),
            };
            v.extend(w.to_le_bytes());
        }
        v.extend([7u8; 13]);
        v
    }

    /// Every codec round-trips a file, shortens some of its lines, and its container is
    /// refused after a bit flip or with an unknown params key.
    #[test]
    fn every_codec_round_trips_a_file() {
        let cfg = Config::default();
        let data = sample();
        for name in NAMES {
            let p = compress(name, &cfg, &data).unwrap();
            assert!(
                p.bytes.len() < data.len(),
                "{name} did not shorten the sample"
            );
            assert_eq!(decompress(&p.bytes).unwrap().bytes, data, "{name}");
            assert!(p.stats.starts_with(name), "{}", p.stats);
            let mut bad = p.bytes.clone();
            bad[p.bytes.len() / 2] ^= 0x10;
            assert!(decompress(&bad).is_err(), "{name}: a flipped bit decoded");
            let (h, payload) = container::open(&p.bytes).unwrap();
            let json = h.params_json.replacen("{\"", "{\"extra\":1,\"", 2);
            let e = decompress(&container::wrap(&h.engine, &json, h.orig_len, payload));
            assert!(e.unwrap_err().contains("extra"), "{name}");
        }
        assert!(compress("lz4", &cfg, &data)
            .unwrap_err()
            .contains("unknown codec"));
    }

    /// The side-by-side table has every codec, zlib and zstd, with consistent ratios.
    #[test]
    fn side_by_side_has_every_codec_and_the_references() {
        let data = sample();
        let rows = side_by_side(&Config::default(), &data, &NAMES).unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r.codec.as_str()).collect();
        assert_eq!(
            names,
            ["bdi", "fpc", "cpack", "cpack128", "bpc", "zvc", "zlib-6", "zstd-3"]
        );
        for r in &rows {
            assert!((r.ratio - data.len() as f64 / r.bytes as f64).abs() < 1e-9);
            assert!(r.ratio > 1.0, "{}: {}", r.codec, r.ratio);
        }
        let md = markdown(&rows, data.len());
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| ")).count(),
            1 + rows.len()
        );
    }
}
