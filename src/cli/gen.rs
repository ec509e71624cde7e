//! `hwzip gen`: the Verilog of an engine's units.

use super::args::{engine_arg, load_config};
use hwzip::engines;
use hwzip::flow;
use std::path::PathBuf;

/// The arguments of `hwzip gen`.
#[derive(clap::Args)]
pub struct Args {
    /// Engine.
    #[arg(long, default_value = "zvc", value_parser = engine_arg())]
    pub engine: String,
    /// YAML configuration (parameters); defaults otherwise.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output directory (files go to <out>/<engine>/).
    #[arg(long, default_value = "rtl_out")]
    pub out: PathBuf,
}

/// Runs `hwzip gen`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        engine,
        config,
        out,
    } = args;
    let engine = engines::by_name(&engine)?;
    let cfg = load_config(&config)?;
    let files = flow::gen(engine, &cfg, &out)?;
    for f in &files {
        println!("{}", f.display());
    }
    Ok(true)
}
