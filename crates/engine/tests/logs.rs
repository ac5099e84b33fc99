//! Logs on disk through the engine alone (SPEC §13): a budget removes the
//! oldest settled logs and reads of them are refused with `NLC_LOGS_REMOVED`,
//! while kept ones read exactly; a replaced log is refused with
//! `NLC_LOG_REPLACED`. One test in its own binary: the settings are
//! process-wide.

use std::path::PathBuf;

use neurolink_commands_engine::capture::Stream;
use neurolink_commands_engine::commands::{self, StartContext, StartOptions};
use neurolink_commands_engine::jobs::retention::{LogOptions, PruneOptions};
use neurolink_commands_engine::paging::Window;
use neurolink_commands_engine::policy::{Policy, PolicyInput};
use neurolink_commands_engine::record::BankMode;
use neurolink_commands_engine::{bank, Engine};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budget_removal_and_replacement_are_refused_with_their_codes() {
    let root = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let engine = Engine::new(Default::default());
    let host = engine.registry.register_host();
    let policy = Policy::new(PolicyInput {
        allowed_executables: vec!["/bin/sh".into()],
        cwd_root: root.path().to_str().unwrap().into(),
        ..Default::default()
    })
    .unwrap();
    engine.registry.with_host(host, |h| h.policy = Some(policy));
    let run = |script: String| {
        let ctx = StartContext {
            host,
            policy: None,
            veto: None,
            tmpdir: PathBuf::from(logs.path()),
            context_session: None,
            bank: BankMode::BuiltIn,
            hidden: false,
        };
        let argv = vec!["/bin/sh".to_string(), "-c".to_string(), script];
        commands::start(
            &engine,
            argv,
            StartOptions {
                cwd: ".".into(),
                ..Default::default()
            },
            ctx,
        )
        .unwrap()
        .task_id
    };
    let settings = engine
        .retention
        .configure(
            LogOptions {
                max_total_bytes: Some(Some(100_000.0)),
                ..Default::default()
            },
            logs.path(),
            &engine.registry,
        )
        .unwrap();
    assert_eq!(
        settings.dir,
        logs.path().join("neurolink-commands").display().to_string()
    );
    let mut ids = Vec::new();
    for i in 0..10 {
        let id = run(format!("yes {i} | head -c 30000"));
        commands::await_settled(&engine, host, &id, None)
            .await
            .unwrap();
        ids.push(id);
    }
    // The sweep runs on a blocking thread: wait for it to catch up.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !commands::status(&engine, host, &ids[6])
        .unwrap()
        .logs_removed
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the budget was not kept"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    for (i, id) in ids.iter().enumerate() {
        let st = commands::status(&engine, host, id).unwrap();
        let read =
            commands::read_output(&engine, host, id, Stream::Stdout, Window::new(None, None));
        if i < 7 {
            assert!(st.logs_removed, "{i}");
            assert_eq!(read.unwrap_err().code(), "NLC_LOGS_REMOVED");
            let artifact =
                bank::read_artifact(&engine.registry, &st.stdout.unwrap().artifact_id).unwrap_err();
            assert_eq!(artifact.code(), "NLC_LOGS_REMOVED");
        } else {
            assert!(!st.logs_removed, "{i}");
            let want: String = format!("{i}\n").repeat(15000);
            let got = String::from_utf16(&read.unwrap().content).unwrap();
            assert_eq!(got, want);
        }
    }
    // A kept log replaced by another file (same user) is refused.
    let last = &ids[9];
    let path = logs
        .path()
        .join("neurolink-commands")
        .join(last)
        .join("stdout.log");
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, "planted").unwrap();
    let e = commands::read_output(&engine, host, last, Stream::Stdout, Window::new(None, None))
        .unwrap_err();
    assert_eq!(e.code(), "NLC_LOG_REPLACED", "{e}");
    // An explicit prune with keepBytes 0 takes the rest.
    let pruned = engine
        .retention
        .prune(
            PruneOptions {
                keep_bytes: Some(0.0),
                ..Default::default()
            },
            logs.path(),
            &engine.registry,
        )
        .unwrap();
    assert_eq!(pruned.removed, 3);
    assert_eq!(pruned.freed_bytes, 90_000.0);
}
