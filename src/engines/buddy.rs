//! Buddy Compression with BPC (Choukse et al., ISCA'20) in the registry: `model::bpc`,
//! `model::buddy`, `rtl::bpc`, `rtl::buddy`, `cosim::buddy`.
//!
//! CLI name `buddy`: the paper's system is Buddy Compression and BPC is its codec; the units
//! are named after their function (`bpc-compress`, `size-mapper`, ...).

use super::{Engine, EvalOutput, EvalRequest, Identity, UnitDesign};
use crate::config::Config;
use crate::hdl::Module;
use crate::model::buddy::eval::{self, SetEval};
use crate::rtl::designs::buddy::{self as designs, Unit};
use crate::synth::paper::PaperMark;
use crate::trace::entries::{EntryClass, ENTRY_BYTES};
use std::sync::Arc;

/// The ISCA'20 engine: BPC compressor and decompressor, size mapper, address generator,
/// metadata-cache slice, memory-controller splitter.
pub struct Buddy;

impl Engine for Buddy {
    /// The metadata cache is the shared cache + MSHR block.
    fn uses_cache_block(&self) -> bool {
        true
    }

    /// ISCA'20 Table I: "+11 cycles" of (de)compression latency, after BPC.
    fn paper_mark(&self, unit: &str) -> Option<PaperMark> {
        (unit == "bpc-decompress").then_some(PaperMark {
            latency: Some(11),
            ..PaperMark::default()
        })
    }

