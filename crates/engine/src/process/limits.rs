//! Resource limits of a command's whole tree and what it used (SPEC §15).
//!
//! Theory of operation: a limit is only ever enforced on the tree, never on
//! one process, so every mechanism is a cgroup. The command's own cgroup v2
//! directory ([`super::cgroup`]) always gives its CPU time (`cpu.stat`
//! `usage_usec`, kept by the kernel in every v2 cgroup, controller or not)
//! and the kill (`cgroup.kill`). Memory and processes need the `memory` and
//! `pids` controllers: in the v2 directory when this host can enable them
//! there, else in directories of their cgroup v1 hierarchies made for the
//! command, which its child enters (`0` written to their `cgroup.procs`)
//! before its exec, as it does its v2 directory. Rlimits are never used:
//! `RLIMIT_AS`, `RLIMIT_CPU` and `RLIMIT_NPROC` bound one process or one
//! user, not a tree. What cannot be had refuses the start
//! (`NLC_LIMIT_UNAVAILABLE`); nothing runs half-limited.
//!
//! The supervisor looks at the counters on a timer ([`check`]) and once
//! more when the command ends: `memory` is over once the kernel's OOM
//! killer struck inside (the tree is then killed whole), `processes` once a
//! fork was refused at the limit (`pids.events` `max`), `cpu` once the
//! tree's CPU time reached the limit.

// On Windows no command has a cgroup, so the cgroup v1 half below is never
// reached there (every limited start is refused first).
#![cfg_attr(windows, allow(dead_code))]

use crate::platform::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[cfg(unix)]
use super::cgroup::Attached;
use super::cgroup::Cgroup;
// Windows has no cgroup, so no limit can be enforced for a tree there: every
// limited start is refused (`take`). What reads cgroup files is Unix's.
#[cfg(windows)]
#[path = "windows/limits.rs"]
mod windows;
#[cfg(windows)]
use windows::{read_at, sweep_stale_v1, v1_place, write_at};

/// A command's limits, validated (each absent one is unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// Bytes of memory the tree may use.
    pub memory_bytes: Option<u64>,
    /// Processes (and threads: the kernel counts tasks) the tree may hold at once.
    pub processes: Option<u64>,
    /// CPU time the tree may use, in ms.
    pub cpu_ms: Option<f64>,
}

/// `limits` as a caller gave it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LimitsInput {
    /// `memoryBytes`.
    pub memory_bytes: Option<f64>,
    /// `processes`.
    pub processes: Option<f64>,
    /// `cpuMs`.
    pub cpu_ms: Option<f64>,
}

/// Which limit stopped a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `memoryBytes`.
    Memory,
    /// `processes`.
    Processes,
    /// `cpuMs`.
    Cpu,
}

impl Kind {
    /// As the API spells it (`status.limit`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Memory => "memory",
            Kind::Processes => "processes",
            Kind::Cpu => "cpu",
        }
    }
}

/// What a settled command used, where measurable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// CPU time of the whole tree, in ms.
    pub cpu_ms: f64,
    /// The tree's peak memory, in bytes (only where a memory cgroup held it).
    pub peak_memory_bytes: Option<u64>,
}

/// [`Usage`] and the limit that stopped the command, as a settled record
/// keeps them for the life of the process: 8 bytes. CPU time in whole ms in
/// the low 30 bits (up to 12 days; all ones: not measured), the limit in
/// the top 2; the peak in 4 KiB pages, the unit the kernel counts it in
/// (up to 16 TiB; all ones: not measured).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packed {
    cpu_and_limit: u32,
    peak_pages: u32,
}

const CPU_NONE: u32 = (1 << 30) - 1;

impl Packed {
    /// Nothing measured, no limit.
    pub const NONE: Packed = Packed {
        cpu_and_limit: CPU_NONE,
        peak_pages: u32::MAX,
    };

    /// Pack `u` and `limit`.
    pub fn new(u: Option<Usage>, limit: Option<Kind>) -> Packed {
        let kind = match limit {
            None => 0,
            Some(Kind::Memory) => 1,
            Some(Kind::Processes) => 2,
            Some(Kind::Cpu) => 3,
        } << 30;
        match u {
            None => Packed {
                cpu_and_limit: CPU_NONE | kind,
                peak_pages: u32::MAX,
            },
            Some(u) => Packed {
                cpu_and_limit: (u.cpu_ms.max(0.0) as u64).min(CPU_NONE as u64 - 1) as u32 | kind,
                peak_pages: u.peak_memory_bytes.map_or(u32::MAX, |b| {
                    b.div_ceil(4096).min(u32::MAX as u64 - 1) as u32
                }),
            },
        }
    }

