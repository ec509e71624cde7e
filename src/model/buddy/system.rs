//! Buddy Compression's system accounting model (docs/FORMATS.md, Buddy §2.2, §3.3-§3.4, §4.3):
//! allocations with per-allocation targets, entries stored as BPC streams split between
//! device and buddy memory, per-MC metadata-cache slices, and the traffic and energy each
//! access causes.
//!
//! * **Write** of a whole entry: BPC-compress it, write its device sectors and buddy pieces
//!   ([`super::split`]), write its 4-bit code through the metadata cache. An all-zero entry
//!   writes no data.
//! * **Partial write** (a sector mask): read the entry, merge, write it (read-modify-write).
//! * **Read**: look the code up, read the device sectors and buddy pieces, decompress; the
//!   data returned is the decoded stream (so every read also checks the codec).
//! * **Uncompressed pages** (1×) use no metadata and move whole entries.
//!
//! Entries are interleaved over the MCs by entry index (`index mod mcs`, \[proposal\]);
//! each MC has its own metadata-cache slice; a slice miss reads one 32 B metadata sector
//! (64 entries' codes) from device memory and evictions write dirty sectors back.
//!
//! **Energy** (§4.3; every bit toggles): an HBM2 access costs one row activation (909 pJ,
//! one per access per memory: a closed-page assumption, \[proposal\]) plus 1.51 + 1.97 pJ per
//! bit moved; a buddy access is an HBM2 access in the buddy memory plus 2 × 11 pJ per bit on
//! the link for its payload and a 32 B header. The baseline moves every entry whole from
//! device memory with no metadata.

use super::{split, AddrParams, SizeCode, Target, ENTRY_BYTES, SECTOR_BYTES};
use crate::model::bpc::{self, BpcParams};
use crate::model::cache::{Cache, CacheParams, CacheStats, Event, Lookup, Op, Request};
use crate::model::LineParams;
use crate::model::ModelError;
use std::collections::HashMap;

/// The §4.3 energy constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyParams {
    /// pJ per HBM2 row activation.
    pub act_pj: f64,
    /// pJ per bit of column access.
    pub col_pj_per_bit: f64,
    /// pJ per bit of data sensing and I/O.
    pub io_pj_per_bit: f64,
    /// pJ per bit on the buddy link (11 pJ/bit, doubled for switch ingress and egress).
    pub link_pj_per_bit: f64,
    /// Header bytes per buddy packet (a worst-case NVLink2 header).
    pub header_bytes: u64,
}

impl Default for EnergyParams {
    fn default() -> Self {
        EnergyParams {
            act_pj: 909.0,
            col_pj_per_bit: 1.51,
            io_pj_per_bit: 1.97,
            link_pj_per_bit: 22.0,
            header_bytes: 32,
        }
    }
}

impl EnergyParams {
    /// One HBM2 access of `bytes`.
    pub fn hbm_pj(&self, bytes: u64) -> f64 {
        self.act_pj + (self.col_pj_per_bit + self.io_pj_per_bit) * 8.0 * bytes as f64
    }
}

/// System parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SystemParams {
    /// The codec.
    pub bpc: BpcParams,
    /// One metadata-cache slice (per MC).
    pub meta: CacheParams,
    /// Memory controllers (slices).
    pub mcs: u32,
    /// Address generation (metadata index space).
    pub addr: AddrParams,
    /// Energy constants.
    pub energy: EnergyParams,
}

impl Default for SystemParams {
    fn default() -> Self {
        SystemParams {
            bpc: BpcParams::default(),
            meta: CacheParams::buddy_slice(),
            mcs: 8,
            addr: AddrParams::default(),
            energy: EnergyParams::default(),
        }
    }
}

/// What the accesses moved and cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Entry reads and writes (a partial write is a read and a write).
    pub accesses: u64,
    /// Of those, the ones that touched buddy memory.
    pub buddy_accesses: u64,
    /// Of those, all-zero entries (no data access).
    pub zero_accesses: u64,
    /// Read-modify-writes (partial writes).
    pub rmws: u64,
    /// Device sectors read or written.
    pub device_sectors: u64,
    /// Buddy pieces read or written.
    pub buddy_pieces: u64,
    /// Bytes on the buddy link (payload and headers).
    pub link_bytes: u64,
    /// Metadata sectors read from memory (slice misses).
    pub meta_reads: u64,
    /// Metadata sectors written back.
    pub meta_writes: u64,
    /// Energy of the memory system, pJ.
    pub energy_pj: f64,
    /// Energy of the uncompressed baseline for the same accesses, pJ.
    pub baseline_pj: f64,
}

