//! Pipelines of every policy in the native interpreter: every beat once, in order, with the
//! value each stage computes, under random gaps and back-pressure; one beat per cycle
//! when nothing stalls; an iterative stage holds its beat.

use super::pipe::{Pipeline, Policy, Stage};
use super::stream::{self, Layout};
use super::stream_tests::{run, sink, src, u64s};
use super::{Expr, Module, ModuleBuilder};
use std::sync::Arc;

/// A test design's frame: module `name`, an input stream `s` of one `width`-bit field
/// `data` (returned as `x`), the output port `m` and a pipeline `p` of `policy` fed by `s`.
fn frame(
    name: &str,
    width: u32,
    policy: Policy,
) -> (
    ModuleBuilder,
    stream::Stream,
    stream::OutPort,
    Expr,
    Pipeline,
) {
    let mut m = ModuleBuilder::new(name);
    let s = stream::input(&mut m, "s", &Layout::data(width));
    let out = stream::output_port(&mut m, "m");
    let x = s.field("data");
    let p = Pipeline::new(&mut m, "p", policy, &s.valid);
    (m, s, out, x, p)
}

/// An iterative stage's work: `st` loads `start` and then adds one in each of `count` more
/// cycles. Returns the value and when it is done (the count is spent).
fn counting(m: &mut ModuleBuilder, st: &Stage, count: &Expr, start: &Expr) -> (Expr, Expr) {
    let c = m.reg("cnt_q", 2, Some(0));
    let b = m.reg("b_q", 8, None);
    let busy = m.wire("busy", &(&st.valid() & &!c.q().eq_lit(0)));
    let en = &st.load() | &busy;
    let c_next = st.load().select(count, &(&c.q() - &Expr::lit(2, 1)));
    m.next(&c, &c_next, Some(&en));
    let b_next = st.load().select(start, &(&b.q() + &Expr::lit(8, 1)));
    m.next(&b, &b_next, Some(&en));
    (b.q(), c.q().eq_lit(0))
}

/// `x -> x + 1 -> (x + 1) * 2 mod 256`; when `iterate`, stage 2 then adds 1 in each of
/// `(x + 1) mod 4` more cycles, holding its beat until it is done, and stage 1 is cut.
fn three_stages(policy: Policy, iterate: bool) -> Arc<Module> {
    three_stages_copies(policy, iterate, 0)
}

/// [`three_stages`] with the first and last stages' registers loaded in slices by `copies`
/// copies of their load enables ([`Pipeline::load_copies`]); none when 0.
fn three_stages_copies(policy: Policy, iterate: bool, copies: usize) -> Arc<Module> {
    let (mut m, s, out, x, mut p) = frame("pipe_t", 8, policy);
    let s1 = p.stage(&mut m, "inc");
    let lanes_reg = |m: &mut ModuleBuilder, p: &mut Pipeline, st: &Stage, name, d: &Expr| {
        if copies == 0 {
            return st.reg(m, name, d);
        }
        let loads = p.load_copies(m, st, copies);
        st.reg_lanes(m, name, d, &loads)
    };
    let a = lanes_reg(&mut m, &mut p, &s1, "a_q", &(&x + &Expr::lit(8, 1)));
    let s2 = p.stage(&mut m, "dbl");
    let dbl = Expr::cat(&[a.slice(0, 7), Expr::zero(1)]);
    let b = if iterate {
        let (b, done) = counting(&mut m, &s2, &a.slice(0, 2), &dbl);
        p.hold(&mut m, &s2, &done);
        p.cut(&s1);
        b
    } else {
        s2.reg(&mut m, "b_q", &dbl)
    };
    let s3 = p.stage(&mut m, "out");
    let r = lanes_reg(&mut m, &mut p, &s3, "r_q", &b);
    p.finish_ports(&mut m, s, out, &[("data", r)]);
    m.finish().unwrap()
}

