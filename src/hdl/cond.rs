//! Conditional assignment and enum-typed state machines.
//!
//! [`ModuleBuilder::when`] opens a branch; inside it [`ModuleBuilder::set`] gives a register
//! (or [`ModuleBuilder::set_wire`] a defaulted wire) a value under the branch's condition.
//! Branches nest and chain (`when` / [`When::elsewhen`] / [`When::otherwise`]); a later `set`
//! of the same target wins, as in Chisel and Amaranth. When the module is finished every
//! target is lowered to plain hwzip logic:
//!
//! * a register loads when any of its guards holds (`enable = g1 | g2 | ...`, omitted when
//!   one assignment is unconditional) and its next state `x_d` is a priority mux of the
//!   assigned values, the latest assignment first (an element of a register array has no
//!   enable: its next state keeps its value when no guard holds, so runs of elements load in
//!   one loop);
//! * a defaulted wire is the same priority mux ending in its default.
//!
//! The lowered assignment is placed where the target was last set, so it is emitted in that
//! stage of the module. [`ModuleBuilder::fsm`] declares a state register whose codes are
//! `localparam`s (`ST_IDLE`, ...) in the emitted Verilog.

use super::bits::Bits;
use super::expr::{BinOp, CmpOp, Expr, Node};
use super::module::{clog2, Assign, CaseForm, Item, Kind, ModuleBuilder, Net, Reg, Target};
use std::panic::Location;

/// A `when` chain: what its earlier branches covered, for `elsewhen` and `otherwise`.
#[derive(Clone, Debug)]
pub struct When {
    taken: Expr,
}

impl When {
    /// `else if (c)`: runs `f` with the guard `c` and no earlier branch of the chain.
    #[track_caller]
    pub fn elsewhen(
        self,
        m: &mut ModuleBuilder,
        c: &Expr,
        f: impl FnOnce(&mut ModuleBuilder),
    ) -> When {
        let loc = Location::caller();
        m.check_cond(c, loc);
        let g = !self.taken.clone() & c.clone();
        m.branch(g, f);
        When {
            taken: self.taken | c.clone(),
        }
    }

    /// `else`: runs `f` when no branch of the chain applied.
    pub fn otherwise(self, m: &mut ModuleBuilder, f: impl FnOnce(&mut ModuleBuilder)) {
        m.branch(!self.taken, f);
    }
}

/// A state register with named states ([`ModuleBuilder::fsm`]).
#[derive(Clone, Debug)]
pub struct Fsm {
    reg: Reg,
    states: Vec<(String, Expr)>,
}

impl Fsm {
    /// The state register's value.
    pub fn q(&self) -> Expr {
        self.reg.q()
    }

    /// The code of `state` (its `localparam`). An unknown state is a builder error.
    #[track_caller]
    pub fn code(&self, state: &str) -> Expr {
        match self.states.iter().find(|(n, _)| n == state) {
            Some((_, e)) => e.clone(),
            None => Expr::malformed(
                self.reg.q().width(),
                format!(
                    "FSM `{}` has no state `{}` (at {})",
                    self.reg.q().brief(),
                    state,
                    Location::caller()
                ),
            ),
        }
    }

    /// 1 when the machine is in `state`.
    #[track_caller]
    pub fn is(&self, state: &str) -> Expr {
        self.reg.q().eq(&self.code(state))
    }

    /// Moves to `state` under the current `when` branch.
    #[track_caller]
    pub fn go(&self, m: &mut ModuleBuilder, state: &str) {
        let c = self.code(state);
        m.set(&self.reg, &c);
    }
}

impl ModuleBuilder {
    /// `if (c)`: runs `f` with `c` added to the guard of every [`ModuleBuilder::set`] in it.
    #[track_caller]
    pub fn when(&mut self, c: &Expr, f: impl FnOnce(&mut ModuleBuilder)) -> When {
        let loc = Location::caller();
        self.check_cond(c, loc);
        self.branch(c.clone(), f);
        When { taken: c.clone() }
    }

    fn check_cond(&mut self, c: &Expr, loc: &Location<'_>) {
        if c.width() != 1 {
            self.problem(format!(
                "`when` condition `{}` is {} bits, expected 1 (at {})",
                c.brief(),
                c.width(),
                loc
            ));
        }
    }

    fn branch(&mut self, g: Expr, f: impl FnOnce(&mut ModuleBuilder)) {
        self.cond.guards.push(g);
        f(self);
        self.cond.guards.pop();
    }

    /// The conjunction of the open branches' conditions (1 outside any branch).
    fn guard(&self) -> Expr {
        let mut it = self.cond.guards.iter();
        match it.next() {
            None => Expr::ones(1),
            Some(first) => it.fold(first.clone(), |acc, g| acc & g.clone()),
        }
    }

