//! The napi layer of neurolink-commands: it converts JS values to engine
//! values, calls the engine (`crates/engine`) and maps its errors. The
//! handwritten adapter `index.js` wraps these functions into the public API
//! (host objects, AbortSignal wiring, the host's bank, the tool objects).

mod binding;

use std::path::PathBuf;
use std::sync::Arc;

use binding::convert::{self, absent, describe, kind};
use binding::inputs;
use binding::outputs::*;
use engine::commands::{self, StartContext};
use engine::errors::EngineError;
use engine::record::{BankMode, KillReason};
use engine::{bank, gitrun, registry, runtime};
use napi::bindgen_prelude::{FnArgs, Function, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, ValueType};
use napi_derive::napi;

/// Every engine error becomes a JS `Error` with the engine's message.
fn js_err(e: EngineError) -> napi::Error {
    napi::Error::from_reason(e.to_string())
}

type Listener =
    ThreadsafeFunction<(String, String), (), FnArgs<(String, String)>, napi::Status, false, true>;

#[napi_derive::module_init]
fn init_runtime() {
    let rt = runtime::build();
    runtime::install(rt.handle().clone());
    napi::bindgen_prelude::create_custom_tokio_runtime(rt);
}

/// Connect the engine to this Node environment's adapter:
/// `listener(kind, taskId)` hears `"bank"` (bank both streams, then call
/// `completeBanking`) and `"settled"` for the commands of hosts registered
/// with the returned listener id. When the environment is torn down its
/// listener goes away and its commands get SIGTERM; the first environment
/// that loads the addon (normally the main thread: the process is ending)
/// stops every command of the process instead.
#[napi]
pub fn init(env: Env, listener: Function<FnArgs<(String, String)>, ()>) -> napi::Result<u32> {
    static OWNER_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let owner = !OWNER_TAKEN.swap(true, std::sync::atomic::Ordering::AcqRel);
    let tsfn: Listener = listener
        .build_threadsafe_function::<(String, String)>()
        .weak::<true>()
        .callee_handled::<false>()
        .build_callback(|ctx| Ok(FnArgs::from(ctx.value)))?;
    let id = runtime::add_listener(Arc::new(move |e| {
        let (kind, id) = match e {
            runtime::Event::Bank(id) => ("bank", id),
            runtime::Event::Settled(id) => ("settled", id),
        };
        tsfn.call(
            (kind.to_string(), id),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }));
    env.add_env_cleanup_hook((), move |_| {
        runtime::remove_listener(id);
        if owner {
            commands::terminate_everything(libc_sigterm());
        } else {
            commands::terminate_listener(id, libc_sigterm());
        }
    })?;
    Ok(id)
}

fn libc_sigterm() -> i32 {
    engine::signals::from_name("SIGTERM").unwrap_or(15)
}

/// A new host id whose events go to `listener_id` (the adapter keeps the
/// host object → id map).
#[napi]
pub fn register_host(listener_id: u32) -> u32 {
    registry::register_host_for(listener_id)
}

/// Validate and store a host's command policy.
#[napi]
pub fn set_policy(host_id: u32, policy: Unknown) -> napi::Result<()> {
    let p = inputs::policy(&policy).map_err(js_err)?;
    registry::with_host(host_id, |h| h.policy = Some(p));
    Ok(())
}

/// Validate a policy without storing it (for `startCommandWithPolicy`).
#[napi]
pub fn check_policy(policy: Unknown) -> napi::Result<()> {
    inputs::policy(&policy).map(|_| ()).map_err(js_err)
}

/// Start a command: every check of the contract in order, then the handle.
/// `policy` overrides the host's for this call; `allowlist` is the policy's
/// hook (called once with argv and the real cwd).
#[napi]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn start_command(
    host_id: u32,
    argv: Unknown,
    options: Unknown,
    policy: Option<Unknown>,
    allowlist: Option<Function<FnArgs<(Vec<String>, String)>, Unknown>>,
    tmpdir: String,
    context_session: Option<String>,
    host_banks: bool,
) -> napi::Result<NativeHandle> {
    let policy = match policy {
        Some(p) if !absent(&p) => Some(inputs::policy(&p).map_err(js_err)?),
        _ => None,
    };
    if policy.is_none() && registry::with_host(host_id, |h| h.policy.is_none()) {
        return Err(js_err(EngineError::NoPolicy));
    }
    let argv =
        convert::string_array(&argv, "argv", "[\"/usr/bin/git\", \"status\"]").map_err(js_err)?;
    let opts = inputs::start_options(&options).map_err(js_err)?;
    let mut hook = |a: &[String], cwd: &str| -> Result<(), String> {
        let Some(f) = allowlist.as_ref() else {
            return Ok(());
        };
        match f.call(FnArgs::from((a.to_vec(), cwd.to_string()))) {
            Ok(v) => match kind(&v) {
                ValueType::Boolean if v.coerce_to_bool_value() => Ok(()),
                ValueType::String => Err(convert::as_string(&v, "allowlist result").unwrap_or_default()),
                _ => Err(format!(
                    "The policy's allowlist hook returned {} instead of true or a refusal string, so the command was refused: return true to allow it, or a string saying why not",
                    describe(&v)
                )),
            },
            Err(e) => Err(format!(
                "The policy's allowlist hook threw ({}), so the command was refused: make it return true or a refusal string",
                e.reason
            )),
        }
    };
    let ctx = StartContext {
        host: host_id,
        policy,
        veto: Some(&mut hook),
        tmpdir: PathBuf::from(tmpdir),
        context_session,
        bank: if host_banks {
            BankMode::Host
        } else {
            BankMode::BuiltIn
        },
        hidden: false,
    };
    commands::start(argv, opts, ctx)
        .map(Into::into)
        .map_err(js_err)
}

