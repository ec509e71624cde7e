//! Scoreboard of Buddy's memory-controller splitter (`rtl::buddy::mc_ctrl`) against the
//! system model (`model::buddy::system::System`) on the N-channel harness.
//!
//! Stimulus: allocations at every target (1×, 4/3×, 2×, 4×, 16×; two of them several pages
//! long, so the metadata slice misses), and mixed requests to the entries this controller
//! owns (metadata index `≡ 0 mod mcs`): reads of random sector masks, full writes and
//! partial writes (read-modify-writes), over a hot set, a streaming pointer and the whole
//! allocation, with the §6 entry classes as data. Each request goes to the model when it is
//! offered; the model's answer (the requested sectors, or an acknowledgement) is what `rsp`
//! must carry, in order. Three reactive memories answer: HBM (`hreq`/`hrsp`, short latency,
//! reordered), the buddy memory behind the link (`breq`/`brsp`, about twice the latency,
//! §4.2) and the metadata region (`mreq`/`mfill`).
//!
//! At the end: the access, buddy-access and zero-entry counters, the device sectors, buddy
//! pieces and metadata sectors moved, the slice's hits, misses and merges, and the final
//! contents of all three memories (every piece the model's entries occupy, at its address;
//! nothing written anywhere else) must equal the model's.

use super::dut::Dut;
use super::harness::{Bench, Channel, Expect, Harness, HarnessConfig};
use super::memory::{MemFields, MemResponder, MemTiming, SharedMem as Shared};
use super::stream::{Beat, RunStats};
use crate::hdl::Module;
use crate::model::buddy::system::{System, SystemParams};
use crate::model::buddy::{pieces, AddrParams, Target, ENTRY_BYTES, SECTOR_BYTES};
use crate::rtl::buddy::mc_ctrl::{OP_READ, OP_WRITE};
use crate::rtl::buddy::BuddyRtlParams;
use crate::trace::entries::EntryStim;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};

// Channel order of [`channels`]: inputs `req`, `hrsp`, `brsp`, `mfill`; outputs `rsp`,
// `hreq`, `breq`, `mreq`.
const REQ: usize = 0;
const RSP: usize = 4;
const HREQ: usize = 5;
const BREQ: usize = 6;
const MREQ: usize = 7;

/// The global buddy base register the bench programs.
pub const GBBR: u64 = 0x40_0000_0000;

/// The system model's parameters for the hardware's.
pub fn system_params(p: &BuddyRtlParams) -> SystemParams {
    SystemParams {
        bpc: p.bpc.model(),
        meta: p.meta.rtl().cache,
        mcs: p.mc.mcs,
        addr: p.addr,
        ..SystemParams::default()
    }
}

/// Counters of a run: the design's (from its outputs and channels) or the model's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// Entry accesses (a partial write counts two).
    pub accesses: u64,
    /// Accesses that touched buddy memory.
    pub buddy_accesses: u64,
    /// Accesses to all-zero entries of compressed pages.
    pub zero_accesses: u64,
    /// Device pieces read or written.
    pub device_pieces: u64,
    /// Buddy pieces read or written.
    pub buddy_pieces: u64,
    /// Metadata sectors read.
    pub meta_reads: u64,
    /// Metadata sectors written back.
    pub meta_writes: u64,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct McRun {
    /// Harness statistics.
    pub stats: RunStats,
    /// Requests: reads, full writes, partial writes.
    pub requests: [u64; 3],
    /// Requests per target (1×, 4/3×, 2×, 4×, 16×).
    pub per_target: [u64; 5],
    /// The design's counters.
    pub rtl: Moved,
    /// The model's.
    pub model: Moved,
    /// Metadata slice (hits, misses, merges): design, model.
    pub meta: ([u64; 3], [u64; 3]),
    /// The first difference in the final memory contents, or a model-side problem.
    pub error: Option<String>,
}

impl McRun {
    /// `Ok` when the run matched in every respect.
    pub fn check(&self) -> Result<(), String> {
        super::harness::mc_verdict(
            &self.stats,
            &self.error,
            (&self.rtl, &self.model),
            ("metadata slice", self.meta.0, self.meta.1),
        )
    }
}

/// Request mix and memory latencies of a run.
#[derive(Clone, Debug)]
pub struct McOpts {
    /// Weights of reads, full writes, partial writes.
    pub mix: [u32; 3],
    /// HBM latency range in cycles.
    pub hbm_latency: (u64, u64),
    /// Buddy-link latency range in cycles (about twice HBM's, §4.2).
    pub link_latency: (u64, u64),
    /// Metadata-sector latency range in cycles.
    pub meta_latency: (u64, u64),
}

