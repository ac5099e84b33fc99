//! Each task directory's manifest (SPEC §15): what a later process needs to
//! answer for the command after this one is gone.
//!
//! `manifest.json` holds one JSON line written when the command's
//! supervisor takes it up (before its process exists) — argv, cwd, label,
//! session, start time and the logs' identities — and a second line
//! appended when it settles, before the settled state is published: state,
//! exit code or signal, error, duration, byte counts, usage and limit. A
//! manifest with only the first line is a command whose host died before it
//! settled. The file is created exclusively (0600) beside the logs, relative
//! to the held log base and following no link; each line is one `write` to
//! an `O_APPEND` file, so a reader sees whole lines. Nothing in it is
//! trusted without the checks of [`super::recover`].

use std::os::fd::AsFd;

use rustix::fs::{Mode, OFlags};
use serde_json::{json, Value};

use super::record::{Record, State};
use crate::process::signals;

/// The manifest's file name in a task directory.
pub const FILE: &str = "manifest.json";

/// The manifest format this engine writes and reads.
pub const VERSION: u64 = 1;

fn open(rec: &Record, flags: OFlags) -> rustix::io::Result<std::os::fd::OwnedFd> {
    let dir = rustix::fs::openat(
        &rec.logs_root.fd,
        rec.task_id().as_str(),
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::fs::openat(
        &dir,
        FILE,
        flags | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
}

fn append(fd: impl AsFd, v: &Value) {
    let mut line = v.to_string();
    line.push('\n');
    let _ = rustix::io::write(fd, line.as_bytes());
}

/// Write the first line (best effort: a command whose manifest cannot be
/// written still runs; it is just not recoverable).
pub fn started(rec: &Record) {
    if rec.hidden {
        return;
    }
    let Ok(fd) = open(rec, OFlags::CREATE | OFlags::EXCL | OFlags::APPEND) else {
        return;
    };
    append(
        &fd,
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
    );
}

/// Append the settle line (the state and refs are set, not yet published).
pub fn settled(rec: &Record) {
    if rec.hidden {
        return;
    }
    let Ok(fd) = open(rec, OFlags::APPEND) else {
        return;
    };
    let live = rec.live.lock().unwrap();
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
    if let Some(u) = live.usage {
        let mut usage = json!({ "cpuMs": u.cpu_ms });
        if let Some(p) = u.peak_memory_bytes {
            usage["peakMemoryBytes"] = json!(p);
        }
        o.insert("usage".into(), usage);
    }
    if let Some(k) = live.limit {
        o.insert("limit".into(), json!(k.as_str()));
    }
    drop(live);
    append(&fd, &v);
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
