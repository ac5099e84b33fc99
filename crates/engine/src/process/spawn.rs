//! The engine's spawns of one process: no shell, its own session (so its
//! own process group and no controlling terminal), stdin from /dev/null
//! (or a pipe the supervisor writes), both streams piped, the environment
//! replaced or inherited, and the working directory entered through the
//! held descriptor (`spawn_pipes`); or the leader of a new session on a
//! fresh pseudo-terminal (`spawn_in_terminal`). Which one a start takes —
//! and whether inside a namespace view — is decided by the transform
//! ([`super::transform::route`]), the one caller of both.
//!
//! On Linux both go through the engine's clone-based spawn
//! ([`super::vfork`]: vfork semantics, no copy of the host's memory, so
//! spawn cost does not grow with it, and the child created in its cgroup);
//! on macOS through the engine's own posix_spawn ([`super::posix_spawn`]).
//! No `pre_exec` hook is used and the host is never forked.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::launch::Request;
pub use super::launch::{Input, Spawned, Terminal, DEFAULT_PATH, DEFAULT_TERM, TMP_NAMES};

/// Start `req` with stdin from /dev/null or a pipe and both streams piped
/// ([`Route::Pipes`](super::transform::Route::Pipes)), or, with `plan`
/// (Linux, a `"full"` confined start), inside the plan's namespace view
/// ([`Route::View`](super::transform::Route::View)).
pub(super) fn spawn_pipes(
    req: &Request<'_>,
    plan: Option<&super::confine::Plan>,
) -> io::Result<Spawned> {
    let stdin_pipe = req.input == Input::Pipe;
    // Linux: the clone-based spawn adds a private temp directory to the
    // environment itself, and the child is born in its cgroup.
    #[cfg(target_os = "linux")]
    {
        let view = match plan {
            Some(plan) => Some(super::sandbox::View::prepare(plan, req.dir, None)?),
            None => None,
        };
        spawn_cloned(
            req.argv,
            req.dir,
            req.env,
            req.tmp,
            stdin_pipe,
            req.cgroup,
            view.as_ref(),
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        if plan.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the namespace sandbox is Linux's",
            ));
        }
        // macOS: a private temp directory to add to the environment: the
        // engine's own posix_spawn builds the child's environment strings
        // once (`Command` would copy every variable into a map first).
        if req.tmp.is_some() {
            return spawn_piped_own(req.argv, req.dir, req.env, req.tmp, stdin_pipe, req.cgroup);
        }
        spawn_piped(req.argv, req.dir, req.env, stdin_pipe, req.cgroup)
    }
}

