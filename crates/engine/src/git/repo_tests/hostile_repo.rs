//! The hostile repository: filtered and textconv'd files, a deleted file,
//! signed-looking commits and tags, a dirty submodule, and configuration
//! that points every hook, driver and helper at a script leaving a marker.

use std::fs;
use std::path::{Path, PathBuf};

use super::Fixture;

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
pub(super) fn hostile_repo(fx: &Fixture) -> PathBuf {
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
