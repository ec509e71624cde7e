//! Self-contained HTML reports (`report.html`): headings, text, tables and inline SVG charts
//! in one file with its CSS, readable without a network connection.
//!
//! The page is built from data ([`Page`], [`Block`], [`chart::Chart`]) by the flow, synth,
//! eval and sweep commands; this module knows nothing of engines. A few lines of inline
//! script check on load that every chart rendered (a non-empty box) and write the count into
//! `<body data-plots="…">`, which the browser test reads (`tests/integration/report_html.rs`).

pub mod chart;
pub mod derive;
pub mod legend;
pub mod place;

pub use chart::{BarSeries, Body, Chart, Limit, Mark, Point};
use std::fmt::Write as _;

/// One block of a section.
#[derive(Clone, Debug)]
pub enum Block {
    /// A paragraph (plain text, escaped).
    Text(String),
    /// A Markdown table (`| a | b |` lines), rendered as an HTML table; other lines of the
    /// text become paragraphs.
    Markdown(String),
    /// Preformatted text.
    Pre(String),
    /// A chart.
    Chart(Chart),
    /// A Markdown block (as [`Block::Markdown`]) in a box that stands out: failures.
    Alert(String),
}

/// A section with a heading.
#[derive(Clone, Debug)]
pub struct Section {
    /// Heading.
    pub heading: String,
    /// Content.
    pub blocks: Vec<Block>,
}

/// A report page.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// Title.
    pub title: String,
    /// Sections.
    pub sections: Vec<Section>,
}

impl Page {
    /// An empty page.
    pub fn new(title: impl Into<String>) -> Page {
        Page {
            title: title.into(),
            sections: Vec::new(),
        }
    }

    /// Adds a section.
    pub fn section(&mut self, heading: impl Into<String>, blocks: Vec<Block>) -> &mut Page {
        self.sections.push(Section {
            heading: heading.into(),
            blocks,
        });
        self
    }

    /// Number of charts on the page.
    pub fn charts(&self) -> usize {
        self.sections
            .iter()
            .flat_map(|s| &s.blocks)
            .filter(|b| matches!(b, Block::Chart(_)))
            .count()
    }

    /// The page as one HTML document.
    pub fn html(&self) -> Result<String, String> {
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{}</title>\n<style>{}</style>\n<script>{}</script>\n</head>\n<body data-plots=\"pending\" \
             data-expected=\"{}\">\n<h1>{}</h1>\n",
            esc(&self.title),
            CSS,
            CHECK,
            self.charts(),
            esc(&self.title)
        );
        if self.sections.len() > 1 {
            h.push_str("<nav><ul>\n");
            for (i, s) in self.sections.iter().enumerate() {
                let _ = writeln!(h, "<li><a href=\"#s{}\">{}</a></li>", i, esc(&s.heading));
            }
            h.push_str("</ul></nav>\n");
        }
        let mut plot = 0;
        for (i, s) in self.sections.iter().enumerate() {
            let _ = writeln!(h, "<section id=\"s{}\">\n<h2>{}</h2>", i, esc(&s.heading));
            for b in &s.blocks {
                match b {
                    Block::Text(t) => {
                        let _ = writeln!(h, "<p>{}</p>", esc(t));
                    }
                    Block::Pre(t) => {
                        let _ = writeln!(h, "<pre>{}</pre>", esc(t));
                    }
                    Block::Markdown(t) => h.push_str(&markdown_html(t)),
                    Block::Alert(t) => {
                        let _ = write!(h, "<div class=\"alert\">\n{}</div>\n", markdown_html(t));
                    }
                    Block::Chart(c) => {
                        let check = c
                            .check_json()
                            .map(|j| format!(" data-check=\"{}\"", esc(&j)))
                            .unwrap_or_default();
                        let _ = writeln!(
                            h,
                            "<figure class=\"plot\" id=\"plot{}\" data-title=\"{}\"{}>\n{}\n</figure>",
                            plot,
                            esc(&c.title),
                            check,
                            c.svg()?
                        );
                        plot += 1;
                    }
                }
            }
            h.push_str("</section>\n");
        }
        let _ = write!(
            h,
            "<footer>hwzip {} &middot; {} chart(s)</footer>\n</body>\n</html>\n",
            env!("CARGO_PKG_VERSION"),
            plot
        );
        Ok(h)
    }
}

