//! `hwzip regress`: the long tier, whole, sharded or merged.

use super::args::{check_lines, default_jobs, engine_arg, gate_count};
use hwzip::engines;
use hwzip::flow;
use std::path::PathBuf;

/// The arguments of `hwzip regress`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory of extra parameter sets.
    #[arg(long, default_value = "verif/configs")]
    pub configs: PathBuf,
    /// Output directory (one report per run).
    #[arg(long, default_value = "build/regress")]
    pub out: PathBuf,
    /// Co-simulation lines per unit.
    #[arg(long, default_value_t = 1_000_000)]
    pub lines: u64,
    /// Gate-level co-simulation lines per ZVC osu018 netlist (0: none).
    #[arg(long, default_value_t = 2_000, value_parser = gate_count())]
    pub gate_cosim: u64,
    /// Worker threads (default: the number of cores).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Only shard K of N of each run's independent steps (e.g. `--shard 2/4`); join the
    /// shards' directories with --merge.
    #[arg(long)]
    pub shard: Option<String>,
    /// Only these engines (repeatable; default all). The shared cache + MSHR block runs
    /// with cpack-lossy or buddy.
    #[arg(long, value_parser = engine_arg())]
    pub engine: Vec<String>,
    /// `paper` (the long tier) or `quick` (osu018, fast synthesis: a small regression).
    #[arg(long, default_value = "paper")]
    pub profile: String,
    /// Merge these regress directories (every shard of one regression) into --out
    /// instead of running.
    #[arg(long, num_args = 1.., conflicts_with_all = ["shard", "engine", "profile", "lines", "gate_cosim", "configs", "resume", "prove_budget_s"])]
    pub merge: Vec<PathBuf>,
    /// Keep the runs --out already holds a report of (a regression stopped part way goes
    /// on); --out must hold the same regression (options and parameter sets).
    #[arg(long)]
    pub resume: bool,
    /// CPU seconds per formal proof of the default configuration (`hwzip prove`'s
    /// properties of every unit, round trip and link code; 0: no proofs; `paper` profile
    /// only).
    #[arg(long, default_value_t = 600, value_name = "S")]
    pub prove_budget_s: u64,
}

/// Runs `hwzip regress`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        configs,
        out,
        lines,
        gate_cosim,
        jobs,
        shard,
        engine,
        profile,
        merge,
        resume,
        prove_budget_s,
    } = args;
    let runs = if merge.is_empty() {
        check_lines(lines)?;
        let o = flow::regress::RegressOptions {
            configs,
            out: out.clone(),
            lines,
            gate_cosim,
            jobs: default_jobs(jobs)?,
            shard: shard.as_deref().map(flow::job::parse_shard).transpose()?,
            engines: engine
                .iter()
                .map(|e| engines::by_name(e))
                .collect::<Result<Vec<_>, _>>()?,
            profile: flow::job::Profile::from_name(&profile)?,
            resume,
            prove_budget: std::time::Duration::from_secs(prove_budget_s),
        };
        let runs = flow::regress::run(&o, &flow::progress::Ui::new())?;
        outln!("{}", flow::regress::summary(&runs, o.shard));
        runs
    } else {
        let runs = flow::regress::merge(&merge, &out)?;
        outln!("{}", flow::regress::summary(&runs, None));
        runs
    };
    outln!("reports in {}", out.display());
    Ok(runs.iter().all(|r| r.report.ok))
}
