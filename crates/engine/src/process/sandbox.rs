//! Linux: the namespace sandbox of a confined start at the `"full"` level
//! (SPEC §8).
//!
//! The engine's own spawn ([`super::vfork`]) creates the child with
//! `clone(CLONE_VM | CLONE_VFORK | CLONE_NEWUSER | CLONE_NEWNS |
//! CLONE_NEWPID)` — a new child of a multi-threaded process may be born
//! in new namespaces, only `unshare` of the caller may not — and the child,
//! before its exec, builds the command's filesystem view from what
//! [`View::prepare`] resolved in the parent (every path a `CString` made
//! before the clone; the child only makes system calls):
//!
//! 1. its own uid and gid mapped to themselves (`setgroups` denied first),
//!    and no further user namespace allowed inside (the namespace's
//!    `user.max_user_namespaces` set to 0);
//! 2. every source tree cloned (`open_tree`) while the host's tree is still
//!    in view — read trees read-only, write trees writable, all `nosuid` and
//!    `nodev`;
//! 3. a fresh tmpfs (read set `"system"` or a list) or the read-only clone
//!    of `/` (read `"all"`) attached as the new root, the clones attached in
//!    it at their own paths, a new `/dev` of a few device nodes, a private
//!    `/dev/shm` and `/dev/pts`, a private `/tmp`, a fresh read-only `/proc`
//!    of the new PID namespace, and the protected paths inside write trees
//!    cloned from the view and bound over themselves, read-only or pinned
//!    (a mount point can be neither renamed nor removed);
//! 4. the view made private (no mount the host makes later propagates into
//!    it), moved over `/` and made the root (`MS_MOVE`, `chroot`): the
//!    host's tree stays mounted beneath it, out of reach (see [`enter`]) —
//!    unmounting it cost every start an RCU grace period; the checked
//!    directory entered by its path in the view and compared (device and
//!    inode) with the descriptor held since the cwd check;
//! 5. every capability dropped, the bounding set emptied.
//!
//! The command is PID 1 of its PID namespace: when it ends, the kernel kills
//! everything left in it. The engine holds the view's mount namespace until
//! then ([`hold_namespace`]), so that its teardown (another RCU grace
//! period) is not part of the command's exit. No pathname socket outside the write trees is in
//! the view, and a new network namespace (network off) hides the host's
//! abstract sockets.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::raw::c_int;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::confine::{Grant, Plan};

/// Where the new root is assembled (a tmpfs or the clone of `/` is
/// attached here in the child's own mount namespace; every source is
/// cloned before, so covering the host's `/tmp` hides nothing the view
/// needs).
const STAGE: &str = "/tmp";

const OPEN_TREE_CLONE: u32 = 1;
const AT_RECURSIVE: u32 = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 4;
const MOUNT_ATTR_RDONLY: u64 = 1;
const MOUNT_ATTR_NOSUID: u64 = 2;
const MOUNT_ATTR_NODEV: u64 = 4;
const MOUNT_ATTR_NOEXEC: u64 = 8;

/// The kernel's `struct mount_attr`.
#[repr(C)]
struct MountAttr {
    set: u64,
    clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// One step of the child's setup.
#[derive(Debug)]
enum Op {
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
const MAX_SLOTS: usize = 96;

/// What the child of a `"full"` confined start does, prepared by the parent.
#[derive(Debug)]
pub struct View {
    /// The namespace flags added to the clone.
    pub flags: c_int,
    uid_map: CString,
    gid_map: CString,
    ops: Vec<Op>,
    /// Whether the root is the clone of `/` (slot 0) instead of a tmpfs.
    clone_root: bool,
    /// The checked directory's path in the view and its identity.
    cwd: CString,
    cwd_dev: u64,
    cwd_ino: u64,
    /// The highest capability this kernel knows.
    last_cap: c_int,
    /// The filter whose listener mediates its connects (read `"all"`: see
    /// [`super::mediate`]), installed by the child just before its exec.
    pub mediate: Option<Mediation>,
}

/// The program of [`super::seccomp::mediation_program`], built in the
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

/// Whether a start of `plan` has its connects mediated ([`super::mediate`]):
/// a `"full"` start whose view is read set `"all"`.
pub fn mediated(plan: &Plan) -> bool {
    plan.level == super::confine::Level::Full && kind(plan) == Kind::All
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
        for n in super::confine::DEVICE_NODES {
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
                .then(|| Mediation(super::seccomp::mediation_program(!plan.network))),
        })
    }
}

