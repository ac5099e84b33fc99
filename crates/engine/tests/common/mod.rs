//! The fixture the engine's integration tests share: a host whose policy
//! (the caller's fields, rooted at a fresh directory) is set, and a fresh
//! log directory its starts write under.
#![allow(dead_code)]

pub mod screen;

use std::path::PathBuf;

use neurolink_commands_engine::commands::StartContext;
use neurolink_commands_engine::policy::{Policy, PolicyInput};
use neurolink_commands_engine::record::BankMode;
use neurolink_commands_engine::Engine;

pub struct Fixture {
    /// Its own engine, dropped (stopping what still runs) before the
    /// directories go.
    pub engine: Engine,
    pub host: u32,
    pub root: tempfile::TempDir,
    pub logs: tempfile::TempDir,
}

/// A host with `policy` (its `cwd_root` set to a fresh directory).
pub fn fixture(policy: PolicyInput) -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let engine = Engine::new(Default::default());
    let host = engine.registry.register_host();
    let policy = Policy::new(PolicyInput {
        cwd_root: root.path().to_str().unwrap().into(),
        ..policy
    })
    .unwrap();
    engine.registry.with_host(host, |h| h.policy = Some(policy));
    Fixture {
        engine,
        host,
        root,
        logs,
    }
}

impl Fixture {
    /// Starts `argv` under the host's policy with `opts` (`cwd` "." unless
    /// it names one): the task id, or the refusal.
    pub fn start(
        &self,
        argv: &[&str],
        opts: neurolink_commands_engine::commands::StartOptions,
    ) -> Result<String, neurolink_commands_engine::errors::EngineError> {
        let argv = argv.iter().map(|s| s.to_string()).collect();
        let opts = neurolink_commands_engine::commands::StartOptions {
            cwd: if opts.cwd.is_empty() {
                ".".into()
            } else {
                opts.cwd
            },
            ..opts
        };
        neurolink_commands_engine::commands::start(&self.engine, argv, opts, self.ctx())
            .map(|h| h.task_id)
    }

    /// A start under the host's own policy, logs in the fixture's directory.
    pub fn ctx(&self) -> StartContext<'static> {
        StartContext {
            host: self.host,
            policy: None,
            veto: None,
            tmpdir: PathBuf::from(self.logs.path()),
            context_session: None,
            bank: BankMode::BuiltIn,
            hidden: false,
        }
    }
}

#[cfg(unix)]
impl Fixture {
    /// `bash -c script` under `confine`, awaited for at most `wait_ms`: its
    /// status (which must say it exited) and its stdout followed by its
    /// stderr.
    pub async fn bash_within(
        &self,
        script: &str,
        confine: Option<neurolink_commands_engine::policy::confine::ConfinementInput>,
        wait_ms: f64,
    ) -> (neurolink_commands_engine::record::Status, String) {
        use neurolink_commands_engine::commands::{self, StartOptions};
        use neurolink_commands_engine::{bank, record::State};
        let opts = StartOptions {
            confine,
            ..Default::default()
        };
        let id = self.start(&["/bin/bash", "-c", script], opts).unwrap();
        let st = commands::await_settled(&self.engine, self.host, &id, Some(wait_ms))
            .await
            .unwrap();
        assert_eq!(st.state, State::Exited, "{st:?}");
        let out = bank::read_artifact(
            &self.engine.registry,
            &st.stdout.as_ref().unwrap().artifact_id,
        )
        .unwrap();
        let err = bank::read_artifact(
            &self.engine.registry,
            &st.stderr.as_ref().unwrap().artifact_id,
        )
        .unwrap();
        (st, format!("{out}{err}"))
    }
}
