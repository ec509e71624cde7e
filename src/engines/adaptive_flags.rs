//! The adaptive engine's decompressors as [`ErrorFlag`]s for `hwzip prove` (property
//! `error`): for every input beat, corrupt ones included, `m_err_o` is what the model's
//! `decompress_prefix` says of the stream on the bus (docs/FORMATS.md §2.0-§2.3), written
//! again in the wrapper as a reference parse, independent of the unit's pipelined one.
//!
//! Both views read the compressed stream MSB-first from the top of `s_payload_i` (the bit
//! order of FORMATS §2.0) and pass the raw line (`s_comp_i = 0`) without a verdict.

use crate::formal::ErrorFlag;
use crate::hdl::{clog2, Module};
use crate::model::bdi::BdiEncoding;
use crate::model::cpack::CpackParams;
use std::sync::Arc;

/// The decompressor `top` reported as `unit`, checked against `reference`.
fn flag(unit: &str, top: Arc<Module>, reference: Vec<String>, source: &str) -> ErrorFlag {
    ErrorFlag {
        unit: unit.to_string(),
        top,
        input: "s".into(),
        output: "m".into(),
        flag: "err".into(),
        cleared: vec!["line".into()],
        reference,
        source: source.into(),
        transfer: None,
    }
}

/// BDI (FORMATS §2.1): the model rejects a compressed line whose 4-bit encoding is reserved
/// (`1xxx`) or reads past the `l`-bit bus (Base8-Δ4 on 16 B lines); every other encoding
/// fits, so nothing else is an error.
pub fn bdi(top: Arc<Module>, l: u32) -> ErrorFlag {
    let long: String = BdiEncoding::COMPRESSED
        .into_iter()
        .filter(|e| e.size_bits(l as usize / 8) > l as usize)
        .map(|e| format!(" | (r_enc == 4'd{})", e as u8))
        .collect();
    let reference = vec![
        format!("wire [3:0] r_enc = r_payload[{}:{}];", l - 1, l - 4),
        if long.is_empty() {
            "wire r_bad = r_comp & r_enc[3];".to_string()
        } else {
            format!("wire r_bad = r_comp & (r_enc[3]{long});")
        },
    ];
    flag(
        "bdi_decomp",
        top,
        reference,
        "docs/FORMATS.md, adaptive Sec. 2.1",
    )
}

/// FPC (FORMATS §2.2): the model parses tokens until the line's `l / 32` words are filled
/// and rejects a zero run past the last word or a token read past the `l`-bit bus. Written
/// as one unrolled parse: token `k` starts at stream bit `r_pos<k>` (every token fills at
/// least one word, so `l / 32` tokens finish any line).
pub fn fpc(top: Arc<Module>, l: u32) -> ErrorFlag {
    let n = l / 32;
    let sw = l + 35; // the stream and room for one token read past its end
    let pw = clog2(35 * n as u64 + 36) + 1;
    let iw = clog2(n as u64 + 9) + 1;
    let mut r = parse_start((l, sw - l), pw, ("r_idx0", iw));
    for k in 0..n {
        let j = k + 1;
        token_at(&mut r, k, sw, ("pre", 3));
        r.push(format!(
            "wire [2:0] r_run{k} = r_s{k}[{}:{}];",
            sw - 4,
            sw - 6
        ));
        // Token lengths: 000 6, 001 7, 010 and 110 11, 011 100 101 19, 111 35 bits.
        r.push(format!(
            "wire [{}:0] r_len{k} = r_pre{k} == 3'd0 ? {pw}'d6 : r_pre{k} == 3'd1 ? {pw}'d7",
            pw - 1
        ));
        r.push(format!(
            "  : (r_pre{k} == 3'd2) | (r_pre{k} == 3'd6) ? {pw}'d11 : r_pre{k} == 3'd7 ? \
             {pw}'d35 : {pw}'d19;"
        ));
        r.push(format!(
            "wire [{}:0] r_step{k} = r_pre{k} == 3'd0 ? {{{}'d0, r_run{k}}} + {iw}'d1 : {iw}'d1;",
            iw - 1,
            iw - 3
        ));
        r.push(format!("wire r_live{k} = r_idx{k} < {iw}'d{n};"));
        r.push(format!(
            "wire r_bad{k} = r_live{k} & ((r_pos{k} + r_len{k} > {pw}'d{l})"
        ));
        r.push(format!(
            "  | ((r_pre{k} == 3'd0) & (r_idx{k} + r_step{k} > {iw}'d{n})));"
        ));
        r.push(format!(
            "wire [{}:0] r_pos{j} = r_live{k} ? r_pos{k} + r_len{k} : r_pos{k};",
            pw - 1
        ));
        r.push(format!(
            "wire [{}:0] r_idx{j} = r_live{k} ? r_idx{k} + r_step{k} : r_idx{k};",
            iw - 1
        ));
    }
    r.push(any_bad(n));
    flag("fpc_decomp", top, r, "docs/FORMATS.md, adaptive Sec. 2.2")
}

