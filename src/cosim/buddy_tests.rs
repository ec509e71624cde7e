use super::*;
use crate::cosim::dut::SimDut;
use crate::cosim::test_util::assert_clean;

fn cfg(seed: u64) -> StreamConfig {
    StreamConfig::seeded(seed)
}

/// Runs `n` entries of the classes (seed `classes`) through the BPC unit `unit` (`t`), the
/// decompressor with `corrupt` of them corrupted.
#[allow(clippy::too_many_arguments)]
fn run_classes(
    dut: &mut dyn Dut,
    t: &Module,
    p: &BuddyRtlParams,
    unit: Unit,
    classes: u64,
    n: u64,
    corrupt: f64,
    c: &StreamConfig,
) -> Result<RunStats, String> {
    let mut e = Entries::classes(classes);
    run_entries(dut, t, &p.bpc, unit, &mut e, n, corrupt, c, &mut |_| {})
}

fn variants() -> Vec<BuddyRtlParams> {
    let d = BuddyRtlParams::default();
    vec![
        d,
        BuddyRtlParams {
            bpc: BpcRtlParams {
                entry_bytes: 128,
                sym_bits: 64,
                prefixes: crate::model::bpc::BpcPrefixes::Alternate,
                dec_tokens: 3,
                dec_sum_stages: 2,
                dec_lanes: 1,
            },
            addr: crate::model::buddy::AddrParams::pages_64k(),
            meta: crate::rtl::buddy::MetaSliceParams {
                size_bytes: 8192,
                ..Default::default()
            },
            mc: Default::default(),
            addr_stages: 3,
        },
        BuddyRtlParams {
            bpc: BpcRtlParams {
                entry_bytes: 32,
                dec_tokens: 2,
                dec_sum_stages: 2,
                ..BpcRtlParams::default()
            },
            addr_stages: 2,
            ..d
        },
        BuddyRtlParams {
            bpc: BpcRtlParams {
                entry_bytes: 64,
                sym_bits: 64,
                dec_tokens: 5,
                ..BpcRtlParams::default()
            },
            ..d
        },
        // The serial decompressor: its 1 GHz form at 3 lanes, then every sum split.
        BuddyRtlParams {
            bpc: serial(128, 32, 3, 4),
            ..d
        },
        BuddyRtlParams {
            bpc: BpcRtlParams {
                prefixes: crate::model::bpc::BpcPrefixes::Alternate,
                ..serial(64, 64, 2, 3)
            },
            ..d
        },
        BuddyRtlParams {
            bpc: serial(32, 32, 1, 2),
            ..d
        },
        BuddyRtlParams {
            bpc: serial(32, 32, 4, 1),
            ..d
        },
        // The narrow symbols: the proofs' 32 B of 8-bit symbols, and 16-bit ones serially.
        BuddyRtlParams {
            bpc: BpcRtlParams {
                entry_bytes: 32,
                sym_bits: 8,
                dec_tokens: 2,
                ..BpcRtlParams::default()
            },
            ..d
        },
        BuddyRtlParams {
            bpc: serial(64, 16, 2, 1),
            ..d
        },
    ]
}

/// The serial BPC decompressor (one token per cycle per lane).
fn serial(entry_bytes: usize, sym_bits: u32, lanes: u32, sum_stages: u32) -> BpcRtlParams {
    BpcRtlParams {
        entry_bytes,
        sym_bits,
        dec_tokens: 1,
        dec_lanes: lanes,
        dec_sum_stages: sum_stages,
        ..BpcRtlParams::default()
    }
}

/// The Verilator runs: the defaults. The 64-bit-symbol set runs at 10^6 entries in the long
/// tier (`verif/configs/buddy_s64_alt_64k.yaml`), the 32 B and 64 B entries in the interpreter
/// here and the 32 B set in Verilator through the main-job test's small configuration.
fn verilator_variants() -> Vec<BuddyRtlParams> {
    variants().into_iter().take(1).collect()
}

/// The fault-injection configuration: 32 B entries (the same generator code paths, builds a
/// quarter the size of 128 B ones).
fn fault_params() -> BuddyRtlParams {
    variants()[2]
}

/// Both units in the interpreter on every class (the decompressor with corrupt entries).
#[test]
fn interpreter_units_match_the_model() {
    for (i, p) in variants().into_iter().enumerate() {
        for u in [Unit::Compressor, Unit::Decompressor] {
            let t = top(&p, u).unwrap();
            let mut dut = SimDut::new(&t).unwrap();
            let st = run_classes(&mut dut, &t, &p, u, 5 + i as u64, 60, 0.3, &cfg(2)).unwrap();
            assert_clean(&st, &t.name);
            assert_eq!(st.lines, 60);
        }
        for u in [Unit::SizeMapper, Unit::AddrGen] {
            let t = top(&p, u).unwrap();
            let mut dut = SimDut::new(&t).unwrap();
            let st = run_table(&mut dut, &t, &p, u, 500, &cfg(3), &mut |_| {}).unwrap();
            assert_clean(&st, &t.name);
            assert_eq!(st.lines, 500);
        }
    }
}

