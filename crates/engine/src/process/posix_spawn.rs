//! The engine's own posix_spawn, for the start `std::process::Command`
//! cannot express: a new session whose controlling terminal is a
//! pseudo-terminal.
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
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::raw::c_char;

/// `POSIX_SPAWN_SETSID` (the libc crate names it for Linux only; macOS
/// ≥ 10.15 has the flag with this value). On macOS every descriptor not
/// named by a file action is closed as well (`POSIX_SPAWN_CLOEXEC_DEFAULT`).
#[cfg(target_os = "linux")]
const SETSID: libc::c_short = libc::POSIX_SPAWN_SETSID as libc::c_short;
#[cfg(target_os = "macos")]
const SETSID: libc::c_short = 0x0400 | libc::POSIX_SPAWN_CLOEXEC_DEFAULT as libc::c_short;

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
fn pointers(strings: &[CString]) -> Vec<*mut c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect()
}

/// Start the command as the leader of a new session on the terminal; returns
/// its pid (which is also its session and process group id).
pub fn spawn_in_terminal(s: &TerminalSpawn<'_>) -> io::Result<i32> {
    let argv = pointers(s.argv);
    let envp = pointers(s.envp);
    let flags = (SETSID
        | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
        | libc::POSIX_SPAWN_SETSIGDEF as libc::c_short) as libc::c_short;
    let spawn_fn = if s.search {
        libc::posix_spawnp
    } else {
        libc::posix_spawn
    };
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer handed to libc points at memory that lives until
    // the block ends: `attr`, `actions` and the signal sets are locals
    // initialised by their `*_init` / `sig*set` call before any other use and
    // destroyed exactly once, after the spawn, whatever failed; `program`,
    // `slave` and the strings behind `argv` / `envp` are borrowed `CStr`s
    // (NUL-terminated) and both pointer arrays end with NULL; `dir` is an
    // open descriptor borrowed for the call. posix_spawn copies what it
    // needs before it returns, and the child runs no Rust code.
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
                // Each step runs only while the previous ones succeeded.
                macro_rules! step {
                    ($call:expr) => {
                        if rc == 0 {
                            rc = $call;
                        }
                    };
                }
                step!(libc::posix_spawnattr_setflags(&mut attr, flags));
                step!(libc::posix_spawnattr_setsigmask(&mut attr, &no_signals));
                step!(libc::posix_spawnattr_setsigdefault(
                    &mut attr,
                    &every_signal
                ));
                step!(libc::posix_spawn_file_actions_addfchdir_np(
                    &mut actions,
                    s.dir.as_raw_fd()
                ));
                step!(libc::posix_spawn_file_actions_addopen(
                    &mut actions,
                    0,
                    s.slave.as_ptr(),
                    libc::O_RDWR,
                    0
                ));
                step!(libc::posix_spawn_file_actions_adddup2(&mut actions, 0, 1));
                step!(libc::posix_spawn_file_actions_adddup2(&mut actions, 0, 2));
                step!(spawn_fn(
                    &mut pid,
                    s.program.as_ptr(),
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
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(pid)
}