/// The mount namespaces of sandboxed commands, each held from its start
/// until its command has exited, and then let go on a thread of its own.
///
/// Why: the last reference to a mount namespace tears it down, and that
/// waits for an RCU grace period (about a millisecond on a small virtual
/// machine, several under load). Dropped by the command's own exit, the
/// wait would come before its parent is told of the exit, so every
/// confined command would settle that much later. Held here, the exit
/// drops a reference only, and the teardown runs on this thread.
struct Held {
    /// Which one (the keeper's poll refers to it by this).
    id: u64,
    /// Readable once the command has exited.
    exited: std::os::fd::OwnedFd,
    /// Its `/proc/<pid>/ns/mnt`, open.
    namespace: std::os::fd::OwnedFd,
}

/// The held namespaces and the event that wakes their keeper.
struct Keeper {
    held: std::sync::Mutex<(u64, Vec<Held>)>,
    wake: std::os::fd::OwnedFd,
}

fn keeper() -> Option<&'static Keeper> {
    use std::os::fd::FromRawFd;
    use std::sync::OnceLock;
    static K: OnceLock<Option<Keeper>> = OnceLock::new();
    K.get_or_init(|| {
        // SAFETY: eventfd with integer flags; a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return None;
        }
        // SAFETY: just made, owned by nobody else.
        let wake = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        std::thread::Builder::new()
            .name("nlc-namespaces".into())
            .stack_size(64 * 1024)
            .spawn(keep)
            .ok()?;
        Some(Keeper {
            held: std::sync::Mutex::new((0, Vec::new())),
            wake,
        })
    })
    .as_ref()
}

/// Hold `namespace`, the mount namespace of the sandboxed command `pid`
/// (just started, not yet reaped), until the command has exited. Best
/// effort: without a pidfd the namespace is let go at once, and its
/// teardown falls back to the command's exit.
pub fn hold_namespace(pid: i32, namespace: std::os::fd::OwnedFd) {
    let Some(k) = keeper() else {
        return;
    };
    let Some(p) = rustix::process::Pid::from_raw(pid) else {
        return;
    };
    let Ok(exited) = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()) else {
        return;
    };
    {
        let mut held = k.held.lock().unwrap_or_else(|e| e.into_inner());
        held.0 += 1;
        let id = held.0;
        held.1.push(Held {
            id,
            exited,
            namespace,
        });
    }
    let _ = rustix::io::write(&k.wake, &1u64.to_ne_bytes());
}

/// The control buffer of a message carrying one descriptor, aligned as
/// its header must be: shared by the sending child and the receiving parent.
#[repr(C)]
union Control {
    buf: [u8; 64],
    _align: libc::cmsghdr,
}

