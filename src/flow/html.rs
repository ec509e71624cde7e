//! The blocks of the `report.html` pages ([`crate::report`]): per-unit area, Fmax and latency
//! beside the papers' figures, the co-simulation summary, paper tables, evaluation charts and
//! energy; the `synth` and `eval` pages. The flow's page is built in [`super::job`] and the
//! sweep's in [`super::sweep`] from these blocks.

use super::{cosim_markdown, CosimReport};
use crate::engines::{EvalOutput, PaperTable};
use crate::report::{derive, BarSeries, Block, Body, Chart, Limit, Mark, Page};
use crate::synth::{self, paper, ReportRow};

/// Bars of one quantity per unit (series per library) with the papers' values marked.
fn unit_bars(
    rows: &[ReportRow],
    title: &str,
    y: &str,
    value: impl Fn(&ReportRow) -> Option<f64>,
    paper_value: impl Fn(&paper::PaperMark) -> Option<(f64, Option<Limit>)>,
    per_library: bool,
) -> Option<Chart> {
    let mut cats: Vec<(String, String)> = Vec::new();
    let mut libs: Vec<String> = Vec::new();
    for r in rows {
        let c = (r.engine.clone(), r.unit.clone());
        if !cats.contains(&c) {
            cats.push(c);
        }
        if !libs.contains(&r.result.liberty) {
            libs.push(r.result.liberty.clone());
        }
    }
    if !per_library {
        libs.truncate(1);
    }
    let series: Vec<BarSeries> = libs
        .iter()
        .map(|l| BarSeries {
            name: if per_library {
                l.clone()
            } else {
                "measured".into()
            },
            values: cats
                .iter()
                .map(|(e, u)| {
                    rows.iter()
                        .find(|r| &r.engine == e && &r.unit == u && &r.result.liberty == l)
                        .and_then(&value)
                })
                .collect(),
        })
        .collect();
    if series.iter().all(|s| s.values.iter().all(Option::is_none)) {
        return None;
    }
    let marks: Vec<Mark> = cats
        .iter()
        .enumerate()
        .filter_map(|(i, (e, u))| {
            let (value, limit) = crate::engines::paper_mark(e, u).and_then(|m| paper_value(&m))?;
            Some(Mark {
                category: i,
                value,
                limit,
            })
        })
        .collect();
    let multi = cats.iter().any(|c| c.0 != cats[0].0);
    Some(Chart {
        title: title.into(),
        x_label: "unit".into(),
        y_label: y.into(),
        body: Body::Bars {
            categories: cats
                .iter()
                .map(|(e, u)| {
                    if multi {
                        format!("{}/{}", e, u)
                    } else {
                        u.clone()
                    }
                })
                .collect(),
            series,
            marks,
            mark_name: paper::LEGEND.into(),
        },
    })
}

/// A paper figure as a mark: its value, else its bound.
fn value_or_bound(
    value: Option<f64>,
    bound: Option<f64>,
    side: Limit,
) -> Option<(f64, Option<Limit>)> {
    value
        .map(|v| (v, None))
        .or_else(|| bound.map(|b| (b, Some(side))))
}

