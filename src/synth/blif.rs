//! The mapped netlist as structural Verilog, from the BLIF Yosys writes.
//!
//! Yosys 0.23's `write_verilog` takes about a minute on a 300 kGE netlist (most of it in its
//! name tables); `write_blif` writes the same netlist in about a second. The flow therefore
//! has Yosys write `netlist.blif` (`write_blif -impltf -conn -cname`, after `rename
//! -enumerate` gave every private net and cell a short `_N_` name) and turns it into the
//! `netlist.v` OpenSTA reads, in the layout `write_verilog -noattr -noexpr -simple-lhs` has:
//! `input`/`output` lines each followed by a `wire` line, one `.PIN(net)` per line in each
//! cell instance, `assign dst = src;` for connected nets. Names that are not plain Verilog
//! identifiers (`u_child.q_3_` in a flattened design) are escaped (`\u_child.q_3_ `).

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// One cell instance: type, name and `(pin, net)` connections.
struct Cell {
    kind: String,
    name: Option<String>,
    pins: Vec<(String, String)>,
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == '$')
}

/// A net or instance name as Verilog writes it.
fn name(s: &str) -> String {
    if is_ident(s) {
        s.to_string()
    } else {
        format!("\\{} ", s)
    }
}

/// A net as a connection: constants as literals, `$undef` (an unconnected output) as none.
fn net(s: &str) -> String {
    match s {
        "$true" => "1'b1".into(),
        "$false" => "1'b0".into(),
        "$undef" => String::new(),
        _ => name(s),
    }
}

/// The logical lines of a BLIF text (comments removed, `\` continuations joined).
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for raw in text.lines() {
        let l = raw.split('#').next().unwrap_or("");
        if let Some(body) = l.trim_end().strip_suffix('\\') {
            cur.push_str(body);
            cur.push(' ');
            continue;
        }
        cur.push_str(l);
        if !cur.trim().is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.clear();
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// Structural Verilog of model `top` of a BLIF netlist written by Yosys' `write_blif -impltf
/// -conn -cname` (see the module doc). Any other construct (`.names` logic, latches) is an
/// error naming it.
pub fn to_verilog(blif: &str, top: &str) -> Result<String, String> {
    let lines = logical_lines(blif);
    let start = lines
        .iter()
        .position(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some(".model") && w.next() == Some(top)
        })
        .ok_or_else(|| format!("no `.model {}` in the BLIF netlist", top))?;
    let mut inputs: Vec<String> = Vec::new();
    let mut outputs: Vec<String> = Vec::new();
    let mut cells: Vec<Cell> = Vec::new();
    let mut conns: Vec<(String, String)> = Vec::new();
    for l in &lines[start + 1..] {
        let mut w = l.split_whitespace();
        let Some(kw) = w.next() else { continue };
        match kw {
            ".end" => break,
            ".inputs" => inputs.extend(w.map(str::to_string)),
            ".outputs" => outputs.extend(w.map(str::to_string)),
            ".subckt" => {
                let kind = w
                    .next()
                    .ok_or_else(|| format!("`{}`: no cell type", l.trim()))?
                    .to_string();
                let mut pins = Vec::new();
                for p in w {
                    let (pin, n) = p
                        .split_once('=')
                        .ok_or_else(|| format!("`{}`: pin without `=`", p))?;
                    pins.push((pin.to_string(), n.to_string()));
                }
                cells.push(Cell {
                    kind,
                    name: None,
                    pins,
                });
            }
            ".cname" => {
                let c = cells
                    .last_mut()
                    .ok_or_else(|| "`.cname` before any `.subckt`".to_string())?;
                c.name = w.next().map(str::to_string);
            }
            ".conn" => {
                let (Some(src), Some(dst)) = (w.next(), w.next()) else {
                    return Err(format!("`{}`: `.conn` needs two nets", l.trim()));
                };
                conns.push((src.to_string(), dst.to_string()));
            }
            other => {
                return Err(format!(
                    "unsupported BLIF construct `{}` in the mapped netlist",
                    other
                ))
            }
        }
    }
    let ports: BTreeSet<&str> = inputs.iter().chain(&outputs).map(String::as_str).collect();
    let consts = ["$true", "$false", "$undef"];
    let mut wires: BTreeSet<&str> = BTreeSet::new();
    for c in &cells {
        wires.extend(c.pins.iter().map(|(_, n)| n.as_str()));
    }
    for (a, b) in &conns {
        wires.insert(a);
        wires.insert(b);
    }
    wires.retain(|w| !ports.contains(w) && !consts.contains(w));

    let mut v = String::with_capacity(blif.len() * 2);
    v.push_str("/* Generated by hwzip from the BLIF netlist of Yosys */\n\n");
    let header: Vec<String> = inputs.iter().chain(&outputs).map(|p| name(p)).collect();
    let _ = writeln!(v, "module {}({});", name(top), header.join(", "));
    for w in &wires {
        let _ = writeln!(v, "  wire {};", name(w));
    }
    for (dir, list) in [("input", &inputs), ("output", &outputs)] {
        for p in list {
            let _ = writeln!(v, "  {} {};\n  wire {};", dir, name(p), name(p));
        }
    }
    for (k, c) in cells.iter().enumerate() {
        let inst = c
            .name
            .clone()
            .unwrap_or_else(|| format!("_hwzip_cell{}_", k));
        let _ = writeln!(v, "  {} {} (", c.kind, name(&inst));
        for (i, (pin, n)) in c.pins.iter().enumerate() {
            let sep = if i + 1 == c.pins.len() { "" } else { "," };
            let _ = writeln!(v, "    .{}({}){}", pin, net(n), sep);
        }
        v.push_str("  );\n");
    }
    for (src, dst) in &conns {
        let _ = writeln!(v, "  assign {} = {};", name(dst), net(src));
    }
    v.push_str("endmodule\n");
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLIF: &str = "# Generated by Yosys\n\n.model top\n.inputs clk_i a_0_ a_1_\n\
        .outputs y_0_ v\n.subckt DFF CLK=clk_i D=_3_ Q=q_0_\n.cname _4_\n\
        .subckt NAND2 A=a_0_ B=$true Y=_3_\n.cname _5_\n.subckt INV A=u_c.x \\\n Y=y_0_\n\
        .conn a_1_ v\n.end\n.model other\n.inputs z\n.end\n";

    #[test]
    fn a_netlist_in_write_verilogs_layout() {
        let v = to_verilog(BLIF, "top").unwrap();
        assert!(
            v.contains("module top(clk_i, a_0_, a_1_, y_0_, v);\n"),
            "{}",
            v
        );
        for want in [
            "  input a_0_;",
            "  wire a_0_;",
            "  output v;",
            "  wire q_0_;",
            "  wire \\u_c.x ;",
            "  DFF _4_ (",
            "    .CLK(clk_i),",
            "    .Q(q_0_)",
            "    .B(1'b1),",
            "  INV _hwzip_cell2_ (",
            "    .A(\\u_c.x ),",
            "  assign v = a_1_;",
        ] {
            assert!(v.lines().any(|l| l == want), "missing `{}` in\n{}", want, v);
        }
        // Ports are declared once as wires, not again among the internal nets.
        assert_eq!(v.matches("wire a_0_;").count(), 1);
        assert!(to_verilog(BLIF, "nope").is_err());
        let bad = BLIF.replace(".conn a_1_ v", ".names a_1_ v\n1 1");
        assert!(to_verilog(&bad, "top").unwrap_err().contains(".names"));
    }
}
