//! Base+XOR scoreboard: streams sectors through a unit with random valid gaps and random
//! `ready` back-pressure, and compares every output beat with the golden model
//! ([`crate::model::dbi::LinkCodec`]).
//!
//! * encoder: every output sector and its DBI flags must equal `LinkCodec::encode_words`;
//! * decoder: fed pin values (mostly encoded sectors, plus arbitrary code words and flags —
//!   every code word decodes, FORMATS §2.2), every output must equal `LinkCodec::decode_words`;
//! * serializer / deserializer: the beats of a sector (`dq` = W\[k\], the flags of beat k,
//!   `last` on the final beat) and back, `m_err_o` never set;
//! * loop-back: encoder → serializer → deserializer → decoder returns every sector exactly.
//!
//! Port words need no conversion: the RTL's sector vectors hold W\[k\] at bits
//! `[32k+31:32k]` (docs/FORMATS.md, Base+XOR), which is the model's word order and the
//! harness' word order. DBI flags (a `u64` in the model) become `flag_bits.div_ceil(32)` words.
//!
//! Stimulus: a small local sector generator ([`SectorClass`]) covering the ZDR corner cases
//! (zeros, repeated words, neighbour ^ C, partner == C, per-unit mixes built from the scheme's
//! own partner map), similar floats and uniform random data.

