//! A paper's published figures for one unit, as the report's charts and docs/RESULTS.md set
//! them beside ours: area in kGE at the paper's node (with the NAND2 area its table
//! assumes), clock in MHz and latency in cycles. Each engine knows its paper's figures
//! (`Engine::paper_mark`); `engines::paper_mark` adds the latency counted as hwzip counts.

/// A paper's figures for one unit (any may be unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PaperMark {
    /// Area, kGE (converted with the table's NAND2 area).
    pub kge: Option<f64>,
    /// Clock, MHz.
    pub mhz: Option<f64>,
    /// Latency, cycles, as the paper counts it.
    pub latency: Option<u32>,
    /// The same latency counted as hwzip counts (from the cycle that accepts the input to
    /// the first output), where the paper's count converts (`Engine::latency_as_ours`).
    pub latency_ours: Option<u32>,
    /// A bound instead of a value: the area is at most this many kGE.
    pub kge_at_most: Option<f64>,
    /// A bound instead of a value: the clock is at least this many MHz.
    pub mhz_at_least: Option<f64>,
}

/// What the marks are, for chart legends.
pub const LEGEND: &str = "paper (at its node)";

/// What the latency marks are: the papers' latencies counted as ours
/// (`Engine::latency_as_ours`).
pub const LATENCY_LEGEND: &str = "paper, counted as here";
