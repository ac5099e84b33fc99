//! Row 4i without Node: `true` started and awaited one after another through
//! the engine alone (no V8, no napi, no adapter), against the shell loop the
//! row compares with, interleaved round by round. What this gives is the
//! engine's own part of the row; the rest of the row's ratio is the Node
//! side (the adapter, the napi calls, the JS thread's wakes).
//!
//! Two more loops give the floor under any runner with the contract's
//! shape, measured the same way: a start that returns before the process
//! exists hands the spawn to another thread, which spawns with both streams
//! piped, reads them to their end and reaps the process, and hands the
//! result back ("hand-off"); the second does the same after creating the
//! contract's log directory and its two logs on the calling thread ("with
//! logs", in the same temp directory the engine's logs go to).
//!
//! `cargo run --release -p neurolink-commands-engine --example sequential [n] [rounds]`

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use neurolink_commands_engine::commands::{self, StartContext, StartOptions};
use neurolink_commands_engine::policy::{Policy, PolicyInput};
use neurolink_commands_engine::record::{BankMode, State};

const TRUE: &str = "/usr/bin/true";

/// `count` of `true`, each spawned, drained and reaped on a second thread
/// while the calling thread waits for it; with `logs`, the calling thread
/// first makes a directory and two files under `logs` for each.
fn floor(count: usize, logs: Option<&Path>) -> f64 {
    let (ask, asked) = mpsc::channel::<()>();
    let (answer, answered) = mpsc::channel::<Option<i32>>();
    let spawner = std::thread::spawn(move || {
        for () in asked {
            let mut child = Command::new(TRUE)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("true runs");
            let mut out = Vec::new();
            let (mut so, mut se) = (child.stdout.take(), child.stderr.take());
            for pipe in [
                so.as_mut().map(|p| p as &mut dyn Read),
                se.as_mut().map(|p| p as &mut dyn Read),
            ]
            .into_iter()
            .flatten()
            {
                pipe.read_to_end(&mut out).expect("the pipe reads");
            }
            let code = child.wait().expect("true is reaped").code();
            if answer.send(code).is_err() {
                return;
            }
        }
    });
    let scratch = logs.map(|l| tempfile::tempdir_in(l).expect("a scratch log directory"));
    let t = Instant::now();
    for i in 0..count {
        if let Some(dir) = &scratch {
            let d = dir.path().join(format!("c{i}"));
            std::fs::create_dir(&d).expect("the directory is made");
            for name in ["stdout.log", "stderr.log"] {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(d.join(name))
                    .expect("the log is made");
            }
        }
        ask.send(()).expect("the spawner runs");
        assert_eq!(answered.recv().expect("the spawner answers"), Some(0));
    }
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    drop(ask);
    spawner.join().expect("the spawner ends");
    ms
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(300);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let root = tempfile::tempdir().expect("a scratch root");
    let logs = tempfile::tempdir().expect("a scratch log directory");
    let engine = neurolink_commands_engine::Engine::new(Default::default());
    let host = engine.registry.register_host();
    let policy = Policy::new(PolicyInput {
        allowed_executables: vec![TRUE.into()],
        cwd_root: root.path().to_str().expect("a UTF-8 temp path").into(),
        ..Default::default()
    })
    .expect("the policy is valid");
    engine.registry.with_host(host, |h| h.policy = Some(policy));
    let rt = engine.runtime.clone();
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
            let id = commands::start(&engine, vec![TRUE.into()], opts, ctx)
                .expect("the start is allowed")
                .task_id;
            let st = rt
                .block_on(commands::await_settled(&engine, host, &id, None))
                .expect("the command is known");
            assert_eq!((st.state, st.exit_code), (State::Exited, Some(0)));
        }
        t.elapsed().as_secs_f64() * 1000.0
    };
    let shell = |count: usize| {
        let t = Instant::now();
        let script = format!("i=0; while [ $i -lt {count} ]; do {TRUE}; i=$((i+1)); done");
        let ok = Command::new("/bin/sh")
            .args(["-c", &script])
            .status()
            .expect("/bin/sh runs")
            .success();
        assert!(ok);
        t.elapsed().as_secs_f64() * 1000.0
    };
    run(n);
    let (mut ours, mut limit, mut handoff, mut with_logs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        ours.push(run(n));
        limit.push(shell(n));
        handoff.push(floor(n, None));
        with_logs.push(floor(n, Some(logs.path())));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (o, l) = (median(&mut ours), median(&mut limit));
    let (h, w) = (median(&mut handoff), median(&mut with_logs));
    println!(
        "engine alone: {o:.1} ms for {n} one after another; shell loop {l:.1} ms; ratio {:.2}x (median of {rounds} interleaved rounds)",
        o / l
    );
    println!(
        "floor: hand-off {h:.1} ms ({:.2}x), hand-off with the log directory made first {w:.1} ms ({:.2}x)",
        h / l,
        w / l
    );
}
