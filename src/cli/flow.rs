//! `hwzip flow`: the main job, every engine end to end.

use super::args::{check_lines, config_label, default_jobs, engine_arg, gate_count, load_config};
use hwzip::config::Config;
use hwzip::engines;
use hwzip::files::input;
use hwzip::flow;
use std::path::PathBuf;

/// The arguments of `hwzip flow`.
#[derive(clap::Args)]
pub struct Args {
    /// YAML configuration (parameters); defaults otherwise.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Defaults: `quick` (osu018, 10,000 lines per unit, -O1 models; minutes) or `paper`
    /// (osu018 + Nangate45 + sky130hd, 1,000,000 lines, -O2 models). The config file and
    /// the options below override it.
    #[arg(long, default_value = "quick")]
    pub profile: String,
    /// Only these engines (repeatable; default all).
    #[arg(long, value_parser = engine_arg())]
    pub engine: Vec<String>,
    /// Only this unit of the engines (co-simulation and synthesis).
    #[arg(long)]
    pub unit: Option<String>,
    /// Liberty: osu018 | nangate45 | sky130hd | a path; repeatable (overrides the profile).
    #[arg(long)]
    pub liberty: Vec<String>,
    /// Lines (windows, sectors) per unit in co-simulation (overrides the profile).
    #[arg(long)]
    pub lines: Option<u64>,
    /// Worker threads for independent steps (default: the number of cores).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Synthesize again even when a cached result matches.
    #[arg(long)]
    pub no_cache: bool,
    /// Output directory (rtl/, synth/, report.md, report.csv, report.json, cosim.md).
    #[arg(long, default_value = "build/flow")]
    pub out: PathBuf,
    /// Also co-simulate each synthesized netlist at gate level for this many windows.
    #[arg(long, default_value_t = 0, value_parser = gate_count())]
    pub gate_cosim: u64,
    /// Also measure energy per line of each synthesized netlist: this many lines of
    /// gate-level activity, OpenSTA `report_power` (energy.md). Slow: a traced build per
    /// netlist.
    #[arg(long, default_value_t = 0, value_parser = gate_count())]
    pub energy: u64,
    /// Start no new step after the first failure (default: every step runs, and the
    /// report lists the failed ones).
    #[arg(long)]
    pub fail_fast: bool,
    /// Also place and route the engines' leaf units on this FPGA (`ecp5-85k[:PACKAGE]`;
    /// `scripts/setup.sh --fpga`): fpga.md and fpga.json, as `hwzip synth --fpga` writes.
    #[arg(long)]
    pub fpga: Option<String>,
    /// Also prove the engines' units (`hwzip prove` at its defaults: stream contract and
    /// round trips, BMC and k-induction; needs the solvers of scripts/setup.sh):
    /// prove.md, prove.json and prove.html.
    #[arg(long)]
    pub prove: bool,
}

/// Runs `hwzip flow`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        config,
        profile,
        engine,
        unit,
        liberty,
        lines,
        jobs,
        no_cache,
        out,
        gate_cosim,
        energy,
        fail_fast,
        fpga,
        prove,
    } = args;
    let fpga = fpga
        .as_deref()
        .map(hwzip::synth::fpga::FpgaDevice::parse)
        .transpose()?;
    let profile = flow::job::Profile::from_name(&profile)?;
    let mut cfg = load_config(&config)?;
    let explicit = match &config {
        Some(p) => {
            let text = input::read_to_string(p, input::Purpose::Config)
                .map_err(|e| format!("cannot read config {}: {}", p.display(), e))?;
            hwzip::config::explicit_keys(&text)
        }
        None => Default::default(),
    };
    profile.apply(&mut cfg, &explicit);
    // Energy per line needs each leaf unit's netlist in one piece: no family reuse then.
    if energy > 0
        && !explicit.contains("synth.hierarchy")
        && cfg.synth.hierarchy == hwzip::config::Hierarchy::Families
    {
        cfg.synth.hierarchy = hwzip::config::Hierarchy::Reuse;
    }
    if let Some(l) = lines {
        check_lines(l)?;
        cfg.cosim.lines = l;
    }
    if !liberty.is_empty() {
        cfg.synth.libraries = liberty;
    }
    if no_cache {
        cfg.synth.cache = false;
    }
    cfg.validate()?;
    let engines = engine
        .iter()
        .map(|e| engines::by_name(e))
        .collect::<Result<Vec<_>, _>>()?;
    let jobs = default_jobs(jobs)?;
    if std::env::var_os("HWZIP_CXX_OPT").is_none() {
        hwzip::cosim::set_opt_level(profile.cxx_opt());
    }
    let opts = flow::job::FlowOptions {
        profile,
        engines,
        unit,
        jobs,
        out,
        gate_cosim,
        energy,
        synth: true,
        synth_units: Vec::new(),
        shard: None,
        fail_fast,
    };
    let label = config_label(&config);
    flow_cmd(&cfg, &opts, fpga.as_ref(), prove.then_some(label.as_str()))
}

