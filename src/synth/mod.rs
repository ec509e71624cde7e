//! Synthesis driver: Yosys 0.23 + ABC for area, OpenSTA for timing, and report renderers.
//!
//! The flow follows `/work/shared/notes/toolchain.md` (ABC script with buffering and sizing,
//! `splitnets -ports` and `write_verilog -noattr -noexpr` for the 2019 OpenSTA). The Yosys script
//! and the STA Tcl script are templates under `synth/` embedded with `include_str!`.
//!
//! ```no_run
//! use hwzip::synth::{synthesize, Liberty, SynthJob};
//! let mut job = SynthJob::new("reg_adder8", vec!["synth/fixtures/reg_adder8.v".into()],
//!                             Liberty::osu018()?, "build/synth/reg_adder8");
//! job.clock_port = Some("clk_i".into());
//! let r = synthesize(&job)?;
//! println!("{:.0} um2, {:.3} ns", r.area_um2, r.critical_path_ns);
//! # Ok::<(), hwzip::synth::SynthError>(())
//! ```

pub mod blif;
pub mod buffer;
pub mod cache;
pub mod cores;
pub mod fpga;
pub mod gatesim;
pub mod liberty;
pub mod memories;
pub mod paper;
pub mod report;
pub mod run;
pub mod sta;
mod yosys;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use liberty::Liberty;
pub use report::{to_csv, to_json, to_markdown, ReportRow};

/// Errors of the synthesis flow. Every tool-related error names the log file in `work_dir`.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// A tool binary is not installed / not on `PATH`.
    #[error("{tool} not found (tried `{program}`): run scripts/setup.sh (or set HWZIP_{}=/path/to/{tool})", .tool.to_ascii_uppercase())]
    ToolNotFound {
        /// Tool name (`yosys` or `sta`).
        tool: &'static str,
        /// Program that was spawned.
        program: String,
    },
    /// A tool exited with an error (or, for `sta`, reported `Error:`).
    #[error("{tool} failed (exit code {}); log: {}\n--- last lines ---\n{tail}", .code.map_or("none/error message".to_string(), |c| c.to_string()), .log.display())]
    ToolFailed {
        /// Tool name.
        tool: &'static str,
        /// Exit code, if the process exited normally with one.
        code: Option<i32>,
        /// Full log.
        log: PathBuf,
        /// Last lines of the log.
        tail: String,
    },
    /// The job's time budget ran out; the tool's process group was killed ([`run`]).
    #[error("{tool} {} and was killed; partial log: {}", budget_text(*.limit, *.budget_s, *.cpu_s, *.wall_s), .log.display())]
    Budget {
        /// Tool that was running when the budget ran out.
        tool: &'static str,
        /// Which limit ran out: the CPU time or the wall-clock backstop.
        limit: run::Limit,
        /// The CPU budget, seconds (the backstop is [`run::WALL_FACTOR`] times it).
        budget_s: f64,
        /// CPU seconds the job's tools had used.
        cpu_s: f64,
        /// Wall seconds since the job started.
        wall_s: f64,
        /// Partial log.
        log: PathBuf,
    },
    /// A tool's output did not contain what was expected.
    #[error("could not parse tool output: expected {what}; found: {found}; see {}", .log.display())]
    Parse {
        /// What was expected.
        what: String,
        /// What was found instead (short excerpt).
        found: String,
        /// File that was parsed.
        log: PathBuf,
    },
    /// The design infers latches (not allowed in hwzip RTL).
    #[error("{count} latch cell(s) inferred in {top} (signals: {}); see {}", .signals.join(", "), .log.display())]
    Latch {
        /// Top module.
        top: String,
        /// Number of latch cells in the mapped netlist.
        count: u64,
        /// Signals named by Yosys' `proc_dlatch`.
        signals: Vec<String>,
        /// Yosys log.
        log: PathBuf,
    },
    /// Cells that the liberty could not map (no area known), e.g. an unsupported flop type.
    #[error("cells not mapped to the liberty (no area): {}; see {}", .cells.join(", "), .log.display())]
    Unmapped {
        /// Cell types without area.
        cells: Vec<String>,
        /// Yosys log.
        log: PathBuf,
    },
    /// The liberty path is a folder, a device, a FIFO: a liberty must be a regular file.
    #[error("liberty {} is {what}: give a .lib or .lib.gz file", .path.display())]
    LibertyNotAFile {
        /// The path given.
        path: PathBuf,
        /// What it is instead.
        what: String,
    },
    /// The liberty file does not exist.
    #[error("liberty file {} not found: {hint}", .path.display())]
    LibertyNotFound {
        /// Path that was tried.
        path: PathBuf,
        /// What to do about it.
        hint: String,
    },
    /// The liberty file could not be read as liberty.
    #[error("liberty file {} is unusable: expected {what}", .path.display())]
    LibertyParse {
        /// Liberty file.
        path: PathBuf,
        /// What was expected.
        what: String,
    },
    /// The job itself is invalid (no sources, non-positive clock, missing file, ...).
    #[error("invalid synthesis job: {0}")]
    InvalidJob(String),
    /// File-system error.
    #[error("I/O error on {}: {source}", .path.display())]
    Io {
        /// Path involved.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
}

