//! A cgroup v2 directory per command, so that a descendant which leaves the
//! command's process group or session (`setsid`, a double fork, a daemon)
//! is still found and stopped with the rest of its tree (SPEC §6).
//!
//! Theory of operation: the first start finds the cgroup v2 hierarchy in
//! `/proc/self/mountinfo` (on a hybrid machine it sits beside the v1
//! controllers, e.g. at `/sys/fs/cgroup/unified`) and the host's own cgroup
//! in `/proc/self/cgroup`, and makes `neurolink-commands-<pid>` below the
//! host's cgroup. That works where the host may write there (root, or a
//! delegated subtree); anywhere else nothing is made and commands are
//! contained by their process group only ([`Containment::Group`]).
//!
//! Each command gets a numbered directory below that base, held open. The
//! clone-based spawn creates the child in it (`clone3` with
//! `CLONE_INTO_CGROUP`, see [`super::clone3`]; where the kernel lacks that,
//! the child writes `0` to the directory's `cgroup.procs` before its exec),
//! so the command and everything it will ever start are inside before it
//! runs a single instruction of its own — every Linux start goes through
//! that spawn: piped, on a terminal, confined or not. Stopping the tree is
//! one write of `1` to `cgroup.kill`, which reaches
//! every process inside, whatever its group or session. A directory whose
//! processes are all gone is kept for the next command instead of being
//! removed, so a start makes no `mkdir` and a settle no `rmdir` in the
//! steady state. The base and everything below it are removed by the host's
//! exit cleanup or, when the host dies, by the watchdog, which first kills
//! the whole base (`cgroup.kill` of the base reaches every command's tree).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// How many empty directories are kept for later commands at most (by
/// number: an idle one holds no descriptor): a burst of up to this many
/// commands makes no directory and removes none.
const KEEP: usize = 1024;

/// The host's own subtree, when it could be made.
struct Base {
    path: PathBuf,
    /// The subtree's directory, open: command directories are made and
    /// opened relative to it.
    dir: OwnedFd,
    /// The next directory number.
    next: std::sync::atomic::AtomicU32,
}

static BASE: OnceLock<Option<Base>> = OnceLock::new();

/// The numbers of the empty directories ready for a command.
static IDLE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// One command's cgroup.
#[derive(Debug)]
pub struct Cgroup {
    /// Its number below the base.
    n: u32,
    /// Its directory, open: the child is created in it, and its files are
    /// opened relative to it.
    dir: OwnedFd,
    /// Its `cgroup.procs`, open for reading and writing before any
    /// confinement applies: where a child cannot be created in the cgroup,
    /// it (or the parent) is moved in through this descriptor, and reading
    /// it from offset 0 tells whether anyone is inside.
    procs: OwnedFd,
    /// Whether `cgroup.kill` was written. Such a directory is removed, never
    /// reused: on some kernels a child created in it with
    /// `CLONE_INTO_CGROUP` is killed at birth (the kill's sequence number is
    /// compared with the parent's cgroup's, not the target's).
    killed: std::sync::atomic::AtomicBool,
    /// The resource limits it enforces, when the start set any (SPEC §15).
    limits: Option<Box<dyn Attached>>,
}

