//! `hwzip synth`: Yosys and OpenSTA on an engine's units or on Verilog files.

use super::args::{engine_arg, gate_count, load_config, unit_help};
use hwzip::config::Config;
use hwzip::engines::{self, EngineRef};
use hwzip::flow;
use std::path::{Path, PathBuf};

/// The arguments of `hwzip synth`.
#[derive(clap::Args)]
pub struct Args {
    /// Engine [default: zvc].
    #[arg(long, conflicts_with = "verilog", value_parser = engine_arg())]
    pub engine: Option<String>,
    /// YAML configuration (parameters); defaults otherwise.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Liberty: osu018 | nangate45 | sky130hd | a path (.lib or .lib.gz); repeatable.
    #[arg(long)]
    pub liberty: Vec<String>,
    /// Clock period in ns for every library [default: the config's synth.clock_ns and
    /// clock_ns_by_library: 1.0, osu018 4.0, sky130hd 2.5].
    #[arg(long)]
    pub clock_ns: Option<f64>,
    #[arg(long, conflicts_with = "verilog", help = unit_help(false))]
    pub unit: Option<String>,
    /// Work and report directory.
    #[arg(long, default_value = "build/synth")]
    pub out: PathBuf,
    /// Also co-simulate each synthesized netlist (gate level, the library's cell
    /// functions) for this many windows. Slow: minutes of Verilator build per netlist.
    #[arg(long, default_value_t = 0, conflicts_with = "verilog", value_parser = gate_count())]
    pub gate_cosim: u64,
    /// Synthesize again even when a cached result matches.
    #[arg(long)]
    pub no_cache: bool,
    /// Also measure energy per line: this many lines of gate-level switching activity at
    /// full throughput, annotated on the netlist, OpenSTA `report_power` (energy.md).
    #[arg(long, default_value_t = 0, conflicts_with = "verilog", value_parser = gate_count())]
    pub energy: u64,
    /// Synthesize these Verilog files (repeatable) instead of an engine's units, with
    /// the same flow; needs --top. Clocked by `clk_i` when the sources mention it.
    #[arg(long, requires = "top", num_args = 1..)]
    pub verilog: Vec<PathBuf>,
    /// Top module of --verilog.
    #[arg(long, requires = "verilog")]
    pub top: Option<String>,
    /// Place and route on an FPGA instead (ecp5-12k | ecp5-25k | ecp5-45k | ecp5-85k, with
    /// `:PACKAGE`, default CABGA381): the leaf units (or --unit) through Yosys synth_ecp5 and
    /// nextpnr-ecp5 (scripts/setup.sh --fpga); LUTs, FFs, block RAMs, post-route Fmax.
    #[arg(long, conflicts_with_all = ["verilog", "liberty", "gate_cosim", "energy"])]
    pub fpga: Option<String>,
}

/// Runs `hwzip synth`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        engine,
        config,
        liberty,
        clock_ns,
        unit,
        out,
        gate_cosim,
        no_cache,
        energy,
        verilog,
        top,
        fpga,
    } = args;
    let engine = engines::by_name(engine.as_deref().unwrap_or("zvc"))?;
    let mut cfg = load_config(&config)?;
    if no_cache {
        cfg.synth.cache = false;
    }
    if let Some(c) = clock_ns {
        // An explicit --clock-ns applies to every library.
        cfg.synth.clock_ns = c;
        cfg.synth.clock_ns_by_library.clear();
    }
    if !liberty.is_empty() {
        cfg.synth.libraries = liberty;
    }
    cfg.validate()?;
    if let Some(u) = &unit {
        flow::check_synth_unit(engine, u)?;
    }
    if let Some(device) = fpga {
        return fpga_run(engine, &cfg, &device, unit.as_deref(), &out);
    }
    let mut notes = Vec::new();
    let libs = flow::libraries(&cfg.synth.libraries, &mut notes)?;
    for n in &notes {
        eprintln!("note: {}", n);
    }
    if let Some(top) = top {
        let rows = flow::synth_files(&cfg, &verilog, &top, &libs, &out, &mut |m| {
            eprintln!("{}", m)
        })?;
        let mut set = hwzip::files::FileSet::new();
        flow::add_reports(&mut set, &rows, &out);
        let page = flow::html::synth_page("hwzip synth", &rows, &[]);
        hwzip::report::add(&mut set, &page, &out)?;
        set.commit()?;
        out!("{}", hwzip::synth::to_markdown(&rows));
        outln!("\nreports: {}/report.{{md,csv,json,html}}", out.display());
        return Ok(true);
    }
    let rows = flow::synth(engine, &cfg, &libs, &out, unit.as_deref(), &mut |m| {
        eprintln!("{}", m)
    })?;
    out!("{}", hwzip::synth::to_markdown(&rows));
    let tables = flow::paper_tables(engine, &cfg, &rows, &libs, unit.is_none(), &out, &mut |m| {
        eprintln!("{}", m)
    })?;
    let energy_rows = energy_rows(engine, &cfg, &rows, &libs, energy, &out)?;
    let mut page =
        flow::html::synth_page(&format!("hwzip synth: {}", engine.name()), &rows, &tables);
    let mut set = hwzip::files::FileSet::new();
    flow::add_reports(&mut set, &rows, &out);
    flow::add_tables(&mut set, &tables, &out);
    if !energy_rows.is_empty() {
        flow::html::energy_section(&mut page, &energy_rows);
        flow::energy::add(&mut set, &energy_rows, &out)?;
    }
    hwzip::report::add(&mut set, &page, &out)?;
    set.commit()?;
    outln!("\nreports: {}/report.{{md,csv,json,html}}", out.display());
    if !energy_rows.is_empty() {
        outln!("energy: {}/energy.{{md,json}}", out.display());
    }
    for t in &tables {
        outln!("\n## {}\n\n{}", t.title, t.markdown);
        outln!("table: {}/{}.md", out.display(), t.file);
    }
    gate_level(engine, &cfg, &rows, &libs, gate_cosim)
}

