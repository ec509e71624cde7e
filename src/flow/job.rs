//! `hwzip flow`: the main job. Generates every selected engine, co-simulates every unit
//! against its golden model, synthesizes every unit on every selected library, and writes
//! one report.
//!
//! Independent steps (one co-simulation per unit, one synthesis per unit and library, the
//! Base+XOR Table II cores) run on `jobs` worker threads, longest first. Verilator models
//! and synthesis results are cached (`crate::cache_dir`), so a re-run only redoes what
//! changed. Two profiles fix the defaults: `quick` (osu018, 10,000 lines per unit, `-O1`
//! Verilator builds) for minutes, `paper` (osu018 + Nangate45 + sky130hd, 10^6 lines, `-O2`)
//! for the figures docs/RESULTS.md quotes.

pub use super::outcome::{FlowReport, Profile};
use super::pool::{pool_after, DEP_FAILED, SKIPPED};
use super::progress::{Step, Ui};
pub use super::render::{markdown, page, write};
use super::step::{fail, finish};
pub use super::step::{StepStatus, StepTime};
use super::{
    cosim, gen, libraries, paper_tables, synth_unit, timing, CosimReport, CosimRequest, FlowResult,
};
use crate::config::Config;
use crate::engines::{self, cosim_units, known_cosim_units, EngineRef, PaperTable, UnitDesign};
use crate::synth::{self, Liberty, ReportRow};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

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
    /// With `synth`: synthesize only these units (`engine/unit`; a bare `engine` is every
    /// unit of it and its core table), co-simulate every selected one. Empty: every unit.
    pub synth_units: Vec<String>,
    /// Run only shard `k` of `n` (1-based) of the independent steps, for splitting one run
    /// over several machines; the steps are numbered in their deterministic order.
    pub shard: Option<(usize, usize)>,
    /// Stop starting new steps after the first failure (the steps not started are reported
    /// as skipped). Off by default: every step runs whatever another one does.
    pub fail_fast: bool,
}

impl FlowOptions {
    /// The engines the run covers: [`FlowOptions::engines`], or every engine when empty.
    pub fn selected_engines(&self) -> Vec<EngineRef> {
        if self.engines.is_empty() {
            engines::ALL.to_vec()
        } else {
            self.engines.clone()
        }
    }

    /// Whether [`FlowOptions::synth_units`] selects unit `unit` of `engine` (`None`: the
    /// engine's core table).
    pub fn synth_selects(&self, engine: &str, unit: Option<&str>) -> bool {
        self.synth_units.is_empty()
            || self
                .synth_units
                .iter()
                .any(|s| s == engine || unit.is_some_and(|u| *s == format!("{engine}/{u}")))
    }
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

enum Task {
    Cosim {
        engine: EngineRef,
        unit: String,
        /// The top instantiates other units of its engine (see [`model_opt`]).
        composite: bool,
    },
    Synth {
        design: Box<UnitDesign>,
        lib: Box<Liberty>,
        /// The engine's units (children a composite top reuses).
        siblings: std::sync::Arc<Vec<UnitDesign>>,
    },
    /// An engine's paper core table (Base+XOR Table II).
    Cores(EngineRef),
}

enum Done {
    Cosim(Box<CosimReport>),
    Synth(Box<ReportRow>),
    Cores(Box<PaperTable>),
}

impl Task {
    /// The step's kind and description, as in the report.
    fn describe(&self) -> (&'static str, String) {
        match self {
            Task::Cosim { engine, unit, .. } => ("cosim", format!("{} {}", engine.name(), unit)),
            Task::Synth { design, lib, .. } => (
                "synth",
                format!("{} {} {}", design.engine, design.unit, lib.label()),
            ),
            Task::Cores(engine) => ("cores", format!("{} paper cores", engine.name())),
        }
    }

    /// The progress label.
    fn label(&self) -> String {
        match self {
            Task::Cosim { engine, unit, .. } => format!("cosim {} {}", engine.name(), unit),
            Task::Synth { design, lib, .. } => {
                format!("synth {} {} on {}", design.engine, design.unit, lib.label())
            }
            Task::Cores(engine) => format!("synth {} paper cores", engine.name()),
        }
    }
}

/// What every step of one run shares.
struct TaskCtx<'a> {
    cfg: &'a Config,
    opts: &'a FlowOptions,
    libs: &'a [Liberty],
}

