//! Generic valid/ready stream scoreboard, shared by every engine.
//!
//! An engine describes its input and output streams by port names ([`Stream`]) and produces
//! transactions ([`Txn`]): the input beats and the output beats the golden model expects. The
//! runner drives the input with random idle cycles (a beat is held until accepted, as
//! valid/ready requires), holds `ready` low at random on the output, and compares every output
//! beat field by field, in the order the fields are listed, with the next expected one. The
//! first difference stops the run and is reported with transaction, beat, cycle, field,
//! expected and actual values. No progress for [`StreamConfig::hang_cycles`] is reported as a
//! hang. A waveform window can be dumped for a deterministic replay.

use super::dut::Dut;
use super::harness::{resolve, Bench, Channel, Expect, Harness, HarnessConfig};
pub use super::harness::{show, Beat, Fields, Mismatch, RunStats};
use crate::hdl::Dir;
use serde::Serialize;
use std::collections::VecDeque;

/// One valid/ready stream: handshake ports and payload fields (layout name and port).
#[derive(Clone, Debug)]
pub struct Stream {
    /// `valid` port.
    pub valid: String,
    /// `ready` port.
    pub ready: String,
    /// Payload fields as (layout field name, port), in the order mismatches are checked.
    pub fields: Vec<(String, String)>,
}

impl Stream {
    /// A stream from port names, its fields as (layout field name, port).
    pub fn new(valid: &str, ready: &str, fields: &[(&str, &str)]) -> Stream {
        Stream {
            valid: valid.into(),
            ready: ready.into(),
            fields: fields
                .iter()
                .map(|(n, p)| (n.to_string(), p.to_string()))
                .collect(),
        }
    }

    /// The stream `prefix` as the generator recorded it in `top` (ports in layout order).
    pub fn of(top: &crate::hdl::Module, prefix: &str) -> Result<Stream, String> {
        let d = top
            .streams
            .iter()
            .find(|s| s.prefix == prefix)
            .ok_or_else(|| format!("`{}` has no stream `{}`", top.name, prefix))?;
        let fields: Vec<(String, String)> = d
            .layout
            .fields()
            .iter()
            .map(|f| (f.name.clone(), d.field(&f.name)))
            .collect();
        Ok(Stream {
            valid: d.valid(),
            ready: d.ready(),
            fields,
        })
    }

    /// The input (`s`) and output (`m`) streams of a one-in/one-out unit.
    pub fn of_unit(top: &crate::hdl::Module) -> Result<(Stream, Stream), String> {
        Ok((Stream::of(top, "s")?, Stream::of(top, "m")?))
    }

    /// The harness channel of this stream (named after its `valid` port).
    fn channel(&self, dir: Dir) -> Channel {
        let fields: Vec<(&str, &str)> = self
            .fields
            .iter()
            .map(|(n, p)| (n.as_str(), p.as_str()))
            .collect();
        Channel::new(&self.valid, dir, &self.valid, &self.ready, &fields)
    }
}

/// One transaction: input beats and the output beats the model expects for them.
#[derive(Clone, Debug, Default)]
pub struct Txn {
    /// Beats to drive on the input stream.
    pub inputs: Vec<Beat>,
    /// Beats expected on the output stream.
    pub expected: Vec<Beat>,
}

/// Handshake randomisation and run control of a one-in/one-out run: the harness settings
/// (no per-channel rates needed).
pub type StreamConfig = HarnessConfig;

/// The one-in/one-out bench: transactions pulled on demand, their expected beats queued
/// with them.
struct TxnBench<'a> {
    next: &'a mut dyn FnMut() -> Option<Txn>,
    on_output: &'a mut dyn FnMut(&Fields<'_>),
    inq: VecDeque<Beat>,
    produced: u64,
    exhausted: bool,
    on_reset: Option<&'a mut dyn FnMut() -> Result<(), String>>,
}

impl Bench for TxnBench<'_> {
    fn next_input(&mut self, _ch: usize, exp: &mut Expect<'_>) -> Option<Beat> {
        while !self.exhausted && self.inq.len() < 64 {
            match (self.next)() {
                Some(t) => {
                    let id = self.produced;
                    self.produced += 1;
                    self.inq.extend(t.inputs);
                    for (k, b) in t.expected.into_iter().enumerate() {
                        exp.push(1, id, k as u64, b);
                    }
                }
                None => self.exhausted = true,
            }
        }
        self.inq.pop_front()
    }
    fn observed(&mut self, _ch: usize, beat: &Fields<'_>, _cycle: u64, _exp: &mut Expect<'_>) {
        (self.on_output)(beat);
    }
    fn finished(&self) -> bool {
        self.exhausted && self.inq.is_empty()
    }
    fn reset(&mut self) -> Result<(), String> {
        // Beats not offered yet belong to transactions whose expectations were cleared.
        self.inq.clear();
        match self.on_reset.as_mut() {
            Some(f) => f(),
            None => Ok(()),
        }
    }
}

