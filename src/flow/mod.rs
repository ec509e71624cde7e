//! The steps behind the CLI: generate, co-simulate, synthesize, report, evaluate.
//!
//! Each step works from the engine table in [`crate::rtl::Engine`] and a [`Config`], so the
//! CLI stays a thin argument parser and every step is usable (and tested) as a library call.

use crate::config::Config;
use crate::cosim::adaptive as asb;
use crate::cosim::base_xor as bsb;
use crate::cosim::vdut::VerilatorDut;
use crate::cosim::zvc::{self as zsb, RunStats, StimConfig, Timing, Unit};
use crate::hdl::emit;
use crate::rtl::{Engine, UnitDesign};
use crate::synth::{self, Liberty, ReportRow, SynthJob};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub mod job;
pub mod progress;
pub mod regress;

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
            std::fs::write(&path, &text)
                .map_err(|e| format!("cannot write {}: {}", path.display(), e))?;
            written.insert(path, text);
        }
    }
    Ok(written.into_keys().collect())
}

/// `hwzip gen`: generates the engine's units into `<out>/<engine>/`. That directory belongs
/// to the generator: `.v` files in it that the current generator does not produce (modules
/// renamed or removed by a newer version) are deleted, so it always equals fresh output.
pub fn gen(engine: Engine, cfg: &Config, out: &Path) -> FlowResult<Vec<PathBuf>> {
    let units = engine.units(cfg).map_err(|e| e.to_string())?;
    let dir = out.join(engine.name());
    let mut files = write_rtl(&units, &dir)?;
    if engine == Engine::BaseXor {
        // The Table II cores (every scheme's encoder/decoder, ZDR word units) and the DBI
        // beat encoder as well, so the spec §6 modules are all in the output and linted,
        // whatever the configured scheme.
        let mut mods: Vec<Arc<crate::hdl::Module>> = crate::rtl::base_xor::table2::cores()
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|c| c.module)
            .collect();
        // The DBI beat encoder (the default write path fuses it with ZDR).
        let g = if cfg.base_xor.dbi_group == 0 {
            8
        } else {
            cfg.base_xor.dbi_group
        };
        mods.push(crate::rtl::dbi::dbi_beat_enc(g).map_err(|e| e.to_string())?);
        for module in mods {
            for (name, text) in emit::emit_design(&module).map_err(|e| e.to_string())? {
                let path = dir.join(&name);
                if !files.contains(&path) {
                    std::fs::write(&path, &text)
                        .map_err(|e| format!("cannot write {}: {}", path.display(), e))?;
                    files.push(path);
                }
            }
        }
        files.sort();
    }
    let entries =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {}", dir.display(), e))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "v") && !files.contains(&path) {
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove stale {}: {}", path.display(), e))?;
        }
    }
    Ok(files)
}

/// What to co-simulate.
#[derive(Clone, Debug)]
pub struct CosimRequest {
    /// Engine.
    pub engine: Engine,
    /// Unit: one of the engine's `unit_names()` or `loopback`.
    pub unit: String,
    /// Stimulus.
    pub stim: StimConfig,
    /// On a mismatch, replay with tracing and write the window around it here.
    pub vcd: Option<PathBuf>,
}

/// Result of one co-simulation.
#[derive(Clone, Debug, Serialize)]
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
}

fn zvc_unit(name: &str) -> FlowResult<Unit> {
    match name {
        "compressor" => Ok(Unit::Compressor),
        "decompressor" => Ok(Unit::Decompressor),
        "loopback" => Ok(Unit::Loopback),
        _ => Err(format!(
            "unknown unit `{}` (known: compressor, decompressor, loopback)",
            name
        )),
    }
}

/// The Base+XOR stimulus for the engine-independent settings of `s` (`lines` = sectors; a
/// trace is read as 32-bit words cut into sectors).
pub fn base_xor_stim(s: &StimConfig) -> bsb::StimConfig {
    bsb::StimConfig {
        sectors: s.lines,
        seed: s.seed,
        in_gap: s.in_gap,
        out_stall: s.out_stall,
        data: s.data.clone(),
        hang_cycles: s.hang_cycles,
        vcd: s.vcd.clone(),
        capture: s.capture,
        ..bsb::StimConfig::default()
    }
}

