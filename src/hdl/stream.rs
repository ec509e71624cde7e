//! Typed valid/ready streams and the blocks that take and return them.
//!
//! A [`Stream`] is the producer side of a valid/ready channel inside one module: `valid`, a
//! payload packed by a [`Layout`] of named fields, and a `ready` net that its single consumer
//! drives with [`Stream::accept`]. Blocks consume streams and return new ones, so a datapath
//! reads as a chain (`input -> skid -> fifo -> output`) and no generator rebuilds a
//! handshake by hand. The transfer rule is the usual one (AXI-Stream, Chisel `Decoupled`): a
//! beat moves in a cycle where `valid & ready`; a producer holds `valid` and the payload
//! until then; `valid` never waits for `ready`.
//!
//! Ports follow the hwzip convention `<prefix>_valid_i`, `<prefix>_<field>_i`,
//! `<prefix>_ready_o` for a stream into the module (`_o`/`_i` swapped for one out of it).
//! [`input`] and [`output`] also record a [`StreamPorts`] in the module, which the
//! co-simulation drivers and monitors read instead of repeating port names.
//!
//! Blocks: [`reg_slice`] (forward register), [`skid`] (all outputs registered, full rate),
//! [`fifo`], [`fork_lazy`], [`fork_eager`], [`join`] (in order, all inputs at once),
//! [`arbiter_rr`] (round-robin, grant held while the output stalls), [`demux`] and
//! [`Stream::map`] (a combinational payload change).

use super::blocks::{self, all_of, first_set, onehot_index};
use super::expr::Expr;
pub use super::layout::{Field, Layout};
pub use super::module::StreamPorts;
use super::module::{clog2, Dir, Module, ModuleBuilder, Net};
use std::panic::Location;
use std::sync::Arc;

/// The producer side of a valid/ready channel (see the module documentation).
#[must_use = "a stream must be consumed (`accept`, a block, or `output`)"]
#[derive(Debug)]
pub struct Stream {
    /// Beat present.
    pub valid: Expr,
    /// Packed payload (a signal or a concatenation of signals).
    pub payload: Expr,
    /// Its layout.
    pub layout: Arc<Layout>,
    ready: Net,
}

impl Stream {
    /// A stream from `valid` and `payload`; its `ready` is a new wire `<name>_ready`.
    #[track_caller]
    pub fn new(
        m: &mut ModuleBuilder,
        name: &str,
        valid: &Expr,
        payload: &Expr,
        layout: &Arc<Layout>,
    ) -> Stream {
        let ready = m.wire_decl(&format!("{}_ready", name), 1);
        Stream::from_parts(m, valid, payload, layout, ready, Location::caller())
    }

    fn from_parts(
        m: &mut ModuleBuilder,
        valid: &Expr,
        payload: &Expr,
        layout: &Arc<Layout>,
        ready: Net,
        loc: &Location<'_>,
    ) -> Stream {
        if valid.width() != 1 {
            m.problem(format!(
                "stream valid `{}` is {} bits (at {})",
                valid.brief(),
                valid.width(),
                loc
            ));
        }
        if payload.width() != layout.width() {
            m.problem(format!(
                "stream payload `{}` is {} bits, layout {} is {} (at {})",
                payload.brief(),
                payload.width(),
                layout.describe(),
                layout.width(),
                loc
            ));
        }
        Stream {
            valid: valid.clone(),
            payload: payload.clone(),
            layout: layout.clone(),
            ready,
        }
    }

    /// The consumer's `ready` (usable by the producer before the consumer drives it).
    pub fn ready(&self) -> Expr {
        self.ready.expr()
    }

    /// `valid & ready`: a beat moves this cycle.
    pub fn fire(&self) -> Expr {
        &self.valid & &self.ready.expr()
    }

    /// Payload field `name`.
    #[track_caller]
    pub fn field(&self, name: &str) -> Expr {
        self.layout.get(&self.payload, name)
    }

    /// Consumes the stream: drives its `ready` with `ready`.
    pub fn accept(self, m: &mut ModuleBuilder, ready: &Expr) {
        m.drive(&self.ready, ready);
    }

