//! Verilator tests of the adaptive scoreboard.

use super::*;
use crate::cosim::fault::{faulty_dut, invert_mux_select};
use crate::cosim::vdut::VerilatorDut;
use crate::model::adaptive::AdaptiveReport;

fn params(yaml: &str) -> AdaptiveRtlParams {
    let p: AdaptiveRtlParams = serde_yaml::from_str(yaml).unwrap();
    p.validate().unwrap();
    p
}

fn run_unit(p: &AdaptiveRtlParams, unit: Unit, lines: u64, seed: u64) -> RunStats {
    let mut dut = VerilatorDut::new(&top(p, unit).unwrap(), false).unwrap();
    let cfg = StimConfig {
        lines,
        seed,
        ..StimConfig::default()
    };
    let st = run_clean(&mut dut, p, unit, &cfg).unwrap();
    assert_eq!(st.lines, lines);
    st
}

/// The default and two sets that between them change every BDI parameter (line size, base
/// rule, decompressor stages); the single-parameter sets run in the long tier
/// (`verif/configs/adaptive_*.yaml`).
const SETS: &[&str] = &[
    "{}",
    "{line_bytes: 128, bdi_base_rule: first-non-immediate}",
    "{line_bytes: 32, bdi_base_rule: first-non-immediate, bdi_decomp_stages: 2}",
];

/// Runs the compressor, decompressor and loop-back `units` on every parameter set: `first`
/// lines on the first set, `rest` on the others; unit k of set i gets seed
/// `seed + 10·k + i`.
/// Every unit at the first set; the other sets without the loop-back (the compressor and
/// decompressor again in one model: a long build that checks nothing new at these lengths;
/// the long tier runs it through `verif/configs/adaptive_*.yaml`).
fn run_sets(sets: &[&str], units: [Unit; 3], first: u64, rest: u64, seed: u64) {
    for (i, y) in sets.iter().enumerate() {
        let p = params(y);
        let n = if i == 0 { first } else { rest };
        let units = if i == 0 { &units[..] } else { &units[..2] };
        for (k, unit) in units.iter().copied().enumerate() {
            run_unit(&p, unit, n, seed + 10 * k as u64 + i as u64);
        }
    }
}

#[test]
fn verilator_bdi_units_match_model() {
    let units = [Unit::BdiComp, Unit::BdiDecomp, Unit::BdiLoopback];
    run_sets(SETS, units, 50_000, 10_000, 10);
}

#[test]
fn verilator_fpc_units_match_model() {
    let sets = ["{}", "{line_bytes: 32}", "{line_bytes: 128}"];
    let units = [Unit::FpcComp, Unit::FpcDecomp, Unit::FpcLoopback];
    run_sets(&sets, units, 30_000, 5_000, 110);
}

#[test]
fn verilator_fpc_latency_and_throughput() {
    for lb in [32, 64, 128] {
        let p = params(&format!("{{line_bytes: {lb}}}"));
        for (unit, lat) in [(Unit::FpcComp, 3), (Unit::FpcDecomp, 5)] {
            let mut dut = VerilatorDut::new(&top(&p, unit).unwrap(), false).unwrap();
            let t = measure(&mut dut, &p, unit).unwrap();
            assert_eq!(t.latency_cycles, lat, "{} {lb} B", unit.name());
            assert!(t.in_beats_per_cycle > 0.99, "{}: {:?}", unit.name(), t);
        }
    }
}

#[test]
fn scoreboard_catches_injected_fpc_faults() {
    let p = AdaptiveRtlParams::default();
    // Packer, level-1 merge of words 2 and 3: the shift-by-4 stage's select inverted.
    assert_mux_fault_caught(&p, Unit::FpcComp, "mg1_1_s2", "m_payload_o", 5_000);
    // Decompressor step 5: the write of word slot 7 inverted.
    assert_mux_fault_caught(&p, Unit::FpcDecomp, "k5_slot7", "m_line_o", 5_000);
}

fn ctrl_verilator(y: &str, lines: u64, seed: u64) -> AdaptiveReport {
    let p = params(y);
    let cfg = StimConfig {
        lines,
        seed,
        ..StimConfig::default()
    };
    let mut dut = VerilatorDut::new(&top(&p, Unit::Ctrl).unwrap(), false).unwrap();
    let st = run_clean(&mut dut, &p, Unit::Ctrl, &cfg).unwrap();
    assert_eq!(st.beats_out, lines, "{y}");
    let (_, rep) = ctrl_cases(&p, &ctrl_lines(&p, &cfg)).unwrap();
    rep
}

