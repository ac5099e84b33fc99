//! The standard paths switch, and the standard spawn it selects.
//!
//! `NEUROLINK_COMMANDS_STANDARD_PATHS=1` (read once, at load) replaces the
//! engine's fast paths with the standard ones wherever the standard one can
//! keep the contract: an unconfined start that is not on a terminal is
//! started with `std::process::Command` instead of the clone-based spawn
//! ([`super::vfork`]), and the napi layer builds statuses, handles and
//! artifact references as plain `#[napi(object)]` values instead of through
//! the adapter's object makers. It exists so that each fast path keeps
//! earning its place: the whole suite passes either way, and the benchmark
//! measures both in one run.
//!
//! What the standard spawn keeps, and how: the command still leads a session
//! of its own (`setsid`) and enters its cgroup before it runs (`0` written
//! to its `cgroup.procs`), both in `Command`'s `pre_exec` hook — the
//! standard library has no stable way to ask for either, so `Command` forks
//! the host (copying its page tables) where the fast path shares its memory
//! until the exec; the held directory is entered through
//! `/proc/self/fd/<n>`, which in the child is the very descriptor the cwd
//! check held. What it gives up: the child is not born in its cgroup
//! (`clone3`'s `CLONE_INTO_CGROUP`) but moves there before its exec, which
//! is the fast path's own fallback on kernels without `clone3`; only SIGPIPE
//! (which the standard library resets) of the signals the host ignores goes
//! back to its default action, where the fast path resets them all.
//! Confined starts and terminal starts keep the engine's spawn: a namespace
//! sandbox, a controlling terminal and a Landlock domain all need code of
//! the engine's between the clone and the exec, on a thread it prepared.

use std::sync::OnceLock;

#[cfg(target_os = "linux")]
use super::launch::{Input, Request, Spawned};

/// The variable that selects the standard paths (`1`).
pub const STANDARD_PATHS_VAR: &str = "NEUROLINK_COMMANDS_STANDARD_PATHS";

/// Whether the standard paths are selected (the variable is read once).
/// The standard spawn is Linux's only (macOS starts through the engine's
/// posix_spawn either way); the objects follow the switch everywhere.
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os(STANDARD_PATHS_VAR).is_some_and(|v| v == "1"))
}

/// Whether `req` takes the standard spawn: the switch is on and the start
/// needs nothing of the engine's between the clone and the exec.
#[cfg(target_os = "linux")]
pub fn takes(req: &Request<'_>) -> bool {
    enabled() && !matches!(req.input, Input::Terminal { .. })
}

/// Start `req` (unconfined, piped) with `std::process::Command`.
#[cfg(target_os = "linux")]
pub fn spawn(req: &Request<'_>) -> std::io::Result<Spawned> {
    use std::io;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    let name = &req.argv[0];
    // A bare name is looked up in a replacing environment's PATH, as the
    // fast path does; otherwise `Command` looks it up in the host's.
    let program = req
        .env
        .and_then(|e| super::spawn::resolve_in_env_path(name, e))
        .map_or_else(|| name.into(), |p| p.into_os_string());
    let mut cmd = Command::new(program);
    cmd.arg0(name).args(&req.argv[1..]);
    cmd.current_dir(format!("/proc/self/fd/{}", req.dir.as_raw_fd()));
    if let Some(env) = req.env {
        cmd.env_clear();
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
    }
    if let Some(tmp) = req.tmp {
        for n in super::spawn::TMP_NAMES {
            if !req.env.is_some_and(|e| e.iter().any(|(k, _)| k == n)) {
                cmd.env(n, tmp);
            }
        }
    }
    cmd.stdin(if req.input == Input::Pipe {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let procs: Vec<i32> = req
        .cgroup
        .map(|c| {
            std::iter::once(Some(c.procs))
                .chain(c.extra)
                .flatten()
                .map(|fd| fd.as_raw_fd())
                .collect()
        })
        .unwrap_or_default();
    // SAFETY: the hook runs in the forked child before its exec, where only
    // async-signal-safe calls are allowed: it makes two kinds of system
    // call (setsid, write) on descriptors the parent keeps open for the
    // call, and allocates nothing (`last_os_error` reads errno).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            for &fd in &procs {
                if libc::write(fd, b"0".as_ptr().cast(), 1) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let taken = (child.stdout.take(), child.stderr.take(), child.stdin.take());
    let (Some(stdout), Some(stderr)) = (taken.0, taken.1) else {
        return Err(io::Error::other("the standard spawn gave no output pipes"));
    };
    // The engine reaps the child by pid; dropping `Child` neither waits nor kills.
    Ok(Spawned {
        pid: child.id() as i32,
        stdout: OwnedFd::from(stdout),
        stderr: Some(OwnedFd::from(stderr)),
        stdin: taken.2.map(OwnedFd::from),
        terminal: None,
    })
}
