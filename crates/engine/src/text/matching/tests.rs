use super::*;
use std::io::Write;

fn file_with(bytes: &[u8]) -> File {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(bytes).unwrap();
    f
}

/// Oracle: the lines of the lossy text holding `needle` at offset ≥ from.
fn oracle(bytes: &[u8], needle: &str, from: u64) -> Vec<(u64, u64, u64)> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::new();
    let mut offset = 0u64;
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        if i == lines.len() - 1 && raw.is_empty() {
            break;
        }
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let mut start = 0;
        while let Some(p) = line[start..].find(needle) {
            let at = offset + line[..start + p].encode_utf16().count() as u64;
            if at >= from {
                out.push((i as u64 + 1, offset, at));
                break;
            }
            start += p + line[start + p..].chars().next().unwrap().len_utf8();
        }
        offset += raw.encode_utf16().count() as u64 + 1;
    }
    out
}

fn search_all(bytes: &[u8], pat: &Pattern, from: u64, max: usize) -> SearchResult {
    let f = file_with(bytes);
    search_file(
        &f,
        ScanStart::ORIGIN,
        bytes.len() as u64,
        true,
        pat,
        from,
        max,
        TextCut::SEARCH,
    )
    .unwrap()
}

#[test]
fn patterns_are_checked() {
    assert!(matches!(
        Pattern::new("", false),
        Err(EngineError::BadInput(_))
    ));
    assert!(matches!(
        Pattern::new("a\nb", false),
        Err(EngineError::BadInput(_))
    ));
    let e = Pattern::new("(a", true).unwrap_err().to_string();
    assert!(e.contains("unclosed group"), "{e}");
    // A pattern that backtracking engines take exponential time on is linear here.
    let p = Pattern::new("(a+)+$", true).unwrap();
    let hay = format!("{}b\n", "a".repeat(50_000));
    assert!(search_all(hay.as_bytes(), &p, 0, 10).matches.is_empty());
}

#[test]
fn search_matches_the_oracle_across_multibyte_text() {
    let mut text = String::new();
    for i in 0..3000 {
        let pad = "\u{1F642}\u{e9}".repeat(i % 4);
        let mark = if i % 3 == 0 { "FAIL" } else { "ok" };
        text.push_str(&format!("{pad} {i} {mark}\r\n"));
        if i % 500 == 0 {
            text.push_str(&"y".repeat(3 * MAX_LINE_BYTES / 2));
            text.push('\n');
        }
    }
    text.push_str("last FAIL without end");
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(b"\xFF FAIL\xE2\x82\n");
    let pat = Pattern::new("FAIL", false).unwrap();
    for from in [0u64, 1, 77, 5000, 1_000_000] {
        let want = oracle(&bytes, "FAIL", from);
        let got = search_all(&bytes, &pat, from, 10_000);
        let got: Vec<_> = got
            .matches
            .iter()
            .map(|m| (m.line, m.offset, m.match_offset))
            .collect();
        assert_eq!(
            got.len(),
            want.len(),
            "from {from}: last got {:?} want {:?}",
            got.last(),
            want.last()
        );
        assert_eq!(got, want, "from {from}");
    }
    let re = Pattern::new("F[A]IL", true).unwrap();
    let got: Vec<_> = search_all(&bytes, &re, 0, 10_000)
        .matches
        .iter()
        .map(|m| (m.line, m.offset, m.match_offset))
        .collect();
    assert_eq!(got, oracle(&bytes, "FAIL", 0));
}

#[test]
fn the_last_line_counts() {
    let pat = Pattern::new("FAIL", false).unwrap();
    for bytes in [
        &b"ok\nlast FAIL x\xFF FAIL\xE2\x82\n"[..],
        b"last FAIL",
        b"ok\r\nlast FAIL\n",
    ] {
        let got: Vec<_> = search_all(bytes, &pat, 0, 10)
            .matches
            .iter()
            .map(|m| (m.line, m.offset, m.match_offset))
            .collect();
        assert_eq!(got, oracle(bytes, "FAIL", 0), "{bytes:?}");
    }
}

#[test]
fn max_matches_has_more_and_scanned_to() {
    let bytes = b"a x\nb\nc x\nd x\n";
    let pat = Pattern::new("x", false).unwrap();
    let r = search_all(bytes, &pat, 0, 2);
    assert_eq!(r.matches.len(), 2);
    assert!(r.has_more);
    assert_eq!(r.scanned_to, 10);
    let r2 = search_all(bytes, &pat, r.scanned_to, 2);
    assert_eq!(
        r2.matches.iter().map(|m| m.line).collect::<Vec<_>>(),
        vec![4]
    );
    assert!(!r2.has_more);
    assert_eq!(r2.scanned_to, bytes.len() as u64);
    // A running stream: the unfinished last line is left for later.
    let f = file_with(b"x1\nx2 partial");
    let r = search_file(
        &f,
        ScanStart::ORIGIN,
        13,
        false,
        &pat,
        0,
        10,
        TextCut::SEARCH,
    )
    .unwrap();
    assert_eq!(r.matches.len(), 1);
    assert_eq!(r.scanned_to, 3);
}

#[test]
fn long_lines_are_cut_in_the_text() {
    let line = format!("{}FAIL{}\n", "\u{1F642}".repeat(300), "z".repeat(10));
    let r = search_all(
        line.as_bytes(),
        &Pattern::new("FAIL", false).unwrap(),
        0,
        10,
    );
    let t = &r.matches[0].text;
    assert!(t.ends_with('…'));
    assert_eq!(t.trim_end_matches('…').encode_utf16().count(), 500);
}

