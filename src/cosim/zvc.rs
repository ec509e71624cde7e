//! ZVC scoreboard: feeds transfers with random valid gaps and random `ready` back-pressure,
//! and compares every output beat with the golden model (`model::zvc`).
//!
//! * compressor: every compressed beat (data, byte count, `last`) must equal the golden stream
//!   of spec §2.2 cut into beats; bytes beyond the count must be zero (determinism);
//! * decompressor: fed the golden stream, every output sector must equal the input padded to
//!   whole windows, `last` on the final sector, `err` never set;
//! * loop-back: RTL compressor → RTL decompressor returns the input exactly.
//!
//! A stall of the design (no progress for [`StimConfig::hang_cycles`]) is reported as such.

use super::dut::Dut;
use crate::model::zvc as model;
use crate::rtl::zvc::ZvcRtlParams;
use crate::trace::synthetic::DataClass;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;

/// Stimulus and back-pressure settings.
#[derive(Clone, Debug)]
pub struct StimConfig {
    /// Windows (lines) to push through, in total.
    pub lines: u64,
    /// Random seed (runs are reproducible).
    pub seed: u64,
    /// Probability that the source inserts an idle cycle before a beat.
    pub in_gap: f64,
    /// Probability that the sink de-asserts `ready` in a cycle.
    pub out_stall: f64,
    /// Longest transfer, in windows.
    pub max_windows: u32,
    /// Data classes to draw transfers from (empty: all).
    pub classes: Vec<DataClass>,
    /// Fixed data instead of random transfers (a trace); split into transfers of
    /// `max_windows` windows.
    pub data: Option<Vec<u32>>,
    /// Cycles without progress after which the design is declared hung.
    pub hang_cycles: u64,
    /// Dump a waveform of cycles `[from, to)` to this file (needs a tracing build).
    pub vcd: Option<(std::path::PathBuf, u64, u64)>,
    /// Keep the design's output bytes in [`RunStats::output`] (the compressed stream for the
    /// compressor, the raw sectors otherwise).
    pub capture: bool,
}

impl Default for StimConfig {
    fn default() -> Self {
        StimConfig {
            lines: 1000,
            seed: 1,
            in_gap: 0.2,
            out_stall: 0.3,
            max_windows: 8,
            classes: Vec::new(),
            data: None,
            hang_cycles: 10_000,
            vcd: None,
            capture: false,
        }
    }
}

/// The first difference between the design and the model.
#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    /// Transfer index (0-based).
    pub transfer: u64,
    /// Beat index within the transfer's output.
    pub beat: u64,
    /// Clock cycle at which the beat was observed.
    pub cycle: u64,
    /// Which field differs.
    pub field: String,
    /// Expected value (hex).
    pub expected: String,
    /// Observed value (hex).
    pub actual: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "transfer {} beat {} at cycle {}: {} expected {} got {}",
            self.transfer, self.beat, self.cycle, self.field, self.expected, self.actual
        )
    }
}

/// What a run measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunStats {
    /// Clock cycles simulated.
    pub cycles: u64,
    /// Transfers completed.
    pub transfers: u64,
    /// Windows (lines) completed.
    pub lines: u64,
    /// Input beats accepted.
    pub beats_in: u64,
    /// Output beats accepted.
    pub beats_out: u64,
    /// Uncompressed bytes.
    pub raw_bytes: u64,
    /// Compressed bytes.
    pub comp_bytes: u64,
    /// Number of mismatching beats (the run stops at the first).
    pub mismatches: u64,
    /// The first mismatch, if any.
    pub first_mismatch: Option<Mismatch>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The design's output bytes, when [`StimConfig::capture`] is set.
    #[serde(skip)]
    pub output: Vec<u8>,
}

