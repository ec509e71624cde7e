//! `cpack_lossy_decomp` (§6 item 3): chunks in, the words C-Pack ran on out, 4 per beat
//! (`docs/FORMATS.md`, "Decompressor choices"). Built for 1 GHz on Nangate45 at the paper's
//! block rate.
//!
//! The only loop is the token position. Chunks are written whole into a ring of four 128-bit
//! slots (no placement shifter), and the position of the next token is a one-hot vector over
//! the ring's grid points: a token starts only at a multiple of the greatest common divisor
//! of the token lengths (2 bits with the original codes and 16 entries), so 256 points.
//! Every point's token length is decoded from the bits there (the code is its first 2 or 4
//! bits), and from those the length of the two tokens from each point (a data-only function
//! of the ring, off the loop), so four tokens advance the position by two AND-OR steps, one
//! term per two-token length. Everything else is a pipeline after that loop:
//! * **L** (loop): a beat is issued when its bits are in (the slots holding the next 136 bits
//!   hold this block's chunks, or the block's last chunk is in) and the output FIFO has room
//!   (a registered credit). The position moves four tokens on, to the slot after the block's
//!   last chunk after its last beat, or one slot per raw chunk: it is one of three registered
//!   candidates chosen by registered flags, so `go` (which reads registered position regions)
//!   and the loop do not wait for each other;
//! * **X1**: the three slots from the position, shifted so the beat's first token is on top
//!   (136 bits);
//! * **X2**: the four tokens' start positions within those 136 bits (the same AND-OR steps);
//! * **X3**: the tokens extracted and parsed; errors (illegal code, index of an entry not
//!   filled in this block, a token past the block's last chunk); the dictionary slots of the
//!   pushes and the same-beat bypass sources;
//! * **D**: the words rebuilt from the dictionary (with the bypass from earlier words of the
//!   beat), the dictionary written; the beat enters an 8-entry output FIFO.
//!
//! A slot is freed oldest first once the position has left it (or its block has ended); slots
//! carry their block's 2-bit tag, so the position running past a corrupt block's data never
//! frees or reads the next block's chunks.

use super::{bytes_from_top, decomp_beats, err, header, last_beat_words, LossyRtlParams, SPEC};
use crate::hdl::blocks::{fifo, or_tree, shift_lanes_copies};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder, Reg};
use crate::model::cpack::{CodeTable, CpackParams};
use crate::model::cpack_lossy::fp::TruncLayout;
use crate::model::cpack_lossy::{LossyParams, CHUNK_BITS};
use crate::rtl::cpack::{
    dict_store, length_groups, parse, position_lengths, token_push, token_word, uses_index, Parsed,
    TOK_W,
};
use std::sync::Arc;

/// Ring slots (chunks).
const NS: usize = 4;
/// Bits per slot.
const SB: u32 = CHUNK_BITS as u32;
/// Output FIFO depth: covers the beats in flight (L to D) at one beat per cycle.
const FIFO_DEPTH: u32 = 8;
/// Tokens per beat.
const TPB: usize = 4;
/// Ring slots, as the width of a one-hot slot vector.
const NSU: u32 = NS as u32;
/// Bit positions in the ring.
const PBITS: u32 = NSU * SB;
/// The four widest tokens of a beat.
const SPAN: u32 = TPB as u32 * TOK_W;
/// Relative positions in the window (0..=SPAN).
const RW: u32 = SPAN + 1;
/// Ring positions per copy of the position's take flags.
const RLANES: u32 = 32;

/// The token position's grid: a block starts at a slot's first bit and every token length
/// is a multiple of `g` bits (the greatest common divisor of the lengths and the slot size:
/// 2 for the original codes with 16 dictionary entries), so a token starts only at a
/// multiple of `g` and the position is one-hot over those `pp` points of the ring, `sp` per
/// slot.
#[derive(Clone, Copy)]
struct Grid {
    g: u32,
    pp: u32,
    sp: u32,
}

impl Grid {
    fn of(cp: &CpackParams) -> Grid {
        let g = length_groups(cp)
            .iter()
            .fold(SB, |a, (n, _)| super::fp::gcd(a, *n));
        Grid {
            g,
            pp: PBITS / g,
            sp: SB / g,
        }
    }

    /// Per slot: whether any grid point at offsets `lo..lo + w` (bits) of `v` is set.
    fn slot_or(&self, v: &Expr, lo: u32, w: u32) -> Expr {
        let a = lo.div_ceil(self.g);
        let n = (lo + w).div_ceil(self.g) - a;
        Expr::cat_lsb(
            &(0..NSU)
                .map(|j| v.slice(j * self.sp + a, n).any())
                .collect::<Vec<_>>(),
        )
    }
}

/// `v` rotated towards higher positions by `n` (bit p moves to `(p + n) mod width`); `v`
/// must be a named signal.
fn rotl(v: &Expr, n: u32) -> Expr {
    let w = v.width();
    let n = n % w;
    if n == 0 {
        return v.clone();
    }
    Expr::cat(&[v.slice(0, w - n), v.slice(w - n, n)])
}

/// One token step on one-hot positions: position `q + L` is set where position `q` is set
/// and its token is `L` points long (rotating around the ring, or shifting out of a
/// window); points are `g` bits (the wires are named by the length in bits).
fn token_step(
    m: &mut ModuleBuilder,
    name: &str,
    pos: &Expr,
    lens: &[(u32, Expr)],
    ring: bool,
    g: u32,
) -> Expr {
    let w = pos.width();
    let terms: Vec<Expr> = lens
        .iter()
        .filter(|(n, _)| ring || *n < w)
        .map(|(n, ind)| {
            let tn = format!("{}_l{}", name, n * g);
            if ring {
                rotl(&m.wire(&tn, &(pos & ind)), *n)
            } else {
                // Only positions whose token ends inside the window.
                let k = w - n;
                let t = m.wire(&tn, &(pos.slice(0, k) & ind.slice(0, k)));
                Expr::cat(&[t, Expr::zero(*n)])
            }
        })
        .collect();
    m.wire(name, &or_tree(terms, w))
}

/// `v` rotated by one slot (one-hot slot vectors).
fn next_slot(v: &Expr) -> Expr {
    rotl(v, 1)
}

