//! Verilator co-simulation: build cache, FFI driver, benchmarks, the generic [`dut::Dut`]
//! interface, fault injection for scoreboard tests ([`fault`]) and the per-engine
//! scoreboards ([`zvc`], [`base_xor`], [`adaptive`]).
//!
//! The build/FFI layer is the generic layer that engine-specific scoreboards sit on. It turns a set of Verilog
//! sources plus a port list into a Verilated shared object, loads it, and drives it from Rust.
//!
//! # Flow
//! 1. [`build`] writes the sources into a cache directory keyed by a SHA-256 of the Verilog,
//!    the generated C++ shim, `verilator --version`, `g++ --version`, the trace flag and the
//!    compiler flags. If `<dir>/libmodel.so` is already there it is loaded as is; otherwise it
//!    runs `verilator --cc`, compiles the generated C++ (grouped into one translation unit per
//!    core), the shim and the Verilator runtime (`verilated.cpp`, `verilated_threads.cpp`, plus
//!    `verilated_vcd_c.cpp` when tracing; cached once per toolchain under `runtime-<hash>/`)
//!    with `g++ -O2 -fPIC` in parallel threads and links `libmodel.so`. Builds happen in a
//!    temporary directory that is renamed into place, so concurrent builds of the same hash (from
//!    test threads or processes) are safe.
//! 2. [`Model::new`] instantiates the model (its own `VerilatedContext`, so several models can
//!    live in one process, e.g. one per test thread). Look ports up once with [`Model::port`],
//!    then drive them by [`PortId`]. Port reads and writes go straight to the model's port
//!    storage (addresses fetched once through `hz_port_ptr`), so only `eval`/`tick` cross the
//!    FFI boundary; the shim's index-based `hz_set`/`hz_get`/`hz_set_u64`/`hz_get_u64` are
//!    there for other callers and are cross-checked by the tests.
//! 3. [`Model::tick`] runs one clock cycle (`clk_i` 0 → eval → 1 → eval). Outputs read after
//!    `tick` are the post-edge values. [`Model::eval`] settles combinational logic without a
//!    clock edge.
//!
//! Cache root: `<cache root>/verilator` (`crate::cache_dir`: `$HWZIP_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/hwzip`, else `~/.cache/hwzip`).
//! Tools: `$HWZIP_VERILATOR` (default `verilator`), `$CXX` (default `g++`); parallel compile
//! jobs: `$HWZIP_JOBS` (default: available cores).
//!
//! # Conventions
//! * Clock: 1-bit input `clk_i`; reset: synchronous active-low 1-bit input `rst_ni`. A purely
//!   combinational module has neither ([`Model::tick`] then only evaluates and counts).
//! * Ports wider than 64 bits are arrays of 32-bit words, word 0 = bits 31:0. Every port is
//!   `width.div_ceil(32)` words; input bits above the port width are masked off (Verilog
//!   truncation), outputs are returned masked.
//! * Waveforms need a build with [`BuildSpec::trace`] set (a separate cache entry, slower);
//!   [`Model::trace_open`] starts a VCD, [`Model::set_tracing`] pauses/resumes dumping without
//!   closing the file (cheap window dumps around a mismatch), [`Model::trace_close`] flushes.
//!
//! # Example
//! ```no_run
//! use hwzip::cosim::{build, BuildSpec, Model, PortDir, PortSpec};
//! # fn main() -> Result<(), hwzip::cosim::CosimError> {
//! let spec = BuildSpec {
//!     top: "add8".into(),
//!     sources: vec![("add8.v".into(), "module add8(...); endmodule".into())],
//!     ports: vec![
//!         PortSpec::new("clk_i", PortDir::In, 1),
//!         PortSpec::new("rst_ni", PortDir::In, 1),
//!         PortSpec::new("a_i", PortDir::In, 8),
//!         PortSpec::new("s_o", PortDir::Out, 8),
//!     ],
//!     trace: false,
//!     x_random: false,
//! };
//! let lib = build(&spec)?;
//! let mut m = Model::new(&lib)?;
//! let (a, s) = (m.port("a_i")?, m.port("s_o")?);
//! m.reset(2)?;
//! m.set_u64(a, 7);
//! m.tick();
//! assert_eq!(m.get_u64(s), 7);
//! # Ok(()) }
//! ```