/// Send the calling process's own mount namespace (`/proc/self/ns/mnt`,
/// opened now) over the unix socket `to`: in a sandboxed child, before its
/// exec, so that the parent holds the namespace even if the command ends
/// before the parent runs again. Best effort.
///
/// # Safety
/// In the child, as [`enter`]: only system calls, on its own stack.
pub unsafe fn send_own_namespace(to: c_int) {
    // SAFETY: a plain system call on a static C string.
    let fd = unsafe {
        libc::open(
            c"/proc/self/ns/mnt".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return;
    }
    // SAFETY: in the child, as our own contract says; `fd` is open.
    unsafe { send_fd(to, fd, SENT_NAMESPACE) };
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
}

/// What a message of the child carries: its mount namespace, or the
/// listener of its mediation filter.
const SENT_NAMESPACE: u8 = 0;
const SENT_LISTENER: u8 = 1;

/// Send `listener` (see [`super::mediate`]) over the unix socket `to`.
/// Whether it was sent.
///
/// # Safety
/// In the child, as [`enter`].
pub unsafe fn send_listener(to: c_int, listener: c_int) -> bool {
    // SAFETY: in the child, as our own contract says.
    unsafe { send_fd(to, listener, SENT_LISTENER) }
}

/// Send descriptor `fd` with the one byte `tag` over the unix socket `to`.
///
/// # Safety
/// In the child, as [`enter`].
unsafe fn send_fd(to: c_int, fd: c_int, tag: u8) -> bool {
    // One byte of data and one descriptor of control.
    let mut byte = tag;
    let mut iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    let mut control = Control { buf: [0; 64] };
    // SAFETY: arithmetic on a size, no memory is touched.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<c_int>() as u32) } as usize;
    // SAFETY: `msghdr` is plain C data, all-zero is a valid value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    // SAFETY: every bit pattern of the union is a valid byte array.
    msg.msg_control = unsafe { control.buf.as_mut_ptr() }.cast();
    msg.msg_controllen = space as _;
    // SAFETY: `msg` points at `control`, which is `space` bytes and aligned
    // for a `cmsghdr`.
    let c = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    if !c.is_null() {
        // SAFETY: `c` is the first header inside `control`, room for one
        // descriptor (`space`); `iov`, `byte` and `control` outlive the call.
        unsafe {
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<c_int>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<c_int>(), fd);
            return libc::sendmsg(to, &msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) == 1;
        }
    }
    false
}

/// What a child sent on the other end of `from`: its mount namespace
/// ([`send_own_namespace`]) and its listener ([`send_listener`]), each if
/// it sent it.
pub fn receive_sent(
    from: std::os::fd::BorrowedFd<'_>,
) -> (Option<std::os::fd::OwnedFd>, Option<std::os::fd::OwnedFd>) {
    let (mut ns, mut listener) = (None, None);
    for _ in 0..2 {
        match receive_one(from) {
            Some((SENT_NAMESPACE, fd)) => ns = Some(fd),
            Some((SENT_LISTENER, fd)) => listener = Some(fd),
            Some(_) => {}
            None => break,
        }
    }
    (ns, listener)
}

/// One message of the child: its tag and descriptor.
fn receive_one(from: std::os::fd::BorrowedFd<'_>) -> Option<(u8, std::os::fd::OwnedFd)> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    let mut control = Control { buf: [0; 64] };
    // SAFETY: msghdr is plain data; every pointer set below points at a
    // live local of the size given.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    // SAFETY: writing a pointer to the control buffer, a live local.
    msg.msg_control = unsafe { control.buf.as_mut_ptr() }.cast();
    msg.msg_controllen = 64;
    // SAFETY: recvmsg fills `msg`'s buffers, all live; MSG_CMSG_CLOEXEC
    // makes the received descriptor close-on-exec.
    let n = unsafe {
        libc::recvmsg(
            from.as_raw_fd(),
            &mut msg,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        )
    };
    if n < 1 {
        return None;
    }
    // SAFETY: the control buffer was filled by the kernel; the header and
    // its data are read within `msg_controllen`.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        if c.is_null() || (*c).cmsg_level != libc::SOL_SOCKET || (*c).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<c_int>());
        (fd >= 0).then(|| (byte, std::os::fd::OwnedFd::from_raw_fd(fd)))
    }
}

/// How many namespaces are held now.
pub fn held_namespaces() -> usize {
    keeper().map_or(0, |k| {
        k.held.lock().unwrap_or_else(|e| e.into_inner()).1.len()
    })
}

