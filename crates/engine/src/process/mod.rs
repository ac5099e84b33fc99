//! One operating-system process and its group: how it is started (every
//! start passes [`transform`], which picks the spawn — [`spawn`], the
//! standard one, or inside a namespace view), how its group is signalled
//! ([`signals`]) and how it is stopped when the host itself dies
//! ([`watchdog`]). Nothing here knows about jobs, logs or hosts.

#[cfg(unix)]
pub mod cgroup;
// Windows (SPEC §14): each command in a Job Object of its own, started by
// the Win32 process layer; cgroups, /proc input waits and the watchdog have
// Windows counterparts of their own under windows/.
#[cfg(windows)]
#[path = "windows/cgroup.rs"]
pub mod cgroup;
#[cfg(target_os = "linux")]
pub mod clone3;
pub mod confine;
#[cfg(unix)]
pub mod input_wait;
#[cfg(windows)]
#[path = "windows/input_wait.rs"]
pub mod input_wait;
pub mod launch;
pub mod limits;
#[cfg(target_os = "linux")]
pub mod mediate;
pub mod plan;
#[cfg(unix)]
pub mod posix_spawn;
pub mod probe;
#[cfg(target_os = "linux")]
pub mod sandbox;
#[cfg(target_os = "linux")]
pub mod seccomp;
pub mod signals;
#[cfg(unix)]
pub mod spawn;
#[cfg(windows)]
#[path = "windows/spawn.rs"]
pub mod spawn;
// The switch itself is every platform's (the napi layer's objects follow
// it); its standard spawn is Linux's only.
pub mod std_spawn;
#[cfg(unix)]
pub mod tmp_dir;
#[cfg(windows)]
#[path = "windows/tmp_dir.rs"]
pub mod tmp_dir;
pub mod transform;
#[cfg(windows)]
#[path = "windows/trees.rs"]
pub mod trees;
#[cfg(target_os = "linux")]
pub mod vfork;
#[cfg(unix)]
pub mod watchdog;
#[cfg(windows)]
#[path = "windows/watchdog.rs"]
pub mod watchdog;

/// How much of a command's process tree the runner can reach (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Containment {
    /// Every descendant, whatever group or session it moves to: the
    /// command runs in a cgroup of its own or a PID namespace of its own.
    Tree,
    /// The command's process group only: a descendant that leaves it
    /// (`setsid`, `setpgid`) is not reached.
    Group,
}

impl Containment {
    /// As the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Containment::Tree => "tree",
            Containment::Group => "group",
        }
    }
}

/// The one place the engine decides a command's containment: `"tree"` when
/// its descendants are all covered — it runs in a PID namespace of its own
/// (every descendant dies with its leader) or in a cgroup of its own
/// (stopped through `cgroup.kill`) — else `"group"`. On Windows every
/// command runs in a Job Object of its own: always `"tree"`.
pub fn containment(pid_namespace: bool, cgroup: bool) -> Containment {
    if pid_namespace || cgroup || cfg!(windows) {
        Containment::Tree
    } else {
        Containment::Group
    }
}

/// `start`, again while it fails with ETXTBSY: a script a test has just
/// written can be "busy" for a moment, because a child another test thread
/// created while the script was open for writing holds a copy of that
/// descriptor until its own exec — for long under qemu-user, where the
/// clone is a fork. Any other outcome is returned as it is.
#[cfg(test)]
pub(crate) fn unless_busy<T>(mut start: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    for _ in 0..200 {
        match start() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(25))
            }
            r => return r,
        }
    }
    start()
}