/// `cpack_lossy_decomp`: chunks in, the words C-Pack ran on out, 4 per beat (see the module
/// docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_chunk_i[127:0]`/`s_last_i`/`s_c_i`/`s_tcode_i[1:0]`
/// (`c` and `tcode` sampled with a block's first chunk) → `m_valid_o`/`m_ready_i`/
/// `m_words_o[127:0]`/`m_last_o`/`m_err_o`/`m_c_o`/`m_tcode_o[1:0]` (the block's `c` and
/// `tcode` on each of its beats, as the restore unit takes them).
///
/// A compressed block gives `ceil(cpack_words/4)` beats (8 at t = 0; 6, 5, 4 packed; a
/// short last beat has its missing words 0). An illegal code (`1111`), an index of an empty
/// entry, a shifted-layout word wider than `32 − t` bits, or a token running past the last
/// chunk sets `err` on that beat and every later beat of the block (words 0); chunks beyond
/// the words needed are dropped. A raw block (`c = 0`) passes its chunks through, one beat
/// each.
pub fn decompressor(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let c = &p.codec;
    if c.codes != CodeTable::Original {
        return Err(err(
            "the decompressor implements the original C-Pack codes (codes: original)".into(),
        ));
    }
    let cp = c.cpack();
    let mut m = ModuleBuilder::new(format!("cpack_lossy_decomp_{}", p.tag()));
    header(
        &mut m,
        "decompressor",
        p,
        "§2.2-§2.4 (codes, dictionary, chunks), §6 item 3",
    );
    m.header(
        "Stages: L (token-position loop on a 4 x 128-bit chunk ring) -> X1 -> X2 -> X3 -> D -> FIFO",
    );
    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[("chunk", SB), ("last", 1), ("c", 1), ("tcode", 2)]),
    );
    let inp = Input {
        valid: s_in.valid.clone(),
        chunk: s_in.field("chunk"),
        last: s_in.field("last"),
        c: s_in.field("c"),
        tcode: s_in.field("tcode"),
    };
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    let grid = Grid::of(&cp);
    let ring = chunk_ring(&mut m);
    let lp = loop_state(&mut m, grid);
    let pos = position(&mut m, grid, &ring, &lp);
    let is = issue(&mut m, &ring, &lp, &pos);
    token_steps(&mut m, &cp, grid, &ring, &lp, &pos, &is, &slot_grid(grid)?);
    let blk_end = block_state(&mut m, c, &lp, &is);
    let s_ready = ring_writes(&mut m, &ring, &lp, &pos, &is, &blk_end, &inp);
    let enc = offset_encoder(grid)?;
    let x1 = position_offset(&mut m, c, &lp, &pos, &is, &enc);
    let x2 = window_shift(&mut m, &ring, &x1);
    let x3 = token_starts(&mut m, &cp, &x2);
    let picks = (1..TPB)
        .map(|k| {
            let (lo, hi) = pick_range(k);
            token_pick(lo, hi)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let toks = token_parse(&mut m, &cp, &x3, &picks);
    let d = d_stage(&mut m, &x3, &toks);
    let w = dict_words(&mut m, c, &cp, &d);
    let o = output_fifo(&mut m, &lp, &is, &d, &w, &m_ready);

    s_in.accept(&mut m, &s_ready);
    out.drive(
        &mut m,
        &o.valid,
        &[
            ("words", o.words),
            ("last", o.last),
            ("err", o.err),
            ("c", o.c),
            ("tcode", o.tcode),
        ],
    );
    m.finish()
}

/// The input beat: a chunk, whether it is its block's last, and the block's `c` and
/// `tcode` (with its first chunk).
struct Input {
    valid: Expr,
    chunk: Expr,
    last: Expr,
    c: Expr,
    tcode: Expr,
}

/// The chunk ring: per slot its chunk, block tag, last flag, `c`, `tcode` and chunk index;
/// the write and free pointers, and the block tag and chunk index of the next chunk in.
struct Ring {
    full: Vec<Reg>,
    sdata: Vec<Reg>,
    stag: Vec<Reg>,
    slast: Vec<Reg>,
    sc: Vec<Reg>,
    stc: Vec<Reg>,
    sidx: Vec<Reg>,
    wsel: Reg,
    fsel: Reg,
    wbid: Reg,
    wcidx: Reg,
    /// Full and last flags of all slots.
    fullv: Expr,
    lastv: Expr,
}

/// The chunk ring's registers, one per slot and field.
fn chunk_ring(m: &mut ModuleBuilder) -> Ring {
    // ---- Chunk ring ----
    // One register per slot: `slot<j>_<field>_q`.
    let per_slot = |m: &mut ModuleBuilder, field: &str, w: u32, reset: Option<u64>| {
        (0..NS)
            .map(|j| m.reg(&format!("slot{}_{}_q", j, field), w, reset))
            .collect::<Vec<_>>()
    };
    let full = per_slot(m, "full", 1, Some(0));
    let sdata = per_slot(m, "data", SB, None);
    let stag = per_slot(m, "tag", 2, None);
    let slast = per_slot(m, "last", 1, None);
    let sc = per_slot(m, "c", 1, None);
    let stc = per_slot(m, "tcode", 2, None);
    let sidx = per_slot(m, "cidx", 4, None);
    let wsel = m.reg("wr_slot_q", NSU, Some(1));
    let fsel = m.reg("free_slot_q", NSU, Some(1));
    let wbid = m.reg("wr_blk_q", 2, Some(0));
    let wcidx = m.reg("wr_cidx_q", 4, Some(0));
    let fullv = m.wire(
        "slot_full",
        &Expr::cat_lsb(&full.iter().map(|r| r.q()).collect::<Vec<_>>()),
    );
    let lastv = m.wire(
        "slot_last",
        &Expr::cat_lsb(&slast.iter().map(|r| r.q()).collect::<Vec<_>>()),
    );
    Ring {
        full,
        sdata,
        stag,
        slast,
        sc,
        stc,
        sidx,
        wsel,
        fsel,
        wbid,
        wcidx,
        fullv,
        lastv,
    }
}

/// The loop's registers: the three position candidates and the flags choosing one, the
/// block's state, tag, tcode, beat count and end, the beats in flight and this block's slots.
struct Loop {
    r: Reg,
    rprev: Reg,
    jslot: Reg,
    t_pos: Vec<Reg>,
    t_jump: Vec<Reg>,
    t_prev: Vec<Reg>,
    st_new: Reg,
    st_dec: Reg,
    st_raw: Reg,
    st_end: Reg,
    bid: Reg,
    btc: Reg,
    nbm1: Reg,
    beat: Reg,
    done: Reg,
    eslot: Reg,
    eidx: Reg,
    inflight: Reg,
    tmatch: Reg,
}

impl Loop {
    /// The value for the position candidate taken (the flags' `go` copies).
    fn by_take(&self, m: &mut ModuleBuilder, name: &str, vals: [Expr; 3]) -> Expr {
        let gx = self.t_pos.len() - 1;
        let [vp, vj, vv] = vals;
        let w = vp.width();
        let v = or_tree(
            vec![
                self.t_pos[gx].q().gate(&vp),
                self.t_jump[gx].q().gate(&vj),
                self.t_prev[gx].q().gate(&vv),
            ],
            w,
        );
        m.wire(name, &v)
    }
}

/// The loop state: the position's candidates, the flags choosing them, and the block's
/// registers.
fn loop_state(m: &mut ModuleBuilder, grid: Grid) -> Loop {
    // ---- Loop state ----
    // The position is one of three registered candidates, chosen by registered flags (one
    // copy per 32 positions and one for `go`): the position four tokens on, or the next
    // slot's first bit after a raw chunk (`pos_q`), the previous position (`pos_prev_q`), or
    // the slot after the block's last chunk (`pos_jump_q`). `go`, which waits for the
    // position's slot, only sets the flags.
    let r = m.reg("pos_q", grid.pp, None);
    let rprev = m.reg("pos_prev_q", grid.pp, Some(1));
    let jslot = m.reg("pos_jump_q", NSU, Some(0));
    let ncopy = grid.pp.div_ceil(RLANES) as usize + 1;
    let t_pos = m.reg_replicas("take_pos_q", 1, Some(0), ncopy);
    let t_jump = m.reg_replicas("take_jump_q", 1, Some(0), ncopy);
    let t_prev = m.reg_replicas("take_prev_q", 1, Some(1), ncopy);
    let st_new = m.reg("st_new_q", 1, Some(1));
    let st_dec = m.reg("st_dec_q", 1, Some(0));
    let st_raw = m.reg("st_raw_q", 1, Some(0));
    let st_end = m.reg("st_end_q", 1, Some(0));
    let bid = m.reg("blk_q", 2, Some(0));
    let btc = m.reg("blk_tcode_q", 2, None);
    let nbm1 = m.reg("blk_beats_m1_q", 4, None);
    let beat = m.reg("beat_q", 4, None);
    let done = m.reg("blk_done_q", 1, Some(0));
    let eslot = m.reg("blk_end_slot_q", NSU, Some(0));
    let eidx = m.reg("blk_end_cidx_q", 4, None);
    let inflight = m.reg("inflight_q", 4, Some(0));
    // Slots whose tag is this block's, registered (no tag compare in front of `go`).
    let tmatch = m.reg("slot_tag_cur_q", NSU, Some(0));
    Loop {
        r,
        rprev,
        jslot,
        t_pos,
        t_jump,
        t_prev,
        st_new,
        st_dec,
        st_raw,
        st_end,
        bid,
        btc,
        nbm1,
        beat,
        done,
        eslot,
        eidx,
        inflight,
        tmatch,
    }
}

/// The position, its slot, and which slots hold this block's chunks.
struct Pos {
    /// One-hot over the ring's bit positions.
    rq: Expr,
    /// One-hot slot.
    rslot: Expr,
    /// The position is at its slot's first bit (block start and raw states).
    at_start: Expr,
    /// Slots tagged with this block.
    tagcur: Expr,
    /// Slots holding a chunk of this block.
    fb: Expr,
    /// The next 136 bits are in.
    in_now: Expr,
}

/// L: the position from its candidates, its slot and regions, and whether the next 136
/// bits are in.
fn position(m: &mut ModuleBuilder, grid: Grid, ring: &Ring, lp: &Loop) -> Pos {
    let Loop {
        r,
        rprev,
        jslot,
        t_pos,
        t_jump,
        t_prev,
        ..
    } = lp;
    m.comment("L: the position, and whether the next 136 bits are in");
    let jumpv = Expr::cat_lsb(
        &(0..NSU)
            .map(|j| Expr::cat_lsb(&[jslot.q().bit(j), Expr::zero(grid.sp - 1)]))
            .collect::<Vec<_>>(),
    );
    let jumpv = m.wire("pos_jumpv", &jumpv);
    let rq = Expr::cat_lsb(
        &(0..grid.pp.div_ceil(RLANES))
            .map(|g| {
                let c = g as usize;
                let lanes = RLANES.min(grid.pp - g * RLANES);
                let sl = |v: &Expr| v.slice(g * RLANES, lanes);
                or_tree(
                    vec![
                        t_pos[c].q().gate(&sl(&r.q())),
                        t_jump[c].q().gate(&sl(&jumpv)),
                        t_prev[c].q().gate(&sl(&rprev.q())),
                    ],
                    lanes,
                )
            })
            .collect::<Vec<_>>(),
    );
    let rq = m.wire("pos", &rq);
    // The bits of a beat end within this slot and the next for offsets up to 2·SB − span;
    // later offsets need a third slot.
    let lo_max = 2 * SB - SPAN;
    // Per slot: the position is at a near offset (the next 136 bits end in the next slot), a
    // far one, or a slot's first bit. For a step (`pos_q`) by OR trees on its register; for
    // a held position registered the cycle before (`go` waits for no position select).
    let p_near = m.reg("pos_prev_near_q", NSU, Some(1));
    let p_far = m.reg("pos_prev_far_q", NSU, Some(0));
    let p_first = m.reg("pos_prev_first_q", NSU, Some(1));
    let p_slot = m.wire("pos_prev_slot", &(p_near.q() | p_far.q()));
    // The regions of this position (registered for the next cycle): of `pos_q` by its own
    // OR trees (a step or a raw chunk), of a jump (a slot's first bit), or held.
    let step = |lo: u32, w: u32| grid.slot_or(&r.q(), lo, w);
    let jq = jslot.q();
    let near_d = lp.by_take(m, "pos_near", [step(0, lo_max + 1), jq.clone(), p_near.q()]);
    let far_d = lp.by_take(
        m,
        "pos_far",
        [
            step(lo_max + 1, SB - lo_max - 1),
            Expr::zero(NSU),
            p_far.q(),
        ],
    );
    let step_first = Expr::cat_lsb(&(0..NSU).map(|j| r.q().bit(j * grid.sp)).collect::<Vec<_>>());
    let first_d = lp.by_take(m, "pos_first_now", [step_first, jq.clone(), p_first.q()]);
    m.next(&p_near, &near_d, None);
    m.next(&p_far, &far_d, None);
    m.next(&p_first, &first_d, None);
    let (p_near, p_far, p_first) = (p_near.q(), p_far.q(), p_first.q());
    let step_slot = m.wire("pos_step_slot", &grid.slot_or(&r.q(), 0, SB));
    let zero4 = Expr::zero(NSU);
    let rslot = lp.by_take(m, "pos_slot", [step_slot, jslot.q(), p_slot.clone()]);
    let at_start = lp.by_take(
        m,
        "pos_first",
        [next_slot(&p_first), jslot.q(), p_first.clone()],
    );
    let tagcur = m.wire(
        "slot_cur",
        &Expr::cat_lsb(
            &ring
                .stag
                .iter()
                .map(|t| t.q().eq(&lp.bid.q()))
                .collect::<Vec<_>>(),
        ),
    );
    // A slot holds a chunk of this block (an older block's chunk may still wait in the slot
    // after this block's last one).
    let fb = m.wire("slot_mine", &(&ring.fullv & &lp.tmatch.q()));
    // Bit j: slot j + 1 (j + 2) holds a chunk of this block.
    let f1 = m.wire("slot_mine_next", &rotl(&fb, NSU - 1));
    let f2 = m.wire("slot_mine_next2", &rotl(&f1, NSU - 1));
    let two = m.wire("slot_mine2", &(&fb & &f1));
    let three = m.wire("slot_mine3", &(&two & &f2));
    // Precise for a held position, a raw step and a jump (at a slot's first bit: near).
    let prec = |near: &Expr, far: &Expr| (&(near & &two) | &(far & &three)).any();
    let in_now = lp.by_take(
        m,
        "bits_in",
        [
            prec(&step(0, lo_max + 1), &step(lo_max + 1, SB - lo_max - 1)),
            prec(&jslot.q(), &zero4),
            prec(&p_near, &p_far),
        ],
    );
    Pos {
        rq,
        rslot,
        at_start,
        tagcur,
        fb,
        in_now,
    }
}

/// The loop's decisions this cycle, with the block's end as far as its chunks are in and
/// the fields of the position's slot.
struct Issue {
    done_now: Expr,
    eslot_now: Expr,
    eidx_now: Expr,
    credit_r: Reg,
    s_c_now: Expr,
    s_tc_now: Expr,
    s_cidx: Expr,
    raw_final: Expr,
    final_dec: Expr,
    go_dec: Expr,
    go_raw: Expr,
    go: Expr,
    raw_end: Expr,
    jump: Expr,
    to_end: Expr,
    prev_tag: Expr,
    new_ok: Expr,
}

/// L: the block's end, the position slot's fields, and whether a beat issues, the position
/// jumps, or a block starts or ends.
fn issue(m: &mut ModuleBuilder, ring: &Ring, lp: &Loop, pos: &Pos) -> Issue {
    let Loop {
        st_new,
        st_dec,
        st_raw,
        st_end,
        bid,
        nbm1,
        beat,
        done,
        eslot,
        eidx,
        ..
    } = lp;
    let Pos {
        rslot,
        at_start,
        fb,
        ..
    } = pos;
    let lastin = m.wire("last_in", &(fb & &ring.lastv));
    let done_now = m.wire("blk_done", &(done.q() | lastin.any()));
    let eslot_now = m.wire("blk_end_slot", &(eslot.q() | lastin.clone()));
    let eidx_scan = or_tree(
        (0..NS)
            .map(|j| lastin.bit(j as u32).gate(&ring.sidx[j].q()))
            .collect(),
        4,
    );
    let eidx_now = m.wire("blk_end_cidx", &done.q().select(&eidx.q(), &eidx_scan));
    // Room in the output FIFO for one more beat (registered from the in-flight count).
    let credit_r = m.reg("credit_q", 1, Some(1));
    let credit = credit_r.q();
    // In the block-start and raw states the position is at a slot's first bit.
    let s_full = m.wire("pos_slot_full", &(at_start & fb).any());
    let pick = |m: &mut ModuleBuilder, name: &str, regs: &[Reg]| {
        let w = regs[0].width();
        let v = or_tree(
            (0..NS)
                .map(|j| rslot.bit(j as u32).gate(&regs[j].q()))
                .collect(),
            w,
        );
        m.wire(name, &v)
    };
    let s_c_now = pick(m, "pos_slot_c", &ring.sc);
    let s_tc_now = pick(m, "pos_slot_tcode", &ring.stc);
    let s_cidx = pick(m, "pos_slot_cidx", &ring.sidx);
    // A raw chunk's position is at its slot's first bit: that slot (without the position's
    // region ORs) holds the block's last chunk.
    let raw_final = m.wire("raw_final", &(at_start & &ring.lastv).any());
    let final_dec = m.wire("beat_final", &beat.q().eq(&nbm1.q()));
    let go_dec = m.wire(
        "go_dec",
        &(&(st_dec.q() & credit.clone()) & &(done_now.clone() | pos.in_now.clone())),
    );
    let go_raw = m.wire("go_raw", &(&(st_raw.q() & credit.clone()) & &s_full));
    let go = m.wire("go", &(&go_dec | &go_raw));
    let raw_end = m.wire("raw_end", &(&go_raw & &raw_final));
    // A last beat with the block's last chunk in (written without `go_dec`, which waits for
    // the position's slot: the block-end logic does not).
    let jump = m.wire(
        "jump",
        &(&(&(&(st_dec.q() & credit.clone()) & &final_dec) | &st_end.q()) & &done_now),
    );
    let to_end = m.wire("to_end", &(&(&go_dec & &final_dec) & &!done_now.clone()));
    // Slots of the previous block (freed all at once, the cycle its successor starts).
    let prev_tag = m.wire(
        "slot_prev_blk",
        &Expr::cat_lsb(
            &ring
                .stag
                .iter()
                .map(|t| t.q().eq(&(bid.q() - Expr::lit(2, 1))))
                .collect::<Vec<_>>(),
        ),
    );
    let new_ok = m.wire("new_ok", &(st_new.q() & s_full.clone()));
    Issue {
        done_now,
        eslot_now,
        eidx_now,
        credit_r,
        s_c_now,
        s_tc_now,
        s_cidx,
        raw_final,
        final_dec,
        go_dec,
        go_raw,
        go,
        raw_end,
        jump,
        to_end,
        prev_tag,
        new_ok,
    }
}

/// `cpack_lossy_slot_grid_w<slot bits>_g<grid>`: a slot's stream bits at the grid's points,
/// one output per phase: `phase<r>_o[q]` is stream bit `q·g + r` of the slot (the ring
/// positions count from a chunk's first stream bit, its MSB: `data_i[SB - 1 - (q·g + r)]`).
fn slot_grid(grid: Grid) -> Result<Arc<Module>, HdlError> {
    let g = grid.g;
    let mut m = ModuleBuilder::new(format!("cpack_lossy_slot_grid_w{}_g{}", SB, g));
    m.header("Generator: hwzip::rtl::cpack_lossy::decomp::slot_grid");
    m.header(format!("Parameters: {} bits, a point every {} bits", SB, g));
    m.header(format!("Spec: {} Sec. 2.4 (stream bit order)", SPEC));
    let v = m.input("data_i", SB);
    for r in 0..g {
        let bits: Vec<Expr> = (0..grid.sp).map(|q| v.bit(SB - 1 - (q * g + r))).collect();
        m.output_expr(&format!("phase{}_o", r), &Expr::cat_lsb(&bits));
    }
    m.finish()
}

/// The lengths of two tokens from every grid point: `(n, v)`, bit q of `v` set where the
/// token at point q and the one after it are `n` points long together (`ring_pair<bits>`),
/// from the one-token lengths `lens` (named vectors).
fn pair_lengths(m: &mut ModuleBuilder, grid: Grid, lens: &[(u32, Expr)]) -> Vec<(u32, Expr)> {
    let mut sums: std::collections::BTreeMap<u32, Vec<Expr>> = Default::default();
    for (a, la) in lens {
        for (b, lb) in lens {
            let second = rotl(lb, grid.pp - a);
            sums.entry(a + b).or_default().push(la & &second);
        }
    }
    sums.into_iter()
        .map(|(n, t)| {
            let name = format!("ring_pair{}", n * grid.g);
            (n, m.wire(&name, &or_tree(t, grid.pp)))
        })
        .collect()
}

/// L: the position four tokens on (two AND-OR steps over the ring's two-token lengths), and
/// the candidates and flags for the next cycle.
#[allow(clippy::too_many_arguments)]
fn token_steps(
    m: &mut ModuleBuilder,
    cp: &CpackParams,
    grid: Grid,
    ring: &Ring,
    lp: &Loop,
    pos: &Pos,
    is: &Issue,
    grid_mod: &Arc<Module>,
) {
    let Loop {
        r,
        rprev,
        jslot,
        t_pos,
        t_jump,
        t_prev,
        st_raw,
        ..
    } = lp;
    let rq = &pos.rq;
    m.comment("L: two steps of two tokens from the position (a term per two-token length)");
    // The ring's stream bits at the grid points, one vector per phase (`ring_phase<r>`, bit
    // q: stream bit q·g + r of the ring); the first four bits from every point (a code is at
    // most 4 bits long) are those vectors rotated.
    let g = grid.g;
    let slots = m.instance_array(grid_mod, "u_grid", NSU, |j| {
        vec![("data_i", ring.sdata[j as usize].q())]
    });
    let phases: Vec<Expr> = (0..g)
        .map(|r| {
            let port = format!("phase{}_o", r);
            let v: Vec<Expr> = slots.iter().map(|u| u.out(&port)).collect();
            m.wire(&format!("ring_phase{}", r), &Expr::cat_lsb(&v))
        })
        .collect();
    let rb: [Expr; 4] = std::array::from_fn(|k| {
        let k = k as u32;
        rotl(&phases[(k % g) as usize], grid.pp - k / g)
    });
    let lens: Vec<(u32, Expr)> = position_lengths(cp, &rb)
        .into_iter()
        .map(|(n, e)| (n / g, m.wire(&format!("ring_len{}", n), &e)))
        .collect();
    let pairs = pair_lengths(m, grid, &lens);
    let mut pos = rq.clone();
    for k in 1..=TPB / 2 {
        pos = token_step(m, &format!("pos{}", 2 * k), &pos, &pairs, true, g);
    }
    let pos4 = pos;
    // A raw chunk steps to the next slot's first bit.
    m.next(r, &st_raw.q().select(&rotl(rq, grid.sp), &pos4), None);
    m.next(rprev, rq, None);
    // The slot after the block's last chunk.
    m.next(jslot, &next_slot(&is.eslot_now), None);
    let take_pos = m.wire("take_pos", &(&is.go_dec & &!is.final_dec.clone()));
    let take_step = m.wire("take_step", &(&take_pos | &is.go_raw));
    let take_none = m.wire("take_none", &!(&take_step | &is.jump));
    for c in 0..t_pos.len() {
        m.next(&t_pos[c], &take_step, None);
        m.next(&t_jump[c], &is.jump, None);
        m.next(&t_prev[c], &take_none, None);
    }
}

/// L: the block's state (start, compressed beats, raw chunks, waiting for its end), tag,
/// tcode, beat count and end; returns the cycle it ends.
fn block_state(m: &mut ModuleBuilder, c: &LossyParams, lp: &Loop, is: &Issue) -> Expr {
    let Loop {
        st_new,
        st_dec,
        st_raw,
        st_end,
        bid,
        btc,
        nbm1,
        beat,
        done,
        eslot,
        eidx,
        ..
    } = lp;
    let Issue {
        done_now,
        eslot_now,
        eidx_now,
        s_c_now,
        s_tc_now,
        final_dec,
        go_dec,
        raw_end,
        jump,
        to_end,
        new_ok,
        ..
    } = is;
    m.comment("L: block state (a block starts at its first chunk's slot)");
    let blk_end = m.wire("blk_next", &(jump | raw_end));
    m.next(
        st_new,
        &(&(&st_new.q() & &!new_ok.clone()) | &blk_end),
        None,
    );
    m.next(
        st_dec,
        &(&(&st_dec.q() & &!(go_dec & final_dec)) | &(new_ok & s_c_now)),
        None,
    );
    m.next(
        st_raw,
        &(&(&st_raw.q() & &!raw_end.clone()) | &(new_ok & &!s_c_now.clone())),
        None,
    );
    m.next(
        st_end,
        &(&(&st_end.q() & &!done_now.clone()) | to_end),
        None,
    );
    m.next(bid, &(bid.q() + Expr::lit(2, 1)), Some(&blk_end));
    m.next(done, &(done_now & &!blk_end.clone()), None);
    m.next(eslot, &blk_end.select(&Expr::zero(NSU), eslot_now), None);
    m.next(eidx, eidx_now, None);
    m.next(btc, s_tc_now, Some(new_ok));
    let nb_m1 = {
        let mut v = Expr::lit(4, decomp_beats(c, 0) as u64 - 1);
        for tc in 1..4u8 {
            v = s_tc_now
                .eq_lit(tc as u64)
                .select(&Expr::lit(4, decomp_beats(c, tc) as u64 - 1), &v);
        }
        v
    };
    m.next(nbm1, &nb_m1, Some(new_ok));
    m.next(
        beat,
        &new_ok.select(&Expr::zero(4), &(beat.q() + Expr::lit(4, 1))),
        Some(&(new_ok | go_dec)),
    );
    blk_end
}

/// Ring writes: chunks into the write slot, slots freed oldest first; returns the input's
/// ready.
fn ring_writes(
    m: &mut ModuleBuilder,
    ring: &Ring,
    lp: &Loop,
    pos: &Pos,
    is: &Issue,
    blk_end: &Expr,
    inp: &Input,
) -> Expr {
    let Ring {
        full,
        sdata,
        stag,
        slast,
        sc,
        stc,
        sidx,
        wsel,
        fsel,
        wbid,
        wcidx,
        fullv,
        ..
    } = ring;
    let bid = &lp.bid;
    m.comment("Ring writes: a chunk enters the write slot when it is empty");
    // Freed, oldest first: a slot of the previous block, or of this block once the position
    // has left it (any of them after the block's last beat).
    // The previous block's slots (the oldest run) all at once, so its tag is gone the
    // cycle after its block ends and 2-bit tags never alias.
    let free = m.wire(
        "slot_free",
        &(fullv
            & &(is.prev_tag.clone()
                | (&(&fsel.q() & &pos.tagcur)
                    & &(!pos.rslot.clone() | lp.st_end.q().repeat(NSU))))),
    );
    // A freed slot takes a chunk from the next cycle on (the position's slot decode stays
    // off the input handshake and the slots' write enables).
    // At most three blocks ahead of the loop's (the tags' window).
    let ahead3 = m.wire("wr_blk_far", &(wbid.q() - bid.q()).eq_lit(3));
    let s_ready = m.wire(
        "in_ready",
        &(&(&wsel.q() & &!fullv.clone()).any() & &!ahead3),
    );
    let accept = m.wire("accept", &(&inp.valid & &s_ready));
    let we = m.wire("slot_we", &(accept.repeat(NSU) & wsel.q()));
    let cin = m.wire("chunk_stream", &bytes_from_top(&inp.chunk));
    let bid_next = m.wire("blk_inc", &(bid.q() + Expr::lit(2, 1)));
    let mut mine_d = Vec::new();
    for j in 0..NS {
        let e = we.bit(j as u32);
        let full_d = m.wire(
            &format!("slot{}_full_next", j),
            &(&e | &(full[j].q() & !free.bit(j as u32))),
        );
        m.next(&full[j], &full_d, None);
        let tag_d = e.select(&wbid.q(), &stag[j].q());
        mine_d.push(blk_end.select(&tag_d.eq(&bid_next), &tag_d.eq(&bid.q())));
        m.next(&sdata[j], &cin, Some(&e));
        m.next(&stag[j], &wbid.q(), Some(&e));
        m.next(&slast[j], &inp.last, Some(&e));
        m.next(&sc[j], &inp.c, Some(&e));
        m.next(&stc[j], &inp.tcode, Some(&e));
        m.next(&sidx[j], &wcidx.q(), Some(&e));
    }
    m.next(&lp.tmatch, &Expr::cat_lsb(&mine_d), None);
    m.next(wsel, &next_slot(&wsel.q()), Some(&accept));
    // The freed slots are a run from the oldest (the previous block's slots, or the oldest
    // alone): the oldest moves to the slot after the run's end, a freed slot followed by a
    // kept one; with none freed (or all four) it stays.
    let run_end = m.wire("slot_free_end", &(&rotl(&free, 1) & &!free.clone()));
    let fnext = run_end.any().select(&run_end, &fsel.q());
    m.next(fsel, &fnext, None);
    m.next(
        wbid,
        &(wbid.q() + Expr::lit(2, 1)),
        Some(&(&accept & &inp.last)),
    );
    let wc_inc = wcidx
        .q()
        .eq_lit(15)
        .select(&wcidx.q(), &(wcidx.q() + Expr::lit(4, 1)));
    m.next(
        wcidx,
        &inp.last.select(&Expr::zero(4), &wc_inc),
        Some(&accept),
    );
    s_ready
}

/// A beat's fields as one pipeline stage registers them.
struct Beat {
    /// The stage holds a beat.
    v: Expr,
    /// A raw block's chunk.
    raw: Expr,
    /// Its block's last beat.
    last: Expr,
    /// Its block's first beat.
    first: Expr,
    /// The words it needs (one bit per word).
    need: Expr,
    /// Its block's tcode.
    tc: Expr,
}

/// The X1 stage's registers: the beat, the kind of its bit limit, and its slot and offset
/// (one copy per group of window lanes).
struct X1 {
    beat: Beat,
    lim: Expr,
    slot_reps: Vec<Reg>,
    off_reps: Vec<Reg>,
}

/// `cpack_lossy_pos_off_p<grid points>_s<points per slot>`: the offset in its slot of a
/// one-hot position on the grid (`pos_i`) as a binary number of grid points, `off_o`;
/// offset bit b is the OR of the positions whose offset has bit b set.
fn offset_encoder(grid: Grid) -> Result<Arc<Module>, HdlError> {
    let (pp, sp) = (grid.pp, grid.sp);
    let ob = crate::hdl::clog2(sp as u64);
    let mut m = ModuleBuilder::new(format!("cpack_lossy_pos_off_p{}_s{}", pp, sp));
    m.header("Generator: hwzip::rtl::cpack_lossy::decomp::offset_encoder");
    m.header(format!(
        "Parameters: {} positions ({}-bit grid), {} per slot, {}-bit offset",
        pp, grid.g, sp, ob
    ));
    m.header(format!(
        "Spec: {} Sec. 6 item 3 (decompressor window shift)",
        SPEC
    ));
    let v = m.input("pos_i", pp);
    let off: Vec<Expr> = (0..ob)
        .map(|b| {
            let bits: Vec<Expr> = (0..pp)
                .filter(|p| ((p % sp) >> b) & 1 == 1)
                .map(|p| v.bit(p))
                .collect();
            Expr::cat_lsb(&bits).any()
        })
        .collect();
    m.output_expr("off_o", &Expr::cat_lsb(&off));
    // A slot's first bit is offset 0: no offset bit reads it.
    m.unused(&Expr::cat_lsb(
        &(0..NSU).map(|j| v.bit(j * sp)).collect::<Vec<_>>(),
    ));
    m.finish()
}

/// L: the position's offset in its slot, the kind of limit on the block's bits and the
/// words the beat needs, registered into X1 with the position's slot.
fn position_offset(
    m: &mut ModuleBuilder,
    c: &LossyParams,
    lp: &Loop,
    pos: &Pos,
    is: &Issue,
    enc: &Arc<Module>,
) -> X1 {
    let Loop {
        r,
        rprev,
        t_pos,
        t_prev,
        st_raw,
        btc,
        beat,
        ..
    } = lp;
    let Pos { rslot, fb, .. } = pos;
    let Issue {
        done_now,
        eidx_now,
        s_cidx,
        raw_final,
        final_dec,
        go,
        ..
    } = is;
    let gx = t_pos.len() - 1;
    m.comment("L: the position's offset in its slot (binary), for the window shift");
    let ob = crate::hdl::clog2(SB as u64);
    // From the candidates apart (the position select drives only the token steps): a raw
    // step or a jump lands on a slot's first bit.
    let u_step = m.instance(enc, "u_step_off", &[("pos_i", r.q())]);
    let u_prev = m.instance(enc, "u_prev_off", &[("pos_i", rprev.q())]);
    let off_step = m.wire("pos_step_off", &u_step.out("off_o"));
    let off_prev = m.wire("pos_prev_off", &u_prev.out("off_o"));
    let off = &t_pos[gx].q().gate(&off_step) | &t_prev[gx].q().gate(&off_prev);
    // In bits: grid points of `g` bits (a power of two).
    let lg = ob - off_step.width();
    let off = match lg {
        0 => off,
        _ => Expr::cat(&[off, Expr::zero(lg)]),
    };
    let off = m.wire("pos_off", &off);
    // Bits from the position to the end of the block's last chunk: 128 - off or 256 - off
    // when the last chunk is this slot or the next, none when the position has left the
    // block, "enough" (511) otherwise.
    let in_blk = m.wire("pos_in_blk", &(rslot & fb).any());
    let dist = m.wire("blk_left", &(eidx_now.clone() - s_cidx.clone()));
    // The limit's kind (the bits themselves are counted in X1): 0 none, 1 nothing left,
    // 2 the rest of this slot, 3 the rest of this slot and the next.
    let lim = done_now.select(
        &in_blk.select(
            &dist.eq_lit(0).select(
                &Expr::lit(2, 2),
                &dist.eq_lit(1).select(&Expr::lit(2, 3), &Expr::zero(2)),
            ),
            &Expr::lit(2, 1),
        ),
        &Expr::zero(2),
    );
    let lim = m.wire("avail_kind", &lim);
    // Words this beat needs (a short last beat fewer).
    let nw = {
        let mut v = Expr::lit(3, TPB as u64);
        for tc in 0..4u8 {
            v = btc
                .q()
                .eq_lit(tc as u64)
                .select(&Expr::lit(3, last_beat_words(c, tc) as u64), &v);
        }
        final_dec.select(&v, &Expr::lit(3, TPB as u64))
    };
    let nw = m.wire("beat_words", &nw);
    let need_d = Expr::cat_lsb(
        &(0..TPB as u64)
            .map(|k| nw.gt(&Expr::lit(3, k)))
            .collect::<Vec<_>>(),
    );
    let x1_v = m.reg_next("x1_valid_q", Some(0), go, None);
    let x1_raw = m.reg_next("x1_raw_q", None, &st_raw.q(), None);
    let x1_last = m.reg_next(
        "x1_last_q",
        None,
        &st_raw.q().select(raw_final, final_dec),
        None,
    );
    let first = m.wire("beat_first", &beat.q().eq_lit(0));
    let x1_first = m.reg_next("x1_first_q", None, &first, None);
    let x1_need = m.reg_next("x1_need_q", None, &need_d, None);
    let x1_tc = m.reg_next("x1_tcode_q", None, &btc.q(), None);
    let x1_lim = m.reg_next("x1_avail_kind_q", None, &lim, None);
    // The beat's fields are registered every cycle (valid: `go`), so `go` drives no enables.
    // Slot and offset, one register copy per group of window lanes (bounded fan-out). The
    // slots keep their contents a cycle after the beat leaves the loop: a slot is freed
    // only once the position has left it, and refilled the cycle after.
    let copies = 8usize;
    let slot_reps = m.reg_replicas("x1_slot_q", NSU, None, copies);
    let off_reps = m.reg_replicas("x1_off_q", ob, None, copies);
    for rr in &slot_reps {
        m.next(rr, rslot, None);
    }
    for rr in &off_reps {
        m.next(rr, &off, None);
    }
    X1 {
        beat: Beat {
            v: x1_v,
            raw: x1_raw,
            last: x1_last,
            first: x1_first,
            need: x1_need,
            tc: x1_tc,
        },
        lim: x1_lim,
        slot_reps,
        off_reps,
    }
}

/// The X2 stage's registers: the beat, its 136-bit window and the bits available in its
/// block from the window's top.
struct X2 {
    beat: Beat,
    win: Expr,
    avail: Expr,
}

/// X1: the three slots from the position, shifted so the beat's first token is on top, and
/// the bits left in the block; registered into X2.
fn window_shift(m: &mut ModuleBuilder, ring: &Ring, x1: &X1) -> X2 {
    let sdata = &ring.sdata;
    let X1 {
        beat: b,
        lim: x1_lim,
        slot_reps,
        off_reps,
    } = x1;
    let x1_v = &b.v;
    m.comment("X1: the three slots from the position, shifted so its bit is on top");
    // Only the top span + SB - 1 bits of the three slots can reach the window.
    let tw = SPAN + SB - 1;
    let copies = slot_reps.len();
    let views: Vec<Expr> = (0..NS)
        .map(|j| {
            Expr::cat(&[
                sdata[j].q(),
                sdata[(j + 1) % NS].q(),
                sdata[(j + 2) % NS].q().slice(3 * SB - tw, tw - 2 * SB),
            ])
        })
        .collect();
    // Bit i is selected by register copy i * copies / tw: one AND-OR of vectors per run of
    // bits that share a copy.
    let mut runs: Vec<(usize, u32, u32)> = Vec::new();
    for i in 0..tw {
        let r = i as usize * copies / tw as usize;
        match runs.last_mut() {
            Some(last) if last.0 == r => last.2 += 1,
            _ => runs.push((r, i, 1)),
        }
    }
    let view_runs: Vec<Expr> = runs
        .iter()
        .map(|&(r, lo, len)| {
            let sel = slot_reps[r].q();
            or_tree(
                (0..NS)
                    .map(|j| sel.bit(j as u32).gate(&views[j].slice(lo, len)))
                    .collect(),
                len,
            )
        })
        .collect();
    let view = m.wire("x1_view", &Expr::cat_lsb(&view_runs));
    let offs: Vec<Expr> = off_reps.iter().map(|r| r.q()).collect();
    let sh = shift_lanes_copies(m, "x1_align", &view.lanes(1), &offs, true);
    let win_d = m.wire("x1_win", &Expr::cat_lsb(&sh[(tw - SPAN) as usize..]));
    m.unused(&Expr::cat_lsb(&sh[..(tw - SPAN) as usize]));
    let x2_v = m.reg_next("x2_valid_q", Some(0), x1_v, None);
    let x2_win = m.reg_next("x2_win_q", None, &win_d, Some(x1_v));
    let x2_raw = m.reg_next("x2_raw_q", None, &b.raw, Some(x1_v));
    let x2_last = m.reg_next("x2_last_q", None, &b.last, Some(x1_v));
    let x2_first = m.reg_next("x2_first_q", None, &b.first, Some(x1_v));
    let x2_need = m.reg_next("x2_need_q", None, &b.need, Some(x1_v));
    let x2_tc = m.reg_next("x2_tcode_q", None, &b.tc, Some(x1_v));
    // Bits from the position to the end of the block's last chunk (511: enough).
    let off9 = offs[0].zext(9);
    let avail = m.wire(
        "x1_avail",
        &x1_lim.bit(1).select(
            &x1_lim.bit(0).select(
                &(Expr::lit(9, 2 * SB as u64) - off9.clone()),
                &(Expr::lit(9, SB as u64) - off9.clone()),
            ),
            &x1_lim.bit(0).select(&Expr::zero(9), &Expr::lit(9, 511)),
        ),
    );
    let x2_avail = m.reg_next("x2_avail_q", None, &avail, Some(x1_v));
    X2 {
        beat: Beat {
            v: x2_v,
            raw: x2_raw,
            last: x2_last,
            first: x2_first,
            need: x2_need,
            tc: x2_tc,
        },
        win: x2_win,
        avail: x2_avail,
    }
}

/// The X3 stage's registers: the beat, the one-hot starts of tokens 1 to 4 in the window,
/// the window and the bits available.
struct X3 {
    beat: Beat,
    st: Vec<Expr>,
    win: Expr,
    avail: Expr,
}

/// X2: the four tokens' start positions in the window (the loop's AND-OR steps), or a raw
/// beat's fixed starts; registered into X3.
fn token_starts(m: &mut ModuleBuilder, cp: &CpackParams, x2: &X2) -> X3 {
    let b = &x2.beat;
    let x2_v = &b.v;
    m.comment("X2: the four tokens' start positions in the window (token k starts at st_k)");
    let winq = x2.win.clone();
    let relbits: Vec<Expr> = (0..RW + 3)
        .map(|q| {
            if q < SPAN {
                winq.bit(SPAN - 1 - q)
            } else {
                Expr::zero(1)
            }
        })
        .collect();
    let rel = m.wire("x2_rel", &Expr::cat_lsb(&relbits));
    let rlens = position_lengths(
        cp,
        &[
            rel.slice(0, RW),
            rel.slice(1, RW),
            rel.slice(2, RW),
            rel.slice(3, RW),
        ],
    );
    let rlens: Vec<(u32, Expr)> = rlens
        .into_iter()
        .map(|(n, e)| (n, m.wire(&format!("x2_len{}", n), &e)))
        .collect();
    for (n, e) in &rlens {
        // Tokens starting there would end past the window.
        m.unused(&e.slice(RW - n, *n));
    }
    let mut st = Expr::lit(RW, 1);
    let mut sts = Vec::new();
    for k in 1..=TPB {
        st = token_step(m, &format!("x2_st{}", k), &st, &rlens, false, 1);
        sts.push(st.clone());
    }
    // A raw beat's 128 bits travel as four 34-bit fields at fixed starts.
    let x3_st: Vec<Expr> = sts
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let k = i as u32 + 1;
            let fixed = Expr::cat_lsb(
                &(0..RW)
                    .map(|q| Expr::lit(1, (q == TOK_W * k) as u64))
                    .collect::<Vec<_>>(),
            );
            let d = b.raw.select(&fixed, s);
            m.reg_next(&format!("x3_st{}_q", k), None, &d, Some(x2_v))
        })
        .collect();
    let x3_v = m.reg_next("x3_valid_q", Some(0), x2_v, None);
    let x3_win = m.reg_next("x3_win_q", None, &winq, Some(x2_v));
    let x3_raw = m.reg_next("x3_raw_q", None, &b.raw, Some(x2_v));
    let x3_last = m.reg_next("x3_last_q", None, &b.last, Some(x2_v));
    let x3_first = m.reg_next("x3_first_q", None, &b.first, Some(x2_v));
    let x3_need = m.reg_next("x3_need_q", None, &b.need, Some(x2_v));
    let x3_tc = m.reg_next("x3_tcode_q", None, &b.tc, Some(x2_v));
    let x3_avail = m.reg_next("x3_avail_q", None, &x2.avail, Some(x2_v));
    X3 {
        beat: Beat {
            v: x3_v,
            raw: x3_raw,
            last: x3_last,
            first: x3_first,
            need: x3_need,
            tc: x3_tc,
        },
        st: x3_st,
        win: x3_win,
        avail: x3_avail,
    }
}

