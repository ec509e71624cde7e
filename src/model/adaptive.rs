//! Adaptive inter-GPU link compression: penalty-based selection among BDI, FPC and C-Pack+Z
//! with sampling and running phases, plus the message/fabric size model (Tavana et al.,
//! IPDPS'19; docs/FORMATS.md, adaptive §2.4, §2.5, §3, §7).
//!
//! * **Penalty** (Eq. 1): `P = N + λ(L_C + L_D)` per candidate, N = bits as sent (the line size
//!   when the compressor does not save space), `K_alg = λ(L_C + L_D)` from Table III latencies
//!   (BDI 2 + 1, FPC 3 + 5, C-Pack+Z 16 + 9, none 0). Bypass costs `P = 8·line_bytes`.
//! * **Phases**: every `sample_len + run_len` (7 + 300) payload transactions, all compressors
//!   run on the `sample_len` sampled lines; each sample's winner is argmin P (ties: lower
//!   `L_C + L_D`, i.e. none < BDI < FPC < C-Pack+Z) and the sampled line is sent with it. A
//!   candidate with ≥ `vote_threshold` (3) wins is selected for the running phase; two
//!   qualifying candidates are split by more wins, then by the lower summed P over the
//!   samples ([`VoteTie`]). No qualifying candidate → bypass ([`NoQuorum`]). The controller
//!   starts in a sampling phase.
//! * **Messages** (§2.5, Fig. 4): headers Read Req 16 B, Data Ready 4 B, Write Req 13 B,
//!   Write ACK 4 B; the payload is `⌈N/8⌉` bytes; a message occupies `⌈bytes/20⌉` bus cycles.
//!   The 4-bit Comp Alg field is 0 = none, 1 = FPC, 2 = C-Pack+Z, 3 = BDI.
//!
//! [`replay`] runs a trace through the controller and reports the per-transaction decisions
//! (the `sel_alg` sequence the RTL must reproduce), per-phase votes, traffic bytes, bus cycles,
//! compressor energy and the histogram of algorithms used.
//!
//! See `docs/FORMATS.md`, section "Adaptive link compression".

pub mod eval;
pub mod paper;

#[cfg(test)]
mod crosscheck;

use super::bdi::BdiParams;
use super::bits::{BitReader, BitWriter};
use super::codec::{Coded, LineCodec};
use super::cpack::CpackParams;
use super::fpc::FpcParams;
use super::ModelError;
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// A compression algorithm; the discriminant is the Comp Alg header code (§2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Alg {
    /// No compression (bypass).
    None = 0,
    /// Frequent Pattern Compression.
    Fpc = 1,
    /// C-Pack+Z.
    Cpack = 2,
    /// Base-Delta-Immediate.
    Bdi = 3,
}

impl Alg {
    /// All four, in the default tie order (increasing `L_C + L_D`).
    pub const ALL: [Alg; 4] = [Alg::None, Alg::Bdi, Alg::Fpc, Alg::Cpack];

    /// The Comp Alg header code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Decodes a Comp Alg code (4..=15 are reserved).
    pub fn from_code(c: u8) -> Option<Alg> {
        match c {
            0 => Some(Alg::None),
            1 => Some(Alg::Fpc),
            2 => Some(Alg::Cpack),
            3 => Some(Alg::Bdi),
            _ => None,
        }
    }

    /// Name as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Alg::None => "none",
            Alg::Fpc => "fpc",
            Alg::Cpack => "cpack",
            Alg::Bdi => "bdi",
        }
    }

    fn idx(self) -> usize {
        self as usize
    }
}

/// Latency (cycles) and power (mW) of one compressor/decompressor pair (Table III).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlgCost {
    /// Compression latency L_C in cycles.
    pub comp_cycles: u32,
    /// Decompression latency L_D in cycles.
    pub decomp_cycles: u32,
    /// Compressor power in mW.
    pub comp_mw: f64,
    /// Decompressor power in mW.
    pub decomp_mw: f64,
}