use super::dut::Dut;
use super::run::{measure as measure_run, run_txns, RunConfig, TxnSource};
pub use super::run::{run, run_clean};
use super::stream::{Beat, Fields, Stream, Txn};
pub use super::stream::{Mismatch, RunStats, Timing};
use crate::cosim::run::Stimulus;
use crate::model::base_xor::BaseXorParams;
use crate::model::dbi::{LinkCodec, Wire};
use crate::rtl::base_xor::BaseXorRtlParams;
pub use crate::rtl::designs::base_xor::{top, Unit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The input and output streams of a unit, as its generator recorded them (the DBI fields
/// only when DBI is on).
pub fn streams(p: &BaseXorRtlParams, unit: Unit) -> Result<(Stream, Stream), String> {
    let top = top(p, unit).map_err(|e| e.to_string())?;
    Stream::of_unit(&top)
}

/// Sector data classes of the stimulus: classes aimed at every ZDR/XOR branch (FORMATS §2.2,
/// §2.6, §5 "Zero-heavy and mixed data", "Controls") plus [`SectorClass::Workload`], the spec
/// §5 workload generators of [`crate::trace::sectors`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectorClass {
    /// All-zero sector (7 ones after Universal + ZDR, FORMATS §2.6 example 7).
    Zero,
    /// Uniform random words.
    Uniform,
    /// Every unit equal (a constant sector).
    Constant,
    /// Similar fp32 values with zeros at probability 0.1–0.7 (mixed data, Fig. 14).
    Sparse,
    /// Unit i = unit i−1 ^ C (the ZDR swap case for adjacent XOR), with random restarts.
    NeighbourXorC,
    /// Per unit, from the scheme's partner map: 0, C, partner, partner ^ C, partner ^ small,
    /// C ^ small or random (every ZDR branch, both degenerate bases 0 and C).
    UnitMix,
    /// fp32 values near one value (a smooth field).
    Fp32Similar,
    /// fp64 values near one value (little-endian low word first).
    Fp64Similar,
    /// 16-bit values near one value (fp16/int16 arrays).
    Half16Similar,
    /// Increasing small integers (indices, offsets).
    SmallInts,
    /// FORMATS §5 workload sectors ([`crate::trace::sectors::SectorClass`]: fp32 SoA fields,
    /// fp64, fp16/int16, indices and pointers, pixels, zero-heavy/mixed, AoS structs, random,
    /// adversarial), drawn from a pool generated once per run.
    Workload,
}

impl SectorClass {
    /// Every class.
    pub const ALL: [SectorClass; 11] = [
        SectorClass::Zero,
        SectorClass::Uniform,
        SectorClass::Constant,
        SectorClass::Sparse,
        SectorClass::NeighbourXorC,
        SectorClass::UnitMix,
        SectorClass::Fp32Similar,
        SectorClass::Fp64Similar,
        SectorClass::Half16Similar,
        SectorClass::SmallInts,
        SectorClass::Workload,
    ];

    /// One sector (`t_bytes / 4` words) of this class for the transform `b`.
    pub fn generate(self, b: &BaseXorParams, rng: &mut impl Rng) -> Vec<u32> {
        let nw = (b.t_bytes / 4) as usize;
        let ub = b.unit_bits();
        let umask = if ub >= 64 { u64::MAX } else { (1u64 << ub) - 1 };
        let c = b.zdr_constant() & umask;
        let nu = b.units();
        match self {
            SectorClass::Zero => vec![0; nw],
            SectorClass::Workload => {
                // Without a pool (see `SectorGen`): one fresh array of a random §5 class.
                let all = crate::trace::sectors::SectorClass::ALL;
                let class = all[rng.gen_range(0..all.len())];
                class.generate(nw.div_ceil(8), rng.gen())[..nw].to_vec()
            }
            SectorClass::Uniform => (0..nw).map(|_| rng.gen()).collect(),
            SectorClass::Constant => {
                let v = rng.gen::<u64>() & umask;
                from_units(b, &vec![v; nu])
            }
            SectorClass::Sparse => {
                let pz = [0.1, 0.3, 0.5, 0.7][rng.gen_range(0..4)];
                let base = near_float(rng);
                (0..nw)
                    .map(|_| {
                        if rng.gen_bool(pz) {
                            0
                        } else {
                            base ^ (rng.gen::<u32>() & 0xfff)
                        }
                    })
                    .collect()
            }
            SectorClass::NeighbourXorC => {
                let mut u = vec![rng.gen::<u64>() & umask; nu];
                for i in 1..nu {
                    u[i] = if rng.gen_bool(0.15) {
                        rng.gen::<u64>() & umask
                    } else {
                        u[i - 1] ^ c
                    };
                }
                from_units(b, &u)
            }
            SectorClass::UnitMix => {
                let partners = b.partners();
                let mut u = vec![0u64; nu];
                for j in 0..nu {
                    let r = rng.gen::<u64>() & umask;
                    let small = rng.gen_range(1..16u64);
                    u[j] = match partners[j] {
                        None => match rng.gen_range(0..4) {
                            0 => 0,
                            1 => c,
                            _ => r,
                        },
                        Some(q) => match rng.gen_range(0..8) {
                            0 => 0,
                            1 => c,
                            2 => u[q],
                            3 => u[q] ^ c,
                            4 => u[q] ^ small,
                            5 => c ^ small,
                            6 => (u[q] ^ c ^ small) & umask,
                            _ => r,
                        },
                    };
                }
                from_units(b, &u)
            }
            SectorClass::Fp32Similar => {
                let f = f32::from_bits(near_float(rng));
                let step = f * rng.gen_range(1e-6f32..1e-3);
                (0..nw)
                    .map(|i| (f + step * i as f32 + step * rng.gen_range(-1.0f32..1.0)).to_bits())
                    .collect()
            }
            SectorClass::Fp64Similar => {
                let f = rng.gen_range(-1000.0f64..1000.0);
                let step = f.abs().max(1e-3) * rng.gen_range(1e-12f64..1e-6);
                (0..nw / 2)
                    .flat_map(|i| {
                        let v = (f + step * i as f64).to_bits();
                        [v as u32, (v >> 32) as u32]
                    })
                    .collect()
            }
            SectorClass::Half16Similar => {
                let h0 = rng.gen::<u16>() as u32;
                let mut h: Vec<u32> = (0..nw * 2)
                    .map(|_| (h0 ^ rng.gen_range(0..64u32)) & 0xffff)
                    .collect();
                if rng.gen_bool(0.2) {
                    h[rng.gen_range(0..nw * 2)] = 0;
                }
                h.chunks(2).map(|p| p[0] << 16 | p[1]).collect()
            }
            SectorClass::SmallInts => {
                let mut x = rng.gen_range(0..1_000_000u32);
                (0..nw)
                    .map(|_| {
                        x = x.wrapping_add(rng.gen_range(0..40));
                        x
                    })
                    .collect()
            }
        }
    }
}

/// An fp32 bit pattern of moderate magnitude (either sign).
fn near_float(rng: &mut impl Rng) -> u32 {
    let v = rng.gen_range(0.01f32..5000.0);
    let v = if rng.gen_bool(0.3) { -v } else { v };
    v.to_bits()
}

/// Words from units (the model's unit order).
fn from_units(b: &BaseXorParams, units: &[u64]) -> Vec<u32> {
    crate::model::base_xor::from_units(units, b.unit_bits(), b.half_order)
}

/// Stimulus settings: the shared run settings and Base+XOR's own.
#[derive(Clone, Debug)]
pub struct StimConfig {
    /// Run settings; `lines` counts sectors, `data` (32-bit words) is cut into sectors, the
    /// last one zero padded; `capture` keeps the sector or `dq` words, little-endian.
    pub run: RunConfig,
    /// Data classes to draw sectors from (empty: all).
    pub classes: Vec<SectorClass>,
    /// Decoder, serializer, deserializer: fraction of inputs that are arbitrary pin values
    /// (code words from the unit mix, random flags) instead of encoded sectors.
    pub random_wire: f64,
}

impl Default for StimConfig {
    fn default() -> Self {
        StimConfig {
            run: RunConfig::default(),
            classes: Vec::new(),
            random_wire: 0.2,
        }
    }
}

impl crate::cosim::run::Stimulus for StimConfig {
    fn run_mut(&mut self) -> &mut RunConfig {
        &mut self.run
    }
}

/// One sector's worth of stimulus: the raw sector, the pins (usually its encoding), and the
/// decode of those pins.
#[derive(Clone, Debug)]
pub struct SectorCase {
    /// Raw sector words.
    pub sector: Vec<u32>,
    /// Pin values: `encode(sector)`, or arbitrary pins for the read-side units.
    pub wire: Wire,
    /// `decode(wire)`.
    pub decoded: Vec<u32>,
    /// `encode(sector)` (equal to `wire` unless the pins are arbitrary).
    pub encoded: Wire,
}

/// Deterministic sector generator.
pub struct SectorGen {
    codec: LinkCodec,
    cfg: StimConfig,
    rng: ChaCha8Rng,
    /// Sectors produced so far.
    pub sectors: u64,
    data_pos: usize,
    /// FORMATS §5 workload sectors for [`SectorClass::Workload`] (built on first use).
    pool: Vec<u32>,
}

/// Sectors per FORMATS §5 class in the workload pool.
const POOL_SECTORS: usize = 2048;

impl SectorGen {
    /// New generator for `p` and `cfg`.
    pub fn new(p: &BaseXorRtlParams, cfg: &StimConfig) -> Self {
        SectorGen {
            codec: p.model(),
            cfg: cfg.clone(),
            rng: ChaCha8Rng::seed_from_u64(cfg.run.seed),
            sectors: 0,
            data_pos: 0,
            pool: Vec::new(),
        }
    }

    /// `nw` consecutive words of the workload pool at a random sector-aligned offset.
    fn workload(&mut self, nw: usize) -> Vec<u32> {
        if self.pool.is_empty() {
            let seed = self.cfg.run.seed;
            self.pool = crate::trace::sectors::SectorClass::ALL
                .iter()
                .flat_map(|c| c.generate(POOL_SECTORS, seed))
                .collect();
        }
        let slots = (self.pool.len() - nw) / 8 + 1;
        let at = self.rng.gen_range(0..slots) * 8;
        self.pool[at..at + nw].to_vec()
    }

    /// The next sector, or `None` when `cfg.run.lines` sectors (or the data) are used up.
    pub fn next_case(&mut self) -> Option<SectorCase> {
        if self.sectors >= self.cfg.run.lines {
            return None;
        }
        let b = self.codec.bx;
        let nw = (b.t_bytes / 4) as usize;
        let sector = if let Some(data) = &self.cfg.run.data {
            if self.data_pos >= data.len() {
                return None;
            }
            let end = (self.data_pos + nw).min(data.len());
            let mut s = data[self.data_pos..end].to_vec();
            s.resize(nw, 0);
            self.data_pos = end;
            s
        } else {
            let classes: &[SectorClass] = if self.cfg.classes.is_empty() {
                &SectorClass::ALL
            } else {
                &self.cfg.classes
            };
            let class = classes[self.rng.gen_range(0..classes.len())];
            if class == SectorClass::Workload {
                self.workload(nw)
            } else {
                class.generate(&b, &mut self.rng)
            }
        };
        self.sectors += 1;
        let encoded = self
            .codec
            .encode_words(&sector)
            .expect("validated parameters, one sector");
        let wire = if self.cfg.run.data.is_none() && self.rng.gen_bool(self.cfg.random_wire) {
            let words = if self.rng.gen_bool(0.5) {
                SectorClass::UnitMix.generate(&b, &mut self.rng)
            } else {
                (0..nw).map(|_| self.rng.gen()).collect()
            };
            let nf = nw as u32 * self.codec.dbi_group.flags_per_beat();
            let fmask = if nf >= 64 { u64::MAX } else { (1u64 << nf) - 1 };
            Wire {
                words,
                flags: self.rng.gen::<u64>() & fmask,
            }
        } else {
            encoded.clone()
        };
        let decoded = self
            .codec
            .decode_words(&wire)
            .expect("every pin value decodes");
        Some(SectorCase {
            sector,
            wire,
            decoded,
            encoded,
        })
    }
}

/// DBI flags as port words.
fn flag_words(flags: u64, bits: u32) -> Vec<u32> {
    let v = [flags as u32, (flags >> 32) as u32];
    v[..bits.div_ceil(32) as usize].to_vec()
}

/// The transaction of one sector for `unit`, its fields by the units' layout names (the DBI
/// flags only when the configuration has DBI).
pub fn transaction(p: &BaseXorRtlParams, unit: Unit, c: &SectorCase) -> Txn {
    let dbi = p.flags_per_beat() > 0;
    let fb = p.flag_bits();
    let fpb = p.flags_per_beat();
    let flagged = |b: Beat, flags: u64, bits: u32| {
        if dbi {
            b.with("dbi", flag_words(flags, bits))
        } else {
            b
        }
    };
    let sector =
        |words: &[u32], flags: u64| flagged(Beat::new().with("sector", words.to_vec()), flags, fb);
    let beats = |w: &Wire| -> Vec<Beat> {
        let nb = w.words.len();
        w.words
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let f = if fpb == 0 {
                    0
                } else {
                    (w.flags >> (k as u32 * fpb)) & ((1u64 << fpb) - 1)
                };
                let b = Beat::new()
                    .num("dq", d.into())
                    .num("last", (k + 1 == nb).into());
                flagged(b, f, fpb)
            })
            .collect()
    };
    let plain = |words: &[u32]| Beat::new().with("sector", words.to_vec());
    match unit {
        Unit::Encoder => Txn {
            inputs: vec![plain(&c.sector)],
            expected: vec![sector(&c.encoded.words, c.encoded.flags)],
        },
        Unit::Decoder => Txn {
            inputs: vec![sector(&c.wire.words, c.wire.flags)],
            expected: vec![plain(&c.decoded)],
        },
        Unit::Serializer => Txn {
            inputs: vec![sector(&c.wire.words, c.wire.flags)],
            expected: beats(&c.wire),
        },
        Unit::Deserializer => Txn {
            inputs: beats(&c.wire),
            expected: vec![sector(&c.wire.words, c.wire.flags).num("err", 0)],
        },
        Unit::Loopback => Txn {
            inputs: vec![plain(&c.sector)],
            expected: vec![plain(&c.sector).num("err", 0)],
        },
    }
}