/// The adaptive-engine stimulus for the engine-independent settings of `s` (`lines` = 64 B
/// lines; a trace's 32-bit words are cut into lines, little-endian).
pub fn adaptive_stim(s: &StimConfig) -> asb::StimConfig {
    asb::StimConfig {
        lines: s.lines,
        seed: s.seed,
        in_gap: s.in_gap,
        out_stall: s.out_stall,
        data: s
            .data
            .as_ref()
            .map(|w| w.iter().flat_map(|x| x.to_le_bytes()).collect()),
        hang_cycles: s.hang_cycles,
        vcd: s.vcd.clone(),
        capture: s.capture,
        ..asb::StimConfig::default()
    }
}

/// Parameter description of an engine's configuration.
pub fn describe(engine: Engine, cfg: &Config) -> String {
    match engine {
        Engine::Zvc => cfg.zvc.describe(),
        Engine::BaseXor => cfg.base_xor.describe(),
        Engine::Adaptive => cfg.adaptive.describe_link(),
    }
}

/// The top module of a unit (including the test-only `loopback`).
pub fn unit_top(engine: Engine, cfg: &Config, unit: &str) -> FlowResult<Arc<crate::hdl::Module>> {
    match engine {
        Engine::Zvc => zsb::top(&cfg.zvc, zvc_unit(unit)?).map_err(|e| e.to_string()),
        Engine::BaseXor => {
            bsb::top(&cfg.base_xor, bsb::Unit::from_name(unit)?).map_err(|e| e.to_string())
        }
        Engine::Adaptive => {
            asb::top(&cfg.adaptive, asb::Unit::from_name(unit)?).map_err(|e| e.to_string())
        }
    }
}

/// `hwzip cosim`: builds (cached) and runs one unit against the golden model in Verilator.
pub fn cosim(
    req: &CosimRequest,
    cfg: &Config,
    progress: &mut dyn FnMut(&RunStats),
) -> FlowResult<CosimReport> {
    let top = unit_top(req.engine, cfg, &req.unit)?;
    let mut dut = VerilatorDut::new(&top, false).map_err(|e| e.to_string())?;
    let (stats, vcd) = match req.engine {
        Engine::Zvc => {
            let unit = zvc_unit(&req.unit)?;
            let st = zsb::run_with(&mut dut, &cfg.zvc, unit, &req.stim, progress)?;
            let mut vcd = None;
            if let (Some(m), Some(path)) = (&st.first_mismatch, &req.vcd) {
                // Deterministic replay with a tracing build, dumping the window around it.
                let mut tdut = VerilatorDut::new(&top, true).map_err(|e| e.to_string())?;
                let mut stim = req.stim.clone();
                stim.vcd = Some((path.clone(), m.cycle.saturating_sub(200), m.cycle + 20));
                stim.capture = false;
                zsb::run(&mut tdut, &cfg.zvc, unit, &stim)?;
                vcd = Some(path.clone());
            }
            (st, vcd)
        }
        Engine::BaseXor => {
            let p = &cfg.base_xor;
            let unit = bsb::Unit::from_name(&req.unit)?;
            let stim = base_xor_stim(&req.stim);
            let st = bsb::run_with(&mut dut, p, unit, &stim, progress)?;
            let mut vcd = None;
            if let (Some(m), Some(path)) = (&st.first_mismatch, &req.vcd) {
                let mut tdut = VerilatorDut::new(&top, true).map_err(|e| e.to_string())?;
                let mut stim = stim.clone();
                stim.vcd = Some((path.clone(), m.cycle.saturating_sub(200), m.cycle + 20));
                stim.capture = false;
                bsb::run(&mut tdut, p, unit, &stim)?;
                vcd = Some(path.clone());
            }
            (st, vcd)
        }
        Engine::Adaptive => {
            let p = &cfg.adaptive;
            let unit = asb::Unit::from_name(&req.unit)?;
            let stim = adaptive_stim(&req.stim);
            let st = asb::run_with(&mut dut, p, unit, &stim, progress)?;
            let mut vcd = None;
            if let (Some(m), Some(path)) = (&st.first_mismatch, &req.vcd) {
                let mut tdut = VerilatorDut::new(&top, true).map_err(|e| e.to_string())?;
                let mut stim = stim.clone();
                stim.vcd = Some((path.clone(), m.cycle.saturating_sub(200), m.cycle + 20));
                stim.capture = false;
                asb::run(&mut tdut, p, unit, &stim)?;
                vcd = Some(path.clone());
            }
            (st, vcd)
        }
    };
    Ok(CosimReport {
        engine: req.engine.name().into(),
        unit: req.unit.clone(),
        params: describe(req.engine, cfg),
        stats,
        vcd,
    })
}

