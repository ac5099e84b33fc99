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
use boundary::boundary;
use engine::commands::{self, StartContext};
use engine::errors::{EngineError, EngineResult};
use engine::record::{BankMode, KillReason, Record};
use engine::{bank, runtime};
use napi::bindgen_prelude::{
    FnArgs, Function, JsObjectValue, JsValue, PromiseRaw, ToNapiValue, Unknown,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, ValueType};
use napi_derive::napi;

/// The `code` a JS error carries: napi sets an error's `code` property from
/// its status, so the status of our errors is the engine's `NLC_*` code.
pub struct Code(&'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

/// What a synchronous export returns: a value, or an error whose `code` is
/// the refusal's `NLC_*` code.
type Res<T> = napi::Result<T, Code>;

/// The one mapping from engine errors to JS errors: the engine's message,
/// and its kind's code as the error's `code`.
fn js_err(e: EngineError) -> napi::Error<Code> {
    napi::Error::new(Code(e.code()), e.to_string())
}

/// A napi failure of our own (not a refusal): `NLC_INTERNAL`.
fn internal(e: napi::Error) -> napi::Error<Code> {
    js_err(EngineError::Other(e.reason))
}

/// Run `fut` (the engine's async part of a verb) and settle a promise with
/// its value, or reject it with the coded JS error of its refusal. The
/// rejection is built on the JS thread as a real `Error` object with `code`
/// set; napi hands that object to the promise as it is.
fn promise<'e, T, F>(env: &'e Env, fut: F) -> Res<PromiseRaw<'e, T>>
where
    T: 'static + Send + ToNapiValue,
    F: 'static + Send + std::future::Future<Output = EngineResult<T>>,
{
    let fut = binding::panic::guard_future(fut);
    env.spawn_future_with_callback(async move { Ok(fut.await) }, |env, r| match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(rejection(env, js_err(e))),
        Err(bug) => Err(rejection(env, bug)),
    })
    .map_err(internal)
}

/// A coded error as a JS `Error` object to reject with.
fn rejection(env: &Env, e: napi::Error<Code>) -> napi::Error {
    let code = e.status.0;
    match env.create_error(napi::Error::from_reason(e.reason.clone())) {
        Ok(mut obj) => match obj.set_named_property("code", code) {
            Ok(()) => napi::Error::from(obj.to_unknown()),
            Err(_) => napi::Error::from_reason(e.reason),
        },
        Err(_) => napi::Error::from_reason(e.reason),
    }
}

/// A `taskId` argument as a string, then the host's command it names.
fn task(host_id: u32, task_id: &Unknown) -> napi::Result<Arc<Record>, Code> {
    let id = convert::as_string(task_id, "taskId").map_err(js_err)?;
    eng().registry.lookup(host_id, &id).map_err(js_err)
}

/// The engine's blocking part of a verb, off the JS thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> EngineResult<T> + Send + 'static,
) -> EngineResult<T> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        // On into the export's future, whose panic boundary names the call.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(EngineError::Other(e.to_string())),
    }
}

type Listener =
    ThreadsafeFunction<(String, String), (), FnArgs<(String, String)>, napi::Status, false, true>;

/// The engine of the process: one, shared by every Node environment (the
/// main thread's and each worker's), made at load on the addon's runtime.
/// An environment's hosts and listener are its own inside it; the exit hook
/// of the first environment stops every command of the process.
static ENGINE: std::sync::OnceLock<engine::Engine> = std::sync::OnceLock::new();

/// The process's engine (made on first use if the load hook did not run).
pub(crate) fn eng() -> &'static engine::Engine {
    ENGINE.get_or_init(|| engine::Engine::new(engine::EngineConfig::default()))
}

#[napi_derive::module_init]
fn init_runtime() {
    // The standard paths switch is read once, at load.
    engine::process::std_spawn::enabled();
    let rt = runtime::build();
    let _ = ENGINE.set(engine::Engine::new(engine::EngineConfig {
        runtime: Some(rt.handle().clone()),
    }));
    napi::bindgen_prelude::create_custom_tokio_runtime(rt);
}

