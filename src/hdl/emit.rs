//! Verilog-2005 emitter: one file per module, readable names, deterministic text.
//!
//! Layout of every module (in the style of hand-written RTL, e.g. lowRISC's style guide):
//! header comment, port list (`clk_i`, `rst_ni` first), then the generator's sections in
//! creation order. A section starts at a generator comment (`ModuleBuilder::comment`, e.g.
//! "Stage 2: ...") and holds, in this order: the declarations of the nets it uses first,
//! its continuous assignments and instances in creation order (a register's next state is
//! the wire `x_d` of register `x_q`), and one flop block for the registers whose next state
//! it sets, which only loads `x_q <= x_d` (with reset and enable). The lint waiver for bits
//! intentionally unused comes last. Arrays are declared once; runs of array assignments and
//! of family instances that follow the index become `generate` loops (`loops`, `family`), and
//! consecutive array registers load in one `for` line.
//!
//! Every line is ASCII and at most [`pretty::WIDTH`] columns. The output is accepted by
//! `verilator --lint-only -Wall` (5.006) and Yosys 0.23.

use super::expr::{const_text, verilog, BinOp, Expr, Node, RedOp};
use super::module::{d_name, CaseForm, HdlError, Item, Module, SigKind};
use super::pretty::{self, ascii, comment_lines, text, Doc};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

mod family;
mod loops;

pub(super) fn range(width: u32) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0] ", width - 1)
    }
}

/// The document of an expression: atoms as text, operator chains and mux chains as groups
/// that break before their operators, concatenations as fills.
pub(crate) fn doc(e: &Expr) -> Doc {
    doc_sub(e, &mut |_| None)
}

/// A leaf's text in place of its own: called on every signal, slice of a signal and constant,
/// in printed order (`None`: the leaf's own text).
pub(crate) type Subst<'a> = dyn FnMut(&Expr) -> Option<String> + 'a;

/// [`doc`], with signals, slices of signals and constants printed by `f` where it answers.
pub(crate) fn doc_sub(e: &Expr, f: &mut Subst<'_>) -> Doc {
    if is_leaf(e) || matches!(e.node(), Node::Const(_)) {
        if let Some(t) = f(e) {
            return text(t);
        }
    }
    match e.node() {
        Node::Sig { .. } | Node::Slice { .. } | Node::MemRead { .. } | Node::Param { .. } => {
            text(verilog(e))
        }
        Node::Const(b) => const_doc(b),
        Node::Concat(parts) => concat_doc(parts.iter().map(|p| doc_sub(p, f)).collect()),
        Node::Repeat(x, n) => {
            Doc::Group(vec![text(format!("{{{}{{", n)), doc_sub(x, f), text("}}")])
        }
        Node::Not(x) => Doc::Group(vec![text("~"), doc_sub(x, f)]),
        Node::Reduce(op, x) => {
            let sym = match op {
                RedOp::Or => "|",
                RedOp::And => "&",
                RedOp::Xor => "^",
            };
            Doc::Group(vec![text(format!("({}", sym)), doc_sub(x, f), text(")")])
        }
        Node::Bin(op, a, b) => {
            // Same-operator chains of associative operators print without inner parentheses.
            let mut operands = Vec::new();
            flatten_chain(a, *op, &mut operands);
            operands.push(b);
            // Packed as many operands per line as fit, each line after the first starting
            // with its operator.
            let items = operands
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    if i == 0 {
                        doc_sub(x, f)
                    } else {
                        Doc::Group(vec![text(format!("{} ", op.symbol())), doc_sub(x, f)])
                    }
                })
                .collect();
            paren(vec![Doc::Fill(items)])
        }
        Node::Cmp(op, a, b) => {
            let sym = match op {
                super::expr::CmpOp::Eq => "==",
                super::expr::CmpOp::Ne => "!=",
                super::expr::CmpOp::Lt => "<",
                super::expr::CmpOp::Le => "<=",
                super::expr::CmpOp::Gt => ">",
                super::expr::CmpOp::Ge => ">=",
            };
            paren(vec![
                doc_sub(a, f),
                Doc::Line,
                text(format!("{} ", sym)),
                doc_sub(b, f),
            ])
        }
        Node::ShiftConst(dir, a, n) => {
            let sym = dir.symbol();
            paren(vec![doc_sub(a, f), text(format!(" {} {}", sym, n))])
        }
        Node::ShiftVar(dir, a, n) => {
            let sym = dir.symbol();
            paren(vec![
                doc_sub(a, f),
                Doc::Line,
                text(format!("{} ", sym)),
                doc_sub(n, f),
            ])
        }
        Node::Mux(..) => {
            // `s1 ? t1 : s2 ? t2 : f` (the conditional operator is right-associative), one
            // arm per line when it does not fit.
            let mut v = Vec::new();
            let mut cur = e;
            while let Node::Mux(s, t, other) = cur.node() {
                if !v.is_empty() {
                    v.push(Doc::Line);
                    v.push(text(": "));
                }
                // `s ? t` breaks after the `?` only when it does not fit by itself (deep
                // nests in the true arm).
                v.push(Doc::Group(vec![
                    doc_sub(s, f),
                    text(" ?"),
                    Doc::Nest(2, vec![Doc::Line, doc_sub(t, f)]),
                ]));
                cur = other;
            }
            v.push(Doc::Line);
            v.push(text(": "));
            v.push(doc_sub(cur, f));
            paren(v)
        }
    }
}

