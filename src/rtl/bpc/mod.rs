//! BPC compressor and decompressor generators for Buddy Compression's 128 B entries (spec
//! docs/FORMATS.md, Buddy §2.4 format, §7 items 2-3 interfaces), bit-exact with [`crate::model::bpc`].
//!
//! **Bus.** Entry ports hold byte i in bits `[8i+7:8i]` (word i in `[32i+31:32i]`). Stream
//! ports hold the model's stream bytes the same way: stream bit s (MSB-first, s = 0 is bit 7
//! of stream byte 0) is bus bit `8·(s/8) + 7 − s%8`; bits after the stream are 0. Inside,
//! streams are vectors in stream order (bit s at index s), so a token written MSB-first is
//! its value bit-reversed, and concatenation is `a | b << len(a)`.
//!
//! **Compressor** (`bpc_comp_*`, II = 1, one entry per cycle, 6 register stages at 32-bit
//! symbols and 7 at 64-bit):
//! 1. `n − 1` exact deltas (`S + 1`-bit subtractors, carry-select);
//! 2. transpose (wiring), `DBX = DBP ^ DBP>>1`, the plane classifiers (zero, all ones,
//!    `DBP == 0`, one or two adjacent ones by an (any, many) tree, position by one-hot OR
//!    trees) and the base classifier;
//! 3. zero-run segmentation (a Kogge-Stone scan of (reset, count) pairs gives each zero
//!    plane its run length downwards), every token's code bits and length;
//! 4. and on: radix-4 merges: each segment is shifted by an LSB-first log shifter and the
//!    four of a group are ORed; bits at 768 and above are dropped (such a stream is stored
//!    raw). The offsets (prefix sums of the lengths within a group) and the group lengths
//!    are carry-save sums of at most four registered lengths, formed one stage ahead of the
//!    shift they steer; an offset that steers more than 64 shifter outputs is registered as
//!    one copy per 32 outputs (bounded fan-out);
//! 5. the last merge stage also forms the metadata code ([`SizeCode::of`]) and selects the
//!    entry itself when the stream is longer than 768 bits (`out_raw`, size 128 B), by raw
//!    flags decided a stage earlier from the registered total (one copy per 32 bits).
//!
//! Outputs: `m_stream_o` (the stream, zero-padded, or the raw entry), `m_nbits_o` (the whole
//! stream's length, also when raw: at most 1,089 / 1,105 bits), `m_size_o`, `m_raw_o`.
//!
//! **Decompressor** (`bpc_dec_*`): the base is decoded as the entry is accepted; then a loop
//! decodes `k` tokens per cycle from a window at the stream position (an LSB-first shifter
//! from the registered position, then `k` chained one-hot start steps over the window, the
//! fields picked by AND-OR on each start), applies them to `prevDBP` in order and writes the
//! planes they cover; three output stages add the base and the deltas (a Kogge-Stone prefix
//! sum, the raw entry passes through with the adds gated off). Zero (code 0x0) and raw
//! (0x4) entries take one loop cycle. `m_err_o` (with an all-zero entry) flags a reserved
//! code, a token that crosses the code's size (8, 32, 64 or 96 B), a zero run past plane 0
//! and a position outside the plane; bits after the stream are not inspected
//! ([`crate::model::bpc::decompress_within`]).

mod arith;
mod comp;
mod decomp;
mod merge;
mod planes;
mod serial;
mod sums;

pub use comp::compressor;

/// `bpc_dec`: BPC stream and metadata code in, entry and error flag out; the window form
/// (`dec_tokens` 2-8 tokens per cycle) or the serial one (`dec_tokens: 1`, `dec_lanes` lanes).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_stream_i[1023:0]`/`s_size_i[3:0]` → `m_valid_o`/
/// `m_ready_i`/`m_blk_o[1023:0]`/`m_err_o`.
pub fn decompressor(p: &BpcRtlParams) -> Result<std::sync::Arc<crate::hdl::Module>, HdlError> {
    if p.dec_tokens == 1 {
        serial::decompressor(p)
    } else {
        decomp::decompressor(p)
    }
}

/// Shifter output bits (or raw-select bits) steered by one register copy of their select.
const LANES_PER_COPY: u32 = 32;

use crate::hdl::{Expr, HdlError, ModuleBuilder};
use crate::model::bpc::{BpcParams, BpcPrefixes};
use crate::model::LineParams;
use serde::{Deserialize, Serialize};

/// Spec reference in headers.
pub const SPEC: &str = "docs/FORMATS.md, Buddy";

/// Entry bits on the ports of the default (Buddy's 128 B entries).
pub const ENTRY_BITS: u32 = 1024;

