//! Starting one command on Windows (SPEC §14), the counterpart of the
//! engine's `process::spawn`: no shell; `argv[0]` found through `PATH` and
//! `PATHEXT` (of the command's environment when it is replaced); a
//! `.cmd`/`.bat` program run by the system's `cmd.exe` with every argument
//! quoted so it cannot be read as syntax, or refused naming the argument; the
//! environment replaced or inherited; the working directory the held handle
//! names; stdin null or a pipe, stdout and stderr pipes; the process in a
//! Job Object of its own from its first instruction.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::OwnedHandle;
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use windows_sys::Win32::System::SystemInformation::GetSystemDirectoryW;

use crate::cmdline::{args_line, batch_args, cmd_can_run_in, is_batch, Refusal};
use crate::dir::HeldDir;
use crate::job::Job;
use crate::pipe::{self, Direction};
use crate::search::find_program;

/// What to start.
pub struct Start<'a> {
    /// The program and its arguments (already allowed by the caller).
    pub argv: &'a [String],
    /// The working directory, held since the cwd check.
    pub dir: &'a HeldDir,
    /// The replacing environment, if any (else the host's is inherited).
    pub env: Option<&'a [(String, String)]>,
    /// stdin is a pipe the caller writes (else it reads nothing: NUL).
    pub stdin_pipe: bool,
}

/// A started command: its job (dropping it ends every process in it) and
/// its main process, whose `stdout`/`stderr` (and `stdin`) are pipes.
pub struct Started {
    /// The command's Job Object.
    pub job: Job,
    /// Its main process.
    pub child: Child,
    /// The program that runs: the file `argv[0]` was resolved to, or
    /// `cmd.exe` for a batch program.
    pub program: PathBuf,
}

/// Why a command did not start.
#[derive(Debug)]
pub enum StartError {
    /// An argument cannot be passed safely (`NLC_SHELL_SYNTAX`): never run.
    Refused(Refusal),
    /// `argv[0]` names no file (searched through `PATH`/`PATHEXT`).
    NotFound(String),
    /// The system refused the start.
    Io(io::Error),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::Refused(r) => write!(f, "{r}: refused, not run"),
            StartError::NotFound(p) => write!(f, "{p:?} was not found through PATH and PATHEXT"),
            StartError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StartError {}

/// A variable of the command's environment (names ignore case, as Windows').
fn var(env: Option<&[(String, String)]>, name: &str) -> Option<String> {
    match env {
        Some(vars) => vars
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone()),
        None => std::env::var(name).ok(),
    }
}

/// The system's own `cmd.exe` (never `%ComSpec%`, which the environment sets).
fn system_cmd() -> io::Result<PathBuf> {
    let mut buf = [0u16; 512];
    // SAFETY: the buffer is writable for its length.
    let n = unsafe { GetSystemDirectoryW(buf.as_mut_ptr(), buf.len() as u32) } as usize;
    if n == 0 || n >= buf.len() {
        return Err(io::Error::last_os_error());
    }
    Ok(PathBuf::from(OsString::from_wide(&buf[..n])).join("cmd.exe"))
}

/// Everything [`start`] checks, without starting anything: the program it
/// would run, or why it would not start (a refused argument, a program not
/// found). A caller refuses a start with this before it reports one.
pub fn check(s: &Start<'_>) -> Result<PathBuf, StartError> {
    resolve(s).map(|p| p.program)
}

/// Starts `s` (see the module docs).
pub fn start(s: &Start<'_>) -> Result<Started, StartError> {
    let resolved = resolve(s)?;
    let mut cmd = command(&resolved, s);
    let job = Job::new().map_err(StartError::Io)?;
    let child = job.spawn(&mut cmd).map_err(StartError::Io)?;
    Ok(Started {
        job,
        child,
        program: resolved.program,
    })
}

/// The runner's ends of a command's pipes, overlapped (see [`crate::pipe`]).
#[derive(Debug)]
pub struct Pipes {
    /// Where its input is written, when `stdin_pipe` (else it reads NUL).
    pub stdin: Option<OwnedHandle>,
    /// Where its stdout is read.
    pub stdout: OwnedHandle,
    /// Where its stderr is read.
    pub stderr: OwnedHandle,
}

