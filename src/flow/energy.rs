//! Energy per line: switching activity from co-simulation, power from OpenSTA.
//!
//! The unit's synthesized netlist, with the library's cell functions (the gate-level model of
//! [`crate::synth::gatesim`]), runs in Verilator through the unit's scoreboard at full
//! throughput (no input gaps, no stalls) on the configuration's random stimulus for `lines`
//! lines, with a waveform of the whole run. Every net of the netlist gets its toggle rate
//! (transitions per clock cycle) and duty (fraction of time at 1), and these are set on every
//! cell input pin of the net and on the input ports (OpenSTA 2.0.17 reads neither SAIF nor
//! VCD, and of its pin annotations only `sta::set_power_pin_activity` on input pins takes
//! effect: `docs/TOOLCHAIN.md`). Pins the simulation does not see (those on the fan-out
//! buffers added after mapping) get OpenSTA's propagated activity. `report_power` gives
//! internal, switching and leakage power at the synthesis clock; energy per line = total power ×
//! cycles × period / lines. The activity is zero-delay (no glitches).

use super::{stim_from, FlowResult};
use crate::config::Config;
use crate::engines::EngineRef;
use crate::synth::{Liberty, ReportRow};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

/// Activity of one bit over a waveform.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Activity {
    /// Transitions.
    pub toggles: u64,
    /// Time at 1, in the waveform's time units.
    pub high: u64,
}

/// Per-bit activity of a VCD file: `name` (scopes below the top module joined with `.`,
/// vector bits as `name_<i>_`, Yosys' bit-blasted netlist names) → activity, and the end
/// time. Signals of the `TOP` wrapper scope (Verilator's copy of the ports) are skipped.
pub fn vcd_activity(text: &str) -> Result<(BTreeMap<String, Activity>, u64), String> {
    struct Var {
        names: Vec<String>,
        width: usize,
    }
    let mut vars: HashMap<String, Vec<Var>> = HashMap::new();
    let mut scope: Vec<String> = Vec::new();
    let mut words = text.split_ascii_whitespace();
    let mut header = true;
    // Per id: current value bits (LSB first), time of last change per bit, activity per bit.
    let mut state: HashMap<String, (Vec<u8>, Vec<u64>)> = HashMap::new();
    let mut acts: HashMap<String, Vec<Activity>> = HashMap::new();
    let mut now: u64 = 0;
    let set = |id: &str,
               value: &str,
               now: u64,
               state: &mut HashMap<String, (Vec<u8>, Vec<u64>)>,
               acts: &mut HashMap<String, Vec<Activity>>| {
        let Some((bits, since)) = state.get_mut(id) else {
            return;
        };
        let a = acts.get_mut(id).expect("activity per id");
        let w = bits.len();
        let v: Vec<u8> = value.bytes().collect();
        for i in 0..w {
            // VCD vectors are MSB first and may omit leading zeros.
            let b = if i < v.len() {
                v[v.len() - 1 - i]
            } else {
                b'0'
            };
            if b != bits[i] {
                if bits[i] == b'1' {
                    a[i].high += now - since[i];
                }
                if bits[i] != b'x' && b != b'x' {
                    a[i].toggles += 1;
                }
                bits[i] = b;
                since[i] = now;
            }
        }
    };
    while let Some(w) = words.next() {
        if header {
            match w {
                "$scope" => {
                    let _kind = words.next();
                    scope.push(words.next().unwrap_or("").to_string());
                }
                "$upscope" => {
                    scope.pop();
                }
                "$var" => {
                    let _kind = words.next();
                    let width: usize = words
                        .next()
                        .and_then(|x| x.parse().ok())
                        .ok_or("VCD: $var without a width")?;
                    let id = words.next().ok_or("VCD: $var without an id")?.to_string();
                    let name = words.next().ok_or("VCD: $var without a name")?.to_string();
                    // Skip an optional range and `$end`.
                    for x in words.by_ref() {
                        if x == "$end" {
                            break;
                        }
                    }
                    if scope.len() < 2 {
                        continue;
                    }
                    let mut path: Vec<String> = scope[2..].to_vec();
                    path.push(name);
                    let base = path.join(".");
                    let names = if width == 1 {
                        vec![base]
                    } else {
                        (0..width).map(|i| format!("{}_{}_", base, i)).collect()
                    };
                    vars.entry(id.clone())
                        .or_default()
                        .push(Var { names, width });
                    state.insert(id.clone(), (vec![b'x'; width], vec![0; width]));
                    acts.insert(id, vec![Activity::default(); width]);
                }
                "$enddefinitions" => header = false,
                _ => {}
            }
            continue;
        }
        if let Some(t) = w.strip_prefix('#') {
            now = t.parse().map_err(|_| format!("VCD: bad time `{}`", w))?;
        } else if let Some(v) = w.strip_prefix('b').or_else(|| w.strip_prefix('B')) {
            let id = words.next().ok_or("VCD: vector value without an id")?;
            set(id, v, now, &mut state, &mut acts);
        } else if w.starts_with('$') {
            // $dumpvars, $end, ...
        } else if let Some(first) = w.chars().next() {
            if matches!(first, '0' | '1' | 'x' | 'X' | 'z' | 'Z') {
                let v = first.to_ascii_lowercase().to_string();
                set(&w[1..], &v, now, &mut state, &mut acts);
            }
        }
    }
    let mut out = BTreeMap::new();
    for (id, vs) in &vars {
        let (bits, since) = &state[id];
        let a = &acts[id];
        for v in vs {
            for i in 0..v.width {
                let mut x = a[i];
                if bits[i] == b'1' {
                    x.high += now - since[i];
                }
                out.insert(v.names[i].clone(), x);
            }
        }
    }
    Ok((out, now))
}

