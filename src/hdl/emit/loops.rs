//! Runs of regular structure written as `generate` loops.
//!
//! A run is a stretch of consecutive members (instances of a family, elements of an array)
//! whose connections or expressions are the same up to their leaves, and whose every leaf
//! is the same for all members or follows the index `i` as `base[a*i + b +: w]` (a slice of
//! a signal) or `arr[a*i + b]` (an array element).

use super::super::expr::{verilog, Expr, Node};
use super::super::module::{d_name, Item, Module, SigKind, GENVAR};
use super::super::pretty::{self, text, Doc};
use super::doc_sub;
use std::fmt::Write as _;

/// One connection of one member, as far as loops are concerned.
#[derive(Clone, Debug)]
pub(super) enum Shape {
    /// `base[lo +: width]` of a named signal.
    Slice { base: String, width: u32, lo: i64 },
    /// Element `k` of array `array`.
    Elem { array: String, k: i64 },
    /// Anything else: only equal to itself.
    Other(String),
}

impl Shape {
    pub(super) fn text(&self) -> String {
        match self {
            Shape::Slice { base, width, lo } => format!("{}[{}+:{}]", base, lo, width),
            Shape::Elem { array, k } => format!("{}[{}]", array, k),
            Shape::Other(text) => text.clone(),
        }
    }
}

/// How a connection follows the loop index.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Rule {
    Same(String),
    Slice {
        base: String,
        width: u32,
        a: i64,
        b: i64,
    },
    Elem {
        array: String,
        a: i64,
        b: i64,
    },
}

impl Rule {
    /// The rule two members `k0 < k1` agree on, if any.
    pub(super) fn of(s0: &Shape, k0: i64, s1: &Shape, k1: i64) -> Option<Rule> {
        if s0.text() == s1.text() {
            return Some(Rule::Same(s0.text()));
        }
        let step = |v0: i64, v1: i64| -> Option<(i64, i64)> {
            let d = v1 - v0;
            let dk = k1 - k0;
            (d % dk == 0).then(|| (d / dk, v0 - (d / dk) * k0))
        };
        match (s0, s1) {
            (
                Shape::Slice { base, width, lo },
                Shape::Slice {
                    base: b1,
                    width: w1,
                    lo: l1,
                },
            ) if base == b1 && width == w1 => step(*lo, *l1).map(|(a, b)| Rule::Slice {
                base: base.clone(),
                width: *width,
                a,
                b,
            }),
            (Shape::Elem { array, k }, Shape::Elem { array: a1, k: j1 }) if array == a1 => {
                step(*k, *j1).map(|(a, b)| Rule::Elem {
                    array: array.clone(),
                    a,
                    b,
                })
            }
            _ => None,
        }
    }

    /// Does member `k`'s connection `s` follow this rule?
    pub(super) fn fits(&self, s: &Shape, k: i64) -> bool {
        match (self, s) {
            (Rule::Same(t), s) => *t == s.text(),
            (
                Rule::Slice { base, width, a, b },
                Shape::Slice {
                    base: b1,
                    width: w1,
                    lo,
                },
            ) => base == b1 && width == w1 && a * k + b == *lo,
            (Rule::Elem { array, a, b }, Shape::Elem { array: a1, k: j }) => {
                array == a1 && a * k + b == *j
            }
            _ => false,
        }
    }

    /// The connection as loop text (`None`: print the first member's expression).
    pub(super) fn loop_text(&self) -> Option<String> {
        match self {
            Rule::Same(_) => None,
            Rule::Slice {
                base,
                width: 1,
                a,
                b,
            } => Some(format!("{}[{}]", base, index(*a, *b))),
            Rule::Slice { base, width, a, b } => {
                Some(format!("{}[{} +: {}]", base, index(*a, *b), width))
            }
            Rule::Elem { array, a, b } => Some(format!("{}[{}]", array, index(*a, *b))),
        }
    }
}

/// `a*i + b` as Verilog text (`a*(i - c)` when `a` divides `b`).
fn index(a: i64, b: i64) -> String {
    let term = match a {
        0 => return b.to_string(),
        1 => GENVAR.to_string(),
        -1 => format!("-{}", GENVAR),
        _ if b != 0 && b % a == 0 => {
            let c = b / a;
            let sign = if c > 0 { '+' } else { '-' };
            return format!("{}*({} {} {})", a, GENVAR, sign, c.abs());
        }
        _ => format!("{}*{}", a, GENVAR),
    };
    match b {
        0 => term,
        b if b > 0 => format!("{} + {}", term, b),
        b => format!("{} - {}", term, -b),
    }
}

