//! Charts of a report as data, rendered to inline SVG with `plotters` (SVG backend; text is
//! left to the browser's fonts, so nothing is rasterized and no font file is needed).

use plotters::prelude::*;
use serde::Serialize;

/// One series of a bar chart: a value per category (`None`: no bar).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BarSeries {
    /// Legend name.
    pub name: String,
    /// One value per category.
    pub values: Vec<Option<f64>>,
}

/// A paper's value marked on a bar chart's category: a black tick across the category.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mark {
    /// Category index.
    pub category: usize,
    /// Value.
    pub value: f64,
}

/// A named point of a scatter plot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// Label (shown for points on the front).
    pub label: String,
    /// On the Pareto front.
    pub front: bool,
}

/// What a chart shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Body {
    /// Grouped bars per category, with the paper's values marked.
    Bars {
        /// Category names (x axis).
        categories: Vec<String>,
        /// Series (one bar per category each).
        series: Vec<BarSeries>,
        /// The papers' values.
        marks: Vec<Mark>,
        /// Legend name of the marks (`paper (65 nm, scaled)`).
        mark_name: String,
    },
    /// Points with the Pareto front (minimize x, maximize y) joined by a line.
    Scatter {
        /// Points.
        points: Vec<Point>,
    },
    /// Lines over a numeric x.
    Lines {
        /// `(name, points)`.
        series: Vec<(String, Vec<(f64, f64)>)>,
    },
}

/// A chart with its title and axis names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// x-axis description.
    pub x_label: String,
    /// y-axis description.
    pub y_label: String,
    /// Content.
    pub body: Body,
}

const W: u32 = 760;
const H: u32 = 380;

