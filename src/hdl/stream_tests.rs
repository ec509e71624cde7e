//! Stream blocks and `when`/FSM lowering, checked in the native interpreter with random
//! valid/ready patterns: order, no loss or duplication, and the stream rule (a beat that
//! waits keeps `valid` and its payload).

use super::bits::Bits;
use super::module::{Module, ModuleBuilder};
use super::sim::Sim;
use super::stream::{self, Layout, StreamPorts};
use super::Expr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::sync::Arc;

/// Drives one input stream from a queue with a random gap pattern.
pub(super) struct Src {
    ports: StreamPorts,
    queue: VecDeque<Bits>,
    cur: Option<Bits>,
    p_valid: f64,
}

/// Takes beats from one output stream with random back-pressure.
pub(super) struct Sink {
    ports: StreamPorts,
    pub(super) got: Vec<Bits>,
    waiting: Option<Bits>,
    p_ready: f64,
    /// Check the hold rule (off for a lazy fork, whose `valid` follows the other outputs).
    strict: bool,
}

fn payload_of(sim: &Sim, p: &StreamPorts) -> Bits {
    let vals: Vec<(&str, Bits)> = p
        .layout
        .fields()
        .iter()
        .map(|f| {
            let b = sim
                .get(&p.field(&f.name))
                .cloned()
                .unwrap_or_else(|| Bits::zero(f.width));
            (f.name.as_str(), b)
        })
        .collect();
    p.layout.pack_bits(&vals)
}

fn set_payload(sim: &mut Sim, p: &StreamPorts, v: &Bits) {
    for f in p.layout.fields() {
        let b = p.layout.unpack_bits(v, &f.name).expect("field");
        sim.set(&p.field(&f.name), &b).expect("field port");
    }
}

fn ports(m: &Module, prefix: &str) -> StreamPorts {
    m.streams
        .iter()
        .find(|s| s.prefix == prefix)
        .cloned()
        .expect("stream ports")
}

/// Runs `cycles` cycles; returns what each sink received.
pub(super) fn run(
    top: &Arc<Module>,
    srcs: &mut [Src],
    sinks: &mut [Sink],
    cycles: usize,
    seed: u64,
) {
    let mut sim = Sim::new(top).expect("sim");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    sim.reset(2);
    for _ in 0..cycles {
        for s in srcs.iter_mut() {
            if s.cur.is_none() && rng.gen_bool(s.p_valid) {
                s.cur = s.queue.pop_front();
            }
            sim.set_u64(&s.ports.valid(), s.cur.is_some() as u64)
                .expect("valid");
            let v = s
                .cur
                .clone()
                .unwrap_or_else(|| Bits::zero(s.ports.layout.width()));
            set_payload(&mut sim, &s.ports, &v);
        }
        let readies: Vec<bool> = sinks.iter().map(|k| rng.gen_bool(k.p_ready)).collect();
        for (k, r) in sinks.iter().zip(&readies) {
            sim.set_u64(&k.ports.ready(), *r as u64).expect("ready");
        }
        sim.eval();
        for (k, r) in sinks.iter_mut().zip(&readies) {
            let valid = sim.get_u64(&k.ports.valid()) == 1;
            let data = payload_of(&sim, &k.ports);
            if let Some(w) = k.waiting.as_ref().filter(|_| k.strict) {
                assert!(valid, "{}: valid dropped while waiting", k.ports.prefix);
                assert!(
                    w.val_eq(&data),
                    "{}: payload changed while waiting",
                    k.ports.prefix
                );
            }
            k.waiting = None;
            if valid && *r {
                k.got.push(data);
            } else if valid {
                k.waiting = Some(data);
            }
        }
        for s in srcs.iter_mut() {
            if s.cur.is_some() && sim.get_u64(&s.ports.ready()) == 1 {
                s.cur = None;
            }
        }
        sim.tick();
    }
}

pub(super) fn src(m: &Module, prefix: &str, items: &[u64], p: f64) -> Src {
    let ports = ports(m, prefix);
    let w = ports.layout.width();
    Src {
        queue: items.iter().map(|&v| Bits::from_u64(w, v)).collect(),
        ports,
        cur: None,
        p_valid: p,
    }
}