/// The shape of a leaf (or any expression).
pub(super) fn shape_of(m: &Module, e: &Expr) -> Shape {
    match e.node() {
        Node::Slice { base, lo } => {
            if let Node::Sig { .. } = base.node() {
                return Shape::Slice {
                    base: verilog(base),
                    width: e.width(),
                    lo: *lo as i64,
                };
            }
        }
        Node::Sig { id, .. } => {
            if let Some((a, k)) = m.signals[id.index].elem {
                return Shape::Elem {
                    array: m.arrays[a].name.to_string(),
                    k: k as i64,
                };
            }
        }
        _ => {}
    }
    Shape::Other(verilog(e))
}

/// An expression's skeleton (its text with every leaf as `@`) and its leaves' shapes, in
/// printed order.
fn pattern(m: &Module, e: &Expr) -> (String, Vec<Shape>) {
    let mut leaves = Vec::new();
    let d = doc_sub(e, &mut |x| {
        leaves.push(shape_of(m, x));
        Some("@".into())
    });
    (pretty::render(&d, 0), leaves)
}

/// What an item assigns, when it is an element of an array: (array, index, the assigned
/// name's array text, expression). Wire elements assign `x[k]`; register elements `x_d[k]`.
fn element(m: &Module, item: &Item) -> Option<(usize, u32, String, Expr)> {
    match item {
        Item::Signal(i) => {
            let s = &m.signals[*i];
            let (a, k) = s.elem?;
            (s.kind == SigKind::Wire).then_some(())?;
            Some((a, k, m.arrays[a].name.to_string(), s.driver.clone()?))
        }
        Item::Next(i) => {
            let s = &m.signals[*i];
            let (a, k) = s.elem?;
            let r = s.reg.as_ref()?;
            r.case.is_none().then_some(())?;
            Some((a, k, d_name(&m.arrays[a].name), r.next.clone()?))
        }
        _ => None,
    }
}

/// If `items` starts with a run of at least two assignments to consecutive elements of one
/// array with one skeleton, writes it as a generate loop labelled `g_<name>` (plus the first
/// index after the first loop of that name, counted in `labels`) and returns its length.
pub(super) fn assign_run(
    m: &Module,
    items: &[&Item],
    labels: &mut Vec<String>,
    o: &mut String,
) -> Option<usize> {
    let (a0, k0, name, e0) = element(m, items.first()?)?;
    let (skel, leaves0) = pattern(m, &e0);
    let mut rules: Option<Vec<Rule>> = None;
    let mut len = 1;
    for item in &items[1..] {
        let Some((a, k, _, e)) = element(m, item) else {
            break;
        };
        if a != a0 || k != k0 + len as u32 {
            break;
        }
        let (sk, leaves) = pattern(m, &e);
        if sk != skel || leaves.len() != leaves0.len() {
            break;
        }
        let fits = match &rules {
            None => {
                let r: Option<Vec<Rule>> = leaves0
                    .iter()
                    .zip(&leaves)
                    .map(|(s0, s1)| Rule::of(s0, k0 as i64, s1, k as i64))
                    .collect();
                rules = r;
                rules.is_some()
            }
            Some(r) => r.iter().zip(&leaves).all(|(r, s)| r.fits(s, k as i64)),
        };
        if !fits {
            break;
        }
        len += 1;
    }
    let rules = rules.filter(|_| len >= 2)?;
    let label = if labels.contains(&name) {
        format!("g_{}_{}", name, k0)
    } else {
        labels.push(name.clone());
        format!("g_{}", name)
    };
    let mut leaf = rules.iter();
    let d = Doc::Group(vec![
        text(format!("assign {}[{}] = ", name, GENVAR)),
        doc_sub(&e0, &mut |_| leaf.next().and_then(Rule::loop_text)),
        text(";"),
    ]);
    let _ = writeln!(o, "  generate");
    let _ = writeln!(
        o,
        "    for ({g} = {}; {g} < {}; {g} = {g} + 1) begin : {}",
        k0,
        k0 + len as u32,
        label,
        g = GENVAR
    );
    let _ = writeln!(o, "      {}", pretty::render(&d, 6));
    let _ = writeln!(o, "    end");
    let _ = writeln!(o, "  endgenerate");
    Some(len)
}
