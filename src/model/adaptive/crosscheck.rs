//! FORMATS §2.6: the per-benchmark pattern mixes of Table VI through the models' size tables
//! against the compression ratios of Table V, three ways:
//!
//! 1. **Arithmetic** (the spec's method, [`paper::table_vi_estimate`]): listed shares, "<x%"
//!    read as x%, renormalised. Pinned per cell, together with the cells that reproduce
//!    Table V at its printed precision and the spec's own reconstructed numbers.
//! 2. **Interval** ([`paper::table_vi_interval`]): the range of ratios any mix consistent
//!    with Table VI's rounding can give; Table V lies inside it for every cell with the
//!    paper's FPC accounting (32-bit unmatched words), and the 35-bit accounting of the
//!    original FPC is refuted by BS.
//! 3. **Calibrated stimulus** ([`crate::trace::lines`] per-benchmark profiles) through the
//!    full models (BDI `Element0`, FPC `PaperSize`, C-Pack+Z paper codes): ratios within 5%
//!    of Table V and the Table VI shares within a few points.
//!
//! Why the arithmetic alone cannot reproduce every cell: Table VI lists only the top three
//! patterns, rounded to whole percent, and up to 5% of the events are unlisted (C-Pack+Z GD
//! and KM); rounding alone moves BDI/BS between 8.74 and 10.41. FPC and C-Pack+Z AES are
//! dominated by the line-level fallback (a line of 34-bit new words is sent raw), which a
//! per-word mix cannot see. See docs/FORMATS.md, "Table V cross-check".

use super::paper::{self, Bench};
use super::Alg;
use crate::model::bdi::{self, BdiEncoding, BdiParams};
use crate::model::cpack::{self, CpackParams};
use crate::model::fpc::{self, FpcMode, FpcParams, FpcPattern};
use crate::trace::lines::{self, LineProfile};

const ALGS: [Alg; 3] = [Alg::Bdi, Alg::Fpc, Alg::Cpack];

fn round_to(x: f64, decimals: u32) -> f64 {
    let m = 10f64.powi(decimals as i32);
    (x * m).round() / m
}

fn reproduces(b: Bench, alg: Alg, x: f64) -> bool {
    let t = b.table_v();
    (round_to(x, t.decimals(alg)) - t.ratio(alg)).abs() < 1e-9
}

fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The event sizes used by the arithmetic are the encoders' sizes.
#[test]
fn event_sizes_are_the_models_sizes() {
    // BDI: one exemplar line per encoding
    let b8 = 0x1000_2000_3000_4000u64;
    let l64 =
        |f: &dyn Fn(u64) -> u64| -> Vec<u8> { (0..8).flat_map(|i| f(i).to_le_bytes()).collect() };
    let w32 = |f: &dyn Fn(u32) -> u32| -> Vec<u8> { words(&(0..16).map(f).collect::<Vec<_>>()) };
    let ex: [(u8, Vec<u8>); 9] = [
        (1, vec![0; 64]),
        (2, l64(&|_| b8)),
        (3, l64(&|i| b8 + i)),
        (4, l64(&|i| b8 + 1000 * i)),
        (5, l64(&|i| b8 + 100_000 * i)),
        (6, w32(&|i| 0x1234_5678 + i)),
        (7, w32(&|i| 0x1234_5678 + 1000 * i)),
        (
            8,
            (0..32u16)
                .flat_map(|i| (0x4000 + 3 * i).to_le_bytes())
                .collect(),
        ),
        (9, w32(&|i| i.wrapping_mul(0x9E37_79B9) | 1 << 31)),
    ];
    for (pat, line) in ex {
        let c = bdi::compress(&BdiParams::default(), &line).unwrap();
        assert_eq!(c.encoding.table_ii_number(), pat);
        assert_eq!(
            paper::event_bits(Alg::Bdi, pat, 32),
            Some((512.0, c.nbits as f64))
        );
    }
    // FPC paper accounting: a line of 16 words of one pattern costs 16 events
    let fp = FpcParams::with_mode(FpcMode::PaperSize);
    let ex: [(u8, u32); 8] = [
        (2, 0),
        (3, 0x5A5A_5A5A),
        (4, 3),
        (5, 100),
        (6, 1000),
        (7, 0x1234_0000),
        (8, 0x0005_FFF0),
        (9, 0x1234_5678),
    ];
    for (pat, w) in ex {
        assert_eq!(fpc::classify_word(w).table_ii_number(), pat);
        let mut line = [w; 16];
        line[0] = 0x7777_0001; // keep the line non-zero (unmatched, 32 bits)
        let n = fpc::size_bits(&fp, &words(&line)).unwrap() as f64;
        let (r, s) = paper::event_bits(Alg::Fpc, pat, 32).unwrap();
        assert_eq!((r, n), (32.0, 15.0 * s + 32.0), "pattern {pat}");
    }
    assert_eq!(
        paper::event_bits(Alg::Fpc, 1, 32),
        Some((512.0, fpc::size_bits(&fp, &[0; 64]).unwrap() as f64))
    );
    assert_eq!(paper::event_bits(Alg::Fpc, 9, 35), Some((32.0, 35.0)));
    assert_eq!(FpcPattern::ZeroBlock.paper_size(), 3);
    // C-Pack+Z: one stream with every pattern (token sizes are checked against the encoder
    // in cpack::tests); the zero line is the 2-bit zero-block event
    let cp = CpackParams::default();
    let c = cpack::compress(
        &cp,
        &words(&[
            0x1234_5678,
            0x1234_5678,
            0x1234_56AB,
            0x1234_ABCD,
            0xFF,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ]),
    )
    .unwrap();
    let sum: f64 = c
        .tokens
        .iter()
        .map(|t| {
            paper::event_bits(Alg::Cpack, t.pattern.table_ii_number(), 32)
                .unwrap()
                .1
        })
        .sum();
    assert_eq!(sum, c.nbits as f64);
    assert_eq!(
        paper::event_bits(Alg::Cpack, 1, 32),
        Some((512.0, cpack::size_bits(&cp, &[0; 64]).unwrap() as f64))
    );
    assert_eq!(paper::event_bits(Alg::Cpack, 8, 32), None);
    assert_eq!(paper::event_bits(Alg::Bdi, 10, 32), None);
}

