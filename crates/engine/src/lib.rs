//! The process engine of neurolink-commands.
//!
//! Plain Rust with no napi types: validation, the cwd check, spawning,
//! supervision, capture to log files, UTF-8 → UTF-16 paging, the job registry
//! and the built-in artifact bank. The napi crate at the repository root only
//! converts JS values to and from these types.
//!
//! # Layers
//!
//! The top-level modules form layers; each imports only from the layers
//! below it, and so do the files inside each (`crates/engine/tests/layers.rs`
//! fails on an import circle between any two modules, `super::` included):
//!
//! ```text
//! engine    the engine value: what one engine owns, its shutdown and drop
//! tools     the model-facing tools' contract: specs, schemas, limits, param checks
//! git       the read-only git toolset: argument checks, hardening, runs
//!  └ jobs   commands (the API verbs) → supervisor → bank → registry → record
//!     ├ policy    the start checks (validate) and the cwd check (cwd)
//!     │  └ errors   every refusal and its message
//!     ├ process   spawn (after the transform hook), signals, watchdog: the OS only
//!     ├ text      capture of pipes into logs, UTF-8 → UTF-16 decoding, paging
//!     └ runtime, intern
//! platform  what differs between Linux, macOS and Windows (below every layer)
//! process_wide  what stays process-wide, each with why (below every layer)
//! ```
//!
//! Every verb takes an [`Engine`] (made by [`Engine::new`]); no module
//! keeps per-engine state in a `static`.
//!
//! `errors` names the signals in a refusal, so it sits above `process`,
//! which imports nothing from the crate but `platform`. Inside `jobs` the arrows run one
//! way too: the supervisor's mailbox type lives in [`jobs::control`], below
//! both the record and the supervisor. Every lock goes through [`sync`],
//! so a panic cannot poison it for everyone after.
//!
//! The flow of one command: [`jobs::commands::start`] runs the
//! [`policy::validate`] and [`policy::cwd`] checks, creates the logs and the
//! [`jobs::registry`] entry, and hands the command to a [`jobs::supervisor`]
//! task, which passes it through [`process::transform`] and
//! [`process::spawn`]s it, copies its pipes through [`text::capture`], runs
//! its timers, stops its process group and finally [`jobs::bank`]s both
//! streams. Reads go through the registry and [`text::paging`] /
//! [`text::decode`] over the log files, never through the supervisor.

pub mod engine;
pub mod errors;
pub mod git;
pub mod intern;
pub mod jobs;
mod platform;
pub mod policy;
pub mod process;
pub mod process_wide;
pub mod runtime;
pub mod sync;
pub mod text;
pub mod tools;

// The paths the napi crate and the tests have always used.
pub use engine::{Engine, EngineConfig};
pub use git::run as gitrun;
pub use jobs::{bank, commands, record, registry, supervisor};
pub use process::{signals, spawn, watchdog};
pub use text::{capture, paging};
