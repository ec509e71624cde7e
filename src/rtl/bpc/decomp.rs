//! The BPC decompressor (`bpc_dec_*`).

use super::sums::{deltas_of_planes, sums, Flags};
use super::*;
use crate::hdl::blocks::{any_of, mux_tree, or_tree};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Module, Pipeline, Policy, Reg, Stage};
use crate::model::bpc::{BpcParams, PlaneCode};
use std::sync::Arc;

/// Window positions where one of `k` tokens can start.
fn npos_of(k: usize, g: Geo) -> usize {
    ((k - 1) as u32 * g.tw + 1) as usize
}

/// `bpc_dec_<tag>_k<k>`: the window form of [`super::decompressor`] (`dec_tokens` = k tokens
/// per cycle from the low bits of one stream register).
pub(super) fn decompressor(p: &BpcRtlParams) -> Result<Arc<Module>, HdlError> {
    let name = format!(
        "bpc_dec_{}_k{}{}",
        p.tag(),
        p.dec_tokens,
        super::sums::sum_suffix(p)
    );
    p.validate().map_err(|e| err(&name, e))?;
    let q = p.model();
    let g = Geo::of(&q);
    let k = p.dec_tokens as usize;
    let (mut m, s_in, out) = shell(&name, p);
    let sbus = s_in.field("stream");
    let size = s_in.field("size");

    // Stages: the token loop (holds its entry until the last token), el1, [el2,] out.
    let mut pl = Pipeline::new(&mut m, "pipe", Policy::Bubble, &s_in.valid);
    let a = accept(&mut m, p, g, &sbus, &size);
    let lp = loop_regs(&mut m, &mut pl, p, g, &a);
    let w = window(&mut m, &q, g, k, &lp.sr);
    let plane = token_plane(g)?;
    let t = tokens(&mut m, g, &lp, &w, &plane);
    let any_err = loop_step(&mut m, &mut pl, g, &a, &lp, &w, &t);
    let file_d = plane_writes(&mut m, g, &lp, &t);
    let (oblk, oerr) = output(&mut m, &mut pl, p, g, &lp, &file_d, &any_err)?;
    pl.finish_ports(&mut m, s_in, out, &[("blk", oblk), ("err", oerr)]);
    m.finish()
}

/// A decompressor module with its header and ports: `s` (stream and size code) in, `m` out.
pub(super) fn shell(
    name: &str,
    p: &BpcRtlParams,
) -> (ModuleBuilder, stream::Stream, stream::OutPort) {
    let mut m = ModuleBuilder::new(name);
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
    (m, s_in, out)
}

/// The accepted entry's decode: its mode, limit and errors from the size code, and the base
/// token at stream bit 0.
pub(super) struct Accept {
    /// The stream (stream order).
    pub(super) st: Expr,
    pub(super) is_zero: Expr,
    pub(super) is_raw: Expr,
    /// The stream's length limit for the size code.
    pub(super) limit: Expr,
    /// An invalid size code.
    pub(super) bad: Expr,
    /// Stream bit 0: a full-width base.
    pub(super) b0: Expr,
    pub(super) base: Expr,
    pub(super) base_len: Expr,
    /// A BPC-coded entry (neither zero, raw nor invalid).
    pub(super) bpc: Expr,
    /// The base token alone overruns the limit.
    pub(super) base_over: Expr,
}

