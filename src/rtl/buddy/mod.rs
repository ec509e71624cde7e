//! Buddy Compression's small units (docs/FORMATS.md, Buddy §2.2, §3.2, §7 items 1, 4, 5) and the
//! engine's parameters: `zero_detect`, `size_mapper` and `buddy_addr_gen`, bit-exact with
//! [`crate::model::buddy`]. The BPC datapaths are in [`super::bpc`].
//!
//! The size mapper and the address generator are combinational; as units they pass the
//! handshake through (`m_valid_o = s_valid_i`, `s_ready_o = m_ready_i`), so they co-simulate
//! on the stream runner with latency 1.

use super::bpc::{BpcRtlParams, ENTRY_BITS, SPEC};
use crate::hdl::blocks::{add_csel, add_join, add_split, any_of, csa_reduce, or_tree, sum_ks};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder};
use crate::hdl::{Pipeline, Policy};
use crate::model::buddy::{split, AddrParams, PageSize, SizeCode, Target, SECTOR_BYTES};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub mod mc_ctrl;

/// Parameters of the Buddy engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct BuddyRtlParams {
    /// The BPC compressor and decompressor.
    pub bpc: BpcRtlParams,
    /// Address generation (page size, widths).
    pub addr: AddrParams,
    /// The per-MC metadata-cache slice.
    pub meta: MetaSliceParams,
    /// The per-MC request splitter and merger (`buddy_mc_ctrl`).
    pub mc: McCtrlParams,
    /// Register stages of the address generator as a unit: 0 (combinational, the default;
    /// the handshake passes through), 1 (a registered output), 2 (the carry-save rows, a
    /// register, then the two adders) or 3 (the rows; each adder's three blocks, the higher
    /// ones for both carries in; the blocks chosen). The splitter always instantiates the
    /// combinational one.
    pub addr_stages: u32,
}

/// The memory controllers (`buddy: {mc: {...}}`): entries are interleaved over `mcs`
/// controllers by their metadata index (`index mod mcs`, as `model::buddy::system`), so one
/// controller's slice holds the codes of every `mcs`-th entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McCtrlParams {
    /// Memory controllers (a power of two, 1-64; 8 in the paper's GPU).
    pub mcs: u32,
}

impl Default for McCtrlParams {
    fn default() -> Self {
        McCtrlParams { mcs: 8 }
    }
}

/// The metadata-cache slice (FORMATS §3.4, §7 item 6): a configuration of the shared cache +
/// MSHR controller (`rtl::cache`) holding 4-bit size codes. Default 4 KB per MC (§III-C,
/// §IV-A); the paper's "64 KB in 8 slices" reading is `size_bytes: 8192` (§8 item 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetaSliceParams {
    /// Bytes per slice (a power of two).
    pub size_bytes: u32,
    /// Ways (1-4).
    pub ways: u32,
    /// Line bytes (the codes of 256 entries at 128 B).
    pub line_bytes: u32,
    /// Sector bytes (a 32 B sector holds the codes of 64 entries).
    pub sector_bytes: u32,
    /// MSHR entries.
    pub mshrs: u32,
    /// Lookups one MSHR parks.
    pub mshr_slots: u32,
    /// Width of the per-MC entry index.
    pub entry_bits: u32,
}

impl Default for MetaSliceParams {
    fn default() -> Self {
        let c = crate::model::cache::CacheParams::buddy_slice();
        MetaSliceParams {
            size_bytes: c.sets * c.ways * c.line_bytes,
            ways: c.ways,
            line_bytes: c.line_bytes,
            sector_bytes: c.sector_bytes,
            mshrs: c.mshrs,
            mshr_slots: c.mshr_slots,
            // 2^16 buddy offsets x 2^14 entries per 2 MB page over 8 MCs (also 2^21 x 2^9
            // for 64 KB pages).
            entry_bits: 27,
        }
    }
}

