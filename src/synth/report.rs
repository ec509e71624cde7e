//! Report rows and renderers (Markdown, CSV, JSON) with a stable column order and fixed
//! precision: µm² 0 decimals, kGE 2, ns 3, MHz 0, bytes/cycle 2.

use serde::{Deserialize, Serialize};

use super::SynthResult;

/// One line of a synthesis report: which engine/unit, with what parameters, and its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportRow {
    /// Compression engine (e.g. `"zvc"`).
    pub engine: String,
    /// Hardware unit (e.g. `"compressor"`, `"decompressor"`).
    pub unit: String,
    /// Generator parameters, free text (e.g. `"lanes=32 width=32"`).
    pub params: String,
    /// Pipeline latency in cycles, if known.
    pub latency_cycles: Option<u32>,
    /// Sustained throughput in bytes per cycle, if known.
    pub throughput_bytes_per_cycle: Option<f64>,
    /// Synthesis result.
    pub result: SynthResult,
}

enum Cell {
    Text(String),
    Int(u64),
    Num(f64, usize),
    Empty,
}

impl Cell {
    fn render(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Num(v, _) if v.is_infinite() => "inf".into(),
            Cell::Num(v, _) if v.is_nan() => "nan".into(),
            Cell::Num(v, d) => {
                let s = format!("{v:.d$}", d = *d);
                // Avoid "-0" / "-0.000".
                if s.trim_start_matches('-')
                    .chars()
                    .all(|c| c == '0' || c == '.')
                {
                    s.trim_start_matches('-').to_string()
                } else {
                    s
                }
            }
            Cell::Empty => String::new(),
        }
    }

    fn json(&self) -> serde_json::Value {
        match self {
            Cell::Text(s) => serde_json::Value::String(s.clone()),
            Cell::Int(n) => serde_json::Value::from(*n),
            Cell::Num(v, _) if v.is_finite() => {
                serde_json::Value::from(self.render().parse::<f64>().unwrap_or(*v))
            }
            Cell::Num(..) | Cell::Empty => serde_json::Value::Null,
        }
    }
}

/// Column key, Markdown header, value.
type Column = (&'static str, &'static str, fn(&ReportRow) -> Cell);

const COLUMNS: [Column; 22] = [
    ("engine", "engine", |r| Cell::Text(r.engine.clone())),
    ("unit", "unit", |r| Cell::Text(r.unit.clone())),
    ("params", "params", |r| Cell::Text(r.params.clone())),
    ("liberty", "liberty", |r| {
        Cell::Text(r.result.liberty.clone())
    }),
    ("clock_ns", "clock ns", |r| Cell::Num(r.result.clock_ns, 3)),
    ("cells", "cells", |r| Cell::Int(r.result.cells)),
    ("seq_cells", "flops", |r| Cell::Int(r.result.seq_cells)),
    ("area_um2", "area µm²", |r| {
        Cell::Num(r.result.area_um2, 0)
    }),
    ("kge", "kGE", |r| Cell::Num(r.result.kge, 2)),
    ("critical_path_ns", "crit. path ns", |r| {
        Cell::Num(r.result.critical_path_ns, 3)
    }),
    ("path_levels", "levels", |r| {
        Cell::Int(u64::from(r.result.path_levels))
    }),
    ("fmax_mhz", "Fmax MHz", |r| Cell::Num(r.result.fmax_mhz, 0)),
    ("wns_ns", "WNS ns", |r| Cell::Num(r.result.wns_ns, 3)),
    ("tns_ns", "TNS ns", |r| Cell::Num(r.result.tns_ns, 3)),
    ("latency_cycles", "latency cyc", |r| {
        r.latency_cycles
            .map_or(Cell::Empty, |c| Cell::Int(u64::from(c)))
    }),
    ("throughput_bytes_per_cycle", "B/cycle", |r| {
        r.throughput_bytes_per_cycle
            .map_or(Cell::Empty, |t| Cell::Num(t, 2))
    }),
    ("path_from", "path from", |r| {
        Cell::Text(r.result.path_from.clone())
    }),
    ("path_to", "path to", |r| {
        Cell::Text(r.result.path_to.clone())
    }),
    ("fanout_buffers", "fo buffers", |r| {
        Cell::Int(r.result.fanout_buffers)
    }),
    ("max_flop_fanout", "max flop fo", |r| {
        Cell::Int(r.result.max_flop_fanout)
    }),
    ("yosys_seconds", "yosys s", |r| {
        Cell::Num(r.result.yosys_seconds, 2)
    }),
    ("sta_seconds", "sta s", |r| {
        Cell::Num(r.result.sta_seconds, 2)
    }),
];

