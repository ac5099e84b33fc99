//! Where logs live and how they are opened (SPEC §2 "The log directory is
//! trusted, and so are the logs", §13).
//!
//! A [`LogBase`] is a directory this process keeps task directories in. It is
//! used only when it is a real directory (not a symlink) owned by the host's
//! user and not writable by group or others; the check is made on a
//! descriptor opened without following links, and that descriptor is held, so
//! every later step (creating a task directory, creating or opening a log) is
//! relative to the directory that passed the check, never a path resolved
//! again. Logs are created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`) and their
//! (device, inode) is recorded; a later open follows no link (neither for the
//! task directory nor for the log) and refuses a file whose identity differs.
//!
//! Each task directory also names the process that writes it
//! (`.writer-<pid>-<start time>`), so a sweep can tell directories of a live
//! process from those an ended process left behind: in an extended attribute
//! of the directory ([`WRITER_XATTR`]), which costs no inode, or, on a
//! filesystem without user attributes, as an empty marker file in it.

use crate::sync::Unpoisoned;
use std::fmt;

use crate::errors::EngineError;
use crate::platform::{AsFd, OwnedFd};
use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

#[cfg(unix)]
use rustix::fs::{self as rfs, Mode, OFlags};

// Windows: the same rules through the Win32 layer's ACL check, exclusive
// creation that never follows a reparse point, and (volume, file index)
// identities.
#[cfg(windows)]
#[path = "logfile_windows.rs"]
mod windows;
#[cfg(windows)]
pub use windows::{abandoned, make_task_dir, open_log, remove_foreign, remove_task_dir, try_dir};
#[cfg(windows)]
use windows::{user_suffix, BASE_RULE, TMP_VAR};

/// The rule a log directory must meet to be trusted, as a refusal states it.
#[cfg(unix)]
const BASE_RULE: &str = "A log directory must be a real directory (not a symlink) owned by this user and not writable by group or others";

/// The variable naming the temporary directory the default base is under.
#[cfg(unix)]
const TMP_VAR: &str = "TMPDIR";

/// What tells this user's default base from another's: the uid.
#[cfg(unix)]
fn user_suffix() -> String {
    rustix::process::geteuid().as_raw().to_string()
}

/// A log could not be handed out: it was removed on purpose, or the file at
/// its place is not the one the runner created. Carried inside an
/// [`io::Error`] so every read path reports it; the jobs layer turns it into
/// its coded refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogGone {
    /// The logs were removed (budget, age, prune); the message says when and why.
    Removed(String),
    /// The file at the log's place is not the log (another file, a symlink, a
    /// swapped directory); the message says what was found.
    Replaced(String),
}

