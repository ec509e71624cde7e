//! Memory-side models of PACT'12 (docs/FORMATS.md, PACT'12 §3, §6 `reqsize_mod`,
//! `md_cache`/`md_mshr`, `mc_comp_top`): MD addressing, the request-size modifier and a
//! transaction-level model of one memory controller's compression path.
//!
//! The model handles one SM/DMA request at a time, in order, against:
//! * the **data region**: one 128 B frame per local block; a block's `N` chunks occupy frame
//!   chunks `0..N−1`, the rest keep what was there (no compaction, §2.1);
//! * the **MD region**: entry `blk` is field `blk` of [`LossyParams::md_bits`] bits
//!   (`md_line = blk / md_per_line`, §2.5), all zero (raw, t = 0) at power-up;
//! * the **MD cache** ([`crate::model::cache`], PACT'12 preset: 32 × 128 B lines, 2-way,
//!   LRU, write-back, 10 MSHRs): a miss reads the MD line (`md_rd`), an eviction of a dirty
//!   line writes it (`md_wr`);
//! * the **local region** (`l_rd`/`l_wr`): raw 128 B blocks that bypass compression and MD.
//!
//! Reads (`g_rd`): an MD hit fetches `N` chunks; a miss does not stall the read, which goes
//! out as the raw chunk count (8) while the MD line is fetched with priority; the data waits
//! at the decompressor for the entry (§3, "MD miss on a read"). Full writes (`g_wr`) compress
//! with the `tcode` the request carries (a DMA copy tagged through `cudaMemcpy`) or, from an
//! SM, with the block's sticky `tcode` read from its MD entry; partial writes become a
//! read-modify-write (`g_rdpaird`): read, decompress, merge, recompress with the sticky
//! `tcode`, write. Every written block updates its MD entry.
//!
//! Latency is an unloaded estimate in DRAM clock cycles ([`Timing`]): chunk `j` of a read
//! arrives at `access + j·chunk`; the decompressor emits 16 B output beat `b` once the chunks
//! holding its input have arrived (`ceil((b+1)·N/8)` of them) plus its latency, one beat per
//! cycle (§3.2, Fig. 4(a)); an MD miss puts the 8-chunk MD line on the channel first.

use super::{compress, decompress, Check, LossyParams, MdEntry, CHUNK_BYTES};
use crate::model::cache::{Cache, CacheParams, CacheStats, Event, Lookup, Op, Request};
use std::collections::HashMap;

/// Unloaded timing assumptions, in DRAM clock cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Cycles from the command to the first chunk's arrival, less one chunk time (0 in the
    /// §3.2 example; GDDR3 `CL` = 10 in GPGPU-Sim's configuration).
    pub access: u32,
    /// Cycles per 16 B chunk (burst length 4 on a DDR bus: 2).
    pub chunk: u32,
    /// Decompressor latency (1 cycle, Table 4).
    pub decomp: u32,
    /// Compressor fill cycles (3, Table 4) on top of one cycle per two words.
    pub comp_fill: u32,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            access: 0,
            chunk: 2,
            decomp: 1,
            comp_fill: 3,
        }
    }
}

impl Timing {
    /// Read latency of a block of `n` chunks fetched as `fetched` chunks, the first arriving
    /// after `delay` extra cycles; raw t = 0 blocks pass the decompressor by.
    pub fn read(&self, n: u32, fetched: u32, passthrough: bool, delay: u32) -> u32 {
        let arrive = |j: u32| delay + self.access + j * self.chunk;
        if passthrough {
            return arrive(fetched.max(1));
        }
        let mut t = 0;
        for b in 0..8 {
            let need = ((b + 1) * n).div_ceil(8).max(1);
            t = (t + 1).max(arrive(need) + self.decomp);
        }
        t
    }
}

