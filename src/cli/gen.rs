//! `hwzip gen`: the Verilog of an engine's units.

use super::args::{load_config, EngineArgs};
use hwzip::engines;
use hwzip::flow;
use std::path::PathBuf;

/// The arguments of `hwzip gen`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: EngineArgs,
    /// Output directory (files go to <out>/<engine>/).
    #[arg(long, default_value = "rtl_out")]
    pub out: PathBuf,
}

/// Runs `hwzip gen`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        target: EngineArgs { engine, config },
        out,
    } = args;
    let engine = engines::by_name(&engine)?;
    let cfg = load_config(&config)?;
    let files = flow::gen(engine, &cfg, &out)?;
    for f in &files {
        outln!("{}", f.display());
    }
    Ok(true)
}
