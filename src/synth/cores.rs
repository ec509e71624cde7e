//! Combinational-core comparison tables: synthesize a set of purely combinational modules
//! (encoder/decoder cores) on several libraries and set area, worst input→output delay and
//! logic levels beside a paper's figures, normalised so that different nodes compare
//! (kGE for area, "reference levels" for delay: the delay divided by the delay of a reference
//! core that is one gate level deep in the same library).
//!
//! Used for the Base+XOR engine's Table II (`hwzip synth --engine base-xor`).

use super::{synthesize, Liberty, SynthError, SynthJob, SynthResult};
use crate::hdl::{emit, Module};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A paper's figures for one core.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PaperFigures {
    /// Area, µm² (the paper's node).
    pub area_um2: f64,
    /// Worst-case latency, ps.
    pub latency_ps: f64,
}

/// One core to synthesize.
#[derive(Clone, Debug)]
pub struct CoreSpec {
    /// Row label (e.g. `Universal XOR + ZDR`).
    pub row: String,
    /// Direction (`enc` / `dec`).
    pub dir: &'static str,
    /// The combinational module.
    pub module: Arc<Module>,
    /// Structural depth in XOR levels of this core, if known (for the report).
    pub xor_levels: Option<u32>,
    /// The paper's figures, if any.
    pub paper: Option<PaperFigures>,
}

/// A synthesized core.
#[derive(Clone, Debug, Serialize)]
pub struct CoreResult {
    /// Row label.
    pub row: String,
    /// Direction.
    pub dir: String,
    /// Library label.
    pub library: String,
    /// Structural XOR levels, if known.
    pub xor_levels: Option<u32>,
    /// The paper's figures.
    pub paper: Option<PaperFigures>,
    /// Synthesis result (area, cells, worst input→output path in `critical_path_ns`).
    pub result: SynthResult,
}

/// Paper-side normalisation: the paper's node, its NAND2 area (µm², for kGE) and the delay of
/// one XOR level (ps).
#[derive(Clone, Debug, Serialize)]
pub struct PaperNode {
    /// Label (e.g. `TSMC 16 nm FinFET`).
    pub label: String,
    /// NAND2 area assumed for the kGE conversion, µm².
    pub nand2_um2: f64,
    /// Delay of one level, ps (the paper's reference).
    pub level_ps: f64,
}

/// Synthesizes every core on every library (combinational: virtual clock at
/// `clock_ns(lib)`), under `work/<library>/<module>`.
pub fn synthesize_cores(
    cores: &[CoreSpec],
    libs: &[(String, Liberty)],
    clock_ns: &dyn Fn(&str) -> f64,
    work: &Path,
    budget: Duration,
    use_cache: bool,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<CoreResult>, SynthError> {
    let mut out = Vec::new();
    for (label, lib) in libs {
        for c in cores {
            let dir = work.join(label).join(&c.module.name);
            std::fs::create_dir_all(&dir).map_err(|e| SynthError::io(&dir, e))?;
            let mut files = Vec::new();
            for (name, text) in
                emit::emit_design(&c.module).map_err(|e| SynthError::InvalidJob(e.to_string()))?
            {
                let p = dir.join(name);
                std::fs::write(&p, text).map_err(|e| SynthError::io(&p, e))?;
                files.push(p);
            }
            log(&format!(
                "synthesizing {} ({}) on {} ...",
                c.module.name, c.dir, label
            ));
            let mut job =
                SynthJob::new(c.module.name.clone(), files, lib.clone(), dir.join("synth"));
            job.clock_ns = clock_ns(label);
            job.clock_port = None;
            job.budget = budget;
            job.use_cache = use_cache;
            let mut r = synthesize(&job)?;
            r.liberty = label.clone();
            out.push(CoreResult {
                row: c.row.clone(),
                dir: c.dir.to_string(),
                library: label.clone(),
                xor_levels: c.xor_levels,
                paper: c.paper,
                result: r,
            });
        }
    }
    Ok(out)
}

/// Markdown table: one row per core and library, beside the paper. `reference` names the
/// (row, dir) whose delay is one level in each library.
pub fn to_markdown(results: &[CoreResult], node: &PaperNode, reference: (&str, &str)) -> String {
    let mut s = String::from(
        "| mechanism | dir | library | cells | area µm² | kGE | worst path ps | gate levels | XOR levels (struct.) | delay in ref. levels | paper µm² | paper kGE | paper ps | paper levels |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for r in results {
        let ref_ps = results
            .iter()
            .find(|x| x.library == r.library && x.row == reference.0 && x.dir == reference.1)
            .map(|x| x.result.critical_path_ns * 1000.0);
        let ps = r.result.critical_path_ns * 1000.0;
        let (pa, pk, pp, pl) = match r.paper {
            Some(p) => (
                format!("{:.0}", p.area_um2),
                format!("{:.2}", p.area_um2 / node.nand2_um2 / 1000.0),
                format!("{:.0}", p.latency_ps),
                format!("{:.1}", p.latency_ps / node.level_ps),
            ),
            None => Default::default(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} | {:.2} | {:.0} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.row,
            r.dir,
            r.library,
            r.result.cells,
            r.result.area_um2,
            r.result.kge,
            ps,
            r.result.path_levels,
            r.xor_levels.map(|l| l.to_string()).unwrap_or_default(),
            ref_ps
                .filter(|&p| p > 0.0)
                .map(|p| format!("{:.1}", ps / p))
                .unwrap_or_default(),
            pa,
            pk,
            pp,
            pl
        ));
    }
    s.push_str(&format!(
        "\nPaper: {} (Table II, layout area incl. wires); paper kGE assumes a NAND2 of {} µm²; \
         paper levels = ps / {} ps (one XOR level, Table II's 2-byte encoder). Ours: cell area \
         before layout; worst input→output path from OpenSTA with 10 fF output loads; \
         reference level = the `{} {}` core of the same library.\n",
        node.label, node.nand2_um2, node.level_ps, reference.0, reference.1
    ));
    s
}
