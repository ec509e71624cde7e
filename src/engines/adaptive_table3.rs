//! The adaptive engine's compressor/decompressor pairs beside the paper's Table III (Tavana et
//! al., IPDPS'19; docs/FORMATS.md, adaptive §3): the paper's areas are scaled to
//! 7 nm (constant-voltage scaling from 65/45/32 nm designs), so they are compared in kGE, with
//! a 7 nm NAND2 of [`NAND2_7NM_UM2`] (our assumption, stated in the table).

use crate::model::adaptive::Alg;
use crate::synth::ReportRow;

/// Area of a 7 nm NAND2 used to turn the paper's µm² into kGE (our assumption: the order of
/// a small two-input NAND of a 7 nm predictive library such as ASAP7, 7.5 tracks).
pub const NAND2_7NM_UM2: f64 = 0.0875;

/// The paper's Table III row of `alg`: (compress cycles, decompress cycles, area µm² at 7 nm).
pub fn paper(alg: Alg) -> Option<(u32, u32, f64)> {
    match alg {
        Alg::Bdi => Some((2, 1, 162.0)),
        Alg::Fpc => Some((3, 5, 4428.0)),
        Alg::Cpack => Some((16, 9, 766.0)),
        Alg::None => None,
    }
}

fn unit_prefix(alg: Alg) -> &'static str {
    match alg {
        Alg::Bdi => "bdi",
        Alg::Fpc => "fpc",
        Alg::Cpack => "cpack",
        Alg::None => "none",
    }
}

fn scheme(alg: Alg) -> &'static str {
    match alg {
        Alg::Bdi => "BDI",
        Alg::Fpc => "FPC",
        Alg::Cpack => "C-Pack+Z",
        Alg::None => "none",
    }
}

/// Markdown table of every (compressor, decompressor) pair found in `rows` (engine
/// `adaptive`, units `<alg>_comp` and `<alg>_decomp` on the same library) beside Table III;
/// empty when there is none. Latencies are as measured (the accepting cycle counted).
pub fn markdown(rows: &[ReportRow]) -> String {
    let mut libs: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.engine == "adaptive") {
        if !libs.contains(&r.result.liberty.as_str()) {
            libs.push(&r.result.liberty);
        }
    }
    let find = |unit: &str, lib: &str| {
        rows.iter()
            .find(|r| r.engine == "adaptive" && r.unit == unit && r.result.liberty == lib)
    };
    let mut body = String::new();
    for alg in [Alg::Bdi, Alg::Fpc, Alg::Cpack] {
        let Some((pc, pd, pa)) = paper(alg) else {
            continue;
        };
        let pk = pa / NAND2_7NM_UM2 / 1000.0;
        for lib in &libs {
            let pre = unit_prefix(alg);
            let (Some(c), Some(d)) = (
                find(&format!("{pre}_comp"), lib),
                find(&format!("{pre}_decomp"), lib),
            ) else {
                continue;
            };
            let lat = |r: &ReportRow| r.latency_cycles.map_or("–".into(), |l| l.to_string());
            let kge = c.result.kge + d.result.kge;
            body.push_str(&format!(
                "| {} | {} | {:.0} | {:.0} | {:.1} | {:.0} / {:.0} | {} / {} | {} / {} | {:.0} | {:.1} | {:.1}× |\n",
                scheme(alg),
                lib,
                c.result.area_um2,
                d.result.area_um2,
                kge,
                c.result.fmax_mhz,
                d.result.fmax_mhz,
                lat(c),
                lat(d),
                pc,
                pd,
                pa,
                pk,
                kge / pk,
            ));
        }
    }
    if body.is_empty() {
        return String::new();
    }
    format!(
        "Paper kGE = paper µm² (7 nm) / {NAND2_7NM_UM2} µm² per NAND2 (our assumption). Our \
         latencies count the accepting cycle (a unit with k register stages reports k + 1).\n\n\
         | Scheme | Library | comp µm² | decomp µm² | comp + decomp kGE | Fmax MHz comp / decomp | \
         latency cycles comp / decomp | paper cycles | paper µm² (7 nm) | paper kGE | ours / paper |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n{body}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::SynthResult;

    fn row(unit: &str, lib: &str, area: f64, kge: f64, lat: u32) -> ReportRow {
        ReportRow {
            engine: "adaptive".into(),
            unit: unit.into(),
            params: String::new(),
            latency_cycles: Some(lat),
            throughput_bytes_per_cycle: None,
            result: SynthResult {
                liberty: lib.into(),
                area_um2: area,
                kge,
                fmax_mhz: 700.0,
                ..SynthResult::default()
            },
        }
    }

    #[test]
    fn pairs_are_compared_with_table_iii() {
        let rows = vec![
            row("bdi_comp", "nangate45", 28994.0, 36.3, 3),
            row("bdi_decomp", "nangate45", 20275.0, 25.4, 2),
            row("ctrl", "nangate45", 1068.0, 1.34, 2),
            row("fpc_comp", "osu018", 1.0, 1.0, 4),
        ];
        let t = markdown(&rows);
        assert!(
            t.contains("| BDI | nangate45 | 28994 | 20275 | 61.7 |"),
            "{t}"
        );
        assert!(t.contains("| 3 / 2 | 2 / 1 | 162 | 1.9 | 33.3× |"), "{t}");
        assert!(!t.contains("FPC"), "an unpaired unit makes no row: {t}");
        assert!(markdown(&rows[2..3]).is_empty());
    }
}