/// Accept: the size code to mode and limit, and the base token decoded at stream bit 0.
pub(super) fn accept(
    m: &mut ModuleBuilder,
    p: &BpcRtlParams,
    g: Geo,
    sbus: &Expr,
    size: &Expr,
) -> Accept {
    m.comment("Accept: size code to mode and limit; the base token decoded at stream bit 0");
    // Stream order: each bus byte bit-reversed (one loop over the bytes).
    let bytes: Vec<Expr> = stream_of_bus(sbus).lanes(8);
    let bytes = m.wire_array("st_byte", &bytes);
    let st = m.wire("st_in", &Expr::cat_lsb(&bytes));
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
    // A value as wide as the symbol or wider (8- and 16-bit symbols; no compressor writes
    // it) keeps its low bits.
    let val = |w: u32| {
        let v = msb_first(&st.slice(3, w));
        if w < g.s {
            Expr::cat(&[v.bit(w - 1).repeat(g.s - w), v])
        } else {
            v.slice(0, g.s)
        }
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
    Accept {
        st,
        is_zero,
        is_raw,
        limit,
        bad,
        b0,
        base,
        base_len: blen,
        bpc: bpc_in,
        base_over,
    }
}

/// The token loop's stage and registers: the entry's mode and base, the stream register,
/// the room left, the planes left, the previous plane, the error flag and the plane file.
struct Loop {
    stage: Stage,
    /// The loop holds an entry.
    busy: Expr,
    /// The loop takes a new entry.
    take: Expr,
    raw: Expr,
    zero: Expr,
    bpc: Expr,
    base: Expr,
    /// The stream from the next token on (a raw entry: its low bits, the rest in `hi`).
    sr: Reg,
    hi: Expr,
    room: Reg,
    left: Reg,
    prev: Reg,
    err: Reg,
    /// The decoded planes (DBP), one register each.
    file: Vec<Reg>,
    /// Widths of `left` and `sr`.
    lwid: u32,
    srw: u32,
}

/// Loop registers: the entry's mode and base, loaded on accept, and the loop's state.
fn loop_regs(
    m: &mut ModuleBuilder,
    pl: &mut Pipeline,
    p: &BpcRtlParams,
    g: Geo,
    a: &Accept,
) -> Loop {
    let lp = pl.stage(m, "loop");
    let busy = lp.valid();
    let take = lp.load();
    let raw_q = m.reg_next("raw_q", None, &a.is_raw, Some(&take));
    let zero_q = m.reg_next("zmode_q", None, &a.is_zero, Some(&take));
    let bpc_q = m.reg_next("bmode_q", None, &a.bpc, Some(&take));
    let base_q = m.reg_next("base_q", None, &a.base, Some(&take));
    // The stream from the next token on (a raw entry: its low 768 bits, the rest in hi_q).
    let srw = p.raw_above_bits();
    let sr = m.reg("sr_q", srw, None);
    let hi = m.reg_next(
        "hi_q",
        None,
        &a.st.slice(srw, p.entry_bits() - srw),
        Some(&take),
    );
    let room = m.reg("room_q", 10, None);
    let left = m.reg("left_q", clog2u(g.p + 1), None);
    let prev = m.reg("prev_q", g.b, None);
    let errq = m.reg("err_q", 1, None);
    let file = m.reg_array("dbp_q", g.b, g.s, None);
    let lwid = left.width();
    Loop {
        stage: lp,
        busy,
        take,
        raw: raw_q,
        zero: zero_q,
        bpc: bpc_q,
        base: base_q,
        sr,
        hi,
        room,
        left,
        prev,
        err: errq,
        file,
        lwid,
        srw,
    }
}

/// The loop's token window and where its `k` tokens start.
struct Window {
    /// Tokens per cycle.
    k: usize,
    /// The window's span: `k` widest tokens.
    span: u32,
    /// The low bits of the stream register (aligned at the next token).
    win: Expr,
    /// Per window position: the class of a token starting there (`None` where none can).
    cls_at: Vec<Option<Expr>>,
    /// starts[i]: one-hot window position of token i (token 0 at 0); `None` where no chain
    /// of i tokens can end.
    starts: Vec<Vec<Option<Expr>>>,
}

impl Window {
    /// `w` bits at offset `off` of the token starting at the one-hot position `s`, by AND-OR.
    fn pick(&self, m: &mut ModuleBuilder, nm: &str, s: &[(usize, Expr)], off: u32, w: u32) -> Expr {
        let terms: Vec<Expr> = s
            .iter()
            .map(|(x, sx)| sx.gate(&self.win.slice(*x as u32 + off, w)))
            .collect();
        m.wire(nm, &or_tree(terms, w))
    }
}

/// The class of a token at window position `x` (0 where no token can start).
fn cls_of(cls_at: &[Option<Expr>], x: usize) -> Expr {
    cls_at[x].clone().unwrap_or_else(|| Expr::zero(7))
}

/// Length of a token of one-hot class `c`.
pub(super) fn class_len(g: Geo, c: usize) -> usize {
    let lens = g.lens();
    (match c {
        0 => lens[0],
        1 => lens[1],
        2 => lens[2],
        3 | 4 => lens[3],
        _ => lens[4],
    }) as usize
}

/// The live positions of a one-hot start vector, with their selects.
fn live(v: &[Option<Expr>]) -> Vec<(usize, Expr)> {
    v.iter()
        .enumerate()
        .filter_map(|(x, e)| e.clone().map(|e| (x, e)))
        .collect()
}

/// The loop's window (the stream register's low bits), the token classes at its positions
/// and the chained one-hot starts of the `k` tokens.
fn window(m: &mut ModuleBuilder, q: &BpcParams, g: Geo, k: usize, sr: &Reg) -> Window {
    m.comment(format!(
        "Loop: window = sr_q low bits, {k} chained one-hot token starts, fields by AND-OR"
    ));
    let span = k as u32 * g.tw; // k widest tokens
    let ww = span + 5;
    // The window: the low bits of the stream register (aligned at the next token).
    let win = m.wire("win", &sr.q().slice(0, ww));
    // The bits past the last token's fields (the window is sized for 5-bit lookahead).
    let used = (npos_of(k, g) as u32 - 1 + g.tw).max(npos_of(k, g) as u32 + 4);
    if used < ww {
        m.unused(&win.slice(used, ww - used));
    }
    let cls_at = classes(m, q, g, k, &win);
    let starts = token_starts(m, g, k, &cls_at);
    Window {
        k,
        span,
        win,
        cls_at,
        starts,
    }
}

/// Per window position where one of the `k` tokens can start: the class of a token
/// starting there, one-hot [raw, run, zero, all ones, dbp zero, two ones, one one].
fn classes(
    m: &mut ModuleBuilder,
    q: &BpcParams,
    g: Geo,
    k: usize,
    win: &Expr,
) -> Vec<Option<Expr>> {
    let lens = g.lens();
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
    (0..npos as u32)
        .map(|x| {
            if !need[x as usize] {
                return None;
            }
            Some(m.wire(&format!("cls_at{x}"), &class_at(q, win, x)))
        })
        .collect()
}

/// The one-hot class of a token starting at bit `x` of `win`: [raw, run, zero, all ones,
/// dbp zero, two ones, one one].
pub(super) fn class_at(q: &BpcParams, win: &Expr, x: u32) -> Expr {
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
    Expr::cat_lsb(&[
        b(0),
        run,
        z1,
        sel(PlaneCode::AllOnes),
        sel(PlaneCode::DbpZero),
        sel(PlaneCode::TwoOnes),
        sel(PlaneCode::OneOne),
    ])
}

/// The chained token starts: token i + 1 starts where token i, of the class at its start,
/// ends (`start<i>_<y>`, one-hot over the window).
fn token_starts(
    m: &mut ModuleBuilder,
    g: Geo,
    k: usize,
    cls_at: &[Option<Expr>],
) -> Vec<Vec<Option<Expr>>> {
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
                        if x + class_len(g, c) == y {
                            t.push(sx & &cls_of(cls_at, x).bit(c as u32));
                        }
                    }
                }
                (!t.is_empty()).then(|| m.wire(&format!("start{}_{y}", i + 1), &any_of(&t)))
            })
            .collect();
        starts.push(nxt);
    }
    starts
}

