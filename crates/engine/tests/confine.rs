//! Kernel confinement (SPEC §8) with real processes and the real kernel's
//! Landlock and seccomp: every refused action is paired with the same action
//! run unconfined, which succeeds.

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::Duration;

use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::policy::confine::{ConfinementInput, ReadInput, Tmp};
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::process::confine as kernel;
use neurolink_commands_engine::record::Status;

mod common;
use common::Fixture;

fn fixture(confine: Option<ConfinementInput>) -> Fixture {
    common::fixture(PolicyInput {
        allowed_executables: vec!["/bin/bash".into()],
        confine,
        ..Default::default()
    })
}

impl Fixture {
    async fn bash(&self, script: &str, confine: Option<ConfinementInput>) -> (Status, String) {
        self.bash_within(script, confine, 20_000.0).await
    }
}

fn default_confine() -> Option<ConfinementInput> {
    Some(ConfinementInput::default())
}

fn home() -> PathBuf {
    PathBuf::from(std::env::var("HOME").unwrap())
}

/// A scratch directory directly in $HOME (outside every default tree).
fn home_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(".nlc-confine-test-")
        .tempdir_in(home())
        .unwrap()
}

/// qemu-user (the arm64 runs of `pnpm run test:platforms`, which set
/// NLC_TEST_QEMU=1) does not pass Landlock's system calls on to the kernel:
/// the emulated engine finds no Landlock (ABI 0), so no confined command can
/// run there. What holds under it is the fail-closed refusal, which each test
/// below checks instead of its body ([`fails_closed_under_qemu`]); natively
/// (and on arm64 hardware, in CI) the body runs.
fn landlock_hidden_by_qemu() -> bool {
    std::env::var_os("NLC_TEST_QEMU").is_some_and(|v| v == "1")
}

/// Under qemu-user: an unconfined control runs, the confined start is
/// refused with NLC_CONFINEMENT_UNAVAILABLE before anything exists.
async fn fails_closed_under_qemu() {
    let f = fixture(None);
    let (st, out) = f.bash("echo ran", None).await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "ran\n"));
    let opts = StartOptions {
        cwd: ".".into(),
        confine: default_confine(),
        ..Default::default()
    };
    let argv = vec!["/bin/bash".into(), "-c".into(), "echo ran".into()];
    let e = commands::start(&f.engine, argv, opts, f.ctx()).unwrap_err();
    assert_eq!(e.code(), "NLC_CONFINEMENT_UNAVAILABLE", "{e}");
    assert!(
        e.to_string().contains("this kernel offers none (ABI 0)"),
        "{e}"
    );
}

