//! The timing-closure rows of the results snapshot: units synthesized on Nangate45 in a named
//! configuration (`hwzip synth --config C --liberty nangate45 --out DIR`, joined by
//! `hwzip results --closure DIR`), shown beside the default configuration's row of each unit
//! with what reaching the target costs in cycles and area.

use super::FlowResult;
use crate::report::{num, opt, round};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

/// The library timing closure is judged on (the one nearest the papers' nodes).
pub const CLOSURE_LIBRARY: &str = "nangate45";

/// A unit's default-configuration row on the closure library, and its target clock.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// Engine.
    pub engine: String,
    /// Unit.
    pub unit: String,
    /// Target clock, MHz.
    pub target_mhz: f64,
    /// Fmax, MHz.
    pub fmax_mhz: f64,
    /// Area, kGE.
    pub kge: f64,
    /// Latency, cycles.
    pub latency_cycles: Option<u32>,
    /// Uncompressed bytes per cycle.
    pub bytes_per_cycle: Option<f64>,
}

/// One unit synthesized in a named configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClosureEntry {
    /// Configuration name (the synthesis output folder's name).
    pub config: String,
    /// Engine.
    pub engine: String,
    /// Unit.
    pub unit: String,
    /// Generator parameters.
    pub params: String,
    /// Fmax, MHz: the unit's, or with its RAMs as the named macros when it has RAMs and
    /// every one has a fitting macro.
    pub fmax_mhz: f64,
    /// Area, µm² (logic plus macros when the macros are used).
    pub area_um2: f64,
    /// Area, kGE.
    pub kge: f64,
    /// Latency, cycles.
    pub latency_cycles: Option<u32>,
    /// Uncompressed bytes per cycle.
    pub bytes_per_cycle: Option<f64>,
    /// The macros the RAMs are built of (`cell x count`), empty when none.
    pub macros: String,
}

fn f64_of(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn str_of(v: &Value, key: &str) -> FlowResult<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("a row without `{key}`"))
}

/// One row of a synthesis `report.json` as a closure entry, its RAMs as macros when every RAM
/// has a fitting one and the macro timing ran.
fn entry(config: &str, v: &Value) -> FlowResult<ClosureEntry> {
    let area = f64_of(v, "area_um2").ok_or("a row without `area_um2`")?;
    let kge = f64_of(v, "kge").ok_or("a row without `kge`")?;
    let mut fmax = f64_of(v, "fmax_mhz").ok_or("a row without `fmax_mhz`")?;
    let mut area_um2 = area;
    let mut macros = Vec::new();
    let mems = v.get("memories").and_then(Value::as_array);
    let macro_path = v
        .get("model_paths")
        .and_then(Value::as_array)
        .and_then(|p| p.iter().find(|p| p["rams"] == "macro"))
        .and_then(|p| f64_of(p, "path_ns"));
    if let (Some(mems), Some(path)) = (mems, macro_path) {
        let mut logic = area;
        for m in mems {
            let n = m["instances"].as_f64().unwrap_or(0.0);
            logic -= f64_of(m, "flop_area_um2").unwrap_or(0.0) * n;
            let fit = &m["macro_fit"];
            let per = f64_of(fit, "area_um2").ok_or("a RAM without a fitting macro")?;
            logic += per * n;
            let count = fit["cols"].as_f64().unwrap_or(1.0) * fit["rows"].as_f64().unwrap_or(1.0);
            macros.push(format!(
                "{} x {}",
                fit["cell"].as_str().unwrap_or("?"),
                count * n
            ));
        }
        area_um2 = logic;
        fmax = 1000.0 / path;
    }
    Ok(ClosureEntry {
        config: config.to_string(),
        engine: str_of(v, "engine")?,
        unit: str_of(v, "unit")?,
        params: str_of(v, "params")?,
        fmax_mhz: round(fmax, 0),
        area_um2: round(area_um2, 0),
        kge: round(area_um2 * kge / area, 2),
        latency_cycles: v["latency_cycles"].as_u64().map(|l| l as u32),
        bytes_per_cycle: f64_of(v, "throughput_bytes_per_cycle").map(|b| round(b, 2)),
        macros: macros.join(", "),
    })
}