impl MetaSliceParams {
    /// The shared controller's parameters.
    pub fn rtl(&self) -> crate::rtl::cache::CacheRtlParams {
        let sets = self.size_bytes / (self.ways.max(1) * self.line_bytes.max(1));
        crate::rtl::cache::CacheRtlParams {
            cache: crate::model::cache::CacheParams {
                sets,
                ways: self.ways,
                line_bytes: self.line_bytes,
                sector_bytes: self.sector_bytes,
                field_bits: 4,
                mshrs: self.mshrs,
                mshr_slots: self.mshr_slots,
            },
            field_addr_bits: self.entry_bits,
            id_bits: 8,
        }
    }

    /// Checks the geometry.
    pub fn validate(&self) -> Result<(), String> {
        if self.ways == 0
            || self.line_bytes == 0
            || !self.size_bytes.is_multiple_of(self.ways * self.line_bytes)
        {
            return Err(format!(
                "meta.size_bytes = {} must be a multiple of ways x line_bytes",
                self.size_bytes
            ));
        }
        self.rtl().validate().map_err(|e| format!("meta: {e}"))
    }

    /// One-line description for reports.
    pub fn describe(&self) -> String {
        let r = self.rtl().cache;
        format!(
            "metadata slice {} B: {} sets x {} ways x {} B lines, {} B sectors, {} MSHRs x {}, \
             {}-bit entry index",
            self.size_bytes,
            r.sets,
            r.ways,
            r.line_bytes,
            r.sector_bytes,
            r.mshrs,
            r.mshr_slots,
            self.entry_bits
        )
    }
}

impl BuddyRtlParams {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        self.bpc.validate()?;
        self.meta.validate()?;
        if !self.mc.mcs.is_power_of_two() || self.mc.mcs > 64 {
            return Err(format!(
                "mc.mcs = {} must be a power of two in 1..=64",
                self.mc.mcs
            ));
        }
        if self.addr_stages > 3 {
            return Err(format!(
                "addr_stages = {} must be 0, 1, 2 or 3",
                self.addr_stages
            ));
        }
        self.addr.validate().map_err(|e| e.to_string())
    }

    /// One-line description for reports.
    pub fn describe(&self) -> String {
        format!(
            "{}; {} pages, PA {} bits, buddy offset {} bits",
            self.bpc.describe(),
            match self.addr.page {
                PageSize::M2 => "2 MB",
                PageSize::K64 => "64 KB",
            },
            self.addr.pa_bits,
            self.addr.boff_bits
        ) + &match self.addr_stages {
            0 => String::new(),
            n => format!(", address generator {n} stage(s)"),
        }
    }

    /// Entry-index bits within a page.
    pub fn entry_bits(&self) -> u32 {
        self.addr.entries_per_page().trailing_zeros()
    }
}

fn err(module: &str, msg: String) -> HdlError {
    HdlError {
        module: module.into(),
        problems: vec![msg],
    }
}

/// `zero_detect`: `is_zero_o = ~|blk_i` (an OR tree; the compressor has its own, from the
/// planes).
pub fn zero_detect() -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new("buddy_zero_detect");
    m.header("Generator: hwzip::rtl::buddy::zero_detect");
    m.header(format!("Spec: {SPEC} §7 item 1"));
    let blk = m.input("blk_i", ENTRY_BITS);
    let lanes: Vec<Expr> = blk.lanes(32).iter().map(|w| w.any()).collect();
    let any = m.wire("any_word", &Expr::cat_lsb(&lanes));
    m.output_expr("is_zero_o", &!any.any());
    m.finish()
}

