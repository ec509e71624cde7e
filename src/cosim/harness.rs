//! N-channel scoreboard: drivers, monitors, reactive responders and a reference model.
//!
//! A unit is described by its [`Channel`]s, each a valid/ready stream into the design
//! (an input) or out of it (an output), usually read from the module's recorded
//! [`StreamPorts`] so port names are not repeated. Per cycle the harness
//!
//! 1. offers a beat on every input channel: from the [`Bench`] (stimulus) or, for a channel
//!    a [`Responder`] answers on, from the responder; each input channel has its own random
//!    gap pattern, and a beat is held until accepted;
//! 2. drives each output channel's `ready` low at random (its own stall probability);
//! 3. settles the design, then hands every accepted input beat to the bench
//!    ([`Bench::accepted`]), which may push the output beats it now expects
//!    ([`Expect::push`]);
//! 4. compares every output beat with its channel's expectations, in order, or by tag for a
//!    channel marked [`Channel::tagged`] (the first expected beat with the same tag), then
//!    shows it to the bench ([`Bench::observed`]) and to the responder listening on that
//!    channel;
//! 5. clocks the design.
//!
//! The first difference stops the run ([`Mismatch`]: channel, transaction, beat, cycle,
//! field, expected, actual). A channel that has expectations but produces nothing for
//! [`HarnessConfig::hang_cycles`], an input beat that is never accepted, or a responder
//! request that is never answered is reported as a hang naming the channel and the
//! transaction. The one-in/one-out scoreboard ([`super::stream::run_stream`]) is this
//! harness with one driver, one monitor and the expectations pushed with the stimulus.

use super::dut::Dut;
use crate::hdl::{Dir, StreamPorts};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;

/// One beat, built by field name: each field of the channel's layout (the `Layout` the
/// generator gave the stream) with its value as 32-bit words (word 0 = bits 31:0).
///
/// The harness puts the fields in the channel's port order when the beat is offered or
/// expected, and refuses a beat that lacks one of the layout's fields, names one the layout
/// does not have, or holds a value wider than its port: a bench cannot swap two fields or
/// leave one unchecked by position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Beat(Vec<(&'static str, Vec<u32>)>);

impl Beat {
    /// An empty beat (add its fields with [`Beat::with`] and [`Beat::num`]).
    pub fn new() -> Beat {
        Beat(Vec::new())
    }

    /// The beat with field `field` set to `words` (word 0 = bits 31:0).
    pub fn with(mut self, field: &'static str, words: Vec<u32>) -> Beat {
        self.0.push((field, words));
        self
    }

    /// The beat with field `field` set to `v` (a field of up to 64 bits).
    pub fn num(self, field: &'static str, v: u64) -> Beat {
        self.with(field, vec![v as u32, (v >> 32) as u32])
    }

    /// The words of field `field`, if the beat has it.
    pub fn get(&self, field: &str) -> Option<&[u32]> {
        self.0
            .iter()
            .find(|(n, _)| *n == field)
            .map(|(_, w)| w.as_slice())
    }

    /// The low 64 bits of field `field` (0 when the beat lacks it).
    pub fn u64(&self, field: &str) -> u64 {
        self.get(field).map(word64).unwrap_or(0)
    }

    /// The fields in `ch`'s port order, each resized to its port's words; `Err` names a
    /// missing, unknown or too wide field.
    pub(super) fn order(&self, ch: &Channel, port: &Port) -> Result<Vec<Vec<u32>>, String> {
        if let Some((n, _)) = self
            .0
            .iter()
            .find(|(n, _)| !ch.names.iter().any(|c| c == n))
        {
            return Err(format!(
                "a beat for channel `{}` has a field `{}` its layout lacks (fields: {})",
                ch.name,
                n,
                ch.names.join(", ")
            ));
        }
        ch.names
            .iter()
            .zip(&port.fields)
            .map(|(name, &(_, bits))| {
                let v = self.get(name).ok_or_else(|| {
                    format!("a beat for channel `{}` lacks field `{}`", ch.name, name)
                })?;
                let wide = v.iter().enumerate().any(|(i, x)| {
                    let lo = 32 * i as u32;
                    *x != 0 && (lo >= bits || (bits - lo < 32 && *x >> (bits - lo) != 0))
                });
                if wide {
                    return Err(format!(
                        "a beat for channel `{}`: field `{}` is wider than its {} bits",
                        ch.name, name, bits
                    ));
                }
                let mut v = v.to_vec();
                v.resize(bits.div_ceil(32) as usize, 0);
                Ok(v)
            })
            .collect()
    }
}

