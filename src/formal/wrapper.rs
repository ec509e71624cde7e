//! The formal wrapper: a Verilog module around a unit that leaves its inputs free for the
//! solver, constrains them with the stream contract of the input side (assumptions) and
//! checks one property on the output side (assertions).
//!
//! The wrapper is read by Yosys with `read_verilog -formal` only; it is not part of the
//! generated RTL. Every check is an immediate `assume`/`assert` in a combinational block over
//! the current values and registers holding the previous cycle's values, so one solver step
//! is one clock cycle and the checks read like the cosim harness's rules:
//!
//! - cycle 0 is in reset (`rst_ni` low); a register with an initial value marks it;
//! - an input stream offers nothing while `rst_ni` is low, and a beat offered and not taken
//!   stays offered with the same payload (what the harness's drivers do);
//! - registers of the unit without a reset start at any value (the solver picks them).

use super::{Code, ErrorFlag, PerTransfer, Property, RoundTrip, SumCell, SumNet};
use crate::hdl::{Dir, Module, StreamPorts};
use std::fmt::Write;

/// A generated wrapper: its module name and Verilog text.
#[derive(Clone, Debug)]
pub struct Wrapper {
    /// Module name (the Yosys top).
    pub name: String,
    /// Verilog source.
    pub text: String,
    /// What the wrapper's `cover` statement reaches, if it has one: the state in which the
    /// property is first checked in earnest (a stalled beat, two whole lines back), which the
    /// prover reaches first so that the BMC depth covers it.
    pub cover: Option<String>,
}

/// A port of a stream field and its width.
type Field = (String, u32);

/// `[w-1:0] ` for a bus, nothing for one bit.
fn range(w: u32) -> String {
    if w > 1 {
        format!("[{}:0] ", w - 1)
    } else {
        String::new()
    }
}

/// The payload port names of a stream, lowest field first.
fn payload(s: &StreamPorts) -> Vec<(String, u32)> {
    s.layout
        .fields()
        .iter()
        .map(|f| (s.field(&f.name), f.width))
        .collect()
}

/// `{a, b, c}` over `names` (highest first), wrapped at 100 columns with `indent`.
fn concat(names: &[(String, u32)], indent: usize) -> String {
    if names.len() == 1 {
        return names[0].0.clone();
    }
    let mut out = String::from("{");
    let mut col = indent + 1;
    for (i, (n, _)) in names.iter().rev().enumerate() {
        let piece = if i + 1 < names.len() {
            format!("{n}, ")
        } else {
            format!("{n}}}")
        };
        if col + piece.len() > 96 {
            out.push('\n');
            out.push_str(&" ".repeat(indent + 1));
            col = indent + 1;
        }
        col += piece.len();
        out.push_str(&piece);
    }
    out.trim_end().to_string()
}

/// The wrapper's text so far: ports, the unit instance and the reset bookkeeping.
struct Text {
    head: String,
    regs: String,
    seq: String,
    comb: String,
    extra_inputs: Vec<(String, u32)>,
    cover: Option<(String, String)>,
}

impl Text {
    fn new() -> Text {
        Text {
            head: String::new(),
            regs: String::new(),
            seq: String::new(),
            comb: String::new(),
            extra_inputs: Vec::new(),
            cover: None,
        }
    }

    /// A register `name` of `w` bits loaded each cycle with `value`, starting at `init`.
    fn past(&mut self, name: &str, w: u32, value: &str, init: &str) {
        let _ = writeln!(self.regs, "  reg  {}{} = {};", range(w), name, init);
        let _ = writeln!(self.seq, "    {} <= {};", name, value);
    }

    fn assume(&mut self, cond: &str, expr: &str, why: &str) {
        check(&mut self.comb, "assume", cond, expr, why);
    }

    fn assert(&mut self, cond: &str, expr: &str, why: &str) {
        check(&mut self.comb, "assert", cond, expr, why);
    }
}

/// `if (cond) kind (expr);` (`kind (expr);` for an empty `cond`) under the comment `why`, the
/// expression on its own line when the statement would pass 100 columns.
fn check(out: &mut String, kind: &str, cond: &str, expr: &str, why: &str) {
    let _ = writeln!(out, "    // {why}");
    let one = if cond.is_empty() {
        format!("    {kind} ({expr});")
    } else {
        format!("    if ({cond}) {kind} ({expr});")
    };
    if one.len() <= 100 && !one.contains('\n') {
        let _ = writeln!(out, "{one}");
    } else if cond.is_empty() {
        let _ = writeln!(out, "    {kind} (\n      {expr});");
    } else {
        let _ = writeln!(out, "    if ({cond})\n      {kind} ({expr});");
    }
}

