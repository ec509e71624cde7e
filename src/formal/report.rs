//! The proof reports: one row per (unit, property) and one per planted fault, as Markdown
//! and JSON.

use super::run::ProofResult;
use super::Outcome;
use serde::{Deserialize, Serialize};

/// One planted fault and what the proof of its property found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultRow {
    /// Engine name.
    pub engine: String,
    /// Unit name.
    pub unit: String,
    /// Fault name (`ignore-ready:m`).
    pub fault: String,
    /// What the edit does.
    pub what: String,
    /// The proof run on the faulty unit.
    pub proof: ProofResult,
}

impl FaultRow {
    /// Whether the proof caught the fault (a counterexample).
    pub fn caught(&self) -> bool {
        self.proof.outcome == Outcome::Counterexample
    }
}

/// Everything one `hwzip prove` found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProveReport {
    /// One row per (unit, property).
    pub proofs: Vec<ProofResult>,
    /// One row per (unit, planted fault, property).
    pub faults: Vec<FaultRow>,
}

impl ProveReport {
    /// Whether a proof found a counterexample or a planted fault went uncaught (a proof
    /// stopped by its budget refutes nothing).
    pub fn refuted(&self) -> bool {
        self.proofs
            .iter()
            .any(|p| p.outcome == Outcome::Counterexample)
            || self.faults.iter().any(|f| !self.fault_caught(f))
    }

    /// Whether the fault of row `f` is caught: by its own proof or, in a round trip split
    /// into cases, by the proof of another case (a data-path fault breaks the lines of the
    /// cases whose path it is on; the cases together cover every line).
    pub fn fault_caught(&self, f: &FaultRow) -> bool {
        f.caught()
            || (f.proof.case.is_some()
                && self.faults.iter().any(|g| {
                    g.caught()
                        && g.engine == f.engine
                        && g.unit == f.unit
                        && g.fault == f.fault
                        && g.proof.property == f.proof.property
                }))
    }

    /// Whether every proof passed (proved or bounded) and every planted fault was caught.
    pub fn passed(&self) -> bool {
        self.proofs
            .iter()
            .all(|p| matches!(p.outcome, Outcome::Proved | Outcome::Bounded))
            && self.faults.iter().all(|f| self.fault_caught(f))
    }
}

/// The unit cell: the unit, with its case for a split round trip.
pub fn unit_cell(p: &ProofResult) -> String {
    match &p.case {
        Some(c) => format!("{} [{c}]", p.unit),
        None => p.unit.clone(),
    }
}

/// One line per split round trip: how its cases, which together cover every line, ended.
fn splits_markdown(rows: &[ProofResult]) -> String {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for p in rows.iter().filter(|p| p.case.is_some()) {
        let k = (p.engine.as_str(), p.unit.as_str(), p.config.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut s = String::new();
    for (e, u, c) in keys {
        let of: Vec<&ProofResult> = rows
            .iter()
            .filter(|p| p.case.is_some() && p.engine == e && p.unit == u && p.config == c)
            .collect();
        let count = |o: Outcome| of.iter().filter(|p| p.outcome == o).count();
        let secs: f64 = of.iter().map(|p| p.seconds).sum();
        let mut parts = Vec::new();
        for o in [
            Outcome::Proved,
            Outcome::Bounded,
            Outcome::Counterexample,
            Outcome::Unreached,
        ] {
            if count(o) > 0 {
                parts.push(format!("{} {}", count(o), o.word()));
            }
        }
        let least = of
            .iter()
            .filter(|p| p.outcome == Outcome::Bounded)
            .map(|p| p.depth)
            .min();
        s.push_str(&format!(
            "- {e} {u} round-trip ({c}): {} cases, together every line: {}{}; {:.0} s in all\n",
            of.len(),
            parts.join(", "),
            least.map_or(String::new(), |d| format!(
                " (every case to at least BMC {d})"
            )),
            secs
        ));
    }
    s
}

/// The property cell: its name, with the bound of a bounded property.
pub fn property_cell(p: &ProofResult) -> String {
    match p.bound {
        Some(b) => format!("{} ≤ {b}", p.property.tag()),
        None => p.property.tag().to_string(),
    }
}

fn result_cell(p: &ProofResult) -> String {
    let mut s = p.outcome.word().to_string();
    if !p.failed.is_empty() {
        s.push_str(&format!(" ({})", p.failed.join(", ")));
    }
    s
}

/// The proofs as a Markdown table.
pub fn proofs_markdown(rows: &[ProofResult]) -> String {
    let mut s = String::from(
        "| engine | unit | configuration | property | checked from | method | result | solver \
         | s |\n|---|---|---|---|---:|---|---|---|---:|\n",
    );
    for p in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1}{} |\n",
            p.engine,
            unit_cell(p),
            p.config,
            property_cell(p),
            p.reach.map_or("-".to_string(), |r| format!("cycle {r}")),
            p.method(),
            result_cell(p),
            p.solver.name(),
            p.seconds,
            if p.cached { " (cached)" } else { "" }
        ));
    }
    let splits = splits_markdown(rows);
    if !splits.is_empty() {
        s.push('\n');
        s.push_str(&splits);
    }
    let notes: Vec<String> = rows
        .iter()
        .filter(|p| !p.note.is_empty())
        .map(|p| {
            format!(
                "- {} {} {}: {}",
                p.engine,
                unit_cell(p),
                p.property.tag(),
                p.note
            )
        })
        .collect();
    if !notes.is_empty() {
        s.push('\n');
        s.push_str(&notes.join("\n"));
        s.push('\n');
    }
    s
}