/// Arithmetic reconstruction (FORMATS §2.6 method), pinned to 3 decimals, indexed
/// `[bench][BDI, FPC, C-Pack+Z]` in `Bench::ALL` order.
const ESTIMATES: [[f64; 3]; 7] = [
    [1.007, 1.193, 1.136],   // AES
    [9.854, 32.522, 36.380], // BS
    [2.401, 1.008, 1.733],   // FIR
    [1.260, 1.383, 1.159],   // GD
    [1.368, 5.656, 6.982],   // KM
    [2.771, 3.103, 2.640],   // MT
    [2.645, 1.025, 1.821],   // SC
];

/// The spec's own §2.6 / §2.2 reconstructions (value, printed decimals) that the arithmetic
/// reproduces.
const SPEC_2_6: [(Bench, Alg, f64, u32); 13] = [
    (Bench::Bs, Alg::Bdi, 9.85, 2),
    (Bench::Fir, Alg::Bdi, 2.40, 2),
    (Bench::Gd, Alg::Bdi, 1.26, 2),
    (Bench::Km, Alg::Bdi, 1.37, 2),
    (Bench::Sc, Alg::Bdi, 2.65, 2),
    (Bench::Mt, Alg::Cpack, 2.64, 2),
    (Bench::Sc, Alg::Cpack, 1.82, 2),
    (Bench::Fir, Alg::Cpack, 1.73, 2),
    (Bench::Gd, Alg::Cpack, 1.16, 2),
    (Bench::Km, Alg::Cpack, 6.98, 2),
    (Bench::Mt, Alg::Fpc, 3.10, 2),
    (Bench::Gd, Alg::Fpc, 1.383, 3),
    (Bench::Sc, Alg::Fpc, 1.025, 3),
];

/// Spec reconstructions that the arithmetic does *not* reproduce: MT/BDI 2.81 reads "<1%" as
/// 0.5% (2.77 here); BS/FPC 31.1 and KM/FPC 5.58 use a zero-block accounting the spec does
/// not state (32.52 and 5.66 here, with a zero line = one 512-bit event, as for C-Pack+Z).
const SPEC_2_6_DIFFERENT: [(Bench, Alg, f64); 3] = [
    (Bench::Mt, Alg::Bdi, 2.81),
    (Bench::Bs, Alg::Fpc, 31.1),
    (Bench::Km, Alg::Fpc, 5.58),
];

#[test]
fn arithmetic_reconstruction() {
    let mut exact = Vec::new();
    for (bi, b) in Bench::ALL.into_iter().enumerate() {
        for (ai, alg) in ALGS.into_iter().enumerate() {
            let e = paper::table_vi_estimate(b, alg, 32);
            assert!(
                (e - ESTIMATES[bi][ai]).abs() < 5e-4,
                "{} {}: {e:.4}",
                b.name(),
                alg.name()
            );
            if reproduces(b, alg, e) {
                exact.push(format!("{}/{}", alg.name(), b.name()));
            }
        }
    }
    // reproduce Table V at its printed precision
    assert_eq!(
        exact,
        [
            "cpack/FIR",
            "bdi/GD",
            "fpc/GD",
            "bdi/KM",
            "fpc/MT",
            "cpack/SC"
        ]
    );
    // agree with the spec's reconstructions, except three
    for (b, alg, want, dec) in SPEC_2_6 {
        let e = paper::table_vi_estimate(b, alg, 32);
        assert!(
            (round_to(e, dec) - want).abs() < 1e-9,
            "{} {}: {e:.4} vs {want}",
            b.name(),
            alg.name()
        );
    }
    for (b, alg, theirs) in SPEC_2_6_DIFFERENT {
        let e = paper::table_vi_estimate(b, alg, 32);
        assert!(
            (e / theirs - 1.0).abs() > 0.01,
            "{} {}",
            b.name(),
            alg.name()
        );
    }
    // §2.2 FPC evidence: 32-bit unmatched words fit GD, 35-bit words do not
    assert!((paper::table_vi_estimate(Bench::Gd, Alg::Fpc, 35) - 1.327).abs() < 5e-4);
    assert!((paper::table_vi_estimate(Bench::Sc, Alg::Fpc, 35) - 0.940).abs() < 5e-4);
}