/// One run's sectors for `unit`.
struct Sectors<'a> {
    p: &'a BaseXorRtlParams,
    unit: Unit,
    gen: SectorGen,
}

impl TxnSource for Sectors<'_> {
    fn next_txn(&mut self) -> Option<Txn> {
        let c = self.gen.next_case()?;
        Some(transaction(self.p, self.unit, &c))
    }

    /// The sector words, or the serializer's `dq` words.
    fn capture(&self, b: &Fields<'_>, out: &mut Vec<u8>) {
        let data = if matches!(self.unit, Unit::Serializer) {
            "dq"
        } else {
            "sector"
        };
        out.extend(b.get(data).iter().flat_map(|w| w.to_le_bytes()));
    }

    fn tally(&self, st: &mut RunStats) {
        st.lines = self.gen.sectors;
        // A link encoding keeps the size: "compressed" bytes are the sector bytes.
        st.raw_bytes = self.gen.sectors * self.p.t_bytes as u64;
        st.comp_bytes = st.raw_bytes;
    }
}

super::run::unit_bench!(BaseXorRtlParams, Unit, StimConfig);

/// Runs `unit` (the engine's [`UnitBench::run_with`]) with a progress callback, called
/// about every 64 Ki cycles with the stats so far.
pub fn run_with(
    dut: &mut dyn Dut,
    p: &BaseXorRtlParams,
    unit: Unit,
    cfg: &StimConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    p.validate()?;
    let (input, output) = streams(p, unit)?;
    let mut src = Sectors {
        p,
        unit,
        gen: SectorGen::new(p, cfg),
    };
    run_txns(dut, &input, &output, &mut src, &cfg.run, progress)
}

