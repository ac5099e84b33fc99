//! Starting one process: no shell, its own process group, stdin from
//! /dev/null, both streams piped, the environment replaced or inherited, and
//! the working directory entered through the held descriptor.
//!
//! `std::process::Command` uses posix_spawn (vfork semantics) for this shape
//! of command — a process group and a working directory are file actions /
//! attributes of posix_spawn on glibc ≥ 2.29 — so spawn cost does not grow
//! with the host's memory. No `pre_exec` hook is used, because one would force
//! fork.

use std::ffi::CString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
#[cfg(not(target_os = "macos"))]
use std::process::{Command, Stdio};

use crate::sandbox::HeldDir;

/// A started process whose exit nobody has collected yet.
#[derive(Debug)]
pub struct Spawned {
    /// Its pid, which is also its process group id.
    pub pid: i32,
    /// The read end of its stdout pipe.
    pub stdout: OwnedFd,
    /// The read end of its stderr pipe.
    pub stderr: OwnedFd,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

/// Start `argv` in `dir`. `env` replaces the environment when given.
pub fn spawn(
    argv: &[String],
    dir: &HeldDir,
    env: Option<&[(String, String)]>,
) -> io::Result<Spawned> {
    let program = env
        .and_then(|e| resolve_in_env_path(&argv[0], e))
        .unwrap_or_else(|| PathBuf::from(&argv[0]));
    #[cfg(target_os = "macos")]
    return crate::platform::macos::spawn(&program, argv, dir, env);
    #[cfg(not(target_os = "macos"))]
    spawn_with_command(program, argv, dir, env)
}

/// Linux: `std::process::Command`, which uses posix_spawn for this shape.
#[cfg(not(target_os = "macos"))]
fn spawn_with_command(
    program: PathBuf,
    argv: &[String],
    dir: &HeldDir,
    env: Option<&[(String, String)]>,
) -> io::Result<Spawned> {
    let mut cmd = Command::new(program);
    std::os::unix::process::CommandExt::arg0(&mut cmd, &argv[0]);
    cmd.args(&argv[1..])
        .current_dir(dir.proc_path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    if let Some(env) = env {
        cmd.env_clear();
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
    }
    let mut child = cmd.spawn()?;
    let pid = child.id() as i32;
    join_own_group(pid);
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    Ok(Spawned {
        pid,
        stdout: stdout.into(),
        stderr: stderr.into(),
    })
}

/// Put the new child in its own group from the parent side too, as job-control
/// shells do. With vfork semantics the child has already done it (and exec'd,
/// so this fails with EACCES, harmlessly). Where posix_spawn returns before the
/// child ran its file actions — qemu-user turns vfork into fork — the group
/// would not exist yet, and a kill of the group sent at once (a SIGKILL right
/// after the start) would fail with ESRCH and be lost while the command runs on.
#[cfg(not(target_os = "macos"))]
fn join_own_group(pid: i32) {
    // SAFETY: setpgid(2) on our own child with integer arguments.
    unsafe {
        libc::setpgid(pid, pid);
    }
}

/// With a replacing environment, `Command` looks a bare program name up in
/// that environment's PATH, which it can only do by forking (posix_spawnp
/// would search the parent's PATH) — and a fork costs time in proportion to
/// the host's memory. So the name is resolved here as execvp would resolve
/// it — the first PATH entry holding an executable file; glibc's default
/// `/bin:/usr/bin` when there is no PATH — and the absolute path is spawned
/// (argv[0] stays as given). `None` leaves the lookup to `Command`: a name
/// with a slash, a PATH with a relative or empty entry (those mean the
/// child's working directory), or no match.
fn resolve_in_env_path(program: &str, env: &[(String, String)]) -> Option<PathBuf> {
    if program.is_empty() || program.contains('/') {
        return None;
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map_or("/bin:/usr/bin", |(_, v)| v.as_str());
    for dir in path.split(':') {
        if !dir.starts_with('/') {
            return None;
        }
        let candidate = Path::new(dir).join(program);
        let Ok(c) = CString::new(candidate.as_os_str().as_encoded_bytes()) else {
            return None;
        };
        let is_file = std::fs::metadata(&candidate).is_ok_and(|m| m.is_file());
        // SAFETY: `c` is a valid NUL-terminated path.
        if is_file && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            return Some(candidate);
        }
    }
    None
}

/// A pidfd for `pid` (Linux ≥ 5.3): readable once the process has exited.
#[cfg(target_os = "linux")]
pub fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: a plain syscall with integer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        None
    } else {
        // SAFETY: the kernel returned a fresh descriptor that we now own.
        Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }
}

/// macOS: a kqueue watching `pid` for its exit, readable once it has exited.
#[cfg(target_os = "macos")]
pub use crate::platform::macos::exit_watch as pidfd_open;

