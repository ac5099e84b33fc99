//! Linux: `clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP)`, for the
//! clone-based spawn ([`super::vfork`]) of a command that has a cgroup of
//! its own ([`super::cgroup`]).
//!
//! Born in its cgroup, the child needs no migration: moving a process
//! between cgroups takes the kernel's global lock that every fork on the
//! machine reads, and in a burst of starts those migrations queue behind
//! each other and behind every fork. The C library has no `clone3` wrapper
//! that runs a function on a new stack, so the system call is made here: in
//! the child, which the kernel starts on the given stack, the same
//! registers are used to call the child's function; it never returns (it
//! execs or `_exit`s), and if it did the child would exit.
//!
//! Where `clone3` or `CLONE_INTO_CGROUP` is missing (Linux < 5.7, a
//! container's seccomp profile answering ENOSYS, an architecture without
//! the code below) the caller falls back to `clone` and the child enters its
//! cgroup itself.

use std::os::raw::{c_int, c_long, c_void};

/// The kernel's `struct clone_args` (version 2, 88 bytes).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// `CLONE_INTO_CGROUP` (Linux 5.7).
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// Create a child that shares this thread's memory on `stack` (`size`
/// bytes), born in the cgroup whose directory is open at `cgroup`, and run
/// `f(arg)` in it; this thread is suspended until the child has exec'd or
/// exited. Returns the child's pid, or the negative errno.
///
/// # Safety
/// As `clone(CLONE_VM | CLONE_VFORK)`: `stack` is memory no one else uses
/// until the child has exec'd or exited, `f` runs no code that relies on
/// thread-local state of the parent and never returns but by exec or
/// `_exit`, and `arg` stays valid for it.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub unsafe fn spawn_into(
    f: extern "C" fn(*mut c_void) -> c_int,
    arg: *mut c_void,
    stack: *mut u8,
    size: usize,
    cgroup: c_int,
    namespaces: c_int,
) -> c_long {
    let args = CloneArgs {
        flags: (libc::CLONE_VM | libc::CLONE_VFORK | namespaces) as u64 | CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack as u64,
        stack_size: size as u64,
        cgroup: cgroup as u64,
        ..Default::default()
    };
    let ret: c_long;
    // The assembly: the parent gets the system call's result back in the
    // return register and continues; the child (result 0) starts on the
    // new stack, whose top the kernel computes from `stack` and
    // `stack_size` (16-byte aligned: the caller aligns it), with the other
    // registers as the parent had them — so the function and its argument,
    // in callee-saved registers, are still there to call — and ends with
    // `exit` should the function ever return.
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract (a private stack, an `f` that only
    // execs or exits, a live `arg`) is what the child needs; `args` lives
    // on this frame for the whole call.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r12",
            "call r13",
            "mov edi, eax",
            "mov eax, 60",
            "syscall",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") &args as *const CloneArgs,
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") arg,
            in("r13") f,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as for x86_64 above.
    unsafe {
        std::arch::asm!(
            "svc 0",
            "cbnz x0, 2f",
            "mov x29, xzr",
            "mov x0, x20",
            "blr x21",
            "mov x8, 93",
            "svc 0",
            "brk 0",
            "2:",
            in("x8") libc::SYS_clone3,
            inlateout("x0") &args as *const CloneArgs => ret,
            in("x1") std::mem::size_of::<CloneArgs>(),
            in("x20") arg,
            in("x21") f,
            options(nostack),
        );
    }
    ret
}

/// Elsewhere: not available (the caller falls back to `clone`).
///
/// # Safety
/// None needed; it does nothing.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub unsafe fn spawn_into(
    _f: extern "C" fn(*mut c_void) -> c_int,
    _arg: *mut c_void,
    _stack: *mut u8,
    _size: usize,
    _cgroup: c_int,
    _namespaces: c_int,
) -> c_long {
    -(libc::ENOSYS as c_long)
}
