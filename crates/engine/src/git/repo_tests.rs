//! End-to-end checks against real repositories: every configuration hook
//! that could start a program is pointed at a script that leaves a marker
//! file, every tool is run through the hardened argv and environment, and
//! no marker may appear. Counter-checks show that without the overrides
//! markers do appear, so these tests can fail.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use super::*;

const GIT: &str = "git";

/// Hooks a repository could carry; each one leaves a marker if it ever runs.
const HOOKS: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "post-index-change",
];

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

/// Write a commit that carries a signature block of the given armour.
fn signed_looking_commit(fx: &Fixture, root: &Path, begin: &str, end: &str) -> String {
    let head = fx.setup_git(root, &["cat-file", "commit", "HEAD"]);
    let mut text = String::new();
    for line in head.lines() {
        text.push_str(line);
        text.push('\n');
        if line.starts_with("committer ") {
            text.push_str(&format!("gpgsig {begin}\n \n AAAAAAAA\n {end}\n"));
        }
    }
    text.push('\n');
    fx.setup_git_stdin(
        root,
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        &text,
    )
}

/// The main fixture: a repository with filtered and textconv'd files, a
/// deleted file, signed-looking commits and tags, a dirty submodule, and
/// (after setup) hostile configuration pointing every hook at a marker.
fn hostile_repo(fx: &Fixture) -> PathBuf {
    let root = fx.base.join("repo");
    fx.init_repo(&root);
    fs::write(root.join("a.txt"), "alpha\nbeta\n").unwrap();
    fs::write(root.join("p.txt"), "process me\n").unwrap();
    fs::write(root.join("b.g"), "global one\n").unwrap();
    fs::write(root.join("w.odd"), "odd one\n").unwrap();
    fs::write(root.join("README"), "readme\n").unwrap();
    fs::write(root.join("old.txt"), "soon gone\n").unwrap();
    fs::write(
        root.join(".gitattributes"),
        "*.txt filter=evilf diff=evild\np.txt filter=procf diff=evild\n*.g filter=globalf diff=globald\n*.odd filter=My.Odd\n",
    )
    .unwrap();
    fx.setup_git(&root, &["add", "."]);
    fx.setup_git(&root, &["commit", "-qm", "one"]);
    fs::write(root.join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    fx.setup_git(&root, &["rm", "-q", "old.txt"]);
    fx.setup_git(&root, &["commit", "-qam", "two"]);

    // A submodule with its own filter and diff drivers.
    let sub = fx.base.join("sub");
    fx.init_repo(&sub);
    fs::write(sub.join("s.txt"), "hello\n").unwrap();
    fs::write(sub.join(".gitattributes"), "*.txt filter=subf diff=subd\n").unwrap();
    fx.setup_git(&sub, &["add", "."]);
    fx.setup_git(&sub, &["commit", "-qm", "sub one"]);
    let sub_path = sub.display().to_string();
    fx.setup_git(
        &root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &sub_path,
            "sm",
        ],
    );
    fx.setup_git(&root, &["commit", "-qm", "three"]);
    let sm = root.join("sm");
    fx.setup_git(&sm, &["config", "user.name", "Test"]);
    fx.setup_git(&sm, &["config", "user.email", "test@example.invalid"]);
    fs::write(sm.join("t.txt"), "moved on\n").unwrap();
    fx.setup_git(&sm, &["add", "t.txt"]);
    fx.setup_git(&sm, &["commit", "-qm", "sub two"]);

    // Signed-looking commits, a merge carrying a signed-looking tag, a signed-looking tag.
    for (branch, begin, end) in [
        (
            "signed-pgp",
            "-----BEGIN PGP SIGNATURE-----",
            "-----END PGP SIGNATURE-----",
        ),
        (
            "signed-ssh",
            "-----BEGIN SSH SIGNATURE-----",
            "-----END SSH SIGNATURE-----",
        ),
        (
            "signed-x509",
            "-----BEGIN SIGNED MESSAGE-----",
            "-----END SIGNED MESSAGE-----",
        ),
    ] {
        let id = signed_looking_commit(fx, &root, begin, end);
        fx.setup_git(&root, &["update-ref", &format!("refs/heads/{branch}"), &id]);
    }
    let head = fx.setup_git(&root, &["rev-parse", "HEAD"]);
    let parent = fx.setup_git(&root, &["rev-parse", "HEAD~1"]);
    let tree = fx.setup_git(&root, &["rev-parse", "HEAD^{tree}"]);
    let signature = "-----BEGIN PGP SIGNATURE-----\n\nAAAAAAAA\n-----END PGP SIGNATURE-----\n";
    let tag = format!(
        "object {head}\ntype commit\ntag vsig\ntagger Test <test@example.invalid> 1700000000 +0000\n\nsigned\n{signature}"
    );
    let tag_id = fx.setup_git_stdin(&root, &["hash-object", "-t", "tag", "-w", "--stdin"], &tag);
    fx.setup_git(&root, &["update-ref", "refs/tags/vsig", &tag_id]);
    let indented: String = tag.lines().map(|l| format!(" {l}\n")).collect();
    let merge = format!(
        "tree {tree}\nparent {parent}\nparent {head}\nauthor Test <test@example.invalid> 1700000000 +0000\n\
         committer Test <test@example.invalid> 1700000000 +0000\nmergetag{}\nmerge\n",
        &indented[..indented.len() - 1]
    );
    let merge_id = fx.setup_git_stdin(
        &root,
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        &merge,
    );
    fx.setup_git(&root, &["update-ref", "refs/heads/merged-tag", &merge_id]);

    // Working-tree changes: filtered files, a dirty submodule, a .gitmodules asking for "none".
    fs::write(root.join("a.txt"), "alpha\nbeta\ngamma\ndelta\n").unwrap();
    fs::write(root.join("p.txt"), "process me too\n").unwrap();
    fs::write(root.join("b.g"), "global two\n").unwrap();
    fs::write(root.join("w.odd"), "odd two\n").unwrap();
    fs::write(sm.join("s.txt"), "jello\n").unwrap();
    fx.setup_git(
        &root,
        &["config", "-f", ".gitmodules", "submodule.sm.ignore", "none"],
    );

    // Hostile configuration: local, global and the submodule's own.
    let cat = "exec cat";
    let cat_file = "exec cat \"$1\"";
    let local: Vec<(&str, String)> = vec![
        ("core.pager", fx.script("pager", cat)),
        ("pager.log", fx.script("pager-log", cat)),
        ("pager.show", fx.script("pager-show", cat)),
        ("pager.diff", fx.script("pager-diff", cat)),
        ("pager.blame", fx.script("pager-blame", cat)),
        ("diff.external", fx.script("diff-external", "exit 0")),
        ("diff.evild.textconv", fx.script("textconv", cat_file)),
        ("diff.evild.command", fx.script("diff-command", "exit 0")),
        ("diff.evild.cachetextconv", "true".into()),
        ("core.fsmonitor", fx.script("fsmonitor", "exit 1")),
        ("gpg.program", fx.script("gpg", "exit 1")),
        ("gpg.ssh.program", fx.script("gpg-ssh", "exit 1")),
        ("gpg.x509.program", fx.script("gpg-x509", "exit 1")),
        (
            "gpg.ssh.allowedSignersFile",
            fx.base.join("allowed").display().to_string(),
        ),
        ("log.showSignature", "true".into()),
        ("format.pretty", "format:%h %G? %GS %s".into()),
        ("filter.evilf.clean", fx.script("clean", cat)),
        ("filter.evilf.smudge", fx.script("smudge", cat)),
        ("filter.evilf.required", "true".into()),
        ("filter.procf.process", fx.script("process", "exit 1")),
        ("filter.My.Odd.clean", fx.script("odd-clean", cat)),
        ("filter.My.Odd.smudge", fx.script("odd-smudge", cat)),
        (
            "core.hooksPath",
            fx.base.join("hooks").display().to_string(),
        ),
        ("diff.submodule", "diff".into()),
        ("diff.ignoreSubmodules", "none".into()),
        ("submodule.recurse", "true".into()),
        ("status.submoduleSummary", "true".into()),
        ("protocol.file.allow", "always".into()),
        ("core.sshCommand", fx.script("ssh-command", "exit 1")),
        ("core.askPass", fx.script("askpass", "exit 1")),
        ("credential.helper", fx.script("credential", "exit 1")),
    ];
    fs::write(fx.base.join("allowed"), "").unwrap();
    for (key, value) in &local {
        fx.setup_git(&root, &["config", key, value]);
    }
    for dir in [fx.base.join("hooks"), root.join(".git/hooks")] {
        fs::create_dir_all(&dir).unwrap();
        for hook in HOOKS {
            let script = fx.script(&format!("hook-{hook}"), "exit 0");
            fs::copy(&script, dir.join(hook)).unwrap();
        }
    }
    let global = format!(
        "[filter \"globalf\"]\n\tclean = {}\n\tsmudge = {}\n[diff \"globald\"]\n\ttextconv = {}\n[core]\n\tpager = {}\n",
        fx.script("global-clean", cat),
        fx.script("global-smudge", cat),
        fx.script("global-textconv", cat_file),
        fx.script("global-pager", cat),
    );
    fs::write(fx.home.join(".gitconfig"), global).unwrap();
    for (key, value) in [
        ("filter.subf.clean", fx.script("sub-clean", cat)),
        ("filter.subf.smudge", fx.script("sub-smudge", cat)),
        ("diff.subd.textconv", fx.script("sub-textconv", cat_file)),
        ("diff.subd.command", fx.script("sub-diff-command", "exit 0")),
        ("core.fsmonitor", fx.script("sub-fsmonitor", "exit 1")),
    ] {
        fx.setup_git(&sm, &["config", key, &value]);
    }
    fx.clear_markers();
    root
}

