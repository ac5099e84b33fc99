//! The host API in engine terms: start, status, await, kill, kill-all, pages,
//! counters, the list and the follow reads. The binding calls these with
//! plain Rust values.

#[cfg(windows)]
use crate::platform::windows::libc;
use crate::sync::Unpoisoned;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicI32;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;

use super::bank;
use super::input::{InputState, WriteFailure, TERMINAL_EOF};
use super::record::{BankMode, KillReason, Link, Live, Record, Settled, State, Status};
use super::registry::Counts;

use super::launch::{Launch, Limits};
use super::state::State as Engine;
use super::supervisor;
use super::supervisor::Control;
use super::supervisor::PrivateTmp;
use crate::errors::os_reason;
use crate::errors::{EngineError, EngineResult};
use crate::intern;
use crate::policy::confine::{self, Confinement, ConfinementInput, Tmp};
use crate::policy::cwd;
use crate::policy::{self, Policy};
use crate::process::confine::Plan;
use crate::process::signals;
use crate::process::spawn::Input;
use crate::text::capture::{Stream, StreamLog};
use crate::text::logfile::{self, log_error, LogBase};
use crate::text::paging::{self, Page, Window};

/// The options of one start, as plain values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StartOptions {
    /// Working directory (relative paths resolve against the real root).
    pub cwd: String,
    /// Budget in ms.
    pub timeout_ms: Option<f64>,
    /// Per-stream cap.
    pub max_output_bytes: Option<f64>,
    /// Replacing environment.
    pub env: Option<Vec<(String, String)>>,
    /// Label.
    pub label: Option<String>,
    /// Session.
    pub session_id: Option<String>,
    /// `confine`: narrows the policy's confinement (SPEC §8).
    pub confine: Option<crate::policy::confine::ConfinementInput>,
    /// What it reads: /dev/null (the default), a pipe, or a terminal.
    pub input: Input,
    /// Stop when neither stream printed for this long (ms); the policy's default when absent.
    pub idle_timeout_ms: Option<f64>,
    /// Report the command waiting for input once it printed nothing for this
    /// long (ms) while blocked reading it; the policy's default when absent.
    pub input_wait_ms: Option<f64>,
    /// `limits`: narrows the policy's resource limits (SPEC §15).
    pub limits: Option<crate::process::limits::LimitsInput>,
}

/// The policy's allowlist hook as the engine sees it: `Err(message)` refuses.
pub type Veto<'a> = dyn FnMut(&[String], &str) -> Result<(), String> + 'a;

/// Everything a start needs besides argv and options.
pub struct StartContext<'a> {
    /// The host.
    pub host: u32,
    /// A policy for this call only (`startCommandWithPolicy`, git); else the host's.
    pub policy: Option<Policy>,
    /// The policy's allowlist hook: `Err(message)` refuses.
    pub veto: Option<&'a mut Veto<'a>>,
    /// `os.tmpdir()` of the host process.
    pub tmpdir: PathBuf,
    /// The host's `getToolContext().sessionId`, when it is a non-empty string.
    pub context_session: Option<String>,
    /// How the command is banked.
    pub bank: BankMode,
    /// Whether it stays out of lists and counters (toolset-internal runs).
    pub hidden: bool,
}

/// What a start returns at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Handle {
    /// The task id.
    pub task_id: String,
    /// The argv as started.
    pub argv: Vec<String>,
    /// Epoch ms.
    pub started_at: f64,
}

