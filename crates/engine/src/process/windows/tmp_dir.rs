//! A confined command's private temp directory: confinement is not offered
//! on Windows (every confined start is refused first, SPEC §14), so none is
//! ever made here.

use std::path::{Path, PathBuf};

use super::plan::Plan;

/// No private temp directory on Windows.
pub fn make_private_tmp(_base: &Path) -> std::io::Result<PathBuf> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "confinement (and its private temp directory) is not offered on Windows",
    ))
}

/// None made ahead.
pub fn take_private_tmp(_base: &Path) -> Option<PathBuf> {
    None
}

/// Nothing made ahead to discard.
pub fn discard_premade() {}

/// No base for private temp directories.
pub(super) fn tmp_base(_plan: &Plan) -> Option<PathBuf> {
    None
}
