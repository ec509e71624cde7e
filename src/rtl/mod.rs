//! rtl
