//! The papers' published unit figures, per engine and unit, for the report's charts (the
//! tables beside the papers are [`super::table3`], [`super::table4`] and the Base+XOR core
//! table): area in kGE at the papers' nodes (with the NAND2 areas those tables assume),
//! clock in MHz and latency in cycles. Spec `README.md` lists the sources.

use super::{table3, table4};
use crate::model::adaptive::Alg;

/// A paper's figures for one unit (any may be unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PaperMark {
    /// Area, kGE (converted with the table's NAND2 area).
    pub kge: Option<f64>,
    /// Clock, MHz.
    pub mhz: Option<f64>,
    /// Latency, cycles.
    pub latency: Option<u32>,
}

/// What the marks are, for chart legends.
pub const LEGEND: &str = "paper (at its node)";

/// What the latency marks are: the papers count differently (cDMA gives pipeline stages,
/// Tavana Table III and PACT'12 Table 4 cycles without the accepting cycle, Buddy the added
/// cycles), which the chart's legend says.
pub const LATENCY_LEGEND: &str =
    "paper as published (cDMA: stages; Table III/4: cycles after acceptance)";

/// The paper's figures for `unit` of `engine`, if it publishes any.
pub fn mark(engine: &str, unit: &str) -> Option<PaperMark> {
    match engine {
        // cDMA Fig. 10: a 3-stage compressor and a 2-stage decompressor.
        "zvc" => match unit {
            "compressor" => Some(PaperMark {
                latency: Some(3),
                ..PaperMark::default()
            }),
            "decompressor" => Some(PaperMark {
                latency: Some(2),
                ..PaperMark::default()
            }),
            _ => None,
        },
        // Tavana Table III, 7 nm at 1 GHz.
        "adaptive" => {
            let (alg, comp) = match unit {
                "bdi_comp" => (Alg::Bdi, true),
                "bdi_decomp" => (Alg::Bdi, false),
                "fpc_comp" => (Alg::Fpc, true),
                "fpc_decomp" => (Alg::Fpc, false),
                "cpack_comp" => (Alg::Cpack, true),
                "cpack_decomp" => (Alg::Cpack, false),
                _ => return None,
            };
            let (lc, ld, area) = table3::paper(alg)?;
            Some(PaperMark {
                // The table's area covers the compressor and decompressor together.
                kge: Some(area / 2.0 / table3::NAND2_7NM_UM2 / 1000.0),
                mhz: Some(1000.0),
                latency: Some(if comp { lc } else { ld }),
            })
        }
        // PACT'12 Table 4, 65 nm. The MD cache's figures are bounds ("< 50,000 um2",
        // "> 1.25 GHz"): they are not drawn as values (the table beside gives them as bounds).
        "cpack-lossy" => {
            let (_, area, ghz, _, bound) = table4::PAPER.iter().find(|p| p.0 == unit)?;
            let value = |v: f64| (!bound).then_some(v);
            Some(PaperMark {
                kge: value(area / table4::NAND2_65NM_UM2 / 1000.0),
                mhz: value(ghz * 1000.0),
                latency: match unit {
                    "compressor" => Some(3),
                    "decompressor" => Some(1),
                    _ => None,
                },
            })
        }
        // Buddy Table I: "+11 cycles" of (de)compression latency, after BPC.
        "buddy" if unit == "bpc-decompress" => Some(PaperMark {
            latency: Some(11),
            ..PaperMark::default()
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_come_from_the_tables() {
        let m = mark("adaptive", "fpc_decomp").unwrap();
        assert_eq!(m.latency, Some(5));
        let k = m.kge.unwrap();
        assert!((k - 4428.0 / 2.0 / 0.0875 / 1000.0).abs() < 1e-9);
        let c = mark("cpack-lossy", "compressor").unwrap();
        assert_eq!(c.mhz, Some(1250.0));
        assert!(mark("base-xor", "encoder").is_none());
        // Bounds are not drawn as values.
        let md = mark("cpack-lossy", "md-cache").unwrap();
        assert_eq!((md.kge, md.mhz), (None, None));
    }
}
