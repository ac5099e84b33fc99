//! Log directories made ahead of the start that uses them.
//!
//! Creating a task directory (the directory and both logs: three inodes;
//! the writer is named in an attribute of the directory) is the dearest
//! part of a start on the caller's thread: on ext4 without a journal, whose
//! inode allocator steps over every inode freed in the last minutes, it
//! takes from about 50 µs to close to a millisecond. So after a start a blocking thread of the engine's runtime
//! makes the next directories — at most [`KEEP`] — and the next start takes
//! one instead of making its own.
//!
//! A spare is made exactly as a start makes its directory
//! ([`logfile::make_task_dir`]: relative to the held trusted base, 0700,
//! its writer named, both logs created exclusively without following links,
//! their identities recorded), and under the task id the command that takes
//! it gets: the id's counter is drawn when the spare is made, so nothing is
//! renamed afterwards. A spare is used only by a start whose logs go to the
//! same held base (after a `configureLogs({ dir })` the old ones are
//! removed), names this process as its writer (a prune by another
//! process leaves it alone while this one lives, and removes it once this
//! one has ended), and is removed when the process exits. A spare whose
//! logs no longer have a name (its directory was deleted under the running
//! host) is never taken: the start makes its own directory, as it would
//! have without spares, and finds out then whether the base is gone.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::ids;
use crate::text::capture::Stream;
use crate::text::logfile::{self, LogBase, Made};

/// How many spares are kept ready at most.
pub const KEEP: usize = 2;

/// One directory made ahead: its base, the counter its name is spelled
/// from, and its open logs.
struct Spare {
    base: Arc<LogBase>,
    seq: u64,
    made: Made,
}

#[derive(Default)]
struct Pool {
    spares: Vec<Spare>,
    /// The log directory of the latest start: a spare made under another
    /// one (a maker that was at work when the directory changed) is removed
    /// at once instead of kept for a start that would never take it.
    current: Option<Arc<LogBase>>,
    /// A blocking thread is making spares now.
    making: bool,
    /// The process is exiting: no more spares.
    closed: bool,
}

/// One engine's spares, taken only by its starts.
pub struct Spares {
    pool: Mutex<Pool>,
    /// Signalled when a maker finishes (the exit cleanup waits for it).
    made: Condvar,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for Spares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spares")
    }
}

fn names() -> [&'static str; 2] {
    Stream::BOTH.map(|s| s.file_name())
}

impl Spares {
    /// No spares yet; they are made on `runtime`.
    pub fn new(runtime: tokio::runtime::Handle) -> Self {
        Spares {
            pool: Mutex::new(Pool::default()),
            made: Condvar::new(),
            runtime,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn remove(&self, s: Spare) {
        drop(s.made);
        logfile::remove_task_dir(&s.base, &ids::task_id(s.seq), names());
    }

    /// A spare made under `base`, oldest first: its counter and its open logs.
    /// Spares of another base (the log directory changed since they were made)
    /// are removed off the caller's thread.
    pub fn take(self: &Arc<Self>, base: &Arc<LogBase>) -> Option<(u64, Made)> {
        let mut pool = self.lock();
        pool.current = Some(base.clone());
        let mut stale = Vec::new();
        let found = loop {
            let Some(i) = pool.spares.iter().position(|s| Arc::ptr_eq(&s.base, base)) else {
                // None to take here: the others are of another base.
                stale.append(&mut pool.spares);
                break None;
            };
            let s = pool.spares.remove(i);
            // A spare whose logs were removed since it was made (the log
            // directory deleted under a running host) would take output nobody
            // can read back: it is dropped, and the start makes its own.
            if s.made.files.iter().all(linked) {
                break Some((s.seq, s.made));
            }
            stale.push(s);
        };
        drop(pool);
        if !stale.is_empty() {
            let me = self.clone();
            self.runtime
                .spawn_blocking(move || stale.into_iter().for_each(|s| me.remove(s)));
        }
        found
    }

    /// Make spares on a blocking thread until [`KEEP`] are ready under the log
    /// directory of the latest start (`base` until a start names one), unless
    /// that is so already or a maker is at work. A maker that finds the
    /// directory changed under it removes what it made and goes on under the
    /// new one. A failure (the base was removed, the disk is full) just leaves
    /// the pool short: the start that finds no spare makes its directory itself
    /// and reports the error.
    pub fn refill(self: &Arc<Self>, base: &Arc<LogBase>) {
        {
            let mut pool = self.lock();
            if pool.closed || pool.making || pool.spares.len() >= KEEP {
                return;
            }
            pool.making = true;
        }
        let first = base.clone();
        let me = self.clone();
        self.runtime.spawn_blocking(move || {
            let finish = |mut pool: std::sync::MutexGuard<'_, Pool>| {
                pool.making = false;
                me.made.notify_all();
            };
            loop {
                let base = {
                    let pool = me.lock();
                    if pool.closed {
                        return finish(pool);
                    }
                    pool.current.clone().unwrap_or_else(|| first.clone())
                };
                let seq = ids::new_task_seq();
                let Ok(made) = logfile::make_task_dir(&base, &ids::task_id(seq), names()) else {
                    return finish(me.lock());
                };
                let spare = Spare { base, seq, made };
                let mut pool = me.lock();
                let current = pool
                    .current
                    .as_ref()
                    .is_none_or(|c| Arc::ptr_eq(c, &spare.base));
                if !pool.closed && current {
                    pool.spares.push(spare);
                    if pool.spares.len() >= KEEP {
                        return finish(pool);
                    }
                } else {
                    drop(pool);
                    me.remove(spare);
                }
            }
        });
    }

    /// The owner is going away: make no more spares and remove the ones made
    /// (waiting a moment for a maker at work, so it leaves none behind).
    pub fn close(&self) {
        let mut pool = self.lock();
        pool.closed = true;
        let mut waited = Duration::ZERO;
        while pool.making && waited < Duration::from_secs(1) {
            let step = Duration::from_millis(50);
            pool = self
                .made
                .wait_timeout(pool, step)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            waited += step;
        }
        let spares: Vec<Spare> = pool.spares.drain(..).collect();
        drop(pool);
        spares.into_iter().for_each(|s| self.remove(s));
    }
}

/// Whether an open log still has a name in its directory.
#[cfg(unix)]
fn linked(f: &std::fs::File) -> bool {
    rustix::fs::fstat(f).is_ok_and(|st| st.st_nlink > 0)
}

/// Whether an open log still has a name in its directory.
#[cfg(windows)]
fn linked(f: &std::fs::File) -> bool {
    crate::platform::windows::links(f).is_ok_and(|n| n > 0)
}