/// Adds the assumptions of every input stream of `m` (reset, hold) to `t`.
fn input_rules(t: &mut Text, m: &Module) {
    for s in m.streams.iter().filter(|s| s.dir == Dir::In) {
        let p = &s.prefix;
        let v = s.valid();
        let r = s.ready();
        let pay = payload(s);
        let pw: u32 = pay.iter().map(|x| x.1).sum();
        t.past(
            &format!("f_{p}_held_q"),
            1,
            &format!("rst_ni & {v} & ~{r}"),
            "1'b0",
        );
        t.assume(
            "!rst_ni",
            &format!("!{v}"),
            &format!("`{p}`: nothing offered in reset"),
        );
        if pw > 0 {
            t.past(
                &format!("f_{p}_pay_q"),
                pw,
                &concat(&pay, 4 + p.len() + 12),
                &format!("{pw}'d0"),
            );
            t.assume(
                &format!("rst_ni & f_{p}_held_q"),
                &format!("{v} & ({} == f_{p}_pay_q)", concat(&pay, 20)),
                &format!("`{p}`: a beat not taken stays offered, unchanged"),
            );
        } else {
            t.assume(
                &format!("rst_ni & f_{p}_held_q"),
                &v,
                &format!("`{p}`: a beat not taken stays offered"),
            );
        }
    }
}

/// Adds the output-side assertions of `prop` (a stream-contract property) to `t`.
fn output_rules(t: &mut Text, m: &Module, prop: Property) {
    for s in m.streams.iter().filter(|s| s.dir == Dir::Out) {
        let p = &s.prefix;
        let v = s.valid();
        let r = s.ready();
        match prop {
            Property::Reset => t.assert(
                "f_was_reset_q",
                &format!("!{v}"),
                &format!("`{p}`: nothing offered in the cycle after a reset cycle"),
            ),
            Property::Hold => {
                let pay = payload(s);
                let pw: u32 = pay.iter().map(|x| x.1).sum();
                t.past(
                    &format!("f_{p}_stall_q"),
                    1,
                    &format!("rst_ni & {v} & ~{r}"),
                    "1'b0",
                );
                let expr = if pw > 0 {
                    t.past(
                        &format!("f_{p}_out_q"),
                        pw,
                        &concat(&pay, 4 + p.len() + 11),
                        &format!("{pw}'d0"),
                    );
                    format!("{v} & ({} == f_{p}_out_q)", concat(&pay, 20))
                } else {
                    v.clone()
                };
                if t.cover.is_none() {
                    t.cover = Some((
                        format!("rst_ni & f_{p}_stall_q"),
                        format!("a beat of `{p}` held through a stall"),
                    ));
                }
                t.assert(
                    &format!("rst_ni & f_{p}_stall_q"),
                    &expr,
                    &format!("`{p}`: a beat offered and not taken stays offered, unchanged"),
                );
            }
            _ => {}
        }
    }
}

/// The wrapper's first comment line (two when a long name would pass 100 columns).
fn title(name: &str) -> String {
    let line = format!("// {name} -- formal wrapper generated by hwzip (`hwzip prove`).\n");
    if line.len() <= 101 {
        line
    } else {
        format!("// {name}\n// Formal wrapper generated by hwzip (`hwzip prove`).\n")
    }
}

/// Assembles the wrapper `name` around `m` from `t`.
fn finish(name: &str, m: &Module, what: &str, t: Text) -> Wrapper {
    let mut v = title(name);
    let _ = writeln!(v, "// Unit: {}.", m.name);
    let _ = writeln!(v, "// Property: {what}.");
    let _ = writeln!(
        v,
        "// Read with `read_verilog -formal`; see docs/FORMAL.md."
    );
    let _ = writeln!(v, "`default_nettype none");
    let mut ports = vec![
        "  input  wire clk_i".to_string(),
        "  input  wire rst_ni".to_string(),
    ];
    let dut_ports = m.ports();
    for p in dut_ports.iter().filter(|p| p.dir == Dir::In) {
        if p.name != "clk_i" && p.name != "rst_ni" {
            ports.push(format!("  input  wire {}{}", range(p.width), p.name));
        }
    }
    for (n, w) in &t.extra_inputs {
        ports.push(format!("  input  wire {}{}", range(*w), n));
    }
    let _ = writeln!(v, "module {name} (\n{}\n);", ports.join(",\n"));
    for p in dut_ports.iter().filter(|p| p.dir == Dir::Out) {
        let _ = writeln!(v, "  wire {}{};", range(p.width), p.name);
    }
    v.push_str("  reg  f_init_q = 1'b1;  // cycle 0\n");
    v.push_str("  reg  f_was_reset_q = 1'b0;  // the previous cycle was a reset cycle\n");
    v.push_str(&t.regs);
    v.push_str(&t.head);
    let conns: Vec<String> = dut_ports
        .iter()
        .map(|p| format!("    .{}({})", p.name, p.name))
        .collect();
    let _ = writeln!(v, "  {} dut (\n{}\n  );", m.name, conns.join(",\n"));
    v.push_str("  always @(posedge clk_i) begin\n    f_init_q <= 1'b0;\n");
    v.push_str("    f_was_reset_q <= !rst_ni;\n");
    v.push_str(&t.seq);
    v.push_str("  end\n  always @* begin\n");
    v.push_str("    // cycle 0 is a reset cycle\n    if (f_init_q) assume (!rst_ni);\n");
    v.push_str(&t.comb);
    if let Some((expr, why)) = &t.cover {
        let _ = writeln!(v, "    // reached first: {why}\n    cover ({expr});");
    }
    v.push_str("  end\nendmodule\n`default_nettype wire\n");
    Wrapper {
        name: name.to_string(),
        text: v,
        cover: t.cover.map(|(_, why)| why),
    }
}

