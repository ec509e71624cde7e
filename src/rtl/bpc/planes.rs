//! Per-plane sub-modules of the BPC compressor, each emitted once and instantiated per plane:
//! the plane classifier (stage 2), the zero-run scan and the plane token encoder (stage 3).

use super::arith::any_many;
use super::{clog2u, code, msb_first, BpcRtlParams, Geo, SPEC};
use crate::hdl::blocks::{onehot_index, or_tree};
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder};
use crate::model::bpc::PlaneCode;
use std::sync::Arc;

fn child_header(m: &mut ModuleBuilder, gen: &str, params: &str, spec: &str) {
    m.header(format!("Generator: hwzip::rtl::bpc::planes::{gen}"));
    m.header(format!("Parameters: {params}"));
    m.header(format!("Spec: {SPEC} {spec}"));
}

/// Class bits of [`classifier`]'s `cls_o`, LSB first.
pub(super) const CLS_BITS: u32 = 5;

/// `bpc_plane_cls_b<b>`: one plane's classes from its DBX and DBP bits, `cls_o` =
/// [zero, all ones, DBP zero, two adjacent ones, one one] (LSB first; the priority is the
/// token encoder's), and `pos_o`, the index of the single one (or of the lower of two
/// adjacent ones) by one-hot OR trees (any value for the other classes).
pub(super) fn classifier(g: Geo) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("bpc_plane_cls_b{}", g.b));
    child_header(
        &mut m,
        "classifier",
        &format!("plane bits {}, position bits {}", g.b, g.posb),
        "§2.4 (plane codes)",
    );
    let x = m.input("dbx_i", g.b);
    let dbp = m.input("dbp_i", g.b);
    m.comment("Ones in the plane: (any, more than one) trees over the bits and adjacent pairs");
    let (any, many) = any_many(&x);
    let y = m.wire("adj", &(x.slice(0, g.b - 1) & x.slice(1, g.b - 1)));
    let (yany, ymany) = any_many(&y);
    let yy = Expr::cat(&[y.clone(), Expr::zero(1)]) | y.zext(g.b);
    let zero = !&any;
    let ones = x.all();
    let dz = !dbp.any();
    let one = &any & &!&many;
    let two = m.wire("two", &(&yany & &!&ymany & !(&x ^ &yy).any()));
    let xb: Vec<Expr> = (0..g.b).map(|i| x.bit(i)).collect();
    let yb: Vec<Expr> = (0..g.b - 1).map(|i| y.bit(i)).collect();
    // `pos_o` is read only for the two classes it belongs to: a single one has no adjacent
    // pair and two adjacent ones have one, so `yany` (an OR tree beside the index trees)
    // picks it, not the full `two` test.
    let pos = yany.select(&onehot_index(&yb, g.posb), &onehot_index(&xb, g.posb));
    m.output_expr("cls_o", &Expr::cat_lsb(&[zero, ones, dz, two, one]));
    m.output_expr("pos_o", &pos);
    m.finish()
}

