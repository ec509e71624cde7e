//! Pipelines of every policy in the native interpreter: every beat once, in order, with the
//! value each stage computes, under random gaps and back-pressure; one beat per cycle
//! when nothing stalls; an iterative stage holds its beat.

use super::pipe::{Pipeline, Policy, Stage};
use super::stream::{self, Layout};
use super::stream_tests::{run, sink, src, u64s};
use super::{Expr, Module, ModuleBuilder};
use std::sync::Arc;

/// `x -> x + 1 -> (x + 1) * 2 mod 256`; when `iterate`, stage 2 then adds 1 in each of
/// `(x + 1) mod 4` more cycles, holding its beat until it is done, and stage 1 is cut.
fn three_stages(policy: Policy, iterate: bool) -> Arc<Module> {
    let mut m = ModuleBuilder::new("pipe_t");
    let s = stream::input(&mut m, "s", &Layout::data(8));
    let out = stream::output_port(&mut m, "m");
    let x = s.field("data");
    let mut p = Pipeline::new(&mut m, "p", policy, &s.valid);
    let s1 = p.stage(&mut m, "inc");
    let a = s1.reg(&mut m, "a_q", &(&x + &Expr::lit(8, 1)));
    let s2 = p.stage(&mut m, "dbl");
    let dbl = Expr::cat(&[a.slice(0, 7), Expr::zero(1)]);
    let b = if iterate {
        let c = m.reg("cnt_q", 2, Some(0));
        let b = m.reg("b_q", 8, None);
        let busy = m.wire("busy", &(&s2.valid() & &!c.q().eq_lit(0)));
        let en = &s2.load() | &busy;
        let c_next = s2
            .load()
            .select(&a.slice(0, 2), &(&c.q() - &Expr::lit(2, 1)));
        m.next(&c, &c_next, Some(&en));
        let b_next = s2.load().select(&dbl, &(&b.q() + &Expr::lit(8, 1)));
        m.next(&b, &b_next, Some(&en));
        p.hold(&mut m, &s2, &c.q().eq_lit(0));
        p.cut(&s1);
        b.q()
    } else {
        s2.reg(&mut m, "b_q", &dbl)
    };
    let s3 = p.stage(&mut m, "out");
    let r = s3.reg(&mut m, "r_q", &b);
    p.finish_ports(&mut m, s, out, &[("data", r)]);
    m.finish().unwrap()
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
            for (seed, pv, pr) in [(1, 0.5, 0.5), (2, 0.9, 0.3), (3, 0.3, 0.9), (4, 1.0, 1.0)] {
                let mut a = [src(&top, "s", &items, pv)];
                let mut b = [sink(&top, "m", pr)];
                run(&top, &mut a, &mut b, 4000, seed);
                assert_eq!(
                    u64s(&b[0].got),
                    expected(&items, iterate),
                    "{:?} iterate={} seed {}",
                    policy,
                    iterate,
                    seed
                );
            }
        }
    }
}

#[test]
fn every_policy_takes_one_beat_per_cycle() {
    let items: Vec<u64> = (0..200).collect();
    for policy in [Policy::Global, Policy::Bubble, Policy::Skid] {
        let top = three_stages(policy, false);
        let mut a = [src(&top, "s", &items, 1.0)];
        let mut b = [sink(&top, "m", 1.0)];
        // Three stages (four with the skid buffer) and two reset cycles of margin.
        run(&top, &mut a, &mut b, 200 + 4, 7);
        assert_eq!(b[0].got.len(), 200, "{:?}", policy);
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
    let mut m = ModuleBuilder::new("pipe_sm");
    let s = stream::input(&mut m, "s", &Layout::data(8));
    let out = stream::output_port(&mut m, "m");
    let x = s.field("data");
    let mut p = Pipeline::new(&mut m, "p", policy, &s.valid);
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
        for (seed, pv, pr) in [(1, 0.5, 0.5), (2, 0.9, 0.3), (3, 0.3, 0.9), (4, 1.0, 1.0)] {
            let mut a = [src(&top, "s", &items, pv)];
            let mut b = [sink(&top, "m", pr)];
            run(&top, &mut a, &mut b, 4000, seed);
            assert_eq!(u64s(&b[0].got), items, "{:?} seed {}", policy, seed);
        }
        // Two cycles per byte when nothing stalls.
        let mut a = [src(&top, "s", &items, 1.0)];
        let mut b = [sink(&top, "m", 1.0)];
        run(&top, &mut a, &mut b, 2 * 100 + 5, 5);
        assert!((100..=102).contains(&b[0].got.len()), "{:?}", policy);
    }
}

