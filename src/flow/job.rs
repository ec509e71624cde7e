//! `hwzip flow`: the main job. Generates every selected engine, co-simulates every unit
//! against its golden model, synthesizes every unit on every selected library, and writes
//! one report.
//!
//! Independent steps (one co-simulation per unit, one synthesis per unit and library, the
//! Base+XOR Table II cores) run on `jobs` worker threads, longest first. Verilator models
//! and synthesis results are cached (`crate::cache_dir`), so a re-run only redoes what
//! changed. Two profiles fix the defaults: `quick` (osu018, 10,000 lines per unit, `-O1`
//! Verilator builds) for minutes, `paper` (osu018 + Nangate45 + sky130hd, 10^6 lines, `-O2`)
//! for the figures the README quotes.

use super::html;
use super::progress::{Step, Ui};
use super::{
    cosim, cosim_markdown, gen, libraries, paper_tables, synth_unit, timing, CosimReport,
    CosimRequest, FlowResult,
};
use crate::config::Config;
use crate::engines::{self, cosim_units, known_cosim_units, EngineRef, PaperTable, UnitDesign};
use crate::synth::{self, Liberty, ReportRow};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A set of defaults for the main job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// osu018 only, 10,000 lines per unit, `-O1` models: the whole job in minutes.
    Quick,
    /// osu018, Nangate45 and sky130hd (when present), 10^6 lines per unit, `-O2` models.
    Paper,
}

impl Profile {
    /// Parses `quick` or `paper`.
    pub fn from_name(s: &str) -> FlowResult<Profile> {
        match s {
            "quick" => Ok(Profile::Quick),
            "paper" => Ok(Profile::Paper),
            _ => Err(format!(
                "unknown profile `{}` (known: quick, paper)",
                crate::files::quote(s)
            )),
        }
    }

    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Paper => "paper",
        }
    }

    /// Co-simulation length per unit.
    pub fn lines(self) -> u64 {
        match self {
            Profile::Quick => 10_000,
            Profile::Paper => 1_000_000,
        }
    }

    /// Liberty libraries.
    pub fn libraries(self) -> Vec<String> {
        match self {
            Profile::Quick => vec!["osu018".into()],
            Profile::Paper => vec!["osu018".into(), "nangate45".into(), "sky130hd".into()],
        }
    }

    /// `-O` level of the Verilated C++ ([`crate::cosim::set_opt_level`]).
    pub fn cxx_opt(self) -> u8 {
        match self {
            Profile::Quick => 1,
            Profile::Paper => 2,
        }
    }

    /// Applies the profile's lines and libraries to `cfg`, except where the configuration
    /// file set them (`explicit` holds its `section.key` names, see
    /// [`crate::config::explicit_keys`]).
    pub fn apply(self, cfg: &mut Config, explicit: &std::collections::BTreeSet<String>) {
        if !explicit.contains("cosim.lines") {
            cfg.cosim.lines = self.lines();
        }
        if !explicit.contains("synth.libraries") {
            cfg.synth.libraries = self.libraries();
        }
    }
}

/// What `hwzip flow` runs (the configuration itself is passed separately).
#[derive(Clone, Debug)]
pub struct FlowOptions {
    /// The profile the defaults came from (reported).
    pub profile: Profile,
    /// Engines, in order (empty: all).
    pub engines: Vec<EngineRef>,
    /// Only this unit (co-simulation and synthesis), when set.
    pub unit: Option<String>,
    /// Worker threads.
    pub jobs: usize,
    /// Output directory.
    pub out: PathBuf,
    /// Gate-level co-simulation length per synthesized netlist (0: none).
    pub gate_cosim: u64,
    /// Energy per line: lines of gate-level activity per synthesized netlist (0: none).
    pub energy: u64,
    /// Synthesize (false: generate and co-simulate only).
    pub synth: bool,
    /// Run only shard `k` of `n` (1-based) of the independent steps, for splitting one run
    /// over several machines; the steps are numbered in their deterministic order.
    pub shard: Option<(usize, usize)>,
}

