//! Memories beside the logic: a unit's RAMs ([`crate::hdl::ram`]) are mapped in runs of their
//! own, so a report gives the unit's logic, each RAM as flip-flops (its own run), the logic's
//! worst path with the RAMs as ideal or real macros (a liberty model of each RAM, timed with
//! the logic's netlist), and, when the user names memory macros (a `.lib`, a cell and its
//! dimensions), how many macros cover each RAM, their area and their access time.
//! `docs/MEMORIES.md` describes the model and how to plug in OpenRAM or a foundry macro.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::liberty::parse_time_unit;
use super::sta::{self, TimingPath};
use super::{buffer, run, ChildArea, SynthError, SynthJob};
use crate::hdl::ram::RamSpec;

pub use crate::config::MacroSpec;

/// Area and timing of a macro cell, from its liberty.
#[derive(Clone, Debug, PartialEq)]
pub struct MacroCell {
    /// Cell area, µm² (the liberty's area unit is taken as µm²).
    pub area_um2: f64,
    /// Largest clock-to-output delay of the cell, ns.
    pub access_ns: f64,
    /// Largest setup time of an input to the clock, ns.
    pub setup_ns: f64,
}

/// How macros of one kind cover a RAM.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MacroFit {
    /// Macro cell.
    pub cell: String,
    /// Macros side by side (word bits) and stacked (words).
    pub cols: u32,
    /// Macros stacked to cover the words.
    pub rows: u32,
    /// Area of all of them, µm².
    pub area_um2: f64,
    /// Clock to read data, ns.
    pub access_ns: f64,
    /// Setup time of the inputs, ns.
    pub setup_ns: f64,
}

/// One RAM of a unit, as flops and as macros.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryFigures {
    /// RAM module.
    pub module: String,
    /// Instances of it in the unit.
    pub instances: u64,
    /// Words, bits per word, bits per write enable.
    pub words: u32,
    /// Bits per word.
    pub width: u32,
    /// Bits per write enable.
    pub lane: u32,
    /// Area of one instance as flip-flops (its own run), µm².
    pub flop_area_um2: f64,
    /// Worst path of one instance as flip-flops (its own run), ns.
    pub flop_path_ns: f64,
    /// The best-fitting named macro, if one fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub macro_fit: Option<MacroFit>,
    /// Why no macro is given (none named, or none fits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub macro_note: Option<String>,
    /// The RAM's own netlist (its ports name the model's pins).
    #[serde(default)]
    pub netlist: PathBuf,
}

/// Reads a macro cell's area and timing from its liberty.
pub fn read_macro(spec: &MacroSpec) -> Result<MacroCell, SynthError> {
    let path = &spec.liberty;
    let text = crate::files::input::read(path, crate::files::input::Purpose::Liberty)
        .map_err(|e| SynthError::io(path, e))?;
    let text = String::from_utf8_lossy(&text);
    let bad = |what: &str| SynthError::Parse {
        what: format!("{what} of memory macro `{}`", spec.cell),
        found: "nothing".into(),
        log: path.clone(),
    };
    let unit = attribute(&text, "time_unit")
        .and_then(|u| parse_time_unit(u.trim_matches('"')))
        .unwrap_or(1.0);
    let body = cell_body(&text, &spec.cell).ok_or_else(|| bad("the `cell` group"))?;
    let area = attribute(body, "area")
        .and_then(|a| a.parse::<f64>().ok())
        .ok_or_else(|| bad("the `area`"))?;
    let (mut access, mut setup) = (0.0f64, 0.0f64);
    for t in groups(body, "timing") {
        let kind = attribute(t, "timing_type").unwrap_or("combinational");
        let (tables, into) = match kind {
            "rising_edge" => (["cell_rise", "cell_fall"], &mut access),
            "setup_rising" => (["rise_constraint", "fall_constraint"], &mut setup),
            _ => continue,
        };
        for name in tables {
            for g in groups(t, name) {
                *into = into.max(max_value(g));
            }
        }
    }
    if access <= 0.0 {
        return Err(bad("a clock-to-output (`rising_edge`) delay"));
    }
    Ok(MacroCell {
        area_um2: area,
        access_ns: access * unit,
        setup_ns: setup * unit,
    })
}

