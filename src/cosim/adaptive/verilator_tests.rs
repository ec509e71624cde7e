//! Verilator tests of the adaptive scoreboard.

use super::*;
use crate::cosim::dut::SimDut;
use crate::cosim::fault::{faulty_dut, invert_mux_select};
use crate::cosim::run::Stimulus;
use crate::cosim::test_util::fault_caught;
use crate::cosim::vdut::VerilatorDut;

fn params(yaml: &str) -> AdaptiveRtlParams {
    let p: AdaptiveRtlParams = serde_yaml::from_str(yaml).unwrap();
    p.validate().unwrap();
    p
}

/// The unit in Verilator, or in the interpreter (`verilator` false).
fn dut_of(p: &AdaptiveRtlParams, unit: Unit, verilator: bool) -> Box<dyn Dut> {
    let t = top(p, unit).unwrap();
    if verilator {
        Box::new(VerilatorDut::new(&t, false).unwrap())
    } else {
        Box::new(SimDut::new(&t).unwrap())
    }
}

fn run_unit(p: &AdaptiveRtlParams, unit: Unit, lines: u64, seed: u64, verilator: bool) -> RunStats {
    let mut dut = dut_of(p, unit, verilator);
    let cfg = StimConfig::of(&RunConfig::seeded(lines, seed));
    let st = run_clean(dut.as_mut(), p, unit, &cfg).unwrap();
    assert_eq!(st.lines, lines);
    st
}

/// The default and two sets that between them change every BDI parameter (line size, base
/// rule, decompressor stages). Verilator runs the default; the other sets run in the
/// interpreter here and in Verilator in the long tier (`verif/configs/adaptive_*.yaml`).
const SETS: &[&str] = &[
    "{}",
    "{line_bytes: 128, bdi_base_rule: first-non-immediate}",
    "{line_bytes: 32, bdi_base_rule: first-non-immediate, bdi_decomp_stages: 2}",
];

/// Runs the compressor, decompressor and loop-back `units` on every parameter set: the first
/// set in Verilator (`first` lines), the others in the interpreter (`rest` lines, cycle by
/// cycle the same RTL; each set is a Verilator build of its own, which the long tier makes
/// through `verif/configs/adaptive_*.yaml`). Unit k of set i gets seed `seed + 10·k + i`.
fn run_sets(sets: &[&str], units: [Unit; 3], first: u64, rest: u64, seed: u64) {
    for (i, y) in sets.iter().enumerate() {
        let p = params(y);
        let n = if i == 0 { first } else { rest };
        for (k, unit) in units.iter().copied().enumerate() {
            run_unit(&p, unit, n, seed + 10 * k as u64 + i as u64, i == 0);
        }
    }
}

#[test]
fn verilator_bdi_units_match_model() {
    let units = [Unit::BdiComp, Unit::BdiDecomp, Unit::BdiLoopback];
    run_sets(SETS, units, 50_000, 400, 10);
}

#[test]
fn verilator_fpc_units_match_model() {
    let sets = [
        "{}",
        "{line_bytes: 32, fpc_comp_stages: 3, fpc_decomp_stages: 8}",
        "{line_bytes: 128, fpc_comp_stages: 4, fpc_decomp_stages: 16}",
    ];
    let units = [Unit::FpcComp, Unit::FpcDecomp, Unit::FpcLoopback];
    run_sets(&sets, units, 30_000, 300, 110);
}

/// Measures `unit` of `p` (in Verilator, or in the interpreter) over 1000 lines: its latency
/// must be `lat` cycles and it must take a line every cycle (`what` names the parameters).
fn assert_timing(p: &AdaptiveRtlParams, unit: Unit, verilator: bool, lat: u64, what: &str) {
    let mut dut = dut_of(p, unit, verilator);
    let t = measure_over(dut.as_mut(), p, unit, 1000).unwrap();
    assert_eq!(t.latency_cycles, lat, "{} {what}", unit.name());
    // One line per cycle once full: 1000 lines in about 1000 + latency cycles.
    let full_rate = 1000.0 / (1000.0 + lat as f64);
    assert!(
        t.in_beats_per_cycle > 0.995 * full_rate,
        "{}: {:?}",
        unit.name(),
        t
    );
}

