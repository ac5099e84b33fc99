//! The engine on Windows (SPEC §14), end to end with real processes: the
//! official `node.exe` (its path in `NLC_WIN_NODE`, set by
//! `scripts/platforms/windows.sh`) and the system's `cmd.exe`, started in
//! Job Objects through the Win32 process layer. Run here under wine:
//!
//! ```text
//! . scripts/platforms/common.sh; use_wine
//! NLC_WIN_NODE="Z:$(node_of win32-x64 | tr / '\\')" \
//! CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine64 \
//!   cargo test -p neurolink-commands-engine --target x86_64-pc-windows-gnu --release --test windows_engine
//! ```
//!
//! What wine cannot model (a console break ending a tree before the grace,
//! a junction out of the root, ConPTY) is listed in
//! `crates/windows/tests/native_only.rs` and runs in the workflow's native
//! Windows job.
#![cfg(windows)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use neurolink_commands_engine::capture::Stream;
use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::paging::Window;
use neurolink_commands_engine::policy::confine::ConfinementInput;
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::process::limits::LimitsInput;
use neurolink_commands_engine::process::spawn::Input;
use neurolink_commands_engine::process::Containment;
use neurolink_commands_engine::record::{KillReason, State};

mod common;
use common::screen::screen_text;
use common::Fixture;

/// The official node.exe.
fn node() -> String {
    std::env::var("NLC_WIN_NODE").expect(
        "NLC_WIN_NODE must name the official node.exe (scripts/platforms/windows.sh sets it)",
    )
}

fn cmd_exe() -> String {
    let root = std::env::var("SystemRoot").unwrap_or_else(|_| "C:\\windows".into());
    format!("{root}\\system32\\cmd.exe")
}

fn fixture(grace_ms: f64) -> Fixture {
    common::fixture(PolicyInput {
        allowed_executables: vec![node(), cmd_exe(), "args".into(), "C:\\no\\such.exe".into()],
        kill_grace_ms: Some(grace_ms),
        ..Default::default()
    })
}

impl Fixture {
    /// `node -e <script> [args]`.
    fn node(&self, script: &str, opts: StartOptions) -> String {
        let n = node();
        self.start(&[&n, "-e", script], opts).unwrap()
    }

    async fn settled(&self, id: &str) -> commands_status::Status {
        commands::await_settled(&self.engine, self.host, id, Some(60_000.0))
            .await
            .unwrap()
    }

    fn stdout(&self, id: &str) -> Vec<u8> {
        let rec = self.engine.registry.lookup(self.host, id).unwrap();
        std::fs::read(rec.log_path(Stream::Stdout)).unwrap()
    }

    fn stderr(&self, id: &str) -> Vec<u8> {
        let rec = self.engine.registry.lookup(self.host, id).unwrap();
        std::fs::read(rec.log_path(Stream::Stderr)).unwrap()
    }
}

mod commands_status {
    pub use neurolink_commands_engine::record::Status;
}

