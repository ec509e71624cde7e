//! The main job end to end and the X-initialisation check, in one test binary: both build
//! every unit's model at `-O0` (`hwzip::cosim::set_opt_level(0)`, process-wide), the second
//! reusing the first's builds, and the test harness runs them side by side. The other
//! integration tests (`tests/integration/`) build models under the size rule instead, and
//! the fuzz test (`tests/fuzz.rs`) installs a counting allocator, so each has a binary of
//! its own.

#[path = "../common/mod.rs"]
mod common;

mod flow;
mod x_init;
