//! Combinational expressions: immutable trees over module signals and constants.
//!
//! Expressions are cheap to clone (shared nodes). Every expression knows its width; width rules
//! are the strict ones of hwzip, not Verilog's context-determined widths:
//! * bitwise ops, `+`, `-`, comparisons and mux arms need operands of equal width;
//! * reductions and comparisons produce 1 bit; a mux select is 1 bit;
//! * shifts keep the width of the shifted operand.
//!
//! A rule violation does not panic: the expression is recorded as malformed and the module
//! builder reports it, naming both operands and their widths, when the module is finished.

use super::bits::Bits;
use std::fmt::Write as _;
use std::sync::Arc;

/// Binary operators that keep the operand width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// Bitwise AND.
    And,
    /// Bitwise OR.
    Or,
    /// Bitwise XOR.
    Xor,
    /// Modular addition.
    Add,
    /// Modular subtraction.
    Sub,
}

impl BinOp {
    /// Verilog operator.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Add => "+",
            BinOp::Sub => "-",
        }
    }
}

/// Unsigned comparisons (1-bit result).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<` unsigned
    Lt,
    /// `<=` unsigned
    Le,
    /// `>` unsigned
    Gt,
    /// `>=` unsigned
    Ge,
}

/// Reductions (1-bit result).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RedOp {
    /// `|x`
    Or,
    /// `&x`
    And,
    /// `^x`
    Xor,
}

/// Shift direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftDir {
    /// Towards the MSB (`<<`).
    Left,
    /// Towards the LSB, logical (`>>`).
    Right,
}

impl ShiftDir {
    /// The Verilog operator.
    pub fn symbol(self) -> &'static str {
        match self {
            ShiftDir::Left => "<<",
            ShiftDir::Right => ">>",
        }
    }
}

/// Identifies a signal inside one module builder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SigId {
    pub(crate) module: u64,
    pub(crate) index: usize,
}

/// Identifies a memory inside one module builder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemId {
    pub(crate) module: u64,
    pub(crate) index: usize,
}

/// Expression node kinds.
#[derive(Debug)]
pub enum Node {
    /// A named signal (port, wire, register, instance output).
    Sig {
        /// Which signal.
        id: SigId,
        /// Its Verilog name.
        name: Arc<str>,
    },
    /// A constant.
    Const(Bits),
    /// A named constant (`localparam`), e.g. an FSM state code; behaves as its value.
    Param {
        /// Its Verilog name.
        name: Arc<str>,
        /// Its value.
        value: Bits,
    },
    /// `base[lo +: width]`; `base` is a signal, a memory read or a constant.
    Slice {
        /// What is sliced.
        base: Expr,
        /// Lowest bit.
        lo: u32,
    },
    /// `{parts[0], parts[1], ...}`: `parts[0]` is the most significant.
    Concat(Vec<Expr>),
    /// `{n{e}}`
    Repeat(Expr, u32),
    /// `~e`
    Not(Expr),
    /// Reduction.
    Reduce(RedOp, Expr),
    /// Width-preserving binary operator.
    Bin(BinOp, Expr, Expr),
    /// Comparison.
    Cmp(CmpOp, Expr, Expr),
    /// Shift by a constant amount.
    ShiftConst(ShiftDir, Expr, u32),
    /// Shift by a signal amount.
    ShiftVar(ShiftDir, Expr, Expr),
    /// `sel ? t : f`
    Mux(Expr, Expr, Expr),
    /// Asynchronous read of a memory word.
    MemRead {
        /// Which memory.
        mem: MemId,
        /// Its Verilog name.
        name: Arc<str>,
        /// Word address.
        addr: Expr,
    },
}

