//! `docs/RESULTS.md`, generated: the long tier's reports (`hwzip regress` output) are reduced
//! to a snapshot (`docs/results.json`: every synthesis row, co-simulation, paper table,
//! gate-level run and evaluation, without work paths or tool logs), and the page is rendered
//! from that snapshot only, so that a test can render the committed snapshot again and find
//! the committed page. "Known gaps" comes from the same rows: every unit below its target
//! clock on Nangate45 and every unit slower in cycles than its paper.

use super::regress::RegressRun;
use super::FlowResult;
use crate::engines::PaperTable;
use crate::report::{num, opt, round};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One synthesized unit on one library.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthEntry {
    /// Engine.
    pub engine: String,
    /// Unit.
    pub unit: String,
    /// Generator parameters.
    pub params: String,
    /// Library label.
    pub liberty: String,
    /// Clock period of the run, ns.
    pub clock_ns: f64,
    /// Mapped cells.
    pub cells: u64,
    /// Flip-flops.
    pub flops: u64,
    /// Area, µm².
    pub area_um2: f64,
    /// Area, kGE.
    pub kge: f64,
    /// Critical path, ns.
    pub critical_path_ns: f64,
    /// Fmax, MHz.
    pub fmax_mhz: f64,
    /// Worst path, `from -> to`.
    pub path: String,
    /// Latency, cycles (from the acceptance of the input to the first output).
    pub latency_cycles: Option<u32>,
    /// Uncompressed bytes per cycle.
    pub bytes_per_cycle: Option<f64>,
}

/// One co-simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CosimEntry {
    /// Regression run (`default`, a parameter set's name, `cache`).
    pub run: String,
    /// Engine (`block` for the shared cache + MSHR block).
    pub engine: String,
    /// Unit.
    pub unit: String,
    /// Parameters.
    pub params: String,
    /// Lines (windows, sectors, lookups).
    pub lines: u64,
    /// Cycles.
    pub cycles: u64,
    /// Mismatching beats.
    pub mismatches: u64,
    /// Simulation speed, million cycles per second.
    pub mcycles_per_s: f64,
}

/// One engine's evaluation of its golden models.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalEntry {
    /// Engine.
    pub engine: String,
    /// The evaluation's Markdown, as `hwzip eval` prints it.
    pub markdown: String,
}

/// One regression a snapshot was joined from (`hwzip results --from`): the engines it ran and
/// how it ended. A later regression of some of those engines takes their rows over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The engines whose rows it gave (engine names).
    pub engines: Vec<String>,
    /// Every run matched and every step ended well.
    pub ok: bool,
    /// Steps that failed (`run: kind what: detail`).
    pub failures: Vec<String>,
    /// Gate-level co-simulations (`what: detail`).
    pub gate: Vec<String>,
}

/// What `docs/RESULTS.md` is rendered from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Profile of the regression (`paper` for the long tier).
    pub profile: String,
    /// Co-simulation lines per unit.
    pub lines: u64,
    /// Libraries synthesized.
    pub libraries: Vec<String>,
    /// Synthesis effort and hierarchy.
    pub synth_method: String,
    /// The regressions the rows come from, each covering its own engines.
    pub sources: Vec<Source>,
    /// Synthesis rows of the default configuration.
    pub synth: Vec<SynthEntry>,
    /// Every co-simulation of every run.
    pub cosim: Vec<CosimEntry>,
    /// Tables beside the papers'.
    pub tables: Vec<PaperTable>,
    /// Evaluations.
    pub evals: Vec<EvalEntry>,
    /// FPGA place-and-route rows of the default configuration's leaf units
    /// (`hwzip synth --fpga`, joined by `hwzip results --fpga`).
    #[serde(default)]
    pub fpga: Vec<crate::synth::fpga::FpgaRow>,
    /// Nangate45 rows of named configurations (`hwzip results --closure`), beside the
    /// default rows in the timing-closure section.
    #[serde(default)]
    pub closure: Vec<super::closure::ClosureEntry>,
}

impl Snapshot {
    /// Every source's runs matched and every step ended well.
    pub fn ok(&self) -> bool {
        self.sources.iter().all(|s| s.ok)
    }

