//! Buddy Compression's size mapping and address generation (Choukse et al., ISCA 2020; spec
//! docs/FORMATS.md, Buddy §2.2, §3.1-§3.3).
//!
//! * **Metadata code** ([`SizeCode`], 4 bits per 128 B entry): 0 B (all zero, no data access),
//!   ≤ 8 B, 32, 64, 96 B, or 128 B (raw). The code is a function of the block alone (the BPC
//!   stream length, or all-zero): a stream of at most 64 bits gets the ≤ 8 B code whatever
//!   the page's target, so the compressor needs no target; outside 16× pages it occupies one
//!   sector like 32 B (FORMATS §2.2 \[proposal\], `docs/FORMATS.md`).
//! * **Targets** ([`Target`]): 1×, 4/3×, 2×, 4×, 16× keep `D = 128 / T` bytes of each entry
//!   in device memory (128, 96, 64, 32, 8 B); stream bytes `[0, D)` are on the device and
//!   `[D, S)` in the entry's fixed buddy slot of `128 − D` bytes.
//! * **Split** ([`split`]): which stream pieces are read from where. Device pieces are the
//!   32 B sectors `k < D/32` (for 16×: the one 8 B slot); buddy pieces are the 32 B pieces of
//!   stream bytes `[D, S)`.
//! * **Addresses** ([`AddrParams::device_addr`], [`AddrParams::buddy_addr`]): device
//!   `page_base + e·D + 32k`; buddy `GBBR + buddy_off·page_bytes + e·(128 − D) + 32m` for
//!   buddy piece `m` (the carve-out offset counts pages; `128 − D` is a shift-and-add).
//! * [`profile`]: the Buddy-Threshold profiler (per-allocation targets from snapshots).
//! * [`system`]: allocations, metadata-cache slices, traffic and energy per access.

use super::ModelError;
use serde::{Deserialize, Serialize};

pub mod eval;
pub mod profile;
pub mod system;

/// Bytes per memory-entry.
pub const ENTRY_BYTES: usize = 128;
/// Bytes per sector.
pub const SECTOR_BYTES: usize = 32;

/// The 4-bit per-entry metadata code (FORMATS §2.2 table \[proposal\]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SizeCode {
    /// All-zero entry: no data stored or read.
    Zero = 0x0,
    /// 32 B.
    B32 = 0x1,
    /// 64 B.
    B64 = 0x2,
    /// 96 B.
    B96 = 0x3,
    /// 128 B, stored raw.
    Raw = 0x4,
    /// At most 8 B (the 16× mode's device slot).
    Le8 = 0x5,
}

impl SizeCode {
    /// Every code, in size order.
    pub const ALL: [SizeCode; 6] = [
        SizeCode::Zero,
        SizeCode::Le8,
        SizeCode::B32,
        SizeCode::B64,
        SizeCode::B96,
        SizeCode::Raw,
    ];

    /// The code of a block from its BPC stream length: all-zero → 0 B; ≤ 64 bits → ≤ 8 B;
    /// ≤ 768 bits → `ceil(bits / 256)` sectors; longer → raw.
    pub fn of(all_zero: bool, stream_bits: usize) -> SizeCode {
        if all_zero {
            SizeCode::Zero
        } else if stream_bits <= 64 {
            SizeCode::Le8
        } else if stream_bits <= 256 {
            SizeCode::B32
        } else if stream_bits <= 512 {
            SizeCode::B64
        } else if stream_bits <= 768 {
            SizeCode::B96
        } else {
            SizeCode::Raw
        }
    }

    /// The 4-bit value.
    pub fn bits(self) -> u8 {
        self as u8
    }

    /// The code of a 4-bit value; reserved values (0x6-0xF) are an error.
    pub fn from_bits(v: u8) -> Result<SizeCode, ModelError> {
        SizeCode::ALL
            .into_iter()
            .find(|c| c.bits() == v)
            .ok_or_else(|| ModelError::Corrupt(format!("reserved metadata code {v:#x}")))
    }

    /// Bytes stored: 0, 8, 32, 64, 96 or 128.
    pub fn bytes(self) -> usize {
        match self {
            SizeCode::Zero => 0,
            SizeCode::Le8 => 8,
            SizeCode::B32 => 32,
            SizeCode::B64 => 64,
            SizeCode::B96 => 96,
            SizeCode::Raw => 128,
        }
    }

