//! Pathname unix sockets under read set `"all"` (SPEC §8): the command's
//! view shows the host's whole tree read-only, so a daemon's socket in it
//! (in a home directory, under `/var/lib`, …) would stay connectable —
//! Landlock does not mediate `connect` to a pathname socket on the kernels
//! this runs on, and a read-only mount does not stop one.
//!
//! So such a command's child installs a second seccomp filter just before
//! its exec ([`super::seccomp::mediation_program`]) whose listener it hands
//! to the engine; the command's `connect` and its `sendto` with a
//! destination stop there, and the confining thread that spawned it — which
//! carries exactly the command's Landlock domain — answers them until the
//! command has ended ([`supervise`]). It never lets such a call go on
//! (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): what the kernel would read again
//! after the check — the address, the descriptor number — the command can
//! change meanwhile from another thread. Instead it makes the call itself,
//! on the command's own socket (`pidfd_getfd`), with its own copy of the
//! address:
//!
//! - a pathname address is resolved in the command's view (`openat2` under
//!   its root, `RESOLVE_IN_ROOT`, from its current directory when relative;
//!   magic links refused), and the socket file found must lie on a writable
//!   mount of that view — a write tree (its read-only protected paths
//!   excluded), the private temp directory, the command's own `/dev/shm`.
//!   Anything else is refused with [`REFUSED_UNIX_ERRNO`] and counted; an
//!   allowed one is reached through `/proc/self/fd/<n>` of the very inode
//!   checked, so a rename or a symlink swapped in meanwhile changes nothing;
//! - every other address (abstract, unnamed, another family) is used as
//!   copied: the thread's Landlock domain is the command's, so its
//!   abstract-socket scope and TCP rules decide as they would for the
//!   command.
//!
//! Unheard: `sendmsg` and `sendmmsg` (their destination sits behind a
//! pointer a filter cannot follow, and hearing every one would slow every
//! send). A destination there only matters to an unconnected `AF_UNIX`
//! datagram socket — stream and seqpacket sockets must connect, which is
//! heard — so what stays open is a one-way datagram to a `SOCK_DGRAM`
//! socket in the view outside `/run`, `/var/run`, `/tmp` and `/dev` (all
//! replaced by the view). No daemon that runs commands for its clients
//! (tmux, screen, Docker, containerd, systemd, an editor's server) takes
//! them that way: they listen on stream sockets.

use std::cell::RefCell;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rustix::fs::{openat2, Mode, OFlags, ResolveFlags};

use super::plan::Refusals;

/// The errno of a refused connect or send to a pathname socket outside the
/// command's write trees: `EACCES`, "permission denied". Not
/// `ECONNREFUSED`: a client taking that for a dead server may remove the
/// socket and start a server of its own (tmux does).
pub const REFUSED_UNIX_ERRNO: i32 = libc::EACCES;

/// `offsetof(struct sockaddr_un, sun_path)`.
const SUN_PATH_AT: usize = 2;
/// `sizeof(struct sockaddr_un)`: the longest unix address.
const SOCKADDR_UN: usize = 110;
/// `sizeof(struct sockaddr_storage)`: the longest address `connect` takes.
const SOCKADDR_STORAGE: usize = 128;
/// The most one mediated `sendto` carries; a datagram longer than this
/// fails with `EMSGSIZE`, a stream send is cut short (as it may be).
const SEND_CAP: usize = 1 << 20;

thread_local! {
    /// The listener of the command this thread just spawned, if mediated.
    static LISTENER: RefCell<Option<OwnedFd>> = const { RefCell::new(None) };
}

/// Keep `listener`, received from the child just spawned, for the calling
/// (confining) thread to serve once the start is delivered.
pub fn keep_listener(listener: OwnedFd) {
    LISTENER.with(|l| *l.borrow_mut() = Some(listener));
}

/// The listener [`keep_listener`] kept on this thread, if any.
pub fn take_listener() -> Option<OwnedFd> {
    LISTENER.with(|l| l.borrow_mut().take())
}

