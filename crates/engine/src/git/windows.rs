//! The git toolset's path rules on Windows (SPEC §14): finding `git`
//! through the absolute `PATH` entries and `PATHEXT`, real paths in the form
//! the cwd check uses (no `\\?\` prefix), the lenient resolution of a
//! model's path, and the values of the hardening overrides that name files.
//!
//! Windows resolves `..` lexically before it touches the file system (and so
//! does Git for Windows with a pathspec), so a model's path is made absolute
//! lexically first, then its nearest existing ancestor is resolved through
//! its links and junctions.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::errors::{EngineError, EngineResult};

/// What the file-naming overrides (`mailmap.file`, `core.attributesFile`,
/// …) point at: the null device, which reads as empty from any directory.
/// `/dev/null` is no name for it to a native Windows program.
pub const NULL_FILE: &str = "NUL";

/// The value of `core.hooksPath` on Windows: the git executable's own path.
/// It is a file, so no `<hooksPath>\<hook>` can exist below it; a fixed path
/// such as `\dev\null` would name a directory any user may create at the
/// root of a drive.
pub fn hooks_path(git_executable: &str) -> &str {
    git_executable
}

/// The absolute entries of a `PATH` value, in order, joined by `;`.
pub fn absolute_entries(path: &str) -> String {
    path.split(';')
        .map(|d| d.trim().trim_matches('"'))
        .filter(|d| Path::new(d).is_absolute())
        .collect::<Vec<_>>()
        .join(";")
}

/// The git executable as an absolute path (see `run::resolve_executable`):
/// an absolute path is completed by `PATHEXT` when it names no file as
/// given (`C:\Git\cmd\git` → `git.exe`); a bare name is looked up in the
/// absolute entries of `path`, each name of `PATHEXT` in turn; any other
/// path (`.\git`, `bin\git`, `\git`, `C:git`) would resolve against the
/// repository or the current drive and is refused.
pub fn resolve_executable(
    name: &str,
    path: Option<&OsStr>,
    pathext: Option<&str>,
) -> EngineResult<String> {
    let is_file = |p: &Path| p.is_file();
    if Path::new(name).is_absolute() {
        let found = if Path::new(name).is_file() {
            None
        } else {
            nlc_windows::search::find_program(name, None, pathext, is_file)
        };
        return Ok(found.map_or_else(|| name.to_string(), |p| p.to_string_lossy().into_owned()));
    }
    if name.contains(['\\', '/', ':']) {
        return Err(EngineError::BadInput(format!(
            "gitExecutable {name:?} is a relative path, which would resolve inside the repository or on the current drive: \
             pass an absolute path such as \"C:\\Program Files\\Git\\cmd\\git.exe\" or a bare name such as \"git\" (looked up in PATH and PATHEXT)"
        )));
    }
    let mut skipped = Vec::new();
    for dir in path.map(std::env::split_paths).into_iter().flatten() {
        if !dir.is_absolute() {
            skipped.push(format!("{:?}", dir.to_string_lossy()));
            continue;
        }
        let dir = dir.to_string_lossy();
        if let Some(found) = nlc_windows::search::find_program(name, Some(&dir), pathext, is_file) {
            return Ok(found.to_string_lossy().into_owned());
        }
    }
    let skipped = if skipped.is_empty() {
        String::new()
    } else {
        format!(
            " (relative or empty entries are skipped: {})",
            skipped.join(", ")
        )
    };
    Err(EngineError::BadInput(format!(
        "gitExecutable {name:?} was not found in any absolute PATH entry with any PATHEXT extension{skipped}: \
         pass its absolute path (e.g. \"C:\\Program Files\\Git\\cmd\\git.exe\") or fix PATH"
    )))
}

/// `p` without a `\\?\` (or `\\?\UNC\`) prefix, the form the cwd check's
/// real paths take.
fn plain(p: PathBuf) -> PathBuf {
    let s = p.as_os_str().to_string_lossy();
    if let Some(rest) = s.strip_prefix(r"\\?\UNC\") {
        return PathBuf::from(format!(r"\\{rest}"));
    }
    match s.strip_prefix(r"\\?\") {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => PathBuf::from(rest),
        _ => p,
    }
}

/// The real path of an existing file or directory (links and junctions
/// followed), without the `\\?\` prefix.
pub fn canonical(p: &Path) -> io::Result<PathBuf> {
    std::fs::canonicalize(p).map(plain)
}

/// Resolve `path` (absolute) as Windows opens it: `.` and `..` lexically,
/// then the nearest existing ancestor through its links and junctions, the
/// missing rest appended as given.
pub fn resolve_lenient(path: &Path) -> io::Result<PathBuf> {
    let full = std::path::absolute(path)?;
    let mut rest: Vec<OsString> = Vec::new();
    let mut cur = full.as_path();
    loop {
        if let Ok(real) = canonical(cur) {
            let mut out = real;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return Ok(out);
        }
        match (cur.file_name(), cur.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                cur = parent;
            }
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "no part of the path exists",
                ))
            }
        }
    }
}

/// A repository-relative path as git takes it: components joined by `/`.
pub fn slashed(relative: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for c in relative.components() {
        match c {
            Component::Normal(n) => parts.push(n.to_str()?.to_string()),
            _ => return None,
        }
    }
    Some(parts.join("/"))
}
