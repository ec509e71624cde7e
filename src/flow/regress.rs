//! `hwzip regress`: the long, paper-grade regression. One command regenerates every figure
//! docs/RESULTS.md quotes:
//!
//! 1. the default configuration through the main job with the `paper` profile: 10^6 lines
//!    per unit, synthesis on osu018, Nangate45 and sky130hd (those present), Table II and
//!    Table III, `-O2` models;
//! 2. gate-level co-simulation of the osu018 netlists of the ZVC units;
//! 3. every parameter set in `verif/configs/` (co-simulation, 10^6 lines, of the engines the
//!    file configures);
//! 4. the shared metadata cache + MSHR block in its two configurations (PACT'12 MD cache,
//!    Buddy slice): `lines` random lookups each against the model with a reactive memory,
//!    the controller's hit/miss/merge counters equal to the model's;
//! 5. each engine's evaluation of the golden models at the default parameters (every
//!    synthetic class; ZVC on the sweeps' ReLU tensor) in `eval/<engine>/`.
//!
//! Each run writes its own report directory under `out/`; `summary.md` lists them and
//! `regress.json` records what was asked. `--engine` keeps some engines (the block belongs to
//! the two engines that use it, PACT'12 and Buddy) and `--profile quick` makes a small
//! regression of minutes.
//!
//! With `shard = (k, n)` only every n-th independent step of each run is done (co-simulations
//! and synthesis runs, numbered in their deterministic order), so n machines can share the
//! work (a CI matrix or a job array: `scripts/batch/`); [`merge`] joins the shards'
//! directories into the report the unsharded run writes.

use super::job::{self, FlowOptions, FlowReport, Profile};
use super::progress::Ui;
use super::FlowResult;
use crate::config::{explicit_keys, Config};
use crate::engines::{self, EngineRef};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What `hwzip regress` runs.
#[derive(Clone, Debug)]
pub struct RegressOptions {
    /// Directory of extra parameter sets (`*.yaml`), e.g. `verif/configs`.
    pub configs: PathBuf,
    /// Output directory (one subdirectory per run, `summary.md`).
    pub out: PathBuf,
    /// Co-simulation lines per unit.
    pub lines: u64,
    /// Gate-level co-simulation lines per ZVC osu018 netlist (0: none).
    pub gate_cosim: u64,
    /// Worker threads.
    pub jobs: usize,
    /// `(k, n)`: only shard k of n.
    pub shard: Option<(usize, usize)>,
    /// Only these engines (empty: all).
    pub engines: Vec<EngineRef>,
    /// `paper` (the long tier) or `quick` (a small regression: osu018, fast synthesis).
    pub profile: Profile,
    /// Keep the runs `out` already holds a report of (a run stopped part way is done again);
    /// `out` must hold the same regression (`regress.json`).
    pub resume: bool,
    /// CPU budget of each formal proof of the default configuration (zero: no proofs; the
    /// `quick` profile proves nothing).
    pub prove_budget: std::time::Duration,
}

/// What a regression directory holds (`regress.json`), so that shards merge only with the
/// other shards of the same regression.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct RegressMeta {
    profile: Profile,
    engines: Vec<String>,
    lines: u64,
    gate_cosim: u64,
    /// Run names in report order (every shard lists them all).
    runs: Vec<String>,
    /// Engines evaluated in `eval/` (by the first shard).
    #[serde(default)]
    evals: Vec<String>,
    shard: Option<(usize, usize)>,
}

/// Name of the metadata file in a regression directory.
const META: &str = "regress.json";

/// Whether the shared cache + MSHR block runs: when an engine that uses it is in the run.
fn runs_block(engines: &[EngineRef]) -> bool {
    engines.iter().any(|e| e.uses_cache_block())
}

/// One run of the regression.
#[derive(Clone, Debug)]
pub struct RegressRun {
    /// `default` or the configuration file's stem.
    pub name: String,
    /// Its report.
    pub report: FlowReport,
}

/// The engines a configuration file configures (all, if it names none).
fn engines_of(text: &str) -> Vec<EngineRef> {
    let keys = explicit_keys(text);
    let v: Vec<EngineRef> = engines::ALL
        .iter()
        .copied()
        .filter(|e| {
            let prefix = format!("{}.", e.section());
            keys.iter().any(|k| k.starts_with(&prefix))
        })
        .collect();
    if v.is_empty() {
        engines::ALL.to_vec()
    } else {
        v
    }
}

