//! Link scoreboard ([`crate::rtl::link`]): `adaptive_tx`, `adaptive_rx` and the test-only
//! `link_loopback`, against [`crate::model::adaptive`].
//!
//! * `tx`: a phase trace of lines ([`super::ctrl::ctrl_lines`]) is replayed through the
//!   model ([`replay_lines`]); for every line the output must equal the model's transaction
//!   record: `comp_alg` (0 when the selected compressor did not save space), `len` (payload
//!   bits sent), the payload (`model::adaptive::compress` of the selected algorithm, the raw
//!   line on bypass, left-aligned), `sel_alg` and the sampling flag.
//! * `rx`: every line is compressed by a random enabled algorithm or sent raw (Comp Alg 0);
//!   a fraction `random_payload` of the payloads are arbitrary bits under a random enabled
//!   code, and 3% carry an unknown or disabled code. The output must equal
//!   `model::adaptive::decompress_prefix` (`m_err_o` with an all-zero line when the model
//!   rejects the payload or the code).
//! * `link_loopback`: `tx` → `rx` returns every line with `m_err_o = 0`.

use super::lines::line_beat;
use super::units::{bus_words, le_words, StimConfig, Unit};
use crate::cosim::stream::{Beat, Txn};
use crate::model::adaptive::{compress, decompress_prefix, replay_lines, AdaptiveReport, Alg};
use crate::rtl::adaptive::AdaptiveRtlParams;
use crate::rtl::link::enabled;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The transactions of a link unit over `lines` and the model's report on them.
pub fn cases(
    p: &AdaptiveRtlParams,
    unit: Unit,
    lines: &[Vec<u8>],
    cfg: &StimConfig,
) -> Result<(Vec<Txn>, AdaptiveReport), String> {
    let mp = p.model();
    let rep = replay_lines(&mp, lines).map_err(|e| e.to_string())?;
    let lb = p.line_bytes;
    let mut out = Vec::with_capacity(lines.len());
    match unit {
        Unit::Tx => {
            for (l, t) in lines.iter().zip(&rep.txns) {
                let pl = compress(&mp, t.sel_alg, l).map_err(|e| e.to_string())?;
                if pl.comp_alg != t.comp_alg || pl.nbits != t.payload_bits {
                    return Err(format!(
                        "model inconsistency at line {}: replay sent {:?}/{} bits, compress gives {:?}/{}",
                        t.trace_index, t.comp_alg, t.payload_bits, pl.comp_alg, pl.nbits
                    ));
                }
                out.push(Txn {
                    inputs: vec![Beat::new().with("line", le_words(l))],
                    expected: vec![Beat::new()
                        .num("comp_alg", pl.comp_alg.code().into())
                        .num("len", pl.nbits as u64)
                        .with("payload", bus_words(&pl.bits, lb))
                        .num("sel_alg", t.sel_alg.code().into())
                        .num(
                            "sample",
                            (t.phase == crate::model::adaptive::Phase::Sampling).into(),
                        )],
                });
            }
        }
        Unit::Rx => {
            let algs = enabled(p);
            let mut rng = ChaCha8Rng::seed_from_u64(cfg.run.seed ^ 0x11ac_u64);
            for l in lines {
                let r: f64 = rng.gen();
                let (code, bytes) = if r < 0.03 {
                    // An unknown code, or the code of a disabled algorithm.
                    let bad: Vec<u8> = (1..16u8)
                        .filter(|c| !algs.iter().any(|a| a.code() == *c))
                        .collect();
                    let c = bad[rng.gen_range(0..bad.len())];
                    (c, (0..lb).map(|_| rng.gen()).collect::<Vec<u8>>())
                } else if r < 0.03 + cfg.random_payload {
                    let a = algs[rng.gen_range(0..algs.len())];
                    (a.code(), (0..lb).map(|_| rng.gen()).collect())
                } else {
                    let k = rng.gen_range(0..=algs.len());
                    let a = if k == algs.len() { Alg::None } else { algs[k] };
                    let pl = compress(&mp, a, l).map_err(|e| e.to_string())?;
                    (pl.comp_alg.code(), pl.bits)
                };
                let mut padded = bytes.clone();
                padded.resize(lb, 0);
                let (line, err) =
                    match Alg::from_code(code).filter(|a| *a == Alg::None || algs.contains(a)) {
                        None => (vec![0u8; lb], true),
                        Some(a) => match decompress_prefix(&mp, a, &padded) {
                            Ok((line, _)) => (line, false),
                            Err(_) => (vec![0u8; lb], true),
                        },
                    };
                out.push(Txn {
                    inputs: vec![Beat::new()
                        .num("comp_alg", code.into())
                        .with("payload", bus_words(&bytes, lb))],
                    expected: vec![line_beat(le_words(&line), err)],
                });
            }
        }
        Unit::LinkLoopback => {
            for l in lines {
                out.push(Txn {
                    inputs: vec![Beat::new().with("line", le_words(l))],
                    expected: vec![line_beat(le_words(l), false)],
                });
            }
        }
        u => return Err(format!("`{}` is not a link unit", u.name())),
    }
    Ok((out, rep))
}