/// For each step, the steps it waits for: with `synth.hierarchy: reuse`, a unit's synthesis
/// waits for the synthesis of each child unit it instantiates on the same library, so that
/// it reuses their results instead of running them itself on its own worker.
fn dependencies(cfg: &Config, tasks: &[Task]) -> Vec<Vec<usize>> {
    tasks
        .iter()
        .map(|t| match t {
            Task::Synth { design, lib, .. }
                if cfg.synth.hierarchy != crate::config::Hierarchy::Flat =>
            {
                tasks
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| match c {
                        Task::Synth {
                            design: d, lib: l, ..
                        } => {
                            d.engine == design.engine
                                && l.label() == lib.label()
                                && d.top.name != design.top.name
                                && design
                                    .top
                                    .instances
                                    .iter()
                                    .any(|i| i.module.name == d.top.name)
                        }
                        _ => false,
                    })
                    .map(|(j, _)| j)
                    .collect()
            }
            _ => Vec::new(),
        })
        .collect()
}

/// Whether `top` instantiates the top of one of the engine's units (`designs`).
fn instantiates_a_unit(top: &crate::hdl::Module, designs: &[UnitDesign]) -> bool {
    top.instances
        .iter()
        .any(|i| designs.iter().any(|d| d.top.name == i.module.name))
}

/// The `-O` level for the Verilator model of a unit, when it is not the run's own: in the
/// `quick` profile, a unit that does not instantiate other units is built at `-O0`: its
/// 10,000 lines simulate in a second or less at any level, and `-O0` compiles in about half
/// the time of `-O1`. A composite top (Buddy's controller, the PACT'12 MC top, the adaptive
/// link units) keeps the run's level: its 10,000 requests are 3-6·10^5 cycles of a large
/// model, which run about 4 times slower at `-O0`. `$HWZIP_CXX_OPT` sets every model's
/// level.
fn model_opt(profile: Profile, composite: bool) -> Option<u8> {
    (profile == Profile::Quick && !composite && std::env::var_os("HWZIP_CXX_OPT").is_none())
        .then_some(0)
}

/// Runs `f` with the unit's model level ([`model_opt`]).
fn at_model_opt<T>(profile: Profile, composite: bool, f: impl FnOnce() -> T) -> T {
    match model_opt(profile, composite) {
        Some(l) => crate::cosim::with_opt_level(l, f),
        None => f(),
    }
}

fn verilog_bytes(m: &std::sync::Arc<crate::hdl::Module>) -> usize {
    crate::hdl::emit::emit_design(m)
        .map(|fs| fs.iter().map(|(_, t)| t.len()).sum())
        .unwrap_or(0)
}

/// Runs the main job. `cfg` already holds the profile's and the command line's settings.
///
/// A step that fails (a tool error, a budget that ran out, a model that does not build) does
/// not stop the others: it is recorded in [`FlowReport::steps`] with its error and log, and
/// the report's `ok` is false. Only an invalid request (an unknown unit, no usable library)
/// is an `Err`. With [`FlowOptions::fail_fast`] no new step starts after a failure.
pub fn run(cfg: &Config, opts: &FlowOptions, ui: &Ui) -> FlowResult<FlowReport> {
    let t0 = Instant::now();
    let mut notes = Vec::new();
    let libs = if opts.synth {
        libraries(&cfg.synth.libraries, &mut notes)?
    } else {
        Vec::new()
    };
    let engines = opts.selected_engines();
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
    // With the cache off, synthesis still shares results within this run (a composite top
    // reuses its children's netlists) through a cache of its own that starts empty.
    let mut run_cfg = cfg.clone();
    if !cfg.synth.cache {
        let dir = opts.out.join("synth").join("run-cache");
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(|e| format!("cannot clear {}: {}", dir.display(), e))?;
        }
        run_cfg.synth.run_cache = Some(dir);
    }

    let mut steps = Vec::new();
    let tasks = plan(cfg, opts, &engines, &libs, ui, &mut steps);
    ui.line(&format!(
        "flow ({} profile{}): {} steps on {} worker(s): co-simulation of {} lines per unit, \
         synthesis on {} ({} effort, CPU budget {} s per run)",
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
            .join(", "),
        cfg.synth.effort.name(),
        cfg.synth.budget_s
    ));
    let ctx = TaskCtx {
        cfg: &run_cfg,
        opts,
        libs: &libs,
    };
    let results = run_tasks(&ctx, &tasks, ui, &mut steps);

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
    let labels: Vec<String> = libs.iter().map(Liberty::label).collect();
    order_results(&engines, &labels, &mut cosims, &mut rows);

    let energy = netlist_steps(cfg, opts, &rows, &libs, ui, &mut steps);
    // Paper tables in engine order: the core tables run above, then those from the rows
    // (a table lists the rows it has; a failed unit's row is missing from it).
    let mut tables = Vec::new();
    for &engine in &engines {
        tables.extend(cores.iter().filter(|t| t.engine == engine.name()).cloned());
        let t = Instant::now();
        match paper_tables(engine, cfg, &rows, &libs, false, &opts.out, &mut |_| {}) {
            Ok(v) => tables.extend(v),
            Err(e) => steps.push(StepTime::failed(
                "tables",
                engine.name().into(),
                t.elapsed().as_secs_f64(),
                &e,
                &opts.out,
            )),
        }
    }
    let ok = cosims.iter().all(|c| c.stats.mismatches == 0)
        && !steps
            .iter()
            .any(|s| s.is_failure() || s.status == StepStatus::Skipped);
    Ok(FlowReport {
        profile: opts.profile,
        libraries: libs.iter().map(Liberty::label).collect(),
        lines: cfg.cosim.lines,
        jobs: opts.jobs,
        cxx_opt: crate::cosim::opt_level(),
        leaf_cxx_opt: model_opt(opts.profile, false),
        synth_method: format!(
            "{} effort, hierarchy {}",
            cfg.synth.effort.name(),
            cfg.synth.hierarchy.name()
        ),
        seconds: t0.elapsed().as_secs_f64(),
        ok,
        steps,
        cosim: cosims,
        synth: rows,
        tables,
        energy,
        fpga: Vec::new(),
        prove: None,
        notes,
    })
}

