//! Native netlist interpreter: runs a finished module (with its hierarchy) in Rust, cycle by
//! cycle, without Verilator. It serves the builder's own tests and quick checks of generators;
//! the Verilator co-simulation remains the reference for the emitted Verilog.
//!
//! The hierarchy is flattened; combinational nets are evaluated in topological order (a
//! combinational loop is an error naming the nets involved); registers and memory writes
//! update together on `tick`.
//!
//! Evaluation is event-driven: a net is re-evaluated only when one of its inputs (a net, or
//! a memory it reads) changed, and a register's next value is recomputed only when its
//! `next` or `enable` inputs changed since the previous edge (otherwise it already holds
//! that value). Idle blocks of a large design therefore cost nothing per cycle.

use super::bits::Bits;
use super::expr::{BinOp, CmpOp, Expr, Node, RedOp, ShiftDir};
use super::module::{HdlError, Module, SigKind};
use std::collections::HashMap;
use std::sync::Arc;

/// Flat expression over flat net/memory indices.
#[derive(Clone, Debug)]
enum FExpr {
    Net(usize),
    Const(Bits),
    Slice(Box<FExpr>, u32, u32),
    Concat(Vec<FExpr>),
    Repeat(Box<FExpr>, u32),
    Not(Box<FExpr>),
    Reduce(RedOp, Box<FExpr>),
    Bin(BinOp, Box<FExpr>, Box<FExpr>),
    Cmp(CmpOp, Box<FExpr>, Box<FExpr>),
    ShiftConst(ShiftDir, Box<FExpr>, u32),
    ShiftVar(ShiftDir, Box<FExpr>, Box<FExpr>),
    Mux(Box<FExpr>, Box<FExpr>, Box<FExpr>),
    MemRead(usize, u32, Box<FExpr>),
}

#[derive(Clone, Debug)]
enum Driver {
    Input,
    Comb(FExpr),
    Reg {
        next: FExpr,
        enable: Option<FExpr>,
        reset: Option<Bits>,
    },
}

struct FlatMem {
    words: Vec<Bits>,
    writes: Vec<FlatWrite>,
}

/// One write port: enable, address, data and the lane enables with their lane width.
struct FlatWrite {
    en: FExpr,
    addr: FExpr,
    data: FExpr,
    mask: Option<(FExpr, u32)>,
}

/// A running instance of a module.
pub struct Sim {
    names: Vec<String>,
    widths: Vec<u32>,
    drivers: Vec<Driver>,
    values: Vec<Bits>,
    order: Vec<usize>,
    mems: Vec<FlatMem>,
    index: HashMap<String, usize>,
    top_inputs: HashMap<String, usize>,
    rst: Option<usize>,
    cycle: u64,
    /// Combinational nets reading each net.
    fanout: Vec<Vec<usize>>,
    /// Combinational nets reading each memory.
    mem_readers: Vec<Vec<usize>>,
    /// Registers: (net, nets and memories their next value and enable read).
    regs: Vec<(usize, Vec<usize>, Vec<usize>)>,
    /// Combinational nets to re-evaluate.
    pending: Vec<bool>,
    /// Nets changed since the previous edge's register update.
    changed: Vec<bool>,
    changed_list: Vec<usize>,
    /// Memories written since the previous edge's register update.
    mem_written: Vec<bool>,
    /// Recompute every register at the next edge (first edge, reset entered or left).
    all_regs: bool,
    last_in_reset: bool,
}

struct Flattener {
    names: Vec<String>,
    widths: Vec<u32>,
    drivers: Vec<Option<Driver>>,
    mems: Vec<FlatMem>,
}

impl Flattener {
    fn new_net(&mut self, name: String, width: u32) -> usize {
        self.names.push(name);
        self.widths.push(width);
        self.drivers.push(None);
        self.names.len() - 1
    }