    /// Gives register `r` the value `v` under the current branch (it holds otherwise). A
    /// register set this way must not also get [`ModuleBuilder::next`].
    #[track_caller]
    pub fn set(&mut self, r: &Reg, v: &Expr) {
        let loc = Location::caller();
        let sig = r.index();
        if v.width() != r.width() {
            self.problem(format!(
                "width mismatch: register `{}` is {} bits, value `{}` is {} bits (at {})",
                r.q().brief(),
                r.width(),
                v.brief(),
                v.width(),
                loc
            ));
        }
        let t = match self.cond.index.get(&sig) {
            Some(&t) => t,
            None => {
                self.cond.targets.push(Target {
                    kind: Kind::Reg(r.clone()),
                    assigns: Vec::new(),
                });
                let t = self.cond.targets.len() - 1;
                self.cond.index.insert(sig, t);
                t
            }
        };
        self.push_assign(t, v);
    }

    /// Declares a wire that is `default` unless a [`ModuleBuilder::set_wire`] in a `when`
    /// branch gives it another value.
    pub fn wire_default(&mut self, name: &str, default: &Expr) -> Net {
        let net = self.wire_decl(name, default.width());
        self.cond.targets.push(Target {
            kind: Kind::Wire {
                net: net.clone(),
                default: default.clone(),
            },
            assigns: Vec::new(),
        });
        self.cond
            .index
            .insert(net.index(), self.cond.targets.len() - 1);
        net
    }

    /// Gives a wire declared with [`ModuleBuilder::wire_default`] the value `v` under the
    /// current branch.
    #[track_caller]
    pub fn set_wire(&mut self, n: &Net, v: &Expr) {
        let loc = Location::caller();
        let Some(&t) = self.cond.index.get(&n.index()) else {
            self.problem(format!(
                "`{}` is set in a `when` branch but was not declared with `wire_default` (at {})",
                n.expr().brief(),
                loc
            ));
            return;
        };
        if v.width() != n.width() {
            self.problem(format!(
                "width mismatch: wire `{}` is {} bits, value `{}` is {} bits (at {})",
                n.expr().brief(),
                n.width(),
                v.brief(),
                v.width(),
                loc
            ));
        }
        self.push_assign(t, v);
    }

    fn push_assign(&mut self, t: usize, v: &Expr) {
        let guard = self.guard();
        let pos = self.item_count();
        self.cond.targets[t].assigns.push(Assign {
            guard,
            value: v.clone(),
            pos,
        });
    }

    /// Declares a state register with one `localparam` per state (`<PREFIX>_<STATE>`, the
    /// prefix being `name` without `_q`, upper case), binary codes in the given order, reset
    /// to the first state. Move between states with [`Fsm::go`] inside `when` branches.
    #[track_caller]
    pub fn fsm(&mut self, name: &str, states: &[&str]) -> Fsm {
        let loc = Location::caller();
        if states.is_empty() {
            self.problem(format!("FSM `{}` has no states (at {})", name, loc));
        }
        let w = clog2(states.len().max(2) as u64);
        let base = name.strip_suffix("_q").unwrap_or(name).to_ascii_uppercase();
        let codes: Vec<(String, Expr)> = states
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let pname = format!("{}_{}", base, s.to_ascii_uppercase());
                let e = self.localparam(&pname, Bits::from_u64(w, i as u64));
                (s.to_string(), e)
            })
            .collect();
        let reg = self.reg(name, w, Some(0));
        let labels = codes.iter().map(|(_, e)| e.clone()).collect();
        self.cond.fsms.insert(reg.index(), labels);
        Fsm { reg, states: codes }
    }

    /// Lowers every conditionally assigned target (called by `finish`).
    pub(crate) fn lower_conditionals(&mut self) {
        let targets = std::mem::take(&mut self.cond.targets);
        let mut placed: Vec<(usize, Vec<Item>)> = Vec::new();
        for t in targets {
            let Some(last) = t.assigns.last() else {
                // A defaulted wire that is never set is just its default.
                if let Kind::Wire { net, default } = &t.kind {
                    self.drive(net, default);
                }
                continue;
            };
            let pos = last.pos;
            let before = self.item_count();
            // Assignments after an unconditional one are all that matter.
            let start = t
                .assigns
                .iter()
                .rposition(|a| is_one(&a.guard))
                .unwrap_or(0);
            let live = &t.assigns[start..];
            let form = match &t.kind {
                Kind::Reg(r) => (self.cond.fsms.get(&r.index()))
                    .and_then(|codes| case_form(self, r, codes, live)),
                Kind::Wire { .. } => None,
            };
            match (&t.kind, form) {
                (Kind::Reg(r), Some(form)) => {
                    let next = form_expr(&form);
                    self.next(r, &next, None);
                    self.set_case(r, form);
                }
                (Kind::Reg(r), None) => {
                    let mut next = live[0].value.clone();
                    for a in &live[1..] {
                        next = a.guard.select(&a.value, &next);
                    }
                    let enable = if is_one(&live[0].guard) {
                        None
                    } else {
                        let mut en = live[0].guard.clone();
                        for a in &live[1..] {
                            en = en | a.guard.clone();
                        }
                        if self.is_element(r) {
                            // An array element holds its value through its next state, so a
                            // run of elements loads as one loop (`x_d[k]` keeps `x_q[k]`).
                            next = en.select(&next, &r.q());
                            None
                        } else {
                            // Named, so the flop block reads `if (x_en) x_q <= x_d;`.
                            let base = r.q().brief();
                            let base = base.strip_suffix("_q").unwrap_or(&base).to_string();
                            Some(self.wire(&format!("{}_en", base), &en))
                        }
                    };
                    self.next(r, &next, enable.as_ref());
                }
                (Kind::Wire { net, default }, _) => {
                    let mut v = default.clone();
                    for a in live {
                        v = a.guard.select(&a.value, &v);
                    }
                    self.drive(net, &v);
                }
            }
            placed.push((pos, self.take_items_from(before)));
        }
        // Insert from the back so earlier positions stay valid; targets last set at one
        // position are inserted there last-first, so they keep the order they were set in.
        placed.reverse();
        placed.sort_by_key(|(p, _)| std::cmp::Reverse(*p));
        for (p, items) in placed {
            self.insert_items(p, items);
        }
    }
}