impl Default for McOpts {
    fn default() -> Self {
        McOpts {
            mix: [5, 4, 2],
            hbm_latency: (4, 20),
            link_latency: (8, 40),
            meta_latency: (4, 20),
        }
    }
}

/// One allocation of the bench: its index in the model, target, length, and per-page
/// device bases.
struct Alloc {
    index: usize,
    target: Target,
    boff: u64,
    entries: u64,
    bases: Vec<u64>,
    hot: Vec<u64>,
    stream: u64,
}

/// Pages per allocation, by target (1×, 4/3×, 2×, 4×, 16×, then two long ones).
const ALLOC_PAGES: [(Target, u64); 7] = [
    (Target::X1, 1),
    (Target::X4_3, 1),
    (Target::X2, 1),
    (Target::X4, 1),
    (Target::X16, 1),
    (Target::X2, 6),
    (Target::X4, 10),
];

/// Stimulus, model and expected memory images.
struct McBench {
    p: BuddyRtlParams,
    mix: [u32; 3],
    model: System,
    stim: EntryStim,
    rng: ChaCha8Rng,
    allocs: Vec<Alloc>,
    remaining: u64,
    txn: u64,
    requests: [u64; 3],
    per_target: [u64; 5],
    moved: Moved,
    hbm_image: HashMap<u64, Vec<u8>>,
    buddy_image: HashMap<u64, Vec<u8>>,
    error: Option<String>,
    /// The memories, for restarting the model after a reset.
    mems: [Shared; 3],
    /// (allocation, entry) of the last two requests (possibly in flight at a reset).
    recent: VecDeque<(usize, u64)>,
    /// Entries whose data, pieces or code a reset may have left inconsistent: never
    /// requested again.
    poisoned: HashSet<(usize, u64)>,
}

/// 32-bit words of little-endian bytes (zero-padded to whole words).
fn words(b: &[u8]) -> Vec<u32> {
    super::zvc::bytes_to_words(b, b.len().div_ceil(4))
}

