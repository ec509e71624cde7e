//! Charts of a report as data, rendered to inline SVG with `plotters` (SVG backend; text is
//! left to the browser's fonts, so nothing is rasterized and no font file is needed).

use super::{legend, place};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
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
    /// The value is a bound (drawn with an arrow to the side the figure lies on).
    pub limit: Option<Limit>,
}

/// Which side of a bound mark the figure lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Limit {
    /// At most the mark's value (`< 50,000 µm²`).
    AtMost,
    /// At least the mark's value (`> 1.25 GHz`).
    AtLeast,
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
    /// One horizontal strip per row, cut into runs coloured by state (decisions over time,
    /// the shares of a histogram); the first row on top.
    Strips {
        /// State names (legend), indexed by the runs.
        states: Vec<String>,
        /// `(row name, runs of (state, length))`.
        rows: Vec<(String, Vec<(usize, f64)>)>,
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

/// Colour of bound marks (a paper's "< 50,000 µm²").
const BOUND_COLOR: RGBColor = RGBColor(170, 20, 20);

/// Legend of bound marks (short enough for the side legend's 220 px).
const BOUND_LEGEND: &str = "bound, arrow toward value";

const W: u32 = 760;
const H: u32 = 380;

fn color(i: usize) -> RGBColor {
    // Colour-blind-safe qualitative colours: Okabe-Ito (without black), then Paul Tol's muted
    // scheme, then black; twelve series before a colour repeats.
    const C: [(u8, u8, u8); 12] = [
        (0, 114, 178),
        (230, 159, 0),
        (0, 158, 115),
        (204, 121, 167),
        (86, 180, 233),
        (213, 94, 0),
        (240, 228, 66),
        (136, 34, 85),
        (68, 170, 153),
        (153, 153, 51),
        (51, 34, 136),
        (0, 0, 0),
    ];
    let (r, g, b) = C[i % C.len()];
    RGBColor(r, g, b)
}

/// How a bar chart's value axis maps values.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    /// From 0 to the largest value.
    Linear,
    /// log10 of the value, from the decade at or below the smallest positive value (`base`)
    /// to a little above the largest (`top`), both in log10 units.
    Log { base: f64, top: f64 },
}

impl Scale {
    /// Log when every value is at least 0 and the positive ones span more than 100x.
    fn of(values: &[f64]) -> Scale {
        let pos = values.iter().copied().filter(|v| *v > 0.0);
        let lo = pos.clone().fold(f64::INFINITY, f64::min);
        let hi = pos.fold(0.0f64, f64::max);
        if values.iter().any(|v| *v < 0.0) || !(lo.is_finite() && hi > 100.0 * lo) {
            return Scale::Linear;
        }
        // The decade below the smallest value, so that a bar of exactly 1 (or 10) shows.
        let mut base = lo.log10().floor();
        if lo.log10() - base < 0.1 {
            base -= 1.0;
        }
        Scale::Log {
            base,
            top: hi.log10() + 0.08 * (hi.log10() - base),
        }
    }

    /// Where the bars start.
    fn base(self) -> f64 {
        match self {
            Scale::Linear => 0.0,
            Scale::Log { base, .. } => base,
        }
    }

    /// A value's position on the axis.
    fn map(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log { base, .. } if v > 0.0 => v.log10().max(base),
            Scale::Log { base, .. } => base,
        }
    }

    /// The value at an axis position (for tick labels).
    fn unmap(self, t: f64) -> f64 {
        match self {
            Scale::Linear => t,
            Scale::Log { .. } => 10f64.powf(t),
        }
    }
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

/// The SVG area a chart draws on.
type Root<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// What drawing a chart returns.
type Drawn<'a> = Result<(), Box<dyn std::error::Error + 'a>>;

type Plot<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The series' legend in a box at `corner`.
fn series_legend<'a, 'b: 'a>(
    chart: &mut Plot<'a, 'b>,
    corner: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(corner)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// A captioned frame with a mesh and axis descriptions over `x` × `y`.
fn frame<'a, 'b>(
    root: &'a Root<'b>,
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
        .x_label_formatter(&axis_number)
        .y_label_formatter(&axis_number)
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// An axis tick value, short: `1.4M`, `250k`, `2.35`, `0` (no trailing zeros).
fn axis_number(v: &f64) -> String {
    let trim = |x: f64, digits: usize| {
        let s = format!("{:.*}", digits, x);
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        };
        if s == "-0" {
            "0".to_string()
        } else {
            s
        }
    };
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6, 2))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3, 1))
    } else {
        trim(*v, 3)
    }
}