#[test]
fn load_copies_load_a_register_in_slices_and_keep_every_beat() {
    let items: Vec<u64> = (0..300).map(|i| (i * 53 + 11) % 256).collect();
    for policy in [Policy::Bubble, Policy::Skid] {
        for iterate in [false, true] {
            // 3 copies: slices of 3, 3 and 2 bits.
            let top = three_stages_copies(policy, iterate, 3);
            let what = format!("{:?} iterate={} with load copies", policy, iterate);
            delivers(&top, &items, &expected(&items, iterate), 4000, &what);
            let v = crate::hdl::emit::emit_module(&top);
            for line in [
                "if (out_load_c2) r_q[7:6] <= r_d[7:6];",
                "if (inc_load_c0) a_q[2:0] <= a_d[2:0];",
                "assign out_load_c1 = ",
            ] {
                assert!(v.contains(line), "{what}: no `{line}` in\n{v}");
            }
            assert!(v.contains("(* keep *) always @(posedge clk_i)"), "{what}");
        }
    }
    assert_eq!(
        at_full_rate(
            &three_stages_copies(Policy::Bubble, false, 4),
            &items,
            304,
            7
        )
        .len(),
        300
    );
}

#[test]
fn a_register_cannot_have_more_slices_than_bits() {
    let mut m = ModuleBuilder::new("t");
    let x = m.input("x", 2);
    let r = m.reg("r_q", 2, None);
    let en: Vec<Expr> = (0..3).map(|k| m.input(&format!("e{k}"), 1)).collect();
    m.next_lanes(&r, &x, &en);
    let e = m.finish().unwrap_err();
    assert!(e.problems[0].contains("3 load enables"), "{:?}", e.problems);
}

/// Runs `items` through `top` (stream `s` in, `m` out) under four stall patterns (random
/// input gaps and output back-pressure) and checks that `want` comes out; `what` names the
/// case in a failure.
fn delivers(top: &Arc<Module>, items: &[u64], want: &[u64], cycles: usize, what: &str) {
    for (seed, pv, pr) in [(1, 0.5, 0.5), (2, 0.9, 0.3), (3, 0.3, 0.9), (4, 1.0, 1.0)] {
        let mut a = [src(top, "s", items, pv)];
        let mut b = [sink(top, "m", pr)];
        run(top, &mut a, &mut b, cycles, seed);
        assert_eq!(u64s(&b[0].got), want, "{} seed {}", what, seed);
    }
}

/// The values out of `top` after `cycles` cycles with no gap and no stall.
fn at_full_rate(top: &Arc<Module>, items: &[u64], cycles: usize, seed: u64) -> Vec<u64> {
    let mut a = [src(top, "s", items, 1.0)];
    let mut b = [sink(top, "m", 1.0)];
    run(top, &mut a, &mut b, cycles, seed);
    u64s(&b[0].got)
}

fn expected(items: &[u64], iterate: bool) -> Vec<u64> {
    let extra = |x: u64| if iterate { (x + 1) % 4 } else { 0 };
    items
        .iter()
        .map(|x| ((x + 1) * 2 + extra(*x)) % 256)
        .collect()
}

#[test]
fn every_policy_delivers_every_beat_in_order() {
    let items: Vec<u64> = (0..300).map(|i| (i * 37 + 5) % 256).collect();
    for policy in [Policy::Global, Policy::Bubble, Policy::Skid] {
        for iterate in [false, true] {
            if iterate && policy == Policy::Global {
                continue;
            }
            let top = three_stages(policy, iterate);
            let what = format!("{:?} iterate={}", policy, iterate);
            delivers(&top, &items, &expected(&items, iterate), 4000, &what);
        }
    }
}

#[test]
fn every_policy_takes_one_beat_per_cycle() {
    let items: Vec<u64> = (0..200).collect();
    for policy in [Policy::Global, Policy::Bubble, Policy::Skid] {
        let top = three_stages(policy, false);
        // Three stages (four with the skid buffer) and two reset cycles of margin.
        let got = at_full_rate(&top, &items, 200 + 4, 7);
        assert_eq!(got.len(), 200, "{:?}", policy);
    }
}

