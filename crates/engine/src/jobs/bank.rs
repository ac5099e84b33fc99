//! Banking a settled command's streams: through the host's `bankArtifact`
//! (reached via the listener, bounded to 30 s, with a fallback ref that says
//! why), or in the built-in bank, where an artifact is the log file itself.

use crate::sync::Unpoisoned;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use super::record::{ArtifactRef, BankMode, BankOutcome, Link, Record, Refs};
use super::registry::Registry;
use crate::errors::{EngineError, EngineResult};
use crate::runtime::Event;
use crate::text::capture::Stream;
use crate::text::paging::{self, Page, Window};
use crate::text::window::read_all_lossy;

/// Characters of a ref's preview.
pub const PREVIEW_CHARS: usize = 600;
/// How long a host's bank may take before the fallback ref is used.
pub const HOST_BANK_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variable that overrides [`HOST_BANK_TIMEOUT`] (whole
/// milliseconds, > 0), read once per process: tests use it to exercise the
/// bound without waiting 30 seconds.
pub const HOST_BANK_TIMEOUT_ENV: &str = "NEUROLINK_COMMANDS_BANK_TIMEOUT_MS";

/// The bound in force: [`HOST_BANK_TIMEOUT_ENV`] when it holds a positive
/// whole number of milliseconds, else [`HOST_BANK_TIMEOUT`].
pub fn host_bank_timeout() -> Duration {
    static BOUND: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *BOUND.get_or_init(|| parse_bank_timeout(std::env::var(HOST_BANK_TIMEOUT_ENV).ok().as_deref()))
}

fn parse_bank_timeout(v: Option<&str>) -> Duration {
    v.and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(HOST_BANK_TIMEOUT, Duration::from_millis)
}

/// A bound as the fallback hint spells it: "30 seconds", "250ms".
fn spell(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        let s = d.as_secs();
        format!("{s} second{}", if s == 1 { "" } else { "s" })
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The prefix of a built-in artifact id (`nlc-<taskId>-<stream>`).
pub const PREFIX: &str = "nlc-";

/// The built-in artifact id of a stream.
pub fn artifact_id(task_id: &str, s: Stream) -> String {
    format!("{PREFIX}{task_id}-{}", s.name())
}

fn parse_artifact_id(reg: &Registry, id: &str) -> Option<(Arc<Record>, Stream)> {
    let rest = id.strip_prefix(PREFIX)?;
    let (task, stream) = rest.rsplit_once('-')?;
    let s = Stream::parse(stream)?;
    let rec = reg.by_id(task)?;
    (rec.bank == BankMode::BuiltIn && rec.is_settled()).then_some((rec, s))
}

/// The label of a stream's artifact.
pub fn label(rec: &Record, s: Stream) -> String {
    format!("{} [{}]", rec.label(), s.name())
}

fn preview(rec: &Record, s: Stream) -> String {
    match rec.head(s, PREVIEW_CHARS) {
        Ok((text, _)) => text,
        Err(e) if crate::text::logfile::LogGone::of(&e).is_some() => format!("({e})"),
        Err(e) => format!("(the log could not be read: {e})"),
    }
}

/// The ref of a stream in the built-in bank.
pub fn builtin_ref(rec: &Record, s: Stream) -> ArtifactRef {
    let log = rec.log(s);
    let id = artifact_id(&rec.task_id(), s);
    let removed = rec.live.locked().removed.clone();
    if let Some(r) = removed {
        return ArtifactRef {
            read_back_hint: format!(
                "{}: command_output({{ artifactId: \"{id}\" }}) refuses with NLC_LOGS_REMOVED.",
                rec.removal_message(&r)
            ),
            artifact_id: id,
            label: label(rec, s),
            kind: "command-output".into(),
            size_bytes: log.bytes() as f64,
            preview: format!("({})", rec.removal_message(&r)),
        };
    }
    ArtifactRef {
        read_back_hint: format!(
            "The complete {} ({} bytes, {} characters) is banked: read it with command_output({{ artifactId: \"{id}\", offset: 0, limit: {} }}), then again from offset + limit while hasMore is true.",
            s.name(),
            log.bytes(),
            paging::total_units(log),
            paging::DEFAULT_LIMIT
        ),
        artifact_id: id,
        label: label(rec, s),
        kind: "command-output".into(),
        size_bytes: log.bytes() as f64,
        preview: preview(rec, s),
    }
}

/// The ref used when the host's bank gave none.
pub fn fallback_ref(rec: &Record, s: Stream, why: &str) -> ArtifactRef {
    let log = rec.log(s);
    ArtifactRef {
        artifact_id: String::new(),
        label: label(rec, s),
        kind: "command-output".into(),
        size_bytes: log.bytes() as f64,
        preview: preview(rec, s),
        read_back_hint: format!(
            "The artifact could NOT be created: {why}. The complete {} is still in the log file {}; read it with command_output({{ taskId: \"{}\", stream: \"{}\", offset: 0, limit: {} }}).",
            s.name(),
            rec.log_path(s).display(),
            rec.task_id(),
            s.name(),
            paging::DEFAULT_LIMIT
        ),
    }
}

/// Bank both streams of a command whose process has ended. In the built-in
/// bank the log file is the artifact, so nothing is copied or kept: the refs
/// are rebuilt from the finished logs when a status is built.
pub async fn bank(reg: &Registry, rec: &Arc<Record>) -> Refs {
    match rec.bank {
        BankMode::BuiltIn => Refs::BuiltIn,
        BankMode::Host => Refs::Kept(Box::new(host_bank(reg, rec).await)),
    }
}

/// Bank both streams through the host's `bankArtifact`.
async fn host_bank(reg: &Registry, rec: &Arc<Record>) -> [ArtifactRef; 2] {
    let listener = reg.listener_of(rec.host);
    if !reg.has_listener(listener) {
        return Stream::BOTH
            .map(|s| fallback_ref(rec, s, "no host bank is reachable from this process"));
    }
    let (tx, rx) = oneshot::channel();
    *rec.link.locked() = Link::Banking(tx);
    reg.emit(listener, Event::Bank(rec.task_id()));
    let bound = host_bank_timeout();
    match tokio::time::timeout(bound, rx).await {
        Ok(Ok(outcomes)) => {
            let [a, b] = outcomes;
            [
                resolve(rec, Stream::Stdout, a),
                resolve(rec, Stream::Stderr, b),
            ]
        }
        Ok(Err(_)) => {
            Stream::BOTH.map(|s| fallback_ref(rec, s, "the host's bank went away before answering"))
        }
        Err(_) => {
            rec.close_link();
            let why = format!("bankArtifact had not settled within {}", spell(bound));
            Stream::BOTH.map(|s| fallback_ref(rec, s, &why))
        }
    }
}

fn resolve(rec: &Record, s: Stream, o: BankOutcome) -> ArtifactRef {
    match o {
        BankOutcome::Ref(r) => r,
        BankOutcome::Failed(why) => fallback_ref(rec, s, &why),
    }
}

/// The host's answer for a command waiting on its bank; false when none waits.
pub fn complete_banking(reg: &Registry, task_id: &str, outcomes: [BankOutcome; 2]) -> bool {
    let Some(rec) = reg.by_id(task_id) else {
        return false;
    };
    match rec.take_bank_reply() {
        Some(tx) => tx.send(outcomes).is_ok(),
        None => false,
    }
}

/// A stream's whole log decoded as UTF-8 (as Node decodes it), or an error
/// naming `what` and the log file.
fn whole_text(rec: &Record, s: Stream, what: &str) -> EngineResult<String> {
    rec.open_log(s)
        .and_then(|f| read_all_lossy(&f, rec.log(s).bytes()))
        .map_err(|e| {
            crate::text::logfile::log_error(&e, || {
                EngineError::Io(format!(
                    "{what} cannot be read from {}: {e}",
                    rec.log_path(s).display()
                ))
            })
        })
}

/// What a host's `bankArtifact` is given: the whole log decoded as UTF-8.
pub fn log_text(reg: &Registry, task_id: &str, s: Stream) -> EngineResult<String> {
    let rec = reg
        .by_id(task_id)
        .ok_or_else(|| EngineError::Other(format!("No background command \"{task_id}\"")))?;
    whole_text(&rec, s, &format!("the {} of \"{task_id}\"", s.name()))
}

/// The whole text of a built-in artifact.
pub fn read_artifact(reg: &Registry, id: &str) -> EngineResult<String> {
    let (rec, s) =
        parse_artifact_id(reg, id).ok_or_else(|| EngineError::UnknownArtifact(id.to_string()))?;
    whole_text(&rec, s, &format!("artifact \"{id}\""))
}

/// One page of a built-in artifact; with `host`, only of an artifact of that
/// host's commands (what the `command_output` tool reads).
pub fn retrieve_artifact(
    reg: &Registry,
    id: &str,
    w: Window,
    host: Option<u32>,
) -> EngineResult<Page> {
    let (rec, s) = parse_artifact_id(reg, id)
        .filter(|(rec, _)| host.is_none_or(|h| rec.host == h))
        .ok_or_else(|| EngineError::UnknownArtifact(id.to_string()))?;
    rec.open_log(s)
        .and_then(|f| paging::read_page(rec.log(s), &f, w, rec.log_key(s)))
        .map_err(|e| {
            crate::text::logfile::log_error(&e, || {
                EngineError::Io(format!("artifact \"{id}\" cannot be read: {e}"))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bank_bound_is_30_seconds_unless_the_environment_names_a_positive_one() {
        assert_eq!(parse_bank_timeout(None), HOST_BANK_TIMEOUT);
        for bad in ["", "0", "-5", "abc", "1.5", "1e3"] {
            assert_eq!(parse_bank_timeout(Some(bad)), HOST_BANK_TIMEOUT, "{bad:?}");
        }
        assert_eq!(
            parse_bank_timeout(Some(" 250 ")),
            Duration::from_millis(250)
        );
        assert_eq!(spell(HOST_BANK_TIMEOUT), "30 seconds");
        assert_eq!(spell(Duration::from_millis(250)), "250ms");
        assert_eq!(spell(Duration::from_millis(1000)), "1 second");
    }
}