impl AlgCost {
    /// Table III values for `alg` (all zero for `Alg::None`).
    pub fn table_iii(alg: Alg) -> AlgCost {
        let c = |comp_cycles, decomp_cycles, comp_mw, decomp_mw| AlgCost {
            comp_cycles,
            decomp_cycles,
            comp_mw,
            decomp_mw,
        };
        match alg {
            Alg::None => c(0, 0, 0.0, 0.0),
            Alg::Fpc => c(3, 5, 4.6, 4.6),
            Alg::Bdi => c(2, 1, 0.6, 0.2),
            Alg::Cpack => c(16, 9, 1.8, 1.3),
        }
    }

    /// `L_C + L_D`.
    pub fn cycles(&self) -> u64 {
        self.comp_cycles as u64 + self.decomp_cycles as u64
    }

    /// Compression energy in pJ (mW × ns at 1 GHz, §3).
    pub fn comp_pj(&self) -> f64 {
        self.comp_mw * self.comp_cycles as f64
    }

    /// Decompression energy in pJ.
    pub fn decomp_pj(&self) -> f64 {
        self.decomp_mw * self.decomp_cycles as f64
    }
}

/// What to do when no candidate reaches the vote threshold (§2.4 item 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum NoQuorum {
    /// Bypass compression (the literal reading: nothing qualified; default).
    #[default]
    Bypass,
    /// Keep the previous running-phase selection (bypass before the first decision).
    KeepPrevious,
    /// Take the candidate with the most wins (ties as [`AdaptiveParams::vote_tie`]).
    Plurality,
}

/// How to split candidates with equal wins (§2.4 item 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum VoteTie {
    /// Lower summed P over the samples, then lower `L_C + L_D` (default).
    #[default]
    SumPenalty,
    /// Lower `L_C + L_D` directly.
    LowerLatency,
}

/// Which algorithm a sampled line is sent with (§2.4 item 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SampleSend {
    /// The sample's own minimum-P winner (default).
    #[default]
    Winner,
    /// The selection of the previous running phase.
    Current,
}

/// Parameters of the adaptive controller and of the three compressors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveParams {
    /// λ of Eq. 1 (the paper evaluates 0, 6 and 32; 6 is best).
    pub lambda: u32,
    /// Sampled transactions per period (7).
    pub sample_len: u32,
    /// Running-phase transactions per period (300; the alternative reading is 293).
    pub run_len: u32,
    /// Wins needed to be selected (3).
    pub vote_threshold: u32,
    /// BDI is a candidate.
    pub use_bdi: bool,
    /// FPC is a candidate.
    pub use_fpc: bool,
    /// C-Pack+Z is a candidate.
    pub use_cpack: bool,
    /// No-quorum rule.
    pub no_quorum: NoQuorum,
    /// Vote tie rule.
    pub vote_tie: VoteTie,
    /// What sampled lines are sent with.
    pub sample_send: SampleSend,
    /// BDI cost (Table III).
    pub bdi_cost: AlgCost,
    /// FPC cost (Table III).
    pub fpc_cost: AlgCost,
    /// C-Pack+Z cost (Table III).
    pub cpack_cost: AlgCost,
    /// BDI parameters.
    pub bdi: BdiParams,
    /// FPC parameters (`Original` by default; `PaperSize` gives the paper's sizes).
    pub fpc: FpcParams,
    /// C-Pack parameters.
    pub cpack: CpackParams,
}

impl Default for AdaptiveParams {
    fn default() -> Self {
        AdaptiveParams {
            lambda: 6,
            sample_len: 7,
            run_len: 300,
            vote_threshold: 3,
            use_bdi: true,
            use_fpc: true,
            use_cpack: true,
            no_quorum: NoQuorum::Bypass,
            vote_tie: VoteTie::SumPenalty,
            sample_send: SampleSend::Winner,
            bdi_cost: AlgCost::table_iii(Alg::Bdi),
            fpc_cost: AlgCost::table_iii(Alg::Fpc),
            cpack_cost: AlgCost::table_iii(Alg::Cpack),
            bdi: BdiParams::default(),
            fpc: FpcParams::default(),
            cpack: CpackParams::default(),
        }
    }
}

impl AdaptiveParams {
    /// Defaults with the given λ.
    pub fn with_lambda(lambda: u32) -> Self {
        AdaptiveParams {
            lambda,
            ..Self::default()
        }
    }

