//! Scoreboards of the Buddy Compression units (`rtl::bpc`, `rtl::buddy`) against the golden
//! models (`model::bpc`, `model::buddy`), on the one-in/one-out stream runner with random
//! gaps and stalls.
//!
//! Stimulus: the §6 entry classes in turn (`trace::entries`). The decompressor gets the
//! compressor model's streams with their metadata codes and, with probability [`CORRUPT`],
//! a corrupted one (flipped bits, a random stream, a wrong or reserved code); its expected
//! output is [`crate::model::bpc::decompress_within`] on the code's size, so a corrupt
//! stream either decodes to what the model decodes or must raise `err`.

use super::dut::Dut;
use super::run::{run_counted, RunConfig};
use super::stream::{run_stream, Beat, RunStats, Stream, StreamConfig, Timing, Txn};
use super::zvc::bytes_to_words as words;
use crate::hdl::Module;
use crate::model::bpc;
use crate::model::buddy::{split, AddrParams, SizeCode, Target};
use crate::rtl::bpc::BpcRtlParams;
use crate::rtl::buddy::BuddyRtlParams;
pub use crate::rtl::designs::buddy::{top, Unit};
use crate::trace::entries::{EntryStim, ENTRY_BYTES};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What the compressor stores for an entry: (bus bytes, stream bits, metadata code).
pub fn comp_expected(p: &BpcRtlParams, entry: &[u8]) -> Result<(Vec<u8>, usize, u8), String> {
    let (bytes, nbits) = bpc::encode(&p.model(), entry).map_err(|e| e.to_string())?;
    let zero = entry.iter().all(|b| *b == 0);
    let code = p.code_of(zero, nbits);
    let mut out = if code == 4 { entry.to_vec() } else { bytes };
    out.resize(p.entry_bytes, 0);
    Ok((out, nbits, code))
}

/// Bytes stored for a metadata code (0 for a reserved one).
pub fn code_bytes(p: &BpcRtlParams, code: u8) -> usize {
    match code {
        4 => p.entry_bytes,
        _ => p.code_limit_bits(code).unwrap_or(0) as usize / 8,
    }
}

/// The compressor's transaction for one entry.
pub fn comp_txn(p: &BpcRtlParams, entry: &[u8]) -> Result<Txn, String> {
    let (bytes, nbits, code) = comp_expected(p, entry)?;
    let nw = p.entry_bytes / 4;
    Ok(Txn {
        inputs: vec![Beat::new().with("blk", words(entry, nw))],
        expected: vec![Beat::new()
            .with("stream", words(&bytes, nw))
            .num("nbits", nbits as u64)
            .num("size", code.into())
            .num("raw", (code == 4).into())],
    })
}

/// What the decompressor returns for a stored entry (`stream`, one entry of bytes) with
/// metadata `code`: the entry and `err` (an erroneous entry reads as zeros).
pub fn decomp_expected(p: &BpcRtlParams, stream: &[u8], code: u8) -> (Vec<u8>, bool) {
    let eb = p.entry_bytes;
    match code {
        0 => return (vec![0; eb], false),
        4 => return (stream.to_vec(), false),
        _ => {}
    }
    let Some(limit) = p.code_limit_bits(code) else {
        return (vec![0; eb], true);
    };
    match bpc::decompress_within(&p.model(), stream, limit as usize) {
        Ok(b) => (b, false),
        Err(_) => (vec![0; eb], true),
    }
}

/// The decompressor's transaction for a stored entry.
pub fn decomp_txn(p: &BpcRtlParams, stream: &[u8], code: u8) -> Txn {
    let (blk, err) = decomp_expected(p, stream, code);
    let nw = p.entry_bytes / 4;
    Txn {
        inputs: vec![Beat::new()
            .with("stream", words(stream, nw))
            .num("size", code.into())],
        expected: vec![Beat::new()
            .with("blk", words(&blk, nw))
            .num("err", err.into())],
    }
}