/// `{hi, lo}` as one part when both are zero (or all-ones, or single-bit) constants or
/// adjacent slices of one signal.
fn join(hi: &Expr, lo: &Expr) -> Option<Expr> {
    if hi.error.is_some() || lo.error.is_some() {
        return None;
    }
    match (&*hi.node, &*lo.node) {
        // A padding run or single bits; a field such as a 4-bit code stays on its own.
        (Node::Const(a), Node::Const(b))
            if (a.is_zero() && b.is_zero())
                || (a.count_ones() == a.width() && b.count_ones() == b.width())
                || (a.width() == 1 && b.width() == 1) =>
        {
            Some(Expr::constant(Bits::concat_msb(&[a.clone(), b.clone()])))
        }
        (Node::Slice { base: b1, lo: l1 }, Node::Slice { base: b2, lo: l2 })
            if b1.error.is_none() && l2 + lo.width == *l1 =>
        {
            match (&*b1.node, &*b2.node) {
                (Node::Sig { id: i1, .. }, Node::Sig { id: i2, .. }) if i1 == i2 => {
                    Some(b1.slice(*l2, hi.width + lo.width))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A combinational expression of a known width.
#[derive(Clone, Debug)]
pub struct Expr {
    pub(crate) node: Arc<Node>,
    pub(crate) width: u32,
    /// Width-rule violation found while building this node (not its children).
    pub(crate) error: Option<Arc<str>>,
}

/// The comparison methods of [`Expr`], one per [`CmpOp`]: `name => op;`.
macro_rules! cmp_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&self, o: &Expr) -> Expr {
                Expr::cmp(CmpOp::$op, self, o)
            }
        )*
    };
}

impl Expr {
    fn new(node: Node, width: u32) -> Expr {
        Expr {
            node: Arc::new(node),
            width,
            error: None,
        }
    }

    fn bad(node: Node, width: u32, msg: String) -> Expr {
        Expr {
            node: Arc::new(node),
            width,
            error: Some(msg.into()),
        }
    }

    pub(crate) fn sig(id: SigId, name: Arc<str>, width: u32) -> Expr {
        Expr::new(Node::Sig { id, name }, width)
    }

    pub(crate) fn mem_read(mem: MemId, name: Arc<str>, width: u32, addr: Expr) -> Expr {
        Expr::new(Node::MemRead { mem, name, addr }, width)
    }

    /// The node behind this expression.
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Constant `value` of `width` bits (truncated).
    pub fn lit(width: u32, value: u64) -> Expr {
        Expr::constant(Bits::from_u64(width, value))
    }

    /// Constant from a bit vector.
    pub fn constant(value: Bits) -> Expr {
        let w = value.width();
        Expr::new(Node::Const(value), w)
    }

    /// A placeholder of `width` bits that carries a builder error (reported by `finish`).
    pub(crate) fn malformed(width: u32, msg: String) -> Expr {
        Expr::bad(Node::Const(Bits::zero(width.max(1))), width.max(1), msg)
    }

    pub(crate) fn param(name: Arc<str>, value: Bits) -> Expr {
        let w = value.width();
        Expr::new(Node::Param { name, value }, w)
    }

    /// All-zero constant.
    pub fn zero(width: u32) -> Expr {
        Expr::constant(Bits::zero(width))
    }

    /// All-ones constant.
    pub fn ones(width: u32) -> Expr {
        Expr::constant(Bits::ones(width))
    }

    /// The constant value, if this is a constant.
    pub fn as_const(&self) -> Option<&Bits> {
        match &*self.node {
            Node::Const(b) | Node::Param { value: b, .. } => Some(b),
            _ => None,
        }
    }

    /// `self[lo +: width]`. Slicing a concatenation or a slice is folded; slicing any other
    /// compound expression is reported when the module is finished (name it with a wire first).
    pub fn slice(&self, lo: u32, width: u32) -> Expr {
        if lo.checked_add(width).is_none_or(|hi| hi > self.width) || width == 0 {
            return Expr::bad(
                Node::Slice {
                    base: self.clone(),
                    lo,
                },
                width.max(1),
                format!(
                    "slice [{}:{}] out of range of `{}` ({} bits)",
                    lo as u64 + width as u64 - 1,
                    lo,
                    self.brief(),
                    self.width
                ),
            );
        }
        if lo == 0 && width == self.width {
            return self.clone();
        }
        match &*self.node {
            Node::Const(b) | Node::Param { value: b, .. } => Expr::constant(b.slice(lo, width)),
            Node::Slice { base, lo: l0 } => base.slice(l0 + lo, width),
            Node::Concat(parts) => {
                // Walk LSB-first, keep the overlapping part of each piece.
                let mut keep = Vec::new();
                let mut pos = 0;
                for p in parts.iter().rev() {
                    let (a, b) = (pos, pos + p.width);
                    let (s, e) = (a.max(lo), b.min(lo + width));
                    if s < e {
                        keep.push(p.slice(s - a, e - s));
                    }
                    pos = b;
                }
                keep.reverse();
                Expr::cat(&keep)
            }
            Node::Repeat(e, _) if e.width == 1 => Expr::new(Node::Repeat(e.clone(), width), width),
            _ => Expr::new(
                Node::Slice {
                    base: self.clone(),
                    lo,
                },
                width,
            ),
        }
    }

    /// Bit `i`.
    pub fn bit(&self, i: u32) -> Expr {
        self.slice(i, 1)
    }

    /// Concatenation, `parts[0]` at the most significant end (Verilog order).
    pub fn cat(parts: &[Expr]) -> Expr {
        match parts.len() {
            0 => Expr::bad(Node::Concat(vec![]), 1, "empty concatenation".into()),
            1 => parts[0].clone(),
            _ => {
                let mut flat = Vec::new();
                for p in parts {
                    match &*p.node {
                        Node::Concat(inner) if p.error.is_none() => {
                            flat.extend(inner.iter().cloned())
                        }
                        _ => flat.push(p.clone()),
                    }
                }
                // Neighbouring padding constants become one constant and neighbouring slices
                // of one signal one slice, as a person writes them.
                let mut merged: Vec<Expr> = Vec::with_capacity(flat.len());
                for p in flat {
                    match merged.last().and_then(|hi| join(hi, &p)) {
                        Some(j) => *merged.last_mut().expect("a last part") = j,
                        None => merged.push(p),
                    }
                }
                if merged.len() == 1 {
                    return merged.pop().expect("one part");
                }
                // A concatenation of constants only is one constant.
                let consts: Option<Vec<Bits>> = merged
                    .iter()
                    .map(|p| match &*p.node {
                        Node::Const(b) if p.error.is_none() => Some(b.clone()),
                        _ => None,
                    })
                    .collect();
                if let Some(c) = consts {
                    return Expr::constant(Bits::concat_msb(&c));
                }
                let w = merged.iter().map(|p| p.width).sum();
                Expr::new(Node::Concat(merged), w)
            }
        }
    }

    /// Concatenation with `lanes[0]` at the least significant end (array/lane order).
    pub fn cat_lsb(lanes: &[Expr]) -> Expr {
        let mut v: Vec<Expr> = lanes.to_vec();
        v.reverse();
        Expr::cat(&v)
    }

    /// Splits into `n` equal lanes, lane 0 at the least significant end.
    pub fn lanes(&self, lane_width: u32) -> Vec<Expr> {
        (0..self.width / lane_width.max(1))
            .map(|i| self.slice(i * lane_width, lane_width))
            .collect()
    }

    /// `{n{self}}`
    pub fn repeat(&self, n: u32) -> Expr {
        if n == 1 {
            return self.clone();
        }
        Expr::new(Node::Repeat(self.clone(), n), self.width * n)
    }

    /// Zero-extends to `width` (or returns self if equal). Narrowing is an error.
    pub fn zext(&self, width: u32) -> Expr {
        if width == self.width {
            self.clone()
        } else if width < self.width {
            Expr::bad(
                Node::Concat(vec![self.clone()]),
                width,
                format!(
                    "zext of `{}` ({} bits) to narrower {} bits",
                    self.brief(),
                    self.width,
                    width
                ),
            )
        } else {
            Expr::cat(&[Expr::zero(width - self.width), self.clone()])
        }
    }

    /// Zero-extends or truncates to `width`.
    pub fn resize(&self, width: u32) -> Expr {
        if width <= self.width {
            self.slice(0, width)
        } else {
            self.zext(width)
        }
    }

    /// OR-reduction: 1 when any bit is set.
    pub fn any(&self) -> Expr {
        if self.width == 1 {
            return self.clone();
        }
        if let Some(c) = self.as_const() {
            return Expr::lit(1, (!c.is_zero()) as u64);
        }
        Expr::new(Node::Reduce(RedOp::Or, self.clone()), 1)
    }

    /// AND-reduction.
    pub fn all(&self) -> Expr {
        if self.width == 1 {
            return self.clone();
        }
        if let Some(c) = self.as_const() {
            return Expr::lit(1, (c.count_ones() == c.width()) as u64);
        }
        Expr::new(Node::Reduce(RedOp::And, self.clone()), 1)
    }

    /// XOR-reduction (parity).
    pub fn parity(&self) -> Expr {
        if self.width == 1 {
            return self.clone();
        }
        if let Some(c) = self.as_const() {
            return Expr::lit(1, (c.count_ones() % 2 == 1) as u64);
        }
        Expr::new(Node::Reduce(RedOp::Xor, self.clone()), 1)
    }

    fn bin(op: BinOp, a: &Expr, b: &Expr) -> Expr {
        let node = Node::Bin(op, a.clone(), b.clone());
        if a.width != b.width {
            let sym = op.symbol();
            return Expr::bad(
                node,
                a.width,
                format!(
                    "width mismatch in `{}`: left `{}` is {} bits, right `{}` is {} bits",
                    sym,
                    a.brief(),
                    a.width,
                    b.brief(),
                    b.width
                ),
            );
        }
        if let Some(k) = Expr::fold_bin(op, a, b) {
            return k;
        }
        Expr::new(node, a.width)
    }

    /// Trivial constant folding of `a op b` (operands of equal width): two constants, and the
    /// identities and annihilators `x & 1..1`, `x & 0`, `x | 0`, `x | 1..1`, `x ^ 0`, `x + 0`,
    /// `x - 0`. Semantics are unchanged; the emitted Verilog loses `(1'd1 & x)`-style noise.
    fn fold_bin(op: BinOp, a: &Expr, b: &Expr) -> Option<Expr> {
        if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
            return Some(Expr::constant(match op {
                BinOp::And => x.and(y),
                BinOp::Or => x.or(y),
                BinOp::Xor => x.xor(y),
                BinOp::Add => x.add(y),
                BinOp::Sub => x.sub(y),
            }));
        }
        let zero = |e: &Expr| e.as_const().is_some_and(Bits::is_zero);
        let ones = |e: &Expr| e.as_const().is_some_and(|c| c.count_ones() == c.width());
        match op {
            BinOp::And if ones(a) => Some(b.clone()),
            BinOp::And if ones(b) => Some(a.clone()),
            BinOp::And if zero(a) || zero(b) => Some(Expr::zero(a.width)),
            BinOp::Or if ones(a) || ones(b) => Some(Expr::ones(a.width)),
            BinOp::Or | BinOp::Xor | BinOp::Add if zero(a) => Some(b.clone()),
            BinOp::Or | BinOp::Xor | BinOp::Add | BinOp::Sub if zero(b) => Some(a.clone()),
            _ => None,
        }
    }

    fn cmp(op: CmpOp, a: &Expr, b: &Expr) -> Expr {
        let node = Node::Cmp(op, a.clone(), b.clone());
        if a.width != b.width {
            return Expr::bad(
                node,
                1,
                format!(
                    "width mismatch in comparison: left `{}` is {} bits, right `{}` is {} bits",
                    a.brief(),
                    a.width,
                    b.brief(),
                    b.width
                ),
            );
        }
        if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
            let v = match op {
                CmpOp::Eq => x.val_eq(y),
                CmpOp::Ne => !x.val_eq(y),
                CmpOp::Lt => x.ult(y),
                CmpOp::Le => !y.ult(x),
                CmpOp::Gt => y.ult(x),
                CmpOp::Ge => !x.ult(y),
            };
            return Expr::lit(1, v as u64);
        }
        Expr::new(node, 1)
    }

    cmp_methods! {
        /// `self == o`
        eq => Eq;
        /// `self != o`
        ne => Ne;
        /// `self < o` (unsigned)
        lt => Lt;
        /// `self <= o` (unsigned)
        le => Le;
        /// `self > o` (unsigned)
        gt => Gt;
        /// `self >= o` (unsigned)
        ge => Ge;
    }

    /// `self == value` with the constant sized to `self`.
    pub fn eq_lit(&self, value: u64) -> Expr {
        self.eq(&Expr::lit(self.width, value))
    }

    /// Shift left by a constant, same width.
    pub fn shl(&self, n: u32) -> Expr {
        if n == 0 {
            return self.clone();
        }
        if n >= self.width {
            return Expr::zero(self.width);
        }
        Expr::cat(&[self.slice(0, self.width - n), Expr::zero(n)])
    }

    /// Logical shift right by a constant, same width.
    pub fn shr(&self, n: u32) -> Expr {
        if n == 0 {
            return self.clone();
        }
        if n >= self.width {
            return Expr::zero(self.width);
        }
        Expr::cat(&[Expr::zero(n), self.slice(n, self.width - n)])
    }

    /// Shift left by a signal amount (barrel; prefer `blocks::shift_log` for wide data).
    pub fn shl_var(&self, amount: &Expr) -> Expr {
        Expr::new(
            Node::ShiftVar(ShiftDir::Left, self.clone(), amount.clone()),
            self.width,
        )
    }

    /// Logical shift right by a signal amount.
    pub fn shr_var(&self, amount: &Expr) -> Expr {
        Expr::new(
            Node::ShiftVar(ShiftDir::Right, self.clone(), amount.clone()),
            self.width,
        )
    }

    /// `sel ? t : f` where `self` is the 1-bit select.
    pub fn select(&self, t: &Expr, f: &Expr) -> Expr {
        let node = Node::Mux(self.clone(), t.clone(), f.clone());
        if self.width != 1 {
            return Expr::bad(
                node,
                t.width,
                format!(
                    "mux select `{}` is {} bits, expected 1",
                    self.brief(),
                    self.width
                ),
            );
        }
        if t.width != f.width {
            return Expr::bad(
                node,
                t.width,
                format!(
                    "width mismatch in mux: `{}` is {} bits, `{}` is {} bits",
                    t.brief(),
                    t.width,
                    f.brief(),
                    f.width
                ),
            );
        }
        if let Some(c) = self.as_const() {
            return if c.is_zero() { f.clone() } else { t.clone() };
        }
        if let (Node::Const(a), Node::Const(b)) = (&*t.node, &*f.node) {
            if a == b && t.error.is_none() && f.error.is_none() {
                return t.clone();
            }
        }
        Expr::new(node, t.width)
    }

    /// `self ? v : 0`: gates a value with this 1-bit enable.
    pub fn gate(&self, v: &Expr) -> Expr {
        self.select(v, &Expr::zero(v.width))
    }

    /// A short Verilog-like rendering for error messages.
    pub fn brief(&self) -> String {
        let mut s = String::new();
        render(self, &mut s, 3);
        if s.len() > 80 {
            s.truncate(77);
            s.push_str("...");
        }
        s
    }
}