    /// The usage packed.
    pub fn usage(self) -> Option<Usage> {
        let cpu = self.cpu_and_limit & CPU_NONE;
        (cpu != CPU_NONE).then(|| Usage {
            cpu_ms: cpu as f64,
            peak_memory_bytes: (self.peak_pages != u32::MAX).then(|| self.peak_pages as u64 * 4096),
        })
    }

    /// The limit packed.
    pub fn limit(self) -> Option<Kind> {
        match self.cpu_and_limit >> 30 {
            1 => Some(Kind::Memory),
            2 => Some(Kind::Processes),
            3 => Some(Kind::Cpu),
            _ => None,
        }
    }
}

impl Limits {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        self.memory_bytes.is_none() && self.processes.is_none() && self.cpu_ms.is_none()
    }
}

/// Why a limit cannot be enforced here (the caller's refusal,
/// `NLC_LIMIT_UNAVAILABLE`, carries the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// A number of ms as a message spells it (as JS would: no `.0`).
fn ms_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Test-only: a comma-separated list of `memory`, `processes`, `cpu`: the
/// engine believes the mechanism of each is missing (read at every limited
/// start, so a test can set it in a running host).
pub const MISSING_VAR: &str = "NEUROLINK_COMMANDS_TEST_NO_LIMIT";

fn forced_missing(k: Kind) -> bool {
    std::env::var(MISSING_VAR).is_ok_and(|v| v.split(',').any(|n| n.trim() == k.as_str()))
}

/// Where one controller's counters of a command live.
#[derive(Debug)]
enum Place {
    /// In the command's own v2 directory.
    V2,
    /// In a v1 directory made for it: its path (removed with it), the
    /// directory and its `cgroup.procs`, open for the child to enter.
    V1 {
        path: PathBuf,
        dir: OwnedFd,
        procs: OwnedFd,
    },
}

/// The limits a command's cgroup enforces, and where.
#[derive(Debug)]
pub struct Enforced {
    limits: Limits,
    memory: Option<Place>,
    pids: Option<Place>,
}

#[cfg(unix)]
impl Drop for Enforced {
    fn drop(&mut self) {
        // The tree is gone (the cgroup was emptied first): its v1
        // directories go too. A process still exiting keeps one busy for a
        // moment.
        for p in [self.memory.take(), self.pids.take()].into_iter().flatten() {
            if let Place::V1 { path, dir, procs } = p {
                drop((dir, procs));
                for _ in 0..100 {
                    if std::fs::remove_dir(&path).is_ok() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
        }
    }
}

#[cfg(unix)]
impl Attached for Enforced {
    fn v1_procs(&self) -> [Option<BorrowedFd<'_>>; 2] {
        self.v1_procs_of()
    }
}

/// The limits `c` enforces, if a start attached them.
fn enforced(c: &Cgroup) -> Option<&Enforced> {
    let any: &dyn std::any::Any = c.limits()?;
    any.downcast_ref::<Enforced>()
}

impl Enforced {
    /// The `cgroup.procs` of its v1 directories, for the child to enter.
    fn v1_procs_of(&self) -> [Option<BorrowedFd<'_>>; 2] {
        fn of(p: &Option<Place>) -> Option<BorrowedFd<'_>> {
            match p {
                Some(Place::V1 { procs, .. }) => Some(procs.as_fd()),
                _ => None,
            }
        }
        [of(&self.memory), of(&self.pids)]
    }
}

/// The cgroup v1 hierarchy of `controller`: its mount point and the host's
/// own path in it, from mountinfo and `/proc/self/cgroup`.
fn v1_home(controller: &str, mountinfo: &str, self_cgroup: &str) -> Option<PathBuf> {
    let (mount, root) = mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut r = right.split_whitespace();
        if r.next()? != "cgroup" {
            return None;
        }
        let opts = r.nth(1)?;
        if !opts.split(',').any(|o| o == controller) {
            return None;
        }
        let f: Vec<&str> = left.split_whitespace().collect();
        let (root, point) = (*f.get(3)?, *f.get(4)?);
        (!point.contains('\\') && !root.contains('\\')).then_some((point, root))
    })?;
    let own = self_cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, list, path) = (parts.next()?, parts.next()?, parts.next()?);
        list.split(',').any(|c| c == controller).then_some(path)
    })?;
    if own.contains("..") {
        return None;
    }
    // Inside a cgroup namespace the path is relative to the mount's root.
    let rel = own
        .strip_prefix(root)
        .unwrap_or(own)
        .trim_start_matches('/');
    Some(Path::new(mount).join(rel))
}

