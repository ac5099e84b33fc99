//! What wine cannot model of the engine on Windows (PLATFORMS.md), run only
//! by the workflow's native Windows job; the wine run
//! (`scripts/platforms/windows.sh`) runs `tests/windows_engine.rs` alone
//! and names these:
//!   - SIGTERM's console break ending a tree that heeds it before the grace
//!     (wine's GenerateConsoleCtrlEvent fails in every arrangement);
//!   - a junction out of the cwd root (wine's `mklink /J` creates none);
//!   - terminal mode with ordinary console programs: under wine they do not
//!     attach to a pseudo console (only a program that opens the console by
//!     name is served, which `windows_engine.rs` tests), and
//!     `ResizePseudoConsole` is not implemented.
#![cfg(windows)]

use std::process::Command;
use std::time::{Duration, Instant};

use neurolink_commands_engine::capture::Stream;
use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::process::spawn::Input;
use neurolink_commands_engine::record::{KillReason, State};

mod common;
use common::screen::screen_text;

fn node() -> String {
    std::env::var("NLC_WIN_NODE").expect("NLC_WIN_NODE must name node.exe")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_is_a_break_that_ends_a_heeding_tree_before_the_grace() {
    // The break travels through a console the host shares with the command.
    // SAFETY: no arguments; fails harmlessly when a console is attached already.
    unsafe { windows_sys::Win32::System::Console::AllocConsole() };
    let f = common::fixture(PolicyInput {
        allowed_executables: vec![node()],
        kill_grace_ms: Some(30_000.0),
        ..Default::default()
    });
    let id = f
        .start(
            &[&node(), "-e", "setInterval(()=>{},1000)"],
            StartOptions::default(),
        )
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let t = Instant::now();
    let st = commands::kill(&f.engine, f.host, &id, 15, KillReason::Caller)
        .await
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert_eq!(st.state, State::Killed);
    assert!(st.error.as_deref().unwrap().contains("SIGTERM"), "{st:?}");
    // It ended on the break: the runner never terminated the job.
    assert_eq!(st.signal, None, "{st:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junction_out_of_the_root_is_outside() {
    let f = common::fixture(PolicyInput {
        allowed_executables: vec![node()],
        ..Default::default()
    });
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(f.root.path().join("sub")).unwrap();
    let junction = |name: &str, target: &std::path::Path| {
        let ok = Command::new("cmd")
            .args(["/d", "/c", "mklink", "/J"])
            .arg(f.root.path().join(name))
            .arg(target)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mklink /J {name}");
    };
    junction("out", outside.path());
    junction("in", &f.root.path().join("sub"));
    let start = |cwd: &str| {
        f.start(
            &[&node(), "-e", "0"],
            StartOptions {
                cwd: cwd.into(),
                ..Default::default()
            },
        )
    };
    let e = start("out").unwrap_err();
    assert_eq!(e.code(), "NLC_OUTSIDE_ROOT", "{e}");
    assert!(e.to_string().contains("outside the permitted root"), "{e}");
    // Control: a junction to a directory inside the root is followed.
    let id = start("in").unwrap();
    let st = commands::await_settled(&f.engine, f.host, &id, Some(60_000.0))
        .await
        .unwrap();
    assert_eq!(st.exit_code, Some(0), "{st:?}");
}

fn system32(exe: &str) -> String {
    let root = std::env::var("SystemRoot").unwrap_or_else(|_| "C:\\Windows".into());
    format!("{root}\\System32\\{exe}")
}

/// A terminal fixture: node and the system's sort.exe allowed.
fn terminal_fixture() -> common::Fixture {
    common::fixture(PolicyInput {
        allowed_executables: vec![node(), system32("sort.exe")],
        ..Default::default()
    })
}

fn start_terminal(f: &common::Fixture, argv: &[&str], cols: u16, rows: u16) -> String {
    f.start(
        argv,
        StartOptions {
            input: Input::Terminal { cols, rows },
            ..Default::default()
        },
    )
    .unwrap()
}

fn shown(f: &common::Fixture, id: &str) -> String {
    let rec = f.engine.registry.lookup(f.host, id).unwrap();
    screen_text(&std::fs::read(rec.log_path(Stream::Stdout)).unwrap())
}

async fn until_shown(f: &common::Fixture, id: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !shown(f, id).contains(what) {
        assert!(
            Instant::now() < deadline,
            "{what:?} never shown: {:?}",
            shown(f, id)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// An ordinary console program (its standard streams are the console, as
/// in any terminal) prints there and sees a terminal; the host's own
/// standard streams — pipes under the test runner — are not handed to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ordinary_program_prints_on_its_console() {
    let f = terminal_fixture();
    let n = node();
    let argv = [
        n.as_str(),
        "-e",
        "console.log('tty ' + process.stdout.isTTY + ' ' + process.stdin.isTTY); console.error('on stderr too')",
    ];
    let id = start_terminal(&f, &argv, 80, 24);
    let st = commands::await_settled(&f.engine, f.host, &id, Some(60_000.0))
        .await
        .unwrap();
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    let text = shown(&f, &id);
    assert!(text.contains("tty true true"), "{text:?}");
    assert!(text.contains("on stderr too"), "{text:?}");
}

/// A resize reaches the program as a console size change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resize_reaches_the_program() {
    let f = terminal_fixture();
    let script = "const s = () => console.log('size ' + process.stdout.columns + 'x' + process.stdout.rows); \
        s(); process.stdout.on('resize', () => { s(); process.exit(0) }); setInterval(() => {}, 1000)";
    let id = start_terminal(&f, &[&node(), "-e", script], 100, 30);
    until_shown(&f, &id, "size 100x30").await;
    commands::resize_terminal(&f.engine, f.host, &id, 120, 40).unwrap();
    let st = commands::await_settled(&f.engine, f.host, &id, Some(60_000.0))
        .await
        .unwrap();
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    assert!(
        shown(&f, &id).contains("size 120x40"),
        "{:?}",
        shown(&f, &id)
    );
}

/// `end: true` types a console's end of input (ctrl-z, enter): sort.exe
/// reads to the end, then prints what it read, sorted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_types_the_consoles_end_of_input() {
    let f = terminal_fixture();
    let id = start_terminal(&f, &[&system32("sort.exe")], 80, 24);
    tokio::time::sleep(Duration::from_millis(500)).await;
    commands::write_input(&f.engine, f.host, &id, b"pear\rapple\r".to_vec(), true)
        .await
        .unwrap();
    let st = commands::await_settled(&f.engine, f.host, &id, Some(60_000.0))
        .await
        .unwrap();
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    let text = shown(&f, &id);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines[lines.len() - 2..], ["apple", "pear"], "{text:?}");
}