/// The cells of a Yosys netlist (`netlist.v`), by net: the driving output pin and the
/// input pins it loads (`instance/PIN`), and the number of flip-flops.
#[derive(Debug, Default)]
pub struct Nets {
    /// Net → its driver's `instance/PIN`.
    pub driver: BTreeMap<String, String>,
    /// Net → the cell input pins on it.
    pub loads: BTreeMap<String, Vec<String>>,
    /// Flip-flops.
    pub flops: usize,
}

/// Reads the cell connections of `netlist` (one `.PIN(net)` per line, as Yosys writes).
pub fn nets(netlist: &str, lib: &Liberty) -> Nets {
    let mut n = Nets::default();
    let mut lines = netlist.lines();
    while let Some(l) = lines.next() {
        let t = l.trim();
        let mut it = t.split_whitespace();
        let (Some(cell), Some(inst)) = (it.next(), it.next()) else {
            continue;
        };
        let Some(outs) = lib.output_pins.get(cell) else {
            continue;
        };
        if !t.ends_with('(') {
            continue;
        }
        n.flops += usize::from(lib.flop_cells.contains(cell));
        for c in lines.by_ref() {
            let c = c.trim();
            if let Some((pin, rest)) = c.strip_prefix('.').and_then(|x| x.split_once('(')) {
                let net = rest.trim_end_matches(',').trim_end_matches(')').trim();
                if net.is_empty() {
                    continue;
                }
                let full = format!("{}/{}", inst, pin);
                if outs.contains(pin) {
                    n.driver.insert(net.to_string(), full);
                } else {
                    n.loads.entry(net.to_string()).or_default().push(full);
                }
            }
            if c.starts_with(");") {
                break;
            }
        }
    }
    n
}

/// Energy of one synthesized unit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EnergyRow {
    /// Engine.
    pub engine: String,
    /// Unit.
    pub unit: String,
    /// Library.
    pub liberty: String,
    /// Clock period of the power analysis (the synthesis clock), ns.
    pub clock_ns: f64,
    /// Lines simulated.
    pub lines: u64,
    /// Cycles simulated.
    pub cycles: u64,
    /// Input-port bits annotated with their simulated activity.
    pub inputs_annotated: usize,
    /// Cell input pins annotated with their net's simulated activity.
    pub pins_annotated: usize,
    /// Cell input pins of the netlist.
    pub pins: usize,
    /// Flip-flops in the netlist.
    pub flops: usize,
    /// Internal power, mW.
    pub internal_mw: f64,
    /// Switching power, mW.
    pub switching_mw: f64,
    /// Leakage power, mW.
    pub leakage_mw: f64,
    /// Total, mW.
    pub total_mw: f64,
    /// Energy per line, pJ.
    pub pj_per_line: f64,
    /// Uncompressed bytes per line.
    pub line_bytes: f64,
}

fn tcl_name(s: &str) -> String {
    // Netlist names are plain or escaped identifiers without spaces or braces.
    s.replace('\\', "").replace(['{', '}'], "")
}

