//! Kernel confinement at spawn time (SPEC §8): what this kernel can enforce,
//! the rules one confined start applies, and the confined spawn itself.
//!
//! Theory of operation: a short-lived thread sets `no_new_privs`, restricts
//! itself with a Landlock ruleset (files, TCP, signal and abstract-socket
//! scopes) — without network it descends from the filtered spawner thread
//! and so already carries a seccomp filter that refuses every socket family
//! but `AF_UNIX` — then it calls the ordinary [`spawn`](super::spawn)
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
//! seccomp filter is compiled and attached once, to the spawner thread; and
//! that spawner keeps one spare thread waiting, so the thread a start
//! restricts already exists when the start arrives (the spawner makes the
//! next one off the start's path). Every command still gets a Landlock domain
//! of its own: a domain is never shared between two commands.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::spawn::Spawned;

/// The Landlock ABI confinement needs: file rights with truncation (3), TCP
/// rules (4), signal and abstract-socket scopes (6).
pub const NEEDED_ABI: u32 = 6;

/// Test-only: caps the Landlock ABI the engine believes the kernel offers
/// (read once per process). Used by the test suites to show the fail-closed
/// refusal on a kernel that does have Landlock; never set it in production.
pub const TEST_ABI_VAR: &str = "NEUROLINK_COMMANDS_TEST_LANDLOCK_ABI";
/// Test-only: `0` makes the engine believe the kernel has no seccomp filters.
pub const TEST_SECCOMP_VAR: &str = "NEUROLINK_COMMANDS_TEST_SECCOMP";

/// What this kernel can enforce (`confinementSupport()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: u32,
    /// Files can be confined (ABI ≥ 3: including truncation).
    pub filesystem: bool,
    /// TCP connect/bind can be refused (ABI ≥ 4).
    pub network: bool,
    /// Signals and abstract unix sockets are scoped (ABI ≥ 6).
    pub signals: bool,
    /// seccomp filters are available (for the socket-family filter).
    pub seccomp: bool,
}

/// This kernel's support, measured once.
pub fn support() -> Support {
    static S: OnceLock<Support> = OnceLock::new();
    *S.get_or_init(|| {
        let mut abi = kernel_abi();
        if let Some(cap) = std::env::var(TEST_ABI_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
        {
            abi = abi.min(cap);
        }
        let seccomp = kernel_seccomp() && std::env::var(TEST_SECCOMP_VAR).as_deref() != Ok("0");
        Support {
            landlock_abi: abi,
            filesystem: abi >= 3,
            network: abi >= 4,
            signals: abi >= 6,
            seccomp,
        }
    })
}

/// What this kernel lacks to enforce a confinement (with or without
/// network), phrased for a refusal; `None` when it can enforce all of it.
pub fn missing(network: bool) -> Option<String> {
    if cfg!(not(target_os = "linux")) {
        return Some(format!(
            "kernel confinement (Landlock and seccomp) is available on Linux only, and this is {}",
            std::env::consts::OS
        ));
    }
    let s = support();
    let mut lacks = Vec::new();
    if s.landlock_abi < NEEDED_ABI {
        lacks.push(format!(
            "Landlock ABI {NEEDED_ABI} (files, TCP and signal scoping; Linux 6.12 or later with Landlock enabled) is needed, this kernel offers {}",
            if s.landlock_abi == 0 {
                "none (ABI 0)".to_string()
            } else {
                format!("ABI {}", s.landlock_abi)
            }
        ));
    }
    if !network && !s.seccomp {
        lacks.push(
            "seccomp filters (to refuse UDP and non-unix sockets under network: false) are not available"
                .to_string(),
        );
    }
    (!lacks.is_empty()).then(|| lacks.join("; "))
}

/// How a rule grants a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Read and execute files, list directories.
    Read,
    /// Everything, recursively.
    Write,
    /// Read and write an existing file (a device node), or the files below a
    /// directory of device nodes (`/dev/pts`), without creating any.
    Device,
}

