//! Adaptive link egress and ingress (Tavana et al., IPDPS'19; docs/FORMATS.md, adaptive
//! §2.4, §2.5, §3, §6 `comp_mux_egress`, `decomp_dispatch`): the compressors, the controller and
//! the egress mux on the sending side, the decompressor dispatch on the receiving side.
//!
//! * `comp_mux_egress` (combinational): the selected algorithm's result if it saved space,
//!   else the bypass (Comp Alg 0, the raw line, `len = L`). Comp Alg codes (§2.5): 0 none,
//!   1 FPC, 2 C-Pack+Z, 3 BDI; the 4-bit field's upper two bits are 0.
//! * `adaptive_tx` (egress; one line per cycle where the compressors allow): line in →
//!   **fork** to the compressors → in-order **join** → `adaptive_ctrl` (sizes in, the
//!   transaction's selection out) → `comp_mux_egress` → output register (lock-step with the
//!   controller's output register) → `comp_alg`, `len`, left-aligned `payload`, plus the
//!   controller's `sel_alg` and sampling flag. A sampling-phase line goes to every enabled
//!   compressor; a running-phase line only to the selected one (none when bypassing), so the
//!   running phase runs at the selected compressor's rate and the others idle (§2.4: "only the
//!   selected compressor runs"). The first running-phase line of a period waits until the
//!   pipeline has drained, so that the controller's decision is known (a bubble of the
//!   pipeline depth per `sample_len + run_len` lines). A queue of `link_queue_depth` entries
//!   holds each line and the set of compressors it went to, for the join and the bypass.
//!   With `link_fast_egress` each compressor's result passes a skid register (its ready is a
//!   register) and the egress mux's inputs are registered in place of its output, the mux
//!   reading the controller's registered selection: the same cycles, a faster clock.
//! * `adaptive_rx` (ingress, `decomp_dispatch`): `comp_alg` + payload in → routed to the
//!   decompressor named by `comp_alg`; Comp Alg 0 (and an unknown or disabled code) goes to the
//!   first enabled decompressor with `s_comp_i = 0`, which passes the raw line, so every line
//!   takes a decompressor's pipeline and the outputs stay in order; a route queue of
//!   `link_queue_depth` entries picks the output. An unknown code or a decompressor error sets
//!   `m_err_o` with an all-zero line.
//! * `link_loopback` (test only): `adaptive_tx` → `adaptive_rx`.

use super::adaptive::{AdaptiveRtlParams, SPEC};
use super::adaptive_ctrl::{self, name_tag};
use super::bdi;
use crate::hdl::blocks::{fifo_head_reg, skid_bypass_split};
use crate::hdl::stream::{self, Layout};
use crate::hdl::{clog2, Expr, HdlError, Inst, Module, ModuleBuilder};
use crate::model::adaptive::Alg;
use std::sync::Arc;

fn err(msg: String) -> HdlError {
    HdlError {
        module: "link".into(),
        problems: vec![msg],
    }
}

/// The enabled compressors in port order (BDI, FPC, C-Pack+Z).
pub fn enabled(p: &AdaptiveRtlParams) -> Vec<Alg> {
    let mp = p.model();
    [Alg::Bdi, Alg::Fpc, Alg::Cpack]
        .into_iter()
        .filter(|a| mp.enabled(*a))
        .collect()
}

fn checked(p: &AdaptiveRtlParams) -> Result<Vec<Alg>, HdlError> {
    p.validate().map_err(err)?;
    let algs = enabled(p);
    if algs.is_empty() {
        return Err(err(
            "the link units need at least one enabled compressor (use_bdi, use_fpc, use_cpack)"
                .into(),
        ));
    }
    Ok(algs)
}

/// The compressor unit of `alg` (ports `s_line_i` → `m_ok_o`, `m_len_o`, `m_payload_o`).
pub fn comp_unit(p: &AdaptiveRtlParams, alg: Alg) -> Result<Arc<Module>, HdlError> {
    match alg {
        Alg::Bdi => bdi::compressor(p),
        Alg::Fpc => super::fpc::compressor(p),
        Alg::Cpack => super::cpack::compressor(&p.cpack_rtl()),
        Alg::None => Err(err("Comp Alg 0 (bypass) has no compressor".into())),
    }
}