/// A signal or a slice of a signal: what [`doc_sub`] may substitute.
pub(crate) fn is_leaf(e: &Expr) -> bool {
    match e.node() {
        Node::Sig { .. } => true,
        Node::Slice { base, .. } => matches!(base.node(), Node::Sig { .. }),
        _ => false,
    }
}

/// `{a, b, ...}` filled over lines, aligned after the brace.
fn concat_doc(parts: Vec<Doc>) -> Doc {
    let n = parts.len();
    let items = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            if i + 1 < n {
                Doc::Group(vec![p, text(",")])
            } else {
                p
            }
        })
        .collect();
    Doc::Group(vec![
        text("{"),
        Doc::Align(vec![Doc::Fill(items)]),
        text("}"),
    ])
}

fn paren(inner: Vec<Doc>) -> Doc {
    Doc::Group(vec![text("("), Doc::Align(inner), text(")")])
}

fn flatten_chain<'a>(e: &'a Expr, op: BinOp, out: &mut Vec<&'a Expr>) {
    match e.node() {
        Node::Bin(o, a, b) if *o == op && op != BinOp::Sub && e.error.is_none() => {
            flatten_chain(a, op, out);
            // Only the left operand continues the chain: `a op (b op c)` keeps its parentheses.
            out.push(b);
        }
        _ => out.push(e),
    }
}

/// A constant: decimal up to 32 bits; wider zero or small values as short hexadecimal
/// (Verilog zero-extends sized literals); all-ones as a replication; anything else as a
/// concatenation of 64-bit pieces, so no literal is wider than a line.
fn const_doc(b: &super::Bits) -> Doc {
    let w = b.width();
    if w <= 32 {
        return text(const_text(b));
    }
    if b.is_zero() {
        return text(format!("{}'d0", w));
    }
    if b.count_ones() == w {
        return text(format!("{{{}{{1'b1}}}}", w));
    }
    let hex = b.to_hex();
    let trimmed = hex.trim_start_matches('0');
    if trimmed.len() <= 16 {
        return text(format!("{}'h{}", w, trimmed));
    }
    let mut parts = Vec::new();
    let mut hi = w;
    while hi > 0 {
        let take = if !hi.is_multiple_of(64) { hi % 64 } else { 64 };
        parts.push(const_doc(&b.slice(hi - take, take)));
        hi -= take;
    }
    concat_doc(parts)
}

/// `prefix<expr>suffix` laid out at `indent`, as lines ending in a newline.
fn statement(o: &mut String, indent: usize, prefix: &str, e: &Expr, suffix: &str) {
    let d = Doc::Group(vec![text(prefix), doc(e), text(suffix)]);
    let _ = writeln!(o, "{}{}", " ".repeat(indent), pretty::render(&d, indent));
}

