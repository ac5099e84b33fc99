//! The read-only git toolset: validators and argv shapes.
//!
//! A tool call becomes `git_executable` + the hardening prefix
//! ([`full_argv`]) + the per-repository driver overrides
//! ([`driver_overrides`]) + the tool's args ([`tool_args`]), run in the
//! repository root with the environment of [`git_env`]. The prefix and the
//! overrides keep git from starting any program named by configuration
//! (see [`HARDENING`]); the validators keep every model-given value a value.

pub mod args;
pub mod hardening;
pub mod helper;
pub mod prefix;
pub mod refusal;
pub mod run;
pub mod tool;
pub mod validate;
#[cfg(windows)]
pub mod windows;

#[cfg(test)]
mod outside_tests;
#[cfg(test)]
mod repo_tests;

pub use hardening::{driver_overrides, driver_overrides_confined, overrides_for_config_names};
pub use prefix::{
    full_argv, full_argv_with_overrides, git_env, pinned_argv, work_tree_arg, FIXED_PREFIX,
    HARDENING,
};
pub use refusal::GitRefusal;
pub use tool::{tool_args, GitTool};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::Value;
    use std::fs;
    use std::path::Path;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn repo() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.rs"), "x\n").unwrap();
        (dir, root)
    }

    fn refusal(tool: GitTool, params: Value, root: &Path) -> String {
        match tool_args(tool, &params, root) {
            Ok(args) => panic!("{tool}: expected a refusal for {params}, got {args:?}"),
            Err(e) => {
                assert_eq!(e.to_string(), e.0);
                e.0
            }
        }
    }

    #[test]
    fn tool_names_round_trip() {
        for tool in GitTool::ALL {
            assert_eq!(GitTool::from_name(tool.name()), Some(tool));
        }
        assert_eq!(
            GitTool::from_name("git_merge_base"),
            Some(GitTool::MergeBase)
        );
        assert_eq!(GitTool::from_name("git_ls_files"), Some(GitTool::LsFiles));
        assert_eq!(GitTool::from_name("git_push"), None);
        assert_eq!(GitTool::from_name("log"), None);
    }

    #[test]
    fn prefix_and_env() {
        let argv = full_argv("git", &v(&["ls-files"]));
        assert_eq!(
            argv[..8],
            v(&[
                "git",
                "--no-pager",
                "-c",
                "color.ui=false",
                "-c",
                "diff.external=",
                "-c",
                "core.fsmonitor=false"
            ])
        );
        assert_eq!(argv.last().unwrap(), "ls-files");
        assert_eq!(argv.len(), 8 + 2 * HARDENING.len() + 1);
        for pair in argv[8..argv.len() - 1].chunks(2) {
            assert_eq!(pair[0], "-c");
            assert!(pair[1].contains('='));
        }
        assert!(argv.contains(&"log.showSignature=false".to_string()));
        assert!(argv.contains(&"protocol.allow=never".to_string()));

        let with = full_argv_with_overrides(
            "/usr/bin/git",
            &v(&["-c", "filter.x.clean="]),
            &v(&["ls-files"]),
        );
        assert_eq!(with[0], "/usr/bin/git");
        assert_eq!(
            with[with.len() - 3..],
            v(&["-c", "filter.x.clean=", "ls-files"])
        );

        let env = git_env(Some("/usr/bin:/bin"), Some("/home/u"));
        let want: Vec<(String, String)> = [
            ("LANG", "C"),
            ("LC_ALL", "C"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_OPTIONAL_LOCKS", "0"),
            ("GIT_PAGER", "cat"),
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/u"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(env, want);
        assert_eq!(git_env(None, None).len(), 5);
        assert_eq!(
            git_env(None, Some("/h")).last().unwrap(),
            &("HOME".to_string(), "/h".to_string())
        );
    }

    #[test]
    fn log_params() {
        let (_d, root) = repo();
        let base = ["log", "--no-color", "--no-ext-diff", "--no-textconv"];
        let with = |extra: &[&str]| {
            let mut all = v(&base);
            all.extend(v(extra));
            all
        };
        assert_eq!(
            tool_args(GitTool::Log, &json!({}), &root).unwrap(),
            with(&["--max-count=20", "--oneline"])
        );
        assert_eq!(
            tool_args(GitTool::Log, &Value::Null, &root).unwrap(),
            with(&["--max-count=20", "--oneline"])
        );
        let nulls =
            json!({"ref": null, "path": null, "maxCount": null, "since": null, "format": null});
        assert_eq!(
            tool_args(GitTool::Log, &nulls, &root).unwrap(),
            with(&["--max-count=20", "--oneline"])
        );
        let full = json!({"ref": "main", "path": "src/../src/a.rs", "maxCount": 5, "since": "2 weeks ago", "format": "full"});
        assert_eq!(
            tool_args(GitTool::Log, &full, &root).unwrap(),
            with(&[
                "--max-count=5",
                "--pretty=fuller",
                "--since=2 weeks ago",
                "main",
                "--",
                "src/a.rs"
            ])
        );
        for (format, flag) in [
            ("oneline", "--oneline"),
            ("full", "--pretty=fuller"),
            ("stat", "--stat"),
            ("name-only", "--name-only"),
        ] {
            let got = tool_args(
                GitTool::Log,
                &json!({"format": format, "maxCount": 500}),
                &root,
            )
            .unwrap();
            assert_eq!(got, with(&["--max-count=500", flag]));
        }
        // 1.0 is the integer 1 (JavaScript numbers may arrive as floats).
        let got = tool_args(GitTool::Log, &json!({"maxCount": 1.0}), &root).unwrap();
        assert_eq!(got, with(&["--max-count=1", "--oneline"]));
        let got = tool_args(GitTool::Log, &json!({"path": "deleted/file.rs"}), &root).unwrap();
        assert_eq!(
            got,
            with(&["--max-count=20", "--oneline", "--", "deleted/file.rs"])
        );
        // A key the tool does not take is refused, as its schema says.
        let e = tool_args(
            GitTool::Log,
            &json!({"path": "deleted/file.rs", "repoRoot": "/ignored"}),
            &root,
        )
        .unwrap_err();
        assert_eq!(
            e.0,
            "git_log: unknown parameter \"repoRoot\": this tool takes only ref, path, maxCount, since, format"
        );
    }

    #[test]
    fn log_refusals() {
        let (_d, root) = repo();
        let with = |extra: &[&str]| {
            let mut all = v(&["log", "--no-color", "--no-ext-diff", "--no-textconv"]);
            all.extend(v(extra));
            all
        };
        // Numbers are forgiving (NeuroLink's rule): floored, then clamped to 1..500.
        for (given, count) in [
            (json!(1000), 500),
            (json!(501), 500),
            (json!(1e300), 500),
            (json!(2.7), 2),
            (json!(0), 1),
            (json!(0.5), 1),
            (json!(-1), 1),
            (json!(-1e300), 1),
            (json!(500), 500),
        ] {
            let got = tool_args(GitTool::Log, &json!({ "maxCount": given }), &root).unwrap();
            assert_eq!(
                got,
                with(&[&format!("--max-count={count}"), "--oneline"]),
                "maxCount {given}"
            );
        }
        // A value that is not a number is still refused.
        for bad in [json!("20"), json!(true), json!([1]), json!({"n": 1})] {
            let m = refusal(GitTool::Log, json!({ "maxCount": bad }), &root);
            assert!(
                m.starts_with("git_log: maxCount must be a number (floored and clamped to 1..500)"),
                "{m}"
            );
        }
        let m = refusal(GitTool::Log, json!({"format": "raw"}), &root);
        assert!(
            m.contains("format must be one of \"oneline\", \"full\", \"stat\", \"name-only\""),
            "{m}"
        );
        let m = refusal(GitTool::Log, json!({"format": 3}), &root);
        assert!(m.contains("format must be one of"), "{m}");
        let m = refusal(GitTool::Log, json!({"ref": "--output=/tmp/x"}), &root);
        assert!(
            m.starts_with("git_log: ref \"--output=/tmp/x\" must not start with \"-\""),
            "{m}"
        );
        let m = refusal(GitTool::Log, json!({"ref": "main; rm -rf /"}), &root);
        assert!(m.contains("not a valid git revision"), "{m}");
        let m = refusal(GitTool::Log, json!({"ref": 7}), &root);
        assert!(
            m.contains("ref must be a string holding a git revision"),
            "{m}"
        );
        let m = refusal(GitTool::Log, json!({"since": "$(date)"}), &root);
        assert!(m.contains("since \"$(date)\" is not a valid date"), "{m}");
        let m = refusal(GitTool::Log, json!({"since": 5}), &root);
        assert!(m.contains("since must be a string holding a date"), "{m}");
        let m = refusal(GitTool::Log, json!({"path": "../../etc/passwd"}), &root);
        assert!(m.contains("outside the permitted root"), "{m}");
        let m = refusal(GitTool::Log, json!({"path": ["a"]}), &root);
        assert!(
            m.contains("path must be a string holding a path inside the repository"),
            "{m}"
        );
        let m = refusal(GitTool::Log, json!(["main"]), &root);
        assert!(m.contains("params must be a JSON object"), "{m}");
    }

    #[test]
    fn show_params() {
        let (_d, root) = repo();
        let base = v(&["show", "--no-color", "--no-ext-diff", "--no-textconv"]);
        let mut want = base.clone();
        want.push("HEAD~2".into());
        assert_eq!(
            tool_args(GitTool::Show, &json!({"ref": "HEAD~2"}), &root).unwrap(),
            want
        );
        let mut want = base.clone();
        want.extend(v(&["--name-only", "main^{tree}", "--", "src"]));
        let got = tool_args(
            GitTool::Show,
            &json!({"ref": "main^{tree}", "nameOnly": true, "path": "src/"}),
            &root,
        );
        assert_eq!(got.unwrap(), want);
        let mut want = base;
        want.push("v1.0".into());
        let got = tool_args(
            GitTool::Show,
            &json!({"ref": " v1.0 ", "nameOnly": false}),
            &root,
        );
        assert_eq!(got.unwrap(), want);

        let m = refusal(GitTool::Show, json!({}), &root);
        assert!(m.starts_with("git_show: ref is required"), "{m}");
        let m = refusal(GitTool::Show, json!({"ref": null}), &root);
        assert!(m.contains("ref is required"), "{m}");
        let m = refusal(
            GitTool::Show,
            json!({"ref": "HEAD", "nameOnly": "yes"}),
            &root,
        );
        assert!(m.contains("nameOnly must be true or false"), "{m}");
        let m = refusal(GitTool::Show, json!({"ref": " -x"}), &root);
        assert!(m.contains("must not start with \"-\""), "{m}");
    }

    #[test]
    fn diff_params() {
        let (_d, root) = repo();
        let base = v(&["diff", "--no-color", "--no-ext-diff", "--no-textconv"]);
        let with = |extra: &[&str]| {
            let mut all = base.clone();
            all.extend(v(extra));
            all
        };
        assert_eq!(
            tool_args(GitTool::Diff, &json!({}), &root).unwrap(),
            with(&[])
        );
        assert_eq!(
            tool_args(GitTool::Diff, &json!({"base": "main"}), &root).unwrap(),
            with(&["main"])
        );
        let all = json!({"base": "main", "head": "HEAD", "path": "src/a.rs", "nameOnly": true, "stat": true, "unified": 3});
        assert_eq!(
            tool_args(GitTool::Diff, &all, &root).unwrap(),
            with(&[
                "--name-only",
                "--stat",
                "-U3",
                "main",
                "HEAD",
                "--",
                "src/a.rs"
            ])
        );
        assert_eq!(
            tool_args(GitTool::Diff, &json!({"unified": 0}), &root).unwrap(),
            with(&["-U0"])
        );
        assert_eq!(
            tool_args(GitTool::Diff, &json!({"unified": 50}), &root).unwrap(),
            with(&["-U50"])
        );
        assert_eq!(
            tool_args(GitTool::Diff, &json!({"stat": true, "path": "."}), &root).unwrap(),
            with(&["--stat", "--", "."])
        );

        let m = refusal(GitTool::Diff, json!({"head": "HEAD"}), &root);
        assert!(m.starts_with("git_diff: head needs a base"), "{m}");
        for (given, n) in [
            (json!(100), 50),
            (json!(51), 50),
            (json!(-1), 0),
            (json!(1.5), 1),
            (json!(7.9), 7),
        ] {
            assert_eq!(
                tool_args(GitTool::Diff, &json!({ "unified": given }), &root).unwrap(),
                with(&[&format!("-U{n}")]),
                "unified {given}"
            );
        }
        for bad in [json!("3"), json!(false)] {
            let m = refusal(GitTool::Diff, json!({ "unified": bad }), &root);
            assert!(
                m.contains("unified must be a number (floored and clamped to 0..50)"),
                "{m}"
            );
        }
        let m = refusal(GitTool::Diff, json!({"base": "-R"}), &root);
        assert!(
            m.starts_with("git_diff: base \"-R\" must not start with \"-\""),
            "{m}"
        );
        let m = refusal(GitTool::Diff, json!({"base": "main", "head": "a b"}), &root);
        assert!(
            m.starts_with("git_diff: head \"a b\" is not a valid git revision"),
            "{m}"
        );
        let m = refusal(GitTool::Diff, json!({"stat": 1}), &root);
        assert!(m.contains("stat must be true or false"), "{m}");
    }

    #[test]
    fn blame_params() {
        let (_d, root) = repo();
        let args = |p: Value| tool_args(GitTool::Blame, &p, &root).unwrap();
        assert_eq!(
            args(json!({"path": "src/a.rs"})),
            v(&["blame", "--", "src/a.rs"])
        );
        assert_eq!(
            args(json!({"path": "src/a.rs", "ref": "HEAD", "lineStart": 10, "lineEnd": 20})),
            v(&["blame", "-L", "10,20", "HEAD", "--", "src/a.rs"])
        );
        assert_eq!(
            args(json!({"path": "src/a.rs", "lineStart": 10})),
            v(&["blame", "-L", "10,109", "--", "src/a.rs"])
        );
        assert_eq!(
            args(json!({"path": "src/a.rs", "lineEnd": 250})),
            v(&["blame", "-L", "151,250", "--", "src/a.rs"])
        );
        assert_eq!(
            args(json!({"path": "src/a.rs", "lineEnd": 20})),
            v(&["blame", "-L", "1,20", "--", "src/a.rs"])
        );

        let m = refusal(GitTool::Blame, json!({}), &root);
        assert!(m.starts_with("git_blame: path is required"), "{m}");
        let m = refusal(
            GitTool::Blame,
            json!({"path": "src/a.rs", "lineStart": 20, "lineEnd": 10}),
            &root,
        );
        assert!(
            m.contains("lineStart (20) must not be greater than lineEnd (10)"),
            "{m}"
        );
        // Line numbers are floored and raised to at least 1.
        assert_eq!(
            args(json!({"path": "src/a.rs", "lineStart": 0, "lineEnd": 20})),
            v(&["blame", "-L", "1,20", "--", "src/a.rs"])
        );
        assert_eq!(
            args(json!({"path": "src/a.rs", "lineStart": -3, "lineEnd": 2.5})),
            v(&["blame", "-L", "1,2", "--", "src/a.rs"])
        );
        assert_eq!(
            args(json!({"path": "src/a.rs", "lineStart": 10.9})),
            v(&["blame", "-L", "10,109", "--", "src/a.rs"])
        );
        assert_eq!(
            args(json!({"path": "src/a.rs", "lineEnd": 0})),
            v(&["blame", "-L", "1,1", "--", "src/a.rs"])
        );
        // Flooring can make a range valid only if it already was: 20.5..20.2 is 20..20.
        assert_eq!(
            args(json!({"path": "src/a.rs", "lineStart": 20.5, "lineEnd": 20.2})),
            v(&["blame", "-L", "20,20", "--", "src/a.rs"])
        );
        for bad in [json!("7"), json!(true)] {
            let m = refusal(
                GitTool::Blame,
                json!({"path": "src/a.rs", "lineStart": bad}),
                &root,
            );
            assert!(
                m.contains("lineStart must be a line number (floored, at least 1)"),
                "{m}"
            );
            let m = refusal(
                GitTool::Blame,
                json!({"path": "src/a.rs", "lineEnd": bad}),
                &root,
            );
            assert!(
                m.contains("lineEnd must be a line number (floored, at least 1)"),
                "{m}"
            );
        }
        let m = refusal(GitTool::Blame, json!({"path": "/etc/passwd"}), &root);
        assert!(
            m.contains("outside the permitted root") && m.contains(&root.display().to_string()),
            "{m}"
        );
        let m = refusal(GitTool::Blame, json!({"path": "-L1,2"}), &root);
        assert!(m.contains("must not start with \"-\""), "{m}");
    }

    #[test]
    fn merge_base_and_ls_files_params() {
        let (_d, root) = repo();
        assert_eq!(
            tool_args(
                GitTool::MergeBase,
                &json!({"base": "main", "head": "@{upstream}"}),
                &root
            )
            .unwrap(),
            v(&["merge-base", "main", "@{upstream}"])
        );
        let m = refusal(GitTool::MergeBase, json!({"base": "main"}), &root);
        assert!(m.starts_with("git_merge_base: head is required"), "{m}");
        let m = refusal(GitTool::MergeBase, json!({"head": "main"}), &root);
        assert!(m.starts_with("git_merge_base: base is required"), "{m}");
        let m = refusal(
            GitTool::MergeBase,
            json!({"base": "--all", "head": "x"}),
            &root,
        );
        assert!(m.contains("must not start with \"-\""), "{m}");

        assert_eq!(
            tool_args(GitTool::LsFiles, &json!({}), &root).unwrap(),
            v(&["ls-files"])
        );
        assert_eq!(
            tool_args(GitTool::LsFiles, &json!({"path": "src"}), &root).unwrap(),
            v(&["ls-files", "--", "src"])
        );
        let m = refusal(GitTool::LsFiles, json!({"path": "/etc"}), &root);
        assert!(
            m.starts_with(
                "git_ls_files: path \"/etc\" resolves to \"/etc\", which is outside the permitted root"
            ),
            "{m}"
        );
    }
}