pub(super) fn sink(m: &Module, prefix: &str, p: f64) -> Sink {
    Sink {
        ports: ports(m, prefix),
        got: Vec::new(),
        waiting: None,
        p_ready: p,
        strict: true,
    }
}

pub(super) fn u64s(v: &[Bits]) -> Vec<u64> {
    v.iter().map(|b| b.to_u64()).collect()
}

#[test]
fn slice_skid_fifo_bypass_chain_keeps_every_beat_in_order() {
    let mut m = ModuleBuilder::new("chain_t");
    let l = Layout::data(8);
    let s = stream::input(&mut m, "s", &l);
    let s = stream::reg_slice(&mut m, "rs", s);
    let s = stream::skid(&mut m, "sk", s);
    let s = stream::fifo(&mut m, "q", 4, s);
    let s = stream::skid_bypass(&mut m, "sb", s);
    stream::output(&mut m, "m", s);
    let top = m.finish().unwrap();
    let items: Vec<u64> = (0..300).map(|i| (i * 7 + 3) % 256).collect();
    for (seed, pv, pr) in [(1, 0.5, 0.5), (2, 0.9, 0.3), (3, 0.3, 0.9), (4, 1.0, 1.0)] {
        let mut a = [src(&top, "s", &items, pv)];
        let mut b = [sink(&top, "m", pr)];
        run(&top, &mut a, &mut b, 2000, seed);
        assert_eq!(u64s(&b[0].got), items, "seed {}", seed);
    }
    // Full rate: 300 beats through three stages in about 300 cycles.
    let mut a = [src(&top, "s", &items, 1.0)];
    let mut b = [sink(&top, "m", 1.0)];
    run(&top, &mut a, &mut b, 305, 9);
    assert_eq!(b[0].got.len(), 300);
}

#[test]
fn forks_deliver_every_beat_to_every_output() {
    for eager in [false, true] {
        let mut m = ModuleBuilder::new("fork_t");
        let l = Layout::data(8);
        let s = stream::input(&mut m, "s", &l);
        let outs = if eager {
            stream::fork_eager(&mut m, "f", s, 3)
        } else {
            stream::fork_lazy(&mut m, "f", s, 3)
        };
        for (i, o) in outs.into_iter().enumerate() {
            stream::output(&mut m, &format!("m{}", i), o);
        }
        let top = m.finish().unwrap();
        let items: Vec<u64> = (0..200).map(|i| (i * 13) % 256).collect();
        let mut a = [src(&top, "s", &items, 0.7)];
        let mut b = [
            sink(&top, "m0", 0.5),
            sink(&top, "m1", 0.8),
            sink(&top, "m2", 0.6),
        ];
        for k in b.iter_mut() {
            k.strict = eager;
        }
        run(&top, &mut a, &mut b, 3000, 11);
        for k in &b {
            assert_eq!(u64s(&k.got), items, "eager={} {}", eager, k.ports.prefix);
        }
    }
}

#[test]
fn join_pairs_beats_in_order() {
    let mut m = ModuleBuilder::new("join_t");
    let a = stream::input(&mut m, "a", &Layout::data(4));
    let b = stream::input(&mut m, "b", &Layout::data(6));
    let j = stream::join(&mut m, "j", vec![("x", a), ("y", b)]);
    stream::output(&mut m, "m", j);
    let top = m.finish().unwrap();
    assert_eq!(ports(&top, "m").layout.describe(), "{x:4, y:6}");
    let xs: Vec<u64> = (0..150).map(|i| i % 16).collect();
    let ys: Vec<u64> = (0..150).map(|i| (i * 5) % 64).collect();
    let mut s = [src(&top, "a", &xs, 0.4), src(&top, "b", &ys, 0.8)];
    let mut k = [sink(&top, "m", 0.6)];
    run(&top, &mut s, &mut k, 2000, 5);
    let want: Vec<u64> = xs.iter().zip(&ys).map(|(x, y)| x | (y << 4)).collect();
    assert_eq!(u64s(&k[0].got), want);
}

