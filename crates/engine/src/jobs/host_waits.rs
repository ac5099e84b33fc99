//! Awaits resolved on the host's own thread by a command's settled event.

use super::bank;
use super::record::{Record, Status};

/// Awaits waiting on the host's own thread, by task counter: the binding
/// enters a command here when an await on the thread its settled event goes
/// to finds it unsettled, and resolves those awaits when that event arrives,
/// with the status built here when the command settled (so the host's
/// thread does not build it, and no engine task per await is woken just to
/// hand it over). `None` until it settled. One table per engine.
#[derive(Debug, Default)]
pub struct HostWaits(std::sync::Mutex<std::collections::HashMap<u64, Option<Status>>>);

impl HostWaits {
    fn table(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u64, Option<Status>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An await of `rec` on the host's thread will be resolved by its
    /// settled event.
    pub fn await_on_host_thread(&self, rec: &Record) {
        self.table().entry(rec.seq).or_insert(None);
    }

    /// The settled status of `rec` for the awaits its settled event resolves
    /// on the host's thread (`None`: no await waits there), marked looked
    /// at: the one built when it settled, or one built now (an await entered
    /// after the settle had passed that point).
    pub fn take_host_wait_status(&self, rec: &Record) -> Option<Status> {
        let built = self.table().remove(&rec.seq)?;
        Some(built.unwrap_or_else(|| rec.status(true, bank::builtin_ref)))
    }

    /// Once `rec` settled: build the status its awaits on the host's thread
    /// get, if any waits (outside the table's lock: building may read the
    /// logs).
    pub(super) fn fill_host_waits(&self, rec: &Record) {
        if !self.table().contains_key(&rec.seq) {
            return;
        }
        let status = rec.status(true, bank::builtin_ref);
        if let Some(slot) = self.table().get_mut(&rec.seq) {
            *slot = Some(status);
        }
    }
}
