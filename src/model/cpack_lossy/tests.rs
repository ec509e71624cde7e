use super::fp::{self, RestoreFill, TruncLayout};
use super::mc::{reqsize, Mc, McParams, McRequest, Timing};
use super::*;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn block_of(words: &[u32]) -> Vec<u8> {
    let mut w = words.to_vec();
    w.resize(32, 0);
    le_bytes(&w)
}

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

/// §2.7: tokens, L = 178, N = 2 and the chunk bytes.
#[test]
fn golden_vector_of_section_2_7() {
    let p = LossyParams::default();
    use crate::model::cpack::golden;
    let blk = block_of(&golden::WORDS);
    let b = compress(&p, &blk, 0).unwrap();
    let pats: Vec<_> = patterns(&b).take(8).collect();
    assert_eq!(pats[..7], golden::PATTERNS);
    assert_eq!(pats[7], CpackPattern::ZeroWord);
    let pushed: Vec<_> = b.tokens[..7].iter().map(|t| t.pushed).collect();
    assert_eq!(pushed, golden::PUSHED);
    assert_eq!(
        b.tokens[5].index, 0,
        "mmxx tie between slots 0 and 1: lowest"
    );
    assert_eq!(b.stream_bits, 178);
    assert_eq!(
        b.md,
        MdEntry {
            c: true,
            n: 2,
            tcode: 0
        }
    );
    let mut want = hex("37 FD 12 34 56 78 83 82 AF 02 AF 35 DE AD BE EF");
    want.resize(32, 0);
    assert_eq!(b.chunks, want);
    assert_eq!(b.md.encode(4), 0b1001);
    assert_eq!(b.md.encode(8), 0b1001_0000);
    assert_eq!(decompress(&p, b.md, &b.chunks, Check::Strict).unwrap(), blk);
}

/// §2.7's other reference sizes.
#[test]
fn reference_sizes_of_section_2_7() {
    let p = LossyParams::default();
    let lz = |w: Vec<u32>| {
        let b = compress(&p, &le_bytes(&w), 0).unwrap();
        (b.stream_bits, b.md.n, b.md.c)
    };
    assert_eq!(lz(vec![0; 32]), (64, 1, true));
    assert_eq!(lz((0..32).collect()), (374, 3, true));
    assert_eq!(lz((1000..1032).collect()), (538, 5, true));
    assert_eq!(lz(vec![1.0f32.to_bits(); 32]), (220, 2, true));
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert_eq!(lz((0..32).map(|_| rng.gen()).collect()).1, 8);
    assert!(!lz((0..32).map(|i| (i as f32).to_bits()).collect()).2);
    let u: Vec<u32> = (0..32).map(|_| rng.gen::<f32>().to_bits()).collect();
    let (l, n, c) = lz(u);
    assert!(l > 1024 && n == 8 && !c);
}

/// Random structured blocks (zero, narrow, new, near-duplicate words) until one of each
/// stream length in `want` is found: (L, block) pairs.
fn blocks_with_lengths(p: &LossyParams, want: &[usize]) -> Vec<(usize, Vec<u8>)> {
    blocks_with_lengths_t(p, 0, want)
}

/// [`blocks_with_lengths`] for truncation code `tcode` (packed layout): the structured words
/// are the ones C-Pack sees, and the block holds them as its words' top `32 − t` bits.
fn blocks_with_lengths_t(p: &LossyParams, tcode: u8, want: &[usize]) -> Vec<(usize, Vec<u8>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(7 + tcode as u64);
    let mut found = std::collections::BTreeMap::new();
    for _ in 0..200_000 {
        // Mostly new words, so that L spans 800..1088 bits at t = 0.
        let w = structured_words(p.cpack_words(tcode), &mut rng);
        let blk = block_of_cpack_words(p, tcode, &w);
        let l = compress(p, &blk, tcode).unwrap().stream_bits;
        if want.contains(&l) {
            found.entry(l).or_insert(blk);
        }
        if found.len() == want.len() {
            break;
        }
    }
    assert_eq!(found.len(), want.len(), "found only {:?}", found.keys());
    found.into_iter().collect()
}