pub(crate) fn budget_text(limit: run::Limit, budget_s: f64, cpu_s: f64, wall_s: f64) -> String {
    match limit {
        run::Limit::Cpu => format!(
            "exceeded the CPU-time budget of {budget_s:.1} s (synth.budget_s; {cpu_s:.1} s of \
             CPU in {wall_s:.1} s of wall time)"
        ),
        run::Limit::Wall => format!(
            "exceeded the wall-clock backstop of {:.1} s ({} x the CPU-time budget of \
             {budget_s:.1} s) after only {cpu_s:.1} s of CPU",
            budget_s * f64::from(run::WALL_FACTOR),
            run::WALL_FACTOR
        ),
    }
}

impl SynthError {
    /// The log file the error points to, if any.
    pub fn log(&self) -> Option<&Path> {
        match self {
            SynthError::ToolFailed { log, .. }
            | SynthError::Budget { log, .. }
            | SynthError::Parse { log, .. }
            | SynthError::Latch { log, .. }
            | SynthError::Unmapped { log, .. } => Some(log),
            _ => None,
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        SynthError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// One synthesis + timing run.
#[derive(Debug, Clone)]
pub struct SynthJob {
    /// Top module name.
    pub top: String,
    /// Verilog sources (all are read).
    pub verilog: Vec<PathBuf>,
    /// Target library.
    pub liberty: Liberty,
    /// Clock period in ns (also the ABC delay target).
    pub clock_ns: f64,
    /// Clock port (`Some("clk_i")` for registered designs); `None` for purely combinational
    /// designs: a virtual clock is used and the worst input→output path is reported.
    pub clock_port: Option<String>,
    /// CPU-time budget for the whole job (Yosys, ABC and STA together; a wall-clock backstop
    /// of [`run::WALL_FACTOR`] times it catches a tool that hangs without computing).
    pub budget: Duration,
    /// Directory for scripts, logs and the netlist (created if missing). With `use_cache`
    /// the cache entry's directory is used instead.
    pub work_dir: PathBuf,
    /// Look the result up in (and store it into) the synthesis cache ([`cache`]).
    pub use_cache: bool,
    /// Child modules taken as already synthesized (hierarchical synthesis): their Verilog
    /// files are read as black boxes, the parent's own logic is mapped alone, and OpenSTA
    /// reads the parent's netlist with the children's (paths across the boundaries
    /// included), so that area and timing cover parent and children.
    pub reuse: Vec<ReusedChild>,
    /// Told, while a tool runs, its name and the job's CPU and wall seconds so far.
    pub progress: Option<ToolProgress>,
    /// How hard Yosys and ABC work ([`crate::config::Effort`]).
    pub effort: crate::config::Effort,
    /// ABC's `buffer -N`: most loads per driver when it buffers a net
    /// ([`crate::config::SynthConfig::buffer_fanout`]).
    pub buffer_fanout: u32,
    /// Memory macros a RAM child may be built of ([`memories`]).
    pub macros: Vec<memories::MacroSpec>,
}

/// A child module that a hierarchical [`SynthJob`] takes from its own run.
#[derive(Debug, Clone)]
pub struct ReusedChild {
    /// Module name; the job's source `<module>.v` is read only for its interface.
    pub module: String,
    /// The child's own result; its netlist goes into the parent's timing.
    pub result: SynthResult,
}

/// The function behind [`ToolProgress`]: `(tool, cpu_seconds, wall_seconds)`.
pub type ProgressFn = dyn Fn(&str, f64, f64) + Send + Sync;

/// A progress callback for long tool runs: `(tool, cpu_seconds, wall_seconds)`.
#[derive(Clone)]
pub struct ToolProgress(pub std::sync::Arc<ProgressFn>);

impl std::fmt::Debug for ToolProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolProgress")
    }
}

/// One reused child in a hierarchical result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChildArea {
    /// Module name.
    pub module: String,
    /// Instances of it in the parent.
    pub instances: u64,
    /// Area of one instance from its own run (fan-out buffers included), µm².
    pub area_um2: f64,
    /// Buffers the parent adds to each instance's high-fan-out input ports
    /// ([`buffer::Roots::input_ports`]); their area is in the parent's.
    #[serde(default)]
    pub port_buffers: u64,
}

