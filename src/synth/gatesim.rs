//! Gate-level simulation model of a synthesized design: the mapped netlist (`mapped.v`, with
//! the original multi-bit ports) plus behavioural models of the library's cells, imported by
//! Yosys `read_liberty` from their `function`/`ff` groups, flattened into one Verilog file that
//! Verilator simulates through the same scoreboard as the RTL — a cheap check that synthesis
//! (mapping, `setundef`, excluded cells) preserved the function.

use super::run::run_with_budget;
use super::{Liberty, SynthError, SynthResult};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Writes `gatesim.v` next to the synthesis result and returns its path.
pub fn gate_level_model(
    r: &SynthResult,
    lib: &Liberty,
    budget: Duration,
) -> Result<PathBuf, SynthError> {
    let dir = r
        .netlist
        .parent()
        .map(|p| p.to_path_buf())
        .ok_or_else(|| SynthError::InvalidJob("netlist has no directory".into()))?;
    let mapped = dir.join("mapped.v");
    if !mapped.is_file() {
        return Err(SynthError::InvalidJob(format!(
            "{} is missing: re-run the synthesis with this version of hwzip",
            mapped.display()
        )));
    }
    let out = dir.join("gatesim.v");
    let script = format!(
        "read_liberty -ignore_miss_func \"{}\"; read_verilog mapped.v; hierarchy -top {}; flatten; opt_clean; write_verilog -noattr gatesim.v",
        lib.path.display(),
        r.top
    );
    let log = dir.join("gatesim.log");
    run_with_budget(
        "yosys",
        &["-q", "-p", &script],
        &dir,
        &log,
        Instant::now(),
        budget,
    )?;
    if !out.is_file() {
        return Err(SynthError::InvalidJob(format!(
            "yosys wrote no {}; see {}",
            out.display(),
            log.display()
        )));
    }
    Ok(out)
}
