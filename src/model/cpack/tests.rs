//! C-Pack: both code tables entry by entry, the C-Pack+Z stream layout, push policies, the
//! PACT'12 spec's golden vector and reference sizes (original codes, 128 B), FIFO wrap,
//! ties, fallback, round trips and malformed streams.

use super::*;
use crate::model::bits::hex;
use crate::model::bits::rejects_damage;
use crate::model::LineParams;
use crate::trace::lines::arb_line;
use proptest::prelude::*;

fn from_words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn line16(prefix: &[u32]) -> Vec<u8> {
    let mut w = prefix.to_vec();
    w.resize(16, 0);
    from_words(&w)
}

fn rt(p: &CpackParams, line: &[u8]) -> CpackCompressed {
    let c = compress(p, line).unwrap();
    let coded = crate::model::codec::assert_round_trip(p, line);
    assert_eq!((&coded.bits, coded.nbits), (&c.bits, c.nbits));
    assert_eq!(c.compressed, c.stream_bits < p.line_bits());
    let sum: usize = c.tokens.iter().map(|t| p.token_bits(t.pattern)).sum();
    assert_eq!(sum, c.stream_bits);
    c
}

fn pats(c: &CpackCompressed) -> Vec<CpackPattern> {
    c.tokens.iter().map(|t| t.pattern).collect()
}

#[test]
fn code_tables() {
    use CpackPattern::*;
    let paper = CpackParams::default();
    let orig = CpackParams::original(64);
    // (pattern, paper code, paper bits, original code, original bits)
    let want = [
        (ZeroBlock, Some((0b00, 2)), 2, None, 0),
        (ZeroWord, Some((0b01, 2)), 2, Some((0b00, 2)), 2),
        (NewWord, Some((0b10, 2)), 34, Some((0b01, 2)), 34),
        (FullMatch, Some((0b1100, 4)), 8, Some((0b10, 2)), 6),
        (HalfMatch, Some((0b1101, 4)), 24, Some((0b1100, 4)), 24),
        (Narrow, Some((0b1110, 4)), 12, Some((0b1101, 4)), 12),
        (ThreeByteMatch, Some((0b1111, 4)), 16, Some((0b1110, 4)), 16),
        (Uncompressed, None, 512, None, 512),
    ];
    for (i, (pat, pc, pb, oc, ob)) in want.into_iter().enumerate() {
        assert_eq!(pat.table_ii_number() as usize, i + 1);
        assert_eq!(paper.code(pat), pc, "{pat:?}");
        assert_eq!(paper.token_bits(pat), pb, "{pat:?}");
        assert_eq!(orig.code(pat), oc, "{pat:?}");
        assert_eq!(orig.token_bits(pat), ob, "{pat:?}");
    }
}

#[test]
fn every_pattern_in_a_stream() {
    use CpackPattern::*;
    let p = CpackParams::default();
    let line = line16(&[
        0x1234_5678, // 10 + word (slot 0)
        0x1234_5678, // 1100 0000
        0x1234_56AB, // 1111 0000 AB
        0x1234_ABCD, // 1101 0000 ABCD
        0x0000_00FF, // 1110 FF
        0,           // 01
        0xDEAD_BEEF, // 10 + word (slot 1)
    ]);
    let c = rt(&p, &line);
    assert_eq!(
        pats(&c)[..7],
        [
            NewWord,
            FullMatch,
            ThreeByteMatch,
            HalfMatch,
            Narrow,
            ZeroWord,
            NewWord
        ]
    );
    assert_eq!(c.tokens[6].pushed, Some(1));
    assert_eq!(c.nbits, 148);
    assert_eq!(hex(&c.bits), "848d159e303c2af42af37bfdb7ab6fbbd55550");
    // zero block: the single token 00
    let z = rt(&p, &[0; 64]);
    assert_eq!(
        (pats(&z), z.nbits, z.bits.clone()),
        (vec![ZeroBlock], 2, vec![0])
    );
    // the original table has no zero block: 16 × zzzz
    let zo = rt(&CpackParams::original(64), &[0; 64]);
    assert_eq!(zo.nbits, 32);
    assert!(zo.tokens.iter().all(|t| t.pattern == ZeroWord));
}

