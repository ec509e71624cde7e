//! The steps behind the CLI: generate, co-simulate, synthesize, report, evaluate.
//!
//! Each step works from the engine registry ([`crate::engines`]) and a [`Config`], with no
//! per-engine code, so the CLI stays a thin argument parser and every step is usable (and
//! tested) as a library call.

use crate::config::Config;
use crate::cosim::run::RunConfig;
use crate::cosim::vdut::VerilatorDut;
use crate::cosim::zvc::{RunStats, Timing};
use crate::engines::{EngineRef, PaperTable, UnitDesign};
use crate::files::FileSet;
use crate::hdl::emit;
use crate::synth::{self, Liberty, ReportRow, SynthJob};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub mod closure;
pub mod energy;
pub mod fpga;
pub mod html;
pub mod job;
pub mod manifest;
pub mod merge;
pub mod outcome;
pub(crate) mod pool;
pub mod progress;
pub mod prove;
pub mod regress;
pub mod render;
pub mod results;
pub mod step;
pub mod sweep;

/// Any failure of a flow step, as a message for the user.
pub type FlowResult<T> = Result<T, String>;

/// Writes every Verilog file of `units` into `dir` (one `<module>.v` per module, shared
/// submodules once). Returns the files written, sorted.
pub fn write_rtl(units: &[UnitDesign], dir: &Path) -> FlowResult<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {}", dir.display(), e))?;
    let mut written = std::collections::BTreeMap::new();
    for u in units {
        for (name, text) in emit::emit_design(&u.top).map_err(|e| e.to_string())? {
            let path = dir.join(&name);
            if let Some(prev) = written.get(&path) {
                if prev != &text {
                    return Err(format!(
                        "two different modules would be written to {}",
                        path.display()
                    ));
                }
                continue;
            }
            crate::files::write(&path, &text)?;
            written.insert(path, text);
        }
    }
    Ok(written.into_keys().collect())
}

/// `hwzip gen`: generates the engine's units (and its extra modules, such as cores a paper
/// table synthesizes) into `<out>/<engine>/`. That directory belongs to the generator: `.v`
/// files in it that the current generator does not produce (modules renamed or removed by a
/// newer version) are deleted, so it always equals fresh output. Beside the Verilog it writes
/// a filelist and a FuseSoC core ([`manifest`]). Returns the Verilog files (sorted), then the
/// filelist and the core.
pub fn gen(engine: EngineRef, cfg: &Config, out: &Path) -> FlowResult<Vec<PathBuf>> {
    let units = engine.units(cfg)?;
    let dir = out.join(engine.name());
    let mut files = write_rtl(&units, &dir)?;
    for module in engine.extra_modules(cfg)? {
        for (name, text) in emit::emit_design(&module).map_err(|e| e.to_string())? {
            let path = dir.join(&name);
            if !files.contains(&path) {
                crate::files::write(&path, &text)?;
                files.push(path);
            }
        }
    }
    files.sort();
    let entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {}", dir.display(), e))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "v") && !files.contains(&path) {
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove stale {}: {}", path.display(), e))?;
        }
    }
    let manifests = manifest::write(&dir, engine.name(), &engine.describe(cfg), &units, &files)?;
    files.extend(manifests);
    Ok(files)
}

/// What to co-simulate.
#[derive(Clone, Debug)]
pub struct CosimRequest {
    /// Engine.
    pub engine: EngineRef,
    /// Unit: one of the engine's `unit_names()` or `loopback`.
    pub unit: String,
    /// Stimulus.
    pub stim: RunConfig,
    /// On a mismatch, replay with tracing and write the window around it here.
    pub vcd: Option<PathBuf>,
    /// Start every register, memory and X assignment of the design at random values from
    /// this seed (a `--x-assign unique --x-initial unique` build); `None`: all zero.
    pub x_seed: Option<u32>,
}

