//! `hwzip synth --fpga DEVICE`: an engine's leaf units (those that instantiate no other unit)
//! placed and routed on a Lattice ECP5 ([`crate::synth::fpga`]).

use super::{check_synth_unit, write_rtl, FlowResult};
use crate::config::Config;
use crate::engines::EngineRef;
use crate::synth::fpga::{self, FpgaDevice, FpgaJob, FpgaResult};
use std::path::Path;
use std::time::Duration;

/// The clock nextpnr aims for, MHz (it routes on when it misses it; the report gives what
/// was reached).
pub const FPGA_TARGET_MHZ: f64 = 200.0;

/// One FPGA row: engine, unit, result.
pub type FpgaRow = (String, String, FpgaResult);

/// Places and routes `unit` (every leaf unit when `None`) of `engine` on `device`.
pub fn run(
    engine: EngineRef,
    cfg: &Config,
    device: &FpgaDevice,
    work: &Path,
    unit: Option<&str>,
    log: &mut dyn FnMut(&str),
) -> FlowResult<Vec<FpgaRow>> {
    if let Some(n) = unit {
        check_synth_unit(engine, n)?;
    }
    let designs = engine.units(cfg)?;
    let is_unit = |name: &str| designs.iter().any(|d| d.top.name == name);
    let mut rows = Vec::new();
    for u in &designs {
        let leaf = !u.top.instances.iter().any(|i| is_unit(&i.module.name));
        if unit.map_or(!leaf, |n| n != u.unit) {
            continue;
        }
        log(&format!(
            "placing and routing {} {} on {} ...",
            engine.name(),
            u.unit,
            device.name()
        ));
        let dir = work.join(device.name()).join(&u.top.name);
        let files = write_rtl(std::slice::from_ref(u), &dir.join("rtl"))?;
        let job = FpgaJob {
            top: u.top.name.clone(),
            verilog: files,
            device: device.clone(),
            freq_mhz: FPGA_TARGET_MHZ,
            work_dir: dir,
            budget: Duration::from_secs(cfg.synth.budget_s),
            use_cache: cfg.synth.cache,
        };
        let r = fpga::run(&job)?;
        rows.push((engine.name().to_string(), u.unit.to_string(), r));
    }
    Ok(rows)
}
