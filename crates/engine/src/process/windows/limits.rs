//! Resource limits on Windows: not enforced yet, so every limited start is
//! refused (`NLC_LIMIT_UNAVAILABLE`) rather than run unlimited. A Job
//! Object could hold memory, process-count and CPU-time limits for the
//! whole tree; until the engine sets them, these stand in for the cgroup
//! file access of the parent module, which nothing reaches here (no
//! command has a cgroup).

use std::path::Path;

use super::Place;
use crate::platform::BorrowedFd;

/// Why a limit cannot be enforced on Windows.
pub const NO_CGROUP: &str = "resource limits are not enforced on Windows yet (no Job Object limits are set), so a limited start is refused rather than run unlimited; leave limits out to run without them";

fn unsupported() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Unsupported, NO_CGROUP)
}

/// Attached to no cgroup here (none exists); the parent's code attaches it.
impl crate::process::cgroup::Attached for super::Enforced {}

/// Nothing to sweep: no cgroup v1 hierarchy exists.
pub fn sweep_stale_v1(_home: &Path) {}

/// No cgroup v1 directory can be made.
pub fn v1_place(_controller: &'static str) -> std::io::Result<Place> {
    Err(unsupported())
}

/// No cgroup file can be written.
pub fn write_at(_dir: BorrowedFd<'_>, _name: &str, _value: &str) -> std::io::Result<()> {
    Err(unsupported())
}

/// No cgroup file can be read.
pub fn read_at(_dir: BorrowedFd<'_>, _name: &str) -> Option<String> {
    None
}
