//! `hwzip sweep`: design-space sweeps over an engine's parameters.
//!
//! A grid (`--grid 'lanes=4,8,16; word_bits=8,16,32'` or a YAML mapping of key to list) names
//! keys of the engine's configuration section (dotted for nested ones: `bpc.dec_tokens`).
//! Every point of its Cartesian product is one configuration: its units are generated,
//! linted (`verilator --lint-only -Wall`), co-simulated against the golden model with random
//! stalls (fast-tier length), timed in Verilator (latency, bytes/cycle) and synthesized on each
//! library through the synthesis cache; the golden model compresses a trace for the ratio.
//! Points run in parallel (`-j`); `--shard K/N` runs every N-th point so that N machines share
//! a sweep, and `--merge` joins their output directories into one report. Each point is one
//! JSON file (`points/pNNNN.json`), so a sweep that stopped can be merged as far as it got.
//!
//! The report marks two Pareto fronts per unit and library: area against throughput (GB/s at
//! Fmax) and area against compression ratio.

use super::pool::pool;
use super::{stim_from, synth_unit, write_rtl, CosimRequest, FlowResult};
use crate::config::Config;
use crate::engines::EngineRef;
use crate::report::{Block, Body, Chart, Page, Point};
use serde::{Deserialize, Serialize};
use serde_yaml::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest number of points a grid may have.
pub const MAX_POINTS: usize = 4096;

/// Longest grid key or value, in bytes.
const MAX_TEXT: usize = 64;

/// A parameter grid: keys of the engine's configuration section and their values, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    /// `(key, values)`, the first key varying slowest.
    pub axes: Vec<(String, Vec<String>)>,
}

