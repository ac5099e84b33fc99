//! The engine's own posix_spawn, for the start `std::process::Command`
//! cannot express: a new session whose controlling terminal is a
//! pseudo-terminal. macOS starts every command through it; Linux through
//! the clone-based spawn ([`super::vfork`]).
//!
//! Theory of operation: glibc's posix_spawn creates the child with
//! `CLONE_VM | CLONE_VFORK` (no copy of the host's memory, no fork) and, in
//! the child, applies the attributes before the file actions: first
//! `setsid()` (`POSIX_SPAWN_SETSID`, glibc ≥ 2.26), so the child leads a new
//! session and a new process group whose id is its pid; then the file
//! actions in order — enter the held directory by descriptor
//! (`posix_spawn_file_actions_addfchdir_np`, glibc ≥ 2.29; the same call
//! exists on macOS), open the terminal's slave as fd 0 (a session leader
//! without a controlling terminal that opens a terminal without `O_NOCTTY`
//! acquires it as its controlling terminal on Linux), and copy it to fd 1
//! and fd 2. Every signal gets its default action and the mask is emptied
//! (the host may ignore SIGPIPE or SIGINT; the command must not inherit
//! that). Exec failures (ENOENT, EACCES, …) come back as the call's error.
//! No `pre_exec` hook and no code of ours runs in the child.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::raw::c_char;

/// `POSIX_SPAWN_SETSID` (the libc crate names it for Linux only; macOS
/// ≥ 10.15 has the flag with this value). On macOS every descriptor not
/// named by a file action is closed as well (`POSIX_SPAWN_CLOEXEC_DEFAULT`).
#[cfg(target_os = "linux")]
const SETSID: libc::c_short = libc::POSIX_SPAWN_SETSID as libc::c_short;
#[cfg(target_os = "macos")]
const SETSID: libc::c_short = 0x0400 | libc::POSIX_SPAWN_CLOEXEC_DEFAULT as libc::c_short;

/// The flags of a piped start: a session of its own, as a terminal start
/// (and, on macOS, every descriptor not named by a file action closed).
const PIPED_FLAGS: libc::c_short = SETSID;

/// What one terminal start needs, already in C form.
pub struct TerminalSpawn<'a> {
    /// The path to execute, or the bare name to look up in the host's PATH
    /// when `search` is set.
    pub program: &'a CStr,
    /// Look `program` up in the host's PATH (posix_spawnp).
    pub search: bool,
    /// argv, argv[0] included.
    pub argv: &'a [CString],
    /// The environment, `NAME=value` each.
    pub envp: &'a [CString],
    /// The directory to enter.
    pub dir: BorrowedFd<'a>,
    /// The path of the terminal's slave side (`/dev/pts/N`).
    pub slave: &'a CStr,
}

/// A NULL-terminated array of pointers into `strings` (which must outlive it).
pub fn pointers(strings: &[CString]) -> Vec<*mut c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect()
}

/// One file action, applied in the child in order before the exec.
pub enum FileAction<'a> {
    /// Enter the directory open at this descriptor (`addfchdir_np`).
    Fchdir(BorrowedFd<'a>),
    /// Open `path` with `flags` as descriptor `fd`.
    Open {
        /// The descriptor number in the child.
        fd: i32,
        /// What to open.
        path: &'a CStr,
        /// `open(2)` flags.
        flags: i32,
    },
    /// Copy descriptor `from` to `to`.
    Dup2 {
        /// A descriptor open in the parent (or made by an earlier action).
        from: i32,
        /// The descriptor number in the child.
        to: i32,
    },
}

