//! The adaptive engine's units: which module each one is, its streams, the stimulus settings,
//! the port-word conventions, and the replay runner the controller and link units share.

use crate::cosim::dut::Dut;
use crate::cosim::run::RunConfig;
use crate::cosim::stream::RunStats;
use crate::cosim::stream::{run_stream_with_reset, Stream, Txn};
use crate::model::adaptive::paper::Bench;
use crate::model::adaptive::AdaptiveReport;
use crate::rtl::adaptive::AdaptiveRtlParams;
pub use crate::rtl::designs::adaptive::{top, Unit};
use crate::trace::lines::LineProfile;

/// The input and output streams of a unit, as its generator recorded them.
pub fn streams(p: &AdaptiveRtlParams, unit: Unit) -> Result<(Stream, Stream), String> {
    let top = top(p, unit).map_err(|e| e.to_string())?;
    Stream::of_unit(&top)
}

/// Stimulus settings: the shared run settings and the adaptive engine's own.
#[derive(Clone, Debug)]
pub struct StimConfig {
    /// Run settings; `lines` counts lines, `data`'s 32-bit words are cut into lines
    /// (little-endian, the last one zero padded); `capture` keeps the compressors' streams
    /// (`⌈len/8⌉` bytes each, back to back), or the lines.
    pub run: RunConfig,
    /// Line profiles to draw from (empty: every primitive, `mixed` and the seven benchmarks).
    pub profiles: Vec<LineProfile>,
    /// Decompressor only: fraction of arbitrary payloads (random prefix and bits).
    pub random_payload: f64,
}

impl Default for StimConfig {
    fn default() -> Self {
        StimConfig {
            run: RunConfig::default(),
            profiles: Vec::new(),
            random_payload: 0.2,
        }
    }
}

impl crate::cosim::run::Stimulus for StimConfig {
    fn run_mut(&mut self) -> &mut RunConfig {
        &mut self.run
    }
}

/// Every profile of the stimulus: the primitives, `mixed` and the seven benchmarks.
pub fn all_profiles() -> Vec<LineProfile> {
    LineProfile::PRIMITIVES
        .into_iter()
        .chain([LineProfile::Mixed])
        .chain(Bench::ALL.into_iter().map(LineProfile::Bench))
        .collect()
}

/// Little-endian 32-bit words of `bytes`.
pub fn le_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect()
}

/// The payload bus words of a stream (left-aligned: stream byte j at bus byte `L/8 − 1 − j`).
pub fn bus_words(stream: &[u8], line_bytes: usize) -> Vec<u32> {
    let mut b = stream.to_vec();
    b.resize(line_bytes, 0);
    b.reverse();
    le_words(&b)
}

/// Transactions of a replayed trace and the model's report over it.
pub(super) type Replay = (Vec<Txn>, AdaptiveReport);

/// Builds the transactions and the report of a trace's lines (from the model's reset state).
pub(super) type BuildReplay<'a> = &'a dyn Fn(&[Vec<u8>]) -> Result<Replay, String>;

/// Streams the transactions `build` makes of `lines` (one per line) through `unit`;
/// `comp_bytes` is the model's payload bits sent / 8. After a mid-run reset the model is
/// replayed again from its reset state over the lines not yet sent, as the hardware starts
/// over.
pub(super) fn run_replayed(
    dut: &mut dyn Dut,
    p: &AdaptiveRtlParams,
    unit: Unit,
    lines: &[Vec<u8>],
    build: BuildReplay<'_>,
    cfg: &StimConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let (input, output) = streams(p, unit)?;
    let (txns, rep) = build(lines)?;
    // (remaining transactions, index of the next line).
    let state = std::cell::RefCell::new((txns.into_iter(), 0usize));
    let mut next = || {
        let mut s = state.borrow_mut();
        let t = s.0.next();
        s.1 += usize::from(t.is_some());
        t
    };
    let mut on_reset = || {
        let mut s = state.borrow_mut();
        let k = s.1.min(lines.len());
        s.0 = build(&lines[k..])?.0.into_iter();
        Ok(())
    };
    let mut st = run_stream_with_reset(
        dut,
        &input,
        &output,
        &mut next,
        &mut on_reset,
        &cfg.run.harness(),
        progress,
    )?;
    st.lines = lines.len() as u64;
    st.raw_bytes = rep.traffic.payload_bits_raw / 8;
    st.comp_bytes = rep.traffic.payload_bits_sent / 8;
    Ok(st)
}
