//! The cwd check on Windows (SPEC §14 "Working directory"), through the
//! Win32 process layer's held directories (`nlc_windows::dir`): the root
//! and the cwd are opened (following junctions and symbolic links) and
//! held without delete sharing, so neither can be renamed or removed while
//! held; the cwd is inside only when it is on the root's volume and the
//! root's real path is a prefix of its own, component by component. `..`,
//! another drive, a UNC path and a junction out of the root are outside.

use std::path::{Path, PathBuf};

use nlc_windows::dir::HeldDir as Held;

use crate::errors::{clip, os_reason, EngineError, EngineResult};
use crate::platform::OwnedFd;

/// A directory that passed the cwd check, held open by handle.
#[derive(Debug)]
pub struct HeldDir {
    /// The open directory (the start enters the directory it names).
    pub fd: OwnedFd,
    /// Its real path, as the system reports it for the handle.
    pub real: PathBuf,
}

fn open_root(root: &str) -> EngineResult<Held> {
    let held = Held::open(Path::new(root)).map_err(|e| {
        EngineError::Sandbox(format!(
            "cwdRoot {:?} is not an existing directory ({}): set the policy's cwdRoot to a directory that exists",
            clip(root),
            os_reason(&e)
        ))
    })?;
    Ok(held)
}

/// The real path of the permitted root, which must be an existing directory.
pub fn real_root(root: &str) -> EngineResult<PathBuf> {
    open_root(root).map(|h| h.path().to_path_buf())
}

/// Open `cwd` (relative paths resolve against the real root) and check that
/// it is the root or lies below it (see the module docs).
pub fn enter(root: &str, cwd: &str) -> EngineResult<HeldDir> {
    let root_dir = open_root(root)?;
    let root_real = root_dir.path().to_path_buf();
    if cwd.contains('\0') {
        return Err(EngineError::Sandbox(format!(
            "cwd {:?} contains a NUL character, which no path can hold: pass an existing directory inside the permitted root {root_real:?}",
            clip(cwd)
        )));
    }
    let joined = if cwd == "." {
        root_real.clone()
    } else {
        root_real.join(cwd)
    };
    let dir = Held::open(&joined).map_err(|e| {
        EngineError::Sandbox(format!(
            "cwd {:?} (resolved to {:?}) cannot be used as a working directory: {}; pass an existing directory inside the permitted root {root_real:?}",
            clip(cwd),
            clip(&joined.to_string_lossy()),
            os_reason(&e)
        ))
    })?;
    if !root_dir.contains(&dir) {
        let on_volume = if root_dir.id().0 == dir.id().0 {
            ""
        } else {
            " (another volume)"
        };
        return Err(EngineError::Sandbox(format!(
            "cwd {cwd:?} resolves to {:?}{on_volume}, which is outside the permitted root {root_real:?}: pass a directory inside cwdRoot (junctions and symbolic links are followed before the check)",
            dir.path()
        )));
    }
    let real = dir.path().to_path_buf();
    Ok(HeldDir {
        fd: dir.into_handle(),
        real,
    })
}
