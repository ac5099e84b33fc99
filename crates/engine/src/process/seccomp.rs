//! What a confined command may not do whatever its rules (SPEC §8 "No
//! privileges", `network: false`'s sockets), and what it was refused
//! ("What it was refused"): the seccomp filter and the capability drop of the
//! engine's hardened spawner threads, and the listener that answers — and
//! counts — a confined command's refused sockets.
//!
//! Both are set once, on a dedicated spawner thread (credentials and seccomp
//! filters belong to a thread, not the process): the threads it makes, and
//! the processes those spawn, inherit them; the host's other threads stay
//! as they were.
//!
//! The filter (written here as classic BPF: seccompiler has one action per
//! filter and no user notification) refuses with `EPERM` — the errno a
//! missing privilege gives — `bpf`, `perf_event_open`, the keyring calls,
//! `mknod`/`mknodat` of a block or character device, and the `TIOCSTI` and
//! `TIOCLINUX` ioctls (their command compared on its low 32 bits only, as
//! the kernel's tty code reads it: a high bit set does not slip past). It
//! does not refuse `mount` and its kin: the engine's own namespace setup in
//! the child runs under this filter before the exec; Landlock refuses
//! mounts to a confined command, and it holds no capability to mount with.
//! Every x32 system call fails with `ENOSYS` (as on a kernel built without
//! x32), so no second syscall table needs filtering. Without network,
//! `socket()` of any family but `AF_UNIX` is handed to the listener (or,
//! on a kernel without user notification, fails with `EACCES`), and
//! `io_uring_setup` fails with `EACCES`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

/// The errno a confined command's refused `socket()` gets from the
/// listener: `EACCES`, "permission denied", which is what it is (and what
/// it got before the listener existed). No errno would make a name lookup
/// fail differently — glibc's resolver reports `EAI_AGAIN` whatever
/// `socket()` said, and npm retries every such error for 70 s — so npm is
/// told not to retry through its environment instead
/// ([`crate::commands::WITHOUT_NETWORK_ENV`]).
pub const REFUSED_SOCKET_ERRNO: i32 = libc::EACCES;

/// The errno of the privileged calls the filter refuses.
pub const REFUSED_PRIVILEGE_ERRNO: i32 = libc::EPERM;

// Offsets into `struct seccomp_data`: nr (i32), arch (u32), ip (u64),
// args (u64 × 6). An argument's low 32 bits are at its offset on a
// little-endian machine, 4 bytes on a big-endian one.
const NR: u32 = 0;
const ARCH: u32 = 4;
const fn arg_low(i: u32) -> u32 {
    16 + 8 * i + if cfg!(target_endian = "big") { 4 } else { 0 }
}
const fn arg_high(i: u32) -> u32 {
    16 + 8 * i + if cfg!(target_endian = "big") { 0 } else { 4 }
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 0xC000_00F3;

const BPF_LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const BPF_JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
#[cfg(target_arch = "x86_64")]
const BPF_JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const BPF_AND_K: u16 = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
const BPF_RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}
fn load(off: u32) -> libc::sock_filter {
    ins(BPF_LD_W_ABS, 0, 0, off)
}
fn ret(k: u32) -> libc::sock_filter {
    ins(BPF_RET_K, 0, 0, k)
}
fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

