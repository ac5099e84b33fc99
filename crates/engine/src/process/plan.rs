//! What one confined start applies, resolved before the process exists:
//! the level, the path rules and the device nodes.

use std::path::PathBuf;

/// How much of the confinement a policy asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Level {
    /// Landlock, seccomp and the namespace sandbox (SPEC §8 in full).
    #[default]
    Full,
    /// Landlock and seccomp only, on a host that refuses user namespaces:
    /// the gaps the documentation lists remain.
    Landlock,
}

/// How a rule grants a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Read and execute files, list directories.
    Read,
    /// Everything, recursively.
    Write,
    /// Read and write an existing file (a device node), or the files below a
    /// directory of device nodes (`/dev/pts`), without creating any.
    Device,
}

/// A path inside a write tree that the view protects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    /// The path (real directories up to its last component).
    pub path: PathBuf,
    /// Pinned — a mount point of itself, which cannot be renamed or
    /// removed, its content writable (a repository's `.git`, the
    /// directories holding one) — rather than read-only.
    pub pin: bool,
    /// Its file type when the plan was made (`S_IFDIR`, `S_IFREG` or
    /// `S_IFLNK`): a path of another type by the time the view is built
    /// fails the start.
    pub kind: u32,
}

/// The rules one confined start applies, resolved before the process exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The fixed system paths (program and system trees, device nodes) and
    /// how they are granted: opened the first time, kept for every later
    /// start.
    pub system: std::sync::Arc<[(PathBuf, Grant)]>,
    /// Other paths and how they are granted; a path missing when the
    /// ruleset is built is not granted.
    pub rules: Vec<(PathBuf, Grant)>,
    /// The command's private temp directory (writable), opened afresh:
    /// unlike the other paths, its descriptor is not kept for later starts.
    pub private_tmp: Option<PathBuf>,
    /// Whether the network stays reachable.
    pub network: bool,
    /// Paths inside write trees kept read-only or pinned, in the order they
    /// are bound (a directory before what it holds).
    pub protect: Vec<Protected>,
    /// The level asked for.
    pub level: Level,
}

/// Device nodes a command needs (standard streams, the controlling
/// terminal, randomness): granted by the Landlock rules, bound into the
/// namespace sandbox's `/dev`.
pub const DEVICE_NODES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Told how many more sockets a command was refused (see [`count_refusals`](super::confine::count_refusals)).
pub type Counter = Box<dyn Fn(u32) + Send + Sync>;