/// `size_mapper`: metadata code and target code in; the device and buddy pieces read
/// ([`split`]) out: `dev_mask`, `bud_mask`, `n_dev`, `n_bud`, `fits_dev`, `is_zero`, `is_raw`,
/// and `err` for a reserved code (0x6-0xF, target 5-7; every other output 0).
///
/// A table of the 6 × 5 defined pairs, each a product of two one-hot decodes.
pub fn size_mapper(p: &BuddyRtlParams) -> Result<Arc<Module>, HdlError> {
    let name = "buddy_size_mapper";
    p.validate().map_err(|e| err(name, e))?;
    let mut m = ModuleBuilder::new(name);
    m.header("Generator: hwzip::rtl::buddy::size_mapper");
    m.header(format!(
        "Spec: {SPEC} §2.2 (size codes, targets, split), §7 item 4"
    ));
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("size", 4), ("tgt", 3)]));
    let out = stream::output_port(&mut m, "m");
    let out_ready = out.ready();
    let size = s_in.field("size");
    let tgt = s_in.field("tgt");
    // Output layout: dev_mask 4, bud_mask 4, n_dev 3, n_bud 3, fits 1, zero 1, raw 1.
    let mut terms = Vec::new();
    let mut known = Vec::new();
    for c in SizeCode::ALL {
        let cs = m.wire(
            &format!("code_{:x}", c.bits()),
            &size.eq_lit(c.bits() as u64),
        );
        for t in Target::ALL {
            let hit = &cs & &tgt.eq_lit(t.code() as u64);
            let sp = split(c, t);
            let v = (sp.dev_mask as u64)
                | (sp.bud_mask as u64) << 4
                | (sp.n_dev() as u64) << 8
                | (sp.n_bud() as u64) << 11
                | (sp.fits_dev as u64) << 14
                | (sp.is_zero as u64) << 15
                | (sp.is_raw as u64) << 16;
            terms.push(hit.gate(&Expr::lit(17, v)));
            known.push(hit);
        }
    }
    let v = m.wire("split", &or_tree(terms, 17));
    let bad = m.wire("reserved", &!crate::hdl::blocks::any_of(&known));
    out.drive(
        &mut m,
        &s_in.valid,
        &[
            ("dev_mask", v.slice(0, 4)),
            ("bud_mask", v.slice(4, 4)),
            ("n_dev", v.slice(8, 3)),
            ("n_bud", v.slice(11, 3)),
            ("fits_dev", v.bit(14)),
            ("is_zero", v.bit(15)),
            ("is_raw", v.bit(16)),
            ("err", bad),
        ],
    );
    s_in.accept(&mut m, &out_ready);
    m.finish()
}

/// The non-adjacent form of `c`: its signed binary digits `(bit, negative)`, lowest first
/// (at most half the bits set, none adjacent: 96 = 128 - 32, 120 = 128 - 8).
fn naf(mut c: u64) -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    let mut b = 0;
    while c != 0 {
        if c & 1 == 1 {
            let neg = c & 3 == 3;
            out.push((b, neg));
            c = if neg { c + 1 } else { c - 1 };
        }
        c >>= 1;
        b += 1;
    }
    out
}