/// An entry as stored (stream and code) and, with probability `corrupt`, corrupted: 1-3
/// flipped bits within the stored size, a random stream, or another code (reserved ones
/// too). Returns (stream, code, corrupted).
pub fn stored(
    p: &BpcRtlParams,
    entry: &[u8],
    corrupt: f64,
    rng: &mut ChaCha8Rng,
) -> Result<(Vec<u8>, u8, bool), String> {
    let (mut bytes, _, code) = comp_expected(p, entry)?;
    let mut c = code;
    if !rng.gen_bool(corrupt) {
        return Ok((bytes, c, false));
    }
    match rng.gen_range(0..4) {
        0 | 1 => {
            let span = code_bytes(p, code).max(8) * 8;
            for _ in 0..rng.gen_range(1..=3) {
                let bit = rng.gen_range(0..span);
                bytes[bit / 8] ^= 0x80 >> (bit % 8);
            }
        }
        2 => {
            bytes.iter_mut().for_each(|b| *b = rng.gen());
            c = [1, 2, 3, 5][rng.gen_range(0..4)];
        }
        _ => c = rng.gen_range(0..16),
    }
    Ok((bytes, c, true))
}

/// The size mapper's transaction for (`code`, `tgt`): the model's split, or `err` with
/// zeros for a reserved code or target.
pub fn size_txn(code: u8, tgt: u8) -> Txn {
    let exp = match (SizeCode::from_bits(code), Target::from_code(tgt)) {
        (Ok(c), Ok(t)) => {
            let sp = split(c, t);
            [
                sp.dev_mask.into(),
                sp.bud_mask.into(),
                sp.n_dev().into(),
                sp.n_bud().into(),
                sp.fits_dev.into(),
                sp.is_zero.into(),
                sp.is_raw.into(),
                0,
            ]
        }
        _ => [0, 0, 0, 0, 0, 0, 0, 1],
    };
    let names = [
        "dev_mask", "bud_mask", "n_dev", "n_bud", "fits_dev", "is_zero", "is_raw", "err",
    ];
    Txn {
        inputs: vec![Beat::new().num("size", code.into()).num("tgt", tgt.into())],
        expected: vec![names
            .iter()
            .zip(exp)
            .fold(Beat::new(), |b, (n, v)| b.num(n, v))],
    }
}

/// The address generator's inputs.
#[derive(Clone, Copy, Debug)]
pub struct AddrReq {
    /// Entry within the page.
    pub entry: u64,
    /// Device page base.
    pub base: u64,
    /// Buddy offset (PTE).
    pub boff: u64,
    /// Target code (5-7 reserved).
    pub tgt: u8,
    /// Global buddy base register.
    pub gbbr: u64,
    /// 32 B piece.
    pub k: u32,
}

/// The address generator's transaction: the model's addresses, or `err` with zeros for a
/// reserved target.
pub fn addr_txn(a: &AddrParams, r: &AddrReq) -> Txn {
    let exp = match Target::from_code(r.tgt) {
        Ok(t) => (
            a.device_addr(r.base, r.entry, t, r.k),
            a.buddy_addr(r.gbbr, r.boff, r.entry, t, r.k),
            u64::from(32 * r.k as usize >= t.device_bytes()),
            0u64,
        ),
        Err(_) => (0, 0, 0, 1),
    };
    Txn {
        inputs: vec![Beat::new()
            .num("entry", r.entry)
            .num("base", r.base)
            .num("boff", r.boff)
            .num("tgt", r.tgt.into())
            .num("gbbr", r.gbbr)
            .num("k", r.k.into())],
        expected: vec![Beat::new()
            .num("dev_addr", exp.0)
            .num("bud_addr", exp.1)
            .num("is_buddy", exp.2)
            .num("err", exp.3)],
    }
}

/// A random request within the widths of `p` (targets 0-7, page-aligned bases sometimes).
pub fn random_addr_req(p: &BuddyRtlParams, rng: &mut ChaCha8Rng) -> AddrReq {
    let a = &p.addr;
    let mask = |b: u32| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
    let page = a.page.bytes();
    let mut base = rng.gen::<u64>() & mask(a.pa_bits);
    if rng.gen_bool(0.5) {
        base &= !(page - 1);
    }
    AddrReq {
        entry: rng.gen::<u64>() & mask(p.entry_bits()),
        base,
        boff: rng.gen::<u64>() & mask(a.boff_bits),
        tgt: if rng.gen_bool(0.9) {
            rng.gen_range(0..5)
        } else {
            rng.gen_range(5..8)
        },
        gbbr: rng.gen::<u64>() & mask(a.pa_bits) & !(page - 1),
        k: rng.gen_range(0..4),
    }
}

