use super::*;
use crate::cosim::dut::SimDut;
use crate::cosim::fault::{faulty_dut, FaultModel};
use crate::cosim::stream::{measure_latency, run_stream};
use crate::cosim::test_util::assert_clean;
use crate::cosim::vdut::VerilatorDut;
use crate::model::cpack_lossy::fp::TruncLayout;
use crate::rtl::cpack_lossy::compressor;
use std::sync::Arc;

fn cfg(seed: u64) -> StreamConfig {
    StreamConfig::seeded(seed)
}

/// Runs `n` blocks of the classes (seed of `c`) through `unit` (`top`, built from `p`), the
/// decompressor and the restore unit with `corrupt` of them corrupted.
fn run_unit(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
    unit: Unit,
    n: u64,
    corrupt: f64,
    c: &StreamConfig,
) -> Result<RunStats, String> {
    let mut stim = BlockStim::new(&p.codec, c.seed);
    run_blocks(dut, top, p, unit, &mut stim, n, corrupt, c, &mut |_| {})
}

/// [`run_unit`] on a new interpreter or Verilator model of `unit`, with random seed `seed`;
/// every output must match.
fn matches_model(p: &LossyRtlParams, unit: Unit, verilator: bool, n: u64, corrupt: f64, seed: u64) {
    let top = top(p, unit).unwrap();
    let mut dut: Box<dyn Dut> = if verilator {
        Box::new(VerilatorDut::new(&top, false).unwrap())
    } else {
        Box::new(SimDut::new(&top).unwrap())
    };
    let st = run_unit(dut.as_mut(), &top, p, unit, n, corrupt, &cfg(seed)).unwrap();
    assert_clean(&st, &top.name);
    let corrupted = if corrupt > 0.0 {
        format!(" ({:.0}% corrupt)", corrupt * 100.0)
    } else {
        String::new()
    };
    eprintln!(
        "{}: {n} blocks{corrupted}, {} cycles, 0 mismatches",
        top.name, st.cycles
    );
}

#[test]
fn interpreter_compressor_matches_model() {
    for (i, p) in variants().into_iter().enumerate() {
        let n = if i == 0 { 24 } else { 60 };
        matches_model(&p, Unit::Compressor, false, n, 0.0, 1 + i as u64);
    }
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
    // The compressor with its input registered (the memory-controller top's 1 GHz form).
    v.push(LossyRtlParams {
        comp_in_stage: true,
        ..d
    });
    v
}

/// The Verilator runs: the default (the other variants run in the interpreter here and at
/// 10^6 blocks in the long tier, `verif/configs/cpack_lossy_*.yaml`; each is a Verilator build
/// of its own).
fn verilator_variants() -> Vec<LossyRtlParams> {
    variants().into_iter().take(1).collect()
}

/// [`matches_model`] in Verilator for each of the Verilator variants (20,000 blocks of the
/// first, 4,000 of the others; seeds from `seed` on).
fn verilator_matches_model(unit: Unit, corrupt: f64, seed: u64) {
    for (i, p) in verilator_variants().into_iter().enumerate() {
        let n = if i == 0 { 20_000 } else { 4_000 };
        matches_model(&p, unit, true, n, corrupt, seed + i as u64);
    }
}

/// A Verilator build of `unit` of `p`, and its input and output streams.
fn verilator_unit(p: &LossyRtlParams, unit: Unit) -> (Arc<Module>, VerilatorDut, Stream, Stream) {
    let top = top(p, unit).unwrap();
    let dut = VerilatorDut::new(&top, false).unwrap();
    let (sin, sout) = Stream::of_unit(&top).unwrap();
    (top, dut, sin, sout)
}

#[test]
fn verilator_compressor_matches_model_under_stalls() {
    verilator_matches_model(Unit::Compressor, 0.0, 10);
}