/// §2.4: compressed iff ceil(L/8) < 128 (L ≤ 1016, N = 8 allowed), else raw with N = 8;
/// `raw_if_n_eq_raw` stores N = 8 raw. Token lengths are even with a 16-entry dictionary,
/// so the odd lengths 1017 and 1025 are reached with 32 entries (5-bit indices).
#[test]
fn chunking_boundaries_1016_1017_1024_1025() {
    let raw8 = LossyParams {
        raw_if_n_eq_raw: true,
        ..LossyParams::default()
    };
    let d32 = LossyParams {
        dict_entries: 32,
        ..LossyParams::default()
    };
    for (p, want) in [
        (
            LossyParams::default(),
            vec![896, 1014, 1016, 1018, 1024, 1026],
        ),
        (d32, vec![1015, 1016, 1017, 1024, 1025]),
    ] {
        for (l, blk) in blocks_with_lengths(&p, &want) {
            let b = compress(&p, &blk, 0).unwrap();
            assert_eq!(b.md.c, l <= 1016, "L = {l}");
            assert_eq!(b.md.n as usize, if l <= 1016 { l.div_ceil(128) } else { 8 });
            assert_eq!(decompress(&p, b.md, &b.chunks, Check::Strict).unwrap(), blk);
            if p.dict_entries == 16 {
                let r = compress(&raw8, &blk, 0).unwrap();
                assert_eq!(r.md.c, l <= 896, "raw_if_n_eq_raw, L = {l}");
            }
        }
    }
}

/// Whether `n` C-Pack tokens can add up to `l` bits (sums of the word patterns' token
/// lengths; with 16 words, 510 bits cannot: 14 new words leave 34 bits for two tokens).
fn reachable(p: &LossyParams, n: usize, l: usize) -> bool {
    let cp = p.cpack();
    let lens: Vec<usize> = cpack::CpackPattern::WORD_PATTERNS
        .iter()
        .map(|&pat| cp.token_bits(pat))
        .collect();
    let mut sums = vec![false; l + 1];
    sums[0] = true;
    for _ in 0..n {
        let mut next = vec![false; l + 1];
        for (s, _) in sums.iter().enumerate().filter(|(_, &r)| r) {
            for &k in &lens {
                if s + k <= l {
                    next[s + k] = true;
                }
            }
        }
        sums = next;
    }
    sums[l]
}

/// §2.6: a truncated block is stored compressed iff its stream is shorter than the truncated
/// raw block in bits, `L < 32(32 − t)` at 128 B; the `bytes` fallback keeps the lossless byte
/// rule (`L ≤ 32(32 − t) − 8`). Blocks at L = 32(32 − t) − 6 ... 32(32 − t) for every t
/// (odd lengths with a 32-entry dictionary) decode to the truncated words either way.
#[test]
fn lossy_fallback_bit_rule_at_the_boundary() {
    let d32 = LossyParams {
        dict_entries: 32,
        ..LossyParams::default()
    };
    for p in [LossyParams::default(), d32] {
        let bytes = LossyParams {
            lossy_fallback: fp::LossyFallback::Bytes,
            ..p.clone()
        };
        for tcode in 1..4u8 {
            let raw = p.raw_bits(tcode);
            let want: Vec<usize> = (raw - 6..=raw)
                .filter(|&l| reachable(&p, p.cpack_words(tcode), l))
                .collect();
            assert!(want.len() >= 3, "t = {}: {want:?}", p.t_of(tcode));
            for (l, blk) in blocks_with_lengths_t(&p, tcode, &want) {
                let b = compress(&p, &blk, tcode).unwrap();
                assert_eq!(b.stream_bits, l);
                assert_eq!(b.md.c, l < raw, "t = {}, L = {l}", p.t_of(tcode));
                let n = if l < raw {
                    l.div_ceil(128)
                } else {
                    p.raw_chunks_t(tcode)
                };
                assert_eq!(b.md.n as usize, n, "L = {l}");
                let got = decompress(&p, b.md, &b.chunks, Check::Strict).unwrap();
                assert_eq!(got, expected_roundtrip(&p, &blk, tcode), "L = {l}");
                let old = compress(&bytes, &blk, tcode).unwrap();
                assert_eq!(old.md.c, l + 8 <= raw, "bytes rule, L = {l}");
                let got = decompress(&bytes, old.md, &old.chunks, Check::Strict).unwrap();
                assert_eq!(
                    got,
                    expected_roundtrip(&p, &blk, tcode),
                    "bytes rule, L = {l}"
                );
            }
        }
    }
    // Lossless blocks keep the byte rule whatever the fallback (§2.4).
    let p = LossyParams::default();
    assert_eq!(p.max_compressed_bits(0), 1016);
    assert_eq!(
        [1, 2, 3].map(|tc| p.max_compressed_bits(tc)),
        [767, 639, 511]
    );
}