/// The rules one confined start applies, resolved before the process exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The fixed system paths (program and system trees, device nodes) and
    /// how they are granted: opened the first time, kept for every later
    /// start.
    pub system: Vec<(PathBuf, Grant)>,
    /// Other paths and how they are granted; a path missing when the
    /// ruleset is built is not granted.
    pub rules: Vec<(PathBuf, Grant)>,
    /// The command's private temp directory (writable), opened afresh:
    /// unlike the other paths, its descriptor is not kept for later starts.
    pub private_tmp: Option<PathBuf>,
    /// Whether the network stays reachable.
    pub network: bool,
}

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

/// Spawn `launch` confined by `plan` from a short-lived thread (see the
/// module's documentation).
///
/// Without network, the short-lived thread is started by the engine's
/// filtered spawner thread, which carries the socket filter (and
/// `no_new_privs`) and runs nothing else: threads inherit its filter by
/// reference, so no filter is compiled and attached per command (attaching
/// one costs about a millisecond, most of it the kernel preparing and later
/// freeing the program).
pub fn spawn(plan: &Plan, launch: super::transform::Request<'_>) -> std::io::Result<Spawned> {
    if plan.network {
        return std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("nlc-confine".into())
                .spawn_scoped(scope, || {
                    // The ruleset's descriptor is held until the spawn returns.
                    let _ruleset = imp::restrict_this_thread(plan)?;
                    super::spawn::spawn(&launch)
                })?
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the confining thread panicked")))
        });
    }
    let (reply, answer) = std::sync::mpsc::sync_channel(1);
    let job = Box::new(Job {
        plan: plan.clone(),
        argv: launch.argv.to_vec(),
        cwd: launch.cwd.to_path_buf(),
        dir: launch.dir.try_clone_to_owned()?,
        env: launch.env.map(<[(String, String)]>::to_vec),
        input: launch.input,
        reply,
    });
    imp::hand_over(job)?;
    answer
        .recv()
        .unwrap_or_else(|_| Err(std::io::Error::other("the confining thread panicked")))
}

