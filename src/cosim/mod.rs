//! cosim