/// Runs transactions from `next` through `dut` (after a reset) until `next` returns `None`
/// and every expected beat has been seen, or until the first mismatch: the
/// [`harness::Harness`] with one driver and one monitor.
///
/// `on_output` sees the fields of every accepted output beat (to capture the stream); `progress` is called
/// about every 64 Ki cycles. `Err` means a harness problem (unknown port) or a hang.
pub fn run_stream(
    dut: &mut dyn Dut,
    input: &Stream,
    output: &Stream,
    next: &mut dyn FnMut() -> Option<Txn>,
    cfg: &StreamConfig,
    on_output: &mut dyn FnMut(&Fields<'_>),
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let mut h = Harness::new(vec![input.channel(Dir::In), output.channel(Dir::Out)]);
    let mut bench = TxnBench {
        next,
        on_output,
        inq: VecDeque::new(),
        produced: 0,
        exhausted: false,
        on_reset: None,
    };
    h.run(dut, &mut bench, cfg, progress)
}

/// [`run_stream`] for a unit with state across transactions: after a mid-run reset
/// ([`HarnessConfig::resets`]) the pending beats are dropped and `on_reset` restarts the
/// model (so that `next` continues from the reset state).
pub fn run_stream_with_reset(
    dut: &mut dyn Dut,
    input: &Stream,
    output: &Stream,
    next: &mut dyn FnMut() -> Option<Txn>,
    on_reset: &mut dyn FnMut() -> Result<(), String>,
    cfg: &StreamConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let mut h = Harness::new(vec![input.channel(Dir::In), output.channel(Dir::Out)]);
    let mut bench = TxnBench {
        next,
        on_output: &mut |_| {},
        inq: VecDeque::new(),
        produced: 0,
        exhausted: false,
        on_reset: Some(on_reset),
    };
    h.run(dut, &mut bench, cfg, progress)
}

pub use crate::rtl::designs::unit_by_name;

/// Measured timing of a unit without back-pressure (filled in by each engine's `measure`).
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// Cycles from the first input beat's acceptance to the first output beat being valid,
    /// counting the acceptance cycle as 1 (a combinational unit has latency 1), for an
    /// isolated transaction of the engine's reference data.
    pub latency_cycles: u64,
    /// Input beats accepted per cycle over a long run without stalls.
    pub in_beats_per_cycle: f64,
    /// Uncompressed bytes per cycle in that run.
    pub raw_bytes_per_cycle: f64,
}

