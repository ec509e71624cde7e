//! Worked examples of docs/FORMATS.md, Base+XOR §2.6 (with their ones counts), ZDR edge cases and
//! property-based round trips for every scheme.

use super::*;
use crate::model::dbi::{self, DbiGroup, LinkCodec, Wire};
use proptest::prelude::*;

fn t16(mut p: BaseXorParams) -> BaseXorParams {
    p.t_bytes = 16;
    p
}

fn enc(p: &BaseXorParams, w: &[u32]) -> Vec<u32> {
    let e = encode_words(p, w).expect("valid params");
    assert_eq!(
        decode_words(p, &e).expect("decodes"),
        w,
        "round trip {:?}",
        p
    );
    e
}

#[test]
fn example1_four_byte_adjacent() {
    let w = [0x390c1a2b, 0x390c1a3f, 0x390c1b07, 0x390c1b11];
    assert_eq!(ones(&w), 53);
    let e = enc(&t16(BaseXorParams::nbyte(4, false)), &w);
    assert_eq!(e, [0x390c1a2b, 0x00000014, 0x00000138, 0x00000016]);
    assert_eq!(ones(&e), 22);
}

#[test]
fn example2_zero_interference() {
    let w = [0x3f8ccccd, 0, 0x3f8ccccd, 0x3f8cd000];
    assert_eq!(ones(&w), 48);
    let plain = enc(&t16(BaseXorParams::nbyte(4, false)), &w);
    assert_eq!(plain, [0x3f8ccccd, 0x3f8ccccd, 0x3f8ccccd, 0x00001ccd]);
    assert_eq!(ones(&plain), 62);
    let z = enc(&t16(BaseXorParams::nbyte(4, true)), &w);
    assert_eq!(z, [0x3f8ccccd, 0x40000000, 0x3f8ccccd, 0x00001ccd]);
    assert_eq!(ones(&z), 45);
}

#[test]
fn example3_zdr_swap() {
    assert_eq!(zdr_encode(0x52345678, 0x12345678, 0x4000_0000), 0x12345678);
    assert_eq!(zdr_decode(0x12345678, 0x12345678, 0x4000_0000), 0x52345678);
    let w = [0x12345678, 0x52345678, 0x52345678, 0x12345678];
    let e = enc(&t16(BaseXorParams::nbyte(4, true)), &w);
    assert_eq!(&e[..2], &[0x12345678, 0x12345678]);
}

const EX4: [u32; 8] = [
    0x400e617c, 0x400e64c3, 0x400e69ad, 0x400e76c9, 0x400e88ce, 0x400e978d, 0x400ea993, 0x400eb9f5,
];

#[test]
fn example4_universal_and_dbi() {
    assert_eq!(ones(&EX4), 100);
    for zdr in [false, true] {
        let e = enc(&BaseXorParams::universal(3, zdr), &EX4);
        assert_eq!(
            e,
            [
                0x400e617c, 0x000005bf, 0x000008d1, 0x0000120a, 0x0000e9b2, 0x0000f34e, 0x0000c03e,
                0x0000cf3c
            ]
        );
        assert_eq!(ones(&e), 66);
    }
    assert_eq!(ones(&enc(&BaseXorParams::nbyte(4, true), &EX4)), 69);
    assert_eq!(ones(&enc(&BaseXorParams::nbyte(8, true), &EX4)), 61);
    let codec = LinkCodec {
        bx: BaseXorParams::universal(3, true),
        dbi_group: DbiGroup(8),
    };
    let wire = codec.encode_words(&EX4).expect("encodes");
    assert_eq!(
        wire.words,
        [
            0x400e6183, 0x00000540, 0x000008d1, 0x0000120a, 0x000016b2, 0x00000c4e, 0x0000c0c1,
            0x0000303c
        ]
    );
    let per_beat: Vec<u64> = (0..8).map(|k| wire.flags >> (4 * k) & 0xf).collect();
    assert_eq!(per_beat, [1, 1, 0, 0, 2, 2, 1, 2]);
    assert_eq!(ones(&wire.words), 46);
    assert_eq!(wire.ones(), 52);
    assert_eq!(codec.decode_words(&wire).expect("decodes"), EX4);
    let (raw_dbi, f) = dbi::encode_words(DbiGroup(8), &EX4);
    assert_eq!(ones(&raw_dbi) + f.count_ones() as u64, 91);
}

#[test]
fn example5_doubles() {
    let mut w = Vec::new();
    for lo in [0x9999999au32, 0x99999a00, 0x99999a66, 0x99999acc] {
        w.extend([lo, 0x3ff19999]);
    }
    assert_eq!(ones(&w), 136);
    assert_eq!(ones(&enc(&BaseXorParams::nbyte(4, true), &w)), 111);
    assert_eq!(ones(&enc(&BaseXorParams::nbyte(8, true), &w)), 49);
    assert_eq!(ones(&enc(&BaseXorParams::universal(3, true), &w)), 43);
    // 64-bit ZDR variant (parameter): one constant per double.
    let mut p = BaseXorParams::nbyte(8, true);
    p.zdr_bits = Some(64);
    enc(&p, &w);
}

