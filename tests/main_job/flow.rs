//! The synthesis flow on the real engines with the always-installable osu018 library:
//! every unit maps without latches, reports positive area/Fmax, and the reports render.

use super::common;
use hwzip::config::Config;
use hwzip::engines;

/// Units the main-job test synthesizes, one of each kind the synthesis step treats
/// differently: flat clocked leaves (ZVC, Base+XOR), Base+XOR's Table II cores, a composite
/// top that reuses its children's netlists (the adaptive receiver over the three
/// decompressors), a compressor/decompressor pair for Table III, combinational units (Buddy's
/// size mapper and address generator), a memory-heavy unit for Table IV (the PACT'12 MD
/// cache) and the PACT'12 truncation units. The other units (each another minute of the same
/// mapping on larger logic) are synthesized by `hwzip flow` and, on three libraries, by
/// `hwzip regress`.
const SYNTH_UNITS: &[&str] = &[
    "zvc",
    "base-xor",
    "adaptive/bdi_comp",
    "adaptive/bdi_decomp",
    "adaptive/rx",
    "adaptive/ctrl",
    "buddy/size-mapper",
    "buddy/addr-gen",
    "cpack-lossy/md-cache",
    "cpack-lossy/trunc-pack",
    "cpack-lossy/unpack-restore",
];

/// The main job end to end (`hwzip flow`'s library entry) on the smallest configuration of
/// every engine that still builds each unit: every unit is generated and co-simulated against
/// its model, the units of [`SYNTH_UNITS`] are synthesized on osu018 (uncached, two workers),
/// and the reports render.
#[test]
fn main_job_runs_every_unit_on_osu018_and_reports() {
    use hwzip::flow::job::{self, FlowOptions, Profile};
    // 1,000 lines per unit: the models' compile time is all that counts (-O0 compiles in
    // about half the time of -O1). `x_init.rs` beside it reuses these builds.
    hwzip::cosim::set_opt_level(0);
    let mut cfg = common::small_config(2);
    cfg.synth.clock_ns = 5.0;
    cfg.synth.clock_ns_by_library.clear();
    cfg.synth.budget_s = 600;
    cfg.synth.cache = false;
    cfg.synth.effort = hwzip::config::Effort::Fast;
    // As the quick profile: instance families are mapped once and reused.
    cfg.synth.hierarchy = hwzip::config::Hierarchy::Families;
    cfg.synth.libraries = vec!["osu018".into()];
    cfg.cosim.lines = 1_000;
    let work = tempfile::tempdir().unwrap();
    let opts = FlowOptions {
        profile: Profile::Quick,
        engines: Vec::new(),
        unit: None,
        jobs: 2,
        out: work.path().to_path_buf(),
        gate_cosim: 0,
        energy: 0,
        synth: true,
        synth_units: SYNTH_UNITS.iter().map(|s| s.to_string()).collect(),
        shard: None,
        fail_fast: false,
    };
    let r = job::run(&cfg, &opts, &hwzip::flow::progress::Ui::quiet()).unwrap();
    assert!(
        r.ok,
        "mismatch: {:?}",
        r.cosim
            .iter()
            .map(|c| &c.stats.first_mismatch)
            .collect::<Vec<_>>()
    );
    let selected = |e: &str, u: &str| opts.synth_selects(e, Some(u));
    for &e in engines::ALL {
        let rows: Vec<_> = r.synth.iter().filter(|x| x.engine == e.name()).collect();
        // The units this configuration has (no Buddy controller at 32 B BPC entries).
        let designs = e.units(&cfg).unwrap();
        let want = designs
            .iter()
            .filter(|d| selected(e.name(), d.unit))
            .count();
        assert!(want > 0, "{} has a unit to synthesize", e.name());
        assert_eq!(rows.len(), want, "{}", e.name());
        for r in rows {
            assert!(selected(e.name(), &r.unit), "{} {}", e.name(), r.unit);
            assert!(
                r.result.area_um2 > 0.0 && r.result.kge > 0.0,
                "{:?}",
                r.result
            );
            // Combinational units (the Buddy size mapper and address generator) have no flops.
            let clocked = designs
                .iter()
                .find(|d| d.unit == r.unit)
                .is_some_and(|d| d.top.has_clock);
            assert!(
                (r.result.seq_cells > 0 || !clocked) && r.result.fmax_mhz > 0.0,
                "{:?}",
                r.result
            );
            assert!(r.latency_cycles.unwrap_or(0) > 0);
            assert!(r.throughput_bytes_per_cycle.unwrap_or(0.0) > 0.0);
        }
        let cos = r.cosim.iter().filter(|c| c.engine == e.name()).count();
        let loopback = usize::from(!e.test_units().is_empty());
        assert_eq!(cos, designs.len() + loopback, "{}", e.name());
    }
    // The composite top's row covers its own logic and its children's.
    let area = |u: &str| {
        r.synth
            .iter()
            .find(|x| x.engine == "adaptive" && x.unit == u)
            .map(|x| x.result.area_um2)
            .unwrap()
    };
    assert!(
        area("rx") > area("bdi_decomp"),
        "rx {} bdi_decomp {}",
        area("rx"),
        area("bdi_decomp")
    );
    let files: Vec<&str> = r.tables.iter().map(|t| t.file.as_str()).collect();
    assert_eq!(files, ["table2", "table3", "table4"]);
    job::write(&r, work.path()).unwrap();
    let md = std::fs::read_to_string(work.path().join("report.md")).unwrap();
    assert!(md.contains("Profile `quick`") && md.contains("| synth |") && md.contains("osu018"));
    let json = std::fs::read_to_string(work.path().join("report.json")).unwrap();
    assert!(json.contains("\"profile\": \"quick\""));
    // The HTML report loads in a real browser with every chart (area, Fmax and latency of
    // each engine) rendered.
    let html = work.path().join("report.html");
    let text = std::fs::read_to_string(&html).unwrap();
    let n = text.matches("<figure class=\"plot\"").count();
    assert!(n >= 3 * hwzip::engines::ALL.len(), "{} charts", n);
    let shots = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let state = common::render_in_chromium(&html, &shots.join("flow.png"));
    assert_eq!(state, format!("ok {}", n));
}

