use super::*;
use crate::model::LineParams;

fn words32(mut v: impl FnMut(usize) -> u32) -> Vec<u8> {
    (0..32).flat_map(|i| v(i).to_le_bytes()).collect()
}
fn words64(v: impl Fn(usize) -> u64) -> Vec<u8> {
    (0..16).flat_map(|i| v(i).to_le_bytes()).collect()
}

/// The smooth ramps of the spec's table: `1 + 0.001·i`.
#[test]
fn ramp_sizes_of_spec_section_2_4() {
    let p32 = BpcParams::default();
    let p64 = BpcParams::with_sym_bits(64);
    let f32_ramp = words32(|i| (1.0f32 + i as f32 * 1e-3).to_bits());
    let f64_ramp = words64(|i| (1.0f64 + i as f64 * 1e-3).to_bits());
    assert_eq!(stream_bits(&p32, &f32_ramp).unwrap(), 119);
    // FP64 seen as 32-bit symbols is incompressible; 64-bit symbols fix that.
    assert_eq!(stream_bits(&p32, &f64_ramp).unwrap(), 1059);
    assert_eq!(stream_bits(&p64, &f64_ramp).unwrap(), 262);
    for (p, b) in [(p32, &f32_ramp), (p32, &f64_ramp), (p64, &f64_ramp)] {
        let (s, n) = encode(&p, b).unwrap();
        assert_eq!(decompress_prefix(&p, &s).unwrap(), (b.clone(), n));
    }
}

/// The spec's approximate sizes (random classes): the mean over 2,000 blocks within 5 %.
#[test]
fn random_class_sizes_of_spec_section_2_4() {
    use rand::{Rng, SeedableRng};
    let p = BpcParams::default();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    // N(0, 0.01) by Box-Muller.
    let normal = |r: &mut rand::rngs::StdRng| {
        let (u1, u2): (f64, f64) = (1.0 - r.gen::<f64>(), r.gen());
        ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos() * 0.01) as f32
    };
    let mut mean = |f: &mut dyn FnMut(&mut rand::rngs::StdRng) -> u32| {
        let n = 2_000;
        let total: usize = (0..n)
            .map(|_| stream_bits(&p, &words32(|_| f(&mut rng))).unwrap())
            .sum();
        total as f64 / n as f64
    };
    let cases: [(&str, f64, f64); 4] = [
        ("ints in [0,16)", 176.0, mean(&mut |r| r.gen_range(0..16))),
        (
            "ints in [-128,128)",
            306.0,
            mean(&mut |r| r.gen_range(-128i32..128) as u32),
        ),
        ("FP32 N(0, 0.01)", 957.0, mean(&mut |r| normal(r).to_bits())),
        (
            "FP32 ReLU, 50% zeros",
            922.0,
            mean(&mut |r| normal(r).max(0.0).to_bits()),
        ),
    ];
    for (what, spec, got) in cases {
        eprintln!("{what}: {got:.1} bits (spec about {spec})");
        assert!((got / spec - 1.0).abs() < 0.05, "{what}: {got} vs {spec}");
    }
}

fn all_params() -> Vec<BpcParams> {
    let mut v = Vec::new();
    for sym_bits in [8, 16, 32, 64] {
        for prefixes in [BpcPrefixes::Kim2016, BpcPrefixes::Alternate] {
            // 8-bit symbols: at most 64 per block.
            for line_bytes in [32, 64, 128]
                .into_iter()
                .filter(|&l| l * 8 / sym_bits as usize <= 64)
            {
                v.push(BpcParams {
                    line_bytes,
                    sym_bits,
                    prefixes,
                });
            }
        }
    }
    v
}