/// Measures `row`'s energy per line on `lib` with `lines` lines of gate-level activity.
pub fn energy(
    engine: EngineRef,
    cfg: &Config,
    row: &ReportRow,
    lib: &Liberty,
    lines: u64,
    work: &Path,
) -> FlowResult<EnergyRow> {
    let top = engine.cosim_top(cfg, &row.unit)?;
    if top.name != row.result.top {
        return Err(format!(
            "{} {}: co-simulation top {} is not the synthesized {}",
            engine.name(),
            row.unit,
            top.name,
            row.result.top
        ));
    }
    if !row.result.child_netlists.is_empty() {
        return Err(format!(
            "{} {}: energy per line needs a flat netlist, and this one reuses its child units' \
             netlists; synthesize it with `synth: {{hierarchy: flat}}`",
            engine.name(),
            row.unit
        ));
    }
    std::fs::create_dir_all(work)
        .map_err(|e| format!("cannot create {}: {}", work.display(), e))?;
    let budget = Duration::from_secs(cfg.synth.budget_s);
    let mut dut = super::gate_level_dut(engine, cfg, row, lib, true)?;
    let vcd = work.join("activity.vcd");
    let mut stim = stim_from(cfg, None);
    stim.lines = lines;
    stim.in_gap = 0.0;
    stim.out_stall = 0.0;
    stim.vcd = Some((vcd.clone(), 0, u64::MAX));
    stim.capture = false;
    let stats = engine.cosim(&mut dut, cfg, &row.unit, &stim, &mut |_| {})?;
    drop(dut);
    if stats.mismatches > 0 {
        return Err(format!(
            "{} {} on {}: the gate-level netlist mismatches its model ({} mismatches; first: {})",
            engine.name(),
            row.unit,
            row.result.liberty,
            stats.mismatches,
            stats
                .first_mismatch
                .as_ref()
                .map_or("-".to_string(), |m| m.to_string())
        ));
    }
    let text = std::fs::read_to_string(&vcd)
        .map_err(|e| format!("cannot read {}: {}", vcd.display(), e))?;
    let (acts, end) = vcd_activity(&text)?;
    drop(text);
    let _ = std::fs::remove_file(&vcd);
    let cycles = stats.cycles.max(1);
    let netlist = std::fs::read_to_string(&row.result.netlist)
        .map_err(|e| format!("cannot read {}: {}", row.result.netlist.display(), e))?;
    let nets = nets(&netlist, lib);
    let inputs: Vec<String> = netlist
        .lines()
        .filter_map(|l| l.trim().strip_prefix("input "))
        .map(|s| s.trim_end_matches(';').trim().to_string())
        .filter(|s| s != "clk_i")
        .collect();
    let mut tcl = format!(
        "read_liberty {{{}}}\nread_verilog {{{}}}\nlink_design {}\n\
         create_clock -name hwzip_clk -period {} [get_ports clk_i]\n",
        lib.path.display(),
        row.result.netlist.display(),
        row.result.top,
        lib.ns_to_lib_time(row.result.clock_ns)
    );
    let rate = |a: &Activity| {
        (
            a.toggles as f64 / cycles as f64,
            if end > 0 {
                a.high as f64 / end as f64
            } else {
                0.0
            },
        )
    };
    let (mut n_in, mut n_pins) = (0, 0);
    for p in &inputs {
        if let Some(a) = acts.get(p) {
            let (t, d) = rate(a);
            tcl.push_str(&format!(
                "set_power_activity -input_ports [get_ports {{{}}}] -activity {:.6} -duty {:.6}\n",
                tcl_name(p),
                t,
                d
            ));
            n_in += 1;
        }
    }
    // OpenSTA 2.0.17's `set_power_activity -pins` is broken (docs/TOOLCHAIN.md); its
    // `sta::set_power_pin_activity` takes cell input pins, so every load pin gets the
    // simulated activity of its net.
    for (net, pins) in &nets.loads {
        let alias = nets.driver.get(net).map(|d| d.replace('/', "."));
        let a = alias
            .as_ref()
            .and_then(|d| acts.get(d))
            .or_else(|| acts.get(net));
        if let Some(a) = a {
            let (t, d) = rate(a);
            for pin in pins {
                tcl.push_str(&format!(
                    "sta::set_power_pin_activity [get_pins {{{}}}] {:.6} {:.6}\n",
                    tcl_name(pin),
                    t,
                    d
                ));
                n_pins += 1;
            }
        }
    }
    tcl.push_str("report_power -digits 6\nputs HWZIP_POWER_DONE\nexit\n");
    let script = work.join("power.tcl");
    crate::files::write(&script, &tcl)?;
    let log = work.join("power.log");
    crate::synth::sta::run_script("power.tcl", work, &log, budget).map_err(|e| e.to_string())?;
    let out = std::fs::read_to_string(&log)
        .map_err(|e| format!("cannot read {}: {}", log.display(), e))?;
    if !out.contains("HWZIP_POWER_DONE") {
        return Err(format!(
            "OpenSTA did not finish the power report; see {}",
            log.display()
        ));
    }
    let errors = out.lines().filter(|l| l.starts_with("Error")).count();
    if errors > 0 {
        return Err(format!(
            "OpenSTA reported {} error(s) on the activity annotations; see {}",
            errors,
            log.display()
        ));
    }
    let total: Vec<f64> = out
        .lines()
        .find(|l| l.trim_start().starts_with("Total"))
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .take(4)
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    if total.len() != 4 {
        return Err(format!(
            "no Total line in OpenSTA's power report; see {}",
            log.display()
        ));
    }
    let w_to_mw = 1e3;
    let total_mw = total[3] * w_to_mw;
    let seconds = cycles as f64 * row.result.clock_ns * 1e-9;
    let per_line = stats.lines.max(1) as f64;
    Ok(EnergyRow {
        engine: engine.name().into(),
        unit: row.unit.clone(),
        liberty: row.result.liberty.clone(),
        clock_ns: row.result.clock_ns,
        lines: stats.lines,
        cycles: stats.cycles,
        inputs_annotated: n_in,
        pins_annotated: n_pins,
        pins: nets.loads.values().map(Vec::len).sum(),
        flops: nets.flops,
        internal_mw: total[0] * w_to_mw,
        switching_mw: total[1] * w_to_mw,
        leakage_mw: total[2] * w_to_mw,
        total_mw,
        pj_per_line: total[3] * seconds / per_line * 1e12,
        line_bytes: stats.raw_bytes as f64 / per_line,
    })
}

