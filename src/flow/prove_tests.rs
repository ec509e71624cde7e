//! The prover's tests: the wrapper's text without tools; with Yosys and a solver, the
//! smallest ZVC proved (stream contract and round trip) and every planted fault caught.

use super::{execute, plan, Planned, Request};
use crate::config::Config;
use crate::engines;
use crate::formal::run::solver_present;
use crate::formal::{wrapper, Outcome, Property};

fn small_zvc() -> Config {
    let cfg = Config::load(std::path::Path::new("verif/configs/formal_zvc.yaml")).unwrap();
    cfg.validate().unwrap();
    cfg
}

fn tools() -> bool {
    let ok = solver_present(crate::formal::run::default_solver())
        && crate::proc::output(std::process::Command::new("yosys-smtbmc").arg("-h"))
            .is_ok_and(|o| !o.stdout.is_empty() || !o.stderr.is_empty());
    if !ok {
        eprintln!("yosys-smtbmc or a solver not installed; skipping (scripts/setup.sh)");
    }
    ok
}

#[test]
fn wrappers_read_like_the_rtl() {
    let cfg = small_zvc();
    let e = engines::by_name("zvc").unwrap();
    for d in e.units(&cfg).unwrap() {
        for p in [Property::Hold, Property::Reset] {
            let w = wrapper::contract(&d.top, p);
            assert!(w.text.is_ascii());
            for l in w.text.lines() {
                assert!(l.len() <= 100, "{}: {l}", w.name);
            }
            assert!(
                w.text.contains("if (f_init_q) assume (!rst_ni);"),
                "{}",
                w.text
            );
            assert!(w.text.contains("assume (s_valid_i & ("), "{}", w.text);
            assert_eq!(w.cover.is_some(), p == Property::Hold);
        }
        for p in [Property::Accept, Property::Drain] {
            let w = wrapper::bounded(&d.top, p, 12);
            for l in w.text.lines() {
                assert!(l.is_ascii() && l.len() <= 100, "{}: {l}", w.name);
            }
            assert!(w.text.contains("assume (m_ready_i);"), "{}", w.text);
            assert!(w.text.contains("< 8'd12);"), "{}", w.text);
        }
    }
    let rt = &e.round_trips(&cfg).unwrap()[0];
    let w = wrapper::round_trip(rt, None).unwrap();
    assert!(w.text.contains("cover (f_out_n_q == 8'd4);"), "{}", w.text);
    assert!(
        w.text
            .contains("assume (!s_last_i | (f_in_n_q[0:0] == 1'd1));"),
        "{}",
        w.text
    );
}

/// A unit with one input stream is bounded by its drain; one with several (a memory's
/// answers beside its requests, whose drain grows with its queue) by its progress.
#[test]
fn progress_is_for_units_with_several_inputs() {
    let cfg = Config::load(std::path::Path::new(
        "verif/configs/cpack_lossy_b64_pall.yaml",
    ))
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![Property::Drain, Property::Progress],
        ..Request::defaults()
    };
    let e = engines::by_name("cpack-lossy").unwrap();
    let plans = plan(e, &cfg, "cpack_lossy_b64_pall", &req, out.path()).unwrap();
    let mut got: Vec<(String, Property)> = plans
        .iter()
        .map(|p| (p.job.unit.clone(), p.job.property))
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let want = [
        ("compressor", Property::Drain),
        ("decompressor", Property::Drain),
        ("mc-top", Property::Progress),
        ("md-cache", Property::Progress),
        ("trunc-pack", Property::Drain),
        ("unpack-restore", Property::Drain),
    ];
    let want: Vec<(String, Property)> = want.iter().map(|(u, p)| (u.to_string(), *p)).collect();
    assert_eq!(got, want);
    let mc = &plans
        .iter()
        .find(|p| p.job.unit == "mc-top")
        .unwrap()
        .job
        .top;
    let w = wrapper::bounded(mc, Property::Progress, 6);
    assert!(
        w.text
            .contains("wire f_any_fire = rst_ni & ((sm_valid_i & sm_ready_o)"),
        "{}",
        w.text
    );
    assert!(w.text.contains("(rsp_valid_o & rsp_ready_i)"), "{}", w.text);
    assert!(
        w.text
            .contains("if (rst_ni & dreq_valid_o) assert (f_quiet_q < 8'd6);"),
        "{}",
        w.text
    );
}

