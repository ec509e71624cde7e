use super::*;
use crate::cosim::dut::SimDut;
use crate::rtl::buddy::mc_ctrl::{mc_ctrl, mc_ctrl_faulty, McFault};

fn cfg(seed: u64) -> HarnessConfig {
    HarnessConfig::seeded(seed)
}

/// A small slice (1 KB, 2 MSHRs) so the runs here miss, merge and write back.
fn small() -> BuddyRtlParams {
    let mut p = BuddyRtlParams::default();
    p.meta.size_bytes = 1024;
    p.meta.mshrs = 2;
    p.meta.mshr_slots = 2;
    p
}

fn show(r: &McRun, what: &str) {
    eprintln!(
        "{what}: {} requests (reads, writes, partial) {:?}, per target {:?}, {} cycles; \
         moved {:?}; metadata (hits, misses, merges) {:?}",
        r.stats.lines, r.requests.kinds, r.requests.per_target, r.stats.cycles, r.rtl, r.cache.0
    );
}

/// The defaults, a second set (64 KB pages, 2 MCs, 64-bit symbols, alternate prefixes, a
/// 2-token decoder) and the 1 GHz units (the serial decoder, the 3-stage address generator) in
/// the interpreter, every target, request kind and memory checked.
#[test]
fn interpreter_mc_ctrl_matches_the_system_model() {
    let mut alt = small();
    alt.addr = crate::model::buddy::AddrParams::pages_64k();
    alt.mc.mcs = 2;
    alt.meta.entry_bits = 29;
    alt.bpc.sym_bits = 64;
    alt.bpc.prefixes = crate::model::bpc::BpcPrefixes::Alternate;
    alt.bpc.dec_tokens = 2;
    // The serial decompressor (3 lanes, every sum split) and the address generator in 3
    // stages (asked for the four pieces' addresses).
    let mut ser = small();
    ser.bpc.dec_tokens = 1;
    ser.bpc.dec_lanes = 3;
    ser.bpc.dec_sum_stages = 4;
    ser.addr_stages = 3;
    for (p, n) in [(small(), 400u64), (alt, 200), (ser, 200)] {
        let top = mc_ctrl(&p).unwrap();
        let mut dut = SimDut::new(&top).unwrap();
        let r = run(&mut dut, &top, &p, n, &cfg(3)).unwrap();
        show(&r, &top.name);
        r.check().unwrap();
        assert_eq!(r.stats.lines, n);
        assert!(
            r.requests.per_target.iter().all(|&c| c > 0),
            "{:?}",
            r.requests.per_target
        );
        assert!(
            r.rtl.buddy_accesses > 0 && r.rtl.zero_accesses > 0,
            "{:?}",
            r.rtl
        );
        assert!(r.cache.0[1] > 0 && r.rtl.meta_writes > 0, "{:?}", r.cache);
    }
}

/// Resets in the middle of requests: the model restarts cold over what the memories hold
/// and the run goes on matching it.
#[test]
fn mc_ctrl_recovers_from_mid_run_resets() {
    let p = small();
    let top = mc_ctrl(&p).unwrap();
    let mut dut = SimDut::new(&top).unwrap();
    let c = HarnessConfig {
        resets: 6,
        ..cfg(9)
    };
    let r = run(&mut dut, &top, &p, 600, &c).unwrap();
    show(&r, "with resets");
    r.check().unwrap();
    assert!(r.stats.resets >= 3, "{} resets", r.stats.resets);
}

/// Each defect of [`McFault`] is caught (the interpreter runs the faulty generator).
#[test]
fn scoreboard_catches_injected_mc_faults() {
    let p = small();
    for f in [
        McFault::RmwMerge,
        McFault::BuddyOffset,
        McFault::MetaCode,
        McFault::SlotWidth,
        McFault::BuddyCount,
    ] {
        let top = mc_ctrl_faulty(&p, f).unwrap();
        let mut dut = SimDut::new(&top).unwrap();
        match run(&mut dut, &top, &p, 400, &cfg(5)) {
            Ok(r) => {
                let e = r.check().expect_err(&format!("{f:?} not caught"));
                eprintln!("{f:?}: caught: {e}");
            }
            Err(e) => eprintln!("{f:?}: caught: {e}"),
        }
    }
}

/// Configurations the controller cannot serve are errors, not panics.
#[test]
fn mc_ctrl_rejects_unsupported_configurations() {
    let mut p = BuddyRtlParams::default();
    p.bpc.entry_bytes = 32;
    assert!(mc_ctrl(&p).unwrap_err().to_string().contains("entry_bytes"));
    let mut p = BuddyRtlParams::default();
    p.meta.entry_bits = 20;
    assert!(mc_ctrl(&p).unwrap_err().to_string().contains("too narrow"));
}

/// `n` requests (seed `seed`) through a Verilator build of the default controller under
/// stalls, shown as `what`; everything must equal the system model.
fn verilator_default_run(n: u64, seed: u64, what: &str) -> McRun {
    let p = BuddyRtlParams::default();
    let top = mc_ctrl(&p).unwrap();
    let mut dut = crate::cosim::vdut::VerilatorDut::new(&top, false).unwrap();
    let r = run(&mut dut, &top, &p, n, &cfg(seed)).unwrap();
    show(&r, what);
    r.check().unwrap();
    r
}

/// The defaults in Verilator under stalls (the 10^6 run is in the long tier).
#[test]
fn verilator_mc_ctrl_matches_the_system_model() {
    verilator_default_run(5_000, 7, "mc_ctrl");
}

/// The figure in docs/RESULTS.md (long tier: `cargo test --release -- --ignored buddy_mc_million`):
/// 10^6 mixed requests in Verilator under stalls, everything equal to the model.
#[test]
#[ignore]
fn buddy_mc_million_requests() {
    let r = verilator_default_run(1_000_000, 11, "10^6 requests");
    eprintln!("{} s", r.stats.seconds);
}
