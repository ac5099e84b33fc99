//! Patterns over a stream's output: the waits that watch output as it
//! arrives ([`Watch`], fed by the capture path) and the searches that stream
//! a log file ([`search_file`]).
//!
//! Both see the output as lines. A line is the bytes up to and including a
//! `\n`; its text is the line without `\n` and a `\r` before it. A pattern
//! matches inside one line (a pattern holding a line break is refused). A
//! line longer than [`MAX_LINE_BYTES`] is matched in pieces of about that
//! size, each piece counting as a line. Every line begins where the decoder
//! holds nothing back (right after a `\n`, or at a piece boundary that is not
//! a continuation byte), so each line decodes on its own exactly as it does
//! inside the whole stream, and UTF-16 offsets add up line by line.

use crate::platform::FileExt;
use crate::sync::Unpoisoned;
use std::fs::File;
use std::io;
use std::sync::{Arc, Mutex};

use memchr::memmem;
use tokio::sync::Notify;

use super::decode::lossy_units;
use crate::errors::{EngineError, EngineResult};

/// Lines longer than this are matched in pieces of about this many bytes.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// A line still being written is checked at the end of each chunk while it
/// is at most this long; a longer one is checked when it ends.
pub const PARTIAL_CHECK_BYTES: usize = 4096;
/// The `line` of a wait's match holds at most this many UTF-16 units.
pub const WAIT_LINE_UNITS: usize = 2000;
/// The `text` of a search's match holds at most this many UTF-16 units (then `…`).
pub const SEARCH_TEXT_UNITS: usize = 500;
/// `maxMatches` default.
pub const DEFAULT_MAX_MATCHES: usize = 100;
/// `maxMatches` upper clamp.
pub const MAX_MATCHES: usize = 1000;
/// Size of the positional reads of a search.
const BLOCK: usize = 1 << 20;

/// A compiled pattern: a substring (the default) or a regular expression in
/// the syntax of the `regex` crate (linear time whatever the pattern).
#[derive(Debug)]
pub enum Pattern {
    /// A plain substring.
    Literal(Box<memmem::Finder<'static>>),
    /// A regular expression (`^`/`$` anchor at line ends).
    Regex(regex::bytes::Regex),
}

impl Pattern {
    /// Compile `pattern`; refuse an empty one, one with a line break, and an
    /// invalid regular expression (with the parser's reason).
    pub fn new(pattern: &str, regex: bool) -> EngineResult<Pattern> {
        if pattern.is_empty() {
            return Err(EngineError::BadInput(
                "pattern must be a non-empty string (the text to look for)".into(),
            ));
        }
        if pattern.contains(['\n', '\r']) {
            return Err(EngineError::BadInput(
                "pattern must not contain a line break: output is matched line by line, so give the part of one line to look for".into(),
            ));
        }
        if !regex {
            return Ok(Pattern::Literal(Box::new(
                memmem::Finder::new(pattern.as_bytes()).into_owned(),
            )));
        }
        regex::bytes::RegexBuilder::new(pattern)
            .multi_line(true)
            .crlf(true)
            .size_limit(1 << 23)
            .build()
            .map(Pattern::Regex)
            .map_err(|e| {
                EngineError::BadInput(format!(
                    "pattern is not a valid regular expression (the syntax of Rust's regex crate): {e}"
                ))
            })
    }

    /// The start of the first match at or after byte `start` of `hay`.
    #[inline]
    fn find_at(&self, hay: &[u8], start: usize) -> Option<usize> {
        if start > hay.len() {
            return None;
        }
        match self {
            Pattern::Literal(f) => f.find(&hay[start..]).map(|i| i + start),
            Pattern::Regex(r) => r.find_at(hay, start).map(|m| m.start()),
        }
    }