trait BoolValue {
    fn coerce_to_bool_value(&self) -> bool;
}

impl BoolValue for Unknown<'_> {
    fn coerce_to_bool_value(&self) -> bool {
        use napi::bindgen_prelude::JsValue;
        self.coerce_to_bool().unwrap_or(false)
    }
}

/// The live status (synchronous); a settled command is marked looked at.
#[napi]
pub fn command_status(host_id: u32, task_id: String) -> napi::Result<NativeStatus> {
    commands::status(host_id, &task_id)
        .map(Into::into)
        .map_err(js_err)
}

/// Resolve when settled, or with the current status after `timeoutMs`.
#[napi]
pub async fn await_command(
    host_id: u32,
    task_id: String,
    timeout_ms: Option<f64>,
) -> napi::Result<NativeStatus> {
    commands::await_settled(host_id, &task_id, timeout_ms)
        .await
        .map(Into::into)
        .map_err(js_err)
}

fn kill_reason(reason: &str) -> KillReason {
    match reason {
        "abort" => KillReason::Abort,
        "dispose" => KillReason::HostDisposed,
        _ => KillReason::Caller,
    }
}

/// Kill a command (default SIGTERM, SIGKILL after the grace) and resolve with its status.
#[napi]
pub async fn kill_command(
    host_id: u32,
    task_id: String,
    signal: Option<String>,
) -> napi::Result<NativeStatus> {
    let sig = commands::parse_signal(signal.as_deref()).map_err(js_err)?;
    commands::kill(host_id, &task_id, sig, KillReason::Caller)
        .await
        .map(Into::into)
        .map_err(js_err)
}

/// Validate a signal name (the adapter checks before it waits).
#[napi]
pub fn check_signal(signal: Unknown) -> napi::Result<()> {
    if absent(&signal) {
        return Ok(());
    }
    let name = convert::as_string(&signal, "signal").map_err(js_err)?;
    commands::parse_signal(Some(&name))
        .map(|_| ())
        .map_err(js_err)
}

/// Send SIGTERM without waiting (`abort`), or for a disposed host (`dispose`).
#[napi]
pub fn signal_command(host_id: u32, task_id: String, reason: String) -> napi::Result<bool> {
    commands::signal_kill(host_id, &task_id, libc_sigterm(), kill_reason(&reason)).map_err(js_err)
}

/// Terminate every unsettled command of the host; resolves with how many were signalled.
#[napi]
pub async fn kill_all_commands(host_id: u32) -> u32 {
    commands::kill_all(host_id).await
}

/// Stop every command of every host now (the host process is exiting); no
/// command starts after this.
#[napi]
pub fn terminate_all() {
    commands::shut_down(libc_sigterm());
}

/// One page of a stream.
#[napi]
pub async fn read_command_output(
    host_id: u32,
    task_id: String,
    stream: String,
    offset: f64,
    limit: f64,
) -> napi::Result<NativePage> {
    let s = inputs::stream_name(Some(&stream), true).map_err(js_err)?;
    let w = engine::paging::Window {
        offset: offset as u64,
        limit: limit as u64,
    };
    let page = napi::bindgen_prelude::spawn_blocking(move || {
        commands::read_output(host_id, &task_id, s, w)
            .map(|p| NativePage::new(&task_id, s.name(), p))
    })
    .await
    .map_err(|e| napi::Error::from_reason(e.to_string()))?;
    page.map_err(js_err)
}

