//! Adaptive link compression (IPDPS'19) in the registry: BDI, FPC and C-Pack+Z codecs, the
//! penalty controller and the link egress/ingress (`model::adaptive`, `rtl::{bdi, fpc, cpack,
//! adaptive_ctrl, link}`, `cosim::adaptive`), and the Table III comparison.

use super::{load_blocks, Engine, EvalOutput, EvalRequest, Identity, PaperTable, UnitDesign};
use crate::config::Config;
use crate::cosim::adaptive as bench;
use crate::cosim::run::Stimulus;
use crate::rtl::designs::adaptive::{self as designs, Unit};
use crate::synth::paper::PaperMark;
use crate::synth::ReportRow;

/// The adaptive engine: three codecs' compressors and decompressors, the controller, and the
/// link transmitter and receiver.
pub struct Adaptive;

impl Engine for Adaptive {
    /// IPDPS'19's energy per line of each compressor + decompressor pair, scaled to 7 nm.
    fn paper_energy(&self) -> &'static [super::PaperEnergy] {
        const E: [super::PaperEnergy; 3] = [
            super::PaperEnergy {
                what: "BDI comp + decomp, pJ per 64 B line",
                pj: "1.3",
                node: "7 nm (scaled from 65 nm)",
                units: &["bdi_comp", "bdi_decomp"],
            },
            super::PaperEnergy {
                what: "FPC comp + decomp, pJ per 64 B line",
                pj: "36.9",
                node: "7 nm (scaled from 45 nm)",
                units: &["fpc_comp", "fpc_decomp"],
            },
            super::PaperEnergy {
                what: "C-Pack+Z comp + decomp, pJ per 64 B line",
                pj: "40.0",
                node: "7 nm (scaled from 32 nm)",
                units: &["cpack_comp", "cpack_decomp"],
            },
        ];
        &E
    }

    /// IPDPS'19 Table III, 7 nm at 1 GHz; the table's area covers a compressor and its
    /// decompressor together, so each gets half.
    fn paper_mark(&self, unit: &str) -> Option<PaperMark> {
        use super::adaptive_table3 as table3;
        use crate::model::adaptive::Alg;
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
            kge: Some(area / 2.0 / table3::NAND2_7NM_UM2 / 1000.0),
            mhz: Some(1000.0),
            latency: Some(if comp { lc } else { ld }),
            ..PaperMark::default()
        })
    }

    fn id(&self) -> &'static Identity {
        &Identity {
            name: "adaptive",
            section: "adaptive",
            title: "Adaptive link compression",
            about:
                "BDI, FPC and C-Pack+Z compressors and decompressors, the penalty-vote selector \
             and the link transmitter and receiver (Tavana et al., IPDPS'19).",
            units: &[
                "bdi_comp",
                "bdi_decomp",
                "fpc_comp",
                "fpc_decomp",
                "cpack_comp",
                "cpack_decomp",
                "ctrl",
                "tx",
                "rx",
            ],
            test_units: &[
                "loopback",
                "bdi_loopback",
                "fpc_loopback",
                "cpack_loopback",
                "link_loopback",
            ],
        }
    }

    fn describe(&self, cfg: &Config) -> String {
        cfg.adaptive.describe_link()
    }

    fn units(&self, cfg: &Config) -> Result<Vec<UnitDesign>, String> {
        let p = &cfg.adaptive;
        let mut v = Vec::new();
        for &name in self.unit_names() {
            let unit = Unit::from_name(name)?;
            let params = match unit {
                Unit::CpackComp | Unit::CpackDecomp => p.describe_cpack(),
                Unit::Ctrl => p.describe_ctrl(),
                Unit::Tx | Unit::Rx => p.describe_link(),
                _ => p.describe(),
            };
            v.push(UnitDesign {
                engine: self.name(),
                unit: name,
                top: designs::top(p, unit).map_err(|e| e.to_string())?,
                params,
                beat_bytes: p.line_bytes as u32,
            });
        }
        Ok(v)
    }

    super::bench_methods!(adaptive, |_cfg, s| bench::StimConfig::of(s));

    /// Each codec's compressor → decompressor, and the link's transmitter → receiver: every
    /// line comes back unchanged and without an error flag.
    fn round_trips(&self, cfg: &Config) -> Result<Vec<crate::formal::RoundTrip>, String> {
        [
            "bdi_loopback",
            "fpc_loopback",
            "cpack_loopback",
            "link_loopback",
        ]
        .iter()
        .map(|u| {
            let mut rt = crate::formal::RoundTrip::lines(
                u,
                self.cosim_top(cfg, u)?,
                "line",
                "line",
                &["err"],
            );
            match *u {
                "bdi_loopback" => rt.split = Some(bdi_split(cfg.adaptive.line_bytes)),
                "link_loopback" => rt.split = Some(link_split(&cfg.adaptive)),
                _ => {}
            }
            Ok(rt)
        })
        .collect()
    }

    /// BDI's, FPC's and C-Pack's decompressors flag corrupt input as the model does
    /// ([`super::adaptive_flags`]).
    fn error_flags(&self, cfg: &Config) -> Result<Vec<crate::formal::ErrorFlag>, String> {
        let p = &cfg.adaptive;
        let l = p.line_bytes as u32 * 8;
        let top = |u: Unit| designs::top(p, u).map_err(|e| e.to_string());
        Ok(vec![
            super::adaptive_flags::bdi(top(Unit::BdiDecomp)?, l),
            super::adaptive_flags::fpc(top(Unit::FpcDecomp)?, l),
            super::adaptive_flags::cpack(top(Unit::CpackDecomp)?, &p.cpack()),
        ])
    }

    /// Static BDI / FPC / C-Pack+Z ratios, the adaptive policy's traffic and its decisions,
    /// per trace file and line profile, with the configured controller (`--lambda`
    /// overrides its λ).
    fn eval(&self, cfg: &Config, req: &EvalRequest) -> Result<EvalOutput, String> {
        use crate::model::adaptive::{eval, paper::Bench};
        use crate::trace::lines::{self, LineProfile};
        if req.traces.is_empty() && req.classes.is_empty() {
            return Err(
                "eval --engine adaptive needs --trace F and/or --class P (a line \
                        profile such as zero-heavy, small-delta, bench-sc, or `all`)"
                    .into(),
            );
        }
        req.check_options(self.name(), &["--lambda"])?;
        let mut p = cfg.adaptive.model();
        if let Some(l) = req.lambda {
            p.lambda = l;
        }
        p.validate().map_err(|e| e.to_string())?;
        let lb = p.line_bytes();
        let all = || {
            let mut v = LineProfile::PRIMITIVES.to_vec();
            v.push(LineProfile::Mixed);
            v.extend(Bench::ALL.into_iter().map(LineProfile::Bench));
            v
        };
        let parse = |name: &str| {
            LineProfile::from_name(name).ok_or_else(|| {
                format!(
                    "unknown line profile `{}` (known: zero, zero-heavy, small-delta, narrow, \
                     repeated, floats, half-zero-floats, random, mixed, bench-<name>, all)",
                    crate::files::quote(name)
                )
            })
        };
        let (profiles, _) = req.classes(all, &[], parse, (lb, "lines"))?;
        let mut out = Vec::new();
        for t in &req.traces {
            let ls: Vec<Vec<u8>> = load_blocks(t, lb)?
                .chunks_exact(lb)
                .map(<[u8]>::to_vec)
                .collect();
            let name = t.display().to_string();
            out.push(eval::evaluate_lines(&p, &name, &ls).map_err(|e| e.to_string())?);
        }
        for pr in profiles {
            let ls = lines::lines(pr, lb, req.count, req.seed);
            out.push(eval::evaluate_lines(&p, &pr.name(), &ls).map_err(|e| e.to_string())?);
        }
        let md = out.iter().map(|e| e.to_markdown() + "\n").collect();
        let mut o = EvalOutput::new(&out, md)?;
        o.charts = decision_charts(&out);
        Ok(o)
    }

    fn rows_table(&self, rows: &[ReportRow]) -> Option<PaperTable> {
        let md = super::adaptive_table3::markdown(rows);
        PaperTable::of(
            self.name(),
            "Adaptive: beside the paper's Table III",
            "table3",
            md,
        )
    }

    fn compress(&self, cfg: &Config, data: &[u8]) -> Result<super::Packed, String> {
        super::files::adaptive_compress(cfg, data)
    }

    fn decompress(&self, data: &[u8]) -> Result<super::Packed, String> {
        super::files::adaptive_decompress(data)
    }
}

