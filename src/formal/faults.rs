//! Planted faults for the prover: text edits of a unit's emitted Verilog that a proof must
//! catch with a counterexample (`hwzip prove --faults`). Two protocol faults are derived
//! from any unit's streams; the data-path faults are the mux-select inversions the cosim
//! scoreboard tests plant ([`crate::cosim::fault::invert_mux_select`]).

use crate::cosim::fault::invert_mux_select;
use crate::hdl::{Dir, Module};

/// One planted fault: the edited file and what the edit does.
#[derive(Clone, Debug)]
pub struct Planted {
    /// Short name (`ignore-ready:m`, `mux:d1_3`).
    pub name: String,
    /// What the edit does, for the fault table.
    pub what: String,
    /// Index of the edited file in the unit's file list.
    pub file: usize,
    /// The edited text.
    pub text: String,
}

/// The data-path muxes the cosim fault tests invert, by file-name prefix and wire (and four
/// of PACT'12's, which only the prover inverts: a compressor index select, the
/// decompressor's dictionary write pointer, the truncation unit's choice of the block's code
/// (from its first beat or the register) and a placement step of the restore unit).
const MUXES: &[(&str, &str)] = &[
    ("zvc_compact", "d1_3"),
    ("zvc_compact", "d1_1"),
    ("bdi_comp", "b4d1_dsel3"),
    ("fpc_comp", "payload_s2"),
    ("fpc_decomp", "k1_slot2"),
    ("cpack_comp", "w1_idx_th"),
    ("cpack_decomp", "t1_dict"),
    ("cpack_lossy_comp", "w1_idx_th"),
    ("cpack_lossy_decomp", "x3_dwsel1"),
    ("cpack_lossy_trunc", "tcode_cur"),
    ("cpack_lossy_restore", "place_s1"),
    ("bx", "zdr1"),
    ("bx", "inv5"),
    ("bpc", "s1_l0"),
    ("bpc", "sr_in"),
];

/// `text` with the first read of `port` replaced by `by`: on the right of an `assign`, or in
/// a sub-module's port connection (`.x(port)`), whichever comes first. A top that hands its
/// consumer's `ready` to a sub-module (the link transmitter's egress) reads it there first
/// where it matters; its own `assign`s may only count beats.
fn replace_in_assign(text: &str, port: &str, by: &str) -> Option<String> {
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let from = if t.starts_with("assign ") && !t.starts_with(&format!("assign {port} ")) {
            line.find(" = ")
        } else if t.starts_with('.') {
            line.find('(')
        } else {
            None
        };
        if let Some(i) = from.and_then(|f| find_word(&line[f..], port).map(|i| f + i)) {
            let at = pos + i;
            return Some(format!("{}{}{}", &text[..at], by, &text[at + port.len()..]));
        }
        pos += line.len();
    }
    None
}

/// Byte offset of `word` in `s` as a whole identifier.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let at = from + i;
        let before = at == 0 || !ident(b[at - 1]);
        let after = at + word.len() >= b.len() || !ident(b[at + word.len()]);
        if before && after {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The reset value `reg <= N'd0;` of the register that drives `assign port = reg;`, set to 1.
fn valid_set_in_reset(text: &str, port: &str) -> Option<String> {
    let key = format!("assign {port} = ");
    let start = text.find(&key)? + key.len();
    let reg = text[start..].split(';').next()?.trim();
    if !reg.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return None;
    }
    let from = format!("{reg} <= 1'd0;");
    let at = text.find(&from)?;
    Some(format!(
        "{}{reg} <= 1'd1;{}",
        &text[..at],
        &text[at + from.len()..]
    ))
}

/// The index of `top`'s own file in `files`.
fn top_file(top: &Module, files: &[(String, String)]) -> Option<usize> {
    files
        .iter()
        .position(|(n, _)| *n == format!("{}.v", top.name))
}

