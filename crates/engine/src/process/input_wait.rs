//! Whether a command's processes are blocked reading its input (SPEC §15),
//! read from /proc on Linux; elsewhere the runner cannot tell.
//!
//! What counts, for every thread of every process of the command's tree (the
//! leader, everything in its process group or session, and the descendants
//! of those), from `/proc/<pid>/task/<tid>/syscall` (the syscall a sleeping
//! thread is blocked in, with its arguments):
//!
//! - `read`, `readv`, `pread64`, `preadv`, `preadv2` on a descriptor that is
//!   the command's input: the stdin pipe (same pipe inode as the write end
//!   the runner holds) or its terminal (the pseudo-terminal's slave, or
//!   `/dev/tty`, which is the controlling terminal of every process of the
//!   session);
//! - `poll`/`ppoll` with such a descriptor asking for `POLLIN`, and
//!   `select`/`pselect6` with it in the read set (the descriptor lists are
//!   read from the process's memory with `process_vm_readv`);
//! - `epoll_wait`/`epoll_pwait`/`epoll_pwait2` on an epoll instance whose
//!   interest list (`/proc/<pid>/fdinfo/<epfd>`) holds the input with
//!   `EPOLLIN` — the idle event loop of node (readline), libuv, asyncio.
//!
//! For a pipe, bytes already in it (FIONREAD on the write end) mean it is
//! not waiting on the runner. Not detected: a process waiting on the input
//! through io_uring or another thread's blocking read it hands off by futex
//! only (that thread is found), a process reading a terminal from a
//! background process group (it is stopped by SIGTTIN, not asleep in a
//! read), and processes that left the tree (reparented outside it and in a
//! new group and session).

use std::os::fd::{AsRawFd, BorrowedFd};

/// What the command reads, as the kernel names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Device of the inode (major, minor).
    dev: (u32, u32),
    /// Inode number.
    ino: u64,
    /// A terminal: `/dev/tty` counts too.
    terminal: bool,
}

/// Whether this kernel shows what a sleeping thread is blocked in, in the
/// numbering this build knows (else the status leaves `waitingForInput`
/// out). The thread reads its own `syscall` file, which names the `read` in
/// progress: under qemu-user the kernel names the emulator's host call, in
/// another architecture's numbering, so nothing would ever match.
pub fn supported() -> bool {
    #[cfg(target_os = "linux")]
    {
        static OK: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
            let Ok(f) = std::fs::File::open("/proc/thread-self/syscall") else {
                return false;
            };
            let mut buf = [0u8; 256];
            let Ok(n) = rustix::io::read(&f, &mut buf) else {
                return false;
            };
            let text = String::from_utf8_lossy(&buf[..n]);
            parse_syscall(&text).is_some_and(|(nr, _)| nr == libc::SYS_read)
        });
        *OK
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

fn identity(st: &libc::stat) -> (u32, u32) {
    (libc::major(st.st_dev) as u32, libc::minor(st.st_dev) as u32)
}

fn fstat(fd: BorrowedFd<'_>) -> Option<libc::stat> {
    // SAFETY: an all-zero stat is a valid value to be overwritten; `fd` is
    // open for the duration of the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a writable stat buffer and `fd` a live descriptor.
    (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0).then_some(st)
}

fn stat_path(path: &std::ffi::CStr) -> Option<libc::stat> {
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `st` writable.
    (unsafe { libc::stat(path.as_ptr(), &mut st) } == 0).then_some(st)
}

/// The identity of the input the command reads: the pipe of the write end
/// `fd`, or the slave of the pseudo-terminal whose master is `fd`.
pub fn target_of(fd: BorrowedFd<'_>, terminal: bool) -> Option<Target> {
    let st = if terminal {
        let name = rustix::pty::ptsname(fd, Vec::new()).ok()?;
        stat_path(&name)?
    } else {
        fstat(fd)?
    };
    Some(Target {
        dev: identity(&st),
        ino: st.st_ino,
        terminal,
    })
}

/// Bytes written to the pipe and not read yet (0 when it cannot be told).
fn unread(fd: BorrowedFd<'_>) -> i32 {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer; `fd` is live.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    if r == 0 {
        n
    } else {
        0
    }
}

