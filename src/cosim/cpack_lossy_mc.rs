//! Scoreboard of the PACT'12 memory-controller path (`rtl::cpack_lossy::mc_top`) against the
//! transaction-level model (`model::cpack_lossy::mc::Mc`) on the N-channel harness.
//!
//! Stimulus: mixed requests (global reads, full writes with and without a DMA `tcode`,
//! partial writes that become read-modify-writes, local reads and writes) over a hot set of
//! blocks, a streaming pointer and the whole block space, with the §5 classes as write data.
//! Every request is given to the model when its first beat is offered; the model's response
//! (read data, MD hit, chunks moved) is what the `rsp` channel must produce, in order.
//! Two reactive memories answer the design: DRAM data (`dreq`/`dresp`, 1–30 cycles,
//! reordered) and the MD region (`mdreq`/`mdresp`, its own channel). At the end the chunk
//! and MD-line counts, the MD cache's hit/miss/merge counters and the final contents of both
//! memories must equal the model's.

use super::block_stim::BlockStim;
use super::dut::Dut;
use super::harness::{Bench, Channel, Expect, Harness, HarnessConfig};
use super::memory::{word64, MemFields, MemResponder, MemTiming, SharedMem as Shared};
use super::stream::{Beat, RunStats};
use crate::hdl::Module;
use crate::model::cpack_lossy::mc::{Mc, McParams, McRequest, McResponse};
use crate::rtl::cpack_lossy::mc_top::{OP_G_RD, OP_G_WR, OP_L_RD, OP_L_WR};
use crate::rtl::cpack_lossy::LossyRtlParams;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};

// Channel order of [`channels`]: inputs `sm`, `dresp`, `mdresp`; outputs `rsp`, `dreq`,
// `mdreq`.
const SM: usize = 0;
const RSP: usize = 3;
const DREQ: usize = 4;
const MDREQ: usize = 5;

/// The MC model's parameters for the hardware's.
pub fn mc_params(p: &LossyRtlParams) -> McParams {
    McParams {
        codec: p.codec.clone(),
        md_cache: p.md_cache.rtl(p.codec.md_bits).cache,
        ..McParams::default()
    }
}

/// Counters of what the design moved, from the memory channels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// Global data chunks read.
    pub chunks_read: u64,
    /// Global data chunks written.
    pub chunks_written: u64,
    /// Local chunks read and written.
    pub local_chunks: u64,
    /// MD lines read.
    pub md_line_reads: u64,
    /// MD lines written back.
    pub md_line_writes: u64,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct McRun {
    /// Harness statistics.
    pub stats: RunStats,
    /// Requests by kind: reads, full writes, partial writes, local.
    pub requests: [u64; 4],
    /// Moved by the design.
    pub rtl: Moved,
    /// What the model moved.
    pub model: Moved,
    /// MD cache (hits, misses, merges): design, model.
    pub md: ([u64; 3], [u64; 3]),
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
            ("MD cache", self.md.0, self.md.1),
        )
    }
}

/// Request mix (relative weights) and memory latencies of a run.
#[derive(Clone, Debug)]
pub struct McOpts {
    /// Weights of global reads, full writes, partial writes, local reads, local writes.
    pub mix: [u32; 5],
    /// DRAM data latency range in cycles.
    pub dram_latency: (u64, u64),
    /// MD-line latency range in cycles.
    pub md_latency: (u64, u64),
}

impl Default for McOpts {
    fn default() -> Self {
        McOpts {
            mix: [7, 5, 3, 3, 2],
            dram_latency: (1, 30),
            md_latency: (2, 40),
        }
    }
}

