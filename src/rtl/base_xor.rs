//! Base+XOR Transfer generators (HPCA'18; docs/FORMATS.md, Base+XOR §2, §3, §6).
//!
//! Parameters are fixed at generation time (there is no metadata on the link: the stored data
//! depends on the scheme, FORMATS §2.5).
//!
//! **Vector convention.** Every sector-wide port carries the little-endian sector image:
//! word W\[k\] (the k-th 32-bit beat, bytes 4k..4k+3) sits at bits `[32k+31:32k]`, so W\[0\]
//! (the left-most element, the base) is at the **LSB** end and sector byte j is bits
//! `[8j+7:8j]` — the same convention as the ZVC units and the Verilator word arrays. The spec's
//! `{W0,…,W7}` (W0 at the MSB end, §6) is the same data with the word order reversed; "left"
//! is a property of the unit index, not of a bit position (see `docs/FORMATS.md`, Base+XOR).
//! DBI flags: beat k's flag l (group l = bits `[G·l+G−1:G·l]` of W\[k\]) is bit
//! `k·(32/G) + l` of the flag vector, as in [`crate::model::dbi`].
//!
//! Every scheme is built from the golden model's unit/partner description
//! ([`BaseXorParams::partners`], [`BaseXorParams::unit_bits`]): units of `unit_bits` bits,
//! each with at most one partner of lower index.
//!
//! Modules (FORMATS §6):
//! * `zdr_enc_word_*` / `zdr_dec_word_*`: one ZDR chunk (§2.2);
//! * `bx_nbyte_enc_*` / `bx_nbyte_dec_*`, `bx_univ_enc_*` / `bx_univ_dec_*`: combinational
//!   sector transforms (§2.1, §2.3). Encoders are one XOR (or one ZDR encode) deep. Decoders:
//!   without ZDR a log-depth prefix-XOR network (N-byte adjacent: `hdl::blocks::prefix`,
//!   ⌈log2(T/N)⌉ levels with the default Kogge-Stone topology; Universal: a log-depth XOR tree,
//!   ⌈log2(S+1)⌉ levels) or the paper's serial structure (`dec_prefix: ripple`: T/N − 1 / S
//!   levels); with ZDR a chain of ZDR decodes (N-byte: T/N − 1; Universal `serial`: S) or,
//!   for Universal, the carry-select decoder ([`DecStyle::Speculative`]);
//! * `dbi_dc_enc_g*` / `dbi_dc_dec_g*` and the lane wrappers `dbi_beat_enc_g*` /
//!   `dbi_beat_dec_g*` (§2.4);
//! * the units: `bxt_enc_*` (write path), `bxt_dec_*` (read path), `bxt_ser_*` / `bxt_deser_*`
//!   (sector ↔ beats of `{dq[31:0], dbi}`), and the test-only `bxt_loopback_*`.

use crate::hdl::blocks::{or_tree, popcount, prefix, PrefixTopology};
// Stream payload layouts; `Layout` in this file is the pin layout of a sector.
use crate::hdl::layout::Layout as Fields;
use crate::hdl::pipe::{Pipeline, Policy};
use crate::hdl::stream::{self, Stream};
use crate::hdl::{clog2, Expr, HdlError, Inst, Module, ModuleBuilder};
use crate::model::base_xor::{BaseXorParams, HalfOrder, Scheme};
use crate::model::dbi::{DbiGroup, LinkCodec};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

pub use super::dbi::{dbi_beat_dec, dbi_beat_enc, dbi_dc_dec, dbi_dc_enc};

/// Spec reference printed in every module header.
pub mod table2;

const SPEC: &str = "docs/FORMATS.md, Base+XOR";

/// Vector convention, printed in the headers of sector-wide modules.
const VEC_NOTE: &str =
    "Vectors: W[k] (beat k, sector bytes 4k..4k+3) at bits [32k+31:32k], W[0] (base) at the LSB end";

/// Decoder structure for chains of ZDR decodes (Universal + ZDR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DecStyle {
    /// One ZDR decode per tree level, each waiting for its decoded partner (the paper's
    /// structure: S levels for Universal, T/N − 1 for N-byte).
    Serial,
    /// Carry-select: each level's ZDR comparisons are evaluated for every candidate value of
    /// the partner in parallel, then selected (Universal only; N-byte falls back to serial).
    /// The default: Nangate45, T = 32 B, S = 3, 1 ns target: 0.88 ns / 1643 µm² against
    /// 1.30 ns / 1240 µm² for the serial decoder (docs/FORMATS.md, Base+XOR).
    #[default]
    Speculative,
}

/// Parameters of the Base+XOR hardware: the transform and DBI of the golden model
/// ([`LinkCodec`]) plus the micro-architecture knobs. Flat in YAML (`base_xor:` section).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BaseXorRtlParams {
    /// Scheme: `none`, `nbyte`, `universal`.
    pub scheme: Scheme,
    /// Transaction (sector) size in bytes: 16, 32, 64.
    pub t_bytes: u32,
    /// N-byte element size: 2, 4, 8.
    pub n_bytes: u32,
    /// N-byte: XOR with element 0 instead of the left neighbour.
    pub fixed_base: bool,
    /// Universal stages.
    pub stages: u32,
    /// Zero Data Remapping.
    pub zdr: bool,
    /// ZDR chunk width (16, 32, 64); null = spec default.
    pub zdr_bits: Option<u32>,
    /// ZDR constant; null = `1 << (zdr_bits − 2)`.
    pub zdr_const: Option<u64>,
    /// Extension: no remapping when the base chunk is zero.
    pub zdr_skip_zero_base: bool,
    /// Halfword order at 16-bit granularity.
    pub half_order: HalfOrder,
    /// DBI-DC group width: 0 (off), 8, 16, 32.
    pub dbi_group: u32,
    /// Register stage at the output of each path (throughput stays one sector per cycle).
    pub pipe: bool,
    /// Decoder structure.
    pub dec_style: DecStyle,
    /// Decoder without ZDR: prefix-XOR topology of the N-byte adjacent chain (`ripple` = the
    /// paper's serial chain); for Universal `ripple` gives the paper's S-level tree and any
    /// other value the log-depth tree. Default Kogge-Stone: the only topology whose log depth
    /// survives ABC for 2-byte elements (Nangate45: 0.63 ns against 1.45 ns for Sklansky and
    /// 1.49 ns for ripple, which ABC maps to the same XOR chain; docs/FORMATS.md).
    pub dec_prefix: PrefixTopology,
}

impl Default for BaseXorRtlParams {
    /// The spec's full pipeline (§2.5): Universal T = 32 B, S = 3, ZDR, byte DBI, registered.
    fn default() -> Self {
        Self::from_codec(&LinkCodec::default())
    }
}

impl BaseXorRtlParams {
    /// Hardware parameters for a golden-model codec (registered, speculative decoder).
    pub fn from_codec(c: &LinkCodec) -> Self {
        let b = c.bx;
        BaseXorRtlParams {
            scheme: b.scheme,
            t_bytes: b.t_bytes,
            n_bytes: b.n_bytes,
            fixed_base: b.fixed_base,
            stages: b.stages,
            zdr: b.zdr,
            zdr_bits: b.zdr_bits,
            zdr_const: b.zdr_const,
            zdr_skip_zero_base: b.zdr_skip_zero_base,
            half_order: b.half_order,
            dbi_group: c.dbi_group.0,
            pipe: true,
            dec_style: DecStyle::default(),
            dec_prefix: PrefixTopology::KoggeStone,
        }
    }

    /// The golden model this hardware must match bit for bit.
    pub fn model(&self) -> LinkCodec {
        LinkCodec {
            bx: BaseXorParams {
                scheme: self.scheme,
                t_bytes: self.t_bytes,
                n_bytes: self.n_bytes,
                fixed_base: self.fixed_base,
                stages: self.stages,
                zdr: self.zdr,
                zdr_bits: self.zdr_bits,
                zdr_const: self.zdr_const,
                zdr_skip_zero_base: self.zdr_skip_zero_base,
                half_order: self.half_order,
            },
            dbi_group: DbiGroup(self.dbi_group),
        }
    }

    /// Checks the parameter set (the model's rules).
    pub fn validate(&self) -> Result<(), String> {
        self.model().validate().map_err(|e| e.to_string())
    }

    /// Human-readable parameter line for headers and reports.
    pub fn describe(&self) -> String {
        let dec = match self.dec_kind() {
            DecKind::None | DecKind::Single => String::new(),
            DecKind::Prefix(t) => format!(" dec=prefix-{}", t.tag()),
            DecKind::TreeSerial => " dec=serial".into(),
            DecKind::TreeLog => " dec=log".into(),
            DecKind::ZdrSerial => " dec=serial".into(),
            DecKind::ZdrSpeculative => " dec=speculative".into(),
        };
        format!(
            "{}{}{}",
            self.model().describe(),
            if self.pipe { " pipe" } else { "" },
            dec
        )
    }

    /// Bytes per transaction (the datapath width of both paths).
    pub fn beat_bytes(&self) -> u32 {
        self.t_bytes
    }

    /// The Base+XOR part of the golden model.
    pub fn bx(&self) -> BaseXorParams {
        self.model().bx
    }

    /// 32-bit beats per sector (T/4).
    pub fn beats(&self) -> u32 {
        self.t_bytes / 4
    }

    /// Bits of a sector-wide port.
    pub fn sector_bits(&self) -> u32 {
        self.t_bytes * 8
    }

    /// DBI flags per beat (0 when DBI is off).
    pub fn flags_per_beat(&self) -> u32 {
        DbiGroup(self.dbi_group).flags_per_beat()
    }

