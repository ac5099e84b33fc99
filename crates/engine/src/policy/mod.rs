//! What a start request may ask for: the command policy a host declared
//! ([`validate`]) and the working directory inside the permitted root
//! ([`cwd`]). Both run before anything is created or spawned; a refusal
//! here leaves no trace.

pub mod confine;
#[cfg(unix)]
pub mod cwd;
#[cfg(windows)]
#[path = "cwd_windows.rs"]
pub mod cwd;
pub mod limits;
pub mod numbers;
pub mod validate;

pub use crate::errors::js_number;
pub use numbers::*;
pub use validate::*;