/// Connect the engine to this Node environment's adapter:
/// `listener(kind, taskId)` hears `"bank"` (bank both streams, then call
/// `completeBanking`), `"settled"`, and `"waiting"` (it began waiting for
/// input, once per episode) for the commands of hosts registered
/// with the returned listener id. When the environment is torn down its
/// listener goes away and its commands get SIGTERM; the first environment
/// that loads the addon (normally the main thread: the process is ending)
/// stops every command of the process instead.
#[boundary]
#[napi]
pub fn init(env: Env, listener: Function<FnArgs<(String, String)>, ()>) -> napi::Result<u32, Code> {
    static OWNER_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let owner = !OWNER_TAKEN.swap(true, std::sync::atomic::Ordering::AcqRel);
    let tsfn: Listener = listener
        .build_threadsafe_function::<(String, String)>()
        .weak::<true>()
        .callee_handled::<false>()
        .build_callback(|ctx| {
            if ctx.value.0 == "settled" {
                binding::panic::contain(|| resolve_host_waits(&ctx.env, &ctx.value.1));
            }
            Ok(FnArgs::from(ctx.value))
        })
        .map_err(internal)?;
    let id = eng().registry.add_listener(Arc::new(move |e| {
        let (kind, id) = match e {
            runtime::Event::Bank(id) => ("bank", id),
            runtime::Event::Settled(id) => ("settled", id),
            runtime::Event::WaitingForInput(id) => ("waiting", id),
        };
        tsfn.call(
            (kind.to_string(), id),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }));
    LISTENER.with(|l| l.set(id));
    env.add_env_cleanup_hook((), move |_| {
        binding::panic::contain(|| {
            eng().registry.remove_listener(id);
            if owner {
                commands::terminate_everything(eng(), libc_sigterm());
                commands::exit_cleanup(eng());
            } else {
                commands::terminate_listener(eng(), id, libc_sigterm());
            }
        });
    })
    .map_err(internal)?;
    Ok(id)
}

fn libc_sigterm() -> i32 {
    engine::signals::from_name("SIGTERM").unwrap_or(15)
}

/// Register the adapter's makers of a status, a handle and an artifact
/// reference, once per environment at load: each is called with the
/// object's values in the order of its fields (`undefined` for an absent
/// one) and returns the object, built with V8's cached shapes instead of
/// one property at a time across napi. Until they are registered (or after
/// `null` unregisters them), the same objects are built here.
#[boundary]
#[napi(
    ts_args_type = "makeStatus: ((...values: unknown[]) => NativeStatus) | null, makeHandle?: (...values: unknown[]) => NativeHandle, makeArtifactRef?: (...values: unknown[]) => NativeArtifactRef"
)]
pub fn set_object_makers(
    env: &Env,
    make_status: Unknown,
    make_handle: Unknown,
    make_artifact_ref: Unknown,
) -> napi::Result<(), Code> {
    // SAFETY: `env` is this call's live environment, on its thread, and the
    // values are arguments of the call.
    unsafe {
        binding::factory::register(
            env.raw(),
            [
                make_status.raw(),
                make_handle.raw(),
                make_artifact_ref.raw(),
            ],
        )
    }
    .map_err(internal)
}

/// A new host id whose events go to `listener_id` (the adapter keeps the
/// host object → id map).
#[boundary]
#[napi]
pub fn register_host(listener_id: u32) -> u32 {
    eng().registry.register_host_for(listener_id)
}

/// Validate the caller's policy (its messages name each field), then store
/// the adapter's copy of it, validated in turn: the engine enforces exactly
/// what `getBackgroundCommandPolicy` returns, even if a getter answers
/// differently on a second read. `copy_error` is why copying threw.
#[boundary]
#[napi]
pub fn set_policy(
    host_id: u32,
    policy: Unknown,
    copy: Unknown,
    copy_error: Option<String>,
) -> napi::Result<(), Code> {
    inputs::policy(&policy).map_err(js_err)?;
    if let Some(reason) = copy_error {
        return Err(js_err(EngineError::BadInput(format!(
            "policy must be a plain object whose properties can be copied; copying it threw ({reason})"
        ))));
    }
    let p = inputs::policy(&copy).map_err(js_err)?;
    eng().registry.with_host(host_id, |h| h.policy = Some(p));
    Ok(())
}

