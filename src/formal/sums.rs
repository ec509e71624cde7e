//! The wiring half of [`Property::Sums`](super::Property::Sums): a prefix-sum network read
//! from the unit's Verilog (Yosys's JSON netlist after `proc`, its cells kept as instances)
//! and evaluated symbolically.
//!
//! Every net of the network is a linear form, modulo 2^w, over the input lanes `x[j]` and one
//! variable `r[k]` per carry-save cell `k`: an input lane is `x[j]`; a carry-save cell with
//! terms `t` gives `c_o = r[k]` and `s_o = sum(t) - r[k]`; an adder gives `a + b`. The
//! solver proves that every cell type meets this (`s_o + c_o` is the sum of its terms, an
//! adder adds: [`super::wrapper::sum_cells`]), so with `r[k]` the cell's actual carry output
//! each form is the net's value exactly. Output lane i is then the sum of input lanes
//! 0..=i for every input when its form is exactly `x[0] + ... + x[i]`: no other lane, and no
//! `r[k]` (a carry used without its sum, or twice, leaves one).

use super::{SumCell, SumNet};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// A variable of a form: an input lane or a carry-save cell's carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Var {
    Lane(usize),
    Carry(usize),
}

/// A linear form: coefficients modulo 2^w (zero ones left out).
type Form = BTreeMap<Var, u64>;

/// Where a bit of the module comes from.
#[derive(Clone, Debug)]
enum Source {
    /// Bit `bit` of input lane `lane`.
    Lane { lane: usize, bit: usize },
    /// Bit `bit` of output port `port` of cell `cell`.
    Cell {
        cell: String,
        port: String,
        bit: usize,
    },
}

/// The network of one module of a Yosys JSON netlist.
struct Net<'a> {
    spec: &'a SumNet,
    cells: &'a serde_json::Map<String, Value>,
    src: HashMap<u64, Source>,
    mask: u64,
    /// Forms of evaluated cell outputs, and the cells being evaluated (a loop).
    memo: HashMap<(String, String), Form>,
    busy: Vec<String>,
    /// Carry-save cells numbered as first met.
    carries: HashMap<String, usize>,
}

/// Checks the network `n` in Yosys's JSON netlist `json` (`write_json` after `proc`, without
/// flattening). `Ok(None)`: every output lane is the prefix sum of the input lanes, given
/// the cells' arithmetic; `Ok(Some(why))`: the wiring breaks it; `Err`: the netlist lacks
/// the module or its nets.
pub fn check(json: &str, n: &SumNet) -> Result<Option<String>, String> {
    let v: Value = serde_json::from_str(json).map_err(|e| format!("Yosys JSON netlist: {e}"))?;
    let m = v
        .get("modules")
        .and_then(|m| m.get(&n.module))
        .ok_or_else(|| format!("module `{}` is not in the netlist", n.module))?;
    let nets = m
        .get("netnames")
        .and_then(Value::as_object)
        .ok_or("netlist without net names")?;
    let bits_of = |name: &str| -> Result<Vec<Value>, String> {
        nets.get(name)
            .and_then(|x| x.get("bits"))
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| format!("net `{name}` is not in module `{}`", n.module))
    };
    let w = n.lane_bits as usize;
    let (inp, out) = (bits_of(&n.input)?, bits_of(&n.output)?);
    for (name, b) in [(&n.input, &inp), (&n.output, &out)] {
        if b.len() != w * n.lanes {
            return Err(format!(
                "net `{name}` has {} bits, not {} lanes of {w}",
                b.len(),
                n.lanes
            ));
        }
    }
    let empty = serde_json::Map::new();
    let cells = m.get("cells").and_then(Value::as_object).unwrap_or(&empty);
    let mut src = HashMap::new();
    for (name, c) in cells {
        let dirs = c.get("port_directions").and_then(Value::as_object);
        let conns = c.get("connections").and_then(Value::as_object);
        let (Some(dirs), Some(conns)) = (dirs, conns) else {
            continue;
        };
        for (port, bits) in conns {
            if dirs.get(port).and_then(Value::as_str) != Some("output") {
                continue;
            }
            for (i, b) in bits.as_array().into_iter().flatten().enumerate() {
                if let Some(id) = b.as_u64() {
                    let s = Source::Cell {
                        cell: name.clone(),
                        port: port.clone(),
                        bit: i,
                    };
                    src.insert(id, s);
                }
            }
        }
    }
    // The input lanes win over the register that drives them: the check starts there.
    for (i, b) in inp.iter().enumerate() {
        if let Some(id) = b.as_u64() {
            src.insert(
                id,
                Source::Lane {
                    lane: i / w,
                    bit: i % w,
                },
            );
        }
    }
    let mut net = Net {
        spec: n,
        cells,
        src,
        mask: if w >= 64 { u64::MAX } else { (1u64 << w) - 1 },
        memo: HashMap::new(),
        busy: Vec::new(),
        carries: HashMap::new(),
    };
    for i in 0..n.lanes {
        let f = match net.form(&out[i * w..(i + 1) * w]) {
            Ok(f) => f,
            Err(why) => return Ok(Some(format!("output lane {i}: {why}"))),
        };
        let want: Form = (0..=i).map(|j| (Var::Lane(j), 1)).collect();
        if f != want {
            return Ok(Some(format!(
                "output lane {i} is {}, not the sum of input lanes 0..={i}",
                net.show(&f)
            )));
        }
    }
    Ok(None)
}