    /// Flattens module `m` under `prefix`; `ports` maps its input names (incl. clock/reset)
    /// to already-created flat nets. Returns the flat net of every signal by index.
    fn flatten(
        &mut self,
        m: &Arc<Module>,
        prefix: &str,
        ports: &HashMap<String, usize>,
    ) -> Vec<usize> {
        let mut local = Vec::with_capacity(m.signals.len());
        for s in &m.signals {
            let id = if s.kind == SigKind::Input {
                ports[&*s.name]
            } else {
                self.new_net(format!("{}{}", prefix, s.name), s.width)
            };
            local.push(id);
        }
        let mem_base = self.mems.len();
        for mem in &m.memories {
            self.mems.push(FlatMem {
                words: vec![Bits::zero(mem.width); mem.depth as usize],
                writes: Vec::new(),
            });
        }
        let rst = ports.get("rst_ni").copied();
        let tr = |e: &Expr| translate(e, &local, mem_base);
        for (i, s) in m.signals.iter().enumerate() {
            let d = match s.kind {
                SigKind::Output | SigKind::Wire => s.driver.as_ref().map(|d| Driver::Comb(tr(d))),
                SigKind::Reg => s.reg.as_ref().map(|r| Driver::Reg {
                    next: r
                        .next
                        .as_ref()
                        .map(&tr)
                        .unwrap_or(FExpr::Const(Bits::zero(s.width))),
                    enable: r.enable.as_ref().map(&tr),
                    reset: if rst.is_some() { r.reset.clone() } else { None },
                }),
                _ => None,
            };
            if let Some(d) = d {
                self.drivers[local[i]] = Some(d);
            }
        }
        for (k, mem) in m.memories.iter().enumerate() {
            let w: Vec<_> = mem
                .writes
                .iter()
                .map(|w| FlatWrite {
                    en: tr(&w.en),
                    addr: tr(&w.addr),
                    data: tr(&w.data),
                    mask: w.mask.as_ref().map(|(e, lw)| (tr(e), *lw)),
                })
                .collect();
            self.mems[mem_base + k].writes = w;
        }
        for inst in &m.instances {
            let sub_prefix = format!("{}{}.", prefix, inst.name);
            let mut sub_ports = HashMap::new();
            for p in ["clk_i", "rst_ni"] {
                if let Some(&id) = ports.get(p) {
                    sub_ports.insert(p.to_string(), id);
                }
            }
            for (pname, e) in &inst.inputs {
                let w = inst
                    .module
                    .port(pname)
                    .map(|p| p.width)
                    .unwrap_or(e.width());
                let id = self.new_net(format!("{}{}", sub_prefix, pname), w);
                self.drivers[id] = Some(Driver::Comb(tr(e)));
                sub_ports.insert(pname.clone(), id);
            }
            let sub_local = self.flatten(&inst.module, &sub_prefix, &sub_ports);
            for (pname, parent_id) in &inst.outputs {
                if let Some(ci) = inst.module.signal_index(pname) {
                    let child_net = sub_local[ci];
                    self.drivers[local[parent_id.index]] =
                        Some(Driver::Comb(FExpr::Net(child_net)));
                }
            }
        }
        local
    }
}

fn translate(e: &Expr, local: &[usize], mem_base: usize) -> FExpr {
    let t = |x: &Expr| Box::new(translate(x, local, mem_base));
    match e.node() {
        Node::Sig { id, .. } => FExpr::Net(local[id.index]),
        Node::Const(b) | Node::Param { value: b, .. } => FExpr::Const(b.clone()),
        Node::Slice { base, lo } => FExpr::Slice(t(base), *lo, e.width()),
        Node::Concat(ps) => {
            FExpr::Concat(ps.iter().map(|p| translate(p, local, mem_base)).collect())
        }
        Node::Repeat(x, n) => FExpr::Repeat(t(x), *n),
        Node::Not(x) => FExpr::Not(t(x)),
        Node::Reduce(op, x) => FExpr::Reduce(*op, t(x)),
        Node::Bin(op, a, b) => FExpr::Bin(*op, t(a), t(b)),
        Node::Cmp(op, a, b) => FExpr::Cmp(*op, t(a), t(b)),
        Node::ShiftConst(d, a, n) => FExpr::ShiftConst(*d, t(a), *n),
        Node::ShiftVar(d, a, n) => FExpr::ShiftVar(*d, t(a), t(n)),
        Node::Mux(s, a, b) => FExpr::Mux(t(s), t(a), t(b)),
        Node::MemRead { mem, addr, .. } => FExpr::MemRead(mem_base + mem.index, e.width(), t(addr)),
    }
}

