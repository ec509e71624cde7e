use super::paper::Bench;
use super::*;
use crate::model::bdi::BdiEncoding;
use crate::model::fpc::FpcMode;
use crate::trace::lines::{self, LineProfile};

/// Ratio and Table-VI-style event shares (pattern number → percent) of one algorithm over
/// a set of lines.
fn measure(alg: Alg, ls: &[Vec<u8>], fpc_mode: FpcMode) -> (f64, Vec<(u8, f64)>) {
    let mut raw = 0usize;
    let mut sent = 0usize;
    let mut hist = [0usize; 10];
    let fp = FpcParams::with_mode(fpc_mode);
    let bp = BdiParams::default();
    let cp = CpackParams::default();
    for l in ls {
        raw += 512;
        match alg {
            Alg::Bdi => {
                let e = bdi::classify(&bp, l).unwrap();
                hist[e.table_ii_number() as usize] += 1;
                sent += e.size_bits(64);
            }
            Alg::Fpc => {
                for e in fpc::classify(&fp, l).unwrap().events() {
                    hist[e as usize] += 1;
                }
                sent += fpc::size_bits(&fp, l).unwrap();
            }
            Alg::Cpack => {
                let c = cpack::compress(&cp, l).unwrap();
                for e in c.events() {
                    hist[e as usize] += 1;
                }
                sent += c.nbits;
            }
            Alg::None => unreachable!(),
        }
    }
    let tot: usize = hist.iter().sum();
    let mut shares: Vec<(u8, f64)> = (1..10)
        .filter(|&i| hist[i] > 0)
        .map(|i| (i as u8, 100.0 * hist[i] as f64 / tot as f64))
        .collect();
    shares.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
    (raw as f64 / sent as f64, shares)
}

#[test]
fn calib_print() {
    for b in Bench::ALL {
        let ls = lines::lines(LineProfile::Bench(b), 64, 4000, 1);
        let t5 = b.table_v();
        for (alg, mode) in [
            (Alg::Bdi, FpcMode::PaperSize),
            (Alg::Fpc, FpcMode::PaperSize),
            (Alg::Fpc, FpcMode::Original),
            (Alg::Cpack, FpcMode::PaperSize),
        ] {
            let (r, sh) = measure(alg, &ls, mode);
            let want = t5.ratio(alg);
            println!(
                "{:4} {:6} {:?} ratio {:7.3} want {:6.2} ({:+5.1}%) top {:?} want {:?}",
                b.name(),
                alg.name(),
                mode,
                r,
                want,
                100.0 * (r / want - 1.0),
                sh.iter()
                    .take(4)
                    .map(|(p, s)| format!("{p}:{s:.1}"))
                    .collect::<Vec<_>>(),
                b.table_vi(alg)
                    .iter()
                    .map(|s| format!(
                        "{}:{}{}",
                        s.pattern,
                        if s.less_than { "<" } else { "" },
                        s.pct
                    ))
                    .collect::<Vec<_>>()
            );
        }
    }
}