impl SynthJob {
    /// A job with a 5 ns clock, no clock port (combinational) and a 10-minute budget.
    pub fn new(
        top: impl Into<String>,
        verilog: Vec<PathBuf>,
        liberty: Liberty,
        work_dir: impl Into<PathBuf>,
    ) -> Self {
        SynthJob {
            top: top.into(),
            verilog,
            liberty,
            clock_ns: 5.0,
            clock_port: None,
            budget: Duration::from_secs(600),
            work_dir: work_dir.into(),
            use_cache: false,
            reuse: Vec::new(),
            progress: None,
            effort: crate::config::Effort::Full,
            buffer_fanout: crate::config::DEFAULT_BUFFER_FANOUT,
            macros: Vec::new(),
        }
    }
}

/// Area and timing of one synthesized design.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SynthResult {
    /// Top module name.
    pub top: String,
    /// Liberty library name.
    pub liberty: String,
    /// Clock period used (ns).
    pub clock_ns: f64,
    /// Total mapped cells.
    pub cells: u64,
    /// Sequential cells (flip-flops).
    pub seq_cells: u64,
    /// Combinational cells (`cells - seq_cells`).
    pub comb_cells: u64,
    /// Cell count per cell type.
    pub cell_types: BTreeMap<String, u64>,
    /// Chip area from `stat -liberty` plus the fan-out buffers ([`buffer`]), µm².
    pub area_um2: f64,
    /// Area in thousands of NAND2 gate equivalents of the library's NAND2 reference cell.
    pub kge: f64,
    /// Synthesis effort (`full` or `fast`, [`crate::config::Effort`]).
    #[serde(default)]
    pub effort: String,
    /// Critical path in ns: `clock_ns - worst slack` (registered), or the worst input→output
    /// arrival (combinational, virtual clock).
    pub critical_path_ns: f64,
    /// `1000 / critical_path_ns` (infinite if the critical path is zero).
    pub fmax_mhz: f64,
    /// Worst negative slack, ns (0 when timing is met).
    pub wns_ns: f64,
    /// Total negative slack, ns.
    pub tns_ns: f64,
    /// Start point of the worst path.
    pub path_from: String,
    /// End point of the worst path.
    pub path_to: String,
    /// Logic levels (cells) on the worst path.
    #[serde(default)]
    pub path_levels: u32,
    /// Buffers inserted on high-fan-out flop outputs ([`buffer`]; counted in `cells`).
    #[serde(default)]
    pub fanout_buffers: u64,
    /// Largest fan-out of a flop output in Yosys's netlist (before the buffers).
    #[serde(default)]
    pub max_flop_fanout: u64,
    /// Yosys wall time, s.
    pub yosys_seconds: f64,
    /// OpenSTA wall time, s.
    pub sta_seconds: f64,
    /// Mapped gate-level netlist (`work_dir/netlist.v`).
    pub netlist: PathBuf,
    /// Hierarchical runs ([`SynthJob::reuse`]): area of the parent's own logic, µm² (the
    /// rest of `area_um2` is its children's and the fan-out buffers').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_area_um2: Option<f64>,
    /// Hierarchical runs: the reused children.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildArea>,
    /// Hierarchical runs: the netlists OpenSTA reads with `netlist`, one per module below
    /// this one (the children's, with their input ports buffered; theirs first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub child_netlists: Vec<PathBuf>,
    /// The unit's RAMs ([`memories`]): each as flip-flops (in `area_um2` and the timing
    /// above) and as named macros.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memories: Vec<memories::MemoryFigures>,
    /// The logic's worst path with the RAMs as ideal cells and, when macros fit every RAM,
    /// as those macros.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_paths: Vec<memories::ModelPath>,
}

impl SynthResult {
    /// Whether every netlist file of the result is still there.
    pub fn files_exist(&self) -> bool {
        self.netlist.is_file() && self.child_netlists.iter().all(|n| n.is_file())
    }
}

/// The script templates a synthesis run is made from (part of the cache key).
pub(crate) fn templates() -> [&'static str; 7] {
    [
        yosys::FLOW_TEMPLATE,
        yosys::SYNTH_FAST,
        yosys::TAIL_FLAT,
        yosys::TAIL_REUSE,
        yosys::ABC_TEMPLATE,
        yosys::ABC_FAST_TEMPLATE,
        sta::STA_TEMPLATE,
    ]
}

