//! Adaptive link compression scoreboard (BDI, FPC and C-Pack+Z units, the controller; the link
//! units in [`super::link`]): streams lines
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
//! Stimulus: the spec §5 line profiles ([`crate::trace::lines`]): every pattern primitive,
//! `mixed` and the seven calibrated benchmark mixes, one profile drawn per line.

use super::dut::Dut;
use super::stream::{measure_latency, run_stream, Beat, Stream, StreamConfig, Txn};
pub use super::stream::{Mismatch, RunStats, Timing};
use crate::hdl::{HdlError, Module};
use crate::model::adaptive::paper::Bench;
use crate::model::adaptive::{evaluate, replay_lines, AdaptiveReport, Alg, Phase};
use crate::model::bdi::{self, BdiEncoding};
use crate::model::cpack;
use crate::model::fpc;
use crate::rtl::adaptive::AdaptiveRtlParams;
use crate::rtl::bdi as rtl;
use crate::trace::lines::{LineGen, LineProfile};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Which unit is under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// BDI compressor.
    BdiComp,
    /// BDI decompressor.
    BdiDecomp,
    /// Compressor → decompressor (test only).
    BdiLoopback,
    /// FPC compressor.
    FpcComp,
    /// FPC decompressor.
    FpcDecomp,
    /// FPC compressor → decompressor (test only).
    FpcLoopback,
    /// C-Pack+Z compressor.
    CpackComp,
    /// C-Pack+Z decompressor.
    CpackDecomp,
    /// C-Pack+Z compressor → decompressor (test only).
    CpackLoopback,
    /// The adaptive controller (`penalty_select` + `adaptive_ctrl`).
    Ctrl,
    /// Link egress `adaptive_tx`: compressors, controller, egress mux.
    Tx,
    /// Link ingress `adaptive_rx`: the decompressor dispatch.
    Rx,
    /// `adaptive_tx` → `adaptive_rx` (test only).
    LinkLoopback,
}

impl Unit {
    /// Every unit, the test-only loop-backs last.
    pub const ALL: [Unit; 13] = [
        Unit::BdiComp,
        Unit::BdiDecomp,
        Unit::FpcComp,
        Unit::FpcDecomp,
        Unit::CpackComp,
        Unit::CpackDecomp,
        Unit::Ctrl,
        Unit::Tx,
        Unit::Rx,
        Unit::BdiLoopback,
        Unit::FpcLoopback,
        Unit::CpackLoopback,
        Unit::LinkLoopback,
    ];

    /// The link units (egress, ingress, their loop-back), which need every enabled
    /// algorithm's compressor and decompressor.
    pub fn is_link(self) -> bool {
        matches!(self, Unit::Tx | Unit::Rx | Unit::LinkLoopback)
    }

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::BdiComp => "bdi_comp",
            Unit::BdiDecomp => "bdi_decomp",
            Unit::BdiLoopback => "bdi_loopback",
            Unit::FpcComp => "fpc_comp",
            Unit::FpcDecomp => "fpc_decomp",
            Unit::FpcLoopback => "fpc_loopback",
            Unit::CpackComp => "cpack_comp",
            Unit::CpackDecomp => "cpack_decomp",
            Unit::CpackLoopback => "cpack_loopback",
            Unit::Ctrl => "ctrl",
            Unit::Tx => "tx",
            Unit::Rx => "rx",
            Unit::LinkLoopback => "link_loopback",
        }
    }

    /// The algorithm whose model checks the unit (BDI for the controller, unused there).
    pub fn alg(self) -> Alg {
        match self {
            Unit::FpcComp | Unit::FpcDecomp | Unit::FpcLoopback => Alg::Fpc,
            Unit::CpackComp | Unit::CpackDecomp | Unit::CpackLoopback => Alg::Cpack,
            _ => Alg::Bdi,
        }
    }

    /// Whether the unit is a decompressor (fed streams, arbitrary payloads included).
    pub fn is_decomp(self) -> bool {
        matches!(self, Unit::BdiDecomp | Unit::FpcDecomp | Unit::CpackDecomp)
    }

    /// Whether the unit is a C-Pack+Z unit (stimulus from `model::cpack`).
    pub fn is_cpack(self) -> bool {
        self.alg() == Alg::Cpack
    }

    /// Parses a CLI name (`loopback` is accepted for `bdi_loopback`, the engine-independent
    /// name `flow` uses); the error lists the known units.
    pub fn from_name(s: &str) -> Result<Unit, String> {
        if s == "loopback" {
            return Ok(Unit::BdiLoopback);
        }
        Unit::ALL
            .iter()
            .copied()
            .find(|u| u.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Unit::ALL.iter().map(|u| u.name()).collect();
                format!("unknown unit `{}` (known: {})", s, known.join(", "))
            })
    }
}

/// The generated top module of `unit`.
pub fn top(p: &AdaptiveRtlParams, unit: Unit) -> Result<Arc<Module>, HdlError> {
    match unit {
        Unit::BdiComp => rtl::compressor(p),
        Unit::BdiDecomp => rtl::decompressor(p),
        Unit::BdiLoopback => rtl::loopback(p),
        Unit::FpcComp => crate::rtl::fpc::compressor(p),
        Unit::FpcDecomp => crate::rtl::fpc::decompressor(p),
        Unit::FpcLoopback => crate::rtl::fpc::loopback(p),
        Unit::CpackComp => crate::rtl::cpack::compressor(&p.cpack_rtl()),
        Unit::CpackDecomp => crate::rtl::cpack::decompressor(&p.cpack_rtl()),
        Unit::CpackLoopback => crate::rtl::cpack::loopback(&p.cpack_rtl()),
        Unit::Ctrl => crate::rtl::adaptive_ctrl::controller(p),
        Unit::Tx => crate::rtl::link::transmitter(p),
        Unit::Rx => crate::rtl::link::receiver(p),
        Unit::LinkLoopback => crate::rtl::link::loopback(p),
    }
}

