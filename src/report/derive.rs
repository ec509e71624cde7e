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

/// Largest number of categories and series a derived chart shows.
const MAX_CATEGORIES: usize = 24;
const MAX_SERIES: usize = 8;

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
            if let Some(c) = wide_chart(prefix, &header, &members) {
                if out.len() >= max {
                    return out;
                }
                out.push(c);
            }
        }
        for col in cols {
            if out.len() >= max {
                return out;
            }
            out.push(bar_chart(
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
fn wide_chart(prefix: &str, header: &[String], members: &[&Table]) -> Option<Chart> {
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
        return None;
    }
    let last = |c: usize| header[c].chars().last();
    let mut best: &[usize] = &[];
    let mut start = 0;
    for i in 1..=numeric.len() {
        let breaks = i == numeric.len()
            || numeric[i] != numeric[i - 1] + 1
            || last(numeric[i]) != last(numeric[start]);
        if breaks {
            if i - start > best.len() {
                best = &numeric[start..i];
            }
            start = i;
        }
    }
    let cols: &[usize] = if best.len() >= 3 { best } else { &numeric };
    let rows: Vec<&Vec<String>> = members
        .iter()
        .flat_map(|t| &t.rows)
        .take(MAX_SERIES)
        .collect();
    let caption = &members[0].caption;
    Some(Chart {
        title: format!("{}: {}", prefix, caption),
        x_label: String::new(),
        y_label: String::new(),
        body: Body::Bars {
            categories: cols.iter().map(|&c| header[c].clone()).collect(),
            series: rows
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
}

fn bar_chart(
    prefix: &str,
    header: &[String],
    members: &[&Table],
    categories: &[String],
    col: usize,
    width: usize,
) -> Chart {
    let series: Vec<BarSeries> = members
        .iter()
        .take(MAX_SERIES)
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
    Chart {
        title: format!("{}: {} by {}", prefix, header[col], header[0]),
        x_label: header[0].clone(),
        y_label: header[col].clone(),
        body: Body::Bars {
            categories: categories.to_vec(),
            series,
            marks: Vec::new(),
            mark_name: String::new(),
        },
    }
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