/// Result of one co-simulation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CosimReport {
    /// Engine name.
    pub engine: String,
    /// Unit name.
    pub unit: String,
    /// Parameters.
    pub params: String,
    /// Statistics (mismatches, cycles, cycles/s).
    pub stats: RunStats,
    /// Where the waveform of the first mismatch was written.
    pub vcd: Option<PathBuf>,
    /// Seed of the random initial state, if the run used one ([`CosimRequest::x_seed`]).
    pub x_seed: Option<u32>,
}

/// `hwzip cosim`: builds (cached) and runs one unit against the golden model in Verilator.
/// On a mismatch with `req.vcd` set, the run is replayed deterministically with a tracing
/// build and the window around the mismatch is written there.
pub fn cosim(
    req: &CosimRequest,
    cfg: &Config,
    progress: &mut dyn FnMut(&RunStats),
) -> FlowResult<CosimReport> {
    let engine = req.engine;
    let top = engine.cosim_top(cfg, &req.unit)?;
    let mut dut = VerilatorDut::with(&top, false, req.x_seed).map_err(|e| e.to_string())?;
    let stats = engine.cosim(&mut dut, cfg, &req.unit, &req.stim, progress)?;
    let mut vcd = None;
    if let (Some(m), Some(path)) = (&stats.first_mismatch, &req.vcd) {
        let mut tdut = VerilatorDut::with(&top, true, req.x_seed).map_err(|e| e.to_string())?;
        let mut stim = req.stim.clone();
        stim.vcd = Some((path.clone(), m.cycle.saturating_sub(200), m.cycle + 20));
        stim.capture = false;
        engine.cosim(&mut tdut, cfg, &req.unit, &stim, &mut |_| {})?;
        vcd = Some(path.clone());
    }
    Ok(CosimReport {
        engine: engine.name().into(),
        unit: req.unit.clone(),
        params: engine.describe(cfg),
        stats,
        vcd,
        x_seed: req.x_seed,
    })
}

/// Measures latency and throughput of a unit in Verilator (no back-pressure).
pub fn timing(engine: EngineRef, cfg: &Config, unit: &str) -> FlowResult<Timing> {
    let top = engine.cosim_top(cfg, unit)?;
    let mut dut = VerilatorDut::new(&top, false).map_err(|e| e.to_string())?;
    engine.measure(&mut dut, cfg, unit)
}

/// Resolves library names (`osu018`, `nangate45`, `sky130hd`) or paths. Missing reference
/// libraries (Nangate45, sky130hd live outside the repository) are skipped with a note;
/// a missing osu018 or a bad path is an error.
pub fn libraries(names: &[String], notes: &mut Vec<String>) -> FlowResult<Vec<Liberty>> {
    let mut libs = Vec::new();
    let mut refs: Option<Vec<Liberty>> = None;
    for n in names {
        match n.as_str() {
            "osu018" => libs.push(Liberty::osu018().map_err(|e| e.to_string())?),
            "nangate45" | "sky130hd" => {
                if refs.is_none() {
                    refs = Some(Liberty::shared_refs().map_err(|e| e.to_string())?);
                }
                let key = if n == "nangate45" {
                    "nangate"
                } else {
                    "sky130"
                };
                match refs.as_ref().and_then(|r| {
                    r.iter().find(|l| l.source.to_string_lossy().to_lowercase().contains(key)).cloned()
                }) {
                    Some(l) => libs.push(l),
                    None => notes.push(format!(
                        "{}: reference liberty not found (../shared/pdk or $HWZIP_PDK_DIR); skipped",
                        n
                    )),
                }
            }
            path => libs.push(Liberty::load(path).map_err(|e| e.to_string())?),
        }
    }
    if libs.is_empty() {
        return Err(if names.is_empty() {
            "no Liberty library given: synth.libraries is empty (give osu018, nangate45, \
             sky130hd or a .lib path)"
                .into()
        } else {
            format!(
                "none of the Liberty libraries {} is available: {}",
                names.join(", "),
                notes.join("; ")
            )
        });
    }
    Ok(libs)
}

