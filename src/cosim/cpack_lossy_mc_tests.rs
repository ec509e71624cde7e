use super::*;
use crate::cosim::dut::SimDut;
use crate::cosim::fault::{Fault, FaultModel};
use crate::cosim::vdut::VerilatorDut;
use crate::model::cpack_lossy::fp::TruncLayout;
use crate::rtl::cpack_lossy::mc_top;

fn cfg(seed: u64) -> HarnessConfig {
    HarnessConfig::seeded(seed)
}

/// A small MD cache (2 sets × 2 ways of 16 B lines: every lookup pattern evicts) and no
/// queues.
fn small() -> LossyRtlParams {
    let mut p = LossyRtlParams::default();
    p.md_cache.sets = 2;
    p.md_cache.line_bytes = 16;
    p.md_cache.mshrs = 2;
    p.queues.req_beats = 0;
    p.queues.rsp_beats = 0;
    p
}

fn show(r: &McRun, what: &str) {
    eprintln!(
        "{what}: requests (reads, full, partial, local) {:?}, {} cycles, MD (hits, misses) \
         ({}, {}), {:?}",
        r.requests, r.stats.cycles, r.cache.0[0], r.cache.0[1], r.rtl
    );
}

#[test]
fn interpreter_mc_top_matches_model() {
    let p = small();
    let top = mc_top(&p).unwrap();
    let mut dut = SimDut::new(&top).unwrap();
    let r = run(&mut dut, &top, &p, 25, &cfg(1)).unwrap();
    r.check().unwrap();
    for (i, p) in variants().into_iter().enumerate().skip(1) {
        let top = mc_top(&p).unwrap();
        let mut dut = SimDut::new(&top).unwrap();
        let r = run(&mut dut, &top, &p, 40, &cfg(2 + i as u64)).unwrap();
        r.check().unwrap_or_else(|e| panic!("{}: {e}", top.name));
    }
}

/// 32 B blocks (a small compressor: quick Verilator builds) with the small MD cache.
fn tiny() -> LossyRtlParams {
    let mut p = small();
    p.codec.block_bytes = 32;
    p.codec.t_table = [0, 8, 16, 16];
    p
}

fn variants() -> Vec<LossyRtlParams> {
    let mut v = vec![LossyRtlParams::default()];
    let mut s = tiny();
    s.codec.layout = TruncLayout::Shifted;
    s.codec.fill = crate::model::cpack_lossy::fp::RestoreFill::Midpoint;
    s.queues.rsp_beats = 4;
    s.comp_in_stage = true;
    v.push(s);
    let mut b = small();
    b.codec.block_bytes = 64;
    b.codec.md_bits = 4;
    b.words_per_cycle = 1;
    v.push(b);
    v
}

/// `n` requests through a Verilator build of the MC top of `p` under `c`; everything must
/// equal the model.
fn verilator_run(p: &LossyRtlParams, n: u64, c: &HarnessConfig) -> McRun {
    let top = mc_top(p).unwrap();
    let mut dut = VerilatorDut::new(&top, false).unwrap();
    let r = run(&mut dut, &top, p, n, c).unwrap();
    r.check().unwrap_or_else(|e| panic!("{}: {e}", top.name));
    r
}

/// Mixed requests under stalls and two reordering memories: responses, chunks and MD lines
/// moved, the MD cache's counters and the final DRAM and MD contents equal the model's.
#[test]
fn verilator_mc_top_matches_model_under_stalls() {
    // The default; the shifted 32 B set and the 64 B one-word set run in the interpreter
    // (`interpreter_mc_top_matches_model`) and in Verilator in the long tier
    // (`verif/configs/cpack_lossy_mc_*.yaml`).
    for (i, p) in variants().into_iter().take(1).enumerate() {
        let n = if i == 0 { 10_000 } else { 4_000 };
        let r = verilator_run(&p, n, &cfg(70 + i as u64));
        show(&r, &format!("variant {i}"));
    }
}

