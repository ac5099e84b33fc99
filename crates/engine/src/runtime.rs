//! The tokio runtime the engine runs on, and the listener that tells the
//! binding about commands that need the host's bank or just settled.

use std::sync::{Arc, OnceLock};

use tokio::runtime::{Builder, Handle, Runtime};

static INSTALLED: OnceLock<Handle> = OnceLock::new();
static OWN: OnceLock<Runtime> = OnceLock::new();
static LISTENER: OnceLock<Arc<dyn Fn(Event) + Send + Sync>> = OnceLock::new();

/// Something the host side must hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The command's process ended; bank both streams through the host and answer with `complete_banking`.
    Bank(String),
    /// The command's settled state was published.
    Settled(String),
}

/// A small runtime: two workers whatever the machine, named for `ps`.
pub fn build() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .thread_name("neurolink-cmd")
        .enable_all()
        .build()
        .expect("the tokio runtime starts")
}

/// Use `handle` for every task the engine spawns (the binding's runtime).
pub fn install(handle: Handle) {
    let _ = INSTALLED.set(handle);
}

/// The runtime to spawn on: the installed one, the current one, or our own.
pub fn handle() -> Handle {
    if let Some(h) = INSTALLED.get() {
        return h.clone();
    }
    if let Ok(h) = Handle::try_current() {
        return h;
    }
    OWN.get_or_init(build).handle().clone()
}

/// Set the listener once (the binding does, at load).
pub fn set_listener(f: Arc<dyn Fn(Event) + Send + Sync>) {
    let _ = LISTENER.set(f);
}

/// Whether a listener is set (without one, host banking cannot happen).
pub fn has_listener() -> bool {
    LISTENER.get().is_some()
}

/// Tell the listener.
pub fn emit(e: Event) {
    if let Some(f) = LISTENER.get() {
        f(e);
    }
}
