//! One Job Object per command (SPEC §14 "Trees"): the process is created
//! suspended, assigned to the job, then resumed, so it cannot start a child
//! outside the job; the job forbids breakaway and is kill-on-close, so when
//! its last handle closes — the runner drops it, or the host process exits or
//! is killed — every process in it ends.

use std::io;
use std::mem::{size_of, zeroed};
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::process::{Child, Command};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Console::{GenerateConsoleCtrlEvent, CTRL_BREAK_EVENT};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, TerminateProcess, CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED,
    THREAD_SUSPEND_RESUME,
};

/// A handle this crate owns and closes.
struct Owned(HANDLE);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the handle was returned open by the API that created it and
        // is closed exactly once, here.
        unsafe { CloseHandle(self.0) };
    }
}

// SAFETY: a kernel handle is a process-wide value; the job functions used on
// it are safe to call from any thread.
unsafe impl Send for Owned {}
// SAFETY: as for Send: the calls made through a shared reference
// (terminate, query) are thread-safe kernel calls.
unsafe impl Sync for Owned {}

fn check(ok: i32) -> io::Result<()> {
    if ok == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A Job Object that ends every process in it when dropped.
pub struct Job {
    handle: Owned,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").finish_non_exhaustive()
    }
}

impl Job {
    /// A new unnamed job: kill-on-close, no breakaway (the limit flags allow
    /// none), not inheritable.
    pub fn new() -> io::Result<Job> {
        // SAFETY: no security attributes and no name: an anonymous job whose
        // handle this process alone holds.
        let h = unsafe { CreateJobObjectW(null(), null()) };
        if h.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = Job { handle: Owned(h) };
        // SAFETY: a plain-data struct for which all zeroes is a valid value.
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { zeroed() };
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the pointer and length describe `info`, which outlives the call.
        check(unsafe {
            SetInformationJobObject(
                job.handle.0,
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        })?;
        Ok(job)
    }

    /// Starts `cmd` inside this job: created suspended in a new process group
    /// (the target of [`console_break`]), assigned, then resumed. If it
    /// cannot be assigned it is terminated and never runs a single
    /// instruction of its own. Creation flags set on `cmd` before are
    /// replaced by these two.
    pub fn spawn(&self, cmd: &mut Command) -> io::Result<Child> {
        cmd.creation_flags(CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP);
        let mut child = cmd.spawn()?;
        let pid = child.id();
        if let Err(e) = self.take_in(child.as_raw_handle(), || resume_main_thread(pid)) {
            let _ = child.wait();
            return Err(e);
        }
        Ok(child)
    }

    /// Takes a process created suspended (its main thread `thread` not yet
    /// run) into this job, then resumes it. If it cannot be assigned it is
    /// terminated and never runs a single instruction of its own.
    pub fn adopt(&self, process: &OwnedHandle, thread: OwnedHandle) -> io::Result<()> {
        self.take_in(process.as_raw_handle(), || {
            // SAFETY: `thread` is the open handle of the suspended main thread.
            match unsafe { ResumeThread(thread.as_raw_handle()) } {
                u32::MAX => Err(io::Error::last_os_error()),
                _ => Ok(()),
            }
        })
    }

    /// Assigns the suspended `process` to this job, then lets it run with
    /// `resume`; if either fails the process is terminated.
    fn take_in(&self, process: HANDLE, resume: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        // SAFETY: the job is ours and open; the caller keeps the process
        // handle open for the call.
        let started = check(unsafe { AssignProcessToJobObject(self.handle.0, process) })
            .and_then(|()| resume());
        if started.is_err() {
            // SAFETY: as above: the process handle is open.
            unsafe { TerminateProcess(process, 1) };
        }
        started
    }

    /// Ends every process in the job with `exit_code`.
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job handle is open for the life of `self`.
        check(unsafe { TerminateJobObject(self.handle.0, exit_code) })
    }

    /// How many processes in the job are still running.
    pub fn active_processes(&self) -> io::Result<u32> {
        // SAFETY: a plain-data struct for which all zeroes is a valid value.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { zeroed() };
        // SAFETY: the pointer and length describe `info`, which outlives the call.
        check(unsafe {
            QueryInformationJobObject(
                self.handle.0,
                JobObjectBasicAccountingInformation,
                (&mut info as *mut JOBOBJECT_BASIC_ACCOUNTING_INFORMATION).cast(),
                size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                null_mut(),
            )
        })?;
        Ok(info.ActiveProcesses)
    }
}

/// How the runner stops a command (SPEC §14 "Trees").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `SIGTERM`: a CTRL_BREAK to the command's process group, then the
    /// whole job is terminated once `grace` has passed with any process of
    /// it still running.
    Term {
        /// How long the tree may take to end after the break (`killGraceMs`).
        grace: Duration,
    },
    /// `SIGKILL`: the whole job is terminated at once.
    Kill,
}

/// How a stop ended the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Every process ended within the grace after the break.
    ByBreak,
    /// The job was terminated (at once, or after the grace).
    Terminated,
}

impl Job {
    /// Stops the command whose group `leader` leads and everything else in
    /// the job, as `how` says; a terminated process exits with `exit_code`.
    /// A break that cannot be delivered (no shared console) only means the
    /// grace runs out: the job is terminated either way. Blocks for at most
    /// the grace (checking every 10 ms whether the job is empty).
    pub fn stop(&self, leader: u32, how: Stop, exit_code: u32) -> io::Result<Stopped> {
        if let Stop::Term { grace } = how {
            if console_break(leader).is_ok() {
                let deadline = Instant::now() + grace;
                loop {
                    if self.active_processes()? == 0 {
                        return Ok(Stopped::ByBreak);
                    }
                    if Instant::now() >= deadline {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            } else {
                std::thread::sleep(grace);
            }
        }
        self.terminate(exit_code)?;
        Ok(Stopped::Terminated)
    }
}

/// Resumes the one thread of a process created suspended.
fn resume_main_thread(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of the system's threads; the handle is owned below.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snap == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    let snap = Owned(snap);
    // SAFETY: a plain-data struct for which all zeroes is a valid value.
    let mut entry: THREADENTRY32 = unsafe { zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    // SAFETY: `entry` is a valid, sized THREADENTRY32 for the whole walk.
    let mut more = unsafe { Thread32First(snap.0, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opening a thread by id; the handle is owned below.
            let t = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if t.is_null() {
                return Err(io::Error::last_os_error());
            }
            let t = Owned(t);
            // SAFETY: `t` is an open thread handle with suspend/resume access.
            if unsafe { ResumeThread(t.0) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            return Ok(());
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snap.0, &mut entry) } != 0;
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("process {pid} has no thread to resume"),
    ))
}

/// Sends CTRL_BREAK to the process group `pid` leads (a process [`Job::spawn`]
/// started): what SIGTERM means on Windows. The console must be shared with
/// the host; the job is terminated after the grace either way.
pub fn console_break(pid: u32) -> io::Result<()> {
    // SAFETY: no pointers; an unknown group only makes the call fail.
    check(unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid) })
}
