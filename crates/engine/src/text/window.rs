//! Reading log files as text: a window of UTF-16 units ([`read_window`]),
//! the whole text ([`read_all_lossy`]) and the tail ([`tail_text`]), decoded
//! by the codec in [`super::decode`].
//!
//! How it works: every read is positional (`read_exact_at`), so readers of
//! the same open log never share a file cursor. A window reads no further
//! than the bytes its index has seen, so a log still being written is read
//! only up to what the capture has appended. It starts decoding at the index
//! checkpoint nearest before its offset — or where the previous page of the
//! same log ended, when that is nearer — and reads forward in `READ_CHUNK`
//! pieces until it is full: well-formed text is decoded straight into the
//! window, and the streaming decoder takes over only where a byte is
//! ill-formed. The cost is bounded by the window plus one checkpoint
//! interval, whatever the size of the file. A tail reads only the last bytes
//! it can need and starts at the first character boundary among them.

use crate::platform::FileExt;
use std::fs::File;
use std::io;

use super::decode::{
    astral, is_continuation, push_units, surrogates, utf16_units, Piece, Utf16Index, Utf8Decoder,
    REPLACEMENT_UNIT,
};

/// Size of the positional reads done by [`read_window`].
const READ_CHUNK: u64 = 64 * 1024;

/// An excerpt of a log in UTF-16 code units: what a page window asks for,
/// decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Excerpt {
    /// The code units of the window (may begin with a low surrogate or end
    /// with a high surrogate when the window cuts a pair, as `slice` does).
    pub content: Vec<u16>,
    /// UTF-16 length of the whole decoded log the window was taken from.
    pub total_units: u64,
    /// Where the window ended, as `(byte_offset, unit_offset)`, when that is
    /// a place decoding may restart from (a character boundary, not inside a
    /// surrogate pair): the next page of a reader going forward starts there.
    pub end: Option<(u64, u64)>,
}

/// Fill `buf` from `file` at `offset`, failing with `UnexpectedEof` if the
/// file is shorter.
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    file.read_exact_at(buf, offset)
}

/// Read units `[offset, offset + limit)` of the decoded log from `file`.
///
/// Reads start at the checkpoint of `index` nearest before `offset` (or at
/// `resume`, an [`Excerpt::end`] of an earlier window of the same log, when
/// that is nearer) and go forward in 64 KiB positional reads, so the cost is
/// bounded by the window plus one checkpoint interval, never by the file size.
///
/// With `finished` (no more bytes will come), the bytes up to
/// `index.bytes_seen()` are decoded and a trailing incomplete sequence counts
/// as one U+FFFD; `total_units` is then `index.final_units()`. Otherwise only
/// the committed bytes are decoded and `total_units` is
/// `index.committed_units()`.
///
/// An `offset` at or beyond the end gives empty content. The window may start
/// or end between the two halves of a surrogate pair exactly like
/// `String.prototype.slice`, so consecutive pages concatenate to the whole.
/// Fails with `UnexpectedEof` if the file holds fewer bytes than the index
/// has seen.
pub fn read_window(
    file: &File,
    index: &Utf16Index,
    finished: bool,
    offset: u64,
    limit: u64,
    resume: Option<(u64, u64)>,
) -> io::Result<Excerpt> {
    let (end_byte, total_units) = if finished {
        (index.bytes_seen(), index.final_units())
    } else {
        (index.committed_bytes(), index.committed_units())
    };
    let stop = offset.saturating_add(limit).min(total_units);
    if offset >= stop {
        return Ok(Excerpt {
            content: Vec::new(),
            total_units,
            end: None,
        });
    }
    let (mut pos, mut unit) = index.checkpoint_at_or_before(offset);
    if let Some((b, u)) = resume {
        if u <= offset && u > unit && b <= end_byte {
            (pos, unit) = (b, u);
        }
    }
    let mut out = ExcerptSink {
        unit,
        offset,
        stop,
        byte: pos,
        end: None,
        content: Vec::with_capacity((stop - offset) as usize),
    };
    let mut buf = vec![0u8; READ_CHUNK.min(end_byte - pos) as usize];
    let mut decoder = Utf8Decoder::default();
    while pos < end_byte && out.unit < stop {
        let n = READ_CHUNK.min(end_byte - pos) as usize;
        read_exact_at(file, &mut buf[..n], pos)?;
        let mut rest = &buf[..n];
        if decoder.pending_len == 0 {
            let (used, cut_short) = out.fast(rest, pos);
            if cut_short && pos + (n as u64) < end_byte {
                // A character runs past this read: the next read starts with it.
                pos += used as u64;
                continue;
            }
            rest = &rest[used..];
        }
        pos += n as u64;
        if out.unit < stop {
            decoder.feed(rest, &mut |piece| out.emit(piece));
        }
    }
    // Held-back bytes here are one U+FFFD either way: at the end of a
    // finished stream, or at the committed end, which the index only moves
    // past an incomplete sequence once a following byte has rejected it.
    decoder.finish(&mut |piece| out.emit(piece));
    Ok(Excerpt {
        content: out.content,
        total_units,
        end: out.end,
    })
}

