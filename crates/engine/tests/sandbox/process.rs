//! A sandboxed command as a process: no capabilities, PID 1 of its own
//! namespace (its descendants die with it), reached by a plain SIGTERM,
//! and in a terminal of its own only.

use std::process::Command;
use std::time::Duration;

use neurolink_commands_engine::bank;
use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::record::{KillReason, State};

use super::{confined, fixture, sandbox_here};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_capabilities_no_mounts_no_new_user_namespace() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let script = "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status; umount /usr 2>/dev/null; echo umount=$?; mount -t tmpfs none \"$TMPDIR\" 2>/dev/null; echo mount=$?; unshare -U true 2>/dev/null; echo unshare=$?";
    let (st, out) = f.run(script, confined()).await;
    assert!(st.confined);
    let lines: Vec<&str> = out.lines().collect();
    for l in &lines[..5] {
        assert!(l.ends_with("0000000000000000"), "{out}");
    }
    assert_eq!(lines[5], "NoNewPrivs:\t1", "{out}");
    assert_eq!(lines[6..], ["umount=32", "mount=32", "unshare=1"], "{out}");
    // Control: unconfined, this root test process's command holds
    // capabilities and may create a user namespace.
    let (_, out) = f.run(script, None).await;
    assert!(!out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(out.ends_with("unshare=0\n"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_is_pid_one_and_its_descendants_die_with_it() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let marker = format!("31.{}", std::process::id());
    let script = format!(
        "echo $$; setsid -f sleep {marker}; sleep 0.2; pgrep -f 'sleep {marker}' >/dev/null && echo running; head -c 9 /proc/1/cmdline; echo; ls /proc | grep -c '^[0-9]'"
    );
    let (st, out) = f.run(&script, confined()).await;
    // Its /proc is its own namespace's: PID 1 is the command itself (no
    // /proc/<pid>/root of a host process to reach the host's files through),
    // and only its own few processes are listed.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(st.exit_code, Some(0), "{out}");
    assert_eq!(lines[..3], ["1", "running", "/bin/bash"], "{out}");
    let listed: usize = lines[3].parse().unwrap();
    assert!((2..=5).contains(&listed), "{out}");
    // The escaped sleep was killed with the namespace.
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "{:?}", left);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_term_ends_a_command_without_a_handler_at_once_and_reaches_one_with() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let start = |script: &str| {
        f.bash(
            script,
            StartOptions {
                confine: confined(),
                ..Default::default()
            },
        )
    };
    // No handler: bash -c 'exec sleep' leaves sleep as PID 1.
    let id = start("exec sleep 60");
    std::thread::sleep(Duration::from_millis(300));
    let t = std::time::Instant::now();
    let st = commands::kill(&f.engine, f.host, &id, libc::SIGTERM, KillReason::Caller)
        .await
        .unwrap();
    // Well before the 5 s kill grace.
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(st.state, State::Killed, "{st:?}");
    // A handler: it runs (and prints).
    let id = start("trap 'echo caught; exit 3' TERM; echo ready; sleep 60 & wait");
    std::thread::sleep(Duration::from_millis(300));
    let st = commands::kill(&f.engine, f.host, &id, libc::SIGTERM, KillReason::Caller)
        .await
        .unwrap();
    let out =
        bank::read_artifact(&f.engine.registry, &st.stdout.as_ref().unwrap().artifact_id).unwrap();
    assert_eq!((out.as_str(), st.exit_code), ("ready\ncaught\n", Some(3)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_command_runs_in_the_sandbox_with_its_own_terminal_only() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let id = f.bash(
        "tty; stty size; echo $$; ls /dev/pts; read -r line; echo \"got $line\"",
        StartOptions {
            input: neurolink_commands_engine::spawn::Input::Terminal { cols: 91, rows: 17 },
            confine: confined(),
            ..Default::default()
        },
    );
    // The shell waits for its line: give it one.
    tokio::time::sleep(Duration::from_millis(300)).await;
    commands::write_input(&f.engine, f.host, &id, b"typed\r".to_vec(), false)
        .await
        .unwrap();
    let st = commands::await_settled(&f.engine, f.host, &id, Some(20_000.0))
        .await
        .unwrap();
    assert_eq!((st.exit_code, st.confined), (Some(0), true), "{st:?}");
    let out =
        bank::read_artifact(&f.engine.registry, &st.stdout.as_ref().unwrap().artifact_id).unwrap();
    let lines: Vec<&str> = out.split("\r\n").collect();
    let n = lines[0].strip_prefix("/dev/pts/").expect(&out);
    // Its own terminal, PID 1, and no other terminal in its /dev/pts.
    assert_eq!(&lines[1..4], ["17 91", "1", n], "{out:?}");
    assert!(out.contains("got typed"), "{out:?}");
}
