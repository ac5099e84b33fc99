//! Starting one process on Windows (SPEC §14), through the Win32 process
//! layer (`nlc_windows::command`): no shell, `argv[0]` found through `PATH`
//! and `PATHEXT`, a `.cmd`/`.bat` program run by the system's `cmd.exe`
//! with every argument quoted so it cannot be read as syntax (or refused,
//! naming the argument), the environment replaced or inherited, the
//! working directory the held handle names, stdin null or a pipe, stdout
//! and stderr pipes, and the process inside a Job Object of its own from
//! its first instruction. In terminal mode the process is attached to a
//! pseudo console of its own instead (`nlc_windows::terminal`): what it
//! types and shows go through the console's two pipes, and the console is
//! kept as the command's terminal.
//!
//! Each started command's job and process handle are kept by pid in
//! `trees` until [`reap`]; [`peek_exit`] and [`exit_notice`] read its exit
//! there.
//!
//! No thread waits per command: its pipes are overlapped (read through the
//! runtime's I/O completion port, see `platform::windows::pipe`) and its
//! exit is announced by the system's wait thread pool ([`exit_notice`]).

use std::io;
use std::os::windows::io::OwnedHandle;

use nlc_windows::command::{self, Start, StartError};
use nlc_windows::dir::HeldDir;

use super::launch::Request;
pub use super::launch::{Input, Spawned, Terminal, DEFAULT_PATH, DEFAULT_TERM, TMP_NAMES};
pub use super::trees::{exit_notice, peek_exit, reap, Exit};
use crate::platform::{BorrowedFd, OwnedFd};

fn into_io(e: StartError) -> io::Error {
    match e {
        StartError::Io(e) => e,
        StartError::NotFound(_) => io::Error::new(io::ErrorKind::NotFound, e.to_string()),
        StartError::Refused(_) => io::Error::new(io::ErrorKind::InvalidInput, e.to_string()),
    }
}

/// Why `argv` cannot be started safely in the directory `dir` with `env`
/// (`NLC_SHELL_SYNTAX`: an argument `cmd.exe` would read as syntax, a
/// program name that names a data stream), checked before a start is
/// reported; `None` when it can (a program that is not found settles as
/// "could not be started", as on Unix).
pub fn refusal(
    argv: &[String],
    dir: BorrowedFd<'_>,
    env: Option<&[(String, String)]>,
) -> Option<String> {
    let dir = HeldDir::duplicate(dir).ok()?;
    match command::check(&Start {
        argv,
        dir: &dir,
        env,
        stdin_pipe: false,
    }) {
        Err(StartError::Refused(r)) => Some(format!(
            "{r}: the command runs with NO shell, and a .cmd/.bat program is run by cmd.exe, which would read it as syntax. Pass such a value through env instead, or run the program the batch file runs directly"
        )),
        _ => None,
    }
}

/// Start what `req` describes (the one entry point of this module).
pub fn spawn(req: &Request<'_>) -> io::Result<Spawned> {
    let dir = HeldDir::duplicate(req.dir)?;
    let start = Start {
        argv: req.argv,
        dir: &dir,
        env: req.env,
        stdin_pipe: req.input == Input::Pipe,
    };
    if let Input::Terminal { cols, rows } = req.input {
        // `TERM` as on Unix, unless the environment names one: programs
        // that read it (git's pager, ports of Unix tools) get the terminal
        // the console renders for.
        let env = with_term(req.env);
        let start = Start {
            env: Some(&env),
            ..start
        };
        let t = nlc_windows::terminal::start_terminal(&start, cols, rows).map_err(into_io)?;
        let pid = t.pid as i32;
        super::trees::insert(pid, t.job, t.process);
        return Ok(Spawned {
            pid,
            stdout: t.output,
            stderr: None,
            stdin: Some(t.input),
            terminal: Some(t.console),
        });
    }
    let (started, pipes) = command::start_overlapped(&start).map_err(into_io)?;
    let pid = started.child.id() as i32;
    super::trees::insert(pid, started.job, OwnedHandle::from(started.child));
    Ok(Spawned {
        pid,
        stdout: pipes.stdout,
        stderr: Some(pipes.stderr),
        stdin: pipes.stdin,
        terminal: None,
    })
}

/// The environment of a terminal command: the replacing one or the host's,
/// with `TERM` added unless it names one (names ignore case). A host
/// variable that is not valid Unicode is left out.
fn with_term(env: Option<&[(String, String)]>) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = match env {
        Some(v) => v.to_vec(),
        None => std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
    };
    if !vars.iter().any(|(k, _)| k.eq_ignore_ascii_case("TERM")) {
        vars.push(("TERM".into(), DEFAULT_TERM.into()));
    }
    vars
}

/// Gives a terminal command's pseudo console a new window size.
pub fn resize_terminal(console: &Terminal, cols: u16, rows: u16) -> io::Result<()> {
    console.resize(cols, rows)
}

/// No descriptor becomes readable on a process's exit here: the caller
/// waits through [`exit_notice`].
pub fn pidfd_open(_pid: i32) -> Option<OwnedFd> {
    None
}