/// The planted faults of `r` as a Markdown table.
pub fn faults_markdown(r: &ProveReport) -> String {
    let mut s = String::from(
        "| engine | unit | fault | edit | property | caught | step | s |\n\
         |---|---|---|---|---|---|---:|---:|\n",
    );
    for f in &r.faults {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.1} |\n",
            f.engine,
            unit_cell(&f.proof),
            f.fault,
            f.what,
            f.proof.property.tag(),
            if f.caught() {
                "yes"
            } else if r.fault_caught(f) {
                "by another case"
            } else {
                "**no**"
            },
            if f.caught() {
                f.proof.depth.to_string()
            } else {
                "-".into()
            },
            f.proof.seconds
        ));
    }
    s
}

/// The counterexamples (their VCDs) and their Verilator replays, one line each.
pub fn counterexamples_markdown(r: &ProveReport) -> String {
    let all = r.proofs.iter().map(|p| (p, String::new())).chain(
        r.faults
            .iter()
            .map(|f| (&f.proof, format!(" [{}]", f.fault))),
    );
    let mut s = String::new();
    for (p, fault) in all {
        let Some(vcd) = &p.vcd else {
            // A wiring check's counterexample is its message.
            if p.outcome == Outcome::Counterexample && !p.note.is_empty() {
                let (e, u, t) = (&p.engine, unit_cell(p), p.property.tag());
                s.push_str(&format!("- {e} {u} {t}{fault}: {}\n", p.note));
            }
            continue;
        };
        s.push_str(&format!(
            "- {} {} {}{}: step {}, {}; trace {}",
            p.engine,
            unit_cell(p),
            p.property.tag(),
            fault,
            p.depth,
            p.failed.join(", "),
            vcd.display()
        ));
        if let Some(rp) = &p.replay {
            s.push_str(&format!("; replay: {}", rp.summary()));
        }
        s.push('\n');
    }
    s
}

/// The report's tables (proofs, planted faults, counterexamples) under level-3 headings.
pub fn body(r: &ProveReport) -> String {
    let mut s = proofs_markdown(&r.proofs);
    if !r.faults.is_empty() {
        s.push_str("\n### Planted faults\n\n");
        s.push_str(&faults_markdown(r));
    }
    let cex = counterexamples_markdown(r);
    if !cex.is_empty() {
        s.push_str("\n### Counterexamples\n\n");
        s.push_str(&cex);
    }
    s
}

/// The whole report as Markdown.
pub fn markdown(r: &ProveReport) -> String {
    format!("# hwzip prove\n\n{}", body(r))
}

/// Adds `prove.md`, `prove.json` and `prove.html` (the Markdown's tables as a page that
/// needs no network) in `dir` to `set`.
pub fn add(
    set: &mut crate::files::FileSet,
    r: &ProveReport,
    dir: &std::path::Path,
) -> Result<(), String> {
    use crate::report::{Block, Page};
    let mut page = Page::new("hwzip prove");
    page.section("Proofs", vec![Block::Markdown(body(r))]);
    set.add(dir.join("prove.html"), page.html()?);
    set.add(dir.join("prove.md"), markdown(r));
    set.add(
        dir.join("prove.json"),
        serde_json::to_string_pretty(r).map_err(|e| e.to_string())?,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(case: Option<&str>, outcome: &str) -> FaultRow {
        let proof = serde_json::from_value(serde_json::json!({
            "engine": "adaptive", "unit": "bdi_loopback", "config": "c",
            "property": "round-trip", "case": case, "bound": null, "outcome": outcome,
            "depth": 7, "k": null, "reach": 6, "note": "", "out_of_budget": false,
            "solver": "bitwuzla", "seconds": 1.0, "vcd": null, "failed": [], "cached": false,
            "replay": null
        }))
        .unwrap();
        FaultRow {
            engine: "adaptive".into(),
            unit: "bdi_loopback".into(),
            fault: "mux:b4d1_dsel3".into(),
            what: "w".into(),
            proof,
        }
    }

    /// A data-path fault of a split round trip counts as caught when one case catches it;
    /// a fault of an unsplit proof must be caught by its own proof.
    #[test]
    fn split_faults_are_caught_by_any_case() {
        let mut r = ProveReport {
            proofs: Vec::new(),
            faults: vec![
                row(Some("enc = 0 (Zero)"), "bounded"),
                row(Some("enc = 5 (B4D1)"), "counterexample"),
            ],
        };
        assert!(r.passed() && !r.refuted());
        let md = faults_markdown(&r);
        assert!(md.contains("| by another case |"), "{md}");
        r.faults.remove(1);
        assert!(!r.passed() && r.refuted());
        r.faults = vec![row(None, "bounded"), row(None, "counterexample")];
        assert!(!r.passed());
    }
}
