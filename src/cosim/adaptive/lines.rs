//! Line stimulus of the codec units: one line per case with every model's result, and the
//! transaction each unit must produce for it.

use super::units::*;
use crate::cosim::stream::{Beat, Txn};
use crate::model::adaptive::Alg;
use crate::model::bdi::{self};
use crate::model::cpack;
use crate::model::fpc;
use crate::rtl::adaptive::AdaptiveRtlParams;
use crate::trace::lines::LineGen;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One line and what the model makes of it.
#[derive(Clone, Debug)]
pub struct LineCase {
    /// The line.
    pub line: Vec<u8>,
    /// `model::bdi::compress` of the line.
    pub comp: bdi::BdiCompressed,
    /// `model::fpc::compress` of the line (Original mode), for a source of FPC units
    /// ([`LineSource::with_alg`]) only.
    pub fpc: Option<fpc::FpcCompressed>,
    /// `model::cpack::compress` of the line (C-Pack+Z sources only).
    pub cpack: Option<cpack::CpackCompressed>,
    /// Decompressor input override: (`s_comp_i`, stream bytes) of an arbitrary payload and the
    /// expected (line, err).
    pub arbitrary: Option<(bool, Vec<u8>, Vec<u8>, bool)>,
}

/// Seeded line source.
pub struct LineSource {
    p: AdaptiveRtlParams,
    gens: Vec<LineGen>,
    rng: ChaCha8Rng,
    remaining: u64,
    data: Option<(Vec<u8>, usize)>,
    random_payload: f64,
    alg: Alg,
    /// Lines produced so far.
    pub lines: u64,
    /// Σ sent bits (model `nbits`) so far.
    pub comp_bits: u64,
}

impl LineSource {
    /// A source for `cfg`.
    pub fn new(p: &AdaptiveRtlParams, cfg: &StimConfig) -> Self {
        let profiles = if cfg.profiles.is_empty() {
            all_profiles()
        } else {
            cfg.profiles.clone()
        };
        let gens = profiles
            .iter()
            .enumerate()
            .map(|(i, pr)| {
                LineGen::new(
                    *pr,
                    p.line_bytes,
                    cfg.run.seed.wrapping_mul(1000) + i as u64,
                )
            })
            .collect();
        LineSource {
            p: *p,
            gens,
            rng: ChaCha8Rng::seed_from_u64(cfg.run.seed ^ 0x0bd1_u64),
            remaining: cfg.run.lines,
            data: cfg.run.data_bytes().map(|d| (d, 0)),
            random_payload: cfg.random_payload,
            alg: Alg::Bdi,
            lines: 0,
            comp_bits: 0,
        }
    }

    /// The source for the units of `alg` (BDI by default, FPC or C-Pack+Z): which model's bits
    /// [`LineSource::comp_bits`] counts and which decoder judges arbitrary payloads.
    pub fn with_alg(mut self, alg: Alg) -> Self {
        self.alg = alg;
        self
    }

    /// The next line, or `None` when done.
    pub fn next_case(&mut self, decomp: bool) -> Option<LineCase> {
        if self.remaining == 0 {
            return None;
        }
        let lb = self.p.line_bytes;
        let line = match &mut self.data {
            Some((d, pos)) => {
                if *pos >= d.len() {
                    return None;
                }
                let mut l = d[*pos..(*pos + lb).min(d.len())].to_vec();
                l.resize(lb, 0);
                *pos += lb;
                l
            }
            None => {
                let k = self.rng.gen_range(0..self.gens.len());
                self.gens[k].next_line()
            }
        };
        self.remaining -= 1;
        self.lines += 1;
        let bp = self.p.bdi();
        let comp = bdi::compress(&bp, &line).expect("valid line");
        if self.alg == Alg::Cpack {
            let cp = self.p.cpack();
            let cc = cpack::compress(&cp, &line).expect("valid line");
            self.comp_bits += cc.nbits as u64;
            let arbitrary = (decomp && self.rng.gen_bool(self.random_payload)).then(|| {
                let mut bytes: Vec<u8> = if self.rng.gen_bool(0.5) {
                    (0..lb).map(|_| self.rng.gen()).collect()
                } else {
                    // The model's stream with 1–3 bits flipped within it.
                    let mut b = cc.bits.clone();
                    b.resize(lb, 0);
                    let n = cc.nbits.max(1);
                    for _ in 0..self.rng.gen_range(1..=3) {
                        let bit = self.rng.gen_range(0..n);
                        b[bit / 8] ^= 0x80 >> (bit % 8);
                    }
                    b
                };
                bytes.truncate(lb);
                judged(&mut self.rng, bytes, lb, |b| {
                    cpack::decompress_prefix(&cp, b).ok()
                })
            });
            return Some(LineCase {
                line,
                comp,
                fpc: None,
                cpack: Some(cc),
                arbitrary,
            });
        }
        let fp = self.p.fpc();
        let fpc_comp =
            (self.alg == Alg::Fpc).then(|| fpc::compress(&fp, &line).expect("valid line"));
        self.comp_bits += match &fpc_comp {
            Some(f) => f.nbits,
            None => comp.nbits,
        } as u64;
        let fpc_arb = fpc_comp
            .as_ref()
            .filter(|_| decomp && self.rng.gen_bool(self.random_payload));
        let arbitrary = fpc_arb.map(|fpc_comp| {
            // Random bits, or the model's stream with one bit flipped.
            let mut bytes: Vec<u8> = (0..lb).map(|_| self.rng.gen()).collect();
            if fpc_comp.compressed && self.rng.gen_bool(0.5) {
                bytes = fpc_comp.bits.clone();
                bytes.resize(lb, 0);
                let b = self.rng.gen_range(0..fpc_comp.nbits);
                bytes[b / 8] ^= 0x80 >> (b % 8);
            }
            judged(&mut self.rng, bytes, lb, |b| {
                fpc::decompress_prefix(&fp, b).ok()
            })
        });
        let arbitrary = arbitrary.or_else(|| {
            (decomp && self.alg != Alg::Fpc && self.rng.gen_bool(self.random_payload)).then(|| {
                let mut bytes: Vec<u8> = (0..lb).map(|_| self.rng.gen()).collect();
                // Mostly legal prefixes (arbitrary fields), sometimes reserved ones.
                if self.rng.gen_bool(0.8) {
                    bytes[0] &= 0x7f;
                }
                judged(&mut self.rng, bytes, lb, |b| {
                    bdi::decompress_prefix(&bp, b).ok()
                })
            })
        });
        Some(LineCase {
            line,
            comp,
            fpc: fpc_comp,
            cpack: None,
            arbitrary,
        })
    }
}

