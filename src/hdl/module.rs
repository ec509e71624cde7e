//! Module builder: ports, wires, registers, memories and submodule instances.
//!
//! Conventions (hwzip-wide): the clock is `clk_i` (rising edge), the reset is the synchronous,
//! active-low `rst_ni`. Both are added automatically, as the first ports, to any module that
//! contains a register, a memory, or an instance that needs them.

use super::bits::Bits;
use super::expr::{visit, Expr, MemId, Node, SigId};
use super::layout::Layout;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod array;

/// The genvar of the generate loops the emitter writes for instance families (claimed as a
/// name by the first [`ModuleBuilder::instance_array`] of a module).
pub(crate) const GENVAR: &str = "i";

/// The counter of the `for` loops that load register arrays in a flop block (claimed with
/// [`GENVAR`]).
pub(crate) const LOOPVAR: &str = "k";

static NEXT_MODULE: AtomicU64 = AtomicU64::new(1);

/// Errors found while building or emitting hardware.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdlError {
    /// The module in which the problems were found.
    pub module: String,
    /// One message per problem.
    pub problems: Vec<String>,
}

impl fmt::Display for HdlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "module `{}`: ", self.module)?;
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                write!(f, "; ")?;
            }
            write!(f, "{}", p)?;
        }
        Ok(())
    }
}

impl std::error::Error for HdlError {}

/// Port direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Dir {
    /// Input port.
    In,
    /// Output port.
    Out,
}

/// A port of a finished module.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct PortInfo {
    /// Verilog name.
    pub name: String,
    /// Direction.
    pub dir: Dir,
    /// Width in bits.
    pub width: u32,
}

/// What a signal is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SigKind {
    /// Input port.
    Input,
    /// Output port (driven by an assignment).
    Output,
    /// Internal net (driven by an assignment).
    Wire,
    /// Clocked register.
    Reg,
    /// Net driven by an instance output.
    InstOut,
}

/// A signal of a module.
#[derive(Clone, Debug)]
pub struct Signal {
    /// Verilog name.
    pub name: Arc<str>,
    /// Width in bits.
    pub width: u32,
    /// Kind.
    pub kind: SigKind,
    /// Combinational driver (outputs and wires).
    pub driver: Option<Expr>,
    /// Register state (registers only).
    pub reg: Option<RegInfo>,
    /// Comment emitted beside the declaration.
    pub comment: Option<String>,
    /// Element `k` of array `a` of [`Module::arrays`] (then `name` is `<array>[k]`).
    pub elem: Option<(usize, u32)>,
}

/// An array of same-width signals, emitted as `wire [W-1:0] name [0:LEN-1];` (or `reg`): its
/// elements are ordinary signals named `name[k]` (see [`ModuleBuilder::wire_array`],
/// [`ModuleBuilder::reg_array`], [`ModuleBuilder::instance_array`]).
#[derive(Clone, Debug)]
pub struct NetArray {
    /// Verilog name.
    pub name: Arc<str>,
    /// Element width.
    pub width: u32,
    /// Number of elements.
    pub len: u32,
    /// What the elements are (wires, registers or instance outputs).
    pub kind: SigKind,
}

/// A family of instances of one module made by [`ModuleBuilder::instance_array`]: instance `k`
/// is `<name><k>`; the emitter writes runs of them whose connections follow the index as a
/// generate loop.
#[derive(Clone, Debug)]
pub struct Family {
    /// The instances' common name (`u_tok` for `u_tok0`, `u_tok1`, ...).
    pub name: String,
    /// Number of instances.
    pub len: u32,
}

/// Register details.
#[derive(Clone, Debug)]
pub struct RegInfo {
    /// Synchronous reset value (`None`: no reset).
    pub reset: Option<Bits>,
    /// Next-state expression.
    pub next: Option<Expr>,
    /// Load enable (`None`: loads every cycle).
    pub enable: Option<Expr>,
    /// A replica that synthesis must keep apart from identical flops (emitted under a
    /// `(* keep *)` flop block; see [`ModuleBuilder::replicate`]).
    pub keep: bool,
    /// The next state as a `case` on the current state (state machines, see
    /// [`ModuleBuilder::fsm`]); `next` is the same function as one expression.
    pub case: Option<CaseForm>,
    /// Slices that load under enables of their own ([`ModuleBuilder::next_lanes`]); `next`
    /// is the same function as one expression.
    pub lanes: Option<LaneForm>,
}

/// A register loaded slice by slice: slice `(lo, width, en)` takes bits `lo +: width` of `d`
/// when `en` is 1 (a wide register whose load enable is split over bounded-fan-out copies).
#[derive(Clone, Debug)]
pub struct LaneForm {
    /// The value loaded (the emitted `x_d`).
    pub d: Expr,
    /// The slices, LSB first, covering the register: (low bit, width, enable).
    pub lanes: Vec<(u32, u32, Expr)>,
}