/// §2.3 step 4: the dictionary wraps after 16 pushes (slot = pushes mod 16), and a word
/// matching an overwritten entry is a new word again.
#[test]
fn dictionary_wraps_after_sixteen_pushes() {
    let p = LossyParams::default();
    let w: Vec<u32> = (0..17)
        .map(|i| 0x1000_0000 + i * 0x0100_0000)
        .chain([0x1000_0000, 0x1200_0000])
        .collect();
    let blk = block_of(&w);
    let b = compress(&p, &blk, 0).unwrap();
    assert_eq!(b.tokens[16].pushed, Some(0), "17th push wraps to slot 0");
    assert_eq!(
        b.tokens[17].pattern,
        CpackPattern::NewWord,
        "slot 0 was overwritten"
    );
    assert_eq!(b.tokens[18].pattern, CpackPattern::FullMatch);
    assert_eq!(b.tokens[18].index, 2);
    assert_eq!(decompress(&p, b.md, &b.chunks, Check::Strict).unwrap(), blk);
}

#[test]
fn md_entries_encode_and_decode() {
    let p = LossyParams::default();
    for c in [false, true] {
        for n in 1..=8u8 {
            for tcode in 0..4u8 {
                let e = MdEntry { c, n, tcode };
                let d = MdEntry::decode(&p, e.encode(8));
                assert_eq!(d.c, c);
                assert_eq!(d.tcode, tcode);
                assert_eq!(d.n, if c { n } else { p.raw_chunks_t(tcode) as u8 });
            }
        }
    }
    assert_eq!(MdEntry::decode(&p, 0).n, 8, "zeroed MD: raw, t = 0");
    let l = LossyParams {
        md_bits: 4,
        ..LossyParams::default()
    };
    assert_eq!(MdEntry::decode(&l, 0b1101).n, 6);
    assert_eq!(l.md_per_line(), 256);
    assert_eq!(p.md_per_line(), 128);
    assert!(
        compress(&l, &[0; 128], 1).is_err(),
        "4-bit entries hold no tcode"
    );
}

#[test]
fn parameters_are_checked() {
    let bad = [
        LossyParams {
            t_table: [8, 8, 12, 16],
            ..LossyParams::default()
        },
        LossyParams {
            t_table: [0, 8, 12, 24],
            ..LossyParams::default()
        },
        LossyParams {
            md_bits: 6,
            ..LossyParams::default()
        },
        LossyParams {
            block_bytes: 96,
            ..LossyParams::default()
        },
        LossyParams {
            dict_entries: 12,
            ..LossyParams::default()
        },
    ];
    for p in bad {
        assert!(p.validate().is_err(), "{p:?}");
        assert!(compress(&p, &vec![0; p.block_bytes], 0).is_err());
    }
    // 32 B blocks: t = 12 gives 8 x 20 = 160 bits = 5 words.
    let small = LossyParams {
        block_bytes: 32,
        ..LossyParams::default()
    };
    assert!(small.validate().is_ok());
    assert_eq!(small.cpack_words(2), 5);
    assert_eq!(small.raw_chunks_t(2), 2);
}