/// Measures latency (one isolated sector of fp32 data) and throughput (2000 sectors of every
/// class, no stalls) of `unit`.
pub fn measure(dut: &mut dyn Dut, p: &BaseXorRtlParams, unit: Unit) -> Result<Timing, String> {
    p.validate()?;
    let (input, output) = streams(p, unit)?;
    let mut gen = SectorGen::new(
        p,
        &StimConfig {
            run: RunConfig::lines(1),
            classes: vec![SectorClass::Fp32Similar],
            random_wire: 0.0,
        },
    );
    let case = gen.next_case().ok_or("no sector generated")?;
    let cfg = StimConfig::of(&RunConfig::quiet(2000));
    measure_run(dut, &input, &output, &transaction(p, unit, &case), |dut| {
        run(dut, p, unit, &cfg)
    })
}

#[cfg(test)]
mod verilator_tests {
    use super::*;
    use crate::cosim::fault::{faulty_dut, invert_mux_select, Fault, FaultModel};
    use crate::cosim::test_util::fault_caught;
    use crate::cosim::vdut::VerilatorDut;

    fn params(yaml: &str) -> BaseXorRtlParams {
        let p: BaseXorRtlParams = serde_yaml::from_str(yaml).unwrap();
        p.validate().unwrap();
        p
    }

