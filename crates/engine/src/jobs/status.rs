//! What a status says: the [`Status`] a caller gets, built fresh from a
//! record by `Record::status` in [`super::record`] (which re-exports these),
//! and the texts it spells: the confinement notes and the removal time.

use std::time::Duration;

use super::live::{ArtifactRef, State};

/// A status, built fresh on each call.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Task id.
    pub task_id: String,
    /// Label.
    pub label: String,
    /// Public state.
    pub state: State,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Ending signal's name.
    pub signal: Option<String>,
    /// Milliseconds from start to end (or to now).
    pub duration_ms: f64,
    /// Bytes in stdout.log.
    pub stdout_bytes: f64,
    /// Bytes in stderr.log.
    pub stderr_bytes: f64,
    /// Banked stdout.
    pub stdout: Option<ArtifactRef>,
    /// Banked stderr.
    pub stderr: Option<ArtifactRef>,
    /// The end of both streams, ≤ 2000 characters.
    pub tail_preview: String,
    /// What went wrong.
    pub error: Option<String>,
    /// Whether it runs under kernel confinement.
    pub confined: bool,
    /// How much of its tree the runner reaches.
    pub containment: crate::process::Containment,
    /// What its confinement refused it, each note naming the way out
    /// (SPEC §8 "What it was refused"); empty when nothing was.
    pub confinement_notes: Vec<String>,
    /// Whether its input takes writes (`stdin: "pipe"` or a terminal, not
    /// ended, not closed by the command, not settled).
    pub stdin_open: bool,
    /// Whether it is blocked reading its input and printed nothing for
    /// `inputWaitMs` (`None` where the platform cannot tell).
    pub waiting_for_input: Option<bool>,
    /// Whether the logs were removed (budget, age, prune).
    pub logs_removed: bool,
    /// What its tree used (settled, where measurable).
    pub usage: Option<crate::process::limits::Usage>,
    /// The resource limit that stopped it.
    pub limit: Option<crate::process::limits::Kind>,
    /// Whether it was recovered from an earlier process's manifest.
    pub recovered: bool,
}

/// The preview budget of a status, in UTF-16 units.
pub const TAIL_UNITS: usize = 2000;

/// Epoch milliseconds as an ISO 8601 UTC time, e.g. `2026-12-01T11:42:05.123Z`.
pub fn iso_utc(ms: f64) -> String {
    let total = ms.max(0.0) as i64;
    let (secs, milli) = (total.div_euclid(1000), total.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// What a command's confinement refused it (see
/// [`Status::confinement_notes`]), from the counts of refused sockets and
/// of refused connects to unix sockets outside its write trees.
pub(super) fn confinement_notes(refused_sockets: u16, refused_unix: u16) -> Vec<String> {
    // A saturated count reads as "65535 or more".
    let counted = |n: u16| {
        let shown = if n == u16::MAX {
            format!("{n} or more")
        } else {
            n.to_string()
        };
        if n == 1 {
            (shown, "attempt", "was")
        } else {
            (shown, "attempts", "were")
        }
    };
    let mut notes = Vec::new();
    if refused_sockets != 0 {
        let (n, attempts, were) = counted(refused_sockets);
        notes.push(format!(
            "network is off: {n} connection {attempts} {were} refused (a confined command may open unix sockets only); allow network with the policy's confine.network: true"
        ));
    }
    if refused_unix != 0 {
        let (n, attempts, were) = counted(refused_unix);
        notes.push(format!(
            "{n} connection {attempts} to a unix socket outside the write trees {were} refused (a daemon's socket is not reachable from a confined command); to allow one, make the socket's directory a write tree with the policy's confine.write"
        ));
    }
    notes
}

/// A duration in whole milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_millis() as f64
}