/// [`start`], with the standard streams on pipes whose runner ends are
/// overlapped, returned beside the child (whose own `stdin`, `stdout` and
/// `stderr` are then `None`): for a runner that waits on them through an
/// I/O completion port rather than with a thread each.
pub fn start_overlapped(s: &Start<'_>) -> Result<(Started, Pipes), StartError> {
    let resolved = resolve(s)?;
    let mut cmd = command(&resolved, s);
    let out = pipe::pair(Direction::FromCommand).map_err(StartError::Io)?;
    let err = pipe::pair(Direction::FromCommand).map_err(StartError::Io)?;
    let input = if s.stdin_pipe {
        Some(pipe::pair(Direction::ToCommand).map_err(StartError::Io)?)
    } else {
        None
    };
    cmd.stdout(Stdio::from(out.theirs))
        .stderr(Stdio::from(err.theirs));
    let stdin = input.map(|p| {
        cmd.stdin(Stdio::from(p.theirs));
        p.ours
    });
    let job = Job::new().map_err(StartError::Io)?;
    let child = job.spawn(&mut cmd).map_err(StartError::Io)?;
    // The command's ends close here (the child holds its own copies): end
    // of file comes once the command's tree has closed them.
    drop(cmd);
    Ok((
        Started {
            job,
            child,
            program: resolved.program,
        },
        Pipes {
            stdin,
            stdout: out.ours,
            stderr: err.ours,
        },
    ))
}

/// What runs for a start: the program file (`cmd.exe` for a batch
/// program) and the command line after its name.
pub(crate) struct Resolved {
    /// The program file.
    pub(crate) program: PathBuf,
    /// The arguments, quoted for the program's parser (may be empty).
    pub(crate) args: String,
}

/// The program and command line that run `s`, or why it cannot run.
pub(crate) fn resolve(s: &Start<'_>) -> Result<Resolved, StartError> {
    let Some(program) = s.argv.first() else {
        return Err(StartError::NotFound(String::new()));
    };
    if program.contains(['"', '\0']) {
        return Err(StartError::Refused(Refusal {
            index: 0,
            arg: program.clone(),
            reason: "contains a double quote or NUL, which no Windows program name can",
        }));
    }
    // `x.cmd::$DATA` names the file x.cmd through its data stream: Windows
    // would run it as the batch file its name hides. No program name needs
    // a `:` but a drive's (`C:`).
    let drive = program.len() >= 2
        && program.as_bytes()[0].is_ascii_alphabetic()
        && program.as_bytes()[1] == b':';
    if program[if drive { 2 } else { 0 }..].contains(':') {
        return Err(StartError::Refused(Refusal {
            index: 0,
            arg: program.clone(),
            reason: "names an alternate data stream (a ':' after the drive)",
        }));
    }
    // A relative path is relative to the command's directory, not the host's.
    let base = s.dir.path();
    let is_file = |p: &Path| base.join(p).is_file();
    let found = find_program(
        program,
        var(s.env, "PATH").as_deref(),
        var(s.env, "PATHEXT").as_deref(),
        is_file,
    )
    .ok_or_else(|| StartError::NotFound(program.clone()))?;
    let found = base.join(found);
    // `x.cmd::$DATA` names the file x.cmd through its data stream: Windows
    // would run it as the batch file its name hides. No program name needs
    // a stream.
    if found
        .file_name()
        .is_some_and(|n| n.to_string_lossy().contains(':'))
    {
        return Err(StartError::Refused(Refusal {
            index: 0,
            arg: program.clone(),
            reason: "names an alternate data stream (':' in the file name)",
        }));
    }
    if is_batch(&found) {
        if !cmd_can_run_in(base) {
            return Err(StartError::Refused(Refusal {
                index: 0,
                arg: program.clone(),
                reason: "is a batch program and the working directory is a UNC path, where cmd.exe would run in the Windows directory instead",
            }));
        }
        let script = found
            .to_str()
            .ok_or_else(|| StartError::NotFound(program.clone()))?;
        let args = batch_args(script, &s.argv[1..], 1).map_err(StartError::Refused)?;
        let program = system_cmd().map_err(StartError::Io)?;
        Ok(Resolved { program, args })
    } else {
        let args = args_line(&s.argv[1..], 1).map_err(StartError::Refused)?;
        Ok(Resolved {
            program: found,
            args,
        })
    }
}

/// The `Command` that runs what [`resolve`] found for `s`.
fn command(r: &Resolved, s: &Start<'_>) -> Command {
    let mut cmd = Command::new(&r.program);
    if !r.args.is_empty() {
        cmd.raw_arg(&r.args);
    }
    if let Some(vars) = s.env {
        cmd.env_clear();
        cmd.envs(vars.iter().map(|(k, v)| (k, v)));
    }
    cmd.current_dir(s.dir.path())
        .stdin(if s.stdin_pipe {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}