impl Grid {
    /// Parses `key=v1,v2; key2=v3` (keys relative to the engine's section, dotted for nested
    /// sections).
    pub fn parse(s: &str) -> FlowResult<Grid> {
        let mut axes: Vec<(String, Vec<String>)> = Vec::new();
        for part in s.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, vs) = part
                .split_once('=')
                .ok_or_else(|| format!("grid axis `{}` is not key=v1,v2,...", part))?;
            let key = k.trim().to_string();
            let values: Vec<String> = vs.split(',').map(|v| v.trim().to_string()).collect();
            Self::check_axis(&key, &values, &axes)?;
            axes.push((key, values));
        }
        let g = Grid { axes };
        g.check()?;
        Ok(g)
    }

    /// Parses a YAML grid file: a mapping from key to a list of values (or one value).
    pub fn from_yaml(text: &str) -> FlowResult<Grid> {
        crate::files::input::check_yaml_nesting(text).map_err(|e| format!("grid: {}", e))?;
        let v: Value = serde_yaml::from_str(text)
            .map_err(|e| format!("grid: {}", crate::files::clip(&e.to_string())))?;
        let map = v
            .as_mapping()
            .ok_or("grid: expected a mapping of key: [values]")?;
        let mut axes: Vec<(String, Vec<String>)> = Vec::new();
        for (k, vs) in map {
            let key = k.as_str().ok_or("grid: keys must be strings")?.to_string();
            let shown = crate::files::quote(&key);
            let list: Vec<&Value> = match vs {
                Value::Sequence(s) => s.iter().collect(),
                one => vec![one],
            };
            let mut values = Vec::new();
            for v in list {
                values.push(match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => {
                        return Err(format!(
                            "grid: `{}` has a value that is not a scalar",
                            shown
                        ))
                    }
                });
            }
            Self::check_axis(&key, &values, &axes)?;
            axes.push((key, values));
        }
        let g = Grid { axes };
        g.check()?;
        Ok(g)
    }

    /// Checks one axis: a key made of configuration-key characters and at most
    /// [`MAX_TEXT`] bytes, given once, with at least one value, none empty, too long or
    /// repeated.
    fn check_axis(key: &str, values: &[String], axes: &[(String, Vec<String>)]) -> FlowResult<()> {
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
        let shown = crate::files::quote(key);
        if key.is_empty() || key.len() > MAX_TEXT || !key.chars().all(ok) {
            return Err(format!(
                "grid key `{}` is not a configuration key (letters, digits, `_`, `.`; at most \
                 {} bytes)",
                shown, MAX_TEXT
            ));
        }
        if values.is_empty() {
            return Err(format!("grid key `{}` has no values", shown));
        }
        if axes.iter().any(|(k, _)| k == key) {
            return Err(format!("grid key `{}` is given twice", shown));
        }
        for (i, v) in values.iter().enumerate() {
            if v.is_empty() {
                return Err(format!("grid key `{}`: value {} is empty", shown, i + 1));
            }
            if v.len() > MAX_TEXT {
                return Err(format!(
                    "grid key `{}`: value `{}` is longer than {} bytes",
                    shown,
                    crate::files::quote(v),
                    MAX_TEXT
                ));
            }
            if values[..i].contains(v) {
                return Err(format!(
                    "grid key `{}`: value `{}` is given twice",
                    shown, v
                ));
            }
        }
        Ok(())
    }

    fn check(&self) -> FlowResult<()> {
        if self.axes.is_empty() {
            return Err("the grid is empty (give --grid 'key=v1,v2; ...')".into());
        }
        let n = self.len();
        if n > MAX_POINTS {
            return Err(format!(
                "the grid has {} points; at most {} are allowed",
                n, MAX_POINTS
            ));
        }
        Ok(())
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.axes
            .iter()
            .fold(1usize, |n, (_, v)| n.saturating_mul(v.len()))
    }

    /// Whether the grid has no point (never, once parsed).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Point `i` (0-based, the last key varying fastest) as `(key, value)` pairs.
    pub fn point(&self, mut i: usize) -> Vec<(String, String)> {
        let mut out = vec![(String::new(), String::new()); self.axes.len()];
        for (slot, (k, vs)) in out.iter_mut().zip(&self.axes).rev() {
            *slot = (k.clone(), vs[i % vs.len()].clone());
            i /= vs.len();
        }
        out
    }

    /// The grid as text (`key=v1,v2; ...`), which identifies it in merged results.
    pub fn text(&self) -> String {
        self.axes
            .iter()
            .map(|(k, v)| format!("{}={}", k, v.join(",")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// `base` with the point's values set in `engine`'s section, checked like a configuration
/// file (unknown keys and bad values are errors naming the key).
pub fn apply(base: &Config, engine: EngineRef, point: &[(String, String)]) -> FlowResult<Config> {
    let mut root = serde_yaml::to_value(base).map_err(|e| e.to_string())?;
    for (key, text) in point {
        let mut node = root
            .get_mut(engine.section())
            .ok_or_else(|| format!("the configuration has no section `{}`", engine.section()))?;
        let parts: Vec<&str> = key.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            let map = node.as_mapping_mut().ok_or_else(|| {
                format!(
                    "{}.{}: `{}` is not a section",
                    engine.section(),
                    key,
                    parts[..i].join(".")
                )
            })?;
            if !map.contains_key(*part) {
                let known: Vec<String> = map
                    .keys()
                    .filter_map(|k| k.as_str().map(String::from))
                    .collect();
                return Err(format!(
                    "{}: unknown key `{}` (known: {})",
                    engine.section(),
                    parts[..=i].join("."),
                    known.join(", ")
                ));
            }
            node = map
                .get_mut(*part)
                .ok_or_else(|| format!("{}: no key {}", engine.section(), key))?;
        }
        let value: Value = serde_yaml::from_str(text).unwrap_or(Value::String(text.clone()));
        *node = value;
    }
    let cfg: Config =
        serde_yaml::from_value(root).map_err(|e| format!("{}: {}", describe_point(point), e))?;
    cfg.validate()?;
    Ok(cfg)
}

/// Checks every point of `grid` before any work: each must give a valid configuration with
/// generated hardware, and no two points the same configuration. The error names the point.
pub fn check_points(base: &Config, engine: EngineRef, grid: &Grid, jobs: usize) -> FlowResult<()> {
    let configs = pool(grid.len(), jobs, true, &|i| {
        let point = grid.point(i);
        let invalid = |e: String| {
            format!(
                "grid point {} ({}) is invalid: {}",
                i,
                describe_point(&point),
                e
            )
        };
        let cfg = apply(base, engine, &point).map_err(invalid)?;
        engine.units(&cfg).map_err(invalid)?;
        serde_yaml::to_string(&cfg).map_err(|e| e.to_string())
    });
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, c) in configs.into_iter().enumerate() {
        let c = c?;
        if let Some(j) = seen.insert(c, i) {
            return Err(format!(
                "grid points {} ({}) and {} ({}) give the same configuration",
                j,
                describe_point(&grid.point(j)),
                i,
                describe_point(&grid.point(i))
            ));
        }
    }
    Ok(())
}

/// `key=value key2=value2`.
pub fn describe_point(point: &[(String, String)]) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{}={}", k, v))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What to sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Engine.
    pub engine: EngineRef,
    /// Configuration the grid's values are set in.
    pub base: Config,
    /// The grid.
    pub grid: Grid,
    /// Only these units (empty: every synthesizable unit).
    pub units: Vec<String>,
    /// Libraries (names or paths); missing reference libraries are skipped with a note.
    pub libraries: Vec<String>,
    /// Co-simulation lines per unit and point.
    pub lines: u64,
    /// Trace for the compression ratio (default: a synthetic ReLU activation tensor).
    pub trace: Option<PathBuf>,
    /// Points in parallel.
    pub jobs: usize,
    /// Run only points `i` with `i % N == K - 1`.
    pub shard: Option<(usize, usize)>,
    /// Output directory.
    pub out: PathBuf,
}

