//! Windows has no cgroups: a command's tree is its Job Object (see
//! [`super::spawn`]), so no command ever has a cgroup here. The types keep
//! the shape shared code uses; none of them can be made.

use crate::platform::BorrowedFd;

/// One command's cgroup: none exists on Windows ([`Cgroup::take`] makes
/// none, and nothing else can).
#[derive(Debug)]
pub struct Cgroup {
    _none: (),
}

const NONE: &str = "no cgroup exists on Windows";

/// A command's cgroup as the spawn takes it (never made on Windows: the
/// fields keep the shape shared code builds).
#[derive(Debug, Clone, Copy)]
pub struct Handle<'a> {
    /// The cgroup's directory.
    pub dir: BorrowedFd<'a>,
    /// Its `cgroup.procs`.
    pub procs: BorrowedFd<'a>,
    /// Further `cgroup.procs`.
    pub extra: [Option<BorrowedFd<'a>>; 2],
}

/// [`Handle`], owned (never made on Windows).
#[derive(Debug)]
pub struct OwnedHandle {
    never: Never,
}

#[derive(Debug, Clone, Copy)]
enum Never {}

impl OwnedHandle {
    /// Borrowed, as the spawn takes it.
    pub fn handle(&self) -> Handle<'_> {
        match self.never {}
    }
}

/// Where commands' cgroups would live: nowhere on Windows.
pub fn base_path() -> Option<&'static std::path::Path> {
    None
}

/// What a start attaches to its cgroup (never, on Windows).
pub trait Attached: std::fmt::Debug + Send + Sync + std::any::Any {}

impl Cgroup {
    /// Its directory (unreachable).
    pub fn dir(&self) -> BorrowedFd<'_> {
        unreachable!("{NONE}")
    }

    /// Attach its limits (unreachable).
    pub fn attach_limits(&mut self, _l: Box<dyn Attached>) {
        unreachable!("{NONE}")
    }

    /// The limits attached to it (unreachable).
    pub fn limits(&self) -> Option<&dyn Attached> {
        unreachable!("{NONE}")
    }

    /// No cgroup on Windows: the Job Object is the tree.
    pub fn take() -> Option<Cgroup> {
        None
    }

    /// Borrowed descriptors (unreachable).
    pub fn handle(&self) -> Handle<'_> {
        unreachable!("{NONE}")
    }

    /// Owned descriptors (unreachable).
    pub fn owned_handle(&self) -> std::io::Result<OwnedHandle> {
        unreachable!("{NONE}")
    }

    /// Signal everything inside (unreachable).
    pub fn signal(&self, _sig: i32, _group: i32) {
        unreachable!("{NONE}")
    }

    /// Give it back (unreachable).
    pub fn release(self) {
        unreachable!("{NONE}")
    }
}