impl Counts {
    /// Fraction of accesses that touched buddy memory.
    pub fn buddy_fraction(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.buddy_accesses as f64 / self.accesses as f64
        }
    }
}

#[derive(Clone, Debug)]
struct Alloc {
    target: Target,
    buddy_off: u64,
    /// Stored entries (`None`: never written, reads as zeros).
    entries: Vec<Option<Stored>>,
}

/// What an entry holds in memory: its code and its stored bytes (the BPC stream, or the
/// block itself when raw; a 1× page's entries are always raw).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The entry's size code ([`SizeCode::Raw`] on 1× pages).
    pub code: SizeCode,
    /// The stream bytes (`ceil(nbits / 8)`) or the 128 raw bytes.
    pub bytes: Vec<u8>,
    /// Stream bits (1024 when raw).
    pub nbits: usize,
}

/// The system (see the module documentation).
#[derive(Clone, Debug)]
pub struct System {
    p: SystemParams,
    allocs: Vec<Alloc>,
    slices: Vec<Cache>,
    meta_mem: HashMap<u64, Vec<u8>>,
    next_off: u64,
    counts: Counts,
}

impl System {
    /// An empty system.
    pub fn new(p: &SystemParams) -> Result<System, ModelError> {
        p.bpc.validate()?;
        p.addr.validate()?;
        if p.bpc.line_bytes != ENTRY_BYTES {
            return Err(ModelError::param("bpc.line_bytes", p.bpc.line_bytes, "128"));
        }
        if p.meta.field_bits != 4 {
            return Err(ModelError::param("meta.field_bits", p.meta.field_bits, "4"));
        }
        if p.mcs == 0 || p.mcs > 64 {
            return Err(ModelError::param("mcs", p.mcs, "1..=64"));
        }
        let slice =
            Cache::new(&p.meta).map_err(|e| ModelError::param("meta", e, "a valid cache"))?;
        Ok(System {
            p: p.clone(),
            allocs: Vec::new(),
            slices: vec![slice; p.mcs as usize],
            meta_mem: HashMap::new(),
            next_off: 0,
            counts: Counts::default(),
        })
    }

    /// Adds an allocation of `entries` 128 B entries at target `t` (a compressed one's
    /// carve-out pages follow the previous one's); returns its index.
    pub fn allocate(&mut self, entries: usize, t: Target) -> usize {
        let per_page = self.p.addr.entries_per_page() as usize;
        self.allocs.push(Alloc {
            target: t,
            buddy_off: self.next_off,
            entries: vec![None; entries],
        });
        if t != Target::X1 {
            self.next_off += entries.div_ceil(per_page) as u64;
        }
        self.allocs.len() - 1
    }

    /// Allocation `a`'s target and buddy offset (in pages), if it exists.
    pub fn allocation(&self, a: usize) -> Option<(Target, u64)> {
        self.allocs.get(a).map(|al| (al.target, al.buddy_off))
    }

    /// What entry `e` of allocation `a` holds (`None`: never written, or no such entry).
    pub fn stored(&self, a: usize, e: usize) -> Option<&Stored> {
        self.allocs.get(a)?.entries.get(e)?.as_ref()
    }

    /// The metadata sectors slice `mc` has written back: (sector, bytes), by sector.
    pub fn meta_sectors(&self, mc: usize) -> Vec<(u64, Vec<u8>)> {
        let mut v: Vec<(u64, Vec<u8>)> = self
            .meta_mem
            .iter()
            .filter(|(k, _)| (**k >> 48) as usize == mc)
            .map(|(k, d)| (*k & ((1 << 48) - 1), d.clone()))
            .collect();
        v.sort();
        v
    }

    /// The metadata slice of controller `mc`.
    pub fn slice(&self, mc: usize) -> Option<&Cache> {
        self.slices.get(mc)
    }