/// One unit of one point on one library.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LibResult {
    /// Library label.
    pub liberty: String,
    /// Clock period of the run, ns.
    pub clock_ns: f64,
    /// Area, µm².
    pub area_um2: f64,
    /// Area, kGE.
    pub kge: f64,
    /// Cells.
    pub cells: u64,
    /// Flip-flops.
    pub flops: u64,
    /// Critical path, ns.
    pub critical_path_ns: f64,
    /// 1000 / critical path.
    pub fmax_mhz: f64,
    /// Uncompressed GB/s at Fmax (bytes/cycle × Fmax).
    pub gbps: f64,
    /// Worst path start and end.
    pub path: String,
    /// Whether the synthesis cache answered.
    pub cached: bool,
}

/// One unit of one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnitResult {
    /// Unit name.
    pub unit: String,
    /// Top module.
    pub top: String,
    /// `verilator --lint-only -Wall` printed nothing and passed.
    pub lint_clean: bool,
    /// Co-simulated lines, cycles and mismatches.
    pub cosim_lines: u64,
    /// Cycles of that co-simulation.
    pub cosim_cycles: u64,
    /// Mismatches (0 or 1: the run stops at the first).
    pub mismatches: u64,
    /// Latency, cycles (Verilator, no back-pressure).
    pub latency_cycles: u64,
    /// Uncompressed bytes per cycle (Verilator, no back-pressure).
    pub bytes_per_cycle: f64,
    /// Synthesis on each library.
    pub synth: Vec<LibResult>,
}

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// Engine.
    pub engine: String,
    /// The grid the point belongs to ([`Grid::text`]).
    pub grid: String,
    /// Index in the grid.
    pub index: usize,
    /// The point's values.
    pub point: Vec<(String, String)>,
    /// The engine's parameter description of the point.
    pub params: String,
    /// The point was not run: its parameters are invalid (the message). [`run`] refuses such
    /// grids before any work; a point file from elsewhere may still carry one.
    pub invalid: Option<String>,
    /// The point failed (lint, co-simulation mismatch, synthesis error) — a failure.
    pub error: Option<String>,
    /// Compression ratio of the golden model on the trace (container bytes included), if
    /// the engine changes sizes.
    pub ratio: Option<f64>,
    /// Units.
    pub units: Vec<UnitResult>,
}

/// A sweep's merged results.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepReport {
    /// Engine.
    pub engine: String,
    /// Grid.
    pub grid: String,
    /// Points in the grid.
    pub grid_points: usize,
    /// The trace of the ratio.
    pub trace: String,
    /// Points present (every shard merged), by index.
    pub points: Vec<PointResult>,
    /// Rows on the area/throughput front: `(index, unit, liberty)`.
    pub front_throughput: Vec<(usize, String, String)>,
    /// Rows on the area/ratio front.
    pub front_ratio: Vec<(usize, String, String)>,
}

/// Metadata of a sweep directory (`sweep.yaml`), so that shards merge only with their own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct SweepMeta {
    engine: String,
    grid: String,
    grid_points: usize,
    trace: String,
}

