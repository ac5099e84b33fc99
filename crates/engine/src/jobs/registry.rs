//! Every command and host of an engine. Settled commands are never
//! evicted: a status stays answerable for the life of the engine.

use crate::sync::{Unpoisoned, UnpoisonedRw};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::errors::{EngineError, EngineResult};
use std::path::PathBuf;

pub use super::ids::new_task_seq;
use super::ids::Ids;
use super::record::Record;
use crate::policy::Policy;
use crate::runtime::{Event, Listener};

/// The settings in force for a host.
#[derive(Debug, Clone, PartialEq)]
pub struct GitSettings {
    /// The repository's real path.
    pub repo_root: PathBuf,
    /// Budget per run in ms.
    pub timeout_ms: f64,
    /// Cap per stream.
    pub max_output_bytes: u64,
    /// Preview length.
    pub preview_chars: u32,
    /// The git executable.
    pub git_executable: String,
    /// The root did not exist when configured: `repo_root` is the absolute
    /// path given, resolved (and checked) again at each run until it exists.
    pub root_pending: bool,
    /// Whether git runs under kernel confinement (SPEC §8).
    pub confined: bool,
    /// Why not, when it does not.
    pub confined_why_not: Option<String>,
}

/// What the engine keeps per host.
#[derive(Debug, Default)]
pub struct Host {
    /// The declared command policy.
    pub policy: Option<Policy>,
    /// The git toolset's settings.
    pub git: Option<GitSettings>,
    /// Its commands, oldest first.
    pub tasks: Vec<Arc<Record>>,
    /// The session used when neither the call nor the host names one.
    pub default_session: String,
    /// The listener of the Node environment that registered it (0: none).
    pub listener: u32,
}

/// Counters a checklist reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Not settled.
    pub running: u32,
    /// Settled and not yet looked at.
    pub finished: u32,
}