/// The synthesized netlist, simulated with the library's own cell functions through the same
/// scoreboard, still matches the golden model (small parameter set to keep the build short).
#[test]
fn gate_level_netlist_matches_the_model() {
    let (cfg, libs, _work, rows) = small_zvc_on_osu018(None);
    for r in &rows {
        // 300 lines of a small netlist: -O0 compiles in a fraction of -O1's time.
        let st = hwzip::cosim::with_opt_level(0, || {
            hwzip::flow::gate_cosim(&engines::zvc::Zvc, &cfg, r, &libs[0], 300)
        })
        .unwrap();
        assert!(
            st.first_mismatch.is_none(),
            "{}: {}",
            r.unit,
            st.first_mismatch.unwrap()
        );
        assert!(st.beats_out > 0);
    }
}

/// Energy per line from the gate-level activity of a small netlist: every cell input pin the
/// simulation sees is annotated, the power parts add up, and the energy per line is the total
/// power over the simulated cycles (the figures themselves are reports, not checked here).
#[test]
fn energy_per_line_from_gate_level_activity() {
    let (cfg, libs, work, rows) = small_zvc_on_osu018(Some("compressor"));
    assert_eq!(rows.len(), 1);
    // 200 lines of a small netlist with tracing: -O0 builds in a fraction of -O1's time.
    let e = hwzip::cosim::with_opt_level(0, || {
        hwzip::flow::energy::energy(
            &engines::zvc::Zvc,
            &cfg,
            &rows[0],
            &libs[0],
            200,
            &work.path().join("energy"),
        )
    })
    .unwrap();
    assert_eq!((e.lines, e.flops > 0), (200, true));
    assert!(e.cycles >= e.lines, "{} cycles", e.cycles);
    assert!(
        e.pins_annotated * 10 >= e.pins * 9 && e.inputs_annotated > 0,
        "{} of {} pins, {} inputs",
        e.pins_annotated,
        e.pins,
        e.inputs_annotated
    );
    assert!(e.internal_mw > 0.0 && e.switching_mw > 0.0 && e.leakage_mw > 0.0);
    let sum = e.internal_mw + e.switching_mw + e.leakage_mw;
    assert!((sum - e.total_mw).abs() <= 0.01 * e.total_mw, "{:?}", e);
    let pj = e.total_mw * e.cycles as f64 * e.clock_ns / e.lines as f64;
    assert!((pj - e.pj_per_line).abs() <= 1e-6 * pj.max(1.0), "{:?}", e);
    hwzip::flow::energy::write(std::slice::from_ref(&e), work.path()).unwrap();
    let md = std::fs::read_to_string(work.path().join("energy.md")).unwrap();
    assert!(md.contains("| zvc | compressor | osu018 |"), "{}", md);
}

/// A small ZVC (8-bit words, 4 lanes, 8-word windows) synthesized on osu018 at 5 ns: the
/// configuration, the library, the work directory and the rows of `unit` (or every unit).
fn small_zvc_on_osu018(
    unit: Option<&str>,
) -> (
    Config,
    Vec<hwzip::synth::Liberty>,
    tempfile::TempDir,
    Vec<hwzip::synth::ReportRow>,
) {
    let mut cfg = Config::from_yaml("zvc: {word_bits: 8, lanes: 4, window: 8}").unwrap();
    cfg.synth.clock_ns = 5.0;
    let libs = hwzip::flow::libraries(&["osu018".to_string()], &mut Vec::new()).unwrap();
    let work = tempfile::tempdir().unwrap();
    let rows = hwzip::flow::synth(
        &engines::zvc::Zvc,
        &cfg,
        &libs,
        work.path(),
        unit,
        &mut |_| {},
    )
    .unwrap();
    (cfg, libs, work, rows)
}