const CSS: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;\
color:#222}h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;\
padding-bottom:.2em;margin-top:1.8em}table{border-collapse:collapse;margin:.8em 0;\
font-size:.85em}th,td{border:1px solid #ccc;padding:.25em .5em}th{background:#f3f3f3}\
td.n{text-align:right;font-variant-numeric:tabular-nums}figure.plot{margin:1em 0}\
figure.plot svg{max-width:100%;height:auto;border:1px solid #eee}pre{background:#f7f7f7;\
padding:.6em;overflow-x:auto}nav ul{columns:2;font-size:.9em}footer{margin-top:3em;\
color:#777;font-size:.8em}.alert{border:2px solid #c00;background:#fff3f3;padding:.1em 1em;\
margin:1em 0}.alert th{background:#fbdede}div.wide{overflow-x:auto;max-width:100%}\
td{white-space:nowrap}td details{white-space:normal;min-width:16em}summary{cursor:pointer}";

/// Counts the charts that rendered (an `<svg>` with a non-empty box and text) and checks
/// each bar chart against its data ([`chart::Chart::check_json`]: every series named in
/// the legend, one swatch and one bar per value in its colour); writes `ok N` when every
/// chart rendered (the figures on the page and the count the page was written with) and
/// matched, `series: <chart>: …` for the first chart that does not draw its data, else
/// `missing N`, or `error: …` after a script error, into `body[data-plots]`.
const CHECK: &str = "(function(){var err=null;\
window.addEventListener('error',function(e){err=e.message;\
if(document.body){document.body.dataset.plots='error: '+err;}});\
window.addEventListener('load',function(){var b=document.body;\
if(err){b.dataset.plots='error: '+err;return;}var n=0,bad=[];\
document.querySelectorAll('figure.plot svg').forEach(function(s){var r=s.getBoundingClientRect();\
if(r.width>0&&r.height>0&&s.querySelector('text')){n++;}});\
document.querySelectorAll('figure.plot[data-check]').forEach(function(f){\
var c=JSON.parse(f.dataset.check),s=f.querySelector('svg');if(!s){return;}\
var t=[].map.call(s.querySelectorAll('text'),function(x){return x.textContent.trim();});\
var r=s.querySelectorAll('rect');c.names.forEach(function(nm,i){\
if(t.indexOf(nm)<0){bad.push(f.dataset.title+': no legend entry '+nm);}\
var k=[].filter.call(r,function(x){return (x.getAttribute('fill')||'').toUpperCase()==c.colors[i];}).length;\
if(k!=c.bars[i]+1){bad.push(f.dataset.title+': '+nm+' draws '+(k-1)+' of '+c.bars[i]+' bars');}});});\
var f=document.querySelectorAll('figure.plot').length;\
if(bad.length){b.dataset.plots='series: '+bad[0];return;}\
b.dataset.plots=(n==f&&n==+b.dataset.expected?'ok ':'missing ')+n;});})();";

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

fn inline(s: &str) -> String {
    // `code` and **bold** spans of the Markdown the reports write.
    let e = esc(s);
    let mut o = String::new();
    let (mut code, mut bold) = (false, false);
    let mut it = e.chars().peekable();
    while let Some(c) = it.next() {
        if c == '`' {
            o.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
        } else if c == '*' && it.peek() == Some(&'*') && !code {
            it.next();
            o.push_str(if bold { "</b>" } else { "<b>" });
            bold = !bold;
        } else {
            o.push(c);
        }
    }
    if code {
        o.push_str("</code>");
    }
    if bold {
        o.push_str("</b>");
    }
    o
}

fn cells(line: &str) -> Vec<&str> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(str::trim).collect()
}

/// Longest table cell shown whole; longer ones (parameter strings) fold into a `<details>`
/// whose summary is their start, so that a wide table keeps one line per row.
const CELL_MAX: usize = 40;

/// A table cell: inline Markdown, folded when longer than [`CELL_MAX`] characters.
fn cell_html(c: &str) -> String {
    if c.chars().count() <= CELL_MAX {
        return inline(c);
    }
    let start: String = c.chars().take(CELL_MAX / 2).collect();
    format!(
        "<details><summary>{}…</summary>{}</details>",
        esc(&start.replace(['`', '*'], "")),
        inline(c)
    )
}

/// Markdown as the reports write it (tables, headings, paragraphs) → HTML.
pub fn markdown_html(md: &str) -> String {
    let mut h = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if l.starts_with('|') {
            let head = cells(l);
            let align: Vec<bool> = lines
                .get(i + 1)
                .map(|a| cells(a).iter().map(|c| c.ends_with(':')).collect())
                .unwrap_or_default();
            h.push_str("<div class=\"wide\"><table>\n<tr>");
            for c in &head {
                let _ = write!(h, "<th>{}</th>", inline(c));
            }
            h.push_str("</tr>\n");
            i += 2;
            while i < lines.len() && lines[i].trim().starts_with('|') {
                h.push_str("<tr>");
                for (k, c) in cells(lines[i]).iter().enumerate() {
                    let cls = if align.get(k).copied().unwrap_or(false) {
                        " class=\"n\""
                    } else {
                        ""
                    };
                    let _ = write!(h, "<td{}>{}</td>", cls, cell_html(c));
                }
                h.push_str("</tr>\n");
                i += 1;
            }
            h.push_str("</table></div>\n");
            continue;
        }
        if let Some(t) = l.strip_prefix('#') {
            let _ = writeln!(h, "<h3>{}</h3>", inline(t.trim_start_matches('#').trim()));
        } else if !l.is_empty() {
            let _ = writeln!(h, "<p>{}</p>", inline(l));
        }
        i += 1;
    }
    h
}

