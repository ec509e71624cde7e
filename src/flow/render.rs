//! The flow's reports: `report.md`, `report.csv`, `report.json`, `report.html`, `cosim.md`
//! and the paper tables, with the failed steps marked in each.

use super::html;
use super::outcome::FlowReport;
use super::step::StepStatus;
use super::{cosim_markdown, FlowResult};
use crate::synth::{self, ReportRow};
use std::fmt::Write as _;
use std::path::Path;

/// The verdict of a run, as the summary line says it.
fn verdict(r: &FlowReport) -> String {
    if r.ok {
        return "every step ran and every unit matches its golden model".into();
    }
    let mut v = vec![format!(
        "**{} step(s) FAILED or MISMATCHED** (see Failed steps)",
        r.failures().len()
    )];
    if r.skipped() > 0 {
        v.push(format!(
            "{} skipped after the first failure (--fail-fast)",
            r.skipped()
        ));
    }
    v.join(", ")
}

/// The failed and mismatched steps as a Markdown table (empty when there are none).
fn failures_markdown(r: &FlowReport) -> String {
    let f = r.failures();
    if f.is_empty() {
        return String::new();
    }
    let cell = |t: &str| t.replace('|', "/").replace('\n', " ");
    let mut s = String::from(
        "| status | step | what | seconds | error | log |\n|---|---|---|---:|---|---|\n",
    );
    for st in f {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} | {} | {} |",
            st.status.name(),
            st.kind,
            st.what,
            st.seconds,
            cell(&st.detail),
            st.log
                .as_ref()
                .map(|l| format!("`{}`", cell(&l.display().to_string())))
                .unwrap_or_default()
        );
    }
    s
}

/// The Markdown table of every step with its status and time.
fn steps_markdown(r: &FlowReport) -> String {
    let mut s =
        String::from("| step | what | status | seconds | detail |\n|---|---|---|---:|---|\n");
    for st in &r.steps {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} | {} |",
            st.kind,
            st.what,
            st.status.name(),
            st.seconds,
            st.detail.replace('|', "/")
        );
    }
    s
}

/// Parent area, own logic and reused children of each hierarchical synthesis row (empty
/// when there is none).
fn hierarchy_markdown(rows: &[ReportRow]) -> String {
    let h: Vec<&ReportRow> = rows
        .iter()
        .filter(|r| !r.result.children.is_empty())
        .collect();
    if h.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "| engine | unit | liberty | area µm² | own logic µm² | children (instances × area µm² each) |\n\
         |---|---|---|---:|---:|---|\n",
    );
    for r in h {
        let kids: Vec<String> = r
            .result
            .children
            .iter()
            .map(|c| format!("{} {} × {:.0}", c.module, c.instances, c.area_um2))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {:.0} | {} |",
            r.engine,
            r.unit,
            r.result.liberty,
            r.result.area_um2,
            r.result.own_area_um2.unwrap_or(0.0),
            kids.join(", ")
        );
    }
    s
}

/// The flow's `report.md`: profile and verdict, the failed steps, co-simulation, synthesis,
/// the paper tables and the time and status of every step.
pub fn markdown(r: &FlowReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# hwzip flow report\n");
    let _ = writeln!(s, "{}\n", summary_line(r));
    let failed = failures_markdown(r);
    if !failed.is_empty() {
        let _ = writeln!(s, "## Failed steps\n\n{}", failed);
    }
    let _ = writeln!(s, "## Co-simulation\n\n{}", cosim_markdown(&r.cosim));
    if !r.synth.is_empty() {
        let _ = writeln!(s, "## Synthesis\n\n{}", synth::to_markdown(&r.synth));
    }
    let mem = synth::report::memories_markdown(&r.synth);
    if !mem.is_empty() {
        let _ = writeln!(s, "## Memories\n\n{}{}", super::MEMORIES_NOTE, mem);
    }
    let hier = hierarchy_markdown(&r.synth);
    if !hier.is_empty() {
        let _ = writeln!(
            s,
            "## Hierarchical synthesis\n\nUnits built of other units (and, with \
             `synth.hierarchy: families`, of repeated modules) map their own logic and reuse \
             their children's netlists; the area and the timing above cover the whole \
             netlist.\n\n{}",
            hier
        );
    }
    for t in &r.tables {
        let _ = writeln!(s, "## {}\n\n{}", t.title, t.markdown);
    }
    if !r.energy.is_empty() {
        let _ = writeln!(
            s,
            "## Energy per line\n\n{}",
            super::energy::report(&r.energy)
        );
    }
    if !r.fpga.is_empty() {
        let _ = writeln!(
            s,
            "## FPGA place and route\n\n{}",
            synth::fpga::markdown(&r.fpga)
        );
    }
    if let Some(p) = &r.prove {
        let _ = writeln!(s, "## Formal proofs\n\n{}", crate::formal::report::body(p));
    }
    let _ = writeln!(s, "## Steps\n\n{}", steps_markdown(r));
    for n in &r.notes {
        let _ = writeln!(s, "\nnote: {}", n);
    }
    s
}