    fn run_unit(p: &BaseXorRtlParams, unit: Unit, sectors: u64, seed: u64) -> RunStats {
        let mut dut = VerilatorDut::new(&top(p, unit).unwrap(), false).unwrap();
        let cfg = StimConfig::of(&RunConfig::seeded(sectors, seed));
        let st = run_clean(&mut dut, p, unit, &cfg).unwrap();
        assert_eq!(st.lines, sectors);
        st
    }

    /// The default (Universal, fused ZDR + DBI-8, speculative decoder) and T = 16 B halfwords
    /// (the main-job test's set). Each other structure is a Verilator build of its own: they
    /// run here in the interpreter (`rtl::base_xor`, cycle by cycle the same RTL) and in
    /// Verilator at 10^6 sectors in the long tier (`verif/configs/base_xor_*.yaml`).
    const SETS: &[&str] = &["{}", "{t_bytes: 16, stages: 3}"];

    #[test]
    fn verilator_encoders_match_model() {
        for (i, y) in SETS.iter().enumerate() {
            run_unit(&params(y), Unit::Encoder, 20_000, i as u64);
        }
    }

    #[test]
    fn verilator_decoders_match_model() {
        for (i, y) in SETS.iter().enumerate() {
            run_unit(&params(y), Unit::Decoder, 20_000, 50 + i as u64);
        }
    }

    /// The serializer, deserializer and loop-back at the defaults (the other link sets run in
    /// the interpreter, `rtl::base_xor`, and in the long tier).
    #[test]
    fn verilator_link_units_and_loopback() {
        let p = params("{}");
        run_unit(&p, Unit::Serializer, 10_000, 1);
        run_unit(&p, Unit::Deserializer, 10_000, 2);
        run_unit(&p, Unit::Loopback, 10_000, 3);
    }

    fn faulty(
        p: &BaseXorRtlParams,
        unit: Unit,
        file: &str,
        edit: &dyn Fn(&str) -> String,
    ) -> VerilatorDut {
        faulty_dut(&top(p, unit).unwrap(), file, edit).unwrap()
    }

