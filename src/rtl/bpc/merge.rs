//! The compressor's radix-4 merge tree: segments, their offsets and group lengths, and the
//! registered offset copies that bound the shifters' select fan-out.

use super::arith::{csa_sum, shl_grow};
use super::{LANES_PER_COPY, SPEC};
use crate::hdl::blocks::or_tree;
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One segment of the merge tree: stream-order bits, a length, and its offset within the
/// group of four it merges into next (the sum of its elder siblings' lengths), as equal
/// copies: registered offsets that steer a wide shifter are replicated, one copy per
/// [`LANES_PER_COPY`] output bits (`docs/TOOLCHAIN.md`, bounded fan-out).
pub(super) struct Seg {
    pub(super) bits: Expr,
    pub(super) len: Expr,
    pub(super) off: Vec<Expr>,
}

/// Sets each segment's offset within its group of four (the sum of the lengths before it)
/// and returns each group's length (the next level's segment lengths), by one instance of
/// [`sums_module`] per group (`u_<prefix>_sums<h>`). The group lengths are registered with
/// the segments ([`reg_glens`]), so the next stage's offsets and sums start from registers
/// and no stage adds more than four lengths.
pub(super) fn offsets_and_sums(
    m: &mut ModuleBuilder,
    mods: &mut SubModules,
    prefix: &str,
    segs: &mut [Seg],
) -> Result<Vec<Expr>, HdlError> {
    let lw = segs.iter().map(|s| s.len.width()).max().unwrap_or(1) + 2;
    let mut sums = Vec::new();
    for (h, grp) in segs.chunks_mut(4).enumerate() {
        if let [s] = grp {
            // A group of one: its offset is 0 and its length the segment's.
            s.off = vec![Expr::zero(1)];
            sums.push(s.len.zext(lw));
            continue;
        }
        let module = sub_module(mods, &sums_name(grp.len(), lw), || {
            sums_module(grp.len(), lw)
        })?;
        let inputs: Vec<(String, Expr)> = grp
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("len{i}_i"), s.len.zext(lw)))
            .collect();
        let refs: Vec<(&str, Expr)> = inputs
            .iter()
            .map(|(n, e)| (n.as_str(), e.clone()))
            .collect();
        let u = m.instance(&module, &format!("u_{prefix}_sums{h}"), &refs);
        for (i, s) in grp.iter_mut().enumerate() {
            s.off = if i == 0 {
                vec![Expr::zero(1)]
            } else {
                vec![u.out(&format!("off{i}_o"))]
            };
        }
        sums.push(u.out("sum_o"));
    }
    Ok(sums)
}

fn sums_name(k: usize, lw: u32) -> String {
    format!("bpc_len_sums_n{k}_w{lw}")
}

/// `bpc_len_sums_n<k>_w<w>`: `k` segment lengths in; out, each segment's offset (the sum
/// of the lengths before it, `off<i>_o` for i >= 1) and the group's length `sum_o`, each by
/// one carry-save sum and one add (modulo 2^w).
fn sums_module(k: usize, lw: u32) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(sums_name(k, lw));
    m.header("Generator: hwzip::rtl::bpc::merge::sums_module");
    m.header(format!("Parameters: {k} lengths of {lw} bits"));
    m.header(format!("Spec: {SPEC} §2.4 (stream order)"));
    let lens: Vec<Expr> = (0..k).map(|i| m.input(&format!("len{i}_i"), lw)).collect();
    for i in 1..k {
        let sum = csa_sum(&mut m, &format!("off{i}_csa"), &lens[..i]);
        m.output_expr(&format!("off{i}_o"), &sum);
    }
    let sum = csa_sum(&mut m, "sum_csa", &lens);
    m.output_expr("sum_o", &sum);
    m.finish()
}

