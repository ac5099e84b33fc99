//! The calls on a running command's input: a write (ending a pipe, or
//! ctrl-d on a terminal) and a terminal's resize, each refused with why
//! when the command takes no input. [`super::commands`] re-exports them;
//! the supervisor's writer is [`super::running_input`].

use crate::sync::Unpoisoned;

use super::input::{WriteFailure, TERMINAL_EOF};
use super::record::State;
use super::state::State as Engine;
use super::supervisor::Control;
use crate::errors::os_reason;
use crate::errors::{EngineError, EngineResult};

/// Why a command takes no input now.
fn not_running(task_id: &str, state: State, ended_input: bool) -> EngineError {
    if state.is_settled() {
        EngineError::NotRunning(format!(
            "Background command \"{task_id}\" is not running (it is {}), so it takes no more input: start it again to send it input",
            state.as_str()
        ))
    } else if ended_input {
        EngineError::NotRunning(format!(
            "The input of background command \"{task_id}\" is closed (by an earlier end: true, or the command closed it), so it takes no more input: start it again to send it more"
        ))
    } else {
        EngineError::NotRunning(format!(
            "The input of background command \"{task_id}\" is closed: the command closed it before reading everything written, so the rest was not delivered; check its status and output"
        ))
    }
}

/// Write `data` to a command's input and resolve once the last byte is in
/// the pipe (or the terminal). `end` closes a pipe afterwards; on a terminal
/// it writes the end-of-file character (ctrl-d) after the data and the input
/// stays open. Returns the bytes written (the ctrl-d included).
pub async fn write_input(
    eng: &Engine,
    host: u32,
    task_id: &str,
    data: Vec<u8>,
    end: bool,
) -> EngineResult<usize> {
    let rec = eng.registry.lookup(host, task_id)?;
    let Some(input) = rec.input.as_ref() else {
        return Err(EngineError::BadInput(format!(
            "Background command \"{task_id}\" was started without an input, so nothing can be written to it: start it with stdin: \"pipe\" (or terminal: true) to write to it"
        )));
    };
    let state = rec.live.locked().state;
    if state.is_settled() || !input.is_open() {
        return Err(not_running(task_id, state, true));
    }
    let mut data = data;
    let close = end && !input.terminal;
    if end && input.terminal {
        data.extend_from_slice(TERMINAL_EOF);
    }
    // The one write that ends a pipe claims it; later writes are refused.
    if close && !input.claim_end() {
        return Err(not_running(task_id, state, true));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    if !rec.send(Control::Write {
        data,
        close,
        reply: tx,
    }) {
        let state = rec.live.locked().state;
        return Err(not_running(task_id, state, false));
    }
    match rx.await {
        Ok(Ok(n)) => Ok(n),
        Ok(Err(WriteFailure::Closed)) | Err(_) => {
            let state = rec.live.locked().state;
            Err(not_running(task_id, state, false))
        }
    }
}

/// Change a terminal command's window size (the command gets SIGWINCH).
pub fn resize_terminal(
    eng: &Engine,
    host: u32,
    task_id: &str,
    cols: u16,
    rows: u16,
) -> EngineResult<()> {
    let rec = eng.registry.lookup(host, task_id)?;
    let Some(input) = rec.input.as_ref().filter(|i| i.terminal) else {
        return Err(EngineError::BadInput(format!(
            "Background command \"{task_id}\" does not run in a terminal, so it has no window to resize: start it with terminal: true (or {{ cols, rows }})"
        )));
    };
    let state = rec.live.locked().state;
    let done = if state.is_settled() {
        None
    } else {
        input.with_master(|m| crate::process::spawn::resize_terminal(m, cols, rows))
    };
    match done {
        Some(Ok(())) => Ok(()),
        Some(Err(e)) => Err(EngineError::Other(format!(
            "Resizing the terminal of background command \"{task_id}\" failed: {}",
            os_reason(&e)
        ))),
        None => {
            let state = rec.live.locked().state;
            Err(EngineError::NotRunning(format!(
                "Background command \"{task_id}\" is not running (it is {}), so its terminal is gone: start it again",
                state.as_str()
            )))
        }
    }
}
