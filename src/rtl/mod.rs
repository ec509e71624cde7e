//! Hardware generators, one file per algorithm (same names as [`crate::model`]):
//! parameters in, checked [`crate::hdl::Module`] out. The engines that group them into units
//! are in `crate::engines`.

pub mod adaptive;
pub mod adaptive_ctrl;
pub mod base_xor;
pub mod bdi;
pub mod bpc;
pub mod buddy;
pub mod cache;
pub mod cpack;
pub mod cpack_lossy;
pub mod dbi;
pub mod designs;
pub mod fpc;
pub mod line_codec;
pub mod link;
pub mod zvc;
