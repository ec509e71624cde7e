//! Typed RTL builder: hardware as Rust values.
//!
//! Parameters are plain Rust values, so loops, derived widths (`clog2(n) + 1`), triangular
//! networks and per-lane arrays are ordinary Rust. A [`ModuleBuilder`] collects ports, wires,
//! registers, memories and instances; [`ModuleBuilder::finish`] checks every width and every
//! driver and returns an immutable [`Module`]. [`emit::emit_design`] writes Verilog-2005, one
//! file per module; [`sim::Sim`] interprets the same netlist natively.
//!
//! ```
//! use hwzip::hdl::{ModuleBuilder, Expr, emit};
//! let mut m = ModuleBuilder::new("adder_w8");
//! let a = m.input("a_i", 8);
//! let b = m.input("b_i", 8);
//! let sum = m.reg_next("sum_q", Some(0), &(&a + &b), None);
//! m.output_expr("sum_o", &sum);
//! let module = m.finish().unwrap();
//! let files = emit::emit_design(&module).unwrap();
//! assert!(files[0].1.contains("assign sum_d = (a_i + b_i);"));
//! assert!(files[0].1.contains("sum_q <= sum_d;"));
//! # let _ = Expr::lit(1, 0);
//! ```

pub mod bits;
pub mod blocks;
pub mod cond;
pub mod emit;
pub mod expr;
pub mod layout;
pub mod module;
pub mod pipe;
pub mod pretty;
pub mod ram;
pub mod sim;
pub mod stream;

pub use bits::Bits;
pub use blocks::PrefixTopology;
pub use cond::{Fsm, When};
pub use expr::Expr;
pub use layout::{Field, Layout};
pub use module::StreamPorts;
pub use module::{clog2, Dir, HdlError, Inst, Mem, Module, ModuleBuilder, Net, PortInfo, Reg};
pub use pipe::{Pipeline, Policy, Stage};
pub use stream::Stream;

#[cfg(test)]
mod array_tests;
#[cfg(test)]
mod pipe_tests;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;
