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
    /// Latency, cycles, as the paper counts it.
    pub latency: Option<u32>,
    /// The same latency counted as hwzip counts (from the cycle that accepts the input to
    /// the first output), where the paper's count converts ([`latency_as_ours`]).
    pub latency_ours: Option<u32>,
    /// A bound instead of a value: the area is at most this many kGE.
    pub kge_at_most: Option<f64>,
    /// A bound instead of a value: the clock is at least this many MHz.
    pub mhz_at_least: Option<f64>,
}

/// What the marks are, for chart legends.
pub const LEGEND: &str = "paper (at its node)";

/// What the latency marks are: the papers' latencies counted as ours ([`latency_as_ours`]).
pub const LATENCY_LEGEND: &str = "paper, counted as here";

/// A paper's latency of `unit` counted as hwzip counts it, from the cycle that accepts the
/// input to the first output. The papers count differently: cDMA gives the compressor's
/// line latency ("six cycles per 128 B line": 3 stages, 4 sectors) and the decompressor's
/// cycles after the data arrives ("two additional cycles"); Table III of IPDPS'19, Table 4
/// of PACT'12 and Buddy's added cycles all count the cycles after the accepting one. So the
/// cDMA compressor's line latency stands as it is, and every other count gets the accepting
/// cycle added.
pub fn latency_as_ours(engine: &str, unit: &str, published: u32) -> u32 {
    match (engine, unit) {
        ("zvc", "compressor") => published,
        _ => published + 1,
    }
}

/// The paper's figures for `unit` of `engine`, if it publishes any.
pub fn mark(engine: &str, unit: &str) -> Option<PaperMark> {
    published(engine, unit).map(|m| PaperMark {
        latency_ours: m.latency.map(|l| latency_as_ours(engine, unit, l)),
        ..m
    })
}

/// The figures as the paper publishes them.
fn published(engine: &str, unit: &str) -> Option<PaperMark> {
    match engine {
        // cDMA Fig. 10: "six cycles" per 128 B line through the 3-stage compressor; "two
        // additional cycles" for the decompressor.
        "zvc" => match unit {
            "compressor" => Some(PaperMark {
                latency: Some(6),
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
                ..PaperMark::default()
            })
        }
        // PACT'12 Table 4, 65 nm. The MD cache's figures are bounds ("< 50,000 um2",
        // "> 1.25 GHz"), kept apart from values.
        "cpack-lossy" => {
            let (_, area, ghz, _, bound) = table4::PAPER.iter().find(|p| p.0 == unit)?;
            let (kge, mhz) = (area / table4::NAND2_65NM_UM2 / 1000.0, ghz * 1000.0);
            let value = |v: f64| (!bound).then_some(v);
            let limit = |v: f64| bound.then_some(v);
            Some(PaperMark {
                kge: value(kge),
                mhz: value(mhz),
                kge_at_most: limit(kge),
                mhz_at_least: limit(mhz),
                latency: match unit {
                    "compressor" => Some(3),
                    "decompressor" => Some(1),
                    _ => None,
                },
                ..PaperMark::default()
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
        // Bounds are kept apart from values.
        let md = mark("cpack-lossy", "md-cache").unwrap();
        assert_eq!((md.kge, md.mhz), (None, None));
        assert_eq!(md.mhz_at_least, Some(1250.0));
        assert!((md.kge_at_most.unwrap() - 50_000.0 / 1.44 / 1000.0).abs() < 1e-9);
        // Latencies counted as ours: the accepting cycle added, except cDMA's line latency.
        assert_eq!(m.latency_ours, Some(6));
        assert_eq!(mark("zvc", "compressor").unwrap().latency_ours, Some(6));
        assert_eq!(mark("zvc", "decompressor").unwrap().latency_ours, Some(3));
        assert_eq!(
            mark("buddy", "bpc-decompress").unwrap().latency_ours,
            Some(12)
        );
    }
}
