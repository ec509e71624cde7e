//! The cores of the paper's Table II (docs/FORMATS.md, Base+XOR §3): one combinational encoder and
//! decoder per mechanism on a 32 B transaction, with the paper's 16 nm figures. The engine
//! (`engines::base_xor`) synthesizes them with `synth::cores` for
//! `hwzip synth --engine base-xor`.

use super::{
    prefix_depth, xform_dec, xform_enc, zdr_dec_word, zdr_enc_word, BaseXorRtlParams, DecKind,
    DecStyle,
};
use crate::hdl::{Expr, HdlError, Module, ModuleBuilder};
use crate::model::base_xor::BaseXorParams;
use crate::model::dbi::{DbiGroup, LinkCodec};
use std::sync::Arc;

/// The paper's figures for one core of Table II (TSMC 16 nm FinFET).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperFigures {
    /// Area, µm².
    pub area_um2: f64,
    /// Worst-case latency, ps.
    pub latency_ps: f64,
}

/// One core of Table II.
#[derive(Clone, Debug)]
pub struct Core {
    /// Row label (e.g. `Universal XOR + ZDR`).
    pub row: String,
    /// Direction (`enc` / `dec`).
    pub dir: &'static str,
    /// The combinational module.
    pub module: Arc<Module>,
    /// Structural depth in XOR levels, if known.
    pub xor_levels: Option<u32>,
    /// The paper's figures, if any.
    pub paper: Option<PaperFigures>,
    /// The generator parameters of a sector core (`None` for the ZDR word block).
    pub params: Option<BaseXorRtlParams>,
}

/// XOR levels of the decoder the generator builds without ZDR (FORMATS §3: the paper's
/// structure is T/N − 1 for N-byte and S for Universal).
fn built_xor_depth(p: &BaseXorRtlParams) -> u32 {
    let b = p.bx();
    match p.dec_kind() {
        DecKind::Prefix(t) => prefix_depth(t, (b.t_bytes / b.n_bytes) as usize) as u32,
        DecKind::TreeLog => (b.stages + 1).next_power_of_two().trailing_zeros(),
        DecKind::TreeSerial => b.stages,
        DecKind::Single => 1,
        _ => b.decode_depth(),
    }
}

fn params(bx: BaseXorParams, style: DecStyle) -> BaseXorRtlParams {
    let mut p = BaseXorRtlParams::from_codec(&LinkCodec {
        bx,
        dbi_group: DbiGroup::OFF,
    });
    p.pipe = false;
    p.dec_style = style;
    p
}

/// Seven independent 32-bit ZDR units (one per XORed word of a sector: Table II's "ZDR, 4B
/// base" row, which both "+ZDR" rows contain), with free `x`/`base` inputs.
fn zdr7(enc: bool) -> Result<Arc<Module>, HdlError> {
    let c = 0x4000_0000;
    let unit = if enc {
        zdr_enc_word(32, c, false)?
    } else {
        zdr_dec_word(32, c, false)?
    };
    let dir = if enc { "enc" } else { "dec" };
    let mut m = ModuleBuilder::new(format!("zdr7_{}_w32", dir));
    m.header(format!(
        "Generator: hwzip::rtl::base_xor::table2::zdr7 ({} direction)",
        dir
    ));
    m.header("Seven 32-bit ZDR units, Table II row `ZDR (4B base)`");
    m.header("Spec: docs/FORMATS.md, Base+XOR §2.2, §3 (Table II)");
    let (xn, yn) = if enc { ("x_i", "y_o") } else { ("y_i", "x_o") };
    let x = m.input("d_i", 7 * 32);
    let b = m.input("base_i", 7 * 32);
    let u = m.instance_array(&unit, "u_zdr", 7, |k| {
        vec![(xn, x.slice(32 * k, 32)), ("base_i", b.slice(32 * k, 32))]
    });
    let outs: Vec<Expr> = u.iter().map(|i| i.out(yn)).collect();
    m.output_expr("d_o", &Expr::cat_lsb(&outs));
    m.finish()
}