/// Synthesizes one unit on one library (through the synthesis cache when `cfg.synth.cache`;
/// the flag says whether the result came from it) and attaches the latency and throughput
/// `t` measured in Verilator. `siblings` are the engine's other units: with
/// `synth.hierarchy: reuse`, a child module that is one of them is synthesized in its own
/// run (once, cached) and its netlist reused in this one; with `families`, so is every
/// child module instantiated more than once ([`reused_children`]). `progress` hears about
/// long tool runs (tool, CPU seconds, wall seconds).
pub fn synth_unit(
    cfg: &Config,
    u: &UnitDesign,
    lib: &Liberty,
    work: &Path,
    t: &Timing,
    siblings: &[UnitDesign],
    progress: Option<synth::ToolProgress>,
) -> FlowResult<(ReportRow, bool)> {
    let (r, cached) = synth_design(cfg, u, lib, work, siblings, progress)?;
    let row = ReportRow {
        engine: u.engine.into(),
        unit: u.unit.into(),
        params: u.params.clone(),
        latency_cycles: Some(t.latency_cycles as u32),
        throughput_bytes_per_cycle: Some(t.raw_bytes_per_cycle),
        result: r,
    };
    Ok((row, cached))
}

/// [`synth_unit`] without the measured timing: the synthesis result of `u` on `lib`.
fn synth_design(
    cfg: &Config,
    u: &UnitDesign,
    lib: &Liberty,
    work: &Path,
    siblings: &[UnitDesign],
    progress: Option<synth::ToolProgress>,
) -> FlowResult<(synth::SynthResult, bool)> {
    let label = lib.label();
    let mut reuse = Vec::new();
    for (name, child) in reused_children(cfg.synth.hierarchy, u, siblings) {
        let (r, _) = synth_design(cfg, &child, lib, work, siblings, progress.clone())
            .map_err(|e| format!("child {} ({}): {}", child.unit, name, e))?;
        reuse.push(synth::ReusedChild {
            module: name,
            result: r,
        });
    }
    let rtl_dir = work.join("rtl").join(&u.top.name);
    let files = write_rtl(std::slice::from_ref(u), &rtl_dir)?;
    let mut job = SynthJob::new(
        u.top.name.clone(),
        files,
        lib.clone(),
        work.join(&label).join(&u.top.name),
    );
    job.reuse = reuse;
    job.progress = progress;
    run_synth(cfg, &mut job, &label, u.top.has_clock)
}

/// The child modules of `u` that `hierarchy` maps in runs of their own, by module name, as
/// designs: each one that is the top of a sibling unit (unless `flat`), every RAM
/// ([`crate::hdl::ram`], in every mode), and with `families` each other one that `u`
/// instantiates more than once.
fn reused_children(
    hierarchy: crate::config::Hierarchy,
    u: &UnitDesign,
    siblings: &[UnitDesign],
) -> Vec<(String, UnitDesign)> {
    use crate::config::Hierarchy;
    let mut counts: std::collections::BTreeMap<&str, (usize, &std::sync::Arc<crate::hdl::Module>)> =
        std::collections::BTreeMap::new();
    for i in &u.top.instances {
        counts
            .entry(i.module.name.as_str())
            .or_insert((0, &i.module))
            .0 += 1;
    }
    counts
        .into_iter()
        .filter_map(|(name, (n, module))| {
            let ram = crate::hdl::ram::RamSpec::from_module_name(name).is_some();
            let design = match siblings.iter().find(|d| d.top.name == name) {
                Some(d) if hierarchy != Hierarchy::Flat => d.clone(),
                // A RAM is always mapped alone: the report gives it beside the logic.
                None if ram => UnitDesign {
                    unit: "ram",
                    top: module.clone(),
                    params: String::new(),
                    ..u.clone()
                },
                None if hierarchy == Hierarchy::Families && n > 1 => UnitDesign {
                    unit: "module",
                    top: module.clone(),
                    params: String::new(),
                    ..u.clone()
                },
                _ => return None,
            };
            Some((name.to_string(), design))
        })
        .collect()
}

