//! Memory-link C-Pack with lossy FP truncation (Sathish, Schulte, Kim; PACT'12) in the
//! registry: `model::cpack_lossy`, `rtl::cpack_lossy`, `cosim::cpack_lossy`.
//!
//! CLI name `cpack-lossy`: the codec is C-Pack on 128 B memory blocks, and what sets it apart
//! from the adaptive engine's C-Pack+Z is the lossy FP32 truncation (§2.6); with `tcode` 0 it
//! is the paper's lossless configuration.

use super::{Engine, EvalOutput, EvalRequest, Identity};
use super::{PaperTable, UnitDesign};
use crate::config::Config;
use crate::hdl::Module;
use crate::model::cpack_lossy::eval::{self, ClassEval};
use crate::model::cpack_lossy::fp::RestoreFill;
use crate::model::cpack_lossy::md_eval;
use crate::rtl::designs::cpack_lossy::{self as designs, Unit};
use crate::synth::paper::PaperMark;
use crate::synth::ReportRow;
use crate::trace::blocks::BlockClass;
use std::sync::Arc;

/// The PACT'12 engine: the block compressor and decompressor, the truncation units (the
/// metadata cache and the memory-controller path follow).
pub struct CpackLossy;

impl Engine for CpackLossy {
    /// The MD cache is the shared cache + MSHR block.
    fn uses_cache_block(&self) -> bool {
        true
    }

    /// The lossy FP truncation of PACT'12 (`compress --truncate`).
    fn truncates(&self) -> bool {
        true
    }