/// The adaptive policy's running-phase decisions over time (a strip per trace, coloured by
/// the algorithm of each sampling period) and its Comp Alg histogram (a strip per trace cut
/// into the algorithms' shares).
fn decision_charts(
    out: &[crate::model::adaptive::eval::AdaptiveEval],
) -> Vec<crate::report::Chart> {
    use crate::report::{Body, Chart};
    const ALGS: [&str; 4] = ["none", "bdi", "fpc", "cpack"];
    let level = |a: &str| ALGS.iter().position(|x| *x == a).unwrap_or(0);
    let states: Vec<String> = ["none", "BDI", "FPC", "C-Pack+Z"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let decisions = out
        .iter()
        .map(|e| {
            let runs = e
                .decisions
                .iter()
                .map(|(a, count)| (level(a), *count as f64))
                .collect();
            (e.trace.clone(), runs)
        })
        .collect();
    let shares = out
        .iter()
        .map(|e| {
            let total: u64 = e.histogram.iter().map(|h| h.1).sum::<u64>().max(1);
            let runs = ALGS
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let c = e.histogram.iter().find(|h| h.0 == *a).map_or(0, |h| h.1);
                    (i, 100.0 * c as f64 / total as f64)
                })
                .collect();
            (e.trace.clone(), runs)
        })
        .collect();
    vec![
        Chart {
            title: "adaptive: running-phase decisions over time".into(),
            x_label: "sampling period".into(),
            y_label: "trace".into(),
            body: Body::Strips {
                states: states.clone(),
                rows: decisions,
            },
        },
        Chart {
            title: "adaptive: Comp Alg of the payload transactions".into(),
            x_label: "% of payload transactions".into(),
            y_label: "trace".into(),
            body: Body::Strips {
                states,
                rows: shares,
            },
        },
    ]
}