    /// The controllers were reset: every slice restarts cold (its dirty lines lost) over
    /// the metadata memory `meta` (keys `mc << 48 | sector`, as [`System::meta_sectors`]
    /// numbers them per slice), and the counters restart. Stored entries are kept.
    pub fn restart(&mut self, meta: HashMap<u64, Vec<u8>>) -> Result<(), ModelError> {
        let slice =
            Cache::new(&self.p.meta).map_err(|e| ModelError::param("meta", e, "a valid cache"))?;
        self.slices = vec![slice; self.p.mcs as usize];
        self.meta_mem = meta;
        self.counts = Counts::default();
        Ok(())
    }

    /// The counters so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The metadata slices' counters, summed.
    pub fn meta_stats(&self) -> CacheStats {
        let mut s = CacheStats::default();
        for c in &self.slices {
            let t = c.stats();
            s.hits += t.hits;
            s.misses += t.misses;
            s.merges += t.merges;
            s.stalls += t.stalls;
            s.fills += t.fills;
            s.evictions += t.evictions;
            s.writebacks += t.writebacks;
        }
        s
    }

    fn entry(&self, a: usize, e: usize) -> Result<&Alloc, ModelError> {
        let al = self
            .allocs
            .get(a)
            .ok_or_else(|| ModelError::Corrupt(format!("no allocation {a}")))?;
        if e >= al.entries.len() {
            return Err(ModelError::Corrupt(format!(
                "entry {e} outside allocation {a} ({} entries)",
                al.entries.len()
            )));
        }
        Ok(al)
    }

    /// One metadata lookup through the entry's slice, a miss served at once.
    fn meta(&mut self, a: usize, e: usize, op: Op) -> Result<u64, ModelError> {
        let al = &self.allocs[a];
        let index = self.p.addr.meta_index(al.buddy_off, e as u64);
        let mc = (index % self.p.mcs as u64) as usize;
        let field = index / self.p.mcs as u64;
        let req = Request { id: 0, field, op };
        let cache = &mut self.slices[mc];
        let evs = match cache.lookup(req) {
            Lookup::Stall => return Err(ModelError::Corrupt("metadata slice stalled".into())),
            Lookup::Accepted(evs) => evs,
        };
        let mut evs = evs;
        if let Some(sector) = evs.iter().find_map(|ev| match ev {
            Event::MemRead { sector } => Some(*sector),
            _ => None,
        }) {
            self.counts.meta_reads += 1;
            self.counts.energy_pj += self.p.energy.hbm_pj(self.p.meta.sector_bytes as u64);
            let key = (mc as u64) << 48 | sector;
            let data = self
                .meta_mem
                .get(&key)
                .cloned()
                .unwrap_or_else(|| vec![0; self.p.meta.sector_bytes as usize]);
            evs = cache
                .fill(sector, &data)
                .map_err(|e| ModelError::Corrupt(format!("metadata fill: {e}")))?;
        }
        let mut value = None;
        for ev in evs {
            match ev {
                Event::Response { data, .. } => value = Some(data),
                Event::MemWrite { sector, data } => {
                    self.counts.meta_writes += 1;
                    self.counts.energy_pj += self.p.energy.hbm_pj(data.len() as u64);
                    self.meta_mem.insert((mc as u64) << 48 | sector, data);
                }
                Event::MemRead { .. } => {}
            }
        }
        value.ok_or_else(|| ModelError::Corrupt("metadata lookup without a response".into()))
    }

