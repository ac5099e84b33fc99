//! The cwd check (no kernel sandbox: it decides only where a command
//! starts). A directory is opened first and its real location is read back
//! from the open descriptor, so what is checked is exactly what the child
//! enters (by that descriptor): swapping a path component for a symlink
//! between the check and the spawn cannot move the child elsewhere.

use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::errors::os_reason;
use crate::errors::{clip, EngineError, EngineResult};

/// A directory that passed the cwd check, held open by descriptor.
#[derive(Debug)]
pub struct HeldDir {
    /// The open directory.
    pub fd: OwnedFd,
    /// Its real path, as the kernel reports it for the descriptor.
    pub real: PathBuf,
}

/// The real path of the permitted root, which must be an existing directory.
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
    // The root is opened once and its real path read back from that
    // descriptor: an open and a readlink, where realpath reads every
    // component. What that cannot give (a root that is missing, not a
    // directory, or unreadable) is told by `real_root`'s messages.
    let (root_fd, root_real) = match open_root(root) {
        Some(opened) => opened,
        None => {
            let real = real_root(root)?;
            let fd = open_dir(&real).map_err(|e| {
                fds_or(cwd, &e, |why| {
                    EngineError::Sandbox(format!("cwdRoot {real:?} cannot be opened: {why}"))
                })
            })?;
            (fd, real)
        }
    };
    if cwd.contains('\0') {
        return Err(EngineError::Sandbox(format!(
            "cwd {:?} contains a NUL character, which no path can hold: pass an existing directory inside the permitted root {root_real:?}",
            clip(cwd)
        )));
    }
    // The root itself (`.`, or its own absolute path): the directory just
    // opened and read back is the answer.
    let absolute = Path::new(cwd).is_absolute();
    if cwd == "."
        || (absolute && (Path::new(cwd) == Path::new(root) || Path::new(cwd) == root_real))
    {
        return Ok(HeldDir {
            fd: root_fd,
            real: root_real,
        });
    }
    let joined = if absolute {
        PathBuf::from(cwd)
    } else {
        root_real.join(cwd)
    };
    let fd = open_dir(&joined).map_err(|e| {
        fds_or(cwd, &e, |why| {
            EngineError::Sandbox(format!(
                "cwd {:?} (resolved to {:?}) cannot be used as a working directory: {why}; pass an existing directory inside the permitted root {root_real:?}",
                clip(cwd),
                clip(&joined.to_string_lossy()),
            ))
        })
    })?;
    let real = crate::platform::fd_path(fd.as_fd()).map_err(|e| {
        fds_or(cwd, &e, |why| {
            EngineError::Sandbox(format!(
                "cannot read back where cwd {cwd:?} resolved: {why}"
            ))
        })
    })?;
    if !real.starts_with(&root_real) {
        return Err(EngineError::Sandbox(format!(
            "cwd {cwd:?} resolves to {real:?}, which is outside the permitted root {root_real:?}: pass a directory inside cwdRoot (symlinks are followed before the check)"
        )));
    }
    // The path read back is only a string: a directory of another mount
    // namespace (reached through /proc/<pid>/root/…) reads back as a path
    // of that namespace. So the directory is reached again beneath a
    // descriptor of the real root, and must be the same directory (device
    // and inode); the child enters the one reached beneath the root.
    let outside = |why: String| {
        EngineError::Sandbox(format!(
            "cwd {cwd:?} resolves to a directory whose path reads {real:?} but which is not the directory at that path inside the permitted root {root_real:?} ({why}): it is outside the permitted root; pass a directory inside cwdRoot"
        ))
    };
    let rel = real.strip_prefix(&root_real).unwrap_or(Path::new(""));
    let beneath = open_beneath(&root_fd, rel).map_err(|e| fds_or(cwd, &e, outside))?;
    if identity(&fd).ok() != identity(&beneath).ok() {
        return Err(outside("a different device or inode".to_string()));
    }
    Ok(HeldDir { fd: beneath, real })
}

/// The root opened as a directory and its real path as the kernel reports
/// it for the descriptor; `None` when either cannot be had.
fn open_root(root: &str) -> Option<(OwnedFd, PathBuf)> {
    let fd = open_dir(Path::new(root)).ok()?;
    let real = crate::platform::fd_path(fd.as_fd()).ok()?;
    real.is_absolute().then_some((fd, real))
}