#[test]
fn round_robin_arbiter_keeps_per_input_order_and_rotates() {
    let mut m = ModuleBuilder::new("arb_t");
    let l = Layout::data(8);
    let ins: Vec<_> = (0..3)
        .map(|i| stream::input(&mut m, &format!("s{}", i), &l))
        .collect();
    let o = stream::arbiter_rr(&mut m, "arb", ins);
    stream::output(&mut m, "m", o);
    let top = m.finish().unwrap();
    assert_eq!(ports(&top, "m").layout.describe(), "{data:8, src:2}");
    let per: Vec<Vec<u64>> = (0..3)
        .map(|i| (0..60).map(|k| (i * 64 + k) as u64).collect())
        .collect();
    let mut s: Vec<Src> = (0..3)
        .map(|i| src(&top, &format!("s{}", i), &per[i], 0.3 + 0.3 * i as f64))
        .collect();
    let mut k = [sink(&top, "m", 0.5)];
    run(&top, &mut s, &mut k, 3000, 21);
    for (i, want) in per.iter().enumerate() {
        let got: Vec<u64> = k[0]
            .got
            .iter()
            .filter(|b| b.to_u64() >> 8 == i as u64)
            .map(|b| b.to_u64() & 0xff)
            .collect();
        assert_eq!(&got, want, "input {}", i);
        // The payload came from the input the src field names.
        assert!(got.iter().all(|d| d / 64 == i as u64));
    }
    // All inputs always valid, output always ready: grants rotate 0, 1, 2, 0, ...
    let mut s: Vec<Src> = (0..3)
        .map(|i| src(&top, &format!("s{}", i), &per[i], 1.0))
        .collect();
    let mut k = [sink(&top, "m", 1.0)];
    run(&top, &mut s, &mut k, 30, 22);
    let order: Vec<u64> = k[0].got.iter().map(|b| b.to_u64() >> 8).collect();
    assert!(order.len() >= 24);
    for (n, w) in order.windows(2).enumerate() {
        assert_eq!(
            w[1],
            (w[0] + 1) % 3,
            "grant order at beat {}: {:?}",
            n,
            order
        );
    }
}

#[test]
fn demux_routes_by_a_payload_field() {
    let mut m = ModuleBuilder::new("demux_t");
    let l = Layout::new(&[("data", 8), ("dst", 2)]);
    let s = stream::input(&mut m, "s", &l);
    let sel = s.field("dst");
    let outs = stream::demux(&mut m, "d", s, &sel, 3);
    for (i, o) in outs.into_iter().enumerate() {
        stream::output(&mut m, &format!("m{}", i), o);
    }
    let top = m.finish().unwrap();
    let items: Vec<u64> = (0..240).map(|i| (i % 251) | ((i * 7 % 3) << 8)).collect();
    let mut a = [src(&top, "s", &items, 0.8)];
    let mut b: Vec<Sink> = (0..3)
        .map(|i| sink(&top, &format!("m{}", i), 0.4 + 0.2 * i as f64))
        .collect();
    run(&top, &mut a, &mut b, 3000, 8);
    for (i, k) in b.iter().enumerate() {
        let want: Vec<u64> = items
            .iter()
            .copied()
            .filter(|v| v >> 8 == i as u64)
            .collect();
        assert_eq!(u64s(&k.got), want, "output {}", i);
    }
}

#[test]
fn map_changes_the_payload_and_keeps_the_handshake() {
    let mut m = ModuleBuilder::new("map_t");
    let s = stream::input(&mut m, "s", &Layout::new(&[("a", 4), ("b", 4)]));
    let sum = s.field("a") + s.field("b");
    let l2 = Layout::new(&[("sum", 4)]);
    let p = l2.pack(&[("sum", sum)]);
    let s = s.map(&mut m, "add", &p, &l2);
    stream::output(&mut m, "m", s);
    let top = m.finish().unwrap();
    let items: Vec<u64> = (0..100).map(|i| (i * 37) % 256).collect();
    let mut a = [src(&top, "s", &items, 0.6)];
    let mut b = [sink(&top, "m", 0.6)];
    run(&top, &mut a, &mut b, 1000, 3);
    let want: Vec<u64> = items.iter().map(|v| ((v & 15) + (v >> 4)) & 15).collect();
    assert_eq!(u64s(&b[0].got), want);
}