/// Start a command: every check of the contract in order, then the handle.
/// With `explicit`, `policy` overrides the host's for this call; `allowlist`
/// is the policy's hook (called once with argv and the real cwd);
/// `abort_error` is why the adapter refused `options.abortSignal`, reported
/// right after the policy's own checks.
#[boundary]
#[napi]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn start_command(
    host_id: u32,
    argv: Unknown,
    options: Unknown,
    explicit: bool,
    policy: Unknown,
    allowlist: Option<Function<FnArgs<(Vec<String>, String)>, Unknown>>,
    abort_error: Option<String>,
    tmpdir: String,
    context_session: Option<String>,
    host_banks: bool,
) -> napi::Result<NativeHandle, Code> {
    let policy = if explicit {
        Some(inputs::policy(&policy).map_err(js_err)?)
    } else {
        None
    };
    if let Some(m) = abort_error {
        return Err(js_err(EngineError::BadInput(m)));
    }
    if policy.is_none() && eng().registry.with_host(host_id, |h| h.policy.is_none()) {
        return Err(js_err(EngineError::NoPolicy));
    }
    let argv = convert::string_array(
        &argv,
        "argv",
        "[\"/usr/bin/git\", \"status\"]",
        convert::MAX_ARGV_ENTRIES,
    )
    .map_err(js_err)?;
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
    commands::start(eng(), argv, opts, ctx)
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
#[boundary]
#[napi]
pub fn command_status(host_id: u32, task_id: Unknown) -> napi::Result<NativeStatus, Code> {
    Ok(commands::status_of(&*task(host_id, &task_id)?).into())
}

thread_local! {
    /// The listener of the Node environment running on this thread (0
    /// before `init`): the settled events of its hosts' commands arrive here.
    static LISTENER: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// Unbounded awaits made on this thread of commands that had not
    /// settled, by task counter: their promises, resolved when the
    /// command's settled event arrives on this thread.
    static HOST_WAITS: std::cell::RefCell<std::collections::HashMap<u64, Vec<napi::sys::napi_deferred>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// A promise that the settled event of `rec` resolves with its status, on
/// this (the host's) thread: no engine task waits for it, and the status
/// reaches the host in the same turn as the event.
fn settle_with_event<'e>(
    env: &'e Env,
    rec: &Record,
) -> napi::Result<PromiseRaw<'e, NativeStatus>, Code> {
    let mut deferred = std::ptr::null_mut();
    let mut promise = std::ptr::null_mut();
    // SAFETY: `env` is the live environment of this call, on its own
    // thread; both out-pointers are valid locals napi fills in.
    let status = unsafe { napi::sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) };
    if status != napi::sys::Status::napi_ok {
        return Err(js_err(EngineError::Other(
            "could not create a promise".into(),
        )));
    }
    eng().host_waits.await_on_host_thread(rec);
    HOST_WAITS.with(|w| w.borrow_mut().entry(rec.seq).or_default().push(deferred));
    Ok(PromiseRaw::new(env.raw(), promise))
}

/// The settled event of `task_id` arrived on this thread: resolve the
/// awaits made here with its status.
fn resolve_host_waits(env: &Env, task_id: &str) {
    let Some(rec) = eng().registry.by_id(task_id) else {
        return;
    };
    let Some(waits) = HOST_WAITS.with(|w| w.borrow_mut().remove(&rec.seq)) else {
        return;
    };
    let status = eng()
        .host_waits
        .take_host_wait_status(&rec)
        .unwrap_or_else(|| rec.status(true, bank::builtin_ref));
    for deferred in waits {
        // SAFETY: each deferred was made on this thread by
        // `settle_with_event` in this environment and is settled exactly
        // once (it was just taken out of the table), with a value made in
        // the same environment.
        unsafe {
            match NativeStatus::to_napi_value(env.raw(), status.clone().into()) {
                Ok(v) => napi::sys::napi_resolve_deferred(env.raw(), deferred, v),
                // The error's own JS object when it has one (a panic's
                // `NLC_INTERNAL` error), else one made from it.
                Err(e) => match napi::JsError::from(e).into_value(env.raw()) {
                    obj if obj.is_null() => napi::sys::Status::napi_generic_failure,
                    obj => napi::sys::napi_reject_deferred(env.raw(), deferred, obj),
                },
            };
        }
    }
}

/// Resolve when settled, or with the current status after `opts.timeoutMs`.
#[boundary]
#[napi(ts_return_type = "Promise<NativeStatus>")]
pub fn await_command<'e>(
    env: &'e Env,
    host_id: u32,
    task_id: Unknown,
    opts: Option<Unknown>,
) -> napi::Result<PromiseRaw<'e, NativeStatus>, Code> {
    let rec = task(host_id, &task_id)?;
    let timeout_ms = wait_bound(opts).map_err(js_err)?;
    if timeout_ms.is_none() && !rec.is_settled() {
        let here = LISTENER.with(|l| l.get());
        if here != 0 && eng().registry.listener_of(rec.host) == here {
            return settle_with_event(env, &rec);
        }
    }
    promise(env, async move {
        Ok(commands::await_record(rec, timeout_ms).await.into())
    })
}