/// A next state written the way a person writes a state machine: `x_d` holds `x_q` unless
/// the arm of the current state assigns it.
#[derive(Clone, Debug)]
pub struct CaseForm {
    /// The selector (the state register).
    pub sel: Expr,
    /// Per state: its code (a `localparam`; `None`: the `default` arm, for the codes that
    /// name no state) and its assignments as (guard, value), the first that holds wins.
    pub arms: Vec<CaseArm>,
}

/// One arm of a [`CaseForm`]: its label (`None`: `default`) and its (guard, value) list.
pub type CaseArm = (Option<Expr>, Vec<(Expr, Expr)>);

/// One write port of a memory.
#[derive(Clone, Debug)]
pub struct MemWrite {
    /// Write enable (1 bit).
    pub en: Expr,
    /// Word address.
    pub addr: Expr,
    /// Data.
    pub data: Expr,
    /// Lane write enables and the lane width: lane `i` (bits `i*w +: w`) is written only
    /// where bit `i` of the mask is set. `None`: the whole word.
    pub mask: Option<(Expr, u32)>,
}

/// A register array (`reg [W-1:0] name [0:DEPTH-1]`) with asynchronous reads and clocked writes.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Verilog name.
    pub name: Arc<str>,
    /// Word width.
    pub width: u32,
    /// Number of words.
    pub depth: u32,
    /// Address width (`clog2(depth)`, at least 1).
    pub addr_width: u32,
    /// Write ports, applied in order (a later port wins on the same address).
    pub writes: Vec<MemWrite>,
    /// Comment emitted beside the declaration.
    pub comment: Option<String>,
}

/// A submodule instance.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Instance name.
    pub name: String,
    /// The instantiated module.
    pub module: Arc<Module>,
    /// Input port name → driving expression (excluding clock and reset).
    pub inputs: Vec<(String, Expr)>,
    /// Output port name → parent signal it drives.
    pub outputs: Vec<(String, SigId)>,
    /// Member `k` of family `f` of [`Module::families`].
    pub family: Option<(usize, u32)>,
}

/// Ordered items, for emission in creation order.
#[derive(Clone, Debug)]
pub enum Item {
    /// A free-standing comment line (or section heading).
    Comment(String),
    /// A signal: a register's declaration, or a wire's or output's assignment.
    Signal(usize),
    /// A register's next state (`x_d`) and its load into `x_q`.
    Next(usize),
    /// A memory.
    Memory(usize),
    /// An instance.
    Instance(usize),
}

/// A finished, checked module. Cheap to share through `Arc` for instancing.
#[derive(Debug)]
pub struct Module {
    /// Verilog module name (should encode the parameters).
    pub name: String,
    /// Header lines: generator, parameters, spec section.
    pub header: Vec<String>,
    /// Signals (ports first in port order is *not* guaranteed; see `ports`).
    pub signals: Vec<Signal>,
    /// Port order: indices into `signals` (clock and reset are not signals).
    pub port_order: Vec<usize>,
    /// Memories.
    pub memories: Vec<Memory>,
    /// Instances.
    pub instances: Vec<Instance>,
    /// Emission order.
    pub items: Vec<Item>,
    /// Has a `clk_i` port.
    pub has_clock: bool,
    /// Has an `rst_ni` port.
    pub has_reset: bool,
    pub(crate) id: u64,
    /// Expressions named as intentionally unused (lint waiver).
    pub unused: Vec<Expr>,
    /// Named constants (`localparam`), in declaration order.
    pub params: Vec<(Arc<str>, Bits)>,
    /// Stream interfaces on the ports (for drivers and monitors).
    pub streams: Vec<StreamPorts>,
    /// Signal arrays (their elements are in `signals`).
    pub arrays: Vec<NetArray>,
    /// Instance families.
    pub families: Vec<Family>,
    /// A leaf primitive's Verilog body, emitted instead of the one generated from the
    /// netlist (the RAM primitive's per-lane arrays, which Verilog cannot write as one
    /// array with lane enables in a loop of any length). The netlist, which the interpreter
    /// runs, describes the same behaviour; the two are compared in tests.
    pub body: Option<String>,
}

impl Module {
    /// All ports in declaration order, including `clk_i`/`rst_ni` when present.
    pub fn ports(&self) -> Vec<PortInfo> {
        let mut v = Vec::new();
        if self.has_clock {
            v.push(PortInfo {
                name: "clk_i".into(),
                dir: Dir::In,
                width: 1,
            });
        }
        if self.has_reset {
            v.push(PortInfo {
                name: "rst_ni".into(),
                dir: Dir::In,
                width: 1,
            });
        }
        for &i in &self.port_order {
            let s = &self.signals[i];
            v.push(PortInfo {
                name: s.name.to_string(),
                dir: if s.kind == SigKind::Input {
                    Dir::In
                } else {
                    Dir::Out
                },
                width: s.width,
            });
        }
        v
    }

    /// The port called `name`.
    pub fn port(&self, name: &str) -> Option<PortInfo> {
        self.ports().into_iter().find(|p| p.name == name)
    }

    /// Index of a signal by name.
    pub fn signal_index(&self, name: &str) -> Option<usize> {
        self.signals.iter().position(|s| &*s.name == name)
    }
}

/// Handle to a register created by [`ModuleBuilder::reg`].
#[derive(Clone, Debug)]
pub struct Reg {
    id: SigId,
    q: Expr,
}

