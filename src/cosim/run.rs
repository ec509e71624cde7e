//! The run and measure path every engine's units share: the engine-independent run settings
//! ([`RunConfig`]), one loop that streams an engine's transactions through a one-in/one-out
//! unit and tallies what it moved ([`run_txns`]; [`run_counted`] for a stimulus that counts
//! its work units and stored bytes itself), and the latency and throughput measurement
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
use crate::hdl::Module;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;

/// An engine's stimulus configuration: the common run settings plus the engine's own
/// choices (profiles, classes, transfer shapes), which default to its usual mix.
pub trait Stimulus: Default {
    /// The common run settings.
    fn run_mut(&mut self) -> &mut RunConfig;

    /// `run` with the engine's default stimulus.
    fn of(run: &RunConfig) -> Self {
        let mut s = Self::default();
        *s.run_mut() = run.clone();
        s
    }
}

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
    /// `lines` work units from `seed`, with the default gaps and stalls.
    pub fn seeded(lines: u64, seed: u64) -> RunConfig {
        RunConfig {
            lines,
            seed,
            ..RunConfig::default()
        }
    }

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

/// One work unit's transaction and the bytes stored for it, or the error that ends the run.
pub type Counted = Result<(Txn, usize), String>;

/// Streams at most `n` transactions of `next` (`None`: the stimulus is exhausted) through
/// the one-in/one-out unit `top` under `cfg`; `progress` is called about every 64 Ki cycles.
/// Each transaction counts as a work unit of `unit_bytes` raw bytes and its stored bytes
/// ([`RunStats::lines`], `raw_bytes`, `comp_bytes`); the first error of `next` ends the run
/// and is returned.
pub fn run_counted(
    dut: &mut dyn Dut,
    top: &Module,
    n: u64,
    unit_bytes: usize,
    cfg: &HarnessConfig,
    progress: &mut dyn FnMut(&RunStats),
    next: &mut dyn FnMut() -> Option<Counted>,
) -> Result<RunStats, String> {
    let (sin, sout) = Stream::of_unit(top)?;
    let mut left = n;
    let mut err = None;
    let (mut lines, mut comp) = (0u64, 0u64);
    let mut next_txn = || {
        if left == 0 || err.is_some() {
            return None;
        }
        left -= 1;
        match next()? {
            Ok((t, stored)) => {
                lines += 1;
                comp += stored as u64;
                Some(t)
            }
            Err(e) => {
                err = Some(e);
                None
            }
        }
    };
    let mut st = run_stream(dut, &sin, &sout, &mut next_txn, cfg, &mut |_| {}, progress)?;
    if let Some(e) = err {
        return Err(e);
    }
    st.lines = lines;
    st.raw_bytes = lines * unit_bytes as u64;
    st.comp_bytes = comp;
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

/// An engine's bench, implemented on its RTL parameters: how its units are named, built,
/// run against the golden model and measured. [`run`], [`run_clean`] and the engine's
/// `cosim_top`, `cosim` and `measure` ([`unit_top`], [`unit_cosim`], [`unit_measure`])
/// follow from it, so no engine writes them again. An engine's bench module implements it
/// with [`unit_bench!`] from its own `top`, `run_with` and `measure`.
pub trait UnitBench {
    /// The engine's units.
    type Unit: Copy;
    /// Its stimulus settings: a [`RunConfig`], and the knobs only this engine has.
    type Stim;
    /// A unit by its CLI name (the error lists the known ones).
    fn unit(name: &str) -> Result<Self::Unit, String>;
    /// The top module `unit` co-simulates.
    fn top(&self, unit: Self::Unit) -> Result<Arc<Module>, String>;
    /// Runs `unit` on `dut` with `stim`; a mismatch stops the run and is in
    /// [`RunStats::first_mismatch`]; `progress` is called about every 64 Ki cycles.
    fn run_with(
        &self,
        dut: &mut dyn Dut,
        unit: Self::Unit,
        stim: &Self::Stim,
        progress: &mut dyn FnMut(&RunStats),
    ) -> Result<RunStats, String>;
    /// Latency and throughput of `unit` ([`Timing`]).
    fn measure(&self, dut: &mut dyn Dut, unit: Self::Unit) -> Result<Timing, String>;
    /// The unit and the parameters, for error messages.
    fn label(&self, unit: Self::Unit) -> String;
}

/// Runs `unit` of the engine with parameters `p` on `dut` and checks every output beat.
/// Returns the statistics; a mismatch stops the run and is in `first_mismatch`. `Err` is a
/// harness problem (missing port) or a hang.
pub fn run<P: UnitBench>(
    dut: &mut dyn Dut,
    p: &P,
    unit: P::Unit,
    stim: &P::Stim,
) -> Result<RunStats, String> {
    p.run_with(dut, unit, stim, &mut |_| {})
}

/// [`run`], a mismatch (or no output at all) turned into an error that names the unit, the
/// parameters and the first difference.
pub fn run_clean<P: UnitBench>(
    dut: &mut dyn Dut,
    p: &P,
    unit: P::Unit,
    stim: &P::Stim,
) -> Result<RunStats, String> {
    run(dut, p, unit, stim)?.into_clean(&p.label(unit))
}

/// An engine's `cosim_top`: the top module of the unit named `unit`.
pub fn unit_top<P: UnitBench>(p: &P, unit: &str) -> Result<Arc<Module>, String> {
    p.top(P::unit(unit)?)
}

/// An engine's `cosim`: runs the unit named `unit` with `stim`.
pub fn unit_cosim<P: UnitBench>(
    dut: &mut dyn Dut,
    p: &P,
    unit: &str,
    stim: &P::Stim,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    p.run_with(dut, P::unit(unit)?, stim, progress)
}

/// An engine's `measure`: latency and throughput of the unit named `unit`.
pub fn unit_measure<P: UnitBench>(dut: &mut dyn Dut, p: &P, unit: &str) -> Result<Timing, String> {
    p.measure(dut, P::unit(unit)?)
}

/// Implements [`UnitBench`] for an engine's RTL parameters `$params` (units `$unit`, stimulus
/// settings `$stim`) from the functions of the bench module it is invoked in: `top(p,
/// unit)`, `run_with(dut, p, unit, stim, progress)` and `measure(dut, p, unit)`; the label
/// is the unit's name and `p.describe()`.
macro_rules! unit_bench {
    ($params:ty, $unit:ty, $stim:ty) => {
        impl $crate::cosim::run::UnitBench for $params {
            type Unit = $unit;
            type Stim = $stim;

            fn unit(name: &str) -> Result<$unit, String> {
                <$unit>::from_name(name)
            }

            fn top(&self, unit: $unit) -> Result<std::sync::Arc<$crate::hdl::Module>, String> {
                top(self, unit).map_err(|e| e.to_string())
            }

            fn run_with(
                &self,
                dut: &mut dyn $crate::cosim::dut::Dut,
                unit: $unit,
                stim: &$stim,
                progress: &mut dyn FnMut(&$crate::cosim::stream::RunStats),
            ) -> Result<$crate::cosim::stream::RunStats, String> {
                run_with(dut, self, unit, stim, progress)
            }

            fn measure(
                &self,
                dut: &mut dyn $crate::cosim::dut::Dut,
                unit: $unit,
            ) -> Result<$crate::cosim::stream::Timing, String> {
                measure(dut, self, unit)
            }

            fn label(&self, unit: $unit) -> String {
                format!("{} [{}]", unit.name(), self.describe())
            }
        }
    };
}
pub(crate) use unit_bench;