/// Every (code, target) pair of the size mapper, and the zero detector on zero, one-bit and
/// random entries.
#[test]
fn size_mapper_exhaustive_and_zero_detect() {
    let p = BuddyRtlParams::default();
    let t = top(&p, Unit::SizeMapper).unwrap();
    let mut dut = SimDut::new(&t).unwrap();
    let mut pairs = (0..16u8).flat_map(|c| (0..8u8).map(move |g| (c, g)));
    let mut next = || pairs.next().map(|(c, g)| size_txn(c, g));
    let (si, so) = Stream::of_unit(&t).unwrap();
    let st = run_stream(
        &mut dut,
        &si,
        &so,
        &mut next,
        &cfg(4),
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap();
    assert_clean(&st, "size mapper");
    assert_eq!(st.transfers, 128);
    let z = crate::rtl::buddy::zero_detect().unwrap();
    let mut sim = crate::hdl::sim::Sim::new(&z).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for i in 0..1100u32 {
        let mut b = crate::hdl::Bits::zero(1024);
        if i > 0 && i <= 1024 {
            b.set_bit(i - 1, true);
        } else if i > 1024 {
            for j in 0..1024 {
                b.set_bit(j, rng.gen_bool(0.01));
            }
        }
        let zero = b.is_zero();
        sim.set("blk_i", &b).unwrap();
        sim.eval();
        assert_eq!(sim.get_u64("is_zero_o") == 1, zero, "{i}");
    }
}

/// Every unit in Verilator under random gaps and stalls: 20,000 entries of the classes per
/// BPC unit at the defaults (the decompressor with 10% corrupted), 4,000 with 64-bit symbols,
/// the alternate prefixes and 3 tokens per cycle; 5,000 random requests per table unit;
/// 20,000 and 4,000 metadata lookups (4 KB and 8 KB slices) against the cache model.
#[test]
fn verilator_units_match_the_model_under_stalls() {
    use crate::cosim::vdut::VerilatorDut;
    for (i, p) in verilator_variants().into_iter().enumerate() {
        // The controller has its own scoreboard (`cosim::buddy_mc`).
        for u in Unit::ALL.into_iter().filter(|&u| u != Unit::McCtrl) {
            let t = top(&p, u).unwrap();
            let mut dut = VerilatorDut::new(&t, false).unwrap();
            let n = match (i, u) {
                (_, Unit::SizeMapper | Unit::AddrGen) => 5_000,
                (0, _) => 20_000,
                _ => 4_000,
            };
            let st = match u {
                Unit::SizeMapper | Unit::AddrGen => {
                    run_table(&mut dut, &t, &p, u, n, &cfg(20 + i as u64), &mut |_| {})
                }
                Unit::MetaCache => run_meta_cache(&mut dut, &t, &p, n, &cfg(40 + i as u64)),
                _ => run_classes(&mut dut, &t, &p, u, 30 + i as u64, n, CORRUPT, &cfg(9)),
            }
            .unwrap();
            assert_clean(&st, &t.name);
            assert_eq!(st.lines, n);
            eprintln!(
                "{}: {n} transactions, {} cycles, 0 mismatches",
                t.name, st.cycles
            );
        }
    }
    // The serial decompressor in its 1 GHz form (4 lanes, every sum split).
    let p = BuddyRtlParams {
        bpc: serial(128, 32, 4, 4),
        ..Default::default()
    };
    let t = top(&p, Unit::Decompressor).unwrap();
    let mut dut = VerilatorDut::new(&t, false).unwrap();
    let st = run_classes(
        &mut dut,
        &t,
        &p,
        Unit::Decompressor,
        33,
        20_000,
        CORRUPT,
        &cfg(9),
    );
    let st = st.unwrap();
    assert_clean(&st, &t.name);
    assert_eq!(st.lines, 20_000);
    // The pipelined address generators (3 and 2 stages).
    for p in &variants()[1..3] {
        let t = top(p, Unit::AddrGen).unwrap();
        let mut dut = VerilatorDut::new(&t, false).unwrap();
        let st = run_table(&mut dut, &t, p, Unit::AddrGen, 5_000, &cfg(23), &mut |_| {}).unwrap();
        assert_clean(&st, &t.name);
        assert_eq!(st.lines, 5_000);
    }
}

/// One edit per fault; the scoreboard must report a mismatch for each.
type Edit<'a> = (&'a str, &'a dyn Fn(&str) -> String);

fn caught(p: &BuddyRtlParams, u: Unit, edits: &[Edit], n: u64) {
    let t = top(p, u).unwrap();
    // One model with every fault, each switched on at run time; each edit goes to the
    // first module of the hierarchy it changes.
    let all: Vec<&dyn Fn(&str) -> String> = edits.iter().map(|(_, e)| *e).collect();
    let fm = crate::cosim::fault::FaultModel::of_hierarchy(&t, &all).unwrap();
    for (k, (what, _)) in edits.iter().enumerate() {
        let mut dut = fm.dut(Some(k)).unwrap();
        let st = match u {
            Unit::SizeMapper | Unit::AddrGen => {
                run_table(&mut dut, &t, p, u, n, &cfg(6), &mut |_| {})
            }
            _ => run_classes(&mut dut, &t, p, u, 6, n, CORRUPT, &cfg(6)),
        }
        .unwrap();
        let m = st
            .first_mismatch
            .unwrap_or_else(|| panic!("{what} not caught"));
        eprintln!(
            "{}: {what} caught at transaction {} ({})",
            t.name, m.transfer, m.field
        );
    }
}

#[test]
fn scoreboard_catches_injected_faults() {
    use crate::cosim::fault::invert_mux_select;
    let p = fault_params();
    let faults: [(Unit, &[Edit]); 4] = [
        (
            Unit::Compressor,
            &[
                ("zero code", &|v: &str| {
                    v.replacen("assign all_zero = (", "assign all_zero = 1'b0 & (", 1)
                }),
                ("run length", &|v: &str| {
                    // The run field of a run from the top plane (the first token), off by one.
                    v.replacen(".runf_i(u_zrun_runf_o[", ".runf_i(5'd1 ^ u_zrun_runf_o[", 1)
                }),
                ("merge shift", &|v: &str| {
                    // The first merge of the first level: the base and three plane tokens.
                    if v.contains("module bpc_merge_w33_") {
                        invert_mux_select(v, "s1_l0").unwrap_or_default()
                    } else {
                        v.to_string()
                    }
                }),
            ],
        ),
        (
            Unit::Decompressor,
            &[
                ("stream alignment", &|v: &str| {
                    invert_mux_select(v, "sr_in").unwrap_or_default()
                }),
                ("token error", &|v: &str| {
                    v.replacen("assign t1_err = (", "assign t1_err = 1'b0 & (", 1)
                }),
                ("overrun checks", &|v: &str| {
                    v.replace("(room_q < 10'd", "(10'd1023 < 10'd")
                }),
                ("prefix sum", &|v: &str| {
                    // Word 5's sum (the adders start at word 1).
                    v.replacen("u_ps_add_y_o[4],", "(32'd1 ^ u_ps_add_y_o[4]),", 1)
                }),
            ],
        ),
        (
            Unit::SizeMapper,
            &[("reserved", &|v: &str| {
                v.replacen("assign reserved = ~(", "assign reserved = 1'b0 & ~(", 1)
            })],
        ),
        (
            Unit::AddrGen,
            &[("buddy product", &|v: &str| {
                // Target 2x's 64·e digit taken as 32·e.
                v.replacen(
                    "(tgt_2 ? {28'd0, e, 6'd0} : 48'd0)",
                    "(tgt_2 ? {29'd0, e, 5'd0} : 48'd0)",
                    1,
                )
            })],
        ),
    ];
    for (unit, edits) in faults {
        caught(&p, unit, edits, 2_000);
    }
    // The serial decompressor (2 lanes, every sum split).
    let p = BuddyRtlParams {
        bpc: serial(32, 32, 2, 4),
        ..p
    };
    let serial_faults: &[Edit] = &[
        ("single-zero shift", &|v: &str| {
            v.replacen("(tok_lhot_q[2] ? {3'd0,", "(1'b0 ? {3'd0,", 1)
        }),
        ("room check", &|v: &str| {
            v.replacen("assign over = (", "assign over = 1'b0 & (", 1)
        }),
        ("lane order", &|v: &str| {
            // The read-back turn moves on while the sums stall.
            v.replacen(
                "if ((lane_valid & el_free)) coll_q",
                "if (lane_valid) coll_q",
                1,
            )
        }),
        ("raw pass", &|v: &str| {
            v.replacen("assign raw1_d = lane_raw;", "assign raw1_d = 1'b0;", 1)
        }),
    ];
    caught(&p, Unit::Decompressor, serial_faults, 2_000);
}
