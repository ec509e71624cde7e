//! `hwzip results`: docs/RESULTS.md from the long tier's snapshot.

use hwzip::flow;
use std::path::PathBuf;

/// The arguments of `hwzip results`.
#[derive(clap::Args)]
pub struct Args {
    /// The regress output folder to take the figures from: its engines' rows replace theirs in
    /// the snapshot, the other engines' rows are kept (default: keep the snapshot as it is).
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// An `hwzip synth --fpga` output folder (repeatable): its units' FPGA rows replace
    /// theirs in the snapshot.
    #[arg(long)]
    pub fpga: Vec<PathBuf>,
    /// An `hwzip synth --config C --liberty nangate45 --out DIR` output folder (repeatable):
    /// its rows, named by the folder, join the timing-closure table.
    #[arg(long)]
    pub closure: Vec<PathBuf>,
    /// The snapshot (JSON) the page is rendered from.
    #[arg(long, default_value = "docs/results.json")]
    pub snapshot: PathBuf,
    /// The page.
    #[arg(long, default_value = "docs/RESULTS.md")]
    pub out: PathBuf,
}

/// Runs `hwzip results`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        from,
        fpga,
        closure,
        snapshot,
        out,
    } = args;
    flow::results::write(
        from.as_deref(),
        &flow::results::More { fpga, closure },
        &snapshot,
        &out,
    )?;
    outln!("wrote {}", out.display());
    Ok(true)
}