/// What a thread is blocked in, from one line of `/proc/<pid>/syscall`:
/// the syscall number and its six arguments (`None`: running, or not in a
/// syscall).
pub fn parse_syscall(line: &str) -> Option<(i64, [u64; 6])> {
    let mut fields = line.split_ascii_whitespace();
    let nr: i64 = fields.next()?.parse().ok()?;
    if nr < 0 {
        return None;
    }
    let mut args = [0u64; 6];
    for a in &mut args {
        let f = fields.next()?;
        *a = u64::from_str_radix(f.strip_prefix("0x")?, 16).ok()?;
    }
    Some((nr, args))
}

/// `(pid, ppid, pgrp, session)` from the text of `/proc/<pid>/stat` (the
/// command name may hold spaces and parentheses: the fields follow the last
/// `)`).
pub fn parse_stat(text: &str) -> Option<(i32, i32, i32, i32)> {
    let pid = text.split(' ').next()?.parse().ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut f = rest.split_ascii_whitespace();
    let _state = f.next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    let session = f.next()?.parse().ok()?;
    Some((pid, ppid, pgrp, session))
}

/// The descriptors an epoll instance watches for reading, with the identity
/// of each, from the text of `/proc/<pid>/fdinfo/<epfd>`:
/// `(fd, (major, minor), ino)`.
pub fn parse_epoll_fdinfo(text: &str) -> Vec<(i32, (u32, u32), u64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("tfd:") else {
            continue;
        };
        let mut words = rest.split_ascii_whitespace();
        let (mut fd, mut events, mut ino, mut sdev) = (None, None, None, None);
        while let Some(w) = words.next() {
            if let Some(n) = w.strip_prefix("ino:") {
                ino = u64::from_str_radix(n, 16).ok();
            } else if let Some(n) = w.strip_prefix("sdev:") {
                sdev = u64::from_str_radix(n, 16).ok();
            } else if w == "events:" {
                events = words.next().and_then(|n| u32::from_str_radix(n, 16).ok());
            } else if fd.is_none() {
                fd = w.parse().ok();
            }
        }
        if let (Some(fd), Some(ev), Some(ino), Some(d)) = (fd, events, ino, sdev) {
            // EPOLLIN; the device in the kernel's encoding (major << 20 | minor).
            if ev & 1 != 0 {
                out.push((fd, ((d >> 20) as u32, (d & 0xf_ffff) as u32), ino));
            }
        }
    }
    out
}

/// How a blocked syscall waits on descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// A read of this descriptor.
    Read(i32),
    /// poll/ppoll: the `struct pollfd` array and its length.
    Poll(u64, u64),
    /// select/pselect6: the descriptor count and the read set.
    Select(u64, u64),
    /// An epoll wait on this instance.
    Epoll(i32),
}

/// Classify a blocked syscall by number and arguments (this machine's
/// numbers).
#[cfg(target_os = "linux")]
pub fn classify(nr: i64, a: [u64; 6]) -> Option<Wait> {
    let fd = a[0] as i32;
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    match nr {
        libc::SYS_poll => return Some(Wait::Poll(a[0], a[1])),
        libc::SYS_select => return Some(Wait::Select(a[0], a[1])),
        libc::SYS_epoll_wait => return Some(Wait::Epoll(fd)),
        _ => {}
    }
    match nr {
        libc::SYS_read | libc::SYS_readv | libc::SYS_pread64 | libc::SYS_preadv => {
            Some(Wait::Read(fd))
        }
        libc::SYS_preadv2 => Some(Wait::Read(fd)),
        libc::SYS_ppoll => Some(Wait::Poll(a[0], a[1])),
        libc::SYS_pselect6 => Some(Wait::Select(a[0], a[1])),
        libc::SYS_epoll_pwait | libc::SYS_epoll_pwait2 => Some(Wait::Epoll(fd)),
        _ => None,
    }
}

/// The controlling-terminal device, `/dev/tty` (5, 0).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const DEV_TTY: (u32, u32) = (5, 0);