/// Check everything in the contract's order, prepare the logs, and start the
/// command's supervisor. Returns before the process exists.
pub fn start(
    eng: &Arc<Engine>,
    argv: Vec<String>,
    opts: StartOptions,
    ctx: StartContext<'_>,
) -> EngineResult<Handle> {
    // 1. A policy.
    let policy = match ctx.policy {
        Some(p) => p,
        None => eng
            .registry
            .with_host(ctx.host, |h| h.policy.clone())
            .ok_or(EngineError::NoPolicy)?,
    };
    // 2–4. argv, no shell, allowlisted.
    policy::check_argv(&argv)?;
    policy::check_not_shell(&argv[0])?;
    policy::check_allowed(&policy, &argv[0])?;
    // 5. The cwd check.
    let dir = cwd::enter(&policy.cwd_root, &opts.cwd)?;
    let real_cwd = dir.real.to_string_lossy().into_owned();
    // 6. The hook.
    if let Some(veto) = ctx.veto {
        veto(&argv, &real_cwd).map_err(EngineError::Vetoed)?;
    }
    // 7. Numbers.
    let timeout_ms = policy::positive_or("timeoutMs", opts.timeout_ms, policy.default_timeout_ms)?;
    let max_output_bytes = policy::bytes_or(
        "maxOutputBytes",
        opts.max_output_bytes,
        policy.max_output_bytes,
    )?;
    let idle_timeout_ms = match opts.idle_timeout_ms {
        Some(v) => Some(policy::positive("idleTimeoutMs", v)?),
        None => policy.idle_timeout_ms,
    };
    let input_wait_ms =
        policy::positive_or("inputWaitMs", opts.input_wait_ms, policy.input_wait_ms)?;
    if let Some(env) = &opts.env {
        policy::check_env(env)?;
    }
    // Windows (SPEC §14): no terminal yet, and a `.cmd`/`.bat` program's
    // arguments must be safe from cmd.exe — refused before anything runs.
    #[cfg(windows)]
    {
        use crate::platform::AsFd;
        if let Input::Terminal { .. } = opts.input {
            return Err(EngineError::TerminalUnavailable(
                crate::process::spawn::TERMINAL_UNAVAILABLE.into(),
            ));
        }
        if let Some(why) =
            crate::process::spawn::refusal(&argv, dir.fd.as_fd(), opts.env.as_deref())
        {
            return Err(EngineError::ShellArgument(why));
        }
    }
    // 8. Nothing starts once the host process is exiting.
    if eng.gate.closed() {
        return Err(EngineError::HostExiting);
    }
    // 9. Confinement: narrowing only, and fail closed.
    let confinement = confinement_of(&policy, opts.confine.as_ref())?;
    // 10. Limits: narrowing only, in place for the whole tree or refused.
    let limited = crate::process::limits::take(&crate::policy::limits::effective(
        policy.limits.as_ref(),
        opts.limits.as_ref(),
    )?)
    .map_err(|u| EngineError::LimitUnavailable(u.0))?;

    let (seq, logs_root, made) = make_logs(eng, &ctx.tmpdir)?;
    let task_id = eng.registry.task_id(seq);
    let (env, confine, private_tmp) = match &confinement {
        None => (opts.env, None, None),
        // The toolsets' own runs (git) get the environment they name.
        Some((c, root)) if !c.network && !ctx.hidden => prepare_confinement(
            eng,
            c,
            root,
            &argv,
            without_network_env(opts.env),
            &ctx.tmpdir,
        )?,
        Some((c, root)) => prepare_confinement(eng, c, root, &argv, opts.env, &ctx.tmpdir)?,
    };
    let session = eng.registry.choose_session(
        ctx.host,
        [opts.session_id.as_deref(), ctx.context_session.as_deref()],
    );
    let started_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0);
    let cgroup = limited.or_else(crate::process::cgroup::Cgroup::take);
    let (tx, rx) = mpsc::unbounded_channel();
    let label = policy::label_for(opts.label.as_deref(), &argv);
    let given_label = (label != policy::label_for(None, &argv)).then(|| label.into_boxed_str());
    let rec = Arc::new(Record {
        given_label,
        seq,
        host: ctx.host,
        session: intern::intern(&session),
        argv: argv.clone().into_boxed_slice(),
        cwd: intern::intern(&real_cwd),
        started_at_ms: started_at,
        started: Instant::now(),
        streams: [StreamLog::new(), StreamLog::new()],
        logs_root,
        idents: made.idents,
        hidden: ctx.hidden,
        confined: confine.is_some(),
        kill_grace_ms: policy.kill_grace_ms,
        bank: ctx.bank,
        pgid: AtomicI32::new(0),
        // A command confined at level "full" is PID 1 of its own PID
        // namespace: every descendant dies with it.
        containment: crate::process::containment(
            confine
                .as_ref()
                .is_some_and(|p| p.level == crate::process::confine::Level::Full),
            cgroup.is_some(),
        ),
        live: Mutex::new(Live::queued()),
        settled: Settled::new(),
        link: Mutex::new(Link::Supervisor(tx)),
        input: match opts.input {
            Input::Null => None,
            Input::Pipe => Some(Box::new(InputState::new(false))),
            Input::Terminal { .. } => Some(Box::new(InputState::new(true))),
        },
    });
    if let Some(c) = cgroup {
        rec.set_cgroup(c);
    }
    eng.registry.insert(rec.clone());
    supervisor::launch(
        eng,
        rec,
        Launch {
            dir,
            env,
            confine,
            private_tmp,
            input: opts.input,
            files: made.files,
            control: rx,
            limits: Limits {
                timeout_ms,
                max_output_bytes,
                idle_timeout_ms,
                input_wait_ms,
            },
        },
    );
    Ok(Handle {
        task_id,
        argv,
        started_at,
    })
}

/// The confinement a start runs under (the options' narrowing the
/// policy's) and the real cwdRoot, refused when this kernel cannot enforce
/// all of it.
fn confinement_of(
    policy: &Policy,
    options: Option<&ConfinementInput>,
) -> EngineResult<Option<(Confinement, PathBuf)>> {
    if policy.confine.is_none() && options.is_none() {
        return Ok(None);
    }
    let root = cwd::real_root(&policy.cwd_root)?;
    let Some(c) = confine::effective(policy.confine.as_ref(), options, &root)? else {
        return Ok(None);
    };
    if let Some(why) = crate::process::confine::missing_at(c.network, c.level) {
        return Err(EngineError::ConfinementUnavailable(why));
    }
    Ok(Some((c, root)))
}

/// The environment, rules and private temp directory of a confined start.
type Prepared = (
    Option<Vec<(String, String)>>,
    Option<Plan>,
    Option<PrivateTmp>,
);

