//! A command's standard-stream pipes whose runner side is overlapped, so
//! the runner reads and writes them through the I/O completion port its
//! async runtime already has — no thread blocked per pipe (SPEC §14: the
//! supervisor's select loop as on Unix). An anonymous pipe cannot be
//! overlapped, so each is a named pipe: a fresh, unguessable name, the
//! first and only instance (a name someone else holds fails the start),
//! local clients only, a DACL for this user and SYSTEM alone, and the
//! command's end opened at once, so no other process can connect to it.

use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{FromRawHandle, OwnedHandle};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU64, Ordering};

use windows_sys::Win32::Foundation::{GENERIC_READ, GENERIC_WRITE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED, OPEN_EXISTING,
    PIPE_ACCESS_INBOUND, PIPE_ACCESS_OUTBOUND,
};
use windows_sys::Win32::System::Pipes::{
    CreateNamedPipeW, PIPE_READMODE_BYTE, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_WAIT,
};

use crate::logdir::OwnerOnly;

/// Which way the bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The command writes, the runner reads (stdout, stderr).
    FromCommand,
    /// The runner writes, the command reads (stdin).
    ToCommand,
}

/// Both ends of one pipe.
#[derive(Debug)]
pub struct Pair {
    /// The runner's end: overlapped (the server end of the named pipe).
    pub ours: OwnedHandle,
    /// The command's end: synchronous, as programs expect their standard
    /// streams (handed to the child, then closed here).
    pub theirs: OwnedHandle,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A name no one can have taken ahead: pid, counter and a clock reading.
fn name() -> Vec<u16> {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let s = format!(
        r"\\.\pipe\neurolink-commands-{}-{n}-{nanos:x}",
        std::process::id()
    );
    std::ffi::OsStr::new(&s)
        .encode_wide()
        .chain(Some(0))
        .collect()
}

/// A new pipe (see the module docs).
pub fn pair(dir: Direction) -> io::Result<Pair> {
    let name = name();
    let sd = OwnerOnly::new("")?;
    let attrs = sd.attributes();
    let access = match dir {
        Direction::FromCommand => PIPE_ACCESS_INBOUND,
        Direction::ToCommand => PIPE_ACCESS_OUTBOUND,
    };
    // SAFETY: `name` is NUL-terminated; `attrs` and its descriptor outlive
    // the call; the handle is owned below.
    let ours = unsafe {
        CreateNamedPipeW(
            name.as_ptr(),
            access | FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE,
            PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
            1,
            64 * 1024,
            64 * 1024,
            0,
            &attrs,
        )
    };
    if ours == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just created, owned by nothing else.
    let ours = unsafe { OwnedHandle::from_raw_handle(ours) };
    let want = match dir {
        Direction::FromCommand => GENERIC_WRITE,
        Direction::ToCommand => GENERIC_READ,
    };
    // SAFETY: `name` is NUL-terminated; no security attributes (the handle
    // is not inheritable: the spawn duplicates it for the child); the
    // handle is owned below.
    let theirs = unsafe {
        CreateFileW(
            name.as_ptr(),
            want,
            0,
            std::ptr::null(),
            OPEN_EXISTING,
            0,
            null_mut(),
        )
    };
    if theirs == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just opened, owned by nothing else.
    let theirs = unsafe { OwnedHandle::from_raw_handle(theirs) };
    Ok(Pair { ours, theirs })
}
