//! `hwzip sweep`: a parameter grid of one engine, with its Pareto fronts.

use super::args::{check_lines, default_jobs, engine_arg, load_config};
use hwzip::engines;
use hwzip::files::input;
use hwzip::flow;
use std::path::PathBuf;

/// The arguments of `hwzip sweep`.
#[derive(clap::Args)]
pub struct Args {
    /// Engine.
    #[arg(long, default_value = "zvc", value_parser = engine_arg())]
    pub engine: String,
    /// YAML configuration the grid's values are set in; defaults otherwise.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Grid: keys of the engine's configuration section with their values,
    /// `key=v1,v2; key2=v3,v4` (nested keys dotted: `bpc.dec_tokens=2,4`).
    #[arg(long, conflicts_with = "grid_file", required_unless_present_any = ["grid_file", "merge"])]
    pub grid: Option<String>,
    /// Grid as a YAML mapping of key to a list of values.
    #[arg(long)]
    pub grid_file: Option<PathBuf>,
    /// Only these units of the engine, comma-separated [default: every synthesizable
    /// unit].
    #[arg(long, value_delimiter = ',')]
    pub unit: Vec<String>,
    /// Liberty: osu018 | nangate45 | sky130hd | a path; repeatable [default: osu018].
    #[arg(long)]
    pub liberty: Vec<String>,
    /// Clock period in ns for every library [default: the config's].
    #[arg(long)]
    pub clock_ns: Option<f64>,
    /// Co-simulation lines per unit and point (random stalls).
    #[arg(long, default_value_t = 2_000)]
    pub lines: u64,
    /// File whose compression ratio each point reports [default: a synthetic ReLU
    /// activation tensor, 1 MiB].
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Points in parallel (default: the number of cores).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Run only shard K of N of the points (every N-th point from the K-th), e.g. `2/4`;
    /// join the shards' directories with --merge.
    #[arg(long)]
    pub shard: Option<String>,
    /// Merge these sweep directories (shards of one sweep) into --out instead of running.
    #[arg(long, num_args = 1.., conflicts_with_all = ["grid", "grid_file", "shard"])]
    pub merge: Vec<PathBuf>,
    /// Output directory (points/, sweep.md, sweep.csv, sweep.json, report.html).
    #[arg(long, default_value = "build/sweep")]
    pub out: PathBuf,
}

/// Runs (or merges) a sweep and prints its table; fails if a point failed.
pub fn run(a: Args) -> Result<bool, String> {
    use flow::sweep;
    let report = if !a.merge.is_empty() {
        sweep::merge(&a.merge, &a.out)?
    } else {
        let engine = engines::by_name(&a.engine)?;
        let mut base = load_config(&a.config)?;
        if let Some(c) = a.clock_ns {
            base.synth.clock_ns = c;
            base.synth.clock_ns_by_library.clear();
        }
        base.synth.libraries = if a.liberty.is_empty() {
            vec!["osu018".into()]
        } else {
            a.liberty
        };
        base.validate()?;
        check_lines(a.lines)?;
        let grid = match (&a.grid, &a.grid_file) {
            (Some(g), _) => sweep::Grid::parse(g)?,
            (None, Some(f)) => {
                let text = input::read_to_string(f, input::Purpose::Config)
                    .map_err(|e| format!("cannot read grid {}: {}", f.display(), e))?;
                sweep::Grid::from_yaml(&text)?
            }
            (None, None) => return Err("give --grid, --grid-file or --merge".into()),
        };
        let o = sweep::SweepOptions {
            engine,
            libraries: base.synth.libraries.clone(),
            base,
            grid,
            units: a.unit,
            lines: a.lines,
            trace: a.trace,
            jobs: default_jobs(a.jobs)?,
            shard: a.shard.as_deref().map(flow::job::parse_shard).transpose()?,
            out: a.out.clone(),
        };
        sweep::run(&o, &|m| eprintln!("{}", m))?
    };
    out!("{}", sweep::markdown(&report));
    outln!(
        "\nreports: {}/sweep.{{md,csv,json}}, {}/report.html",
        a.out.display(),
        a.out.display()
    );
    Ok(sweep::passed(&report))
}
