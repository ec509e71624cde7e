//! One step of a flow run: how it ended, what it reports, and the log a failed one keeps.

use super::progress::Step;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How a step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// It ran and its result is in the report.
    Ok,
    /// It ran, but the unit does not match its golden model.
    Mismatch,
    /// It failed (tool error, budget, build error); its error and log are in the step.
    Failed,
    /// Not run: `--fail-fast` after an earlier failure.
    Skipped,
}

impl StepStatus {
    /// Name as in the reports.
    pub fn name(self) -> &'static str {
        match self {
            StepStatus::Ok => "ok",
            StepStatus::Mismatch => "MISMATCH",
            StepStatus::Failed => "FAILED",
            StepStatus::Skipped => "skipped",
        }
    }
}

/// Wall time and outcome of one step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepTime {
    /// `gen`, `cosim`, `synth`, `cores` (a paper's core table), `tables`, `gate` or
    /// `energy`.
    pub kind: String,
    /// What ran (engine, unit, library).
    pub what: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Cached result, rate, or other detail; for a failed step, the first line of its error.
    pub detail: String,
    /// How it ended.
    pub status: StepStatus,
    /// A failed step's whole error message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A failed step's log (copied into the report directory's `logs/`), or a mismatching
    /// unit's waveform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<PathBuf>,
}

impl StepTime {
    /// A step that ended well.
    pub fn ok(kind: &'static str, what: String, seconds: f64, detail: String) -> StepTime {
        StepTime {
            kind: kind.into(),
            what,
            seconds,
            detail,
            status: StepStatus::Ok,
            error: None,
            log: None,
        }
    }

    /// A step that failed with `error`; its log (the first existing file the message names,
    /// preferring `.log` files) is copied into `out/logs/`.
    pub fn failed(
        kind: &'static str,
        what: String,
        seconds: f64,
        error: &str,
        out: &Path,
    ) -> StepTime {
        let log = keep_log(error, out, &format!("{} {}", kind, what));
        StepTime {
            kind: kind.into(),
            detail: without_log_path(&first_line(error)),
            log,
            what,
            seconds,
            status: StepStatus::Failed,
            error: Some(error.to_string()),
        }
    }

    /// Whether it failed or mismatched.
    pub fn is_failure(&self) -> bool {
        matches!(self.status, StepStatus::Failed | StepStatus::Mismatch)
    }
}

/// The first non-empty line of an error message, at most 300 characters.
fn first_line(msg: &str) -> String {
    let l = msg
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    match l.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &l[..i]),
        None => l.to_string(),
    }
}

/// `line` without a trailing `; partial log: <path>` (the report's log column names the kept copy).
fn without_log_path(line: &str) -> String {
    match line.rfind("; partial log: ") {
        Some(i) => line[..i].to_string(),
        None => line.to_string(),
    }
}

/// The files an error message names (paths that exist), `.log` files first.
fn named_files(msg: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = msg
        .split(|c: char| c.is_whitespace() || c == '`' || c == '\'')
        .map(|t| t.trim_end_matches([',', ';', ':', ')', '.']))
        .filter(|t| t.contains('/'))
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .collect();
    v.sort_by_key(|p| p.extension().is_none_or(|x| x != "log"));
    v.dedup();
    v
}

/// Copies the log an error names into `out/logs/<step>.log` (kept when a cache entry or
/// work folder is redone) and returns the copy's path; the original when it cannot be copied.
fn keep_log(msg: &str, out: &Path, step: &str) -> Option<PathBuf> {
    let src = named_files(msg).into_iter().next()?;
    let dir = out.join("logs");
    let name: String = step
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let dst = dir.join(format!("{}.log", name));
    let copied = std::fs::create_dir_all(&dir).is_ok() && std::fs::copy(&src, &dst).is_ok();
    Some(if copied { dst } else { src })
}

/// Ends the progress line `s` of a step that went well.
pub(crate) fn finish(s: Step, kind: &'static str, what: String, detail: String) -> StepTime {
    let seconds = s.elapsed();
    s.done(&detail);
    StepTime::ok(kind, what, seconds, detail)
}

/// Ends the progress line `s` of a step that failed with `error`.
pub(crate) fn fail(s: Step, kind: &'static str, what: String, error: &str, out: &Path) -> StepTime {
    let seconds = s.elapsed();
    let st = StepTime::failed(kind, what, seconds, error, out);
    s.done(&format!(
        "FAILED: {}{}",
        st.detail,
        st.log
            .as_ref()
            .map(|l| format!(" (log: {})", l.display()))
            .unwrap_or_default()
    ));
    st
}