    /// The engines it has rows of, in registry order.
    pub fn engines(&self) -> Vec<&'static str> {
        crate::engines::ALL
            .iter()
            .map(|e| e.name())
            .filter(|n| {
                self.sources
                    .iter()
                    .any(|s| s.engines.iter().any(|e| e == n))
            })
            .collect()
    }

    fn failures(&self) -> impl Iterator<Item = &String> {
        self.sources.iter().flat_map(|s| s.failures.iter())
    }

    fn gate(&self) -> impl Iterator<Item = &String> {
        self.sources.iter().flat_map(|s| s.gate.iter())
    }
}

/// Reduces a regression of `engines` (its runs and evaluations) to a snapshot.
pub fn snapshot(
    engines: Vec<String>,
    runs: &[RegressRun],
    evals: Vec<EvalEntry>,
) -> FlowResult<Snapshot> {
    let default = runs
        .iter()
        .find(|r| r.name == "default")
        .ok_or("the regression has no `default` run")?;
    let d = &default.report;
    let mut failures = Vec::new();
    let mut cosim = Vec::new();
    let mut ok = true;
    for r in runs {
        ok &= r.report.ok;
        for s in r.report.failures() {
            failures.push(format!("{}: {} {}: {}", r.name, s.kind, s.what, s.detail));
        }
        for c in &r.report.cosim {
            cosim.push(CosimEntry {
                run: r.name.clone(),
                engine: c.engine.clone(),
                unit: c.unit.clone(),
                params: c.params.clone(),
                lines: c.stats.lines,
                cycles: c.stats.cycles,
                mismatches: c.stats.mismatches,
                mcycles_per_s: round(c.stats.cycles_per_second() / 1e6, 2),
            });
        }
    }
    let synth = d
        .synth
        .iter()
        .map(|r| SynthEntry {
            engine: r.engine.clone(),
            unit: r.unit.clone(),
            params: r.params.clone(),
            liberty: r.result.liberty.clone(),
            clock_ns: r.result.clock_ns,
            cells: r.result.cells,
            flops: r.result.seq_cells,
            area_um2: round(r.result.area_um2, 0),
            kge: round(r.result.kge, 2),
            critical_path_ns: round(r.result.critical_path_ns, 3),
            fmax_mhz: round(r.result.fmax_mhz, 0),
            path: format!("{} -> {}", r.result.path_from, r.result.path_to),
            latency_cycles: r.latency_cycles,
            bytes_per_cycle: r.throughput_bytes_per_cycle.map(|b| round(b, 2)),
        })
        .collect();
    let gate = d
        .steps
        .iter()
        .filter(|s| s.kind == "gate")
        .map(|s| format!("{}: {}", s.what, s.detail))
        .collect();
    Ok(Snapshot {
        profile: d.profile.name().into(),
        lines: d.lines,
        libraries: d.libraries.clone(),
        synth_method: d.synth_method.clone(),
        sources: vec![Source {
            engines,
            ok,
            failures,
            gate,
        }],
        synth,
        cosim,
        tables: d.tables.clone(),
        evals,
        fpga: Vec::new(),
        closure: Vec::new(),
    })
}

/// A section of the page: its heading (and so its anchor), the engine whose rows it shows,
/// and what the engine is.
struct Part {
    heading: &'static str,
    engine: &'static str,
    about: &'static str,
}

/// The shared metadata cache + MSHR block (engine `block` in the reports), shown before the
/// first engine that uses it.
const BLOCK: Part = Part {
    heading: "Metadata cache + MSHR",
    engine: "block",
    about: "The shared set-associative metadata cache with miss-status registers in the two \
            configurations its engines use (the PACT'12 MD cache, the Buddy metadata slice), \
            against its model with a reactive memory.",
};

/// The page's sections: every engine of the registry in its order, the shared cache block
/// after the first engine that uses it (PACT'12).
fn parts() -> Vec<Part> {
    let mut v = Vec::new();
    for e in crate::engines::ALL {
        v.push(Part {
            heading: e.title(),
            engine: e.name(),
            about: e.about(),
        });
        if e.uses_cache_block() && !v.iter().any(|p| p.engine == BLOCK.engine) {
            v.push(BLOCK);
        }
    }
    v
}