/// A beat as the design gave it on an output channel: its fields read by layout name.
#[derive(Clone, Copy)]
pub struct Fields<'a> {
    ch: &'a Channel,
    words: &'a [Vec<u32>],
}

impl<'a> Fields<'a> {
    /// The beat `words` (one entry per field, in port order) of channel `ch`.
    pub fn new(ch: &'a Channel, words: &'a [Vec<u32>]) -> Fields<'a> {
        debug_assert_eq!(ch.names.len(), words.len());
        Fields { ch, words }
    }

    /// The words of field `field` (word 0 = bits 31:0).
    ///
    /// # Panics
    /// When the channel's layout has no field `field`: the bench reads a field the generator
    /// never made, which is a defect of the bench, not of the design or of any input.
    pub fn get(&self, field: &str) -> &'a [u32] {
        match self.ch.names.iter().position(|n| *n == field) {
            Some(i) => &self.words[i],
            None => panic!(
                "channel `{}` has no field `{}` (fields: {})",
                self.ch.name,
                field,
                self.ch.names.join(", ")
            ),
        }
    }

    /// The low 64 bits of field `field` (see [`Fields::get`]).
    pub fn u64(&self, field: &str) -> u64 {
        word64(self.get(field))
    }
}

/// `name` as a `'static` string: a field name is kept once for the life of the process
/// (layouts have a few dozen distinct names), so beats carry names without allocating.
fn intern(name: &str) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.push(n);
    n
}

/// The low 64 bits of a field given as 32-bit words.
pub(crate) fn word64(w: &[u32]) -> u64 {
    w.first().copied().unwrap_or(0) as u64 | (w.get(1).copied().unwrap_or(0) as u64) << 32
}

/// The first difference between the design and the model.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Mismatch {
    /// The output channel (stream prefix, or the `valid` port of a one-output run).
    pub channel: String,
    /// Transaction index (0-based).
    pub transfer: u64,
    /// Beat index within the transaction's output.
    pub beat: u64,
    /// Clock cycle at which the beat was observed.
    pub cycle: u64,
    /// Which field (port) differs.
    pub field: String,
    /// Expected value.
    pub expected: String,
    /// Observed value.
    pub actual: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "channel {} transfer {} beat {} at cycle {}: {} expected {} got {}",
            self.channel,
            self.transfer,
            self.beat,
            self.cycle,
            self.field,
            self.expected,
            self.actual
        )
    }
}

/// What a run measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunStats {
    /// Clock cycles simulated.
    pub cycles: u64,
    /// Transactions completed.
    pub transfers: u64,
    /// Engine work units completed (ZVC: windows), filled in by the engine.
    pub lines: u64,
    /// Input beats accepted.
    pub beats_in: u64,
    /// Output beats accepted.
    pub beats_out: u64,
    /// Uncompressed bytes, filled in by the engine.
    pub raw_bytes: u64,
    /// Compressed bytes, filled in by the engine.
    pub comp_bytes: u64,
    /// Number of mismatching beats (the run stops at the first).
    pub mismatches: u64,
    /// Resets asserted in the middle of the run ([`HarnessConfig::resets`]).
    pub resets: u64,
    /// Of those, resets in a cycle where an input beat was offered (valid high) and where
    /// an output beat was expected.
    pub resets_mid: (u64, u64),
    /// The first mismatch, if any.
    pub first_mismatch: Option<Mismatch>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Output bytes captured by the engine, when asked for.
    #[serde(skip)]
    pub output: Vec<u8>,
}

impl RunStats {
    /// The statistics if the run was clean; otherwise an error naming `label` (unit and
    /// parameters) and the first mismatch, or saying that nothing came out at all.
    pub fn into_clean(self, label: &str) -> Result<RunStats, String> {
        match &self.first_mismatch {
            Some(m) => Err(format!("{}: {}", label, m)),
            None if self.beats_out == 0 => Err(format!("{}: no output at all", label)),
            None => Ok(self),
        }
    }

