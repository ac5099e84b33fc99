//! Windows, whole reads and tails of real log files checked against
//! `String::from_utf8_lossy(..).encode_utf16()`, for indexes fed in odd
//! chunk sizes with checkpoints at every spacing.

use super::*;
use crate::text::decode::{head_text, Utf16Index, CHECKPOINT_BYTES};
use proptest::prelude::*;
use std::fs::File;
use std::io;
use std::io::Write;

fn oracle(bytes: &[u8]) -> Vec<u16> {
    String::from_utf8_lossy(bytes).encode_utf16().collect()
}

fn temp_with(bytes: &[u8]) -> File {
    let mut f = tempfile::tempfile().expect("temp file");
    f.write_all(bytes).expect("write temp file");
    f
}

fn index_of(bytes: &[u8], every: u64, splits: &[usize]) -> Utf16Index {
    let mut idx = Utf16Index::with_checkpoint_every(every);
    let mut rest = bytes;
    let mut i = 0;
    while !rest.is_empty() {
        let n = if splits.is_empty() {
            rest.len()
        } else {
            splits[i % splits.len()].clamp(1, rest.len())
        };
        idx.push(&rest[..n]);
        rest = &rest[n..];
        i += 1;
    }
    idx
}

/// Length of the trailing incomplete-but-valid prefix of `bytes`.
fn held_back(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => 0,
        Err(e) => {
            let mut rest = &bytes[e.valid_up_to()..];
            let mut err = e;
            loop {
                match err.error_len() {
                    None => return rest.len(),
                    Some(n) => {
                        rest = &rest[n..];
                        match std::str::from_utf8(rest) {
                            Ok(_) => return 0,
                            Err(e2) => {
                                rest = &rest[e2.valid_up_to()..];
                                err = e2;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Check everything an index and a file built from `bytes` must satisfy.
fn check_all(bytes: &[u8], idx: &Utf16Index) {
    let whole = oracle(bytes);
    let held = held_back(bytes);
    assert_eq!(idx.bytes_seen(), bytes.len() as u64);
    assert_eq!(idx.committed_bytes(), (bytes.len() - held) as u64);
    let committed = oracle(&bytes[..bytes.len() - held]);
    assert_eq!(idx.committed_units(), committed.len() as u64);
    assert_eq!(idx.final_units(), whole.len() as u64);

    let file = temp_with(bytes);
    let all = read_window(&file, idx, true, 0, u64::MAX, None).unwrap();
    assert_eq!(all.content, whole);
    assert_eq!(all.total_units, whole.len() as u64);
    let part = read_window(&file, idx, false, 0, u64::MAX, None).unwrap();
    assert_eq!(part.content, committed);
    assert_eq!(part.total_units, committed.len() as u64);
    assert_eq!(
        read_all_lossy(&file, bytes.len() as u64).unwrap(),
        String::from_utf8_lossy(bytes)
    );
}

#[test]
fn known_cases() {
    let cases: &[&[u8]] = &[
        b"",
        b"hello, world",
        "caf\u{e9}".as_bytes(),
        "\u{20ac}100".as_bytes(),
        "\u{1F600} smile \u{1F600}".as_bytes(),
        b"\xFF",
        b"a\xFFb",
        b"\x80",
        b"\x80\x80\x80\x80\x80",
        b"\xC0\xAF",
        b"\xED\xA0\x80",
        b"\xF0\x9F\x98A",
        b"\xF4\x90\x80\x80",
        b"\xE1\x80",
        b"ok\xF0\x9F\x98",
        b"ok\xE2",
        b"\xC2\xF0\x9F\x98",
        b"\xE2\x82\xF0\x9F",
        b"line1\r\nline2\r\n",
        b"\xEF\xBB\xBFbom",
        b"nul\0in\0the\0middle\0",
    ];
    for &bytes in cases {
        for every in [1, 2, 3, 7, CHECKPOINT_BYTES] {
            let idx = index_of(bytes, every, &[]);
            check_all(bytes, &idx);
            let idx = index_of(bytes, every, &[1]);
            check_all(bytes, &idx);
        }
    }
}

#[test]
fn pages_of_a_long_mixed_log_match_slice_across_reads() {
    // Longer than several 64 KiB reads, with characters of every width
    // (and a few ill-formed bytes) falling across read boundaries.
    let mut bytes = Vec::new();
    let mut i = 0usize;
    while bytes.len() < 300_000 {
        bytes.extend_from_slice(&b"plain ascii padding text 0123456789"[..(i * 7) % 33]);
        bytes.extend_from_slice(
            [
                "\u{e9}",
                "\u{65e5}\u{672c}",
                "\u{1F600}",
                "\u{3b1}\u{1F680}\n",
            ][i % 4]
                .as_bytes(),
        );
        if i.is_multiple_of(997) {
            bytes.extend_from_slice(&[0xF0, 0x9F, b'x', 0xC3]);
        }
        i += 1;
    }
    let whole = oracle(&bytes);
    let file = temp_with(&bytes);
    let mut idx = Utf16Index::new();
    idx.push(&bytes);
    for page in [50_000u64, 65_537, 777] {
        let (mut off, mut resume, mut joined) = (0u64, None, Vec::new());
        loop {
            let w = read_window(&file, &idx, true, off, page, resume).unwrap();
            let fresh = read_window(&file, &idx, true, off, page, None).unwrap();
            assert_eq!(w.content, fresh.content, "page {page} at {off}");
            if w.content.is_empty() {
                break;
            }
            off += w.content.len() as u64;
            joined.extend_from_slice(&w.content);
            resume = w.end;
        }
        assert_eq!(joined, whole, "page {page}");
    }
}

#[test]
fn emoji_split_at_every_position() {
    let text = "x\u{1F600}y\u{20ac}\u{e9}\u{1F680}z";
    let bytes = text.as_bytes();
    for a in 0..=bytes.len() {
        for b in a..=bytes.len() {
            let mut idx = Utf16Index::with_checkpoint_every(3);
            idx.push(&bytes[..a]);
            idx.push(&bytes[a..b]);
            idx.push(&bytes[b..]);
            check_all(bytes, &idx);
            assert_eq!(idx.committed_bytes(), bytes.len() as u64);
        }
        let mut idx = Utf16Index::new();
        idx.push(&bytes[..a]);
        let prefix = &bytes[..a];
        assert_eq!(idx.final_units(), oracle(prefix).len() as u64);
    }
}

#[test]
fn window_cuts_surrogate_pairs_like_slice() {
    let text = "a\u{1F600}b\u{1F600}\u{1F600}c";
    let bytes = text.as_bytes();
    let whole: Vec<u16> = text.encode_utf16().collect();
    let file = temp_with(bytes);
    for every in [1, 2, 5, 100] {
        let idx = index_of(bytes, every, &[]);
        for off in 0..=whole.len() + 2 {
            for lim in 0..=whole.len() + 2 {
                let w = read_window(&file, &idx, true, off as u64, lim as u64, None).unwrap();
                let lo = off.min(whole.len());
                let hi = (off + lim).min(whole.len());
                assert_eq!(w.content, &whole[lo..hi], "off {off} lim {lim}");
            }
        }
    }
}

#[test]
fn checkpoints_are_sparse_and_clean() {
    let text = "ab\u{1F600}\u{20ac}c\u{e9}".repeat(20_000);
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(b"\xFF\x80\xE2\x82");
    let idx = index_of(&bytes, CHECKPOINT_BYTES, &[4093]);
    let cps = idx.checkpoints();
    assert!(cps.len() > 2);
    for pair in cps.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!((CHECKPOINT_BYTES..=CHECKPOINT_BYTES + 3).contains(&gap));
    }
    for &(b, u) in &cps {
        assert_eq!(oracle(&bytes[..b as usize]).len() as u64, u);
    }
    check_all(&bytes, &idx);
    let mut idx = idx;
    idx.shrink();
    assert_eq!(idx.checkpoint_at_or_before(0), (0, 0));
    assert_eq!(idx.checkpoint_at_or_before(u64::MAX), cps_last(&idx));
}

fn cps_last(idx: &Utf16Index) -> (u64, u64) {
    *idx.checkpoints().last().unwrap()
}

#[test]
fn out_of_range_windows_are_empty() {
    let bytes = b"abc";
    let idx = index_of(bytes, 1, &[]);
    let file = temp_with(bytes);
    let w = read_window(&file, &idx, true, 3, 10, None).unwrap();
    assert!(w.content.is_empty());
    assert_eq!(w.total_units, 3);
    let w = read_window(&file, &idx, true, u64::MAX, u64::MAX, None).unwrap();
    assert!(w.content.is_empty());
    let w = read_window(&file, &idx, true, 1, 0, None).unwrap();
    assert!(w.content.is_empty());
}

#[test]
fn short_file_is_an_error() {
    let idx = index_of(b"abcdef", 2, &[]);
    let file = temp_with(b"abc");
    let err = read_window(&file, &idx, true, 0, 10, None).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    let err = read_all_lossy(&file, 6).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
}

fn tail_of(bytes: &[u8], max: usize) -> String {
    tail_text(&temp_with(bytes), bytes.len() as u64, max).unwrap()
}

#[test]
fn tail_text_edges() {
    assert_eq!(tail_of(b"", 10), "");
    assert_eq!(tail_of(b"abc", 0), "");
    assert_eq!(tail_of(b"hello", 3), "llo");
    assert_eq!(tail_of(b"hello", 30), "hello");
    // The read starts inside the emoji: its tail bytes are skipped.
    let s = "\u{1F600}ab";
    assert_eq!(tail_of(s.as_bytes(), 2), "ab");
    assert_eq!(tail_of(s.as_bytes(), 3), "ab");
    assert_eq!(tail_of(s.as_bytes(), 4), s);
    // Lone continuation bytes at the very start of the file are real.
    assert_eq!(tail_of(b"\x80ab", 5), "\u{FFFD}ab");
    // A trailing incomplete sequence shows as U+FFFD.
    assert_eq!(tail_of(b"ab\xF0\x9F", 2), "b\u{FFFD}");
    let file = temp_with(b"ab\xF0\x9F");
    assert_eq!(tail_text(&file, 2, 5).unwrap(), "ab");
    // Long runs of invalid bytes.
    assert_eq!(tail_of(&[0x80; 20], 2), "\u{FFFD}\u{FFFD}");
    assert_eq!(tail_of(b"\xF0\x90\x80\xF0\x90\x80", 1), "\u{FFFD}");
}

const ILL_FORMED: [&[u8]; 8] = [
    b"\xF0\x9F\x98",
    b"\xE2\x82",
    b"\xC3",
    b"\xED\xA0\x80",
    b"\xC0\xAF",
    b"\xF4\x90\x80\x80",
    b"\x80\xBF",
    b"\xFF\xFE",
];

/// Byte soup: ASCII (with CR, LF, NUL), valid characters of every width,
/// random bytes, and hand-picked ill-formed sequences.
fn soup() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => prop::sample::select(&b"ab\r\n\0 z"[..]).prop_map(|b| vec![b]),
        4 => any::<char>().prop_map(|c| c.to_string().into_bytes()),
        1 => prop::sample::select(&['\u{e9}', '\u{20ac}', '\u{1F600}', '\u{FEFF}'][..])
            .prop_map(|c| c.to_string().into_bytes()),
        2 => any::<u8>().prop_map(|b| vec![b]),
        1 => prop::sample::select(&ILL_FORMED[..])
        .prop_map(|b| b.to_vec()),
    ];
    prop::collection::vec(piece, 0..120).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn index_and_windows_match_oracle(
        bytes in soup(),
        splits in prop::collection::vec(1usize..9, 0..6),
        every in 1u64..24,
        windows in prop::collection::vec((0u64..400, 0u64..60), 1..8),
        page in 1u64..17,
    ) {
        let idx = index_of(&bytes, every, &splits);
        check_all(&bytes, &idx);

        let whole = oracle(&bytes);
        let held = held_back(&bytes);
        let committed = oracle(&bytes[..bytes.len() - held]);
        let file = temp_with(&bytes);

        for (b, u) in idx.checkpoints() {
            let b = b as usize;
            prop_assert_eq!(oracle(&bytes[..b]).len() as u64, u);
            prop_assert_eq!(&oracle(&bytes[b..])[..], &whole[u as usize..]);
        }

        for &(off, lim) in &windows {
            let w = read_window(&file, &idx, true, off, lim, None).unwrap();
            let lo = (off as usize).min(whole.len());
            let hi = ((off + lim) as usize).min(whole.len());
            prop_assert_eq!(&w.content[..], &whole[lo..hi]);
            prop_assert_eq!(w.total_units, whole.len() as u64);

            let w = read_window(&file, &idx, false, off, lim, None).unwrap();
            let lo = (off as usize).min(committed.len());
            let hi = ((off + lim) as usize).min(committed.len());
            prop_assert_eq!(&w.content[..], &committed[lo..hi]);
            prop_assert_eq!(w.total_units, committed.len() as u64);
        }

        // Page by page, each page resuming where the one before ended:
        // every resume point is a place decoding restarts from.
        for finished in [true, false] {
            let text = if finished { &whole } else { &committed };
            let mut joined = Vec::new();
            let mut off = 0;
            let mut resume = None;
            loop {
                let w = read_window(&file, &idx, finished, off, page, resume).unwrap();
                if w.content.is_empty() {
                    break;
                }
                if let Some((b, u)) = w.end {
                    prop_assert_eq!(u, off + w.content.len() as u64);
                    prop_assert_eq!(oracle(&bytes[..b as usize]).len() as u64, u);
                }
                off += w.content.len() as u64;
                joined.extend(w.content);
                resume = w.end;
            }
            prop_assert_eq!(&joined, text);
        }
    }

    #[test]
    fn tail_and_head_match_oracle(bytes in soup(), max in 0usize..40) {
        let text = String::from_utf8_lossy(&bytes);
        let units: Vec<u16> = text.encode_utf16().collect();

        let tail = tail_of(&bytes, max);
        let tail_units: Vec<u16> = tail.encode_utf16().collect();
        prop_assert!(tail_units.len() <= max);
        prop_assert!(units.ends_with(&tail_units));
        // Only a pair that did not fit may be left out.
        prop_assert!(tail_units.len() + 1 >= max.min(units.len()));

        let (head, more) = head_text(&bytes, max);
        let head_units: Vec<u16> = head.encode_utf16().collect();
        prop_assert!(head_units.len() <= max);
        prop_assert!(units.starts_with(&head_units));
        prop_assert!(head_units.len() + 1 >= max.min(units.len()));
        prop_assert_eq!(more, head_units.len() < units.len());
    }
}