    fn id(&self) -> &'static Identity {
        &Identity {
            name: "buddy",
            section: "buddy",
            title: "Buddy Compression",
            about: "BPC on 128 B entries, Buddy Compression sizing and addressing, the metadata \
             slice and the memory-controller splitter (Choukse et al., ISCA'20).",
            units: &[
                "bpc-compress",
                "bpc-decompress",
                "size-mapper",
                "addr-gen",
                "meta-cache",
                "mc-ctrl",
            ],
            test_units: &[],
        }
    }

    fn describe(&self, cfg: &Config) -> String {
        cfg.buddy.describe()
    }

    fn units(&self, cfg: &Config) -> Result<Vec<UnitDesign>, String> {
        let p = &cfg.buddy;
        // The controller serves Buddy's 128 B memory entries; smaller BPC entries (a
        // codec study) have no controller.
        Unit::ALL
            .iter()
            .filter(|&&u| u != Unit::McCtrl || p.bpc.entry_bytes == 128)
            .map(|&u| {
                Ok(UnitDesign {
                    engine: self.name(),
                    unit: u.name(),
                    top: designs::top(p, u)?,
                    params: match u {
                        Unit::MetaCache => p.meta.describe(),
                        Unit::McCtrl => {
                            format!("{}; {}; {} MCs", p.describe(), p.meta.describe(), p.mc.mcs)
                        }
                        _ => p.describe(),
                    },
                    beat_bytes: u.beat_bytes(p),
                })
            })
            .collect()
    }

    /// The zero detector (checked in the interpreter against every one-bit entry).
    fn extra_modules(&self, _cfg: &Config) -> Result<Vec<Arc<Module>>, String> {
        Ok(vec![
            crate::rtl::buddy::zero_detect().map_err(|e| e.to_string())?
        ])
    }

    super::bench_methods!(buddy, |_cfg, s| *s);

    /// BPC compressor -> decompressor (the compressed stream and its size code; the bit count
    /// and the raw flag unused): every block comes back unchanged and without an error.
    fn round_trips(&self, cfg: &Config) -> Result<Vec<crate::formal::RoundTrip>, String> {
        let p = &cfg.buddy;
        let comp = designs::top(p, Unit::Compressor)?;
        let dec = designs::top(p, Unit::Decompressor)?;
        let mut m = crate::hdl::ModuleBuilder::new(format!("{}_loopback", dec.name));
        m.header("Generator: hwzip::engines::buddy (formal round trip)");
        m.header(format!("Parameters: {}", p.describe()));
        m.header("Spec: docs/FORMATS.md, BPC (compressor -> decompressor)");
        crate::hdl::stream::chain(&mut m, &[("u_comp", &comp), ("u_dec", &dec)], &[]);
        let top = m.finish().map_err(|e| e.to_string())?;
        let mut rt = crate::formal::RoundTrip::lines("bpc_loopback", top, "blk", "blk", &["err"]);
        // The decompressor's prefix sums as proved by property `sums`.
        rt.sums = super::buddy_sums::bpc(dec, &p.bpc)?.into_iter().collect();
        Ok(vec![rt])
    }

    /// The BPC decompressor flags corrupt entries as the model does
    /// ([`super::buddy_flags`]).
    fn error_flags(&self, cfg: &Config) -> Result<Vec<crate::formal::ErrorFlag>, String> {
        let p = &cfg.buddy;
        Ok(vec![super::buddy_flags::bpc(
            designs::top(p, Unit::Decompressor)?,
            &p.bpc,
        )])
    }

    /// The decompressor's carry-save prefix sums ([`super::buddy_sums`]).
    fn sum_nets(&self, cfg: &Config) -> Result<Vec<crate::formal::SumNet>, String> {
        let p = &cfg.buddy;
        let top = designs::top(p, Unit::Decompressor)?;
        Ok(super::buddy_sums::bpc(top, &p.bpc)?.into_iter().collect())
    }

    /// Per §6 class (`--class all` or names) and per trace file (128 B entries): the Fig. 5b
    /// buckets, the Fig. 3 ratios, the Fig. 5a codec comparison, 64-bit symbols, and the
    /// per-target buddy fractions, with HPC and DL geomeans over the classes.
    fn eval(&self, cfg: &Config, req: &EvalRequest) -> Result<EvalOutput, String> {
        if req.traces.is_empty() && req.classes.is_empty() {
            return Err(format!(
                "eval --engine buddy needs --trace F and/or --class C (an entry class: {}, \
                 {META_CLASS}, {PROFILE_CLASS}, or `all`)",
                EntryClass::ALL.map(|c| c.name()).join(", ")
            ));
        }
        req.check_options(self.name(), &[])?;
        let (classes, studies) = req.classes(
            || EntryClass::ALL.to_vec(),
            &[META_CLASS, PROFILE_CLASS],
            EntryClass::from_name,
            (ENTRY_BYTES, "entries"),
        )?;
        let (meta, prof) = (studies[0], studies[1]);
        let p = cfg.buddy.bpc.model();
        let err = |e: crate::model::ModelError| e.to_string();
        let mut sets: Vec<SetEval> = Vec::new();
        for t in &req.traces {
            if crate::trace::file::is_safetensors(t) {
                for (name, entries) in tensor_sets(t)? {
                    sets.push(eval::evaluate(&p, &name, &entries).map_err(err)?);
                }
                continue;
            }
            let bytes = super::load_blocks(t, ENTRY_BYTES)?;
            sets.push(
                eval::evaluate(&p, &t.display().to_string(), &entries_of(&bytes)).map_err(err)?,
            );
        }
        let mut hpc = Vec::new();
        let mut dl = Vec::new();
        for c in &classes {
            let e = eval::evaluate(&p, c.name(), &c.generate(req.count, req.seed)).map_err(err)?;
            if *c != EntryClass::Random && *c != EntryClass::Zero {
                if c.is_dl() {
                    dl.push(e.ratio_optimistic);
                } else {
                    hpc.push(e.ratio_optimistic);
                }
            }
            sets.push(e);
        }
        let mut md = format!(
            "Buddy Compression, BPC on 128 B entries ({})\n\n{}",
            cfg.buddy.bpc.describe(),
            eval::markdown(&sets)
        );
        let g_hpc = eval::geomean(hpc.into_iter());
        let g_dl = eval::geomean(dl.into_iter());
        if !classes.is_empty() {
            let f = |v: Option<f64>| v.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "-".into());
            md += &format!(
                "\nGeomean of the optimistic-size ratio over the classes given (zero and random \
                 excluded): HPC-like {}, DL {} (paper, Fig. 3 on real dumps: 2.51x HPC, 1.85x DL)\n",
                f(g_hpc),
                f(g_dl)
            );
        }
        let mut meta_rows = Vec::new();
        if meta {
            let n = req.study_len(
                (META_MIN_READS, META_MAX_READS),
                "reads",
                "metadata-slice sweep",
            )?;
            meta_rows = eval::meta_sweep(n, req.seed).map_err(err)?;
            md += &format!(
                "\nMetadata-slice hit rate (%), {n} reads per stream over a 4x allocation of \
                 2^18 entries on 8 MCs\n\n{}",
                eval::meta_markdown(&meta_rows)
            );
        }
        let mut prof_rows = Vec::new();
        if prof {
            let gens: Vec<(EntryClass, eval::BoxedGenerator)> = EntryClass::ALL
                .into_iter()
                .filter(|c| *c != EntryClass::Random)
                .map(|c| {
                    let f: eval::BoxedGenerator = Box::new(move |n, s| c.generate(n, s));
                    (c, f)
                })
                .collect();
            let group = |dl: bool, name: &'static str| eval::StudyGroup {
                name,
                allocs: gens
                    .iter()
                    .filter(|(c, _)| c.is_dl() == dl)
                    .map(|(c, f)| (c.name(), f.as_ref() as eval::Generator))
                    .collect(),
            };
            let groups = [group(false, "hpc"), group(true, "dl")];
            let n = req.count.clamp(1, PROFILE_MAX_ENTRIES);
            prof_rows =
                eval::profile_study(&p, &groups, n, PROFILE_SNAPSHOTS, PROFILE_REWRITE, req.seed)
                    .map_err(err)?;
            md += &format!(
                "\nBuddy-Threshold profiler (threshold 30 %, overall cap 4x): one allocation of {n} \
                 entries per class, {PROFILE_SNAPSHOTS} snapshots, {:.0} % of entries rewritten \
                 between snapshots (paper, Fig. 7: naive 1.57x HPC / 1.18x DL, per-allocation \
                 1.7x / 1.4x, with 16x 1.9x / 1.5x)\n\n{}",
                100.0 * PROFILE_REWRITE,
                eval::profile_markdown(&prof_rows)
            );
        }
        let json = serde_json::json!({
            "sets": sets,
            "geomean_optimistic": { "hpc": g_hpc, "dl": g_dl },
            "meta_cache": meta_rows,
            "profiler": prof_rows,
        });
        EvalOutput::new(&json, md)
    }

    fn compress(&self, cfg: &Config, data: &[u8]) -> Result<super::Packed, String> {
        super::files::buddy_compress(cfg, data)
    }

    fn decompress(&self, data: &[u8]) -> Result<super::Packed, String> {
        super::files::buddy_decompress(data)
    }
}

