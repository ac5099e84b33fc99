//! Confined commands' private temp directories: made, and one made ahead
//! of time for the next confined start.

use std::path::{Path, PathBuf};

use super::plan::Plan;

/// The private temp directory made ahead of time for the next confined
/// start (its path names the base it is in).
static PREMADE: std::sync::Mutex<Premade> = std::sync::Mutex::new(Premade {
    dir: None,
    closed: false,
});

/// The directory made ahead, and whether the host is exiting (then no more
/// are made: one made after the exit's cleanup would be left behind).
struct Premade {
    dir: Option<PathBuf>,
    closed: bool,
}

/// Makes private temp directory names unique within this process.
static TMP_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A new private temp directory under `base`: mode 0700, made exclusively,
/// named `neurolink-commands-tmp-<pid>-<n>`.
pub fn make_private_tmp(base: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let n = TMP_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = base.join(format!("neurolink-commands-tmp-{}-{n}", std::process::id()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// The private temp directory made ahead under `base`, when there is one
/// and it is still as it was made (a directory, not a link, of this user,
/// mode 0700); `None` sends the caller to [`make_private_tmp`].
///
/// A confined start's directory is made this way off the start's path: the
/// engine's spawner thread makes the next one once a confined process is
/// spawned (a mkdir costs tens of microseconds on a busy ext4 `/tmp`).
pub fn take_private_tmp(base: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dir = PREMADE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .dir
        .take()?;
    let fits = dir.parent() == Some(base)
        && std::fs::symlink_metadata(&dir).is_ok_and(|m| {
            m.file_type().is_dir()
                && m.mode() & 0o7777 == 0o700
                && m.uid() == rustix::process::geteuid().as_raw()
        });
    if fits {
        return Some(dir);
    }
    let _ = std::fs::remove_dir(&dir);
    None
}

/// Make the next confined start's private temp directory under `base`,
/// unless one is waiting already.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) fn premake_private_tmp(base: &Path) {
    // Made under the lock: the exit's cleanup either finds it in the slot or
    // comes first and closes the slot, so none is left behind.
    let mut slot = PREMADE.lock().unwrap_or_else(|e| e.into_inner());
    if slot.closed || slot.dir.is_some() {
        return;
    }
    slot.dir = make_private_tmp(base).ok();
}

/// Remove the directory made ahead, if any, and make no more (the host
/// process is exiting).
pub fn discard_premade() {
    let dir = {
        let mut slot = PREMADE.lock().unwrap_or_else(|e| e.into_inner());
        slot.closed = true;
        slot.dir.take()
    };
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir(dir);
    }
}

/// The base a plan's private temp directory is in.
pub(super) fn tmp_base(plan: &Plan) -> Option<PathBuf> {
    plan.private_tmp
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
}