/// An OS error met while checking `cwd`: a host out of file descriptors is
/// told so, whichever of the check's opens ran out (the directory is not to
/// blame, and starting again once descriptors are free works); any other
/// error is the refusal `refusal` makes from its reason.
fn fds_or(
    cwd: &str,
    e: &std::io::Error,
    refusal: impl FnOnce(String) -> EngineError,
) -> EngineError {
    if crate::errors::out_of_fds(e) {
        return EngineError::Io(format!(
            "cwd {:?} could not be opened: {}. {}",
            clip(cwd),
            os_reason(e),
            crate::errors::OUT_OF_FDS_ADVICE
        ));
    }
    refusal(os_reason(e))
}

/// (device, inode) of an open file.
fn identity(fd: &OwnedFd) -> std::io::Result<(u64, u64)> {
    let st = rustix::fs::fstat(fd)?;
    Ok((st.st_dev as u64, st.st_ino as u64))
}

/// Open the directory `rel` (a real path relative to the root: no `..`, no
/// symlinks) beneath `root`, never leaving it: `openat2` with
/// `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS`, or, on a
/// kernel without `openat2`, one `openat(O_NOFOLLOW)` per component.
/// (`openat2` is Linux's; macOS always walks the components.)
#[cfg(target_os = "linux")]
fn open_beneath(root: &OwnedFd, rel: &Path) -> std::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let target: &Path = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    match rustix::fs::openat2(
        root,
        target,
        flags,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_SYMLINKS,
    ) {
        Ok(fd) => return Ok(fd),
        Err(e) if e == rustix::io::Errno::NOSYS || e == rustix::io::Errno::PERM => {}
        Err(e) => return Err(e.into()),
    }
    open_by_components(root, rel)
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(root: &OwnedFd, rel: &Path) -> std::io::Result<OwnedFd> {
    open_by_components(root, rel)
}

/// The fallback of [`open_beneath`]: each component opened with
/// `O_NOFOLLOW` from the previous directory, refusing `..`.
fn open_by_components(root: &OwnedFd, rel: &Path) -> std::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    use std::path::Component;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let mut cur = rustix::fs::openat(root, ".", flags, Mode::empty())?;
    for c in rel.components() {
        match c {
            Component::Normal(name) => {
                cur = rustix::fs::openat(&cur, name, flags, Mode::empty())?;
            }
            Component::CurDir => {}
            _ => return Err(std::io::Error::from_raw_os_error(libc::EXDEV)),
        }
    }
    Ok(cur)
}

fn open_dir(path: &Path) -> std::io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // std adds O_CLOEXEC; O_DIRECTORY refuses anything but a directory.
    let dir = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(path)?;
    Ok(dir.into())
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

    #[test]
    fn the_root_itself_through_a_link_its_own_path_or_a_file() {
        let base = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(base.path()).unwrap().join("root");
        fs::create_dir_all(real.join("sub")).unwrap();
        symlink(&real, real.with_file_name("root-link")).unwrap();
        let link = real.with_file_name("root-link");
        let l = link.to_str().unwrap();
        let same =
            |h: &HeldDir| identity(&h.fd).unwrap() == identity(&open_dir(&real).unwrap()).unwrap();
        // Named through a link, by ".", by the root as given and by its real
        // path: the real root, read back, and its descriptor.
        for cwd in [".", l, &format!("{l}/"), real.to_str().unwrap()] {
            let held = enter(l, cwd).unwrap();
            assert_eq!(held.real, real, "{cwd}");
            assert!(same(&held), "{cwd}");
        }
        let sub = enter(&format!("{l}/"), "sub").unwrap();
        assert_eq!(sub.real, real.join("sub"));
        // A file as the root: real_root's message.
        fs::write(real.with_file_name("file"), b"x").unwrap();
        let e = enter(real.with_file_name("file").to_str().unwrap(), ".")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a directory"), "{e}");
    }

    #[test]
    fn the_component_walk_reaches_the_same_directory_as_openat2() {
        let d = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(d.path()).unwrap();
        fs::create_dir_all(real.join("a/b")).unwrap();
        symlink(real.join("a"), real.join("link")).unwrap();
        let root = open_dir(&real).unwrap();
        let walked = open_by_components(&root, Path::new("a/b")).unwrap();
        let direct = open_beneath(&root, Path::new("a/b")).unwrap();
        assert_eq!(identity(&walked).unwrap(), identity(&direct).unwrap());
        // a symlink component is not followed by either
        assert!(open_by_components(&root, Path::new("link/b")).is_err());
        assert!(open_beneath(&root, Path::new("link/b")).is_err());
        assert!(open_by_components(&root, Path::new("../x")).is_err());
    }
}
