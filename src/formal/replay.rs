//! A counterexample replayed in Verilator: the solver's trace (`cex.vcd`) gives the unit's
//! inputs cycle by cycle; the cosim machinery (the Verilator build cache and the [`Dut`]
//! driver) runs the same unit on them, writes its own waveform (`replay.vcd`), and compares
//! every output with the solver's, cycle by cycle. The property is then checked again on the
//! Verilator outputs, so the user sees the same failure in both.

use super::{Property, RoundTrip};
use crate::cosim::dut::Dut;
use crate::cosim::vdut::{build_spec, VerilatorDut};
use crate::hdl::{Dir, Module};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The top-scope signals of a `yosys-smtbmc` VCD, one value per solver step (bit 0 first,
/// `x`/`z` read as 0).
#[derive(Debug, Default)]
pub struct Trace {
    /// Signal name → width and its value (32-bit words, LSB first) at each step.
    pub signals: HashMap<String, (u32, Vec<Vec<u32>>)>,
    /// Steps in the trace.
    pub steps: usize,
}

/// `bits` (MSB first, as VCD writes them) as 32-bit words of a `width`-bit value.
fn words(bits: &str, width: u32) -> Vec<u32> {
    let mut w = vec![0u32; width.div_ceil(32).max(1) as usize];
    for (i, c) in bits.bytes().rev().enumerate() {
        if c == b'1' && (i as u32) < width {
            w[i / 32] |= 1 << (i % 32);
        }
    }
    w
}

/// Reads the top scope of `text`. Steps are at times 0, 10, 20, ... (the smtbmc layout).
pub fn parse(text: &str) -> Result<Trace, String> {
    let mut ids: HashMap<String, (String, u32)> = HashMap::new();
    let mut depth = 0usize;
    let mut tokens = text.split_whitespace().peekable();
    let mut cur: HashMap<String, Vec<u32>> = HashMap::new();
    let mut trace = Trace::default();
    let mut time: Option<u64> = None;
    let flush = |trace: &mut Trace, cur: &HashMap<String, Vec<u32>>, t: u64| {
        if t.is_multiple_of(10) {
            let step = (t / 10) as usize;
            for (name, (w, vals)) in trace.signals.iter_mut() {
                let v = cur.get(name).cloned().unwrap_or_else(|| words("", *w));
                vals.resize(step, v.clone());
                vals.push(v);
            }
            trace.steps = step + 1;
        }
    };
    while let Some(tok) = tokens.next() {
        match tok {
            "$scope" => depth += 1,
            "$upscope" => depth = depth.saturating_sub(1),
            "$var" => {
                let _kind = tokens.next();
                let w: u32 = tokens
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("VCD: bad $var width")?;
                let id = tokens.next().ok_or("VCD: $var without an id")?.to_string();
                let name = tokens.next().ok_or("VCD: $var without a name")?.to_string();
                if depth == 1 {
                    ids.insert(id, (name.clone(), w));
                    trace.signals.insert(name, (w, Vec::new()));
                }
            }
            t if t.starts_with('#') => {
                let t: u64 = t[1..].parse().map_err(|_| format!("VCD: bad time {t}"))?;
                if let Some(p) = time {
                    flush(&mut trace, &cur, p);
                }
                time = Some(t);
            }
            t if t.starts_with('b') || t.starts_with('B') => {
                let id = tokens.next().ok_or("VCD: vector value without an id")?;
                if let Some((name, w)) = ids.get(id) {
                    cur.insert(name.clone(), words(&t[1..], *w));
                }
            }
            t if t.len() >= 2 && matches!(t.as_bytes()[0], b'0' | b'1' | b'x' | b'z') => {
                if let Some((name, w)) = ids.get(&t[1..]) {
                    cur.insert(name.clone(), words(&t[..1], *w));
                }
            }
            _ => {}
        }
    }
    if let Some(p) = time {
        flush(&mut trace, &cur, p);
    }
    Ok(trace)
}

/// What the replay found.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Replay {
    /// Cycles replayed.
    pub cycles: usize,
    /// Output ports compared each cycle.
    pub outputs: usize,
    /// (cycle, port) pairs where Verilator and the solver's trace differ (from cycle 1: cycle
    /// 0 shows the registers' initial values, which the solver chooses).
    pub differences: Vec<(usize, String)>,
    /// The property checked on Verilator's outputs: the first cycle it fails, and how.
    pub failure: Option<(usize, String)>,
}

