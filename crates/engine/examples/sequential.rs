//! Row 4i without Node: `true` started and awaited one after another through
//! the engine alone (no V8, no napi, no adapter), against the shell loop the
//! row compares with, interleaved round by round. What this gives is the
//! engine's own part of the row; the rest of the row's ratio is the Node
//! side (the adapter, the napi calls, the JS thread's wakes).
//!
//! `cargo run --release -p neurolink-commands-engine --example sequential [n] [rounds]`

use std::path::PathBuf;
use std::time::Instant;

use neurolink_commands_engine::commands::{self, StartContext, StartOptions};
use neurolink_commands_engine::policy::{Policy, PolicyInput};
use neurolink_commands_engine::record::{BankMode, State};
use neurolink_commands_engine::{registry, runtime};

const TRUE: &str = "/usr/bin/true";

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(300);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let root = tempfile::tempdir().expect("a scratch root");
    let logs = tempfile::tempdir().expect("a scratch log directory");
    let host = registry::register_host();
    let policy = Policy::new(PolicyInput {
        allowed_executables: vec![TRUE.into()],
        cwd_root: root.path().to_str().expect("a UTF-8 temp path").into(),
        ..Default::default()
    })
    .expect("the policy is valid");
    registry::with_host(host, |h| h.policy = Some(policy));
    let rt = runtime::handle();
    let run = |count: usize| {
        let t = Instant::now();
        for _ in 0..count {
            let ctx = StartContext {
                host,
                policy: None,
                veto: None,
                tmpdir: PathBuf::from(logs.path()),
                context_session: None,
                bank: BankMode::BuiltIn,
                hidden: false,
            };
            let opts = StartOptions {
                cwd: ".".into(),
                ..Default::default()
            };
            let id = commands::start(vec![TRUE.into()], opts, ctx)
                .expect("the start is allowed")
                .task_id;
            let st = rt
                .block_on(commands::await_settled(host, &id, None))
                .expect("the command is known");
            assert_eq!((st.state, st.exit_code), (State::Exited, Some(0)));
        }
        t.elapsed().as_secs_f64() * 1000.0
    };
    let shell = |count: usize| {
        let t = Instant::now();
        let script = format!("i=0; while [ $i -lt {count} ]; do {TRUE}; i=$((i+1)); done");
        let ok = std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .status()
            .expect("/bin/sh runs")
            .success();
        assert!(ok);
        t.elapsed().as_secs_f64() * 1000.0
    };
    run(n);
    let (mut ours, mut limit) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ours.push(run(n));
        limit.push(shell(n));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (o, l) = (median(&mut ours), median(&mut limit));
    println!(
        "engine alone: {o:.1} ms for {n} one after another; shell loop {l:.1} ms; ratio {:.2}x (median of {rounds} interleaved rounds)",
        o / l
    );
}