impl RunStats {
    /// Simulated cycles per wall-clock second.
    pub fn cycles_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.cycles as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// One transfer: its elements and the expected compressed stream.
#[derive(Clone, Debug)]
pub struct Transfer {
    /// Elements (each < 2^word_bits).
    pub elems: Vec<u32>,
    /// Golden compressed stream.
    pub stream: Vec<u8>,
}

/// Deterministic transfer generator.
pub struct TransferGen {
    p: ZvcRtlParams,
    cfg: StimConfig,
    rng: ChaCha8Rng,
    lines: u64,
    data_pos: usize,
}

impl TransferGen {
    /// New generator for `p` and `cfg`.
    pub fn new(p: &ZvcRtlParams, cfg: &StimConfig) -> Self {
        TransferGen {
            p: *p,
            cfg: cfg.clone(),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            lines: 0,
            data_pos: 0,
        }
    }

    /// The next transfer, or `None` when `cfg.lines` windows have been produced.
    pub fn next_transfer(&mut self) -> Option<Transfer> {
        if self.lines >= self.cfg.lines {
            return None;
        }
        let win = self.p.window as usize;
        let elems = if let Some(data) = &self.cfg.data {
            if self.data_pos >= data.len() {
                return None;
            }
            let n = (win * self.cfg.max_windows.max(1) as usize).min(data.len() - self.data_pos);
            let v = data[self.data_pos..self.data_pos + n].to_vec();
            self.data_pos += n;
            v
        } else {
            let remaining = (self.cfg.lines - self.lines).max(1);
            let k = self
                .rng
                .gen_range(1..=self.cfg.max_windows.max(1) as u64)
                .min(remaining) as usize;
            // A third of the transfers end inside a window (partial final window).
            let cut = if self.rng.gen_bool(0.33) {
                self.rng.gen_range(1..win)
            } else {
                0
            };
            let mut n = (k * win - cut).max(1);
            // One transfer in eight is tiny (1 ..= one sector): many short windows in flight.
            if self.rng.gen_bool(0.125) {
                n = self.rng.gen_range(1..=self.p.lanes as usize);
            }
            let classes: &[DataClass] = if self.cfg.classes.is_empty() {
                &DataClass::ALL
            } else {
                &self.cfg.classes
            };
            let class = classes[self.rng.gen_range(0..classes.len())];
            let seed = self.rng.gen();
            class.generate(n, self.p.word_bits, seed)
        };
        self.lines += elems.len().div_ceil(win) as u64;
        let mp = self.p.model();
        let mask = if self.p.word_bits == 32 {
            u32::MAX
        } else {
            (1u32 << self.p.word_bits) - 1
        };
        let elems: Vec<u32> = elems.into_iter().map(|e| e & mask).collect();
        let stream = model::compress(&mp, &elems).expect("generated elements fit the word width");
        Some(Transfer { elems, stream })
    }
}

/// Packs little-endian bytes into 32-bit words (zero padded).
pub fn bytes_to_words(bytes: &[u8], nwords: usize) -> Vec<u32> {
    let mut w = vec![0u32; nwords];
    for (i, b) in bytes.iter().enumerate() {
        w[i / 4] |= (*b as u32) << ((i % 4) * 8);
    }
    w
}

/// Elements of `word_bits` packed LSB-first into 32-bit words.
pub fn elems_to_words(elems: &[u32], word_bits: u32, nwords: usize) -> Vec<u32> {
    let mut w = vec![0u32; nwords];
    for (i, e) in elems.iter().enumerate() {
        let bit = i * word_bits as usize;
        w[bit / 32] |= e << (bit % 32);
    }
    w
}

fn hex(words: &[u32]) -> String {
    words
        .iter()
        .rev()
        .map(|w| format!("{:08x}", w))
        .collect::<Vec<_>>()
        .join("_")
}

/// Resolved port indices of a ZVC unit.
struct Ports {
    s_valid: usize,
    s_ready: usize,
    s_data: usize,
    s_last: usize,
    s_bytes: Option<usize>,
    m_valid: usize,
    m_ready: usize,
    m_data: usize,
    m_last: usize,
    m_bytes: Option<usize>,
    m_err: Option<usize>,
}

impl Ports {
    fn resolve(d: &dyn Dut) -> Result<Ports, String> {
        Ok(Ports {
            s_valid: d.port("s_valid_i")?,
            s_ready: d.port("s_ready_o")?,
            s_data: d.port("s_data_i")?,
            s_last: d.port("s_last_i")?,
            s_bytes: d.port("s_bytes_i").ok(),
            m_valid: d.port("m_valid_o")?,
            m_ready: d.port("m_ready_i")?,
            m_data: d.port("m_data_o")?,
            m_last: d.port("m_last_o")?,
            m_bytes: d.port("m_bytes_o").ok(),
            m_err: d.port("m_err_o").ok(),
        })
    }
}

/// One input beat: data words, byte count (for byte-counted inputs), last flag.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Beat {
    data: Vec<u32>,
    bytes: u32,
    last: bool,
    err: bool,
}