/// Latency of one isolated transaction without stalls: cycles from the acceptance of its first
/// input beat to the first output beat being valid, counting the acceptance cycle as 1.
pub fn measure_latency(
    dut: &mut dyn Dut,
    input: &Stream,
    output: &Stream,
    txn: &Txn,
) -> Result<u64, String> {
    let in_ch = input.channel(Dir::In);
    let inp = resolve(dut, &in_ch)?;
    let out = resolve(dut, &output.channel(Dir::Out))?;
    let beats = txn
        .inputs
        .iter()
        .map(|b| b.order(&in_ch, &inp))
        .collect::<Result<Vec<_>, String>>()?;
    dut.reset(4);
    dut.set_u64(out.ready, 1);
    let mut first_accept = None;
    let mut i = 0;
    for _ in 0..1000 {
        if let Some(b) = beats.get(i) {
            dut.set_u64(inp.valid, 1);
            for ((port, _), v) in inp.fields.iter().zip(b) {
                dut.set(*port, v);
            }
        } else {
            dut.set_u64(inp.valid, 0);
        }
        dut.eval();
        let c = dut.cycle();
        let fire = i < txn.inputs.len() && dut.get_u64(inp.ready) == 1;
        if fire {
            first_accept.get_or_insert(c);
        }
        // A combinational unit answers in the acceptance cycle itself: latency 1.
        if dut.get_u64(out.valid) == 1 {
            if let Some(a) = first_accept {
                return Ok(c - a + 1);
            }
        }
        dut.tick();
        if fire {
            i += 1;
        }
    }
    Err("no output within 1000 cycles".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosim::dut::SimDut;
    use crate::cosim::test_util::assert_clean;
    use crate::hdl::blocks::skid_buffer;
    use crate::hdl::{Expr, ModuleBuilder};

    /// A test fixture `name` with its inputs: `s_valid_i`, `s_data_i` of `width` bits and
    /// `m_ready_i`.
    fn fixture(name: &str, width: u32) -> (ModuleBuilder, Expr, Expr, Expr) {
        let mut m = ModuleBuilder::new(name);
        m.header("Spec: docs/FORMATS.md (test fixture)");
        let sv = m.input("s_valid_i", 1);
        let sd = m.input("s_data_i", width);
        let mr = m.input("m_ready_i", 1);
        (m, sv, sd, mr)
    }

    /// Two skid buffers with `+1` between them: a valid/ready pipeline of depth 2.
    fn plus_one_pipe(stuck: bool) -> std::sync::Arc<crate::hdl::Module> {
        let (mut m, sv, sd, mr) = fixture(if stuck { "pipe_stuck" } else { "pipe_plus1" }, 40);
        let mid_ready = m.wire_decl("mid_ready", 1);
        let a = skid_buffer(&mut m, "st1", &sv, &sd, &mid_ready.expr());
        let inc = m.wire("inc", &(&a.data + &Expr::lit(40, 1)));
        let b = skid_buffer(&mut m, "st2", &a.valid, &inc, &mr);
        m.drive(&mid_ready, &b.ready);
        m.output_expr("s_ready_o", &(if stuck { Expr::zero(1) } else { a.ready }));
        m.output_expr("m_valid_o", &(if stuck { Expr::zero(1) } else { b.valid }));
        m.output_expr("m_data_o", &b.data);
        m.finish().unwrap()
    }

    /// A combinational `+cnt` stage: `m_data = s_data + cnt`, where `cnt` counts the
    /// transfers; `cnt` has a reset (the good unit) or none (the planted bug).
    fn counting(reset: bool) -> std::sync::Arc<crate::hdl::Module> {
        let (mut m, sv, sd, mr) = fixture(if reset { "count_ok" } else { "count_noreset" }, 16);
        let cnt = m.reg("cnt", 16, reset.then_some(0));
        let fire = m.wire("fire", &(&sv & &mr));
        m.next(&cnt, &(&cnt.q() + &Expr::lit(16, 1)), Some(&fire));
        m.output_expr("s_ready_o", &mr);
        m.output_expr("m_valid_o", &sv);
        m.output_expr("m_data_o", &(&sd + &cnt.q()));
        m.finish().unwrap()
    }

    fn run_counting(reset: bool) -> RunStats {
        let top = counting(reset);
        let (i, o) = io();
        let mut dut = SimDut::new(&top).unwrap();
        // The model: the k-th transfer since the last reset adds k.
        let k = std::cell::Cell::new(0u32);
        let mut next = || {
            let n = k.get();
            k.set(n + 1);
            let v = n.wrapping_mul(40_503) & 0xffff;
            Some(Txn {
                inputs: vec![Beat::new().num("data", v.into())],
                expected: vec![Beat::new().num("data", ((v + n) & 0xffff).into())],
            })
            .filter(|_| n < 3000)
        };
        let mut on_reset = || {
            k.set(0);
            Ok(())
        };
        let cfg = StreamConfig {
            resets: 10,
            ..StreamConfig::default()
        };
        run_stream_with_reset(
            &mut dut,
            &i,
            &o,
            &mut next,
            &mut on_reset,
            &cfg,
            &mut |_| {},
        )
        .unwrap()
    }

    #[test]
    fn mid_run_resets_pass_a_unit_that_resets_and_catch_one_that_does_not() {
        let st = run_counting(true);
        assert_clean(&st, "a counter with reset");
        assert_eq!(st.resets, 10);
        let st = run_counting(false);
        let m = st
            .first_mismatch
            .expect("a counter without reset must be caught");
        assert_eq!(m.field, "m_data_o");
        assert!(st.resets >= 1);
    }

    #[test]
    fn a_unit_still_valid_after_reset_is_caught() {
        // The plus-one pipe with resets passes; a unit whose output valid ignores reset fails.
        let top = plus_one_pipe(false);
        let mut dut = SimDut::new(&top).unwrap();
        let cfg = StreamConfig {
            resets: 10,
            ..StreamConfig::default()
        };
        let st = run_txns(&mut dut, txns(3000, 1), &cfg).unwrap();
        assert_clean(&st, "the plus-one pipe with resets");
        assert!(st.resets >= 5, "{}", st.resets);
        // A register slice whose `valid` register has no reset: a beat held at the reset
        // is still offered afterwards.
        let (mut m, sv, sd, mr) = fixture("slice_noreset", 40);
        let valid = m.reg("valid", 1, None);
        let data = m.reg("data", 40, None);
        let s_ready = m.wire("s_ready", &(!&valid.q() | &mr));
        let load = m.wire("load", &(&sv & &s_ready));
        m.next(&valid, &(&load | &(&valid.q() & &!&mr)), None);
        m.next(&data, &(&sd + &Expr::lit(40, 1)), Some(&load));
        m.output_expr("s_ready_o", &s_ready);
        m.output_expr("m_valid_o", &valid.q());
        m.output_expr("m_data_o", &data.q());
        let top = m.finish().unwrap();
        let mut dut = SimDut::new(&top).unwrap();
        let st = run_txns(&mut dut, txns(3000, 1), &cfg).unwrap();
        let m = st
            .first_mismatch
            .expect("valid right after reset must be caught");
        assert_eq!(m.field, "m_valid_o after reset");
    }

    /// The `s` and `m` streams of the test fixtures.
    fn io() -> (Stream, Stream) {
        (
            Stream::new("s_valid_i", "s_ready_o", &[("data", "s_data_i")]),
            Stream::new("m_valid_o", "m_ready_i", &[("data", "m_data_o")]),
        )
    }

    /// [`run_stream`] of `next` through a fixture with the [`io`] streams.
    fn run_txns(
        dut: &mut dyn Dut,
        mut next: impl FnMut() -> Option<Txn>,
        cfg: &StreamConfig,
    ) -> Result<RunStats, String> {
        let (i, o) = io();
        run_stream(dut, &i, &o, &mut next, cfg, &mut |_| {}, &mut |_| {})
    }

    fn txns(n: u64, off: u64) -> impl FnMut() -> Option<Txn> {
        let mut i = 0u64;
        move || {
            i += 1;
            (i <= n).then(|| {
                let v = i.wrapping_mul(0x9e37_79b9_7f4a) & ((1 << 40) - 1);
                Txn {
                    inputs: vec![Beat::new().num("data", v)],
                    expected: vec![Beat::new().num("data", (v + off) & ((1 << 40) - 1))],
                }
            })
        }
    }

    #[test]
    fn pipeline_passes_under_random_stalls_at_full_rate() {
        let top = plus_one_pipe(false);
        let (i, o) = io();
        let mut dut = SimDut::new(&top).unwrap();
        let st = run_txns(&mut dut, txns(2000, 1), &StreamConfig::default()).unwrap();
        assert_clean(&st, "the plus-one pipe under stalls");
        assert_eq!(
            (st.transfers, st.beats_in, st.beats_out),
            (2000, 2000, 2000)
        );
        // No stalls: one beat per cycle after the two-cycle fill.
        let cfg = StreamConfig::quiet(1);
        let st = run_txns(&mut dut, txns(1000, 1), &cfg).unwrap();
        assert!(st.cycles <= 1000 + 3, "{} cycles", st.cycles);
        let lat = measure_latency(&mut dut, &i, &o, &txns(1, 1)().unwrap()).unwrap();
        assert_eq!(
            lat, 3,
            "two register stages: valid on the 3rd cycle counting the accept"
        );
    }

    #[test]
    fn mismatches_and_hangs_are_reported() {
        let (_, o) = io();
        let mut dut = SimDut::new(&plus_one_pipe(false)).unwrap();
        let st = run_txns(&mut dut, txns(10, 2), &StreamConfig::default()).unwrap();
        let m = st
            .first_mismatch
            .expect("off-by-one expectation must mismatch");
        assert_eq!((m.transfer, m.beat, m.field.as_str()), (0, 0, "m_data_o"));
        let mut stuck = SimDut::new(&plus_one_pipe(true)).unwrap();
        let cfg = StreamConfig {
            hang_cycles: 100,
            ..StreamConfig::default()
        };
        let e = run_txns(&mut stuck, txns(10, 1), &cfg).unwrap_err();
        assert!(e.contains("hung"), "{}", e);
        let e = run_stream(
            &mut dut,
            &Stream::new("nope", "s_ready_o", &[]),
            &o,
            &mut txns(1, 1),
            &cfg,
            &mut |_| {},
            &mut |_| {},
        )
        .unwrap_err();
        assert!(e.contains("nope"), "{}", e);
    }
}