/// One confined spawn handed to the filtered spawner (Linux only: elsewhere
/// every confined start is refused before it gets here).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Job {
    plan: Plan,
    argv: Vec<String>,
    cwd: PathBuf,
    dir: std::os::fd::OwnedFd,
    env: Option<Vec<(String, String)>>,
    input: super::spawn::Input,
    reply: std::sync::mpsc::SyncSender<std::io::Result<Spawned>>,
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl Job {
    /// Run in a thread of the filtered spawner: Landlock, then spawn.
    fn run(self) {
        use std::os::fd::AsFd;
        let req = super::transform::Request {
            argv: &self.argv,
            cwd: &self.cwd,
            dir: self.dir.as_fd(),
            env: self.env.as_deref(),
            confine: None,
            input: self.input,
        };
        // The ruleset's descriptor (`_ruleset`) is closed after the spawn,
        // not between restricting and spawning.
        let r =
            imp::restrict_this_thread(&self.plan).and_then(|_ruleset| super::spawn::spawn(&req));
        let _ = self.reply.send(r);
    }
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

    pub fn kernel_abi() -> u32 {
        // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
        // only asks for the ABI version; it reads no memory and creates nothing.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                1u32,
            )
        };
        if v > 0 {
            v as u32
        } else {
            0
        }
    }

    pub fn kernel_seccomp() -> bool {
        std::fs::read_to_string("/proc/self/status")
            .map(|s| s.lines().any(|l| l.starts_with("Seccomp_filters:")))
            .unwrap_or(false)
    }

    fn ll(e: impl std::fmt::Display) -> io::Error {
        io::Error::other(format!("confinement could not be applied: {e}"))
    }

    /// The socket filter: every `socket()` whose family is not `AF_UNIX`, and
    /// `io_uring_setup` (io_uring can create sockets too), fail with EACCES.
    fn socket_filter() -> io::Result<&'static seccompiler::BpfProgram> {
        static F: OnceLock<Result<seccompiler::BpfProgram, String>> = OnceLock::new();
        F.get_or_init(|| {
            use seccompiler::{
                SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
                SeccompRule,
            };
            let arch: seccompiler::TargetArch = std::env::consts::ARCH
                .try_into()
                .map_err(|e| format!("{e:?}"))?;
            let not_unix = SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )
            .map_err(|e| e.to_string())?])
            .map_err(|e| e.to_string())?;
            let mut rules = std::collections::BTreeMap::new();
            rules.insert(libc::SYS_socket, vec![not_unix.clone()]);
            rules.insert(libc::SYS_io_uring_setup, vec![]);
            // The x32 entry points share x86_64's audit arch: close them too.
            #[cfg(target_arch = "x86_64")]
            {
                const X32: i64 = 0x4000_0000;
                rules.insert(X32 | libc::SYS_socket, vec![not_unix]);
                rules.insert(X32 | libc::SYS_io_uring_setup, vec![]);
            }
            let filter = SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(libc::EACCES as u32),
                arch,
            )
            .map_err(|e| e.to_string())?;
            seccompiler::BpfProgram::try_from(filter).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| io::Error::other(format!("the socket filter could not be built: {e}")))
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
    type Kept = HashMap<PathBuf, Option<Arc<Opened>>>;

    fn kept() -> &'static Mutex<Kept> {
        static K: OnceLock<Mutex<Kept>> = OnceLock::new();
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

    /// Restrict the calling thread (and so what it spawns) by `plan`; the
    /// ruleset's descriptor is returned for the caller to close once the
    /// child is spawned.
    pub fn restrict_this_thread(plan: &Plan) -> io::Result<RulesetCreated> {
        let fs = AccessFs::from_all(ABI::V3);
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(fs)
            .map_err(ll)?
            .scope(Scope::from_all(ABI::V6))
            .map_err(ll)?;
        if !plan.network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(ABI::V4))
                .map_err(ll)?;
        }
        let mut created = ruleset.create().map_err(ll)?;
        let file_rights = AccessFs::from_file(ABI::V3);
        let access = |grant: Grant, is_dir: bool| {
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
        };
        for (o, grant) in opened_rules(plan) {
            created = created
                .add_rule(PathBeneath::new(o.fd.as_fd(), access(grant, o.is_dir)))
                .map_err(ll)?;
        }
        // The private temp directory: a fresh one per command, never kept.
        // A path missing now is not granted (Landlock rules name inodes).
        if let Some(tmp) = &plan.private_tmp {
            if let Some(o) = open_rule_path(tmp, false) {
                created = created
                    .add_rule(PathBeneath::new(
                        o.fd.as_fd(),
                        access(Grant::Write, o.is_dir),
                    ))
                    .map_err(ll)?;
            }
        }
        let keep = created.try_clone().map_err(ll)?;
        let status = created.restrict_self().map_err(ll)?;
        if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
            return Err(ll(format!("the kernel enforced it only as {status:?}")));
        }
        // Without network the calling thread descends from the filtered
        // spawner and already carries the socket filter; check it does.
        if !plan.network && !filtered() {
            return Err(ll("the socket filter is missing on the spawning thread"));
        }
        Ok(keep)
    }

    thread_local! {
        static FILTERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    fn filtered() -> bool {
        FILTERED.with(|f| f.get())
    }

    /// What the filtered spawner thread is asked to do.
    enum Ask {
        /// Run this job on a thread of its own (no spare was waiting).
        Run(Box<super::Job>),
        /// Make a new spare thread (the last one was taken).
        Spare,
    }

    type Spawner = Mutex<std::sync::mpsc::Sender<Ask>>;

    /// The spare: a thread of the filtered spawner (so carrying its filter
    /// and `no_new_privs`) waiting for one job.
    fn spare() -> &'static Mutex<Option<SyncSender<Box<super::Job>>>> {
        static S: Mutex<Option<SyncSender<Box<super::Job>>>> = Mutex::new(None);
        &S
    }

    /// Give `job` to the waiting spare thread, else to the spawner; ask the
    /// spawner for the next spare either way.
    pub fn hand_over(job: Box<super::Job>) -> io::Result<()> {
        let spawner = filtered_spawner()?;
        let waiting = spare().lock().unwrap_or_else(|e| e.into_inner()).take();
        let job = match waiting {
            Some(tx) => match tx.send(job) {
                Ok(()) => None,
                // The spare is gone (it could not run): the spawner runs it.
                Err(std::sync::mpsc::SendError(job)) => Some(job),
            },
            None => Some(job),
        };
        let spawner = spawner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(job) = job {
            spawner
                .send(Ask::Run(job))
                .map_err(|_| io::Error::other("the filtered spawner thread is gone"))?;
        }
        let _ = spawner.send(Ask::Spare);
        Ok(())
    }

    /// Start a thread of the filtered spawner (called on it) that runs one
    /// job: the given one, or, as the spare, the one handed to it later.
    fn confining_thread(job: Option<Box<super::Job>>) {
        let (spare_tx, spare_rx) = match job {
            Some(_) => (None, None),
            None => {
                let (tx, rx) = std::sync::mpsc::sync_channel(1);
                (Some(tx), Some(rx))
            }
        };
        let made = std::thread::Builder::new()
            .name("nlc-confine".into())
            .spawn(move || {
                FILTERED.with(|f| f.set(true));
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
                *spare().lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
            }
        }
    }

    /// The filtered spawner thread: `no_new_privs` and the socket filter on
    /// itself, then the threads (inheriting both) that apply a job's
    /// Landlock ruleset and spawn: one per job, one spare kept waiting.
    fn filtered_spawner() -> io::Result<&'static Spawner> {
        static S: OnceLock<Result<Spawner, String>> = OnceLock::new();
        S.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Ask>();
            let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel::<Result<(), String>>(1);
            std::thread::Builder::new()
                .name("nlc-filtered-spawner".into())
                .spawn(move || {
                    let setup = (|| -> io::Result<()> {
                        rustix::thread::set_no_new_privs(true)?;
                        install_filter(socket_filter()?)
                    })();
                    let ok = setup.is_ok();
                    let _ = ready_tx.send(setup.map_err(|e| e.to_string()));
                    if !ok {
                        return;
                    }
                    for ask in rx {
                        match ask {
                            Ask::Run(job) => confining_thread(Some(job)),
                            Ask::Spare => {
                                let none_waiting =
                                    spare().lock().unwrap_or_else(|e| e.into_inner()).is_none();
                                if none_waiting {
                                    confining_thread(None);
                                }
                            }
                        }
                    }
                })
                .map_err(|e| e.to_string())?;
            ready_rx.recv().map_err(|e| e.to_string())??;
            Ok(Mutex::new(tx))
        })
        .as_ref()
        .map_err(|e| io::Error::other(format!("the filtered spawner could not start: {e}")))
    }

    /// Install `prog` on the calling thread (not the others: no TSYNC) with
    /// `SECCOMP_FILTER_FLAG_SPEC_ALLOW`. Without that flag the kernel forces
    /// the speculative-store-bypass mitigation on every process under the
    /// filter, which made each confined start cost ~1.5 ms more; with it a
    /// confined command gets the same speculation policy as an unconfined
    /// one. A kernel that does not know the flag (< 4.17) gets the filter
    /// without it.
    fn install_filter(prog: &seccompiler::BpfProgram) -> io::Result<()> {
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: `fprog` points at `prog`'s instructions, which outlive the
        // call; seccompiler's `sock_filter` has the kernel's layout (code u16,
        // jt u8, jf u8, k u32), as libc's does. The kernel copies the program
        // and keeps no pointer into it. no_new_privs is already set by the
        // Landlock restriction above.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW,
                &fprog as *const libc::sock_fprog,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) {
            return seccompiler::apply_filter(prog).map_err(ll);
        }
        Err(ll(format!("the socket filter could not be installed: {e}")))
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Plan;

    pub fn kernel_abi() -> u32 {
        0
    }

    pub fn kernel_seccomp() -> bool {
        false
    }

    pub fn restrict_this_thread(_plan: &Plan) -> std::io::Result<std::convert::Infallible> {
        Err(std::io::Error::other(
            "kernel confinement is available on Linux only",
        ))
    }

    /// Never reached: [`super::missing`] refuses every confined start first.
    /// (The job stays boxed: the signature is the Linux one.)
    #[allow(clippy::boxed_local)]
    pub fn hand_over(_job: Box<super::Job>) -> std::io::Result<()> {
        Err(std::io::Error::other(
            "kernel confinement is available on Linux only",
        ))
    }
}

use imp::{kernel_abi, kernel_seccomp};