/// Measures latency and throughput of a unit in Verilator (no back-pressure).
pub fn timing(engine: Engine, cfg: &Config, unit: &str) -> FlowResult<Timing> {
    let top = unit_top(engine, cfg, unit)?;
    let mut dut = VerilatorDut::new(&top, false).map_err(|e| e.to_string())?;
    match engine {
        Engine::Zvc => zsb::measure(&mut dut, &cfg.zvc, zvc_unit(unit)?),
        Engine::BaseXor => bsb::measure(&mut dut, &cfg.base_xor, bsb::Unit::from_name(unit)?),
        Engine::Adaptive => asb::measure(&mut dut, &cfg.adaptive, asb::Unit::from_name(unit)?),
    }
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
    Ok(libs)
}

/// Short display name of a library (from its file name).
pub fn lib_label(l: &Liberty) -> String {
    let f = l
        .source
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let lower = f.to_lowercase();
    if lower.contains("osu018") {
        "osu018".into()
    } else if lower.contains("nangate") {
        "nangate45".into()
    } else if lower.contains("sky130") {
        "sky130hd".into()
    } else {
        l.name.clone()
    }
}

/// The clock period for library `label`: `synth.clock_ns_by_library`, else `synth.clock_ns`.
pub fn clock_for(cfg: &Config, label: &str) -> f64 {
    cfg.synth
        .clock_ns_by_library
        .get(label)
        .copied()
        .unwrap_or(cfg.synth.clock_ns)
}

/// Synthesizes one unit on one library (through the synthesis cache when `cfg.synth.cache`;
/// the flag says whether the result came from it) and attaches the latency and throughput
/// `t` measured in Verilator.
pub fn synth_unit(
    cfg: &Config,
    u: &UnitDesign,
    lib: &Liberty,
    work: &Path,
    t: &Timing,
) -> FlowResult<(ReportRow, bool)> {
    let label = lib_label(lib);
    let rtl_dir = work.join("rtl").join(&u.top.name);
    let files = write_rtl(std::slice::from_ref(u), &rtl_dir)?;
    let mut job = SynthJob::new(
        u.top.name.clone(),
        files,
        lib.clone(),
        work.join(&label).join(&u.top.name),
    );
    let (r, cached) = run_synth(cfg, &mut job, &label, u.top.has_clock)?;
    let row = ReportRow {
        engine: u.engine.name().into(),
        unit: u.unit.into(),
        params: u.params.clone(),
        latency_cycles: Some(t.latency_cycles as u32),
        throughput_bytes_per_cycle: Some(t.raw_bytes_per_cycle),
        result: r,
    };
    Ok((row, cached))
}

