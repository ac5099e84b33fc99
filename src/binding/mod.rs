//! The napi glue: value conversion in and out.

pub mod confine;
pub mod convert;
pub mod factory;
pub mod input;
pub mod inputs;
pub mod limits;
pub mod outputs;
pub mod recover;