    /// DBI flags per sector (width of the `*_dbi_*` sector ports; 0 = no such port).
    pub fn flag_bits(&self) -> u32 {
        self.beats() * self.flags_per_beat()
    }

    fn zdr_on(&self) -> bool {
        self.zdr && self.scheme != Scheme::None
    }

    /// Which decoder structure the generator builds for these parameters.
    pub fn dec_kind(&self) -> DecKind {
        let b = self.bx();
        let depth = b.decode_depth();
        if self.scheme == Scheme::None {
            DecKind::None
        } else if depth <= 1 {
            DecKind::Single
        } else if self.zdr_on() {
            if self.scheme == Scheme::Universal && self.dec_style == DecStyle::Speculative {
                DecKind::ZdrSpeculative
            } else {
                DecKind::ZdrSerial
            }
        } else if is_chains(&b.partners()) {
            DecKind::Prefix(self.dec_prefix)
        } else if self.dec_prefix == PrefixTopology::Ripple {
            DecKind::TreeSerial
        } else {
            DecKind::TreeLog
        }
    }

    /// Module-name fragment of the transform: `n4`, `n4_fb`, `u3`, `raw`, plus ZDR
    /// (`_z32`, `_c<hex>` for a non-default constant, `_skz` for the skip-zero-base extension)
    /// and `_ha` for byte-address halfword order at 16-bit units.
    fn xform_tag(&self) -> String {
        let b = self.bx();
        let mut s = match self.scheme {
            Scheme::None => "raw".to_string(),
            Scheme::NByte => format!(
                "n{}{}",
                self.n_bytes,
                if self.fixed_base { "_fb" } else { "" }
            ),
            Scheme::Universal => format!("u{}", self.stages),
        };
        if self.zdr_on() {
            let w = b.zdr_width();
            s.push_str(&format!("_z{}", w));
            if b.zdr_constant() != 1u64 << (w - 2) {
                s.push_str(&format!("_c{:x}", b.zdr_constant()));
            }
            if self.zdr_skip_zero_base {
                s.push_str("_skz");
            }
        }
        if self.scheme != Scheme::None
            && b.unit_bits() == 16
            && self.half_order == HalfOrder::Address
        {
            s.push_str("_ha");
        }
        s
    }

    /// Module-name fragment of the decoder structure (empty when there is only one).
    fn dec_tag(&self) -> String {
        match self.dec_kind() {
            DecKind::None | DecKind::Single => String::new(),
            DecKind::Prefix(t) => format!("_{}", t.tag()),
            DecKind::TreeSerial => "_rc".into(),
            DecKind::TreeLog => "_lg".into(),
            DecKind::ZdrSerial if self.scheme == Scheme::Universal => "_ser".into(),
            DecKind::ZdrSerial => String::new(),
            DecKind::ZdrSpeculative => "_spec".into(),
        }
    }

    /// Module-name suffix of the write path: `t32_u3_z32_d8_p1`.
    pub fn enc_tag(&self) -> String {
        format!(
            "t{}_{}_d{}_p{}",
            self.t_bytes,
            self.xform_tag(),
            self.dbi_group,
            self.pipe as u32
        )
    }

    /// Module-name suffix of the read path (adds the decoder structure).
    pub fn dec_full_tag(&self) -> String {
        format!(
            "t{}_{}{}_d{}_p{}",
            self.t_bytes,
            self.xform_tag(),
            self.dec_tag(),
            self.dbi_group,
            self.pipe as u32
        )
    }
}

/// The decoder structure chosen for a parameter set (see [`BaseXorRtlParams::dec_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecKind {
    /// No transform (`scheme: none`).
    None,
    /// Every unit depends on a base unit only (fixed base, Universal S = 1): one level.
    Single,
    /// N-byte adjacent without ZDR: prefix-XOR network of this topology per chain.
    Prefix(PrefixTopology),
    /// Universal without ZDR, the paper's structure: S XOR levels.
    TreeSerial,
    /// Universal without ZDR, log-depth XOR tree: ⌈log2(S+1)⌉ levels.
    TreeLog,
    /// A chain of ZDR decodes, each waiting for its decoded partner (N-byte: T/N − 1,
    /// Universal: S).
    ZdrSerial,
    /// Universal + ZDR, carry-select decoder.
    ZdrSpeculative,
}

/// Operator depth of a prefix network of `n` inputs (longest chain, not the number of
/// schedule levels: Brent-Kung's down-sweep overlaps).
pub fn prefix_depth(t: PrefixTopology, n: usize) -> usize {
    let mut d = vec![0usize; n];
    for level in t.schedule(n) {
        let prev = d.clone();
        for (tg, src) in level {
            d[tg] = prev[tg].max(prev[src]) + 1;
        }
    }
    d.into_iter().max().unwrap_or(0)
}

/// Length of the longest partner chain (units on it).
fn chain_len(partners: &[Option<usize>]) -> usize {
    let mut depth = vec![0usize; partners.len()];
    for j in 0..partners.len() {
        if let Some(q) = partners[j] {
            depth[j] = depth[q] + 1;
        }
    }
    depth.into_iter().max().map_or(0, |d| d + 1)
}

/// True when every unit has at most one dependant (the partners form disjoint chains).
fn is_chains(partners: &[Option<usize>]) -> bool {
    let mut children = vec![0usize; partners.len()];
    for q in partners.iter().flatten() {
        children[*q] += 1;
    }
    children.iter().all(|&c| c <= 1)
}

fn err(msg: String) -> HdlError {
    HdlError {
        module: "base_xor".into(),
        problems: vec![msg],
    }
}

/// Where each unit of a transaction lives in the LSB-first sector vector.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Unit width in bits.
    pub bits: u32,
    /// Lowest bit of unit j.
    pub lo: Vec<u32>,
    /// Partner of unit j (always a smaller index), `None` for base units.
    pub partners: Vec<Option<usize>>,
}

impl Layout {
    /// The unit layout of a transform (FORMATS §2.0 element order; model `to_units`).
    pub fn new(b: &BaseXorParams) -> Layout {
        let bits = b.unit_bits();
        let n = b.units();
        let lo = (0..n as u32)
            .map(|j| match bits {
                16 => {
                    let (k, first) = (j / 2, j % 2 == 0);
                    let upper = match b.half_order {
                        HalfOrder::UpperFirst => first,
                        HalfOrder::Address => !first,
                    };
                    32 * k + if upper { 16 } else { 0 }
                }
                _ => bits * j,
            })
            .collect();
        Layout {
            bits,
            lo,
            partners: b.partners(),
        }
    }

    /// Unit j of a sector vector.
    pub fn unit(&self, v: &Expr, j: usize) -> Expr {
        v.slice(self.lo[j], self.bits)
    }

    /// Reassembles a sector vector from its units.
    pub fn assemble(&self, units: &[Expr]) -> Expr {
        let mut v: Vec<(u32, Expr)> = self.lo.iter().copied().zip(units.iter().cloned()).collect();
        v.sort_by_key(|(lo, _)| *lo);
        Expr::cat_lsb(&v.into_iter().map(|(_, e)| e).collect::<Vec<_>>())
    }

    /// Depth of unit j in the partner forest (0 for a base unit).
    pub fn depth(&self, j: usize) -> usize {
        let mut d = 0;
        let mut u = j;
        while let Some(q) = self.partners[u] {
            d += 1;
            u = q;
        }
        d
    }

    /// The k-th ancestor of unit j.
    fn anc(&self, j: usize, k: usize) -> usize {
        let mut u = j;
        for _ in 0..k {
            u = self.partners[u].expect("ancestor within the unit's depth");
        }
        u
    }
}

fn header(m: &mut ModuleBuilder, generator: &str, params: &str, spec: &str) {
    m.provenance(
        &format!("base_xor::{generator}"),
        params,
        &format!("{SPEC} {spec}"),
    );
}

/// `a & b` where `None` is the constant 1.
fn and_opt(a: &Option<Expr>, b: &Expr) -> Expr {
    match a {
        Some(a) => a & b,
        None => b.clone(),
    }
}

fn zdr_name(kind: &str, w: u32, c: u64, skip: bool) -> String {
    format!(
        "zdr_{}_word_w{}_c{:x}{}",
        kind,
        w,
        c,
        if skip { "_skz" } else { "" }
    )
}

/// A ZDR chunk module (`dir` = `enc` or `dec`) of `w` bits with constant `c`, named and
/// headed.
fn zdr_module(dir: &str, (w, c, skip): (u32, u64, bool), spec: &str) -> ModuleBuilder {
    let mut m = ModuleBuilder::new(zdr_name(dir, w, c, skip));
    let skip = if skip { " skip-zero-base" } else { "" };
    let params = format!("W={w} C={c:#x}{skip}");
    header(&mut m, &format!("zdr_{dir}_word"), &params, spec);
    m
}