    /// Single-algorithm mode (§2.4 item 8): candidates {none, `alg`}.
    pub fn single(alg: Alg, lambda: u32) -> Self {
        AdaptiveParams {
            lambda,
            use_bdi: alg == Alg::Bdi,
            use_fpc: alg == Alg::Fpc,
            use_cpack: alg == Alg::Cpack,
            ..Self::default()
        }
    }

    /// Checks phase lengths, the threshold and that all compressors use the same line size.
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.sample_len == 0 {
            return Err(ModelError::param("sample_len", 0, "at least 1"));
        }
        if self.vote_threshold == 0 || self.vote_threshold > self.sample_len {
            return Err(ModelError::param(
                "vote_threshold",
                self.vote_threshold,
                format!("1..={} (sample_len)", self.sample_len),
            ));
        }
        self.bdi.validate()?;
        self.fpc.validate()?;
        self.cpack.validate()?;
        let lb = self.bdi.line_bytes;
        if self.fpc.line_bytes != lb || self.cpack.line_bytes != lb {
            return Err(ModelError::param(
                "line_bytes",
                format!(
                    "bdi {lb}, fpc {}, cpack {}",
                    self.fpc.line_bytes, self.cpack.line_bytes
                ),
                "the same line size for all compressors",
            ));
        }
        Ok(())
    }

    /// Line size in bytes.
    pub fn line_bytes(&self) -> usize {
        self.bdi.line_bytes
    }

    /// The codec behind `alg` (none for `Alg::None`, which sends the raw line). The
    /// controller selects among the enabled codecs; the Comp Alg code of each is fixed by
    /// the link format (§2.5).
    pub fn codec(&self, alg: Alg) -> Option<&dyn LineCodec> {
        match alg {
            Alg::None => None,
            Alg::Bdi => Some(&self.bdi),
            Alg::Fpc => Some(&self.fpc),
            Alg::Cpack => Some(&self.cpack),
        }
    }

    /// Whether `alg` is a candidate (`Alg::None` always is).
    pub fn enabled(&self, alg: Alg) -> bool {
        match alg {
            Alg::None => true,
            Alg::Bdi => self.use_bdi,
            Alg::Fpc => self.use_fpc,
            Alg::Cpack => self.use_cpack,
        }
    }

    /// Cost of `alg`.
    pub fn cost(&self, alg: Alg) -> AlgCost {
        match alg {
            Alg::None => AlgCost::table_iii(Alg::None),
            Alg::Bdi => self.bdi_cost,
            Alg::Fpc => self.fpc_cost,
            Alg::Cpack => self.cpack_cost,
        }
    }

    /// `K_alg = λ(L_C + L_D)`, indexed by Comp Alg code (the `k_table` contents).
    pub fn k_values(&self) -> [u64; 4] {
        let mut k = [0u64; 4];
        for a in Alg::ALL {
            k[a.idx()] = self.lambda as u64 * self.cost(a).cycles();
        }
        k
    }

    /// Tie order of the candidates: increasing `L_C + L_D`, then none < BDI < FPC < C-Pack.
    pub fn tie_order(&self) -> [Alg; 4] {
        let mut o = Alg::ALL;
        o.sort_by_key(|&a| self.cost(a).cycles());
        o
    }
}

/// Compressed size in bits of `line` under `alg` as sent (the line size when it does not
/// save space; `Alg::None` is the line size).
pub fn size_bits(p: &AdaptiveParams, alg: Alg, line: &[u8]) -> Result<usize, ModelError> {
    match p.codec(alg) {
        Some(c) => c.size_bits(line),
        None => {
            if line.len() != p.line_bytes() {
                return Err(ModelError::BadLineLength {
                    len: line.len(),
                    expected: p.line_bytes(),
                });
            }
            Ok(line.len() * 8)
        }
    }
}

/// A line as it leaves the egress mux: the Comp Alg actually used and the payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payload {
    /// Comp Alg field (`None` when `alg` did not save space).
    pub comp_alg: Alg,
    /// Payload bits (`nbits.div_ceil(8)` bytes, zero-padded).
    pub bits: Vec<u8>,
    /// Payload length in bits.
    pub nbits: usize,
}

