//! OpenSTA step: renders `synth/sta.tcl.in`, runs it on `netlist.v` under the budget and parses
//! `report_checks` / `report_wns` / `report_tns`.

use std::path::{Path, PathBuf};

use super::{run, SynthError, SynthJob};

pub(crate) const STA_TEMPLATE: &str = include_str!("../../synth/sta.tcl.in");
const DONE: &str = "HWZIP_STA_DONE";

/// Output load on every primary output, in pF (10 fF; the toolchain note's `set_load 0.01`
/// assumes a pF library, so the value is converted to each library's capacitance unit).
pub const OUTPUT_LOAD_PF: f64 = 0.01;

/// One path from `report_checks` (times in the library's time unit).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimingPath {
    pub from: String,
    pub to: String,
    pub group: String,
    pub arrival: f64,
    pub slack: f64,
    /// Cells on the path between start and end point (logic levels; the launching and
    /// capturing flip-flops are not counted).
    pub levels: u32,
}

/// Parsed STA report (times in the library's time unit).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StaOutcome {
    pub paths: Vec<TimingPath>,
    pub wns: Option<f64>,
    pub tns: Option<f64>,
    pub seconds: f64,
}

impl StaOutcome {
    /// The path with the smallest slack.
    pub fn worst(&self) -> Option<&TimingPath> {
        self.paths.iter().min_by(|a, b| a.slack.total_cmp(&b.slack))
    }
}

fn tcl_braced(s: &str, what: &str) -> Result<String, SynthError> {
    if s.contains(['{', '}', '\n', '\\']) {
        return Err(SynthError::Parse {
            what: format!("{what} without braces, backslashes or newlines"),
            found: s.to_string(),
            log: Path::new(s).to_path_buf(),
        });
    }
    Ok(s.to_string())
}

/// Renders the STA script for `job`.
/// `children`: netlists of the modules below the top (hierarchical synthesis), read first;
/// a `.lib` among them is read as a liberty (a memory's timing model).
pub(crate) fn render_script(job: &SynthJob, children: &[PathBuf]) -> Result<String, SynthError> {
    let lib = &job.liberty;
    let period = lib.ns_to_lib_time(job.clock_ns);
    let load = OUTPUT_LOAD_PF / lib.cap_unit_pf;
    let mut reads = String::new();
    for n in children {
        let cmd = match n.extension().and_then(|e| e.to_str()) {
            Some("lib") => "read_liberty",
            _ => "read_verilog",
        };
        reads.push_str(&format!(
            "{cmd} {{{}}}\n",
            tcl_braced(&n.to_string_lossy(), "netlist path")?
        ));
    }
    if reads.is_empty() {
        reads.push_str("# (none)");
    }
    Ok(STA_TEMPLATE
        .replace("@READ_CHILD_NETLISTS@", reads.trim_end())
        .replace(
            "@LIBERTY@",
            &tcl_braced(&lib.path.to_string_lossy(), "liberty path")?,
        )
        .replace("@TOP@", &tcl_braced(&job.top, "top module name")?)
        .replace(
            "@CLOCK_PORT@",
            &tcl_braced(job.clock_port.as_deref().unwrap_or(""), "clock port")?,
        )
        .replace("@PERIOD@", &format!("{period}"))
        .replace("@LOAD@", &format!("{load}")))
}

/// Runs OpenSTA in `job.work_dir` (script `<name>.tcl`, log `<name>.log`) on the netlist
/// written by Yosys, with the netlists of the modules below it (`children`, hierarchical
/// synthesis).
pub(crate) fn run(
    job: &SynthJob,
    budget: &mut run::Budget,
    children: &[PathBuf],
    name: &str,
) -> Result<StaOutcome, SynthError> {
    let dir = &job.work_dir;
    let script = render_script(job, children)?;
    let tcl_name = format!("{name}.tcl");
    let tcl = dir.join(&tcl_name);
    std::fs::write(&tcl, script).map_err(|e| SynthError::io(&tcl, e))?;
    let log = dir.join(format!("{name}.log"));
    let seconds = run::run_with_budget(
        "sta",
        &["-no_init", "-no_splash", &tcl_name],
        dir,
        &log,
        budget,
    )?;
    let bytes = std::fs::read(&log).map_err(|e| SynthError::io(&log, e))?;
    let text = String::from_utf8_lossy(&bytes);
    // The 2019 sta exits 0 even after errors (it drops to its prompt and reads EOF).
    let has_error = text.lines().any(|l| l.trim_start().starts_with("Error"));
    if has_error || !text.contains(DONE) {
        return Err(SynthError::ToolFailed {
            tool: "sta",
            code: None,
            log: log.clone(),
            tail: error_lines_and_tail(&text, &log),
        });
    }
    let mut out = parse_report(&text);
    out.seconds = seconds;
    Ok(out)
}

/// `Error` lines first (sta keeps going after most errors), then the end of the log.
fn error_lines_and_tail(text: &str, log: &Path) -> String {
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("Error"))
        .take(10)
        .collect();
    let tail = run::log_tail(log, 15);
    if errors.is_empty() {
        tail
    } else {
        format!("{}\n...\n{tail}", errors.join("\n"))
    }
}

