//! PACT'12 memory-link C-Pack generators (Sathish, Schulte, Kim; spec `link-cpack-lossy.md`
//! §2, §3, §6): the streaming block compressor, and (to come in this file) the decompressor,
//! the truncation units, the chunk sizer and the memory-controller path.
//!
//! Conventions (`docs/FORMATS.md`, "PACT'12 memory-link C-Pack"): a 128 B block is 32
//! little-endian words; input word k of a beat sits at bits `[32k+31:32k]`. Output chunks are
//! 16 B with byte i at bits `[8i+7:8i]`; chunk 0 holds stream bits 0..127, stream bit 0 being
//! bit 7 of byte 0 (the golden model's `chunks`).
//!
//! `cpack_lossy_comp_*` (§6 item 2): `k` words per cycle (2: the paper's 64 bits/cycle),
//! three stages after the beat is accepted, so the first chunk of a 32-word block is valid
//! 16 + 3 cycles after its first word (Table 4):
//! * **C** (acceptance cycle): the words against the dictionary ([`super::cpack::word_enc`],
//!   the adaptive engine's classifier: byte-equality CAM, lowest-slot priority, pair
//!   forwarding) and the dictionary push; the dictionary is empty for the first beat of a
//!   block. The raw words are kept in a block buffer;
//! * **T → E**: tokens accumulate as `acc = ((acc << n0) | tok0) << n1 | tok1` (one-hot
//!   shifts over the few token lengths) and the length adds up; after the block's last beat
//!   the compressed-or-raw decision (`ceil(L/8)` below the raw bytes of the block's `tcode`,
//!   and with `raw_if_n_eq_raw` N below the raw chunk count), N and the stored image
//!   (stream or raw words) are registered (stage F);
//! * **F → output**: one logarithmic shifter left-aligns the stream; the output register
//!   then shifts out N chunks, one per cycle, each beat carrying the block's metadata
//!   (`c`, `n`, the stream length `bits`, `tcode`).
//!
//! A block ends with the beat marked `last`, or after `block_bytes/4` words whatever `last`
//! says. Its `tcode` is sampled with its first beat. The input words are what C-Pack runs
//! on: the block's words at t = 0, else the output of `fp_trunc_pack` (packed fields, or
//! `w >> t` with the shifted layout, whose raw fallback is packed here by fixed wiring).

use super::cpack::{length_groups, shift_by_onehot, word_enc, WordEnc, TOK_W};
use crate::hdl::blocks::shift_lanes;
use crate::hdl::stream::{self, Layout};
use crate::hdl::{clog2, Expr, HdlError, Module, ModuleBuilder};
use crate::model::cpack::{CodeTable, PushPolicy};
use crate::model::cpack_lossy::fp::TruncLayout;
use crate::model::cpack_lossy::{LossyParams, CHUNK_BITS};
use std::sync::Arc;

/// The spec this generator follows (cited in every module header).
const SPEC: &str = "shared/spec/link-cpack-lossy.md";

fn err(msg: String) -> HdlError {
    HdlError {
        module: "cpack_lossy".into(),
        problems: vec![msg],
    }
}

/// Parameters of the PACT'12 hardware: the codec (the golden model's parameters) and the
/// compressor's input width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LossyRtlParams {
    /// Block size, code table, push policy, dictionary, `t` table, layout, MD width.
    pub codec: LossyParams,
    /// 32-bit words the compressor takes per cycle (1 or 2; 2 is the paper's 64 bits).
    pub words_per_cycle: usize,
}

impl Default for LossyRtlParams {
    fn default() -> Self {
        LossyRtlParams {
            codec: LossyParams::default(),
            words_per_cycle: 2,
        }
    }
}

