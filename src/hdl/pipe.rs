//! Pipeline stages: a generator says what each stage computes; the pipeline owns the valid
//! bits, the load enables and the back-pressure.
//!
//! ```
//! use hwzip::hdl::{pipe::{Pipeline, Policy}, stream, Layout, ModuleBuilder};
//! let mut m = ModuleBuilder::new("add3_w8");
//! let s = stream::input(&mut m, "s", &Layout::new(&[("a", 8), ("b", 8)]));
//! let out = stream::output_port(&mut m, "m");
//! let (a, b) = (s.field("a"), s.field("b"));
//! let mut p = Pipeline::new(&mut m, "st", Policy::Bubble, &s.valid);
//! m.comment("Stage 1: sum");
//! let s1 = p.stage(&mut m, "sum");
//! let sum = s1.reg(&mut m, "sum_q", &(&a + &b));
//! m.comment("Stage 2: plus three");
//! let s2 = p.stage(&mut m, "out");
//! let res = s2.reg(&mut m, "res_q", &(&sum + &hwzip::hdl::Expr::lit(8, 3)));
//! p.finish_ports(&mut m, s, out, &[("sum", res)]);
//! let module = m.finish().unwrap();
//! assert_eq!(module.name, "add3_w8");
//! ```
//!
//! Stages are created in order with [`Pipeline::stage`]; each has a valid register
//! `<stage>_valid_q` and a load enable (`<stage>_load`, or the shared `<name>_adv`) that its
//! data registers ([`Stage::reg`]) use. A stage passes each beat on as it is by default;
//! three other flows cover the stages of compressors:
//!
//! * [`Pipeline::hold`]: the stage works on its beat for several cycles (a token loop) and
//!   offers it when done;
//! * [`Pipeline::repeat`]: the stage offers a new beat every cycle from one input beat (a
//!   line split into word groups) and takes the next input after its last;
//! * [`Pipeline::filter`]: only the beats that pass go on; the others end in the stage
//!   (word groups merged into one line);
//! * [`Pipeline::gather`]: the stage's registers take every beat offered, but the stage
//!   holds a beat only after the one that completes a group (bus beats shifted into one
//!   sector, with no register in front);
//! * [`Pipeline::bypass`]: beats with a condition go past the stage into the next one in
//!   the cycle they are taken (a raw line past an iterative decoder).
//!
//! [`Pipeline::leaves`] names the cycles in which a stage's beat leaves it (moves on or
//! ends there), for the state a stage updates per beat. The control is written when the
//! pipeline is finished, in a section of its own, for one of three policies ([`Policy`]).
//! Every policy takes one beat per cycle when the consumer is ready.

use super::blocks;
use super::expr::Expr;
use super::module::{ModuleBuilder, Net, Reg};
use super::stream::{OutPort, Stream};

/// How the stages of a [`Pipeline`] stall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// One advance for the whole pipeline (`<name>_adv`): every stage loads when the last
    /// stage is empty or its beat is taken. The fewest gates and one enable net; a bubble
    /// inside the pipeline stays while the consumer stalls. No [`Pipeline::hold`].
    Global,
    /// Each stage loads when it is free: empty, or its beat moves on this cycle. Bubbles
    /// collapse; the consumer's `ready` reaches the input through one gate per stage.
    Bubble,
    /// [`Policy::Bubble`] stages followed by a skid buffer (`<name>_skid`): every output
    /// and the `ready` towards the stages come from registers, one more cycle of latency.
    Skid,
}

/// One stage of a [`Pipeline`] (a cheap handle).
#[derive(Clone, Debug)]
pub struct Stage {
    index: usize,
    valid: Expr,
    load: Expr,
    free: Expr,
}

impl Stage {
    /// The stage holds a beat.
    pub fn valid(&self) -> Expr {
        self.valid.clone()
    }

    /// The enable of the stage's registers: a new beat enters this cycle (with
    /// [`Policy::Global`], the whole pipeline advances).
    pub fn load(&self) -> Expr {
        self.load.clone()
    }

