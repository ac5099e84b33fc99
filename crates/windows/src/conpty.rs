//! A pseudo console (ConPTY) for terminal mode (SPEC §14 "Terminal mode"):
//! Windows' counterpart of a pseudo-terminal. The console host behind it
//! reads what the runner writes into one pipe as typed keys and renders
//! the screen of the command attached to it as text and escape sequences
//! into another, which the runner reads and logs.
//!
//! Two things differ from a Unix terminal and shape the runner:
//! - the output pipe does not reach end of file when the command exits:
//!   the console host keeps it open until the pseudo console is closed, so
//!   the runner closes it once the command's main process has ended, while
//!   still reading (closing waits for the host to flush what it rendered);
//! - what comes out is the host's rendering of the screen, not the bytes
//!   the program wrote: the text is there, with cursor moves and colours
//!   around it.
//!
//! Needs Windows 10 1809 or later (where `CreatePseudoConsole` exists).

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};

use windows_sys::Win32::System::Console::{
    ClosePseudoConsole, CreatePseudoConsole, ResizePseudoConsole, COORD, HPCON,
};

use crate::pipe::{self, Direction};

/// `E_NOTIMPL`: what a console host without resizing answers.
const E_NOTIMPL: i32 = 0x8000_4001_u32 as i32;

/// An HRESULT as an `io::Error`: a Win32 error code when it wraps one.
fn hresult(hr: i32, what: &str) -> io::Error {
    let u = hr as u32;
    if u >> 16 == 0x8007 {
        return io::Error::from_raw_os_error((u & 0xFFFF) as i32);
    }
    if hr == E_NOTIMPL {
        return io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{what}: this system's console host does not implement it (E_NOTIMPL)"),
        );
    }
    io::Error::other(format!("{what} failed (HRESULT {u:#010x})"))
}

fn coord(cols: u16, rows: u16) -> COORD {
    // A console size is a positive i16; terminal sizes are checked to
    // 1..=1000 before they get here, and clamped regardless.
    let clamp = |v: u16| v.clamp(1, i16::MAX as u16) as i16;
    COORD {
        X: clamp(cols),
        Y: clamp(rows),
    }
}

/// An open pseudo console. Dropping it closes it: every process still
/// attached is sent a close event, and the output pipe reaches end of
/// file once the host has flushed what it rendered. The drop can wait for
/// that flush, so drop it where blocking is allowed while the output is
/// still being read.
pub struct PseudoConsole {
    hpc: HPCON,
}

// SAFETY: an HPCON names a console host the process talks to through
// handles; the calls made on it (resize, close) may come from any thread,
// and `&self` only resizes.
unsafe impl Send for PseudoConsole {}
// SAFETY: as for Send: a resize through a shared reference is a message
// to the host, safe to send from several threads.
unsafe impl Sync for PseudoConsole {}

impl std::fmt::Debug for PseudoConsole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PseudoConsole").finish_non_exhaustive()
    }
}

/// A new pseudo console and the runner's ends of its two pipes.
#[derive(Debug)]
pub struct Opened {
    /// The console.
    pub console: PseudoConsole,
    /// Where the runner writes what is typed (overlapped).
    pub input: OwnedHandle,
    /// Where the runner reads what the console shows (overlapped).
    pub output: OwnedHandle,
}

impl PseudoConsole {
    /// A pseudo console of `cols` × `rows`, with its pipes. The console
    /// host keeps its own copies of the pipes' far ends; the ones made here
    /// close on return.
    pub fn open(cols: u16, rows: u16) -> io::Result<Opened> {
        let input = pipe::pair(Direction::ToCommand)?;
        let output = pipe::pair(Direction::FromCommand)?;
        let mut hpc: HPCON = 0;
        // SAFETY: both handles are open for the call (the host duplicates
        // them); `hpc` is written on success only.
        let hr = unsafe {
            CreatePseudoConsole(
                coord(cols, rows),
                input.theirs.as_raw_handle(),
                output.theirs.as_raw_handle(),
                0,
                &mut hpc,
            )
        };
        if hr < 0 {
            return Err(hresult(hr, "CreatePseudoConsole"));
        }
        Ok(Opened {
            console: PseudoConsole { hpc },
            input: input.ours,
            output: output.ours,
        })
    }

    /// Gives the console a new size; its host tells the attached program.
    pub fn resize(&self, cols: u16, rows: u16) -> io::Result<()> {
        // SAFETY: `hpc` is open for the life of `self`.
        let hr = unsafe { ResizePseudoConsole(self.hpc, coord(cols, rows)) };
        if hr < 0 {
            return Err(hresult(hr, "ResizePseudoConsole"));
        }
        Ok(())
    }

    /// The console, for a start's attribute list.
    pub(crate) fn raw(&self) -> HPCON {
        self.hpc
    }
}

impl Drop for PseudoConsole {
    fn drop(&mut self) {
        // SAFETY: `hpc` was opened by CreatePseudoConsole and is closed
        // exactly once, here.
        unsafe { ClosePseudoConsole(self.hpc) };
    }
}