/// Parameters of the BPC units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BpcRtlParams {
    /// Entry bytes: 128 (Buddy's memory entry, default), 64 or 32 (sectors scale to a
    /// quarter of the entry).
    pub entry_bytes: usize,
    /// Symbol width: 32 (BPC), 64 (the wide-symbol variant), or 16 and 8, narrow symbols
    /// for smaller proofs (17 and 9 bit-planes instead of 33).
    pub sym_bits: u32,
    /// The 5-bit prefix assignment.
    pub prefixes: BpcPrefixes,
    /// Tokens the decompressor decodes per cycle (1-8). 1 is the serial form: lanes that
    /// each take one token per cycle ([`BpcRtlParams::dec_lanes`]).
    pub dec_tokens: u32,
    /// Register stages of the decompressor's output sums (1-4): 1 (default) gives the
    /// 11-cycle worst latency at 4 tokens per cycle; 2 costs a cycle and halves the stage
    /// (for libraries where the one-stage sum is the worst path); 3 registers the carry-save
    /// pairs twice and adds alone in the last stage; 4 also splits the adds over a register.
    pub dec_sum_stages: u32,
    /// Serial decoder lanes fed with alternate entries (1-8, with `dec_tokens: 1` only).
    pub dec_lanes: u32,
}

impl Default for BpcRtlParams {
    fn default() -> Self {
        BpcRtlParams {
            entry_bytes: 128,
            sym_bits: 32,
            prefixes: BpcPrefixes::Kim2016,
            dec_tokens: 4,
            dec_sum_stages: 1,
            dec_lanes: 1,
        }
    }
}

impl BpcRtlParams {
    /// The model's parameters.
    pub fn model(&self) -> BpcParams {
        BpcParams {
            line_bytes: self.entry_bytes,
            sym_bits: self.sym_bits,
            prefixes: self.prefixes,
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if ![32, 64, 128].contains(&self.entry_bytes) {
            return Err(format!(
                "bpc.entry_bytes = {} must be 32, 64 or 128",
                self.entry_bytes
            ));
        }
        if ![8, 16, 32, 64].contains(&self.sym_bits) {
            return Err(format!(
                "bpc.sym_bits = {} must be 8, 16, 32 or 64",
                self.sym_bits
            ));
        }
        if !(1..=8).contains(&self.dec_tokens) {
            return Err(format!(
                "bpc.dec_tokens = {} must be in 1..=8",
                self.dec_tokens
            ));
        }
        if !(1..=4).contains(&self.dec_sum_stages) {
            return Err(format!(
                "bpc.dec_sum_stages = {} must be in 1..=4",
                self.dec_sum_stages
            ));
        }
        if !(1..=8).contains(&self.dec_lanes) {
            return Err(format!(
                "bpc.dec_lanes = {} must be in 1..=8",
                self.dec_lanes
            ));
        }
        if self.dec_lanes > 1 && self.dec_tokens != 1 {
            return Err(format!(
                "bpc.dec_lanes = {} needs bpc.dec_tokens = 1 (lanes are serial decoders)",
                self.dec_lanes
            ));
        }
        self.model().validate().map_err(|e| e.to_string())
    }

    /// Entry bits.
    pub fn entry_bits(&self) -> u32 {
        8 * self.entry_bytes as u32
    }

    /// Sector bits (a quarter of the entry: 32 B at 128 B).
    pub fn sector_bits(&self) -> u32 {
        self.entry_bits() / 4
    }

    /// Streams longer than this are stored raw (three sectors).
    pub fn raw_above_bits(&self) -> u32 {
        3 * self.sector_bits()
    }

    /// The stream bits a metadata code allows (`None`: zero, raw or reserved).
    pub fn code_limit_bits(&self, code: u8) -> Option<u32> {
        match code {
            5 => Some(64),
            1..=3 => Some(code as u32 * self.sector_bits()),
            _ => None,
        }
    }

    /// The metadata code of an entry: 0x0 all-zero, 0x5 at most 64 bits, 0x1-0x3 sectors,
    /// 0x4 raw (at 128 B the model's `SizeCode::of`).
    pub fn code_of(&self, zero: bool, bits: usize) -> u8 {
        let sec = self.sector_bits() as usize;
        if zero {
            0
        } else if bits <= 64 {
            5
        } else if bits <= sec {
            1
        } else if bits <= 2 * sec {
            2
        } else if bits <= 3 * sec {
            3
        } else {
            4
        }
    }

    /// One-line description for reports.
    pub fn describe(&self) -> String {
        format!(
            "{} B entries, {}-bit symbols, prefixes {}, decoder {} tokens/cycle{}{}",
            self.entry_bytes,
            self.sym_bits,
            self.prefixes.name(),
            self.dec_tokens,
            if self.dec_lanes > 1 {
                format!(" x {} lanes", self.dec_lanes)
            } else {
                String::new()
            },
            if self.dec_sum_stages > 1 {
                format!(", {}-stage sums", self.dec_sum_stages)
            } else {
                String::new()
            }
        )
    }

    pub(super) fn tag(&self) -> String {
        format!(
            "{}s{}{}",
            if self.entry_bytes == 128 {
                String::new()
            } else {
                format!("e{}_", self.entry_bytes)
            },
            self.sym_bits,
            match self.prefixes {
                BpcPrefixes::Kim2016 => "",
                BpcPrefixes::Alternate => "_alt",
            }
        )
    }
}

pub(super) fn err(module: &str, msg: String) -> HdlError {
    HdlError {
        module: module.into(),
        problems: vec![msg],
    }
}

/// Widths of one symbol configuration.
#[derive(Clone, Copy)]
pub(super) struct Geo {
    /// Symbol bits.
    pub(super) s: u32,
    /// Symbols.
    pub(super) n: u32,
    /// Plane bits (`n − 1`).
    pub(super) b: u32,
    /// Planes (`s + 1`).
    pub(super) p: u32,
    /// Position field bits.
    pub(super) posb: u32,
    /// Run field bits.
    pub(super) runb: u32,
    /// Widest plane token.
    pub(super) tw: u32,
}

impl Geo {
    pub(super) fn of(q: &BpcParams) -> Geo {
        let b = q.plane_bits();
        let posb = q.pos_bits();
        let runb = q.run_bits();
        Geo {
            s: q.sym_bits,
            n: q.symbols() as u32,
            b,
            p: q.planes() as u32,
            posb,
            runb,
            tw: (1 + b).max(5 + posb).max(2 + runb),
        }
    }