/// The wrapper checking stream-contract property `prop` ([`Property::Hold`] or
/// [`Property::Reset`]) on every output stream of `m`.
pub fn contract(m: &Module, prop: Property) -> Wrapper {
    let mut t = Text::new();
    input_rules(&mut t, m);
    output_rules(&mut t, m, prop);
    finish(&format!("{}_f_{}", m.name, prop.tag()), m, prop.title(), t)
}

/// The stream of `m` in direction `dir` named `prefix`.
fn find_stream<'a>(m: &'a Module, dir: Dir, prefix: &str) -> Result<&'a StreamPorts, String> {
    m.streams
        .iter()
        .find(|s| s.dir == dir && s.prefix == prefix)
        .ok_or_else(|| format!("{} has no {:?} stream `{}`", m.name, dir, prefix))
}

/// Field `f` of stream `s` of `m`: (port name, width).
fn find_field(m: &Module, s: &StreamPorts, f: &str) -> Result<(String, u32), String> {
    s.layout
        .find(f)
        .map(|x| (s.field(f), x.width))
        .ok_or_else(|| format!("stream `{}` of {} has no field `{}`", s.prefix, m.name, f))
}

/// The handshakes of a tracked pair of streams and the solver's choice: the free input
/// `f_pick_i`, the input side's assumptions, `f_in_fire`, `f_out_fire`, and `f_pick_now`
/// (the choice is made now: `when` holds, `f_pick_i` is high and nothing is chosen yet,
/// `f_picked_q` low).
fn pick_on(t: &mut Text, m: &Module, (si, so): (&StreamPorts, &StreamPorts), when: &str) {
    t.extra_inputs.push(("f_pick_i".into(), 1));
    input_rules(t, m);
    let (iv, ir, ov, or) = (si.valid(), si.ready(), so.valid(), so.ready());
    let _ = writeln!(t.head, "  wire f_in_fire = rst_ni & {iv} & {ir};");
    let _ = writeln!(t.head, "  wire f_out_fire = rst_ni & {ov} & {or};");
    let _ = writeln!(
        t.head,
        "  wire f_pick_now = {when} & f_pick_i & ~f_picked_q;"
    );
}

/// The assertions that the error flags `zero` of output stream `so` stay low on every beat.
fn no_errors(t: &mut Text, m: &Module, so: &StreamPorts, zero: &[String]) -> Result<(), String> {
    for z in zero {
        let (n, _) = find_field(m, so, z)?;
        t.assert(
            "f_out_fire",
            &format!("!{n}"),
            "no error on a line the unit made",
        );
    }
    Ok(())
}

/// The tracking of one input beat, chosen by the solver (free input `f_pick_i`) among the
/// beats `si` takes, to the output beat of the same index on `so`: beat counters
/// `f_in_n_q`/`f_out_n_q` of `cw` bits, `f_pick_now` (the chosen beat is taken now),
/// `f_picked_q`, its index `f_pick_n_q`, `f_done_q` (its output beat has left), and its
/// input fields `ins` (lowest first) in `f_pick_pay_q`; the input side's assumptions too.
fn track(
    t: &mut Text,
    m: &Module,
    (si, so): (&StreamPorts, &StreamPorts),
    cw: u32,
    ins: &[(String, u32)],
    out_idx: &str,
) {
    pick_on(t, m, (si, so), "f_in_fire");
    t.past(
        "f_in_n_q",
        cw,
        &format!(
            "!rst_ni ? {cw}'d0 : f_in_n_q + {{{}'d0, f_in_fire}}",
            cw - 1
        ),
        &format!("{cw}'d0"),
    );
    t.past(
        "f_out_n_q",
        cw,
        &format!(
            "!rst_ni ? {cw}'d0 : f_out_n_q + {{{}'d0, f_out_fire}}",
            cw - 1
        ),
        &format!("{cw}'d0"),
    );
    t.past(
        "f_picked_q",
        1,
        "rst_ni & (f_picked_q | f_pick_now)",
        "1'b0",
    );
    t.past(
        "f_done_q",
        1,
        &format!("rst_ni & (f_done_q | (f_out_fire & f_picked_q & (f_out_n_q == {out_idx})))"),
        "1'b0",
    );
    t.past(
        "f_pick_n_q",
        cw,
        "f_pick_now ? f_in_n_q : f_pick_n_q",
        &format!("{cw}'d0"),
    );
    let iw: u32 = ins.iter().map(|x| x.1).sum();
    t.past(
        "f_pick_pay_q",
        iw,
        &format!("f_pick_now ? {} : f_pick_pay_q", concat(ins, 20)),
        &format!("{iw}'d0"),
    );
}