/// Table 4 gives the first chunk 16 + 3 cycles after the first word of a 32-word block; this
/// design takes 16 + 4 (the acceptance cycle counted; stage T forms the tokens apart from
/// the compare loop for 1 GHz, `docs/FORMATS.md`), then 2 words per cycle back to back.
#[test]
fn compressor_latency_and_throughput() {
    let p = LossyRtlParams::default();
    let (top, mut dut, sin, sout) = verilator_unit(&p, Unit::Compressor);
    let blk: Vec<u8> = (0..128u32).map(|i| (i * 7 % 13) as u8).collect();
    let t = comp_txn(&p, &blk, 0).unwrap();
    assert_eq!(measure_latency(&mut dut, &sin, &sout, &t).unwrap(), 20);
    // Back to back without stalls: 2 words per cycle.
    let quiet = StreamConfig::quiet(3);
    let st = run_unit(&mut dut, &top, &p, Unit::Compressor, 2_000, 0.0, &quiet).unwrap();
    assert_clean(&st, "throughput");
    let rate = st.beats_in as f64 / st.cycles as f64;
    eprintln!("compressor: {rate:.4} input beats (2 words) per cycle without stalls");
    assert!(rate > 0.99, "{rate}");
}

/// 32 B blocks (the same datapath, quicker Verilator builds): the fault-injection tests.
fn small_blocks() -> LossyRtlParams {
    let mut p = LossyRtlParams::default();
    p.codec.block_bytes = 32;
    p.codec.t_table = [0, 8, 16, 16];
    p
}

/// Faults the scoreboard must catch (on 32 B blocks): the compressed-or-raw threshold off by
/// one byte, word 0 never pushed, and a pending dictionary write (word 1 of the previous
/// beat) ignored.
#[test]
fn scoreboard_catches_injected_compressor_faults() {
    let p = small_blocks();
    let top = compressor(&p).unwrap();
    type Edit<'a> = (&'a str, &'a dyn Fn(&str) -> String);
    let edits: [Edit; 3] = [
        ("threshold", &|v: &str| v.replace("9'd248", "9'd256")),
        ("push", &|v: &str| {
            v.replacen("assign we0 = ", "assign we0 = 16'd0 & ", 1)
        }),
        // The previous beat's word 1 not yet in the dictionary, and not compared either.
        ("pending", &|v: &str| {
            v.replacen(
                "assign c_pend1_valid = ",
                "assign c_pend1_valid = 16'd0 & ",
                1,
            )
        }),
    ];
    // One model with the three faults, each switched on at run time (`FaultModel` refuses an
    // edit that changes nothing).
    let fm = FaultModel::of_top(&top, &edits.map(|(_, e)| e)).unwrap();
    // With no fault selected the merged model is the unit as emitted.
    let mut dut = fm.dut(None).unwrap();
    let run = |dut: &mut dyn Dut| run_unit(dut, &top, &p, Unit::Compressor, 3_000, 0.0, &cfg(5));
    assert_clean(&run(&mut dut).unwrap(), "no fault selected");
    for (k, (what, _)) in edits.iter().enumerate() {
        let mut dut = fm.dut(Some(k)).unwrap();
        let st = run(&mut dut).unwrap();
        let m = st.first_mismatch.expect(what);
        eprintln!("{what}: caught at block {} ({})", m.transfer, m.field);
    }
}

#[test]
fn interpreter_decompressor_matches_model() {
    let p = LossyRtlParams::default();
    matches_model(&p, Unit::Decompressor, false, 200, 0.3, 2);
    // The variants the Verilator runs leave to the long tier.
    for (i, q) in variants().into_iter().enumerate().skip(1) {
        matches_model(&q, Unit::Decompressor, false, 40, 0.3, 3 + i as u64);
    }
    // 8 dictionary entries: a 5-bit `mmmm` token, so a token may start at any bit (the
    // position's grid is 1 bit, 2 bits with 16 entries).
    let mut e = p.clone();
    e.codec.dict_entries = 8;
    matches_model(&e, Unit::Decompressor, false, 40, 0.3, 9);
    // 32 B blocks (the flow test's): runs of 1-chunk, 1-beat blocks, where a previous block's
    // leftover chunk once aliased a later block's tag (block 216 of the default seed).
    let mut q = p.clone();
    q.codec.block_bytes = 32;
    q.codec.t_table = [0, 8, 16, 16];
    matches_model(
        &q,
        Unit::Decompressor,
        false,
        400,
        0.1,
        StreamConfig::default().seed,
    );
}