/// PACT'12's loop-back takes two 2-word beats for each 4-word beat it gives back: the
/// round trip tracks a block's first input beat, records the second, and checks the output
/// beat against both; every output beat leaves after both its input beats.
#[test]
fn pact12_round_trip_pairs_two_input_beats_with_one_output_beat() {
    let cfg = Config::load(std::path::Path::new("verif/configs/cpack_lossy_b16.yaml")).unwrap();
    let e = engines::by_name("cpack-lossy").unwrap();
    let rts = e.round_trips(&cfg).unwrap();
    assert_eq!(rts.len(), 2);
    assert_eq!((rts[0].in_beats, rts[0].line_beats), (2, 1));
    let w = wrapper::round_trip(&rts[0], None).unwrap();
    for l in w.text.lines() {
        assert!(l.is_ascii() && l.len() <= 100, "{l}");
    }
    for want in [
        "assume (s_last_i == (f_in_n_q[0:0] == 1'd1));",
        "assume (s_tcode_i == 2'd0);",
        "if (f_in_fire & ~f_picked_q & (f_in_n_q[0:0] != 1'd0)) assume (!f_pick_i);",
        "assert (m_words_o == {f_pick_pay1_q[63:0], f_pick_pay_q[63:0]});",
        "assert (m_last_o == f_pick_pay1_q[64:64]);",
        "if (f_out_fire) assert ({1'b0, f_in_n_q} >= (({1'b0, f_out_n_q} + 9'd1) << 1));",
        "cover (f_out_n_q == 8'd2);",
    ] {
        assert!(w.text.contains(want), "{want}\n{}", w.text);
    }
    // The lossy path: the block's code, read with its first beat, is held over the block
    // and recorded; the restored words are the input's with the code's low bits cleared.
    assert_eq!(rts[1].unit, "lossy_loopback");
    let w = wrapper::round_trip(&rts[1], None).unwrap();
    for l in w.text.lines() {
        assert!(l.is_ascii() && l.len() <= 100, "{l}");
    }
    for want in [
        "if (rst_ni & (f_in_n_q[0:0] != 1'd0)) assume (s_tcode_i == f_line_tcode_q);",
        "f_pick_tcode_q <= f_pick_now ? s_tcode_i : f_pick_tcode_q;",
        "wire [127:0] f_want = {f_pick_pay1_q[63:0], f_pick_pay_q[63:0]};",
        "assert (m_data_o == (f_want & {4{(f_pick_tcode_q == 2'd1 ? 32'hffff0000",
        "          : 32'hffffffff)}}));",
        "if (f_out_fire) assert (m_last_o);",
        "if (f_out_fire) assert (!m_err_o);",
    ] {
        assert!(w.text.contains(want), "{want}\n{}", w.text);
    }
    // 128 B blocks: 16 input beats and 8 output beats a block, still two to one.
    let rts = e.round_trips(&Config::default()).unwrap();
    assert_eq!((rts[0].in_beats, rts[0].line_beats), (2, 8));
    assert_eq!((rts[1].in_beats, rts[1].line_beats), (2, 8));
    let w = wrapper::round_trip(&rts[1], None).unwrap();
    for want in [
        "if (rst_ni & (f_in_n_q[3:0] != 4'd0)) assume (s_tcode_i == f_line_tcode_q);",
        "if (f_out_fire) assert (m_last_o == (f_out_n_q[2:0] == 3'd7));",
        "f_pick_tcode_q == 2'd1 ? 32'hffffff00",
    ] {
        assert!(w.text.contains(want), "{want}\n{}", w.text);
    }
}