/// A declaration with its comment beside it, or above it when the line would be too long.
fn declaration(o: &mut String, decl: &str, comment: Option<&str>) {
    match comment {
        Some(c) => {
            let c = ascii(c);
            let line = format!("  {}  // {}", decl, c);
            if line.len() <= pretty::WIDTH && !c.contains('\n') {
                let _ = writeln!(o, "{}", line);
            } else {
                for l in comment_lines(&c, 2) {
                    let _ = writeln!(o, "{}", l);
                }
                let _ = writeln!(o, "  {}", decl);
            }
        }
        None => {
            let _ = writeln!(o, "  {}", decl);
        }
    }
}

/// Signals an item reads (for declaration before use), in first-use order.
fn refs_of(m: &Module, item: &Item, out: &mut Vec<usize>) {
    let mut exprs: Vec<&Expr> = Vec::new();
    match item {
        Item::Comment(_) => {}
        Item::Signal(i) => {
            if let Some(d) = &m.signals[*i].driver {
                exprs.push(d);
            }
        }
        Item::Next(i) => {
            if let Some(r) = &m.signals[*i].reg {
                exprs.extend(r.next.iter());
                exprs.extend(r.enable.iter());
            }
        }
        Item::Memory(i) => {
            for w in &m.memories[*i].writes {
                exprs.extend([&w.en, &w.addr, &w.data]);
                exprs.extend(w.mask.iter().map(|(mask, _)| mask));
            }
        }
        Item::Instance(i) => exprs.extend(m.instances[*i].inputs.iter().map(|(_, e)| e)),
    }
    let mut seen = HashSet::new();
    for e in exprs {
        super::expr::visit(e, &mut seen, &mut |x: &Expr| {
            if let Node::Sig { id, .. } = x.node() {
                out.push(id.index);
            }
        });
    }
}

/// One section: the comment lines that open it and its items.
struct Section<'a> {
    comments: Vec<&'a str>,
    items: Vec<&'a Item>,
}

fn sections(m: &Module) -> Vec<Section<'_>> {
    let mut out = vec![Section {
        comments: Vec::new(),
        items: Vec::new(),
    }];
    for item in &m.items {
        match item {
            Item::Comment(c) => {
                let last = out.last_mut().expect("at least one section");
                if last.items.is_empty() {
                    last.comments.push(c);
                } else {
                    out.push(Section {
                        comments: vec![c],
                        items: Vec::new(),
                    });
                }
            }
            _ => out
                .last_mut()
                .expect("at least one section")
                .items
                .push(item),
        }
    }
    out
}

