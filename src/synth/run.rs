//! Child-process runner with a time budget: output goes to a log file, and the whole process
//! group (e.g. Yosys and its `yosys-abc` children) is killed when the budget runs out.
//!
//! The budget counts **CPU time** of the tool's process group (user + system time of every
//! process in it, including children it already reaped), read from `/proc`. A busy machine
//! stretches a run's wall time but not its CPU time, so a job that fits on a quiet machine
//! also fits on a loaded one. A wall-clock backstop of [`WALL_FACTOR`] times the CPU budget
//! catches a tool that waits without computing; the error says which limit ran out.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::SynthError;

/// The wall-clock backstop is this many times the CPU budget.
pub const WALL_FACTOR: u32 = 4;

/// Which limit of a [`Budget`] ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// CPU seconds of the tool's process group.
    Cpu,
    /// The wall-clock backstop.
    Wall,
}

/// The time a job (several tool runs) may take, and what it has used so far.
#[derive(Clone, Debug)]
pub struct Budget {
    cpu: Duration,
    started: Instant,
    cpu_used: f64,
    progress: Option<super::ToolProgress>,
}

impl Budget {
    /// A budget of `cpu` CPU time (and [`WALL_FACTOR`] × `cpu` of wall time) starting now.
    pub fn new(cpu: Duration) -> Budget {
        Budget {
            cpu,
            started: Instant::now(),
            cpu_used: 0.0,
            progress: None,
        }
    }

    /// The same budget, telling `p` the CPU and wall seconds while a tool runs.
    pub fn with_progress(mut self, p: super::ToolProgress) -> Budget {
        self.progress = Some(p);
        self
    }

    /// The CPU budget, seconds.
    pub fn cpu_seconds(&self) -> f64 {
        self.cpu.as_secs_f64()
    }

    /// The wall-clock backstop, seconds.
    pub fn wall_seconds(&self) -> f64 {
        self.cpu.as_secs_f64() * f64::from(WALL_FACTOR)
    }

    /// CPU seconds used by the tools run so far.
    pub fn cpu_used(&self) -> f64 {
        self.cpu_used
    }

    /// The limit that has run out with `cpu_now` more CPU seconds in use, if any.
    fn exceeded(&self, cpu_now: f64) -> Option<Limit> {
        if self.cpu_used + cpu_now > self.cpu_seconds() {
            Some(Limit::Cpu)
        } else if self.started.elapsed().as_secs_f64() > self.wall_seconds() {
            Some(Limit::Wall)
        } else {
            None
        }
    }

    fn error(&self, tool: &'static str, limit: Limit, cpu_now: f64, log: &Path) -> SynthError {
        SynthError::Budget {
            tool,
            limit,
            budget_s: self.cpu_seconds(),
            cpu_s: self.cpu_used + cpu_now,
            wall_s: self.started.elapsed().as_secs_f64(),
            log: log.to_path_buf(),
        }
    }
}

/// Resolves a tool binary: `$HWZIP_<TOOL>` (e.g. `HWZIP_YOSYS`, `HWZIP_STA`) or the plain name.
pub(crate) fn tool_program(tool: &str) -> String {
    let var = format!("HWZIP_{}", tool.to_ascii_uppercase());
    match std::env::var(&var) {
        Ok(v) if !v.trim().is_empty() => v,
        _ => tool.to_string(),
    }
}

/// CPU seconds (user + system, own and reaped children's) of every process in group `pgid`,
/// from `/proc/<pid>/stat`. Processes that exit while the directory is read are skipped.
pub(crate) fn group_cpu_seconds(pgid: u32) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    let mut ticks = 0u64;
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", pid)) else {
            continue;
        };
        if let Some((group, t)) = parse_proc_stat(&stat) {
            if group == pgid {
                ticks += t;
            }
        }
    }
    ticks as f64 / hz
}

/// The process group and utime + stime + cutime + cstime (clock ticks) of a
/// `/proc/<pid>/stat` line.
fn parse_proc_stat(stat: &str) -> Option<(u32, u64)> {
    // The command name is in parentheses and may contain spaces: fields start after the
    // last `)`. Field 3 (state) is the first after it; pgrp is field 5, times 14-17.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i - 3).and_then(|s| s.parse::<u64>().ok());
    let group = u32::try_from(num(5)?).ok()?;
    Some((group, num(14)? + num(15)? + num(16)? + num(17)?))
}

/// Runs `tool args...` in `cwd` with stdout+stderr written to `log`, until it exits or
/// `budget` runs out (its CPU time is added to the budget's). Returns the tool's wall time
/// in seconds.
pub(crate) fn run_with_budget(
    tool: &'static str,
    args: &[&str],
    cwd: &Path,
    log: &Path,
    budget: &mut Budget,
) -> Result<f64, SynthError> {
    run_program(tool, &tool_program(tool), args, cwd, log, budget)
}

/// [`run_with_budget`] with the program to run given (`tool` names it in errors).
pub(crate) fn run_program(
    tool: &'static str,
    program: &str,
    args: &[&str],
    cwd: &Path,
    log: &Path,
    budget: &mut Budget,
) -> Result<f64, SynthError> {
    run_program_env(tool, program, args, &[], cwd, log, budget)
}

