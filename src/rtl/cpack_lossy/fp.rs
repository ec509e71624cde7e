//! The lossy FP32 truncation units of PACT'12 (docs/FORMATS.md, PACT'12 §2.6, §6 item 4):
//! `fp_trunc_pack` in front of the compressor and `fp_unpack_restore` behind the
//! decompressor.
//!
//! Both are bit accumulators on a left-aligned bus (stream bit 0 at the top, word 0 of a beat
//! at bits `[31:0]`), so one datapath serves every `t` and both layouts:
//! * **trunc** takes `k` words a cycle and appends their fields: the upper `32 − t` bits
//!   (packed layout, Option A), or `w >> t` as a whole word (shifted layout, Option B), or
//!   the word itself (`t = 0`); whenever `32k` bits wait, they leave as `k` words. A packed
//!   block leaves in `(32 − t)·n/32k` beats (12 at t = 8 instead of 16), without gaps
//!   between blocks: a block's packed length is a whole number of output beats.
//! * **restore** takes the decompressor's 4 words a cycle and emits 4 restored words
//!   (16 B) a cycle, taking `4·(32 − t)` bits (packed; also a truncated raw block, which
//!   is packed in either layout) or `4·32` bits (shifted, `t = 0`) from the top. Restore
//!   fills the `t` dropped bits with zeros, or with the mid-point `1 << (t − 1)` when the
//!   codec's `fill` says so (never for an exponent of all ones).

use super::{err, header, LossyRtlParams};
use crate::hdl::blocks::{or_tree, shift_lanes};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{clog2, Expr, HdlError, Module, ModuleBuilder};
use crate::model::cpack_lossy::fp::{RestoreFill, TruncLayout};
use std::sync::Arc;

/// Bits a word contributes to the C-Pack input with code `t`: 32 at t = 0 or with the
/// shifted layout (`shifted`), else `32 − t`.
fn field_bits(t: u32, shifted: bool) -> u32 {
    if t == 0 || shifted {
        32
    } else {
        32 - t
    }
}

/// Greatest common divisor (the shifters' lane width: every count is a multiple of it).
pub(super) fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `k` words of a left-aligned bus `bus` (word 0 at the top) as a beat (word 0 at `[31:0]`).
fn beat_of(bus: &Expr, k: u32) -> Expr {
    let w = bus.width();
    Expr::cat_lsb(
        &(0..k)
            .map(|i| bus.slice(w - 32 * (i + 1), 32))
            .collect::<Vec<_>>(),
    )
}

