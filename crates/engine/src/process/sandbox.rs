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
//!
//! The parts, each in a file of its own under `sandbox/`: the parent's
//! resolution of a plan into the child's steps (`view.rs`), the child's
//! taking of them (`enter.rs`), what the child hands back before its exec
//! (`handoff.rs`) and the holding of its mount namespace (`keeper.rs`).
//! Nothing here starts a process: the spawn ([`super::vfork`]) uses the
//! sandbox, and whether this host can make one at all is measured above
//! both ([`super::probe`]).

mod enter;
mod handoff;
mod keeper;
mod view;

pub use enter::enter;
pub use handoff::{receive_sent, send_listener, send_own_namespace};
pub use keeper::{held_namespaces, hold_namespace};
pub use view::{mediated, Mediation, View};
