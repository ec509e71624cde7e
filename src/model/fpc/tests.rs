//! FPC: every Table II pattern (codes, sizes, classification), the Original stream layout,
//! zero runs, fallback, the PaperSize accounting, round trips and malformed streams.

use super::*;
use crate::model::bits::hex;
use crate::model::bits::rejects_damage;
use crate::model::LineParams;
use crate::trace::lines::arb_line;
use proptest::prelude::*;

fn from_words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn rt(p: &FpcParams, line: &[u8]) -> FpcCompressed {
    let c = compress(p, line).unwrap();
    let coded = crate::model::codec::assert_round_trip(p, line);
    assert_eq!((&coded.bits, coded.nbits), (&c.bits, c.nbits));
    assert_eq!(c.compressed, c.stream_bits < p.line_bits());
    c
}

#[test]
fn table_ii_codes_and_sizes() {
    use FpcPattern::*;
    // (pattern, paper prefix, paper size, original prefix, payload bits)
    let want = [
        (ZeroBlock, Some(0b000), 3, None, 0),
        (ZeroWord, Some(0b001), 3, Some(0b000), 0),
        (RepeatedBytes, Some(0b010), 11, Some(0b110), 8),
        (Sext4, Some(0b011), 7, Some(0b001), 4),
        (Sext8, Some(0b100), 11, Some(0b010), 8),
        (Sext16, Some(0b101), 19, Some(0b011), 16),
        (HalfPadded, Some(0b110), 19, Some(0b100), 16),
        (TwoHalves, Some(0b111), 19, Some(0b101), 16),
        (Uncompressed, None, 32, Some(0b111), 32),
    ];
    for (i, (pat, pp, ps, op, pay)) in want.into_iter().enumerate() {
        assert_eq!(pat.table_ii_number() as usize, i + 1);
        assert_eq!(pat.paper_prefix(), pp, "{pat:?}");
        assert_eq!(pat.paper_size(), ps, "{pat:?}");
        assert_eq!(pat.original_prefix(), op, "{pat:?}");
        assert_eq!(pat.payload_bits(), pay, "{pat:?}");
    }
}

#[test]
fn word_classification() {
    use FpcPattern::*;
    let cases: [(u32, FpcPattern); 22] = [
        (0, ZeroWord),
        (5, Sext4),
        (7, Sext4),
        (0xFFFF_FFF8, Sext4),
        (0xFFFF_FFFF, Sext4),
        (8, Sext8),
        (0xFFFF_FFF7, Sext8),
        (0x7F, Sext8),
        (0xFFFF_FF80, Sext8),
        (0x80, Sext16),
        (0xFFFF_FF7F, Sext16),
        (0x7FFF, Sext16),
        (0xFFFF_8000, Sext16),
        (0xABAB_ABAB, RepeatedBytes),
        (0x0101_0101, RepeatedBytes),
        (0x1234_0000, HalfPadded),
        (0x8000_0000, HalfPadded),
        // the only real tie: N16Z16 and X8N8X8N8 → table order → pattern 7
        (0x007F_0000, HalfPadded),
        (0xFF80_007F, TwoHalves),
        (0x0005_FFF0, TwoHalves),
        (0x0000_8000, Uncompressed),
        (0x1234_5678, Uncompressed),
    ];
    for (w, pat) in cases {
        assert_eq!(classify_word(w), pat, "{w:#010x}");
        assert!(pat.matches(w));
    }
    assert!(FpcPattern::TwoHalves.matches(0x007F_0000));
}

#[test]
fn original_stream_golden() {
    let p = FpcParams::default();
    let w = [
        0,
        0,
        0,
        5,           // 001 0101
        0xFFFF_FF80, // 010 1000_0000
        0x1234,      // 011 halfword
        0x1234_0000, // 100 upper halfword
        0xFF80_007F, // 101 w[23:16] w[7:0]
        0xABAB_ABAB, // 110 byte
        0x1234_5678, // 111 word
        0,
        0,
        0,
        0,
        0,
        0,
    ];
    let c = rt(&p, &from_words(&w));
    assert!(c.compressed);
    assert_eq!(c.nbits, 133);
    assert_eq!(hex(&c.bits), "08aa8062469048d2c03feabe2468acf028");
    let nums: Vec<u8> = c.class.words.iter().map(|x| x.table_ii_number()).collect();
    assert_eq!(nums, [2, 2, 2, 4, 5, 6, 7, 8, 3, 9, 2, 2, 2, 2, 2, 2]);
}

#[test]
fn zero_runs() {
    let p = FpcParams::default();
    // a zero line is two runs of 8: 000 111 000 111
    let c = rt(&p, &[0; 64]);
    assert_eq!((c.nbits, hex(&c.bits)), (12, "1c70".into()));
    assert!(c.class.zero_line);
    assert_eq!(c.class.events(), vec![FpcPattern::ZeroBlock]);
    // 9 zeros then 7 fours: run 8 + run 1 + 7 × 7 bits
    let mut w = [4u32; 16];
    w[..9].fill(0);
    assert_eq!(rt(&p, &from_words(&w)).nbits, 6 + 6 + 7 * 7);
    // alternating zeros: each its own run
    let w: Vec<u32> = (0..16).map(|i| if i % 2 == 0 { 0 } else { 3 }).collect();
    assert_eq!(rt(&p, &from_words(&w)).nbits, 8 * 6 + 8 * 7);
}

