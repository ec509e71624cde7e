//! Memory-side blocks of PACT'12 (docs/FORMATS.md, PACT'12 §2.4–§2.5, §6 items 5 and 8):
//! the chunk sizer, the MD entry fields and the request-size modifier.
//!
//! * `chunk_sizer`: a stream of `bits` stored with code `tcode` is compressed iff
//!   `ceil(bits/8)` is below the raw bytes of the code (`(32 − t)·words/8`; with
//!   `raw_if_n_eq_raw` also `N` below the raw chunk count), in `N = ceil(bits/128)` chunks;
//!   else raw in `(32 − t)·words/128` chunks. The compressor uses the same logic.
//! * MD entries: `{c, nm1[2:0]}` (4 bits) or `{c, nm1[2:0], tcode[1:0], 2'b00}` (8 bits);
//!   a raw entry's `N` follows from its `tcode`.
//! * `reqsize_mod`: `N` chunks on an MD hit, the raw count on a miss with `md_pending` (the
//!   data then waits at the decompressor for the entry).

use super::{err, header, LossyRtlParams};
use crate::hdl::blocks::or_tree;
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder};
use crate::model::cache::CacheParams;
use crate::model::cpack_lossy::{LossyParams, CHUNK_BITS};
use crate::rtl::cache::CacheRtlParams;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The MD cache and its MSHRs (§3, §6 items 6-7; `cpack_lossy: {md_cache: {...}}`): a
/// configuration of the shared cache + MSHR controller (`rtl::cache`) whose fields are the
/// codec's MD entries. Defaults: the paper's 32 lines of 128 B, 2-way (16 sets), 10 MSHRs,
/// 22-bit per-MC block indices (4 GB over 8 MCs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MdCacheParams {
    /// Sets (a power of two).
    pub sets: u32,
    /// Ways (1-4, true LRU).
    pub ways: u32,
    /// Line bytes (a power of two; one MD line, one sector).
    pub line_bytes: u32,
    /// MSHR entries (`md_mshr`).
    pub mshrs: u32,
    /// Lookups one MSHR parks (the first miss included).
    pub mshr_slots: u32,
    /// Width of the per-MC local block index (`lk_blk`).
    pub blk_bits: u32,
}

impl Default for MdCacheParams {
    fn default() -> Self {
        let c = CacheParams::pact12_md();
        MdCacheParams {
            sets: c.sets,
            ways: c.ways,
            line_bytes: c.line_bytes,
            mshrs: c.mshrs,
            mshr_slots: c.mshr_slots,
            blk_bits: 22,
        }
    }
}

impl MdCacheParams {
    /// Human-readable parameter line (reports).
    pub fn describe(&self, md_bits: u32) -> String {
        format!(
            "md_cache sets={} ways={} line={}B mshrs={}x{} entry={}b blk={}b",
            self.sets,
            self.ways,
            self.line_bytes,
            self.mshrs,
            self.mshr_slots,
            md_bits,
            self.blk_bits
        )
    }

    /// The shared controller's parameters for MD entries of `md_bits` bits.
    pub fn rtl(&self, md_bits: u32) -> CacheRtlParams {
        CacheRtlParams {
            cache: CacheParams {
                sets: self.sets,
                ways: self.ways,
                line_bytes: self.line_bytes,
                sector_bytes: self.line_bytes,
                field_bits: md_bits,
                mshrs: self.mshrs,
                mshr_slots: self.mshr_slots,
            },
            field_addr_bits: self.blk_bits,
            id_bits: 8,
        }
    }
}