/// The decompressor unit of `alg` (ports `s_comp_i`, `s_payload_i` → `m_line_o`, `m_err_o`).
pub fn decomp_unit(p: &AdaptiveRtlParams, alg: Alg) -> Result<Arc<Module>, HdlError> {
    match alg {
        Alg::Bdi => bdi::decompressor(p),
        Alg::Fpc => super::fpc::decompressor(p),
        Alg::Cpack => super::cpack::decompressor(&p.cpack_rtl()),
        Alg::None => Err(err("Comp Alg 0 (bypass) has no decompressor".into())),
    }
}

fn header(m: &mut ModuleBuilder, generator: &str, p: &AdaptiveRtlParams, spec: &str) {
    let spec = format!("{SPEC} {spec}");
    m.provenance(&format!("link::{generator}"), &p.describe_link(), &spec);
    m.header("Comp Alg codes: none=0 fpc=1 cpack=2 bdi=3");
}

/// The line's bytes in stream order on the left-aligned payload bus (byte 0 at the top).
fn raw_payload(line: &Expr) -> Expr {
    Expr::cat(&line.lanes(8))
}

/// `comp_mux_egress`: the selected result, or the bypass (see the module docs).
///
/// Ports: `line_i[L-1:0]`, `sel_i[1:0]` (Comp Alg code), per enabled algorithm `ok_<a>_i`,
/// `len_<a>_i`, `payload_<a>_i[L-1:0]` → `comp_alg_o[3:0]`, `len_o`, `payload_o[L-1:0]`.
pub fn egress_mux(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    let algs = checked(p)?;
    let lb = p.line_bits();
    let lw = p.len_bits();
    let mut m = ModuleBuilder::new(format!("comp_mux_egress_{}", name_tag(p)));
    header(
        &mut m,
        "egress_mux",
        p,
        "§6 comp_mux_egress (bypass when sel = 0 or !ok), §2.5 Comp Alg",
    );
    let line = m.input("line_i", lb);
    let sel = m.input("sel_i", 2);
    let mut hits = Vec::new();
    let mut comp = Expr::zero(2);
    let mut len = Expr::zero(lw);
    let mut pay = Expr::zero(lb);
    for a in &algs {
        let t = a.name();
        let ok = m.input(&format!("ok_{}_i", t), 1);
        let l = m.input(&format!("len_{}_i", t), lw);
        let pl = m.input(&format!("payload_{}_i", t), lb);
        let hit = m.wire(&format!("use_{}", t), &(sel.eq_lit(a.code() as u64) & ok));
        comp = comp | hit.gate(&Expr::lit(2, a.code() as u64));
        len = len | hit.gate(&l);
        pay = pay | hit.gate(&pl);
        hits.push(hit);
    }
    let bypass = m.wire("bypass", &!Expr::cat(&hits).any());
    m.output_expr("comp_alg_o", &Expr::cat(&[Expr::zero(2), comp]));
    m.output_expr("len_o", &(len | bypass.gate(&Expr::lit(lw, lb as u64))));
    m.output_expr("payload_o", &(pay | bypass.gate(&raw_payload(&line))));
    m.finish()
}

/// Size input of the controller for `a`: the compressor's `len`, or the line size when `a`
/// is disabled or the line did not go to it (running phase: the controller ignores sizes).
fn ctrl_size(lb: u32, lw: u32, len: Option<(Expr, Expr)>) -> Expr {
    match len {
        Some((went, l)) => went.select(&l, &Expr::lit(lw, lb as u64)),
        None => Expr::lit(lw, lb as u64),
    }
}

/// A compressor's result as the join and the egress mux see it (after its skid register).
struct CompOut {
    valid: Expr,
    ok: Expr,
    len: Expr,
    payload: Expr,
}