#[test]
fn widths_and_worst_case() {
    let p = BpcParams::default();
    assert_eq!((p.symbols(), p.plane_bits(), p.planes()), (32, 31, 33));
    assert_eq!((p.pos_bits(), p.run_bits()), (5, 5));
    assert_eq!(p.max_stream_bits(), 1089);
    let p = BpcParams::with_sym_bits(64);
    assert_eq!((p.symbols(), p.plane_bits(), p.planes()), (16, 15, 65));
    assert_eq!((p.pos_bits(), p.run_bits()), (4, 6));
    // The proofs' narrow symbols: 9 and 17 planes.
    let p = BpcParams {
        line_bytes: 32,
        ..BpcParams::with_sym_bits(8)
    };
    assert_eq!((p.symbols(), p.plane_bits(), p.planes()), (32, 31, 9));
    assert_eq!((p.pos_bits(), p.run_bits()), (5, 3));
    assert_eq!(p.max_stream_bits(), 1 + 8 + 9 * 32);
    assert!(BpcParams::with_sym_bits(8).validate().is_err()); // 128 symbols
    assert!(BpcParams::with_sym_bits(16).validate().is_ok());
    assert!(BpcParams::with_sym_bits(24).validate().is_err());
    let bad = BpcParams {
        line_bytes: 96,
        ..BpcParams::default()
    };
    assert!(bad.validate().is_err());
    assert!(compress(&BpcParams::default(), &[0u8; 64]).is_err());
}

#[test]
fn example_sizes_of_spec_section_2_4() {
    let p = BpcParams::default();
    let bits = |b: &[u8]| stream_bits(&p, b).unwrap();
    assert_eq!(bits(&[0u8; 128]), 10);
    assert_eq!(bits(&words32(|_| 0xDEAD_BEEF)), 40);
    // Stride +1 from a base that needs the 16-bit base code: 19 + 7 + 5.
    assert_eq!(bits(&words32(|i| 1000 + i as u32)), 31);
    // Uniform random words: every plane raw.
    let mut x = 0x1234_5678_9abc_def0u64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u32
    };
    let r: Vec<u8> = (0..32).flat_map(|_| rnd().to_le_bytes()).collect();
    assert_eq!(bits(&r), 1089);
    assert_eq!(size_bits(&p, &r).unwrap(), 1024);
}

#[test]
fn golden_stream_of_a_stride() {
    // base 1000: 011 + 0x03E8; 32 zero planes (32..1): 01 + 11110; plane 0 all ones: 00000.
    let p = BpcParams::default();
    let (b, n) = encode(&p, &words32(|i| 1000 + i as u32)).unwrap();
    assert_eq!(n, 31);
    let expect: u64 = (0b011 << 28) | (0x03E8 << 12) | (0b01 << 10) | (0b11110 << 5);
    let got = b.iter().fold(0u64, |v, x| (v << 8) | *x as u64) >> 1;
    assert_eq!(got, expect, "{got:#x} vs {expect:#x}");
    // The other prefixes: all ones is 00011.
    let q = BpcParams {
        prefixes: BpcPrefixes::Alternate,
        ..p
    };
    let (b2, n2) = encode(&q, &words32(|i| 1000 + i as u32)).unwrap();
    assert_eq!(n2, 31);
    let got2 = b2.iter().fold(0u64, |v, x| (v << 8) | *x as u64) >> 1;
    assert_eq!(got2, expect | 0b00011);
}

#[test]
fn every_plane_class_round_trips() {
    // One block per class, built from deltas.
    let p = BpcParams::default();
    let from_deltas = |d: &dyn Fn(usize) -> i64| {
        let mut w = 77i64;
        let mut out = vec![w as u32];
        for k in 0..31 {
            w += d(k);
            out.push(w as u32);
        }
        out.into_iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>()
    };
    let cases: Vec<(&str, Vec<u8>, PlaneCode)> = vec![
        (
            "one delta of 1",
            from_deltas(&|k| (k == 4) as i64),
            PlaneCode::OneOne,
        ),
        (
            "two adjacent",
            from_deltas(&|k| (k == 4 || k == 5) as i64),
            PlaneCode::TwoOnes,
        ),
        (
            "dbp zero",
            from_deltas(&|k| if k % 3 == 0 { 2 } else { 0 }),
            PlaneCode::DbpZero,
        ),
        ("all ones", from_deltas(&|_| 1), PlaneCode::AllOnes),
        ("raw", from_deltas(&|k| (k * 7 % 5) as i64), PlaneCode::Raw),
    ];
    for (name, b, class) in cases {
        let t = tokens(&p, &b).unwrap();
        assert!(
            t.tokens
                .iter()
                .any(|x| matches!(x, Token::Plane { class: c, .. } if *c == class)),
            "{name}: {:?}",
            t.tokens
        );
        let (s, n) = encode(&p, &b).unwrap();
        assert_eq!(decompress_prefix(&p, &s).unwrap(), (b.clone(), n), "{name}");
    }
}

