//! The UTF-8 → UTF-16 codec: log bytes decoded exactly as Node decodes them,
//! and the exact arithmetic between byte offsets and UTF-16 unit offsets. No
//! I/O happens here; reading files through the codec is [`super::window`].
//!
//! A command's output is stored as raw bytes in a log file. JS callers see it
//! as the string `buffer.toString("utf8")` would give: every maximal ill-formed
//! subpart becomes one U+FFFD (the same rule as [`String::from_utf8_lossy`]),
//! and positions are UTF-16 code units, like `String.prototype.slice`.
//!
//! How it works: `Utf8Decoder` cuts a byte stream into pieces — runs of
//! whole, well-formed characters and single maximal ill-formed subparts —
//! holding back at most 3 bytes of a character a later chunk may complete.
//! In well-formed UTF-8 each byte's share of the UTF-16 length is fixed by
//! the byte alone (1 for a byte that starts a character, 1 more for the lead
//! of a 4-byte one), so a run is measured by a branch-free sum and a unit
//! offset is mapped back to a byte offset by counting (`push_units` cuts a
//! surrogate pair where `slice` would). [`Utf16Index`] runs the decoder over
//! the bytes as they are captured and keeps a sparse list of
//! `(byte, unit)` checkpoints at character boundaries (one per
//! [`CHECKPOINT_BYTES`] of input), so a reader only decodes from the nearest
//! checkpoint instead of from the start of the file.

/// Approximate distance in input bytes between two checkpoints of a
/// [`Utf16Index`].
pub const CHECKPOINT_BYTES: u64 = 64 * 1024;

/// The replacement character as one UTF-16 code unit.
pub(super) const REPLACEMENT_UNIT: u16 = 0xFFFD;

/// True for UTF-8 continuation bytes (`0x80..=0xBF`).
#[inline(always)]
pub(super) fn is_continuation(b: u8) -> bool {
    (b as i8) < -0x40
}

/// UTF-16 contribution of one byte of *valid* UTF-8: 1 for a byte that starts
/// a character, 1 more for a lead byte of a 4-byte (astral) character, 0 for a
/// continuation byte.
#[inline(always)]
fn units_of_byte(b: u8) -> u8 {
    ((b as i8) >= -0x40) as u8 + (b >= 0xF0) as u8
}

/// Number of UTF-16 code units in the decoding of `valid`, which must be
/// well-formed UTF-8. Branch-free; blocks of 64 bytes are summed in a `u8`
/// (at most 128 per block) so the compiler can keep wide vector lanes.
#[inline]
pub(super) fn utf16_units(valid: &[u8]) -> u64 {
    let mut total = 0u64;
    let mut blocks = valid.chunks_exact(64);
    for block in &mut blocks {
        let mut n = 0u8;
        for &b in block {
            n += units_of_byte(b);
        }
        total += u64::from(n);
    }
    for &b in blocks.remainder() {
        total += u64::from(units_of_byte(b));
    }
    total
}

/// One step of the decoding, as handed to a [`Utf8Decoder`] sink.
pub(super) enum Piece<'a> {
    /// A run of well-formed UTF-8 (complete characters only).
    Text(&'a [u8]),
    /// A maximal ill-formed subpart of this many bytes: one U+FFFD.
    Invalid(usize),
}

/// Streaming UTF-8 decoder with the same replacement rule as
/// [`String::from_utf8_lossy`]. It holds back at most 3 bytes of a trailing
/// sequence that may still be completed by the next chunk.
#[derive(Debug, Clone, Default)]
pub(super) struct Utf8Decoder {
    pending: [u8; 4],
    pub(super) pending_len: usize,
}

