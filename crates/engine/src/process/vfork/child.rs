//! The child's side of the clone-based spawn: the [`Plan`] the parent
//! prepares and the [`child`] function that carries it out between the
//! clone and the exec (steps 1 to 6 of [`super`]'s documentation). It runs
//! on the parent's memory with the parent suspended, so it allocates
//! nothing and takes no lock: system calls and byte copies on its own
//! stack only.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The longest path tried in a PATH lookup (the kernel's `PATH_MAX`).
const PATH_MAX: usize = 4096;

/// What the child does, prepared by the parent; the child reads it through
/// the memory the two share.
#[repr(C)]
pub(super) struct Plan {
    /// The program: a path, or a bare name to look up in `path`.
    pub(super) program: *const c_char,
    /// The PATH to look `program` up in (not NUL-terminated) and its
    /// length; null to run `program` as it is.
    pub(super) path: *const u8,
    pub(super) path_len: usize,
    /// NULL-terminated argv and environment.
    pub(super) argv: *const *const c_char,
    pub(super) envp: *const *const c_char,
    /// The descriptors that become the child's 0, 1 and 2 (each ≥ 3).
    pub(super) stdio: [c_int; 3],
    /// The directory to enter.
    pub(super) dir: c_int,
    /// The `cgroup.procs` of the cgroup to enter, open for writing, or -1
    /// (none, or born in it).
    pub(super) cgroup: c_int,
    /// The `cgroup.procs` of the v1 directories holding its limits, open
    /// for writing, or -1 (see [`crate::process::limits`]).
    pub(super) extra: [c_int; 2],
    /// The signals to set back to their default action: bit `n - 1` for
    /// signal `n` (those the host ignores).
    pub(super) reset: u64,
    /// The write end of the report pipe, or -1.
    pub(super) report: c_int,
    /// The terminal to open as 0, 1 and 2 in a new session (`stdio` unused),
    /// or null.
    pub(super) terminal: *const c_char,
    /// The namespace sandbox to enter instead of `dir`, or null (see
    /// [`crate::process::sandbox`]).
    pub(super) view: *const crate::process::sandbox::View,
    /// Where a sandboxed child sends its mount namespace, or -1.
    pub(super) namespace: c_int,
    /// Set by the child first thing.
    pub(super) ran: AtomicBool,
    /// The errno of the step that failed, set by the child before it exits.
    pub(super) errno: AtomicI32,
}

