//! Kernel confinement at spawn time (SPEC §8): what this kernel can enforce,
//! the rules one confined start applies, and the confined spawn itself.
//!
//! Theory of operation: a short-lived thread restricts itself with a
//! Landlock ruleset (files, TCP, signal and abstract-socket scopes) — it
//! descends from one of the hardened spawner threads and so already holds
//! no capabilities and carries `no_new_privs` and the seccomp filter
//! ([`super::seccomp`]: privileged calls, and without network every socket
//! family but `AF_UNIX`) — then it calls the ordinary [`spawn`](super::spawn)
//! (posix_spawn: no fork of the host, no `pre_exec`) and ends. The child
//! inherits the thread's Landlock domain, its seccomp filter and
//! `no_new_privs`, and so does everything the child starts, also after
//! `setsid`. Only that thread was restricted, and it is gone: the host's
//! other threads stay as they were.
//!
//! What keeps a confined start cheap (SPEC §8: within 1.15× of an
//! unconfined one): the descriptors the rules name are opened once (`O_PATH`)
//! and reused — the fixed system trees and device nodes as they are, every
//! other path checked per start by one `stat` against the inode held — so a
//! start only creates its ruleset, adds the rules and restricts itself; the
//! seccomp filter is compiled and attached once, to each spawner thread; and
//! each spawner keeps one spare thread waiting, so the thread a start
//! restricts already exists when the start arrives (the spawner makes the
//! next one off the start's path). Every command still gets a Landlock domain
//! of its own: a domain is never shared between two commands.

use std::path::{Path, PathBuf};

pub use super::plan::{Counter, Grant, Level, Plan, Protected, Refusals, DEVICE_NODES};
pub use super::probe::{
    missing, missing_at, namespaces_why_not, support, Support, NEEDED_ABI, TEST_ABI_VAR,
    TEST_SECCOMP_VAR,
};
use super::spawn::Spawned;
#[cfg(target_os = "linux")]
use super::tmp_dir::premake_private_tmp;
use super::tmp_dir::tmp_base;
pub use super::tmp_dir::{discard_premade, make_private_tmp, take_private_tmp};