/// The error of a pipeline of stages `one` and `two` (only `one` when `two` is false) of
/// `policy` on which `misuse` calls a flow the policy or the shape refuses.
fn refused(
    policy: Policy,
    two: bool,
    misuse: impl FnOnce(&mut ModuleBuilder, &mut Pipeline, &Stage),
) -> String {
    let mut m = ModuleBuilder::new("pipe_bad");
    let s = stream::input(&mut m, "s", &Layout::data(4));
    let mut p = Pipeline::new(&mut m, "p", policy, &s.valid);
    let st = p.stage(&mut m, "one");
    if two {
        let _ = p.stage(&mut m, "two");
    }
    misuse(&mut m, &mut p, &st);
    let _ = p.finish(&mut m, &Expr::ones(1));
    s.accept(&mut m, &Expr::ones(1));
    m.finish().unwrap_err().to_string()
}

#[test]
fn a_global_pipeline_cannot_hold_a_stage() {
    let err = refused(Policy::Global, false, |m, p, st| {
        p.hold(m, st, &Expr::ones(1))
    });
    assert!(
        err.contains("cannot hold, repeat or filter stage `one`"),
        "{}",
        err
    );
}

#[test]
fn the_control_is_emitted_as_a_section_of_its_own() {
    let top = three_stages(Policy::Bubble, true);
    let files = super::emit::emit_design(&top).unwrap();
    let v = &files[0].1;
    assert!(v.contains("// Pipeline `p`: 3 stage(s), each stage loads when it is free"));
    assert!(v.contains("assign dbl_free = "), "{}", v);
    assert!(v.contains("assign inc_load = "));
}

/// Each byte split into two nibble beats (`repeat`), merged back (`filter` + `leaves`):
/// the output equals the input.
fn split_merge(policy: Policy) -> Arc<Module> {
    let (mut m, s, out, x, mut p) = frame("pipe_sm", 8, policy);
    let sp = p.stage(&mut m, "split");
    let byte = sp.reg(&mut m, "byte_q", &x);
    let half = m.reg("half_q", 1, Some(0));
    let mg = p.stage(&mut m, "merge");
    // A step of the split stage is a load of the merge stage.
    let step = mg.load();
    let half_next = sp.load().select(&Expr::zero(1), &!half.q());
    m.next(&half, &half_next, Some(&(&sp.load() | &step)));
    p.repeat(&mut m, &sp, &half.q());
    let nib = half.q().select(&byte.slice(4, 4), &byte.slice(0, 4));
    let nib_q = mg.reg(&mut m, "nib_q", &nib);
    let last_q = mg.reg(&mut m, "last_q", &half.q());
    p.filter(&mut m, &mg, &last_q);
    let gone = p.leaves(&mut m, &mg);
    let lo = m.reg_next("lo_q", None, &nib_q, Some(&(&gone & &!last_q.clone())));
    let st = p.stage(&mut m, "out");
    let r = st.reg(&mut m, "r_q", &Expr::cat(&[nib_q, lo]));
    p.finish_ports(&mut m, s, out, &[("data", r)]);
    m.finish().unwrap()
}

#[test]
fn repeat_and_filter_stages_split_and_merge_beats() {
    let items: Vec<u64> = (0..300).map(|i| (i * 91 + 17) % 256).collect();
    for policy in [Policy::Bubble, Policy::Skid] {
        let top = split_merge(policy);
        delivers(&top, &items, &items, 4000, &format!("{:?}", policy));
        // Two cycles per byte when nothing stalls.
        let got = at_full_rate(&top, &items, 2 * 100 + 5, 5);
        assert!((100..=102).contains(&got.len()), "{:?}", policy);
    }
}