/// `zdr_enc_word`: Zero Data Remapping encode of one `w`-bit chunk (FORMATS §2.2, Fig. 10).
/// `y = x == 0 ? C : (x ^ base == C ? base : x ^ base)`; the second test reuses the XOR
/// output (`t == C`). With `skip` (extension, not in the paper) a zero base leaves `x ^ base`.
pub fn zdr_enc_word(w: u32, c: u64, skip: bool) -> Result<Arc<Module>, HdlError> {
    let mut m = zdr_module(
        "enc",
        (w, c, skip),
        "§2.2 (Fig. 10 rule, priority: zero test first), §6.3",
    );
    let x = m.input("x_i", w);
    let base = m.input("base_i", w);
    let cc = Expr::lit(w, c);
    let t = m.wire_c("t", &(&x ^ &base), "plain Base+XOR code");
    let mut x_zero = x.eq_lit(0);
    let mut t_is_c = t.eq(&cc);
    if skip {
        let base_nz = m.wire_c("base_nz", &base.any(), "remap only against a non-zero base");
        x_zero = &base_nz & &x_zero;
        t_is_c = &base_nz & &t_is_c;
    }
    let x_zero = m.wire_c("x_zero", &x_zero, "x == 0: send C");
    let t_is_c = m.wire_c(
        "t_is_c",
        &t_is_c,
        "x == base ^ C (the input that would encode to C): send base",
    );
    let y = x_zero.select(&cc, &t_is_c.select(&base, &t));
    m.output_expr("y_o", &y);
    m.finish()
}

/// `zdr_dec_word`: ZDR decode of one chunk against the decoded partner (FORMATS §2.2):
/// `x = y == C ? 0 : (y == base ? base ^ C : y ^ base)`; `y == base` is tested as
/// `(y ^ base) == 0` and `base ^ C` is `y ^ C` there (one bit flip for a one-hot C).
pub fn zdr_dec_word(w: u32, c: u64, skip: bool) -> Result<Arc<Module>, HdlError> {
    let mut m = zdr_module(
        "dec",
        (w, c, skip),
        "§2.2 (decode, `y == C` tested first for the degenerate base == C), §6.3",
    );
    let y = m.input("y_i", w);
    let base = m.input("base_i", w);
    let cc = Expr::lit(w, c);
    let u = m.wire_c("u", &(&y ^ &base), "plain Base+XOR decode");
    let mut y_is_c = y.eq(&cc);
    let mut u_zero = u.eq_lit(0);
    if skip {
        let base_nz = m.wire_c(
            "base_nz",
            &base.any(),
            "remapped only against a non-zero base",
        );
        y_is_c = &base_nz & &y_is_c;
        u_zero = &base_nz & &u_zero;
    }
    let y_is_c = m.wire_c("y_is_c", &y_is_c, "y == C: x was 0");
    let u_zero = m.wire_c("u_zero", &u_zero, "y == base: x was base ^ C");
    let x = y_is_c.select(&Expr::zero(w), &u_zero.select(&(&y ^ &cc), &u));
    m.output_expr("x_o", &x);
    m.finish()
}

fn core_name(p: &BaseXorRtlParams, dir: &str) -> String {
    let dec = if dir == "dec" {
        p.dec_tag()
    } else {
        String::new()
    };
    let x = p.xform_tag();
    match p.scheme {
        Scheme::NByte => format!("bx_nbyte_{}_t{}_{}{}", dir, p.t_bytes, x, dec),
        _ => format!(
            "bx_univ_{}_t{}_s{}{}{}",
            dir,
            p.t_bytes,
            p.stages,
            x.strip_prefix(&format!("u{}", p.stages)).unwrap_or(&x),
            dec
        ),
    }
}

fn core_params(p: &BaseXorRtlParams) -> String {
    let b = p.bx();
    format!(
        "{} (T={} B, {} units of {} bits)",
        b.describe(),
        p.t_bytes,
        b.units(),
        b.unit_bits()
    )
}

/// The sector encoder core (`bx_nbyte_enc_*` / `bx_univ_enc_*`), `None` for `scheme: none`.
/// Ports `din_i`, `dout_o` (sector vectors). Every unit is XORed (or ZDR-encoded) with its
/// partner's *original* value, all in parallel: one level (FORMATS §2.1, §2.3, §3).
pub fn xform_enc(p: &BaseXorRtlParams) -> Result<Option<Arc<Module>>, HdlError> {
    p.validate().map_err(err)?;
    if p.scheme == Scheme::None {
        return Ok(None);
    }
    let b = p.bx();
    let lay = Layout::new(&b);
    let zdr = if p.zdr_on() {
        Some(zdr_enc_word(
            b.zdr_width(),
            b.zdr_constant(),
            p.zdr_skip_zero_base,
        )?)
    } else {
        None
    };
    let mut m = ModuleBuilder::new(core_name(p, "enc"));
    let (gen, sec) = if p.scheme == Scheme::NByte {
        (
            "xform_enc (bx_nbyte_enc)",
            "§2.1 (c_i = e_i ^ e_{i-1}, or ^ e_0 with fixed base), §2.2, §3, §6.1",
        )
    } else {
        (
            "xform_enc (bx_univ_enc)",
            "§2.3 (unit j ^ unit partner(j), partner = j with its MSB cleared), §2.2, §3, §6.2",
        )
    };
    header(&mut m, gen, &core_params(p), sec);
    m.header(VEC_NOTE);
    let din = m.input("din_i", p.sector_bits());
    let mut out = Vec::new();
    for j in 0..lay.lo.len() {
        let e = lay.unit(&din, j);
        let c = match lay.partners[j] {
            None => e,
            Some(q) => {
                let base = lay.unit(&din, q);
                match &zdr {
                    Some(z) => m
                        .instance(z, &format!("u_zdr{}", j), &[("x_i", e), ("base_i", base)])
                        .out("y_o"),
                    None => m.wire(&format!("c{}", j), &(&e ^ &base)),
                }
            }
        };
        out.push(c);
    }
    m.output_expr("dout_o", &lay.assemble(&out));
    m.finish().map(Some)
}

/// Memoized XOR segments and comparators over the partner forest of a decoder.
struct Forest<'a> {
    lay: &'a Layout,
    y: Vec<Expr>,
    c: Expr,
    seg: HashMap<(usize, usize), Expr>,
    cmp: HashMap<(usize, usize, bool), Expr>,
}

impl Forest<'_> {
    /// XOR of the `len` codes on the path from unit j towards its base (j, partner(j), …),
    /// as a balanced tree: ⌈log2 len⌉ levels. The part towards the base is a power of two
    /// long, so root-anchored segments (decoded units) are shared between units.
    fn seg(&mut self, m: &mut ModuleBuilder, j: usize, len: usize) -> Expr {
        if len == 1 {
            return self.y[j].clone();
        }
        if let Some(e) = self.seg.get(&(j, len)) {
            return e.clone();
        }
        let h = 1usize << (clog2(len as u64) - 1);
        let k = len - h;
        let a = self.seg(m, j, k);
        let anc = self.lay.anc(j, k);
        let b = self.seg(m, anc, h);
        let e = m.wire(&format!("x{}_{}", j, len), &(&a ^ &b));
        self.seg.insert((j, len), e.clone());
        e
    }

    /// `seg(j, len) == (with_c ? C : 0)`.
    fn cmp(&mut self, m: &mut ModuleBuilder, j: usize, len: usize, with_c: bool) -> Expr {
        if let Some(e) = self.cmp.get(&(j, len, with_c)) {
            return e.clone();
        }
        let s = self.seg(m, j, len);
        let e = if with_c { s.eq(&self.c) } else { s.eq_lit(0) };
        let e = m.wire(
            &format!("eq{}_{}_{}", j, len, if with_c { "c" } else { "z" }),
            &e,
        );
        self.cmp.insert((j, len, with_c), e.clone());
        e
    }
}

/// A candidate value of a decoded unit in the carry-select decoder: 0, or the XOR of the
/// codes of `len` units from `start` towards the base, optionally `^ C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cand {
    Zero,
    Seg(usize, usize, bool),
}

/// The sector decoder core (`bx_nbyte_dec_*` / `bx_univ_dec_*`), `None` for `scheme: none`.
/// Ports `din_i` (code), `dout_o` (decoded sector). Structure: [`DecKind`].
pub fn xform_dec(p: &BaseXorRtlParams) -> Result<Option<Arc<Module>>, HdlError> {
    p.validate().map_err(err)?;
    if p.scheme == Scheme::None {
        return Ok(None);
    }
    let b = p.bx();
    let lay = Layout::new(&b);
    let kind = p.dec_kind();
    let mut m = ModuleBuilder::new(core_name(p, "dec"));
    let gen = if p.scheme == Scheme::NByte {
        "xform_dec (bx_nbyte_dec)"
    } else {
        "xform_dec (bx_univ_dec)"
    };
    let (structure, sec) = dec_structure(p, &lay, kind);
    header(&mut m, gen, &core_params(p), sec);
    m.header(format!("Decoder: {}", structure));
    m.header(VEC_NOTE);
    let din = m.input("din_i", p.sector_bits());
    let n = lay.lo.len();
    let y: Vec<Expr> = (0..n).map(|j| lay.unit(&din, j)).collect();
    let mut d: Vec<Option<Expr>> = vec![None; n];
    for j in 0..n {
        if lay.partners[j].is_none() {
            d[j] = Some(y[j].clone());
        }
    }
    match kind {
        DecKind::Prefix(topo) => dec_prefix(&mut m, &lay, &y, topo, &mut d),
        DecKind::Single | DecKind::TreeSerial | DecKind::ZdrSerial => {
            dec_serial(&mut m, p, &lay, &y, &mut d)?
        }
        DecKind::TreeLog => dec_tree_log(&mut m, p, &lay, &y, &mut d),
        DecKind::ZdrSpeculative => dec_speculative(&mut m, p, &lay, &y, &mut d),
        DecKind::None => unreachable!("scheme none has no core"),
    }
    let d: Vec<Expr> = d
        .into_iter()
        .map(|e| e.expect("every unit decoded"))
        .collect();
    m.output_expr("dout_o", &lay.assemble(&d));
    m.finish().map(Some)
}

