//! The macOS side of the engine's platform code (see the parent module).
//!
//! - [`spawn_piped`]: posix_spawn itself (a system call on macOS, so exec
//!   errors come back as errors and every attribute is applied before the
//!   call returns): its own process group, stdin from /dev/null or a pipe,
//!   both streams piped, every signal at its default and none blocked, every
//!   other descriptor closed (`POSIX_SPAWN_CLOEXEC_DEFAULT`), and the
//!   working directory entered through the held descriptor
//!   (`posix_spawn_file_actions_addfchdir_np`), so a path swapped after the
//!   cwd check cannot move the child.
//! - [`exit_watch`]: a kqueue with an `EVFILT_PROC` / `NOTE_EXIT` filter for
//!   one pid, readable once that process has exited.
//! - [`fd_path`]: the real path of a held directory, from `F_GETPATH`.
//! - [`start_time`]: `proc_pidinfo(PROC_PIDTBSDINFO)`'s start time.
//! - [`file_id`]: `fstat`'s device, inode and `st_birthtime`.

use std::ffi::{CStr, CString, OsStr};
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

/// A pipe whose ends are close-on-exec (macOS has no pipe2), read end first.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) returns.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just returned by pipe(2) and are owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    rustix::io::fcntl_setfd(&r, rustix::io::FdFlags::CLOEXEC)?;
    rustix::io::fcntl_setfd(&w, rustix::io::FdFlags::CLOEXEC)?;
    Ok((r, w))
}

fn check(r: i32) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
}

/// A started piped process: its pid and the parent's ends of its pipes.
pub struct Piped {
    /// Its pid, which is also its process group id.
    pub pid: i32,
    /// The write end of its stdin pipe, if it reads one.
    pub stdin: Option<OwnedFd>,
    /// The read end of its stdout pipe.
    pub stdout: OwnedFd,
    /// The read end of its stderr pipe.
    pub stderr: OwnedFd,
}

/// A NULL-terminated array of pointers into `strings` (which must outlive it).
fn pointers(strings: &[CString]) -> Vec<*mut libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr().cast_mut())
        .chain(std::iter::once(ptr::null_mut()))
        .collect()
}

/// Start `program` (looked up in the host's PATH when `search` is set) with
/// `argv` and `envp` in the directory open at `dir`, as described in the
/// module's documentation.
pub fn spawn_piped(
    program: &CStr,
    search: bool,
    argv: &[CString],
    envp: &[CString],
    dir: BorrowedFd<'_>,
    stdin_pipe: bool,
) -> io::Result<Piped> {
    let argv = pointers(argv);
    let envp = pointers(envp);
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let stdin = if stdin_pipe { Some(pipe()?) } else { None };
    let spawn_fn = if search {
        libc::posix_spawnp
    } else {
        libc::posix_spawn
    };
    let flags = libc::POSIX_SPAWN_SETPGROUP
        | libc::POSIX_SPAWN_SETSIGMASK
        | libc::POSIX_SPAWN_SETSIGDEF
        | libc::POSIX_SPAWN_CLOEXEC_DEFAULT;
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer handed to libc points at memory that lives until
    // the block ends: `attr`, `actions` and the signal sets are locals
    // initialised by their `*_init` / `sig*set` call before any other use and
    // destroyed exactly once, after the spawn, whatever failed; `program` and
    // the strings behind `argv` / `envp` are NUL-terminated and both pointer
    // arrays end with NULL; the pipe ends and `dir` are open descriptors
    // borrowed for the call. The child runs no Rust code.
    let rc = unsafe {
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut no_signals: libc::sigset_t = std::mem::zeroed();
        let mut every_signal: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut no_signals);
        libc::sigfillset(&mut every_signal);
        libc::sigdelset(&mut every_signal, libc::SIGKILL);
        libc::sigdelset(&mut every_signal, libc::SIGSTOP);
        let mut rc = libc::posix_spawnattr_init(&mut attr);
        if rc == 0 {
            rc = libc::posix_spawn_file_actions_init(&mut actions);
            if rc == 0 {
                macro_rules! step {
                    ($call:expr) => {
                        if rc == 0 {
                            rc = $call;
                        }
                    };
                }
                step!(libc::posix_spawnattr_setflags(&mut attr, flags as _));
                step!(libc::posix_spawnattr_setpgroup(&mut attr, 0));
                step!(libc::posix_spawnattr_setsigmask(&mut attr, &no_signals));
                step!(libc::posix_spawnattr_setsigdefault(
                    &mut attr,
                    &every_signal
                ));
                match &stdin {
                    Some((r, _)) => {
                        step!(libc::posix_spawn_file_actions_adddup2(
                            &mut actions,
                            r.as_raw_fd(),
                            0
                        ))
                    }
                    None => step!(libc::posix_spawn_file_actions_addopen(
                        &mut actions,
                        0,
                        c"/dev/null".as_ptr(),
                        libc::O_RDONLY,
                        0
                    )),
                }
                step!(libc::posix_spawn_file_actions_adddup2(
                    &mut actions,
                    out_w.as_raw_fd(),
                    1
                ));
                step!(libc::posix_spawn_file_actions_adddup2(
                    &mut actions,
                    err_w.as_raw_fd(),
                    2
                ));
                step!(libc::posix_spawn_file_actions_addfchdir_np(
                    &mut actions,
                    dir.as_raw_fd()
                ));
                step!(spawn_fn(
                    &mut pid,
                    program.as_ptr(),
                    &actions,
                    &attr,
                    argv.as_ptr(),
                    envp.as_ptr()
                ));
                libc::posix_spawn_file_actions_destroy(&mut actions);
            }
            libc::posix_spawnattr_destroy(&mut attr);
        }
        rc
    };
    check(rc)?;
    Ok(Piped {
        pid,
        stdin: stdin.map(|(_, w)| w),
        stdout: out_r,
        stderr: err_r,
    })
}
