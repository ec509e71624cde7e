//! MD-cache hit rate versus cache size and ways (docs/FORMATS.md, PACT'12 §3, §5 "Metrics
//! to produce"), measured with the memory-controller model ([`super::mc::Mc`]) on four
//! access streams of one MC's local block space:
//! * `copy`: a streaming copy, read block `i` then write block `DST + i`;
//! * `strided`: a column walk down a row-major matrix of 4 KB rows (1,024 rows);
//! * `random`: uniform blocks over 128 MB, 30 % of them full writes;
//! * `stencil`: a 5-point stencil sweep over a 2,048 × 2,048 FP32 grid (rows of 8 KB), each
//!   output block reading the blocks above, at and below it and writing its block of the
//!   second grid.
//!
//! Writes are full blocks of zeros with `tcode` 0 (their MD entry is updated through the
//! cache as every write's is); what is measured is the cache, not the data.

use super::mc::{Mc, McParams, McRequest};
use super::LossyParams;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::fmt::Write as _;

/// An MC access stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessStream {
    /// Streaming copy.
    Copy,
    /// Column walk (stride of one 4 KB row).
    Strided,
    /// Uniform random blocks.
    Random,
    /// 5-point stencil sweep.
    Stencil,
}

/// Destination offset of copies and second grids, in blocks (128 MB at 128 B).
const DST: u64 = 1 << 20;

impl AccessStream {
    /// Every stream, in report order.
    pub const ALL: [AccessStream; 4] = [
        AccessStream::Copy,
        AccessStream::Strided,
        AccessStream::Random,
        AccessStream::Stencil,
    ];

    /// Report name.
    pub fn name(self) -> &'static str {
        match self {
            AccessStream::Copy => "copy",
            AccessStream::Strided => "strided",
            AccessStream::Random => "random",
            AccessStream::Stencil => "stencil",
        }
    }

    /// The first `n` requests of the stream for blocks of `block_bytes` (deterministic in
    /// `seed`).
    pub fn requests(self, n: usize, block_bytes: usize, seed: u64) -> Vec<McRequest> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let write = |blk: u64| McRequest::Write {
            blk,
            data: vec![0; block_bytes],
            mask: u128::MAX,
            tcode: Some(0),
        };
        let row = |bytes: u64| (bytes / block_bytes as u64).max(1);
        let mut out = Vec::with_capacity(n);
        let mut i = 0u64;
        while out.len() < n {
            match self {
                AccessStream::Copy => {
                    out.push(McRequest::Read { blk: i });
                    out.push(write(DST + i));
                }
                AccessStream::Strided => {
                    let (rows, per_row) = (1024, row(4096));
                    let blk = (i % rows) * per_row + (i / rows) % per_row;
                    out.push(McRequest::Read { blk });
                }
                AccessStream::Random => {
                    let blk = rng.gen_range(0..DST);
                    if rng.gen_bool(0.3) {
                        out.push(write(blk));
                    } else {
                        out.push(McRequest::Read { blk });
                    }
                }
                AccessStream::Stencil => {
                    let (rows, per_row) = (2048, row(8192));
                    let r = (i / per_row) % (rows - 2) + 1;
                    let b = i % per_row;
                    for dr in [r - 1, r, r + 1] {
                        out.push(McRequest::Read {
                            blk: dr * per_row + b,
                        });
                    }
                    out.push(write(DST + r * per_row + b));
                }
            }
            i += 1;
        }
        out.truncate(n);
        out
    }
}

/// One stream on one cache geometry.
#[derive(Clone, Debug, Serialize)]
pub struct MdRow {
    /// Stream name.
    pub stream: &'static str,
    /// Cache lines.
    pub lines: u32,
    /// Ways.
    pub ways: u32,
    /// Cache capacity in bytes.
    pub bytes: u64,
    /// Data bytes the cache's entries cover.
    pub coverage_bytes: u64,
    /// MD lookups (one per request).
    pub lookups: u64,
    /// Hit rate of the lookups.
    pub hit_rate: f64,
    /// MD lines read (misses) per 1,000 requests.
    pub md_reads_per_k: f64,
    /// MD lines written back per 1,000 requests.
    pub md_writes_per_k: f64,
}

/// The geometries of the sweep: (lines, ways); the paper's is (32, 2).
pub const GEOMETRIES: [(u32, u32); 9] = [
    (8, 2),
    (16, 2),
    (32, 1),
    (32, 2),
    (32, 4),
    (64, 2),
    (128, 2),
    (256, 2),
    (256, 4),
];