/// The input and output streams of a unit.
pub fn streams(unit: Unit) -> (Stream, Stream) {
    let s = |f: &[&str]| Stream::new("s_valid_i", "s_ready_o", f);
    let m = |f: &[&str]| Stream::new("m_valid_o", "m_ready_i", f);
    match unit {
        Unit::BdiComp => (
            s(&["s_line_i"]),
            m(&["m_ok_o", "m_enc_o", "m_len_o", "m_payload_o"]),
        ),
        Unit::BdiDecomp | Unit::FpcDecomp | Unit::CpackDecomp => {
            (s(&["s_comp_i", "s_payload_i"]), m(&["m_line_o", "m_err_o"]))
        }
        Unit::BdiLoopback | Unit::FpcLoopback | Unit::CpackLoopback => {
            (s(&["s_line_i"]), m(&["m_line_o", "m_err_o"]))
        }
        Unit::FpcComp | Unit::CpackComp => {
            (s(&["s_line_i"]), m(&["m_ok_o", "m_len_o", "m_payload_o"]))
        }
        Unit::Ctrl => (
            s(&["s_size_bdi_i", "s_size_fpc_i", "s_size_cpack_i"]),
            m(&["m_sel_alg_o", "m_sample_o"]),
        ),
        Unit::Tx => (
            s(&["s_line_i"]),
            m(&[
                "m_comp_alg_o",
                "m_len_o",
                "m_payload_o",
                "m_sel_alg_o",
                "m_sample_o",
            ]),
        ),
        Unit::Rx => (
            s(&["s_comp_alg_i", "s_payload_i"]),
            m(&["m_line_o", "m_err_o"]),
        ),
        Unit::LinkLoopback => (s(&["s_line_i"]), m(&["m_line_o", "m_err_o"])),
    }
}

/// Stimulus and run control.
#[derive(Clone, Debug)]
pub struct StimConfig {
    /// Lines to push through.
    pub lines: u64,
    /// Random seed (runs are reproducible).
    pub seed: u64,
    /// Probability of an idle input cycle before a line.
    pub in_gap: f64,
    /// Probability that `ready` is low in a cycle.
    pub out_stall: f64,
    /// Line profiles to draw from (empty: every primitive, `mixed` and the seven benchmarks).
    pub profiles: Vec<LineProfile>,
    /// Decompressor only: fraction of arbitrary payloads (random prefix and bits).
    pub random_payload: f64,
    /// Fixed data instead of generated lines (bytes, cut into lines, zero-padded).
    pub data: Option<Vec<u8>>,
    /// Cycles without progress after which the design is declared hung.
    pub hang_cycles: u64,
    /// Dump a waveform of cycles `[from, to)` to this file (needs a tracing build).
    pub vcd: Option<(std::path::PathBuf, u64, u64)>,
    /// Keep the design's output bytes in [`RunStats::output`]: the compressor's streams
    /// (`⌈len/8⌉` bytes each, back to back), or the lines.
    pub capture: bool,
}