/// Runs `n` random requests through the size mapper or the address generator.
pub fn run_table(
    dut: &mut dyn Dut,
    top: &Module,
    p: &BuddyRtlParams,
    unit: Unit,
    n: u64,
    cfg: &StreamConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let (sin, sout) = Stream::of_unit(top)?;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5123);
    let mut left = n;
    let mut next = || {
        if left == 0 {
            return None;
        }
        left -= 1;
        Some(match unit {
            Unit::SizeMapper => {
                let code = if rng.gen_bool(0.9) {
                    SizeCode::ALL[rng.gen_range(0..6)].bits()
                } else {
                    rng.gen_range(0..16)
                };
                size_txn(code, rng.gen_range(0..8))
            }
            _ => addr_txn(&p.addr, &random_addr_req(p, &mut rng)),
        })
    };
    let mut st = run_stream(dut, &sin, &sout, &mut next, cfg, &mut |_| {}, progress)?;
    st.lines = st.transfers;
    // Each lookup serves one 128 B entry (the unit's beat bytes).
    st.raw_bytes = st.transfers * ENTRY_BYTES as u64;
    Ok(st)
}

/// Fraction of corrupted entries the decompressor gets from the generated classes.
pub const CORRUPT: f64 = 0.1;

/// Entries from the classes (each 128 B class entry cut into entries of the unit's size) or
/// from fixed data (a trace, its last entry zero-padded).
pub enum Entries {
    /// The §6 classes in turn, with the pieces of the current class entry left.
    Classes(EntryStim, Vec<Vec<u8>>),
    /// Fixed data, once: (data, next offset).
    Fixed(Vec<u8>, usize),
}

impl Entries {
    /// The §6 classes from `seed`.
    pub fn classes(seed: u64) -> Entries {
        Entries::Classes(EntryStim::new(seed), Vec::new())
    }

    fn next_entry(&mut self, bytes: usize) -> Option<Vec<u8>> {
        match self {
            Entries::Classes(s, left) => {
                if left.is_empty() {
                    let mut e: Vec<Vec<u8>> =
                        s.next_entry().chunks(bytes).map(<[u8]>::to_vec).collect();
                    e.reverse();
                    *left = e;
                }
                left.pop()
            }
            Entries::Fixed(d, at) => {
                if *at >= d.len() {
                    return None;
                }
                let mut e = d[*at..d.len().min(*at + bytes)].to_vec();
                e.resize(bytes, 0);
                *at += bytes;
                Some(e)
            }
        }
    }
}

/// Runs up to `n` entries through `unit` (`top`); the decompressor gets `corrupt` of them
/// corrupted.
#[allow(clippy::too_many_arguments)]
pub fn run_entries(
    dut: &mut dyn Dut,
    top: &Module,
    p: &BpcRtlParams,
    unit: Unit,
    entries: &mut Entries,
    n: u64,
    corrupt: f64,
    cfg: &StreamConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xb0dd);
    let eb = p.entry_bytes;
    run_counted(dut, top, n, eb, cfg, progress, &mut || {
        let e = entries.next_entry(eb)?;
        Some(match unit {
            Unit::Compressor => comp_txn(p, &e).map(|t| {
                let code = t.expected[0].u64("size") as u8;
                (t, code_bytes(p, code))
            }),
            _ => stored(p, &e, corrupt, &mut rng)
                .map(|(s, c, _)| (decomp_txn(p, &s, c), code_bytes(p, c))),
        })
    })
}

super::run::unit_bench!(BuddyRtlParams, Unit, RunConfig);

