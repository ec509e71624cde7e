//! Scoreboard of the cache + MSHR controller ([`crate::rtl::cache`]) on the N-channel harness:
//! random lookups with locality patterns on `req`, a reordering memory ([`MemResponder`],
//! random latency) answering `mreq` on `mfill`, and the golden model
//! ([`crate::model::cache`]) fed every accepted lookup and fill in acceptance order,
//! predicting every `resp` and `mreq` beat. At the end the controller's hit/miss/merge
//! counters must equal the model's.

use super::adaptive::le_words;
use super::dut::Dut;
use super::harness::{Bench, Channel, Expect, Harness, HarnessConfig};
use super::memory::{MemFields, MemResponder, MemTiming};
use super::stream::{Beat, RunStats, Timing};
use crate::hdl::Module;
use crate::model::cache::{Cache, CacheStats, Event, Lookup, Op, Request};
use crate::rtl::cache::CacheRtlParams;
use crate::trace::lookups::{self, Pattern, PATTERNS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const REQ: usize = 0;
const MFILL: usize = 1;
const RESP: usize = 2;
const MREQ: usize = 3;

fn words(v: u64, bits: u32) -> Vec<u32> {
    let v = if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    };
    let n = bits.div_ceil(32) as usize;
    let mut out = vec![v as u32, (v >> 32) as u32];
    out.resize(n, 0);
    out
}

fn words_to_bytes(w: &[u32], n: usize) -> Vec<u8> {
    let mut out: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    out.resize(n, 0);
    out
}

/// Stimulus and reference model of the cache.
pub struct CacheBench {
    p: CacheRtlParams,
    model: Cache,
    rng: ChaCha8Rng,
    remaining: u64,
    issued: u64,
    pattern: Pattern,
    /// A problem the expectations cannot express (the design accepted what the model
    /// refuses, or a fill no MSHR waits for).
    pub error: Option<String>,
}

impl CacheBench {
    /// `n` lookups from `seed`.
    pub fn new(p: &CacheRtlParams, n: u64, seed: u64) -> Result<CacheBench, String> {
        Ok(CacheBench {
            model: Cache::new(&p.cache)?,
            p: p.clone(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            remaining: n,
            issued: 0,
            pattern: Pattern::Streaming,
            error: None,
        })
    }

    /// The model's counters.
    pub fn stats(&self) -> CacheStats {
        self.model.stats()
    }

    /// The next field: the pattern changes every 2,000 lookups.
    fn next_field(&mut self) -> u64 {
        if self.issued.is_multiple_of(2000) {
            self.pattern = PATTERNS[self.rng.gen_range(0..PATTERNS.len())];
        }
        let f = lookups::field(&self.p.cache, self.pattern, self.issued, &mut self.rng);
        f % (1u64 << self.p.field_addr_bits)
    }

    fn push(&mut self, events: Vec<Event>, exp: &mut Expect<'_>) {
        let c = &self.p.cache;
        let sbits = c.sector_bytes * 8;
        let saw = self.p.sector_addr_bits();
        for e in events {
            match e {
                Event::Response { id, hit, data } => exp.push(
                    RESP,
                    id as u64,
                    0,
                    Beat::new()
                        .with("id", words(id as u64, self.p.id_bits))
                        .num("hit", hit.into())
                        .with("data", words(data, c.field_bits)),
                ),
                Event::MemRead { sector } => exp.push(
                    MREQ,
                    sector,
                    0,
                    Beat::new()
                        .num("we", 0)
                        .with("addr", words(sector, saw))
                        .with("wdata", vec![0; sbits as usize / 32]),
                ),
                Event::MemWrite { sector, data } => exp.push(
                    MREQ,
                    sector,
                    0,
                    Beat::new()
                        .num("we", 1)
                        .with("addr", words(sector, saw))
                        .with("wdata", le_words(&data)),
                ),
            }
        }
    }
}

impl Bench for CacheBench {
    fn next_input(&mut self, ch: usize, _exp: &mut Expect<'_>) -> Option<Beat> {
        if ch != REQ || self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let f = self.next_field();
        self.issued += 1;
        let id = self.issued & ((1u64 << self.p.id_bits) - 1);
        let we = self.rng.gen_bool(0.3);
        let wd = self.rng.gen::<u64>();
        Some(
            Beat::new()
                .with("id", words(id, self.p.id_bits))
                .with("field", words(f, self.p.field_addr_bits))
                .num("we", we.into())
                .with("wdata", words(wd, self.p.cache.field_bits)),
        )
    }

