//! Hardware generators, one file per algorithm (same names as [`crate::model`]):
//! parameters in, checked [`crate::hdl::Module`] out.

pub mod zvc;
