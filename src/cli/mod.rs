//! The command line: the options (one module per subcommand, each with its `Args` and
//! `run`) and the dispatch. `main.rs` parses, dispatches and turns the result into the exit
//! code.

/// `println!` for the command's results: a reader that went away (a closed pipe, as in
/// `hwzip gen | head -1`) stops hwzip quietly, as it stops other Unix tools ([`write_out`]).
macro_rules! outln {
    () => {
        $crate::cli::write_out(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::cli::write_out(format_args!("{}\n", format_args!($($t)*)))
    };
}

/// `print!` for the command's results (see [`outln!`]).
macro_rules! out {
    ($($t:tt)*) => {
        $crate::cli::write_out(format_args!($($t)*))
    };
}

pub mod args;
pub mod compress;
pub mod cosim;
pub mod decompress;
pub mod eval;
pub mod flow;
pub mod gen;
pub mod io;
pub mod prove;
pub mod regress;
pub mod results;
pub mod sweep;
pub mod synth;
pub mod trace;

use clap::{Parser, Subcommand};
use hwzip::files::input;
use std::io::Write;

/// Exit status when standard output was closed under hwzip: 128 + SIGPIPE, what a shell
/// reports for a tool the closed pipe stopped.
pub const BROKEN_PIPE_EXIT: i32 = 128 + 13;

/// Writes to standard output. When the reader has gone (`EPIPE`), hwzip stops its children
/// and removes its temporaries, then exits with [`BROKEN_PIPE_EXIT`] and no message; any
/// other write error is a one-line error and exit 2. Never a panic, as `println!` would.
pub fn write_out(args: std::fmt::Arguments) {
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args) {
        let code = if e.kind() == std::io::ErrorKind::BrokenPipe {
            BROKEN_PIPE_EXIT
        } else {
            eprintln!("error: cannot write standard output: {e}");
            2
        };
        hwzip::proc::stop_everything();
        std::process::exit(code);
    }
}

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
pub struct Cli {
    /// Largest trace or compress/decompress input read, after gunzip (e.g. 512M, 4G;
    /// default 1G). Also turns off the gzip ratio guard.
    #[arg(long, global = true, value_name = "SIZE", value_parser = input::parse_size)]
    pub max_input: Option<u64>,
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Cmd {
    /// Generate Verilog for an engine's units.
    Gen(gen::Args),
    /// Co-simulate a unit against the golden model in Verilator (random stalls).
    Cosim(cosim::Args),
    /// Synthesize an engine's units (Yosys + OpenSTA) and report area and timing.
    Synth(synth::Args),
    /// Evaluate an engine's golden model on data. zvc: compression ratio of a trace beside
    /// RLE and zlib. base-xor: ones, toggles and I/O energy of every scheme side by side.
    /// adaptive: the selector against each codec. cpack-lossy: ratios and FP error per
    /// threshold. buddy: size buckets, ratios, codec comparison, buddy fractions, metadata
    /// slice sweep and profiler. On trace files and/or synthetic classes.
    Eval(eval::Args),
    /// Compress a file with the golden model (self-describing container).
    Compress(compress::Args),
    /// Decompress a file written by `hwzip compress`.
    Decompress(decompress::Args),
    /// Write a synthetic trace (raw little-endian elements + a YAML description beside it).
    Trace(trace::Args),
    /// Formal proofs (Yosys + yosys-smtbmc): every unit's stream contract and the engine's
    /// round trips, by bounded model checking and k-induction; `--faults` also proves that
    /// each planted fault is caught.
    Prove(prove::Args),
    /// The main job: generate → co-simulate → synthesize → report, for every engine.
    Flow(flow::Args),
    /// Design-space sweep: generate, lint, co-simulate, time and synthesize every point of a
    /// parameter grid of one engine; report area, Fmax, latency, throughput and compression
    /// ratio with the Pareto fronts (area vs GB/s, area vs ratio).
    Sweep(sweep::Args),
    /// The long, paper-grade regression: the default configuration with the `paper` profile
    /// (10^6 lines per unit, three libraries, Table II/III), gate-level co-simulation of the
    /// ZVC osu018 netlists, and every parameter set in `--configs` (co-simulation).
    Regress(regress::Args),
    /// docs/RESULTS.md from the long tier: with --from, a regress folder (whole or merged)
    /// is reduced to the snapshot first; the page is always rendered from the snapshot.
    Results(results::Args),
}

/// Runs the parsed command line: `Ok(true)` when everything passed, `Ok(false)` when it ran
/// but a step failed or mismatched, `Err` for a one-line error.
pub fn run(cli: Cli) -> Result<bool, String> {
    if let Some(m) = cli.max_input {
        input::set_data_limit(m);
    }
    match cli.cmd {
        Cmd::Gen(a) => gen::run(a),
        Cmd::Cosim(a) => cosim::run(a),
        Cmd::Synth(a) => synth::run(a),
        Cmd::Eval(a) => eval::run(a),
        Cmd::Compress(a) => compress::run(a),
        Cmd::Decompress(a) => decompress::run(a),
        Cmd::Trace(a) => trace::run(a),
        Cmd::Prove(a) => prove::run(a),
        Cmd::Flow(a) => flow::run(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Regress(a) => regress::run(a),
        Cmd::Results(a) => results::run(a),
    }
}