impl LossyRtlParams {
    /// Checks what the hardware supports; the message names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        self.codec.validate().map_err(|e| e.to_string())?;
        if ![1, 2].contains(&self.words_per_cycle) {
            return Err(format!(
                "words_per_cycle = {} is not supported (allowed: 1, 2)",
                self.words_per_cycle
            ));
        }
        for tc in 0..4u8 {
            if !self
                .codec
                .cpack_words(tc)
                .is_multiple_of(self.words_per_cycle)
            {
                return Err(format!(
                    "t = {} gives {} words per block, not a multiple of words_per_cycle = {}",
                    self.codec.t_of(tc),
                    self.codec.cpack_words(tc),
                    self.words_per_cycle
                ));
            }
        }
        Ok(())
    }

    /// Block width in bits.
    pub fn block_bits(&self) -> u32 {
        self.codec.block_bytes as u32 * 8
    }

    /// Width of the stream-length field: holds `34 · words` (1088 at 128 B).
    pub fn len_bits(&self) -> u32 {
        clog2(TOK_W as u64 * self.codec.words() as u64 + 1)
    }

    /// Human-readable parameter line (headers and reports).
    pub fn describe(&self) -> String {
        format!(
            "{} words_per_cycle={}",
            self.codec.describe(),
            self.words_per_cycle
        )
    }

    /// Module-name suffix: every parameter that changes the hardware.
    fn tag(&self) -> String {
        let c = &self.codec;
        let mut s = format!("b{}", c.block_bytes);
        if self.words_per_cycle != 2 {
            s += &format!("_w{}", self.words_per_cycle);
        }
        if c.dict_entries != 16 {
            s += &format!("_d{}", c.dict_entries);
        }
        match c.push {
            PushPolicy::NoFullMatch => {}
            PushPolicy::NewOnly => s += "_pnew",
            PushPolicy::AllNonZero => s += "_pall",
        }
        if c.codes == CodeTable::Paper {
            s += "_zcodes";
        }
        if c.raw_if_n_eq_raw {
            s += "_rawn";
        }
        if c.t_table != [0, 8, 12, 16] {
            s += "_t";
            for t in c.t_table {
                s += &format!("{t}");
            }
        }
        if c.layout == TruncLayout::Shifted {
            s += "_shifted";
        }
        s
    }
}

fn header(m: &mut ModuleBuilder, generator: &str, p: &LossyRtlParams, spec: &str) {
    m.header(format!("Generator: hwzip::rtl::cpack_lossy::{}", generator));
    m.header(format!("Parameters: {}", p.describe()));
    m.header(format!("Spec: {} {}", SPEC, spec));
    m.header("Chunks: byte i at bits [8i+7:8i]; stream bit 0 = bit 7 of byte 0 of chunk 0");
}

/// The bytes of `v` in order from the top: byte 0 (bits `[7:0]`) becomes the most
/// significant byte (the left-aligned bus the stream is built on).
fn bytes_from_top(v: &Expr) -> Expr {
    Expr::cat(&v.lanes(8))
}

/// `fp::pack` of `n` words `w >> t` (the shifted layout's words), by wiring: the packed
/// stream's bit p (MSB-first in word p/32) is bit `31 − t − (p mod (32 − t))` of word
/// `p / (32 − t)`. Words past the packed count are zero.
fn pack_wiring(words: &[Expr], t: u32) -> Expr {
    let n = words.len();
    let fb = (32 - t) as usize;
    let total = n * fb;
    let mut out_words = Vec::new();
    for k in 0..n {
        let bits: Vec<Expr> = (0..32)
            .map(|b| {
                // Bit b (LSB = 0) of packed word k is stream position 32k + 31 − b.
                let p = 32 * k + 31 - b;
                if p >= total {
                    Expr::zero(1)
                } else {
                    let (src, off) = (p / fb, p % fb);
                    words[src].bit((fb - 1 - off) as u32)
                }
            })
            .collect();
        out_words.push(Expr::cat_lsb(&bits));
    }
    Expr::cat_lsb(&out_words)
}