/// A counter FSM: idle until `go_i`, then counts `n_i` beats in `run`, one cycle in `done`.
/// Its last branch is `otherwise` (a transition that names no state), or with `in_states`
/// `elsewhen(done)`, so every transition is made in a named state.
fn counter_fsm_with(in_states: bool) -> Arc<Module> {
    let mut m = ModuleBuilder::new("fsm_t");
    let go = m.input("go_i", 1);
    let n = m.input("n_i", 4);
    let st = m.fsm("state_q", &["idle", "run", "done"]);
    let cnt = m.reg("cnt_q", 4, Some(0));
    let dbg = m.wire_default("dbg", &Expr::lit(2, 0));
    let (idle, run) = (st.is("idle"), st.is("run"));
    m.when(&idle, |m| {
        m.when(&go, |m| {
            st.go(m, "run");
            m.set(&cnt, &Expr::zero(4));
            m.set_wire(&dbg, &Expr::lit(2, 1));
        });
    })
    .elsewhen(&mut m, &run, |m| {
        m.set(&cnt, &(cnt.q() + Expr::lit(4, 1)));
        m.when(&cnt.q().eq(&n), |m| st.go(m, "done"));
        m.set_wire(&dbg, &Expr::lit(2, 2));
    })
    .otherwise(&mut m, |m| {
        m.when(&(&st.is("done") | &Expr::lit(1, !in_states as u64)), |m| {
            st.go(m, "idle");
        });
        m.set_wire(&dbg, &Expr::lit(2, 3));
    });
    m.output_expr("state_o", &st.q());
    m.output_expr("cnt_o", &cnt.q());
    m.output_expr("dbg_o", &dbg.expr());
    m.finish().unwrap()
}

fn counter_fsm() -> Arc<Module> {
    counter_fsm_with(false)
}

#[test]
fn when_chains_and_fsm_match_a_software_model() {
    for in_states in [false, true] {
        fsm_matches_the_model(&counter_fsm_with(in_states));
    }
}

fn fsm_matches_the_model(top: &Arc<Module>) {
    let mut sim = Sim::new(top).unwrap();
    sim.reset(2);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let (mut st, mut cnt) = (0u64, 0u64);
    for _ in 0..3000 {
        let go = rng.gen_bool(0.3) as u64;
        let n = rng.gen_range(0..16u64);
        sim.set_u64("go_i", go).unwrap();
        sim.set_u64("n_i", n).unwrap();
        sim.eval();
        assert_eq!(sim.get_u64("state_o"), st);
        assert_eq!(sim.get_u64("cnt_o"), cnt);
        let dbg = match st {
            0 if go == 1 => 1,
            0 => 0,
            1 => 2,
            _ => 3,
        };
        assert_eq!(sim.get_u64("dbg_o"), dbg);
        match st {
            0 if go == 1 => {
                st = 1;
                cnt = 0;
            }
            1 => {
                if cnt == n {
                    st = 2;
                }
                cnt = (cnt + 1) % 16;
            }
            2 => st = 0,
            _ => {}
        }
        sim.tick();
    }
}

#[test]
fn the_harness_catches_a_dropped_beat_and_a_withdrawn_valid() {
    // A "slice" that loses its beat when the consumer is not ready.
    let mut m = ModuleBuilder::new("bad_t");
    let l = Layout::data(8);
    let s = stream::input(&mut m, "s", &l);
    let v = m.reg("v_q", 1, Some(0));
    let d = m.reg("d_q", 8, None);
    m.next(&v, &s.valid, None);
    m.next(&d, &s.payload, None);
    s.accept(&mut m, &Expr::ones(1));
    let o = stream::Stream::new(&mut m, "o", &v.q(), &d.q(), &l);
    let r = o.ready();
    stream::output(&mut m, "m", o);
    m.unused(&r);
    let top = m.finish().unwrap();
    let items: Vec<u64> = (0..50).collect();
    let res = std::panic::catch_unwind(|| {
        let mut a = [src(&top, "s", &items, 0.9)];
        let mut b = [sink(&top, "m", 0.5)];
        run(&top, &mut a, &mut b, 400, 1);
        assert_eq!(u64s(&b[0].got), items);
    });
    assert!(res.is_err(), "a lossy slice passed the stream checks");
}