/// `files` with the output net of network `n` driven by its specification, the running sums
/// of its input lanes, in place of the network (the `assign` of `n.output` in the file of
/// `n.module` replaced). Sound for any proof once property `sums` holds for `n` on the
/// same Verilog: the network and its specification then agree on every input.
pub fn abstracted(files: &[(String, String)], n: &SumNet) -> Result<Vec<(String, String)>, String> {
    let name = format!("{}.v", n.module);
    let mut out = files.to_vec();
    let f = out
        .iter_mut()
        .find(|f| f.0 == name)
        .ok_or_else(|| format!("{name} is not among the unit's files"))?;
    let head = format!("  assign {} = ", n.output);
    let at =
        f.1.find(&head)
            .ok_or_else(|| format!("{name} does not assign `{}`", n.output))?;
    let end = at + f.1[at..].find(';').ok_or("an assign without `;`")? + 1;
    let (w, o, i) = (n.lane_bits, &n.output, &n.input);
    let spec = format!(
        "  // Proof copy: `{o}` as specified, the running sums of the lanes of `{i}` (the\n\
         \x20 // carry-save network it replaces is proved equal by `hwzip prove`, property sums).\n\
         \x20 assign {o}[{}:0] = {i}[{}:0];\n\
         \x20 genvar f_sum;\n\
         \x20 generate\n\
         \x20   for (f_sum = 1; f_sum < {}; f_sum = f_sum + 1) begin : g_f_sum\n\
         \x20     assign {o}[{w}*f_sum +: {w}] = {o}[{w}*(f_sum - 1) +: {w}] + {i}[{w}*f_sum +: {w}];\n\
         \x20   end\n\
         \x20 endgenerate",
        w - 1,
        w - 1,
        n.lanes
    );
    f.1 = format!("{}{spec}{}", &f.1[..at], &f.1[end..]);
    Ok(out)
}