/// Stimulus and model of the MC path.
struct McBench {
    p: LossyRtlParams,
    mix: [u32; 5],
    model: Mc,
    stim: BlockStim,
    rng: ChaCha8Rng,
    remaining: u64,
    txn: u64,
    beats: Vec<Beat>,
    stream_blk: u64,
    hot: Vec<u64>,
    requests: [u64; 4],
    moved: Moved,
    chunk_bits: u32,
    error: Option<String>,
    /// The memories, for rebuilding the model after a reset.
    dram: Shared,
    md: Shared,
    /// (local, block) of the last two requests (possibly in flight at a reset).
    recent: VecDeque<(bool, u64)>,
    /// Blocks whose data and MD entry a reset may have left inconsistent: never requested
    /// again.
    poisoned: HashSet<(bool, u64)>,
}

fn block_words(b: &[u8]) -> Vec<Vec<u32>> {
    b.chunks(16)
        .map(|c| {
            c.chunks(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect()
        })
        .collect()
}

impl McBench {
    fn new(
        p: &LossyRtlParams,
        mix: [u32; 5],
        n: u64,
        seed: u64,
        dram: Shared,
        md: Shared,
    ) -> Result<McBench, String> {
        if mix.iter().all(|&w| w == 0) {
            return Err("the request mix has no weight".into());
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x3c3c);
        let space = 1u64 << p.md_cache.blk_bits;
        let hot = (0..512).map(|_| rng.gen_range(0..space)).collect();
        Ok(McBench {
            model: Mc::new(&mc_params(p))?,
            stim: BlockStim::new(&p.codec, seed),
            p: p.clone(),
            mix,
            rng,
            remaining: n,
            txn: 0,
            beats: Vec::new(),
            stream_blk: 0,
            hot,
            requests: [0; 4],
            moved: Moved::default(),
            chunk_bits: crate::hdl::clog2(p.codec.raw_chunks() as u64).max(1),
            error: None,
            dram,
            md,
            recent: VecDeque::new(),
            poisoned: HashSet::new(),
        })
    }

    /// A block of the local or global space that no reset has poisoned.
    fn pick_blk(&mut self, local: bool) -> u64 {
        loop {
            let b = self.any_blk();
            if !self.poisoned.contains(&(local, b)) {
                self.recent.push_back((local, b));
                if self.recent.len() > 2 {
                    self.recent.pop_front();
                }
                return b;
            }
        }
    }

    fn any_blk(&mut self) -> u64 {
        let space = 1u64 << self.p.md_cache.blk_bits;
        match self.rng.gen_range(0..10) {
            0..=6 => self.hot[self.rng.gen_range(0..self.hot.len())],
            7 | 8 => {
                self.stream_blk = (self.stream_blk + 1) % space;
                self.stream_blk
            }
            _ => self.rng.gen_range(0..space),
        }
    }

    /// The next request, as the model sees it and as SM beats.
    fn make(&mut self) -> Option<(McRequest, Vec<Beat>)> {
        let bb = self.p.codec.block_bytes;
        let total: u32 = self.mix.iter().sum();
        let mut pick = self.rng.gen_range(0..total);
        let mut kind = 0;
        while pick >= self.mix[kind] {
            pick -= self.mix[kind];
            kind += 1;
        }
        let blk = self.pick_blk(kind >= 3);
        let head = |op: u64, tcv: bool, tc: u8| {
            move |mask: u32, data: Vec<u32>, last: bool| {
                Beat(vec![
                    vec![op as u32],
                    vec![blk as u32],
                    vec![tcv as u32],
                    vec![tc as u32],
                    vec![mask],
                    data,
                    vec![last as u32],
                ])
            }
        };
        let (req, beats) = match kind {
            0 => {
                self.requests[0] += 1;
                let b = head(OP_G_RD, false, 0);
                (McRequest::Read { blk }, vec![b(0, vec![0; 4], true)])
            }
            1 | 2 => {
                let (data, tc) = self.stim.next_block()?;
                let partial = kind == 2;
                let tagged = !partial && self.rng.gen_bool(0.5);
                let mut mask = u128::MAX;
                if partial {
                    self.requests[2] += 1;
                    // Some bytes, some whole 16 B beats, or all but one byte.
                    mask = match self.rng.gen_range(0..3) {
                        0 => self.rng.gen::<u128>(),
                        1 => {
                            let b = self.rng.gen_range(0..bb / 16);
                            0xFFFFu128 << (16 * b)
                        }
                        _ => !(1u128 << self.rng.gen_range(0..bb)),
                    };
                    if bb < 128 {
                        mask &= (1u128 << bb) - 1;
                    }
                    if mask == u128::MAX || (bb < 128 && mask == (1u128 << bb) - 1) {
                        mask &= !1;
                    }
                } else {
                    self.requests[1] += 1;
                }
                let b = head(OP_G_WR, tagged, if tagged { tc } else { 0 });
                let words = block_words(&data);
                let n = words.len();
                let beats = words
                    .into_iter()
                    .enumerate()
                    .map(|(i, w)| b((mask >> (16 * i)) as u32 & 0xFFFF, w, i + 1 == n))
                    .collect();
                let req = McRequest::Write {
                    blk,
                    data,
                    mask,
                    tcode: tagged.then_some(tc),
                };
                (req, beats)
            }
            3 => {
                self.requests[3] += 1;
                let b = head(OP_L_RD, false, 0);
                (McRequest::LocalRead { blk }, vec![b(0, vec![0; 4], true)])
            }
            _ => {
                self.requests[3] += 1;
                let (data, _) = self.stim.next_block()?;
                let b = head(OP_L_WR, false, 0);
                let words = block_words(&data);
                let n = words.len();
                let beats = words
                    .into_iter()
                    .enumerate()
                    .map(|(i, w)| b(0xFFFF, w, i + 1 == n))
                    .collect();
                (McRequest::LocalWrite { blk, data }, beats)
            }
        };
        Some((req, beats))
    }

    /// The response beats the design must give for the model's `r`.
    fn expect(&self, r: &McResponse) -> Vec<Beat> {
        let meta = |last: bool, write: bool| {
            vec![
                vec![last as u32],
                vec![0],
                vec![write as u32],
                vec![r.md_hit as u32],
                vec![r.chunks],
            ]
        };
        match &r.data {
            Some(d) => {
                let w = block_words(d);
                let n = w.len();
                w.into_iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let mut b = vec![x];
                        b.extend(meta(i + 1 == n, false));
                        Beat(b)
                    })
                    .collect()
            }
            None => {
                let mut b = vec![vec![0; 4]];
                b.extend(meta(true, true));
                vec![Beat(b)]
            }
        }
    }
}

