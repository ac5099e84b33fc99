//! What the API verbs send a running command's supervisor, and why a
//! command was stopped.

use super::input::WriteReply;

/// Why the runner stopped a command.
#[derive(Debug, Clone, PartialEq)]
pub enum KillReason {
    /// `killBackgroundCommand`.
    Caller,
    /// The command's AbortSignal fired.
    Abort,
    /// `killAllBackgroundCommands`.
    HostDisposed,
}

/// Messages a supervisor takes.
#[derive(Debug)]
pub enum Control {
    /// Stop the command's group with this signal (escalating to SIGKILL).
    Kill(i32, KillReason),
    /// Write these bytes to the command's input (then close a pipe when
    /// `close`); reply with the count once the last byte is in.
    Write {
        /// The bytes.
        data: Vec<u8>,
        /// Close the pipe after them.
        close: bool,
        /// Where the count (or the failure) goes.
        reply: WriteReply,
    },
}