    /// Simulated cycles per wall-clock second.
    pub fn cycles_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.cycles as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Renders a field value: decimal for one word, hex words (most significant first) otherwise.
pub fn show(words: &[u32]) -> String {
    match words {
        [w] => w.to_string(),
        _ => words
            .iter()
            .rev()
            .map(|w| format!("{:08x}", w))
            .collect::<Vec<_>>()
            .join("_"),
    }
}

/// One valid/ready channel of the unit, by port names.
#[derive(Clone, Debug)]
pub struct Channel {
    /// Name in reports (the stream prefix).
    pub name: String,
    /// `In`: the harness drives beats into the design; `Out`: the design produces them.
    pub dir: Dir,
    /// `valid` port.
    pub valid: String,
    /// `ready` port.
    pub ready: String,
    /// Payload ports, in the layout's field order.
    pub fields: Vec<String>,
    /// The layout's field names, one per port of `fields` (what beats are built and read
    /// by).
    pub names: Vec<&'static str>,
    /// Output channels: index of the field that matches beats to expectations when the
    /// design may reorder them (`None`: in order).
    pub tag: Option<usize>,
    /// Output channels: beats are not compared (e.g. requests a responder answers and the
    /// bench does not predict).
    pub unchecked: bool,
}

impl Channel {
    /// A channel from explicit port names, its fields given as (layout name, port).
    pub fn new(name: &str, dir: Dir, valid: &str, ready: &str, fields: &[(&str, &str)]) -> Channel {
        Channel {
            name: name.to_string(),
            dir,
            valid: valid.to_string(),
            ready: ready.to_string(),
            fields: fields.iter().map(|(_, p)| p.to_string()).collect(),
            names: fields.iter().map(|(n, _)| intern(n)).collect(),
            tag: None,
            unchecked: false,
        }
    }

    /// The channel of a stream interface recorded by `hdl::stream::input`/`output`.
    pub fn from_ports(p: &StreamPorts) -> Channel {
        let fields: Vec<String> = p.layout.fields().iter().map(|f| p.field(&f.name)).collect();
        Channel {
            name: p.prefix.clone(),
            dir: p.dir,
            valid: p.valid(),
            ready: p.ready(),
            fields,
            names: p.layout.fields().iter().map(|f| intern(&f.name)).collect(),
            tag: None,
            unchecked: false,
        }
    }

    /// Matches output beats to expectations by the payload field `field` (a layout field
    /// name).
    pub fn tagged(mut self, field: &str) -> Channel {
        self.tag = self.names.iter().position(|f| *f == field);
        self
    }

    /// Output beats are passed on without comparison.
    pub fn unchecked(mut self) -> Channel {
        self.unchecked = true;
        self
    }
}

/// Randomisation and run control.
#[derive(Clone, Debug)]
pub struct HarnessConfig {
    /// Seed of every random choice (gaps, stalls, responder latencies).
    pub seed: u64,
    /// Probability of an idle cycle before an input beat (every input channel).
    pub in_gap: f64,
    /// Probability that an output channel's `ready` is low in a cycle.
    pub out_stall: f64,
    /// Per-channel overrides of `in_gap` / `out_stall`, by channel name.
    pub channel_rates: Vec<(String, f64)>,
    /// Cycles without progress on a channel that waits for something, before a hang.
    pub hang_cycles: u64,
    /// Dump a waveform of cycles `[from, to)` to this file (needs a tracing build).
    pub vcd: Option<(PathBuf, u64, u64)>,
    /// Resets to assert in the middle of the run (see [`Harness::run`]).
    pub resets: u32,
}

impl Default for HarnessConfig {
    fn default() -> Self {
        HarnessConfig {
            seed: 1,
            in_gap: 0.2,
            out_stall: 0.3,
            channel_rates: Vec::new(),
            hang_cycles: 10_000,
            vcd: None,
            resets: 0,
        }
    }
}

impl HarnessConfig {
    /// The default gaps, stalls and run control with random seed `seed`.
    pub fn seeded(seed: u64) -> HarnessConfig {
        HarnessConfig {
            seed,
            ..HarnessConfig::default()
        }
    }

    /// No gaps and no stalls (for timing), with random seed `seed`.
    pub fn quiet(seed: u64) -> HarnessConfig {
        HarnessConfig {
            in_gap: 0.0,
            out_stall: 0.0,
            ..HarnessConfig::seeded(seed)
        }
    }
}

/// Chance per cycle, while something is in flight, that a requested mid-run reset is asserted
/// (about one every 64 busy cycles, at least 16..1024 cycles apart).
const RESET_RATE: f64 = 1.0 / 64.0;

/// An expected output beat.
#[derive(Clone, Debug)]
struct Expected {
    txn: u64,
    beat: u64,
    /// The fields in port order.
    value: Vec<Vec<u32>>,
}

/// Where the bench puts what the design must produce.
pub struct Expect<'a> {
    queues: &'a mut [VecDeque<Expected>],
    channels: &'a [Channel],
    ports: &'a [Port],
    /// The first beat the harness refused (a field missing, unknown or too wide).
    error: &'a mut Option<String>,
}