#[test]
fn verilator_decompressor_matches_model_under_stalls_and_corruption() {
    verilator_matches_model(Unit::Decompressor, 0.2, 20);
}

/// Table 4 gives 8 + 1 cycles per 128 B block and a 1-cycle latency. This design keeps the
/// block rate (a beat per cycle, one cycle between blocks) and takes 7 cycles from the first
/// chunk to the first beat (the acceptance cycle counted): the block-start cycle, the
/// position loop (which waits for the 136 bits of four widest tokens), three pipeline stages
/// and the output FIFO (`docs/FORMATS.md`, "Decompressor choices").
#[test]
fn decompressor_latency_and_throughput() {
    let p = LossyRtlParams::default();
    let (_, mut dut, sin, sout) = verilator_unit(&p, Unit::Decompressor);
    // Narrow words (12-bit tokens): the first four tokens are in the first chunk.
    let narrow = narrow_block(128);
    let b = model::compress(&p.codec, &narrow, 0).unwrap();
    assert!(b.md.c, "{:?}", b.md);
    let t = decomp_txn(&p, true, 0, &b.chunks);
    assert_eq!(t.expected.len(), 8);
    assert_eq!(measure_latency(&mut dut, &sin, &sout, &t).unwrap(), 8);
    // Four new words (136 bits) need the second chunk: the same latency.
    let dense: Vec<u8> = (0..32u32)
        .flat_map(|i| (0x9E37_79B9u32.wrapping_mul(i + 1) | 0x0100_0000).to_le_bytes())
        .take(64)
        .chain(std::iter::repeat_n(0, 64))
        .collect();
    let b = model::compress(&p.codec, &dense, 0).unwrap();
    assert!(b.md.c && b.md.n > 2, "{:?}", b.md);
    let td = decomp_txn(&p, true, 0, &b.chunks);
    assert_eq!(measure_latency(&mut dut, &sin, &sout, &td).unwrap(), 8);
    // The densest compressed blocks: 28 new words and 4 zeros, 960 bits in 8 chunks.
    let full: Vec<u8> = (0..32u32)
        .flat_map(|i| {
            let w = if i % 8 == 7 {
                0
            } else {
                0x9E37_79B9u32.wrapping_mul(i + 1) | 1 << 24
            };
            w.to_le_bytes()
        })
        .collect();
    let b = model::compress(&p.codec, &full, 0).unwrap();
    assert!(b.md.c && b.md.n == 8, "{:?}", b.md);
    let tf = decomp_txn(&p, true, 0, &b.chunks);
    let quiet = StreamConfig::quiet(4);
    for (what, txn) in [("narrow (3 chunks)", &t), ("densest (8 chunks)", &tf)] {
        let blocks = 500u64;
        let mut left = blocks;
        let mut next = || {
            (left > 0).then(|| {
                left -= 1;
                txn.clone()
            })
        };
        let st = run_stream(
            &mut dut,
            &sin,
            &sout,
            &mut next,
            &quiet,
            &mut |_| {},
            &mut |_| {},
        );
        let st = st.unwrap();
        assert_clean(&st, "decompressor throughput");
        let per = st.cycles as f64 / blocks as f64;
        eprintln!("decompressor, {what}: {per:.3} cycles per 8-beat block without stalls");
        assert!(per <= 9.05, "{what}: {per}");
    }
}