/// Parameters of the memory-controller model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McParams {
    /// The block codec.
    pub codec: LossyParams,
    /// The MD cache (its `field_bits` must equal `codec.md_bits`).
    pub md_cache: CacheParams,
    /// Latency assumptions.
    pub timing: Timing,
}

impl Default for McParams {
    fn default() -> Self {
        let codec = LossyParams::default();
        let mut md_cache = CacheParams::pact12_md();
        md_cache.field_bits = codec.md_bits;
        McParams {
            codec,
            md_cache,
            timing: Timing::default(),
        }
    }
}

impl McParams {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        self.codec.validate().map_err(|e| e.to_string())?;
        self.md_cache.validate()?;
        if self.md_cache.field_bits != self.codec.md_bits {
            return Err(format!(
                "md_cache.field_bits = {} but MD entries have {} bits",
                self.md_cache.field_bits, self.codec.md_bits
            ));
        }
        Ok(())
    }

    /// Data bytes one MD cache line covers (32 KB with 4-bit entries and 128 B blocks).
    pub fn bytes_per_md_line(&self) -> u64 {
        self.md_cache.line_bytes as u64 * 8 / self.codec.md_bits as u64
            * self.codec.block_bytes as u64
    }

    /// Data bytes the whole MD cache covers (1 MB per MC with the paper's geometry).
    pub fn md_coverage_bytes(&self) -> u64 {
        self.md_cache.sets as u64 * self.md_cache.ways as u64 * self.bytes_per_md_line()
    }
}

/// What `reqsize_mod` makes of a 128 B read (§6 item 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReqSize {
    /// Chunks to fetch: `N` on an MD hit, the raw count (8) on a miss.
    pub nchunks: u8,
    /// The entry is not known yet: the data waits at the decompressor for the MD response.
    pub md_pending: bool,
}

/// The request-size modifier: `entry` is the MD entry on a hit, `None` on a miss.
pub fn reqsize(p: &LossyParams, entry: Option<MdEntry>) -> ReqSize {
    match entry {
        Some(e) => ReqSize {
            nchunks: e.n,
            md_pending: false,
        },
        None => ReqSize {
            nchunks: p.raw_chunks() as u8,
            md_pending: true,
        },
    }
}

/// One request at the memory controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McRequest {
    /// `g_rd`: read a global block.
    Read {
        /// Local block index.
        blk: u64,
    },
    /// `g_wr`: write the bytes of `data` whose bit is set in `mask` (all set: a full write).
    Write {
        /// Local block index.
        blk: u64,
        /// The block's new bytes (only the masked ones are used).
        data: Vec<u8>,
        /// Byte mask, bit i for byte i.
        mask: u128,
        /// The truncation code of a tagged DMA copy (full writes only); `None`: the block's
        /// sticky code from its MD entry.
        tcode: Option<u8>,
    },
    /// `l_rd`: read a local-space block (bypass).
    LocalRead {
        /// Local-space block index.
        blk: u64,
    },
    /// `l_wr`: write a whole local-space block (bypass).
    LocalWrite {
        /// Local-space block index.
        blk: u64,
        /// Its bytes.
        data: Vec<u8>,
    },
}

/// The answer to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McResponse {
    /// The block read (reads only).
    pub data: Option<Vec<u8>>,
    /// Whether the MD lookup hit (false for local traffic).
    pub md_hit: bool,
    /// Data chunks moved on the DRAM bus (read and written).
    pub chunks: u32,
    /// Unloaded latency estimate in DRAM cycles ([`Timing`]).
    pub latency: u32,
}