/// The first line of the report: profile, settings, time and verdict.
fn summary_line(r: &FlowReport) -> String {
    format!(
        "Profile `{}`: {} lines per unit, libraries {} (synthesis: {}), {} worker(s), \
         Verilator models at -O{}{}; {:.0} s in all; {}.",
        r.profile.name(),
        r.lines,
        r.libraries.join(", "),
        r.synth_method,
        r.jobs,
        r.cxx_opt,
        r.leaf_cxx_opt
            .map(|l| format!(" (-O{} for units without child units)", l))
            .unwrap_or_default(),
        r.seconds,
        verdict(r)
    )
}

/// The `hwzip flow` page.
pub fn page(r: &FlowReport) -> crate::report::Page {
    let mut p = crate::report::Page::new("hwzip flow report");
    let failed = failures_markdown(r);
    let mut summary = vec![crate::report::Block::Markdown(summary_line(r))];
    if !failed.is_empty() {
        summary.push(crate::report::Block::Alert(format!(
            "### Failed steps\n{}",
            failed
        )));
    }
    p.section("Summary", summary);
    p.section("Co-simulation", html::cosim_blocks(&r.cosim));
    if !r.synth.is_empty() {
        p.section("Synthesis", html::synth_blocks(&r.synth));
    }
    let hier = hierarchy_markdown(&r.synth);
    if !hier.is_empty() {
        p.section(
            "Hierarchical synthesis",
            vec![crate::report::Block::Markdown(hier)],
        );
    }
    if !r.tables.is_empty() {
        p.section("Beside the papers", html::table_blocks(&r.tables));
    }
    if !r.energy.is_empty() {
        html::energy_section(&mut p, &r.energy);
    }
    if !r.fpga.is_empty() {
        html::fpga_section(&mut p, &r.fpga);
    }
    if let Some(pr) = &r.prove {
        p.section(
            "Formal proofs",
            vec![crate::report::Block::Markdown(crate::formal::report::body(
                pr,
            ))],
        );
    }
    p.section(
        "Steps",
        vec![crate::report::Block::Markdown(steps_markdown(r))],
    );
    p
}

/// The failed synthesis steps as `(engine, unit, liberty, error)` for `report.csv`.
fn failed_synth(r: &FlowReport) -> Vec<[String; 4]> {
    r.steps
        .iter()
        .filter(|s| s.kind == "synth" && s.status == StepStatus::Failed)
        .map(|s| {
            let mut w = s.what.splitn(3, ' ').map(str::to_string);
            let mut next = || w.next().unwrap_or_default();
            [next(), next(), next(), s.detail.clone()]
        })
        .collect()
}

/// Writes `report.md`, `report.csv` (synthesis rows), `report.json` (everything),
/// `cosim.md`, `<table>.md` for each paper table and, with FPGA rows, `fpga.md` and
/// `fpga.json`, with proofs `prove.md`, `prove.json` and `prove.html`, into `dir`.
pub fn write(r: &FlowReport, dir: &Path) -> FlowResult<()> {
    let json = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    let mut set = crate::files::FileSet::new();
    set.add(dir.join("report.md"), markdown(r));
    set.add(
        dir.join("report.csv"),
        synth::report::to_csv_with_failures(&r.synth, &failed_synth(r)),
    );
    set.add(dir.join("report.json"), json);
    set.add(dir.join("cosim.md"), cosim_markdown(&r.cosim));
    if !r.energy.is_empty() {
        super::energy::add(&mut set, &r.energy, dir)?;
    }
    if !r.fpga.is_empty() {
        super::fpga::add(&mut set, &r.fpga, dir)?;
    }
    if let Some(p) = &r.prove {
        crate::formal::report::add(&mut set, p, dir)?;
    }
    crate::report::add(&mut set, &page(r), dir)?;
    super::add_tables(&mut set, &r.tables, dir);
    set.commit()
}