/// posix_spawn (posix_spawnp with `search`) of `program` with `argv` and
/// `envp`, every signal at its default action and none blocked, `flags`
/// (`POSIX_SPAWN_*`; with `POSIX_SPAWN_SETPGROUP` the child leads a new
/// process group) and `actions` in order; returns the child's pid. The one
/// place the engine calls posix_spawn itself.
fn spawn_with(
    program: &CStr,
    search: bool,
    argv: &[CString],
    envp: &[CString],
    flags: libc::c_short,
    actions: &[FileAction<'_>],
) -> io::Result<i32> {
    let argv = pointers(argv);
    let envp = pointers(envp);
    let spawn_fn = if search {
        libc::posix_spawnp
    } else {
        libc::posix_spawn
    };
    let flags = flags
        | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
        | libc::POSIX_SPAWN_SETSIGDEF as libc::c_short;
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer handed to libc points at memory that lives until
    // the block ends: `attr`, `file_actions` and the signal sets are locals
    // initialised by their `*_init` / `sig*set` call before any other use and
    // destroyed exactly once, after the spawn, whatever failed; `program`,
    // the paths of `actions` and the strings behind `argv` / `envp` are
    // borrowed `CStr`s (NUL-terminated) and both pointer arrays end with
    // NULL; the descriptors of `actions` are open, borrowed for the call.
    // posix_spawn copies what it needs before it returns, and the child runs
    // no Rust code.
    let rc = unsafe {
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        let mut file_actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut no_signals: libc::sigset_t = std::mem::zeroed();
        let mut every_signal: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut no_signals);
        libc::sigfillset(&mut every_signal);
        libc::sigdelset(&mut every_signal, libc::SIGKILL);
        libc::sigdelset(&mut every_signal, libc::SIGSTOP);
        let mut rc = libc::posix_spawnattr_init(&mut attr);
        if rc == 0 {
            rc = libc::posix_spawn_file_actions_init(&mut file_actions);
            if rc == 0 {
                // Each step runs only while the previous ones succeeded.
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
                for a in actions {
                    match a {
                        FileAction::Fchdir(dir) => {
                            step!(libc::posix_spawn_file_actions_addfchdir_np(
                                &mut file_actions,
                                dir.as_raw_fd()
                            ))
                        }
                        FileAction::Open { fd, path, flags } => {
                            step!(libc::posix_spawn_file_actions_addopen(
                                &mut file_actions,
                                *fd,
                                path.as_ptr(),
                                *flags,
                                0
                            ))
                        }
                        FileAction::Dup2 { from, to } => step!(
                            libc::posix_spawn_file_actions_adddup2(&mut file_actions, *from, *to)
                        ),
                    }
                }
                step!(spawn_fn(
                    &mut pid,
                    program.as_ptr(),
                    &file_actions,
                    &attr,
                    argv.as_ptr(),
                    envp.as_ptr()
                ));
                libc::posix_spawn_file_actions_destroy(&mut file_actions);
            }
            libc::posix_spawnattr_destroy(&mut attr);
        }
        rc
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(pid)
}

/// Start the command as the leader of a new session on the terminal; returns
/// its pid (which is also its session and process group id).
pub fn spawn_in_terminal(s: &TerminalSpawn<'_>) -> io::Result<i32> {
    spawn_with(
        s.program,
        s.search,
        s.argv,
        s.envp,
        SETSID,
        &[
            FileAction::Fchdir(s.dir),
            FileAction::Open {
                fd: 0,
                path: s.slave,
                flags: libc::O_RDWR,
            },
            FileAction::Dup2 { from: 0, to: 1 },
            FileAction::Dup2 { from: 0, to: 2 },
        ],
    )
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

/// The pipes of a piped start, each end a close-on-exec descriptor above 0,
/// 1 and 2 — so copying the child's stdin, stdout and stderr in order never
/// overwrites a descriptor still to be copied, even in a host that closed
/// its own. Each pair is (read end, write end).
pub struct StdioPipes {
    /// What the child reads, when it reads a pipe.
    pub stdin: Option<(OwnedFd, OwnedFd)>,
    /// Its stdout.
    pub stdout: (OwnedFd, OwnedFd),
    /// Its stderr.
    pub stderr: (OwnedFd, OwnedFd),
}

impl StdioPipes {
    /// Make them (a stdin pipe when `stdin_pipe`).
    pub fn new(stdin_pipe: bool) -> io::Result<Self> {
        Ok(StdioPipes {
            stdout: pipe()?,
            stderr: pipe()?,
            stdin: if stdin_pipe { Some(pipe()?) } else { None },
        })
    }
}

/// Start `program` (looked up in the host's PATH when `search` is set) as
/// the leader of a new session (so in a process group of its own), stdin from /dev/null or a pipe, both streams
/// piped, the working directory entered through the held descriptor, so a
/// path swapped after the cwd check cannot move the child. On macOS every
/// other descriptor is closed (`POSIX_SPAWN_CLOEXEC_DEFAULT`) and
/// posix_spawn is a system call: exec errors come back as errors and every
/// attribute is applied before the call returns. On Linux the engine's own
/// descriptors are close-on-exec already, and glibc and musl report a
/// failed exec as the call's error too.
pub fn spawn_piped(
    program: &CStr,
    search: bool,
    argv: &[CString],
    envp: &[CString],
    dir: BorrowedFd<'_>,
    stdin_pipe: bool,
) -> io::Result<Piped> {
    let StdioPipes {
        stdin,
        stdout: (out_r, out_w),
        stderr: (err_r, err_w),
    } = StdioPipes::new(stdin_pipe)?;
    let first = match &stdin {
        Some((r, _)) => FileAction::Dup2 {
            from: r.as_raw_fd(),
            to: 0,
        },
        None => FileAction::Open {
            fd: 0,
            path: c"/dev/null",
            flags: libc::O_RDONLY,
        },
    };
    let pid = spawn_with(
        program,
        search,
        argv,
        envp,
        PIPED_FLAGS,
        &[
            first,
            FileAction::Dup2 {
                from: out_w.as_raw_fd(),
                to: 1,
            },
            FileAction::Dup2 {
                from: err_w.as_raw_fd(),
                to: 2,
            },
            FileAction::Fchdir(dir),
        ],
    )?;
    Ok(Piped {
        pid,
        stdin: stdin.map(|(_, w)| w),
        stdout: out_r,
        stderr: err_r,
    })
}

/// A pipe whose ends are close-on-exec and above stdio, read end first.
#[cfg(target_os = "linux")]
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    Ok((above_stdio(r)?, above_stdio(w)?))
}

/// `fd` itself, or a close-on-exec copy of it above 0, 1 and 2 (the
/// original closed) when it is one of them.
pub fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}

/// A pipe whose ends are close-on-exec and above stdio (macOS has no
/// pipe2), read end first.
#[cfg(target_os = "macos")]
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) returns.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just returned by pipe(2) and are owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    rustix::io::fcntl_setfd(&r, rustix::io::FdFlags::CLOEXEC)?;
    rustix::io::fcntl_setfd(&w, rustix::io::FdFlags::CLOEXEC)?;
    Ok((above_stdio(r)?, above_stdio(w)?))
}
