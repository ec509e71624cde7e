//! `hwzip prove` and `flow --prove`: which proofs an engine gets: the stream contract ([`Property::Hold`],
//! [`Property::Reset`]) of every unit with streams, and every round trip the engine declares
//! ([`crate::engines::Engine::round_trips`]); with the planted faults, the same proofs on
//! each faulty copy.

use crate::config::Config;
use crate::engines::EngineRef;
use crate::formal::faults::{self, Planted};
use crate::formal::run::ProofJob;
use crate::formal::{wrapper, Property, Solver};
use crate::hdl::Module;
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
    /// `hwzip prove`'s defaults: every unit and property, depth 12, induction, Boolector,
    /// 600 CPU seconds per proof, cached, no faults, no replay.
    pub fn defaults() -> Request {
        Request {
            unit: None,
            properties: Vec::new(),
            depth: 12,
            induction: true,
            reach_max: 64,
            solver: Solver::Boolector,
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

/// One thing to prove: the unit's name, its top, the property and, for a round trip, its
/// description.
type Target = (
    String,
    Arc<Module>,
    Property,
    Option<crate::formal::RoundTrip>,
);

/// The units (name, top) and round trips of `engine` at `cfg` that `req` selects.
fn targets(engine: EngineRef, cfg: &Config, req: &Request) -> Result<Vec<Target>, String> {
    let wants = |p: Property| req.properties.is_empty() || req.properties.contains(&p);
    let mut v = Vec::new();
    let mut known = Vec::new();
    for d in engine.units(cfg)? {
        known.push(d.unit.to_string());
        if req.unit.as_deref().is_some_and(|u| u != d.unit) || d.top.streams.is_empty() {
            continue;
        }
        for p in [Property::Hold, Property::Reset] {
            // A unit without a reset (combinational) has no reset behaviour to prove.
            if wants(p) && (p != Property::Reset || d.top.has_reset) {
                v.push((d.unit.to_string(), d.top.clone(), p, None));
            }
        }
    }
    for rt in engine.round_trips(cfg)? {
        known.push(rt.unit.clone());
        if req.unit.as_deref().is_some_and(|u| u != rt.unit) || !wants(Property::RoundTrip) {
            continue;
        }
        v.push((
            rt.unit.clone(),
            rt.top.clone(),
            Property::RoundTrip,
            Some(rt),
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
    for (unit, top, prop, rt) in targets(engine, cfg, req)? {
        let files = crate::hdl::emit::emit_design(&top).map_err(|e| e.to_string())?;
        let w = match &rt {
            Some(rt) => wrapper::round_trip(rt)?,
            None => wrapper::contract(&top, prop),
        };
        let job = ProofJob {
            engine: engine.name().to_string(),
            unit: unit.clone(),
            config: config.to_string(),
            files: files.clone(),
            wrapper: w,
            property: prop,
            depth: req.depth,
            induction: req.induction,
            reach_max: req.reach_max,
            solver: req.solver,
            budget: req.budget,
            work_dir: out.join("work").join(format!("{unit}-{}", prop.tag())),
            use_cache: req.use_cache,
            top: top.clone(),
            replay: req.replay,
            round_trip: rt.clone(),
        };
        if req.faults {
            let planted: Vec<Planted> = match prop {
                Property::RoundTrip => faults::datapath(&files),
                _ => faults::protocol(&top, &files)
                    .into_iter()
                    .filter(|f| f.name.starts_with(fault_kind(prop)))
                    .collect(),
            };
            for f in planted {
                let mut j = job.clone();
                j.files[f.file].1 = f.text;
                j.induction = false;
                j.work_dir = out.join("work").join(format!(
                    "{unit}-{}-{}",
                    prop.tag(),
                    f.name.replace(':', "-")
                ));
                jobs.push(Planned {
                    job: j,
                    fault: Some((f.name, f.what)),
                });
            }
        }
        jobs.push(Planned { job, fault: None });
    }
    Ok(jobs)
}

/// The protocol fault that breaks `prop`.
fn fault_kind(prop: Property) -> &'static str {
    match prop {
        Property::Hold => "ignore-ready",
        Property::Reset => "valid-in-reset",
        Property::RoundTrip => "mux",
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
    let results: Mutex<Vec<Option<Result<crate::formal::run::ProofResult, String>>>> =
        Mutex::new(vec![None; plans.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(plans.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = plans.get(i) else { break };
                let r = crate::formal::run::prove(&p.job).and_then(|r| replayed(&p.job, r));
                if let Ok(r) = &r {
                    let fault = p
                        .fault
                        .as_ref()
                        .map_or(String::new(), |f| format!(" [{}]", f.0));
                    log(&format!(
                        "{} {} {}{}: {} ({}, {:.1} s{})",
                        r.engine,
                        r.unit,
                        r.property.tag(),
                        fault,
                        r.outcome.word(),
                        r.method(),
                        r.seconds,
                        if r.cached { ", cached" } else { "" }
                    ));
                }
                let failed = r.is_err();
                if let Ok(mut v) = results.lock() {
                    v[i] = Some(r);
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
        let r = r?;
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

#[cfg(test)]
#[path = "prove_tests.rs"]
mod tests;