/// Runs `job` with the configuration's clock for library `label` (on `clk_i` when `clocked`)
/// and budget, through the synthesis cache when `cfg.synth.cache` (the flag says whether the
/// result came from it), or through the run's own cache (`cfg.synth.run_cache`) when the
/// flow set one; the result is labelled with `label`.
fn run_synth(
    cfg: &Config,
    job: &mut SynthJob,
    label: &str,
    clocked: bool,
) -> FlowResult<(synth::SynthResult, bool)> {
    job.clock_ns = cfg.synth.clock_for(label);
    if crate::hdl::ram::RamSpec::from_module_name(&job.top).is_some() {
        // A RAM mapped alone sees its address at the clock edge and would meet the clock
        // with a chain of small buffers on its read address; in the unit the address comes
        // late. A tighter target makes ABC build a buffer tree (docs/MEMORIES.md).
        job.clock_ns *= RAM_TARGET_SCALE;
    }
    job.clock_port = clocked.then(|| "clk_i".to_string());
    job.budget = Duration::from_secs(cfg.synth.budget_s);
    job.effort = cfg.synth.effort;
    job.buffer_fanout = cfg.synth.buffer_fanout;
    job.macros = cfg.synth.macros.clone();
    let (mut r, cached) = if cfg.synth.cache {
        synth::cache::synthesize_cached(job)
    } else if let Some(root) = &cfg.synth.run_cache {
        synth::cache::synthesize_in(job, root)
    } else {
        synth::synthesize(job).map(|r| (r, false))
    }
    .map_err(|e| e.to_string())?;
    r.liberty = label.to_string();
    Ok((r, cached))
}

/// An error naming the synthesizable units when `engine` has no unit `unit`.
pub fn check_synth_unit(engine: EngineRef, unit: &str) -> FlowResult<()> {
    let known = engine.unit_names();
    if known.contains(&unit) {
        return Ok(());
    }
    Err(format!(
        "{} has no synthesizable unit `{}` (known: {})",
        engine.name(),
        crate::files::quote(unit),
        known.join(", ")
    ))
}

/// `hwzip synth`: synthesizes every unit of `engine` on every library; latency and throughput
/// are measured in Verilator and attached to the rows.
pub fn synth(
    engine: EngineRef,
    cfg: &Config,
    libs: &[Liberty],
    work: &Path,
    units: Option<&str>,
    log: &mut dyn FnMut(&str),
) -> FlowResult<Vec<ReportRow>> {
    if let Some(n) = units {
        check_synth_unit(engine, n)?;
    }
    let designs = engine.units(cfg)?;
    let mut rows = Vec::new();
    for u in designs.iter().filter(|u| units.is_none_or(|n| n == u.unit)) {
        let t = timing(engine, cfg, u.unit)?;
        for lib in libs {
            let label = lib.label();
            log(&format!(
                "synthesizing {} {} on {} at {} ns ...",
                engine.name(),
                u.unit,
                label,
                cfg.synth.clock_for(&label)
            ));
            rows.push(synth_unit(cfg, u, lib, work, &t, &designs, None)?.0);
        }
    }
    Ok(rows)
}

/// `hwzip synth --verilog F --top T`: synthesizes user Verilog `files` (top `top`, clocked by
/// `clk_i` when it has that port) on every library with the same flow as the engines' units,
/// for comparisons with hand-written or older RTL.
pub fn synth_files(
    cfg: &Config,
    files: &[PathBuf],
    top: &str,
    libs: &[Liberty],
    work: &Path,
    log: &mut dyn FnMut(&str),
) -> FlowResult<Vec<ReportRow>> {
    let mut clocked = false;
    for f in files {
        let text = crate::files::input::read(f, crate::files::input::Purpose::Verilog)
            .map_err(|e| format!("cannot read Verilog {}: {}", f.display(), e))?;
        let text = String::from_utf8_lossy(&text);
        clocked |= text.contains("clk_i");
    }
    let mut rows = Vec::new();
    for lib in libs {
        let label = lib.label();
        log(&format!(
            "synthesizing {} on {} at {} ns ...",
            top,
            label,
            cfg.synth.clock_for(&label)
        ));
        let mut job = SynthJob::new(
            top,
            files.to_vec(),
            lib.clone(),
            work.join(&label).join(top),
        );
        let (r, _) = run_synth(cfg, &mut job, &label, clocked)?;
        rows.push(ReportRow {
            engine: "verilog".into(),
            unit: top.into(),
            params: files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(" "),
            latency_cycles: None,
            throughput_bytes_per_cycle: None,
            result: r,
        });
    }
    Ok(rows)
}

