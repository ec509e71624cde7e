//! Golden model of a set-associative, optionally sectored, write-back cache with an MSHR file:
//! the metadata caches of PACT'12 (docs/FORMATS.md, PACT'12 §3, §6 `md_cache` / `md_mshr`) and
//! ISCA'20 (docs/FORMATS.md, Buddy §3.4, §7 `meta_cache_slice`).
//!
//! The model is event-ordered: it handles one event at a time (a lookup or a fill) in the
//! order the hardware accepts them, and returns what the hardware must emit for it.
//!
//! * **Lookup** of one `field_bits` field (a metadata entry), read or write. A hit (line
//!   present, sector valid) answers at once: a read returns the field, a write stores it and
//!   marks the sector dirty. Either way the line becomes most recently used.
//! * **Miss**: the request is parked in the MSHR of its sector, with the
//!   same sector address (a *merge*), or in a newly allocated MSHR, which issues one
//!   memory read of the sector. If no MSHR is free, or the sector's MSHR has no free slot, the
//!   lookup is refused ([`Lookup::Stall`]) and the state does not change; the hardware holds
//!   `ready` low.
//! * **Fill** (memory data for an MSHR's sector): if the line is absent, a way is chosen
//!   (the lowest invalid way, else the least recently used), its dirty sectors are written
//!   back (one memory write per dirty sector, in sector order), and the line is installed
//!   with only the filled sector valid. Then the parked requests run in arrival order, each
//!   answered as a miss, and the MSHR is freed.
//!
//! The policies are write-back, write-allocate (fetch on write miss) and true LRU. Lines are
//! allocated when the fill arrives, not when the miss is taken. MSHRs track sectors.
//! `docs/FORMATS.md` records these choices.

use std::collections::VecDeque;

/// Geometry and policies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheParams {
    /// Number of sets (a power of two).
    pub sets: u32,
    /// Ways per set (1-4: true LRU is kept as an order of the ways).
    pub ways: u32,
    /// Line size in bytes (a power of two).
    pub line_bytes: u32,
    /// Sector size in bytes (divides the line; equal to it for an unsectored cache).
    pub sector_bytes: u32,
    /// Width of the field a lookup reads or writes (divides the sector's bits, at most 64).
    pub field_bits: u32,
    /// MSHR entries.
    pub mshrs: u32,
    /// Requests one MSHR entry can park (the first miss included).
    pub mshr_slots: u32,
}

impl CacheParams {
    /// PACT'12 MD cache: 2-way, 16 sets, 128 B lines (4 KB), 4-bit entries, 10 MSHRs.
    pub fn pact12_md() -> CacheParams {
        CacheParams {
            sets: 16,
            ways: 2,
            line_bytes: 128,
            sector_bytes: 128,
            field_bits: 4,
            mshrs: 10,
            mshr_slots: 4,
        }
    }

    /// ISCA'20 metadata-cache slice: 4 KB, 4-way (8 sets), 128 B lines of four 32 B sectors,
    /// 4-bit entries, 4 MSHRs.
    pub fn buddy_slice() -> CacheParams {
        CacheParams {
            sets: 8,
            ways: 4,
            line_bytes: 128,
            sector_bytes: 32,
            field_bits: 4,
            mshrs: 4,
            mshr_slots: 4,
        }
    }

    /// Checks the parameters; the message names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        let pow2 = |v: u32| v.is_power_of_two();
        if !pow2(self.sets) {
            return Err(format!("sets = {} is not a power of two", self.sets));
        }
        if !(1..=4).contains(&self.ways) {
            return Err(format!("ways = {} (1-4 supported)", self.ways));
        }
        if !pow2(self.line_bytes) || !pow2(self.sector_bytes) || self.sector_bytes > self.line_bytes
        {
            return Err(format!(
                "line {} B / sector {} B: both powers of two, sector <= line",
                self.line_bytes, self.sector_bytes
            ));
        }
        if self.line_bytes / self.sector_bytes > 32 {
            return Err("more than 32 sectors per line".into());
        }
        if !pow2(self.field_bits) || self.field_bits > 64 || self.field_bits > self.sector_bytes * 8
        {
            return Err(format!(
                "field_bits = {} (a power of two, at most 64 and at most a sector)",
                self.field_bits
            ));
        }
        if self.mshrs == 0 || self.mshr_slots == 0 {
            return Err("mshrs and mshr_slots must be at least 1".into());
        }
        Ok(())
    }

    /// Sectors per line.
    pub fn sectors(&self) -> u32 {
        self.line_bytes / self.sector_bytes
    }

    /// Fields per sector.
    pub fn fields_per_sector(&self) -> u64 {
        self.sector_bytes as u64 * 8 / self.field_bits as u64
    }

    /// Capacity in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.sets as u64 * self.ways as u64 * self.line_bytes as u64
    }

    /// Global sector address of field `f`.
    pub fn sector_of(&self, f: u64) -> u64 {
        f / self.fields_per_sector()
    }
}