pub(crate) fn validate(job: &SynthJob) -> Result<(), SynthError> {
    let bad = |m: String| Err(SynthError::InvalidJob(m));
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    };
    if !ident(&job.top) {
        return bad(format!(
            "top `{}` is not a plain Verilog identifier",
            job.top
        ));
    }
    if let Some(p) = &job.clock_port {
        if !ident(p) {
            return bad(format!(
                "clock port `{p}` is not a plain Verilog identifier"
            ));
        }
    }
    if !(job.clock_ns.is_finite() && job.clock_ns > 0.0) {
        return bad(format!("clock_ns must be > 0, got {}", job.clock_ns));
    }
    if job.verilog.is_empty() {
        return bad("no Verilog sources".into());
    }
    if let Some(v) = job.verilog.iter().find(|v| !v.is_file()) {
        return bad(format!("Verilog source {} does not exist", v.display()));
    }
    for c in &job.reuse {
        if !ident(&c.module) || c.module == job.top {
            return bad(format!(
                "reused child `{}` is not a child module name",
                c.module
            ));
        }
        if !job
            .verilog
            .iter()
            .any(|v| yosys::module_of(v) == Some(c.module.as_str()))
        {
            return bad(format!(
                "reused child `{}` has no source {}.v",
                c.module, c.module
            ));
        }
        if !c.result.files_exist() {
            return bad(format!(
                "reused child `{}`: its netlists ({}) are missing",
                c.module,
                c.result.netlist.display()
            ));
        }
    }
    Ok(())
}

/// Synthesizes `job` with Yosys, times the netlist with OpenSTA and returns area and timing.
///
/// Scripts, logs (`yosys.log`, `sta.log`), `stat.txt` and `netlist.v` are kept in
/// `job.work_dir`. Fails with [`SynthError::Budget`] if the budget runs out and with
/// [`SynthError::Latch`] if the design infers latches.
///
/// With `job.use_cache`, an unchanged job returns the cached result ([`cache`]).
pub fn synthesize(job: &SynthJob) -> Result<SynthResult, SynthError> {
    validate(job)?;
    if job.use_cache {
        return cache::synthesize_cached(job).map(|(r, _)| r);
    }
    run_job(job)
}

