//! `hwzip prove` and `flow --prove`: which proofs an engine gets: the stream contract ([`Property::Hold`],
//! [`Property::Reset`]) of every unit with streams, and every round trip the engine declares
//! ([`crate::engines::Engine::round_trips`]) and every link code it declares
//! ([`crate::engines::Engine::codes`]); with the planted faults, the same proofs on
//! each faulty copy.

use crate::config::Config;
use crate::engines::EngineRef;
use crate::formal::faults::{self, Planted};
use crate::formal::run::ProofJob;
use crate::formal::{wrapper, Outcome, Property, Solver};
use crate::hdl::{Dir, Module};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// What to prove.
#[derive(Clone, Debug)]
pub struct Request {
    /// Only this unit (a unit or a round trip's name).
    pub unit: Option<String>,
    /// Only these properties (all when empty).
    pub properties: Vec<Property>,
    /// BMC depth, cycles.
    pub depth: u32,
    /// Try k-induction after BMC.
    pub induction: bool,
    /// Longest search for the state each property is checked in.
    pub reach_max: u32,
    /// The solver.
    pub solver: Solver,
    /// CPU budget per proof.
    pub budget: Duration,
    /// Use the cache.
    pub use_cache: bool,
    /// Also prove each planted fault (which must fail).
    pub faults: bool,
    /// Replay each counterexample in Verilator.
    pub replay: bool,
}

impl Request {
    /// `hwzip prove`'s defaults: every unit and property, depth 12, induction, the default
    /// solver ([`crate::formal::run::default_solver`]),
    /// 600 CPU seconds per proof, cached, no faults, no replay.
    pub fn defaults() -> Request {
        Request {
            unit: None,
            properties: Vec::new(),
            depth: 12,
            induction: true,
            reach_max: 64,
            solver: crate::formal::run::default_solver(),
            budget: Duration::from_secs(600),
            use_cache: true,
            faults: false,
            replay: false,
        }
    }
}

/// One planned proof, with the fault it carries if any.
#[derive(Clone, Debug)]
pub struct Planned {
    /// The job.
    pub job: ProofJob,
    /// The planted fault (name, what the edit does), if this is a fault run.
    pub fault: Option<(String, String)>,
}

impl Planned {
    /// (engine, unit, property, fault) of a fault run: the fault of a split round trip is
    /// one fault over its cases.
    fn fault_key(&self) -> (String, String, &'static str, String) {
        let f = self.fault.as_ref().map_or("", |f| f.0.as_str());
        let j = &self.job;
        (
            j.engine.clone(),
            j.unit.clone(),
            j.property.tag(),
            f.to_string(),
        )
    }
}

/// What a target's wrapper is built from, besides the unit's streams.
#[derive(Clone)]
enum Subject {
    /// The unit's stream contract or a bound: its streams say everything.
    Streams,
    /// A round trip on a loop-back top.
    RoundTrip(crate::formal::RoundTrip),
    /// A combinational link code.
    Code(crate::formal::Code),
    /// A decompressor's error flag against its reference.
    Error(crate::formal::ErrorFlag),
    /// A prefix-sum network: its cells and its wiring.
    Sums(crate::formal::SumNet),
}

/// One thing to prove: the unit's name, its top, the property and what else it is built
/// from.
#[derive(Clone)]
struct Target {
    unit: String,
    top: Arc<Module>,
    property: Property,
    subject: Subject,
    /// The case of a split round trip (an index into its cases; one past: every other value).
    case: Option<usize>,
}

impl Target {
    fn new(unit: String, top: Arc<Module>, property: Property, subject: Subject) -> Target {
        Target {
            unit,
            top,
            property,
            subject,
            case: None,
        }
    }

    /// The round trip it proves, if any.
    fn round_trip(&self) -> Option<&crate::formal::RoundTrip> {
        match &self.subject {
            Subject::RoundTrip(rt) => Some(rt),
            _ => None,
        }
    }
}

/// `t`, or one target per case when it is a split round trip.
fn cases(t: Target) -> Vec<Target> {
    match t.round_trip().and_then(|rt| rt.split.as_ref()) {
        Some(sp) => (0..=sp.cases.len())
            .map(|i| Target {
                case: Some(i),
                ..t.clone()
            })
            .collect(),
        None => vec![t],
    }
}

/// The short name of `t`'s case of a split round trip, lower case (`b4d1`, `cpack`).
fn case_name(t: &Target) -> Option<String> {
    let sp = t.round_trip()?.split.as_ref()?;
    Some(sp.cases.get(t.case?)?.0.to_lowercase())
}

/// The work-folder suffix of a case.
fn case_tag(case: Option<usize>) -> String {
    case.map_or(String::new(), |i| format!("-c{i}"))
}

