//! One repository's protected paths: its hooks, config and `.git` (and a
//! linked worktree's gitfile, a submodule's git directory) cannot be
//! planted in or replaced, ordinary git work goes on, and the policy's
//! `protect` list adds paths of its own.

use std::path::Path;
use std::process::Command;

use neurolink_commands_engine::policy::confine::ConfinementInput;

use super::{confined, fixture, landlock_only, sandbox_here};

pub(super) fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A repository at the root with one commit.
pub(super) fn repo(root: &Path) {
    assert!(git(root, &["init", "-q", "-b", "main"]).status.success());
    std::fs::write(root.join("a"), "a\n").unwrap();
    assert!(git(root, &["add", "a"]).status.success());
    assert!(git(root, &["commit", "-qm", "one"]).status.success());
}

/// `upstream` added to the repository at `root` as a submodule at `at`,
/// committed.
pub(super) fn add_submodule(root: &Path, upstream: &Path, at: &str) {
    let add = git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            upstream.to_str().unwrap(),
            at,
        ],
    );
    assert!(add.status.success(), "{add:?}");
    assert!(git(root, &["commit", "-qm", "sub"]).status.success());
}

/// What the user's git reads: `core.fsmonitor` runs at `git status`, in the
/// repository's top.
pub(super) const FSMONITOR: &str = "printf '[core]\\n\\tfsmonitor = \"touch PLANTED; false\"\\n'";

pub(super) const HOOK: &str = "#!/bin/sh\\ntouch \"$PWD/PLANTED\"\\n";

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
            "fsmonitor" => format!("{FSMONITOR} >> .git/config"),
            "hookspath" => format!("mkdir -p h && printf '{HOOK}' > h/pre-commit && chmod +x h/pre-commit && printf '[core]\\n\\thooksPath = h\\n' >> .git/config"),
            "symlink" => format!("ln -sf /dev/null x && {FSMONITOR} > cfg && ln -sf ../cfg .git/config.new && mv -f .git/config.new .git/config"),
            "rename" => format!("mv .git .git-old && git init -q && {FSMONITOR} >> .git/config"),
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
    add_submodule(&root, upstream.path(), "sub");
    let plant = |how: &str| -> String {
        match how {
            "config" => format!("{FSMONITOR} >> .git/modules/sub/config"),
            "hook" => format!("printf '{HOOK}' > .git/modules/sub/hooks/pre-commit && chmod +x .git/modules/sub/hooks/pre-commit"),
            "gitfile" => format!("cp -r .git/modules/sub evil && git config -f evil/config core.worktree ../sub && {FSMONITOR} >> evil/config && echo 'gitdir: ../evil' > sub/.git"),
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
