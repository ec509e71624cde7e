//! Yosys step: renders `synth/flow.ys.in`, runs it under the budget and parses `stat -liberty`.

use std::collections::BTreeMap;
use std::path::Path;

use super::liberty::Liberty;
use super::{run, SynthError, SynthJob};

pub(crate) const FLOW_TEMPLATE: &str = include_str!("../../synth/flow.ys.in");
pub(crate) const TAIL_FLAT: &str = include_str!("../../synth/tail_flat.ys.in");
pub(crate) const TAIL_REUSE: &str = include_str!("../../synth/tail_reuse.ys.in");
pub(crate) const ABC_TEMPLATE: &str = include_str!("../../synth/abc.script.in");
pub(crate) const SYNTH_FAST: &str = include_str!("../../synth/synth_fast.ys.in");
pub(crate) const ABC_FAST_TEMPLATE: &str = include_str!("../../synth/abc_fast.script.in");

/// What the Yosys step produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct YosysOutcome {
    /// The netlist's cells; for a hierarchical job the parent's own (the reused children
    /// are cells of unknown area, removed from `unknown_area`).
    pub stat: Stat,
    pub latch_signals: Vec<String>,
    pub seconds: f64,
}

/// Parsed `stat -liberty` section for the top module.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Stat {
    pub cells: u64,
    pub cell_types: BTreeMap<String, u64>,
    pub area_um2: Option<f64>,
    pub unknown_area: Vec<String>,
}

impl Stat {
    /// Flip-flop cells: liberty cells with an `ff` group, or unmapped Yosys flop primitives.
    pub fn count_flops(&self, lib: &Liberty) -> u64 {
        self.count(|t| lib.flop_cells.contains(t) || is_yosys_flop(t))
    }

    /// Latch cells: liberty cells with a `latch` group, or Yosys latch primitives.
    pub fn count_latches(&self, lib: &Liberty) -> u64 {
        self.count(|t| lib.latch_cells.contains(t) || is_yosys_latch(t))
    }

    fn count(&self, pred: impl Fn(&str) -> bool) -> u64 {
        self.cell_types
            .iter()
            .filter(|(t, _)| pred(t))
            .map(|(_, n)| *n)
            .sum()
    }
}