impl Net<'_> {
    /// The form of a lane-wide net given by its bits.
    fn form(&mut self, bits: &[Value]) -> Result<Form, String> {
        let ids: Option<Vec<u64>> = bits.iter().map(Value::as_u64).collect();
        let Some(ids) = ids else {
            return Err("a constant bit".into());
        };
        let srcs: Vec<Option<&Source>> = ids.iter().map(|i| self.src.get(i)).collect();
        match srcs.first().copied().flatten() {
            Some(Source::Lane { lane, .. }) => {
                let lane = *lane;
                let whole = srcs.iter().enumerate().all(|(i, s)| {
                    matches!(s, Some(Source::Lane { lane: l, bit }) if *l == lane && *bit == i)
                });
                if !whole {
                    return Err(format!("bits not of input lane {lane} in order"));
                }
                Ok(Form::from([(Var::Lane(lane), 1)]))
            }
            Some(Source::Cell { cell, port, .. }) => {
                let (cell, port) = (cell.clone(), port.clone());
                let whole = srcs.iter().enumerate().all(|(i, s)| {
                    matches!(s, Some(Source::Cell { cell: c, port: p, bit })
                        if *c == cell && *p == port && *bit == i)
                });
                if !whole {
                    return Err(format!("bits not of `{cell}`.{port} in order"));
                }
                self.cell_form(&cell, &port)
            }
            None => Err("a bit driven by neither an input lane nor a cell".into()),
        }
    }

    /// The form of output `port` of cell `cell`.
    fn cell_form(&mut self, cell: &str, port: &str) -> Result<Form, String> {
        let key = (cell.to_string(), port.to_string());
        if let Some(f) = self.memo.get(&key) {
            return Ok(f.clone());
        }
        if self.busy.iter().any(|c| c == cell) {
            return Err(format!("a loop through `{cell}`"));
        }
        let c = &self.cells[cell];
        let ty = c.get("type").and_then(Value::as_str).unwrap_or("?");
        let kind = self
            .spec
            .cells
            .iter()
            .find(|(m, _)| m == ty)
            .map(|x| x.1)
            .ok_or_else(|| format!("`{cell}` is a `{ty}`, not a cell of the network"))?;
        let conns = c.get("connections").cloned().unwrap_or(Value::Null);
        let w = self.spec.lane_bits as usize;
        let port_bits = |p: &str| -> Result<Vec<Value>, String> {
            let b = conns
                .get(p)
                .and_then(Value::as_array)
                .cloned()
                .ok_or_else(|| format!("`{cell}` has no port {p}"))?;
            if b.len() == w {
                Ok(b)
            } else {
                Err(format!("`{cell}`.{p} has {} bits, not {w}", b.len()))
            }
        };
        let ins: Vec<String> = match kind {
            SumCell::CarrySave(t) => (0..t).map(|j| format!("t{j}_i")).collect(),
            SumCell::Add => vec!["a_i".into(), "b_i".into()],
        };
        self.busy.push(cell.to_string());
        let mut sum = Form::new();
        for p in &ins {
            let b = port_bits(p)?;
            let f = self
                .form(&b)
                .map_err(|e| format!("{e} (into `{cell}`.{p})"))?;
            sum = self.add(&sum, &f, 1);
        }
        self.busy.pop();
        let carry = |me: &mut Self| {
            let k = me.carries.len();
            Var::Carry(*me.carries.entry(cell.to_string()).or_insert(k))
        };
        let f = match (kind, port) {
            (SumCell::CarrySave(_), "s_o") => {
                let r = Form::from([(carry(self), 1)]);
                self.add(&sum, &r, self.mask)
            }
            (SumCell::CarrySave(_), "c_o") => Form::from([(carry(self), 1)]),
            (SumCell::Add, "y_o") => sum,
            _ => return Err(format!("`{cell}`.{port} is not a sum or carry output")),
        };
        self.memo.insert(key, f.clone());
        Ok(f)
    }

    /// `a + k * b` modulo 2^w.
    fn add(&self, a: &Form, b: &Form, k: u64) -> Form {
        let mut r = a.clone();
        for (v, c) in b {
            let e = r.entry(*v).or_insert(0);
            *e = e.wrapping_add(c.wrapping_mul(k)) & self.mask;
        }
        r.retain(|_, c| *c != 0);
        r
    }

    /// A form for a message: `x[0] + 3*x[2] - r[u_ps2_c4]`.
    fn show(&self, f: &Form) -> String {
        if f.is_empty() {
            return "0".into();
        }
        let names: HashMap<usize, &String> = self.carries.iter().map(|(c, k)| (*k, c)).collect();
        let terms: Vec<String> = f
            .iter()
            .map(|(v, c)| {
                let v = match v {
                    Var::Lane(j) => format!("x[{j}]"),
                    Var::Carry(k) => format!("carry of `{}`", names.get(k).map_or("?", |s| s)),
                };
                match *c {
                    1 => v,
                    c if c == self.mask => format!("-{v}"),
                    c => format!("{c}*{v}"),
                }
            })
            .collect();
        terms.join(" + ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-lane network: lane 1 is a carry-save cell of two terms, then an adder.
    fn spec() -> SumNet {
        SumNet {
            unit: "u".into(),
            top: crate::hdl::ModuleBuilder::new("t")
                .finish()
                .expect("module"),
            module: "t".into(),
            input: "x".into(),
            output: "y".into(),
            lane_bits: 2,
            lanes: 2,
            cells: vec![
                ("csa2".into(), SumCell::CarrySave(2)),
                ("add".into(), SumCell::Add),
            ],
            source: "test".into(),
        }
    }

    /// The netlist: x = bits 2..5, csa2 u0 (t0 = x lane 1, t1 = `t1`) -> s 6,7 / c 8,9,
    /// add u1 (a = `a`, b = `b`) -> y lane 1 = 10,11; y lane 0 = x lane 0.
    fn netlist(t1: [u64; 2], a: [u64; 2], b: [u64; 2]) -> String {
        serde_json::json!({"modules": {"t": {
        "netnames": {"x": {"bits": [2, 3, 4, 5]}, "y": {"bits": [2, 3, 10, 11]}},
        "cells": {
            "u0": {"type": "csa2",
                "port_directions": {"t0_i": "input", "t1_i": "input",
                    "s_o": "output", "c_o": "output"},
                "connections": {"t0_i": [4, 5], "t1_i": t1, "s_o": [6, 7], "c_o": [8, 9]}},
            "u1": {"type": "add",
                "port_directions": {"a_i": "input", "b_i": "input", "y_o": "output"},
                "connections": {"a_i": a, "b_i": b, "y_o": [10, 11]}}
        }}}})
        .to_string()
    }

    #[test]
    fn the_sum_of_a_carry_save_pair_is_accepted() {
        let r = check(&netlist([2, 3], [6, 7], [8, 9]), &spec()).expect("netlist");
        assert_eq!(r, None);
    }

    #[test]
    fn wiring_faults_are_named() {
        // The carry twice: the sum's carry variable does not cancel.
        let r = check(&netlist([2, 3], [8, 9], [8, 9]), &spec()).expect("netlist");
        assert!(r.is_some_and(|m| m.contains("carry of `u0`")));
        // Lane 1 twice instead of lanes 1 and 0.
        let r = check(&netlist([4, 5], [6, 7], [8, 9]), &spec()).expect("netlist");
        assert!(r.is_some_and(|m| m.contains("2*x[1]")));
        // Bits out of order.
        let r = check(&netlist([3, 2], [6, 7], [8, 9]), &spec()).expect("netlist");
        assert!(r.is_some_and(|m| m.contains("in order")));
    }

    #[test]
    fn a_missing_net_is_an_error() {
        let mut s = spec();
        s.output = "z".into();
        assert!(check(&netlist([2, 3], [6, 7], [8, 9]), &s).is_err());
    }
}
