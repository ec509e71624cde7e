//! Charts derived from the Markdown tables that `hwzip eval` prints: tables with the same
//! header under different headings (one per trace or class) become one grouped bar chart per
//! key column (compression ratio, ones per sector, hit rate, energy, …; at most two per
//! header), categories from the first column, one series per heading.

use super::chart::{BarSeries, Body, Chart};

/// Header keywords of the key columns, in order of preference.
const KEYS: [&str; 8] = [
    "ratio",
    "ones/sector",
    "hit rate",
    "pj",
    "energy",
    "fraction",
    "%",
    "bytes",
];

/// Largest number of categories a derived chart shows, and of series: more series (traces,
/// classes) are split over several charts, so that every one is drawn.
const MAX_CATEGORIES: usize = 24;
const MAX_SERIES: usize = 8;

/// `title`, with `(part i of n)` when a chart's series are split over `n` charts.
fn part_title(title: String, i: usize, n: usize) -> String {
    if n > 1 {
        format!("{} (part {} of {})", title, i + 1, n)
    } else {
        title
    }
}

struct Table {
    context: String,
    caption: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|')
        .map(|c| c.trim().replace(['`', '*'], ""))
        .collect()
}

fn context_of(line: &str) -> String {
    let l = line.trim().trim_start_matches('#').trim();
    let l = l.strip_prefix("trace:").unwrap_or(l).trim();
    let cut = l.find(['(', ',']).unwrap_or(l.len());
    l[..cut].trim().to_string()
}

fn tables(md: &str) -> Vec<Table> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut context = String::new();
    let mut caption = String::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if l.starts_with('|') {
            let header = cells(l);
            let mut rows = Vec::new();
            i += 2;
            while i < lines.len() && lines[i].trim().starts_with('|') {
                rows.push(cells(lines[i]));
                i += 1;
            }
            out.push(Table {
                context: context.clone(),
                caption: caption.clone(),
                header,
                rows,
            });
            continue;
        }
        if l.starts_with('#') || l.starts_with("trace:") {
            context = context_of(l);
        }
        if !l.is_empty() {
            caption = l.trim_start_matches('#').trim().to_string();
        }
        i += 1;
    }
    out
}

/// The leading number of a cell (`1.397×`, `-32.1%`, `442.422 nJ (…)`), if any.
pub fn number(cell: &str) -> Option<f64> {
    let t = cell.trim().trim_start_matches('+');
    let end = t
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && c == '-')))
        .map_or(t.len(), |(i, _)| i);
    t[..end].parse().ok()
}

/// Charts of `md`'s tables, at most `max`, titled with `prefix`.
pub fn charts(md: &str, prefix: &str, max: usize) -> Vec<Chart> {
    let ts = tables(md);
    let mut groups: Vec<(Vec<String>, Vec<&Table>)> = Vec::new();
    for t in &ts {
        match groups.iter_mut().find(|g| g.0 == t.header) {
            Some(g) => g.1.push(t),
            None => groups.push((t.header.clone(), vec![t])),
        }
    }
    let mut out = Vec::new();
    for (header, members) in groups {
        let lower: Vec<String> = header.iter().map(|h| h.to_lowercase()).collect();
        let mut cols: Vec<usize> = Vec::new();
        for k in KEYS {
            for (c, name) in lower.iter().enumerate().skip(1) {
                let has = members.iter().any(|t| {
                    t.rows
                        .iter()
                        .any(|r| r.get(c).and_then(|v| number(v)).is_some())
                });
                if name.contains(k) && has && !cols.contains(&c) && cols.len() < 2 {
                    cols.push(c);
                }
            }
        }
        let width = key_width(&members, &cols);
        let mut categories: Vec<String> = Vec::new();
        for t in &members {
            for r in &t.rows {
                let c = key(r, width);
                if !categories.contains(&c) && categories.len() < MAX_CATEGORIES {
                    categories.push(c);
                }
            }
        }
        if cols.is_empty() {
            let w = wide_chart(prefix, &header, &members);
            if !w.is_empty() {
                if out.len() >= max {
                    return out;
                }
                out.extend(w);
            }
        }
        for col in cols {
            if out.len() >= max {
                return out;
            }
            out.extend(bar_chart(
                prefix,
                &header,
                &members,
                &categories,
                col,
                width,
            ));
        }
    }
    out
}