/// One uncached synthesis + timing run of a validated job.
pub(crate) fn run_job(job: &SynthJob) -> Result<SynthResult, SynthError> {
    let mut budget = run::Budget::new(job.budget);
    if let Some(p) = &job.progress {
        budget = budget.with_progress(p.clone());
    }
    std::fs::create_dir_all(&job.work_dir).map_err(|e| SynthError::io(&job.work_dir, e))?;
    let lib = &job.liberty;
    let ylog = job.work_dir.join("yosys.log");

    let y = yosys::run(job, &mut budget)?;
    let latches = y.stat.count_latches(lib);
    if latches > 0 || !y.latch_signals.is_empty() {
        return Err(SynthError::Latch {
            top: job.top.clone(),
            count: latches,
            signals: y.latch_signals,
            log: ylog,
        });
    }
    if !y.stat.unknown_area.is_empty() {
        return Err(SynthError::Unmapped {
            cells: y.stat.unknown_area,
            log: ylog,
        });
    }
    // `stat` prints no chip area for a module without cells of the library: none at all, or
    // only reused children (a parent that is just an instance family).
    let only_children = y
        .stat
        .cell_types
        .keys()
        .all(|t| job.reuse.iter().any(|c| &c.module == t));
    let area = y.stat.area_um2.or(only_children.then_some(0.0));
    let area_um2 = area.ok_or_else(|| SynthError::Parse {
        what: "`Chip area for module` in the stat output".into(),
        found: "no chip area line".into(),
        log: job.work_dir.join("stat.txt"),
    })?;

    yosys::write_netlist(job)?;
    // Flop outputs (and, in a parent, child instances' outputs) get fan-out buffer trees
    // before timing (see `buffer`); Yosys's netlist is kept as `netlist_yosys.v`.
    let nl = job.work_dir.join("netlist.v");
    let text = std::fs::read_to_string(&nl).map_err(|e| SynthError::io(&nl, e))?;
    let mut roots = buffer::Roots::default();
    let mut child_texts = Vec::new();
    for c in &job.reuse {
        let t = std::fs::read_to_string(&c.result.netlist)
            .map_err(|e| SynthError::io(&c.result.netlist, e))?;
        let (_, outs) = buffer::ports(&t);
        roots
            .module_outputs
            .insert(c.module.clone(), outs.into_iter().collect());
        roots
            .module_inputs
            .insert(c.module.clone(), buffer::port_loads(&t, lib));
        child_texts.push(t);
    }
    let b = buffer::buffer_nets(&text, lib, &roots);
    if b.buffers > 0 {
        let orig = job.work_dir.join("netlist_yosys.v");
        std::fs::write(&orig, &text).map_err(|e| SynthError::io(&orig, e))?;
        std::fs::write(&nl, &b.netlist).map_err(|e| SynthError::io(&nl, e))?;
    }
    let buf_um2 = lib.buffer.as_ref().map_or(0.0, |c| c.area_um2);
    let mut area_um2 = area_um2 + buf_um2 * b.buffers as f64;
    let mut cell_types = y.stat.cell_types.clone();
    if let Some(c) = lib.buffer.as_ref().filter(|_| b.buffers > 0) {
        *cell_types.entry(c.name.clone()).or_insert(0) += b.buffers;
    }
    let mut cells = y.stat.cells + b.buffers;
    let mut seq_cells = y.stat.count_flops(lib);

    // Hierarchical: the parent's own figures so far. Each reused child adds the cells, flops
    // and area of its own run once per instance (its instances are cells of the parent),
    // plus the buffers its high-fan-out input ports get here: standing alone its inputs had
    // ideal drivers, in the parent they are driven by the parent's cells. OpenSTA reads that
    // copy of its netlist (`child_<module>.v`).
    let own_area = area_um2;
    let mut children = Vec::new();
    let mut child_netlists: Vec<PathBuf> = Vec::new();
    let port_roots = buffer::Roots {
        input_ports: true,
        ..buffer::Roots::default()
    };
    for (c, t) in job.reuse.iter().zip(&child_texts) {
        let pb = buffer::buffer_nets(t, lib, &port_roots);
        let copy = job.work_dir.join(format!("child_{}.v", c.module));
        std::fs::write(&copy, &pb.netlist).map_err(|e| SynthError::io(&copy, e))?;
        let n = cell_types.remove(&c.module).unwrap_or(0);
        cells = cells.saturating_sub(n) + n * (c.result.cells + pb.buffers);
        seq_cells += n * c.result.seq_cells;
        area_um2 += n as f64 * (c.result.area_um2 + buf_um2 * pb.buffers as f64);
        for (ty, k) in &c.result.cell_types {
            *cell_types.entry(ty.clone()).or_insert(0) += n * k;
        }
        if let Some(bc) = lib.buffer.as_ref().filter(|_| pb.buffers > 0) {
            *cell_types.entry(bc.name.clone()).or_insert(0) += n * pb.buffers;
        }
        children.push(ChildArea {
            module: c.module.clone(),
            instances: n,
            area_um2: c.result.area_um2,
            port_buffers: pb.buffers,
        });
        for p in &c.result.child_netlists {
            if !child_netlists.contains(p) {
                child_netlists.push(p.clone());
            }
        }
        child_netlists.push(copy);
    }

    let s = sta::run(job, &mut budget, &child_netlists, "sta")?;
    let slog = job.work_dir.join("sta.log");
    let worst = s.worst().ok_or_else(|| SynthError::Parse {
        what: "at least one timing path in report_checks".into(),
        found: run::log_tail(&slog, 5),
        log: slog.clone(),
    })?;
    let tu = lib.time_unit_ns;
    let critical_path_ns = path_ns(job, worst);
    let fmax_mhz = if critical_path_ns > 0.0 {
        1000.0 / critical_path_ns
    } else {
        f64::INFINITY
    };
    let mut names = EndpointNames::new(job, &b.netlist);
    let mem = memories::step(job, &mut budget, &children, &child_netlists)?;
    let model_paths = mem
        .paths
        .iter()
        .map(|(kind, p)| memories::ModelPath {
            rams: kind.to_string(),
            path_ns: path_ns(job, p),
            from: names.name(&p.from),
            to: names.name(&p.to),
        })
        .collect();
    Ok(SynthResult {
        top: job.top.clone(),
        liberty: lib.name.clone(),
        clock_ns: job.clock_ns,
        cells,
        seq_cells,
        comb_cells: cells.saturating_sub(seq_cells),
        cell_types,
        area_um2,
        kge: area_um2 / lib.nand2_area_um2 / 1000.0,
        effort: job.effort.name().to_string(),
        critical_path_ns,
        fmax_mhz,
        wns_ns: (worst.slack * tu).min(0.0),
        tns_ns: s.tns.unwrap_or(0.0) * tu,
        path_from: names.name(&worst.from),
        path_to: names.name(&worst.to),
        path_levels: worst.levels,
        fanout_buffers: b.buffers,
        max_flop_fanout: b.max_flop_fanout as u64,
        yosys_seconds: y.seconds,
        sta_seconds: s.seconds,
        netlist: job.work_dir.join("netlist.v"),
        own_area_um2: (!job.reuse.is_empty()).then_some(own_area),
        children,
        child_netlists,
        memories: mem.figures,
        model_paths,
    })
}

/// A timing path's length in ns: the clock period less its slack (registered), or its
/// arrival (combinational, virtual clock).
fn path_ns(job: &SynthJob, p: &sta::TimingPath) -> f64 {
    let tu = job.liberty.time_unit_ns;
    match job.clock_port {
        Some(_) => job.clock_ns - p.slack * tu,
        None => p.arrival * tu,
    }
}

