//! The BPC decompressor as an [`ErrorFlag`] for `hwzip prove` (property `error`): for every
//! stored entry and metadata code, corrupt ones included, `m_err_o` is what the model says
//! of it (docs/FORMATS.md, Buddy: `decompress_within` on the code's size), written again in
//! the wrapper as an unrolled reference parse, one token per step, independent of the unit's
//! window decoder.

use super::adaptive_flags::wrap;
use crate::formal::ErrorFlag;
use crate::hdl::{clog2, Module};
use crate::model::bpc::PlaneCode;
use crate::rtl::bpc::BpcRtlParams;
use std::sync::Arc;

/// `bpc-decompress` against the reference parse of `p`'s format. The verdict: a reserved
/// code (6 and above) is an error; a zero (0) or raw (4) entry is not; a BPC code (5, 1-3)
/// is an error when its base token or a plane token reads past the code's size, a zero run
/// goes past plane 0, or a position does not fit in the plane. Bits after the last plane are
/// not read.
pub fn bpc(top: Arc<Module>, p: &BpcRtlParams) -> ErrorFlag {
    let q = p.model();
    let w = p.entry_bits();
    let (s, b, np) = (q.sym_bits, q.plane_bits(), q.planes() as u32);
    let (posb, runb) = (q.pos_bits(), q.run_bits());
    let tw = (1 + b).max(5 + posb).max(2 + runb);
    let sw = w + tw; // the stream and room for one token read past the bus
    let pw = clog2((1 + s + np * tw + tw) as u64) + 1;
    let lw = clog2(np as u64 + 2) + 1;
    let mut r = vec![
        // Stream bit `i` (MSB-first) is bus bit 8(i/8) + 7 - i%8.
        format!("wire [{}:0] r_st;", sw - 1),
        format!("assign r_st[{}:{w}] = {tw}'d0;", sw - 1),
        "genvar r_gi;".to_string(),
        format!("for (r_gi = 0; r_gi < {w}; r_gi = r_gi + 1) begin : g_r_st"),
        "  assign r_st[r_gi] = r_stream[8 * (r_gi / 8) + 7 - r_gi % 8];".to_string(),
        "end".to_string(),
    ];
    let lim = |c: u8| p.code_limit_bits(c).unwrap_or(0);
    r.push(format!(
        "wire [{}:0] r_limit = r_size == 4'd5 ? {pw}'d{} : r_size == 4'd1 ? {pw}'d{}",
        pw - 1,
        lim(5),
        lim(1)
    ));
    r.push(format!(
        "  : r_size == 4'd2 ? {pw}'d{} : {pw}'d{};",
        lim(2),
        lim(3)
    ));
    r.push("wire r_bpc = (r_size == 4'd5) | ((r_size >= 4'd1) & (r_size <= 4'd3));".into());
    // The base token: `1` + the symbol, else `0` + 2 bits choosing 0 / 4 / 8 / 16 bits.
    r.push(format!(
        "wire [{}:0] r_pos0 = r_st[0] ? {pw}'d{} : r_st[1] ? (r_st[2] ? {pw}'d19 : {pw}'d11)",
        pw - 1,
        1 + s
    ));
    r.push(format!("  : (r_st[2] ? {pw}'d7 : {pw}'d3);"));
    r.push("wire r_bad_base = r_pos0 > r_limit;".into());
    r.push(format!("wire [{}:0] r_left0 = {lw}'d{np};", lw - 1));
    // MSB-first field of token `k` at offset `o`, `n` bits.
    let field = |k: u32, o: u32, n: u32| {
        let bits: Vec<String> = (o..o + n).map(|i| format!("r_s{k}[{i}]")).collect();
        format!("{{{}}}", bits.join(", "))
    };
    let pre = |c: PlaneCode| p.prefixes.prefix(c).unwrap_or(0) & 3;
    for k in 0..np {
        let j = k + 1;
        r.push(format!("// plane token {k}"));
        r.push(format!("wire [{}:0] r_s{k} = r_st >> r_pos{k};", sw - 1));
        r.push(format!("wire r_live{k} = r_left{k} != {lw}'d0;"));
        r.push(format!("wire r_raw{k} = r_s{k}[0];"));
        r.push(format!("wire r_run{k} = ~r_s{k}[0] & r_s{k}[1];"));
        r.push(format!(
            "wire r_zero{k} = ~r_s{k}[0] & ~r_s{k}[1] & r_s{k}[2];"
        ));
        r.push(format!("wire [1:0] r_pre{k} = {{r_s{k}[3], r_s{k}[4]}};"));
        r.push(format!(
            "wire r_pfx{k} = ~r_s{k}[0] & ~r_s{k}[1] & ~r_s{k}[2];"
        ));
        r.push(format!(
            "wire r_two{k} = r_pfx{k} & (r_pre{k} == 2'd{});",
            pre(PlaneCode::TwoOnes)
        ));
        r.push(format!(
            "wire r_one{k} = r_pfx{k} & (r_pre{k} == 2'd{});",
            pre(PlaneCode::OneOne)
        ));
        r.push(format!(
            "wire [{}:0] r_len{k} = r_raw{k} ? {pw}'d{} : r_run{k} ? {pw}'d{}",
            pw - 1,
            1 + b,
            2 + runb
        ));
        r.push(format!(
            "  : r_zero{k} ? {pw}'d3 : (r_two{k} | r_one{k}) ? {pw}'d{} : {pw}'d5;",
            5 + posb
        ));
        r.push(format!(
            "wire [{}:0] r_nrun{k} = {{{}'d0, {}}} + {lw}'d2;",
            lw.max(runb + 1) - 1,
            lw.max(runb + 1) - runb,
            field(k, 2, runb)
        ));
        r.push(format!(
            "wire [{}:0] r_at{k} = {};",
            posb - 1,
            field(k, 5, posb)
        ));
        r.push(format!(
            "wire r_over{k} = r_run{k} & (r_nrun{k} > r_left{k});"
        ));
        r.push(format!(
            "wire r_bad{k} = r_live{k} & ((r_pos{k} + r_len{k} > r_limit) | r_over{k}"
        ));
        r.push(format!(
            "  | (r_two{k} & (r_at{k} > {posb}'d{})) | (r_one{k} & (r_at{k} > {posb}'d{})));",
            b - 2,
            b - 1
        ));
        r.push(format!(
            "wire [{}:0] r_pos{j} = r_live{k} ? r_pos{k} + r_len{k} : r_pos{k};",
            pw - 1
        ));
        r.push(format!(
            "wire [{}:0] r_left{j} = ~r_live{k} | r_over{k} ? {lw}'d0",
            lw - 1
        ));
        r.push(format!(
            "  : r_run{k} ? r_left{k} - r_nrun{k}[{}:0] : r_left{k} - {lw}'d1;",
            lw - 1
        ));
    }
    let bads: Vec<String> = (0..np).map(|k| format!("r_bad{k}")).collect();
    r.push(format!(
        "wire r_bad = (r_size >= 4'd6) | r_bpc & (r_bad_base | {});",
        wrap(&bads, " | ", 60)
    ));
    ErrorFlag {
        unit: "bpc-decompress".into(),
        top,
        input: "s".into(),
        output: "m".into(),
        flag: "err".into(),
        cleared: vec!["blk".into()],
        reference: r,
        source: "docs/FORMATS.md, Buddy Sec. 2.4 (decoder)".into(),
        transfer: None,
    }
}