#[test]
fn this_kernel_supports_all_of_it() {
    let s = kernel::support();
    if landlock_hidden_by_qemu() {
        // qemu-user hides Landlock (see landlock_hidden_by_qemu): it reports none, and says so.
        assert_eq!(s.landlock_abi, 0, "{s:?}");
        assert!(kernel::missing(false).unwrap().contains("ABI 0"));
        return;
    }
    assert!(s.landlock_abi >= kernel::NEEDED_ABI, "{s:?}");
    assert!(s.filesystem && s.network && s.signals && s.seccomp, "{s:?}");
    assert_eq!(kernel::missing(false), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_stay_inside_the_write_trees() {
    if landlock_hidden_by_qemu() {
        return fails_closed_under_qemu().await;
    }
    let f = fixture(None);
    let sibling = tempfile::tempdir().unwrap();
    let home_dir = home_scratch();
    let script = |dir: &Path| format!("echo x > {}/made && echo wrote", dir.display());
    for dir in [sibling.path(), home_dir.path()] {
        // Control: unconfined, the write succeeds.
        let (st, out) = f.bash(&script(dir), None).await;
        assert_eq!((st.exit_code, out.as_str()), (Some(0), "wrote\n"));
        assert!(!st.confined);
        std::fs::remove_file(dir.join("made")).unwrap();
        // Confined: neither tree is in the command's view (its /tmp is a
        // private one, the home directory is not in the read set).
        let (st, out) = f.bash(&script(dir), default_confine()).await;
        assert!(st.confined);
        assert_eq!(st.exit_code, Some(1), "{out}");
        assert!(out.contains("No such file or directory"), "{out}");
        assert!(!dir.join("made").exists());
    }
    // The root is writable, so is the private TMPDIR.
    let (st, out) = f
        .bash(
            "echo r > in-root && echo t > \"$TMPDIR/t\" && echo \"$TMPDIR\" && [ \"$TMP\" = \"$TMPDIR\" ] && [ \"$TEMP\" = \"$TMPDIR\" ] && cat \"$TMPDIR/t\"",
            default_confine(),
        )
        .await;
    assert_eq!(st.exit_code, Some(0), "{out}");
    assert_eq!(
        std::fs::read_to_string(f.root.path().join("in-root")).unwrap(),
        "r\n"
    );
    let tmp = PathBuf::from(out.lines().next().unwrap());
    assert!(
        tmp.starts_with(std::fs::canonicalize(f.logs.path()).unwrap()),
        "{tmp:?}"
    );
    assert_eq!(out.lines().nth(1), Some("t"));
    assert!(!tmp.exists(), "the private TMPDIR is gone once settled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_is_unreadable_under_the_default_read_set() {
    if landlock_hidden_by_qemu() {
        return fails_closed_under_qemu().await;
    }
    let f = fixture(None);
    let d = home_scratch();
    std::fs::write(d.path().join("secret"), "s3cret\n").unwrap();
    let script = format!("cat {}/secret", d.path().display());
    let (st, out) = f.bash(&script, None).await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "s3cret\n"));
    let (st, out) = f.bash(&script, default_confine()).await;
    assert_eq!(st.exit_code, Some(1));
    // Not in the view at all.
    assert!(out.contains("No such file or directory"), "{out}");
    // Listed, it is readable.
    let listed = ConfinementInput {
        read: Some(ReadInput::Trees(vec![d.path().to_string_lossy().into()])),
        ..Default::default()
    };
    let (st, out) = f.bash(&script, Some(listed)).await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "s3cret\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_network_tcp_nor_udp() {
    if landlock_hidden_by_qemu() {
        return fails_closed_under_qemu().await;
    }
    let f = fixture(None);
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let tport = tcp.local_addr().unwrap().port();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let uport = udp.local_addr().unwrap().port();
    let tcp_script = format!("echo hi > /dev/tcp/127.0.0.1/{tport} && echo connected");
    let udp_script = format!("echo dgram > /dev/udp/127.0.0.1/{uport} && echo sent");
    let mut buf = [0u8; 64];

    let (st, out) = f.bash(&tcp_script, None).await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "connected\n"));
    tcp.accept().unwrap();
    let (st, out) = f.bash(&udp_script, None).await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "sent\n"));
    let (n, _) = udp.recv_from(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"dgram\n");

    assert_eq!(st.confinement_notes, Vec::<String>::new());
    let one_refused = vec!["network is off: 1 connection attempt was refused (a confined command may open unix sockets only); allow network with the policy's confine.network: true".to_string()];
    let (st, out) = f.bash(&tcp_script, default_confine()).await;
    assert_eq!(st.exit_code, Some(1), "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert_eq!(st.confinement_notes, one_refused);
    let (st, out) = f.bash(&udp_script, default_confine()).await;
    assert_eq!(st.exit_code, Some(1), "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert!(udp.recv_from(&mut buf).is_err(), "no datagram arrived");
    assert_eq!(st.confinement_notes, one_refused);

    // network: true under a policy that allows it.
    let open = ConfinementInput {
        network: Some(true),
        ..Default::default()
    };
    let (st, out) = f.bash(&tcp_script, Some(open)).await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "connected\n"));
    assert!(st.confined);
    assert_eq!(st.confinement_notes, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cannot_signal_the_host_and_grandchildren_are_confined() {
    if landlock_hidden_by_qemu() {
        return fails_closed_under_qemu().await;
    }
    let f = fixture(None);
    let me = std::process::id();
    let (st, out) = f.bash(&format!("kill -0 {me} && echo reached"), None).await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "reached\n"));
    let (st, out) = f
        .bash(&format!("kill -0 {me} && echo reached"), default_confine())
        .await;
    assert_eq!(st.exit_code, Some(1), "{out}");
    // The host is outside the command's PID namespace.
    assert!(out.contains("No such process"), "{out}");

    // A grandchild in a new session: same confinement.
    let home_dir = home_scratch();
    let target = home_dir.path().join("from-grandchild");
    let script = format!(
        "/usr/bin/setsid /bin/bash -c 'sleep 0.1; echo g > {t} ; echo $? > {r}/status' & wait",
        t = target.display(),
        r = f.root.path().display()
    );
    let (st, _) = f.bash(&script, default_confine()).await;
    assert_eq!(st.exit_code, Some(0));
    let status_file = f.root.path().join("status");
    for _ in 0..100 {
        if status_file.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&status_file).unwrap().trim(), "1");
    assert!(!target.exists());
    // Control: the same grandchild unconfined writes.
    let (st, _) = f.bash(&script, None).await;
    assert_eq!(st.exit_code, Some(0));
    for _ in 0..100 {
        if target.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(target.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_is_not_confined_afterwards() {
    if landlock_hidden_by_qemu() {
        return fails_closed_under_qemu().await;
    }
    let f = fixture(default_confine());
    let (st, _) = f.bash("true", None).await;
    assert!(st.confined, "the policy's confinement applies");
    let d = home_scratch();
    std::fs::write(d.path().join("host-writes"), "ok").unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let t = std::thread::spawn(move || {
        std::fs::write(d.path().join("thread-writes"), "ok").unwrap();
        UdpSocket::bind("127.0.0.1:0").unwrap();
    });
    t.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_tmp_and_options_narrowing() {
    if landlock_hidden_by_qemu() {
        return fails_closed_under_qemu().await;
    }
    let f = fixture(Some(ConfinementInput {
        tmp: Some(Tmp::Shared),
        ..Default::default()
    }));
    let logs = std::fs::canonicalize(f.logs.path()).unwrap();
    let (st, out) = f
        .bash(
            &format!(
                "echo s > {}/shared && echo ok; echo \"[$TMPDIR]\"",
                logs.display()
            ),
            None,
        )
        .await;
    assert_eq!(st.exit_code, Some(0), "{out}");
    assert!(out.starts_with("ok\n"), "{out}");
    // code: NLC_INVALID_ARGUMENT
    let sibling = tempfile::tempdir().unwrap();
    let argv = vec!["/bin/bash".to_string(), "-c".into(), "true".into()];
    let e = commands::start(
        &f.engine,
        argv,
        StartOptions {
            cwd: ".".into(),
            confine: Some(ConfinementInput {
                write: Some(vec![sibling.path().to_string_lossy().into()]),
                ..Default::default()
            }),
            ..Default::default()
        },
        f.ctx(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("may only narrow"), "{e}");
}