/// Pairs of nibble beats shifted into one byte in the output stage itself (`gather`), with
/// a count of the nibbles so far; policy `policy`.
fn nibble_pairs(policy: Policy) -> Arc<Module> {
    let mut m = ModuleBuilder::new("pipe_ga");
    let s = stream::input(&mut m, "s", &Layout::data(4));
    let out = stream::output_port(&mut m, "m");
    let x = s.field("data");
    let mut p = Pipeline::new(&mut m, "p", policy, &s.valid);
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
        for (seed, pv, pr) in [(1, 0.5, 0.5), (2, 0.9, 0.3), (3, 0.3, 0.9), (4, 1.0, 1.0)] {
            let mut a = [src(&top, "s", &nibbles, pv)];
            let mut b = [sink(&top, "m", pr)];
            run(&top, &mut a, &mut b, 4000, seed);
            assert_eq!(u64s(&b[0].got), bytes, "{:?} seed {}", policy, seed);
        }
        // One nibble per cycle when nothing stalls: a byte every two cycles.
        let mut a = [src(&top, "s", &nibbles, 1.0)];
        let mut b = [sink(&top, "m", 1.0)];
        run(&top, &mut a, &mut b, 2 * 100 + 3, 5);
        assert!((99..=101).contains(&b[0].got.len()), "{:?}", policy);
    }
    let err = refused(Policy::Global, false, |m, p, st| {
        p.gather(m, st, &Expr::ones(1))
    });
    assert!(err.contains("cannot gather into stage `one`"), "{}", err);
}

/// An iterative stage `it` (the beat `x` becomes `2x`, plus one in each of `x mod 4` more
/// cycles) that beats with bit 2 set bypass, and an output stage; policy `policy`.
fn bypassed(policy: Policy) -> Arc<Module> {
    let mut m = ModuleBuilder::new("pipe_by");
    let s = stream::input(&mut m, "s", &Layout::data(8));
    let out = stream::output_port(&mut m, "m");
    let x = s.field("data");
    let mut p = Pipeline::new(&mut m, "p", policy, &s.valid);
    let it = p.stage(&mut m, "it");
    let c = m.reg("cnt_q", 2, Some(0));
    let b = m.reg("b_q", 8, None);
    let busy = m.wire("busy", &(&it.valid() & &!c.q().eq_lit(0)));
    let en = &it.load() | &busy;
    let c_next = it
        .load()
        .select(&x.slice(0, 2), &(&c.q() - &Expr::lit(2, 1)));
    m.next(&c, &c_next, Some(&en));
    let dbl = Expr::cat(&[x.slice(0, 7), Expr::zero(1)]);
    let b_next = it.load().select(&dbl, &(&b.q() + &Expr::lit(8, 1)));
    m.next(&b, &b_next, Some(&en));
    p.hold(&mut m, &it, &c.q().eq_lit(0));
    p.bypass(&mut m, &it, &x.bit(2));
    let st = p.stage(&mut m, "out");
    let r = st.reg(&mut m, "r_q", &it.valid().select(&b.q(), &x));
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
        for (seed, pv, pr) in [(1, 0.5, 0.5), (2, 0.9, 0.3), (3, 0.3, 0.9), (4, 1.0, 1.0)] {
            let mut a = [src(&top, "s", &items, pv)];
            let mut b = [sink(&top, "m", pr)];
            run(&top, &mut a, &mut b, 6000, seed);
            assert_eq!(u64s(&b[0].got), want, "{:?} seed {}", policy, seed);
        }
        // Bypassed beats alone go through at one per cycle.
        let fours: Vec<u64> = (0..100).map(|i| 4 | ((i << 3) % 256)).collect();
        let mut a = [src(&top, "s", &fours, 1.0)];
        let mut b = [sink(&top, "m", 1.0)];
        run(&top, &mut a, &mut b, 100 + 4, 6);
        assert_eq!(u64s(&b[0].got), fours, "{:?}", policy);
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