/// The default ratio trace: a 1 MiB ReLU activation tensor (N,C,H,W = 4,64,32,32, 60 %
/// zeros, FP32), the workload of the cDMA paper.
pub fn default_trace() -> Vec<u8> {
    let t =
        crate::trace::synthetic::relu_tensor([4, 64, 32, 32], 0.6, crate::trace::Layout::Nchw, 1);
    t.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn trace_bytes(o: &SweepOptions) -> FlowResult<(Vec<u8>, String)> {
    match &o.trace {
        None => Ok((
            default_trace(),
            "synthetic relu 4x64x32x32 (60% zeros, FP32)".into(),
        )),
        Some(p) if p.as_os_str().is_empty() => Err("--trace is empty: give a file".into()),
        Some(p) => {
            let data = crate::trace::file::load_bytes(p).map_err(|e| e.to_string())?;
            Ok((data, p.display().to_string()))
        }
    }
}

/// Runs the sweep's points (its shard) and writes every point's JSON, then the report of
/// what the output directory holds. Returns the report; failures are in the points.
pub fn run(o: &SweepOptions, log: &(dyn Fn(&str) + Sync)) -> FlowResult<SweepReport> {
    for u in &o.units {
        super::check_synth_unit(o.engine, u)?;
    }
    let (data, trace_name) = trace_bytes(o)?;
    check_points(&o.base, o.engine, &o.grid, o.jobs)?;
    let mut notes = Vec::new();
    let libs = super::libraries(&o.libraries, &mut notes)?;
    for n in &notes {
        log(&format!("note: {}", n));
    }
    let meta = SweepMeta {
        engine: o.engine.name().into(),
        grid: o.grid.text(),
        grid_points: o.grid.len(),
        trace: trace_name,
    };
    std::fs::create_dir_all(o.out.join("points"))
        .map_err(|e| format!("cannot create {}: {}", o.out.display(), e))?;
    let meta_path = o.out.join("sweep.yaml");
    if let Ok(old) = std::fs::read_to_string(&meta_path) {
        let old: SweepMeta =
            serde_yaml::from_str(&old).map_err(|e| format!("{}: {}", meta_path.display(), e))?;
        if old != meta {
            return Err(format!(
                "{} holds another sweep ({} `{}`); use another --out",
                o.out.display(),
                old.engine,
                old.grid
            ));
        }
    }
    crate::files::write(
        &meta_path,
        serde_yaml::to_string(&meta).map_err(|e| e.to_string())?,
    )?;
    let mine: Vec<usize> = (0..o.grid.len())
        .filter(|i| o.shard.is_none_or(|(k, n)| i % n == k - 1))
        .collect();
    log(&format!(
        "sweep {}: {} of {} points, {} in parallel",
        o.engine.name(),
        mine.len(),
        o.grid.len(),
        o.jobs
    ));
    let results = pool(mine.len(), o.jobs, true, &|j| {
        let i = mine[j];
        let p = run_point(o, &libs, &data, i, &meta.grid, log);
        let path = o.out.join("points").join(format!("p{:04}.json", i));
        let text = serde_json::to_string_pretty(&p).map_err(|e| e.to_string())?;
        crate::files::write(&path, text)?;
        log(&format!("[{}/{}] {}", j + 1, mine.len(), summary(&p)));
        Ok(())
    });
    for r in results {
        r?;
    }
    merge(std::slice::from_ref(&o.out), &o.out)
}

fn summary(p: &PointResult) -> String {
    let what = describe_point(&p.point);
    if let Some(e) = &p.invalid {
        return format!("{}: invalid ({})", what, e);
    }
    if let Some(e) = &p.error {
        return format!("{}: FAILED: {}", what, e);
    }
    let units: Vec<String> = p
        .units
        .iter()
        .map(|u| {
            let s: Vec<String> = u
                .synth
                .iter()
                .map(|l| format!("{} {:.1} kGE {:.0} MHz", l.liberty, l.kge, l.fmax_mhz))
                .collect();
            format!("{} {}", u.unit, s.join(", "))
        })
        .collect();
    format!("{}: {}", what, units.join("; "))
}

fn run_point(
    o: &SweepOptions,
    libs: &[crate::synth::Liberty],
    data: &[u8],
    index: usize,
    grid: &str,
    log: &(dyn Fn(&str) + Sync),
) -> PointResult {
    let point = o.grid.point(index);
    let mut r = PointResult {
        engine: o.engine.name().into(),
        grid: grid.into(),
        index,
        point: point.clone(),
        params: String::new(),
        invalid: None,
        error: None,
        ratio: None,
        units: Vec::new(),
    };
    let cfg = match apply(&o.base, o.engine, &point) {
        Ok(c) => c,
        Err(e) => {
            r.invalid = Some(e);
            return r;
        }
    };
    r.params = o.engine.describe(&cfg);
    let designs = match o.engine.units(&cfg) {
        Ok(d) => d,
        Err(e) => {
            r.invalid = Some(e);
            return r;
        }
    };
    log(&format!("point {}: {}", index, describe_point(&point)));
    r.ratio = o
        .engine
        .compress(&cfg, data)
        .ok()
        .map(|p| data.len() as f64 / p.bytes.len().max(1) as f64);
    let work = o.out.join("points").join(format!("p{:04}", index));
    for u in designs
        .iter()
        .filter(|u| o.units.is_empty() || o.units.iter().any(|n| n == u.unit))
    {
        let step = |what: &str| log(&format!("point {}: {} {}", index, u.unit, what));
        match run_unit(o, &cfg, u, libs, &work, &designs, &step) {
            Ok(ur) => r.units.push(ur),
            Err(e) => {
                r.error = Some(format!("{}: {}", u.unit, e));
                return r;
            }
        }
    }
    r
}

fn run_unit(
    o: &SweepOptions,
    cfg: &Config,
    u: &crate::engines::UnitDesign,
    libs: &[crate::synth::Liberty],
    work: &Path,
    siblings: &[crate::engines::UnitDesign],
    step: &dyn Fn(&str),
) -> FlowResult<UnitResult> {
    let rtl = work.join("rtl").join(&u.top.name);
    write_rtl(std::slice::from_ref(u), &rtl)?;
    step("lint");
    lint(&rtl, &u.top.name)?;
    let mut stim = stim_from(cfg, None);
    stim.lines = o.lines;
    let req = CosimRequest {
        engine: o.engine,
        unit: u.unit.to_string(),
        stim,
        vcd: None,
        x_seed: None,
    };
    step(&format!("co-simulation, {} lines", o.lines));
    let c = super::cosim(&req, cfg, &mut |_| {})?;
    if c.stats.mismatches > 0 {
        let at = c
            .stats
            .first_mismatch
            .as_ref()
            .map(|m| format!(" at cycle {}", m.cycle))
            .unwrap_or_default();
        return Err(format!("co-simulation mismatch{}", at));
    }
    step("timing");
    let t = super::timing(o.engine, cfg, u.unit)?;
    let mut synth = Vec::new();
    for lib in libs {
        step(&format!("synthesis on {}", lib.label()));
        let (row, cached) = synth_unit(cfg, u, lib, work, &t, siblings, None)?;
        let s = &row.result;
        synth.push(LibResult {
            liberty: s.liberty.clone(),
            clock_ns: s.clock_ns,
            area_um2: s.area_um2,
            kge: s.kge,
            cells: s.cells,
            flops: s.seq_cells,
            critical_path_ns: s.critical_path_ns,
            fmax_mhz: s.fmax_mhz,
            gbps: t.raw_bytes_per_cycle * s.fmax_mhz / 1000.0,
            path: format!("{} -> {}", s.path_from, s.path_to),
            cached,
        });
    }
    Ok(UnitResult {
        unit: u.unit.into(),
        top: u.top.name.clone(),
        lint_clean: true,
        cosim_lines: c.stats.lines,
        cosim_cycles: c.stats.cycles,
        mismatches: c.stats.mismatches,
        latency_cycles: t.latency_cycles,
        bytes_per_cycle: t.raw_bytes_per_cycle,
        synth,
    })
}

/// `verilator --lint-only -Wall` on `top` in `dir`: clean means exit 0 and no output.
fn lint(dir: &Path, top: &str) -> FlowResult<()> {
    let out = crate::proc::output(
        std::process::Command::new("verilator")
            .args(["--lint-only", "-Wall", "-y"])
            .arg(dir)
            .arg(dir.join(format!("{}.v", top))),
    )
    .map_err(|e| format!("cannot run verilator: {}", e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() || !text.trim().is_empty() {
        let first = text.lines().next().unwrap_or("verilator failed");
        return Err(format!("lint of {}: {}", top, first));
    }
    Ok(())
}

/// Merges the point files of `dirs` (shards of one sweep) into `out`'s report
/// (`sweep.md`, `sweep.csv`, `sweep.json`, `report.html`) and returns it.
pub fn merge(dirs: &[PathBuf], out: &Path) -> FlowResult<SweepReport> {
    let mut meta: Option<SweepMeta> = None;
    let mut points: BTreeMap<usize, PointResult> = BTreeMap::new();
    for d in dirs {
        let mp = d.join("sweep.yaml");
        let text = std::fs::read_to_string(&mp)
            .map_err(|e| format!("{} is not a sweep directory: {}", d.display(), e))?;
        let m: SweepMeta =
            serde_yaml::from_str(&text).map_err(|e| format!("{}: {}", mp.display(), e))?;
        match &meta {
            Some(prev) if prev != &m => {
                return Err(format!(
                    "{} holds another sweep ({} `{}`) than the first directory ({} `{}`)",
                    d.display(),
                    m.engine,
                    m.grid,
                    prev.engine,
                    prev.grid
                ))
            }
            _ => meta = Some(m),
        }
        let pd = d.join("points");
        let entries =
            std::fs::read_dir(&pd).map_err(|e| format!("cannot list {}: {}", pd.display(), e))?;
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let bytes = crate::files::input::read(&f, crate::files::input::Purpose::Config)
                .map_err(|e| format!("cannot read {}: {}", f.display(), e))?;
            let p: PointResult = serde_json::from_slice(&bytes)
                .map_err(|e| format!("{}: not a sweep point: {}", f.display(), e))?;
            points.insert(p.index, p);
        }
    }
    let meta = meta.ok_or("no sweep directory given")?;
    if let Some(p) = points.values().find(|p| p.grid != meta.grid) {
        return Err(format!(
            "point {} belongs to another grid `{}`",
            p.index, p.grid
        ));
    }
    let points: Vec<PointResult> = points.into_values().collect();
    let (front_throughput, front_ratio) = fronts(&points);
    let report = SweepReport {
        engine: meta.engine,
        grid: meta.grid,
        grid_points: meta.grid_points,
        trace: meta.trace,
        points,
        front_throughput,
        front_ratio,
    };
    write(&report, out)?;
    Ok(report)
}

/// Indices of the points not dominated in (minimize `a`, maximize `b`): no other point is at
/// least as good in both and better in one.
pub fn pareto(items: &[(f64, f64)]) -> Vec<usize> {
    (0..items.len())
        .filter(|&i| {
            let (a, b) = items[i];
            !items
                .iter()
                .any(|&(a2, b2)| a2 <= a && b2 >= b && (a2 < a || b2 > b))
        })
        .collect()
}

type Key = (usize, String, String);
/// A front candidate: its key, area, GB/s and ratio.
type Candidate = (Key, f64, f64, Option<f64>);

fn fronts(points: &[PointResult]) -> (Vec<Key>, Vec<Key>) {
    let mut groups: BTreeMap<(String, String), Vec<Candidate>> = BTreeMap::new();
    for p in points
        .iter()
        .filter(|p| p.invalid.is_none() && p.error.is_none())
    {
        for u in &p.units {
            for l in &u.synth {
                groups
                    .entry((u.unit.clone(), l.liberty.clone()))
                    .or_default()
                    .push((
                        (p.index, u.unit.clone(), l.liberty.clone()),
                        l.area_um2,
                        l.gbps,
                        p.ratio,
                    ));
            }
        }
    }
    let (mut ft, mut fr) = (Vec::new(), Vec::new());
    for rows in groups.values() {
        let t: Vec<(f64, f64)> = rows.iter().map(|r| (r.1, r.2)).collect();
        ft.extend(pareto(&t).into_iter().map(|i| rows[i].0.clone()));
        let with: Vec<&Candidate> = rows.iter().filter(|r| r.3.is_some()).collect();
        let rr: Vec<(f64, f64)> = with.iter().map(|r| (r.1, r.3.unwrap_or(0.0))).collect();
        fr.extend(pareto(&rr).into_iter().map(|i| with[i].0.clone()));
    }
    ft.sort();
    fr.sort();
    (ft, fr)
}

/// One table row per point, unit and library.
pub struct Row<'a> {
    /// The point.
    pub point: &'a PointResult,
    /// The unit.
    pub unit: &'a UnitResult,
    /// The library.
    pub lib: &'a LibResult,
    /// On the area/throughput front.
    pub on_tput: bool,
    /// On the area/ratio front.
    pub on_ratio: bool,
}

/// The report's rows, by point, unit and library.
pub fn rows(r: &SweepReport) -> Vec<Row<'_>> {
    let mut v = Vec::new();
    for p in &r.points {
        for u in &p.units {
            for l in &u.synth {
                let key = (p.index, u.unit.clone(), l.liberty.clone());
                v.push(Row {
                    point: p,
                    unit: u,
                    lib: l,
                    on_tput: r.front_throughput.contains(&key),
                    on_ratio: r.front_ratio.contains(&key),
                });
            }
        }
    }
    v
}