/// The target clock of `unit`, MHz: the paper's (or its lower bound) where it publishes one
/// for the unit, else the papers' common 1 GHz.
fn target_mhz(engine: &str, unit: &str) -> f64 {
    crate::engines::paper_mark(engine, unit)
        .and_then(|m| m.mhz.or(m.mhz_at_least))
        .unwrap_or(1000.0)
}

/// The paper's latency for `unit` counted as ours, from the accepting cycle
/// ([`crate::engines::Engine::latency_as_ours`]).
fn paper_latency(engine: &str, unit: &str) -> Option<u32> {
    crate::engines::paper_mark(engine, unit)?.latency_ours
}

/// Renders `docs/RESULTS.md` from a snapshot.
pub fn render(s: &Snapshot) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Results\n\n<!-- Generated by `hwzip results` from docs/results.json (written by \
         `hwzip results --from <regress folder>`); do not edit by hand. -->\n"
    );
    let _ = writeln!(
        o,
        "What the long tier (`hwzip regress`, {} profile) measured: synthesis on {} ({}), \
         co-simulation against the golden models ({} lines per unit and parameter set, random \
         valid gaps and ready stalls), gate-level runs, the tables beside the papers', and the \
         golden models' evaluations. Areas are cell areas before layout; kGE uses each \
         library's NAND2 cell. Every figure below is read from the regression's reports; \
         `docs/FORMATS.md` says how each is measured.\n",
        s.profile,
        s.libraries.join(", "),
        s.synth_method,
        num(s.lines as f64, 0)
    );
    let contents: Vec<String> = [
        "[Known gaps](#known-gaps)".to_string(),
        "[Timing closure](#timing-closure)".to_string(),
    ]
    .into_iter()
    .chain(
        parts()
            .iter()
            .map(|p| format!("[{}](#{})", p.heading, anchor(p.heading))),
    )
    .chain([
        "[FPGA place and route](#fpga-place-and-route)".to_string(),
        "[Sweeps and energy](#sweeps-and-energy)".to_string(),
    ])
    .collect();
    let _ = writeln!(o, "Contents: {}\n", contents.join(" · "));
    known_gaps(s, &mut o);
    let baselines: Vec<super::closure::Baseline> = s
        .synth
        .iter()
        .filter(|r| r.liberty == super::closure::CLOSURE_LIBRARY)
        .map(|r| super::closure::Baseline {
            engine: r.engine.clone(),
            unit: r.unit.clone(),
            target_mhz: target_mhz(&r.engine, &r.unit),
            fmax_mhz: r.fmax_mhz,
            kge: r.kge,
            latency_cycles: r.latency_cycles,
            bytes_per_cycle: r.bytes_per_cycle,
        })
        .collect();
    super::closure::section(&baselines, &s.closure, &mut o);
    let ran: Vec<String> = s.engines().iter().map(|e| e.to_string()).collect();
    for p in parts() {
        let _ = writeln!(o, "## {}\n\n{}\n", p.heading, p.about);
        if !covers(&ran, p.engine) {
            // The block runs with any engine that uses it.
            let with: Vec<&str> = crate::engines::ALL
                .iter()
                .filter(|e| {
                    e.name() == p.engine || (p.engine == BLOCK.engine && e.uses_cache_block())
                })
                .map(|e| e.name())
                .collect();
            let cmds: Vec<String> = with
                .iter()
                .map(|e| format!("`hwzip regress --engine {e}`"))
                .collect();
            let _ = writeln!(
                o,
                "Its long tier is not in this snapshot yet: {}, then \
                 `hwzip results --from build/regress`.\n",
                cmds.join(" or ")
            );
            continue;
        }
        synth_section(s, p.engine, &mut o);
        for t in s.tables.iter().filter(|t| t.engine == p.engine) {
            let _ = writeln!(o, "### {}\n\n{}\n", t.title, t.markdown.trim_end());
        }
        cosim_section(s, p.engine, &mut o);
        let gate_here =
            crate::engines::by_name(p.engine).is_ok_and(|e| e.gate_level_in_long_tier());
        if gate_here && s.gate().next().is_some() {
            let _ = writeln!(
                o,
                "### Gate-level co-simulation (osu018 netlists, the library's cell functions)\n"
            );
            for g in s.gate() {
                let _ = writeln!(o, "- {}", g);
            }
            o.push('\n');
        }
        if let Some(e) = s.evals.iter().find(|e| e.engine == p.engine) {
            let _ = writeln!(
                o,
                "### Golden-model evaluation (`hwzip eval`, default parameters)\n"
            );
            o.push_str(&demote(&e.markdown));
            o.push('\n');
        }
    }
    super::fpga::section(&s.fpga, &mut o);
    let _ = writeln!(
        o,
        "## Sweeps and energy\n\nThe design-space sweeps (`hwzip sweep`, Pareto fronts per \
         engine) and the energy per line of the gate-level netlists (`hwzip synth --energy N`) \
         are not part of the long tier; their measurements beside the papers' figures, and the \
         commands that reproduce them are in [SWEEPS_AND_ENERGY.md](SWEEPS_AND_ENERGY.md).\n"
    );
    while o.ends_with("\n\n") {
        o.pop();
    }
    o
}

