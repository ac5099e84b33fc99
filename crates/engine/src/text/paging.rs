//! Output pages: a window of a stream's decoded text in UTF-16 code units,
//! the shape shared by command output and the built-in bank.

use crate::sync::Unpoisoned;
use std::fs::File;
use std::sync::Mutex;

use super::capture::StreamLog;
use super::window::read_window;

/// Default page size.
pub const DEFAULT_LIMIT: u64 = 50_000;
/// Largest page.
pub const MAX_LIMIT: u64 = 200_000;

/// A normalised page request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First unit (≥ 0).
    pub offset: u64,
    /// Units asked for (1..=200000).
    pub limit: u64,
    /// The window is the last `limit` units (`tail`): `offset` is then
    /// worked out when the page is read.
    pub from_end: bool,
}

impl Window {
    /// Apply the defaults and clamps: offset 0 (negatives and NaN → 0; an
    /// offset too large to hold, +Infinity included, is past every end, as
    /// `slice(Infinity)` is), limit 50000 clamped to 1..200000; fractions are cut.
    pub fn new(offset: Option<f64>, limit: Option<f64>) -> Window {
        let offset = offset.filter(|o| *o > 0.0).map_or(0, |o| o.floor() as u64);
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(l) if l.is_nan() => DEFAULT_LIMIT,
            Some(l) => l.floor().clamp(1.0, MAX_LIMIT as f64) as u64,
        };
        Window {
            offset,
            limit,
            from_end: false,
        }
    }

    /// The last `tail` units, `tail` clamped like a limit (1..200000).
    pub fn tail(tail: f64) -> Window {
        Window {
            offset: 0,
            limit: tail.floor().clamp(1.0, MAX_LIMIT as f64) as u64,
            from_end: true,
        }
    }
}

/// One page of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The text, as UTF-16 code units (may begin or end with half a surrogate pair, like `slice`).
    pub content: Vec<u16>,
    /// The first unit.
    pub offset: u64,
    /// The limit asked for (after clamping).
    pub limit: u64,
    /// The decoded length of the stream so far.
    pub total_size: u64,
    /// `offset + limit < totalSize`.
    pub has_more: bool,
}

/// Where the last pages read ended, by log: `(key, byte, unit)`, so that a
/// reader going forward page by page starts decoding exactly where its
/// previous page stopped instead of at the checkpoint before it. A handful
/// of entries shared by the whole process (a reader of one log at a time is
/// the common case), so a record keeps no extra bytes for it.
static RESUME: Mutex<[(u64, u64, u64); 8]> = Mutex::new([(0, 0, 0); 8]);

fn resume_point(key: u64, offset: u64) -> Option<(u64, u64)> {
    let slots = RESUME.locked();
    slots
        .iter()
        .filter(|&&(k, _, u)| k == key && u <= offset)
        .map(|&(_, b, u)| (b, u))
        .max_by_key(|&(_, u)| u)
}

fn remember(key: u64, end: (u64, u64)) {
    let mut slots = RESUME.locked();
    // Replace this log's entry if it has one, else the oldest (the last).
    let i = slots
        .iter()
        .position(|&(k, _, _)| k == key)
        .unwrap_or(slots.len() - 1);
    slots[..=i].rotate_right(1);
    slots[0] = (key, end.0, end.1);
}

/// Read a page of `log` from its opened `file` (blocking file I/O: run it
/// off the JS thread). `key` names the log for the whole life of the process
/// (non-zero; see `Record::log_key`): a page that starts where an earlier
/// page of the same log ended resumes decoding there.
pub fn read_page(log: &StreamLog, file: &File, w: Window, key: u64) -> std::io::Result<Page> {
    let idx = log.index();
    let finished = log.is_finished();
    let offset = if w.from_end {
        let total = if finished {
            idx.final_units()
        } else {
            idx.committed_units()
        };
        total.saturating_sub(w.limit)
    } else {
        w.offset
    };
    let win = read_window(
        file,
        &idx,
        finished,
        offset,
        w.limit,
        resume_point(key, offset),
    )?;
    drop(idx);
    if let Some(end) = win.end {
        remember(key, end);
    }
    Ok(Page {
        content: win.content,
        offset,
        limit: w.limit,
        total_size: win.total_units,
        has_more: offset.saturating_add(w.limit) < win.total_units,
    })
}

/// The decoded length of a log so far.
pub fn total_units(log: &StreamLog) -> u64 {
    let idx = log.index();
    if log.is_finished() {
        idx.final_units()
    } else {
        idx.committed_units()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_clamps() {
        assert_eq!(
            Window::new(None, None),
            Window {
                offset: 0,
                limit: 50_000,
                from_end: false
            }
        );
        assert_eq!(
            Window::new(Some(-5.0), Some(0.0)),
            Window {
                offset: 0,
                limit: 1,
                from_end: false
            }
        );
        assert_eq!(
            Window::new(Some(f64::NAN), Some(1e9)),
            Window {
                offset: 0,
                limit: 200_000,
                from_end: false
            }
        );
        assert_eq!(Window::new(Some(f64::INFINITY), None).offset, u64::MAX);
        assert_eq!(Window::new(Some(1e300), None).offset, u64::MAX);
        assert_eq!(Window::new(Some(f64::NEG_INFINITY), None).offset, 0);
        assert_eq!(
            Window::new(Some(10.7), Some(137.2)),
            Window {
                offset: 10,
                limit: 137,
                from_end: false
            }
        );
    }
}