/// Pairs of nibble beats shifted into one byte in the output stage itself (`gather`), with
/// a count of the nibbles so far; policy `policy`.
fn nibble_pairs(policy: Policy) -> Arc<Module> {
    let (mut m, s, out, x, mut p) = frame("pipe_ga", 4, policy);
    let st = p.stage(&mut m, "out");
    let second = m.reg("second_q", 1, Some(0));
    m.next(&second, &!second.q(), Some(&st.load()));
    p.gather(&mut m, &st, &second.q());
    let byte = m.reg("byte_q", 8, None);
    m.next(
        &byte,
        &Expr::cat(&[x, byte.q().slice(4, 4)]),
        Some(&st.load()),
    );
    p.finish_ports(&mut m, s, out, &[("data", byte.q())]);
    m.finish().unwrap()
}

#[test]
fn a_gather_stage_merges_beats_without_a_register_in_front() {
    let nibbles: Vec<u64> = (0..400).map(|i| (i * 7 + 3) % 16).collect();
    let bytes: Vec<u64> = nibbles.chunks(2).map(|c| c[0] | (c[1] << 4)).collect();
    for policy in [Policy::Bubble, Policy::Skid] {
        let top = nibble_pairs(policy);
        delivers(&top, &nibbles, &bytes, 4000, &format!("{:?}", policy));
        // One nibble per cycle when nothing stalls: a byte every two cycles.
        let got = at_full_rate(&top, &nibbles, 2 * 100 + 3, 5);
        assert!((99..=101).contains(&got.len()), "{:?}", policy);
    }
    let err = refused(Policy::Global, false, |m, p, st| {
        p.gather(m, st, &Expr::ones(1))
    });
    assert!(err.contains("cannot gather into stage `one`"), "{}", err);
}

/// An iterative stage `it` (the beat `x` becomes `2x`, plus one in each of `x mod 4` more
/// cycles) that beats with bit 2 set bypass, and an output stage; policy `policy`.
fn bypassed(policy: Policy) -> Arc<Module> {
    let (mut m, s, out, x, mut p) = frame("pipe_by", 8, policy);
    let it = p.stage(&mut m, "it");
    let dbl = Expr::cat(&[x.slice(0, 7), Expr::zero(1)]);
    let (b, done) = counting(&mut m, &it, &x.slice(0, 2), &dbl);
    p.hold(&mut m, &it, &done);
    p.bypass(&mut m, &it, &x.bit(2));
    let st = p.stage(&mut m, "out");
    let r = st.reg(&mut m, "r_q", &it.valid().select(&b, &x));
    p.finish_ports(&mut m, s, out, &[("data", r)]);
    m.finish().unwrap()
}

#[test]
fn bypassed_beats_pass_an_iterative_stage_in_order() {
    let items: Vec<u64> = (0..400).map(|i| (i * 29 + 3) % 256).collect();
    let want: Vec<u64> = items
        .iter()
        .map(|x| {
            if x & 4 != 0 {
                *x
            } else {
                (2 * x + x % 4) % 256
            }
        })
        .collect();
    for policy in [Policy::Bubble, Policy::Skid] {
        let top = bypassed(policy);
        delivers(&top, &items, &want, 6000, &format!("{:?}", policy));
        // Bypassed beats alone go through at one per cycle.
        let fours: Vec<u64> = (0..100).map(|i| 4 | ((i << 3) % 256)).collect();
        assert_eq!(
            at_full_rate(&top, &fours, 100 + 4, 6),
            fours,
            "{:?}",
            policy
        );
    }
    let err = refused(Policy::Global, true, |m, p, st| {
        p.bypass(m, st, &Expr::ones(1))
    });
    assert!(err.contains("cannot bypass stage `one`"), "{}", err);
    let err = refused(Policy::Bubble, false, |m, p, st| {
        p.bypass(m, st, &Expr::ones(1))
    });
    assert!(err.contains("no next stage to bypass into"), "{}", err);
}
