//! BDI: every Table II encoding with its code and size, the exact stream layout, the signed
//! sign-extension limits, the B2Δ1/B4Δ2 tie, both base rules, line sizes, round trips and
//! malformed streams.

use super::*;
use crate::model::bits::hex;
use crate::model::bits::rejects_damage;
use crate::trace::lines::arb_line;
use proptest::prelude::*;

fn from_words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_u64(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_u16(w: &[u16]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Compresses, checks size/encoding consistency and the round trip; returns the result.
fn rt(p: &BdiParams, line: &[u8]) -> BdiCompressed {
    let c = compress(p, line).unwrap();
    let coded = crate::model::codec::assert_round_trip(p, line);
    assert_eq!((&coded.bits, coded.nbits), (&c.bits, c.nbits));
    assert_eq!(c.nbits, c.encoding.size_bits(p.line_bytes));
    assert_eq!(classify(p, line).unwrap(), c.encoding);
    c
}

/// Sixteen words whose odd words are distinct small values, so that no Base8 encoding
/// applies (the 8-byte elements differ by multiples of 2^32) and every word is an immediate.
fn no_b8() -> [u32; 16] {
    let mut w = [0u32; 16];
    for i in 0..8 {
        w[2 * i + 1] = 20 + i as u32;
    }
    w
}

#[test]
fn table_ii_codes_and_sizes() {
    use BdiEncoding::*;
    let want = [
        (Zero, 0b0000, 0, 4, 4, 1),
        (Repeated, 0b0001, 64, 4, 68, 2),
        (B8D1, 0b0010, 128, 12, 140, 3),
        (B8D2, 0b0011, 192, 12, 204, 4),
        (B8D4, 0b0100, 320, 12, 332, 5),
        (B4D1, 0b0101, 160, 20, 180, 6),
        (B4D2, 0b0110, 288, 20, 308, 7),
        (B2D1, 0b0111, 272, 36, 308, 8),
    ];
    for (e, pre, data, meta, total, num) in want {
        assert_eq!(e.prefix(), Some(pre), "{e:?}");
        assert_eq!(BdiEncoding::from_prefix(pre), Some(e));
        assert_eq!(
            (e.data_bits(64), e.meta_bits(64), e.size_bits(64)),
            (data, meta, total),
            "{e:?}"
        );
        assert_eq!(e.table_ii_number(), num);
    }
    assert_eq!(Uncompressed.size_bits(64), 512);
    assert_eq!(Uncompressed.table_ii_number(), 9);
    assert_eq!(Uncompressed.prefix(), None);
    assert_eq!(BdiEncoding::from_prefix(8), None);
    // original BDI Table 2 data sizes in bytes (16/24/40/20/36/34)
    let bytes: Vec<usize> = [B8D1, B8D2, B8D4, B4D1, B4D2, B2D1]
        .iter()
        .map(|e| e.data_bits(64) / 8)
        .collect();
    assert_eq!(bytes, [16, 24, 40, 20, 36, 34]);
}

#[test]
fn each_encoding_is_selected() {
    use BdiEncoding::*;
    let p = BdiParams::default();
    let b8 = 0x1000_2000_3000_4000u64;
    let cases: Vec<(BdiEncoding, Vec<u8>)> = vec![
        (Zero, vec![0; 64]),
        (Repeated, from_u64(&[0x0123_4567_89ab_cdef; 8])),
        (
            B8D1,
            from_u64(&(0..8).map(|i| b8 + i * 9).collect::<Vec<_>>()),
        ),
        (
            B8D2,
            from_u64(&(0..8).map(|i| b8 + i * 1000).collect::<Vec<_>>()),
        ),
        (
            B8D4,
            from_u64(&(0..8).map(|i| b8 + i * 100_000).collect::<Vec<_>>()),
        ),
        (
            B4D1,
            from_words(&(0..16).map(|i| 0x1234_5678 + i).collect::<Vec<_>>()),
        ),
        (
            B4D2,
            from_words(&(0..16).map(|i| 0x1234_5678 + i * 1000).collect::<Vec<_>>()),
        ),
        (
            B2D1,
            from_u16(&(0..32).map(|i| 0x4000 + i * 3).collect::<Vec<_>>()),
        ),
        (
            Uncompressed,
            from_words(
                &(0..16)
                    .map(|i| 0x9E37_79B9u32.wrapping_mul(i + 1))
                    .collect::<Vec<_>>(),
            ),
        ),
    ];
    for (want, line) in cases {
        let c = rt(&p, &line);
        assert_eq!(c.encoding, want, "{}", hex(&line));
        assert_eq!(c.is_compressed(), want != Uncompressed);
    }
}

#[test]
fn stream_layout_golden() {
    let p = BdiParams::default();
    // zero line: just 0000
    let c = rt(&p, &[0; 64]);
    assert_eq!((c.bits.clone(), c.nbits), (vec![0x00], 4));
    // repeated: 0001 | value
    let c = rt(&p, &from_u64(&[0x0123_4567_89ab_cdef; 8]));
    assert_eq!(hex(&c.bits), "10123456789abcdef0");
    assert_eq!(c.base, 0x0123_4567_89ab_cdef);
    // B4Δ1 with one immediate (element 5 = 3): 0101 | mask (element 0 first) | B | Δ_i
    let mut w: Vec<u32> = (0..16).map(|i| 0x1234_5678 + i).collect();
    w[5] = 3;
    let c = rt(&p, &from_words(&w));
    assert_eq!(c.encoding, BdiEncoding::B4D1);
    assert_eq!(c.mask, 0xFFFF & !(1 << 5));
    assert_eq!(c.nbits, 180);
    assert_eq!(
        hex(&c.bits),
        "5fbff12345678000102030403060708090a0b0c0d0e0f0"
    );
}

#[test]
fn signed_sign_extension_limits() {
    let p = BdiParams::default();
    // immediates: −128 and 127 fit in one byte (gem5 would reject −128)
    let mut w = no_b8();
    w[2] = -128i32 as u32;
    w[4] = 127;
    let c = rt(&p, &from_words(&w));
    assert_eq!(c.encoding, BdiEncoding::B4D1);
    assert_eq!(c.mask, 0);
    // 128 does not fit as an immediate nor as base 0 + Δ → needs two bytes
    w[4] = 128;
    assert_eq!(rt(&p, &from_words(&w)).encoding, BdiEncoding::B4D2);
    // deltas to the base: B−128 and B+127 fit, B+128 and B−129 do not
    let b = 0x5555_0000u32;
    for (d, fits1) in [(-128i32, true), (127, true), (128, false), (-129, false)] {
        let mut w = [b; 16];
        w[7] = b.wrapping_add(d as u32);
        let e = rt(&p, &from_words(&w)).encoding;
        assert_eq!(e == BdiEncoding::B4D1, fits1, "delta {d}: {e:?}");
        if !fits1 {
            assert_eq!(e, BdiEncoding::B4D2, "delta {d}");
        }
    }
    // 2-byte delta limits: B−32768 fits B4Δ2, B+32768 does not
    let mut w = [b; 16];
    w[3] = b.wrapping_sub(32768);
    assert_eq!(rt(&p, &from_words(&w)).encoding, BdiEncoding::B4D2);
    w[3] = b.wrapping_add(32768);
    assert_eq!(rt(&p, &from_words(&w)).encoding, BdiEncoding::Uncompressed);
    // 4-byte delta of an 8-byte base: −2^31 fits, +2^31 does not
    let b8 = 0x0102_0304_0506_0708u64;
    let mut e = [b8; 8];
    e[4] = b8.wrapping_sub(1 << 31);
    e[5] = b8.wrapping_add(1);
    assert_eq!(rt(&p, &from_u64(&e)).encoding, BdiEncoding::B8D4);
    e[4] = b8.wrapping_add(1 << 31);
    assert_eq!(rt(&p, &from_u64(&e)).encoding, BdiEncoding::Uncompressed);
}

#[test]
fn immediate_preferred_when_both_fit() {
    let p = BdiParams::default();
    // base = element 0 = 5; element 1 = 7 fits both ways → immediate (mask 0)
    let mut w = no_b8();
    w[0] = 5;
    w[1] = 7;
    let c = rt(&p, &from_words(&w));
    assert_eq!(c.encoding, BdiEncoding::B4D1);
    assert_eq!(c.mask, 0);
    assert_eq!(c.base, 5);
}

#[test]
fn b2d1_wins_the_308_bit_tie() {
    // fits B4Δ2 and B2Δ1 (both 308 bits) but no smaller encoding
    let mut w = [0x0000_C000u32; 16];
    w[3] = 0x0000_FF90;
    let line = from_words(&w);
    let p = BdiParams::default();
    for (k, d) in [(8, 1), (8, 2), (8, 4), (4, 1)] {
        assert!(try_base_delta(&line, k, d, BaseRule::Element0).is_none());
    }
    assert!(try_base_delta(&line, 4, 2, BaseRule::Element0).is_some());
    let c = rt(&p, &line);
    assert_eq!(c.encoding, BdiEncoding::B2D1);
    assert_eq!(c.nbits, 308);
}

#[test]
fn base_rules() {
    // element 0 is an immediate, the rest cluster around a large value
    let mut w: Vec<u32> = (0..16).map(|i| 0x1234_5678 + i).collect();
    w[0] = 0;
    let line = from_words(&w);
    let e0 = rt(&BdiParams::default(), &line);
    assert_eq!(e0.encoding, BdiEncoding::Uncompressed);
    let fni = rt(&BdiParams::with_rule(BaseRule::FirstNonImmediate), &line);
    assert_eq!(fni.encoding, BdiEncoding::B4D1);
    assert_eq!(fni.base, 0x1234_5679);
    // the paper's example: a sign-extended narrow word and one that is not → Element0 can
    // only use the zero base for 1-byte deltas
    let mut w = no_b8();
    w[0] = 0xFFFF_FFF0; // −16
    w[1] = 0x0000_00F0; // 240
    let line = from_words(&w);
    assert_eq!(rt(&BdiParams::default(), &line).encoding, BdiEncoding::B4D2);
    // … while the first-non-immediate base (240) makes it Base4-Δ1
    let c = rt(&BdiParams::with_rule(BaseRule::FirstNonImmediate), &line);
    assert_eq!((c.encoding, c.base, c.mask), (BdiEncoding::B4D1, 240, 0b10));
    // all immediates under FirstNonImmediate: B = 0
    let mut w = [3u32; 16];
    w[4] = 0xFFFF_FFFE;
    let c = rt(
        &BdiParams::with_rule(BaseRule::FirstNonImmediate),
        &from_words(&w),
    );
    assert_eq!((c.encoding, c.base, c.mask), (BdiEncoding::B4D1, 0, 0));
}

#[test]
fn line_sizes() {
    for lb in [32usize, 128] {
        let p = BdiParams {
            line_bytes: lb,
            ..BdiParams::default()
        };
        let n = lb / 4;
        assert_eq!(rt(&p, &vec![0; lb]).nbits, 4);
        assert_eq!(rt(&p, &from_u64(&vec![7; lb / 8])).nbits, 68);
        let w: Vec<u32> = (0..n as u32).map(|i| 0x7000_0000 + i).collect();
        let c = rt(&p, &from_words(&w));
        assert_eq!(c.encoding, BdiEncoding::B4D1);
        assert_eq!(c.nbits, 4 + n + 32 + 8 * n);
    }
    // sizes for the other line sizes (docs/FORMATS.md table)
    use BdiEncoding::*;
    let order = [
        Zero,
        Repeated,
        B8D1,
        B8D2,
        B8D4,
        B4D1,
        B4D2,
        B2D1,
        Uncompressed,
    ];
    let s32: Vec<usize> = order.iter().map(|e| e.size_bits(32)).collect();
    let s128: Vec<usize> = order.iter().map(|e| e.size_bits(128)).collect();
    assert_eq!(s32, [4, 68, 104, 136, 200, 108, 172, 164, 256]);
    assert_eq!(s128, [4, 68, 212, 340, 596, 324, 580, 596, 1024]);
    // 32 B: B2Δ1 (164) beats B4Δ2 (172); 128 B: B4Δ2 (580) beats B2Δ1 (596)
    assert_eq!(BdiEncoding::B2D1.size_bits(32), 164);
    assert_eq!(BdiEncoding::B4D2.size_bits(32), 172);
    assert_eq!(BdiEncoding::B4D2.size_bits(128), 580);
    assert_eq!(BdiEncoding::B2D1.size_bits(128), 596);
    let bad = BdiParams {
        line_bytes: 48,
        ..BdiParams::default()
    };
    assert!(matches!(
        compress(&bad, &[0; 48]),
        Err(ModelError::InvalidParam { .. })
    ));
    assert!(matches!(
        compress(&BdiParams::default(), &[0; 63]),
        Err(ModelError::BadLineLength {
            len: 63,
            expected: 64
        })
    ));
}

#[test]
fn malformed_streams() {
    let p = BdiParams::default();
    // reserved prefixes
    for pre in 8u8..16 {
        assert!(matches!(
            decompress(&p, &[pre << 4], 4),
            Err(ModelError::Corrupt(_))
        ));
    }
    // nbits beyond the data, trailing bytes, non-zero pad, extra bits
    assert!(decompress(&p, &[0x00], 9).is_err());
    assert!(matches!(
        decompress(&p, &[0x00, 0x00], 4),
        Err(ModelError::TrailingBytes { .. })
    ));
    assert!(decompress(&p, &[0x01], 4).is_err());
    assert!(decompress(&p, &[0x00], 5).is_err());
    assert!(decompress(&p, &[0x00], 8).is_err());
    // raw line round trip
    let raw: Vec<u8> = (0..64).collect();
    assert_eq!(decompress(&p, &raw, 512).unwrap(), raw);
    assert!(decompress(&p, &raw[..63], 512).is_err());
    assert!(decompress_prefix(&p, &[]).is_err());
}

fn all_params() -> Vec<BdiParams> {
    let mut v = Vec::new();
    for lb in [16, 32, 64, 128] {
        for r in [BaseRule::Element0, BaseRule::FirstNonImmediate] {
            v.push(BdiParams {
                line_bytes: lb,
                base_rule: r,
            });
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn roundtrip_64(line in arb_line(64)) {
        for p in all_params().into_iter().filter(|p| p.line_bytes == 64) {
            rt(&p, &line);
        }
    }

    #[test]
    fn roundtrip_32_128(l32 in arb_line(32), l128 in arb_line(128)) {
        for p in all_params() {
            match p.line_bytes {
                32 => { rt(&p, &l32); }
                128 => { rt(&p, &l128); }
                _ => {}
            }
        }
    }

    /// [derived] §2.1: FirstNonImmediate never needs more bits than Element0.
    #[test]
    fn first_non_immediate_dominates(line in arb_line(64)) {
        let a = size_bits(&BdiParams::default(), &line).unwrap();
        let b = size_bits(&BdiParams::with_rule(BaseRule::FirstNonImmediate), &line).unwrap();
        prop_assert!(b <= a, "{} > {}", b, a);
    }

    /// Every strict prefix of a stream is rejected; flipped bits never panic.
    #[test]
    fn truncated_and_corrupt(line in arb_line(64), flip in 0usize..400, cut in 0usize..400) {
        let p = BdiParams::default();
        let c = compress(&p, &line).unwrap();
        if c.is_compressed() {
            let dec = |b: &[u8], n| decompress(&p, b, n);
            let pre = |b: &[u8]| decompress_prefix(&p, b);
            prop_assert!(rejects_damage(&c.bits, c.nbits, (cut, flip), dec, pre));
        }
    }
}

#[test]
fn mixed_profile_covers_every_encoding() {
    use crate::trace::lines::{lines, LineProfile};
    let mut seen = std::collections::HashSet::new();
    for p in all_params() {
        for l in lines(LineProfile::Mixed, p.line_bytes, 1500, 5) {
            seen.insert((p.line_bytes, p.base_rule, rt(&p, &l).encoding));
        }
    }
    for lb in [32, 64, 128] {
        for e in BdiEncoding::COMPRESSED
            .iter()
            .chain([&BdiEncoding::Uncompressed])
        {
            assert!(
                seen.contains(&(lb, BaseRule::Element0, *e)),
                "{lb} B: {e:?} never produced"
            );
        }
    }
}

#[test]
fn sixteen_byte_lines_drop_base8_delta4() {
    let p = BdiParams {
        line_bytes: 16,
        base_rule: BaseRule::Element0,
    };
    // 8 + 2·4 bytes of base and deltas plus the prefix and mask: longer than the line.
    assert!(BdiEncoding::B8D4.size_bits(16) > 128);
    // Two 8-byte elements 2^20 apart: only Base8-Δ4 of the base-delta encodings would fit.
    let mut line = [0u8; 16];
    line[..8].copy_from_slice(&0x1234_5678_9abc_def0u64.to_le_bytes());
    line[8..].copy_from_slice(&(0x1234_5678_9abc_def0u64 + (1 << 20)).to_le_bytes());
    assert_eq!(rt(&p, &line).encoding, BdiEncoding::Uncompressed);
    // Its prefix on a 16 B bus reads past the end: corrupt input.
    let mut bus = [0u8; 16];
    bus[0] = (BdiEncoding::B8D4 as u8) << 4;
    assert!(decompress_prefix(&p, &bus).is_err());
}
