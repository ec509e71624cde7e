//! The units of Base+XOR/ZDR/DBI: their names and the generator each one is built by.

use super::unit_by_name;
use crate::hdl::{HdlError, Module};
use crate::rtl::base_xor::{self as rtl, BaseXorRtlParams};
use std::sync::Arc;

/// Which unit is under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Write path: raw sector in, encoded sector + DBI flags out.
    Encoder,
    /// Read path: encoded sector + DBI flags in, raw sector out.
    Decoder,
    /// Sector + flags in, beats out.
    Serializer,
    /// Beats in, sector + flags out.
    Deserializer,
    /// Raw sector in, raw sector out, through all four units.
    Loopback,
}

impl Unit {
    /// Every unit, the test-only loop-back last.
    pub const ALL: [Unit; 5] = [
        Unit::Encoder,
        Unit::Decoder,
        Unit::Serializer,
        Unit::Deserializer,
        Unit::Loopback,
    ];

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Encoder => "encoder",
            Unit::Decoder => "decoder",
            Unit::Serializer => "serializer",
            Unit::Deserializer => "deserializer",
            Unit::Loopback => "loopback",
        }
    }

    /// Parses a CLI name; the error lists the known units.
    pub fn from_name(s: &str) -> Result<Unit, String> {
        unit_by_name(&Unit::ALL, Unit::name, s)
    }
}

/// The generated top module of `unit` (the only place that maps units to generators).
pub fn top(p: &BaseXorRtlParams, unit: Unit) -> Result<Arc<Module>, HdlError> {
    match unit {
        Unit::Encoder => rtl::encoder(p),
        Unit::Decoder => rtl::decoder(p),
        Unit::Serializer => rtl::serializer(p),
        Unit::Deserializer => rtl::deserializer(p),
        Unit::Loopback => rtl::loopback(p),
    }
}