/// Compresses `line` with `alg` and applies the egress bypass (uncompressed → Comp Alg 0).
/// FPC must be in `Original` mode.
pub fn compress(p: &AdaptiveParams, alg: Alg, line: &[u8]) -> Result<Payload, ModelError> {
    let c = match p.codec(alg) {
        Some(c) => c.compress(line)?,
        None => {
            size_bits(p, Alg::None, line)?;
            Coded {
                bits: line.to_vec(),
                nbits: line.len() * 8,
                compressed: false,
            }
        }
    };
    Ok(Payload {
        comp_alg: if c.compressed { alg } else { Alg::None },
        bits: c.bits,
        nbits: c.nbits,
    })
}

/// Decodes a payload that starts at `data[0]` with the decompressor named by `comp_alg`
/// (self-delimiting, as at the receiver); returns the line and the payload bits consumed.
pub fn decompress_prefix(
    p: &AdaptiveParams,
    comp_alg: Alg,
    data: &[u8],
) -> Result<(Vec<u8>, usize), ModelError> {
    match p.codec(comp_alg) {
        Some(c) => c.decompress_prefix(data),
        None => {
            let lb = p.line_bytes();
            if data.len() < lb {
                return Err(ModelError::Truncated {
                    what: "raw line".into(),
                    offset: 0,
                    needed: lb,
                    available: data.len(),
                });
            }
            Ok((data[..lb].to_vec(), lb * 8))
        }
    }
}

/// All candidates evaluated on one line (what `penalty_select` computes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineEval {
    /// N per algorithm (indexed by Comp Alg code; disabled algorithms get the line size).
    pub sizes: [usize; 4],
    /// P per algorithm (indexed by Comp Alg code; `u64::MAX` for disabled algorithms).
    pub penalties: [u64; 4],
    /// argmin P with the tie order.
    pub winner: Alg,
}

/// Evaluates every enabled candidate on `line` (Eq. 1).
pub fn evaluate(p: &AdaptiveParams, line: &[u8]) -> Result<LineEval, ModelError> {
    let k = p.k_values();
    let raw = line.len() * 8;
    let mut sizes = [raw; 4];
    let mut penalties = [u64::MAX; 4];
    for a in Alg::ALL {
        if p.enabled(a) {
            sizes[a.idx()] = size_bits(p, a, line)?;
            penalties[a.idx()] = sizes[a.idx()] as u64 + k[a.idx()];
        }
    }
    let winner = p
        .tie_order()
        .into_iter()
        .filter(|&a| p.enabled(a))
        .min_by_key(|&a| penalties[a.idx()])
        .unwrap_or(Alg::None);
    Ok(LineEval {
        sizes,
        penalties,
        winner,
    })
}

/// Fabric message type (§2.5; the discriminant is the 4-bit Type field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MsgKind {
    /// Remote read request (16 B, no payload).
    ReadReq = 0,
    /// Read response with a line (4 B header + payload).
    DataReady = 1,
    /// Remote write with a line (13 B header + payload).
    WriteReq = 2,
    /// Write acknowledgement (4 B, no payload).
    WriteAck = 3,
}

/// Bytes moved per bus cycle (160 Gb/s at 1 GHz).
pub const FLIT_BYTES: usize = 20;

impl MsgKind {
    /// Header size in bits (Fig. 4).
    pub fn header_bits(self) -> usize {
        match self {
            MsgKind::ReadReq => 128,
            MsgKind::DataReady => 32,
            MsgKind::WriteReq => 104,
            MsgKind::WriteAck => 32,
        }
    }

    /// Whether the message carries a (compressible) line.
    pub fn carries_payload(self) -> bool {
        matches!(self, MsgKind::DataReady | MsgKind::WriteReq)
    }

    /// Decodes the Type field.
    pub fn from_code(c: u8) -> Option<MsgKind> {
        match c {
            0 => Some(MsgKind::ReadReq),
            1 => Some(MsgKind::DataReady),
            2 => Some(MsgKind::WriteReq),
            3 => Some(MsgKind::WriteAck),
            _ => None,
        }
    }
}