/// The keeper's loop: wait for a held command to exit (or for a new one to
/// be held), and let the namespaces of those that exited go.
fn keep() {
    use std::os::fd::AsRawFd;
    let k = loop {
        // The keeper is stored just after this thread starts.
        if let Some(k) = keeper() {
            break k;
        }
        std::thread::yield_now();
    };
    loop {
        // What to watch: the held ones' ids and pidfds (copies, so the list
        // is not locked while this thread waits).
        let watched: Vec<(u64, std::os::fd::OwnedFd)> = {
            let held = k.held.lock().unwrap_or_else(|e| e.into_inner());
            held.1
                .iter()
                .filter_map(|h| Some((h.id, h.exited.try_clone().ok()?)))
                .collect()
        };
        let mut fds: Vec<libc::pollfd> = std::iter::once(k.wake.as_raw_fd())
            .chain(watched.iter().map(|(_, f)| f.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a live array of that many pollfd, every
        // descriptor in it open for the call.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if rc < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return;
        }
        let mut buf = [0u8; 8];
        let _ = rustix::io::read(&k.wake, &mut buf);
        let done: Vec<u64> = fds[1..]
            .iter()
            .zip(&watched)
            .filter(|(f, _)| f.revents != 0)
            .map(|(_, (id, _))| *id)
            .collect();
        if done.is_empty() {
            continue;
        }
        // Taken out under the lock, dropped after it: each drop may wait.
        let gone: Vec<Held> = {
            let mut held = k.held.lock().unwrap_or_else(|e| e.into_inner());
            let (gone, kept) = std::mem::take(&mut held.1)
                .into_iter()
                .partition(|h| done.contains(&h.id));
            held.1 = kept;
            gone
        };
        for h in gone {
            drop(h.exited);
            drop(h.namespace);
        }
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

/// The calling thread's errno.
fn errno() -> c_int {
    // SAFETY: the C library's errno location for the calling thread.
    unsafe { *libc::__errno_location() }
}

/// Write `text` to the file at `path` (one open, one write).
///
/// # Safety
/// `path` and `text` are NUL-terminated.
unsafe fn put(path: &[u8], text: &[u8]) -> Result<(), c_int> {
    // SAFETY: `path` is NUL-terminated (contract).
    let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    let n = text.len() - 1;
    // SAFETY: `text` holds `n` bytes before its NUL; `fd` is open.
    let w = unsafe { libc::write(fd, text.as_ptr().cast(), n) };
    let e = errno();
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
    if w != n as isize {
        return Err(if w < 0 { e } else { libc::EIO });
    }
    Ok(())
}

/// Enter the view: run in the child, in its new namespaces, before its
/// exec. Returns the errno of the step that failed.
///
/// # Safety
/// Called only in the child of a clone with `view.flags`; `view` stays
/// valid (the parent waits). Only system calls, on the child's stack.
pub unsafe fn enter(view: &View) -> Result<(), c_int> {
    // SAFETY: every path and text here is NUL-terminated (literals, and
    // `CString`s' bytes with their NUL).
    unsafe {
        put(b"/proc/self/setgroups\0", b"deny\0")?;
        put(b"/proc/self/uid_map\0", view.uid_map.as_bytes_with_nul())?;
        put(b"/proc/self/gid_map\0", view.gid_map.as_bytes_with_nul())?;
    }
    // No user namespace inside this one (best effort: the mounts below are
    // locked in any nested one anyway).
    // SAFETY: both are NUL-terminated literals.
    let _ = unsafe { put(b"/proc/sys/user/max_user_namespaces\0", b"0\0") };
    // No propagation to undo: the kernel made every mount copied into this
    // namespace (owned by a less privileged user namespace) a slave, so
    // nothing mounted here reaches the host's namespace.
    let mut slots = [-1 as c_int; MAX_SLOTS];
    let mut staged_root = false;
    for op in &view.ops {
        let ok = match op {
            Op::Clone {
                src,
                slot,
                recursive,
                attr,
            } => {
                let mut flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as u32;
                if *recursive {
                    flags |= AT_RECURSIVE;
                }
                // SAFETY: `src` is a `CString`; the call only reads it.
                let fd = unsafe {
                    libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, src.as_ptr(), flags)
                } as c_int;
                if fd < 0 {
                    return Err(errno());
                }
                slots[*slot] = fd;
                let a = MountAttr {
                    set: *attr,
                    clr: 0,
                    propagation: 0,
                    userns_fd: 0,
                };
                let mut f = libc::AT_EMPTY_PATH as u32;
                if *recursive {
                    f |= AT_RECURSIVE;
                }
                // SAFETY: `a` lives on this frame and its size is passed.
                unsafe {
                    libc::syscall(
                        libc::SYS_mount_setattr,
                        fd,
                        c"".as_ptr(),
                        f,
                        &a as *const MountAttr,
                        std::mem::size_of::<MountAttr>(),
                    ) == 0
                }
            }
            Op::Mkdir(at) => {
                // The base of the view first (the first step past the clones).
                if !staged_root {
                    // SAFETY: in the child, as our own contract says.
                    unsafe { stage(view, &slots) }?;
                    staged_root = true;
                }
                // SAFETY: `at` is a `CString`.
                let made = unsafe { libc::mkdir(at.as_ptr(), 0o755) } == 0;
                made || errno() == libc::EEXIST
            }
            Op::File(at) => {
                // SAFETY: `at` is a `CString`.
                let fd = unsafe {
                    libc::open(
                        at.as_ptr(),
                        libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o644,
                    )
                };
                // SAFETY: `fd` was just opened and is closed once.
                fd >= 0 && unsafe { libc::close(fd) } == 0
            }
            // SAFETY: both are `CString`s.
            Op::Symlink { to, at } => unsafe { libc::symlink(to.as_ptr(), at.as_ptr()) == 0 },
            Op::Attach { slot, at } => {
                // SAFETY: `at` is a `CString`; the slot's descriptor (or -1,
                // which the kernel refuses) is only read.
                unsafe {
                    libc::syscall(
                        libc::SYS_move_mount,
                        slots[*slot],
                        c"".as_ptr(),
                        libc::AT_FDCWD,
                        at.as_ptr(),
                        MOVE_MOUNT_F_EMPTY_PATH,
                    ) == 0
                }
            }
            Op::Mount {
                fstype,
                at,
                flags,
                data,
            } => {
                if !staged_root {
                    // SAFETY: in the child, as our own contract says.
                    unsafe { stage(view, &slots) }?;
                    staged_root = true;
                }
                // SAFETY: `fstype`, `at` and `data` are `CString`s.
                unsafe {
                    libc::mount(
                        fstype.as_ptr(),
                        at.as_ptr(),
                        fstype.as_ptr(),
                        *flags,
                        data.as_ptr().cast(),
                    ) == 0
                }
            }
            Op::ReadOnly(at) => {
                let a = MountAttr {
                    set: MOUNT_ATTR_RDONLY,
                    clr: 0,
                    propagation: 0,
                    userns_fd: 0,
                };
                // SAFETY: `at` is a `CString`; `a` lives on this frame and
                // its size is passed.
                unsafe {
                    libc::syscall(
                        libc::SYS_mount_setattr,
                        libc::AT_FDCWD,
                        at.as_ptr(),
                        0u32,
                        &a as *const MountAttr,
                        std::mem::size_of::<MountAttr>(),
                    ) == 0
                }
            }
            Op::Pin { at, attr, kind } => {
                // SAFETY: in the child, as our own contract says.
                unsafe { pin(at, *attr, *kind) }?;
                true
            }
        };
        if !ok {
            return Err(errno());
        }
    }
    // The view receives no mount from the host: its clones were slaves of
    // the host's shared mounts, so a filesystem the host mounted later (a
    // container's overlay, a USB drive) appeared in it, writable, with
    // whatever sockets it holds.
    let private = MountAttr {
        set: 0,
        clr: 0,
        propagation: libc::MS_PRIVATE,
        userns_fd: 0,
    };
    // SAFETY: `private` lives on this frame and its size is passed.
    if unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/tmp".as_ptr(),
            AT_RECURSIVE,
            &private as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    } != 0
    {
        return Err(errno());
    }
    // Into the new root: the view moved over `/` and made this process's
    // root. The host's tree stays mounted beneath it — unmounting it
    // (`pivot_root` and a lazy unmount) made every start wait for an RCU
    // grace period — but nothing can reach it: `..` at the root stays in
    // the view (the view is the topmost mount at `/`), no descriptor of the
    // child refers into it past the exec (all are close-on-exec but the
    // standard streams), and taking the view away (an unmount, `chroot`
    // elsewhere, `open_by_handle_at`, a user namespace of its own) needs a
    // capability the command never holds (dropped below, none to gain:
    // `no_new_privs`, no user namespace inside). Its mounts are not listed
    // in the command's `/proc/self/mountinfo` (not below its root).
    // SAFETY: system calls on C string literals, in this child's own
    // mount namespace (contract).
    if unsafe {
        libc::chdir(c"/tmp".as_ptr()) != 0
            || libc::mount(
                c".".as_ptr(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_MOVE,
                std::ptr::null(),
            ) != 0
            || libc::chroot(c".".as_ptr()) != 0
            || libc::chdir(c"/".as_ptr()) != 0
    } {
        return Err(errno());
    }
    // SAFETY: `view.cwd` is a `CString`.
    if unsafe { libc::chdir(view.cwd.as_ptr()) } != 0 {
        return Err(errno());
    }
    // SAFETY: `stat` is plain C data, all-zero is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a C string literal and a live `stat` to fill.
    if unsafe { libc::stat(c".".as_ptr(), &mut st) } != 0 {
        return Err(errno());
    }
    if st.st_dev != view.cwd_dev || st.st_ino != view.cwd_ino {
        // The directory was replaced since the cwd check.
        return Err(libc::ESTALE);
    }
    // SAFETY: in the child, as our own contract says.
    unsafe { drop_capabilities(view) }
}

/// [`Op::Pin`]: `at` cloned, checked, given `attr` and attached over itself.
///
/// # Safety
/// In the child, as [`enter`].
unsafe fn pin(at: &CString, attr: u64, kind: u32) -> Result<(), c_int> {
    let dir = kind == libc::S_IFDIR;
    let mut flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as u32 | libc::AT_SYMLINK_NOFOLLOW as u32;
    if dir {
        flags |= AT_RECURSIVE;
    }
    // SAFETY: `at` is a `CString`; the call only reads it.
    let fd =
        unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, at.as_ptr(), flags) } as c_int;
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `stat` is plain C data, all-zero is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and `st` live.
    let mut ok = unsafe { libc::fstat(fd, &mut st) } == 0;
    if ok && st.st_mode & libc::S_IFMT != kind {
        // SAFETY: `fd` was opened above and is closed once.
        unsafe { libc::close(fd) };
        return Err(libc::ESTALE);
    }
    if ok && attr != 0 {
        let a = MountAttr {
            set: attr,
            clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        let f = libc::AT_EMPTY_PATH as u32 | if dir { AT_RECURSIVE } else { 0 };
        // SAFETY: `a` lives on this frame and its size is passed.
        ok = unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                fd,
                c"".as_ptr(),
                f,
                &a as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            )
        } == 0;
    }
    // Onto the same path, its final link (if any) not followed.
    ok = ok
        // SAFETY: `fd` is open and `at` a `CString`.
        && unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                fd,
                c"".as_ptr(),
                libc::AT_FDCWD,
                at.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            )
        } == 0;
    let e = errno();
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
    if ok {
        Ok(())
    } else {
        Err(e)
    }
}