/// `{ timeoutMs? }` of an await: the wait bound in ms.
fn wait_bound(opts: Option<Unknown>) -> EngineResult<Option<f64>> {
    let Some(o) = opts.filter(|o| !absent(o)) else {
        return Ok(None);
    };
    let obj = convert::as_object(&o, "opts")?;
    match convert::opt_number(&obj, "timeoutMs", "opts")? {
        Some(t) if t.is_nan() || t < 0.0 => Err(EngineError::BadInput(format!(
            "opts.timeoutMs must be a number of milliseconds ≥ 0 to wait at most (got {})",
            engine::policy::js_number(t)
        ))),
        other => Ok(other),
    }
}

fn kill_reason(reason: &str) -> KillReason {
    match reason {
        "abort" => KillReason::Abort,
        "dispose" => KillReason::HostDisposed,
        _ => KillReason::Caller,
    }
}

/// Kill a command (default SIGTERM, SIGKILL after the grace) and resolve with its status.
#[boundary]
#[napi(ts_return_type = "Promise<NativeStatus>")]
pub fn kill_command<'e>(
    env: &'e Env,
    host_id: u32,
    task_id: Unknown,
    signal: Option<Unknown>,
) -> napi::Result<PromiseRaw<'e, NativeStatus>, Code> {
    let rec = task(host_id, &task_id)?;
    let name = match signal.filter(|s| !absent(s)) {
        Some(s) => Some(convert::as_string(&s, "signal").map_err(js_err)?),
        None => None,
    };
    let sig = commands::parse_signal(name.as_deref()).map_err(js_err)?;
    promise(env, async move {
        Ok(commands::kill_record(rec, sig, KillReason::Caller)
            .await
            .into())
    })
}

/// Send SIGTERM without waiting (`abort`), or for a disposed host (`dispose`).
#[boundary]
#[napi]
pub fn signal_command(host_id: u32, task_id: String, reason: String) -> napi::Result<bool, Code> {
    commands::signal_kill(
        eng(),
        host_id,
        &task_id,
        libc_sigterm(),
        kill_reason(&reason),
    )
    .map_err(js_err)
}

/// Terminate every unsettled command of the host; resolves with how many were signalled.
#[boundary]
#[napi(ts_return_type = "Promise<number>")]
pub fn kill_all_commands(env: &Env, host_id: u32) -> napi::Result<PromiseRaw<'_, u32>, Code> {
    promise(
        env,
        async move { Ok(commands::kill_all(eng(), host_id).await) },
    )
}

/// Stop every command of every host now (the host process is exiting); no
/// command starts after this.
#[boundary]
#[napi]
pub fn terminate_all() {
    commands::shut_down(eng(), libc_sigterm());
    commands::exit_cleanup(eng());
}

/// Counters of a host's session, chosen by the session rule: `session_id`
/// (trimmed; empty or `fallback-<n>` counts as absent), then
/// `context_session` (the host's resolver or tool context), then the host's
/// default session.
#[boundary]
#[napi]
pub fn command_counts(
    host_id: u32,
    session_id: Option<String>,
    context_session: Option<String>,
) -> NativeCounts {
    commands::counts(
        eng(),
        host_id,
        session_id.as_deref(),
        context_session.as_deref(),
    )
    .into()
}

/// Counters of a session across all hosts.
#[boundary]
#[napi]
pub fn session_counts(session_id: String) -> NativeCounts {
    eng().registry.session_counts(&session_id).into()
}

/// The host's default session id.
#[boundary]
#[napi]
pub fn default_session(host_id: u32) -> String {
    eng().registry.default_session(host_id)
}

/// The host's commands, oldest first.
#[boundary]
#[napi]
pub fn list_commands(
    host_id: u32,
    filter: Option<Unknown>,
    context_session: Option<String>,
) -> napi::Result<Vec<NativeListEntry>, Code> {
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
    // A named session follows the session rule (trimmed; an empty or
    // `fallback-<n>` id is the host's session); no sessionId lists them all.
    let session = session.map(|s| {
        eng()
            .registry
            .choose_session(host_id, [Some(s.as_str()), context_session.as_deref()])
    });
    Ok(commands::list(eng(), host_id, session.as_deref(), running)
        .into_iter()
        .map(Into::into)
        .collect())
}