/// A lookup: read or write one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Return the field.
    Read,
    /// Store this value (truncated to `field_bits`).
    Write(u64),
}

/// One lookup request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Requester's tag, echoed in the response.
    pub id: u32,
    /// Field index (global: field `f` is bits `[f*w, f*w + w)` of the memory).
    pub field: u64,
    /// Read or write.
    pub op: Op,
}

/// What the cache emits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Answer to a lookup: `hit` as classified when it arrived; `data` the field after the
    /// operation (a write returns the value written).
    Response {
        /// The request's tag.
        id: u32,
        /// Found in the cache when it arrived.
        hit: bool,
        /// Field value.
        data: u64,
    },
    /// Memory read of one sector (an MSHR allocation).
    MemRead {
        /// Global sector address.
        sector: u64,
    },
    /// Write-back of one dirty sector of an evicted line.
    MemWrite {
        /// Global sector address.
        sector: u64,
        /// The sector's bytes.
        data: Vec<u8>,
    },
}

/// Result of a lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Accepted; the events it caused (a response on a hit, a memory read on a new miss,
    /// nothing on a merge).
    Accepted(Vec<Event>),
    /// Refused: no MSHR free, or the sector's MSHR is full. Nothing changed.
    Stall,
}

/// Event counters (the hardware keeps the same).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that hit.
    pub hits: u64,
    /// Lookups that allocated an MSHR.
    pub misses: u64,
    /// Lookups parked behind an MSHR of the same sector.
    pub merges: u64,
    /// Lookups refused for lack of MSHR space (each attempt counts).
    pub stalls: u64,
    /// Fills received.
    pub fills: u64,
    /// Lines evicted while valid.
    pub evictions: u64,
    /// Sectors written back.
    pub writebacks: u64,
}

impl CacheStats {
    /// Hits over accepted lookups.
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses + self.merges;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

#[derive(Clone, Debug)]
struct Way {
    tag: u64,
    valid: u32,
    dirty: u32,
    data: Vec<u8>,
}

#[derive(Clone, Debug)]
struct Mshr {
    sector: u64,
    parked: VecDeque<Request>,
}

/// The cache (see the module documentation).
#[derive(Clone, Debug)]
pub struct Cache {
    p: CacheParams,
    sets: Vec<Vec<Way>>,
    /// Per set: ways from most to least recently used.
    lru: Vec<Vec<u32>>,
    mshrs: Vec<Option<Mshr>>,
    stats: CacheStats,
}

impl Cache {
    /// An empty cache. `p` must be valid ([`CacheParams::validate`]).
    pub fn new(p: &CacheParams) -> Result<Cache, String> {
        p.validate()?;
        let way = Way {
            tag: 0,
            valid: 0,
            dirty: 0,
            data: vec![0; p.line_bytes as usize],
        };
        Ok(Cache {
            sets: vec![vec![way; p.ways as usize]; p.sets as usize],
            lru: vec![(0..p.ways).collect(); p.sets as usize],
            mshrs: vec![None; p.mshrs as usize],
            stats: CacheStats::default(),
            p: p.clone(),
        })
    }

    /// Parameters.
    pub fn params(&self) -> &CacheParams {
        &self.p
    }

    /// Counters so far.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    fn split(&self, sector: u64) -> (usize, u64, u32) {
        let spl = self.p.sectors() as u64;
        let line = sector / spl;
        (
            (line % self.p.sets as u64) as usize,
            line / self.p.sets as u64,
            (sector % spl) as u32,
        )
    }

    fn find(&self, set: usize, tag: u64) -> Option<usize> {
        self.sets[set]
            .iter()
            .position(|w| w.valid != 0 && w.tag == tag)
    }

    fn touch(&mut self, set: usize, way: usize) {
        let order = &mut self.lru[set];
        order.retain(|&w| w != way as u32);
        order.insert(0, way as u32);
    }

    /// Applies `r` to a present, valid sector; the response.
    fn apply(&mut self, set: usize, way: usize, r: &Request, hit: bool) -> Event {
        let fb = self.p.field_bits as u64;
        let sec = self.split(self.p.sector_of(r.field)).2;
        let bit =
            r.field % self.p.fields_per_sector() * fb + sec as u64 * self.p.sector_bytes as u64 * 8;
        let mask = if fb == 64 { u64::MAX } else { (1u64 << fb) - 1 };
        let w = &mut self.sets[set][way];
        let data = match r.op {
            Op::Read => get_bits(&w.data, bit, fb as u32),
            Op::Write(v) => {
                set_bits(&mut w.data, bit, fb as u32, v & mask);
                w.dirty |= 1 << sec;
                v & mask
            }
        };
        self.touch(set, way);
        Event::Response {
            id: r.id,
            hit,
            data,
        }
    }