/// The decoder's structure as the header states it, and the spec sections it follows.
fn dec_structure(p: &BaseXorRtlParams, lay: &Layout, kind: DecKind) -> (String, &'static str) {
    let b = p.bx();
    match kind {
        DecKind::None => unreachable!("scheme none has no core"),
        DecKind::Single => ("one level: every unit decodes against a base unit".to_string(), "§2.1, §2.2, §3"),
        DecKind::Prefix(t) => (
            format!(
                "prefix-XOR network per chain ({} topology, {} levels for {} elements; the paper's serial chain has {})",
                t.tag(),
                prefix_depth(t, chain_len(&lay.partners)),
                chain_len(&lay.partners),
                b.decode_depth()
            ),
            "§2.1 (d_i = c_i ^ d_{i-1} as a parallel prefix), §3, §6.1",
        ),
        DecKind::TreeSerial => (
            format!("serial tree, d_j = c_j ^ d_partner(j): {} levels", b.decode_depth()),
            "§2.3 (decode in increasing j), §3, §6.2",
        ),
        DecKind::TreeLog => (
            format!(
                "log-depth tree, d_j = XOR of the codes on j's partner path: {} levels (the paper's serial tree has {})",
                clog2(b.decode_depth() as u64 + 1),
                b.decode_depth()
            ),
            "§2.3 (decode), §3, §6.2",
        ),
        DecKind::ZdrSerial => (
            format!(
                "serial chain of ZDR decodes against the decoded partner: {} levels",
                b.decode_depth()
            ),
            if p.scheme == Scheme::NByte { "§2.1, §2.2 (ZDR decode), §3, §6.1" } else { "§2.3, §2.2 (ZDR decode), §3, §6.2" },
        ),
        DecKind::ZdrSpeculative => (
            "carry-select ZDR decode: every comparison against every candidate partner value in parallel, one 1-bit select level per tree level".to_string(),
            "§2.3, §2.2 (ZDR decode), §3, §6.2",
        ),
    }
}

/// Prefix-XOR decode: one prefix network (`px<root>`) per chain of units, from its base
/// unit along each unit's single dependant.
fn dec_prefix(
    m: &mut ModuleBuilder,
    lay: &Layout,
    y: &[Expr],
    topo: PrefixTopology,
    d: &mut [Option<Expr>],
) {
    let n = lay.lo.len();
    // Chains: follow each base unit's single dependant.
    let mut child = vec![None; n];
    for (j, q) in lay.partners.iter().enumerate() {
        if let Some(q) = q {
            child[*q] = Some(j);
        }
    }
    for root in (0..n).filter(|j| lay.partners[*j].is_none()) {
        let mut chain = vec![root];
        while let Some(c) = child[*chain.last().expect("non-empty")] {
            chain.push(c);
        }
        let xs: Vec<Expr> = chain.iter().map(|&j| y[j].clone()).collect();
        let outs = prefix(m, &format!("px{}", root), &xs, topo, &|a, b| a ^ b);
        for (j, o) in chain.iter().zip(outs) {
            d[*j] = Some(o);
        }
    }
}

/// Serial decode in increasing unit order: each unit XORed (`d<j>`) or ZDR-decoded
/// (`u_zdr<j>`) against its decoded partner.
fn dec_serial(
    m: &mut ModuleBuilder,
    p: &BaseXorRtlParams,
    lay: &Layout,
    y: &[Expr],
    d: &mut [Option<Expr>],
) -> Result<(), HdlError> {
    let (w, c) = (lay.bits, p.bx().zdr_constant());
    let zmod = if p.zdr_on() {
        Some(zdr_dec_word(w, c, p.zdr_skip_zero_base)?)
    } else {
        None
    };
    for j in 0..lay.lo.len() {
        if let Some(q) = lay.partners[j] {
            let base = d[q].clone().expect("partners come first");
            d[j] = Some(match &zmod {
                Some(z) => m
                    .instance(
                        z,
                        &format!("u_zdr{}", j),
                        &[("y_i", y[j].clone()), ("base_i", base)],
                    )
                    .out("x_o"),
                None => m.wire(&format!("d{}", j), &(&y[j] ^ &base)),
            });
        }
    }
    Ok(())
}

/// The XOR segments and comparators of a decoder over the units' codes `y`.
fn forest<'a>(p: &BaseXorRtlParams, lay: &'a Layout, y: &[Expr]) -> Forest<'a> {
    Forest {
        lay,
        y: y.to_vec(),
        c: Expr::lit(lay.bits, p.bx().zdr_constant()),
        seg: HashMap::new(),
        cmp: HashMap::new(),
    }
}

/// Log-depth tree decode: each unit the XOR of the codes on its partner path, as shared
/// balanced trees (`x<j>_<len>`).
fn dec_tree_log(
    m: &mut ModuleBuilder,
    p: &BaseXorRtlParams,
    lay: &Layout,
    y: &[Expr],
    d: &mut [Option<Expr>],
) {
    let mut f = forest(p, lay, y);
    for (j, dj) in d.iter_mut().enumerate() {
        if lay.partners[j].is_some() {
            *dj = Some(f.seg(m, j, lay.depth(j) + 1));
        }
    }
}

/// Carry-select ZDR decode: every unit's candidate values with one-hot selects, each unit's
/// selects computed from its partner's.
fn dec_speculative(
    m: &mut ModuleBuilder,
    p: &BaseXorRtlParams,
    lay: &Layout,
    y: &[Expr],
    d: &mut [Option<Expr>],
) {
    let n = lay.lo.len();
    let mut f = forest(p, lay, y);
    // cands[j]: (candidate, its one-hot select; None = constant 1).
    let mut cands: Vec<Vec<(Cand, Option<Expr>)>> = vec![Vec::new(); n];
    m.comment("Carry-select ZDR decode (FORMATS §2.2): d_j is 0, y_j ^ C or y_j ^ d_partner, so every candidate is a XOR of codes on the partner path (x<j>_<len>), optionally ^ C;");
    m.comment("the comparisons eq<j>_<len>_<z|c> need only the codes; the one-hot selects s<j>_<k> ripple through one AND-OR level per tree level.");
    for j in 0..n {
        let Some(q) = lay.partners[j] else {
            cands[j] = vec![(Cand::Seg(j, 1, false), None)];
            continue;
        };
        let pc = cands[q].clone();
        let (dj, named) = spec_unit(m, &mut f, p.zdr_skip_zero_base, j, q, &pc);
        d[j] = Some(dj);
        // The select of candidate 0 (value 0) stays an expression: it is only read
        // by dependants (never by the data mux).
        cands[j] = named;
    }
}

/// The select terms of unit j's candidates, one per candidate `v` of its partner q.
struct SpecTerms {
    /// Selects of `y_j ^ C` (y_j == v).
    flip: Vec<Expr>,
    /// Selects of a zero partner (skip: `y_j` passes unchanged).
    pz: Vec<Expr>,
    /// The candidates `y_j ^ v` with their selects.
    next: Vec<(Cand, Expr)>,
}

/// The carry-select decode of unit j (partner q, whose candidates are `pc`): the select
/// wires `s<j>_<k>` and the one-hot AND-OR of the candidate values (`d<j>`); returns the
/// decoded unit and its candidates.
fn spec_unit(
    m: &mut ModuleBuilder,
    f: &mut Forest<'_>,
    skip: bool,
    j: usize,
    q: usize,
    pc: &[(Cand, Option<Expr>)],
) -> (Expr, Vec<(Cand, Option<Expr>)>) {
    let zj = f.cmp(m, j, 1, true);
    let nzj = !&zj;
    let SpecTerms { flip, pz, next } = spec_terms(m, f, skip, j, q, pc, &nzj);
    let sel_zero = if pz.is_empty() {
        zj.clone()
    } else {
        &zj & &!or_tree(pz, 1)
    };
    let sel_flip = &nzj & &or_tree(flip, 1);
    let mut named = vec![(Cand::Zero, Some(sel_zero))];
    let mut data = Vec::new();
    let mut list = vec![(Cand::Seg(j, 1, true), sel_flip)];
    list.extend(next);
    for (k, (cand, sel)) in list.into_iter().enumerate() {
        let s = m.wire(&format!("s{}_{}", j, k + 1), &sel);
        if let Cand::Seg(st, len, cv) = cand {
            let val = f.seg(m, st, len);
            let val = if cv { &val ^ &f.c } else { val };
            data.push(s.gate(&val));
        }
        named.push((cand, Some(s)));
    }
    // One-hot AND-OR of the candidate values.
    let w = f.c.width();
    (m.wire(&format!("d{}", j), &or_tree(data, w)), named)
}