fn prepare_confinement(
    eng: &Engine,
    c: &Confinement,
    root: &Path,
    argv: &[String],
    env: Option<Vec<(String, String)>>,
    tmpdir: &Path,
) -> EngineResult<Prepared> {
    let shared = std::fs::canonicalize(tmpdir).unwrap_or_else(|_| tmpdir.to_path_buf());
    let mut tmp = None;
    if c.tmp == Tmp::Private {
        let made = match crate::process::confine::take_private_tmp(&shared) {
            Some(dir) => Ok(dir),
            None => crate::process::confine::make_private_tmp(&shared),
        };
        let dir = made.map_err(|e| {
            EngineError::LogDir(format!(
                "Cannot create a private temp directory for a confined command in {}: {}. Point TMPDIR at a writable directory with free space, or use confine.tmp: \"shared\".",
                shared.display(),
                os_reason(&e)
            ))
        })?;
        // The spawn points TMPDIR, TMP and TEMP at it (see
        // `spawn::spawn_piped_own`), off this thread.
        tmp = Some(PrivateTmp::new(dir, &eng.private_tmps));
    }
    let exe = crate::process::confine::exe_dirs(&argv[0], env.as_deref());
    let plan = confine::plan(c, root, &exe, tmp.as_ref().map(PrivateTmp::path), &shared);
    Ok((env, Some(plan), tmp))
}

/// What a command confined without network is told besides its
/// environment, unless that names it (in any case): npm and pnpm work from
/// their cache and do not retry. Without it an install's registry lookups
/// fail (every socket but a unix one is refused) and are retried for
/// 70 seconds as if the network were down.
pub const WITHOUT_NETWORK_ENV: [(&str, &str); 4] = [
    ("npm_config_offline", "true"),
    ("npm_config_fetch_retries", "0"),
    ("pnpm_config_offline", "true"),
    ("pnpm_config_fetch_retries", "0"),
];

/// `env` (the host's when `None`) with [`WITHOUT_NETWORK_ENV`] added. A host
/// environment that is not all UTF-8 is inherited as it is.
fn without_network_env(env: Option<Vec<(String, String)>>) -> Option<Vec<(String, String)>> {
    let mut vars = match env {
        Some(e) => e,
        None => {
            let mut host = Vec::new();
            for (k, v) in std::env::vars_os() {
                match (k.into_string(), v.into_string()) {
                    (Ok(k), Ok(v)) => host.push((k, v)),
                    _ => return None,
                }
            }
            host
        }
    };
    for (name, value) in WITHOUT_NETWORK_ENV {
        if !vars.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)) {
            vars.push((name.to_string(), value.to_string()));
        }
    }
    Some(vars)
}

/// The task counter of this start, the trusted base and the task directory
/// in it (the marker and both logs created exclusively, their identities
/// recorded): a spare made ahead under that base when one is ready
/// ([`spare`]; the supervisor has the next ones made once the process
/// exists), else made now.
fn make_logs(eng: &Arc<Engine>, tmpdir: &Path) -> EngineResult<(u64, Arc<LogBase>, logfile::Made)> {
    let fail = |what: &str, p: &Path, e: &std::io::Error| {
        EngineError::LogDir(format!(
            "Cannot create the log {what} {}: {}. {}",
            p.display(),
            os_reason(e),
            if crate::errors::out_of_fds(e) {
                crate::errors::OUT_OF_FDS_ADVICE
            } else {
                "Commands keep their output under os.tmpdir(); point TMPDIR at a writable directory with free space."
            }
        ))
    };
    let names = Stream::BOTH.map(|s| s.file_name());
    let mut stale = false;
    let mut seq = None;
    loop {
        let base = match eng.retention.base_for(tmpdir, stale) {
            Ok(b) => b,
            Err(logfile::BaseError::Os(p, e)) => {
                let n = *seq.get_or_insert_with(super::ids::new_task_seq);
                return Err(fail("directory", &p.join(eng.registry.task_id(n)), &e));
            }
            Err(logfile::BaseError::Untrusted(m)) => return Err(EngineError::LogDir(m)),
        };
        if !stale {
            if let Some((n, made)) = eng.spares.take(&base) {
                return Ok((n, base, made));
            }
        }
        let n = *seq.get_or_insert_with(super::ids::new_task_seq);
        let task_id = eng.registry.task_id(n);
        match logfile::make_task_dir(&base, &task_id, names) {
            Ok(made) => return Ok((n, base, made)),
            // The held directory was removed since (a test's tmpdir, a
            // cleanup): resolve it afresh once.
            Err((_, "directory", e)) if !stale && e.raw_os_error() == Some(libc::ENOENT) => {
                stale = true;
            }
            Err((p, what, e)) => return Err(fail(what, &p, &e)),
        }
    }
}

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

/// Counters of one host's session, chosen by the session rule from the
/// caller's id and then the host's context candidate.
pub fn counts(eng: &Engine, host: u32, session: Option<&str>, context: Option<&str>) -> Counts {
    let reg = &eng.registry;
    reg.host_counts(host, &reg.choose_session(host, [session, context]))
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
        data.push(TERMINAL_EOF);
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
