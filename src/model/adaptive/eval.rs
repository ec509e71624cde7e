//! `hwzip eval --engine adaptive`: per-algorithm compression ratios, the adaptive policy's
//! traffic reduction and its decisions on a trace of lines (spec
//! docs/FORMATS.md, adaptive §2.4–§2.5, §4.3).

use super::{replay_lines, static_traffic, AdaptiveParams, Alg, Traffic, Txn};
use crate::model::ModelError;
use serde::Serialize;

/// The evaluation of one trace.
#[derive(Clone, Debug, Serialize)]
pub struct AdaptiveEval {
    /// Trace label.
    pub trace: String,
    /// Lines (payload transactions).
    pub lines: usize,
    /// λ used.
    pub lambda: u32,
    /// Static algorithms, every line compressed with one of them (`none` = the baseline):
    /// (algorithm, traffic).
    pub statics: Vec<(String, Traffic)>,
    /// The adaptive policy.
    pub adaptive: Traffic,
    /// Payload transactions per Comp Alg sent under the adaptive policy.
    pub histogram: Vec<(String, u64)>,
    /// Running-phase decisions in order (`bdi`, `fpc`, `cpack`, `none`), run-length encoded
    /// as (algorithm, consecutive phases).
    pub decisions: Vec<(String, usize)>,
    /// Compressor + decompressor energy, pJ.
    pub energy_pj: f64,
    /// Σ compression + decompression latency, cycles.
    pub latency_cycles: u64,
}

/// Evaluates `lines` (all Data Ready messages) under `p`.
pub fn evaluate_lines(
    p: &AdaptiveParams,
    trace: &str,
    lines: &[Vec<u8>],
) -> Result<AdaptiveEval, ModelError> {
    let txns: Vec<Txn> = lines.iter().cloned().map(Txn::data_ready).collect();
    let mut statics = Vec::new();
    for alg in [Alg::None, Alg::Bdi, Alg::Fpc, Alg::Cpack] {
        statics.push((alg.name().to_string(), static_traffic(p, alg, &txns)?));
    }
    let rep = replay_lines(p, lines)?;
    let histogram = [Alg::None, Alg::Bdi, Alg::Fpc, Alg::Cpack]
        .iter()
        .map(|a| (a.name().to_string(), rep.histogram[a.code() as usize]))
        .collect();
    let mut decisions: Vec<(String, usize)> = Vec::new();
    for d in rep.decisions() {
        match decisions.last_mut() {
            Some((n, c)) if n == d.name() => *c += 1,
            _ => decisions.push((d.name().to_string(), 1)),
        }
    }
    Ok(AdaptiveEval {
        trace: trace.to_string(),
        lines: lines.len(),
        lambda: p.lambda,
        statics,
        adaptive: rep.traffic,
        histogram,
        decisions,
        energy_pj: rep.energy_pj,
        latency_cycles: rep.latency_cycles,
    })
}

fn red(t: &Traffic) -> String {
    format!("{:+.1}%", (t.traffic_fraction() - 1.0) * 100.0)
}

impl AdaptiveEval {
    /// Markdown: one row per static algorithm and the adaptive policy, then its decisions.
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "trace: {} ({} lines), λ = {}\n\n| policy | payload ratio | message bytes | Δ traffic | bus cycles |\n|---|---:|---:|---:|---:|\n",
            self.trace, self.lines, self.lambda
        );
        for (n, t) in &self.statics {
            s.push_str(&format!(
                "| {} | {:.3} | {} | {} | {} |\n",
                if n == "none" { "uncompressed" } else { n },
                t.payload_ratio(),
                t.msg_bytes_sent,
                red(t),
                t.bus_cycles_sent
            ));
        }
        let a = &self.adaptive;
        s.push_str(&format!(
            "| **adaptive** | {:.3} | {} | **{}** | {} |\n\n",
            a.payload_ratio(),
            a.msg_bytes_sent,
            red(a),
            a.bus_cycles_sent
        ));
        let hist: Vec<String> = self
            .histogram
            .iter()
            .map(|(n, c)| format!("{} {}", n, c))
            .collect();
        s.push_str(&format!(
            "adaptive Comp Alg histogram: {}\n",
            hist.join(", ")
        ));
        let dec: Vec<String> = self
            .decisions
            .iter()
            .map(|(n, c)| {
                if *c > 1 {
                    format!("{}×{}", n, c)
                } else {
                    n.clone()
                }
            })
            .collect();
        s.push_str(&format!(
            "running-phase decisions ({} phases): {}\n",
            self.decisions.iter().map(|d| d.1).sum::<usize>(),
            if dec.is_empty() {
                "none (trace shorter than one sampling phase)".into()
            } else {
                dec.join(" → ")
            }
        ));
        s.push_str(&format!(
            "compressor/decompressor energy {:.1} nJ, Σ latency {} cycles\n",
            self.energy_pj / 1000.0,
            self.latency_cycles
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::lines::{phase_trace, LineProfile};

    #[test]
    fn adaptive_beats_bypass_and_follows_phases() {
        let p = AdaptiveParams::with_lambda(6);
        let lines = phase_trace(
            &[
                (LineProfile::SmallDelta, 1228),
                (LineProfile::ZeroHeavy, 1228),
            ],
            64,
            1,
        );
        let e = evaluate_lines(&p, "phases", &lines).unwrap();
        assert_eq!(e.lines, 2456);
        assert!(e.adaptive.traffic_fraction() < 1.0);
        assert!(e.decisions.len() >= 2, "{:?}", e.decisions);
        let md = e.to_markdown();
        assert!(md.contains("| **adaptive** |"), "{}", md);
        assert!(md.contains("running-phase decisions"), "{}", md);
        // Random data: compression never pays; the policy must bypass.
        let r = evaluate_lines(
            &p,
            "random",
            &crate::trace::lines::lines(LineProfile::Random, 64, 1000, 2),
        )
        .unwrap();
        assert!(
            r.decisions.iter().all(|d| d.0 == "none"),
            "{:?}",
            r.decisions
        );
    }
}