/// Which unit is under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Raw sectors in, compressed beats out.
    Compressor,
    /// Compressed beats in, raw sectors out.
    Decompressor,
    /// Raw sectors in, raw sectors out (compressor → decompressor).
    Loopback,
}

fn raw_beats(p: &ZvcRtlParams, t: &Transfer, whole_windows: bool) -> Vec<Beat> {
    let l = p.lanes as usize;
    let nw = (p.lanes * p.word_bits).div_ceil(32) as usize;
    let unit = if whole_windows { p.window as usize } else { l };
    let n = t.elems.len().div_ceil(unit) * unit;
    let mut e = t.elems.clone();
    e.resize(n, 0);
    let count = n / l;
    e.chunks(l)
        .enumerate()
        .map(|(i, c)| Beat {
            data: elems_to_words(c, p.word_bits, nw),
            bytes: p.beat_bytes(),
            last: i + 1 == count,
            err: false,
        })
        .collect()
}

fn comp_beats(p: &ZvcRtlParams, t: &Transfer) -> Vec<Beat> {
    let bb = p.beat_bytes() as usize;
    let nw = (p.lanes * p.word_bits).div_ceil(32) as usize;
    let count = t.stream.len().div_ceil(bb);
    t.stream
        .chunks(bb)
        .enumerate()
        .map(|(i, c)| Beat {
            data: bytes_to_words(c, nw),
            bytes: c.len() as u32,
            last: i + 1 == count,
            err: false,
        })
        .collect()
}

/// Runs `unit` on `dut` with random transfers and checks every output beat.
///
/// Returns the statistics; a mismatch stops the run and is in `first_mismatch`. `Err` is a
/// harness problem (missing port) or a hang.
pub fn run(
    dut: &mut dyn Dut,
    p: &ZvcRtlParams,
    unit: Unit,
    cfg: &StimConfig,
) -> Result<RunStats, String> {
    run_with(dut, p, unit, cfg, &mut |_| {})
}

/// [`run`], turning a mismatch into an error that names the unit, parameters and first
/// difference (for tests and scripts that only need pass/fail plus statistics).
pub fn run_clean(
    dut: &mut dyn Dut,
    p: &ZvcRtlParams,
    unit: Unit,
    cfg: &StimConfig,
) -> Result<RunStats, String> {
    let st = run(dut, p, unit, cfg)?;
    match &st.first_mismatch {
        Some(m) => Err(format!("{:?} [{}]: {}", unit, p.describe(), m)),
        None if st.beats_out == 0 => {
            Err(format!("{:?} [{}]: no output at all", unit, p.describe()))
        }
        None => Ok(st),
    }
}

