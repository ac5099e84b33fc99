//! A confined command's private temp directory and the list of those
//! not yet removed.

/// A confined command's private temp directory: removed (without following
/// symlinks) when dropped, which the supervisor does just before it
/// publishes the settled state — or, for a command still running when the
/// host process exits, by [`remove_unsettled_private_tmps`].
#[derive(Debug)]
pub struct PrivateTmp(std::path::PathBuf);

/// The private temp directories of commands that have not settled.
static UNSETTLED_TMPS: std::sync::Mutex<Vec<std::path::PathBuf>> =
    std::sync::Mutex::new(Vec::new());

fn unsettled_tmps() -> std::sync::MutexGuard<'static, Vec<std::path::PathBuf>> {
    UNSETTLED_TMPS.lock().unwrap_or_else(|e| e.into_inner())
}

impl PrivateTmp {
    /// Take charge of `dir`, a private temp directory just made.
    pub fn new(dir: std::path::PathBuf) -> Self {
        unsettled_tmps().push(dir.clone());
        PrivateTmp(dir)
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        {
            let mut live = unsettled_tmps();
            if let Some(i) = live.iter().position(|d| *d == self.0) {
                live.swap_remove(i);
            }
        }
        if remove_tmp(&self.0) {
            crate::process::confine::tmp_removed(&self.0);
        }
    }
}

/// Remove a private temp directory: most commands leave it empty, and one
/// rmdir removes it; otherwise the whole tree goes.
fn remove_tmp(dir: &std::path::Path) -> bool {
    std::fs::remove_dir(dir).is_ok() || std::fs::remove_dir_all(dir).is_ok()
}

/// The host process is exiting and its commands are being stopped: remove
/// the private temp directories of those that have not settled (their
/// supervisors will not run again to do it).
pub fn remove_unsettled_private_tmps() {
    let dirs = std::mem::take(&mut *unsettled_tmps());
    for dir in dirs {
        remove_tmp(&dir);
    }
}