/// Parses `K/N` (1 ≤ K ≤ N).
pub fn parse_shard(s: &str) -> FlowResult<(usize, usize)> {
    let bad = || format!("--shard `{}` must be K/N with 1 <= K <= N", s);
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k: usize = k.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// Wall time of one step.
#[derive(Clone, Debug, Serialize)]
pub struct StepTime {
    /// `gen`, `cosim`, `synth`, `cores` (a paper's core table) or `gate`.
    pub kind: &'static str,
    /// What ran (engine, unit, library).
    pub what: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Cached result, rate, or other detail.
    pub detail: String,
}

/// Everything one flow run produced.
#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    /// Profile name.
    pub profile: Profile,
    /// Libraries synthesized (labels).
    pub libraries: Vec<String>,
    /// Co-simulation lines per unit.
    pub lines: u64,
    /// Worker threads.
    pub jobs: usize,
    /// `-O` level of the Verilator models.
    pub cxx_opt: u8,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Every unit matched its model (and every gate-level run).
    pub ok: bool,
    /// Every step with its time.
    pub steps: Vec<StepTime>,
    /// Co-simulation results.
    pub cosim: Vec<CosimReport>,
    /// Synthesis rows.
    pub synth: Vec<ReportRow>,
    /// Tables beside the papers' (Base+XOR Table II, adaptive Table III), when synthesized.
    pub tables: Vec<PaperTable>,
    /// Energy per line of every synthesized netlist (`--energy`; empty otherwise).
    pub energy: Vec<super::energy::EnergyRow>,
    /// Notes (skipped libraries, ...).
    pub notes: Vec<String>,
}

enum Task {
    Cosim {
        engine: EngineRef,
        unit: String,
    },
    Synth {
        design: Box<UnitDesign>,
        lib: Box<Liberty>,
    },
    /// An engine's paper core table (Base+XOR Table II).
    Cores(EngineRef),
}

enum Done {
    Cosim(Box<CosimReport>),
    Synth(Box<ReportRow>),
    Cores(Box<PaperTable>),
}

/// Runs `f(i)` for `i` in `0..n` on `jobs` threads, each index once, and returns the
/// results in index order. After the first error no new index is started (those report
/// `skipped`).
pub(crate) fn pool<T: Send>(
    n: usize,
    jobs: usize,
    f: &(dyn Fn(usize) -> FlowResult<T> + Sync),
) -> Vec<FlowResult<T>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let out: Mutex<Vec<Option<FlowResult<T>>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = if failed.load(Ordering::Relaxed) {
                    Err("skipped after an earlier error".into())
                } else {
                    f(i)
                };
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                out.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not run".into())))
        .collect()
}

fn verilog_bytes(m: &std::sync::Arc<crate::hdl::Module>) -> usize {
    crate::hdl::emit::emit_design(m)
        .map(|fs| fs.iter().map(|(_, t)| t.len()).sum())
        .unwrap_or(0)
}