/// The clock target of a RAM's own run, as a share of the unit's.
pub const RAM_TARGET_SCALE: f64 = 0.5;

/// What the memories table shows (before it in the reports).
pub const MEMORIES_NOTE: &str = "Each RAM is mapped in a run of its own. The rows above \
     count it as flip-flops; here it is also given as the smallest-area named macro that \
     fits (`synth.macros`), and the unit without its RAMs is timed with them as ideal cells \
     (no delay, no setup) and as those macros (docs/MEMORIES.md).\n\n";

/// Adds the synthesis rows' `report.md`, `report.csv` and `report.json` in `dir` to `set`.
pub fn add_reports(set: &mut FileSet, rows: &[ReportRow], dir: &Path) {
    let mut md = synth::to_markdown(rows);
    let mem = synth::report::memories_markdown(rows);
    if !mem.is_empty() {
        md.push_str(&format!("\n## Memories\n\n{}{}", MEMORIES_NOTE, mem));
    }
    set.add(dir.join("report.md"), md);
    set.add(dir.join("report.csv"), synth::to_csv(rows));
    set.add(dir.join("report.json"), synth::to_json(rows));
}

/// Writes an evaluation's `report.md`, `report.json` and `report.html` into `dir`, all or
/// none.
pub fn write_eval(
    engine: EngineRef,
    out: &crate::engines::EvalOutput,
    dir: &Path,
) -> FlowResult<()> {
    let mut set = FileSet::new();
    set.add(dir.join("report.md"), out.markdown.as_str());
    set.add(dir.join("report.json"), out.json.as_str());
    crate::report::add(&mut set, &html::eval_page(engine.name(), out), dir)?;
    set.commit()
}

/// Markdown table of co-simulation results.
pub fn cosim_markdown(reports: &[CosimReport]) -> String {
    let mut s = String::from(
        "| engine | unit | params | lines | cycles | mismatches | Mcycles/s |\n|---|---|---|---:|---:|---:|---:|\n",
    );
    for r in reports {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.2} |\n",
            r.engine,
            r.unit,
            r.params,
            r.stats.lines,
            r.stats.cycles,
            r.stats.mismatches,
            r.stats.cycles_per_second() / 1e6
        ));
    }
    s
}

/// Stimulus from the configuration, optionally with trace data.
pub fn stim_from(cfg: &Config, data: Option<Vec<u32>>) -> RunConfig {
    RunConfig {
        lines: if data.is_some() {
            u64::MAX
        } else {
            cfg.cosim.lines
        },
        seed: cfg.cosim.seed,
        in_gap: cfg.cosim.in_gap,
        out_stall: cfg.cosim.out_stall,
        data,
        ..RunConfig::default()
    }
}

/// Gate-level co-simulation: the synthesized netlist of `row` (with the library's cell
/// models) through the same scoreboard as the RTL, for `lines` transactions.
pub fn gate_cosim(
    engine: EngineRef,
    cfg: &Config,
    row: &ReportRow,
    lib: &Liberty,
    lines: u64,
) -> FlowResult<RunStats> {
    let mut dut = gate_level_dut(engine, cfg, row, lib, false)?;
    let mut stim = stim_from(cfg, None);
    stim.lines = lines;
    engine.cosim(&mut dut, cfg, &row.unit, &stim, &mut |_| {})
}

