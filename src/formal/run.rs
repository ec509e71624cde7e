//! Running one proof: Yosys (`read_verilog -formal`, `prep`, `write_smt2`) then
//! `yosys-smtbmc` (BMC, then k-induction), with a CPU budget, a cache and a counterexample
//! VCD.

use super::wrapper::Wrapper;
use super::{Outcome, Property, Solver};
use crate::synth::run::{run_program_env, Budget};
use crate::synth::SynthError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One proof to run.
#[derive(Clone, Debug)]
pub struct ProofJob {
    /// Engine name (reports).
    pub engine: String,
    /// Unit name (reports).
    pub unit: String,
    /// Configuration description (reports).
    pub config: String,
    /// The unit's Verilog files (name, text), leaves first.
    pub files: Vec<(String, String)>,
    /// The wrapper (the Yosys top).
    pub wrapper: Wrapper,
    /// The property the wrapper asserts.
    pub property: Property,
    /// BMC depth, cycles (steps 0..depth-1; step 0 is in reset).
    pub depth: u32,
    /// Try k-induction (k = depth) once BMC passes.
    pub induction: bool,
    /// Longest search for the wrapper's cover (the BMC depth is raised to reach it).
    pub reach_max: u32,
    /// BMC runs at least this many cycles past the cycle the cover reached (past cycle 0
    /// without a cover): a bound's try looks B + 8 cycles beyond the first checked beat.
    pub past_reach: u32,
    /// The solver.
    pub solver: Solver,
    /// CPU budget of the whole proof (Yosys, BMC and induction).
    pub budget: Duration,
    /// Work folder (without the cache).
    pub work_dir: PathBuf,
    /// Read and fill the cache.
    pub use_cache: bool,
    /// The unit's top (its ports and streams, for a replay).
    pub top: std::sync::Arc<crate::hdl::Module>,
    /// Replay a counterexample in Verilator ([`super::replay`]).
    pub replay: bool,
    /// The round trip the wrapper checks, if it is one.
    pub round_trip: Option<super::RoundTrip>,
    /// The case of a split round trip ([`super::Split::label`]).
    pub case: Option<String>,
    /// The prefix-sum network whose wiring is checked before the solver proves its cells
    /// ([`super::Property::Sums`]).
    pub sums: Option<super::SumNet>,
}

/// The result of one proof.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofResult {
    /// Engine name.
    pub engine: String,
    /// Unit name.
    pub unit: String,
    /// Configuration description.
    pub config: String,
    /// The property.
    pub property: Property,
    /// The case of a split round trip, if this proof is one.
    #[serde(default)]
    pub case: Option<String>,
    /// The bound of a bounded property ([`Property::has_bound`]): the smallest that holds to
    /// the BMC depth (cycles).
    #[serde(default)]
    pub bound: Option<u32>,
    /// Result.
    pub outcome: Outcome,
    /// BMC depth without a counterexample (cycles from reset), or the step of the
    /// counterexample.
    pub depth: u32,
    /// k of the induction that closed.
    pub k: Option<u32>,
    /// The first cycle in which the property is checked in earnest (the wrapper's cover:
    /// a stalled beat held, two whole lines back).
    #[serde(default)]
    pub reach: Option<u32>,
    /// What stopped short: induction failed or ran out of time, BMC ran out of time.
    pub note: String,
    /// The CPU budget stopped a step (such a result is not cached: a larger budget may go
    /// further).
    #[serde(default)]
    pub out_of_budget: bool,
    /// The solver.
    pub solver: Solver,
    /// Seconds of the whole proof (wall).
    pub seconds: f64,
    /// The counterexample's VCD (in the cache or work folder), when there is one.
    pub vcd: Option<PathBuf>,
    /// Wrapper lines of the assertions that failed (`wrapper.v:LINE`).
    pub failed: Vec<String>,
    /// From the cache.
    #[serde(default)]
    pub cached: bool,
    /// The counterexample replayed in Verilator, when asked.
    #[serde(default)]
    pub replay: Option<super::replay::Replay>,
}

impl ProofResult {
    /// "BMC 24" / "k-induction, k = 24" / "BMC, step 7" (a counterexample's step).
    pub fn method(&self) -> String {
        if self.property == Property::Sums {
            // The wiring check, then the cells' arithmetic (one step, no state).
            return match (self.outcome, self.vcd.is_some(), self.k) {
                (Outcome::Counterexample, false, _) => "wiring check".into(),
                (Outcome::Counterexample, true, _) => "wiring check; cells: BMC, step 0".into(),
                (Outcome::Proved, _, Some(k)) => {
                    format!("wiring check; cells: k-induction, k = {k}")
                }
                _ => format!("wiring check; cells: BMC {}", self.depth),
            };
        }
        match (self.outcome, self.k) {
            (Outcome::Proved, Some(k)) => format!("k-induction, k = {k}"),
            (Outcome::Counterexample, _) => format!("BMC, step {}", self.depth),
            _ => format!("BMC {}", self.depth),
        }
    }
}

