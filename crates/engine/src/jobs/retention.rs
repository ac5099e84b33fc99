//! Logs on disk (SPEC §13): where they go (`configureLogs({ dir })`,
//! `NEUROLINK_COMMANDS_LOG_DIR`, else the trusted default under the tmpdir),
//! how much they may take (`maxTotalBytes`), how long they stay (`maxAgeMs`),
//! `removeOnExit`, the explicit sweep `pruneBackgroundCommandLogs`, and the
//! background sweep of what ended processes left (`endedRetentionMs`).
//!
//! Defaults change nothing of a live process: none of its logs is removed
//! unless a host asks (the ended-process sweep takes only directories whose
//! writer has ended, unchanged for `endedRetentionMs`). Only
//! settled commands' logs are removed, oldest settled first; the record
//! stays, marked removed under its own lock before any file goes, so a read
//! either has its file open already (and reads exactly its bytes) or is
//! refused with `NLC_LOGS_REMOVED`. The budget is checked as bytes are
//! written (one relaxed atomic load per chunk, [`over_budget`]) and at every
//! settle; the sweep itself runs off the writer's path, on a blocking thread.

use crate::sync::{Unpoisoned, UnpoisonedRw};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::record::Record;
use super::registry::Registry;
use crate::errors::{os_reason, EngineError, EngineResult};
use crate::text::capture::{LogBytes, Stream};
use crate::text::logfile::{self, BaseError, LogBase};

/// The environment variable naming the log directory (when `configureLogs`
/// named none).
pub const LOG_DIR_ENV: &str = "NEUROLINK_COMMANDS_LOG_DIR";

/// How long a task directory without a writer marker (left by a version
/// that wrote none) must have been unchanged before a prune removes it.
pub const UNMARKED_AFTER: Duration = Duration::from_secs(600);

/// How long task directories an ended process left stay before the
/// background sweep after a process's first start removes them: 7 days.
pub const DEFAULT_ENDED_RETENTION_MS: f64 = 604_800_000.0;

/// The settings in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The configured directory (else the environment's, else the default).
    pub dir: Option<PathBuf>,
    /// The budget of all logs on disk, in bytes.
    pub max_total_bytes: Option<u64>,
    /// How long a settled command's logs stay, in ms.
    pub max_age_ms: Option<f64>,
    /// Remove this process's task directories when it exits.
    pub remove_on_exit: bool,
    /// How long ended processes' task directories stay, in ms (0: kept).
    pub ended_retention_ms: f64,
}

impl Default for Settings {
    fn default() -> Self {
        DEFAULTS
    }
}

const DEFAULTS: Settings = Settings {
    dir: None,
    max_total_bytes: None,
    max_age_ms: None,
    remove_on_exit: false,
    ended_retention_ms: DEFAULT_ENDED_RETENTION_MS,
};

/// A `configureLogs` call: each field given replaces the setting; `Some(None)`
/// (a `null`) returns it to its default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogOptions {
    /// `dir`.
    pub dir: Option<Option<String>>,
    /// `maxTotalBytes`.
    pub max_total_bytes: Option<Option<f64>>,
    /// `maxAgeMs`.
    pub max_age_ms: Option<Option<f64>>,
    /// `removeOnExit`.
    pub remove_on_exit: Option<bool>,
    /// `endedRetentionMs`.
    pub ended_retention_ms: Option<Option<f64>>,
}

/// What `configureLogs` returns: the settings now, with the directory new
/// commands use.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSettings {
    /// The directory commands started now keep their logs in.
    pub dir: String,
    /// The budget, if any.
    pub max_total_bytes: Option<f64>,
    /// The age limit, if any.
    pub max_age_ms: Option<f64>,
    /// Whether logs go at exit.
    pub remove_on_exit: bool,
    /// How long ended processes' task directories stay, in ms (0: kept).
    pub ended_retention_ms: f64,
}

/// `pruneBackgroundCommandLogs` options.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PruneOptions {
    /// Remove settled commands' logs older than this (default: `maxAgeMs`).
    pub older_than_ms: Option<f64>,
    /// Remove the oldest settled logs until at most this many bytes stay (default: `maxTotalBytes`).
    pub keep_bytes: Option<f64>,
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pruned {
    /// Task directories removed.
    pub removed: u32,
    /// Bytes of log they held.
    pub freed_bytes: f64,
}