/// The program: with `sockets` (`network: false`), `socket()` of a family
/// other than `AF_UNIX` returns `socket_action` and `io_uring_setup` fails.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
pub fn program(sockets: Option<u32>) -> Vec<libc::sock_filter> {
    let eperm = errno(REFUSED_PRIVILEGE_ERRNO);
    let allow = libc::SECCOMP_RET_ALLOW;
    let mut p = vec![
        load(ARCH),
        // Another ABI's table (i386 through int 0x80 on x86_64, say) has
        // other numbers: such a call kills the process, as seccompiler's
        // filter did.
        ins(BPF_JEQ_K, 1, 0, AUDIT_ARCH),
        ret(libc::SECCOMP_RET_KILL_PROCESS),
        load(NR),
    ];
    #[cfg(target_arch = "x86_64")]
    p.extend([ins(BPF_JGE_K, 0, 1, 0x4000_0000), ret(errno(libc::ENOSYS))]);
    // Each block: "nr == this ? fall into the body : skip it"; every body
    // ends in a return, so the accumulator it changes is never seen after.
    let mut block = |nr: i64, body: Vec<libc::sock_filter>| {
        p.push(ins(BPF_JEQ_K, 0, body.len() as u8, nr as u32));
        p.extend(body);
    };
    for nr in [
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        block(nr, vec![ret(eperm)]);
    }
    // A device node: the type bits of the mode are S_IFBLK or S_IFCHR.
    let device = |mode_arg: u32| {
        vec![
            load(arg_low(mode_arg)),
            ins(BPF_AND_K, 0, 0, libc::S_IFMT),
            ins(BPF_JEQ_K, 2, 0, libc::S_IFBLK),
            ins(BPF_JEQ_K, 1, 0, libc::S_IFCHR),
            ret(allow),
            ret(eperm),
        ]
    };
    #[cfg(target_arch = "x86_64")]
    block(libc::SYS_mknod, device(1));
    block(libc::SYS_mknodat, device(2));
    // The tty code takes the command as an unsigned int: only its low 32
    // bits are compared, so TIOCSTI | 1 << 32 is refused as TIOCSTI is.
    block(
        libc::SYS_ioctl,
        vec![
            load(arg_low(1)),
            ins(BPF_JEQ_K, 2, 0, libc::TIOCSTI as u32),
            ins(BPF_JEQ_K, 1, 0, libc::TIOCLINUX as u32),
            ret(allow),
            ret(eperm),
        ],
    );
    if let Some(socket_action) = sockets {
        block(
            libc::SYS_socket,
            vec![
                load(arg_low(0)),
                ins(BPF_JEQ_K, 0, 1, libc::AF_UNIX as u32),
                ret(allow),
                ret(socket_action),
            ],
        );
        block(libc::SYS_io_uring_setup, vec![ret(errno(libc::EACCES))]);
    }
    p.push(ret(allow));
    p
}

/// The second filter of a command whose view shows pathname sockets it may
/// not reach (read set `"all"`), installed by its child just before the
/// exec ([`install_mediation`]): `connect`, and `sendto` with a destination,
/// go to the command's listener ([`super::mediate`]), which makes the call
/// itself; `io_uring_setup` fails with `EACCES` (a ring's connect and send
/// would pass no filter). Every other call, `sendmsg` and `sendmmsg`
/// included, passes: see [`super::mediate`] for why those stay unheard.
/// Built once; read by the child of a `clone(CLONE_VM)` without a lock.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
pub fn mediation_program(sockets: bool) -> &'static [libc::sock_filter] {
    static P: [std::sync::OnceLock<Vec<libc::sock_filter>>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    P[usize::from(sockets)].get_or_init(|| {
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        let mut p = vec![
            load(ARCH),
            // Another ABI: the first filter kills it.
            ins(BPF_JEQ_K, 1, 0, AUDIT_ARCH),
            ret(allow),
            load(NR),
        ];
        if sockets {
            // The socket rule of `network: false` (see [`program`]): one
            // thread has one listener, so a mediated command's spawner
            // carries its filter without it, and it is here instead.
            p.extend([
                ins(BPF_JEQ_K, 0, 4, libc::SYS_socket as u32),
                load(arg_low(0)),
                ins(BPF_JEQ_K, 0, 1, libc::AF_UNIX as u32),
                ret(allow),
                ret(notify),
            ]);
        }
        p.extend([
            ins(BPF_JEQ_K, 0, 1, libc::SYS_connect as u32),
            ret(notify),
            ins(BPF_JEQ_K, 0, 1, libc::SYS_io_uring_setup as u32),
            ret(errno(libc::EACCES)),
            // sendto: heard only when its destination (a 64-bit pointer,
            // both halves compared) is not null.
            ins(BPF_JEQ_K, 0, 5, libc::SYS_sendto as u32),
            load(arg_low(4)),
            ins(BPF_JEQ_K, 0, 2, 0),
            load(arg_high(4)),
            ins(BPF_JEQ_K, 1, 0, 0),
            ret(notify),
            ret(allow),
        ]);
        p
    })
}

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
pub fn mediation_program(_sockets: bool) -> &'static [libc::sock_filter] {
    static P: [libc::sock_filter; 1] = [libc::sock_filter {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k: libc::SECCOMP_RET_KILL_PROCESS,
    }];
    &P
}