/// The report as Markdown: one row per point, unit and library, fronts marked (`T`: area vs
/// throughput, `R`: area vs ratio), then the points that were invalid or failed.
pub fn markdown(r: &SweepReport) -> String {
    let mut s = format!(
        "# Sweep: {} `{}`\n\n{} of {} points; ratio on {}. Pareto: T = area vs GB/s, \
         R = area vs ratio (per unit and library).\n\n",
        r.engine,
        r.grid,
        r.points.len(),
        r.grid_points,
        r.trace
    );
    s.push_str(
        "| point | unit | library | kGE | µm² | Fmax MHz | latency | B/cycle | GB/s | ratio | \
         cosim lines | Pareto |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for row in rows(r) {
        let front = match (row.on_tput, row.on_ratio) {
            (true, true) => "T R",
            (true, false) => "T",
            (false, true) => "R",
            _ => "",
        };
        s.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.0} | {:.0} | {} | {:.2} | {:.2} | {} | {} | {} |\n",
            describe_point(&row.point.point),
            row.unit.unit,
            row.lib.liberty,
            row.lib.kge,
            row.lib.area_um2,
            row.lib.fmax_mhz,
            row.unit.latency_cycles,
            row.unit.bytes_per_cycle,
            row.lib.gbps,
            row.point
                .ratio
                .map(|x| format!("{:.3}", x))
                .unwrap_or_else(|| "-".into()),
            row.unit.cosim_lines,
            front
        ));
    }
    let bad: Vec<&PointResult> = r
        .points
        .iter()
        .filter(|p| p.invalid.is_some() || p.error.is_some())
        .collect();
    if !bad.is_empty() {
        s.push_str("\n| point | not in the table because |\n|---|---|\n");
        for p in bad {
            let why = match (&p.invalid, &p.error) {
                (Some(e), _) => format!("invalid: {}", e),
                (_, Some(e)) => format!("FAILED: {}", e),
                _ => String::new(),
            };
            s.push_str(&format!(
                "| {} | {} |\n",
                describe_point(&p.point),
                why.replace('|', "/")
            ));
        }
    }
    s
}