/// `bpc_zrun_scan_p<planes>_r<run bits>`: for each plane j, the zero planes from plane j
/// downwards (`runf_o` lane j, for the planes 0..p-2 whose counts a run field reads), by a
/// Kogge-Stone scan of (reset, count) pairs in which a non-zero plane resets.
///
/// At level L, node i (i >= 2^L) takes node i - 2^L: when node i's 2^L planes hold no reset
/// its count is exactly 2^L, and the lower node's count is at most 2^L, so their sum is
/// wiring (bit L + 1 = lower bit L, bit L = its inverse, the bits below unchanged) and each
/// level is one mux.
pub(super) fn zero_run_scan(g: Geo) -> Result<Arc<Module>, HdlError> {
    let np = g.p as usize;
    let cw = g.runb + 1;
    let mut m = ModuleBuilder::new(format!("bpc_zrun_scan_p{np}_r{}", g.runb));
    child_header(
        &mut m,
        "zero_run_scan",
        &format!("{np} planes, {}-bit run fields", g.runb),
        "§2.4 (zero-run tokens)",
    );
    let zero = m.input("zero_i", g.p);
    let mut rst: Vec<Expr> = (0..np).map(|j| !zero.bit(j as u32)).collect();
    let mut cnt: Vec<Expr> = (0..np).map(|j| zero.bit(j as u32).zext(cw)).collect();
    let mut lvl = 0u32;
    while (1usize << lvl) < np {
        m.comment(format!(
            "Level {}: node i takes node i - {}",
            lvl + 1,
            1 << lvl
        ));
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
            cnt[i] = m.wire(&format!("cnt{}_{i}", lvl + 1), &c);
            rst[i] = m.wire(&format!("rst{}_{i}", lvl + 1), &(&r0[i] | &r0[i - d]));
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
    let lanes: Vec<Expr> = cnt[..np - 2].iter().map(|c| c.slice(0, g.runb)).collect();
    m.output_expr("runf_o", &Expr::cat_lsb(&lanes));
    m.finish()
}

/// Bits of [`token`]'s `len_o`.
pub(super) fn token_len_bits(g: Geo) -> u32 {
    clog2u(g.tw + 1)
}

/// `bpc_plane_tok_<tag>`: one plane's token (stream order, `tok_o`, zero-padded to the
/// widest token) and its length, by the priority zero run, all ones, DBP zero, two ones,
/// one one, raw. Its neighbours' zero flags place the runs: a run starts where the plane
/// above is not zero (`up_zero_i`, 0 at the top plane) and is long (two or more planes,
/// `runf_i` = its length minus 2) when the plane below is zero too (`dn_zero_i`, 0 at
/// plane 0).
pub(super) fn token(p: &BpcRtlParams, g: Geo) -> Result<Arc<Module>, HdlError> {
    let q = p.model();
    let tw = g.tw;
    let lw = token_len_bits(g);
    let mut m = ModuleBuilder::new(format!("bpc_plane_tok_{}", p.tag()));
    child_header(
        &mut m,
        "token",
        &format!("plane bits {}, prefixes {}", g.b, q.prefixes.name()),
        "§2.4 (plane codes, priority)",
    );
    let cls = m.input("cls_i", CLS_BITS);
    let up_zero = m.input("up_zero_i", 1);
    let dn_zero = m.input("dn_zero_i", 1);
    let runf = m.input("runf_i", g.runb);
    let pos = m.input("pos_i", g.posb);
    let dbx = m.input("dbx_i", g.b);
    let c = |k: u32| cls.bit(k);
    let z = c(0);
    let start_z = m.wire("run_start", &(&z & &!&up_zero));
    // A run of two or more: this plane and the one below are zero (no scan needed).
    let long = m.wire("run_long", &(&z & &dn_zero));
    let ones = &c(1) & &!&z;
    let dz = &c(2) & &!&z & &!c(1);
    let nz_hi = !&z & &!c(1) & &!c(2);
    let two = &c(3) & &nz_hi;
    let one = &c(4) & &!c(3) & &nz_hi;
    let raw = &nz_hi & &!c(3) & &!c(4);
    let pre = |c: PlaneCode| {
        let v = q.prefixes.prefix(c).unwrap_or(0);
        code(&format!("{v:05b}"))
    };
    let posf = msb_first(&pos);
    let lay = |v: Expr| v.zext(tw);
    let terms = vec![
        (&start_z & &long).gate(&lay(Expr::cat(&[msb_first(&runf), code("01")]))),
        (&start_z & &!&long).gate(&lay(code("001"))),
        ones.gate(&lay(pre(PlaneCode::AllOnes))),
        dz.gate(&lay(pre(PlaneCode::DbpZero))),
        two.gate(&lay(Expr::cat(&[posf.clone(), pre(PlaneCode::TwoOnes)]))),
        one.gate(&lay(Expr::cat(&[posf, pre(PlaneCode::OneOne)]))),
        raw.gate(&lay(Expr::cat(&[msb_first(&dbx), code("1")]))),
    ];
    m.output_expr("tok_o", &or_tree(terms, tw));
    let [len_raw, len_run, _, _, len_pos] = g.lens();
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
    m.output_expr("len_o", &len);
    m.finish()
}