/// `argv[0]`'s directory, found as the spawn finds the program (PATH of the
/// replacing environment, else the host's), and its real directory.
pub fn exe_dirs(program: &str, env: Option<&[(String, String)]>) -> Vec<PathBuf> {
    let found = if program.contains('/') {
        Some(PathBuf::from(program))
    } else {
        let path = match env {
            Some(e) => e
                .iter()
                .rev()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone()),
            None => std::env::var("PATH").ok(),
        }
        .unwrap_or_else(|| "/bin:/usr/bin".into());
        path.split(':')
            .filter(|d| d.starts_with('/'))
            .map(|d| Path::new(d).join(program))
            .find(|p| p.is_file())
    };
    let mut dirs = Vec::new();
    if let Some(p) = found {
        if let Some(d) = p.parent() {
            dirs.push(d.to_path_buf());
        }
        if let Some(d) = std::fs::canonicalize(&p)
            .ok()
            .and_then(|r| r.parent().map(Path::to_path_buf))
        {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    dirs
}

/// The stack of a confining thread: it only restricts itself and calls
/// posix_spawn (which maps the child's own stack), so a small one keeps its
/// creation and exit cheap.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const CONFINING_STACK: usize = 256 * 1024;

/// One confined start, owned, as it is handed to a confining thread.
pub struct Start {
    /// The rules to apply.
    pub plan: Plan,
    /// The program and its arguments, already checked.
    pub argv: Vec<String>,
    /// The directory that passed the cwd check (entered by descriptor, or
    /// through its `/proc/self/fd` path in a terminal start).
    pub dir: crate::platform::OwnedFd,
    /// The replacing environment, if any.
    pub env: Option<Vec<(String, String)>>,
    /// What the command reads.
    pub input: super::spawn::Input,
    /// The command's cgroup, when it has one.
    pub cgroup: Option<super::cgroup::OwnedHandle>,
    /// Where a command whose connects are mediated (read set `"all"`, on
    /// Linux) counts what is refused it.
    pub refused: Refusals,
}

/// What the caller wraps around the spawn on the confining thread: it gets
/// the spawn to call and returns its result (the supervisor holds its spawn
/// gate and records the new group there, exactly as for a plain start).
pub type Guard = Box<
    dyn FnOnce(&mut dyn FnMut() -> std::io::Result<Spawned>) -> std::io::Result<Spawned> + Send,
>;

/// Where the result of a confined spawn goes.
pub type Deliver = Box<dyn FnOnce(std::io::Result<Spawned>) + Send>;

/// Spawn `start` confined by its plan from a short-lived thread (see the
/// module's documentation), without waiting: `guard` runs around the spawn
/// on that thread and `deliver` gets the result there.
///
/// The caller — the JS thread ending a start — hands the start straight to
/// the confining thread rather than to the supervisor first, so the one
/// hop between threads a confined start adds runs in parallel with the
/// supervisor's own start.
///
/// The short-lived thread is started by one of the engine's two hardened
/// spawner threads (one for starts with network, one without: see
/// [`super::seccomp`]), which hold no capabilities, carry `no_new_privs`
/// and the seccomp filter, and run nothing else: threads inherit the
/// filter by reference, so no filter is compiled and attached per command
/// (attaching one costs about a millisecond, most of it the kernel
/// preparing and later freeing the program).
pub fn spawn_detached(start: Start, guard: Guard, deliver: Deliver) {
    imp::hand_over(Box::new(Job {
        start,
        guard,
        deliver,
    }));
}

/// One confined spawn handed to a confining thread (Linux only: elsewhere
/// every confined start is refused before it gets here).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Job {
    start: Start,
    guard: Guard,
    deliver: Deliver,
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl Job {
    /// Run on a confining thread: Landlock, then spawn, inside the guard;
    /// then ask for the next spare thread (and private temp directory).
    fn run(self) {
        let Job {
            mut start,
            guard,
            deliver,
        } = self;
        let refused = std::mem::take(&mut start.refused);
        let mut spawn = || {
            #[cfg(target_os = "linux")]
            if start.plan.level == Level::Full {
                // The view's mounts are made by the child: Landlock refuses
                // every mount to a process whose domain handles file access,
                // so here it scopes signals, abstract sockets and TCP only;
                // files are the view's.
                imp::restrict_scopes(start.plan.network)?;
                return spawn_in_view(&start);
            }
            // No user namespace here: nothing of the spawner's is kept.
            #[cfg(target_os = "linux")]
            crate::process::seccomp::drop_kept()?;
            imp::restrict_this_thread(&start.plan)?;
            spawn_start(&start)
        };
        let result = guard(&mut spawn);
        deliver(result);
        imp::want_spare(imp::plain_filter(&start.plan), tmp_base(&start.plan));
        // A command under read "all": this thread (its Landlock domain the
        // command's) answers its connects until it has ended.
        #[cfg(target_os = "linux")]
        if let Some(listener) = super::mediate::take_listener() {
            drop(start);
            super::mediate::supervise(listener, refused);
        }
        #[cfg(not(target_os = "linux"))]
        drop(refused);
    }
}

/// The request of a confined start: its private temp directory (if any)
/// for the spawn to put in the environment, its cgroup (if any).
fn request(start: &Start) -> super::transform::Request<'_> {
    use crate::platform::AsFd;
    super::transform::Request {
        argv: &start.argv,
        dir: start.dir.as_fd(),
        env: start.env.as_deref(),
        input: start.input,
        tmp: start.plan.private_tmp.as_deref(),
        cgroup: start.cgroup.as_ref().map(|c| c.handle()),
    }
}

/// The spawn of a confined start, on its (restricted) thread.
fn spawn_start(start: &Start) -> std::io::Result<Spawned> {
    super::spawn::spawn(&request(start))
}