/// The configuration files of `dir`, sorted by name.
fn config_files(dir: &Path) -> FlowResult<Vec<PathBuf>> {
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a folder"
        } else {
            "does not exist"
        };
        return Err(format!(
            "--configs {} {}: give the folder of parameter sets (*.yaml)",
            dir.display(),
            what
        ));
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {}", dir.display(), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    v.sort();
    Ok(v)
}

/// The engines of `all` that `selected` keeps (all when it is empty).
fn select(all: Vec<EngineRef>, selected: &[EngineRef]) -> Vec<EngineRef> {
    all.into_iter()
        .filter(|e| selected.is_empty() || selected.iter().any(|s| s.name() == e.name()))
        .collect()
}

/// One parameter set of `--configs`, loaded and checked.
struct ParamSet {
    path: PathBuf,
    name: String,
    cfg: Config,
    engines: Vec<EngineRef>,
}

/// Loads every parameter set of `dir` with the profile applied; any bad file is an error
/// before the regression's first step.
fn param_sets(dir: &Path, profile: Profile, lines: u64) -> FlowResult<Vec<ParamSet>> {
    let mut sets = Vec::new();
    for path in config_files(dir)? {
        let text = crate::files::input::read_to_string(&path, crate::files::input::Purpose::Config)
            .map_err(|e| format!("cannot read {}: {}", path.display(), e))?;
        let mut cfg = Config::load(&path)?;
        profile.apply(&mut cfg, &explicit_keys(&text));
        cfg.cosim.lines = lines;
        cfg.validate()
            .map_err(|e| format!("{}: {}", path.display(), e))?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        sets.push(ParamSet {
            engines: engines_of(&text),
            path,
            name,
            cfg,
        });
    }
    Ok(sets)
}

