//! Scoreboard of Buddy's memory-controller splitter (`rtl::buddy::mc_ctrl`) against the
//! system model (`model::buddy::system::System`) on the memory-controller bench
//! (`cosim::mc_bench`).
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
use super::harness::HarnessConfig;
use super::mc_bench::{self, compare_image, words, written, McMemory, McSystem, McTxn};
use super::mc_bench::{Poison, Targets};
use super::memory::SharedMem;
use super::stream::{Beat, Fields, RunStats, Timing};
use crate::hdl::Module;
use crate::model::buddy::system::{System, SystemParams};
use crate::model::buddy::{pieces, Target, ENTRY_BYTES, SECTOR_BYTES};
use crate::model::ModelError;
use crate::rtl::buddy::mc_ctrl::{OP_READ, OP_WRITE};
use crate::rtl::buddy::BuddyRtlParams;
use crate::trace::entries::EntryStim;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// The global buddy base register the bench programs.
pub const GBBR: u64 = 0x40_0000_0000;

/// What a run measured.
pub type McRun = mc_bench::McRun<BuddyMc>;

/// Request mix (reads, full writes, partial writes) and latencies (HBM, the buddy link at
/// about twice HBM's (§4.2), metadata sectors) of a run.
pub type McOpts = mc_bench::McOpts<BuddyMc>;

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

/// The requests of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requests {
    /// Reads, full writes, partial writes.
    pub kinds: [u64; 3],
    /// Per target (1×, 4/3×, 2×, 4×, 16×).
    pub per_target: [u64; 5],
}

/// One allocation of the bench: its index in the model, target, buddy offset, length,
/// per-page device bases, and where its requests go.
struct Alloc {
    index: usize,
    target: Target,
    boff: u64,
    entries: u64,
    bases: Vec<u64>,
    at: Targets,
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

/// The controller's stimulus, model and expected memory images.
pub struct BuddyMc {
    p: BuddyRtlParams,
    model: System,
    stim: EntryStim,
    allocs: Vec<Alloc>,
    requests: Requests,
    hbm_image: HashMap<u64, Vec<u8>>,
    buddy_image: HashMap<u64, Vec<u8>>,
    /// (allocation, entry): the next request to a poisoned entry is a full write, which
    /// makes it consistent again.
    poison: Poison<(usize, u64)>,
    /// HBM, the buddy memory, the metadata memory.
    mems: [SharedMem; 3],
}

impl BuddyMc {
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
        let ad = &self.p.addr;
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

    /// Request `kind` to entry `e` of allocation `a`, given to the model: the operation,
    /// sector mask, write data and the response data.
    fn access(
        &mut self,
        kind: usize,
        a: usize,
        e: u64,
        rng: &mut ChaCha8Rng,
    ) -> Result<(u64, u8, Vec<u8>, Vec<u8>), ModelError> {
        let (mi, zeros) = (self.allocs[a].index, vec![0u8; ENTRY_BYTES]);
        if kind == 0 {
            let mask: u8 = rng.gen_range(1..16);
            let d = self.model.read(mi, e as usize)?;
            let mut out = zeros.clone();
            for k in (0..4).filter(|k| mask >> k & 1 == 1) {
                let r = k * SECTOR_BYTES..(k + 1) * SECTOR_BYTES;
                out[r.clone()].copy_from_slice(&d[r]);
            }
            return Ok((OP_READ, mask, zeros, out));
        }
        let d = self.stim.next_entry();
        let mask = if kind == 1 {
            self.model.write(mi, e as usize, &d)?;
            0xF
        } else {
            let mask: u8 = rng.gen_range(1..15);
            self.model.write_partial(mi, e as usize, mask, &d)?;
            mask
        };
        self.record(a, e);
        Ok((OP_WRITE, mask, d, zeros))
    }

    /// Poisons every entry whose metadata field lies in a sector the design may hold
    /// differently from the model after a reset: the model's dirty lines, and the
    /// write-backs the model (ahead of the design) made that the metadata memory (`meta`)
    /// does not hold.
    fn poison_unsure_sectors(&mut self, meta: &HashMap<u64, Vec<u8>>) -> Result<(), String> {
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
                        self.poison.insert((a, index - lo));
                    }
                }
            }
        }
        Ok(())
    }
}

