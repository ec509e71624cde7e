//! The BPC compressor (`bpc_comp_*`) and its per-plane sub-modules.

use super::arith::sub_split;
use super::merge::*;
use super::planes;
use super::*;
use crate::hdl::blocks::add_join;
use crate::hdl::blocks::or_tree;
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Module, Pipeline, Policy};
use std::sync::Arc;

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
    // Each subtraction is split: its low half and both candidate high halves are
    // registered, and stage 2 picks the high half by the low half's carry (one mux in front
    // of the DBX XOR instead of a 33-bit carry chain behind the input port).
    let parts: Vec<[Expr; 3]> = (1..g.n as usize)
        .map(|i| sub_split(&mut m, &format!("d{i}"), &w[i], &w[i - 1]))
        .collect();
    let st = pl.stage(&mut m, "deltas");
    let regs: Vec<Expr> = ["d_lo_q", "d_hi0_q", "d_hi1_q"]
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let v: Vec<Expr> = parts.iter().map(|p| p[k].clone()).collect();
            st.reg(&mut m, name, &Expr::cat_lsb(&v))
        })
        .collect();
    let base1 = st.reg(&mut m, "base1_q", &w[0]);
    let blk1 = st.reg(&mut m, "blk1_q", &blk);
    let (lw, hw) = (parts[0][0].width(), parts[0][1].width());
    let (lo, h0, h1) = (regs[0].lanes(lw), regs[1].lanes(hw), regs[2].lanes(hw));
    let d1: Vec<Expr> = (0..lo.len())
        .map(|i| {
            let name = format!("d{}_q", i + 1);
            let d = add_join(
                &mut m,
                &name,
                &[lo[i].clone(), h0[i].clone(), h1[i].clone()],
            );
            m.wire(&name, &d)
        })
        .collect();

    let s2 = planes(&mut m, &mut pl, g, &d1, &base1, &blk1)?;
    let mut mods = SubModules::new();
    let (segs, mut glens, zero_blk) = tokens(&mut m, &mut mods, p, g, &s2)?;
    let blk2 = s2.blk;
    // Stage-3 registers.
    let st = pl.stage(&mut m, "tokens");
    // The segments are registered by the merge stages that take them (on `seg_en`).
    let (mut segs, mut seg_en) = (segs, st.load());
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
            let name = format!("u_m{level}_{gi}");
            merged.push(merge_group(
                &mut m, &mut mods, &name, grp, len, cap, &seg_en,
            )?);
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
        glens = offsets_and_sums(&mut m, &mut mods, &nm, &mut merged)?;
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
        (segs, seg_en) = (merged, st.load());
        glen_q = reg_glens(&mut m, &nm, &glens, &st.load());
        zero_q = st.reg(&mut m, &format!("zero{}_q", 3 + level), &zero_q);
        blk_q = st.reg(&mut m, &format!("blk{}_q", 3 + level), &blk_q);
        level += 1;
    }
    m.finish()
}

/// Stage 2's registers: the planes' DBX bits, classes and positions, the base and its
/// classes, and the entry.
struct Planes {
    dbx: Expr,
    cls: Expr,
    pos: Expr,
    base: Expr,
    bcls: Expr,
    blk: Expr,
}

/// Stage 2: the transpose (wiring), `DBX = DBP ^ DBP[j+1]`, one classifier instance per
/// plane and the base classifier.
fn planes(
    m: &mut ModuleBuilder,
    pl: &mut Pipeline,
    g: Geo,
    d1: &[Expr],
    base1: &Expr,
    blk1: &Expr,
) -> Result<Planes, HdlError> {
    m.comment("Stage 2: transpose, DBX = DBP ^ DBP[j+1], plane and base classifiers");
    let planes: Vec<Expr> = (0..g.p)
        .map(|j| Expr::cat_lsb(&d1.iter().map(|x| x.bit(j)).collect::<Vec<_>>()))
        .collect();
    let dbp = m.wire_array("dbp", &planes);
    let xs: Vec<Expr> = (0..g.p as usize)
        .map(|j| match dbp.get(j + 1) {
            Some(up) => &dbp[j] ^ up,
            None => dbp[j].clone(),
        })
        .collect();
    let dbx = m.wire_array("dbx", &xs);
    let u = m.instance_array(&planes::classifier(g)?, "u_cls", g.p, |j| {
        let j = j as usize;
        vec![("dbx_i", dbx[j].clone()), ("dbp_i", dbp[j].clone())]
    });
    let cls: Vec<Expr> = u.iter().map(|u| u.out("cls_o")).collect();
    let pos: Vec<Expr> = u.iter().map(|u| u.out("pos_o")).collect();
    let fits = |bits: u32| {
        let t = base1.slice(bits - 1, g.s - bits + 1);
        t.all() | !t.any()
    };
    // Base: [zero, fits 4, fits 8, fits 16] (priority in stage 3; the forms narrower than
    // the symbol only, [`base_forms`]).
    let mut bc = vec![!base1.any()];
    bc.extend(base_forms(g.s).map(|(_, bits)| fits(bits)));
    let bcls = m.wire("base_cls", &Expr::cat_lsb(&bc));
    let st = pl.stage(m, "planes");
    Ok(Planes {
        dbx: st.reg(m, "dbx_q", &Expr::cat_lsb(&dbx)),
        cls: st.reg(m, "cls_q", &Expr::cat_lsb(&cls)),
        pos: st.reg(m, "pos_q", &Expr::cat_lsb(&pos)),
        base: st.reg(m, "base2_q", base1),
        bcls: st.reg(m, "bcls_q", &bcls),
        blk: st.reg(m, "blk2_q", blk1),
    })
}

