//! hdl