impl fmt::Display for LogGone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogGone::Removed(m) | LogGone::Replaced(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LogGone {}

impl LogGone {
    /// As an `io::Error`.
    pub fn into_io(self) -> io::Error {
        io::Error::other(self)
    }

    /// The `LogGone` inside an `io::Error`, if it carries one.
    pub fn of(e: &io::Error) -> Option<&LogGone> {
        e.get_ref().and_then(|x| x.downcast_ref::<LogGone>())
    }
}

/// A directory that passed the trust rule, held open.
#[derive(Debug)]
pub struct LogBase {
    /// Its path, as messages spell it.
    pub path: PathBuf,
    /// The directory itself, opened without following links.
    pub fd: OwnedFd,
}

/// Why a directory is not trusted, or `None` when it is.
#[cfg(unix)]
fn distrust(fd: &OwnedFd) -> io::Result<Option<String>> {
    let st = rfs::fstat(fd)?;
    let uid = rustix::process::geteuid().as_raw();
    if st.st_uid != uid {
        return Ok(Some(format!(
            "it is owned by uid {}, not by this process's user (uid {uid})",
            st.st_uid
        )));
    }
    let mode = st.st_mode & 0o7777;
    if mode & 0o022 != 0 {
        return Ok(Some(format!(
            "it is writable by {} (mode {mode:04o})",
            if mode & 0o002 != 0 {
                "others"
            } else {
                "its group"
            }
        )));
    }
    Ok(None)
}

/// Open `path` as a directory without following a link at its last
/// component, and check the trust rule on what was opened.
/// `Ok(Err(why))`: it exists but is not trusted.
#[cfg(unix)]
fn open_trusted(path: &Path) -> io::Result<Result<OwnedFd, String>> {
    match rfs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => Ok(match distrust(&fd)? {
            None => Ok(fd),
            Some(why) => Err(why),
        }),
        Err(rustix::io::Errno::LOOP) => Ok(Err("it is a symbolic link".into())),
        Err(rustix::io::Errno::NOTDIR) => {
            // Either the path itself or a parent is not a directory.
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => Ok(Err("it is a symbolic link".into())),
                Ok(_) => Ok(Err("it is not a directory".into())),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// What trying one candidate directory gave.
pub enum Candidate {
    /// Trusted and held.
    Trusted(LogBase),
    /// It exists but fails the rule (why).
    Untrusted(String),
    /// It could not be created or opened (the OS error).
    Failed(io::Error),
}

/// Create `path` (mode 0700, parents too) if it is missing, then open and check it.
#[cfg(unix)]
pub fn try_dir(path: &Path) -> Candidate {
    if let Err(e) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
    {
        // An existing non-directory or dangling link makes create fail with
        // EEXIST; the open below names what is there.
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Candidate::Failed(e);
        }
    }
    match open_trusted(path) {
        Ok(Ok(fd)) => Candidate::Trusted(LogBase {
            path: path.to_path_buf(),
            fd,
        }),
        Ok(Err(why)) => Candidate::Untrusted(why),
        Err(e) => Candidate::Failed(e),
    }
}

/// Why no base directory could be had.
#[derive(Debug)]
pub enum BaseError {
    /// The directory could not be created or opened.
    Os(PathBuf, io::Error),
    /// Every candidate exists but fails the trust rule; the message says why.
    Untrusted(String),
}

/// Check a directory a host named (created 0700 if missing).
pub fn named_base(path: &Path) -> Result<LogBase, BaseError> {
    match try_dir(path) {
        Candidate::Trusted(b) => Ok(b),
        Candidate::Failed(e) => Err(BaseError::Os(path.to_path_buf(), e)),
        Candidate::Untrusted(why) => Err(BaseError::Untrusted(format!(
            "The log directory {} is not trusted: {why}. {BASE_RULE}",
            path.display()
        ))),
    }
}

/// The default base under `tmpdir`: `neurolink-commands` when it is trusted,
/// else `neurolink-commands-<uid>` (on Windows `-<user name>`).
pub fn default_base(tmpdir: &Path) -> Result<LogBase, BaseError> {
    let first = tmpdir.join("neurolink-commands");
    let why_first = match try_dir(&first) {
        Candidate::Trusted(b) => return Ok(b),
        Candidate::Failed(e) => return Err(BaseError::Os(first, e)),
        Candidate::Untrusted(why) => why,
    };
    let second = tmpdir.join(format!("neurolink-commands-{}", user_suffix()));
    match try_dir(&second) {
        Candidate::Trusted(b) => Ok(b),
        Candidate::Failed(e) => Err(BaseError::Os(second, e)),
        Candidate::Untrusted(why) => Err(BaseError::Untrusted(format!(
            "No trusted log directory under {}: {} is not usable ({why_first}) and neither is {} ({why}). {BASE_RULE}; remove them or point {TMP_VAR} or NEUROLINK_COMMANDS_LOG_DIR elsewhere",
            tmpdir.display(),
            first.display(),
            second.display()
        ))),
    }
}

/// The bases resolved so far, by the path they were resolved for.
/// The key says whether it is a default base (keyed by its tmpdir) or a named one.
type Key = (bool, PathBuf);
type Held = Vec<(Key, Arc<LogBase>)>;
static BASES: LazyLock<Mutex<Held>> = LazyLock::new(Default::default);

/// The held base for `key` (a tmpdir or a configured directory), resolving
/// it with `resolve` on first use or when `stale` (the held directory was
/// removed: its task directories cannot be created any more).
pub fn cached_base<E>(
    named: bool,
    key: &Path,
    stale: bool,
    resolve: impl FnOnce() -> Result<LogBase, E>,
) -> Result<Arc<LogBase>, E> {
    let mut bases = BASES.locked();
    if let Some(i) = bases.iter().position(|((n, k), _)| *n == named && k == key) {
        if !stale {
            return Ok(bases[i].1.clone());
        }
        bases.remove(i);
    }
    let b = Arc::new(resolve()?);
    bases.push(((named, key.to_path_buf()), b.clone()));
    Ok(b)
}

/// Every base resolved so far.
pub fn known_bases() -> Vec<Arc<LogBase>> {
    BASES.locked().iter().map(|(_, b)| b.clone()).collect()
}

/// The extended attribute of a task directory whose value is its writer's
/// marker name.
pub const WRITER_XATTR: &str = "user.neurolink-commands.writer";

/// This process's marker name: `.writer-<pid>-<start time in clock ticks>`.
pub fn own_marker() -> &'static str {
    static MARK: LazyLock<String> = LazyLock::new(|| {
        let pid = std::process::id();
        format!(".writer-{pid}-{}", start_time(pid as i32).unwrap_or(0))
    });
    &MARK
}

/// A process's start time (on Linux field 22 of its `/proc` stat), if it exists.
pub fn start_time(pid: i32) -> Option<u64> {
    crate::platform::start_time(pid)
}

/// Whether a marker name names a process that is still running.
pub fn marker_alive(name: &str) -> Option<bool> {
    let rest = name.strip_prefix(".writer-")?;
    let (pid, start) = rest.split_once('-')?;
    let pid: i32 = pid.parse().ok()?;
    let start: u64 = start.parse().ok()?;
    Some(pid > 0 && start_time(pid) == Some(start))
}

/// A log's identity: a 64-bit fingerprint of (device, inode, birth time in
/// ns), 8 bytes per stream in a record kept for the life of the process. The
/// birth time tells a new file apart from the log when the filesystem hands
/// the freed inode number straight to the replacement (0 where the
/// filesystem keeps no birth time).
pub type Ident = u64;

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The identity of an open file, and its inode number (for messages).
pub fn ident_of(fd: impl AsFd) -> io::Result<Ident> {
    identify(fd).map(|(id, _)| id)
}

fn identify(fd: impl AsFd) -> io::Result<(Ident, u64)> {
    identify_sized(fd).map(|(id, ino, _)| (id, ino))
}

/// The identity of an open file, its inode number and its length, from one
/// call (statx on Linux, fstat's st_birthtime on macOS).
fn identify_sized(fd: impl AsFd) -> io::Result<(Ident, u64, u64)> {
    let (dev, ino, born, size) = crate::platform::file_id(fd)?;
    Ok((mix(dev ^ mix(ino ^ mix(born))), ino, size))
}

/// A task directory made under `base`, with both logs created exclusively.
pub struct Made {
    /// stdout.log and stderr.log, open for writing.
    pub files: [File; 2],
    /// Their identities.
    pub idents: [Ident; 2],
}

/// What failed while making a task directory: which path, and the error.
pub type MakeError = (PathBuf, &'static str, io::Error);

/// Make `<base>/<name>` (0700) naming its writer (the attribute, else the
/// marker file) with both logs (0600), all relative to the held base and
/// without following links.
#[cfg(unix)]
pub fn make_task_dir(base: &LogBase, name: &str, logs: [&str; 2]) -> Result<Made, MakeError> {
    let dir_path = base.path.join(name);
    let fail_dir = |e: rustix::io::Errno| (dir_path.clone(), "directory", io::Error::from(e));
    rfs::mkdirat(&base.fd, name, Mode::from_raw_mode(0o700)).map_err(fail_dir)?;
    let dir = rfs::openat(
        &base.fd,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(fail_dir)?;
    let create = |n: &str| {
        rfs::openat(
            &dir,
            n,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| (dir_path.join(n), "file", io::Error::from(e)))
    };
    // The writer named in an attribute of the directory: on ext4 without a
    // journal, whose allocator steps over every inode freed in the last
    // minutes, one inode less is about a quarter of the directory's cost.
    if rfs::fsetxattr(
        &dir,
        WRITER_XATTR,
        own_marker().as_bytes(),
        rfs::XattrFlags::CREATE,
    )
    .is_err()
    {
        drop(create(own_marker())?);
    }
    let mut files = Vec::with_capacity(2);
    let mut idents = [0; 2];
    for (i, n) in logs.iter().enumerate() {
        let fd = create(n)?;
        idents[i] = ident_of(&fd).map_err(|e| (dir_path.join(n), "file", e))?;
        files.push(File::from(fd));
    }
    let [a, b]: [File; 2] = files.try_into().expect("two logs");
    Ok(Made {
        files: [a, b],
        idents,
    })
}

/// Open `<base>/<dir>/<file>` for reading, following no link on the way
/// (`dir` and `file` are single components, each opened with `O_NOFOLLOW`
/// relative to the one before), and only if it is the file with identity
/// `want`. Returns the file and its length.
///
/// The common case takes one `openat2` that refuses every symbolic link
/// (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`) and one
/// `statx`; whatever that open refuses is opened again step by step, so the
/// refusal names what was found.
#[cfg(unix)]
pub fn open_log(base: &LogBase, dir: &str, file: &str, want: Ident) -> io::Result<(File, u64)> {
    #[cfg(target_os = "linux")]
    if !dir.contains('/') && !file.contains('/') {
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        let mut rel = String::with_capacity(dir.len() + 1 + file.len());
        rel.push_str(dir);
        rel.push('/');
        rel.push_str(file);
        if let Ok(f) = rfs::openat2(
            &base.fd,
            rel.as_str(),
            flags,
            Mode::empty(),
            rfs::ResolveFlags::BENEATH
                | rfs::ResolveFlags::NO_SYMLINKS
                | rfs::ResolveFlags::NO_MAGICLINKS,
        ) {
            let (got, _, len) = identify_sized(f.as_fd())?;
            if got == want {
                return Ok((File::from(f), len));
            }
        }
    }
    open_log_stepwise(base, dir, file, want)
}

/// [`open_log`] one component at a time, each refusal spelled out.
#[cfg(unix)]
fn open_log_stepwise(
    base: &LogBase,
    dir: &str,
    file: &str,
    want: Ident,
) -> io::Result<(File, u64)> {
    let shown = || base.path.join(dir).join(file);
    let replaced = |what: String| {
        LogGone::Replaced(format!(
            "The log {} was replaced ({what}): it is not the file the runner created, so none of it is returned",
            shown().display()
        ))
        .into_io()
    };
    let d = match rfs::openat(
        &base.fd,
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(d) => d,
        Err(rustix::io::Errno::LOOP) | Err(rustix::io::Errno::NOTDIR) => {
            return Err(replaced(
                "its task directory is now a symbolic link or not a directory".into(),
            ))
        }
        Err(e) => return Err(e.into()),
    };
    let f = match rfs::openat(
        &d,
        file,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(f) => f,
        Err(rustix::io::Errno::LOOP) => return Err(replaced("it is now a symbolic link".into())),
        Err(e) => return Err(e.into()),
    };
    let (got, ino, len) = identify_sized(f.as_fd())?;
    if got != want {
        return Err(replaced(format!(
            "the file there (inode {ino}) is not the one the runner created, by device, inode and birth time"
        )));
    }
    Ok((File::from(f), len))
}

/// A task directory's manifest file, where its attributes cannot hold it
/// (see the jobs layer's manifest).
pub const MANIFEST_FILE: &str = "manifest.json";

/// Remove `<base>/<dir>`: the given files and the marker, then the directory
/// (relative to the held base, following no link). Returns whether the
/// directory is gone.
#[cfg(unix)]
pub fn remove_task_dir(base: &LogBase, dir: &str, files: [&str; 2]) -> bool {
    if let Ok(d) = rfs::openat(
        &base.fd,
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        // The manifest file, where attributes could not hold it, goes too.
        for f in files.iter().copied().chain([own_marker(), MANIFEST_FILE]) {
            let _ = rfs::unlinkat(&d, f, rfs::AtFlags::empty());
        }
    }
    match rfs::unlinkat(&base.fd, dir, rfs::AtFlags::REMOVEDIR) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => true,
        Err(_) => false,
    }
}

/// A directory another process (or an earlier run) left under a base.
#[derive(Debug)]
pub struct Foreign {
    /// Its name under the base.
    pub name: String,
    /// Bytes of the regular files in it.
    pub bytes: u64,
}

/// Task directories under `base` whose writer is gone: their marker (the
/// attribute or the file) names a process that no longer runs, or they have
/// no marker and nothing in them
/// changed for `unmarked_after` (directories of a version without markers).
/// With `older_than`, only those in which nothing changed for that long
/// either. Never this process's own, never a live process's.
#[cfg(unix)]
pub fn abandoned(
    base: &LogBase,
    unmarked_after: std::time::Duration,
    older_than: Option<std::time::Duration>,
) -> Vec<Foreign> {
    let mut out = Vec::new();
    let Ok(fd) = rfs::openat(
        &base.fd,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return out;
    };
    let Ok(dir) = rfs::Dir::read_from(&fd) else {
        return out;
    };
    let now = std::time::SystemTime::now();
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !looks_like_task_id(&name) {
            continue;
        }
        let Ok(sub) = rfs::openat(
            &base.fd,
            name.as_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let Ok(inner) = rfs::Dir::read_from(&sub) else {
            continue;
        };
        let mut marker: Option<String> = None;
        let mut bytes = 0u64;
        let mut newest = rfs::fstat(&sub).map(|s| s.st_mtime).unwrap_or(0);
        for e in inner.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n == "." || n == ".." {
                continue;
            }
            if n.starts_with(".writer-") {
                marker = Some(n);
                continue;
            }
            if let Ok(st) = rfs::statat(&sub, n.as_str(), rfs::AtFlags::SYMLINK_NOFOLLOW) {
                if st.st_mode & 0o170000 == 0o100000 {
                    bytes += st.st_size as u64;
                }
                newest = newest.max(st.st_mtime);
            }
        }
        if marker.is_none() {
            marker = writer_attribute(&sub);
        }
        if left_behind(now, newest, marker.as_deref(), unmarked_after, older_than) {
            out.push(Foreign { name, bytes });
        }
    }
    out
}

/// Whether a task directory last changed at `newest` (epoch seconds) was
/// left by an ended process and is past `older_than`: its writer's marker
/// names a process that is gone (never this one), or it has no marker and
/// has been unchanged for `unmarked_after`. The one verdict of every
/// platform's [`abandoned`].
fn left_behind(
    now: std::time::SystemTime,
    newest: i64,
    marker: Option<&str>,
    unmarked_after: std::time::Duration,
    older_than: Option<std::time::Duration>,
) -> bool {
    // Seconds since anything in it changed (0 when the clock is odd).
    let age = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64 - newest)
        .unwrap_or(0);
    old_enough(age, older_than)
        && match marker {
            Some(m) if m == own_marker() => false,
            Some(m) => marker_alive(m) == Some(false),
            None => age >= unmarked_after.as_secs() as i64,
        }
}