impl Expect<'_> {
    /// Output channel `ch` must produce `beat` (after what it already must), as beat number
    /// `k` of transaction `txn` (for reports).
    pub fn push(&mut self, ch: usize, txn: u64, k: u64, beat: Beat) {
        let (Some(q), Some(c), Some(p)) = (
            self.queues.get_mut(ch),
            self.channels.get(ch),
            self.ports.get(ch),
        ) else {
            return;
        };
        match beat.order(c, p) {
            Ok(value) => q.push_back(Expected {
                txn,
                beat: k,
                value,
            }),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }
}

/// Stimulus and reference model of a unit.
pub trait Bench {
    /// The next beat to offer on input channel `ch` (`None`: nothing now). Called when the
    /// channel is free and its gap pattern allows a beat. Expectations known in advance may
    /// be pushed here.
    fn next_input(&mut self, ch: usize, exp: &mut Expect<'_>) -> Option<Beat>;
    /// A beat was accepted on input channel `ch` (from the bench or a responder).
    fn accepted(&mut self, _ch: usize, _beat: &Beat, _cycle: u64, _exp: &mut Expect<'_>) {}
    /// A beat of output channel `ch` was taken (after comparison).
    fn observed(&mut self, _ch: usize, _beat: &Fields<'_>, _cycle: u64, _exp: &mut Expect<'_>) {}
    /// No more stimulus will come (the run ends once everything expected has been seen).
    fn finished(&self) -> bool;
    /// The design was reset in the middle of the run: every transaction in flight is lost
    /// (its expectations are already cleared); the bench continues with fresh transactions
    /// from the model's reset state. `Err` when the bench cannot model a reset.
    fn reset(&mut self) -> Result<(), String> {
        Err("this bench does not model a reset in the middle of a run".into())
    }
}

/// The channels of `top` named by `inputs` then `outputs` (stream prefixes), in that order;
/// the outputs named in `unchecked` are monitored but not compared (a responder's requests).
pub fn named_channels(
    top: &crate::hdl::Module,
    names: &[&str],
    unchecked: &[&str],
) -> Result<Vec<Channel>, String> {
    names
        .iter()
        .map(|n| {
            let c = top
                .streams
                .iter()
                .find(|s| s.prefix == *n)
                .map(Channel::from_ports)
                .ok_or_else(|| format!("`{}` has no stream `{}`", top.name, n))?;
            Ok(if unchecked.contains(n) {
                c.unchecked()
            } else {
                c
            })
        })
        .collect()
}

/// The other side of a protocol, answering the design's requests as they come.
pub trait Responder {
    /// A request beat from the design, taken at `cycle`.
    fn request(&mut self, beat: &Fields<'_>, cycle: u64, rng: &mut ChaCha8Rng);
    /// A response to offer at `cycle`, if one is due. Called when the response channel is
    /// free; the beat is held until the design accepts it.
    fn respond(&mut self, cycle: u64, rng: &mut ChaCha8Rng) -> Option<Beat>;
    /// Requests not answered yet.
    fn outstanding(&self) -> usize;
    /// Cycle of the oldest unanswered request (for hang reports).
    fn oldest(&self) -> Option<u64> {
        None
    }
    /// The design was reset: forget the requests not answered yet (state that outlives the
    /// design's reset, such as memory contents, stays).
    fn reset(&mut self) {}
}

/// A channel's ports resolved to indices: `valid`, `ready`, and (port, bits) per field.
pub(super) struct Port {
    pub(super) valid: usize,
    pub(super) ready: usize,
    pub(super) fields: Vec<(usize, u32)>,
}

pub(super) fn resolve(dut: &dyn Dut, c: &Channel) -> Result<Port, String> {
    let fields = c
        .fields
        .iter()
        .map(|f| {
            let p = dut
                .port(f)
                .map_err(|e| format!("channel `{}`: {}", c.name, e))?;
            Ok((p, dut.port_width(p)))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let port = |n: &str| {
        dut.port(n)
            .map_err(|e| format!("channel `{}`: {}", c.name, e))
    };
    Ok(Port {
        valid: port(&c.valid)?,
        ready: port(&c.ready)?,
        fields,
    })
}

/// A responder and the channels it sits between.
struct Attached {
    on: usize,
    answer: usize,
    r: Box<dyn Responder>,
}

/// The harness over one design.
pub struct Harness {
    channels: Vec<Channel>,
    responders: Vec<Attached>,
}

impl Harness {
    /// A harness for `channels`.
    pub fn new(channels: Vec<Channel>) -> Harness {
        Harness {
            channels,
            responders: Vec::new(),
        }
    }

    fn index(&self, name: &str) -> Result<usize, String> {
        self.channels
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| format!("no channel `{}`", name))
    }

    /// Lets `r` answer the design's requests on output channel `requests` with beats on input
    /// channel `responses`.
    pub fn respond(
        &mut self,
        requests: &str,
        responses: &str,
        r: Box<dyn Responder>,
    ) -> Result<(), String> {
        let on = self.index(requests)?;
        let answer = self.index(responses)?;
        if self.channels[on].dir != Dir::Out || self.channels[answer].dir != Dir::In {
            return Err(format!(
                "responder between `{}` and `{}`: requests must come out of the design and \
                 responses go into it",
                requests, responses
            ));
        }
        self.responders.push(Attached { on, answer, r });
        Ok(())
    }

    /// Resets `dut` and runs `bench` until it is finished and every expectation, offered
    /// beat and responder request is settled, or until the first mismatch. `Err` is a
    /// harness problem (unknown port) or a hang.
    pub fn run(
        &mut self,
        dut: &mut dyn Dut,
        bench: &mut dyn Bench,
        cfg: &HarnessConfig,
        progress: &mut dyn FnMut(&RunStats),
    ) -> Result<RunStats, String> {
        let mut sb = Scoreboard::new(&self.channels, &mut self.responders, cfg, dut)?;
        loop {
            let cycle = dut.cycle() - sb.c0;
            sb.trace_window(dut, cycle)?;
            // 1-2: offer inputs, drive readies.
            let offered_now = sb.drive(dut, bench, cycle);
            dut.eval();
            // 3: accepted inputs go to the bench first (a combinational unit answers them
            // in the same cycle).
            sb.accept_inputs(dut, bench, cycle);
            // 4: outputs.
            sb.take_outputs(dut, bench, cycle);
            if let Some(e) = sb.error.take() {
                return Err(e);
            }
            if sb.st.first_mismatch.is_some() {
                break;
            }
            if sb.reset_due(offered_now, cycle) {
                sb.reset_mid_run(dut, bench, offered_now, cycle)?;
                if sb.st.first_mismatch.is_some() {
                    break;
                }
            }
            dut.tick();
            sb.st.cycles = dut.cycle() - sb.c0;
            // Hangs: per channel, checked every 64 cycles (the limit is in thousands).
            if sb.st.cycles % 64 == 0 {
                sb.check_hangs(cycle)?;
            }
            if sb.settled(bench) {
                break;
            }
            if sb.st.cycles % 65536 == 0 {
                sb.st.seconds = sb.start.elapsed().as_secs_f64();
                progress(&sb.st);
            }
        }
        if cfg.vcd.is_some() {
            dut.trace_stop();
        }
        sb.st.cycles = dut.cycle() - sb.c0;
        sb.st.seconds = sb.start.elapsed().as_secs_f64();
        Ok(sb.st)
    }
}

/// The gap probability of an input channel, or the stall probability of an output channel:
/// its entry in [`HarnessConfig::channel_rates`], else the configured default, within 0..=1.
fn channel_rate(cfg: &HarnessConfig, c: &Channel) -> f64 {
    let d = if c.dir == Dir::In {
        cfg.in_gap
    } else {
        cfg.out_stall
    };
    cfg.channel_rates
        .iter()
        .find(|(k, _)| *k == c.name)
        .map(|(_, v)| *v)
        .unwrap_or(d)
        .clamp(0.0, 1.0)
}

/// One run of the scoreboard: the resolved ports and rates, the random streams (`rng` for
/// gaps, stalls and resets; `rrng` for the responders), the expectations, the beats on offer
/// and the statistics so far.
struct Scoreboard<'h> {
    channels: &'h [Channel],
    responders: &'h mut [Attached],
    cfg: &'h HarnessConfig,
    ports: Vec<Port>,
    rates: Vec<f64>,
    /// Per input channel, the responder whose answers it carries.
    answered_by: Vec<Option<usize>>,
    /// Per output channel, the responder its beats are requests to.
    listened_by: Vec<Option<usize>>,
    rng: ChaCha8Rng,
    rrng: ChaCha8Rng,
    start: std::time::Instant,
    st: RunStats,
    /// The design's cycle count right after the initial reset (cycle 0 of the run).
    c0: u64,
    queues: Vec<VecDeque<Expected>>,
    /// The beat offered on each input channel (as built, and in port order), held until
    /// accepted.
    cur: Vec<Option<(Beat, Vec<Vec<u32>>)>>,
    /// The first beat refused (a field missing, unknown or too wide): ends the run.
    error: Option<String>,
    /// Cycle since which each channel has waited (an offered beat, or an expectation).
    waiting_since: Vec<Option<u64>>,
    /// Per output channel, its fields as read from the design.
    bufs: Vec<Vec<Vec<u32>>>,
    /// Per output channel, whether `ready` is driven high this cycle.
    readies: Vec<bool>,
    /// The input beats accepted this cycle, by channel.
    accepted: Vec<(usize, Beat)>,
    /// The earliest cycle for the next mid-run reset.
    next_reset: u64,
}

impl<'h> Scoreboard<'h> {
    /// Resolves the channels' ports, rates and responders, seeds the random streams and
    /// resets the design, ready for cycle 0.
    fn new(
        channels: &'h [Channel],
        responders: &'h mut [Attached],
        cfg: &'h HarnessConfig,
        dut: &mut dyn Dut,
    ) -> Result<Scoreboard<'h>, String> {
        let ports = channels
            .iter()
            .map(|c| resolve(dut, c))
            .collect::<Result<Vec<_>, String>>()?;
        let n = channels.len();
        let rates: Vec<f64> = channels.iter().map(|c| channel_rate(cfg, c)).collect();
        let answered_by: Vec<Option<usize>> = (0..n)
            .map(|c| responders.iter().position(|a| a.answer == c))
            .collect();
        let listened_by: Vec<Option<usize>> = (0..n)
            .map(|c| responders.iter().position(|a| a.on == c))
            .collect();
        let rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x005e_ed0f_5a11);
        let rrng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x0e5f_0dde_7a11);
        let start = std::time::Instant::now();
        dut.reset(4);
        let c0 = dut.cycle();
        let bufs = ports
            .iter()
            .map(|p| {
                p.fields
                    .iter()
                    .map(|(_, bits)| vec![0u32; bits.div_ceil(32) as usize])
                    .collect()
            })
            .collect();
        Ok(Scoreboard {
            channels,
            responders,
            cfg,
            ports,
            rates,
            answered_by,
            listened_by,
            rng,
            rrng,
            start,
            st: RunStats::default(),
            c0,
            queues: vec![VecDeque::new(); n],
            cur: vec![None; n],
            waiting_since: vec![None; n],
            bufs,
            readies: vec![false; n],
            accepted: Vec::new(),
            next_reset: 0,
            error: None,
        })
    }