/// Adds `page` as `<dir>/report.html` to `set` (written with the rest of its report set).
pub fn add(
    set: &mut crate::files::FileSet,
    page: &Page,
    dir: &std::path::Path,
) -> Result<(), String> {
    set.add(dir.join("report.html"), page.html()?);
    Ok(())
}

/// `v` with `digits` decimals and thousands separators on its integer part (`12,345.6`).
pub fn num(v: f64, digits: usize) -> String {
    let s = format!("{:.*}", digits, v);
    let (int, frac) = match s.find('.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s.as_str(), ""),
    };
    let neg = int.starts_with('-');
    let digits_only = int.trim_start_matches('-');
    let mut out = String::new();
    for (i, c) in digits_only.chars().enumerate() {
        if i > 0 && (digits_only.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{}{}{}", if neg { "-" } else { "" }, out, frac)
}

/// `v` rounded to `digits` decimals (non-finite values as they are).
pub fn round(v: f64, digits: i32) -> f64 {
    if !v.is_finite() {
        return v;
    }
    let p = 10f64.powi(digits);
    (v * p).round() / p
}

/// The value, or `-` when there is none.
pub fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table scrolls instead of being clipped, and a long parameter string folds into a
    /// details element instead of wrapping its row over many lines.
    #[test]
    fn wide_tables_scroll_and_long_cells_fold() {
        let long = "block_bytes=128 codes=original push=no-full-match dict_entries=16";
        let h = markdown_html(&format!(
            "| unit | params |\n|---|---|\n| comp | {long} |\n"
        ));
        assert!(h.starts_with("<div class=\"wide\"><table>"), "{h}");
        assert!(
            h.contains("<details><summary>block_bytes=128 code…</summary>"),
            "{h}"
        );
        assert!(h.contains(long));
        assert!(markdown_html("| a |\n|---|\n| short |\n").contains("<td>short</td>"));
    }

    #[test]
    fn tables_become_html_with_numeric_cells_right_aligned() {
        let h = markdown_html("# T\n\n| a | b |\n|---|---:|\n| `x<y` | 1.5 |\ntext **bold**\n");
        assert!(h.contains("<h3>T</h3>"), "{}", h);
        assert!(h.contains("<th>a</th><th>b</th>"), "{}", h);
        assert!(
            h.contains("<td><code>x&lt;y</code></td><td class=\"n\">1.5</td>"),
            "{}",
            h
        );
        assert!(h.contains("<p>text <b>bold</b></p>"), "{}", h);
    }

    #[test]
    fn page_counts_its_charts_and_is_ascii_safe() {
        let mut p = Page::new("t <1>");
        p.section(
            "s",
            vec![
                Block::Text("a & b".into()),
                Block::Chart(Chart {
                    title: "c".into(),
                    x_label: "x".into(),
                    y_label: "y".into(),
                    body: Body::Lines {
                        series: vec![("s".into(), vec![(0.0, 0.0), (1.0, 1.0)])],
                    },
                }),
            ],
        );
        let h = p.html().unwrap();
        assert!(h.contains("data-expected=\"1\""));
        assert!(h.contains("<title>t &lt;1&gt;</title>"));
        assert!(h.contains("a &amp; b"));
        assert!(
            !h.contains("http://") || h.contains("xmlns"),
            "no external resources"
        );
    }
}
