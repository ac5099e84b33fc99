//! The child's half of the namespace sandbox: in the new namespaces,
//! before its exec, the child takes the steps its [`View`] lists and makes
//! the view its root ([`enter`]). Only system calls, on the child's own
//! stack: it shares the host's memory, so it allocates nothing and takes
//! no lock.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;

use super::view::{Op, View, MAX_SLOTS, MOUNT_ATTR_RDONLY};

const OPEN_TREE_CLONE: u32 = 1;
const AT_RECURSIVE: u32 = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 4;

/// The kernel's `struct mount_attr`.
#[repr(C)]
struct MountAttr {
    set: u64,
    clr: u64,
    propagation: u64,
    userns_fd: u64,
}

impl MountAttr {
    /// Attributes to set, nothing cleared, propagation unchanged.
    fn setting(set: u64) -> MountAttr {
        MountAttr {
            set,
            clr: 0,
            propagation: 0,
            userns_fd: 0,
        }
    }
}

/// `mount_setattr(2)` on `path` relative to `dirfd` (`""` with
/// `AT_EMPTY_PATH`: the mount `dirfd` is); false on failure, errno saying
/// why. Async-signal-safe: one system call.
fn set_mount_attr(dirfd: c_int, path: &CStr, flags: u32, attr: &MountAttr) -> bool {
    // SAFETY: `path` is NUL-terminated and `attr` is live for the call,
    // with its size passed; the kernel only reads both.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        ) == 0
    }
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
                let mut f = libc::AT_EMPTY_PATH as u32;
                if *recursive {
                    f |= AT_RECURSIVE;
                }
                set_mount_attr(fd, c"", f, &MountAttr::setting(*attr))
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
            Op::ReadOnly(at) => set_mount_attr(
                libc::AT_FDCWD,
                at,
                0,
                &MountAttr::setting(MOUNT_ATTR_RDONLY),
            ),
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
    if !set_mount_attr(libc::AT_FDCWD, c"/tmp", AT_RECURSIVE, &private) {
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
        let f = libc::AT_EMPTY_PATH as u32 | if dir { AT_RECURSIVE } else { 0 };
        ok = set_mount_attr(fd, c"", f, &MountAttr::setting(attr));
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
