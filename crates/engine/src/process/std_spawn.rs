//! The standard paths switch, and the standard spawn it selects.
//!
//! `NEUROLINK_COMMANDS_STANDARD_PATHS=1` (read once, at load) replaces the
//! engine's fast paths with the standard ones wherever the standard one can
//! keep the contract: an unconfined start that is not on a terminal is
//! started with `std::process::Command` instead of the clone-based spawn
//! ([`super::vfork`]), and the napi layer builds statuses, handles and
//! artifact references through napi-rs's serde conversion instead of the
//! adapter's object makers. It exists so that each fast path keeps
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

/// Start `req` (unconfined, piped) with `std::process::Command`: the
/// transform's [`Route::Standard`](super::transform::Route::Standard).
#[cfg(target_os = "linux")]
pub(super) fn spawn(req: &Request<'_>) -> std::io::Result<Spawned> {
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::Read;
    use std::os::fd::AsFd;

    use super::super::launch::{Input, Request};
    use super::super::spawn::{peek_exit, reap, Exit};

    /// What the child prints, and how it ends.
    fn run(argv: &[&str], env: Option<&[(String, String)]>, input: Input) -> (String, Exit) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), "sub").unwrap();
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let s = crate::process::unless_busy(|| {
            super::spawn(&Request {
                argv: &argv,
                dir: held.fd.as_fd(),
                env,
                input,
                tmp: None,
                cgroup: None,
            })
        })
        .unwrap();
        assert_eq!(s.stdin.is_some(), input == Input::Pipe);
        drop(s.stdin);
        let mut out = String::new();
        std::fs::File::from(s.stdout)
            .read_to_string(&mut out)
            .unwrap();
        let exit = peek_exit(s.pid, true).unwrap();
        reap(s.pid);
        (out.replace(d.path().to_str().unwrap(), "<root>"), exit)
    }

    #[test]
    fn the_standard_spawn_keeps_the_session_the_directory_the_env_and_stdin() {
        // Its own session and group (its pid), in the held directory, stdin
        // at end of file at once.
        let (out, exit) = run(
            &[
                "/bin/sh",
                "-c",
                "s=$(ps -o sid= -p $$ | tr -d ' '); g=$(ps -o pgid= -p $$ | tr -d ' '); \
                 [ \"$s\" = $$ ] && [ \"$g\" = $$ ] && echo own; pwd; cat; echo end",
            ],
            None,
            Input::Null,
        );
        assert_eq!(
            (out.as_str(), exit),
            ("own\n<root>/sub\nend\n", Exit::Code(0))
        );
        // A replacing environment: a bare name found in its PATH, argv[0]
        // kept as given, nothing of the host's inherited.
        let env = [
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
            ("ONLY".to_string(), "this".to_string()),
        ];
        let (out, exit) = run(
            &["sh", "-c", "echo \"$0 $ONLY ${HOME:-none}\""],
            Some(&env),
            Input::Pipe,
        );
        assert_eq!((out.as_str(), exit), ("sh this none\n", Exit::Code(0)));
    }
}
