//! The N-channel harness on a four-channel unit: a request proxy that forwards reads to a
//! memory and returns the memory's (reordered) answers.

use super::dut::{Dut, SimDut};
use super::harness::{Bench, Channel, Expect, Fields, Harness, HarnessConfig, Responder};
use super::memory::{MemFields, MemResponder, MemTiming};
use super::stream::Beat;
use super::test_util::assert_clean;
use crate::hdl::stream::{self, Layout};
use crate::hdl::{Expr, Module, ModuleBuilder};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::Arc;

/// `c` (addr, tag) -> FIFO -> `mreq`; `mresp` (data, tag) -> skid -> `r`. With `fault`, bit 3
/// of the data of tag 5 is flipped on the way back.
fn proxy(fault: bool) -> Arc<Module> {
    let mut m = ModuleBuilder::new(if fault { "proxy_bad" } else { "proxy" });
    m.header("Spec: docs/FORMATS.md (harness test fixture)");
    let c = stream::input(&mut m, "c", &Layout::new(&[("addr", 16), ("tag", 4)]));
    let q = stream::fifo(&mut m, "rq", 4, c);
    stream::output(&mut m, "mreq", q);
    let l = Layout::new(&[("data", 32), ("tag", 4)]);
    let resp = stream::input(&mut m, "mresp", &l);
    let s = stream::skid(&mut m, "rs", resp);
    let s = if fault {
        let flip = s
            .field("tag")
            .eq_lit(5)
            .select(&Expr::lit(32, 8), &Expr::zero(32));
        let p = l.pack(&[("data", s.field("data") ^ flip), ("tag", s.field("tag"))]);
        s.map(&mut m, "bad", &p, &l)
    } else {
        s
    };
    stream::output(&mut m, "r", s);
    m.finish().unwrap()
}

fn contents(addr: u64) -> Vec<u32> {
    vec![(addr.wrapping_mul(0x9e37_79b9) ^ 0x5a5a_0000) as u32]
}

fn channels(top: &Module) -> Vec<Channel> {
    let find = |p: &str| {
        let s = top.streams.iter().find(|s| s.prefix == p).expect("stream");
        Channel::from_ports(s)
    };
    vec![
        find("c"),
        find("mreq"),
        find("mresp"),
        find("r").tagged("tag"),
    ]
}

const C: usize = 0;
const MREQ: usize = 1;
const MRESP: usize = 2;
const R: usize = 3;

/// Issues `total` reads with rotating tags (a tag is reused only after its answer came
/// back) and predicts every memory request and every answer.
struct ProxyBench {
    rng: ChaCha8Rng,
    total: u64,
    issued: u64,
    addr_of: HashMap<u32, u64>,
    /// Planted bench defects: a beat without its `tag` field, or with `addr` too wide.
    drop_tag: bool,
    swap: bool,
}

impl ProxyBench {
    fn new(seed: u64, total: u64) -> ProxyBench {
        ProxyBench {
            rng: ChaCha8Rng::seed_from_u64(seed),
            total,
            issued: 0,
            addr_of: HashMap::new(),
            drop_tag: false,
            swap: false,
        }
    }
}

impl Bench for ProxyBench {
    fn next_input(&mut self, ch: usize, _exp: &mut Expect<'_>) -> Option<Beat> {
        let tag = (self.issued % 16) as u32;
        if ch != C || self.issued == self.total || self.addr_of.contains_key(&tag) {
            return None;
        }
        let addr = self.rng.gen_range(0..1u64 << 16);
        self.issued += 1;
        let beat = Beat::new().num("addr", addr).num("tag", tag.into());
        Some(if self.swap {
            Beat::new().num("addr", tag.into()).num("tag", addr)
        } else if self.drop_tag {
            Beat::new().num("addr", addr)
        } else {
            beat
        })
    }
    fn accepted(&mut self, ch: usize, b: &Beat, _cycle: u64, exp: &mut Expect<'_>) {
        match ch {
            C => {
                let tag = b.u64("tag") as u32;
                self.addr_of.insert(tag, b.u64("addr"));
                exp.push(MREQ, self.issued - 1, 0, b.clone());
            }
            MRESP => {
                let tag = b.u64("tag") as u32;
                let addr = self.addr_of[&tag];
                let r = Beat::new()
                    .with("data", contents(addr))
                    .num("tag", tag.into());
                exp.push(R, tag as u64, 0, r);
            }
            _ => {}
        }
    }
    fn observed(&mut self, ch: usize, b: &Fields<'_>, _cycle: u64, _exp: &mut Expect<'_>) {
        if ch == R {
            self.addr_of.remove(&(b.u64("tag") as u32));
        }
    }
    fn finished(&self) -> bool {
        self.issued == self.total
    }
}

fn memory(reorder: bool) -> MemResponder {
    let fields = MemFields {
        addr: "addr",
        we: None,
        wdata: None,
        tag: Some(("tag", "tag")),
        rdata: "data",
    };
    let timing = MemTiming {
        min_latency: 1,
        max_latency: 40,
        reorder,
        write_ack: false,
    };
    MemResponder::new(fields, timing, 1).with_init(contents)
}