/// [`run_program`] with variables `envs` set in the tool's environment.
pub(crate) fn run_program_env(
    tool: &'static str,
    program: &str,
    args: &[&str],
    envs: &[(&str, std::ffi::OsString)],
    cwd: &Path,
    log: &Path,
    budget: &mut Budget,
) -> Result<f64, SynthError> {
    if let Some(limit) = budget.exceeded(0.0) {
        return Err(budget.error(tool, limit, 0.0, log));
    }
    let out = File::create(log).map_err(|e| SynthError::io(log, e))?;
    let err = out.try_clone().map_err(|e| SynthError::io(log, e))?;
    let program = program.to_string();
    let t0 = Instant::now();
    let mut child = crate::proc::spawn(
        Command::new(&program)
            .args(args)
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err),
    )
    .map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SynthError::ToolNotFound {
            tool,
            program: program.clone(),
        },
        _ => SynthError::io(Path::new(&program), e),
    })?;
    let pgid = child.child().id();
    let mut cpu = 0.0;
    let mut polls = 0u32;
    loop {
        match child.child().try_wait() {
            Ok(Some(status)) => {
                budget.cpu_used += cpu;
                let secs = t0.elapsed().as_secs_f64();
                if status.success() {
                    return Ok(secs);
                }
                return Err(SynthError::ToolFailed {
                    tool,
                    code: status.code(),
                    log: log.to_path_buf(),
                    tail: log_tail(log, 25),
                });
            }
            Ok(None) => {}
            Err(e) => return Err(SynthError::io(log, e)),
        }
        // Exits are seen within 10 ms; the group's CPU time is read every 100 ms at first,
        // then every 500 ms (a scan of /proc).
        if polls.is_multiple_of(if polls < 100 { 10 } else { 50 }) {
            cpu = cpu.max(group_cpu_seconds(pgid));
            if let Some(p) = &budget.progress {
                (p.0)(
                    tool,
                    budget.cpu_used + cpu,
                    budget.started.elapsed().as_secs_f64(),
                );
            }
        }
        polls = polls.wrapping_add(1);
        if let Some(limit) = budget.exceeded(cpu) {
            child.kill_group();
            let e = budget.error(tool, limit, cpu, log);
            budget.cpu_used += cpu;
            return Err(e);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The last `n` lines of a log file (empty if unreadable).
pub(crate) fn log_tail(log: &Path, n: usize) -> String {
    let Ok(bytes) = std::fs::read(log) else {
        return String::new();
    };
    tail_without_banner(&String::from_utf8_lossy(&bytes), n)
}

/// The last `n` lines of a tool's log that say something: without blank lines and without
/// the boxed licence banner Yosys prints first (lines of `/---`, `|`, `\---`), which would
/// otherwise fill the tail of a log that fails early.
fn tail_without_banner(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.is_empty() || t.starts_with('|') || t.starts_with("/--") || t.starts_with("\\--"))
        })
        .collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Whether Yosys and OpenSTA run here (tests that need them skip, saying so, when not).
#[cfg(test)]
pub(crate) fn tools_present() -> bool {
    let ok = ["yosys", "sta"].iter().all(|t| {
        crate::proc::status(
            std::process::Command::new(tool_program(t))
                .arg("-version")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null()),
        )
        .is_ok()
    });
    if !ok {
        eprintln!("yosys/sta not installed; skipping (run scripts/setup.sh)");
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_tail_skips_the_banner() {
        let log = " /------\\\n |  yosys -- Yosys  |\n |  Copyright  |\n \\------/\n\n \
                   Yosys 0.23\n\n1. Executing Verilog-2005 frontend: t.bin\n\
                   t.bin:1: ERROR: syntax error\n";
        assert_eq!(
            tail_without_banner(log, 25),
            " Yosys 0.23\n1. Executing Verilog-2005 frontend: t.bin\nt.bin:1: ERROR: syntax error"
        );
    }

    #[test]
    fn proc_stat_fields() {
        let line = "1234 (yosys abc) R 1 1200 1200 0 -1 4194304 100 0 0 0 250 30 7 3 20 0 1 0";
        assert_eq!(parse_proc_stat(line), Some((1200, 290)));
        assert_eq!(parse_proc_stat("garbage"), None);
    }

    #[test]
    fn cpu_budget_kills_a_busy_tool_and_says_so() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let log = tmp.path().join("spin.log");
        let mut b = Budget::new(Duration::from_millis(300));
        // `sh` stands in for a tool through $HWZIP_SH (unset: the plain name).
        let e = run_with_budget(
            "sh",
            &["-c", "echo started; while :; do :; done"],
            tmp.path(),
            &log,
            &mut b,
        )
        .expect_err("budget");
        match &e {
            SynthError::Budget {
                limit: Limit::Cpu,
                cpu_s,
                ..
            } => assert!(*cpu_s >= 0.3, "{e}"),
            other => panic!("expected a CPU budget error, got {other:?}"),
        }
        assert!(e.to_string().contains("CPU-time budget"), "{e}");
        // The partial log is kept.
        assert!(std::fs::read_to_string(&log).unwrap().contains("started"));
    }

    #[test]
    fn an_idle_tool_hits_the_wall_clock_backstop() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let log = tmp.path().join("sleep.log");
        // 50 ms of CPU: a 200 ms wall backstop, which `sleep` reaches without using CPU.
        let mut b = Budget::new(Duration::from_millis(50));
        let e = run_with_budget("sleep", &["5"], tmp.path(), &log, &mut b).expect_err("budget");
        assert!(
            matches!(
                e,
                SynthError::Budget {
                    limit: Limit::Wall,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("wall-clock"), "{e}");
    }
}