/// `cpack_lossy_trunc`: block words in, the words C-Pack runs on out (§6 item 4).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_data_i[32k-1:0]`/`s_tcode_i[1:0]` (a block is
/// `block_bytes/4` words; `tcode` sampled with its first beat) → `m_valid_o`/`m_ready_i`/
/// `m_data_o[32k-1:0]`/`m_last_o`/`m_tcode_o[1:0]`, the compressor's input.
///
/// A `64k`-bit accumulator: a beat is taken while fewer than `32k` bits would be left after
/// this cycle's output, its fields placed after the waiting bits by a logarithmic shifter;
/// the output is the accumulator's top `32k` bits, valid while that many wait. One beat in
/// and (at most) one out per cycle; the first output the cycle after the first input at
/// `t = 0`, two cycles at t > 0.
pub fn trunc_pack(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let c = &p.codec;
    let k = p.words_per_cycle as u32;
    let nw = c.words() as u32;
    let slots = nw / k;
    let shifted = c.layout == TruncLayout::Shifted;
    let ow = 32 * k;
    let w = 2 * ow;
    let cw = clog2(w as u64 + 1);
    let mut m = ModuleBuilder::new(format!("cpack_lossy_trunc_{}", p.tag()));
    header(
        &mut m,
        "fp::trunc_pack",
        p,
        "§2.6 (truncation, layouts), §6 item 4",
    );
    m.header(format!(
        "{} words per cycle in and out; a {}-bit accumulator",
        k, w
    ));
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("data", ow), ("tcode", 2)]));
    let s_valid = s_in.valid.clone();
    let data = s_in.field("data");
    let s_tcode = s_in.field("tcode");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();
    let sw = clog2(slots as u64).max(1);

    // Bits past the count are zero (fields are ORed in), so the accumulator is reset.
    let acc = m.reg("acc_q", w, Some(0));
    let cnt = m.reg("cnt_q", cw, Some(0));
    let ib = m.reg("in_beat_q", sw, Some(0));
    let ob = m.reg("out_beat_q", sw, Some(0));
    let tc_q = m.reg("tcode_q", 2, None);

    m.comment("Input: a block's first beat brings its tcode; fields left-aligned per t");
    let first = m.wire("in_first", &ib.q().eq_lit(0));
    let tc_cur = m.wire("tcode_cur", &first.select(&s_tcode, &tc_q.q()));
    let words = data.lanes(32);
    let mut fields_terms = Vec::new();
    let mut nbits_terms = Vec::new();
    let mut obeats_terms = Vec::new();
    for tc in 0..4u8 {
        let t = c.t_of(tc);
        let fb = field_bits(t, shifted);
        let fields: Vec<Expr> = words.iter().map(|x| x.slice(t, 32 - t).zext(fb)).collect();
        let mut bus = Expr::cat(&fields);
        if bus.width() < w {
            bus = Expr::cat(&[bus, Expr::zero(w - k * fb)]);
        }
        if !(nw * fb).is_multiple_of(ow) {
            return Err(err(format!(
                "t = {}: {} bits per block are not whole {}-bit output beats",
                t,
                nw * fb,
                ow
            )));
        }
        nbits_terms.push(
            tc_cur
                .eq_lit(tc as u64)
                .gate(&Expr::lit(cw, (k * fb) as u64)),
        );
        fields_terms.push(tc_cur.eq_lit(tc as u64).gate(&bus));
        obeats_terms.push(
            tc_q.q()
                .eq_lit(tc as u64)
                .gate(&Expr::lit(sw, (nw * fb / ow - 1) as u64)),
        );
    }
    let lane = (0..4u8).fold(ow, |g, tc| gcd(g, k * field_bits(c.t_of(tc), shifted)));
    let fields = m.wire("in_fields", &or_tree(fields_terms, w));
    let nbits = m.wire("in_bits", &or_tree(nbits_terms, cw));
    let ob_last = m.wire("out_last_beat", &or_tree(obeats_terms, sw));

    m.comment("Output: the top 32k bits whenever that many wait");
    let o_valid = m.wire("out_valid", &cnt.q().ge(&Expr::lit(cw, ow as u64)));
    let fire = m.wire("out_fire", &(&o_valid & &m_ready));
    let o_last = m.wire("out_last", &ob.q().eq(&ob_last));
    let rem = m.wire(
        "rem",
        &fire.select(&(cnt.q() - Expr::lit(cw, ow as u64)), &cnt.q()),
    );
    let acc_rem = fire.select(
        &Expr::cat(&[acc.q().slice(0, w - ow), Expr::zero(ow)]),
        &acc.q(),
    );
    let s_ready = m.wire("in_ready", &rem.lt(&Expr::lit(cw, ow as u64)));
    let accept = m.wire("accept", &(&s_valid & &s_ready));
    m.comment(format!(
        "Place the beat's fields after the waiting bits: a logarithmic shifter on {}-bit \
         lanes (every count is a multiple), LSB first",
        lane
    ));
    let lb = lane.trailing_zeros();
    let aw = clog2(ow as u64) - lb;
    let placed = if aw == 0 {
        // Whole output beats only (shifted layout, k words): nothing waits when a beat is
        // taken.
        m.unused(&rem);
        fields.lanes(lane)
    } else {
        let amt = m.wire("place_amt", &rem.slice(lb, aw));
        let mut spare = vec![rem.slice(lb + aw, cw - lb - aw)];
        if lb > 0 {
            spare.push(rem.slice(0, lb));
        }
        m.unused(&Expr::cat(&spare));
        shift_lanes(&mut m, "place", &fields.lanes(lane), &amt, false)
    };
    let placed = m.wire("placed", &Expr::cat_lsb(&placed));
    m.next(&acc, &(acc_rem | accept.gate(&placed)), None);
    m.next(&cnt, &(rem.clone() + accept.gate(&nbits)), None);
    let ib_end = ib.q().eq_lit(slots as u64 - 1);
    m.next(
        &ib,
        &ib_end.select(&Expr::zero(sw), &(ib.q() + Expr::lit(sw, 1))),
        Some(&accept),
    );
    m.next(&tc_q, &tc_cur, Some(&(&accept & &first)));
    m.next(
        &ob,
        &o_last.select(&Expr::zero(sw), &(ob.q() + Expr::lit(sw, 1))),
        Some(&fire),
    );

    s_in.accept(&mut m, &s_ready);
    out.drive(
        &mut m,
        &o_valid,
        &[
            ("data", beat_of(&acc.q().slice(w - ow, ow), k)),
            ("last", o_last),
            ("tcode", tc_q.q()),
        ],
    );
    m.finish()
}

/// Copies of the restore mode register, one per 32 bits of the accumulator.
const MODE_COPIES: u32 = 8;