impl Target {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn is(&self, st: &libc::stat) -> bool {
        if st.st_ino == self.ino && identity(st) == self.dev {
            return true;
        }
        // /dev/tty is whatever terminal controls the reader's session: ours
        // for every process of a terminal command's session.
        self.terminal
            && st.st_mode & libc::S_IFMT == libc::S_IFCHR
            && (
                libc::major(st.st_rdev) as u32,
                libc::minor(st.st_rdev) as u32,
            ) == DEV_TTY
    }
}

#[cfg(target_os = "linux")]
mod scan {
    use super::*;

    fn fd_is(pid: i32, fd: i32, t: &Target) -> bool {
        if fd < 0 {
            return false;
        }
        let path = format!("/proc/{pid}/fd/{fd}\0");
        std::ffi::CStr::from_bytes_with_nul(path.as_bytes())
            .ok()
            .and_then(stat_path)
            .is_some_and(|st| t.is(&st))
    }

    /// Read `len` bytes at `addr` of process `pid`.
    fn peek(pid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
        if addr == 0 || len == 0 || len > 64 * 1024 {
            return None;
        }
        let mut buf = vec![0u8; len];
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        let remote = libc::iovec {
            iov_base: addr as usize as *mut libc::c_void,
            iov_len: len,
        };
        // SAFETY: `local` covers `buf`, which outlives the call; the remote
        // range is only read by the kernel, in the other process.
        let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
        (n == len as isize).then_some(buf)
    }

    fn waits_on(pid: i32, w: Wait, t: &Target) -> bool {
        match w {
            Wait::Read(fd) => fd_is(pid, fd, t),
            Wait::Epoll(epfd) => {
                let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
                    return false;
                };
                parse_epoll_fdinfo(&text)
                    .iter()
                    .any(|(fd, dev, ino)| (*dev == t.dev && *ino == t.ino) || fd_is(pid, *fd, t))
            }
            Wait::Poll(addr, n) => {
                let Some(buf) = peek(pid, addr, (n as usize).saturating_mul(8)) else {
                    return false;
                };
                buf.chunks_exact(8).any(|p| {
                    let fd = i32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
                    let events = i16::from_ne_bytes([p[4], p[5]]);
                    events & libc::POLLIN != 0 && fd_is(pid, fd, t)
                })
            }
            Wait::Select(nfds, set) => {
                let Some(bits) = peek(pid, set, (nfds as usize).div_ceil(64) * 8) else {
                    return false;
                };
                (0..nfds as usize)
                    .filter(|i| bits[i / 8] & (1 << (i % 8)) != 0)
                    .any(|fd| fd_is(pid, fd as i32, t))
            }
        }
    }

    /// The processes of the tree of `leader`: its group and session, and
    /// the descendants of every one of those.
    fn tree(leader: i32) -> Vec<i32> {
        let mut all = Vec::new();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for e in dir.flatten() {
                let name = e.file_name();
                let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
                    continue;
                };
                if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                    if let Some(s) = parse_stat(&text) {
                        all.push(s);
                    }
                }
            }
        }
        members(leader, &all)
    }

    /// Which of `all` (`(pid, ppid, pgrp, session)`) belong to the tree of
    /// `leader`.
    pub fn members(leader: i32, all: &[(i32, i32, i32, i32)]) -> Vec<i32> {
        let mut inside: Vec<i32> = all
            .iter()
            .filter(|(pid, _, pgrp, sid)| *pid == leader || *pgrp == leader || *sid == leader)
            .map(|s| s.0)
            .collect();
        // Descendants that moved to groups of their own, to a fixed point.
        loop {
            let before = inside.len();
            for (pid, ppid, _, _) in all {
                if inside.contains(ppid) && !inside.contains(pid) {
                    inside.push(*pid);
                }
            }
            if inside.len() == before {
                return inside;
            }
        }
    }

    fn process_waits(pid: i32, t: &Target) -> bool {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return false;
        };
        tasks.flatten().any(|task| {
            std::fs::read_to_string(task.path().join("syscall"))
                .ok()
                .and_then(|line| parse_syscall(&line))
                .and_then(|(nr, a)| classify(nr, a))
                .is_some_and(|w| waits_on(pid, w, t))
        })
    }

    pub fn waiting(leader: i32, t: &Target) -> bool {
        // The leader first (a prompt is most often its own): no scan of
        // every process when it answers.
        process_waits(leader, t)
            || tree(leader)
                .into_iter()
                .filter(|pid| *pid != leader)
                .any(|pid| process_waits(pid, t))
    }
}

