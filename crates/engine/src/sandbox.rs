//! The cwd sandbox. A directory is opened first and its real location is read
//! back from the open descriptor, so what is checked is exactly what the child
//! enters (through `/proc/self/fd/<n>`): swapping a path component for a
//! symlink between the check and the spawn cannot move the child elsewhere.

use std::ffi::CString;
use std::fs;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::errors::{clip, EngineError, EngineResult};

/// A directory that passed the sandbox check, held open by descriptor.
#[derive(Debug)]
pub struct HeldDir {
    /// The open directory.
    pub fd: OwnedFd,
    /// Its real path, as the kernel reports it for the descriptor.
    pub real: PathBuf,
}

impl HeldDir {
    /// The path a child process can `chdir` to in order to enter exactly this directory.
    pub fn proc_path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }
}

/// The real path of the sandbox root, which must be an existing directory.
pub fn real_root(root: &str) -> EngineResult<PathBuf> {
    let real = fs::canonicalize(root).map_err(|e| {
        EngineError::Sandbox(format!(
            "cwdRoot {:?} is not an existing directory ({}): set the policy's cwdRoot to a directory that exists",
            clip(root),
            os_reason(&e)
        ))
    })?;
    if !real.is_dir() {
        return Err(EngineError::Sandbox(format!(
            "cwdRoot {root:?} (real path {real:?}) is not a directory: set the policy's cwdRoot to a directory"
        )));
    }
    Ok(real)
}

/// Open `cwd` (relative paths resolve against the real root) and check that
/// its real path is the real root or below it, compared by path components.
pub fn enter(root: &str, cwd: &str) -> EngineResult<HeldDir> {
    let root_real = real_root(root)?;
    if cwd.contains('\0') {
        return Err(EngineError::Sandbox(format!(
            "cwd {:?} contains a NUL character, which no path can hold: pass an existing directory inside the permitted root {root_real:?}",
            clip(cwd)
        )));
    }
    let joined = if Path::new(cwd).is_absolute() {
        PathBuf::from(cwd)
    } else {
        root_real.join(cwd)
    };
    let fd = open_dir(&joined).map_err(|e| {
        if crate::errors::out_of_fds(&e) {
            return EngineError::Other(format!(
                "cwd {:?} could not be opened: {}. The host process has run out of file descriptors (each running command holds about five): let commands finish or raise the limit (ulimit -n), then start it again.",
                clip(cwd),
                os_reason(&e)
            ));
        }
        EngineError::Sandbox(format!(
            "cwd {:?} (resolved to {:?}) cannot be used as a working directory: {}; pass an existing directory inside the permitted root {root_real:?}",
            clip(cwd),
            clip(&joined.to_string_lossy()),
            os_reason(&e)
        ))
    })?;
    let real = crate::platform::fd_path(fd.as_fd()).map_err(|e| {
        EngineError::Sandbox(format!(
            "cannot read back where cwd {cwd:?} resolved: {}",
            os_reason(&e)
        ))
    })?;
    if !real.starts_with(&root_real) {
        return Err(EngineError::Sandbox(format!(
            "cwd {cwd:?} resolves to {real:?}, which is outside the permitted root {root_real:?}: pass a directory inside cwdRoot (symlinks are followed before the check)"
        )));
    }
    Ok(HeldDir { fd, real })
}

fn open_dir(path: &Path) -> std::io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c` is a valid NUL-terminated path; the returned descriptor is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by open(2) and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An OS error without Rust's "(os error N)" suffix.
pub fn os_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn inside_outside_and_escapes() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("root");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::create_dir_all(base.path().join("root-evil")).unwrap();
        symlink("/etc", root.join("etc-link")).unwrap();
        symlink(root.join("sub"), root.join("sub-link")).unwrap();
        let r = root.to_str().unwrap();
        let real = fs::canonicalize(&root).unwrap();

        assert_eq!(enter(r, ".").unwrap().real, real);
        assert_eq!(enter(r, "sub").unwrap().real, real.join("sub"));
        assert_eq!(enter(r, "sub-link").unwrap().real, real.join("sub"));
        assert_eq!(
            enter(r, real.join("sub").to_str().unwrap()).unwrap().real,
            real.join("sub")
        );

        for bad in [
            "etc-link",
            "..",
            "../root-evil",
            "/etc",
            "sub/../../root-evil",
        ] {
            let e = enter(r, bad).unwrap_err().to_string();
            assert!(e.contains("outside the permitted root"), "{bad}: {e}");
            assert!(e.contains(real.to_str().unwrap()), "{e}");
        }
        let e = enter(r, "missing").unwrap_err().to_string();
        assert!(e.contains("No such file or directory"), "{e}");
        let e = enter("/definitely/not/here", ".").unwrap_err().to_string();
        assert!(e.contains("cwdRoot"), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_path_enters_the_held_directory() {
        let d = tempfile::tempdir().unwrap();
        let held = enter(d.path().to_str().unwrap(), ".").unwrap();
        assert_eq!(fs::canonicalize(held.proc_path()).unwrap(), held.real);
    }
}
