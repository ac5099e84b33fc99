//! One owner task per command. It starts the process, then selects over the
//! leader's exit, both pipes, the budget, the SIGKILL escalation, the drain
//! grace and control messages, until the process has ended and its pipes are
//! drained (or the drain grace ran out). Then it stops whatever is left of the
//! group, reaps the leader, banks both streams and publishes the settled state.
//!
//! What it is started with is `launch::Launch`; how the process is spawned
//! (in place, or by a confining thread) is `process_start`; the reason a
//! command was stopped, the state and message it settles with, and
//! publishing them are `settle`.

use crate::sync::Unpoisoned;
use std::fs::File;
use std::sync::Arc;
use std::time::Duration;

#[cfg(windows)]
use crate::platform::windows::{libc, pipe};
#[cfg(unix)]
use tokio::io::unix::AsyncFd;
use tokio::io::AsyncReadExt;
#[cfg(unix)]
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

use super::catch_panic::CatchPanic;
pub use super::control::Control;
use super::launch::{Launch, Limits};
pub use super::private_tmp::PrivateTmp;
use super::process_start::{hand_to_confining_thread, start_process, PendingSpawn};
use super::record::{Record, State};
use super::running_input::{InputWatch, Writer};
use super::settle::{describe, finish, Outcome, Stop};
use super::state::State as Engine;
use crate::errors::os_reason;
use crate::process::signals;
use crate::process::spawn::{self, Exit};
use crate::process::watchdog;
use crate::text::capture::{Sink, Stream, Wrote};

/// How long the pipes may stay open after the leader exited (descendants
/// holding them) before the rest of the group is stopped.
pub const DRAIN_GRACE: Duration = Duration::from_millis(1000);

const CHUNK: usize = 64 * 1024;

/// Start the supervisor of `rec` on the engine's runtime.
pub fn launch(eng: &Arc<Engine>, rec: Arc<Record>, mut l: Launch) {
    eng.launching
        .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    let pending = l
        .confine
        .take()
        .map(|plan| hand_to_confining_thread(eng, &rec, plan, &mut l));
    // The supervisor's task is large and lives as long as the command. It is
    // created from an engine thread, so its memory comes from that thread's
    // allocator arena rather than the caller's (the JS thread's), where it
    // would sit between the records kept for the life of the process and
    // leave holes behind once the command settles. Spawned from a worker, it
    // goes to that worker's next-task slot: the same thread runs it at once,
    // and no other thread is woken for it.
    let eng = eng.clone();
    let runtime = eng.runtime.clone();
    runtime.spawn(async move {
        let runtime = eng.runtime.clone();
        runtime.spawn(supervise_guarded(eng, rec, l, pending));
    });
}

/// Test hook: a command whose last argument is this panics at the start of
/// its supervision while holding its record's lock (poisoning it).
#[cfg(test)]
pub(crate) const INJECT_PANIC: &str = "--nlc-test-inject-supervisor-panic";

/// [`supervise`], and if it panicked, what settles the command anyway:
/// nothing may wait on it forever.
async fn supervise_guarded(
    eng: Arc<Engine>,
    rec: Arc<Record>,
    l: Launch,
    pending: Option<PendingSpawn>,
) {
    if let Err(e) = CatchPanic(Box::pin(supervise(&eng, rec.clone(), l, pending))).await {
        if rec.is_settled() {
            return;
        }
        let pg = rec.pgid();
        if pg > 0 {
            rec.signal_tree(libc::SIGKILL);
            spawn::reap(pg);
            watchdog::untrack(pg);
        }
        release_cgroup(&rec);
        for s in Stream::BOTH {
            rec.log(s).finish();
        }
        let why = format!("the command's supervisor failed ({e}); its process group was stopped and the output so far is kept");
        finish(&eng, &rec, State::Killed, None, None, Some(why), true).await;
    }
}