/// The round-trip wrapper of `rt`: one input beat, chosen by the solver (free input
/// `f_pick_i`), is recorded with its index; the output beat of the same index must carry the
/// expected payload, and no output beat comes before its input. With `case` (an index into
/// the split's cases), the tracked line's beat on the split's inner link is assumed to
/// carry that case's value.
pub fn round_trip(rt: &RoundTrip, case: Option<usize>) -> Result<Wrapper, String> {
    let m = &*rt.top;
    let si = find_stream(m, Dir::In, &rt.input)?;
    let so = find_stream(m, Dir::Out, &rt.output)?;
    let field = |s: &StreamPorts, f: &str| find_field(m, s, f);
    let mut t = Text::new();
    let cw = rt.count_bits;
    let r = rt.in_beats;
    if !r.is_power_of_two() || (r > 1 && rt.split.is_some()) {
        return Err(format!(
            "{}: {r} input beats per output beat (a power of two, without a split)",
            rt.unit
        ));
    }
    let mut ins = Vec::new();
    let mut outs = Vec::new();
    for (a, b) in &rt.pairs {
        ins.push(field(si, a)?);
        let o = field(so, b)?;
        let w = ins.last().map_or(0, |x| x.1);
        if o.1 != w && o.1 != r * w {
            return Err(format!("{} and {} differ in width", a, b));
        }
        outs.push(o);
    }
    let sh = r.trailing_zeros();
    let out_idx = if r == 1 {
        "f_pick_n_q".to_string()
    } else {
        format!("(f_pick_n_q >> {sh})")
    };
    track(&mut t, m, (si, so), cw, &ins, &out_idx);
    for a in &rt.assume {
        t.assume("rst_ni", a, "the engine's input rule for the round trip");
    }
    if let Some((f, n)) = &rt.line_field {
        line_field(&mut t, field(si, f)?, f, *n)?;
    }
    for c in &rt.checks {
        t.assert("f_out_fire", c, "the engine's rule for every output beat");
    }
    if r > 1 {
        return grouped(t, rt, (so, &ins, &outs), r);
    }
    let mut suffix = String::new();
    if let (Some(sp), Some(i)) = (&rt.split, case) {
        if !m
            .ports()
            .iter()
            .any(|p| p.name == sp.fire || p.name == sp.value)
        {
            return Err(format!("{} has no probe ports `{}`", m.name, sp.fire));
        }
        // Inner beats are counted like the input's: the tracked line's is the one whose
        // index is the tracked input beat's.
        t.past(
            "f_mid_n_q",
            cw,
            &format!(
                "!rst_ni ? {cw}'d0 : f_mid_n_q + {{{}'d0, rst_ni & {}}}",
                cw - 1,
                sp.fire
            ),
            &format!("{cw}'d0"),
        );
        t.assume(
            &format!(
                "rst_ni & {} & (f_picked_q ? (f_mid_n_q == f_pick_n_q)\n        \
                 : (f_pick_now & (f_mid_n_q == f_in_n_q)))",
                sp.fire
            ),
            &sp.condition(i),
            &format!("case {}: the tracked line's inner beat", sp.label(i)),
        );
        suffix = format!("_c{i}");
    }
    let want = match &rt.expect {
        Some(f) => f.replace("@", "f_pick_pay_q"),
        None => "f_pick_pay_q".to_string(),
    };
    t.assert(
        "f_out_fire & f_picked_q & ~f_done_q & (f_out_n_q == f_pick_n_q)",
        &format!("{} == {}", concat(&outs, 20), want),
        "the chosen line comes back as it went in",
    );
    let now = match &rt.expect {
        Some(f) => f.replace("@", &concat(&ins, 20)),
        None => concat(&ins, 20),
    };
    t.assert(
        "f_out_fire & f_pick_now & (f_out_n_q == f_in_n_q)",
        &format!("{} == {}", concat(&outs, 20), now),
        "the chosen line, when it passes in the cycle it is taken",
    );
    let two = 2 * rt.line_beats;
    t.cover = Some(if case.is_some() {
        // A case constrains the tracked line only: its depth must see that line back (its
        // path may be the slowest) and a whole line after it.
        (
            format!(
                "f_done_q & (f_out_n_q == f_pick_n_q + {cw}'d{})",
                1 + rt.line_beats
            ),
            "the tracked line and a whole line after it back".into(),
        )
    } else {
        (
            format!("f_out_n_q == {cw}'d{two}"),
            "two whole lines back".into(),
        )
    });
    no_errors(&mut t, m, so, &rt.zero)?;
    t.assert(
        "f_out_fire & (f_out_n_q == f_in_n_q)",
        "f_in_fire",
        "no output beat before its input beat",
    );
    Ok(finish(
        &format!("{}_f_rt{suffix}", m.name),
        m,
        "round trip (the output line equals the input line)",
        t,
    ))
}