/// Emits one module as Verilog text (no submodules).
pub fn emit_module(m: &Module) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "// {} -- generated by hwzip; do not edit.", m.name);
    for h in &m.header {
        for l in comment_lines(&ascii(h), 0) {
            let _ = writeln!(o, "{}", l);
        }
    }
    let _ = writeln!(o, "`default_nettype none");
    let ports = m.ports();
    let _ = writeln!(o, "module {} (", m.name);
    for (i, p) in ports.iter().enumerate() {
        let dir = match p.dir {
            super::module::Dir::In => "input  wire",
            super::module::Dir::Out => "output wire",
        };
        let sep = if i + 1 == ports.len() { "" } else { "," };
        let _ = writeln!(o, "  {} {}{}{}", dir, range(p.width), p.name, sep);
    }
    let _ = writeln!(o, ");");
    if !m.params.is_empty() {
        let _ = writeln!(o);
        for (name, value) in &m.params {
            let _ = writeln!(
                o,
                "  localparam {}{} = {};",
                range(value.width()),
                name,
                const_text(value)
            );
        }
    }

    if let Some(body) = &m.body {
        o.push_str(body);
        let _ = writeln!(o, "endmodule");
        let _ = writeln!(o, "`default_nettype wire");
        return o;
    }
    let mut declared = Declared::new(m);
    let mut body = String::new();
    for sec in sections(m) {
        emit_section(m, &sec, &mut declared, &mut body);
    }
    if declared.looped || declared.counted {
        let _ = writeln!(o);
    }
    if declared.looped {
        let _ = writeln!(o, "  genvar {};", super::module::GENVAR);
    }
    if declared.counted {
        let _ = writeln!(o, "  integer {};", super::module::LOOPVAR);
    }
    o.push_str(&body);
    if m.unused.iter().any(|e| e.as_const().is_none()) {
        // Constants (a waived field that is tied off) need no waiver.
        let mut all = vec![Expr::lit(1, 0)];
        all.extend(m.unused.iter().filter(|e| e.as_const().is_none()).cloned());
        let _ = writeln!(o, "\n  // Bits intentionally unused (lint waiver)");
        let _ = writeln!(o, "  wire unused_ok;");
        let cat = Doc::Group(vec![
            text("assign unused_ok = &{"),
            Doc::Align(vec![Doc::Fill(
                all.iter()
                    .enumerate()
                    .map(|(i, e)| {
                        if i + 1 < all.len() {
                            Doc::Group(vec![doc(e), text(",")])
                        } else {
                            doc(e)
                        }
                    })
                    .collect(),
            )]),
            text("};"),
        ]);
        let _ = writeln!(o, "  {}", pretty::render(&cat, 2));
    }
    let _ = writeln!(o, "endmodule");
    let _ = writeln!(o, "`default_nettype wire");
    o
}

/// What the emitter has declared so far in one module.
struct Declared {
    /// Per signal.
    sigs: Vec<bool>,
    /// Per array.
    arrays: Vec<bool>,
    /// Per register array: its next-state array `x_d`.
    next_arrays: Vec<bool>,
    /// Per instance family: emitted (with its first member).
    families: Vec<bool>,
    /// The bases of the loop labels written so far (`g_<base>`).
    labels: Vec<String>,
    /// Some loop was written (the module declares the genvar).
    looped: bool,
    /// Some flop block loads an array in a `for` loop (the module declares its counter).
    counted: bool,
}

impl Declared {
    fn new(m: &Module) -> Declared {
        Declared {
            sigs: m
                .signals
                .iter()
                .map(|s| matches!(s.kind, SigKind::Input | SigKind::Output))
                .collect(),
            arrays: vec![false; m.arrays.len()],
            next_arrays: vec![false; m.arrays.len()],
            families: vec![false; m.families.len()],
            labels: Vec::new(),
            looped: false,
            counted: false,
        }
    }

    /// Declares signal `i` (or the array it belongs to) into `decls` unless done already.
    fn declare(&mut self, m: &Module, i: usize, decls: &mut String) {
        if self.sigs[i] {
            return;
        }
        self.sigs[i] = true;
        let s = &m.signals[i];
        if let Some((a, _)) = s.elem {
            if !self.arrays[a] {
                self.arrays[a] = true;
                let arr = &m.arrays[a];
                let kw = if arr.kind == SigKind::Reg {
                    // Yosys would infer a memory and warn; these are plain registers.
                    "(* mem2reg *) reg "
                } else {
                    "wire"
                };
                let decl = format!(
                    "{} {}{} [0:{}];",
                    kw,
                    range(arr.width),
                    arr.name,
                    arr.len - 1
                );
                declaration(decls, &decl, None);
            }
            return;
        }
        let kw = if s.kind == SigKind::Reg {
            "reg "
        } else {
            "wire"
        };
        let decl = format!("{} {}{};", kw, range(s.width), s.name);
        declaration(decls, &decl, s.comment.as_deref());
    }