#[test]
fn table_v_lies_within_table_vi_rounding() {
    for b in Bench::ALL {
        for alg in ALGS {
            let (lo, hi) = paper::table_vi_interval(b, alg, 32);
            let t = b.table_v().ratio(alg);
            let half = 0.5 * 10f64.powi(-(b.table_v().decimals(alg) as i32));
            assert!(
                lo - half <= t && t <= hi + half,
                "{} {}: {t} outside [{lo:.4}, {hi:.4}]",
                b.name(),
                alg.name()
            );
        }
    }
    // the original FPC's 35-bit uncompressed words cannot give BS's 31.68 (max ≈ 31.53)
    let (_, hi) = paper::table_vi_interval(Bench::Bs, Alg::Fpc, 35);
    assert!(hi < 31.68 - 0.005, "{hi}");
}

/// Ratio and Table-VI-style event shares (pattern number → percent) of one algorithm over
/// a set of lines, through the full models.
fn measure(alg: Alg, ls: &[Vec<u8>], fpc_mode: FpcMode) -> (f64, [f64; 10]) {
    let mut sent = 0usize;
    let mut hist = [0usize; 10];
    let fp = FpcParams::with_mode(fpc_mode);
    let bp = BdiParams::default();
    let cp = CpackParams::default();
    for l in ls {
        match alg {
            Alg::Bdi => {
                let e = bdi::classify(&bp, l).unwrap();
                hist[e.table_ii_number() as usize] += 1;
                sent += bdi::size_bits(&bp, l).unwrap();
                debug_assert_eq!(
                    e != BdiEncoding::Uncompressed,
                    bdi::size_bits(&bp, l).unwrap() < 512
                );
            }
            Alg::Fpc => {
                for e in fpc::classify(&fp, l).unwrap().events() {
                    hist[e as usize] += 1;
                }
                sent += fpc::size_bits(&fp, l).unwrap();
            }
            Alg::Cpack => {
                for t in cpack::tokens(&cp, l).unwrap() {
                    hist[t.pattern as usize] += 1;
                }
                sent += cpack::size_bits(&cp, l).unwrap();
            }
            Alg::None => unreachable!(),
        }
    }
    let tot: usize = hist.iter().sum();
    let mut pct = [0f64; 10];
    for (p, h) in pct.iter_mut().zip(hist) {
        *p = 100.0 * h as f64 / tot as f64;
    }
    ((ls.len() * 512) as f64 / sent as f64, pct)
}

#[test]
fn calibrated_profiles_reproduce_table_v() {
    let mut report = String::new();
    for b in Bench::ALL {
        let ls = lines::lines(LineProfile::Bench(b), 64, 6000, 2019);
        for alg in ALGS {
            let (r, pct) = measure(alg, &ls, FpcMode::PaperSize);
            let want = b.table_v().ratio(alg);
            let dev = r / want - 1.0;
            let orig = if alg == Alg::Fpc {
                format!(
                    " [Original mode {:.3}]",
                    measure(alg, &ls, FpcMode::Original).0
                )
            } else {
                String::new()
            };
            report += &format!(
                "{:3} {:5} CR {:7.3} (Table V {:6.2}, {:+5.1}%){orig} shares {}\n",
                b.name(),
                alg.name(),
                r,
                want,
                100.0 * dev,
                b.table_vi(alg)
                    .iter()
                    .map(|s| format!(
                        "{}:{:.1}/{}{}",
                        s.pattern,
                        pct[s.pattern as usize],
                        if s.less_than { "<" } else { "" },
                        s.pct
                    ))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            assert!(
                dev.abs() <= 0.05,
                "{} {}: {r:.3} vs {want}",
                b.name(),
                alg.name()
            );
            let vi = b.table_vi(alg);
            // the top pattern is the paper's, and every listed share is within 6 points
            let top = (1..10).max_by(|&i, &j| pct[i].total_cmp(&pct[j])).unwrap();
            assert_eq!(top as u8, vi[0].pattern, "{} {}", b.name(), alg.name());
            for s in vi {
                let m = pct[s.pattern as usize];
                let ok = if s.less_than {
                    m <= s.pct + 1.0
                } else {
                    (m - s.pct).abs() <= 6.0
                };
                assert!(
                    ok,
                    "{} {} pattern {}: {m:.1}% vs {}",
                    b.name(),
                    alg.name(),
                    s.pattern,
                    s.pct
                );
            }
        }
    }
    println!("{report}");
}
