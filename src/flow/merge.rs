//! Joins the reports of the shards of one flow run (`--shard K/N` on n machines) into the
//! report the unsharded run writes: the same co-simulation results and synthesis rows in the
//! same order, the paper tables rebuilt from all the rows, every step once.

use super::job::order_results;
use super::outcome::FlowReport;
use super::FlowResult;
use crate::engines::{self, EngineRef};

/// Merges the shards' reports of one run. Every part must come from the same run (profile,
/// lines, libraries); steps every shard does (generating each engine) are kept once, the
/// wall time is the slowest shard's.
pub fn merge_reports(parts: Vec<FlowReport>) -> FlowResult<FlowReport> {
    let mut it = parts.into_iter();
    let mut out = it.next().ok_or("no report to merge")?;
    let mut cores = std::mem::take(&mut out.tables);
    for p in it {
        if p.profile != out.profile || p.lines != out.lines || p.libraries != out.libraries {
            return Err(format!(
                "the shards ran different jobs ({} profile, {} lines, {} against {} profile, \
                 {} lines, {})",
                out.profile.name(),
                out.lines,
                out.libraries.join("+"),
                p.profile.name(),
                p.lines,
                p.libraries.join("+")
            ));
        }
        out.seconds = out.seconds.max(p.seconds);
        out.ok &= p.ok;
        for s in p.steps {
            let dup = s.kind == "gen"
                && out
                    .steps
                    .iter()
                    .any(|o| o.kind == "gen" && o.what == s.what);
            if !dup {
                out.steps.push(s);
            }
        }
        out.cosim.extend(p.cosim);
        out.synth.extend(p.synth);
        out.energy.extend(p.energy);
        cores.extend(p.tables);
        for n in p.notes {
            if !out.notes.contains(&n) {
                out.notes.push(n);
            }
        }
    }
    let engines: Vec<EngineRef> = engines::ALL.to_vec();
    order_results(&engines, &out.libraries, &mut out.cosim, &mut out.synth);
    out.ok &= out.cosim.iter().all(|c| c.stats.mismatches == 0);
    // Each engine's core table (one shard ran it), then its table of the merged rows, as
    // the unsharded run orders them.
    for e in &engines {
        let rows: Vec<_> = out
            .synth
            .iter()
            .filter(|r| r.engine == e.name())
            .cloned()
            .collect();
        let rows_table = e.rows_table(&rows);
        let mut seen: Vec<&str> = rows_table.iter().map(|t| t.file.as_str()).collect();
        for t in cores.iter().filter(|t| t.engine == e.name()) {
            if !seen.contains(&t.file.as_str()) {
                seen.push(&t.file);
                out.tables.push(t.clone());
            }
        }
        out.tables.extend(rows_table);
    }
    Ok(out)
}