/// Runs the regression; returns every run (all of them matched when every `report.ok`).
/// Every input (the parameter sets, the libraries) is checked before the first step.
pub fn run(o: &RegressOptions, ui: &Ui) -> FlowResult<Vec<RegressRun>> {
    let mut runs = Vec::new();
    let profile = o.profile;
    let engines = select(engines::ALL.to_vec(), &o.engines);
    // A set that configures none of the selected engines has nothing to run.
    let sets: Vec<ParamSet> = param_sets(&o.configs, profile, o.lines)?
        .into_iter()
        .map(|s| ParamSet {
            engines: select(s.engines, &engines),
            ..s
        })
        .filter(|s| !s.engines.is_empty())
        .collect();
    if o.out.exists() && !o.out.is_dir() {
        return Err(format!(
            "--out {} is not a folder: give a folder for the reports",
            o.out.display()
        ));
    }
    let block = runs_block(&engines);
    let meta = RegressMeta {
        profile,
        engines: engines.iter().map(|e| e.name().to_string()).collect(),
        lines: o.lines,
        gate_cosim: o.gate_cosim,
        runs: std::iter::once("default".to_string())
            .chain(sets.iter().map(|s| s.name.clone()))
            .chain(block.then(|| "cache".to_string()))
            .collect(),
        evals: engines.iter().map(|e| e.name().to_string()).collect(),
        shard: o.shard,
    };
    let meta_path = o.out.join(META);
    if o.resume && meta_path.exists() {
        let bytes = crate::files::input::read(&meta_path, crate::files::input::Purpose::Config)
            .map_err(|e| format!("cannot read {}: {}", meta_path.display(), e))?;
        let before: RegressMeta = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: not a regression's record: {}", meta_path.display(), e))?;
        if before != meta {
            return Err(format!(
                "--resume: {} holds another regression (profile, engines, lines, parameter \
                 sets or shard differ); give another --out or leave out --resume",
                o.out.display()
            ));
        }
    }
    // A run whose report `out` already holds (`--resume`): kept as it is.
    let kept = |name: &str| -> FlowResult<Option<RegressRun>> {
        let p = o.out.join(name).join("report.json");
        if !o.resume || !p.exists() {
            return Ok(None);
        }
        ui.line(&format!("== regress: {name}: kept from {}", p.display()));
        Ok(Some(RegressRun {
            name: name.to_string(),
            report: read_report(&p)?,
        }))
    };
    std::fs::create_dir_all(&o.out)
        .map_err(|e| format!("cannot create {}: {}", o.out.display(), e))?;
    let meta_text = serde_json::to_string_pretty(&meta).map_err(|e| e.to_string())?;
    crate::files::write(&o.out.join(META), meta_text)?;
    crate::cosim::set_opt_level(profile.cxx_opt());
    let base = FlowOptions {
        profile,
        engines: engines.clone(),
        unit: None,
        jobs: o.jobs,
        out: o.out.join("default"),
        gate_cosim: 0,
        energy: 0,
        synth: true,
        shard: o.shard,
        synth_units: Vec::new(),
        fail_fast: false,
    };

    // 1. The default configuration, everything.
    if let Some(r) = kept("default")? {
        runs.push(r);
    } else {
        default_run(o, &base, ui, &mut runs)?;
    }

    // 3. Every parameter set: co-simulation of the engines it configures.
    for set in sets {
        if let Some(r) = kept(&set.name)? {
            runs.push(r);
            continue;
        }
        let opts = FlowOptions {
            engines: set.engines,
            out: o.out.join(&set.name),
            synth: false,
            ..base.clone()
        };
        ui.line(&format!(
            "== regress: {} (co-simulation)",
            set.path.display()
        ));
        let r = job::run(&set.cfg, &opts, ui)?;
        job::write(&r, &opts.out)?;
        runs.push(RegressRun {
            name: set.name,
            report: r,
        });
    }
    // 4. The shared cache + MSHR block (not sharded: two steps).
    if block && o.shard.is_none_or(|(k, _)| k == 1) {
        match kept("cache")? {
            Some(r) => runs.push(r),
            None => runs.push(cache_run(o, ui)?),
        }
    }
    // 5. The golden models' evaluations (seconds; the first shard).
    if o.shard.is_none_or(|(k, _)| k == 1) {
        for &e in &engines {
            eval_run(e, o.lines, &o.out.join("eval"), ui)?;
        }
    }
    let md = summary(&runs, o.shard);
    crate::files::write(&o.out.join("summary.md"), &md)?;
    Ok(runs)
}

/// Steps 1 and 2 of [`run`]: the default configuration with the profile, then the
/// gate-level runs of the engines that have them.
fn default_run(
    o: &RegressOptions,
    base: &FlowOptions,
    ui: &Ui,
    runs: &mut Vec<RegressRun>,
) -> FlowResult<()> {
    let profile = o.profile;
    let mut cfg = Config::default();
    profile.apply(&mut cfg, &Default::default());
    cfg.cosim.lines = o.lines;
    ui.line(&format!(
        "== regress: default configuration ({} profile)",
        profile.name()
    ));
    let mut r = job::run(&cfg, base, ui)?;
    // 2. Gate level: the ZVC units' osu018 netlists.
    if o.gate_cosim > 0 {
        let libs = super::libraries(&["osu018".to_string()], &mut Vec::new())?;
        let rows: Vec<_> = r
            .synth
            .iter()
            .filter(|x| {
                x.result.liberty == "osu018"
                    && engines::by_name(&x.engine).is_ok_and(|e| e.gate_level_in_long_tier())
            })
            .cloned()
            .collect();
        for row in rows {
            let st = job::gate_step(&cfg, &row, &libs[0], o.gate_cosim, &base.out, ui);
            r.ok &= !st.is_failure();
            r.steps.push(st);
        }
    }
    // 3. Formal proofs of the default configuration (paper profile, first shard): every property of
    // every unit, round trip and link code at `hwzip prove`'s defaults. Only a refutation
    // (a counterexample) fails the run; a proof cut short by its budget is reported.
    if profile == Profile::Paper && !o.prove_budget.is_zero() && o.shard.is_none_or(|(k, _)| k == 1)
    {
        ui.line("== regress: formal proofs of the default configuration");
        let mut req = super::prove::Request::defaults();
        req.budget = o.prove_budget;
        let p = super::prove::run_engines(
            &cfg,
            "default",
            &base.engines,
            None,
            &req,
            o.jobs,
            &base.out.join("prove"),
        )?;
        r.ok &= !p.refuted();
        r.prove = Some(p);
    }
    job::write(&r, &base.out)?;
    runs.push(RegressRun {
        name: "default".into(),
        report: r,
    });
    Ok(())
}

