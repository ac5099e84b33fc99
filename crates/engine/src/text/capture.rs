//! One stream's log: the file the pipe is copied into, the exact byte cap,
//! the byte count and the UTF-16 index that paging uses.

use crate::sync::Unpoisoned;
use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::decode::Utf16Index;
use super::matching::{self, Waiter, Watch};

/// Which stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Standard output.
    Stdout = 0,
    /// Standard error.
    Stderr = 1,
}

impl Stream {
    /// Both streams, stdout first.
    pub const BOTH: [Stream; 2] = [Stream::Stdout, Stream::Stderr];

    /// The log file's name in a command's log directory: `"stdout.log"` or `"stderr.log"`.
    pub fn file_name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout.log",
            Stream::Stderr => "stderr.log",
        }
    }

    /// `"stdout"` or `"stderr"`.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    /// Parse `"stdout"` / `"stderr"`.
    pub fn parse(s: &str) -> Option<Stream> {
        match s {
            "stdout" => Some(Stream::Stdout),
            "stderr" => Some(Stream::Stderr),
            _ => None,
        }
    }
}

/// Bytes in the logs of one engine's commands whose logs are still on disk
/// (every byte published adds to it; a removal takes its bytes off): what
/// its log budget is checked against, one relaxed atomic per chunk. The
/// engine's retention keeps it; each [`Sink`] adds to its engine's.
pub type LogBytes = std::sync::Arc<AtomicU64>;

/// What readers see of a stream's log while it is written and after. The
/// file itself is `<record dir>/<stream>.log` (see `Record::log_path`): the
/// path is derived when needed, not kept per stream.
#[derive(Debug, Default)]
pub struct StreamLog {
    bytes: AtomicU64,
    finished: AtomicBool,
    /// Decoder state and offset checkpoints, updated as bytes land in the
    /// file; made with the first byte, so a stream that prints nothing (most
    /// streams of a settled record kept for the life of the process) keeps
    /// no index at all. Read it through [`StreamLog::index`].
    index: Mutex<Option<Box<Utf16Index>>>,
    /// The waits watching this stream, fed every chunk as it lands (none:
    /// nothing is kept). Taken before `index` wherever both are held.
    watch: Mutex<Option<Box<Watch>>>,
}

/// The index of a stream that printed nothing.
static EMPTY_INDEX: std::sync::LazyLock<Utf16Index> = std::sync::LazyLock::new(Utf16Index::new);

/// A stream's index, locked (see [`StreamLog::index`]).
pub struct IndexGuard<'a>(MutexGuard<'a, Option<Box<Utf16Index>>>);

impl std::ops::Deref for IndexGuard<'_> {
    type Target = Utf16Index;

    fn deref(&self) -> &Utf16Index {
        self.0.as_deref().unwrap_or(&EMPTY_INDEX)
    }
}

impl StreamLog {
    /// A log, empty so far.
    pub fn new() -> Self {
        Self::default()
    }

    /// The stream's UTF-16 index, locked (an empty one while the stream has
    /// no bytes).
    pub fn index(&self) -> IndexGuard<'_> {
        IndexGuard(self.index.locked())
    }

    /// Bytes in the log file.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Acquire)
    }

    /// Whether the stream will get no more bytes.
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    /// Mark the stream complete and trim the index; the waits watching it
    /// see its last line.
    pub fn finish(&self) {
        let mut watch = self.watch.locked();
        if let Some(w) = watch.as_mut() {
            w.finish();
        }
        if let Some(idx) = self.index.locked().as_mut() {
            idx.shrink();
        }
        self.finished.store(true, Ordering::Release);
    }

    /// Start watching for `waiter` (whose log file is `file`). Returns the
    /// byte offset (a line start) from which the live feed covers the
    /// stream — the output before it is the caller's to scan — or `None`
    /// when the stream is finished (then all of it is the caller's).
    pub fn watch(&self, file: &File, waiter: Arc<Waiter>) -> io::Result<Option<u64>> {
        let mut watch = self.watch.locked();
        if self.is_finished() {
            return Ok(None);
        }
        if watch.is_none() {
            // No chunk can land while the watch lock is held.
            let end = self.bytes();
            let start = matching::line_start_before(file, end)?;
            let (cb, cu) = self.index().checkpoint_at_or_before_byte(start);
            let units = cu + matching::units_between(file, cb, start)?;
            let mut line = vec![0u8; (end - start) as usize];
            crate::platform::FileExt::read_exact_at(file, &mut line, start)?;
            *watch = Some(Box::new(Watch::new(line, start, units)));
        }
        let w = watch.as_mut().expect("set above");
        let start = w.line_start_byte;
        w.add(waiter);
        Ok(Some(start))
    }

    /// Stop watching for `waiter`; the matcher set goes once none is left.
    pub fn unwatch(&self, waiter: &Arc<Waiter>) {
        let mut watch = self.watch.locked();
        if watch.as_mut().is_some_and(|w| w.remove(waiter)) {
            *watch = None;
        }
    }

    /// The decodable length: all bytes once finished, else the committed ones.
    pub fn readable_bytes(&self) -> u64 {
        let idx = self.index();
        if self.is_finished() {
            idx.bytes_seen()
        } else {
            idx.committed_bytes()
        }
    }
}