/// The `k` token decoders, chained through the planes left and the previous plane.
struct Tokens {
    /// Planes left before token i, and after the last.
    lefts: Vec<Expr>,
    /// The previous plane before token i, and after the last.
    prevs: Vec<Expr>,
    /// Each token's error flag.
    errs: Vec<Expr>,
    /// Each token's plane value.
    vals: Vec<Expr>,
}

/// One token decoder's outputs.
struct Token {
    err: Expr,
    dbp: Expr,
    /// The planes left and the previous plane after the token.
    left: Expr,
    prev: Expr,
}

/// The token decoders: per token, an overrun check against the room left, and the decode.
fn tokens(m: &mut ModuleBuilder, g: Geo, lp: &Loop, w: &Window, plane: &Arc<Module>) -> Tokens {
    // Overrun: a token ending at window position y > room.
    let ends: std::collections::BTreeSet<usize> = w.starts[1..]
        .iter()
        .flat_map(|v| live(v).into_iter().map(|(y, _)| y))
        .collect();
    let over_at: Vec<Expr> = (0..=w.span as usize)
        .map(|y| {
            if y == 0 || !ends.contains(&y) {
                Expr::zero(1)
            } else {
                m.wire(
                    &format!("over{y}"),
                    &lp.room.q().lt(&Expr::lit(10, y as u64)),
                )
            }
        })
        .collect();
    let mut t = Tokens {
        lefts: vec![lp.left.q()],
        prevs: vec![lp.prev.q()],
        errs: Vec::new(),
        vals: Vec::new(),
    };
    let mut ok = m.wire("ok0", &(&lp.bpc & &!lp.err.q()));
    for i in 0..w.k {
        let tk = token(m, g, w, &t, i, (&ok, &over_at), plane);
        t.lefts.push(tk.left);
        t.prevs.push(tk.prev);
        if i + 1 < w.k {
            ok = m.wire(&format!("ok{}", i + 1), &(&ok & &!&tk.err));
        }
        t.errs.push(tk.err);
        t.vals.push(tk.dbp);
    }
    t
}