/// Every host and command of one engine. Settled commands are never
/// evicted: a status stays answerable for the life of the engine.
pub struct Registry {
    /// The ids this engine recovered.
    pub ids: Arc<Ids>,
    /// Keyed by the counter a task id is made from (see [`super::ids::task_id`]).
    tasks: RwLock<HashMap<u64, Arc<Record>>>,
    hosts: Mutex<HashMap<u32, Host>>,
    next_host: AtomicU32,
    /// The listeners (one per Node environment), by id.
    listeners: Mutex<HashMap<u32, Listener>>,
    next_listener: AtomicU32,
    /// Task ids whose recovery was refused ([`super::recover`]), and why:
    /// such an id answers `NLC_RECOVERY_REFUSED` instead of "unknown".
    refused: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Registry")
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry {
            ids: Arc::new(Ids::new()),
            tasks: RwLock::new(HashMap::new()),
            hosts: Mutex::new(HashMap::new()),
            next_host: AtomicU32::new(1),
            listeners: Mutex::new(HashMap::new()),
            next_listener: AtomicU32::new(1),
            refused: Mutex::new(HashMap::new()),
        }
    }

    /// The task id of counter `n`.
    pub fn task_id(&self, n: u64) -> String {
        super::ids::task_id(n)
    }

    /// Register a new host and return its id.
    pub fn register_host(&self) -> u32 {
        self.register_host_for(0)
    }

    /// Register a new host whose events go to `listener`.
    pub fn register_host_for(&self, listener: u32) -> u32 {
        let id = self.next_host.fetch_add(1, Ordering::Relaxed);
        let host = Host {
            default_session: format!("default-session-host-{id}"),
            listener,
            ..Default::default()
        };
        self.hosts.locked().insert(id, host);
        id
    }

    /// Run `f` on a host's state.
    pub fn with_host<T>(&self, host: u32, f: impl FnOnce(&mut Host) -> T) -> T {
        let mut hosts = self.hosts.locked();
        let h = hosts.entry(host).or_insert_with(|| Host {
            default_session: format!("default-session-host-{host}"),
            ..Default::default()
        });
        f(h)
    }

    /// Add a started command.
    pub fn insert(&self, rec: Arc<Record>) {
        self.tasks.write_now().insert(rec.seq, rec.clone());
        self.with_host(rec.host, |h| h.tasks.push(rec));
    }

    /// A command by id, for any host (the built-in bank and internal events).
    pub fn by_id(&self, task_id: &str) -> Option<Arc<Record>> {
        let n = self.ids.task_seq(task_id)?;
        self.tasks.read_now().get(&n).cloned()
    }

    /// A command of this host, or the error that lists the host's commands.
    pub fn lookup(&self, host: u32, task_id: &str) -> EngineResult<Arc<Record>> {
        match self.by_id(task_id) {
            Some(r) if r.host == host => Ok(r),
            None if self.refusal(task_id).is_some() => Err(EngineError::RecoveryRefused(
                self.refusal(task_id).unwrap_or_default(),
            )),
            _ => Err(EngineError::UnknownTask {
                task_id: task_id.to_string(),
                known: self.with_host(host, |h| {
                    h.tasks
                        .iter()
                        .filter(|r| !r.hidden)
                        .map(|r| r.task_id())
                        .collect()
                }),
            }),
        }
    }

    /// The visible commands of a host, oldest first.
    pub fn host_tasks(&self, host: u32) -> Vec<Arc<Record>> {
        self.with_host(host, |h| {
            h.tasks.iter().filter(|r| !r.hidden).cloned().collect()
        })
    }

    /// Every command of every host.
    pub fn all_records(&self) -> Vec<Arc<Record>> {
        self.tasks.read_now().values().cloned().collect()
    }

    /// Every unsettled command of every host.
    pub fn all_unsettled(&self) -> Vec<Arc<Record>> {
        self.tasks
            .read_now()
            .values()
            .filter(|r| !r.is_settled())
            .cloned()
            .collect()
    }

    /// Counters of one host's session.
    pub fn host_counts(&self, host: u32, session: &str) -> Counts {
        self.with_host(host, |h| {
            count(
                h.tasks
                    .iter()
                    .filter(|r| !r.hidden && &*r.session == session),
            )
        })
    }

    /// Counters of a session across every host.
    pub fn session_counts(&self, session: &str) -> Counts {
        let tasks = self.tasks.read_now();
        count(
            tasks
                .values()
                .filter(|r| !r.hidden && &*r.session == session),
        )
    }

    /// The listener a host's events go to.
    pub fn listener_of(&self, host: u32) -> u32 {
        self.with_host(host, |h| h.listener)
    }

    /// The unsettled commands of every host that `listener`'s environment registered.
    pub fn unsettled_of_listener(&self, listener: u32) -> Vec<Arc<Record>> {
        let hosts = self.hosts.locked();
        hosts
            .values()
            .filter(|h| h.listener == listener)
            .flat_map(|h| h.tasks.iter().filter(|r| !r.is_settled()).cloned())
            .collect()
    }

    /// The host's default session.
    pub fn default_session(&self, host: u32) -> String {
        self.with_host(host, |h| h.default_session.clone())
    }

    /// The session rule: the first present candidate (in the caller's order:
    /// the call's own id, then the host's context), else the host's default
    /// session.
    pub fn choose_session<'a>(
        &self,
        host: u32,
        candidates: impl IntoIterator<Item = Option<&'a str>>,
    ) -> String {
        candidates
            .into_iter()
            .flatten()
            .find_map(session_candidate)
            .map(str::to_string)
            .unwrap_or_else(|| self.default_session(host))
    }

    /// Add a listener (one per Node environment that loads the addon);
    /// returns its id, which hosts registered from that environment carry.
    pub fn add_listener(&self, f: Listener) -> u32 {
        let id = self.next_listener.fetch_add(1, Ordering::Relaxed);
        self.listeners.locked().insert(id, f);
        id
    }

    /// Forget a listener (its environment is being torn down).
    pub fn remove_listener(&self, id: u32) {
        self.listeners.locked().remove(&id);
    }

    /// Whether listener `id` exists (without one, host banking cannot happen).
    pub fn has_listener(&self, id: u32) -> bool {
        self.listeners.locked().contains_key(&id)
    }

    /// Tell listener `id`, if it still exists.
    pub fn emit(&self, id: u32, e: Event) {
        let f = self.listeners.locked().get(&id).cloned();
        if let Some(f) = f {
            f(e);
        }
    }

    /// Why `id`'s recovery was refused, if it was.
    pub fn refusal(&self, id: &str) -> Option<String> {
        self.refused.locked().get(id).cloned()
    }

    /// Record (`Some`) or clear (`None`) why `id`'s recovery was refused.
    pub fn set_refusal(&self, id: &str, why: Option<String>) {
        let mut refused = self.refused.locked();
        match why {
            Some(why) => refused.insert(id.to_string(), why),
            None => refused.remove(id),
        };
    }
}

