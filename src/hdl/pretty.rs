//! A small pretty printer (after Wadler's "prettier printer") for the Verilog emitter: a
//! document is text with optional line breaks; a group is printed flat when it fits in the
//! remaining width and broken otherwise; a fill packs as many items per line as fit.
//!
//! Used to keep every emitted line within [`WIDTH`] columns: long concatenations are packed,
//! long operator chains and mux chains are broken before their operators, aligned under
//! their opening parenthesis.

/// Maximum line length of emitted Verilog.
pub const WIDTH: usize = 100;

/// Beyond this column, an aligned block is indented from the enclosing indent instead, so
/// deeply nested expressions do not run off the right margin.
const ALIGN_LIMIT: usize = 56;

/// A document.
#[derive(Clone, Debug)]
pub enum Doc {
    /// Text without line breaks.
    Text(String),
    /// A space when flat, a new line at the current indent when broken.
    Line,
    /// Parts printed in sequence; the lines inside break together if the whole does not fit.
    Group(Vec<Doc>),
    /// Parts printed with the indent set to the current column (or the enclosing indent + 2
    /// when the column is past [`ALIGN_LIMIT`]).
    Align(Vec<Doc>),
    /// Parts printed with the indent increased by the given amount.
    Nest(usize, Vec<Doc>),
    /// Items separated by soft breaks: each separator breaks only if the next item does not
    /// fit on the current line.
    Fill(Vec<Doc>),
}

/// `Doc::Text` from anything printable.
pub fn text(s: impl Into<String>) -> Doc {
    Doc::Text(s.into())
}

impl Doc {
    /// Width when printed on one line.
    fn flat_width(&self) -> usize {
        match self {
            Doc::Text(s) => s.len(),
            Doc::Line => 1,
            Doc::Group(ds) | Doc::Align(ds) | Doc::Nest(_, ds) => {
                ds.iter().map(Doc::flat_width).sum()
            }
            Doc::Fill(ds) => {
                ds.iter().map(Doc::flat_width).sum::<usize>() + ds.len().saturating_sub(1)
            }
        }
    }

    /// Width of the text before the first possible break (the whole flat width if none).
    fn head_width(&self) -> (usize, bool) {
        match self {
            Doc::Text(s) => (s.len(), false),
            Doc::Line => (0, true),
            Doc::Group(ds) | Doc::Align(ds) | Doc::Nest(_, ds) => head_of(ds),
            Doc::Fill(ds) => match ds.first() {
                Some(d) => {
                    let (w, b) = d.head_width();
                    (w, b || ds.len() > 1)
                }
                None => (0, false),
            },
        }
    }
}

fn head_of(ds: &[Doc]) -> (usize, bool) {
    let mut w = 0;
    for d in ds {
        let (k, b) = d.head_width();
        w += k;
        if b {
            return (w, true);
        }
    }
    (w, false)
}

/// Width that must follow `ds[i]` on the same line: the text up to the next break in the
/// rest of `ds`, or `outer` when there is none.
fn trail_after(ds: &[Doc], i: usize, outer: usize) -> usize {
    let (w, b) = head_of(&ds[i + 1..]);
    if b {
        w
    } else {
        w + outer
    }
}

struct Printer {
    out: String,
    col: usize,
}

impl Printer {
    fn newline(&mut self, indent: usize) {
        while self.out.ends_with(' ') {
            self.out.pop();
        }
        self.out.push('\n');
        self.out.push_str(&" ".repeat(indent));
        self.col = indent;
    }

    fn seq(&mut self, ds: &[Doc], indent: usize, flat: bool, trail: usize) {
        for (i, d) in ds.iter().enumerate() {
            self.print(d, indent, flat, trail_after(ds, i, trail));
        }
    }

    fn print(&mut self, d: &Doc, indent: usize, flat: bool, trail: usize) {
        match d {
            Doc::Text(s) => {
                self.out.push_str(s);
                self.col += s.len();
            }
            Doc::Line => {
                if flat {
                    self.out.push(' ');
                    self.col += 1;
                } else {
                    self.newline(indent);
                }
            }
            Doc::Group(ds) => {
                let fits = flat || self.col + d.flat_width() + trail <= WIDTH;
                self.seq(ds, indent, fits, trail);
            }
            Doc::Align(ds) => {
                let ind = if self.col <= ALIGN_LIMIT {
                    self.col
                } else {
                    indent + 2
                };
                self.seq(ds, ind, flat, trail);
            }
            Doc::Nest(k, ds) => self.seq(ds, indent + k, flat, trail),
            Doc::Fill(ds) => {
                for (i, item) in ds.iter().enumerate() {
                    let t = if i + 1 == ds.len() { trail } else { 0 };
                    let w = item.flat_width();
                    if i > 0 {
                        if flat || self.col + 1 + w + t <= WIDTH {
                            self.out.push(' ');
                            self.col += 1;
                        } else {
                            self.newline(indent);
                        }
                    }
                    let item_flat = flat || self.col + w + t <= WIDTH;
                    self.print(item, indent, item_flat, t);
                }
            }
        }
    }
}

