//! The namespace sandbox of the `"full"` confinement level (SPEC §8), with
//! real processes, real sockets, real repositories: each refused action is
//! paired with the same action run unconfined (or at the `"landlock"`
//! level), which succeeds. Linux only: the sandbox is Linux's.
#![cfg(target_os = "linux")]

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use neurolink_commands_engine::bank;
use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::policy::confine::{ConfinementInput, ReadInput};
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::process::confine::{self as kernel, Level};
use neurolink_commands_engine::record::{KillReason, State, Status};

mod common;
use common::Fixture;

fn fixture() -> Fixture {
    common::fixture(PolicyInput {
        allowed_executables: vec!["/bin/bash".into()],
        ..Default::default()
    })
}

/// Where the sandbox cannot be made (qemu-user: no Landlock, no namespaces
/// for a new process), the confined start is refused instead, and that is
/// what is asserted.
fn sandbox_here() -> bool {
    let s = kernel::support();
    if std::env::var_os("NLC_TEST_QEMU").is_some_and(|v| v == "1") {
        assert!(kernel::missing(false).is_some(), "{s:?}");
        return false;
    }
    assert!(s.namespaces, "{s:?}: {:?}", kernel::missing(false));
    true
}

fn confined() -> Option<ConfinementInput> {
    Some(ConfinementInput::default())
}

fn landlock_only() -> Option<ConfinementInput> {
    Some(ConfinementInput {
        level: Some(Level::Landlock),
        ..Default::default()
    })
}

