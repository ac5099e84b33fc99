//! One operating-system process and its group: how it is started
//! ([`spawn`], after the [`transform`] hook), how its group is signalled
//! ([`signals`]) and how it is stopped when the host itself dies
//! ([`watchdog`]). Nothing here knows about jobs, logs or hosts.

pub mod confine;
pub mod posix_spawn;
pub mod signals;
pub mod spawn;
pub mod transform;
#[cfg(target_os = "linux")]
pub mod vfork;
pub mod watchdog;