/// Puts co-simulation results and synthesis rows in the reports' fixed order (engine, unit,
/// library: the order of `engines`, of each engine's units and of `libs`' labels), whatever
/// order the steps ran in or the shards they came from.
pub fn order_results(
    engines: &[EngineRef],
    libs: &[String],
    cosims: &mut [CosimReport],
    rows: &mut [ReportRow],
) {
    let engine_pos = |name: &str| engines.iter().position(|e| e.name() == name);
    let unit_pos = |engine: &str, unit: &str| {
        engines
            .iter()
            .find(|e| e.name() == engine)
            .map(|e| known_cosim_units(*e).iter().position(|u| u == unit))
    };
    cosims.sort_by_key(|c| (engine_pos(&c.engine), unit_pos(&c.engine, &c.unit)));
    let lib_pos = |l: &str| libs.iter().position(|x| x == l);
    rows.sort_by_key(|r| {
        (
            engine_pos(&r.engine),
            unit_pos(&r.engine, &r.unit),
            lib_pos(&r.result.liberty),
        )
    });
}

/// Whether `--fail-fast` stops the run after `steps`.
fn stop_now(opts: &FlowOptions, steps: &[StepTime]) -> bool {
    opts.fail_fast && steps.iter().any(StepTime::is_failure)
}

/// Generates every engine (a `gen` step each, in order) and lists the independent steps,
/// longest first (then this run's shard of them).
fn plan(
    cfg: &Config,
    opts: &FlowOptions,
    engines: &[EngineRef],
    libs: &[Liberty],
    ui: &Ui,
    steps: &mut Vec<StepTime>,
) -> Vec<Task> {
    let wanted = |u: &str| opts.unit.as_deref().is_none_or(|w| w == u);
    let mut tasks: Vec<(usize, Task)> = Vec::new();
    for &engine in engines {
        let s = ui.step(&format!("gen {}", engine.name()));
        let listed = gen(engine, cfg, &opts.out.join("rtl")).and_then(|files| {
            let designs = engine.units(cfg)?;
            Ok((files, designs))
        });
        let (files, designs) = match listed {
            Ok(x) => x,
            Err(e) => {
                steps.push(fail(s, "gen", engine.name().into(), &e, &opts.out));
                continue;
            }
        };
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
        let cos_units = engines::configured(engine, &designs, cos_units);
        for u in cos_units.into_iter().filter(|u| wanted(u)) {
            // A top that does not build is scheduled anyway: its step reports the error.
            let top = engine.cosim_top(cfg, &u).ok();
            let w = top.as_ref().map(verilog_bytes).unwrap_or(0);
            let composite = top.is_some_and(|t| instantiates_a_unit(&t, &designs));
            tasks.push((
                w,
                Task::Cosim {
                    engine,
                    unit: u,
                    composite,
                },
            ));
        }
        let siblings = std::sync::Arc::new(designs.clone());
        for d in designs {
            if !wanted(d.unit) || !opts.synth || !opts.synth_selects(engine.name(), Some(d.unit)) {
                continue;
            }
            let w = 4 * verilog_bytes(&d.top);
            for lib in libs {
                tasks.push((
                    w,
                    Task::Synth {
                        design: Box::new(d.clone()),
                        lib: Box::new(lib.clone()),
                        siblings: siblings.clone(),
                    },
                ));
            }
        }
        if engine.has_core_table()
            && opts.unit.is_none()
            && opts.synth
            && opts.synth_selects(engine.name(), None)
            && !libs.is_empty()
        {
            tasks.push((200_000 * libs.len(), Task::Cores(engine)));
        }
    }
    // Longest first, so the last step to finish is a short one.
    tasks.sort_by_key(|t| std::cmp::Reverse(t.0));
    tasks
        .into_iter()
        .enumerate()
        .filter(|(i, _)| opts.shard.is_none_or(|(k, n)| i % n == k - 1))
        .map(|(_, (_, t))| t)
        .collect()
}