/// 20 resets in mid-request: the design comes back idle, the model restarts from the
/// memories, and every later request matches.
#[test]
fn verilator_mc_top_recovers_from_mid_run_resets() {
    let c = HarnessConfig {
        resets: 20,
        ..cfg(80)
    };
    let r = verilator_run(&LossyRtlParams::default(), 5_000, &c);
    assert_eq!(r.stats.resets, 20);
    show(&r, "with 20 resets");
}

/// Timing with ideal memories (see [`measure`]).
#[test]
fn mc_top_timing() {
    let p = LossyRtlParams::default();
    let top = mc_top(&p).unwrap();
    let mut dut = VerilatorDut::new(&top, false).unwrap();
    let t = measure(&mut dut, &top, &p).unwrap();
    eprintln!(
        "mc-top: read turnaround {} cycles, {:.4} requests/cycle, {:.2} B/cycle (mixed)",
        t.latency_cycles, t.in_beats_per_cycle, t.raw_bytes_per_cycle
    );
    assert!(t.latency_cycles >= 10 && t.latency_cycles < 40, "{t:?}");
}

/// Faults the MC scoreboard must catch (on 32 B blocks, for quick builds): the
/// read-modify-write merge taking the old bytes
/// where the mask is set, an MD miss not sending the read out at once (the raw chunk count),
/// MD entries written without their `tcode`, and an MD cache that never marks a line dirty
/// (lost MD write-backs).
#[test]
fn scoreboard_catches_injected_mc_faults() {
    let mut p = tiny();
    p.queues.req_beats = 2;
    let top = mc_top(&p).unwrap();
    let cache_name = crate::rtl::cache::cache(&p.md_cache.rtl(p.codec.md_bits))
        .unwrap()
        .name
        .clone();
    type Edit<'a> = (&'a str, String, &'a dyn Fn(&str) -> String);
    let edits: [Edit; 4] = [
        ("rmw", top.name.clone(), &|v: &str| {
            v.replace(
                "(wmask0_q[0] ? wbuf0_q[7:0] : u_restore_m_data_o[7:0])",
                "(wmask0_q[0] ? u_restore_m_data_o[7:0] : wbuf0_q[7:0])",
            )
        }),
        ("md-miss", top.name.clone(), &|v: &str| {
            let i = v.find("assign md_line_read = ").unwrap();
            let end = i + v[i..].find(';').unwrap();
            format!("{}assign md_line_read = 1'b0{}", &v[..i], &v[end..])
        }),
        ("md-entry", top.name.clone(), &|v: &str| {
            v.replace("tcode_q, 2'd0};", "2'd0, 2'd0};")
        }),
        ("md-dirty", cache_name, &|v: &str| {
            v.replacen(
                "dirty_w0_q[k] <= dirty_w0_d[k];",
                "dirty_w0_q[k] <= 1'd0;",
                1,
            )
        }),
    ];
    // One model with the four faults, each switched on at run time (`FaultModel` refuses an
    // edit that changes nothing).
    let faults: Vec<Fault> = edits
        .iter()
        .map(|(_, module, edit)| Fault {
            file_prefix: module,
            edit: *edit,
        })
        .collect();
    let fm = FaultModel::build(&top, &faults).unwrap();
    for (k, (what, _, _)) in edits.iter().enumerate() {
        let mut dut = fm.dut(Some(k)).unwrap();
        match run(&mut dut, &top, &p, 20_000, &cfg(90)) {
            Ok(r) => {
                let e = r.check().expect_err(what);
                eprintln!("{what}: caught: {e}");
            }
            Err(e) => eprintln!("{what}: caught: {e}"),
        }
    }
}

/// The figure in docs/RESULTS.md (long tier: `cargo test --release -- --ignored mc_top_million`):
/// 10^6 mixed requests under stalls, everything equal to the model.
#[test]
#[ignore]
fn mc_top_million_requests() {
    let r = verilator_run(&LossyRtlParams::default(), 1_000_000, &cfg(11));
    show(&r, "10^6 requests");
    eprintln!(
        "MD hit rate {:.4}; {} s",
        r.cache.0[0] as f64 / (r.cache.0[0] + r.cache.0[1] + r.cache.0[2]) as f64,
        r.stats.seconds
    );
}