    /// Starts or stops the waveform dump at the edges of [`HarnessConfig::vcd`]'s window.
    fn trace_window(&self, dut: &mut dyn Dut, cycle: u64) -> Result<(), String> {
        if let Some((path, from, to)) = &self.cfg.vcd {
            if cycle == *from {
                dut.trace_start(path)?;
            } else if cycle == *to {
                dut.trace_stop();
            }
        }
        Ok(())
    }

    /// Offers a beat on every free input channel whose gap pattern allows one (from its
    /// responder or the bench) and drives each output channel's `ready`, stalling at random;
    /// `true` when some input beat is offered this cycle.
    fn drive(&mut self, dut: &mut dyn Dut, bench: &mut dyn Bench, cycle: u64) -> bool {
        let mut offered_now = false;
        for c in 0..self.channels.len() {
            let p = &self.ports[c];
            if self.channels[c].dir == Dir::In {
                if self.cur[c].is_none() && !self.rng.gen_bool(self.rates[c]) {
                    let beat = match self.answered_by[c] {
                        Some(r) => self.responders[r].r.respond(cycle, &mut self.rrng),
                        None => bench.next_input(
                            c,
                            &mut Expect {
                                queues: &mut self.queues,
                                channels: self.channels,
                                ports: &self.ports,
                                error: &mut self.error,
                            },
                        ),
                    };
                    if let Some(b) = beat {
                        match b.order(&self.channels[c], p) {
                            Ok(v) => self.cur[c] = Some((b, v)),
                            Err(e) => {
                                self.error.get_or_insert(e);
                            }
                        }
                        self.waiting_since[c] = Some(cycle);
                    }
                }
                match &self.cur[c] {
                    Some((_, v)) => {
                        dut.set_u64(p.valid, 1);
                        offered_now = true;
                        for ((port, _), v) in p.fields.iter().zip(v) {
                            dut.set(*port, v);
                        }
                    }
                    None => dut.set_u64(p.valid, 0),
                }
            } else {
                self.readies[c] = !self.rng.gen_bool(self.rates[c]);
                dut.set_u64(p.ready, self.readies[c] as u64);
            }
        }
        offered_now
    }