impl McSystem for BuddyMc {
    type Params = BuddyRtlParams;
    type Moved = Moved;
    type Requests = Requests;
    type Mix = [u32; 3];
    type Latencies = [(u64, u64); 3];

    const MIX: [u32; 3] = [5, 4, 2];
    const LATENCIES: [(u64, u64); 3] = [(4, 20), (8, 40), (4, 20)];
    const SEED: u64 = 0xb0dd;
    const REQUEST: &'static str = "req";
    const CACHE: (&'static str, [&'static str; 3]) = (
        "metadata slice",
        ["meta_hits_o", "meta_misses_o", "meta_merges_o"],
    );

    /// HBM (32 B pieces), the buddy memory behind the link (32 B pieces), the metadata
    /// region (sectors).
    fn memories(p: &BuddyRtlParams) -> Vec<McMemory> {
        vec![
            McMemory::new("hreq", "hrsp", ("tag", "tag"), SECTOR_BYTES / 4),
            McMemory::new("breq", "brsp", ("tag", "tag"), SECTOR_BYTES / 4),
            McMemory::new(
                "mreq",
                "mfill",
                ("addr", "addr"),
                (p.meta.sector_bytes / 4) as usize,
            ),
        ]
    }

    /// Programs the global buddy base register.
    fn prepare(p: &BuddyRtlParams, dut: &mut dyn Dut) -> Result<(), String> {
        crate::rtl::buddy::mc_ctrl::check(p)?;
        let gbbr = dut.port("gbbr_i")?;
        dut.set_u64(gbbr, GBBR);
        Ok(())
    }

    /// One allocation per `ALLOC_PAGES` row, each page with its own device region (4 MB
    /// apart) and a hot set of 64 owned entries.
    fn new(
        p: &BuddyRtlParams,
        seed: u64,
        rng: &mut ChaCha8Rng,
        mems: Vec<SharedMem>,
    ) -> Result<BuddyMc, String> {
        let mems = <[SharedMem; 3]>::try_from(mems).map_err(|_| "three memories expected")?;
        let mut model = System::new(&system_params(p)).map_err(|e| e.to_string())?;
        let epp = p.addr.entries_per_page();
        let mut allocs = Vec::new();
        let mut slot = 1u64;
        for (target, pages) in ALLOC_PAGES {
            let entries = pages * epp;
            let index = model.allocate(entries as usize, target);
            let (_, boff) = model
                .allocation(index)
                .ok_or("the model lost an allocation")?;
            let bases = (0..pages)
                .map(|_| {
                    slot += 1;
                    slot << 22
                })
                .collect();
            let at = Targets::new(rng, entries, p.mc.mcs as u64, 64, (6, 8));
            allocs.push(Alloc {
                index,
                target,
                boff,
                entries,
                bases,
                at,
            });
        }
        Ok(BuddyMc {
            p: *p,
            model,
            stim: EntryStim::new(seed),
            allocs,
            requests: Requests::default(),
            hbm_image: HashMap::new(),
            buddy_image: HashMap::new(),
            poison: Poison::new(),
            mems,
        })
    }

    /// A request to an entry this controller owns (index `≡ 0 mod mcs`) of a random
    /// allocation; to a poisoned entry, a full write.
    fn next(&mut self, kind: usize, rng: &mut ChaCha8Rng) -> Result<Option<McTxn>, String> {
        let a = rng.gen_range(0..self.allocs.len());
        let e = self.allocs[a].at.pick(rng);
        self.poison.touch((a, e));
        let kind = if self.poison.heal(&(a, e)) { 1 } else { kind };
        let (base, boff, ep) = self.page_of(a, e);
        let t = self.allocs[a].target;
        self.requests.kinds[kind] += 1;
        self.requests.per_target[t.code() as usize] += 1;
        let (op, mask, data, rsp) = self.access(kind, a, e, rng).map_err(|x| x.to_string())?;
        let req = Beat::new()
            .num("op", op)
            .num("tgt", t.code().into())
            .num("base", base)
            .num("boff", boff)
            .num("entry", ep)
            .num("mask", mask as u64)
            .with("data", words(&data));
        Ok(Some(McTxn {
            input: vec![req],
            expect: vec![Beat::new()
                .with("data", words(&rsp))
                .num("write", op)
                .num("err", 0)],
        }))
    }

    fn count(&self, moved: &mut Moved, mem: usize, beat: &Fields<'_>) {
        match mem {
            0 => moved.device_pieces += 1,
            1 => moved.buddy_pieces += 1,
            _ if beat.u64("we") & 1 == 1 => moved.meta_writes += 1,
            _ => moved.meta_reads += 1,
        }
    }

    /// The slice's dirty lines are lost with the design's reset: the model restarts cold
    /// over the metadata memory, the memory images become what the memories hold, and the
    /// entries a reset may have left inconsistent (the last two requests', every entry of a
    /// metadata sector the design may hold differently) are poisoned.
    fn reset(&mut self) -> Result<(), String> {
        self.poison.reset();
        let meta = written(&self.mems[2]);
        self.poison_unsure_sectors(&meta)?;
        self.hbm_image = written(&self.mems[0]);
        self.buddy_image = written(&self.mems[1]);
        self.model.restart(meta).map_err(|e| e.to_string())
    }

    fn compare(&self) -> Result<(), String> {
        let [hbm, link, meta] = &self.mems;
        compare_image("HBM", &self.hbm_image, &hbm.0.borrow())?;
        compare_image("buddy memory", &self.buddy_image, &link.0.borrow())?;
        let img: HashMap<u64, Vec<u8>> = self.model.meta_sectors(0).into_iter().collect();
        compare_image("metadata", &img, &meta.0.borrow())
    }

    fn requests(&self) -> Requests {
        self.requests
    }

    fn model_counts(&self) -> Result<(Moved, [u64; 3]), String> {
        let c = self.model.counts();
        let cs = self
            .model
            .slice(0)
            .ok_or("the model has no slice 0")?
            .stats();
        let moved = Moved {
            accesses: c.accesses,
            buddy_accesses: c.buddy_accesses,
            zero_accesses: c.zero_accesses,
            device_pieces: c.device_sectors,
            buddy_pieces: c.buddy_pieces,
            meta_reads: c.meta_reads,
            meta_writes: c.meta_writes,
        };
        Ok((moved, [cs.hits, cs.misses, cs.merges]))
    }

    /// The access, buddy-access and zero-entry counters come from the design's outputs.
    fn rtl_moved(dut: &mut dyn Dut, mut moved: Moved) -> Result<Moved, String> {
        let cnt = super::cache::read_ports(dut, ["cnt_access_o", "cnt_buddy_o", "cnt_zero_o"])?;
        (moved.accesses, moved.buddy_accesses, moved.zero_accesses) = (cnt[0], cnt[1], cnt[2]);
        Ok(moved)
    }

    /// Entries requested, their bytes, and the pieces moved as compressed bytes.
    fn fill_stats(st: &mut RunStats, txn: u64, moved: &Moved) {
        st.lines = txn;
        st.raw_bytes = txn * ENTRY_BYTES as u64;
        st.comp_bytes = (moved.device_pieces + moved.buddy_pieces) * SECTOR_BYTES as u64;
    }

    fn request_bytes(_p: &BuddyRtlParams) -> u64 {
        ENTRY_BYTES as u64
    }
}

/// Runs `n` requests of the default mix through `dut` (the controller of `p`, module `top`).
pub fn run(
    dut: &mut dyn Dut,
    top: &Module,
    p: &BuddyRtlParams,
    n: u64,
    cfg: &HarnessConfig,
) -> Result<McRun, String> {
    mc_bench::run_opts(dut, top, p, n, cfg, &McOpts::default())
}

/// Timing without stalls and with 1-cycle memories ([`mc_bench::measure`]): the read
/// turnaround (metadata misses included) and the rates over the default mix (entry bytes
/// per cycle).
pub fn measure(dut: &mut dyn Dut, top: &Module, p: &BuddyRtlParams) -> Result<Timing, String> {
    mc_bench::measure::<BuddyMc>(dut, top, p)
}

#[cfg(test)]
#[path = "buddy_mc_tests.rs"]
mod tests;