/// Counters of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct McStats {
    /// `g_rd` requests.
    pub reads: u64,
    /// Full `g_wr` requests.
    pub full_writes: u64,
    /// Partial `g_wr` requests (read-modify-write).
    pub rmw: u64,
    /// `l_rd` and `l_wr` requests.
    pub local: u64,
    /// Global data chunks read from DRAM.
    pub chunks_read: u64,
    /// Global data chunks written to DRAM.
    pub chunks_written: u64,
    /// Local chunks moved (8 per request).
    pub local_chunks: u64,
    /// MD lines read (`md_rd`).
    pub md_line_reads: u64,
    /// MD lines written back (`md_wr`).
    pub md_line_writes: u64,
    /// Global blocks written, by chunk count (index N, 1..=8).
    pub written_n: [u64; 9],
    /// Global blocks written raw.
    pub written_raw: u64,
    /// Sum of read latencies (`g_rd`).
    pub read_latency: u64,
    /// Sum of what the same reads would take uncompressed.
    pub read_latency_raw: u64,
}

/// The transaction-level model of one MC (see the module documentation).
#[derive(Clone, Debug)]
pub struct Mc {
    p: McParams,
    cache: Cache,
    frames: HashMap<u64, Vec<u8>>,
    md_mem: HashMap<u64, Vec<u8>>,
    local: HashMap<u64, Vec<u8>>,
    stats: McStats,
}

impl Mc {
    /// An MC with zeroed memories and an empty MD cache.
    pub fn new(p: &McParams) -> Result<Mc, String> {
        p.validate()?;
        Ok(Mc {
            cache: Cache::new(&p.md_cache)?,
            p: p.clone(),
            frames: HashMap::new(),
            md_mem: HashMap::new(),
            local: HashMap::new(),
            stats: McStats::default(),
        })
    }

    /// An MC with an empty MD cache over given memory contents: global frames and local
    /// blocks by block index, MD lines by line index (what a reset leaves in DRAM).
    pub fn with_memories(
        p: &McParams,
        frames: HashMap<u64, Vec<u8>>,
        local: HashMap<u64, Vec<u8>>,
        md_mem: HashMap<u64, Vec<u8>>,
    ) -> Result<Mc, String> {
        let mut mc = Mc::new(p)?;
        mc.frames = frames;
        mc.local = local;
        mc.md_mem = md_mem;
        Ok(mc)
    }