/// The planted faults of PACT'12's round trip `unit` on 16 B blocks are exactly `want`
/// (sorted); those in `run` are proved, each giving a counterexample.
fn pact12_faults_caught(unit: &str, want: &[&str], run: &[&str]) {
    if !tools() {
        return;
    }
    let cfg = Config::load(std::path::Path::new("verif/configs/cpack_lossy_b16.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![Property::RoundTrip],
        depth: 2,
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("cpack-lossy").unwrap();
    let plans: Vec<_> = plan(e, &cfg, "cpack_lossy_b16", &req, out.path())
        .unwrap()
        .into_iter()
        .filter(|p| p.fault.is_some() && p.job.unit == unit)
        .collect();
    let name = |p: &Planned| p.fault.as_ref().map_or(String::new(), |f| f.0.clone());
    let mut names: Vec<String> = plans.iter().map(name).collect();
    names.sort();
    assert_eq!(names, want);
    let plans = plans
        .into_iter()
        .filter(|p| run.contains(&name(p).as_str()))
        .collect();
    let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
    assert_eq!(r.faults.len(), run.len());
    for f in &r.faults {
        assert!(f.caught(), "{} not caught: {:?}", f.fault, f.proof);
    }
}

/// PACT'12's round trip on 16 B blocks can fail: its two planted data-path faults, one in
/// the compressor and one in the decompressor, each give a counterexample (the proof itself
/// takes about 11 minutes: `hwzip prove --engine cpack-lossy --config
/// verif/configs/cpack_lossy_b16.yaml --unit loopback`).
#[test]
fn pact12_round_trip_catches_its_faults() {
    let want = ["mux:w1_idx_th", "mux:x3_dwsel1"];
    pact12_faults_caught("loopback", &want, &want);
}

/// PACT'12's lossy round trip (truncation, compressor, decompressor, restore) on 16 B blocks
/// can fail: the compressor's and decompressor's faults again, a truncation unit that takes
/// a block's code from the register instead of its first beat (seen only when two blocks
/// carry different codes), and a restore unit that places a beat at the wrong offset. The
/// fast tier proves the two faults of the lossy path's own units (the proof itself takes
/// about 21 minutes, all four faults about 2: `hwzip prove --faults`).
#[test]
fn pact12_lossy_round_trip_catches_its_faults() {
    let want = [
        "mux:place_s1",
        "mux:tcode_cur",
        "mux:w1_idx_th",
        "mux:x3_dwsel1",
    ];
    pact12_faults_caught("lossy_loopback", &want, &want[..2]);
}

/// The smallest ZVC: the stream contract of both units and the round trip hold to a depth
/// that sees two whole windows come back, the decompressor's per-transfer error flag is the
/// reference's, and each planted fault gives a counterexample.
#[test]
fn zvc_small_proves_and_catches_every_planted_fault() {
    if !tools() {
        return;
    }
    let cfg = small_zvc();
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![
            Property::Hold,
            Property::Reset,
            Property::RoundTrip,
            Property::Error,
        ],
        depth: 8,
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("zvc").unwrap();
    let plans = plan(e, &cfg, "formal_zvc", &req, out.path()).unwrap();
    let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
    assert_eq!(r.proofs.len(), 6, "{r:?}");
    for p in &r.proofs {
        assert!(
            matches!(p.outcome, Outcome::Proved | Outcome::Bounded),
            "{p:?}"
        );
        if let Some(reach) = p.reach {
            assert!(p.depth > reach, "{p:?}");
        }
    }
    let rt = r
        .proofs
        .iter()
        .find(|p| p.property == Property::RoundTrip)
        .unwrap();
    assert!(rt.reach.is_some_and(|n| n >= 8), "{rt:?}");
    // Two protocol faults per unit, the two data-path muxes and the error flag tied low.
    assert_eq!(r.faults.len(), 7, "{r:?}");
    for f in &r.faults {
        assert!(f.caught(), "{} not caught: {:?}", f.fault, f.proof);
        assert!(f.proof.vcd.as_ref().is_some_and(|v| v.is_file()), "{f:?}");
    }
    assert!(r.passed());
    // One counterexample end to end: the solver's trace replayed in Verilator gives the same
    // outputs and the same failure in the same cycle.
    let f = r.faults.iter().find(|f| f.fault == "mux:d1_3").unwrap();
    let job = &plan(e, &cfg, "formal_zvc", &req, out.path())
        .unwrap()
        .into_iter()
        .find(|p| p.fault.as_ref().is_some_and(|x| x.0 == "mux:d1_3"))
        .unwrap()
        .job;
    let rp = crate::formal::replay::replay(
        &job.top,
        &job.files,
        job.property,
        job.round_trip.as_ref(),
        f.proof.vcd.as_ref().unwrap(),
        f.proof.depth as usize,
        &out.path().join("replay.vcd"),
    )
    .unwrap();
    assert!(rp.differences.is_empty(), "{}", rp.summary());
    assert_eq!(
        rp.failure.as_ref().map(|x| x.0),
        Some(f.proof.depth as usize),
        "{}",
        rp.summary()
    );
}

/// Every engine's small configuration: the stream contract of every unit holds by BMC to
/// where it is first checked (and at least 4 cycles); Boolector's answers, not the units'
/// size, bound the time (each proof seconds, the slowest under a minute).
#[test]
fn every_engine_small_contract_holds() {
    if !tools() {
        return;
    }
    let configs = [
        ("zvc", "formal_zvc"),
        ("base-xor", "base_xor_n2_nozdr"),
        ("adaptive", "adaptive_l32"),
        ("cpack-lossy", "cpack_lossy_b64_pall"),
        ("buddy", "buddy_e32_k2"),
    ];
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![Property::Hold, Property::Reset],
        depth: 4,
        induction: false,
        budget: std::time::Duration::from_secs(90),
        ..Request::defaults()
    };
    for (engine, config) in configs {
        let path = format!("verif/configs/{config}.yaml");
        let cfg = Config::load(std::path::Path::new(&path)).unwrap();
        let e = engines::by_name(engine).unwrap();
        let plans = plan(e, &cfg, config, &req, out.path()).unwrap();
        assert!(!plans.is_empty(), "{engine}");
        let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
        for p in &r.proofs {
            assert!(matches!(p.outcome, Outcome::Bounded), "{p:?}");
            assert!(p.note.is_empty(), "{p:?}");
            assert!(p.depth > p.reach.unwrap_or(0), "{p:?}");
        }
    }
}

/// Base+XOR's link codes: every encoder/decoder core pair gives every input back and puts
/// the reference's code (so its ones) on the wire, for all inputs at once; each planted code
/// fault (a decoder XOR made OR, ZDR's remap swapped, DBI's tie rule flipped, which still
/// decodes and only the ones check sees) gives a counterexample.
#[test]
fn base_xor_codes_prove_and_catch_their_faults() {
    if !tools() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![Property::Code],
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("base-xor").unwrap();
    let plans = plan(e, &Config::default(), "default", &req, out.path()).unwrap();
    let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
    assert!(r.proofs.len() >= 10, "{r:?}");
    for p in &r.proofs {
        assert_eq!(p.outcome, Outcome::Proved, "{p:?}");
    }
    let kinds = |k: &str| r.faults.iter().filter(|f| f.fault == k).count();
    assert_eq!(kinds("tie:dbi"), 3, "{r:?}");
    assert!(kinds("or:dec") >= 4 && kinds("swap:zdr") >= 3, "{r:?}");
    for f in &r.faults {
        assert!(f.caught(), "{} not caught: {:?}", f.fault, f.proof);
    }
}

/// Base+XOR's small configuration: with the consumer always ready, every unit takes an
/// offered beat and finishes its outputs within the smallest bound that holds, proved by
/// k-induction (the serializer sends a sector as 8 beats: it refuses the next sector 7 cycles
/// and ends 8 cycles after its input); an input `ready` tied low is a hang the search finds.
#[test]
fn base_xor_small_bounds_are_proved() {
    if !tools() {
        return;
    }
    let cfg = Config::load(std::path::Path::new("verif/configs/base_xor_n2_nozdr.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![Property::Accept, Property::Drain],
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("base-xor").unwrap();
    let plans = plan(e, &cfg, "base_xor_n2_nozdr", &req, out.path()).unwrap();
    let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
    assert_eq!(r.proofs.len(), 8, "{r:?}");
    for p in &r.proofs {
        assert_eq!(p.outcome, Outcome::Proved, "{p:?}");
    }
    let bound = |u: &str, prop: Property| {
        r.proofs
            .iter()
            .find(|p| p.unit == u && p.property == prop)
            .and_then(|p| p.bound)
    };
    assert_eq!(bound("serializer", Property::Accept), Some(7));
    assert_eq!(bound("serializer", Property::Drain), Some(8));
    assert_eq!(r.faults.len(), 4, "{r:?}");
    for f in &r.faults {
        assert!(f.caught(), "{} not caught: {:?}", f.fault, f.proof);
    }
}

/// The decompressors' error wrappers read like the rest: ASCII, 100 columns, the recorded
/// beat's fields, the reference's verdict `r_bad`, and the checks on the flag and the line.
#[test]
fn error_wrappers_read_like_the_rtl() {
    let cfg = Config::load(std::path::Path::new("verif/configs/adaptive_l32.yaml")).unwrap();
    let e = engines::by_name("adaptive").unwrap();
    let flags = e.error_flags(&cfg).unwrap();
    let units: Vec<&str> = flags.iter().map(|f| f.unit.as_str()).collect();
    assert_eq!(units, ["bdi_decomp", "fpc_decomp", "cpack_decomp"]);
    for f in &flags {
        let w = wrapper::error_flag(f).unwrap();
        for l in w.text.lines() {
            assert!(l.is_ascii() && l.len() <= 100, "{}: {l}", w.name);
        }
        for want in [
            "wire r_comp = f_pick_pay_q[0:0];",
            "wire [255:0] r_payload = f_pick_pay_q[256:1];",
            "assert (m_err_o == r_bad);",
            "assert (m_line_o == 256'd0);",
            "wire r_bad = r_comp & ",
        ] {
            assert!(w.text.contains(want), "{want}\n{}", w.text);
        }
    }
}

/// The BDI, FPC and C-Pack+Z decompressors flag exactly the beats their models reject (BMC
/// from reset, on 16 B lines), and a decompressor that never flags is caught.
#[test]
fn error_flags_are_the_models() {
    if !tools() {
        return;
    }
    let cfg = Config::load(std::path::Path::new("verif/configs/adaptive_l16.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![Property::Error],
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("adaptive").unwrap();
    let plans = plan(e, &cfg, "adaptive_l16", &req, out.path()).unwrap();
    let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
    assert_eq!(r.proofs.len(), 3, "{r:?}");
    for p in &r.proofs {
        assert!(
            matches!(p.outcome, Outcome::Proved | Outcome::Bounded),
            "{p:?}"
        );
        assert!(p.reach.is_some_and(|n| p.depth > n), "{p:?}");
    }
    assert_eq!(r.faults.len(), 3, "{r:?}");
    for f in &r.faults {
        assert!(f.caught(), "{f:?}");
        assert_eq!(f.fault, "flag-low:err");
    }
}

/// The BPC decompressor flags exactly the entries its model rejects (BMC from reset, on the
/// 8-bit symbols' 9 planes), and a decompressor that never flags is caught.
#[test]
fn bpc_error_flag_is_the_models() {
    if !tools() {
        return;
    }
    let cfg = Config::load(std::path::Path::new("verif/configs/buddy_e32_s8.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![Property::Error],
        depth: 6,
        induction: false,
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("buddy").unwrap();
    let plans = plan(e, &cfg, "buddy_e32_s8", &req, out.path()).unwrap();
    let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
    assert_eq!(r.proofs.len(), 1, "{r:?}");
    let p = &r.proofs[0];
    assert!(matches!(p.outcome, Outcome::Bounded), "{p:?}");
    assert!(p.reach.is_some_and(|n| p.depth > n), "{p:?}");
    assert_eq!(r.faults.len(), 1, "{r:?}");
    assert!(r.faults[0].caught(), "{:?}", r.faults[0]);
    assert_eq!(r.faults[0].fault, "flag-low:err");
}

/// FPC's compressor → decompressor gives back every 16 B line, two whole lines deep (BMC
/// past the cycle the first line can come back), and both planted data-path faults, one in
/// each unit, are caught.
#[test]
fn fpc_round_trip_holds_on_16_byte_lines() {
    if !tools() {
        return;
    }
    let cfg = Config::load(std::path::Path::new("verif/configs/adaptive_l16.yaml")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        unit: Some("fpc_loopback".into()),
        properties: vec![Property::RoundTrip],
        depth: 2,
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("adaptive").unwrap();
    let plans = plan(e, &cfg, "adaptive_l16", &req, out.path()).unwrap();
    let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
    assert_eq!(r.proofs.len(), 1, "{r:?}");
    let p = &r.proofs[0];
    assert!(
        matches!(p.outcome, Outcome::Proved | Outcome::Bounded),
        "{p:?}"
    );
    assert!(p.reach.is_some_and(|n| p.depth > n), "{p:?}");
    let mut faults: Vec<&str> = r.faults.iter().map(|f| f.fault.as_str()).collect();
    faults.sort_unstable();
    assert_eq!(faults, ["mux:k1_slot2", "mux:payload_s2"], "{r:?}");
    assert!(r.faults.iter().all(|f| f.caught()), "{:?}", r.faults);
}

/// A split round trip's fault runs come after its cases, the case the fault names first:
/// BDI's `b4d1_dsel3` is tried in the B4D1 case before the eight others (which `execute`
/// then skips once it is caught).
#[test]
fn split_faults_try_their_case_first() {
    let cfg = Config::load(std::path::Path::new("verif/configs/adaptive_l32.yaml")).unwrap();
    let req = Request {
        unit: Some("bdi_loopback".into()),
        properties: vec![Property::RoundTrip],
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("adaptive").unwrap();
    let out = tempfile::tempdir().unwrap();
    let plans = plan(e, &cfg, "adaptive_l32", &req, out.path()).unwrap();
    assert_eq!(plans.len(), 18);
    assert!(plans[..9].iter().all(|p| p.fault.is_none()));
    let first = &plans[9];
    assert_eq!(
        first.fault.as_ref().map(|f| f.0.as_str()),
        Some("mux:b4d1_dsel3")
    );
    assert_eq!(first.job.case.as_deref(), Some("enc = 5 (B4D1)"));
}

/// On 16 B lines BDI never sends Base8-Δ4: its round trip has no case for it (a case whose
/// line never passes would check nothing and be reported unreached).
#[test]
fn bdi_split_has_only_sent_encodings() {
    let cfg = Config::load(std::path::Path::new("verif/configs/adaptive_l16.yaml")).unwrap();
    let req = Request {
        unit: Some("bdi_loopback".into()),
        properties: vec![Property::RoundTrip],
        ..Request::defaults()
    };
    let e = engines::by_name("adaptive").unwrap();
    let out = tempfile::tempdir().unwrap();
    let plans = plan(e, &cfg, "adaptive_l16", &req, out.path()).unwrap();
    let cases: Vec<String> = plans.iter().filter_map(|p| p.job.case.clone()).collect();
    assert_eq!(cases.len(), 8, "{cases:?}");
    assert!(cases.iter().all(|c| !c.contains("B8D4")), "{cases:?}");
}

/// The BPC decompressor's carry-save prefix sums at the default configuration (32 lanes of
/// 32 bits): the wiring gives each output lane the sum of the input lanes up to it, and
/// every cell type adds; a cell that drops its carry and a cell that reads one term twice
/// are both caught, the second by the wiring check, which names the lane.
#[test]
fn bpc_prefix_sums_are_proved() {
    if !tools() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let req = Request {
        properties: vec![Property::Sums],
        faults: true,
        ..Request::defaults()
    };
    let e = engines::by_name("buddy").unwrap();
    let plans = plan(e, &Config::default(), "default", &req, out.path()).unwrap();
    let r = execute(plans, 2, &|m| eprintln!("{m}")).unwrap();
    assert_eq!(r.proofs.len(), 1, "{r:?}");
    assert!(matches!(r.proofs[0].outcome, Outcome::Proved), "{r:?}");
    let faults: Vec<&str> = r.faults.iter().map(|f| f.fault.as_str()).collect();
    assert_eq!(faults, ["carry-drop", "term-twice"], "{r:?}");
    assert!(r.faults.iter().all(|f| f.caught()), "{r:?}");
    assert!(r.faults[0].proof.vcd.is_some(), "{r:?}");
    assert!(r.faults[1].proof.note.contains("output lane 2"), "{r:?}");
}