    /// Buddy's bucket (Fig. 5b): 0, 32, 64, 96 or 128 B (≤ 8 B counts as 32 B).
    pub fn bucket(self) -> usize {
        self.bytes()
            .max(if self == SizeCode::Zero { 0 } else { 32 })
    }
}

/// A per-allocation target compression ratio (FORMATS §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// Uncompressed page (the PTE's compressed bit is 0).
    X1,
    /// 4/3×: 96 B per entry on the device.
    X4_3,
    /// 2×: 64 B.
    X2,
    /// 4×: 32 B.
    X4,
    /// 16× (mostly-zero allocations): 8 B.
    X16,
}

impl Target {
    /// Every target, smallest ratio first.
    pub const ALL: [Target; 5] = [
        Target::X1,
        Target::X4_3,
        Target::X2,
        Target::X4,
        Target::X16,
    ];

    /// Device bytes per entry, `128 / T`.
    pub fn device_bytes(self) -> usize {
        match self {
            Target::X1 => 128,
            Target::X4_3 => 96,
            Target::X2 => 64,
            Target::X4 => 32,
            Target::X16 => 8,
        }
    }

    /// Bytes of each entry's buddy slot, `128 − D`.
    pub fn buddy_bytes(self) -> usize {
        ENTRY_BYTES - self.device_bytes()
    }

    /// The ratio as a number.
    pub fn ratio(self) -> f64 {
        ENTRY_BYTES as f64 / self.device_bytes() as f64
    }

    /// The 3-bit PTE code (FORMATS §2.2 \[proposal\]; 1× is `000`, with the compressed bit 0).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The target of a 3-bit PTE code (`101`-`111` are reserved).
    pub fn from_code(v: u8) -> Result<Target, ModelError> {
        Target::ALL
            .into_iter()
            .find(|t| t.code() == v)
            .ok_or_else(|| ModelError::Corrupt(format!("reserved target code {v:#05b}")))
    }

    /// Name as in the paper (`1x`, `4/3x`, `2x`, `4x`, `16x`).
    pub fn name(self) -> &'static str {
        match self {
            Target::X1 => "1x",
            Target::X4_3 => "4/3x",
            Target::X2 => "2x",
            Target::X4 => "4x",
            Target::X16 => "16x",
        }
    }
}

/// Where an entry's stored bytes are read from (the `size_mapper`'s outputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Split {
    /// Device pieces: bit `k` is the 32 B sector `k` of the entry's device slot (for 16×:
    /// bit 0 is the 8 B slot).
    pub dev_mask: u8,
    /// Buddy pieces: bit `m` is the 32 B piece `m` of stream bytes `[D, S)`.
    pub bud_mask: u8,
    /// Whether nothing is read from buddy memory.
    pub fits_dev: bool,
    /// All-zero entry (no data access at all).
    pub is_zero: bool,
    /// Stored raw.
    pub is_raw: bool,
}

impl Split {
    /// Device pieces read.
    pub fn n_dev(&self) -> u32 {
        self.dev_mask.count_ones()
    }

    /// Buddy pieces read.
    pub fn n_bud(&self) -> u32 {
        self.bud_mask.count_ones()
    }
}

/// The device/buddy split of an entry with metadata `code` in a page with target `t`.
pub fn split(code: SizeCode, t: Target) -> Split {
    let s = code.bytes();
    let d = t.device_bytes();
    let dev_bytes = s.min(d);
    let bud_bytes = s - dev_bytes;
    let mask = |n: usize| ((1u16 << n) - 1) as u8;
    Split {
        dev_mask: mask(dev_bytes.div_ceil(SECTOR_BYTES)),
        bud_mask: mask(bud_bytes.div_ceil(SECTOR_BYTES)),
        fits_dev: bud_bytes == 0,
        is_zero: code == SizeCode::Zero,
        is_raw: code == SizeCode::Raw,
    }
}

/// The pieces an entry's stored bytes occupy in memory ([`split`]): device pieces (32 B
/// sectors `[32k, 32k + 32)`; at 16× the one 8 B slot `[0, 8)`) and buddy pieces (32 B,
/// stream bytes `[D + 32m, D + 32m + 32)`), zero-padded past the stored bytes.
pub fn pieces(code: SizeCode, t: Target, stored: &[u8]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let s = split(code, t);
    let take = |lo: usize, n: usize| -> Vec<u8> {
        (lo..lo + n)
            .map(|i| stored.get(i).copied().unwrap_or(0))
            .collect()
    };
    let dev_piece = t.device_bytes().min(SECTOR_BYTES);
    let dev = (0..s.n_dev() as usize)
        .map(|k| take(SECTOR_BYTES * k, dev_piece))
        .collect();
    let bud = (0..s.n_bud() as usize)
        .map(|m| take(t.device_bytes() + SECTOR_BYTES * m, SECTOR_BYTES))
        .collect();
    (dev, bud)
}