/// The Nangate45 rows of a synthesis output folder (`report.json`), named by the folder.
pub fn read_rows(dir: &Path) -> FlowResult<Vec<ClosureEntry>> {
    let p = dir.join("report.json");
    let config = std::path::absolute(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("{}: a folder with a name is needed", dir.display()))?;
    let bytes = crate::files::input::read(&p, crate::files::input::Purpose::Config)
        .map_err(|e| format!("cannot read {}: {}", p.display(), e))?;
    let bad = |e: String| format!("{}: not a `hwzip synth` report: {}", p.display(), e);
    let rows: Vec<Value> = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    let rows: Vec<ClosureEntry> = rows
        .iter()
        .filter(|v| v["liberty"] == CLOSURE_LIBRARY)
        .map(|v| entry(&config, v).map_err(bad))
        .collect::<FlowResult<_>>()?;
    if rows.is_empty() {
        return Err(format!("{}: no {CLOSURE_LIBRARY} rows", p.display()));
    }
    Ok(rows)
}

/// `old` with the rows of each (configuration, engine) of `new` taken from `new`.
pub fn join(old: Vec<ClosureEntry>, new: Vec<ClosureEntry>) -> Vec<ClosureEntry> {
    let ran = |r: &ClosureEntry| {
        new.iter()
            .any(|n| n.config == r.config && n.engine == r.engine)
    };
    let mut rows: Vec<ClosureEntry> = old.into_iter().filter(|r| !ran(r)).collect();
    rows.extend(new);
    rows
}