/// Calls `f` on every node of `e` (pre-order).
fn walk(e: &FExpr, f: &mut impl FnMut(&FExpr)) {
    f(e);
    match e {
        FExpr::Net(_) | FExpr::Const(_) => {}
        FExpr::Slice(x, ..)
        | FExpr::Repeat(x, _)
        | FExpr::Not(x)
        | FExpr::Reduce(_, x)
        | FExpr::ShiftConst(_, x, _)
        | FExpr::MemRead(_, _, x) => walk(x, f),
        FExpr::Concat(ps) => ps.iter().for_each(|p| walk(p, f)),
        FExpr::Bin(_, a, b) | FExpr::Cmp(_, a, b) | FExpr::ShiftVar(_, a, b) => {
            walk(a, f);
            walk(b, f);
        }
        FExpr::Mux(s, a, b) => {
            walk(s, f);
            walk(a, f);
            walk(b, f);
        }
    }
}

/// The nets `e` reads.
fn deps(e: &FExpr, out: &mut Vec<usize>) {
    walk(e, &mut |x| {
        if let FExpr::Net(i) = x {
            out.push(*i)
        }
    });
}

/// The memories `e` reads.
fn mem_deps(e: &FExpr, out: &mut Vec<usize>) {
    walk(e, &mut |x| {
        if let FExpr::MemRead(m, ..) = x {
            out.push(*m)
        }
    });
}

fn eval(e: &FExpr, v: &[Bits], mems: &[FlatMem]) -> Bits {
    match e {
        FExpr::Net(i) => v[*i].clone(),
        FExpr::Const(b) => b.clone(),
        FExpr::Slice(x, lo, w) => eval(x, v, mems).slice(*lo, *w),
        FExpr::Concat(ps) => {
            Bits::concat_msb(&ps.iter().map(|p| eval(p, v, mems)).collect::<Vec<_>>())
        }
        FExpr::Repeat(x, n) => {
            let b = eval(x, v, mems);
            Bits::concat_msb(&vec![b; *n as usize])
        }
        FExpr::Not(x) => eval(x, v, mems).not(),
        FExpr::Reduce(op, x) => {
            let b = eval(x, v, mems);
            let r = match op {
                RedOp::Or => !b.is_zero(),
                RedOp::And => b.count_ones() == b.width(),
                RedOp::Xor => b.count_ones() % 2 == 1,
            };
            Bits::from_u64(1, r as u64)
        }
        FExpr::Bin(op, a, b) => {
            let (a, b) = (eval(a, v, mems), eval(b, v, mems));
            match op {
                BinOp::And => a.and(&b),
                BinOp::Or => a.or(&b),
                BinOp::Xor => a.xor(&b),
                BinOp::Add => a.add(&b),
                BinOp::Sub => a.sub(&b),
            }
        }
        FExpr::Cmp(op, a, b) => {
            let (a, b) = (eval(a, v, mems), eval(b, v, mems));
            let r = match op {
                CmpOp::Eq => a.val_eq(&b),
                CmpOp::Ne => !a.val_eq(&b),
                CmpOp::Lt => a.ult(&b),
                CmpOp::Le => !b.ult(&a),
                CmpOp::Gt => b.ult(&a),
                CmpOp::Ge => !a.ult(&b),
            };
            Bits::from_u64(1, r as u64)
        }
        FExpr::ShiftConst(d, a, n) => {
            let a = eval(a, v, mems);
            match d {
                ShiftDir::Left => a.shl(*n),
                ShiftDir::Right => a.shr(*n),
            }
        }
        FExpr::ShiftVar(d, a, n) => {
            let (a, n) = (eval(a, v, mems), eval(n, v, mems).to_shift());
            match d {
                ShiftDir::Left => a.shl(n),
                ShiftDir::Right => a.shr(n),
            }
        }
        FExpr::Mux(s, a, b) => {
            if eval(s, v, mems).is_zero() {
                eval(b, v, mems)
            } else {
                eval(a, v, mems)
            }
        }
        FExpr::MemRead(m, w, addr) => {
            let a = eval(addr, v, mems).to_shift() as usize;
            mems[*m]
                .words
                .get(a)
                .cloned()
                .unwrap_or_else(|| Bits::zero(*w))
        }
    }
}