/// The beat's four tokens as X3 parses them, with the beat's error.
struct Tokens {
    /// Any token illegal, indexing an empty entry or past the block's bits (not raw).
    bad: Expr,
    toks: Vec<Expr>,
    /// The tokens' one-hot patterns.
    pats: Vec<Expr>,
    /// The tokens' one-hot dictionary indices.
    idx_ohs: Vec<Expr>,
    /// Token k pushes a word into the dictionary.
    pushes: Vec<Expr>,
    /// Token k's one-hot dictionary slot for a push.
    slots: Vec<Expr>,
    /// Tokens 1 to 3: the earlier token of the beat whose word the index reads (none: the
    /// dictionary).
    srcs: Vec<Expr>,
}

/// X3: the tokens extracted and parsed; the beat's errors; the dictionary slots of the
/// pushes and the same-beat bypass sources, and the dictionary's fill and write pointer.
/// The window positions token `k` (of a beat's four, `k >= 1`) can start at: after `k`
/// tokens of 2 to 34 bits.
fn pick_range(k: usize) -> (u32, u32) {
    (2 * k as u32, TOK_W * k as u32)
}

/// The 34 bits of the window from position `q` on, zero-filled past the window's end.
fn field_at(win: &Expr, q: u32) -> Expr {
    if q + TOK_W <= SPAN {
        win.slice(SPAN - q - TOK_W, TOK_W)
    } else {
        Expr::cat(&[win.slice(0, SPAN - q), Expr::zero(TOK_W - (SPAN - q))])
    }
}