fn color(i: usize) -> RGBColor {
    // A colour-blind-safe qualitative palette (Okabe-Ito without black).
    const C: [(u8, u8, u8); 7] = [
        (0, 114, 178),
        (230, 159, 0),
        (0, 158, 115),
        (204, 121, 167),
        (86, 180, 233),
        (213, 94, 0),
        (240, 228, 66),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}

/// The axis range of values from `lo` to `hi`, padded; `0..1` when there is no finite value
/// (an empty chart), so that the mesh never spans an inverted or infinite range.
fn span(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) || lo > hi {
        return (0.0, 1.0);
    }
    if hi > lo {
        let pad = (hi - lo) * 0.08;
        (lo - pad, hi + pad)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

type Plot<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A captioned frame with a mesh and axis descriptions over `x` × `y`.
fn frame<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    c: &Chart,
    x: (f64, f64),
    y: (f64, f64),
) -> Result<Plot<'a, 'b>, String> {
    let mut chart = ChartBuilder::on(root)
        .caption(&c.title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x.0..x.1, y.0..y.1)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(&c.x_label)
        .y_desc(&c.y_label)
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// Many or long category names: bars run horizontally, names readable on the left.
fn horizontal(categories: &[String]) -> bool {
    categories.len() > 6 || categories.iter().map(|c| c.chars().count()).sum::<usize>() > 60
}

impl Chart {
    /// The chart as an SVG element (no XML declaration), to inline in HTML.
    pub fn svg(&self) -> Result<String, String> {
        let mut buf = String::new();
        {
            let h = match &self.body {
                Body::Bars {
                    categories, series, ..
                } if horizontal(categories) => {
                    let per = (series.len() as u32 * 7).max(18);
                    (100 + categories.len() as u32 * per).max(H)
                }
                _ => H,
            };
            let root = SVGBackend::with_string(&mut buf, (W, h)).into_drawing_area();
            self.draw(&root)
                .map_err(|e| format!("chart `{}`: {}", self.title, e))?;
            root.present()
                .map_err(|e| format!("chart `{}`: {}", self.title, e))?;
        }
        Ok(buf)
    }

    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    ) -> Result<(), Box<dyn std::error::Error + '_>> {
        root.fill(&WHITE)?;
        match &self.body {
            Body::Bars {
                categories,
                series,
                marks,
                mark_name,
            } => self.bars(root, categories, series, marks, mark_name),
            Body::Scatter { points } => self.scatter(root, points),
            Body::Lines { series } => self.lines(root, series),
        }
    }

    fn bars(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        categories: &[String],
        series: &[BarSeries],
        marks: &[Mark],
        mark_name: &str,
    ) -> Result<(), Box<dyn std::error::Error + '_>> {
        let n = categories.len().max(1);
        let top = series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
            .chain(marks.iter().map(|m| m.value))
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let flip = horizontal(categories);
        // Headroom for the legend beyond the longest bar.
        let legend = (series.len() + usize::from(!marks.is_empty())) as f64;
        let head = if flip { 1.3 } else { 1.15 + 0.06 * legend };
        let top = if top > 0.0 { top * head } else { 1.0 };
        let cats = categories.to_vec();
        let name = move |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
                cats[i as usize].clone()
            } else {
                String::new()
            }
        };
        let k = series.len().max(1) as f64;
        let w = 0.8 / k;
        let longest = categories
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0) as u32;
        let mut b = ChartBuilder::on(root);
        b.caption(&self.title, ("sans-serif", 17)).margin(12);
        // Category c sits at position c (vertical bars) or n-1-c (horizontal bars, the first
        // category on top); a bar is [lo, lo + w) across, [0, v] along the value axis.
        let pos = move |c: usize| if flip { (n - 1 - c) as f64 } else { c as f64 };
        let rect = move |c: usize, s: usize, v: f64| {
            let lo = pos(c) - 0.4 + s as f64 * w;
            let hi = lo + w * 0.92;
            if flip {
                [(0.0, lo), (v, hi)]
            } else {
                [(lo, 0.0), (hi, v)]
            }
        };
        let tick = move |c: usize, v: f64| {
            let p = pos(c);
            if flip {
                vec![(v, p - 0.45), (v, p + 0.45)]
            } else {
                vec![(p - 0.45, v), (p + 0.45, v)]
            }
        };
        let across = -0.5f64..(n as f64 - 0.5);
        let (xr, yr) = if flip {
            (0f64..top, across)
        } else {
            (across, 0f64..top)
        };
        let mut chart = if flip {
            b.x_label_area_size(44)
                .y_label_area_size(24 + 7 * longest.min(40))
                .build_cartesian_2d(xr, yr)?
        } else {
            b.x_label_area_size(48)
                .y_label_area_size(64)
                .build_cartesian_2d(xr, yr)?
        };
        {
            let mut mesh = chart.configure_mesh();
            let fwd = name.clone();
            let rev = move |y: &f64| fwd(&((n - 1) as f64 - y));
            if flip {
                mesh.disable_y_mesh()
                    .y_labels(n * 2 + 1)
                    .y_label_formatter(&rev)
                    .x_desc(&self.y_label)
                    .y_desc(&self.x_label)
                    .draw()?;
            } else {
                mesh.disable_x_mesh()
                    .x_labels(n * 2 + 1)
                    .x_label_formatter(&name)
                    .x_desc(&self.x_label)
                    .y_desc(&self.y_label)
                    .draw()?;
            }
        }
        for (si, s) in series.iter().enumerate() {
            let c = color(si);
            let bars =
                s.values.iter().enumerate().filter_map(move |(ci, v)| {
                    Some(Rectangle::new(rect(ci, si, (*v)?), c.filled()))
                });
            chart
                .draw_series(bars)?
                .label(&s.name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        if !marks.is_empty() {
            let ticks = marks
                .iter()
                .map(|m| PathElement::new(tick(m.category, m.value), BLACK.stroke_width(3)));
            chart.draw_series(ticks)?.label(mark_name).legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 12, y)], BLACK.stroke_width(3))
            });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    }

    fn scatter(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        points: &[Point],
    ) -> Result<(), Box<dyn std::error::Error + '_>> {
        let fold = |f: fn(f64, f64) -> f64, init: f64, g: fn(&Point) -> f64| {
            points.iter().map(g).filter(|v| v.is_finite()).fold(init, f)
        };
        let (x0, x1) = span(
            fold(f64::min, f64::MAX, |p| p.x),
            fold(f64::max, f64::MIN, |p| p.x),
        );
        let (y0, y1) = span(
            fold(f64::min, f64::MAX, |p| p.y),
            fold(f64::max, f64::MIN, |p| p.y),
        );
        let mut chart = frame(root, self, (x0, x1), (y0, y1))?;
        let other = color(0);
        chart
            .draw_series(
                points
                    .iter()
                    .filter(|p| !p.front)
                    .map(|p| Circle::new((p.x, p.y), 4, other.filled())),
            )?
            .label("design point")
            .legend(move |(x, y)| Circle::new((x + 6, y), 4, other.filled()));
        let mut front: Vec<&Point> = points.iter().filter(|p| p.front).collect();
        front.sort_by(|a, b| a.x.total_cmp(&b.x));
        let fc = color(5);
        chart.draw_series(LineSeries::new(
            front.iter().map(|p| (p.x, p.y)),
            fc.stroke_width(2),
        ))?;
        chart
            .draw_series(
                front
                    .iter()
                    .map(|p| Circle::new((p.x, p.y), 5, fc.filled())),
            )?
            .label("Pareto front")
            .legend(move |(x, y)| Circle::new((x + 6, y), 5, fc.filled()));
        chart.draw_series(
            front
                .iter()
                .map(|p| Text::new(p.label.clone(), (p.x, p.y), ("sans-serif", 11).into_font())),
        )?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    }

    fn lines(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        series: &[(String, Vec<(f64, f64)>)],
    ) -> Result<(), Box<dyn std::error::Error + '_>> {
        let all = || series.iter().flat_map(|(_, p)| p.iter().copied());
        let (x0, x1) = span(
            all().map(|p| p.0).fold(f64::MAX, f64::min),
            all().map(|p| p.0).fold(f64::MIN, f64::max),
        );
        let (y0, y1) = span(
            all().map(|p| p.1).fold(f64::MAX, f64::min),
            all().map(|p| p.1).fold(f64::MIN, f64::max),
        );
        let mut chart = frame(root, self, (x0, x1), (y0, y1))?;
        for (i, (name, pts)) in series.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 12, y)], c.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_renders_an_svg_with_its_title() {
        let charts = [
            Chart {
                title: "area".into(),
                x_label: "unit".into(),
                y_label: "kGE".into(),
                body: Body::Bars {
                    categories: vec!["a".into(), "b".into()],
                    series: vec![BarSeries {
                        name: "osu018".into(),
                        values: vec![Some(1.0), None],
                    }],
                    marks: vec![Mark {
                        category: 1,
                        value: 2.0,
                    }],
                    mark_name: "paper".into(),
                },
            },
            Chart {
                title: "front".into(),
                x_label: "µm²".into(),
                y_label: "GB/s".into(),
                body: Body::Scatter {
                    points: vec![
                        Point {
                            x: 1.0,
                            y: 1.0,
                            label: "p0".into(),
                            front: true,
                        },
                        Point {
                            x: 2.0,
                            y: 0.5,
                            label: "p1".into(),
                            front: false,
                        },
                    ],
                },
            },
            Chart {
                title: "lines".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                body: Body::Lines {
                    series: vec![("s".into(), vec![(0.0, 1.0), (1.0, 2.0)])],
                },
            },
        ];
        for c in charts {
            let svg = c.svg().unwrap();
            assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
            assert!(svg.contains(&c.title));
        }
    }

    #[test]
    fn empty_charts_still_render() {
        let c = Chart {
            title: "empty".into(),
            x_label: String::new(),
            y_label: String::new(),
            body: Body::Scatter { points: vec![] },
        };
        assert!(c.svg().unwrap().contains("empty"));
    }
}