/// Many or long category names: bars run horizontally, names readable on the left.
fn horizontal(categories: &[String]) -> bool {
    categories.len() > 6 || categories.iter().map(|c| c.chars().count()).sum::<usize>() > 60
}

/// Draws `title` centred across the top of `root` (smaller when long, so that it fits) and
/// returns the area below it.
fn titled<'b>(
    root: &DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
) -> Result<DrawingArea<SVGBackend<'b>, plotters::coord::Shift>, Box<dyn std::error::Error>> {
    let (w, _) = root.dim_in_pixel();
    let chars = title.chars().count().max(1) as f64;
    let px = (17.0f64)
        .min((f64::from(w) - 24.0) / (0.56 * chars))
        .max(10.0);
    let (head, body) = root.split_vertically(36);
    head.draw(&Text::new(
        title.to_string(),
        (w as i32 / 2, 20),
        TextStyle::from(("sans-serif", px).into_font()).pos(Pos::new(HPos::Center, VPos::Center)),
    ))?;
    Ok(body)
}

/// Splits `root` into the plot and a legend strip on its right, drawing `keys` there; the
/// plot's area is returned (all of `root` when there is nothing to show).
fn with_side_legend<'b>(
    root: &DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    keys: &[(String, legend::Key)],
) -> Result<DrawingArea<SVGBackend<'b>, plotters::coord::Shift>, Box<dyn std::error::Error>> {
    if keys.iter().all(|k| k.0.is_empty()) {
        return Ok(root.clone());
    }
    let names: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    let (w, _) = root.dim_in_pixel();
    let (plot, side) = root.split_horizontally(w as i32 - legend::width(&names) as i32);
    legend::draw(&side, keys)?;
    Ok(plot)
}

/// The tick formatter of a category axis: category `i` sits at position `i`, or at `n-1-i`
/// when `top_down` (the first category on top of a vertical axis); other positions are blank.
fn category_label(names: Vec<String>, top_down: bool) -> impl Fn(&f64) -> String {
    let n = names.len();
    move |p: &f64| {
        let i = p.round();
        if (p - i).abs() > 1e-6 || i < 0.0 || i as usize >= n {
            return String::new();
        }
        let i = i as usize;
        names[if top_down { n - 1 - i } else { i }].clone()
    }
}

/// Font size of point labels, px.
const LABEL_PX: f64 = 11.0;

/// The plotting area of `chart` in pixels.
fn plot_rect(chart: &Plot<'_, '_>) -> place::Rect {
    let (x, y) = chart.plotting_area().get_pixel_range();
    place::Rect {
        x0: x.start as f64,
        y0: y.start as f64,
        x1: x.end as f64,
        y1: y.end as f64,
    }
}

/// The legend's corner: the one whose legend box (estimated from the `names`) covers the
/// fewest points and line samples.
fn legend_corner(
    names: &[&str],
    points: &[(f64, f64)],
    paths: &[Vec<(f64, f64)>],
    area: place::Rect,
) -> SeriesLabelPosition {
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) as f64;
    let w = 40.0 + longest * 7.0;
    let h = 12.0 + names.len() as f64 * 19.0;
    match place::emptiest_corner(points, paths, area, w, h) {
        place::Corner::UpperRight => SeriesLabelPosition::UpperRight,
        place::Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
        place::Corner::LowerRight => SeriesLabelPosition::LowerRight,
        place::Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
    }
}

/// A colour as the SVG writes it in a `fill` attribute (`#RRGGBB`).
fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The finite values a bar chart's value axis must hold: its bars' and its marks'.
fn bar_values(series: &[BarSeries], marks: &[Mark]) -> Vec<f64> {
    series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied())
        .chain(marks.iter().map(|m| m.value))
        .filter(|v| v.is_finite())
        .collect()
}

impl Chart {
    /// What a page checks once the chart is drawn (bar charts; `None` for others): each
    /// series' legend name, its fill colour (`#RRGGBB`) and how many bars it draws (its
    /// values, less those at or below zero on a log axis), as JSON. The page's script finds
    /// every name among the SVG's texts and, per colour, one legend swatch plus that many
    /// bars, so a chart that drops a series or a bar fails the browser test.
    pub fn check_json(&self) -> Option<String> {
        let Body::Bars { series, marks, .. } = &self.body else {
            return None;
        };
        let values = bar_values(series, marks);
        let log = Scale::of(&values) != Scale::Linear;
        let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
        let colors: Vec<String> = (0..series.len()).map(|i| hex(color(i))).collect();
        let bars: Vec<usize> = series
            .iter()
            .map(|s| {
                s.values
                    .iter()
                    .flatten()
                    .filter(|v| !log || **v > 0.0)
                    .count()
            })
            .collect();
        Some(serde_json::json!({ "names": names, "colors": colors, "bars": bars }).to_string())
    }

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
                Body::Strips { rows, .. } => (110 + rows.len() as u32 * 22).max(H),
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