#[test]
fn no_configured_program_runs_through_any_tool() {
    let fx = Fixture::new();
    let root = hostile_repo(&fx);

    let overrides = driver_overrides(GIT, &root, &fx.env(), Duration::from_secs(60)).unwrap();
    for expected in [
        "filter.evilf.clean=",
        "filter.evilf.required=false",
        "filter.procf.process=",
        "filter.My.Odd.clean=",
        "filter.globalf.smudge=",
        "diff.evild.textconv=",
        "diff.globald.textconv=",
        "protocol.file.allow=never",
        "submodule.sm.ignore=dirty",
    ] {
        assert!(
            overrides.iter().any(|o| o == expected),
            "{expected} missing from {overrides:?}"
        );
    }
    assert!(
        fx.markers().is_empty(),
        "listing the configuration ran {:?}",
        fx.markers()
    );

    // (tool, params, must succeed)
    let cases: Vec<(GitTool, Value, bool)> = vec![
        (GitTool::Log, json!({}), true),
        (GitTool::Log, json!({"format": "full"}), true),
        (GitTool::Log, json!({"format": "stat"}), true),
        (
            GitTool::Log,
            json!({"format": "name-only", "maxCount": 500}),
            true,
        ),
        (
            GitTool::Log,
            json!({"ref": "signed-pgp", "format": "full"}),
            true,
        ),
        (
            GitTool::Log,
            json!({"ref": "signed-ssh", "format": "stat"}),
            true,
        ),
        (
            GitTool::Log,
            json!({"ref": "signed-x509", "format": "name-only"}),
            true,
        ),
        (
            GitTool::Log,
            json!({"ref": "merged-tag", "format": "stat"}),
            true,
        ),
        (
            GitTool::Log,
            json!({"path": "a.txt", "format": "stat", "since": "2000-01-01"}),
            true,
        ),
        (GitTool::Log, json!({"path": "old.txt"}), true),
        (GitTool::Show, json!({"ref": "HEAD"}), true),
        (GitTool::Show, json!({"ref": "HEAD~1"}), true),
        (GitTool::Show, json!({"ref": "signed-pgp"}), true),
        (GitTool::Show, json!({"ref": "signed-ssh"}), true),
        (
            GitTool::Show,
            json!({"ref": "signed-x509", "nameOnly": true}),
            true,
        ),
        (GitTool::Show, json!({"ref": "vsig"}), true),
        (GitTool::Show, json!({"ref": "merged-tag"}), true),
        (GitTool::Show, json!({"ref": "HEAD:a.txt"}), true),
        (GitTool::Show, json!({"ref": "HEAD:b.g"}), true),
        (
            GitTool::Show,
            json!({"ref": "HEAD~2", "path": "a.txt"}),
            true,
        ),
        (GitTool::Diff, json!({}), true),
        (GitTool::Diff, json!({"stat": true}), true),
        (GitTool::Diff, json!({"nameOnly": true}), true),
        (GitTool::Diff, json!({"path": "a.txt", "unified": 0}), true),
        (GitTool::Diff, json!({"path": "sm"}), true),
        (GitTool::Diff, json!({"base": "HEAD~2"}), true),
        (
            GitTool::Diff,
            json!({"base": "HEAD~2", "head": "HEAD", "unified": 1}),
            true,
        ),
        (
            GitTool::Diff,
            json!({"base": "HEAD~2", "head": "HEAD", "stat": true}),
            true,
        ),
        (GitTool::Blame, json!({"path": "w.odd"}), true),
        (
            GitTool::Blame,
            json!({"path": "w.odd", "ref": "HEAD", "lineStart": 1}),
            true,
        ),
        (
            GitTool::Blame,
            json!({"path": "README", "lineEnd": 1}),
            true,
        ),
        (GitTool::Blame, json!({"path": "a.txt"}), false),
        (
            GitTool::Blame,
            json!({"path": "a.txt", "ref": "HEAD"}),
            false,
        ),
        (GitTool::Blame, json!({"path": "p.txt"}), false),
        (
            GitTool::Blame,
            json!({"path": "b.g", "ref": "HEAD~1"}),
            false,
        ),
        (
            GitTool::MergeBase,
            json!({"base": "HEAD~1", "head": "merged-tag"}),
            true,
        ),
        (GitTool::LsFiles, json!({}), true),
        (GitTool::LsFiles, json!({"path": "sm"}), true),
    ];
    let mut failures = Vec::new();
    for (tool, params, must_succeed) in &cases {
        let (argv, out) = fx.run_tool(&root, *tool, params);
        let markers = fx.markers();
        if !markers.is_empty() {
            failures.push(format!(
                "{tool} {params}: markers {markers:?} (argv {argv:?})"
            ));
            fx.clear_markers();
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        if *must_succeed && !out.status.success() {
            failures.push(format!("{tool} {params}: {} — {stderr}", out.status));
        }
        if !out.status.success() {
            // A harmless failure: git refused to start the emptied program.
            assert!(
                stderr.contains("cannot run"),
                "{tool} {params}: unexpected failure: {stderr}"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The output is what it should be, with the filters and textconv bypassed.
    let (_, out) = fx.run_tool(&root, GitTool::Diff, &json!({"path": "a.txt"}));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("+delta"), "{text}");
    let (_, out) = fx.run_tool(&root, GitTool::Diff, &json!({"nameOnly": true}));
    let text = String::from_utf8_lossy(&out.stdout);
    for path in ["a.txt", "b.g", "p.txt", "w.odd", "sm", ".gitmodules"] {
        assert!(
            text.lines().any(|l| l == path),
            "{path} missing from {text}"
        );
    }
    let (_, out) = fx.run_tool(
        &root,
        GitTool::Log,
        &json!({"path": "old.txt", "format": "name-only"}),
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("old.txt"));
    let (_, out) = fx.run_tool(&root, GitTool::Show, &json!({"ref": "signed-pgp"}));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("commit ") && !text.contains("%G"),
        "{text}"
    );
    let (_, out) = fx.run_tool(&root, GitTool::Blame, &json!({"path": "w.odd"}));
    assert!(String::from_utf8_lossy(&out.stdout).contains("odd two"));
    let (_, out) = fx.run_tool(
        &root,
        GitTool::MergeBase,
        &json!({"base": "HEAD~1", "head": "merged-tag"}),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        fx.setup_git(&root, &["rev-parse", "HEAD~1"])
    );
    let (_, out) = fx.run_tool(&root, GitTool::LsFiles, &json!({}));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l == "w.odd") && !text.contains("old.txt"),
        "{text}"
    );
    assert!(fx.markers().is_empty(), "{:?}", fx.markers());
}