/// Runs the main job. `cfg` already holds the profile's and the command line's settings.
pub fn run(cfg: &Config, opts: &FlowOptions, ui: &Ui) -> FlowResult<FlowReport> {
    let t0 = Instant::now();
    let mut notes = Vec::new();
    let libs = if opts.synth {
        libraries(&cfg.synth.libraries, &mut notes)?
    } else {
        Vec::new()
    };
    let engines: Vec<EngineRef> = if opts.engines.is_empty() {
        engines::ALL.to_vec()
    } else {
        opts.engines.clone()
    };
    let mut steps = Vec::new();
    let wanted = |u: &str| opts.unit.as_deref().is_none_or(|w| w == u);

    if let Some(u) = &opts.unit {
        for &engine in &engines {
            let units = cosim_units(engine);
            if !units.contains(u) {
                return Err(format!(
                    "{} has no unit `{}` (known: {})",
                    engine.name(),
                    u,
                    units.join(", ")
                ));
            }
        }
    }

    // Generate (fast, in order) and list the independent steps.
    let mut tasks: Vec<(usize, Task)> = Vec::new();
    for &engine in &engines {
        let s = ui.step(&format!("gen {}", engine.name()));
        let files = gen(engine, cfg, &opts.out.join("rtl"))?;
        let detail = format!(
            "{} files in {}",
            files.len(),
            opts.out.join("rtl").join(engine.name()).display()
        );
        steps.push(finish(s, "gen", engine.name().into(), detail));
        // The paper profile (the long tier) also runs the test-only loop-backs, which the
        // fast tier runs at the default parameters only.
        let cos_units = if opts.profile == Profile::Paper {
            known_cosim_units(engine)
        } else {
            cosim_units(engine)
        };
        // A unit the configuration does not have (Buddy's controller with BPC entries
        // other than 128 B) is neither co-simulated nor synthesized.
        let designs = engine.units(cfg)?;
        let cos_units = engines::configured(engine, &designs, cos_units);
        for u in cos_units.into_iter().filter(|u| wanted(u)) {
            let w = verilog_bytes(&engine.cosim_top(cfg, &u)?);
            tasks.push((w, Task::Cosim { engine, unit: u }));
        }
        for d in designs {
            if !wanted(d.unit) || !opts.synth {
                continue;
            }
            let w = 4 * verilog_bytes(&d.top);
            for lib in &libs {
                tasks.push((
                    w,
                    Task::Synth {
                        design: Box::new(d.clone()),
                        lib: Box::new(lib.clone()),
                    },
                ));
            }
        }
        if engine.has_core_table() && opts.unit.is_none() && opts.synth && !libs.is_empty() {
            tasks.push((200_000 * libs.len(), Task::Cores(engine)));
        }
    }
    // Longest first, so the last step to finish is a short one.
    tasks.sort_by_key(|t| std::cmp::Reverse(t.0));
    let tasks: Vec<Task> = tasks
        .into_iter()
        .enumerate()
        .filter(|(i, _)| opts.shard.is_none_or(|(k, n)| i % n == k - 1))
        .map(|(_, (_, t))| t)
        .collect();
    ui.line(&format!(
        "flow ({} profile{}): {} steps on {} worker(s): co-simulation of {} lines per unit, \
         synthesis on {}",
        opts.profile.name(),
        opts.shard
            .map(|(k, n)| format!(", shard {}/{}", k, n))
            .unwrap_or_default(),
        tasks.len(),
        opts.jobs,
        cfg.cosim.lines,
        libs.iter()
            .map(Liberty::label)
            .collect::<Vec<_>>()
            .join(", ")
    ));

    let step_times: Mutex<Vec<(usize, StepTime)>> = Mutex::new(Vec::new());
    let results = pool(tasks.len(), opts.jobs, &|i| {
        let (done, st) = run_task(cfg, opts, &tasks[i], &libs, ui)?;
        step_times
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((i, st));
        Ok(done)
    });
    let mut timed = step_times.into_inner().unwrap_or_else(|e| e.into_inner());
    timed.sort_by_key(|(i, _)| *i);
    steps.extend(timed.into_iter().map(|(_, s)| s));
    let errors: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .filter(|e| !e.starts_with("skipped"))
        .cloned()
        .collect();
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }

    // Collect in a fixed order (engine, unit, library), whatever order the steps ran in.
    let mut cosims = Vec::new();
    let mut rows = Vec::new();
    let mut cores = Vec::new();
    for r in results.into_iter().flatten() {
        match r {
            Done::Cosim(c) => cosims.push(*c),
            Done::Synth(row) => rows.push(*row),
            Done::Cores(t) => cores.push(*t),
        }
    }
    let engine_pos = |name: &str| engines.iter().position(|e| e.name() == name);
    let unit_pos = |engine: &str, unit: &str| {
        engines
            .iter()
            .find(|e| e.name() == engine)
            .map(|e| known_cosim_units(*e).iter().position(|u| u == unit))
    };
    cosims.sort_by_key(|c| (engine_pos(&c.engine), unit_pos(&c.engine, &c.unit)));
    let lib_pos = |l: &str| libs.iter().position(|x| x.label() == l);
    rows.sort_by_key(|r| {
        (
            engine_pos(&r.engine),
            unit_pos(&r.engine, &r.unit),
            lib_pos(&r.result.liberty),
        )
    });
    let mut ok = cosims.iter().all(|c| c.stats.mismatches == 0);

    // Gate-level co-simulation (optional, slow), in order.
    if opts.gate_cosim > 0 {
        for r in &rows {
            let Some(lib) = libs.iter().find(|l| l.label() == r.result.liberty) else {
                continue;
            };
            let (matched, st) = gate_step(cfg, r, lib, opts.gate_cosim, ui)?;
            ok &= matched;
            steps.push(st);
        }
    }
    // Energy per line (optional, slow: a traced gate-level build per netlist), in order.
    let mut energy = Vec::new();
    if opts.energy > 0 {
        for r in &rows {
            let Some(lib) = libs.iter().find(|l| l.label() == r.result.liberty) else {
                continue;
            };
            let (e, st) = energy_step(cfg, r, lib, opts.energy, &opts.out, ui)?;
            energy.push(e);
            steps.push(st);
        }
    }
    // Paper tables in engine order: the core tables run above, then those from the rows.
    let mut tables = Vec::new();
    for &engine in &engines {
        tables.extend(cores.iter().filter(|t| t.engine == engine.name()).cloned());
        tables.extend(paper_tables(
            engine,
            cfg,
            &rows,
            &libs,
            false,
            &opts.out,
            &mut |_| {},
        )?);
    }
    Ok(FlowReport {
        profile: opts.profile,
        libraries: libs.iter().map(Liberty::label).collect(),
        lines: cfg.cosim.lines,
        jobs: opts.jobs,
        cxx_opt: crate::cosim::opt_level(),
        seconds: t0.elapsed().as_secs_f64(),
        ok,
        steps,
        cosim: cosims,
        synth: rows,
        tables,
        energy,
        notes,
    })
}