/// One restore mode: the condition on (`c_q`, `tcode_q`), bits per word taken (`32 − t`
/// packed; 32 for `w >> t` in a whole word or at t = 0) and `t`.
struct Mode {
    sel: Expr,
    fb: u32,
    t: u32,
}

/// The restore modes of codec `p` for a block's `c` and `tcode`.
fn restore_modes(p: &LossyRtlParams, c: &Expr, tc: &Expr) -> Vec<Mode> {
    let cod = &p.codec;
    let mut v = Vec::new();
    for code in 0..4u8 {
        let t = cod.t_of(code);
        let is = tc.eq_lit(code as u64);
        if t > 0 && cod.layout == TruncLayout::Shifted {
            // Compressed blocks hold the shifted words; a truncated raw block is packed.
            v.push(Mode {
                sel: &is & c,
                fb: 32,
                t,
            });
            v.push(Mode {
                sel: &is & &!c.clone(),
                fb: 32 - t,
                t,
            });
        } else {
            v.push(Mode {
                sel: is,
                fb: field_bits(t, false),
                t,
            });
        }
    }
    v
}

/// The restored word from a field of `fb` bits (see [`Mode`]).
fn restore_word(field: &Expr, md: &Mode, fill: RestoreFill) -> Expr {
    if md.t == 0 {
        return field.clone();
    }
    let keep = 32 - md.t;
    let v = Expr::cat(&[field.slice(0, keep), Expr::zero(md.t)]);
    match fill {
        RestoreFill::Zero => v,
        RestoreFill::Midpoint => {
            let inf_nan = v.slice(23, 8).eq_lit(0xFF);
            let mid = Expr::cat(&[Expr::zero(32 - md.t), !inf_nan, Expr::zero(md.t - 1)]);
            v | mid
        }
    }
}

/// The accumulator `acc` shifted up by the block's output beat (4 fields of its mode), in
/// 32-bit slices, each selected by its own copy of the mode register (one select net to
/// all 256 bits costs a chain of buffers).
fn shifted_by_mode(acc: &Expr, modes: &[Mode], mode_copies: &[crate::hdl::Reg]) -> Vec<Expr> {
    let w = acc.width();
    (0..MODE_COPIES)
        .map(|k| {
            let lo = k * (w / MODE_COPIES);
            let terms = modes
                .iter()
                .enumerate()
                .map(|(i, md)| {
                    let s = 4 * md.fb;
                    let v = Expr::cat(&[acc.slice(0, w - s), Expr::zero(s)]);
                    mode_copies[k as usize]
                        .q()
                        .bit(i as u32)
                        .gate(&v.slice(lo, w / MODE_COPIES))
                })
                .collect();
            or_tree(terms, w / MODE_COPIES)
        })
        .collect()
}

/// The beat size of each mode plus `extra`, chosen by the one-hot modes `modes` (`cw` bits).
fn beat_bits(modes: &[Mode], extra: u32, cw: u32) -> Expr {
    or_tree(
        modes
            .iter()
            .map(|md| md.sel.gate(&Expr::lit(cw, (4 * md.fb + extra) as u64)))
            .collect(),
        cw,
    )
}

/// The output beat: 4 fields from the top of the accumulator `top`, each restored with `t`
/// zero (or mid-point) bits below it, by the block's mode.
fn restored_beat(m: &mut ModuleBuilder, top: &Expr, modes: &[Mode], fill: RestoreFill) -> Expr {
    m.comment("Restore: t zero (or mid-point) bits below each field");
    let ib = top.width();
    let beat_terms: Vec<Expr> = modes
        .iter()
        .map(|md| {
            let ws: Vec<Expr> = (0..4)
                .map(|i| {
                    let f = top.slice(ib - md.fb * (i + 1), md.fb);
                    restore_word(&f, md, fill)
                })
                .collect();
            md.sel.gate(&Expr::cat_lsb(&ws))
        })
        .collect();
    m.wire("out_data", &or_tree(beat_terms, ib))
}