/// [`run`] with a progress callback, called about every 64 Ki cycles with the stats so far.
pub fn run_with(
    dut: &mut dyn Dut,
    p: &ZvcRtlParams,
    unit: Unit,
    cfg: &StimConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let ports = Ports::resolve(dut)?;
    let nw = (p.lanes * p.word_bits).div_ceil(32) as usize;
    let mut gen = TransferGen::new(p, cfg);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x005e_ed0f_5a11);
    let start = std::time::Instant::now();
    let mut st = RunStats::default();
    dut.reset(4);
    let c0 = dut.cycle();

    // Input and expected-output queues, each tagged with its transfer index.
    let mut inq: VecDeque<(u64, Beat)> = VecDeque::new();
    let mut expq: VecDeque<(u64, u64, Beat)> = VecDeque::new();
    let mut produced = 0u64;
    let mut exhausted = false;
    let mut cur_in: Option<(u64, Beat)> = None;
    let mut idle = 0u64;
    let mut out_buf = vec![0u32; nw];

    loop {
        // Keep a few transfers queued.
        while !exhausted && inq.len() < 64 {
            match gen.next_transfer() {
                Some(t) => {
                    let id = produced;
                    produced += 1;
                    st.raw_bytes += (t.elems.len() * p.word_bits as usize / 8) as u64;
                    st.comp_bytes += t.stream.len() as u64;
                    let (ins, outs) = match unit {
                        Unit::Compressor => (raw_beats(p, &t, false), comp_beats(p, &t)),
                        Unit::Decompressor => (comp_beats(p, &t), raw_beats(p, &t, true)),
                        Unit::Loopback => (raw_beats(p, &t, false), raw_beats(p, &t, true)),
                    };
                    for b in ins {
                        inq.push_back((id, b));
                    }
                    for (k, b) in outs.into_iter().enumerate() {
                        expq.push_back((id, k as u64, b));
                    }
                }
                None => exhausted = true,
            }
        }
        if exhausted && expq.is_empty() && inq.is_empty() && cur_in.is_none() {
            break;
        }

        if let Some((path, from, to)) = &cfg.vcd {
            let c = dut.cycle() - c0;
            if c == *from {
                dut.trace_start(path)?;
            } else if c == *to {
                dut.trace_stop();
            }
        }
        // Source: hold a beat until accepted; random gaps between beats.
        if cur_in.is_none() && !inq.is_empty() && !rng.gen_bool(cfg.in_gap.clamp(0.0, 1.0)) {
            cur_in = inq.pop_front();
        }
        match &cur_in {
            Some((_, b)) => {
                dut.set_u64(ports.s_valid, 1);
                dut.set(ports.s_data, &b.data);
                dut.set_u64(ports.s_last, b.last as u64);
                if let Some(sb) = ports.s_bytes {
                    dut.set_u64(sb, b.bytes as u64);
                }
            }
            None => dut.set_u64(ports.s_valid, 0),
        }
        let ready = !rng.gen_bool(cfg.out_stall.clamp(0.0, 1.0));
        dut.set_u64(ports.m_ready, ready as u64);
        dut.eval();
        let s_fire = cur_in.is_some() && dut.get_u64(ports.s_ready) == 1;
        let m_fire = ready && dut.get_u64(ports.m_valid) == 1;
        let cycle = dut.cycle() - c0;
        if m_fire {
            dut.get(ports.m_data, &mut out_buf);
            let got = Beat {
                data: out_buf.clone(),
                bytes: ports
                    .m_bytes
                    .map(|i| dut.get_u64(i) as u32)
                    .unwrap_or(p.beat_bytes()),
                last: dut.get_u64(ports.m_last) == 1,
                err: ports.m_err.map(|i| dut.get_u64(i) == 1).unwrap_or(false),
            };
            if cfg.capture {
                let n = got.bytes as usize;
                st.output
                    .extend(got.data.iter().flat_map(|w| w.to_le_bytes()).take(n));
            }
            let Some((tid, k, want)) = expq.pop_front() else {
                st.mismatches += 1;
                st.first_mismatch = Some(Mismatch {
                    transfer: produced,
                    beat: 0,
                    cycle,
                    field: "m_valid_o (unexpected extra beat)".into(),
                    expected: "no beat".into(),
                    actual: hex(&got.data),
                });
                break;
            };
            let field = if got.bytes != want.bytes {
                Some((
                    "m_bytes_o",
                    format!("{}", want.bytes),
                    format!("{}", got.bytes),
                ))
            } else if got.data != want.data {
                Some(("m_data_o", hex(&want.data), hex(&got.data)))
            } else if got.last != want.last {
                Some((
                    "m_last_o",
                    format!("{}", want.last as u8),
                    format!("{}", got.last as u8),
                ))
            } else if got.err != want.err {
                Some((
                    "m_err_o",
                    format!("{}", want.err as u8),
                    format!("{}", got.err as u8),
                ))
            } else {
                None
            };
            if let Some((f, e, a)) = field {
                st.mismatches += 1;
                st.first_mismatch = Some(Mismatch {
                    transfer: tid,
                    beat: k,
                    cycle,
                    field: f.into(),
                    expected: e,
                    actual: a,
                });
                st.beats_out += 1;
                break;
            }
            st.beats_out += 1;
            if want.last {
                st.transfers += 1;
            }
        }
        dut.tick();
        if s_fire {
            cur_in = None;
            st.beats_in += 1;
        }
        if s_fire || m_fire {
            idle = 0;
        } else {
            idle += 1;
            if idle > cfg.hang_cycles {
                return Err(format!(
                    "design hung: no handshake for {} cycles at cycle {} ({} transfers done, {} beats expected still)",
                    cfg.hang_cycles,
                    cycle,
                    st.transfers,
                    expq.len()
                ));
            }
        }
        st.cycles = dut.cycle() - c0;
        if st.cycles % 65536 == 0 {
            st.seconds = start.elapsed().as_secs_f64();
            progress(&st);
        }
    }
    if cfg.vcd.is_some() {
        dut.trace_stop();
    }
    st.lines = gen.lines;
    st.cycles = dut.cycle() - c0;
    st.seconds = start.elapsed().as_secs_f64();
    Ok(st)
}

