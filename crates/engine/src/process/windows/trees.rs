//! The commands started on Windows, by pid (SPEC §14): each one's Job
//! Object, its main process's handle and how the runner ended it, from its
//! start ([`insert`]) until it is reaped ([`reap`]). Shared code knows a
//! command by its pid, as on Unix, where the kernel keeps the rest; while
//! the process handle is held here the pid cannot be reused, as a zombie's
//! cannot on Unix. [`peek_exit`] and [`exit_notice`] read the exit from
//! that handle; [`stop`] is what a signal means to the job.

use std::collections::HashMap;
use std::ffi::c_void;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use nlc_windows::job::Job;
use tokio::sync::oneshot;
use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, RegisterWaitForSingleObject, UnregisterWaitEx, WaitForSingleObject,
    INFINITE, WT_EXECUTEONLYONCE,
};

use crate::sync::Unpoisoned;

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

/// Keep a command just started: its job and its main process.
pub fn insert(pid: i32, job: Job, process: OwnedHandle) {
    TREES.locked().insert(
        pid,
        Arc::new(Tree {
            job,
            process,
            ended_by: AtomicI32::new(0),
            wait: Mutex::new(None),
        }),
    );
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
