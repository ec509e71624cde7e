//! The serial BPC decompressor (`dec_tokens: 1`): `dec_lanes` decoder lanes, each taking one
//! token per cycle, fed with alternate entries in turn and read back in the same order, and
//! one output pipeline of sums shared by the lanes.
//!
//! In a lane the only loop on the stream register is its shift: the register holds the stream
//! from the current token on, and beside it the current token's fields, decoded when they
//! enter (`tok_*_q`). The next shift is selected by the registered length class alone; the
//! planes left, the room and the errors, which decide when the entry ends, act on the
//! registered token in a second loop that never selects the stream register. Tokens past an
//! entry's end are shifted in and ignored.

use super::decomp::{accept, class_at, class_len, shell, stream_after_base, token_plane};
use super::sums::{deltas_of_planes, sum_suffix, sums, Flags};
use super::*;
use crate::hdl::blocks::or_tree;
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Module, Pipeline, Policy, Reg};
use crate::model::bpc::BpcParams;
use std::sync::Arc;

/// The lengths of the token classes with a shift of their own, in the order of
/// [`Tok::len_hot`]: raw, zero run, single zero, 5-bit, positional.
const LEN_CLASSES: usize = 5;

/// `bpc_dec_<tag>_k1_l<n>`: BPC stream and metadata code in, entry and error flag out, by
/// `dec_lanes` serial lanes (`bpc_dec_lane_<tag>`).
///
/// Ports: those of [`super::decompressor`].
pub(super) fn decompressor(p: &BpcRtlParams) -> Result<Arc<Module>, HdlError> {
    let n = p.dec_lanes as usize;
    let name = format!("bpc_dec_{}_k1_l{n}{}", p.tag(), sum_suffix(p));
    p.validate().map_err(|e| err(&name, e))?;
    let q = p.model();
    let g = Geo::of(&q);
    let lane = lane(p, &q, g)?;
    let (mut m, s_in, out) = shell(&name, p);
    let sbus = s_in.field("stream");
    let size = s_in.field("size");
    let a = accept(&mut m, p, g, &sbus, &size);
    let srw = p.raw_above_bits();
    let sr_in = m.wire("sr_in", &stream_after_base(g, &a, srw));
    // Stream bits past three sectors belong to raw entries only (taken from the bus).
    m.unused(&a.st.slice(srw, p.entry_bits() - srw));
    let room_in = m.wire("room_in", &(&a.limit - &a.base_len));
    // A raw entry's words are the bus's lanes (the lanes load them as planes).
    let rw = sbus.lanes(g.s);
    let base_in = m.wire("base_sel", &a.is_raw.select(&rw[0], &a.base));
    let run_in = m.wire("run_in", &(&a.bpc & &!&a.base_over));
    let err_in = m.wire("err_in", &(&a.bad | &a.base_over));

    m.comment(format!(
        "Lanes: {n} serial decoders; entries go to them in turn and leave in the same order"
    ));
    let el_free = m.wire_decl("el_free", 1);
    let turn = |m: &mut ModuleBuilder, nm: &str| (n > 1).then(|| m.reg(nm, n as u32, Some(1)));
    let (wp, rp) = (turn(&mut m, "disp_q"), turn(&mut m, "coll_q"));
    let my = |r: &Option<Reg>, i: usize| r.as_ref().map_or(Expr::ones(1), |r| r.q().bit(i as u32));
    let mut lanes = Vec::new();
    for i in 0..n {
        let u = m.instance(
            &lane,
            &format!("u_lane{i}"),
            &[
                ("s_valid_i", &s_in.valid & &my(&wp, i)),
                ("s_sr_i", sr_in.clone()),
                ("s_room_i", room_in.clone()),
                ("s_base_i", base_in.clone()),
                ("s_words_i", sbus.slice(g.s, p.entry_bits() - g.s)),
                ("s_raw_i", a.is_raw.clone()),
                ("s_run_i", run_in.clone()),
                ("s_err_i", err_in.clone()),
                ("s_zero_i", a.is_zero.clone()),
                ("m_ready_i", &el_free.expr() & &my(&rp, i)),
            ],
        );
        lanes.push(u);
    }
    let pick = |m: &mut ModuleBuilder, nm: &str, r: &Option<Reg>, port: &str| {
        let terms: Vec<Expr> = (0..n).map(|i| my(r, i).gate(&lanes[i].out(port))).collect();
        let w = terms[0].width();
        m.wire(nm, &or_tree(terms, w))
    };
    let in_ready = pick(&mut m, "in_ready", &wp, "s_ready_o");
    let lv = pick(&mut m, "lane_valid", &rp, "m_valid_o");
    let planes = pick(&mut m, "lane_planes", &rp, "m_planes_o");
    let base = pick(&mut m, "lane_base", &rp, "m_base_o");
    let lerr = pick(&mut m, "lane_err", &rp, "m_err_o");
    let lzero = pick(&mut m, "lane_zero", &rp, "m_zero_o");
    let lraw = pick(&mut m, "lane_raw", &rp, "m_raw_o");
    let rotate = |m: &mut ModuleBuilder, r: &Option<Reg>, go: &Expr| {
        if let Some(r) = r {
            let q = r.q();
            let rot = Expr::cat(&[q.slice(0, n as u32 - 1), q.bit(n as u32 - 1)]);
            m.next(r, &rot, Some(go));
        }
    };
    rotate(&mut m, &wp, &(&s_in.valid & &in_ready));
    rotate(&mut m, &rp, &(&lv & &el_free.expr()));

    let mut pl = Pipeline::new(&mut m, "pipe", Policy::Bubble, &lv);
    let el = deltas_of_planes(g, &base, &planes.lanes(g.b));
    let f = Flags::new(&lerr, &lzero, Some(&lraw));
    let (oblk, oerr) = sums(&mut m, &mut pl, p, g, &el, f)?;
    m.drive(&el_free, &pl.in_ready());
    let ends = pl.finish(&mut m, &out.ready());
    s_in.accept(&mut m, &in_ready);
    out.drive(&mut m, &ends.out_valid, &[("blk", oblk), ("err", oerr)]);
    m.finish()
}