#[test]
fn verilator_fpc_latency_and_throughput() {
    for lb in [32, 64, 128] {
        let p = params(&format!("{{line_bytes: {lb}}}"));
        for (unit, lat) in [(Unit::FpcComp, 3), (Unit::FpcDecomp, 5)] {
            // The default in Verilator, the other line sizes in the interpreter.
            assert_timing(&p, unit, lb == 64, lat, &format!("{lb} B"));
        }
    }
    // More stages: one more cycle each (interpreter).
    for stages in [8u32, 16] {
        let p = params(&format!("{{fpc_decomp_stages: {stages}}}"));
        let what = format!("fpc_decomp_stages={stages}");
        assert_timing(&p, Unit::FpcDecomp, false, 1 + stages as u64, &what);
    }
    for (stages, lb) in [(3u32, 64), (4, 64), (4, 32)] {
        let p = params(&format!("{{line_bytes: {lb}, fpc_comp_stages: {stages}}}"));
        let what = format!("fpc_comp_stages={stages} {lb} B");
        assert_timing(&p, Unit::FpcComp, false, 1 + stages as u64, &what);
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

/// The default controller in Verilator; the other lambdas and option rules run in the
/// interpreter (`interpreter_ctrl_matches_model_sequence`) and in Verilator in the long tier.
#[test]
fn verilator_ctrl_matches_model_sequence() {
    use crate::model::adaptive::DecisionRule;
    let p = AdaptiveRtlParams::default();
    let lines = 30_000;
    let cfg = StimConfig::of(&RunConfig::seeded(lines, 46));
    let mut dut = VerilatorDut::new(&top(&p, Unit::Ctrl).unwrap(), false).unwrap();
    let st = run_clean(&mut dut, &p, Unit::Ctrl, &cfg).unwrap();
    assert_eq!(st.beats_out, lines);
    let (_, rep) = ctrl_cases(&p, &ctrl_lines(&p, &cfg)).unwrap();
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
        "ctrl: {lines} sel_alg compared, {} phases, rules quorum/tie/none {:?}, decisions {:?}",
        rep.phases.len(),
        rules,
        d
    );
    assert!(d.len() >= 2, "decisions never change");
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
    let cfg = StimConfig::of(&RunConfig::lines(5_000));
    let m = fault_caught(run(&mut dut, &p, Unit::Ctrl, &cfg));
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
            // The default in Verilator, two stages in the interpreter.
            assert_timing(&p, unit, stages == 1, lat, &format!("stages={stages}"));
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
    let cfg = StimConfig::of(&RunConfig::lines(lines));
    let m = fault_caught(run(&mut dut, p, unit, &cfg));
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
    let cfg = StimConfig::of(&RunConfig::lines(5_000));
    let m = fault_caught(run(&mut dut, &p, Unit::BdiComp, &cfg));
    assert_eq!(m.field, "m_payload_o");
    // The decompressor's sign extension of the immediate Base8-Δ1 deltas replaced by zero
    // extension (in the loop over the elements).
    let mut dut = faulty(&p, Unit::BdiDecomp, &|v| {
        let w = v.replace(
            ": {56{s_payload_i[-8*i + 435]}}), b8d1_lo[i]",
            ": 56'd0), b8d1_lo[i]",
        );
        assert_ne!(w, v, "the Base8-Δ1 sign extension is in the Verilog");
        w
    });
    let m = fault_caught(run(&mut dut, &p, Unit::BdiDecomp, &cfg));
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
    run_sets(CPACK_SETS, units, 40_000, 150, 110);
}

#[test]
fn verilator_cpack_latency_and_throughput() {
    // 64 B, 2 words per cycle: P = 8 steps; compressor 1 + 8 + T/E + F + output = 12
    // (P + 4), decompressor 8 steps (the first in the acceptance cycle) + output = 9
    // (P + 1); II = P. The sets of `verilator_cpack_units_match_model` (the default in
    // Verilator, the others in the interpreter).
    for (i, (y, lc, ld, ii)) in [
        (CPACK_SETS[0], 12, 9, 8.0),
        (CPACK_SETS[1], 8, 5, 4.0),
        (CPACK_SETS[2], 36, 33, 32.0),
    ]
    .into_iter()
    .enumerate()
    {
        let p = params(y);
        for (unit, lat) in [(Unit::CpackComp, lc), (Unit::CpackDecomp, ld)] {
            let mut dut = dut_of(&p, unit, i == 0);
            let t = measure_over(dut.as_mut(), &p, unit, 1000).unwrap();
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
