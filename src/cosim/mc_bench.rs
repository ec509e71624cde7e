//! The memory-controller bench of the N-channel harness, shared by Buddy's splitter
//! (`cosim::buddy_mc`) and the PACT'12 MC path (`cosim::cpack_lossy_mc`).
//!
//! The design takes requests on one input channel and answers each on its `rsp` output, in
//! order; behind it, reactive memories ([`McMemory`]) take its reads and writes on request
//! (output) / response (input) channel pairs, answering after random latencies, reordered.
//! A system ([`McSystem`]) brings the model and the stimulus: it turns a request kind, drawn
//! from the run's mix, into the request's beats and the response beats the model gives,
//! counts what the design moves on the memory channels, picks up after a mid-run reset, and
//! compares the final memory contents with the model's. This module holds the rest: the
//! channels, the memories, the run ([`run_opts`]), its verdict ([`McRun::check`]) and the
//! timing measurement ([`measure`]), plus the pieces both systems' stimuli use (`Targets`,
//! `Poison`) and memory-image helpers.

use super::dut::Dut;
use super::harness::{Bench, Channel, Expect, Fields, Harness, HarnessConfig};
use super::memory::{MemFields, MemResponder, MemTiming, SharedMem};
use super::stream::{Beat, RunStats, Timing};
use crate::hdl::Module;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::hash::Hash;

/// The design's response channel (stream prefix).
const RSP: &str = "rsp";

/// One memory behind the design. Its requests carry the write enable, address and write
/// data as fields 0, 1 and 2.
#[derive(Clone, Debug)]
pub struct McMemory {
    /// The design's request channel to it (an output).
    pub req: &'static str,
    /// Its response channel into the design (an input).
    pub rsp: &'static str,
    /// The request field the response echoes, and the response field that carries it.
    pub tag: (&'static str, &'static str),
    /// Words of data (32 bits each) per address.
    pub words: usize,
}

impl McMemory {
    /// A memory with request channel `req`, response channel `rsp`, the tag echoed from
    /// request field `tag.0` into response field `tag.1`, and `words` data words.
    pub const fn new(
        req: &'static str,
        rsp: &'static str,
        tag: (&'static str, &'static str),
        words: usize,
    ) -> McMemory {
        McMemory {
            req,
            rsp,
            tag,
            words,
        }
    }
}

/// One request of the stimulus.
#[derive(Clone, Debug)]
pub struct McTxn {
    /// Its beats on the request channel, in order.
    pub input: Vec<Beat>,
    /// The beats the design must answer with on `rsp`, in order (the model's answer).
    pub expect: Vec<Beat>,
}

/// What one memory-controller system brings to the bench; a value is one run's stimulus
/// and model.
pub trait McSystem: Sized {
    /// The hardware's parameters.
    type Params;
    /// Counters of what moved: the design's (from its memory channels and counter
    /// outputs) or the model's.
    type Moved: Copy + Default + PartialEq + fmt::Debug;
    /// The requests made, by kind (and whatever else the system tallies).
    type Requests: Clone + fmt::Debug;
    /// Weights of the request kinds; kind 0 is the read that [`measure`] times.
    type Mix: Clone + fmt::Debug + AsRef<[u32]> + AsMut<[u32]>;
    /// Latency ranges in cycles of the memories, in [`McSystem::memories`] order.
    type Latencies: Clone + fmt::Debug + AsRef<[(u64, u64)]> + AsMut<[(u64, u64)]>;