/// One engine's log settings and the queue its sweeps work from.
#[derive(Debug)]
pub struct Retention {
    settings: RwLock<Settings>,
    /// The budget for the hot path (`u64::MAX`: none).
    max_total: AtomicU64,
    /// Whether any limit is set (budget or age).
    limited: AtomicBool,
    /// A sweep is queued or running.
    sweeping: AtomicBool,
    /// Bumped by every configure: an age ticker of an older generation stops.
    generation: AtomicU64,
    /// Settled commands whose logs are still on disk, oldest settled first:
    /// kept only while a limit is set (so a host that sets none pays nothing
    /// per command); rebuilt from the registry when a limit is set.
    settled: Mutex<Queue>,
    /// Bytes in its commands' logs on disk (see [`LogBytes`]).
    log_bytes: LogBytes,
    /// Where its sweeps and ticker run.
    runtime: tokio::runtime::Handle,
}

/// Settled records with the time they settled, oldest first.
type Queue = VecDeque<(Instant, Arc<Record>)>;

impl Retention {
    /// The defaults; sweeps run on `runtime`.
    pub fn new(runtime: tokio::runtime::Handle) -> Self {
        Retention {
            settings: RwLock::new(DEFAULTS),
            max_total: AtomicU64::new(u64::MAX),
            limited: AtomicBool::new(false),
            sweeping: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            settled: Mutex::new(VecDeque::new()),
            log_bytes: LogBytes::default(),
            runtime,
        }
    }

    /// The count of its commands' log bytes on disk, which their writers add to.
    pub fn log_bytes(&self) -> &LogBytes {
        &self.log_bytes
    }

    /// The settings in force.
    pub fn settings(&self) -> Settings {
        self.settings.read_now().clone()
    }
}

fn base_error(e: BaseError) -> EngineError {
    match e {
        BaseError::Untrusted(m) => EngineError::LogDir(m),
        BaseError::Os(p, e) => EngineError::LogDir(format!(
            "Cannot use the log directory {}: {}. Name a directory this user can create and write, or leave the default under os.tmpdir()",
            p.display(),
            os_reason(&e)
        )),
    }
}