/// Move a child started by posix_spawn (which runs no code of ours in the
/// child) into its cgroup from the parent's side. Only where no start goes
/// through the clone-based spawn (not Linux, where every start is born in
/// its cgroup: cgroups are Linux's, so this has nothing to move).
#[cfg(not(target_os = "linux"))]
fn enter_cgroup(pid: i32, cgroup: Option<super::cgroup::Handle<'_>>) -> io::Result<()> {
    let Some(c) = cgroup else {
        return Ok(());
    };
    let pid_text = pid.to_string();
    for procs in std::iter::once(c.procs).chain(c.extra.into_iter().flatten()) {
        if let Err(e) = rustix::io::write(procs, pid_text.as_bytes()) {
            return Err(stop_unreported(pid, e.into()));
        }
    }
    Ok(())
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

/// Linux: start `argv` with the engine's own clone-based spawn
/// ([`super::vfork`]): the held directory entered by descriptor (or, with
/// `view`, the namespace sandbox entered instead), the host's environment
/// passed as it is (`env` replaces it when given, `tmp` is added to it),
/// stdin from /dev/null or a pipe the supervisor writes.
#[cfg(target_os = "linux")]
#[allow(clippy::too_many_arguments)]
fn spawn_cloned(
    argv: &[String],
    dir: std::os::fd::BorrowedFd<'_>,
    env: Option<&[(String, String)]>,
    tmp: Option<&Path>,
    stdin_pipe: bool,
    cgroup: Option<super::cgroup::Handle<'_>>,
    view: Option<&super::sandbox::View>,
) -> io::Result<Spawned> {
    let envp = match (env, tmp) {
        (None, None) => None,
        _ => Some(envp_with(env, tmp)?),
    };
    let c_argv = c_strings(argv)?;
    let path = child_search(argv, env);
    // It returns once the child has exec'd (or, under qemu-user, once the
    // exec closed the report pipe): the group exists already.
    let p = super::vfork::spawn_piped(
        &c_argv[0],
        path.as_deref(),
        &c_argv,
        envp.as_deref(),
        dir,
        stdin_pipe,
        cgroup,
        view,
    )?;
    Ok(Spawned {
        pid: p.pid,
        stdout: p.stdout,
        stderr: Some(p.stderr),
        stdin: p.stdin,
        terminal: None,
    })
}

/// argv in C form and what to execute, as execvp would: a name with a slash
/// runs as given; a bare name is resolved in the replacing environment's
/// PATH when one is given, else looked up in the host's (`search`).
fn program_and_argv(
    req_argv: &[String],
    env: Option<&[(String, String)]>,
) -> io::Result<(CString, bool, Vec<CString>)> {
    let argv = c_strings(req_argv)?;
    let resolved = env.and_then(|e| resolve_in_env_path(&req_argv[0], e));
    let search = resolved.is_none() && !req_argv[0].contains('/');
    let program = match &resolved {
        Some(p) => c_string(p.as_os_str().as_bytes())?,
        None => argv[0].clone(),
    };
    Ok((program, search, argv))
}

/// macOS: the engine's own posix_spawn with the held directory entered by
/// descriptor (there is no `/proc/self/fd` path to give `Command`); see
/// [`super::posix_spawn::spawn_piped`].
#[cfg(target_os = "macos")]
fn spawn_piped(
    req_argv: &[String],
    dir: std::os::fd::BorrowedFd<'_>,
    env: Option<&[(String, String)]>,
    stdin_pipe: bool,
    cgroup: Option<super::cgroup::Handle<'_>>,
) -> io::Result<Spawned> {
    spawn_piped_own(req_argv, dir, env, None, stdin_pipe, cgroup)
}

/// The `NAME=value` strings of the child's environment: the replacing `env`
/// when given, else the host's; with `tmp`, `TMPDIR`, `TMP` and `TEMP`
/// pointed at it — added to a replacing environment unless it names them,
/// set over the host's inherited ones.
fn envp_with(env: Option<&[(String, String)]>, tmp: Option<&Path>) -> io::Result<Vec<CString>> {
    fn entry(k: &[u8], v: &[u8]) -> io::Result<CString> {
        let mut e = Vec::with_capacity(k.len() + v.len() + 1);
        e.extend_from_slice(k);
        e.push(b'=');
        e.extend_from_slice(v);
        c_string(&e)
    }
    let mut envp = match env {
        Some(e) => e
            .iter()
            .map(|(k, v)| entry(k.as_bytes(), v.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?,
        None => std::env::vars_os()
            .filter(|(k, _)| tmp.is_none() || !TMP_NAMES.iter().any(|n| k == *n))
            .map(|(k, v)| entry(k.as_bytes(), v.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?,
    };
    if let Some(tmp) = tmp {
        for n in TMP_NAMES {
            let named = env.is_some_and(|e| e.iter().any(|(k, _)| k == n));
            if !named {
                envp.push(entry(n.as_bytes(), tmp.as_os_str().as_bytes())?);
            }
        }
    }
    Ok(envp)
}

/// Start a piped command with the engine's own posix_spawn: the held
/// directory entered by descriptor, the environment built straight into
/// the `NAME=value` strings the child gets. macOS starts every piped command
/// this way (Linux none: its clone-based spawn does the same and creates
/// the child in its cgroup).
#[cfg(not(target_os = "linux"))]
fn spawn_piped_own(
    req_argv: &[String],
    dir: std::os::fd::BorrowedFd<'_>,
    env: Option<&[(String, String)]>,
    tmp: Option<&Path>,
    stdin_pipe: bool,
    cgroup: Option<super::cgroup::Handle<'_>>,
) -> io::Result<Spawned> {
    let envp = envp_with(env, tmp)?;
    let (program, search, argv) = program_and_argv(req_argv, env)?;
    let p = super::posix_spawn::spawn_piped(&program, search, &argv, &envp, dir, stdin_pipe)?;
    await_own_session(p.pid);
    enter_cgroup(p.pid, cgroup)?;
    Ok(Spawned {
        pid: p.pid,
        stdout: p.stdout,
        stderr: Some(p.stderr),
        stdin: p.stdin,
        terminal: None,
    })
}

/// The PATH the clone-based child looks a bare program name up in, as
/// execvp would (`None`: a name with a slash runs as given): the replacing
/// environment's when one is given, else the host's, relative entries
/// against the command's directory.
#[cfg(target_os = "linux")]
fn child_search(argv: &[String], env: Option<&[(String, String)]>) -> Option<Vec<u8>> {
    (!argv[0].contains('/')).then(|| match env {
        Some(e) => path_of(e).as_bytes().to_vec(),
        None => super::vfork::host_path(),
    })
}

/// argv in C form.
fn c_strings(argv: &[String]) -> io::Result<Vec<CString>> {
    argv.iter().map(|a| c_string(a.as_bytes())).collect()
}

/// The PATH of a replacing environment (its last, as the child's getenv
/// would see it), else execvp's default.
fn path_of(env: &[(String, String)]) -> &str {
    env.iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map_or(DEFAULT_PATH, |(_, v)| v.as_str())
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument or environment entry contains a NUL character",
        )
    })
}

/// Open a pseudo-terminal of `cols`×`rows` and start the command as the
/// leader of a new session whose controlling terminal it is. The host keeps
/// only the master side (never the slave, so the master reads end of file —
/// EIO — once every process of the session has closed the terminal).
///
/// With `plan` (Linux, a `"full"` confined start) the child is the
/// engine's own clone into the plan's namespace sandbox.
pub(super) fn spawn_in_terminal(
    req: &Request<'_>,
    cols: u16,
    rows: u16,
    plan: Option<&super::confine::Plan>,
) -> io::Result<Spawned> {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    #[cfg(target_os = "linux")]
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    // macOS's posix_openpt takes no O_CLOEXEC: set it at once.
    #[cfg(not(target_os = "linux"))]
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
    #[cfg(not(target_os = "linux"))]
    rustix::io::fcntl_setfd(&master, rustix::io::FdFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let slave = ptsname(&master, Vec::new())?;
    rustix::termios::tcsetwinsize(
        &master,
        rustix::termios::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )?;
    // The host's own environment byte for byte when none replaces it, with
    // a confined start's private temp directory and a default TERM.
    let mut envp = envp_with(req.env, req.tmp)?;
    if !envp.iter().any(|e| e.as_bytes().starts_with(b"TERM=")) {
        envp.push(c_string(format!("TERM={DEFAULT_TERM}").as_bytes())?);
    }
    let (program, search, argv) = program_and_argv(req.argv, req.env)?;
    // Linux: the engine's clone-based spawn, the child born in its cgroup
    // (and, with `plan`, in its namespace sandbox, where it opens its
    // terminal by the same path).
    #[cfg(target_os = "linux")]
    let pid = {
        let view = match plan {
            Some(plan) => {
                let node = Path::new(std::ffi::OsStr::from_bytes(slave.to_bytes()));
                Some(super::sandbox::View::prepare(plan, req.dir, Some(node))?)
            }
            None => None,
        };
        let path = search.then(super::vfork::host_path);
        super::vfork::spawn_in_terminal(
            &program,
            path.as_deref(),
            &argv,
            &envp,
            req.dir,
            &slave,
            req.cgroup,
            view.as_ref(),
        )?
    };
    #[cfg(not(target_os = "linux"))]
    let pid = {
        if plan.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the namespace sandbox is Linux's",
            ));
        }
        let pid = super::posix_spawn::spawn_in_terminal(&super::posix_spawn::TerminalSpawn {
            program: &program,
            search,
            argv: &argv,
            envp: &envp,
            dir: req.dir,
            slave: &slave,
        })?;
        enter_cgroup(pid, req.cgroup)?;
        pid
    };
    await_own_session(pid);
    // Non-blocking for the supervisor's event loop (the flag belongs to the
    // open file, so the copies below share it).
    let nonblocking = rustix::io::ioctl_fionbio(&master, true);
    let reader = master.as_fd().try_clone_to_owned();
    let writer = master.as_fd().try_clone_to_owned();
    let (reader, writer) = match (nonblocking, reader, writer) {
        (Ok(()), Ok(r), Ok(w)) => (r, w),
        (Err(e), _, _) => return Err(stop_unreported(pid, e.into())),
        (_, Err(e), _) | (_, _, Err(e)) => return Err(stop_unreported(pid, e)),
    };
    Ok(Spawned {
        pid,
        stdout: reader,
        stderr: None,
        stdin: Some(writer),
        terminal: Some(master),
    })
}