/// The units (name, top), round trips and link codes of `engine` at `cfg` that `req` selects.
fn targets(engine: EngineRef, cfg: &Config, req: &Request) -> Result<Vec<Target>, String> {
    let wants = |p: Property| req.properties.is_empty() || req.properties.contains(&p);
    let skip = |u: &str| req.unit.as_deref().is_some_and(|x| x != u);
    let mut v = Vec::new();
    let mut known = Vec::new();
    for d in engine.units(cfg)? {
        known.push(d.unit.to_string());
        if skip(d.unit) || d.top.streams.is_empty() {
            continue;
        }
        let n_in = d.top.streams.iter().filter(|s| s.dir == Dir::In).count();
        let n_out = d.top.streams.len() - n_in;
        for p in [
            Property::Hold,
            Property::Reset,
            Property::Accept,
            Property::Drain,
            Property::Progress,
        ] {
            let applies = match p {
                // A unit without a reset (combinational) has no reset behaviour to prove.
                Property::Reset => d.top.has_reset,
                // A unit with more than one input (a memory's answers) may wait for an
                // answer the solver never gives: its input wait is not the unit's own.
                Property::Accept => n_in == 1 && n_out > 0,
                Property::Drain => n_in == 1 && n_out > 0,
                // A unit with more than one input queues requests: its drain grows with the
                // queue, its silences while a beat is due do not.
                Property::Progress => n_in > 1 && n_out > 0,
                _ => true,
            };
            if wants(p) && applies {
                v.push(Target::new(
                    d.unit.to_string(),
                    d.top.clone(),
                    p,
                    Subject::Streams,
                ));
            }
        }
    }
    for e in engine.error_flags(cfg)? {
        known.push(e.unit.clone());
        if skip(&e.unit) || !wants(Property::Error) {
            continue;
        }
        v.push(Target::new(
            e.unit.clone(),
            e.top.clone(),
            Property::Error,
            Subject::Error(e),
        ));
    }
    for n in engine.sum_nets(cfg)? {
        if !known.contains(&n.unit) {
            known.push(n.unit.clone());
        }
        if skip(&n.unit) || !wants(Property::Sums) {
            continue;
        }
        v.push(Target::new(
            n.unit.clone(),
            n.top.clone(),
            Property::Sums,
            Subject::Sums(n),
        ));
    }
    for rt in engine.round_trips(cfg)? {
        known.push(rt.unit.clone());
        if skip(&rt.unit) || !wants(Property::RoundTrip) {
            continue;
        }
        v.push(Target::new(
            rt.unit.clone(),
            rt.top.clone(),
            Property::RoundTrip,
            Subject::RoundTrip(rt),
        ));
    }
    for c in engine.codes(cfg)? {
        known.push(c.unit.clone());
        if skip(&c.unit) || !wants(Property::Code) {
            continue;
        }
        v.push(Target::new(
            c.unit.clone(),
            c.enc.clone(),
            Property::Code,
            Subject::Code(c),
        ));
    }
    if let Some(u) = &req.unit {
        if !known.iter().any(|k| k == u) {
            return Err(format!(
                "unknown unit `{}` for {} proofs (known: {})",
                crate::files::quote(u),
                engine.name(),
                known.join(", ")
            ));
        }
    }
    Ok(v)
}

/// The Verilog files of a code's encoder and decoder, each module once, leaves first.
fn code_files(c: &crate::formal::Code) -> Result<Vec<(String, String)>, String> {
    let mut files = crate::hdl::emit::emit_design(&c.enc).map_err(|e| e.to_string())?;
    for f in crate::hdl::emit::emit_design(&c.dec).map_err(|e| e.to_string())? {
        if !files.iter().any(|g| g.0 == f.0) {
            files.push(f);
        }
    }
    Ok(files)
}