/// Message size in bytes: header + `⌈payload_bits/8⌉` (payload ignored for messages without).
pub fn message_bytes(kind: MsgKind, payload_bits: usize) -> usize {
    let pay = if kind.carries_payload() {
        payload_bits.div_ceil(8)
    } else {
        0
    };
    kind.header_bits() / 8 + pay
}

/// Bus cycles a message of `bytes` occupies (`⌈bytes/20⌉`).
pub fn bus_cycles(bytes: usize) -> u64 {
    bytes.div_ceil(FLIT_BYTES) as u64
}

/// The header fields of one message (Fig. 4). Fields a type does not have are ignored on
/// encode and zero on decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Header {
    /// Message type.
    pub kind: Option<MsgKind>,
    /// Msg ID (requests) or Rsp ID (responses), 16 bits.
    pub id: u16,
    /// Physical address, 48 bits (Read Req, Write Req).
    pub addr: u64,
    /// Length field, 32 bits (Read Req, Write Req).
    pub length: u32,
    /// Comp Alg (Data Ready, Write Req).
    pub comp_alg: Option<Alg>,
}

/// Encodes a message: the Fig. 4 header, MSB-first in field order with reserved bits zero,
/// followed by the byte-aligned payload (`payload` is ignored for messages without one).
pub fn encode_message(h: &Header, payload: &[u8]) -> Result<Vec<u8>, ModelError> {
    let kind = h
        .kind
        .ok_or_else(|| ModelError::param("kind", "none", "a message type"))?;
    if h.addr >> 48 != 0 {
        return Err(ModelError::param(
            "addr",
            format!("{:#x}", h.addr),
            "48 bits",
        ));
    }
    let mut w = BitWriter::new();
    w.put(kind as u64, 4);
    w.put(h.id as u64, 16);
    let alg = h.comp_alg.unwrap_or(Alg::None).code() as u64;
    match kind {
        MsgKind::ReadReq => {
            w.put(h.addr, 48);
            w.put(h.length as u64, 32);
            w.put(0, 28);
        }
        MsgKind::DataReady => {
            w.put(alg, 4);
            w.put(0, 8);
        }
        MsgKind::WriteReq => {
            w.put(h.addr, 48);
            w.put(h.length as u64, 32);
            w.put(alg, 4);
        }
        MsgKind::WriteAck => w.put(0, 12),
    }
    let (mut out, n) = w.finish();
    debug_assert_eq!(n, kind.header_bits());
    if kind.carries_payload() {
        out.extend_from_slice(payload);
    }
    Ok(out)
}

/// Decodes one message from the start of `data`: the header and, for Data Ready / Write Req,
/// the line (decompressed with the decompressor named by Comp Alg). Returns the header, the
/// line (empty without payload) and the message length in bytes.
pub fn decode_message(
    p: &AdaptiveParams,
    data: &[u8],
) -> Result<(Header, Vec<u8>, usize), ModelError> {
    let mut r = BitReader::whole(data);
    let t = r.get(4, "message type")? as u8;
    let kind = MsgKind::from_code(t)
        .ok_or_else(|| ModelError::Corrupt(format!("reserved message type {t}")))?;
    let mut h = Header {
        kind: Some(kind),
        id: r.get(16, "message id")? as u16,
        ..Header::default()
    };
    let reserved = |r: &mut BitReader, n: u32| -> Result<(), ModelError> {
        let v = r.get(n, "reserved bits")?;
        if v != 0 {
            return Err(ModelError::Corrupt(format!(
                "non-zero reserved bits {v:#x}"
            )));
        }
        Ok(())
    };
    let mut alg_code = None;
    match kind {
        MsgKind::ReadReq => {
            h.addr = r.get(48, "address")?;
            h.length = r.get(32, "length")? as u32;
            reserved(&mut r, 28)?;
        }
        MsgKind::DataReady => {
            alg_code = Some(r.get(4, "comp alg")? as u8);
            reserved(&mut r, 8)?;
        }
        MsgKind::WriteReq => {
            h.addr = r.get(48, "address")?;
            h.length = r.get(32, "length")? as u32;
            alg_code = Some(r.get(4, "comp alg")? as u8);
        }
        MsgKind::WriteAck => reserved(&mut r, 12)?,
    }
    let hb = kind.header_bits() / 8;
    let Some(c) = alg_code else {
        return Ok((h, vec![], hb));
    };
    let alg =
        Alg::from_code(c).ok_or_else(|| ModelError::Corrupt(format!("reserved comp alg {c}")))?;
    h.comp_alg = Some(alg);
    let (line, used) = decompress_prefix(p, alg, &data[hb..])?;
    Ok((h, line, hb + used.div_ceil(8)))
}

