//! Starting one process on Windows (SPEC §14), through the Win32 process
//! layer (`nlc_windows::command`): no shell, `argv[0]` found through `PATH`
//! and `PATHEXT`, a `.cmd`/`.bat` program run by the system's `cmd.exe`
//! with every argument quoted so it cannot be read as syntax (or refused,
//! naming the argument), the environment replaced or inherited, the
//! working directory the held handle names, stdin null or a pipe, stdout
//! and stderr pipes, and the process inside a Job Object of its own from
//! its first instruction.
//!
//! Shared code knows a command by its pid (on Unix the kernel keeps the
//! rest). Here the engine keeps it: each started command's job and process
//! handle, by pid, until [`reap`]. While the process handle is held the pid
//! cannot be reused, as a zombie's cannot on Unix. [`peek_exit`] waits on
//! that handle; `signals::signal_group` stops the job.
//!
//! No thread waits per command: its pipes are overlapped (read through the
//! runtime's I/O completion port, see `platform::windows::pipe`) and its
//! exit is announced by the system's wait thread pool ([`exit_notice`]).

use std::collections::HashMap;
use std::ffi::c_void;
use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use nlc_windows::command::{self, Start, StartError};
use nlc_windows::dir::HeldDir;
use nlc_windows::job::Job;
use tokio::sync::oneshot;
use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, RegisterWaitForSingleObject, UnregisterWaitEx, WaitForSingleObject,
    INFINITE, WT_EXECUTEONLYONCE,
};

use super::launch::Request;
pub use super::launch::{Input, Spawned, DEFAULT_PATH};
use crate::platform::{BorrowedFd, OwnedFd};
use crate::sync::Unpoisoned;

/// The `TERM` a terminal command gets unless its environment names one.
pub const DEFAULT_TERM: &str = "xterm-256color";

/// The variables a private temp directory is given as.
pub const TMP_NAMES: [&str; 3] = ["TMPDIR", "TMP", "TEMP"];

/// Why a terminal start is refused on Windows (a pseudo console is not
/// offered yet).
pub const TERMINAL_UNAVAILABLE: &str = "terminal mode (a pseudo console, ConPTY) is not available on Windows yet: start the command without terminal (stdin \"pipe\" or \"ignore\")";

/// The exit code of a process the runner terminated with its job.
const TERMINATED: u32 = 137;

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code (a Windows exit code, as an i32).
    Code(i32),
    /// The runner ended it (its job terminated): the signal it used.
    Signal(i32),
}

/// One started command: its job, its main process, and the signal the
/// runner ended the job with (0: it did not).
struct Tree {
    job: Job,
    process: OwnedHandle,
    ended_by: AtomicI32,
    /// The registered wait of [`exit_notice`], until [`reap`].
    wait: Mutex<Option<Registered>>,
}

/// A wait registered with the system's thread pool and the context its
/// callback borrows (one count of the `Arc`, given back after unregistering).
struct Registered {
    wait: HANDLE,
    context: *const Mutex<Option<oneshot::Sender<()>>>,
}

// SAFETY: the wait handle is a process-wide value; the context is an
// `Arc` count of a `Mutex`, usable from any thread.
unsafe impl Send for Registered {}

impl Drop for Registered {
    fn drop(&mut self) {
        // SAFETY: registered by `exit_notice` and unregistered once, here;
        // INVALID_HANDLE_VALUE waits for a callback that is running, so none
        // runs after this returns and the context's count can be given back.
        unsafe {
            UnregisterWaitEx(self.wait, INVALID_HANDLE_VALUE);
            drop(Arc::from_raw(self.context));
        }
    }
}

/// The wait pool's callback: the process ended; tell the supervisor.
unsafe extern "system" fn exited(context: *mut c_void, _timed_out: bool) {
    // SAFETY: `context` is the `Arc` count `Registered` keeps alive until
    // the wait is unregistered, which waits for this callback to return.
    let slot = unsafe { &*(context as *const Mutex<Option<oneshot::Sender<()>>>) };
    if let Some(tx) = slot.locked().take() {
        let _ = tx.send(());
    }
}

