//! Child-process runner with a wall-clock budget: output goes to a log file, and the whole
//! process group (e.g. Yosys and its `yosys-abc` children) is killed when the budget runs out.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::SynthError;

/// Resolves a tool binary: `$HWZIP_<TOOL>` (e.g. `HWZIP_YOSYS`, `HWZIP_STA`) or the plain name.
pub(crate) fn tool_program(tool: &str) -> String {
    let var = format!("HWZIP_{}", tool.to_ascii_uppercase());
    match std::env::var(&var) {
        Ok(v) if !v.trim().is_empty() => v,
        _ => tool.to_string(),
    }
}

/// Runs `tool args...` in `cwd` with stdout+stderr appended to `log`, until it exits or
/// `budget` (measured from `started`) is spent. Returns the tool's wall time in seconds.
pub(crate) fn run_with_budget(
    tool: &'static str,
    args: &[&str],
    cwd: &Path,
    log: &Path,
    started: Instant,
    budget: Duration,
) -> Result<f64, SynthError> {
    let budget_err = || SynthError::Budget {
        tool,
        seconds: budget.as_secs_f64(),
        log: log.to_path_buf(),
    };
    if started.elapsed() >= budget {
        return Err(budget_err());
    }
    let out = File::create(log).map_err(|e| SynthError::io(log, e))?;
    let err = out.try_clone().map_err(|e| SynthError::io(log, e))?;
    let program = tool_program(tool);
    let t0 = Instant::now();
    let mut child = crate::proc::spawn(
        Command::new(&program)
            .args(args)
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
    loop {
        match child.child().try_wait() {
            Ok(Some(status)) => {
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
        let elapsed = started.elapsed();
        if elapsed >= budget {
            child.kill_group();
            return Err(budget_err());
        }
        std::thread::sleep((budget - elapsed).min(Duration::from_millis(10)));
    }
}

/// The last `n` lines of a log file (empty if unreadable).
pub(crate) fn log_tail(log: &Path, n: usize) -> String {
    let Ok(bytes) = std::fs::read(log) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