/// Whether a directory unchanged for `age_secs` is past `older_than` (none:
/// any age). Ages are whole seconds (mtimes are read at that precision), so
/// a limit is met only once the whole seconds reach it.
fn old_enough(age_secs: i64, older_than: Option<std::time::Duration>) -> bool {
    older_than.is_none_or(|d| age_secs >= 0 && (age_secs as u128) * 1000 >= d.as_millis())
}

/// The writer a directory's attribute names, if it has one.
#[cfg(unix)]
fn writer_attribute(dir: &OwnedFd) -> Option<String> {
    let mut buf = [0u8; 64];
    let n = rfs::fgetxattr(dir, WRITER_XATTR, &mut buf[..]).ok()?;
    let name = std::str::from_utf8(buf.get(..n)?).ok()?;
    name.starts_with(".writer-").then(|| name.to_string())
}

/// Remove a directory an ended process left (every entry, then itself),
/// relative to the held base; false if something stayed.
#[cfg(unix)]
pub fn remove_foreign(base: &LogBase, name: &str) -> bool {
    let Ok(sub) = rfs::openat(
        &base.fd,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    if let Ok(inner) = rfs::Dir::read_from(&sub) {
        for e in inner.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n == "." || n == ".." {
                continue;
            }
            // Task directories hold files only; a directory inside is left alone.
            let _ = rfs::unlinkat(&sub, n.as_str(), rfs::AtFlags::empty());
        }
    }
    rfs::unlinkat(&base.fd, name, rfs::AtFlags::REMOVEDIR).is_ok()
}