/// C-Pack+Z and C-Pack (FORMATS §2.3): the model decodes one token per word with a
/// dictionary filled in order from empty, and rejects an illegal code (`00` after the first
/// token with the paper's codes, `1111` with the original ones), an index of an entry not yet
/// filled, or a token read past the `l`-bit bus. The codes, their lengths and which
/// patterns push come from the configured [`CpackParams`]; a zero block (paper codes, first
/// token) ends the line.
pub fn cpack(top: Arc<Module>, p: &CpackParams) -> ErrorFlag {
    use crate::model::cpack::CpackPattern::{self, *};
    let l = p.line_bytes as u32 * 8;
    let n = l / 32;
    let ib = p.index_bits();
    let d = p.dict_entries as u32;
    let sw = l + 64; // room for a token read past the stream's end
    let pw = clog2(64 * n as u64 + 64) + 1;
    // Wide enough for the count of filled entries and for the dictionary's size (`r_np <
    // d`: a 4-word line never fills 16 entries, but the compare must not wrap).
    let nw = (clog2(n as u64 + 1) + 1).max(clog2(d as u64 + 1));
    let pats: Vec<(CpackPattern, u8, u32)> = std::iter::once(ZeroBlock)
        .chain(CpackPattern::WORD_PATTERNS)
        .filter_map(|q| p.code(q).map(|(c, cl)| (q, c, cl)))
        .collect();
    let mut r = parse_start((l, sw - l), pw, ("r_np0", nw));
    let name = |q: CpackPattern| format!("{q:?}").to_lowercase();
    for k in 0..n {
        let j = k + 1;
        token_at(&mut r, k, sw, ("c", 4));
        let mut lens = Vec::new();
        let mut idx = Vec::new();
        let mut push = Vec::new();
        let mut legal = Vec::new();
        for &(q, c, cl) in &pats {
            if q == ZeroBlock && k > 0 {
                // The zero-block code after the first token is illegal.
                continue;
            }
            let is = format!("r_{}{k}", name(q));
            r.push(format!("wire {is} = r_c{k}[3:{}] == {cl}'d{c};", 4 - cl));
            legal.push(is.clone());
            let bits = p.token_bits(q) as u32;
            lens.push(format!("({is} ? {pw}'d{bits} : {pw}'d0)"));
            if q.has_index() {
                idx.push(format!(
                    "({is} ? r_s{k}[{}:{}] : {ib}'d0)",
                    sw - 1 - cl,
                    sw - cl - ib
                ));
            }
            if p.pushes(q) {
                push.push(is);
            }
        }
        let or = |v: &[String]| {
            if v.is_empty() {
                "1'b0".to_string()
            } else {
                wrap(v, " | ", 60)
            }
        };
        r.push(format!("wire r_ok{k} = {};", or(&legal)));
        r.push(format!(
            "wire [{}:0] r_len{k} = {};",
            pw - 1,
            lens.join("\n    + ")
        ));
        r.push(format!(
            "wire [{}:0] r_ix{k} = {};",
            ib - 1,
            idx.join("\n    | ")
        ));
        let uses = pats
            .iter()
            .filter(|x| x.0.has_index())
            .map(|x| format!("r_{}{k}", name(x.0)))
            .collect::<Vec<_>>();
        // Entry `i` is filled once `i + 1` words were pushed (in order, from slot 0).
        r.push(format!("wire r_idx{k} = {};", or(&uses)));
        r.push(format!(
            "wire r_empty{k} = r_idx{k} & (r_np{k} < {nw}'d{d}) & (r_ix{k} >= r_np{k});"
        ));
        // A zero block (first token only) ends the line.
        let live = if k > 0 && pats.iter().any(|x| x.0 == ZeroBlock) {
            "~r_zeroblock0"
        } else {
            "1'b1"
        };
        r.push(format!("wire r_live{k} = {live};"));
        r.push(format!(
            "wire r_bad{k} = r_live{k}\n    & (~r_ok{k} | (r_pos{k} + r_len{k} > {pw}'d{l}) | r_empty{k});"
        ));
        r.push(format!(
            "wire [{}:0] r_pos{j} = r_pos{k} + r_len{k};",
            pw - 1
        ));
        r.push(format!(
            "wire [{}:0] r_np{j} = r_np{k} + {{{}'d0, r_live{k} & ({})}};",
            nw - 1,
            nw - 1,
            or(&push)
        ));
    }
    r.push(any_bad(n));
    flag("cpack_decomp", top, r, "docs/FORMATS.md, adaptive Sec. 2.3")
}