/// The cache + MSHR block in both configurations, `o.lines` lookups each, as one run
/// (engine `block`, one co-simulation row per configuration).
fn cache_run(o: &RegressOptions, ui: &Ui) -> FlowResult<RegressRun> {
    use crate::cosim::cache as bench;
    use crate::rtl::cache::{cache, CacheRtlParams};
    ui.line("== regress: shared metadata cache + MSHR block (co-simulation)");
    let t0 = std::time::Instant::now();
    let mut cosims = Vec::new();
    let mut steps = Vec::new();
    let mut ok = true;
    for (i, p) in [CacheRtlParams::pact12_md(), CacheRtlParams::buddy_slice()]
        .iter()
        .enumerate()
    {
        let top = cache(p).map_err(|e| e.to_string())?;
        let s = ui.step(&format!("cosim block {}", top.name));
        s.set("verilating and compiling the model (cached after the first build)");
        let mut dut =
            crate::cosim::vdut::VerilatorDut::new(&top, false).map_err(|e| e.to_string())?;
        let cfg = crate::cosim::harness::HarnessConfig {
            seed: 100 + i as u64,
            ..Default::default()
        };
        s.set(format!("{} lookups", o.lines));
        let r = bench::run(&mut dut, &top, p, o.lines, &cfg)?;
        let m = r.model;
        let matched = r.check();
        let detail = match &matched {
            Ok(()) => format!(
                "{} lookups, {} cycles, hits/misses/merges {}/{}/{} (RTL = model), 0 mismatches",
                o.lines, r.stats.cycles, m.hits, m.misses, m.merges
            ),
            Err(e) => {
                ok = false;
                format!("MISMATCH: {}", e)
            }
        };
        let seconds = s.elapsed();
        s.done(&detail);
        let mut st = job::StepTime::ok("cosim", format!("block {}", top.name), seconds, detail);
        if matched.is_err() {
            st.status = job::StepStatus::Mismatch;
        }
        steps.push(st);
        let mut stats = r.stats;
        stats.lines = o.lines;
        if matched.is_err() {
            stats.mismatches = stats.mismatches.max(1);
        }
        cosims.push(super::CosimReport {
            engine: "block".into(),
            unit: top.name.clone(),
            params: format!(
                "{} sets x {} ways x {} B lines, {} B sectors, {} MSHRs; hit rate {:.4}",
                p.cache.sets,
                p.cache.ways,
                p.cache.line_bytes,
                p.cache.sector_bytes,
                p.cache.mshrs,
                m.hit_rate()
            ),
            stats,
            vcd: None,
            x_seed: None,
        });
    }
    let report = FlowReport {
        profile: o.profile,
        libraries: Vec::new(),
        lines: o.lines,
        jobs: 1,
        cxx_opt: crate::cosim::opt_level(),
        leaf_cxx_opt: None,
        synth_method: String::new(),
        seconds: t0.elapsed().as_secs_f64(),
        ok,
        steps,
        cosim: cosims,
        synth: Vec::new(),
        tables: Vec::new(),
        energy: Vec::new(),
        fpga: Vec::new(),
        prove: None,
        notes: Vec::new(),
    };
    let out = o.out.join("cache");
    job::write(&report, &out)?;
    Ok(RegressRun {
        name: "cache".into(),
        report,
    })
}

/// Reads a regression directory's `regress.json`.
fn read_meta(dir: &Path) -> FlowResult<RegressMeta> {
    let p = dir.join(META);
    let bytes =
        crate::files::input::read(&p, crate::files::input::Purpose::Config).map_err(|e| {
            format!(
                "{} is not a regress directory ({}: {})",
                dir.display(),
                META,
                e
            )
        })?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {}", p.display(), e))
}

/// Reads one run's `report.json`.
fn read_report(path: &Path) -> FlowResult<FlowReport> {
    let bytes = crate::files::input::read(path, crate::files::input::Purpose::Config)
        .map_err(|e| format!("cannot read {}: {}", path.display(), e))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: not a flow report: {}", path.display(), e))
}

