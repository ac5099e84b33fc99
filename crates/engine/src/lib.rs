//! The process engine of neurolink-commands.
//!
//! Plain Rust with no napi types: validation, the cwd sandbox, spawning,
//! supervision, capture to log files, UTF-8 → UTF-16 paging, the job registry
//! and the built-in artifact bank. The napi crate at the repository root only
//! converts JS values to and from these types.

pub mod git;
pub mod text;
