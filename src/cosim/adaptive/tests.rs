//! Interpreter tests of the adaptive scoreboard.

use super::*;
use crate::cosim::dut::SimDut;
use crate::cosim::run::Stimulus;
use crate::model::adaptive::Alg;

fn params(yaml: &str) -> AdaptiveRtlParams {
    let p: AdaptiveRtlParams = serde_yaml::from_str(yaml).unwrap();
    p.validate().unwrap();
    p
}

#[test]
fn stimulus_reaches_every_encoding() {
    let p = AdaptiveRtlParams::default();
    let h = encoding_histogram(&p, &StimConfig::of(&RunConfig::lines(20_000)));
    assert_eq!(h.len(), 9, "{:?}", h);
}

#[test]
fn captured_compressor_output_is_the_model_stream() {
    let p = AdaptiveRtlParams::default();
    let cfg = StimConfig {
        run: RunConfig {
            lines: 100,
            capture: true,
            ..RunConfig::default()
        },
        ..StimConfig::default()
    };
    let mut dut = SimDut::new(&top(&p, Unit::BdiComp).unwrap()).unwrap();
    let st = run_clean(&mut dut, &p, Unit::BdiComp, &cfg).unwrap();
    let mut src = LineSource::new(&p, &cfg);
    let mut want = Vec::new();
    while let Some(c) = src.next_case(false) {
        want.extend_from_slice(&c.comp.bits);
    }
    assert_eq!(st.output, want);
}

/// Runs the controller on the interpreter; returns (transactions, phases, distinct
/// decisions) after checking the whole `sel_alg` sequence.
fn ctrl_interp(y: &str, lines: u64, seed: u64) -> (u64, usize, usize) {
    let p = params(y);
    let cfg = StimConfig::of(&RunConfig::seeded(lines, seed));
    let mut dut = SimDut::new(&top(&p, Unit::Ctrl).unwrap()).unwrap();
    let st = run_clean(&mut dut, &p, Unit::Ctrl, &cfg).unwrap();
    assert_eq!(st.beats_out, lines, "{y}");
    let (_, rep) = ctrl_cases(&p, &ctrl_lines(&p, &cfg)).unwrap();
    assert_eq!(rep.sel_alg_sequence().len() as u64, lines);
    let mut d = rep.decisions();
    d.sort();
    d.dedup();
    (st.beats_out, rep.phases.len(), d.len())
}

#[test]
fn interpreter_ctrl_matches_model_sequence() {
    for lam in [0, 6, 32] {
        let (_, phases, distinct) = ctrl_interp(&format!("{{lambda: {lam}}}"), 4000, 3);
        assert!(phases >= 13, "lambda {lam}: {phases} phases");
        assert!(distinct >= 2, "lambda {lam}: decisions never change");
    }
    // Option rules, with short periods so that many decisions are taken.
    for y in [
        "{run_len: 20, no_quorum: keep-previous, vote_tie: lower-latency}",
        "{run_len: 5, no_quorum: plurality, sample_send: current, lambda: 2}",
        "{run_len: 0, sample_len: 5, vote_threshold: 2, use_fpc: false}",
        "{line_bytes: 32, run_len: 30, lambda: 32}",
        "{sample_len: 1, run_len: 0, vote_threshold: 1, no_quorum: keep-previous}",
        "{sample_len: 1, run_len: 3, vote_threshold: 1, sample_send: current}",
    ] {
        ctrl_interp(y, 1500, 5);
    }
}

/// The decompressor's cases over 5,000 lines of the default stimulus for `alg`.
fn decomp_cases(alg: Alg) -> Vec<LineCase> {
    let p = AdaptiveRtlParams::default();
    let mut src = LineSource::new(&p, &StimConfig::of(&RunConfig::lines(5_000))).with_alg(alg);
    std::iter::from_fn(|| src.next_case(true)).collect()
}