/// The start of a reference parse of an `l`-bit bus: the stream `r_str` (`r_payload`
/// followed by `pad` zeros, room for a token read past its end), the first token's bit
/// position `r_pos0` (`pw` bits) and the parse's counter (name, width) at zero.
fn parse_start((l, pad): (u32, u32), pw: u32, (counter, cw): (&str, u32)) -> Vec<String> {
    vec![
        format!("wire [{}:0] r_str = {{r_payload, {pad}'d0}};", l + pad - 1),
        format!("wire [{}:0] r_pos0 = {pw}'d0;", pw - 1),
        format!("wire [{}:0] {counter} = {cw}'d0;", cw - 1),
    ]
}

/// Token `k` of a reference parse: the stream from its position (`r_s<k>`) and its first
/// `bits` bits as `r_<name><k>`.
fn token_at(r: &mut Vec<String>, k: u32, sw: u32, (name, bits): (&str, u32)) {
    r.push(format!("wire [{}:0] r_s{k} = r_str << r_pos{k};", sw - 1));
    r.push(format!(
        "wire [{}:0] r_{name}{k} = r_s{k}[{}:{}];",
        bits - 1,
        sw - 1,
        sw - bits
    ));
}

/// `wire r_bad = r_comp & (r_bad0 | ...);` over tokens `0..n`.
fn any_bad(n: u32) -> String {
    let bads: Vec<String> = (0..n).map(|k| format!("r_bad{k}")).collect();
    format!("wire r_bad = r_comp & ({});", wrap(&bads, " | ", 60))
}

/// `items` joined by `sep`, a new line (indented by 4) before a line would pass `width`
/// characters.
pub(super) fn wrap(items: &[String], sep: &str, width: usize) -> String {
    let mut out = String::new();
    let mut col = 0;
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            if col + sep.len() + it.len() > width {
                out.push_str(&format!("\n   {sep}"));
                col = 3 + sep.len();
            } else {
                out.push_str(sep);
                col += sep.len();
            }
        }
        out.push_str(it);
        col += it.len();
    }
    out
}
