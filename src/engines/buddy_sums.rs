//! The BPC decompressor's prefix sums as a [`SumNet`] for `hwzip prove` (property `sums`):
//! the carry-save Kogge-Stone network from the base and deltas in `el1_q` to the words in
//! `sum_words` (docs/FORMATS.md, Buddy: the decoder's prefix sums), in its one-stage form.

use crate::formal::{SumCell, SumNet};
use crate::hdl::Module;
use crate::rtl::bpc::BpcRtlParams;
use std::sync::Arc;

/// The network of `top`, the BPC decompressor of `p`, when its sums take one stage
/// (`dec_sum_stages` = 1, the default; the staged forms register carry-save pairs between
/// their levels and are not read by the check). Its cell types are the carry-save cells and
/// adders among the unit's modules.
pub fn bpc(top: Arc<Module>, p: &BpcRtlParams) -> Result<Option<SumNet>, String> {
    if p.dec_sum_stages != 1 {
        return Ok(None);
    }
    let w = p.sym_bits;
    let files = crate::hdl::emit::emit_design(&top).map_err(|e| e.to_string())?;
    let cells = files
        .iter()
        .filter_map(|(f, _)| {
            let m = f.strip_suffix(".v")?;
            let kind = match m.strip_suffix(&format!("_w{w}"))? {
                "bpc_add_cs" | "bpc_add_ks" => SumCell::Add,
                c => SumCell::CarrySave(c.strip_prefix("bpc_csa")?.parse().ok()?),
            };
            Some((m.to_string(), kind))
        })
        .collect();
    Ok(Some(SumNet {
        unit: "bpc-decompress".into(),
        module: top.name.clone(),
        input: "el1_q".into(),
        output: "sum_words".into(),
        lane_bits: w,
        lanes: p.model().symbols(),
        cells,
        source: "docs/FORMATS.md, Buddy (decoder: prefix sums of the deltas)".into(),
        top,
    }))
}