/// `cpack_lossy_tok_pick_l<lo>_h<hi>`: the token that starts at window position `lo + j`
/// when bit `j` of the one-hot `st_i` is set (the positions a token after the first can
/// start at), by one AND-OR over those positions.
fn token_pick(lo: u32, hi: u32) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("cpack_lossy_tok_pick_l{}_h{}", lo, hi));
    m.header("Generator: hwzip::rtl::cpack_lossy::decomp::token_pick");
    m.header(format!(
        "Parameters: start positions {}..={} of a {}-bit window",
        lo, hi, SPAN
    ));
    m.header(format!("Spec: {} Sec. 2.4 (token extraction)", SPEC));
    let st = m.input("st_i", hi - lo + 1);
    let win = m.input("win_i", SPAN);
    let terms: Vec<Expr> = (lo..=hi)
        .map(|q| st.bit(q - lo).gate(&field_at(&win, q)))
        .collect();
    m.output_expr("tok_o", &or_tree(terms, TOK_W));
    // The whole window is wired in; the bits before `lo` and past `hi + 34` are not read.
    m.unused(&win);
    m.finish()
}

fn token_parse(m: &mut ModuleBuilder, cp: &CpackParams, x3: &X3, picks: &[Arc<Module>]) -> Tokens {
    let ne = cp.dict_entries as u32;
    let X3 {
        beat: b,
        st: x3_st,
        win: x3_win,
        avail: x3_avail,
    } = x3;
    m.comment("X3: tokens extracted and parsed; errors; dictionary slots and bypass sources");
    // Token end past the available bits.
    let gt: Vec<Expr> = (0..RW)
        .map(|q| {
            if q == 0 {
                Expr::zero(1)
            } else {
                x3_avail.lt(&Expr::lit(9, q as u64))
            }
        })
        .collect();
    let gt = m.wire("x3_past", &Expr::cat_lsb(&gt));
    let vld = m.reg("x3_dict_valid_q", ne, None);
    let wp = m.reg("x3_dict_wsel_q", ne, None);
    let mut vcur = m.wire("x3_dvalid", &b.first.select(&Expr::zero(ne), &vld.q()));
    let mut wcur = m.wire("x3_dwsel", &b.first.select(&Expr::lit(ne, 1), &wp.q()));
    let mut bad = Expr::zero(1);
    let mut toks = Vec::new();
    let mut pats = Vec::new();
    let mut idx_ohs: Vec<Expr> = Vec::new();
    let mut pushes: Vec<Expr> = Vec::new();
    let mut slots: Vec<Expr> = Vec::new();
    let mut srcs: Vec<Expr> = Vec::new();
    for k in 0..TPB {
        let ku = k as u32;
        let tok = if k == 0 {
            field_at(x3_win, 0)
        } else {
            let (lo, hi) = pick_range(k);
            let u = m.instance(
                &picks[k - 1],
                &format!("u_x3_pick{}", k),
                &[
                    ("st_i", x3_st[k - 1].slice(lo, hi - lo + 1)),
                    ("win_i", x3_win.clone()),
                ],
            );
            u.out("tok_o")
        };
        let tok = m.wire(&format!("x3_tok{}", k), &tok);
        let pr = parse(m, &format!("x3_t{}", k), cp, &tok);
        m.unused(&pr.zb);
        let need = b.need.bit(ku);
        let idx_oh = Expr::cat_lsb(&(0..ne as u64).map(|j| pr.idx.eq_lit(j)).collect::<Vec<_>>());
        let idx_oh = m.wire(&format!("x3_t{}_idx_oh", k), &idx_oh);
        let ivalid = (&idx_oh & &vcur).any();
        let over = m.wire(&format!("x3_over{}", k), &(&x3_st[k] & &gt).any());
        let e = m.wire(
            &format!("x3_bad{}", k),
            &(&need & &(&(&pr.illegal | &(&uses_index(&pr.oh) & &!ivalid)) | &over)),
        );
        bad = &bad | &e;
        let push = m.wire(
            &format!("x3_push{}", k),
            &(&need & &token_push(cp.push, &pr.oh)),
        );
        // Bypass source: the latest earlier token of the beat that pushed into this index.
        let hits: Vec<Expr> = (0..k)
            .map(|j| &pushes[j] & &(&slots[j] & &idx_oh).any())
            .collect();
        let src: Vec<Expr> = (0..k)
            .map(|j| {
                let later = (j + 1..k).map(|i| hits[i].clone()).collect::<Vec<_>>();
                if later.is_empty() {
                    hits[j].clone()
                } else {
                    &hits[j] & &!Expr::cat(&later).any()
                }
            })
            .collect();
        let slot = wcur.clone();
        vcur = m.wire(&format!("x3_dvalid{}", k), &(&vcur | &push.gate(&slot)));
        wcur = m.wire(
            &format!("x3_dwsel{}", k),
            &push.select(&next_slot(&slot), &slot),
        );
        toks.push(tok);
        pats.push(pr.oh.clone());
        idx_ohs.push(idx_oh);
        pushes.push(push);
        slots.push(slot);
        if k > 0 {
            srcs.push(m.wire(&format!("x3_src{}", k), &Expr::cat_lsb(&src)));
        }
    }
    let x3_bad = m.wire("x3_bad", &(&bad & &!b.raw.clone()));
    let dict_go = m.wire("x3_dict_go", &(&b.v & &!b.raw.clone()));
    m.next(&vld, &vcur, Some(&dict_go));
    m.next(&wp, &wcur, Some(&dict_go));
    Tokens {
        bad: x3_bad,
        toks,
        pats,
        idx_ohs,
        pushes,
        slots,
        srcs,
    }
}

