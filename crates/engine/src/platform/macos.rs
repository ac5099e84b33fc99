//! The macOS side of the engine's platform code (see the parent module).
//!
//! - [`exit_watch`]: a kqueue with an `EVFILT_PROC` / `NOTE_EXIT` filter for
//!   one pid, readable once that process has exited.
//! - [`fd_path`]: the real path of a held directory, from `F_GETPATH`.
//! - [`start_time`]: `proc_pidinfo(PROC_PIDTBSDINFO)`'s start time.
//! - [`file_id`]: `fstat`'s device, inode and `st_birthtime`.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::ptr;

/// The real path of the directory open at `fd`.
pub fn fd_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
    let mut buf = vec![0u8; libc::MAXPATHLEN as usize];
    // SAFETY: F_GETPATH writes at most MAXPATHLEN bytes, NUL included, into `buf`.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPATH, buf.as_mut_ptr()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let len = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    buf.truncate(len);
    Ok(PathBuf::from(OsStr::from_bytes(&buf)))
}

/// A kqueue that becomes readable once `pid` has exited (`None` if the
/// process is already gone or kqueue fails: the caller then waits on a thread).
pub fn exit_watch(pid: i32) -> Option<OwnedFd> {
    // SAFETY: kqueue(2) takes no arguments.
    let kq = unsafe { libc::kqueue() };
    if kq < 0 {
        return None;
    }
    // SAFETY: `kq` was just returned by kqueue(2) and is owned by nobody else.
    let kq = unsafe { OwnedFd::from_raw_fd(kq) };
    rustix::io::fcntl_setfd(&kq, rustix::io::FdFlags::CLOEXEC).ok()?;
    // SAFETY: kevent is plain data; every field that matters is set below.
    let mut ev: libc::kevent = unsafe { std::mem::zeroed() };
    ev.ident = pid as libc::uintptr_t;
    ev.filter = libc::EVFILT_PROC;
    ev.flags = libc::EV_ADD | libc::EV_CLEAR;
    ev.fflags = libc::NOTE_EXIT;
    // SAFETY: one valid change record in, no event list out, no timeout needed.
    let r = unsafe { libc::kevent(kq.as_raw_fd(), &ev, 1, ptr::null_mut(), 0, ptr::null()) };
    (r >= 0).then_some(kq)
}

/// When `pid` started (µs since the epoch), if it exists.
pub fn start_time(pid: i32) -> Option<u64> {
    // SAFETY: proc_bsdinfo is plain data, filled by proc_pidinfo.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` has room for the `size` bytes PROC_PIDTBSDINFO writes.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    (n == size).then(|| info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec)
}

/// (device, inode, birth time in ns) of an open file.
pub fn file_id(fd: BorrowedFd<'_>) -> io::Result<(u64, u64, u64, u64)> {
    // SAFETY: `st` is plain data that fstat(2) fills for an open descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let born = (st.st_birthtime as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(st.st_birthtime_nsec as u64);
    Ok((st.st_dev as u64, st.st_ino, born, st.st_size as u64))
}