/// The byte offsets just after every whole-word occurrence of `name` in `text`.
fn after_words<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(name).filter_map(move |(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let part = |c: char| c.is_alphanumeric() || c == '_';
        (!before.is_some_and(part) && !after.is_some_and(part)).then_some(at + name.len())
    })
}

/// The first `name : value ;` at any depth of `text`, its value trimmed.
fn attribute<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    after_words(text, name).find_map(|from| {
        let v = text[from..].trim_start().strip_prefix(':')?;
        let end = v.find(';')?;
        Some(v[..end].trim())
    })
}

/// The bodies of every `name (...) { ... }` group directly or deeper in `text`.
fn groups<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip_to = 0;
    for from in after_words(text, name) {
        if from < skip_to {
            continue; // inside a group already taken
        }
        if let Some((open, end)) = group_at(text, from) {
            out.push(&text[open + 1..end]);
            skip_to = end;
        }
    }
    out
}

/// The body of `cell (name)` (quoted or not).
fn cell_body<'a>(text: &'a str, cell: &str) -> Option<&'a str> {
    after_words(text, "cell").find_map(|from| {
        let r = text[from..].trim_start().strip_prefix('(')?;
        let close = r.find(')')?;
        if r[..close].trim().trim_matches('"') != cell {
            return None;
        }
        group_at(text, from).map(|(open, end)| &text[open + 1..end])
    })
}

/// At `from`, `(...) { ... }`: the offsets of its braces.
fn group_at(text: &str, from: usize) -> Option<(usize, usize)> {
    let r = text[from..].trim_start().strip_prefix('(')?;
    let close = r.find(')')?;
    let after = r[close + 1..].trim_start();
    if !after.starts_with('{') {
        return None;
    }
    let open = text.len() - after.len();
    matching_brace(text, open).map(|end| (open, end))
}

fn matching_brace(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The largest number in the `values (...)` of a table group.
fn max_value(group: &str) -> f64 {
    let Some(i) = group.find("values") else {
        return 0.0;
    };
    let rest = &group[i + 6..];
    // The parenthesized list (a `;` after it is optional in the wild).
    let end = rest.find(')').unwrap_or(rest.len());
    rest[..end]
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == '+'))
        .filter_map(|s| s.parse::<f64>().ok())
        .fold(0.0, f64::max)
}

/// How `spec` covers `ram`, or why it cannot: a RAM with lane enables needs a macro whose
/// write mask is as fine as a lane.
pub fn fit(ram: &RamSpec, spec: &MacroSpec, cell: &MacroCell) -> Result<MacroFit, String> {
    if ram.lanes() > 1 {
        match spec.mask_bits {
            None => return Err(format!("{} writes whole words", spec.cell)),
            Some(m) if !ram.lane.is_multiple_of(m) => {
                return Err(format!(
                    "{} masks {m}-bit groups, the RAM writes {}-bit lanes",
                    spec.cell, ram.lane
                ))
            }
            Some(_) => {}
        }
    }
    let cols = ram.width.div_ceil(spec.width);
    let rows = ram.words.div_ceil(spec.words);
    Ok(MacroFit {
        cell: spec.cell.clone(),
        cols,
        rows,
        area_um2: cell.area_um2 * (cols * rows) as f64,
        access_ns: cell.access_ns,
        setup_ns: cell.setup_ns,
    })
}

/// The smallest-area fit of `ram` among `macros` (each with its cell figures), or the
/// reasons none fits.
pub fn best_fit(ram: &RamSpec, macros: &[(MacroSpec, MacroCell)]) -> Result<MacroFit, String> {
    if macros.is_empty() {
        return Err("no memory macro named (synth.macros)".into());
    }
    let mut why = Vec::new();
    let mut best: Option<MacroFit> = None;
    for (spec, cell) in macros {
        match fit(ram, spec, cell) {
            Ok(f) if best.as_ref().is_none_or(|b| f.area_um2 < b.area_um2) => best = Some(f),
            Ok(_) => {}
            Err(e) => why.push(e),
        }
    }
    best.ok_or_else(|| why.join("; "))
}