    /// The UTF-16 offset (in the line) of the first match in `line` (its
    /// text, no line ending) whose stream offset `base + offset` is at least
    /// `from`.
    fn first_in_line(&self, line: &[u8], base: u64, from: u64) -> Option<u64> {
        if base.saturating_add(line.len() as u64) < from {
            return None;
        }
        let mut start = 0;
        while let Some(p) = self.find_at(line, start) {
            let at = base + lossy_units(&line[..p]);
            if at >= from {
                return Some(at);
            }
            start = next_boundary(line, p);
        }
        None
    }
}

/// The first byte after `p` that does not continue a character.
fn next_boundary(b: &[u8], p: usize) -> usize {
    let mut i = p + 1;
    while i < b.len() && is_continuation(b[i]) {
        i += 1;
    }
    i
}

#[inline]
fn is_continuation(b: u8) -> bool {
    (b as i8) < -0x40
}

/// The text of a line: without `\n` and a `\r` before it.
fn strip_ending(seg: &[u8]) -> &[u8] {
    let s = seg.strip_suffix(b"\n").unwrap_or(seg);
    s.strip_suffix(b"\r").unwrap_or(s)
}

/// Where a piece of an over-long line may end: at or before `len`, before
/// a byte that does not continue a character (searching at most 4 back), so
/// both sides decode as they do together.
fn piece_end(seg: &[u8], len: usize) -> usize {
    for back in 0..4 {
        let c = len - back;
        if c == 0 {
            break;
        }
        if c >= seg.len() || !is_continuation(seg[c]) {
            return c;
        }
    }
    len
}

/// A line still being written without its trailing incomplete UTF-8
/// sequence (the next chunk may complete it).
fn complete_prefix(b: &[u8]) -> &[u8] {
    let tail_start = b.len().saturating_sub(3);
    for i in (tail_start..b.len()).rev() {
        if !is_continuation(b[i]) {
            let need = match b[i] {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            if b.len() - i < need && std::str::from_utf8(&b[i..]).is_err() {
                return &b[..i];
            }
            return b;
        }
    }
    b
}

/// The decoded text of `line`, at most `max` UTF-16 units (never splitting
/// a surrogate pair), and whether it was cut.
pub fn cut_text(line: &[u8], max: usize) -> (String, bool) {
    let text = String::from_utf8_lossy(line);
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += c.len_utf16();
        if used > max {
            return (text[..i].to_owned(), true);
        }
    }
    (text.into_owned(), false)
}

/// A wait's match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// UTF-16 offset of the match's start in the stream.
    pub offset: u64,
    /// The line holding it (as far as written when the match was seen),
    /// without its line ending, at most [`WAIT_LINE_UNITS`] units.
    pub line: String,
}

/// Where a wait's match goes: shared by the waiters of one wait (one per
/// stream watched); the first match wins. A match in a line still being
/// written is `partial`: its line grows as more of the line arrives and is
/// final when the line ends.
#[derive(Debug, Default)]
pub struct Slot {
    hit: Mutex<Option<(usize, Hit, bool)>>,
    /// Woken when a hit lands, and when a partial hit's line is complete.
    pub notify: Notify,
}

impl Slot {
    /// A new empty slot.
    pub fn new() -> Arc<Slot> {
        Arc::new(Slot::default())
    }

    /// The hit, the index of the stream it was found on, and whether its
    /// line was still being written.
    pub fn get(&self) -> Option<(usize, Hit, bool)> {
        self.hit.locked().clone()
    }

    /// Whether a hit landed whose line is final.
    fn is_final(&self) -> bool {
        matches!(*self.hit.locked(), Some((_, _, false)))
    }

    fn set(&self, stream: usize, hit: Hit, partial: bool) {
        let mut h = self.hit.locked();
        match h.as_mut() {
            None => *h = Some((stream, hit, partial)),
            // The same match, in more of its line.
            Some((s, old, true)) if *s == stream && old.offset == hit.offset => {
                *old = hit;
                if !partial {
                    h.as_mut().expect("set").2 = false;
                }
            }
            Some(_) => return,
        }
        drop(h);
        self.notify.notify_one();
    }
}

/// One stream's side of a wait.
#[derive(Debug)]
pub struct Waiter {
    /// The pattern (shared by the streams of one wait).
    pub pattern: Arc<Pattern>,
    /// Matches must start at or after this UTF-16 offset.
    pub from: u64,
    /// Which stream this waiter watches (0 stdout, 1 stderr).
    pub stream: usize,
    /// Where a match goes.
    pub slot: Arc<Slot>,
}