fn watch_run(chunks: &[&[u8]], pat: &str, from: u64) -> Option<(usize, Hit)> {
    let slot = Slot::new();
    let w = Arc::new(Waiter {
        pattern: Arc::new(Pattern::new(pat, false).unwrap()),
        from,
        stream: 0,
        slot: slot.clone(),
    });
    let mut watch = Watch::new(Vec::new(), 0, 0);
    watch.add(w);
    for c in chunks {
        watch.feed(c);
    }
    watch.finish();
    slot.get().map(|(i, h, partial)| {
        assert!(!partial, "the line ended, so the hit is final");
        (i, h)
    })
}

#[test]
fn a_pattern_split_between_writes_matches_with_exact_offsets() {
    let text = "\u{1F642} boot\nlistening on :3000\n";
    let bytes = text.as_bytes();
    for a in 0..bytes.len() {
        for b in a..bytes.len() {
            let hit = watch_run(&[&bytes[..a], &bytes[a..b], &bytes[b..]], "listening", 0).unwrap();
            assert_eq!(
                hit.1.offset,
                "\u{1F642} boot\n".encode_utf16().count() as u64
            );
            assert_eq!(hit.1.line, "listening on :3000");
        }
    }
    assert!(
        watch_run(&[b"ready a\n", b"ready b\n"], "ready", 1)
            .unwrap()
            .1
            .line
            == "ready b"
    );
    assert!(watch_run(&[b"nothing here\n"], "ready", 0).is_none());
    // The last line without an end is seen when the stream finishes.
    let long = format!("{}ready", "q".repeat(PARTIAL_CHECK_BYTES * 2));
    let hit = watch_run(&[long.as_bytes()], "ready", 0).unwrap();
    assert_eq!(hit.1.offset, (PARTIAL_CHECK_BYTES * 2) as u64);
}

#[test]
fn many_waits_share_one_feed() {
    let mut watch = Watch::new(Vec::new(), 0, 0);
    let slots: Vec<_> = ["alpha", "beta", "gamma"]
        .iter()
        .map(|p| {
            let slot = Slot::new();
            watch.add(Arc::new(Waiter {
                pattern: Arc::new(Pattern::new(p, false).unwrap()),
                from: 0,
                stream: 1,
                slot: slot.clone(),
            }));
            slot
        })
        .collect();
    watch.feed(b"x alpha\ny beta\n");
    assert_eq!(slots[0].get().unwrap().1.offset, 2);
    assert_eq!(slots[1].get().unwrap().1.offset, 10);
    assert!(slots[2].get().is_none());
}

#[test]
fn line_starts_and_units_from_the_file() {
    let bytes = "ab\n\u{1F642}c\nde".as_bytes();
    let f = file_with(bytes);
    assert_eq!(line_start_before(&f, bytes.len() as u64).unwrap(), 9);
    assert_eq!(line_start_before(&f, 3).unwrap(), 3);
    assert_eq!(line_start_before(&f, 2).unwrap(), 0);
    assert_eq!(units_between(&f, 0, 9).unwrap(), 7);
}

/// The same search with the stream's index at hand, checkpoints every
/// `every` bytes.
fn search_indexed(bytes: &[u8], pat: &Pattern, from: u64, max: usize, every: u64) -> SearchResult {
    let f = file_with(bytes);
    let mut idx = crate::text::decode::Utf16Index::with_checkpoint_every(every);
    // Fed in uneven chunks, as the capture path would.
    for c in bytes.chunks(4093) {
        idx.push(c);
    }
    search_file_indexed(
        &f,
        ScanStart::ORIGIN,
        bytes.len() as u64,
        true,
        pat,
        from,
        max,
        TextCut::SEARCH,
        &|b| idx.checkpoint_at_or_before_byte(b),
    )
    .unwrap()
}

#[test]
fn an_indexed_search_counts_only_near_matches_and_agrees_exactly() {
    let mut text = String::new();
    for i in 0..4000 {
        let pad = "\u{1F642}\u{e9}".repeat(i % 4);
        let mark = if i % 97 == 0 { "FAIL" } else { "ok" };
        text.push_str(&format!("{pad} {i} {mark}\r\n"));
        if i % 1500 == 0 {
            text.push_str(&"\u{20ac}".repeat(MAX_LINE_BYTES / 2));
            text.push('\n');
        }
    }
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(b"\xFF FAIL\xE2\x82\nno end \xF0\x9F");
    for (needle, regex) in [
        ("FAIL", false),
        ("F[A]IL", true),
        ("no such text", false),
        ("end", false),
    ] {
        let pat = Pattern::new(needle, regex).unwrap();
        for from in [0u64, 1, 5000, 300_000, u64::MAX / 2] {
            let plain = search_all(&bytes, &pat, from, 10_000);
            for every in [1u64, 7, 4096, 64 * 1024] {
                let got = search_indexed(&bytes, &pat, from, 10_000, every);
                assert_eq!(got, plain, "{needle} from {from} every {every}");
            }
            let small = search_all(&bytes, &pat, from, 3);
            assert_eq!(search_indexed(&bytes, &pat, from, 3, 4096), small);
        }
    }
    let pat = Pattern::new("FAIL", false).unwrap();
    let want = oracle(&bytes, "FAIL", 0);
    let got: Vec<_> = search_indexed(&bytes, &pat, 0, 10_000, 4096)
        .matches
        .iter()
        .map(|m| (m.line, m.offset, m.match_offset))
        .collect();
    assert_eq!(got, want);
    // No match at all: scannedTo is the whole stream's length in units.
    let none = search_indexed(&bytes, &Pattern::new("absent", false).unwrap(), 0, 10, 4096);
    assert!(none.matches.is_empty());
    assert_eq!(
        none.scanned_to,
        String::from_utf8_lossy(&bytes).encode_utf16().count() as u64
    );
}