/// Attach the base of the view at the stage: the clone of `/` (slot 0) or
/// a fresh tmpfs.
///
/// # Safety
/// In the child, as [`enter`].
unsafe fn stage(view: &View, slots: &[c_int]) -> Result<(), c_int> {
    // SAFETY: system calls on C string literals and the slot's descriptor
    // (only read), in this child's own mount namespace (contract).
    let ok = unsafe {
        if view.clone_root {
            libc::syscall(
                libc::SYS_move_mount,
                slots[0],
                c"".as_ptr(),
                libc::AT_FDCWD,
                c"/tmp".as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            ) == 0
        } else {
            libc::mount(
                c"tmpfs".as_ptr(),
                c"/tmp".as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                c"mode=0755".as_ptr().cast(),
            ) == 0
        }
    };
    if ok {
        Ok(())
    } else {
        Err(errno())
    }
}

/// No capability left, none to gain at exec: the bounding and ambient sets
/// emptied, then the effective, permitted and inheritable ones.
///
/// # Safety
/// In the child, as [`enter`].
unsafe fn drop_capabilities(view: &View) -> Result<(), c_int> {
    for cap in 0..=view.last_cap {
        // SAFETY: `prctl` with integer arguments only.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0
            && errno() != libc::EINVAL
        {
            return Err(errno());
        }
    }
    // SAFETY: `prctl` with integer arguments only.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    #[repr(C)]
    struct Header {
        version: u32,
        pid: c_int,
    }
    #[repr(C)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let h = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let d = [
        Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
        Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
    ];
    // SAFETY: `h` and both entries of `d` (the layout version 3 wants) live
    // on this frame.
    if unsafe { libc::syscall(libc::SYS_capset, &h as *const Header, d.as_ptr()) } != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Whether this host lets the engine make the namespaces a `"full"`
