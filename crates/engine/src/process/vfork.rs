//! Linux: every start's spawn (piped or on a terminal, confined or not),
//! without glibc's posix_spawn.
//!
//! glibc's posix_spawn maps a fresh stack for every child and unmaps it
//! afterwards (the unmap's TLB shootdown reaches every CPU the host's
//! threads ran on), and in the child reads and resets all 64 signal
//! dispositions while the spawning thread waits. Here the child is created
//! the same way — `clone(CLONE_VM | CLONE_VFORK)`: no copy of the host's
//! memory, the calling thread suspended until the child has exec'd or
//! exited — on a stack each spawning thread keeps for its life, and the
//! child does only what the start needs:
//!
//! 1. a session of its own (`setsid()`: no controlling terminal, and a
//!    process group whose id is its pid), so nothing aimed at the host's
//!    group reaches it from here on; a command with a cgroup of its own is
//!    created in it (`clone3`, [`super::clone3`]), or, where the kernel
//!    cannot, enters it here (`0` written to its `cgroup.procs`) before it
//!    can start anything (a terminal start: its terminal is opened after
//!    step 3, so that it becomes the controlling terminal);
//! 2. stdin, stdout and stderr from the descriptors the parent prepared;
//! 3. the held directory entered by descriptor (`fchdir`) — or, for a
//!    confined start at level "full", its namespace sandbox entered (see
//!    [`super::sandbox`]), the checked directory by path in it;
//! 4. in a sandboxed start, every descriptor above 2 marked close-on-exec
//!    (`close_range`), so none the host left inheritable reaches past the
//!    view;
//! 5. the signals the host ignores (SIGPIPE, for one; the parent reads the
//!    dispositions before the clone) back to their default action — exec
//!    resets the handled ones itself, and no handler of the host can run in
//!    the child before its exec: it is born with every signal blocked and
//!    none pending, it has left the host's process group, and nobody knows
//!    its pid yet;
//! 6. the signal mask emptied and the program exec'd (a bare name looked
//!    up in the command's PATH as execvp would, never through a shell).
//!
//! A failure in the child is told to the parent: through memory the two
//! share, and, until the first start has shown the memory really is shared
//! (qemu-user runs this clone as a plain fork), through a close-on-exec pipe
//! the parent reads to its end. The child allocates nothing and takes no
//! lock: it makes system calls — a dozen for a start — and copies bytes on
//! its own stack (under qemu-user the child is a copy of the whole
//! emulator, where a lock some other thread held at the fork would never be
//! released). Like posix_spawn and `Command`, it passes the C library's
//! `environ` as it is when the environment is not replaced.
//!
//! This file is the parent's side (the pipes, the clone, the report); the
//! child's side — the plan it reads and the steps above — is `vfork/child.rs`,
//! a file of its own because its rules (no allocation, no lock) are not
//! the parent's.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

use super::posix_spawn::{above_stdio, pipe, pointers, Piped, StdioPipes};

mod child;
use child::{child, rt_sigaction, KernelSigaction, Plan};

/// The child's stack: its few system calls and the PATH buffer of one
/// lookup fit many times over.
const STACK_BYTES: usize = 64 * 1024;

/// Set once a child's write was seen by its parent (the kernel's vfork):
/// from then on no start needs the report pipe. Under qemu-user's fork it
/// stays unset.
static SHARED_MEMORY: AtomicBool = AtomicBool::new(false);

/// Cleared once `clone3` with `CLONE_INTO_CGROUP` was refused as unknown or
/// not allowed: later starts go to `clone` straight away.
static CLONE3: AtomicBool = AtomicBool::new(true);

extern "C" {
    /// The host's environment, as the C library keeps it.
    static environ: *const *const c_char;
}

thread_local! {
    /// This thread's child stack (a spawning thread is suspended while its
    /// child runs on it, so one per thread is enough).
    static STACK: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0u8; STACK_BYTES].into_boxed_slice());
}

/// The signals this process ignores, as [`Plan::reset`] wants them.
fn ignored_signals() -> u64 {
    let mut set = 0u64;
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut old = KernelSigaction {
            handler: 0,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        // SAFETY: a query only (no new action); `old` is a valid out-pointer.
        let ignored = unsafe { rt_sigaction(sig, std::ptr::null(), &mut old) } == 0
            && old.handler == libc::SIG_IGN;
        if ignored {
            set |= 1 << (sig - 1);
        }
    }
    set
}

/// A unix datagram socket pair, both ends close-on-exec and above stdio.
fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [-1 as c_int; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair returns.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just made and are owned by nobody else.
    let (a, b) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(a)?, above_stdio(b)?))
}