#[test]
fn example6_sparse() {
    let w = [0x3e4ccccd, 0, 0, 0x3e4ccccd, 0, 0x3e4cd000, 0, 0];
    assert_eq!(ones(&w), 45);
    assert_eq!(ones(&enc(&BaseXorParams::nbyte(4, false), &w)), 90);
    assert_eq!(ones(&enc(&BaseXorParams::universal(3, false), &w)), 113);
    assert_eq!(ones(&enc(&BaseXorParams::nbyte(4, true), &w)), 50);
    assert_eq!(ones(&enc(&BaseXorParams::universal(3, true), &w)), 50);
}

#[test]
fn example7_degenerate_sectors() {
    let z = [0u32; 8];
    for p in [
        BaseXorParams::universal(3, true),
        BaseXorParams::nbyte(4, true),
    ] {
        let e = enc(&p, &z);
        assert_eq!(
            e,
            [
                0,
                0x4000_0000,
                0x4000_0000,
                0x4000_0000,
                0x4000_0000,
                0x4000_0000,
                0x4000_0000,
                0x4000_0000
            ]
        );
        assert_eq!(ones(&e), 7);
    }
    let d = [0xdeadbeefu32; 8];
    assert_eq!(ones(&d), 192);
    for p in [
        BaseXorParams::universal(3, true),
        BaseXorParams::nbyte(4, true),
    ] {
        assert_eq!(ones(&enc(&p, &d)), 24, "{:?}", p);
    }
    // An 8-byte base keeps two copies of the word.
    assert_eq!(ones(&enc(&BaseXorParams::nbyte(8, true), &d)), 48);
    // The extension leaves zero-base chunks alone: an all-zero sector stays all-zero.
    let mut p = BaseXorParams::universal(3, true);
    p.zdr_skip_zero_base = true;
    assert_eq!(ones(&enc(&p, &z)), 0);
}

#[test]
fn example8_universal_halfwords_fig8b() {
    let w = [0x400e6151, 0x400e6a20, 0x400e7003, 0x400e5e11];
    let p = t16(BaseXorParams::universal(3, false));
    assert_eq!(p.unit_bits(), 16);
    let e = enc(&p, &w);
    assert_eq!(e, [0x400e215f, 0x00000b71, 0x00001152, 0x00003431]);
    // With ZDR the 2-byte units use C = 0x4000 (no zero halfword here: same result).
    assert_eq!(enc(&t16(BaseXorParams::universal(3, true)), &w), e);
    // Byte-address halfword order is a different (still invertible) transform.
    let mut q = p;
    q.half_order = HalfOrder::Address;
    assert_ne!(enc(&q, &w), e);
}

#[test]
fn universal_partners_and_depths() {
    let p = BaseXorParams::universal(3, true);
    assert_eq!(
        p.partners(),
        [
            None,
            Some(0),
            Some(0),
            Some(1),
            Some(0),
            Some(1),
            Some(2),
            Some(3)
        ]
    );
    assert_eq!(p.decode_depth(), 3);
    // Table II: 2/4/8-byte decode chains of 15 / 7 / 3 XOR levels on 32 B.
    assert_eq!(BaseXorParams::nbyte(2, false).decode_depth(), 15);
    assert_eq!(BaseXorParams::nbyte(4, false).decode_depth(), 7);
    assert_eq!(BaseXorParams::nbyte(8, false).decode_depth(), 3);
    let mut fb = BaseXorParams::nbyte(4, false);
    fb.fixed_base = true;
    assert_eq!(fb.decode_depth(), 1);
    assert_eq!(BaseXorParams::nbyte(8, true).unit_bits(), 32);
    assert_eq!(BaseXorParams::nbyte(8, true).partners()[2], Some(0));
    assert_eq!(BaseXorParams::nbyte(2, true).zdr_constant(), 0x4000);
}

#[test]
fn zdr_edge_cases_exhaustive_16bit() {
    const C: u64 = 0x4000;
    // Every base among the edge cases, every 16-bit input: the map is a bijection and decodes.
    for b in [0u64, C, 0xffff, 0xbfff, 1, 0x8000, 0x4001, 0x1234] {
        let mut seen = vec![false; 1 << 16];
        for x in 0..(1u64 << 16) {
            let y = zdr_encode(x, b, C);
            assert!(y < 1 << 16);
            assert!(!seen[y as usize], "collision at base {:#x}", b);
            seen[y as usize] = true;
            assert_eq!(zdr_decode(y, b, C), x, "x {:#x} base {:#x}", x, b);
        }
    }
}