impl Reg {
    /// The register's current value.
    pub fn q(&self) -> Expr {
        self.q.clone()
    }
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.q.width()
    }
    pub(crate) fn index(&self) -> usize {
        self.id.index
    }
}

/// Handle to a declared-but-not-yet-driven net (output port or wire).
#[derive(Clone, Debug)]
pub struct Net {
    id: SigId,
    e: Expr,
}

impl Net {
    /// The net's value.
    pub fn expr(&self) -> Expr {
        self.e.clone()
    }
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.e.width()
    }
    pub(crate) fn index(&self) -> usize {
        self.id.index
    }
}

/// Handle to a memory.
#[derive(Clone, Debug)]
pub struct Mem {
    id: MemId,
    name: Arc<str>,
    width: u32,
    addr_width: u32,
}

impl Mem {
    /// Asynchronous read of word `addr` (width must equal the address width).
    pub fn read(&self, addr: &Expr) -> Expr {
        Expr::mem_read(self.id, self.name.clone(), self.width, addr.clone())
    }
    /// Address width.
    pub fn addr_width(&self) -> u32 {
        self.addr_width
    }
}

/// Handle to an instance, for reading its outputs.
#[derive(Clone, Debug)]
pub struct Inst {
    outputs: BTreeMap<String, Expr>,
    name: String,
}

impl Inst {
    /// The parent-side net driven by output `port` (named `<instance>_<port>`).
    ///
    /// Asking for a port that does not exist yields a zero-width-checked placeholder and is
    /// reported by [`ModuleBuilder::finish`]; use [`Inst::try_out`] to handle it yourself.
    pub fn out(&self, port: &str) -> Expr {
        self.try_out(port).unwrap_or_else(|| {
            Expr::sig(
                SigId {
                    module: 0,
                    index: usize::MAX,
                },
                format!("{}_{}__missing", self.name, port).into(),
                1,
            )
        })
    }
    /// The parent-side net driven by output `port`, if the port exists.
    pub fn try_out(&self, port: &str) -> Option<Expr> {
        self.outputs.get(port).cloned()
    }
}

/// Builds one module. Finish with [`ModuleBuilder::finish`], which runs every check.
pub struct ModuleBuilder {
    m: Module,
    names: HashSet<String>,
    problems: Vec<String>,
    pub(crate) cond: CondState,
}

const KEYWORDS: &[&str] = &[
    "always",
    "and",
    "assign",
    "automatic",
    "begin",
    "buf",
    "case",
    "casex",
    "casez",
    "cell",
    "cmos",
    "config",
    "deassign",
    "default",
    "defparam",
    "design",
    "disable",
    "edge",
    "else",
    "end",
    "endcase",
    "endconfig",
    "endfunction",
    "endgenerate",
    "endmodule",
    "endprimitive",
    "endspecify",
    "endtable",
    "endtask",
    "event",
    "for",
    "force",
    "forever",
    "fork",
    "function",
    "generate",
    "genvar",
    "highz0",
    "highz1",
    "if",
    "ifnone",
    "incdir",
    "include",
    "initial",
    "inout",
    "input",
    "instance",
    "integer",
    "join",
    "large",
    "liblist",
    "library",
    "localparam",
    "macromodule",
    "medium",
    "module",
    "nand",
    "negedge",
    "nmos",
    "nor",
    "noshowcancelled",
    "not",
    "notif0",
    "notif1",
    "or",
    "output",
    "parameter",
    "pmos",
    "posedge",
    "primitive",
    "pull0",
    "pull1",
    "pulldown",
    "pullup",
    "rcmos",
    "real",
    "realtime",
    "reg",
    "release",
    "repeat",
    "rnmos",
    "rpmos",
    "rtran",
    "rtranif0",
    "rtranif1",
    "scalared",
    "signed",
    "small",
    "specify",
    "specparam",
    "strong0",
    "strong1",
    "supply0",
    "supply1",
    "table",
    "task",
    "time",
    "tran",
    "tranif0",
    "tranif1",
    "tri",
    "tri0",
    "tri1",
    "triand",
    "trior",
    "trireg",
    "unsigned",
    "use",
    "vectored",
    "wait",
    "wand",
    "weak0",
    "weak1",
    "while",
    "wire",
    "wor",
    "xnor",
    "xor",
    "bit",
    "logic",
    "int",
    "byte",
    "shortint",
    "longint",
    "string",
    "struct",
    "union",
    "type",
    "enum",
    "interface",
    "package",
    "import",
    "export",
    "class",
    "clk_i",
    "rst_ni",
];