    /// The stage takes a beat this cycle if one is offered: it is empty or its beat moves
    /// on (`<stage>_free`; with [`Policy::Global`], the pipeline's advance).
    pub fn free(&self) -> Expr {
        self.free.clone()
    }

    /// A data register of this stage, `name` (ending in `_q`), loading `d` with the stage.
    pub fn reg(&self, m: &mut ModuleBuilder, name: &str, d: &Expr) -> Expr {
        m.reg_next(name, None, d, Some(&self.load))
    }

    /// [`Stage::reg`] loaded in slices, one per copy of the stage's load enable from
    /// [`Pipeline::load_copies`] ([`ModuleBuilder::next_lanes`]).
    pub fn reg_lanes(&self, m: &mut ModuleBuilder, name: &str, d: &Expr, loads: &[Expr]) -> Expr {
        let r = m.reg(name, d.width(), None);
        m.next_lanes(&r, d, loads);
        r.q()
    }
}

/// What a stage does with its beat ([`Pipeline::hold`], [`Pipeline::repeat`],
/// [`Pipeline::filter`]).
#[derive(Clone, Debug)]
enum Flow {
    Pass,
    Hold(Expr),
    Repeat(Expr),
    Filter(Expr),
}

impl Flow {
    /// When a valid beat leaves the stage, given that the next stage is free.
    fn leaves(&self, next_free: &Expr) -> Expr {
        match self {
            Flow::Pass => next_free.clone(),
            Flow::Hold(c) | Flow::Repeat(c) => c & next_free,
            Flow::Filter(c) => !c.clone() | next_free.clone(),
        }
    }

    /// What the next stage is offered.
    fn offers(&self, valid: &Expr) -> Expr {
        match self {
            Flow::Pass | Flow::Repeat(_) => valid.clone(),
            Flow::Hold(c) | Flow::Filter(c) => valid & c,
        }
    }
}

#[derive(Debug)]
struct StageCtl {
    name: String,
    valid: Reg,
    load: Net,
    free: Option<Net>,
    leaves: Option<Net>,
    flow: Flow,
    cut: bool,
    /// [`Pipeline::gather`]: a loaded beat makes the stage valid only with this condition.
    gather: Option<Expr>,
    /// [`Pipeline::bypass`]: beats offered with this condition go past the stage.
    bypass: Option<Expr>,
    /// [`Pipeline::load_copies`]: copies of the valid register and the loads they drive.
    copies: Vec<(Reg, Net)>,
}

/// A chain of register stages between one input valid and one output (see the module
/// documentation).
#[must_use = "a pipeline must be finished"]
#[derive(Debug)]
pub struct Pipeline {
    name: String,
    policy: Policy,
    in_valid: Expr,
    stages: Vec<StageCtl>,
    adv: Option<Net>,
}

/// The two ends of a finished [`Pipeline`].
#[derive(Clone, Debug)]
pub struct Ends {
    /// Towards the producer: the first stage takes a beat this cycle if one is offered.
    pub in_ready: Expr,
    /// Towards the consumer: a beat is offered.
    pub out_valid: Expr,
    /// The offered beat's data registered by the skid buffer ([`Policy::Skid`]), in the
    /// order given to [`Pipeline::finish_skid`]; empty otherwise.
    pub out_data: Vec<Expr>,
}

impl Pipeline {
    /// A pipeline fed by `in_valid`; `name` prefixes its shared nets.
    pub fn new(m: &mut ModuleBuilder, name: &str, policy: Policy, in_valid: &Expr) -> Pipeline {
        let adv = (policy == Policy::Global).then(|| m.wire_decl(&format!("{}_adv", name), 1));
        Pipeline {
            name: name.to_string(),
            policy,
            in_valid: in_valid.clone(),
            stages: Vec::new(),
            adv,
        }
    }