/// One transaction of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Txn {
    /// Message type; only Data Ready and Write Req count for the controller (§2.4 item 1).
    pub kind: MsgKind,
    /// The line (empty for messages without payload).
    pub line: Vec<u8>,
}

impl Txn {
    /// A Data Ready carrying `line`.
    pub fn data_ready(line: Vec<u8>) -> Self {
        Txn {
            kind: MsgKind::DataReady,
            line,
        }
    }
}

/// Controller phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// All compressors run; the line is sent per [`SampleSend`].
    Sampling,
    /// Only the selected compressor runs.
    Running,
}

/// What one payload transaction did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnRecord {
    /// Index in the trace (all messages counted).
    pub trace_index: usize,
    /// Phase.
    pub phase: Phase,
    /// Algorithm the egress mux selects (the phase decision, or the sample's send choice).
    pub sel_alg: Alg,
    /// Comp Alg actually sent (`None` if `sel_alg` did not save space).
    pub comp_alg: Alg,
    /// Payload bits sent.
    pub payload_bits: usize,
    /// Message bytes (header + payload).
    pub msg_bytes: usize,
    /// All candidates on this line (sampling transactions only).
    pub eval: Option<LineEval>,
}

/// The decision that closes a sampling phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecisionRule {
    /// Exactly one candidate reached the threshold.
    Quorum,
    /// Several reached it; split by wins / summed P / latency.
    QuorumTie,
    /// None reached it; the [`NoQuorum`] rule applied.
    NoQuorum,
}

/// One sampling phase and its decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseRecord {
    /// Payload-transaction index of the first sample.
    pub start: usize,
    /// Winner of every sample.
    pub winners: Vec<Alg>,
    /// Wins per algorithm (indexed by Comp Alg code).
    pub votes: [u32; 4],
    /// Summed P per algorithm over the samples (`u64::MAX` for disabled ones).
    pub sum_penalty: [u64; 4],
    /// Selected algorithm for the running phase.
    pub decision: Alg,
    /// How it was selected.
    pub rule: DecisionRule,
}

/// Traffic totals (payload-carrying and other messages).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// Payload transactions.
    pub payload_txns: u64,
    /// Other messages (Read Req, Write ACK).
    pub other_txns: u64,
    /// Uncompressed payload bits (8·line_bytes per payload transaction).
    pub payload_bits_raw: u64,
    /// Payload bits sent.
    pub payload_bits_sent: u64,
    /// All message bytes without compression.
    pub msg_bytes_raw: u64,
    /// All message bytes as sent.
    pub msg_bytes_sent: u64,
    /// Bus cycles without compression.
    pub bus_cycles_raw: u64,
    /// Bus cycles as sent.
    pub bus_cycles_sent: u64,
}

impl Traffic {
    /// Payload compression ratio Σraw / Σsent (Table V's definition).
    pub fn payload_ratio(&self) -> f64 {
        self.payload_bits_raw as f64 / self.payload_bits_sent.max(1) as f64
    }

    /// Message bytes sent / without compression.
    pub fn traffic_fraction(&self) -> f64 {
        self.msg_bytes_sent as f64 / self.msg_bytes_raw.max(1) as f64
    }
}

/// Result of [`replay`].
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveReport {
    /// One record per payload transaction.
    pub txns: Vec<TxnRecord>,
    /// One record per completed sampling phase.
    pub phases: Vec<PhaseRecord>,
    /// Payload transactions per Comp Alg sent (indexed by code).
    pub histogram: [u64; 4],
    /// Traffic totals.
    pub traffic: Traffic,
    /// Compressor + decompressor energy in pJ (§3: P_C·L_C + P_D·L_D; sampling runs all
    /// enabled compressors; a decompressor runs only when Comp Alg ≠ 0).
    pub energy_pj: f64,
    /// Σ compression + decompression latency over payload transactions, in cycles
    /// (sampling pays the slowest enabled compressor).
    pub latency_cycles: u64,
}

