//! A command's input: the pipe or terminal the host writes to, the writes the
//! supervisor still has to deliver, and the window size of a terminal.
//!
//! Theory of operation: the supervisor owns the write end. A write is a
//! control message carrying the bytes and a reply slot; the supervisor
//! queues it and feeds the pipe (or the terminal's master side) from its
//! select loop whenever the descriptor is writable, so a write larger than
//! the pipe waits for the command to read — on an engine thread, never on
//! the caller's — while the loop keeps copying the command's output (a
//! command that echoes what it reads cannot deadlock against us). The reply
//! comes once the last byte is in. `end: true` closes a pipe after its data;
//! on a terminal it appends the end of input (ctrl-d; on Windows ctrl-z and
//! enter) and the input
//! stays open. The record keeps only what a status and a refusal need: the
//! kind of input, whether it still takes writes, and a terminal's master
//! side (for its window size).

use crate::process::spawn::Terminal;
use crate::sync::Unpoisoned;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The end of input a terminal knows: ctrl-d for a Unix line discipline.
#[cfg(unix)]
pub const TERMINAL_EOF: &[u8] = b"\x04";
/// The end of input a terminal knows: on a Windows console, ctrl-z then
/// enter.
#[cfg(windows)]
pub const TERMINAL_EOF: &[u8] = b"\x1a\r";

/// What a record knows of a command's input.
#[derive(Debug)]
pub struct InputState {
    /// A terminal (else a pipe).
    pub terminal: bool,
    /// Whether it still takes writes.
    open: AtomicBool,
    /// A terminal's master side while the command runs.
    master: Mutex<Option<Terminal>>,
    /// Whether the command is blocked reading it, quiet (SPEC §15); the
    /// supervisor sets and clears it.
    waiting: AtomicBool,
}

impl InputState {
    /// An open input.
    pub fn new(terminal: bool) -> Self {
        InputState {
            terminal,
            open: AtomicBool::new(true),
            master: Mutex::new(None),
            waiting: AtomicBool::new(false),
        }
    }

    /// Whether it still takes writes.
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }

    /// Take no more writes.
    pub fn close(&self) {
        self.open.store(false, Ordering::Release);
        self.master.locked().take();
    }

    /// Claim the end of a pipe: true for the one caller that closes it.
    pub fn claim_end(&self) -> bool {
        self.open
            .compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Whether the command waits for input now.
    pub fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire)
    }

    /// Record whether it waits; true when this starts a new episode.
    pub fn set_waiting(&self, now: bool) -> bool {
        !self.waiting.swap(now, Ordering::AcqRel) && now
    }

    /// Keep the terminal's master side (for resizes).
    pub fn set_master(&self, t: Terminal) {
        *self.master.locked() = Some(t);
    }

    /// Run `f` on the terminal's master side, if the command still runs.
    pub fn with_master<T>(&self, f: impl FnOnce(&Terminal) -> T) -> Option<T> {
        self.master.locked().as_ref().map(f)
    }

    /// Give up the terminal's master side (no resize after this).
    pub fn take_master(&self) -> Option<Terminal> {
        self.master.locked().take()
    }
}

/// The reply to one write: the bytes written, or why not.
pub type WriteReply = tokio::sync::oneshot::Sender<Result<usize, WriteFailure>>;

/// Why a queued write did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteFailure {
    /// The command closed its input (or it ended) first.
    Closed,
}
