//! The UTF-8 → UTF-16 decoder and pager (`engine::text::decode` and
//! `text::window`) against the standard library's lossy decoding (the same
//! maximal-subpart rule as Node's `buffer.toString("utf8")`): the index's
//! counts, every page of a finished and of a still-growing log, the head and
//! tail previews and the whole text.
#![no_main]

use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;

use engine::text::decode::{head_text, Utf16Index};
use engine::text::window::{read_all_lossy, read_window, tail_text};
use libfuzzer_sys::fuzz_target;

fn memfile(data: &[u8]) -> File {
    // SAFETY: a plain syscall; the descriptor is owned by the File below.
    let fd = unsafe { libc::memfd_create(c"nlc-fuzz".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create failed");
    // SAFETY: a fresh descriptor owned by nobody else.
    let mut f = unsafe { File::from_raw_fd(fd) };
    f.write_all(data).unwrap();
    f
}

fn utf16(bytes: &[u8]) -> Vec<u16> {
    String::from_utf8_lossy(bytes).encode_utf16().collect()
}

/// Trailing bytes that are a still-completable sequence (held back while the log grows).
fn held_back(b: &[u8]) -> usize {
    for k in 1..=3.min(b.len()) {
        let lead = b[b.len() - k];
        let need = match lead {
            0xc2..=0xdf => 1,
            0xe0..=0xef => 2,
            0xf0..=0xf4 => 3,
            _ => continue,
        };
        if k - 1 >= need {
            return 0;
        }
        let ok = (1..k).all(|i| {
            let c = b[b.len() - k + i];
            let (lo, hi) = match (i, lead) {
                (1, 0xe0) => (0xa0, 0xbf),
                (1, 0xed) => (0x80, 0x9f),
                (1, 0xf0) => (0x90, 0xbf),
                (1, 0xf4) => (0x80, 0x8f),
                _ => (0x80, 0xbf),
            };
            (lo..=hi).contains(&c)
        });
        return if ok { k } else { 0 };
    }
    0
}

fn check_windows(file: &File, idx: &Utf16Index, finished: bool, want: &[u16], page: u64, at: u64) {
    let len = want.len() as u64;
    // At most ~16 pages per log keeps one run cheap: a page decodes from its
    // checkpoint to the end of its read chunk (up to 64 KiB), not just the window.
    let page = page.max(len / 16);
    let mut got = Vec::with_capacity(want.len());
    let mut off = 0u64;
    // Each page resumes where the one before ended, as paging does.
    let mut resume = None;
    loop {
        let w = read_window(file, idx, finished, off, page, resume).unwrap();
        resume = w.end;
        assert_eq!(w.total_units, len);
        let (a, b) = (off.min(len) as usize, (off + page).min(len) as usize);
        assert_eq!(w.content, want[a..b], "window {off}+{page} (finished {finished})");
        got.extend_from_slice(&w.content);
        off += page;
        if off >= len {
            break;
        }
    }
    assert_eq!(got, want, "pages concatenate to the whole");
    // One window anywhere, including past the end.
    let o = at % (len + 3);
    let l = 1 + at % 200_000;
    let w = read_window(file, idx, finished, o, l, None).unwrap();
    let (a, b) = (o.min(len) as usize, o.saturating_add(l).min(len) as usize);
    assert_eq!(w.content, want[a..b]);
    let w = read_window(file, idx, finished, u64::MAX, l, None).unwrap();
    assert!(w.content.is_empty());
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 8 {
        return;
    }
    let (head, body) = input.split_at(8);
    // Rarely, repeat the body past the real 64 KiB checkpoint interval;
    // otherwise checkpoints come every 1..64 bytes, so small inputs cross many.
    let real_interval = head[0] == 0xff && !body.is_empty();
    let data: Vec<u8> = if real_interval {
        body.iter().copied().cycle().take(65_536 + 4096 + body.len()).collect()
    } else {
        body.to_vec()
    };
    let big = data.len() > 65_536;
    // Pages of a big log stay big, so one run stays cheap enough to fuzz.
    let spin = u64::from(u16::from_le_bytes([head[1], head[2]]));
    let page = if big { 16_384 + spin % 60_000 } else { 1 + spin % 300 };
    let max_units = usize::from(u16::from_le_bytes([head[3], head[4]])) % 2100;
    let at = u64::from(u32::from_le_bytes([head[4], head[5], head[6], head[7]]));

    let file = memfile(&data);
    let mut idx = if real_interval {
        Utf16Index::new()
    } else {
        Utf16Index::with_checkpoint_every(1 + u64::from(head[0] & 0x3f))
    };
    let (mut pos, mut step) = (0usize, 1 + usize::from(head[7] & 0x1f));
    while pos < data.len() {
        let n = step.min(data.len() - pos);
        idx.push(&data[pos..pos + n]);
        pos += n;
        step = (step * 7 + 3) % if big { 9001 } else { 23 } + 1;
    }

    let full = utf16(&data);
    let hold = held_back(&data);
    let live = utf16(&data[..data.len() - hold]);
    assert_eq!(idx.bytes_seen(), data.len() as u64);
    assert_eq!(idx.committed_bytes(), (data.len() - hold) as u64);
    assert_eq!(idx.committed_units(), live.len() as u64);
    assert_eq!(idx.final_units(), full.len() as u64);
    check_windows(&file, &idx, true, &full, page, at);
    check_windows(&file, &idx, false, &live, page, at);

    // Whole text, as a host's bank gets it.
    assert_eq!(
        read_all_lossy(&file, data.len() as u64).unwrap(),
        String::from_utf8_lossy(&data)
    );

    // Head preview: a prefix, at most max_units, a pair never split.
    let (h, more) = head_text(&data, max_units);
    let h16: Vec<u16> = h.encode_utf16().collect();
    assert!(h16.len() <= max_units);
    assert!(full.starts_with(&h16), "head is a prefix");
    assert_eq!(more, h16.len() < full.len());
    if more {
        let next = full[h16.len()];
        assert!(
            h16.len() == max_units || (h16.len() + 1 == max_units && (0xd800..0xdc00).contains(&next)),
            "head stops early only before a pair that does not fit"
        );
    }

    // Tail preview: a suffix, at most max_units, never starting inside a pair,
    // as long as the budget allows (minus a pair that does not fit).
    for (len, whole) in [(data.len(), &full), (data.len() - hold, &live)] {
        let t = tail_text(&file, len as u64, max_units).unwrap();
        let t16: Vec<u16> = t.encode_utf16().collect();
        assert!(t16.len() <= max_units);
        assert!(whole.ends_with(&t16), "tail is a suffix of the decoding");
        assert!(t16.len() + 1 >= max_units.min(whole.len()), "tail is as long as the budget allows");
    }
});
