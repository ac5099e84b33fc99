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
//! Each command gets a numbered directory below that base; its
//! `cgroup.procs` is opened by the parent before the spawn, and the child
//! writes `0` to it (itself) before its exec, so the command and everything
//! it will ever start are inside before it runs a single instruction of its
//! own. Stopping the tree is one write of `1` to `cgroup.kill`, which reaches
//! every process inside, whatever its group or session. A directory whose
//! processes are all gone is kept for the next command instead of being
//! removed, so a start makes no `mkdir` and a settle no `rmdir` in the
//! steady state. The base and everything below it are removed by the host's
//! exit cleanup or, when the host dies, by the watchdog, which first kills
//! the whole base (`cgroup.kill` of the base reaches every command's tree).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// How many empty directories are kept for later commands at most.
const KEEP: usize = 8;

/// The host's own subtree, when it could be made.
struct Base {
    path: PathBuf,
    /// The next directory number.
    next: std::sync::atomic::AtomicU32,
}

static BASE: OnceLock<Option<Base>> = OnceLock::new();

/// Empty directories ready for a command.
static IDLE: Mutex<Vec<Cgroup>> = Mutex::new(Vec::new());

/// One command's cgroup.
#[derive(Debug)]
pub struct Cgroup {
    /// Its number below the base.
    n: u32,
    /// Its `cgroup.procs`, open for writing: the child writes `0` to it.
    procs: OwnedFd,
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
        Some(Base {
            path,
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
        if let Some(c) = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Some(c);
        }
        let n = b.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = b.path.join(n.to_string());
        std::fs::create_dir(&dir).ok()?;
        let procs = rustix::fs::open(
            dir.join("cgroup.procs"),
            rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        );
        match procs {
            Ok(fd) => Some(Cgroup {
                n,
                procs: crate::process::posix_spawn::above_stdio(fd).ok()?,
            }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// Its directory.
    pub fn path(&self) -> PathBuf {
        base()
            .map(|b| b.path.join(self.n.to_string()))
            .unwrap_or_default()
    }

    /// The `cgroup.procs` descriptor a child writes `0` to before its exec.
    pub fn procs(&self) -> BorrowedFd<'_> {
        self.procs.as_fd()
    }

    /// Move `pid` in from the parent's side (for a start made by
    /// posix_spawn, whose child runs no code of ours).
    pub fn enter(&self, pid: i32) -> std::io::Result<()> {
        rustix::io::write(&self.procs, pid.to_string().as_bytes())?;
        Ok(())
    }

    /// Send `sig` to every process of the tree: SIGKILL through
    /// `cgroup.kill`, any other signal to each pid listed that is not in
    /// process group `group` (the caller signals that group itself, and a
    /// process must not get the signal twice), then SIGCONT so a stopped
    /// process acts on it.
    pub fn signal(&self, sig: i32, group: i32) {
        let dir = self.path();
        if sig == libc::SIGKILL {
            let _ = std::fs::write(dir.join("cgroup.kill"), b"1");
            return;
        }
        let Ok(list) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
            return;
        };
        for pid in list.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
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

    /// Whether any process is still inside.
    fn populated(&self) -> bool {
        std::fs::read_to_string(self.path().join("cgroup.events"))
            .map(|e| e.lines().any(|l| l == "populated 1"))
            .unwrap_or(false)
    }

    /// Kill whatever is left of the tree and give the directory back: kept
    /// for the next command once empty (at once in the usual case; else a
    /// short-lived thread waits for the killed processes to be gone).
    pub fn release(self) {
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

    /// Keep an empty directory for a later command, or remove it.
    fn idle(self) {
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < KEEP {
            idle.push(self);
        } else {
            drop(idle);
            let dir = self.path();
            drop(self);
            let _ = std::fs::remove_dir(dir);
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
}
