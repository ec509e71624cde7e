//! Buddy Compression's compressibility study on a set of 128 B entries (FORMATS §5.1, §6
//! "Reporting"): the Fig. 5b bucket histogram, the Fig. 3 ratio over the optimistic sizes,
//! the Fig. 5a comparison (BPC, BDI+FPC, ZVC on 128 B entries), 32- against 64-bit BPC
//! symbols, and the Fig. 10-like fraction of entries that need buddy memory per target.

use super::{SizeCode, Target, ENTRY_BYTES};
use crate::model::bdi::BdiParams;
use crate::model::bpc::{self, BpcParams};
use crate::model::codec::LineCodec;
use crate::model::fpc::FpcParams;
use crate::model::zvc_line::ZvcLineParams;
use crate::model::ModelError;
use serde::Serialize;

/// The optimistic sizes of the Fig. 3 study (FORMATS §2.2), bytes.
pub const OPTIMISTIC: [usize; 8] = [0, 8, 16, 32, 64, 80, 96, 128];

/// One data set's results.
#[derive(Clone, Debug, Serialize)]
pub struct SetEval {
    /// Class or file name.
    pub name: String,
    /// Entries.
    pub entries: usize,
    /// Fraction of entries per bucket 0, 32, 64, 96, 128 B (Fig. 5b; ≤ 8 B counts as 32 B).
    pub buckets: [f64; 5],
    /// Fraction of entries that fit 8 B (the 16× device slot), all-zero excluded.
    pub le8: f64,
    /// Raw bytes over the optimistic sizes' bytes (Fig. 3); `None` when every entry is zero.
    pub ratio_optimistic: Option<f64>,
    /// Raw bytes over the bucket sizes' bytes (what Buddy stores); `None` when all zero.
    pub ratio_buckets: Option<f64>,
    /// Raw bits over compressed bits, per codec at 128 B (Fig. 5a): BPC, BDI+FPC (the smaller
    /// per entry), ZVC; the raw entry caps each.
    pub ratio_bits: CodecRatios,
    /// The same BPC ratio with 64-bit symbols.
    pub bpc64_ratio_bits: f64,
    /// Fraction of entries with bytes in buddy memory, per target 1×, 4/3×, 2×, 4×, 16×.
    pub buddy_fraction: [f64; 5],
}

/// Ratios of raw to compressed bits.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CodecRatios {
    /// BPC, 32-bit symbols.
    pub bpc: f64,
    /// The smaller of BDI and FPC per entry.
    pub bdi_fpc: f64,
    /// Zero-value compression of 32-bit words.
    pub zvc: f64,
}

/// The smallest optimistic size that holds `bits` (0 only for an all-zero entry).
fn optimistic_bytes(zero: bool, bits: usize) -> usize {
    if zero {
        return 0;
    }
    let b = bits.div_ceil(8);
    OPTIMISTIC
        .iter()
        .copied()
        .find(|s| *s >= b && *s > 0)
        .unwrap_or(ENTRY_BYTES)
}

fn ratio(raw: usize, stored: usize) -> Option<f64> {
    (stored > 0).then(|| raw as f64 / stored as f64)
}