/// Faults the decompressor's scoreboard must catch (on 32 B blocks): no same-beat dictionary
/// bypass for token 1, an illegal code taken as a halfword match, overruns never flagged, and a ring slot freed
/// while the position is still in it.
#[test]
fn scoreboard_catches_injected_decompressor_faults() {
    let p = small_blocks();
    let top = crate::rtl::cpack_lossy::decompressor(&p).unwrap();
    type Edit<'a> = (&'a str, &'a dyn Fn(&str) -> String);
    let edits: [Edit; 4] = [
        ("bypass", &|v: &str| {
            v.replacen("assign x3_src1 = ", "assign x3_src1 = 1'b0 & ", 1)
        }),
        ("illegal", &|v: &str| {
            v.replacen("((x3_t0_c2 == 2'd3) & (x3_t0_c4 == 2'd3))", "(1'b0)", 1)
        }),
        ("overrun", &|v: &str| {
            v.replacen("assign x3_past = ", "assign x3_past = 137'd0 & ", 1)
        }),
        ("free", &|v: &str| {
            v.replacen("slot_cur & (~pos_slot | {4{st_end_q}})", "slot_cur", 1)
        }),
    ];
    let v = crate::hdl::emit::emit_design(&top).unwrap();
    let text = &v.iter().find(|(n, _)| n.starts_with(&top.name)).unwrap().1;
    for (what, edit) in &edits {
        assert!(&edit(text) != text, "{what}: edit did not apply");
    }
    let fm = FaultModel::of_top(&top, &edits.map(|(_, e)| e)).unwrap();
    let mut dut = fm.dut(None).unwrap();
    let run = |dut: &mut dyn Dut| run_unit(dut, &top, &p, Unit::Decompressor, 3_000, 0.2, &cfg(6));
    assert_clean(&run(&mut dut).unwrap(), "no fault selected");
    for (k, (what, _)) in edits.into_iter().enumerate() {
        let mut dut = fm.dut(Some(k)).unwrap();
        match run(&mut dut) {
            Ok(st) => {
                let m = st.first_mismatch.expect(what);
                eprintln!("{what}: caught at block {} ({})", m.transfer, m.field);
            }
            Err(e) => {
                assert!(e.contains("hung"), "{what}: {e}");
                eprintln!("{what}: caught: {e}");
            }
        }
    }
}

/// 4-bit MD entries hold no `tcode`: the generated classes then stay lossless, and both
/// units run (the interpreter, a few blocks of every class).
#[test]
fn lossless_md_entries_run_every_class() {
    let mut p = LossyRtlParams::default();
    p.codec.md_bits = 4;
    matches_model(&p, Unit::Compressor, false, 40, 0.0, 8);
    matches_model(&p, Unit::Decompressor, false, 40, 0.2, 8);
}

fn fp_variants() -> Vec<LossyRtlParams> {
    let mut v = variants();
    let mut m = LossyRtlParams::default();
    m.codec.fill = crate::model::cpack_lossy::fp::RestoreFill::Midpoint;
    m.codec.layout = TruncLayout::Shifted;
    v.push(m);
    v
}

#[test]
fn interpreter_truncation_units_match_model() {
    for (i, p) in fp_variants().into_iter().enumerate() {
        let seed = 40 + i as u64;
        matches_model(&p, Unit::TruncPack, false, 150, 0.0, seed);
        matches_model(&p, Unit::UnpackRestore, false, 150, 0.2, seed);
    }
}

#[test]
fn verilator_truncation_units_match_model_under_stalls() {
    // The default; the other variants run in the interpreter here and in the long tier.
    for (i, p) in fp_variants().into_iter().take(1).enumerate() {
        let seed = 50 + i as u64;
        matches_model(&p, Unit::TruncPack, true, 20_000, 0.0, seed);
        matches_model(&p, Unit::UnpackRestore, true, 20_000, 0.2, seed);
    }
}

