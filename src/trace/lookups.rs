//! Field-lookup address streams for the metadata caches (`model::cache`, `rtl::cache`):
//! streaming, strided, random and hot-set patterns over a cache's geometry, seeded.

use crate::model::cache::CacheParams;
use rand::Rng;

/// A lookup address pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Walks the fields in order, each three times in a row (mostly hits).
    Streaming,
    /// Jumps half a line per lookup, plus a small offset, over 8x the capacity.
    Strided,
    /// Uniform over 4x the capacity.
    Random,
    /// Random fields of `ways + 2` lines that all map to set 0 (evictions, write-backs).
    HotSet,
}

/// Every pattern.
pub const PATTERNS: [Pattern; 4] = [
    Pattern::Streaming,
    Pattern::Strided,
    Pattern::Random,
    Pattern::HotSet,
];

/// The field index of lookup `i` of pattern `pat` for a cache of geometry `p`.
pub fn field(p: &CacheParams, pat: Pattern, i: u64, rng: &mut impl Rng) -> u64 {
    let fpl = p.fields_per_sector() * p.sectors() as u64;
    let span = p.size_bytes() * 8 / p.field_bits as u64; // fields the cache holds
    match pat {
        Pattern::Streaming => i / 3,
        Pattern::Strided => (i * fpl / 2 + i % 5) % (span * 8),
        Pattern::Random => rng.gen_range(0..span * 4),
        Pattern::HotSet => {
            let line = rng.gen_range(0..p.ways as u64 + 2) * p.sets as u64;
            line * fpl + rng.gen_range(0..fpl)
        }
    }
}