/// A liberty holding one cell for the RAM module `module`, with the scalar ports of its
/// netlist: `clk_i` the clock, every other input `setup_ns` before it, every output
/// `access_ns` after it, area `area_um2`.
pub fn model_liberty(
    module: &str,
    inputs: &[String],
    outputs: &[String],
    area_um2: f64,
    access_ns: f64,
    setup_ns: f64,
) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "library (hwzip_{module}_model) {{");
    for line in [
        "delay_model : table_lookup ;",
        "time_unit : \"1ns\" ;",
        "voltage_unit : \"1V\" ;",
        "current_unit : \"1mA\" ;",
        "pulling_resistance_unit : \"1kohm\" ;",
        "leakage_power_unit : \"1nW\" ;",
        "capacitive_load_unit (1, pf) ;",
        "input_threshold_pct_rise : 50 ;",
        "input_threshold_pct_fall : 50 ;",
        "output_threshold_pct_rise : 50 ;",
        "output_threshold_pct_fall : 50 ;",
        "slew_lower_threshold_pct_rise : 20 ;",
        "slew_lower_threshold_pct_fall : 20 ;",
        "slew_upper_threshold_pct_rise : 80 ;",
        "slew_upper_threshold_pct_fall : 80 ;",
        "nom_voltage : 1.0 ;",
        "nom_temperature : 25 ;",
        "nom_process : 1.0 ;",
    ] {
        let _ = writeln!(o, "  {line}");
    }
    let _ = writeln!(o, "  cell ({module}) {{");
    let _ = writeln!(o, "    area : {area_um2:.3} ;");
    let _ = writeln!(o, "    dont_use : true ;");
    let scalar = |o: &mut String, table: &str, v: f64| {
        let _ = writeln!(o, "        {table} (scalar) {{ values (\"{v:.4}\") ; }}");
    };
    for (n, out) in inputs
        .iter()
        .map(|n| (n, false))
        .chain(outputs.iter().map(|n| (n, true)))
    {
        let _ = writeln!(o, "    pin ({n}) {{");
        if n == "clk_i" {
            let _ = writeln!(o, "      direction : input ;\n      clock : true ;");
            let _ = writeln!(o, "      capacitance : 0.002 ;\n    }}");
            continue;
        }
        let dir = if out { "output" } else { "input" };
        let _ = writeln!(o, "      direction : {dir} ;");
        if !out {
            let _ = writeln!(o, "      capacitance : 0.002 ;");
        }
        let _ = writeln!(o, "      timing () {{\n        related_pin : \"clk_i\" ;");
        if out {
            let _ = writeln!(o, "        timing_type : rising_edge ;");
            for t in ["cell_rise", "cell_fall"] {
                scalar(&mut o, t, access_ns);
            }
            for t in ["rise_transition", "fall_transition"] {
                scalar(&mut o, t, 0.02);
            }
        } else {
            let _ = writeln!(o, "        timing_type : setup_rising ;");
            for t in ["rise_constraint", "fall_constraint"] {
                scalar(&mut o, t, setup_ns);
            }
        }
        let _ = writeln!(o, "      }}\n    }}");
    }
    let _ = writeln!(o, "  }}\n}}");
    o
}

/// A worst path of a unit's logic timed with its RAMs as models, not as flops.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelPath {
    /// What the RAMs were: `ideal` (no delay, no setup, no area) or `macro` (the fits).
    pub rams: String,
    /// Critical path, ns.
    pub path_ns: f64,
    /// Start point.
    pub from: String,
    /// End point.
    pub to: String,
}

