//! The fixture the engine's integration tests share: a host whose policy
//! (the caller's fields, rooted at a fresh directory) is set, and a fresh
//! log directory its starts write under.
#![allow(dead_code)]

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