    /// Declares the next-state net of register `i` (`x_d`, or the array `x_d` of an array
    /// element) into `decls`.
    fn declare_next(&mut self, m: &Module, i: usize, decls: &mut String) {
        let s = &m.signals[i];
        let kw = if case_form(m, i).is_some() {
            "reg "
        } else {
            "wire"
        };
        match s.elem {
            Some((a, _)) if self.next_arrays[a] => {}
            Some((a, _)) => {
                self.next_arrays[a] = true;
                let arr = &m.arrays[a];
                let name = d_name(&arr.name);
                let _ = writeln!(
                    decls,
                    "  {} {}{} [0:{}];",
                    kw,
                    range(s.width),
                    name,
                    arr.len - 1
                );
            }
            None => {
                let _ = writeln!(decls, "  {} {}{};", kw, range(s.width), d_name(&s.name));
            }
        }
    }
}

fn emit_section(m: &Module, sec: &Section<'_>, declared: &mut Declared, o: &mut String) {
    if !sec.comments.is_empty() {
        let _ = writeln!(o);
        for c in &sec.comments {
            for l in comment_lines(&ascii(c), 2) {
                let _ = writeln!(o, "{}", l);
            }
        }
    }
    // Declarations: every net this section reads or defines that is not declared yet.
    let mut decls = String::new();
    let mut refs = Vec::new();
    for item in &sec.items {
        refs.clear();
        refs_of(m, item, &mut refs);
        for &r in &refs {
            declared.declare(m, r, &mut decls);
        }
        match item {
            Item::Signal(i) => declared.declare(m, *i, &mut decls),
            Item::Instance(i) => {
                for (_, id) in &m.instances[*i].outputs {
                    declared.declare(m, id.index, &mut decls);
                }
            }
            Item::Next(i) => declared.declare_next(m, *i, &mut decls),
            Item::Memory(i) => {
                let mem = &m.memories[*i];
                let decl = format!(
                    "reg  {}{} [0:{}];",
                    range(mem.width),
                    mem.name,
                    mem.depth - 1
                );
                declaration(&mut decls, &decl, mem.comment.as_deref());
            }
            Item::Comment(_) => {}
        }
    }
    o.push_str(&decls);

    // Body: assignments and instances in creation order; flops collected for the end.
    let mut flops: Vec<usize> = Vec::new();
    let mut mems: Vec<usize> = Vec::new();
    let mut n = 0;
    while n < sec.items.len() {
        let item = sec.items[n];
        if let Some(len) = loops::assign_run(m, &sec.items[n..], &mut declared.labels, o) {
            declared.looped = true;
            for it in &sec.items[n..n + len] {
                if let Item::Next(i) = it {
                    flops.push(*i);
                }
            }
            n += len;
            continue;
        }
        n += 1;
        match item {
            Item::Signal(i) => {
                let s = &m.signals[*i];
                if let (SigKind::Wire | SigKind::Output, Some(d)) = (&s.kind, &s.driver) {
                    statement(o, 2, &format!("assign {} = ", s.name), d, ";");
                }
            }
            Item::Next(i) if case_form(m, *i).is_some() => {
                let form = case_form(m, *i).expect("checked");
                emit_case(&d_name(&m.signals[*i].name), form, o);
                flops.push(*i);
            }
            Item::Next(i) => {
                let s = &m.signals[*i];
                let r = s.reg.as_ref();
                // A register loaded by slices: `x_d` is the value loaded.
                let lanes = r.and_then(|r| r.lanes.as_ref()).map(|l| &l.d);
                if let Some(next) = lanes.or(r.and_then(|r| r.next.as_ref())) {
                    statement(o, 2, &format!("assign {} = ", d_name(&s.name)), next, ";");
                }
                flops.push(*i);
            }
            Item::Memory(i) => mems.push(*i),
            Item::Instance(i) => match m.instances[*i].family {
                Some((f, _)) if declared.families[f] => {}
                Some((f, _)) => {
                    declared.families[f] = true;
                    declared.looped |= family::emit(m, f, &mut declared.labels, o);
                }
                None => emit_instance(m, *i, o),
            },
            Item::Comment(_) => {}
        }
    }
    declared.counted |= emit_flops(m, &flops, o);
    for i in mems {
        let mem = &m.memories[i];
        if mem.writes.is_empty() {
            continue;
        }
        let _ = writeln!(o, "  always @(posedge clk_i) begin");
        for w in &mem.writes {
            if let Some((mask, lw)) = &w.mask {
                // Lane enables: one loop over the lanes, as a byte-enable RAM is written.
                declared.counted = true;
                let k = super::module::LOOPVAR;
                let lanes = mem.width / lw;
                let _ = writeln!(o, "    for ({k} = 0; {k} < {lanes}; {k} = {k} + 1) begin");
                let d = Doc::Group(vec![
                    text("if ("),
                    doc(&w.en),
                    text(" && "),
                    doc(mask),
                    text(format!("[{k}]) {}[", mem.name)),
                    doc(&w.addr),
                    text(format!("][{k}*{lw} +: {lw}] <= ")),
                    doc(&w.data),
                    text(format!("[{k}*{lw} +: {lw}];")),
                ]);
                let _ = writeln!(o, "      {}", pretty::render(&d, 6));
                let _ = writeln!(o, "    end");
                continue;
            }
            let d = Doc::Group(vec![
                text("if ("),
                doc(&w.en),
                text(format!(") {}[", mem.name)),
                doc(&w.addr),
                text("] <= "),
                doc(&w.data),
                text(";"),
            ]);
            let _ = writeln!(o, "    {}", pretty::render(&d, 4));
        }
        let _ = writeln!(o, "  end");
    }
}