/// The D stage's registers: the beat, its error from X3, and per token its bits, pattern,
/// one-hot index, push, dictionary slot and bypass source.
struct D {
    beat: Beat,
    bad: Expr,
    tok: Vec<Expr>,
    pat: Vec<Expr>,
    idx: Vec<Expr>,
    push: Vec<Expr>,
    slot: Vec<Expr>,
    src: Vec<Expr>,
}

/// The beat and its parsed tokens registered from X3 into D.
fn d_stage(m: &mut ModuleBuilder, x3: &X3, t: &Tokens) -> D {
    let b = &x3.beat;
    let x3_v = &b.v;
    let d_v = m.reg_next("d_valid_q", Some(0), x3_v, None);
    let dreg = |m: &mut ModuleBuilder, name: &str, e: &Expr| {
        m.reg_next(&format!("d_{}_q", name), None, e, Some(x3_v))
    };
    let d_raw = dreg(m, "raw", &b.raw);
    let d_last = dreg(m, "last", &b.last);
    let d_first = dreg(m, "first", &b.first);
    let d_need = dreg(m, "need", &b.need);
    let d_tc = dreg(m, "tcode", &b.tc);
    let d_bad = dreg(m, "bad", &t.bad);
    let d_tok: Vec<Expr> = (0..TPB)
        .map(|k| dreg(m, &format!("tok{}", k), &t.toks[k]))
        .collect();
    let d_pat: Vec<Expr> = (0..TPB)
        .map(|k| dreg(m, &format!("pat{}", k), &t.pats[k]))
        .collect();
    let d_idx: Vec<Expr> = (0..TPB)
        .map(|k| dreg(m, &format!("idx{}", k), &t.idx_ohs[k]))
        .collect();
    let d_push: Vec<Expr> = (0..TPB)
        .map(|k| dreg(m, &format!("push{}", k), &t.pushes[k]))
        .collect();
    let d_slot: Vec<Expr> = (0..TPB)
        .map(|k| dreg(m, &format!("slot{}", k), &t.slots[k]))
        .collect();
    let d_src: Vec<Expr> = (1..TPB)
        .map(|k| dreg(m, &format!("src{}", k), &t.srcs[k - 1]))
        .collect();
    D {
        beat: Beat {
            v: d_v,
            raw: d_raw,
            last: d_last,
            first: d_first,
            need: d_need,
            tc: d_tc,
        },
        bad: d_bad,
        tok: d_tok,
        pat: d_pat,
        idx: d_idx,
        push: d_push,
        slot: d_slot,
        src: d_src,
    }
}