impl Bench for McBench {
    fn next_input(&mut self, ch: usize, exp: &mut Expect<'_>) -> Option<Beat> {
        if ch != SM || self.error.is_some() {
            return None;
        }
        if self.beats.is_empty() {
            if self.remaining == 0 {
                return None;
            }
            let (req, mut beats) = self.make()?;
            self.remaining -= 1;
            match self.model.request(&req) {
                Ok(r) => {
                    for (k, b) in self.expect(&r).into_iter().enumerate() {
                        exp.push(RSP, self.txn, k as u64, b);
                    }
                }
                Err(e) => {
                    self.error = Some(format!("model, request {}: {e}", self.txn));
                    return None;
                }
            }
            self.txn += 1;
            beats.reverse();
            self.beats = beats;
        }
        self.beats.pop()
    }

    fn observed(&mut self, ch: usize, beat: &[Vec<u32>], _cycle: u64, _exp: &mut Expect<'_>) {
        match ch {
            DREQ => {
                let we = beat[0][0] & 1 == 1;
                let addr = word64(&beat[1]);
                let local = addr >> (self.p.md_cache.blk_bits + self.chunk_bits) & 1 == 1;
                let m = &mut self.moved;
                match (local, we) {
                    (true, _) => m.local_chunks += 1,
                    (false, true) => m.chunks_written += 1,
                    (false, false) => m.chunks_read += 1,
                }
            }
            MDREQ => {
                if beat[0][0] & 1 == 1 {
                    self.moved.md_line_writes += 1;
                } else {
                    self.moved.md_line_reads += 1;
                }
            }
            _ => {}
        }
    }