/// Collects the units `[offset, stop)` of a decoding that starts at `unit`
/// (at byte `byte` of the log).
struct ExcerptSink {
    unit: u64,
    offset: u64,
    stop: u64,
    /// The log offset of the next byte to decode.
    byte: u64,
    /// Set once the window is full, when it ends at a restart point.
    end: Option<(u64, u64)>,
    content: Vec<u16>,
}

impl ExcerptSink {
    /// Decode the well-formed UTF-8 at the start of `input` (which sits at
    /// log offset `at`, a restart point) straight into the window, until the
    /// window is full or a byte is not part of a well-formed character.
    /// Returns how many bytes were used and whether it stopped at a character
    /// that `input` holds only the beginning of (which the caller reads
    /// again with what follows, or hands to the full decoder at the end).
    fn fast(&mut self, input: &[u8], at: u64) -> (usize, bool) {
        const HIGH: u128 = u128::from_ne_bytes([0x80; 16]);
        let cont = |b: u8| is_continuation(b);
        let n = input.len();
        let mut i = 0usize;
        let mut short = false;
        while i < n && self.unit < self.stop {
            let b = input[i];
            if b < 0x80 {
                if i + 16 <= n {
                    let block: &[u8; 16] = input[i..i + 16].try_into().expect("16 bytes");
                    if u128::from_ne_bytes(*block) & HIGH == 0 {
                        if self.unit + 16 <= self.offset {
                            self.unit += 16;
                            i += 16;
                            continue;
                        }
                        if self.unit >= self.offset && self.unit + 16 <= self.stop {
                            self.content.extend(block.iter().map(|&c| u16::from(c)));
                            self.unit += 16;
                            i += 16;
                            continue;
                        }
                    }
                }
                if self.unit >= self.offset {
                    self.content.push(u16::from(b));
                }
                self.unit += 1;
                i += 1;
                continue;
            }
            // The length of the sequence `b` starts and the range its second
            // byte must fall in (which rules out overlong forms, surrogates
            // and code points past U+10FFFF).
            let (len, lo, hi) = match b {
                0xC2..=0xDF => (2, 0x80, 0xBF),
                0xE0 => (3, 0xA0, 0xBF),
                0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
                0xED => (3, 0x80, 0x9F),
                0xF0 => (4, 0x90, 0xBF),
                0xF1..=0xF3 => (4, 0x80, 0xBF),
                0xF4 => (4, 0x80, 0x8F),
                _ => break,
            };
            if i + len > n {
                // Only a prefix is here; whether it is well formed is known
                // once the rest is read.
                short = true;
                break;
            }
            let b1 = input[i + 1];
            if !(lo..=hi).contains(&b1) || !input[i + 2..i + len].iter().all(|&c| cont(c)) {
                break;
            }
            let units: [u16; 2];
            let count = match len {
                2 => {
                    units = [(u16::from(b & 0x1F) << 6) | u16::from(b1 & 0x3F), 0];
                    1
                }
                3 => {
                    units = [
                        (u16::from(b & 0x0F) << 12)
                            | (u16::from(b1 & 0x3F) << 6)
                            | u16::from(input[i + 2] & 0x3F),
                        0,
                    ];
                    1
                }
                _ => {
                    units = surrogates(astral(&input[i..]));
                    2
                }
            };
            for &u in &units[..count] {
                if self.unit >= self.offset && self.unit < self.stop {
                    self.content.push(u);
                }
                self.unit += 1;
            }
            i += len;
        }
        self.byte = at + i as u64;
        if self.unit == self.stop && self.end.is_none() {
            self.end = Some((self.byte, self.unit));
        }
        (i, short)
    }