#[test]
fn without_the_overrides_configured_programs_do_run() {
    let fx = Fixture::new();
    let root = hostile_repo(&fx);
    let fixed_only = |args: &[&str]| {
        let mut argv: Vec<String> = vec![GIT.into(), "--no-pager".into()];
        for (key, value) in FIXED_PREFIX {
            argv.push("-c".into());
            argv.push(format!("{key}={value}"));
        }
        argv.extend(args.iter().map(|s| s.to_string()));
        argv
    };
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    // Only the three fixed pairs: blame runs the filters and textconv…
    fx.run(&root, &fixed_only(&["blame", "--", "a.txt"]));
    let markers = fx.markers();
    for expected in ["clean", "smudge", "textconv"] {
        assert!(
            markers.iter().any(|m| m == expected),
            "{expected} not in {markers:?}"
        );
    }
    fx.clear_markers();
    // …log verifies signatures…
    fx.run(
        &root,
        &fixed_only(&[
            "log",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--max-count=1",
            "--oneline",
            "signed-pgp",
        ]),
    );
    assert!(
        fx.markers().contains(&"gpg".to_string()),
        "{:?}",
        fx.markers()
    );
    fx.clear_markers();
    // …and diff starts git status in the submodule, which runs its clean filter.
    fx.run(
        &root,
        &fixed_only(&[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--",
            "sm",
        ]),
    );
    assert!(
        fx.markers().contains(&"sub-clean".to_string()),
        "{:?}",
        fx.markers()
    );
    fx.clear_markers();

    // The static overrides alone leave the configured filter drivers open.
    fx.run(&root, &full_argv(GIT, &strings(&["blame", "--", "w.odd"])));
    assert!(
        fx.markers().contains(&"odd-clean".to_string()),
        "{:?}",
        fx.markers()
    );
    fx.clear_markers();
    fx.run(
        &root,
        &full_argv(
            GIT,
            &strings(&["diff", "--no-color", "--no-ext-diff", "--no-textconv"]),
        ),
    );
    let markers = fx.markers();
    for expected in ["clean", "global-clean", "sub-clean"] {
        assert!(
            markers.iter().any(|m| m == expected),
            "{expected} not in {markers:?}"
        );
    }
    fx.clear_markers();

    // The same runs with the overrides leave nothing behind.
    let overrides = driver_overrides(GIT, &root, &fx.env(), Duration::from_secs(60)).unwrap();
    fx.run(
        &root,
        &full_argv_with_overrides(GIT, &overrides, &strings(&["blame", "--", "w.odd"])),
    );
    fx.run(
        &root,
        &full_argv_with_overrides(
            GIT,
            &overrides,
            &strings(&["diff", "--no-color", "--no-ext-diff", "--no-textconv"]),
        ),
    );
    assert!(fx.markers().is_empty(), "{:?}", fx.markers());
}

