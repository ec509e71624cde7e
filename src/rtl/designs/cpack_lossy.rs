//! The units of PACT'12 (C-Pack 128 B, lossy FP truncation, MD cache, MC top): their names and the generator each one is built by.

use super::unit_by_name;
use crate::hdl::Module;
use crate::rtl::cpack_lossy::LossyRtlParams;

/// The PACT'12 units the registry co-simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// `cpack_lossy_comp_*`.
    Compressor,
    /// `cpack_lossy_decomp_*`.
    Decompressor,
    /// `cpack_lossy_trunc_*` (`fp_trunc_pack`).
    TruncPack,
    /// `cpack_lossy_restore_*` (`fp_unpack_restore`).
    UnpackRestore,
    /// `cache_*`: `md_cache` + `md_mshr`, the shared cache controller with MD entries as
    /// fields.
    MdCache,
    /// `cpack_lossy_mc_*`: `mc_comp_top`, one memory controller's compression path.
    McTop,
    /// `cpack_lossy_loopback_*` (test only): compressor → decompressor.
    Loopback,
    /// `cpack_lossy_lossy_loopback_*` (test only): truncation → compressor → decompressor →
    /// restore.
    LossyLoopback,
}

impl Unit {
    /// Every unit, in report order, the test-only loop-backs last.
    pub const ALL: [Unit; 8] = [
        Unit::Compressor,
        Unit::Decompressor,
        Unit::TruncPack,
        Unit::UnpackRestore,
        Unit::MdCache,
        Unit::McTop,
        Unit::Loopback,
        Unit::LossyLoopback,
    ];

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Compressor => "compressor",
            Unit::Decompressor => "decompressor",
            Unit::TruncPack => "trunc-pack",
            Unit::UnpackRestore => "unpack-restore",
            Unit::MdCache => "md-cache",
            Unit::McTop => "mc-top",
            Unit::Loopback => "loopback",
            Unit::LossyLoopback => "lossy_loopback",
        }
    }

    /// Input bytes per beat (the MD cache: the data bytes a lookup serves, one block).
    pub fn beat_bytes(self, p: &LossyRtlParams) -> u32 {
        match self {
            Unit::Compressor | Unit::TruncPack | Unit::Loopback | Unit::LossyLoopback => {
                4 * p.words_per_cycle as u32
            }
            Unit::Decompressor | Unit::UnpackRestore => 16,
            Unit::MdCache | Unit::McTop => p.codec.block_bytes as u32,
        }
    }

    /// The unit called `s`; the error lists the names.
    pub fn from_name(s: &str) -> Result<Unit, String> {
        unit_by_name(&Unit::ALL, Unit::name, s)
    }
}

/// The generated top of `unit`.
pub fn top(p: &LossyRtlParams, unit: Unit) -> Result<std::sync::Arc<Module>, String> {
    let r = match unit {
        Unit::Compressor => crate::rtl::cpack_lossy::compressor(p),
        Unit::Decompressor => crate::rtl::cpack_lossy::decompressor(p),
        Unit::TruncPack => crate::rtl::cpack_lossy::trunc_pack(p),
        Unit::UnpackRestore => crate::rtl::cpack_lossy::unpack_restore(p),
        Unit::MdCache => crate::rtl::cache::cache(&p.md_cache.rtl(p.codec.md_bits)),
        Unit::McTop => crate::rtl::cpack_lossy::mc_top(p),
        Unit::Loopback => crate::rtl::cpack_lossy::loopback(p),
        Unit::LossyLoopback => crate::rtl::cpack_lossy::lossy_loopback(p),
    };
    r.map_err(|e| e.to_string())
}