/// Input field `f` (its port and width), carried by a line of `n` input beats on its first:
/// recorded with the chosen beat as `f_pick_<f>_q`, and assumed to keep its value over the
/// line's beats.
fn line_field(t: &mut Text, (port, w): (String, u32), f: &str, n: u32) -> Result<(), String> {
    if !n.is_power_of_two() {
        return Err(format!("`{f}`: {n} input beats a line (a power of two)"));
    }
    t.past(
        &format!("f_pick_{f}_q"),
        w,
        &format!("f_pick_now ? {port} : f_pick_{f}_q"),
        &format!("{w}'d0"),
    );
    if n > 1 {
        t.past(
            &format!("f_line_{f}_q"),
            w,
            &format!("f_in_fire ? {port} : f_line_{f}_q"),
            &format!("{w}'d0"),
        );
        let sh = n.trailing_zeros();
        t.assume(
            &format!("rst_ni & (f_in_n_q[{}:0] != {sh}'d0)", sh - 1),
            &format!("{port} == f_line_{f}_q"),
            &format!("a line carries its `{f}` on every beat"),
        );
    }
    Ok(())
}

/// The rest of the round-trip wrapper of `rt` when an output beat carries `r` input beats
/// (`r > 1`, no split): the chosen beat is the first of its group, the group's later beats
/// are recorded as they are taken (`f_pick_pay<g>_q`), and the output beat of index
/// `f_pick_n_q / r` carries them; every output beat leaves after the cycles its input beats
/// are taken.
fn grouped(
    mut t: Text,
    rt: &RoundTrip,
    (so, ins, outs): (&StreamPorts, &[Field], &[Field]),
    r: u32,
) -> Result<Wrapper, String> {
    let m = &*rt.top;
    let cw = rt.count_bits;
    let sh = r.trailing_zeros();
    t.assume(
        &format!(
            "f_in_fire & ~f_picked_q & (f_in_n_q[{}:0] != {sh}'d0)",
            sh - 1
        ),
        "!f_pick_i",
        "the chosen beat is the first of an output beat's input beats",
    );
    let iw: u32 = ins.iter().map(|x| x.1).sum();
    let pay = |g: u32| {
        if g == 0 {
            "f_pick_pay_q".to_string()
        } else {
            format!("f_pick_pay{g}_q")
        }
    };
    for g in 1..r {
        t.past(
            &pay(g),
            iw,
            &format!(
                "(f_in_fire & f_picked_q & (f_in_n_q == f_pick_n_q + {cw}'d{g}))\n      ? {}\n      : {}",
                concat(ins, 6),
                pay(g)
            ),
            &format!("{iw}'d0"),
        );
    }
    let at = format!("f_out_fire & f_picked_q & ~f_done_q & (f_out_n_q == (f_pick_n_q >> {sh}))");
    let mut lo = 0;
    for (i, ((_, w), (o, ow))) in ins.iter().zip(outs).enumerate() {
        let slice = |g: u32| format!("{}[{}:{lo}]", pay(g), lo + w - 1);
        let mut want = if *ow == *w {
            slice(r - 1)
        } else {
            let parts: Vec<String> = (0..r).rev().map(slice).collect();
            format!("{{{}}}", parts.join(", "))
        };
        if let (0, Some(f)) = (i, &rt.expect) {
            let _ = writeln!(t.head, "  wire {}f_want = {want};", range(*ow));
            want = f.replace('@', "f_want");
        }
        t.assert(
            &at,
            &format!("{o} == {want}"),
            "the chosen line comes back as it went in",
        );
        lo += w;
    }
    t.cover = Some((
        format!("f_out_n_q == {cw}'d{}", 2 * rt.line_beats),
        "two whole lines back".into(),
    ));
    no_errors(&mut t, m, so, &rt.zero)?;
    t.assert(
        "f_out_fire",
        &format!(
            "{{1'b0, f_in_n_q}} >= (({{1'b0, f_out_n_q}} + {}'d1) << {sh})",
            cw + 1
        ),
        "an output beat leaves after the cycles its input beats are taken",
    );
    Ok(finish(
        &format!("{}_f_rt", m.name),
        m,
        "round trip (the output line equals the input line)",
        t,
    ))
}

