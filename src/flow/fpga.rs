//! `hwzip synth --fpga DEVICE`: an engine's leaf units (those that instantiate no other unit)
//! placed and routed on a Lattice ECP5 ([`crate::synth::fpga`]); and the FPGA rows of the
//! results snapshot (`hwzip results --fpga DIR`), joined per engine.

use super::{check_synth_unit, write_rtl, FlowResult};
use crate::config::Config;
use crate::engines::EngineRef;
use crate::synth::fpga::{self, FpgaDevice, FpgaJob, FpgaRow};
use std::path::Path;
use std::time::Duration;

/// The clock nextpnr aims for, MHz (it routes on when it misses it; the report gives what
/// was reached).
pub const FPGA_TARGET_MHZ: f64 = 200.0;

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
    let defaults = engine.units(&Config::default())?;
    let variant = |u: &crate::engines::UnitDesign| {
        !defaults
            .iter()
            .any(|d| d.unit == u.unit && d.params == u.params)
    };
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
        rows.push(FpgaRow {
            engine: engine.name().to_string(),
            unit: u.unit.to_string(),
            params: u.params.clone(),
            variant: variant(u),
            result: fpga::run(&job)?,
        });
    }
    Ok(rows)
}

/// Adds `fpga.md` and `fpga.json` (what [`read_rows`] reads back) to `set`, in `dir`.
pub fn add(set: &mut crate::files::FileSet, rows: &[FpgaRow], dir: &Path) -> FlowResult<()> {
    let json = serde_json::to_string_pretty(rows).map_err(|e| e.to_string())?;
    set.add(dir.join("fpga.md"), fpga::markdown(rows));
    set.add(dir.join("fpga.json"), json);
    Ok(())
}

/// The rows of a `hwzip synth --fpga` output folder (its `fpga.json`).
pub fn read_rows(dir: &Path) -> FlowResult<Vec<FpgaRow>> {
    let p = dir.join("fpga.json");
    let bytes = crate::files::input::read(&p, crate::files::input::Purpose::Config)
        .map_err(|e| format!("cannot read {}: {}", p.display(), e))?;
    let rows: Vec<FpgaRow> = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "{}: not the FPGA table of `hwzip synth --fpga`: {}",
            p.display(),
            e
        )
    })?;
    if rows.is_empty() {
        return Err(format!("{}: no rows", p.display()));
    }
    Ok(rows)
}

/// `old` with the rows of `new`'s units taken from `new` (a run of one unit, `--unit`,
/// replaces that unit's row at the same parameters; other parameters add a row; engines in `rank` order, each engine's rows in the order they
/// came). Every row must be on one device.
pub fn join(
    old: Vec<FpgaRow>,
    new: Vec<FpgaRow>,
    rank: impl Fn(&str) -> usize,
) -> FlowResult<Vec<FpgaRow>> {
    let ran = |r: &FpgaRow| {
        new.iter()
            .any(|n| n.engine == r.engine && n.unit == r.unit && n.params == r.params)
    };
    let mut rows: Vec<FpgaRow> = old.iter().filter(|r| !ran(r)).cloned().collect();
    let devices = |v: &[FpgaRow]| -> Vec<String> {
        let mut d: Vec<String> = v.iter().map(|r| r.result.device.clone()).collect();
        d.sort();
        d.dedup();
        d
    };
    let (was, is) = (devices(&rows), devices(&new));
    if !rows.is_empty() && was != is {
        return Err(format!(
            "the snapshot's FPGA rows are on {}, these on {}: place and route every engine \
             on one device",
            was.join(", "),
            is.join(", ")
        ));
    }
    rows.extend(new);
    rows.sort_by_key(|r| rank(&r.engine));
    Ok(rows)
}

/// The page's FPGA section: one table of every engine's leaf units.
pub fn section(rows: &[FpgaRow], o: &mut String) {
    use std::fmt::Write as _;
    let _ = writeln!(
        o,
        "## FPGA place and route
"
    );
    if rows.is_empty() {
        let _ = writeln!(
            o,
            "Not in this snapshot yet: `hwzip synth --engine E --fpga ecp5-85k --out DIR` \
             per engine, then `hwzip results --fpga DIR`.\n"
        );
        return;
    }
    let _ = writeln!(
        o,
        "The leaf units of every engine at their default parameters, placed and routed out of \
         context on a Lattice ECP5 (`hwzip synth --fpga`: Yosys `synth_ecp5`, nextpnr-ecp5 \
         aiming for {FPGA_TARGET_MHZ:.0} MHz with its `router2`, the one that finishes the \
         largest units; docs/TOOLCHAIN.md gives what that costs in Fmax on the smaller \
         ones). The Fmax is that of the register-to-register paths after routing; the ports \
         are not timed. Tool times are wall seconds on the \
         machine that ran them (the tools are single-threaded). A unit placed but not \
         routed within the CPU budget gives its placed figures (docs/TOOLCHAIN.md says what \
         the router did on the largest); a unit at other than its default parameters is \
         marked, with its parameters below the table.\n"
    );
    o.push_str(&fpga::markdown(rows));
    o.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::fpga::FpgaResult;

    fn row(engine: &str, unit: &str, device: &str, luts: u64) -> FpgaRow {
        FpgaRow {
            engine: engine.into(),
            unit: unit.into(),
            params: "p".into(),
            variant: false,
            result: FpgaResult {
                device: device.into(),
                luts,
                luts_available: 83_640,
                fits: true,
                fmax_mhz: Some(100.0),
                ..FpgaResult::default()
            },
        }
    }

    /// Engines placed one at a time join into one table in registry order; a later run of
    /// a unit takes its row over; rows on another device are refused.
    #[test]
    fn an_engines_rows_are_taken_over_and_devices_must_agree() {
        let rank = |e: &str| ["zvc", "buddy"].iter().position(|&x| x == e).unwrap();
        let d = "ecp5-85k";
        let s = join(Vec::new(), vec![row("buddy", "bpc", d, 1)], rank).unwrap();
        let s = join(
            s,
            vec![row("zvc", "comp", d, 2), row("zvc", "dec", d, 3)],
            rank,
        )
        .unwrap();
        let s = join(s, vec![row("buddy", "bpc", d, 4)], rank).unwrap();
        let s = join(s, vec![row("zvc", "dec", d, 5)], rank).unwrap();
        let got: Vec<(&str, u64)> = s.iter().map(|r| (r.unit.as_str(), r.result.luts)).collect();
        assert_eq!(got, [("comp", 2), ("dec", 5), ("bpc", 4)]);
        let e = join(s.clone(), vec![row("buddy", "bpc", "ecp5-45k", 5)], rank).unwrap_err();
        assert!(e.contains("one device"), "{e}");
        let mut page = String::new();
        section(&s, &mut page);
        assert!(page.contains("| zvc | dec | ecp5-85k | 5 |"), "{page}");
        let mut empty = String::new();
        section(&[], &mut empty);
        assert!(empty.contains("hwzip results --fpga"), "{empty}");
    }

    /// A folder without `fpga.json`, or with something else in it, is a one-line error.
    #[test]
    fn a_folder_without_the_table_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_rows(dir.path()).unwrap_err().contains("cannot read"));
        std::fs::write(dir.path().join("fpga.json"), "{\"a\": 1}").unwrap();
        let e = read_rows(dir.path()).unwrap_err();
        assert!(e.contains("not the FPGA table"), "{e}");
    }
}