#[test]
fn verilator_ctrl_matches_model_sequence() {
    use crate::model::adaptive::DecisionRule;
    for lam in [0, 6, 32] {
        let rep = ctrl_verilator(&format!("{{lambda: {lam}}}"), 30_000, 40 + lam as u64);
        let mut rules = [0usize; 3];
        for ph in &rep.phases {
            rules[match ph.rule {
                DecisionRule::Quorum => 0,
                DecisionRule::QuorumTie => 1,
                DecisionRule::NoQuorum => 2,
            }] += 1;
        }
        let mut d = rep.decisions();
        d.sort();
        d.dedup();
        eprintln!(
            "ctrl lambda {lam}: 30000 sel_alg compared, {} phases, rules quorum/tie/none {:?}, decisions {:?}",
            rep.phases.len(),
            rules,
            d
        );
        assert!(d.len() >= 2, "lambda {lam}: decisions never change");
    }
    for (i, y) in [
        "{run_len: 20, no_quorum: keep-previous, vote_tie: lower-latency}",
        "{run_len: 5, no_quorum: plurality, sample_send: current, lambda: 2}",
        "{run_len: 0, sample_len: 5, vote_threshold: 2, use_fpc: false}",
        "{line_bytes: 128, run_len: 30, lambda: 32, use_bdi: false}",
    ]
    .iter()
    .enumerate()
    {
        ctrl_verilator(y, 10_000, 60 + i as u64);
    }
}

#[test]
fn verilator_ctrl_latency_and_throughput() {
    let p = AdaptiveRtlParams::default();
    let mut dut = VerilatorDut::new(&top(&p, Unit::Ctrl).unwrap(), false).unwrap();
    let t = measure(&mut dut, &p, Unit::Ctrl).unwrap();
    assert_eq!(
        t.latency_cycles, 2,
        "one register stage, the acceptance cycle counted"
    );
    assert!(t.in_beats_per_cycle > 0.99, "{:?}", t);
}

#[test]
fn scoreboard_catches_injected_ctrl_fault() {
    // The vote-threshold compare of BDI inverted.
    let p = AdaptiveRtlParams::default();
    let mut dut = faulty(&p, Unit::Ctrl, &|v| {
        v.replace(
            "assign qual_bdi = (votes_bdi_q >= 3'd3);",
            "assign qual_bdi = (votes_bdi_q < 3'd3);",
        )
    });
    let cfg = StimConfig {
        lines: 5_000,
        ..StimConfig::default()
    };
    let m = run(&mut dut, &p, Unit::Ctrl, &cfg)
        .unwrap()
        .first_mismatch
        .expect("the injected fault must be detected");
    assert_eq!(m.field, "m_sel_alg_o");
}

#[test]
fn verilator_bdi_latency_and_throughput() {
    // Latency counts the acceptance cycle: 1 + the configured register stages.
    for stages in [1u32, 2] {
        let p = AdaptiveRtlParams {
            bdi_decomp_stages: stages,
            ..AdaptiveRtlParams::default()
        };
        for (unit, lat) in [
            (Unit::BdiComp, 3),
            (Unit::BdiDecomp, 1 + stages as u64),
            (Unit::BdiLoopback, 3 + stages as u64),
        ] {
            let mut dut = VerilatorDut::new(&top(&p, unit).unwrap(), false).unwrap();
            let t = measure(&mut dut, &p, unit).unwrap();
            assert_eq!(t.latency_cycles, lat, "{} stages={}", unit.name(), stages);
            assert!(t.in_beats_per_cycle > 0.99, "{}: {:?}", unit.name(), t);
        }
    }
}

fn faulty(p: &AdaptiveRtlParams, unit: Unit, edit: &dyn Fn(&str) -> String) -> VerilatorDut {
    let top = top(p, unit).unwrap();
    faulty_dut(&top, &top.name, edit).unwrap()
}