/// Renders a GitHub-flavoured Markdown table (one row per [`ReportRow`]).
pub fn to_markdown(rows: &[ReportRow]) -> String {
    let esc = |s: String| s.replace('|', "\\|").replace('\n', " ");
    let mut out = String::new();
    let header: Vec<&str> = COLUMNS.iter().map(|c| c.1).collect();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    let align: Vec<&str> = COLUMNS
        .iter()
        .map(|(key, _, f)| match rows.first().map(f) {
            Some(Cell::Text(_)) => "---",
            _ if matches!(*key, "engine" | "unit" | "params" | "liberty") => "---",
            _ => "---:",
        })
        .collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for r in rows {
        let cells: Vec<String> = COLUMNS.iter().map(|c| esc(c.2(r).render())).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// Quotes one CSV cell (RFC 4180).
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders CSV (RFC 4180 quoting) with a header line of column keys.
pub fn to_csv(rows: &[ReportRow]) -> String {
    csv(rows, None)
}

/// [`to_csv`] with a `status` column: `ok` on every row, then one row per failed synthesis
/// `(engine, unit, liberty, error)` with only those cells filled and `FAILED: <error>`.
pub fn to_csv_with_failures(rows: &[ReportRow], failed: &[[String; 4]]) -> String {
    csv(rows, Some(failed))
}

fn csv(rows: &[ReportRow], failed: Option<&[[String; 4]]>) -> String {
    let mut out = COLUMNS.iter().map(|c| c.0).collect::<Vec<_>>().join(",");
    out.push_str(if failed.is_some() { ",status\n" } else { "\n" });
    for r in rows {
        let cells: Vec<String> = COLUMNS.iter().map(|c| csv_cell(&c.2(r).render())).collect();
        out.push_str(&cells.join(","));
        out.push_str(if failed.is_some() { ",ok\n" } else { "\n" });
    }
    for [engine, unit, liberty, error] in failed.unwrap_or_default() {
        let mut cells = vec![String::new(); COLUMNS.len()];
        for (k, v) in [("engine", engine), ("unit", unit), ("liberty", liberty)] {
            if let Some(i) = COLUMNS.iter().position(|c| c.0 == k) {
                cells[i] = csv_cell(v);
            }
        }
        cells.push(csv_cell(&format!("FAILED: {}", error)));
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// The memories of the rows that have RAMs ([`super::memories`]), one line per RAM: its
/// size, as flip-flops (area and worst path of its own run), as the best-fitting named macro,
/// and the unit's logic timed with its RAMs as ideal cells and as those macros. Empty when
/// no row has a RAM.
pub fn memories_markdown(rows: &[ReportRow]) -> String {
    let with: Vec<&ReportRow> = rows
        .iter()
        .filter(|r| !r.result.memories.is_empty())
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "| engine | unit | liberty | RAM | words × bits (lane) | as flops µm² | as flops path ns \
         | macro | macros µm² | access ns | unit without RAMs µm² | logic path ns, ideal RAM \
         | logic path ns, macro |\n\
         |---|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n",
    );
    let path = |r: &ReportRow, kind: &str| {
        r.result
            .model_paths
            .iter()
            .find(|p| p.rams == kind)
            .map_or("–".to_string(), |p| format!("{:.3}", p.path_ns))
    };
    for r in with {
        for m in &r.result.memories {
            let (mac, area, access) = match (&m.macro_fit, &m.macro_note) {
                (Some(f), _) => (
                    format!("{} × {} ({} × {})", f.cell, f.cols * f.rows, f.rows, f.cols),
                    format!("{:.0}", f.area_um2 * m.instances as f64),
                    format!("{:.3}", f.access_ns),
                ),
                (None, note) => (
                    note.clone().unwrap_or_default().replace('|', "/"),
                    "–".into(),
                    "–".into(),
                ),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} × {} | {} × {} ({}) | {:.0} | {:.3} | {} | {} | {} | {:.0} \
                 | {} | {} |\n",
                r.engine,
                r.unit,
                r.result.liberty,
                m.module,
                m.instances,
                m.words,
                m.width,
                m.lane,
                m.flop_area_um2 * m.instances as f64,
                m.flop_path_ns,
                mac,
                area,
                access,
                logic_um2(r),
                path(r, "ideal"),
                path(r, "macro"),
            ));
        }
    }
    out
}

/// A unit's area without its RAMs (its own logic and every child's but the RAMs'), µm².
fn logic_um2(r: &ReportRow) -> f64 {
    let rams: f64 = r
        .result
        .memories
        .iter()
        .map(|m| m.flop_area_um2 * m.instances as f64)
        .sum();
    r.result.area_um2 - rams
}

/// Renders a pretty JSON array of flat objects, keys in column order, numbers rounded like the
/// other renderers (missing / non-finite values are `null`); a row with RAMs also has
/// `memories` and `model_paths` ([`super::memories`]).
pub fn to_json(rows: &[ReportRow]) -> String {
    let mut out = String::from("[");
    for (i, r) in rows.iter().enumerate() {
        out.push_str(if i == 0 { "\n  {" } else { ",\n  {" });
        for (j, (key, _, f)) in COLUMNS.iter().enumerate() {
            let v = f(r).json();
            out.push_str(&format!(
                "{}\n    \"{key}\": {v}",
                if j == 0 { "" } else { "," }
            ));
        }
        if !r.result.memories.is_empty() {
            for (key, v) in [
                ("memories", serde_json::to_value(&r.result.memories)),
                ("model_paths", serde_json::to_value(&r.result.model_paths)),
            ] {
                let v = v.unwrap_or(serde_json::Value::Null);
                out.push_str(&format!(",\n    \"{key}\": {v}"));
            }
        }
        out.push_str("\n  }");
    }
    out.push_str(if rows.is_empty() { "]\n" } else { "\n]\n" });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn row() -> ReportRow {
        ReportRow {
            engine: "zvc".into(),
            unit: "compressor".into(),
            params: "lanes=32, width=32 | fast".into(),
            latency_cycles: Some(2),
            throughput_bytes_per_cycle: None,
            result: SynthResult {
                top: "t".into(),
                liberty: "NangateOpenCellLibrary".into(),
                clock_ns: 5.0,
                cells: 45,
                seq_cells: 8,
                comb_cells: 37,
                cell_types: BTreeMap::new(),
                area_um2: 2749.4,
                kge: 0.114_56,
                critical_path_ns: 1.06349,
                fmax_mhz: 940.3,
                wns_ns: -0.0,
                tns_ns: 0.0,
                path_from: "a_i_0_".into(),
                path_to: "_89_".into(),
                path_levels: 7,
                fanout_buffers: 0,
                max_flop_fanout: 3,
                yosys_seconds: 0.181,
                sta_seconds: 0.05,
                netlist: "n.v".into(),
                ..SynthResult::default()
            },
        }
    }

    #[test]
    fn markdown() {
        let md = to_markdown(&[row()]);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("| engine | unit | params | liberty | clock ns |"));
        assert!(
            lines[2].contains("| 2749 | 0.11 | 1.063 | 7 | 940 | 0.000 |"),
            "{md}"
        );
        assert!(lines[2].contains("lanes=32, width=32 \\| fast"), "{md}");
    }

    #[test]
    fn csv() {
        let csv = to_csv(&[row()]);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0]
            .starts_with("engine,unit,params,liberty,clock_ns,cells,seq_cells,area_um2,kge,"));
        assert!(lines[1].starts_with("zvc,compressor,\"lanes=32, width=32 | fast\",NangateOpenCellLibrary,5.000,45,8,2749,0.11,1.063,7,940,"), "{csv}");
        assert!(lines[1].contains(",2,,a_i_0_,_89_,"), "{csv}");
    }

    #[test]
    fn json_is_valid_and_ordered() {
        let js = to_json(&[row(), row()]);
        let v: serde_json::Value = serde_json::from_str(&js).expect("valid json");
        assert_eq!(v.as_array().map(Vec::len), Some(2));
        assert_eq!(v[0]["area_um2"], serde_json::json!(2749.0));
        assert_eq!(v[0]["critical_path_ns"], serde_json::json!(1.063));
        assert_eq!(v[0]["throughput_bytes_per_cycle"], serde_json::Value::Null);
        assert!(js.find("\"engine\"") < js.find("\"sta_seconds\""));
        assert_eq!(to_json(&[]), "[]\n");
    }
}
