//! Each task directory's manifest (SPEC §15): what a later process needs to
//! answer for the command after this one is gone.
//!
//! The manifest is two JSON lines, kept as two extended attributes of the
//! task directory where the filesystem has them (else as the lines of
//! `manifest.json`): one written when the command's
//! supervisor takes it up (before its process exists) — argv, cwd, label,
//! session, start time and the logs' identities — and a second line
//! appended when it settles, before the settled state is published: state,
//! exit code or signal, error, duration, byte counts, usage and limit. A
//! manifest with only the first line is a command whose host died before it
//! settled. An attribute is set whole; the file is created exclusively
//! (0600) beside the logs, relative to the held log base and following no
//! link, each line one `write` to an `O_APPEND` file, so a reader sees whole
//! lines. Nothing in it is
//! trusted without the checks of [`super::recover`].

#[cfg(unix)]
use std::os::fd::AsFd;

#[cfg(unix)]
use rustix::fs::{Mode, OFlags};
// Windows keeps no extended attributes: the manifest is always the file.
#[cfg(windows)]
#[path = "manifest_windows.rs"]
mod windows;
use serde_json::json;
#[cfg(unix)]
use serde_json::Value;
#[cfg(windows)]
use windows::{append_settled, dir_of, put};

use super::record::{Record, State};
use crate::process::signals;
use crate::sync::Unpoisoned;

/// The manifest's file name in a task directory.
pub const FILE: &str = crate::text::logfile::MANIFEST_FILE;

/// The manifest format this engine writes and reads.
pub const VERSION: u64 = 1;

/// Benchmark-only: set, no manifest is written (the same run measures a
/// start → settle with and without one).
pub const OFF_VAR: &str = "NEUROLINK_COMMANDS_BENCH_NO_MANIFEST";

fn off() -> bool {
    static OFF: std::sync::LazyLock<bool> =
        std::sync::LazyLock::new(|| std::env::var_os(OFF_VAR).is_some());
    *OFF
}

/// The task directory's attributes holding the two lines, where the
/// filesystem keeps them: an attribute costs no inode (on ext4 a new inode
/// is a measurable part of a start), the file is the fallback.
pub const START_XATTR: &str = "user.neurolink-commands.manifest";
/// See [`START_XATTR`].
pub const SETTLE_XATTR: &str = "user.neurolink-commands.settled";

#[cfg(unix)]
fn dir_of(rec: &Record) -> rustix::io::Result<std::os::fd::OwnedFd> {
    rustix::fs::openat(
        &rec.logs_root.fd,
        rec.task_id().as_str(),
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Write `v` as the attribute `name` of `dir`, else append it as a line of
/// the file (created exclusively with the first line).
#[cfg(unix)]
fn put(dir: &std::os::fd::OwnedFd, name: &str, v: &Value, first: bool) {
    let mut line = v.to_string();
    // Small lines go to the attribute (ext4 keeps about 4 KiB of them).
    if line.len() <= 3072
        && rustix::fs::fsetxattr(dir, name, line.as_bytes(), rustix::fs::XattrFlags::CREATE).is_ok()
    {
        return;
    }
    line.push('\n');
    let flags = if first {
        OFlags::CREATE | OFlags::EXCL | OFlags::APPEND
    } else {
        OFlags::APPEND
    };
    if let Ok(fd) = rustix::fs::openat(
        dir,
        FILE,
        flags | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    ) {
        let _ = rustix::io::write(fd.as_fd(), line.as_bytes());
    }
}

/// Write the first line (best effort: a command whose manifest cannot be
/// written still runs; it is just not recoverable).
pub fn started(rec: &Record) {
    if rec.hidden || off() {
        return;
    }
    let Ok(dir) = dir_of(rec) else {
        return;
    };
    put(
        &dir,
        START_XATTR,
        &json!({
            "v": VERSION,
            "taskId": rec.task_id(),
            "argv": &*rec.argv,
            "cwd": &*rec.cwd,
            "label": rec.label(),
            "session": &*rec.session,
            "startedAt": rec.started_at_ms,
            // As strings: a fingerprint does not fit a JSON number exactly.
            "idents": [rec.idents[0].to_string(), rec.idents[1].to_string()],
            "confined": rec.confined,
            "containment": rec.containment.as_str(),
        }),
        true,
    );
}

/// Append the settle line (the state and refs are set, not yet published).
pub fn settled(rec: &Record) {
    if rec.hidden || off() {
        return;
    }
    let Ok(dir) = dir_of(rec) else {
        return;
    };
    let live = rec.live.locked();
    let duration = live.ended.map_or(0.0, |e| {
        e.saturating_duration_since(rec.started).as_secs_f64() * 1000.0
    });
    let mut v = json!({
        "state": live.state.as_str(),
        "durationMs": duration,
        "bytes": [rec.log(crate::text::capture::Stream::Stdout).bytes(), rec.log(crate::text::capture::Stream::Stderr).bytes()],
        "killed": live.killed,
    });
    let o = v.as_object_mut().expect("an object");
    if let Some(c) = live.exit_code {
        o.insert("exitCode".into(), json!(c));
    }
    if let Some(s) = live.signal {
        o.insert("signal".into(), json!(signals::name(s)));
    }
    if let Some(e) = &live.error {
        o.insert("error".into(), json!(e));
    }
    if let Some(u) = live.usage.usage() {
        let mut usage = json!({ "cpuMs": u.cpu_ms });
        if let Some(p) = u.peak_memory_bytes {
            usage["peakMemoryBytes"] = json!(p);
        }
        o.insert("usage".into(), usage);
    }
    if let Some(k) = live.usage.limit() {
        o.insert("limit".into(), json!(k.as_str()));
    }
    drop(live);
    append_settled(&dir, &v);
}

/// Append the settle line: to the file when the start line is there (too
/// long for the attribute), else as the settle attribute.
#[cfg(unix)]
fn append_settled(dir: &std::os::fd::OwnedFd, v: &Value) {
    // A start line in the file (too long for the attribute) takes its
    // settle line there too.
    let in_file = rustix::fs::fgetxattr(dir, START_XATTR, &mut [0u8; 0][..]).is_err();
    if in_file {
        let mut line = v.to_string();
        line.push('\n');
        if let Ok(fd) = rustix::fs::openat(
            dir,
            FILE,
            OFlags::APPEND | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            let _ = rustix::io::write(fd.as_fd(), line.as_bytes());
        }
        return;
    }
    put(dir, SETTLE_XATTR, v, false);
}

/// A settled state by its name.
pub fn state_named(s: &str) -> Option<State> {
    [
        State::Exited,
        State::Killed,
        State::Timeout,
        State::OutputLimit,
    ]
    .into_iter()
    .find(|st| st.as_str() == s)
}
