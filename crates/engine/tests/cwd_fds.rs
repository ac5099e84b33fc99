//! The cwd check opens the directory, the permitted root and the directory
//! again beneath the root. Whichever of those opens finds the process out of
//! file descriptors, the refusal says so (`NLC_IO`, naming the fix), never
//! that the directory is outside the root. One test in its own binary: it
//! lowers this process's descriptor limit and fills it.

use std::fs::File;

use neurolink_commands_engine::policy::cwd;
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Open /dev/null until the limit refuses, and keep them all.
fn fill() -> Vec<File> {
    let mut held = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(f) => held.push(f),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc::EMFILE), "{e}");
                return held;
            }
        }
    }
}

#[test]
fn every_open_of_the_cwd_check_that_runs_out_of_descriptors_says_so() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("sub")).unwrap();
    let root = root.path().to_str().unwrap().to_string();
    // The control: with descriptors to spare the check passes.
    assert!(cwd::enter(&root, "sub").is_ok());

    let limit = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(128),
            maximum: limit.maximum,
        },
    )
    .unwrap();
    // With 0, 1 and 2 descriptors free, the first, second and third open of
    // the check is the one refused.
    for free in 0..3 {
        let mut held = fill();
        held.truncate(held.len() - free);
        let e = cwd::enter(&root, "sub").unwrap_err();
        let message = e.to_string();
        assert_eq!(e.code(), "NLC_IO", "{free} free: {message}");
        assert!(
            message.starts_with("cwd \"sub\" could not be opened: ")
                && message.contains("The host process has run out of file descriptors"),
            "{free} free: {message}"
        );
        drop(held);
    }
    // Three free: all three opens succeed (the check keeps one of them).
    let mut held = fill();
    held.truncate(held.len() - 3);
    let dir = cwd::enter(&root, "sub").unwrap();
    assert!(dir.real.ends_with("sub"));
    drop((dir, held));
    setrlimit(Resource::Nofile, limit).unwrap();
}
