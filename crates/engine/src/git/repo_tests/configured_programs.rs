//! Every tool over the hostile repository: with the hardened argv and the
//! driver overrides no configured program runs; without the overrides the
//! same configuration does start them (so the first test can fail).

use std::time::Duration;

use serde_json::json;

use super::hostile_repo::hostile_repo;
use super::*;

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