#[test]
fn partial_clone_cannot_fetch_lazily() {
    let fx = Fixture::new();
    let src = fx.base.join("src");
    fx.init_repo(&src);
    fs::write(src.join("f.txt"), "one\n").unwrap();
    fx.setup_git(&src, &["add", "."]);
    fx.setup_git(&src, &["commit", "-qm", "one"]);
    fs::write(src.join("f.txt"), "one\ntwo\n").unwrap();
    fx.setup_git(&src, &["commit", "-qam", "two"]);
    fx.setup_git(&src, &["config", "uploadpack.allowFilter", "true"]);
    fx.setup_git(&src, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let url = format!("file://{}", src.display());
    fx.setup_git(
        &fx.base,
        &[
            "clone",
            "-q",
            "--no-local",
            "--filter=blob:none",
            "--no-checkout",
            &url,
            "pc",
        ],
    );
    let pc = fx.base.join("pc");
    let uploadpack = fx.script("uploadpack", "exit 1");
    fx.setup_git(&pc, &["config", "remote.origin.uploadpack", &uploadpack]);
    fx.setup_git(&pc, &["config", "protocol.file.allow", "always"]);
    fx.clear_markers();

    for (tool, params) in [
        (GitTool::Show, json!({"ref": "HEAD"})),
        (GitTool::Log, json!({"format": "stat"})),
        (GitTool::Blame, json!({"path": "f.txt", "ref": "HEAD"})),
        (GitTool::Diff, json!({"base": "HEAD~1", "head": "HEAD"})),
    ] {
        let (_, out) = fx.run_tool(&pc, tool, &params);
        assert!(
            !out.status.success(),
            "{tool}: the blobs are missing, so it cannot succeed"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not allowed"), "{tool}: {stderr}");
        assert!(fx.markers().is_empty(), "{tool}: {:?}", fx.markers());
    }
    let (_, out) = fx.run_tool(&pc, GitTool::Log, &json!({}));
    assert!(
        out.status.success(),
        "commits are present: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Without the per-name override, protocol.file.allow=always reopens the transport.
    let args: Vec<String> = [
        "show",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "HEAD",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    fx.run(&pc, &full_argv(GIT, &args));
    assert!(
        fx.markers().contains(&"uploadpack".to_string()),
        "{:?}",
        fx.markers()
    );
}

#[test]
fn listing_fails_closed() {
    let fx = Fixture::new();
    let root = fx.base.join("broken");
    fx.init_repo(&root);
    let config = root.join(".git/config");
    let mut text = fs::read_to_string(&config).unwrap();
    text.push_str("[filter \"a=b\"]\n\tclean = x\n");
    fs::write(&config, text).unwrap();
    let err = driver_overrides(GIT, &root, &fx.env(), Duration::from_secs(60)).unwrap_err();
    assert!(err.0.contains("cannot be overridden safely"), "{err}");

    fs::write(&config, "[core\n").unwrap();
    let err = driver_overrides(GIT, &root, &fx.env(), Duration::from_secs(60)).unwrap_err();
    assert!(err.0.contains("could not list its configuration"), "{err}");

    let err = driver_overrides(
        "/nonexistent/git",
        &fx.base,
        &fx.env(),
        Duration::from_secs(5),
    )
    .unwrap_err();
    // The engine's own spawn reports a failed exec also under qemu-user
    // (through its report pipe).
    assert!(err.0.contains("could not start"), "{err}");

    // Outside any repository only the user's configuration is listed.
    let plain = fx.base.join("plain");
    fs::create_dir_all(&plain).unwrap();
    assert_eq!(
        driver_overrides(GIT, &plain, &fx.env(), Duration::from_secs(60)).unwrap(),
        Vec::<String>::new()
    );
}