/// Inverts the select of mux `mux` in `unit` and checks that the scoreboard reports a
/// mismatch on `field` within `lines` lines.
fn assert_mux_fault_caught(p: &AdaptiveRtlParams, unit: Unit, mux: &str, field: &str, lines: u64) {
    let mut dut = faulty(p, unit, &|v| {
        invert_mux_select(v, mux).unwrap_or_else(|| panic!("{mux} is a mux"))
    });
    let cfg = StimConfig {
        lines,
        ..StimConfig::default()
    };
    let m = run(&mut dut, p, unit, &cfg)
        .unwrap()
        .first_mismatch
        .expect("the injected fault must be detected");
    assert_eq!(m.field, field, "{} {mux}", unit.name());
}

#[test]
fn scoreboard_catches_injected_faults() {
    let p = AdaptiveRtlParams::default();
    // Stage 1, Base4-Δ1 element 3: the immediate/base delta select inverted (wrong only
    // for Base4-Δ1 lines whose element 3 is not the same both ways).
    let mut dut = faulty(&p, Unit::BdiComp, &|v| {
        invert_mux_select(v, "b4d1_dsel3").expect("b4d1_dsel3 is a mux")
    });
    let cfg = StimConfig {
        lines: 5_000,
        ..StimConfig::default()
    };
    let m = run(&mut dut, &p, Unit::BdiComp, &cfg)
        .unwrap()
        .first_mismatch
        .expect("the injected fault must be detected");
    assert_eq!(m.field, "m_payload_o");
    // The decompressor's sign extension of an immediate Base8-Δ1 delta 2 replaced by zero
    // extension.
    let mut dut = faulty(&p, Unit::BdiDecomp, &|v| {
        v.replace(": {56{s_payload_i[419]}}), b8d1_lo2", ": 56'd0), b8d1_lo2")
    });
    let m = run(&mut dut, &p, Unit::BdiDecomp, &cfg)
        .unwrap()
        .first_mismatch
        .expect("the injected fault must be detected");
    assert_eq!(m.field, "m_line_o");
}

/// The default, the original C-Pack (codes and push rule) at 32 B, and one word per cycle
/// with the gem5 push rule at 128 B (few sets: each is three Verilator builds).
const CPACK_SETS: &[&str] = &[
    "{}",
    "{line_bytes: 32, cpack_codes: original, cpack_push: no-full-match}",
    "{line_bytes: 128, cpack_push: all-non-zero, cpack_words_per_cycle: 1}",
];

#[test]
fn verilator_cpack_units_match_model() {
    let units = [Unit::CpackComp, Unit::CpackDecomp, Unit::CpackLoopback];
    run_sets(CPACK_SETS, units, 40_000, 10_000, 110);
}

#[test]
fn verilator_cpack_latency_and_throughput() {
    // 64 B, 2 words per cycle: P = 8 steps; compressor 1 + 8 + T/E + F + output = 12
    // (P + 4), decompressor 8 steps (the first in the acceptance cycle) + output = 9
    // (P + 1); II = P. The sets of `verilator_cpack_units_match_model` (shared builds).
    for (y, lc, ld, ii) in [
        (CPACK_SETS[0], 12, 9, 8.0),
        (CPACK_SETS[1], 8, 5, 4.0),
        (CPACK_SETS[2], 36, 33, 32.0),
    ] {
        let p = params(y);
        for (unit, lat) in [(Unit::CpackComp, lc), (Unit::CpackDecomp, ld)] {
            let mut dut = VerilatorDut::new(&top(&p, unit).unwrap(), false).unwrap();
            let t = measure(&mut dut, &p, unit).unwrap();
            assert_eq!(t.latency_cycles, lat, "{y} {}", unit.name());
            let per_line = 1.0 / t.in_beats_per_cycle;
            if unit == Unit::CpackComp {
                assert!((per_line - ii).abs() < 0.05, "{y} {}: {:?}", unit.name(), t);
            } else {
                // Raw lines and zero blocks take one cycle.
                assert!(per_line <= ii + 0.05, "{y} {}: {:?}", unit.name(), t);
            }
        }
    }
}

#[test]
fn scoreboard_catches_injected_cpack_faults() {
    let p = AdaptiveRtlParams::default();
    // Compressor: word 1's 3-byte/halfword index select inverted.
    assert_mux_fault_caught(&p, Unit::CpackComp, "w1_idx_th", "m_payload_o", 3_000);
    // Decompressor: token 1's dictionary forwarding select inverted.
    assert_mux_fault_caught(&p, Unit::CpackDecomp, "t1_dict", "m_line_o", 3_000);
}