    /// Append the part of `piece` (which starts at unit `self.unit`) that
    /// falls in `[offset, stop)`, and advance past it.
    #[inline]
    fn emit(&mut self, piece: Piece<'_>) {
        let (unit, offset, stop) = (self.unit, self.offset, self.stop);
        if unit >= stop {
            return;
        }
        match piece {
            Piece::Invalid(bad) => {
                if unit >= offset {
                    self.content.push(REPLACEMENT_UNIT);
                }
                self.unit += 1;
                self.byte += bad as u64;
                if self.unit == stop {
                    self.end = Some((self.byte, stop));
                }
            }
            Piece::Text(bytes) => {
                let n = utf16_units(bytes);
                if unit + n > offset {
                    let skip = offset.saturating_sub(unit);
                    let take = (stop - unit.max(offset)).min(n - skip);
                    let (used, clean) = push_units(&mut self.content, bytes, skip, take);
                    if unit + skip + take == stop && clean {
                        self.end = Some((self.byte + used as u64, stop));
                    }
                }
                self.unit += n;
                self.byte += bytes.len() as u64;
            }
        }
    }
}

/// The whole decoded text of the first `len` bytes of `file`, decoded
/// lossily as Node does (a trailing incomplete sequence becomes one U+FFFD).
/// Fails with `UnexpectedEof` if the file is shorter than `len`.
pub fn read_all_lossy(file: &File, len: u64) -> io::Result<String> {
    let len = usize::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "log too large for memory"))?;
    let mut buf = vec![0u8; len];
    read_exact_at(file, &mut buf, 0)?;
    Ok(match String::from_utf8(buf) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// The end of a log for a status preview: the last at most `max_units` UTF-16
/// units of the lossy decoding of bytes `[0, len)` of `file`.
///
/// Reads only the last `3 * max_units + 3` bytes (every code unit comes from
/// at most 3 bytes). When that read starts inside a multi-byte character, its
/// leading continuation bytes (at most 3) are skipped so the cut does not
/// show a replacement character; the result never starts with a lone low
/// surrogate (a pair that does not fit whole is left out). Pass
/// `index.committed_bytes()` as `len` to leave out a trailing incomplete
/// sequence, or the full length to show it as U+FFFD.
pub fn tail_text(file: &File, len: u64, max_units: usize) -> io::Result<String> {
    if len == 0 || max_units == 0 {
        return Ok(String::new());
    }
    let want = (max_units as u64).saturating_mul(3).saturating_add(3);
    let start = len.saturating_sub(want);
    let mut buf = vec![0u8; (len - start) as usize];
    read_exact_at(file, &mut buf, start)?;
    // Every non-continuation byte starts a fresh decoding step, and so does
    // the byte after three continuation bytes (no sequence is longer than
    // lead + 3), so decoding from there gives a suffix of the whole decoding.
    let mut skip = 0;
    if start > 0 {
        while skip < 3 && skip < buf.len() && is_continuation(buf[skip]) {
            skip += 1;
        }
    }
    let text = String::from_utf8_lossy(&buf[skip..]);
    let mut used = 0usize;
    let mut cut = text.len();
    for (i, c) in text.char_indices().rev() {
        let w = c.len_utf16();
        if used + w > max_units {
            break;
        }
        used += w;
        cut = i;
    }
    Ok(text[cut..].to_owned())
}

#[cfg(test)]
mod tests;