/// The protocol faults of unit `top` (whose file is `files[top_file]`): for each output
/// stream, the unit ignores its consumer's `ready` (in the first assignment or sub-module port that reads it),
/// and its `valid` register comes out of reset set; for each input stream, its `ready` is
/// held low.
pub fn protocol(top: &Module, files: &[(String, String)]) -> Vec<Planted> {
    let Some(ti) = top_file(top, files) else {
        return Vec::new();
    };
    let text = &files[ti].1;
    let mut v = Vec::new();
    for s in top.streams.iter().filter(|s| s.dir == Dir::Out) {
        if let Some(t) = replace_in_assign(text, &s.ready(), "1'b1") {
            v.push(Planted {
                name: format!("ignore-ready:{}", s.prefix),
                what: format!(
                    "the first read of `{}` (an assignment or a sub-module port) reads 1",
                    s.ready()
                ),
                file: ti,
                text: t,
            });
        }
        if let Some(t) = valid_set_in_reset(text, &s.valid()) {
            v.push(Planted {
                name: format!("valid-in-reset:{}", s.prefix),
                what: format!("the register driving `{}` resets to 1", s.valid()),
                file: ti,
                text: t,
            });
        }
    }
    for s in top.streams.iter().filter(|s| s.dir == Dir::In) {
        if let Some(t) = tie_low(text, &s.ready()) {
            v.push(Planted {
                name: format!("ready-low:{}", s.prefix),
                what: format!("`{}` is tied low once out of reset", s.ready()),
                file: ti,
                text: t,
            });
        }
    }
    v
}

/// `assign port = e;` made `assign port = 1'b0;`: the port held low.
fn tie_low(text: &str, port: &str) -> Option<String> {
    let key = format!("assign {port} = ");
    let start = text.find(&key)? + key.len();
    let end = start + text[start..].find(';')?;
    Some(format!("{}1'b0{}", &text[..start], &text[end..]))
}

/// The error fault of a decompressor `top`: its output stream `stream`'s flag field `flag`
/// tied low (a decompressor that never flags corrupt input).
pub fn flag_low(
    top: &Module,
    files: &[(String, String)],
    stream: &str,
    flag: &str,
) -> Vec<Planted> {
    let Some(port) = top
        .streams
        .iter()
        .find(|s| s.dir == Dir::Out && s.prefix == stream)
        .map(|s| s.field(flag))
    else {
        return Vec::new();
    };
    let Some(ti) = top_file(top, files) else {
        return Vec::new();
    };
    tie_low(&files[ti].1, &port)
        .map(|text| Planted {
            name: format!("flag-low:{flag}"),
            what: format!("`{port}` tied low (corrupt input never flagged)"),
            file: ti,
            text,
        })
        .into_iter()
        .collect()
}

/// The data-path faults among `files`: each listed mux found, its select inverted.
pub fn datapath(files: &[(String, String)]) -> Vec<Planted> {
    let mut v = Vec::new();
    for (prefix, wire) in MUXES {
        let hit = files.iter().enumerate().find_map(|(i, (n, t))| {
            n.starts_with(prefix)
                .then(|| invert_mux_select(t, wire).map(|e| (i, e)))
                .flatten()
        });
        if let Some((i, text)) = hit {
            v.push(Planted {
                name: format!("mux:{wire}"),
                what: format!("select of mux `{wire}` in {} inverted", files[i].0),
                file: i,
                text,
            });
        }
    }
    v
}