    /// A lookup arriving now.
    pub fn lookup(&mut self, r: Request) -> Lookup {
        let sector = self.p.sector_of(r.field);
        let (set, tag, sec) = self.split(sector);
        if let Some(way) = self.find(set, tag) {
            if self.sets[set][way].valid >> sec & 1 == 1 {
                self.stats.hits += 1;
                return Lookup::Accepted(vec![self.apply(set, way, &r, true)]);
            }
        }
        if let Some(m) = self.mshrs.iter_mut().flatten().find(|m| m.sector == sector) {
            if m.parked.len() >= self.p.mshr_slots as usize {
                self.stats.stalls += 1;
                return Lookup::Stall;
            }
            m.parked.push_back(r);
            self.stats.merges += 1;
            return Lookup::Accepted(Vec::new());
        }
        match self.mshrs.iter().position(|m| m.is_none()) {
            Some(i) => {
                self.mshrs[i] = Some(Mshr {
                    sector,
                    parked: VecDeque::from([r]),
                });
                self.stats.misses += 1;
                Lookup::Accepted(vec![Event::MemRead { sector }])
            }
            None => {
                self.stats.stalls += 1;
                Lookup::Stall
            }
        }
    }

    /// Memory data for `sector` (`sector_bytes` bytes): installs it and answers the requests
    /// parked in its MSHR. A fill no MSHR waits for is an error.
    pub fn fill(&mut self, sector: u64, data: &[u8]) -> Result<Vec<Event>, String> {
        let Some(i) = self
            .mshrs
            .iter()
            .position(|m| m.as_ref().is_some_and(|m| m.sector == sector))
        else {
            return Err(format!(
                "fill of sector {:#x} that no MSHR waits for",
                sector
            ));
        };
        if data.len() != self.p.sector_bytes as usize {
            return Err(format!(
                "fill of {} bytes, sectors are {}",
                data.len(),
                self.p.sector_bytes
            ));
        }
        self.stats.fills += 1;
        let (set, tag, sec) = self.split(sector);
        let mut events = Vec::new();
        let way = match self.find(set, tag) {
            Some(w) => w,
            None => {
                let way = match self.sets[set].iter().position(|w| w.valid == 0) {
                    Some(w) => w,
                    None => *self.lru[set].last().unwrap_or(&0) as usize,
                };
                let spl = self.p.sectors() as u64;
                let sb = self.p.sector_bytes as usize;
                let victim = &mut self.sets[set][way];
                if victim.valid != 0 {
                    self.stats.evictions += 1;
                    let line = victim.tag * self.p.sets as u64 + set as u64;
                    for s in 0..spl as usize {
                        if victim.dirty >> s & 1 == 1 {
                            self.stats.writebacks += 1;
                            events.push(Event::MemWrite {
                                sector: line * spl + s as u64,
                                data: victim.data[s * sb..(s + 1) * sb].to_vec(),
                            });
                        }
                    }
                }
                victim.tag = tag;
                victim.valid = 0;
                victim.dirty = 0;
                way
            }
        };
        let sb = self.p.sector_bytes as usize;
        let w = &mut self.sets[set][way];
        w.data[sec as usize * sb..(sec as usize + 1) * sb].copy_from_slice(data);
        w.valid |= 1 << sec;
        self.touch(set, way);
        let m = self.mshrs[i].take().map(|m| m.parked).unwrap_or_default();
        for r in m {
            events.push(self.apply(set, way, &r, false));
        }
        Ok(events)
    }

    /// Writes back every dirty sector (end of a test): the memory writes, in set/way/sector
    /// order. Lines stay valid and become clean.
    pub fn flush(&mut self) -> Vec<Event> {
        let spl = self.p.sectors() as usize;
        let sb = self.p.sector_bytes as usize;
        let mut out = Vec::new();
        for (set, ways) in self.sets.iter_mut().enumerate() {
            for w in ways.iter_mut() {
                let line = w.tag * self.p.sets as u64 + set as u64;
                for s in 0..spl {
                    if w.valid >> s & 1 == 1 && w.dirty >> s & 1 == 1 {
                        out.push(Event::MemWrite {
                            sector: line * spl as u64 + s as u64,
                            data: w.data[s * sb..(s + 1) * sb].to_vec(),
                        });
                    }
                }
                w.dirty = 0;
            }
        }
        out
    }
}

fn get_bits(data: &[u8], bit: u64, n: u32) -> u64 {
    (0..n as u64).fold(0, |acc, i| {
        let b = bit + i;
        acc | (((data[(b / 8) as usize] >> (b % 8)) & 1) as u64) << i
    })
}

fn set_bits(data: &mut [u8], bit: u64, n: u32, v: u64) {
    for i in 0..n as u64 {
        let b = bit + i;
        let byte = &mut data[(b / 8) as usize];
        let m = 1u8 << (b % 8);
        if v >> i & 1 == 1 {
            *byte |= m;
        } else {
            *byte &= !m;
        }
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