/// The `--class` name of the profiler study.
const PROFILE_CLASS: &str = "profiler";

/// Snapshots per allocation in the profiler study (the paper's 10 dump regions).
const PROFILE_SNAPSHOTS: usize = 10;

/// Share of entries rewritten between snapshots in the profiler study.
const PROFILE_REWRITE: f64 = 0.1;

/// Entries per allocation in the profiler study, at most.
const PROFILE_MAX_ENTRIES: usize = 1 << 16;

/// The `--class` name of the metadata-slice sweep.
const META_CLASS: &str = "meta-cache";

/// Reads per access stream of the sweep, at least (`--lines` raises it).
const META_MIN_READS: usize = 20_000;

/// Reads per access stream of the sweep, at most.
const META_MAX_READS: usize = 1 << 22;

/// The 128 B entries of `bytes`, the last one zero-padded.
fn entries_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .chunks(ENTRY_BYTES)
        .map(|c| {
            let mut e = c.to_vec();
            e.resize(ENTRY_BYTES, 0);
            e
        })
        .collect()
}

/// A named set of 128 B entries.
type NamedEntries = (String, Vec<Vec<u8>>);

/// The entry sets of a `.safetensors` file: the whole file, then one set per tensor group
/// ([`crate::trace::safetensors::group`]: the same tensor of every layer together), in data
/// order. Every tensor starts a new 128 B entry, as a separate allocation would.
fn tensor_sets(path: &std::path::Path) -> Result<Vec<NamedEntries>, String> {
    let tensors = crate::trace::file::load_tensors(path).map_err(|e| e.to_string())?;
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    let mut groups: Vec<NamedEntries> = Vec::new();
    let mut all = Vec::new();
    for (t, bytes) in &tensors {
        let entries = entries_of(bytes);
        all.extend(entries.iter().cloned());
        let g = format!("{file} [{}]", crate::trace::safetensors::group(&t.name));
        match groups.iter_mut().find(|(name, _)| *name == g) {
            Some((_, v)) => v.extend(entries),
            None => groups.push((g, entries)),
        }
    }
    groups.retain(|(_, v)| !v.is_empty());
    groups.insert(0, (format!("{} (all tensors)", path.display()), all));
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_classes_and_errors() {
        let cfg = Config::default();
        let out = Buddy
            .eval(&cfg, &EvalRequest::of_classes(&["all"]))
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out.json).unwrap();
        assert_eq!(v["sets"].as_array().unwrap().len(), EntryClass::ALL.len());
        assert!(v["geomean_optimistic"]["hpc"].as_f64().unwrap() > 1.0);
        assert!(out.markdown.contains("| relu-90 |"), "{}", out.markdown);
        let e = Buddy.eval(&cfg, &EvalRequest::of_classes(&[])).unwrap_err();
        assert!(e.contains("relu-50"), "{e}");
        let e = Buddy
            .eval(&cfg, &EvalRequest::of_classes(&["nope"]))
            .unwrap_err();
        assert!(e.contains("unknown entry class"), "{e}");
        let mut r = EvalRequest::of_classes(&["zero"]);
        r.lambda = Some(3);
        assert!(Buddy.eval(&cfg, &r).unwrap_err().contains("--lambda"));
    }

    /// A `.safetensors` trace: the whole file, then one row per tensor group; each tensor
    /// starts a new entry; a malformed header is a one-line error.
    #[test]
    fn eval_safetensors_by_group() {
        let dir = tempfile::tempdir().unwrap();
        let h = r#"{"l.0.w":{"dtype":"F32","shape":[40],"data_offsets":[0,160]},
            "l.1.w":{"dtype":"F32","shape":[40],"data_offsets":[160,320]},
            "emb":{"dtype":"I32","shape":[8],"data_offsets":[320,352]}}"#;
        let mut raw = (h.len() as u64).to_le_bytes().to_vec();
        raw.extend(h.as_bytes());
        raw.extend((0..88u32).flat_map(|i| (i % 7).to_le_bytes()));
        let path = dir.path().join("m.safetensors");
        std::fs::write(&path, &raw).unwrap();
        let mut r = EvalRequest::of_classes(&[]);
        r.traces = vec![path.clone()];
        let out = Buddy.eval(&Config::default(), &r).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out.json).unwrap();
        let sets = v["sets"].as_array().unwrap();
        let rows: Vec<(&str, u64)> = sets
            .iter()
            .map(|s| (s["name"].as_str().unwrap(), s["entries"].as_u64().unwrap()))
            .collect();
        let all = format!("{} (all tensors)", path.display());
        // 160 B tensors take 2 entries each, the 32 B one 1.
        assert_eq!(
            rows,
            [
                (all.as_str(), 5),
                ("m.safetensors [l.*.w]", 4),
                ("m.safetensors [emb]", 1)
            ]
        );
        raw[8] = b'[';
        std::fs::write(&path, &raw).unwrap();
        let e = Buddy.eval(&Config::default(), &r).unwrap_err();
        assert!(e.contains("m.safetensors") && !e.contains('\n'), "{e}");
    }
}
