//! `hwzip cosim`: a unit against its golden model in Verilator.

use super::args::{check_lines, load_config, unit_help, EngineArgs};
use hwzip::engines::{self, EngineRef};
use hwzip::flow::{self, CosimReport, CosimRequest};
use std::path::PathBuf;

/// The arguments of `hwzip cosim`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: EngineArgs,
    #[arg(long, default_value = "all", help = unit_help(true))]
    pub unit: String,
    /// Lines to push through each unit: windows (zvc), sectors (base-xor), lines
    /// (adaptive), blocks (cpack-lossy), entries or requests (buddy); overrides the config.
    #[arg(long)]
    pub lines: Option<u64>,
    /// Stimulus seed (overrides the config's cosim.seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Drive the unit with this trace: raw little-endian elements, `.npy`/`.safetensors`
    /// arrays (headers checked, elements as wide as the engine's word), `.gz` gunzipped, or
    /// a YAML description whose `file:` is any of these.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// On a mismatch, write a VCD of the cycles around it here.
    #[arg(long)]
    pub vcd: Option<PathBuf>,
    /// Write the RTL's output stream (compressed bytes for the compressor) here.
    #[arg(long)]
    pub dump_out: Option<PathBuf>,
    /// Assert `rst_ni` this many times at random cycles in the middle of transactions;
    /// after each reset the unit must be idle and process what follows correctly.
    #[arg(long, default_value_t = 0)]
    pub resets: u32,
    /// Start every register, memory and X assignment at random values from this seed
    /// (Verilator `--x-assign unique --x-initial unique`; a separate cached build):
    /// outputs must not depend on state that the reset leaves undefined.
    #[arg(long, value_name = "SEED")]
    pub x_seed: Option<u32>,
    /// Print the reports as JSON (one object per unit, in an array) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hwzip cosim`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        target: EngineArgs { engine, config },
        unit,
        lines,
        seed,
        trace,
        vcd,
        dump_out,
        resets,
        x_seed,
        json,
    } = args;
    let engine = engines::by_name(&engine)?;
    let mut cfg = load_config(&config)?;
    if let Some(l) = lines {
        check_lines(l)?;
        cfg.cosim.lines = l;
    }
    if let Some(s) = seed {
        cfg.cosim.seed = s;
    }
    cfg.validate()?;
    if u64::from(resets) > cfg.cosim.lines {
        return Err(format!(
            "--resets {} is more than the {} lines of the run: at most one reset per line",
            resets, cfg.cosim.lines
        ));
    }
    let trace_bits = engine.trace_word_bits(&cfg);
    let data = match &trace {
        Some(t) => Some(
            hwzip::trace::file::load_trace_exact(
                t,
                trace_bits,
                &format!("the {} engine's data word", engine.name()),
            )
            .map_err(|e| e.to_string())?
            .elems,
        ),
        None => None,
    };
    let mut ok = true;
    let mut reports = Vec::new();
    let ui = flow::progress::Ui::new();
    for u in units_of(engine, &unit)? {
        let mut stim = flow::stim_from(&cfg, data.clone());
        stim.capture = dump_out.is_some();
        stim.resets = resets;
        let req = CosimRequest {
            engine,
            unit: u.clone(),
            stim,
            vcd: vcd.clone(),
            x_seed,
        };
        let step = ui.step(&format!("cosim {} {}", engine.name(), u));
        step.set("verilating and compiling the model (cached after the first build)");
        let r = flow::cosim(&req, &cfg, &mut |st| {
            step.set(format!(
                "{} lines, {} cycles, {:.2} Mcycles/s",
                st.lines,
                st.cycles,
                st.cycles_per_second() / 1e6
            ))
        })?;
        step.done(&format!("{} mismatches", r.stats.mismatches));
        if !json {
            print_cosim(&r, resets);
        }
        ok &= r.stats.mismatches == 0;
        if let Some(path) = &dump_out {
            let p = if unit == "all" {
                path.with_extension(format!("{}.bin", u))
            } else {
                path.clone()
            };
            hwzip::files::write(&p, &r.stats.output)?;
            eprintln!(
                "  output stream ({} bytes) written to {}",
                r.stats.output.len(),
                p.display()
            );
        }
        reports.push(r);
    }
    if json {
        let text = serde_json::to_string_pretty(&reports)
            .map_err(|e| format!("cannot write JSON: {e}"))?;
        outln!("{text}");
    }
    Ok(ok)
}

/// The text report of one unit's co-simulation; `resets`: the mid-run resets asked for.
fn print_cosim(r: &CosimReport, resets: u32) {
    let s = &r.stats;
    if let Some(seed) = r.x_seed {
        outln!(
            "{} {}: registers, memories and X assignments started at random values (seed {seed})",
            r.engine,
            r.unit
        );
    }
    if resets > 0 {
        outln!(
            "{} {}: {} of {} mid-run resets asked for ({} with an input beat offered, {} with \
             output expected)",
            r.engine,
            r.unit,
            s.resets,
            resets,
            s.resets_mid.0,
            s.resets_mid.1
        );
    }
    // Units that move no data (a metadata cache) have no ratio.
    let ratio = if s.raw_bytes > 0 && s.comp_bytes > 0 {
        format!(", ratio {:.3}", s.raw_bytes as f64 / s.comp_bytes as f64)
    } else {
        String::new()
    };
    outln!(
        "{} {} [{}]: {} lines, {} transfers, {} cycles, {} beats in / {} out{}, {} mismatches, {:.2} Mcycles/s",
        r.engine,
        r.unit,
        r.params,
        s.lines,
        s.transfers,
        s.cycles,
        s.beats_in,
        s.beats_out,
        ratio,
        s.mismatches,
        s.cycles_per_second() / 1e6
    );
    if let Some(m) = &s.first_mismatch {
        outln!("  FIRST MISMATCH: {}", m);
    }
    if let Some(v) = &r.vcd {
        outln!("  waveform of the mismatch window: {}", v.display());
    }
}

/// The units `--unit` names (`all`: the engine's co-simulated units).
fn units_of(engine: EngineRef, unit: &str) -> Result<Vec<String>, String> {
    if unit == "all" {
        return Ok(engines::cosim_units(engine));
    }
    let known = engines::known_cosim_units(engine);
    if known.iter().any(|u| u == unit) {
        return Ok(vec![unit.to_string()]);
    }
    Err(format!(
        "unknown unit `{}` of {} (known: {}, all)",
        hwzip::files::quote(unit),
        engine.name(),
        known.join(", ")
    ))
}
