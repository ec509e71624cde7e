//! The units of adaptive link compression (BDI, FPC, C-Pack+Z, selector, link units): their names and the generator each one is built by.

use super::unit_by_name;
use crate::hdl::{HdlError, Module};
use crate::model::adaptive::Alg;
use crate::rtl::adaptive::AdaptiveRtlParams;
use crate::rtl::bdi as rtl;
use std::sync::Arc;

/// Which unit is under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// BDI compressor.
    BdiComp,
    /// BDI decompressor.
    BdiDecomp,
    /// Compressor → decompressor (test only).
    BdiLoopback,
    /// FPC compressor.
    FpcComp,
    /// FPC decompressor.
    FpcDecomp,
    /// FPC compressor → decompressor (test only).
    FpcLoopback,
    /// C-Pack+Z compressor.
    CpackComp,
    /// C-Pack+Z decompressor.
    CpackDecomp,
    /// C-Pack+Z compressor → decompressor (test only).
    CpackLoopback,
    /// The adaptive controller (`penalty_select` + `adaptive_ctrl`).
    Ctrl,
    /// Link egress `adaptive_tx`: compressors, controller, egress mux.
    Tx,
    /// Link ingress `adaptive_rx`: the decompressor dispatch.
    Rx,
    /// `adaptive_tx` → `adaptive_rx` (test only).
    LinkLoopback,
}

impl Unit {
    /// Every unit, the test-only loop-backs last.
    pub const ALL: [Unit; 13] = [
        Unit::BdiComp,
        Unit::BdiDecomp,
        Unit::FpcComp,
        Unit::FpcDecomp,
        Unit::CpackComp,
        Unit::CpackDecomp,
        Unit::Ctrl,
        Unit::Tx,
        Unit::Rx,
        Unit::BdiLoopback,
        Unit::FpcLoopback,
        Unit::CpackLoopback,
        Unit::LinkLoopback,
    ];

    /// The link units (egress, ingress, their loop-back), which need every enabled
    /// algorithm's compressor and decompressor.
    pub fn is_link(self) -> bool {
        matches!(self, Unit::Tx | Unit::Rx | Unit::LinkLoopback)
    }

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::BdiComp => "bdi_comp",
            Unit::BdiDecomp => "bdi_decomp",
            Unit::BdiLoopback => "bdi_loopback",
            Unit::FpcComp => "fpc_comp",
            Unit::FpcDecomp => "fpc_decomp",
            Unit::FpcLoopback => "fpc_loopback",
            Unit::CpackComp => "cpack_comp",
            Unit::CpackDecomp => "cpack_decomp",
            Unit::CpackLoopback => "cpack_loopback",
            Unit::Ctrl => "ctrl",
            Unit::Tx => "tx",
            Unit::Rx => "rx",
            Unit::LinkLoopback => "link_loopback",
        }
    }

    /// The algorithm whose model checks the unit (BDI for the controller, unused there).
    pub fn alg(self) -> Alg {
        match self {
            Unit::FpcComp | Unit::FpcDecomp | Unit::FpcLoopback => Alg::Fpc,
            Unit::CpackComp | Unit::CpackDecomp | Unit::CpackLoopback => Alg::Cpack,
            _ => Alg::Bdi,
        }
    }

    /// Whether the unit is a decompressor (fed streams, arbitrary payloads included).
    pub fn is_decomp(self) -> bool {
        matches!(self, Unit::BdiDecomp | Unit::FpcDecomp | Unit::CpackDecomp)
    }

    /// Whether the unit is a C-Pack+Z unit (stimulus from `model::cpack`).
    pub fn is_cpack(self) -> bool {
        self.alg() == Alg::Cpack
    }

    /// Parses a CLI name (`loopback` is accepted for `bdi_loopback`, the engine-independent
    /// name `flow` uses); the error lists the known units.
    pub fn from_name(s: &str) -> Result<Unit, String> {
        if s == "loopback" {
            return Ok(Unit::BdiLoopback);
        }
        unit_by_name(&Unit::ALL, Unit::name, s)
    }
}

/// The generated top module of `unit`.
pub fn top(p: &AdaptiveRtlParams, unit: Unit) -> Result<Arc<Module>, HdlError> {
    match unit {
        Unit::BdiComp => rtl::compressor(p),
        Unit::BdiDecomp => rtl::decompressor(p),
        Unit::BdiLoopback => rtl::loopback(p),
        Unit::FpcComp => crate::rtl::fpc::compressor(p),
        Unit::FpcDecomp => crate::rtl::fpc::decompressor(p),
        Unit::FpcLoopback => crate::rtl::fpc::loopback(p),
        Unit::CpackComp => crate::rtl::cpack::compressor(&p.cpack_rtl()),
        Unit::CpackDecomp => crate::rtl::cpack::decompressor(&p.cpack_rtl()),
        Unit::CpackLoopback => crate::rtl::cpack::loopback(&p.cpack_rtl()),
        Unit::Ctrl => crate::rtl::adaptive_ctrl::controller(p),
        Unit::Tx => crate::rtl::link::transmitter(p),
        Unit::Rx => crate::rtl::link::receiver(p),
        Unit::LinkLoopback => crate::rtl::link::loopback(p),
    }
}
