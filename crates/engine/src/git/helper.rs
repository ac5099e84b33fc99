//! The toolset's own short git runs (the configuration listings and
//! `rev-parse` steps that come before a tool's run), started the way the
//! tool's run is: by the engine's spawn, in a session and a cgroup of their
//! own, and — when the toolset is confined — under the same confinement
//! (SPEC §8: every process the toolset starts is confined, not only the
//! tool's run). A `gitExecutable` wrapper therefore cannot write outside
//! the repository in a listing step either.

#[cfg(windows)]
use crate::platform::windows::libc;
use crate::platform::{AsFd, OwnedFd};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::policy::confine::Confinement;
use crate::process::cgroup::Cgroup;
use crate::process::spawn::{self, Exit, Input, Spawned};
use crate::process::{confine, signals, transform, watchdog};

/// How a helper run ended.
#[derive(Debug, Clone, Copy)]
pub struct Status(pub Exit);

impl Status {
    /// It exited 0.
    pub fn success(&self) -> bool {
        matches!(self.0, Exit::Code(0))
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "ended by {}", signals::name(s)),
        }
    }
}

/// What one helper run produced.
pub struct Output {
    /// How it ended.
    pub status: Status,
    /// stdout, at most `limit + 1` bytes of it.
    pub stdout: Vec<u8>,
    /// stderr, at most 64 KiB and one byte.
    pub stderr: Vec<u8>,
}

/// Why a helper run gave no output.
pub enum Failure {
    /// It could not be started.
    Start(std::io::Error),
    /// It ran longer than allowed and was killed.
    Timeout,
}

/// Read a pipe to its end, keeping at most `limit + 1` bytes.
fn read_capped(fd: OwnedFd, limit: usize) -> Vec<u8> {
    let mut pipe = std::fs::File::from(fd);
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = (limit + 1).saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
    kept
}

/// Start `argv` in `root` with exactly `env`, stdin null (confined by
/// `confinement` when given), and collect it; it is killed — its whole
/// tree — after `timeout`.
pub fn run(
    argv: &[String],
    root: &Path,
    env: &[(String, String)],
    confinement: Option<&Confinement>,
    timeout: Duration,
    limit: usize,
) -> Result<Output, Failure> {
    #[cfg(not(windows))]
    let dir: OwnedFd = std::fs::File::open(root).map_err(Failure::Start)?.into();
    // A directory opens on Windows only as a held directory (backup
    // semantics), as the cwd check opens it.
    #[cfg(windows)]
    let dir: OwnedFd = nlc_windows::dir::HeldDir::open(root)
        .map_err(Failure::Start)?
        .into_handle();
    let cgroup = Cgroup::take();
    let child = start(argv, root, dir, env, confinement, cgroup.as_ref());
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            if let Some(c) = cgroup {
                c.release();
            }
            return Err(Failure::Start(e));
        }
    };
    let Spawned {
        pid,
        stdout,
        stderr,
        ..
    } = child;
    let out = std::thread::spawn(move || read_capped(stdout, limit));
    let err = stderr.map(|e| std::thread::spawn(move || read_capped(e, 64 * 1024)));
    let deadline = Instant::now() + timeout;
    let mut exit = None;
    while exit.is_none() && Instant::now() < deadline {
        exit = spawn::peek_exit(pid, false);
        if exit.is_none() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // Its group and cgroup are stopped either way: nothing it started may
    // outlive it or hold its pipes open (the release kills what is left in
    // the cgroup).
    signals::signal_group(pid, libc::SIGKILL);
    let _ = spawn::peek_exit(pid, true);
    spawn::reap(pid);
    watchdog::untrack(pid);
    if let Some(c) = cgroup {
        c.release();
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    match exit {
        Some(e) => Ok(Output {
            status: Status(e),
            stdout,
            stderr,
        }),
        None => Err(Failure::Timeout),
    }
}

/// The spawn itself: on a confining thread under `confinement`, else here.
/// The process is tracked by the watchdog, so a host that dies meanwhile
/// takes it along.
fn start(
    argv: &[String],
    root: &Path,
    dir: OwnedFd,
    env: &[(String, String)],
    confinement: Option<&Confinement>,
    cgroup: Option<&Cgroup>,
) -> std::io::Result<Spawned> {
    watchdog::ensure_started();
    let Some(c) = confinement else {
        let s = transform::spawn(transform::Request {
            argv,
            dir: dir.as_fd(),
            env: Some(env),
            input: Input::Null,
            tmp: None,
            cgroup: cgroup.map(Cgroup::handle),
        })?;
        watchdog::track(s.pid);
        return Ok(s);
    };
    let real_root = std::fs::canonicalize(root)?;
    let shared = std::env::temp_dir();
    let shared = std::fs::canonicalize(&shared).unwrap_or(shared);
    let exe = confine::exe_dirs(&argv[0], Some(env));
    // No private temp directory: a listing writes nothing at all.
    let plan = crate::policy::confine::plan(c, &real_root, &exe, None, &shared);
    let start = confine::Start {
        plan,
        argv: argv.to_vec(),
        dir,
        env: Some(env.to_vec()),
        input: Input::Null,
        cgroup: cgroup.map(Cgroup::owned_handle).transpose()?,
        refused: confine::Refusals::default(),
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let guard: confine::Guard = Box::new(|spawn| {
        let s = spawn()?;
        watchdog::track(s.pid);
        Ok(s)
    });
    let deliver: confine::Deliver = Box::new(move |r| {
        if let Err(std::sync::mpsc::SendError(Ok(s))) = tx.send(r) {
            signals::signal_group(s.pid, libc::SIGKILL);
            spawn::reap(s.pid);
            watchdog::untrack(s.pid);
        }
    });
    transform::spawn_confined(start, guard, deliver);
    rx.recv().unwrap_or_else(|_| {
        Err(std::io::Error::other(
            "the confining thread ended before it started git",
        ))
    })
}