impl Retention {
    /// Where the logs of a command started now go: the configured directory,
    /// else `NEUROLINK_COMMANDS_LOG_DIR`, else the trusted default under
    /// `tmpdir`. `stale`: the held directory was found removed; resolve afresh.
    pub fn base_for(&self, tmpdir: &Path, stale: bool) -> Result<Arc<LogBase>, BaseError> {
        let configured = self.settings.read_now().dir.clone();
        let named = configured.or_else(|| {
            std::env::var_os(LOG_DIR_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        match named {
            Some(dir) => {
                if !dir.is_absolute() {
                    return Err(BaseError::Untrusted(format!(
                        "The log directory {:?} (from {}) must be an absolute path",
                        dir.display().to_string(),
                        if self.settings.read_now().dir.is_some() {
                            "configureLogs"
                        } else {
                            LOG_DIR_ENV
                        }
                    )));
                }
                logfile::cached_base(true, &dir, stale, || logfile::named_base(&dir))
            }
            None => logfile::cached_base(false, tmpdir, stale, || logfile::default_base(tmpdir)),
        }
    }

    /// [`base_for`] with the coded refusal.
    pub fn base_or_refusal(&self, tmpdir: &Path) -> EngineResult<Arc<LogBase>> {
        self.base_for(tmpdir, false).map_err(base_error)
    }
}

fn limit(name: &str, v: f64, allow_zero: bool) -> EngineResult<f64> {
    if v.is_finite() && (v > 0.0 || (allow_zero && v == 0.0)) {
        Ok(v.floor())
    } else {
        Err(EngineError::BadInput(format!(
            "{name} must be a finite number {} (got {}); pass null to remove the limit",
            if allow_zero { "≥ 0" } else { "> 0" },
            crate::errors::js_number(v)
        )))
    }
}

impl Retention {
    /// `configureLogs`: validate every field, check a named directory against
    /// the trust rule (creating it 0700 if missing), then apply them all.
    pub fn configure(
        self: &Arc<Self>,
        o: LogOptions,
        tmpdir: &Path,
        reg: &Registry,
    ) -> EngineResult<LogSettings> {
        let mut next = self.settings();
        if let Some(d) = o.dir {
            next.dir = match d {
                None => None,
                Some(d) if d.is_empty() => None,
                Some(d) => {
                    let p = PathBuf::from(&d);
                    if !p.is_absolute() {
                        return Err(EngineError::BadInput(format!(
                            "dir must be an absolute path (got {:?})",
                            crate::errors::clip(&d)
                        )));
                    }
                    logfile::cached_base(true, &p, false, || logfile::named_base(&p))
                        .map_err(base_error)?;
                    Some(p)
                }
            };
        }
        if let Some(b) = o.max_total_bytes {
            next.max_total_bytes = b
                .map(|v| limit("maxTotalBytes", v, true))
                .transpose()?
                .map(|v| v as u64);
        }
        if let Some(a) = o.max_age_ms {
            next.max_age_ms = a.map(|v| limit("maxAgeMs", v, false)).transpose()?;
        }
        if let Some(r) = o.remove_on_exit {
            next.remove_on_exit = r;
        }
        if let Some(e) = o.ended_retention_ms {
            next.ended_retention_ms = match e {
            None => DEFAULT_ENDED_RETENTION_MS,
            Some(v) if v.is_finite() && v >= 0.0 => v.floor(),
            Some(v) => {
                return Err(EngineError::BadInput(format!(
                    "endedRetentionMs must be a finite number ≥ 0 (got {}); pass 0 to keep what ended processes left, or null for the default of 7 days",
                    crate::errors::js_number(v)
                )))
            }
        };
        }
        // The directory in force must be usable before anything is applied.
        let dir = {
            let saved = std::mem::replace(&mut *self.settings.write_now(), next.clone());
            match self.base_for(tmpdir, false) {
                Ok(b) => b.path.display().to_string(),
                Err(e) => {
                    *self.settings.write_now() = saved;
                    return Err(base_error(e));
                }
            }
        };
        self.max_total
            .store(next.max_total_bytes.unwrap_or(u64::MAX), Ordering::Release);
        let limited = next.max_total_bytes.is_some() || next.max_age_ms.is_some();
        {
            // The queue under the same lock settles push under, so none is missed.
            let mut q = self.settled.locked();
            if limited && !self.limited.load(Ordering::Acquire) {
                *q = settled_from_registry(reg);
            } else if !limited {
                q.clear();
            }
            self.limited.store(limited, Ordering::Release);
        }
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        if let Some(age) = next.max_age_ms {
            self.start_age_ticker(generation, age);
        }
        self.kick();
        Ok(report(dir, &next))
    }
}

fn report(dir: String, s: &Settings) -> LogSettings {
    LogSettings {
        dir,
        max_total_bytes: s.max_total_bytes.map(|v| v as f64),
        max_age_ms: s.max_age_ms,
        remove_on_exit: s.remove_on_exit,
        ended_retention_ms: s.ended_retention_ms,
    }
}

impl Retention {
    /// `getLogSettings`: the settings in force, changing nothing (the directory
    /// is the one a command started now would use).
    pub fn current(&self, tmpdir: &Path) -> EngineResult<LogSettings> {
        let s = self.settings();
        let dir = self.base_or_refusal(tmpdir)?.path.display().to_string();
        Ok(report(dir, &s))
    }
}

use crate::process_wide::{ENDED_SWEEPS_DONE, ENDED_SWEEP_CLAIMED};

impl Retention {
    /// A command's process exists: on the first one of this process, sweep
    /// `base` for task directories ended processes left that are older than
    /// `endedRetentionMs`, on a blocking thread (one atomic swap on the
    /// supervisor's path, nothing on the start's).
    pub fn after_start(&self, base: &Arc<LogBase>) {
        if ENDED_SWEEP_CLAIMED.load(Ordering::Relaxed)
            || ENDED_SWEEP_CLAIMED.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let base = base.clone();
        let retention_ms = self.settings().ended_retention_ms;
        self.runtime.spawn_blocking(move || {
            sweep_ended(&base, retention_ms);
            ENDED_SWEEPS_DONE.fetch_add(1, Ordering::Release);
        });
    }
}

/// How many background sweeps of ended processes' directories have
/// finished (one at most per process; counted also when the retention is 0
/// and nothing was looked at), for tests to know the sweep is over.
pub fn ended_sweeps_done() -> u32 {
    ENDED_SWEEPS_DONE.load(Ordering::Acquire)
}

/// Remove the task directories under `base` that ended processes left and
/// in which nothing changed for `retention_ms` (0: none).
pub fn sweep_ended(base: &LogBase, retention_ms: f64) -> Pruned {
    let mut out = Pruned::default();
    if retention_ms <= 0.0 {
        return out;
    }
    let older = crate::policy::duration_ms(retention_ms);
    for f in logfile::abandoned(base, UNMARKED_AFTER, Some(older)) {
        if logfile::remove_foreign(base, &f.name) {
            out.removed += 1;
            out.freed_bytes += f.bytes as f64;
        }
    }
    out
}

impl Retention {
    /// An age limit is kept by a ticker that sweeps a few times per limit.
    fn start_age_ticker(self: &Arc<Self>, generation: u64, age_ms: f64) {
        let tick = Duration::from_millis((age_ms / 4.0).clamp(10.0, 30_000.0) as u64);
        // Weak: the ticker ends with its engine.
        let me = Arc::downgrade(self);
        self.runtime.spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                let Some(me) = me.upgrade() else {
                    return;
                };
                if me.generation.load(Ordering::Acquire) != generation {
                    return;
                }
                me.kick();
            }
        });
    }