/// Synthesis section blocks: area, Fmax and latency charts, then the table.
pub fn synth_blocks(rows: &[ReportRow]) -> Vec<Block> {
    let mut b = Vec::new();
    let per_engine: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in rows {
            if !v.contains(&r.engine) {
                v.push(r.engine.clone());
            }
        }
        v
    };
    // The papers' areas and clocks are at 7-65 nm: they are drawn beside Nangate45 (45 nm)
    // only, never beside osu018 (180 nm) or sky130hd (130 nm) alone. Latency is
    // technology-independent and always drawn.
    let comparable = rows.iter().any(|r| r.result.liberty == "nangate45");
    let note = if comparable {
        ""
    } else {
        " (the papers' 7-65 nm figures are drawn beside Nangate45 only)"
    };
    for e in &per_engine {
        let mine: Vec<ReportRow> = rows.iter().filter(|r| &r.engine == e).cloned().collect();
        let charts = [
            unit_bars(
                &mine,
                &format!("{}: area{}", e, note),
                "kGE",
                |r| Some(r.result.kge),
                |m| value_or_bound(m.kge, m.kge_at_most, Limit::AtMost).filter(|_| comparable),
                true,
            ),
            unit_bars(
                &mine,
                &format!("{}: Fmax{}", e, note),
                "MHz",
                |r| Some(r.result.fmax_mhz).filter(|f| f.is_finite()),
                |m| value_or_bound(m.mhz, m.mhz_at_least, Limit::AtLeast).filter(|_| comparable),
                true,
            ),
            unit_bars(
                &mine,
                &format!("{}: latency", e),
                "cycles, first input beat to first output beat (accepting cycle counted)",
                |r| r.latency_cycles.map(f64::from),
                |m| m.latency_ours.map(|l| (f64::from(l), None)),
                false,
            )
            .map(|mut c| {
                if let Body::Bars { mark_name, .. } = &mut c.body {
                    *mark_name = paper::LATENCY_LEGEND.into();
                }
                c
            }),
        ];
        b.extend(charts.into_iter().flatten().map(Block::Chart));
    }
    b.push(Block::Markdown(synth::to_markdown(rows)));
    let mem = synth::report::memories_markdown(rows);
    if !mem.is_empty() {
        b.push(Block::Markdown(format!(
            "### Memories\n\n{}{}",
            super::MEMORIES_NOTE,
            mem
        )));
    }
    b
}

pub fn table_blocks(tables: &[PaperTable]) -> Vec<Block> {
    tables
        .iter()
        .flat_map(|t| {
            [
                Block::Markdown(format!("### {}", t.title)),
                Block::Markdown(t.markdown.clone()),
            ]
        })
        .collect()
}

pub fn cosim_blocks(reports: &[CosimReport]) -> Vec<Block> {
    let bad = reports.iter().filter(|r| r.stats.mismatches > 0).count();
    vec![
        Block::Text(format!(
            "{} unit(s) co-simulated against their golden models with random input gaps and \
             output stalls: {}.",
            reports.len(),
            if bad == 0 {
                "0 mismatches".to_string()
            } else {
                format!("{} unit(s) MISMATCH", bad)
            }
        )),
        Block::Markdown(cosim_markdown(reports)),
    ]
}

/// The `hwzip synth` page.
pub fn synth_page(title: &str, rows: &[ReportRow], tables: &[PaperTable]) -> Page {
    let mut p = Page::new(title);
    p.section("Synthesis", synth_blocks(rows));
    if !tables.is_empty() {
        p.section("Beside the papers", table_blocks(tables));
    }
    p
}

/// Adds the FPGA section: the place-and-route table and the routed Fmax per unit.
pub fn fpga_section(p: &mut Page, rows: &[crate::synth::fpga::FpgaRow]) {
    let names: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r.engine, r.unit))
        .collect();
    let chart = Chart {
        title: "post-route Fmax".into(),
        x_label: "unit".into(),
        y_label: "MHz".into(),
        body: Body::Bars {
            categories: names,
            series: vec![BarSeries {
                name: rows
                    .first()
                    .map_or_else(String::new, |r| r.result.device.clone()),
                values: rows.iter().map(|r| r.result.fmax_mhz).collect(),
            }],
            marks: Vec::new(),
            mark_name: String::new(),
        },
    };
    p.section(
        "FPGA place and route",
        vec![
            Block::Markdown(crate::synth::fpga::markdown(rows)),
            Block::Chart(chart),
        ],
    );
}

/// Adds the energy section: pJ per line per unit and library, the table, the papers.
pub fn energy_section(p: &mut Page, rows: &[super::energy::EnergyRow]) {
    let mut units: Vec<String> = Vec::new();
    let mut libs: Vec<String> = Vec::new();
    for r in rows {
        if !units.contains(&r.unit) {
            units.push(r.unit.clone());
        }
        if !libs.contains(&r.liberty) {
            libs.push(r.liberty.clone());
        }
    }
    let chart = Chart {
        title: "energy per line".into(),
        x_label: "unit".into(),
        y_label: "pJ per line".into(),
        body: Body::Bars {
            categories: units.clone(),
            series: libs
                .iter()
                .map(|l| BarSeries {
                    name: l.clone(),
                    values: units
                        .iter()
                        .map(|u| {
                            rows.iter()
                                .find(|r| &r.unit == u && &r.liberty == l)
                                .map(|r| r.pj_per_line)
                        })
                        .collect(),
                })
                .collect(),
            marks: Vec::new(),
            mark_name: String::new(),
        },
    };
    p.section(
        "Energy per line",
        vec![
            Block::Chart(chart),
            Block::Markdown(super::energy::markdown(rows)),
            Block::Markdown(super::energy::beside_papers(rows)),
        ],
    );
}