/// The outcome of copying one chunk.
#[derive(Debug, PartialEq, Eq)]
pub enum Wrote {
    /// Every byte was written.
    All,
    /// The chunk crossed the cap: the bytes up to it were written, the rest dropped.
    CapReached,
    /// The cap had been reached already; nothing was written.
    Discarded,
}

/// The writer side of a stream's log.
#[derive(Debug)]
pub struct Sink {
    file: File,
    cap: u64,
    capped: bool,
    /// A write failed: the log stays the prefix written before the failure.
    broken: bool,
    /// Its engine's count of log bytes on disk.
    total: LogBytes,
}

impl Sink {
    /// A sink that writes at most `cap` bytes into `file`.
    pub fn new(file: File, cap: u64, total: LogBytes) -> Self {
        Sink {
            file,
            cap,
            capped: false,
            broken: false,
            total,
        }
    }

    /// Append `chunk` (up to the cap) to the file and publish it to readers.
    /// On a write error the bytes written before it are still counted, and
    /// every later chunk is discarded: a write that succeeds again (space was
    /// freed) must not append after a gap, so the log stays an exact prefix.
    pub fn write(&mut self, log: &StreamLog, chunk: &[u8]) -> io::Result<Wrote> {
        if self.capped || self.broken {
            return Ok(Wrote::Discarded);
        }
        let room = self.cap.saturating_sub(log.bytes());
        let take = (chunk.len() as u64).min(room) as usize;
        let mut done = 0;
        while done < take {
            match self.file.write(&chunk[done..take]) {
                Ok(0) => {
                    self.broken = true;
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the log file accepted no bytes",
                    ));
                }
                Ok(n) => {
                    publish(log, &chunk[done..done + n], &self.total);
                    done += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
        if take < chunk.len() {
            self.capped = true;
            Ok(Wrote::CapReached)
        } else {
            Ok(Wrote::All)
        }
    }
}

/// Count `bytes` as landed in `log`'s file: its index, its byte count and
/// the waits watching it.
pub(crate) fn publish(log: &StreamLog, bytes: &[u8], total: &AtomicU64) {
    let mut watch = log.watch.locked();
    {
        let mut idx = log.index.locked();
        idx.get_or_insert_with(|| Box::new(Utf16Index::new()))
            .push(bytes);
        log.bytes.fetch_add(bytes.len() as u64, Ordering::AcqRel);
        total.fetch_add(bytes.len() as u64, Ordering::Relaxed);
    }
    // The one scan of these bytes, shared by every wait on this stream.
    if let Some(w) = watch.as_mut() {
        w.feed(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_exact() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("out.log");
        let log = StreamLog::new();
        let mut sink = Sink::new(File::create(&path).unwrap(), 10, Default::default());
        assert_eq!(sink.write(&log, b"12345").unwrap(), Wrote::All);
        assert_eq!(
            sink.write(&log, b"67890").unwrap(),
            Wrote::All,
            "exactly filling the cap is not overflow"
        );
        assert_eq!(sink.write(&log, b"x").unwrap(), Wrote::CapReached);
        assert_eq!(sink.write(&log, b"y").unwrap(), Wrote::Discarded);
        assert_eq!(log.bytes(), 10);
        assert_eq!(std::fs::read(&path).unwrap(), b"1234567890");

        let log = StreamLog::new();
        let mut sink = Sink::new(File::create(&path).unwrap(), 7, Default::default());
        assert_eq!(sink.write(&log, b"1234567890").unwrap(), Wrote::CapReached);
        assert_eq!(std::fs::read(&path).unwrap(), b"1234567");
        assert_eq!(log.bytes(), 7);
    }

    #[test]
    fn a_stream_that_prints_nothing_keeps_no_index() {
        let log = StreamLog::new();
        log.finish();
        assert!(log.index.locked().is_none());
        assert_eq!((log.readable_bytes(), log.index().final_units()), (0, 0));
        // The first byte makes the index, and it counts from there.
        let d = tempfile::tempdir().unwrap();
        let log = StreamLog::new();
        let mut sink = Sink::new(
            File::create(d.path().join("out.log")).unwrap(),
            100,
            Default::default(),
        );
        assert_eq!(sink.write(&log, "é\n".as_bytes()).unwrap(), Wrote::All);
        log.finish();
        assert!(log.index.locked().is_some());
        assert_eq!((log.readable_bytes(), log.index().final_units()), (3, 2));
    }

    #[test]
    fn write_errors_keep_what_was_written() {
        let d = tempfile::tempdir().unwrap();
        let log = StreamLog::new();
        let ro = File::open(d.path()).unwrap();
        let mut sink = Sink::new(ro, 100, Default::default());
        assert!(sink.write(&log, b"abc").is_err());
        assert_eq!(log.bytes(), 0);
        // Nothing is appended after a failure, even if writing would work again.
        assert_eq!(sink.write(&log, b"def").unwrap(), Wrote::Discarded);
        assert_eq!(log.bytes(), 0);
    }
}