/// `c<digits><12 lowercase hex>`: the shape of a task id.
fn looks_like_task_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 13
        && b[0] == b'c'
        && b[1..b.len() - 12].iter().all(u8::is_ascii_digit)
        && b[b.len() - 12..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// A log that was removed or replaced as its coded refusal, else `otherwise`.
pub fn log_error(e: &std::io::Error, otherwise: impl FnOnce() -> EngineError) -> EngineError {
    match LogGone::of(e) {
        Some(LogGone::Removed(m)) => EngineError::LogsRemoved(m.clone()),
        Some(LogGone::Replaced(m)) => EngineError::LogReplaced(m.clone()),
        None => otherwise(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_directory_writable_by_others_or_a_symlink_is_not_trusted() {
        let d = tempfile::tempdir().unwrap();
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(
            matches!(try_dir(&open), Candidate::Untrusted(w) if w.contains("writable by others"))
        );
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path(), &link).unwrap();
        assert!(matches!(try_dir(&link), Candidate::Untrusted(w) if w.contains("symbolic link")));
        let fine = d.path().join("fine");
        assert!(matches!(try_dir(&fine), Candidate::Trusted(_)));
        assert_eq!(
            std::fs::metadata(&fine).unwrap().permissions().mode() & 0o777,
            0o700
        );
        // The default falls back to the per-uid directory.
        let t = d.path().join("tmp");
        std::fs::create_dir_all(t.join("neurolink-commands")).unwrap();
        std::fs::set_permissions(
            t.join("neurolink-commands"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        let b = default_base(&t).ok().unwrap();
        let uid = rustix::process::geteuid().as_raw();
        assert_eq!(b.path, t.join(format!("neurolink-commands-{uid}")));
    }

    #[test]
    fn logs_are_opened_only_when_they_are_the_files_created() {
        let d = tempfile::tempdir().unwrap();
        let Candidate::Trusted(base) = try_dir(&d.path().join("b")) else {
            panic!()
        };
        let made = make_task_dir(&base, "c1aaaaaaaaaaaa", ["stdout.log", "stderr.log"])
            .ok()
            .unwrap();
        let id = made.idents[0];
        assert!(open_log(&base, "c1aaaaaaaaaaaa", "stdout.log", id).is_ok());
        // Control: the other log's identity is refused for this one.
        assert!(open_log(&base, "c1aaaaaaaaaaaa", "stdout.log", made.idents[1]).is_err());
        let p = base.path.join("c1aaaaaaaaaaaa/stdout.log");
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &p).unwrap();
        let e = open_log(&base, "c1aaaaaaaaaaaa", "stdout.log", id).unwrap_err();
        assert!(
            matches!(LogGone::of(&e), Some(LogGone::Replaced(m)) if m.contains("symbolic link")),
            "{e}"
        );
        assert!(remove_task_dir(
            &base,
            "c1aaaaaaaaaaaa",
            ["stdout.log", "stderr.log"]
        ));
        assert!(!base.path.join("c1aaaaaaaaaaaa").exists());
        assert!(looks_like_task_id("c12abcdef012345") && !looks_like_task_id("c12abcdef01234g"));
    }

    #[test]
    fn the_writer_is_named_without_an_inode_and_a_sweep_reads_either_marker() {
        let d = tempfile::tempdir().unwrap();
        let Candidate::Trusted(base) = try_dir(&d.path().join("b")) else {
            panic!()
        };
        let logs = ["stdout.log", "stderr.log"];
        drop(make_task_dir(&base, "c1aaaaaaaaaaaa", logs).ok().unwrap());
        let dir = base.path.join("c1aaaaaaaaaaaa");
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        let held = open_dir_fd(&dir);
        let attribute = writer_attribute(&held);
        // Whether this filesystem takes user attributes, asked of another
        // directory beside it: where it does (ext4, tmpfs since Linux 6.6,
        // APFS) the writer must be named by the attribute.
        let probe = base.path.join("probe");
        std::fs::create_dir(&probe).unwrap();
        let takes = rfs::fsetxattr(
            open_dir_fd(&probe),
            "user.neurolink-commands.probe",
            b"1",
            rfs::XattrFlags::CREATE,
        )
        .is_ok();
        std::fs::remove_dir(&probe).unwrap();
        assert_eq!(attribute.is_some(), takes, "{names:?}");
        // Named by the attribute, the directory holds the two logs and
        // nothing else.
        if attribute.is_some() {
            assert_eq!(attribute.as_deref(), Some(own_marker()));
            let mut sorted = names.clone();
            sorted.sort();
            assert_eq!(sorted, ["stderr.log", "stdout.log"]);
        } else {
            assert!(names.iter().any(|n| n == own_marker()), "{names:?}");
        }
        // Directories of an ended writer, named either way, are the sweep's;
        // this process's and a live one's (pid 1) are not.
        let ended = ".writer-999999999-1";
        let live = format!(".writer-1-{}", start_time(1).unwrap());
        let make = |name: &str, writer: &str, as_file: bool| {
            let p = base.path.join(name);
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("stdout.log"), b"12345").unwrap();
            if as_file {
                std::fs::write(p.join(writer), b"").unwrap();
            } else {
                rfs::fsetxattr(
                    open_dir_fd(&p),
                    WRITER_XATTR,
                    writer.as_bytes(),
                    rfs::XattrFlags::CREATE,
                )
                .unwrap();
            }
        };
        make("c2aaaaaaaaaaaa", ended, true);
        make("c4aaaaaaaaaaaa", &live, true);
        if attribute.is_some() {
            make("c3aaaaaaaaaaaa", ended, false);
            make("c5aaaaaaaaaaaa", &live, false);
        }
        let mut gone: Vec<(String, u64)> =
            abandoned(&base, std::time::Duration::from_secs(3600), None)
                .into_iter()
                .map(|f| (f.name, f.bytes))
                .collect();
        gone.sort();
        let mut want = vec![("c2aaaaaaaaaaaa".to_string(), 5)];
        if attribute.is_some() {
            want.push(("c3aaaaaaaaaaaa".to_string(), 5));
        }
        assert_eq!(gone, want);
        for (name, _) in &gone {
            assert!(remove_foreign(&base, name));
            assert!(!base.path.join(name).exists());
        }
    }

    #[test]
    fn with_an_age_only_an_ended_writers_directory_unchanged_that_long_is_the_sweeps() {
        let d = tempfile::tempdir().unwrap();
        let Candidate::Trusted(base) = try_dir(&d.path().join("b")) else {
            panic!()
        };
        let week = std::time::Duration::from_secs(7 * 24 * 3600);
        let ended = ".writer-999999999-1";
        let live = format!(".writer-1-{}", start_time(1).unwrap());
        // A directory with its writer's marker file and a log, everything in
        // it last changed `ago` before now.
        let make = |name: &str, writer: &str, ago: std::time::Duration| {
            let p = base.path.join(name);
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("stdout.log"), b"123").unwrap();
            std::fs::write(p.join(writer), b"").unwrap();
            let t = std::time::SystemTime::now() - ago;
            for f in [p.join("stdout.log"), p.join(writer), p.clone()] {
                let times = std::fs::FileTimes::new().set_modified(t).set_accessed(t);
                File::open(&f).unwrap().set_times(times).unwrap();
            }
        };
        let hour = std::time::Duration::from_secs(3600);
        make("c1aaaaaaaaaaaa", ended, week + hour);
        make("c2aaaaaaaaaaaa", ended, week - hour);
        make("c3aaaaaaaaaaaa", &live, 4 * week);
        let names = |older: Option<std::time::Duration>| {
            let mut v: Vec<String> = abandoned(&base, hour, older)
                .into_iter()
                .map(|f| f.name)
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(Some(week)), ["c1aaaaaaaaaaaa"]);
        // Control: without an age both of the ended writer's are taken, the
        // live one's never.
        assert_eq!(names(None), ["c1aaaaaaaaaaaa", "c2aaaaaaaaaaaa"]);
        assert!(old_enough(2, Some(std::time::Duration::from_millis(1500))));
        assert!(!old_enough(1, Some(std::time::Duration::from_millis(1500))));
        assert!(!old_enough(-5, Some(std::time::Duration::ZERO)) && old_enough(-5, None));
    }

    fn open_dir_fd(p: &Path) -> OwnedFd {
        rfs::open(
            p,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap()
    }
}
