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

use crate::hdl::blocks::{any_of, mux_tree, onehot_index, or_tree, PrefixTopology};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder, Pipeline, Policy};
use crate::model::bpc::{BpcParams, BpcPrefixes, PlaneCode};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    /// Symbol width (32 or 64).
    pub sym_bits: u32,
    /// The 5-bit prefix assignment.
    pub prefixes: BpcPrefixes,
    /// Tokens the decompressor decodes per cycle (1-8).
    pub dec_tokens: u32,
    /// Register stages of the decompressor's output sums (1 or 2): 1 (default) gives the
    /// 11-cycle worst latency at 4 tokens per cycle; 2 costs a cycle and halves the stage
    /// (for libraries where the one-stage sum is the worst path).
    pub dec_sum_stages: u32,
}

impl Default for BpcRtlParams {
    fn default() -> Self {
        BpcRtlParams {
            entry_bytes: 128,
            sym_bits: 32,
            prefixes: BpcPrefixes::Kim2016,
            dec_tokens: 4,
            dec_sum_stages: 1,
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
        if ![32, 64].contains(&self.sym_bits) {
            return Err(format!("bpc.sym_bits = {} must be 32 or 64", self.sym_bits));
        }
        if !(1..=8).contains(&self.dec_tokens) {
            return Err(format!(
                "bpc.dec_tokens = {} must be in 1..=8",
                self.dec_tokens
            ));
        }
        if !(1..=2).contains(&self.dec_sum_stages) {
            return Err(format!(
                "bpc.dec_sum_stages = {} must be 1 or 2",
                self.dec_sum_stages
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
            "{} B entries, {}-bit symbols, prefixes {}, decoder {} tokens/cycle{}",
            self.entry_bytes,
            self.sym_bits,
            match self.prefixes {
                BpcPrefixes::Kim2016 => "kim2016",
                BpcPrefixes::Alternate => "alternate",
            },
            self.dec_tokens,
            if self.dec_sum_stages == 2 {
                ", 2-stage sums"
            } else {
                ""
            }
        )
    }

    fn tag(&self) -> String {
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

fn err(module: &str, msg: String) -> HdlError {
    HdlError {
        module: module.into(),
        problems: vec![msg],
    }
}

/// Widths of one symbol configuration.
#[derive(Clone, Copy)]
struct Geo {
    /// Symbol bits.
    s: u32,
    /// Symbols.
    n: u32,
    /// Plane bits (`n − 1`).
    b: u32,
    /// Planes (`s + 1`).
    p: u32,
    /// Position field bits.
    posb: u32,
    /// Run field bits.
    runb: u32,
    /// Widest plane token.
    tw: u32,
}

impl Geo {
    fn of(q: &BpcParams) -> Geo {
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
    fn lens(&self) -> [u32; 5] {
        [1 + self.b, 2 + self.runb, 3, 5, 5 + self.posb]
    }
}

/// Bus bit of stream bit `s`.
fn bus_bit(s: u32) -> u32 {
    8 * (s / 8) + 7 - s % 8
}

/// Stream-order vector of a bus.
fn stream_of_bus(bus: &Expr) -> Expr {
    Expr::cat_lsb(
        &(0..bus.width())
            .map(|s| bus.bit(bus_bit(s)))
            .collect::<Vec<_>>(),
    )
}

/// Bus of a stream-order vector (`width` bits, zero after the vector).
fn bus_of_stream(st: &Expr, width: u32) -> Expr {
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
fn msb_first(v: &Expr) -> Expr {
    let w = v.width();
    Expr::cat_lsb(&(0..w).map(|i| v.bit(w - 1 - i)).collect::<Vec<_>>())
}

/// A stream-order literal of `bits` written MSB-first (`"01"` is bit 0 = 0, bit 1 = 1).
fn code(bits: &str) -> Expr {
    Expr::cat_lsb(
        &bits
            .chars()
            .map(|c| Expr::lit(1, (c == '1') as u64))
            .collect::<Vec<_>>(),
    )
}

/// `v` (stream order) shifted up by `amts`, LSB first, growing to at most `cap` bits. The
/// amount comes as equal copies: with more than one, output bits `[32c, 32c + 32)` of every
/// level are selected by copy `c` (the last copy takes the rest), so no copy drives more than
/// 32 muxes per level.
fn shl_grow(m: &mut ModuleBuilder, name: &str, v: &Expr, amts: &[Expr], cap: u32) -> Expr {
    let mut cur = v.clone();
    for k in 0..amts[0].width() {
        let sh = 1u32 << k;
        let w = (cur.width() + sh).min(cap);
        let up = Expr::cat(&[cur.clone(), Expr::zero(sh)]).resize(w);
        let keep = cur.zext(w);
        let next = if amts.len() == 1 {
            amts[0].bit(k).select(&up, &keep)
        } else {
            let parts: Vec<Expr> = (0..w.div_ceil(LANES_PER_COPY))
                .map(|c| {
                    let lo = c * LANES_PER_COPY;
                    let n = LANES_PER_COPY.min(w - lo);
                    let a = &amts[(c as usize).min(amts.len() - 1)];
                    a.bit(k).select(&up.slice(lo, n), &keep.slice(lo, n))
                })
                .collect();
            Expr::cat_lsb(&parts)
        };
        cur = m.wire(&format!("{}_l{}", name, k), &next);
    }
    cur
}

/// `a − b` exact, for `w`-bit signed operands: a `w + 1`-bit result, carry-select above 16
/// bits.
fn sub_exact(m: &mut ModuleBuilder, name: &str, a: &Expr, b: &Expr) -> Expr {
    let w = a.width() + 1;
    let sa = Expr::cat(&[a.bit(a.width() - 1), a.clone()]);
    let sb = Expr::cat(&[b.bit(b.width() - 1), b.clone()]);
    let sa = m.wire(&format!("{name}_a"), &sa);
    let nb = m.wire(&format!("{name}_nb"), &!&sb);
    if w <= 16 {
        return m.wire(name, &(&sa + &nb + Expr::lit(w, 1)));
    }
    let lo = m.wire(
        &format!("{name}_lo"),
        &(sa.slice(0, 16).zext(17) + nb.slice(0, 16).zext(17) + Expr::lit(17, 1)),
    );
    let (ah, bh) = (sa.slice(16, w - 16), nb.slice(16, w - 16));
    let h0 = m.wire(&format!("{name}_h0"), &(&ah + &bh));
    let h1 = m.wire(&format!("{name}_h1"), &(&ah + &bh + Expr::lit(w - 16, 1)));
    let hi = lo.bit(16).select(&h1, &h0);
    m.wire(name, &Expr::cat(&[hi, lo.slice(0, 16)]))
}

/// `a + b` modulo `2^w` as 8-bit carry-select blocks: each block adds for both carries in,
/// and a mux chain on the block carries picks the sums (ABC ripples a plain 32-bit add).
fn add_cs(m: &mut ModuleBuilder, name: &str, a: &Expr, b: &Expr) -> Expr {
    let w = a.width();
    let mut parts = Vec::new();
    let mut carry: Option<Expr> = None;
    let mut lo = 0;
    let mut i = 0;
    while lo < w {
        let bw = 8.min(w - lo);
        let (ab, bb) = (a.slice(lo, bw).zext(bw + 1), b.slice(lo, bw).zext(bw + 1));
        let s0 = m.wire(&format!("{name}_b{i}c0"), &(&ab + &bb));
        match &carry {
            None => {
                parts.push(s0.slice(0, bw));
                carry = Some(s0.bit(bw));
            }
            Some(c) => {
                let s1 = m.wire(
                    &format!("{name}_b{i}c1"),
                    &(&ab + &bb + Expr::lit(bw + 1, 1)),
                );
                let sel = m.wire(&format!("{name}_b{i}"), &c.select(&s1, &s0));
                parts.push(sel.slice(0, bw));
                carry = Some(sel.bit(bw));
            }
        }
        lo += bw;
        i += 1;
    }
    if let Some(c) = carry {
        m.unused(&c);
    }
    parts.reverse();
    m.wire(name, &Expr::cat(&parts))
}

/// (any, more than one) of a vector, as a balanced tree.
fn any_many(v: &Expr) -> (Expr, Expr) {
    let mut cur: Vec<(Expr, Expr)> = (0..v.width()).map(|i| (v.bit(i), Expr::zero(1))).collect();
    while cur.len() > 1 {
        cur = cur
            .chunks(2)
            .map(|p| {
                if p.len() == 2 {
                    let (a, b) = (&p[0], &p[1]);
                    (&a.0 | &b.0, &a.1 | &b.1 | (&a.0 & &b.0))
                } else {
                    p[0].clone()
                }
            })
            .collect();
    }
    cur.pop().unwrap_or((Expr::zero(1), Expr::zero(1)))
}

fn header(m: &mut ModuleBuilder, gen: &str, p: &BpcRtlParams, spec: &str) {
    m.header(format!("Generator: hwzip::rtl::bpc::{gen}"));
    m.header(format!("Parameters: {}", p.describe()));
    m.header(format!("Spec: {SPEC} {spec}"));
    m.header("Bus: byte i at [8i+7:8i]; stream bit s (MSB-first) at bus bit 8(s/8)+7-s%8");
}

/// The metadata code of a stream ([`BpcRtlParams::code_of`]).
fn size_code(p: &BpcRtlParams, zero: &Expr, nbits: &Expr) -> Expr {
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

/// One segment of the merge tree: stream-order bits, a length, and its offset within the
/// group of four it merges into next (the sum of its elder siblings' lengths), as equal
/// copies: registered offsets that steer a wide shifter are replicated, one copy per
/// [`LANES_PER_COPY`] output bits (`docs/TOOLCHAIN.md`, bounded fan-out).
struct Seg {
    bits: Expr,
    len: Expr,
    off: Vec<Expr>,
}

/// Shifter output bits (or raw-select bits) steered by one register copy of their select.
const LANES_PER_COPY: u32 = 32;

/// `bpc_comp`: entry in, BPC stream, length, metadata code and raw flag out.
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_blk_i[1023:0]` → `m_valid_o`/`m_ready_i`/
/// `m_stream_o[1023:0]`/`m_nbits_o[10:0]`/`m_size_o[3:0]`/`m_raw_o`.
pub fn compressor(p: &BpcRtlParams) -> Result<Arc<Module>, HdlError> {
    let name = format!("bpc_comp_{}", p.tag());
    p.validate().map_err(|e| err(&name, e))?;
    let q = p.model();
    let g = Geo::of(&q);
    let nbw = 11u32;
    let mut m = ModuleBuilder::new(&name);
    header(
        &mut m,
        "compressor",
        p,
        "§2.4 (deltas, DBP/DBX, codes, priority), §2.2 (size code), §7 item 2 (II = 1)",
    );
    let eb = p.entry_bits();
    let cap = p.raw_above_bits();
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("blk", eb)]));
    let out = stream::output_port(&mut m, "m");
    let blk = s_in.field("blk");

    // One advance for every stage: the pipeline moves when the output register is free.
    let mut pl = Pipeline::new(&mut m, "pipe", Policy::Global, &s_in.valid);

    // ---- Stage 1: deltas ----
    m.comment("Stage 1: n-1 exact (S+1)-bit deltas d[i] = w[i] - w[i-1] (signed)");
    let w: Vec<Expr> = blk.lanes(g.s);
    let d: Vec<Expr> = (1..g.n as usize)
        .map(|i| sub_exact(&mut m, &format!("d{i}"), &w[i], &w[i - 1]))
        .collect();
    let st = pl.stage(&mut m, "deltas");
    let d_q = st.reg(&mut m, "d_q", &Expr::cat_lsb(&d));
    let base1 = st.reg(&mut m, "base1_q", &w[0]);
    let blk1 = st.reg(&mut m, "blk1_q", &blk);
    let d1: Vec<Expr> = d_q.lanes(g.s + 1);

    // ---- Stage 2: planes and classifiers ----
    m.comment("Stage 2: transpose, DBX = DBP ^ DBP[j+1], plane and base classifiers");
    let dbp: Vec<Expr> = (0..g.p)
        .map(|j| {
            let bits: Vec<Expr> = d1.iter().map(|x| x.bit(j)).collect();
            m.wire(&format!("dbp{j}"), &Expr::cat_lsb(&bits))
        })
        .collect();
    let top = g.p as usize - 1;
    let dbx: Vec<Expr> = (0..g.p as usize)
        .map(|j| {
            let x = if j == top {
                dbp[j].clone()
            } else {
                &dbp[j] ^ &dbp[j + 1]
            };
            m.wire(&format!("dbx{j}"), &x)
        })
        .collect();
    // Per plane: [zero, all ones, dbp zero, two ones, one one] (priority applied in stage 3).
    let mut cls2 = Vec::new();
    let mut pos2 = Vec::new();
    for j in 0..g.p as usize {
        let x = &dbx[j];
        let (any, many) = any_many(x);
        let zero = !&any;
        let ones = x.all();
        let dz = !dbp[j].any();
        let one = &any & &!&many;
        let y = m.wire(
            &format!("adj{j}"),
            &(x.slice(0, g.b - 1) & x.slice(1, g.b - 1)),
        );
        let (yany, ymany) = any_many(&y);
        let yy = Expr::cat(&[y.clone(), Expr::zero(1)]) | y.zext(g.b);
        let two = &yany & &!&ymany & !(x ^ &yy).any();
        let xb: Vec<Expr> = (0..g.b).map(|i| x.bit(i)).collect();
        let yb: Vec<Expr> = (0..g.b - 1).map(|i| y.bit(i)).collect();
        let p1 = onehot_index(&xb, g.posb);
        let p2 = onehot_index(&yb, g.posb);
        let pos = two.select(&p2, &p1);
        let c = m.wire(
            &format!("cls{j}"),
            &Expr::cat_lsb(&[zero, ones, dz, two, one]),
        );
        cls2.push(c);
        pos2.push(m.wire(&format!("pos{j}"), &pos));
    }
    let bs = &base1;
    let fits = |bits: u32| {
        let t = bs.slice(bits - 1, g.s - bits + 1);
        t.all() | !t.any()
    };
    // Base: [zero, fits 4, fits 8, fits 16] (priority in stage 3).
    let bcls = m.wire(
        "base_cls",
        &Expr::cat_lsb(&[!bs.any(), fits(4), fits(8), fits(16)]),
    );
    let st = pl.stage(&mut m, "planes");
    let dbx_q = st.reg(&mut m, "dbx_q", &Expr::cat_lsb(&dbx));
    let cls_q = st.reg(&mut m, "cls_q", &Expr::cat_lsb(&cls2));
    let pos_q = st.reg(&mut m, "pos_q", &Expr::cat_lsb(&pos2));
    let base2 = st.reg(&mut m, "base2_q", &base1);
    let bcls_q = st.reg(&mut m, "bcls_q", &bcls);
    let blk2 = st.reg(&mut m, "blk2_q", &blk1);

    // ---- Stage 3: zero runs, tokens ----
    m.comment("Stage 3: zero-run lengths (scan of (reset, count) pairs), token bits and lengths");
    let dx: Vec<Expr> = dbx_q.lanes(g.b);
    let cl: Vec<Expr> = cls_q.lanes(5);
    let ps: Vec<Expr> = pos_q.lanes(g.posb);
    let cw = g.runb + 1;
    // cnt[j]: the zero planes from plane j downwards, by a Kogge-Stone scan of (reset,
    // count) pairs (a non-zero plane resets). At level L, node i (i >= 2^L) takes node
    // i - 2^L: when node i's 2^L planes hold no reset its count is exactly 2^L, and the
    // lower node's count is at most 2^L, so their sum is wiring (bit L + 1 = lower bit L,
    // bit L = its inverse, the bits below unchanged) and each level is one mux.
    let np = g.p as usize;
    let mut rst: Vec<Expr> = (0..np).map(|j| !cl[j].bit(0)).collect();
    let mut cnt: Vec<Expr> = (0..np).map(|j| cl[j].bit(0).zext(cw)).collect();
    let mut lvl = 0u32;
    while (1usize << lvl) < np {
        let d = 1usize << lvl;
        let (r0, c0) = (rst.clone(), cnt.clone());
        for i in d..np {
            let lo = &c0[i - d];
            let sum = (0..cw)
                .map(|b| match b.cmp(&lvl) {
                    std::cmp::Ordering::Less => lo.bit(b),
                    std::cmp::Ordering::Equal => !lo.bit(lvl),
                    std::cmp::Ordering::Greater if b == lvl + 1 => lo.bit(lvl),
                    std::cmp::Ordering::Greater => Expr::zero(1),
                })
                .collect::<Vec<_>>();
            let c = r0[i].select(&c0[i], &Expr::cat_lsb(&sum));
            cnt[i] = m.wire(&format!("zcnt{}_{i}", lvl + 1), &c);
            rst[i] = m.wire(&format!("zrst{}_{i}", lvl + 1), &(&r0[i] | &r0[i - d]));
        }
        lvl += 1;
    }
    // The reset flags' last level is not needed.
    for r in rst.iter().skip(np / 2) {
        m.unused(r);
    }
    // Counts read are at most 31 (`runb` bits); the two top planes' counts are not needed.
    for (i, c) in cnt.iter().enumerate() {
        if i + 2 >= np {
            m.unused(c);
        } else {
            m.unused(&c.slice(g.runb, cw - g.runb));
        }
    }
    let tw = g.tw;
    let lw = clog2u(tw + 1);
    let mut segs: Vec<Seg> = Vec::new();
    // The base token.
    {
        let b = &base2;
        let c = |k: u32| bcls_q.bit(k);
        let zero = c(0);
        let f4 = &c(1) & &!&zero;
        let f8 = &c(2) & &!c(1);
        let f16 = &c(3) & &!c(2);
        let full = !c(3);
        let bw = 1 + g.s;
        let lay = |pre: &str, vb: u32| {
            let mut v = code(pre);
            if vb > 0 {
                v = Expr::cat(&[msb_first(&b.slice(0, vb)), v]);
            }
            v.zext(bw)
        };
        let bits = or_tree(
            vec![
                f4.gate(&lay("001", 4)),
                f8.gate(&lay("010", 8)),
                f16.gate(&lay("011", 16)),
                full.gate(&lay("1", g.s)),
            ],
            bw,
        );
        let lbw = clog2u(bw + 1);
        let len = or_tree(
            vec![
                zero.gate(&Expr::lit(lbw, 3)),
                f4.gate(&Expr::lit(lbw, 7)),
                f8.gate(&Expr::lit(lbw, 11)),
                f16.gate(&Expr::lit(lbw, 19)),
                full.gate(&Expr::lit(lbw, bw as u64)),
            ],
            lbw,
        );
        let bits = m.wire("tok_base", &bits);
        let len = m.wire("len_base", &len);
        segs.push(Seg {
            bits,
            len,
            off: vec![Expr::zero(1)],
        });
    }
    let pre = |c: PlaneCode| {
        let v = q.prefixes.prefix(c).unwrap_or(0);
        code(&format!("{v:05b}"))
    };
    let [len_raw, len_run, _, _, len_pos] = g.lens();
    for j in (0..g.p as usize).rev() {
        let c = |k: u32| cl[j].bit(k);
        let z = c(0);
        let start_z = if j == top {
            z.clone()
        } else {
            &z & &!cl[j + 1].bit(0)
        };
        // A run of two or more: this plane and the one below are zero (no scan needed).
        let long = if j == 0 {
            Expr::zero(1)
        } else {
            &z & &cl[j - 1].bit(0)
        };
        let long = m.wire(&format!("zlong{j}"), &long);
        // The run field is the run's length minus 2: in a long run starting at plane j,
        // the zero planes counted up to plane j - 2 (no subtractor).
        let runf = if j >= 2 {
            cnt[j - 2].slice(0, g.runb)
        } else {
            Expr::zero(g.runb)
        };
        let runf = m.wire(&format!("zrunf{j}"), &runf);
        let ones = &c(1) & &!&z;
        let dz = &c(2) & &!&z & &!c(1);
        let nz_hi = !&z & &!c(1) & &!c(2);
        let two = &c(3) & &nz_hi;
        let one = &c(4) & &!c(3) & &nz_hi;
        let raw = &nz_hi & &!c(3) & &!c(4);
        let pos = msb_first(&ps[j]);
        let lay = |v: Expr| v.zext(tw);
        let terms = vec![
            (&start_z & &long).gate(&lay(Expr::cat(&[msb_first(&runf), code("01")]))),
            (&start_z & &!&long).gate(&lay(code("001"))),
            ones.gate(&lay(pre(PlaneCode::AllOnes))),
            dz.gate(&lay(pre(PlaneCode::DbpZero))),
            two.gate(&lay(Expr::cat(&[pos.clone(), pre(PlaneCode::TwoOnes)]))),
            one.gate(&lay(Expr::cat(&[pos, pre(PlaneCode::OneOne)]))),
            raw.gate(&lay(Expr::cat(&[msb_first(&dx[j]), code("1")]))),
        ];
        let bits = m.wire(&format!("tok{j}"), &or_tree(terms, tw));
        let len = or_tree(
            vec![
                (&start_z & &long).gate(&Expr::lit(lw, len_run as u64)),
                (&start_z & &!&long).gate(&Expr::lit(lw, 3)),
                (&ones | &dz).gate(&Expr::lit(lw, 5)),
                (&two | &one).gate(&Expr::lit(lw, len_pos as u64)),
                raw.gate(&Expr::lit(lw, len_raw as u64)),
            ],
            lw,
        );
        let len = m.wire(&format!("len{j}"), &len);
        segs.push(Seg {
            bits,
            len,
            off: vec![Expr::zero(1)],
        });
    }
    with_offsets(&mut m, "t", &mut segs);
    let mut glens = group_sums(&mut m, "t", &segs);
    let zero_blk = m.wire(
        "all_zero",
        &(bcls_q.bit(0) & Expr::cat_lsb(&cl.iter().map(|c| c.bit(0)).collect::<Vec<_>>()).all()),
    );
    // Stage-3 registers.
    let st = pl.stage(&mut m, "tokens");
    let mut segs = reg_segs(&mut m, "t", segs, &st.load(), cap);
    let mut glen_q = reg_glens(&mut m, "t", &glens, &st.load());
    let mut zero_q = st.reg(&mut m, "zero3_q", &zero_blk);
    let mut blk_q = st.reg(&mut m, "blk3_q", &blk2);

    // ---- Stages 4..: radix-4 merges ----
    let mut raw_q: Option<Vec<Expr>> = None;
    let mut level = 1;
    loop {
        m.comment(format!(
            "Stage {}: radix-4 merge level {level} (shifts by registered offsets)",
            3 + level
        ));
        let groups: Vec<Vec<Seg>> = chunk_segs(segs, 4);
        let mut merged = Vec::new();
        for (gi, (grp, len)) in groups.into_iter().zip(&glen_q).enumerate() {
            merged.push(merge_group(
                &mut m,
                &format!("m{level}_{gi}"),
                grp,
                len,
                cap,
            ));
        }
        if merged.len() == 1 {
            let sg = merged.pop().expect("one segment");
            // ---- Output: size code, raw select ----
            // The whole stream's length is the last group's sum, registered a stage ago.
            let nbits = fit_len(&mut m, &sg.len, nbw);
            let nbits = m.wire("nbits", &nbits);
            let size = m.wire("size", &size_code(p, &zero_q, &nbits));
            let raw = m.wire("raw", &size.eq_lit(4));
            let stream_bus = bus_of_stream(&sg.bits, eb);
            // The raw select steers every output bit: from the copies registered with the
            // total, one per 32 bits; without them (no earlier total), from `raw`.
            let sels = raw_q.clone().unwrap_or_else(|| vec![raw.clone()]);
            let gw = eb / sels.len() as u32;
            let parts: Vec<Expr> = sels
                .iter()
                .enumerate()
                .map(|(c, r)| {
                    let lo = gw * c as u32;
                    r.select(&blk_q.slice(lo, gw), &stream_bus.slice(lo, gw))
                })
                .collect();
            let data = m.wire("stream_or_raw", &Expr::cat_lsb(&parts));
            let st = pl.stage(&mut m, "out");
            let ostream = st.reg(&mut m, "out_stream_q", &data);
            let onb = st.reg(&mut m, "out_nbits_q", &nbits);
            let osz = st.reg(&mut m, "out_size_q", &size);
            let oraw = st.reg(&mut m, "out_raw_q", &raw);
            let fields = [
                ("stream", ostream),
                ("nbits", onb),
                ("size", osz),
                ("raw", oraw),
            ];
            pl.finish_ports(&mut m, s_in, out, &fields);
            break;
        }
        let nm = format!("g{level}");
        with_offsets(&mut m, &nm, &mut merged);
        glens = group_sums(&mut m, &nm, &merged);
        let st = pl.stage(&mut m, &format!("merge{level}"));
        if glens.len() == 1 {
            // The next stage is the last: its group's sum is the whole stream's length, and
            // the raw decision is taken now, as copies for the output select.
            let t = fit_len(&mut m, &glens[0], nbw);
            let raw_d = m.wire("raw_d", &size_code(p, &zero_q, &t).eq_lit(4));
            let reps = m.reg_replicas("raw_q", 1, None, (eb / LANES_PER_COPY) as usize);
            for r in &reps {
                m.next(r, &raw_d, Some(&st.load()));
            }
            raw_q = Some(reps.iter().map(|r| r.q()).collect());
        }
        segs = reg_segs(&mut m, &nm, merged, &st.load(), cap);
        glen_q = reg_glens(&mut m, &nm, &glens, &st.load());
        zero_q = st.reg(&mut m, &format!("zero{}_q", 3 + level), &zero_q);
        blk_q = st.reg(&mut m, &format!("blk{}_q", 3 + level), &blk_q);
        level += 1;
    }
    m.finish()
}

/// Equal-width terms reduced to at most two with the same sum (mod 2^width) by layers of
/// carry-save (3:2) adders; the width is kept.
fn csa_reduce(m: &mut ModuleBuilder, name: &str, v: &[Expr]) -> Vec<Expr> {
    let w = v.first().map(|x| x.width()).unwrap_or(1);
    let mut cur = v.to_vec();
    let mut lvl = 0;
    while cur.len() > 2 {
        let mut nxt = Vec::new();
        for (i, c) in cur.chunks(3).enumerate() {
            if c.len() == 3 {
                let sum = m.wire(&format!("{name}_l{lvl}_{i}s"), &(&c[0] ^ &c[1] ^ &c[2]));
                let maj = (&c[0] & &c[1]) | (&c[0] & &c[2]) | (&c[1] & &c[2]);
                let maj = m.wire(&format!("{name}_l{lvl}_{i}m"), &maj);
                m.unused(&maj.bit(w - 1));
                nxt.push(sum);
                nxt.push(Expr::cat(&[maj.slice(0, w - 1), Expr::zero(1)]));
            } else {
                nxt.extend(c.iter().cloned());
            }
        }
        cur = nxt;
        lvl += 1;
    }
    cur
}

/// The sum of equal-width terms by a carry-save (3:2) tree and one final add; the width
/// is kept (the caller sizes it for the sum).
fn csa_sum(m: &mut ModuleBuilder, name: &str, v: &[Expr]) -> Expr {
    let w = v.first().map(|x| x.width()).unwrap_or(1);
    let cur = csa_reduce(m, name, v);
    match cur.len() {
        0 => Expr::zero(w),
        1 => cur[0].clone(),
        _ => &cur[0] + &cur[1],
    }
}

/// Sets each segment's offset within its group of four: the sum of the lengths before it
/// (named `<prefix><i>_off`), by one carry-save sum of at most three lengths.
fn with_offsets(m: &mut ModuleBuilder, prefix: &str, segs: &mut [Seg]) {
    let lw = segs.iter().map(|s| s.len.width()).max().unwrap_or(1) + 2;
    for i in 0..segs.len() {
        let g = i / 4 * 4;
        segs[i].off = if i == g {
            vec![Expr::zero(1)]
        } else {
            let terms: Vec<Expr> = segs[g..i].iter().map(|s| s.len.zext(lw)).collect();
            let name = format!("{prefix}{i}_off");
            let sum = csa_sum(m, &format!("{name}_csa"), &terms);
            vec![m.wire(&name, &sum)]
        };
    }
}

/// The length of each group of four segments (the next level's segment lengths), by a
/// carry-save sum; registered with the segments ([`reg_glens`]), so the next stage's offsets
/// and sums start from registers and no stage adds more than four lengths.
fn group_sums(m: &mut ModuleBuilder, prefix: &str, segs: &[Seg]) -> Vec<Expr> {
    let lw = segs.iter().map(|s| s.len.width()).max().unwrap_or(1) + 2;
    segs.chunks(4)
        .enumerate()
        .map(|(h, grp)| {
            let terms: Vec<Expr> = grp.iter().map(|s| s.len.zext(lw)).collect();
            let sum = csa_sum(m, &format!("{prefix}_gsum{h}_csa"), &terms);
            m.wire(&format!("{prefix}_gsum{h}"), &sum)
        })
        .collect()
}

/// Registers group lengths (`<prefix>_glen<h>_q`; the last level's single one is
/// `total_q`, the whole stream's length).
fn reg_glens(m: &mut ModuleBuilder, prefix: &str, glens: &[Expr], en: &Expr) -> Vec<Expr> {
    glens
        .iter()
        .enumerate()
        .map(|(h, g)| {
            let name = if glens.len() == 1 {
                "total_q".to_string()
            } else {
                format!("{prefix}_glen{h}_q")
            };
            m.reg_next(&name, None, g, Some(en))
        })
        .collect()
}

/// `len` resized to `w` bits (its value always fits; the bits above are marked unused).
fn fit_len(m: &mut ModuleBuilder, len: &Expr, w: u32) -> Expr {
    if len.width() > w {
        m.unused(&len.slice(w, len.width() - w));
    }
    len.resize(w)
}

fn clog2u(v: u32) -> u32 {
    crate::hdl::clog2(v as u64).max(1)
}

fn chunk_segs(segs: Vec<Seg>, k: usize) -> Vec<Vec<Seg>> {
    let mut out: Vec<Vec<Seg>> = Vec::new();
    for (i, s) in segs.into_iter().enumerate() {
        if i % k == 0 {
            out.push(Vec::new());
        }
        if let Some(last) = out.last_mut() {
            last.push(s);
        }
    }
    out
}

/// Registers segments (`<prefix><i>_bits_q`, `<prefix><i>_off_q`). An offset that steers
/// more than 64 shifter outputs (its shift grows to its group's width, at most `cap`) is
/// registered as one copy per [`LANES_PER_COPY`] outputs: copy c (`<prefix><i>_off_c<c>_q`)
/// holds only the amount bits of the shifter levels that reach output bit 32c.
fn reg_segs(m: &mut ModuleBuilder, prefix: &str, segs: Vec<Seg>, en: &Expr, cap: u32) -> Vec<Seg> {
    let widths: Vec<u32> = segs.iter().map(|s| s.bits.width()).collect();
    segs.into_iter()
        .enumerate()
        .map(|(i, s)| {
            let off = if i % 4 == 0 {
                vec![Expr::zero(1)]
            } else {
                let g = i / 4 * 4;
                let total = widths[g..(g + 4).min(widths.len())]
                    .iter()
                    .sum::<u32>()
                    .min(cap);
                reg_offset(m, &format!("{prefix}{i}"), &s.off[0], widths[i], total, en)
            };
            Seg {
                bits: m.reg_next(&format!("{prefix}{i}_bits_q"), None, &s.bits, Some(en)),
                // The lengths travel as group sums (`reg_glens`).
                len: Expr::zero(1),
                off,
            }
        })
        .collect()
}

/// Registers the offset `off` of a `bits`-wide segment whose shift grows to `total` bits
/// ([`shl_grow`]): one register, or copies as [`reg_segs`] describes, each returned
/// full-width (the amount bits a copy does not hold read as 0 and are never selected).
fn reg_offset(
    m: &mut ModuleBuilder,
    name: &str,
    off: &Expr,
    bits: u32,
    total: u32,
    en: &Expr,
) -> Vec<Expr> {
    let aw = off.width();
    // Output width after each shifter level.
    let mut lvl_w = Vec::new();
    let mut cur = bits;
    for k in 0..aw {
        cur = (cur + (1 << k)).min(total);
        lvl_w.push(cur);
    }
    if cur <= 2 * LANES_PER_COPY {
        return vec![m.reg_next(&format!("{name}_off_q"), None, off, Some(en))];
    }
    (0..cur.div_ceil(LANES_PER_COPY))
        .map(|c| {
            let lo = lvl_w
                .iter()
                .position(|w| *w > c * LANES_PER_COPY)
                .expect("the last level reaches every copy") as u32;
            let r = m.reg_kept(&format!("{name}_off_c{c}_q"), aw - lo, None);
            m.next(&r, &off.slice(lo, aw - lo), Some(en));
            if lo == 0 {
                r.q()
            } else {
                Expr::cat(&[r.q(), Expr::zero(lo)])
            }
        })
        .collect()
}

/// Concatenates a group: segment i shifted up by its registered offset (the lengths
/// before it), ORed; bits at `cap` (the raw threshold) and above dropped. `len` is the
/// group's length (registered by the stage before).
fn merge_group(m: &mut ModuleBuilder, name: &str, grp: Vec<Seg>, len: &Expr, cap: u32) -> Seg {
    let total_w: u32 = grp.iter().map(|s| s.bits.width()).sum::<u32>().min(cap);
    let mut terms = Vec::new();
    for (i, s) in grp.iter().enumerate() {
        let sh = if i == 0 {
            s.bits.resize(total_w)
        } else {
            shl_grow(m, &format!("{name}_s{i}"), &s.bits, &s.off, total_w)
        };
        terms.push(sh.zext(total_w));
    }
    let bits = m.wire(&format!("{name}_bits"), &or_tree(terms, total_w));
    Seg {
        bits,
        len: len.clone(),
        off: vec![Expr::zero(1)],
    }
}

/// Kogge-Stone prefix-sum `levels` over equal-width lanes (mod 2^width; all levels give
/// the inclusive prefix sums) in one combinational stage: the nodes stay in carry-save form
/// (two terms; a node adding two such pairs is a 4:2 compressor, `ps<level>_<lane>`), then
/// one carry-select add per lane (`<add>_<lane>`).
fn prefix_sums_cs(
    m: &mut ModuleBuilder,
    add: &str,
    lanes: &[Expr],
    levels: std::ops::Range<usize>,
) -> Vec<Expr> {
    let mut cur: Vec<Vec<Expr>> = lanes.iter().map(|x| vec![x.clone()]).collect();
    let sched = PrefixTopology::KoggeStone.schedule(lanes.len());
    for (li, lvl) in sched.iter().enumerate().take(levels.end).skip(levels.start) {
        let mut nxt = cur.clone();
        for &(t, s) in lvl {
            let terms: Vec<Expr> = cur[t].iter().chain(&cur[s]).cloned().collect();
            nxt[t] = csa_reduce(m, &format!("ps{}_{t}", li + 1), &terms);
        }
        cur = nxt;
    }
    cur.iter()
        .enumerate()
        .map(|(i, t)| match t.as_slice() {
            [a, b] => add_cs(m, &format!("{add}_{i}"), a, b),
            _ => t[0].clone(),
        })
        .collect()
}

/// Window positions where one of `k` tokens can start.
fn npos_of(k: usize, g: Geo) -> usize {
    ((k - 1) as u32 * g.tw + 1) as usize
}

/// `bpc_dec`: BPC stream and metadata code in, entry and error flag out.
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_stream_i[1023:0]`/`s_size_i[3:0]` → `m_valid_o`/
/// `m_ready_i`/`m_blk_o[1023:0]`/`m_err_o`.
pub fn decompressor(p: &BpcRtlParams) -> Result<Arc<Module>, HdlError> {
    let name = format!(
        "bpc_dec_{}_k{}{}",
        p.tag(),
        p.dec_tokens,
        if p.dec_sum_stages == 2 { "_o2" } else { "" }
    );
    p.validate().map_err(|e| err(&name, e))?;
    let q = p.model();
    let g = Geo::of(&q);
    let k = p.dec_tokens as usize;
    let mut m = ModuleBuilder::new(&name);
    header(
        &mut m,
        "decompressor",
        p,
        "§2.4 (decoder, prevDBP), §2.2 (size codes), §7 item 3",
    );
    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[("stream", p.entry_bits()), ("size", 4)]),
    );
    let out = stream::output_port(&mut m, "m");
    let sbus = s_in.field("stream");
    let size = s_in.field("size");

    // Stages: the token loop (holds its entry until the last token), el1, [el2,] out.
    let mut pl = Pipeline::new(&mut m, "pipe", Policy::Bubble, &s_in.valid);

    // ---- Accept: mode, limit, base ----
    m.comment("Accept: size code to mode and limit; the base token decoded at stream bit 0");
    let st = m.wire("st_in", &stream_of_bus(&sbus));
    let is_zero = m.wire("code_zero", &size.eq_lit(0));
    let is_raw = m.wire("code_raw", &size.eq_lit(4));
    let lim = |c: u64, bits: u64| size.eq_lit(c).gate(&Expr::lit(10, bits));
    let limit = m.wire(
        "limit_in",
        &or_tree(
            [5u8, 1, 2, 3]
                .iter()
                .map(|c| lim(*c as u64, p.code_limit_bits(*c).unwrap_or(0) as u64))
                .collect(),
            10,
        ),
    );
    let bad = m.wire("code_bad", &size.ge(&Expr::lit(4, 6)));
    let b0 = st.bit(0);
    // Base code: `1` + S bits, else `0` + 2 bits (MSB first) selecting 0 / 4 / 8 / 16 bits.
    let bsel = Expr::cat(&[st.bit(1), st.bit(2)]);
    let val = |w: u32| {
        let v = msb_first(&st.slice(3, w));
        Expr::cat(&[v.bit(w - 1).repeat(g.s - w), v])
    };
    let full_v = msb_first(&st.slice(1, g.s));
    let base = b0.select(
        &full_v,
        &mux_tree(&bsel, &[Expr::zero(g.s), val(4), val(8), val(16)]),
    );
    let base = m.wire("base_in", &base);
    let lits = |v: &[u64]| v.iter().map(|x| Expr::lit(10, *x)).collect::<Vec<_>>();
    let blen = b0.select(
        &Expr::lit(10, 1 + g.s as u64),
        &mux_tree(&bsel, &lits(&[3, 7, 11, 19])),
    );
    let blen = m.wire("base_len", &blen);
    let bpc_in = m.wire("code_bpc", &!(&is_zero | &is_raw | &bad));
    let base_over = m.wire("base_over", &(&bpc_in & &blen.gt(&limit)));

    // ---- Loop registers ----
    let lp = pl.stage(&mut m, "loop");
    let busy = lp.valid();
    let take = lp.load();
    let raw_q = m.reg_next("raw_q", None, &is_raw, Some(&take));
    let zero_q = m.reg_next("zmode_q", None, &is_zero, Some(&take));
    let bpc_q = m.reg_next("bmode_q", None, &bpc_in, Some(&take));
    let base_q = m.reg_next("base_q", None, &base, Some(&take));
    // The stream from the next token on (a raw entry: its low 768 bits, the rest in hi_q).
    let srw = p.raw_above_bits();
    let sr = m.reg("sr_q", srw, None);
    let hi = m.reg_next(
        "hi_q",
        None,
        &st.slice(srw, p.entry_bits() - srw),
        Some(&take),
    );
    let room = m.reg("room_q", 10, None);
    let left = m.reg("left_q", clog2u(g.p + 1), None);
    let prev = m.reg("prev_q", g.b, None);
    let errq = m.reg("err_q", 1, None);
    let file: Vec<_> = (0..g.s)
        .map(|j| m.reg(&format!("dbp{j}_q"), g.b, None))
        .collect();
    let lwid = left.width();

    // ---- Loop: k tokens per cycle ----
    m.comment(format!(
        "Loop: window = sr_q low bits, {k} chained one-hot token starts, fields by AND-OR"
    ));
    let lens = g.lens();
    let span = k as u32 * g.tw; // k widest tokens
    let ww = span + 5;
    // The window: the low bits of the stream register (aligned at the next token).
    let win = m.wire("win", &sr.q().slice(0, ww));
    // The bits past the last token's fields (the window is sized for 5-bit lookahead).
    let used = (npos_of(k, g) as u32 - 1 + g.tw).max(npos_of(k, g) as u32 + 4);
    if used < ww {
        m.unused(&win.slice(used, ww - used));
    }
    // Per window position x: the class of a token starting there, one-hot
    // [raw, run, zero, all ones, dbp zero, two ones, one one].
    let npos = npos_of(k, g);
    // Positions where one of the first k tokens can start (sums of i token lengths).
    let mut need = vec![false; npos];
    let mut r: std::collections::BTreeSet<usize> = [0].into();
    for _ in 0..k {
        for &x in &r {
            if x < npos {
                need[x] = true;
            }
        }
        r = r
            .iter()
            .flat_map(|x| lens.iter().map(move |l| x + *l as usize))
            .collect();
    }
    let cls_at: Vec<Option<Expr>> = (0..npos as u32)
        .map(|x| {
            if !need[x as usize] {
                return None;
            }
            let b = |i: u32| win.bit(x + i);
            let n0 = !b(0);
            let run = &n0 & &b(1);
            let z1 = &n0 & &!b(1) & b(2);
            let pre = &n0 & &!b(1) & &!b(2);
            let sel = |c: PlaneCode| {
                let v = q.prefixes.prefix(c).unwrap_or(0);
                // MSB-first: stream bit 3 is prefix bit 1, bit 4 prefix bit 0.
                let m1 = if v & 2 != 0 { b(3) } else { !b(3) };
                let m0 = if v & 1 != 0 { b(4) } else { !b(4) };
                &pre & &m1 & m0
            };
            let v = Expr::cat_lsb(&[
                b(0),
                run,
                z1,
                sel(PlaneCode::AllOnes),
                sel(PlaneCode::DbpZero),
                sel(PlaneCode::TwoOnes),
                sel(PlaneCode::OneOne),
            ]);
            Some(m.wire(&format!("cls_at{x}"), &v))
        })
        .collect();
    let cls_of = |x: usize| cls_at[x].clone().unwrap_or_else(|| Expr::zero(7));
    let tok_len = |c: usize| -> usize {
        (match c {
            0 => lens[0],
            1 => lens[1],
            2 => lens[2],
            3 | 4 => lens[3],
            _ => lens[4],
        }) as usize
    };
    // starts[i]: one-hot window position of token i (token 0 at 0); `None` where no chain
    // of i tokens can end.
    let mut starts: Vec<Vec<Option<Expr>>> = vec![vec![Some(Expr::ones(1))]];
    for i in 0..k {
        let cur = starts[i].clone();
        let dom = cur.len() + g.tw as usize;
        let nxt: Vec<Option<Expr>> = (0..dom)
            .map(|y| {
                let mut t = Vec::new();
                for (x, sx) in cur.iter().enumerate() {
                    let Some(sx) = sx else { continue };
                    for c in 0..7 {
                        if x + tok_len(c) == y {
                            t.push(sx & &cls_of(x).bit(c as u32));
                        }
                    }
                }
                (!t.is_empty()).then(|| m.wire(&format!("start{}_{y}", i + 1), &any_of(&t)))
            })
            .collect();
        starts.push(nxt);
    }
    let live = |v: &[Option<Expr>]| -> Vec<(usize, Expr)> {
        v.iter()
            .enumerate()
            .filter_map(|(x, e)| e.clone().map(|e| (x, e)))
            .collect()
    };
    let pick = |m: &mut ModuleBuilder, nm: &str, s: &[(usize, Expr)], off: u32, w: u32| -> Expr {
        let terms: Vec<Expr> = s
            .iter()
            .map(|(x, sx)| sx.gate(&win.slice(*x as u32 + off, w)))
            .collect();
        m.wire(nm, &or_tree(terms, w))
    };
    // Overrun: a token ending at window position y > room.
    let ends: std::collections::BTreeSet<usize> = starts[1..]
        .iter()
        .flat_map(|v| live(v).into_iter().map(|(y, _)| y))
        .collect();
    let over_at: Vec<Expr> = (0..=span as usize)
        .map(|y| {
            if y == 0 || !ends.contains(&y) {
                Expr::zero(1)
            } else {
                m.wire(&format!("over{y}"), &room.q().lt(&Expr::lit(10, y as u64)))
            }
        })
        .collect();
    let mask = Expr::ones(g.b);
    let mut lefts = vec![left.q()];
    let mut prevs = vec![prev.q()];
    let mut errs = Vec::new();
    let mut vals = Vec::new();
    let mut ok = m.wire("ok0", &(&bpc_q & &!errq.q()));
    for i in 0..k {
        let s = &live(&starts[i]);
        let cls = {
            let terms: Vec<Expr> = s.iter().map(|(x, sx)| sx.gate(&cls_of(*x))).collect();
            m.wire(&format!("t{i}_cls"), &or_tree(terms, 7))
        };
        let rawf = pick(&mut m, &format!("t{i}_rawf"), s, 1, g.b);
        let runf = pick(&mut m, &format!("t{i}_runf"), s, 2, g.runb);
        let posf = pick(&mut m, &format!("t{i}_posf"), s, 5, g.posb);
        let valid = m.wire(
            &format!("t{i}_valid"),
            &(&ok & &lefts[i].ne(&Expr::zero(lwid))),
        );
        let run = cls.bit(1);
        let cnt = run.select(
            &(msb_first(&runf).zext(lwid) + Expr::lit(lwid, 2)),
            &Expr::lit(lwid, 1),
        );
        let cnt = m.wire(&format!("t{i}_cnt"), &cnt);
        let run_past = &run & &cnt.gt(&lefts[i]);
        let pv = msb_first(&posf);
        let pos_bad = (cls.bit(6) & pv.ge(&Expr::lit(g.posb, g.b as u64)))
            | (cls.bit(5) & pv.ge(&Expr::lit(g.posb, g.b as u64 - 1)));
        let over = any_of(
            &live(&starts[i + 1])
                .iter()
                .map(|(y, e)| e & &over_at[*y])
                .collect::<Vec<_>>(),
        );
        let e = m.wire(
            &format!("t{i}_err"),
            &(&valid & &(run_past | pos_bad | over)),
        );
        let hot: Vec<Expr> = (0..g.b).map(|b| pv.eq_lit(b as u64)).collect();
        let one_v = Expr::cat_lsb(&hot);
        let two_v = Expr::cat_lsb(
            &(0..g.b as usize)
                .map(|b| {
                    if b == 0 {
                        hot[0].clone()
                    } else {
                        &hot[b] | &hot[b - 1]
                    }
                })
                .collect::<Vec<_>>(),
        );
        let pr = prevs[i].clone();
        let dbpv = or_tree(
            vec![
                cls.bit(0).gate(&(&pr ^ &msb_first(&rawf))),
                (cls.bit(1) | cls.bit(2)).gate(&pr),
                cls.bit(3).gate(&(&pr ^ &mask)),
                cls.bit(5).gate(&(&pr ^ &two_v)),
                cls.bit(6).gate(&(&pr ^ &one_v)),
            ],
            g.b,
        );
        let dbpv = m.wire(&format!("t{i}_dbp"), &dbpv);
        m.unused(&cls.bit(4)); // DBP == 0: the plane is 0
        let nl = valid.select(&(&lefts[i] - &cnt), &lefts[i]);
        lefts.push(m.wire(&format!("t{i}_left"), &nl));
        prevs.push(m.wire(&format!("t{i}_prev"), &valid.select(&dbpv, &pr)));
        if i + 1 < k {
            ok = m.wire(&format!("ok{}", i + 1), &(&ok & &!&e));
        }
        errs.push(e);
        vals.push(dbpv);
    }
    let any_err = m.wire("loop_err", &any_of(&errs));
    let fin = m.wire(
        "loop_fin",
        &(!&bpc_q | errq.q() | &any_err | lefts[k].eq(&Expr::zero(lwid))),
    );
    pl.hold(&mut m, &lp, &fin);
    let step = m.wire("step", &(&busy & &!&fin));
    let upd = m.wire("upd", &(&take | &step));
    // Consumed bits: the end of the k-th token (all k were valid when the loop goes on).
    let last = live(&starts[k]);
    let cons = or_tree(
        last.iter()
            .map(|(y, e)| e.gate(&Expr::lit(10, *y as u64)))
            .collect(),
        10,
    );
    let cons = m.wire("consumed", &cons);
    let room_in = m.wire("room_in", &(&limit - &blen));
    // Accept: the stream after the base (5 lengths); raw: unshifted.
    let low = st.slice(0, srw);
    let after = |l: u32| Expr::cat(&[Expr::zero(l), low.slice(l, srw - l)]);
    let bl: Vec<u32> = vec![3, 7, 11, 19, 1 + g.s];
    let sel_b: Vec<Expr> = vec![
        !&b0 & !st.bit(1) & !st.bit(2),
        !&b0 & !st.bit(1) & st.bit(2),
        !&b0 & st.bit(1) & !st.bit(2),
        !&b0 & st.bit(1) & st.bit(2),
        b0.clone(),
    ];
    let sr_in = is_raw.select(
        &low,
        &or_tree(
            bl.iter()
                .zip(&sel_b)
                .map(|(l, c)| c.gate(&after(*l)))
                .collect(),
            srw,
        ),
    );
    let sr_in = m.wire("sr_in", &sr_in);
    // Loop: shift by the k tokens' length, a one-hot AND-OR over the reachable sums.
    // As whole-vector terms (`st ? sr >> y : 0`), which Verilator compiles as wide words.
    let shifted = or_tree(
        last.iter()
            .map(|(y, e)| {
                let y = *y as u32;
                let v = if y >= srw {
                    Expr::zero(srw)
                } else {
                    Expr::cat(&[Expr::zero(y), sr.q().slice(y, srw - y)])
                };
                e.gate(&v)
            })
            .collect(),
        srw,
    );
    let shifted = m.wire("sr_shift", &shifted);
    m.next(&sr, &take.select(&sr_in, &shifted), Some(&upd));
    m.next(
        &room,
        &take.select(&room_in, &(room.q() - &cons)),
        Some(&upd),
    );
    m.next(
        &left,
        &take.select(&Expr::lit(lwid, g.p as u64), &lefts[k]),
        Some(&upd),
    );
    m.next(&prev, &take.select(&Expr::zero(g.b), &prevs[k]), Some(&upd));
    m.next(
        &errq,
        &take.select(&(&bad | &base_over), &(errq.q() | &any_err)),
        Some(&upd),
    );
    // Plane writes: token i covers planes [left_{i+1}, left_i).
    let mut file_d = Vec::new();
    for (j, f) in file.iter().enumerate() {
        let jj = Expr::lit(lwid, j as u64);
        let cov: Vec<Expr> = (0..k)
            .map(|i| jj.lt(&lefts[i]) & jj.ge(&lefts[i + 1]))
            .collect();
        let wv = or_tree(cov.iter().zip(&vals).map(|(c, v)| c.gate(v)).collect(), g.b);
        let we = m.wire(&format!("we{j}"), &(&busy & any_of(&cov)));
        let nd = m.wire(&format!("dbp{j}_n"), &we.select(&wv, &f.q()));
        m.next(f, &nd, None);
        file_d.push(nd);
    }

    // ---- Output: w[i] = base + d[1] + ... + d[i] ----
    m.comment(
        "Output: the planes' next state transposed to deltas (el1); one stage of carry-save \
         Kogge-Stone sums, a carry-select add per word",
    );
    let mut el = vec![base_q.clone()];
    el.extend(
        (0..g.n - 1).map(|kk| Expr::cat_lsb(&file_d.iter().map(|f| f.bit(kk)).collect::<Vec<_>>())),
    );
    // A raw entry enters as its own deltas (word 0, then w[i] - w[i-1]), so the same sums
    // restore it.
    let raw_st = Expr::cat(&[hi.clone(), sr.q()]);
    let rw = bus_of_stream(&raw_st, p.entry_bits()).lanes(g.s);
    let mut rel = vec![rw[0].clone()];
    for i in 1..rw.len() {
        rel.push(m.wire(&format!("rawd{i}"), &(&rw[i] - &rw[i - 1])));
    }
    let el_in = raw_q.select(&Expr::cat_lsb(&rel), &Expr::cat_lsb(&el));
    let st = pl.stage(&mut m, "el1");
    let e1 = st.reg(&mut m, "el1_q", &el_in);
    let mut errv = st.reg(&mut m, "err1_q", &(errq.q() | &any_err));
    let mut kill = st.reg(&mut m, "kill1_q", &zero_q);
    let nl = PrefixTopology::KoggeStone.schedule(g.n as usize).len();
    let mut lanes = e1.lanes(g.s);
    let mut first = 0;
    if p.dec_sum_stages == 2 {
        // Levels [0, nl/2) and their add before el2_q, the rest after.
        let part = prefix_sums_cs(&mut m, "psa", &lanes, 0..nl / 2);
        let st = pl.stage(&mut m, "el2");
        let e2 = st.reg(&mut m, "el2_q", &Expr::cat_lsb(&part));
        errv = st.reg(&mut m, "err2_q", &errv);
        kill = st.reg(&mut m, "kill2_q", &kill);
        lanes = e2.lanes(g.s);
        first = nl / 2;
    }
    let words = prefix_sums_cs(&mut m, "ps", &lanes, first..nl);
    let res = (!(&errv | &kill)).gate(&Expr::cat_lsb(&words));
    let st = pl.stage(&mut m, "out");
    let oblk = st.reg(&mut m, "out_blk_q", &res);
    let oerr = st.reg(&mut m, "out_err_q", &errv);
    pl.finish_ports(&mut m, s_in, out, &[("blk", oblk), ("err", oerr)]);
    m.finish()
}
