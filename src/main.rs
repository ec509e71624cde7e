//! `hwzip`: generate, co-simulate, synthesize and evaluate GPU compression hardware.

use clap::{Parser, Subcommand};
use hwzip::config::Config;
use hwzip::engines::{self, EngineRef, EvalRequest};
use hwzip::files::input;
use hwzip::flow::{self, CosimReport, CosimRequest};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "hwzip",
    version,
    about = "Synthesizable GPU compression hardware: generate, co-simulate, synthesize, evaluate",
    after_help = "Inputs: traces (and a description's file:) and compress/decompress inputs may \
                  be pipes or FIFOs, read to their end up to --max-input; opening a FIFO waits \
                  for its writer, as with any Unix tool. Configs, trace descriptions, Liberty \
                  and Verilog files must be regular files; folders and devices are refused. \
                  Outputs that are devices or FIFOs are written in place, never replaced."
)]
struct Cli {
    /// Largest trace or compress/decompress input read, after gunzip (e.g. 512M, 4G;
    /// default 1G). Also turns off the gzip ratio guard.
    #[arg(long, global = true, value_name = "SIZE", value_parser = input::parse_size)]
    max_input: Option<u64>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate Verilog for an engine's units.
    Gen {
        /// Engine.
        #[arg(long, default_value = "zvc", value_parser = engine_arg())]
        engine: String,
        /// YAML configuration (parameters); defaults otherwise.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Output directory (files go to <out>/<engine>/).
        #[arg(long, default_value = "rtl_out")]
        out: PathBuf,
    },
    /// Co-simulate a unit against the golden model in Verilator (random stalls).
    Cosim {
        /// Engine.
        #[arg(long, default_value = "zvc", value_parser = engine_arg())]
        engine: String,
        /// YAML configuration (parameters); defaults otherwise.
        #[arg(long)]
        config: Option<PathBuf>,
        #[arg(long, default_value = "all", help = unit_help(true))]
        unit: String,
        /// Lines to push through each unit: windows (zvc), sectors (base-xor), lines
        /// (adaptive), blocks (cpack-lossy), entries or requests (buddy); overrides the config.
        #[arg(long)]
        lines: Option<u64>,
        /// Stimulus seed (overrides the config's cosim.seed).
        #[arg(long)]
        seed: Option<u64>,
        /// Drive the unit with this trace: raw little-endian elements, `.npy`/`.safetensors`
        /// arrays (headers checked, elements as wide as the engine's word), `.gz` gunzipped, or
        /// a YAML description whose `file:` is any of these.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// On a mismatch, write a VCD of the cycles around it here.
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// Write the RTL's output stream (compressed bytes for the compressor) here.
        #[arg(long)]
        dump_out: Option<PathBuf>,
        /// Assert `rst_ni` this many times at random cycles in the middle of transactions;
        /// after each reset the unit must be idle and process what follows correctly.
        #[arg(long, default_value_t = 0)]
        resets: u32,
        /// Start every register, memory and X assignment at random values from this seed
        /// (Verilator `--x-assign unique --x-initial unique`; a separate cached build):
        /// outputs must not depend on state that the reset leaves undefined.
        #[arg(long, value_name = "SEED")]
        x_seed: Option<u32>,
        /// Print the reports as JSON (one object per unit, in an array) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Synthesize an engine's units (Yosys + OpenSTA) and report area and timing.
    Synth {
        /// Engine [default: zvc].
        #[arg(long, conflicts_with = "verilog", value_parser = engine_arg())]
        engine: Option<String>,
        /// YAML configuration (parameters); defaults otherwise.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Liberty: osu018 | nangate45 | sky130hd | a path (.lib or .lib.gz); repeatable.
        #[arg(long)]
        liberty: Vec<String>,
        /// Clock period in ns for every library [default: the config's synth.clock_ns and
        /// clock_ns_by_library: 1.0, osu018 4.0, sky130hd 2.5].
        #[arg(long)]
        clock_ns: Option<f64>,
        #[arg(long, conflicts_with = "verilog", help = unit_help(false))]
        unit: Option<String>,
        /// Work and report directory.
        #[arg(long, default_value = "build/synth")]
        out: PathBuf,
        /// Also co-simulate each synthesized netlist (gate level, the library's cell
        /// functions) for this many windows. Slow: minutes of Verilator build per netlist.
        #[arg(long, default_value_t = 0, conflicts_with = "verilog", value_parser = gate_count())]
        gate_cosim: u64,
        /// Synthesize again even when a cached result matches.
        #[arg(long)]
        no_cache: bool,
        /// Also measure energy per line: this many lines of gate-level switching activity at
        /// full throughput, annotated on the netlist, OpenSTA `report_power` (energy.md).
        #[arg(long, default_value_t = 0, conflicts_with = "verilog", value_parser = gate_count())]
        energy: u64,
        /// Synthesize these Verilog files (repeatable) instead of an engine's units, with
        /// the same flow; needs --top. Clocked by `clk_i` when the sources mention it.
        #[arg(long, requires = "top", num_args = 1..)]
        verilog: Vec<PathBuf>,
        /// Top module of --verilog.
        #[arg(long, requires = "verilog")]
        top: Option<String>,
    },
    /// Evaluate an engine's golden model on data. zvc: compression ratio of a trace beside
    /// RLE and zlib. base-xor: ones, toggles and I/O energy of every scheme side by side.
    /// adaptive: the selector against each codec. cpack-lossy: ratios and FP error per
    /// threshold. buddy: size buckets, ratios, codec comparison, buddy fractions, metadata
    /// slice sweep and profiler. On trace files and/or synthetic classes.
    Eval {
        /// Engine.
        #[arg(long, default_value = "zvc", value_parser = engine_arg())]
        engine: String,
        /// YAML configuration (parameters); defaults otherwise.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Trace file: raw bytes, `.gz` gunzipped, `.npy` and `.safetensors` headers checked
        /// and skipped (buddy: one row per tensor group), or a YAML description whose `file:`
        /// is any of these; zvc takes elements of its word width. Repeatable except for zvc.
        #[arg(long)]
        trace: Vec<PathBuf>,
        /// base-xor: synthetic sector classes (spec §5); adaptive: line profiles (`zero-heavy`,
        /// `small-delta`, `narrow`, `repeated`, `floats`, `random`, `mixed`, `bench-sc`, …);
        /// cpack-lossy: block classes; buddy: entry classes (`relu-50`, `index-i32`, …),
        /// `meta-cache`, `profiler`; or `all`. Repeatable.
        #[arg(long)]
        class: Vec<String>,
        /// Lines per synthetic class: sectors (base-xor), lines (adaptive), blocks
        /// (cpack-lossy) or entries (buddy) [default: 20000].
        #[arg(long, alias = "sectors")]
        lines: Option<usize>,
        /// Seed of the synthetic classes [default: 1].
        #[arg(long)]
        seed: Option<u64>,
        /// adaptive: λ of the penalty P = N + λ(L_C + L_D) [default: adaptive.lambda of the
        /// config, 6].
        #[arg(long)]
        lambda: Option<u32>,
        /// base-xor: extra I/O energy per transmitted 1, pJ [default: 0.0344].
        #[arg(long)]
        pj_per_one: Option<f64>,
        /// base-xor: toggles between transactions: `stream` (back to back, the default) or
        /// `idle` (the bus returns to 0 between transactions).
        #[arg(long)]
        toggles: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Every line codec alone on each --trace file, beside zlib and zstd, instead of the
        /// engine's evaluation: `all` or a comma-separated list of bdi, fpc, cpack, cpack128,
        /// bpc, zvc (each file round-tripped).
        #[arg(long, value_delimiter = ',', conflicts_with_all = ["class", "lambda", "pj_per_one", "toggles", "out"])]
        codecs: Vec<String>,
        /// Also write report.md, report.json and report.html (tables and charts) here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Compress a file with the golden model (self-describing container).
    Compress {
        /// Engine.
        #[arg(long, default_value = "zvc", value_parser = engine_arg())]
        engine: String,
        /// One line codec alone instead of an engine: bdi, fpc, cpack (C-Pack+Z), cpack128
        /// (original C-Pack, 128 B), bpc or zvc (parameters from the engines' config sections).
        #[arg(long, conflicts_with_all = ["engine", "truncate"])]
        codec: Option<String>,
        /// YAML configuration (parameters); defaults otherwise.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Print the encoding histogram per line (window for zvc), the line count and the
        /// ratio (cpack-lossy with --truncate: also the FP32 error).
        #[arg(long)]
        stats: bool,
        /// cpack-lossy: truncate this many mantissa LSBs of every 32-bit word (one of the
        /// codec's t_table: 0 lossless, 8, 12, 16).
        #[arg(long, default_value_t = 0)]
        truncate: u32,
        /// File to compress (`-`: standard input).
        input: PathBuf,
        /// Container to write (`-`: standard output; never the input; written in full or
        /// not at all).
        output: PathBuf,
    },
    /// Decompress a file written by `hwzip compress`.
    Decompress {
        /// Engine [default: the one the container names]; another is an error.
        #[arg(long, value_parser = engine_arg())]
        engine: Option<String>,
        /// Print the encoding histogram of the container's lines and the ratio.
        #[arg(long)]
        stats: bool,
        /// Container written by `hwzip compress` (`-`: standard input).
        input: PathBuf,
        /// File to write (`-`: standard output; never the input; written in full or not at
        /// all).
        output: PathBuf,
    },
    /// Write a synthetic trace (raw little-endian elements + a YAML description beside it).
    Trace {
        /// all_zero | all_non_zero | uniform_random | sparse_random | clustered | relu |
        /// float_specials
        #[arg(long, default_value = "relu")]
        class: String,
        /// ReLU tensor shape N,C,H,W (class relu); otherwise use --elems.
        #[arg(long, value_delimiter = ',')]
        shape: Vec<usize>,
        /// Target sparsity for a shaped ReLU tensor [default: 0.6].
        #[arg(long, requires = "shape")]
        sparsity: Option<f64>,
        /// nchw | nhwc | chwn (shaped ReLU tensors) [default: nchw].
        #[arg(long, requires = "shape")]
        layout: Option<String>,
        /// Number of elements (unshaped classes) [default: 4096].
        #[arg(long, conflicts_with = "shape")]
        elems: Option<usize>,
        /// Element width in bits.
        #[arg(long, default_value_t = 32)]
        word_bits: u32,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output raw file; its YAML description is written beside it as <stem>.yaml (relu.bin
        /// -> relu.yaml; none beside a device or FIFO).
        output: PathBuf,
    },
    /// The main job: generate → co-simulate → synthesize → report, for every engine.
    Flow {
        /// YAML configuration (parameters); defaults otherwise.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Defaults: `quick` (osu018, 10,000 lines per unit, -O1 models; minutes) or `paper`
        /// (osu018 + Nangate45 + sky130hd, 1,000,000 lines, -O2 models). The config file and
        /// the options below override it.
        #[arg(long, default_value = "quick")]
        profile: String,
        /// Only these engines (repeatable; default all).
        #[arg(long, value_parser = engine_arg())]
        engine: Vec<String>,
        /// Only this unit of the engines (co-simulation and synthesis).
        #[arg(long)]
        unit: Option<String>,
        /// Liberty: osu018 | nangate45 | sky130hd | a path; repeatable (overrides the profile).
        #[arg(long)]
        liberty: Vec<String>,
        /// Lines (windows, sectors) per unit in co-simulation (overrides the profile).
        #[arg(long)]
        lines: Option<u64>,
        /// Worker threads for independent steps (default: the number of cores).
        #[arg(short = 'j', long)]
        jobs: Option<usize>,
        /// Synthesize again even when a cached result matches.
        #[arg(long)]
        no_cache: bool,
        /// Output directory (rtl/, synth/, report.md, report.csv, report.json, cosim.md).
        #[arg(long, default_value = "build/flow")]
        out: PathBuf,
        /// Also co-simulate each synthesized netlist at gate level for this many windows.
        #[arg(long, default_value_t = 0, value_parser = gate_count())]
        gate_cosim: u64,
        /// Also measure energy per line of each synthesized netlist: this many lines of
        /// gate-level activity, OpenSTA `report_power` (energy.md). Slow: a traced build per
        /// netlist.
        #[arg(long, default_value_t = 0, value_parser = gate_count())]
        energy: u64,
        /// Start no new step after the first failure (default: every step runs, and the
        /// report lists the failed ones).
        #[arg(long)]
        fail_fast: bool,
    },
    /// Design-space sweep: generate, lint, co-simulate, time and synthesize every point of a
    /// parameter grid of one engine; report area, Fmax, latency, throughput and compression
    /// ratio with the Pareto fronts (area vs GB/s, area vs ratio).
    Sweep(SweepArgs),
    /// The long, paper-grade regression: the default configuration with the `paper` profile
    /// (10^6 lines per unit, three libraries, Table II/III), gate-level co-simulation of the
    /// ZVC osu018 netlists, and every parameter set in `--configs` (co-simulation).
    Regress {
        /// Directory of extra parameter sets.
        #[arg(long, default_value = "verif/configs")]
        configs: PathBuf,
        /// Output directory (one report per run).
        #[arg(long, default_value = "build/regress")]
        out: PathBuf,
        /// Co-simulation lines per unit.
        #[arg(long, default_value_t = 1_000_000)]
        lines: u64,
        /// Gate-level co-simulation lines per ZVC osu018 netlist (0: none).
        #[arg(long, default_value_t = 2_000, value_parser = gate_count())]
        gate_cosim: u64,
        /// Worker threads (default: the number of cores).
        #[arg(short = 'j', long)]
        jobs: Option<usize>,
        /// Only shard K of N of each run's independent steps (e.g. `--shard 2/4`); join the
        /// shards' directories with --merge.
        #[arg(long)]
        shard: Option<String>,
        /// Only these engines (repeatable; default all). The shared cache + MSHR block runs
        /// with cpack-lossy or buddy.
        #[arg(long, value_parser = engine_arg())]
        engine: Vec<String>,
        /// `paper` (the long tier) or `quick` (osu018, fast synthesis: a small regression).
        #[arg(long, default_value = "paper")]
        profile: String,
        /// Merge these regress directories (every shard of one regression) into --out
        /// instead of running.
        #[arg(long, num_args = 1.., conflicts_with_all = ["shard", "engine", "profile", "lines", "gate_cosim", "configs"])]
        merge: Vec<PathBuf>,
    },
    /// docs/RESULTS.md from the long tier: with --from, a regress folder (whole or merged)
    /// is reduced to the snapshot first; the page is always rendered from the snapshot.
    Results {
        /// The regress output folder to take the figures from (default: keep the snapshot).
        #[arg(long)]
        from: Option<PathBuf>,
        /// The snapshot (JSON) the page is rendered from.
        #[arg(long, default_value = "docs/results.json")]
        snapshot: PathBuf,
        /// The page.
        #[arg(long, default_value = "docs/RESULTS.md")]
        out: PathBuf,
    },
}

/// `--engine` values: the registry's engine names (listed by `--help`).
fn engine_arg() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(engines::ALL.iter().map(|e| e.name()))
}

/// `--unit` help, from the registry: every engine's units (with `cosim`, also the test-only
/// loop-backs and `all`).
fn unit_help(cosim: bool) -> String {
    let per: Vec<String> = engines::ALL
        .iter()
        .map(|&e| {
            let u: Vec<String> = if cosim {
                engines::known_cosim_units(e)
            } else {
                e.unit_names().iter().map(|u| u.to_string()).collect()
            };
            format!("{}: {}", e.name(), u.join(" | "))
        })
        .collect();
    if cosim {
        format!("Unit ({}), or all [default: all]", per.join("; "))
    } else {
        format!("Only this unit ({}) [default: every unit]", per.join("; "))
    }
}

/// Largest synthetic trace `hwzip trace` writes (2^28 elements, 1 GiB of 32-bit words).
const MAX_TRACE_ELEMS: usize = 1 << 28;

fn default_jobs(jobs: Option<usize>) -> Result<usize, String> {
    match jobs {
        Some(0) => Err("--jobs must be at least 1".into()),
        Some(j) => Ok(j),
        None => Ok(std::thread::available_parallelism().map_or(2, |n| n.get())),
    }
}

fn load_config(path: &Option<PathBuf>) -> Result<Config, String> {
    match path {
        Some(p) => Config::load(p),
        None => Ok(Config::default()),
    }
}

/// The text report of one unit's co-simulation; `resets`: the mid-run resets asked for.
fn print_cosim(r: &CosimReport, resets: u32) {
    let s = &r.stats;
    if let Some(seed) = r.x_seed {
        println!(
            "{} {}: registers, memories and X assignments started at random values (seed {seed})",
            r.engine, r.unit
        );
    }
    if resets > 0 {
        println!(
            "{} {}: {} of {} mid-run resets asked for ({} with an input beat offered, {} with \
             output expected)",
            r.engine, r.unit, s.resets, resets, s.resets_mid.0, s.resets_mid.1
        );
    }
    // Units that move no data (a metadata cache) have no ratio.
    let ratio = if s.raw_bytes > 0 && s.comp_bytes > 0 {
        format!(", ratio {:.3}", s.raw_bytes as f64 / s.comp_bytes as f64)
    } else {
        String::new()
    };
    println!(
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
        println!("  FIRST MISMATCH: {}", m);
    }
    if let Some(v) = &r.vcd {
        println!("  waveform of the mismatch window: {}", v.display());
    }
}

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

fn run(cli: Cli) -> Result<bool, String> {
    if let Some(m) = cli.max_input {
        input::set_data_limit(m);
    }
    match cli.cmd {
        Cmd::Gen {
            engine,
            config,
            out,
        } => {
            let engine = engines::by_name(&engine)?;
            let cfg = load_config(&config)?;
            let files = flow::gen(engine, &cfg, &out)?;
            for f in &files {
                println!("{}", f.display());
            }
            Ok(true)
        }
        Cmd::Cosim {
            engine,
            config,
            unit,
            lines,
            seed,
            trace,
            vcd,
            dump_out,
            resets,
            x_seed,
            json,
        } => {
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
                println!("{text}");
            }
            Ok(ok)
        }
        Cmd::Synth {
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
        } => {
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
                print!("{}", hwzip::synth::to_markdown(&rows));
                println!("\nreports: {}/report.{{md,csv,json,html}}", out.display());
                return Ok(true);
            }
            let rows = flow::synth(engine, &cfg, &libs, &out, unit.as_deref(), &mut |m| {
                eprintln!("{}", m)
            })?;
            print!("{}", hwzip::synth::to_markdown(&rows));
            let tables =
                flow::paper_tables(engine, &cfg, &rows, &libs, unit.is_none(), &out, &mut |m| {
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
            println!("\nreports: {}/report.{{md,csv,json,html}}", out.display());
            if !energy_rows.is_empty() {
                println!("energy: {}/energy.{{md,json}}", out.display());
            }
            for t in &tables {
                println!("\n## {}\n\n{}", t.title, t.markdown);
                println!("table: {}/{}.md", out.display(), t.file);
            }
            gate_level(engine, &cfg, &rows, &libs, gate_cosim)
        }
        Cmd::Eval {
            engine,
            config,
            trace,
            class,
            lines,
            seed,
            lambda,
            pj_per_one,
            toggles,
            json,
            codecs,
            out: out_dir,
        } => {
            let engine = engines::by_name(&engine)?;
            let cfg = load_config(&config)?;
            if !codecs.is_empty() {
                return eval_codecs(&cfg, &codecs, &trace, json);
            }
            let mut class = class;
            if trace.is_empty() && class.is_empty() {
                if engine.name() == "zvc" {
                    return Err("eval --engine zvc needs --trace FILE (e.g. \
                                verif/traces/relu_pool1_like.yaml, or one written by \
                                `hwzip trace`)"
                        .into());
                }
                // No data given: every synthetic class, as `--class all` would.
                class.push("all".into());
            }
            if class.is_empty() && (lines.is_some() || seed.is_some()) {
                return Err(
                    "--lines and --seed size and seed the synthetic --class data; \
                     add --class all (or a class name) or leave them out"
                        .into(),
                );
            }
            let req = EvalRequest {
                traces: trace,
                classes: class,
                count: lines.unwrap_or(20_000),
                seed: seed.unwrap_or(1),
                lambda,
                pj_per_one,
                toggles,
            };
            let out = engine.eval(&cfg, &req)?;
            if let Some(dir) = &out_dir {
                flow::write_eval(engine, &out, dir)?;
            }
            if json {
                println!("{}", out.json);
            } else {
                print!("{}", out.markdown);
            }
            if let Some(dir) = &out_dir {
                eprintln!("reports: {}/report.{{md,json,html}}", dir.display());
            }
            Ok(true)
        }
        Cmd::Compress {
            engine,
            codec,
            config,
            stats,
            truncate,
            input,
            output,
        } => {
            let engine = engines::by_name(&engine)?;
            let mut cfg = load_config(&config)?;
            if let Some(c) = &codec {
                // Checked before any input is read.
                engines::codecs::check_name(c)?;
            }
            if truncate != 0 && engine.name() != "cpack-lossy" {
                return Err(format!(
                    "--truncate is for --engine cpack-lossy, not {}",
                    engine.name()
                ));
            }
            cfg.compress_truncate = truncate;
            refuse_same_unless_std(&input, &output)?;
            let data = read_input(&input, false)?;
            let out = match &codec {
                Some(c) => engines::codecs::compress(c, &cfg, &data)?,
                None => engine.compress(&cfg, &data)?,
            };
            write_output(&output, &out.bytes)?;
            let msg = format!(
                "{} -> {}: {} -> {} bytes (ratio {:.3})",
                input.display(),
                output.display(),
                data.len(),
                out.bytes.len(),
                data.len() as f64 / out.bytes.len().max(1) as f64
            );
            report(&output, &msg, stats.then_some(&out.stats));
            Ok(true)
        }
        Cmd::Decompress {
            engine,
            stats,
            input,
            output,
        } => {
            refuse_same_unless_std(&input, &output)?;
            let data = read_input(&input, true)?;
            let named = match &engine {
                Some(_) => None,
                None => Some(
                    hwzip::model::container::parse_header(&data)
                        .map_err(|e| format!("{}: {}", input.display(), e))?
                        .engine,
                ),
            };
            let out = if named.as_deref() == Some(engines::codecs::ENGINE_ID) {
                engines::codecs::decompress(&data)
            } else {
                let name = engine.or(named).unwrap_or_default();
                let engine =
                    engines::by_name(&name).map_err(|e| format!("{}: {}", input.display(), e))?;
                engine.decompress(&data)
            }
            .map_err(|e| format!("{}: {}", input.display(), e))?;
            write_output(&output, &out.bytes)?;
            let msg = format!(
                "{} -> {}: {} bytes",
                input.display(),
                output.display(),
                out.bytes.len()
            );
            report(&output, &msg, stats.then_some(&out.stats));
            Ok(true)
        }
        Cmd::Trace {
            class,
            shape,
            sparsity,
            layout,
            elems,
            word_bits,
            seed,
            output,
        } => {
            use hwzip::trace::{synthetic, Layout};
            if ![8, 16, 32].contains(&word_bits) {
                return Err(format!(
                    "--word-bits {} is not supported (8, 16, 32)",
                    word_bits
                ));
            }
            let c = synthetic::DataClass::from_name(&class).ok_or_else(|| {
                let all: Vec<&str> = synthetic::DataClass::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "unknown class `{}` (known: {})",
                    hwzip::files::quote(&class),
                    all.join(", ")
                )
            })?;
            if !shape.is_empty() && c != synthetic::DataClass::Relu {
                return Err(format!(
                    "--shape applies to --class relu only, not `{}`; use --elems",
                    class
                ));
            }
            let sparsity = sparsity.unwrap_or(0.6);
            let layout = layout.unwrap_or_else(|| "nchw".into());
            let elems = elems.unwrap_or(4096);
            let lay = match layout.as_str() {
                "nchw" => Layout::Nchw,
                "nhwc" => Layout::Nhwc,
                "chwn" => Layout::Chwn,
                other => {
                    return Err(format!(
                        "unknown layout `{}` (nchw, nhwc, chwn)",
                        hwzip::files::quote(other)
                    ))
                }
            };
            let (data, desc_shape) = if c == synthetic::DataClass::Relu && !shape.is_empty() {
                if shape.len() != 4 || shape.contains(&0) || word_bits != 32 {
                    return Err("--shape takes four non-zero sizes N,C,H,W of 32-bit data".into());
                }
                if !(0.0..=1.0).contains(&sparsity) {
                    return Err(format!("--sparsity {} must be in [0, 1]", sparsity));
                }
                let s = [shape[0], shape[1], shape[2], shape[3]];
                s.iter()
                    .try_fold(1usize, |a, &x| a.checked_mul(x))
                    .filter(|&n| n <= MAX_TRACE_ELEMS)
                    .ok_or_else(|| {
                        format!(
                            "--shape {}x{}x{}x{} is more than {} elements",
                            s[0], s[1], s[2], s[3], MAX_TRACE_ELEMS
                        )
                    })?;
                (
                    synthetic::relu_tensor(s, sparsity, lay, seed),
                    Some(shape.clone()),
                )
            } else {
                if elems == 0 || elems > MAX_TRACE_ELEMS {
                    return Err(format!(
                        "--elems {} must be in 1..={}",
                        elems, MAX_TRACE_ELEMS
                    ));
                }
                (c.generate(elems, word_bits, seed), None)
            };
            let yaml_path = output.with_extension("yaml");
            if yaml_path == output {
                return Err(format!(
                    "output {} would be overwritten by its own description (<stem>.yaml): \
                     give the data file another extension, e.g. .bin",
                    output.display()
                ));
            }
            let special = hwzip::files::is_special(&output);
            hwzip::trace::file::write_raw(&output, &data, word_bits).map_err(|e| e.to_string())?;
            if special {
                // A device or FIFO: the data only, no sidecar next to it.
                eprintln!(
                    "{}: {} elements of {} bits (no description beside a special file)",
                    output.display(),
                    data.len(),
                    word_bits
                );
                return Ok(true);
            }
            let file = output
                .file_name()
                .map(|f| f.to_string_lossy().to_string())
                .unwrap_or_default();
            let mut yaml = format!("file: {}\nword_bits: {}\n", file, word_bits);
            if let Some(sh) = desc_shape {
                yaml.push_str(&format!(
                    "layout: {}\nshape: [{}]\n",
                    layout,
                    sh.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            hwzip::files::write(&yaml_path, yaml.as_bytes())?;
            let nz = data.iter().filter(|x| **x != 0).count();
            println!(
                "{}: {} elements of {} bits, sparsity {:.3}; description {}",
                output.display(),
                data.len(),
                word_bits,
                1.0 - nz as f64 / data.len().max(1) as f64,
                yaml_path.display()
            );
            Ok(true)
        }
        Cmd::Flow {
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
        } => {
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
            flow_cmd(&cfg, &opts)
        }
        Cmd::Sweep(a) => sweep_cmd(a),
        Cmd::Results {
            from,
            snapshot,
            out,
        } => {
            flow::results::write(from.as_deref(), &snapshot, &out)?;
            println!("wrote {}", out.display());
            Ok(true)
        }
        Cmd::Regress {
            configs,
            out,
            lines,
            gate_cosim,
            jobs,
            shard,
            engine,
            profile,
            merge,
        } => {
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
                };
                let runs = flow::regress::run(&o, &flow::progress::Ui::new())?;
                println!("{}", flow::regress::summary(&runs, o.shard));
                runs
            } else {
                let runs = flow::regress::merge(&merge, &out)?;
                println!("{}", flow::regress::summary(&runs, None));
                runs
            };
            println!("reports in {}", out.display());
            Ok(runs.iter().all(|r| r.report.ok))
        }
    }
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
    println!("\n## Energy per line\n\n{}", flow::energy::report(&v));
    Ok(v)
}

/// The arguments of `hwzip sweep`.
#[derive(clap::Args)]
struct SweepArgs {
    /// Engine.
    #[arg(long, default_value = "zvc", value_parser = engine_arg())]
    engine: String,
    /// YAML configuration the grid's values are set in; defaults otherwise.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Grid: keys of the engine's configuration section with their values,
    /// `key=v1,v2; key2=v3,v4` (nested keys dotted: `bpc.dec_tokens=2,4`).
    #[arg(long, conflicts_with = "grid_file", required_unless_present_any = ["grid_file", "merge"])]
    grid: Option<String>,
    /// Grid as a YAML mapping of key to a list of values.
    #[arg(long)]
    grid_file: Option<PathBuf>,
    /// Only these units of the engine, comma-separated [default: every synthesizable
    /// unit].
    #[arg(long, value_delimiter = ',')]
    unit: Vec<String>,
    /// Liberty: osu018 | nangate45 | sky130hd | a path; repeatable [default: osu018].
    #[arg(long)]
    liberty: Vec<String>,
    /// Clock period in ns for every library [default: the config's].
    #[arg(long)]
    clock_ns: Option<f64>,
    /// Co-simulation lines per unit and point (random stalls).
    #[arg(long, default_value_t = 2_000)]
    lines: u64,
    /// File whose compression ratio each point reports [default: a synthetic ReLU
    /// activation tensor, 1 MiB].
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Points in parallel (default: the number of cores).
    #[arg(short = 'j', long)]
    jobs: Option<usize>,
    /// Run only shard K of N of the points (every N-th point from the K-th), e.g. `2/4`;
    /// join the shards' directories with --merge.
    #[arg(long)]
    shard: Option<String>,
    /// Merge these sweep directories (shards of one sweep) into --out instead of running.
    #[arg(long, num_args = 1.., conflicts_with_all = ["grid", "grid_file", "shard"])]
    merge: Vec<PathBuf>,
    /// Output directory (points/, sweep.md, sweep.csv, sweep.json, report.html).
    #[arg(long, default_value = "build/sweep")]
    out: PathBuf,
}

/// `hwzip eval --codecs`: every chosen line codec alone on each trace file, beside zlib and
/// zstd, as one table per file (or JSON).
fn eval_codecs(
    cfg: &Config,
    codecs: &[String],
    traces: &[PathBuf],
    json: bool,
) -> Result<bool, String> {
    use engines::codecs;
    let names: Vec<&str> = if codecs.iter().any(|c| c == "all") {
        codecs::NAMES.to_vec()
    } else {
        let mut v = Vec::new();
        for c in codecs {
            let n = codecs::NAMES
                .iter()
                .copied()
                .find(|n| n == c)
                .ok_or_else(|| {
                    format!(
                        "unknown codec `{}` (all, {})",
                        hwzip::files::quote(c),
                        codecs::NAMES.join(", ")
                    )
                })?;
            if !v.contains(&n) {
                v.push(n);
            }
        }
        v
    };
    if traces.is_empty() {
        return Err("--codecs compares codecs on your files: give --trace FILE".into());
    }
    let mut all = Vec::new();
    for t in traces {
        let data = hwzip::trace::file::load_bytes(t).map_err(|e| e.to_string())?;
        let rows = codecs::side_by_side(cfg, &data, &names)?;
        if !json {
            println!(
                "## {}\n\n{}",
                t.display(),
                codecs::markdown(&rows, data.len())
            );
        }
        all.push(serde_json::json!({"trace": t.display().to_string(), "bytes": data.len(), "rows": rows}));
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?
        );
    }
    Ok(true)
}

/// `hwzip sweep`: runs (or merges) a sweep and prints its table; fails if a point failed.
fn sweep_cmd(a: SweepArgs) -> Result<bool, String> {
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
    print!("{}", sweep::markdown(&report));
    println!(
        "\nreports: {}/sweep.{{md,csv,json}}, {}/report.html",
        a.out.display(),
        a.out.display()
    );
    Ok(sweep::passed(&report))
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
        println!(
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
            println!("  FIRST MISMATCH: {}", m);
        }
        ok &= st.mismatches == 0;
    }
    Ok(ok)
}

