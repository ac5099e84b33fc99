//! The namespace sandbox of the `"full"` confinement level (SPEC §8), with
//! real processes, real sockets, real repositories: each refused action is
//! paired with the same action run unconfined (or at the `"landlock"`
//! level), which succeeds. Linux only: the sandbox is Linux's.
//!
//! One test binary, by theme: the view and its mounts ([`view`]), the
//! command as a process ([`process`]), everyday tools ([`tools`]), unix
//! sockets under the default view ([`sockets`]) and under read `"all"`,
//! where the engine mediates every connect ([`mediation`]), one
//! repository's protected paths ([`git`]) and every repository of the
//! tree ([`repositories`]). The helpers they share are here.
#![cfg(target_os = "linux")]

use std::path::Path;

use neurolink_commands_engine::commands::StartOptions;
use neurolink_commands_engine::policy::confine::{ConfinementInput, ReadInput};
use neurolink_commands_engine::policy::PolicyInput;
use neurolink_commands_engine::process::confine::{self as kernel, Level};
use neurolink_commands_engine::record::Status;

#[path = "../common/mod.rs"]
mod common;
use common::Fixture;

mod git;
mod mediation;
mod process;
mod repositories;
mod sockets;
mod tools;
mod view;

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
        self.bash_within(script, confine, 60_000.0).await
    }

    fn root(&self) -> &Path {
        self.root.path()
    }

    /// Starts `bash -c script` with `opts`: its task id.
    fn bash(&self, script: &str, opts: StartOptions) -> String {
        self.start(&["/bin/bash", "-c", script], opts).unwrap()
    }
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

/// A tmux server listening on `sock` (a daemon a command could drive
/// through its socket), ended when dropped, a failed test's too.
struct TmuxServer(std::path::PathBuf);

impl TmuxServer {
    fn start(sock: &Path) -> TmuxServer {
        let ok = std::process::Command::new("tmux")
            .arg("-S")
            .arg(sock)
            .args(["new", "-d", "sleep 60"])
            .status()
            .unwrap();
        assert!(ok.success());
        TmuxServer(sock.to_path_buf())
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.0)
            .arg("kill-server")
            .status();
    }
}

/// A directory visible in the read-`"all"` view (not under the private
/// `/tmp` or `/run`), and not a write tree.
fn outside_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/var/tmp").unwrap()
}