fn case_form(m: &Module, i: usize) -> Option<&CaseForm> {
    m.signals[i].reg.as_ref().and_then(|r| r.case.as_ref())
}

/// `d = sel; case (sel) CODE: if (g1) d = v1; else if ... endcase` in an `always @(*)`.
fn emit_case(d: &str, form: &CaseForm, o: &mut String) {
    let sel = verilog(&form.sel);
    let _ = writeln!(o, "  always @(*) begin");
    let _ = writeln!(o, "    {d} = {sel};");
    let _ = writeln!(o, "    case ({sel})");
    for (code, arm) in &form.arms {
        let label = code.as_ref().map_or("default".to_string(), verilog);
        let _ = writeln!(o, "      {label}: begin");
        for (k, (g, v)) in arm.iter().enumerate() {
            let set = |o: &mut String, indent: usize| {
                statement(o, indent, &format!("{d} = "), v, ";");
            };
            let uncond = g.as_const().is_some_and(|b| b.to_u64() == 1);
            match (k, uncond) {
                (0, true) => set(o, 8),
                (_, true) => {
                    let _ = writeln!(o, "        end else begin");
                    set(o, 10);
                }
                (0, false) => {
                    statement(o, 8, "if (", g, ") begin");
                    set(o, 10);
                }
                (_, false) => {
                    statement(o, 8, "end else if (", g, ") begin");
                    set(o, 10);
                }
            }
        }
        if arm
            .first()
            .is_some_and(|(g, _)| g.as_const().is_none_or(|b| b.to_u64() != 1))
        {
            let _ = writeln!(o, "        end");
        }
        let _ = writeln!(o, "      end");
    }
    if !form.arms.last().is_some_and(|(c, _)| c.is_none()) {
        let _ = writeln!(o, "      default: ;");
    }
    let _ = writeln!(o, "    endcase");
    let _ = writeln!(o, "  end");
}

fn emit_instance(m: &Module, i: usize, o: &mut String) {
    let inst = &m.instances[i];
    let conns = connections(m, inst);
    let _ = writeln!(o, "  {} {} (", inst.module.name, inst.name);
    let n = conns.len();
    for (k, (port, e, net)) in conns.into_iter().enumerate() {
        let sep = if k + 1 == n { ")" } else { ")," };
        match e {
            Some(e) => statement(o, 4, &format!(".{}(", port), e, sep),
            None => {
                let _ = writeln!(o, "    .{}({}{}", port, net, sep);
            }
        }
    }
    let _ = writeln!(o, "  );");
}