/// Renders `(a sym b)`; `b` renders the right operand.
fn infix(out: &mut String, depth: u32, a: &Expr, sym: &str, b: impl FnOnce(&mut String)) {
    out.push('(');
    render(a, out, depth);
    let _ = write!(out, " {sym} ");
    b(out);
    out.push(')');
}

/// Renders an expression as Verilog text (depth-limited when `depth` is small, for messages).
fn render(e: &Expr, out: &mut String, depth: u32) {
    if depth == 0 {
        out.push_str("...");
        return;
    }
    let d = depth - 1;
    match &*e.node {
        Node::Sig { name, .. } | Node::Param { name, .. } => out.push_str(name),
        Node::Const(b) => {
            let _ = write!(out, "{}", const_text(b));
        }
        Node::Slice { base, lo } => {
            render(base, out, d);
            if e.width == 1 {
                let _ = write!(out, "[{}]", lo);
            } else {
                let _ = write!(out, "[{}:{}]", lo + e.width - 1, lo);
            }
        }
        Node::Concat(parts) => {
            out.push('{');
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render(p, out, d);
            }
            out.push('}');
        }
        Node::Repeat(x, n) => {
            let _ = write!(out, "{{{}{{", n);
            render(x, out, d);
            out.push_str("}}");
        }
        Node::Not(x) => {
            out.push('~');
            render(x, out, d);
        }
        Node::Reduce(op, x) => {
            out.push('(');
            out.push(match op {
                RedOp::Or => '|',
                RedOp::And => '&',
                RedOp::Xor => '^',
            });
            render(x, out, d);
            out.push(')');
        }
        Node::Bin(op, a, b) => infix(out, d, a, op.symbol(), |o| render(b, o, d)),
        Node::Cmp(op, a, b) => {
            let sym = match op {
                CmpOp::Eq => "==",
                CmpOp::Ne => "!=",
                CmpOp::Lt => "<",
                CmpOp::Le => "<=",
                CmpOp::Gt => ">",
                CmpOp::Ge => ">=",
            };
            infix(out, d, a, sym, |o| render(b, o, d));
        }
        Node::ShiftConst(dir, a, n) => {
            infix(out, d, a, dir.symbol(), |o| {
                let _ = write!(o, "{n}");
            });
        }
        Node::ShiftVar(dir, a, n) => infix(out, d, a, dir.symbol(), |o| render(n, o, d)),
        Node::Mux(s, t, f) => {
            out.push('(');
            render(s, out, d);
            out.push_str(" ? ");
            render(t, out, d);
            out.push_str(" : ");
            render(f, out, d);
            out.push(')');
        }
        Node::MemRead { name, addr, .. } => {
            out.push_str(name);
            out.push('[');
            render(addr, out, d);
            out.push(']');
        }
    }
}

