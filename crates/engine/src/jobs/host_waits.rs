//! Awaits resolved on the host's own thread by a command's settled event.

use super::bank;
use super::record::Record;

/// Awaits waiting on the host's own thread, by task counter: the binding
/// enters a command here when an await on the thread its settled event goes
/// to finds it unsettled, and resolves those awaits when that event arrives,
/// with the status built here when the command settled (so the host's
/// thread does not build it, and no engine task per await is woken just to
/// hand it over). `None` until it settled.
static HOST_WAITS: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<u64, Option<super::record::Status>>>,
> = std::sync::LazyLock::new(Default::default);

/// An await of `rec` on the host's thread will be resolved by its settled
/// event (see [`HOST_WAITS`]).
pub fn await_on_host_thread(rec: &Record) {
    HOST_WAITS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(rec.seq)
        .or_insert(None);
}

/// The settled status of `rec` for the awaits its settled event resolves on
/// the host's thread (`None`: no await waits there), marked looked at: the
/// one built when it settled, or one built now (an await entered after the
/// settle had passed that point).
pub fn take_host_wait_status(rec: &Record) -> Option<super::record::Status> {
    let built = HOST_WAITS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&rec.seq)?;
    Some(built.unwrap_or_else(|| rec.status(true, bank::builtin_ref)))
}

/// Once `rec` settled: build the status its awaits on the host's thread
/// get, if any waits (outside the table's lock: building may read the logs).
pub(super) fn fill_host_waits(rec: &Record) {
    let waits = || HOST_WAITS.lock().unwrap_or_else(|e| e.into_inner());
    if !waits().contains_key(&rec.seq) {
        return;
    }
    let status = rec.status(true, bank::builtin_ref);
    if let Some(slot) = waits().get_mut(&rec.seq) {
        *slot = Some(status);
    }
}