/// BDI's round trip split by the compressor's 4-bit encoding (FORMATS adaptive §2.1): one
/// case per compressed encoding, and one for every other value (a raw line).
fn bdi_split(line_bytes: usize) -> crate::formal::Split {
    use crate::model::bdi::BdiEncoding;
    // The encodings the compressor can send (not Base8-Δ4 on 16 B lines): a case whose line
    // never passes would check nothing.
    let sent = crate::rtl::bdi::priority(line_bytes);
    crate::formal::Split {
        fire: "p_fire_o".into(),
        value: "p_enc_o".into(),
        width: 4,
        cases: BdiEncoding::COMPRESSED
            .iter()
            .filter(|e| sent.contains(e))
            .filter_map(|e| Some((format!("{e:?}"), u64::from(e.prefix()?))))
            .collect(),
    }
}

/// The link round trip split by the Comp Alg code the transmitter sends the tracked line
/// with (each enabled algorithm; the other case is the raw line): each case's depth then
/// covers that algorithm's own latency through the link.
fn link_split(p: &crate::rtl::adaptive::AdaptiveRtlParams) -> crate::formal::Split {
    crate::formal::Split {
        fire: "p_fire_o".into(),
        value: "p_comp_alg_o".into(),
        width: 4,
        cases: crate::rtl::link::enabled(p)
            .into_iter()
            .map(|a| (format!("{a:?}"), u64::from(a.code())))
            .collect(),
    }
}

#[cfg(test)]
mod tests {

    /// `hwzip eval` with the default configuration evaluates the paper's parameters.
    #[test]
    fn default_config_is_the_papers_model() {
        let m = crate::rtl::adaptive::AdaptiveRtlParams::default().model();
        assert_eq!(m, crate::model::adaptive::AdaptiveParams::default());
    }
}