/// Lays out `d` starting at column `indent` (the caller has already written the indent).
pub fn render(d: &Doc, indent: usize) -> String {
    let mut p = Printer {
        out: String::new(),
        col: indent,
    };
    p.print(d, indent, false, 0);
    p.out
}

/// Wraps `text` as `//` comment lines of at most [`WIDTH`] columns at `indent`, breaking at
/// spaces (a single word longer than the line stays whole).
pub fn comment_lines(text: &str, indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    let room = WIDTH.saturating_sub(indent + 3).max(20);
    let mut lines = Vec::new();
    for para in text.lines() {
        let mut cur = String::new();
        for word in para.split_whitespace() {
            if !cur.is_empty() && cur.len() + 1 + word.len() > room {
                lines.push(format!("{}// {}", pad, cur));
                cur.clear();
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
        lines.push(format!("{}// {}", pad, cur).trim_end().to_string());
    }
    lines
}

/// Replaces the non-ASCII characters that generator comments use by ASCII spellings
/// (`§` → `Sec. `, `Δ` → `delta`, `×` → `x`, `→` → `->`, ...); any other non-ASCII
/// character becomes `?`.
pub fn ascii(s: &str) -> String {
    if s.is_ascii() {
        return s.to_string();
    }
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            o.push(c);
            continue;
        }
        o.push_str(match c {
            '§' => "Sec. ",
            'Δ' => "delta",
            'δ' => "delta",
            'λ' => "lambda",
            'µ' | 'μ' => "u",
            '×' => "x",
            '·' => "*",
            '→' => "->",
            '←' => "<-",
            '↔' => "<->",
            '≤' => "<=",
            '≥' => ">=",
            '≠' => "!=",
            '≈' => "~",
            '±' => "+/-",
            '−' | '–' => "-",
            '—' => "--",
            '…' => "...",
            '‘' | '’' => "'",
            '“' | '”' => "\"",
            '²' => "^2",
            '⌈' => "ceil(",
            '⌉' => ")",
            '⌊' => "floor(",
            '⌋' => ")",
            '∈' => "in",
            _ => "?",
        });
    }
    o.replace("Sec.  ", "Sec. ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize) -> Doc {
        let mut v = vec![text(format!("a_long_operand_name_{}", 0))];
        for i in 1..n {
            v.push(Doc::Line);
            v.push(text(format!("| a_long_operand_name_{}", i)));
        }
        Doc::Group(vec![text("("), Doc::Align(v), text(")")])
    }

    #[test]
    fn short_groups_stay_flat() {
        let d = Doc::Group(vec![text("(a"), Doc::Line, text("| b)")]);
        assert_eq!(render(&d, 2), "(a | b)");
    }

    #[test]
    fn long_groups_break_aligned_and_within_width() {
        let d = Doc::Group(vec![text("assign x = "), chain(8), text(";")]);
        let s = render(&d, 2);
        assert!(s.lines().count() > 1);
        for l in s.lines() {
            assert!(l.len() + 2 <= WIDTH, "{}", l);
        }
        assert!(s.contains("\n              | a_long_operand_name_1"));
    }

    #[test]
    fn fill_packs_items() {
        let items: Vec<Doc> = (0..60).map(|i| text(format!("sig_{},", i))).collect();
        let s = render(&Doc::Fill(items), 4);
        assert!(s.lines().count() < 10);
        for (i, l) in s.lines().enumerate() {
            // The caller has written the first line's indent.
            let indent = if i == 0 { 4 } else { 0 };
            assert!(l.len() + indent <= WIDTH, "{}", l);
        }
    }

    #[test]
    fn comments_wrap_and_become_ascii() {
        let long = "word ".repeat(40);
        let ls = comment_lines(&long, 2);
        assert!(ls.len() > 1 && ls.iter().all(|l| l.len() <= WIDTH));
        assert_eq!(ascii("§2.2 Δ ≤ 3 × 4"), "Sec. 2.2 delta <= 3 x 4");
    }
}
