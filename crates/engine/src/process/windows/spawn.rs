//! Starting one process on Windows (SPEC §14), through the Win32 process
//! layer (`nlc_windows::command`): no shell, `argv[0]` found through `PATH`
//! and `PATHEXT`, a `.cmd`/`.bat` program run by the system's `cmd.exe`
//! with every argument quoted so it cannot be read as syntax (or refused,
//! naming the argument), the environment replaced or inherited, the
//! working directory the held handle names, stdin null or a pipe, stdout
//! and stderr pipes, and the process inside a Job Object of its own from
//! its first instruction.
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
pub use super::launch::{Input, Spawned, DEFAULT_PATH};
pub use super::trees::{exit_notice, peek_exit, reap, Exit};
use crate::platform::{BorrowedFd, OwnedFd};

/// The `TERM` a terminal command gets unless its environment names one.
pub const DEFAULT_TERM: &str = "xterm-256color";

/// The variables a private temp directory is given as.
pub const TMP_NAMES: [&str; 3] = ["TMPDIR", "TMP", "TEMP"];

/// Why a terminal start is refused on Windows (a pseudo console is not
/// offered yet).
pub const TERMINAL_UNAVAILABLE: &str = "terminal mode (a pseudo console, ConPTY) is not available on Windows yet: start the command without terminal (stdin \"pipe\" or \"ignore\")";

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
    if let Input::Terminal { .. } = req.input {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            TERMINAL_UNAVAILABLE,
        ));
    }
    let dir = HeldDir::duplicate(req.dir)?;
    let (started, pipes) = command::start_overlapped(&Start {
        argv: req.argv,
        dir: &dir,
        env: req.env,
        stdin_pipe: req.input == Input::Pipe,
    })
    .map_err(into_io)?;
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

/// A terminal's window size: no terminal exists on Windows yet.
pub fn resize_terminal(_master: &OwnedFd, _cols: u16, _rows: u16) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        TERMINAL_UNAVAILABLE,
    ))
}

/// No descriptor becomes readable on a process's exit here: the caller
/// waits through [`exit_notice`].
pub fn pidfd_open(_pid: i32) -> Option<OwnedFd> {
    None
}