#[test]
fn push_policies() {
    use CpackPattern::*;
    // A = 0x12345678, B = 0x12345699, C = B (FORMATS §2.3 step 3)
    let line = line16(&[0x1234_5678, 0x1234_5699, 0x1234_5699, 1]);
    let mut p = CpackParams::default();
    let c = rt(&p, &line);
    assert_eq!(pats(&c)[..3], [NewWord, ThreeByteMatch, ThreeByteMatch]);
    assert_eq!(c.tokens[1].pushed, None);
    for push in [PushPolicy::NoFullMatch, PushPolicy::AllNonZero] {
        p.push = push;
        let c = rt(&p, &line);
        assert_eq!(pats(&c)[..3], [NewWord, ThreeByteMatch, FullMatch]);
        assert_eq!((c.tokens[1].pushed, c.tokens[2].index), (Some(1), 1));
        assert_eq!(
            c.tokens[2].pushed,
            (push == PushPolicy::AllNonZero).then_some(2)
        );
    }
    // zero and narrow words are never pushed
    p.push = PushPolicy::AllNonZero;
    let c = rt(&p, &line16(&[0, 5, 0x100, 0x100]));
    assert_eq!(pats(&c)[..4], [ZeroWord, Narrow, NewWord, FullMatch]);
    assert_eq!(c.tokens[2].pushed, Some(0));
}

#[test]
fn ties_pick_the_lowest_slot() {
    use CpackPattern::*;
    let w = [0x1234_0001, 0x1234_1001, 0x1234_2002, 0x1234_1055];
    // NewOnly: only word 0 is in the dictionary
    let c = rt(&CpackParams::default(), &line16(&w));
    let t: Vec<(CpackPattern, u8)> = c.tokens[..4].iter().map(|t| (t.pattern, t.index)).collect();
    assert_eq!(
        t,
        [(NewWord, 0), (HalfMatch, 0), (HalfMatch, 0), (HalfMatch, 0)]
    );
    // NoFullMatch: word 2 half-matches slots 0 and 1 → slot 0; word 3 matches three bytes of
    // slot 1, which beats the halfword match of the lower slot 0
    let p = CpackParams {
        push: PushPolicy::NoFullMatch,
        ..CpackParams::default()
    };
    let c = rt(&p, &line16(&w));
    let t: Vec<(CpackPattern, u8)> = c.tokens[..4].iter().map(|t| (t.pattern, t.index)).collect();
    assert_eq!(
        t,
        [
            (NewWord, 0),
            (HalfMatch, 0),
            (HalfMatch, 0),
            (ThreeByteMatch, 1)
        ]
    );
}

/// docs/FORMATS.md, PACT'12 §2.7: original codes, push after xxxx/mmxx/mmmx, 128 B block.
#[test]
fn pact12_golden_vector_and_reference_sizes() {
    let p = CpackParams::original(128);
    use super::golden;
    let mut w = golden::WORDS.to_vec();
    w.resize(32, 0);
    let c = rt(&p, &from_words(&w));
    assert_eq!(pats(&c)[..7], golden::PATTERNS);
    let pushed: Vec<Option<u8>> = c.tokens[..7].iter().map(|t| t.pushed).collect();
    assert_eq!(pushed, golden::PUSHED);
    assert_eq!(c.nbits, 178);
    assert_eq!(
        hex(&c.bits),
        format!("37fd1234567883 82af02af35deadbeef{}", "00".repeat(7)).replace(' ', "")
    );
    let size = |w: Vec<u32>| size_bits(&p, &from_words(&w)).unwrap();
    assert_eq!(size(vec![0; 32]), 64);
    assert_eq!(size((0..32).collect()), 374);
    assert_eq!(size((1000..1032).collect()), 538);
    assert_eq!(size(vec![0x3F80_0000; 32]), 220);
    // random data exceeds the block → raw
    assert_eq!(
        size(
            (0..32u32)
                .map(|i| i.wrapping_mul(0x9E37_79B9) | 1 << 31)
                .collect()
        ),
        1024
    );
}