    #[test]
    fn scoreboard_catches_injected_faults() {
        // The ZDR priority select (zero test) of unit 1 inverted in the fused ZDR + DBI
        // write path: found at once.
        let p = params("{}");
        // Both encoder faults in one model, each switched on at run time.
        let zdr1 = |v: &str| invert_mux_select(v, "zdr1").expect("zdr1 is a mux");
        let inv5 = |v: &str| invert_mux_select(v, "inv5").expect("inv5 is a mux");
        let faults = [&zdr1 as &dyn Fn(&str) -> String, &inv5].map(|edit| Fault {
            file_prefix: "bxt_enc",
            edit,
        });
        let enc = FaultModel::build(&top(&p, Unit::Encoder).unwrap(), &faults).unwrap();
        let mut dut = enc.dut(Some(0)).unwrap();
        let cfg = StimConfig::of(&RunConfig::lines(2_000));
        let m = fault_caught(run(&mut dut, &p, Unit::Encoder, &cfg));
        assert_eq!(m.field, "m_sector_o");
        assert!(m.cycle < 100, "found late: {}", m);
        // The fused DBI decision of group 5 (byte 1 of unit 1): the zero-test select of its
        // candidate decisions inverted.
        let mut dut = enc.dut(Some(1)).unwrap();
        let m = fault_caught(run(&mut dut, &p, Unit::Encoder, &cfg));
        assert!(m.cycle < 100, "found late: {}", m);
        // A data-dependent one: in the carry-select decoder, unit 3's comparison against the
        // candidate d1 = y1 ^ C (only selected when unit 1 was the ZDR swap case
        // e1 = e0 ^ C) inverted; the neighbour ^ C and unit-mix classes exercise it.
        let mut dut = faulty(&p, Unit::Decoder, "bx_univ_dec", &|v| {
            v.replace("assign eq3_2_c = (x3_2 == ", "assign eq3_2_c = (x3_2 != ")
        });
        let cfg = StimConfig::of(&RunConfig::lines(20_000));
        let m = fault_caught(run(&mut dut, &p, Unit::Decoder, &cfg));
        assert_eq!(m.field, "m_sector_o");
        assert!(m.transfer < 1_000, "found late: {}", m);
    }

    /// A `last` in the wrong place is reported with the sector it ends (`m_err_o`), and the
    /// next, well-framed sector comes out clean.
    #[test]
    fn deserializer_reports_framing_errors_and_resynchronises() {
        let p = params("{}");
        let mut dut = VerilatorDut::new(&top(&p, Unit::Deserializer).unwrap(), false).unwrap();
        let port = |d: &VerilatorDut, n: &str| d.port(n).unwrap();
        let (sv, sd, sf, sl, mv, mr, ms, me) = (
            port(&dut, "s_valid_i"),
            port(&dut, "s_dq_i"),
            port(&dut, "s_dbi_i"),
            port(&dut, "s_last_i"),
            port(&dut, "m_valid_o"),
            port(&dut, "m_ready_i"),
            port(&dut, "m_sector_o"),
            port(&dut, "m_err_o"),
        );
        dut.reset(2);
        dut.set_u64(mr, 1);
        dut.set_u64(sf, 0);
        // 3 beats then `last` (short sector), then 8 good beats.
        let beats: Vec<(u32, bool)> = (0..4u32)
            .map(|k| (0x100 + k, k == 3))
            .chain((0..8u32).map(|k| (0x200 + k, k == 7)))
            .collect();
        let mut got = Vec::new();
        for &(d, last) in &beats {
            dut.set_u64(sv, 1);
            dut.set_u64(sd, d as u64);
            dut.set_u64(sl, last as u64);
            dut.eval();
            if dut.get_u64(mv) == 1 {
                let mut w = vec![0u32; 8];
                dut.get(ms, &mut w);
                got.push((w, dut.get_u64(me)));
            }
            dut.tick();
        }
        dut.set_u64(sv, 0);
        dut.eval();
        let mut w = vec![0u32; 8];
        dut.get(ms, &mut w);
        got.push((w, dut.get_u64(me)));
        assert_eq!(got.len(), 2, "{:x?}", got);
        assert_eq!(got[0].1, 1, "short sector flagged");
        assert_eq!(got[1], ((0x200..0x208).collect::<Vec<u32>>(), 0));
    }
}