/// Every Table II row as cores: (row, enc, dec) with the paper's figures (area µm², latency
/// ps, encode/decode), plus our Universal + ZDR decoder in both structures.
pub fn cores() -> Result<Vec<Core>, HdlError> {
    let fig = |a: f64, ps: f64| {
        Some(PaperFigures {
            area_um2: a,
            latency_ps: ps,
        })
    };
    let mut v = Vec::new();
    let mut row = |name: &str,
                   p: BaseXorRtlParams,
                   enc_fig: Option<PaperFigures>,
                   dec_fig: Option<PaperFigures>,
                   with_enc: bool|
     -> Result<(), HdlError> {
        let depth = (!p.zdr).then(|| p.bx().decode_depth());
        if with_enc {
            if let Some(e) = xform_enc(&p)? {
                v.push(Core {
                    row: name.into(),
                    dir: "enc",
                    module: e,
                    xor_levels: (!p.zdr).then_some(1),
                    paper: enc_fig,
                    params: Some(p),
                });
            }
        }
        if let Some(d) = xform_dec(&p)? {
            v.push(Core {
                row: name.into(),
                dir: "dec",
                module: d,
                xor_levels: depth.map(|_| built_xor_depth(&p)),
                paper: dec_fig,
                params: Some(p),
            });
        }
        Ok(())
    };
    let s = DecStyle::Speculative;
    row(
        "2-byte XOR",
        params(BaseXorParams::nbyte(2, false), s),
        fig(214.0, 24.0),
        fig(214.0, 360.0),
        true,
    )?;
    row(
        "4-byte XOR",
        params(BaseXorParams::nbyte(4, false), s),
        fig(289.0, 24.0),
        fig(289.0, 168.0),
        true,
    )?;
    row(
        "8-byte XOR",
        params(BaseXorParams::nbyte(8, false), s),
        fig(341.0, 24.0),
        fig(341.0, 72.0),
        true,
    )?;
    row(
        "Universal XOR",
        params(BaseXorParams::universal(3, false), s),
        fig(355.0, 24.0),
        fig(355.0, 72.0),
        true,
    )?;
    row(
        "4-byte XOR + ZDR",
        params(BaseXorParams::nbyte(4, true), s),
        fig(1050.0, 189.0),
        fig(1050.0, 333.0),
        true,
    )?;
    row(
        "Universal XOR + ZDR",
        params(BaseXorParams::universal(3, true), DecStyle::Serial),
        fig(1116.0, 189.0),
        fig(1116.0, 237.0),
        true,
    )?;
    row(
        "Universal XOR + ZDR (carry-select dec)",
        params(BaseXorParams::universal(3, true), s),
        None,
        fig(1116.0, 237.0),
        false,
    )?;
    for enc in [true, false] {
        v.push(Core {
            row: "ZDR (4B base) ×7".into(),
            dir: if enc { "enc" } else { "dec" },
            module: zdr7(enc)?,
            xor_levels: None,
            paper: fig(761.0, 165.0),
            params: None,
        });
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table2_row_has_cores_that_emit() {
        let c = cores().unwrap();
        assert_eq!(c.len(), 15);
        for x in &c {
            crate::hdl::emit::emit_design(&x.module).unwrap();
            assert!(!x.module.has_clock, "{} is combinational", x.module.name);
        }
        // Unique module names (one synthesis directory per core).
        let mut names: Vec<&str> = c.iter().map(|x| x.module.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 15);
        let lv = |row: &str| {
            c.iter()
                .find(|x| x.row == row && x.dir == "dec")
                .and_then(|x| x.xor_levels)
        };
        // Log-depth decoders: 4 / 3 / 2 levels instead of the paper's 15 / 7 / 3; Universal 2
        // instead of 3.
        assert_eq!(lv("2-byte XOR"), Some(4));
        assert_eq!(lv("4-byte XOR"), Some(3));
        assert_eq!(lv("8-byte XOR"), Some(2));
        assert_eq!(lv("Universal XOR"), Some(2));
    }
}