/// `synth --fpga DEVICE`: the FPGA table, written to `fpga.md` and `fpga.json` in `out`.
fn fpga_run(
    engine: EngineRef,
    cfg: &Config,
    device: &str,
    unit: Option<&str>,
    out: &Path,
) -> Result<bool, String> {
    let device = hwzip::synth::fpga::FpgaDevice::parse(device)?;
    let rows = flow::fpga::run(engine, cfg, &device, out, unit, &mut |m| eprintln!("{}", m))?;
    let mut set = hwzip::files::FileSet::new();
    flow::fpga::add(&mut set, &rows, out)?;
    let mut page =
        hwzip::report::Page::new(format!("hwzip synth --fpga: {}", engine.name()).as_str());
    flow::html::fpga_section(&mut page, &rows);
    hwzip::report::add(&mut set, &page, out)?;
    set.commit()?;
    out!("{}", hwzip::synth::fpga::markdown(&rows));
    outln!("\nreports: {}/fpga.{{md,json}}, report.html", out.display());
    Ok(rows.iter().all(|r| r.result.fits))
}

/// `synth --energy N`: energy per line of every synthesized row, written to `energy.md` and
/// `energy.json` in `out` and printed (nothing when `lines` is 0).
fn energy_rows(
    engine: EngineRef,
    cfg: &Config,
    rows: &[hwzip::synth::ReportRow],
    libs: &[hwzip::synth::Liberty],
    lines: u64,
    out: &Path,
) -> Result<Vec<flow::energy::EnergyRow>, String> {
    let mut v = Vec::new();
    if lines == 0 {
        return Ok(v);
    }
    let ui = flow::progress::Ui::new();
    for r in rows.iter().filter(|r| r.engine == engine.name()) {
        let Some(lib) = libs.iter().find(|l| l.label() == r.result.liberty) else {
            continue;
        };
        v.push(flow::job::energy_step(cfg, r, lib, lines, out, &ui)?.0);
    }
    outln!("\n## Energy per line\n\n{}", flow::energy::report(&v));
    Ok(v)
}

/// Gate-level co-simulation of every synthesized row (skipped when `lines` is 0).
fn gate_level(
    engine: EngineRef,
    cfg: &Config,
    rows: &[hwzip::synth::ReportRow],
    libs: &[hwzip::synth::Liberty],
    lines: u64,
) -> Result<bool, String> {
    let mut ok = true;
    if lines == 0 {
        return Ok(ok);
    }
    for r in rows.iter().filter(|r| r.engine == engine.name()) {
        let Some(lib) = libs.iter().find(|l| l.label() == r.result.liberty) else {
            continue;
        };
        eprintln!(
            "gate-level co-simulation of {} on {} ({} windows) ...",
            r.unit, r.result.liberty, lines
        );
        let st = flow::gate_cosim(engine, cfg, r, lib, lines)?;
        outln!(
            "gate level {} {} on {}: {} lines, {} cycles, {} mismatches, {:.3} Mcycles/s",
            engine.name(),
            r.unit,
            r.result.liberty,
            st.lines,
            st.cycles,
            st.mismatches,
            st.cycles_per_second() / 1e6
        );
        if let Some(m) = &st.first_mismatch {
            outln!("  FIRST MISMATCH: {}", m);
        }
        ok &= st.mismatches == 0;
    }
    Ok(ok)
}