/// Measured timing of a unit without back-pressure.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// Cycles from the first input beat's acceptance to the first output beat being valid,
    /// counting the acceptance cycle as 1, for an isolated single-window transfer.
    /// Reference data: compressor — all elements non-zero (the paper's "6 cycles per 128 B
    /// line", spec §3.2); decompressor — all non-zero except element 0, so the first sector's
    /// mask and payload arrive in the first beat (spec §6: "first output sector 2 cycles after
    /// the mask and first payload arrive"). Other data can differ by a cycle (docs/FORMATS.md).
    pub latency_cycles: u64,
    /// Input beats accepted per cycle over a long run of compressible data (60% zeros) with
    /// no stalls.
    pub in_beats_per_cycle: f64,
    /// Uncompressed bytes per cycle in that run.
    pub raw_bytes_per_cycle: f64,
}

/// Measures latency and throughput of `unit`.
pub fn measure(dut: &mut dyn Dut, p: &ZvcRtlParams, unit: Unit) -> Result<Timing, String> {
    let ports = Ports::resolve(dut)?;
    // Latency: one window of the unit's reference data (see `Timing::latency_cycles`).
    let first = if unit == Unit::Decompressor { 0 } else { 1 };
    let elems: Vec<u32> = (0..p.window)
        .map(|i| if i == 0 { first } else { (i % 250) + 1 })
        .collect();
    let stream = model::compress(&p.model(), &elems).map_err(|e| e.to_string())?;
    let t = Transfer { elems, stream };
    let ins = match unit {
        Unit::Decompressor => comp_beats(p, &t),
        _ => raw_beats(p, &t, false),
    };
    dut.reset(4);
    dut.set_u64(ports.m_ready, 1);
    let mut first_accept = None;
    let mut latency = None;
    let mut i = 0;
    for _ in 0..1000 {
        if i < ins.len() {
            dut.set_u64(ports.s_valid, 1);
            dut.set(ports.s_data, &ins[i].data);
            dut.set_u64(ports.s_last, ins[i].last as u64);
            if let Some(sb) = ports.s_bytes {
                dut.set_u64(sb, ins[i].bytes as u64);
            }
        } else {
            dut.set_u64(ports.s_valid, 0);
        }
        dut.eval();
        let c = dut.cycle();
        if dut.get_u64(ports.m_valid) == 1 && latency.is_none() {
            if let Some(a) = first_accept {
                latency = Some(c - a + 1);
            }
        }
        let fire = i < ins.len() && dut.get_u64(ports.s_ready) == 1;
        dut.tick();
        if fire {
            if first_accept.is_none() {
                first_accept = Some(c);
            }
            i += 1;
        }
        if latency.is_some() && i >= ins.len() {
            break;
        }
    }
    let latency_cycles = latency.ok_or("no output within 1000 cycles")?;
    // Throughput: 256 windows of 60%-sparse data, no stalls, one transfer.
    let cfg = StimConfig {
        lines: 256,
        seed: 7,
        in_gap: 0.0,
        out_stall: 0.0,
        max_windows: 256,
        classes: vec![DataClass::Relu],
        data: Some(crate::trace::synthetic::uniform_density(
            p.window as usize * 256,
            0.4,
            p.word_bits,
            3,
        )),
        hang_cycles: 10_000,
        vcd: None,
        capture: false,
    };
    // Drain the latency run first.
    for _ in 0..100 {
        dut.set_u64(ports.s_valid, 0);
        dut.eval();
        dut.tick();
    }
    let st = run(dut, p, unit, &cfg)?;
    if let Some(m) = st.first_mismatch {
        return Err(format!("mismatch while measuring throughput: {}", m));
    }
    let in_beats = st.beats_in as f64 / st.cycles.max(1) as f64;
    Ok(Timing {
        latency_cycles,
        in_beats_per_cycle: in_beats,
        raw_bytes_per_cycle: st.raw_bytes as f64 / st.cycles.max(1) as f64,
    })
}

