//! The spawn gate: from the host's exit hook (or the engine's shutdown) on,
//! no process is started that the exiting owner would never signal.

use super::record::Record;
use crate::process::{spawn, watchdog};

/// Spawns hold this shared from before their process exists until its group
/// is recorded (for the exit hook) and tracked (for the watchdog). The exit
/// hook takes it exclusively — so every spawn in flight finishes that
/// bookkeeping first — and sets it: from then on nothing is started, so no
/// process can be created that the exiting host never signals.
#[derive(Debug, Default)]
pub struct Gate(std::sync::RwLock<bool>);

impl Gate {
    /// The owner is going away: wait for spawns in flight to be recorded
    /// and refuse every later one.
    pub fn close(&self) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = true;
    }

    /// Whether the gate is closed (a start is then refused up front; the
    /// gate itself still guards a start that raced past this check).
    pub fn closed(&self) -> bool {
        *self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `spawn` under the gate (refused once the owner is going away),
    /// and record and track the new group before the gate opens: the exit
    /// hook then finds every group that exists. A confined start runs this
    /// on its confining thread.
    pub(super) fn guarded(
        &self,
        rec: &Record,
        spawn: &mut dyn FnMut() -> std::io::Result<spawn::Spawned>,
    ) -> std::io::Result<spawn::Spawned> {
        // The watchdog runs before the first process exists, not just after it.
        watchdog::ensure_started();
        let gate = self.0.read().unwrap_or_else(|e| e.into_inner());
        if *gate {
            return Err(std::io::Error::other("the host process is exiting"));
        }
        let child = spawn()?;
        rec.pgid
            .store(child.pid, std::sync::atomic::Ordering::Release);
        watchdog::track(child.pid);
        drop(gate);
        Ok(child)
    }
}
