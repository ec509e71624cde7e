//! The link codes of the Base+XOR engine as [`Code`]s for `hwzip prove` (property `code`):
//! every combinational encoder/decoder core (the configured codec's, every Table II row's,
//! the seven-word ZDR block, DBI-DC on a 32-bit beat at every group width). Each proof
//! says, for every input at once: the decoder gives the input back, and the encoder's output
//! is what docs/FORMATS.md (Base+XOR §2) says, written again in the wrapper as a reference,
//! so the ones on the wire are the model's.

use crate::formal::Code;
use crate::hdl::Module;
use crate::model::base_xor::BaseXorParams;
use crate::rtl::base_xor::{self as rtl, BaseXorRtlParams, Layout};
use crate::rtl::dbi;
use std::sync::Arc;

/// `x[hi:lo]` of a free input.
fn bits(x: &str, lo: u32, w: u32) -> String {
    format!("{x}[{}:{lo}]", lo + w - 1)
}

/// The reference encoding of unit `j` (FORMATS Base+XOR §2.1-§2.3 pairing, §2.2 ZDR) of
/// the sector on free input `x`, as wire `f_ref<j>` (declarations pushed on `decls`): the
/// unit itself for a base unit, else the unit XOR its partner, remapped by ZDR (a zero unit
/// is sent as C; the unit whose code would be C is sent as its partner).
fn unit_ref(
    b: &BaseXorParams,
    lay: &Layout,
    skip: bool,
    x: &str,
    j: usize,
    decls: &mut Vec<String>,
) {
    let w = lay.bits;
    let e = bits(x, lay.lo[j], w);
    let r = format!("wire [{}:0] f_ref{j}", w - 1);
    let Some(q) = lay.partners[j] else {
        decls.push(format!("{r} = {e};"));
        return;
    };
    let base = bits(x, lay.lo[q], w);
    if !b.zdr {
        decls.push(format!("{r} = {e} ^ {base};"));
        return;
    }
    zdr_ref(
        w,
        b.zdr_constant(),
        skip,
        (&e, &base),
        &j.to_string(),
        decls,
    );
}

/// ZDR of `e` against `base` (`w` bits, constant `c`; `skip`: no remap against a zero base)
/// as wire `f_ref<tag>`, through `f_t<tag>` (the plain code), `f_z<tag>` (send C) and
/// `f_c<tag>` (send the base).
fn zdr_ref(
    w: u32,
    c: u64,
    skip: bool,
    (e, base): (&str, &str),
    tag: &str,
    decls: &mut Vec<String>,
) {
    let gate = if skip {
        format!("({base} != {w}'d0) & ")
    } else {
        String::new()
    };
    let c = format!("{w}'h{c:x}");
    decls.push(format!("wire [{}:0] f_t{tag} = {e} ^ {base};", w - 1));
    decls.push(format!("wire f_z{tag} = {gate}({e} == {w}'d0);"));
    decls.push(format!("wire f_c{tag} = {gate}(f_t{tag} == {c});"));
    decls.push(format!(
        "wire [{}:0] f_ref{tag} = f_z{tag} ? {c} : (f_c{tag} ? {base} : f_t{tag});",
        w - 1
    ));
}

/// The code of the Base+XOR core pair `enc` → `dec` built from `p`.
fn sector_code(p: &BaseXorRtlParams, enc: Arc<Module>, dec: Arc<Module>) -> Result<Code, String> {
    let b = p.bx();
    let lay = Layout::new(&b);
    if b.zdr && b.zdr_width() != lay.bits {
        return Err(format!(
            "{}: ZDR chunks of {} bits on {}-bit units",
            enc.name,
            b.zdr_width(),
            lay.bits
        ));
    }
    let sb = p.sector_bits();
    let mut decls = Vec::new();
    for j in 0..lay.lo.len() {
        unit_ref(&b, &lay, p.zdr_skip_zero_base, "x_i", j, &mut decls);
    }
    // The reference sector: every unit at its place (units are not in bit order at 16 bits).
    let mut order: Vec<usize> = (0..lay.lo.len()).collect();
    order.sort_by_key(|&j| std::cmp::Reverse(lay.lo[j]));
    let names: Vec<String> = order.iter().map(|j| format!("f_ref{j}")).collect();
    decls.push(format!(
        "wire [{}:0] f_ref = {{{}}};",
        sb - 1,
        wrap(&names, 2)
    ));
    Ok(Code {
        unit: dec.name.replacen("_dec", "", 1),
        free: vec![("x_i".into(), sb)],
        enc_in: vec![("din_i".into(), "x_i".into())],
        dec_in: vec![("din_i".into(), "e_dout_o".into())],
        decls,
        checks: vec![
            (
                "d_dout_o == x_i".into(),
                "the decoder gives every sector back".into(),
            ),
            (
                "e_dout_o == f_ref".into(),
                "the code on the wire is the reference's (so are its ones)".into(),
            ),
        ],
        enc,
        dec,
    })
}

/// `a, b, c` wrapped before 100 columns (the continuation indented by `indent + 2`).
fn wrap(names: &[String], indent: usize) -> String {
    let mut out = String::new();
    let mut col = indent + 30;
    for (i, n) in names.iter().enumerate() {
        let piece = if i + 1 < names.len() {
            format!("{n}, ")
        } else {
            n.clone()
        };
        if col + piece.len() > 96 {
            out = out.trim_end().to_string();
            out.push('\n');
            out.push_str(&" ".repeat(indent + 2));
            col = indent + 2;
        }
        col += piece.len();
        out.push_str(&piece);
    }
    out
}

