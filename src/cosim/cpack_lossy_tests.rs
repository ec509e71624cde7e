use super::*;
use crate::cosim::dut::SimDut;
use crate::cosim::fault::faulty_dut;
use crate::cosim::stream::measure_latency;
use crate::cosim::vdut::VerilatorDut;
use crate::model::cpack_lossy::fp::TruncLayout;
use crate::rtl::cpack_lossy::compressor;
use std::sync::Arc;

fn cfg(seed: u64) -> StreamConfig {
    StreamConfig {
        seed,
        ..StreamConfig::default()
    }
}

fn clean(st: &RunStats, what: &str) {
    assert!(
        st.first_mismatch.is_none(),
        "{what}: {}",
        st.first_mismatch
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default()
    );
}

#[test]
fn interpreter_compressor_matches_model() {
    let p = LossyRtlParams::default();
    let top = compressor(&p).unwrap();
    let mut dut = SimDut::new(&top).unwrap();
    let st = run_comp(&mut dut, &top, &p, 24, &cfg(1), &mut |_| {}).unwrap();
    clean(&st, "interpreter");
}

fn variants() -> Vec<LossyRtlParams> {
    let d = LossyRtlParams::default();
    let mut v = vec![d.clone()];
    let mut s = d.clone();
    s.codec.layout = TruncLayout::Shifted;
    v.push(s);
    let mut r = d.clone();
    r.codec.raw_if_n_eq_raw = true;
    r.words_per_cycle = 1;
    v.push(r);
    let mut b = d.clone();
    b.codec.block_bytes = 64;
    b.codec.push = crate::model::cpack::PushPolicy::AllNonZero;
    v.push(b);
    v
}

#[test]
fn verilator_compressor_matches_model_under_stalls() {
    for (i, p) in variants().into_iter().enumerate() {
        let top = compressor(&p).unwrap();
        let mut dut = VerilatorDut::new(&top, false).unwrap();
        let n = if i == 0 { 20_000 } else { 4_000 };
        let st = run_comp(&mut dut, &top, &p, n, &cfg(10 + i as u64), &mut |_| {}).unwrap();
        clean(&st, &top.name);
        eprintln!(
            "{}: {n} blocks, {} cycles, 0 mismatches",
            top.name, st.cycles
        );
    }
}

/// Table 4: the first chunk 16 + 3 cycles after the first word of a 32-word block (the
/// acceptance cycle counted), then 2 words per cycle back to back.
#[test]
fn compressor_latency_and_throughput() {
    let p = LossyRtlParams::default();
    let top: Arc<_> = compressor(&p).unwrap();
    let mut dut = VerilatorDut::new(&top, false).unwrap();
    let (sin, sout) = Stream::of_unit(&top).unwrap();
    let blk: Vec<u8> = (0..128u32).map(|i| (i * 7 % 13) as u8).collect();
    let t = comp_txn(&p, &blk, 0).unwrap();
    assert_eq!(measure_latency(&mut dut, &sin, &sout, &t).unwrap(), 19);
    // Back to back without stalls: 2 words per cycle.
    let quiet = StreamConfig {
        in_gap: 0.0,
        out_stall: 0.0,
        ..cfg(3)
    };
    let st = run_comp(&mut dut, &top, &p, 2_000, &quiet, &mut |_| {}).unwrap();
    clean(&st, "throughput");
    let rate = st.beats_in as f64 / st.cycles as f64;
    eprintln!("compressor: {rate:.4} input beats (2 words) per cycle without stalls");
    assert!(rate > 0.99, "{rate}");
}

/// Faults the scoreboard must catch: the compressed-or-raw threshold off by one byte, and the
/// dictionary's lowest-slot priority reversed for word 1's half match.
#[test]
fn scoreboard_catches_injected_compressor_faults() {
    let p = LossyRtlParams::default();
    let top = compressor(&p).unwrap();
    type Edit<'a> = (&'a str, &'a dyn Fn(&str) -> String);
    let edits: [Edit; 2] = [
        ("threshold", &|v: &str| v.replace("11'd1016", "11'd1024")),
        ("push", &|v: &str| {
            v.replacen("assign we0 = ", "assign we0 = 16'd0 & ", 1)
        }),
    ];
    for (what, edit) in edits {
        let v = crate::hdl::emit::emit_design(&top).unwrap();
        let text = &v.iter().find(|(n, _)| n.starts_with(&top.name)).unwrap().1;
        assert_ne!(&edit(text), text, "{what}: edit did not apply");
        let mut dut = faulty_dut(&top, &top.name, edit).unwrap();
        let st = run_comp(&mut dut, &top, &p, 3_000, &cfg(5), &mut |_| {}).unwrap();
        let m = st.first_mismatch.expect(what);
        eprintln!("{what}: caught at block {} ({})", m.transfer, m.field);
    }
}

#[test]
fn interpreter_decompressor_matches_model() {
    let p = LossyRtlParams::default();
    let top = crate::rtl::cpack_lossy::decompressor(&p).unwrap();
    let mut dut = SimDut::new(&top).unwrap();
    let st = run_decomp(&mut dut, &top, &p, 200, 0.3, &cfg(2), &mut |_| {}).unwrap();
    clean(&st, "interpreter decompressor");
}