    /// The default mix.
    const MIX: Self::Mix;
    /// The default latencies.
    const LATENCIES: Self::Latencies;
    /// Xored with the run's seed, the seed of the stimulus's random choices.
    const SEED: u64;
    /// The design's request channel (stream prefix).
    const REQUEST: &'static str;
    /// The design's cache as verdicts name it, and its hit, miss and merge counter outputs.
    const CACHE: (&'static str, [&'static str; 3]);

    /// The memories behind the design of `p`.
    fn memories(p: &Self::Params) -> Vec<McMemory>;
    /// Checks that the bench can run `p` and drives the design's configuration inputs.
    fn prepare(_p: &Self::Params, _dut: &mut dyn Dut) -> Result<(), String> {
        Ok(())
    }
    /// The stimulus and model of a run of `seed` over the memories `mems` (in
    /// [`McSystem::memories`] order); `rng` is the bench's random stream.
    fn new(
        p: &Self::Params,
        seed: u64,
        rng: &mut ChaCha8Rng,
        mems: Vec<SharedMem>,
    ) -> Result<Self, String>;
    /// The next request, of kind `kind`, as the model answers it. `Ok(None)`: none now;
    /// `Err`: what the model reported.
    fn next(&mut self, kind: usize, rng: &mut ChaCha8Rng) -> Result<Option<McTxn>, String>;
    /// Counts a request beat the design sent to memory `mem` (its index in
    /// [`McSystem::memories`]).
    fn count(&self, moved: &mut Self::Moved, mem: usize, beat: &Fields<'_>);
    /// The design was reset in mid-run (the bench's counters restart with it): the model
    /// picks up from what the memories hold.
    fn reset(&mut self) -> Result<(), String>;
    /// The first difference between the memories' final contents and the model's.
    fn compare(&self) -> Result<(), String>;
    /// The requests made so far.
    fn requests(&self) -> Self::Requests;
    /// The model's counters and its cache's (hits, misses, merges).
    fn model_counts(&self) -> Result<(Self::Moved, [u64; 3]), String>;
    /// The design's counters: `moved` (counted on the memory channels) with what the
    /// design's counter outputs add.
    fn rtl_moved(_dut: &mut dyn Dut, moved: Self::Moved) -> Result<Self::Moved, String> {
        Ok(moved)
    }
    /// Fills in the run's line and byte statistics after `txn` requests (default: none).
    fn fill_stats(_st: &mut RunStats, _txn: u64, _moved: &Self::Moved) {}
    /// Bytes of data per request (for [`measure`]'s byte rate).
    fn request_bytes(p: &Self::Params) -> u64;
}

/// What a run measured.
pub struct McRun<S: McSystem> {
    /// Harness statistics.
    pub stats: RunStats,
    /// The requests made.
    pub requests: S::Requests,
    /// The design's counters.
    pub rtl: S::Moved,
    /// The model's.
    pub model: S::Moved,
    /// The cache's (hits, misses, merges): design, model.
    pub cache: ([u64; 3], [u64; 3]),
    /// The first difference in the final memory contents, or a model-side problem.
    pub error: Option<String>,
}

impl<S: McSystem> McRun<S> {
    /// `Ok` when the run matched in every respect; otherwise the first of: a response
    /// mismatch, the bench's error (such as a memory-image difference), the design's
    /// counters against the model's, the cache's against the model's.
    pub fn check(&self) -> Result<(), String> {
        if let Some(m) = &self.stats.first_mismatch {
            return Err(m.to_string());
        }
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.rtl != self.model {
            return Err(format!("moved {:?}, the model {:?}", self.rtl, self.model));
        }
        if self.cache.0 != self.cache.1 {
            return Err(format!(
                "{} (hits, misses, merges) {:?}, the model {:?}",
                S::CACHE.0,
                self.cache.0,
                self.cache.1
            ));
        }
        Ok(())
    }

    /// The run, with an error if its responses matched but the rest did not ([`check`]); a
    /// response mismatch stays in [`RunStats::first_mismatch`].
    ///
    /// [`check`]: McRun::check
    pub fn checked(self) -> Result<Self, String> {
        if self.stats.first_mismatch.is_none() {
            self.check()?;
        }
        Ok(self)
    }
}

impl<S: McSystem> Clone for McRun<S> {
    fn clone(&self) -> Self {
        McRun {
            stats: self.stats.clone(),
            requests: self.requests.clone(),
            rtl: self.rtl,
            model: self.model,
            cache: self.cache,
            error: self.error.clone(),
        }
    }
}

impl<S: McSystem> fmt::Debug for McRun<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McRun")
            .field("stats", &self.stats)
            .field("requests", &self.requests)
            .field("rtl", &self.rtl)
            .field("model", &self.model)
            .field("cache", &self.cache)
            .field("error", &self.error)
            .finish()
    }
}

/// Request mix (relative weights of the kinds) and memory latencies of a run.
pub struct McOpts<S: McSystem> {
    /// Weights of the request kinds.
    pub mix: S::Mix,
    /// Latency ranges of the memories in cycles.
    pub latency: S::Latencies,
}