/// Compressor `t`'s result as the join sees it, and its output ready (`c_m_ready`, driven
/// here): the join's `take` directly, or with `link_fast_egress` through a skid register, so
/// that the compressor's ready is a register and its pipeline does not wait on the join's
/// ready chain (`ok` and `len`, the controller's sizes, get a select register of their own).
fn comp_out(
    m: &mut ModuleBuilder,
    p: &AdaptiveRtlParams,
    t: &str,
    inst: &Inst,
    c_m_ready: &crate::hdl::Net,
    take: &Expr,
) -> CompOut {
    let (lb, lw) = (p.line_bits(), p.len_bits());
    let (ok, len, payload) = (
        inst.out("m_ok_o"),
        inst.out("m_len_o"),
        inst.out("m_payload_o"),
    );
    if !p.link_fast_egress {
        m.drive(c_m_ready, take);
        let valid = inst.out("m_valid_o");
        return CompOut {
            valid,
            ok,
            len,
            payload,
        };
    }
    let k = skid_bypass_split(
        m,
        &format!("{}_out", t),
        &inst.out("m_valid_o"),
        &Expr::cat(&[payload, ok, len]),
        lw + 1,
        take,
    );
    m.drive(c_m_ready, &k.ready);
    CompOut {
        valid: k.valid,
        ok: k.data.bit(lw),
        len: k.data.slice(0, lw),
        payload: k.data.slice(lw + 1, lb),
    }
}

