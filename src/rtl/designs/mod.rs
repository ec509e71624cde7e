//! Design factories: per engine, its units (the names the CLI and the reports use) and the
//! generator that builds each one's top module. Co-simulation, synthesis and `gen` all take
//! their designs from here.

pub mod adaptive;
pub mod base_xor;
pub mod buddy;
pub mod cpack_lossy;
pub mod zvc;

/// The unit of `all` called `s`; the error lists the known names.
pub fn unit_by_name<U: Copy>(all: &[U], name: fn(U) -> &'static str, s: &str) -> Result<U, String> {
    crate::files::by_name("unit", all, name, s)
}