/// One /dev/null for every child's stdin.
fn dev_null() -> io::Result<BorrowedFd<'static>> {
    static NULL: OnceLock<OwnedFd> = OnceLock::new();
    if let Some(fd) = NULL.get() {
        return Ok(fd.as_fd());
    }
    let fd = above_stdio(rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?)?;
    let _ = NULL.set(fd);
    Ok(NULL.get().expect("just set").as_fd())
}

/// The PATH a bare name is looked up in: the host's, or execvp's default
/// when it has none.
pub fn host_path() -> Vec<u8> {
    match std::env::var_os("PATH") {
        Some(p) => std::os::unix::ffi::OsStringExt::into_vec(p),
        None => super::spawn::DEFAULT_PATH.as_bytes().to_vec(),
    }
}

/// Start `program` (looked up in `search`, a PATH, when given) as the
/// leader of a new session (in `cgroup`, when given), stdin from /dev/null or a pipe, both streams piped, in
/// the held directory, with `envp` (the host's environment when `None`).
/// Returns once the child has exec'd; a failure before or in the exec
/// comes back as the error (ENOENT, EACCES, E2BIG, …).
#[allow(clippy::too_many_arguments)]
pub fn spawn_piped(
    program: &CStr,
    search: Option<&[u8]>,
    argv: &[CString],
    envp: Option<&[CString]>,
    dir: BorrowedFd<'_>,
    stdin_pipe: bool,
    cgroup: Option<super::cgroup::Handle<'_>>,
    view: Option<&super::sandbox::View>,
) -> io::Result<Piped> {
    let StdioPipes {
        stdin,
        stdout: (out_r, out_w),
        stderr: (err_r, err_w),
    } = StdioPipes::new(stdin_pipe)?;
    let stdin_src = match &stdin {
        Some((r, _)) => r.as_raw_fd(),
        None => dev_null()?.as_raw_fd(),
    };
    let pid = spawn_raw(
        program,
        search,
        argv,
        envp,
        dir,
        [stdin_src, out_w.as_raw_fd(), err_w.as_raw_fd()],
        None,
        cgroup,
        view,
    )?;
    drop((out_w, err_w));
    let stdin = stdin.map(|(r, w)| {
        drop(r);
        w
    });
    Ok(Piped {
        pid,
        stdin,
        stdout: out_r,
        stderr: err_r,
    })
}

/// Start `program` (in `cgroup`, in `view` when given, else in the held
/// directory) as the leader of a new session whose controlling terminal is
/// `slave` (opened by the child as its 0, 1 and 2). Returns its pid once it
/// has exec'd.
#[allow(clippy::too_many_arguments)]
pub fn spawn_in_terminal(
    program: &CStr,
    search: Option<&[u8]>,
    argv: &[CString],
    envp: &[CString],
    dir: BorrowedFd<'_>,
    slave: &CStr,
    cgroup: Option<super::cgroup::Handle<'_>>,
    view: Option<&super::sandbox::View>,
) -> io::Result<i32> {
    spawn_raw(
        program,
        search,
        argv,
        Some(envp),
        dir,
        [-1; 3],
        Some(slave),
        cgroup,
        view,
    )
}