/// The error-flag wrapper of `e` ([`Property::Error`]): one input beat, chosen by the solver,
/// is recorded (its fields readable as `r_<field>`); the reference decides from it whether
/// the model rejects the beat (`r_bad`), and the output beat of the same index must carry the
/// flag exactly then, with its `cleared` fields zero. The output beat must leave after the
/// cycle its input is taken (the flag is a registered decision).
pub fn error_flag(e: &ErrorFlag) -> Result<Wrapper, String> {
    let m = &*e.top;
    let si = find_stream(m, Dir::In, &e.input)?;
    let so = find_stream(m, Dir::Out, &e.output)?;
    if let Some(pt) = &e.transfer {
        return transfer_error(e, pt, (si, so));
    }
    let mut t = Text::new();
    let ins = payload(si);
    track(&mut t, m, (si, so), 8, &ins, "f_pick_n_q");
    let mut lo = 0;
    let _ = writeln!(t.head, "  // the recorded beat's fields");
    for (f, (_, w)) in si.layout.fields().iter().zip(&ins) {
        let _ = writeln!(
            t.head,
            "  wire {}r_{} = f_pick_pay_q[{}:{lo}];",
            range(*w),
            f.name,
            lo + w - 1
        );
        lo += w;
    }
    let _ = writeln!(t.head, "  // the model's verdict on it ({})", e.source);
    for d in &e.reference {
        let _ = writeln!(t.head, "  {d}");
    }
    let (flag, _) = find_field(m, so, &e.flag)?;
    let at = "f_out_fire & f_picked_q & ~f_done_q & (f_out_n_q == f_pick_n_q)";
    t.assert(
        at,
        &format!("{flag} == r_bad"),
        "the chosen beat is flagged exactly when the model rejects it",
    );
    for c in &e.cleared {
        let (n, w) = find_field(m, so, c)?;
        t.assert(
            &format!("{at} & r_bad"),
            &format!("{n} == {w}'d0"),
            "a flagged beat carries no data",
        );
    }
    t.assert(
        "f_out_fire",
        "f_out_n_q != f_in_n_q",
        "an output beat leaves after the cycle its input is taken",
    );
    t.cover = Some((
        format!("{at} & r_bad"),
        "a corrupt beat's verdict checked".into(),
    ));
    Ok(finish(
        &format!("{}_f_error", m.name),
        m,
        "corrupt input (the error flag is the model's)",
        t,
    ))
}

/// The error-flag wrapper of `e` with a verdict per transfer ([`PerTransfer`]): the
/// reference runs over every input beat; the solver chooses one transfer at its last input
/// beat (free input `f_pick_i`) and its verdict is recorded; the output beat that ends the
/// same transfer (counted by `last` on both sides) must carry the flag exactly then. On
/// every beat the flag comes only with `last` and clears the `cleared` fields, and a
/// transfer's output ends after the cycle its last input beat is taken.
fn transfer_error(
    e: &ErrorFlag,
    pt: &PerTransfer,
    (si, so): (&StreamPorts, &StreamPorts),
) -> Result<Wrapper, String> {
    let m = &*e.top;
    let mut t = Text::new();
    let (in_last, _) = find_field(m, si, &pt.in_last)?;
    let ends = format!("f_in_fire & {in_last}");
    pick_on(&mut t, m, (si, so), &ends);
    let _ = writeln!(t.head, "  // the input beat's fields");
    for f in si.layout.fields() {
        let (n, w) = find_field(m, si, &f.name)?;
        let _ = writeln!(t.head, "  wire {}c_{} = {n};", range(w), f.name);
    }
    let (out_last, _) = find_field(m, so, &pt.out_last)?;
    let (flag, _) = find_field(m, so, &e.flag)?;
    let _ = writeln!(
        t.head,
        "  // the model's verdict on the transfer so far ({})",
        e.source
    );
    for (x, w, _) in &pt.state {
        let _ = writeln!(t.head, "  wire {}{x}_n;", range(*w));
    }
    for d in &e.reference {
        let _ = writeln!(t.head, "  {d}");
    }
    for (x, w, init) in &pt.state {
        t.past(
            x,
            *w,
            &format!("!rst_ni | ({ends}) ? {init} : f_in_fire ? {x}_n : {x}"),
            init,
        );
    }
    t.past(
        "f_in_t_q",
        8,
        &format!("!rst_ni ? 8'd0 : f_in_t_q + {{7'd0, {ends}}}"),
        "8'd0",
    );
    let out_ends = format!("f_out_fire & {out_last}");
    t.past(
        "f_out_t_q",
        8,
        &format!("!rst_ni ? 8'd0 : f_out_t_q + {{7'd0, {out_ends}}}"),
        "8'd0",
    );
    t.past(
        "f_picked_q",
        1,
        "rst_ni & (f_picked_q | f_pick_now)",
        "1'b0",
    );
    t.past(
        "f_pick_t_q",
        8,
        "f_pick_now ? f_in_t_q : f_pick_t_q",
        "8'd0",
    );
    t.past("f_bad_q", 1, "f_pick_now ? r_bad : f_bad_q", "1'b0");
    let at = format!("{out_ends} & f_picked_q & (f_out_t_q == f_pick_t_q)");
    t.assert(
        &at,
        &format!("{flag} == f_bad_q"),
        "the chosen transfer ends flagged exactly when the model rejects it",
    );
    t.assert(
        &out_ends,
        "f_out_t_q != f_in_t_q",
        "a transfer's output ends after the cycle its last input beat is taken",
    );
    t.assert(
        &format!("f_out_fire & {flag}"),
        &out_last,
        "the flag comes only with the transfer's last beat",
    );
    for c in &e.cleared {
        let (n, w) = find_field(m, so, c)?;
        t.assert(
            &format!("f_out_fire & {flag}"),
            &format!("{n} == {w}'d0"),
            "a flagged beat carries no data",
        );
    }
    t.cover = Some((
        format!("{at} & f_bad_q"),
        "a corrupt transfer's verdict checked".into(),
    ));
    Ok(finish(
        &format!("{}_f_error", m.name),
        m,
        "corrupt input (the error flag is the model's, per transfer)",
        t,
    ))
}