impl McBench {
    fn new(
        p: &BuddyRtlParams,
        mix: [u32; 3],
        n: u64,
        seed: u64,
        mems: [Shared; 3],
    ) -> Result<McBench, String> {
        if mix.iter().all(|&w| w == 0) {
            return Err("the request mix has no weight".into());
        }
        let mut model = System::new(&system_params(p)).map_err(|e| e.to_string())?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xb0dd);
        let epp = p.addr.entries_per_page();
        let mcs = p.mc.mcs as u64;
        let mut allocs = Vec::new();
        let mut slot = 1u64;
        for (t, pages) in ALLOC_PAGES {
            let entries = pages * epp;
            let index = model.allocate(entries as usize, t);
            let (_, boff) = model
                .allocation(index)
                .ok_or("the model lost an allocation")?;
            // Each page gets its own device region (4 MB apart).
            let bases = (0..pages)
                .map(|_| {
                    slot += 1;
                    slot << 22
                })
                .collect();
            let owned = entries / mcs;
            let hot = (0..64).map(|_| rng.gen_range(0..owned) * mcs).collect();
            allocs.push(Alloc {
                index,
                target: t,
                boff,
                entries,
                bases,
                hot,
                stream: 0,
            });
        }
        Ok(McBench {
            p: *p,
            mix,
            model,
            stim: EntryStim::new(seed),
            rng,
            allocs,
            remaining: n,
            txn: 0,
            requests: [0; 3],
            per_target: [0; 5],
            moved: Moved::default(),
            hbm_image: HashMap::new(),
            buddy_image: HashMap::new(),
            error: None,
            mems,
            recent: VecDeque::new(),
            poisoned: HashSet::new(),
        })
    }

    /// An entry of allocation `a` that this controller owns (index `≡ 0 mod mcs`), and
    /// whether a reset poisoned it (then only a full write may touch it, which heals it).
    fn pick_entry(&mut self, a: usize) -> (u64, bool) {
        let e = self.any_entry(a);
        self.recent.push_back((a, e));
        if self.recent.len() > 2 {
            self.recent.pop_front();
        }
        (e, self.poisoned.remove(&(a, e)))
    }

    fn any_entry(&mut self, a: usize) -> u64 {
        let mcs = self.p.mc.mcs as u64;
        let al = &mut self.allocs[a];
        match self.rng.gen_range(0..10) {
            0..=5 => al.hot[self.rng.gen_range(0..al.hot.len())],
            6 | 7 => {
                al.stream = (al.stream + mcs) % al.entries;
                al.stream
            }
            _ => self.rng.gen_range(0..al.entries / mcs) * mcs,
        }
    }

    /// The page fields of entry `e` of allocation `a`: (base, buddy offset, entry in page).
    fn page_of(&self, a: usize, e: u64) -> (u64, u64, u64) {
        let epp = self.p.addr.entries_per_page();
        let al = &self.allocs[a];
        (al.bases[(e / epp) as usize], al.boff + e / epp, e % epp)
    }

    /// Records the pieces entry `e` of allocation `a` now occupies in the memory images.
    fn record(&mut self, a: usize, e: u64) {
        let (base, boff, ep) = self.page_of(a, e);
        let al = &self.allocs[a];
        let t = al.target;
        let Some(s) = self.model.stored(al.index, e as usize) else {
            return;
        };
        let (dev, bud) = pieces(s.code, t, &s.bytes);
        let ad: &AddrParams = &self.p.addr;
        for (k, mut d) in dev.into_iter().enumerate() {
            d.resize(SECTOR_BYTES, 0);
            self.hbm_image
                .insert(ad.device_addr(base, ep, t, k as u32), d);
        }
        for (m, d) in bud.into_iter().enumerate() {
            self.buddy_image
                .insert(ad.buddy_addr(GBBR, boff, ep, t, m as u32), d);
        }
    }

    /// The next request as a `req` beat, with the model's answer as the expected `rsp`.
    fn make(&mut self) -> Result<(Beat, Beat), String> {
        let total: u32 = self.mix.iter().sum();
        let mut pick = self.rng.gen_range(0..total);
        let mut kind = 0;
        while pick >= self.mix[kind] {
            pick -= self.mix[kind];
            kind += 1;
        }
        let a = self.rng.gen_range(0..self.allocs.len());
        let (e, poisoned) = self.pick_entry(a);
        if poisoned {
            kind = 1;
        }
        let (base, boff, ep) = self.page_of(a, e);
        let t = self.allocs[a].target;
        let mi = self.allocs[a].index;
        self.requests[kind] += 1;
        self.per_target[t.code() as usize] += 1;
        let err = |x: crate::model::ModelError| format!("model, request {}: {x}", self.txn);
        let (op, mask, data, rsp_data) = match kind {
            0 => {
                let mask: u8 = self.rng.gen_range(1..16);
                let d = self.model.read(mi, e as usize).map_err(err)?;
                let mut out = vec![0u8; ENTRY_BYTES];
                for k in 0..4 {
                    if mask >> k & 1 == 1 {
                        let r = k * SECTOR_BYTES..(k + 1) * SECTOR_BYTES;
                        out[r.clone()].copy_from_slice(&d[r]);
                    }
                }
                (OP_READ, mask, vec![0u8; ENTRY_BYTES], out)
            }
            1 => {
                let d = self.stim.next_entry();
                self.model.write(mi, e as usize, &d).map_err(err)?;
                self.record(a, e);
                (OP_WRITE, 0xF, d, vec![0u8; ENTRY_BYTES])
            }
            _ => {
                let d = self.stim.next_entry();
                let mask: u8 = self.rng.gen_range(1..15);
                self.model
                    .write_partial(mi, e as usize, mask, &d)
                    .map_err(err)?;
                self.record(a, e);
                (OP_WRITE, mask, d, vec![0u8; ENTRY_BYTES])
            }
        };
        let w2 = |v: u64| vec![v as u32, (v >> 32) as u32];
        let req = Beat(vec![
            vec![op as u32],
            vec![t.code() as u32],
            w2(base),
            vec![boff as u32],
            vec![ep as u32],
            vec![mask as u32],
            words(&data),
        ]);
        let rsp = Beat(vec![words(&rsp_data), vec![op as u32], vec![0]]);
        Ok((req, rsp))
    }
}

