//! The engine as a value: [`Engine::new`] makes one, every verb of
//! [`crate::jobs::commands`] (and the git toolset, the bank, recovery) takes
//! it, and dropping it stops, reaps and forgets its commands.
//!
//! An engine owns its registry (hosts, commands, the salt its task ids are
//! spelled with, the recovered ids and the refused recoveries), its spawn
//! gate, the awaits resolved on the host's thread, its spare log
//! directories, the count of spawns in flight and the runtime its tasks run
//! on (its own, unless [`EngineConfig::runtime`] names one). Two engines in
//! one process share nothing of that: a task id of one is unknown to the
//! other. What stays process-wide is listed, with the reason for each, in
//! [`crate::process_wide`].

#[cfg(windows)]
use crate::platform::windows::libc;
use std::sync::Arc;
use std::time::Duration;

use crate::jobs::commands;
use crate::jobs::state::State;

/// How an engine is made.
#[derive(Debug, Clone, Default)]
pub struct EngineConfig {
    /// The runtime to run the engine's tasks on (the addon's). When absent,
    /// the engine builds its own (two workers) and shuts it down when it is
    /// dropped.
    /// @default its own runtime
    pub runtime: Option<tokio::runtime::Handle>,
}

/// One engine: the owner of its commands' state (see the module header).
/// Dereferences to the state the verbs take.
#[derive(Debug)]
pub struct Engine {
    state: Arc<State>,
    /// The runtime built for this engine, when none was given.
    own: Option<tokio::runtime::Runtime>,
}

impl Engine {
    /// A new engine with nothing registered.
    pub fn new(config: EngineConfig) -> Engine {
        let (handle, own) = match config.runtime {
            Some(h) => (h, None),
            None => {
                let rt = crate::runtime::build();
                (rt.handle().clone(), Some(rt))
            }
        };
        Engine {
            state: Arc::new(State::new(handle)),
            own,
        }
    }

    /// The state the verbs take (also reached through `Deref`).
    pub fn state(&self) -> &Arc<State> {
        &self.state
    }

    /// Start nothing more, SIGKILL the process tree of every command that
    /// has not settled, and wait (bounded, as a kill waits) until each has
    /// been reaped, banked and settled; then remove the spare log
    /// directories. Returns how many commands were stopped. Dropping the
    /// engine does this too.
    pub fn shutdown(&self) -> usize {
        let state = &self.state;
        // Waits for spawns in flight to record their groups.
        state.gate.close();
        let running = state.registry.all_unsettled();
        for r in &running {
            r.send(crate::jobs::control::Control::Kill(
                libc::SIGKILL,
                crate::jobs::record::KillReason::HostDisposed,
            ));
            if r.pgid() > 0 {
                r.signal_tree(libc::SIGKILL);
            }
        }
        if !running.is_empty() {
            let bound = commands::kill_wait_bound(0.0) + Duration::from_secs(5);
            let handle = state.runtime.clone();
            let waits = running.clone();
            // Blocking on the runtime from a thread of its own: this may be
            // called (or dropped) inside an async task.
            let _ = std::thread::spawn(move || {
                handle.block_on(async move {
                    for r in &waits {
                        r.wait_settled(Some(bound)).await;
                    }
                })
            })
            .join();
        }
        state.spares.close();
        // Those that outlived the bound keep no private temp directory.
        state.private_tmps.remove_unsettled();
        running.len()
    }
}

impl std::ops::Deref for Engine {
    type Target = Arc<State>;
    fn deref(&self) -> &Arc<State> {
        &self.state
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown();
        if let Some(rt) = self.own.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Dropped inside an async task, where blocking on the
                // runtime's end would panic: its tasks go in the background.
                rt.shutdown_background();
            } else {
                // Its tasks (and the state they hold) are gone on return.
                rt.shutdown_timeout(Duration::from_secs(5));
            }
        }
    }
}