/// `adaptive_tx`: compressors, controller and egress mux (see the module docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_line_i[L-1:0]` → `m_valid_o`/`m_ready_i`/
/// `m_comp_alg_o[3:0]`/`m_len_o`/`m_payload_o[L-1:0]` (left-aligned)/`m_sel_alg_o[1:0]`/
/// `m_sample_o`.
pub fn transmitter(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    let algs = checked(p)?;
    let lb = p.line_bits();
    let lw = p.len_bits();
    let n = algs.len() as u32;
    let ctrl = adaptive_ctrl::controller(p)?;
    let comps = algs
        .iter()
        .map(|a| comp_unit(p, *a))
        .collect::<Result<Vec<_>, _>>()?;
    let fast = if p.link_fast_egress { "_fe" } else { "" };
    let mut m = ModuleBuilder::new(format!("adaptive_tx_{}{fast}", name_tag(p)));
    header(
        &mut m,
        "transmitter",
        p,
        "§2.4 (sampling: all compressors; running: the selected one), §6 comp_mux_egress",
    );
    let s_in = stream::input(&mut m, "s", &Layout::new(&[("line", lb)]));
    let s_valid = s_in.valid.clone();
    let line = s_in.field("line");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    // ---- Fork: which compressors get the line ----
    m.comment("Fork: phase of the offered line; a running line goes to the selected compressor");
    let period = (p.sample_len + p.run_len) as u64;
    let cw = clog2(period).max(1);
    let pos = m.reg("fork_pos_q", cw, Some(0));
    let sl = p.sample_len as u64;
    let sampling = m.wire("fork_sampling", &pos.q().lt(&Expr::lit(cw, sl)));
    let first_run = if p.run_len > 0 {
        pos.q().eq_lit(sl)
    } else {
        Expr::zero(1)
    };
    let qd = p.link_queue_depth;
    let iw = clog2(qd as u64 + 2);
    let inflight = m.reg("inflight_q", iw, Some(0));
    m.annotate("lines between the fork and the output register (inclusive)");
    // Whether lines are in flight, registered beside the count (off the fork's path).
    let busy = m.reg("inflight_nz_q", 1, Some(0));
    let hold = m.wire("fork_hold", &(first_run & busy.q()));
    if p.run_len == 0 {
        // No running phase: nothing waits for the pipeline to drain.
        m.unused(&busy.q());
    }
    let run_sel = m.wire_decl("run_sel", 2);
    let mask: Vec<Expr> = algs
        .iter()
        .map(|a| {
            m.wire(
                &format!("to_{}", a.name()),
                &(&sampling | &run_sel.expr().eq_lit(a.code() as u64)),
            )
        })
        .collect();
    let c_ready: Vec<_> = algs
        .iter()
        .map(|a| m.wire_decl(&format!("{}_s_ready", a.name()), 1))
        .collect();
    let fork_fire = m.wire_decl("fork_fire", 1);
    let pop = m.wire_decl("join_pop", 1);
    let mask_v = Expr::cat(&mask.iter().rev().cloned().collect::<Vec<_>>());
    // The head is a register: the join, the compressors' output ready and the egress mux
    // read it, not a pointer decode of the entries.
    let q = fifo_head_reg(
        &mut m,
        "lineq",
        qd,
        &fork_fire.expr(),
        &Expr::cat(&[mask_v, line.clone()]),
        &pop.expr(),
    );
    // Ready of every target but `skip` (lazy fork: a valid never waits on its own ready).
    let others = |skip: Option<usize>| -> Expr {
        let mut t = vec![q.ready.clone(), !hold.clone()];
        for (j, (mk, r)) in mask.iter().zip(&c_ready).enumerate() {
            if Some(j) != skip {
                t.push(!mk.clone() | r.expr());
            }
        }
        Expr::cat(&t).all()
    };
    let go = m.wire("fork_go", &others(None));
    m.drive(&fork_fire, &(&s_valid & &go));
    m.next(
        &pos,
        &pos.q()
            .eq_lit(period - 1)
            .select(&Expr::zero(cw), &(pos.q() + Expr::lit(cw, 1))),
        Some(&fork_fire.expr()),
    );

    // ---- Compressors ----
    let head_line = m.wire("head_line", &q.data.slice(0, lb));
    let head_mask = m.wire("head_mask", &q.data.slice(lb, n));
    let mut outs = Vec::new();
    for (i, (a, c)) in algs.iter().zip(&comps).enumerate() {
        let t = a.name();
        let v = m.wire(
            &format!("{}_s_valid", t),
            &(&s_valid & &mask[i] & others(Some(i))),
        );
        let c_m_ready = m.wire_decl(&format!("{}_m_ready", t), 1);
        let inst = m.instance(
            c,
            &format!("u_{}_comp", t),
            &[
                ("s_valid_i", v),
                ("s_line_i", line.clone()),
                ("m_ready_i", c_m_ready.expr()),
            ],
        );
        m.drive(&c_ready[i], &inst.out("s_ready_o"));
        if let Some(e) = inst.try_out("m_enc_o") {
            m.unused(&e);
        }
        let take = &pop.expr() & &head_mask.bit(i as u32);
        outs.push(comp_out(&mut m, p, t, &inst, &c_m_ready, &take));
    }

    // ---- Join and controller ----
    m.comment("Join: the queue head and the result of every compressor it went to");
    let mut jt = vec![q.valid.clone()];
    for (i, o) in outs.iter().enumerate() {
        jt.push(!head_mask.bit(i as u32) | o.valid.clone());
    }
    let joined = m.wire("joined_valid", &Expr::cat(&jt).all());
    let size = |a: Alg| -> Expr {
        let l = algs
            .iter()
            .position(|x| *x == a)
            .map(|i| (head_mask.bit(i as u32), outs[i].len.clone()));
        ctrl_size(lb, lw, l)
    };
    let ci = m.instance(
        &ctrl,
        "u_ctrl",
        &[
            ("s_valid_i", joined.clone()),
            ("s_size_bdi_i", size(Alg::Bdi)),
            ("s_size_fpc_i", size(Alg::Fpc)),
            ("s_size_cpack_i", size(Alg::Cpack)),
            ("m_ready_i", m_ready.clone()),
        ],
    );
    m.drive(&pop, &(&joined & &ci.out("s_ready_o")));
    m.drive(&run_sel, &ci.out("cur_sel_o"));

    let fields = egress(&mut m, p, &algs, &outs, &head_line, &ci, &pop.expr())?;
    let m_valid = ci.out("m_valid_o");
    let out_fire = &m_valid & &m_ready;
    let up = &fork_fire.expr() & &!out_fire.clone();
    let down = &out_fire & &!fork_fire.expr();
    let inflight_n = m.wire(
        "inflight_n",
        &up.select(
            &(inflight.q() + Expr::lit(iw, 1)),
            &(inflight.q() - Expr::lit(iw, 1)),
        ),
    );
    let moved = &up | &down;
    m.next(&inflight, &inflight_n, Some(&moved));
    m.next(&busy, &inflight_n.ne(&Expr::zero(iw)), Some(&moved));
    s_in.accept(&mut m, &go);
    out.drive(
        &mut m,
        &m_valid,
        &[
            ("comp_alg", fields[0].clone()),
            ("len", fields[1].clone()),
            ("payload", fields[2].clone()),
            ("sel_alg", ci.out("m_sel_alg_o")),
            ("sample", ci.out("m_sample_o")),
        ],
    );
    m.finish()
}