/// Names timing-path endpoints of a job's netlist ([`register_name`]), following an
/// endpoint inside a reused child (`u_child/_123_`) into the child's own netlist.
struct EndpointNames<'a> {
    job: &'a SynthJob,
    netlist: &'a str,
    loaded: BTreeMap<String, String>,
}

impl<'a> EndpointNames<'a> {
    fn new(job: &'a SynthJob, netlist: &'a str) -> Self {
        EndpointNames {
            job,
            netlist,
            loaded: BTreeMap::new(),
        }
    }

    fn name(&mut self, point: &str) -> String {
        let Some((inst, rest)) = point.split_once('/') else {
            return register_name(self.netlist, point);
        };
        let module = self.netlist.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            match (w.next(), w.next(), w.next(), w.next()) {
                (Some(m), Some(i), Some("("), None) if i == inst && l.starts_with("  ") => {
                    Some(m.to_string())
                }
                _ => None,
            }
        });
        let child = module.and_then(|m| self.job.reuse.iter().find(|c| c.module == m));
        let Some(c) = child else {
            return point.replace('/', ".");
        };
        let text = self
            .loaded
            .entry(c.module.clone())
            .or_insert_with(|| std::fs::read_to_string(&c.result.netlist).unwrap_or_default());
        format!("{}.{}", inst, register_name(text, rest).replace('/', "."))
    }
}

/// Names a timing-path endpoint for humans: a mapped flip-flop instance (`_22931_`) is shown
/// as the RTL register bit its `Q` pin drives (`fifo_count_q[0]`); ports and anything not
/// found are returned unchanged.
fn register_name(netlist: &str, point: &str) -> String {
    let is_anon = |n: &str| n.starts_with('_') && n.ends_with('_') && n.len() > 2;
    // A flattened child's cell is `u_child._123_` (an escaped identifier in the netlist).
    let leaf = |n: &str| n.rsplit('.').next().unwrap_or(n).to_string();
    let mut name = point.to_string();
    if is_anon(&leaf(point)) {
        let keys = [
            format!(" {} (", point),
            format!(" \\{}  (", point),
            format!(" \\{} (", point),
        ];
        if let Some(at) = keys.iter().find_map(|k| netlist.find(k.as_str())) {
            let end = netlist[at..]
                .find(");")
                .map(|e| at + e)
                .unwrap_or(netlist.len());
            let body = &netlist[at..end];
            if let Some(net) = body
                .find(".Q(")
                .map(|i| &body[i + 3..])
                .and_then(|r| r.find(')').map(|e| r[..e].trim()))
            {
                let net = net.trim_start_matches('\\');
                if !is_anon(&leaf(net)) {
                    name = net.to_string();
                }
            }
        }
    }
    if is_anon(&leaf(&name)) {
        return name;
    }
    // Flattened hierarchy names are escaped identifiers (`\u_compact.route_i_31_`).
    let name = name.trim_start_matches('\\').to_string();
    // splitnets wrote bit b of `sig` as `sig_b_`.
    let t = name.strip_suffix('_').unwrap_or(&name);
    match t.rfind('_') {
        Some(i)
            if i > 0
                && i + 1 < t.len()
                && t[i + 1..].chars().all(|c| c.is_ascii_digit())
                && name.ends_with('_') =>
        {
            format!("{}[{}]", &t[..i], &t[i + 1..])
        }
        _ => name,
    }
}

#[cfg(test)]
mod register_name_tests {
    #[test]
    fn flops_are_named_by_their_q_net() {
        let n = "  DFF_X1 _22931_ (\n    .CK(clk_i),\n    .D(_01546_),\n    .Q(fifo_count_q_0_),\n    .QN(_10297_)\n  );\n  DFF_X1 _5_ (\n    .D(a),\n    .Q(_77_)\n  );\n";
        assert_eq!(super::register_name(n, "_22931_"), "fifo_count_q[0]");
        assert_eq!(super::register_name(n, "_5_"), "_5_");
        assert_eq!(super::register_name(n, "s_data_i_35_"), "s_data_i[35]");
        assert_eq!(super::register_name(n, "m_valid_o"), "m_valid_o");
        assert_eq!(
            super::register_name(n, "\\u_c.route_i_31_"),
            "u_c.route_i[31]"
        );
        assert_eq!(super::register_name(n, "_999_"), "_999_");
        // A cell of a child netlist flattened into its parent (hierarchical synthesis).
        let h = "  DFFPOSX1 \\u_comp._31994_  (\n    .CLK(clk_i),\n    .D(\\u_comp._77_ ),\n    .Q(\\u_comp.dict0_q_2_ )\n  );\n  DFFPOSX1 \\u_comp._5_  (\n    .Q(\\u_comp._6_ )\n  );\n";
        assert_eq!(
            super::register_name(h, "u_comp._31994_"),
            "u_comp.dict0_q[2]"
        );
        assert_eq!(super::register_name(h, "u_comp._5_"), "u_comp._5_");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("synth/fixtures")
            .join(name)
    }