/// A row's category: its first `width` cells.
fn key(row: &[String], width: usize) -> String {
    row.iter()
        .take(width)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many leading columns (at most three, none of them a key column) name each row of
/// every table uniquely: the first alone unless it repeats (`stream` with one row per cache
/// size).
fn key_width(members: &[&Table], cols: &[usize]) -> usize {
    let unique = |w: usize| {
        members.iter().all(|t| {
            let mut seen = std::collections::HashSet::new();
            t.rows.iter().all(|r| seen.insert(key(r, w)))
        })
    };
    (1..=3)
        .take_while(|w| *w == 1 || !cols.contains(&(w - 1)))
        .find(|&w| unique(w))
        .unwrap_or(1)
}

/// A wide table (one row per data set, the columns a distribution such as size buckets or
/// codecs): the longest run of at least three numeric columns whose names end alike (`0 B`
/// … `128 B`, `1x` … `16x`), else every numeric column, as categories; one series per row.
fn wide_chart(prefix: &str, header: &[String], members: &[&Table]) -> Vec<Chart> {
    let numeric: Vec<usize> = (1..header.len())
        .filter(|&c| {
            let h = header[c].to_lowercase();
            !h.contains("entries")
                && !h.contains("lines")
                && members.iter().all(|t| {
                    !t.rows.is_empty()
                        && t.rows
                            .iter()
                            .all(|r| r.get(c).and_then(|v| number(v)).is_some())
                })
        })
        .collect();
    if numeric.len() < 3 {
        return Vec::new();
    }
    // A bucket column names a size or a factor (`0 B`, `16x`): it has a digit. Codec
    // columns (`BPC`, `ZVC`, `BPC 64-bit symbols`) are all kept.
    let last = |c: usize| {
        header[c]
            .chars()
            .any(|ch| ch.is_ascii_digit())
            .then(|| header[c].chars().last())
    };
    let mut best: &[usize] = &[];
    let mut start = 0;
    for i in 1..=numeric.len() {
        let breaks = i == numeric.len()
            || numeric[i] != numeric[i - 1] + 1
            || last(numeric[i]).is_none()
            || last(numeric[i]) != last(numeric[start]);
        if breaks {
            if i - start > best.len() {
                best = &numeric[start..i];
            }
            start = i;
        }
    }
    let cols: &[usize] = if best.len() >= 3 { best } else { &numeric };
    let rows: Vec<&Vec<String>> = members.iter().flat_map(|t| &t.rows).collect();
    let caption = &members[0].caption;
    let parts = rows.len().div_ceil(MAX_SERIES);
    rows.chunks(MAX_SERIES)
        .enumerate()
        .map(|(i, part)| Chart {
            title: part_title(format!("{}: {}", prefix, caption), i, parts),
            x_label: String::new(),
            y_label: String::new(),
            body: Body::Bars {
                categories: cols.iter().map(|&c| header[c].clone()).collect(),
                series: part
                    .iter()
                    .map(|r| BarSeries {
                        name: r.first().cloned().unwrap_or_default(),
                        values: cols
                            .iter()
                            .map(|&c| r.get(c).and_then(|v| number(v)))
                            .collect(),
                    })
                    .collect(),
                marks: Vec::new(),
                mark_name: String::new(),
            },
        })
        .collect()
}

fn bar_chart(
    prefix: &str,
    header: &[String],
    members: &[&Table],
    categories: &[String],
    col: usize,
    width: usize,
) -> Vec<Chart> {
    let series: Vec<BarSeries> = members
        .iter()
        .enumerate()
        .map(|(k, t)| BarSeries {
            name: if t.context.is_empty() {
                format!("{} {}", header[col], k + 1)
            } else {
                t.context.clone()
            },
            values: categories
                .iter()
                .map(|c| {
                    t.rows
                        .iter()
                        .find(|r| &key(r, width) == c)
                        .and_then(|r| r.get(col))
                        .and_then(|v| number(v))
                })
                .collect(),
        })
        .collect();
    let parts = series.len().div_ceil(MAX_SERIES);
    series
        .chunks(MAX_SERIES)
        .enumerate()
        .map(|(i, part)| Chart {
            title: part_title(
                format!("{}: {} by {}", prefix, header[col], header[0]),
                i,
                parts,
            ),
            x_label: header[0].clone(),
            y_label: header[col].clone(),
            body: Body::Bars {
                categories: categories.to_vec(),
                series: part.to_vec(),
                marks: Vec::new(),
                mark_name: String::new(),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_with_one_header_become_one_grouped_chart_per_key_column() {
        let md = "trace: a (10 lines)\n\n| scheme | bytes | ratio |\n|---|---:|---:|\n\
                  | zvc | 10 | 1.5× |\n| rle | 12 | 1.2× |\n\ntrace: b, x\n\n\
                  | scheme | bytes | ratio |\n|---|---:|---:|\n| zvc | 5 | 3.0× |\n";
        let c = charts(md, "zvc", 8);
        assert_eq!(c.len(), 2, "ratio and bytes");
        assert_eq!(c[0].y_label, "ratio");
        match &c[0].body {
            Body::Bars {
                categories, series, ..
            } => {
                assert_eq!(categories, &["zvc", "rle"]);
                assert_eq!(series.len(), 2);
                assert_eq!(series[0].name, "a");
                assert_eq!(series[1].name, "b");
                assert_eq!(series[1].values, vec![Some(3.0), None]);
            }
            _ => panic!("bars expected"),
        }
        assert_eq!(charts(md, "zvc", 1).len(), 1);
    }

    #[test]
    fn wide_tables_chart_their_distribution_columns() {
        let md = "Buckets (% of entries)\n\n| Data | Entries | 0 B | 32 B | 64 B | Ratio x |\n\
                  |---|---:|---:|---:|---:|---:|\n| relu | 300 | 9.7 | 1.7 | 88.6 | 1.1 |\n";
        let c = charts(md, "buddy", 8);
        assert_eq!(c.len(), 1, "ratio column");
        let md = md.replace("Ratio x", "Other");
        let c = charts(&md, "buddy", 8);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].title, "buddy: Buckets (% of entries)");
        match &c[0].body {
            Body::Bars {
                categories, series, ..
            } => {
                assert_eq!(categories, &["0 B", "32 B", "64 B"]);
                assert_eq!(series[0].values, vec![Some(9.7), Some(1.7), Some(88.6)]);
            }
            _ => panic!("bars expected"),
        }
    }

    #[test]
    fn repeated_first_cells_take_the_next_column_into_the_category() {
        let md = "| stream | lines | hit rate |\n|---|---:|---:|\n| a | 16 | 50% |\n\
                  | a | 32 | 70% |\n| b | 16 | 10% |\n";
        let c = charts(md, "md", 8);
        match &c[0].body {
            Body::Bars {
                categories, series, ..
            } => {
                assert_eq!(categories, &["a 16", "a 32", "b 16"]);
                assert_eq!(series[0].values, vec![Some(50.0), Some(70.0), Some(10.0)]);
            }
            _ => panic!("bars expected"),
        }
    }

    #[test]
    fn numbers_are_read_from_the_front_of_cells() {
        assert_eq!(number("1.397×"), Some(1.397));
        assert_eq!(number("-32.1%"), Some(-32.1));
        assert_eq!(number("+4.6%"), Some(4.6));
        assert_eq!(number("442.422 nJ (221.2 pJ/sector)"), Some(442.422));
        assert_eq!(number("n/a"), None);
    }
}

#[cfg(test)]
mod split_tests {
    use super::*;

    /// Twenty traces under one header give three charts (8 + 8 + 4 series) per key column,
    /// so that every trace is drawn.
    #[test]
    fn every_trace_is_drawn_when_there_are_more_than_eight() {
        let mut md = String::new();
        for i in 0..20 {
            md.push_str(&format!(
                "trace: t{i} (10 lines)\n\n| scheme | ratio |\n|---|---:|\n| zvc | {}.5 |\n\n",
                i + 1
            ));
        }
        let c = charts(&md, "zvc", 8);
        assert_eq!(c.len(), 3);
        let counts: Vec<usize> = c
            .iter()
            .map(|ch| match &ch.body {
                Body::Bars { series, .. } => series.len(),
                _ => 0,
            })
            .collect();
        assert_eq!(counts, [8, 8, 4]);
        assert!(c[2].title.ends_with("(part 3 of 3)"), "{}", c[2].title);
    }

    /// A codec comparison keeps every codec column, `BPC 64-bit symbols` included; size
    /// buckets still chart only their bucket columns.
    #[test]
    fn codec_columns_are_all_charted() {
        let md = "| Data | BPC | BDI+FPC | ZVC | BPC 64-bit symbols |\n|---|---:|---:|---:|---:|\n\
                  | relu | 2.1 | 1.5 | 1.9 | 2.3 |\n| fp64 | 1.2 | 1.1 | 1.0 | 1.4 |\n";
        let c = charts(md, "buddy", 8);
        match &c[0].body {
            Body::Bars { categories, .. } => {
                assert_eq!(categories, &["BPC", "BDI+FPC", "ZVC", "BPC 64-bit symbols"])
            }
            _ => panic!("bars"),
        }
        let md = "| Data | 0 B | 32 B | 64 B | 128 B | mean |\n|---|---:|---:|---:|---:|---:|\n\
                  | relu | 1 | 2 | 3 | 4 | 9.5 |\n";
        match &charts(md, "buddy", 8)[0].body {
            Body::Bars { categories, .. } => assert_eq!(categories.len(), 4),
            _ => panic!("bars"),
        }
    }
}