/// Full Verilog text of an expression.
pub(crate) fn verilog(e: &Expr) -> String {
    let mut s = String::new();
    render(e, &mut s, u32::MAX);
    s
}

/// Verilog text of a sized constant: decimal up to 32 bits, hexadecimal above.
pub(crate) fn const_text(b: &Bits) -> String {
    if b.width() <= 32 {
        format!("{}'d{}", b.width(), b.to_u64())
    } else {
        format!("{}'h{}", b.width(), b.to_hex())
    }
}

macro_rules! binop_impl {
    ($tr:ident, $f:ident, $op:expr) => {
        impl std::ops::$tr<&Expr> for &Expr {
            type Output = Expr;
            fn $f(self, o: &Expr) -> Expr {
                Expr::bin($op, self, o)
            }
        }
        impl std::ops::$tr<Expr> for Expr {
            type Output = Expr;
            fn $f(self, o: Expr) -> Expr {
                Expr::bin($op, &self, &o)
            }
        }
        impl std::ops::$tr<&Expr> for Expr {
            type Output = Expr;
            fn $f(self, o: &Expr) -> Expr {
                Expr::bin($op, &self, o)
            }
        }
        impl std::ops::$tr<Expr> for &Expr {
            type Output = Expr;
            fn $f(self, o: Expr) -> Expr {
                Expr::bin($op, self, &o)
            }
        }
    };
}
binop_impl!(BitAnd, bitand, BinOp::And);
binop_impl!(BitOr, bitor, BinOp::Or);
binop_impl!(BitXor, bitxor, BinOp::Xor);
binop_impl!(Add, add, BinOp::Add);
binop_impl!(Sub, sub, BinOp::Sub);

