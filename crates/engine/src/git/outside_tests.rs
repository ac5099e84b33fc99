//! No configuration makes git read a file outside the repository (SPEC §5):
//! a repository whose own configuration names, for every key of the git
//! hardening notes, a file outside it holding a unique secret line; every
//! tool is run through the argv the engine builds, and no secret may appear
//! in its stdout or stderr. The controls run the same tools without the new
//! protections and show each secret (or its effect) does appear, so these
//! tests can fail.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::json;

use super::*;

const GIT: &str = "git";

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    outside: PathBuf,
}

/// A key, the file outside it names, and the secret that file holds.
struct Planted {
    key: &'static str,
    secret: String,
}

fn plain_git(home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(GIT)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        let repo = base.join("repo");
        let outside = base.join("outside");
        for d in [&home, &repo, &outside] {
            fs::create_dir_all(d).unwrap();
        }
        let g = |args: &[&str]| plain_git(&home, &repo, args);
        g(&["-c", "init.defaultBranch=main", "init", "-q"]);
        g(&["config", "user.name", "Test"]);
        g(&["config", "user.email", "test@example.invalid"]);
        g(&["config", "commit.gpgsign", "false"]);
        fs::write(repo.join("a.txt"), "one\n").unwrap();
        fs::write(repo.join("z.txt"), "one\n").unwrap();
        g(&["add", "."]);
        g(&["commit", "-qm", "first"]);
        // Uncommitted changes, so diff has something to show and order.
        fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();
        fs::write(repo.join("z.txt"), "one\ntwo\n").unwrap();
        Fixture {
            _dir: dir,
            home,
            repo,
            outside,
        }
    }

    fn env(&self) -> Vec<(String, String)> {
        let path = std::env::var("PATH").ok();
        git_env(path.as_deref(), Some(self.home.to_str().unwrap()))
    }

    fn set(&self, key: &str, value: &str) {
        plain_git(&self.home, &self.repo, &["config", key, value]);
    }

    /// Write `content` to a file outside the repository and return its path.
    fn outside_file(&self, name: &str, content: &str) -> String {
        let path = self.outside.join(name);
        fs::write(&path, content).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// Plant every file-naming key of the hardening notes in the
    /// repository's own configuration.
    fn plant_all(&self) -> Vec<Planted> {
        let mut planted = Vec::new();
        let mut plant = |key: &'static str, name: &str, secret: &str, content: String| {
            let file = self.outside_file(name, &content);
            self.set(key, &file);
            planted.push(Planted {
                key,
                secret: secret.to_string(),
            });
        };
        plant(
            "mailmap.file",
            "mailmap",
            "SECRETMAILMAP",
            "SECRETMAILMAP <test@example.invalid>\n".into(),
        );
        plant(
            "core.attributesFile",
            "attributes",
            "SECRETATTR",
            "* SECRETATTR!x\n".into(),
        );
        plant(
            "core.excludesFile",
            "excludes",
            "SECRETEXCLUDES",
            "SECRETEXCLUDES!x\n".into(),
        );
        plant(
            "diff.orderFile",
            "order",
            "SECRETORDER",
            "z.txt\nSECRETORDER\na.txt\n".into(),
        );
        plant(
            "gpg.ssh.allowedSignersFile",
            "signers",
            "SECRETSIGNERS",
            "SECRETSIGNERS ssh-ed25519 AAAA\n".into(),
        );
        plant(
            "gpg.ssh.revocationFile",
            "revoked",
            "SECRETREVOKED",
            "SECRETREVOKED\n".into(),
        );
        // core.worktree: a work tree outside whose files differ.
        let wt = self.outside.join("worktree");
        fs::create_dir_all(&wt).unwrap();
        fs::write(wt.join("a.txt"), "one\nSECRETWORKTREE\n").unwrap();
        fs::write(wt.join("z.txt"), "one\nSECRETWORKTREE\n").unwrap();
        self.set("core.worktree", wt.to_str().unwrap());
        planted.push(Planted {
            key: "core.worktree",
            secret: "SECRETWORKTREE".into(),
        });
        planted
    }

    fn run(&self, argv: &[String]) -> Output {
        Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(&self.repo)
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Every tool call worth making, as the engine builds its argv.
    fn calls() -> Vec<(GitTool, serde_json::Value)> {
        vec![
            (GitTool::Log, json!({"format": "full"})),
            (GitTool::Log, json!({"format": "stat"})),
            (GitTool::Show, json!({"ref": "HEAD"})),
            (GitTool::Diff, json!({})),
            (GitTool::Diff, json!({"base": "HEAD"})),
            (GitTool::Diff, json!({"stat": true})),
            (GitTool::Blame, json!({"path": "a.txt"})),
            (GitTool::MergeBase, json!({"base": "main", "head": "HEAD"})),
            (GitTool::LsFiles, json!({})),
        ]
    }

    /// stdout + stderr of every call, hardened as the engine runs it.
    fn hardened_outputs(&self) -> Result<Vec<(String, String)>, GitRefusal> {
        let overrides = driver_overrides(GIT, &self.repo, &self.env(), Duration::from_secs(60))?;
        Ok(Self::calls()
            .into_iter()
            .map(|(tool, params)| {
                let args = tool_args(tool, &params, &self.repo).unwrap();
                let argv = pinned_argv(GIT, &self.repo, &overrides, &args);
                let out = self.run(&argv);
                (
                    format!("{tool} {params}"),
                    format!(
                        "{}{}",
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    ),
                )
            })
            .collect())
    }

    /// The same calls with only the protections of before (the three fixed
    /// pairs, no new static pairs, no pinned work tree).
    fn unprotected_outputs(&self) -> Vec<(String, String)> {
        Self::calls()
            .into_iter()
            .map(|(tool, params)| {
                let args = tool_args(tool, &params, &self.repo).unwrap();
                let mut argv = vec![GIT.to_string(), "--no-pager".to_string()];
                for (k, v) in FIXED_PREFIX {
                    argv.push("-c".into());
                    argv.push(format!("{k}={v}"));
                }
                argv.extend(args);
                let out = self.run(&argv);
                (
                    format!("{tool} {params}"),
                    format!(
                        "{}{}",
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    ),
                )
            })
            .collect()
    }
}

