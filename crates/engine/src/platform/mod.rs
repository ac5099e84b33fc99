//! What differs between the kernels the engine runs on. Linux enters and
//! names a held directory through `/proc/self/fd`, watches an exit through a
//! pidfd and spawns through `std::process::Command` (posix_spawn on glibc and
//! musl); macOS has no `/proc` and no pidfd, so [`macos`] spawns with its own
//! posix_spawn (entering the directory with `addfchdir_np`), names the
//! directory with `F_GETPATH` and watches exits with kqueue.

use std::io;
use std::os::fd::BorrowedFd;
use std::path::PathBuf;

#[cfg(target_os = "macos")]
pub mod macos;

/// The real path of an open directory, as the kernel reports it for the descriptor.
#[cfg(target_os = "linux")]
pub fn fd_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// The real path of an open directory, as the kernel reports it for the descriptor.
#[cfg(target_os = "macos")]
pub fn fd_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
    macos::fd_path(fd)
}