/// The `hwzip eval` page: the printed tables and the charts derived from them.
pub fn eval_page(engine: &str, out: &EvalOutput) -> Page {
    let mut p = Page::new(format!("hwzip eval: {}", engine));
    let mut charts = out.charts.clone();
    charts.extend(derive::charts(&out.markdown, engine, 8));
    if !charts.is_empty() {
        p.section("Charts", charts.into_iter().map(Block::Chart).collect());
    }
    p.section("Results", vec![Block::Markdown(out.markdown.clone())]);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::SynthResult;

    fn row(engine: &str, unit: &str, lib: &str, kge: f64) -> ReportRow {
        ReportRow {
            engine: engine.into(),
            unit: unit.into(),
            params: String::new(),
            latency_cycles: Some(3),
            throughput_bytes_per_cycle: Some(32.0),
            result: SynthResult {
                liberty: lib.into(),
                kge,
                fmax_mhz: 500.0,
                ..SynthResult::default()
            },
        }
    }

    #[test]
    fn synth_page_has_area_fmax_and_latency_with_paper_marks() {
        let rows = vec![
            row("cpack-lossy", "compressor", "osu018", 80.0),
            row("cpack-lossy", "compressor", "nangate45", 60.0),
            row("cpack-lossy", "decompressor", "osu018", 70.0),
        ];
        let p = synth_page("t", &rows, &[]);
        assert_eq!(p.charts(), 3);
        let h = p.html().unwrap();
        assert!(h.contains("cpack-lossy: area") && h.contains("cpack-lossy: Fmax"));
        assert!(h.contains(paper::LEGEND));
        // osu018 alone: no 65 nm area or clock marks beside 180 nm bars, and the title says
        // so; the latency marks stay.
        let osu = vec![row("cpack-lossy", "compressor", "osu018", 80.0)];
        let blocks = synth_blocks(&osu);
        let marks = |title: &str| -> usize {
            blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Chart(c) if c.title.starts_with(title) => match &c.body {
                        Body::Bars { marks, .. } => Some(marks.len()),
                        _ => None,
                    },
                    _ => None,
                })
                .sum()
        };
        assert_eq!(marks("cpack-lossy: area"), 0);
        assert_eq!(marks("cpack-lossy: Fmax"), 0);
        assert_eq!(marks("cpack-lossy: latency"), 1);
        assert_eq!(
            synth_blocks(&rows)
                .iter()
                .filter(|b| matches!(b, Block::Chart(c) if c.title.contains("Nangate45 only")))
                .count(),
            0
        );
    }

    /// The FPGA section: the table and a bar per unit (none for a unit without a routed
    /// register-to-register path).
    #[test]
    fn the_fpga_section_has_the_table_and_the_chart() {
        use crate::synth::fpga::{FpgaResult, FpgaRow};
        let row = |unit: &str, fmax: Option<f64>| FpgaRow {
            engine: "buddy".into(),
            unit: unit.into(),
            params: "p".into(),
            variant: false,
            result: FpgaResult {
                device: "ecp5-85k:CABGA381".into(),
                luts: 1200,
                luts_available: 83_640,
                fits: true,
                fmax_mhz: fmax,
                ..FpgaResult::default()
            },
        };
        let mut p = Page::new("t");
        fpga_section(
            &mut p,
            &[row("bpc-compress", Some(80.0)), row("addr-gen", None)],
        );
        let html = p.html().unwrap();
        assert!(html.contains("FPGA place and route"), "{html}");
        assert!(html.contains("1,200"), "{html}");
        assert!(html.contains("no register-to-register path"), "{html}");
        assert!(html.contains("<svg"), "{html}");
    }
}