    /// PACT'12 Table 4's power × cycles per block / clock (the compressor's 16 cycles + 3 of
    /// latency, the decompressor's 8 + 1).
    fn paper_energy(&self) -> &'static [super::PaperEnergy] {
        const E: [super::PaperEnergy; 2] = [
            super::PaperEnergy {
                what: "PACT'12 compressor, pJ per 128 B block (32.63 mW, 1.25 GHz, 19 cycles)",
                pj: "496",
                node: "65 nm",
                units: &["compressor"],
            },
            super::PaperEnergy {
                what: "PACT'12 decompressor, pJ per 128 B block (24.14 mW, 1.2 GHz, 9 cycles)",
                pj: "181",
                node: "65 nm",
                units: &["decompressor"],
            },
        ];
        &E
    }

    /// PACT'12 Table 4, 65 nm; the compressor's 3 and the decompressor's 1 cycle from the
    /// text. The MD cache's figures are bounds ("< 50,000 um2", "> 1.25 GHz"), kept apart
    /// from values.
    fn paper_mark(&self, unit: &str) -> Option<PaperMark> {
        use super::cpack_lossy_table4 as table4;
        let (_, area, ghz, _, bound) = table4::PAPER.iter().find(|p| p.0 == unit)?;
        let (kge, mhz) = (area / table4::NAND2_65NM_UM2 / 1000.0, ghz * 1000.0);
        let value = |v: f64| (!bound).then_some(v);
        let limit = |v: f64| bound.then_some(v);
        Some(PaperMark {
            kge: value(kge),
            mhz: value(mhz),
            kge_at_most: limit(kge),
            mhz_at_least: limit(mhz),
            latency: match unit {
                "compressor" => Some(3),
                "decompressor" => Some(1),
                _ => None,
            },
            ..PaperMark::default()
        })
    }

    fn id(&self) -> &'static Identity {
        &Identity {
            name: "cpack-lossy",
            section: "cpack_lossy",
            title: "PACT'12 memory-link C-Pack",
            about: "C-Pack on 128 B blocks with lossy floating-point truncation, the metadata \
             cache and the memory-controller path (Sathish et al., PACT'12).",
            units: &[
                "compressor",
                "decompressor",
                "trunc-pack",
                "unpack-restore",
                "md-cache",
                "mc-top",
            ],
            test_units: &["loopback", "lossy_loopback"],
        }
    }

    fn describe(&self, cfg: &Config) -> String {
        cfg.cpack_lossy.describe()
    }

    fn units(&self, cfg: &Config) -> Result<Vec<UnitDesign>, String> {
        let p = &cfg.cpack_lossy;
        Unit::ALL
            .iter()
            .filter(|&&u| !matches!(u, Unit::Loopback | Unit::LossyLoopback))
            .map(|&u| {
                Ok(UnitDesign {
                    engine: self.name(),
                    unit: u.name(),
                    top: designs::top(p, u)?,
                    params: match u {
                        Unit::MdCache => p.md_cache.describe(p.codec.md_bits),
                        _ => p.describe(),
                    },
                    beat_bytes: u.beat_bytes(p),
                })
            })
            .collect()
    }

    /// Compressor → decompressor on the lossless path (`tcode` 0): C-Pack's words come back,
    /// two input beats (2 words each) to an output beat (4 words), `last` with a block's
    /// last beat, no error. (A lossy block's words are those `fp_trunc_pack` makes; its beats
    /// per block differ, and the truncation and restore units are not in this loop.)
    fn round_trips(&self, cfg: &Config) -> Result<Vec<crate::formal::RoundTrip>, String> {
        let p = &cfg.cpack_lossy;
        let words = p.codec.words() as u32;
        let k = p.words_per_cycle as u32;
        let (beats, out_beats) = (words / k, words.div_ceil(4));
        if beats % out_beats != 0 || !(beats / out_beats).is_power_of_two() {
            return Ok(Vec::new());
        }
        let top = self.cosim_top(cfg, "loopback")?;
        let last = last_of_block("s_last_i", "f_in_n_q", beats);
        let lossless = crate::formal::RoundTrip::framed(
            top,
            "words",
            vec![last, "s_tcode_i == 2'd0".into()],
            (out_beats, beats / out_beats),
            8,
        );
        Ok(vec![
            lossless,
            self.lossy_round_trip(cfg, beats, out_beats)?,
        ])
    }

    /// The combinational chunk sizer and request-size modifier (checked exhaustively
    /// against the model in `rtl::cpack_lossy::mc`).
    fn extra_modules(&self, cfg: &Config) -> Result<Vec<Arc<Module>>, String> {
        let p = &cfg.cpack_lossy;
        let e = |e: crate::hdl::HdlError| e.to_string();
        Ok(vec![
            crate::rtl::cpack_lossy::chunk_sizer(p).map_err(e)?,
            crate::rtl::cpack_lossy::reqsize_mod(p).map_err(e)?,
        ])
    }

    super::bench_methods!(cpack_lossy, |_cfg, s| *s);

    /// Lossless beside lossy t = 8/12/16 (both layouts) per trace file (taken as FP32) and
    /// per §5 block class (`--class all` or names; lossy rows for the FP classes); with
    /// `--class md-cache` (or `all`) the MD-cache hit rate versus size and ways on the MC
    /// model's access streams (`model::cpack_lossy::md_eval`).
    fn eval(&self, cfg: &Config, req: &EvalRequest) -> Result<EvalOutput, String> {
        if req.traces.is_empty() && req.classes.is_empty() {
            return Err(format!(
                "eval --engine cpack-lossy needs --trace F and/or --class C (a block class: \
                 {}, or `all`)",
                class_names()
            ));
        }
        req.check_options(self.name(), &[])?;
        let p = &cfg.cpack_lossy.codec;
        let bb = p.block_bytes;
        let (classes, studies) = req.classes(
            || BlockClass::ALL.to_vec(),
            &[MD_CLASS],
            BlockClass::from_name,
            (bb, "blocks"),
        )?;
        let md_sweep = studies[0];
        let mut out: Vec<ClassEval> = Vec::new();
        let err = |e: crate::model::ModelError| e.to_string();
        for t in &req.traces {
            let (bytes, name, fp) = trace_as_fp32(t)?;
            let mut bytes = bytes;
            bytes.resize(bytes.len().div_ceil(bb) * bb, 0);
            let blocks: Vec<Vec<u8>> = bytes.chunks_exact(bb).map(<[u8]>::to_vec).collect();
            out.push(eval::evaluate(p, &name, &blocks, fp).map_err(err)?);
        }
        for c in classes {
            let blocks = c.generate(req.count, bb, req.seed);
            out.push(eval::evaluate(p, c.name(), &blocks, c.is_fp()).map_err(err)?);
        }
        let mut md = format!(
            "PACT'12 C-Pack ({}); ratio = stored / uncompressed (lower is better)\n\n{}",
            p.describe(),
            out.iter()
                .map(|e| e.to_markdown() + "\n")
                .collect::<String>()
        );
        let mut md_rows = Vec::new();
        if md_sweep {
            let n = req.study_len(
                (MD_MIN_REQUESTS, MD_MAX_REQUESTS),
                "requests",
                "MD-cache sweep",
            )?;
            md_rows = md_eval::sweep(p, n, req.seed)?;
            md += &format!(
                "MD-cache hit rate, {} requests per stream\n\n{}",
                n,
                md_eval::markdown(p, &md_rows)
            );
        }
        let json = serde_json::json!({ "blocks": out, "md_cache": md_rows });
        EvalOutput::new(&json, md)
    }

    fn rows_table(&self, rows: &[ReportRow]) -> Option<PaperTable> {
        let md = super::cpack_lossy_table4::markdown(rows);
        PaperTable::of(
            self.name(),
            "PACT'12: beside the paper's Table 4",
            "table4",
            md,
        )
    }

    fn compress(&self, cfg: &Config, data: &[u8]) -> Result<super::Packed, String> {
        super::files::cpack_lossy_compress(cfg, data)
    }

    fn decompress(&self, data: &[u8]) -> Result<super::Packed, String> {
        super::files::cpack_lossy_decompress(data)
    }
}