/// Evaluates `entries` (each 128 B) under `p` (its symbol width is the "32-bit" column; the
/// 64-bit column always uses 64-bit symbols).
pub fn evaluate(p: &BpcParams, name: &str, entries: &[Vec<u8>]) -> Result<SetEval, ModelError> {
    let n = entries.len().max(1);
    let p64 = BpcParams { sym_bits: 64, ..*p };
    let bdi = BdiParams {
        line_bytes: ENTRY_BYTES,
        ..BdiParams::default()
    };
    let fpc = FpcParams {
        line_bytes: ENTRY_BYTES,
        ..FpcParams::default()
    };
    let zvc = ZvcLineParams::default();
    let mut buckets = [0usize; 5];
    let mut le8 = 0usize;
    let (mut opt, mut bkt) = (0usize, 0usize);
    let (mut b_bpc, mut b_bf, mut b_zvc, mut b_64) = (0usize, 0usize, 0usize, 0usize);
    let mut buddy = [0usize; 5];
    let raw_bits = ENTRY_BYTES * 8;
    for e in entries {
        let zero = e.iter().all(|b| *b == 0);
        let bits = bpc::stream_bits(p, e)?;
        let code = SizeCode::of(zero, bits);
        buckets[code.bucket() / 32] += 1;
        le8 += (code == SizeCode::Le8) as usize;
        opt += optimistic_bytes(zero, bits);
        bkt += code.bucket();
        b_bpc += bits.min(raw_bits);
        b_64 += bpc::stream_bits(&p64, e)?.min(raw_bits);
        b_bf += bdi.size_bits(e)?.min(fpc.size_bits(e)?).min(raw_bits);
        b_zvc += zvc.size_bits(e)?.min(raw_bits);
        for (i, t) in Target::ALL.iter().enumerate() {
            buddy[i] += (code.bytes() > t.device_bytes()) as usize;
        }
    }
    let total = entries.len() * ENTRY_BYTES;
    let tb = entries.len() * raw_bits;
    let r = |b: usize| tb as f64 / b.max(1) as f64;
    Ok(SetEval {
        name: name.to_string(),
        entries: entries.len(),
        buckets: buckets.map(|c| c as f64 / n as f64),
        le8: le8 as f64 / n as f64,
        ratio_optimistic: ratio(total, opt),
        ratio_buckets: ratio(total, bkt),
        ratio_bits: CodecRatios {
            bpc: r(b_bpc),
            bdi_fpc: r(b_bf),
            zvc: r(b_zvc),
        },
        bpc64_ratio_bits: r(b_64),
        buddy_fraction: buddy.map(|c| c as f64 / n as f64),
    })
}

/// Geometric mean of the defined values (`None` if there are none).
pub fn geomean(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let xs: Vec<f64> = v.flatten().collect();
    (!xs.is_empty()).then(|| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

fn f2(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "inf".into())
}

/// The tables as Markdown: buckets and ratios, then the codec comparison, then the buddy
/// fractions.
pub fn markdown(sets: &[SetEval]) -> String {
    let pct = |x: f64| format!("{:.1}", 100.0 * x);
    let mut s = String::from(
        "Fig. 5b buckets (% of entries) and Fig. 3 ratios (raw / stored bytes)\n\n\
         | Data | Entries | 0 B | 32 B | 64 B | 96 B | 128 B | of which <= 8 B | \
         Optimistic sizes | Buddy buckets |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for e in sets {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            e.name,
            e.entries,
            pct(e.buckets[0]),
            pct(e.buckets[1]),
            pct(e.buckets[2]),
            pct(e.buckets[3]),
            pct(e.buckets[4]),
            pct(e.le8),
            f2(e.ratio_optimistic),
            f2(e.ratio_buckets)
        );
    }
    s += "\nFig. 5a-style codec comparison at 128 B (raw / compressed bits), and BPC with \
          64-bit symbols\n\n| Data | BPC | BDI+FPC | ZVC | BPC 64-bit symbols |\n\
          |---|---:|---:|---:|---:|\n";
    for e in sets {
        let r = e.ratio_bits;
        s += &format!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            e.name, r.bpc, r.bdi_fpc, r.zvc, e.bpc64_ratio_bits
        );
    }
    s += "\nFig. 10-like: % of entries with bytes in buddy memory, per target\n\n\
          | Data | 1x | 4/3x | 2x | 4x | 16x |\n|---|---:|---:|---:|---:|---:|\n";
    for e in sets {
        let b = e.buddy_fraction;
        s += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            e.name,
            pct(b[0]),
            pct(b[1]),
            pct(b[2]),
            pct(b[3]),
            pct(b[4])
        );
    }
    s
}

/// An access stream over one allocation for the metadata-slice sweep (§6 "Access streams").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessStream {
    /// Entries in order.
    Sequential,
    /// Stencil-like: 16 entries (2 KB) apart, wrapping with an offset per pass.
    Strided,
    /// Random gathers over the allocation (CG, ILBDC).
    Gather,
    /// Reuse-distance controlled: 90 % of accesses revisit one of the last 4,096 entries.
    Reuse,
}

