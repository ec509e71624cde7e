//! DC dynamic bus inversion generators (docs/FORMATS.md, Base+XOR §2.4, §6.4): the per-group
//! encoder/decoder and the 32-bit beat wrappers used by the Base+XOR link units
//! ([`super::base_xor`]). Golden model: `model::dbi`.

use crate::hdl::blocks::popcount;
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder};
use std::sync::Arc;

fn header(m: &mut ModuleBuilder, generator: &str, params: &str, spec: &str) {
    let spec = format!("docs/FORMATS.md, Base+XOR {spec}");
    m.provenance(&format!("dbi::{generator}"), params, &spec);
}

/// `dbi_dc_enc`: DC bus inversion of one `g`-bit group (FORMATS §2.4): invert when the
/// popcount exceeds g/2 (a tie is sent as is).
pub fn dbi_dc_enc(g: u32) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("dbi_dc_enc_g{}", g));
    header(
        &mut m,
        "dbi_dc_enc",
        &format!("G={}", g),
        "§2.4 (DBI-DC, tie not inverted), §6.4",
    );
    let d = m.input("d_i", g);
    let cnt = popcount(&mut m, "pop", &d);
    let inv = m.wire_c(
        "inv",
        &cnt.gt(&Expr::lit(cnt.width(), (g / 2) as u64)),
        "more than G/2 ones",
    );
    m.output_expr("q_o", &(&d ^ &inv.repeat(g)));
    m.output_expr("inv_o", &inv);
    m.finish()
}

/// `dbi_dc_dec`: undoes DBI on one group: `d = q ^ {G{inv}}` (FORMATS §2.4).
pub fn dbi_dc_dec(g: u32) -> Result<Arc<Module>, HdlError> {
    let mut m = ModuleBuilder::new(format!("dbi_dc_dec_g{}", g));
    header(&mut m, "dbi_dc_dec", &format!("G={}", g), "§2.4, §6.4");
    let q = m.input("q_i", g);
    let inv = m.input("inv_i", 1);
    m.output_expr("d_o", &(&q ^ &inv.repeat(g)));
    m.finish()
}

/// `dbi_beat_enc`: DBI-DC over the 32-bit beat in groups of `g` (FORMATS §2.4 lane mapping:
/// group l = bits `[g·l+g−1:g·l]`, flag l = `dbi_o[l]`).
pub fn dbi_beat_enc(g: u32) -> Result<Arc<Module>, HdlError> {
    let grp = dbi_dc_enc(g)?;
    let n = 32 / g;
    let mut m = ModuleBuilder::new(format!("dbi_beat_enc_g{}", g));
    header(
        &mut m,
        "dbi_beat_enc",
        &format!("BUS=32 G={} ({} flags)", g, n),
        "§2.4 (lane mapping: group l = dq[G*l+G-1:G*l], flag l = dbi[l]), §6.4",
    );
    let d = m.input("d_i", 32);
    let u = m.instance_array(&grp, "u_grp", n, |l| vec![("d_i", d.slice(g * l, g))]);
    let q: Vec<Expr> = u.iter().map(|i| i.out("q_o")).collect();
    let f: Vec<Expr> = u.iter().map(|i| i.out("inv_o")).collect();
    m.output_expr("q_o", &Expr::cat_lsb(&q));
    m.output_expr("dbi_o", &Expr::cat_lsb(&f));
    m.finish()
}

/// `dbi_beat_dec`: undoes DBI on a 32-bit beat.
pub fn dbi_beat_dec(g: u32) -> Result<Arc<Module>, HdlError> {
    let grp = dbi_dc_dec(g)?;
    let n = 32 / g;
    let mut m = ModuleBuilder::new(format!("dbi_beat_dec_g{}", g));
    header(
        &mut m,
        "dbi_beat_dec",
        &format!("BUS=32 G={} ({} flags)", g, n),
        "§2.4 (lane mapping as dbi_beat_enc), §6.4",
    );
    let q = m.input("q_i", 32);
    let dbi = m.input("dbi_i", n);
    let u = m.instance_array(&grp, "u_grp", n, |l| {
        vec![("q_i", q.slice(g * l, g)), ("inv_i", dbi.bit(l))]
    });
    let d: Vec<Expr> = u.iter().map(|i| i.out("d_o")).collect();
    m.output_expr("d_o", &Expr::cat_lsb(&d));
    m.finish()
}