impl Utf8Decoder {
    /// Decode `chunk`, which continues whatever was fed before, calling `sink`
    /// for every piece in order.
    #[inline]
    pub(super) fn feed<F: FnMut(Piece<'_>)>(&mut self, mut chunk: &[u8], sink: &mut F) {
        // Complete (or reject) a held-back sequence one byte at a time.
        while self.pending_len > 0 {
            let Some((&b, rest)) = chunk.split_first() else {
                return;
            };
            let held = self.pending_len;
            self.pending[held] = b;
            match std::str::from_utf8(&self.pending[..=held]) {
                Ok(_) => {
                    self.pending_len = 0;
                    chunk = rest;
                    sink(Piece::Text(&self.pending[..=held]));
                }
                Err(e) if e.error_len().is_none() => {
                    // Still a valid prefix; at most 3 bytes since a 4-byte
                    // prefix would be a whole character.
                    self.pending_len = held + 1;
                    chunk = rest;
                }
                Err(_) => {
                    // The held bytes were a valid prefix that `b` cannot
                    // continue: they are one maximal subpart. `b` itself is
                    // not consumed; it starts whatever comes next.
                    self.pending_len = 0;
                    sink(Piece::Invalid(held));
                }
            }
        }
        // Fast path: validate the rest of the chunk in place.
        loop {
            match std::str::from_utf8(chunk) {
                Ok(_) => {
                    if !chunk.is_empty() {
                        sink(Piece::Text(chunk));
                    }
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    if valid > 0 {
                        sink(Piece::Text(&chunk[..valid]));
                    }
                    match e.error_len() {
                        Some(bad) => {
                            sink(Piece::Invalid(bad));
                            chunk = &chunk[valid + bad..];
                        }
                        None => {
                            let tail = &chunk[valid..];
                            self.pending[..tail.len()].copy_from_slice(tail);
                            self.pending_len = tail.len();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// End of input: a held-back incomplete sequence becomes one U+FFFD.
    pub(super) fn finish<F: FnMut(Piece<'_>)>(&mut self, sink: &mut F) {
        if self.pending_len > 0 {
            let held = self.pending_len;
            self.pending_len = 0;
            sink(Piece::Invalid(held));
        }
    }
}

/// Counters and checkpoints of a [`Utf16Index`], kept apart from the decoder
/// so the decoder's sink can borrow them while the decoder runs.
#[derive(Debug, Clone)]
struct Tally {
    committed_bytes: u64,
    committed_units: u64,
    /// Byte offset at or after which the next checkpoint is recorded.
    next_checkpoint: u64,
    every: u64,
    /// The checkpoints after `(0, 0)`, which is implicit: a short log (most
    /// of them) then keeps no allocation at all.
    checkpoints: Vec<(u64, u64)>,
}

impl Tally {
    #[inline]
    fn piece(&mut self, piece: Piece<'_>) {
        match piece {
            Piece::Text(text) => self.text(text),
            Piece::Invalid(bad) => {
                self.committed_bytes += bad as u64;
                self.committed_units += 1;
                if self.committed_bytes >= self.next_checkpoint {
                    self.checkpoint();
                }
            }
        }
    }

    #[inline]
    fn text(&mut self, mut text: &[u8]) {
        loop {
            // Always > 0: `next_checkpoint` is moved past `committed_bytes`
            // whenever a checkpoint is recorded.
            let room = self.next_checkpoint - self.committed_bytes;
            if (text.len() as u64) < room {
                self.committed_units += utf16_units(text);
                self.committed_bytes += text.len() as u64;
                return;
            }
            // Cut at the first character boundary at or after the target.
            let mut cut = room as usize;
            while cut < text.len() && is_continuation(text[cut]) {
                cut += 1;
            }
            let (head, rest) = text.split_at(cut);
            self.committed_units += utf16_units(head);
            self.committed_bytes += head.len() as u64;
            self.checkpoint();
            text = rest;
        }
    }

    fn checkpoint(&mut self) {
        self.checkpoints
            .push((self.committed_bytes, self.committed_units));
        self.next_checkpoint = self.committed_bytes + self.every;
    }
}

/// Incremental decoder state and checkpoint index for one stream's log.
///
/// Feed it every byte appended to the log, in order, with [`push`](Self::push)
/// (after the bytes are written to the file, so readers never ask for bytes
/// the file does not hold yet). It remembers `(byte_offset, unit_offset)`
/// pairs at character boundaries about every [`CHECKPOINT_BYTES`] of input,
/// i.e. 16 bytes of memory per 64 KiB of log.
#[derive(Debug, Clone)]
pub struct Utf16Index {
    decoder: Utf8Decoder,
    bytes_seen: u64,
    tally: Tally,
}

impl Default for Utf16Index {
    fn default() -> Self {
        Self::new()
    }
}

impl Utf16Index {
    /// An empty index with a checkpoint every [`CHECKPOINT_BYTES`].
    pub fn new() -> Self {
        Self::with_interval(CHECKPOINT_BYTES)
    }

    /// An empty index with a checkpoint about every `bytes` bytes (tests and
    /// the fuzz targets use small intervals so checkpoints are exercised with
    /// small inputs).
    #[doc(hidden)]
    pub fn with_checkpoint_every(bytes: u64) -> Self {
        Self::with_interval(bytes)
    }

    fn with_interval(every: u64) -> Self {
        let every = every.max(1);
        Self {
            decoder: Utf8Decoder::default(),
            bytes_seen: 0,
            tally: Tally {
                committed_bytes: 0,
                committed_units: 0,
                next_checkpoint: every,
                every,
                checkpoints: Vec::new(),
            },
        }
    }

    /// Feed bytes in the order they were appended to the log file.
    pub fn push(&mut self, chunk: &[u8]) {
        self.bytes_seen += chunk.len() as u64;
        let tally = &mut self.tally;
        self.decoder.feed(chunk, &mut |piece| tally.piece(piece));
    }

    /// Bytes fed so far.
    pub fn bytes_seen(&self) -> u64 {
        self.bytes_seen
    }

    /// Bytes fully decoded: [`bytes_seen`](Self::bytes_seen) minus a trailing
    /// incomplete UTF-8 sequence (0..=3 bytes) held back until more bytes
    /// arrive.
    pub fn committed_bytes(&self) -> u64 {
        self.tally.committed_bytes
    }

    /// UTF-16 length of the decoding of the committed bytes.
    pub fn committed_units(&self) -> u64 {
        self.tally.committed_units
    }

    /// UTF-16 length if the stream ended now: [`committed_units`](Self::committed_units)
    /// plus 1 when a held-back incomplete sequence exists (it decodes to one
    /// U+FFFD at end of input).
    pub fn final_units(&self) -> u64 {
        self.tally.committed_units + u64::from(self.decoder.pending_len > 0)
    }

    /// The last checkpoint whose unit offset is `<= unit`, as
    /// `(byte_offset, unit_offset)`. Checkpoints sit at character boundaries
    /// (decoding may restart there), roughly every [`CHECKPOINT_BYTES`] of
    /// input; `(0, 0)` is always one.
    pub fn checkpoint_at_or_before(&self, unit: u64) -> (u64, u64) {
        let cps = &self.tally.checkpoints;
        let after = cps.partition_point(|&(_, u)| u <= unit);
        match after.checked_sub(1) {
            Some(i) => cps[i],
            None => (0, 0),
        }
    }

    /// The last checkpoint whose byte offset is `<= byte`, as
    /// `(byte_offset, unit_offset)`; `(0, 0)` is always one.
    pub fn checkpoint_at_or_before_byte(&self, byte: u64) -> (u64, u64) {
        let cps = &self.tally.checkpoints;
        let after = cps.partition_point(|&(b, _)| b <= byte);
        match after.checked_sub(1) {
            Some(i) => cps[i],
            None => (0, 0),
        }
    }

    /// Release spare capacity (called when the stream is finished).
    pub fn shrink(&mut self) {
        self.tally.checkpoints.shrink_to_fit();
    }

    /// Every checkpoint, the implicit `(0, 0)` first.
    #[cfg(test)]
    pub(super) fn checkpoints(&self) -> Vec<(u64, u64)> {
        std::iter::once((0, 0))
            .chain(self.tally.checkpoints.iter().copied())
            .collect()
    }
}

/// UTF-16 length of `bytes` decoded on their own, as Node would decode them
/// (a trailing incomplete sequence counts as one U+FFFD).
pub fn lossy_units(bytes: &[u8]) -> u64 {
    let mut n = 0u64;
    let mut decoder = Utf8Decoder::default();
    let mut sink = |p: Piece<'_>| match p {
        Piece::Text(t) => n += utf16_units(t),
        Piece::Invalid(_) => n += 1,
    };
    decoder.feed(bytes, &mut sink);
    decoder.finish(&mut sink);
    n
}

/// The code point of the 4-byte character at the start of `b` (well-formed UTF-8).
#[inline]
pub(super) fn astral(b: &[u8]) -> u32 {
    (u32::from(b[0] & 0x07) << 18)
        | (u32::from(b[1] & 0x3F) << 12)
        | (u32::from(b[2] & 0x3F) << 6)
        | u32::from(b[3] & 0x3F)
}

/// The high and low surrogates of an astral code point.
#[inline]
pub(super) fn surrogates(cp: u32) -> [u16; 2] {
    let v = cp - 0x1_0000;
    [0xD800 | (v >> 10) as u16, 0xDC00 | (v & 0x3FF) as u16]
}

/// Where unit `units` of the decoding of `valid` (well-formed UTF-8) falls:
/// the byte offset of the character holding it (or `valid.len()` at the
/// end), and whether it is the second unit of that character (the low half
/// of a surrogate pair). Blocks of 64 bytes wholly before the unit are only
/// counted, the one holding it is walked byte by byte.
fn unit_to_byte(valid: &[u8], units: u64) -> (usize, bool) {
    let mut seen = 0u64;
    let mut at = 0usize;
    for block in valid.chunks_exact(64) {
        let n = utf16_units(block);
        if seen + n > units {
            break;
        }
        seen += n;
        at += 64;
    }
    for (i, &b) in valid[at..].iter().enumerate() {
        if is_continuation(b) {
            continue;
        }
        if seen == units {
            return (at + i, false);
        }
        let u = u64::from(units_of_byte(b));
        if seen + u > units {
            return (at + i, true);
        }
        seen += u;
    }
    (valid.len(), false)
}

/// Append units `[skip, skip + take)` of the decoding of `valid` (well-formed
/// UTF-8, which must hold that many units) to `out`; a window edge inside a
/// surrogate pair keeps the half that falls in it, as `slice` does. Returns
/// the byte offset in `valid` where the units taken end, and whether that
/// is a character boundary (false when the last unit is a high surrogate).
pub(super) fn push_units(out: &mut Vec<u16>, valid: &[u8], skip: u64, take: u64) -> (usize, bool) {
    let (mut from, low_half) = unit_to_byte(valid, skip);
    let mut take = take;
    if low_half {
        out.push(surrogates(astral(&valid[from..]))[1]);
        from += 4;
        take -= 1;
    }
    let rest = &valid[from..];
    let (len, high_half) = unit_to_byte(rest, take);
    push_utf16(out, &rest[..len]);
    if high_half {
        out.push(surrogates(astral(&rest[len..]))[0]);
    }
    (from + len, !high_half)
}

/// Append the UTF-16 encoding of `valid` (well-formed UTF-8) to `out`: runs
/// of ASCII are widened 16 bytes at a time, other characters decoded one by
/// one (no checks: the decoder has validated every byte).
fn push_utf16(out: &mut Vec<u16>, valid: &[u8]) {
    const HIGH: u128 = u128::from_ne_bytes([0x80; 16]);
    let start = out.len();
    // Never more units than bytes.
    out.resize(start + valid.len(), 0);
    let dst = &mut out[start..];
    let (mut i, mut j) = (0usize, 0usize);
    let n = valid.len();
    while i < n {
        if i + 16 <= n {
            let block: &[u8; 16] = valid[i..i + 16].try_into().expect("16 bytes");
            if u128::from_ne_bytes(*block) & HIGH == 0 {
                for (d, &b) in dst[j..j + 16].iter_mut().zip(block) {
                    *d = u16::from(b);
                }
                i += 16;
                j += 16;
                continue;
            }
        }
        let b = valid[i];
        if b < 0x80 {
            dst[j] = u16::from(b);
            i += 1;
            j += 1;
        } else if b < 0xE0 {
            dst[j] = (u16::from(b & 0x1F) << 6) | u16::from(valid[i + 1] & 0x3F);
            i += 2;
            j += 1;
        } else if b < 0xF0 {
            dst[j] = (u16::from(b & 0x0F) << 12)
                | (u16::from(valid[i + 1] & 0x3F) << 6)
                | u16::from(valid[i + 2] & 0x3F);
            i += 3;
            j += 1;
        } else {
            let [hi, lo] = surrogates(astral(&valid[i..]));
            dst[j] = hi;
            dst[j + 1] = lo;
            i += 4;
            j += 2;
        }
    }
    out.truncate(start + j);
}

/// The first at most `max_units` UTF-16 units of the lossy decoding of
/// `bytes` (as JS `string.slice(0, max_units)` would count them, except that
/// a surrogate pair that does not fit whole is left out rather than split),
/// plus whether more text follows. Used for previews.
pub fn head_text(bytes: &[u8], max_units: usize) -> (String, bool) {
    let mut out = String::with_capacity(bytes.len().min(max_units.saturating_mul(3)));
    let mut used = 0usize;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        let n = utf16_units(valid.as_bytes()) as usize;
        if used + n <= max_units {
            out.push_str(valid);
            used += n;
        } else {
            let mut cut = valid.len();
            for (i, c) in valid.char_indices() {
                let w = c.len_utf16();
                if used + w > max_units {
                    cut = i;
                    break;
                }
                used += w;
            }
            out.push_str(&valid[..cut]);
            return (out, true);
        }
        if !chunk.invalid().is_empty() {
            if used >= max_units {
                return (out, true);
            }
            out.push('\u{FFFD}');
            used += 1;
        }
    }
    (out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_units_matches_std() {
        let s = "a\u{e9}\u{20ac}\u{1F600}".repeat(50);
        assert_eq!(utf16_units(s.as_bytes()), s.encode_utf16().count() as u64);
        assert_eq!(utf16_units(b""), 0);
    }

    #[test]
    fn specific_counts() {
        let mut idx = Utf16Index::new();
        idx.push(b"\xED\xA0\x80");
        assert_eq!(idx.final_units(), 3);
        let mut idx = Utf16Index::new();
        idx.push(b"\xF0\x9F\x98A");
        assert_eq!(idx.final_units(), 2);
        assert_eq!(idx.committed_bytes(), 4);
        let mut idx = Utf16Index::new();
        idx.push(b"ab\xF0\x9F\x98");
        assert_eq!(idx.committed_bytes(), 2);
        assert_eq!(idx.committed_units(), 2);
        assert_eq!(idx.final_units(), 3);
        idx.push(b"\x80");
        assert_eq!(idx.committed_bytes(), 6);
        assert_eq!(idx.committed_units(), 4);
        assert_eq!(idx.final_units(), 4);
    }

    #[test]
    fn units_of_a_valid_run_match_slice_at_every_edge() {
        // Long enough for whole 64-byte blocks and 16-byte ASCII runs, with
        // every width of character, astral ones at block edges.
        let mut text = String::new();
        for i in 0..12 {
            text.push_str(&"abcdefghijklmnopqrstu"[..i + 5]);
            text.push_str(
                [
                    "\u{e9}",
                    "\u{65e5}\u{672c}",
                    "\u{1F600}",
                    "\u{3b1}\u{1F680}",
                ][i % 4],
            );
        }
        let whole: Vec<u16> = text.encode_utf16().collect();
        let bytes = text.as_bytes();
        assert_eq!(utf16_units(bytes), whole.len() as u64);
        let mut all = Vec::new();
        push_utf16(&mut all, bytes);
        assert_eq!(all, whole);
        for skip in 0..whole.len() {
            for take in 1..=(whole.len() - skip).min(90) {
                let mut out = vec![7u16];
                push_units(&mut out, bytes, skip as u64, take as u64);
                assert_eq!(
                    &out[1..],
                    &whole[skip..skip + take],
                    "skip {skip} take {take}"
                );
            }
        }
    }

    #[test]
    fn head_text_edges() {
        assert_eq!(head_text(b"", 5), (String::new(), false));
        assert_eq!(head_text(b"abc", 0), (String::new(), true));
        assert_eq!(head_text(b"", 0), (String::new(), false));
        assert_eq!(head_text(b"abc", 3), ("abc".to_owned(), false));
        assert_eq!(head_text(b"abcd", 3), ("abc".to_owned(), true));
        let s = "a\u{1F600}b";
        assert_eq!(head_text(s.as_bytes(), 1), ("a".to_owned(), true));
        assert_eq!(head_text(s.as_bytes(), 2), ("a".to_owned(), true));
        assert_eq!(head_text(s.as_bytes(), 3), ("a\u{1F600}".to_owned(), true));
        assert_eq!(head_text(s.as_bytes(), 4), (s.to_owned(), false));
        assert_eq!(head_text(b"a\xFF", 1), ("a".to_owned(), true));
        assert_eq!(head_text(b"a\xFF", 2), ("a\u{FFFD}".to_owned(), false));
        assert_eq!(
            head_text(b"a\xF0\x9F\x98", 2),
            ("a\u{FFFD}".to_owned(), false)
        );
        assert_eq!(
            head_text(b"\xED\xA0\x80x", 3),
            ("\u{FFFD}\u{FFFD}\u{FFFD}".to_owned(), true)
        );
    }
}
