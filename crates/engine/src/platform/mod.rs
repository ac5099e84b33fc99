//! What differs between the kernels the engine runs on, below every other
//! layer (it imports nothing from the crate).
//!
//! Linux names a held directory through `/proc/self/fd`, watches an exit
//! through a pidfd, reads a process's start time from `/proc/<pid>/stat` and
//! a file's birth time with `statx`. macOS has no `/proc`, no pidfd and no
//! `statx`: [`macos`] names the directory with `F_GETPATH`, watches exits
//! with a kqueue `EVFILT_PROC` filter, reads the start time with
//! `proc_pidinfo` and the birth time from `fstat`'s `st_birthtime`, and
//! starts piped commands with its own posix_spawn (entering the held
//! directory with `posix_spawn_file_actions_addfchdir_np`).
//!
//! Windows has neither descriptors nor signals: [`windows`] holds its
//! handles under the names shared code uses for descriptors (`OwnedFd`,
//! `BorrowedFd`, `AsFd`), its pipes, and the POSIX signal numbers the
//! engine speaks (`libc`); a command's Job Object is the Windows spawn's
//! (`process::spawn`, SPEC §14).

#[cfg(unix)]
use std::io;
#[cfg(unix)]
pub use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
#[cfg(unix)]
use std::path::PathBuf;

#[cfg(target_os = "macos")]
pub mod macos;
#[cfg(windows)]
pub mod windows;
#[cfg(windows)]
pub use windows::{file_id, start_time, AsFd, AsRawFd, BorrowedFd, OwnedFd};

/// Reads at an offset without moving a shared cursor: `std`'s `FileExt`
/// on Unix, `seek_read` on Windows (each read opens its own handle).
#[cfg(unix)]
pub use std::os::unix::fs::FileExt;
/// Paths as bytes, permission bits and file-type bits: `std`'s on Unix,
/// their Windows equivalents in [`windows`].
#[cfg(unix)]
pub use std::os::unix::{ffi::OsStrExt, fs::MetadataExt, fs::PermissionsExt};
#[cfg(windows)]
pub use windows::FileExt;
#[cfg(windows)]
pub use windows::{MetadataExt, OsStrExt};

/// A file's identity on disk and its length: (device, inode, birth time in
/// ns — 0 where the filesystem keeps none, length in bytes).
#[cfg(unix)]
pub type FileId = (u64, u64, u64, u64);

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

/// A descriptor that becomes readable once `pid` (a child of ours) has
/// exited: a pidfd on Linux (≥ 5.3), a kqueue on macOS. `None` when there is
/// none; the caller then waits on a thread.
#[cfg(target_os = "linux")]
pub fn exit_watch(pid: i32) -> Option<OwnedFd> {
    let pid = rustix::process::Pid::from_raw(pid)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// A descriptor that becomes readable once `pid` (a child of ours) has
/// exited: a pidfd on Linux (≥ 5.3), a kqueue on macOS. `None` when there is
/// none; the caller then waits on a thread.
#[cfg(target_os = "macos")]
pub fn exit_watch(pid: i32) -> Option<OwnedFd> {
    macos::exit_watch(pid)
}

/// A process's start time, in a unit fixed for this kernel (clock ticks
/// since boot on Linux, µs since the epoch on macOS), if it exists.
///
/// Linux reads field 22 of the main thread's `/proc/<pid>/task/<pid>/stat`,
/// the same number as the process's `/proc/<pid>/stat` — but qemu-user
/// fakes a process's own `/proc/<pid>/stat` with a start time of its
/// own reckoning (a few ticks off), so a marker an emulated host wrote for
/// itself would read as dead to every other process, whose sweep would then
/// remove that host's live logs. The task path reaches the kernel's file.
#[cfg(target_os = "linux")]
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A process's start time, in a unit fixed for this kernel (clock ticks
/// since boot on Linux, µs since the epoch on macOS), if it exists.
#[cfg(target_os = "macos")]
pub fn start_time(pid: i32) -> Option<u64> {
    macos::start_time(pid)
}

/// The identity of an open file (see [`FileId`]).
#[cfg(target_os = "linux")]
pub fn file_id(fd: impl AsFd) -> io::Result<FileId> {
    use rustix::fs as rfs;
    let x = rfs::statx(
        &fd,
        "",
        rfs::AtFlags::EMPTY_PATH,
        rfs::StatxFlags::INO | rfs::StatxFlags::BTIME | rfs::StatxFlags::SIZE,
    )?;
    let dev = (u64::from(x.stx_dev_major) << 32) | u64::from(x.stx_dev_minor);
    let born = if x.stx_mask & rfs::StatxFlags::BTIME.bits() != 0 {
        (x.stx_btime.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(u64::from(x.stx_btime.tv_nsec))
    } else {
        0
    };
    Ok((dev, x.stx_ino, born, x.stx_size))
}

/// The identity of an open file (see [`FileId`]).
#[cfg(target_os = "macos")]
pub fn file_id(fd: impl AsFd) -> io::Result<FileId> {
    macos::file_id(fd.as_fd())
}