impl AccessStream {
    /// Every stream.
    pub const ALL: [AccessStream; 4] = [
        AccessStream::Sequential,
        AccessStream::Strided,
        AccessStream::Gather,
        AccessStream::Reuse,
    ];

    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            AccessStream::Sequential => "sequential",
            AccessStream::Strided => "strided",
            AccessStream::Gather => "gather",
            AccessStream::Reuse => "reuse",
        }
    }

    /// `n` entry indices within `entries`, seeded.
    pub fn indices(self, n: usize, entries: usize, seed: u64) -> Vec<usize> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut recent: Vec<usize> = Vec::new();
        (0..n)
            .map(|i| match self {
                AccessStream::Sequential => i % entries,
                AccessStream::Strided => (i * 16 + i / entries.div_ceil(16).max(1)) % entries,
                AccessStream::Gather => rng.gen_range(0..entries),
                AccessStream::Reuse => {
                    let e = if !recent.is_empty() && rng.gen_bool(0.9) {
                        recent[rng.gen_range(0..recent.len())]
                    } else {
                        rng.gen_range(0..entries)
                    };
                    if recent.len() < 4096 {
                        recent.push(e);
                    } else {
                        recent[i % 4096] = e;
                    }
                    e
                }
            })
            .collect()
    }
}

/// One point of the metadata-slice sweep.
#[derive(Clone, Debug, Serialize)]
pub struct MetaRow {
    /// Access stream.
    pub stream: AccessStream,
    /// Bytes per slice.
    pub slice_bytes: u64,
    /// Entry reads.
    pub reads: u64,
    /// Hits over lookups (merges count as misses served by an MSHR).
    pub hit_rate: f64,
    /// Metadata sector reads per 1,000 entry reads.
    pub meta_reads_per_k: f64,
}

/// Slice sizes of the sweep (bytes per MC; 4 KB is the paper's, 8 KB the "64 KB total"
/// reading).
pub const SLICE_BYTES: [u32; 5] = [1024, 2048, 4096, 8192, 16384];

/// The metadata-slice hit rate against slice size: `n` reads per stream over one 4×
/// allocation of 2^18 entries (32 MB) spread over 8 MCs.
pub fn meta_sweep(n: usize, seed: u64) -> Result<Vec<MetaRow>, ModelError> {
    use super::system::{System, SystemParams};
    let entries = 1 << 18;
    let mut rows = Vec::new();
    for s in AccessStream::ALL {
        let idx = s.indices(n, entries, seed);
        for &bytes in &SLICE_BYTES {
            let mut p = SystemParams::default();
            p.meta.sets = bytes / (p.meta.ways * p.meta.line_bytes);
            let mut sys = System::new(&p)?;
            let a = sys.allocate(entries, Target::X4);
            for &e in &idx {
                sys.read(a, e)?;
            }
            let m = sys.meta_stats();
            let look = (m.hits + m.misses + m.merges).max(1);
            rows.push(MetaRow {
                stream: s,
                slice_bytes: bytes as u64,
                reads: idx.len() as u64,
                hit_rate: m.hits as f64 / look as f64,
                meta_reads_per_k: sys.counts().meta_reads as f64 * 1000.0 / idx.len().max(1) as f64,
            });
        }
    }
    Ok(rows)
}

/// The sweep as Markdown: hit rate (%) per stream and slice size.
pub fn meta_markdown(rows: &[MetaRow]) -> String {
    let mut s = String::from("| Stream |");
    for b in SLICE_BYTES {
        s += &format!(" {} KB |", b / 1024);
    }
    s += "\n|---|";
    s += &"---:|".repeat(SLICE_BYTES.len());
    s += "\n";
    for st in AccessStream::ALL {
        s += &format!("| {} |", st.name());
        for b in SLICE_BYTES {
            let r = rows
                .iter()
                .find(|r| r.stream == st && r.slice_bytes == b as u64);
            s += &r
                .map(|r| format!(" {:.1} |", 100.0 * r.hit_rate))
                .unwrap_or_else(|| " - |".into());
        }
        s += "\n";
    }
    s
}

/// One row of the profiler study: a group of allocations under one targeting policy.
#[derive(Clone, Debug, Serialize)]
pub struct ProfileRow {
    /// `hpc` or `dl`.
    pub group: String,
    /// `naive` (one target for the whole group), `per-allocation`, `per-allocation+16x`.
    pub policy: String,
    /// Capacity ratio: raw bytes over device bytes.
    pub capacity: f64,
    /// Share of entry accesses (every entry of every snapshot) that read buddy memory.
    pub buddy_fraction: f64,
    /// The targets chosen, one per allocation (`name:target`).
    pub targets: Vec<String>,
}