/// Each engine's evaluation Markdown, by engine name.
pub type Evals = Vec<(String, String)>;

/// A whole (or merged) regression folder, read back.
pub struct Regression {
    /// The engines it ran.
    pub engines: Vec<String>,
    /// Its runs in report order.
    pub runs: Vec<RegressRun>,
    /// Each evaluation's Markdown, by engine.
    pub evals: Evals,
}

/// Reads a whole (or merged) regression folder.
pub fn read(dir: &Path) -> FlowResult<Regression> {
    let meta = read_meta(dir)?;
    if let Some((k, n)) = meta.shard {
        return Err(format!(
            "{} holds shard {}/{} only: merge the shards first (regress --merge)",
            dir.display(),
            k,
            n
        ));
    }
    let mut runs = Vec::new();
    for name in &meta.runs {
        runs.push(RegressRun {
            name: name.clone(),
            report: read_report(&dir.join(name).join("report.json"))?,
        });
    }
    let mut evals = Vec::new();
    for e in &meta.evals {
        let p = dir.join("eval").join(e).join("report.md");
        let md = crate::files::input::read_to_string(&p, crate::files::input::Purpose::Config)
            .map_err(|err| format!("cannot read {}: {}", p.display(), err))?;
        evals.push((e.clone(), md));
    }
    Ok(Regression {
        engines: meta.engines,
        runs,
        evals,
    })
}

