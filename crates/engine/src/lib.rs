//! The process engine of neurolink-commands.
//!
//! Plain Rust with no napi types: validation, the cwd sandbox, spawning,
//! supervision, capture to log files, UTF-8 → UTF-16 paging, the job registry
//! and the built-in artifact bank. The napi crate at the repository root only
//! converts JS values to and from these types.
//!
//! The flow of one command: [`commands::start`] runs the [`policy`] and
//! [`sandbox`] checks, creates the logs and the [`registry`] entry, and hands
//! the command to a [`supervisor`] task, which [`spawn`]s it, copies its pipes
//! through [`capture`], runs its timers, stops its process group and finally
//! [`bank`]s both streams. Reads go through the registry and [`paging`] /
//! [`text`] over the log files, never through the supervisor.

pub mod bank;
pub mod capture;
pub mod commands;
pub mod errors;
pub mod git;
pub mod gitrun;
pub mod intern;
pub mod paging;
mod platform;
pub mod policy;
pub mod record;
pub mod registry;
pub mod runtime;
pub mod sandbox;
pub mod signals;
pub mod spawn;
pub mod supervisor;
pub mod text;
pub mod watchdog;