/// The faults of a prefix-sum network ([`crate::formal::Property::Sums`]): `carry-drop`, the
/// first carry-save cell type's carry output tied to zero (the solver's cell proof fails),
/// and `term-twice`, the network's first carry-save instance reading its second term in
/// place of its first (the wiring check fails).
pub fn sums(files: &[(String, String)], n: &crate::formal::SumNet) -> Vec<Planted> {
    let mut v = Vec::new();
    let csa = n
        .cells
        .iter()
        .find(|c| matches!(c.1, crate::formal::SumCell::CarrySave(_)));
    let file = |m: &str| files.iter().position(|f| f.0 == format!("{m}.v"));
    if let Some(i) = csa.and_then(|c| file(&c.0)) {
        let t = &files[i].1;
        if let Some(at) = t.find("  assign c_o = ") {
            let end = at + t[at..].find(';').unwrap_or(0);
            let text = format!(
                "{}  assign c_o = {{{}{{1'b0}}}}{}",
                &t[..at],
                n.lane_bits,
                &t[end..]
            );
            v.push(Planted {
                name: "carry-drop".into(),
                what: format!("the carry output of {} tied to zero", files[i].0),
                file: i,
                text,
            });
        }
    }
    // A port's connection `.p(EXPR),` on its own line: the range of EXPR.
    let term = |t: &str, p: &str| {
        let at = t.find(&format!(".{p}("))? + p.len() + 2;
        let line = &t[at..at + t[at..].find('\n')?];
        let expr = line.trim_end().trim_end_matches(',').strip_suffix(')')?;
        Some((at, at + expr.len()))
    };
    if let Some(i) = file(&n.module) {
        let t = &files[i].1;
        if let (Some(a), Some(b)) = (term(t, "t0_i"), term(t, "t1_i")) {
            let text = format!("{}{}{}", &t[..a.0], &t[b.0..b.1], &t[a.1..]);
            v.push(Planted {
                name: "term-twice".into(),
                what: format!(
                    "the first carry-save cell of {} reads its second term as its first",
                    files[i].0
                ),
                file: i,
                text,
            });
        }
    }
    v
}

/// The link-code faults (file-name prefix, text, replacement, name, what the edit does):
/// each one a decoder that no longer inverts its encoder, or an encoder whose code still
/// decodes but puts more ones on the wire than the model (only the reference check sees it).
const CODE_EDITS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "dbi_dc_enc",
        " > ",
        " >= ",
        "tie:dbi",
        "DBI also inverts a group with exactly half its bits set",
    ),
    (
        "zdr_enc_word",
        "t_is_c ? base_i : t",
        "t_is_c ? t : base_i",
        "swap:zdr",
        "ZDR sends the plain code for the input that would encode to C",
    ),
    (
        "bx_nbyte_dec",
        " ^ ",
        " | ",
        "or:dec",
        "the decoder's first XOR is an OR",
    ),
    (
        "bx_univ_dec",
        " ^ ",
        " | ",
        "or:dec",
        "the decoder's first XOR is an OR",
    ),
];

/// The link-code faults among `files` ([`CODE_EDITS`]): each edit in the first file of its
/// prefix that contains its text, at the first occurrence on an `assign` line.
pub fn code(files: &[(String, String)]) -> Vec<Planted> {
    let mut v = Vec::new();
    for (prefix, from, to, name, what) in CODE_EDITS {
        let hit = files.iter().enumerate().find_map(|(i, (n, t))| {
            if !n.starts_with(prefix) {
                return None;
            }
            let mut pos = 0;
            for line in t.split_inclusive('\n') {
                if line.trim_start().starts_with("assign ") {
                    if let Some(k) = line.find(from) {
                        let at = pos + k;
                        let text = format!("{}{to}{}", &t[..at], &t[at + from.len()..]);
                        return Some((i, text));
                    }
                }
                pos += line.len();
            }
            None
        });
        if let Some((i, text)) = hit {
            v.push(Planted {
                name: name.to_string(),
                what: format!("{what} ({})", files[i].0),
                file: i,
                text,
            });
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_find_whole_words() {
        let t = "  assign m_valid_o = v_q;\n  assign go = a & m_ready_ix & m_ready_i;\n\
                 always @(posedge clk_i) begin\n    if (!rst_ni) begin\n      v_q <= 1'd0;\n";
        let e = replace_in_assign(t, "m_ready_i", "1'b1").unwrap();
        assert!(e.contains("a & m_ready_ix & 1'b1;"), "{e}");
        let e = valid_set_in_reset(t, "m_valid_o").unwrap();
        assert!(e.contains("v_q <= 1'd1;"), "{e}");
        assert!(replace_in_assign(t, "s_ready_o", "1'b1").is_none());
        let t = "  u_eg u_eg (\n    .m_ready_i(m_ready_i),\n  );\n  assign n = m_ready_i;\n";
        let e = replace_in_assign(t, "m_ready_i", "1'b1").unwrap();
        assert!(
            e.contains(".m_ready_i(1'b1)") && e.contains("n = m_ready_i;"),
            "{e}"
        );
    }
}
