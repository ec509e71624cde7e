//! Scoreboard of the PACT'12 memory-controller path (`rtl::cpack_lossy::mc_top`) against the
//! transaction-level model (`model::cpack_lossy::mc::Mc`) on the memory-controller bench
//! (`cosim::mc_bench`).
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
use super::harness::HarnessConfig;
use super::mc_bench::{self, no_stray_writes, words, written, McMemory, McSystem, McTxn};
use super::mc_bench::{Poison, Targets};
use super::memory::{MemResponder, SharedMem};
use super::stream::{Beat, Fields, Timing};
use crate::hdl::Module;
use crate::model::cpack_lossy::mc::{Mc, McParams, McRequest, McResponse};
use crate::rtl::cpack_lossy::mc_top::{OP_G_RD, OP_G_WR, OP_L_RD, OP_L_WR};
use crate::rtl::cpack_lossy::LossyRtlParams;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet};

/// What a run measured.
pub type McRun = mc_bench::McRun<LossyMc>;

/// Request mix (global reads, full writes, partial writes, local reads, local writes) and
/// latencies (DRAM data, MD lines) of a run.
pub type McOpts = mc_bench::McOpts<LossyMc>;

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

/// Stimulus and model of the MC path.
pub struct LossyMc {
    p: LossyRtlParams,
    model: Mc,
    stim: BlockStim,
    at: Targets,
    /// Reads, full writes, partial writes, local.
    requests: [u64; 4],
    chunk_bits: u32,
    /// (local, block): poisoned blocks are never requested again.
    poison: Poison<(bool, u64)>,
    /// DRAM data, the MD region.
    mems: [SharedMem; 2],
}

impl LossyMc {
    /// The DRAM address of 16 B chunk `j` of block `blk` (of the local space or not).
    fn addr(&self, local: bool, blk: u64, j: usize) -> u64 {
        let (bw, cbits) = (self.p.md_cache.blk_bits, self.chunk_bits);
        (local as u64) << (bw + cbits) | blk << cbits | j as u64
    }

    /// The (local, block, chunk) of a DRAM address.
    fn split(&self, a: u64) -> (bool, u64, usize) {
        let (bw, cbits) = (self.p.md_cache.blk_bits, self.chunk_bits);
        let blk = a >> cbits & ((1 << bw) - 1);
        (
            a >> (bw + cbits) & 1 == 1,
            blk,
            (a & ((1 << cbits) - 1)) as usize,
        )
    }

    /// A block of the local or global space that no reset has poisoned.
    fn pick_blk(&mut self, local: bool, rng: &mut ChaCha8Rng) -> u64 {
        loop {
            let b = self.at.pick(rng);
            if !self.poison.contains(&(local, b)) {
                self.poison.touch((local, b));
                return b;
            }
        }
    }

    /// The byte mask of a partial write: some bytes, some whole 16 B beats, or all but one
    /// byte; never the whole block.
    fn partial_mask(&self, rng: &mut ChaCha8Rng) -> u128 {
        let bb = self.p.codec.block_bytes;
        let mut mask = match rng.gen_range(0..3) {
            0 => rng.gen::<u128>(),
            1 => 0xFFFFu128 << (16 * rng.gen_range(0..bb / 16)),
            _ => !(1u128 << rng.gen_range(0..bb)),
        };
        if bb < 128 {
            mask &= (1u128 << bb) - 1;
        }
        if mask == u128::MAX || (bb < 128 && mask == (1u128 << bb) - 1) {
            mask &= !1;
        }
        mask
    }

    /// The next request of kind `kind`, as the model sees it and as SM beats.
    fn make(&mut self, kind: usize, rng: &mut ChaCha8Rng) -> Option<(McRequest, Vec<Beat>)> {
        let blk = self.pick_blk(kind >= 3, rng);
        let made = match kind {
            0 => (
                McRequest::Read { blk },
                sm_beats(OP_G_RD, blk, None, None, 0),
            ),
            1 | 2 => {
                let (data, tc) = self.stim.next_block()?;
                let partial = kind == 2;
                let tcode = (!partial && rng.gen_bool(0.5)).then_some(tc);
                let mask = if partial {
                    self.partial_mask(rng)
                } else {
                    u128::MAX
                };
                let beats = sm_beats(OP_G_WR, blk, tcode, Some(&data), mask);
                let req = McRequest::Write {
                    blk,
                    data,
                    mask,
                    tcode,
                };
                (req, beats)
            }
            3 => (
                McRequest::LocalRead { blk },
                sm_beats(OP_L_RD, blk, None, None, 0),
            ),
            _ => {
                let (data, _) = self.stim.next_block()?;
                let beats = sm_beats(OP_L_WR, blk, None, Some(&data), u128::MAX);
                (McRequest::LocalWrite { blk, data }, beats)
            }
        };
        self.requests[kind.min(3)] += 1;
        Some(made)
    }