impl std::ops::Not for &Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        if let Some(c) = self.as_const() {
            return Expr::constant(c.not());
        }
        if let Node::Not(x) = &*self.node {
            return x.clone();
        }
        Expr::new(Node::Not(self.clone()), self.width)
    }
}
impl std::ops::Not for Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        !&self
    }
}

/// Calls `f` on `e` and every sub-expression once per distinct node (shared nodes once).
pub(crate) fn visit(
    e: &Expr,
    seen: &mut std::collections::HashSet<usize>,
    f: &mut dyn FnMut(&Expr),
) {
    let key = Arc::as_ptr(&e.node) as usize;
    if !seen.insert(key) {
        return;
    }
    f(e);
    match &*e.node {
        Node::Sig { .. } | Node::Const(_) | Node::Param { .. } => {}
        Node::Slice { base, .. } => visit(base, seen, f),
        Node::Concat(parts) => parts.iter().for_each(|p| visit(p, seen, f)),
        Node::Repeat(x, _) | Node::Not(x) | Node::Reduce(_, x) | Node::ShiftConst(_, x, _) => {
            visit(x, seen, f)
        }
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::ShiftVar(_, a, b) => {
            visit(a, seen, f);
            visit(b, seen, f);
        }
        Node::Mux(s, t, x) => {
            visit(s, seen, f);
            visit(t, seen, f);
            visit(x, seen, f);
        }
        Node::MemRead { addr, .. } => visit(addr, seen, f),
    }
}
