//! Adaptive link compression scoreboard (BDI, FPC and C-Pack+Z units, the controller; the link
//! units in [`link`]): streams lines
//! through a unit with random valid gaps and random `ready` back-pressure, and compares every
//! output with the golden model ([`crate::model::bdi`], [`crate::model::cpack`], [`crate::model::adaptive`]).
//!
//! * `bdi_comp`: `ok`, `enc`, `len` and the left-aligned payload must equal
//!   `model::bdi::compress` (encoding, `nbits`, stream bits; the raw line when uncompressed);
//! * `bdi_decomp`: fed the model's streams (and raw lines with `s_comp_i = 0`), plus arbitrary
//!   payloads (20%: random bits after a random or reserved prefix), every output must equal
//!   `model::bdi::decompress_prefix` (`m_err_o` and an all-zero line for a reserved prefix);
//! * `bdi_loopback`: `bdi_comp` → `bdi_decomp` returns every line unchanged;
//! * `fpc_comp`, `fpc_decomp`, `fpc_loopback`: the same for FPC against `model::fpc`
//!   (`compress`, `decompress_prefix`; arbitrary payloads are random bits or a model stream
//!   with one bit flipped, `m_err_o` and an all-zero line where the model rejects them);
//! * `cpack_comp`, `cpack_decomp`, `cpack_loopback`: the same for C-Pack+Z
//!   (`model::cpack::compress`, `decompress_prefix`; arbitrary payloads are random bits or the
//!   model's stream with 1–3 bits flipped);
//! * `ctrl` (`adaptive_ctrl`): fed the per-line sizes of `model::adaptive::evaluate` over a
//!   phase trace (segments of different profiles, so the decisions change), every output
//!   (`sel_alg`, sampling flag) must equal the model's `replay_lines` over the same lines
//!   (`sel_alg_sequence()`).
//!
//! Port words: a line is its bytes little-endian (word 0 = bytes 0..3); the payload bus holds
//! stream byte j at bus byte `L/8 − 1 − j` (left-aligned, MSB-first).
//!
//! Stimulus: the FORMATS §5 line profiles ([`crate::trace::lines`]): every pattern primitive,
//! `mixed` and the seven calibrated benchmark mixes, one profile drawn per line.

mod ctrl;
mod lines;
pub mod link;
mod units;

pub use ctrl::{ctrl_cases, ctrl_lines, ctrl_transaction, CtrlCase};
#[cfg(test)]
use lines::fpc_of;
pub use lines::{transaction, LineCase, LineSource};
use units::run_replayed;
pub use units::{all_profiles, bus_words, le_words, streams, top, StimConfig, Unit};

use crate::cosim::dut::Dut;
use crate::cosim::run::{measure as measure_run, run_txns, RunConfig, TxnSource};
pub use crate::cosim::run::{run, run_clean};
pub use crate::cosim::stream::Mismatch;
use crate::cosim::stream::{Fields, Txn};
use crate::cosim::stream::{RunStats, Timing};
use crate::model::bdi::{self, BdiEncoding};
use crate::model::cpack;
use crate::model::fpc;
use crate::rtl::adaptive::AdaptiveRtlParams;

crate::cosim::run::unit_bench!(AdaptiveRtlParams, Unit, StimConfig);

/// Runs `unit` (the engine's [`UnitBench::run_with`]) with a progress callback, called
/// about every 64 Ki cycles.
pub fn run_with(
    dut: &mut dyn Dut,
    p: &AdaptiveRtlParams,
    unit: Unit,
    cfg: &StimConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    p.validate()?;
    if unit == Unit::Ctrl || unit.is_link() {
        // A phase trace replayed through the model; `comp_bytes` is its payload bits sent / 8.
        let build = |ls: &[Vec<u8>]| match unit {
            Unit::Ctrl => ctrl::ctrl_replay(p, ls),
            _ => link::cases(p, unit, ls, cfg),
        };
        return run_replayed(dut, p, unit, &ctrl_lines(p, cfg), &build, cfg, progress);
    }
    let (input, output) = streams(p, unit)?;
    let mut src = Lines {
        p,
        unit,
        src: LineSource::new(p, cfg).with_alg(unit.alg()),
    };
    run_txns(dut, &input, &output, &mut src, &cfg.run, progress)
}