    /// The response beats the design must give for the model's `r`.
    fn expect(&self, r: &McResponse) -> Vec<Beat> {
        let beat = |data: Vec<u32>, last: bool, write: bool| {
            Beat::new()
                .with("data", data)
                .num("last", last.into())
                .num("err", 0)
                .num("write", write.into())
                .num("md_hit", r.md_hit.into())
                .num("chunks", r.chunks.into())
        };
        match &r.data {
            Some(d) => {
                let n = d.len().div_ceil(16);
                d.chunks(16)
                    .enumerate()
                    .map(|(i, c)| beat(words(c), i + 1 == n, false))
                    .collect()
            }
            None => vec![beat(vec![0; 4], true, true)],
        }
    }

    /// The global frames and local blocks the DRAM memory holds, by block.
    fn frames(&self, dram: &MemResponder) -> [HashMap<u64, Vec<u8>>; 2] {
        let bb = self.p.codec.block_bytes;
        let mut maps = [HashMap::new(), HashMap::new()];
        for (a, d) in dram.writes() {
            let (local, blk, j) = self.split(*a);
            let f: &mut Vec<u8> = maps[local as usize]
                .entry(blk)
                .or_insert_with(|| vec![0; bb]);
            let bytes: Vec<u8> = d.iter().flat_map(|w| w.to_le_bytes()).collect();
            f[16 * j..16 * j + 16].copy_from_slice(&bytes[..16]);
        }
        maps
    }

    /// Every global block's frame and every local block is in DRAM, and nothing was written
    /// where the model wrote nothing.
    fn compare_dram(&self, dram: &MemResponder) -> Result<(), String> {
        let model = &self.model;
        let (globals, locals) = (model.written_blocks(), model.local_blocks());
        for (local, blocks) in [(false, &globals), (true, &locals)] {
            for &blk in blocks {
                let frame = if local {
                    model.local_block(blk)
                } else {
                    model.frame(blk)
                };
                for (j, ch) in frame.chunks(16).enumerate() {
                    let (got, want) = (dram.read(self.addr(local, blk, j)), words(ch));
                    if got != want {
                        let space = if local { "local" } else { "global" };
                        return Err(format!(
                            "DRAM {space} block {blk:#x} chunk {j}: {got:08x?}, the model \
                             {want:08x?}"
                        ));
                    }
                }
            }
        }
        let globals: HashSet<u64> = globals.into_iter().collect();
        let locals: HashSet<u64> = locals.into_iter().collect();
        no_stray_writes("DRAM", dram, |a| match self.split(a) {
            (true, blk, _) => locals.contains(&blk),
            (false, blk, _) => globals.contains(&blk),
        })
    }
}

/// The SM beats of a request to block `blk`: one per 16 B chunk of `data`, with its bits of
/// the byte mask `mask`, or (no data) one empty beat.
fn sm_beats(op: u64, blk: u64, tcode: Option<u8>, data: Option<&[u8]>, mask: u128) -> Vec<Beat> {
    let beat = |mask: u32, data: Vec<u32>, last: bool| {
        Beat::new()
            .num("op", op)
            .num("blk", blk)
            .num("tcode_v", tcode.is_some().into())
            .num("tcode", tcode.unwrap_or(0).into())
            .num("mask", mask.into())
            .with("data", data)
            .num("last", last.into())
    };
    let Some(d) = data else {
        return vec![beat(0, vec![0; 4], true)];
    };
    let n = d.len().div_ceil(16);
    d.chunks(16)
        .enumerate()
        .map(|(i, c)| beat((mask >> (16 * i)) as u32 & 0xFFFF, words(c), i + 1 == n))
        .collect()
}

impl McSystem for LossyMc {
    type Params = LossyRtlParams;
    type Moved = Moved;
    type Requests = [u64; 4];
    type Mix = [u32; 5];
    type Latencies = [(u64, u64); 2];