/// The case of the arbitrary payload `bytes`: with probability 0.9 sent as compressed, its
/// line what `decode` makes of it (an all-zero line and an error where it rejects it);
/// otherwise sent raw. (compressed, payload, expected line, error), as in
/// [`LineCase::arbitrary`].
fn judged<T>(
    rng: &mut ChaCha8Rng,
    bytes: Vec<u8>,
    lb: usize,
    decode: impl FnOnce(&[u8]) -> Option<(Vec<u8>, T)>,
) -> (bool, Vec<u8>, Vec<u8>, bool) {
    if !rng.gen_bool(0.9) {
        return (false, bytes.clone(), bytes, false);
    }
    match decode(&bytes) {
        Some((l, _)) => (true, bytes, l, false),
        None => (true, bytes, vec![0u8; lb], true),
    }
}

/// The FPC model result of a case from an FPC source.
pub(super) fn fpc_of(c: &LineCase) -> &fpc::FpcCompressed {
    c.fpc
        .as_ref()
        .expect("FPC units take cases from LineSource::with_alg(Alg::Fpc)")
}

/// The transaction of one line for `unit`, its fields by the units' layout names.
pub fn transaction(p: &AdaptiveRtlParams, unit: Unit, c: &LineCase) -> Txn {
    let lb = p.line_bytes;
    let line = le_words(&c.line);
    match unit {
        Unit::BdiComp => Txn {
            inputs: vec![Beat::new().with("line", line)],
            expected: vec![Beat::new()
                .num("ok", c.comp.is_compressed().into())
                .num("enc", c.comp.encoding as u64)
                .num("len", c.comp.nbits as u64)
                .with("payload", bus_words(&c.comp.bits, lb))],
        },
        Unit::FpcComp => Txn {
            inputs: vec![Beat::new().with("line", line)],
            expected: vec![comp_beat(
                fpc_of(c).compressed,
                fpc_of(c).nbits as u64,
                bus_words(&fpc_of(c).bits, lb),
            )],
        },
        Unit::FpcDecomp => match &c.arbitrary {
            Some((comp, bytes, out, err)) => Txn {
                inputs: vec![decomp_beat(*comp, bus_words(bytes, lb))],
                expected: vec![line_beat(le_words(out), *err)],
            },
            None => Txn {
                inputs: vec![decomp_beat(
                    fpc_of(c).compressed,
                    bus_words(&fpc_of(c).bits, lb),
                )],
                expected: vec![line_beat(line, false)],
            },
        },
        Unit::BdiDecomp | Unit::CpackDecomp => match &c.arbitrary {
            Some((comp, bytes, out, err)) => Txn {
                inputs: vec![decomp_beat(*comp, bus_words(bytes, lb))],
                expected: vec![line_beat(le_words(out), *err)],
            },
            None => {
                let (ok, bits) = match (&c.cpack, unit) {
                    (Some(cc), Unit::CpackDecomp) => (cc.compressed, &cc.bits),
                    _ => (c.comp.is_compressed(), &c.comp.bits),
                };
                Txn {
                    inputs: vec![decomp_beat(ok, bus_words(bits, lb))],
                    expected: vec![line_beat(line, false)],
                }
            }
        },
        Unit::CpackComp => {
            let cc = c.cpack.as_ref().expect("a C-Pack+Z line source");
            Txn {
                inputs: vec![Beat::new().with("line", line)],
                expected: vec![comp_beat(
                    cc.compressed,
                    cc.nbits as u64,
                    bus_words(&cc.bits, lb),
                )],
            }
        }
        Unit::BdiLoopback | Unit::FpcLoopback | Unit::CpackLoopback => Txn {
            inputs: vec![Beat::new().with("line", line.clone())],
            expected: vec![line_beat(line, false)],
        },
        Unit::Ctrl | Unit::Tx | Unit::Rx | Unit::LinkLoopback => {
            panic!(
                "the controller's and link units' transactions come from ctrl_cases / link::cases"
            )
        }
    }
}

/// A compressor's output beat (FPC, C-Pack+Z): compressed flag, length in bits, payload.
fn comp_beat(ok: bool, len: u64, payload: Vec<u32>) -> Beat {
    Beat::new()
        .num("ok", ok.into())
        .num("len", len)
        .with("payload", payload)
}

/// A decompressor's input beat: compressed flag and payload.
pub(super) fn decomp_beat(comp: bool, payload: Vec<u32>) -> Beat {
    Beat::new()
        .num("comp", comp.into())
        .with("payload", payload)
}

/// A decompressor's (or a loopback's) output beat: the line and its error flag.
pub(super) fn line_beat(line: Vec<u32>, err: bool) -> Beat {
    Beat::new().with("line", line).num("err", err.into())
}
