//! The BPC compressor (`bpc_comp_*`) and its per-plane sub-modules.

use super::arith::{any_many, sub_exact};
use super::merge::*;
use super::*;
use crate::hdl::blocks::{onehot_index, or_tree};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Module, Pipeline, Policy};
use crate::model::bpc::PlaneCode;
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