    fn draw(&self, root: &Root<'_>) -> Drawn<'_> {
        root.fill(&WHITE)?;
        match &self.body {
            Body::Bars {
                categories,
                series,
                marks,
                mark_name,
            } => self.bars(root, categories, series, marks, mark_name),
            Body::Strips { states, rows } => self.strips(root, states, rows),
            Body::Scatter { points } => self.scatter(root, points),
            Body::Lines { series } => self.lines(root, series),
        }
    }

    fn bars(
        &self,
        root: &Root<'_>,
        categories: &[String],
        series: &[BarSeries],
        marks: &[Mark],
        mark_name: &str,
    ) -> Drawn<'_> {
        let n = categories.len().max(1);
        let values = bar_values(series, marks);
        let top = values.iter().copied().fold(0.0f64, f64::max);
        let flip = horizontal(categories);
        // A log value axis when the positive values span more than 100x (one trace 200x,
        // the others near 1x): bars start at the decade below the smallest value.
        let scale = Scale::of(&values);
        let top = match scale {
            Scale::Linear => {
                if top > 0.0 {
                    top * 1.08
                } else {
                    1.0
                }
            }
            Scale::Log { top, .. } => top,
        };
        let base = scale.base();
        let along = move |v: f64| scale.map(v);
        // The legend beside the plot, where it covers no bar.
        let mut keys: Vec<(String, legend::Key)> = series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), legend::Key::Fill(color(i))))
            .collect();
        if marks.iter().any(|m| m.limit.is_none()) {
            keys.push((mark_name.to_string(), legend::Key::Line(BLACK)));
        }
        if marks.iter().any(|m| m.limit.is_some()) {
            keys.push((BOUND_LEGEND.to_string(), legend::Key::Line(BOUND_COLOR)));
        }
        let root = &with_side_legend(&titled(root, &self.title)?, &keys)?;
        let name = category_label(categories.to_vec(), false);
        let k = series.len().max(1) as f64;
        let w = 0.8 / k;
        let longest = categories
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0) as u32;
        let mut b = ChartBuilder::on(root);
        b.margin(12).margin_top(4);
        // Category c sits at position c (vertical bars) or n-1-c (horizontal bars, the first
        // category on top); a bar is [lo, lo + w) across, [0, v] along the value axis.
        let pos = move |c: usize| if flip { (n - 1 - c) as f64 } else { c as f64 };
        let rect = move |c: usize, s: usize, v: f64| {
            let lo = pos(c) - 0.4 + s as f64 * w;
            let hi = lo + w * 0.92;
            let v = along(v);
            if flip {
                [(base, lo), (v, hi)]
            } else {
                [(lo, base), (hi, v)]
            }
        };
        let tick = move |c: usize, v: f64| {
            let p = pos(c);
            let v = along(v);
            if flip {
                vec![(v, p - 0.45), (v, p + 0.45)]
            } else {
                vec![(p - 0.45, v), (p + 0.45, v)]
            }
        };
        let across = -0.5f64..(n as f64 - 0.5);
        let (xr, yr) = if flip {
            (base..top, across)
        } else {
            (across, base..top)
        };
        // On a log axis only the decades are labelled (1, 10, 100), not 3.162 or 31.623.
        let value_label = move |t: &f64| match scale {
            Scale::Log { .. } if (t - t.round()).abs() > 1e-6 => String::new(),
            _ => axis_number(&scale.unmap(*t)),
        };
        let value_desc = match scale {
            Scale::Linear => self.y_label.clone(),
            Scale::Log { .. } => format!("{} (log scale)", self.y_label),
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
            let rev = category_label(categories.to_vec(), true);
            if flip {
                mesh.disable_y_mesh()
                    .y_labels(n * 2 + 1)
                    .y_label_formatter(&rev)
                    .x_label_formatter(&value_label)
                    .x_desc(&value_desc)
                    .y_desc(&self.x_label)
                    .draw()?;
            } else {
                mesh.disable_x_mesh()
                    .x_labels(n * 2 + 1)
                    .x_label_formatter(&name)
                    .y_label_formatter(&value_label)
                    .x_desc(&self.x_label)
                    .y_desc(&value_desc)
                    .draw()?;
            }
        }
        for (si, s) in series.iter().enumerate() {
            let c = color(si);
            let bars = s.values.iter().enumerate().filter_map(move |(ci, v)| {
                let v = (*v)?;
                // On a log axis a value at or below zero has no bar.
                (scale == Scale::Linear || v > 0.0)
                    .then(|| Rectangle::new(rect(ci, si, v), c.filled()))
            });
            chart.draw_series(bars)?;
        }
        if !marks.is_empty() {
            let ticks = marks.iter().map(|m| {
                let c = if m.limit.is_some() {
                    BOUND_COLOR
                } else {
                    BLACK
                };
                PathElement::new(tick(m.category, m.value), c.stroke_width(3))
            });
            chart.draw_series(ticks)?;
            // A bound's arrow: a triangle from the tick towards the side the figure lies on,
            // a twentieth of the axis long.
            let reach = (top - base) / 20.0;
            let arrows = marks.iter().filter_map(|m| {
                let sign = match m.limit? {
                    Limit::AtMost => -1.0,
                    Limit::AtLeast => 1.0,
                };
                let (p, v) = (pos(m.category), along(m.value));
                let pts = [(p - 0.15, v), (p + 0.15, v), (p, v + sign * reach)];
                let pts: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|&(a, b)| if flip { (b, a) } else { (a, b) })
                    .collect();
                Some(Polygon::new(pts, BOUND_COLOR.filled()))
            });
            chart.draw_series(arrows)?;
        }
        Ok(())
    }

    fn strips(
        &self,
        root: &Root<'_>,
        states: &[String],
        rows: &[(String, Vec<(usize, f64)>)],
    ) -> Drawn<'_> {
        let keys: Vec<(String, legend::Key)> = states
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), legend::Key::Fill(color(i))))
            .collect();
        let root = &with_side_legend(&titled(root, &self.title)?, &keys)?;
        let n = rows.len().max(1);
        let total = rows
            .iter()
            .map(|(_, runs)| {
                runs.iter()
                    .map(|r| r.1)
                    .filter(|v| v.is_finite())
                    .sum::<f64>()
            })
            .fold(0.0f64, f64::max);
        let total = if total > 0.0 { total } else { 1.0 };
        let longest = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0) as u32;
        // Row r sits at y = n-1-r (the first row on top).
        let name = category_label(rows.iter().map(|r| r.0.clone()).collect(), true);
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .margin_top(4)
            .x_label_area_size(44)
            .y_label_area_size(24 + 7 * longest.min(40))
            .build_cartesian_2d(0f64..total, -0.5f64..(n as f64 - 0.5))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n * 2 + 1)
            .y_label_formatter(&name)
            .x_label_formatter(&axis_number)
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .draw()?;
        for (r, (_, runs)) in rows.iter().enumerate() {
            let y = (n - 1 - r) as f64;
            let mut x = 0.0;
            let mut cells = Vec::new();
            for &(state, len) in runs {
                if len.is_finite() && len > 0.0 {
                    let c = color(state);
                    cells.push(Rectangle::new(
                        [(x, y - 0.38), (x + len, y + 0.38)],
                        c.filled(),
                    ));
                    x += len;
                }
            }
            chart.draw_series(cells)?;
        }
        Ok(())
    }

    fn scatter(&self, root: &Root<'_>, points: &[Point]) -> Drawn<'_> {
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
        // Labels where they cover the least of each other, the points and the front's line.
        let px = |x: f64, y: f64| {
            let (a, b) = chart.backend_coord(&(x, y));
            (a as f64, b as f64)
        };
        let anchors: Vec<(f64, f64)> = front.iter().map(|p| px(p.x, p.y)).collect();
        let dots: Vec<(f64, f64)> = points.iter().map(|p| px(p.x, p.y)).collect();
        let area = plot_rect(&chart);
        let sizes: Vec<(f64, f64)> = front
            .iter()
            .map(|p| place::text_size(&p.label, LABEL_PX))
            .collect();
        let at = place::labels(&anchors, &sizes, &dots, &anchors, area);
        for (p, (x, y)) in front.iter().zip(at) {
            root.draw(&Text::new(
                p.label.clone(),
                (x.round() as i32, y.round() as i32),
                ("sans-serif", LABEL_PX).into_font(),
            ))?;
        }
        let names = ["design point", "Pareto front"];
        let corner = legend_corner(&names, &dots, &[anchors], area);
        series_legend(&mut chart, corner)?;
        Ok(())
    }

    fn lines(&self, root: &Root<'_>, series: &[(String, Vec<(f64, f64)>)]) -> Drawn<'_> {
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
        let paths: Vec<Vec<(f64, f64)>> = series
            .iter()
            .map(|(_, pts)| {
                pts.iter()
                    .map(|&(x, y)| {
                        let (a, b) = chart.backend_coord(&(x, y));
                        (a as f64, b as f64)
                    })
                    .collect()
            })
            .collect();
        let names: Vec<&str> = series.iter().map(|(n, _)| n.as_str()).collect();
        let corner = legend_corner(&names, &[], &paths, plot_rect(&chart));
        series_legend(&mut chart, corner)?;
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
                        limit: None,
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
            Chart {
                title: "strips".into(),
                x_label: "period".into(),
                y_label: "trace".into(),
                body: Body::Strips {
                    states: vec!["none".into(), "bdi".into()],
                    rows: vec![
                        ("t0".into(), vec![(0, 3.0), (1, 2.0)]),
                        ("t1".into(), vec![(1, 5.0)]),
                    ],
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
    fn legends_of_bars_and_strips_sit_beside_the_plot() {
        // Every legend name is drawn right of the plot: its text starts beyond the widest
        // plot (the SVG width minus the narrowest legend strip).
        let c = Chart {
            title: "bars".into(),
            x_label: "unit".into(),
            y_label: "kGE".into(),
            body: Body::Bars {
                categories: vec!["a".into(), "b".into()],
                series: vec![
                    BarSeries {
                        name: "seriesone".into(),
                        values: vec![Some(1.0), Some(2.0)],
                    },
                    BarSeries {
                        name: "seriestwo".into(),
                        values: vec![Some(3.0), None],
                    },
                ],
                marks: vec![
                    Mark {
                        category: 0,
                        value: 1.5,
                        limit: None,
                    },
                    Mark {
                        category: 1,
                        value: 2.5,
                        limit: Some(Limit::AtMost),
                    },
                ],
                mark_name: "paper".into(),
            },
        };
        let svg = c.svg().unwrap();
        // A bound is drawn as one: its own colour, an arrow, its own legend line.
        let bound = hex(BOUND_COLOR);
        assert!(svg.contains("<polygon"), "an arrow");
        assert!(svg.to_uppercase().contains(&bound), "the bound colour");
        assert!(svg.contains(BOUND_LEGEND));
        for name in ["seriesone", "seriestwo", "paper"] {
            let at = svg.find(&format!(">\n{}\n<", name)).expect(name);
            let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
            let x: f64 = tag
                .split("x=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no x in {}", tag));
            assert!(x >= f64::from(W - 220), "{} at x = {} in {}", name, x, tag);
        }
    }

    /// Values spanning more than 100x get a log axis (one 200x trace no longer flattens the
    /// others), labelled as such; ordinary ranges and negative values stay linear.
    #[test]
    fn wide_ranges_get_a_log_axis() {
        assert_eq!(Scale::of(&[1.0, 2.0, 50.0]), Scale::Linear);
        assert_eq!(Scale::of(&[-1.0, 1.0, 500.0]), Scale::Linear);
        let s = Scale::of(&[0.0, 0.9, 1.2, 256.0]);
        assert!(
            matches!(s, Scale::Log { base, .. } if base == -1.0),
            "{s:?}"
        );
        assert!((s.unmap(s.map(256.0)) - 256.0).abs() < 1e-9);
        assert_eq!(s.map(0.0), s.base());
        let c = Chart {
            title: "ratio".into(),
            x_label: "scheme".into(),
            y_label: "ratio".into(),
            body: Body::Bars {
                categories: vec!["zvc".into(), "rle".into()],
                series: vec![BarSeries {
                    name: "zero".into(),
                    values: vec![Some(256.0), Some(1.1)],
                }],
                marks: Vec::new(),
                mark_name: String::new(),
            },
        };
        assert!(c.svg().unwrap().contains("ratio (log scale)"));
    }

    #[test]
    fn axis_numbers_are_short() {
        assert_eq!(axis_number(&1_400_000.0), "1.4M");
        assert_eq!(axis_number(&250_000.0), "250k");
        assert_eq!(axis_number(&2.35), "2.35");
        assert_eq!(axis_number(&0.0), "0");
        assert_eq!(axis_number(&-0.0001), "0");
        assert_eq!(axis_number(&60.0), "60");
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