#[test]
fn pack_and_unpack_are_inverse() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for t in [0, 8, 12, 16, 20, 23] {
        let w: Vec<u32> = (0..32).map(|_| rng.gen()).collect();
        let packed = fp::pack(&w, t);
        assert_eq!(packed.len(), (32 * (32 - t) as usize).div_ceil(32));
        let back = fp::unpack(&packed, t, 32);
        assert_eq!(
            back,
            w.iter().map(|&x| x >> t).collect::<Vec<_>>(),
            "t = {t}"
        );
    }
    // Field order: word 0's field first, MSB-first.
    assert_eq!(
        fp::pack(&[0xABCD_EF12, 0x3456_7890, 0, 0], 8)[0],
        0xABCD_EF34
    );
}

/// §2.1's lossy example: t = 8 shrinks 128 B to 96 B of packed words; C-Pack then runs on 24
/// words with a fresh dictionary.
#[test]
fn lossy_blocks_round_trip_to_trunc_t() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for layout in [TruncLayout::Packed, TruncLayout::Shifted] {
        let p = LossyParams {
            layout,
            ..LossyParams::default()
        };
        for tcode in 0..4u8 {
            for class in 0..4 {
                let w: Vec<u32> = (0..32)
                    .map(|i| match class {
                        0 => (300.0f32 + rng.gen::<f32>()).to_bits(),
                        1 => rng.gen::<f32>().to_bits(),
                        2 => (i as f32).to_bits(),
                        _ => rng.gen(),
                    })
                    .collect();
                let blk = le_bytes(&w);
                let b = compress(&p, &blk, tcode).unwrap();
                assert!(
                    b.md.n as usize <= p.raw_chunks_t(tcode),
                    "never above truncated raw"
                );
                let got = decompress(&p, b.md, &b.chunks, Check::Strict).unwrap();
                assert_eq!(got, expected_roundtrip(&p, &blk, tcode));
                let t = p.t_of(tcode);
                for (x, y) in le_words(&blk).iter().zip(le_words(&got)) {
                    assert_eq!(y, fp::trunc(*x, t));
                    fp::check_bound(*x, y, t).unwrap();
                }
            }
        }
    }
}

/// The truncated-raw fallback: uniform [0,1) floats at t = 8 do not compress below 768 bits
/// with the packed layout and are stored as 6 chunks of packed words.
#[test]
fn truncated_raw_fallback() {
    let p = LossyParams::default();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut raw = 0;
    for _ in 0..200 {
        let w: Vec<u32> = (0..32).map(|_| rng.gen::<f32>().to_bits()).collect();
        let b = compress(&p, &le_bytes(&w), 1).unwrap();
        if !b.md.c {
            raw += 1;
            assert_eq!(b.md.n, 6);
            assert_eq!(b.chunks, le_bytes(&fp::pack(&w, 8)));
        }
    }
    assert!(raw > 150, "{raw} of 200 blocks fell back to truncated raw");
}

/// §2.6: smooth FP (300 + N(0,1)) at t = 8: the shifted layout needs fewer chunks than the
/// packed one, which needs fewer than lossless (the spec's 6.97 / 6.04 / 4.97).
#[test]
fn layouts_on_smooth_fp() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let blocks: Vec<Vec<u8>> = (0..200)
        .map(|_| {
            let w: Vec<u32> = (0..32)
                .map(|_| {
                    let g: f64 = (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0;
                    ((300.0 + g) as f32).to_bits()
                })
                .collect();
            le_bytes(&w)
        })
        .collect();
    let mean_n = |layout, tcode| {
        let p = LossyParams {
            layout,
            ..LossyParams::default()
        };
        blocks
            .iter()
            .map(|b| compress(&p, b, tcode).unwrap().md.n as f64)
            .sum::<f64>()
            / blocks.len() as f64
    };
    let lossless = mean_n(TruncLayout::Packed, 0);
    let a = mean_n(TruncLayout::Packed, 1);
    let b = mean_n(TruncLayout::Shifted, 1);
    eprintln!("smooth FP mean N: lossless {lossless:.2}, packed {a:.2}, shifted {b:.2}");
    assert!(lossless > a && a > b, "{lossless} {a} {b}");
}