#[test]
fn fifo_wraps_on_128_byte_lines() {
    // 32 distinct words with different upper halves: 32 pushes, slot = pushes mod 16; the
    // repeat of word 16 at the end matches slot 0 (word 0 was overwritten)
    let p = CpackParams::original(128);
    let mut w: Vec<u32> = (0..31u32).map(|i| 0x0100_0000 * (i + 1) + 0x5555).collect();
    w.push(w[16]);
    let c = rt(&p, &from_words(&w));
    assert_eq!(c.tokens[16].pushed, Some(0));
    assert_eq!(c.tokens[30].pushed, Some(14));
    assert_eq!(
        (c.tokens[31].pattern, c.tokens[31].index),
        (CpackPattern::FullMatch, 0)
    );
    assert!(!c.compressed); // 31 × 34 + 6 = 1060 ≥ 1024
    assert_eq!(c.stream_bits, 31 * 34 + 6);
}

#[test]
fn fallback_and_options() {
    let p = CpackParams::default();
    let w: Vec<u32> = (0..16u32)
        .map(|i| 0x0101_0101u32.wrapping_mul(i + 7) ^ (i << 20))
        .collect();
    let c = rt(&p, &from_words(&w));
    assert_eq!((c.compressed, c.stream_bits, c.nbits), (false, 544, 512));
    // 15 new + 1 zero = 512 → still raw (≥ 512); 14 new + 2 zero = 484 → compressed
    let mut w2 = w.clone();
    w2[5] = 0;
    assert_eq!(rt(&p, &from_words(&w2)).nbits, 512);
    w2[6] = 0;
    assert_eq!(rt(&p, &from_words(&w2)).nbits, 14 * 34 + 4);
    // zero-initialised dictionary: 0x00001234 matches entry 0 on its upper halfword
    let pz = CpackParams {
        dict_init_zero: true,
        ..p
    };
    let c = rt(&pz, &line16(&[0x0000_1234]));
    assert_eq!(
        (c.tokens[0].pattern, c.tokens[0].index),
        (CpackPattern::HalfMatch, 0)
    );
    assert_eq!(
        rt(&p, &line16(&[0x0000_1234])).tokens[0].pattern,
        CpackPattern::NewWord
    );
    // 8-entry dictionary: 3-bit indices
    let p8 = CpackParams {
        dict_entries: 8,
        ..p
    };
    assert_eq!(p8.token_bits(CpackPattern::FullMatch), 7);
    rt(&p8, &line16(&[7 << 24, 7 << 24]));
    for bad in [
        CpackParams {
            dict_entries: 12,
            ..p
        },
        CpackParams { line_bytes: 8, ..p },
    ] {
        assert!(matches!(
            size_bits(&bad, &[0; 64]),
            Err(ModelError::InvalidParam { .. })
        ));
    }
    assert!(matches!(
        compress(&p, &[0; 128]),
        Err(ModelError::BadLineLength { .. })
    ));
}

#[test]
fn malformed_streams() {
    let p = CpackParams::default();
    let o = CpackParams::original(64);
    let mut w = crate::model::bits::BitWriter::new();
    w.put(0b01, 2);
    w.put(0b00, 2); // zero block after a word
    let (b, n) = w.finish();
    assert!(matches!(decompress(&p, &b, n), Err(ModelError::Corrupt(_))));
    // 1111 is illegal in the original table
    assert!(matches!(
        decompress(&o, &[0xF0], 4),
        Err(ModelError::Corrupt(_))
    ));
    // a match on an empty dictionary
    assert!(matches!(
        decompress(&p, &[0xC0], 8),
        Err(ModelError::Corrupt(_))
    ));
    assert!(matches!(
        decompress(&o, &[0x80], 6),
        Err(ModelError::Corrupt(_))
    ));
    // truncation, trailing bytes, extra bits, pad bits
    assert!(decompress(&p, &[], 0).is_err());
    assert!(decompress(&p, &[0x00, 0x00], 2).is_err());
    assert!(decompress(&p, &[0x00], 3).is_err());
    assert!(decompress(&p, &[0x20], 2).is_err());
    assert_eq!(decompress(&p, &[0x00], 2).unwrap(), vec![0; 64]);
}