/// Joins the directories of every shard of one regression (`--shard 1/N` ... `N/N`, in any
/// order) into `out`: each run's merged report (as the unsharded run writes it),
/// `summary.md` and `regress.json`. A missing or repeated shard, or a directory of another
/// regression, is an error before anything is written.
pub fn merge(dirs: &[PathBuf], out: &Path) -> FlowResult<Vec<RegressRun>> {
    let mut metas = Vec::new();
    for d in dirs {
        metas.push(read_meta(d)?);
    }
    let first = metas.first().ok_or("no regress directory given")?.clone();
    let n = match first.shard {
        Some((_, n)) => n,
        None => {
            return Err(format!(
                "{} holds a whole regression, not a shard: nothing to merge",
                dirs[0].display()
            ))
        }
    };
    let mut have = vec![false; n];
    for (d, m) in dirs.iter().zip(&metas) {
        let same = RegressMeta {
            shard: first.shard,
            ..m.clone()
        };
        let k = match m.shard {
            Some((k, mn)) if mn == n && same == first => k,
            _ => {
                return Err(format!(
                    "{} holds another regression than {} (its engines, lines, profile, runs \
                     or shard count differ)",
                    d.display(),
                    dirs[0].display()
                ))
            }
        };
        if std::mem::replace(&mut have[k - 1], true) {
            return Err(format!("shard {}/{} is given twice", k, n));
        }
    }
    if let Some(k) = have.iter().position(|h| !h) {
        return Err(format!(
            "shard {}/{} is missing: give the directories of all {} shards",
            k + 1,
            n,
            n
        ));
    }
    let mut runs = Vec::new();
    for name in &first.runs {
        let mut parts = Vec::new();
        for d in dirs {
            let p = d.join(name).join("report.json");
            if p.exists() {
                parts.push(read_report(&p)?);
            }
        }
        if parts.is_empty() {
            return Err(format!("no shard holds the run `{}`", name));
        }
        let report = super::merge::merge_reports(parts)?;
        runs.push(RegressRun {
            name: name.clone(),
            report,
        });
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {}", out.display(), e))?;
    for r in &runs {
        job::write(&r.report, &out.join(&r.name))?;
    }
    for e in &first.evals {
        let from = dirs
            .iter()
            .map(|d| d.join("eval").join(e))
            .find(|p| p.is_dir())
            .ok_or_else(|| format!("no shard holds the evaluation of {}", e))?;
        let to = out.join("eval").join(e);
        std::fs::create_dir_all(&to)
            .map_err(|err| format!("cannot create {}: {}", to.display(), err))?;
        for f in ["report.md", "report.json", "report.html"] {
            std::fs::copy(from.join(f), to.join(f))
                .map_err(|err| format!("cannot copy {}: {}", from.join(f).display(), err))?;
        }
    }
    let meta = RegressMeta {
        shard: None,
        ..first
    };
    let mut set = crate::files::FileSet::new();
    set.add(
        out.join(META),
        serde_json::to_string_pretty(&meta).map_err(|e| e.to_string())?,
    );
    set.add(out.join("summary.md"), summary(&runs, None));
    set.commit()?;
    Ok(runs)
}

/// Evaluates `engine`'s golden models at the default parameters into `dir/<engine>/`:
/// every synthetic class (`lines` lines each, at most 20,000), or for an engine without
/// classes (ZVC), the sweeps' synthetic ReLU tensor.
fn eval_run(engine: EngineRef, lines: u64, dir: &Path, ui: &Ui) -> FlowResult<()> {
    let s = ui.step(&format!("eval {}", engine.name()));
    let tmp = tempfile::NamedTempFile::new().map_err(|e| format!("cannot write a trace: {}", e))?;
    let (traces, classes) = if !engine.has_synthetic_classes() {
        std::fs::write(tmp.path(), super::sweep::default_trace())
            .map_err(|e| format!("cannot write a trace: {}", e))?;
        (vec![tmp.path().to_path_buf()], Vec::new())
    } else {
        (Vec::new(), vec!["all".to_string()])
    };
    let req = engines::EvalRequest {
        traces,
        classes,
        count: lines.min(20_000) as usize,
        seed: 1,
        lambda: None,
        pj_per_one: None,
        toggles: None,
    };
    let mut out = engine.eval(&Config::default(), &req)?;
    // The temporary trace by what it holds, so that the report is the same on every run.
    let tmp_name = tmp.path().display().to_string();
    let what = "synthetic-relu-4x64x32x32-60pct-zeros-fp32";
    out.markdown = out.markdown.replace(&tmp_name, what);
    out.json = out.json.replace(&tmp_name, what);
    super::write_eval(engine, &out, &dir.join(engine.name()))?;
    s.done("report.{md,json,html}");
    Ok(())
}

/// `summary.md`: one row per run and per co-simulated unit (of shard `k` of `n`, if given).
pub fn summary(runs: &[RegressRun], shard: Option<(usize, usize)>) -> String {
    let mut s = String::from("# hwzip regress\n\n");
    if let Some((k, n)) = shard {
        let _ = writeln!(s, "Shard {} of {}.\n", k, n);
    }
    let _ = writeln!(
        s,
        "| run | engine | unit | params | lines | cycles | mismatches | Mcycles/s |\n\
         |---|---|---|---|---:|---:|---:|---:|"
    );
    for run in runs {
        for c in &run.report.cosim {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {:.2} |",
                run.name,
                c.engine,
                c.unit,
                c.params,
                c.stats.lines,
                c.stats.cycles,
                c.stats.mismatches,
                c.stats.cycles_per_second() / 1e6
            );
        }
    }
    let _ = writeln!(
        s,
        "\n| run | seconds | synthesis rows | result |\n|---|---:|---:|---|"
    );
    for run in runs {
        let _ = writeln!(
            s,
            "| {} | {:.0} | {} | {} |",
            run.name,
            run.report.seconds,
            run.report.synth.len(),
            if run.report.ok { "ok" } else { "MISMATCHES" }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The long tier's cache step on a short run: both configurations, counters equal to
    /// the model's, a report directory, and rows in the summary.
    #[test]
    fn cache_step_runs_both_configurations() {
        let out = tempfile::tempdir().unwrap();
        let o = RegressOptions {
            configs: PathBuf::new(),
            out: out.path().to_path_buf(),
            lines: 3_000,
            gate_cosim: 0,
            jobs: 1,
            shard: None,
            engines: Vec::new(),
            profile: Profile::Paper,
            resume: false,
            prove_budget: std::time::Duration::ZERO,
        };
        let run = cache_run(&o, &Ui::quiet()).unwrap();
        assert!(run.report.ok);
        assert_eq!(run.report.cosim.len(), 2);
        assert!(run.report.cosim.iter().all(|c| c.stats.lines == 3_000));
        assert!(out.path().join("cache/report.md").exists());
        let md = summary(&[run], None);
        assert!(md.contains("| cache | block | cache_"), "{}", md);
    }
}