/// The instance `inst` of `md` in a code wrapper: its outputs on wires `<prefix>_<port>`,
/// its inputs from `ins` (every input needs one).
fn code_instance(
    v: &mut String,
    md: &Module,
    inst: &str,
    prefix: &str,
    ins: &[(String, String)],
) -> Result<(), String> {
    let mut conns = Vec::new();
    for p in md.ports() {
        let e = if p.dir == Dir::Out {
            let _ = writeln!(v, "  wire {}{prefix}_{};", range(p.width), p.name);
            format!("{prefix}_{}", p.name)
        } else {
            ins.iter()
                .find(|(n, _)| *n == p.name)
                .map(|(_, e)| e.clone())
                .ok_or_else(|| format!("nothing drives input `{}` of {}", p.name, md.name))?
        };
        conns.push(format!("    .{}({})", p.name, e));
    }
    let _ = writeln!(v, "  {} {inst} (\n{}\n  );", md.name, conns.join(",\n"));
    Ok(())
}

/// The wrapper of link code `c` ([`Property::Code`]): encoder and decoder side by side on
/// the free inputs, the reference declarations, and every check as an immediate assertion.
/// No state: one solver step covers every input.
pub fn code(c: &Code) -> Result<Wrapper, String> {
    let name = format!("{}_f_code", c.unit);
    let mut v = title(&name);
    let _ = writeln!(v, "// Link code: {} -> {}.", c.enc.name, c.dec.name);
    let _ = writeln!(v, "// Property: {}.", Property::Code.title());
    let _ = writeln!(
        v,
        "// Read with `read_verilog -formal`; see docs/FORMAL.md."
    );
    let _ = writeln!(v, "`default_nettype none");
    let mut ports = vec!["  input  wire clk_i".to_string()];
    for (n, w) in &c.free {
        ports.push(format!("  input  wire {}{}", range(*w), n));
    }
    let _ = writeln!(v, "module {name} (\n{}\n);", ports.join(",\n"));
    code_instance(&mut v, &c.enc, "enc", "e", &c.enc_in)?;
    code_instance(&mut v, &c.dec, "dec", "d", &c.dec_in)?;
    for d in &c.decls {
        let _ = writeln!(v, "  {d}");
    }
    v.push_str("  always @* begin\n");
    for (expr, why) in &c.checks {
        check(&mut v, "assert", "", expr, why);
    }
    v.push_str("  end\nendmodule\n`default_nettype wire\n");
    Ok(Wrapper {
        name,
        text: v,
        cover: None,
    })
}

