//! Waiting for a pattern in a command's output, and searching its logs (the
//! API verbs of SPEC §10). Matching runs in the capture path
//! ([`crate::text::matching::Watch`]); this module registers the waits,
//! scans the output written before a wait began (once, from `from`), and
//! streams a log for a search.

use std::sync::Arc;

use super::bank;
use super::record::{Record, Status};
use crate::errors::{EngineError, EngineResult};
use crate::policy;
use crate::text::capture::Stream;
use crate::text::matching::{
    self, Hit, Pattern, ScanStart, SearchResult, Slot, TextCut, Waiter, DEFAULT_MAX_MATCHES,
    MAX_MATCHES,
};

/// How long a wait whose match is in a line still being written waits for
/// that line to end before it resolves with the line as far as written.
pub const LINE_END_GRACE: std::time::Duration = std::time::Duration::from_millis(50);

/// A wait, as plain values.
#[derive(Debug)]
pub struct WaitRequest {
    /// The compiled pattern.
    pub pattern: Pattern,
    /// One stream, or both (`None`).
    pub stream: Option<Stream>,
    /// Matches must start at or after this UTF-16 offset.
    pub from: u64,
    /// Bound of the wait in ms (none: until the command settles).
    pub timeout_ms: Option<f64>,
}

/// What a wait gave.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitOutcome {
    /// The stream and the match, when there was one.
    pub found: Option<(Stream, Hit)>,
    /// The command's status when the wait ended.
    pub status: Status,
}

/// A UTF-16 offset argument: absent → 0; negative, NaN or infinite refused.
pub fn offset_arg(name: &str, v: Option<f64>) -> EngineResult<u64> {
    match v {
        None => Ok(0),
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x.floor() as u64),
        Some(x) => Err(EngineError::BadInput(format!(
            "{name} must be a finite number ≥ 0 (a UTF-16 offset into the stream, as pages count) (got {})",
            policy::js_number(x)
        ))),
    }
}

/// A wait bound in ms: absent → none; negative, NaN or infinite refused.
pub fn wait_ms_arg(name: &str, v: Option<f64>) -> EngineResult<Option<f64>> {
    match v {
        None => Ok(None),
        Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        Some(x) => Err(EngineError::BadInput(format!(
            "{name} must be a finite number of milliseconds ≥ 0 to wait at most (got {})",
            policy::js_number(x)
        ))),
    }
}

/// `maxMatches`: default 100, clamped to 1..1000; negative or non-finite refused.
pub fn max_matches_arg(v: Option<f64>) -> EngineResult<usize> {
    match v {
        None => Ok(DEFAULT_MAX_MATCHES),
        Some(x) if x.is_finite() && x >= 0.0 => Ok((x.floor() as usize).clamp(1, MAX_MATCHES)),
        Some(x) => Err(EngineError::BadInput(format!(
            "maxMatches must be a finite number ≥ 0 (clamped to 1..1000) (got {})",
            policy::js_number(x)
        ))),
    }
}

fn io_error(rec: &Record, s: Stream, e: &std::io::Error) -> EngineError {
    EngineError::Io(format!(
        "Cannot read the {} log of \"{}\" ({}): {}. The log file must stay where the runner put it (under os.tmpdir()) for its output to be read.",
        s.name(),
        rec.task_id(),
        rec.log_path(s).display(),
        crate::errors::os_reason(e)
    ))
}

/// Where a scan for matches at or after `from` may begin: a line start at
/// or before `from`, found from the index's nearest checkpoint (so only
/// about one checkpoint interval plus a line is read, not the log before
/// `from`). The line number is not known there (waits do not need it).
fn scan_start_near(
    rec: &Record,
    s: Stream,
    file: &std::fs::File,
    from: u64,
) -> std::io::Result<ScanStart> {
    let (cb, cu) = rec.log(s).index().checkpoint_at_or_before(from);
    let ls = matching::line_start_before(file, cb)?;
    let back = matching::units_between(file, ls, cb)?;
    Ok(ScanStart {
        byte: ls,
        units: cu - back,
        line: 0,
    })
}