#[test]
fn zdr_degenerate_bases_32bit() {
    const C: u64 = 0x4000_0000;
    for x in [0u64, C, 1, 0xffff_ffff, 0x8000_0000, 0x4000_0001] {
        // base = C: exactly x ^ C.
        assert_eq!(zdr_encode(x, C, C), x ^ C);
        assert_eq!(zdr_decode(x ^ C, C, C), x);
        // base = 0: 0 and C swap, everything else passes.
        let y = zdr_encode(x, 0, C);
        let expect = if x == 0 {
            C
        } else if x == C {
            0
        } else {
            x
        };
        assert_eq!(y, expect);
        assert_eq!(zdr_decode(y, 0, C), x);
    }
}

#[test]
fn bad_parameters_are_errors() {
    let mut p = BaseXorParams::nbyte(3, true);
    assert!(p.validate().is_err());
    p = BaseXorParams::universal(4, true); // 32 B / 16 = 2 B units, zdr 16
    assert!(p.validate().is_ok());
    p = BaseXorParams::universal(5, true);
    assert!(p.validate().is_err());
    p = BaseXorParams::nbyte(2, true);
    p.zdr_bits = Some(32);
    assert!(p.validate().is_err());
    p = BaseXorParams::nbyte(4, true);
    p.zdr_const = Some(0);
    assert!(p.validate().is_err());
    assert!(encode(&BaseXorParams::default(), &[0u8; 31]).is_err());
    let codec = LinkCodec::default();
    let bad = Wire {
        words: vec![0; 8],
        flags: 1 << 40,
    };
    assert!(codec.decode_words(&bad).is_err());
}

/// Every scheme variant the model supports on a transaction of `t` bytes.
fn all_params(t: u32) -> Vec<BaseXorParams> {
    let mut v = vec![];
    for zdr in [false, true] {
        for n in [2, 4, 8] {
            for fixed_base in [false, true] {
                let mut p = BaseXorParams::nbyte(n, zdr);
                p.t_bytes = t;
                p.fixed_base = fixed_base;
                v.push(p);
            }
        }
        for s in 1..=5 {
            let mut p = BaseXorParams::universal(s, zdr);
            p.t_bytes = t;
            if p.validate().is_ok() {
                v.push(p);
            }
        }
    }
    let mut p = BaseXorParams::nbyte(8, true);
    p.zdr_bits = Some(64);
    p.t_bytes = t;
    v.push(p);
    let mut p = BaseXorParams::nbyte(8, true);
    p.zdr_bits = Some(16);
    p.t_bytes = t;
    v.push(p);
    let mut p = BaseXorParams::universal(3, true);
    p.zdr_skip_zero_base = true;
    p.t_bytes = t;
    v.push(p);
    for mut p in v.clone() {
        p.half_order = HalfOrder::Address;
        v.push(p);
    }
    v
}

/// Words that exercise ZDR: zeros, repeats, and words equal to a neighbour ^ C.
fn similar_words(n: usize) -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::vec((0u8..6, any::<u32>()), n).prop_map(|v| {
        let mut out: Vec<u32> = Vec::with_capacity(v.len());
        for (i, (k, r)) in v.into_iter().enumerate() {
            let prev = if i > 0 { out[i - 1] } else { r };
            let first = out.first().copied().unwrap_or(r);
            out.push(match k {
                0 => 0,
                1 => prev,
                2 => prev ^ 0x4000_0000,
                3 => first ^ 0x4000 ^ (r & 0x0001_0000),
                4 => prev ^ (r & 0xff),
                _ => r,
            });
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn every_scheme_round_trips(w in similar_words(16), dbi_g in 0usize..4) {
        for t in [16u32, 32, 64] {
            let words = w[..(t / 4) as usize].to_vec();
            for p in all_params(t) {
                let e = encode_words(&p, &words).expect("valid");
                prop_assert_eq!(decode_words(&p, &e).expect("decodes"), words.clone(), "{:?}", p);
                let codec = LinkCodec { bx: p, dbi_group: DbiGroup([0, 8, 16, 32][dbi_g]) };
                if codec.validate().is_ok() {
                    let wire = codec.encode_words(&words).expect("encodes");
                    prop_assert_eq!(codec.decode_words(&wire).expect("decodes"), words.clone());
                }
            }
        }
    }

    #[test]
    fn random_zdr_32bit_round_trip(x in any::<u32>(), b in any::<u32>()) {
        let c = 0x4000_0000u64;
        prop_assert_eq!(zdr_decode(zdr_encode(x as u64, b as u64, c), b as u64, c), x as u64);
    }
}
