//! A confined command's private temp directory and the list of those
//! not yet removed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// The private temp directories of one engine's commands that have not
/// settled.
#[derive(Debug, Default)]
pub struct PrivateTmps(Mutex<Vec<PathBuf>>);

impl PrivateTmps {
    fn live(&self) -> MutexGuard<'_, Vec<PathBuf>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The owner is going away and its commands are being stopped: remove
    /// the private temp directories of those that have not settled (their
    /// supervisors will not run again to do it).
    pub fn remove_unsettled(&self) {
        let dirs = std::mem::take(&mut *self.live());
        for dir in dirs {
            remove_tmp(&dir);
        }
    }
}

/// A confined command's private temp directory: removed (without following
/// symlinks) when dropped, which the supervisor does just before it
/// publishes the settled state — or, for a command still running when the
/// host process exits, by [`PrivateTmps::remove_unsettled`].
#[derive(Debug)]
pub struct PrivateTmp(PathBuf, Arc<PrivateTmps>);

impl PrivateTmp {
    /// Take charge of `dir`, a private temp directory just made, listed in
    /// `list` until it is removed.
    pub fn new(dir: PathBuf, list: &Arc<PrivateTmps>) -> Self {
        list.live().push(dir.clone());
        PrivateTmp(dir, list.clone())
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        {
            let mut live = self.1.live();
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
fn remove_tmp(dir: &Path) -> bool {
    std::fs::remove_dir(dir).is_ok() || std::fs::remove_dir_all(dir).is_ok()
}
