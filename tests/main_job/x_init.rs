//! X-propagation check: every unit of every engine (small configurations) is Verilated with
//! `--x-assign unique --x-initial unique` (in effect: no emitted design holds an X literal,
//! and Verilator draws initial values from the seed in every build) and started with every register, memory, input and
//! X assignment at random values (two seeds per unit); after the harness's reset, every
//! transaction, including ones after mid-run resets, must match the golden model, and no output
//! may be valid while the unit is idle. An output that depended on state the reset leaves
//! undefined (a datapath register, a FIFO's memory, a case default of `'x`) would differ from
//! the model for some seed. That the randomization reaches such state is shown on a fixture in
//! `cosim::tests::x_random_build_randomizes_unreset_state_and_x_assignments`.
//! The per-unit figures are printed for docs/RELIABILITY.md.

use super::common;
use hwzip::config::Config;
use hwzip::engines;
use hwzip::flow::{self, CosimRequest};

/// Seeds of the random initial state; each unit runs once per seed.
const SEEDS: [u32; 2] = [0x5eed_0001, 0x5eed_0002];

#[test]
fn no_unit_depends_on_state_the_reset_leaves_undefined() {
    if !common::have("verilator") {
        eprintln!("verilator not installed; skipping (run scripts/setup.sh)");
        return;
    }
    // Small configurations of every engine (quick builds; the structures whose state a reset
    // may leave undefined, FIFOs and queues included, are all there), built at -O0 as in the
    // main-job test (`tests/main_job/flow.rs`), whose models these are: no emitted design has
    // an X literal, so the X-random runs share the plain builds.
    hwzip::cosim::set_opt_level(0);
    let cfg = common::small_config(2);
    let work: Vec<_> = engines::ALL
        .iter()
        .flat_map(|&e| {
            // Without the units the small configuration does not have (Buddy's controller
            // needs 128 B entries; `cosim::buddy_mc` covers it).
            let designs = e.units(&cfg).unwrap();
            engines::configured(e, &designs, engines::known_cosim_units(e))
                .into_iter()
                .map(move |u| (e, u))
        })
        .collect();
    // Two workers (the units are independent; most of the time is Verilator builds), the
    // registry's last engines (the largest units) first so that no long build runs alone at
    // the end.
    let order: Vec<usize> = (0..work.len()).rev().collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let rows = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let (e, unit) = &work[i];
                let row = run_unit(&cfg, *e, unit);
                rows.lock().unwrap().push((i, row));
            });
        }
    });
    let mut rows = rows.into_inner().unwrap();
    rows.sort(); // the registry's order
    let rows: Vec<String> = rows.into_iter().map(|(_, r)| r).collect();
    eprintln!("| engine | unit | seeds | lines | resets | mismatches |");
    eprintln!("|---|---|---:|---:|---:|---:|");
    for r in &rows {
        eprintln!("{r}");
    }
}

/// One unit under both seeds: its row in docs/RELIABILITY.md.
fn run_unit(cfg: &Config, e: engines::EngineRef, unit: &str) -> String {
    let mut lines = 0;
    let mut resets = 0;
    for (i, &seed) in SEEDS.iter().enumerate() {
        let mut stim = flow::stim_from(cfg, None);
        stim.lines = 2_000;
        stim.seed = cfg.cosim.seed + i as u64;
        stim.resets = 4;
        let req = CosimRequest {
            engine: e,
            unit: unit.to_string(),
            stim,
            vcd: None,
            x_seed: Some(seed),
        };
        let r = flow::cosim(&req, cfg, &mut |_| {}).unwrap();
        let s = &r.stats;
        assert!(
            s.first_mismatch.is_none(),
            "{} {} (x seed {seed:#x}): {}",
            e.name(),
            unit,
            s.first_mismatch.as_ref().unwrap()
        );
        assert_eq!(r.x_seed, Some(seed));
        lines += s.lines;
        resets += s.resets;
    }
    format!(
        "| {} | {} | {} | {} | {} | 0 |",
        e.name(),
        unit,
        SEEDS.len(),
        lines,
        resets
    )
}
