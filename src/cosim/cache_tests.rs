//! The cache controller against the model: interpreter and Verilator, both configurations,
//! and two injected faults the scoreboard must catch.

use super::*;
use crate::cosim::dut::SimDut;
use crate::cosim::fault::FaultModel;
use crate::cosim::vdut::VerilatorDut;
use crate::rtl::cache::cache;
use std::sync::Arc;

fn clean(r: &CacheRun, what: &str) {
    if let Err(e) = r.check() {
        panic!("{what}: {e}");
    }
    let m = r.model;
    assert!(
        m.hits > 0 && m.misses > 0 && m.merges > 0,
        "{what}: {:?}",
        m
    );
}

fn configs() -> [CacheRtlParams; 2] {
    [CacheRtlParams::pact12_md(), CacheRtlParams::buddy_slice()]
}

#[test]
fn interpreter_matches_the_model() {
    for p in configs() {
        let top = cache(&p).unwrap();
        let mut dut = SimDut::new(&top).unwrap();
        let r = run(&mut dut, &top, &p, 1_500, &HarnessConfig::default()).unwrap();
        clean(&r, &top.name);
    }
}

#[test]
fn verilator_matches_the_model_under_stalls() {
    for (i, p) in configs().into_iter().enumerate() {
        let top = cache(&p).unwrap();
        let mut dut = VerilatorDut::new(&top, false).unwrap();
        let cfg = HarnessConfig::seeded(11 + i as u64);
        let r = run(&mut dut, &top, &p, 20_000, &cfg).unwrap();
        clean(&r, &top.name);
        assert_eq!(
            r.stats.beats_out,
            20_000 + r.model.misses + r.model.writebacks
        );
    }
}

/// The paper-grade run: 10^6 lookups per configuration (`cargo test --release -- --ignored
/// cache_million`; `HWZIP_CACHE_LOOKUPS` changes the count).
#[test]
#[ignore = "long tier"]
fn cache_million_lookups() {
    let n = std::env::var("HWZIP_CACHE_LOOKUPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    for (i, p) in configs().into_iter().enumerate() {
        let top = cache(&p).unwrap();
        let mut dut = VerilatorDut::new(&top, false).unwrap();
        let cfg = HarnessConfig::seeded(100 + i as u64);
        let r = run(&mut dut, &top, &p, n, &cfg).unwrap();
        clean(&r, &top.name);
        let m = r.model;
        println!(
            "{}: {} lookups, {} cycles, {:.2} Mcycles/s, hits {} misses {} merges {} \
             (hit rate {:.4}), write-backs {}, RTL counters {:?}",
            top.name,
            n,
            r.stats.cycles,
            r.stats.cycles_per_second() / 1e6,
            m.hits,
            m.misses,
            m.merges,
            m.hit_rate(),
            m.writebacks,
            r.rtl
        );
    }
}

/// The faults of the two tests below in one model of the Buddy slice's cache (each switched
/// on at run time; the tests share the build): 0, the LRU update inverted (ways older than
/// the touched one age; inverted, the newer ones do); 1, an MSHR merge that ignores address
/// bit 0; 2, MSHR 0's valid bit left out of the reset; 3, a release's read of the data RAM
/// that does not wait for a stalled write-back to leave (its data is overwritten).
fn fault_model() -> (CacheRtlParams, Arc<Module>, FaultModel) {
    let p = CacheRtlParams::buddy_slice();
    let top = cache(&p).unwrap();
    let lru = |v: &str| {
        v.replacen(
            "(rank_w1_q[i] < touched_rank[i])",
            "(rank_w1_q[i] > touched_rank[i])",
            1,
        )
    };
    let w = p.sector_addr_bits() - 1;
    let merge = move |v: &str| {
        v.replacen(
            "(mshr_addr_q[0] == req_sector)",
            &format!("(mshr_addr_q[0][{w}:1] == req_sector[{w}:1])"),
            1,
        )
    };
    let reset = |v: &str| {
        v.replacen(
            "for (k = 0; k < 4; k = k + 1) mshr_valid_q[k] <= 1'd0;",
            "for (k = 1; k < 4; k = k + 1) mshr_valid_q[k] <= 1'd0;",
            1,
        )
    };
    let steal = |v: &str| {
        v.replacen(
            " & resp_free & (acc_we | mreq_lets_read));",
            " & resp_free);",
            1,
        )
    };
    let fm = FaultModel::of_top(&top, &[&lru, &merge, &reset, &steal]).unwrap();
    (p, top, fm)
}

/// Runs fault `k`; the run must fail (mismatch, model error, counters or hang).
fn caught(k: usize) -> bool {
    let (p, top, fm) = fault_model();
    let mut dut = fm.dut(Some(k)).unwrap();
    match run(&mut dut, &top, &p, 20_000, &HarnessConfig::default()) {
        Err(_) => true,
        Ok(r) => {
            r.error.is_some()
                || r.stats.first_mismatch.is_some()
                || r.rtl != [r.model.hits, r.model.misses, r.model.merges]
        }
    }
}

#[test]
fn scoreboard_catches_lru_merge_and_data_ram_faults() {
    assert!(caught(0), "inverted LRU update not caught");
    assert!(caught(1), "merge on a partial address not caught");
    assert!(
        caught(3),
        "a read over a stalled write-back's data not caught"
    );
}

/// `rst_ni` asserted 20 times at random busy cycles (with a lookup or a fill offered, with
/// responses or memory requests still expected), in a build whose registers and memories
/// start at random values: after each reset the controller is idle and every later lookup
/// matches the model restarted empty.
#[test]
fn verilator_recovers_from_mid_run_resets_from_random_initial_state() {
    for (i, p) in configs().into_iter().enumerate() {
        let top = cache(&p).unwrap();
        let mut dut = VerilatorDut::new_random(&top, 77 + i as u32).unwrap();
        let cfg = HarnessConfig {
            seed: 31 + i as u64,
            resets: 20,
            ..HarnessConfig::default()
        };
        let r = run(&mut dut, &top, &p, 20_000, &cfg).unwrap();
        clean(&r, &top.name);
        let s = &r.stats;
        assert_eq!(s.resets, 20, "{}", top.name);
        assert!(
            s.resets_mid.0 >= 5 && s.resets_mid.1 >= 5,
            "{}: resets with input offered / output expected: {:?}",
            top.name,
            s.resets_mid
        );
        eprintln!(
            "{}: 20,000 lookups, {} resets ({} with a beat offered, {} with output expected), \
             {} cycles, 0 mismatches",
            top.name, s.resets, s.resets_mid.0, s.resets_mid.1, s.cycles
        );
    }
}

/// The reset test can fail: with MSHR 0's valid bit left out of the reset, a run without
/// resets still matches (the model starts at 0 too), and a run with mid-run resets is caught.
#[test]
fn scoreboard_catches_an_mshr_that_survives_reset() {
    let (p, top, fm) = fault_model();
    let outcome = |resets: u32| {
        let mut dut = fm.dut(Some(2)).unwrap();
        let cfg = HarnessConfig {
            resets,
            ..HarnessConfig::default()
        };
        match run(&mut dut, &top, &p, 20_000, &cfg) {
            Err(e) => Err(e),
            Ok(r) => r.check(),
        }
    };
    assert!(
        outcome(0).is_ok(),
        "the fault is only visible after a reset"
    );
    let e = outcome(20).expect_err("an MSHR that survives reset not caught");
    eprintln!("caught: {e}");
}