/// The synthesized netlist of `row` with the library's cell models, built in Verilator
/// (with a waveform when `trace`) for the unit's scoreboard.
pub fn gate_level_dut(
    engine: EngineRef,
    cfg: &Config,
    row: &ReportRow,
    lib: &Liberty,
    trace: bool,
) -> FlowResult<VerilatorDut> {
    let top = engine.cosim_top(cfg, &row.unit)?;
    let ports: Vec<synth::gatesim::PortBus> = top
        .ports()
        .into_iter()
        .map(|p| synth::gatesim::PortBus {
            input: p.dir == crate::hdl::module::Dir::In,
            name: p.name,
            width: p.width,
        })
        .collect();
    let gl = synth::gatesim::gate_level_model(
        &row.result,
        lib,
        Duration::from_secs(cfg.synth.budget_s),
        &ports,
    )
    .map_err(|e| e.to_string())?;
    let text =
        std::fs::read_to_string(&gl).map_err(|e| format!("cannot read {}: {}", gl.display(), e))?;
    let mut spec = crate::cosim::vdut::build_spec(&top, trace).map_err(|e| e.to_string())?;
    spec.sources = vec![("gatesim.v".into(), text)];
    let lib_model = crate::cosim::build(&spec).map_err(|e| e.to_string())?;
    let model = crate::cosim::Model::new(&lib_model).map_err(|e| e.to_string())?;
    VerilatorDut::from_model(model).map_err(|e| e.to_string())
}

/// The paper tables of `engine` for a synthesis run: its core table (when `cores` and the
/// engine has one; synthesized on `libs` into `out`) and the table built from its `rows`.
pub fn paper_tables(
    engine: EngineRef,
    cfg: &Config,
    rows: &[ReportRow],
    libs: &[Liberty],
    cores: bool,
    out: &Path,
    log: &mut dyn FnMut(&str),
) -> FlowResult<Vec<PaperTable>> {
    let mut v = Vec::new();
    if cores && engine.has_core_table() && !libs.is_empty() {
        v.push(engine.core_table(cfg, libs, out, log)?);
    }
    let mine: Vec<ReportRow> = rows
        .iter()
        .filter(|r| r.engine == engine.name())
        .cloned()
        .collect();
    v.extend(engine.rows_table(&mine));
    Ok(v)
}

/// Adds each table as `<dir>/<file>.md` to `set`.
pub fn add_tables(set: &mut FileSet, tables: &[PaperTable], dir: &Path) {
    for t in tables {
        set.add(dir.join(format!("{}.md", t.file)), t.markdown.as_str());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Hierarchy;

    fn names(h: Hierarchy, engine: &str, unit: &str) -> Vec<String> {
        let designs = crate::engines::by_name(engine)
            .unwrap()
            .units(&Config::default())
            .unwrap();
        let u = designs.iter().find(|d| d.unit == unit).unwrap();
        reused_children(h, u, &designs)
            .into_iter()
            .map(|(n, d)| {
                assert_eq!(n, d.top.name);
                n
            })
            .collect()
    }

    /// `reuse` takes the child units, `families` also every module instantiated more than
    /// once (the BPC compressor's merge and length-sum cells), `flat` nothing.
    #[test]
    fn families_add_repeated_modules_to_the_reused_child_units() {
        let rx = names(Hierarchy::Reuse, "adaptive", "rx");
        assert_eq!(rx.len(), 3, "{rx:?}");
        assert_eq!(names(Hierarchy::Families, "adaptive", "rx"), rx);
        assert!(names(Hierarchy::Flat, "adaptive", "rx").is_empty());
        assert!(names(Hierarchy::Reuse, "buddy", "bpc-compress").is_empty());
        let fam = names(Hierarchy::Families, "buddy", "bpc-compress");
        assert!(fam.iter().any(|n| n.starts_with("bpc_merge_")), "{fam:?}");
        assert!(
            fam.iter().any(|n| n.starts_with("bpc_len_sums_")),
            "{fam:?}"
        );
        // A module instantiated once stays in its parent's own logic.
        assert!(
            !fam.iter().any(|n| n.starts_with("bpc_zrun_scan")),
            "{fam:?}"
        );
    }
}
