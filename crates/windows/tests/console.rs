//! Terminal mode's pseudo console against the real ConPTY API: run under
//! wine here and natively in the workflow's Windows job. Under wine only a
//! program that opens the console by name (`CONOUT$`, `CONIN$`) is served,
//! so the probe's `console` mode is what runs here; an ordinary program
//! printing to its standard output on the console, a resize reaching the
//! program and the console's end of input are tested through the engine
//! and the addon in the native job (`crates/engine/tests/
//! windows_native_only.rs`, `__test__/windows/native-only.test.mjs`).
#![cfg(windows)]

use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::sync::mpsc;
use std::time::Duration;

use neurolink_commands_windows::command::Start;
use neurolink_commands_windows::dir::HeldDir;
use neurolink_commands_windows::terminal::start_terminal;
use windows_sys::Win32::Foundation::{GetLastError, ERROR_IO_PENDING, WAIT_OBJECT_0};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::Threading::{GetExitCodeProcess, WaitForSingleObject};
use windows_sys::Win32::System::IO::{GetOverlappedResult, OVERLAPPED};

const PROBE: &str = env!("CARGO_BIN_EXE_nlc-win-probe");

/// The probe's path as Windows names it (under wine cargo gives the Unix
/// path, which is drive Z:).
fn probe() -> String {
    match PROBE.strip_prefix('/') {
        Some(rest) => format!("Z:\\{}", rest.replace('/', "\\")),
        None => PROBE.to_string(),
    }
}

/// One read or write on an overlapped handle, waited for (the handle's own
/// signal: one operation at a time). `None` at end of file or on an error.
fn io(h: &OwnedHandle, buf: &mut [u8], write: bool) -> Option<usize> {
    // SAFETY: a plain-data struct for which all zeroes is a valid value.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    let mut n = 0u32;
    let raw = h.as_raw_handle();
    // SAFETY: `buf` and `ov` outlive the operation: it is waited for below
    // before either goes out of scope.
    let ok = unsafe {
        if write {
            WriteFile(raw, buf.as_ptr(), buf.len() as u32, &mut n, &mut ov)
        } else {
            ReadFile(raw, buf.as_mut_ptr(), buf.len() as u32, &mut n, &mut ov)
        }
    };
    // SAFETY: no pointers.
    if ok == 0 && unsafe { GetLastError() } != ERROR_IO_PENDING {
        return None;
    }
    // SAFETY: the operation started on `raw` with `ov`; waiting for it.
    if unsafe { GetOverlappedResult(raw, &ov, &mut n, 1) } == 0 || n == 0 {
        return None;
    }
    Some(n as usize)
}

/// Everything read from `output` until end of file, chunk by chunk.
fn reader(output: OwnedHandle) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 4096];
        while let Some(n) = io(&output, &mut buf, false) {
            if tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    rx
}

/// Reads on until `seen` says the text so far is enough (30 s at most).
fn until(rx: &mpsc::Receiver<Vec<u8>>, text: &mut String, seen: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !seen(text) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => text.push_str(&String::from_utf8_lossy(&chunk)),
            Err(e) => panic!("{e:?}: the console showed only {text:?}"),
        }
    }
}

#[test]
fn a_program_on_the_console_prints_to_it_and_reads_what_is_typed() {
    let base = std::env::temp_dir().join(format!("nlc-console-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let dir = HeldDir::open(&base).unwrap();
    let argv = [probe(), "console".into()];
    let env = [("NLC_MARK".to_string(), "é 1".to_string())];
    let start = Start {
        argv: &argv,
        dir: &dir,
        env: Some(&env),
        stdin_pipe: false,
    };
    let t = start_terminal(&start, 100, 30).unwrap();
    let rx = reader(t.output);
    let mut text = String::new();
    // The start's working directory and replaced environment hold on the
    // console as with pipes.
    until(&rx, &mut text, |t| t.contains("mark "));
    assert!(
        text.contains(&format!("cwd {}", dir.path().display())),
        "{text:?}"
    );
    assert!(text.contains("mark é 1"), "{text:?}");
    let mut typed = *b"typed here\r";
    assert_eq!(io(&t.input, &mut typed, true), Some(typed.len()));
    until(&rx, &mut text, |t| t.contains("read typed here"));
    // SAFETY: an open process handle; waits for its end.
    assert_eq!(
        unsafe { WaitForSingleObject(t.process.as_raw_handle(), 30_000) },
        WAIT_OBJECT_0
    );
    let mut code = 0u32;
    // SAFETY: an open process handle; `code` outlives the call.
    assert_ne!(
        unsafe { GetExitCodeProcess(t.process.as_raw_handle(), &mut code) },
        0
    );
    assert_eq!(code, 7);
    // The output ends once the console is closed, not when the program
    // exits; closing waits for the host to flush, so it is done while the
    // reader reads.
    drop(t.console);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => text.push_str(&String::from_utf8_lossy(&chunk)),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(e) => panic!("{e:?}: no end of file after the console closed: {text:?}"),
        }
    }
    println!("console showed: {text:?}");
}
