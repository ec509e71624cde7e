//! The ZVC decompressor as an [`ErrorFlag`] for `hwzip prove` (property `error`), with a
//! verdict per transfer: a transfer is corrupt exactly when its last beat carries no
//! element or its elements do not form whole windows (docs/FORMATS.md, ZVC §3.3): it ends
//! inside a window's mask or payload. The reference walks the transfer's elements one by one, in the
//! order of the byte stream, counting the mask elements still to read and the payload
//! elements the mask read so far asks for; it never looks at the unit's buffer.

use crate::formal::{ErrorFlag, PerTransfer};
use crate::hdl::{clog2, Module};
use crate::rtl::zvc::ZvcRtlParams;
use std::sync::Arc;

/// The decompressor `top` of parameters `p`, checked per transfer.
pub fn decompressor(top: Arc<Module>, p: &ZvcRtlParams) -> ErrorFlag {
    let (w, l) = (p.word_bits, p.lanes);
    let masks = p.window / w; // mask elements per window
    let mw = clog2(masks as u64 + 1);
    // Payload owed: at most a window's elements, one bit more for the compare.
    let dw = clog2(p.window as u64 + 1) + 1;
    let pw = clog2(w as u64 + 1);
    let bw = clog2((l * w / 8 + 1) as u64);
    let nw = clog2(l as u64 + 1).max(bw);
    let shift = clog2((w / 8) as u64);
    let mut r = vec![
        format!(
            "function automatic [{}:0] r_popcount(input [{}:0] x);",
            pw - 1,
            w - 1
        ),
        "  integer i;".into(),
        "  begin".into(),
        "    r_popcount = 0;".into(),
        format!(
            "    for (i = 0; i < {w}; i = i + 1) r_popcount = r_popcount + {{{}'d0, x[i]}};",
            pw - 1
        ),
        "  end".into(),
        "endfunction".into(),
        "// elements in the beat: whole elements of its bytes, at most a full beat".into(),
        if nw > bw {
            format!(
                "wire [{}:0] r_claim = {{{}'d0, c_bytes}} >> {shift};",
                nw - 1,
                nw - bw
            )
        } else {
            format!("wire [{}:0] r_claim = c_bytes >> {shift};", nw - 1)
        },
        format!(
            "wire [{}:0] r_elems = (r_claim > {nw}'d{l}) ? {nw}'d{l} : r_claim;",
            nw - 1
        ),
        format!("wire [{}:0] r_m0 = r_m_q;", mw - 1),
        format!("wire [{}:0] r_d0 = r_d_q;", dw - 1),
    ];
    for k in 0..l {
        let e = format!("c_data[{}:{}]", k * w + w - 1, k * w);
        let j = k + 1;
        r.push(format!(
            "// element {k}: a mask element adds its ones to the payload owed"
        ));
        r.push(format!(
            "wire [{}:0] r_mm{k} = (r_m{k} != {mw}'d0) ? r_m{k} - {mw}'d1 : r_m{k};",
            mw - 1
        ));
        r.push(format!(
            "wire [{}:0] r_dd{k} = (r_m{k} != {mw}'d0) ? r_d{k} + r_popcount({e})",
            dw - 1
        ));
        r.push(format!("  : r_d{k} - {dw}'d1;"));
        r.push(format!(
            "wire [{}:0] r_m{j} = ({nw}'d{k} >= r_elems) ? r_m{k}",
            mw - 1
        ));
        r.push(format!(
            "  : ((r_mm{k} == {mw}'d0) & (r_dd{k} == {dw}'d0)) ? {mw}'d{masks} : r_mm{k};"
        ));
        r.push(format!(
            "wire [{}:0] r_d{j} = ({nw}'d{k} >= r_elems) ? r_d{k} : r_dd{k};",
            dw - 1
        ));
    }
    r.push(format!("assign r_m_q_n = r_m{l};"));
    r.push(format!("assign r_d_q_n = r_d{l};"));
    r.push("// ending here: corrupt when this last beat has no element or ends inside a".into());
    r.push("// window".into());
    r.push(format!(
        "wire r_bad = (r_elems == {nw}'d0) | (r_m_q_n != {mw}'d{masks});"
    ));
    ErrorFlag {
        unit: "decompressor".into(),
        top,
        input: "s".into(),
        output: "m".into(),
        flag: "err".into(),
        cleared: vec!["data".into()],
        reference: r,
        source: "docs/FORMATS.md, ZVC Sec. 3.3".into(),
        transfer: Some(PerTransfer {
            in_last: "last".into(),
            out_last: "last".into(),
            state: vec![
                ("r_m_q".into(), mw, format!("{mw}'d{masks}")),
                ("r_d_q".into(), dw, format!("{dw}'d0")),
            ],
        }),
    }
}
