//! Unix sockets under read `"all"`, where the host's tree is in the view:
//! the engine makes every connect and send itself, reaching only sockets
//! on a writable mount of the view, so a daemon's socket stays out of
//! reach (racers rewriting the address or swapping the descriptor
//! included), the command's own sockets and IPC work, and the network
//! rules and the abstract-socket scope still hold.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use neurolink_commands_engine::bank;
use neurolink_commands_engine::commands::{self, StartOptions};

use super::{fixture, outside_dir, read_all, read_all_with, sandbox_here, TmuxServer};

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
    let _server = TmuxServer::start(&sock);
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
        f.bash(
            &script,
            StartOptions {
                input: neurolink_commands_engine::spawn::Input::Terminal { cols: 80, rows: 24 },
                confine,
                ..Default::default()
            },
        )
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