/// Runs `unit` on `dut` for the engine-independent settings of `s`: `s.lines` entries of the
/// §6 classes (the decompressor with [`CORRUPT`] of them corrupted) or the entries of a
/// trace (`s.data`, nothing corrupted).
pub fn run_with(
    dut: &mut dyn Dut,
    p: &BuddyRtlParams,
    unit: Unit,
    s: &crate::cosim::run::RunConfig,
    progress: &mut dyn FnMut(&RunStats),
) -> Result<RunStats, String> {
    p.validate()?;
    let t = top(p, unit)?;
    let cfg = s.harness();
    if matches!(unit, Unit::SizeMapper | Unit::AddrGen) {
        return run_table(dut, &t, p, unit, s.lines, &cfg, progress);
    }
    if unit == Unit::MetaCache {
        return run_meta_cache(dut, &t, p, s.lines, &cfg);
    }
    if unit == Unit::McCtrl {
        if s.data.is_some() {
            return Err("the mc-ctrl unit runs generated requests; --trace is not used".into());
        }
        return Ok(super::buddy_mc::run(dut, &t, p, s.lines, &cfg)?
            .checked()?
            .stats);
    }
    let (mut entries, corrupt) = match s.data_bytes() {
        Some(bytes) => (Entries::Fixed(bytes, 0), 0.0),
        None => (Entries::classes(s.seed), CORRUPT),
    };
    run_entries(
        dut,
        &t,
        &p.bpc,
        unit,
        &mut entries,
        s.lines,
        corrupt,
        &cfg,
        progress,
    )
}

/// Runs `n` metadata lookups (reads and updates of size codes, the `trace::lookups`
/// patterns) through the slice `top` with a reordering memory ([`super::cache::run`]); the
/// controller's hit, miss and merge counters must equal the model's.
pub fn run_meta_cache(
    dut: &mut dyn Dut,
    top: &Module,
    p: &BuddyRtlParams,
    n: u64,
    cfg: &StreamConfig,
) -> Result<RunStats, String> {
    super::cache::run_unit(dut, top, &p.meta.rtl(), n, cfg)
}

/// An entry of random bytes (every plane raw).
pub fn dense_entry(p: &BpcRtlParams) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    (0..p.entry_bytes).map(|_| rng.gen()).collect()
}

/// Latency of an isolated entry (the compressor: any entry; the decompressor: the stream of
/// the densest 96 B entry found in the classes, its worst case) and the rate over 2,000
/// class entries without stalls.
pub fn measure(dut: &mut dyn Dut, pb: &BuddyRtlParams, unit: Unit) -> Result<Timing, String> {
    pb.validate()?;
    let p = &pb.bpc;
    let t = top(pb, unit)?;
    if unit == Unit::MetaCache {
        return super::cache::timing(dut, &t, &pb.meta.rtl(), ENTRY_BYTES);
    }
    if unit == Unit::McCtrl {
        return super::buddy_mc::measure(dut, &t, pb);
    }
    let (sin, sout) = Stream::of_unit(&t)?;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let txn = match unit {
        Unit::Compressor => comp_txn(p, &dense_entry(p))?,
        Unit::Decompressor => {
            let e = worst_entry(p)?;
            let (s, _, c) = comp_expected(p, &e)?;
            decomp_txn(p, &s, c)
        }
        Unit::SizeMapper => size_txn(2, 3),
        Unit::AddrGen => addr_txn(&pb.addr, &random_addr_req(pb, &mut rng)),
        Unit::MetaCache | Unit::McCtrl => return Err("measured above".into()),
    };
    let cfg = RunConfig::quiet(2000).harness();
    super::run::measure(dut, &sin, &sout, &txn, |dut| {
        if matches!(unit, Unit::SizeMapper | Unit::AddrGen) {
            run_table(dut, &t, pb, unit, 2000, &cfg, &mut |_| {})
        } else {
            let mut entries = Entries::classes(7);
            run_entries(dut, &t, p, unit, &mut entries, 2000, 0.0, &cfg, &mut |_| {})
        }
    })
}

/// The compressed (not raw) entry with the most tokens among 4,000 class entries.
pub fn worst_entry(p: &BpcRtlParams) -> Result<Vec<u8>, String> {
    let q = p.model();
    let mut e = Entries::classes(3);
    let mut best = (0usize, vec![0u8; p.entry_bytes]);
    for _ in 0..4000 {
        let Some(x) = e.next_entry(p.entry_bytes) else {
            break;
        };
        let t = bpc::tokens(&q, &x).map_err(|e| e.to_string())?;
        if t.bits(&q) <= p.raw_above_bits() as usize && t.tokens.len() > best.0 {
            best = (t.tokens.len(), x);
        }
    }
    Ok(best.1)
}

#[cfg(test)]
#[path = "buddy_tests.rs"]
mod tests;
