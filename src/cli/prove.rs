//! `hwzip prove`: formal proofs of an engine's units (stream contract, round trip).

use super::args::{config_label, default_jobs, engine_arg, load_config};
use hwzip::engines;
use hwzip::flow::prove as plan;
use hwzip::formal::{self, Property, Solver};
use std::path::PathBuf;
use std::time::Duration;

/// The arguments of `hwzip prove`.
#[derive(clap::Args)]
pub struct Args {
    /// Engine [default: zvc].
    #[arg(long, value_parser = engine_arg())]
    pub engine: Option<String>,
    /// Only this unit, a round trip (`loopback`, `bdi_loopback`, ...) or a link code
    /// (`dbi_beat_g8`, ...).
    #[arg(long)]
    pub unit: Option<String>,
    /// YAML configuration (parameters); defaults otherwise.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Only these properties (hold | reset | accept | drain | progress | error | sums |
    /// round-trip | code); repeatable [default: all].
    #[arg(long)]
    pub property: Vec<String>,
    /// BMC depth in cycles from reset (cycle 0 is in reset).
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub depth: u32,
    /// Skip the k-induction attempt after BMC.
    #[arg(long)]
    pub no_induction: bool,
    /// Solver (bitwuzla | boolector | z3 | yices) [default: bitwuzla where installed, else
    /// boolector].
    #[arg(long)]
    pub solver: Option<String>,
    /// CPU seconds per proof (Yosys, BMC and induction together).
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub budget_s: u64,
    /// Proofs run at once [default: the number of cores].
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Also prove each planted fault of the unit, which must give a counterexample.
    #[arg(long)]
    pub faults: bool,
    /// Replay each counterexample in Verilator (the cosim build), comparing its outputs with
    /// the solver's trace and checking the property on them; `replay.vcd` beside the work.
    #[arg(long)]
    pub replay: bool,
    /// Prove again even when a cached result matches.
    #[arg(long)]
    pub no_cache: bool,
    /// Report directory (prove.md, prove.json, prove.html, the counterexample VCDs).
    #[arg(long, default_value = "build/prove")]
    pub out: PathBuf,
}

/// Runs `hwzip prove`: `Ok(false)` when a proof found a counterexample or a planted fault
/// was not caught.
pub fn run(args: Args) -> Result<bool, String> {
    let engine = engines::by_name(args.engine.as_deref().unwrap_or("zvc"))?;
    let cfg = load_config(&args.config)?;
    cfg.validate()?;
    let solver = match &args.solver {
        Some(s) => Solver::parse(s)?,
        None => formal::run::default_solver(),
    };
    let properties = args
        .property
        .iter()
        .map(|p| Property::parse(p))
        .collect::<Result<Vec<_>, _>>()?;
    let jobs = default_jobs(args.jobs)?;
    if !formal::run::solver_present(solver) {
        return Err(format!(
            "solver `{}` not found: run scripts/setup.sh (Bitwuzla, Boolector) or install it \
             (HWZIP_FORMAL_BIN names a folder searched first)",
            solver.name()
        ));
    }
    let req = plan::Request {
        unit: args.unit,
        properties,
        depth: args.depth,
        induction: !args.no_induction,
        reach_max: args.depth.max(64),
        solver,
        budget: Duration::from_secs(args.budget_s),
        use_cache: !args.no_cache,
        faults: args.faults,
        replay: args.replay,
    };
    let config = config_label(&args.config);
    let plans = plan::plan(engine, &cfg, &config, &req, &args.out)?;
    eprintln!(
        "{} proofs of {} on {} thread(s) ...",
        plans.len(),
        engine.name(),
        jobs
    );
    let report = plan::execute(plans, jobs, &|m| eprintln!("{m}"))?;
    let mut set = hwzip::files::FileSet::new();
    formal::report::add(&mut set, &report, &args.out)?;
    set.commit()?;
    out!("{}", formal::report::markdown(&report));
    outln!("\nreports: {}/prove.{{md,json,html}}", args.out.display());
    Ok(report.passed())
}