/// An instance's connections in its module's port order: (port, input expression, output
/// net), with the clock and reset first.
fn connections<'a>(
    m: &'a Module,
    inst: &'a super::module::Instance,
) -> Vec<(String, Option<&'a Expr>, String)> {
    let mut conns: Vec<(String, Option<&Expr>, String)> = Vec::new();
    if inst.module.has_clock {
        conns.push(("clk_i".into(), None, "clk_i".into()));
    }
    if inst.module.has_reset {
        conns.push(("rst_ni".into(), None, "rst_ni".into()));
    }
    let inputs: BTreeMap<&str, &Expr> = inst.inputs.iter().map(|(p, e)| (p.as_str(), e)).collect();
    let outputs: BTreeMap<&str, &str> = inst
        .outputs
        .iter()
        .map(|(p, id)| (p.as_str(), &*m.signals[id.index].name))
        .collect();
    for p in inst.module.ports() {
        if p.name == "clk_i" || p.name == "rst_ni" {
            continue;
        }
        if let Some(e) = inputs.get(p.name.as_str()) {
            conns.push((p.name.clone(), Some(e), String::new()));
        } else if let Some(n) = outputs.get(p.name.as_str()) {
            conns.push((p.name.clone(), None, n.to_string()));
        }
    }
    conns
}

/// The flop block(s) of a section: one for the registers with a reset, one for those
/// without; registers with the same enable share one `if`. Replicas
/// ([`crate::hdl::ModuleBuilder::reg_replicas`]) get blocks of their own under `(* keep *)`.
/// Consecutive elements of a register array load (and reset) in one `for` loop; returns
/// whether it wrote one.
fn emit_flops(m: &Module, regs: &[usize], o: &mut String) -> bool {
    let info = |i: usize| m.signals[i].reg.as_ref().expect("register info");
    let mut counted = false;
    for keep in [false, true] {
        let attr = if keep { "(* keep *) " } else { "" };
        let of = |reset: bool| -> Vec<usize> {
            regs.iter()
                .copied()
                .filter(|&i| info(i).keep == keep && info(i).reset.is_some() == reset)
                .collect()
        };
        let with_reset = of(true);
        let without = of(false);
        if !with_reset.is_empty() {
            let _ = writeln!(o, "  {}always @(posedge clk_i) begin", attr);
            let _ = writeln!(o, "    if (!rst_ni) begin");
            let value = |i: usize| info(i).reset.clone();
            for run in array_runs(m, &with_reset, &value) {
                let rv = info(run[0]).reset.as_ref().expect("reset value");
                let (head, q) = target(m, run);
                counted |= !head.is_empty();
                let d = Doc::Group(vec![
                    text(format!("{}{} <= ", head, q)),
                    const_doc(rv),
                    text(";"),
                ]);
                let _ = writeln!(o, "      {}", pretty::render(&d, 6));
            }
            let _ = writeln!(o, "    end else begin");
            counted |= loads(m, &with_reset, 6, o);
            let _ = writeln!(o, "    end");
            let _ = writeln!(o, "  end");
        }
        if !without.is_empty() {
            let _ = writeln!(o, "  {}always @(posedge clk_i) begin", attr);
            counted |= loads(m, &without, 4, o);
            let _ = writeln!(o, "  end");
        }
    }
    counted
}

/// `regs` cut into runs: a run is two or more consecutive elements of one register array,
/// in index order, with one `key`; every other register is a run of its own.
fn array_runs<'a, K: PartialEq>(
    m: &Module,
    regs: &'a [usize],
    key: &dyn Fn(usize) -> K,
) -> Vec<&'a [usize]> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < regs.len() {
        let mut j = k + 1;
        if let Some((a, first)) = m.signals[regs[k]].elem {
            while j < regs.len()
                && m.signals[regs[j]].elem == Some((a, first + (j - k) as u32))
                && key(regs[j]) == key(regs[k])
            {
                j += 1;
            }
        }
        out.push(&regs[k..j]);
        k = j;
    }
    out
}