/// Energy per line of one synthesized row ([`super::energy::energy`]) as a timed step; the
/// work files go under `out/energy/<library>/<top>/`.
pub fn energy_step(
    cfg: &Config,
    row: &ReportRow,
    lib: &Liberty,
    lines: u64,
    out: &Path,
    ui: &Ui,
) -> FlowResult<(super::energy::EnergyRow, StepTime)> {
    let engine = engines::by_name(&row.engine)?;
    let what = format!("{} {} {}", row.engine, row.unit, row.result.liberty);
    let s = ui.step(&format!("energy {}", what));
    s.set(format!("{} lines", lines));
    let work = out
        .join("energy")
        .join(&row.result.liberty)
        .join(&row.result.top);
    let e = super::energy::energy(engine, cfg, row, lib, lines, &work)?;
    let detail = format!(
        "{} lines, {} cycles, {:.2} mW, {:.2} pJ/line",
        e.lines, e.cycles, e.total_mw, e.pj_per_line
    );
    Ok((e, finish(s, "energy", what, detail)))
}

/// Gate-level co-simulation of one synthesized row ([`super::gate_cosim`]) as a timed step;
/// the flag says whether it matched the model.
pub fn gate_step(
    cfg: &Config,
    row: &ReportRow,
    lib: &Liberty,
    lines: u64,
    ui: &Ui,
) -> FlowResult<(bool, StepTime)> {
    let engine = engines::by_name(&row.engine)?;
    let what = format!("{} {} {}", row.engine, row.unit, row.result.liberty);
    let s = ui.step(&format!("gate {}", what));
    s.set(format!("{} lines", lines));
    let st = super::gate_cosim(engine, cfg, row, lib, lines)?;
    let detail = match &st.first_mismatch {
        Some(m) => format!("MISMATCH: {}", m),
        None => format!("{} lines, {} cycles, 0 mismatches", st.lines, st.cycles),
    };
    Ok((st.mismatches == 0, finish(s, "gate", what, detail)))
}

fn finish(s: Step, kind: &'static str, what: String, detail: String) -> StepTime {
    let seconds = s.elapsed();
    s.done(&detail);
    StepTime {
        kind,
        what,
        seconds,
        detail,
    }
}

fn run_task(
    cfg: &Config,
    opts: &FlowOptions,
    task: &Task,
    libs: &[Liberty],
    ui: &Ui,
) -> FlowResult<(Done, StepTime)> {
    match task {
        Task::Cosim { engine, unit } => {
            let what = format!("{} {}", engine.name(), unit);
            let s = ui.step(&format!("cosim {}", what));
            s.set("verilating and compiling the model (cached after the first build)");
            let total = cfg.cosim.lines;
            let req = CosimRequest {
                engine: *engine,
                unit: unit.clone(),
                stim: super::stim_from(cfg, None),
                vcd: Some(
                    opts.out
                        .join(format!("{}_{}_mismatch.vcd", engine.name(), unit)),
                ),
                x_seed: None,
            };
            let r = cosim(&req, cfg, &mut |st| {
                s.set(format!(
                    "{} of {} lines, {} cycles, {:.2} Mcycles/s",
                    st.lines,
                    total,
                    st.cycles,
                    st.cycles_per_second() / 1e6
                ))
            })?;
            let st = &r.stats;
            let detail = match &st.first_mismatch {
                Some(m) => format!("MISMATCH: {}", m),
                None => format!(
                    "{} lines, {} cycles, 0 mismatches, {:.2} Mcycles/s",
                    st.lines,
                    st.cycles,
                    st.cycles_per_second() / 1e6
                ),
            };
            Ok((Done::Cosim(Box::new(r)), finish(s, "cosim", what, detail)))
        }
        Task::Synth { design, lib } => {
            let label = lib.label();
            let what = format!("{} {} {}", design.engine, design.unit, label);
            let s = ui.step(&format!(
                "synth {} {} on {}",
                design.engine, design.unit, label
            ));
            s.set("latency and throughput in Verilator");
            let t = timing(engines::by_name(design.engine)?, cfg, design.unit)?;
            s.set(format!(
                "yosys + abc, then sta at {} ns (budget {} s)",
                cfg.synth.clock_for(&label),
                cfg.synth.budget_s
            ));
            let (row, cached) = synth_unit(cfg, design, lib, &opts.out.join("synth"), &t)?;
            let r = &row.result;
            let detail = format!(
                "{:.2} kGE, {:.3} ns ({:.0} MHz){}",
                r.kge,
                r.critical_path_ns,
                r.fmax_mhz,
                if cached { ", cached" } else { "" }
            );
            Ok((Done::Synth(Box::new(row)), finish(s, "synth", what, detail)))
        }
        Task::Cores(engine) => {
            let s = ui.step(&format!("synth {} paper cores", engine.name()));
            let t = engine.core_table(cfg, libs, &opts.out, &mut |m| s.set(m.to_string()))?;
            let what = format!("{} {}", engine.name(), t.file);
            let detail = format!("{} libraries", libs.len());
            Ok((Done::Cores(Box::new(t)), finish(s, "cores", what, detail)))
        }
    }
}