#[cfg(target_os = "linux")]
pub use scan::members;

/// Whether a process of the tree led by `leader` is blocked reading the
/// input `t`, whose runner-side end is `fd`.
pub fn waiting(leader: i32, t: &Target, fd: BorrowedFd<'_>) -> bool {
    if !t.terminal && unread(fd) > 0 {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        scan::waiting(leader, t)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = leader;
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn syscall_lines() {
        assert_eq!(
            parse_syscall("0 0x0 0x55826be5dca0 0x2000 0x7f3be50d5a58 0x0 0x0 0x7ffd8f4abf08 0x7f3be53162ad\n"),
            Some((0, [0, 0x55826be5dca0, 0x2000, 0x7f3be50d5a58, 0, 0]))
        );
        assert_eq!(parse_syscall("running\n"), None);
        assert_eq!(parse_syscall("-1 0x7ffd8f4abf08 0x7f3be53162ad\n"), None);
        assert_eq!(parse_syscall("232 0x3 0x7f"), None);
    }

    #[test]
    fn stat_lines() {
        let line = "4242 (a (weird) name) S 4240 4241 4241 34816 4241 4194560 100 0 0 0";
        assert_eq!(parse_stat(line), Some((4242, 4240, 4241, 4241)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn epoll_interest_lists() {
        let text = "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t18\n\
            tfd:        0 events:       19 data:                3  pos:0 ino:8fd90 sdev:f\n\
            tfd:        7 events:        4 data:                7  pos:0 ino:1234 sdev:f\n\
            tfd:        9 events:     2019 data:                9  pos:0 ino:3 sdev:1500005\n";
        assert_eq!(
            parse_epoll_fdinfo(text),
            vec![(0, (0, 15), 0x8fd90), (9, (21, 5), 3)]
        );
    }

    #[test]
    fn tree_membership() {
        // (pid, ppid, pgrp, session)
        let all = [
            (10, 1, 10, 1),   // the leader
            (11, 10, 10, 1),  // its child in the group
            (12, 11, 12, 12), // a grandchild in a session of its own
            (13, 12, 13, 12), // and its child
            (20, 1, 20, 20),  // unrelated
            (21, 1, 10, 1),   // reparented, still in the group
        ];
        let mut m = members(10, &all);
        m.sort();
        assert_eq!(m, vec![10, 11, 12, 13, 21]);
    }

    #[test]
    fn a_blocked_read_of_our_pipe_is_seen_and_others_are_not() {
        use std::os::fd::AsFd;
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        let mut reader = Command::new("/bin/sh")
            .args(["-c", "read x; echo $x"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut sleeper = Command::new("/bin/sleep")
            .arg("5")
            .stdin(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let w = reader.stdin.as_ref().unwrap().as_fd();
        let t = target_of(w, false).unwrap();
        if std::env::var_os("NLC_TEST_QEMU").is_some_and(|v| v == "1") {
            // qemu-user: the kernel shows the emulator's calls; the engine
            // knows it cannot tell.
            assert!(!supported());
            let _ = (reader.kill(), sleeper.kill(), reader.wait(), sleeper.wait());
            return;
        }
        assert!(supported());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !waiting(reader.id() as i32, &t, w) {
            assert!(std::time::Instant::now() < deadline, "never seen waiting");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let ws = sleeper.stdin.as_ref().unwrap().as_fd();
        let ts = target_of(ws, false).unwrap();
        assert!(!waiting(sleeper.id() as i32, &ts, ws));
        // The reader's pipe is not the sleeper's input.
        assert!(!waiting(sleeper.id() as i32, &t, w));
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        drop(reader.stdin.take());
        reader.wait().unwrap();
    }
}