/// The proofs of `engine` at `cfg` (described as `config` in reports) that `req` selects,
/// working under `out`.
pub fn plan(
    engine: EngineRef,
    cfg: &Config,
    config: &str,
    req: &Request,
    out: &Path,
) -> Result<Vec<Planned>, String> {
    let mut jobs = Vec::new();
    let mut split_faults = Vec::new();
    for t in targets(engine, cfg, req)?.into_iter().flat_map(cases) {
        let (unit, top, prop) = (t.unit.clone(), t.top.clone(), t.property);
        let emit = || crate::hdl::emit::emit_design(&top).map_err(|e| e.to_string());
        let (files, w) = match &t.subject {
            Subject::RoundTrip(rt) => {
                let mut files = emit()?;
                for n in &rt.sums {
                    files = crate::formal::sums::abstracted(&files, n)?;
                }
                (files, wrapper::round_trip(rt, t.case)?)
            }
            Subject::Code(c) => (code_files(c)?, wrapper::code(c)?),
            Subject::Error(e) => (emit()?, wrapper::error_flag(e)?),
            Subject::Sums(n) => (emit()?, wrapper::sum_cells(n)),
            Subject::Streams => (emit()?, wrapper::contract(&top, prop)),
        };
        let job = ProofJob {
            engine: engine.name().to_string(),
            unit: unit.clone(),
            config: config.to_string(),
            files: files.clone(),
            wrapper: w,
            property: prop,
            // A code and the cells of a sum network have no state: one step covers every
            // input, and induction closes at 1.
            depth: if matches!(prop, Property::Code | Property::Sums) {
                1
            } else {
                req.depth
            },
            induction: req.induction,
            reach_max: req.reach_max,
            past_reach: 0,
            solver: req.solver,
            budget: req.budget,
            work_dir: out
                .join("work")
                .join(format!("{unit}-{}{}", prop.tag(), case_tag(t.case))),
            use_cache: req.use_cache,
            top: top.clone(),
            // The replay re-checks the stream contract and the round trip (a code has no
            // cycles; a bound's counterexample is a wait, seen in the solver's trace).
            replay: req.replay
                && matches!(prop, Property::Hold | Property::Reset | Property::RoundTrip),
            case: t
                .round_trip()
                .and_then(|rt| Some(rt.split.as_ref()?.label(t.case?))),
            round_trip: t.round_trip().cloned(),
            sums: match &t.subject {
                Subject::Sums(n) => Some(n.clone()),
                _ => None,
            },
        };
        if req.faults && !matches!(prop, Property::Drain | Property::Progress) {
            let planted: Vec<Planted> = match &t.subject {
                Subject::RoundTrip(_) => faults::datapath(&files),
                Subject::Code(_) => faults::code(&files),
                Subject::Error(e) => faults::flag_low(&top, &files, &e.output, &e.flag),
                Subject::Sums(n) => faults::sums(&files, n),
                Subject::Streams => faults::protocol(&top, &files)
                    .into_iter()
                    .filter(|f| f.name.starts_with(fault_kind(prop)))
                    .collect(),
            };
            for f in planted {
                // A split case's label found in the fault's name or file (BDI `B4D1` in
                // `b4d1_dsel3`, the link's `Cpack` in `cpack_comp_l16.v`): its case first.
                let first = case_name(&t).is_some_and(|c| {
                    [&f.name, &files[f.file].0]
                        .iter()
                        .any(|x| x.to_lowercase().contains(&c))
                });
                let mut j = job.clone();
                j.files[f.file].1 = f.text;
                j.induction = false;
                j.work_dir = out.join("work").join(format!(
                    "{unit}-{}{}-{}",
                    prop.tag(),
                    case_tag(t.case),
                    f.name.replace(':', "-")
                ));
                let p = Planned {
                    job: j,
                    fault: Some((f.name, f.what)),
                };
                match t.case {
                    Some(c) => split_faults.push(((p.fault_key(), !first, c), p)),
                    None => jobs.push(p),
                }
            }
        }
        jobs.push(Planned { job, fault: None });
    }
    // A split round trip's faults after its cases, each fault's cases in a row (the hinted
    // case first): once one case catches the fault, `execute` skips the others.
    split_faults.sort_by(|a, b| a.0.cmp(&b.0));
    jobs.extend(split_faults.into_iter().map(|(_, p)| p));
    Ok(jobs)
}

/// The protocol fault that breaks `prop`.
fn fault_kind(prop: Property) -> &'static str {
    match prop {
        Property::Hold => "ignore-ready",
        Property::Reset => "valid-in-reset",
        Property::Accept => "ready-low",
        Property::Error => "flag-low",
        Property::Sums => "sums",
        Property::RoundTrip | Property::Code | Property::Drain | Property::Progress => "mux",
    }
}

/// `r` with its counterexample replayed in Verilator when `job` asks for it; Verilator's
/// waveform goes to `replay.vcd` in the job's work folder.
fn replayed(
    job: &ProofJob,
    mut r: crate::formal::run::ProofResult,
) -> Result<crate::formal::run::ProofResult, String> {
    if let (true, Some(vcd)) = (job.replay, r.vcd.clone()) {
        std::fs::create_dir_all(&job.work_dir)
            .map_err(|e| format!("{}: {e}", job.work_dir.display()))?;
        let out = job.work_dir.join("replay.vcd");
        r.replay = Some(crate::formal::replay::replay(
            &job.top,
            &job.files,
            job.property,
            job.round_trip.as_ref(),
            &vcd,
            r.depth as usize,
            &out,
        )?);
    }
    Ok(r)
}

