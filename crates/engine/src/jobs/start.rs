//! Starting a command: every check in the contract's order (policy, argv,
//! allowlist, cwd, hook, numbers, gate, confinement, limits), then its log
//! directory, its record and its supervisor. Apart from the other verbs
//! ([`super::commands`] re-exports these) because it is the one that builds
//! a record, and the largest.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicI32;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;

use super::input::InputState;
use super::record::{BankMode, Link, Live, Record, Settled};

use super::launch::{Launch, Limits};
use super::state::State as Engine;
use super::supervisor;
use super::supervisor::PrivateTmp;
use crate::errors::os_reason;
use crate::errors::{EngineError, EngineResult};
use crate::intern;
use crate::policy::confine::{self, Confinement, ConfinementInput, Tmp};
use crate::policy::cwd;
use crate::policy::{self, Policy};
use crate::process::confine::Plan;
use crate::process::spawn::Input;
use crate::text::capture::{Stream, StreamLog};
use crate::text::logfile::{self, LogBase};

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
    // Windows (SPEC §14): a `.cmd`/`.bat` program's arguments must be safe
    // from cmd.exe — refused before anything runs.
    #[cfg(windows)]
    {
        use crate::platform::AsFd;
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