impl<S: McSystem> Default for McOpts<S> {
    fn default() -> Self {
        McOpts {
            mix: S::MIX,
            latency: S::LATENCIES,
        }
    }
}

impl<S: McSystem> Clone for McOpts<S> {
    fn clone(&self) -> Self {
        McOpts {
            mix: self.mix.clone(),
            latency: self.latency.clone(),
        }
    }
}

impl<S: McSystem> fmt::Debug for McOpts<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McOpts")
            .field("mix", &self.mix)
            .field("latency", &self.latency)
            .finish()
    }
}

/// The system's stimulus and model on the harness.
struct McBench<S: McSystem> {
    sys: S,
    mix: S::Mix,
    rng: ChaCha8Rng,
    /// The `rsp` channel's index: after the request channel and the memories' responses.
    rsp: usize,
    remaining: u64,
    txn: u64,
    /// The beats of the request on offer still to come, last first.
    beats: Vec<Beat>,
    moved: S::Moved,
    error: Option<String>,
}

impl<S: McSystem> McBench<S> {
    fn new(
        p: &S::Params,
        mix: S::Mix,
        n: u64,
        seed: u64,
        mems: Vec<SharedMem>,
    ) -> Result<McBench<S>, String> {
        if mix.as_ref().iter().all(|&w| w == 0) {
            return Err("the request mix has no weight".into());
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ S::SEED);
        let rsp = 1 + mems.len();
        Ok(McBench {
            sys: S::new(p, seed, &mut rng, mems)?,
            mix,
            rng,
            rsp,
            remaining: n,
            txn: 0,
            beats: Vec::new(),
            moved: S::Moved::default(),
            error: None,
        })
    }
}

/// A request kind drawn with the weights of `mix` (not all zero).
fn pick_kind(rng: &mut ChaCha8Rng, mix: &[u32]) -> usize {
    let total: u32 = mix.iter().sum();
    let mut pick = rng.gen_range(0..total);
    let mut kind = 0;
    while pick >= mix[kind] {
        pick -= mix[kind];
        kind += 1;
    }
    kind
}

impl<S: McSystem> Bench for McBench<S> {
    /// Offers the next beat of the current request; a new request goes to the model when
    /// its first beat is offered, and the model's answer is what `rsp` must carry.
    fn next_input(&mut self, ch: usize, exp: &mut Expect<'_>) -> Option<Beat> {
        if ch != 0 || self.error.is_some() {
            return None;
        }
        if self.beats.is_empty() {
            if self.remaining == 0 {
                return None;
            }
            let kind = pick_kind(&mut self.rng, self.mix.as_ref());
            match self.sys.next(kind, &mut self.rng) {
                Ok(Some(t)) => {
                    for (k, b) in t.expect.into_iter().enumerate() {
                        exp.push(self.rsp, self.txn, k as u64, b);
                    }
                    self.txn += 1;
                    self.remaining -= 1;
                    self.beats = t.input;
                    self.beats.reverse();
                }
                Ok(None) => return None,
                Err(e) => {
                    self.error = Some(format!("model, request {}: {e}", self.txn));
                    return None;
                }
            }
        }
        self.beats.pop()
    }

    fn observed(&mut self, ch: usize, beat: &Fields<'_>, _cycle: u64, _exp: &mut Expect<'_>) {
        if let Some(mem) = ch.checked_sub(self.rsp + 1) {
            self.sys.count(&mut self.moved, mem, beat);
        }
    }

    fn finished(&self) -> bool {
        (self.remaining == 0 && self.beats.is_empty()) || self.error.is_some()
    }

    /// The request in flight (and the one being offered) are lost; the system's model
    /// picks up from the memories and the counters restart with the design's.
    fn reset(&mut self) -> Result<(), String> {
        self.sys.reset()?;
        self.moved = S::Moved::default();
        self.beats.clear();
        Ok(())
    }
}