/// Return once `pid` leads its own session (so its group exists for a kill
/// of the group), or has ended. With vfork semantics that is so when
/// posix_spawn returns (the first check passes); under qemu-user, which runs a
/// vfork as a plain fork, the child may not have run `setsid` yet, and unlike
/// a process group a session cannot be made from the parent's
/// side (the posix_spawn of piped commands asks for a session too).
/// Bounded (about 5 s) so a child stuck before its exec cannot hold the start.
fn await_own_session(pid: i32) {
    let Some(p) = rustix::process::Pid::from_raw(pid) else {
        return;
    };
    let mut waited = std::time::Duration::ZERO;
    let mut step = std::time::Duration::from_micros(20);
    while waited < std::time::Duration::from_secs(5) {
        match rustix::process::getsid(Some(p)) {
            Ok(sid) if sid == p => return,
            Err(_) => return,
            Ok(_) if peek_exit(pid, false).is_some() => return,
            Ok(_) => {}
        }
        std::thread::sleep(step);
        waited += step;
        step = (step * 2).min(std::time::Duration::from_millis(5));
    }
}

/// The caller never learns of a process whose start failed half way: stop
/// and collect it here, and hand the error on.
fn stop_unreported(pid: i32, e: io::Error) -> io::Error {
    super::signals::signal_group(pid, libc::SIGKILL);
    let _ = peek_exit(pid, true);
    reap(pid);
    e
}