/// `r` with a note naming the prefix-sum networks its round trip took as proved (property
/// `sums`), which the report must show beside its result.
fn with_sums_note(
    job: &ProofJob,
    mut r: crate::formal::run::ProofResult,
) -> crate::formal::run::ProofResult {
    let nets: Vec<String> = job
        .round_trip
        .iter()
        .flat_map(|rt| &rt.sums)
        .map(|n| format!("`{}` of {}", n.output, n.module))
        .collect();
    if !nets.is_empty() {
        let taken = format!("{} taken as proved by `sums`", nets.join(", "));
        r.note = if r.note.is_empty() {
            taken
        } else {
            format!("{}; {taken}", r.note)
        };
    }
    r
}

/// Runs `plans` on `jobs` threads, telling `log` each result as it comes; the report keeps
/// the plan's order. Errors (a tool missing or failing) stop the run.
pub fn execute(
    plans: Vec<Planned>,
    jobs: usize,
    log: &(dyn Fn(&str) + Sync),
) -> Result<crate::formal::report::ProveReport, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    type Slot = Option<Result<Option<crate::formal::run::ProofResult>, String>>;
    let results: Mutex<Vec<Slot>> = Mutex::new(vec![None; plans.len()]);
    // Faults of split round trips already caught by one of their cases.
    let caught = Mutex::new(std::collections::HashSet::new());
    let split_fault = |p: &Planned| p.fault.is_some() && p.job.case.is_some();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(plans.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = plans.get(i) else { break };
                if split_fault(p) && caught.lock().is_ok_and(|c| c.contains(&p.fault_key())) {
                    if let Ok(mut v) = results.lock() {
                        v[i] = Some(Ok(None));
                    }
                    continue;
                }
                let r = if p.job.property.has_bound() {
                    crate::formal::run::search_bound(&p.job)
                } else {
                    crate::formal::run::prove(&p.job)
                }
                .and_then(|r| replayed(&p.job, r))
                .map(|r| with_sums_note(&p.job, r));
                if let Ok(r) = &r {
                    let fault = p
                        .fault
                        .as_ref()
                        .map_or(String::new(), |f| format!(" [{}]", f.0));
                    log(&format!(
                        "{} {} {}{}: {} ({}, {:.1} s{})",
                        r.engine,
                        crate::formal::report::unit_cell(r),
                        crate::formal::report::property_cell(r),
                        fault,
                        r.outcome.word(),
                        r.method(),
                        r.seconds,
                        if r.cached { ", cached" } else { "" }
                    ));
                }
                let failed = r.is_err();
                let hit = r
                    .as_ref()
                    .is_ok_and(|r| r.outcome == Outcome::Counterexample);
                if split_fault(p) && hit {
                    if let Ok(mut c) = caught.lock() {
                        c.insert(p.fault_key());
                    }
                }
                if let Ok(mut v) = results.lock() {
                    v[i] = Some(r.map(Some));
                }
                if failed {
                    next.store(usize::MAX / 2, Ordering::SeqCst);
                }
            });
        }
    });
    let results = results.into_inner().map_err(|e| e.to_string())?;
    let mut report = crate::formal::report::ProveReport::default();
    for (p, r) in plans.into_iter().zip(results) {
        let Some(r) = r else {
            return Err("interrupted".into());
        };
        // A split fault another case caught first is not run.
        let Some(r) = r? else { continue };
        match p.fault {
            Some((fault, what)) => report.faults.push(crate::formal::report::FaultRow {
                engine: r.engine.clone(),
                unit: r.unit.clone(),
                fault,
                what,
                proof: r,
            }),
            None => report.proofs.push(r),
        }
    }
    Ok(report)
}

/// The proofs of `engines` at `cfg` (of `unit` only, in the engines that have it) that
/// `req` selects, reported under the configuration's name `label`, worked under `out`.
/// The solver must answer.
pub fn run_engines(
    cfg: &Config,
    label: &str,
    engines: &[EngineRef],
    unit: Option<&str>,
    req: &Request,
    jobs: usize,
    out: &Path,
) -> Result<crate::formal::report::ProveReport, String> {
    use crate::formal::run::solver_present;
    if !solver_present(req.solver) {
        return Err(format!(
            "{} not found: run scripts/setup.sh",
            req.solver.name()
        ));
    }
    let mut all = crate::formal::report::ProveReport::default();
    for &e in engines {
        let mut req = req.clone();
        req.unit = unit.map(str::to_string);
        let plans = match plan(e, cfg, label, &req, out) {
            // `unit` names a unit of some engines only.
            Err(_) if unit.is_some() => continue,
            p => p?,
        };
        let r = execute(plans, jobs, &|m| eprintln!("{m}"))?;
        all.proofs.extend(r.proofs);
        all.faults.extend(r.faults);
    }
    Ok(all)
}

#[cfg(test)]
#[path = "prove_tests.rs"]
mod tests;