impl Waiter {
    /// Offer a line (`partial`: still being written) that starts at unit `base`.
    fn check(&self, text: &[u8], base: u64, partial: bool) {
        if self.slot.is_final() {
            return;
        }
        if let Some(offset) = self.pattern.first_in_line(text, base, self.from) {
            self.slot.set(
                self.stream,
                Hit {
                    offset,
                    line: cut_text(text, WAIT_LINE_UNITS).0,
                },
                partial,
            );
        }
    }
}

/// The live matcher set of one stream: present while at least one wait
/// watches it. The capture path feeds it every chunk once, and each line is
/// offered to every waiter: the output is scanned once, as it arrives.
#[derive(Debug)]
pub struct Watch {
    /// The line being written (bytes after the last line end fed).
    line: Vec<u8>,
    /// Stream byte offset of `line`'s start.
    pub line_start_byte: u64,
    /// UTF-16 offset of `line`'s start.
    line_start_units: u64,
    waiters: Vec<Arc<Waiter>>,
}

impl Watch {
    /// A matcher set whose current line starts at `line_start_byte` /
    /// `line_start_units` and holds `line` so far.
    pub fn new(line: Vec<u8>, line_start_byte: u64, line_start_units: u64) -> Watch {
        Watch {
            line,
            line_start_byte,
            line_start_units,
            waiters: Vec::new(),
        }
    }

    /// Add a waiter and offer it the line being written.
    pub fn add(&mut self, w: Arc<Waiter>) {
        let text = complete_prefix(&self.line);
        if text.len() <= PARTIAL_CHECK_BYTES {
            w.check(text, self.line_start_units, true);
        }
        self.waiters.push(w);
    }

    /// Remove a waiter; true when none is left.
    pub fn remove(&mut self, w: &Arc<Waiter>) -> bool {
        self.waiters.retain(|x| !Arc::ptr_eq(x, w));
        self.waiters.is_empty()
    }

    /// Bytes appended to the stream, in order.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(i) = memchr::memchr(b'\n', bytes) {
            let (head, rest) = bytes.split_at(i + 1);
            if self.line.is_empty() {
                self.complete(head);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.complete(&line);
                line.clear();
                self.line = line;
            }
            bytes = rest;
        }
        self.line.extend_from_slice(bytes);
        while self.line.len() > MAX_LINE_BYTES {
            let cut = piece_end(&self.line, MAX_LINE_BYTES);
            let line = std::mem::take(&mut self.line);
            self.complete(&line[..cut]);
            self.line = line[cut..].to_vec();
        }
        if !self.line.is_empty() && self.line.len() <= PARTIAL_CHECK_BYTES {
            let text = complete_prefix(&self.line);
            for w in &self.waiters {
                w.check(text, self.line_start_units, true);
            }
        }
    }

    /// The stream ended: its last line (without a line end) is complete.
    pub fn finish(&mut self) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.complete(&line);
        }
    }

    fn complete(&mut self, seg: &[u8]) {
        let text = strip_ending(seg);
        for w in &self.waiters {
            w.check(text, self.line_start_units, false);
        }
        self.line_start_byte += seg.len() as u64;
        self.line_start_units += lossy_units(seg);
    }
}

/// Where a scan of a log starts: a line start, its UTF-16 offset and its
/// 1-based line number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanStart {
    /// Byte offset (a line start).
    pub byte: u64,
    /// Its UTF-16 offset.
    pub units: u64,
    /// Its line number (1 for the first line).
    pub line: u64,
}

impl ScanStart {
    /// The start of the stream.
    pub const ORIGIN: ScanStart = ScanStart {
        byte: 0,
        units: 0,
        line: 1,
    };
}

/// One matching line of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMatch {
    /// 1-based line number from the stream's start.
    pub line: u64,
    /// UTF-16 offset of the line's start.
    pub offset: u64,
    /// The line's text without its ending, cut to 500 units plus `…`.
    pub text: String,
    /// UTF-16 offset of the first match in the line at or after `from`.
    pub match_offset: u64,
}

/// How a search spells a matching line's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextCut {
    /// At most this many UTF-16 units.
    pub units: usize,
    /// Add `…` when cut.
    pub ellipsis: bool,
}