    fn finished(&self) -> bool {
        (self.remaining == 0 && self.beats.is_empty()) || self.error.is_some()
    }

    /// The request in flight (and the one being offered) are lost, and so are the MD
    /// cache's dirty lines: the model restarts from what the two memories hold, and the
    /// blocks those may hold inconsistently (the last two requests' blocks, every block of a
    /// dirty MD line) are not requested again. The counters restart with the design's.
    fn reset(&mut self) -> Result<(), String> {
        for r in self.recent.drain(..) {
            self.poisoned.insert(r);
        }
        let per_line =
            self.model.params().md_cache.line_bytes as u64 * 8 / self.p.codec.md_bits as u64;
        for line in self.model.dirty_md_lines() {
            for b in line * per_line..(line + 1) * per_line {
                self.poisoned.insert((false, b));
            }
        }
        let cbits = self.chunk_bits;
        let bw = self.p.md_cache.blk_bits;
        let bb = self.p.codec.block_bytes;
        let (mut frames, mut local) = (HashMap::new(), HashMap::new());
        for (a, d) in self.dram.0.borrow().writes() {
            let blk = a >> cbits & ((1 << bw) - 1);
            let j = (a & ((1 << cbits) - 1)) as usize;
            let map = if a >> (bw + cbits) & 1 == 1 {
                &mut local
            } else {
                &mut frames
            };
            let f: &mut Vec<u8> = map.entry(blk).or_insert_with(|| vec![0; bb]);
            let bytes: Vec<u8> = d.iter().flat_map(|w| w.to_le_bytes()).collect();
            f[16 * j..16 * j + 16].copy_from_slice(&bytes[..16]);
        }
        let mut md_mem = HashMap::new();
        for (a, d) in self.md.0.borrow().writes() {
            md_mem.insert(
                *a,
                d.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>(),
            );
        }
        self.model = Mc::with_memories(&mc_params(&self.p), frames, local, md_mem)?;
        self.moved = Moved::default();
        self.beats.clear();
        Ok(())
    }
}

/// The harness channels of the MC top.
pub fn channels(top: &Module) -> Result<Vec<Channel>, String> {
    super::harness::named_channels(
        top,
        &["sm", "dresp", "mdresp", "rsp", "dreq", "mdreq"],
        &["dreq", "mdreq"],
    )
}

/// Compares the final memory contents with the model's: every global block's frame, every
/// local block, every MD line; and nothing written where the model wrote nothing.
fn compare_memories(
    p: &LossyRtlParams,
    model: &Mc,
    dram: &MemResponder,
    md: &MemResponder,
) -> Result<(), String> {
    let cbits = crate::hdl::clog2(p.codec.raw_chunks() as u64).max(1);
    let bw = p.md_cache.blk_bits;
    let addr =
        |local: bool, blk: u64, j: usize| (local as u64) << (bw + cbits) | blk << cbits | j as u64;
    let words = |b: &[u8]| -> Vec<u32> {
        b.chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    };
    for local in [false, true] {
        let blocks = if local {
            model.local_blocks()
        } else {
            model.written_blocks()
        };
        for blk in blocks {
            let frame = if local {
                model.local_block(blk)
            } else {
                model.frame(blk)
            };
            for (j, ch) in frame.chunks(16).enumerate() {
                let got = dram.read(addr(local, blk, j));
                if got != words(ch) {
                    return Err(format!(
                        "DRAM {} block {blk:#x} chunk {j}: {:08x?}, the model {:08x?}",
                        if local { "local" } else { "global" },
                        got,
                        words(ch)
                    ));
                }
            }
        }
    }
    let globals: HashSet<u64> = model.written_blocks().into_iter().collect();
    let locals: HashSet<u64> = model.local_blocks().into_iter().collect();
    for (a, _) in dram.writes() {
        let local = a >> (bw + cbits) & 1 == 1;
        let blk = a >> cbits & ((1 << bw) - 1);
        let known = if local {
            locals.contains(&blk)
        } else {
            globals.contains(&blk)
        };
        if !known {
            return Err(format!(
                "DRAM address {a:#x} written, the model never wrote it"
            ));
        }
    }
    let mut lines = model.md_lines();
    lines.extend(md.writes().iter().map(|(a, _)| *a));
    lines.sort_unstable();
    lines.dedup();
    for l in lines {
        let got = md.read(l);
        let want = words(&model.md_line(l));
        if got != want {
            return Err(format!(
                "MD line {l:#x}: the design's memory differs from the model's"
            ));
        }
    }
    Ok(())
}