    /// Lengths of the plane token classes: raw, run, single zero, 5-bit, positional.
    pub(super) fn lens(&self) -> [u32; 5] {
        [1 + self.b, 2 + self.runb, 3, 5, 5 + self.posb]
    }
}

/// Bus bit of stream bit `s`.
pub(super) fn bus_bit(s: u32) -> u32 {
    8 * (s / 8) + 7 - s % 8
}

/// Stream-order vector of a bus.
pub(super) fn stream_of_bus(bus: &Expr) -> Expr {
    Expr::cat_lsb(
        &(0..bus.width())
            .map(|s| bus.bit(bus_bit(s)))
            .collect::<Vec<_>>(),
    )
}

/// Bus of a stream-order vector (`width` bits, zero after the vector).
pub(super) fn bus_of_stream(st: &Expr, width: u32) -> Expr {
    let bits: Vec<Expr> = (0..width)
        .map(|i| {
            let s = bus_bit(i); // the permutation is its own inverse
            if s < st.width() {
                st.bit(s)
            } else {
                Expr::zero(1)
            }
        })
        .collect();
    Expr::cat_lsb(&bits)
}

/// `v` written MSB-first into stream order (bit-reversed).
pub(super) fn msb_first(v: &Expr) -> Expr {
    let w = v.width();
    Expr::cat_lsb(&(0..w).map(|i| v.bit(w - 1 - i)).collect::<Vec<_>>())
}

/// A stream-order literal of `bits` written MSB-first (`"01"` is bit 0 = 0, bit 1 = 1).
pub(super) fn code(bits: &str) -> Expr {
    Expr::cat_lsb(
        &bits
            .chars()
            .map(|c| Expr::lit(1, (c == '1') as u64))
            .collect::<Vec<_>>(),
    )
}

pub(super) fn header(m: &mut ModuleBuilder, gen: &str, p: &BpcRtlParams, spec: &str) {
    m.provenance(
        &format!("bpc::{gen}"),
        &p.describe(),
        &format!("{SPEC} {spec}"),
    );
    m.header("Bus: byte i at [8i+7:8i]; stream bit s (MSB-first) at bus bit 8(s/8)+7-s%8");
}

/// The metadata code of a stream ([`BpcRtlParams::code_of`]).
pub(super) fn size_code(p: &BpcRtlParams, zero: &Expr, nbits: &Expr) -> Expr {
    let w = nbits.width();
    let sec = p.sector_bits() as u64;
    let le = |v: u64| nbits.le(&Expr::lit(w, v));
    let c = le(64).select(
        &Expr::lit(4, 5),
        &le(sec).select(
            &Expr::lit(4, 1),
            &le(2 * sec).select(
                &Expr::lit(4, 2),
                &le(3 * sec).select(&Expr::lit(4, 3), &Expr::lit(4, 4)),
            ),
        ),
    );
    zero.select(&Expr::lit(4, 0), &c)
}

pub(super) fn clog2u(v: u32) -> u32 {
    crate::hdl::clog2(v as u64).max(1)
}
