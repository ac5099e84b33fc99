//! The reads of a command's output and of the host's commands: a page of
//! a stream, what a stream gained since the last follow read, and the
//! list. [`super::commands`] re-exports them.

use crate::sync::Unpoisoned;
use std::path::Path;

use super::record::{Record, State};
use super::state::State as Engine;
use crate::errors::os_reason;
use crate::errors::{EngineError, EngineResult};
use crate::process::signals;
use crate::text::capture::Stream;
use crate::text::logfile::log_error;
use crate::text::paging::{self, Page, Window};

/// Why a log could not be read, and what to do about it.
fn read_failure(task_id: &str, stream: Stream, path: &Path, e: &std::io::Error) -> EngineError {
    log_error(e, || {
        EngineError::Io(format!(
            "Cannot read the {} log of \"{task_id}\" ({}): {}. {}",
            stream.name(),
            path.display(),
            os_reason(e),
            if crate::errors::out_of_fds(e) {
                "The host process has run out of file descriptors (each running command holds about five): let commands finish or raise the limit (ulimit -n), then read again."
            } else {
                "The log file must stay where the runner put it (under os.tmpdir()) for its output to be read."
            }
        ))
    })
}

/// A page of a stream; reading a settled command's output marks it looked at.
pub fn read_output(
    eng: &Engine,
    host: u32,
    task_id: &str,
    stream: Stream,
    w: Window,
) -> EngineResult<Page> {
    read_record_output(&*eng.registry.lookup(host, task_id)?, stream, w)
}

/// [`read_output`] for a command already looked up.
pub fn read_record_output(rec: &Record, stream: Stream, w: Window) -> EngineResult<Page> {
    let task_id = &rec.task_id();
    let settled = rec.is_settled();
    let path = rec.log_path(stream);
    let page = rec
        .open_log(stream)
        .and_then(|f| paging::read_page(rec.log(stream), &f, w, rec.log_key(stream)))
        .map_err(|e| read_failure(task_id, stream, &path, &e))?;
    if settled {
        rec.look();
    }
    Ok(page)
}

/// One row of `listBackgroundCommands`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListEntry {
    /// Task id.
    pub task_id: String,
    /// Label.
    pub label: String,
    /// argv.
    pub argv: Vec<String>,
    /// Real cwd.
    pub cwd: String,
    /// Public state.
    pub state: State,
    /// Epoch ms.
    pub started_at: f64,
    /// Not settled.
    pub running: bool,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Ending signal.
    pub signal: Option<String>,
    /// The runner or a caller stopped it.
    pub killed: bool,
    /// How much of its tree the runner reaches.
    pub containment: crate::process::Containment,
    /// Blocked reading its input and quiet (`None` where the platform cannot tell).
    pub waiting_for_input: Option<bool>,
}

/// The host's commands, oldest first, optionally filtered.
pub fn list(
    eng: &Engine,
    host: u32,
    session: Option<&str>,
    running: Option<bool>,
) -> Vec<ListEntry> {
    eng.registry
        .host_tasks(host)
        .into_iter()
        .filter(|r| session.is_none_or(|s| &*r.session == s))
        .filter_map(|r| {
            let live = r.live.locked();
            let is_running = !live.state.is_settled();
            if running.is_some_and(|want| want != is_running) {
                return None;
            }
            Some(ListEntry {
                task_id: r.task_id(),
                label: r.label(),
                argv: r.argv.to_vec(),
                cwd: r.cwd.to_string(),
                state: live.state,
                started_at: r.started_at_ms,
                running: is_running,
                exit_code: live.exit_code,
                signal: live.signal.map(signals::name),
                killed: live.killed,
                containment: r.containment,
                waiting_for_input: r.waiting_for_input(live.state),
            })
        })
        .collect()
}

/// What `readNewBackgroundCommandOutput` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOutput {
    /// The text gained since the previous call.
    pub page: Page,
    /// The state now.
    pub state: State,
}

/// What a stream gained since the previous follow read (≤ 200000 units).
pub fn read_new(eng: &Engine, host: u32, task_id: &str, stream: Stream) -> EngineResult<NewOutput> {
    read_record_new(&*eng.registry.lookup(host, task_id)?, stream)
}

/// [`read_new`] for a command already looked up.
pub fn read_record_new(rec: &Record, stream: Stream) -> EngineResult<NewOutput> {
    let task_id = &rec.task_id();
    // Take the state first: text seen after a settled state is then complete.
    let state = rec.live.locked().state;
    let from = rec.live.locked().follow[stream as usize];
    let w = Window {
        offset: from,
        limit: paging::MAX_LIMIT,
        from_end: false,
    };
    let path = rec.log_path(stream);
    let page = rec
        .open_log(stream)
        .and_then(|f| paging::read_page(rec.log(stream), &f, w, rec.log_key(stream)))
        .map_err(|e| read_failure(task_id, stream, &path, &e))?;
    let got = page.content.len() as u64;
    {
        let mut live = rec.live.locked();
        live.follow[stream as usize] = from + got;
        if live.state.is_settled() && state.is_settled() {
            live.looked_at = true;
        }
    }
    Ok(NewOutput {
        page: Page {
            has_more: from + got < page.total_size,
            ..page
        },
        state,
    })
}
