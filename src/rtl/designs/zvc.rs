//! The units of ZVC (cDMA): their names and the generator each one is built by.

use super::unit_by_name;
use crate::rtl::zvc::ZvcRtlParams;

/// Which unit is under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Raw sectors in, compressed beats out.
    Compressor,
    /// Compressed beats in, raw sectors out.
    Decompressor,
    /// Raw sectors in, raw sectors out (compressor → decompressor).
    Loopback,
}

impl Unit {
    /// Every unit, the test-only loop-back last.
    pub const ALL: [Unit; 3] = [Unit::Compressor, Unit::Decompressor, Unit::Loopback];

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Compressor => "compressor",
            Unit::Decompressor => "decompressor",
            Unit::Loopback => "loopback",
        }
    }

    /// Parses a CLI name; the error lists the known units.
    pub fn from_name(s: &str) -> Result<Unit, String> {
        unit_by_name(&Unit::ALL, Unit::name, s)
    }
}

/// The generated top module of `unit` (the only place that maps units to generators).
pub fn top(
    p: &ZvcRtlParams,
    unit: Unit,
) -> Result<std::sync::Arc<crate::hdl::Module>, crate::hdl::HdlError> {
    match unit {
        Unit::Compressor => crate::rtl::zvc::compressor(p),
        Unit::Decompressor => crate::rtl::zvc::decompressor(p),
        Unit::Loopback => crate::rtl::zvc::loopback(p),
    }
}