#[test]
fn no_file_named_by_configuration_outside_the_repository_is_read() {
    let fx = Fixture::new();
    let planted = fx.plant_all();
    let outputs = fx.hardened_outputs().unwrap();
    for (call, text) in &outputs {
        for p in &planted {
            assert!(
                !text.contains(&p.secret),
                "{call}: the file named by {} leaked: {text}",
                p.key
            );
        }
    }
    // The tools still work: the diff is of the repository's own work tree,
    // in git's default order (a.txt before z.txt).
    let diff = &outputs.iter().find(|(c, _)| c == "git_diff {}").unwrap().1;
    let a = diff.find("a/a.txt").expect("a.txt in the diff");
    let z = diff.find("a/z.txt").expect("z.txt in the diff");
    assert!(a < z, "default order: {diff}");
    assert!(diff.contains("+two"), "{diff}");
    let blame = &outputs
        .iter()
        .find(|(c, _)| c.starts_with("git_blame"))
        .unwrap()
        .1;
    assert!(blame.contains("Test") && blame.contains("two"), "{blame}");
}

#[test]
fn without_the_protections_those_files_are_read() {
    let fx = Fixture::new();
    let planted = fx.plant_all();
    let all: String = fx
        .unprotected_outputs()
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    // Each of these leaks its secret (or, for the order file, its effect)
    // through some tool when the protections are left out.
    for key in ["mailmap.file", "core.attributesFile", "core.worktree"] {
        let p = planted.iter().find(|p| p.key == key).unwrap();
        assert!(all.contains(&p.secret), "{key}: {all}");
    }
    // core.worktree gone, the order file reorders the diff: z.txt first.
    plain_git(&fx.home, &fx.repo, &["config", "--unset", "core.worktree"]);
    let outputs = fx.unprotected_outputs();
    let diff = &outputs.iter().find(|(c, _)| c == "git_diff {}").unwrap().1;
    assert!(
        diff.find("a/z.txt").unwrap() < diff.find("a/a.txt").unwrap(),
        "{diff}"
    );
}

