//! Post-mapping fan-out buffering of flip-flop outputs.
//!
//! ABC sees flop `Q` pins as primary inputs and never buffers them (`docs/TOOLCHAIN.md`), so
//! whether a wide select ends up on one unbuffered flop output, costing up to several ns on
//! one pin, depended on the order of the statements ABC read. Placement-driven flows repair
//! such nets after mapping (OpenROAD's `repair_design`); this pass does the part that needs no
//! placement: every net driven by a flop output with more than [`MAX_FANOUT`] cell-input
//! loads gets a balanced tree of the library's buffer ([`super::liberty::BufferCell`]), each
//! driver (flop or buffer) driving at most [`MAX_FANOUT`] pins.
//!
//! It rewrites the flat netlist Yosys writes for OpenSTA (`write_verilog -noattr -noexpr`, one
//! pin connection per line); the buffers' area is added to the reported area, and the
//! gate-level simulation model is built from the buffered netlist.
//!
//! Hierarchical synthesis ([`super::SynthJob::reuse`]) adds two kinds of roots ([`Roots`]):
//! in the parent, the output pins of child instances (ABC sees them as primary inputs, as
//! it sees flop outputs); in a child's netlist as the parent uses it, the child's input
//! ports other than the clock and reset (standing alone a unit's inputs have ideal drivers,
//! inside a parent they are driven by the parent's cells). And in the parent, a cell that
//! drives a child's input port with more than [`PORT_ROOT_FANOUT`] loads inside the child
//! drives it through a buffer of its own ([`Roots::module_inputs`]): the parent was mapped
//! seeing the port as one pin, so its driver, often a small gate, must not find the port's
//! whole fan-out behind it. A parent's own input ports keep their ideal drivers.

use super::liberty::{BufferCell, Liberty};
use std::collections::{BTreeMap, BTreeSet};

/// Nets to buffer besides flop outputs.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    /// Cell types that are modules (reused children) and their output pins.
    pub module_outputs: BTreeMap<String, BTreeSet<String>>,
    /// The module's own input ports (except `clk_i` and `rst_ni`).
    pub input_ports: bool,
    /// Cell types that are modules (reused children): the loads inside the child of each
    /// input port ([`port_loads`]).
    pub module_inputs: BTreeMap<String, BTreeMap<String, usize>>,
}

/// The cell-input loads of each input port of a netlist (clock and reset excluded).
pub fn port_loads(netlist: &str, lib: &Liberty) -> BTreeMap<String, usize> {
    let mut loads: BTreeMap<String, usize> = ports(netlist)
        .0
        .into_iter()
        .filter(|p| p != "clk_i" && p != "rst_ni")
        .map(|p| (p, 0))
        .collect();
    let lines: Vec<&str> = netlist.lines().collect();
    for c in connections(&lines).0 {
        let out = lib
            .output_pins
            .get(&c.cell)
            .is_some_and(|o| o.contains(&c.pin));
        if let Some(n) = loads.get_mut(&c.net).filter(|_| !out) {
            *n += 1;
        }
    }
    loads
}

/// Every cell pin connection of a netlist (one per line), and the line of the first
/// `endmodule`.
fn connections(lines: &[&str]) -> (Vec<Conn>, Option<usize>) {
    let mut conns: Vec<Conn> = Vec::new();
    let mut cell: Option<String> = None;
    let mut endmodule = None;
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("  ") && !l.starts_with("   ") && l.trim_end().ends_with(" (") {
            // `  CELL inst (`: an instance header (declarations end in `;`).
            cell = l.split_whitespace().next().map(str::to_string);
        } else if l.trim() == ");" {
            cell = None;
        } else if l.trim() == "endmodule" && endmodule.is_none() {
            endmodule = Some(i);
        } else if let (Some(c), Some((pin, net))) = (&cell, parse_conn(l)) {
            conns.push(Conn {
                line: i,
                pin: pin.to_string(),
                net: net.to_string(),
                cell: c.clone(),
            });
        }
    }
    (conns, endmodule)
}

/// The scalar ports of a netlist written with split ports: `(inputs, outputs)`.
pub fn ports(netlist: &str) -> (Vec<String>, Vec<String>) {
    let mut ins = Vec::new();
    let mut outs = Vec::new();
    for l in netlist.lines() {
        let t = l.trim();
        let decl = |kw: &str| {
            t.strip_prefix(kw)
                .and_then(|r| r.strip_suffix(';'))
                .map(|r| r.trim().to_string())
                .filter(|n| !n.is_empty() && !n.contains(' '))
        };
        if let Some(n) = decl("input ") {
            ins.push(n);
        } else if let Some(n) = decl("output ") {
            outs.push(n);
        }
    }
    (ins, outs)
}