    /// Takes the offered input beats the design accepts this cycle and hands them to the
    /// bench, which may push the output beats it now expects.
    fn accept_inputs(&mut self, dut: &mut dyn Dut, bench: &mut dyn Bench, cycle: u64) {
        self.accepted.clear();
        for c in 0..self.channels.len() {
            if self.channels[c].dir == Dir::In
                && self.cur[c].is_some()
                && dut.get_u64(self.ports[c].ready) == 1
            {
                if let Some((b, _)) = self.cur[c].take() {
                    self.accepted.push((c, b));
                }
                self.waiting_since[c] = None;
            }
        }
        for (c, b) in &self.accepted {
            self.st.beats_in += 1;
            bench.accepted(
                *c,
                b,
                cycle,
                &mut Expect {
                    queues: &mut self.queues,
                    channels: self.channels,
                    ports: &self.ports,
                    error: &mut self.error,
                },
            );
        }
    }

    /// Reads every output beat taken this cycle, compares it with its channel's expectations
    /// (stopping at the first mismatch) and shows it to the listening responder and the bench.
    fn take_outputs(&mut self, dut: &mut dyn Dut, bench: &mut dyn Bench, cycle: u64) {
        for c in 0..self.channels.len() {
            if self.channels[c].dir != Dir::Out
                || !self.readies[c]
                || dut.get_u64(self.ports[c].valid) != 1
            {
                continue;
            }
            for ((port, _), buf) in self.ports[c].fields.iter().zip(self.bufs[c].iter_mut()) {
                dut.get(*port, buf);
            }
            let got = &self.bufs[c];
            self.st.beats_out += 1;
            let ch = &self.channels[c];
            if !ch.unchecked {
                match check(ch, &mut self.queues[c], got, cycle) {
                    Err(m) => {
                        self.st.mismatches += 1;
                        self.st.first_mismatch = Some(m);
                        break;
                    }
                    Ok(true) => self.st.transfers += 1,
                    Ok(false) => {}
                }
            }
            self.waiting_since[c] = None;
            let got = Fields { ch, words: got };
            if let Some(r) = self.listened_by[c] {
                self.responders[r].r.request(&got, cycle, &mut self.rrng);
            }
            bench.observed(
                c,
                &got,
                cycle,
                &mut Expect {
                    queues: &mut self.queues,
                    channels: self.channels,
                    ports: &self.ports,
                    error: &mut self.error,
                },
            );
        }
    }

