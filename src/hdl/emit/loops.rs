//! Runs of regular structure written as `generate` loops.
//!
//! A run is a stretch of consecutive members (instances of a family, elements of an array)
//! whose connections or expressions are the same up to their leaves, and whose every leaf
//! is the same for all members or follows the index `i` as `base[a*i + b +: w]` (a slice of
//! a signal), `arr[a*i + b]` (an array element), `arr[a*i + b][lo +: w]` (a fixed slice of
//! an array element) or the constant `a*i + b` (declared in the
//! loop as `localparam [w-1:0] K<n> = a*i + b;`, so it keeps its width).

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
    /// Bits `[lo +: width]` of element `k` of array `array`.
    ElemSlice {
        array: String,
        k: i64,
        lo: u32,
        width: u32,
    },
    /// A constant of at most 31 bits.
    Const { width: u32, value: i64 },
    /// Anything else: only equal to itself.
    Other(String),
}

impl Shape {
    pub(super) fn text(&self) -> String {
        match self {
            Shape::Slice { base, width, lo } => format!("{}[{}+:{}]", base, lo, width),
            Shape::Elem { array, k } => format!("{}[{}]", array, k),
            Shape::ElemSlice {
                array,
                k,
                lo,
                width,
            } => format!("{}[{}][{}+:{}]", array, k, lo, width),
            Shape::Const { width, value } => format!("{}'d{}", width, value),
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
    ElemSlice {
        array: String,
        lo: u32,
        width: u32,
        a: i64,
        b: i64,
    },
    Const {
        width: u32,
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
            (
                Shape::ElemSlice {
                    array,
                    k,
                    lo,
                    width,
                },
                Shape::ElemSlice {
                    array: a1,
                    k: j1,
                    lo: l1,
                    width: w1,
                },
            ) if array == a1 && lo == l1 && width == w1 => {
                step(*k, *j1).map(|(a, b)| Rule::ElemSlice {
                    array: array.clone(),
                    lo: *lo,
                    width: *width,
                    a,
                    b,
                })
            }
            (
                Shape::Const { width, value },
                Shape::Const {
                    width: w1,
                    value: v1,
                },
            ) if width == w1 => step(*value, *v1).map(|(a, b)| Rule::Const {
                width: *width,
                a,
                b,
            }),
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
            (
                Rule::ElemSlice {
                    array,
                    lo,
                    width,
                    a,
                    b,
                },
                Shape::ElemSlice {
                    array: a1,
                    k: j,
                    lo: l1,
                    width: w1,
                },
            ) => array == a1 && lo == l1 && width == w1 && a * k + b == *j,
            (Rule::Const { width, a, b }, Shape::Const { width: w1, value }) => {
                width == w1 && a * k + b == *value
            }
            _ => false,
        }
    }

    /// The connection as loop text (`None`: print the first member's expression). A
    /// constant that follows the index prints as the name [`bind_consts`] gives it.
    fn loop_text(&self) -> Option<String> {
        match self {
            Rule::Same(_) | Rule::Const { .. } => None,
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
            Rule::ElemSlice {
                array,
                lo,
                width: 1,
                a,
                b,
            } => Some(format!("{}[{}][{}]", array, index(*a, *b), lo)),
            Rule::ElemSlice {
                array,
                lo,
                width,
                a,
                b,
            } => Some(format!("{}[{}][{} +: {}]", array, index(*a, *b), lo, width)),
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

/// The loop text of each rule (`None`: print the first member's leaf) and the `localparam`
/// lines that declare the constants following the index, as `K0`, `K1`, ... in leaf order
/// (one name per distinct constant).
/// A constant's value is `a*i + b` at every member, so it fits its width.
pub(super) fn bind_consts(m: &Module, rules: &[Rule]) -> (Vec<Option<String>>, Vec<String>) {
    let mut decls = Vec::new();
    let mut named: Vec<&Rule> = Vec::new();
    let texts = rules
        .iter()
        .map(|r| match r {
            Rule::Const { width, a, b } => {
                let n = named.iter().position(|x| *x == r).unwrap_or_else(|| {
                    named.push(r);
                    decls.push(format!(
                        "localparam {}{} = {};",
                        super::range(*width),
                        const_name(m, named.len() - 1),
                        index(*a, *b)
                    ));
                    named.len() - 1
                });
                Some(const_name(m, n))
            }
            r => r.loop_text(),
        })
        .collect();
    (texts, decls)
}

/// `K<n>`, or `K<n>_<j>` when the module has a signal of that name.
fn const_name(m: &Module, n: usize) -> String {
    let taken = |t: &str| m.signals.iter().any(|s| &*s.name == t);
    let base = format!("K{}", n);
    (0..)
        .map(|j| {
            if j == 0 {
                base.clone()
            } else {
                format!("{}_{}", base, j)
            }
        })
        .find(|t| !taken(t))
        .expect("an unused name")
}

/// The shape of signal `i`: an array element, or its name.
pub(super) fn shape_of_signal(m: &Module, i: usize) -> Shape {
    let s = &m.signals[i];
    match s.elem {
        Some((a, k)) => Shape::Elem {
            array: m.arrays[a].name.to_string(),
            k: k as i64,
        },
        None => Shape::Other(s.name.to_string()),
    }
}

/// The shape of a leaf (or any expression).
pub(super) fn shape_of(m: &Module, e: &Expr) -> Shape {
    match e.node() {
        Node::Slice { base, lo } => {
            if let Node::Sig { id, .. } = base.node() {
                if let Some((a, k)) = m.signals[id.index].elem {
                    return Shape::ElemSlice {
                        array: m.arrays[a].name.to_string(),
                        k: k as i64,
                        lo: *lo,
                        width: e.width(),
                    };
                }
                return Shape::Slice {
                    base: verilog(base),
                    width: e.width(),
                    lo: *lo as i64,
                };
            }
        }
        Node::Sig { id, .. } => return shape_of_signal(m, id.index),
        Node::Const(b) if b.width() <= 31 => {
            return Shape::Const {
                width: b.width(),
                value: b.to_u64() as i64,
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

/// The longest run at the start of `members` (index and leaf shapes of consecutive members
/// with one skeleton): its length and the rules its leaves follow (none for one member).
pub(super) fn longest_run(members: &[(i64, Vec<Shape>)]) -> (usize, Vec<Rule>) {
    let [(k0, s0), (k1, s1), rest @ ..] = members else {
        return (members.len().min(1), Vec::new());
    };
    let rules: Option<Vec<Rule>> = s0
        .iter()
        .zip(s1)
        .map(|(a, b)| Rule::of(a, *k0, b, *k1))
        .collect();
    let Some(rules) = rules else {
        return (1, Vec::new());
    };
    let more = rest
        .iter()
        .take_while(|(k, s)| rules.iter().zip(s).all(|(r, x)| r.fits(x, *k)))
        .count();
    (2 + more, rules)
}

/// A loop label unique in the module: `g_<base>`, then `g_<base>_<first>` for later loops
/// of the same base (`labels` holds the bases used so far).
pub(super) fn label(labels: &mut Vec<String>, base: &str, first: i64) -> String {
    if labels.iter().any(|l| l == base) {
        format!("g_{}_{}", base, first)
    } else {
        labels.push(base.to_string());
        format!("g_{}", base)
    }
}

/// Writes `body` (lines indented for the loop) as `generate for (i = from; i < to; ...)`.
pub(super) fn write_loop(o: &mut String, from: i64, to: i64, label: &str, body: &str) {
    let _ = writeln!(o, "  generate");
    let _ = writeln!(
        o,
        "    for ({g} = {}; {g} < {}; {g} = {g} + 1) begin : {}",
        from,
        to,
        label,
        g = GENVAR
    );
    o.push_str(body);
    let _ = writeln!(o, "    end");
    let _ = writeln!(o, "  endgenerate");
}

/// If `items` starts with a run of at least two assignments to consecutive elements of one
/// array with one skeleton, writes it as a generate loop and returns its length.
pub(super) fn assign_run(
    m: &Module,
    items: &[&Item],
    labels: &mut Vec<String>,
    o: &mut String,
) -> Option<usize> {
    let (a0, k0, name, e0) = element(m, items.first()?)?;
    let (skel, leaves0) = pattern(m, &e0);
    let mut cands = vec![(k0 as i64, leaves0)];
    for item in &items[1..] {
        let Some((a, k, _, e)) = element(m, item) else {
            break;
        };
        let (sk, leaves) = pattern(m, &e);
        if a != a0 || k as usize != k0 as usize + cands.len() || sk != skel {
            break;
        }
        cands.push((k as i64, leaves));
    }
    let (len, rules) = longest_run(&cands);
    if len < 2 {
        return None;
    }
    let (texts, decls) = bind_consts(m, &rules);
    let mut leaf = texts.into_iter();
    let d = Doc::Group(vec![
        text(format!("assign {}[{}] = ", name, GENVAR)),
        doc_sub(&e0, &mut |_| leaf.next().flatten()),
        text(";"),
    ]);
    let mut body: String = decls.iter().map(|l| format!("      {}\n", l)).collect();
    let _ = writeln!(body, "      {}", pretty::render(&d, 6));
    let first = k0 as i64;
    let label = label(labels, &name, first);
    write_loop(o, first, first + len as i64, &label, &body);
    Some(len)
}