/// Stage 3: the zero-run scan, the base token and one token encoder instance per plane
/// (top plane first, the stream's order); returns the segments with their offsets, the
/// group lengths and the all-zero flag.
fn tokens(
    m: &mut ModuleBuilder,
    mods: &mut SubModules,
    p: &BpcRtlParams,
    g: Geo,
    s2: &Planes,
) -> Result<(Vec<Seg>, Vec<Expr>, Expr), HdlError> {
    m.comment("Stage 3: zero-run lengths (scan of (reset, count) pairs), token bits and lengths");
    let dx: Vec<Expr> = s2.dbx.lanes(g.b);
    let cl: Vec<Expr> = s2.cls.lanes(planes::CLS_BITS);
    let ps: Vec<Expr> = s2.pos.lanes(g.posb);
    let zero = m.wire(
        "plane_zero",
        &Expr::cat_lsb(&cl.iter().map(|c| c.bit(0)).collect::<Vec<_>>()),
    );
    let scan = m.instance(
        &planes::zero_run_scan(g)?,
        "u_zrun",
        &[("zero_i", zero.clone())],
    );
    let runf: Vec<Expr> = scan.out("runf_o").lanes(g.runb);
    let mut segs = vec![base_token(m, g, &s2.base, &s2.bcls)];
    let top = g.p as usize - 1;
    let toks = m.instance_array(&planes::token(p, g)?, "u_tok", g.p, |j| {
        let j = j as usize;
        // The run field is the run's length minus 2: in a long run starting at plane j,
        // the zero planes counted up to plane j - 2 (no subtractor).
        let run = match j.checked_sub(2) {
            Some(r) => runf[r].clone(),
            None => Expr::zero(g.runb),
        };
        let up = match j < top {
            true => zero.bit(j as u32 + 1),
            false => Expr::zero(1),
        };
        let dn = match j.checked_sub(1) {
            Some(d) => zero.bit(d as u32),
            None => Expr::zero(1),
        };
        vec![
            ("cls_i", cl[j].clone()),
            ("up_zero_i", up),
            ("dn_zero_i", dn),
            ("runf_i", run),
            ("pos_i", ps[j].clone()),
            ("dbx_i", dx[j].clone()),
        ]
    });
    // The stream's order: the top plane first.
    for u in toks.iter().rev() {
        segs.push(Seg {
            bits: u.out("tok_o"),
            len: u.out("len_o"),
            off: vec![Expr::zero(1)],
        });
    }
    let glens = offsets_and_sums(m, mods, "t", &mut segs)?;
    let all_zero = m.wire("all_zero", &(s2.bcls.bit(0) & zero.all()));
    Ok((segs, glens, all_zero))
}

/// The base value's forms (code, value bits) after zero, narrowest first: those narrower
/// than an `s`-bit symbol (a wider one is never shorter than `1` + the symbol).
fn base_forms(s: u32) -> impl Iterator<Item = (&'static str, u32)> {
    [("001", 4), ("010", 8), ("011", 16)]
        .into_iter()
        .filter(move |f| f.1 < s)
}

/// The base token (its code and value, stream order) and its length.
fn base_token(m: &mut ModuleBuilder, g: Geo, b: &Expr, bcls: &Expr) -> Seg {
    let c = |k: u32| bcls.bit(k);
    let zero = c(0);
    let forms: Vec<(&str, u32)> = base_forms(g.s).collect();
    let n = forms.len() as u32;
    // Form k (from 1) is chosen when it fits and form k - 1 (zero for k = 1) does not.
    let sel: Vec<Expr> = (1..=n).map(|k| &c(k) & &!c(k - 1)).collect();
    let full = !c(n);
    let bw = 1 + g.s;
    let lay = |pre: &str, vb: u32| {
        let mut v = code(pre);
        if vb > 0 {
            v = Expr::cat(&[msb_first(&b.slice(0, vb)), v]);
        }
        v.zext(bw)
    };
    let mut bits: Vec<Expr> = forms
        .iter()
        .zip(&sel)
        .map(|((pre, vb), f)| f.gate(&lay(pre, *vb)))
        .collect();
    bits.push(full.gate(&lay("1", g.s)));
    let bits = or_tree(bits, bw);
    let lbw = clog2u(bw + 1);
    let mut len = vec![zero.gate(&Expr::lit(lbw, 3))];
    len.extend(
        forms
            .iter()
            .zip(&sel)
            .map(|((_, vb), f)| f.gate(&Expr::lit(lbw, 3 + *vb as u64))),
    );
    len.push(full.gate(&Expr::lit(lbw, bw as u64)));
    let len = or_tree(len, lbw);
    Seg {
        bits: m.wire("tok_base", &bits),
        len: m.wire("len_base", &len),
        off: vec![Expr::zero(1)],
    }
}