    /// Whether to assert a mid-run reset now: resets are left, something is in flight, the
    /// spacing since the last one has passed and the random draw says so.
    fn reset_due(&mut self, offered_now: bool, cycle: u64) -> bool {
        // Alternate resets with an input beat offered (valid high in this cycle, taken or
        // not: mid-handshake on the input side) and resets with output beats still
        // expected. A unit that is always ready still sees both kinds.
        let in_flight = if self.st.resets.is_multiple_of(2) {
            offered_now
        } else {
            self.queues.iter().any(|q| !q.is_empty())
        };
        self.st.resets < u64::from(self.cfg.resets)
            && in_flight
            && cycle >= self.next_reset
            && self.rng.gen_bool(RESET_RATE)
    }

    /// Resets the design in the middle of the run: drops every expectation, offered beat and
    /// outstanding request, resets the bench, and checks that the design comes back idle (no
    /// output valid), recording a mismatch otherwise.
    fn reset_mid_run(
        &mut self,
        dut: &mut dyn Dut,
        bench: &mut dyn Bench,
        offered_now: bool,
        cycle: u64,
    ) -> Result<(), String> {
        self.next_reset = cycle + self.rng.gen_range(16..1024);
        let expected = self.queues.iter().any(|q| !q.is_empty());
        dut.reset(self.rng.gen_range(1..=3));
        self.st.resets += 1;
        self.st.resets_mid.0 += offered_now as u64;
        self.st.resets_mid.1 += expected as u64;
        self.queues.iter_mut().for_each(VecDeque::clear);
        self.cur.iter_mut().for_each(|c| *c = None);
        self.waiting_since.iter_mut().for_each(|w| *w = None);
        for a in self.responders.iter_mut() {
            a.r.reset();
        }
        bench.reset()?;
        // Back to idle: with no input offered, no output may be valid.
        for (c, p) in self.ports.iter().enumerate() {
            if self.channels[c].dir == Dir::In {
                dut.set_u64(p.valid, 0);
            } else {
                dut.set_u64(p.ready, 0);
            }
        }
        dut.eval();
        for (c, p) in self.ports.iter().enumerate() {
            if self.channels[c].dir == Dir::Out && dut.get_u64(p.valid) == 1 {
                self.st.mismatches += 1;
                self.st.first_mismatch = Some(Mismatch {
                    channel: self.channels[c].name.clone(),
                    transfer: 0,
                    beat: 0,
                    cycle,
                    field: format!("{} after reset", self.channels[c].valid),
                    expected: "0 (idle)".into(),
                    actual: "1".into(),
                });
            }
        }
        Ok(())
    }