fn count<'a>(recs: impl Iterator<Item = &'a Arc<Record>>) -> Counts {
    let mut c = Counts::default();
    for r in recs {
        if r.is_settled() {
            if r.is_unread() {
                c.finished += 1;
            }
        } else {
            c.running += 1;
        }
    }
    c
}

/// A session id as the session rule reads a candidate: trimmed, and absent
/// when that leaves it empty or when it is the synthetic `fallback-<digits>`
/// id NeuroLink's tool-context merge invents when no session was declared.
pub fn session_candidate(id: &str) -> Option<&str> {
    let id = id.trim();
    let synthetic = id
        .strip_prefix("fallback-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    (!id.is_empty() && !synthetic).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_candidates_follow_the_rule() {
        assert_eq!(session_candidate("  s1  "), Some("s1"));
        assert_eq!(session_candidate("s1"), Some("s1"));
        assert_eq!(session_candidate(""), None);
        assert_eq!(session_candidate(" \t\n"), None);
        assert_eq!(session_candidate("fallback-1712345678901"), None);
        assert_eq!(session_candidate(" fallback-7 "), None);
        // Only the exact synthetic shape is absent.
        assert_eq!(session_candidate("fallback-"), Some("fallback-"));
        assert_eq!(session_candidate("fallback-12a"), Some("fallback-12a"));
        assert_eq!(session_candidate("xfallback-12"), Some("xfallback-12"));
        assert_eq!(session_candidate("fallback-١٢"), Some("fallback-١٢"));
    }

    #[test]
    fn choose_session_takes_the_first_present_candidate() {
        let reg = Registry::new();
        let host = reg.register_host();
        assert_eq!(
            reg.choose_session(host, [Some("fallback-1"), Some(" ctx ")]),
            "ctx"
        );
        assert_eq!(reg.choose_session(host, [Some(" a "), Some("ctx")]), "a");
        assert_eq!(
            reg.choose_session(host, [None, Some("fallback-2")]),
            reg.default_session(host)
        );
        assert_eq!(
            reg.choose_session(host, [None, None]),
            reg.default_session(host)
        );
    }

    #[test]
    fn task_ids_have_the_contract_shape_and_are_unique() {
        let reg = Registry::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let id = reg.task_id(new_task_seq());
            assert!(id.starts_with('c'));
            let tail = &id[id.len() - 12..];
            assert!(
                tail.chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
                "{id}"
            );
            assert!(
                id[1..id.len() - 12].chars().all(|c| c.is_ascii_digit()),
                "{id}"
            );
            assert!(seen.insert(id));
        }
    }

    #[test]
    fn only_ids_spelled_here_map_back_to_their_counter() {
        let ids = Ids::new();
        let n = new_task_seq();
        let id = super::super::ids::task_id(n);
        assert_eq!(ids.task_seq(&id), Some(n));
        let hex = &id[id.len() - 12..];
        for other in [
            String::new(),
            "c".into(),
            format!("c0{n}{hex}"),
            format!("c+{n}{hex}"),
            format!("x{n}{hex}"),
            format!("c{n}{}", "0".repeat(12)),
            format!("{id}0"),
            format!("c{n}é{}", &hex[1..]),
        ] {
            assert_eq!(ids.task_seq(&other), None, "{other}");
        }
    }
}