/// GitHub's anchor of a heading.
fn anchor(h: &str) -> String {
    h.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            'a'..='z' | '0'..='9' | '-' | '_' => Some(c),
            ' ' => Some('-'),
            _ => None,
        })
        .collect()
}

/// An evaluation's Markdown under a `###` heading: its own headings two levels down.
fn demote(md: &str) -> String {
    let mut out = String::new();
    for l in md.lines() {
        if l.starts_with('#') {
            let _ = writeln!(out, "###{}", l);
        } else {
            let _ = writeln!(out, "{}", l);
        }
    }
    out
}

/// How the papers' latencies are converted ([`crate::engines::Engine::latency_as_ours`]).
const LATENCY_RULE: &str = "cDMA's compressor line latency as published, one cycle added to \
     every count that starts after the accepting cycle";

fn known_gaps(s: &Snapshot, o: &mut String) {
    let _ = writeln!(o, "## Known gaps\n");
    if s.failures().next().is_some() || !s.ok() {
        let _ = writeln!(o, "**Failed steps of this regression:**\n");
        for f in s.failures() {
            let _ = writeln!(o, "- {}", f);
        }
        o.push('\n');
    }
    let bad: Vec<&CosimEntry> = s.cosim.iter().filter(|c| c.mismatches > 0).collect();
    let _ = writeln!(
        o,
        "Co-simulation: {} runs, {} with a mismatch.\n",
        s.cosim.len(),
        bad.len()
    );
    for c in bad {
        let _ = writeln!(o, "- {} {} {} ({})", c.run, c.engine, c.unit, c.params);
    }
    let n45: Vec<&SynthEntry> = s
        .synth
        .iter()
        .filter(|r| r.liberty == "nangate45")
        .collect();
    if n45.is_empty() {
        let _ = writeln!(
            o,
            "Clock: no Nangate45 rows in this regression (the library was absent), so no unit \
             is compared with the papers' clocks.\n"
        );
    } else {
        let slow: Vec<&&SynthEntry> = n45
            .iter()
            .filter(|r| r.fmax_mhz < target_mhz(&r.engine, &r.unit))
            .collect();
        let _ = writeln!(
            o,
            "Clock: {} of {} units reach their target on Nangate45 (the paper's clock where it \
             gives one for the unit, else the papers' common 1 GHz; Nangate45 is the library \
             nearest the papers' nodes; [Timing closure](#timing-closure) gives the \
             configurations that reach it). Below target at the default parameters:\n",
            n45.len() - slow.len(),
            n45.len()
        );
        if !slow.is_empty() {
            let _ = writeln!(
                o,
                "| engine | unit | Fmax MHz | target MHz | critical path ns | worst path |\n\
                 |---|---|---:|---:|---:|---|"
            );
            for r in &slow {
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} | {} | `{}` |",
                    r.engine,
                    r.unit,
                    num(r.fmax_mhz, 0),
                    num(target_mhz(&r.engine, &r.unit), 0),
                    num(r.critical_path_ns, 3),
                    r.path
                );
            }
            o.push('\n');
        }
    }
    let mut late = Vec::new();
    let mut seen = Vec::new();
    for r in &s.synth {
        if seen.contains(&(&r.engine, &r.unit)) {
            continue;
        }
        seen.push((&r.engine, &r.unit));
        if let (Some(ours), Some(theirs)) = (r.latency_cycles, paper_latency(&r.engine, &r.unit)) {
            if ours > theirs {
                late.push((r, ours, theirs));
            }
        }
    }
    let _ = writeln!(
        o,
        "Latency: {} units take more cycles than their paper, both counted from the cycle \
         that accepts the input (the papers' counts converted: {}).\n",
        late.len(),
        LATENCY_RULE
    );
    if !late.is_empty() {
        let _ = writeln!(
            o,
            "| engine | unit | latency cycles | paper, counted as ours |\n|---|---|---:|---:|"
        );
        for (r, ours, theirs) in late {
            let _ = writeln!(o, "| {} | {} | {} | {} |", r.engine, r.unit, ours, theirs);
        }
        o.push('\n');
    }
}