/// The egress mux and the transmitter's output data (`comp_alg`, `len`, `payload`), in
/// lock-step with the controller's output register (both load on `pop`). By default the mux
/// reads the controller's selection of the offered line and its output is registered; with
/// `link_fast_egress` the mux's inputs are registered instead and the mux reads the
/// controller's registered selection, so no path runs from the sizes through the decision
/// into the payload.
fn egress(
    m: &mut ModuleBuilder,
    p: &AdaptiveRtlParams,
    algs: &[Alg],
    outs: &[CompOut],
    head_line: &Expr,
    ci: &Inst,
    pop: &Expr,
) -> Result<[Expr; 3], HdlError> {
    let mux = egress_mux(p)?;
    let fast = p.link_fast_egress;
    if fast {
        m.comment("Egress: the mux's inputs registered with the decision, the mux after them");
    }
    let reg = |m: &mut ModuleBuilder, name: &str, v: &Expr, rst: Option<u64>| {
        if fast {
            m.reg_next(&format!("{name}_q"), rst, v, Some(pop))
        } else {
            v.clone()
        }
    };
    let (sel, line) = if fast {
        m.unused(&ci.out("s_sel_alg_o"));
        (ci.out("m_sel_alg_o"), reg(m, "eg_line", head_line, None))
    } else {
        (ci.out("s_sel_alg_o"), head_line.clone())
    };
    let mut mi = vec![("line_i".to_string(), line), ("sel_i".to_string(), sel)];
    for (a, o) in algs.iter().zip(outs) {
        let t = a.name();
        mi.push((
            format!("ok_{t}_i"),
            reg(m, &format!("eg_ok_{t}"), &o.ok, Some(0)),
        ));
        mi.push((
            format!("len_{t}_i"),
            reg(m, &format!("eg_len_{t}"), &o.len, Some(0)),
        ));
        let pay = reg(m, &format!("eg_payload_{t}"), &o.payload, None);
        mi.push((format!("payload_{t}_i"), pay));
    }
    let mi: Vec<(&str, Expr)> = mi.iter().map(|(n, e)| (n.as_str(), e.clone())).collect();
    let mx = m.instance(&mux, "u_egress", &mi);
    let (comp, len, pay) = (mx.out("comp_alg_o"), mx.out("len_o"), mx.out("payload_o"));
    if fast {
        return Ok([comp, len, pay]);
    }
    Ok([
        m.reg_next("comp_alg_q", Some(0), &comp, Some(pop)),
        m.reg_next("len_q", Some(0), &len, Some(pop)),
        m.reg_next("payload_q", None, &pay, Some(pop)),
    ])
}

