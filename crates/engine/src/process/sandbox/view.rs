//! The parent's half of the namespace sandbox: [`View::prepare`] turns a
//! `"full"` plan into the list of steps the child takes ([`Op`]), every
//! path already a `CString`, so that the child — which shares the host's
//! memory until its exec and must not allocate — only makes system calls
//! ([`super::enter`]).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::raw::c_int;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::process::confine::{Grant, Plan};

/// Where the new root is assembled (a tmpfs or the clone of `/` is
/// attached here in the child's own mount namespace; every source is
/// cloned before, so covering the host's `/tmp` hides nothing the view
/// needs).
const STAGE: &str = "/tmp";

/// The kernel's mount attributes (`MOUNT_ATTR_*`) a view gives its trees.
pub(super) const MOUNT_ATTR_RDONLY: u64 = 1;
const MOUNT_ATTR_NOSUID: u64 = 2;
const MOUNT_ATTR_NODEV: u64 = 4;
const MOUNT_ATTR_NOEXEC: u64 = 8;

/// One step of the child's setup.
#[derive(Debug)]
pub(super) enum Op {
    /// Clone the tree at `src` into slot `slot` (recursively unless it is a
    /// file) with these mount attributes.
    Clone {
        src: CString,
        slot: usize,
        recursive: bool,
        attr: u64,
    },
    /// A directory (and its parents, already made by earlier steps).
    Mkdir(CString),
    /// An empty file to mount a file on.
    File(CString),
    /// A symbolic link `at` → `to`.
    Symlink { to: CString, at: CString },
    /// Attach the clone in `slot` at `at`.
    Attach { slot: usize, at: CString },
    /// A fresh filesystem (`tmpfs`, `proc`, `devpts`) at `at`.
    Mount {
        fstype: CString,
        at: CString,
        flags: libc::c_ulong,
        data: CString,
    },
    /// Make the mount at `at` read-only (not recursively).
    ReadOnly(CString),
    /// Make the path `at` of the view a mount point of itself: cloned from
    /// the view (recursively for a directory) without following a final
    /// link, given `attr` (none: as it is), attached over itself. Its file
    /// type must be `kind` (`S_IFDIR`, `S_IFREG`, `S_IFLNK`): a path
    /// replaced by another kind since the parent looked fails the start.
    Pin { at: CString, attr: u64, kind: u32 },
}

/// How many trees a view clones at most.
pub(super) const MAX_SLOTS: usize = 96;

/// What the child of a `"full"` confined start does, prepared by the parent.
#[derive(Debug)]
pub struct View {
    /// The namespace flags added to the clone.
    pub flags: c_int,
    pub(super) uid_map: CString,
    pub(super) gid_map: CString,
    pub(super) ops: Vec<Op>,
    /// Whether the root is the clone of `/` (slot 0) instead of a tmpfs.
    pub(super) clone_root: bool,
    /// The checked directory's path in the view and its identity.
    pub(super) cwd: CString,
    pub(super) cwd_dev: u64,
    pub(super) cwd_ino: u64,
    /// The highest capability this kernel knows.
    pub(super) last_cap: c_int,
    /// The filter whose listener mediates its connects (read `"all"`: see
    /// [`crate::process::mediate`]), installed by the child just before its exec.
    pub mediate: Option<Mediation>,
}

/// The program of [`crate::process::seccomp::mediation_program`], built in the
/// parent (the child of a `clone(CLONE_VM)` must not allocate).
pub struct Mediation(pub &'static [libc::sock_filter]);

impl std::fmt::Debug for Mediation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mediation({} instructions)", self.0.len())
    }
}

/// `path` under the stage, as a C string.
fn staged(path: &Path) -> io::Result<CString> {
    let mut b = STAGE.as_bytes().to_vec();
    if path != Path::new("/") {
        b.extend_from_slice(path.as_os_str().as_bytes());
    }
    cstr(b)
}

fn cstr(b: impl Into<Vec<u8>>) -> io::Result<CString> {
    CString::new(b).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL"))
}

/// The read set a plan was built for, from its fixed system paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    All,
    System,
    Trees,
}

/// Whether a start of `plan` has its connects mediated ([`crate::process::mediate`]):
/// a `"full"` start whose view is read set `"all"`.
pub fn mediated(plan: &Plan) -> bool {
    plan.level == crate::process::confine::Level::Full && kind(plan) == Kind::All
}

fn kind(plan: &Plan) -> Kind {
    if plan.system.iter().any(|(p, _)| p == Path::new("/")) {
        Kind::All
    } else if plan.system.iter().any(|(p, _)| p == Path::new("/etc")) {
        Kind::System
    } else {
        Kind::Trees
    }
}

/// Builds the list of steps: directories made once, sources numbered.
struct Builder {
    ops: Vec<Op>,
    made: Vec<PathBuf>,
    slots: usize,
    /// Directories the base of the view already holds (read `"all"`: the
    /// whole clone of `/`; they exist, and `mkdir` would fail read-only).
    base_all: bool,
    /// Fresh filesystems mounted so far in an `"all"` view (below them
    /// directories must be made).
    fresh: Vec<PathBuf>,
}