async fn supervise(eng: &Arc<Engine>, rec: Arc<Record>, l: Launch, pending: Option<PendingSpawn>) {
    #[cfg(test)]
    if rec.argv.last().is_some_and(|a| a == INJECT_PANIC) {
        let _held = rec.live.locked();
        panic!("a panic injected into the supervision");
    }
    let Launch {
        dir,
        env,
        confine,
        private_tmp,
        input,
        files,
        mut control,
        limits,
    } = l;
    debug_assert!(
        confine.is_none(),
        "a confined start is handed over in launch"
    );
    // Off the caller's thread, before the process exists (SPEC §15).
    super::manifest::started(&rec);
    let spawned = match pending {
        Some(rx) => rx.await.unwrap_or_else(|_| {
            Err(std::io::Error::other(
                "the confining thread ended before it started the command",
            ))
        }),
        None => start_process(eng, &rec, &dir, env.as_deref(), input),
    };
    let others_launching = eng
        .launching
        .fetch_sub(1, std::sync::atomic::Ordering::AcqRel)
        > 1;
    drop(dir);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let error = format!(
                "{:?} could not be started: {}. {}",
                crate::errors::clip(&rec.argv[0]),
                os_reason(&e),
                crate::errors::start_failure_advice(&e).unwrap_or(
                    "Check that argv[0] names an installed executable this user may run."
                )
            );
            for s in Stream::BOTH {
                rec.log(s).finish();
            }
            drop(private_tmp);
            release_cgroup(&rec);
            if let Some(i) = &rec.input {
                i.close();
            }
            finish(eng, &rec, State::Exited, None, None, Some(error), false).await;
            return;
        }
    };
    let pid = child.pid;
    // The process exists and is starting: meanwhile, on another thread, the
    // next starts' log directories are made — unless more starts are on
    // their way (a burst), whose own directory creation a maker would only
    // compete with.
    if !others_launching {
        eng.spares.refill(&rec.logs_root);
    }
    // The first start's process exists: what ended processes left is swept
    // in the background (once; an atomic load from then on).
    eng.retention.after_start(&rec.logs_root);
    if let (Some(i), Some(master)) = (&rec.input, child.terminal.take()) {
        i.set_master(master);
    }
    {
        let mut live = rec.live.locked();
        if live.state == State::Queued {
            live.state = State::Running;
        }
    }
    let mut outcome = run(eng, &rec, limits, child, files, &mut control).await;
    // Writes still queued are answered (closed) as the writer goes with `run`.
    if let Some(i) = &rec.input {
        i.close();
    }
    // The leader is a zombie we have not reaped, so its pid — the group id —
    // cannot have been reused: stopping the group now only hits descendants.
    // What left the group is in the command's cgroup, when it has one: the
    // release kills it (it reads the cgroup first, so a command that left
    // nothing behind costs no kill).
    signals::signal_group(pid, libc::SIGKILL);
    spawn::reap(pid);
    watchdog::untrack(pid);
    // What it used, and a limit the kernel enforced on its own (the OOM
    // killer), read before the cgroup goes.
    let (usage, late) = limit_check(&rec, true);
    if outcome.stop.is_none() {
        outcome.stop = late;
    }
    release_cgroup(&rec);
    for s in Stream::BOTH {
        rec.log(s).finish();
    }
    {
        let limit = match &outcome.stop {
            Some(Stop::Limit(k, _)) => Some(*k),
            _ => None,
        };
        rec.live.locked().usage = crate::process::limits::Packed::new(usage, limit);
    }
    let (state, code, signal, mut error, killed) = describe(&rec, limits, &outcome);
    if outcome.descendants_held_pipes {
        let note = format!(
            "the command's process ended but descendants still held its output open after {}ms; they were stopped",
            DRAIN_GRACE.as_millis()
        );
        error = Some(match error {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
    drop(private_tmp);
    finish(eng, &rec, state, code, signal, error, killed).await;
}

/// Whether the command's tree went over a resource limit, and (with
/// `settled`) what it used.
fn limit_check(
    rec: &Record,
    settled: bool,
) -> (Option<crate::process::limits::Usage>, Option<Stop>) {
    use crate::process::limits;
    let (mut usage, mut hit) = (None, None);
    rec.cgroup(|c| {
        if settled {
            usage = limits::usage(c);
        }
        hit = limits::check(c)
            .zip(limits::of(c))
            .map(|(k, l)| Stop::Limit(k, l));
    });
    (usage, hit)
}

/// Give the command's cgroup back (what is left inside is killed first).
fn release_cgroup(rec: &Record) {
    if let Some(c) = rec.take_cgroup() {
        c.release();
    }
}

/// How often a limited command's counters are looked at.
const LIMIT_PERIOD: Duration = Duration::from_millis(25);

async fn run(
    eng: &Arc<Engine>,
    rec: &Arc<Record>,
    limits: Limits,
    child: spawn::Spawned,
    files: [File; 2],
    control: &mut mpsc::UnboundedReceiver<Control>,
) -> Outcome {
    let spawn::Spawned {
        pid,
        stdout,
        stderr,
        stdin,
        terminal: _,
    } = child;
    let [out_file, err_file] = files;
    let mut sinks = [
        Sink::new(
            out_file,
            limits.max_output_bytes,
            eng.retention.log_bytes().clone(),
        ),
        Sink::new(
            err_file,
            limits.max_output_bytes,
            eng.retention.log_bytes().clone(),
        ),
    ];
    let mut out = if rec.input.as_ref().is_some_and(|i| i.terminal) {
        pipe::Receiver::from_owned_fd_unchecked(stdout).ok()
    } else {
        pipe::Receiver::from_owned_fd(stdout).ok()
    };
    let mut err = stderr.and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok());
    let mut writer = Writer::new(rec, stdin);
    let mut out_buf = vec![0u8; CHUNK];
    let mut err_buf = vec![0u8; CHUNK];

    let exit_wait = wait_exit(pid);
    tokio::pin!(exit_wait);

    let start = Instant::now();
    let far = start + Duration::from_secs(60 * 60 * 24 * 365 * 30);
    let budget = start
        .checked_add(crate::policy::duration_ms(limits.timeout_ms))
        .unwrap_or(far);
    let grace = crate::policy::duration_ms(rec.kill_grace_ms);
    let idle = limits.idle_timeout_ms.map(crate::policy::duration_ms);
    let idle_timer = sleep_until(idle.map_or(far, |d| start + d));
    let budget_timer = sleep_until(budget);
    let escalate_timer = sleep_until(far);
    let drain_timer = sleep_until(far);
    tokio::pin!(budget_timer, escalate_timer, drain_timer, idle_timer);
    let input_watch = InputWatch::new(rec, &eng.registry, limits.input_wait_ms, &writer, far);
    let input_timer = sleep_until(input_watch.first(start));
    tokio::pin!(input_timer);
    // Resource limits are looked at on a timer (SPEC §15).
    let mut limited = false;
    rec.cgroup(|c| limited = crate::process::limits::watched(c));
    let limit_timer = sleep_until(if limited { start + LIMIT_PERIOD } else { far });
    tokio::pin!(limit_timer);
    let (mut escalating, mut draining, mut listening) = (false, false, true);

    let mut exit: Option<Exit> = None;
    let mut stop: Option<Stop> = None;
    let mut held = false;

    macro_rules! begin_stop {
        ($why:expr, $sig:expr) => {{
            let sig: i32 = $sig;
            if stop.is_none() && exit.is_none() {
                stop = Some($why);
                rec.signal_tree(sig);
                if sig != libc::SIGKILL {
                    rec.signal_tree(libc::SIGCONT);
                    escalate_timer.as_mut().reset(Instant::now() + grace);
                    escalating = true;
                }
            }
        }};
    }

    loop {
        if exit.is_some() && out.is_none() && err.is_none() {
            break;
        }
        tokio::select! {
            biased;
            msg = control.recv(), if listening => match msg {
                Some(Control::Write { data, close, reply }) => writer.push(data, close, reply),
                Some(Control::Kill(sig, reason)) => {
                    if exit.is_some() {
                        // Only descendants are left: stop them and settle.
                        rec.signal_tree(libc::SIGKILL);
                        held = out.is_some() || err.is_some();
                        break;
                    }
                    begin_stop!(Stop::Killed(reason, sig), sig);
                }
                None => listening = false,
            },
            e = &mut exit_wait, if exit.is_none() => {
                exit = Some(e);
                // The leader is gone: its terminal takes no more resizes and
                // is let go. A Windows pseudo console keeps the output open
                // until it is closed, and closing waits for its host to flush
                // what it rendered (which this loop goes on reading), so it
                // is dropped off the runtime. On Unix the reads hold their
                // own copy of the master side.
                if let Some(t) = rec.input.as_ref().and_then(|i| i.take_master()) {
                    tokio::task::spawn_blocking(move || drop(t));
                }
                drain_timer.as_mut().reset(Instant::now() + DRAIN_GRACE);
                draining = true;
            }
            // Before the reads: a command printing without pause must still
            // get its input (a ctrl-c). The reads cannot starve either: a
            // command that stops reading its input fills the pipe.
            r = writer.write_some(), if writer.busy() => {
                if matches!(r, Ok(n) if n > 0) {
                    // It has something to read now: that episode is over.
                    input_watch.active(input_timer.as_mut());
                }
                writer.wrote(r);
            }
            r = read_some(&mut out, &mut out_buf), if out.is_some() => {
                if let (Some(d), Some(_)) = (idle, r) {
                    idle_timer.as_mut().reset(Instant::now() + d);
                }
                if r.is_some() {
                    input_watch.active(input_timer.as_mut());
                }
                match r {
                    Some(n) => if let Some(why) = take(&eng.retention, rec, &mut sinks[0], Stream::Stdout, &out_buf[..n]) {
                        begin_stop!(why, libc::SIGTERM);
                    },
                    None => out = None,
                }
            }
            r = read_some(&mut err, &mut err_buf), if err.is_some() => {
                if let (Some(d), Some(_)) = (idle, r) {
                    idle_timer.as_mut().reset(Instant::now() + d);
                }
                if r.is_some() {
                    input_watch.active(input_timer.as_mut());
                }
                match r {
                    Some(n) => if let Some(why) = take(&eng.retention, rec, &mut sinks[1], Stream::Stderr, &err_buf[..n]) {
                        begin_stop!(why, libc::SIGTERM);
                    },
                    None => err = None,
                }
            }
            _ = &mut budget_timer, if stop.is_none() && exit.is_none() => {
                begin_stop!(Stop::Timeout, libc::SIGTERM);
            }
            _ = &mut idle_timer, if idle.is_some() && stop.is_none() && exit.is_none() => {
                begin_stop!(Stop::Idle, libc::SIGTERM);
            }
            _ = &mut input_timer, if input_watch.armed() && exit.is_none() => {
                input_watch.check(pid, &writer, input_timer.as_mut());
            }
            _ = &mut limit_timer, if limited && stop.is_none() && exit.is_none() => {
                match limit_check(rec, false).1 {
                    Some(why) => begin_stop!(why, libc::SIGKILL),
                    None => limit_timer.as_mut().reset(Instant::now() + LIMIT_PERIOD),
                }
            }
            _ = &mut escalate_timer, if escalating => {
                rec.signal_tree(libc::SIGKILL);
                escalating = false;
            }
            _ = &mut drain_timer, if draining => {
                held = true;
                break;
            }
        }
    }
    let exit = match exit {
        Some(e) => e,
        None => exit_wait.await,
    };
    Outcome {
        exit,
        stop,
        descendants_held_pipes: held,
    }
}

/// Read what is there; `None` at end of file or on a read error.
async fn read_some(rx: &mut Option<pipe::Receiver>, buf: &mut [u8]) -> Option<usize> {
    let r = rx.as_mut()?;
    match r.read(buf).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// Copy a chunk into its log; say why to stop the command, if it must stop.
fn take(
    retention: &Arc<super::retention::Retention>,
    rec: &Record,
    sink: &mut Sink,
    s: Stream,
    chunk: &[u8],
) -> Option<Stop> {
    let wrote = sink.write(rec.log(s), chunk);
    // The log budget is kept as bytes land, not only at settle.
    if retention.over_budget() {
        retention.kick();
    }
    match wrote {
        Ok(Wrote::All) | Ok(Wrote::Discarded) => None,
        Ok(Wrote::CapReached) => Some(Stop::OutputLimit(s)),
        Err(e) => Some(Stop::WriteFailed(s, e.to_string())),
    }
}

/// The leader's exit, watched through a pidfd (no SIGCHLD handler, so the
/// host's own child processes are never disturbed).
async fn wait_exit(pid: i32) -> Exit {
    #[cfg(unix)]
    if let Some(fd) = spawn::pidfd_open(pid) {
        // SAFETY: the AsyncFd takes ownership of the pidfd, which nothing else
        // holds or closes while it is registered.
        if let Ok(afd) = unsafe { AsyncFd::register(fd) } {
            while let Ok(mut guard) = afd.readable().await {
                if let Some(e) = spawn::peek_exit(pid, false) {
                    return e;
                }
                guard.clear_ready();
            }
        }
    }
    // Windows: the system's wait pool announces the exit.
    #[cfg(windows)]
    if let Some(exited) = spawn::exit_notice(pid) {
        if exited.await.is_ok() {
            if let Some(e) = spawn::peek_exit(pid, false) {
                return e;
            }
        }
    }
    // No pidfd: wait on a blocking thread.
    match tokio::task::spawn_blocking(move || spawn::peek_exit(pid, true)).await {
        Ok(Some(e)) => e,
        _ => Exit::Signal(libc::SIGKILL),
    }
}