    /// MD lines the cache holds dirty (not yet in the MD region), in ascending order.
    pub fn dirty_md_lines(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .cache
            .clone()
            .flush()
            .into_iter()
            .filter_map(|e| match e {
                Event::MemWrite { sector, .. } => Some(sector),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// Parameters.
    pub fn params(&self) -> &McParams {
        &self.p
    }

    /// Counters so far.
    pub fn stats(&self) -> McStats {
        self.stats
    }

    /// The MD cache's counters (hits, misses, evictions, write-backs).
    pub fn md_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// The 128 B frame of global block `blk` as DRAM holds it.
    pub fn frame(&self, blk: u64) -> Vec<u8> {
        self.frames
            .get(&blk)
            .cloned()
            .unwrap_or_else(|| vec![0; self.p.codec.block_bytes])
    }

    /// Global blocks written so far, in ascending order.
    pub fn written_blocks(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.frames.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Local-region blocks written so far, in ascending order.
    pub fn local_blocks(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.local.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Local-region block `blk` (zeros if never written).
    pub fn local_block(&self, blk: u64) -> Vec<u8> {
        self.local
            .get(&blk)
            .cloned()
            .unwrap_or_else(|| vec![0; self.p.codec.block_bytes])
    }

    /// MD lines the MD region holds (written back at least once), in ascending order.
    pub fn md_lines(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.md_mem.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// MD line `line` as the MD region holds it (the cache's dirty copy not included).
    pub fn md_line(&self, line: u64) -> Vec<u8> {
        self.md_mem
            .get(&line)
            .cloned()
            .unwrap_or_else(|| vec![0; self.p.md_cache.sector_bytes as usize])
    }

    /// The MD entry of `blk` as the MD region plus the cache hold it (no lookup counted).
    pub fn md_entry(&self, blk: u64) -> MdEntry {
        let mut c = self.cache.clone();
        let mut mem = self.md_mem.clone();
        for e in c.flush() {
            if let Event::MemWrite { sector, data } = e {
                mem.insert(sector, data);
            }
        }
        let cp = &self.p.md_cache;
        let sector = cp.sector_of(blk);
        let bits = mem.get(&sector).map_or(0, |d| {
            let fb = cp.field_bits as u64;
            let bit = blk % cp.fields_per_sector() * fb;
            (0..fb).fold(0u64, |a, i| {
                let b = bit + i;
                a | (((d[(b / 8) as usize] >> (b % 8)) & 1) as u64) << i
            })
        });
        MdEntry::decode(&self.p.codec, bits)
    }

    /// Writes back every dirty MD line (end of a run); returns how many lines.
    pub fn flush(&mut self) -> u64 {
        let evs = self.cache.flush();
        let n = evs.len() as u64;
        self.apply_md_events(evs);
        self.stats.md_line_writes += n;
        n
    }

    fn apply_md_events(&mut self, evs: Vec<Event>) -> Option<u64> {
        let mut val = None;
        for e in evs {
            match e {
                Event::Response { data, .. } => val = Some(data),
                Event::MemWrite { sector, data } => {
                    self.md_mem.insert(sector, data);
                }
                Event::MemRead { .. } => {}
            }
        }
        val
    }

    /// One MD lookup, a miss served at once from the MD region: (field, hit).
    fn md(&mut self, blk: u64, op: Op) -> Result<(u64, bool), String> {
        let req = Request {
            id: 0,
            field: blk,
            op,
        };
        match self.cache.lookup(req) {
            Lookup::Stall => Err("MD cache stalled with no request in flight".into()),
            Lookup::Accepted(evs) => {
                let read = evs.iter().find_map(|e| match e {
                    Event::MemRead { sector } => Some(*sector),
                    _ => None,
                });
                match read {
                    None => {
                        let v = self.apply_md_events(evs);
                        v.map(|v| (v, true))
                            .ok_or_else(|| "MD hit without a response".to_string())
                    }
                    Some(sector) => {
                        self.stats.md_line_reads += 1;
                        let line = self
                            .md_mem
                            .get(&sector)
                            .cloned()
                            .unwrap_or_else(|| vec![0; self.p.md_cache.sector_bytes as usize]);
                        let evs = self.cache.fill(sector, &line)?;
                        self.stats.md_line_writes += evs
                            .iter()
                            .filter(|e| matches!(e, Event::MemWrite { .. }))
                            .count() as u64;
                        let v = self.apply_md_events(evs);
                        v.map(|v| (v, false))
                            .ok_or_else(|| "MD fill without a response".to_string())
                    }
                }
            }
        }
    }

    /// Reads block `blk` through the MD lookup: (data, entry, hit, chunks fetched, latency).
    fn read_block(&mut self, blk: u64) -> Result<(Vec<u8>, MdEntry, bool, u32, u32), String> {
        let (bits, hit) = self.md(blk, Op::Read)?;
        let e = MdEntry::decode(&self.p.codec, bits);
        let rs = reqsize(&self.p.codec, hit.then_some(e));
        let fetched = rs.nchunks as u32;
        self.stats.chunks_read += fetched as u64;
        let frame = self.frame(blk);
        let data = decompress(&self.p.codec, e, &frame, Check::Hardware)
            .map_err(|err| format!("block {blk:#x}: {err}"))?;
        let tm = &self.p.timing;
        let delay = if hit {
            0
        } else {
            tm.chunk * self.p.codec.raw_chunks() as u32
        };
        let passthrough = !e.c && self.p.codec.t_of(e.tcode) == 0;
        let lat = tm.read(e.n as u32, fetched, passthrough, delay);
        Ok((data, e, hit, fetched, lat))
    }

    /// Compresses and stores `data` as block `blk`; updates the MD entry. Chunks written.
    fn write_block(&mut self, blk: u64, data: &[u8], tcode: u8) -> Result<u32, String> {
        let b = compress(&self.p.codec, data, tcode).map_err(|e| e.to_string())?;
        let n = b.md.n as usize;
        let bb = self.p.codec.block_bytes;
        let frame = self.frames.entry(blk).or_insert_with(|| vec![0; bb]);
        frame[..n * CHUNK_BYTES].copy_from_slice(&b.chunks);
        self.stats.chunks_written += n as u64;
        self.stats.written_n[n] += 1;
        if !b.md.c {
            self.stats.written_raw += 1;
        }
        self.md(blk, Op::Write(b.md.encode(self.p.codec.md_bits)))?;
        Ok(n as u32)
    }

    fn check_data(&self, data: &[u8]) -> Result<(), String> {
        if data.len() != self.p.codec.block_bytes {
            return Err(format!(
                "request data of {} bytes, blocks are {}",
                data.len(),
                self.p.codec.block_bytes
            ));
        }
        Ok(())
    }

    /// Handles one request to completion.
    pub fn request(&mut self, r: &McRequest) -> Result<McResponse, String> {
        let bb = self.p.codec.block_bytes;
        let raw = self.p.codec.raw_chunks() as u32;
        let tm = self.p.timing;
        let comp = (bb / 8) as u32 + tm.comp_fill;
        match r {
            McRequest::Read { blk } => {
                let (data, _, hit, fetched, lat) = self.read_block(*blk)?;
                self.stats.reads += 1;
                self.stats.read_latency += lat as u64;
                self.stats.read_latency_raw += tm.read(raw, raw, true, 0) as u64;
                Ok(McResponse {
                    data: Some(data),
                    md_hit: hit,
                    chunks: fetched,
                    latency: lat,
                })
            }
            McRequest::Write {
                blk,
                data,
                mask,
                tcode,
            } => {
                self.check_data(data)?;
                let full_mask = if bb == 128 {
                    u128::MAX
                } else {
                    (1u128 << bb) - 1
                };
                if *mask & full_mask == full_mask {
                    self.stats.full_writes += 1;
                    let (tc, hit) = match tcode {
                        Some(t) => (*t, true),
                        None => {
                            let (bits, hit) = self.md(*blk, Op::Read)?;
                            (MdEntry::decode(&self.p.codec, bits).tcode, hit)
                        }
                    };
                    let n = self.write_block(*blk, data, tc)?;
                    return Ok(McResponse {
                        data: None,
                        md_hit: hit,
                        chunks: n,
                        latency: comp + n * tm.chunk,
                    });
                }
                if tcode.is_some() {
                    return Err("a partial write cannot carry a truncation code".into());
                }
                self.stats.rmw += 1;
                let (mut old, e, hit, fetched, lat) = self.read_block(*blk)?;
                for (i, b) in old.iter_mut().enumerate() {
                    if *mask >> i & 1 == 1 {
                        *b = data[i];
                    }
                }
                let n = self.write_block(*blk, &old, e.tcode)?;
                Ok(McResponse {
                    data: None,
                    md_hit: hit,
                    chunks: fetched + n,
                    latency: lat + comp + n * tm.chunk,
                })
            }
            McRequest::LocalRead { blk } => {
                self.stats.local += 1;
                self.stats.local_chunks += raw as u64;
                let data = self.local.get(blk).cloned().unwrap_or_else(|| vec![0; bb]);
                Ok(McResponse {
                    data: Some(data),
                    md_hit: false,
                    chunks: raw,
                    latency: tm.read(raw, raw, true, 0),
                })
            }
            McRequest::LocalWrite { blk, data } => {
                self.check_data(data)?;
                self.stats.local += 1;
                self.stats.local_chunks += raw as u64;
                self.local.insert(*blk, data.clone());
                Ok(McResponse {
                    data: None,
                    md_hit: false,
                    chunks: raw,
                    latency: raw * tm.chunk,
                })
            }
        }
    }
}
