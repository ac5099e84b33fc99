//! The napi glue: value conversion in and out.

pub mod artifacts;
pub mod confine;
pub mod convert;
pub mod factory;
pub mod git;
pub mod input;
pub mod inputs;
pub mod limits;
pub mod output;
pub mod outputs;
pub mod panic;
pub mod plain;
pub mod recover;
pub mod tools;