/// Install `prog` ([`mediation_program`]) on the calling process with a
/// new listener, and return the listener (close-on-exec) or the errno.
/// Once the listener has read a call, the caller waits for the answer
/// killably only (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`, Linux 5.19;
/// without it a signal would restart a connect the engine may already have
/// made).
///
/// # Safety
/// Only system calls on the caller's stack: callable in the child of a
/// `clone(CLONE_VM)` before its exec.
pub unsafe fn install_mediation(prog: &[libc::sock_filter]) -> Result<i32, i32> {
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    let base = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW;
    let mut flags = base | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    loop {
        // SAFETY: `fprog` points at `prog`, live for the call; the kernel
        // copies the program.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &fprog as *const libc::sock_fprog,
            )
        };
        if rc >= 0 {
            return Ok(rc as i32);
        }
        // SAFETY: the C library's errno location for the calling thread.
        let e = unsafe { *libc::__errno_location() };
        if e == libc::EINVAL && flags != base {
            flags = base;
            continue;
        }
        return Err(e);
    }
}

/// Elsewhere no confined start gets this far ([`super::confine::missing`]).
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
pub fn program(_sockets: Option<u32>) -> Vec<libc::sock_filter> {
    vec![ret(libc::SECCOMP_RET_KILL_PROCESS)]
}