    /// The next stage: a valid register `<stage>_valid_q` and its load enable.
    pub fn stage(&mut self, m: &mut ModuleBuilder, stage: &str) -> Stage {
        let valid = m.reg(&format!("{}_valid_q", stage), 1, Some(0));
        let (load, free) = match &self.adv {
            Some(a) => (a.clone(), None),
            None => (
                m.wire_decl(&format!("{}_load", stage), 1),
                Some(m.wire_decl(&format!("{}_free", stage), 1)),
            ),
        };
        let s = Stage {
            index: self.stages.len(),
            valid: valid.q(),
            load: load.expr(),
            free: free.as_ref().unwrap_or(&load).expr(),
        };
        self.stages.push(StageCtl {
            name: stage.to_string(),
            valid,
            load,
            free,
            leaves: None,
            flow: Flow::Pass,
            cut: false,
            gather: None,
            bypass: None,
            copies: Vec::new(),
        });
        s
    }

    /// `n` copies of `stage`'s load enable (`<stage>_load_c<k>`), each computed from a copy
    /// of the stage's valid register (`<stage>_valid_c<k>_q`, kept apart by synthesis), for
    /// the slices of a wide register ([`Stage::reg_lanes`]): one enable net driving every flop
    /// of a 512-bit output register is buffered by ABC as a chain (`docs/TOOLCHAIN.md`).
    /// The rest of each copy's function (the next stage's `free`, or the consumer's `ready`
    /// at the last stage) is shared. Not for [`Policy::Global`] pipelines.
    pub fn load_copies(&mut self, m: &mut ModuleBuilder, stage: &Stage, n: usize) -> Vec<Expr> {
        if self.adv.is_some() {
            m.problem(format!(
                "pipeline `{}`: a global-advance pipeline has no per-stage load copies",
                self.name
            ));
            return vec![stage.load(); n];
        }
        let s = &mut self.stages[stage.index];
        let first = s.copies.len();
        for k in first..first + n {
            let valid = m.reg_kept(&format!("{}_valid_c{}_q", s.name, k), 1, Some(0));
            let load = m.wire_decl(&format!("{}_load_c{}", s.name, k), 1);
            s.copies.push((valid, load));
        }
        s.copies[first..].iter().map(|(_, l)| l.expr()).collect()
    }

    /// The first stage's `ready` towards the producer, usable before the pipeline is
    /// finished.
    pub fn in_ready(&self) -> Expr {
        match (&self.adv, self.stages.first()) {
            (Some(a), _) => a.expr(),
            (None, Some(s)) => s.free.as_ref().unwrap_or(&s.load).expr(),
            (None, None) => Expr::malformed(
                1,
                format!(
                    "pipeline `{}`: `in_ready` before its first stage",
                    self.name
                ),
            ),
        }
    }

    /// `stage` keeps its beat (and takes no new one) until `done` holds, then offers it: an
    /// iterative stage.
    pub fn hold(&mut self, m: &mut ModuleBuilder, stage: &Stage, done: &Expr) {
        self.set_flow(m, stage, Flow::Hold(done.clone()));
    }

    /// `stage` offers a beat in every cycle it is valid (the next stage's load is a step)
    /// and takes a new input beat after the one with `last`: one input beat becomes many.
    pub fn repeat(&mut self, m: &mut ModuleBuilder, stage: &Stage, last: &Expr) {
        self.set_flow(m, stage, Flow::Repeat(last.clone()));
    }

    /// Only `stage`'s beats with `pass` go on to the next stage; the others end in the
    /// stage without waiting: many beats become one.
    pub fn filter(&mut self, m: &mut ModuleBuilder, stage: &Stage, pass: &Expr) {
        self.set_flow(m, stage, Flow::Filter(pass.clone()));
    }

    /// `stage` loads every beat it is offered while it is free (its registers accumulate
    /// them, e.g. a shift register), but holds a beat to offer on only after loading one for
    /// which `done` holds: many beats become one in the stage itself.
    pub fn gather(&mut self, m: &mut ModuleBuilder, stage: &Stage, done: &Expr) {
        if self.policy == Policy::Global {
            m.problem(format!(
                "pipeline `{}`: a global-advance pipeline cannot gather into stage `{}`",
                self.name, self.stages[stage.index].name
            ));
        }
        self.stages[stage.index].gather = Some(done.clone());
    }