/// One run's lines for a codec unit.
struct Lines<'a> {
    p: &'a AdaptiveRtlParams,
    unit: Unit,
    src: LineSource,
}

impl TxnSource for Lines<'_> {
    fn next_txn(&mut self) -> Option<Txn> {
        let c = self.src.next_case(self.unit.is_decomp())?;
        Some(transaction(self.p, self.unit, &c))
    }

    /// A compressor's stream (`⌈len/8⌉` bytes of its left-aligned bus: stream byte j is bus
    /// byte L/8 − 1 − j), or the line.
    fn capture(&self, b: &Fields<'_>, out: &mut Vec<u8>) {
        let bytes = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
        if matches!(self.unit, Unit::BdiComp | Unit::FpcComp | Unit::CpackComp) {
            let mut bus = bytes(b.get("payload"));
            bus.reverse();
            let n = (b.u64("len") as usize).div_ceil(8).min(self.p.line_bytes);
            out.extend_from_slice(&bus[..n]);
        } else {
            out.extend(bytes(b.get("line")));
        }
    }

    fn tally(&self, st: &mut RunStats) {
        st.lines = self.src.lines;
        st.raw_bytes = self.src.lines * self.p.line_bytes as u64;
        st.comp_bytes = self.src.comp_bits / 8;
    }
}

/// Measures latency (one isolated line; the pipelines have a fixed depth, so it does not
/// depend on the line) and throughput (2000 lines of every profile, no stalls) of `unit`.
pub fn measure(dut: &mut dyn Dut, p: &AdaptiveRtlParams, unit: Unit) -> Result<Timing, String> {
    measure_over(dut, p, unit, 2000)
}

/// [`measure`] with the throughput taken over `lines` lines (the interpreter's tests use
/// fewer).
pub fn measure_over(
    dut: &mut dyn Dut,
    p: &AdaptiveRtlParams,
    unit: Unit,
    lines: u64,
) -> Result<Timing, String> {
    p.validate()?;
    let (input, output) = streams(p, unit)?;
    // The isolated line: the model's Base4-Δ1 golden vector (FPC sends it raw, its 532-bit
    // stream being longer than the line; C-Pack+Z codes it as new words and one narrow word);
    // the controller gets a zero line. For the controller and the link units it is the first
    // sample of a period (every compressor runs).
    let words: Vec<u32> = (0..p.line_bytes as u32 / 4)
        .map(|i| if i == 5 { 3 } else { 0x1234_5678 + i })
        .collect();
    let line: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let txn = if unit.is_link() {
        let (txns, _) = link::cases(p, unit, &[line], &StimConfig::default())?;
        txns.into_iter().next().ok_or("no link transaction")?
    } else if unit == Unit::Ctrl {
        let (cases, _) = ctrl_cases(p, &[vec![0u8; p.line_bytes]])?;
        ctrl_transaction(&cases[0])
    } else {
        let comp = bdi::compress(&p.bdi(), &line).map_err(|e| e.to_string())?;
        let fpc = Some(fpc::compress(&p.fpc(), &line).map_err(|e| e.to_string())?);
        let cpack = if unit.is_cpack() {
            Some(cpack::compress(&p.cpack(), &line).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let case = LineCase {
            line,
            comp,
            fpc,
            cpack,
            arbitrary: None,
        };
        transaction(p, unit, &case)
    };
    // Throughput: `lines` lines (phases for the controller and the link) without stalls.
    let cfg = StimConfig {
        run: RunConfig::quiet(lines),
        random_payload: if unit.is_link() {
            0.0
        } else {
            StimConfig::default().random_payload
        },
        ..StimConfig::default()
    };
    measure_run(dut, &input, &output, &txn, |dut| run(dut, p, unit, &cfg))
}

/// Share of each BDI encoding in `lines` lines of the stimulus (for reports and tests).
pub fn encoding_histogram(p: &AdaptiveRtlParams, cfg: &StimConfig) -> Vec<(BdiEncoding, u64)> {
    let mut src = LineSource::new(p, cfg);
    let mut h = std::collections::BTreeMap::new();
    while let Some(c) = src.next_case(false) {
        *h.entry(c.comp.encoding).or_insert(0u64) += 1;
    }
    h.into_iter().collect()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod verilator_tests;
