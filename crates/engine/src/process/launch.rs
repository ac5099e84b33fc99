//! A start request as spawn takes it, and the process it gives back.

use crate::platform::{BorrowedFd, OwnedFd};
use std::path::Path;

/// A terminal's master side, kept for its window size: the pseudo-terminal
/// master's descriptor on Unix.
#[cfg(unix)]
pub type Terminal = OwnedFd;
/// A terminal's master side, kept for its window size: the pseudo console
/// on Windows, whose closing ends the command's output (see the
/// supervisor).
#[cfg(windows)]
pub type Terminal = nlc_windows::conpty::PseudoConsole;

/// What spawn runs: the argv, the held working directory and the
/// environment (replacing the host's when given).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The program and its arguments, already checked.
    pub argv: &'a [String],
    /// The working directory, held open since the cwd check: the child
    /// enters it by descriptor (`fchdir`), so the directory checked is the
    /// one entered.
    pub dir: BorrowedFd<'a>,
    /// The replacing environment, if any.
    pub env: Option<&'a [(String, String)]>,
    /// What the command reads: /dev/null, a pipe, or a terminal.
    pub input: Input,
    /// A confined command's private temp directory, given to it as
    /// `TMPDIR`, `TMP` and `TEMP` (see [`spawn`](super::spawn)).
    pub tmp: Option<&'a Path>,
    /// The directory of the command's own cgroup, when it has one: the
    /// child is created in it, or enters it before its exec (see
    /// [`super::cgroup`]).
    pub cgroup: Option<super::cgroup::Handle<'a>>,
}

/// What a command reads, and where what it prints goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Input {
    /// stdin is /dev/null; stdout and stderr are pipes.
    #[default]
    Null,
    /// stdin is a pipe the caller writes; stdout and stderr are pipes.
    Pipe,
    /// stdin, stdout and stderr are a new pseudo-terminal of this size, the
    /// controlling terminal of the command's new session.
    Terminal {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    },
}

/// A started process whose exit nobody has collected yet.
#[derive(Debug)]
pub struct Spawned {
    /// Its pid, which is also its process group id.
    pub pid: i32,
    /// The read end of its stdout pipe, or the terminal's master side.
    pub stdout: OwnedFd,
    /// The read end of its stderr pipe (`None` in a terminal: it prints to
    /// the terminal).
    pub stderr: Option<OwnedFd>,
    /// Where its input is written: the write end of its stdin pipe, or the
    /// terminal's master side (`None` for /dev/null).
    pub stdin: Option<OwnedFd>,
    /// The terminal's master side, for its window size.
    pub terminal: Option<Terminal>,
}

/// The `TERM` a terminal command gets unless its environment names one
/// (on every platform: programs that read it render for what the terminal
/// shows).
pub const DEFAULT_TERM: &str = "xterm-256color";

/// The variables a private temp directory is given as (SPEC §8).
pub const TMP_NAMES: [&str; 3] = ["TMPDIR", "TMP", "TEMP"];

/// execvp's PATH when the environment names none.
pub const DEFAULT_PATH: &str = "/bin:/usr/bin";
