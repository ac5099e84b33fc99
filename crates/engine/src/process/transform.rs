//! The spawn-time transform: the one place between the checks and
//! [`spawn`](super::spawn::spawn) where a start request may be rewritten
//! into what is actually executed.
//!
//! Theory of operation: by the time a command reaches here, the policy and
//! cwd checks have passed on the argv the caller gave, so everything the
//! caller is told (refusals, `command` in a status) speaks of that argv. A
//! transform may then wrap it — a confinement launcher that applies a kernel
//! sandbox before exec, a terminal allocator — without the checks seeing the
//! wrapper and without the wrapper bypassing them. It must keep the shape
//! spawn relies on: no shell, posix_spawn (no `pre_exec`, no fork of the
//! host), the leader as its group's id. A confined start (SPEC §8) spawns
//! through [`confine::spawn_detached`](super::confine::spawn_detached); otherwise the request
//! passes through unchanged.

pub use super::launch::Request;
use super::spawn::Spawned;

/// Spawn an unconfined start (a terminal or pipes). A confined start is
/// handed to [`confine::spawn_detached`](super::confine::spawn_detached) by
/// the supervisor instead, with the same checks passed and the same gate
/// held around its spawn.
///
/// Under `NEUROLINK_COMMANDS_STANDARD_PATHS=1` a start not on a terminal
/// takes the standard spawn instead ([`super::std_spawn`]).
pub fn spawn(launch: Request<'_>) -> std::io::Result<Spawned> {
    #[cfg(target_os = "linux")]
    if super::std_spawn::takes(&launch) {
        return super::std_spawn::spawn(&launch);
    }
    super::spawn::spawn(&launch)
}