/// A trace file's bytes for the evaluation, its report name and whether the lossy rows
/// apply: a `.npy` array of `<f4` is FP32, one of `<f8` is converted to FP32 (the paper's
/// truncation is defined on FP32), any other dtype is evaluated lossless only; other files
/// are taken as FP32.
fn trace_as_fp32(path: &std::path::Path) -> Result<(Vec<u8>, String, bool), String> {
    let (bytes, descr) = crate::trace::file::load_bytes_typed(path).map_err(|e| e.to_string())?;
    let shown = path.display();
    Ok(match descr.as_deref() {
        None => (bytes, format!("{shown} (raw bytes as FP32)"), true),
        Some("<f4") => (bytes, shown.to_string(), true),
        Some("<f8") => {
            let f32s = bytes
                .chunks_exact(8)
                .flat_map(|c| {
                    let v = f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                    (v as f32).to_le_bytes()
                })
                .collect();
            (f32s, format!("{shown} (FP64 converted)"), true)
        }
        Some(d) => (bytes, format!("{shown} ({d})"), false),
    })
}

/// The `--class` name of the MD-cache sweep.
const MD_CLASS: &str = "md-cache";

/// Requests per access stream of the MD-cache sweep, at least (`--count` raises it).
const MD_MIN_REQUESTS: usize = 20_000;

/// Requests per access stream of the MD-cache sweep, at most (they are held in memory).
const MD_MAX_REQUESTS: usize = 1 << 22;

fn class_names() -> String {
    BlockClass::ALL
        .iter()
        .map(|c| c.name())
        .chain([MD_CLASS])
        .collect::<Vec<_>>()
        .join(", ")
}

/// The round-trip rule "`port` is high exactly on a block's last beat", for blocks of
/// `beats` beats (a power of two) counted by the wrapper's counter `count`.
fn last_of_block(port: &str, count: &str, beats: u32) -> String {
    let tz = beats.trailing_zeros();
    if tz == 0 {
        port.to_string()
    } else {
        format!("{port} == ({count}[{}:0] == {tz}'d{})", tz - 1, beats - 1)
    }
}