/// Register one stream's waiter and scan what it wrote before the live
/// feed took over. Returns the waiter (registered) and a match found in that
/// earlier output.
fn begin(
    rec: &Record,
    s: Stream,
    pat: &Arc<Pattern>,
    from: u64,
    slot: &Arc<Slot>,
) -> EngineResult<(Option<Arc<Waiter>>, Option<Hit>)> {
    let file = rec.open_log(s).map_err(|e| io_error(rec, s, &e))?;
    let waiter = Arc::new(Waiter {
        pattern: pat.clone(),
        from,
        stream: s as usize,
        slot: slot.clone(),
    });
    let log = rec.log(s);
    let live_from = log
        .watch(&file, waiter.clone())
        .map_err(|e| io_error(rec, s, &e))?;
    let end = match live_from {
        Some(b) => b,
        None => log.index().bytes_seen(),
    };
    let scan = || -> std::io::Result<Option<Hit>> {
        let start = scan_start_near(rec, s, &file, from)?;
        if start.byte >= end {
            return Ok(None);
        }
        let checkpoint = |b: u64| log.index().checkpoint_at_or_before_byte(b);
        let r = matching::search_file_indexed(
            &file,
            start,
            end,
            true,
            pat,
            from,
            1,
            TextCut::WAIT,
            &checkpoint,
        )?;
        Ok(r.matches.into_iter().next().map(|m| Hit {
            offset: m.match_offset,
            line: m.text,
        }))
    };
    let earlier = match scan() {
        Ok(h) => h,
        Err(e) => {
            log.unwatch(&waiter);
            return Err(io_error(rec, s, &e));
        }
    };
    Ok((live_from.map(|_| waiter), earlier))
}

/// Wait until the pattern appears in the output (at or after `from`), the
/// command settles without it, or the bound elapses.
pub async fn await_output(rec: Arc<Record>, req: WaitRequest) -> EngineResult<WaitOutcome> {
    let pat = Arc::new(req.pattern);
    let slot = Slot::new();
    let streams: Vec<Stream> = match req.stream {
        Some(s) => vec![s],
        None => Stream::BOTH.to_vec(),
    };
    let deadline = req
        .timeout_ms
        .map(|t| tokio::time::Instant::now() + policy::duration_ms(t));
    // Registration and the scan of earlier output read files: off the JS thread.
    let (r2, p2, s2) = (rec.clone(), pat.clone(), slot.clone());
    let from = req.from;
    let started = tokio::task::spawn_blocking(move || {
        let mut waiters = Vec::new();
        let mut earlier = None;
        for s in streams {
            match begin(&r2, s, &p2, from, &s2) {
                Ok((w, hit)) => {
                    if let Some(w) = w {
                        waiters.push((s, w));
                    }
                    if earlier.is_none() {
                        earlier = hit.map(|h| (s, h));
                    }
                }
                Err(e) => {
                    for (s, w) in &waiters {
                        r2.log(*s).unwatch(w);
                    }
                    return Err(e);
                }
            }
        }
        Ok((waiters, earlier))
    })
    .await
    .map_err(|e| EngineError::Other(format!("the wait could not start: {e}")))?;
    let (waiters, earlier) = started?;

    let found = match earlier {
        Some(h) => Some(h),
        None => {
            let live = async {
                loop {
                    if let Some(h) = slot.get() {
                        return Some(h);
                    }
                    tokio::select! {
                        _ = slot.notify.notified() => {}
                        _ = rec.settled.wait() => return slot.get(),
                    }
                }
            };
            let hit = match deadline {
                Some(d) => tokio::time::timeout_at(d, live).await.ok().flatten(),
                None => live.await,
            };
            // A match in a line still being written: give the line a moment
            // to end, so `line` is the whole line; past that, what is there.
            let hit = match hit {
                Some((_, _, true)) => {
                    let until = tokio::time::Instant::now() + LINE_END_GRACE;
                    let until = deadline.map_or(until, |d| d.min(until));
                    let rest = async {
                        loop {
                            tokio::select! {
                                _ = slot.notify.notified() => {}
                                _ = rec.settled.wait() => return,
                            }
                            if matches!(slot.get(), Some((_, _, false))) {
                                return;
                            }
                        }
                    };
                    let _ = tokio::time::timeout_at(until, rest).await;
                    slot.get()
                }
                other => other,
            };
            hit.map(|(i, h, _)| (Stream::BOTH[i], h))
        }
    };
    for (s, w) in &waiters {
        rec.log(*s).unwatch(w);
    }
    Ok(WaitOutcome {
        found,
        status: rec.status(true, bank::builtin_ref),
    })
}

/// A search of one stream's log (blocking file I/O: run it off the JS thread).
pub fn search(
    rec: &Record,
    s: Stream,
    pat: &Pattern,
    from: u64,
    max: usize,
) -> EngineResult<SearchResult> {
    let file = rec.open_log(s).map_err(|e| io_error(rec, s, &e))?;
    let log = rec.log(s);
    let (end, complete) = {
        let idx = log.index();
        (idx.bytes_seen(), log.is_finished())
    };
    let checkpoint = |b: u64| log.index().checkpoint_at_or_before_byte(b);
    let r = matching::search_file_indexed(
        &file,
        ScanStart::ORIGIN,
        end,
        complete,
        pat,
        from,
        max,
        TextCut::SEARCH,
        &checkpoint,
    )
    .map_err(|e| io_error(rec, s, &e))?;
    if rec.is_settled() {
        rec.look();
    }
    Ok(r)
}
