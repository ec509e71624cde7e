//! The PACT'12 compressor and decompressor beside the paper's Table 4 (Sathish, Schulte, Kim;
//! docs/FORMATS.md, PACT'12 §4): 0.043 mm² each at 65 nm, 1.25 / 1.2 GHz, 32.63 / 24.14 mW;
//! and the MD cache beside the paper's bounds (CACTI: < 0.05 mm², < 800 ps).
//! The areas are compared in kGE with a 65 nm NAND2 of [`NAND2_65NM_UM2`] (our assumption,
//! stated in the table).

use crate::synth::ReportRow;

/// Area of a 65 nm NAND2 used to turn the paper's mm² into kGE (our assumption: an X1
/// two-input NAND of a 9-track 65 nm general-purpose library).
pub const NAND2_65NM_UM2: f64 = 1.44;

/// The paper's rows: (unit, area µm², clock GHz, power mW, whether area and clock are
/// bounds: "< 0.05 mm², < 800 ps" for the MD cache).
pub const PAPER: [(&str, f64, f64, Option<f64>, bool); 3] = [
    ("compressor", 43_000.0, 1.25, Some(32.63), false),
    ("decompressor", 43_000.0, 1.2, Some(24.14), false),
    ("md-cache", 50_000.0, 1.25, None, true),
];

/// Markdown table of the `cpack-lossy` compressor and decompressor rows in `rows` beside
/// Table 4, one row per unit and library; empty when there is none.
pub fn markdown(rows: &[ReportRow]) -> String {
    let mut body = String::new();
    for (unit, pa, ghz, mw, bound) in PAPER {
        let lt = if bound { "< " } else { "" };
        let gt = if bound { "> " } else { "" };
        let mw = mw.map_or("–".to_string(), |w| format!("{w:.2}"));
        let pk = pa / NAND2_65NM_UM2 / 1000.0;
        for r in rows
            .iter()
            .filter(|r| r.engine == "cpack-lossy" && r.unit == unit)
        {
            let lat = r.latency_cycles.map_or("–".into(), |l| l.to_string());
            let res = &r.result;
            let mut ours = vec![(unit.to_string(), res.area_um2, res.kge, res.fmax_mhz)];
            if let Some(m) = with_macros(r) {
                ours.push(m);
            }
            for (name, area, kge, fmax) in ours {
                body.push_str(&format!(
                    "| {} | {} | {:.0} | {:.1} | {:.0} | {} | {lt}{:.0} | {lt}{:.1} | {gt}{:.0} | {} | {gt}{:.1}× |\n",
                    name,
                    res.liberty,
                    area,
                    kge,
                    fmax,
                    lat,
                    pa,
                    pk,
                    ghz * 1000.0,
                    mw,
                    kge / pk,
                ));
            }
        }
    }
    if body.is_empty() {
        return String::new();
    }
    format!(
        "Paper kGE = paper µm² (65 nm) / {NAND2_65NM_UM2} µm² per NAND2 (our assumption). Our \
         latencies count the accepting cycle; the paper gives 16 + 3 for the compressor (first \
         chunk after the first word; ours 16 + 4, one stage more for 1 GHz) and 8 + 1 for the \
         decompressor (per block); the cosim tests measure both. \
         The paper's MD cache is a CACTI SRAM estimate; ours holds its 4 KB in a RAM, as \
         flops and, when `synth.macros` names memory macros, as those macros (area of the \
         cache without its RAM plus the macros', Fmax with the macros' timing; \
         docs/MEMORIES.md).\n\n\
         | Unit | Library | µm² | kGE | Fmax MHz | latency cycles | paper µm² (65 nm) | \
         paper kGE | paper MHz | paper mW | ours / paper (kGE) |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n{body}"
    )
}

/// A unit's row with its RAMs as the named macros (when every RAM has one): its name, area
/// (the unit without its RAMs plus the macros), kGE and Fmax (timed with the macros).
fn with_macros(r: &ReportRow) -> Option<(String, f64, f64, f64)> {
    let res = &r.result;
    let path = res.model_paths.iter().find(|p| p.rams == "macro")?;
    if res.memories.is_empty() || res.area_um2 <= 0.0 {
        return None;
    }
    let mut area = res.area_um2;
    for m in &res.memories {
        let fit = m.macro_fit.as_ref()?;
        area += (fit.area_um2 - m.flop_area_um2) * m.instances as f64;
    }
    let kge = area * res.kge / res.area_um2;
    let name = format!("{}, RAM as macros", r.unit);
    Some((name, area, kge, 1000.0 / path.path_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::SynthResult;

    fn row(unit: &str, lib: &str, area: f64, kge: f64) -> ReportRow {
        ReportRow {
            engine: "cpack-lossy".into(),
            unit: unit.into(),
            params: String::new(),
            latency_cycles: Some(19),
            throughput_bytes_per_cycle: None,
            result: SynthResult {
                liberty: lib.into(),
                area_um2: area,
                kge,
                fmax_mhz: 736.0,
                ..SynthResult::default()
            },
        }
    }

    #[test]
    fn units_are_compared_with_table_4() {
        let rows = vec![
            row("compressor", "nangate45", 77600.0, 97.24),
            row("decompressor", "nangate45", 22204.0, 27.82),
        ];
        let t = markdown(&rows);
        assert!(
            t.contains("| compressor | nangate45 | 77600 | 97.2 | 736 | 19 | 43000 | 29.9 | 1250 | 32.63 | 3.3× |"),
            "{t}"
        );
        assert!(
            t.contains("| decompressor | nangate45 | 22204 | 27.8 |"),
            "{t}"
        );
        let md = markdown(&[row("md-cache", "nangate45", 295768.0, 370.64)]);
        assert!(
            md.contains("| md-cache | nangate45 | 295768 | 370.6 | 736 | 19 | < 50000 | < 34.7 | > 1250 | – | > 10.7× |"),
            "{md}"
        );
        // With a macro for its RAM: 300,000 µm² less 275,000 of flops plus 25,000 of macros.
        let mut cache = row("md-cache", "nangate45", 300_000.0, 375.0);
        cache.result.memories = vec![crate::synth::memories::MemoryFigures {
            instances: 1,
            flop_area_um2: 275_000.0,
            macro_fit: Some(crate::synth::memories::MacroFit {
                area_um2: 25_000.0,
                ..Default::default()
            }),
            ..Default::default()
        }];
        cache.result.model_paths = vec![crate::synth::memories::ModelPath {
            rams: "macro".into(),
            path_ns: 1.25,
            ..Default::default()
        }];
        let md = markdown(&[cache]);
        assert!(
            md.contains("| md-cache, RAM as macros | nangate45 | 50000 | 62.5 | 800 | 19 |"),
            "{md}"
        );
        let mut other = rows.clone();
        other.iter_mut().for_each(|r| r.engine = "adaptive".into());
        assert!(markdown(&other).is_empty());
    }
}
