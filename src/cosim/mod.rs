//! Co-simulation: Verilator build and FFI driver, the generic [`dut::Dut`] interface, and the
//! per-engine scoreboards.

pub mod dut;
pub mod zvc;
