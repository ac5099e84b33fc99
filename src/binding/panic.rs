//! The one panic boundary of the napi layer. Every export carries
//! `#[boundary]` (crates/boundary), which runs its body in [`guard`]; the
//! future of an export that returns a promise runs in [`guard_future`]
//! (through `crate::promise`). A panic in either becomes an `NLC_INTERNAL`
//! error that says it is a bug and names the call, instead of crossing
//! napi's `extern "C"` trampoline (which aborts the host) or leaving a
//! promise that napi rejects with its own `GenericFailure`. The engine's
//! supervision catches its own panics (`engine::jobs::catch_panic`), whose
//! future wrapper is reused here.
//!
//! For tests, `NEUROLINK_COMMANDS_TEST_PANIC` (read once, only when set)
//! names exports, by their JS name and comma-separated, that panic on every
//! call: a synchronous one inside its body, one that returns a promise inside
//! its future. Unset, nothing here differs.

use std::cell::Cell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use engine::jobs::catch_panic::{self, CatchPanic};

use crate::Code;

/// The variable naming the exports a test makes panic.
pub const TEST_PANIC_VAR: &str = "NEUROLINK_COMMANDS_TEST_PANIC";

/// The names `NEUROLINK_COMMANDS_TEST_PANIC` holds (none when unset).
fn names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        std::env::var(TEST_PANIC_VAR)
            .map(|v| v.split(',').map(|n| n.trim().to_string()).collect())
            .unwrap_or_default()
    })
}

/// Whether the test hook names the export `what`.
fn injected(what: &str) -> bool {
    names().iter().any(|n| n == what)
}

thread_local! {
    /// The export running on this thread, for the future it returns.
    static CURRENT: Cell<Option<&'static str>> = const { Cell::new(None) };
    /// A test-injected panic not yet raised: the export's future takes it,
    /// else the export raises it as it returns.
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

/// The error of a panic in `what` (a JS call's name).
pub fn bug(what: &str, message: &str) -> napi::Error<Code> {
    napi::Error::new(
        Code("NLC_INTERNAL"),
        format!(
            "Internal error in neurolink-commands (a bug, not a refusal): {what} panicked ({message}). \
             That call failed; the host and its other commands keep working. Please report this message."
        ),
    )
}

/// Run the body of the export `what`; a panic in it becomes [`bug`].
pub fn guard<T>(
    what: &'static str,
    f: impl FnOnce() -> napi::Result<T, Code>,
) -> napi::Result<T, Code> {
    let outer = CURRENT.with(|c| c.replace(Some(what)));
    let inject = injected(what);
    ARMED.with(|a| a.set(inject));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let r = f();
        if ARMED.with(|a| a.replace(false)) {
            panic!("{TEST_PANIC_VAR} names {what}");
        }
        r
    }));
    ARMED.with(|a| a.set(false));
    CURRENT.with(|c| c.set(outer));
    result.unwrap_or_else(|payload| Err(bug(what, &catch_panic::message(&*payload))))
}

/// `fut` (the async part of the export running on this thread) with a
/// panic in it turned into `Err` of its [`bug`] error.
pub fn guard_future<F: Future + Send + 'static>(
    fut: F,
) -> impl Future<Output = Result<F::Output, napi::Error<Code>>> + Send + 'static {
    let what = CURRENT.with(|c| c.get()).unwrap_or("a call");
    let inject = ARMED.with(|a| a.replace(false));
    async move {
        CatchPanic(Box::pin(async move {
            if inject {
                panic!("{TEST_PANIC_VAR} names {what}");
            }
            fut.await
        }))
        .await
        .map_err(|m| bug(what, &m))
    }
}

/// Build the JS value of `what` (`"status"`, `"handle"`, `"artifactRef"`):
/// napi converts an export's return value after the export has returned
/// (a promise's, when it settles), outside [`guard`], so the conversions of
/// the objects built by the engine's own code are guarded here. A panic
/// becomes the same `NLC_INTERNAL` error, as the JS `Error` object napi
/// throws or rejects with as it is. The test hook names it `<what>Object`.
pub fn converting(
    env: napi::sys::napi_env,
    what: &'static str,
    f: impl FnOnce() -> napi::Result<napi::sys::napi_value>,
) -> napi::Result<napi::sys::napi_value> {
    // (No allocation here: this runs for every status made.)
    let inject = names()
        .iter()
        .any(|n| n.strip_suffix("Object") == Some(what));
    match catch_unwind(AssertUnwindSafe(|| {
        if inject {
            panic!("{TEST_PANIC_VAR} names {what}Object");
        }
        f()
    })) {
        Ok(r) => r,
        Err(payload) => {
            let call = format!("building the {what} object");
            let e = bug(&call, &catch_panic::message(&*payload));
            Err(crate::rejection(&napi::Env::from_raw(env), e))
        }
    }
}

/// Run `f`, a callback napi calls on the JS thread outside any export (an
/// engine event): a panic in it is kept from unwinding into napi (the
/// panic hook has reported it) and `None` comes back.
pub fn contain<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}