/// Runs `n` requests of the default mix through `dut` (the MC top of `p`, module `top`).
pub fn run(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
    n: u64,
    cfg: &HarnessConfig,
) -> Result<McRun, String> {
    run_opts(dut, top, p, n, cfg, &McOpts::default())
}

/// [`run`] with a request mix and memory latencies.
pub fn run_opts(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
    n: u64,
    cfg: &HarnessConfig,
    o: &McOpts,
) -> Result<McRun, String> {
    let mut h = Harness::new(channels(top)?);
    let dram = Shared::new(MemResponder::new(
        MemFields {
            addr: 1,
            we: Some(0),
            wdata: Some(2),
            tag: Some(3),
        },
        MemTiming {
            min_latency: o.dram_latency.0,
            max_latency: o.dram_latency.1,
            reorder: true,
            write_ack: false,
        },
        4,
    ));
    let cp = p.md_cache.rtl(p.codec.md_bits);
    let md = Shared::new(MemResponder::new(
        MemFields {
            addr: 1,
            we: Some(0),
            wdata: Some(2),
            tag: Some(1),
        },
        MemTiming {
            min_latency: o.md_latency.0,
            max_latency: o.md_latency.1,
            reorder: true,
            write_ack: false,
        },
        (cp.cache.sector_bytes / 4) as usize,
    ));
    h.respond("dreq", "dresp", Box::new(dram.clone()))?;
    h.respond("mdreq", "mdresp", Box::new(md.clone()))?;
    let mut bench = McBench::new(p, o.mix, n, cfg.seed, dram.clone(), md.clone())?;
    let stats = h.run(dut, &mut bench, cfg, &mut |_| {})?;
    let rtl_md = super::cache::read_ports(dut, ["md_hits_o", "md_misses_o", "md_merges_o"])?;
    let ms = bench.model.stats();
    let cs = bench.model.md_stats();
    let mut error = bench.error.take();
    if error.is_none() && stats.first_mismatch.is_none() {
        error = compare_memories(p, &bench.model, &dram.0.borrow(), &md.0.borrow()).err();
    }
    Ok(McRun {
        requests: bench.requests,
        rtl: bench.moved,
        model: Moved {
            chunks_read: ms.chunks_read,
            chunks_written: ms.chunks_written,
            local_chunks: ms.local_chunks,
            md_line_reads: ms.md_line_reads,
            md_line_writes: ms.md_line_writes,
        },
        md: (rtl_md, [cs.hits, cs.misses, cs.merges]),
        stats,
        error,
    })
}

/// Timing without stalls and with 1-cycle memories: `latency_cycles` is the turnaround of
/// a global read (cycles per request of 2,000 back-to-back reads over the hot blocks, one
/// request at a time, cold MD misses included); the rates are over 2,000 requests of the
/// default mix (requests per cycle, block bytes per cycle).
pub fn measure(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
) -> Result<super::stream::Timing, String> {
    let quiet = HarnessConfig {
        seed: 7,
        in_gap: 0.0,
        out_stall: 0.0,
        ..HarnessConfig::default()
    };
    let ideal = McOpts {
        dram_latency: (1, 1),
        md_latency: (1, 1),
        ..McOpts::default()
    };
    let n = 2000u64;
    let reads = McOpts {
        mix: [1, 0, 0, 0, 0],
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
        raw_bytes_per_cycle: (n * p.codec.block_bytes as u64) as f64 / cyc,
    })
}

#[cfg(test)]
#[path = "cpack_lossy_mc_tests.rs"]
mod tests;