/// Runs `job` with the configuration's clock for library `label` (on `clk_i` when `clocked`)
/// and budget, through the synthesis cache when `cfg.synth.cache` (the flag says whether the
/// result came from it); the result is labelled with `label`.
fn run_synth(
    cfg: &Config,
    job: &mut SynthJob,
    label: &str,
    clocked: bool,
) -> FlowResult<(synth::SynthResult, bool)> {
    job.clock_ns = clock_for(cfg, label);
    job.clock_port = clocked.then(|| "clk_i".to_string());
    job.budget = Duration::from_secs(cfg.synth.budget_s);
    let (mut r, cached) = if cfg.synth.cache {
        synth::cache::synthesize_cached(job)
    } else {
        synth::synthesize(job).map(|r| (r, false))
    }
    .map_err(|e| e.to_string())?;
    r.liberty = label.to_string();
    Ok((r, cached))
}

/// `hwzip synth`: synthesizes every unit of `engine` on every library; latency and throughput
/// are measured in Verilator and attached to the rows.
pub fn synth(
    engine: Engine,
    cfg: &Config,
    libs: &[Liberty],
    work: &Path,
    units: Option<&str>,
    log: &mut dyn FnMut(&str),
) -> FlowResult<Vec<ReportRow>> {
    let designs = engine.units(cfg).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for u in designs.iter().filter(|u| units.is_none_or(|n| n == u.unit)) {
        let t = timing(engine, cfg, u.unit)?;
        for lib in libs {
            let label = lib_label(lib);
            log(&format!(
                "synthesizing {} {} on {} at {} ns ...",
                engine.name(),
                u.unit,
                label,
                clock_for(cfg, &label)
            ));
            rows.push(synth_unit(cfg, u, lib, work, &t)?.0);
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
        let text = std::fs::read_to_string(f)
            .map_err(|e| format!("cannot read Verilog {}: {}", f.display(), e))?;
        clocked |= text.contains("clk_i");
    }
    let mut rows = Vec::new();
    for lib in libs {
        let label = lib_label(lib);
        log(&format!(
            "synthesizing {} on {} at {} ns ...",
            top,
            label,
            clock_for(cfg, &label)
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

/// Writes `report.md`, `report.csv` and `report.json` into `dir`.
pub fn write_reports(rows: &[ReportRow], dir: &Path) -> FlowResult<()> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {}", dir.display(), e))?;
    for (name, text) in [
        ("report.md", synth::to_markdown(rows)),
        ("report.csv", synth::to_csv(rows)),
        ("report.json", synth::to_json(rows)),
    ] {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("cannot write {}: {}", dir.join(name).display(), e))?;
    }
    Ok(())
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
pub fn stim_from(cfg: &Config, data: Option<Vec<u32>>) -> StimConfig {
    StimConfig {
        lines: if data.is_some() {
            u64::MAX
        } else {
            cfg.cosim.lines
        },
        seed: cfg.cosim.seed,
        in_gap: cfg.cosim.in_gap,
        out_stall: cfg.cosim.out_stall,
        max_windows: cfg.cosim.max_windows,
        data,
        ..StimConfig::default()
    }
}

/// Gate-level co-simulation: the synthesized netlist of `row` (with the library's cell
/// models) through the same scoreboard as the RTL, for `lines` windows (ZVC) or sectors
/// (Base+XOR).
pub fn gate_cosim(
    engine: Engine,
    cfg: &Config,
    row: &ReportRow,
    lib: &Liberty,
    lines: u64,
) -> FlowResult<RunStats> {
    let top = unit_top(engine, cfg, &row.unit)?;
    let gl =
        synth::gatesim::gate_level_model(&row.result, lib, Duration::from_secs(cfg.synth.budget_s))
            .map_err(|e| e.to_string())?;
    let text =
        std::fs::read_to_string(&gl).map_err(|e| format!("cannot read {}: {}", gl.display(), e))?;
    let mut spec = crate::cosim::vdut::build_spec(&top, false).map_err(|e| e.to_string())?;
    spec.sources = vec![("gatesim.v".into(), text)];
    let lib_model = crate::cosim::build(&spec).map_err(|e| e.to_string())?;
    let model = crate::cosim::Model::new(&lib_model).map_err(|e| e.to_string())?;
    let mut dut = VerilatorDut::from_model(model).map_err(|e| e.to_string())?;
    let mut stim = stim_from(cfg, None);
    stim.lines = lines;
    match engine {
        Engine::Zvc => zsb::run(&mut dut, &cfg.zvc, zvc_unit(&row.unit)?, &stim),
        Engine::BaseXor => bsb::run(
            &mut dut,
            &cfg.base_xor,
            bsb::Unit::from_name(&row.unit)?,
            &base_xor_stim(&stim),
        ),
        Engine::Adaptive => asb::run(
            &mut dut,
            &cfg.adaptive,
            asb::Unit::from_name(&row.unit)?,
            &adaptive_stim(&stim),
        ),
    }
}

/// A trace file as bytes ([`crate::trace::file::load_bytes`]), zero-padded to whole blocks
/// of `block` bytes (sectors, lines); an empty trace is an error.
fn load_blocks(path: &Path, block: usize) -> FlowResult<Vec<u8>> {
    let mut bytes = crate::trace::file::load_bytes(path).map_err(|e| e.to_string())?;
    if bytes.is_empty() {
        return Err(format!("{}: empty trace", path.display()));
    }
    bytes.resize(bytes.len().div_ceil(block) * block, 0);
    Ok(bytes)
}

/// What `hwzip eval --engine base-xor` accounts.
#[derive(Clone, Debug)]
pub struct BxEvalRequest {
    /// Trace files (read with [`crate::trace::file::load_bytes`]).
    pub traces: Vec<PathBuf>,
    /// Synthetic sector classes by name, or `all`.
    pub classes: Vec<String>,
    /// Sectors per synthetic class.
    pub sectors: usize,
    /// Seed of the synthetic classes.
    pub seed: u64,
    /// Extra I/O energy per transmitted 1, pJ.
    pub pj_per_one: f64,
    /// How toggles between transactions are counted.
    pub toggle_mode: crate::model::ones::ToggleMode,
}

/// `hwzip eval --engine base-xor`: ones, toggles and I/O energy of the paper's schemes
/// ([`crate::model::ones::paper_schemes`], plus the configured codec when it differs) on every
/// trace and class. Every transaction is also decoded and checked.
pub fn eval_base_xor(
    cfg: &Config,
    req: &BxEvalRequest,
) -> FlowResult<Vec<crate::model::ones::Comparison>> {
    use crate::model::base_xor::words_le;
    use crate::model::ones;
    use crate::trace::sectors::SectorClass;
    if !(req.pj_per_one.is_finite() && req.pj_per_one >= 0.0) {
        return Err(format!("--pj-per-one = {} must be ≥ 0", req.pj_per_one));
    }
    let mut schemes = ones::paper_schemes();
    let mine = cfg.base_xor.model();
    if mine.bx.t_bytes != 32 {
        return Err(
            "eval --engine base-xor compares 32 B sectors: set base_xor.t_bytes: 32".into(),
        );
    }
    if !schemes.contains(&mine) {
        schemes.push(mine);
    }
    let mut classes = Vec::new();
    for c in &req.classes {
        if c == "all" {
            classes.extend(SectorClass::ALL);
        } else {
            classes.push(SectorClass::from_name(c)?);
        }
    }
    if req.sectors == 0 && !classes.is_empty() {
        return Err("--sectors must be at least 1".into());
    }
    let mut out = Vec::new();
    for t in &req.traces {
        let words = words_le(&load_blocks(t, 32)?);
        out.push(
            ones::compare(
                &t.display().to_string(),
                &words,
                &schemes,
                req.pj_per_one,
                req.toggle_mode,
            )
            .map_err(|e| e.to_string())?,
        );
    }
    for c in classes {
        let words = c.generate(req.sectors, req.seed);
        out.push(
            ones::compare(c.name(), &words, &schemes, req.pj_per_one, req.toggle_mode)
                .map_err(|e| e.to_string())?,
        );
    }
    Ok(out)
}

/// Base+XOR: synthesizes the cores of the paper's Table II (encoders and decoders of every
/// mechanism, combinational) on `libs`, writes `table2.md` / `table2.json` into `out` and
/// returns the Markdown table.
pub fn synth_table2(
    cfg: &Config,
    libs: &[Liberty],
    out: &Path,
    log: &mut dyn FnMut(&str),
) -> FlowResult<String> {
    use crate::rtl::base_xor::table2;
    use crate::synth::cores;
    let specs = table2::cores().map_err(|e| e.to_string())?;
    let labelled: Vec<(String, Liberty)> = libs.iter().map(|l| (lib_label(l), l.clone())).collect();
    let clock = |label: &str| clock_for(cfg, label);
    let results = cores::synthesize_cores(
        &specs,
        &labelled,
        &clock,
        &out.join("table2"),
        Duration::from_secs(cfg.synth.budget_s),
        cfg.synth.cache,
        log,
    )
    .map_err(|e| e.to_string())?;
    let md = cores::to_markdown(&results, &table2::paper_node(), ("2-byte XOR", "enc"));
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {}", out.display(), e))?;
    std::fs::write(out.join("table2.md"), &md)
        .map_err(|e| format!("cannot write table2.md: {}", e))?;
    let js = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
    std::fs::write(out.join("table2.json"), js)
        .map_err(|e| format!("cannot write table2.json: {}", e))?;
    Ok(md)
}

/// What `hwzip eval --engine adaptive` evaluates.
#[derive(Clone, Debug)]
pub struct AdaptiveEvalRequest {
    /// Trace files, read as bytes ([`crate::trace::file::load_bytes`]) and cut into lines.
    pub traces: Vec<PathBuf>,
    /// Line profiles by name (`zero-heavy`, `small-delta`, …, `bench-sc`, …), or `all`.
    pub profiles: Vec<String>,
    /// Lines per profile.
    pub lines: usize,
    /// Seed of the profiles.
    pub seed: u64,
    /// λ of the penalty (overrides the model default of 6).
    pub lambda: u32,
}

/// `hwzip eval --engine adaptive`: static BDI / FPC / C-Pack+Z ratios, the adaptive
/// policy's traffic and its decisions, per trace file and line profile.
pub fn eval_adaptive(
    req: &AdaptiveEvalRequest,
) -> FlowResult<Vec<crate::model::adaptive::eval::AdaptiveEval>> {
    use crate::model::adaptive::{eval, paper::Bench, AdaptiveParams};
    use crate::trace::lines::{self, LineProfile};
    let p = AdaptiveParams::with_lambda(req.lambda);
    p.validate().map_err(|e| e.to_string())?;
    let lb = p.line_bytes();
    let mut profiles = Vec::new();
    for name in &req.profiles {
        if name == "all" {
            profiles.extend(LineProfile::PRIMITIVES);
            profiles.push(LineProfile::Mixed);
            profiles.extend(Bench::ALL.into_iter().map(LineProfile::Bench));
        } else {
            profiles.push(LineProfile::from_name(name).ok_or_else(|| {
                format!(
                    "unknown line profile `{}` (known: zero, zero-heavy, small-delta, narrow, \
                     repeated, floats, half-zero-floats, random, mixed, bench-<name>, all)",
                    name
                )
            })?);
        }
    }
    if req.lines == 0 && !profiles.is_empty() {
        return Err("--lines must be at least 1".into());
    }
    let mut out = Vec::new();
    for t in &req.traces {
        let ls: Vec<Vec<u8>> = load_blocks(t, lb)?
            .chunks_exact(lb)
            .map(<[u8]>::to_vec)
            .collect();
        out.push(
            eval::evaluate_lines(&p, &t.display().to_string(), &ls).map_err(|e| e.to_string())?,
        );
    }
    for pr in profiles {
        let ls = lines::lines(pr, lb, req.lines, req.seed);
        out.push(eval::evaluate_lines(&p, &pr.name(), &ls).map_err(|e| e.to_string())?);
    }
    Ok(out)
}