impl Sim {
    /// Flattens `top` and prepares it for simulation. All state starts at zero; call
    /// [`Sim::reset`] to apply the reset values.
    pub fn new(top: &Arc<Module>) -> Result<Sim, HdlError> {
        let mut f = Flattener {
            names: Vec::new(),
            widths: Vec::new(),
            drivers: Vec::new(),
            mems: Vec::new(),
        };
        let mut ports = HashMap::new();
        let mut top_inputs = HashMap::new();
        for p in top.ports() {
            if p.dir == super::module::Dir::In {
                let id = f.new_net(p.name.clone(), p.width);
                f.drivers[id] = Some(Driver::Input);
                ports.insert(p.name.clone(), id);
                top_inputs.insert(p.name.clone(), id);
            }
        }
        f.flatten(top, "", &ports);
        let n = f.names.len();
        let drivers: Vec<Driver> = f
            .drivers
            .into_iter()
            .map(|d| d.unwrap_or(Driver::Input))
            .collect();
        // Topological order of combinational nets (iterative DFS; registers and inputs are roots).
        let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut order = Vec::new();
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, Vec<usize>, usize)> = Vec::new();
            let push =
                |i: usize, stack: &mut Vec<(usize, Vec<usize>, usize)>, state: &mut Vec<u8>| {
                    state[i] = 1;
                    let mut d = Vec::new();
                    if let Driver::Comb(e) = &drivers[i] {
                        deps(e, &mut d);
                    }
                    stack.push((i, d, 0));
                };
            push(start, &mut stack, &mut state);
            while let Some(top_frame) = stack.last_mut() {
                let (i, ref d, ref mut k) = *top_frame;
                if *k < d.len() {
                    let j = d[*k];
                    *k += 1;
                    match state[j] {
                        0 => push(j, &mut stack, &mut state),
                        1 => {
                            let cyc: Vec<String> = stack
                                .iter()
                                .skip_while(|fr| fr.0 != j)
                                .map(|fr| f.names[fr.0].clone())
                                .collect();
                            return Err(HdlError {
                                module: top.name.clone(),
                                problems: vec![format!(
                                    "combinational loop through {}",
                                    cyc.join(" -> ")
                                )],
                            });
                        }
                        _ => {}
                    }
                } else {
                    state[i] = 2;
                    if matches!(drivers[i], Driver::Comb(_)) {
                        order.push(i);
                    }
                    stack.pop();
                }
            }
        }
        let values = f.widths.iter().map(|w| Bits::zero(*w)).collect();
        let index = f
            .names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i))
            .collect();
        let rst = top_inputs.get("rst_ni").copied();
        let mut fanout = vec![Vec::new(); n];
        let mut mem_readers = vec![Vec::new(); f.mems.len()];
        let mut regs = Vec::new();
        for (i, d) in drivers.iter().enumerate() {
            let exprs: Vec<&FExpr> = match d {
                Driver::Comb(e) => vec![e],
                Driver::Reg { next, enable, .. } => std::iter::once(next).chain(enable).collect(),
                Driver::Input => continue,
            };
            let (mut nd, mut md) = (Vec::new(), Vec::new());
            for e in exprs {
                deps(e, &mut nd);
                mem_deps(e, &mut md);
            }
            nd.sort_unstable();
            nd.dedup();
            md.sort_unstable();
            md.dedup();
            if matches!(d, Driver::Reg { .. }) {
                regs.push((i, nd, md));
                continue;
            }
            for &j in &nd {
                fanout[j].push(i);
            }
            for m in md {
                mem_readers[m].push(i);
            }
        }
        let nmem = f.mems.len();
        let mut sim = Sim {
            names: f.names,
            widths: f.widths,
            drivers,
            values,
            order,
            mems: f.mems,
            index,
            top_inputs,
            rst,
            cycle: 0,
            fanout,
            mem_readers,
            regs,
            pending: vec![true; n],
            changed: vec![false; n],
            changed_list: Vec::new(),
            mem_written: vec![false; nmem],
            all_regs: true,
            last_in_reset: false,
        };
        sim.eval();
        Ok(sim)
    }

    /// Sets a top-level input (value resized to the port width). Unknown names are an error.
    pub fn set(&mut self, port: &str, value: &Bits) -> Result<(), HdlError> {
        match self.top_inputs.get(port) {
            Some(&i) => {
                let v = value.resize(self.widths[i]);
                self.update(i, v);
                Ok(())
            }
            None => Err(HdlError {
                module: "sim".into(),
                problems: vec![format!("no input port `{}`", port)],
            }),
        }
    }

    /// Sets a top-level input from a `u64`.
    pub fn set_u64(&mut self, port: &str, value: u64) -> Result<(), HdlError> {
        self.set(port, &Bits::from_u64(64, value))
    }

    /// Value of any net by hierarchical name (`inst.sub.net`), after the last `eval`.
    pub fn get(&self, name: &str) -> Option<&Bits> {
        self.index.get(name).map(|&i| &self.values[i])
    }

    /// Value of a net as `u64` (0 if unknown).
    pub fn get_u64(&self, name: &str) -> u64 {
        self.get(name).map(|b| b.to_u64()).unwrap_or(0)
    }

    /// Gives net `i` the value `v`; if it changed, marks it and its readers.
    fn update(&mut self, i: usize, v: Bits) {
        if self.values[i] == v {
            return;
        }
        self.values[i] = v;
        if !self.changed[i] {
            self.changed[i] = true;
            self.changed_list.push(i);
        }
        for &j in &self.fanout[i] {
            self.pending[j] = true;
        }
    }

    /// Settles combinational logic.
    pub fn eval(&mut self) {
        for k in 0..self.order.len() {
            let i = self.order[k];
            if !self.pending[i] {
                continue;
            }
            self.pending[i] = false;
            if let Driver::Comb(e) = &self.drivers[i] {
                let v = eval(e, &self.values, &self.mems).resize(self.widths[i]);
                self.update(i, v);
            }
        }
    }

    /// One rising clock edge: settles, updates registers and memories, settles again.
    pub fn tick(&mut self) {
        self.eval();
        let in_reset = self.rst.map(|r| self.values[r].is_zero()).unwrap_or(false);
        let all = self.all_regs || in_reset != self.last_in_reset;
        self.last_in_reset = in_reset;
        self.all_regs = false;
        let mut updates = Vec::new();
        for (i, nd, md) in &self.regs {
            let Driver::Reg {
                next,
                enable,
                reset,
            } = &self.drivers[*i]
            else {
                continue;
            };
            if in_reset {
                if let Some(rv) = reset {
                    updates.push((*i, rv.clone()));
                    continue;
                }
            }
            let stale = all
                || nd.iter().any(|&d| self.changed[d])
                || md.iter().any(|&m| self.mem_written[m]);
            if !stale {
                continue;
            }
            let en = enable
                .as_ref()
                .map(|e| !eval(e, &self.values, &self.mems).is_zero())
                .unwrap_or(true);
            if en {
                updates.push((
                    *i,
                    eval(next, &self.values, &self.mems).resize(self.widths[*i]),
                ));
            }
        }
        let mut mem_updates = Vec::new();
        for (mi, m) in self.mems.iter().enumerate() {
            for w in &m.writes {
                if eval(&w.en, &self.values, &self.mems).is_zero() {
                    continue;
                }
                let a = eval(&w.addr, &self.values, &self.mems).to_shift() as usize;
                let data = eval(&w.data, &self.values, &self.mems);
                // Lanes without their enable keep the word (applied in port order below).
                let keep = w.mask.as_ref().map(|(mask, lw)| {
                    let mask = eval(mask, &self.values, &self.mems);
                    (0..mask.width())
                        .filter(|&i| !mask.bit(i))
                        .fold(Bits::zero(data.width()), |acc, i| {
                            acc.or(&Bits::ones(*lw).resize(data.width()).shl(i * lw))
                        })
                });
                mem_updates.push((mi, a, data, keep));
            }
        }
        for i in self.changed_list.drain(..) {
            self.changed[i] = false;
        }
        self.mem_written.iter_mut().for_each(|w| *w = false);
        for (i, v) in updates {
            self.update(i, v);
        }
        for (mi, a, v, keep) in mem_updates {
            if let Some(slot) = self.mems[mi].words.get_mut(a) {
                let v = match keep {
                    Some(keep) => v.and(&keep.not()).or(&slot.and(&keep)),
                    None => v,
                };
                if *slot != v {
                    *slot = v;
                    self.mem_written[mi] = true;
                    for &j in &self.mem_readers[mi] {
                        self.pending[j] = true;
                    }
                }
            }
        }
        self.cycle += 1;
        self.eval();
    }

    /// Holds `rst_ni` low for `cycles` edges, then releases it.
    pub fn reset(&mut self, cycles: u32) {
        if let Some(r) = self.rst {
            self.update(r, Bits::zero(1));
            for _ in 0..cycles.max(1) {
                self.tick();
            }
            self.update(r, Bits::from_u64(1, 1));
            self.eval();
        }
    }

    /// Rising edges so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Names of all flat nets (for debugging).
    pub fn net_names(&self) -> &[String] {
        &self.names
    }
}