fn flow_cmd(cfg: &Config, opts: &flow::job::FlowOptions) -> Result<bool, String> {
    let ui = flow::progress::Ui::new();
    let r = flow::job::run(cfg, opts, &ui)?;
    flow::job::write(&r, &opts.out)?;
    println!("\n## Co-simulation\n\n{}", flow::cosim_markdown(&r.cosim));
    if !r.synth.is_empty() {
        println!(
            "## Synthesis (clock targets in the clock_ns column)\n\n{}",
            hwzip::synth::to_markdown(&r.synth)
        );
    }
    for t in &r.tables {
        println!("## {}\n\n{}", t.title, t.markdown);
    }
    for n in &r.notes {
        println!("note: {}", n);
    }
    let failures = r.failures();
    if !failures.is_empty() {
        println!("## Failed steps\n");
        for f in &failures {
            println!(
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
    let verdict = if r.ok {
        "every step ran and every unit matches its golden model".to_string()
    } else {
        let mut v = vec![format!("{} step(s) FAILED or MISMATCHED", failures.len())];
        if r.skipped() > 0 {
            v.push(format!("{} skipped (--fail-fast)", r.skipped()));
        }
        v.join(", ")
    };
    println!(
        "\nflow ({} profile) finished in {:.0} s: {}; reports in {}",
        r.profile.name(),
        r.seconds,
        verdict,
        opts.out.display()
    );
    Ok(r.ok)
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    input::read(p, input::Purpose::Container)
        .map_err(|e| format!("cannot read {}: {}", p.display(), e))
}

/// `--gate-cosim` / `--energy` counts: gate-level runs are about 10^3 times slower than RTL
/// ones, so at most 10^6 (hours for the largest netlist).
fn gate_count() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=1_000_000)
}

/// `--lines` of any command: at least 1, at most [`hwzip::config::MAX_COSIM_LINES`].
fn check_lines(l: u64) -> Result<(), String> {
    if !(1..=hwzip::config::MAX_COSIM_LINES).contains(&l) {
        return Err(format!(
            "--lines {} must be in 1..={}",
            l,
            hwzip::config::MAX_COSIM_LINES
        ));
    }
    Ok(())
}

fn is_std(p: &Path) -> bool {
    p.as_os_str() == "-"
}

fn refuse_same_unless_std(input: &Path, output: &Path) -> Result<(), String> {
    if is_std(output) {
        return Ok(());
    }
    if is_std(input) {
        return hwzip::files::refuse_stdin_same(output);
    }
    hwzip::files::refuse_same(input, output)
}

/// Reads `p` (`-`: standard input, bounded like a file); a container is refused by its
/// magic.
fn read_input(p: &Path, container: bool) -> Result<Vec<u8>, String> {
    use hwzip::model::container::MAGIC;
    use std::io::Read;
    if !is_std(p) {
        return if container {
            read_container(p)
        } else {
            read(p)
        };
    }
    let not_container =
        || "standard input: not an hwzip container (the first bytes are not \"HWZP\")".to_string();
    let mut stdin = std::io::stdin().lock();
    // A container's first bytes are checked before the rest is read (`decompress - <
    // /dev/zero` fails at once, not after the input limit).
    let mut head = Vec::with_capacity(MAGIC.len());
    if container {
        (&mut stdin)
            .take(MAGIC.len() as u64)
            .read_to_end(&mut head)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        if head.is_empty() || !MAGIC.starts_with(&head) {
            return Err(not_container());
        }
    }
    let data = input::read_limited(
        std::io::Cursor::new(head).chain(stdin),
        input::Purpose::Container,
        None,
    )
    .map_err(|e| format!("cannot read standard input: {e}"))?;
    if container && !data.starts_with(&MAGIC) {
        return Err(not_container());
    }
    Ok(data)
}

/// Writes `data` to `p` whole (`-`: standard output, after everything was computed).
fn write_output(p: &Path, data: &[u8]) -> Result<(), String> {
    use std::io::Write;
    if !is_std(p) {
        return hwzip::files::write(p, data);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(data)
        .and_then(|_| out.flush())
        .map_err(|e| format!("cannot write standard output: {e}"))
}

/// The one-line summary and the statistics: on standard error when the data goes to
/// standard output.
fn report(output: &Path, msg: &str, stats: Option<&String>) {
    let text = match stats {
        Some(s) if !s.is_empty() => format!("{msg}\n{s}"),
        _ => msg.to_string(),
    };
    if is_std(output) {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}

/// Reads a container, refusing it by its magic before the body is read.
fn read_container(p: &Path) -> Result<Vec<u8>, String> {
    use hwzip::model::container::MAGIC;
    input::read_after_head(p, input::Purpose::Container, MAGIC.len(), |head| {
        if head == MAGIC {
            Ok(())
        } else {
            Err("not an hwzip container (the first bytes are not \"HWZP\")".into())
        }
    })
    .map_err(|e| match e.kind() {
        // The content is wrong (magic, size): the file itself was readable.
        std::io::ErrorKind::InvalidData => format!("{}: {}", p.display(), e),
        _ => format!("cannot read {}: {}", p.display(), e),
    })
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || matches!(
                    e.kind(),
                    ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                )
            {
                let _ = e.print();
                return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
            }
            // One line: clap's message without the usage block and the --help tip.
            let text = e.render().to_string();
            let msg: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            // clap quotes values with '…': a long value is cut like hwzip's own messages.
            let joined = msg.join(" ");
            let parts: Vec<String> = joined
                .split('\'')
                .enumerate()
                .map(|(i, p)| {
                    if i % 2 == 1 {
                        hwzip::files::quote(p)
                    } else {
                        p.to_string()
                    }
                })
                .collect();
            eprintln!("{}", hwzip::files::clip(&parts.join("'")));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = hwzip::proc::install_signal_handlers() {
        eprintln!("error: cannot install signal handlers: {}", e);
        return ExitCode::from(2);
    }
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {}", e);
            ExitCode::from(2)
        }
    }
}