/// The spawn of a `"full"` confined start, in its view.
#[cfg(target_os = "linux")]
fn spawn_in_view(start: &Start) -> std::io::Result<Spawned> {
    super::spawn::spawn_in_view(&request(start), &start.plan)
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{Grant, Plan};
    use landlock::{
        Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
        RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
    };
    use rustix::fs::{self as rfs, FileType, Mode, OFlags};
    use std::collections::HashMap;
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};
    use std::path::{Path, PathBuf};
    use std::sync::mpsc::SyncSender;
    use std::sync::{Arc, Mutex, OnceLock};

    fn ll(e: impl std::fmt::Display) -> io::Error {
        io::Error::other(format!("confinement could not be applied: {e}"))
    }

    /// A path a rule names, opened (`O_PATH`, following symlinks as a path
    /// rule does), and the inode it found.
    struct Opened {
        fd: OwnedFd,
        /// One of the plan's fixed system paths (never let go).
        system: bool,
        is_dir: bool,
        dev: u64,
        ino: u64,
    }

    fn open_rule_path(path: &Path, system: bool) -> Option<Opened> {
        let fd = rfs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()?;
        let st = rfs::fstat(&fd).ok()?;
        Some(Opened {
            system,
            is_dir: FileType::from_raw_mode(st.st_mode) == FileType::Directory,
            dev: st.st_dev,
            ino: st.st_ino,
            fd,
        })
    }

    /// How many opened paths are kept at most (each holds a descriptor);
    /// past it, all but the system paths are let go.
    const KEPT_PATHS: usize = 64;

    /// The opened paths, by the path the rule names (`None`: a system path
    /// that does not exist on this machine).
    type KeptPaths = HashMap<PathBuf, Option<Arc<Opened>>>;

    fn kept() -> &'static Mutex<KeptPaths> {
        static K: OnceLock<Mutex<KeptPaths>> = OnceLock::new();
        K.get_or_init(|| Mutex::new(HashMap::new()))
    }

    /// The opened path of each rule, in order: a system tree or device node
    /// as opened the first time; any other path only while `stat` still
    /// finds the inode that was opened (a tree removed and made again, or
    /// replaced by a rename, is opened afresh; one gone is not granted).
    fn opened_rules(plan: &Plan) -> Vec<(Arc<Opened>, Grant)> {
        let mut kept = kept().lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(plan.system.len() + plan.rules.len());
        let system_count = plan.system.len();
        for (i, (path, grant)) in plan.system.iter().chain(&plan.rules).enumerate() {
            let system = i < system_count;
            if system {
                if let Some(found) = kept.get(path) {
                    if let Some(o) = found {
                        out.push((o.clone(), *grant));
                    }
                    continue;
                }
            } else {
                let Ok(st) = rfs::stat(path) else {
                    kept.remove(path);
                    continue;
                };
                if let Some(Some(o)) = kept.get(path) {
                    if o.dev == st.st_dev && o.ino == st.st_ino {
                        out.push((o.clone(), *grant));
                        continue;
                    }
                }
            }
            let opened = open_rule_path(path, system).map(Arc::new);
            if kept.len() >= KEPT_PATHS {
                kept.retain(|_, o| o.as_ref().is_none_or(|o| o.system));
            }
            if system || opened.is_some() {
                kept.insert(path.clone(), opened.clone());
            }
            if let Some(o) = opened {
                out.push((o, *grant));
            }
        }
        out
    }

    /// The file rights a grant gives a path (a file gets only file rights).
    fn access(grant: Grant, is_dir: bool) -> landlock::BitFlags<AccessFs> {
        let fs = AccessFs::from_all(ABI::V3);
        let file_rights = AccessFs::from_file(ABI::V3);
        let access = match grant {
            Grant::Read => AccessFs::from_read(ABI::V3),
            Grant::Write => fs,
            Grant::Device if is_dir => file_rights | AccessFs::ReadDir,
            Grant::Device => file_rights,
        };
        if is_dir {
            access
        } else {
            access & file_rights
        }
    }

    /// A new ruleset holding every rule of `plan` but its private temp
    /// directory.
    fn build(plan: &Plan) -> io::Result<RulesetCreated> {
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(ABI::V3))
            .map_err(ll)?
            .scope(Scope::from_all(ABI::V6))
            .map_err(ll)?;
        if !plan.network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(ABI::V4))
                .map_err(ll)?;
        }
        let mut created = ruleset.create().map_err(ll)?;
        for (o, grant) in opened_rules(plan) {
            created = created
                .add_rule(PathBeneath::new(o.fd.as_fd(), access(grant, o.is_dir)))
                .map_err(ll)?;
        }
        Ok(created)
    }

    /// What a kept ruleset was built from: the plan without its private
    /// temp directory, and the inode each of the plan's other paths named
    /// then (`None`: missing, so not granted).
    struct Built {
        system: Arc<[(PathBuf, Grant)]>,
        rules: Vec<(PathBuf, Grant)>,
        network: bool,
        found: Vec<Option<(u64, u64)>>,
    }

    /// The inode each of the plan's non-system paths names now.
    fn found(plan: &Plan) -> Vec<Option<(u64, u64)>> {
        plan.rules
            .iter()
            .map(|(p, _)| rfs::stat(p).ok().map(|st| (st.st_dev, st.st_ino)))
            .collect()
    }

    /// How many private temp directories one kept ruleset grants before it
    /// is built afresh (each rule keeps its removed directory's inode).
    const GRANTS_PER_RULESET: usize = 64;

    /// A ruleset kept for later starts of the same plan.
    struct Kept {
        built: Built,
        ruleset: RulesetCreated,
        /// Private temp directories it granted that are not known removed.
        live: Arc<std::sync::atomic::AtomicUsize>,
        grants: usize,
    }

    /// The kept rulesets (a few plans at most).
    fn rulesets() -> &'static Mutex<Vec<Kept>> {
        static R: Mutex<Vec<Kept>> = Mutex::new(Vec::new());
        &R
    }

    /// The private temp directories granted by a kept ruleset and not yet
    /// removed, by path: their removal is what lets the ruleset be reused.
    fn leases() -> &'static Mutex<HashMap<PathBuf, Arc<std::sync::atomic::AtomicUsize>>> {
        static L: OnceLock<Mutex<HashMap<PathBuf, Arc<std::sync::atomic::AtomicUsize>>>> =
            OnceLock::new();
        L.get_or_init(|| Mutex::new(HashMap::new()))
    }

    /// `dir`, a private temp directory, is gone.
    pub fn tmp_removed(dir: &Path) {
        let lease = leases()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(dir);
        if let Some(live) = lease {
            live.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        }
    }

    /// The ruleset of `plan` (its private temp directory included), for
    /// one start to restrict itself with.
    ///
    /// Building a ruleset is most of a confined start's cost, so one is kept
    /// per plan and reused while that is safe. Each start still gets a
    /// domain of its own — `landlock_restrict_self` makes a new one from
    /// the ruleset every time — but rules can only be added to a ruleset,
    /// never taken out, so a kept ruleset also grants every private temp
    /// directory it granted before. That grants nothing once those
    /// directories are removed: a rule holds its directory's inode, so the
    /// inode cannot be reused, and nothing can be created in a removed
    /// directory. The kept ruleset is therefore reused only when every
    /// private temp directory it granted is known removed (the last
    /// command settled, its directory gone: sequential starts), and only
    /// while the plan's paths still name the inodes it was built with;
    /// otherwise — commands running side by side, say — a fresh ruleset is
    /// built and kept in its place.
    fn ruleset_for(plan: &Plan) -> io::Result<RulesetCreated> {
        use std::sync::atomic::Ordering;
        let now = found(plan);
        let mut kept = rulesets().lock().unwrap_or_else(|e| e.into_inner());
        let at = kept.iter().position(|k| {
            k.built.network == plan.network
                && k.built.found == now
                && (Arc::ptr_eq(&k.built.system, &plan.system) || k.built.system == plan.system)
                && k.built.rules == plan.rules
        });
        let reusable = at.filter(|&i| {
            let k = &kept[i];
            k.live.load(Ordering::Acquire) == 0 && k.grants < GRANTS_PER_RULESET
        });
        let i = match reusable {
            Some(i) => i,
            None => {
                let ruleset = build(plan)?;
                let built = Built {
                    system: plan.system.clone(),
                    rules: plan.rules.clone(),
                    network: plan.network,
                    found: now,
                };
                let fresh = Kept {
                    built,
                    ruleset,
                    live: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                    grants: 0,
                };
                match at {
                    Some(i) => {
                        kept[i] = fresh;
                        i
                    }
                    None => {
                        if kept.len() >= 8 {
                            kept.remove(0);
                        }
                        kept.push(fresh);
                        kept.len() - 1
                    }
                }
            }
        };
        let k = &mut kept[i];
        let mut ruleset = k.ruleset.try_clone().map_err(ll)?;
        // The private temp directory: a fresh one per command. A path
        // missing now is not granted (Landlock rules name inodes).
        if let Some(tmp) = &plan.private_tmp {
            if let Some(o) = open_rule_path(tmp, false) {
                ruleset = ruleset
                    .add_rule(PathBeneath::new(
                        o.fd.as_fd(),
                        access(Grant::Write, o.is_dir),
                    ))
                    .map_err(ll)?;
                k.grants += 1;
                k.live.fetch_add(1, Ordering::AcqRel);
                leases()
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(tmp.clone(), k.live.clone());
            }
        }
        Ok(ruleset)
    }

    /// Restrict the calling thread (and so what it spawns) by `plan`.
    /// (Closing the descriptor this start used is cheap: the kept ruleset
    /// holds the kernel's object, whose freeing once cost a start tens of
    /// microseconds.)
    pub fn restrict_this_thread(plan: &Plan) -> io::Result<()> {
        let status = ruleset_for(plan)?.restrict_self().map_err(ll)?;
        if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
            return Err(ll(format!("the kernel enforced it only as {status:?}")));
        }
        // The calling thread descends from a hardened spawner and already
        // carries its filter and dropped capabilities; check it does.
        if !hardened() {
            return Err(ll("the seccomp filter is missing on the spawning thread"));
        }
        Ok(())
    }

    /// Restrict the calling thread with a ruleset that handles no file
    /// access — signal and abstract-socket scopes, and TCP without
    /// network — so the child it spawns can still make its view's mounts.
    pub fn restrict_scopes(network: bool) -> io::Result<()> {
        static KEPT: [Mutex<Option<RulesetCreated>>; 2] = [Mutex::new(None), Mutex::new(None)];
        let mut kept = KEPT[usize::from(network)]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if kept.is_none() {
            let mut ruleset = Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .scope(Scope::from_all(ABI::V6))
                .map_err(ll)?;
            if !network {
                ruleset = ruleset
                    .handle_access(AccessNet::from_all(ABI::V4))
                    .map_err(ll)?;
            }
            *kept = Some(ruleset.create().map_err(ll)?);
        }
        let ruleset = kept.as_ref().expect("just made").try_clone().map_err(ll)?;
        drop(kept);
        let status = ruleset.restrict_self().map_err(ll)?;
        if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
            return Err(ll(format!("the kernel enforced it only as {status:?}")));
        }
        if !hardened() {
            return Err(ll("the seccomp filter is missing on the spawning thread"));
        }
        Ok(())
    }

    thread_local! {
        static HARDENED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Whether the calling thread descends from a hardened spawner.
    fn hardened() -> bool {
        HARDENED.with(|f| f.get())
    }

    /// What a hardened spawner thread is asked to do.
    enum Ask {
        /// Run this job on a thread of its own (no spare was waiting).
        Run(Box<super::Job>),
        /// Make a new spare thread (the last one was taken), and the next
        /// private temp directory under this base.
        Spare(Option<PathBuf>),
    }

    /// A hardened spawner: a thread without capabilities, with
    /// `no_new_privs` and the seccomp filter (the socket rules too when it
    /// serves starts without network), that makes the threads (inheriting
    /// all of it) which apply a job's Landlock ruleset and spawn: one per
    /// job, one spare kept waiting.
    struct Spawner {
        asks: Mutex<std::sync::mpsc::Sender<Ask>>,
        /// The spare thread waiting for one job.
        spare: Arc<SpareSlot>,
    }

    type SpareSlot = Mutex<Option<SyncSender<Box<super::Job>>>>;

    /// Give `job` to its spawner's waiting spare thread, else to the
    /// spawner (which makes a thread for it). When neither can take it, the
    /// job is answered with the spawner's error.
    pub fn hand_over(job: Box<super::Job>) {
        let spawner = match spawner(plain_filter(&job.start.plan)) {
            Ok(s) => s,
            Err(e) => {
                let super::Job { deliver, .. } = *job;
                deliver(Err(e));
                return;
            }
        };
        let waiting = spawner
            .spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let job = match waiting {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                // The spare is gone (it could not run): the spawner runs it.
                Err(std::sync::mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let sent = spawner
            .asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(Ask::Run(job));
        if let Err(std::sync::mpsc::SendError(Ask::Run(job))) = sent {
            let super::Job { deliver, .. } = *job;
            deliver(Err(io::Error::other("the hardened spawner thread is gone")));
        }
    }

    /// Whether a start of `plan` takes the spawner whose filter has no
    /// socket rule: with network, or mediated — its child's own filter
    /// then carries the rule, as one thread has one listener at most
    /// (see [`crate::process::mediate`]).
    pub fn plain_filter(plan: &Plan) -> bool {
        plan.network || crate::process::sandbox::mediated(plan)
    }

    /// Ask the spawner of `network` starts for the next spare thread.
    /// Called once a job's process is spawned, so making the thread does not
    /// compete with the spawn for the machine's cores.
    pub fn want_spare(network: bool, tmp_base: Option<PathBuf>) {
        if let Ok(spawner) = spawner(network) {
            let _ = spawner
                .asks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .send(Ask::Spare(tmp_base));
        }
    }

    /// Start a thread of a hardened spawner (called on it) that runs one
    /// job: the given one, or, as the spare, the one handed to it later.
    fn confining_thread(job: Option<Box<super::Job>>, spare: &SpareSlot) {
        let (spare_tx, spare_rx) = match job {
            Some(_) => (None, None),
            None => {
                let (tx, rx) = std::sync::mpsc::sync_channel(1);
                (Some(tx), Some(rx))
            }
        };
        let made = std::thread::Builder::new()
            .name("nlc-confine".into())
            .stack_size(super::CONFINING_STACK)
            .spawn(move || {
                HARDENED.with(|f| f.set(true));
                let job = match (job, spare_rx) {
                    (Some(job), _) => job,
                    (None, Some(rx)) => match rx.recv() {
                        Ok(job) => job,
                        // The host is exiting: nothing more to spawn.
                        Err(_) => return,
                    },
                    (None, None) => return,
                };
                job.run()
            });
        // A thread that could not be created drops its job, whose caller
        // then hears the reply channel close; a spare that could not be
        // created is not offered.
        if made.is_ok() {
            if let Some(tx) = spare_tx {
                *spare.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
            }
        }
    }

    /// The hardened spawner of starts with network or without, made on
    /// first use (see [`Spawner`] and [`crate::process::seccomp`]). The
    /// listener of the socket rules gets a thread of its own, made here,
    /// outside the filter.
    fn spawner(network: bool) -> io::Result<&'static Spawner> {
        static WITH: OnceLock<Result<Spawner, String>> = OnceLock::new();
        static WITHOUT: OnceLock<Result<Spawner, String>> = OnceLock::new();
        let cell = if network { &WITH } else { &WITHOUT };
        cell.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Ask>();
            type Ready = Result<Option<OwnedFd>, String>;
            let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel::<Ready>(1);
            let spare = Arc::new(SpareSlot::new(None));
            let slot = spare.clone();
            std::thread::Builder::new()
                .name("nlc-hardened-spawner".into())
                .spawn(move || {
                    let setup = crate::process::seccomp::harden_this_thread(!network);
                    let ok = setup.is_ok();
                    let _ = ready_tx.send(setup.map_err(|e| e.to_string()));
                    if !ok {
                        return;
                    }
                    for ask in rx {
                        match ask {
                            Ask::Run(job) => confining_thread(Some(job), &slot),
                            Ask::Spare(base) => {
                                let none_waiting =
                                    slot.lock().unwrap_or_else(|e| e.into_inner()).is_none();
                                if none_waiting {
                                    confining_thread(None, &slot);
                                }
                                if let Some(base) = base {
                                    super::premake_private_tmp(&base);
                                }
                            }
                        }
                    }
                })
                .map_err(|e| e.to_string())?;
            let listener = ready_rx.recv().map_err(|e| e.to_string())??;
            if let Some(fd) = listener {
                std::thread::Builder::new()
                    .name("nlc-refusals".into())
                    .stack_size(super::CONFINING_STACK)
                    .spawn(move || crate::process::seccomp::serve(fd))
                    .map_err(|e| e.to_string())?;
            }
            Ok(Spawner {
                asks: Mutex::new(tx),
                spare,
            })
        })
        .as_ref()
        .map_err(|e| io::Error::other(format!("the hardened spawner could not start: {e}")))
    }
}
#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Plan;

    pub fn tmp_removed(_dir: &std::path::Path) {}

    pub fn restrict_this_thread(_plan: &Plan) -> std::io::Result<()> {
        Err(std::io::Error::other(
            "kernel confinement is available on Linux only",
        ))
    }

    pub fn want_spare(_network: bool, _tmp_base: Option<std::path::PathBuf>) {}

    pub fn plain_filter(plan: &Plan) -> bool {
        plan.network
    }

    /// Never reached: [`super::missing`] refuses every confined start first.
    /// (The job stays boxed: the signature is the Linux one.)
    #[allow(clippy::boxed_local)]
    pub fn hand_over(job: Box<super::Job>) {
        (job.deliver)(Err(std::io::Error::other(
            "kernel confinement is available on Linux only",
        )))
    }
}

/// Tell `refused` of the sockets the kernel refuses the confined command led
/// by `pid` (started without network), as they are refused.
pub fn count_refusals(pid: i32, refused: Counter) {
    #[cfg(target_os = "linux")]
    super::seccomp::watch(pid, refused);
    #[cfg(not(target_os = "linux"))]
    let _ = (pid, refused);
}

/// A confined command's private temp directory `dir` is removed: a kept
/// ruleset that granted it may be reused (see the Linux `ruleset_for`).
pub fn tmp_removed(dir: &Path) {
    imp::tmp_removed(dir)
}