/// The D stage's result: the beat's four words (or a raw chunk's) and its error.
struct Words {
    words: Expr,
    err: Expr,
}

/// D: the words rebuilt from the dictionary (with the bypass from the beat's earlier
/// words), the dictionary written, and the beat's error (held to the block's end).
fn dict_words(m: &mut ModuleBuilder, c: &LossyParams, cp: &CpackParams, d: &D) -> Words {
    let ne = cp.dict_entries as u32;
    let D {
        beat: b,
        bad: d_bad,
        tok: d_tok,
        pat: d_pat,
        idx: d_idx,
        push: d_push,
        slot: d_slot,
        src: d_src,
    } = d;
    let (d_v, d_raw, d_tc) = (&b.v, &b.raw, &b.tc);
    m.comment("D: words from the dictionary, with bypass from the beat's earlier words");
    let dict: Vec<_> = (0..ne)
        .map(|j| m.reg(&format!("dict{}_q", j), 32, None))
        .collect();
    let ib = cp.index_bits();
    let mut words: Vec<Expr> = Vec::new();
    let mut wide = Expr::zero(1);
    for k in 0..TPB {
        let ku = k as u32;
        let rd = or_tree(
            (0..ne)
                .map(|j| d_idx[k].bit(j).gate(&dict[j as usize].q()))
                .collect(),
            32,
        );
        let base = if k == 0 {
            rd
        } else {
            let s = &d_src[k - 1];
            let mut terms: Vec<Expr> = (0..k).map(|j| s.bit(j as u32).gate(&words[j])).collect();
            terms.push((!s.any()).gate(&rd));
            or_tree(terms, 32)
        };
        let base = m.wire(&format!("d_base{}", k), &base);
        // The index field is only used through the one-hot read above.
        // Pattern bit 0 (a zero word) contributes nothing to the word.
        m.unused(&d_pat[k].bit(0));
        let pr = Parsed::from_fields(
            &d_tok[k],
            d_pat[k].clone(),
            Expr::zero(1),
            Expr::zero(1),
            Expr::zero(ib),
        );
        let w = token_word(&pr, &base);
        let w = m.wire(&format!("d_word{}", k), &b.need.bit(ku).gate(&w));
        if c.layout == TruncLayout::Shifted {
            for tc in 1..4u8 {
                let t = c.t_of(tc);
                if t > 0 {
                    wide = &wide | &(&d_tc.eq_lit(tc as u64) & &w.slice(32 - t, t).any());
                }
            }
        }
        words.push(w);
    }
    if c.layout != TruncLayout::Shifted {
        m.unused(d_tc);
    }
    let berr = m.reg("d_err_q", 1, None);
    let d_err = m.wire(
        "d_err",
        &(&!d_raw.clone() & &(&(d_bad | &wide) | &(&berr.q() & &!b.first.clone()))),
    );
    m.next(&berr, &d_err, Some(&(d_v & &!d_raw.clone())));
    let dict_we = m.wire("d_dict_go", &(d_v & &!d_raw.clone()));
    // Each token's one-hot write (its slot when it pushes); the latest token wins.
    let wes: Vec<Expr> = (0..TPB)
        .map(|k| {
            m.wire(
                &format!("d_we{}", k),
                &(d_push[k].repeat(ne) & d_slot[k].clone()),
            )
        })
        .collect();
    dict_store(m, &dict, &words, &wes, Some(&dict_we));
    let rawbits = m.wire("d_raw_bits", &Expr::cat(d_tok));
    let raw_top = m.wire("d_raw_top", &rawbits.slice(TPB as u32 * TOK_W - SB, SB));
    m.unused(&rawbits.slice(0, TPB as u32 * TOK_W - SB));
    let raw_words = bytes_from_top(&raw_top);
    let d_words = m.wire("d_words", &d_raw.select(&raw_words, &Expr::cat_lsb(&words)));
    Words {
        words: d_words,
        err: d_err,
    }
}

