//! The synthesis flow on the real engines with the always-installable osu018 library:
//! every unit maps without latches, reports positive area/Fmax, and the reports render.

use hwzip::config::Config;
use hwzip::rtl::Engine;

#[test]
fn every_unit_synthesizes_on_osu018_and_reports() {
    let mut cfg = Config::default();
    cfg.synth.clock_ns = 5.0;
    cfg.synth.budget_s = 600;
    let mut notes = Vec::new();
    let libs = hwzip::flow::libraries(&["osu018".to_string()], &mut notes)
        .expect("osu018 installed by scripts/setup.sh");
    let work = tempfile::tempdir().unwrap();
    for e in Engine::ALL {
        let rows = hwzip::flow::synth(e, &cfg, &libs, work.path(), None, &mut |_| {}).unwrap();
        assert_eq!(rows.len(), e.unit_names().len());
        for r in &rows {
            assert!(
                r.result.area_um2 > 0.0 && r.result.kge > 0.0,
                "{:?}",
                r.result
            );
            assert!(
                r.result.seq_cells > 0 && r.result.fmax_mhz > 0.0,
                "{:?}",
                r.result
            );
            assert!(r.latency_cycles.unwrap_or(0) > 0);
            assert!(r.throughput_bytes_per_cycle.unwrap_or(0.0) > 0.0);
        }
        hwzip::flow::write_reports(&rows, work.path()).unwrap();
        let md = std::fs::read_to_string(work.path().join("report.md")).unwrap();
        assert!(
            md.contains(e.unit_names()[0]) && md.contains("osu018"),
            "{}",
            md
        );
    }
}

/// The synthesized netlist, simulated with the library's own cell functions through the same
/// scoreboard, still matches the golden model (small parameter set to keep the build short).
#[test]
fn gate_level_netlist_matches_the_model() {
    let mut cfg = Config::from_yaml("zvc: {word_bits: 8, lanes: 4, window: 8}").unwrap();
    cfg.synth.clock_ns = 5.0;
    let libs = hwzip::flow::libraries(&["osu018".to_string()], &mut Vec::new()).unwrap();
    let work = tempfile::tempdir().unwrap();
    let rows =
        hwzip::flow::synth(Engine::Zvc, &cfg, &libs, work.path(), None, &mut |_| {}).unwrap();
    for r in &rows {
        let st = hwzip::flow::gate_cosim(Engine::Zvc, &cfg, r, &libs[0], 300).unwrap();
        assert!(
            st.first_mismatch.is_none(),
            "{}: {}",
            r.unit,
            st.first_mismatch.unwrap()
        );
        assert!(st.beats_out > 0);
    }
}