/// The harness channels of `top`: inputs the request channel and the memories' responses,
/// outputs `rsp` and the memories' requests (monitored, not compared).
fn channels<S: McSystem>(top: &Module, mems: &[McMemory]) -> Result<Vec<Channel>, String> {
    let requests: Vec<&str> = mems.iter().map(|m| m.req).collect();
    let mut names = vec![S::REQUEST];
    names.extend(mems.iter().map(|m| m.rsp));
    names.push(RSP);
    names.extend(&requests);
    super::harness::named_channels(top, &names, &requests)
}

/// A reordering memory of `m`'s shape with latencies in `latency`.
fn memory(m: &McMemory, latency: (u64, u64)) -> SharedMem {
    SharedMem::new(MemResponder::new(
        MemFields {
            addr: "addr",
            we: Some("we"),
            wdata: Some("data"),
            tag: Some(m.tag),
            rdata: "data",
        },
        MemTiming {
            min_latency: latency.0,
            max_latency: latency.1,
            reorder: true,
            write_ack: false,
        },
        m.words,
    ))
}

/// Runs `n` requests of `o`'s mix through `dut` (the design of `p`, module `top`) with
/// `o`'s memory latencies.
pub fn run_opts<S: McSystem>(
    dut: &mut dyn Dut,
    top: &Module,
    p: &S::Params,
    n: u64,
    cfg: &HarnessConfig,
    o: &McOpts<S>,
) -> Result<McRun<S>, String> {
    S::prepare(p, dut)?;
    let specs = S::memories(p);
    if specs.len() != o.latency.as_ref().len() {
        return Err(format!(
            "{} memory latencies for {} memories",
            o.latency.as_ref().len(),
            specs.len()
        ));
    }
    let mut h = Harness::new(channels::<S>(top, &specs)?);
    let mems: Vec<SharedMem> = specs
        .iter()
        .zip(o.latency.as_ref())
        .map(|(m, l)| memory(m, *l))
        .collect();
    for (m, mem) in specs.iter().zip(&mems) {
        h.respond(m.req, m.rsp, Box::new(mem.clone()))?;
    }
    let mut bench = McBench::<S>::new(p, o.mix.clone(), n, cfg.seed, mems)?;
    let mut stats = h.run(dut, &mut bench, cfg, &mut |_| {})?;
    S::fill_stats(&mut stats, bench.txn, &bench.moved);
    let rtl = S::rtl_moved(dut, bench.moved)?;
    let rtl_cache = super::cache::read_ports(dut, S::CACHE.1)?;
    let (model, model_cache) = bench.sys.model_counts()?;
    let mut error = bench.error.take();
    if error.is_none() && stats.first_mismatch.is_none() {
        error = bench.sys.compare().err();
    }
    Ok(McRun {
        requests: bench.sys.requests(),
        rtl,
        model,
        cache: (rtl_cache, model_cache),
        stats,
        error,
    })
}

/// Timing without stalls and with 1-cycle memories: `latency_cycles` is the turnaround of
/// a read (cycles per request over 2,000 back-to-back requests of kind 0, cache misses
/// included); the rates are over 2,000 requests of the default mix (requests per cycle,
/// request data bytes per cycle).
pub fn measure<S: McSystem>(
    dut: &mut dyn Dut,
    top: &Module,
    p: &S::Params,
) -> Result<Timing, String> {
    let quiet = HarnessConfig::quiet(7);
    let mut ideal = McOpts::<S>::default();
    ideal.latency.as_mut().fill((1, 1));
    let mut reads = ideal.clone();
    for (k, w) in reads.mix.as_mut().iter_mut().enumerate() {
        *w = (k == 0) as u32;
    }
    let n = 2000u64;
    let r = run_opts(dut, top, p, n, &quiet, &reads)?;
    r.check().map_err(|e| format!("read run: {e}"))?;
    let latency = r.stats.cycles.div_ceil(n);
    let r = run_opts(dut, top, p, n, &quiet, &ideal)?;
    r.check().map_err(|e| format!("mixed run: {e}"))?;
    let cyc = r.stats.cycles.max(1) as f64;
    Ok(Timing {
        latency_cycles: latency,
        in_beats_per_cycle: n as f64 / cyc,
        raw_bytes_per_cycle: (n * S::request_bytes(p)) as f64 / cyc,
    })
}