/// Which call stopped.
#[derive(Clone, Copy)]
enum Kind {
    Connect,
    SendTo { flags: i32 },
}

/// Answer the calls the command's filter hands to `listener` until no
/// process of the command is left, counting each refusal in `refused`.
/// Runs on the confining thread that spawned the command.
pub fn supervise(listener: OwnedFd, refused: Refusals) {
    let listener = Arc::new(listener);
    let busy = Arc::new(AtomicUsize::new(0));
    let fd = listener.as_raw_fd();
    loop {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        let rc = unsafe { libc::poll(&mut p, 1, -1) };
        if rc < 0 {
            if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        // Hung up: every process under the filter is gone.
        if p.revents & libc::POLLIN == 0 {
            return;
        }
        // SAFETY: seccomp_notif is plain data; the kernel wants it zeroed.
        let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: RECV fills `n`, live and of the size the ioctl encodes.
        if unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut n) } != 0 {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) | Some(libc::ENOENT) => continue,
                _ => return,
            }
        }
        handle(&listener, &n, &refused, &busy);
    }
}

/// Reply to call `id`: its return value, or `-errno`.
fn reply(listener: RawFd, id: u64, result: Result<i64, i32>) {
    let (val, error) = match result {
        Ok(v) => (v, 0),
        Err(e) => (0, -e),
    };
    let resp = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags: 0,
    };
    // SAFETY: SEND reads `resp`, live and of the encoded size. A caller
    // killed meanwhile makes it fail with ENOENT, which is fine.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
}

/// Whether call `id` still waits: its caller was alive, so every pid-based
/// read before this named it.
fn still_waiting(listener: RawFd, id: u64) -> bool {
    // SAFETY: ID_VALID reads the u64 id, a live local.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
}

fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// `len` bytes at `addr` in the memory of thread `tid`: all of them, or
/// `EFAULT` (as the kernel's own copy would fail).
fn read_memory(tid: i32, addr: u64, len: usize) -> Result<Vec<u8>, i32> {
    let mut buf = vec![0u8; len];
    if len == 0 {
        return Ok(buf);
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: `local` is `buf`, live and `len` bytes long; the remote
    // range is only read, by the kernel, from the other process.
    let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
    if n == len as isize {
        Ok(buf)
    } else if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        Err(libc::ESRCH)
    } else {
        Err(libc::EFAULT)
    }
}

/// A pidfd of thread `tid` (`PIDFD_THREAD`, Linux 6.9), else of its
/// process (whose descriptor table it shares).
fn pidfd_of(tid: i32) -> io::Result<OwnedFd> {
    use rustix::process::{pidfd_open, Pid, PidfdFlags};
    let pid = Pid::from_raw(tid).ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
    let thread = PidfdFlags::from_bits_retain(libc::O_EXCL as u32);
    match pidfd_open(pid, thread) {
        Ok(fd) => Ok(fd),
        Err(_) => {
            let status = std::fs::read_to_string(format!("/proc/{tid}/status"))?;
            let tgid = status
                .lines()
                .find_map(|l| l.strip_prefix("Tgid:"))
                .and_then(|v| v.trim().parse::<i32>().ok())
                .and_then(Pid::from_raw)
                .ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
            Ok(pidfd_open(tgid, PidfdFlags::empty())?)
        }
    }
}

/// Where a pathname is looked up: the caller's root and, for a relative
/// one, its current directory and that directory's path as the kernel
/// names it.
struct Lookup {
    root: OwnedFd,
    cwd: Option<(OwnedFd, Vec<u8>)>,
}