/// Runs every stream of `n` requests through the MC model with every geometry of
/// [`GEOMETRIES`] (128 B lines, the paper's MSHRs; entries of `codec.md_bits`).
pub fn sweep(codec: &LossyParams, n: usize, seed: u64) -> Result<Vec<MdRow>, String> {
    let mut rows = Vec::new();
    for s in AccessStream::ALL {
        let reqs = s.requests(n, codec.block_bytes, seed);
        for &(lines, ways) in &GEOMETRIES {
            let mut p = McParams {
                codec: codec.clone(),
                ..McParams::default()
            };
            p.md_cache.field_bits = codec.md_bits;
            p.md_cache.ways = ways;
            p.md_cache.sets = lines / ways;
            let mut mc = Mc::new(&p)?;
            for r in &reqs {
                mc.request(r)?;
            }
            let (cs, ms) = (mc.md_stats(), mc.stats());
            let lookups = cs.hits + cs.misses + cs.merges;
            let k = reqs.len().max(1) as f64 / 1000.0;
            rows.push(MdRow {
                stream: s.name(),
                lines,
                ways,
                bytes: lines as u64 * p.md_cache.line_bytes as u64,
                coverage_bytes: p.md_coverage_bytes(),
                lookups,
                hit_rate: cs.hits as f64 / lookups.max(1) as f64,
                md_reads_per_k: ms.md_line_reads as f64 / k,
                md_writes_per_k: ms.md_line_writes as f64 / k,
            });
        }
    }
    Ok(rows)
}

/// The coverage arithmetic of §3 for `codec` with the paper's geometry, and the sweep as
/// Markdown.
pub fn markdown(codec: &LossyParams, rows: &[MdRow]) -> String {
    let p = McParams {
        codec: codec.clone(),
        ..McParams::default()
    };
    let mut p4 = p.clone();
    p4.codec.md_bits = 4;
    p4.md_cache.field_bits = 4;
    let per_line = |q: &McParams| q.md_cache.line_bytes as u64 * 8 / q.codec.md_bits as u64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "MD cache (PACT'12 §3): {} B lines, {} blocks per line with {}-bit entries \
         ({} KB of data per line, {} KB per {}-line cache); with the paper's 4-bit entries \
         {} blocks per line, {} KB per MC (the paper: 256 blocks, 1 MB).\n",
        p.md_cache.line_bytes,
        per_line(&p),
        p.codec.md_bits,
        p.bytes_per_md_line() / 1024,
        p.md_coverage_bytes() / 1024,
        p.md_cache.sets * p.md_cache.ways,
        per_line(&p4),
        p4.md_coverage_bytes() / 1024,
    );
    s += "| stream | lines | ways | cache | covers | hit rate | MD reads /1k req | \
          MD write-backs /1k req |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} KB | {} KB | {:.4} | {:.1} | {:.1} |",
            r.stream,
            r.lines,
            r.ways,
            r.bytes / 1024,
            r.coverage_bytes / 1024,
            r.hit_rate,
            r.md_reads_per_k,
            r.md_writes_per_k
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hit rates in [0, 1], a bigger cache never worse on these streams at 2 ways, the copy
    /// stream's two MD lines per 2 × 128 blocks (8-bit entries) give a hit rate near
    /// 1 − 2/256, and random lookups over 128 MB hit rarely.
    #[test]
    fn sweep_is_consistent() {
        let c = LossyParams::default();
        let rows = sweep(&c, 4000, 1).unwrap();
        assert_eq!(rows.len(), AccessStream::ALL.len() * GEOMETRIES.len());
        for s in AccessStream::ALL {
            let two: Vec<f64> = rows
                .iter()
                .filter(|r| r.stream == s.name() && r.ways == 2)
                .map(|r| r.hit_rate)
                .collect();
            assert!(
                two.windows(2).all(|w| w[1] + 1e-9 >= w[0]),
                "{s:?}: {two:?}"
            );
        }
        let copy = rows.iter().find(|r| r.stream == "copy").unwrap();
        assert!(
            (copy.hit_rate - (1.0 - 2.0 / 256.0)).abs() < 0.01,
            "{copy:?}"
        );
        let random = rows.iter().find(|r| r.stream == "random").unwrap();
        assert!(random.hit_rate < 0.05, "{random:?}");
        let md = markdown(&c, &rows);
        assert!(md.contains("256 blocks per line"), "{md}");
    }
}