/// Runs the independent steps on the worker pool (a composite unit's synthesis after its
/// children's); every step, run or not, is added to `steps` in task order.
fn run_tasks(
    ctx: &TaskCtx,
    tasks: &[Task],
    ui: &Ui,
    steps: &mut Vec<StepTime>,
) -> Vec<FlowResult<Done>> {
    let opts = ctx.opts;
    let step_times: Mutex<Vec<(usize, StepTime)>> = Mutex::new(Vec::new());
    let gen_failed = stop_now(opts, steps);
    let deps = dependencies(ctx.cfg, tasks);
    let results = pool_after(tasks.len(), opts.jobs, opts.fail_fast, &deps, &|i| {
        if gen_failed {
            return Err(SKIPPED.into());
        }
        let task = &tasks[i];
        let s = ui.step(&task.label());
        let (r, st) = match run_task(ctx, task, &s) {
            Ok((done, detail)) => {
                let (kind, what) = match &done {
                    Done::Cores(t) => ("cores", format!("{} {}", t.engine, t.file)),
                    _ => task.describe(),
                };
                let mut st = finish(s, kind, what, detail);
                if let Done::Cosim(c) = &done {
                    if c.stats.mismatches > 0 {
                        st.status = StepStatus::Mismatch;
                        st.log = c.vcd.clone();
                    }
                }
                (Ok(done), st)
            }
            Err(e) => {
                let (kind, what) = task.describe();
                let st = fail(s, kind, what, &e, &opts.out);
                (Err(e), st)
            }
        };
        step_times
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((i, st));
        r
    });
    let mut timed = step_times.into_inner().unwrap_or_else(|e| e.into_inner());
    // Steps that did not run: skipped (`--fail-fast`), or failed with a step they need.
    for (i, r) in results.iter().enumerate() {
        let (kind, what) = tasks[i].describe();
        match r {
            Err(e) if e == SKIPPED => {
                let mut st = StepTime::ok(kind, what, 0.0, SKIPPED.into());
                st.status = StepStatus::Skipped;
                timed.push((i, st));
            }
            Err(e) if e == DEP_FAILED => {
                let failed: Vec<String> = deps[i]
                    .iter()
                    .filter(|&&j| results[j].is_err())
                    .map(|&j| tasks[j].describe().1)
                    .collect();
                let msg = format!("{} ({})", DEP_FAILED, failed.join(", "));
                timed.push((i, StepTime::failed(kind, what, 0.0, &msg, &opts.out)));
            }
            _ => {}
        }
    }
    timed.sort_by_key(|(i, _)| *i);
    steps.extend(timed.into_iter().map(|(_, s)| s));
    results
}