impl AdaptiveReport {
    /// The `sel_alg` sequence over payload transactions (what the RTL must reproduce).
    pub fn sel_alg_sequence(&self) -> Vec<Alg> {
        self.txns.iter().map(|t| t.sel_alg).collect()
    }

    /// The phase decisions in order.
    pub fn decisions(&self) -> Vec<Alg> {
        self.phases.iter().map(|p| p.decision).collect()
    }
}

fn pick(p: &AdaptiveParams, cands: &[Alg], votes: &[u32; 4], sum: &[u64; 4]) -> Alg {
    let order = p.tie_order();
    let rank = |a: Alg| order.iter().position(|&o| o == a).unwrap_or(4);
    cands
        .iter()
        .copied()
        .min_by_key(|&a| {
            let sp = match p.vote_tie {
                VoteTie::SumPenalty => sum[a.idx()],
                VoteTie::LowerLatency => 0,
            };
            (std::cmp::Reverse(votes[a.idx()]), sp, rank(a))
        })
        .unwrap_or(Alg::None)
}

fn decide(p: &AdaptiveParams, votes: &[u32; 4], sum: &[u64; 4], prev: Alg) -> (Alg, DecisionRule) {
    let qualified: Vec<Alg> = Alg::ALL
        .into_iter()
        .filter(|&a| p.enabled(a) && votes[a.idx()] >= p.vote_threshold)
        .collect();
    match qualified.len() {
        1 => (qualified[0], DecisionRule::Quorum),
        n if n > 1 => (pick(p, &qualified, votes, sum), DecisionRule::QuorumTie),
        _ => {
            let a = match p.no_quorum {
                NoQuorum::Bypass => Alg::None,
                NoQuorum::KeepPrevious => prev,
                NoQuorum::Plurality => {
                    let all: Vec<Alg> = Alg::ALL.into_iter().filter(|&a| p.enabled(a)).collect();
                    pick(p, &all, votes, sum)
                }
            };
            (a, DecisionRule::NoQuorum)
        }
    }
}