/// Resolves once `pid` (a command started here, not yet reaped) has
/// exited, with no thread blocked for it; `None` when the wait cannot be
/// registered (the caller then waits on a thread).
pub fn exit_notice(pid: i32) -> Option<oneshot::Receiver<()>> {
    let t = tree(pid)?;
    let (tx, rx) = oneshot::channel();
    let context = Arc::into_raw(Arc::new(Mutex::new(Some(tx))));
    let mut wait: HANDLE = std::ptr::null_mut();
    // SAFETY: the process handle is open while `t` lives, and the wait is
    // unregistered (in `Registered::drop`) before `reap` lets it go; the
    // context stays alive until then.
    let ok = unsafe {
        RegisterWaitForSingleObject(
            &mut wait,
            t.process.as_raw_handle(),
            Some(exited),
            context.cast(),
            INFINITE,
            WT_EXECUTEONLYONCE,
        )
    };
    if ok == 0 {
        // SAFETY: not registered: the count made above is given back.
        drop(unsafe { Arc::from_raw(context) });
        return None;
    }
    *t.wait.locked() = Some(Registered { wait, context });
    Some(rx)
}

static TREES: LazyLock<Mutex<HashMap<i32, Arc<Tree>>>> = LazyLock::new(Default::default);

fn tree(pid: i32) -> Option<Arc<Tree>> {
    TREES.locked().get(&pid).cloned()
}

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
    TREES.locked().insert(
        pid,
        Arc::new(Tree {
            job: started.job,
            process: OwnedHandle::from(started.child),
            ended_by: AtomicI32::new(0),
            wait: Mutex::new(None),
        }),
    );
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
/// waits on a thread ([`peek_exit`] with `block`).
pub fn pidfd_open(_pid: i32) -> Option<OwnedFd> {
    None
}

/// How `pid` ended; `block` waits for it, otherwise `None` means still
/// running. The process handle stays held (the pid cannot be reused) until
/// [`reap`].
pub fn peek_exit(pid: i32, block: bool) -> Option<Exit> {
    let t = tree(pid)?;
    let h = t.process.as_raw_handle();
    // SAFETY: the handle is open while `t` holds it; waiting only reads it.
    let r = unsafe { WaitForSingleObject(h, if block { INFINITE } else { 0 }) };
    if r == WAIT_TIMEOUT || r != WAIT_OBJECT_0 {
        return None;
    }
    let mut code = 0u32;
    // SAFETY: as above; `code` outlives the call.
    if unsafe { GetExitCodeProcess(h, &mut code) } == 0 {
        return None;
    }
    let by = t.ended_by.load(Ordering::Acquire);
    Some(if by != 0 && code == TERMINATED {
        Exit::Signal(by)
    } else {
        Exit::Code(code as i32)
    })
}

/// Let go of `pid`'s job, process handle and exit wait. Closing the job's
/// handle ends whatever still runs in it (kill-on-close).
pub fn reap(pid: i32) {
    let t = TREES.locked().remove(&pid);
    if let Some(t) = t {
        // Unregistered before the process handle it waits on can close.
        drop(t.wait.locked().take());
    }
}

/// Stop the command `pid` leads, as `sig` says: `SIGKILL` terminates its
/// whole job at once; `SIGCONT` does nothing; any other signal is a
/// CTRL_BREAK to its process group (the caller terminates the job after the
/// grace if anything still runs). An unknown pid is no error.
pub fn stop(pid: i32, sig: i32) {
    use crate::platform::windows::libc::{SIGCONT, SIGKILL};
    let Some(t) = tree(pid) else {
        return;
    };
    match sig {
        SIGCONT => {}
        SIGKILL => {
            let _ = t
                .ended_by
                .compare_exchange(0, SIGKILL, Ordering::AcqRel, Ordering::Acquire);
            let _ = t.job.terminate(TERMINATED);
        }
        _ => {
            // Without a console shared with the command the break cannot be
            // delivered; the grace then runs out and the job is terminated.
            let _ = nlc_windows::job::console_break(pid as u32);
        }
    }
}