/// Check a page request and return `[stream, offset, limit]` normalised.
#[napi]
pub fn check_page(page: Unknown) -> napi::Result<(String, f64, f64)> {
    let (s, w) = inputs::page_request(&page).map_err(js_err)?;
    Ok((s.name().to_string(), w.offset as f64, w.limit as f64))
}

/// Check a `{ offset?, limit? }` request; returns `[offset, limit]` normalised.
#[napi]
pub fn check_window(window: Unknown) -> napi::Result<(f64, f64)> {
    let w = inputs::window_request(&window, "options").map_err(js_err)?;
    Ok((w.offset as f64, w.limit as f64))
}

/// Throw the unknown-task error if the host has no such command.
#[napi]
pub fn check_task(host_id: u32, task_id: Unknown) -> napi::Result<String> {
    let id = convert::as_string(&task_id, "taskId").map_err(js_err)?;
    registry::lookup(host_id, &id).map(|_| id).map_err(js_err)
}

/// Counters of a host's session (its default session when none is named).
#[napi]
pub fn command_counts(host_id: u32, session_id: Option<String>) -> NativeCounts {
    commands::counts(host_id, session_id.as_deref()).into()
}

/// Counters of a session across all hosts.
#[napi]
pub fn session_counts(session_id: String) -> NativeCounts {
    registry::session_counts(&session_id).into()
}

/// The host's default session id.
#[napi]
pub fn default_session(host_id: u32) -> String {
    registry::default_session(host_id)
}

/// The host's commands, oldest first.
#[napi]
pub fn list_commands(host_id: u32, filter: Option<Unknown>) -> napi::Result<Vec<NativeListEntry>> {
    let (session, running) = match filter {
        Some(f) if !absent(&f) => {
            let obj = convert::as_object(&f, "filter").map_err(js_err)?;
            (
                convert::opt_string(&obj, "sessionId", "filter").map_err(js_err)?,
                convert::opt_bool(&obj, "running", "filter").map_err(js_err)?,
            )
        }
        _ => (None, None),
    };
    Ok(commands::list(host_id, session.as_deref(), running)
        .into_iter()
        .map(Into::into)
        .collect())
}

/// What a stream gained since the previous call for that stream.
#[napi]
pub fn read_new_output(
    host_id: u32,
    task_id: String,
    stream: Option<String>,
) -> napi::Result<NativeNewOutput> {
    let s = inputs::stream_name(stream.as_deref(), false).map_err(js_err)?;
    let n = commands::read_new(host_id, &task_id, s).map_err(js_err)?;
    Ok(NativeNewOutput {
        task_id,
        stream: s.name().to_string(),
        offset: n.page.offset as f64,
        total_size: n.page.total_size as f64,
        has_more: n.page.has_more,
        content: n.page.content.into(),
        state: n.state.as_str().to_string(),
        running: !n.state.is_settled(),
    })
}

/// A stream's whole log decoded as UTF-8 (what the host's bank is given).
#[napi]
pub async fn log_text(task_id: String, stream: String) -> napi::Result<String> {
    let s = inputs::stream_name(Some(&stream), true).map_err(js_err)?;
    napi::bindgen_prelude::spawn_blocking(move || bank::log_text(&task_id, s))
        .await
        .map_err(|e| napi::Error::from_reason(e.to_string()))?
        .map_err(js_err)
}

/// The host bank's answer for both streams: each a value the bank resolved
/// to, or the reason it failed.
#[napi]
pub fn complete_banking(
    task_id: String,
    stdout: Unknown,
    stdout_error: Option<String>,
    stderr: Unknown,
    stderr_error: Option<String>,
) -> bool {
    let outcomes = [
        inputs::bank_outcome(&stdout, stdout_error),
        inputs::bank_outcome(&stderr, stderr_error),
    ];
    bank::complete_banking(&task_id, outcomes)
}

/// What a host bank call needs: `[label, sessionId, hostId]`.
#[napi]
pub fn bank_request(task_id: String) -> napi::Result<(String, String, u32)> {
    let rec = registry::by_id(&task_id)
        .ok_or_else(|| napi::Error::from_reason(format!("No background command \"{task_id}\"")))?;
    Ok((rec.label(), rec.session.to_string(), rec.host))
}