/// The folder of the formal tools: `$HWZIP_FORMAL_BIN`, else `build/venv-formal/bin` when it
/// exists (what `scripts/setup.sh` makes: Boolector from PyPI, linked as `boolector`, and
/// the `bitwuzla` launcher).
pub fn formal_bin() -> Option<PathBuf> {
    std::env::var("HWZIP_FORMAL_BIN")
        .ok()
        .filter(|d| !d.trim().is_empty())
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("build/venv-formal/bin")).filter(|d| d.is_dir()))
        .map(|d| std::path::absolute(&d).unwrap_or(d))
}

/// `PATH` for `yosys-smtbmc`: the formal folder first, so its solvers win.
fn solver_path() -> OsString {
    let mut dirs: Vec<PathBuf> = formal_bin().into_iter().collect();
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

/// The default solver: Bitwuzla when it answers here, else Boolector.
pub fn default_solver() -> Solver {
    if solver_present(Solver::Bitwuzla) {
        Solver::Bitwuzla
    } else {
        Solver::Boolector
    }
}

/// Whether `solver` answers here (its binary runs).
pub fn solver_present(solver: Solver) -> bool {
    crate::proc::output(
        std::process::Command::new(solver.name())
            .arg(solver.version_flag())
            .env("PATH", solver_path()),
    )
    .map(|o| o.status.success())
    .unwrap_or(false)
}

/// The Yosys script: the sources, the wrapper as top, memories kept as SMT arrays, the
/// synchronous view of the flip-flops, and the SMT-LIB2 model.
fn script(files: &[&str], top: &str) -> String {
    format!(
        "read_verilog -formal {}\nprep -top {top}\nasync2sync\ndffunmap\n\
         write_smt2 -wires design.smt2\n",
        files.join(" ")
    )
}

/// What `yosys-smtbmc` is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Reach the wrapper's cover.
    Cover,
    /// Bounded model check.
    Bmc,
    /// k-induction.
    Induction,
}

/// `yosys-smtbmc`'s arguments for `mode` to `depth`.
fn smtbmc_args(solver: Solver, depth: u32, mode: Mode) -> Vec<String> {
    let mut a = vec!["-s".into(), solver.name().into(), "--noprogress".into()];
    if mode == Mode::Cover {
        a.push("-c".into());
        a.push("--dump-vcd".into());
        a.push("cover.vcd".into());
    } else if mode == Mode::Induction {
        a.push("-i".into());
    } else {
        a.push("--dump-vcd".into());
        a.push("cex.vcd".into());
    }
    a.push("-t".into());
    a.push(depth.to_string());
    a.push("design.smt2".into());
    a
}

/// The version line of `program --flag` (empty when it does not run).
fn version(program: &str, flag: &str) -> String {
    crate::proc::output(
        std::process::Command::new(program)
            .arg(flag)
            .env("PATH", solver_path()),
    )
    .map(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    })
    .unwrap_or_default()
}