/// The seven-word ZDR block of Table II (32-bit words, C = 0x4000_0000) against free
/// partners.
fn zdr7_code(enc: Arc<Module>, dec: Arc<Module>) -> Code {
    let mut decls = Vec::new();
    for k in 0..7u32 {
        let (x, b) = (bits("d_i", 32 * k, 32), bits("base_i", 32 * k, 32));
        zdr_ref(32, 0x4000_0000, false, (&x, &b), &k.to_string(), &mut decls);
    }
    let names: Vec<String> = (0..7).rev().map(|k| format!("f_ref{k}")).collect();
    decls.push(format!("wire [223:0] f_ref = {{{}}};", wrap(&names, 2)));
    Code {
        unit: "zdr7_w32".into(),
        free: vec![("d_i".into(), 224), ("base_i".into(), 224)],
        enc_in: vec![
            ("d_i".into(), "d_i".into()),
            ("base_i".into(), "base_i".into()),
        ],
        dec_in: vec![
            ("d_i".into(), "e_d_o".into()),
            ("base_i".into(), "base_i".into()),
        ],
        decls,
        checks: vec![
            (
                "d_d_o == d_i".into(),
                "every word comes back against its partner".into(),
            ),
            (
                "e_d_o == f_ref".into(),
                "the code on the wire is the reference's".into(),
            ),
        ],
        enc,
        dec,
    }
}

/// DBI-DC on a 32-bit beat in groups of `g` (FORMATS Base+XOR §2.4): the decoder gives the
/// beat back; a group is inverted exactly when it has more than g/2 ones, so a group on the
/// wire carries min(ones, g - ones) ones (a tie is sent as is).
fn dbi_code(g: u32) -> Result<Code, String> {
    let e = |e: crate::hdl::HdlError| e.to_string();
    let enc = dbi::dbi_beat_enc(g).map_err(e)?;
    let dec = dbi::dbi_beat_dec(g).map_err(e)?;
    let mut decls = vec![
        format!("function automatic [6:0] f_ones(input [{}:0] v);", g - 1),
        "  integer i;".to_string(),
        "  begin".to_string(),
        "    f_ones = 7'd0;".to_string(),
        format!("    for (i = 0; i < {g}; i = i + 1) f_ones = f_ones + {{6'd0, v[i]}};"),
        "  end".to_string(),
        "endfunction".to_string(),
    ];
    let mut checks = vec![(
        "d_d_o == x_i".to_string(),
        "the decoder gives every beat back".to_string(),
    )];
    for l in 0..32 / g {
        let (x, q) = (bits("x_i", g * l, g), bits("e_q_o", g * l, g));
        decls.push(format!("wire [6:0] f_p{l} = f_ones({x});"));
        checks.push((
            format!("e_dbi_o[{l}] == (f_p{l} > 7'd{})", g / 2),
            format!("group {l} is inverted exactly when more than half its bits are ones"),
        ));
        checks.push((
            format!("f_ones({q}) == (e_dbi_o[{l}] ? 7'd{g} - f_p{l} : f_p{l})",),
            format!("group {l} carries the model's ones on the wire"),
        ));
    }
    Ok(Code {
        unit: format!("dbi_beat_g{g}"),
        free: vec![("x_i".into(), 32)],
        enc_in: vec![("d_i".into(), "x_i".into())],
        dec_in: vec![
            ("q_i".into(), "e_q_o".into()),
            ("dbi_i".into(), "e_dbi_o".into()),
        ],
        decls,
        checks,
        enc,
        dec,
    })
}

/// Every link code of the engine at `p`: the configured codec's combinational cores first
/// (no output register), then each Table II core pair not already in, the ZDR block and DBI
/// at 8, 16 and 32-bit groups.
pub fn codes(p: &BaseXorRtlParams) -> Result<Vec<Code>, String> {
    let e = |e: crate::hdl::HdlError| e.to_string();
    let mut v = Vec::new();
    let mut comb = *p;
    comb.pipe = false;
    if let (Some(enc), Some(dec)) = (
        rtl::xform_enc(&comb).map_err(e)?,
        rtl::xform_dec(&comb).map_err(e)?,
    ) {
        v.push(sector_code(&comb, enc, dec)?);
    }
    let cores = rtl::table2::cores().map_err(e)?;
    for d in cores.iter().filter(|c| c.dir == "dec") {
        if v.iter().any(|c| c.dec.name == d.module.name) {
            continue;
        }
        // The carry-select Universal + ZDR decoder shares the row's encoder.
        let row = d.row.replace(" (carry-select dec)", "");
        let Some(enc) = cores.iter().find(|c| c.row == row && c.dir == "enc") else {
            continue;
        };
        v.push(match &d.params {
            Some(dp) => sector_code(dp, enc.module.clone(), d.module.clone())?,
            None => zdr7_code(enc.module.clone(), d.module.clone()),
        });
    }
    for g in [8, 16, 32] {
        v.push(dbi_code(g)?);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_wrapper_is_ascii_and_fits_100_columns() {
        let cs = codes(&BaseXorRtlParams::default()).unwrap();
        assert!(cs.len() >= 10, "{}", cs.len());
        let mut units: Vec<&str> = cs.iter().map(|c| c.unit.as_str()).collect();
        units.sort();
        units.dedup();
        assert_eq!(units.len(), cs.len(), "unit names are unique");
        for c in &cs {
            let w = crate::formal::wrapper::code(c).unwrap();
            for l in w.text.lines() {
                assert!(l.is_ascii() && l.len() <= 100, "{}: {l}", c.unit);
            }
        }
    }
}