/// The comparisons of unit j against each candidate of its partner q, and the select terms
/// they give (`nzj`: y_j is not C).
fn spec_terms(
    m: &mut ModuleBuilder,
    f: &mut Forest<'_>,
    skip: bool,
    j: usize,
    q: usize,
    pc: &[(Cand, Option<Expr>)],
    nzj: &Expr,
) -> SpecTerms {
    let mut flip_terms = Vec::new();
    let mut pz_terms = Vec::new();
    let mut next: Vec<(Cand, Expr)> = Vec::new();
    for (v, sv) in pc {
        // Given d_partner = v: 0 if y_j == C, y_j ^ C if y_j == v, else y_j ^ v;
        // with skip, y_j ^ v whenever v == 0 (bz: "v is zero").
        let (x_v, e_v, bz) = match *v {
            Cand::Zero if skip => (Cand::Seg(j, 1, false), None, Some(None)),
            Cand::Zero => (Cand::Seg(j, 1, false), Some(f.cmp(m, j, 1, false)), None),
            Cand::Seg(_, len, cv) => (
                Cand::Seg(j, len + 1, cv),
                Some(f.cmp(m, j, len + 1, cv)),
                skip.then(|| Some(f.cmp(m, q, len, cv))),
            ),
        };
        let keep = match (&e_v, &bz) {
            // v is the constant 0 (skip): y_j ^ 0, unconditionally.
            (_, Some(None)) => sv.clone().unwrap_or_else(|| Expr::ones(1)),
            (Some(e), Some(Some(b))) => and_opt(sv, &(b | &(nzj & &!e))),
            (Some(e), None) => and_opt(sv, &(nzj & &!e)),
            (None, _) => unreachable!("comparison built for every non-zero candidate"),
        };
        match (&e_v, &bz) {
            (_, Some(None)) => pz_terms.push(sv.clone().unwrap_or_else(|| Expr::ones(1))),
            (Some(e), Some(Some(b))) => {
                flip_terms.push(and_opt(sv, &(e & &!b)));
                pz_terms.push(and_opt(sv, b));
            }
            (Some(e), None) => flip_terms.push(and_opt(sv, e)),
            (None, _) => {}
        }
        next.push((x_v, keep));
    }
    SpecTerms {
        flip: flip_terms,
        pz: pz_terms,
        next,
    }
}

/// The unit's output: `s` through a register slice (`out_valid_q`, `out_data_q`; one sector
/// per cycle, held while `m_ready_i` is low) when `pipe`, else directly, to the ports of
/// output stream `m`.
fn out_stage(m: &mut ModuleBuilder, pipe: bool, s: Stream) {
    let s = if pipe {
        m.comment("Register stage: one sector per cycle; holds its output while m_ready_i is low");
        stream::reg_slice(m, "out", s)
    } else {
        s
    };
    stream::output(m, "m", s);
}

/// ZDR encode fused with DBI-DC (FORMATS §2.2 + §2.4): every ZDR output chunk is one of three
/// candidates, `C`, `base` or `t = x ^ base`, so each DBI group's popcount (and, for a group
/// inside one unit, its inversion decision) is computed for all three in parallel with the
/// ZDR compares and then selected: the popcount no longer waits for the ZDR select.
/// Bit-identical to `u_bx` followed by `dbi_beat_enc` (checked by the encoder cosim).
fn fused_zdr_dbi(m: &mut ModuleBuilder, p: &BaseXorRtlParams, s: &Expr) -> (Expr, Expr) {
    let b = p.bx();
    let lay = Layout::new(&b);
    let (ub, g) = (lay.bits, p.dbi_group);
    let c = b.zdr_constant();
    let cc = Expr::lit(ub, c);
    m.comment("ZDR per unit (FORMATS §2.2) with DBI candidates per group (§2.4), fused");
    struct U {
        x: Expr,
        base: Option<Expr>,
        t: Option<Expr>,
        x_zero: Option<Expr>,
        t_is_c: Option<Expr>,
    }
    let mut units = Vec::new();
    let mut outs = Vec::new();
    for j in 0..lay.lo.len() {
        let x = lay.unit(s, j);
        match lay.partners[j] {
            None => {
                outs.push(x.clone());
                units.push(U {
                    x,
                    base: None,
                    t: None,
                    x_zero: None,
                    t_is_c: None,
                });
            }
            Some(q) => {
                let base = lay.unit(s, q);
                let t = m.wire(&format!("t{}", j), &(&x ^ &base));
                let mut xz = x.eq_lit(0);
                let mut tc = t.eq(&cc);
                if p.zdr_skip_zero_base {
                    let nz = base.any();
                    xz = &nz & &xz;
                    tc = &nz & &tc;
                }
                let xz = m.wire(&format!("x_zero{}", j), &xz);
                let tc = m.wire(&format!("t_is_c{}", j), &tc);
                outs.push(m.wire(&format!("zdr{}", j), &xz.select(&cc, &tc.select(&base, &t))));
                units.push(U {
                    x,
                    base: Some(base),
                    t: Some(t),
                    x_zero: Some(xz),
                    t_is_c: Some(tc),
                });
            }
        }
    }
    let zdr = lay.assemble(&outs);
    let half = (g / 2) as u64;
    let mut masks = Vec::new();
    let mut flags = Vec::new();
    for gi in 0..p.sector_bits() / g {
        let (glo, ghi) = (gi * g, gi * g + g);
        // Chunks of this group: (unit, offset in the unit, width).
        let chunks: Vec<(usize, u32, u32)> = (0..units.len())
            .filter_map(|j| {
                let (lo, hi) = (lay.lo[j].max(glo), (lay.lo[j] + ub).min(ghi));
                (lo < hi).then(|| (j, lo - lay.lo[j], hi - lo))
            })
            .collect();
        let name = format!("g{}", gi);
        let inv = if chunks.len() == 1 {
            // One unit: decide per candidate, then select the decision.
            let (j, o, w) = chunks[0];
            let u = &units[j];
            let over = |m: &mut ModuleBuilder, v: &Expr, tag: &str| {
                let pc = popcount(m, &format!("{}_{}", name, tag), &v.slice(o, w));
                pc.gt(&Expr::lit(pc.width(), half))
            };
            match (&u.t, &u.base, &u.x_zero, &u.t_is_c) {
                (Some(t), Some(base), Some(xz), Some(tc)) => {
                    let c_over = ((c >> o) & ((1u64 << w) - 1)).count_ones() as u64 > half;
                    let it = over(m, t, "t");
                    let ib = over(m, base, "b");
                    xz.select(&Expr::lit(1, c_over as u64), &tc.select(&ib, &it))
                }
                _ => over(m, &u.x, "x"),
            }
        } else {
            // A group over several units: select each chunk's count, then sum and compare.
            let cw = clog2(g as u64 + 1);
            let mut sum = Expr::zero(cw);
            for (k, &(j, o, w)) in chunks.iter().enumerate() {
                let u = &units[j];
                let pc = |m: &mut ModuleBuilder, v: &Expr, tag: &str| {
                    popcount(m, &format!("{}_{}{}", name, tag, k), &v.slice(o, w)).zext(cw)
                };
                let cnt = match (&u.t, &u.base, &u.x_zero, &u.t_is_c) {
                    (Some(t), Some(base), Some(xz), Some(tc)) => {
                        let cc_n = ((c >> o) & ((1u64 << w) - 1)).count_ones() as u64;
                        let ct = pc(m, t, "t");
                        let cb = pc(m, base, "b");
                        xz.select(&Expr::lit(cw, cc_n), &tc.select(&cb, &ct))
                    }
                    _ => pc(m, &u.x, "x"),
                };
                sum = sum + cnt;
            }
            sum.gt(&Expr::lit(cw, half))
        };
        let inv = m.wire(&format!("inv{}", gi), &inv);
        masks.push(inv.repeat(g));
        flags.push(inv);
    }
    let data = m.wire("enc_data", &(&zdr ^ &Expr::cat_lsb(&masks)));
    (data, Expr::cat_lsb(&flags))
}