/// Rewrites `assign <wire> = (S ? T : F);` in `verilog` to `(~(S) ? T : F)`: one mux select
/// inverted, the fault the scoreboard must catch. `None` if the wire is not such a mux.
pub fn invert_mux_select(verilog: &str, wire: &str) -> Option<String> {
    let key = format!("assign {} = (", wire);
    let start = verilog.find(&key)? + key.len();
    let bytes = verilog.as_bytes();
    // The select is the first operand: a balanced-parenthesis term or an identifier.
    let mut depth = 0i32;
    let mut end = start;
    while end < bytes.len() {
        match bytes[end] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b' ' if depth == 0 => break,
            b'\n' => return None,
            _ => {}
        }
        end += 1;
    }
    if !verilog[end..].starts_with(" ? ") {
        return None;
    }
    let sel = &verilog[start..end];
    Some(format!(
        "{}~({}){}",
        &verilog[..start],
        sel,
        &verilog[end..]
    ))
}

#[cfg(test)]
mod verilator_tests {
    use super::*;
    use crate::cosim::vdut::{build_spec, VerilatorDut};
    use crate::cosim::{build, Model};
    use crate::rtl::zvc::{compressor, decompressor, loopback};

    fn run_unit(p: &ZvcRtlParams, unit: Unit, lines: u64, seed: u64) -> RunStats {
        let top = match unit {
            Unit::Compressor => compressor(p),
            Unit::Decompressor => decompressor(p),
            Unit::Loopback => loopback(p),
        }
        .unwrap();
        let mut dut = VerilatorDut::new(&top, false).unwrap();
        let cfg = StimConfig {
            lines,
            seed,
            ..StimConfig::default()
        };
        let st = run_clean(&mut dut, p, unit, &cfg).unwrap();
        assert!(st.lines >= lines);
        st
    }

