//! The commands of the process, read top-down:
//!
//! - [`commands`]: the API verbs (start, status, list, read, kill, wait).
//! - [`supervisor`]: one task per running command, owning its pipes, timers
//!   and group, taking [`supervisor::Control`] messages.
//! - [`bank`]: settles a finished command's streams into artifacts.
//! - [`state`]: what one engine owns: registry, gate, host waits, spares.
//! - [`registry`]: every host and command of an engine.
//! - [`record`]: one command's shared state, which every module above reads.
//! - [`ids`]: how a task id is spelled from its counter.
//! - [`spare`]: log directories made ahead of the starts that take them.
//! - [`input`]: a command's input (pipe or terminal) as the record keeps it.

pub mod bank;
pub mod catch_panic;
pub mod commands;
pub mod control;
pub mod gate;
pub mod host_waits;
pub mod ids;
pub mod input;
pub mod launch;
pub mod manifest;
pub mod private_tmp;
mod process_start;
pub mod record;
#[cfg(unix)]
pub mod recover;
#[cfg(windows)]
#[path = "recover_windows.rs"]
pub mod recover;
pub mod registry;
pub mod retention;
pub mod running_input;
mod settle;
pub mod spare;
pub mod state;
pub mod supervisor;
pub mod waits;

#[cfg(test)]
mod panic_tests;
