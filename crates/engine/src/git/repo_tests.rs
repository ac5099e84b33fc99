//! End-to-end checks against real repositories: every configuration hook
//! that could start a program is pointed at a script that leaves a marker
//! file, every tool is run through the hardened argv and environment, and
//! no marker may appear. Counter-checks show that without the overrides
//! markers do appear, so these tests can fail.
//!
//! The shared [`Fixture`] (a private home, marker and script directories,
//! plain and hardened git runs) is here; the themes are in submodules:
//! [`hostile_repo`] builds the repository whose configuration names a
//! program at every hook, [`configured_programs`] runs every tool over it
//! with and without the overrides, and [`fail_closed`] covers what must
//! refuse rather than run: a lazy fetch from a partial clone, and
//! configuration that cannot be listed or overridden.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::*;

mod configured_programs;
mod fail_closed;
mod hostile_repo;

const GIT: &str = "git";

/// A temporary home, marker directory, script directory and repositories.
struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
    markers: PathBuf,
    bin: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        let markers = base.join("markers");
        let bin = base.join("bin");
        for d in [&home, &markers, &bin] {
            fs::create_dir_all(d).unwrap();
        }
        Fixture {
            _dir: dir,
            base,
            home,
            markers,
            bin,
        }
    }

    /// A script that leaves the marker `name`, then runs `body`.
    fn script(&self, name: &str, body: &str) -> String {
        let path = self.bin.join(name);
        let marker = self.markers.join(name);
        fs::write(
            &path,
            format!("#!/bin/sh\n: > '{}'\n{body}\n", marker.display()),
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    fn markers(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.markers)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn clear_markers(&self) {
        for entry in fs::read_dir(&self.markers).unwrap() {
            fs::remove_file(entry.unwrap().path()).unwrap();
        }
    }

    /// The replaced environment of the tools, with this fixture's home.
    fn env(&self) -> Vec<(String, String)> {
        let path = std::env::var("PATH").ok();
        git_env(path.as_deref(), Some(self.home.to_str().unwrap()))
    }

    /// Plain git for building fixtures (not hardened, no system config).
    fn setup_git(&self, dir: &Path, args: &[&str]) -> String {
        let out = Command::new(GIT)
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LANG", "C")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "setup git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string()
    }

    fn setup_git_stdin(&self, dir: &Path, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut child = Command::new(GIT)
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "setup git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn init_repo(&self, dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        self.setup_git(dir, &["-c", "init.defaultBranch=main", "init", "-q"]);
        self.setup_git(dir, &["config", "user.name", "Test"]);
        self.setup_git(dir, &["config", "user.email", "test@example.invalid"]);
        self.setup_git(dir, &["config", "commit.gpgsign", "false"]);
        self.setup_git(dir, &["config", "tag.gpgsign", "false"]);
    }

    /// Run a hardened argv exactly as the tools are run.
    fn run(&self, dir: &Path, argv: &[String]) -> Output {
        Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(dir)
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Run `tool` with `params` through [`tool_args`], [`driver_overrides`]
    /// and [`full_argv_with_overrides`].
    fn run_tool(&self, root: &Path, tool: GitTool, params: &Value) -> (Vec<String>, Output) {
        let args = tool_args(tool, params, root).unwrap();
        let overrides = driver_overrides(GIT, root, &self.env(), Duration::from_secs(60)).unwrap();
        let argv = full_argv_with_overrides(GIT, &overrides, &args);
        let out = self.run(root, &argv);
        (argv, out)
    }
}
