//! The engine driven end to end with real processes: start → supervise →
//! settle, as the binding drives it, without Node.

use std::time::{Duration, Instant};

use neurolink_commands_engine::capture::Stream;
use neurolink_commands_engine::commands::{self, StartContext, StartOptions};
use neurolink_commands_engine::paging::Window;
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::record::{KillReason, State};
use neurolink_commands_engine::{bank, registry};

mod common;
use common::Fixture;

fn fixture(grace_ms: f64) -> Fixture {
    common::fixture(PolicyInput {
        allowed_executables: vec!["/bin/sh".into(), "/no/such/tool".into()],
        kill_grace_ms: Some(grace_ms),
        ..Default::default()
    })
}

impl Fixture {
    fn sh(&self, script: &str, opts: StartOptions) -> String {
        let argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
        let opts = StartOptions {
            cwd: ".".into(),
            ..opts
        };
        commands::start(&self.engine, argv, opts, self.ctx())
            .unwrap()
            .task_id
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_streams_and_refs() {
    let f = fixture(5000.0);
    let id = f.sh(
        "printf 'a%.0s' $(seq 40); printf 'oops' >&2; exit 7",
        StartOptions::default(),
    );
    let st = commands::await_settled(&f.engine, f.host, &id, None)
        .await
        .unwrap();
    assert_eq!(st.state, State::Exited);
    assert_eq!(st.exit_code, Some(7));
    assert_eq!(st.error, None, "a non-zero exit is data");
    assert_eq!((st.stdout_bytes, st.stderr_bytes), (40.0, 4.0));
    let out = st.stdout.unwrap();
    assert_eq!(out.size_bytes, 40.0);
    assert_eq!(
        bank::read_artifact(&f.engine.registry, &out.artifact_id).unwrap(),
        "a".repeat(40)
    );
    assert_eq!(
        bank::read_artifact(&f.engine.registry, &st.stderr.unwrap().artifact_id).unwrap(),
        "oops"
    );
    assert_eq!(
        st.tail_preview,
        format!("[stdout tail]\n{}\n[stderr tail]\noops", "a".repeat(40))
    );
    // Log files carry the contract's modes.
    let rec = f.engine.registry.lookup(f.host, &id).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(rec.dir()).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        std::fs::metadata(rec.log_path(Stream::Stdout))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_lands_inside_a_chunk_exactly() {
    let f = fixture(5000.0);
    let id = f.sh(
        "head -c 200000 /dev/zero | tr '\\0' x",
        StartOptions {
            max_output_bytes: Some(70_001.0),
            ..Default::default()
        },
    );
    let st = commands::await_settled(&f.engine, f.host, &id, None)
        .await
        .unwrap();
    assert_eq!(st.state, State::OutputLimit);
    assert_eq!(st.stdout_bytes, 70_001.0);
    let e = st.error.unwrap();
    assert!(e.contains("stdout") && e.contains("banked in full"), "{e}");
    let page = commands::read_output(
        &f.engine,
        f.host,
        &id,
        Stream::Stdout,
        Window::new(Some(70_000.0), None),
    )
    .unwrap();
    assert_eq!(page.content, vec![b'x' as u16]);
    assert_eq!(page.total_size, 70_001);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_ends_the_command_and_escalates() {
    let f = fixture(300.0);
    let id = f.sh(
        "trap '' TERM; echo ready; while :; do sleep 0.05; done",
        StartOptions {
            timeout_ms: Some(200.0),
            ..Default::default()
        },
    );
    let t = Instant::now();
    let st = commands::await_settled(&f.engine, f.host, &id, Some(10_000.0))
        .await
        .unwrap();
    assert_eq!(st.state, State::Timeout);
    assert_eq!(
        st.signal.as_deref(),
        Some("SIGKILL"),
        "SIGTERM was ignored, SIGKILL ended it"
    );
    assert!(st.error.as_deref().unwrap().contains("200ms budget"));
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(st.tail_preview, "[stdout tail]\nready\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_keeps_output_and_a_settled_kill_changes_nothing() {
    let f = fixture(2000.0);
    let id = f.sh("echo before; exec sleep 30", StartOptions::default());
    let rec = f.engine.registry.lookup(f.host, &id).unwrap();
    while rec.log(Stream::Stdout).bytes() < 7 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let st = commands::kill(&f.engine, f.host, &id, libc::SIGTERM, KillReason::Caller)
        .await
        .unwrap();
    assert_eq!(st.state, State::Killed);
    assert_eq!(st.signal.as_deref(), Some("SIGTERM"));
    assert!(st.error.as_deref().unwrap().contains("by the caller"));
    assert_eq!(
        bank::read_artifact(&f.engine.registry, &st.stdout.clone().unwrap().artifact_id).unwrap(),
        "before\n"
    );
    let again = commands::kill(&f.engine, f.host, &id, libc::SIGKILL, KillReason::Caller)
        .await
        .unwrap();
    assert_eq!(
        (again.state, again.signal.clone(), again.error.clone()),
        (st.state, st.signal, st.error)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descendants_holding_the_pipes_cannot_hold_the_command() {
    let f = fixture(2000.0);
    let t = Instant::now();
    let id = f.sh("sleep 60 & echo started", StartOptions::default());
    let st = commands::await_settled(&f.engine, f.host, &id, Some(20_000.0))
        .await
        .unwrap();
    assert_eq!(st.state, State::Exited);
    assert_eq!(st.exit_code, Some(0));
    assert!(
        st.error.as_deref().unwrap().contains("descendants"),
        "{:?}",
        st.error
    );
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "settled after {:?}",
        t.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_executable_settles_with_a_reason() {
    let f = fixture(2000.0);
    let h = commands::start(
        &f.engine,
        vec!["/no/such/tool".into()],
        StartOptions {
            cwd: ".".into(),
            ..Default::default()
        },
        f.ctx(),
    )
    .unwrap();
    let st = commands::await_settled(&f.engine, f.host, &h.task_id, Some(5000.0))
        .await
        .unwrap();
    assert_eq!(st.state, State::Exited);
    assert_eq!(st.exit_code, None);
    assert!(st
        .error
        .as_deref()
        .unwrap()
        .contains("could not be started"));
    assert_eq!(st.stdout.unwrap().size_bytes, 0.0);
    assert_eq!(st.stderr.unwrap().size_bytes, 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_run_in_the_contract_order() {
    let f = fixture(2000.0);
    let mut calls = Vec::new();
    let mut veto = |argv: &[String], cwd: &str| -> Result<(), String> {
        calls.push((argv.to_vec(), cwd.to_string()));
        Err("not today: ask the operator".to_string())
    };
    let ctx = StartContext {
        veto: Some(&mut veto),
        ..f.ctx()
    };
    // The hook's refusal comes before the bad number (step 6 before 7).
    let e = commands::start(
        &f.engine,
        vec!["/bin/sh".into()],
        StartOptions {
            cwd: ".".into(),
            timeout_ms: Some(-1.0),
            ..Default::default()
        },
        ctx,
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "not today: ask the operator");
    let real = std::fs::canonicalize(f.root.path()).unwrap();
    assert_eq!(
        calls,
        vec![(
            vec!["/bin/sh".to_string()],
            real.to_str().unwrap().to_string()
        )]
    );
    // The sandbox refusal comes before the hook (step 5 before 6).
    let mut called = false;
    let mut veto = |_: &[String], _: &str| -> Result<(), String> {
        called = true;
        Ok(())
    };
    let ctx = StartContext {
        veto: Some(&mut veto),
        ..f.ctx()
    };
    let e = commands::start(
        &f.engine,
        vec!["/bin/sh".into()],
        StartOptions {
            cwd: "/etc".into(),
            ..Default::default()
        },
        ctx,
    )
    .unwrap_err();
    assert!(e.to_string().contains("outside the permitted root"));
    assert!(!called);
    // No policy at all comes first.
    let bare = f.engine.registry.register_host();
    let e = commands::start(
        &f.engine,
        vec![],
        StartOptions::default(),
        StartContext {
            host: bare,
            ..f.ctx()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("setBackgroundCommandPolicy"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_follow_the_looked_at_rule() {
    let f = fixture(2000.0);
    let id = f.sh(
        "exit 0",
        StartOptions {
            session_id: Some("s-counters".into()),
            ..Default::default()
        },
    );
    let rec = f.engine.registry.lookup(f.host, &id).unwrap();
    assert!(rec.wait_settled(Some(Duration::from_secs(5))).await);
    assert_eq!(
        commands::counts(&f.engine, f.host, Some("s-counters"), None),
        registry::Counts {
            running: 0,
            finished: 1
        }
    );
    assert_eq!(
        f.engine.registry.session_counts("s-counters"),
        registry::Counts {
            running: 0,
            finished: 1
        }
    );
    commands::status(&f.engine, f.host, &id).unwrap();
    assert_eq!(
        commands::counts(&f.engine, f.host, Some("s-counters"), None),
        registry::Counts {
            running: 0,
            finished: 0
        }
    );
    let other = f.engine.registry.register_host();
    let e = commands::status(&f.engine, other, &id)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("No background command \"{id}\"")) && e.contains("started none"),
        "{e}"
    );
}

/// A follow read while the command writes as fast as it can is never taken
/// for a replaced log: the runner's count of bytes written may run ahead of
/// the file's length only if it is taken after the length. The command
/// writes blocks of lines until the test makes the stop file, after 3000
/// reads that found new bytes of the running command (or 2,000,000 units
/// read): the reads overlap the writes by construction, however fast or
/// slow (qemu) the machine is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_reads_during_fast_writes_are_never_refused() {
    let f = fixture(5000.0);
    const BLOCK: usize = 1000;
    for round in 0..3 {
        let stop = f.root.path().join(format!("stop-{round}"));
        let id = f.sh(
            &format!(
                "i=0; while [ ! -e '{}' ]; do j=0; while [ $j -lt {BLOCK} ]; do echo \"line $i\"; i=$((i+1)); j=$((j+1)); done; done",
                stop.display()
            ),
            StartOptions::default(),
        );
        let mut got: Vec<u16> = Vec::new();
        let (mut reads, mut running_reads, mut stopped) = (0u32, 0u32, false);
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            assert!(Instant::now() < deadline, "the command settled in time");
            let r = commands::read_new(&f.engine, f.host, &id, Stream::Stdout)
                .unwrap_or_else(|e| panic!("read {reads} refused: {} {e}", e.code()));
            reads += 1;
            got.extend_from_slice(&r.page.content);
            if r.state.is_settled() {
                if !r.page.has_more {
                    break;
                }
            } else if !r.page.content.is_empty() {
                running_reads += 1;
                // Where reads are slower than the writes (qemu), each one is
                // a full page: stop at 2,000,000 units instead.
                if !stopped && (running_reads == 3000 || got.len() >= 2_000_000) {
                    std::fs::write(&stop, b"").unwrap();
                    stopped = true;
                }
            }
            tokio::task::yield_now().await;
        }
        // By construction: stopped by the test while it ran, after 3000
        // reads of new bytes or 2,000,000 units (a read returns at most
        // 200,000), so at least 10 reads overlapped the writes.
        assert!(
            stopped && running_reads >= 10,
            "the reads overlapped the writes ({running_reads} reads found new bytes while it ran)"
        );
        let got = String::from_utf16(&got).unwrap();
        let lines = got.lines().count();
        assert!(
            lines > 0 && lines.is_multiple_of(BLOCK),
            "whole blocks were written ({lines} lines)"
        );
        let want: String = (0..lines).map(|i| format!("line {i}\n")).collect();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "every line once, in order");
    }
}