    /// The same beats with a new payload (computed from this stream's fields before the
    /// call), named by a wire `<name>_payload`.
    #[track_caller]
    pub fn map(
        self,
        m: &mut ModuleBuilder,
        name: &str,
        payload: &Expr,
        layout: &Arc<Layout>,
    ) -> Stream {
        let loc = Location::caller();
        let p = m.wire(&format!("{}_payload", name), payload);
        let ready = m.wire_decl(&format!("{}_ready", name), 1);
        let out = Stream::from_parts(m, &self.valid, &p, layout, ready, loc);
        let r = out.ready();
        self.accept(m, &r);
        out
    }
}

/// A stream into the module through ports `<prefix>_valid_i`, `<prefix>_<field>_i` and
/// `<prefix>_ready_o`.
#[track_caller]
pub fn input(m: &mut ModuleBuilder, prefix: &str, layout: &Arc<Layout>) -> Stream {
    let loc = Location::caller();
    let desc = StreamPorts {
        prefix: prefix.to_string(),
        dir: Dir::In,
        layout: layout.clone(),
    };
    let valid = m.input(&desc.valid(), 1);
    let mut parts: Vec<Expr> = layout
        .fields()
        .iter()
        .map(|f| m.input(&desc.field(&f.name), f.width))
        .collect();
    parts.reverse();
    let payload = Expr::cat(&parts);
    let ready = m.output(&desc.ready(), 1);
    m.add_stream(desc);
    Stream::from_parts(m, &valid, &payload, layout, ready, loc)
}

/// Drives ports `<prefix>_valid_o`, `<prefix>_<field>_o` from `s` and takes its `ready` from
/// `<prefix>_ready_i`.
#[track_caller]
pub fn output(m: &mut ModuleBuilder, prefix: &str, s: Stream) {
    let port = output_port(m, prefix);
    let ready = port.ready();
    let fields: Vec<(&str, Expr)> = s
        .layout
        .fields()
        .iter()
        .map(|f| (f.name.as_str(), s.field(&f.name)))
        .collect();
    port.drive(m, &s.valid, &fields);
    drop(fields);
    s.accept(m, &ready);
}

/// An output stream whose `ready` port exists before its `valid` and fields are known (see
/// [`output_port`]).
#[must_use = "an output port must be driven (`OutPort::drive`)"]
#[derive(Debug)]
pub struct OutPort {
    prefix: String,
    ready: Expr,
}

/// Declares output stream `<prefix>`'s `ready` input (`<prefix>_ready_i`) now, for a
/// generator whose last stage computes `valid` from its own state and needs `ready` earlier;
/// [`OutPort::drive`] adds `<prefix>_valid_o` and the field ports and records the stream.
pub fn output_port(m: &mut ModuleBuilder, prefix: &str) -> OutPort {
    let ready = m.input(&format!("{}_ready_i", prefix), 1);
    OutPort {
        prefix: prefix.to_string(),
        ready,
    }
}

impl OutPort {
    /// `<prefix>_ready_i`.
    pub fn ready(&self) -> Expr {
        self.ready.clone()
    }

    /// Drives `<prefix>_valid_o` with `valid` and one port `<prefix>_<field>_o` per named
    /// field (the layout, in the order given), and records the stream in the module.
    pub fn drive(self, m: &mut ModuleBuilder, valid: &Expr, fields: &[(&str, Expr)]) {
        let widths: Vec<(&str, u32)> = fields.iter().map(|(n, e)| (*n, e.width())).collect();
        let desc = StreamPorts {
            prefix: self.prefix,
            dir: Dir::Out,
            layout: Layout::new(&widths),
        };
        m.output_expr(&desc.valid(), valid);
        for (name, e) in fields {
            m.output_expr(&desc.field(name), e);
        }
        m.add_stream(desc);
    }
}

/// One link of a [`chain`]: a stage's output beat as the next stage takes it.
#[derive(Clone, Debug)]
pub struct Link {
    /// The producer's `valid`.
    pub valid: Expr,
    /// The consumer's `ready`.
    pub ready: Expr,
    /// The producer's payload fields (name, signal).
    pub fields: Vec<(String, Expr)>,
}