/// Set a terminal's window size; the kernel sends SIGWINCH to the
/// terminal's foreground process group.
pub fn resize_terminal(master: &OwnedFd, cols: u16, rows: u16) -> io::Result<()> {
    rustix::termios::tcsetwinsize(
        master,
        rustix::termios::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )?;
    Ok(())
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
pub(super) fn resolve_in_env_path(program: &str, env: &[(String, String)]) -> Option<PathBuf> {
    if program.is_empty() || program.contains('/') {
        return None;
    }
    for dir in path_of(env).split(':') {
        if !dir.starts_with('/') {
            return None;
        }
        let candidate = Path::new(dir).join(program);
        if candidate.as_os_str().as_encoded_bytes().contains(&0) {
            return None;
        }
        let is_file = std::fs::metadata(&candidate).is_ok_and(|m| m.is_file());
        if is_file && rustix::fs::access(&candidate, rustix::fs::Access::EXEC_OK).is_ok() {
            return Some(candidate);
        }
    }
    None
}

/// A pidfd for `pid` (Linux ≥ 5.3), on macOS a kqueue watching it: readable
/// once the process has exited.
pub fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    crate::platform::exit_watch(pid)
}

/// How `pid` ended, without reaping it (it stays a zombie, so its pid — and
/// so its process group id — cannot be reused while we still signal the
/// group). `block` waits for the exit; otherwise `None` means still running.
pub fn peek_exit(pid: i32, block: bool) -> Option<Exit> {
    use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
    let pid = Pid::from_raw(pid)?;
    let mut flags = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
    if !block {
        flags |= WaitIdOptions::NOHANG;
    }
    let status = loop {
        match waitid(WaitId::Pid(pid), flags) {
            Ok(status) => break status?,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return None,
        }
    };
    // The child ended (WEXITED only reports exits): by a code or a signal.
    match status.exit_status() {
        Some(code) if status.exited() => Some(Exit::Code(code)),
        _ => Some(Exit::Signal(status.terminating_signal().unwrap_or(0))),
    }
}