/// How `pid` ended, without reaping it (it stays a zombie, so its pid — and
/// so its process group id — cannot be reused while we still signal the
/// group). `block` waits for the exit; otherwise `None` means still running.
pub fn peek_exit(pid: i32, block: bool) -> Option<Exit> {
    // SAFETY: siginfo_t is plain data; waitid fills it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOWAIT | if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: valid pointer to a zeroed siginfo_t.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
        if r == 0 {
            break;
        }
        if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return None;
    }
    // SAFETY: waitid succeeded, so the child fields are set (si_pid 0 = nothing yet).
    unsafe {
        if info.si_pid() == 0 {
            return None;
        }
        let status = info.si_status();
        match info.si_code {
            libc::CLD_EXITED => Some(Exit::Code(status)),
            _ => Some(Exit::Signal(status)),
        }
    }
}

/// Collect the exited `pid` so it leaves no zombie.
pub fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: waitpid on our own child with a valid out pointer.
    unsafe {
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Set by the platform runner for the arm64 gnu suite under qemu-user
    /// (scripts/platforms/test.sh); musl reports exec errors through a pipe,
    /// which qemu does not affect.
    fn exec_errors_hidden() -> bool {
        cfg!(target_env = "gnu") && std::env::var_os("NLC_TEST_QEMU").is_some_and(|v| v == "1")
    }

    fn run(argv: &[&str], env: Option<&[(String, String)]>) -> (String, Exit) {
        let d = tempfile::tempdir().unwrap();
        let held = crate::sandbox::enter(d.path().to_str().unwrap(), ".").unwrap();
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let s = spawn(&argv, &held, env).unwrap();
        let mut out = String::new();
        std::fs::File::from(s.stdout)
            .read_to_string(&mut out)
            .unwrap();
        let exit = peek_exit(s.pid, true).unwrap();
        reap(s.pid);
        (out, exit)
    }

    #[test]
    fn runs_in_the_held_directory_in_its_own_group() {
        let (out, exit) = run(
            &["/bin/sh", "-c", "pwd -P; ps -o pgid= -p $$; echo $$"],
            None,
        );
        assert_eq!(exit, Exit::Code(0));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("/tmp") || lines[0].starts_with('/'));
        assert_eq!(
            lines[1].trim(),
            lines[2].trim(),
            "leads its own process group"
        );
    }

    #[test]
    fn env_is_replaced_when_given() {
        let env = vec![("ONLY".to_string(), "this".to_string())];
        let (out, _) = run(&["/usr/bin/env"], Some(&env));
        assert_eq!(out, "ONLY=this\n");
    }

    #[test]
    fn exit_codes_and_signals() {
        assert_eq!(run(&["/bin/sh", "-c", "exit 7"], None).1, Exit::Code(7));
        assert_eq!(
            run(&["/bin/sh", "-c", "kill -9 $$"], None).1,
            Exit::Signal(9)
        );
    }

    #[test]
    fn a_bare_name_runs_from_the_replacing_path_with_argv0_kept() {
        let env = vec![("PATH".to_string(), "/nonexistent:/usr/bin:/bin".to_string())];
        let (out, exit) = run(&["sh", "-c", "echo $0"], Some(&env));
        assert_eq!(exit, Exit::Code(0));
        assert_eq!(out, "sh\n");
        let found = resolve_in_env_path("sh", &env).unwrap();
        assert!(found.ends_with("sh") && found.is_absolute());
        assert_eq!(
            resolve_in_env_path("sh", &[]).unwrap().parent().unwrap(),
            Path::new("/bin")
        );
        let relative = vec![("PATH".to_string(), "bin:/usr/bin".to_string())];
        assert_eq!(resolve_in_env_path("sh", &relative), None);
        assert_eq!(resolve_in_env_path("/bin/sh", &env), None);
        assert_eq!(resolve_in_env_path("no-such-program-here", &env), None);
    }

    #[test]
    fn the_group_exists_as_soon_as_spawn_returns() {
        let d = tempfile::tempdir().unwrap();
        let held = crate::sandbox::enter(d.path().to_str().unwrap(), ".").unwrap();
        let argv: Vec<String> = ["/bin/sh", "-c", "sleep 30"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for _ in 0..50 {
            let s = spawn(&argv, &held, None).unwrap();
            // SAFETY: getpgid(2) with an integer argument.
            let pgid = unsafe { libc::getpgid(s.pid) };
            crate::signals::signal_group(s.pid, libc::SIGKILL);
            assert_eq!(pgid, s.pid, "the child leads its own group already");
            assert_eq!(peek_exit(s.pid, true), Some(Exit::Signal(libc::SIGKILL)));
            reap(s.pid);
        }
    }

    #[test]
    fn a_missing_executable_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let held = crate::sandbox::enter(d.path().to_str().unwrap(), ".").unwrap();
        let r = spawn(&["/no/such/program".to_string()], &held, None);
        if exec_errors_hidden() {
            // Under qemu-user glibc's posix_spawn cannot see the exec fail
            // (qemu runs its vfork as a fork): the child exits 127 instead.
            let s = r.unwrap();
            assert_eq!(peek_exit(s.pid, true), Some(Exit::Code(127)));
            reap(s.pid);
            return;
        }
        let e = r.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
