//! Port conventions shared by the line-codec units (BDI, FPC, C-Pack): a compressor takes
//! `s_line_i` and gives `m_ok_o` / `m_len_o` / `m_payload_o` (and `m_enc_o` where the format
//! has one); a decompressor takes `s_comp_i` / `s_payload_i` and gives `m_line_o` /
//! `m_err_o`. Engines that reuse a codec (the adaptive link, PACT'12) connect them by these
//! names.

use crate::hdl::{Expr, HdlError, Module, ModuleBuilder};
use std::sync::Arc;

/// A test-only round trip `comp` → `decomp` in `m` (header already written): ports
/// `s_valid_i`/`s_ready_o`/`s_line_i` → `m_valid_o`/`m_ready_i`/`m_line_o`/`m_err_o`. The
/// compressor's `m_ok_o` drives `s_comp_i`; its `m_len_o` (and `m_enc_o`, if any) are unused.
pub fn comp_decomp_loopback(
    mut m: ModuleBuilder,
    line_bits: u32,
    comp: &Arc<Module>,
    decomp: &Arc<Module>,
) -> Result<Arc<Module>, HdlError> {
    let s_valid = m.input("s_valid_i", 1);
    let line = m.input("s_line_i", line_bits);
    let m_ready = m.input("m_ready_i", 1);
    let r = m.wire_decl("dec_ready", 1);
    let ci = m.instance(
        comp,
        "u_comp",
        &[
            ("s_valid_i", s_valid),
            ("s_line_i", line),
            ("m_ready_i", r.expr()),
        ],
    );
    let di = m.instance(
        decomp,
        "u_decomp",
        &[
            ("s_valid_i", ci.out("m_valid_o")),
            ("s_comp_i", ci.out("m_ok_o")),
            ("s_payload_i", ci.out("m_payload_o")),
            ("m_ready_i", m_ready),
        ],
    );
    m.drive(&r, &di.out("s_ready_o"));
    let mut unused: Vec<Expr> = ci.try_out("m_enc_o").into_iter().collect();
    unused.push(ci.out("m_len_o"));
    m.unused(&Expr::cat(&unused));
    m.output_expr("s_ready_o", &ci.out("s_ready_o"));
    m.output_expr("m_valid_o", &di.out("m_valid_o"));
    m.output_expr("m_line_o", &di.out("m_line_o"));
    m.output_expr("m_err_o", &di.out("m_err_o"));
    m.finish()
}
