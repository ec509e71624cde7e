//! Every unit of every engine, co-simulated in Verilator with `rst_ni` asserted at random
//! cycles in the middle of transactions (with an input beat offered, with output beats still
//! expected): after each reset no output may be valid while nothing is offered, and every
//! transaction that follows must match the golden model (restarted from its reset state for
//! the units with state across transactions: the adaptive controller and the link TX).
//! The per-unit figures are printed for docs/RELIABILITY.md.

use hwzip::config::Config;
use hwzip::engines;
use hwzip::flow::{self, CosimRequest};

#[test]
fn every_unit_recovers_from_resets_in_mid_transaction() {
    if !crate::common::have("verilator") {
        eprintln!("verilator not installed; skipping (run scripts/setup.sh)");
        return;
    }
    // The library tests' rule (small models at -O0, large ones at -O1): the same builds.
    hwzip::cosim::set_opt_level_by_size();
    let cfg = Config::default();
    let mut rows = Vec::new();
    for &e in engines::ALL {
        for unit in engines::known_cosim_units(e) {
            let mut stim = flow::stim_from(&cfg, None);
            stim.lines = 2_500;
            stim.resets = 20;
            let req = CosimRequest {
                engine: e,
                unit: unit.clone(),
                stim,
                vcd: None,
                x_seed: None,
            };
            let r = flow::cosim(&req, &cfg, &mut |_| {}).unwrap();
            let s = &r.stats;
            assert!(
                s.first_mismatch.is_none(),
                "{} {}: {}",
                e.name(),
                unit,
                s.first_mismatch.as_ref().unwrap()
            );
            assert!(
                s.resets >= 5,
                "{} {}: only {} resets",
                e.name(),
                unit,
                s.resets
            );
            // The harness alternates resets with an input offered and resets with output
            // expected: at least every other one has output pending (every one for the
            // stream units, whose expectations come with their input).
            assert!(
                2 * s.resets_mid.1 >= s.resets,
                "{} {}: {} of {} resets with output pending",
                e.name(),
                unit,
                s.resets_mid.1,
                s.resets
            );
            rows.push(format!(
                "| {} | {} | {} | {} | {} | {} | 0 |",
                e.name(),
                unit,
                s.lines,
                s.resets,
                s.resets_mid.0,
                s.resets_mid.1
            ));
        }
    }
    eprintln!("| engine | unit | lines | resets | with input offered | with output pending | mismatches |");
    eprintln!("|---|---|---:|---:|---:|---:|---:|");
    for r in &rows {
        eprintln!("{r}");
    }
}
