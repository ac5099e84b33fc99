//! The manifest on Windows: no extended attributes, so both lines go to the
//! task directory's `manifest.json`, created exclusively with the first
//! line (never through a reparse point) and appended to at settle.

use std::io::Write;
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;

use super::FILE;
use crate::jobs::record::Record;

/// The task directory (held open by the log base, which cannot be renamed
/// while held).
pub fn dir_of(rec: &Record) -> std::io::Result<PathBuf> {
    Ok(rec.logs_root.path.join(rec.task_id().as_str()))
}

/// Append `v` as a line of the manifest file (created exclusively with the
/// first line); `_name` is the attribute Unix would try first.
pub fn put(dir: &Path, _name: &str, v: &Value, first: bool) {
    let mut line = v.to_string();
    line.push('\n');
    let mut o = std::fs::OpenOptions::new();
    o.append(true).custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    if first {
        o.create_new(true);
    }
    if let Ok(mut f) = o.open(dir.join(FILE)) {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Append the settle line.
pub fn append_settled(dir: &Path, v: &Value) {
    put(dir, "", v, false);
}