/// What a run's load writes: (loop head, register), `("", "x_q")` for one register and
/// `("for (k = a; k < b; k = k + 1) ", "x_q[k]")` for a run of array elements.
fn target(m: &Module, run: &[usize]) -> (String, String) {
    let s = &m.signals[run[0]];
    match (s.elem, run.len()) {
        (Some((a, first)), n) if n > 1 => {
            let v = super::module::LOOPVAR;
            let head = format!(
                "for ({v} = {}; {v} < {}; {v} = {v} + 1) ",
                first,
                first + n as u32
            );
            (head, format!("{}[{v}]", m.arrays[a].name))
        }
        _ => (String::new(), s.name.to_string()),
    }
}

fn loads(m: &Module, regs: &[usize], indent: usize, o: &mut String) -> bool {
    let pad = " ".repeat(indent);
    let mut counted = false;
    let mut k = 0;
    while k < regs.len() {
        let r = m.signals[regs[k]].reg.as_ref().expect("register info");
        if let Some(form) = &r.lanes {
            // One load per slice, each under its own enable.
            let q = &m.signals[regs[k]].name;
            let d = d_name(q);
            for (lo, w, en) in &form.lanes {
                let bits = format!("[{}:{}]", lo + w - 1, lo);
                statement(o, indent, "if (", en, &format!(") {q}{bits} <= {d}{bits};"));
            }
            k += 1;
            continue;
        }
        let en_text = r.enable.as_ref().map(verilog);
        let mut j = k + 1;
        while j < regs.len()
            && m.signals[regs[j]]
                .reg
                .as_ref()
                .is_some_and(|x| x.lanes.is_none() && x.enable.as_ref().map(verilog) == en_text)
        {
            j += 1;
        }
        let lines: Vec<String> = array_runs(m, &regs[k..j], &|_| ())
            .into_iter()
            .map(|run| {
                let (head, q) = target(m, run);
                counted |= !head.is_empty();
                format!("{}{} <= {};", head, q, d_name(&q))
            })
            .collect();
        match &r.enable {
            None => {
                for l in &lines {
                    let _ = writeln!(o, "{}{}", pad, l);
                }
            }
            Some(en) if lines.len() == 1 => {
                statement(o, indent, "if (", en, &format!(") {}", lines[0]));
            }
            Some(en) => {
                statement(o, indent, "if (", en, ") begin");
                for l in &lines {
                    let _ = writeln!(o, "{}  {}", pad, l);
                }
                let _ = writeln!(o, "{}end", pad);
            }
        }
        k = j;
    }
    counted
}

/// Every module in the hierarchy under `top`, leaves first, each distinct name once.
///
/// Two different modules with the same name (same name, different text) are an error: a
/// generator must put every parameter that changes the hardware into the module name.
pub fn collect(top: &Arc<Module>) -> Result<Vec<Arc<Module>>, HdlError> {
    fn walk(
        m: &Arc<Module>,
        seen: &mut HashSet<String>,
        texts: &mut BTreeMap<String, String>,
        out: &mut Vec<Arc<Module>>,
        problems: &mut Vec<String>,
    ) {
        if seen.contains(&m.name) {
            let t = emit_module(m);
            if texts.get(&m.name) != Some(&t) {
                problems.push(format!(
                    "two different modules are both named `{}`; put the distinguishing parameters in the name",
                    m.name
                ));
            }
            return;
        }
        for i in &m.instances {
            walk(&i.module, seen, texts, out, problems);
        }
        seen.insert(m.name.clone());
        texts.insert(m.name.clone(), emit_module(m));
        out.push(m.clone());
    }
    let mut seen = HashSet::new();
    let mut texts = BTreeMap::new();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    walk(top, &mut seen, &mut texts, &mut out, &mut problems);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(HdlError {
            module: top.name.clone(),
            problems,
        })
    }
}

/// Emits the design under `top` as `(file name, text)` pairs, one `<module>.v` per module,
/// leaves first (the top module last).
pub fn emit_design(top: &Arc<Module>) -> Result<Vec<(String, String)>, HdlError> {
    Ok(collect(top)?
        .iter()
        .map(|m| (format!("{}.v", m.name), emit_module(m)))
        .collect())
}