/// Is `s` a legal, hwzip-style identifier (no `$`, no escapes, not a keyword)?
pub fn valid_ident(s: &str) -> bool {
    let mut ch = s.chars();
    matches!(ch.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && ch.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
}

/// The next-state wire of register `name` in the emitted Verilog: `x_d` for `x_q`, else
/// `name_d`; `x_d[k]` for the array element `x_q[k]`.
pub fn d_name(name: &str) -> String {
    if let Some((base, index)) = name.split_once('[') {
        return format!("{}[{}", d_name(base), index);
    }
    match name.strip_suffix("_q") {
        Some(base) => format!("{}_d", base),
        None => format!("{}_d", name),
    }
}

/// `ceil(log2(n))`, with `clog2(0) = clog2(1) = 0`.
pub fn clog2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

impl ModuleBuilder {
    /// Starts a module called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        let mut problems = Vec::new();
        if !valid_ident(&name) {
            problems.push(format!("`{}` is not a valid module name", name));
        }
        ModuleBuilder {
            m: Module {
                name,
                header: Vec::new(),
                signals: Vec::new(),
                port_order: Vec::new(),
                memories: Vec::new(),
                instances: Vec::new(),
                items: Vec::new(),
                has_clock: false,
                has_reset: false,
                id: NEXT_MODULE.fetch_add(1, Ordering::Relaxed),
                unused: Vec::new(),
                params: Vec::new(),
                streams: Vec::new(),
                arrays: Vec::new(),
                families: Vec::new(),
                body: None,
            },
            names: HashSet::new(),
            problems,
            cond: Default::default(),
        }
    }

    /// Module name.
    pub fn name(&self) -> &str {
        &self.m.name
    }

    /// Adds a header comment line (generator, parameters, spec section).
    pub fn header(&mut self, line: impl Into<String>) -> &mut Self {
        self.m.header.push(line.into());
        self
    }

    /// The lines every generated module opens with: the generator (its path below
    /// `hwzip::rtl`), the parameters it was given and the spec sections it follows.
    pub fn provenance(&mut self, generator: &str, params: &str, spec: &str) -> &mut Self {
        self.header(format!("Generator: hwzip::rtl::{generator}"));
        self.header(format!("Parameters: {params}"));
        self.header(format!("Spec: {spec}"))
    }

    /// Sets a leaf primitive's Verilog body (see [`Module::body`]): the lines between the
    /// port list and `endmodule`.
    pub(crate) fn verbatim_body(&mut self, text: String) {
        self.m.body = Some(text);
    }

    /// Records a builder error (reported by `finish`).
    pub(crate) fn problem(&mut self, msg: String) {
        self.problems.push(msg);
    }

    /// Is register `r` an element of a register array?
    pub(crate) fn is_element(&self, r: &Reg) -> bool {
        self.m.signals[r.index()].elem.is_some()
    }

    pub(crate) fn item_count(&self) -> usize {
        self.m.items.len()
    }

    /// Removes and returns the items created since position `from`.
    pub(crate) fn take_items_from(&mut self, from: usize) -> Vec<Item> {
        let from = from.min(self.m.items.len());
        self.m.items.split_off(from)
    }

    /// Inserts `items` at position `pos` (in order).
    pub(crate) fn insert_items(&mut self, pos: usize, items: Vec<Item>) {
        let pos = pos.min(self.m.items.len());
        self.m.items.splice(pos..pos, items);
    }

    /// Declares a named constant (`localparam [w-1:0] NAME = value;` at the top of the module)
    /// and returns it as an expression that prints as its name.
    pub fn localparam(&mut self, name: &str, value: Bits) -> Expr {
        self.claim(name);
        let name: Arc<str> = name.into();
        self.m.params.push((name.clone(), value.clone()));
        Expr::param(name, value)
    }

    pub(crate) fn add_stream(&mut self, s: StreamPorts) {
        self.m.streams.push(s);
    }

    /// Adds a comment line before the next declaration.
    pub fn comment(&mut self, text: impl Into<String>) {
        self.m.items.push(Item::Comment(text.into()));
    }

    fn claim(&mut self, name: &str) -> bool {
        if !valid_ident(name) {
            self.problems.push(format!(
                "`{}` is not a valid identifier (or is reserved)",
                name
            ));
            return false;
        }
        if !self.names.insert(name.to_string()) {
            self.problems
                .push(format!("name `{}` is declared twice", name));
            return false;
        }
        true
    }

    fn add_signal(&mut self, name: &str, width: u32, kind: SigKind) -> (SigId, Expr) {
        self.claim(name);
        if width == 0 {
            self.problems.push(format!("`{}` has width 0", name));
        }
        self.push_signal(name.into(), width, kind, None)
    }

    /// Appends a signal (its name claimed already) and returns its id and value.
    fn push_signal(
        &mut self,
        name: Arc<str>,
        width: u32,
        kind: SigKind,
        elem: Option<(usize, u32)>,
    ) -> (SigId, Expr) {
        let id = SigId {
            module: self.m.id,
            index: self.m.signals.len(),
        };
        self.m.signals.push(Signal {
            name: name.clone(),
            width,
            kind,
            driver: None,
            reg: None,
            comment: None,
            elem,
        });
        (id, Expr::sig(id, name, width.max(1)))
    }

    /// Declares an input port.
    pub fn input(&mut self, name: &str, width: u32) -> Expr {
        let (id, e) = self.add_signal(name, width, SigKind::Input);
        self.m.port_order.push(id.index);
        e
    }

    /// Declares an output port, to be driven later with [`ModuleBuilder::drive`].
    pub fn output(&mut self, name: &str, width: u32) -> Net {
        let (id, e) = self.add_signal(name, width, SigKind::Output);
        self.m.port_order.push(id.index);
        Net { id, e }
    }

    /// Declares an output port driven by `e`.
    pub fn output_expr(&mut self, name: &str, e: &Expr) -> Expr {
        let n = self.output(name, e.width());
        self.drive(&n, e);
        n.expr()
    }

    /// Declares a wire driven by `e` and returns the named wire.
    pub fn wire(&mut self, name: &str, e: &Expr) -> Expr {
        let n = self.wire_decl(name, e.width());
        self.drive(&n, e);
        n.expr()
    }

    /// Declares a wire driven by `e`, with a comment beside it.
    pub fn wire_c(&mut self, name: &str, e: &Expr, comment: &str) -> Expr {
        let w = self.wire(name, e);
        if let Some(s) = self.m.signals.last_mut() {
            s.comment = Some(comment.to_string());
        }
        w
    }

    /// Declares a wire to be driven later (for nets used before their logic is built).
    pub fn wire_decl(&mut self, name: &str, width: u32) -> Net {
        let (id, e) = self.add_signal(name, width, SigKind::Wire);
        Net { id, e }
    }

    /// Drives a declared output or wire. Driving twice or with the wrong width is reported.
    pub fn drive(&mut self, net: &Net, e: &Expr) {
        let s = &mut self.m.signals[net.id.index];
        if s.driver.is_some() {
            self.problems.push(format!("`{}` is driven twice", s.name));
            return;
        }
        if e.width() != s.width {
            self.problems.push(format!(
                "width mismatch driving `{}` ({} bits) with `{}` ({} bits)",
                s.name,
                s.width,
                e.brief(),
                e.width()
            ));
        }
        s.driver = Some(e.clone());
        self.m.items.push(Item::Signal(net.id.index));
    }

    /// Declares a register of `width` bits with synchronous reset value `reset`
    /// (`None`: no reset, for pure datapath registers).
    pub fn reg(&mut self, name: &str, width: u32, reset: Option<u64>) -> Reg {
        self.reg_bits(name, width, reset.map(|r| Bits::from_u64(width, r)))
    }

    /// [`ModuleBuilder::reg`] with a wide reset value.
    pub fn reg_bits(&mut self, name: &str, width: u32, reset: Option<Bits>) -> Reg {
        let (id, q) = self.add_signal(name, width, SigKind::Reg);
        // The next-state wire of the emitted Verilog (`x_d` of `x_q`) takes a name too.
        self.claim(&d_name(name));
        self.m.signals[id.index].reg = Some(RegInfo {
            reset,
            next: None,
            enable: None,
            keep: false,
            case: None,
            lanes: None,
        });
        self.m.items.push(Item::Signal(id.index));
        self.m.has_clock = true;
        Reg { id, q }
    }

    /// Sets a register's next value (loaded every cycle, or when `enable` is 1).
    pub fn next(&mut self, r: &Reg, next: &Expr, enable: Option<&Expr>) {
        let s = &mut self.m.signals[r.id.index];
        let name = s.name.clone();
        let width = s.width;
        let info = s
            .reg
            .as_mut()
            .expect("Reg handle always points at a register");
        if info.next.is_some() {
            self.problems.push(format!(
                "register `{}` has two next-state assignments",
                name
            ));
            return;
        }
        info.next = Some(next.clone());
        info.enable = enable.cloned();
        self.m.items.push(Item::Next(r.id.index));
        if next.width() != width {
            self.problems.push(format!(
                "width mismatch: register `{}` is {} bits, next value `{}` is {} bits",
                name,
                width,
                next.brief(),
                next.width()
            ));
        }
        if let Some(en) = enable {
            if en.width() != 1 {
                self.problems.push(format!(
                    "enable of register `{}` is `{}` ({} bits), expected 1",
                    name,
                    en.brief(),
                    en.width()
                ));
            }
        }
    }

    /// Sets a register's next value loaded slice by slice: `enables` split the register into
    /// that many slices of `⌈width / n⌉` bits (the last one shorter), LSB first, and slice `i`
    /// loads its bits of `d` when `enables[i]` is 1. Emitted as one `if` per slice; for a wide
    /// register whose one load enable would fan out to every flop (see
    /// [`crate::hdl::Pipeline::load_copies`]). Not for elements of register arrays.
    pub fn next_lanes(&mut self, r: &Reg, d: &Expr, enables: &[Expr]) {
        let width = r.width();
        let n = enables.len().max(1) as u32;
        let lane = width.div_ceil(n).max(1);
        let s = &self.m.signals[r.id.index];
        if s.elem.is_some() || enables.is_empty() || (n - 1) * lane >= width {
            self.problems.push(format!(
                "register `{}`: {} load enables cannot split its {} bits into slices",
                s.name,
                enables.len(),
                width
            ));
            return;
        }
        let mut lanes = Vec::new();
        let mut mask = Vec::new();
        for (i, en) in enables.iter().enumerate() {
            let lo = i as u32 * lane;
            let w = lane.min(width - lo);
            mask.push(en.repeat(w));
            lanes.push((lo, w, en.clone()));
        }
        // The same function as one expression (`d` need not be a named signal).
        let mask = Expr::cat_lsb(&mask);
        self.next(r, &(&(d & &mask) | &(&r.q() & &!mask)), None);
        if d.width() != width {
            return;
        }
        if let Some(info) = self.m.signals[r.id.index].reg.as_mut() {
            info.lanes = Some(LaneForm {
                d: d.clone(),
                lanes,
            });
        }
    }

    /// The expression driving `e` when `e` is a wire of this module.
    pub(crate) fn wire_driver(&self, e: &Expr) -> Option<Expr> {
        match e.node() {
            Node::Sig { id, .. } if id.module == self.m.id => {
                let s = &self.m.signals[id.index];
                (s.kind == SigKind::Wire)
                    .then(|| s.driver.clone())
                    .flatten()
            }
            _ => None,
        }
    }

    /// Records the case form of a register's next state (set by [`ModuleBuilder::next`]).
    pub(crate) fn set_case(&mut self, r: &Reg, form: CaseForm) {
        if let Some(info) = self.m.signals[r.id.index].reg.as_mut() {
            info.case = Some(form);
        }
    }

    /// Declares a register and its next value at once.
    pub fn reg_next(
        &mut self,
        name: &str,
        reset: Option<u64>,
        next: &Expr,
        enable: Option<&Expr>,
    ) -> Expr {
        let r = self.reg(name, next.width(), reset);
        self.next(&r, next, enable);
        r.q()
    }

    /// `copies` replicas of one register (`<base>_c<c>_q` for `name` = `<base>_q`), for a
    /// select whose fan-out must stay bounded per flop (`docs/TOOLCHAIN.md`: ABC does not
    /// buffer flop outputs, and a select derived by logic can be re-factored back onto one
    /// flop). Give every copy the same next state with [`ModuleBuilder::next`]. Yosys merges
    /// flops with the same D and enable, so replicas are emitted in a `(* keep *)` block.
    pub fn reg_replicas(
        &mut self,
        name: &str,
        width: u32,
        reset: Option<u64>,
        copies: usize,
    ) -> Vec<Reg> {
        let base = name.strip_suffix("_q").unwrap_or(name);
        (0..copies)
            .map(|c| self.reg_kept(&format!("{}_c{}_q", base, c), width, reset))
            .collect()
    }

    /// One register that synthesis keeps apart from identical flops (a replica of part of
    /// another register; emitted in the `(* keep *)` block like [`Self::reg_replicas`]).
    pub fn reg_kept(&mut self, name: &str, width: u32, reset: Option<u64>) -> Reg {
        let r = self.reg(name, width, reset);
        if let Some(info) = self.m.signals[r.id.index].reg.as_mut() {
            info.keep = true;
        }
        r
    }

    /// Attaches a comment to the most recently declared signal.
    pub fn annotate(&mut self, comment: &str) {
        if let Some(s) = self.m.signals.last_mut() {
            s.comment = Some(comment.to_string());
        }
    }

    /// Declares a memory of `depth` words of `width` bits (no reset; clocked writes).
    pub fn memory(&mut self, name: &str, width: u32, depth: u32) -> Mem {
        self.claim(name);
        if depth < 2 {
            self.problems
                .push(format!("memory `{}` needs a depth of at least 2", name));
        }
        let index = self.m.memories.len();
        let addr_width = clog2(depth as u64).max(1);
        let name: Arc<str> = name.into();
        self.m.memories.push(Memory {
            name: name.clone(),
            width,
            depth,
            addr_width,
            writes: Vec::new(),
            comment: None,
        });
        self.m.items.push(Item::Memory(index));
        self.m.has_clock = true;
        Mem {
            id: MemId {
                module: self.m.id,
                index,
            },
            name,
            width,
            addr_width,
        }
    }

    /// Adds a write port to a memory.
    pub fn mem_write(&mut self, mem: &Mem, en: &Expr, addr: &Expr, data: &Expr) {
        let m = &mut self.m.memories[mem.id.index];
        if en.width() != 1 || addr.width() != m.addr_width || data.width() != m.width {
            self.problems.push(format!(
                "memory `{}` write port: enable {} bits (want 1), address `{}` {} bits (want {}), data `{}` {} bits (want {})",
                m.name,
                en.width(),
                addr.brief(),
                addr.width(),
                m.addr_width,
                data.brief(),
                data.width(),
                m.width
            ));
        }
        m.writes.push(MemWrite {
            en: en.clone(),
            addr: addr.clone(),
            data: data.clone(),
            mask: None,
        });
    }

    /// Adds a write port with lane enables: where `en` is set, lane `i` of the word (bits
    /// `i*lane_bits +: lane_bits`) takes `data`'s lane `i` if bit `i` of `mask` is set.
    pub fn mem_write_lanes(
        &mut self,
        mem: &Mem,
        en: &Expr,
        addr: &Expr,
        data: &Expr,
        mask: &Expr,
        lane_bits: u32,
    ) {
        self.mem_write(mem, en, addr, data);
        let m = &mut self.m.memories[mem.id.index];
        if lane_bits == 0
            || !m.width.is_multiple_of(lane_bits)
            || mask.width() != m.width / lane_bits
        {
            self.problems.push(format!(
                "memory `{}` lane write: {} lanes of {} bits do not cover {} bits",
                m.name,
                mask.width(),
                lane_bits,
                m.width
            ));
        }
        for (what, e) in [("data", data), ("mask", mask)] {
            if !matches!(e.node(), Node::Sig { .. }) {
                self.problems.push(format!(
                    "memory `{}` lane write: the {} `{}` must be a named signal (it is indexed)",
                    m.name,
                    what,
                    e.brief()
                ));
            }
        }
        if let Some(w) = m.writes.last_mut() {
            w.mask = Some((mask.clone(), lane_bits));
        }
    }

    /// Instantiates `module` as `name`, connecting inputs by port name. Every output gets a
    /// parent net called `<name>_<port>`, read back through the returned [`Inst`].
    pub fn instance(&mut self, module: &Arc<Module>, name: &str, inputs: &[(&str, Expr)]) -> Inst {
        self.instance_with(module, name, inputs, None)
    }

    /// [`Self::instance`]; with `member` = (output port → array, family, index), the outputs
    /// are elements of those arrays and the instance a member of that family.
    fn instance_with(
        &mut self,
        module: &Arc<Module>,
        name: &str,
        inputs: &[(&str, Expr)],
        member: Option<(&BTreeMap<String, usize>, usize, u32)>,
    ) -> Inst {
        self.claim(name);
        let mut conn = Vec::new();
        let mut seen = HashSet::new();
        for (port, e) in inputs {
            match module.port(port) {
                Some(p) if p.dir == Dir::In && port != &"clk_i" && port != &"rst_ni" => {
                    if p.width != e.width() {
                        self.problems.push(format!(
                            "instance `{}` of `{}`: port `{}` is {} bits, connected `{}` is {} bits",
                            name,
                            module.name,
                            port,
                            p.width,
                            e.brief(),
                            e.width()
                        ));
                    }
                    seen.insert(port.to_string());
                    conn.push((port.to_string(), e.clone()));
                }
                _ => self.problems.push(format!(
                    "instance `{}` of `{}` has no input port `{}`",
                    name, module.name, port
                )),
            }
        }
        let mut outputs = Vec::new();
        let mut handles = BTreeMap::new();
        for p in module.ports() {
            if p.dir == Dir::In {
                if p.name != "clk_i" && p.name != "rst_ni" && !seen.contains(&p.name) {
                    self.problems.push(format!(
                        "instance `{}` of `{}`: input `{}` is not connected",
                        name, module.name, p.name
                    ));
                }
                continue;
            }
            let (id, e) = match member.and_then(|(arrays, _, k)| Some((*arrays.get(&p.name)?, k))) {
                Some((array, k)) => self.add_element(array, k),
                None => self.add_signal(&format!("{}_{}", name, p.name), p.width, SigKind::InstOut),
            };
            outputs.push((p.name.clone(), id));
            handles.insert(p.name.clone(), e);
        }
        if module.has_clock {
            self.m.has_clock = true;
        }
        if module.has_reset {
            self.m.has_reset = true;
        }
        let idx = self.m.instances.len();
        self.m.instances.push(Instance {
            name: name.to_string(),
            module: module.clone(),
            inputs: conn,
            outputs,
            family: member.map(|(_, f, k)| (f, k)),
        });
        self.m.items.push(Item::Instance(idx));
        Inst {
            outputs: handles,
            name: name.to_string(),
        }
    }

    /// Marks bits as intentionally unused (emitted as a lint waiver net `unused_ok`).
    pub fn unused(&mut self, e: &Expr) {
        self.m.unused.push(e.clone());
    }

    /// Checks everything and returns the finished module.
    ///
    /// Reported: width-rule violations inside expressions (naming operands and widths),
    /// undriven outputs/wires, registers without next state, slices of unnamed compound
    /// expressions, references to signals of another module, memory address widths.
    pub fn finish(mut self) -> Result<Arc<Module>, HdlError> {
        self.lower_conditionals();
        let mid = self.m.id;
        let mut exprs: Vec<(String, Expr)> = Vec::new();
        for s in &self.m.signals {
            match s.kind {
                SigKind::Output | SigKind::Wire => match &s.driver {
                    Some(d) => exprs.push((format!("`{}`", s.name), d.clone())),
                    None => self.problems.push(format!("`{}` is never driven", s.name)),
                },
                SigKind::Reg => {
                    let r = s.reg.as_ref().expect("register info");
                    if r.reset.is_some() {
                        self.m.has_reset = true;
                    }
                    match &r.next {
                        Some(n) => exprs.push((format!("register `{}`", s.name), n.clone())),
                        None => self.problems.push(format!(
                            "register `{}` has no next-state assignment",
                            s.name
                        )),
                    }
                    if let Some(en) = &r.enable {
                        exprs.push((format!("enable of `{}`", s.name), en.clone()));
                    }
                }
                _ => {}
            }
        }
        for m in &self.m.memories {
            for w in &m.writes {
                exprs.push((format!("memory `{}` write", m.name), w.en.clone()));
                exprs.push((format!("memory `{}` write", m.name), w.addr.clone()));
                exprs.push((format!("memory `{}` write", m.name), w.data.clone()));
                if let Some((mask, _)) = &w.mask {
                    exprs.push((format!("memory `{}` write", m.name), mask.clone()));
                }
            }
        }
        for i in &self.m.instances {
            for (p, e) in &i.inputs {
                exprs.push((format!("instance `{}` port `{}`", i.name, p), e.clone()));
            }
        }
        for e in &self.m.unused {
            exprs.push(("unused waiver".into(), e.clone()));
        }
        let mut seen = HashSet::new();
        let mut problems = Vec::new();
        for (ctx, e) in &exprs {
            visit(e, &mut seen, &mut |x: &Expr| {
                if let Some(msg) = &x.error {
                    problems.push(format!("{}: {}", ctx, msg));
                }
                match x.node() {
                    Node::Sig { id, name } if id.module != mid => problems.push(format!(
                        "{}: `{}` belongs to another module",
                        ctx, name
                    )),
                    Node::MemRead { mem, name, addr } => {
                        if mem.module != mid {
                            problems.push(format!("{}: memory `{}` belongs to another module", ctx, name));
                        } else if addr.width() != self.m.memories[mem.index].addr_width {
                            problems.push(format!(
                                "{}: read of memory `{}` with address `{}` of {} bits, expected {}",
                                ctx,
                                name,
                                addr.brief(),
                                addr.width(),
                                self.m.memories[mem.index].addr_width
                            ));
                        }
                    }
                    Node::Slice { base, .. } => match base.node() {
                        Node::Sig { .. } | Node::MemRead { .. } | Node::Const(_) | Node::Param { .. } => {}
                        _ if x.error.is_some() => {}
                        _ => problems.push(format!(
                            "{}: cannot slice the unnamed expression `{}`; name it with `wire()` first",
                            ctx,
                            base.brief()
                        )),
                    },
                    _ => {}
                }
            });
        }
        self.problems.extend(problems);
        // Named constants no expression reads go to the lint waiver.
        let mut read = HashSet::new();
        let mut seen = HashSet::new();
        for (_, e) in &exprs {
            visit(e, &mut seen, &mut |x: &Expr| {
                if let Node::Param { name, .. } = x.node() {
                    read.insert(name.clone());
                }
            });
        }
        for (name, value) in &self.m.params {
            if !read.contains(name) {
                self.m.unused.push(Expr::param(name.clone(), value.clone()));
            }
        }
        if self.problems.is_empty() {
            Ok(Arc::new(self.m))
        } else {
            Err(HdlError {
                module: self.m.name.clone(),
                problems: self.problems,
            })
        }
    }
}