#[test]
fn an_include_of_an_outside_file_is_refused_without_reading_it() {
    let fx = Fixture::new();
    // A victim's file that happens to parse as configuration; git quotes a
    // bad value in its error.
    let secret = fx.outside_file("creds", "[core]\n\tabbrev = SECRETINCLUDE\n");
    for key in ["include.path", "includeIf.gitdir:/.path"] {
        fx.set(key, &secret);
        let err = fx.hardened_outputs().unwrap_err().0;
        assert!(err.contains("outside"), "{key}: {err}");
        assert!(!err.contains("SECRETINCLUDE"), "{key}: {err}");
        // Control: an unprotected run reads the file and quotes it.
        let all: String = fx
            .unprotected_outputs()
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert!(all.contains("SECRETINCLUDE"), "{key}: {all}");
        plain_git(&fx.home, &fx.repo, &["config", "--unset-all", key]);
    }
    // Relative and nested includes: an inside file that includes an outside one.
    let inside = fx.repo.join(".git/extra.cfg");
    fs::write(&inside, format!("[include]\n\tpath = {secret}\n")).unwrap();
    fx.set("include.path", "extra.cfg");
    let err = fx.hardened_outputs().unwrap_err().0;
    assert!(
        err.contains("outside") && !err.contains("SECRETINCLUDE"),
        "{err}"
    );
    // An include that stays inside the git directory is honoured.
    fs::write(&inside, "[user]\n\tname = Inside\n").unwrap();
    let outputs = fx.hardened_outputs().unwrap();
    assert!(outputs.iter().all(|(_, t)| !t.contains("SECRETINCLUDE")));
    // A relative path climbing out of the repository is outside too.
    plain_git(
        &fx.home,
        &fx.repo,
        &["config", "--unset-all", "include.path"],
    );
    fx.set("include.path", "../../outside/creds");
    let err = fx.hardened_outputs().unwrap_err().0;
    assert!(
        err.contains("outside") && !err.contains("SECRETINCLUDE"),
        "{err}"
    );
}

#[test]
fn an_outside_ignore_revs_file_is_refused_and_an_inside_one_is_read() {
    let fx = Fixture::new();
    let revs = fx.outside_file("revs", "deadbeefSECRETREVS\n");
    fx.set("blame.ignoreRevsFile", &revs);
    let err = fx.hardened_outputs().unwrap_err().0;
    assert!(
        err.contains("blame.ignoreRevsFile") && err.contains("outside"),
        "{err}"
    );
    assert!(!err.contains("SECRETREVS"), "{err}");
    // Control: unprotected, blame quotes the file's first line.
    let all: String = fx
        .unprotected_outputs()
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert!(all.contains("deadbeefSECRETREVS"), "{all}");
    // The same setting in the user's own configuration is refused too.
    plain_git(
        &fx.home,
        &fx.repo,
        &["config", "--unset", "blame.ignoreRevsFile"],
    );
    plain_git(
        &fx.home,
        &fx.repo,
        &["config", "--global", "blame.ignoreRevsFile", &revs],
    );
    let err = fx.hardened_outputs().unwrap_err().0;
    assert!(
        err.contains("blame.ignoreRevsFile") && !err.contains("SECRETREVS"),
        "{err}"
    );
    plain_git(
        &fx.home,
        &fx.repo,
        &["config", "--global", "--unset", "blame.ignoreRevsFile"],
    );
    // A file inside the repository is honoured (and is the repository's own bytes).
    fs::write(fx.repo.join(".git-blame-ignore-revs"), "# none\n").unwrap();
    fx.set("blame.ignoreRevsFile", ".git-blame-ignore-revs");
    let outputs = fx.hardened_outputs().unwrap();
    let blame = &outputs
        .iter()
        .find(|(c, _)| c.starts_with("git_blame"))
        .unwrap()
        .1;
    assert!(blame.contains("two"), "{blame}");
}