/// The report as CSV (one row per point, unit and library).
pub fn csv(r: &SweepReport) -> String {
    let keys: Vec<String> = r
        .points
        .first()
        .map(|p| p.point.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let mut s = keys.join(",");
    s.push_str(
        ",unit,liberty,clock_ns,kge,area_um2,cells,flops,critical_path_ns,fmax_mhz,\
         latency_cycles,bytes_per_cycle,gbps,ratio,cosim_lines,cosim_cycles,mismatches,\
         pareto_throughput,pareto_ratio\n",
    );
    for row in rows(r) {
        let vals: Vec<String> = row.point.point.iter().map(|(_, v)| v.clone()).collect();
        s.push_str(&format!(
            "{},{},{},{},{:.2},{:.0},{},{},{:.3},{:.0},{},{:.2},{:.3},{},{},{},{},{},{}\n",
            vals.join(","),
            row.unit.unit,
            row.lib.liberty,
            row.lib.clock_ns,
            row.lib.kge,
            row.lib.area_um2,
            row.lib.cells,
            row.lib.flops,
            row.lib.critical_path_ns,
            row.lib.fmax_mhz,
            row.unit.latency_cycles,
            row.unit.bytes_per_cycle,
            row.lib.gbps,
            row.point
                .ratio
                .map(|x| format!("{:.4}", x))
                .unwrap_or_default(),
            row.unit.cosim_lines,
            row.unit.cosim_cycles,
            row.unit.mismatches,
            row.on_tput,
            row.on_ratio
        ));
    }
    s
}

/// Writes `sweep.md`, `sweep.csv`, `sweep.json`, `report.html` and each Pareto plot as
/// `pareto_<unit>_<library>_{gbps,ratio}.svg` into `dir`.
pub fn write(r: &SweepReport, dir: &Path) -> FlowResult<()> {
    let mut set = crate::files::FileSet::new();
    set.add(dir.join("sweep.md"), markdown(r));
    set.add(dir.join("sweep.csv"), csv(r));
    set.add(
        dir.join("sweep.json"),
        serde_json::to_string_pretty(r).map_err(|e| e.to_string())?,
    );
    crate::report::add(&mut set, &page(r), dir)?;
    for (stem, chart) in sweep_charts(r) {
        set.add(dir.join(format!("{}.svg", stem)), chart.svg()?);
    }
    set.commit()
}

/// The Pareto plots of a sweep, per unit and library: area vs throughput, and area vs ratio
/// when the engine changes sizes; each with a file stem (`pareto_<unit>_<library>_gbps`).
pub fn sweep_charts(r: &SweepReport) -> Vec<(String, Chart)> {
    let rows = rows(r);
    let mut groups: Vec<(String, String)> = Vec::new();
    for row in &rows {
        let g = (row.unit.unit.clone(), row.lib.liberty.clone());
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    // Short labels: the values only, in the grid's key order.
    let label = |x: &Row| {
        x.point
            .point
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join("/")
    };
    // A row as a plot point: area against `y`, on the front or not.
    let point = |x: &Row, y: f64, front: bool| Point {
        x: x.lib.kge,
        y,
        label: label(x),
        front,
    };

    let mut out = Vec::new();
    for (unit, lib) in &groups {
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|x| &x.unit.unit == unit && &x.lib.liberty == lib)
            .collect();
        let stem = format!("pareto_{}_{}", unit.replace('-', "_"), lib);
        out.push((
            format!("{}_gbps", stem),
            Chart {
                title: format!("{} {} on {}: area vs throughput", r.engine, unit, lib),
                x_label: "area (kGE)".into(),
                y_label: "GB/s at Fmax".into(),
                body: Body::Scatter {
                    points: mine
                        .iter()
                        .map(|x| point(x, x.lib.gbps, x.on_tput))
                        .collect(),
                },
            },
        ));
        if mine.iter().any(|x| x.point.ratio.is_some()) {
            out.push((
                format!("{}_ratio", stem),
                Chart {
                    title: format!(
                        "{} {} on {}: area vs compression ratio",
                        r.engine, unit, lib
                    ),
                    x_label: "area (kGE)".into(),
                    y_label: "compression ratio".into(),
                    body: Body::Scatter {
                        points: mine
                            .iter()
                            .filter_map(|x| Some(point(x, x.point.ratio?, x.on_ratio)))
                            .collect(),
                    },
                },
            ));
        }
    }
    out
}

/// The `hwzip sweep` page: both Pareto plots per unit and library, then the table.
pub fn page(r: &SweepReport) -> Page {
    let mut p = Page::new(format!("hwzip sweep: {} `{}`", r.engine, r.grid));
    let mut blocks = vec![Block::Text(format!(
        "{} of {} points; compression ratio on {}. Pareto fronts per unit and library: \
         smallest area for the throughput, and for the ratio. Points are labelled with \
         their values of {}.",
        r.points.len(),
        r.grid_points,
        r.trace,
        r.points
            .first()
            .map(|p| p
                .point
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join("/"))
            .unwrap_or_default()
    ))];
    blocks.extend(sweep_charts(r).into_iter().map(|(_, c)| Block::Chart(c)));
    p.section("Pareto fronts", blocks);
    p.section("Points", vec![Block::Markdown(markdown(r))]);
    p
}

/// Whether every point passed (an invalid point, which [`check_points`] refuses before a
/// run, is a failure too).
pub fn passed(r: &SweepReport) -> bool {
    r.points
        .iter()
        .all(|p| p.error.is_none() && p.invalid.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_points_run_last_key_fastest() {
        let g = Grid::parse("lanes=4,8; word_bits=8,16,32").unwrap();
        assert_eq!(g.len(), 6);
        assert_eq!(
            g.point(0),
            vec![
                ("lanes".into(), "4".into()),
                ("word_bits".into(), "8".into())
            ]
        );
        assert_eq!(
            g.point(4),
            vec![
                ("lanes".into(), "8".into()),
                ("word_bits".into(), "16".into())
            ]
        );
        assert_eq!(g.text(), "lanes=4,8; word_bits=8,16,32");
        let y = Grid::from_yaml("lanes: [4, 8]\nword_bits: [8, 16, 32]\n").unwrap();
        assert_eq!(y, g);
    }

    #[test]
    fn bad_grids_are_one_line_errors() {
        let values: Vec<String> = (0..65).map(|i| i.to_string()).collect();
        let huge = format!("a={v}; b={v}", v = values.join(","));
        for bad in [
            "",
            "lanes",
            "lanes=",
            "lanes=4; lanes=8",
            "la nes=4",
            huge.as_str(),
        ] {
            let e = Grid::parse(bad).unwrap_err();
            assert!(!e.contains('\n'), "{}", e);
        }
    }

    /// Empty, repeated and overlong values, deep YAML and overlong keys are refused with
    /// short messages; a grid whose points are invalid or repeat a configuration is refused
    /// before any work, naming the point.
    #[test]
    fn grids_are_checked_before_any_work() {
        for (bad, needle) in [
            ("lanes=3,,5", "value 2 is empty"),
            ("lanes=3,", "value 2 is empty"),
            ("lanes=8,8", "`8` is given twice"),
        ] {
            let e = Grid::parse(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        let long_key = format!("{}=1", "k".repeat(100_000));
        let e = Grid::parse(&long_key).unwrap_err();
        assert!(
            e.len() < 300 && e.contains("at most 64 bytes"),
            "{}",
            e.len()
        );
        let long_value = format!("lanes={}", "9".repeat(100_000));
        let e = Grid::parse(&long_value).unwrap_err();
        assert!(e.len() < 300, "{}", e.len());
        let deep = format!("lanes: {}", "[".repeat(200_000));
        let t = std::time::Instant::now();
        let e = Grid::from_yaml(&deep).unwrap_err();
        assert!(e.contains("deeper than"), "{e}");
        assert!(
            t.elapsed().as_secs() < 5,
            "the nesting guard runs before the parser"
        );
        let zvc = crate::engines::by_name("zvc").unwrap();
        let base = Config::default();
        let check = |g: &str| check_points(&base, zvc, &Grid::parse(g).unwrap(), 2);
        assert!(check("lanes=4,8; word_bits=8,16").is_ok());
        for (g, needle) in [
            ("nope=1,2", "point 0 (nope=1) is invalid"),
            ("lanes=abc", "lanes=abc"),
            ("lanes=8,-1", "point 1 (lanes=-1) is invalid"),
            ("bpc.dec_tokens=2", "unknown key `bpc`"),
            ("lanes=8,0x8", "give the same configuration"),
        ] {
            let e = check(g).unwrap_err();
            assert!(e.contains(needle), "{g}: {e}");
        }
    }

    #[test]
    fn apply_sets_keys_and_rejects_unknown_ones() {
        let zvc = crate::engines::by_name("zvc").unwrap();
        let c = apply(
            &Config::default(),
            zvc,
            &[
                ("lanes".into(), "16".into()),
                ("prefix".into(), "sklansky".into()),
            ],
        )
        .unwrap();
        assert_eq!(c.zvc.lanes, 16);
        let e = apply(&Config::default(), zvc, &[("lane".into(), "16".into())]).unwrap_err();
        assert!(
            e.contains("unknown key `lane`") && e.contains("lanes"),
            "{}",
            e
        );
        let e = apply(&Config::default(), zvc, &[("lanes".into(), "5".into())]).unwrap_err();
        assert!(e.contains("lanes"), "{}", e);
        let buddy = crate::engines::by_name("buddy").unwrap();
        let c = apply(
            &Config::default(),
            buddy,
            &[("bpc.dec_tokens".into(), "3".into())],
        )
        .unwrap();
        assert_eq!(c.buddy.bpc.dec_tokens, 3);
    }

    #[test]
    fn pareto_keeps_the_undominated() {
        // (area, gbps): 1 dominates 3; 0, 1 and 2 trade off; 4 equals 1 (both kept).
        let f = pareto(&[(1.0, 1.0), (2.0, 3.0), (4.0, 5.0), (3.0, 2.0), (2.0, 3.0)]);
        assert_eq!(f, vec![0, 1, 2, 4]);
        assert!(pareto(&[]).is_empty());
    }
}