/// A stream interface on a module's ports, as recorded by [`super::stream::input`] and [`super::stream::output`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamPorts {
    /// Port-name prefix (`s`, `m`, `req`, ...).
    pub prefix: String,
    /// `In`: the module consumes the stream; `Out`: it produces it.
    pub dir: Dir,
    /// Payload layout.
    pub layout: Arc<Layout>,
}

impl StreamPorts {
    fn sfx(&self, towards_module: bool) -> &'static str {
        if towards_module {
            "i"
        } else {
            "o"
        }
    }

    /// Name of the `valid` port.
    pub fn valid(&self) -> String {
        format!("{}_valid_{}", self.prefix, self.sfx(self.dir == Dir::In))
    }

    /// Name of the `ready` port.
    pub fn ready(&self) -> String {
        format!("{}_ready_{}", self.prefix, self.sfx(self.dir == Dir::Out))
    }

    /// Name of the port of payload field `field`.
    pub fn field(&self, field: &str) -> String {
        format!(
            "{}_{}_{}",
            self.prefix,
            field,
            self.sfx(self.dir == Dir::In)
        )
    }
}

/// One assignment: the guard under which it applies and the value.
#[derive(Clone, Debug)]
pub(super) struct Assign {
    pub(super) guard: Expr,
    pub(super) value: Expr,
    /// Item position of the assignment (the lowered logic goes there).
    pub(super) pos: usize,
}

#[derive(Clone, Debug)]
pub(super) enum Kind {
    Reg(Reg),
    Wire { net: Net, default: Expr },
}

#[derive(Clone, Debug)]
pub(super) struct Target {
    pub(super) kind: Kind,
    pub(super) assigns: Vec<Assign>,
}

/// Conditional-assignment state of a module builder (the `when` builder is in
/// [`super::cond`]).
#[derive(Default, Debug)]
pub(crate) struct CondState {
    /// Conditions of the open branches, outermost first.
    pub(super) guards: Vec<Expr>,
    pub(super) targets: Vec<Target>,
    /// Signal index → position in `targets`.
    pub(super) index: HashMap<usize, usize>,
    /// State registers of [`ModuleBuilder::fsm`] machines (signal index) and their codes.
    pub(super) fsms: HashMap<usize, Vec<Expr>>,
}
