//! What a sandboxed child hands back to its parent over a unix socket pair
//! before its exec: its mount namespace (so the parent can hold it, see
//! [`super::keeper`]) and the listener of its mediation filter
//! ([`crate::process::mediate`]). The child sends with system calls only;
//! the parent receives once the spawn has returned.

use std::os::raw::c_int;

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
/// In the child, as [`super::enter`]: only system calls, on its own stack.
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

/// Send `listener` (see [`crate::process::mediate`]) over the unix socket `to`.
/// Whether it was sent.
///
/// # Safety
/// In the child, as [`super::enter`].
pub unsafe fn send_listener(to: c_int, listener: c_int) -> bool {
    // SAFETY: in the child, as our own contract says.
    unsafe { send_fd(to, listener, SENT_LISTENER) }
}

/// Send descriptor `fd` with the one byte `tag` over the unix socket `to`.
///
/// # Safety
/// In the child, as [`super::enter`].
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
