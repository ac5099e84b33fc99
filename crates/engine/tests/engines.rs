//! Two engines in one process share nothing they own: a command started in
//! one is unknown to the other (by id, by host, by artifact), each keeps
//! its own logs, and dropping one stops and reaps its commands — real
//! processes — and frees its state, while the other's commands run on.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use neurolink_commands_engine::commands::{self, StartContext, StartOptions};
use neurolink_commands_engine::policy::{Policy, PolicyInput};
use neurolink_commands_engine::record::{BankMode, Record, State};
use neurolink_commands_engine::{bank, Engine};

struct Side {
    engine: Engine,
    host: u32,
    logs: tempfile::TempDir,
    _root: tempfile::TempDir,
}

fn side() -> Side {
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
    Side {
        engine,
        host,
        logs,
        _root: root,
    }
}

impl Side {
    fn sh(&self, script: &str) -> String {
        let ctx = StartContext {
            host: self.host,
            policy: None,
            veto: None,
            tmpdir: PathBuf::from(self.logs.path()),
            context_session: None,
            bank: BankMode::BuiltIn,
            hidden: false,
        };
        let argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
        let opts = StartOptions {
            cwd: ".".into(),
            ..Default::default()
        };
        commands::start(&self.engine, argv, opts, ctx)
            .unwrap()
            .task_id
    }

    /// The command's record once its process exists.
    fn running(&self, id: &str) -> Arc<Record> {
        let rec = self.engine.registry.lookup(self.host, id).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while rec.pgid() <= 0 {
            assert!(Instant::now() < deadline, "{id} never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        rec
    }
}

/// Whether `pid` names a process that is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(')').map(|(_, r)| r.trim_start());
            !state.is_some_and(|s| s.starts_with('Z'))
        }
        Err(_) => false,
    }
}

#[test]
fn two_engines_are_independent_and_each_stops_its_own_commands_when_dropped() {
    let a = side();
    let b = side();
    // Both registries number their hosts alike: the host id alone does not
    // tell them apart, so everything below is the engine's own table.
    assert_eq!(a.host, b.host);

    let in_a = a.sh("sleep 60");
    let in_b = b.sh("sleep 60");
    let rec_a = a.running(&in_a);
    let rec_b = b.running(&in_b);
    let (pid_a, pid_b) = (rec_a.pgid(), rec_b.pgid());
    assert!(alive(pid_a) && alive(pid_b));

    // Each knows its own command and not the other's.
    for (me, other_id) in [(&a, &in_b), (&b, &in_a)] {
        let e = commands::status(&me.engine, me.host, other_id).unwrap_err();
        assert_eq!(e.code(), "NLC_UNKNOWN_TASK", "{e}");
        assert!(me.engine.registry.by_id(other_id).is_none());
        let listed: Vec<String> = commands::list(&me.engine, me.host, None, None)
            .into_iter()
            .map(|r| r.task_id)
            .collect();
        assert_eq!(listed.len(), 1);
        assert_ne!(&listed[0], other_id);
    }
    assert!(!commands::status(&a.engine, a.host, &in_a)
        .unwrap()
        .state
        .is_settled());

    // Each writes its logs under its own directory.
    assert!(a.logs.path().read_dir().unwrap().count() > 0);
    assert!(rec_a
        .log_path(neurolink_commands_engine::capture::Stream::Stdout)
        .starts_with(std::fs::canonicalize(a.logs.path()).unwrap()));
    assert!(rec_b
        .log_path(neurolink_commands_engine::capture::Stream::Stdout)
        .starts_with(std::fs::canonicalize(b.logs.path()).unwrap()));

    // A settled command's artifact answers in its engine only.
    let done = b.sh("printf from-b");
    let st = b
        .engine
        .runtime
        .block_on(commands::await_settled(&b.engine, b.host, &done, None))
        .unwrap();
    let artifact = st.stdout.unwrap().artifact_id;
    assert_eq!(
        bank::read_artifact(&b.engine.registry, &artifact).unwrap(),
        "from-b"
    );
    let e = bank::read_artifact(&a.engine.registry, &artifact).unwrap_err();
    assert_eq!(e.code(), "NLC_UNKNOWN_ARTIFACT", "{e}");
    // Each counts its own log bytes against its own budget: A's command
    // printed nothing.
    let bytes = |s: &Side| s.engine.retention.log_bytes().load(Ordering::Acquire);
    assert_eq!((bytes(&a), bytes(&b)), (0, "from-b".len() as u64));

    // Dropping A stops and reaps its command and frees its state; B's
    // command runs on.
    let state_a = Arc::downgrade(a.engine.state());
    drop(a.engine);
    assert!(!alive(pid_a), "A's command outlived its engine");
    assert!(rec_a.is_settled());
    assert_eq!(rec_a.live.lock().unwrap().state, State::Killed);
    assert!(state_a.upgrade().is_none(), "A's state outlived its engine");
    assert!(alive(pid_b), "B's command was stopped with A");
    assert!(!commands::status(&b.engine, b.host, &in_b)
        .unwrap()
        .state
        .is_settled());

    // A start on a shut-down engine is refused.
    let c = side();
    c.engine.shutdown();
    let ctx = StartContext {
        host: c.host,
        policy: None,
        veto: None,
        tmpdir: PathBuf::from(c.logs.path()),
        context_session: None,
        bank: BankMode::BuiltIn,
        hidden: false,
    };
    let e = commands::start(
        &c.engine,
        vec!["/bin/sh".into(), "-c".into(), "true".into()],
        StartOptions {
            cwd: ".".into(),
            ..Default::default()
        },
        ctx,
    )
    .unwrap_err();
    assert_eq!(e.code(), "NLC_HOST_EXITING", "{e}");

    let state_b = Arc::downgrade(b.engine.state());
    drop(b.engine);
    assert!(!alive(pid_b), "B's command outlived its engine");
    assert!(rec_b.is_settled());
    assert!(state_b.upgrade().is_none(), "B's state outlived its engine");
}