/// `adaptive_rx` (`decomp_dispatch`): decompressors behind a Comp Alg router (see the module
/// docs).
///
/// Ports: `s_valid_i`/`s_ready_o`/`s_comp_alg_i[3:0]`/`s_payload_i[L-1:0]` (left-aligned) →
/// `m_valid_o`/`m_ready_i`/`m_line_o[L-1:0]`/`m_err_o`.
pub fn receiver(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    let algs = checked(p)?;
    let lb = p.line_bits();
    let n = algs.len() as u32;
    let decs = algs
        .iter()
        .map(|a| decomp_unit(p, *a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut m = ModuleBuilder::new(format!("adaptive_rx_{}", name_tag(p)));
    header(
        &mut m,
        "receiver",
        p,
        "§3 (Comp Alg = 0 bypasses decompression), §6 decomp_dispatch",
    );
    let s_in = stream::input(
        &mut m,
        "s",
        &Layout::new(&[("comp_alg", 4), ("payload", lb)]),
    );
    let s_valid = s_in.valid.clone();
    let code = s_in.field("comp_alg");
    let payload = s_in.field("payload");
    let out = stream::output_port(&mut m, "m");
    let m_ready = out.ready();

    m.comment("Route: the named decompressor; none/unknown through decompressor 0 raw");
    let hits: Vec<Expr> = algs
        .iter()
        .map(|a| m.wire(&format!("is_{}", a.name()), &code.eq_lit(a.code() as u64)))
        .collect();
    let bad = m.wire("bad_code", &(!code.eq_lit(0) & !Expr::cat(&hits).any()));
    let pass = m.wire("pass_raw", &!Expr::cat(&hits).any());
    let route: Vec<Expr> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            if i == 0 {
                m.wire(&format!("route{}", i), &(h | &pass))
            } else {
                m.wire(&format!("route{}", i), h)
            }
        })
        .collect();
    let d_ready: Vec<_> = (0..n)
        .map(|i| m.wire_decl(&format!("dec{}_s_ready", i), 1))
        .collect();
    let push = m.wire_decl("route_push", 1);
    let pop = m.wire_decl("route_pop", 1);
    let route_v = Expr::cat(&route.iter().rev().cloned().collect::<Vec<_>>());
    // The head is a register: each decompressor's output ready reads it, not a pointer
    // decode.
    let q = fifo_head_reg(
        &mut m,
        "routeq",
        p.link_queue_depth,
        &push.expr(),
        &Expr::cat(&[bad.clone(), route_v]),
        &pop.expr(),
    );
    let mut go = vec![q.ready.clone()];
    for (r, d) in route.iter().zip(&d_ready) {
        go.push(!r.clone() | d.expr());
    }
    let go = m.wire("route_go", &Expr::cat(&go).all());
    m.drive(&push, &(&s_valid & &go));

    let head_route = m.wire("head_route", &q.data.slice(0, n));
    let head_bad = m.wire("head_bad", &q.data.bit(n));
    let mut outs = Vec::new();
    for (i, (a, d)) in algs.iter().zip(&decs).enumerate() {
        // The route is one-hot (distinct codes; `pass` only when none matches), so this
        // decompressor's valid needs no other decompressor's ready.
        let v = m.wire(
            &format!("dec{}_s_valid", i),
            &(&(&s_valid & &route[i]) & &q.ready),
        );
        let inst = m.instance(
            d,
            &format!("u_{}_decomp", a.name()),
            &[
                ("s_valid_i", v),
                ("s_comp_i", hits[i].clone()),
                ("s_payload_i", payload.clone()),
                ("m_ready_i", &m_ready & &q.valid & head_route.bit(i as u32)),
            ],
        );
        m.drive(&d_ready[i], &inst.out("s_ready_o"));
        outs.push(inst);
    }
    m.comment("In-order output: the decompressor named by the route queue head");
    let mut vt = Expr::zero(1);
    let mut line = Expr::zero(lb);
    let mut derr = Expr::zero(1);
    for (i, o) in outs.iter().enumerate() {
        let r = head_route.bit(i as u32);
        vt = vt | (&r & &o.out("m_valid_o"));
        line = line | r.gate(&o.out("m_line_o"));
        derr = derr | (&r & &o.out("m_err_o"));
    }
    let m_valid = m.wire("out_valid", &(&q.valid & &vt));
    m.drive(&pop, &(&m_valid & &m_ready));
    s_in.accept(&mut m, &go);
    out.drive(
        &mut m,
        &m_valid,
        &[
            ("line", (!head_bad.clone()).gate(&line)),
            ("err", (&head_bad | &derr)),
        ],
    );
    m.finish()
}

/// `link_loopback` (test only): [`transmitter`] → [`receiver`]; ports `s_line_i` →
/// `m_line_o`, `m_err_o`.
pub fn loopback(p: &AdaptiveRtlParams) -> Result<Arc<Module>, HdlError> {
    let tx = transmitter(p)?;
    let rx = receiver(p)?;
    let mut m = ModuleBuilder::new(format!("link_loopback_{}", name_tag(p)));
    header(
        &mut m,
        "loopback",
        p,
        "§6 (adaptive_tx → adaptive_rx round trip)",
    );
    let links = stream::chain(&mut m, &[("u_tx", &tx), ("u_rx", &rx)], &[]);
    // The link beat on probe ports, for the formal round trip's split by Comp Alg:
    // `p_fire_o` (a beat passes) and `p_comp_alg_o`.
    if let Some(l) = links.first() {
        stream::probe(&mut m, "p", l, &["comp_alg"]);
    }
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_units_generate() {
        for p in [
            AdaptiveRtlParams::default(),
            AdaptiveRtlParams {
                use_fpc: false,
                use_cpack: false,
                ..AdaptiveRtlParams::default()
            },
        ] {
            for f in [egress_mux, transmitter, receiver, loopback] {
                let m = f(&p).expect("generates");
                crate::hdl::emit::emit_design(&m).expect("emits");
            }
        }
    }

    #[test]
    fn no_candidate_is_an_error() {
        let p = AdaptiveRtlParams {
            use_bdi: false,
            use_fpc: false,
            use_cpack: false,
            ..AdaptiveRtlParams::default()
        };
        let e = transmitter(&p).expect_err("nothing to transmit with");
        assert!(e.to_string().contains("at least one"), "{}", e);
    }
}
