//! `hwzip compress`: a file through an engine's golden model or one line codec, into the
//! CRC-checked container.

use super::args::{engine_arg, load_config};
use super::io::{read_input, refuse_same_unless_std, report, write_output};
use hwzip::engines;
use std::path::PathBuf;

/// The arguments of `hwzip compress`.
#[derive(clap::Args)]
pub struct Args {
    /// Engine.
    #[arg(long, default_value = "zvc", value_parser = engine_arg())]
    pub engine: String,
    /// One line codec alone instead of an engine: bdi, fpc, cpack (C-Pack+Z), cpack128
    /// (original C-Pack, 128 B), bpc or zvc (parameters from the engines' config sections).
    #[arg(long, conflicts_with_all = ["engine", "truncate"])]
    pub codec: Option<String>,
    /// YAML configuration (parameters); defaults otherwise.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Print the encoding histogram per line (window for zvc), the line count and the
    /// ratio (cpack-lossy with --truncate: also the FP32 error).
    #[arg(long)]
    pub stats: bool,
    /// cpack-lossy: truncate this many mantissa LSBs of every 32-bit word (one of the
    /// codec's t_table: 0 lossless, 8, 12, 16).
    #[arg(long, default_value_t = 0)]
    pub truncate: u32,
    /// File to compress (`-`: standard input).
    pub input: PathBuf,
    /// Container to write (`-`: standard output; never the input; written in full or
    /// not at all).
    pub output: PathBuf,
}

/// Runs `hwzip compress`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        engine,
        codec,
        config,
        stats,
        truncate,
        input,
        output,
    } = args;
    let engine = engines::by_name(&engine)?;
    let mut cfg = load_config(&config)?;
    if let Some(c) = &codec {
        // Checked before any input is read.
        engines::codecs::check_name(c)?;
    }
    if truncate != 0 && !engine.truncates() {
        let lossy: Vec<&str> = engines::ALL
            .iter()
            .filter(|e| e.truncates())
            .map(|e| e.name())
            .collect();
        return Err(format!(
            "--truncate is for --engine {}, not {}",
            lossy.join(" or "),
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