/// Token i: its class and fields at its one-hot start, its plane count (a run: several),
/// its errors (a run past the planes left, a bad position, an overrun) and its plane value
/// from the previous plane.
fn token(
    m: &mut ModuleBuilder,
    g: Geo,
    w: &Window,
    t: &Tokens,
    i: usize,
    (ok, over_at): (&Expr, &[Expr]),
    plane: &Arc<Module>,
) -> Token {
    let lwid = t.lefts[i].width();
    let s = &live(&w.starts[i]);
    let cls = {
        let terms: Vec<Expr> = s
            .iter()
            .map(|(x, sx)| sx.gate(&cls_of(&w.cls_at, *x)))
            .collect();
        m.wire(&format!("t{i}_cls"), &or_tree(terms, 7))
    };
    let rawf = w.pick(m, &format!("t{i}_rawf"), s, 1, g.b);
    let runf = w.pick(m, &format!("t{i}_runf"), s, 2, g.runb);
    let posf = w.pick(m, &format!("t{i}_posf"), s, 5, g.posb);
    let valid = m.wire(
        &format!("t{i}_valid"),
        &(ok & &t.lefts[i].ne(&Expr::zero(lwid))),
    );
    let run = cls.bit(1);
    let cnt = run.select(
        &(msb_first(&runf).zext(lwid) + Expr::lit(lwid, 2)),
        &Expr::lit(lwid, 1),
    );
    let cnt = m.wire(&format!("t{i}_cnt"), &cnt);
    let run_past = &run & &cnt.gt(&t.lefts[i]);
    let pv = msb_first(&posf);
    let pos_bad = (cls.bit(6) & pv.ge(&Expr::lit(g.posb, g.b as u64)))
        | (cls.bit(5) & pv.ge(&Expr::lit(g.posb, g.b as u64 - 1)));
    let over = any_of(
        &live(&w.starts[i + 1])
            .iter()
            .map(|(y, e)| e & &over_at[*y])
            .collect::<Vec<_>>(),
    );
    let e = m.wire(
        &format!("t{i}_err"),
        &(&valid & &(run_past | pos_bad | over)),
    );
    let pr = t.prevs[i].clone();
    let u = m.instance(
        plane,
        &format!("u_t{i}_plane"),
        &[
            ("cls_i", cls.clone()),
            ("rawf_i", rawf),
            ("posf_i", posf),
            ("prev_i", pr.clone()),
        ],
    );
    let dbpv = m.wire(&format!("t{i}_dbp"), &u.out("dbp_o"));
    let nl = valid.select(&(&t.lefts[i] - &cnt), &t.lefts[i]);
    let left = m.wire(&format!("t{i}_left"), &nl);
    let prev = m.wire(&format!("t{i}_prev"), &valid.select(&dbpv, &pr));
    Token {
        err: e,
        dbp: dbpv,
        left,
        prev,
    }
}