/// Output ports showing `link` to the outside (for a formal wrapper, which sees only ports):
/// `<prefix>_fire_o` (the link takes a beat this cycle) and `<prefix>_<field>_o` for each of
/// `fields`. A field the link lacks is an error.
#[track_caller]
pub fn probe(m: &mut ModuleBuilder, prefix: &str, link: &Link, fields: &[&str]) {
    m.output_expr(&format!("{prefix}_fire_o"), &(&link.valid & &link.ready));
    for f in fields {
        match link.fields.iter().find(|(n, _)| n == f) {
            Some((_, e)) => {
                m.output_expr(&format!("{prefix}_{f}_o"), e);
            }
            None => m.problem(format!(
                "probe: the link has no field `{}` (at {})",
                f,
                Location::caller()
            )),
        }
    }
}

/// Instantiates `stages` (instance name, module) in a chain of one-in/one-out units: the
/// top's input stream `s` (the first module's `s` layout) feeds the first module's `s`,
/// each module's `m` feeds the next one's `s`, and the last module's `m` becomes the top's
/// output stream `m`. Fields are matched by name; `renames` maps an output field to the
/// input field it feeds (`("ok", "comp")`); output fields no input takes are marked unused.
/// `<instance>_m_ready` wires carry each link's `ready`. Returns the links between stages.
#[track_caller]
pub fn chain(
    m: &mut ModuleBuilder,
    stages: &[(&str, &Arc<Module>)],
    renames: &[(&str, &str)],
) -> Vec<Link> {
    let loc = Location::caller();
    let find = |md: &Module, prefix: &str, dir: Dir| -> Option<StreamPorts> {
        md.streams
            .iter()
            .find(|s| s.prefix == prefix && s.dir == dir)
            .cloned()
    };
    let Some((_, first)) = stages.first() else {
        m.problem(format!("stream chain without stages (at {})", loc));
        return Vec::new();
    };
    let Some(s_desc) = find(first, "s", Dir::In) else {
        m.problem(format!(
            "chain: `{}` has no input stream `s` (at {})",
            first.name, loc
        ));
        return Vec::new();
    };
    let s_in = input(m, "s", &s_desc.layout);
    let out = output_port(m, "m");
    let mut valid = s_in.valid.clone();
    let mut fields: Vec<(String, Expr)> = s_desc
        .layout
        .fields()
        .iter()
        .map(|f| (f.name.clone(), s_in.field(&f.name)))
        .collect();
    let mut prev_ready: Option<Net> = None;
    let mut links = Vec::new();
    let mut s_in = Some(s_in);
    for (i, (name, md)) in stages.iter().enumerate() {
        let (Some(si), Some(mo)) = (find(md, "s", Dir::In), find(md, "m", Dir::Out)) else {
            m.problem(format!(
                "chain: `{}` needs streams `s` in and `m` out (at {})",
                md.name, loc
            ));
            return Vec::new();
        };
        let ready = if i + 1 == stages.len() {
            None
        } else {
            Some(m.wire_decl(&format!("{}_m_ready", name), 1))
        };
        let mut conn: Vec<(String, Expr)> = vec![(si.valid(), valid.clone())];
        let mut taken = vec![false; fields.len()];
        for f in si.layout.fields() {
            let src = fields.iter().position(|(n, _)| {
                let to = renames
                    .iter()
                    .find(|(from, _)| from == n)
                    .map_or(n.as_str(), |(_, to)| *to);
                to == f.name
            });
            match src {
                Some(k) => {
                    taken[k] = true;
                    conn.push((si.field(&f.name), fields[k].1.clone()));
                }
                None => m.problem(format!(
                    "chain: nothing feeds field `{}` of `{}` (at {})",
                    f.name, md.name, loc
                )),
            }
        }
        let unused: Vec<Expr> = fields
            .iter()
            .zip(&taken)
            .filter(|(_, t)| !**t)
            .map(|((_, e), _)| e.clone())
            .collect();
        if !unused.is_empty() {
            m.unused(&Expr::cat(&unused));
        }
        let r = ready.as_ref().map_or_else(|| out.ready(), |n| n.expr());
        conn.push((mo.ready(), r));
        let refs: Vec<(&str, Expr)> = conn.iter().map(|(p, e)| (p.as_str(), e.clone())).collect();
        let inst = m.instance(md, name, &refs);
        let s_ready = inst.out(&si.ready());
        match (prev_ready.take(), s_in.take()) {
            (Some(n), _) => m.drive(&n, &s_ready),
            (None, Some(s)) => s.accept(m, &s_ready),
            (None, None) => {}
        }
        prev_ready = ready;
        valid = inst.out(&mo.valid());
        fields = mo
            .layout
            .fields()
            .iter()
            .map(|f| (f.name.clone(), inst.out(&mo.field(&f.name))))
            .collect();
        if let Some(r) = &prev_ready {
            links.push(Link {
                valid: valid.clone(),
                ready: r.expr(),
                fields: fields.clone(),
            });
        }
    }
    let named: Vec<(&str, Expr)> = fields
        .iter()
        .map(|(n, e)| (n.as_str(), e.clone()))
        .collect();
    out.drive(m, &valid, &named);
    links
}