/// What a start attaches to its cgroup: the resource limits it set
/// ([`super::limits`], which builds on this module and is reached back
/// only through this trait).
pub trait Attached: std::fmt::Debug + Send + Sync + std::any::Any {
    /// The `cgroup.procs` of the further (v1) directories the child enters
    /// before its exec.
    fn v1_procs(&self) -> [Option<BorrowedFd<'_>>; 2];
}

/// A command's cgroup as the spawn takes it.
#[derive(Debug, Clone, Copy)]
pub struct Handle<'a> {
    /// The cgroup's directory (`clone3`'s `CLONE_INTO_CGROUP`).
    pub dir: BorrowedFd<'a>,
    /// Its `cgroup.procs`, open for writing.
    pub procs: BorrowedFd<'a>,
    /// The `cgroup.procs` of the v1 directories holding its limits, which
    /// the child enters before its exec.
    pub extra: [Option<BorrowedFd<'a>>; 2],
}

/// [`Handle`]'s descriptors, owned (a confined start takes them to its
/// confining thread).
#[derive(Debug)]
pub struct OwnedHandle {
    /// The cgroup's directory.
    pub dir: OwnedFd,
    /// Its `cgroup.procs`, open for writing.
    pub procs: OwnedFd,
    /// [`Handle::extra`].
    pub extra: [Option<OwnedFd>; 2],
}

impl OwnedHandle {
    /// Borrowed, as the spawn takes it.
    pub fn handle(&self) -> Handle<'_> {
        Handle {
            dir: self.dir.as_fd(),
            procs: self.procs.as_fd(),
            extra: [0, 1].map(|i| self.extra[i].as_ref().map(|f| f.as_fd())),
        }
    }
}

/// The cgroup v2 mount point, from mountinfo's lines (`fstype cgroup2`).
fn v2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        // Field 5 is the mount point (octal escapes for spaces and the like
        // are left alone: such a mount point is not used).
        let point = left.split_whitespace().nth(4)?;
        (!point.contains('\\')).then(|| PathBuf::from(point))
    })
}

/// The host's cgroup v2 path (`0::/path`), relative.
fn own_cgroup(self_cgroup: &str) -> Option<String> {
    self_cgroup.lines().find_map(|l| {
        let rest = l.strip_prefix("0::")?;
        Some(rest.trim_start_matches('/').to_string())
    })
}

fn base() -> Option<&'static Base> {
    BASE.get_or_init(|| {
        if !cfg!(target_os = "linux") || std::env::var_os(DISABLE_VAR).is_some() {
            return None;
        }
        let mount = v2_mount(&std::fs::read_to_string("/proc/self/mountinfo").ok()?)?;
        let own = own_cgroup(&std::fs::read_to_string("/proc/self/cgroup").ok()?)?;
        if own.contains("..") {
            return None;
        }
        let parent = mount.join(own);
        sweep_stale(&parent);
        let path = parent.join(format!("neurolink-commands-{}", std::process::id()));
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        // cgroup.kill (Linux 5.14) is what stops a tree in one write.
        if !path.join("cgroup.kill").exists() {
            let _ = std::fs::remove_dir(&path);
            return None;
        }
        let dir = rustix::fs::open(
            &path,
            rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok()
        .and_then(|d| crate::process::posix_spawn::above_stdio(d).ok())?;
        Some(Base {
            path,
            dir,
            next: std::sync::atomic::AtomicU32::new(1),
        })
    })
    .as_ref()
}

/// Remove what hosts that are gone left in `parent` (their watchdog was
/// killed too, before it could): the subtree of a pid that no longer runs
/// is killed and removed, best effort. A pid that runs again (reused) is
/// left alone.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("neurolink-commands-"))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let gone = rustix::process::Pid::from_raw(pid)
            .is_some_and(|p| rustix::process::test_kill_process(p) == Err(rustix::io::Errno::SRCH));
        if !gone {
            continue;
        }
        let dir = e.path();
        let _ = std::fs::write(dir.join("cgroup.kill"), b"1");
        if let Ok(subs) = std::fs::read_dir(&dir) {
            for sub in subs.flatten() {
                if sub.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = std::fs::remove_dir(sub.path());
                }
            }
        }
        let _ = std::fs::remove_dir(&dir);
    }
}

/// Test-only: set, the engine makes no cgroups (every command is contained
/// by its process group only), as on a host without the right to.
pub const DISABLE_VAR: &str = "NEUROLINK_COMMANDS_TEST_NO_CGROUP";

/// The host's subtree, made now if it can be (the watchdog is told where it
/// is when it starts).
pub fn base_path() -> Option<&'static Path> {
    base().map(|b| b.path.as_path())
}