impl Default for StimConfig {
    fn default() -> Self {
        StimConfig {
            lines: 1000,
            seed: 1,
            in_gap: 0.2,
            out_stall: 0.3,
            profiles: Vec::new(),
            random_payload: 0.2,
            data: None,
            hang_cycles: 10_000,
            vcd: None,
            capture: false,
        }
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

/// One line and what the model makes of it.
#[derive(Clone, Debug)]
pub struct LineCase {
    /// The line.
    pub line: Vec<u8>,
    /// `model::bdi::compress` of the line.
    pub comp: bdi::BdiCompressed,
    /// `model::fpc::compress` of the line (Original mode), for a source of FPC units
    /// ([`LineSource::with_alg`]) only.
    pub fpc: Option<fpc::FpcCompressed>,
    /// `model::cpack::compress` of the line (C-Pack+Z sources only).
    pub cpack: Option<cpack::CpackCompressed>,
    /// Decompressor input override: (`s_comp_i`, stream bytes) of an arbitrary payload and the
    /// expected (line, err).
    pub arbitrary: Option<(bool, Vec<u8>, Vec<u8>, bool)>,
}

/// Seeded line source.
pub struct LineSource {
    p: AdaptiveRtlParams,
    gens: Vec<LineGen>,
    rng: ChaCha8Rng,
    remaining: u64,
    data: Option<(Vec<u8>, usize)>,
    random_payload: f64,
    alg: Alg,
    /// Lines produced so far.
    pub lines: u64,
    /// Σ sent bits (model `nbits`) so far.
    pub comp_bits: u64,
}

impl LineSource {
    /// A source for `cfg`.
    pub fn new(p: &AdaptiveRtlParams, cfg: &StimConfig) -> Self {
        let profiles = if cfg.profiles.is_empty() {
            all_profiles()
        } else {
            cfg.profiles.clone()
        };
        let gens = profiles
            .iter()
            .enumerate()
            .map(|(i, pr)| LineGen::new(*pr, p.line_bytes, cfg.seed.wrapping_mul(1000) + i as u64))
            .collect();
        LineSource {
            p: *p,
            gens,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x0bd1_u64),
            remaining: cfg.lines,
            data: cfg.data.clone().map(|d| (d, 0)),
            random_payload: cfg.random_payload,
            alg: Alg::Bdi,
            lines: 0,
            comp_bits: 0,
        }
    }

    /// The source for the units of `alg` (BDI by default, FPC or C-Pack+Z): which model's bits
    /// [`LineSource::comp_bits`] counts and which decoder judges arbitrary payloads.
    pub fn with_alg(mut self, alg: Alg) -> Self {
        self.alg = alg;
        self
    }

    /// The next line, or `None` when done.
    pub fn next_case(&mut self, decomp: bool) -> Option<LineCase> {
        if self.remaining == 0 {
            return None;
        }
        let lb = self.p.line_bytes;
        let line = match &mut self.data {
            Some((d, pos)) => {
                if *pos >= d.len() {
                    return None;
                }
                let mut l = d[*pos..(*pos + lb).min(d.len())].to_vec();
                l.resize(lb, 0);
                *pos += lb;
                l
            }
            None => {
                let k = self.rng.gen_range(0..self.gens.len());
                self.gens[k].next_line()
            }
        };
        self.remaining -= 1;
        self.lines += 1;
        let bp = self.p.bdi();
        let comp = bdi::compress(&bp, &line).expect("valid line");
        if self.alg == Alg::Cpack {
            let cp = self.p.cpack();
            let cc = cpack::compress(&cp, &line).expect("valid line");
            self.comp_bits += cc.nbits as u64;
            let arbitrary = (decomp && self.rng.gen_bool(self.random_payload)).then(|| {
                let mut bytes: Vec<u8> = if self.rng.gen_bool(0.5) {
                    (0..lb).map(|_| self.rng.gen()).collect()
                } else {
                    // The model's stream with 1–3 bits flipped within it.
                    let mut b = cc.bits.clone();
                    b.resize(lb, 0);
                    let n = cc.nbits.max(1);
                    for _ in 0..self.rng.gen_range(1..=3) {
                        let bit = self.rng.gen_range(0..n);
                        b[bit / 8] ^= 0x80 >> (bit % 8);
                    }
                    b
                };
                bytes.truncate(lb);
                let comp_flag = self.rng.gen_bool(0.9);
                if !comp_flag {
                    return (false, bytes.clone(), bytes, false);
                }
                match cpack::decompress_prefix(&cp, &bytes) {
                    Ok((l, _)) => (true, bytes, l, false),
                    Err(_) => (true, bytes, vec![0u8; lb], true),
                }
            });
            return Some(LineCase {
                line,
                comp,
                fpc: None,
                cpack: Some(cc),
                arbitrary,
            });
        }
        let fp = self.p.fpc();
        let fpc_comp =
            (self.alg == Alg::Fpc).then(|| fpc::compress(&fp, &line).expect("valid line"));
        self.comp_bits += match &fpc_comp {
            Some(f) => f.nbits,
            None => comp.nbits,
        } as u64;
        let fpc_arb = fpc_comp
            .as_ref()
            .filter(|_| decomp && self.rng.gen_bool(self.random_payload));
        let arbitrary = fpc_arb.map(|fpc_comp| {
            // Random bits, or the model's stream with one bit flipped.
            let mut bytes: Vec<u8> = (0..lb).map(|_| self.rng.gen()).collect();
            if fpc_comp.compressed && self.rng.gen_bool(0.5) {
                bytes = fpc_comp.bits.clone();
                bytes.resize(lb, 0);
                let b = self.rng.gen_range(0..fpc_comp.nbits);
                bytes[b / 8] ^= 0x80 >> (b % 8);
            }
            let comp_flag = self.rng.gen_bool(0.9);
            if !comp_flag {
                return (false, bytes.clone(), bytes, false);
            }
            match fpc::decompress_prefix(&fp, &bytes) {
                Ok((l, _)) => (true, bytes, l, false),
                Err(_) => (true, bytes, vec![0u8; lb], true),
            }
        });
        let arbitrary = arbitrary.or_else(|| {
            (decomp && self.alg != Alg::Fpc && self.rng.gen_bool(self.random_payload)).then(|| {
                let mut bytes: Vec<u8> = (0..lb).map(|_| self.rng.gen()).collect();
                // Mostly legal prefixes (arbitrary fields), sometimes reserved ones.
                if self.rng.gen_bool(0.8) {
                    bytes[0] &= 0x7f;
                }
                let comp_flag = self.rng.gen_bool(0.9);
                if !comp_flag {
                    return (false, bytes.clone(), bytes, false);
                }
                match bdi::decompress_prefix(&bp, &bytes) {
                    Ok((l, _)) => (true, bytes, l, false),
                    Err(_) => (true, bytes, vec![0u8; lb], true),
                }
            })
        });
        Some(LineCase {
            line,
            comp,
            fpc: fpc_comp,
            cpack: None,
            arbitrary,
        })
    }
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

/// The FPC model result of a case from an FPC source.
fn fpc_of(c: &LineCase) -> &fpc::FpcCompressed {
    c.fpc
        .as_ref()
        .expect("FPC units take cases from LineSource::with_alg(Alg::Fpc)")
}

/// The transaction of one line for `unit`, fields in [`streams`] order.
pub fn transaction(p: &AdaptiveRtlParams, unit: Unit, c: &LineCase) -> Txn {
    let lb = p.line_bytes;
    let line = le_words(&c.line);
    match unit {
        Unit::BdiComp => Txn {
            inputs: vec![Beat(vec![line])],
            expected: vec![Beat(vec![
                vec![c.comp.is_compressed() as u32],
                vec![c.comp.encoding as u32],
                vec![c.comp.nbits as u32],
                bus_words(&c.comp.bits, lb),
            ])],
        },
        Unit::FpcComp => Txn {
            inputs: vec![Beat(vec![line])],
            expected: vec![Beat(vec![
                vec![fpc_of(c).compressed as u32],
                vec![fpc_of(c).nbits as u32],
                bus_words(&fpc_of(c).bits, lb),
            ])],
        },
        Unit::FpcDecomp => match &c.arbitrary {
            Some((comp, bytes, out, err)) => Txn {
                inputs: vec![Beat(vec![vec![*comp as u32], bus_words(bytes, lb)])],
                expected: vec![Beat(vec![le_words(out), vec![*err as u32]])],
            },
            None => Txn {
                inputs: vec![Beat(vec![
                    vec![fpc_of(c).compressed as u32],
                    bus_words(&fpc_of(c).bits, lb),
                ])],
                expected: vec![Beat(vec![line, vec![0]])],
            },
        },
        Unit::BdiDecomp | Unit::CpackDecomp => match &c.arbitrary {
            Some((comp, bytes, out, err)) => Txn {
                inputs: vec![Beat(vec![vec![*comp as u32], bus_words(bytes, lb)])],
                expected: vec![Beat(vec![le_words(out), vec![*err as u32]])],
            },
            None => {
                let (ok, bits) = match (&c.cpack, unit) {
                    (Some(cc), Unit::CpackDecomp) => (cc.compressed, &cc.bits),
                    _ => (c.comp.is_compressed(), &c.comp.bits),
                };
                Txn {
                    inputs: vec![Beat(vec![vec![ok as u32], bus_words(bits, lb)])],
                    expected: vec![Beat(vec![line, vec![0]])],
                }
            }
        },
        Unit::CpackComp => {
            let cc = c.cpack.as_ref().expect("a C-Pack+Z line source");
            Txn {
                inputs: vec![Beat(vec![line])],
                expected: vec![Beat(vec![
                    vec![cc.compressed as u32],
                    vec![cc.nbits as u32],
                    bus_words(&cc.bits, lb),
                ])],
            }
        }
        Unit::BdiLoopback | Unit::FpcLoopback | Unit::CpackLoopback => Txn {
            inputs: vec![Beat(vec![line.clone()])],
            expected: vec![Beat(vec![line, vec![0]])],
        },
        Unit::Ctrl | Unit::Tx | Unit::Rx | Unit::LinkLoopback => {
            panic!(
                "the controller's and link units' transactions come from ctrl_cases / link::cases"
            )
        }
    }
}

/// The controller stimulus: `cfg.data` cut into lines, or a phase trace
/// ([`crate::trace::lines::phase_trace`]) of segments of 100..=1500 lines, each of a profile
/// drawn from `cfg.profiles` (every profile when empty), so that the decisions change.
pub fn ctrl_lines(p: &AdaptiveRtlParams, cfg: &StimConfig) -> Vec<Vec<u8>> {
    let lb = p.line_bytes;
    let n = cfg.lines as usize;
    if let Some(d) = &cfg.data {
        return d
            .chunks(lb)
            .take(n)
            .map(|c| {
                let mut l = c.to_vec();
                l.resize(lb, 0);
                l
            })
            .collect();
    }
    let profiles = if cfg.profiles.is_empty() {
        all_profiles()
    } else {
        cfg.profiles.clone()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xc7_u64);
    let mut segs = Vec::new();
    let mut total = 0;
    while total < n {
        let pr = profiles[rng.gen_range(0..profiles.len())];
        let len = rng.gen_range(100..=1500).min(n - total);
        segs.push((pr, len));
        total += len;
    }
    crate::trace::lines::phase_trace(&segs, lb, cfg.seed)
}

/// One controller transaction: the sizes the compressors report and what the model selects.
#[derive(Clone, Debug)]
pub struct CtrlCase {
    /// N per algorithm in bits, by Comp Alg code ([`crate::model::adaptive::evaluate`]).
    pub sizes: [usize; 4],
    /// The model's `sel_alg` ([`crate::model::adaptive::AdaptiveReport::sel_alg_sequence`]).
    pub sel: Alg,
    /// A sampling-phase transaction.
    pub sample: bool,
}

/// The controller transactions of `lines` and the model's report over them.
pub fn ctrl_cases(
    p: &AdaptiveRtlParams,
    lines: &[Vec<u8>],
) -> Result<(Vec<CtrlCase>, AdaptiveReport), String> {
    let mp = p.model();
    let rep = replay_lines(&mp, lines).map_err(|e| e.to_string())?;
    let sel = rep.sel_alg_sequence();
    let mut out = Vec::with_capacity(lines.len());
    for (i, (l, t)) in lines.iter().zip(&rep.txns).enumerate() {
        let sizes = match &t.eval {
            Some(e) => e.sizes,
            None => evaluate(&mp, l).map_err(|e| e.to_string())?.sizes,
        };
        out.push(CtrlCase {
            sizes,
            sel: sel[i],
            sample: t.phase == Phase::Sampling,
        });
    }
    Ok((out, rep))
}

/// The stream transaction of one controller case.
pub fn ctrl_transaction(c: &CtrlCase) -> Txn {
    let s = |a: Alg| vec![c.sizes[a as usize] as u32];
    Txn {
        inputs: vec![Beat(vec![s(Alg::Bdi), s(Alg::Fpc), s(Alg::Cpack)])],
        expected: vec![Beat(vec![vec![c.sel.code() as u32], vec![c.sample as u32]])],
    }
}

/// Runs the controller on `dut`: the expected `sel_alg` sequence is the model's over the same
/// lines. `comp_bytes` is the model's payload bits sent / 8.
fn run_ctrl(
    dut: &mut dyn Dut,
    p: &AdaptiveRtlParams,
    cfg: &StimConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let lines = ctrl_lines(p, cfg);
    let (cases, rep) = ctrl_cases(p, &lines)?;
    let txns = cases.iter().map(ctrl_transaction).collect();
    run_replayed(dut, Unit::Ctrl, lines.len(), txns, &rep, cfg, progress)
}

/// Streams `txns` (one per line of a replayed trace) through `unit`; `comp_bytes` is the
/// model's payload bits sent / 8.
fn run_replayed(
    dut: &mut dyn Dut,
    unit: Unit,
    lines: usize,
    txns: Vec<Txn>,
    rep: &AdaptiveReport,
    cfg: &StimConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let (input, output) = streams(unit);
    let mut it = txns.into_iter();
    let mut next = || it.next();
    let mut st = run_stream(
        dut,
        &input,
        &output,
        &mut next,
        &stream_config(cfg),
        &mut |_| {},
        progress,
    )?;
    st.lines = lines as u64;
    st.raw_bytes = rep.traffic.payload_bits_raw / 8;
    st.comp_bytes = rep.traffic.payload_bits_sent / 8;
    Ok(st)
}

/// The stream harness settings of `cfg`.
fn stream_config(cfg: &StimConfig) -> StreamConfig {
    StreamConfig {
        seed: cfg.seed,
        in_gap: cfg.in_gap,
        out_stall: cfg.out_stall,
        hang_cycles: cfg.hang_cycles,
        vcd: cfg.vcd.clone(),
        channel_rates: Vec::new(),
    }
}

/// Runs a link unit on `dut` over a phase trace ([`super::link::cases`]). `comp_bytes` is
/// the model's payload bits sent / 8.
fn run_link(
    dut: &mut dyn Dut,
    p: &AdaptiveRtlParams,
    unit: Unit,
    cfg: &StimConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let lines = ctrl_lines(p, cfg);
    let (txns, rep) = super::link::cases(p, unit, &lines, cfg)?;
    run_replayed(dut, unit, lines.len(), txns, &rep, cfg, progress)
}

/// Runs `unit` on `dut` and checks every output.
///
/// Returns the statistics (`lines`; `raw_bytes`, `comp_bytes` = Σ model bits / 8); a
/// mismatch stops the run and is in `first_mismatch`. `Err` is a harness problem or a hang.
pub fn run(
    dut: &mut dyn Dut,
    p: &AdaptiveRtlParams,
    unit: Unit,
    cfg: &StimConfig,
) -> Result<RunStats, String> {
    run_with(dut, p, unit, cfg, &mut |_| {})
}

/// [`run`], turning a mismatch (or no output at all) into an error.
pub fn run_clean(
    dut: &mut dyn Dut,
    p: &AdaptiveRtlParams,
    unit: Unit,
    cfg: &StimConfig,
) -> Result<RunStats, String> {
    run(dut, p, unit, cfg)?.into_clean(&format!("{} [{}]", unit.name(), p.describe()))
}

/// [`run`] with a progress callback, called about every 64 Ki cycles.
pub fn run_with(
    dut: &mut dyn Dut,
    p: &AdaptiveRtlParams,
    unit: Unit,
    cfg: &StimConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    p.validate()?;
    if unit == Unit::Ctrl {
        return run_ctrl(dut, p, cfg, progress);
    }
    if unit.is_link() {
        return run_link(dut, p, unit, cfg, progress);
    }
    let (input, output) = streams(unit);
    let mut src = LineSource::new(p, cfg).with_alg(unit.alg());
    let decomp = unit.is_decomp();
    let mut next = || src.next_case(decomp).map(|c| transaction(p, unit, &c));
    let scfg = stream_config(cfg);
    let lb = p.line_bytes;
    let mut captured = Vec::new();
    let mut on_output = |b: &[Vec<u32>]| {
        if !cfg.capture {
            return;
        }
        let bytes = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
        if matches!(unit, Unit::BdiComp | Unit::FpcComp | Unit::CpackComp) {
            // Left-aligned bus: stream byte j is bus byte L/8 − 1 − j.
            let k = b.len() - 1;
            let mut bus = bytes(&b[k]);
            bus.reverse();
            let n = (b[k - 1][0] as usize).div_ceil(8).min(lb);
            captured.extend_from_slice(&bus[..n]);
        } else {
            captured.extend(bytes(&b[0]));
        }
    };
    let mut st = run_stream(
        dut,
        &input,
        &output,
        &mut next,
        &scfg,
        &mut on_output,
        progress,
    )?;
    st.output = captured;
    st.lines = src.lines;
    st.raw_bytes = src.lines * p.line_bytes as u64;
    st.comp_bytes = src.comp_bits / 8;
    Ok(st)
}

/// Measures latency (one isolated line; the pipelines have a fixed depth, so it does not
/// depend on the line) and throughput (2000 lines of every profile, no stalls) of `unit`.
pub fn measure(dut: &mut dyn Dut, p: &AdaptiveRtlParams, unit: Unit) -> Result<Timing, String> {
    p.validate()?;
    let (input, output) = streams(unit);
    // The isolated line: the model's Base4-Δ1 golden vector (FPC sends it raw, its 532-bit
    // stream being longer than the line; C-Pack+Z codes it as new words and one narrow word);
    // the controller gets a zero line. For the controller and the link units it is the first
    // sample of a period (every compressor runs).
    let words: Vec<u32> = (0..p.line_bytes as u32 / 4)
        .map(|i| if i == 5 { 3 } else { 0x1234_5678 + i })
        .collect();
    let line: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let txn = if unit.is_link() {
        let (txns, _) = super::link::cases(p, unit, &[line], &StimConfig::default())?;
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
    let latency_cycles = measure_latency(dut, &input, &output, &txn)?;
    // Throughput: 2000 lines (phases for the controller and the link) without stalls.
    let cfg = StimConfig {
        lines: 2000,
        seed: 7,
        in_gap: 0.0,
        out_stall: 0.0,
        random_payload: if unit.is_link() {
            0.0
        } else {
            StimConfig::default().random_payload
        },
        ..StimConfig::default()
    };
    let st = run(dut, p, unit, &cfg)?;
    if let Some(m) = st.first_mismatch {
        return Err(format!("mismatch while measuring throughput: {}", m));
    }
    Ok(Timing {
        latency_cycles,
        in_beats_per_cycle: st.beats_in as f64 / st.cycles.max(1) as f64,
        raw_bytes_per_cycle: st.raw_bytes as f64 / st.cycles.max(1) as f64,
    })
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
mod tests {
    use super::*;
    use crate::cosim::dut::SimDut;

    fn params(yaml: &str) -> AdaptiveRtlParams {
        let p: AdaptiveRtlParams = serde_yaml::from_str(yaml).unwrap();
        p.validate().unwrap();
        p
    }

    #[test]
    fn stimulus_reaches_every_encoding() {
        let p = AdaptiveRtlParams::default();
        let h = encoding_histogram(
            &p,
            &StimConfig {
                lines: 20_000,
                ..StimConfig::default()
            },
        );
        assert_eq!(h.len(), 9, "{:?}", h);
    }

    #[test]
    fn captured_compressor_output_is_the_model_stream() {
        let p = AdaptiveRtlParams::default();
        let cfg = StimConfig {
            lines: 100,
            capture: true,
            ..StimConfig::default()
        };
        let mut dut = SimDut::new(&top(&p, Unit::BdiComp).unwrap()).unwrap();
        let st = run_clean(&mut dut, &p, Unit::BdiComp, &cfg).unwrap();
        let mut src = LineSource::new(&p, &cfg);
        let mut want = Vec::new();
        while let Some(c) = src.next_case(false) {
            want.extend_from_slice(&c.comp.bits);
        }
        assert_eq!(st.output, want);
    }

    /// Runs the controller on the interpreter; returns (transactions, phases, distinct
    /// decisions) after checking the whole `sel_alg` sequence.
    fn ctrl_interp(y: &str, lines: u64, seed: u64) -> (u64, usize, usize) {
        let p = params(y);
        let cfg = StimConfig {
            lines,
            seed,
            ..StimConfig::default()
        };
        let mut dut = SimDut::new(&top(&p, Unit::Ctrl).unwrap()).unwrap();
        let st = run_clean(&mut dut, &p, Unit::Ctrl, &cfg).unwrap();
        assert_eq!(st.beats_out, lines, "{y}");
        let (_, rep) = ctrl_cases(&p, &ctrl_lines(&p, &cfg)).unwrap();
        assert_eq!(rep.sel_alg_sequence().len() as u64, lines);
        let mut d = rep.decisions();
        d.sort();
        d.dedup();
        (st.beats_out, rep.phases.len(), d.len())
    }

    #[test]
    fn interpreter_ctrl_matches_model_sequence() {
        for lam in [0, 6, 32] {
            let (_, phases, distinct) = ctrl_interp(&format!("{{lambda: {lam}}}"), 4000, 3);
            assert!(phases >= 13, "lambda {lam}: {phases} phases");
            assert!(distinct >= 2, "lambda {lam}: decisions never change");
        }
        // Option rules, with short periods so that many decisions are taken.
        for y in [
            "{run_len: 20, no_quorum: keep-previous, vote_tie: lower-latency}",
            "{run_len: 5, no_quorum: plurality, sample_send: current, lambda: 2}",
            "{run_len: 0, sample_len: 5, vote_threshold: 2, use_fpc: false}",
            "{line_bytes: 32, run_len: 30, lambda: 32}",
            "{sample_len: 1, run_len: 0, vote_threshold: 1, no_quorum: keep-previous}",
            "{sample_len: 1, run_len: 3, vote_threshold: 1, sample_send: current}",
        ] {
            ctrl_interp(y, 1500, 5);
        }
    }

    #[test]
    fn fpc_stimulus_reaches_every_pattern_and_both_decoder_outcomes() {
        use crate::model::fpc::FpcPattern;
        let p = AdaptiveRtlParams::default();
        let cfg = StimConfig {
            lines: 5_000,
            ..StimConfig::default()
        };
        let mut src = LineSource::new(&p, &cfg).with_alg(Alg::Fpc);
        let mut pats = std::collections::BTreeSet::new();
        let (mut raw, mut comp, mut arb_ok, mut arb_err) = (0, 0, 0, 0);
        let mut long_run = false;
        while let Some(c) = src.next_case(true) {
            let f = fpc_of(&c);
            pats.extend(f.class.words.iter().copied());
            if f.compressed {
                comp += 1;
            } else {
                raw += 1;
            }
            long_run |= c.line.chunks(4).all(|w| w == [0; 4]);
            match c.arbitrary {
                Some((true, _, _, true)) => arb_err += 1,
                Some((true, _, _, false)) => arb_ok += 1,
                _ => {}
            }
        }
        assert_eq!(pats.len(), 8, "{:?}", pats);
        assert!(pats.contains(&FpcPattern::TwoHalves));
        assert!(raw > 100 && comp > 100, "raw {raw} compressed {comp}");
        assert!(long_run, "no all-zero line (zero runs cut at 8 words)");
        assert!(
            arb_ok > 50 && arb_err > 50,
            "arbitrary ok {arb_ok} err {arb_err}"
        );
    }

    #[test]
    fn interpreter_fpc_units_match_model_at_128_bytes() {
        let p = params("{line_bytes: 128}");
        for unit in [Unit::FpcComp, Unit::FpcDecomp, Unit::FpcLoopback] {
            let mut dut = SimDut::new(&top(&p, unit).unwrap()).unwrap();
            let cfg = StimConfig {
                lines: 100,
                ..StimConfig::default()
            };
            let st = run_clean(&mut dut, &p, unit, &cfg).unwrap();
            assert_eq!(st.lines, 100);
        }
    }

    #[test]
    fn interpreter_units_match_model() {
        for y in [
            "{}",
            "{bdi_base_rule: first-non-immediate}",
            "{line_bytes: 32}",
        ] {
            let p = params(y);
            // The C-Pack+Z units have their own (shorter) interpreter test.
            for unit in Unit::ALL
                .into_iter()
                .filter(|u| !u.is_link() && !u.is_cpack())
            {
                let mut dut = SimDut::new(&top(&p, unit).unwrap()).unwrap();
                let cfg = StimConfig {
                    lines: 200,
                    ..StimConfig::default()
                };
                let st = run_clean(&mut dut, &p, unit, &cfg).unwrap();
                assert_eq!(st.lines, 200);
            }
        }
    }

    #[test]
    fn interpreter_cpack_units_match_model() {
        for y in [
            "{}",
            "{cpack_push: all-non-zero, cpack_words_per_cycle: 1}",
            "{line_bytes: 32, cpack_codes: original, cpack_push: no-full-match}",
        ] {
            let p = params(y);
            for unit in [Unit::CpackComp, Unit::CpackDecomp, Unit::CpackLoopback] {
                let mut dut = SimDut::new(&top(&p, unit).unwrap()).unwrap();
                let cfg = StimConfig {
                    lines: 80,
                    random_payload: 0.4,
                    ..StimConfig::default()
                };
                let st = run_clean(&mut dut, &p, unit, &cfg).unwrap();
                assert_eq!(st.lines, 80, "{y} {}", unit.name());
            }
        }
    }

    #[test]
    fn cpack_stimulus_reaches_every_pattern_and_error() {
        // Every Table II pattern, raw fallbacks, and both decompressor verdicts on arbitrary
        // payloads occur in the stimulus (else the scoreboard could not catch their faults).
        let p = AdaptiveRtlParams::default();
        let cfg = StimConfig {
            lines: 5_000,
            ..StimConfig::default()
        };
        let mut src = LineSource::new(&p, &cfg).with_alg(Alg::Cpack);
        let mut pats = std::collections::BTreeSet::new();
        let (mut raw, mut bad, mut good) = (0, 0, 0);
        while let Some(c) = src.next_case(true) {
            let cc = c.cpack.unwrap();
            raw += !cc.compressed as u32;
            pats.extend(cc.events());
            if let Some((true, _, _, e)) = c.arbitrary {
                if e {
                    bad += 1;
                } else {
                    good += 1;
                }
            }
        }
        assert_eq!(pats.len(), 7, "{:?}", pats);
        assert!(raw > 0 && bad > 50 && good > 50, "{raw} {bad} {good}");
    }
}

#[cfg(test)]
mod verilator_tests {
    use super::*;
    use crate::cosim::fault::{faulty_dut, invert_mux_select};
    use crate::cosim::vdut::VerilatorDut;

    fn params(yaml: &str) -> AdaptiveRtlParams {
        let p: AdaptiveRtlParams = serde_yaml::from_str(yaml).unwrap();
        p.validate().unwrap();
        p
    }

    fn run_unit(p: &AdaptiveRtlParams, unit: Unit, lines: u64, seed: u64) -> RunStats {
        let mut dut = VerilatorDut::new(&top(p, unit).unwrap(), false).unwrap();
        let cfg = StimConfig {
            lines,
            seed,
            ..StimConfig::default()
        };
        let st = run_clean(&mut dut, p, unit, &cfg).unwrap();
        assert_eq!(st.lines, lines);
        st
    }

    const SETS: &[&str] = &[
        "{}",
        "{bdi_base_rule: first-non-immediate}",
        "{line_bytes: 32}",
        "{line_bytes: 128, bdi_base_rule: first-non-immediate}",
        "{bdi_decomp_stages: 2}",
        "{line_bytes: 32, bdi_base_rule: first-non-immediate, bdi_decomp_stages: 2}",
    ];

    /// Runs the compressor, decompressor and loop-back `units` on every parameter set: `first`
    /// lines on the first set, `rest` on the others; unit k of set i gets seed
    /// `seed + 10·k + i`.
    fn run_sets(sets: &[&str], units: [Unit; 3], first: u64, rest: u64, seed: u64) {
        for (i, y) in sets.iter().enumerate() {
            let p = params(y);
            let n = if i == 0 { first } else { rest };
            for (k, unit) in units.into_iter().enumerate() {
                run_unit(&p, unit, n, seed + 10 * k as u64 + i as u64);
            }
        }
    }

    #[test]
    fn verilator_bdi_units_match_model() {
        let units = [Unit::BdiComp, Unit::BdiDecomp, Unit::BdiLoopback];
        run_sets(SETS, units, 50_000, 10_000, 10);
    }

    #[test]
    fn verilator_fpc_units_match_model() {
        let sets = ["{}", "{line_bytes: 32}", "{line_bytes: 128}"];
        let units = [Unit::FpcComp, Unit::FpcDecomp, Unit::FpcLoopback];
        run_sets(&sets, units, 30_000, 5_000, 110);
    }

    #[test]
    fn verilator_fpc_latency_and_throughput() {
        for lb in [32, 64, 128] {
            let p = params(&format!("{{line_bytes: {lb}}}"));
            for (unit, lat) in [(Unit::FpcComp, 3), (Unit::FpcDecomp, 5)] {
                let mut dut = VerilatorDut::new(&top(&p, unit).unwrap(), false).unwrap();
                let t = measure(&mut dut, &p, unit).unwrap();
                assert_eq!(t.latency_cycles, lat, "{} {lb} B", unit.name());
                assert!(t.in_beats_per_cycle > 0.99, "{}: {:?}", unit.name(), t);
            }
        }
    }

    #[test]
    fn scoreboard_catches_injected_fpc_faults() {
        let p = AdaptiveRtlParams::default();
        // Packer, level-1 merge of words 2 and 3: the shift-by-4 stage's select inverted.
        assert_mux_fault_caught(&p, Unit::FpcComp, "mg1_1_s2", "m_payload_o", 5_000);
        // Decompressor step 5: the write of word slot 7 inverted.
        assert_mux_fault_caught(&p, Unit::FpcDecomp, "k5_slot7", "m_line_o", 5_000);
    }

    fn ctrl_verilator(y: &str, lines: u64, seed: u64) -> AdaptiveReport {
        let p = params(y);
        let cfg = StimConfig {
            lines,
            seed,
            ..StimConfig::default()
        };
        let mut dut = VerilatorDut::new(&top(&p, Unit::Ctrl).unwrap(), false).unwrap();
        let st = run_clean(&mut dut, &p, Unit::Ctrl, &cfg).unwrap();
        assert_eq!(st.beats_out, lines, "{y}");
        let (_, rep) = ctrl_cases(&p, &ctrl_lines(&p, &cfg)).unwrap();
        rep
    }

    #[test]
    fn verilator_ctrl_matches_model_sequence() {
        use crate::model::adaptive::DecisionRule;
        for lam in [0, 6, 32] {
            let rep = ctrl_verilator(&format!("{{lambda: {lam}}}"), 30_000, 40 + lam as u64);
            let mut rules = [0usize; 3];
            for ph in &rep.phases {
                rules[match ph.rule {
                    DecisionRule::Quorum => 0,
                    DecisionRule::QuorumTie => 1,
                    DecisionRule::NoQuorum => 2,
                }] += 1;
            }
            let mut d = rep.decisions();
            d.sort();
            d.dedup();
            eprintln!(
                "ctrl lambda {lam}: 30000 sel_alg compared, {} phases, rules quorum/tie/none {:?}, decisions {:?}",
                rep.phases.len(),
                rules,
                d
            );
            assert!(d.len() >= 2, "lambda {lam}: decisions never change");
        }
        for (i, y) in [
            "{run_len: 20, no_quorum: keep-previous, vote_tie: lower-latency}",
            "{run_len: 5, no_quorum: plurality, sample_send: current, lambda: 2}",
            "{run_len: 0, sample_len: 5, vote_threshold: 2, use_fpc: false}",
            "{line_bytes: 128, run_len: 30, lambda: 32, use_bdi: false}",
        ]
        .iter()
        .enumerate()
        {
            ctrl_verilator(y, 10_000, 60 + i as u64);
        }
    }

    #[test]
    fn verilator_ctrl_latency_and_throughput() {
        let p = AdaptiveRtlParams::default();
        let mut dut = VerilatorDut::new(&top(&p, Unit::Ctrl).unwrap(), false).unwrap();
        let t = measure(&mut dut, &p, Unit::Ctrl).unwrap();
        assert_eq!(
            t.latency_cycles, 2,
            "one register stage, the acceptance cycle counted"
        );
        assert!(t.in_beats_per_cycle > 0.99, "{:?}", t);
    }

    #[test]
    fn scoreboard_catches_injected_ctrl_fault() {
        // The vote-threshold compare of BDI inverted.
        let p = AdaptiveRtlParams::default();
        let mut dut = faulty(&p, Unit::Ctrl, &|v| {
            v.replace(
                "assign qual_bdi = (votes_bdi_q >= 3'd3);",
                "assign qual_bdi = (votes_bdi_q < 3'd3);",
            )
        });
        let cfg = StimConfig {
            lines: 5_000,
            ..StimConfig::default()
        };
        let m = run(&mut dut, &p, Unit::Ctrl, &cfg)
            .unwrap()
            .first_mismatch
            .expect("the injected fault must be detected");
        assert_eq!(m.field, "m_sel_alg_o");
    }

    #[test]
    fn verilator_bdi_latency_and_throughput() {
        // Latency counts the acceptance cycle: 1 + the configured register stages.
        for stages in [1u32, 2] {
            let p = AdaptiveRtlParams {
                bdi_decomp_stages: stages,
                ..AdaptiveRtlParams::default()
            };
            for (unit, lat) in [
                (Unit::BdiComp, 3),
                (Unit::BdiDecomp, 1 + stages as u64),
                (Unit::BdiLoopback, 3 + stages as u64),
            ] {
                let mut dut = VerilatorDut::new(&top(&p, unit).unwrap(), false).unwrap();
                let t = measure(&mut dut, &p, unit).unwrap();
                assert_eq!(t.latency_cycles, lat, "{} stages={}", unit.name(), stages);
                assert!(t.in_beats_per_cycle > 0.99, "{}: {:?}", unit.name(), t);
            }
        }
    }

    fn faulty(p: &AdaptiveRtlParams, unit: Unit, edit: &dyn Fn(&str) -> String) -> VerilatorDut {
        let top = top(p, unit).unwrap();
        faulty_dut(&top, &top.name, edit).unwrap()
    }

    /// Inverts the select of mux `mux` in `unit` and checks that the scoreboard reports a
    /// mismatch on `field` within `lines` lines.
    fn assert_mux_fault_caught(
        p: &AdaptiveRtlParams,
        unit: Unit,
        mux: &str,
        field: &str,
        lines: u64,
    ) {
        let mut dut = faulty(p, unit, &|v| {
            invert_mux_select(v, mux).unwrap_or_else(|| panic!("{mux} is a mux"))
        });
        let cfg = StimConfig {
            lines,
            ..StimConfig::default()
        };
        let m = run(&mut dut, p, unit, &cfg)
            .unwrap()
            .first_mismatch
            .expect("the injected fault must be detected");
        assert_eq!(m.field, field, "{} {mux}", unit.name());
    }

    #[test]
    fn scoreboard_catches_injected_faults() {
        let p = AdaptiveRtlParams::default();
        // Stage 1, Base4-Δ1 element 3: the immediate/base delta select inverted (wrong only
        // for Base4-Δ1 lines whose element 3 is not the same both ways).
        let mut dut = faulty(&p, Unit::BdiComp, &|v| {
            invert_mux_select(v, "b4d1_dsel3").expect("b4d1_dsel3 is a mux")
        });
        let cfg = StimConfig {
            lines: 5_000,
            ..StimConfig::default()
        };
        let m = run(&mut dut, &p, Unit::BdiComp, &cfg)
            .unwrap()
            .first_mismatch
            .expect("the injected fault must be detected");
        assert_eq!(m.field, "m_payload_o");
        // The decompressor's sign extension of an immediate Base8-Δ1 delta 2 replaced by zero
        // extension.
        let mut dut = faulty(&p, Unit::BdiDecomp, &|v| {
            v.replace(": {56{s_payload_i[419]}}), b8d1_lo2", ": 56'd0), b8d1_lo2")
        });
        let m = run(&mut dut, &p, Unit::BdiDecomp, &cfg)
            .unwrap()
            .first_mismatch
            .expect("the injected fault must be detected");
        assert_eq!(m.field, "m_line_o");
    }

    /// The default, the original C-Pack (codes and push rule) at 32 B, and one word per cycle
    /// with the gem5 push rule at 128 B (few sets: each is three Verilator builds).
    const CPACK_SETS: &[&str] = &[
        "{}",
        "{line_bytes: 32, cpack_codes: original, cpack_push: no-full-match}",
        "{line_bytes: 128, cpack_push: all-non-zero, cpack_words_per_cycle: 1}",
    ];

    #[test]
    fn verilator_cpack_units_match_model() {
        let units = [Unit::CpackComp, Unit::CpackDecomp, Unit::CpackLoopback];
        run_sets(CPACK_SETS, units, 40_000, 10_000, 110);
    }

    #[test]
    fn verilator_cpack_latency_and_throughput() {
        // 64 B, 2 words per cycle: P = 8 steps; compressor 1 + 8 + T/E + F + output = 12
        // (P + 4), decompressor 8 steps (the first in the acceptance cycle) + output = 9
        // (P + 1); II = P. The sets of `verilator_cpack_units_match_model` (shared builds).
        for (y, lc, ld, ii) in [
            (CPACK_SETS[0], 12, 9, 8.0),
            (CPACK_SETS[1], 8, 5, 4.0),
            (CPACK_SETS[2], 36, 33, 32.0),
        ] {
            let p = params(y);
            for (unit, lat) in [(Unit::CpackComp, lc), (Unit::CpackDecomp, ld)] {
                let mut dut = VerilatorDut::new(&top(&p, unit).unwrap(), false).unwrap();
                let t = measure(&mut dut, &p, unit).unwrap();
                assert_eq!(t.latency_cycles, lat, "{y} {}", unit.name());
                let per_line = 1.0 / t.in_beats_per_cycle;
                if unit == Unit::CpackComp {
                    assert!((per_line - ii).abs() < 0.05, "{y} {}: {:?}", unit.name(), t);
                } else {
                    // Raw lines and zero blocks take one cycle.
                    assert!(per_line <= ii + 0.05, "{y} {}: {:?}", unit.name(), t);
                }
            }
        }
    }

    #[test]
    fn scoreboard_catches_injected_cpack_faults() {
        let p = AdaptiveRtlParams::default();
        // Compressor: word 1's 3-byte/halfword index select inverted.
        assert_mux_fault_caught(&p, Unit::CpackComp, "w1_idx_th", "m_payload_o", 3_000);
        // Decompressor: token 1's dictionary forwarding select inverted.
        assert_mux_fault_caught(&p, Unit::CpackDecomp, "t1_dict", "m_line_o", 3_000);
    }
}