impl CpackLossy {
    /// The whole lossy path (`lossy_loopback`: truncation, compressor, decompressor,
    /// restore): a block of `beats` input beats, any `tcode` (read with its first beat, so
    /// held over the block), comes back in `out_beats` beats as the model restores it: each
    /// word's low `t` bits cleared, or set to the mid-point unless its exponent is all ones.
    fn lossy_round_trip(
        &self,
        cfg: &Config,
        beats: u32,
        out_beats: u32,
    ) -> Result<crate::formal::RoundTrip, String> {
        let c = &cfg.cpack_lossy.codec;
        let top = self.cosim_top(cfg, "lossy_loopback")?;
        // A 32-bit constant per code, chosen by the tracked block's code.
        let by_code = |f: &dyn Fn(u32) -> u32| {
            let arms: Vec<String> = (1..4u8)
                .map(|tc| format!("f_pick_tcode_q == 2'd{tc} ? 32'h{:08x}", f(c.t_of(tc))))
                .collect();
            format!(
                "({}\n          : 32'h{:08x})",
                arms.join("\n          : "),
                f(c.t_of(0))
            )
        };
        let mask = by_code(&|t| if t == 0 { u32::MAX } else { u32::MAX << t });
        let mut expect = format!("(@ & {{4{{{mask}}}}})");
        if c.fill == RestoreFill::Midpoint {
            let mid = by_code(&|t| if t == 0 { 0 } else { 1 << (t - 1) });
            let words: Vec<String> = (0..4u32)
                .rev()
                .map(|j| {
                    format!(
                        "(@[{}:{}] == 8'hff ? 32'd0 : {mid})",
                        32 * j + 30,
                        32 * j + 23
                    )
                })
                .collect();
            expect = format!("{expect}\n        | {{{}}}", words.join(",\n           "));
        }
        let last = last_of_block("m_last_o", "f_out_n_q", out_beats);
        let mut rt = crate::formal::RoundTrip::framed(
            top,
            "data",
            Vec::new(),
            (out_beats, beats / out_beats),
            8,
        );
        rt.unit = "lossy_loopback".into();
        rt.pairs = vec![("data".into(), "data".into())];
        rt.expect = Some(expect);
        rt.line_field = Some(("tcode".into(), beats));
        rt.checks = vec![last];
        Ok(rt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.npy` traces by dtype: `<f8` converted to FP32 with lossy rows, `<i2` lossless only.
    #[test]
    fn npy_traces_by_dtype() {
        let dir = tempfile::tempdir().unwrap();
        let f8: Vec<u8> = (0..64)
            .flat_map(|i| (1.5f64 + i as f64).to_le_bytes())
            .collect();
        let i2: Vec<u8> = (0..64i16).flat_map(|i| i.to_le_bytes()).collect();
        let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
        std::fs::write(&a, crate::trace::npy::encode("<f8", &[64], &f8)).unwrap();
        std::fs::write(&b, crate::trace::npy::encode("<i2", &[64], &i2)).unwrap();
        let (bytes, name, fp) = trace_as_fp32(&a).unwrap();
        assert!(fp && name.ends_with("(FP64 converted)"), "{name}");
        assert_eq!(&bytes[4..8], &2.5f32.to_le_bytes());
        assert_eq!(bytes.len(), 256);
        let (_, name, fp) = trace_as_fp32(&b).unwrap();
        assert!(!fp && name.ends_with("(<i2)"), "{name}");
        let mut r = EvalRequest::of_classes(&[]);
        r.traces = vec![a, b];
        let v: serde_json::Value =
            serde_json::from_str(&CpackLossy.eval(&Config::default(), &r).unwrap().json).unwrap();
        assert_eq!(v["blocks"][0]["rows"].as_array().unwrap().len(), 7);
        assert_eq!(v["blocks"][1]["rows"].as_array().unwrap().len(), 1);
    }

    /// Lossy rows keep every element within the §2.6 bound (max rel < 2^(t−23)); INT classes
    /// get only the lossless row; a request without data names the classes.
    #[test]
    fn eval_rows_and_bounds() {
        let cfg = Config::default();
        let out = CpackLossy
            .eval(&cfg, &EvalRequest::of_classes(&["fp-smooth", "int-random"]))
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out.json).unwrap();
        let fp = &v["blocks"][0]["rows"];
        assert_eq!(fp.as_array().unwrap().len(), 7);
        for r in fp.as_array().unwrap().iter().skip(1) {
            let t = r["t"].as_u64().unwrap() as i32;
            let mx = r["error"]["max_rel"].as_f64().unwrap();
            assert!(mx > 0.0 && mx < 2f64.powi(t - 23), "t = {t}: {mx}");
        }
        assert_eq!(v["blocks"][1]["rows"].as_array().unwrap().len(), 1);
        assert_eq!(
            v["blocks"][1]["rows"][0]["ratio_bits"].as_f64().unwrap(),
            1.0
        );
        assert!(v["md_cache"].as_array().unwrap().is_empty());
        let out = CpackLossy
            .eval(&cfg, &EvalRequest::of_classes(&["md-cache"]))
            .unwrap();
        let mut big = EvalRequest::of_classes(&["md-cache"]);
        big.count = usize::MAX;
        let e = CpackLossy.eval(&cfg, &big).unwrap_err();
        assert!(e.contains("at most"), "{e}");
        assert!(
            out.markdown.contains("| copy | 32 | 2 |"),
            "{}",
            out.markdown
        );
        let e = CpackLossy
            .eval(&cfg, &EvalRequest::of_classes(&[]))
            .unwrap_err();
        assert!(e.contains("fp-smooth"), "{e}");
        let e = CpackLossy
            .eval(&cfg, &EvalRequest::of_classes(&["nope"]))
            .unwrap_err();
        assert!(e.contains("unknown block class"), "{e}");
    }
}