fn is_yosys_flop(t: &str) -> bool {
    [
        "$_DFF", "$_SDFF", "$_ALDFF", "$_DFFSR", "$dff", "$adff", "$sdff", "$aldff",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

fn is_yosys_latch(t: &str) -> bool {
    ["$_DLATCH", "$_SR_", "$dlatch", "$adlatch", "$sr"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// Quotes a path for a Yosys script line.
fn quote(p: &Path) -> Result<String, SynthError> {
    let s = p.to_string_lossy();
    if s.contains('"') || s.contains('\n') {
        return Err(SynthError::Parse {
            what: "a path without quotes or newlines".into(),
            found: s.into_owned(),
            log: p.to_path_buf(),
        });
    }
    Ok(format!("\"{s}\""))
}

/// The module a generated source `<module>.v` holds (its file stem).
pub(crate) fn module_of(v: &Path) -> Option<&str> {
    v.file_stem().and_then(|s| s.to_str())
}

fn absolute(v: &Path) -> Result<std::path::PathBuf, SynthError> {
    Ok(if v.is_absolute() {
        v.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| SynthError::io(v, e))?
            .join(v)
    })
}

/// Renders the Yosys script for `job` (absolute Verilog paths, period in ps). The sources of
/// reused children ([`SynthJob::reuse`]) are read as black boxes (`-lib`): Yosys maps and
/// writes the parent's own logic, and the children's netlists come from their own runs.
pub(crate) fn render_script(job: &SynthJob) -> Result<String, SynthError> {
    let reused = |v: &Path| job.reuse.iter().any(|c| module_of(v) == Some(&c.module));
    let mut read = String::new();
    for v in &job.verilog {
        let lib = if reused(v) { " -lib" } else { "" };
        read.push_str(&format!(
            "read_verilog -sv{} {}\n",
            lib,
            quote(&absolute(v)?)?
        ));
    }
    let lib = job.liberty.path.to_string_lossy();
    if lib.contains('"') {
        return Err(SynthError::LibertyParse {
            path: job.liberty.path.clone(),
            what: "a liberty path without quotes".into(),
        });
    }
    let tail = if job.reuse.is_empty() {
        TAIL_FLAT.to_string()
    } else {
        let sel: Vec<String> = job.reuse.iter().map(|c| format!("={}", c.module)).collect();
        TAIL_REUSE.replace("@CHILDREN@", &sel.join(" "))
    };
    let synth = match job.effort {
        crate::config::Effort::Full => "synth -flatten -top @TOP@",
        crate::config::Effort::Fast => SYNTH_FAST.trim_end(),
    };
    Ok(FLOW_TEMPLATE
        .replace("@TAIL@", tail.trim_end())
        .replace("@SYNTH@", synth)
        .replace("@READ_VERILOG@", read.trim_end())
        .replace("@TOP@", &job.top)
        .replace("@LIBERTY@", &lib)
        .replace("@PERIOD_PS@", &period_ps(job.clock_ns).to_string()))
}

fn period_ps(clock_ns: f64) -> u64 {
    (clock_ns * 1000.0).round().max(1.0) as u64
}

/// Runs Yosys in `job.work_dir` (log: `yosys.log`) and parses the results.
pub(crate) fn run(job: &SynthJob, budget: &mut run::Budget) -> Result<YosysOutcome, SynthError> {
    let dir = &job.work_dir;
    let script = render_script(job)?;
    let abc = match job.effort {
        crate::config::Effort::Full => ABC_TEMPLATE,
        crate::config::Effort::Fast => ABC_FAST_TEMPLATE,
    }
    .replace("@PERIOD_PS@", &period_ps(job.clock_ns).to_string())
    .replace("@FANOUT@", &job.buffer_fanout.to_string());
    write(&dir.join("flow.ys"), &script)?;
    write(&dir.join("abc.script"), &abc)?;
    let stat_path = dir.join("stat.txt");
    let _ = std::fs::remove_file(&stat_path);
    let _ = std::fs::remove_file(dir.join("netlist.v"));
    let _ = std::fs::remove_file(dir.join("netlist.blif"));
    let log = dir.join("yosys.log");
    let seconds = run::run_with_budget("yosys", &["-s", "flow.ys"], dir, &log, budget)?;
    let stat_text = std::fs::read(&stat_path).map_err(|e| SynthError::io(&stat_path, e))?;
    let stat = parse_stat(&String::from_utf8_lossy(&stat_text), &job.top).ok_or_else(|| {
        SynthError::Parse {
            what: format!(
                "a `stat -liberty` section `=== {} ===` with a cell count",
                job.top
            ),
            found: run::log_tail(&stat_path, 10),
            log: stat_path.clone(),
        }
    })?;
    let mut stat = stat;
    // A reused child is a cell of unknown area in the parent's own statistics.
    stat.unknown_area
        .retain(|t| !job.reuse.iter().any(|c| &c.module == t));
    let log_text = std::fs::read(&log).map_err(|e| SynthError::io(&log, e))?;
    let latch_signals = parse_latch_signals(&String::from_utf8_lossy(&log_text));
    Ok(YosysOutcome {
        stat,
        latch_signals,
        seconds,
    })
}

/// Turns the BLIF netlist Yosys wrote into `netlist.v` ([`super::blif`]); call it once the
/// statistics were checked (a latch, which the flow rejects, has no Verilog form here).
pub(crate) fn write_netlist(job: &SynthJob) -> Result<(), SynthError> {
    let blif = job.work_dir.join("netlist.blif");
    let text = std::fs::read_to_string(&blif).map_err(|e| SynthError::io(&blif, e))?;
    let verilog = super::blif::to_verilog(&text, &job.top).map_err(|e| SynthError::Parse {
        what: format!("a mapped BLIF netlist of {}", job.top),
        found: e,
        log: blif.clone(),
    })?;
    write(&job.work_dir.join("netlist.v"), &verilog)?;
    let _ = std::fs::remove_file(&blif);
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), SynthError> {
    std::fs::write(path, text).map_err(|e| SynthError::io(path, e))
}

/// Parses the `stat` output section of module `top`.
pub(crate) fn parse_stat(text: &str, top: &str) -> Option<Stat> {
    let mut stat = Stat::default();
    let mut in_top = false;
    let mut in_cells = false;
    let mut seen_cells = false;
    let header = format!("=== {top} ===");
    let header_esc = format!("=== \\{top} ===");
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("===") {
            if seen_cells {
                break;
            }
            in_top = t == header || t == header_esc;
            continue;
        }
        if !in_top {
            continue;
        }
        if let Some(rest) = t.strip_prefix("Number of cells:") {
            stat.cells = rest.trim().parse().ok()?;
            in_cells = true;
            seen_cells = true;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Area for cell type ") {
            if let Some(ty) = rest.strip_suffix(" is unknown!") {
                stat.unknown_area
                    .push(ty.trim_start_matches('\\').to_string());
            }
            continue;
        }
        if t.starts_with("Chip area for module") {
            stat.area_um2 = t.rsplit(':').next().and_then(|a| a.trim().parse().ok());
            continue;
        }
        if in_cells {
            if t.is_empty() {
                in_cells = false;
                continue;
            }
            let mut parts = t.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(ty), Some(n), None) => {
                    if let Ok(n) = n.parse::<u64>() {
                        *stat
                            .cell_types
                            .entry(ty.trim_start_matches('\\').to_string())
                            .or_default() += n;
                    }
                }
                _ => in_cells = false,
            }
        }
    }
    seen_cells.then_some(stat)
}

/// Signals named by `proc_dlatch`'s "Latch inferred for signal `\mod.\sig' ..." messages.
pub(crate) fn parse_latch_signals(log: &str) -> Vec<String> {
    let mut out: Vec<String> = log
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Latch inferred for signal `"))
        .filter_map(|r| r.split('\'').next())
        .map(|s| s.replace('\\', ""))
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "
9. Printing statistics.

=== reg_adder8 ===

   Number of wires:                 71
   Number of cells:                 45
     AND2X2                          3
     DFFSR                           8
     NAND2X1                        10
     XOR2X1                          5
     $_DLATCH_P_                     1

   Area for cell type $_DLATCH_P_ is unknown!

   Chip area for module '\\reg_adder8': 2749.000000
";

    #[test]
    fn parses_stat() {
        let s = parse_stat(STAT, "reg_adder8").expect("stat");
        assert_eq!(s.cells, 45);
        assert_eq!(s.cell_types.get("DFFSR"), Some(&8));
        assert_eq!(s.cell_types.len(), 5);
        assert_eq!(s.area_um2, Some(2749.0));
        assert_eq!(s.unknown_area, vec!["$_DLATCH_P_".to_string()]);
        assert!(parse_stat(STAT, "other").is_none());
        assert!(parse_stat("garbage", "reg_adder8").is_none());
    }

    #[test]
    fn parses_latch_messages() {
        let log = "Latch inferred for signal `\\latch_bug.\\q_o' from process `x': y\nother";
        assert_eq!(parse_latch_signals(log), vec!["latch_bug.q_o".to_string()]);
    }
}