/// `cpack_lossy_comp`: words in, chunks out (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_data_i[32k-1:0]`/`s_last_i`/`s_tcode_i[1:0]` →
/// `m_valid_o`/`m_ready_i`/`m_chunk_o[127:0]`/`m_last_o`/`m_c_o`/`m_n_o[3:0]`/
/// `m_bits_o`/`m_tcode_o[1:0]`.
pub fn compressor(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let c = &p.codec;
    let cp = c.cpack();
    let l = p.block_bits();
    let lw = p.len_bits();
    let k = p.words_per_cycle;
    let nw = c.words();
    let slots = nw / k;
    let ne = cp.dict_entries;
    let ib = cp.index_bits();
    let groups = length_groups(&cp);
    let cb = CHUNK_BITS as u32;
    let mut m = ModuleBuilder::new(format!("cpack_lossy_comp_{}", p.tag()));
    header(
        &mut m,
        "compressor",
        p,
        "§2.2-§2.4 (codes, dictionary, chunks, raw fallback), §2.6 (truncated raw), §6 item 2",
    );
    m.header(format!(
        "{} words per cycle; first chunk {} cycles after a {}-word block's first word \
         (acceptance counted), then N chunks",
        k,
        slots + 3,
        nw
    ));
    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[("data", 32 * k as u32), ("last", 1), ("tcode", 2)]),
    );
    let s_valid = s_in.valid.clone();
    let data = s_in.field("data");
    let s_last = s_in.field("last");
    let s_tcode = s_in.field("tcode");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    let sw = clog2(slots as u64).max(1);
    // ---- Stage C registers ----
    let first = m.reg("first_q", 1, Some(1));
    let beat = m.reg("beat_q", sw, None);
    let tcode_q = m.reg("tcode_q", 2, None);
    let valid = m.reg("dict_valid_q", ne as u32, None);
    let wptr = m.reg("dict_wptr_q", ib, None);
    let raw = m.reg("raw_q", l, None);
    let dict: Vec<_> = (0..ne)
        .map(|j| m.reg(&format!("dict{}_q", j), 32, None))
        .collect();
    let dq: Vec<Expr> = dict.iter().map(|r| r.q()).collect();
    let vt = m.reg("t_valid_q", 1, Some(0));
    let last_t = m.reg("t_last_q", 1, None);
    let first_t = m.reg("t_first_q", 1, None);

    m.comment("Stage C: classify the beat's words (empty dictionary on a block's first beat)");
    let fst = first.q();
    let beat_cur = m.wire("beat_cur", &fst.select(&Expr::zero(sw), &beat.q()));
    let blk_end = m.wire("blk_end", &(&s_last | &beat_cur.eq_lit(slots as u64 - 1)));
    let tcode_cur = m.wire("tcode_cur", &fst.select(&s_tcode, &tcode_q.q()));
    let dvalid = m.wire("dict_valid", &(valid.q() & !fst.repeat(ne as u32)));
    let wptr_cur = m.wire("dict_wptr", &(wptr.q() & !fst.repeat(ib)));
    let wsel0: Vec<Expr> = (0..ne).map(|j| wptr_cur.eq_lit(j as u64)).collect();
    let wsel0 = m.wire("wsel0", &Expr::cat_lsb(&wsel0));
    let WordEnc {
        words,
        onehots,
        toks,
        pushes,
        lens,
        zeros,
    } = word_enc(
        &mut m,
        &cp,
        k,
        &mut |m, i| m.wire(&format!("w{}", i), &data.slice(32 * i as u32, 32)),
        &dq,
        &dvalid,
        &wsel0,
    );
    m.unused(&Expr::cat(&zeros));
    let plen = m.wire(
        "pair_len",
        &lens.iter().fold(Expr::zero(7), |a, n| a + n.zext(7)),
    );

    // ---- Handshake ----
    let vf = m.reg("f_valid_q", 1, Some(0));
    let vo = m.reg("out_valid_q", 1, Some(0));
    let ocnt = m.reg("out_cnt_q", 4, None);
    let on = m.reg("out_n_q", 4, None);
    let o_last = m.wire("out_last", &ocnt.q().eq(&(on.q() - Expr::lit(4, 1))));
    let o_fire = m.wire("out_fire", &(&vo.q() & &m_ready));
    let o_free = m.wire("o_free", &(!vo.q() | (&o_fire & &o_last)));
    let f_free = m.wire("f_free", &(!vf.q() | o_free.clone()));
    let t_adv = m.wire("t_adv", &(&vt.q() & &(!last_t.q() | f_free.clone())));
    let s_ready = m.wire("in_ready", &(!vt.q() | t_adv.clone()));
    let accept = m.wire("accept", &(&s_valid & &s_ready));
    let f_load = m.wire("f_load", &(&t_adv & &last_t.q()));
    let o_load = m.wire("o_load", &(&vf.q() & &o_free));

    // Stage C next state: dictionary, pointer, block position, raw words.
    m.next(&first, &blk_end, Some(&accept));
    m.next(&beat, &(beat_cur.clone() + Expr::lit(sw, 1)), Some(&accept));
    m.next(&tcode_q, &tcode_cur, Some(&accept));
    let we0 = m.wire("we0", &(pushes[0].repeat(ne as u32) & wsel0.clone()));
    let we1 = if k == 2 {
        let rot1 = Expr::cat(&[wsel0.slice(0, ne as u32 - 1), wsel0.bit(ne as u32 - 1)]);
        let ws1 = pushes[0].select(&rot1, &wsel0);
        Some(m.wire("we1", &(pushes[1].repeat(ne as u32) & ws1)))
    } else {
        None
    };
    let mut wrote = we0.clone();
    for (j, r) in dict.iter().enumerate() {
        let ju = j as u32;
        let mut nv = words[0].clone();
        let mut en = we0.bit(ju);
        if let Some(w1) = &we1 {
            nv = w1.bit(ju).select(&words[1], &nv);
            en = &en | &w1.bit(ju);
        }
        m.next(r, &nv, Some(&(&accept & &en)));
    }
    if let Some(w1) = &we1 {
        wrote = &wrote | w1;
    }
    m.next(&valid, &(dvalid.clone() | wrote), Some(&accept));
    let npush = pushes.iter().fold(Expr::zero(ib), |a, x| a + x.zext(ib));
    m.next(&wptr, &(wptr_cur.clone() + npush), Some(&accept));
    // Raw words: slot `beat_cur` takes the beat; a block's first beat clears the others.
    let sb = 32 * k as u32;
    let raw_slots: Vec<Expr> = (0..slots)
        .map(|j| {
            let keep = fst.select(&Expr::zero(sb), &raw.q().slice(sb * j as u32, sb));
            beat_cur.eq_lit(j as u64).select(&data, &keep)
        })
        .collect();
    let raw_d = m.wire("raw_next", &Expr::cat_lsb(&raw_slots));
    m.next(&raw, &raw_d, Some(&accept));

    // Stage T registers.
    m.next(&vt, &(&accept | &(&vt.q() & &!t_adv.clone())), None);
    m.next(&last_t, &blk_end, Some(&accept));
    m.next(&first_t, &fst, Some(&accept));
    let tok_t: Vec<Expr> = toks
        .iter()
        .enumerate()
        .map(|(i, t)| m.reg_next(&format!("t_tok{}_q", i), None, t, Some(&accept)))
        .collect();
    let oh_t: Vec<Expr> = onehots
        .iter()
        .enumerate()
        .map(|(i, t)| m.reg_next(&format!("t_pat{}_q", i), None, t, Some(&accept)))
        .collect();
    let plen_t = m.reg_next("t_len_q", None, &plen, Some(&accept));
    let tcode_t = m.reg_next("t_tcode_q", None, &tcode_cur, Some(&accept));
    let blk_acc = m.wire("blk_accept", &(&accept & &blk_end));
    let raw_t = m.reg_next("t_raw_q", None, &raw_d, Some(&blk_acc));

    // ---- Stage E: accumulate, decide ----
    m.comment("Stage E: acc = ((acc << n0) | tok0) << n1 | tok1; len += n0 + n1; decide");
    let acc = m.reg("acc_q", l, None);
    let len = m.reg("len_q", lw, None);
    let first_v = m.wire("t_first_v", &(&first_t.q() & &vt.q()));
    let acc_in = m.wire("acc_in", &first_v.select(&Expr::zero(l), &acc.q()));
    let len_in = first_v.select(&Expr::zero(lw), &len.q());
    let mut a = acc_in;
    let minlen = groups.iter().map(|(n, _)| *n).min().unwrap_or(1);
    for i in 0..k {
        m.unused(&a.slice(l - minlen, minlen));
        let ohv = m.wire(&format!("t_pat{}_v", i), &(&oh_t[i] & &vt.q().repeat(6)));
        let sh = shift_by_onehot(&a, &ohv, &groups);
        a = m.wire(&format!("acc_s{}", i), &(sh | tok_t[i].zext(l)));
    }
    let len_next = m.wire("len_next", &(len_in + plen_t.zext(lw)));
    m.next(&acc, &a, Some(&t_adv));
    m.next(&len, &len_next, Some(&t_adv));
    // Per tcode: the largest stream stored compressed, and the raw chunk count.
    let mut thr_terms = Vec::new();
    let mut rawn_terms = Vec::new();
    for tc in 0..4u8 {
        let raw_bits = c.raw_bits(tc) as u64;
        let raw_n = c.raw_chunks_t(tc) as u64;
        let mut thr = raw_bits - 8;
        if c.raw_if_n_eq_raw {
            thr = thr.min((raw_n - 1) * CHUNK_BITS as u64);
        }
        let sel = tcode_t.eq_lit(tc as u64);
        thr_terms.push(sel.gate(&Expr::lit(lw, thr)));
        rawn_terms.push(sel.gate(&Expr::lit(4, raw_n)));
    }
    let thr = m.wire("comp_max_bits", &or_all(thr_terms, lw));
    let raw_n = m.wire("raw_n", &or_all(rawn_terms, 4));
    let fits = m.wire("fits", &len_next.le(&thr));
    let len_up = m.wire(
        "len_round",
        &(len_next.clone() + Expr::lit(lw, CHUNK_BITS as u64 - 1)),
    );
    let n_comp = m.wire("n_comp", &len_up.slice(7, lw - 7));
    let n_f = fits.select(&n_comp.resize(4), &raw_n);
    // The raw image, bytes in order from the top; the shifted layout's words packed.
    let raw_img = match c.layout {
        TruncLayout::Packed => raw_t.clone(),
        TruncLayout::Shifted => {
            let w = raw_t.lanes(32);
            let mut img = raw_t.clone();
            for tc in 1..4u8 {
                let t = c.t_of(tc);
                if t > 0 {
                    img = tcode_t.eq_lit(tc as u64).select(&pack_wiring(&w, t), &img);
                }
            }
            m.wire("raw_packed", &img)
        }
    };
    let pre = fits.select(&a, &bytes_from_top(&raw_img));
    let shw = clog2(l as u64 + 1);
    let sh_amt = fits.select(
        &(Expr::lit(lw.max(shw), l as u64) - len_next.zext(lw.max(shw))).resize(shw),
        &Expr::zero(shw),
    );
    let pre_q = m.reg_next("f_pre_q", None, &pre, Some(&f_load));
    let sh_q = m.reg_next("f_shift_q", None, &sh_amt, Some(&f_load));
    let c_fq = m.reg_next("f_c_q", None, &fits, Some(&f_load));
    let n_fq = m.reg_next("f_n_q", None, &n_f, Some(&f_load));
    let bits_fq = m.reg_next("f_bits_q", None, &len_next, Some(&f_load));
    let tc_fq = m.reg_next("f_tcode_q", None, &tcode_t, Some(&f_load));
    m.next(&vf, &(&f_load | &(&vf.q() & &!o_free.clone())), None);

    // ---- Stage F: left-align; output: N chunks ----
    m.comment("Stage F: left-align the stream (logarithmic shifter, LSB first)");
    let amt = m.wire("align_amt", &(&sh_q & &vf.q().repeat(sh_q.width())));
    let lanes = shift_lanes(&mut m, "align", &pre_q.lanes(1), &amt, true);
    let aligned = m.wire("aligned", &Expr::cat_lsb(&lanes));
    m.comment("Output: the aligned image shifts out one chunk per beat, top chunk first");
    let pay = m.reg("out_img_q", l, None);
    let shifted = Expr::cat(&[pay.q().slice(0, l - cb), Expr::zero(cb)]);
    m.next(
        &pay,
        &o_load.select(&aligned, &shifted),
        Some(&(&o_load | &o_fire)),
    );
    m.next(
        &ocnt,
        &o_load.select(&Expr::zero(4), &(ocnt.q() + Expr::lit(4, 1))),
        Some(&(&o_load | &o_fire)),
    );
    m.next(&on, &n_fq, Some(&o_load));
    let oc = m.reg_next("out_c_q", None, &c_fq, Some(&o_load));
    let obits = m.reg_next("out_bits_q", None, &bits_fq, Some(&o_load));
    let otc = m.reg_next("out_tcode_q", None, &tc_fq, Some(&o_load));
    m.next(&vo, &(&o_load | &(&vo.q() & &!(&o_fire & &o_last))), None);
    let top = pay.q().slice(l - cb, cb);
    let chunk = m.wire("out_chunk", &Expr::cat(&top.lanes(8)));

    s_in.accept(&mut m, &s_ready);
    out.drive(
        &mut m,
        &vo.q(),
        &[
            ("chunk", chunk),
            ("last", o_last.clone()),
            ("c", oc),
            ("n", on.q()),
            ("bits", obits),
            ("tcode", otc),
        ],
    );
    m.finish()
}

/// OR of equal-width terms (zero if none).
fn or_all(terms: Vec<Expr>, width: u32) -> Expr {
    terms
        .into_iter()
        .reduce(|a, b| &a | &b)
        .unwrap_or_else(|| Expr::zero(width))
}