/// `buddy_addr_gen`: entry `e` of a page, the page's device base and buddy offset, its target,
/// the GBBR and a 32 B piece index `k`: `dev_addr = base + e·D + 32k`, `bud_addr = GBBR +
/// off·page + e·(128 − D) + 32k` ([`AddrParams::device_addr`], `buddy_addr`), and
/// `is_buddy` = stream bytes from `32k` lie past the device slot (`32k ≥ D`); `err` for a
/// reserved target (addresses 0). The products by the constants D and 128 − D are signed
/// shifted copies of `e` selected by the target, summed in carry-save rows and one
/// Kogge-Stone adder.
///
/// With `addr_stages` 1-3 the unit is a pipeline (module suffix `_s<n>`): 1 registers the
/// outputs; 2 also registers the two sums' carry-save pairs, so the adders have a stage of
/// their own; 3 splits each adder over two stages ([`add_split`], three blocks).
pub fn addr_gen(p: &BuddyRtlParams) -> Result<Arc<Module>, HdlError> {
    let a = p.addr;
    let name = format!(
        "buddy_addr_gen_{}{}",
        match a.page {
            PageSize::M2 => "2m",
            PageSize::K64 => "64k",
        },
        match p.addr_stages {
            0 => String::new(),
            n => format!("_s{n}"),
        }
    );
    p.validate().map_err(|e| err(&name, e))?;
    let pa = a.pa_bits;
    let eb = p.entry_bits();
    let mut m = ModuleBuilder::new(&name);
    m.header("Generator: hwzip::rtl::buddy::addr_gen");
    m.header(format!("Parameters: {}", p.describe()));
    m.header(format!(
        "Spec: {SPEC} §3.1-§3.2 (GBBR, buddy-slot formula), §7 item 5"
    ));
    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[
            ("entry", eb),
            ("base", pa),
            ("boff", a.boff_bits),
            ("tgt", 3),
            ("gbbr", pa),
            ("k", 2),
        ]),
    );
    let out = stream::output_port(&mut m, "m");
    let out_ready = out.ready();
    let e = m.wire("e", &s_in.field("entry"));
    let k32 = Expr::cat(&[s_in.field("k"), Expr::zero(5)]).zext(pa);
    let k32 = m.wire("k32", &k32);
    let tgt = s_in.field("tgt");
    // e · c for each target's constant c as signed digits (c = Σ ±2^b, non-adjacent form:
    // 96 = 128 - 32, 120 = 128 - 8), each digit a shifted copy of e, gated by the target's
    // one-hot hit. The targets are exclusive, so digit j of every target shares one operand
    // (an OR); a negative digit is ~(e << b) plus a carry-in. Both sums are carry-save rows
    // and one Kogge-Stone adder (`hdl::blocks::sum_ks`): no chain of `+`.
    let mut known = Vec::new();
    let mut isb_terms = Vec::new();
    let mut dev_digits: Vec<Vec<Expr>> = Vec::new();
    let mut bud_digits: Vec<Vec<Expr>> = Vec::new();
    let mut dev_cin = Vec::new();
    let mut bud_cin = Vec::new();
    let kk = s_in.field("k");
    let shifted = |b: u32| Expr::cat(&[e.clone(), Expr::zero(b)]).resize(pa);
    let add_digits = |hit: &Expr, c: u64, digits: &mut Vec<Vec<Expr>>, cin: &mut Vec<Expr>| {
        let mut negs = 0u64;
        for (j, (b, neg)) in naf(c).into_iter().enumerate() {
            let t = if neg { !shifted(b) } else { shifted(b) };
            negs += neg as u64;
            if digits.len() <= j {
                digits.push(Vec::new());
            }
            digits[j].push(hit.gate(&t));
        }
        if negs > 0 {
            cin.push(hit.gate(&Expr::lit(pa, negs)));
        }
    };
    for t in Target::ALL {
        let hit = m.wire(&format!("tgt_{}", t.code()), &tgt.eq_lit(t.code() as u64));
        let d = t.device_bytes() as u64;
        add_digits(&hit, d, &mut dev_digits, &mut dev_cin);
        add_digits(&hit, 128 - d, &mut bud_digits, &mut bud_cin);
        // 32k >= D: k >= ceil(D / 32) (16x: k >= 1).
        let kmin = d.div_ceil(SECTOR_BYTES as u64);
        let isb = if kmin > 3 {
            Expr::zero(1)
        } else {
            kk.ge(&Expr::lit(2, kmin))
        };
        isb_terms.push(hit.gate(&isb));
        known.push(hit);
    }
    let operands = |m: &mut ModuleBuilder, nm: &str, digits: Vec<Vec<Expr>>, cin: Vec<Expr>| {
        let mut v: Vec<Expr> = digits
            .into_iter()
            .enumerate()
            .map(|(j, d)| m.wire(&format!("{nm}_d{j}"), &or_tree(d, pa)))
            .collect();
        if !cin.is_empty() {
            v.push(m.wire(&format!("{nm}_cin"), &or_tree(cin, pa)));
        }
        v
    };
    let ok = m.wire("tgt_ok", &any_of(&known));
    let page_bits = a.page.bytes().trailing_zeros();
    let off = Expr::cat(&[s_in.field("boff"), Expr::zero(page_bits)]).resize(pa);
    let mut dev_ops = vec![s_in.field("base"), k32.clone()];
    dev_ops.extend(operands(&mut m, "e_dev", dev_digits, dev_cin));
    let mut bud_ops = vec![s_in.field("gbbr"), off, k32.clone()];
    bud_ops.extend(operands(&mut m, "e_bud", bud_digits, bud_cin));
    let isb = m.wire("is_buddy", &(&ok & &any_of(&isb_terms)));
    let mut pl =
        (p.addr_stages > 0).then(|| Pipeline::new(&mut m, "pipe", Policy::Bubble, &s_in.valid));
    let (dev, bud, ok, isb) = match &mut pl {
        Some(pl) if p.addr_stages >= 2 => {
            let ops = (dev_ops.as_slice(), bud_ops.as_slice());
            pipelined_sums(&mut m, pl, p.addr_stages, ops, (&ok, &isb))
        }
        _ => (
            sum_ks(&mut m, "dev_sum", &dev_ops, pa),
            sum_ks(&mut m, "bud_sum", &bud_ops, pa),
            ok,
            isb,
        ),
    };
    let Some(mut pl) = pl else {
        out.drive(
            &mut m,
            &s_in.valid,
            &[
                ("dev_addr", ok.gate(&dev)),
                ("bud_addr", ok.gate(&bud)),
                ("is_buddy", isb),
                ("err", !&ok),
            ],
        );
        s_in.accept(&mut m, &out_ready);
        return m.finish();
    };
    let st = pl.stage(&mut m, "out");
    let fields = [
        ("dev_addr", st.reg(&mut m, "dev_addr_q", &ok.gate(&dev))),
        ("bud_addr", st.reg(&mut m, "bud_addr_q", &ok.gate(&bud))),
        ("is_buddy", st.reg(&mut m, "is_buddy_o_q", &isb)),
        ("err", st.reg(&mut m, "err_q", &!&ok)),
    ];
    pl.finish_ports(&mut m, s_in, out, &fields);
    m.finish()
}