/// The size codes of `entries`.
fn codes(p: &BpcParams, entries: &[Vec<u8>]) -> Result<Vec<SizeCode>, ModelError> {
    entries
        .iter()
        .map(|e| {
            let zero = e.iter().all(|b| *b == 0);
            Ok(SizeCode::of(zero, bpc::stream_bits(p, e)?))
        })
        .collect()
}

/// Makes `n` entries of one data class from a seed.
pub type Generator<'a> = &'a dyn Fn(usize, u64) -> Vec<Vec<u8>>;

/// An owned [`Generator`].
pub type BoxedGenerator = Box<dyn Fn(usize, u64) -> Vec<Vec<u8>>>;

/// A group of allocations for [`profile_study`]: a name (`hpc`, `dl`) and one named
/// generator per allocation.
pub struct StudyGroup<'a> {
    /// Group name.
    pub name: &'a str,
    /// Allocations: name and data generator.
    pub allocs: Vec<(&'a str, Generator<'a>)>,
}

/// The Buddy-Threshold profiler (§3.6) on snapshot sequences: per group, one allocation of
/// `n` entries per generator, `snaps` snapshots in which every entry is rewritten with
/// probability `rewrite` (fresh data of its generator), under three policies: one target for
/// the whole group (Fig. 7 "naive"), per-allocation targets, and per-allocation targets with
/// the 16x zero-page mode.
pub fn profile_study(
    p: &BpcParams,
    groups: &[StudyGroup],
    n: usize,
    snaps: usize,
    rewrite: f64,
    seed: u64,
) -> Result<Vec<ProfileRow>, ModelError> {
    use super::profile::{overall_ratio, profile, Allocation, ProfileParams};
    use rand::{Rng, SeedableRng};
    if !(0.0..=1.0).contains(&rewrite) || snaps == 0 {
        return Err(ModelError::param(
            "rewrite",
            rewrite,
            "0..=1 with at least one snapshot",
        ));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut rows = Vec::new();
    for g in groups {
        let group = g.name;
        let mut allocs = Vec::new();
        for (name, gen) in &g.allocs {
            let mut cur = gen(n, seed);
            let mut sn = vec![codes(p, &cur)?];
            for k in 1..snaps {
                let fresh = gen(n, seed ^ (k as u64) << 32);
                for (e, f) in cur.iter_mut().zip(fresh) {
                    if rng.gen_bool(rewrite) {
                        *e = f;
                    }
                }
                sn.push(codes(p, &cur)?);
            }
            allocs.push(Allocation {
                name: name.to_string(),
                snapshots: sn,
            });
        }
        let sizes: Vec<usize> = allocs.iter().map(|a| a.entries()).collect();
        let weighted = |ts: &[Target]| -> f64 {
            let tot: f64 = sizes.iter().map(|s| *s as f64).sum();
            allocs
                .iter()
                .zip(ts)
                .map(|(a, t)| a.buddy_fraction(*t) * a.entries() as f64)
                .sum::<f64>()
                / tot.max(1.0)
        };
        let names = |ts: &[Target]| -> Vec<String> {
            allocs
                .iter()
                .zip(ts)
                .map(|(a, t)| format!("{}:{}", a.name, t.name()))
                .collect()
        };
        // Naive: the largest single target (16x excluded) within the threshold for the
        // group's entries taken together.
        let pp = ProfileParams::default();
        let merged = Allocation {
            name: group.into(),
            snapshots: (0..snaps)
                .map(|k| allocs.iter().flat_map(|a| a.snapshots[k].clone()).collect())
                .collect(),
        };
        let naive = [Target::X4, Target::X2, Target::X4_3, Target::X1]
            .into_iter()
            .find(|t| merged.buddy_fraction(*t) <= pp.threshold)
            .unwrap_or(Target::X1);
        let ts = vec![naive; allocs.len()];
        rows.push(ProfileRow {
            group: group.into(),
            policy: "naive".into(),
            capacity: overall_ratio(&sizes, &ts),
            buddy_fraction: weighted(&ts),
            targets: vec![format!("all:{}", naive.name())],
        });
        for (policy, allow_16x) in [("per-allocation", false), ("per-allocation+16x", true)] {
            let ch = profile(&allocs, &ProfileParams { allow_16x, ..pp })?;
            let ts: Vec<Target> = ch.iter().map(|c| c.target).collect();
            rows.push(ProfileRow {
                group: group.into(),
                policy: policy.into(),
                capacity: overall_ratio(&sizes, &ts),
                buddy_fraction: weighted(&ts),
                targets: names(&ts),
            });
        }
    }
    Ok(rows)
}

/// The profiler study as Markdown.
pub fn profile_markdown(rows: &[ProfileRow]) -> String {
    let mut s = String::from(
        "| Group | Policy | Capacity | Buddy accesses (%) | Targets |\n|---|---|---:|---:|---|\n",
    );
    for r in rows {
        s += &format!(
            "| {} | {} | {:.2}x | {:.1} | {} |\n",
            r.group,
            r.policy,
            r.capacity,
            100.0 * r.buddy_fraction,
            r.targets.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::entries::EntryClass;

    #[test]
    fn classes_order_as_expected() {
        let p = BpcParams::default();
        let ev = |c: EntryClass| evaluate(&p, c.name(), &c.generate(256, 1)).unwrap();
        let z = ev(EntryClass::Zero);
        assert_eq!(z.buckets[0], 1.0);
        assert!(z.ratio_optimistic.is_none());
        let r = ev(EntryClass::Random);
        assert_eq!(r.buckets[4], 1.0);
        assert_eq!(r.ratio_optimistic, Some(1.0));
        assert_eq!(r.buddy_fraction, [0.0, 1.0, 1.0, 1.0, 1.0]);
        let i = ev(EntryClass::IndexI32);
        assert!(i.ratio_bits.bpc > 4.0, "{:?}", i.ratio_bits);
        // FP64 fields: 64-bit symbols beat 32-bit ones.
        let f = ev(EntryClass::StencilF64);
        assert!(f.bpc64_ratio_bits > f.ratio_bits.bpc, "{f:?}");
        let md = markdown(&[z, r]);
        assert!(md.contains("| zero | 256 | 100.0 |"), "{md}");
        assert!(md.contains("| inf |"), "{md}");
        assert_eq!(geomean([Some(2.0), None, Some(8.0)].into_iter()), Some(4.0));
    }

    #[test]
    fn profiler_study_improves_on_one_target() {
        let gens: Vec<(EntryClass, BoxedGenerator)> = EntryClass::ALL
            .into_iter()
            .filter(|c| *c != EntryClass::Random)
            .map(|c| {
                let f: BoxedGenerator = Box::new(move |n, s| c.generate(n, s));
                (c, f)
            })
            .collect();
        let group = |dl: bool, name: &'static str| StudyGroup {
            name,
            allocs: gens
                .iter()
                .filter(|(c, _)| c.is_dl() == dl)
                .map(|(c, f)| (c.name(), f.as_ref() as Generator))
                .collect(),
        };
        let groups = [group(false, "hpc"), group(true, "dl")];
        let rows = profile_study(&BpcParams::default(), &groups, 64, 4, 0.1, 2).unwrap();
        assert_eq!(rows.len(), 6);
        for g in ["hpc", "dl"] {
            let cap = |pol: &str| {
                rows.iter()
                    .find(|r| r.group == g && r.policy == pol)
                    .unwrap()
                    .capacity
            };
            assert!(cap("per-allocation") >= cap("naive"), "{g}");
            assert!(cap("per-allocation+16x") >= cap("per-allocation"), "{g}");
            assert!(cap("per-allocation+16x") <= 4.0 + 1e-9, "{g}");
        }
        assert!(profile_markdown(&rows).contains("| hpc | naive |"));
    }

    #[test]
    fn meta_sweep_hit_rates_order() {
        let rows = meta_sweep(20_000, 1).unwrap();
        let hr = |s: AccessStream, b: u64| {
            rows.iter()
                .find(|r| r.stream == s && r.slice_bytes == b)
                .unwrap()
                .hit_rate
        };
        // Sequential: one miss per 64 entries at any size.
        assert!((hr(AccessStream::Sequential, 4096) - 63.0 / 64.0).abs() < 0.01);
        // Gathers over 32 MB miss almost always; reuse hits more with a larger slice.
        assert!(hr(AccessStream::Gather, 4096) < 0.1);
        assert!(hr(AccessStream::Reuse, 16384) > hr(AccessStream::Reuse, 1024));
        let md = meta_markdown(&rows);
        assert!(md.contains("| sequential |"), "{md}");
    }
}
