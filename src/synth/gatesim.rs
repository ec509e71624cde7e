//! Gate-level simulation model of a synthesized design: the mapped netlist (`netlist.v`, the
//! one OpenSTA times, fan-out buffers included) with its split ports bundled back into the
//! design's multi-bit ports, plus behavioural models of the library's cells, imported by
//! Yosys `read_liberty` from their `function`/`ff` groups, flattened into one Verilog file that
//! Verilator simulates through the same scoreboard as the RTL — a cheap check that synthesis
//! (mapping, `setundef`, excluded cells, buffers) preserved the function. A hierarchical
//! result adds its children's netlists.

use super::run::{run_with_budget, Budget};
use super::{Liberty, SynthError, SynthResult};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// A port of the design as the simulation harness drives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortBus {
    /// Port name.
    pub name: String,
    /// Input (else output).
    pub input: bool,
    /// Width in bits.
    pub width: u32,
}

/// The name `splitnets -ports -format __` gives bit `k` of a `width`-bit port.
fn bit_name(p: &PortBus, k: u32) -> String {
    if p.width == 1 {
        p.name.clone()
    } else {
        format!("{}_{}_", p.name, k)
    }
}

/// Rewrites module `top` of a split-port netlist so that its ports are `ports` again
/// (multi-bit, in that order): the module header lists them, each bit's `input`/`output`
/// line becomes a wire assigned from or to its port bit. The body is unchanged.
pub fn bundle_ports(netlist: &str, top: &str, ports: &[PortBus]) -> Result<String, SynthError> {
    let bad = |what: &str| SynthError::Parse {
        what: what.to_string(),
        found: format!("module {}", top),
        log: PathBuf::from("netlist.v"),
    };
    let head = format!("module {}(", top);
    let start = netlist
        .find(&head)
        .ok_or_else(|| bad("the netlist's top module header"))?;
    let end = start
        + netlist[start..]
            .find(");")
            .ok_or_else(|| bad("the end of the module header"))?
        + 2;
    let mut bits: BTreeSet<String> = BTreeSet::new();
    for p in ports.iter().filter(|p| p.width > 1) {
        bits.extend((0..p.width).map(|k| bit_name(p, k)));
    }
    let declared_wires: BTreeSet<&str> = netlist
        .lines()
        .filter_map(|l| l.trim().strip_prefix("wire "))
        .filter_map(|r| r.strip_suffix(';'))
        .map(str::trim)
        .collect();
    let mut out = String::with_capacity(netlist.len() + 64 * bits.len());
    out.push_str(&netlist[..start]);
    let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
    let _ = writeln!(out, "module {}({});", top, names.join(", "));
    for p in ports.iter().filter(|p| p.width > 1) {
        let dir = if p.input { "input" } else { "output" };
        let _ = writeln!(out, "  {} [{}:0] {};", dir, p.width - 1, p.name);
        for k in 0..p.width {
            let b = bit_name(p, k);
            if !declared_wires.contains(b.as_str()) {
                let _ = writeln!(out, "  wire {};", b);
            }
            if p.input {
                let _ = writeln!(out, "  assign {} = {}[{}];", b, p.name, k);
            } else {
                let _ = writeln!(out, "  assign {}[{}] = {};", p.name, k, b);
            }
        }
    }
    for line in netlist[end..].lines() {
        let t = line.trim();
        let split_port = ["input ", "output "].iter().any(|kw| {
            t.strip_prefix(kw)
                .and_then(|r| r.strip_suffix(';'))
                .is_some_and(|n| bits.contains(n.trim()))
        });
        if !split_port {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out)
}

/// Writes `gatesim.v` next to the synthesis result and returns its path. `ports` are the
/// design's ports as the harness drives them (clock and reset included).
pub fn gate_level_model(
    r: &SynthResult,
    lib: &Liberty,
    budget: Duration,
    ports: &[PortBus],
) -> Result<PathBuf, SynthError> {
    let dir = r
        .netlist
        .parent()
        .map(|p| p.to_path_buf())
        .ok_or_else(|| SynthError::InvalidJob("netlist has no directory".into()))?;
    for n in r.child_netlists.iter().chain(std::iter::once(&r.netlist)) {
        if !n.is_file() {
            return Err(SynthError::InvalidJob(format!(
                "{} is missing: re-run the synthesis",
                n.display()
            )));
        }
    }
    let text = std::fs::read_to_string(&r.netlist).map_err(|e| SynthError::io(&r.netlist, e))?;
    let top_file = dir.join("gatesim_top.v");
    std::fs::write(&top_file, bundle_ports(&text, &r.top, ports)?)
        .map_err(|e| SynthError::io(&top_file, e))?;
    let out = dir.join("gatesim.v");
    // A hierarchical result instantiates its children's netlists.
    let mut read = String::new();
    for n in &r.child_netlists {
        let _ = write!(read, "read_verilog \"{}\"; ", n.display());
    }
    let script = format!(
        "read_liberty -ignore_miss_func \"{}\"; {}read_verilog gatesim_top.v; hierarchy -top {}; \
         flatten; opt_clean; write_verilog -noattr gatesim.v",
        lib.path.display(),
        read,
        r.top
    );
    let log = dir.join("gatesim.log");
    run_with_budget(
        "yosys",
        &["-q", "-p", &script],
        &dir,
        &log,
        &mut Budget::new(budget),
    )?;
    if !out.is_file() {
        return Err(SynthError::InvalidJob(format!(
            "yosys wrote no {}; see {}",
            out.display(),
            log.display()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_ports_are_bundled_again() {
        let nl = "/* x */\n\nmodule t(clk_i, a_i_0_, a_i_1_\n, y_o_0_, y_o_1_, v_o);\n  \
                  wire _0_;\n  input a_i_0_;\n  wire a_i_0_;\n  input a_i_1_;\n  wire a_i_1_;\n  \
                  input clk_i;\n  wire clk_i;\n  output v_o;\n  wire v_o;\n  output y_o_0_;\n  \
                  output y_o_1_;\n  wire y_o_1_;\n  INV _1_ (\n    .A(a_i_0_),\n    .Y(y_o_0_)\n  );\n\
                  endmodule\n";
        let ports = [
            PortBus {
                name: "clk_i".into(),
                input: true,
                width: 1,
            },
            PortBus {
                name: "a_i".into(),
                input: true,
                width: 2,
            },
            PortBus {
                name: "y_o".into(),
                input: false,
                width: 2,
            },
            PortBus {
                name: "v_o".into(),
                input: false,
                width: 1,
            },
        ];
        let b = bundle_ports(nl, "t", &ports).unwrap();
        assert!(
            b.starts_with("/* x */\n\nmodule t(clk_i, a_i, y_o, v_o);\n"),
            "{}",
            b
        );
        for want in [
            "  input [1:0] a_i;",
            "  assign a_i_1_ = a_i[1];",
            "  output [1:0] y_o;",
            "  wire y_o_0_;",
            "  assign y_o[0] = y_o_0_;",
            "  input clk_i;",
            "  output v_o;",
            "    .Y(y_o_0_)",
        ] {
            assert!(b.lines().any(|l| l == want), "missing `{}` in\n{}", want, b);
        }
        assert!(
            !b.contains("input a_i_0_;") && !b.contains("output y_o_1_;"),
            "{}",
            b
        );
        // One declaration per wire.
        assert_eq!(b.matches("wire y_o_1_;").count(), 1);
        assert!(bundle_ports(nl, "other", &ports).is_err());
    }
}