/// The sizing decision for a stream of `len` bits (any width ≥ 8) with code `tcode`:
/// (`fits`: stored compressed, `n[3:0]`). Wires `comp_max_bits`, `raw_n`, `fits`,
/// `len_round`, `n_comp`. `len` ≥ 1 (a C-Pack stream has at least 2 bits per word).
pub(super) fn size_logic(
    m: &mut ModuleBuilder,
    c: &LossyParams,
    len: &Expr,
    tcode: &Expr,
) -> (Expr, Expr) {
    let lw = len.width();
    // Per tcode: the largest stream stored compressed, and the raw chunk count.
    let mut thr_terms = Vec::new();
    let mut rawn_terms = Vec::new();
    for tc in 0..4u8 {
        let raw_n = c.raw_chunks_t(tc) as u64;
        let thr = c.max_compressed_bits(tc) as u64;
        let sel = tcode.eq_lit(tc as u64);
        thr_terms.push(sel.gate(&Expr::lit(lw, thr)));
        rawn_terms.push(sel.gate(&Expr::lit(4, raw_n)));
    }
    let thr = m.wire("comp_max_bits", &or_tree(thr_terms, lw));
    let raw_n = m.wire("raw_n", &or_tree(rawn_terms, 4));
    let fits = m.wire("fits", &len.le(&thr));
    let len_up = m.wire(
        "len_round",
        &(len.clone() + Expr::lit(lw, CHUNK_BITS as u64 - 1)),
    );
    let n_comp = m.wire("n_comp", &len_up.slice(7, lw - 7));
    m.unused(&len_up.slice(0, 7));
    let n = fits.select(&n_comp.resize(4), &raw_n);
    (fits, n)
}

/// `cpack_lossy_sizer` (§6 item 5, combinational): `bits_i`, `tcode_i[1:0]` → `n_o[3:0]`,
/// `c_o`.
pub fn chunk_sizer(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let mut m = ModuleBuilder::new(format!("cpack_lossy_sizer_{}", p.tag()));
    header(
        &mut m,
        "mc::chunk_sizer",
        p,
        "§2.4 (chunks, raw fallback), §2.6, §6 item 5",
    );
    let bits = m.input("bits_i", p.len_bits());
    let tcode = m.input("tcode_i", 2);
    let (fits, n) = size_logic(&mut m, &p.codec, &bits, &tcode);
    m.output_expr("n_o", &n);
    m.output_expr("c_o", &fits);
    m.finish()
}

/// The fields of an MD entry.
pub(super) struct MdFields {
    /// Stored compressed.
    pub c: Expr,
    /// Chunks (1..=8; the raw count of the `tcode` when raw), 4 bits.
    pub n: Expr,
    /// Truncation code (0 with 4-bit entries), 2 bits.
    pub tcode: Expr,
}

/// Decodes an MD entry of `c.md_bits` bits (reserved bits unused).
pub(super) fn md_decode(m: &mut ModuleBuilder, c: &LossyParams, e: &Expr) -> MdFields {
    let (cb, nm1, tcode) = if c.md_bits == 4 {
        (e.bit(3), e.slice(0, 3), Expr::zero(2))
    } else {
        m.unused(&e.slice(0, 2));
        (e.bit(7), e.slice(4, 3), e.slice(2, 2))
    };
    let raw_terms = (0..4u8)
        .map(|tc| {
            tcode
                .eq_lit(tc as u64)
                .gate(&Expr::lit(4, c.raw_chunks_t(tc) as u64))
        })
        .collect();
    let raw_n = or_tree(raw_terms, 4);
    let n = cb.select(&(nm1.zext(4) + Expr::lit(4, 1)), &raw_n);
    MdFields { c: cb, n, tcode }
}

/// Encodes an MD entry from `c`, `n[3:0]` and `tcode[1:0]` (`nm1 = 0` when raw).
pub(super) fn md_encode(
    m: &mut ModuleBuilder,
    c: &LossyParams,
    cb: &Expr,
    n: &Expr,
    tcode: &Expr,
) -> Expr {
    let nm1_full = m.wire("entry_nm1", &(n.clone() - Expr::lit(4, 1)));
    m.unused(&nm1_full.bit(3));
    let nm1 = cb.gate(&nm1_full.slice(0, 3));
    if c.md_bits == 4 {
        Expr::cat(&[cb.clone(), nm1])
    } else {
        Expr::cat(&[cb.clone(), nm1, tcode.clone(), Expr::zero(2)])
    }
}