impl Fixture {
    async fn run(&self, script: &str, confine: Option<ConfinementInput>) -> (Status, String) {
        let argv = vec!["/bin/bash".into(), "-c".into(), script.into()];
        let opts = StartOptions {
            cwd: ".".into(),
            confine,
            ..Default::default()
        };
        let id = commands::start(&self.engine, argv, opts, self.ctx())
            .unwrap()
            .task_id;
        let st = commands::await_settled(&self.engine, self.host, &id, Some(60_000.0))
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

    fn root(&self) -> &Path {
        self.root.path()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_outside_the_write_trees_cannot_change() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    // A read tree outside the root, and a system file; each change is one
    // that keeps the file as it is (same mode, owner, time), so the
    // unconfined control changes nothing either.
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let read = Some(ConfinementInput {
        read: Some(ReadInput::Trees(vec![d.path().to_string_lossy().into()])),
        ..Default::default()
    });
    for target in [file.to_str().unwrap(), "/etc/hostname"] {
        let script = format!(
            "chmod --reference={t} {t} && echo chmod; chown --reference={t} {t} && echo chown; touch -r {t} {t} && echo touch; python3 -c 'import os; os.setxattr(\"{t}\", \"user.nlc\", b\"1\")' 2>&1 | tail -1",
            t = target
        );
        let confine = if target.starts_with("/etc") {
            confined()
        } else {
            read.clone()
        };
        let (st, out) = f.run(&script, confine).await;
        assert!(st.confined);
        assert_eq!(out.matches("Read-only file system").count(), 4, "{out}");
        assert!(
            !out.lines()
                .any(|l| ["chmod", "chown", "touch"].contains(&l)),
            "{out}"
        );
        // Control: unconfined each succeeds.
        let control = format!(
            "chmod --reference={t} {t} && echo chmod; chown --reference={t} {t} && echo chown; touch -r {t} {t} && echo touch",
            t = target
        );
        let (_, out) = f.run(&control, None).await;
        assert_eq!(out, "chmod\nchown\ntouch\n");
    }
    // Inside the write tree the same changes work.
    std::fs::write(f.root().join("mine"), "x").unwrap();
    let (st, out) = f
        .run("chmod 600 mine && touch -d @0 mine && echo ok", confined())
        .await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "ok\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_capabilities_no_mounts_no_new_user_namespace() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let script = "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status; umount /usr 2>/dev/null; echo umount=$?; mount -t tmpfs none \"$TMPDIR\" 2>/dev/null; echo mount=$?; unshare -U true 2>/dev/null; echo unshare=$?";
    let (st, out) = f.run(script, confined()).await;
    assert!(st.confined);
    let lines: Vec<&str> = out.lines().collect();
    for l in &lines[..5] {
        assert!(l.ends_with("0000000000000000"), "{out}");
    }
    assert_eq!(lines[5], "NoNewPrivs:\t1", "{out}");
    assert_eq!(lines[6..], ["umount=32", "mount=32", "unshare=1"], "{out}");
    // Control: unconfined, this root test process's command holds
    // capabilities and may create a user namespace.
    let (_, out) = f.run(script, None).await;
    assert!(!out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(out.ends_with("unshare=0\n"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_is_pid_one_and_its_descendants_die_with_it() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let marker = format!("31.{}", std::process::id());
    let script = format!(
        "echo $$; setsid -f sleep {marker}; sleep 0.2; pgrep -f 'sleep {marker}' >/dev/null && echo running; head -c 9 /proc/1/cmdline; echo; ls /proc | grep -c '^[0-9]'"
    );
    let (st, out) = f.run(&script, confined()).await;
    // Its /proc is its own namespace's: PID 1 is the command itself (no
    // /proc/<pid>/root of a host process to reach the host's files through),
    // and only its own few processes are listed.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(st.exit_code, Some(0), "{out}");
    assert_eq!(lines[..3], ["1", "running", "/bin/bash"], "{out}");
    let listed: usize = lines[3].parse().unwrap();
    assert!((2..=5).contains(&listed), "{out}");
    // The escaped sleep was killed with the namespace.
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "{:?}", left);
}

/// A daemon's socket outside the write trees, in /tmp and in /run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_sockets_outside_are_out_of_reach() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let run_dir = tempfile::tempdir_in("/run").unwrap();
    for sock in [dir.path().join("d.sock"), run_dir.path().join("d.sock")] {
        let l = UnixListener::bind(&sock).unwrap();
        l.set_nonblocking(true).unwrap();
        let script = format!(
            "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); print(\"connected\")' 2>&1 | tail -1",
            sock.display()
        );
        let (_, out) = f.run(&script, confined()).await;
        assert!(out.contains("FileNotFoundError"), "{out}");
        assert!(l.accept().is_err());
        // read "all": /tmp and /run are private there too.
        let all = Some(ConfinementInput {
            read: Some(ReadInput::All),
            ..Default::default()
        });
        let (_, out) = f.run(&script, all).await;
        assert!(out.contains("FileNotFoundError"), "{out}");
        // Control.
        let (_, out) = f.run(&script, None).await;
        assert_eq!(out, "connected\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abstract_sockets_are_out_of_reach() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let name = format!("nlc-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let l = UnixListener::bind_addr(&addr).unwrap();
    l.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); print(\"connected\")' 2>&1 | tail -1"
    );
    // Landlock's abstract-socket scope, network off and on.
    let (_, out) = f.run(&script, confined()).await;
    assert!(out.contains("PermissionError"), "{out}");
    let open = Some(ConfinementInput {
        network: Some(true),
        ..Default::default()
    });
    let (_, out) = f.run(&script, open).await;
    assert!(out.contains("PermissionError"), "{out}");
    let (_, out) = f.run(&script, None).await;
    assert_eq!(out, "connected\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_sockets_socketpairs_and_shared_memory_work() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let script = r#"python3 - <<'EOF'
import os, socket, multiprocessing
s = socket.socket(socket.AF_UNIX); s.bind("own.sock"); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("own.sock")
a, b = socket.socketpair(); a.send(b"p"); print("own", b.recv(1).decode())
def sq(x): return x * x
if __name__ == "__main__":
    with multiprocessing.Pool(2) as p: print("pool", sum(p.map(sq, range(4))))
EOF
node -e 'const {fork}=require("child_process"); const fs=require("fs"); fs.writeFileSync("c.js","process.send(\"ipc\")"); const c=fork("c.js"); c.on("message", m=>{console.log(m)})'"#;
    let (st, out) = f.run(script, confined()).await;
    assert_eq!(
        (st.exit_code, out.as_str()),
        (Some(0), "own p\npool 14\nipc\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tmux_server_cannot_be_driven() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("tmux.sock");
    let pwned = dir.path().join("pwned");
    let ok = Command::new("tmux")
        .arg("-S")
        .arg(&sock)
        .args(["new", "-d", "sleep 60"])
        .status()
        .unwrap();
    assert!(ok.success());
    let script = format!(
        "tmux -S {} run-shell 'touch {}'; echo $?",
        sock.display(),
        pwned.display()
    );
    let (_, out) = f.run(&script, confined()).await;
    assert!(
        out.starts_with("1\n") && out.contains("No such file or directory"),
        "{out}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pwned.exists());
    let (_, out) = f.run(&script, None).await;
    assert_eq!(out, "0\n");
    for _ in 0..50 {
        if pwned.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(pwned.exists());
    let _ = Command::new("tmux")
        .arg("-S")
        .arg(&sock)
        .arg("kill-server")
        .status();
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A repository at the root with one commit.
fn repo(root: &Path) {
    assert!(git(root, &["init", "-q", "-b", "main"]).status.success());
    std::fs::write(root.join("a"), "a\n").unwrap();
    assert!(git(root, &["add", "a"]).status.success());
    assert!(git(root, &["commit", "-qm", "one"]).status.success());
}

const HOOK: &str = "#!/bin/sh\\ntouch \"$PWD/PLANTED\"\\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_hooks_and_config_cannot_be_planted() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let root = f.root().to_path_buf();
    repo(&root);
    let plant = |how: &str| -> String {
        match how {
            "hook" => format!("printf '{HOOK}' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"),
            "fsmonitor" => "printf '[core]\\n\\tfsmonitor = \"touch PLANTED; false\"\\n' >> .git/config".into(),
            "hookspath" => format!("mkdir -p h && printf '{HOOK}' > h/pre-commit && chmod +x h/pre-commit && printf '[core]\\n\\thooksPath = h\\n' >> .git/config"),
            "symlink" => "ln -sf /dev/null x && printf '[core]\\n\\tfsmonitor = \"touch PLANTED; false\"\\n' > cfg && ln -sf ../cfg .git/config.new && mv -f .git/config.new .git/config".into(),
            "rename" => "mv .git .git-old && git init -q && printf '[core]\\n\\tfsmonitor = \"touch PLANTED; false\"\\n' >> .git/config".into(),
            "gitfile" => format!("mv .git moved-git && echo 'gitdir: moved-git' > .git && printf '{HOOK}' > moved-git/hooks/pre-commit && chmod +x moved-git/hooks/pre-commit"),
            _ => unreachable!(),
        }
    };
    for how in [
        "hook",
        "fsmonitor",
        "hookspath",
        "symlink",
        "rename",
        "gitfile",
    ] {
        let (st, out) = f.run(&plant(how), confined()).await;
        assert_ne!(st.exit_code, Some(0), "{how}: {out}");
        // The user's own git runs nothing planted.
        std::fs::write(root.join("b"), how).unwrap();
        assert!(git(&root, &["add", "b"]).status.success(), "{how}");
        let c = git(&root, &["commit", "-qm", how]);
        assert!(c.status.success(), "{how}: {c:?}");
        assert!(git(&root, &["status"]).status.success());
        assert!(!root.join("PLANTED").exists(), "{how}");
        assert!(root.join(".git").is_dir(), "{how}");
        // Control: the same planting at the "landlock" level succeeds, and
        // the user's next commit (or status) runs what was planted.
        let (st, out) = f.run(&plant(how), landlock_only()).await;
        assert_eq!(st.exit_code, Some(0), "{how}: {out}");
        std::fs::write(root.join("b"), format!("{how} control")).unwrap();
        git(&root, &["add", "b"]);
        git(&root, &["commit", "-qm", "control"]);
        git(&root, &["status"]);
        assert!(root.join("PLANTED").exists(), "{how}: the control ran");
        // A fresh repository for the next way.
        for p in [".git", ".git-old", "moved-git", "h"] {
            let _ = std::fs::remove_dir_all(root.join(p));
        }
        for p in [".git", "cfg", "x", "PLANTED"] {
            let _ = std::fs::remove_file(root.join(p));
        }
        repo(&root);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_git_work_and_a_linked_worktree() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let root = f.root().join("main");
    std::fs::create_dir(&root).unwrap();
    repo(&root);
    let wt = f.root().join("wt");
    assert!(git(&root, &["worktree", "add", "-q", wt.to_str().unwrap()])
        .status
        .success());
    let script = "cd main && G='git -c user.name=t -c user.email=t@t' && echo b > b && $G add b && $G commit -qm two && $G branch x && $G checkout -q x && echo c > c && $G add c && $G commit -qm three && $G checkout -q main && $G merge -q x && $G tag v1 && echo d > d && $G add d && $G stash -q && $G stash pop -q && $G log --oneline | wc -l && cd ../wt && echo w > w && $G add w && $G commit -qm wt && echo wt-ok";
    let (st, out) = f.run(script, confined()).await;
    assert_eq!((st.exit_code, out.as_str()), (Some(0), "3\nwt-ok\n"));
    // Through the worktree: its gitfile and the common directory's hooks.
    let (st, out) = f
        .run(
            "cd wt && (echo 'gitdir: /tmp' > .git; printf '#!/bin/sh\\ntouch PLANTED\\n' > ../main/.git/hooks/post-commit) 2>&1; echo $?",
            confined(),
        )
        .await;
    assert_eq!(st.exit_code, Some(0));
    assert!(out.ends_with("1\n"), "{out}");
    assert!(!root.join(".git/hooks/post-commit").exists());
    assert!(std::fs::read_to_string(wt.join(".git"))
        .unwrap()
        .starts_with("gitdir: "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protect_lists_more_paths() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    std::fs::write(f.root().join(".npmrc"), "registry=x\n").unwrap();
    let script = "echo evil >> .npmrc; mv .npmrc gone; echo other > other && echo done";
    let c = Some(ConfinementInput {
        protect: Some(vec![".npmrc".into()]),
        ..Default::default()
    });
    let (st, out) = f.run(script, c).await;
    assert_eq!(st.exit_code, Some(0));
    assert!(
        out.contains("Read-only file system") && out.contains("busy"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(f.root().join(".npmrc")).unwrap(),
        "registry=x\n"
    );
    // Control: without protect, the same script changes it.
    let (_, _) = f.run(script, confined()).await;
    assert!(f.root().join("gone").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_test_and_git_init_keep_working() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let script = r#"cat > t.test.js <<'EOF'
const test = require('node:test'); const assert = require('node:assert');
test('x', () => assert.equal(1, 1));
EOF
node --test t.test.js >/dev/null && echo node-test-ok; git init -q r && echo git-ok; echo "$TMPDIR" | grep -q neurolink-commands-tmp && touch "$TMPDIR/t" && echo tmp-ok; touch /tmp/private"#;
    let (st, out) = f.run(script, confined()).await;
    assert_eq!(
        (st.exit_code, out.as_str()),
        (
            Some(1),
            "node-test-ok\ngit-ok\ntmp-ok\ntouch: cannot touch '/tmp/private': Read-only file system\n"
        )
    );
    assert!(!Path::new("/tmp/private").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_term_ends_a_command_without_a_handler_at_once_and_reaches_one_with() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let start = |script: &str| {
        let argv = vec!["/bin/bash".into(), "-c".into(), script.into()];
        let opts = StartOptions {
            cwd: ".".into(),
            confine: confined(),
            ..Default::default()
        };
        commands::start(&f.engine, argv, opts, f.ctx())
            .unwrap()
            .task_id
    };
    // No handler: bash -c 'exec sleep' leaves sleep as PID 1.
    let id = start("exec sleep 60");
    std::thread::sleep(Duration::from_millis(300));
    let t = std::time::Instant::now();
    let st = commands::kill(&f.engine, f.host, &id, libc::SIGTERM, KillReason::Caller)
        .await
        .unwrap();
    // Well before the 5 s kill grace.
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(st.state, State::Killed, "{st:?}");
    // A handler: it runs (and prints).
    let id = start("trap 'echo caught; exit 3' TERM; echo ready; sleep 60 & wait");
    std::thread::sleep(Duration::from_millis(300));
    let st = commands::kill(&f.engine, f.host, &id, libc::SIGTERM, KillReason::Caller)
        .await
        .unwrap();
    let out =
        bank::read_artifact(&f.engine.registry, &st.stdout.as_ref().unwrap().artifact_id).unwrap();
    assert_eq!((out.as_str(), st.exit_code), ("ready\ncaught\n", Some(3)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_pnpm_scripts_and_cargo_with_its_home_in_the_root_work() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    std::fs::write(
        f.root().join("package.json"),
        r#"{"name":"p","version":"1.0.0","scripts":{"hi":"node -e \"console.log('script ran')\""}}"#,
    )
    .unwrap();
    let home = std::path::PathBuf::from(std::env::var("HOME").unwrap());
    let rustup = std::fs::canonicalize(home.join(".rustup")).unwrap();
    let cargo_bin = std::fs::canonicalize(home.join(".cargo/bin")).unwrap();
    let c = Some(ConfinementInput {
        exec: Some(vec![
            rustup.to_string_lossy().into(),
            cargo_bin.to_string_lossy().into(),
        ]),
        ..Default::default()
    });
    let script = format!(
        "npm run -s hi && pnpm run -s hi && export CARGO_HOME=$PWD/.cargo-home RUSTUP_HOME={} && {}/cargo new -q --offline p && cd p && {}/cargo run -q --offline",
        rustup.display(),
        cargo_bin.display(),
        cargo_bin.display()
    );
    let (st, out) = f.run(&script, c).await;
    // stdout first (pnpm adds its own notes on stderr).
    assert_eq!(st.exit_code, Some(0), "{out}");
    assert!(
        out.starts_with("script ran\nscript ran\nHello, world!\n"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_command_runs_in_the_sandbox_with_its_own_terminal_only() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let argv = vec![
        "/bin/bash".to_string(),
        "-c".to_string(),
        "tty; stty size; echo $$; ls /dev/pts; read -r line; echo \"got $line\"".to_string(),
    ];
    let opts = StartOptions {
        cwd: ".".into(),
        input: neurolink_commands_engine::spawn::Input::Terminal { cols: 91, rows: 17 },
        confine: confined(),
        ..Default::default()
    };
    let id = commands::start(&f.engine, argv, opts, f.ctx())
        .unwrap()
        .task_id;
    // The shell waits for its line: give it one.
    tokio::time::sleep(Duration::from_millis(300)).await;
    commands::write_input(&f.engine, f.host, &id, b"typed\r".to_vec(), false)
        .await
        .unwrap();
    let st = commands::await_settled(&f.engine, f.host, &id, Some(20_000.0))
        .await
        .unwrap();
    assert_eq!((st.exit_code, st.confined), (Some(0), true), "{st:?}");
    let out =
        bank::read_artifact(&f.engine.registry, &st.stdout.as_ref().unwrap().artifact_id).unwrap();
    let lines: Vec<&str> = out.split("\r\n").collect();
    let n = lines[0].strip_prefix("/dev/pts/").expect(&out);
    // Its own terminal, PID 1, and no other terminal in its /dev/pts.
    assert_eq!(&lines[1..4], ["17 91", "1", n], "{out:?}");
    assert!(out.contains("got typed"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_views_mounts_are_not_seen_outside() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let host_mounts = || std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let before = host_mounts();
    let argv = vec![
        "/bin/bash".into(),
        "-c".into(),
        "cut -d' ' -f5 /proc/self/mountinfo; sleep 1".into(),
    ];
    let opts = StartOptions {
        cwd: ".".into(),
        confine: confined(),
        ..Default::default()
    };
    let id = commands::start(&f.engine, argv, opts, f.ctx())
        .unwrap()
        .task_id;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = host_mounts();
    let st = commands::await_settled(&f.engine, f.host, &id, Some(20_000.0))
        .await
        .unwrap();
    let inside =
        bank::read_artifact(&f.engine.registry, &st.stdout.as_ref().unwrap().artifact_id).unwrap();
    // Inside: its own root, /usr, /proc, the write tree …
    for m in ["/", "/usr", "/proc", "/dev/shm"] {
        assert!(inside.lines().any(|l| l == m), "{m} in {inside}");
    }
    // … none of which shows in the host's namespace.
    assert_eq!(before, during);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_tmp_that_is_the_system_tmp_stays_writable() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let mut ctx = f.ctx();
    ctx.tmpdir = std::path::PathBuf::from("/tmp");
    let name = format!("nlc-shared-{}", std::process::id());
    let argv = vec![
        "/bin/bash".into(),
        "-c".into(),
        format!("echo s > /tmp/{name} && echo ok"),
    ];
    let opts = StartOptions {
        cwd: ".".into(),
        confine: Some(ConfinementInput {
            tmp: Some(neurolink_commands_engine::policy::confine::Tmp::Shared),
            ..Default::default()
        }),
        ..Default::default()
    };
    let id = commands::start(&f.engine, argv, opts, ctx).unwrap().task_id;
    let st = commands::await_settled(&f.engine, f.host, &id, Some(20_000.0))
        .await
        .unwrap();
    let made = Path::new("/tmp").join(&name);
    let text = std::fs::read_to_string(&made);
    let _ = std::fs::remove_file(&made);
    assert_eq!((st.exit_code, text.ok().as_deref()), (Some(0), Some("s\n")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlinked_hooks_directory_does_not_stop_the_start() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let root = f.root().to_path_buf();
    repo(&root);
    std::fs::remove_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir(root.join("shared-hooks")).unwrap();
    std::os::unix::fs::symlink("../shared-hooks", root.join(".git/hooks")).unwrap();
    // The link is pinned and the directory it names read-only; .git and its
    // config are protected as ever.
    let (st, out) = f
        .run(
            "mv .git g2; echo \"[x]\" >> .git/config; touch shared-hooks/x; echo ran",
            confined(),
        )
        .await;
    assert_eq!(st.exit_code, Some(0), "{out}");
    assert_eq!(out.matches("Read-only file system").count(), 2, "{out}");
    assert!(out.contains("busy") && out.starts_with("ran\n"), "{out}");
    assert!(root.join(".git").is_dir());
    assert!(!root.join("shared-hooks/x").exists());
}

/// The host's tree stays mounted beneath the view (unmounting it cost every
/// start an RCU grace period), so every way back to it is tried: the path
/// itself, `..` walks from the root and from a mount, `/proc/<pid>/root`,
/// an unmount of the view, `chroot`, a clone of the tree with `open_tree`,
/// a nested user and mount namespace, and the mount table. Each path that
/// reads the marker unconfined reads nothing confined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_tree_beneath_the_view_is_out_of_reach() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    // (`$$` is 1 in the view: its PID namespace's first process.)
    // A file of the host's that is not in the view (a sibling of the
    // fixture's root under the host's /tmp).
    let beneath = tempfile::tempdir_in("/tmp").unwrap();
    let marker = beneath.path().join("marker");
    std::fs::write(&marker, "host\n").unwrap();
    let m = marker.display();
    let paths = format!(
        "for p in {m} /..{m} /../..{m} /usr/..{m} /proc/$$/root{m} /proc/self/root{m} /proc/self/cwd/../../../../../..{m}; do cat $p 2>/dev/null || echo no; done"
    );
    let (st, out) = f.run(&paths, confined()).await;
    assert_eq!(
        (st.exit_code, out.as_str()),
        (Some(0), "no\n".repeat(7).as_str())
    );
    // Read "all" too: its view is the host's tree cloned read-only, with
    // /tmp a fresh tmpfs; the writable original stays out of reach.
    let all = Some(ConfinementInput {
        read: Some(ReadInput::All),
        ..Default::default()
    });
    let (st, out) = f.run(&paths, all.clone()).await;
    assert_eq!(
        (st.exit_code, out.as_str()),
        (Some(0), "no\n".repeat(7).as_str())
    );
    let (_, out) = f
        .run(
            "touch /usr/nlc-beneath 2>/dev/null; echo $?; touch /proc/$$/root/usr/nlc-beneath 2>/dev/null; echo $?",
            all,
        )
        .await;
    assert_eq!(out, "1\n1\n");
    assert!(!Path::new("/usr/nlc-beneath").exists());
    // Control: unconfined, every one of those paths reaches the file.
    let (_, out) = f.run(&paths, None).await;
    assert_eq!(out, "host\n".repeat(7));

    // Taking the view away, or cloning what lies under it: refused for lack
    // of a capability, where the same calls run unconfined.
    let script = r#"chroot / /bin/true 2>/dev/null; echo chroot=$?
unshare -Urm true 2>/dev/null; echo unshare=$?
python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(428, -100, b"/", 1 | 0x8000 | os.O_CLOEXEC)
print("open_tree clone", "made" if fd >= 0 else os.strerror(ctypes.get_errno()))
fd = libc.syscall(428, -100, b"/", os.O_CLOEXEC)
print("open_tree / is the root:", sorted(os.listdir("/proc/self/fd/%d" % fd)) == sorted(os.listdir("/")))
PY"#;
    let (st, out) = f.run(script, confined()).await;
    assert_eq!(
        (st.exit_code, out.as_str()),
        (
            Some(0),
            "chroot=125\nunshare=1\nopen_tree clone Operation not permitted\nopen_tree / is the root: True\n"
        )
    );
    let (_, out) = f.run(script, None).await;
    assert_eq!(
        out,
        "chroot=0\nunshare=0\nopen_tree clone made\nopen_tree / is the root: True\n"
    );
    // An unmount of the view's root or of a mount in it fails (no
    // capability; the control of that is the capability test's).
    let (_, out) = f
        .run(
            "umount -l / 2>/dev/null; echo $?; umount -l /usr 2>/dev/null; echo $?; ls /usr/bin/env; ls /proc/self/fd",
            confined(),
        )
        .await;
    // No descriptor into the host's tree either: the standard streams and
    // ls's own listing only.
    assert_eq!(out, "32\n32\n/usr/bin/env\n0\n1\n2\n3\n");

    // Its mount table lists the view only: one root, a tmpfs, none of the
    // host's mounts beneath it.
    let (_, out) = f
        .run(
            "awk '$5 == \"/\" { print $9 }' /proc/self/mountinfo",
            confined(),
        )
        .await;
    assert_eq!(out, "tmpfs\n");
}

/// A sandboxed command's mount namespace is held by the engine while the
/// command runs and let go once it has exited (so that its teardown is not
/// part of the command's exit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_views_namespace_is_held_while_it_runs_and_let_go_after() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let argv = vec![
        "/bin/bash".into(),
        "-c".into(),
        "readlink /proc/self/ns/mnt > ns.tmp && mv ns.tmp ns && sleep 1".into(),
    ];
    let opts = StartOptions {
        cwd: ".".into(),
        confine: confined(),
        ..Default::default()
    };
    let id = commands::start(&f.engine, argv, opts, f.ctx())
        .unwrap()
        .task_id;
    // The namespaces this test process holds open.
    let held = || -> Vec<String> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .map(|l| l.to_string_lossy().into_owned())
            .filter(|l| l.starts_with("mnt:["))
            .collect()
    };
    let mut ns = String::new();
    let mut during = Vec::new();
    for _ in 0..500 {
        if let Ok(t) = std::fs::read_to_string(f.root().join("ns")) {
            during = held();
            ns = t.trim_end().to_string();
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let st = commands::await_settled(&f.engine, f.host, &id, Some(20_000.0))
        .await
        .unwrap();
    assert_eq!(st.exit_code, Some(0), "{st:?}");
    assert!(ns.starts_with("mnt:["), "{ns}");
    assert!(during.contains(&ns), "{ns} held while it runs: {during:?}");
    let mut after = held();
    for _ in 0..500 {
        if !after.contains(&ns) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        after = held();
    }
    assert!(
        !after.contains(&ns),
        "{ns} let go after the exit: {after:?}"
    );
}

/// A submodule's git directory (`.git/modules/<name>`: its hooks and
/// config) and its checkout's gitfile are protected like the repository's
/// own: a configuration planted there would run when the user's `git
/// status` at the top recurses into the submodule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submodules_hooks_config_and_gitfile_cannot_be_planted() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let root = f.root().to_path_buf();
    let upstream = tempfile::tempdir().unwrap();
    assert!(git(upstream.path(), &["init", "-q", "-b", "main"])
        .status
        .success());
    assert!(git(
        upstream.path(),
        &["commit", "-q", "--allow-empty", "-m", "up"]
    )
    .status
    .success());
    repo(&root);
    let add = git(
        &root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            upstream.path().to_str().unwrap(),
            "sub",
        ],
    );
    assert!(add.status.success(), "{add:?}");
    assert!(git(&root, &["commit", "-qm", "sub"]).status.success());
    let fsmonitor = "printf '[core]\\n\\tfsmonitor = \"touch PLANTED; false\"\\n'";
    let plant = |how: &str| -> String {
        match how {
            "config" => format!("{fsmonitor} >> .git/modules/sub/config"),
            "hook" => format!("printf '{HOOK}' > .git/modules/sub/hooks/pre-commit && chmod +x .git/modules/sub/hooks/pre-commit"),
            "gitfile" => format!("cp -r .git/modules/sub evil && git config -f evil/config core.worktree ../sub && {fsmonitor} >> evil/config && echo 'gitdir: ../evil' > sub/.git"),
            _ => unreachable!(),
        }
    };
    let planted = || root.join("sub/PLANTED").exists() || root.join("PLANTED").exists();
    for how in ["config", "hook", "gitfile"] {
        let (st, out) = f.run(&plant(how), confined()).await;
        assert_ne!(st.exit_code, Some(0), "{how}: {out}");
        assert!(out.contains("Read-only file system"), "{how}: {out}");
        // The user's own git, at the top and in the submodule, runs nothing
        // planted.
        assert!(git(&root, &["status"]).status.success(), "{how}");
        let c = git(
            &root.join("sub"),
            &["commit", "-q", "--allow-empty", "-m", how],
        );
        assert!(c.status.success(), "{how}: {c:?}");
        assert!(!planted(), "{how}");
        // Control: at the "landlock" level the same planting succeeds and
        // the user's next status or commit runs it.
        let (st, out) = f.run(&plant(how), landlock_only()).await;
        assert_eq!(st.exit_code, Some(0), "{how}: {out}");
        git(&root, &["status"]);
        git(
            &root.join("sub"),
            &["commit", "-q", "--allow-empty", "-m", "control"],
        );
        assert!(planted(), "{how}: the control ran");
        // Undo it for the next way.
        for p in ["sub/PLANTED", "PLANTED"] {
            let _ = std::fs::remove_file(root.join(p));
        }
        let _ = std::fs::remove_dir_all(root.join("evil"));
        std::fs::write(root.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        let _ = std::fs::remove_file(root.join(".git/modules/sub/hooks/pre-commit"));
        let cfg = root.join(".git/modules/sub/config");
        let text = std::fs::read_to_string(&cfg).unwrap();
        let clean: String = text
            .split_inclusive('\n')
            .filter(|l| !l.contains("fsmonitor"))
            .collect();
        std::fs::write(&cfg, clean).unwrap();
    }
}

/// What the user's git reads: `core.fsmonitor` runs at `git status`, in the
/// repository's top.
const FSMONITOR: &str = "printf '[core]\\n\\tfsmonitor = \"touch PLANTED; false\"\\n'";

/// A repository at `dir` (made with its parents) with one commit.
fn repo_in(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    repo(dir);
}

/// A write tree holding repositories at every depth the sandbox looks at:
/// one at the top with a submodule at `libs/sub`, `app` (a child),
/// `packages/a` (two levels down), `x/y/z` (three). Returns the
/// submodule's upstream, which must outlive the tree.
fn repositories(root: &Path) -> tempfile::TempDir {
    let upstream = tempfile::tempdir().unwrap();
    repo(upstream.path());
    repo(root);
    let add = git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            upstream.path().to_str().unwrap(),
            "libs/sub",
        ],
    );
    assert!(add.status.success(), "{add:?}");
    assert!(git(root, &["commit", "-qm", "sub"]).status.success());
    for d in ["app", "packages/a", "x/y/z"] {
        repo_in(&root.join(d));
    }
    upstream
}

/// Lays out a fresh write tree; returns what must outlive it.
type Layout = fn(&Path) -> Option<tempfile::TempDir>;

/// Whether a `PLANTED` file exists anywhere in `dir`.
fn planted(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        e.file_name() == "PLANTED"
            || (e.file_type().unwrap().is_dir() && e.file_name() != ".git" && planted(&e.path()))
    })
}

/// The user's own git, unconfined, in each of `dirs` (those that are
/// repositories): a status and a commit.
fn users_git(root: &Path, dirs: &[&str]) {
    for d in dirs {
        let dir = root.join(d);
        if dir.is_dir() {
            git(&dir, &["status"]);
            git(&dir, &["commit", "-q", "--allow-empty", "-m", "user"]);
        }
    }
}

/// In a fresh tree laid out by `layout`, `plant` run confined fails with
/// `phrase`, and the user's git in `dirs` afterwards runs nothing planted.
/// Control: in another fresh tree the same `plant` at the `"landlock"`
/// level (no view, so nothing protected) succeeds, and the user's git runs
/// what it planted.
async fn refused_with_control(layout: Layout, plant: &str, phrase: &str, dirs: &[&str]) {
    let f = fixture();
    let _keep = layout(f.root());
    let (st, out) = f.run(plant, confined()).await;
    assert_ne!(st.exit_code, Some(0), "{plant}: {out}");
    assert!(out.contains(phrase), "{plant}: {out}");
    users_git(f.root(), dirs);
    assert!(!planted(f.root()), "{plant}: {out}");
    let c = fixture();
    let _keep = layout(c.root());
    let (st, out) = c.run(plant, landlock_only()).await;
    assert_eq!(st.exit_code, Some(0), "control {plant}: {out}");
    users_git(c.root(), dirs);
    assert!(planted(c.root()), "control {plant}: nothing ran");
}

const BUSY: &str = "Device or resource busy";
const READ_ONLY: &str = "Read-only file system";

/// A directory holding a protected path — a child repository's, a deeper
/// one's, a submodule's checkout, a submodule's git directory — cannot be
/// renamed away to leave a new `.git` (or gitfile) at its old name: every
/// directory from the write tree's top down to each protected path is a
/// mount point of itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_holding_a_repository_cannot_be_renamed_away() {
    if !sandbox_here() {
        return;
    }
    let dirs = ["", "app", "packages/a", "x/y/z", "libs/sub"];
    let layout: Layout = |r| Some(repositories(r));
    let ways = [
        format!("mv app app2 && mkdir app && git -C app init -q && {FSMONITOR} >> app/.git/config"),
        format!("mv app app2 && mkdir app && cp -r app2/.git evil && {FSMONITOR} >> evil/config && echo 'gitdir: ../evil' > app/.git"),
        format!("mv packages p2 && mkdir -p packages/a && git -C packages/a init -q && {FSMONITOR} >> packages/a/.git/config"),
        format!("mv packages/a packages/a2 && mkdir packages/a && git -C packages/a init -q && {FSMONITOR} >> packages/a/.git/config"),
        format!("mv x x2 && mkdir -p x/y/z && git -C x/y/z init -q && {FSMONITOR} >> x/y/z/.git/config"),
        format!("mv libs libs2 && mkdir -p libs/sub && git -C libs/sub init -q && {FSMONITOR} >> libs/sub/.git/config"),
        format!("mv libs/sub libs/sub2 && mkdir libs/sub && git -C libs/sub init -q && {FSMONITOR} >> libs/sub/.git/config"),
        format!("mv .git/modules/libs/sub .git/modules/libs/sub2 && cp -r .git/modules/libs/sub2 .git/modules/libs/sub && {FSMONITOR} >> .git/modules/libs/sub/config"),
        format!("mv .git/modules .git/m2 && cp -r .git/m2 .git/modules && {FSMONITOR} >> .git/modules/libs/sub/config"),
    ];
    for plant in &ways {
        refused_with_control(layout, plant, BUSY, &dirs).await;
    }
}

/// Repositories two and three levels down are protected like a child's: their
/// hooks and config are read-only and their `.git` pinned. Control in the
/// same confined run: a repository five levels down (past the depth looked
/// at) and one inside `node_modules` (not entered) stay writable, as
/// documented.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeper_repositories_are_protected_down_to_the_documented_depth() {
    if !sandbox_here() {
        return;
    }
    let dirs = ["packages/a", "x/y/z"];
    let layout: Layout = |r| Some(repositories(r));
    for d in dirs {
        for plant in [
            format!(
                "printf '{HOOK}' > {d}/.git/hooks/pre-commit && chmod +x {d}/.git/hooks/pre-commit"
            ),
            format!("{FSMONITOR} >> {d}/.git/config"),
        ] {
            refused_with_control(layout, &plant, READ_ONLY, &dirs).await;
        }
        let renamed =
            format!("mv {d}/.git {d}/g2 && git -C {d} init -q && {FSMONITOR} >> {d}/.git/config");
        refused_with_control(layout, &renamed, BUSY, &dirs).await;
    }
    // Past the limits, in a confined run.
    let f = fixture();
    let _keep = repositories(f.root());
    let deep = "d1/d2/d3/d4/d5";
    let modules = "node_modules/dep";
    repo_in(&f.root().join(deep));
    repo_in(&f.root().join(modules));
    let script = format!(
        "{FSMONITOR} >> {deep}/.git/config && {FSMONITOR} >> {modules}/.git/config && echo planted; {FSMONITOR} >> packages/a/.git/config"
    );
    let (st, out) = f.run(&script, confined()).await;
    assert_ne!(st.exit_code, Some(0));
    assert!(
        out.starts_with("planted\n") && out.contains(READ_ONLY),
        "{out}"
    );
    users_git(f.root(), &["packages/a"]);
    assert!(!planted(f.root()));
    users_git(f.root(), &[deep, modules]);
    assert!(f.root().join(deep).join("PLANTED").exists());
    assert!(f.root().join(modules).join("PLANTED").exists());
}

/// A protected path that is a symbolic link is pinned (it cannot be removed
/// or replaced) and what it names inside the write tree is protected in its
/// place: `.git/hooks` linked to a directory of the tree, `.git` linked to
/// a git directory elsewhere in the tree, `.git/config` linked to a file of
/// the tree, and `.git/hooks` or `.git` linked to a directory that does not
/// exist yet (made, empty and read-only, at the start).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_paths_that_are_links_cannot_be_planted_through() {
    if !sandbox_here() {
        return;
    }
    let hooks_link: Layout = |r| {
        repo(r);
        std::fs::remove_dir_all(r.join(".git/hooks")).unwrap();
        std::fs::create_dir(r.join("shared-hooks")).unwrap();
        std::os::unix::fs::symlink("../shared-hooks", r.join(".git/hooks")).unwrap();
        None
    };
    let git_link: Layout = |r| {
        repo_in(&r.join("app"));
        std::fs::create_dir(r.join("store")).unwrap();
        std::fs::rename(r.join("app/.git"), r.join("store/app.git")).unwrap();
        std::os::unix::fs::symlink("../store/app.git", r.join("app/.git")).unwrap();
        None
    };
    let config_link: Layout = |r| {
        repo(r);
        std::fs::rename(r.join(".git/config"), r.join("cfg")).unwrap();
        std::os::unix::fs::symlink("../cfg", r.join(".git/config")).unwrap();
        None
    };
    let dangling: Layout = |r| {
        repo(r);
        std::fs::remove_dir_all(r.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink("../later-hooks", r.join(".git/hooks")).unwrap();
        None
    };
    let dangling_git: Layout = |r| {
        repo_in(&r.join("app"));
        std::fs::create_dir(r.join("store")).unwrap();
        std::fs::remove_dir_all(r.join("app/.git")).unwrap();
        std::os::unix::fs::symlink("../store/app.git", r.join("app/.git")).unwrap();
        None
    };
    let hook = |d: &str| format!("printf '{HOOK}' > {d}/pre-commit && chmod +x {d}/pre-commit");
    let cases: Vec<(Layout, String, &str)> = vec![
        (hooks_link, hook("shared-hooks"), READ_ONLY),
        (hooks_link, format!("rm .git/hooks && mkdir .git/hooks && {}", hook(".git/hooks")), BUSY),
        (hooks_link, format!("mv shared-hooks sh2 && mkdir shared-hooks && {}", hook("shared-hooks")), BUSY),
        (git_link, hook("store/app.git/hooks"), READ_ONLY),
        (git_link, format!("{FSMONITOR} >> store/app.git/config"), READ_ONLY),
        (git_link, format!("rm app/.git && git -C app init -q && {FSMONITOR} >> app/.git/config"), BUSY),
        (git_link, format!("mv store store2 && mkdir store && cp -r store2/app.git store/ && {FSMONITOR} >> store/app.git/config"), BUSY),
        (git_link, format!("mv store/app.git store/a2 && cp -r store/a2 store/app.git && {FSMONITOR} >> store/app.git/config"), BUSY),
        (config_link, format!("{FSMONITOR} >> cfg"), READ_ONLY),
        (config_link, format!("rm .git/config && cp cfg .git/config && {FSMONITOR} >> .git/config"), BUSY),
        (dangling, format!("mkdir -p later-hooks && {}", hook("later-hooks")), READ_ONLY),
        (dangling_git, format!("git init -q t && {FSMONITOR} >> t/.git/config && mv -T t/.git store/app.git"), BUSY),
    ];
    for (layout, plant, phrase) in &cases {
        refused_with_control(*layout, plant, phrase, &["", "app"]).await;
    }
}

/// Add, commit, branch, checkout, merge, tag and stash keep working,
/// confined, in the repository at the top, a child, repositories two and
/// three levels down, and a submodule (its checkout on a branch of its own);
/// so does `git mv` within a repository's directory. With either read set,
/// the directory holding a repository stays pinned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_git_work_in_every_repository_of_the_tree() {
    if !sandbox_here() {
        return;
    }
    // With each read set: the protected paths are cloned from the view,
    // whose base differs (a tmpfs, or the clone of `/`).
    let all = Some(ConfinementInput {
        read: Some(ReadInput::All),
        ..Default::default()
    });
    for confine in [confined(), all] {
        let f = fixture();
        let _keep = repositories(f.root());
        let work = "G='git -c user.name=t -c user.email=t@t'; $G checkout -q -b w && echo b > b && $G add b && $G commit -qm two && $G branch x && $G checkout -q x && echo c > c && $G add c && $G commit -qm three && $G checkout -q w && $G merge -q x && $G tag v1 && echo d > d && $G add d && $G stash -q && $G stash pop -q && $G mv b b2 && $G commit -qam four && $G log --oneline | wc -l";
        let script = ["", "app", "packages/a", "x/y/z", "libs/sub"]
            .iter()
            .map(|d| format!("(cd ./{d} && {work}) &&"))
            .collect::<Vec<_>>()
            .join(" ")
            + " echo ok";
        let script = script + "; mv packages p2";
        let (st, out) = f.run(&script, confine).await;
        assert_eq!(
            (st.exit_code, out.as_str()),
            (
                Some(1),
                "5\n4\n4\n4\n4\nok\nmv: cannot move 'packages' to 'p2': Device or resource busy\n"
            ),
            "{script}"
        );
    }
}

/// The child checks each protected path's file type against what the
/// parent found: a path replaced by another kind between the look and the
/// view's mounts (here a directory found, a link there by the start) fails
/// the start with `ESTALE` instead of pinning the link and leaving what it
/// names writable. Control: the same view with the type it has starts.
#[test]
fn a_protected_path_of_another_kind_by_the_start_fails_it() {
    use neurolink_commands_engine::process::plan::{Grant, Plan, Protected};
    use neurolink_commands_engine::process::{sandbox::View, vfork};
    use std::os::fd::AsFd;
    use std::path::PathBuf;
    if !sandbox_here() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir(root.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", root.join(".git/hooks")).unwrap();
    let start = |kind: u32| {
        let plan = Plan {
            system: ["/usr", "/lib", "/lib64", "/bin"]
                .iter()
                .filter(|t| Path::new(t).exists())
                .map(|t| (PathBuf::from(t), Grant::Read))
                .collect(),
            rules: vec![(root.clone(), Grant::Write)],
            private_tmp: None,
            network: false,
            protect: vec![Protected {
                path: root.join(".git/hooks"),
                pin: false,
                kind,
            }],
            level: Level::Full,
        };
        let dir = std::fs::File::open(&root).unwrap();
        let view = View::prepare(&plan, dir.as_fd(), None).unwrap();
        vfork::probe(&view, dir.as_fd())
    };
    let e = start(libc::S_IFDIR).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ESTALE), "{e}");
    start(libc::S_IFLNK).unwrap();
}

/// Read `"all"` with the fixture's root writable, or with `write` (when
/// given) the write trees.
fn read_all(write: &[&Path]) -> Option<ConfinementInput> {
    read_all_with(write, false)
}

fn read_all_with(write: &[&Path], network: bool) -> Option<ConfinementInput> {
    Some(ConfinementInput {
        read: Some(ReadInput::All),
        write: (!write.is_empty()).then(|| {
            write
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect()
        }),
        network: network.then_some(true),
        ..Default::default()
    })
}

/// A directory visible in the read-`"all"` view (not under the private
/// `/tmp` or `/run`), and not a write tree.
fn outside_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/var/tmp").unwrap()
}

/// A Python script that tries a stream connect (sending a byte) to
/// `stream`, a datagram to `dgram`, and a stream connect through a symlink
/// `link` made in the command's directory, printing `ok` or the errno's
/// name for each.
fn attempts(stream: &Path, dgram: &Path, link: &str) -> String {
    format!(
        r#"python3 - <<'PY'
import errno, os, socket
def attempt(kind, path):
    try:
        if kind == "stream":
            s = socket.socket(socket.AF_UNIX); s.connect(path); s.send(b"x")
        else:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b"x", path)
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
print("stream", attempt("stream", "{d}"))
print("dgram", attempt("dgram", "{g}"))
os.symlink("{d}", "{link}")
print("link", attempt("stream", "{link}"))
PY"#,
        d = stream.display(),
        g = dgram.display(),
    )
}

const UNIX_NOTE_3: &str = "3 connection attempts to a unix socket outside the write trees were refused (a daemon's socket is not reachable from a confined command); to allow one, make the socket's directory a write tree with the policy's confine.write";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_all_reaches_no_daemon_socket_outside_the_write_trees() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let dir = outside_dir();
    let stream = dir.path().join("d.sock");
    let dgram = dir.path().join("g.sock");
    let l = UnixListener::bind(&stream).unwrap();
    l.set_nonblocking(true).unwrap();
    let g = std::os::unix::net::UnixDatagram::bind(&dgram).unwrap();
    g.set_nonblocking(true).unwrap();
    let nothing = |l: &UnixListener, g: &std::os::unix::net::UnixDatagram| {
        assert_eq!(
            l.accept().unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock
        );
        let mut b = [0u8; 8];
        assert_eq!(
            g.recv(&mut b).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock
        );
    };
    for (link, network) in [("l1", false), ("l2", true)] {
        let (st, out) = f
            .run(
                &attempts(&stream, &dgram, link),
                read_all_with(&[], network),
            )
            .await;
        assert!(st.confined);
        // Refused with EACCES — through the symlink in the write tree too:
        // the socket file decides, not the name — and counted.
        assert_eq!(out, "stream EACCES\ndgram EACCES\nlink EACCES\n");
        assert_eq!(st.confinement_notes, [UNIX_NOTE_3]);
        // Not one connection, not one byte.
        nothing(&l, &g);
    }
    // Controls: unconfined, and confined with the directory a write tree,
    // every attempt arrives (a connection and its byte, each, and the
    // datagram).
    for (i, confine) in [None, read_all(&[f.root(), dir.path()])]
        .into_iter()
        .enumerate()
    {
        let (st, out) = f
            .run(&attempts(&stream, &dgram, &format!("c{i}")), confine)
            .await;
        assert_eq!(out, "stream ok\ndgram ok\nlink ok\n", "{i}");
        assert_eq!(st.confinement_notes, Vec::<String>::new());
        l.set_nonblocking(false).unwrap();
        for _ in 0..2 {
            let (mut c, _) = l.accept().unwrap();
            let mut one = [0u8; 1];
            std::io::Read::read_exact(&mut c, &mut one).unwrap();
            assert_eq!(&one, b"x");
        }
        l.set_nonblocking(true).unwrap();
        let mut b = [0u8; 8];
        assert_eq!(g.recv(&mut b).unwrap(), 1);
        nothing(&l, &g);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_all_keeps_own_sockets_relative_paths_and_ipc_working() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let script = r#"python3 - <<'PY'
import os, socket, multiprocessing
def talk(c, server):
    a, _ = server.accept(); c.send(b"y"); return a.recv(1).decode()
os.mkdir("sub")
s = socket.socket(socket.AF_UNIX); s.bind("sub/own.sock"); s.listen(4)
c = socket.socket(socket.AF_UNIX); c.connect("sub/own.sock"); print("relative", talk(c, s))
os.chdir("sub")
c = socket.socket(socket.AF_UNIX); c.connect("../sub/own.sock"); print("dotdot", talk(c, s))
c = socket.socket(socket.AF_UNIX); c.connect(os.getcwd() + "/own.sock"); print("absolute", talk(c, s))
os.symlink("own.sock", "link.sock")
c = socket.socket(socket.AF_UNIX); c.connect("link.sock"); print("link", talk(c, s))
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind("own.dgram")
e = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); e.sendto(b"d", "own.dgram"); print("dgram", d.recv(1).decode())
t = os.path.join(os.environ["TMPDIR"], "t.sock")
u = socket.socket(socket.AF_UNIX); u.bind(t); u.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(t); print("tmpdir", talk(c, u))
name = "\0nlc-own-%d" % os.getpid()
v = socket.socket(socket.AF_UNIX); v.bind(name); v.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(name); print("abstract", talk(c, v))
a, b = socket.socketpair(); a.send(b"p"); print("pair", b.recv(1).decode())
import ctypes
# Not dumpable (as ssh-agent makes itself): the engine still reaches it.
assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0
c = socket.socket(socket.AF_UNIX); c.connect("own.sock"); print("undumpable", talk(c, s))
def sq(x): return x * x
if __name__ == "__main__":
    with multiprocessing.Pool(2) as p: print("pool", sum(p.map(sq, range(4))))
PY
node -e 'const {fork}=require("child_process"); const fs=require("fs"); fs.writeFileSync("c.js","process.send(\"ipc\")"); const c=fork("c.js"); c.on("message", m=>{console.log(m)})'"#;
    let (st, out) = f.run(script, read_all(&[])).await;
    eprintln!("{st:?}");
    assert_eq!(
        (st.exit_code, out.as_str()),
        (
            Some(0),
            "relative y\ndotdot y\nabsolute y\nlink y\ndgram d\ntmpdir y\nabstract y\npair p\nundumpable y\npool 14\nipc\n"
        )
    );
    assert_eq!(st.confinement_notes, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_all_tmux_server_outside_cannot_be_driven() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let dir = outside_dir();
    let sock = dir.path().join("tmux.sock");
    let ok = Command::new("tmux")
        .arg("-S")
        .arg(&sock)
        .args(["new", "-d", "sleep 60"])
        .status()
        .unwrap();
    assert!(ok.success());
    let script = |marker: &Path| {
        format!(
            "tmux -S {} run-shell 'touch {}'; echo $?",
            sock.display(),
            marker.display()
        )
    };
    let marker = dir.path().join("pwned");
    let (st, out) = f.run(&script(&marker), read_all(&[])).await;
    assert!(
        out.starts_with("1\n") && out.contains("Permission denied"),
        "{out}"
    );
    assert_eq!(st.confinement_notes.len(), 1, "{:?}", st.confinement_notes);
    // The server is still there (nothing removed its socket) and ran
    // nothing.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!marker.exists());
    assert!(sock.exists());
    // Controls: unconfined, and confined with its directory a write tree.
    for (name, confine) in [
        ("free", None),
        ("granted", read_all(&[f.root(), dir.path()])),
    ] {
        let marker = dir.path().join(name);
        let (_, out) = f.run(&script(&marker), confine).await;
        assert_eq!(out, "0\n", "{name}");
        for _ in 0..50 {
            if marker.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(marker.exists(), "{name}");
    }
    let _ = Command::new("tmux")
        .arg("-S")
        .arg(&sock)
        .arg("kill-server")
        .status();
}

/// A racer: one thread connects again and again with an address buffer
/// another thread keeps switching between the command's own socket and
/// the outside one (same length, so only the bytes change). Prints how
/// many connects reached the outside socket and the errnos other than EACCES seen besides ENOENT (a torn copy of
/// the switching bytes names no file) and ECONNREFUSED (which this loop
/// gets now and then unconfined too).
fn racer(own: &Path, outside: &Path, rounds: u32) -> String {
    format!(
        r#"python3 - <<'PY'
import ctypes, socket, sys, threading
# Switch threads as often as the interpreter can: the buffer changes
# while each connect runs.
sys.setswitchinterval(1e-6)
libc = ctypes.CDLL(None, use_errno=True)
own, out = b"{own}", b"{out}"
assert len(own) == len(out)
srv = socket.socket(socket.AF_UNIX); srv.bind(own); srv.listen(64); srv.setblocking(False)
buf = ctypes.create_string_buffer(110)
buf[0:2] = socket.AF_UNIX.to_bytes(2, "little")
stop = False
def flip():
    while not stop:
        ctypes.memmove(ctypes.addressof(buf) + 2, own, len(own))
        ctypes.memmove(ctypes.addressof(buf) + 2, out, len(out))
t = threading.Thread(target=flip); t.start()
counts = {{"own": 0, "out": 0}}
other = set()
for _ in range({rounds}):
    s = socket.socket(socket.AF_UNIX)
    if libc.connect(s.fileno(), buf, 110) == 0:
        counts["own" if s.getpeername() == own.decode() else "out"] += 1
    elif ctypes.get_errno() != 13:
        other.add(ctypes.get_errno())
    s.close()
    try:
        while True: srv.accept()[0].close()
    except BlockingIOError: pass
stop = True; t.join()
print(counts["out"], sorted(other - {{2, 111}}))
PY"#,
        own = own.display(),
        out = outside.display(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_all_a_racer_rewriting_the_address_never_reaches_outside() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let dir = outside_dir();
    // Two paths of one length: the command's own socket in its root, the
    // outside one padded to the same length.
    let own_dir = f.root().join("r");
    std::fs::create_dir(&own_dir).unwrap();
    let own = own_dir.join("own.sock");
    let base = dir.path().as_os_str().len() + 1;
    assert!(own.as_os_str().len() > base, "{}", own.display());
    let outside = dir.path().join("x".repeat(own.as_os_str().len() - base));
    let l = UnixListener::bind(&outside).unwrap();
    l.set_nonblocking(true).unwrap();
    for _ in 0..5 {
        let _ = std::fs::remove_file(&own);
        let (st, out) = f.run(&racer(&own, &outside, 400), read_all(&[])).await;
        assert_eq!(out, "0 []\n", "{:?}", st.confinement_notes);
        assert_eq!(
            l.accept().unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock
        );
    }
    // Control: unconfined the same racer reaches the outside socket.
    let _ = std::fs::remove_file(&own);
    let (_, out) = f.run(&racer(&own, &outside, 2000), None).await;
    let reached: u32 = out.split(' ').next().unwrap().parse().unwrap();
    assert!(reached > 0, "{out}");
    assert!(l.accept().is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_all_keeps_the_network_rules_and_the_abstract_scope() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let name = format!("nlc-test-all-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let abs = UnixListener::bind_addr(&addr).unwrap();
    abs.set_nonblocking(true).unwrap();
    let script = format!(
        r#"python3 - <<'PY'
import errno, socket
def attempt(family, to):
    try:
        s = socket.socket(family); s.connect(to); return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
print("inet", attempt(socket.AF_INET, ("127.0.0.1", {port})))
print("abstract", attempt(socket.AF_UNIX, "\0{name}"))
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
# io_uring_setup: a ring's connects would pass no filter.
ring = libc.syscall(425, 1, params)
print("uring", "ok" if ring >= 0 else errno.errorcode[ctypes.get_errno()])
PY"#
    );
    // Network off: the socket is refused (and counted), the host's
    // abstract socket is out of Landlock's scope.
    let (st, out) = f.run(&script, read_all(&[])).await;
    assert_eq!(out, "inet EACCES\nabstract EPERM\nuring EACCES\n");
    assert_eq!(
        st.confinement_notes,
        ["network is off: 1 connection attempt was refused (a confined command may open unix sockets only); allow network with the policy's confine.network: true"]
    );
    assert!(tcp.accept().is_err() && abs.accept().is_err());
    // Network on: the TCP connect is made (by the engine, on the command's
    // socket), the abstract one still refused.
    let (st, out) = f.run(&script, read_all_with(&[], true)).await;
    assert_eq!(out, "inet ok\nabstract EPERM\nuring EACCES\n");
    assert_eq!(st.confinement_notes, Vec::<String>::new());
    assert!(tcp.accept().is_ok() && abs.accept().is_err());
    // Control: unconfined both connect.
    let (_, out) = f.run(&script, None).await;
    assert_eq!(out, "inet ok\nabstract ok\nuring ok\n");
    assert!(tcp.accept().is_ok() && abs.accept().is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_all_in_a_terminal_reaches_no_daemon_socket_either() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let dir = outside_dir();
    let stream = dir.path().join("d.sock");
    let l = UnixListener::bind(&stream).unwrap();
    l.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\")' 2>&1 | tail -1",
        stream.display()
    );
    let start = |confine| {
        let opts = StartOptions {
            cwd: ".".into(),
            input: neurolink_commands_engine::spawn::Input::Terminal { cols: 80, rows: 24 },
            confine,
            ..Default::default()
        };
        let argv = vec!["/bin/bash".into(), "-c".into(), script.clone()];
        commands::start(&f.engine, argv, opts, f.ctx())
            .unwrap()
            .task_id
    };
    for (confine, want) in [
        (
            read_all(&[]),
            "PermissionError: [Errno 13] Permission denied\r\n",
        ),
        (None, ""),
    ] {
        let id = start(confine);
        let st = commands::await_settled(&f.engine, f.host, &id, Some(20_000.0))
            .await
            .unwrap();
        let out = bank::read_artifact(&f.engine.registry, &st.stdout.as_ref().unwrap().artifact_id)
            .unwrap();
        assert_eq!(out, want);
    }
    // Only the unconfined control's connection arrived.
    assert!(l.accept().is_ok());
    assert_eq!(
        l.accept().unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
}

/// `mount` with these arguments, which must succeed.
fn mount(args: &[&str]) {
    let ok = Command::new("mount").args(args).status().unwrap();
    assert!(ok.success(), "mount {args:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_all_sees_no_mount_the_host_makes_later() {
    if !sandbox_here() {
        return;
    }
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Making a shared mount on the host takes root: as another user
        // there is no host mount to propagate, which is what this checks.
        return;
    }
    let f = fixture();
    let dir = outside_dir();
    let d = dir.path().to_str().unwrap().to_string();
    let m = format!("{d}/m");
    std::fs::create_dir(&m).unwrap();
    // A shared mount, as systemd makes `/` on most hosts: what the host
    // mounts below it propagates to every mount namespace copied from it.
    mount(&["--bind", &d, &d]);
    mount(&["--make-shared", &d]);
    let script = format!(
        r#"touch ready; while [ ! -e go ]; do sleep 0.01; done
stat -f -c %T {m}; touch {m}/w 2>/dev/null && echo wrote
python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("{m}/s.sock"); print("connected")' 2>&1 | tail -1"#
    );
    let mut outs = Vec::new();
    for confine in [read_all(&[]), None] {
        for name in ["go", "ready"] {
            let _ = std::fs::remove_file(f.root().join(name));
        }
        let argv = vec!["/bin/bash".into(), "-c".into(), script.clone()];
        let opts = StartOptions {
            cwd: ".".into(),
            confine,
            ..Default::default()
        };
        let id = commands::start(&f.engine, argv, opts, f.ctx())
            .unwrap()
            .task_id;
        // Mounted once the command runs, a tmpfs holding a daemon's socket.
        for _ in 0..1000 {
            if f.root().join("ready").exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(f.root().join("ready").exists());
        mount(&["-t", "tmpfs", "tmpfs", &m]);
        let l = UnixListener::bind(format!("{m}/s.sock")).unwrap();
        std::fs::write(f.root().join("go"), "").unwrap();
        let st = commands::await_settled(&f.engine, f.host, &id, Some(20_000.0))
            .await
            .unwrap();
        let out = bank::read_artifact(&f.engine.registry, &st.stdout.as_ref().unwrap().artifact_id)
            .unwrap();
        l.set_nonblocking(true).unwrap();
        outs.push((out, l.accept().is_ok()));
        drop(l);
        mount_undo(&m);
    }
    mount_undo(&d);
    // Confined: the directory as it was (read-only, no socket in it).
    assert!(!outs[0].0.starts_with("tmpfs"), "{:?}", outs[0]);
    assert!(
        !outs[0].0.contains("wrote") && outs[0].0.contains("FileNotFoundError"),
        "{:?}",
        outs[0]
    );
    assert!(!outs[0].1);
    // Control: unconfined the new mount is there.
    assert_eq!(outs[1], ("tmpfs\nwrote\nconnected\n".to_string(), true));
}

fn mount_undo(at: &str) {
    let ok = Command::new("umount").arg(at).status().unwrap();
    assert!(ok.success(), "umount {at}");
}

/// A racer that swaps the descriptor: one thread connects descriptor `N`
/// to the outside socket's path again and again, another keeps switching
/// `N` between a TCP socket and a unix one (`dup2`). A supervisor that let
/// a connect on a TCP socket continue would have the kernel look `N` up
/// again — and find the unix socket. Prints how many connects succeeded.
fn swapper(outside: &Path, rounds: u32) -> String {
    format!(
        r#"python3 - <<'PY'
import ctypes, os, socket, sys, threading, time
sys.setswitchinterval(1e-6)
libc = ctypes.CDLL(None, use_errno=True)
addr = (socket.AF_UNIX.to_bytes(2, "little") + b"{out}").ljust(110, b"\0")
buf = ctypes.create_string_buffer(addr, 110)
def pair():
    return [socket.socket(socket.AF_INET), socket.socket(socket.AF_UNIX)]
cur = pair()
N = os.dup(cur[0].fileno())
stop = False
def swap():
    while not stop:
        i, u = cur
        try:
            os.dup2(i.fileno(), N); os.dup2(u.fileno(), N)
        except OSError:
            pass  # closed by the main thread meanwhile
t = threading.Thread(target=swap); t.start()
made = 0
for _ in range({rounds}):
    made += libc.connect(N, buf, 110) == 0
    old = cur[:]
    cur[:] = pair()
    for s in old: s.close()
    time.sleep(0)  # let the swapper take up the new pair
stop = True; t.join()
print(made)
PY"#,
        out = outside.display(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_all_a_racer_swapping_the_descriptor_never_reaches_outside() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let dir = outside_dir();
    let outside = dir.path().join("d.sock");
    let l = UnixListener::bind(&outside).unwrap();
    l.set_nonblocking(true).unwrap();
    // Network on (without it, no TCP socket is made at all).
    for _ in 0..3 {
        let (_, out) = f
            .run(&swapper(&outside, 400), read_all_with(&[], true))
            .await;
        assert_eq!(out, "0\n");
        assert_eq!(
            l.accept().unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock
        );
    }
    // Control: unconfined the same racer reaches the outside socket.
    let (_, out) = f.run(&swapper(&outside, 2000), None).await;
    let made: u32 = out.trim().parse().unwrap();
    assert!(made > 0, "{out}");
    assert!(l.accept().is_ok());
}