/// Forward register slice: `valid` and payload registered (`<name>_valid_q`,
/// `<name>_data_q`), `ready` passes through combinationally; one beat per cycle.
#[track_caller]
pub fn reg_slice(m: &mut ModuleBuilder, name: &str, s: Stream) -> Stream {
    let valid = m.reg(&format!("{}_valid_q", name), 1, Some(0));
    let out_ready = m.wire_decl(&format!("{}_out_ready", name), 1);
    let in_ready = m.wire(
        &format!("{}_in_ready", name),
        &(!valid.q() | out_ready.expr()),
    );
    let load = m.wire(&format!("{}_load", name), &(&s.valid & &in_ready));
    let data = m.reg_next(&format!("{}_data_q", name), None, &s.payload, Some(&load));
    m.next(&valid, &(&load | &(valid.q() & !out_ready.expr())), None);
    let layout = s.layout.clone();
    s.accept(m, &in_ready);
    Stream::from_parts(m, &valid.q(), &data, &layout, out_ready, Location::caller())
}

/// Skid buffer ([`blocks::skid_buffer`]): every output registered, `ready` towards the
/// source from a register, full rate.
#[track_caller]
pub fn skid(m: &mut ModuleBuilder, name: &str, s: Stream) -> Stream {
    let out_ready = m.wire_decl(&format!("{}_out_ready", name), 1);
    let k = blocks::skid_buffer(m, name, &s.valid, &s.payload, &out_ready.expr());
    let layout = s.layout.clone();
    s.accept(m, &k.ready);
    Stream::from_parts(m, &k.valid, &k.data, &layout, out_ready, Location::caller())
}

/// Ready cut ([`blocks::skid_bypass`]): `ready` towards the source from a register, valid
/// and data passed through (a parked beat first), no added latency, full rate.
#[track_caller]
pub fn skid_bypass(m: &mut ModuleBuilder, name: &str, s: Stream) -> Stream {
    let out_ready = m.wire_decl(&format!("{}_out_ready", name), 1);
    let k = blocks::skid_bypass(m, name, &s.valid, &s.payload, &out_ready.expr());
    let layout = s.layout.clone();
    s.accept(m, &k.ready);
    Stream::from_parts(m, &k.valid, &k.data, &layout, out_ready, Location::caller())
}

/// FIFO of `depth` entries ([`blocks::fifo`]; pointers decoded, no combinational path from
/// input to output).
#[track_caller]
pub fn fifo(m: &mut ModuleBuilder, name: &str, depth: u32, s: Stream) -> Stream {
    let out_ready = m.wire_decl(&format!("{}_out_ready", name), 1);
    let f = blocks::fifo(m, name, depth, &s.valid, &s.payload, &out_ready.expr());
    let layout = s.layout.clone();
    s.accept(m, &f.ready);
    Stream::from_parts(m, &f.valid, &f.data, &layout, out_ready, Location::caller())
}