/// Collect the exited `pid` so it leaves no zombie.
pub fn reap(pid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::unless_busy;

    /// An unconfined start, as every caller makes it: through the transform.
    fn spawn(req: &Request<'_>) -> io::Result<Spawned> {
        crate::process::transform::start(req, None)
    }

    #[test]
    fn a_private_temp_directory_is_added_unless_the_replacing_env_names_it() {
        let strings = |v: Vec<CString>| -> Vec<String> {
            v.into_iter().map(|c| c.into_string().unwrap()).collect()
        };
        let tmp = Path::new("/t/private");
        let given = vec![("PATH".to_string(), "/bin".to_string())];
        assert_eq!(
            strings(envp_with(Some(&given), Some(tmp)).unwrap()),
            [
                "PATH=/bin",
                "TMPDIR=/t/private",
                "TMP=/t/private",
                "TEMP=/t/private"
            ]
        );
        let named = vec![("TMPDIR".to_string(), "/mine".to_string())];
        assert_eq!(
            strings(envp_with(Some(&named), Some(tmp)).unwrap()),
            ["TMPDIR=/mine", "TMP=/t/private", "TEMP=/t/private"]
        );
        assert_eq!(
            strings(envp_with(Some(&given), None).unwrap()),
            ["PATH=/bin"]
        );
        // The host's environment: its own temp variables replaced.
        let host = strings(envp_with(None, Some(tmp)).unwrap());
        for n in TMP_NAMES {
            let set: Vec<_> = host
                .iter()
                .filter(|e| e.starts_with(&format!("{n}=")))
                .collect();
            assert_eq!(set, [&format!("{n}=/t/private")]);
        }
        assert!(host.iter().any(|e| e.starts_with("PATH=")));
    }
    use std::io::Read;

    fn run(argv: &[&str], env: Option<&[(String, String)]>) -> (String, Exit) {
        let d = tempfile::tempdir().unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), ".").unwrap();
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let s = spawn(&Request {
            argv: &argv,
            dir: held.fd.as_fd(),
            env,
            input: Input::Null,
            tmp: None,
            cgroup: None,
        })
        .unwrap();
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
    fn a_bare_name_is_looked_up_in_the_commands_path_only() {
        // The host's PATH has sh; a replacing environment whose PATH does not
        // is not rescued by it.
        let d = tempfile::tempdir().unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), ".").unwrap();
        // `path`: the replacing environment's PATH, or None for the host's.
        let start = |argv: &[&str], path: Option<&str>| {
            let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
            let env = path.map(|p| [("PATH".to_string(), p.to_string())]);
            unless_busy(|| {
                spawn(&Request {
                    argv: &argv,
                    dir: held.fd.as_fd(),
                    env: env.as_ref().map(|e| &e[..]),
                    input: Input::Null,
                    tmp: None,
                    cgroup: None,
                })
            })
        };
        let refused = start(&["sh", "-c", "exit 0"], Some("/nonexistent-nlc")).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::NotFound);
        // Control: with the host's environment, the host's PATH finds it.
        let s = start(&["sh", "-c", "exit 0"], None).unwrap();
        assert_eq!(peek_exit(s.pid, true), Some(Exit::Code(0)));
        reap(s.pid);
        // A relative entry is looked up from the command's directory.
        std::fs::create_dir(d.path().join("tools")).unwrap();
        let tool = d.path().join("tools/hello");
        std::fs::write(&tool, "#!/bin/sh\necho hello from $0\n").unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let s = start(&["hello"], Some("/nonexistent-nlc:tools")).unwrap();
        let mut out = String::new();
        std::fs::File::from(s.stdout)
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(peek_exit(s.pid, true), Some(Exit::Code(0)));
        reap(s.pid);
        assert_eq!(out, "hello from tools/hello\n");
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
    fn a_missing_executable_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), ".").unwrap();
        let r = spawn(&Request {
            argv: &["/no/such/program".to_string()],
            dir: held.fd.as_fd(),
            env: None,
            input: Input::Null,
            tmp: None,
            cgroup: None,
        });
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    /// A kill of the group sent right after the start must find the group
    /// (the hang once seen under qemu-user: a SIGKILL lost to ESRCH while the
    /// command ran on), piped and in a terminal.
    #[test]
    fn the_group_exists_as_soon_as_spawn_returns() {
        let d = tempfile::tempdir().unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), ".").unwrap();
        let argv: Vec<String> = ["/bin/sh", "-c", "sleep 30"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for input in [Input::Null, Input::Terminal { cols: 80, rows: 24 }] {
            for _ in 0..25 {
                let s = spawn(&Request {
                    argv: &argv,
                    dir: held.fd.as_fd(),
                    env: None,
                    input,
                    tmp: None,
                    cgroup: None,
                })
                .unwrap();
                // SAFETY: getpgid(2) with an integer argument.
                let pgid = unsafe { libc::getpgid(s.pid) };
                super::super::signals::signal_group(s.pid, libc::SIGKILL);
                assert_eq!(
                    pgid, s.pid,
                    "the child leads its own group already ({input:?})"
                );
                assert_eq!(peek_exit(s.pid, true), Some(Exit::Signal(libc::SIGKILL)));
                reap(s.pid);
            }
        }
    }

    fn run_in_terminal(argv: &[&str]) -> (String, Exit, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), ".").unwrap();
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let s = spawn(&Request {
            argv: &argv,
            dir: held.fd.as_fd(),
            env: None,
            input: Input::Terminal { cols: 77, rows: 11 },
            tmp: None,
            cgroup: None,
        })
        .unwrap();
        assert!(s.stderr.is_none() && s.stdin.is_some() && s.terminal.is_some());
        drop(s.stdin);
        drop(s.terminal);
        // The master reads EIO once the session has closed the terminal.
        let mut out = Vec::new();
        let mut f = std::fs::File::from(s.stdout);
        let mut buf = [0u8; 4096];
        loop {
            match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(5))
                }
                Err(_) => break,
            }
        }
        let exit = peek_exit(s.pid, true).unwrap();
        reap(s.pid);
        (String::from_utf8(out).unwrap(), exit, held.real.clone())
    }

    #[test]
    fn a_terminal_command_leads_its_session_in_the_held_directory() {
        let (out, exit, dir) = run_in_terminal(&[
            "sh",
            "-c",
            "test -t 0 && test -t 1 && test -t 2 && echo ttys; stty size; pwd -P; echo $TERM; ps -o sid= -o pgid= -p $$; echo $$",
        ]);
        assert_eq!(exit, Exit::Code(0));
        let lines: Vec<&str> = out.split("\r\n").collect();
        assert_eq!(lines[0], "ttys");
        assert_eq!(lines[1], "11 77");
        assert_eq!(Path::new(lines[2]), dir);
        let term = std::env::var("TERM").unwrap_or_else(|_| DEFAULT_TERM.to_string());
        assert_eq!(lines[3], term);
        let ids: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(
            ids,
            vec![lines[5], lines[5]],
            "session and group are its pid"
        );
    }

    #[test]
    fn a_terminal_command_that_cannot_start_is_an_error() {
        // (Under qemu-user too: the clone-based spawn reports a failed exec
        // through a pipe where the clone ran as a fork.)
        let d = tempfile::tempdir().unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), ".").unwrap();
        for name in ["/no/such/program", "no-such-program-here"] {
            let r = spawn(&Request {
                argv: &[name.to_string()],
                dir: held.fd.as_fd(),
                env: None,
                input: Input::Terminal { cols: 80, rows: 24 },
                tmp: None,
                cgroup: None,
            });
            assert_eq!(r.unwrap_err().kind(), io::ErrorKind::NotFound, "{name}");
        }
    }
}
