//! One operating-system process and its group: how it is started
//! ([`spawn`], after the [`transform`] hook), how its group is signalled
//! ([`signals`]) and how it is stopped when the host itself dies
//! ([`watchdog`]). Nothing here knows about jobs, logs or hosts.

pub mod confine;
pub mod posix_spawn;
#[cfg(target_os = "linux")]
pub mod sandbox;
pub mod signals;
pub mod spawn;
pub mod transform;
#[cfg(target_os = "linux")]
pub mod vfork;
pub mod watchdog;

/// `start`, again while it fails with ETXTBSY: a script a test has just
/// written can be "busy" for a moment, because a child another test thread
/// created while the script was open for writing holds a copy of that
/// descriptor until its own exec — for long under qemu-user, where the
/// clone is a fork. Any other outcome is returned as it is.
#[cfg(test)]
pub(crate) fn unless_busy<T>(mut start: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    for _ in 0..200 {
        match start() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(25))
            }
            r => return r,
        }
    }
    start()
}