/// What the memory step found: the RAMs and the two model timings.
pub(crate) struct MemoryStep {
    pub figures: Vec<MemoryFigures>,
    /// (`ideal` or `macro`, the worst path).
    pub paths: Vec<(&'static str, TimingPath)>,
}

/// The memory step of a job whose reused children include RAMs: their figures as flops and
/// as the best-fitting named macros, and the logic timed twice more by OpenSTA, with every
/// RAM an ideal cell (`sta_ideal.log`) and, when every RAM has a fitting macro, with the
/// macros' timing (`sta_macro.log`). `children` are the job's child areas and `netlists`
/// the netlists the full timing read.
pub(crate) fn step(
    job: &SynthJob,
    budget: &mut run::Budget,
    children: &[ChildArea],
    netlists: &[PathBuf],
) -> Result<MemoryStep, SynthError> {
    let mut out = MemoryStep {
        figures: Vec::new(),
        paths: Vec::new(),
    };
    // The RAMs: children of the job, and those of its children (with their instances).
    let count = |module: &str| {
        children
            .iter()
            .find(|a| a.module == module)
            .map_or(0, |a| a.instances)
    };
    let mut rams: Vec<(RamSpec, MemoryFigures)> = Vec::new();
    for c in &job.reuse {
        if let Some(spec) = RamSpec::from_module_name(&c.module) {
            let f = MemoryFigures {
                module: c.module.clone(),
                instances: count(&c.module),
                words: spec.words,
                width: spec.width,
                lane: spec.lane,
                flop_area_um2: c.result.area_um2,
                flop_path_ns: c.result.critical_path_ns,
                netlist: c.result.netlist.clone(),
                ..MemoryFigures::default()
            };
            rams.push((spec, f));
            continue;
        }
        for f in &c.result.memories {
            let Some(spec) = RamSpec::from_module_name(&f.module) else {
                continue;
            };
            let n = f.instances * count(&c.module);
            match rams.iter_mut().find(|(_, g)| g.module == f.module) {
                Some((_, g)) => g.instances += n,
                None => rams.push((
                    spec,
                    MemoryFigures {
                        instances: n,
                        ..f.clone()
                    },
                )),
            }
        }
    }
    if rams.is_empty() {
        return Ok(out);
    }
    let mut macros = Vec::new();
    for m in &job.macros {
        macros.push((m.clone(), read_macro(m)?));
    }
    // Every copy of a RAM's netlist, at any depth, is replaced by its model.
    let copies: Vec<String> = rams
        .iter()
        .map(|(_, f)| format!("child_{}.v", f.module))
        .collect();
    let others: Vec<PathBuf> = netlists
        .iter()
        .filter(|n| {
            let name = n.file_name().and_then(|x| x.to_str()).unwrap_or("");
            !copies.iter().any(|c| c == name)
        })
        .cloned()
        .collect();
    let (mut ideal, mut real) = (others.clone(), Some(others));
    for (spec, mut f) in rams {
        let text =
            std::fs::read_to_string(&f.netlist).map_err(|e| SynthError::io(&f.netlist, e))?;
        let (ins, outs) = buffer::ports(&text);
        let write = |kind: &str, area: f64, access: f64, setup: f64| {
            let path = job.work_dir.join(format!("{kind}_{}.lib", f.module));
            let lib = model_liberty(&f.module, &ins, &outs, area, access, setup);
            std::fs::write(&path, lib).map_err(|e| SynthError::io(&path, e))?;
            Ok::<_, SynthError>(path)
        };
        ideal.push(write("ideal", 0.0, 0.0, 0.0)?);
        let fit = best_fit(&spec, &macros);
        real = match (&fit, real) {
            (Ok(fit), Some(mut r)) => {
                r.push(write("macro", fit.area_um2, fit.access_ns, fit.setup_ns)?);
                Some(r)
            }
            _ => None,
        };
        f.macro_note = fit.as_ref().err().cloned();
        f.macro_fit = fit.ok();
        out.figures.push(f);
    }
    let runs = [("ideal", Some(ideal)), ("macro", real)];
    for (kind, reads) in runs {
        let Some(reads) = reads else { continue };
        let s = sta::run(job, budget, &reads, &format!("sta_{kind}"))?;
        if let Some(w) = s.worst() {
            out.paths.push((kind, w.clone()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> MacroSpec {
        MacroSpec {
            liberty: PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/synth/fixtures/sram_64x64_m8.lib"
            )),
            cell: "sram_64x64_m8".into(),
            words: 64,
            width: 64,
            mask_bits: Some(8),
        }
    }

    #[test]
    fn reads_a_macro_and_tiles_rams_with_it() {
        let spec = fixture();
        let cell = read_macro(&spec).unwrap();
        assert_eq!(cell.area_um2, 12500.0);
        assert!((cell.access_ns - 0.412).abs() < 1e-9, "{cell:?}");
        assert!((cell.setup_ns - 0.091).abs() < 1e-9, "{cell:?}");
        let ram = RamSpec {
            words: 128,
            width: 256,
            lane: 8,
        };
        let f = fit(&ram, &spec, &cell).unwrap();
        assert_eq!((f.cols, f.rows, f.area_um2), (4, 2, 100_000.0));
        let nibbles = RamSpec {
            words: 128,
            width: 256,
            lane: 4,
        };
        assert!(fit(&nibbles, &spec, &cell)
            .unwrap_err()
            .contains("8-bit groups"));
        let words = MacroSpec {
            mask_bits: None,
            ..spec.clone()
        };
        assert!(fit(&nibbles, &words, &cell)
            .unwrap_err()
            .contains("whole words"));
        let plain = RamSpec {
            words: 32,
            width: 64,
            lane: 64,
        };
        assert_eq!(fit(&plain, &words, &cell).unwrap().rows, 1);
        assert!(best_fit(&ram, &[]).is_err());
        let other = MacroSpec {
            cell: "none".into(),
            ..spec
        };
        assert!(read_macro(&other).is_err());
    }

    #[test]
    fn model_liberty_has_a_clock_setups_and_clock_to_output_arcs() {
        let ins: Vec<String> = ["clk_i", "we_i", "wmask_i_1_"].map(String::from).to_vec();
        let outs = vec!["rdata_o_0_".to_string()];
        let lib = model_liberty("ram_4x2_be1", &ins, &outs, 10.0, 0.3, 0.05);
        for pin in [
            "pin (clk_i)",
            "pin (we_i)",
            "pin (wmask_i_1_)",
            "pin (rdata_o_0_)",
        ] {
            assert!(lib.contains(pin), "{pin}\n{lib}");
        }
        assert!(lib.contains("timing_type : rising_edge"));
        assert!(lib.contains("timing_type : setup_rising"));
        assert!(lib.contains("values (\"0.3000\")"));
    }

    /// A register, a RAM and an adder behind it: the RAM is mapped alone, the parent reuses
    /// it, and the memory step gives its figures, an ideal and a macro timing.
    #[test]
    fn a_unit_with_a_ram_is_reported_with_flops_macros_and_models() {
        use crate::hdl::ram::{place, RamPorts};
        use crate::hdl::ModuleBuilder;
        if !super::run::tools_present() {
            return;
        }
        let spec = RamSpec {
            words: 8,
            width: 16,
            lane: 8,
        };
        let mut m = ModuleBuilder::new("ram_user");
        let we = m.input("we_i", 1);
        let a = m.input("a_i", 3);
        let d = m.input("d_i", 16);
        let mask = m.input("mask_i", 2);
        let a_q = m.reg_next("a_q", None, &a, None);
        let ports = RamPorts {
            we: we.clone(),
            waddr: a.clone(),
            wdata: d.clone(),
            wmask: Some(mask),
            re: !&we,
            raddr: a_q,
        };
        let rd = place(&mut m, &spec, "u_ram", &ports).unwrap();
        let sum = m.reg_next("sum_q", None, &(&rd + &d), None);
        m.output_expr("sum_o", &sum);
        let top = m.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (name, text) in crate::hdl::emit::emit_design(&top).unwrap() {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            files.push(p);
        }
        let lib = super::super::Liberty::osu018().unwrap();
        let job = |top: &str, sub: &str| {
            let mut j = SynthJob::new(top, files.clone(), lib.clone(), dir.path().join(sub));
            j.clock_port = Some("clk_i".into());
            j.clock_ns = 4.0;
            j
        };
        let ram_name = spec.module_name();
        let child = super::super::synthesize(&job(&ram_name, "ram")).unwrap();
        let mut parent = job("ram_user", "user");
        parent.reuse = vec![super::super::ReusedChild {
            module: ram_name.clone(),
            result: child.clone(),
        }];
        parent.macros = vec![fixture()];
        let r = super::super::synthesize(&parent).unwrap();
        let f = &r.memories[..];
        assert_eq!(f.len(), 1, "{r:?}");
        assert_eq!(
            (f[0].module.as_str(), f[0].instances),
            (ram_name.as_str(), 1)
        );
        assert_eq!(f[0].flop_area_um2, child.area_um2);
        let fit = f[0].macro_fit.as_ref().expect("the fixture macro fits");
        assert_eq!((fit.cols, fit.rows), (1, 1));
        let kinds: Vec<&str> = r.model_paths.iter().map(|p| p.rams.as_str()).collect();
        assert_eq!(kinds, ["ideal", "macro"]);
        // The macro's 0.412 ns clock-to-output comes before the adder: the macro path is
        // the longer one.
        assert!(
            r.model_paths[1].path_ns > r.model_paths[0].path_ns + 0.3,
            "{r:?}"
        );
        assert!(r.own_area_um2.unwrap() < r.area_um2);
    }
}