/// The assignments of a state register as a `case` on its state: per state (and for the
/// codes that name none, `default`), the assignments that can be made in it, the one made
/// last first (it wins), each guard without its factors that the state decides. `None`
/// when an assignment would be in every arm (it names no state).
fn case_form(mb: &ModuleBuilder, r: &Reg, codes: &[Expr], assigns: &[Assign]) -> Option<CaseForm> {
    let full = codes.len() as u64 == 1u64 << r.width().min(63);
    let labels: Vec<Option<&Expr>> = codes
        .iter()
        .map(Some)
        .chain((!full).then_some(None))
        .collect();
    let mut everywhere = vec![true; assigns.len()];
    let mut arms = Vec::new();
    for label in labels {
        let state = label.map(|c| c.as_const().map_or(0, |b| b.to_u64()));
        let mut arm: Vec<(Expr, Expr)> = Vec::new();
        for (k, a) in assigns.iter().enumerate().rev() {
            let mut factors = Vec::new();
            and_factors(&a.guard, &mut factors);
            let mut keep = Vec::new();
            let mut applies = true;
            for f in factors {
                match in_state(mb, r, &f, state, 0) {
                    Some(false) => applies = false,
                    Some(true) => {}
                    None => keep.push(f),
                }
            }
            if !applies {
                everywhere[k] = false;
                continue;
            }
            // After an unconditional assignment the earlier ones never win.
            if arm.last().is_some_and(|(g, _)| is_one(g)) {
                continue;
            }
            let guard = keep
                .into_iter()
                .reduce(|x, y| x & y)
                .unwrap_or_else(|| Expr::ones(1));
            arm.push((guard, a.value.clone()));
        }
        if !arm.is_empty() {
            arms.push((label.cloned(), arm));
        }
    }
    // A transition that names no state belongs in every arm: the mux chain reads better.
    if everywhere.iter().any(|&e| e) {
        return None;
    }
    Some(CaseForm { sel: r.q(), arms })
}

/// The `&` factors of a condition, left to right.
fn and_factors(e: &Expr, out: &mut Vec<Expr>) {
    match e.node() {
        Node::Bin(BinOp::And, a, b) if e.width() == 1 => {
            and_factors(a, out);
            and_factors(b, out);
        }
        _ => out.push(e.clone()),
    }
}

/// The value of condition `f` while state register `r` holds `state` (`None`: a code that
/// names no state), when the state alone decides it: `r == code`, constants, and `~`, `&`,
/// `|` of these, also through named wires.
fn in_state(mb: &ModuleBuilder, r: &Reg, f: &Expr, state: Option<u64>, depth: u32) -> Option<bool> {
    if f.width() != 1 {
        return None;
    }
    if let Some(b) = f.as_const() {
        return Some(b.to_u64() == 1);
    }
    let sub = |x: &Expr| in_state(mb, r, x, state, depth);
    match f.node() {
        Node::Cmp(CmpOp::Eq, a, b) => match (a.node(), b.as_const()) {
            (Node::Sig { id, .. }, Some(k)) if id.index == r.index() => {
                Some(state == Some(k.to_u64()))
            }
            _ => None,
        },
        Node::Not(x) => sub(x).map(|v| !v),
        Node::Bin(BinOp::And, a, b) => match (sub(a), sub(b)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        Node::Bin(BinOp::Or, a, b) => match (sub(a), sub(b)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
        Node::Sig { .. } if depth < 4 => in_state(mb, r, &mb.wire_driver(f)?, state, depth + 1),
        _ => None,
    }
}

/// The case form as one expression: a mux chain that holds the state by default.
fn form_expr(f: &CaseForm) -> Expr {
    let arm_expr = |arm: &[(Expr, Expr)]| {
        let mut a = f.sel.clone();
        for (g, x) in arm.iter().rev() {
            a = g.select(x, &a);
        }
        a
    };
    let mut v = f.sel.clone();
    if let Some((None, arm)) = f.arms.last() {
        v = arm_expr(arm);
    }
    for (code, arm) in f.arms.iter().rev() {
        if let Some(code) = code {
            v = f.sel.eq(code).select(&arm_expr(arm), &v);
        }
    }
    v
}

fn is_one(e: &Expr) -> bool {
    e.width() == 1 && e.as_const().is_some_and(|b| b.to_u64() == 1)
}