#[cfg(test)]
mod tests {
    use super::super::{ctrl_lines, run_clean, top};
    use super::*;
    use crate::cosim::dut::SimDut;
    use crate::cosim::run::RunConfig;
    use crate::cosim::run::Stimulus;

    pub(super) fn params(yaml: &str) -> AdaptiveRtlParams {
        let p: AdaptiveRtlParams = serde_yaml::from_str(yaml).unwrap();
        p.validate().unwrap();
        p
    }

    #[test]
    fn interpreter_link_units_match_model() {
        let p = params("{use_cpack: false, run_len: 40, lambda: 2}");
        let cfg = StimConfig::of(&RunConfig::seeded(1500, 3));
        for unit in [Unit::Tx, Unit::Rx, Unit::LinkLoopback] {
            let mut dut = SimDut::new(&top(&p, unit).unwrap()).unwrap();
            let st = run_clean(&mut dut, &p, unit, &cfg).unwrap();
            assert_eq!(st.beats_out, 1500, "{}", unit.name());
        }
        // The trace changes decisions: both bypass and BDI run phases occur.
        let (_, rep) = cases(&p, Unit::Tx, &ctrl_lines(&p, &cfg), &cfg).unwrap();
        let mut d = rep.decisions();
        d.sort();
        d.dedup();
        assert!(d.len() >= 2, "decisions never change: {d:?}");
    }
}

#[cfg(test)]
mod verilator_tests {
    use super::super::{measure, run, run_clean, top};
    use super::tests::params;
    use super::*;
    use crate::cosim::dut::SimDut;
    use crate::cosim::fault::faulty_dut;
    use crate::cosim::run::RunConfig;
    use crate::cosim::run::Stimulus;
    use crate::cosim::test_util::fault_caught;
    use crate::cosim::vdut::VerilatorDut;

    const BDI_ONLY: &str = "use_fpc: false, use_cpack: false";

    #[test]
    fn verilator_link_units_match_model() {
        // The default (every algorithm) through all three units at 20,000 lines; the other
        // parameter sets run in the interpreter here (`interpreter_link_variants_match_model`)
        // and in Verilator in the long tier (`verif/configs/adaptive_*.yaml`).
        let p = AdaptiveRtlParams::default();
        let n = 20_000;
        for unit in [Unit::Tx, Unit::Rx, Unit::LinkLoopback] {
            let mut dut = VerilatorDut::new(&top(&p, unit).unwrap(), false).unwrap();
            let cfg = StimConfig::of(&RunConfig::seeded(n, 70));
            let st = run_clean(&mut dut, &p, unit, &cfg).unwrap();
            assert_eq!(st.beats_out, n, "{}", unit.name());
        }
    }

    #[test]
    fn interpreter_link_variants_match_model() {
        // (parameters, units): the controller variants through the egress, BDI only at 128 B
        // through all three units.
        let all = [Unit::Tx, Unit::Rx, Unit::LinkLoopback];
        let tl = [Unit::Tx];
        for (i, (y, units)) in [
            ("{lambda: 0, run_len: 60}".to_string(), &tl[..]),
            (
                "{lambda: 32, line_bytes: 32, run_len: 30, link_queue_depth: 2}".to_string(),
                &tl[..],
            ),
            (
                format!("{{{BDI_ONLY}, line_bytes: 128, sample_send: current, no_quorum: keep-previous, run_len: 20}}"),
                &all[..],
            ),
            (
                "{use_cpack: false, run_len: 40, link_fast_egress: true, fpc_comp_stages: 4}"
                    .to_string(),
                &all[..],
            ),
        ]
        .iter()
        .enumerate()
        {
            let p = params(y);
            let n = 1_500;
            for unit in units.iter().copied() {
                let mut dut = SimDut::new(&top(&p, unit).unwrap()).unwrap();
                let cfg = StimConfig::of(&RunConfig::seeded(n, 71 + i as u64));
                let st = run_clean(&mut dut, &p, unit, &cfg).unwrap();
                assert_eq!(st.beats_out, n, "{} {}", unit.name(), y);
            }
        }
    }