impl Bench for McBench {
    fn next_input(&mut self, ch: usize, exp: &mut Expect<'_>) -> Option<Beat> {
        if ch != REQ || self.error.is_some() || self.remaining == 0 {
            return None;
        }
        match self.make() {
            Ok((req, rsp)) => {
                exp.push(RSP, self.txn, 0, rsp);
                self.txn += 1;
                self.remaining -= 1;
                Some(req)
            }
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    fn observed(&mut self, ch: usize, beat: &[Vec<u32>], _cycle: u64, _exp: &mut Expect<'_>) {
        match ch {
            HREQ => self.moved.device_pieces += 1,
            BREQ => self.moved.buddy_pieces += 1,
            MREQ => {
                if beat[0][0] & 1 == 1 {
                    self.moved.meta_writes += 1;
                } else {
                    self.moved.meta_reads += 1;
                }
            }
            _ => {}
        }
    }

    fn finished(&self) -> bool {
        self.remaining == 0 || self.error.is_some()
    }

    /// The request in flight (and the one being offered) are lost, and so are the slice's
    /// dirty lines: the model restarts cold over the metadata memory, the memory images
    /// become what the memories hold, and the entries a reset may have left inconsistent
    /// (the last two requests', every entry of a metadata sector the design may hold
    /// differently) are poisoned: their next request is a full write, which makes them
    /// consistent again. The counters restart with the design's.
    fn reset(&mut self) -> Result<(), String> {
        for r in self.recent.drain(..) {
            self.poisoned.insert(r);
        }
        let bytes = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let image = |m: &Shared| -> HashMap<u64, Vec<u8>> {
            let m = m.0.borrow();
            m.writes()
                .iter()
                .map(|(a, _)| (*a, bytes(&m.read(*a))))
                .collect()
        };
        let meta = image(&self.mems[2]);
        // Sectors the design may hold differently from the model: the model's dirty lines,
        // and the write-backs the model (ahead of the design) made that the metadata
        // memory does not hold.
        let cache = self.model.slice(0).ok_or("the model has no slice 0")?;
        let per_sector = cache.params().fields_per_sector();
        let mut dirty: Vec<u64> = cache
            .clone()
            .flush()
            .into_iter()
            .filter_map(|ev| match ev {
                crate::model::cache::Event::MemWrite { sector, .. } => Some(sector),
                _ => None,
            })
            .collect();
        let written: HashMap<u64, Vec<u8>> = self.model.meta_sectors(0).into_iter().collect();
        dirty.extend(
            written
                .keys()
                .chain(meta.keys())
                .filter(|k| written.get(k) != meta.get(k))
                .copied(),
        );
        let epp = self.p.addr.entries_per_page();
        let mcs = self.p.mc.mcs as u64;
        for sector in dirty {
            for f in sector * per_sector..(sector + 1) * per_sector {
                let index = f * mcs;
                for (a, al) in self.allocs.iter().enumerate() {
                    let lo = al.boff * epp;
                    if al.target != Target::X1 && (lo..lo + al.entries).contains(&index) {
                        self.poisoned.insert((a, index - lo));
                    }
                }
            }
        }
        self.hbm_image = image(&self.mems[0]);
        self.buddy_image = image(&self.mems[1]);
        self.model.restart(meta).map_err(|e| e.to_string())?;
        self.moved = Moved::default();
        Ok(())
    }
}

/// The harness channels of the controller.
pub fn channels(top: &Module) -> Result<Vec<Channel>, String> {
    super::harness::named_channels(
        top,
        &[
            "req", "hrsp", "brsp", "mfill", "rsp", "hreq", "breq", "mreq",
        ],
        &["hreq", "breq", "mreq"],
    )
}

/// Compares a memory's final contents with an image: every address of the image holds its
/// bytes, and nothing was written elsewhere.
fn compare_image(
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
    for (a, _) in mem.writes() {
        if !image.contains_key(a) {
            return Err(format!(
                "{what} address {a:#x} written, the model never wrote it"
            ));
        }
    }
    Ok(())
}

fn memory(timing: (u64, u64), tag: usize, words: usize) -> Shared {
    Shared::new(MemResponder::new(
        MemFields {
            addr: 1,
            we: Some(0),
            wdata: Some(2),
            tag: Some(tag),
        },
        MemTiming {
            min_latency: timing.0,
            max_latency: timing.1,
            reorder: true,
            write_ack: false,
        },
        words,
    ))
}

/// Runs `n` requests of the default mix through `dut` (the controller of `p`, module `top`).
pub fn run(
    dut: &mut dyn Dut,
    top: &Module,
    p: &BuddyRtlParams,
    n: u64,
    cfg: &HarnessConfig,
) -> Result<McRun, String> {
    run_opts(dut, top, p, n, cfg, &McOpts::default())
}

/// [`run`] with a request mix and memory latencies.
pub fn run_opts(
    dut: &mut dyn Dut,
    top: &Module,
    p: &BuddyRtlParams,
    n: u64,
    cfg: &HarnessConfig,
    o: &McOpts,
) -> Result<McRun, String> {
    crate::rtl::buddy::mc_ctrl::check(p)?;
    let mut h = Harness::new(channels(top)?);
    let piece_words = SECTOR_BYTES / 4;
    let hbm = memory(o.hbm_latency, 3, piece_words);
    let link = memory(o.link_latency, 3, piece_words);
    let sector_words = (p.meta.sector_bytes / 4) as usize;
    let meta = memory(o.meta_latency, 1, sector_words);
    h.respond("hreq", "hrsp", Box::new(hbm.clone()))?;
    h.respond("breq", "brsp", Box::new(link.clone()))?;
    h.respond("mreq", "mfill", Box::new(meta.clone()))?;
    let gbbr = dut.port("gbbr_i")?;
    dut.set_u64(gbbr, GBBR);
    let mems = [hbm.clone(), link.clone(), meta.clone()];
    let mut bench = McBench::new(p, o.mix, n, cfg.seed, mems)?;
    let mut stats = h.run(dut, &mut bench, cfg, &mut |_| {})?;
    stats.lines = bench.txn;
    stats.raw_bytes = bench.txn * ENTRY_BYTES as u64;
    stats.comp_bytes = (bench.moved.device_pieces + bench.moved.buddy_pieces) * SECTOR_BYTES as u64;
    let cnt = super::cache::read_ports(dut, ["cnt_access_o", "cnt_buddy_o", "cnt_zero_o"])?;
    let rtl_meta =
        super::cache::read_ports(dut, ["meta_hits_o", "meta_misses_o", "meta_merges_o"])?;
    let c = bench.model.counts();
    let cs = bench
        .model
        .slice(0)
        .map(|s| s.stats())
        .ok_or("the model has no slice 0")?;
    let mut rtl = bench.moved;
    (rtl.accesses, rtl.buddy_accesses, rtl.zero_accesses) = (cnt[0], cnt[1], cnt[2]);
    let mut error = bench.error.take();
    if error.is_none() && stats.first_mismatch.is_none() {
        error = compare_image("HBM", &bench.hbm_image, &hbm.0.borrow())
            .and_then(|_| compare_image("buddy memory", &bench.buddy_image, &link.0.borrow()))
            .and_then(|_| {
                let img: HashMap<u64, Vec<u8>> = bench.model.meta_sectors(0).into_iter().collect();
                compare_image("metadata", &img, &meta.0.borrow())
            })
            .err();
    }
    Ok(McRun {
        requests: bench.requests,
        per_target: bench.per_target,
        rtl,
        model: Moved {
            accesses: c.accesses,
            buddy_accesses: c.buddy_accesses,
            zero_accesses: c.zero_accesses,
            device_pieces: c.device_sectors,
            buddy_pieces: c.buddy_pieces,
            meta_reads: c.meta_reads,
            meta_writes: c.meta_writes,
        },
        meta: (rtl_meta, [cs.hits, cs.misses, cs.merges]),
        stats,
        error,
    })
}

/// Timing without stalls and with 1-cycle memories: `latency_cycles` is the turnaround of a
/// read (cycles per request of 2,000 back-to-back reads, metadata misses included); the
/// rates are over 2,000 requests of the default mix (requests per cycle, entry bytes per
/// cycle).
pub fn measure(
    dut: &mut dyn Dut,
    top: &Module,
    p: &BuddyRtlParams,
) -> Result<super::stream::Timing, String> {
    let quiet = HarnessConfig {
        seed: 7,
        in_gap: 0.0,
        out_stall: 0.0,
        ..HarnessConfig::default()
    };
    let ideal = McOpts {
        hbm_latency: (1, 1),
        link_latency: (1, 1),
        meta_latency: (1, 1),
        ..McOpts::default()
    };
    let n = 2000u64;
    let reads = McOpts {
        mix: [1, 0, 0],
        ..ideal.clone()
    };
    let r = run_opts(dut, top, p, n, &quiet, &reads)?;
    r.check().map_err(|e| format!("read run: {e}"))?;
    let latency = r.stats.cycles.div_ceil(n);
    let r = run_opts(dut, top, p, n, &quiet, &ideal)?;
    r.check().map_err(|e| format!("mixed run: {e}"))?;
    let cyc = r.stats.cycles.max(1) as f64;
    Ok(super::stream::Timing {
        latency_cycles: latency,
        in_beats_per_cycle: n as f64 / cyc,
        raw_bytes_per_cycle: (n * ENTRY_BYTES as u64) as f64 / cyc,
    })
}

#[cfg(test)]
#[path = "buddy_mc_tests.rs"]
mod tests;