/// Install `prog` on the calling thread only (no TSYNC) with `flags` plus
/// `SECCOMP_FILTER_FLAG_SPEC_ALLOW` (without it the kernel forces the
/// speculative-store-bypass mitigation on every process under the filter,
/// which made each confined start cost ~1.5 ms more). Returns what the call
/// returned: the listener descriptor with `SECCOMP_FILTER_FLAG_NEW_LISTENER`.
fn attach(prog: &[libc::sock_filter], flags: libc::c_ulong) -> io::Result<libc::c_long> {
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `fprog` points at `prog`'s instructions, which outlive the
    // call; the kernel copies the program and keeps no pointer into it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags | libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW,
            &fprog as *const libc::sock_fprog,
        )
    };
    if rc >= 0 {
        Ok(rc)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Give up every capability on the calling thread, for good, and set
/// `no_new_privs`: whatever user the host runs as, nothing this thread
/// starts holds a capability or can gain one.
///
/// With `CAP_SETPCAP` (a root host) the securebits are set and locked so
/// that an exec as root grants nothing (`SECBIT_NOROOT`), a change of uid
/// restores nothing, and no ambient capability can be raised; and the
/// bounding set is emptied. Without it (an ordinary user) neither can be
/// changed, and neither matters: the permitted set is empty and
/// `no_new_privs` keeps it so across every exec (setuid and file
/// capabilities included). Then the ambient and inheritable sets are
/// emptied, the permitted and effective ones are cut to `CAP_SETFCAP` if
/// the thread held it, and the result is checked.
///
/// Why `CAP_SETFCAP` stays: a child born in a new user namespace may map a
/// host uid of 0 (a root host's) only if its creator held it when the
/// namespace was made. A start at level `"full"` needs that mapping; its
/// child drops every capability in its namespace before its exec. Every
/// other start first calls [`drop_kept`] on its own thread.
pub fn drop_privileges() -> io::Result<()> {
    let prctl = |op: libc::c_int, a: libc::c_ulong| -> io::Result<()> {
        // SAFETY: prctl with integer arguments only; it changes this
        // thread's credentials and reads no memory.
        let rc = unsafe { libc::prctl(op, a, 0 as libc::c_ulong, 0 as libc::c_ulong, 0) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    let may_setpcap = effective_caps()? & (1u64 << CAP_SETPCAP) != 0;
    if may_setpcap {
        let bits = libc::SECBIT_NOROOT
            | libc::SECBIT_NOROOT_LOCKED
            | libc::SECBIT_NO_SETUID_FIXUP
            | libc::SECBIT_NO_SETUID_FIXUP_LOCKED
            | libc::SECBIT_KEEP_CAPS_LOCKED
            | libc::SECBIT_NO_CAP_AMBIENT_RAISE
            | libc::SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        prctl(libc::PR_SET_SECUREBITS, bits as libc::c_ulong)?;
        let last = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or(63);
        for cap in 0..=last {
            prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong)?;
        }
    }
    // Ambient capabilities (Linux 4.3) are cleared where they exist.
    // SAFETY: as above.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if rc != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(io::Error::last_os_error());
    }
    let keep = effective_caps()? & (1u64 << CAP_SETFCAP);
    capset_only(keep)?;
    rustix::thread::set_no_new_privs(true)?;
    let (eff, prm, inh) = caps()?;
    if (eff | prm) & !keep != 0 || inh != 0 {
        return Err(io::Error::other(format!(
            "capabilities remain after the drop (effective {eff:#x}, permitted {prm:#x}, inheritable {inh:#x})"
        )));
    }
    Ok(())
}

/// The capability that changes securebits and the bounding set.
const CAP_SETPCAP: u32 = 8;

/// The capability a creator of a user namespace needs for the namespace to
/// map the host's uid 0.
const CAP_SETFCAP: u32 = 31;

/// Give up what [`drop_privileges`] kept (`CAP_SETFCAP`) on the calling
/// thread: a start that makes no user namespace holds nothing at all.
pub fn drop_kept() -> io::Result<()> {
    capset_only(0)?;
    let (eff, prm, inh) = caps()?;
    if eff | prm | inh != 0 {
        return Err(io::Error::other(format!(
            "capabilities remain after the drop (effective {eff:#x}, permitted {prm:#x}, inheritable {inh:#x})"
        )));
    }
    Ok(())
}

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAP_V3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// This thread's (effective, permitted, inheritable) sets.
fn caps() -> io::Result<(u64, u64, u64)> {
    let mut h = CapHeader {
        version: CAP_V3,
        pid: 0,
    };
    let mut d = [CapData::default(); 2];
    // SAFETY: capget writes two CapData (the v3 layout) into `d` and may
    // rewrite `h.version`; both are live and sized for it.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut h as *mut CapHeader, d.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let join = |lo: u32, hi: u32| lo as u64 | (hi as u64) << 32;
    Ok((
        join(d[0].effective, d[1].effective),
        join(d[0].permitted, d[1].permitted),
        join(d[0].inheritable, d[1].inheritable),
    ))
}

fn effective_caps() -> io::Result<u64> {
    caps().map(|(e, _, _)| e)
}

/// Cut this thread's effective and permitted sets to `keep` (a subset of
/// what it holds) and empty its inheritable set.
fn capset_only(keep: u64) -> io::Result<()> {
    let mut h = CapHeader {
        version: CAP_V3,
        pid: 0,
    };
    let word = |i: u32| (keep >> (32 * i)) as u32;
    let d = [0, 1].map(|i| CapData {
        effective: word(i),
        permitted: word(i),
        inheritable: 0,
    });
    // SAFETY: capset reads the header and two CapData (the v3 layout); pid
    // 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut h as *mut CapHeader, d.as_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Harden the calling thread (a dedicated spawner) for good: capabilities
/// dropped, `no_new_privs`, and the filter — with `sockets`, the socket
/// rules too, whose refusals go to the returned listener (`None` on a
/// kernel without user notification: they fail with `EACCES` unheard).
pub fn harden_this_thread(sockets: bool) -> io::Result<Option<OwnedFd>> {
    drop_privileges()?;
    if !sockets {
        attach(&program(None), 0).map_err(|e| {
            io::Error::other(format!("the seccomp filter could not be installed: {e}"))
        })?;
        return Ok(None);
    }
    match attach(
        &program(Some(libc::SECCOMP_RET_USER_NOTIF)),
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
    ) {
        // SAFETY: the kernel just returned this new descriptor; nothing
        // else owns it.
        Ok(fd) => Ok(Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })),
        // Before Linux 5.0 there is no listener: refuse outright.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            attach(&program(Some(errno(libc::EACCES))), 0).map_err(|e| {
                io::Error::other(format!("the seccomp filter could not be installed: {e}"))
            })?;
            Ok(None)
        }
        Err(e) => Err(io::Error::other(format!(
            "the seccomp filter could not be installed: {e}"
        ))),
    }
}