/// Most cell-input pins one flop output or buffer drives after the pass.
pub const MAX_FANOUT: usize = 16;

/// A child input port with more loads than this is driven through one root buffer.
pub const PORT_ROOT_FANOUT: usize = 4;

/// What the pass inserted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Buffered {
    /// The netlist with buffer trees.
    pub netlist: String,
    /// Buffers inserted.
    pub buffers: u64,
    /// Flop-output nets that got a tree.
    pub nets: u64,
    /// Largest flop-output fan-out before the pass.
    pub max_flop_fanout: usize,
}

/// One pin connection line of a cell instance.
struct Conn {
    line: usize,
    pin: String,
    net: String,
    cell: String,
}

/// Parses `    .PIN(net),` into (pin, net).
fn parse_conn(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start().strip_prefix('.')?;
    let open = t.find('(')?;
    let close = t.rfind(')')?;
    (close > open).then(|| (&t[..open], t[open + 1..close].trim()))
}

/// Adds buffer trees to the flop outputs of `netlist` (see the module doc). A library without
/// a usable buffer cell, or a netlist without high-fan-out flop outputs, is returned unchanged.
pub fn buffer_flop_outputs(netlist: &str, lib: &Liberty) -> Buffered {
    buffer_nets(netlist, lib, &Roots::default())
}

/// [`buffer_flop_outputs`] with more roots: the nets of `roots` get the same trees.
/// `max_flop_fanout` still counts flop outputs only.
pub fn buffer_nets(netlist: &str, lib: &Liberty, roots: &Roots) -> Buffered {
    let lines: Vec<&str> = netlist.lines().collect();
    let (conns, endmodule) = connections(&lines);
    let is_output = |c: &Conn| {
        lib.output_pins
            .get(&c.cell)
            .or_else(|| roots.module_outputs.get(&c.cell))
            .is_some_and(|outs| outs.contains(&c.pin))
    };
    // Nets driven by a flop output (or another root), and every cell-input load of each net.
    let mut flop_nets: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for c in &conns {
        if lib.flop_cells.contains(&c.cell) && is_output(c) && !c.net.is_empty() {
            flop_nets.entry(c.net.as_str()).or_default();
        }
    }
    let flop_only: BTreeSet<&str> = flop_nets.keys().copied().collect();
    for c in &conns {
        if roots.module_outputs.contains_key(&c.cell) && is_output(c) && !c.net.is_empty() {
            flop_nets.entry(c.net.as_str()).or_default();
        }
    }
    let port_names = if roots.input_ports {
        ports(netlist).0
    } else {
        Vec::new()
    };
    for p in &port_names {
        if p != "clk_i" && p != "rst_ni" {
            flop_nets.entry(p.as_str()).or_default();
        }
    }
    for (k, c) in conns.iter().enumerate() {
        if !is_output(c) {
            if let Some(loads) = flop_nets.get_mut(c.net.as_str()) {
                loads.push(k);
            }
        }
    }
    let max_flop_fanout = flop_nets
        .iter()
        .filter(|(n, _)| flop_only.contains(*n))
        .map(|(_, l)| l.len())
        .max()
        .unwrap_or(0);
    let unchanged = Buffered {
        netlist: netlist.to_string(),
        max_flop_fanout,
        ..Buffered::default()
    };
    let (Some(buf), Some(end)) = (&lib.buffer, endmodule) else {
        return unchanged;
    };
    // Buffer nets of the port pass are named apart from those of the flop pass, which
    // the netlist may already hold.
    let tag = if roots.input_ports { "pi" } else { "fo" };
    let mut new_net: BTreeMap<usize, String> = BTreeMap::new();
    let mut decls = String::new();
    let mut cells = String::new();
    let mut n_buf = 0u64;
    let mut n_nets = 0u64;
    for (net, loads) in &flop_nets {
        if loads.len() <= MAX_FANOUT {
            continue;
        }
        n_nets += 1;
        // Leaves: groups of at most MAX_FANOUT loads, each behind one buffer; then group the
        // buffers the same way until the root level has at most MAX_FANOUT of them. Each
        // buffer is (output net, input net: its parent's output, or `net` at the root).
        let mut bufs: Vec<(String, Option<String>)> = Vec::new();
        for group in loads.chunks(MAX_FANOUT) {
            let out = format!("_hwzip_{}{}_", tag, n_buf + bufs.len() as u64);
            for &k in group {
                new_net.insert(conns[k].line, out.clone());
            }
            bufs.push((out, None));
        }
        let mut level = 0..bufs.len();
        while level.len() > MAX_FANOUT {
            let next = bufs.len();
            for group in level.clone().collect::<Vec<_>>().chunks(MAX_FANOUT) {
                let out = format!("_hwzip_{}{}_", tag, n_buf + bufs.len() as u64);
                for &k in group {
                    bufs[k].1 = Some(out.clone());
                }
                bufs.push((out, None));
            }
            level = next..bufs.len();
        }
        n_buf += bufs.len() as u64;
        for (out, from) in &bufs {
            decls.push_str(&format!("  wire {};\n", out));
            cells.push_str(&instance(buf, out, from.as_deref().unwrap_or(net)));
        }
    }
    // A child's input port with a large fan-out inside gets a buffer of its own, unless a
    // tree buffer drives it already or the parent's own input port does (ideal driver).
    if !roots.module_inputs.is_empty() {
        let own_ins: BTreeSet<String> = ports(netlist).0.into_iter().collect();
        for c in &conns {
            let heavy = roots
                .module_inputs
                .get(&c.cell)
                .and_then(|m| m.get(&c.pin))
                .is_some_and(|&n| n > PORT_ROOT_FANOUT);
            let wire = c
                .net
                .starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_' || ch == '\\');
            if !heavy || !wire || own_ins.contains(&c.net) || new_net.contains_key(&c.line) {
                continue;
            }
            let out = format!("_hwzip_ci{}_", n_buf);
            n_buf += 1;
            n_nets += 1;
            new_net.insert(c.line, out.clone());
            decls.push_str(&format!("  wire {};\n", out));
            cells.push_str(&instance(buf, &out, &c.net));
        }
    }
    if n_buf == 0 {
        return unchanged;
    }
    let mut text = String::with_capacity(netlist.len() + cells.len() + decls.len());
    for (i, l) in lines.iter().enumerate() {
        if i == end {
            text.push_str(&decls);
            text.push_str(&cells);
        }
        match new_net.get(&i) {
            Some(n) => {
                let (pin, _) = parse_conn(l).unwrap_or_default();
                let indent = &l[..l.len() - l.trim_start().len()];
                let comma = if l.trim_end().ends_with(',') { "," } else { "" };
                text.push_str(&format!("{}.{}({}){}", indent, pin, n, comma));
            }
            None => text.push_str(l),
        }
        text.push('\n');
    }
    Buffered {
        netlist: text,
        buffers: n_buf,
        nets: n_nets,
        max_flop_fanout,
    }
}

