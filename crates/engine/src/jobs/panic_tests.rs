//! A panic inside a command's supervision: the command still settles, with
//! the reason, and the engine keeps answering for it and for new commands.

use std::path::PathBuf;
use std::time::Duration;

use super::commands::{self, StartContext, StartOptions};
use super::record::{BankMode, State};
use super::supervisor::INJECT_PANIC;
use crate::policy::{Policy, PolicyInput};

fn start(
    eng: &crate::Engine,
    host: u32,
    logs: &std::path::Path,
    script: &str,
    inject: bool,
) -> String {
    let mut argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
    if inject {
        argv.push(INJECT_PANIC.to_string());
    }
    let ctx = StartContext {
        host,
        policy: None,
        veto: None,
        tmpdir: PathBuf::from(logs),
        context_session: None,
        bank: BankMode::BuiltIn,
        hidden: false,
    };
    let opts = StartOptions {
        cwd: ".".into(),
        ..Default::default()
    };
    commands::start(eng, argv, opts, ctx).unwrap().task_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_supervision_settles_its_command_and_the_engine_answers_on() {
    let root = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let eng = crate::Engine::new(Default::default());
    let host = eng.registry.register_host();
    let policy = Policy::new(PolicyInput {
        cwd_root: root.path().to_str().unwrap().into(),
        allowed_executables: vec!["/bin/sh".into()],
        ..Default::default()
    })
    .unwrap();
    eng.registry.with_host(host, |h| h.policy = Some(policy));

    // The control: the same command without the hook runs to its exit.
    let plain = start(&eng, host, logs.path(), "printf ok", false);
    let st = tokio::time::timeout(
        Duration::from_secs(20),
        commands::await_settled(&eng, host, &plain, None),
    )
    .await
    .expect("the plain command settles")
    .unwrap();
    assert_eq!((st.state, st.exit_code), (State::Exited, Some(0)));

    // The panic poisons the record's lock; the command settles anyway.
    let id = start(&eng, host, logs.path(), "sleep 30", true);
    let st = tokio::time::timeout(
        Duration::from_secs(20),
        commands::await_settled(&eng, host, &id, None),
    )
    .await
    .expect("a command whose supervision panicked still settles")
    .unwrap();
    assert_eq!(st.state, State::Killed);
    let why = st.error.expect("the settled status says why");
    assert!(
        why.starts_with("the command's supervisor failed (a panic injected into the supervision)"),
        "{why}"
    );
    // Later calls about it answer (they take the same lock).
    let again = commands::status(&eng, host, &id).unwrap();
    assert_eq!(again.state, State::Killed);
    // And the engine starts and settles the next command.
    let next = start(&eng, host, logs.path(), "printf again", false);
    let st = tokio::time::timeout(
        Duration::from_secs(20),
        commands::await_settled(&eng, host, &next, None),
    )
    .await
    .expect("the next command settles")
    .unwrap();
    assert_eq!(
        (st.state, st.exit_code, st.stdout_bytes),
        (State::Exited, Some(0), 5.0)
    );
}
