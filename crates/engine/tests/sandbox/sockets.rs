//! Unix sockets under the default read set: a daemon's socket (pathname,
//! abstract, a tmux server's) is out of reach, the command's own sockets,
//! socket pairs and shared memory work.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::UnixListener;
use std::time::Duration;

use neurolink_commands_engine::policy::confine::{ConfinementInput, ReadInput};

use super::{confined, fixture, sandbox_here, TmuxServer};

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
    let _server = TmuxServer::start(&sock);
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
}