#[test]
fn round_trips_on_random_and_patterned_blocks() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for p in all_params() {
        for i in 0..400 {
            let lb = p.line_bytes;
            let b: Vec<u8> = match i % 5 {
                0 => (0..lb).map(|_| rng.gen()).collect(),
                1 => (0..lb)
                    .map(|_| if rng.gen_bool(0.8) { 0 } else { rng.gen() })
                    .collect(),
                2 => {
                    let base: u32 = rng.gen();
                    let step: i32 = rng.gen_range(-300..300);
                    (0..lb / 4)
                        .flat_map(|k| base.wrapping_add((step * k as i32) as u32).to_le_bytes())
                        .collect()
                }
                3 => (0..lb / 8)
                    .flat_map(|k| (1.0f64 + k as f64 * rng.gen::<f64>() * 1e-3).to_le_bytes())
                    .collect(),
                _ => (0..lb / 4)
                    .flat_map(|_| (rng.gen::<i32>() >> rng.gen_range(0..32)).to_le_bytes())
                    .collect(),
            };
            let (s, n) = encode(&p, &b).unwrap();
            assert!(n <= p.max_stream_bits(), "{p:?} {n}");
            assert_eq!(n, stream_bits(&p, &b).unwrap());
            assert_eq!(
                decompress_prefix(&p, &s).unwrap(),
                (b.clone(), n),
                "{p:?} {i}"
            );
            let c = compress(&p, &b).unwrap();
            assert_eq!(c.nbits, size_bits(&p, &b).unwrap());
            assert_eq!(decompress(&p, &c.bits, c.nbits).unwrap(), b, "{p:?} {i}");
        }
    }
}

#[test]
fn both_prefix_tables_give_the_same_sizes() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let a = BpcParams::default();
    let b = BpcParams {
        prefixes: BpcPrefixes::Alternate,
        ..a
    };
    let mut differ = 0;
    for _ in 0..500 {
        let blk: Vec<u8> = (0..32)
            .flat_map(|_| (rng.gen::<i32>() >> rng.gen_range(20..32)).to_le_bytes())
            .collect();
        let (sa, na) = encode(&a, &blk).unwrap();
        let (sb, nb) = encode(&b, &blk).unwrap();
        assert_eq!(na, nb);
        differ += (sa != sb) as usize;
        assert_eq!(decompress_prefix(&b, &sb).unwrap().0, blk);
    }
    assert!(differ > 0);
}

#[test]
fn corrupt_streams_are_errors_never_panics() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let p = BpcParams::default();
    // A zero run past plane 0: 33 planes, then a run code of 2 at plane 0.
    let mut w = crate::model::bits::BitWriter::new();
    w.put(0b000, 3);
    w.put(0b01, 2);
    w.put(30, 5); // 32 planes
    w.put(0b01, 2);
    w.put(0, 5); // 2 more: past plane 0
    let (s, _) = w.finish();
    let e = decompress_prefix(&p, &s).unwrap_err().to_string();
    assert!(e.contains("past plane 0"), "{e}");
    // A one-one position outside the 31-bit plane.
    let mut w = crate::model::bits::BitWriter::new();
    w.put(0b000, 3);
    w.put(0b00011, 5);
    w.put(31, 5);
    let (s, _) = w.finish();
    let e = decompress_prefix(&p, &s).unwrap_err().to_string();
    assert!(e.contains("position 31"), "{e}");
    // Truncated.
    let (s, n) = encode(&p, &words32(|i| (i * i * 977) as u32)).unwrap();
    assert!(decompress(&p, &s, n - 1).is_err());
    assert!(decompress_prefix(&p, &s[..s.len() / 2]).is_err());
    // Random payloads: either outcome, never a panic.
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..20_000 {
        let b: Vec<u8> = (0..128).map(|_| rng.gen()).collect();
        match decompress_prefix(&p, &b) {
            Ok((blk, n)) => {
                ok += 1;
                assert_eq!(blk.len(), 128);
                assert!(n <= 1089);
            }
            Err(_) => bad += 1,
        }
    }
    assert!(ok > 0 && bad > 0, "{ok} {bad}");
}