impl TextCut {
    /// A search's text: 500 units plus `…`.
    pub const SEARCH: TextCut = TextCut {
        units: SEARCH_TEXT_UNITS,
        ellipsis: true,
    };
    /// A wait's line: 2000 units.
    pub const WAIT: TextCut = TextCut {
        units: WAIT_LINE_UNITS,
        ellipsis: false,
    };
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// The matching lines, in order.
    pub matches: Vec<LineMatch>,
    /// More matching lines follow.
    pub has_more: bool,
    /// The offset reached: a search from here misses nothing after the matches returned.
    pub scanned_to: u64,
}

/// Search the log in `file` from `start` up to byte `end`: the lines holding
/// a match that starts at UTF-16 offset `from` or later, at most `max`.
/// With `complete`, the bytes after the last line end form a line too (the
/// stream ended); otherwise they are left for a later search and
/// `scanned_to` stops at their start. Memory is bounded by the read block
/// and the longest line piece, whatever the file's size.
///
/// This counts UTF-16 units over the whole log; [`search_file_indexed`] does
/// the same search counting them only near matches.
#[allow(clippy::too_many_arguments)]
pub fn search_file(
    file: &File,
    start: ScanStart,
    end: u64,
    complete: bool,
    pat: &Pattern,
    from: u64,
    max: usize,
    cut_to: TextCut,
) -> io::Result<SearchResult> {
    search_file_indexed(file, start, end, complete, pat, from, max, cut_to, &|_| {
        (0, 0)
    })
}

/// [`search_file`] with the stream's UTF-16 index at hand: `checkpoint(b)`
/// is the index's last `(byte, units)` checkpoint at or before byte `b`
/// ([`Utf16Index::checkpoint_at_or_before_byte`](super::decode::Utf16Index::checkpoint_at_or_before_byte)).
///
/// The scan then costs what finding the pattern and counting line ends
/// cost: UTF-16 units are counted only from the nearest known point (the
/// last line counted, or a checkpoint, at most one checkpoint interval back)
/// to a line that may hold a match, and to where the scan stops. Lines whose
/// offset cannot reach `from` are not counted at all (a unit is never more
/// than a byte).
#[allow(clippy::too_many_arguments)]
pub fn search_file_indexed(
    file: &File,
    start: ScanStart,
    end: u64,
    complete: bool,
    pat: &Pattern,
    from: u64,
    max: usize,
    cut_to: TextCut,
    checkpoint: &dyn Fn(u64) -> (u64, u64),
) -> io::Result<SearchResult> {
    let mut matches = Vec::new();
    let total = end.saturating_sub(start.byte);
    // `buf[..filled]` holds bytes [buf_byte, buf_byte + filled) of the
    // stream; `buf_byte` is always a line start (or a piece boundary).
    let mut buf: Vec<u8> = vec![0; BLOCK.min(total as usize)];
    let mut filled = 0usize;
    let mut buf_byte = start.byte;
    let mut read_pos = start.byte;
    // The line number of the line starting at `buf_byte`.
    let mut line_no = start.line;
    // The last place whose UTF-16 offset is known: a decoder boundary.
    let mut known = (start.byte, start.units);
    loop {
        let want = BLOCK.min(end.saturating_sub(read_pos) as usize);
        if want > 0 {
            if buf.len() < filled + want {
                buf.resize(filled + want, 0);
            }
            file.read_exact_at(&mut buf[filled..filled + want], read_pos)?;
            filled += want;
            read_pos += want as u64;
        }
        let at_end = read_pos >= end;
        let data = &buf[..filled];
        // The complete lines in `data` (with `complete` at the end, all of it).
        let region_len = if at_end && complete {
            data.len()
        } else {
            match memchr::memrchr(b'\n', data) {
                Some(i) => i + 1,
                None if data.len() > MAX_LINE_BYTES => piece_end(data, MAX_LINE_BYTES),
                None => 0,
            }
        };
        let region = &data[..region_len];
        // `counted_line` is the number of the line starting at `region[counted]`.
        let mut counted = 0usize;
        let mut counted_line = line_no;
        let mut pos = 0usize;
        while pos < region.len() {
            let Some(p) = pat.find_at(region, pos) else {
                break;
            };
            let ls =
                memchr::memrchr(b'\n', &region[counted..p]).map_or(counted, |i| counted + i + 1);
            let le = memchr::memchr(b'\n', &region[p..]).map_or(region.len(), |i| p + i + 1);
            counted_line += memchr::memchr_iter(b'\n', &region[counted..ls]).count() as u64;
            counted = ls;
            pos = le;
            let line_text = strip_ending(&region[ls..le]);
            let ls_byte = buf_byte + ls as u64;
            // No match in this line can start at `from` or later.
            if known.1 + (ls_byte - known.0) + (line_text.len() as u64) < from {
                continue;
            }
            let units = units_at(file, region, buf_byte, ls_byte, known, checkpoint(ls_byte))?;
            known = (ls_byte, units);
            // The line itself decides: a region-wide match may cross a line end.
            if let Some(m) = pat.first_in_line(line_text, units, from) {
                if matches.len() == max {
                    return Ok(SearchResult {
                        matches,
                        has_more: true,
                        scanned_to: units,
                    });
                }
                let (mut t, cut) = cut_text(line_text, cut_to.units);
                if cut && cut_to.ellipsis {
                    t.push('…');
                }
                matches.push(LineMatch {
                    line: counted_line,
                    offset: units,
                    text: t,
                    match_offset: m,
                });
            }
        }
        // Lines are numbered by the line ends before them: a piece of an
        // over-long line and a final line without an end start no new number.
        line_no = counted_line + memchr::memchr_iter(b'\n', &region[counted..]).count() as u64;
        if at_end {
            let stop = buf_byte + region_len as u64;
            let units = units_at(file, region, buf_byte, stop, known, checkpoint(stop))?;
            return Ok(SearchResult {
                matches,
                has_more: false,
                scanned_to: units,
            });
        }
        buf.copy_within(region_len..filled, 0);
        filled -= region_len;
        buf_byte += region_len as u64;
    }
}