/// `bpc_tok_plane_b<b>`: the plane a token decodes to from the previous plane, by its
/// one-hot class (raw, run, zero, all ones, DBP zero, two ones, one one) and its fields: the
/// raw plane XOR the previous one, the previous plane (run, zero), its inverse (all ones),
/// or the previous plane with the one or two ones at the position flipped.
pub(super) fn token_plane(g: Geo) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("bpc_tok_plane_b{}", g.b));
    m.header("Generator: hwzip::rtl::bpc::decomp::token_plane");
    m.header(format!(
        "Parameters: plane bits {}, position bits {}",
        g.b, g.posb
    ));
    m.header(format!("Spec: {SPEC} §2.4 (decoder, prevDBP)"));
    let cls = m.input("cls_i", 7);
    let rawf = m.input("rawf_i", g.b);
    let posf = m.input("posf_i", g.posb);
    let pr = m.input("prev_i", g.b);
    let pv = m.wire("pos", &msb_first(&posf));
    let hot: Vec<Expr> = (0..g.b).map(|b| pv.eq_lit(b as u64)).collect();
    let hot = m.wire_array("one", &hot);
    let two: Vec<Expr> = (0..g.b as usize)
        .map(|b| {
            if b == 0 {
                hot[0].clone()
            } else {
                &hot[b] | &hot[b - 1]
            }
        })
        .collect();
    let two = m.wire_array("two", &two);
    let dbpv = or_tree(
        vec![
            cls.bit(0).gate(&(&pr ^ &msb_first(&rawf))),
            (cls.bit(1) | cls.bit(2)).gate(&pr),
            cls.bit(3).gate(&(&pr ^ &Expr::ones(g.b))),
            cls.bit(5).gate(&(&pr ^ &Expr::cat_lsb(&two))),
            cls.bit(6).gate(&(&pr ^ &Expr::cat_lsb(&hot))),
        ],
        g.b,
    );
    m.unused(&cls.bit(4)); // DBP == 0: the plane is 0
    m.output_expr("dbp_o", &dbpv);
    m.finish()
}

/// The loop's end (the entry is not BPC, an error, or no planes left) and its register
/// updates: the stream shifted past the consumed tokens, the room, the planes left, the
/// previous plane and the error flag; returns this cycle's token error.
fn loop_step(
    m: &mut ModuleBuilder,
    pl: &mut Pipeline,
    g: Geo,
    a: &Accept,
    lp: &Loop,
    w: &Window,
    t: &Tokens,
) -> Expr {
    let (k, lwid, take, errq) = (w.k, lp.lwid, &lp.take, &lp.err);
    let any_err = m.wire("loop_err", &any_of(&t.errs));
    let fin = m.wire(
        "loop_fin",
        &(!&lp.bpc | errq.q() | &any_err | t.lefts[k].eq(&Expr::zero(lwid))),
    );
    pl.hold(m, &lp.stage, &fin);
    let step = m.wire("step", &(&lp.busy & &!&fin));
    let upd = m.wire("upd", &(take | &step));
    // Consumed bits: the end of the k-th token (all k were valid when the loop goes on).
    let last = live(&w.starts[k]);
    let cons = or_tree(
        last.iter()
            .map(|(y, e)| e.gate(&Expr::lit(10, *y as u64)))
            .collect(),
        10,
    );
    let cons = m.wire("consumed", &cons);
    let room_in = m.wire("room_in", &(&a.limit - &a.base_len));
    let sr_in = m.wire("sr_in", &stream_after_base(g, a, lp.srw));
    let shifted = m.wire("sr_shift", &stream_shift(&lp.sr, &last, lp.srw));
    m.next(&lp.sr, &take.select(&sr_in, &shifted), Some(&upd));
    m.next(
        &lp.room,
        &take.select(&room_in, &(lp.room.q() - &cons)),
        Some(&upd),
    );
    m.next(
        &lp.left,
        &take.select(&Expr::lit(lwid, g.p as u64), &t.lefts[k]),
        Some(&upd),
    );
    m.next(
        &lp.prev,
        &take.select(&Expr::zero(g.b), &t.prevs[k]),
        Some(&upd),
    );
    m.next(
        errq,
        &take.select(&(&a.bad | &a.base_over), &(errq.q() | &any_err)),
        Some(&upd),
    );
    any_err
}