/// The wrapper of a prefix-sum network's cells ([`Property::Sums`]): one instance of each
/// cell type on free inputs, asserting its sum modulo 2^`lane_bits`. Its header names the
/// network the wiring check reads (so that the cache key covers it).
pub fn sum_cells(n: &SumNet) -> Wrapper {
    let name = format!("{}_f_sums", n.module);
    let w = n.lane_bits;
    let mut v = title(&name);
    let _ = writeln!(v, "// Unit: {}.", n.top.name);
    let _ = writeln!(
        v,
        "// Network: {} -> {} in {}, {} lanes of {w} bits.",
        n.input, n.output, n.module, n.lanes
    );
    let _ = writeln!(v, "// Property: {}.", Property::Sums.title());
    let _ = writeln!(v, "// Spec: {}.", n.source);
    let _ = writeln!(
        v,
        "// Read with `read_verilog -formal`; see docs/FORMAL.md."
    );
    let _ = writeln!(v, "`default_nettype none");
    let mut ports = vec!["  input  wire clk_i".to_string()];
    let mut body = String::new();
    let mut checks = Vec::new();
    for (k, (cell, kind)) in n.cells.iter().enumerate() {
        let (ins, outs): (Vec<String>, Vec<&str>) = match kind {
            SumCell::CarrySave(t) => ((0..*t).map(|j| format!("t{j}")).collect(), vec!["s", "c"]),
            SumCell::Add => (vec!["a".into(), "b".into()], vec!["y"]),
        };
        for i in &ins {
            ports.push(format!("  input  wire {}c{k}_{i}", range(w)));
        }
        let _ = writeln!(
            body,
            "  wire {}{};",
            range(w),
            outs.iter()
                .map(|o| format!("c{k}_{o}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let conns: Vec<String> = ins
            .iter()
            .map(|i| format!("    .{i}_i(c{k}_{i})"))
            .chain(outs.iter().map(|o| format!("    .{o}_o(c{k}_{o})")))
            .collect();
        let _ = writeln!(body, "  {cell} u_c{k} (\n{}\n  );", conns.join(",\n"));
        let sum = ins
            .iter()
            .map(|i| format!("c{k}_{i}"))
            .collect::<Vec<_>>()
            .join(" + ");
        let (lhs, why) = match kind {
            SumCell::CarrySave(_) => (
                format!("c{k}_s + c{k}_c"),
                format!("{cell}: sum plus carry is the sum of the terms"),
            ),
            SumCell::Add => (format!("c{k}_y"), format!("{cell}: the sum")),
        };
        // Every operand is `w` bits wide, so both sides are taken modulo 2^w.
        checks.push((format!("{lhs} == {sum}"), why));
    }
    let _ = writeln!(v, "module {name} (\n{}\n);", ports.join(",\n"));
    v.push_str(&body);
    v.push_str("  always @* begin\n");
    for (expr, why) in &checks {
        check(&mut v, "assert", "", expr, why);
    }
    v.push_str("  end\nendmodule\n`default_nettype wire\n");
    Wrapper {
        name,
        text: v,
        cover: None,
    }
}

/// The wrapper of a bounded property ([`Property::Accept`], [`Property::Drain`] or
/// [`Property::Progress`]) of `m` with bound `bound` (cycles). Every output's consumer is
/// always ready. `accept`: on every input stream, a beat offered is refused at most `bound`
/// cycles. `drain`: an output beat comes at most `bound` cycles after the cycle of the last
/// input beat taken (cycles counted from reset when no input was taken). `progress`: an
/// output beat comes at most `bound` cycles after the last beat of any stream.
pub fn bounded(m: &Module, prop: Property, bound: u32) -> Wrapper {
    let mut t = Text::new();
    input_rules(&mut t, m);
    let ins: Vec<&StreamPorts> = m.streams.iter().filter(|s| s.dir == Dir::In).collect();
    let outs: Vec<&StreamPorts> = m.streams.iter().filter(|s| s.dir == Dir::Out).collect();
    for s in &outs {
        t.assume(
            "rst_ni",
            &s.ready(),
            &format!("`{}`: the consumer is always ready", s.prefix),
        );
    }
    let b = bound.min(254);
    match prop {
        Property::Accept => {
            for s in &ins {
                let (p, v, r) = (&s.prefix, s.valid(), s.ready());
                t.past(
                    &format!("f_{p}_wait_q"),
                    8,
                    &format!(
                        "!(rst_ni & {v} & ~{r}) ? 8'd0\n      : f_{p}_wait_q + \
                         {{7'd0, f_{p}_wait_q != 8'd255}}"
                    ),
                    "8'd0",
                );
                t.assert(
                    &format!("rst_ni & {v} & ~{r}"),
                    &format!("f_{p}_wait_q < 8'd{b}"),
                    &format!("`{p}`: an offered beat is refused at most {b} cycles"),
                );
            }
            if let Some(s) = ins.first() {
                t.cover = Some((
                    format!("rst_ni & {}", s.valid()),
                    format!("a beat of `{}` offered", s.prefix),
                ));
            }
        }
        _ => {
            // `progress` counts the silence since the last beat of any stream; `drain` the
            // cycles since the last input beat.
            let counted = if prop == Property::Progress {
                m.streams.iter().collect()
            } else {
                ins.clone()
            };
            let fire: Vec<String> = counted
                .iter()
                .map(|s| format!("({} & {})", s.valid(), s.ready()))
                .collect();
            let any = if fire.is_empty() {
                "1'b0".to_string()
            } else {
                fire.join(" | ")
            };
            let net = if prop == Property::Progress {
                "f_any_fire"
            } else {
                "f_in_fire"
            };
            let _ = writeln!(t.head, "  wire {net} = rst_ni & ({any});");
            t.past(
                "f_quiet_q",
                8,
                &format!("!rst_ni | {net} ? 8'd0 : f_quiet_q + {{7'd0, f_quiet_q != 8'd255}}"),
                "8'd0",
            );
            for s in &outs {
                let (when, what) = if prop == Property::Progress {
                    (format!("rst_ni & {}", s.valid()), "beat of any stream")
                } else {
                    (format!("rst_ni & {} & ~f_in_fire", s.valid()), "input beat")
                };
                t.assert(
                    &when,
                    &format!("f_quiet_q < 8'd{b}"),
                    &format!(
                        "`{}`: a beat at most {b} cycles after the last {what}",
                        s.prefix
                    ),
                );
            }
            if let Some(s) = outs.first() {
                t.cover = Some((
                    format!("rst_ni & {}", s.valid()),
                    format!("a beat of `{}` offered", s.prefix),
                ));
            }
        }
    }
    finish(
        &format!("{}_f_{}{b}", m.name, prop.tag()),
        m,
        prop.title(),
        t,
    )
}