/// Whether process `pid` still runs (its creation time is known only then).
fn running(pid: u32) -> bool {
    nlc_windows::proc::start_time(pid).is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_bytes_exit_code_and_pages() {
    let f = fixture(2000.0);
    // UTF-8 of several widths, an invalid byte, CRLF kept as written.
    let id = f.node(
        "process.stdout.write(Buffer.from([0x68,0xc3,0xa9,0xe2,0x9c,0x93,0xf0,0x9f,0x98,0x80,0xff,0x0d,0x0a]));\
         process.stderr.write('err\\u00e9');process.exitCode=7",
        StartOptions::default(),
    );
    let st = f.settled(&id).await;
    assert_eq!(st.state, State::Exited, "{st:?}");
    assert_eq!(st.exit_code, Some(7));
    assert_eq!(st.error, None, "a non-zero exit is data");
    assert_eq!(st.containment, Containment::Tree);
    assert_eq!(
        f.stdout(&id),
        [0x68, 0xc3, 0xa9, 0xe2, 0x9c, 0x93, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0x0d, 0x0a]
    );
    assert_eq!((st.stdout_bytes, st.stderr_bytes), (13.0, 5.0));
    let page = commands::read_output(
        &f.engine,
        f.host,
        &id,
        Stream::Stdout,
        Window::new(None, None),
    )
    .unwrap();
    let want: Vec<u16> = "hé✓😀\u{fffd}\r\n".encode_utf16().collect();
    assert_eq!(page.content, want);
    // A window cuts the surrogate pair as String.prototype.slice does.
    let part = commands::read_output(
        &f.engine,
        f.host,
        &id,
        Stream::Stdout,
        Window::new(Some(3.0), Some(1.0)),
    )
    .unwrap();
    assert_eq!(part.content, want[3..4]);
    assert!(part.has_more);
    let err = commands::read_output(
        &f.engine,
        f.host,
        &id,
        Stream::Stderr,
        Window::new(None, None),
    )
    .unwrap();
    assert_eq!(String::from_utf16(&err.content).unwrap(), "erré");
    assert!(
        st.tail_preview.contains("[stderr tail]\nerré"),
        "{}",
        st.tail_preview
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_is_missing_settles_as_not_started() {
    let f = fixture(2000.0);
    let id = f
        .start(&["C:\\no\\such.exe"], StartOptions::default())
        .unwrap();
    let st = f.settled(&id).await;
    assert_eq!(st.state, State::Exited);
    assert_eq!(st.exit_code, None);
    assert!(
        st.error
            .as_deref()
            .unwrap()
            .contains("could not be started"),
        "{st:?}"
    );
}

/// A node that starts a grandchild (another node that runs forever), prints
/// its pid, then runs forever itself.
const TREE: &str = "const c=require('child_process').spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{stdio:'ignore'});\
     process.stdout.write(String(c.pid)+'\\n');setInterval(()=>{},1000)";

async fn grandchild_pid(f: &Fixture, id: &str) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = String::from_utf8(f.stdout(id)).unwrap();
        if let Some(line) = out.lines().next() {
            if out.contains('\n') {
                return line.trim().parse().unwrap();
            }
        }
        assert!(
            Instant::now() < deadline,
            "the tree never printed its grandchild's pid"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_ends_the_whole_tree() {
    let f = fixture(2000.0);
    let id = f.node(TREE, StartOptions::default());
    let pid = grandchild_pid(&f, &id).await;
    assert!(running(pid), "control: the grandchild runs before the kill");
    let t = Instant::now();
    let st = commands::kill(&f.engine, f.host, &id, 9, KillReason::Caller)
        .await
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_eq!(st.state, State::Killed);
    assert_eq!(st.signal.as_deref(), Some("SIGKILL"));
    assert!(st.error.as_deref().unwrap().contains("SIGKILL"), "{st:?}");
    assert!(!running(pid), "the grandchild {pid} outlived the kill");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_terminates_the_job_after_the_grace() {
    let f = fixture(400.0);
    let id = f.node(TREE, StartOptions::default());
    let pid = grandchild_pid(&f, &id).await;
    let st = commands::kill(&f.engine, f.host, &id, 15, KillReason::Caller)
        .await
        .unwrap();
    assert_eq!(st.state, State::Killed);
    assert!(st.error.as_deref().unwrap().contains("SIGTERM"), "{st:?}");
    assert!(!running(pid), "the grandchild {pid} outlived the kill");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_stops_the_tree() {
    let f = fixture(300.0);
    let id = f.node(
        TREE,
        StartOptions {
            timeout_ms: Some(1500.0),
            ..Default::default()
        },
    );
    let pid = grandchild_pid(&f, &id).await;
    let st = f.settled(&id).await;
    assert_eq!(st.state, State::Timeout, "{st:?}");
    assert!(
        st.error.as_deref().unwrap().contains("1500ms budget"),
        "{st:?}"
    );
    assert!(!running(pid), "the grandchild {pid} outlived the budget");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_is_exact() {
    let f = fixture(300.0);
    let id = f.node(
        "process.stdout.write('x'.repeat(200000));setInterval(()=>{},1000)",
        StartOptions {
            max_output_bytes: Some(70_001.0),
            ..Default::default()
        },
    );
    let st = f.settled(&id).await;
    assert_eq!(st.state, State::OutputLimit, "{st:?}");
    assert_eq!(st.stdout_bytes, 70_001.0);
    assert_eq!(f.stdout(&id), vec![b'x'; 70_001]);
    assert!(st.error.as_deref().unwrap().contains("banked in full"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_replaces_the_hosts() {
    let f = fixture(300.0);
    std::env::set_var("NLC_WIN_HOST_ONLY", "host");
    let script = "process.stdout.write(JSON.stringify([process.env.NLC_WIN_GIVEN, process.env.NLC_WIN_HOST_ONLY ?? null]))";
    let id = f.node(
        script,
        StartOptions {
            env: Some(vec![("NLC_WIN_GIVEN".into(), "given ✓".into())]),
            ..Default::default()
        },
    );
    let st = f.settled(&id).await;
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    assert_eq!(
        String::from_utf8(f.stdout(&id)).unwrap(),
        r#"["given ✓",null]"#
    );
    // Control: inherited when no env is given.
    let id = f.node(script, StartOptions::default());
    f.settled(&id).await;
    assert_eq!(
        String::from_utf8(f.stdout(&id)).unwrap(),
        r#"[null,"host"]"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_pipe_round_trips() {
    let f = fixture(300.0);
    let id = f.node(
        "process.stdin.pipe(process.stdout)",
        StartOptions {
            input: Input::Pipe,
            ..Default::default()
        },
    );
    let n = commands::write_input(&f.engine, f.host, &id, "ab€\n".as_bytes().to_vec(), true)
        .await
        .unwrap();
    assert_eq!(n, 6);
    let st = f.settled(&id).await;
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    assert_eq!(f.stdout(&id), "ab€\n".as_bytes());
}

/// Terminal mode: the command runs attached to a pseudo console of its
/// own; what it shows is its stdout log, what is written to it is typed.
/// Under wine only a program that opens the console by name is served, so
/// this one does (`\\.\CONOUT$`, `\\.\CONIN$`); an ordinary program printing to its
/// standard output, and a resize, are in `windows_native_only.rs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_command_shows_on_its_console_and_reads_what_is_typed() {
    let f = fixture(300.0);
    let script = "const fs = require('fs'); \
        const o = fs.openSync('\\\\\\\\.\\\\CONOUT$', 'r+'); \
        fs.writeSync(o, 'ready ' + process.env.NLC_MARK + ' ' + process.env.TERM + '\\r\\n'); \
        const i = fs.openSync('\\\\\\\\.\\\\CONIN$', 'r+'); \
        const b = Buffer.alloc(256); \
        const n = fs.readSync(i, b, 0, 256, null); \
        fs.writeSync(o, 'read [' + b.toString('utf8', 0, n).trim() + ']\\r\\n'); \
        process.exit(3)";
    // The replacing environment names no TERM: the runner adds one.
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("TERM"))
        .collect();
    env.push(("NLC_MARK".into(), "mark-42".into()));
    let id = f.node(
        script,
        StartOptions {
            input: Input::Terminal {
                cols: 100,
                rows: 30,
            },
            env: Some(env),
            ..Default::default()
        },
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !screen_text(&f.stdout(&id)).contains("ready mark-42 xterm-256color") {
        assert!(
            Instant::now() < deadline,
            "{:?} {:?}",
            f.stdout(&id),
            commands::status(&f.engine, f.host, &id)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let n = commands::write_input(&f.engine, f.host, &id, b"typed here\r".to_vec(), false)
        .await
        .unwrap();
    assert_eq!(n, 11);
    let st = f.settled(&id).await;
    assert_eq!(st.exit_code, Some(3), "{st:?}");
    assert_eq!(st.error, None, "{st:?}");
    let text = screen_text(&f.stdout(&id));
    assert!(text.contains("read [typed here]"), "{text:?}");
    // No stderr of its own: everything it shows is on the console.
    assert!(f.stderr(&id).is_empty());
}

/// A terminal command's tree is stopped as any other (the job), and the
/// command settles: its console is closed once the leader is gone, which
/// ends the output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_commands_tree_is_stopped_and_settles() {
    let f = fixture(400.0);
    let script = "const fs = require('fs'); \
        const o = fs.openSync('\\\\\\\\.\\\\CONOUT$', 'r+'); \
        const c = require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); \
        fs.writeSync(o, 'pid ' + c.pid + ' end\\r\\n'); \
        setInterval(() => {}, 1000)";
    let id = f.node(
        script,
        StartOptions {
            input: Input::Terminal { cols: 80, rows: 24 },
            ..Default::default()
        },
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid: u32 = loop {
        let text = screen_text(&f.stdout(&id));
        if let Some((p, _)) = text
            .split_once("pid ")
            .and_then(|(_, r)| r.split_once(" end"))
        {
            break p.trim().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "{text:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(running(pid), "control: the grandchild runs before the kill");
    let st = commands::kill(&f.engine, f.host, &id, 15, KillReason::Caller)
        .await
        .unwrap();
    assert_eq!(st.state, State::Killed, "{st:?}");
    assert!(st.error.as_deref().unwrap().contains("SIGTERM"), "{st:?}");
    assert!(!running(pid), "the grandchild {pid} outlived the kill");
    // Nothing is written to a settled terminal.
    let e = commands::write_input(&f.engine, f.host, &id, b"x".to_vec(), false)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "NLC_NOT_RUNNING", "{e}");
}

/// `args.cmd` in `dir`, which hands every argument to node, which prints
/// them as JSON: what the program receives.
fn write_args_cmd(dir: &Path) -> PathBuf {
    let p = dir.join("args.cmd");
    std::fs::write(
        &p,
        format!(
            "@\"{}\" -e \"process.stdout.write(JSON.stringify(process.argv.slice(1)))\" %*\r\n",
            node()
        ),
    )
    .unwrap();
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_program_gets_its_arguments_exactly_or_is_refused() {
    let f = fixture(300.0);
    let bin = f.root.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    write_args_cmd(&bin);
    let path = format!(
        "{};{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = || {
        Some(vec![
            ("PATH".to_string(), path.clone()),
            ("PATHEXT".to_string(), ".COM;.EXE;.BAT;.CMD".to_string()),
            (
                "SystemRoot".to_string(),
                std::env::var("SystemRoot").unwrap_or_default(),
            ),
        ])
    };
    // Found through PATH and PATHEXT by its bare name, as npm is.
    let hostile = [
        "a&b",
        "x|y",
        "c^d",
        "(p)",
        "<in>",
        "sp ace",
        "tail\\",
        "semi;colon",
        "é",
    ];
    let mut argv = vec!["args"];
    argv.extend(hostile);
    let id = f
        .start(
            &argv,
            StartOptions {
                env: env(),
                ..Default::default()
            },
        )
        .unwrap();
    let st = f.settled(&id).await;
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    let got: Vec<String> = serde_json::from_slice(&f.stdout(&id)).unwrap();
    assert_eq!(got, hostile);
    // What cmd.exe would read as syntax is refused, naming the argument;
    // nothing runs.
    for bad in ["%PATH%", "say \"hi\"", "two\nlines"] {
        let e = f
            .start(
                &["args", "ok", bad],
                StartOptions {
                    env: env(),
                    ..Default::default()
                },
            )
            .unwrap_err();
        assert_eq!(e.code(), "NLC_SHELL_SYNTAX", "{bad:?}: {e}");
        let m = e.to_string();
        assert!(
            m.contains("argv[2]") && m.contains(&format!("{bad:?}")),
            "{m}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cwd_is_checked_by_a_held_handle() {
    let f = fixture(300.0);
    std::fs::create_dir_all(f.root.path().join("sub")).unwrap();
    // Control: a directory inside the root is where the command starts.
    let id = f.node(
        "process.stdout.write(process.cwd())",
        StartOptions {
            cwd: "sub".into(),
            ..Default::default()
        },
    );
    let st = f.settled(&id).await;
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    let cwd = String::from_utf8(f.stdout(&id)).unwrap();
    assert!(cwd.to_lowercase().ends_with("\\sub"), "{cwd}");
    let n = node();
    // `..`, another volume (Z: is wine's view of /; C: holds the root) and
    // a missing directory are refused before anything runs.
    let outside = f
        .root
        .path()
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    for cwd in ["..", "sub\\..\\..", "Z:\\", outside.as_str(), "missing"] {
        let e = f
            .start(
                &[&n, "-e", "0"],
                StartOptions {
                    cwd: cwd.into(),
                    ..Default::default()
                },
            )
            .unwrap_err();
        assert_eq!(e.code(), "NLC_OUTSIDE_ROOT", "{cwd}: {e}");
        if cwd != "missing" {
            assert!(
                e.to_string().contains("outside the permitted root"),
                "{cwd}: {e}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confinement_and_limits_are_refused() {
    let f = fixture(300.0);
    let n = node();
    let e = f
        .start(
            &[&n, "-e", "0"],
            StartOptions {
                confine: Some(ConfinementInput::default()),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.code(), "NLC_CONFINEMENT_UNAVAILABLE", "{e}");
    assert!(e.to_string().contains("windows"), "{e}");
    let e = f
        .start(
            &[&n, "-e", "0"],
            StartOptions {
                limits: Some(LimitsInput {
                    memory_bytes: Some(1e9),
                    ..Default::default()
                }),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.code(), "NLC_LIMIT_UNAVAILABLE", "{e}");
    assert!(e.to_string().contains("Windows"), "{e}");
    // Control: the same start without them runs.
    let id = f.start(&[&n, "-e", "0"], StartOptions::default()).unwrap();
    assert_eq!(f.settled(&id).await.exit_code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cmd_exe_runs_by_its_absolute_path() {
    let f = fixture(300.0);
    let c = cmd_exe();
    let id = f
        .start(
            &[&c, "/d", "/c", "echo hi& exit 3"],
            StartOptions::default(),
        )
        .unwrap();
    let st = f.settled(&id).await;
    assert_eq!(st.exit_code, Some(3), "{st:?}");
    assert_eq!(f.stdout(&id), b"hi\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_running_commands_hold_no_thread_each() {
    // The engine's runtime has 8 blocking threads. A thread per pipe or
    // per exit wait would be held by each running command, and the
    // commands after the first few would never be read or seen to exit.
    let f = fixture(300.0);
    let ids: Vec<String> = (0..10)
        .map(|i| {
            f.node(
                &format!("process.stdout.write('up {i}\\n');setInterval(()=>{{}},1000)"),
                StartOptions::default(),
            )
        })
        .collect();
    let quick = f.node("process.stdout.write('quick')", StartOptions::default());
    let st = f.settled(&quick).await;
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    assert_eq!(f.stdout(&quick), b"quick");
    let deadline = Instant::now() + Duration::from_secs(60);
    for (i, id) in ids.iter().enumerate() {
        while f.stdout(id) != format!("up {i}\n").as_bytes() {
            assert!(Instant::now() < deadline, "command {i} was never read");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    assert_eq!(commands::kill_all(&f.engine, f.host).await, 10);
    for id in &ids {
        assert_eq!(f.settled(id).await.state, State::Killed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_search_follow_reads_and_listeners() {
    use neurolink_commands_engine::jobs::waits::{self, WaitRequest};
    use neurolink_commands_engine::runtime::Event;
    use neurolink_commands_engine::text::matching::Pattern;
    let f = fixture(300.0);
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let listener = f
        .engine
        .registry
        .add_listener(std::sync::Arc::new(move |e| {
            let _ = tx.send(e);
        }));
    let host = f.engine.registry.register_host_for(listener);
    let policy = f.engine.registry.with_host(f.host, |h| h.policy.clone());
    f.engine.registry.with_host(host, |h| h.policy = policy);
    let n = node();
    let argv = vec![
        n,
        "-e".into(),
        "process.stdout.write('line one\\n');setTimeout(()=>process.stdout.write('READY é\\nline two\\n'),700);setTimeout(()=>{},1400)".into(),
    ];
    let ctx = neurolink_commands_engine::commands::StartContext { host, ..f.ctx() };
    let id = commands::start(
        &f.engine,
        argv,
        StartOptions {
            cwd: ".".into(),
            ..Default::default()
        },
        ctx,
    )
    .unwrap()
    .task_id;
    let rec = f.engine.registry.lookup(host, &id).unwrap();
    // A wait that begins before the line is printed sees it arrive.
    let got = waits::await_output(
        rec.clone(),
        WaitRequest {
            pattern: Pattern::new("READY", false).unwrap(),
            stream: None,
            from: 0,
            timeout_ms: Some(30_000.0),
        },
    )
    .await
    .unwrap();
    let (s, hit) = got.found.expect("the pattern was printed");
    assert_eq!(s, Stream::Stdout);
    assert_eq!(hit.offset, 9);
    assert!(hit.line.starts_with("READY é"), "{:?}", hit.line);
    let st = commands::await_settled(&f.engine, host, &id, Some(60_000.0))
        .await
        .unwrap();
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    let r = waits::search(
        &rec,
        Stream::Stdout,
        &Pattern::new("line", false).unwrap(),
        0,
        10,
    )
    .unwrap();
    let lines: Vec<(u64, &str)> = r
        .matches
        .iter()
        .map(|m| (m.line, m.text.as_str()))
        .collect();
    assert_eq!(lines, [(1, "line one"), (3, "line two")]);
    // A follow read returns the whole stream once, then nothing new.
    let first = commands::read_new(&f.engine, host, &id, Stream::Stdout).unwrap();
    assert_eq!(
        String::from_utf16(&first.page.content).unwrap(),
        "line one\nREADY é\nline two\n"
    );
    let again = commands::read_new(&f.engine, host, &id, Stream::Stdout).unwrap();
    assert!(again.page.content.is_empty());
    // The listener heard it settle.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout(Duration::from_millis(100), events.recv()).await {
            Ok(Some(Event::Settled(t))) if t == id => break,
            _ => assert!(Instant::now() < deadline, "no Settled event"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_gone_with_descendants_holding_its_output_settles() {
    let f = fixture(300.0);
    // cmd.exe starts node in the background with its own standard handles
    // and exits; node says its pid through the output it inherited.
    let c = cmd_exe();
    let n = node();
    let id = f
        .start(
            &[
                &c,
                "/d",
                "/c",
                "start",
                "/b",
                "",
                &n,
                "-e",
                "console.log(process.pid); setInterval(() => {}, 1000)",
            ],
            StartOptions::default(),
        )
        .unwrap();
    let pid = grandchild_pid(&f, &id).await;
    let st = f.settled(&id).await;
    assert_eq!(st.state, State::Exited, "{st:?}");
    assert_eq!(st.exit_code, Some(0));
    assert!(
        st.error
            .as_deref()
            .unwrap()
            .contains("descendants still held its output"),
        "{st:?}"
    );
    assert!(!running(pid), "the grandchild {pid} outlived the command");
}

/// Set in the host process `the_host_killed_leaves_no_process` starts.
const HOST_ROLE: &str = "NLC_WIN_ENGINE_TEST_HOST";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_killed_leaves_no_process() {
    if std::env::var_os(HOST_ROLE).is_some() {
        // The host: start a tree, say the grandchild's pid, wait to be killed.
        let f = fixture(300.0);
        let id = f.node(TREE, StartOptions::default());
        let pid = grandchild_pid(&f, &id).await;
        println!("GRANDCHILD {pid}");
        tokio::time::sleep(Duration::from_secs(120)).await;
        panic!("the host was not killed");
    }
    use std::io::{BufRead, BufReader};
    let mut host = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_host_killed_leaves_no_process",
            "--nocapture",
        ])
        .env(HOST_ROLE, "1")
        .env("NLC_WIN_NODE", node())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(host.stdout.take().unwrap()).lines();
    let pid: u32 = loop {
        let line = lines.next().expect("the host said no pid").unwrap();
        if let Some(p) = line.strip_prefix("GRANDCHILD ") {
            break p.trim().parse().unwrap();
        }
    };
    assert!(
        running(pid),
        "control: the grandchild runs while the host does"
    );
    // TerminateProcess: no code of the host runs after it.
    host.kill().unwrap();
    host.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while running(pid) {
        assert!(
            Instant::now() < deadline,
            "the grandchild {pid} outlived its host"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absolute_program_path_may_hold_spaces() {
    let programs = tempfile::tempdir().unwrap();
    let dir = programs.path().join("Program Files");
    std::fs::create_dir(&dir).unwrap();
    let script = write_args_cmd(&dir).to_str().unwrap().to_string();
    let f = common::fixture(PolicyInput {
        allowed_executables: vec![script.clone(), "node -v".into()],
        ..Default::default()
    });
    let id = f
        .start(&[&script, "a b", "c&d"], StartOptions::default())
        .unwrap();
    let st = f.settled(&id).await;
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    let got: Vec<String> = serde_json::from_slice(&f.stdout(&id)).unwrap();
    assert_eq!(got, ["a b", "c&d"]);
    // Whitespace in any other argv[0] is still a shell line, allowed or not.
    let e = f.start(&["node -v"], StartOptions::default()).unwrap_err();
    assert_eq!(e.code(), "NLC_SHELL_SYNTAX", "{e}");
    let missing = dir.join("missing.exe");
    let e = f
        .start(&[missing.to_str().unwrap()], StartOptions::default())
        .unwrap_err();
    assert_eq!(e.code(), "NLC_SHELL_SYNTAX", "{e}");
}