/// Runs the flow, writes its reports and prints its tables and verdict.
fn flow_cmd(
    cfg: &Config,
    opts: &flow::job::FlowOptions,
    fpga: Option<&hwzip::synth::fpga::FpgaDevice>,
    prove: Option<&str>,
) -> Result<bool, String> {
    let ui = flow::progress::Ui::new();
    let mut r = flow::job::run(cfg, opts, &ui)?;
    if let Some(device) = fpga {
        r.fpga = fpga_rows(cfg, opts, device)?;
    }
    let fpga_ok = r.fpga.iter().all(|f| f.result.fits);
    if let Some(label) = prove {
        r.prove = Some(proofs(cfg, label, opts)?);
    }
    let prove_ok = r.prove.as_ref().is_none_or(|p| p.passed());
    flow::job::write(&r, &opts.out)?;
    outln!("\n## Co-simulation\n\n{}", flow::cosim_markdown(&r.cosim));
    if !r.synth.is_empty() {
        outln!(
            "## Synthesis (clock targets in the clock_ns column)\n\n{}",
            hwzip::synth::to_markdown(&r.synth)
        );
    }
    for t in &r.tables {
        outln!("## {}\n\n{}", t.title, t.markdown);
    }
    if !r.fpga.is_empty() {
        outln!(
            "## FPGA place and route\n\n{}",
            hwzip::synth::fpga::markdown(&r.fpga)
        );
    }
    if let Some(p) = &r.prove {
        outln!("## Formal proofs\n\n{}", hwzip::formal::report::body(p));
    }
    for n in &r.notes {
        outln!("note: {}", n);
    }
    let failures = r.failures();
    if !failures.is_empty() {
        outln!("## Failed steps\n");
        for f in &failures {
            outln!(
                "- {} {}: {}{}",
                f.kind,
                f.what,
                f.detail,
                f.log
                    .as_ref()
                    .map(|l| format!(" (log: {})", l.display()))
                    .unwrap_or_default()
            );
        }
    }
    let verdict = if r.ok && !prove_ok {
        "every unit matches its golden model; a proof failed (prove.md)".to_string()
    } else if r.ok && !fpga_ok {
        "every unit matches its golden model; a unit was not placed and routed on the FPGA"
            .to_string()
    } else if r.ok {
        "every step ran and every unit matches its golden model".to_string()
    } else {
        let mut v = vec![format!("{} step(s) FAILED or MISMATCHED", failures.len())];
        if r.skipped() > 0 {
            v.push(format!("{} skipped (--fail-fast)", r.skipped()));
        }
        v.join(", ")
    };
    outln!(
        "\nflow ({} profile) finished in {:.0} s: {}; reports in {}",
        r.profile.name(),
        r.seconds,
        verdict,
        opts.out.display()
    );
    Ok(r.ok && fpga_ok && prove_ok)
}

/// `flow --prove`: the proofs of the flow's engines (of `--unit` only, in the engines that
/// have it) at `hwzip prove`'s defaults, reported under the configuration's name `label`.
fn proofs(
    cfg: &Config,
    label: &str,
    opts: &flow::job::FlowOptions,
) -> Result<hwzip::formal::report::ProveReport, String> {
    hwzip::flow::prove::run_engines(
        cfg,
        label,
        &opts.selected_engines(),
        opts.unit.as_deref(),
        &hwzip::flow::prove::Request::defaults(),
        opts.jobs,
        &opts.out.join("prove"),
    )
    .map_err(|e| format!("flow --prove: {e}"))
}

/// `flow --fpga DEVICE`: the leaf units of the flow's engines (of `--unit` only, in the
/// engines that have it) placed and routed, for the flow's reports.
fn fpga_rows(
    cfg: &Config,
    opts: &flow::job::FlowOptions,
    device: &hwzip::synth::fpga::FpgaDevice,
) -> Result<Vec<hwzip::synth::fpga::FpgaRow>, String> {
    let mut rows = Vec::new();
    for e in opts.selected_engines() {
        // `--unit` may name a test unit (a loop-back), which is not placed.
        if let Some(u) = &opts.unit {
            if !e.unit_names().contains(&u.as_str()) {
                continue;
            }
        }
        let work = opts.out.join("fpga");
        rows.extend(flow::fpga::run(
            e,
            cfg,
            device,
            &work,
            opts.unit.as_deref(),
            &mut |m| eprintln!("{}", m),
        )?);
    }
    Ok(rows)
}
