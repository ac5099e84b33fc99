//! The log base and task directories on Windows (SPEC §14 "Logs"), through
//! the Win32 layer (`nlc_windows::logdir`): the base under `%TEMP%` is
//! trusted only when it is a real directory (no junction or symbolic link)
//! owned by this user whose ACL grants no one else access, and it is held
//! open without delete sharing; each task directory is created with a
//! protected ACL (its owner and SYSTEM only) and checked the same way; logs
//! are created exclusively, never through a reparse point, and every later
//! open refuses a file whose identity (volume serial, file index) is not
//! the recorded one. The writer's marker is a file (Windows
//! has no user extended attributes).

use std::fs::File;
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use nlc_windows::logdir;
use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;

use super::{
    identify_sized, left_behind, looks_like_task_id, own_marker, Candidate, Foreign, Ident,
    LogBase, LogGone, Made, MakeError, MANIFEST_FILE,
};

/// Create `path` (owner and SYSTEM only) if it is missing, then open and
/// check it.
pub fn try_dir(path: &Path) -> Candidate {
    if let Some(parent) = path.parent() {
        if let Err(e) = std::fs::create_dir_all(parent) {
            return Candidate::Failed(e);
        }
    }
    match logdir::create_trusted(path) {
        Ok(Ok(b)) => Candidate::Trusted(LogBase {
            path: path.to_path_buf(),
            fd: b.into_handle(),
        }),
        Ok(Err(why)) => Candidate::Untrusted(why),
        Err(e) => Candidate::Failed(e),
    }
}

/// The rule a log directory must meet to be trusted, as a refusal states it.
pub(super) const BASE_RULE: &str = "A log directory must be a real directory (not a junction or symbolic link) owned by this user whose ACL grants no one else access";

/// The variable naming the temporary directory the default base is under.
pub(super) const TMP_VAR: &str = "TEMP";

/// What tells this user's default base from another's: the user name, kept
/// to characters any file name takes.
pub(super) fn user_suffix() -> String {
    std::env::var("USERNAME")
        .unwrap_or_else(|_| "user".into())
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect()
}

/// Make `<base>/<name>` (owner and SYSTEM only) with its writer's marker
/// file and both logs, created exclusively.
pub fn make_task_dir(base: &LogBase, name: &str, logs: [&str; 2]) -> Result<Made, MakeError> {
    let dir_path = base.path.join(name);
    if dir_path.exists() {
        return Err((
            dir_path,
            "directory",
            io::Error::from(io::ErrorKind::AlreadyExists),
        ));
    }
    let dir = match logdir::create_trusted(&dir_path) {
        Ok(Ok(d)) => d,
        Ok(Err(why)) => return Err((dir_path, "directory", io::Error::other(why))),
        Err(e) => return Err((dir_path, "directory", e)),
    };
    let create = |n: &str| {
        logdir::create_log(&dir, n)
            .map(|(f, _)| f)
            .map_err(|e| (dir_path.join(n), "file", e))
    };
    drop(create(own_marker())?);
    let mut files = Vec::with_capacity(2);
    let mut idents = [0; 2];
    for (i, n) in logs.iter().enumerate() {
        let f = create(n)?;
        idents[i] = identify_sized(&f)
            .map(|(id, _, _)| id)
            .map_err(|e| (dir_path.join(n), "file", e))?;
        files.push(f);
    }
    let [a, b]: [File; 2] = files.try_into().expect("two logs");
    Ok(Made {
        files: [a, b],
        idents,
    })
}

/// Open `<base>/<dir>/<file>` for reading, not through a reparse point,
/// and only if it is the file with identity `want`. Returns the file and
/// its length.
pub fn open_log(base: &LogBase, dir: &str, file: &str, want: Ident) -> io::Result<(File, u64)> {
    let shown = base.path.join(dir).join(file);
    let plain = |s: &str| !s.is_empty() && !s.contains(['\\', '/', ':', '\0']) && s != "..";
    if !plain(dir) || !plain(file) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a log path", shown.display()),
        ));
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(&shown)?;
    let (got, ino, len) = identify_sized(&f)?;
    if got != want {
        return Err(LogGone::Replaced(format!(
            "The log {} was replaced (the file there, index {ino}, is not the one the runner created, by volume and file index): none of it is returned",
            shown.display()
        ))
        .into_io());
    }
    Ok((f, len))
}

/// Remove `<base>/<dir>`: the given files, the marker and the manifest,
/// then the directory. Returns whether the directory is gone.
pub fn remove_task_dir(base: &LogBase, dir: &str, files: [&str; 2]) -> bool {
    let d = base.path.join(dir);
    for f in files.iter().copied().chain([own_marker(), MANIFEST_FILE]) {
        let _ = std::fs::remove_file(d.join(f));
    }
    match std::fs::remove_dir(&d) {
        Ok(()) => true,
        Err(e) => e.kind() == io::ErrorKind::NotFound,
    }
}

/// Task directories under `base` whose writer is gone (see the Unix
/// version): their marker file names a process that no longer runs, or
/// they have none and nothing in them changed for `unmarked_after`.
pub fn abandoned(
    base: &LogBase,
    unmarked_after: Duration,
    older_than: Option<Duration>,
) -> Vec<Foreign> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&base.path) else {
        return out;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // A junction or link in the base is never followed.
        if !looks_like_task_id(&name) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(inner) = std::fs::read_dir(entry.path()) else {
            continue;
        };
        let mtime = |m: &std::fs::Metadata| {
            m.modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as i64)
        };
        let mut newest = entry.metadata().map(|m| mtime(&m)).unwrap_or(0);
        let mut marker = None;
        let mut bytes = 0u64;
        for e in inner.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(".writer-") {
                marker = Some(n);
                continue;
            }
            if let Ok(m) = e.metadata() {
                if m.is_file() {
                    bytes += m.len();
                }
                newest = newest.max(mtime(&m));
            }
        }
        if left_behind(now, newest, marker.as_deref(), unmarked_after, older_than) {
            out.push(Foreign { name, bytes });
        }
    }
    out
}

/// Remove a directory an ended process left (its files, then itself);
/// false if something stayed.
pub fn remove_foreign(base: &LogBase, name: &str) -> bool {
    let d = base.path.join(name);
    // Not through a junction: only a real directory's files are removed.
    if std::fs::symlink_metadata(&d).map_or(true, |m| !m.is_dir() || m.file_type().is_symlink()) {
        return false;
    }
    if let Ok(inner) = std::fs::read_dir(&d) {
        for e in inner.flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    std::fs::remove_dir(&d).is_ok()
}