    #[test]
    fn verilator_link_latency_and_throughput() {
        // BDI only: cycle-exact in the interpreter (no Verilator build of its own).
        let p = params(&format!("{{{BDI_ONLY}}}"));
        for (unit, lat) in [(Unit::Tx, 4), (Unit::Rx, 2), (Unit::LinkLoopback, 5)] {
            let mut dut = SimDut::new(&top(&p, unit).unwrap()).unwrap();
            let t = measure(&mut dut, &p, unit).unwrap();
            eprintln!("{}: {:?}", unit.name(), t);
            assert_eq!(t.latency_cycles, lat, "{}", unit.name());
            assert!(t.in_beats_per_cycle > 0.95, "{}: {:?}", unit.name(), t);
        }
        // The fast egress costs no cycle.
        let p = params(&format!("{{{BDI_ONLY}, link_fast_egress: true}}"));
        let mut dut = SimDut::new(&top(&p, Unit::Tx).unwrap()).unwrap();
        let t = measure(&mut dut, &p, Unit::Tx).unwrap();
        assert_eq!(t.latency_cycles, 4, "fast egress");
        assert!(t.in_beats_per_cycle > 0.95, "fast egress: {:?}", t);
        // Every algorithm: a sampled line waits for C-Pack+Z (12 cycles) plus the output
        // register; the sampling phases run at C-Pack+Z's II of 8 cycles, the running phases
        // at the selected compressor's rate.
        let p = AdaptiveRtlParams::default();
        let mut dut = VerilatorDut::new(&top(&p, Unit::Tx).unwrap(), false).unwrap();
        let t = measure(&mut dut, &p, Unit::Tx).unwrap();
        eprintln!("tx (all algorithms): {:?}", t);
        assert_eq!(t.latency_cycles, 13);
        assert!(t.in_beats_per_cycle > 0.75, "{:?}", t);
    }

    #[test]
    fn scoreboard_catches_injected_link_faults() {
        let p = params(&format!("{{{BDI_ONLY}, run_len: 40}}"));
        let cfg = StimConfig::of(&RunConfig::lines(3_000));
        // The first running line no longer waits for the decision.
        let t = top(&p, Unit::Tx).unwrap();
        let mut dut = faulty_dut(&t, &t.name, &|v| {
            let w = v.replace("assign fork_hold = ", "assign fork_hold = 1'b0 & ");
            assert_ne!(w, v, "fork_hold is assigned");
            w
        })
        .unwrap();
        fault_caught(run(&mut dut, &p, Unit::Tx, &cfg));
        // The fast egress: a result the join does not take is dropped, not parked.
        let pf = params(&format!(
            "{{{BDI_ONLY}, run_len: 40, link_fast_egress: true}}"
        ));
        let t = top(&pf, Unit::Tx).unwrap();
        let mut dut = faulty_dut(&t, &t.name, &|v| {
            let w = v.replace("assign bdi_out_park = ", "assign bdi_out_park = 1'b0 & ");
            assert_ne!(w, v, "bdi_out_park is assigned");
            w
        })
        .unwrap();
        fault_caught(run(&mut dut, &pf, Unit::Tx, &cfg));
        // The receiver's bypass routing: Comp Alg 0 sent through BDI as compressed.
        let t = top(&p, Unit::Rx).unwrap();
        let mut dut = faulty_dut(&t, &t.name, &|v| {
            let w = v.replace(".s_comp_i(is_bdi)", ".s_comp_i(route0)");
            assert_ne!(w, v, "s_comp_i is connected to is_bdi");
            w
        })
        .unwrap();
        let m = fault_caught(run(&mut dut, &p, Unit::Rx, &cfg));
        assert_eq!(m.field, "m_line_o");
    }
}