/// The output beat at the FIFO's head, with its block's `c` and `tcode` (for the restore
/// unit that follows).
struct Out {
    valid: Expr,
    words: Expr,
    last: Expr,
    err: Expr,
    c: Expr,
    tcode: Expr,
}

/// The output FIFO, and the beats in flight and the credit that let the loop issue a beat
/// only when it has a place.
fn output_fifo(
    m: &mut ModuleBuilder,
    lp: &Loop,
    is: &Issue,
    d: &D,
    w: &Words,
    m_ready: &Expr,
) -> Out {
    let inflight = &lp.inflight;
    let go = &is.go;
    m.comment("Output FIFO (credits: the loop issues a beat only when it has a place)");
    let fdata = Expr::cat(&[
        d.beat.tc.clone(),
        !d.beat.raw.clone(),
        d.beat.last.clone(),
        w.err.clone(),
        w.words.clone(),
    ]);
    let q = fifo(m, "ofifo", FIFO_DEPTH, &d.beat.v, &fdata, m_ready);
    m.unused(&q.ready);
    let head = m.wire("ofifo_out", &q.data);
    let h_err = head.bit(SB);
    let h_last = head.bit(SB + 1);
    let h_c = head.bit(SB + 2);
    let h_tcode = head.slice(SB + 3, 2);
    let o_words = m.wire(
        "out_words",
        &(head.slice(0, SB) & (!h_err.clone()).repeat(SB)),
    );
    let pop = m.wire("pop", &(&q.valid & m_ready));
    // Both outcomes of `go`, chosen last.
    let infl_go = m.wire(
        "inflight_go",
        &(inflight.q() + Expr::lit(4, 1) - pop.zext(4)),
    );
    let infl_no = m.wire("inflight_no", &(inflight.q() - pop.zext(4)));
    let room = |v: &Expr| v.lt(&Expr::lit(4, FIFO_DEPTH as u64));
    m.next(inflight, &go.select(&infl_go, &infl_no), None);
    m.next(
        &is.credit_r,
        &go.select(&room(&infl_go), &room(&infl_no)),
        None,
    );
    Out {
        valid: q.valid,
        words: o_words,
        last: h_last,
        err: h_err,
        c: h_c,
        tcode: h_tcode,
    }
}