    fn tools_present() -> bool {
        run::tools_present()
    }

    fn adder_job(lib: Liberty, dir: &Path) -> SynthJob {
        let mut job = SynthJob::new("reg_adder8", vec![fixture("reg_adder8.v")], lib, dir);
        job.clock_port = Some("clk_i".into());
        job.budget = Duration::from_secs(120);
        job
    }

    #[test]
    fn cache_reuses_unchanged_runs_and_redoes_changed_ones() {
        if !tools_present() {
            return;
        }
        let lib = Liberty::osu018().unwrap();
        let root = tempfile::tempdir().unwrap();
        let job = adder_job(lib, &root.path().join("unused"));
        let (a, hit) = cache::synthesize_in(&job, root.path()).unwrap();
        assert!(!hit);
        let (b, hit) = cache::synthesize_in(&job, root.path()).unwrap();
        assert!(hit, "the same job is served from the cache");
        assert_eq!(a, b);
        assert!(b.netlist.is_file());
        let mut slower = job.clone();
        slower.clock_ns = 7.0;
        let (c, hit) = cache::synthesize_in(&slower, root.path()).unwrap();
        assert!(!hit, "a changed clock is a new run");
        assert_eq!(c.clock_ns, 7.0);
        // An entry without its result (an interrupted run) is redone.
        std::fs::remove_file(a.netlist.with_file_name("result.json")).unwrap();
        let (_, hit) = cache::synthesize_in(&job, root.path()).unwrap();
        assert!(!hit);
    }

    fn xor_job(lib: Liberty, dir: &Path) -> SynthJob {
        let mut job = SynthJob::new("xor_tree32", vec![fixture("xor_tree32.v")], lib, dir);
        job.budget = Duration::from_secs(120);
        job
    }

    fn show(r: &SynthResult) {
        eprintln!(
            "{} on {}: {} cells ({} seq), {:.1} um2, {:.3} kGE, {:.3} ns, {:.0} MHz, wns {:.3}, \
             {} -> {}, yosys {:.2} s, sta {:.2} s\n    {:?}",
            r.top,
            r.liberty,
            r.cells,
            r.seq_cells,
            r.area_um2,
            r.kge,
            r.critical_path_ns,
            r.fmax_mhz,
            r.wns_ns,
            r.path_from,
            r.path_to,
            r.yosys_seconds,
            r.sta_seconds,
            r.cell_types
        );
    }