/// The stream register's load on accept: the stream after the base token (one of its 5
/// lengths); a raw entry unshifted.
pub(super) fn stream_after_base(g: Geo, a: &Accept, srw: u32) -> Expr {
    let (st, b0) = (&a.st, &a.b0);
    let low = st.slice(0, srw);
    let after = |l: u32| Expr::cat(&[Expr::zero(l), low.slice(l, srw - l)]);
    let bl: Vec<u32> = vec![3, 7, 11, 19, 1 + g.s];
    let sel_b: Vec<Expr> = vec![
        !b0 & !st.bit(1) & !st.bit(2),
        !b0 & !st.bit(1) & st.bit(2),
        !b0 & st.bit(1) & !st.bit(2),
        !b0 & st.bit(1) & st.bit(2),
        b0.clone(),
    ];
    a.is_raw.select(
        &low,
        &or_tree(
            bl.iter()
                .zip(&sel_b)
                .map(|(l, c)| c.gate(&after(*l)))
                .collect(),
            srw,
        ),
    )
}

/// The stream register shifted by the k tokens' length, a one-hot AND-OR over the reachable
/// sums `last`, as whole-vector terms (`st ? sr >> y : 0`), which Verilator compiles as wide
/// words.
fn stream_shift(sr: &Reg, last: &[(usize, Expr)], srw: u32) -> Expr {
    or_tree(
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
    )
}

/// Plane writes: token i covers planes [left_{i+1}, left_i); returns the planes' next state.
fn plane_writes(m: &mut ModuleBuilder, g: Geo, lp: &Loop, t: &Tokens) -> Vec<Expr> {
    let k = t.vals.len();
    let (mut we, mut wv) = (Vec::new(), Vec::new());
    for j in 0..lp.file.len() {
        let jj = Expr::lit(lp.lwid, j as u64);
        let cov: Vec<Expr> = (0..k)
            .map(|i| jj.lt(&t.lefts[i]) & jj.ge(&t.lefts[i + 1]))
            .collect();
        wv.push(or_tree(
            cov.iter().zip(&t.vals).map(|(c, v)| c.gate(v)).collect(),
            g.b,
        ));
        we.push(&lp.busy & any_of(&cov));
    }
    let we = m.wire_array("we", &we);
    let nd: Vec<Expr> = (0..we.len())
        .map(|j| we[j].select(&wv[j], &lp.file[j].q()))
        .collect();
    let file_d = m.wire_array("dbp_n", &nd);
    for (f, d) in lp.file.iter().zip(&file_d) {
        m.next(f, d, None);
    }
    file_d
}

/// Output: the planes' next state transposed to deltas (a raw entry: its own deltas), then
/// [`sums`]; returns the entry and error registers.
fn output(
    m: &mut ModuleBuilder,
    pl: &mut Pipeline,
    p: &BpcRtlParams,
    g: Geo,
    lp: &Loop,
    file_d: &[Expr],
    any_err: &Expr,
) -> Result<(Expr, Expr), HdlError> {
    // A raw entry enters as its own deltas (word 0, then w[i] - w[i-1]), so the same sums
    // restore it.
    let raw_st = Expr::cat(&[lp.hi.clone(), lp.sr.q()]);
    let rw = bus_of_stream(&raw_st, p.entry_bits()).lanes(g.s);
    let deltas: Vec<Expr> = (0..rw.len())
        .map(|i| match i.checked_sub(1) {
            Some(j) => &rw[i] - &rw[j],
            None => rw[0].clone(),
        })
        .collect();
    let rel = m.wire_array("rawd", &deltas);
    let el = deltas_of_planes(g, &lp.base, file_d);
    let el_in = lp.raw.select(&Expr::cat_lsb(&rel), &el);
    let f = Flags::new(&(lp.err.q() | any_err), &lp.zero, None);
    sums(m, pl, p, g, &el_in, f)
}