fn all_params(lb: usize) -> Vec<CpackParams> {
    let mut v = Vec::new();
    for codes in [CodeTable::Paper, CodeTable::Original] {
        for push in [
            PushPolicy::NewOnly,
            PushPolicy::NoFullMatch,
            PushPolicy::AllNonZero,
        ] {
            for dict_init_zero in [false, true] {
                for dict_entries in [16, 4] {
                    v.push(CpackParams {
                        codes,
                        push,
                        line_bytes: lb,
                        dict_entries,
                        dict_init_zero,
                    });
                }
            }
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn roundtrip(l32 in arb_line(32), l64 in arb_line(64), l128 in arb_line(128)) {
        for l in [l32, l64, l128] {
            for p in all_params(l.len()) {
                rt(&p, &l);
            }
        }
    }

    /// The more a policy pushes, the more matches are available … but sizes are not
    /// monotone in general; what holds is that the paper and original tables agree on
    /// every token except full matches and the zero block.
    #[test]
    fn tables_differ_only_in_full_match_and_zero_block(l in arb_line(64)) {
        let pp = CpackParams::default();
        let po = CpackParams { codes: CodeTable::Original, ..pp };
        let a = compress(&pp, &l).unwrap();
        let b = compress(&po, &l).unwrap();
        let full = b.tokens.iter().filter(|t| t.pattern == CpackPattern::FullMatch).count();
        if a.tokens[0].pattern == CpackPattern::ZeroBlock {
            prop_assert_eq!(b.stream_bits, 32);
            prop_assert_eq!(a.stream_bits, 2);
        } else {
            prop_assert_eq!(a.stream_bits, b.stream_bits + 2 * full);
        }
    }

    #[test]
    fn truncated_and_corrupt(line in arb_line(64), flip in 0usize..600, cut in 0usize..600) {
        for p in [CpackParams::default(), CpackParams::original(64)] {
            let c = compress(&p, &line).unwrap();
            if c.compressed {
                let dec = |b: &[u8], n| decompress(&p, b, n);
                let pre = |b: &[u8]| decompress_prefix(&p, b);
                prop_assert!(rejects_damage(&c.bits, c.nbits, (cut, flip), dec, pre));
            }
        }
    }
}

/// The size-only path against the token stream, for every code table, push policy,
/// dictionary size, initial dictionary and line size, on lines with many partial matches.
#[test]
fn size_only_matches_tokens_for_every_option() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    for codes in [CodeTable::Paper, CodeTable::Original] {
        for push in [
            PushPolicy::NewOnly,
            PushPolicy::NoFullMatch,
            PushPolicy::AllNonZero,
        ] {
            for dict_entries in [2, 4, 16, 64] {
                for dict_init_zero in [false, true] {
                    for line_bytes in [32, 64, 128] {
                        let p = CpackParams {
                            codes,
                            push,
                            line_bytes,
                            dict_entries,
                            dict_init_zero,
                        };
                        for _ in 0..200 {
                            // Words from a small pool with random low bytes: every match class.
                            let pool: Vec<u32> = (0..4).map(|_| rng.gen()).collect();
                            let words: Vec<u32> = (0..line_bytes / 4)
                                .map(|_| match rng.gen_range(0..6) {
                                    0 => 0,
                                    1 => rng.gen_range(1..256),
                                    2 => pool[rng.gen_range(0..4)],
                                    3 => pool[rng.gen_range(0..4)] ^ rng.gen_range(0..256),
                                    4 => pool[rng.gen_range(0..4)] ^ rng.gen_range(0..65536),
                                    _ => rng.gen(),
                                })
                                .collect();
                            let line = from_words(&words);
                            let want: usize = tokens(&p, &line)
                                .unwrap()
                                .iter()
                                .map(|t| p.token_bits(t.pattern))
                                .sum::<usize>()
                                .min(p.line_bits());
                            assert_eq!(size_bits(&p, &line).unwrap(), want, "{:?}", p);
                        }
                    }
                }
            }
        }
        let z = CpackParams {
            codes,
            ..CpackParams::default()
        };
        let want = tokens(&z, &[0u8; 64]).unwrap();
        let want: usize = want.iter().map(|t| z.token_bits(t.pattern)).sum();
        assert_eq!(size_bits(&z, &[0u8; 64]).unwrap(), want.min(512));
    }
}
