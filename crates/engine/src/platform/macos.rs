//! The macOS side of the engine's platform code.
//!
//! - [`spawn`]: posix_spawn itself (a system call on macOS, so exec errors
//!   come back as errors): its own process group, stdin from /dev/null, both
//!   streams piped, signals reset to their defaults, every other descriptor
//!   closed (`POSIX_SPAWN_CLOEXEC_DEFAULT`), and the working directory entered
//!   through the held descriptor (`posix_spawn_file_actions_addfchdir_np`),
//!   so a path swapped after the sandbox check cannot move the child.
//! - [`exit_watch`]: a kqueue with an `EVFILT_PROC`/`NOTE_EXIT` filter for
//!   one pid, which becomes readable once that process has exited.
//! - [`fd_path`]: the real path of a held directory, from `F_GETPATH`.

use std::ffi::{CString, OsStr};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;

use crate::sandbox::HeldDir;
use crate::spawn::Spawned;

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
    // SAFETY: kqueue(2) takes no arguments; the descriptor is owned below.
    let kq = unsafe { libc::kqueue() };
    if kq < 0 {
        return None;
    }
    // SAFETY: `kq` was just returned by kqueue(2) and is owned by nobody else.
    let kq = unsafe { OwnedFd::from_raw_fd(kq) };
    cloexec(kq.as_raw_fd()).ok()?;
    // SAFETY: kevent is plain data; every field is set below.
    let mut ev: libc::kevent = unsafe { std::mem::zeroed() };
    ev.ident = pid as libc::uintptr_t;
    ev.filter = libc::EVFILT_PROC;
    ev.flags = libc::EV_ADD | libc::EV_CLEAR;
    ev.fflags = libc::NOTE_EXIT;
    // SAFETY: one valid change record in, no event list out, no timeout needed.
    let r = unsafe { libc::kevent(kq.as_raw_fd(), &ev, 1, ptr::null_mut(), 0, ptr::null()) };
    if r < 0 {
        return None;
    }
    Some(kq)
}

fn cloexec(fd: i32) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own, with integer arguments.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A pipe whose ends are close-on-exec (macOS has no pipe2), read end first.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) returns.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just returned by pipe(2) and are owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    cloexec(r.as_raw_fd())?;
    cloexec(w.as_raw_fd())?;
    Ok((r, w))
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(r: i32) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
}

/// posix_spawn's file actions and attributes, destroyed when dropped.
struct Plan {
    actions: libc::posix_spawn_file_actions_t,
    attr: libc::posix_spawnattr_t,
}

impl Plan {
    fn new() -> io::Result<Self> {
        let mut actions = MaybeUninit::uninit();
        let mut attr = MaybeUninit::uninit();
        // SAFETY: the init functions fill the uninitialised values they are given.
        unsafe {
            check(libc::posix_spawn_file_actions_init(actions.as_mut_ptr()))?;
            if let Err(e) = check(libc::posix_spawnattr_init(attr.as_mut_ptr())) {
                libc::posix_spawn_file_actions_destroy(actions.as_mut_ptr());
                return Err(e);
            }
            Ok(Plan {
                actions: actions.assume_init(),
                attr: attr.assume_init(),
            })
        }
    }
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: both were initialised in `new` and are destroyed once.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
            libc::posix_spawnattr_destroy(&mut self.attr);
        }
    }
}

/// Start `program` with `argv` (argv[0] kept as given) in `dir`; `env`
/// replaces the environment when given.
pub fn spawn(
    program: &Path,
    argv: &[String],
    dir: &HeldDir,
    env: Option<&[(String, String)]>,
) -> io::Result<Spawned> {
    let path = cstring(program.as_os_str().as_bytes())?;
    let args = argv
        .iter()
        .map(|a| cstring(a.as_bytes()))
        .collect::<io::Result<Vec<_>>>()?;
    let vars: Vec<CString> = match env {
        Some(e) => e
            .iter()
            .map(|(k, v)| cstring(format!("{k}={v}").as_bytes()))
            .collect::<io::Result<_>>()?,
        None => std::env::vars_os()
            .map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                cstring(&kv)
            })
            .collect::<io::Result<_>>()?,
    };
    let mut arg_ptrs: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr() as *mut _).collect();
    arg_ptrs.push(ptr::null_mut());
    let mut env_ptrs: Vec<*mut libc::c_char> = vars.iter().map(|v| v.as_ptr() as *mut _).collect();
    env_ptrs.push(ptr::null_mut());

    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let dev_null = c"/dev/null";
    let mut plan = Plan::new()?;
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer handed to the posix_spawn functions points into
    // values that outlive the call (`plan`, the CStrings and their pointer
    // vectors, the pipe descriptors, the held directory); the signal sets are
    // initialised by sigemptyset/sigfillset before use.
    unsafe {
        let a = &mut plan.actions;
        check(libc::posix_spawn_file_actions_addopen(
            a,
            0,
            dev_null.as_ptr(),
            libc::O_RDONLY,
            0,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(
            a,
            out_w.as_raw_fd(),
            1,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(
            a,
            err_w.as_raw_fd(),
            2,
        ))?;
        check(libc::posix_spawn_file_actions_addfchdir_np(
            a,
            dir.fd.as_raw_fd(),
        ))?;

        let attr = &mut plan.attr;
        let mut none: libc::sigset_t = std::mem::zeroed();
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigfillset(&mut all);
        check(libc::posix_spawnattr_setsigmask(attr, &none))?;
        check(libc::posix_spawnattr_setsigdefault(attr, &all))?;
        check(libc::posix_spawnattr_setpgroup(attr, 0))?;
        let flags = libc::POSIX_SPAWN_SETPGROUP
            | libc::POSIX_SPAWN_SETSIGMASK
            | libc::POSIX_SPAWN_SETSIGDEF
            | libc::POSIX_SPAWN_CLOEXEC_DEFAULT;
        check(libc::posix_spawnattr_setflags(attr, flags as libc::c_short))?;

        check(libc::posix_spawn(
            &mut pid,
            path.as_ptr(),
            &plan.actions,
            &plan.attr,
            arg_ptrs.as_ptr(),
            env_ptrs.as_ptr(),
        ))?;
    }
    drop(out_w);
    drop(err_w);
    Ok(Spawned {
        pid,
        stdout: out_r,
        stderr: err_r,
    })
}