/// Page size of compressed allocations (FORMATS §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PageSize {
    /// 2 MB pages (16-bit buddy offsets).
    #[default]
    #[serde(rename = "2m")]
    M2,
    /// 64 KB pages (21-bit offsets cover the 96 GB carve-out; the paper says 20).
    #[serde(rename = "64k")]
    K64,
}

impl PageSize {
    /// Bytes per page.
    pub fn bytes(self) -> u64 {
        match self {
            PageSize::M2 => 2 << 20,
            PageSize::K64 => 64 << 10,
        }
    }

    /// The smallest offset width that covers a `carve_bytes` carve-out.
    pub fn offset_bits_for(self, carve_bytes: u64) -> u32 {
        let pages = carve_bytes.div_ceil(self.bytes());
        64 - (pages.max(2) - 1).leading_zeros()
    }
}

/// Address-generation parameters (FORMATS §3.2, §7 item 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AddrParams {
    /// Physical address width (`PA_W`).
    pub pa_bits: u32,
    /// Page size.
    pub page: PageSize,
    /// Buddy-offset width (`BOFF_W`): 16 for 2 MB pages; 21 for 64 KB pages covers a 4×
    /// carve-out of a 32 GB GPU (the paper's 20 covers half of it).
    pub boff_bits: u32,
}

impl Default for AddrParams {
    fn default() -> Self {
        AddrParams {
            pa_bits: 48,
            page: PageSize::M2,
            boff_bits: 16,
        }
    }
}

impl AddrParams {
    /// 64 KB pages with the offset width that covers the carve-out (21 bits).
    pub fn pages_64k() -> Self {
        AddrParams {
            page: PageSize::K64,
            boff_bits: 21,
            ..Self::default()
        }
    }

    /// Checks the widths.
    pub fn validate(&self) -> Result<(), ModelError> {
        if !(32..=64).contains(&self.pa_bits) {
            return Err(ModelError::param("pa_bits", self.pa_bits, "32..=64"));
        }
        let page_bits = self.page.bytes().trailing_zeros();
        if self.boff_bits == 0 || self.boff_bits + page_bits > self.pa_bits {
            return Err(ModelError::param(
                "boff_bits",
                self.boff_bits,
                format!(
                    "1..={} (offset plus page bits within pa_bits)",
                    self.pa_bits - page_bits
                ),
            ));
        }
        Ok(())
    }

    /// Entries per page.
    pub fn entries_per_page(&self) -> u64 {
        self.page.bytes() / ENTRY_BYTES as u64
    }

    fn pa_mask(&self) -> u64 {
        if self.pa_bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.pa_bits) - 1
        }
    }

    /// Device address of sector `k` of entry `e` in a page at `page_base` with target `t`
    /// (for 16×, `k = 0` is the 8 B slot).
    pub fn device_addr(&self, page_base: u64, e: u64, t: Target, k: u32) -> u64 {
        page_base
            .wrapping_add(e * t.device_bytes() as u64)
            .wrapping_add(k as u64 * SECTOR_BYTES as u64)
            & self.pa_mask()
    }

    /// Buddy address of buddy piece `m` of entry `e`: `GBBR + buddy_off·page_bytes +
    /// e·(128 − D) + 32m`.
    pub fn buddy_addr(&self, gbbr: u64, buddy_off: u64, e: u64, t: Target, m: u32) -> u64 {
        let off = buddy_off & ((1u64 << self.boff_bits) - 1);
        gbbr.wrapping_add(off * self.page.bytes())
            .wrapping_add(e * t.buddy_bytes() as u64)
            .wrapping_add(m as u64 * SECTOR_BYTES as u64)
            & self.pa_mask()
    }

    /// Metadata index of entry `e` of the page at `buddy_off` (only compressed pages use
    /// metadata; FORMATS §3.3 \[proposal\]).
    pub fn meta_index(&self, buddy_off: u64, e: u64) -> u64 {
        buddy_off * self.entries_per_page() + e
    }
}

#[cfg(test)]
mod tests;
