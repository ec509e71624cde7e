//! `hwzip decompress`: a container back to its bytes, with the engine it names.

use super::args::engine_arg;
use super::io::{read_input, refuse_same_unless_std, report, write_output};
use hwzip::engines;
use std::path::PathBuf;

/// The arguments of `hwzip decompress`.
#[derive(clap::Args)]
pub struct Args {
    /// Engine [default: the one the container names]; another is an error.
    #[arg(long, value_parser = engine_arg())]
    pub engine: Option<String>,
    /// Print the encoding histogram of the container's lines and the ratio.
    #[arg(long)]
    pub stats: bool,
    /// Container written by `hwzip compress` (`-`: standard input).
    pub input: PathBuf,
    /// File to write (`-`: standard output; never the input; written in full or not at
    /// all).
    pub output: PathBuf,
}

/// Runs `hwzip decompress`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        engine,
        stats,
        input,
        output,
    } = args;
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
        let engine = engines::by_name(&name).map_err(|e| format!("{}: {}", input.display(), e))?;
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