/// Markdown table of energy rows.
pub fn markdown(rows: &[EnergyRow]) -> String {
    let mut s = String::from(
        "| engine | unit | library | clock ns | lines | cycles | annotated ports / cell input pins | \
         internal mW | switching mW | leakage mW | total mW | B/line | pJ/line |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} / {} of {} | {:.3} | {:.3} | {:.4} | {:.3} | {:.0} | {:.2} |\n",
            r.engine,
            r.unit,
            r.liberty,
            r.clock_ns,
            r.lines,
            r.cycles,
            r.inputs_annotated,
            r.pins_annotated,
            r.pins,
            r.internal_mw,
            r.switching_mw,
            r.leakage_mw,
            r.total_mw,
            r.line_bytes,
            r.pj_per_line
        ));
    }
    s
}

/// The energy Markdown of a run: the measured table and the papers beside it.
pub fn report(rows: &[EnergyRow]) -> String {
    format!(
        "{}\n## Beside the papers\n\n{}",
        markdown(rows),
        beside_papers(rows)
    )
}

/// Writes `energy.md` ([`report`]) and `energy.json` (the rows) into `dir`.
pub fn write(rows: &[EnergyRow], dir: &Path) -> FlowResult<()> {
    let mut set = crate::files::FileSet::new();
    add(&mut set, rows, dir)?;
    set.commit()
}

/// Adds `energy.md` and `energy.json` in `dir` to `set`.
pub fn add(set: &mut crate::files::FileSet, rows: &[EnergyRow], dir: &Path) -> FlowResult<()> {
    set.add(dir.join("energy.md"), report(rows));
    let json = serde_json::to_string_pretty(rows).map_err(|e| e.to_string())?;
    set.add(dir.join("energy.json"), json);
    Ok(())
}