#[test]
fn special_values_under_truncation() {
    for t in [8, 12, 16] {
        let cases = [
            (f32::INFINITY.to_bits(), f32::INFINITY.to_bits()),
            (f32::NEG_INFINITY.to_bits(), f32::NEG_INFINITY.to_bits()),
            (0x7FC0_0000, 0x7FC0_0000),          // quiet NaN stays NaN
            (0x7F80_0001, 0x7F80_0000),          // payload only in dropped bits: Inf
            (0x8000_0000, 0x8000_0000),          // -0
            (0x0000_1234, fp::trunc(0x1234, t)), // denormal
            (f32::MAX.to_bits(), fp::trunc(f32::MAX.to_bits(), t)),
            (f32::MIN_POSITIVE.to_bits(), f32::MIN_POSITIVE.to_bits()),
        ];
        for (x, want) in cases {
            let got = fp::restore(x >> t, t, RestoreFill::Zero);
            assert_eq!(got, want, "{x:#x} t = {t}");
            fp::check_bound(x, got, t).unwrap();
            let mid = fp::restore(x >> t, t, RestoreFill::Midpoint);
            fp::check_bound(x, mid, t).unwrap();
        }
    }
    // The bound check can fail.
    assert!(fp::check_bound(1.0f32.to_bits(), 1.5f32.to_bits(), 8).is_err());
    assert!(fp::check_bound(1.0f32.to_bits(), (-1.0f32).to_bits(), 8).is_err());
    assert!(fp::check_bound(f32::INFINITY.to_bits(), 0x7FC0_0000, 8).is_err());
}

#[test]
fn error_stats_normalizations() {
    let x = [1.0, 2.0, 3.0, 4.0];
    let y = [1.0, 2.0, 3.0, 6.0];
    let s = fp::error_stats(&x, &y);
    assert_eq!(s.n, 4);
    assert!((s.rmse - 1.0).abs() < 1e-12);
    assert!((s.nrmse_range - 1.0 / 3.0).abs() < 1e-12);
    assert!((s.nrmse_mean - 0.4).abs() < 1e-12);
    assert!((s.max_rel - 0.5).abs() < 1e-12);
}

