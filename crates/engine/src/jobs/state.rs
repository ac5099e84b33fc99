//! What one engine owns of the commands' state: its registry (hosts,
//! commands, id spelling, refused recoveries), its spawn gate, the awaits
//! resolved on the host's thread, its log settings and sweeps, its spare
//! log directories and the runtime
//! its tasks run on. [`crate::engine::Engine`] holds one and drops it; the
//! supervisors of its commands hold it too while they run.

use std::sync::Arc;

use super::gate::Gate;
use super::host_waits::HostWaits;
use super::private_tmp::PrivateTmps;
use super::registry::Registry;
use super::retention::Retention;
use super::spare::Spares;

/// One engine's state (see the module header).
#[derive(Debug)]
pub struct State {
    /// Every host and command of this engine.
    pub registry: Registry,
    /// Closed when the engine shuts down (or its host process exits).
    pub gate: Gate,
    /// Awaits resolved on the host's own thread.
    pub host_waits: HostWaits,
    /// Where its logs go, how long they stay, and its sweeps.
    pub retention: Arc<Retention>,
    /// The private temp directories of its commands not yet settled.
    pub private_tmps: Arc<PrivateTmps>,
    /// Log directories made ahead of this engine's starts.
    pub spares: Arc<Spares>,
    /// The runtime the supervisors and the engine's blocking work run on.
    pub runtime: tokio::runtime::Handle,
    /// Commands handed to a supervisor whose spawn has not returned yet (a
    /// burst of starts: spares are not made meanwhile).
    pub launching: std::sync::atomic::AtomicUsize,
}

impl State {
    /// Fresh state whose tasks run on `runtime`.
    pub fn new(runtime: tokio::runtime::Handle) -> Self {
        let registry = Registry::new();
        let spares = Arc::new(Spares::new(runtime.clone()));
        State {
            registry,
            gate: Gate::default(),
            host_waits: HostWaits::default(),
            spares,
            private_tmps: Arc::default(),
            retention: Arc::new(Retention::new(runtime.clone())),
            runtime,
            launching: Default::default(),
        }
    }
}