impl Cgroup {
    /// A directory for one command: an idle one, else a new one. `None`
    /// where this host may make none.
    pub fn take() -> Option<Cgroup> {
        let b = base()?;
        let open = |n: u32| {
            rustix::fs::openat(
                &b.dir,
                n.to_string(),
                rustix::fs::OFlags::RDONLY
                    | rustix::fs::OFlags::DIRECTORY
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .ok()
            .and_then(|d| crate::process::posix_spawn::above_stdio(d).ok())
            .and_then(|dir| {
                let procs = rustix::fs::openat(
                    &dir,
                    "cgroup.procs",
                    rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                )
                .ok()
                .and_then(|p| crate::process::posix_spawn::above_stdio(p).ok())?;
                Some(Cgroup {
                    n,
                    dir,
                    procs,
                    killed: std::sync::atomic::AtomicBool::new(false),
                    limits: None,
                })
            })
        };
        let idle = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop();
        if let Some(c) = idle.and_then(open) {
            return Some(c);
        }
        let n = b.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        rustix::fs::mkdirat(
            &b.dir,
            n.to_string(),
            rustix::fs::Mode::from_raw_mode(0o755),
        )
        .ok()?;
        let made = open(n);
        if made.is_none() {
            let _ = rustix::fs::unlinkat(&b.dir, n.to_string(), rustix::fs::AtFlags::REMOVEDIR);
        }
        made
    }

    /// Its directory.
    pub fn path(&self) -> PathBuf {
        base()
            .map(|b| b.path.join(self.n.to_string()))
            .unwrap_or_default()
    }

    /// What the spawn needs: the directory to create the child in and the
    /// `cgroup.procs` to move it in through otherwise.
    pub fn handle(&self) -> Handle<'_> {
        Handle {
            dir: self.dir.as_fd(),
            procs: self.procs.as_fd(),
            extra: self.limits.as_ref().map_or([None, None], |l| l.v1_procs()),
        }
    }

    /// Copies of [`Cgroup::handle`]'s descriptors, for another thread.
    pub fn owned_handle(&self) -> std::io::Result<OwnedHandle> {
        let h = self.handle();
        let copy = |f: Option<BorrowedFd<'_>>| f.map(|f| f.try_clone_to_owned()).transpose();
        Ok(OwnedHandle {
            dir: self.dir.try_clone()?,
            procs: self.procs.try_clone()?,
            extra: [copy(h.extra[0])?, copy(h.extra[1])?],
        })
    }

    /// Its directory, open (its counters are read relative to it).
    pub fn dir(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// Give it the limits the start set ([`super::limits::take`]).
    pub fn attach_limits(&mut self, l: Box<dyn Attached>) {
        self.limits = Some(l);
    }

    /// The limits it enforces, as attached.
    pub fn limits(&self) -> Option<&dyn Attached> {
        self.limits.as_deref()
    }

    /// Its `cgroup.procs`, open for reading.
    fn procs(&self) -> std::io::Result<OwnedFd> {
        Ok(rustix::fs::openat(
            &self.dir,
            "cgroup.procs",
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?)
    }

    /// The pids inside.
    fn pids(&self) -> Vec<i32> {
        let Ok(procs) = self.procs() else {
            return Vec::new();
        };
        let mut text = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match rustix::io::read(&procs, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => text.extend_from_slice(&buf[..n]),
            }
        }
        text.split(|&b| b == b'\n')
            .filter_map(|l| std::str::from_utf8(l).ok()?.trim().parse().ok())
            .collect()
    }

    /// Whether any process is still inside (one that cannot be read is
    /// taken as populated: it is killed, and waited for).
    fn populated(&self) -> bool {
        let mut buf = [0u8; 16];
        rustix::io::pread(&self.procs, &mut buf, 0).map_or(true, |n| n > 0)
    }

    /// Send `sig` to every process of the tree: SIGKILL through
    /// `cgroup.kill`, any other signal to each pid inside that is not in
    /// process group `group` (the caller signals that group itself, and a
    /// process must not get the signal twice), then SIGCONT so a stopped
    /// process acts on it.
    pub fn signal(&self, sig: i32, group: i32) {
        if sig == libc::SIGKILL {
            self.killed
                .store(true, std::sync::atomic::Ordering::Relaxed);
            let kill = rustix::fs::openat(
                &self.dir,
                "cgroup.kill",
                rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            );
            if let Ok(k) = kill {
                let _ = rustix::io::write(&k, b"1");
            }
            return;
        }
        for pid in self.pids() {
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                let pg = rustix::process::getpgid(Some(p)).map(|g| g.as_raw_nonzero().get());
                if pg.is_ok_and(|g| g == group) {
                    continue;
                }
                if let Some(s) = rustix::process::Signal::from_named_raw(sig) {
                    let _ = rustix::process::kill_process(p, s);
                }
                let _ = rustix::process::kill_process(p, rustix::process::Signal::CONT);
            }
        }
    }