/// Registers group lengths (`<prefix>_glen<h>_q`; the last level's single one is
/// `total_q`, the whole stream's length).
pub(super) fn reg_glens(
    m: &mut ModuleBuilder,
    prefix: &str,
    glens: &[Expr],
    en: &Expr,
) -> Vec<Expr> {
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
pub(super) fn fit_len(m: &mut ModuleBuilder, len: &Expr, w: u32) -> Expr {
    if len.width() > w {
        m.unused(&len.slice(w, len.width() - w));
    }
    len.resize(w)
}

pub(super) fn chunk_segs(segs: Vec<Seg>, k: usize) -> Vec<Vec<Seg>> {
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

/// The copies of the offset of a `bits`-wide segment whose shift grows to `total` bits
/// ([`shl_grow`]) with an `aw`-bit amount: `None` for one register, else for each copy (one
/// per [`LANES_PER_COPY`] outputs) the lowest amount bit it holds (the shifter levels below
/// it do not reach its outputs).
fn copy_lows(bits: u32, total: u32, aw: u32) -> Option<Vec<u32>> {
    // Output width after each shifter level.
    let mut lvl_w = Vec::new();
    let mut cur = bits;
    for k in 0..aw {
        cur = (cur + (1 << k)).min(total);
        lvl_w.push(cur);
    }
    if cur <= 2 * LANES_PER_COPY {
        return None;
    }
    let low = |c: u32| {
        lvl_w
            .iter()
            .position(|w| *w > c * LANES_PER_COPY)
            .expect("the last level reaches every copy") as u32
    };
    Some((0..cur.div_ceil(LANES_PER_COPY)).map(low).collect())
}

/// Registers the offset `off` of a `bits`-wide segment whose shift grows to `total` bits
/// ([`shl_grow`]): one register, or copies as [`merge_module`] describes, each returned
/// full-width (the amount bits a copy does not hold read as 0 and are never selected).
pub(super) fn reg_offset(
    m: &mut ModuleBuilder,
    name: &str,
    off: &Expr,
    bits: u32,
    total: u32,
    en: &Expr,
) -> Vec<Expr> {
    let aw = off.width();
    let Some(lows) = copy_lows(bits, total, aw) else {
        return vec![m.reg_next(&format!("{name}_off_q"), None, off, Some(en))];
    };
    lows.iter()
        .enumerate()
        .map(|(c, &lo)| {
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

/// The sub-modules built so far, by name (each is built once per generator run).
pub(super) type SubModules = BTreeMap<String, Arc<Module>>;

/// The sub-module called `name`, built by `build` the first time.
fn sub_module(
    mods: &mut SubModules,
    name: &str,
    build: impl FnOnce() -> Result<Arc<Module>, HdlError>,
) -> Result<Arc<Module>, HdlError> {
    if let Some(md) = mods.get(name) {
        return Ok(md.clone());
    }
    let md = build()?;
    mods.insert(name.to_string(), md.clone());
    Ok(md)
}

/// Registers a group of segments and concatenates it, by one instance of its merge module
/// ([`merge_module`]; the registers load on `en`, the load of the stage that holds them):
/// segment i shifted up by its offset (the lengths before it), ORed; bits at `cap` (the
/// raw threshold) and above dropped. `len` is the group's length (registered by the stage
/// before).
pub(super) fn merge_group(
    m: &mut ModuleBuilder,
    mods: &mut SubModules,
    name: &str,
    grp: Vec<Seg>,
    len: &Expr,
    cap: u32,
    en: &Expr,
) -> Result<Seg, HdlError> {
    let shape: Vec<(u32, u32)> = grp
        .iter()
        .map(|s| (s.bits.width(), s.off[0].width()))
        .collect();
    let total: u32 = shape.iter().map(|s| s.0).sum::<u32>().min(cap);
    if let [s] = grp.as_slice() {
        let base = name.trim_start_matches("u_");
        let q = m.reg_next(&format!("{base}_bits_q"), None, &s.bits, Some(en));
        return Ok(Seg {
            bits: m.wire(&format!("{base}_bits"), &q.resize(total)),
            len: len.clone(),
            off: vec![Expr::zero(1)],
        });
    }
    let module = sub_module(mods, &merge_name(&shape, cap), || merge_module(&shape, cap))?;
    let mut inputs = vec![("en_i".to_string(), en.clone())];
    for (i, s) in grp.iter().enumerate() {
        inputs.push((format!("seg{i}_i"), s.bits.clone()));
        if i > 0 {
            inputs.push((format!("off{i}_i"), s.off[0].clone()));
        }
    }
    let refs: Vec<(&str, Expr)> = inputs
        .iter()
        .map(|(n, e)| (n.as_str(), e.clone()))
        .collect();
    let u = m.instance(&module, name, &refs);
    Ok(Seg {
        bits: u.out("bits_o"),
        len: len.clone(),
        off: vec![Expr::zero(1)],
    })
}

/// The name of a merge module: each segment's width and (after the first) offset width,
/// and the cap.
fn merge_name(shape: &[(u32, u32)], cap: u32) -> String {
    let mut s = String::from("bpc_merge");
    for (i, (w, aw)) in shape.iter().enumerate() {
        if i == 0 {
            s.push_str(&format!("_w{w}"));
        } else {
            s.push_str(&format!("_w{w}a{aw}"));
        }
    }
    s.push_str(&format!("_c{cap}"));
    s
}

/// `bpc_merge_*`: one merge stage for a group of segments. The segments (`seg<i>_i`,
/// stream order) and their offsets (`off<i>_i`) are registered on `en_i`: an offset that
/// steers more than 64 shifter outputs as one copy per 32 outputs, each holding the amount
/// bits from the shifter level that first reaches its outputs (bounded fan-out). Each
/// registered segment is shifted up by its offset by an LSB-first log shifter and the
/// shifted segments are ORed; `bits_o` is cut at `cap` bits.
fn merge_module(shape: &[(u32, u32)], cap: u32) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(merge_name(shape, cap));
    m.header("Generator: hwzip::rtl::bpc::merge::merge_module");
    m.header(format!(
        "Parameters: segment widths {:?}, raw above {cap} bits",
        shape.iter().map(|s| s.0).collect::<Vec<_>>()
    ));
    m.header(format!(
        "Spec: {SPEC} §2.4 (stream order), docs/TOOLCHAIN.md (bounded fan-out)"
    ));
    let total: u32 = shape.iter().map(|s| s.0).sum::<u32>().min(cap);
    let en = m.input("en_i", 1);
    let mut segs = Vec::new();
    for (i, &(w, aw)) in shape.iter().enumerate() {
        let bits = m.input(&format!("seg{i}_i"), w);
        let off = (i > 0).then(|| m.input(&format!("off{i}_i"), aw));
        segs.push((bits, off));
    }
    m.comment("Registers: the segments and their offsets (copies per 32 shifter outputs)");
    let mut regs = Vec::new();
    for (i, (bits, off)) in segs.iter().enumerate() {
        let q = m.reg_next(&format!("seg{i}_q"), None, bits, Some(&en));
        let offs = match off {
            Some(off) => reg_offset(&mut m, &format!("seg{i}"), off, shape[i].0, total, &en),
            None => Vec::new(),
        };
        regs.push((q, offs));
    }
    let mut terms = Vec::new();
    for (i, (bits, offs)) in regs.iter().enumerate() {
        let sh = if i == 0 {
            bits.resize(total)
        } else {
            m.comment(format!("Segment {i} shifted up by its offset"));
            shl_grow(&mut m, &format!("s{i}"), bits, offs, total)
        };
        terms.push(sh.zext(total));
    }
    m.comment("The shifted segments ORed");
    m.output_expr("bits_o", &or_tree(terms, total));
    m.finish()
}