fn synth_section(s: &Snapshot, engine: &str, o: &mut String) {
    let rows: Vec<&SynthEntry> = s.synth.iter().filter(|r| r.engine == engine).collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "### Synthesis (default parameters: {})\n",
        rows[0].params.replace('|', "/")
    );
    let _ = writeln!(
        o,
        "| unit | library (clock) | cells | flops | area µm² | kGE | critical path ns | \
         Fmax MHz | target MHz | latency cycles | B/cycle | paper kGE / MHz / latency |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for r in rows {
        let target = target_mhz(&r.engine, &r.unit);
        let fmax = if r.liberty == "nangate45" && r.fmax_mhz >= target {
            format!("**{}**", num(r.fmax_mhz, 0))
        } else {
            num(r.fmax_mhz, 0)
        };
        let mark = crate::engines::paper_mark(&r.engine, &r.unit)
            .map(|m| {
                let kge = m
                    .kge
                    .map(|k| num(k, 1))
                    .or(m.kge_at_most.map(|k| format!("< {}", num(k, 1))));
                let mhz = m
                    .mhz
                    .map(|f| num(f, 0))
                    .or(m.mhz_at_least.map(|f| format!("> {}", num(f, 0))));
                format!("{} / {} / {}", opt(kge), opt(mhz), opt(m.latency_ours))
            })
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            o,
            "| {} | {} ({} ns) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.unit,
            r.liberty,
            r.clock_ns,
            num(r.cells as f64, 0),
            num(r.flops as f64, 0),
            num(r.area_um2, 0),
            num(r.kge, 2),
            num(r.critical_path_ns, 3),
            fmax,
            num(target, 0),
            opt(r.latency_cycles),
            r.bytes_per_cycle
                .map(|b| num(b, 2))
                .unwrap_or_else(|| "-".into()),
            mark
        );
    }
    let _ = writeln!(
        o,
        "\nBold: at or above the target on Nangate45. Paper area and clock are as published, at \
         the paper's node (compare them with the Nangate45 rows, scaled); paper latency is \
         counted as ours, from the cycle that accepts the input to the first output ({}).\n",
        LATENCY_RULE
    );
}

fn cosim_section(s: &Snapshot, engine: &str, o: &mut String) {
    let rows: Vec<&CosimEntry> = s.cosim.iter().filter(|c| c.engine == engine).collect();
    if rows.is_empty() {
        return;
    }
    let runs = {
        let mut v: Vec<&str> = rows.iter().map(|c| c.run.as_str()).collect();
        v.dedup();
        v.len()
    };
    let mismatches: u64 = rows.iter().map(|c| c.mismatches).sum();
    let _ = writeln!(
        o,
        "### Co-simulation against the golden model\n\n{} runs over {} parameter sets, {} \
         mismatches. Parameter sets are `verif/configs/<run>.yaml` (`default`: the default \
         configuration).\n",
        rows.len(),
        runs,
        mismatches
    );
    let _ = writeln!(
        o,
        "| run | unit | parameters | lines | cycles | mismatches | Mcycles/s |\n\
         |---|---|---|---:|---:|---:|---:|"
    );
    for c in rows {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} |",
            c.run,
            c.unit,
            c.params.replace('|', "/"),
            num(c.lines as f64, 0),
            num(c.cycles as f64, 0),
            c.mismatches,
            num(c.mcycles_per_s, 2)
        );
    }
    o.push('\n');
}

