//! Port conventions shared by the line-codec units (BDI, FPC, C-Pack): a compressor takes
//! `s_line_i` and gives `m_ok_o` / `m_len_o` / `m_payload_o` (and `m_enc_o` where the format
//! has one); a decompressor takes `s_comp_i` / `s_payload_i` and gives `m_line_o` /
//! `m_err_o`. Engines that reuse a codec (the adaptive link, PACT'12) connect them by these
//! names.

use crate::hdl::stream;
use crate::hdl::{HdlError, Module, ModuleBuilder};
use std::sync::Arc;

/// How the line codecs (BDI, FPC, C-Pack+Z) lay a stream and a line on their buses.
pub(crate) const LINE_BUS: &str = "Bus: stream bit p (MSB-first) at payload bit L-1-p, zero after \
                                   the stream; line byte i at bits [8i+7:8i]";

/// A test-only round trip `comp` → `decomp` in `m` (header already written), built with
/// [`stream::chain`]: the compressor's `m_ok_o` drives the decompressor's `s_comp_i`, its
/// `m_payload_o` the `s_payload_i`. The compressed link is shown on probe ports for the
/// formal round trip, which splits into cases by it: `p_fire_o` (a compressed beat passes),
/// `p_len_o` and `p_enc_o` (if the format has one).
pub fn comp_decomp_loopback(
    mut m: ModuleBuilder,
    comp: &Arc<Module>,
    decomp: &Arc<Module>,
) -> Result<Arc<Module>, HdlError> {
    let links = stream::chain(
        &mut m,
        &[("u_comp", comp), ("u_decomp", decomp)],
        &[("ok", "comp")],
    );
    if let Some(l) = links.first() {
        let shown: Vec<&str> = ["len", "enc"]
            .into_iter()
            .filter(|f| l.fields.iter().any(|(n, _)| n == f))
            .collect();
        stream::probe(&mut m, "p", l, &shown);
    }
    m.finish()
}