/// Back to back without stalls: the truncation unit takes a beat (2 words) per cycle and
/// emits its first beat the cycle after (t = 0); the restore unit emits a beat per cycle,
/// 8 per 128 B block (t = 0), the first the cycle after the first input beat (latency 2 in
/// `measure_latency`'s count, which includes the acceptance cycle).
#[test]
fn truncation_units_latency_and_throughput() {
    let p = LossyRtlParams::default();
    for unit in [Unit::TruncPack, Unit::UnpackRestore] {
        let top = top(&p, unit).unwrap();
        let mut dut = VerilatorDut::new(&top, false).unwrap();
        let t = measure(&mut dut, &p, unit).unwrap();
        eprintln!(
            "{}: latency {} cycles, {:.4} input beats per cycle, {:.2} B/cycle",
            top.name, t.latency_cycles, t.in_beats_per_cycle, t.raw_bytes_per_cycle
        );
        // Registered outputs: valid the cycle after acceptance (2 counting that cycle).
        assert_eq!(t.latency_cycles, 2, "{}", top.name);
        match unit {
            Unit::TruncPack => assert!(t.in_beats_per_cycle > 0.99),
            _ => assert!(t.raw_bytes_per_cycle > 15.9, "{}", t.raw_bytes_per_cycle),
        }
    }
}

/// Faults the truncation scoreboards must catch: the accumulator taking a beat with a full
/// output beat still waiting (bits overwritten), restore's error position not following
/// the output, and the mid-point fill applied to ±Inf/NaN.
#[test]
fn scoreboard_catches_injected_truncation_faults() {
    type Edit<'a> = (Unit, &'a str, &'a dyn Fn(&str) -> String);
    let edits: [Edit; 3] = [
        (Unit::TruncPack, "room", &|v: &str| {
            v.replacen(
                "assign in_ready = (rem < 8'd64);",
                "assign in_ready = (rem < 8'd80);",
                1,
            )
        }),
        (Unit::UnpackRestore, "err_at", &|v: &str| {
            v.replacen(
                "assign out_err = (err_q & (err_at_q < take_bits_q));",
                "assign out_err = err_q;",
                1,
            )
        }),
        (Unit::UnpackRestore, "midpoint", &|v: &str| {
            v.replace("~(acc_q", "1'b1 | ~(acc_q")
        }),
    ];
    for (unit, what, edit) in edits {
        let mut p = LossyRtlParams::default();
        if what == "midpoint" {
            p.codec.fill = crate::model::cpack_lossy::fp::RestoreFill::Midpoint;
        }
        let top = top(&p, unit).unwrap();
        // `faulty_dut` refuses an edit that changes nothing.
        let mut dut = faulty_dut(&top, &top.name, edit).unwrap();
        let st = run_unit(&mut dut, &top, &p, unit, 3_000, 0.2, &cfg(9));
        let m = st.unwrap().first_mismatch.expect(what);
        eprintln!("{what}: caught at block {} ({})", m.transfer, m.field);
    }
}

/// The engine's MD cache (8-bit entries, the paper's geometry) under stalls and a
/// reordering memory; a wrong LRU update and a dirty bit never set (a lost MD write-back)
/// are caught by the engine's own scoreboard.
#[test]
fn md_cache_unit_matches_model_and_catches_faults() {
    let p = LossyRtlParams::default();
    let t = top(&p, Unit::MdCache).unwrap();
    let mut dut = VerilatorDut::new(&t, false).unwrap();
    let cp = p.md_cache.rtl(p.codec.md_bits);
    let run =
        |dut: &mut dyn Dut, seed| super::super::cache::run_unit(dut, &t, &cp, 20_000, &cfg(seed));
    let st = run(&mut dut, 61).unwrap();
    assert_clean(&st, &t.name);
    eprintln!(
        "{}: 20000 lookups, {} cycles, 0 mismatches",
        t.name, st.cycles
    );
    let m = measure(&mut dut, &p, Unit::MdCache).unwrap();
    eprintln!(
        "{}: hit latency {} cycles, {:.3} lookups per cycle",
        t.name, m.latency_cycles, m.in_beats_per_cycle
    );
    type Edit<'a> = (&'a str, &'a dyn Fn(&str) -> String);
    let edits: [Edit; 2] = [
        ("lru", &|v: &str| {
            v.replacen(
                "(rank_w1_q[i] < touched_rank[i])",
                "(rank_w1_q[i] > touched_rank[i])",
                1,
            )
        }),
        ("dirty", &|v: &str| {
            v.replacen(
                "dirty_w0_q[k] <= dirty_w0_d[k];",
                "dirty_w0_q[k] <= 1'd0;",
                1,
            )
        }),
    ];
    // One model with both faults (`FaultModel` refuses an edit that changes nothing).
    let fm = FaultModel::of_top(&t, &edits.map(|(_, e)| e)).unwrap();
    for (k, (what, _)) in edits.into_iter().enumerate() {
        let mut dut = fm.dut(Some(k)).unwrap();
        match run(&mut dut, 62) {
            Ok(st) => {
                let m = st.first_mismatch.expect(what);
                eprintln!("{what}: caught at lookup {} ({})", m.transfer, m.field);
            }
            Err(e) => eprintln!("{what}: caught: {e}"),
        }
    }
}

