//! The units of Buddy Compression (BPC, metadata slice, MC splitter): their names and the generator each one is built by.

use super::unit_by_name;
use crate::hdl::Module;
use crate::model::buddy::ENTRY_BYTES;
use crate::rtl::buddy::BuddyRtlParams;
use std::sync::Arc;

/// The BPC and Buddy units the registry co-simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// `bpc_comp_*`.
    Compressor,
    /// `bpc_dec_*`.
    Decompressor,
    /// `buddy_size_mapper`.
    SizeMapper,
    /// `buddy_addr_gen_*`.
    AddrGen,
    /// `cache_*`: the metadata-cache slice, the shared cache + MSHR controller with 4-bit
    /// size codes as fields.
    MetaCache,
    /// `buddy_mc_ctrl_*`: the per-MC request splitter and merger (128 B entries only).
    McCtrl,
}

impl Unit {
    /// Every unit, in report order.
    pub const ALL: [Unit; 6] = [
        Unit::Compressor,
        Unit::Decompressor,
        Unit::SizeMapper,
        Unit::AddrGen,
        Unit::MetaCache,
        Unit::McCtrl,
    ];

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Compressor => "bpc-compress",
            Unit::Decompressor => "bpc-decompress",
            Unit::SizeMapper => "size-mapper",
            Unit::AddrGen => "addr-gen",
            Unit::MetaCache => "meta-cache",
            Unit::McCtrl => "mc-ctrl",
        }
    }

    /// Input bytes per beat (the BPC units: an entry; the others: the 128 B entry a lookup
    /// serves).
    pub fn beat_bytes(self, p: &BuddyRtlParams) -> u32 {
        match self {
            Unit::Compressor | Unit::Decompressor => p.bpc.entry_bytes as u32,
            _ => ENTRY_BYTES as u32,
        }
    }

    /// The unit called `s`; the error lists the names.
    pub fn from_name(s: &str) -> Result<Unit, String> {
        unit_by_name(&Unit::ALL, Unit::name, s)
    }
}

/// The generated top of `unit`.
pub fn top(p: &BuddyRtlParams, unit: Unit) -> Result<Arc<Module>, String> {
    let r = match unit {
        Unit::Compressor => crate::rtl::bpc::compressor(&p.bpc),
        Unit::Decompressor => crate::rtl::bpc::decompressor(&p.bpc),
        Unit::SizeMapper => crate::rtl::buddy::size_mapper(p),
        Unit::AddrGen => crate::rtl::buddy::addr_gen(p),
        Unit::MetaCache => crate::rtl::cache::cache(&p.meta.rtl()),
        Unit::McCtrl => crate::rtl::buddy::mc_ctrl::mc_ctrl(p),
    };
    r.map_err(|e| e.to_string())
}
