//! The view a sandboxed command sees: read-only outside its write trees
//! (metadata too), its own mounts unseen by the host and the host's later
//! mounts unseen by it, the host's tree beneath it out of reach, and its
//! mount namespace held by the engine only while it runs.

use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use neurolink_commands_engine::bank;
use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::policy::confine::{ConfinementInput, ReadInput};

use super::{confined, fixture, outside_dir, read_all, sandbox_here};

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
async fn the_views_mounts_are_not_seen_outside() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let host_mounts = || std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let before = host_mounts();
    let id = f.bash(
        "cut -d' ' -f5 /proc/self/mountinfo; sleep 1",
        StartOptions {
            confine: confined(),
            ..Default::default()
        },
    );
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
    let id = f.bash(
        "readlink /proc/self/ns/mnt > ns.tmp && mv ns.tmp ns && sleep 1",
        StartOptions {
            confine: confined(),
            ..Default::default()
        },
    );
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
        let id = f.bash(
            &script,
            StartOptions {
                confine,
                ..Default::default()
            },
        );
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
