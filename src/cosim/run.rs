//! The run and measure path every engine's units share: the engine-independent run settings
//! ([`RunConfig`]), one loop that streams an engine's transactions through a one-in/one-out
//! unit and tallies what it moved ([`run_txns`]), and the latency and throughput measurement
//! ([`measure`]).
//!
//! An engine brings only what is its own: a [`TxnSource`] (its stimulus and golden model,
//! turned into transactions whose beats are named by the units' layouts), and the reference
//! transaction and data its latency is measured on. Its stimulus settings embed a
//! [`RunConfig`] beside the knobs only it has (data classes, corrupted inputs, transfer
//! lengths).

use super::dut::Dut;
use super::harness::{Fields, HarnessConfig};
use super::stream::{measure_latency, run_stream, RunStats, Stream, Timing, Txn};
use std::cell::RefCell;
use std::path::PathBuf;

/// What every co-simulation run takes, whatever the engine: how much to run, the random
/// gaps and stalls, the run control, and fixed data instead of generated stimulus.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Work units to push through (an engine's lines, sectors, windows, entries or blocks).
    pub lines: u64,
    /// Random seed (runs are reproducible).
    pub seed: u64,
    /// Probability that the source inserts an idle cycle before a beat.
    pub in_gap: f64,
    /// Probability that the sink de-asserts `ready` in a cycle.
    pub out_stall: f64,
    /// Fixed data (a trace's words) instead of generated stimulus; each engine cuts it into
    /// its work units, the last one zero padded.
    pub data: Option<Vec<u32>>,
    /// Cycles without progress after which the design is declared hung.
    pub hang_cycles: u64,
    /// Dump a waveform of cycles `[from, to)` to this file (needs a tracing build).
    pub vcd: Option<(PathBuf, u64, u64)>,
    /// Resets asserted at random cycles in the middle of transactions.
    pub resets: u32,
    /// Keep the design's output bytes in [`RunStats::output`] (what each engine captures is
    /// in its [`TxnSource::capture`]).
    pub capture: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            lines: 1000,
            seed: 1,
            in_gap: 0.2,
            out_stall: 0.3,
            data: None,
            hang_cycles: 10_000,
            vcd: None,
            resets: 0,
            capture: false,
        }
    }
}

impl RunConfig {
    /// `lines` work units with the default gaps and stalls.
    pub fn lines(lines: u64) -> RunConfig {
        RunConfig {
            lines,
            ..RunConfig::default()
        }
    }

    /// The throughput run of [`measure`]: `lines` work units of seed 7, no gaps, no stalls.
    pub fn quiet(lines: u64) -> RunConfig {
        RunConfig {
            lines,
            seed: 7,
            in_gap: 0.0,
            out_stall: 0.0,
            ..RunConfig::default()
        }
    }

    /// The fixed data as bytes (its 32-bit words little-endian), if any.
    pub fn data_bytes(&self) -> Option<Vec<u8>> {
        self.data
            .as_ref()
            .map(|w| w.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// The harness settings of this run (seed, gaps, stalls, hang limit, waveform, resets).
    pub fn harness(&self) -> HarnessConfig {
        HarnessConfig {
            seed: self.seed,
            in_gap: self.in_gap,
            out_stall: self.out_stall,
            channel_rates: Vec::new(),
            hang_cycles: self.hang_cycles,
            vcd: self.vcd.clone(),
            resets: self.resets,
        }
    }
}

/// An engine's transactions for one run of one unit: its stimulus through its golden model.
pub trait TxnSource {
    /// The next transaction (`None`: the stimulus is exhausted).
    fn next_txn(&mut self) -> Option<Txn>;
    /// Appends the bytes of an output beat to `out` (runs with [`RunConfig::capture`]).
    fn capture(&self, _beat: &Fields<'_>, _out: &mut Vec<u8>) {}
    /// Fills in what the run moved ([`RunStats::lines`], `raw_bytes`, `comp_bytes`), from
    /// the transactions handed out.
    fn tally(&self, st: &mut RunStats);
}

/// Streams `src`'s transactions through `dut` (streams `input` and `output`) under `cfg`'s
/// gaps, stalls and resets until the source is exhausted, or until the first mismatch;
/// `progress` is called about every 64 Ki cycles.
pub fn run_txns(
    dut: &mut dyn Dut,
    input: &Stream,
    output: &Stream,
    src: &mut dyn TxnSource,
    cfg: &RunConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let src = RefCell::new(src);
    let captured = RefCell::new(Vec::new());
    let mut next = || src.borrow_mut().next_txn();
    let mut on_output = |b: &Fields<'_>| {
        if cfg.capture {
            src.borrow().capture(b, &mut captured.borrow_mut());
        }
    };
    let mut st = run_stream(
        dut,
        input,
        output,
        &mut next,
        &cfg.harness(),
        &mut on_output,
        progress,
    )?;
    src.borrow().tally(&mut st);
    st.output = captured.into_inner();
    Ok(st)
}

/// A unit's [`Timing`]: the latency of `latency` (one isolated transaction, no stalls) and
/// the rates of the run `throughput` makes (no gaps or stalls, e.g. [`RunConfig::quiet`]),
/// which must be clean.
pub fn measure(
    dut: &mut dyn Dut,
    input: &Stream,
    output: &Stream,
    latency: &Txn,
    throughput: impl FnOnce(&mut dyn Dut) -> Result<RunStats, String>,
) -> Result<Timing, String> {
    let latency_cycles = measure_latency(dut, input, output, latency)?;
    let st = throughput(dut)?;
    if let Some(m) = st.first_mismatch {
        return Err(format!("mismatch while measuring throughput: {}", m));
    }
    let cycles = st.cycles.max(1) as f64;
    Ok(Timing {
        latency_cycles,
        in_beats_per_cycle: st.beats_in as f64 / cycles,
        raw_bytes_per_cycle: st.raw_bytes as f64 / cycles,
    })
}
