//! Interactive commands end to end in the engine, with real processes: a
//! pipe the caller writes (backpressure, end, a command closing its input)
//! and a terminal (its size, its session, ctrl-d, resize).

use std::time::Duration;

use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::errors::EngineError;
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::record::State;
use neurolink_commands_engine::spawn::Input;

mod common;
use common::Fixture;

fn fixture() -> Fixture {
    common::fixture(PolicyInput {
        allowed_executables: vec!["/bin/sh".into()],
        ..Default::default()
    })
}

impl Fixture {
    fn sh(&self, script: &str, input: Input) -> String {
        let argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
        let opts = StartOptions {
            cwd: ".".into(),
            input,
            max_output_bytes: Some(64.0 * 1024.0 * 1024.0),
            ..Default::default()
        };
        commands::start(&self.engine, argv, opts, self.ctx())
            .unwrap()
            .task_id
    }

    fn stdout(&self, id: &str) -> Vec<u8> {
        std::fs::read(
            self.logs
                .path()
                .join("neurolink-commands")
                .join(id)
                .join("stdout.log"),
        )
        .unwrap()
    }

    async fn wait_lines(&self, id: &str, n: usize) -> String {
        for _ in 0..1500 {
            let text = String::from_utf8_lossy(&self.stdout(id)).into_owned();
            if text.matches("\r\n").count() >= n {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{id} never printed {n} lines");
    }

    async fn wait_output(&self, id: &str, needle: &str) -> String {
        for _ in 0..1500 {
            let text = String::from_utf8_lossy(&self.stdout(id)).into_owned();
            if text.contains(needle) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{needle:?} never appeared in the output of {id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_far_larger_than_the_pipe_arrives_exactly() {
    let f = fixture();
    let id = f.sh("cat", Input::Pipe);
    let data: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    assert!(commands::status(&f.engine, f.host, &id).unwrap().stdin_open);
    let n = commands::write_input(&f.engine, f.host, &id, data.clone(), true)
        .await
        .unwrap();
    assert_eq!(n, data.len());
    assert!(!commands::status(&f.engine, f.host, &id).unwrap().stdin_open);
    let st = commands::await_settled(&f.engine, f.host, &id, None)
        .await
        .unwrap();
    assert_eq!((st.state, st.exit_code), (State::Exited, Some(0)));
    assert!(f.stdout(&id) == data, "the bytes cat echoed differ");
    assert!(!st.stdin_open);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_delivered_in_order_and_end_is_claimed_once() {
    let f = fixture();
    // The command runs on for a second after its input ends, so the write
    // after `end` meets a running command whose input is closed (not one that
    // already exited, which a fast machine — or none under qemu — may reach).
    let id = f.sh("cat; echo; echo end; sleep 1", Input::Pipe);
    let writes: Vec<_> = (0..20)
        .map(|i| commands::write_input(&f.engine, f.host, &id, format!("{i},").into_bytes(), false))
        .collect();
    for w in writes {
        w.await.unwrap();
    }
    commands::write_input(&f.engine, f.host, &id, Vec::new(), true)
        .await
        .unwrap();
    // code: NLC_NOT_RUNNING
    let again = commands::write_input(&f.engine, f.host, &id, b"x".to_vec(), true).await;
    assert!(
        matches!(&again, Err(EngineError::NotRunning(m)) if m.contains("is closed (by an earlier end: true")),
        "{again:?}"
    );
    commands::await_settled(&f.engine, f.host, &id, None)
        .await
        .unwrap();
    let expected: String = (0..20).map(|i| format!("{i},")).collect();
    assert_eq!(
        String::from_utf8(f.stdout(&id)).unwrap(),
        format!("{expected}\nend\n")
    );
    // code: NLC_NOT_RUNNING
    let late = commands::write_input(&f.engine, f.host, &id, b"x".to_vec(), false).await;
    assert!(
        matches!(&late, Err(EngineError::NotRunning(m)) if m.contains("is not running (it is exited)")),
        "{late:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_input_and_no_terminal_are_invalid_arguments() {
    let f = fixture();
    let id = f.sh("exit 0", Input::Null);
    commands::await_settled(&f.engine, f.host, &id, None)
        .await
        .unwrap();
    // code: NLC_INVALID_ARGUMENT
    let e = commands::write_input(&f.engine, f.host, &id, b"x".to_vec(), false).await;
    assert!(
        matches!(&e, Err(EngineError::BadInput(m)) if m.contains("stdin: \"pipe\"")),
        "{e:?}"
    );
    let p = f.sh("cat", Input::Pipe);
    // code: NLC_INVALID_ARGUMENT
    let r = commands::resize_terminal(&f.engine, f.host, &p, 100, 40);
    assert!(
        matches!(&r, Err(EngineError::BadInput(m)) if m.contains("does not run in a terminal")),
        "{r:?}"
    );
    commands::write_input(&f.engine, f.host, &p, Vec::new(), true)
        .await
        .unwrap();
    commands::await_settled(&f.engine, f.host, &p, None)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_session_with_its_size_resize_and_ctrl_d() {
    let f = fixture();
    let id = f.sh(
        "tty; stty size; ps -o sid= -o pgid= -p $$; echo $$; trap 'stty size' WINCH; cat; echo eof; sleep 0.2",
        Input::Terminal { cols: 91, rows: 17 },
    );
    // tty, stty size, the session and group ids, the pid: four lines.
    let text = f.wait_lines(&id, 4).await;
    let lines: Vec<&str> = text.split("\r\n").collect();
    assert!(lines[0].starts_with("/dev/pts/"), "{text:?}");
    assert_eq!(lines[1], "17 91");
    let ids: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        ids,
        vec![lines[3], lines[3]],
        "leads its session and its group"
    );
    let st = commands::status(&f.engine, f.host, &id).unwrap();
    assert!(st.stdin_open);
    // The line echoed twice (the terminal, then cat) means cat is running:
    // a resize before that would run the shell's trap before cat starts.
    let n = commands::write_input(&f.engine, f.host, &id, b"typed\r".to_vec(), false)
        .await
        .unwrap();
    assert_eq!(n, 6);
    f.wait_output(&id, "typed\r\ntyped\r\n").await;
    // The shell runs its WINCH trap once the foreground cat has ended.
    commands::resize_terminal(&f.engine, f.host, &id, 120, 33).unwrap();
    // end: ctrl-d; cat sees end of file, the input stays open.
    let n = commands::write_input(&f.engine, f.host, &id, Vec::new(), true)
        .await
        .unwrap();
    assert_eq!(n, 1);
    f.wait_output(&id, "typed\r\ntyped\r\n33 120\r\neof\r\n")
        .await;
    assert!(commands::status(&f.engine, f.host, &id).unwrap().stdin_open);
    let st = commands::await_settled(&f.engine, f.host, &id, None)
        .await
        .unwrap();
    assert_eq!((st.state, st.exit_code), (State::Exited, Some(0)));
    assert_eq!(st.stderr_bytes, 0.0);
    assert!(!st.stdin_open);
    // code: NLC_NOT_RUNNING
    let r = commands::resize_terminal(&f.engine, f.host, &id, 100, 40);
    assert!(matches!(&r, Err(EngineError::NotRunning(_))), "{r:?}");
}

/// Poll the status until `waiting_for_input` is `want` (at most ~10 s).
#[cfg(target_os = "linux")]
async fn until_waiting(f: &Fixture, id: &str, want: bool) -> std::time::Instant {
    for _ in 0..1000 {
        if commands::status(&f.engine, f.host, id)
            .unwrap()
            .waiting_for_input
            == Some(want)
        {
            return std::time::Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{id} never had waiting_for_input == {want}");
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_reader_of_its_pipe_waits_for_input_until_written_to() {
    let f = fixture();
    let argv = vec![
        "/bin/sh".into(),
        "-c".into(),
        "read x; echo \"[$x]\"; read y".into(),
    ];
    let opts = StartOptions {
        cwd: ".".into(),
        input: Input::Pipe,
        input_wait_ms: Some(200.0),
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let id = commands::start(&f.engine, argv, opts, f.ctx())
        .unwrap()
        .task_id;
    if std::env::var_os("NLC_TEST_QEMU").is_some_and(|v| v == "1") {
        // qemu-user: the kernel shows the emulator's calls, so the engine
        // says it cannot tell (the field is absent).
        assert_eq!(
            commands::status(&f.engine, f.host, &id)
                .unwrap()
                .waiting_for_input,
            None
        );
        // Its input closed, both reads see the end and it exits.
        commands::write_input(&f.engine, f.host, &id, Vec::new(), true)
            .await
            .unwrap();
        commands::await_settled(&f.engine, f.host, &id, None)
            .await
            .unwrap();
        return;
    }
    assert_eq!(
        commands::status(&f.engine, f.host, &id)
            .unwrap()
            .waiting_for_input,
        Some(false)
    );
    let seen = until_waiting(&f, &id, true).await;
    assert!(
        seen - started >= Duration::from_millis(200),
        "before 200 ms of quiet"
    );
    let row = commands::list(&f.engine, f.host, None, None)
        .into_iter()
        .find(|r| r.task_id == id)
        .unwrap();
    assert_eq!(row.waiting_for_input, Some(true));
    // The write ends the episode at once; the second read starts another.
    commands::write_input(&f.engine, f.host, &id, b"a\n".to_vec(), false)
        .await
        .unwrap();
    assert_eq!(
        commands::status(&f.engine, f.host, &id)
            .unwrap()
            .waiting_for_input,
        Some(false)
    );
    f.wait_output(&id, "[a]\n").await;
    until_waiting(&f, &id, true).await;
    commands::write_input(&f.engine, f.host, &id, Vec::new(), true)
        .await
        .unwrap();
    let st = commands::await_settled(&f.engine, f.host, &id, None)
        .await
        .unwrap();
    assert_eq!(
        (st.state, st.waiting_for_input),
        (State::Exited, Some(false))
    );
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_without_an_input_never_waits() {
    let f = fixture();
    let opts = StartOptions {
        cwd: ".".into(),
        input_wait_ms: Some(50.0),
        ..Default::default()
    };
    let argv = vec!["/bin/sh".into(), "-c".into(), "read x; sleep 1".into()];
    let id = commands::start(&f.engine, argv, opts, f.ctx())
        .unwrap()
        .task_id;
    // Under qemu-user the engine cannot tell, and says so (absent).
    let never = std::env::var_os("NLC_TEST_QEMU")
        .is_none_or(|v| v != "1")
        .then_some(false);
    for _ in 0..40 {
        assert_eq!(
            commands::status(&f.engine, f.host, &id)
                .unwrap()
                .waiting_for_input,
            never
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let st = commands::await_settled(&f.engine, f.host, &id, None)
        .await
        .unwrap();
    assert_eq!((st.state, st.waiting_for_input), (State::Exited, never));
}