/// Reads a regression folder (`hwzip regress --out`, whole or merged) into a snapshot.
fn from_regress(dir: &Path) -> FlowResult<Snapshot> {
    let r = super::regress::read(dir)?;
    let evals = r
        .evals
        .into_iter()
        .map(|(engine, markdown)| EvalEntry { engine, markdown })
        .collect();
    snapshot(r.engines, &r.runs, evals)
}

/// The rows a regression of `engines` gives: theirs, and the shared cache block's when one
/// of them uses it.
fn covers(engines: &[String], row_engine: &str) -> bool {
    engines.iter().any(|e| e == row_engine)
        || (row_engine == BLOCK.engine
            && engines
                .iter()
                .any(|e| crate::engines::by_name(e).is_ok_and(|e| e.uses_cache_block())))
}

/// Position of an engine's rows on the page (registry order, the block after its first user).
fn rank(engine: &str) -> usize {
    parts()
        .iter()
        .position(|p| p.engine == engine)
        .unwrap_or(usize::MAX)
}

/// `old` with the rows of `new`'s engines taken from `new`: a long tier run one engine (or a
/// few) at a time joins into one page. The rows `old` keeps must come from a regression run
/// the same way (profile, lines, libraries, synthesis method) as `new`.
pub fn join(old: Snapshot, new: Snapshot) -> FlowResult<Snapshot> {
    let how = |s: &Snapshot| {
        format!(
            "{} profile, {} lines, {} ({})",
            s.profile,
            s.lines,
            s.libraries.join("+"),
            s.synth_method
        )
    };
    let (was, is) = (how(&old), how(&new));
    let ran: Vec<String> = new
        .sources
        .iter()
        .flat_map(|s| s.engines.iter().cloned())
        .collect();
    let mut sources: Vec<Source> = old
        .sources
        .into_iter()
        .filter_map(|mut s| {
            s.engines.retain(|e| !ran.contains(e));
            (!s.engines.is_empty()).then_some(s)
        })
        .collect();
    if !sources.is_empty() && was != is {
        let mut kept: Vec<String> = sources.iter().flat_map(|s| s.engines.clone()).collect();
        kept.sort_by_key(|e| rank(e));
        return Err(format!(
            "the snapshot's rows of {} come from a regression run as {was}, this one as {is}: \
             run it the same way, or all engines at once",
            kept.join(", ")
        ));
    }
    sources.extend(new.sources);
    sources.sort_by_key(|s| s.engines.iter().map(|e| rank(e)).min());
    fn rows<T>(old: Vec<T>, new: Vec<T>, ran: &[String], engine: impl Fn(&T) -> &str) -> Vec<T> {
        let mut v: Vec<T> = old
            .into_iter()
            .filter(|r| !covers(ran, engine(r)))
            .collect();
        v.extend(new);
        // Stable: each engine's rows keep their order.
        v.sort_by_key(|r| rank(engine(r)));
        v
    }
    Ok(Snapshot {
        sources,
        synth: rows(old.synth, new.synth, &ran, |r| &r.engine),
        cosim: rows(old.cosim, new.cosim, &ran, |r| &r.engine),
        tables: rows(old.tables, new.tables, &ran, |r| &r.engine),
        evals: rows(old.evals, new.evals, &ran, |r| &r.engine),
        // A regression does not place and route: the FPGA rows stay.
        fpga: old.fpga,
        closure: old.closure,
        ..new
    })
}

/// What `hwzip results` joins beside a regression.
#[derive(Clone, Debug, Default)]
pub struct More {
    /// `hwzip synth --fpga` (or `flow --fpga`) output folders: their units' FPGA rows.
    pub fpga: Vec<PathBuf>,
    /// `hwzip synth --config C --liberty nangate45` output folders: timing-closure rows, each
    /// folder's name naming its configuration.
    pub closure: Vec<PathBuf>,
}