    fn accepted(&mut self, ch: usize, b: &Beat, cycle: u64, exp: &mut Expect<'_>) {
        let ev = match ch {
            REQ => {
                let r = Request {
                    id: b.u64("id") as u32,
                    field: b.u64("field"),
                    op: if b.u64("we") & 1 == 1 {
                        Op::Write(b.u64("wdata"))
                    } else {
                        Op::Read
                    },
                };
                match self.model.lookup(r) {
                    Lookup::Accepted(ev) => ev,
                    Lookup::Stall => {
                        self.error.get_or_insert(format!(
                            "cycle {}: the design accepted lookup {} that the model refuses \
                             (no MSHR space)",
                            cycle, r.id
                        ));
                        return;
                    }
                }
            }
            MFILL => {
                let n = self.p.cache.sector_bytes as usize;
                match self.model.fill(
                    b.u64("addr"),
                    &words_to_bytes(b.get("data").unwrap_or(&[]), n),
                ) {
                    Ok(ev) => ev,
                    Err(e) => {
                        self.error.get_or_insert(format!("cycle {}: {}", cycle, e));
                        return;
                    }
                }
            }
            _ => return,
        };
        self.push(ev, exp);
    }

    fn finished(&self) -> bool {
        self.remaining == 0
    }

    /// The controller forgets its contents (dirty sectors not written back are lost, as in
    /// the design), its MSHRs and its counters: the model restarts empty. The memory keeps
    /// what was written back, so later misses fetch the same data in both.
    fn reset(&mut self) -> Result<(), String> {
        self.model = Cache::new(&self.p.cache)?;
        Ok(())
    }
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct CacheRun {
    /// Harness statistics (cycles, beats, first mismatch).
    pub stats: RunStats,
    /// The model's counters.
    pub model: CacheStats,
    /// The controller's counters: hits, misses, merges.
    pub rtl: [u64; 3],
    /// A model-side problem (see [`CacheBench::error`]).
    pub error: Option<String>,
}

impl CacheRun {
    /// `Ok` when the run matched: no mismatch, no model-side error, and the controller's
    /// hit/miss/merge counters equal the model's.
    pub fn check(&self) -> Result<(), String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if let Some(m) = &self.stats.first_mismatch {
            return Err(m.to_string());
        }
        let m = self.model;
        if self.rtl != [m.hits, m.misses, m.merges] {
            return Err(format!(
                "RTL counters (hits, misses, merges) {:?} differ from the model's {:?}",
                self.rtl,
                [m.hits, m.misses, m.merges]
            ));
        }
        Ok(())
    }
}

/// The harness channels of the controller.
pub fn channels(top: &Module) -> Result<Vec<Channel>, String> {
    ["req", "mfill", "resp", "mreq"]
        .iter()
        .map(|n| {
            top.streams
                .iter()
                .find(|s| s.prefix == *n)
                .map(Channel::from_ports)
                .ok_or_else(|| format!("`{}` has no stream `{}`", top.name, n))
        })
        .collect()
}

/// The values of three output ports (counters) of `dut`.
pub(super) fn read_ports(dut: &mut dyn Dut, names: [&str; 3]) -> Result<[u64; 3], String> {
    let mut v = [0u64; 3];
    for (x, name) in v.iter_mut().zip(names) {
        let id = dut.port(name)?;
        *x = dut.get_u64(id);
    }
    Ok(v)
}

/// Runs `n` lookups through `dut` (the controller of `p`, module `top`); `cfg.resets`
/// asserts `rst_ni` that many times in mid-run (the counters then cover the lookups since
/// the last reset, in the design and the model).
pub fn run(
    dut: &mut dyn Dut,
    top: &Module,
    p: &CacheRtlParams,
    n: u64,
    cfg: &HarnessConfig,
) -> Result<CacheRun, String> {
    let mut h = Harness::new(channels(top)?);
    let sbits = p.cache.sector_bytes * 8;
    let mem = MemResponder::new(
        MemFields {
            addr: "addr",
            we: Some("we"),
            wdata: Some("wdata"),
            tag: Some(("addr", "addr")),
            rdata: "data",
        },
        MemTiming {
            min_latency: 1,
            max_latency: 30,
            reorder: true,
            write_ack: false,
        },
        sbits as usize / 32,
    )
    .with_init(move |a| {
        (0..sbits / 32)
            .map(|i| {
                (a.wrapping_mul(0x9e37_79b9)
                    .wrapping_add(i as u64 * 0x85eb_ca6b)) as u32
            })
            .collect()
    });
    h.respond("mreq", "mfill", Box::new(mem))?;
    let mut bench = CacheBench::new(p, n, cfg.seed)?;
    let stats = h.run(dut, &mut bench, cfg, &mut |_| {})?;
    let rtl = read_ports(dut, ["cnt_hits_o", "cnt_misses_o", "cnt_merges_o"])?;
    Ok(CacheRun {
        stats,
        model: bench.stats(),
        rtl,
        error: bench.error,
    })
}

/// [`run`] as a unit run: the statistics when the run matched (the counters included, see
/// [`CacheRun::check`]; a mismatch stays in [`RunStats::first_mismatch`]), with `lines` = `n`.
pub fn run_unit(
    dut: &mut dyn Dut,
    top: &Module,
    p: &CacheRtlParams,
    n: u64,
    cfg: &HarnessConfig,
) -> Result<RunStats, String> {
    let r = run(dut, top, p, n, cfg)?;
    if r.stats.first_mismatch.is_none() {
        r.check()?;
    }
    let mut st = r.stats;
    st.lines = n;
    Ok(st)
}

/// Waits up to 1,000 cycles for `port` to read 1 (after `eval`); the cycle it does.
fn wait_for(dut: &mut dyn Dut, port: usize, what: &str) -> Result<u64, String> {
    for _ in 0..1000 {
        dut.eval();
        if dut.get_u64(port) == 1 {
            return Ok(dut.cycle());
        }
        dut.tick();
    }
    Err(format!("cache: no {what} within 1000 cycles"))
}

/// [`measure`] as a unit's [`Timing`], each lookup standing for `lookup_bytes` raw bytes.
pub fn timing(
    dut: &mut dyn Dut,
    top: &Module,
    p: &CacheRtlParams,
    lookup_bytes: usize,
) -> Result<Timing, String> {
    let (latency_cycles, rate) = measure(dut, top, p)?;
    Ok(Timing {
        latency_cycles,
        in_beats_per_cycle: rate,
        raw_bytes_per_cycle: rate * lookup_bytes as f64,
    })
}

/// Hit latency and lookup rate of the controller `top` (built from `p`): a read of field 0
/// misses and is filled, then the same read hits, timed from its acceptance to its
/// response, counting the acceptance cycle (the stream units' convention); the rate is
/// lookups per cycle over 2,000 lookups of [`CacheBench`]'s patterns without stalls, the
/// memory answering in 1-30 cycles.
pub fn measure(dut: &mut dyn Dut, top: &Module, p: &CacheRtlParams) -> Result<(u64, f64), String> {
    let port = |n: &str| dut.port(n);
    let (rq_v, rq_r, rq_id, rq_f, rq_we) = (
        port("req_valid_i")?,
        port("req_ready_o")?,
        port("req_id_i")?,
        port("req_field_i")?,
        port("req_we_i")?,
    );
    let (mf_v, mf_r, mf_a) = (
        port("mfill_valid_i")?,
        port("mfill_ready_o")?,
        port("mfill_addr_i")?,
    );
    let (rs_v, rs_r, mq_v, mq_r, mq_a) = (
        port("resp_valid_o")?,
        port("resp_ready_i")?,
        port("mreq_valid_o")?,
        port("mreq_ready_i")?,
        port("mreq_addr_o")?,
    );
    dut.reset(4);
    for (q, v) in [(rs_r, 1), (mq_r, 1), (mf_v, 0), (rq_we, 0), (rq_f, 0)] {
        dut.set_u64(q, v);
    }
    let lookup = |dut: &mut dyn Dut, id: u64| -> Result<u64, String> {
        dut.set_u64(rq_id, id);
        dut.set_u64(rq_v, 1);
        let c = wait_for(dut, rq_r, "lookup acceptance")?;
        dut.tick();
        dut.set_u64(rq_v, 0);
        Ok(c)
    };
    lookup(dut, 1)?;
    wait_for(dut, mq_v, "line read")?;
    let sector = dut.get_u64(mq_a);
    dut.tick();
    dut.set_u64(mf_a, sector);
    dut.set_u64(mf_v, 1);
    wait_for(dut, mf_r, "fill acceptance")?;
    dut.tick();
    dut.set_u64(mf_v, 0);
    wait_for(dut, rs_v, "miss response")?;
    dut.tick();
    let c0 = lookup(dut, 2)?;
    let c1 = wait_for(dut, rs_v, "hit response")?;
    dut.tick();
    let quiet = HarnessConfig::quiet(7);
    let n = 2000;
    let r = run(dut, top, p, n, &quiet)?;
    r.check()?;
    Ok((c1 + 1 - c0, n as f64 / r.stats.cycles.max(1) as f64))
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