fn first_number(line: &str) -> Option<f64> {
    line.split_whitespace().next()?.parse().ok()
}

fn point_name(rest: &str) -> String {
    let rest = rest.trim();
    match rest.find(" (") {
        Some(i) => rest[..i].to_string(),
        None => rest.to_string(),
    }
}

#[derive(Default)]
struct PartialPath {
    from: String,
    to: String,
    group: String,
    arrival: Option<f64>,
    slack: Option<f64>,
    levels: u32,
}

impl PartialPath {
    fn finish(self) -> Option<TimingPath> {
        Some(TimingPath {
            from: self.from,
            to: self.to,
            group: self.group,
            arrival: self.arrival?,
            slack: self.slack?,
            levels: self.levels,
        })
    }
}

/// Parses the text of `report_checks` + `report_wns` + `report_tns`.
pub(crate) fn parse_report(text: &str) -> StaOutcome {
    let mut paths = Vec::new();
    let mut wns = None;
    let mut tns = None;
    let mut cur: Option<PartialPath> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Startpoint:") {
            paths.extend(cur.take().and_then(PartialPath::finish));
            cur = Some(PartialPath {
                from: point_name(rest),
                ..PartialPath::default()
            });
        } else if let Some(c) = cur.as_mut() {
            if let Some(rest) = t.strip_prefix("Endpoint:") {
                c.to = point_name(rest);
            } else if let Some(rest) = t.strip_prefix("Path Group:") {
                c.group = rest.trim().to_string();
            } else if t.ends_with("data arrival time") && c.arrival.is_none() {
                c.arrival = first_number(t);
            } else if t.contains("slack (") && c.slack.is_none() {
                c.slack = first_number(t);
            } else if c.arrival.is_none() {
                // `delay time ^|v inst/PIN (CELL)`: one line per cell output on the path.
                let f: Vec<&str> = t.split_whitespace().collect();
                if f.len() == 5
                    && (f[2] == "^" || f[2] == "v")
                    && f[0].parse::<f64>().is_ok()
                    && f[4].starts_with('(')
                {
                    let inst = f[3].split('/').next().unwrap_or("");
                    if f[3].contains('/') && inst != c.from && inst != c.to {
                        c.levels += 1;
                    }
                }
            }
        }
        if let Some(rest) = t.strip_prefix("wns ") {
            wns = rest.trim().parse().ok();
        } else if let Some(rest) = t.strip_prefix("tns ") {
            tns = rest.trim().parse().ok();
        }
    }
    paths.extend(cur.take().and_then(PartialPath::finish));
    StaOutcome {
        paths,
        wns,
        tns,
        seconds: 0.0,
    }
}

/// Runs the OpenSTA script `script` (a file name in `dir`) in `dir` under `budget`, its
/// output in `log`; returns the seconds it took. For scripts other than the timing one
/// (the energy step's `report_power`).
pub fn run_script(
    script: &str,
    dir: &Path,
    log: &Path,
    budget: std::time::Duration,
) -> Result<f64, SynthError> {
    run::run_with_budget(
        "sta",
        &["-no_init", "-no_splash", script],
        dir,
        log,
        &mut run::Budget::new(budget),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "Startpoint: rst_ni (input port clocked by clk)
Endpoint: _82_ (recovery check against rising-edge clock clk)
Path Group: **async_default**
Path Type: max
            0.000   data arrival time
            5.117   data required time
           -0.000   data arrival time
            5.117   slack (MET)


Startpoint: a_i_0_ (input port clocked by clk)
Endpoint: _89_ (rising edge-triggered flip-flop clocked by clk)
Path Group: clk
Path Type: max
   0.000    0.000 ^ a_i_0_ (in)
   0.500    0.500 v _12_/Y (NAND2X1)
   0.471    0.971 ^ _13_/Y (INVX1)
   0.000    0.971 ^ _89_/D (DFFSR)
            0.971   data arrival time
            4.908   data required time
           -0.971   data arrival time
-----------------------------------------------------------
            3.937   slack (MET)


wns 0.000
tns -1.250
HWZIP_STA_DONE
";

    #[test]
    fn parses_report() {
        let r = parse_report(REPORT);
        assert_eq!(r.paths.len(), 2);
        let w = r.worst().expect("worst");
        assert_eq!(w.from, "a_i_0_");
        assert_eq!(w.to, "_89_");
        assert_eq!(w.group, "clk");
        assert_eq!(w.arrival, 0.971);
        assert_eq!(w.slack, 3.937);
        assert_eq!(w.levels, 2);
        assert_eq!(r.wns, Some(0.0));
        assert_eq!(r.tns, Some(-1.25));
    }

    #[test]
    fn empty_report_has_no_paths() {
        let r = parse_report("No paths found.\n");
        assert!(r.paths.is_empty());
        assert!(r.worst().is_none());
    }
}
