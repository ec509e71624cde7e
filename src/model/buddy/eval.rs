//! Buddy Compression's compressibility study on a set of 128 B entries (spec §5.1, §6
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

/// The optimistic sizes of the Fig. 3 study (spec §2.2), bytes.
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
}