/// What a stream gained since the previous call for that stream.
#[boundary]
#[napi]
pub fn read_new_output(
    host_id: u32,
    task_id: Unknown,
    stream: Option<Unknown>,
) -> napi::Result<NativeNewOutput, Code> {
    let rec = task(host_id, &task_id)?;
    // Only `undefined` means "stdout"; `null` is a wrong type.
    let name = match stream.filter(|s| kind(s) != ValueType::Undefined) {
        Some(v) if kind(&v) == ValueType::String => {
            Some(convert::as_string(&v, "stream").map_err(js_err)?)
        }
        Some(v) => {
            return Err(js_err(EngineError::BadInput(format!(
                "stream must be \"stdout\" or \"stderr\" (got {})",
                describe(&v)
            ))))
        }
        None => None,
    };
    let s = inputs::stream_name(name.as_deref(), false).map_err(js_err)?;
    let n = commands::read_record_new(&rec, s).map_err(js_err)?;
    Ok(NativeNewOutput {
        task_id: rec.task_id(),
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
#[boundary]
#[napi(ts_return_type = "Promise<string>")]
pub fn log_text(
    env: &Env,
    task_id: String,
    stream: String,
) -> napi::Result<PromiseRaw<'_, String>, Code> {
    let s = inputs::stream_name(Some(&stream), true).map_err(js_err)?;
    promise(
        env,
        blocking(move || bank::log_text(&eng().registry, &task_id, s)),
    )
}

// Output reads, artifacts and git: their napi functions live in
// binding/{output,artifacts,git}.rs; exported here so they count as the
// crate's API.
pub use binding::artifacts::{bank_request, complete_banking, read_artifact, retrieve_artifact};
pub use binding::git::{configure_git, git_tool_args, run_git};
pub use binding::output::{await_output, read_command_output, search_output, ReadPage};
// The model-facing tools' contract (SPEC §3): binding/tools.rs.
pub use binding::tools::{describe_value, tool_contract, tool_request, NativeToolPolicy};
// Kernel confinement (SPEC §8): `confinementSupport()` lives with its
// option parsing in binding/confine.rs.
pub use binding::confine::{confinement_support, NativeConfinementSupport};
pub use binding::recover::recover_commands;
// Interactive commands (SPEC §9): their napi functions live in
// `binding/input.rs`; exported here so they count as the crate's API.
pub use binding::input::{resize_command_terminal, write_command_input, NativeWritten};
/// The status of a command that just settled (or began waiting for input),
/// for the host's listeners (it does not mark the command looked at).
#[boundary]
#[napi]
pub fn settled_status(host_id: u32, task_id: String) -> napi::Result<NativeStatus, Code> {
    let rec = eng().registry.lookup(host_id, &task_id).map_err(js_err)?;
    Ok(rec.status(false, bank::builtin_ref).into())
}

/// Set where logs go and how long and how much of them stay (`options` is
/// `{ dir?, maxTotalBytes?, maxAgeMs?, removeOnExit?, endedRetentionMs? }`;
/// `null` resets a field); returns the settings in force.
#[boundary]
#[napi]
pub fn configure_logs(options: Unknown, tmpdir: String) -> napi::Result<NativeLogSettings, Code> {
    let o = inputs::log_options(&options).map_err(js_err)?;
    eng()
        .retention
        .configure(o, std::path::Path::new(&tmpdir), &eng().registry)
        .map(Into::into)
        .map_err(js_err)
}

/// The log settings in force, changing none of them.
#[boundary]
#[napi]
pub fn get_log_settings(tmpdir: String) -> napi::Result<NativeLogSettings, Code> {
    eng()
        .retention
        .current(std::path::Path::new(&tmpdir))
        .map(Into::into)
        .map_err(js_err)
}

/// How many background sweeps of ended processes' task directories have
/// finished in this process (0 or 1): lets a test know that sweep is over.
#[boundary]
#[napi]
pub fn ended_sweeps_done() -> u32 {
    engine::jobs::retention::ended_sweeps_done()
}

/// Remove settled logs by age / size and the task directories ended
/// processes of this user left (`options` is `{ olderThanMs?, keepBytes? }`).
#[boundary]
#[napi(ts_return_type = "Promise<NativePruneResult>")]
pub fn prune_logs<'e>(
    env: &'e Env,
    options: Unknown,
    tmpdir: String,
) -> napi::Result<PromiseRaw<'e, NativePruneResult>, Code> {
    let o = inputs::prune_options(&options).map_err(js_err)?;
    promise(
        env,
        blocking(move || {
            eng()
                .retention
                .prune(o, std::path::Path::new(&tmpdir), &eng().registry)
                .map(|p| NativePruneResult {
                    removed: p.removed,
                    freed_bytes: p.freed_bytes,
                })
        }),
    )
}
