//! How a command settles: why it was stopped ([`Stop`]), the settled state,
//! exit code, signal and message that follow from that and from how it
//! ended ([`describe`]), and publishing them ([`finish`]).
//!
//! How it works: the supervisor records the first reason it began stopping a
//! command; once the process is gone and its pipes are drained, `describe`
//! turns the reason and the exit into the state and the one message the
//! caller reads (naming the option to change where there is one). `finish`
//! banks both streams, writes the settled fields under the record's lock,
//! queues the logs for retention, and only then publishes the settled state
//! and wakes whoever waits for it — so anyone who sees it settled sees
//! everything else too.

use std::sync::Arc;

use super::bank;
use super::launch::Limits;
use super::record::{KillReason, Record, State};
use super::state::State as Engine;
use crate::errors::js_number;
use crate::process::signals;
use crate::process::spawn::Exit;
use crate::sync::Unpoisoned;
use crate::text::capture::Stream;

/// Why the runner began stopping a command.
#[derive(Debug, Clone)]
pub(super) enum Stop {
    Timeout,
    Idle,
    Killed(KillReason, i32),
    OutputLimit(Stream),
    WriteFailed(Stream, String),
    /// A resource limit (SPEC §15), and the limits in force.
    Limit(crate::process::limits::Kind, crate::process::limits::Limits),
}

/// How the supervision of a running command ended.
pub(super) struct Outcome {
    pub(super) exit: Exit,
    pub(super) stop: Option<Stop>,
    pub(super) descendants_held_pipes: bool,
}

/// The settled state, exit code, signal, message, and whether the runner
/// stopped the command.
type Described = (State, Option<i32>, Option<i32>, Option<String>, bool);

/// What a command that ended as `o` says settles as.
pub(super) fn describe(rec: &Record, limits: Limits, o: &Outcome) -> Described {
    let (code, signal) = match o.exit {
        Exit::Code(c) => (Some(c), None),
        Exit::Signal(s) => (None, Some(s)),
    };
    let ended_by = match o.exit {
        Exit::Signal(s) => format!(" (it ended on {})", signals::name(s)),
        Exit::Code(c) => format!(" (it exited with code {c})"),
    };
    match &o.stop {
        Some(Stop::Timeout) => (
            State::Timeout,
            code,
            signal,
            Some(format!(
                "The command exceeded its {}ms budget and was stopped: SIGTERM, then SIGKILL after {}ms if still running{ended_by}; its output up to then is banked in full",
                js_number(limits.timeout_ms),
                js_number(rec.kill_grace_ms)
            )),
            true,
        ),
        Some(Stop::Idle) => (
            State::Timeout,
            code,
            signal,
            Some(format!(
                "The command produced no output for {}ms (idleTimeoutMs) and was stopped: SIGTERM, then SIGKILL after {}ms if still running{ended_by}; its output up to then is banked in full",
                js_number(limits.idle_timeout_ms.unwrap_or(0.0)),
                js_number(rec.kill_grace_ms)
            )),
            true,
        ),
        Some(Stop::Killed(reason, sig)) => {
            let who = match reason {
                KillReason::Caller => "by the caller (killBackgroundCommand)",
                KillReason::Abort => "by the caller's abortSignal",
                KillReason::HostDisposed => "because the host was disposed (killAllBackgroundCommands)",
            };
            (
                State::Killed,
                code,
                signal,
                Some(format!(
                    "The command was killed with {} {who}{ended_by}; its output up to then is banked in full",
                    signals::name(*sig)
                )),
                true,
            )
        }
        Some(Stop::OutputLimit(s)) => (
            State::OutputLimit,
            code,
            signal,
            Some(format!(
                "{} reached the {}-byte cap (maxOutputBytes) and the command was stopped{ended_by}; its output up to the cap is banked in full. Raise maxOutputBytes to capture more.",
                s.name(),
                limits.max_output_bytes
            )),
            true,
        ),
        Some(Stop::Limit(k, l)) => (
            State::Killed,
            code,
            signal,
            Some(format!(
                "The command was stopped because {}{ended_by}; its output up to then is banked in full. Raise the limit or make the command use less.",
                crate::process::limits::describe(*k, l)
            )),
            true,
        ),
        Some(Stop::WriteFailed(s, e)) => (
            State::Killed,
            code,
            signal,
            Some(format!(
                "Writing {} to its log file {} failed: {e}. The command was stopped; the {} bytes written before the failure are kept. Free space in (or point TMPDIR at) a writable directory.",
                s.name(),
                rec.log_path(*s).display(),
                rec.log(*s).bytes()
            )),
            true,
        ),
        None => match o.exit {
            Exit::Code(_) => (State::Exited, code, None, None, false),
            Exit::Signal(sig) => (
                State::Killed,
                None,
                Some(sig),
                Some(format!(
                    "The command was ended by {}, a signal this runner did not send; its output up to then is banked in full",
                    signals::name(sig)
                )),
                false,
            ),
        },
    }
}

/// Bank the streams, write the settled fields and publish the settled state.
pub(super) async fn finish(
    eng: &Engine,
    rec: &Arc<Record>,
    state: State,
    code: Option<i32>,
    signal: Option<i32>,
    error: Option<String>,
    killed: bool,
) {
    {
        let mut live = rec.live.locked();
        live.ended = Some(std::time::Instant::now());
        live.killed = killed;
    }
    rec.close_link();
    let refs = bank::bank(&eng.registry, rec).await;
    {
        let mut live = rec.live.locked();
        live.exit_code = code;
        live.signal = signal;
        live.error = error;
        live.refs = Some(refs);
        live.state = state;
    }
    super::manifest::settled(rec);
    // Queued for removal before the settled state is published, so whoever
    // sees it settled also finds it in the queue.
    eng.retention.on_settled(rec);
    rec.settled.publish();
    eng.host_waits.fill_host_waits(rec);
    eng.registry.emit(
        eng.registry.listener_of(rec.host),
        crate::runtime::Event::Settled(rec.task_id()),
    );
}