/// The cache key of `job`: the sources, the wrapper, the script, the tools' arguments and
/// versions.
pub fn key(job: &ProofJob) -> String {
    let mut h = Sha256::new();
    h.update(b"hwzip-prove-v2\0");
    for (n, t) in &job.files {
        h.update(n.as_bytes());
        h.update((t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    }
    h.update(job.wrapper.text.as_bytes());
    h.update(script(&[], &job.wrapper.name).as_bytes());
    for mode in [Mode::Cover, Mode::Bmc, Mode::Induction] {
        h.update(
            smtbmc_args(job.solver, job.depth, mode)
                .join(" ")
                .as_bytes(),
        );
        h.update(b"\0");
    }
    h.update(format!("\0{}\0{}\0", job.induction, job.reach_max).as_bytes());
    if job.past_reach > 0 {
        h.update(format!("past {}\0", job.past_reach).as_bytes());
    }
    h.update(version("yosys", "-V").as_bytes());
    h.update(version(job.solver.name(), job.solver.version_flag()).as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `job` through the cache when `job.use_cache`.
pub fn prove(job: &ProofJob) -> Result<ProofResult, String> {
    if !job.use_cache {
        return prove_in(job, &job.work_dir);
    }
    let k = key(job);
    let root = crate::cache_dir::cache_dir("prove");
    let name = format!("{}-{}", job.wrapper.name, &k[..20]);
    let dir = root.join(&name);
    let _lock = crate::cache_dir::lock_entry(&root, &name)
        .map_err(|(p, e)| format!("{}: {e}", p.display()))?;
    let done = dir.join("result.json");
    if let Ok(text) = std::fs::read_to_string(&done) {
        if let Ok(mut r) = serde_json::from_str::<ProofResult>(&text) {
            r.cached = true;
            return Ok(r);
        }
    }
    let r = prove_in(job, &dir)?;
    if !r.out_of_budget {
        let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        crate::files::write_atomic(&done, text.as_bytes())
            .map_err(|e| format!("{}: {e}", done.display()))?;
    }
    Ok(r)
}

/// The largest bound [`search_bound`] tries: beyond it a unit is taken to hang.
pub const MAX_BOUND: u32 = 64;

/// A bounded property ([`Property::has_bound`]) of `job.top`: the smallest bound that BMC
/// does not break (doubling from 0, then bisecting; a try at bound b runs BMC to at least
/// b + 8 cycles past the first checked cycle, so that a longer wait can show), then that
/// bound with k-induction as `job` asks. Each try is an ordinary cached proof of its own wrapper. A
/// unit that breaks [`MAX_BOUND`] gives that counterexample.
pub fn search_bound(job: &ProofJob) -> Result<ProofResult, String> {
    let attempt = |bound: u32, induction: bool| {
        let mut j = job.clone();
        j.wrapper = super::wrapper::bounded(&job.top, job.property, bound);
        j.induction = induction;
        // Deep enough to see a wait one longer than the bound, counted from the first beat
        // the bound is checked on, after a few more cycles of filling.
        j.past_reach = bound + 8;
        j.work_dir = job.work_dir.join(format!("bound{bound}"));
        prove(&j).map(|mut r| {
            r.bound = Some(bound);
            r
        })
    };
    let mut seconds = 0.0;
    let (mut lo, mut hi) = (None::<u32>, None::<u32>);
    let mut last = None;
    let tries = std::iter::once(0).chain((0..=MAX_BOUND.trailing_zeros()).map(|i| 1u32 << i));
    for b in tries {
        let r = attempt(b, false)?;
        seconds += r.seconds;
        if r.out_of_budget {
            return Ok(stopped(r, seconds));
        }
        match r.outcome {
            Outcome::Counterexample => lo = Some(b),
            Outcome::Bounded | Outcome::Proved => {
                hi = Some(b);
                break;
            }
            Outcome::Unreached => return Ok(r),
        }
        last = Some(r);
    }
    let Some(mut hi) = hi else {
        let mut r = last.ok_or("no bound tried")?;
        r.note = format!("no bound up to {MAX_BOUND} cycles holds (a longer wait, or a hang)");
        r.seconds = seconds;
        return Ok(r);
    };
    let mut lo = lo.map_or(0, |l| l + 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let r = attempt(mid, false)?;
        seconds += r.seconds;
        if r.out_of_budget {
            return Ok(stopped(r, seconds));
        }
        if r.outcome == Outcome::Counterexample {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let mut r = attempt(hi, job.induction)?;
    r.seconds += seconds;
    Ok(r)
}

/// A bound search whose try `r` the budget cut short: no bound is known (a BMC cut short
/// has not shown that its bound holds).
fn stopped(mut r: ProofResult, seconds: f64) -> ProofResult {
    r.note = format!(
        "the search stopped at bound {}: {}",
        r.bound.unwrap_or(0),
        r.note
    );
    r.outcome = Outcome::Unreached;
    r.bound = None;
    r.seconds = seconds;
    r
}

/// The last step `yosys-smtbmc` had started checking (from its log), if any.
fn last_step(log: &str) -> Option<u32> {
    log.lines()
        .filter_map(|l| {
            let i = l.find("in step ")?;
            let rest = &l[i + 8..];
            rest.trim_end_matches(|c: char| !c.is_ascii_digit())
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .max()
}

/// Marks `r` a counterexample from `yosys-smtbmc`'s log `text`, its trace `vcd` (in `dir`)
/// kept as `cex.vcd`.
fn counterexample(r: &mut ProofResult, text: &str, dir: &Path, vcd: &str) {
    r.outcome = Outcome::Counterexample;
    r.depth = last_step(text).unwrap_or(0);
    r.failed = failed_asserts(text);
    let cex = dir.join("cex.vcd");
    if vcd != "cex.vcd" {
        let _ = std::fs::rename(dir.join(vcd), &cex);
    }
    r.vcd = cex.is_file().then_some(cex);
}

/// The step in which `yosys-smtbmc -c` reached the cover, if it did.
fn reached_step(log: &str) -> Option<u32> {
    if !log.contains("Status: PASSED") {
        return None;
    }
    log.lines()
        .filter(|l| l.contains("Reached cover statement"))
        .filter_map(|l| {
            let i = l.rfind("in step ")?;
            l[i + 8..].trim_end_matches('.').trim().parse().ok()
        })
        .max()
}

/// The wrapper lines of failed assertions in a `yosys-smtbmc` log.
fn failed_asserts(log: &str) -> Vec<String> {
    let mut v: Vec<String> = log
        .lines()
        .filter_map(|l| {
            let rest = &l[l.find("Assert failed in ")? + 17..];
            let loc = rest.split(": ").nth(1)?.split(' ').next()?;
            let (file, pos) = loc.split_once(':')?;
            let line = pos.split('.').next()?;
            Some(format!("{file}:{line}"))
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The wiring check of prefix-sum network `n` ([`super::sums::check`]) on the unit's files
/// written in `dir`: Yosys's JSON netlist of the unit after `proc`. `Some(why)` when the
/// wiring does not give the sums.
fn sum_wiring(
    job: &ProofJob,
    n: &super::SumNet,
    dir: &Path,
    budget: &mut Budget,
) -> Result<Option<String>, String> {
    let files: Vec<&str> = job.files.iter().map(|f| f.0.as_str()).collect();
    let ys = format!(
        "read_verilog {}\nhierarchy -top {}\nproc\nopt_clean\nwrite_json net.json\n",
        files.join(" "),
        n.top.name
    );
    std::fs::write(dir.join("net.ys"), ys).map_err(|e| format!("{}: {e}", dir.display()))?;
    run_program_env(
        "yosys",
        &crate::synth::run::tool_program("yosys"),
        &["-q", "-l", "net.log", "-s", "net.ys"],
        &[],
        dir,
        &dir.join("net.out"),
        budget,
    )
    .map_err(|e| e.to_string())?;
    let json = std::fs::read_to_string(dir.join("net.json"))
        .map_err(|e| format!("{}: {e}", dir.join("net.json").display()))?;
    super::sums::check(&json, n)
}

/// Runs `job` in `dir` (created; old contents replaced).
pub fn prove_in(job: &ProofJob, dir: &Path) -> Result<ProofResult, String> {
    let t0 = Instant::now();
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for (n, t) in &job.files {
        std::fs::write(dir.join(n), t).map_err(|e| format!("{}: {e}", dir.display()))?;
        names.push(n.as_str());
    }
    std::fs::write(dir.join("wrapper.v"), &job.wrapper.text)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    names.push("wrapper.v");
    std::fs::write(dir.join("prep.ys"), script(&names, &job.wrapper.name))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut budget = Budget::new(job.budget);
    run_program_env(
        "yosys",
        &crate::synth::run::tool_program("yosys"),
        &["-q", "-l", "prep.log", "-s", "prep.ys"],
        &[],
        dir,
        &dir.join("prep.out"),
        &mut budget,
    )
    .map_err(|e| e.to_string())?;
    let mut r = ProofResult {
        engine: job.engine.clone(),
        unit: job.unit.clone(),
        config: job.config.clone(),
        property: job.property,
        case: job.case.clone(),
        bound: None,
        outcome: Outcome::Bounded,
        depth: 0,
        k: None,
        reach: None,
        note: String::new(),
        out_of_budget: false,
        solver: job.solver,
        seconds: 0.0,
        vcd: None,
        failed: Vec::new(),
        cached: false,
        replay: None,
    };
    if let Some(n) = &job.sums {
        if let Some(why) = sum_wiring(job, n, dir, &mut budget)? {
            r.outcome = Outcome::Counterexample;
            r.note = format!("wiring: {why}");
            r.seconds = t0.elapsed().as_secs_f64();
            return Ok(r);
        }
    }
    let env = [("PATH", solver_path())];
    let smtbmc = crate::synth::run::tool_program("yosys-smtbmc");
    let mut depth = job.depth.max(job.past_reach);
    if let Some(cover) = &job.wrapper.cover {
        let args = smtbmc_args(job.solver, job.reach_max, Mode::Cover);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let log = dir.join("cover.log");
        let res = run_program_env("yosys-smtbmc", &smtbmc, &args, &env, dir, &log, &mut budget);
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        match (res, reached_step(&text)) {
            // The cover search checks the assertions on its way.
            (Err(SynthError::ToolFailed { .. }), _) if text.contains("Assert failed in") => {
                counterexample(&mut r, &text, dir, "cover.vcd");
            }
            (Ok(_), Some(n)) => {
                r.reach = Some(n);
                depth = depth.max(n + 1 + job.past_reach);
            }
            (Ok(_) | Err(SynthError::ToolFailed { .. }), None) => {
                r.outcome = Outcome::Unreached;
                r.note = format!(
                    "the checked state ({cover}) was not reached in {} cycles",
                    job.reach_max
                );
            }
            (Err(SynthError::Budget { .. }), _) => {
                r.outcome = Outcome::Unreached;
                r.out_of_budget = true;
                r.note = format!(
                    "cover search stopped by the budget ({} s CPU)",
                    job.budget.as_secs()
                );
            }
            (Err(e), _) => return Err(e.to_string()),
        }
        if r.outcome != Outcome::Bounded {
            r.seconds = t0.elapsed().as_secs_f64();
            return Ok(r);
        }
    }
    let bmc = smtbmc_args(job.solver, depth, Mode::Bmc);
    let bmc: Vec<&str> = bmc.iter().map(String::as_str).collect();
    let log = dir.join("bmc.log");
    let res = run_program_env("yosys-smtbmc", &smtbmc, &bmc, &env, dir, &log, &mut budget);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    match res {
        Ok(_) if text.contains("Status: PASSED") => r.depth = depth,
        Ok(_) => {
            return Err(format!(
                "yosys-smtbmc gave no status; log: {}",
                log.display()
            ))
        }
        Err(SynthError::ToolFailed { .. }) if text.contains("Status: FAILED") => {
            counterexample(&mut r, &text, dir, "cex.vcd");
        }
        Err(SynthError::Budget { .. }) => {
            // Steps before the one being checked passed.
            r.depth = last_step(&text).unwrap_or(0);
            r.out_of_budget = true;
            r.note = format!("BMC stopped by the budget ({} s CPU)", job.budget.as_secs());
            if let Some(c) = r.reach.filter(|&c| r.depth <= c) {
                // No step in which the property is checked in earnest passed: no bound.
                r.outcome = Outcome::Unreached;
                r.note = format!(
                    "BMC stopped by the budget ({} s CPU) at cycle {}, before the first \
                     checked cycle {c}",
                    job.budget.as_secs(),
                    r.depth
                );
            }
        }
        Err(e) => return Err(e.to_string()),
    }
    if r.outcome == Outcome::Bounded && r.note.is_empty() && job.induction {
        let ind = smtbmc_args(job.solver, depth, Mode::Induction);
        let ind: Vec<&str> = ind.iter().map(String::as_str).collect();
        let log = dir.join("induction.log");
        let res = run_program_env("yosys-smtbmc", &smtbmc, &ind, &env, dir, &log, &mut budget);
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        match res {
            Ok(_) if text.contains("Status: PASSED") => {
                r.outcome = Outcome::Proved;
                r.k = Some(depth);
            }
            Err(SynthError::Budget { .. }) => {
                r.out_of_budget = true;
                r.note = format!(
                    "induction stopped by the budget ({} s CPU)",
                    job.budget.as_secs()
                )
            }
            Ok(_) | Err(SynthError::ToolFailed { .. }) if text.contains("Status: FAILED") => {
                r.note = format!("induction (k = {depth}) fails from an unreachable state")
            }
            Ok(_) => {
                return Err(format!(
                    "yosys-smtbmc gave no status; log: {}",
                    log.display()
                ))
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    r.seconds = t0.elapsed().as_secs_f64();
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtbmc_log_parsing() {
        let log = "##   0:00:00  Checking assumptions in step 0..\n\
                   ##   0:00:01  Checking assertions in step 11..\n\
                   ##   0:00:01  BMC failed!\n\
                   ##   0:00:01  Assert failed in x_f_hold: wrapper.v:48.19-48.60 ($assert$wrapper.v:48$674)\n\
                   ##   0:00:01  Status: FAILED\n";
        assert_eq!(last_step(log), Some(11));
        assert_eq!(failed_asserts(log), vec!["wrapper.v:48"]);
        let cover = "##   0:00:01  Reached cover statement at wrapper.v:69.114-70.31 \
                     ($cover$wrapper.v:69$860) in step 29.\n##   0:00:01  Status: PASSED\n";
        assert_eq!(reached_step(cover), Some(29));
    }
}
