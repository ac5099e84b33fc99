//! A process's identity over time (the platform layer's `start_time` on
//! Windows): a pid is reused, so a marker names (pid, creation time), and
//! a writer is alive only while the process with that pid was created at
//! that time and is still running.

use windows_sys::Win32::Foundation::{CloseHandle, FILETIME, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{
    GetProcessTimes, OpenProcess, WaitForSingleObject, PROCESS_QUERY_LIMITED_INFORMATION,
    PROCESS_SYNCHRONIZE,
};

/// When the running process `pid` was created, in 100 ns units since 1601
/// (a FILETIME); `None` when no process has that pid, it has exited (even
/// if a handle still keeps it known), or it cannot be queried.
pub fn start_time(pid: u32) -> Option<u64> {
    // SAFETY: opening by id; the handle is closed below.
    let h = unsafe {
        OpenProcess(
            PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_SYNCHRONIZE,
            0,
            pid,
        )
    };
    if h.is_null() {
        return None;
    }
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: an open handle with query access; the FILETIMEs outlive the call.
    let ok = unsafe { GetProcessTimes(h, &mut created, &mut exited, &mut kernel, &mut user) } != 0;
    // SAFETY: an open handle with SYNCHRONIZE access; a zero timeout only polls.
    let running = unsafe { WaitForSingleObject(h, 0) } == WAIT_TIMEOUT;
    // SAFETY: closed once.
    unsafe { CloseHandle(h) };
    (ok && running)
        .then(|| (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
}