/// A confined command whose refused sockets are counted: its leader's pid
/// and start time (so a reused pid is never mistaken for it) and what to
/// tell of each.
struct Watched {
    pid: i32,
    start: u64,
    refused: Arc<super::confine::Counter>,
}

/// The commands watched, and the refusals heard for a process group nobody
/// watches yet (the command may refuse a socket before its start has
/// registered it), by (group id, its leader's start time).
#[derive(Default)]
struct Watch {
    live: Vec<Watched>,
    early: Vec<((i32, u64), u32)>,
}

fn watch_list() -> &'static Mutex<Watch> {
    static W: Mutex<Watch> = Mutex::new(Watch {
        live: Vec::new(),
        early: Vec::new(),
    });
    &W
}

/// How many entries either list keeps before the dead are let go.
const WATCH_ROOM: usize = 256;

/// Count the refused sockets of the confined command led by `pid` (the
/// leader of its own process group) in `refused`, until it is gone.
pub fn watch(pid: i32, refused: super::confine::Counter) {
    let Some(start) = stat(pid).map(|s| s.start) else {
        return;
    };
    let mut w = watch_list().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = w.early.iter().position(|(k, _)| *k == (pid, start)) {
        refused(w.early.swap_remove(i).1);
    }
    if w.live.len() >= WATCH_ROOM {
        w.live
            .retain(|x| stat(x.pid).is_some_and(|s| s.start == x.start));
    }
    w.live.push(Watched {
        pid,
        start,
        refused: Arc::new(refused),
    });
}

/// What `/proc/<pid>/stat` tells of a process.
struct Stat {
    ppid: i32,
    pgrp: i32,
    session: i32,
    start: u64,
}