/// `bxt_enc`: the write path (FORMATS §2.5, §6.5): sector → Base+XOR encode → DBI-DC per
/// beat.
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_sector_i` (raw sector) → `m_valid_o`/`m_ready_i`/
/// `m_sector_o` (encoded, inverted groups) and `m_dbi_o` (flags; only with DBI).
pub fn encoder(p: &BaseXorRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let fpb = p.flags_per_beat();
    let sw = p.sector_bits();
    let mut m = ModuleBuilder::new(format!("bxt_enc_{}", p.enc_tag()));
    header(
        &mut m,
        "encoder",
        &p.describe(),
        "§2.5 (write path: Base+XOR, then DBI), §6.5 (bxt_sector_codec write path)",
    );
    m.header(VEC_NOTE);
    if fpb > 0 {
        m.header(format!(
            "DBI: m_dbi_o[{}*k + l] = flag of group l (bits [{g}*l+{gm}:{g}*l]) of beat k",
            fpb,
            g = p.dbi_group,
            gm = p.dbi_group - 1
        ));
    }
    let s_in = stream::input(&mut m, "s", &Fields::new(&[("sector", sw)]));
    let s_sector = s_in.field("sector");
    let payload = if p.zdr_on() && fpb > 0 {
        // ZDR and DBI fused (the separate core is not instantiated).
        let (data, flags) = fused_zdr_dbi(&mut m, p, &s_sector);
        Expr::cat(&[flags, data])
    } else {
        let x = match &xform_enc(p)? {
            Some(c) => m
                .instance(c, "u_bx", &[("din_i", s_sector.clone())])
                .out("dout_o"),
            None => s_sector.clone(),
        };
        if fpb > 0 {
            let bm = dbi_beat_enc(p.dbi_group)?;
            let u = m.instance_array(&bm, "u_dbi", p.beats(), |k| {
                vec![("d_i", x.slice(32 * k, 32))]
            });
            let q: Vec<Expr> = u.iter().map(|i| i.out("q_o")).collect();
            let f: Vec<Expr> = u.iter().map(|i| i.out("dbi_o")).collect();
            Expr::cat(&[Expr::cat_lsb(&f), Expr::cat_lsb(&q)])
        } else {
            x
        }
    };
    let mut fields = vec![("sector", sw)];
    if fpb > 0 {
        fields.push(("dbi", p.flag_bits()));
    }
    let coded = s_in.map(&mut m, "coded", &payload, &Fields::new(&fields));
    out_stage(&mut m, p.pipe, coded);
    m.finish()
}

/// `bxt_dec`: the read path (FORMATS §2.5, §6.5): un-DBI per beat → Base+XOR decode.
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_sector_i`/`s_dbi_i` (as on the pins; `s_dbi_i` only with
/// DBI) → `m_valid_o`/`m_ready_i`/`m_sector_o` (the raw sector).
pub fn decoder(p: &BaseXorRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let core = xform_dec(p)?;
    let fpb = p.flags_per_beat();
    let sw = p.sector_bits();
    let mut m = ModuleBuilder::new(format!("bxt_dec_{}", p.dec_full_tag()));
    header(
        &mut m,
        "decoder",
        &p.describe(),
        "§2.5 (read path: un-DBI, then decode), §6.5 (bxt_sector_codec read path)",
    );
    m.header(VEC_NOTE);
    let mut layout = vec![("sector", sw)];
    if fpb > 0 {
        layout.push(("dbi", p.flag_bits()));
    }
    let s_in = stream::input(&mut m, "s", &Fields::new(&layout));
    let s_sector = s_in.field("sector");
    let s_dbi = (fpb > 0).then(|| s_in.field("dbi"));
    let x = match &s_dbi {
        Some(flags) => {
            let bm = dbi_beat_dec(p.dbi_group)?;
            let u = m.instance_array(&bm, "u_undbi", p.beats(), |k| {
                vec![
                    ("q_i", s_sector.slice(32 * k, 32)),
                    ("dbi_i", flags.slice(fpb * k, fpb)),
                ]
            });
            let d: Vec<Expr> = u.iter().map(|i| i.out("d_o")).collect();
            m.wire("code", &Expr::cat_lsb(&d))
        }
        None => s_sector.clone(),
    };
    let y = match &core {
        Some(c) => m.instance(c, "u_bx", &[("din_i", x)]).out("dout_o"),
        None => x,
    };
    let decoded = s_in.map(&mut m, "decoded", &y, &Fields::new(&[("sector", sw)]));
    out_stage(&mut m, p.pipe, decoded);
    m.finish()
}

/// The serializer's or deserializer's module (`kind` = `ser` or `deser`), named and headed.
fn beat_module(p: &BaseXorRtlParams, kind: &str, spec: &str) -> Result<ModuleBuilder, HdlError> {
    p.validate().map_err(err)?;
    let (nb, fpb) = (p.beats(), p.flags_per_beat());
    let mut m = ModuleBuilder::new(format!("bxt_{kind}_t{}_f{fpb}", p.t_bytes));
    let params = format!("T={} B ({nb} beats), {fpb} DBI flags per beat", p.t_bytes);
    let generator = if kind == "ser" {
        "serializer"
    } else {
        "deserializer"
    };
    header(&mut m, generator, &params, spec);
    m.header(VEC_NOTE);
    Ok(m)
}

/// `bxt_ser`: sector (+ flags) → T/4 beats of `{dq[31:0], dbi[F-1:0]}` (FORMATS §6.6), beat k =
/// W\[k\] first; `m_last_o` on the last beat. A shift register: the next sector is accepted
/// in the cycle its predecessor's last beat leaves, so the link carries a beat every cycle.
pub fn serializer(p: &BaseXorRtlParams) -> Result<Arc<Module>, HdlError> {
    let (nb, fpb, sw) = (p.beats(), p.flags_per_beat(), p.sector_bits());
    let cw = clog2(nb as u64);
    let mut m = beat_module(
        p,
        "ser",
        "§6.6 (beat_serializer), §2.0 (beat k = W[k]), §2.4 (DBI lane mapping)",
    )?;
    let mut layout = vec![("sector", sw)];
    if fpb > 0 {
        layout.push(("dbi", nb * fpb));
    }
    let s_in = stream::input(&mut m, "s", &Fields::new(&layout));
    let s_valid = s_in.valid.clone();
    let s_sector = s_in.field("sector");
    let s_dbi = (fpb > 0).then(|| s_in.field("dbi"));
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();
    // One stage that repeats: a sector in, one beat out per cycle, the next sector taken
    // with the last beat.
    let mut ser = Pipeline::new(&mut m, "ser", Policy::Bubble, &s_valid);
    let st = ser.stage(&mut m, "out");
    let cnt = m.reg("beat_q", cw, Some(0));
    m.annotate("index of the beat on m_dq_o");
    let sr = m.reg("sector_q", sw, None);
    m.annotate("remaining beats, the current one at the LSB end");
    let last = m.wire("last_beat", &cnt.q().eq_lit(nb as u64 - 1));
    ser.repeat(&mut m, &st, &last);
    let m_fire = m.wire("out_fire", &(st.valid() & m_ready.clone()));
    let load = st.load();
    let shift = m.wire("shift", &(&m_fire & &!&last));
    let step = m.wire("step", &(&load | &shift));
    m.next(&sr, &load.select(&s_sector, &sr.q().shr(32)), Some(&step));
    m.next(
        &cnt,
        &(&load | &last).select(&Expr::zero(cw), &(cnt.q() + Expr::lit(cw, 1))),
        Some(&(&load | &m_fire)),
    );
    let mut fields = vec![("dq", sr.q().slice(0, 32))];
    if let Some(fl) = &s_dbi {
        let fr = m.reg("flags_q", nb * fpb, None);
        m.next(&fr, &load.select(fl, &fr.q().shr(fpb)), Some(&step));
        fields.push(("dbi", fr.q().slice(0, fpb)));
    }
    fields.push(("last", last.clone()));
    let ends = ser.finish(&mut m, &m_ready);
    s_in.accept(&mut m, &ends.in_ready);
    out.drive(&mut m, &ends.out_valid, &fields);
    m.finish()
}

/// `bxt_deser`: T/4 beats of `{dq, dbi}` → sector (+ flags) (FORMATS §6.6). Beats shift in from
/// the top, so after T/4 beats beat 0 is W\[0\] at the LSB end. A sector ends after T/4 beats
/// or at `s_last_i`, whichever comes first; `m_err_o` flags a sector whose `s_last_i` did not
/// coincide with its T/4-th beat (framing error; the counter re-synchronises on `s_last_i`).
pub fn deserializer(p: &BaseXorRtlParams) -> Result<Arc<Module>, HdlError> {
    let (nb, fpb, sw) = (p.beats(), p.flags_per_beat(), p.sector_bits());
    let cw = clog2(nb as u64);
    let mut m = beat_module(
        p,
        "deser",
        "§6.6 (beat_deserializer), §2.0 (beat k = W[k]), §2.4 (DBI lane mapping)",
    )?;
    let mut layout = vec![("dq", 32)];
    if fpb > 0 {
        layout.push(("dbi", fpb));
    }
    layout.push(("last", 1));
    let s_in = stream::input(&mut m, "s", &Fields::new(&layout));
    let s_dq = s_in.field("dq");
    let s_dbi = (fpb > 0).then(|| s_in.field("dbi"));
    let s_last = s_in.field("last");
    let out = stream::output_port(&mut m, "m");
    // One stage that shifts in every beat and offers the sector after its last one.
    let mut pl = Pipeline::new(&mut m, "deser", Policy::Bubble, &s_in.valid);
    let st = pl.stage(&mut m, "out");
    let take = st.load();
    let cnt = m.reg("beat_q", cw, Some(0));
    m.annotate("index of the next beat within its sector");
    let sr = m.reg("sector_q", sw, None);
    let errq = m.reg("err_q", 1, Some(0));
    let at_end = m.wire("at_end", &cnt.q().eq_lit(nb as u64 - 1));
    let done = m.wire("done", &(&at_end | &s_last));
    pl.gather(&mut m, &st, &done);
    m.next(
        &sr,
        &Expr::cat(&[s_dq.clone(), sr.q().slice(32, sw - 32)]),
        Some(&take),
    );
    m.next(
        &cnt,
        &done.select(&Expr::zero(cw), &(cnt.q() + Expr::lit(cw, 1))),
        Some(&take),
    );
    m.next(&errq, &(&at_end ^ &s_last), Some(&(&take & &done)));
    let mut fields = vec![("sector", sr.q())];
    if let Some(d) = &s_dbi {
        let fr = m.reg("flags_q", nb * fpb, None);
        let nf = if nb * fpb > fpb {
            Expr::cat(&[d.clone(), fr.q().slice(fpb, nb * fpb - fpb)])
        } else {
            d.clone()
        };
        m.next(&fr, &nf, Some(&take));
        fields.push(("dbi", fr.q()));
    }
    fields.push(("err", errq.q()));
    pl.finish_ports(&mut m, s_in, out, &fields);
    m.finish()
}

/// `bxt_loopback`: encoder → serializer → deserializer → decoder, for the RTL round-trip test
/// (returns every sector unchanged). Ports as the encoder's input and the decoder's output,
/// plus `m_err_o` (the deserializer's framing error, registered with the sector it concerns
/// one stage earlier; never set on a clean link).
pub fn loopback(p: &BaseXorRtlParams) -> Result<Arc<Module>, HdlError> {
    let enc = encoder(p)?;
    let ser = serializer(p)?;
    let des = deserializer(p)?;
    let dec = decoder(p)?;
    let fpb = p.flags_per_beat();
    let mut m = ModuleBuilder::new(format!("bxt_loopback_{}{}", p.enc_tag(), p.dec_tag()));
    header(
        &mut m,
        "loopback",
        &p.describe(),
        "§2.5 (write path, pins, read path), §6 (round trip through all units)",
    );
    m.header(VEC_NOTE);
    let s_in = stream::input(&mut m, "s", &Fields::new(&[("sector", p.sector_bits())]));
    let s_valid = s_in.valid.clone();
    let s_sector = s_in.field("sector");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();
    let r1 = m.wire_decl("enc_ready", 1);
    let r2 = m.wire_decl("ser_ready", 1);
    let r3 = m.wire_decl("deser_ready", 1);
    let e = m.instance(
        &enc,
        "u_enc",
        &[
            ("s_valid_i", s_valid),
            ("s_sector_i", s_sector),
            ("m_ready_i", r1.expr()),
        ],
    );
    // Each unit takes the previous one's output stream (and its DBI flags, when there are
    // any) and its ready from the next.
    let fed = |src: &Inst, fields: &[&str], ready: Expr| -> Vec<(String, Expr)> {
        let port = |f: &str| (format!("s_{f}_i"), src.out(&format!("m_{f}_o")));
        let mut v = vec![port("valid")];
        v.extend(fields.iter().map(|f| port(f)));
        v.push(("m_ready_i".to_string(), ready));
        if fpb > 0 {
            v.push(port("dbi"));
        }
        v
    };
    fn ports(v: &[(String, Expr)]) -> Vec<(&str, Expr)> {
        v.iter().map(|(n, e)| (n.as_str(), e.clone())).collect()
    }
    let s = m.instance(&ser, "u_ser", &ports(&fed(&e, &["sector"], r2.expr())));
    let din = fed(&s, &["dq", "last"], r3.expr());
    let ds = m.instance(&des, "u_deser", &ports(&din));
    let c = m.instance(&dec, "u_dec", &ports(&fed(&ds, &["sector"], m_ready)));
    m.drive(&r1, &s.out("s_ready_o"));
    m.drive(&r2, &ds.out("s_ready_o"));
    m.drive(&r3, &c.out("s_ready_o"));
    // Sticky framing error of the link (a clean link never sets it).
    let err = m.reg("link_err_q", 1, Some(0));
    m.next(
        &err,
        &(err.q() | (ds.out("m_valid_o") & ds.out("m_err_o"))),
        None,
    );
    s_in.accept(&mut m, &e.out("s_ready_o"));
    out.drive(
        &mut m,
        &c.out("m_valid_o"),
        &[("sector", c.out("m_sector_o")), ("err", err.q())],
    );
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosim::base_xor::{measure, run_clean, top, StimConfig, Unit};
    use crate::cosim::dut::{Dut, SimDut};
    use crate::cosim::run::RunConfig;
    use crate::cosim::run::Stimulus;
    use crate::hdl::expr::{BinOp, Node};
    use crate::hdl::module::SigKind;
    use crate::model::base_xor::{zdr_decode, zdr_encode};

    fn params(yaml: &str) -> BaseXorRtlParams {
        let p: BaseXorRtlParams = serde_yaml::from_str(yaml).unwrap();
        p.validate().unwrap();
        p
    }

    /// One parameter set per decoder structure, DBI width and register option.
    const SETS: &[&str] = &[
        "{}",
        "{scheme: nbyte, n_bytes: 2, zdr: false}",
        "{scheme: nbyte, n_bytes: 2, zdr: true, dbi_group: 0}",
        "{scheme: nbyte, n_bytes: 4, zdr: true, dbi_group: 16}",
        "{scheme: nbyte, n_bytes: 4, zdr: false, dec_prefix: ripple, pipe: false}",
        "{scheme: nbyte, n_bytes: 4, zdr: true, fixed_base: true, dbi_group: 32}",
        "{scheme: nbyte, n_bytes: 8, zdr: true}",
        "{scheme: nbyte, n_bytes: 8, zdr: false, fixed_base: true, pipe: false}",
        "{scheme: universal, zdr: false}",
        "{scheme: universal, zdr: false, dec_prefix: ripple}",
        "{scheme: universal, zdr: true, dec_style: serial, pipe: false}",
        "{scheme: universal, t_bytes: 16, stages: 3}",
        "{scheme: universal, t_bytes: 16, stages: 3, half_order: address, zdr_skip_zero_base: true}",
        "{scheme: universal, t_bytes: 64, stages: 4, zdr_skip_zero_base: true, dbi_group: 16}",
        "{scheme: universal, t_bytes: 64, stages: 2, zdr_bits: 64, zdr_const: 0x10}",
        "{scheme: none, dbi_group: 8}",
        // The structures whose Verilator runs are in the long tier (verif/configs/).
        "{zdr: false, pipe: false}",
        "{zdr: false, dec_prefix: ripple, dbi_group: 16}",
        "{scheme: nbyte, n_bytes: 4, zdr: true, dbi_group: 16, pipe: false}",
        "{scheme: nbyte, n_bytes: 4, zdr: false}",
        "{scheme: nbyte, n_bytes: 4, zdr: true, fixed_base: true}",
        "{scheme: nbyte, n_bytes: 8, zdr: true, pipe: false}",
        "{scheme: nbyte, n_bytes: 8, zdr: false, dbi_group: 0}",
        "{t_bytes: 16, stages: 3, dec_style: serial, half_order: address}",
        "{scheme: nbyte, n_bytes: 2, dbi_group: 32}",
        "{t_bytes: 16, stages: 3, dbi_group: 16, zdr_skip_zero_base: true}",
        "{dec_style: serial, dbi_group: 32}",
        "{scheme: nbyte, n_bytes: 4, zdr: false, fixed_base: true, dbi_group: 32}",
        "{scheme: nbyte, n_bytes: 2, dbi_group: 32, zdr_skip_zero_base: true, half_order: address}",
        "{scheme: nbyte, n_bytes: 8, zdr_bits: 64, dbi_group: 32}",
    ];

    fn check(p: &BaseXorRtlParams, unit: Unit, sectors: u64, seed: u64) {
        let mut dut = SimDut::new(&top(p, unit).unwrap()).unwrap();
        let cfg = StimConfig::of(&RunConfig {
            lines: sectors,
            seed,
            ..RunConfig::default()
        });
        let st = run_clean(&mut dut, p, unit, &cfg).unwrap();
        assert_eq!(st.lines, sectors);
    }

    #[test]
    fn interpreter_matches_model_for_every_structure() {
        for (i, y) in SETS.iter().enumerate() {
            let p = params(y);
            check(&p, Unit::Encoder, 150, i as u64);
            check(&p, Unit::Decoder, 150, 100 + i as u64);
        }
    }

    #[test]
    fn interpreter_serdes_and_loopback() {
        for y in [
            "{}",
            "{dbi_group: 0, pipe: false}",
            "{scheme: nbyte, n_bytes: 2, dbi_group: 0, pipe: false}",
            "{t_bytes: 16, stages: 3, dbi_group: 16}",
            "{t_bytes: 64, stages: 4, dbi_group: 32}",
        ] {
            let p = params(y);
            check(&p, Unit::Serializer, 60, 1);
            check(&p, Unit::Deserializer, 60, 2);
            check(&p, Unit::Loopback, 60, 3);
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        for y in [
            "{t_bytes: 24}",
            "{scheme: nbyte, n_bytes: 3}",
            "{stages: 5}",
            // Keys the scheme does not use are checked too.
            "{scheme: universal, n_bytes: 3}",
            "{scheme: nbyte, stages: 9}",
            "{scheme: none, n_bytes: 16}",
            "{dbi_group: 4}",
            "{scheme: nbyte, n_bytes: 2, zdr_bits: 32}",
            "{t_bytes: 64, dbi_group: 8, zdr_const: 0x100000000}",
        ] {
            let p: BaseXorRtlParams = serde_yaml::from_str(y).unwrap();
            let e = encoder(&p).unwrap_err().to_string();
            assert!(e.contains("invalid parameter"), "{}: {}", y, e);
        }
    }

    /// Every 16-bit input against several bases (0, C, 1, all ones, random) through the RTL
    /// ZDR words, and the decode of every 16-bit code (FORMATS §5: exhaustive 16-bit round trip).
    #[test]
    fn zdr_words_exhaustive_16_bit() {
        for skip in [false, true] {
            let c = 0x4000u64;
            let mut enc = SimDut::new(&zdr_enc_word(16, c, skip).unwrap()).unwrap();
            let mut dec = SimDut::new(&zdr_dec_word(16, c, skip).unwrap()).unwrap();
            let (ex, eb, ey) = (
                enc.port("x_i").unwrap(),
                enc.port("base_i").unwrap(),
                enc.port("y_o").unwrap(),
            );
            let (dy, db, dx) = (
                dec.port("y_i").unwrap(),
                dec.port("base_i").unwrap(),
                dec.port("x_o").unwrap(),
            );
            for base in [0u64, c, 1, 0xffff, 0x4001, 0x1234] {
                enc.set_u64(eb, base);
                dec.set_u64(db, base);
                for x in 0..=0xffffu64 {
                    enc.set_u64(ex, x);
                    enc.eval();
                    let y = enc.get_u64(ey);
                    let want = if skip && base == 0 {
                        x ^ base
                    } else {
                        zdr_encode(x, base, c)
                    };
                    assert_eq!(y, want, "enc x={:#x} base={:#x} skip={}", x, base, skip);
                    dec.set_u64(dy, x);
                    dec.eval();
                    let want = if skip && base == 0 {
                        x ^ base
                    } else {
                        zdr_decode(x, base, c)
                    };
                    assert_eq!(dec.get_u64(dx), want, "dec y={:#x} base={:#x}", x, base);
                }
            }
        }
    }

    /// Longest path to output `port`, in `weight`ed operators; an instance whose module
    /// `inst` weighs counts as one operator, other instances are entered (conservatively:
    /// their internal depth is added to the deepest of their inputs). Registers cut paths.
    fn depth(
        m: &Module,
        port: &str,
        weight: &dyn Fn(&Node) -> u32,
        inst: &dyn Fn(&Module) -> Option<u32>,
    ) -> u32 {
        fn sig(
            m: &Module,
            i: usize,
            memo: &mut HashMap<usize, u32>,
            weight: &dyn Fn(&Node) -> u32,
            inst: &dyn Fn(&Module) -> Option<u32>,
        ) -> u32 {
            if let Some(d) = memo.get(&i) {
                return *d;
            }
            let s = &m.signals[i];
            let d = match s.kind {
                SigKind::Input | SigKind::Reg => 0,
                SigKind::Wire | SigKind::Output => {
                    expr(m, s.driver.as_ref().expect("driven"), memo, weight, inst)
                }
                SigKind::InstOut => {
                    let (ins, port) = m
                        .instances
                        .iter()
                        .find_map(|x| {
                            x.outputs
                                .iter()
                                .find(|(_, id)| id.index == i)
                                .map(|(p, _)| (x, p.clone()))
                        })
                        .expect("instance output");
                    let din = ins
                        .inputs
                        .iter()
                        .map(|(_, e)| expr(m, e, memo, weight, inst))
                        .max()
                        .unwrap_or(0);
                    din + match inst(&ins.module) {
                        Some(k) => k,
                        None => depth(&ins.module, &port, weight, inst),
                    }
                }
            };
            memo.insert(i, d);
            d
        }
        fn expr(
            m: &Module,
            e: &Expr,
            memo: &mut HashMap<usize, u32>,
            weight: &dyn Fn(&Node) -> u32,
            inst: &dyn Fn(&Module) -> Option<u32>,
        ) -> u32 {
            let mut rec = |x: &Expr| expr(m, x, memo, weight, inst);
            let below = match e.node() {
                Node::Sig { id, .. } => return sig(m, id.index, memo, weight, inst),
                Node::Const(_) | Node::Param { .. } => 0,
                Node::Slice { base, .. } => rec(base),
                Node::Concat(parts) => parts.iter().map(&mut rec).max().unwrap_or(0),
                Node::Repeat(x, _)
                | Node::Not(x)
                | Node::Reduce(_, x)
                | Node::ShiftConst(_, x, _) => rec(x),
                Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::ShiftVar(_, a, b) => {
                    rec(a).max(rec(b))
                }
                Node::Mux(s, t, f) => rec(s).max(rec(t)).max(rec(f)),
                Node::MemRead { addr, .. } => rec(addr),
            };
            below + weight(e.node())
        }
        let i = m.signal_index(port).expect("port");
        sig(m, i, &mut HashMap::new(), weight, inst)
    }

    /// XOR levels between signals (an XOR with a constant only flips bits).
    fn xor_levels(m: &Module) -> u32 {
        depth(
            m,
            "dout_o",
            &|n| match n {
                Node::Bin(BinOp::Xor, a, b) if a.as_const().is_none() && b.as_const().is_none() => {
                    1
                }
                _ => 0,
            },
            &|sub| sub.name.starts_with("zdr_").then_some(0),
        )
    }

    /// ZDR words on the longest path.
    fn zdr_levels(m: &Module) -> u32 {
        depth(m, "dout_o", &|_| 0, &|sub| {
            sub.name.starts_with("zdr_").then_some(1)
        })
    }

    /// Structural depth of every core against FORMATS §3 / Table II: encoders 1 level; decoders
    /// T/N − 1 (serial) or ⌈log2(T/N)⌉ (prefix) for N-byte, 1 for a fixed base, S (serial)
    /// or ⌈log2(S+1)⌉ (log tree, carry-select data path) for Universal.
    #[test]
    fn xor_and_zdr_depth_match_the_structure() {
        let cases: &[(&str, u32, u32)] = &[
            // (params, decoder XOR levels, decoder ZDR levels)
            ("{scheme: nbyte, n_bytes: 2, zdr: false}", 4, 0),
            ("{scheme: nbyte, n_bytes: 4, zdr: false}", 3, 0),
            ("{scheme: nbyte, n_bytes: 8, zdr: false}", 2, 0),
            (
                "{scheme: nbyte, n_bytes: 2, zdr: false, dec_prefix: ripple}",
                15,
                0,
            ),
            (
                "{scheme: nbyte, n_bytes: 4, zdr: false, dec_prefix: ripple}",
                7,
                0,
            ),
            (
                "{scheme: nbyte, n_bytes: 8, zdr: false, dec_prefix: ripple}",
                3,
                0,
            ),
            (
                "{scheme: nbyte, n_bytes: 4, zdr: false, dec_prefix: kogge-stone}",
                3,
                0,
            ),
            (
                "{scheme: nbyte, n_bytes: 4, zdr: false, dec_prefix: brent-kung}",
                4,
                0,
            ),
            ("{scheme: nbyte, n_bytes: 2, zdr: true}", 0, 15),
            ("{scheme: nbyte, n_bytes: 4, zdr: true}", 0, 7),
            ("{scheme: nbyte, n_bytes: 8, zdr: true}", 0, 3),
            (
                "{scheme: nbyte, n_bytes: 4, zdr: false, fixed_base: true}",
                1,
                0,
            ),
            (
                "{scheme: nbyte, n_bytes: 4, zdr: true, fixed_base: true}",
                0,
                1,
            ),
            ("{scheme: universal, zdr: false}", 2, 0),
            ("{scheme: universal, zdr: false, dec_prefix: ripple}", 3, 0),
            ("{scheme: universal, zdr: true, dec_style: serial}", 0, 3),
            (
                "{scheme: universal, zdr: true, dec_style: speculative}",
                2,
                0,
            ),
            (
                "{scheme: universal, t_bytes: 16, stages: 3, zdr: false}",
                2,
                0,
            ),
            (
                "{scheme: universal, t_bytes: 16, stages: 3, dec_style: serial}",
                0,
                3,
            ),
            (
                "{scheme: universal, t_bytes: 64, stages: 4, zdr: false}",
                3,
                0,
            ),
            (
                "{scheme: universal, t_bytes: 64, stages: 4, dec_style: serial}",
                0,
                4,
            ),
            ("{scheme: universal, t_bytes: 64, stages: 4}", 3, 0),
        ];
        for (y, xl, zl) in cases {
            let p = params(y);
            let enc = xform_enc(&p).unwrap().unwrap();
            let dec = xform_dec(&p).unwrap().unwrap();
            if p.zdr {
                assert_eq!((xor_levels(&enc), zdr_levels(&enc)), (0, 1), "enc {}", y);
            } else {
                assert_eq!((xor_levels(&enc), zdr_levels(&enc)), (1, 0), "enc {}", y);
            }
            assert_eq!(
                (xor_levels(&dec), zdr_levels(&dec)),
                (*xl, *zl),
                "dec {} ({})",
                y,
                dec.name
            );
            // The paper's serial structure, for reference.
            let serial = p.bx().decode_depth();
            assert!(xl.max(zl) <= &serial, "{}", y);
        }
    }

    #[test]
    fn timing_full_rate_and_latency() {
        for (y, lat) in [("{}", 2), ("{pipe: false}", 1)] {
            let p = params(y);
            for unit in [Unit::Encoder, Unit::Decoder] {
                let mut dut = SimDut::new(&top(&p, unit).unwrap()).unwrap();
                let t = measure(&mut dut, &p, unit).unwrap();
                assert_eq!(t.latency_cycles, lat, "{:?} {} {:?}", unit, y, t);
                assert!(t.in_beats_per_cycle > 0.99, "{:?} {} {:?}", unit, y, t);
            }
        }
        let p = params("{}");
        let mut dut = SimDut::new(&serializer(&p).unwrap()).unwrap();
        let t = measure(&mut dut, &p, Unit::Serializer).unwrap();
        assert_eq!(t.latency_cycles, 2, "{:?}", t);
        assert!(t.raw_bytes_per_cycle > 3.99, "a beat every cycle: {:?}", t);
        let mut dut = SimDut::new(&deserializer(&p).unwrap()).unwrap();
        let t = measure(&mut dut, &p, Unit::Deserializer).unwrap();
        assert_eq!(t.latency_cycles, 9, "{:?}", t);
        assert!(t.in_beats_per_cycle > 0.99, "{:?}", t);
    }

    #[test]
    fn module_names_carry_the_parameters() {
        let names = |y: &str| {
            let p = params(y);
            (
                encoder(&p).unwrap().name.clone(),
                decoder(&p).unwrap().name.clone(),
            )
        };
        assert_eq!(
            names("{}"),
            (
                "bxt_enc_t32_u3_z32_d8_p1".into(),
                "bxt_dec_t32_u3_z32_spec_d8_p1".into()
            )
        );
        assert_eq!(
            names("{scheme: nbyte, n_bytes: 2, fixed_base: true, half_order: address, dbi_group: 0, pipe: false}"),
            ("bxt_enc_t32_n2_fb_z16_ha_d0_p0".into(), "bxt_dec_t32_n2_fb_z16_ha_d0_p0".into())
        );
        assert_eq!(
            names("{scheme: nbyte, zdr: false, dec_prefix: kogge-stone}").1,
            "bxt_dec_t32_n4_ks_d8_p1"
        );
        assert_eq!(
            xform_dec(&params(
                "{zdr_const: 0x8, zdr_skip_zero_base: true, dec_style: serial}"
            ))
            .unwrap()
            .unwrap()
            .name,
            "bx_univ_dec_t32_s3_z32_c8_skz_ser"
        );
    }
}
