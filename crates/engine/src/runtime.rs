//! The tokio runtime an engine runs on (see [`crate::engine::EngineConfig`])
//! and what its listeners (one per Node environment, kept by the engine's
//! registry) hear about: commands that need the host's bank, just settled,
//! or began waiting for input.

use std::sync::Arc;

use tokio::runtime::{Builder, Runtime};

/// A listener of an engine's events.
pub type Listener = Arc<dyn Fn(Event) + Send + Sync>;

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