/// `hwzip results`: with `from` (a regress folder), joins its rows into the snapshot (see
/// [`join`]; a new snapshot when there is none), and the folders of `more`; otherwise reads
/// the snapshot. Then renders the page to `out`. Both files are written as a set (all or
/// none).
pub fn write(from: Option<&Path>, more: &More, snapshot: &Path, out: &Path) -> FlowResult<()> {
    let mut set = crate::files::FileSet::new();
    let read = |p: &Path| -> FlowResult<Snapshot> {
        let bytes = crate::files::input::read(p, crate::files::input::Purpose::Config)
            .map_err(|e| format!("cannot read {}: {}", p.display(), e))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: not a results snapshot: {}", p.display(), e))
    };
    let mut snap = match from {
        Some(dir) => {
            let new = from_regress(dir)?;
            if snapshot.exists() {
                join(read(snapshot)?, new)?
            } else {
                new
            }
        }
        None => read(snapshot)?,
    };
    for dir in &more.fpga {
        let rows = super::fpga::read_rows(dir)?;
        snap.fpga = super::fpga::join(std::mem::take(&mut snap.fpga), rows, rank)?;
    }
    for dir in &more.closure {
        let rows = super::closure::read_rows(dir)?;
        snap.closure = super::closure::join(std::mem::take(&mut snap.closure), rows);
    }
    if from.is_some() || !more.fpga.is_empty() || !more.closure.is_empty() {
        let json = serde_json::to_string_pretty(&snap).map_err(|e| e.to_string())?;
        set.add(snapshot.to_path_buf(), json + "\n");
    }
    set.add(out.to_path_buf(), render(&snap) + "\n");
    set.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/RESULTS.md is what `hwzip results` renders from docs/results.json: regenerate it
    /// with `hwzip results` (or `--from build/regress` after a long-tier run), never by hand.
    #[test]
    fn the_committed_page_is_rendered_from_the_committed_snapshot() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let snap: Snapshot =
            serde_json::from_slice(&std::fs::read(root.join("docs/results.json")).unwrap())
                .unwrap();
        let page = std::fs::read_to_string(root.join("docs/RESULTS.md")).unwrap();
        assert!(
            page == render(&snap) + "\n",
            "docs/RESULTS.md differs from what `hwzip results` renders from docs/results.json"
        );
        // The long tier's: every engine synthesized and co-simulated.
        assert_eq!(snap.profile, "paper");
        for e in crate::engines::ALL {
            assert!(
                snap.synth.iter().any(|r| r.engine == e.name()),
                "{}",
                e.name()
            );
            assert!(
                snap.cosim.iter().any(|r| r.engine == e.name()),
                "{}",
                e.name()
            );
        }
    }

    fn source(engines: &[&str]) -> Source {
        Source {
            engines: engines.iter().map(|e| e.to_string()).collect(),
            ok: true,
            failures: Vec::new(),
            gate: Vec::new(),
        }
    }

    fn cosim(engine: &str, unit: &str, cycles: u64) -> CosimEntry {
        CosimEntry {
            run: "default".into(),
            engine: engine.into(),
            unit: unit.into(),
            params: "p".into(),
            lines: 10,
            cycles,
            mismatches: 0,
            mcycles_per_s: 1.0,
        }
    }

    fn snap(engines: &[&str], libraries: &[&str], cycles: u64) -> Snapshot {
        Snapshot {
            profile: "paper".into(),
            lines: 10,
            libraries: libraries.iter().map(|l| l.to_string()).collect(),
            synth_method: "full".into(),
            sources: vec![source(engines)],
            synth: Vec::new(),
            cosim: engines
                .iter()
                .flat_map(|&e| {
                    let mut v = vec![cosim(e, "comp", cycles)];
                    if covers(&[e.to_string()], BLOCK.engine) {
                        v.push(cosim(BLOCK.engine, "cache", cycles));
                    }
                    v
                })
                .collect(),
            tables: Vec::new(),
            evals: Vec::new(),
            fpga: Vec::new(),
            closure: Vec::new(),
        }
    }

    /// Engines measured one at a time join into one snapshot, each engine's rows from its
    /// latest regression, on the page in registry order.
    #[test]
    fn a_regression_of_some_engines_takes_over_their_rows() {
        let libs = ["osu018"];
        let s = join(snap(&["buddy"], &libs, 1), snap(&["zvc"], &libs, 2)).unwrap();
        assert_eq!(s.engines(), ["zvc", "buddy"]);
        let s = join(s, snap(&["buddy", "base-xor"], &libs, 3)).unwrap();
        assert_eq!(s.engines(), ["zvc", "base-xor", "buddy"]);
        let rows: Vec<(&str, u64)> = s
            .cosim
            .iter()
            .map(|c| (c.engine.as_str(), c.cycles))
            .collect();
        assert_eq!(
            rows,
            // The block's section follows its first user in the registry (PACT'12).
            [("zvc", 2), ("base-xor", 3), ("block", 3), ("buddy", 3)]
        );
        assert_eq!(s.sources.len(), 2);
        // A regression run another way cannot join rows it does not replace.
        let e = join(s.clone(), snap(&["adaptive"], &["nangate45"], 4)).unwrap_err();
        assert!(e.contains("zvc, base-xor, buddy"), "{e}");
        // It can replace them all.
        let all: Vec<&str> = crate::engines::ALL.iter().map(|e| e.name()).collect();
        let s = join(s, snap(&all, &["nangate45"], 5)).unwrap();
        assert_eq!(s.sources.len(), 1);
        assert!(s.cosim.iter().all(|c| c.cycles == 5));
        let page = render(&s);
        assert!(!page.contains("not in this snapshot"), "{page}");
        let page = render(&snap(&["zvc"], &libs, 1));
        assert!(page.contains("hwzip regress --engine buddy"), "{page}");
    }

    fn row(unit: &str, liberty: &str, fmax: f64, latency: u32) -> SynthEntry {
        SynthEntry {
            engine: "adaptive".into(),
            unit: unit.into(),
            params: "p".into(),
            liberty: liberty.into(),
            clock_ns: 1.0,
            cells: 1,
            flops: 1,
            area_um2: 1.0,
            kge: 1.0,
            critical_path_ns: 1000.0 / fmax,
            fmax_mhz: fmax,
            path: "a -> b".into(),
            latency_cycles: Some(latency),
            bytes_per_cycle: None,
        }
    }

    #[test]
    fn known_gaps_list_every_slow_or_late_unit() {
        let s = Snapshot {
            profile: "paper".into(),
            lines: 10,
            libraries: vec!["osu018".into(), "nangate45".into()],
            synth_method: "full".into(),
            sources: vec![source(&["adaptive"])],
            // BDI compressor: 2 cycles after acceptance in Table III, so 3 counted as ours.
            synth: vec![
                row("bdi_comp", "nangate45", 1100.0, 3),
                row("bdi_comp", "osu018", 300.0, 3),
                row("fpc_comp", "nangate45", 900.0, 99),
            ],
            cosim: Vec::new(),
            tables: Vec::new(),
            evals: Vec::new(),
            fpga: Vec::new(),
            closure: Vec::new(),
        };
        let page = render(&s);
        let gaps = &page[page.find("## Known gaps").unwrap()..page.find("## Timing").unwrap()];
        assert!(
            gaps.contains("1 of 2 units reach their target on Nangate45"),
            "{}",
            gaps
        );
        assert!(
            gaps.contains("| adaptive | fpc_comp | 900 | 1,000 |"),
            "{}",
            gaps
        );
        assert!(!gaps.contains("| adaptive | bdi_comp |"), "{}", gaps);
        assert!(gaps.contains("Latency: 1 units"), "{}", gaps);
        assert!(page.contains("| bdi_comp | nangate45 (1 ns) |"));
        assert!(page.contains("**1,100**"));
        // The closure table: bdi_comp at its default, fpc_comp with nothing that reaches it.
        assert!(
            page.contains("| adaptive | bdi_comp | 1,000 | 1,100 |"),
            "{page}"
        );
        assert!(page.contains("1 of 2 units reach their target on Nangate45 in some"));
    }

    #[test]
    fn every_engine_has_a_section_and_anchors_are_githubs() {
        let s: Vec<&str> = parts().iter().map(|p| p.engine).collect();
        assert_eq!(s.len(), crate::engines::ALL.len() + 1);
        assert!(s.contains(&"block"));
        assert_eq!(
            anchor("PACT'12 memory-link C-Pack"),
            "pact12-memory-link-c-pack"
        );
        assert_eq!(anchor("Metadata cache + MSHR"), "metadata-cache--mshr");
        assert_eq!(anchor("Base+XOR"), "basexor");
        assert_eq!(num(1234567.891, 2), "1,234,567.89");
        assert_eq!(num(-999.0, 0), "-999");
    }
}