/// The optional steps on the synthesized netlists, in order: gate-level co-simulation
/// (`--gate-cosim`) and energy per line (`--energy`). Returns the energy rows.
fn netlist_steps(
    cfg: &Config,
    opts: &FlowOptions,
    rows: &[ReportRow],
    libs: &[Liberty],
    ui: &Ui,
    steps: &mut Vec<StepTime>,
) -> Vec<super::energy::EnergyRow> {
    let lib_of = |r: &ReportRow| libs.iter().find(|l| l.label() == r.result.liberty);
    if opts.gate_cosim > 0 {
        for r in rows {
            let Some(lib) = lib_of(r) else { continue };
            if stop_now(opts, steps) {
                break;
            }
            steps.push(gate_step(cfg, r, lib, opts.gate_cosim, &opts.out, ui));
        }
    }
    let mut energy = Vec::new();
    if opts.energy > 0 {
        for r in rows {
            let Some(lib) = lib_of(r) else { continue };
            if stop_now(opts, steps) {
                break;
            }
            let what = format!("{} {} {}", r.engine, r.unit, r.result.liberty);
            let t = Instant::now();
            match energy_step(cfg, r, lib, opts.energy, &opts.out, ui) {
                Ok((e, st)) => {
                    energy.push(e);
                    steps.push(st);
                }
                Err(e) => steps.push(StepTime::failed(
                    "energy",
                    what,
                    t.elapsed().as_secs_f64(),
                    &e,
                    &opts.out,
                )),
            }
        }
    }
    energy
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

/// Gate-level co-simulation of one synthesized row ([`super::gate_cosim`]) as a timed step
/// (status `mismatch` when it does not match the model, `failed` when it could not run).
pub fn gate_step(
    cfg: &Config,
    row: &ReportRow,
    lib: &Liberty,
    lines: u64,
    out: &Path,
    ui: &Ui,
) -> StepTime {
    let what = format!("{} {} {}", row.engine, row.unit, row.result.liberty);
    let s = ui.step(&format!("gate {}", what));
    s.set(format!("{} lines", lines));
    let st = engines::by_name(&row.engine)
        .and_then(|engine| super::gate_cosim(engine, cfg, row, lib, lines));
    match st {
        Ok(st) => {
            let detail = match &st.first_mismatch {
                Some(m) => format!("MISMATCH: {}", m),
                None => format!("{} lines, {} cycles, 0 mismatches", st.lines, st.cycles),
            };
            let mut t = finish(s, "gate", what, detail);
            if st.mismatches > 0 {
                t.status = StepStatus::Mismatch;
            }
            t
        }
        Err(e) => fail(s, "gate", what, &e, out),
    }
}

/// Runs one step under its progress line `s`; returns its result and a one-line summary.
fn run_task(ctx: &TaskCtx, task: &Task, s: &Step) -> FlowResult<(Done, String)> {
    let (cfg, opts) = (ctx.cfg, ctx.opts);
    match task {
        Task::Cosim {
            engine,
            unit,
            composite,
        } => {
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
            let r = at_model_opt(opts.profile, *composite, || {
                cosim(&req, cfg, &mut |st| {
                    s.set(format!(
                        "{} of {} lines, {} cycles, {:.2} Mcycles/s",
                        st.lines,
                        total,
                        st.cycles,
                        st.cycles_per_second() / 1e6
                    ))
                })
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
            Ok((Done::Cosim(Box::new(r)), detail))
        }
        Task::Synth {
            design,
            lib,
            siblings,
        } => {
            let label = lib.label();
            s.set("latency and throughput in Verilator");
            let composite = instantiates_a_unit(&design.top, siblings);
            let engine = engines::by_name(design.engine)?;
            let t = at_model_opt(opts.profile, composite, || timing(engine, cfg, design.unit))?;
            let budget = cfg.synth.budget_s;
            let clock = cfg.synth.clock_for(&label);
            s.set(format!("yosys + abc, then sta at {} ns", clock));
            let progress = s.reporter();
            let show = synth::ToolProgress(std::sync::Arc::new(move |tool, cpu, _wall| {
                progress.set(format!(
                    "{} at {} ns: {:.0} s of CPU of the {} s budget",
                    tool, clock, cpu, budget
                ))
            }));
            let (row, cached) = synth_unit(
                cfg,
                design,
                lib,
                &opts.out.join("synth"),
                &t,
                siblings,
                Some(show),
            )?;
            let r = &row.result;
            let detail = format!(
                "{:.2} kGE, {:.3} ns ({:.0} MHz){}{}",
                r.kge,
                r.critical_path_ns,
                r.fmax_mhz,
                if r.children.is_empty() {
                    String::new()
                } else {
                    format!(", {} child modules reused", r.children.len())
                },
                if cached { ", cached" } else { "" }
            );
            Ok((Done::Synth(Box::new(row)), detail))
        }
        Task::Cores(engine) => {
            let t = engine.core_table(cfg, ctx.libs, &opts.out, &mut |m| s.set(m.to_string()))?;
            let detail = format!("{} libraries", ctx.libs.len());
            Ok((Done::Cores(Box::new(t)), detail))
        }
    }
}