/// The flow's `report.md`: profile, co-simulation, synthesis, the paper tables and the time
/// of every step.
pub fn markdown(r: &FlowReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# hwzip flow report\n");
    let _ = writeln!(
        s,
        "Profile `{}`: {} lines per unit, libraries {}, {} worker(s), Verilator models at -O{}; \
         {:.0} s in all; {}.\n",
        r.profile.name(),
        r.lines,
        r.libraries.join(", "),
        r.jobs,
        r.cxx_opt,
        r.seconds,
        if r.ok {
            "every unit matches its golden model"
        } else {
            "MISMATCHES FOUND"
        }
    );
    let _ = writeln!(s, "## Co-simulation\n\n{}", cosim_markdown(&r.cosim));
    if !r.synth.is_empty() {
        let _ = writeln!(s, "## Synthesis\n\n{}", synth::to_markdown(&r.synth));
    }
    for t in &r.tables {
        let _ = writeln!(s, "## {}\n\n{}", t.title, t.markdown);
    }
    if !r.energy.is_empty() {
        let _ = writeln!(
            s,
            "## Energy per line\n\n{}",
            super::energy::report(&r.energy)
        );
    }
    let _ = writeln!(
        s,
        "## Steps\n\n| step | what | seconds | detail |\n|---|---|---:|---|"
    );
    for st in &r.steps {
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} | {} |",
            st.kind, st.what, st.seconds, st.detail
        );
    }
    for n in &r.notes {
        let _ = writeln!(s, "\nnote: {}", n);
    }
    s
}

/// The `hwzip flow` page.
pub fn page(r: &FlowReport, markdown_summary: &str) -> crate::report::Page {
    let mut p = crate::report::Page::new("hwzip flow report");
    let first = markdown_summary
        .lines()
        .find(|l| l.starts_with("Profile"))
        .unwrap_or("")
        .to_string();
    p.section("Summary", vec![crate::report::Block::Markdown(first)]);
    p.section("Co-simulation", html::cosim_blocks(&r.cosim));
    if !r.synth.is_empty() {
        p.section("Synthesis", html::synth_blocks(&r.synth));
    }
    if !r.tables.is_empty() {
        p.section("Beside the papers", html::table_blocks(&r.tables));
    }
    if !r.energy.is_empty() {
        html::energy_section(&mut p, &r.energy);
    }
    let mut steps = String::from("| step | what | seconds | detail |\n|---|---|---:|---|\n");
    for st in &r.steps {
        steps.push_str(&format!(
            "| {} | {} | {:.1} | {} |\n",
            st.kind,
            st.what,
            st.seconds,
            st.detail.replace('|', "/")
        ));
    }
    p.section("Steps", vec![crate::report::Block::Markdown(steps)]);
    p
}

/// Writes `report.md`, `report.csv` (synthesis rows), `report.json` (everything),
/// `cosim.md`, and `<table>.md` for each paper table, into `dir`.
pub fn write(r: &FlowReport, dir: &Path) -> FlowResult<()> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {}", dir.display(), e))?;
    let json = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    let files = vec![
        ("report.md", markdown(r)),
        ("report.csv", synth::to_csv(&r.synth)),
        ("report.json", json),
        ("cosim.md", cosim_markdown(&r.cosim)),
    ];
    for (name, text) in files {
        let p = dir.join(name);
        crate::files::write(&p, text)?;
    }
    if !r.energy.is_empty() {
        super::energy::write(&r.energy, dir)?;
    }
    crate::report::write(&page(r, &markdown(r)), dir)?;
    super::write_tables(&r.tables, dir)
}