fn instance(buf: &BufferCell, out: &str, from: &str) -> String {
    // An escaped identifier (`\a.b[2]`) ends at whitespace.
    let sp = if from.starts_with('\\') { " " } else { "" };
    format!(
        "  {} {}_i (\n    .{}({}{}),\n    .{}({})\n  );\n",
        buf.name, out, buf.input, from, sp, buf.output, out
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn lib() -> Liberty {
        let mut outs = BTreeMap::new();
        outs.insert("DFF".to_string(), BTreeSet::from(["Q".to_string()]));
        outs.insert("INV".to_string(), BTreeSet::from(["Y".to_string()]));
        outs.insert("BUF".to_string(), BTreeSet::from(["Y".to_string()]));
        Liberty {
            name: "t".into(),
            path: Default::default(),
            source: Default::default(),
            nand2_cell: "NAND2".into(),
            nand2_area_um2: 1.0,
            time_unit_ns: 1.0,
            cap_unit_pf: 1.0,
            cell_count: 3,
            flop_cells: BTreeSet::from(["DFF".to_string()]),
            latch_cells: BTreeSet::new(),
            output_pins: outs,
            buffer: Some(BufferCell {
                name: "BUF".into(),
                input: "A".into(),
                output: "Y".into(),
                area_um2: 2.0,
            }),
            excluded_cells: Vec::new(),
        }
    }

    fn netlist(loads: usize) -> String {
        let mut t = String::from("module m(clk, y);\n  input clk;\n  wire q;\n");
        t.push_str("  DFF _r_ (\n    .CLK(clk),\n    .D(q),\n    .Q(q)\n  );\n");
        for i in 0..loads {
            t.push_str(&format!(
                "  INV _i{}_ (\n    .A(q),\n    .Y(y{})\n  );\n",
                i, i
            ));
        }
        t.push_str("endmodule\n");
        t
    }

    /// Every load pin, by net: (net -> count of input connections).
    fn fanouts(text: &str, l: &Liberty) -> BTreeMap<String, usize> {
        let mut cell = String::new();
        let mut f = BTreeMap::new();
        for line in text.lines() {
            if line.starts_with("  ") && !line.starts_with("   ") && line.ends_with(" (") {
                cell = line.split_whitespace().next().unwrap_or("").to_string();
            } else if let Some((pin, net)) = parse_conn(line) {
                if !l.output_pins[&cell].contains(pin) {
                    *f.entry(net.to_string()).or_insert(0) += 1;
                }
            }
        }
        f
    }

    #[test]
    fn a_child_input_with_many_loads_gets_its_own_buffer_unless_a_port_drives_it() {
        let l = lib();
        // The child's `x` has 10 loads inside, `y` 2.
        let mut child = String::from("module c(x, y, z);\n  input x;\n  input y;\n  output z;\n");
        for i in 0..10 {
            child.push_str(&format!("  INV _x{i}_ (\n    .A(x),\n    .Y(p{i})\n  );\n"));
        }
        for i in 0..2 {
            child.push_str(&format!("  INV _y{i}_ (\n    .A(y),\n    .Y(q{i})\n  );\n"));
        }
        child.push_str("endmodule\n");
        let loads = port_loads(&child, &l);
        assert_eq!((loads["x"], loads["y"]), (10, 2));
        // Parent: `u0.x` from an inverter (buffered), `u1.x` from the input port `a` (not),
        // `u0.y` from the inverter (2 loads: not).
        let mut t = String::from("module m(a, o);\n  input a;\n  output o;\n");
        t.push_str("  INV _n_ (\n    .A(a),\n    .Y(n)\n  );\n");
        t.push_str("  CHILD u0 (\n    .x(n),\n    .y(n),\n    .z(o)\n  );\n");
        t.push_str("  CHILD u1 (\n    .x(a),\n    .y(a),\n    .z(o2)\n  );\n");
        t.push_str("endmodule\n");
        let roots = Roots {
            module_outputs: BTreeMap::from([("CHILD".into(), BTreeSet::from(["z".into()]))]),
            module_inputs: BTreeMap::from([("CHILD".into(), loads)]),
            ..Roots::default()
        };
        let b = buffer_nets(&t, &l, &roots);
        assert_eq!(b.buffers, 1);
        assert!(b.netlist.contains(".x(_hwzip_ci0_)"), "{}", b.netlist);
        assert!(b.netlist.contains(".y(n)") && b.netlist.contains(".x(a)"));
    }

    #[test]
    fn input_ports_and_child_outputs_are_roots_when_asked() {
        let l = lib();
        // A port `a` and a child instance's output `y` each drive 40 inverters.
        let mut t =
            String::from("module m(clk_i, a, z);\n  input clk_i;\n  input a;\n  output z;\n");
        t.push_str("  CHILD u_c (\n    .x(a),\n    .y(w)\n  );\n");
        for i in 0..40 {
            t.push_str(&format!("  INV _a{i}_ (\n    .A(a),\n    .Y(p{i})\n  );\n"));
            t.push_str(&format!("  INV _w{i}_ (\n    .A(w),\n    .Y(q{i})\n  );\n"));
        }
        t.push_str("endmodule\n");
        assert_eq!(buffer_flop_outputs(&t, &l).buffers, 0);
        assert_eq!(
            ports(&t),
            (vec!["clk_i".into(), "a".into()], vec!["z".into()])
        );
        let roots = Roots {
            module_outputs: BTreeMap::from([(
                "CHILD".to_string(),
                BTreeSet::from(["y".to_string()]),
            )]),
            input_ports: true,
            ..Roots::default()
        };
        let b = buffer_nets(&t, &l, &roots);
        // 41 loads on `a` (40 inverters and the child's x) and 40 on `w`: 3 buffers each.
        assert_eq!((b.nets, b.buffers, b.max_flop_fanout), (2, 6, 0));
    }

    #[test]
    fn small_fanout_is_left_alone() {
        let t = netlist(MAX_FANOUT - 1); // + the flop's own D pin = MAX_FANOUT
        let b = buffer_flop_outputs(&t, &lib());
        assert_eq!(b.buffers, 0);
        assert_eq!(b.netlist, t);
        assert_eq!(b.max_flop_fanout, MAX_FANOUT);
    }

    #[test]
    fn every_driver_is_bounded_and_every_load_is_kept() {
        let l = lib();
        for loads in [MAX_FANOUT, 100, MAX_FANOUT * MAX_FANOUT + 5, 1000] {
            let t = netlist(loads);
            let b = buffer_flop_outputs(&t, &l);
            let f = fanouts(&b.netlist, &l);
            assert!(f.values().all(|&n| n <= MAX_FANOUT), "{loads}: {f:?}");
            // Every INV input, the DFF's D and CLK are still connected; each buffer input
            // counts once.
            let total: usize = f.values().sum();
            assert_eq!(total as u64, loads as u64 + 2 + b.buffers, "{loads}");
            assert!(b.buffers > 0 && b.nets == 1);
            // A tree: every buffer output net is driven once and used.
            for k in 0..b.buffers {
                assert!(
                    f.contains_key(&format!("_hwzip_fo{}_", k)),
                    "{loads}: fo{k}"
                );
            }
        }
    }
}
