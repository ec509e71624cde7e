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
        snapshot,
        out,
    } = args;
    flow::results::write(from.as_deref(), &snapshot, &out)?;
    outln!("wrote {}", out.display());
    Ok(true)
}