pub mod adaptive;
pub mod base_xor;
mod bench;
pub mod block_stim;
pub mod buddy;
pub mod buddy_mc;
mod build;
pub mod cache;
pub mod cpack_lossy;
pub mod cpack_lossy_mc;
pub mod dut;
pub mod fault;
pub mod harness;
#[cfg(test)]
mod harness_tests;
pub mod mc_bench;
pub mod memory;
mod model;
#[cfg(test)]
mod ram_tests;
pub mod run;
pub mod stream;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;
pub mod vdut;
pub mod zvc;

use std::path::PathBuf;

pub use bench::{cpp_loop_bench, rust_loop_bench};
pub use build::{
    build, cache_root, opt_level, set_opt_level, set_opt_level_by_size, with_opt_level,
    O0_BELOW_BYTES,
};
pub use model::{Library, Model, PortId};
pub use stream::RunStats;

/// Direction of a top-level port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortDir {
    /// Driven by the harness.
    In,
    /// Driven by the design.
    Out,
}

/// One top-level port of the Verilated module.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PortSpec {
    /// Verilog port name (a plain identifier).
    pub name: String,
    /// Direction.
    pub dir: PortDir,
    /// Width in bits (≥ 1).
    pub width: u32,
}

impl PortSpec {
    /// Convenience constructor.
    pub fn new(name: impl Into<String>, dir: PortDir, width: u32) -> Self {
        PortSpec {
            name: name.into(),
            dir,
            width,
        }
    }

    /// Number of 32-bit words that carry this port (`width.div_ceil(32)`).
    pub fn words(&self) -> usize {
        self.width.div_ceil(32) as usize
    }
}

/// What to Verilate: top module, sources, the ports the harness can address, tracing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BuildSpec {
    /// Name of the top module.
    pub top: String,
    /// `(file name, Verilog text)`; file names must be plain names (no directories).
    pub sources: Vec<(String, String)>,
    /// Ports exposed to Rust, addressed by index in this order. Need not list every port, but
    /// must include `clk_i`/`rst_ni` for [`Model::tick`]/[`Model::reset`] to drive them.
    pub ports: Vec<PortSpec>,
    /// Build with `--trace` (VCD). Separate cache entry from the fast build.
    pub trace: bool,
    /// Build with `--x-assign unique --x-initial unique`: every X assignment and every initial
    /// value becomes a run-time random value, drawn from the seed of
    /// [`Model::new_random`] (plain [`Model::new`] still starts at 0). Every build already
    /// draws initial values from the seed; a design without X literals therefore shares the
    /// plain build's cache entry, one with X literals gets its own.
    pub x_random: bool,
}

/// Errors from building or driving a Verilated model.
#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    /// A required tool (verilator, g++) is not installed.
    #[error("{tool} not found ({detail}); install the toolchain with `scripts/setup.sh`")]
    ToolMissing {
        /// Tool binary name.
        tool: String,
        /// OS error text.
        detail: String,
    },
    /// verilator, g++ or the benchmark binary failed.
    #[error("{tool} failed (exit code {code:?}); full log: {}\n--- log tail ---\n{log_tail}", log_path.display())]
    ToolFailed {
        /// What ran (e.g. `verilator`, `g++ (hz_unit0.cpp)`).
        tool: String,
        /// Exit code, `None` when killed by a signal.
        code: Option<i32>,
        /// Last lines of the log.
        log_tail: String,
        /// Where the full log is kept.
        log_path: PathBuf,
    },
    /// The build specification is inconsistent.
    #[error("invalid build spec: {0}")]
    Spec(String),
    /// Filesystem error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// Underlying error.
        source: std::io::Error,
    },
    /// Loading the shared object or resolving a symbol failed.
    #[error("loading {}: {msg}", path.display())]
    Load {
        /// The shared object.
        path: PathBuf,
        /// Loader error.
        msg: String,
    },
    /// No port of that name in the spec.
    #[error("unknown port `{0}`")]
    UnknownPort(String),
    /// Wrong number of 32-bit words for a port.
    #[error("port `{port}` ({width} bits) takes {expected} words, got {got}")]
    WidthMismatch {
        /// Port name.
        port: String,
        /// Port width in bits.
        width: u32,
        /// Words expected.
        expected: usize,
        /// Words supplied.
        got: usize,
    },
    /// Tried to drive an output port.
    #[error("port `{0}` is an output and cannot be driven")]
    NotAnInput(String),
    /// Tracing requested on a model built without `trace: true`, or no trace open.
    #[error("tracing: {0}")]
    Trace(String),
    /// The simulation raised a fatal error (`$fatal`, internal Verilator error).
    #[error("simulation fatal error: {0}")]
    Sim(String),
}

impl CosimError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        CosimError::Io {
            context: context.into(),
            source,
        }
    }
}
