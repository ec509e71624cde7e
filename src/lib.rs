//! hwzip: synthesizable Verilog generators for GPU memory- and link-compression hardware.
//!
//! * [`hdl`]   typed RTL builder, Verilog emitter and native netlist interpreter
//! * [`model`] bit-exact golden models (one file per algorithm)
//! * [`rtl`]   hardware generators (one file per algorithm, same names as `model`)
//! * [`cosim`] Verilator co-simulation: build cache, FFI driver, scoreboard
//! * [`synth`] Yosys + OpenSTA driver and area/timing reports
//! * [`trace`] stimulus: proptest strategies, synthetic workloads, trace files
//! * [`engines`] the registry: one value per engine family, which the CLI and [`flow`] use
pub mod cache_dir;
pub mod config;
pub mod cosim;
pub mod engines;
pub mod files;
pub mod flow;
pub mod formal;
pub mod hdl;
pub mod model;
pub mod proc;
pub mod report;
pub mod rtl;
pub mod synth;
pub mod trace;