    #[test]
    fn verilator_default_units_match_model() {
        let p = ZvcRtlParams::default();
        run_unit(&p, Unit::Compressor, 20_000, 1);
        run_unit(&p, Unit::Decompressor, 20_000, 2);
        run_unit(&p, Unit::Loopback, 10_000, 3);
    }

    #[test]
    fn verilator_other_parameter_sets_match_model() {
        for (w, l, n) in [(16, 32, 32), (8, 4, 32), (32, 16, 64)] {
            let p = ZvcRtlParams {
                word_bits: w,
                lanes: l,
                window: n,
                ..Default::default()
            };
            run_unit(&p, Unit::Compressor, 5_000, 5);
            run_unit(&p, Unit::Decompressor, 5_000, 6);
        }
    }

    #[test]
    fn scoreboard_catches_an_inverted_mux_select() {
        let p = ZvcRtlParams::default();
        let top = compressor(&p).unwrap();
        let mut spec = build_spec(&top, false).unwrap();
        let file = spec
            .sources
            .iter_mut()
            .find(|(n, _)| n.starts_with("zvc_compact"))
            .unwrap();
        // Lane 3 of the first compaction level: take the element from above with the select
        // inverted.
        file.1 = invert_mux_select(&file.1, "d1_3").expect("d1_3 is a mux");
        let lib = build(&spec).unwrap();
        let mut dut = VerilatorDut::from_model(Model::new(&lib).unwrap()).unwrap();
        let st = run(
            &mut dut,
            &p,
            Unit::Compressor,
            &StimConfig {
                lines: 2_000,
                ..Default::default()
            },
        )
        .unwrap();
        let m = st
            .first_mismatch
            .expect("the injected fault must be detected");
        assert_eq!(m.field, "m_data_o");
        assert!(m.cycle < 200, "found late: {}", m);
    }

    #[test]
    fn corrupt_stream_reports_error_and_does_not_hang() {
        let p = ZvcRtlParams::default();
        let mut dut = VerilatorDut::new(&decompressor(&p).unwrap(), false).unwrap();
        let (sv, sd, sb, sl, mv, mr, ml, me) = (
            dut.port("s_valid_i").unwrap(),
            dut.port("s_data_i").unwrap(),
            dut.port("s_bytes_i").unwrap(),
            dut.port("s_last_i").unwrap(),
            dut.port("m_valid_o").unwrap(),
            dut.port("m_ready_i").unwrap(),
            dut.port("m_last_o").unwrap(),
            dut.port("m_err_o").unwrap(),
        );
        dut.reset(2);
        // A mask announcing 32 non-zero words followed by only 3 of them, then `last`.
        let mut data = vec![0u32; 8];
        data[0] = 0xffff_ffff;
        data[1] = 1;
        data[2] = 2;
        data[3] = 3;
        dut.set(sd, &data);
        dut.set_u64(sb, 16);
        dut.set_u64(sl, 1);
        dut.set_u64(sv, 1);
        dut.set_u64(mr, 1);
        let mut saw_err = false;
        for _ in 0..50 {
            dut.eval();
            if dut.get_u64(mv) == 1 && dut.get_u64(me) == 1 {
                assert_eq!(dut.get_u64(ml), 1);
                saw_err = true;
            }
            dut.tick();
            dut.set_u64(sv, 0);
        }
        assert!(saw_err, "truncated stream must end with m_err_o");
        // The unit accepts and decodes a good transfer afterwards.
        let st = run(
            &mut dut,
            &p,
            Unit::Decompressor,
            &StimConfig {
                lines: 200,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(st.first_mismatch.is_none());
    }

    #[test]
    fn fault_injection_helper_rewrites_only_muxes() {
        let v = "  assign a = (b ? c : d);\n  assign e = (f & g);\n";
        assert_eq!(
            invert_mux_select(v, "a").unwrap(),
            "  assign a = (~(b) ? c : d);\n  assign e = (f & g);\n"
        );
        assert!(invert_mux_select(v, "e").is_none());
        assert!(invert_mux_select(v, "zz").is_none());
    }
}
