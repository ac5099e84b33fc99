//! The mount namespaces of sandboxed commands, held by the engine until
//! each command has exited, so that a namespace's teardown is not part of
//! its command's exit.

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
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
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