/// Lazy fork into `n` copies: a beat is offered to every output only while all of them are
/// ready, and leaves every output in the same cycle (no state). The `valid` of each output
/// depends on the other outputs' `ready`, so an output may withdraw a beat it offered: use
/// it only towards consumers that do not rely on the hold rule, else [`fork_eager`].
#[track_caller]
pub fn fork_lazy(m: &mut ModuleBuilder, name: &str, s: Stream, n: usize) -> Vec<Stream> {
    let readies: Vec<Net> = (0..n)
        .map(|i| m.wire_decl(&format!("{}{}_ready", name, i), 1))
        .collect();
    let r: Vec<Expr> = readies.iter().map(|x| x.expr()).collect();
    let mut outs = Vec::with_capacity(n);
    for (i, ready) in readies.into_iter().enumerate() {
        let others: Vec<Expr> = (0..n).filter(|&j| j != i).map(|j| r[j].clone()).collect();
        let v = m.wire(
            &format!("{}{}_valid", name, i),
            &(&s.valid & &all_of(&others)),
        );
        outs.push(Stream::from_parts(
            m,
            &v,
            &s.payload,
            &s.layout,
            ready,
            Location::caller(),
        ));
    }
    let all = m.wire(&format!("{}_all_ready", name), &all_of(&r));
    s.accept(m, &all);
    outs
}

/// Eager fork into `n` copies: each output takes the beat as soon as it is ready; a
/// `<name><i>_done_q` register remembers which outputs already have it, and the input is
/// released when all have.
#[track_caller]
pub fn fork_eager(m: &mut ModuleBuilder, name: &str, s: Stream, n: usize) -> Vec<Stream> {
    let readies: Vec<Net> = (0..n)
        .map(|i| m.wire_decl(&format!("{}{}_ready", name, i), 1))
        .collect();
    let done: Vec<_> = (0..n)
        .map(|i| m.reg(&format!("{}{}_done_q", name, i), 1, Some(0)))
        .collect();
    let covered: Vec<Expr> = (0..n).map(|i| done[i].q() | readies[i].expr()).collect();
    let all = m.wire(&format!("{}_all_done", name), &all_of(&covered));
    let mut outs = Vec::with_capacity(n);
    for (i, ready) in readies.into_iter().enumerate() {
        let v = m.wire(&format!("{}{}_valid", name, i), &(&s.valid & &!done[i].q()));
        let took = &v & &ready.expr();
        m.next(
            &done[i],
            &all.select(&Expr::zero(1), &(done[i].q() | took)),
            Some(&s.valid),
        );
        outs.push(Stream::from_parts(
            m,
            &v,
            &s.payload,
            &s.layout,
            ready,
            Location::caller(),
        ));
    }
    s.accept(m, &all);
    outs
}

/// In-order join: one output beat takes one beat of every input at once; the output payload
/// has one field per input (named as given, holding that input's whole payload).
#[track_caller]
pub fn join(m: &mut ModuleBuilder, name: &str, inputs: Vec<(&str, Stream)>) -> Stream {
    let fields: Vec<(&str, u32)> = inputs.iter().map(|(n, s)| (*n, s.layout.width())).collect();
    let layout = Layout::new(&fields);
    let out_ready = m.wire_decl(&format!("{}_out_ready", name), 1);
    let valids: Vec<Expr> = inputs.iter().map(|(_, s)| s.valid.clone()).collect();
    let valid = m.wire(&format!("{}_valid", name), &all_of(&valids));
    let payload = layout.pack(
        &inputs
            .iter()
            .map(|(n, s)| (*n, s.payload.clone()))
            .collect::<Vec<_>>(),
    );
    for (i, (_, s)) in inputs.into_iter().enumerate() {
        let others: Vec<Expr> = valids
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, v)| v.clone())
            .collect();
        let r = m.wire(
            &format!("{}{}_take", name, i),
            &(&out_ready.expr() & &all_of(&others)),
        );
        s.accept(m, &r);
    }
    Stream::from_parts(m, &valid, &payload, &layout, out_ready, Location::caller())
}