fn stat(pid: i32) -> Option<Stat> {
    let s = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The name in parentheses may hold anything: fields follow the last ')'.
    let at = s.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&s[at + 1..]).ok()?;
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    // Fields 3 onward: state, ppid, pgrp, session, …, starttime (22).
    Some(Stat {
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        session: f.get(3)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

/// Where one refusal is counted.
enum Target {
    /// A watched command's counter.
    Command(Arc<super::confine::Counter>),
    /// A process group nobody watches yet: (its id, its leader's start time).
    Early((i32, u64)),
}

/// Whom a refusal by the process `pid` counts against: the command whose
/// process group or session it is in, or which it descends from (a
/// descendant that left both), else — no command registered yet — its
/// process group, as heard early. Read while its call is held, so `pid` is
/// still it.
fn resolve(pid: i32) -> Option<Target> {
    let me = stat(pid)?;
    let w = watch_list().lock().unwrap_or_else(|e| e.into_inner());
    let watched = |candidate: i32| {
        let start = w.live.iter().find(|x| x.pid == candidate)?.start;
        (stat(candidate)?.start == start).then_some(candidate)
    };
    let early = stat(me.pgrp).map(|l| (me.pgrp, l.start));
    let mut at = Some((pid, me));
    for _ in 0..64 {
        let Some((p, st)) = at else { break };
        if let Some(found) = [st.pgrp, st.session, p].into_iter().find_map(watched) {
            let x = w.live.iter().find(|x| x.pid == found)?;
            return Some(Target::Command(x.refused.clone()));
        }
        if st.ppid <= 1 {
            break;
        }
        at = stat(st.ppid).map(|s| (st.ppid, s));
    }
    early.map(Target::Early)
}

/// Count one refusal against `target`.
fn count(target: Target) {
    let key = match target {
        Target::Command(c) => {
            c(1);
            return;
        }
        Target::Early(key) => key,
    };
    let mut w = watch_list().lock().unwrap_or_else(|e| e.into_inner());
    // Registered meanwhile: count it there.
    if let Some(x) = w.live.iter().find(|x| (x.pid, x.start) == key) {
        (x.refused)(1);
        return;
    }
    if let Some(e) = w.early.iter_mut().find(|(k, _)| *k == key) {
        e.1 += 1;
        return;
    }
    if w.early.len() >= WATCH_ROOM {
        w.early
            .retain(|((p, s), _)| stat(*p).is_some_and(|x| x.start == *s));
    }
    if w.early.len() < WATCH_ROOM {
        w.early.push((key, 1));
    }
}

/// Answer every notification of `listener` at once with
/// [`REFUSED_SOCKET_ERRNO`], counting it against its command. Runs on a
/// thread of its own for the life of the host; should it ever end, the
/// kernel fails the filtered calls with `ENOSYS` — still refused.
pub fn serve(listener: OwnedFd) {
    let fd = listener.as_raw_fd();
    loop {
        // SAFETY: seccomp_notif is plain data; the kernel wants it zeroed.
        let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: RECV fills `n`, which is live and of the size the ioctl
        // number encodes.
        let rc = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut n) };
        if rc != 0 {
            match io::Error::last_os_error().raw_os_error() {
                // Interrupted, or the caller died before it was read.
                Some(libc::EINTR) | Some(libc::ENOENT) => continue,
                _ => return,
            }
        }
        // Who asked is read while the call is held (ID_VALID after the
        // read: the caller was still there, so its pid was still its own),
        // and counted before it is answered, so that a status read once
        // the command has seen the refusal already counts it.
        let who = resolve(n.pid as i32);
        // SAFETY: ID_VALID reads the u64 id, a live local.
        let valid = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &n.id) } == 0;
        if let (true, Some(target)) = (valid, who) {
            count(target);
        }
        let resp = libc::seccomp_notif_resp {
            id: n.id,
            val: 0,
            error: -REFUSED_SOCKET_ERRNO,
            flags: 0,
        };
        // SAFETY: SEND reads `resp`, live and of the encoded size. A caller
        // killed meanwhile makes it fail with ENOENT, which is fine.
        unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// The last errno of a raw call, or 0 when it succeeded.
    fn errno_of(rc: libc::c_long) -> i32 {
        if rc >= 0 {
            0
        } else {
            io::Error::last_os_error().raw_os_error().unwrap()
        }
    }

    /// What each probe gives on the calling thread.
    fn probes() -> Vec<(&'static str, i32)> {
        let null = std::fs::File::open("/dev/null").unwrap();
        let (r, _w) = rustix::pipe::pipe().unwrap();
        let c = 0u8;
        let mut n: libc::c_int = 0;
        // SAFETY: every call below takes integers and pointers to live
        // locals of the sizes the calls read or write; descriptors the
        // socket calls return are closed right away.
        unsafe {
            let sock = |family: i32| {
                let fd = libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
                if fd >= 0 {
                    libc::close(fd);
                }
                errno_of(fd as libc::c_long)
            };
            vec![
                (
                    "keyctl",
                    errno_of(libc::syscall(libc::SYS_keyctl, 0, -3i32, 0)),
                ),
                (
                    "tiocsti",
                    errno_of(libc::ioctl(null.as_raw_fd(), libc::TIOCSTI, &c) as libc::c_long),
                ),
                (
                    "tiocsti-high",
                    errno_of(libc::syscall(
                        libc::SYS_ioctl,
                        null.as_raw_fd(),
                        libc::TIOCSTI as libc::c_ulong | 1 << 32,
                        &c,
                    )),
                ),
                (
                    "fionread",
                    errno_of(libc::ioctl(r.as_raw_fd(), libc::FIONREAD, &mut n) as libc::c_long),
                ),
                ("inet", sock(libc::AF_INET)),
                ("unix", sock(libc::AF_UNIX)),
            ]
        }
    }

    #[test]
    fn the_filter_refuses_privileged_calls_and_sockets_and_counts_the_sockets() {
        // Unfiltered: the keyring answers, a TIOCSTI on a non-terminal is
        // not a terminal's, a socket of any family is made.
        let control: Vec<_> = probes();
        // qemu-user has no keyctl of its own: it answers ENOSYS.
        let keyctl = if std::env::var_os("NLC_TEST_QEMU").is_some_and(|v| v == "1") {
            libc::ENOSYS
        } else {
            0
        };
        assert_eq!(
            control,
            [
                ("keyctl", keyctl),
                ("tiocsti", libc::ENOTTY),
                ("tiocsti-high", libc::ENOTTY),
                ("fionread", 0),
                ("inet", 0),
                ("unix", 0),
            ]
        );
        // qemu-user (NLC_TEST_QEMU=1) does not pass seccomp filters on to
        // the kernel (they would filter the emulator's own calls): there the
        // engine refuses every confined start before this module, which the
        // suites check (Landlock is hidden too).
        if std::env::var_os("NLC_TEST_QEMU").is_some_and(|v| v == "1") {
            return;
        }
        let refused = Arc::new(AtomicU32::new(0));
        let counted = refused.clone();
        let on_thread = std::thread::spawn(move || {
            let listener = harden_this_thread(true).unwrap().expect("a listener");
            std::thread::spawn(move || serve(listener));
            // SAFETY: gettid takes no arguments.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
            watch(
                tid,
                Box::new(move |n| _ = counted.fetch_add(n, Ordering::Relaxed)),
            );
            let kept = std::fs::read_to_string("/proc/thread-self/status").unwrap();
            drop_kept().unwrap();
            let caps = std::fs::read_to_string("/proc/thread-self/status").unwrap();
            (probes(), kept, caps)
        });
        let (filtered, kept, caps) = on_thread.join().unwrap();
        // Hardened, the thread keeps at most CAP_SETFCAP (a root host's
        // user namespaces need it), then gives that up too.
        for set in ["CapPrm", "CapEff"] {
            assert!(
                kept.contains(&format!("{set}:\t0000000000000000"))
                    || kept.contains(&format!("{set}:\t0000000080000000")),
                "{set}: {kept}"
            );
        }
        assert_eq!(
            filtered,
            [
                ("keyctl", libc::EPERM),
                ("tiocsti", libc::EPERM),
                ("tiocsti-high", libc::EPERM),
                ("fionread", 0),
                ("inet", REFUSED_SOCKET_ERRNO),
                ("unix", 0),
            ]
        );
        assert_eq!(refused.load(Ordering::Relaxed), 1);
        for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
            assert!(
                caps.contains(&format!("{set}:\t0000000000000000")),
                "{set}: {caps}"
            );
        }
        assert!(caps.contains("NoNewPrivs:\t1"), "{caps}");
        // This thread (the host's others) kept what it had.
        let mine = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        assert!(mine.contains("NoNewPrivs:\t0"), "{mine}");
    }
}