/// The address generator's sums over `stages` (2 or 3) register stages: the carry-save
/// rows, then the two adders (2), or each adder's 16-bit blocks for both carries in and then
/// the blocks chosen (3). Returns the sums and the target's `ok` and `is_buddy`, delayed to
/// the sums' stage.
fn pipelined_sums(
    m: &mut ModuleBuilder,
    pl: &mut Pipeline,
    stages: u32,
    (dev_ops, bud_ops): (&[Expr], &[Expr]),
    (ok, isb): (&Expr, &Expr),
) -> (Expr, Expr, Expr, Expr) {
    let pa = dev_ops[0].width();
    m.comment("Stage 1: both sums reduced to carry-save pairs");
    let st = pl.stage(m, "rows");
    let pair = |m: &mut ModuleBuilder, nm: &str, ops: &[Expr]| -> [Expr; 2] {
        let r = csa_reduce(m, nm, &ops.iter().map(|o| o.resize(pa)).collect::<Vec<_>>());
        [0, 1].map(|k| st.reg(m, &format!("{nm}_{k}_q"), &r[k]))
    };
    let dv = pair(m, "dev_sum", dev_ops);
    let bd = pair(m, "bud_sum", bud_ops);
    let okq = st.reg(m, "tgt_ok_q", ok);
    let isbq = st.reg(m, "is_buddy_q", isb);
    if stages == 2 {
        m.comment("Stage 2: the two adders (16-bit carry-select blocks)");
        let dev = add_csel(m, "dev_sum", &dv[0], &dv[1], 16);
        let bud = add_csel(m, "bud_sum", &bd[0], &bd[1], 16);
        return (dev, bud, okq, isbq);
    }
    m.comment("Stage 2: each adder's low block, and its higher blocks for both carries in");
    let st = pl.stage(m, "blocks");
    // Three 16-bit blocks: a block's add is short enough for the stage.
    let blocks = |m: &mut ModuleBuilder, nm: &str, v: &[Expr; 2]| -> Expr {
        let parts: Vec<Expr> = add_split(m, nm, (&v[0], &v[1]), false, 3)
            .iter()
            .enumerate()
            .map(|(k, e)| st.reg(m, &format!("{nm}_p{k}_q"), e))
            .collect();
        let sum = add_join(m, nm, &parts);
        m.wire(nm, &sum)
    };
    let dev = blocks(m, "dev_sum", &dv);
    let bud = blocks(m, "bud_sum", &bd);
    let okq = st.reg(m, "tgt_ok2_q", &okq);
    let isbq = st.reg(m, "is_buddy2_q", &isbq);
    m.comment("Stage 3: the higher blocks chosen by the carries below them");
    (dev, bud, okq, isbq)
}