impl Replay {
    /// One line for the report.
    pub fn summary(&self) -> String {
        let same = if self.differences.is_empty() {
            format!(
                "Verilator gives the solver's outputs on all {} ports in cycles 1-{}",
                self.outputs,
                self.cycles.saturating_sub(1)
            )
        } else {
            format!(
                "Verilator differs from the solver's trace in {} (cycle, port) pairs, first \
                 cycle {} `{}` (registers without a reset start at the solver's choice there, \
                 at 0 here)",
                self.differences.len(),
                self.differences[0].0,
                self.differences[0].1
            )
        };
        match &self.failure {
            Some((c, why)) => {
                format!("{same}; the property fails in Verilator at cycle {c}: {why}")
            }
            None => format!("{same}; the property holds on Verilator's outputs"),
        }
    }
}

/// Replays the counterexample `vcd` of `prop` on `top` built from `files` (which carry any
/// planted fault) in Verilator, up to its failing step `last`, writing Verilator's waveform
/// to `out_vcd`.
pub fn replay(
    top: &Arc<Module>,
    files: &[(String, String)],
    prop: Property,
    round_trip: Option<&RoundTrip>,
    vcd: &Path,
    last: usize,
    out_vcd: &Path,
) -> Result<Replay, String> {
    let text = std::fs::read_to_string(vcd).map_err(|e| format!("{}: {e}", vcd.display()))?;
    let trace = parse(&text)?;
    let mut spec = build_spec(top, true).map_err(|e| e.to_string())?;
    spec.sources = files.to_vec();
    let lib = crate::cosim::build(&spec).map_err(|e| e.to_string())?;
    let model = crate::cosim::Model::new(&lib).map_err(|e| e.to_string())?;
    let mut dut = VerilatorDut::from_model(model).map_err(|e| e.to_string())?;
    dut.trace_start(out_vcd)?;
    let ports = top.ports();
    let value = |name: &str, step: usize| -> Option<&Vec<u32>> {
        trace.signals.get(name).and_then(|(_, v)| v.get(step))
    };
    let steps = trace.steps.min(last + 1);
    let mut r = Replay {
        cycles: steps,
        outputs: ports.iter().filter(|p| p.dir == Dir::Out).count(),
        ..Replay::default()
    };
    // A payload port is compared only while its stream offers a beat (it is free otherwise).
    let valid_of: HashMap<String, String> = top
        .streams
        .iter()
        .filter(|s| s.dir == Dir::Out)
        .flat_map(|s| {
            s.layout
                .fields()
                .iter()
                .map(|f| (s.field(&f.name), s.valid()))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut beats = Beats::default();
    let mut prev: HashMap<String, Vec<u32>> = HashMap::new();
    for step in 0..steps {
        for p in ports
            .iter()
            .filter(|p| p.dir == Dir::In && p.name != "clk_i")
        {
            let i = dut.port(&p.name)?;
            let v = value(&p.name, step)
                .cloned()
                .unwrap_or_else(|| vec![0; p.width.div_ceil(32) as usize]);
            dut.set(i, &v);
        }
        dut.eval();
        let mut now: HashMap<String, Vec<u32>> = HashMap::new();
        for p in &ports {
            let i = dut.port(&p.name)?;
            let mut v = vec![0u32; p.width.div_ceil(32).max(1) as usize];
            dut.get(i, &mut v);
            let offered = valid_of
                .get(&p.name)
                .is_none_or(|vn| value(vn, step).is_some_and(|x| x[0] & 1 == 1));
            // Cycle 0 (before the first clock edge) shows the registers' initial values: the
            // solver picks them, Verilator starts at 0. The comparison starts at cycle 1.
            if step > 0
                && p.dir == Dir::Out
                && offered
                && value(&p.name, step).is_some_and(|s| *s != v)
            {
                r.differences.push((step, p.name.clone()));
            }
            now.insert(p.name.clone(), v);
        }
        if r.failure.is_none() {
            r.failure = match round_trip {
                Some(rt) => beats.step(rt, &now),
                None => check(top, prop, &prev, &now),
            }
            .map(|why| (step, why));
        }
        prev = now;
        dut.tick();
    }
    dut.trace_stop();
    Ok(r)
}

/// The round trip checked on every beat: the input beats taken, in order, and the output
/// beats compared with them.
#[derive(Default)]
struct Beats {
    taken: std::collections::VecDeque<Vec<Vec<u32>>>,
    out: usize,
}

impl Beats {
    /// One cycle of port values `now`; `Some` with what went wrong on a mismatch.
    fn step(&mut self, rt: &RoundTrip, now: &HashMap<String, Vec<u32>>) -> Option<String> {
        let bit = |n: &str| now.get(n).is_some_and(|v| v[0] & 1 == 1);
        let port = |p: &str, f: &str, dir: &str| format!("{p}_{f}_{dir}");
        let (iv, ir) = (
            format!("{}_valid_i", rt.input),
            format!("{}_ready_o", rt.input),
        );
        let (ov, or) = (
            format!("{}_valid_o", rt.output),
            format!("{}_ready_i", rt.output),
        );
        let live = bit("rst_ni");
        if !live {
            self.taken.clear();
            self.out = 0;
            return None;
        }
        if bit(&iv) && bit(&ir) {
            let pay = rt
                .pairs
                .iter()
                .map(|(a, _)| {
                    now.get(&port(&rt.input, a, "i"))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            self.taken.push_back(pay);
        }
        if bit(&ov) && bit(&or) {
            self.out += 1;
            let Some(want) = self.taken.pop_front() else {
                return Some(format!(
                    "output beat {} came before its input beat",
                    self.out
                ));
            };
            for ((_, b), w) in rt.pairs.iter().zip(&want) {
                let n = port(&rt.output, b, "o");
                if rt.expect.is_none() && now.get(&n) != Some(w) {
                    return Some(format!(
                        "output beat {}: `{n}` differs from input beat {}",
                        self.out, self.out
                    ));
                }
            }
            for z in &rt.zero {
                let n = port(&rt.output, z, "o");
                if bit(&n) {
                    return Some(format!("output beat {}: `{n}` is set", self.out));
                }
            }
        }
        None
    }
}

/// The stream-contract property `prop` between two cycles of port values (`prev` empty in
/// cycle 0); `None` when it holds.
fn check(
    top: &Module,
    prop: Property,
    prev: &HashMap<String, Vec<u32>>,
    now: &HashMap<String, Vec<u32>>,
) -> Option<String> {
    let bit = |m: &HashMap<String, Vec<u32>>, n: &str| m.get(n).is_some_and(|v| v[0] & 1 == 1);
    if prev.is_empty() {
        return None;
    }
    for s in top.streams.iter().filter(|s| s.dir == Dir::Out) {
        let (v, rd) = (s.valid(), s.ready());
        match prop {
            Property::Reset if !bit(prev, "rst_ni") && bit(now, &v) => {
                return Some(format!("`{v}` is high in the cycle after a reset cycle"));
            }
            Property::Hold if bit(prev, "rst_ni") && bit(prev, &v) && !bit(prev, &rd) => {
                if !bit(now, &v) {
                    return Some(format!("`{v}` fell while the beat was stalled"));
                }
                for f in s.layout.fields() {
                    let n = s.field(&f.name);
                    if bit(now, "rst_ni") && prev.get(&n) != now.get(&n) {
                        return Some(format!("`{n}` changed while the beat was stalled"));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_top_scope_per_step() {
        let vcd = "$timescale 1ns $end\n$var integer 32 t smt_step $end\n\
                   $scope module w $end\n$var wire 1 n0 clk_i $end\n$var wire 3 n1 d $end\n\
                   $scope module dut $end\n$var wire 3 n2 q $end\n$upscope $end\n$upscope $end\n\
                   $enddefinitions $end\n#0\n1n0\nb101 n1\nb1 n2\n#5\n0n0\n#10\n1n0\nb11 n1\n\
                   #15\n0n0\n#20\n1n0\n";
        let t = parse(vcd).unwrap();
        assert_eq!(t.steps, 3);
        assert_eq!(t.signals["d"].1, vec![vec![5], vec![3], vec![3]]);
        assert!(!t.signals.contains_key("q"));
        assert_eq!(words("1x1", 3), vec![5]);
    }
}