/// The fields of the token at the low bits of a stream, decoded as they enter the lane.
struct Tok {
    /// One-hot: raw, zero run, single zero, all ones, DBP zero, two ones, one one.
    cls: Expr,
    /// One-hot length class (raw, run, zero, 5-bit, positional): the shift's select.
    len_hot: Expr,
    /// The token's bits.
    len: Expr,
    /// Planes it covers: a run's field + 2, else 1.
    cnt: Expr,
    rawf: Expr,
    posf: Expr,
    /// A one or two-ones position outside the plane.
    pos_bad: Expr,
}

/// The token at bit 0 of `x` (at least the widest token's bits).
fn tok(q: &BpcParams, g: Geo, lwid: u32, x: &Expr) -> Tok {
    let cls = class_at(q, x, 0);
    let run = cls.bit(1);
    // The 5-bit and positional classes differ in prefix bit 1 alone.
    let short = cls.bit(3) | cls.bit(4);
    let long = cls.bit(5) | cls.bit(6);
    let len_hot = Expr::cat_lsb(&[cls.bit(0), run.clone(), cls.bit(2), short, long]);
    let len = or_tree(
        (0..7)
            .map(|c| {
                cls.bit(c)
                    .gate(&Expr::lit(6, class_len(g, c as usize) as u64))
            })
            .collect(),
        6,
    );
    let runf = msb_first(&x.slice(2, g.runb));
    let cnt = run.select(&(runf.zext(lwid) + Expr::lit(lwid, 2)), &Expr::lit(lwid, 1));
    let posf = x.slice(5, g.posb);
    let pv = msb_first(&posf);
    let pos_bad = (cls.bit(6) & pv.ge(&Expr::lit(g.posb, g.b as u64)))
        | (cls.bit(5) & pv.ge(&Expr::lit(g.posb, g.b as u64 - 1)));
    Tok {
        cls,
        len_hot,
        len,
        cnt,
        rawf: x.slice(1, g.b),
        posf,
        pos_bad,
    }
}

