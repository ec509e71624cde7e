//! The integration tests that drive the `hwzip` binary or check the repository as a whole,
//! in one test binary: one link instead of ten, and the test harness runs them side by side
//! (most wait on a child process or run single-threaded). The main-job test and the
//! X-initialisation test (`tests/main_job/`) set the process-wide model optimisation level
//! and share a binary of their own, as the fuzz test (it installs a counting global
//! allocator) has one.
//!
//! Only `reset_mid_stream` builds Verilator models in this process; it sets the size rule
//! (`hwzip::cosim::set_opt_level_by_size`) for the whole binary.

#[path = "../common/mod.rs"]
mod common;

mod architecture;
mod bad_input;
mod cli;
mod cli_usage;
mod flow_failures;
mod fusesoc;
mod report_html;
mod reset_mid_stream;
mod rtl_out;
mod shards;
mod signals;