/// The UTF-16 offset of stream byte `b` (a decoder boundary inside or at the
/// end of `region`, which holds the bytes from `region_byte`), counted from
/// the later of `known` and the index's checkpoint `cp` (both at or before
/// `b`); bytes before the region are read from `file` again.
fn units_at(
    file: &File,
    region: &[u8],
    region_byte: u64,
    b: u64,
    known: (u64, u64),
    cp: (u64, u64),
) -> io::Result<u64> {
    let (from_byte, from_units) = if cp.0 > known.0 && cp.0 <= b {
        cp
    } else {
        known
    };
    let end = (b - region_byte) as usize;
    if from_byte >= region_byte {
        let begin = (from_byte - region_byte) as usize;
        return Ok(from_units + lossy_units(&region[begin..end]));
    }
    // The region starts at a line start or a piece boundary: both sides
    // decode on their own.
    Ok(from_units + units_between(file, from_byte, region_byte)? + lossy_units(&region[..end]))
}

/// Byte offset of the start of the line holding byte `pos` (the byte after
/// the last `\n` before it), searching back at most [`MAX_LINE_BYTES`]; past
/// that, the nearest piece boundary.
pub fn line_start_before(file: &File, pos: u64) -> io::Result<u64> {
    let lo = pos.saturating_sub(MAX_LINE_BYTES as u64);
    let mut buf = vec![0u8; (pos - lo) as usize];
    file.read_exact_at(&mut buf, lo)?;
    if let Some(i) = memchr::memrchr(b'\n', &buf) {
        return Ok(lo + i as u64 + 1);
    }
    if lo == 0 {
        return Ok(0);
    }
    let mut i = 0;
    while i < buf.len() && is_continuation(buf[i]) {
        i += 1;
    }
    Ok(lo + i as u64)
}

/// UTF-16 units of the bytes `[a, b)` of `file`, decoded on their own (both
/// ends must be places where the decoder holds nothing back).
pub fn units_between(file: &File, a: u64, b: u64) -> io::Result<u64> {
    let mut units = 0;
    let mut pos = a;
    let mut buf = vec![0u8; BLOCK.min((b - a) as usize)];
    // Each block ends before a byte that starts a character, so blocks decode on their own.
    while pos < b {
        let n = BLOCK.min((b - pos) as usize);
        file.read_exact_at(&mut buf[..n], pos)?;
        let cut = if pos + (n as u64) < b {
            piece_end(&buf[..n], n.saturating_sub(1)).max(1)
        } else {
            n
        };
        units += lossy_units(&buf[..cut]);
        pos += cut as u64;
    }
    Ok(units)
}

#[cfg(test)]
mod tests;