/// The page's timing-closure section: every default Nangate45 row, and for each unit below
/// its target the configuration that reaches it (the smallest that does) or else the fastest.
pub fn section(n45: &[Baseline], rows: &[ClosureEntry], o: &mut String) {
    if n45.is_empty() {
        return;
    }
    let _ = writeln!(o, "## Timing closure\n");
    let _ = writeln!(
        o,
        "Every unit on Nangate45 at its default parameters and, where that is below the \
         target clock, in the configuration that reaches it (`hwzip synth --config C \
         --liberty nangate45 --out DIR`, joined by `hwzip results --closure DIR`; the \
         configuration is named by that folder). Of several that reach it the smallest is \
         shown; when none does, the fastest. A configuration with memory macros gives the \
         unit's logic timed with the macros' timing and its area with the macros' \
         (docs/MEMORIES.md). Cost: cycles and kGE against the default.\n"
    );
    let _ = writeln!(
        o,
        "| engine | unit | target MHz | default MHz | kGE | latency | configuration | MHz | kGE \
         | latency | B/cycle (default) | cost |\n\
         |---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"
    );
    let mut reached = 0;
    for d in n45 {
        let target = d.target_mhz;
        let head = format!(
            "| {} | {} | {} | {} | {} | {} |",
            d.engine,
            d.unit,
            num(target, 0),
            num(d.fmax_mhz, 0),
            num(d.kge, 1),
            opt(d.latency_cycles)
        );
        if d.fmax_mhz >= target {
            reached += 1;
            let _ = writeln!(o, "{head} default | | | | | |");
            continue;
        }
        let mine: Vec<&ClosureEntry> = rows
            .iter()
            .filter(|r| r.engine == d.engine && r.unit == d.unit)
            .collect();
        let best = mine
            .iter()
            .filter(|r| r.fmax_mhz >= target)
            .min_by(|a, b| a.kge.total_cmp(&b.kge))
            .or_else(|| mine.iter().max_by(|a, b| a.fmax_mhz.total_cmp(&b.fmax_mhz)));
        let Some(c) = best else {
            let _ = writeln!(o, "{head} - | | | | | |");
            continue;
        };
        if c.fmax_mhz >= target {
            reached += 1;
        }
        let fmax = if c.fmax_mhz >= target {
            format!("**{}**", num(c.fmax_mhz, 0))
        } else {
            num(c.fmax_mhz, 0)
        };
        let cycles = match (c.latency_cycles, d.latency_cycles) {
            (Some(a), Some(b)) => format!("{:+} cycles, ", a as i64 - b as i64),
            _ => String::new(),
        };
        let bpc = match (c.bytes_per_cycle, d.bytes_per_cycle) {
            (Some(a), Some(b)) => format!("{} ({})", num(a, 2), num(b, 2)),
            (a, _) => opt(a.map(|a| num(a, 2))),
        };
        let macros = if c.macros.is_empty() {
            String::new()
        } else {
            format!(" with {}", c.macros)
        };
        let _ = writeln!(
            o,
            "{head} {}{} | {} | {} | {} | {} | {}{:+.1} kGE |",
            c.config,
            macros,
            fmax,
            num(c.kge, 1),
            opt(c.latency_cycles),
            bpc,
            cycles,
            c.kge - d.kge
        );
    }
    let _ = writeln!(
        o,
        "\n{} of {} units reach their target on Nangate45 in some configuration; bold: at or \
         above it.\n",
        reached,
        n45.len()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"[
      {"engine": "e", "unit": "cache", "params": "p", "liberty": "nangate45",
       "area_um2": 1000.0, "kge": 1250.0, "fmax_mhz": 700.0, "latency_cycles": 2,
       "throughput_bytes_per_cycle": null,
       "memories": [{"module": "ram", "instances": 2, "words": 32, "width": 32, "lane": 8,
                     "flop_area_um2": 300.0, "flop_path_ns": 0.5,
                     "macro_fit": {"cell": "m32", "cols": 1, "rows": 1, "area_um2": 50.0,
                                   "access_ns": 0.2, "setup_ns": 0.05}}],
       "model_paths": [{"rams": "ideal", "path_ns": 0.8, "from": "a", "to": "b"},
                       {"rams": "macro", "path_ns": 0.9, "from": "a", "to": "b"}]},
      {"engine": "e", "unit": "comp", "params": "p", "liberty": "nangate45",
       "area_um2": 400.0, "kge": 500.0, "fmax_mhz": 1100.0, "latency_cycles": 5,
       "throughput_bytes_per_cycle": 32.0},
      {"engine": "e", "unit": "comp", "params": "p", "liberty": "osu018",
       "area_um2": 9.0, "kge": 9.0, "fmax_mhz": 300.0, "latency_cycles": 5,
       "throughput_bytes_per_cycle": 32.0}
    ]"#;

    fn base(unit: &str, fmax: f64, kge: f64, latency: u32) -> Baseline {
        Baseline {
            engine: "e".into(),
            unit: unit.into(),
            target_mhz: 1000.0,
            fmax_mhz: fmax,
            kge,
            latency_cycles: Some(latency),
            bytes_per_cycle: Some(32.0),
        }
    }

    /// A unit with RAMs counts its logic with the macros' area and timing; only the closure
    /// library's rows are read; the folder names the configuration.
    #[test]
    fn rows_are_read_with_their_macros_and_shown_beside_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("fast");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("report.json"), REPORT).unwrap();
        let rows = read_rows(&d).unwrap();
        assert_eq!(rows.len(), 2);
        let cache = &rows[0];
        assert_eq!(cache.config, "fast");
        // 1000 - 2 x 300 (flops) + 2 x 50 (macros); kGE at the row's own ratio.
        assert_eq!((cache.area_um2, cache.kge), (500.0, 625.0));
        assert_eq!((cache.fmax_mhz, cache.macros.as_str()), (1111.0, "m32 x 2"));
        let defaults = [
            base("cache", 700.0, 1300.0, 2),
            base("comp", 900.0, 400.0, 4),
            base("dec", 1200.0, 10.0, 1),
            base("lone", 500.0, 10.0, 1),
        ];
        let mut page = String::new();
        section(&defaults, &rows, &mut page);
        assert!(page.contains("| e | cache | 1,000 | 700 | 1,300.0 | 2 | fast with m32 x 2 | **1,111** | 625.0 | 2 |"), "{page}");
        assert!(page.contains("+1 cycles, +100.0 kGE |"), "{page}");
        assert!(
            page.contains("| e | dec | 1,000 | 1,200 | 10.0 | 1 | default |"),
            "{page}"
        );
        assert!(
            page.contains("| e | lone | 1,000 | 500 | 10.0 | 1 | - |"),
            "{page}"
        );
        assert!(page.contains("3 of 4 units reach"), "{page}");
        // A later run of the same configuration and engine takes its rows over.
        let mut again = rows.clone();
        again.truncate(1);
        again[0].fmax_mhz = 999.0;
        let joined = join(rows, again);
        assert_eq!(joined.len(), 1);
        assert_eq!(joined[0].fmax_mhz, 999.0);
        std::fs::write(d.join("report.json"), "{}").unwrap();
        assert!(read_rows(&d)
            .unwrap_err()
            .contains("not a `hwzip synth` report"));
    }
}