    /// Whether the logs on disk exceed the budget (the writer's check: two
    /// relaxed loads).
    #[inline]
    pub fn over_budget(&self) -> bool {
        self.log_bytes.load(Ordering::Relaxed) > self.max_total.load(Ordering::Relaxed)
    }

    /// A command settled: with a limit set, it joins the queue of removable logs.
    pub fn on_settled(self: &Arc<Self>, rec: &Arc<Record>) {
        if !self.limited.load(Ordering::Acquire) {
            return;
        }
        self.settled
            .locked()
            .push_back((Instant::now(), rec.clone()));
        self.kick();
    }
}

/// The settled commands whose logs are on disk, oldest settled first, as
/// the registry knows them (their settle time is when their process ended).
fn settled_from_registry(reg: &Registry) -> Queue {
    let mut v: Vec<(Instant, Arc<Record>)> = reg
        .all_records()
        .into_iter()
        .filter_map(|r| {
            let live = r.live.locked();
            let at = live
                .ended
                .filter(|_| live.state.is_settled() && live.removed.is_none());
            drop(live);
            at.map(|at| (at, r))
        })
        .collect();
    v.sort_by_key(|(at, r)| (*at, r.seq));
    v.into()
}

impl Retention {
    /// Run a sweep under the settings in force, off the caller's thread, unless
    /// one is queued or running already.
    pub fn kick(self: &Arc<Self>) {
        if !self.limited.load(Ordering::Acquire) || self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let me = self.clone();
        self.runtime.spawn_blocking(move || loop {
            let s = me.settings();
            me.sweep(
                s.max_age_ms.map(crate::policy::duration_ms),
                s.max_total_bytes,
                &s,
                None,
            );
            me.sweeping.store(false, Ordering::Release);
            // A write or settle between the sweep's end and the flag's reset
            // found the flag set and left the work to this sweep: look again.
            let again = me.over_budget() && !me.settled.locked().is_empty();
            if !again || me.sweeping.swap(true, Ordering::AcqRel) {
                return;
            }
        });
    }

    /// Remove settled logs, oldest first, while the oldest is older than
    /// `older_than` or the logs on disk exceed `keep`.
    fn sweep(
        &self,
        older_than: Option<Duration>,
        keep: Option<u64>,
        s: &Settings,
        reg: Option<&Registry>,
    ) -> Pruned {
        let mut out = Pruned::default();
        if older_than.is_none() && keep.is_none() {
            return out;
        }
        let mut guard = self.settled.locked();
        let mut doomed = Vec::new();
        // Without a limit in force nothing is queued: an explicit prune works on
        // the registry's settled commands (a background sweep has none to hand).
        let mut own;
        let q: &mut VecDeque<_> = if self.limited.load(Ordering::Acquire) {
            &mut guard
        } else {
            own = reg.map(settled_from_registry).unwrap_or_default();
            &mut own
        };
        while let Some((at, rec)) = q.front() {
            if rec.logs_removed() {
                q.pop_front();
                continue;
            }
            let aged = older_than.filter(|a| at.elapsed() >= *a);
            let over = keep.filter(|k| self.log_bytes.load(Ordering::Acquire) > *k);
            let why = match (aged, over) {
            (Some(a), _) => format!(
                "older than the log age limit ({} ms{})",
                a.as_millis(),
                if s.max_age_ms.is_some() { ", configureLogs maxAgeMs" } else { ", pruneBackgroundCommandLogs olderThanMs" }
            ),
            (None, Some(k)) => format!(
                "the logs on disk exceeded the log budget of {k} bytes ({}) and it was the oldest settled command",
                if s.max_total_bytes == Some(k) { "configureLogs maxTotalBytes" } else { "pruneBackgroundCommandLogs keepBytes" }
            ),
            (None, None) => break,
        };
            let rec = rec.clone();
            q.pop_front();
            if let Some(freed) = mark(&self.log_bytes, &rec, &why, false) {
                out.removed += 1;
                out.freed_bytes += freed as f64;
                doomed.push(rec);
            }
        }
        // Files go after the queue's lock is released: a settle (which queues
        // under it) never waits for unlinks. Each record is already marked
        // removed, so no read opens its files any more.
        drop(guard);
        for rec in doomed {
            unlink(&rec);
        }
        out
    }
}

