//! The napi glue: value conversion in and out.

pub mod convert;
pub mod inputs;
pub mod outputs;
pub mod confine;