/// The whole text of a built-in artifact.
#[napi]
pub async fn read_artifact(artifact_id: String) -> napi::Result<String> {
    napi::bindgen_prelude::spawn_blocking(move || bank::read_artifact(&artifact_id))
        .await
        .map_err(|e| napi::Error::from_reason(e.to_string()))?
        .map_err(js_err)
}

/// One page of a built-in artifact.
#[napi]
pub async fn retrieve_artifact(
    artifact_id: String,
    offset: f64,
    limit: f64,
) -> napi::Result<NativeArtifactPage> {
    let w = engine::paging::Window {
        offset: offset as u64,
        limit: limit as u64,
    };
    napi::bindgen_prelude::spawn_blocking(move || {
        bank::retrieve_artifact(&artifact_id, w).map(|p| NativeArtifactPage {
            artifact_id,
            offset: p.offset as f64,
            limit: p.limit as f64,
            total_size: p.total_size as f64,
            has_more: p.has_more,
            content: p.content.into(),
        })
    })
    .await
    .map_err(|e| napi::Error::from_reason(e.to_string()))?
    .map_err(js_err)
}

/// Validate and store a host's git settings.
#[napi]
pub fn configure_git(host_id: u32, options: Unknown) -> napi::Result<NativeGitSettings> {
    let input = inputs::git_options(&options).map_err(js_err)?;
    gitrun::configure(host_id, input)
        .map(Into::into)
        .map_err(js_err)
}

/// Throw unless the host configured the git tools.
#[napi]
pub fn check_git(host_id: u32) -> napi::Result<()> {
    gitrun::settings(host_id).map(|_| ()).map_err(js_err)
}

/// Check raw `runGitCommand` args: an array of strings without NUL.
#[napi]
pub fn check_git_args(args: Unknown) -> napi::Result<Vec<String>> {
    let a = convert::string_array(&args, "args", "[\"log\", \"--oneline\"]").map_err(js_err)?;
    if let Some(i) = a.iter().position(|s| s.contains('\0')) {
        return Err(napi::Error::from_reason(format!(
            "args[{i}] contains a NUL character: remove it"
        )));
    }
    Ok(a)
}

/// Run git with the hardened prefix, the replaced environment and the
/// host's git settings; resolves once it settled.
#[napi]
pub async fn run_git(
    host_id: u32,
    args: Vec<String>,
    session_id: Option<String>,
    tmpdir: String,
    host_banks: bool,
) -> napi::Result<NativeGitResult> {
    let bank = if host_banks {
        BankMode::Host
    } else {
        BankMode::BuiltIn
    };
    gitrun::run(host_id, args, session_id, PathBuf::from(tmpdir), bank)
        .await
        .map(Into::into)
        .map_err(js_err)
}

/// Check `{ timeoutMs? }` of an await; returns the wait bound in ms.
#[napi]
pub fn check_wait(opts: Option<Unknown>) -> napi::Result<Option<f64>> {
    let Some(o) = opts.filter(|o| !absent(o)) else {
        return Ok(None);
    };
    let obj = convert::as_object(&o, "opts").map_err(js_err)?;
    match convert::opt_number(&obj, "timeoutMs", "opts").map_err(js_err)? {
        Some(t) if t.is_nan() || t < 0.0 => Err(napi::Error::from_reason(format!(
            "opts.timeoutMs must be a number of milliseconds ≥ 0 to wait at most (got {})",
            engine::policy::js_number(t)
        ))),
        other => Ok(other),
    }
}

/// Build a git tool's args from a model's params (values, never flags).
#[napi]
pub fn git_tool_args(host_id: u32, tool: String, params: Unknown) -> napi::Result<Vec<String>> {
    let settings = gitrun::settings(host_id).map_err(js_err)?;
    let tool_kind = engine::git::GitTool::from_name(&tool)
        .ok_or_else(|| napi::Error::from_reason(format!("Unknown git tool {tool:?}")))?;
    let value = if absent(&params) {
        serde_json::Value::Object(Default::default())
    } else {
        convert::as_object(&params, "params").map_err(js_err)?;
        convert::cast::<serde_json::Value>(&params, "params").map_err(js_err)?
    };
    engine::git::tool_args(tool_kind, &value, &settings.repo_root)
        .map_err(|e| napi::Error::from_reason(e.to_string()))
}

// Interactive commands (SPEC §9): their napi functions live in
// `binding/input.rs`; exported here so they count as the crate's API.
pub use binding::input::{resize_command_terminal, write_command_input, NativeWritten};