    /// Reports a hang: an output channel with expectations that produced nothing, an input
    /// beat not accepted, or a responder request not answered, for longer than
    /// [`HarnessConfig::hang_cycles`].
    fn check_hangs(&mut self, cycle: u64) -> Result<(), String> {
        let hang_cycles = self.cfg.hang_cycles;
        for c in 0..self.channels.len() {
            if self.channels[c].dir == Dir::Out && !self.queues[c].is_empty() {
                let since = *self.waiting_since[c].get_or_insert(cycle);
                if cycle - since > hang_cycles {
                    let e = &self.queues[c][0];
                    return Err(format!(
                        "design hung: channel `{}` produced nothing for {} cycles at \
                         cycle {}; expected transaction {} beat {} ({} beats pending)",
                        self.channels[c].name,
                        hang_cycles,
                        cycle,
                        e.txn,
                        e.beat,
                        self.queues[c].len()
                    ));
                }
            } else if self.channels[c].dir == Dir::In {
                if let Some(since) = self.waiting_since[c] {
                    if cycle - since > hang_cycles {
                        return Err(format!(
                            "design hung: channel `{}` did not accept a beat for {} cycles \
                             at cycle {}",
                            self.channels[c].name, hang_cycles, cycle
                        ));
                    }
                }
            }
        }
        for a in self.responders.iter() {
            if let Some(o) = a.r.oldest() {
                if cycle.saturating_sub(o) > hang_cycles {
                    return Err(format!(
                        "design hung: request on `{}` from cycle {} never answered on `{}` \
                         ({} outstanding)",
                        self.channels[a.on].name,
                        o,
                        self.channels[a.answer].name,
                        a.r.outstanding()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether the run is over: the bench is finished and no expectation, offered beat or
    /// responder request is left.
    fn settled(&self, bench: &dyn Bench) -> bool {
        bench.finished()
            && self.queues.iter().all(|q| q.is_empty())
            && self.cur.iter().all(|c| c.is_none())
            && self.responders.iter().all(|a| a.r.outstanding() == 0)
    }
}

/// Compares `got` with the channel's next expectation (or, for a tagged channel, the first
/// with the same tag) and removes it: `Ok(true)` when that completed its transaction on this
/// channel, the mismatch otherwise.
fn check(
    ch: &Channel,
    q: &mut VecDeque<Expected>,
    got: &[Vec<u32>],
    cycle: u64,
) -> Result<bool, Mismatch> {
    let pos = match ch.tag {
        Some(t) => q.iter().position(|e| e.value.get(t) == got.get(t)),
        None => (!q.is_empty()).then_some(0),
    };
    let Some(want) = pos.and_then(|p| q.remove(p)) else {
        return Err(Mismatch {
            channel: ch.name.clone(),
            transfer: 0,
            beat: 0,
            cycle,
            field: format!("{} (unexpected beat)", ch.valid),
            expected: "no beat".into(),
            actual: got.first().map(|w| show(w)).unwrap_or_default(),
        });
    };
    let diff = ch
        .fields
        .iter()
        .zip(want.value.iter().zip(got))
        .find(|(_, (w, g))| w != g);
    match diff {
        Some((name, (w, g))) => Err(Mismatch {
            channel: ch.name.clone(),
            transfer: want.txn,
            beat: want.beat,
            cycle,
            field: name.clone(),
            expected: show(w),
            actual: show(g),
        }),
        None if ch.tag.is_none() => Ok(q.front().is_none_or(|e| e.txn != want.txn)),
        None => Ok(!q.iter().any(|e| e.txn == want.txn)),
    }
}