    /// Data traffic of one access to an entry with `code` at target `t`; the uncompressed
    /// baseline moves `baseline_bytes` for it (none: no access).
    fn traffic(&mut self, code: SizeCode, t: Target, baseline_bytes: u64) {
        let en = self.p.energy;
        self.counts.accesses += 1;
        if baseline_bytes > 0 {
            self.counts.baseline_pj += en.hbm_pj(baseline_bytes);
        }
        if t == Target::X1 {
            self.counts.device_sectors += (ENTRY_BYTES / SECTOR_BYTES) as u64;
            self.counts.energy_pj += en.hbm_pj(ENTRY_BYTES as u64);
            return;
        }
        let s = split(code, t);
        if s.is_zero {
            self.counts.zero_accesses += 1;
            return;
        }
        self.counts.device_sectors += s.n_dev() as u64;
        self.counts.energy_pj += en.hbm_pj(s.n_dev() as u64 * SECTOR_BYTES as u64);
        if s.n_bud() > 0 {
            let payload = s.n_bud() as u64 * SECTOR_BYTES as u64;
            self.counts.buddy_accesses += 1;
            self.counts.buddy_pieces += s.n_bud() as u64;
            self.counts.link_bytes += payload + en.header_bytes;
            self.counts.energy_pj +=
                en.hbm_pj(payload) + en.link_pj_per_bit * 8.0 * (payload + en.header_bytes) as f64;
        }
    }

    /// Writes a whole entry.
    pub fn write(&mut self, a: usize, e: usize, data: &[u8]) -> Result<(), ModelError> {
        self.write_with(a, e, data, ENTRY_BYTES as u64)
    }

    fn write_with(
        &mut self,
        a: usize,
        e: usize,
        data: &[u8],
        baseline_bytes: u64,
    ) -> Result<(), ModelError> {
        let t = self.entry(a, e)?.target;
        if data.len() != ENTRY_BYTES {
            return Err(ModelError::BadLineLength {
                len: data.len(),
                expected: ENTRY_BYTES,
            });
        }
        let zero = data.iter().all(|b| *b == 0);
        let (stream, nbits) = bpc::encode(&self.p.bpc, data)?;
        let code = if t == Target::X1 {
            SizeCode::Raw
        } else {
            SizeCode::of(zero, nbits)
        };
        // Raw entries (and every entry of a 1x page) are stored as the block itself.
        let stored = if code == SizeCode::Raw {
            Stored {
                code,
                bytes: data.to_vec(),
                nbits: 8 * ENTRY_BYTES,
            }
        } else {
            Stored {
                code,
                bytes: stream,
                nbits,
            }
        };
        if t != Target::X1 {
            self.meta(a, e, Op::Write(code.bits() as u64))?;
        }
        self.traffic(code, t, baseline_bytes);
        self.allocs[a].entries[e] = Some(stored);
        Ok(())
    }

    /// Reads an entry (zeros if never written).
    pub fn read(&mut self, a: usize, e: usize) -> Result<Vec<u8>, ModelError> {
        self.read_with(a, e, ENTRY_BYTES as u64)
    }

    fn read_with(
        &mut self,
        a: usize,
        e: usize,
        baseline_bytes: u64,
    ) -> Result<Vec<u8>, ModelError> {
        let t = self.entry(a, e)?.target;
        let stored = self.allocs[a].entries[e].clone();
        let code = if t == Target::X1 {
            SizeCode::Raw
        } else {
            SizeCode::from_bits(self.meta(a, e, Op::Read)? as u8)?
        };
        self.traffic(code, t, baseline_bytes);
        match stored {
            None => Ok(vec![0; ENTRY_BYTES]),
            Some(s) if s.code == SizeCode::Raw => Ok(s.bytes),
            Some(s) => bpc::decompress(&self.p.bpc, &s.bytes, s.nbits),
        }
    }

    /// Writes the 32 B sectors of `data` selected by `mask` (bit k: sector k): a
    /// read-modify-write of the entry (two accesses; the baseline writes the sectors alone).
    pub fn write_partial(
        &mut self,
        a: usize,
        e: usize,
        mask: u8,
        data: &[u8],
    ) -> Result<(), ModelError> {
        if data.len() != ENTRY_BYTES {
            return Err(ModelError::BadLineLength {
                len: data.len(),
                expected: ENTRY_BYTES,
            });
        }
        let mut cur = self.read_with(a, e, 0)?;
        self.counts.rmws += 1;
        for k in 0..ENTRY_BYTES / SECTOR_BYTES {
            if mask >> k & 1 == 1 {
                let r = k * SECTOR_BYTES..(k + 1) * SECTOR_BYTES;
                cur[r.clone()].copy_from_slice(&data[r]);
            }
        }
        let sectors = (mask & 0xF).count_ones() as u64;
        self.write_with(a, e, &cur, sectors * SECTOR_BYTES as u64)
    }
}
