//! The host API in engine terms: start, status, await, kill, kill-all, pages,
//! counters, the list and the follow reads. The binding calls these with
//! plain Rust values, all named `commands::…`: starting is in
//! [`super::start`], the reads in [`super::reads`], the input calls in
//! [`super::input_verbs`] (re-exported here); this file keeps the verbs on a
//! command's life: its status, the wait for it, the kills and the exit path,
//! and the host's counters.

#[cfg(windows)]
use crate::platform::windows::libc;
use std::sync::Arc;

use super::bank;
use super::record::{KillReason, Record, Status};
use super::registry::Counts;

use super::state::State as Engine;
use super::supervisor::Control;
use crate::errors::{EngineError, EngineResult};
use crate::policy;
use crate::process::signals;

pub use super::input_verbs::{resize_terminal, write_input};
pub use super::reads::{
    list, read_new, read_output, read_record_new, read_record_output, ListEntry, NewOutput,
};
pub use super::start::{start, Handle, StartContext, StartOptions, Veto, WITHOUT_NETWORK_ENV};

/// The live status; marks a settled command looked at.
pub fn status(eng: &Engine, host: u32, task_id: &str) -> EngineResult<Status> {
    Ok(status_of(&*eng.registry.lookup(host, task_id)?))
}

/// The live status of a command already looked up; marks a settled one looked at.
pub fn status_of(rec: &Record) -> Status {
    rec.status(true, bank::builtin_ref)
}

/// Wait for a command to settle, at most `timeout_ms` when given.
pub async fn await_settled(
    eng: &Engine,
    host: u32,
    task_id: &str,
    timeout_ms: Option<f64>,
) -> EngineResult<Status> {
    Ok(await_record(eng.registry.lookup(host, task_id)?, timeout_ms).await)
}

/// [`await_settled`] for a command already looked up.
pub async fn await_record(rec: Arc<Record>, timeout_ms: Option<f64>) -> Status {
    let limit = timeout_ms.map(policy::duration_ms);
    rec.wait_settled(limit).await;
    rec.status(true, bank::builtin_ref)
}

/// Counters of one host's session, chosen by the session rule from the
/// caller's id and then the host's context candidate.
pub fn counts(eng: &Engine, host: u32, session: Option<&str>, context: Option<&str>) -> Counts {
    let reg = &eng.registry;
    reg.host_counts(host, &reg.choose_session(host, [session, context]))
}

/// Parse a signal name (default SIGTERM).
pub fn parse_signal(name: Option<&str>) -> EngineResult<i32> {
    match name {
        None => Ok(libc::SIGTERM),
        Some(n) => signals::from_name(n).ok_or_else(|| EngineError::UnknownSignal(n.to_string())),
    }
}

/// How long a kill waits for the command it signalled to settle: the grace
/// (SIGKILL lands after it), the host bank's bound (both streams are banked
/// before a command counts as settled), and a margin for a loaded machine.
/// Only a process the kernel cannot kill (uninterruptible sleep) outlasts
/// it; nothing waits forever.
pub fn kill_wait_bound(grace_ms: f64) -> std::time::Duration {
    policy::duration_ms(grace_ms * 2.0)
        + bank::host_bank_timeout()
        + std::time::Duration::from_secs(10)
}

/// Kill a command and wait for it to settle (both streams banked), at most
/// [`kill_wait_bound`].
pub async fn kill(
    eng: &Engine,
    host: u32,
    task_id: &str,
    signal: i32,
    reason: KillReason,
) -> EngineResult<Status> {
    Ok(kill_record(eng.registry.lookup(host, task_id)?, signal, reason).await)
}

/// [`kill`] for a command already looked up.
pub async fn kill_record(rec: Arc<Record>, signal: i32, reason: KillReason) -> Status {
    // A command whose process already ended may still be banking: wait for
    // it the same way.
    rec.send(Control::Kill(signal, reason));
    if !rec.is_settled() {
        rec.wait_settled(Some(kill_wait_bound(rec.kill_grace_ms)))
            .await;
    }
    rec.status(true, bank::builtin_ref)
}

/// Send a kill without waiting (the abort path). False when already settled.
pub fn signal_kill(
    eng: &Engine,
    host: u32,
    task_id: &str,
    signal: i32,
    reason: KillReason,
) -> EngineResult<bool> {
    Ok(eng
        .registry
        .lookup(host, task_id)?
        .send(Control::Kill(signal, reason)))
}

/// Terminate every unsettled command of a host; wait until all of them have
/// settled (at most [`kill_wait_bound`] of the longest grace); return how
/// many were signalled.
pub async fn kill_all(eng: &Engine, host: u32) -> u32 {
    let recs: Vec<Arc<Record>> = eng.registry.with_host(host, |h| {
        h.tasks
            .iter()
            .filter(|r| !r.is_settled())
            .cloned()
            .collect()
    });
    let mut signalled = Vec::new();
    for r in recs {
        if r.send(Control::Kill(libc::SIGTERM, KillReason::HostDisposed)) {
            signalled.push(r);
        }
    }
    let grace = signalled
        .iter()
        .map(|r| r.kill_grace_ms)
        .fold(0.0, f64::max);
    let deadline = kill_wait_bound(grace);
    let waits = signalled.iter().map(|r| r.wait_settled(Some(deadline)));
    for w in waits {
        w.await;
    }
    signalled.len() as u32
}

/// Stop every command of every host at once: the host process is exiting.
/// SIGTERM now (and SIGCONT for stopped ones); the watchdog sends SIGKILL
/// after its grace if the process is gone by then.
pub fn terminate_everything(eng: &Engine, sig: i32) {
    signal_groups(&eng.registry.all_unsettled(), sig);
}

/// Stop the commands of the hosts one Node environment registered (a worker
/// thread that is going away): SIGTERM and SIGCONT to their groups.
pub fn terminate_listener(eng: &Engine, listener: u32, sig: i32) {
    signal_groups(&eng.registry.unsettled_of_listener(listener), sig);
}

/// `sig`, then SIGCONT (so stopped processes can act on it), to the group of
/// every started command in `recs`.
fn signal_groups(recs: &[Arc<Record>], sig: i32) {
    for r in recs {
        if r.pgid() > 0 {
            r.signal_tree(sig);
            r.signal_tree(libc::SIGCONT);
        }
    }
}

/// The host process is exiting: start nothing more, wait for spawns in flight
/// to be recorded, then stop every command group (`terminate_everything`).
pub fn shut_down(eng: &Engine, sig: i32) {
    eng.gate.close();
    terminate_everything(eng, sig);
}

/// What the host process's exit leaves to clean up once its commands are
/// signalled: the logs (with `removeOnExit`), the spare log directories,
/// the private temp directory made ahead, and those of commands that have
/// not settled.
pub fn exit_cleanup(eng: &Engine) {
    eng.spares.close();
    eng.retention.exit_cleanup(&eng.registry);
    crate::process::confine::discard_premade();
    eng.private_tmps.remove_unsettled();
}