    /// Kill whatever is left of the tree and give the directory back: kept
    /// for the next command once empty (at once in the usual case, where
    /// nothing is left and nothing needs killing; else a short-lived thread
    /// waits for the killed processes to be gone).
    pub fn release(self) {
        if !self.populated() {
            return self.idle();
        }
        self.signal(libc::SIGKILL, 0);
        if !self.populated() {
            return self.idle();
        }
        let _ = std::thread::Builder::new()
            .name("nlc-cgroup".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                for _ in 0..500 {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    if !self.populated() {
                        return self.idle();
                    }
                }
                // Still populated after 5 s (a process stuck in the
                // kernel): left for the exit cleanup or the watchdog.
            });
    }

    /// Keep an empty directory for a later command, or remove it (one that
    /// was killed, or one too many).
    fn idle(self) {
        let Cgroup {
            n,
            dir,
            procs,
            killed,
            limits,
        } = self;
        drop((dir, procs));
        // A directory that held limits carries their settings: never reused.
        let limited = limits.is_some();
        drop(limits);
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < KEEP && !killed.into_inner() && !limited {
            idle.push(n);
        } else if let Some(b) = base() {
            drop(idle);
            let _ = rustix::fs::unlinkat(&b.dir, n.to_string(), rustix::fs::AtFlags::REMOVEDIR);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_v2_mount_and_the_own_cgroup() {
        let info = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
                    35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                    41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            v2_mount(info),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(v2_mount("1 2 0:1 / /proc rw - proc proc rw\n"), None);
        assert_eq!(
            own_cgroup("4:memory:/x\n0::/user.slice/a.scope\n").as_deref(),
            Some("user.slice/a.scope")
        );
        assert_eq!(own_cgroup("0::/\n").as_deref(), Some(""));
        assert_eq!(own_cgroup("4:memory:/x\n"), None);
    }

    /// What a child started in `c` prints of its own cgroup, and how it ends.
    fn run_in(c: &Cgroup) -> (String, crate::process::spawn::Exit) {
        use std::io::Read;
        let d = tempfile::tempdir().unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), ".").unwrap();
        let argv: Vec<String> = ["/bin/sh", "-c", "grep '^0::' /proc/self/cgroup"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let s = crate::process::unless_busy(|| {
            crate::process::transform::start(
                &crate::process::transform::Request {
                    argv: &argv,
                    dir: held.fd.as_fd(),
                    env: None,
                    input: crate::process::spawn::Input::Null,
                    tmp: None,
                    cgroup: Some(c.handle()),
                },
                None,
            )
        })
        .unwrap();
        let mut out = String::new();
        std::fs::File::from(s.stdout)
            .read_to_string(&mut out)
            .unwrap();
        let exit = crate::process::spawn::peek_exit(s.pid, true).unwrap();
        crate::process::spawn::reap(s.pid);
        (out, exit)
    }

    /// Every kind of start — piped, with a stdin pipe, with a private temp
    /// directory, on a terminal — is created in its cgroup: the handle's
    /// `cgroup.procs` is open read-only here, so a move into the cgroup
    /// (from the parent after the spawn, or by the child) would fail the
    /// start; and the command finds itself inside from its first
    /// instruction (its first act here prints its cgroup).
    #[test]
    fn every_kind_of_start_is_born_in_its_cgroup() {
        use crate::process::spawn::{peek_exit, reap, Exit, Input};
        use crate::process::transform::start;
        let Some(c) = Cgroup::take() else {
            assert!(
                rustix::process::geteuid().as_raw() != 0 || base_path().is_none(),
                "root with a cgroup v2 hierarchy gets a cgroup"
            );
            return;
        };
        // Under qemu-user (no clone3) the child writes cgroup.procs itself.
        let qemu = std::env::var_os("NLC_TEST_QEMU").is_some_and(|v| v == "1");
        let read_only = rustix::fs::openat(
            &c.dir,
            "cgroup.procs",
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let handle = Handle {
            dir: c.dir.as_fd(),
            procs: if qemu {
                c.procs.as_fd()
            } else {
                read_only.as_fd()
            },
            extra: [None, None],
        };
        let own = format!("/neurolink-commands-{}/{}", std::process::id(), c.n);
        let d = tempfile::tempdir().unwrap();
        let held = crate::policy::cwd::enter(d.path().to_str().unwrap(), ".").unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let argv: Vec<String> = ["/bin/sh", "-c", "grep '^0::' /proc/self/cgroup > cg"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let kinds = [
            (Input::Null, None),
            (Input::Pipe, None),
            (Input::Null, Some(tmp.path())),
            (Input::Terminal { cols: 80, rows: 24 }, None),
        ];
        for (input, tmp) in kinds {
            let _ = std::fs::remove_file(d.path().join("cg"));
            let s = crate::process::unless_busy(|| {
                start(
                    &crate::process::transform::Request {
                        argv: &argv,
                        dir: held.fd.as_fd(),
                        env: None,
                        input,
                        tmp,
                        cgroup: Some(handle),
                    },
                    None,
                )
            })
            .unwrap_or_else(|e| panic!("{input:?} {tmp:?}: {e}"));
            assert_eq!(peek_exit(s.pid, true), Some(Exit::Code(0)), "{input:?}");
            reap(s.pid);
            let cg = std::fs::read_to_string(d.path().join("cg")).unwrap();
            assert!(cg.trim_end().ends_with(&own), "{input:?} {tmp:?}: {cg}");
        }
        // Control: the read-only handle refuses a move into the cgroup.
        assert_eq!(
            rustix::io::write(&read_only, std::process::id().to_string().as_bytes()),
            Err(rustix::io::Errno::BADF)
        );
        c.release();
    }

    #[test]
    fn a_child_is_born_in_its_cgroup_and_a_killed_cgroup_is_never_reused() {
        let Some(c) = Cgroup::take() else {
            // Only a host that may not make cgroups gets none.
            assert!(
                rustix::process::geteuid().as_raw() != 0 || base_path().is_none(),
                "root with a cgroup v2 hierarchy gets a cgroup"
            );
            return;
        };
        let own = |c: &Cgroup| {
            let rel = c.path().to_string_lossy().into_owned();
            assert!(rel.ends_with(&format!("/{}", c.n)), "{rel}");
            format!("/neurolink-commands-{}/{}", std::process::id(), c.n)
        };
        let (out, exit) = run_in(&c);
        assert_eq!(exit, crate::process::spawn::Exit::Code(0));
        assert!(out.trim_end().ends_with(&own(&c)), "{out}");
        // Killed (nothing inside): not kept, so the next start cannot be
        // born into it and killed at birth.
        let killed = c.n;
        c.signal(libc::SIGKILL, 0);
        c.release();
        let again: Vec<Cgroup> = (0..3).filter_map(|_| Cgroup::take()).collect();
        assert!(again.iter().all(|c| c.n != killed));
        let (out, exit) = run_in(&again[0]);
        assert_eq!(exit, crate::process::spawn::Exit::Code(0), "{out}");
        for c in again {
            c.release();
        }
    }
}
