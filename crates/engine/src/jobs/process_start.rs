//! Starting a command's process, for its supervisor ([`super::supervisor`]).
//!
//! How it works: an unconfined start spawns on the supervisor's own task
//! ([`start_process`]). A confined start is handed, from the caller's thread,
//! straight to a confining thread ([`hand_to_confining_thread`]), which
//! applies the kernel confinement and spawns; the supervisor awaits the
//! result ([`PendingSpawn`]). Either way the spawn runs inside the engine's
//! spawn gate ([`super::gate`]): the process exists only with its group
//! recorded and tracked, and none is started once the owner began exiting.
//! A confined child whose supervisor is gone by the time it exists is
//! stopped and reaped on the spot.

#[cfg(windows)]
use crate::platform::windows::libc;
use crate::platform::{AsFd, AsRawFd};
use std::sync::Arc;

use super::launch::Launch;
use super::record::Record;
use super::state::State as Engine;
use crate::policy::cwd::HeldDir;
use crate::process::spawn::{self, Input};
use crate::process::{transform, watchdog};

/// Spawn under the gate; the group is recorded and tracked before it opens.
pub(super) fn start_process(
    eng: &Engine,
    rec: &Record,
    dir: &HeldDir,
    env: Option<&[(String, String)]>,
    input: Input,
) -> std::io::Result<spawn::Spawned> {
    // Its cgroup's descriptors for the spawn, borrowed without the list of
    // running cgroups held locked across the spawn: only this supervisor
    // takes the cgroup back (and closes them), after the spawn.
    let mut raw = None;
    rec.cgroup(|c| {
        let h = c.handle();
        let extra = h.extra.map(|f| f.map(|f| f.as_raw_fd()));
        raw = Some((h.dir.as_raw_fd(), h.procs.as_raw_fd(), extra));
    });
    // SAFETY: see above — the descriptors stay open until `release_cgroup`,
    // which this task runs only after `start_process` has returned.
    let cgroup = raw.map(|(dir, procs, extra)| unsafe {
        crate::process::cgroup::Handle {
            dir: crate::platform::BorrowedFd::borrow_raw(dir),
            procs: crate::platform::BorrowedFd::borrow_raw(procs),
            extra: extra.map(|f| f.map(|f| crate::platform::BorrowedFd::borrow_raw(f))),
        }
    });
    eng.gate.guarded(rec, &mut || {
        // The spawn-time transform (a terminal) sits here, after every check
        // and before the process exists.
        transform::spawn(transform::Request {
            argv: &rec.argv,
            dir: dir.fd.as_fd(),
            env,
            input,
            tmp: None,
            cgroup,
        })
    })
}

/// A confined start's spawn, handed from the JS thread straight to a
/// confining thread (SPEC §8); the supervisor awaits its result.
pub(super) type PendingSpawn = tokio::sync::oneshot::Receiver<std::io::Result<spawn::Spawned>>;

pub(super) fn hand_to_confining_thread(
    eng: &Arc<Engine>,
    rec: &Arc<Record>,
    plan: crate::process::confine::Plan,
    l: &mut Launch,
) -> PendingSpawn {
    use crate::process::confine;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let dir = match l.dir.fd.try_clone() {
        Ok(d) => d,
        Err(e) => {
            let _ = tx.send(Err(e));
            return rx;
        }
    };
    let mut cgroup = None;
    rec.cgroup(|c| cgroup = Some(c.owned_handle()));
    let cgroup = match cgroup.transpose() {
        Ok(c) => c,
        Err(e) => {
            let _ = tx.send(Err(e));
            return rx;
        }
    };
    let count = |unix: bool| -> confine::Counter {
        let rec = Arc::downgrade(rec);
        Box::new(move |n| {
            if let Some(rec) = rec.upgrade() {
                let mut live = rec.live.lock().unwrap_or_else(|e| e.into_inner());
                let n = u16::try_from(n).unwrap_or(u16::MAX);
                if unix {
                    live.refused_unix = live.refused_unix.saturating_add(n);
                } else {
                    live.refused_sockets = live.refused_sockets.saturating_add(n);
                }
            }
        })
    };
    // Network off: the engine's listener counts refused sockets, or, when
    // the command's connects are mediated, its own supervisor does.
    let refused = confine::Refusals {
        sockets: (!plan.network).then(|| count(false)),
        unix: Some(count(true)),
    };
    let counted = (!plan.network).then(|| count(false));
    let start = confine::Start {
        plan,
        argv: rec.argv.to_vec(),
        dir,
        env: l.env.take(),
        input: l.input,
        cgroup,
        refused,
    };
    let grec = rec.clone();
    let geng = eng.clone();
    let guard: confine::Guard = Box::new(move |spawn| {
        let spawned = geng.gate.guarded(&grec, spawn);
        if let (Ok(child), Some(counter)) = (&spawned, counted) {
            // The listener counts into the record while it exists.
            confine::count_refusals(child.pid, counter);
        }
        spawned
    });
    let drec = rec.clone();
    let deliver: confine::Deliver = Box::new(move |r| {
        // Nobody is left to supervise it (the supervisor failed): stop it.
        if let Err(Ok(child)) = tx.send(r) {
            drec.signal_tree(libc::SIGKILL);
            spawn::reap(child.pid);
            watchdog::untrack(child.pid);
        }
    });
    confine::spawn_detached(start, guard, deliver);
    rx
}