#[test]
fn corrupt_chunks_are_errors_never_panics() {
    let p = LossyParams::default();
    // Illegal code 1111 at the start.
    let mut c = vec![0u8; 16];
    c[0] = 0xF0;
    let e = MdEntry {
        c: true,
        n: 1,
        tcode: 0,
    };
    assert!(decompress(&p, e, &c, Check::Hardware).is_err());
    // Overrun: 32 new words do not fit in 2 chunks.
    let e2 = MdEntry {
        c: true,
        n: 2,
        tcode: 0,
    };
    assert!(decompress(&p, e2, &[0x55; 32], Check::Hardware).is_err());
    // Truncated chunk data.
    assert!(decompress(&p, e2, &[0; 20], Check::Hardware).is_err());
    // Strict: a stream that ends in chunk 0 of a 2-chunk block.
    let zero = compress(&p, &[0; 128], 0).unwrap();
    let mut two = zero.chunks.clone();
    two.resize(32, 0);
    assert!(decompress(&p, e2, &two, Check::Hardware).is_ok());
    assert!(decompress(&p, e2, &two, Check::Strict).is_err());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..20_000 {
        let md = MdEntry::decode(&p, rng.gen_range(0..256));
        let data: Vec<u8> = (0..rng.gen_range(0..140)).map(|_| rng.gen()).collect();
        let _ = decompress(&p, md, &data, Check::Hardware);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn any_block_round_trips(
        words in proptest::collection::vec(
            prop_oneof![Just(0u32), 0u32..256, any::<u32>(), (0u32..4).prop_map(|k| 0x4000_0000 | k)],
            32),
        tcode in 0u8..4,
        shifted in any::<bool>(),
        raw8 in any::<bool>(),
    ) {
        let p = LossyParams {
            layout: if shifted { TruncLayout::Shifted } else { TruncLayout::Packed },
            raw_if_n_eq_raw: raw8,
            ..LossyParams::default()
        };
        let blk = le_bytes(&words);
        let b = compress(&p, &blk, tcode).unwrap();
        prop_assert_eq!(b.chunks.len(), b.md.n as usize * CHUNK_BYTES);
        let e = MdEntry::decode(&p, b.md.encode(p.md_bits));
        prop_assert_eq!(e, b.md);
        let got = decompress(&p, e, &b.chunks, Check::Strict).unwrap();
        prop_assert_eq!(got, expected_roundtrip(&p, &blk, tcode));
    }
}

// ---- memory-side models ----

fn full(v: u8) -> Vec<u8> {
    vec![v; 128]
}

#[test]
fn reqsize_is_n_on_a_hit_and_8_pending_on_a_miss() {
    let p = LossyParams::default();
    let e = MdEntry {
        c: true,
        n: 3,
        tcode: 0,
    };
    let h = reqsize(&p, Some(e));
    assert_eq!((h.nchunks, h.md_pending), (3, false));
    let m = reqsize(&p, None);
    assert_eq!((m.nchunks, m.md_pending), (8, true));
}

/// §3.2: a 2-chunk block takes 1/4 of the bandwidth and about 2/3 of the latency of an
/// uncompressed fetch.
#[test]
fn latency_example_of_section_3_2() {
    let t = Timing::default();
    let raw = t.read(8, 8, true, 0);
    let two = t.read(2, 2, false, 0);
    assert_eq!(raw, 16);
    assert_eq!(two, 10);
    let r = two as f64 / raw as f64;
    assert!((0.6..0.7).contains(&r), "{r}");
    // A compressed N = 8 block is slower than raw: why raw_if_n_eq_raw exists.
    assert!(t.read(8, 8, false, 0) > raw);
}

#[test]
fn mc_reads_writes_rmw_and_bypass() {
    let mut mc = Mc::new(&McParams::default()).unwrap();
    // Unwritten blocks read as zeros (raw, t = 0), after an MD miss fetching 8 chunks.
    let r = mc.request(&McRequest::Read { blk: 5 }).unwrap();
    assert_eq!(r.data.as_deref(), Some(&full(0)[..]));
    assert!(!r.md_hit);
    assert_eq!(r.chunks, 8);
    // A full write of a zero block: 1 chunk; the next read hits and moves 1 chunk.
    mc.request(&McRequest::Write {
        blk: 5,
        data: full(0),
        mask: u128::MAX,
        tcode: None,
    })
    .unwrap();
    let r = mc.request(&McRequest::Read { blk: 5 }).unwrap();
    assert!(r.md_hit);
    assert_eq!(r.chunks, 1);
    // A DMA copy tagged t = 8, then a partial SM write: the RMW keeps t = 8 (sticky).
    let f: Vec<u8> = (0..32)
        .flat_map(|i| (1.0f32 + i as f32 / 7.0).to_bits().to_le_bytes())
        .collect();
    mc.request(&McRequest::Write {
        blk: 300,
        data: f.clone(),
        mask: u128::MAX,
        tcode: Some(1),
    })
    .unwrap();
    assert_eq!(mc.md_entry(300).tcode, 1);
    let mut upd = f.clone();
    upd[0..4].copy_from_slice(&3.25f32.to_bits().to_le_bytes());
    let w = mc
        .request(&McRequest::Write {
            blk: 300,
            data: upd.clone(),
            mask: 0xF,
            tcode: None,
        })
        .unwrap();
    assert!(w.chunks > 1);
    let got = mc
        .request(&McRequest::Read { blk: 300 })
        .unwrap()
        .data
        .unwrap();
    let p = LossyParams::default();
    assert_eq!(got, expected_roundtrip(&p, &upd, 1));
    assert_eq!(mc.md_entry(300).tcode, 1);
    assert!(mc
        .request(&McRequest::Write {
            blk: 300,
            data: upd,
            mask: 0xF,
            tcode: Some(2),
        })
        .is_err());
    // Local traffic bypasses MD and compression.
    let before = mc.md_stats();
    mc.request(&McRequest::LocalWrite {
        blk: 5,
        data: full(7),
    })
    .unwrap();
    let l = mc.request(&McRequest::LocalRead { blk: 5 }).unwrap();
    assert_eq!(l.data.unwrap(), full(7));
    assert_eq!(mc.md_stats(), before);
    assert_eq!(
        mc.request(&McRequest::Read { blk: 5 })
            .unwrap()
            .data
            .unwrap(),
        full(0)
    );
    let s = mc.stats();
    assert_eq!((s.reads, s.full_writes, s.rmw, s.local), (4, 2, 1, 2));
}

/// MD lines are evicted and written back; the entries survive in the MD region.
#[test]
fn mc_md_entries_survive_eviction() {
    let p = McParams::default();
    let per_line = p.codec.md_per_line();
    let mut mc = Mc::new(&p).unwrap();
    // 3 blocks in 3 MD lines mapping to one set (16 sets): the first is evicted.
    let blks: Vec<u64> = (0..3).map(|i| i * 16 * per_line).collect();
    for &b in &blks {
        mc.request(&McRequest::Write {
            blk: b,
            data: full(0),
            mask: u128::MAX,
            tcode: None,
        })
        .unwrap();
    }
    assert_eq!(mc.md_stats().evictions, 1);
    assert_eq!(mc.stats().md_line_writes, 1);
    for &b in &blks {
        let r = mc.request(&McRequest::Read { blk: b }).unwrap();
        assert_eq!(r.chunks as usize, if r.md_hit { 1 } else { 8 });
        assert_eq!(r.data.unwrap(), full(0));
        assert_eq!(mc.md_entry(b).n, 1);
    }
    mc.flush();
}

/// §4.2's coverage arithmetic: 256 blocks (32 KB) per MD line, 1 MB per MC with 4-bit
/// entries; half that with the 8-bit lossy entries.
#[test]
fn md_coverage_arithmetic() {
    let mut p = McParams::default();
    assert_eq!(p.bytes_per_md_line(), 16 * 1024);
    assert_eq!(p.md_coverage_bytes(), 512 * 1024);
    p.codec.md_bits = 4;
    p.md_cache.field_bits = 4;
    assert_eq!(p.bytes_per_md_line(), 32 * 1024);
    assert_eq!(p.md_coverage_bytes(), 1024 * 1024);
    p.md_cache.field_bits = 8;
    assert!(Mc::new(&p).is_err());
}

/// §5 item 9: kernels on truncated inputs: every input within the bound, output NRMSE
/// growing with t, exactly 0 at t = 0, and within the paper's band (≤ 1e-3) at t = 8.
#[test]
fn kernel_accuracy_under_truncation() {
    use super::kernels::{accuracy, Kernel};
    let p = LossyParams::default();
    for k in Kernel::ALL {
        let mut last = -1.0;
        for tcode in 0..4u8 {
            let r = accuracy(&p, k, tcode, 1).unwrap();
            eprintln!(
                "{:>14} t={:>2}: inputs {} max rel {:.2e}, output NRMSE {:.2e} (range) {:.2e} (mean)",
                r.kernel, r.t, r.inputs, r.input_max_rel, r.output.nrmse_range, r.output.nrmse_mean
            );
            assert!(r.input_max_rel < 2f64.powi(r.t as i32 - 23));
            if tcode == 0 {
                assert_eq!(r.output.rmse, 0.0);
            }
            if r.t == 8 {
                assert!(r.output.nrmse_range < 1e-3, "{}", r.kernel);
            }
            assert!(r.output.nrmse_range >= last, "{}", r.kernel);
            last = r.output.nrmse_range;
        }
    }
}