/// Mark one command's logs removed and take their bytes off the total; the
/// bytes, or `None` if they were not (already removed, or not settled and
/// not `force`).
fn mark(total: &AtomicU64, rec: &Record, why: &str, force: bool) -> Option<u64> {
    if !rec.mark_removed(why, force) {
        return None;
    }
    let bytes: u64 = Stream::BOTH.iter().map(|s| rec.log(*s).bytes()).sum();
    let _ = total.fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
        Some(t.saturating_sub(bytes))
    });
    Some(bytes)
}

/// Unlink a marked command's task directory.
fn unlink(rec: &Record) {
    let names = Stream::BOTH.map(|s| s.file_name());
    logfile::remove_task_dir(&rec.logs_root, &rec.task_id(), names);
}

/// Mark and unlink at once.
fn remove(total: &AtomicU64, rec: &Record, why: &str, force: bool) -> Option<u64> {
    let freed = mark(total, rec, why, force)?;
    unlink(rec);
    Some(freed)
}

impl Retention {
    /// `pruneBackgroundCommandLogs`: the settled logs the options (else the
    /// settings) say go, and every task directory an ended process of this user
    /// left under the directories in use (blocking: run it off the JS thread).
    pub fn prune(&self, o: PruneOptions, tmpdir: &Path, reg: &Registry) -> EngineResult<Pruned> {
        let s = self.settings();
        let older = match o.older_than_ms {
            Some(v) => Some(limit("olderThanMs", v, true)?),
            None => s.max_age_ms,
        };
        let keep = match o.keep_bytes {
            Some(v) => Some(limit("keepBytes", v, true)? as u64),
            None => s.max_total_bytes,
        };
        let mut out = self.sweep(older.map(crate::policy::duration_ms), keep, &s, Some(reg));
        let mut bases = logfile::known_bases();
        if let Ok(b) = self.base_for(tmpdir, false) {
            bases.push(b);
        }
        let mut seen = Vec::new();
        for b in bases {
            // The same directory may be held under two keys.
            let Ok((dev, ino, _, _)) = crate::platform::file_id(&b.fd) else {
                continue;
            };
            if seen.contains(&(dev, ino)) {
                continue;
            }
            seen.push((dev, ino));
            for f in logfile::abandoned(&b, UNMARKED_AFTER, None) {
                if logfile::remove_foreign(&b, &f.name) {
                    out.removed += 1;
                    out.freed_bytes += f.bytes as f64;
                }
            }
        }
        Ok(out)
    }

    /// The host process is exiting: with `removeOnExit`, remove every task
    /// directory of `reg`'s commands (they are being stopped).
    pub fn exit_cleanup(&self, reg: &Registry) {
        if !self
            .settings
            .read()
            .map(|s| s.remove_on_exit)
            .unwrap_or(false)
        {
            return;
        }
        for rec in reg.all_records() {
            remove(
                &self.log_bytes,
                &rec,
                "the host process exited with removeOnExit set",
                true,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ended_sweep_removes_only_past_the_retention_and_never_when_it_is_zero() {
        let d = tempfile::tempdir().unwrap();
        let logfile::Candidate::Trusted(base) = logfile::try_dir(&d.path().join("b")) else {
            panic!("a fresh directory is trusted")
        };
        // An ended writer's directory (pid beyond pid_max), unchanged for 8 days.
        let dir = base.path.join("c1aaaaaaaaaaaa");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("stdout.log"), b"12345").unwrap();
        std::fs::write(dir.join(".writer-999999999-1"), b"").unwrap();
        let t = std::time::SystemTime::now() - Duration::from_secs(8 * 24 * 3600);
        for f in [
            dir.join("stdout.log"),
            dir.join(".writer-999999999-1"),
            dir.clone(),
        ] {
            let times = std::fs::FileTimes::new().set_modified(t).set_accessed(t);
            std::fs::File::open(&f).unwrap().set_times(times).unwrap();
        }
        assert_eq!(sweep_ended(&base, 0.0), Pruned::default());
        assert_eq!(
            sweep_ended(&base, 9.0 * 24.0 * 3600.0 * 1000.0),
            Pruned::default()
        );
        assert!(dir.exists(), "off, or younger than the retention: kept");
        assert_eq!(
            sweep_ended(&base, DEFAULT_ENDED_RETENTION_MS),
            Pruned {
                removed: 1,
                freed_bytes: 5.0
            }
        );
        assert!(!dir.exists());
    }
}