    /// A beat offered to `stage` with `skip` does not stop in it: it goes into the next stage
    /// in the cycle it is taken. So that no beat overtakes another, `stage` then takes a beat
    /// (of either kind) only when it is empty and the next stage is free.
    pub fn bypass(&mut self, m: &mut ModuleBuilder, stage: &Stage, skip: &Expr) {
        let k = stage.index;
        if self.policy == Policy::Global {
            m.problem(format!(
                "pipeline `{}`: a global-advance pipeline cannot bypass stage `{}`",
                self.name, self.stages[k].name
            ));
        }
        self.stages[k].bypass = Some(skip.clone());
    }

    /// `stage` takes a new beat only when it is empty, not in the cycle its beat leaves: the
    /// consumer's `ready` stops at this stage (a shorter path for one bubble per beat).
    pub fn cut(&mut self, stage: &Stage) {
        self.stages[stage.index].cut = true;
    }

    /// `<stage>_adv`: the stage's beat leaves it this cycle (moves on, or ends in a
    /// [`Pipeline::filter`] stage).
    pub fn leaves(&mut self, m: &mut ModuleBuilder, stage: &Stage) -> Expr {
        let s = &mut self.stages[stage.index];
        if let Some(a) = &self.adv {
            return &s.valid.q() & &a.expr();
        }
        match &s.leaves {
            Some(n) => n.expr(),
            None => {
                let n = m.wire_decl(&format!("{}_adv", s.name), 1);
                s.leaves = Some(n.clone());
                n.expr()
            }
        }
    }

    fn set_flow(&mut self, m: &mut ModuleBuilder, stage: &Stage, flow: Flow) {
        if self.policy == Policy::Global {
            m.problem(format!(
                "pipeline `{}`: a global-advance pipeline cannot hold, repeat or filter \
                 stage `{}`",
                self.name, self.stages[stage.index].name
            ));
        }
        self.stages[stage.index].flow = flow;
    }

    /// Writes the control for a consumer `ready` and returns the pipeline's ends
    /// ([`Policy::Skid`]: use [`Pipeline::finish_skid`]).
    pub fn finish(self, m: &mut ModuleBuilder, out_ready: &Expr) -> Ends {
        self.finish_skid(m, out_ready, &[])
    }