impl Builder {
    /// Make `dir` and its parents in the view (those not made yet).
    fn dirs(&mut self, dir: &Path) -> io::Result<()> {
        let mut chain: Vec<&Path> = dir.ancestors().collect();
        chain.reverse();
        for d in chain {
            if d == Path::new("/") || self.made.iter().any(|m| m == d) {
                continue;
            }
            let in_base = self.base_all && !self.fresh.iter().any(|f| d.starts_with(f) && d != f);
            if !in_base {
                self.ops.push(Op::Mkdir(staged(d)?));
            }
            self.made.push(d.to_path_buf());
        }
        Ok(())
    }

    /// Clone `src` (a directory or a file) and attach it at the same path.
    fn bind(&mut self, src: &Path, attr: u64) -> io::Result<()> {
        if self.slots >= MAX_SLOTS {
            return Err(io::Error::other("too many trees for one confined view"));
        }
        let is_dir = std::fs::metadata(src)?.is_dir();
        let slot = self.slots;
        self.slots += 1;
        // Clones come first: the host's tree is still in view then.
        let at = self
            .ops
            .iter()
            .position(|o| !matches!(o, Op::Clone { .. }))
            .unwrap_or(self.ops.len());
        self.ops.insert(
            at,
            Op::Clone {
                src: cstr(src.as_os_str().as_bytes())?,
                slot,
                recursive: is_dir,
                attr,
            },
        );
        if is_dir {
            self.dirs(src)?;
        } else {
            if let Some(parent) = src.parent() {
                self.dirs(parent)?;
            }
            let in_base = self.base_all && !self.fresh.iter().any(|f| src.starts_with(f));
            if !in_base {
                self.ops.push(Op::File(staged(src)?));
            }
        }
        self.ops.push(Op::Attach {
            slot,
            at: staged(src)?,
        });
        Ok(())
    }

    /// A symbolic link in the view, as the host has it.
    fn link(&mut self, at: &Path, to: &Path) -> io::Result<()> {
        if let Some(parent) = at.parent() {
            self.dirs(parent)?;
        }
        self.ops.push(Op::Symlink {
            to: cstr(to.as_os_str().as_bytes())?,
            at: staged(at)?,
        });
        self.made.push(at.to_path_buf());
        Ok(())
    }

    fn mount(
        &mut self,
        fstype: &str,
        at: &Path,
        flags: libc::c_ulong,
        data: &str,
    ) -> io::Result<()> {
        self.dirs(at)?;
        self.ops.push(Op::Mount {
            fstype: cstr(fstype)?,
            at: staged(at)?,
            flags,
            data: cstr(data)?,
        });
        if self.base_all {
            self.fresh.push(at.to_path_buf());
        }
        Ok(())
    }
}

const RO: u64 = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
const RW: u64 = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
const FRESH: libc::c_ulong = libc::MS_NOSUID | libc::MS_NODEV;

