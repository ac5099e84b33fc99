//! The tokio runtime the engine runs on, and the listeners (one per Node
//! environment) that hear about commands that need the host's bank or just
//! settled.

use crate::sync::Unpoisoned;
use std::collections::HashMap;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use tokio::runtime::{Builder, Handle, Runtime};

static INSTALLED: OnceLock<Handle> = OnceLock::new();
static OWN: OnceLock<Runtime> = OnceLock::new();
type Listener = Arc<dyn Fn(Event) + Send + Sync>;
static LISTENERS: LazyLock<Mutex<HashMap<u32, Listener>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static NEXT_LISTENER: AtomicU32 = AtomicU32::new(1);

/// Something the host side must hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The command's process ended; bank both streams through the host and answer with `complete_banking`.
    Bank(String),
    /// The command's settled state was published.
    Settled(String),
    /// The command began waiting for input (once per episode).
    WaitingForInput(String),
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

/// Add a listener (one per Node environment that loads the addon); returns
/// its id, which hosts registered from that environment carry.
pub fn add_listener(f: Arc<dyn Fn(Event) + Send + Sync>) -> u32 {
    let mut l = LISTENERS.locked();
    let id = NEXT_LISTENER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    l.insert(id, f);
    id
}

/// Forget a listener (its environment is being torn down).
pub fn remove_listener(id: u32) {
    LISTENERS.locked().remove(&id);
}

/// Whether listener `id` exists (without one, host banking cannot happen).
pub fn has_listener(id: u32) -> bool {
    LISTENERS.locked().contains_key(&id)
}

/// Tell listener `id`, if it still exists.
pub fn emit(id: u32, e: Event) {
    let f = LISTENERS.locked().get(&id).cloned();
    if let Some(f) = f {
        f(e);
    }
}