    /// [`Pipeline::finish`] with the beat's data: for [`Policy::Skid`] the data go through
    /// the skid buffer and come back registered in [`Ends::out_data`].
    pub fn finish_skid(self, m: &mut ModuleBuilder, out_ready: &Expr, data: &[Expr]) -> Ends {
        let n = self.stages.len();
        if n == 0 {
            m.problem(format!("pipeline `{}` has no stage", self.name));
            return Ends {
                in_ready: out_ready.clone(),
                out_valid: self.in_valid,
                out_data: data.to_vec(),
            };
        }
        m.comment(format!(
            "Pipeline `{}`: {} stage(s), {}",
            self.name,
            n,
            match self.policy {
                Policy::Global => "one advance for every stage",
                Policy::Bubble => "each stage loads when it is free",
                Policy::Skid => "each stage loads when it is free, skid buffer at the output",
            }
        ));
        let last = &self.stages[n - 1];
        if last.bypass.is_some() {
            m.problem(format!(
                "pipeline `{}`: its last stage `{}` has no next stage to bypass into",
                self.name, last.name
            ));
        }
        let last_out = last.flow.offers(&last.valid.q());
        if let Some(adv) = &self.adv {
            m.drive(adv, &(!last.valid.q() | out_ready.clone()));
            let mut prev = self.in_valid.clone();
            for s in &self.stages {
                m.next(&s.valid, &prev, Some(&adv.expr()));
                prev = s.valid.q();
            }
            return Ends {
                in_ready: adv.expr(),
                out_valid: last.valid.q(),
                out_data: data.to_vec(),
            };
        }
        let (ready_n, skid) = if self.policy == Policy::Skid {
            let skid_name = format!("{}_skid", self.name);
            // Without data the buffer carries the valid bit (marked unused below).
            let payload = if data.is_empty() {
                last_out.clone()
            } else {
                Expr::cat_lsb(data)
            };
            let k = blocks::skid_buffer(m, &skid_name, &last_out, &payload, out_ready);
            (k.ready.clone(), Some(k))
        } else {
            (out_ready.clone(), None)
        };
        // Free from the consumer back: empty, or its beat leaves (by the stage's flow).
        let mut free = vec![Expr::zero(1); n];
        let mut next_free_of = vec![Expr::zero(1); n];
        let mut conds = Vec::new();
        let mut next_free = ready_n;
        for k in (0..n).rev() {
            let s = &self.stages[k];
            let cond = s.flow.leaves(&next_free);
            if let Some(l) = &s.leaves {
                m.drive(l, &(&s.valid.q() & &cond));
            }
            let net = s
                .free
                .as_ref()
                .expect("stages of a bubble pipeline have a free net");
            match &s.leaves {
                _ if s.bypass.is_some() => m.drive(net, &(!s.valid.q() & next_free.clone())),
                _ if s.cut => m.drive(net, &!s.valid.q()),
                Some(l) => m.drive(net, &(!s.valid.q() | l.expr())),
                None => m.drive(net, &(!s.valid.q() | cond.clone())),
            }
            conds.push(cond);
            next_free_of[k] = next_free.clone();
            free[k] = net.expr();
            next_free = free[k].clone();
        }
        let mut offered = self.in_valid.clone();
        conds.reverse();
        for (k, s) in self.stages.iter().enumerate() {
            // A bypassed beat is taken (`free`) but not loaded; it is offered to the next stage.
            let (stops, passes) = match &s.bypass {
                Some(c) => (&offered & &!c.clone(), &(&offered & &free[k]) & c),
                None => (offered.clone(), Expr::zero(1)),
            };
            m.drive(&s.load, &(&free[k] & &stops));
            for (valid, load) in &s.copies {
                // The same function as `free[k]`, from this copy of the valid register.
                let v = valid.q();
                let free_c = if s.bypass.is_some() {
                    !v & next_free_of[k].clone()
                } else if s.cut {
                    !v
                } else {
                    !v | conds[k].clone()
                };
                m.drive(load, &(&free_c & &stops));
            }
            // A gathering stage becomes full only with the beat that completes its group.
            let completes = |e: Expr| match &s.gather {
                Some(done) => &e & done,
                None => e,
            };
            let next_valid = if s.cut || s.bypass.is_some() {
                // Full only when empty: loads, or keeps a beat that does not leave.
                let stays = &s.valid.q() & &!conds[k].clone();
                &completes(s.load.expr()) | &stays
            } else {
                let fills = completes(offered.clone());
                free[k].select(&fills, &Expr::ones(1))
            };
            m.next(&s.valid, &next_valid, None);
            for (valid, _) in &s.copies {
                m.next(valid, &next_valid, None);
            }
            offered = s.flow.offers(&s.valid.q());
            if s.bypass.is_some() {
                offered = &offered | &passes;
            }
        }
        match skid {
            Some(k) => {
                let mut out_data = Vec::new();
                let mut lo = 0;
                for d in data {
                    out_data.push(k.data.slice(lo, d.width()));
                    lo += d.width();
                }
                if data.is_empty() {
                    m.unused(&k.data);
                }
                Ends {
                    in_ready: free[0].clone(),
                    out_valid: k.valid,
                    out_data,
                }
            }
            None => Ends {
                in_ready: free[0].clone(),
                out_valid: last_out,
                out_data: data.to_vec(),
            },
        }
    }

    /// Finishes the pipeline between an input stream and an output port: the stream is
    /// accepted with the first stage's `ready`, and the port offers the last stage's
    /// `fields` ([`Policy::Skid`]: through the skid buffer).
    pub fn finish_ports(
        self,
        m: &mut ModuleBuilder,
        input: Stream,
        out: OutPort,
        fields: &[(&str, Expr)],
    ) {
        let data: Vec<Expr> = fields.iter().map(|(_, e)| e.clone()).collect();
        let ends = self.finish_skid(m, &out.ready(), &data);
        input.accept(m, &ends.in_ready);
        let named: Vec<(&str, Expr)> = fields
            .iter()
            .zip(ends.out_data)
            .map(|((n, _), e)| (*n, e))
            .collect();
        out.drive(m, &ends.out_valid, &named);
    }
}