#[test]
fn builder_errors_name_the_generator_line() {
    let mut m = ModuleBuilder::new("err_t");
    let s = stream::input(&mut m, "s", &Layout::new(&[("a", 4)]));
    let bad = s.field("nope");
    m.output_expr("x_o", &bad);
    let r = m.reg("r_q", 4, Some(0));
    m.set(&r, &Expr::zero(3));
    let n = m.wire_decl("w", 1);
    m.set_wire(&n, &Expr::zero(1));
    s.accept(&mut m, &Expr::ones(1));
    let err = m.finish().unwrap_err().to_string();
    assert!(err.contains("no field `nope`"), "{err}");
    assert!(err.contains("register `r_q` is 4 bits"), "{err}");
    assert!(
        err.contains("was not declared with `wire_default`"),
        "{err}"
    );
    assert_eq!(err.matches("stream_tests.rs:").count(), 3, "{err}");
}

#[test]
fn fsm_codes_are_localparams_in_the_verilog() {
    let top = counter_fsm();
    let text = &super::emit::emit_design(&top).unwrap()[0].1;
    assert!(
        text.contains("localparam [1:0] STATE_IDLE = 2'd0;"),
        "{text}"
    );
    assert!(
        text.contains("localparam [1:0] STATE_DONE = 2'd2;"),
        "{text}"
    );
    assert!(text.contains("(state_q == STATE_RUN)"), "{text}");
    // The unnamed code 3 leaves by the `otherwise` branch, as before.
    assert!(
        text.contains("      default: begin\n        state_d = STATE_IDLE;\n      end"),
        "{text}"
    );
}

#[test]
fn an_fsm_with_a_transition_in_no_state_keeps_its_mux_chain() {
    let mut m = ModuleBuilder::new("fsm_any_t");
    let go = m.input("go_i", 1);
    let stop = m.input("stop_i", 1);
    let st = m.fsm("state_q", &["idle", "run"]);
    m.when(&(&st.is("idle") & &go), |m| st.go(m, "run"));
    m.when(&stop, |m| st.go(m, "idle"));
    m.output_expr("state_o", &st.q());
    let top = m.finish().unwrap();
    let text = &super::emit::emit_design(&top).unwrap()[0].1;
    assert!(!text.contains("case ("), "{text}");
    assert!(text.contains("assign state_d ="), "{text}");
    let mut sim = Sim::new(&top).unwrap();
    sim.reset(1);
    for (go, stop, want) in [(1, 0, 1), (0, 0, 1), (1, 1, 0), (0, 0, 0)] {
        sim.set_u64("go_i", go).unwrap();
        sim.set_u64("stop_i", stop).unwrap();
        sim.tick();
        sim.eval();
        assert_eq!(sim.get_u64("state_o"), want);
    }
}

#[test]
fn fsm_next_state_is_a_case_when_every_transition_names_its_state() {
    let top = counter_fsm_with(true);
    let text = &super::emit::emit_design(&top).unwrap()[0].1;
    for want in [
        "  reg  [1:0] state_d;",
        "    state_d = state_q;\n    case (state_q)\n      STATE_IDLE: begin\n        if (go_i) begin",
        "      STATE_RUN: begin\n        if ((cnt_q == n_i)) begin\n          state_d = STATE_DONE;",
        "      STATE_DONE: begin\n        state_d = STATE_IDLE;\n      end",
        "      default: ;\n    endcase",
        "state_q <= state_d;",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    // Loaded every cycle: the case holds the state itself.
    assert!(!text.contains("state_en"), "{text}");
}