/// Replays a trace through the adaptive controller (§2.4) and the message model (§2.5).
///
/// Only Data Ready and Write Req messages advance the controller; Read Req and Write ACK
/// are counted in the traffic totals only. A sampling phase that the trace ends inside makes
/// no decision (and has no [`PhaseRecord`]).
pub fn replay(p: &AdaptiveParams, trace: &[Txn]) -> Result<AdaptiveReport, ModelError> {
    p.validate()?;
    let lb = p.line_bytes();
    let raw_bits = lb * 8;
    let period = (p.sample_len + p.run_len) as usize;
    let mut rep = AdaptiveReport {
        txns: Vec::new(),
        phases: Vec::new(),
        histogram: [0; 4],
        traffic: Traffic::default(),
        energy_pj: 0.0,
        latency_cycles: 0,
    };
    let mut current = Alg::None;
    let mut winners = Vec::new();
    let mut votes = [0u32; 4];
    let mut sum = [0u64; 4];
    let max_comp = Alg::ALL
        .into_iter()
        .filter(|&a| a != Alg::None && p.enabled(a))
        .map(|a| p.cost(a).comp_cycles as u64)
        .max()
        .unwrap_or(0);
    for (ti, t) in trace.iter().enumerate() {
        let t_raw = message_bytes(t.kind, raw_bits);
        if !t.kind.carries_payload() {
            rep.traffic.other_txns += 1;
            rep.traffic.msg_bytes_raw += t_raw as u64;
            rep.traffic.msg_bytes_sent += t_raw as u64;
            rep.traffic.bus_cycles_raw += bus_cycles(t_raw);
            rep.traffic.bus_cycles_sent += bus_cycles(t_raw);
            continue;
        }
        if t.line.len() != lb {
            return Err(ModelError::BadLineLength {
                len: t.line.len(),
                expected: lb,
            });
        }
        let n = rep.txns.len();
        let pos = n % period;
        let sampling = pos < p.sample_len as usize;
        if pos == 0 {
            winners.clear();
            votes = [0; 4];
            sum = [0; 4];
        }
        let (phase, sel, eval) = if sampling {
            let e = evaluate(p, &t.line)?;
            winners.push(e.winner);
            votes[e.winner.idx()] += 1;
            for a in Alg::ALL {
                sum[a.idx()] = sum[a.idx()].saturating_add(e.penalties[a.idx()]);
            }
            let sel = match p.sample_send {
                SampleSend::Winner => e.winner,
                SampleSend::Current => current,
            };
            for a in Alg::ALL {
                if a != Alg::None && p.enabled(a) {
                    rep.energy_pj += p.cost(a).comp_pj();
                }
            }
            rep.latency_cycles += max_comp;
            (Phase::Sampling, sel, Some(e))
        } else {
            rep.energy_pj += p.cost(current).comp_pj();
            rep.latency_cycles += p.cost(current).comp_cycles as u64;
            (Phase::Running, current, None)
        };
        let n_bits = match &eval {
            Some(e) => e.sizes[sel.idx()],
            None => size_bits(p, sel, &t.line)?,
        };
        let comp_alg = if n_bits < raw_bits { sel } else { Alg::None };
        let payload_bits = if comp_alg == Alg::None {
            raw_bits
        } else {
            n_bits
        };
        rep.energy_pj += p.cost(comp_alg).decomp_pj();
        rep.latency_cycles += p.cost(comp_alg).decomp_cycles as u64;
        let mb = message_bytes(t.kind, payload_bits);
        rep.histogram[comp_alg.idx()] += 1;
        let tr = &mut rep.traffic;
        tr.payload_txns += 1;
        tr.payload_bits_raw += raw_bits as u64;
        tr.payload_bits_sent += payload_bits as u64;
        tr.msg_bytes_raw += t_raw as u64;
        tr.msg_bytes_sent += mb as u64;
        tr.bus_cycles_raw += bus_cycles(t_raw);
        tr.bus_cycles_sent += bus_cycles(mb);
        rep.txns.push(TxnRecord {
            trace_index: ti,
            phase,
            sel_alg: sel,
            comp_alg,
            payload_bits,
            msg_bytes: mb,
            eval,
        });
        if sampling && pos + 1 == p.sample_len as usize {
            let (decision, rule) = decide(p, &votes, &sum, current);
            current = decision;
            rep.phases.push(PhaseRecord {
                start: n + 1 - p.sample_len as usize,
                winners: winners.clone(),
                votes,
                sum_penalty: sum,
                decision,
                rule,
            });
        }
    }
    Ok(rep)
}

/// Replays a list of lines, all as Data Ready messages.
pub fn replay_lines(p: &AdaptiveParams, lines: &[Vec<u8>]) -> Result<AdaptiveReport, ModelError> {
    let trace: Vec<Txn> = lines.iter().cloned().map(Txn::data_ready).collect();
    replay(p, &trace)
}

/// Traffic of a static algorithm on every payload transaction (Fig. 5's configurations;
/// `Alg::None` is the uncompressed baseline).
pub fn static_traffic(p: &AdaptiveParams, alg: Alg, trace: &[Txn]) -> Result<Traffic, ModelError> {
    p.validate()?;
    let raw_bits = p.line_bytes() * 8;
    let mut tr = Traffic::default();
    for t in trace {
        let t_raw = message_bytes(t.kind, raw_bits);
        let sent = if t.kind.carries_payload() {
            let n = size_bits(p, alg, &t.line)?;
            tr.payload_txns += 1;
            tr.payload_bits_raw += raw_bits as u64;
            tr.payload_bits_sent += n as u64;
            message_bytes(t.kind, n)
        } else {
            tr.other_txns += 1;
            t_raw
        };
        tr.msg_bytes_raw += t_raw as u64;
        tr.msg_bytes_sent += sent as u64;
        tr.bus_cycles_raw += bus_cycles(t_raw);
        tr.bus_cycles_sent += bus_cycles(sent);
    }
    Ok(tr)
}

#[cfg(test)]
mod tests;
