//! What wine cannot model (PLATFORMS.md), run only by the workflow's native
//! Windows job (`cargo test -p neurolink-commands-windows`); the wine run
//! (`scripts/platforms/run.sh win32-x64`) runs `tests/windows.rs` alone and
//! names these:
//!   - CTRL_BREAK to the command's process group (SIGTERM's first step):
//!     wine's GenerateConsoleCtrlEvent fails in every arrangement (two tests);
//!   - a junction out of the cwd root: wine's `mklink /J` cannot create one.
#![cfg(windows)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

use neurolink_commands_windows::dir::HeldDir;
use neurolink_commands_windows::job::{console_break, Job};

const PROBE: &str = env!("CARGO_BIN_EXE_nlc-win-probe");

/// STATUS_CONTROL_C_EXIT: how a process ended by the default CTRL_BREAK handler exits.
const CONTROL_C_EXIT: i32 = 0xC000_013Au32 as i32;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nlc-win-native-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn sigterm_is_a_console_break_to_the_commands_group() {
    // The break travels through a console the host shares with the command.
    // SAFETY: no arguments; fails harmlessly when a console is attached already.
    unsafe { windows_sys::Win32::System::Console::AllocConsole() };
    let job = Job::new().unwrap();
    let mut cmd = Command::new(PROBE);
    cmd.args(["sleep", "60000"]).stdout(Stdio::null());
    let mut child = job.spawn(&mut cmd).unwrap();
    console_break(child.id()).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(CONTROL_C_EXIT), "{status:?}");
    assert_eq!(job.active_processes().unwrap(), 0);
}

#[test]
fn sigterm_ends_a_tree_that_heeds_the_break_before_the_grace() {
    use neurolink_commands_windows::job::{Stop, Stopped};
    // SAFETY: no arguments; fails harmlessly when a console is attached already.
    unsafe { windows_sys::Win32::System::Console::AllocConsole() };
    let job = Job::new().unwrap();
    let mut cmd = Command::new(PROBE);
    cmd.args(["tree", "60000"]).stdout(Stdio::piped());
    let mut child = job.spawn(&mut cmd).unwrap();
    let grace = std::time::Duration::from_secs(20);
    let t = std::time::Instant::now();
    assert_eq!(
        job.stop(child.id(), Stop::Term { grace }, 1).unwrap(),
        Stopped::ByBreak
    );
    assert!(t.elapsed() < grace);
    assert_eq!(child.wait().unwrap().code(), Some(CONTROL_C_EXIT));
}

#[test]
fn a_junction_out_of_the_root_is_outside() {
    let base = scratch("junction");
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    let mklink = |link: &str, target: PathBuf| {
        let ok = Command::new("cmd.exe")
            .args(["/d", "/c", "mklink", "/J"])
            .arg(root.join(link))
            .arg(target)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mklink /J {link}");
    };
    mklink("out", base.join("outside"));
    mklink("in", root.join("sub"));
    let held_root = HeldDir::open(&root).unwrap();
    assert!(!held_root.contains(&HeldDir::open(&root.join("out")).unwrap()));
    // The control: a junction that stays inside the root is inside.
    assert!(held_root.contains(&HeldDir::open(&root.join("in")).unwrap()));
    drop(held_root);
    std::fs::remove_dir_all(&base).unwrap();
}