/// `cpack_lossy_reqsize` (§6 item 8, combinational): `hit_i`, `entry_i` (the MD entry on a
/// hit) → `nchunks_o[3:0]` (N on a hit, the raw count on a miss), `md_pending_o`, and the
/// entry's `c_o`/`tcode_o[1:0]` for the decompressor.
pub fn reqsize_mod(p: &LossyRtlParams) -> Result<Arc<Module>, HdlError> {
    p.validate().map_err(err)?;
    let c = &p.codec;
    let mut m = ModuleBuilder::new(format!("cpack_lossy_reqsize_{}", p.tag()));
    header(
        &mut m,
        "mc::reqsize_mod",
        p,
        "§2.5 (MD entry), §3 (MD miss), §6 item 8",
    );
    let hit = m.input("hit_i", 1);
    let entry = m.input("entry_i", c.md_bits);
    let f = md_decode(&mut m, c, &entry);
    let raw = Expr::lit(4, c.raw_chunks() as u64);
    m.output_expr("nchunks_o", &hit.select(&f.n, &raw));
    m.output_expr("md_pending_o", &!hit);
    m.output_expr("c_o", &f.c);
    m.output_expr("tcode_o", &f.tcode);
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hdl::sim::Sim;
    use crate::model::cpack_lossy::mc::reqsize;
    use crate::model::cpack_lossy::MdEntry;

    fn variants() -> Vec<LossyRtlParams> {
        let d = LossyRtlParams::default();
        let mut v = vec![d.clone()];
        let mut r = d.clone();
        r.codec.raw_if_n_eq_raw = true;
        r.codec.md_bits = 4;
        v.push(r);
        let mut b = d;
        b.codec.block_bytes = 64;
        b.codec.t_table = [0, 8, 16, 16];
        v.push(b);
        v
    }

    /// Every stream length and code against the model's sizing rule (`chunk_size`).
    #[test]
    fn chunk_sizer_is_exhaustively_the_model() {
        for p in variants() {
            let mut s = Sim::new(&chunk_sizer(&p).unwrap()).unwrap();
            let max = crate::rtl::cpack::TOK_W as u64 * p.codec.words() as u64;
            let codes = if p.codec.md_bits == 4 { 1 } else { 4 };
            for tc in 0..codes {
                for bits in 1..=max {
                    s.set_u64("bits_i", bits).unwrap();
                    s.set_u64("tcode_i", tc as u64).unwrap();
                    s.eval();
                    let e = crate::model::cpack_lossy::chunk_size(&p.codec, bits as usize, tc);
                    assert_eq!(
                        (s.get_u64("c_o") == 1, s.get_u64("n_o") as u8),
                        (e.c, e.n),
                        "{}: {bits} bits, tcode {tc}",
                        p.describe()
                    );
                }
            }
        }
    }

    /// Every entry, hit or miss, against `model::cpack_lossy::mc::reqsize` and the entry
    /// decoder.
    #[test]
    fn reqsize_is_exhaustively_the_model() {
        for p in variants() {
            let mut s = Sim::new(&reqsize_mod(&p).unwrap()).unwrap();
            for bits in 0..1u64 << p.codec.md_bits {
                for hit in [false, true] {
                    s.set_u64("hit_i", hit as u64).unwrap();
                    s.set_u64("entry_i", bits).unwrap();
                    s.eval();
                    let e = MdEntry::decode(&p.codec, bits);
                    let r = reqsize(&p.codec, hit.then_some(e));
                    let got = (
                        s.get_u64("nchunks_o") as u8,
                        s.get_u64("md_pending_o") == 1,
                        s.get_u64("c_o") == 1,
                        s.get_u64("tcode_o") as u8,
                    );
                    assert_eq!(got, (r.nchunks, r.md_pending, e.c, e.tcode), "{bits:#x}");
                }
            }
        }
    }
}