fn run(dut: &mut dyn Dut, top: &Module, n: u64, seed: u64) -> Result<super::RunStats, String> {
    let mut h = Harness::new(channels(top));
    h.respond("mreq", "mresp", Box::new(memory(true)))?;
    let mut bench = ProxyBench::new(seed, n);
    let cfg = HarnessConfig {
        seed,
        channel_rates: vec![("mresp".into(), 0.5), ("r".into(), 0.4)],
        ..HarnessConfig::default()
    };
    h.run(dut, &mut bench, &cfg, &mut |_| {})
}

#[test]
fn four_channels_with_a_reordering_memory_match() {
    let top = proxy(false);
    let mut dut = SimDut::new(&top).unwrap();
    let st = run(&mut dut, &top, 5000, 3).unwrap();
    assert_clean(&st, "four channels");
    // 5000 requests in, 5000 answers in; 5000 memory requests and 5000 answers out.
    assert_eq!((st.beats_in, st.beats_out), (10_000, 10_000));
}

#[test]
fn a_corrupted_answer_is_caught_on_its_channel() {
    let top = proxy(true);
    let mut dut = SimDut::new(&top).unwrap();
    let st = run(&mut dut, &top, 2000, 3).unwrap();
    let m = st.first_mismatch.expect("flipped data bit must be caught");
    assert_eq!((m.channel.as_str(), m.field.as_str()), ("r", "r_data_o"));
    assert_eq!(m.transfer, 5, "the tag-5 answer");
}

/// Takes requests and never answers.
struct BlackHole(Option<u64>);

impl Responder for BlackHole {
    fn request(&mut self, _b: &Fields<'_>, cycle: u64, _rng: &mut ChaCha8Rng) {
        self.0.get_or_insert(cycle);
    }
    fn respond(&mut self, _cycle: u64, _rng: &mut ChaCha8Rng) -> Option<Beat> {
        None
    }
    fn outstanding(&self) -> usize {
        self.0.is_some() as usize
    }
    fn oldest(&self) -> Option<u64> {
        self.0
    }
}

#[test]
fn hangs_name_the_channel() {
    let top = proxy(false);
    let mut dut = SimDut::new(&top).unwrap();
    let mut h = Harness::new(channels(&top));
    h.respond("mreq", "mresp", Box::new(BlackHole(None)))
        .unwrap();
    let mut bench = ProxyBench::new(1, 10);
    let cfg = HarnessConfig {
        hang_cycles: 200,
        ..HarnessConfig::default()
    };
    let e = h.run(&mut dut, &mut bench, &cfg, &mut |_| {}).unwrap_err();
    assert!(e.contains("never answered on `mresp`"), "{e}");
    // Wrong wiring is refused up front.
    let mut h = Harness::new(channels(&top));
    let e = h
        .respond("c", "mresp", Box::new(memory(false)))
        .unwrap_err();
    assert!(e.contains("requests must come out"), "{e}");
}

#[test]
fn memory_records_writes_and_answers_in_order() {
    let fields = MemFields {
        addr: "addr",
        we: Some("we"),
        wdata: Some("wdata"),
        tag: None,
        rdata: "data",
    };
    let ch = Channel::new(
        "mreq",
        crate::hdl::Dir::Out,
        "v",
        "r",
        &[("addr", "a"), ("we", "w"), ("wdata", "d")],
    );
    let mut mem = MemResponder::new(fields, MemTiming::default(), 2);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for (k, b) in [
        [vec![7], vec![1], vec![1, 2]],
        [vec![7], vec![0], vec![0, 0]],
        [vec![9], vec![0], vec![0, 0]],
    ]
    .iter()
    .enumerate()
    {
        mem.request(&Fields::new(&ch, b), k as u64, &mut rng);
    }
    assert_eq!(mem.writes(), &[(7, vec![1, 2])]);
    assert_eq!(mem.outstanding(), 2);
    let mut got = Vec::new();
    for c in 0..100 {
        if let Some(b) = mem.respond(c, &mut rng) {
            got.push(b.get("data").unwrap_or(&[]).to_vec());
        }
    }
    assert_eq!(
        got,
        vec![vec![1, 2], vec![0, 0]],
        "read-after-write, then in order"
    );
}

#[test]
fn a_beat_missing_a_field_or_too_wide_for_one_is_refused() {
    let top = proxy(false);
    for (drop_tag, swap, want) in [
        (true, false, "lacks field `tag`"),
        (false, true, "field `tag` is wider than its 4 bits"),
    ] {
        let mut dut = SimDut::new(&top).unwrap();
        let mut h = Harness::new(channels(&top));
        h.respond("mreq", "mresp", Box::new(memory(true))).unwrap();
        let mut bench = ProxyBench::new(5, 50);
        bench.drop_tag = drop_tag;
        bench.swap = swap;
        let e = h
            .run(&mut dut, &mut bench, &HarnessConfig::default(), &mut |_| {})
            .unwrap_err();
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn verilator_runs_the_same_bench() {
    let top = proxy(false);
    let mut dut = super::vdut::VerilatorDut::new(&top, false).unwrap();
    let st = run(&mut dut, &top, 5000, 9).unwrap();
    assert!(st.first_mismatch.is_none());
}