#[test]
fn fpc_stimulus_reaches_every_pattern_and_both_decoder_outcomes() {
    use crate::model::fpc::FpcPattern;
    let mut pats = std::collections::BTreeSet::new();
    let (mut raw, mut comp, mut arb_ok, mut arb_err) = (0, 0, 0, 0);
    let mut long_run = false;
    for c in decomp_cases(Alg::Fpc) {
        let f = fpc_of(&c);
        pats.extend(f.class.words.iter().copied());
        if f.compressed {
            comp += 1;
        } else {
            raw += 1;
        }
        long_run |= c.line.chunks(4).all(|w| w == [0; 4]);
        match c.arbitrary {
            Some((true, _, _, true)) => arb_err += 1,
            Some((true, _, _, false)) => arb_ok += 1,
            _ => {}
        }
    }
    assert_eq!(pats.len(), 8, "{:?}", pats);
    assert!(pats.contains(&FpcPattern::TwoHalves));
    assert!(raw > 100 && comp > 100, "raw {raw} compressed {comp}");
    assert!(long_run, "no all-zero line (zero runs cut at 8 words)");
    assert!(
        arb_ok > 50 && arb_err > 50,
        "arbitrary ok {arb_ok} err {arb_err}"
    );
}

/// Runs each of `units` with the parameters `y` in the interpreter over `cfg`'s lines, every
/// output checked, and every line run.
fn interpreter_runs(y: &str, units: impl IntoIterator<Item = Unit>, cfg: &StimConfig) {
    let p = params(y);
    for unit in units {
        let mut dut = SimDut::new(&top(&p, unit).unwrap()).unwrap();
        let st = run_clean(&mut dut, &p, unit, cfg).unwrap();
        assert_eq!(st.lines, cfg.run.lines, "{y} {}", unit.name());
    }
}

#[test]
fn interpreter_fpc_units_match_model_at_128_bytes() {
    let units = [Unit::FpcComp, Unit::FpcDecomp, Unit::FpcLoopback];
    interpreter_runs(
        "{line_bytes: 128}",
        units,
        &StimConfig::of(&RunConfig::lines(100)),
    );
}

#[test]
fn interpreter_units_match_model() {
    for y in [
        "{}",
        "{bdi_base_rule: first-non-immediate}",
        "{line_bytes: 32}",
    ] {
        // The C-Pack+Z units have their own (shorter) interpreter test.
        let units = Unit::ALL
            .into_iter()
            .filter(|u| !u.is_link() && !u.is_cpack());
        interpreter_runs(y, units, &StimConfig::of(&RunConfig::lines(200)));
    }
}

#[test]
fn interpreter_cpack_units_match_model() {
    for y in [
        "{}",
        "{cpack_push: all-non-zero, cpack_words_per_cycle: 1}",
        "{line_bytes: 32, cpack_codes: original, cpack_push: no-full-match}",
    ] {
        let units = [Unit::CpackComp, Unit::CpackDecomp, Unit::CpackLoopback];
        let cfg = StimConfig {
            random_payload: 0.4,
            ..StimConfig::of(&RunConfig::lines(80))
        };
        interpreter_runs(y, units, &cfg);
    }
}

#[test]
fn cpack_stimulus_reaches_every_pattern_and_error() {
    // Every Table II pattern, raw fallbacks, and both decompressor verdicts on arbitrary
    // payloads occur in the stimulus (else the scoreboard could not catch their faults).
    let mut pats = std::collections::BTreeSet::new();
    let (mut raw, mut bad, mut good) = (0, 0, 0);
    for c in decomp_cases(Alg::Cpack) {
        let cc = c.cpack.unwrap();
        raw += !cc.compressed as u32;
        pats.extend(cc.events());
        if let Some((true, _, _, e)) = c.arbitrary {
            if e {
                bad += 1;
            } else {
                good += 1;
            }
        }
    }
    assert_eq!(pats.len(), 7, "{:?}", pats);
    assert!(raw > 0 && bad > 50 && good > 50, "{raw} {bad} {good}");
}