/// confinement needs, measured once by starting a child that does all of
/// it but the exec; the reason when it does not.
pub fn available() -> Result<(), String> {
    use std::sync::OnceLock;
    static R: OnceLock<Result<(), String>> = OnceLock::new();
    R.get_or_init(probe).clone()
}

/// Test-only: `0` makes the engine believe user namespaces are refused.
pub const TEST_NAMESPACES_VAR: &str = "NEUROLINK_COMMANDS_TEST_NAMESPACES";

fn probe() -> Result<(), String> {
    if std::env::var(TEST_NAMESPACES_VAR).as_deref() == Ok("0") {
        return Err(format!(
            "user namespaces are switched off for this process ({TEST_NAMESPACES_VAR}=0)"
        ));
    }
    let dir = std::fs::File::open("/usr").map_err(|e| e.to_string())?;
    let plan = Plan {
        system: [
            "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
        ]
        .iter()
        .map(|t| (PathBuf::from(t), Grant::Read))
        .collect(),
        rules: Vec::new(),
        private_tmp: None,
        network: false,
        protect: Vec::new(),
        level: super::confine::Level::Full,
    };
    use std::os::fd::AsFd;
    let view = View::prepare(&plan, dir.as_fd(), None).map_err(|e| e.to_string())?;
    match super::vfork::probe(&view, dir.as_fd()) {
        Ok(()) => Ok(()),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOSPC) => "user namespaces are refused on this host (user.max_user_namespaces is 0 in the host's user namespace)".to_string(),
            Some(libc::EPERM) | Some(libc::EACCES) => format!(
                "user namespaces are refused on this host ({e}: kernel.unprivileged_userns_clone, an AppArmor restriction or a container's seccomp profile)"
            ),
            Some(libc::EINVAL) | Some(libc::ENOSYS) => format!(
                "this kernel (or an emulator such as qemu-user) does not create user, mount and PID namespaces for a new process ({e})"
            ),
            _ => format!("the namespace sandbox could not be set up on this host ({e})"),
        }),
    }
}