    const MIX: [u32; 5] = [7, 5, 3, 3, 2];
    const LATENCIES: [(u64, u64); 2] = [(1, 30), (2, 40)];
    const SEED: u64 = 0x3c3c;
    const REQUEST: &'static str = "sm";
    const CACHE: (&'static str, [&'static str; 3]) =
        ("MD cache", ["md_hits_o", "md_misses_o", "md_merges_o"]);

    /// DRAM data (16 B chunks) and the MD region (MD lines).
    fn memories(p: &LossyRtlParams) -> Vec<McMemory> {
        let line = p.md_cache.rtl(p.codec.md_bits).cache.sector_bytes;
        vec![
            McMemory::new("dreq", "dresp", ("tag", "tag"), 4),
            McMemory::new("mdreq", "mdresp", ("addr", "addr"), (line / 4) as usize),
        ]
    }

    /// A hot set of 512 blocks.
    fn new(
        p: &LossyRtlParams,
        seed: u64,
        rng: &mut ChaCha8Rng,
        mems: Vec<SharedMem>,
    ) -> Result<LossyMc, String> {
        let at = Targets::new(rng, 1u64 << p.md_cache.blk_bits, 1, 512, (7, 9));
        Ok(LossyMc {
            model: Mc::new(&mc_params(p))?,
            stim: BlockStim::new(&p.codec, seed),
            p: p.clone(),
            at,
            requests: [0; 4],
            chunk_bits: crate::hdl::clog2(p.codec.raw_chunks() as u64).max(1),
            poison: Poison::new(),
            mems: <[SharedMem; 2]>::try_from(mems).map_err(|_| "two memories expected")?,
        })
    }

    fn next(&mut self, kind: usize, rng: &mut ChaCha8Rng) -> Result<Option<McTxn>, String> {
        let Some((req, input)) = self.make(kind, rng) else {
            return Ok(None);
        };
        let r = self.model.request(&req)?;
        Ok(Some(McTxn {
            input,
            expect: self.expect(&r),
        }))
    }

    fn count(&self, moved: &mut Moved, mem: usize, beat: &Fields<'_>) {
        let write = beat.u64("we") & 1 == 1;
        let local = mem == 0 && self.split(beat.u64("addr")).0;
        match (mem, local, write) {
            (0, true, _) => moved.local_chunks += 1,
            (0, false, true) => moved.chunks_written += 1,
            (0, false, false) => moved.chunks_read += 1,
            (_, _, true) => moved.md_line_writes += 1,
            (_, _, false) => moved.md_line_reads += 1,
        }
    }

    /// The MD cache's dirty lines are lost with the design's reset: the model restarts from
    /// what the two memories hold, and the blocks those may hold inconsistently (the last
    /// two requests' blocks, every block of a dirty MD line) are not requested again.
    fn reset(&mut self) -> Result<(), String> {
        self.poison.reset();
        let per_line =
            self.model.params().md_cache.line_bytes as u64 * 8 / self.p.codec.md_bits as u64;
        for line in self.model.dirty_md_lines() {
            for b in line * per_line..(line + 1) * per_line {
                self.poison.insert((false, b));
            }
        }
        let [frames, local] = self.frames(&self.mems[0].0.borrow());
        let md = written(&self.mems[1]);
        self.model = Mc::with_memories(&mc_params(&self.p), frames, local, md)?;
        Ok(())
    }

    /// Every global block's frame, every local block, every MD line; and nothing written
    /// where the model wrote nothing.
    fn compare(&self) -> Result<(), String> {
        self.compare_dram(&self.mems[0].0.borrow())?;
        let md = self.mems[1].0.borrow();
        let mut lines = self.model.md_lines();
        lines.extend(md.writes().iter().map(|(a, _)| *a));
        lines.sort_unstable();
        lines.dedup();
        for l in lines {
            if md.read(l) != words(&self.model.md_line(l)) {
                return Err(format!(
                    "MD line {l:#x}: the design's memory differs from the model's"
                ));
            }
        }
        Ok(())
    }

    fn requests(&self) -> [u64; 4] {
        self.requests
    }

    fn model_counts(&self) -> Result<(Moved, [u64; 3]), String> {
        let (ms, cs) = (self.model.stats(), self.model.md_stats());
        let moved = Moved {
            chunks_read: ms.chunks_read,
            chunks_written: ms.chunks_written,
            local_chunks: ms.local_chunks,
            md_line_reads: ms.md_line_reads,
            md_line_writes: ms.md_line_writes,
        };
        Ok((moved, [cs.hits, cs.misses, cs.merges]))
    }

    fn request_bytes(p: &LossyRtlParams) -> u64 {
        p.codec.block_bytes as u64
    }
}

/// Runs `n` requests of the default mix through `dut` (the MC top of `p`, module `top`).
pub fn run(
    dut: &mut dyn Dut,
    top: &Module,
    p: &LossyRtlParams,
    n: u64,
    cfg: &HarnessConfig,
) -> Result<McRun, String> {
    mc_bench::run_opts(dut, top, p, n, cfg, &McOpts::default())
}

/// Timing without stalls and with 1-cycle memories ([`mc_bench::measure`]): the turnaround
/// of a global read (over the hot blocks, cold MD misses included) and the rates over the
/// default mix (block bytes per cycle).
pub fn measure(dut: &mut dyn Dut, top: &Module, p: &LossyRtlParams) -> Result<Timing, String> {
    mc_bench::measure::<LossyMc>(dut, top, p)
}

#[cfg(test)]
#[path = "cpack_lossy_mc_tests.rs"]
mod tests;