/// `bpc_dec_lane_<tag>`: one serial decoder lane. Takes an accepted entry (the stream after
/// its base, the room, the base, a raw entry's words after the first, and the mode), decodes one token per
/// cycle and offers the planes, the base and the flags until they are taken.
fn lane(p: &BpcRtlParams, q: &BpcParams, g: Geo) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("bpc_dec_lane_{}", p.tag()));
    header(
        &mut m,
        "decompressor lane",
        p,
        "§2.4 (decoder, prevDBP): one token per cycle",
    );
    let srw = p.raw_above_bits();
    let lwid = clog2u(g.p + 1);
    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[
            ("sr", srw),
            ("room", 10),
            ("base", g.s),
            ("words", g.s * g.b),
            ("raw", 1),
            ("run", 1),
            ("err", 1),
            ("zero", 1),
        ]),
    );
    let out = stream::output_port(&mut m, "m");
    let busy = m.reg("busy_q", 1, Some(0));
    let act = m.reg("act_q", 1, Some(0));
    let done = m.wire("done", &(busy.q() & !act.q()));
    let leave = m.wire("leave", &(&done & &out.ready()));
    let ready = m.wire("ready", &(!busy.q() | leave.clone()));
    let take = m.wire("take", &(&s_in.valid & &ready));
    m.next(&busy, &(&take | &(busy.q() & !&leave)), None);
    let field = |f: &str| s_in.field(f);
    let keep =
        |m: &mut ModuleBuilder, nm: &str, f: &str| m.reg_next(nm, None, &field(f), Some(&take));
    let zero_q = keep(&mut m, "zmode_q", "zero");
    let raw_q = keep(&mut m, "rmode_q", "raw");
    let base_q = keep(&mut m, "base_q", "base");

    m.comment("Stream loop: sr_q shifts by the registered token's length; tok_*_q decode the next");
    let sr = m.reg("sr_q", srw, None);
    let lens = g.lens();
    let len_hot = m.reg("tok_lhot_q", LEN_CLASSES as u32, None);
    let shifted = or_tree(
        (0..LEN_CLASSES)
            .map(|c| {
                let y = lens[c];
                let v = Expr::cat(&[Expr::zero(y), sr.q().slice(y, srw - y)]);
                len_hot.q().bit(c as u32).gate(&v)
            })
            .collect(),
        srw,
    );
    let shifted = m.wire("sr_shift", &shifted);
    let sr_d = m.wire("sr_next", &take.select(&field("sr"), &shifted));
    // The shortest token is 3 bits: the register's low bits are decoded as they enter.
    let short = lens.iter().copied().min().unwrap_or(1);
    m.unused(&sr.q().slice(0, short));
    m.next(&sr, &sr_d, None);
    let t = tok(q, g, lwid, &sr_d.slice(0, g.tw.max(5)));
    m.next(&len_hot, &t.len_hot, None);
    let r = |m: &mut ModuleBuilder, nm: &str, d: &Expr| m.reg_next(nm, None, d, None);
    let cls = r(&mut m, "tok_cls_q", &t.cls);
    let tlen = r(&mut m, "tok_len_q", &t.len);
    let cnt = r(&mut m, "tok_cnt_q", &t.cnt);
    let rawf = r(&mut m, "tok_raw_q", &t.rawf);
    let posf = r(&mut m, "tok_pos_q", &t.posf);
    let pbad = r(&mut m, "tok_pbad_q", &t.pos_bad);

    m.comment("Token loop: the registered token against the planes left, the room and prevDBP");
    let left = m.reg("left_q", lwid, None);
    let room = m.reg("room_q", 10, None);
    let prev = m.reg("prev_q", g.b, None);
    let errq = m.reg("err_q", 1, None);
    let step = act.q();
    let run = cls.bit(1);
    let run_past = m.wire("run_past", &(&run & &cnt.gt(&left.q())));
    let over = m.wire("over", &tlen.zext(10).gt(&room.q()));
    let e = m.wire("tok_err", &(&step & &(&run_past | &over | &pbad)));
    let plane = token_plane(g)?;
    let u = m.instance(
        &plane,
        "u_plane",
        &[
            ("cls_i", cls.clone()),
            ("rawf_i", rawf),
            ("posf_i", posf),
            ("prev_i", prev.q()),
        ],
    );
    let dbp = m.wire("tok_dbp", &u.out("dbp_o"));
    let nleft = m.wire("left_n", &(left.q() - &cnt));
    let last = m.wire("tok_last", &(&cnt.eq(&left.q()) | &e));
    let upd = m.wire("upd", &(&take | &step));
    m.next(
        &left,
        &take.select(&Expr::lit(lwid, g.p as u64), &nleft),
        Some(&upd),
    );
    m.next(
        &room,
        &take.select(&field("room"), &(room.q() - tlen.zext(10))),
        Some(&upd),
    );
    m.next(&prev, &take.select(&Expr::zero(g.b), &dbp), Some(&upd));
    m.next(
        &errq,
        &take.select(&field("err"), &(errq.q() | &e)),
        Some(&upd),
    );
    m.next(&act, &take.select(&field("run"), &(&step & &!&last)), None);
    // Token planes [left - cnt, left); a raw entry loads its words 1.. as planes (word
    // i + 1 is bit i of every plane, as the deltas of a coded entry are), which the sums
    // pass unchanged.
    let file = m.reg_array("dbp_q", g.b, g.s, None);
    let words = field("words").lanes(g.s);
    let raw_pl: Vec<Expr> = (0..g.s)
        .map(|j| Expr::cat_lsb(&words.iter().map(|w| w.bit(j)).collect::<Vec<_>>()))
        .collect();
    let raw_pl = m.wire_array("raw_pl", &raw_pl);
    let load_raw = m.wire("load_raw", &(&take & &field("raw")));
    let we: Vec<Expr> = (0..file.len())
        .map(|j| {
            let jj = Expr::lit(lwid, j as u64);
            &step & &jj.lt(&left.q()) & jj.ge(&nleft)
        })
        .collect();
    let we = m.wire_array("we", &we);
    for (j, f) in file.iter().enumerate() {
        let d = load_raw.select(&raw_pl[j], &dbp);
        m.next(f, &d, Some(&(&load_raw | &we[j])));
    }
    let planes: Vec<Expr> = file.iter().map(Reg::q).collect();
    s_in.accept(&mut m, &ready);
    out.drive(
        &mut m,
        &done,
        &[
            ("planes", Expr::cat_lsb(&planes)),
            ("base", base_q),
            ("err", errq.q()),
            ("zero", zero_q),
            ("raw", raw_q),
        ],
    );
    m.finish()
}