impl View {
    /// The view of `plan` for a command entering `dir` (held since the cwd
    /// check).
    /// In a terminal start, `terminal` is its terminal's node (the one
    /// pseudo-terminal of the view's `/dev/pts`).
    pub fn prepare(plan: &Plan, dir: BorrowedFd<'_>, terminal: Option<&Path>) -> io::Result<View> {
        let k = kind(plan);
        let writes: Vec<&Path> = plan
            .rules
            .iter()
            .filter(|(_, g)| *g == Grant::Write)
            .map(|(p, _)| p.as_path())
            .chain(plan.private_tmp.as_deref())
            .collect();
        let under_write = |p: &Path| writes.iter().any(|w| p.starts_with(w));
        let mut b = Builder {
            ops: Vec::new(),
            made: Vec::new(),
            slots: 0,
            base_all: k == Kind::All,
            fresh: Vec::new(),
        };
        if k == Kind::All {
            // Slot 0: the whole tree, read-only, attached as the base.
            b.ops.push(Op::Clone {
                src: cstr("/")?,
                slot: 0,
                recursive: true,
                attr: RO,
            });
            b.slots = 1;
            // What holds the host's daemons' sockets, hidden.
            for d in ["/run", "/var/run", "/tmp"] {
                let real = std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir());
                if real {
                    b.mount("tmpfs", Path::new(d), FRESH, "mode=0755")?;
                }
            }
        } else {
            b.mount("tmpfs", Path::new("/tmp"), FRESH, "mode=1777")?;
        }
        // Read trees (the system's, the plan's), read-only; a tree inside
        // another read tree or inside a write tree is seen through it.
        let mut reads: Vec<PathBuf> = Vec::new();
        if k != Kind::All {
            for (p, g) in plan.system.iter() {
                if *g == Grant::Read && p != Path::new("/proc") && p != Path::new("/sys") {
                    reads.push(p.clone());
                }
            }
        }
        for (p, g) in &plan.rules {
            if *g == Grant::Read && k != Kind::All {
                reads.push(p.clone());
            }
        }
        reads.sort();
        reads.dedup();
        let mut taken: Vec<PathBuf> = Vec::new();
        for p in reads {
            if under_write(&p) || taken.iter().any(|t| p.starts_with(t)) {
                continue;
            }
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.file_type().is_symlink() && p.parent() == Some(Path::new("/")) {
                // /bin → usr/bin and the like: the same link.
                if let Ok(to) = std::fs::read_link(&p) {
                    b.link(&p, &to)?;
                }
                continue;
            }
            b.bind(&p, RO)?;
            taken.push(p);
        }
        if k == Kind::System {
            b.bind(Path::new("/sys"), RO | MOUNT_ATTR_NOEXEC)?;
        }
        // /dev: a few nodes, shared memory, a terminal instance of its own.
        b.mount("tmpfs", Path::new("/dev"), FRESH, "mode=0755")?;
        for n in crate::process::confine::DEVICE_NODES {
            if Path::new(n).exists() {
                b.bind(Path::new(n), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID)?;
            }
        }
        match terminal {
            // Its own terminal and no other (the host's others stay out).
            Some(slave) => {
                b.mount("tmpfs", Path::new("/dev/pts"), FRESH, "mode=0755")?;
                b.bind(slave, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)?;
            }
            None => {
                b.mount(
                    "devpts",
                    Path::new("/dev/pts"),
                    libc::MS_NOSUID | libc::MS_NOEXEC,
                    "newinstance,ptmxmode=0666,mode=0620",
                )?;
                b.link(Path::new("/dev/ptmx"), Path::new("pts/ptmx"))?;
            }
        }
        b.link(Path::new("/dev/fd"), Path::new("/proc/self/fd"))?;
        for (i, n) in ["stdin", "stdout", "stderr"].iter().enumerate() {
            b.link(
                &Path::new("/dev").join(n),
                &PathBuf::from(format!("/proc/self/fd/{i}")),
            )?;
        }
        if !writes.is_empty() {
            b.mount("tmpfs", Path::new("/dev/shm"), FRESH, "mode=1777")?;
        }
        // Write trees, outermost first.
        let mut ws: Vec<&Path> = writes.clone();
        ws.sort();
        ws.dedup();
        for w in &ws {
            if ws.iter().any(|o| o != w && w.starts_with(o)) {
                continue;
            }
            b.bind(w, RW)?;
        }
        // Protected paths, each after the directories holding it: pinned
        // (a mount point of itself, which cannot be renamed or removed), or
        // read-only. Cloned from the view, one at a time: no slot each.
        for p in &plan.protect {
            if !under_write(&p.path) {
                continue;
            }
            b.ops.push(Op::Pin {
                at: staged(&p.path)?,
                attr: if p.pin { 0 } else { RO },
                kind: p.kind,
            });
        }
        b.mount(
            "proc",
            Path::new("/proc"),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
            "",
        )?;
        // The fresh filesystems hold only mount points once built: nothing
        // but the write trees, /dev/shm and /dev/pts stays writable.
        b.ops.push(Op::ReadOnly(staged(Path::new("/dev"))?));
        for d in ["/tmp", "/run", "/var/run"] {
            // (A write tree bound over it — tmp: "shared" — stays writable:
            // the change would reach the topmost mount there.)
            let written = ws.iter().any(|w| *w == Path::new(d));
            let fresh =
                b.fresh.iter().any(|f| f == Path::new(d)) || (d == "/tmp" && k != Kind::All);
            if fresh && !written {
                b.ops.push(Op::ReadOnly(staged(Path::new(d))?));
            }
        }
        if k != Kind::All {
            b.ops.push(Op::ReadOnly(staged(Path::new("/"))?));
        }
        // The checked directory: its path now and its identity.
        let fd = dir.as_raw_fd();
        let cwd = std::fs::read_link(format!("/proc/self/fd/{fd}"))?;
        let st = rustix::fs::fstat(dir)?;
        // SAFETY: geteuid/getegid cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        // No network namespace: making one costs a start about 4 ms (the
        // kernel sets up a whole network stack and tears it down later),
        // and what it would hide is hidden already — the seccomp filter
        // refuses every socket family but AF_UNIX without network, and
        // Landlock's abstract-socket scope refuses connecting to any
        // abstract socket made outside the command, with network or without.
        let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
        Ok(View {
            flags,
            uid_map: cstr(format!("{uid} {uid} 1\n"))?,
            gid_map: cstr(format!("{gid} {gid} 1\n"))?,
            ops: b.ops,
            clone_root: k == Kind::All,
            cwd: cstr(cwd.as_os_str().as_bytes())?,
            cwd_dev: st.st_dev,
            cwd_ino: st.st_ino,
            last_cap: last_cap(),
            // Read "all" shows pathname sockets outside the write trees; a
            // read list or "system" shows only the trees it names.
            mediate: (k == Kind::All)
                .then(|| Mediation(crate::process::seccomp::mediation_program(!plan.network))),
        })
    }
}

/// `/proc/sys/kernel/cap_last_cap`, read once (63 when unreadable: every
/// possible one is then dropped).
fn last_cap() -> c_int {
    use std::sync::OnceLock;
    static L: OnceLock<c_int> = OnceLock::new();
    *L.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(63)
    })
}