impl Lookup {
    fn of(tid: i32, relative: bool) -> io::Result<Lookup> {
        let dir = |what: &str| {
            rustix::fs::open(
                format!("/proc/{tid}/{what}"),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
        };
        let root = dir("root")?;
        let cwd = if relative {
            let fd = dir("cwd")?;
            let path = std::fs::read_link(format!("/proc/{tid}/cwd"))
                .map(|p| std::os::unix::ffi::OsStringExt::into_vec(p.into_os_string()))
                .unwrap_or_default();
            Some((fd, path))
        } else {
            None
        };
        Ok(Lookup { root, cwd })
    }

    /// The file `path` names for the caller, opened `O_PATH` (a final
    /// symlink followed, as `connect` follows it).
    fn open(&self, path: &[u8]) -> io::Result<OwnedFd> {
        let in_root = ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS;
        if path.first() == Some(&b'/') {
            return open_path(self.root.as_fd(), path, in_root);
        }
        let Some((cwd, cwd_path)) = &self.cwd else {
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        };
        // The directory's path in the view, when it still names that very
        // directory there: the whole path is then looked up as the kernel
        // would (`..` may climb above it, an absolute link starts at the
        // root).
        if cwd_path.first() == Some(&b'/') {
            if let Ok(d) = open_path(self.root.as_fd(), cwd_path, in_root) {
                if same_place(d.as_fd(), cwd.as_fd()) {
                    let mut full = cwd_path.clone();
                    full.push(b'/');
                    full.extend_from_slice(path);
                    return open_path(self.root.as_fd(), &full, in_root);
                }
            }
        }
        // Otherwise (a directory removed, say) only what lies beneath it.
        open_path(
            cwd.as_fd(),
            path,
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
    }
}

fn open_path(dir: BorrowedFd<'_>, path: &[u8], how: ResolveFlags) -> io::Result<OwnedFd> {
    let mut tries = 0;
    loop {
        match openat2(
            dir,
            OsStr::from_bytes(path),
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            how,
        ) {
            // A rename or mount raced a scoped lookup: the kernel asks to
            // try again.
            Err(rustix::io::Errno::AGAIN) if tries < 8 => tries += 1,
            r => return r.map_err(io::Error::from),
        }
    }
}

/// Whether two descriptors name the same directory on the same mount.
fn same_place(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    use rustix::fs::{statx, AtFlags, StatxFlags};
    let id = |fd| {
        statx(
            fd,
            "",
            AtFlags::EMPTY_PATH,
            StatxFlags::BASIC_STATS | StatxFlags::MNT_ID,
        )
        .ok()
        .map(|s| {
            (
                s.stx_dev_major,
                s.stx_dev_minor,
                s.stx_ino,
                s.stx_mnt_id,
                s.stx_mask & StatxFlags::MNT_ID.bits() != 0,
            )
        })
    };
    matches!((id(a), id(b)), (Some(x), Some(y)) if x == y && x.4)
}

/// The address of `fd` in this process: `/proc/self/fd/<fd>`, so that the
/// kernel's own lookup lands on the inode behind it.
fn self_fd_address(fd: RawFd) -> Vec<u8> {
    let mut a = (libc::AF_UNIX as libc::sa_family_t).to_ne_bytes().to_vec();
    a.extend_from_slice(format!("/proc/self/fd/{fd}").as_bytes());
    a.push(0);
    a
}

/// What one stopped call does once checked.
struct Call {
    id: u64,
    kind: Kind,
    /// The command's socket, duplicated.
    socket: OwnedFd,
    /// The address to use.
    address: Vec<u8>,
    /// What `sendto` sends.
    data: Vec<u8>,
    /// The socket file checked, kept open while its address is used.
    _target: Option<OwnedFd>,
    /// The caller, for a `SIGPIPE` it would have had.
    caller: OwnedFd,
}

impl Call {
    fn blocks(&self) -> bool {
        // SAFETY: F_GETFL on an open descriptor.
        let fl = unsafe { libc::fcntl(self.socket.as_raw_fd(), libc::F_GETFL) };
        let dontwait = match self.kind {
            Kind::SendTo { flags } => flags & libc::MSG_DONTWAIT != 0,
            Kind::Connect => false,
        };
        fl >= 0 && fl & libc::O_NONBLOCK == 0 && !dontwait
    }

    fn make(&self) -> Result<i64, i32> {
        let (addr, len) = if self.address.is_empty() {
            (std::ptr::null(), 0)
        } else {
            (
                self.address.as_ptr().cast::<libc::sockaddr>(),
                self.address.len() as libc::socklen_t,
            )
        };
        let fd = self.socket.as_raw_fd();
        let rc = match self.kind {
            // SAFETY: `addr` is null or our own copy of `len` bytes.
            Kind::Connect => (unsafe { libc::connect(fd, addr, len) }) as isize,
            Kind::SendTo { flags } => {
                // SAFETY: `data` and `addr` are live buffers of the sizes
                // given. MSG_NOSIGNAL: a broken pipe must not signal the
                // engine; the caller gets its SIGPIPE below.
                unsafe {
                    libc::sendto(
                        fd,
                        self.data.as_ptr().cast(),
                        self.data.len(),
                        flags | libc::MSG_NOSIGNAL,
                        addr,
                        len,
                    )
                }
            }
        };
        if rc >= 0 {
            return Ok(rc as i64);
        }
        let e = errno_of(&io::Error::last_os_error());
        if let Kind::SendTo { flags } = self.kind {
            if e == libc::EPIPE && flags & libc::MSG_NOSIGNAL == 0 {
                let _ =
                    rustix::process::pidfd_send_signal(&self.caller, rustix::process::Signal::PIPE);
            }
        }
        Err(e)
    }
}

/// How many calls that may block one command has made on threads of their
/// own at once; past that, on the supervisor's (the command then waits on
/// itself, and cannot make the engine start threads without end).
const WORKERS: usize = 16;

/// Check one stopped call and make it (on a thread of its own when it may
/// block, so that one slow peer holds up no other call of the command).
fn handle(
    listener: &Arc<OwnedFd>,
    n: &libc::seccomp_notif,
    refused: &Refusals,
    busy: &Arc<AtomicUsize>,
) {
    let lfd = listener.as_raw_fd();
    if n.data.nr as libc::c_long == libc::SYS_socket {
        // Network off: a socket of a family other than AF_UNIX, refused
        // and counted as the engine's own listener does it
        // ([`super::seccomp::serve`]).
        if let Some(count) = &refused.sockets {
            count(1);
        }
        reply(lfd, n.id, Err(super::seccomp::REFUSED_SOCKET_ERRNO));
        return;
    }
    match check(lfd, n, refused.unix.as_ref()) {
        Ok(Some(call)) => {
            let blocking = call.blocks();
            let slot = blocking && busy.fetch_add(1, Ordering::AcqRel) < WORKERS;
            if blocking && !slot {
                busy.fetch_sub(1, Ordering::AcqRel);
            }
            if slot {
                let l = listener.clone();
                let b = busy.clone();
                let made = std::thread::Builder::new()
                    .name("nlc-connect".into())
                    .stack_size(64 * 1024)
                    .spawn(move || {
                        reply(l.as_raw_fd(), call.id, call.make());
                        b.fetch_sub(1, Ordering::AcqRel);
                    });
                if made.is_err() {
                    busy.fetch_sub(1, Ordering::AcqRel);
                    reply(lfd, n.id, Err(libc::EAGAIN));
                }
            } else {
                reply(lfd, n.id, call.make());
            }
        }
        // The caller is gone: nobody to answer.
        Ok(None) => {}
        Err(e) => reply(lfd, n.id, Err(e)),
    }
}

/// Read and check call `n`: the call to make, `None` when its caller is
/// gone, or the errno to answer with.
fn check(
    listener: RawFd,
    n: &libc::seccomp_notif,
    refused: Option<&super::plan::Counter>,
) -> Result<Option<Call>, i32> {
    let tid = n.pid as i32;
    let a = n.data.args;
    let (kind, addr_at, addr_len) = match n.data.nr as libc::c_long {
        libc::SYS_connect => (Kind::Connect, a[1], a[2]),
        libc::SYS_sendto => (Kind::SendTo { flags: a[3] as i32 }, a[4], a[5]),
        _ => return Err(libc::ENOSYS),
    };
    let caller = match pidfd_of(tid) {
        Ok(p) => p,
        Err(_) => return Ok(None),
    };
    // The kernel takes the length as an int, at most a sockaddr_storage.
    let alen = addr_len as u32 as i32;
    if !(0..=SOCKADDR_STORAGE as i32).contains(&alen) {
        return Err(libc::EINVAL);
    }
    let address = read_memory(tid, addr_at, alen as usize)?;
    let asked = match kind {
        Kind::SendTo { .. } => (a[2] as usize).min(i32::MAX as usize),
        Kind::Connect => 0,
    };
    let data = read_memory(tid, a[1], asked.min(SEND_CAP))?;
    let family = address
        .get(..2)
        .map(|f| libc::sa_family_t::from_ne_bytes([f[0], f[1]]));
    let pathname = family == Some(libc::AF_UNIX as libc::sa_family_t)
        && address.len() > SUN_PATH_AT
        && address[SUN_PATH_AT] != 0;
    let lookup = if pathname {
        let relative = address[SUN_PATH_AT] != b'/';
        match Lookup::of(tid, relative) {
            Ok(l) => Some(l),
            Err(e) if still_waiting(listener, n.id) => return Err(errno_of(&e)),
            Err(_) => return Ok(None),
        }
    } else {
        None
    };
    // Every read above went to the caller: it is still waiting, so `tid`
    // was still it.
    if !still_waiting(listener, n.id) {
        return Ok(None);
    }
    let socket = get_fd(&caller, a[0])?;
    if asked > SEND_CAP && socket_type(&socket)? != libc::SOCK_STREAM {
        return Err(libc::EMSGSIZE);
    }
    let mut call = Call {
        id: n.id,
        kind,
        socket,
        address,
        data,
        _target: None,
        caller,
    };
    let Some(lookup) = lookup else {
        return Ok(Some(call));
    };
    if call.address.len() > SOCKADDR_UN {
        return Err(libc::EINVAL);
    }
    let raw = &call.address[SUN_PATH_AT..];
    let path = &raw[..raw.iter().position(|&b| b == 0).unwrap_or(raw.len())];
    let target = lookup.open(path).map_err(|e| errno_of(&e))?;
    let st = rustix::fs::fstat(&target).map_err(|e| e.raw_os_error())?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Socket {
        // What the kernel answers for a file that is not a socket.
        return Err(libc::ECONNREFUSED);
    }
    let vfs = rustix::fs::fstatvfs(&target).map_err(|e| e.raw_os_error())?;
    if vfs.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY) {
        // Counted before it is answered: a status read once the command
        // has seen the refusal counts it.
        if let Some(count) = refused {
            count(1);
        }
        return Err(REFUSED_UNIX_ERRNO);
    }
    call.address = self_fd_address(target.as_raw_fd());
    call._target = Some(target);
    Ok(Some(call))
}

/// The caller's descriptor `fd`, duplicated into this process.
fn get_fd(caller: &OwnedFd, fd: u64) -> Result<OwnedFd, i32> {
    let fd = fd as u32 as i32;
    if fd < 0 {
        return Err(libc::EBADF);
    }
    rustix::process::pidfd_getfd(caller, fd, rustix::process::PidfdGetfdFlags::empty())
        .map_err(|e| e.raw_os_error())
}

/// The type (`SOCK_STREAM`, …) of socket `s`.
fn socket_type(s: &OwnedFd) -> Result<i32, i32> {
    let mut t: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: SO_TYPE writes one int into `t`, live, of the size given.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut t as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(errno_of(&io::Error::last_os_error()));
    }
    Ok(t)
}