/// Round-robin arbiter over inputs of one layout. The output layout adds a field `src` (the
/// granted input's index) above the input's fields. The input after the last granted one
/// has priority; while the output is valid and not ready the grant is held
/// (`<name>_hold_q`, `<name>_held_q`), so the output payload stays stable.
#[track_caller]
pub fn arbiter_rr(m: &mut ModuleBuilder, name: &str, inputs: Vec<Stream>) -> Stream {
    let n = inputs.len().max(1);
    let iw = clog2(n as u64).max(1);
    let layout_in = inputs
        .first()
        .map(|s| s.layout.clone())
        .unwrap_or_else(|| Layout::data(1));
    for s in &inputs {
        if s.layout != layout_in {
            m.problem(format!(
                "arbiter `{}`: input layouts differ ({} vs {})",
                name,
                s.layout.describe(),
                layout_in.describe()
            ));
        }
    }
    let layout = layout_in.with("src", iw);
    let out_ready = m.wire_decl(&format!("{}_out_ready", name), 1);
    let last = m.reg(&format!("{}_last_q", name), iw, Some((n - 1) as u64));
    let hold = m.reg(&format!("{}_hold_q", name), 1, Some(0));
    let held = m.reg(&format!("{}_held_q", name), n as u32, Some(0));
    let req: Vec<Expr> = inputs.iter().map(|s| s.valid.clone()).collect();
    let req = m.wire(&format!("{}_req", name), &Expr::cat_lsb(&req));
    // Requests above the last grant first, then from input 0 (input 0 is never above).
    let above: Vec<Expr> = (0..n)
        .map(|k| match k {
            0 => Expr::zero(1),
            _ => last.q().lt(&Expr::lit(iw, k as u64)),
        })
        .collect();
    let hi = m.wire(
        &format!("{}_req_hi", name),
        &(&req & &Expr::cat_lsb(&above)),
    );
    let first_of = |v: &Expr| -> Expr {
        let bits: Vec<Expr> = (0..n as u32).map(|k| v.bit(k)).collect();
        Expr::cat_lsb(&first_set(&bits))
    };
    let rr = m.wire(
        &format!("{}_rr_grant", name),
        &hi.any().select(&first_of(&hi), &first_of(&req)),
    );
    let grant = m.wire(&format!("{}_grant", name), &hold.q().select(&held.q(), &rr));
    let valid = m.wire(&format!("{}_valid", name), &(&grant & &req).any());
    let grants: Vec<Expr> = (0..n as u32).map(|k| grant.bit(k)).collect();
    let mut data = Expr::zero(layout_in.width());
    for (g, s) in grants.iter().zip(&inputs) {
        data = data | g.gate(&s.payload);
    }
    let src = m.wire(&format!("{}_src", name), &onehot_index(&grants, iw));
    let data = m.wire(&format!("{}_data", name), &data);
    let payload = Expr::cat(&[src.clone(), data]);
    let fire = &valid & &out_ready.expr();
    m.next(&hold, &(&valid & &!&out_ready.expr()), None);
    m.next(&held, &grant, None);
    m.next(&last, &src, Some(&fire));
    for (k, s) in inputs.into_iter().enumerate() {
        let r = m.wire(
            &format!("{}{}_grant_ready", name, k),
            &(&grant.bit(k as u32) & &out_ready.expr()),
        );
        s.accept(m, &r);
    }
    Stream::from_parts(m, &valid, &payload, &layout, out_ready, Location::caller())
}

/// Routes each beat to output `sel` (`sel` must be stable while the beat waits, e.g. a
/// payload field); `n` outputs.
#[track_caller]
pub fn demux(m: &mut ModuleBuilder, name: &str, s: Stream, sel: &Expr, n: usize) -> Vec<Stream> {
    let loc = Location::caller();
    let sw = clog2(n as u64).max(1);
    if sel.width() != sw {
        m.problem(format!(
            "demux `{}`: select `{}` is {} bits, {} outputs need {} (at {})",
            name,
            sel.brief(),
            sel.width(),
            n,
            sw,
            loc
        ));
    }
    let mut outs = Vec::with_capacity(n);
    let mut ready = Expr::zero(1);
    for k in 0..n {
        let hit = m.wire(&format!("{}{}_sel", name, k), &sel.eq_lit(k as u64));
        let v = m.wire(&format!("{}{}_valid", name, k), &(&s.valid & &hit));
        let r = m.wire_decl(&format!("{}{}_ready", name, k), 1);
        ready = ready | (&hit & &r.expr());
        outs.push(Stream::from_parts(m, &v, &s.payload, &s.layout, r, loc));
    }
    let ready = m.wire(&format!("{}_in_ready", name), &ready);
    s.accept(m, &ready);
    outs
}