/// The clone and its report, for both kinds of start.
#[allow(clippy::too_many_arguments)]
fn spawn_raw(
    program: &CStr,
    search: Option<&[u8]>,
    argv: &[CString],
    envp: Option<&[CString]>,
    dir: BorrowedFd<'_>,
    stdio: [c_int; 3],
    terminal: Option<&CStr>,
    cgroup: Option<super::cgroup::Handle<'_>>,
    view: Option<&super::sandbox::View>,
) -> io::Result<i32> {
    let report = if SHARED_MEMORY.load(Ordering::Relaxed) {
        None
    } else {
        Some(pipe()?)
    };
    // A sandboxed child sends its mount namespace back through this pair
    // (see [`super::sandbox::hold_namespace`]).
    let namespace = match view {
        Some(_) => Some(socket_pair()?),
        None => None,
    };
    let argv_ptrs = pointers(argv);
    let envp_ptrs = envp.map(pointers);
    let mut plan = Plan {
        program: program.as_ptr(),
        path: search.map_or(std::ptr::null(), <[u8]>::as_ptr),
        path_len: search.map_or(0, <[u8]>::len),
        argv: argv_ptrs.as_ptr().cast(),
        // SAFETY: reading the C library's `environ` pointer; the strings it
        // points at are the host's environment, as posix_spawn would pass.
        envp: envp_ptrs
            .as_ref()
            .map_or_else(|| unsafe { environ }, |e| e.as_ptr().cast()),
        stdio,
        dir: dir.as_raw_fd(),
        cgroup: -1,
        extra: cgroup.map_or([-1, -1], |c| {
            c.extra.map(|f| f.map_or(-1, |f| f.as_raw_fd()))
        }),
        reset: ignored_signals(),
        report: report.as_ref().map_or(-1, |(_, w)| w.as_raw_fd()),
        terminal: terminal.map_or(std::ptr::null(), CStr::as_ptr),
        view: view.map_or(std::ptr::null(), |v| v as *const _),
        namespace: namespace.as_ref().map_or(-1, |(_, w)| w.as_raw_fd()),
        ran: AtomicBool::new(false),
        errno: AtomicI32::new(0),
    };
    let pid = STACK.with(|stack| {
        let mut stack = stack.borrow_mut();
        let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
        // SAFETY: every signal is blocked around the clone so the child is
        // born with all of them blocked (it empties the mask itself just
        // before its exec); `child` reads `plan`, which lives on this frame
        // until after the clone returns, and with CLONE_VFORK this thread is
        // suspended until the child has exec'd or exited, so the child's
        // stack (this thread's own) is not used by anyone else meanwhile.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            let mut pid = -1;
            let flags = view.map_or(0, |v| v.flags);
            if let Some(c) = cgroup.filter(|_| CLONE3.load(Ordering::Relaxed)) {
                let base = stack.as_mut_ptr();
                let r = super::clone3::spawn_into(
                    child,
                    &mut plan as *mut Plan as *mut c_void,
                    base,
                    top - base as usize,
                    c.dir.as_raw_fd(),
                    flags,
                );
                if r >= 0 {
                    pid = r as c_int;
                } else if matches!(
                    -r as c_int,
                    libc::ENOSYS | libc::EINVAL | libc::E2BIG | libc::EPERM | libc::ENOTDIR
                ) {
                    // Any failure falls back to `clone` below; these say
                    // clone3 will not do here (qemu-user, an old kernel).
                    CLONE3.store(false, Ordering::Relaxed);
                }
            }
            if pid < 0 {
                // No clone3 (or it failed): the child enters the cgroup itself.
                plan.cgroup = cgroup.map_or(-1, |c| c.procs.as_raw_fd());
                pid = libc::clone(
                    child,
                    top as *mut c_void,
                    libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD | flags,
                    &mut plan as *mut Plan as *mut c_void,
                );
            }
            let e = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            if pid < 0 {
                Err(e)
            } else {
                Ok(pid)
            }
        }
    })?;
    let failed = if plan.ran.load(Ordering::Relaxed) {
        SHARED_MEMORY.store(true, Ordering::Relaxed);
        plan.errno.load(Ordering::Relaxed)
    } else {
        // The child has its own memory: its report comes through the pipe,
        // which its exec closes.
        match report {
            Some((r, w)) => {
                drop(w);
                let mut bytes = [0u8; 4];
                let mut got = 0;
                while got < 4 {
                    match rustix::io::read(&r, &mut bytes[got..]) {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(rustix::io::Errno::INTR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                if got == 4 {
                    i32::from_ne_bytes(bytes)
                } else {
                    0
                }
            }
            None => 0,
        }
    };
    if failed != 0 {
        // The child has exited (or is about to): collect it.
        let mut status = 0;
        // SAFETY: waiting for our own child, whose pid we were just given.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(io::Error::from_raw_os_error(failed));
    }
    if let Some((r, _)) = namespace {
        let (ns, listener) = super::sandbox::receive_sent(r.as_fd());
        if let Some(ns) = ns {
            // Its namespace is torn down off the path of its exit.
            super::sandbox::hold_namespace(pid, ns);
        }
        if view.is_some_and(|v| v.mediate.is_some()) {
            let Some(listener) = listener else {
                // Its connects would wait for nobody: it does not run.
                // SAFETY: our own child, killed and reaped once.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, std::ptr::null_mut(), 0);
                }
                return Err(io::Error::other(
                    "the listener of the confined command's connects did not arrive",
                ));
            };
            super::mediate::keep_listener(listener);
        }
    }
    Ok(pid)
}

/// Start `true` in `view` and wait for it: whether this host can make the
/// namespaces and the view at all.
pub fn probe(view: &super::sandbox::View, dir: BorrowedFd<'_>) -> io::Result<()> {
    let p = spawn_piped(
        c"true",
        Some(b"/usr/bin:/bin"),
        &[CString::from(c"true")],
        None,
        dir,
        false,
        None,
        Some(view),
    )?;
    drop((p.stdout, p.stderr));
    let mut status = 0;
    // SAFETY: our own child, reaped once.
    unsafe { libc::waitpid(p.pid, &mut status, 0) };
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "the probe ended with status {status}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::unless_busy;
    use std::io::{Read, Write};
    use std::os::unix::fs::PermissionsExt;

    fn c(s: &str) -> CString {
        CString::new(s).unwrap()
    }

    fn argv(a: &[&str]) -> Vec<CString> {
        a.iter().map(|s| c(s)).collect()
    }

    fn open_dir(p: &std::path::Path) -> OwnedFd {
        std::fs::File::open(p).unwrap().into()
    }

    /// Everything the child printed on each stream, and how it exited.
    fn finish(p: Piped) -> (String, String, i32) {
        let mut out = String::new();
        let mut err = String::new();
        std::fs::File::from(p.stdout)
            .read_to_string(&mut out)
            .unwrap();
        std::fs::File::from(p.stderr)
            .read_to_string(&mut err)
            .unwrap();
        let mut status = 0;
        // SAFETY: our own child, reaped once.
        assert_eq!(unsafe { libc::waitpid(p.pid, &mut status, 0) }, p.pid);
        (out, err, status)
    }

    fn run(
        program: &str,
        path: Option<&[u8]>,
        a: &[&str],
        dir: &std::path::Path,
    ) -> io::Result<(String, String, i32)> {
        let d = open_dir(dir);
        let p = unless_busy(|| {
            spawn_piped(
                &c(program),
                path,
                &argv(a),
                None,
                d.as_fd(),
                false,
                None,
                None,
            )
        })?;
        Ok(finish(p))
    }

    fn script(path: &std::path::Path, body: &str, mode: u32) {
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn both_streams_and_stdin_are_the_pipes() {
        let d = tempfile::tempdir().unwrap();
        let dir = open_dir(d.path());
        let mut p = spawn_piped(
            c"/bin/sh",
            None,
            &argv(&["sh", "-c", "echo out; echo err >&2; cat"]),
            None,
            dir.as_fd(),
            true,
            None,
            None,
        )
        .unwrap();
        let mut input = std::fs::File::from(p.stdin.take().unwrap());
        input.write_all(b"in\n").unwrap();
        drop(input);
        let (out, err, status) = finish(p);
        assert_eq!(
            (out.as_str(), err.as_str(), status),
            ("out\nin\n", "err\n", 0)
        );
    }

    #[test]
    fn stdin_is_dev_null_and_the_directory_is_the_held_one() {
        let d = tempfile::tempdir().unwrap();
        let (out, _, status) = run(
            "/bin/sh",
            None,
            &[
                "sh",
                "-c",
                "readlink /proc/self/fd/0 /proc/self/cwd; cat; echo end",
            ],
            d.path(),
        )
        .unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        assert_eq!(out, format!("/dev/null\n{}\nend\n", real.display()));
        assert_eq!(status, 0);
    }

    /// A field of the child's /proc/<pid>/status as the child itself read it.
    fn field<'a>(status: &'a str, name: &str) -> &'a str {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {status}"))
            .trim()
    }

    #[test]
    fn the_child_leads_its_session_with_default_signals_and_none_blocked() {
        // The test process ignores SIGPIPE (Rust's runtime does) and this
        // thread blocks SIGUSR1: the control that the child would inherit both.
        assert_ne!(ignored_signals() & (1 << (libc::SIGPIPE - 1)), 0);
        // SAFETY: masks of this thread only, with valid sets.
        unsafe {
            let mut usr1: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut usr1);
            libc::sigaddset(&mut usr1, libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_BLOCK, &usr1, std::ptr::null_mut());
        }
        let d = tempfile::tempdir().unwrap();
        let dir = open_dir(d.path());
        let p = spawn_piped(
            c"/bin/cat",
            None,
            &argv(&["cat", "/proc/self/status"]),
            None,
            dir.as_fd(),
            false,
            None,
            None,
        )
        .unwrap();
        let pid = p.pid;
        let (out, _, status) = finish(p);
        assert_eq!(status, 0);
        // Under qemu-user (NLC_TEST_QEMU=1) the emulator keeps the host's
        // real-time signals for itself: a guest cannot see or set the
        // disposition of signal 32 and up, which the child may have inherited
        // ignored from whoever started the test. The standard ones are checked
        // there; everything natively.
        let checked: u64 = if std::env::var_os("NLC_TEST_QEMU").is_some() {
            (1 << 31) - 1
        } else {
            u64::MAX
        };
        let mask = |name: &str| u64::from_str_radix(field(&out, name), 16).unwrap() & checked;
        assert_eq!(mask("SigIgn:"), 0, "{out}");
        assert_eq!(mask("SigBlk:"), 0, "{out}");
        assert_eq!(field(&out, "NSpgid:"), pid.to_string());
        assert_eq!(
            field(&out, "NSsid:"),
            pid.to_string(),
            "leads its own session"
        );
        // The parent thread's own mask came back as it was.
        // SAFETY: reading this thread's mask into a valid set.
        let still = unsafe {
            let mut now: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut now);
            let kept = libc::sigismember(&now, libc::SIGUSR1) == 1;
            let mut usr1: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut usr1);
            libc::sigaddset(&mut usr1, libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &usr1, std::ptr::null_mut());
            kept && libc::sigismember(&now, libc::SIGTERM) == 0
        };
        assert!(still, "the spawning thread's mask is restored");
    }

    #[test]
    fn exec_failures_come_back_as_the_error() {
        let d = tempfile::tempdir().unwrap();
        let missing = run("/nonexistent-nlc/tool", None, &["tool"], d.path()).unwrap_err();
        assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
        let tool = d.path().join("tool");
        script(&tool, "#!/bin/sh\necho ran\n", 0o644);
        let t = tool.to_str().unwrap();
        let refused = run(t, None, &["tool"], d.path()).unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::EACCES));
        let huge = "x".repeat(200 * 1024);
        let too_big = run("/bin/echo", None, &["echo", &huge], d.path()).unwrap_err();
        assert_eq!(too_big.raw_os_error(), Some(libc::E2BIG));
        // Control: the same file, executable, runs.
        script(&tool, "#!/bin/sh\necho ran\n", 0o755);
        assert_eq!(
            run(t, None, &["tool"], d.path()).unwrap(),
            ("ran\n".into(), String::new(), 0)
        );
    }

    #[test]
    fn a_bare_name_is_looked_up_in_the_path_as_execvp_does() {
        let d = tempfile::tempdir().unwrap();
        let (one, two) = (d.path().join("one"), d.path().join("two"));
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&two).unwrap();
        script(&one.join("tool"), "#!/bin/sh\necho one\n", 0o644);
        script(&two.join("tool"), "#!/bin/sh\necho two\n", 0o755);
        let path = |dirs: &[&std::path::Path]| {
            dirs.iter()
                .map(|p| p.to_str().unwrap())
                .collect::<Vec<_>>()
                .join(":")
                .into_bytes()
        };
        // A permission refusal is passed over for a later entry that runs …
        let both = path(&[&one, &two]);
        assert_eq!(
            run("tool", Some(&both), &["tool"], d.path()).unwrap().0,
            "two\n"
        );
        // … and reported when none does.
        let only_one = path(&[std::path::Path::new("/nonexistent-nlc"), &one]);
        assert_eq!(
            run("tool", Some(&only_one), &["tool"], d.path())
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EACCES)
        );
        // Nowhere on it: not found.
        let none = path(&[std::path::Path::new("/nonexistent-nlc")]);
        assert_eq!(
            run("tool", Some(&none), &["tool"], d.path())
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ENOENT)
        );
        // An empty entry is the command's working directory.
        assert_eq!(
            run("tool", Some(b"/nonexistent-nlc:"), &["tool"], &two)
                .unwrap()
                .0,
            "two\n"
        );
    }

    #[test]
    fn the_environment_is_the_given_one_or_the_hosts() {
        let d = tempfile::tempdir().unwrap();
        let dir = open_dir(d.path());
        let env = [c("ONLY=1"), c("PATH=/usr/bin:/bin")];
        let p = spawn_piped(
            c"/usr/bin/env",
            None,
            &argv(&["env"]),
            Some(&env),
            dir.as_fd(),
            false,
            None,
            None,
        )
        .unwrap();
        assert_eq!(finish(p).0, "ONLY=1\nPATH=/usr/bin:/bin\n");
        let (out, _, _) = run("/usr/bin/env", None, &["env"], d.path()).unwrap();
        let mut child: Vec<&str> = out.lines().collect();
        child.sort();
        let host: Vec<String> = std::env::vars_os()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        let mut host: Vec<&str> = host.iter().map(String::as_str).collect();
        host.sort();
        assert_eq!(child, host);
    }
}