/// `cpack_lossy_restore`: the decompressor's words in, the block's 32-bit words out, 4 per
/// beat (§6 item 4).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_words_i[127:0]`/`s_last_i`/`s_err_i`/`s_c_i`/
/// `s_tcode_i[1:0]` (`c` and `tcode` sampled with a block's first beat) → `m_valid_o`/
/// `m_ready_i`/`m_data_o[127:0]`/`m_last_o`/`m_err_o`.
///
/// A 256-bit accumulator takes a beat while at most 128 bits wait; the output is 4 words
/// restored from its top bits, valid while a beat's worth wait or the block's last input is
/// in (missing bits read as zero). A block has `block_bytes/16` output beats; input beats
/// past them are dropped up to `last`, the next block's first beat taken in the cycle the
/// block's last output beat leaves. An output beat carries `err` when any of its bits came
/// from a beat marked `err` or from after one.
pub fn unpack_restore(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let cod = &p.codec;
    let nw = cod.words() as u32;
    if !nw.is_multiple_of(4) {
        return Err(err(format!(
            "block_bytes = {} is not a whole number of 16 B beats",
            cod.block_bytes
        )));
    }
    let nbo = nw / 4;
    let (w, ib) = (256u32, 128u32);
    let cw = clog2(w as u64 + 1);
    let bw = clog2(nbo as u64).max(1);
    let mut m = ModuleBuilder::new(format!("cpack_lossy_restore_{}", p.tag()));
    header(
        &mut m,
        "fp::unpack_restore",
        p,
        "§2.6 (layouts, restore), §6 item 4",
    );
    m.header("4 words in and 4 restored words out per cycle; a 256-bit accumulator");
    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[
            ("words", ib),
            ("last", 1),
            ("err", 1),
            ("c", 1),
            ("tcode", 2),
        ]),
    );
    let s_valid = s_in.valid.clone();
    let words = s_in.field("words");
    let s_last = s_in.field("last");
    let s_err = s_in.field("err");
    let s_c = s_in.field("c");
    let s_tcode = s_in.field("tcode");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    let act = m.reg("active_q", 1, Some(0));
    let in_done = m.reg("in_done_q", 1, None);
    let out_done = m.reg("out_done_q", 1, None);
    let acc = m.reg("acc_q", w, None);
    let cnt = m.reg("cnt_q", cw, Some(0));
    let ob = m.reg("out_beat_q", bw, Some(0));
    let err_v = m.reg("err_q", 1, None);
    let err_at = m.reg("err_at_q", cw, None);

    m.comment(
        "Mode of the block in the accumulator, decoded from its first beat's c and tcode: \
         one-hot, with the bits per output beat (4 fields)",
    );
    let in_modes = restore_modes(p, &s_c, &s_tcode);
    if cod.layout == TruncLayout::Packed {
        // Both kinds of block are packed: `c` only matters to the shifted layout.
        m.unused(&s_c);
    }
    let mode_q = m.reg("mode_q", in_modes.len() as u32, None);
    let mode_copies = m.reg_replicas("mode_q", in_modes.len() as u32, None, MODE_COPIES as usize);
    let x_q = m.reg("take_bits_q", cw, None);
    let modes: Vec<Mode> = in_modes
        .iter()
        .enumerate()
        .map(|(i, md)| Mode {
            sel: mode_q.q().bit(i as u32),
            fb: md.fb,
            t: md.t,
        })
        .collect();
    let x = x_q.q();
    let xh_q = m.reg("take_half_q", cw, None);

    m.comment("Output: 4 fields from the top, restored; valid once they are in");
    // Whether a beat's worth waits, registered with the count it belongs to.
    let enough_q = m.reg("enough_q", 1, Some(0));
    let enough = enough_q.q();
    let avail = m.wire("avail", &(&enough | &in_done.q()));
    let o_valid = m.wire("out_valid", &(&(&act.q() & &!out_done.q()) & &avail));
    let fire = m.wire("out_fire", &(&o_valid & &m_ready));
    let o_last = m.wire("out_last", &ob.q().eq_lit(nbo as u64 - 1));
    let done_eff = m.wire("out_done_eff", &(&out_done.q() | &(&fire & &o_last)));
    let fin = m.wire("blk_fin", &(&(&act.q() & &in_done.q()) & &done_eff));
    let start = m.wire("start", &(&!act.q() | &fin));
    // What is left after an output beat, and where the next input beat goes, are computed
    // for both cases from registers; `fire` only chooses among them.
    let used = m.wire(
        "cnt_used",
        &enough.select(&(cnt.q() - x.clone()), &Expr::zero(cw)),
    );
    let beat = Expr::lit(cw, ib as u64);
    let used_in = m.wire("used_in", &(&used + &beat));
    let cnt_in = m.wire("cnt_in", &(cnt.q() + beat.clone()));
    let rem = m.wire("rem", &fire.select(&used, &cnt.q()));
    let slices = shifted_by_mode(&acc.q(), &modes, &mode_copies);
    let half = Expr::lit(cw, (w - ib) as u64);
    // `used <= half` without the subtraction: `cnt <= x + half` (or nothing waits).
    let room_used = m.wire("room_used", &(&!enough.clone() | &cnt.q().le(&xh_q.q())));
    let room_cnt = m.wire("room_cnt", &cnt.q().le(&half));
    let room = m.wire("room", &fire.select(&room_used, &room_cnt));
    let s_ready = m.wire(
        "in_ready",
        &(&start | &(&(&act.q() & &!in_done.q()) & &(&done_eff | &room))),
    );
    let accept = m.wire("accept", &(&s_valid & &s_ready));
    let take = m.wire("take", &(&accept & &(&start | &!done_eff.clone())));

    let lane = in_modes.iter().fold(ib, |g, md| gcd(g, 4 * md.fb));
    m.comment(format!(
        "Place the beat after the waiting bits: a logarithmic shifter on {}-bit lanes (every \
         count is a multiple), LSB first",
        lane
    ));
    let pos = m.wire("place_pos", &start.select(&Expr::zero(cw), &rem));
    let lb = lane.trailing_zeros();
    let amt = m.wire("place_amt", &pos.slice(lb, cw - lb));
    if lb > 0 {
        m.unused(&pos.slice(0, lb));
    }
    let bus = Expr::cat(&[Expr::cat(&words.lanes(32)), Expr::zero(w - ib)]);
    let placed = shift_lanes(&mut m, "place", &bus.lanes(lane), &amt, false);
    let placed = m.wire("placed", &Expr::cat_lsb(&placed));
    let acc_rem = m.wire("acc_rem", &fire.select(&Expr::cat_lsb(&slices), &acc.q()));
    let base = start.select(&Expr::zero(w), &acc_rem);
    m.next(&acc, &(base | take.gate(&placed)), None);
    let cnt_d = start.select(
        &accept.gate(&beat),
        &done_eff.select(
            &Expr::zero(cw),
            &take.select(&fire.select(&used_in, &cnt_in), &rem),
        ),
    );
    m.next(&cnt, &cnt_d, None);
    m.next(&act, &start.select(&accept, &Expr::lit(1, 1)), None);
    let first = m.wire("in_first", &(&accept & &start));
    let in_sel = Expr::cat_lsb(&in_modes.iter().map(|md| md.sel.clone()).collect::<Vec<_>>());
    m.next(&mode_q, &in_sel, Some(&first));
    for c in &mode_copies {
        m.next(c, &in_sel, Some(&first));
        // The low slices never receive a long mode's shifted bits.
        m.unused(&c.q());
    }
    let in_x = beat_bits(&in_modes, 0, cw);
    m.next(&x_q, &in_x, Some(&first));
    m.next(&xh_q, &beat_bits(&in_modes, w - ib, cw), Some(&first));
    // `cnt_d >= x` of the next cycle, from the same candidates as `cnt_d`: a new block
    // starts with one beat or none against its own mode.
    let ge = |v: &Expr| v.ge(&x);
    let enough_d = start.select(
        &(&accept & &beat.ge(&in_x)),
        &(!done_eff.clone()
            & take.select(
                &fire.select(&ge(&used_in), &ge(&cnt_in)),
                &fire.select(&ge(&used), &enough),
            )),
    );
    m.next(&enough_q, &enough_d, None);
    let got_last = &accept & &s_last;
    let in_done_d = start.select(&got_last, &(&in_done.q() | &got_last));
    m.next(&in_done, &in_done_d, None);
    let out_done_d = &!start.clone() & &done_eff;
    m.next(&out_done, &out_done_d, None);
    m.next(
        &ob,
        &o_last.select(&Expr::zero(bw), &(ob.q() + Expr::lit(bw, 1))),
        Some(&fire),
    );

    m.comment("Error: where the first beat marked err starts, relative to the top");
    let new_err = m.wire("err_new", &(&take & &s_err));
    let err_cur = &(&!start.clone() & &err_v.q());
    let at_used = err_at
        .q()
        .ge(&x)
        .select(&(err_at.q() - x.clone()), &Expr::zero(cw));
    let at_rem = fire.select(&at_used, &err_at.q());
    m.next(&err_v, &(err_cur | &new_err), None);
    m.next(
        &err_at,
        &err_cur.select(&at_rem, &pos),
        Some(&(err_cur | &new_err)),
    );
    let o_err = m.wire("out_err", &(&err_v.q() & &err_at.q().lt(&x)));

    let o_data = restored_beat(&mut m, &acc.q().slice(w - ib, ib), &modes, cod.fill);

    s_in.accept(&mut m, &s_ready);
    out.drive(
        &mut m,
        &o_valid,
        &[("data", o_data), ("last", o_last), ("err", o_err)],
    );
    m.finish()
}