/// This host's v1 subtree of `controller`, made on first use (`None`: no
/// such hierarchy, or this host may not make directories there).
fn v1_base(controller: &'static str) -> Option<&'static Path> {
    static MEMORY: OnceLock<Option<PathBuf>> = OnceLock::new();
    static PIDS: OnceLock<Option<PathBuf>> = OnceLock::new();
    let cell = if controller == "memory" {
        &MEMORY
    } else {
        &PIDS
    };
    cell.get_or_init(|| {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let home = v1_home(
            controller,
            &std::fs::read_to_string("/proc/self/mountinfo").ok()?,
            &std::fs::read_to_string("/proc/self/cgroup").ok()?,
        )?;
        sweep_stale_v1(&home);
        let base = home.join(format!("neurolink-commands-{}", std::process::id()));
        match std::fs::create_dir(&base) {
            Ok(()) => Some(base),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Some(base),
            Err(_) => None,
        }
    })
    .as_deref()
}

/// Remove the (empty) v1 subtrees of hosts that are gone.
#[cfg(unix)]
fn sweep_stale_v1(home: &Path) {
    let Ok(entries) = std::fs::read_dir(home) else {
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
        if gone {
            if let Ok(subs) = std::fs::read_dir(e.path()) {
                for s in subs
                    .flatten()
                    .filter(|s| s.file_type().is_ok_and(|t| t.is_dir()))
                {
                    let _ = std::fs::remove_dir(s.path());
                }
            }
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// Whether `controller` can be had in the commands' v2 directories: enabled
/// once in the host's subtree (and its parent, where the kernel allows).
fn v2_controller(controller: &'static str) -> bool {
    static MEMORY: OnceLock<bool> = OnceLock::new();
    static PIDS: OnceLock<bool> = OnceLock::new();
    let cell = if controller == "memory" {
        &MEMORY
    } else {
        &PIDS
    };
    *cell.get_or_init(|| {
        let Some(base) = super::cgroup::base_path() else {
            return false;
        };
        let enabled = |dir: &Path| {
            std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|s| s.split_whitespace().any(|c| c == controller))
        };
        if enabled(base) {
            return true;
        }
        let add = format!("+{controller}");
        if let Some(parent) = base.parent() {
            if !enabled(parent) {
                let _ = std::fs::write(parent.join("cgroup.subtree_control"), &add);
            }
        }
        let _ = std::fs::write(base.join("cgroup.subtree_control"), &add);
        enabled(base)
    })
}

static V1_NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A v1 directory for one command below this host's subtree of `controller`.
#[cfg(unix)]
fn v1_place(controller: &'static str) -> std::io::Result<Place> {
    let base = v1_base(controller).ok_or_else(|| std::io::Error::other("no v1 hierarchy"))?;
    let n = V1_NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = base.join(n.to_string());
    std::fs::create_dir(&path)?;
    let open = || -> std::io::Result<(OwnedFd, OwnedFd)> {
        use rustix::fs::{Mode, OFlags};
        let dir = rustix::fs::open(
            &path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let dir = super::posix_spawn::above_stdio(dir)?;
        let procs = rustix::fs::openat(
            &dir,
            "cgroup.procs",
            OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok((dir, super::posix_spawn::above_stdio(procs)?))
    };
    match open() {
        Ok((dir, procs)) => Ok(Place::V1 { path, dir, procs }),
        Err(e) => {
            let _ = std::fs::remove_dir(&path);
            Err(e)
        }
    }
}

#[cfg(unix)]
fn write_at(dir: BorrowedFd<'_>, name: &str, value: &str) -> std::io::Result<()> {
    let f = rustix::fs::openat(
        dir,
        name,
        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    rustix::io::write(&f, value.as_bytes())?;
    Ok(())
}

#[cfg(unix)]
fn read_at(dir: BorrowedFd<'_>, name: &str) -> Option<String> {
    let f = rustix::fs::openat(
        dir,
        name,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()?;
    let mut buf = vec![0u8; 4096];
    let n = rustix::io::read(&f, &mut buf).ok()?;
    buf.truncate(n);
    String::from_utf8(buf).ok()
}

/// The number after `key ` in a flat-keyed cgroup file.
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

fn unavailable(k: Kind, why: &str) -> Unavailable {
    let name = match k {
        Kind::Memory => "memoryBytes",
        Kind::Processes => "processes",
        Kind::Cpu => "cpuMs",
    };
    Unavailable(format!(
        "limits.{name} cannot be enforced for the whole tree here: {why}"
    ))
}

/// Where the memory or pids controller of a command can be had, set to
/// `value`: its v2 directory, else a v1 directory of its own.
fn place_for(c: &Cgroup, k: Kind, value: u64) -> Result<Place, Unavailable> {
    let (controller, v2_file, v1_file) = match k {
        Kind::Memory => ("memory", "memory.max", "memory.limit_in_bytes"),
        _ => ("pids", "pids.max", "pids.max"),
    };
    if forced_missing(k) {
        return Err(unavailable(
            k,
            &format!("the {controller} controller is reported missing ({MISSING_VAR})"),
        ));
    }
    let v = value.to_string();
    if v2_controller(controller) && write_at(c.dir(), v2_file, &v).is_ok() {
        if k == Kind::Memory {
            // The whole tree dies when one of its processes is OOM-killed,
            // and nothing goes to swap past the limit.
            let _ = write_at(c.dir(), "memory.oom.group", "1");
            let _ = write_at(c.dir(), "memory.swap.max", "0");
        }
        return Ok(Place::V2);
    }
    let place = v1_place(controller).map_err(|e| {
        unavailable(
            k,
            &format!("the {controller} controller is neither enabled in this host's cgroup v2 subtree nor available as a cgroup v1 hierarchy this user may write ({e}); run the host as root or in a delegated cgroup v2 subtree with the {controller} controller"),
        )
    })?;
    if let Place::V1 { dir, .. } = &place {
        write_at(dir.as_fd(), v1_file, &v)
            .map_err(|e| unavailable(k, &format!("writing {v1_file} failed ({e})")))?;
        if k == Kind::Memory {
            // Without swap accounting set too, the tree could swap past it.
            let _ = write_at(dir.as_fd(), "memory.memsw.limit_in_bytes", &v);
            let _ = write_at(dir.as_fd(), "memory.swappiness", "0");
        }
    }
    Ok(place)
}

/// Why no command can get a cgroup here.
#[cfg(unix)]
const NO_CGROUP: &str = "this host may not create a cgroup v2 subtree (it needs root, or a delegated subtree, on Linux 5.14 or later); leave limits out to run without them";
#[cfg(windows)]
use windows::NO_CGROUP;

/// The cgroup of a start under `limits`, every limit in place — or the
/// refusal (`NLC_LIMIT_UNAVAILABLE`) naming what is missing. `Ok(None)`
/// when no limit is set.
pub fn take(limits: &Limits) -> Result<Option<Cgroup>, Unavailable> {
    if limits.is_empty() {
        return Ok(None);
    }
    let first = [
        (limits.memory_bytes.is_some(), Kind::Memory),
        (limits.processes.is_some(), Kind::Processes),
        (limits.cpu_ms.is_some(), Kind::Cpu),
    ]
    .into_iter()
    .find_map(|(set, k)| set.then_some(k))
    .unwrap_or(Kind::Cpu);
    if limits.cpu_ms.is_some() && forced_missing(Kind::Cpu) {
        return Err(unavailable(
            Kind::Cpu,
            &format!("the tree's CPU time is reported unmeasurable ({MISSING_VAR})"),
        ));
    }
    let Some(mut c) = Cgroup::take() else {
        return Err(unavailable(first, NO_CGROUP));
    };
    let mut e = Enforced {
        limits: *limits,
        memory: None,
        pids: None,
    };
    let placed = place_all(&c, limits, &mut e);
    // Attached even on failure, so that its v1 directories are removed and
    // the v2 one is never reused with a limit half-written.
    c.attach_limits(Box::new(e));
    if let Err(err) = placed {
        c.release();
        return Err(err);
    }
    Ok(Some(c))
}

fn place_all(c: &Cgroup, limits: &Limits, e: &mut Enforced) -> Result<(), Unavailable> {
    if let Some(v) = limits.memory_bytes {
        e.memory = Some(place_for(c, Kind::Memory, v)?);
    }
    if let Some(v) = limits.processes {
        e.pids = Some(place_for(c, Kind::Processes, v)?);
    }
    Ok(())
}

/// Whether the supervisor must watch `c`'s counters.
pub fn watched(c: &Cgroup) -> bool {
    enforced(c).is_some_and(|e| !e.limits.is_empty())
}

/// The tree's CPU time in µs (v2 `cpu.stat`).
fn cpu_usec(c: &Cgroup) -> Option<u64> {
    keyed(&read_at(c.dir(), "cpu.stat")?, "usage_usec")
}

fn counters_dir<'a>(c: &'a Cgroup, p: &'a Place) -> BorrowedFd<'a> {
    match p {
        Place::V2 => c.dir(),
        Place::V1 { dir, .. } => dir.as_fd(),
    }
}

/// The limit `c`'s tree went over, if any.
pub fn check(c: &Cgroup) -> Option<Kind> {
    let e = enforced(c)?;
    if let Some(p) = &e.memory {
        let (file, key) = match p {
            Place::V2 => ("memory.events", "oom_kill"),
            Place::V1 { .. } => ("memory.oom_control", "oom_kill"),
        };
        if read_at(counters_dir(c, p), file)
            .and_then(|t| keyed(&t, key))
            .unwrap_or(0)
            > 0
        {
            return Some(Kind::Memory);
        }
    }
    if let Some(p) = &e.pids {
        if read_at(counters_dir(c, p), "pids.events")
            .and_then(|t| keyed(&t, "max"))
            .unwrap_or(0)
            > 0
        {
            return Some(Kind::Processes);
        }
    }
    if let Some(ms) = e.limits.cpu_ms {
        if cpu_usec(c).is_some_and(|u| u as f64 >= ms * 1000.0) {
            return Some(Kind::Cpu);
        }
    }
    None
}

/// What `c`'s tree used.
pub fn usage(c: &Cgroup) -> Option<Usage> {
    let cpu = cpu_usec(c)?;
    let peak = enforced(c).and_then(|e| {
        let p = e.memory.as_ref()?;
        let file = match p {
            Place::V2 => "memory.peak",
            Place::V1 { .. } => "memory.max_usage_in_bytes",
        };
        read_at(counters_dir(c, p), file)?
            .trim()
            .parse::<u64>()
            .ok()
    });
    Some(Usage {
        cpu_ms: (cpu as f64 / 1000.0).round(),
        peak_memory_bytes: peak,
    })
}

/// The limit `k` of `c`, as a status's error names it.
pub fn describe(k: Kind, limits: &Limits) -> String {
    match k {
        Kind::Memory => format!(
            "its tree went over its memory limit (limits.memoryBytes {})",
            limits.memory_bytes.unwrap_or(0)
        ),
        Kind::Processes => format!(
            "its tree tried to go over its process limit (limits.processes {})",
            limits.processes.unwrap_or(0)
        ),
        Kind::Cpu => format!(
            "its tree used its CPU time limit (limits.cpuMs {})",
            ms_text(limits.cpu_ms.unwrap_or(0.0))
        ),
    }
}

/// The limits `c` enforces.
pub fn of(c: &Cgroup) -> Option<Limits> {
    enforced(c).map(|e| e.limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_packs_into_eight_bytes_and_back() {
        assert_eq!(std::mem::size_of::<Packed>(), 8);
        assert_eq!(Packed::new(None, None).usage(), None);
        assert_eq!(Packed::new(None, Some(Kind::Cpu)).limit(), Some(Kind::Cpu));
        let u = Usage {
            cpu_ms: 312.0,
            peak_memory_bytes: Some(70 << 20),
        };
        for k in [
            None,
            Some(Kind::Memory),
            Some(Kind::Processes),
            Some(Kind::Cpu),
        ] {
            assert_eq!(Packed::new(Some(u), k).usage(), Some(u));
            assert_eq!(Packed::new(Some(u), k).limit(), k);
        }
        let no_peak = Usage {
            cpu_ms: 0.0,
            peak_memory_bytes: None,
        };
        assert_eq!(Packed::new(Some(no_peak), None).usage(), Some(no_peak));
    }

    #[test]
    fn finds_the_v1_hierarchy_of_a_controller() {
        let info = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                    36 31 0:33 /ns /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
                    41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let own = "8:pids:/ns/a\n4:memory:/x/y\n0::/\n";
        assert_eq!(
            v1_home("memory", info, own),
            Some(PathBuf::from("/sys/fs/cgroup/memory/x/y"))
        );
        assert_eq!(
            v1_home("pids", info, own),
            Some(PathBuf::from("/sys/fs/cgroup/pids/a"))
        );
        assert_eq!(v1_home("cpu", info, own), None);
        assert_eq!(keyed("oom 0\noom_kill 3\n", "oom_kill"), Some(3));
        assert_eq!(keyed("max 0\n", "oom_kill"), None);
    }
}
