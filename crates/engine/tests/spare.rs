//! Log directories made ahead (`jobs::spare`): after a start the next
//! directories are made off the caller's thread, exactly as a start makes
//! one (0700, the writer named in its attribute, both logs 0600, under the
//! task id the next command gets); the next start takes one, its output
//! lands in it in full; the spares are never used under another log
//! directory; and the exit cleanup leaves none behind. One test in its own
//! binary: the pool and the log settings are process-wide, and the exit
//! cleanup closes the pool.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use neurolink_commands_engine::commands::{self, StartOptions};
use neurolink_commands_engine::jobs::{retention, spare};
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::text::logfile;

mod common;

fn task_dirs(base: &Path) -> BTreeSet<String> {
    std::fs::read_dir(base)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('c'))
                .collect()
        })
        .unwrap_or_default()
}

/// Wait until `f` holds (the spares are made on another thread).
fn eventually(what: &str, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spares_are_made_ahead_taken_in_order_and_removed_at_exit() {
    let f = common::fixture(PolicyInput {
        allowed_executables: vec!["/bin/sh".into()],
        ..Default::default()
    });
    let base = f.logs.path().join("neurolink-commands");
    let run = |script: &str| {
        let argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
        commands::start(
            &f.engine,
            argv,
            StartOptions {
                cwd: ".".into(),
                ..Default::default()
            },
            f.ctx(),
        )
        .unwrap()
        .task_id
    };

    // A command's stdout, read back through the checked open of every log.
    let stdout_of = |id: &str| {
        let page = commands::read_output(
            &f.engine,
            f.host,
            id,
            neurolink_commands_engine::capture::Stream::Stdout,
            neurolink_commands_engine::paging::Window {
                offset: 0,
                limit: 100,
                from_end: false,
            },
        )
        .unwrap();
        String::from_utf16(&page.content).unwrap()
    };

    // The first start makes its own directory; then the spares follow.
    let first = run("echo one");
    assert_eq!(
        commands::await_settled(&f.engine, f.host, &first, None)
            .await
            .unwrap()
            .state
            .as_str(),
        "exited"
    );
    // A spare's directory exists a moment before its files: wait for both.
    let complete = |dir: &Path| std::fs::read_dir(dir).is_ok_and(|d| d.count() == 2);
    eventually("the spares", || {
        let dirs = task_dirs(&base);
        dirs.len() == 1 + spare::KEEP && dirs.iter().all(|n| complete(&base.join(n)))
    });
    let spares: Vec<String> = task_dirs(&base)
        .into_iter()
        .filter(|n| *n != first)
        .collect();
    for s in &spares {
        let dir = base.join(s);
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700,
            "{s}"
        );
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["stderr.log", "stdout.log"], "{s}");
        let held = rustix::fs::open(
            &dir,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let mut writer = [0u8; 64];
        let n = rustix::fs::fgetxattr(&held, logfile::WRITER_XATTR, &mut writer[..]).unwrap();
        assert_eq!(&writer[..n], logfile::own_marker().as_bytes(), "{s}");
        for log in ["stdout.log", "stderr.log"] {
            let m = std::fs::symlink_metadata(dir.join(log)).unwrap();
            assert!(m.file_type().is_file() && m.len() == 0, "{s}/{log}");
            assert_eq!(m.permissions().mode() & 0o777, 0o600, "{s}/{log}");
        }
    }

    // The next start takes the oldest spare: its task id is that
    // directory's name, and its output is there in full.
    let second = run("printf two; printf err >&2");
    let oldest = spares
        .iter()
        .min_by_key(|n| n[1..n.len() - 12].parse::<u64>().unwrap())
        .unwrap();
    assert_eq!(&second, oldest);
    let st = commands::await_settled(&f.engine, f.host, &second, None)
        .await
        .unwrap();
    assert_eq!((st.stdout_bytes, st.stderr_bytes), (3.0, 3.0));
    assert_eq!(
        std::fs::read_to_string(base.join(&second).join("stdout.log")).unwrap(),
        "two"
    );
    assert_eq!(
        std::fs::read_to_string(base.join(&second).join("stderr.log")).unwrap(),
        "err"
    );
    assert_eq!(stdout_of(&second), "two");

    // Spares whose directories were deleted since (the log directory
    // emptied under a running host) are not taken: the start makes its own
    // directory, and its output reads back.
    eventually("the spares again", || {
        let dirs = task_dirs(&base);
        dirs.len() == 2 + spare::KEEP && dirs.iter().all(|n| complete(&base.join(n)))
    });
    let deleted: BTreeSet<String> = task_dirs(&base)
        .into_iter()
        .filter(|n| *n != first && *n != second)
        .collect();
    assert_eq!(deleted.len(), spare::KEEP);
    for d in &deleted {
        std::fs::remove_dir_all(base.join(d)).unwrap();
    }
    let after_delete = run("printf kept");
    assert!(
        !deleted.contains(&after_delete),
        "{after_delete} was a deleted spare"
    );
    commands::await_settled(&f.engine, f.host, &after_delete, None)
        .await
        .unwrap();
    assert_eq!(stdout_of(&after_delete), "kept");

    // Under another log directory the spares are not used (and go).
    let other = tempfile::tempdir().unwrap();
    let other_dir = other.path().join("logs");
    f.engine
        .retention
        .configure(
            retention::LogOptions {
                dir: Some(Some(other_dir.to_str().unwrap().into())),
                ..Default::default()
            },
            f.logs.path(),
            &f.engine.registry,
        )
        .unwrap();
    let third = run("echo three");
    commands::await_settled(&f.engine, f.host, &third, None)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(other_dir.join(&third).join("stdout.log")).unwrap(),
        "three\n"
    );
    assert!(!base.join(&third).exists());
    eventually("the old base's spares to go", || {
        task_dirs(&base) == BTreeSet::from([first.clone(), second.clone(), after_delete.clone()])
    });
    eventually("spares under the new base", || {
        task_dirs(&other_dir).len() == 1 + spare::KEEP
    });

    // The process exits: no spare stays; the commands' own directories do
    // (removeOnExit is off).
    f.engine.spares.close();
    f.engine.retention.exit_cleanup(&f.engine.registry);
    assert_eq!(task_dirs(&other_dir), BTreeSet::from([third.clone()]));
    assert_eq!(
        task_dirs(&base),
        BTreeSet::from([first, second, after_delete])
    );
    // And none is made after that.
    let fourth = run("echo four");
    commands::await_settled(&f.engine, f.host, &fourth, None)
        .await
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(task_dirs(&other_dir), BTreeSet::from([third, fourth]));
}