    #[test]
    fn osu018_registered_adder() {
        let Ok(lib) = Liberty::osu018() else { return };
        if !tools_present() {
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let r = synthesize(&adder_job(lib, tmp.path())).expect("synthesize");
        show(&r);
        assert!(r.area_um2 > 0.0);
        assert!(r.seq_cells >= 8, "{r:?}");
        assert!(r.cells > r.seq_cells);
        assert!(r.fmax_mhz > 0.0 && r.fmax_mhz.is_finite());
        assert!(r.critical_path_ns > 0.0 && r.critical_path_ns < r.clock_ns);
        assert_eq!(r.wns_ns, 0.0);
        assert!(!r.path_from.is_empty() && !r.path_to.is_empty());
        assert!(r.netlist.is_file());
        assert!(tmp.path().join("yosys.log").is_file());
        assert!(tmp.path().join("sta.log").is_file());
    }

    #[test]
    fn osu018_combinational_virtual_clock() {
        let Ok(lib) = Liberty::osu018() else { return };
        if !tools_present() {
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let r = synthesize(&xor_job(lib, tmp.path())).expect("synthesize");
        show(&r);
        assert_eq!(r.seq_cells, 0);
        assert!(r.area_um2 > 0.0);
        assert!(r.critical_path_ns > 0.0);
        assert!(
            r.path_from.contains("_i["),
            "from an input port (bit-indexed): {}",
            r.path_from
        );
        assert!(r.path_to.contains("_o"), "to an output port: {}", r.path_to);
    }

    #[test]
    fn tight_clock_reports_negative_slack() {
        let Ok(lib) = Liberty::osu018() else { return };
        if !tools_present() {
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut job = adder_job(lib, tmp.path());
        job.clock_ns = 0.2;
        let r = synthesize(&job).expect("synthesize");
        show(&r);
        assert!(r.wns_ns < 0.0, "{r:?}");
        assert!(r.tns_ns < 0.0, "{r:?}");
        assert!((r.critical_path_ns - (0.2 - r.wns_ns)).abs() < 1e-9);
    }

    #[test]
    fn latch_is_reported() {
        let Ok(lib) = Liberty::osu018() else { return };
        if !tools_present() {
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let job = SynthJob::new("latch_bug", vec![fixture("latch_bug.v")], lib, tmp.path());
        match synthesize(&job) {
            Err(SynthError::Latch { count, signals, .. }) => {
                assert_eq!(count, 4);
                assert_eq!(signals, vec!["latch_bug.q_o".to_string()]);
            }
            other => panic!("expected a latch error, got {other:?}"),
        }
    }

    #[test]
    fn budget_is_enforced() {
        use std::time::Instant;
        let Ok(lib) = Liberty::osu018() else { return };
        if !tools_present() {
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut job = adder_job(lib, tmp.path());
        job.budget = Duration::from_millis(1);
        let t0 = Instant::now();
        let e = synthesize(&job).expect_err("budget");
        assert!(matches!(e, SynthError::Budget { tool: "yosys", .. }), "{e}");
        assert!(e.to_string().contains("budget"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn missing_tool_and_bad_jobs() {
        let Ok(lib) = Liberty::osu018() else { return };
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut job = adder_job(lib.clone(), tmp.path());
        job.clock_ns = 0.0;
        assert!(matches!(synthesize(&job), Err(SynthError::InvalidJob(_))));
        let job = SynthJob::new("x", vec![tmp.path().join("nope.v")], lib, tmp.path());
        assert!(matches!(synthesize(&job), Err(SynthError::InvalidJob(_))));
        let e = run::run_with_budget(
            "hwzip-no-such-tool",
            &[],
            tmp.path(),
            &tmp.path().join("x.log"),
            &mut run::Budget::new(Duration::from_secs(1)),
        )
        .expect_err("missing tool");
        assert!(matches!(e, SynthError::ToolNotFound { .. }), "{e}");
        assert!(e.to_string().contains("scripts/setup.sh"), "{e}");
    }

    #[test]
    fn syntax_error_is_a_tool_failure_with_log_tail() {
        let Ok(lib) = Liberty::osu018() else { return };
        if !tools_present() {
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let v = tmp.path().join("broken.v");
        std::fs::write(
            &v,
            "module broken(input a, output b); assign b = ; endmodule\n",
        )
        .expect("write");
        let job = SynthJob::new("broken", vec![v], lib, tmp.path().join("w"));
        match synthesize(&job) {
            Err(e @ SynthError::ToolFailed { tool: "yosys", .. }) => {
                assert!(e.to_string().contains("yosys.log"), "{e}");
                assert!(e.to_string().contains("ERROR"), "{e}");
            }
            other => panic!("expected yosys failure, got {other:?}"),
        }
    }

    #[test]
    fn missing_clock_port_is_an_sta_failure() {
        let Ok(lib) = Liberty::osu018() else { return };
        if !tools_present() {
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut job = adder_job(lib, tmp.path());
        job.clock_port = Some("clk".into());
        match synthesize(&job) {
            Err(e @ SynthError::ToolFailed { tool: "sta", .. }) => {
                assert!(e.to_string().contains("clock port clk not found"), "{e}");
                assert!(e.to_string().contains("sta.log"), "{e}");
            }
            other => panic!("expected sta failure, got {other:?}"),
        }
    }

    #[test]
    fn wires_and_constants_only() {
        let Ok(lib) = Liberty::osu018() else { return };
        if !tools_present() {
            return;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let v = vec![fixture("passthru_const.v")];
        let r = synthesize(&SynthJob::new("passthru_const", v, lib, tmp.path())).expect("synth");
        assert_eq!(r.cells, 0);
        assert_eq!(r.critical_path_ns, 0.0);
        assert!(r.fmax_mhz.is_infinite());
        let row = ReportRow {
            engine: "none".into(),
            unit: "wires".into(),
            params: String::new(),
            latency_cycles: None,
            throughput_bytes_per_cycle: None,
            result: r,
        };
        let js: serde_json::Value = serde_json::from_str(&to_json(&[row])).expect("json");
        assert_eq!(js[0]["fmax_mhz"], serde_json::Value::Null);
    }

    #[test]
    fn shared_reference_libraries() {
        if !tools_present() {
            return;
        }
        let refs = Liberty::shared_refs().expect("shared refs");
        for lib in refs {
            let tmp = tempfile::tempdir().expect("tempdir");
            let a = synthesize(&adder_job(lib.clone(), &tmp.path().join("a")));
            let x = synthesize(&xor_job(lib.clone(), &tmp.path().join("x")));
            match (a, x) {
                (Ok(a), Ok(x)) => {
                    show(&a);
                    show(&x);
                    assert!(a.area_um2 > 0.0 && a.seq_cells >= 8 && a.fmax_mhz > 0.0);
                    assert!(x.area_um2 > 0.0 && x.seq_cells == 0);
                }
                (a, x) => panic!("{}: adder {a:?}\nxor {x:?}", lib.name),
            }
        }
    }
}