/// The child's whole life. SAFETY (for the caller, `clone`): `arg` points
/// at a `Plan` that outlives the child's use of it — the parent is
/// suspended until the child exec'd or exited (or, as a fork, the child has
/// its own copy).
pub(super) extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: see above; every pointer in the plan is valid (NUL-terminated
    // strings, NULL-terminated arrays) for as long as the parent waits.
    unsafe {
        let p = &*(arg as *const Plan);
        p.ran.store(true, Ordering::Relaxed);
        if libc::setsid() < 0 {
            fail(p, errno());
        }
        if p.cgroup >= 0 && libc::write(p.cgroup, b"0".as_ptr().cast(), 1) != 1 {
            fail(p, errno());
        }
        for &fd in &p.extra {
            if fd >= 0 && libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                fail(p, errno());
            }
        }
        if p.terminal.is_null() {
            // A terminal start opens its terminal once the view is entered
            // (below), by the same path there, so that its name resolves.
            for (to, &from) in p.stdio.iter().enumerate() {
                if libc::dup2(from, to as c_int) < 0 {
                    fail(p, errno());
                }
            }
        }
        if !p.view.is_null() {
            if p.namespace >= 0 {
                crate::process::sandbox::send_own_namespace(p.namespace);
            }
            // A confined start: its namespaces' view, entered by the path
            // of the checked directory (compared with the held one).
            if let Err(e) = crate::process::sandbox::enter(&*p.view) {
                fail(p, e);
            }
        } else if libc::fchdir(p.dir) != 0 {
            fail(p, errno());
        }
        if !p.terminal.is_null() {
            let fd = libc::open(p.terminal, libc::O_RDWR);
            if fd < 0 {
                fail(p, errno());
            }
            for to in 0..3 {
                if fd != to && libc::dup2(fd, to) < 0 {
                    fail(p, errno());
                }
            }
            if fd > 2 {
                libc::close(fd);
            }
        }
        if !p.view.is_null() {
            if let Some(m) = &(*p.view).mediate {
                // Last, once nothing of the engine's own remains to run: the
                // filter that hands the command's connects to the engine.
                match crate::process::seccomp::install_mediation(m.0) {
                    Ok(fd) => {
                        let sent = crate::process::sandbox::send_listener(p.namespace, fd);
                        libc::close(fd);
                        if !sent {
                            fail(p, libc::EPIPE);
                        }
                    }
                    Err(e) => fail(p, e),
                }
            }
        }
        if !p.view.is_null()
            && libc::syscall(
                libc::SYS_close_range,
                3 as c_int,
                c_int::MAX,
                libc::CLOSE_RANGE_CLOEXEC as c_int,
            ) != 0
        {
            // A sandboxed command inherits none of the host's descriptors
            // (one left open without close-on-exec would reach past the
            // view): every one above the standard streams closes at the exec.
            fail(p, errno());
        }
        let mut reset = p.reset;
        while reset != 0 {
            let sig = reset.trailing_zeros() as c_int + 1;
            reset &= reset - 1;
            let dfl = KernelSigaction {
                handler: libc::SIG_DFL,
                flags: 0,
                restorer: 0,
                mask: 0,
            };
            rt_sigaction(sig, &dfl, std::ptr::null_mut());
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        if p.path.is_null() {
            libc::execve(p.program, p.argv, p.envp);
            fail(p, errno());
        }
        // As execvp: each PATH entry in turn (an empty one is the current
        // directory); a permission refusal is remembered and reported if no
        // later entry runs; anything but "not here" ends the search.
        let name = CStr::from_ptr(p.program).to_bytes();
        let mut buf = [0u8; PATH_MAX];
        let mut refused = false;
        let mut start = 0usize;
        while start <= p.path_len {
            let mut end = start;
            while end < p.path_len && *p.path.add(end) != b':' {
                end += 1;
            }
            let dir: &[u8] = if end == start {
                b"."
            } else {
                std::slice::from_raw_parts(p.path.add(start), end - start)
            };
            start = end + 1;
            if dir.len() + 1 + name.len() + 1 > buf.len() {
                continue;
            }
            buf[..dir.len()].copy_from_slice(dir);
            buf[dir.len()] = b'/';
            buf[dir.len() + 1..dir.len() + 1 + name.len()].copy_from_slice(name);
            buf[dir.len() + 1 + name.len()] = 0;
            libc::execve(buf.as_ptr().cast(), p.argv, p.envp);
            match errno() {
                libc::EACCES => refused = true,
                libc::ENOENT
                | libc::ENOTDIR
                | libc::ESTALE
                | libc::ENODEV
                | libc::ETIMEDOUT
                | libc::ELOOP
                | libc::ENAMETOOLONG => {}
                e => fail(p, e),
            }
        }
        fail(p, if refused { libc::EACCES } else { libc::ENOENT })
    }
}

/// The calling thread's errno.
fn errno() -> c_int {
    // SAFETY: the C library's errno location for the calling thread is
    // always valid to read.
    unsafe { *libc::__errno_location() }
}

/// Tell the parent `e` and end the child.
///
/// # Safety
/// Called in the child only (it ends the calling process): `p.report` is
/// the child's copy of the report pipe's write end, or -1.
unsafe fn fail(p: &Plan, e: c_int) -> ! {
    p.errno.store(e, Ordering::Relaxed);
    if p.report >= 0 {
        let bytes = e.to_ne_bytes();
        // SAFETY: `p.report` is the child's own write end (contract) and
        // `bytes` lives on this frame; a failed write is ignored.
        unsafe { libc::write(p.report, bytes.as_ptr().cast(), bytes.len()) };
    }
    // SAFETY: the contract says this runs in the child, which is meant to end.
    unsafe { libc::_exit(127) }
}

/// The kernel's `struct sigaction` (x86_64 and arm64 alike): the system
/// call, not the C library's wrapper, which refuses the signals the C
/// library reserves (32 and 33 on glibc) — a host may have inherited those
/// ignored, and a command must not.
#[repr(C)]
pub(super) struct KernelSigaction {
    pub(super) handler: libc::sighandler_t,
    pub(super) flags: libc::c_ulong,
    pub(super) restorer: usize,
    pub(super) mask: u64,
}

/// `rt_sigaction(2)` itself.
///
/// # Safety
/// `act` and `old` are null or valid for the call.
pub(super) unsafe fn rt_sigaction(
    sig: c_int,
    act: *const KernelSigaction,
    old: *mut KernelSigaction,
) -> libc::c_long {
    // SAFETY: `act` and `old` are null or valid (contract); 8 is the size
    // of the kernel's signal mask.
    unsafe { libc::syscall(libc::SYS_rt_sigaction, sig, act, old, 8usize) }
}