#[test]
fn fallback_and_paper_size() {
    let p = FpcParams::default();
    let ps = FpcParams::with_mode(FpcMode::PaperSize);
    let mut w = [0x1234_5678u32; 16];
    // 16 unmatched: Original 560 → raw; paper 512
    let c = rt(&p, &from_words(&w));
    assert!(!c.compressed);
    assert_eq!((c.stream_bits, c.nbits), (560, 512));
    assert_eq!(size_bits(&ps, &from_words(&w)).unwrap(), 512);
    // 15 unmatched + 1 zero: Original 525 + 6 → raw; paper 15·32 + 3 = 483
    w[3] = 0;
    assert_eq!(rt(&p, &from_words(&w)).stream_bits, 531);
    assert_eq!(rt(&p, &from_words(&w)).nbits, 512);
    assert_eq!(size_bits(&ps, &from_words(&w)).unwrap(), 483);
    // 14 unmatched + 2 adjacent zeros: 490 + 6 = 496 → compressed
    w[4] = 0;
    let c = rt(&p, &from_words(&w));
    assert!(c.compressed);
    assert_eq!(c.nbits, 496);
    assert_eq!(size_bits(&ps, &from_words(&w)).unwrap(), 14 * 32 + 6);
    // paper: a zero line is 3 bits; an MT-like line (byte + 4-bit words)
    assert_eq!(size_bits(&ps, &[0; 64]).unwrap(), 3);
    let mt: Vec<u32> = (0..16).map(|i| if i < 3 { 5 } else { 100 }).collect();
    assert_eq!(size_bits(&ps, &from_words(&mt)).unwrap(), 3 * 7 + 13 * 11);
    assert_eq!(rt(&p, &from_words(&mt)).nbits, 3 * 7 + 13 * 11);
    // the paper-size model cannot produce or read a stream
    assert!(matches!(
        compress(&ps, &[0; 64]),
        Err(ModelError::InvalidParam { .. })
    ));
    assert!(decompress(&ps, &[0], 3).is_err());
}

#[test]
fn line_sizes_and_params() {
    for lb in [32usize, 128] {
        let p = FpcParams {
            line_bytes: lb,
            ..FpcParams::default()
        };
        let n = lb / 4;
        assert_eq!(rt(&p, &vec![0; lb]).nbits, 6 * n.div_ceil(8));
        let w: Vec<u32> = (0..n as u32).map(|i| i % 7).collect();
        rt(&p, &from_words(&w));
    }
    let bad = FpcParams {
        line_bytes: 40,
        ..FpcParams::default()
    };
    assert!(size_bits(&bad, &[0; 40]).is_err());
    assert!(matches!(
        size_bits(&FpcParams::default(), &[0; 32]),
        Err(ModelError::BadLineLength { .. })
    ));
}

#[test]
fn malformed_streams() {
    let p = FpcParams::default();
    // zero run of 8 starting at word 12 overruns the line
    let mut b = crate::model::bits::BitWriter::new();
    b.put(0b000_111, 6);
    b.put(0b001_0011, 7);
    b.put(0b001_0011, 7);
    b.put(0b001_0011, 7);
    b.put(0b001_0011, 7);
    b.put(0b000_111, 6);
    let (bits, n) = b.finish();
    assert!(matches!(
        decompress(&p, &bits, n),
        Err(ModelError::Corrupt(_))
    ));
    assert!(decompress(&p, &[], 0).is_err());
    assert!(decompress(&p, &[0x1C], 6).is_err());
    assert!(decompress(&p, &[0x1C, 0x70, 0x00], 12).is_err());
    assert!(decompress(&p, &[0x1C, 0x70], 13).is_err());
    assert!(decompress(&p, &[0x1C, 0x71], 12).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn roundtrip(l32 in arb_line(32), l64 in arb_line(64), l128 in arb_line(128)) {
        for l in [l32, l64, l128] {
            let p = FpcParams { line_bytes: l.len(), ..FpcParams::default() };
            let c = rt(&p, &l);
            // paper accounting never exceeds the line and never beats the zero-line code
            let ps = FpcParams { mode: FpcMode::PaperSize, ..p };
            let s = size_bits(&ps, &l).unwrap();
            prop_assert!((3..=p.line_bits()).contains(&s));
            prop_assert_eq!(c.class.words.len(), l.len() / 4);
        }
    }

    #[test]
    fn truncated_and_corrupt(line in arb_line(64), flip in 0usize..600, cut in 0usize..600) {
        let p = FpcParams::default();
        let c = compress(&p, &line).unwrap();
        if c.compressed {
            let dec = |b: &[u8], n| decompress(&p, b, n);
            let pre = |b: &[u8]| decompress_prefix(&p, b);
            prop_assert!(rejects_damage(&c.bits, c.nbits, (cut, flip), dec, pre));
        }
    }
}