/// Our energy beside the papers' published energy and power, with the technology gap.
pub fn beside_papers(rows: &[EnergyRow]) -> String {
    let find = |e: &str, u: &str, lib: &str| {
        rows.iter()
            .find(|r| r.engine == e && r.unit == u && r.liberty == lib)
            .map(|r| r.pj_per_line)
    };
    let mut libs: Vec<&str> = Vec::new();
    for r in rows {
        if !libs.contains(&r.liberty.as_str()) {
            libs.push(&r.liberty);
        }
    }
    let mut s = String::from(
        "| figure | paper | paper node | library | ours | ours / paper |\n\
         |---|---:|---|---|---:|---:|\n",
    );
    // A figure stands beside ours when every unit it covers was measured on the library.
    let ours = |e: &str, units: &[&str], lib: &str| {
        units.iter().map(|u| find(e, u, lib)).sum::<Option<f64>>()
    };
    let papers: Vec<(&str, &crate::engines::PaperEnergy)> = crate::engines::ALL
        .iter()
        .flat_map(|e| e.paper_energy().iter().map(move |p| (e.name(), p)))
        .collect();
    let mut any = false;
    for (engine, p) in &papers {
        for l in &libs {
            if let Some(v) = ours(engine, p.units, l) {
                let ratio =
                    p.pj.parse::<f64>()
                        .ok()
                        .filter(|x| *x > 0.0)
                        .map_or(String::new(), |x| format!("{:.1}×", v / x));
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {:.2} | {} |\n",
                    p.what, p.pj, p.node, l, v, ratio
                ));
                any = true;
            }
        }
    }
    if !any {
        let have: Vec<String> = papers
            .iter()
            .map(|(e, p)| format!("{} of `{}`", p.units.join(" + "), e))
            .collect();
        return format!(
            "No unit of this run has a published energy figure (these have: {}).\n",
            have.join(", ")
        );
    }
    s.push_str(
        "\nThe papers' nodes are 7 to 65 nm against our 180 nm (osu018), 45 nm (Nangate45) and \
         130 nm (sky130hd): dynamic energy scales roughly with C·V², so a 180 nm result is one \
         to two orders of magnitude above a 7 nm one for the same circuit.\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcd_bits_count_toggles_and_time_high() {
        let vcd = "$scope module TOP $end $var wire 1 ! clk_i $end\n\
                   $scope module top $end $var wire 2 \" d_q [1:0] $end $var wire 1 # v $end\n\
                   $scope module u_a $end $var wire 1 $ r_q $end $upscope $end\n\
                   $upscope $end $upscope $end $enddefinitions $end\n\
                   #0 b00 \" 0# 0$ 0!\n#10 b01 \" 1# 1!\n#20 b10 \" 0# 1$\n#40 b0 \"\n";
        let (a, end) = vcd_activity(vcd).unwrap();
        assert_eq!(end, 40);
        assert_eq!(
            a["d_q_0_"],
            Activity {
                toggles: 2,
                high: 10
            }
        );
        assert_eq!(
            a["d_q_1_"],
            Activity {
                toggles: 2,
                high: 20
            }
        );
        assert_eq!(
            a["v"],
            Activity {
                toggles: 2,
                high: 10
            }
        );
        assert_eq!(
            a["u_a.r_q"],
            Activity {
                toggles: 1,
                high: 20
            }
        );
        assert!(!a.contains_key("clk_i"), "the TOP wrapper is skipped");
    }

    fn row(unit: &str, pj: f64) -> EnergyRow {
        EnergyRow {
            engine: "adaptive".into(),
            unit: unit.into(),
            liberty: "nangate45".into(),
            clock_ns: 1.0,
            lines: 1000,
            cycles: 1000,
            inputs_annotated: 1,
            pins_annotated: 1,
            pins: 1,
            flops: 1,
            internal_mw: pj,
            switching_mw: 0.0,
            leakage_mw: 0.0,
            total_mw: pj,
            pj_per_line: pj,
            line_bytes: 64.0,
        }
    }

    #[test]
    fn papers_pair_compressor_and_decompressor_with_the_ratio() {
        let md = beside_papers(&[row("bdi_comp", 36.7), row("bdi_decomp", 22.3)]);
        assert!(
            md.contains(
                "| BDI comp + decomp, pJ per 64 B line | 1.3 | 7 nm (scaled from 65 nm) \
                         | nangate45 | 59.00 | 45.4× |"
            ),
            "{}",
            md
        );
        // Half a pair has no figure to stand beside.
        let md = beside_papers(&[row("bdi_comp", 36.7)]);
        assert!(md.starts_with("No unit of this run"), "{}", md);
    }
}