/// Where requests go: a hot set, a streaming pointer, or anywhere in a space of `space`
/// units, at multiples of `step`.
pub(super) struct Targets {
    hot: Vec<u64>,
    stream: u64,
    space: u64,
    step: u64,
    /// Of ten draws, those below `.0` pick from the hot set, those below `.1` advance the
    /// streaming pointer, the rest pick anywhere.
    split: (u32, u32),
}

impl Targets {
    /// A hot set of `hot` random places (drawn from `rng`) and the pointer at 0.
    pub(super) fn new(
        rng: &mut ChaCha8Rng,
        space: u64,
        step: u64,
        hot: usize,
        split: (u32, u32),
    ) -> Targets {
        Targets {
            hot: (0..hot)
                .map(|_| rng.gen_range(0..space / step) * step)
                .collect(),
            stream: 0,
            space,
            step,
            split,
        }
    }

    /// The next place.
    pub(super) fn pick(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        match rng.gen_range(0..10) {
            d if d < self.split.0 => self.hot[rng.gen_range(0..self.hot.len())],
            d if d < self.split.1 => {
                self.stream = (self.stream + self.step) % self.space;
                self.stream
            }
            _ => rng.gen_range(0..self.space / self.step) * self.step,
        }
    }
}

/// The entries or blocks (keys) a mid-run reset may have left inconsistent: the last two
/// requests' (possibly in flight at the reset) and those the system adds.
pub(super) struct Poison<K> {
    recent: VecDeque<K>,
    poisoned: HashSet<K>,
}

impl<K: Copy + Eq + Hash> Poison<K> {
    /// Nothing poisoned.
    pub(super) fn new() -> Poison<K> {
        Poison {
            recent: VecDeque::new(),
            poisoned: HashSet::new(),
        }
    }

    /// `k` is requested now.
    pub(super) fn touch(&mut self, k: K) {
        self.recent.push_back(k);
        if self.recent.len() > 2 {
            self.recent.pop_front();
        }
    }

    /// Whether `k` is poisoned.
    pub(super) fn contains(&self, k: &K) -> bool {
        self.poisoned.contains(k)
    }

    /// Poisons `k`.
    pub(super) fn insert(&mut self, k: K) {
        self.poisoned.insert(k);
    }

    /// `k` is consistent again; whether it was poisoned.
    pub(super) fn heal(&mut self, k: &K) -> bool {
        self.poisoned.remove(k)
    }

    /// A reset: the recent keys are poisoned.
    pub(super) fn reset(&mut self) {
        for k in self.recent.drain(..) {
            self.poisoned.insert(k);
        }
    }
}

/// 32-bit words of little-endian bytes (zero-padded to whole words).
pub(super) fn words(b: &[u8]) -> Vec<u32> {
    super::zvc::bytes_to_words(b, b.len().div_ceil(4))
}

/// What a memory holds at every address written, as bytes.
pub(super) fn written(mem: &SharedMem) -> HashMap<u64, Vec<u8>> {
    let m = mem.0.borrow();
    m.writes()
        .iter()
        .map(|(a, _)| {
            (
                *a,
                m.read(*a).iter().flat_map(|w| w.to_le_bytes()).collect(),
            )
        })
        .collect()
}

/// `Err` naming the first address written to `mem` (called `what`) that `known` does not
/// expect.
pub(super) fn no_stray_writes(
    what: &str,
    mem: &MemResponder,
    known: impl Fn(u64) -> bool,
) -> Result<(), String> {
    match mem.writes().iter().find(|(a, _)| !known(*a)) {
        Some((a, _)) => Err(format!(
            "{what} address {a:#x} written, the model never wrote it"
        )),
        None => Ok(()),
    }
}

/// Compares a memory's final contents with an image: every address of the image holds its
/// bytes, and nothing was written elsewhere.
pub(super) fn compare_image(
    what: &str,
    image: &HashMap<u64, Vec<u8>>,
    mem: &MemResponder,
) -> Result<(), String> {
    let mut addrs: Vec<&u64> = image.keys().collect();
    addrs.sort();
    for a in addrs {
        let want = words(&image[a]);
        let got = mem.read(*a);
        if got != want {
            return Err(format!(
                "{what} address {a:#x}: {got:08x?}, the model {want:08x?}"
            ));
        }
    }
    no_stray_writes(what, mem, |a| image.contains_key(&a))
}
