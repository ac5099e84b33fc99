//! What wine cannot model of the engine on Windows (PLATFORMS.md), run only
//! by the workflow's native Windows job; the wine run
//! (`scripts/platforms/windows.sh`) runs `tests/windows_engine.rs` alone
//! and names these:
//!   - SIGTERM's console break ending a tree that heeds it before the grace
//!     (wine's GenerateConsoleCtrlEvent fails in every arrangement);
//!   - a junction out of the cwd root (wine's `mklink /J` creates none).
//!
//! Terminal mode (ConPTY) is refused on Windows for now
//! (`NLC_TERMINAL_UNAVAILABLE`, asserted in `windows_engine.rs`).
#![cfg(windows)]

use std::process::Command;
use std::time::{Duration, Instant};

use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::record::{KillReason, State};

mod common;

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
    let argv = vec![node(), "-e".into(), "setInterval(()=>{},1000)".into()];
    let id = commands::start(
        &f.engine,
        argv,
        StartOptions {
            cwd: ".".into(),
            ..Default::default()
        },
        f.ctx(),
    )
    .unwrap()
    .task_id;
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
        commands::start(
            &f.engine,
            vec![node(), "-e".into(), "0".into()],
            StartOptions {
                cwd: cwd.into(),
                ..Default::default()
            },
            f.ctx(),
        )
    };
    let e = start("out").unwrap_err();
    assert_eq!(e.code(), "NLC_OUTSIDE_ROOT", "{e}");
    assert!(e.to_string().contains("outside the permitted root"), "{e}");
    // Control: a junction to a directory inside the root is followed.
    let id = start("in").unwrap().task_id;
    let st = commands::await_settled(&f.engine, f.host, &id, Some(60_000.0))
        .await
        .unwrap();
    assert_eq!(st.exit_code, Some(0), "{st:?}");
}