/// The loop-back on 16 B blocks (the proof configuration): every block comes back as the
/// words C-Pack ran on, lossy codes included, and a decompressor whose dictionary write
/// pointer skips token 1's push gives other words back, which the scoreboard catches.
#[test]
fn loopback_gives_back_every_block_and_catches_a_fault() {
    let p = crate::config::Config::load(std::path::Path::new("verif/configs/cpack_lossy_b16.yaml"))
        .unwrap()
        .cpack_lossy;
    let t = top(&p, Unit::Loopback).unwrap();
    let mut dut = SimDut::new(&t).unwrap();
    let st = run_unit(&mut dut, &t, &p, Unit::Loopback, 600, 0.0, &cfg(3)).unwrap();
    assert_clean(&st, &t.name);
    let mut dut = faulty_dut(&t, "cpack_lossy_decomp", &|v: &str| {
        v.replacen(
            "assign x3_dwsel1 = (x3_push1 ?",
            "assign x3_dwsel1 = (~x3_push1 ?",
            1,
        )
    })
    .unwrap();
    let st = run_unit(&mut dut, &t, &p, Unit::Loopback, 2_000, 0.0, &cfg(3)).unwrap();
    let m = st.first_mismatch.expect("dictionary write pointer");
    eprintln!("caught at block {} ({})", m.transfer, m.field);
}

/// The lossy loop-back (truncation → compressor → decompressor → restore) on 64 B blocks:
/// every block comes back truncated as the model stores it, and a decompressor that passes
/// on the wrong `tcode` (2 as 0, 3 as 1) makes the restore unit unpack other fields, which
/// the scoreboard catches.
#[test]
fn lossy_loopback_gives_back_truncated_blocks_and_catches_a_fault() {
    let path = std::path::Path::new("verif/configs/cpack_lossy_b64_pall.yaml");
    let p = crate::config::Config::load(path).unwrap().cpack_lossy;
    let t = top(&p, Unit::LossyLoopback).unwrap();
    let mut dut = SimDut::new(&t).unwrap();
    let st = run_unit(&mut dut, &t, &p, Unit::LossyLoopback, 300, 0.0, &cfg(5)).unwrap();
    assert_clean(&st, &t.name);
    let mut dut = faulty_dut(&t, "cpack_lossy_decomp", &|v: &str| {
        v.replacen(
            "assign m_tcode_o = ofifo_out[132:131];",
            "assign m_tcode_o = {1'b0, ofifo_out[131]};",
            1,
        )
    })
    .unwrap();
    let st = run_unit(&mut dut, &t, &p, Unit::LossyLoopback, 1_000, 0.0, &cfg(5)).unwrap();
    let m = st.first_mismatch.expect("tcode passed on");
    eprintln!("caught at block {} ({})", m.transfer, m.field);
}
