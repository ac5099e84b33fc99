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
pub mod run;
pub mod validate;

#[cfg(test)]
mod outside_tests;
#[cfg(test)]
mod repo_tests;

use std::fmt;
use std::path::Path;

use serde_json::{Map, Value};

pub use hardening::{
    driver_overrides, driver_overrides_confined, overrides_for_config_names, work_tree_arg,
    FIXED_PREFIX, HARDENING,
};

use args::{BlameArgs, DiffArgs, LogArgs, LogFormat, ShowArgs};
use validate::{quote, resolve_repo_path, validate_ref_field, validate_since};

/// Why a tool call was refused before git ran; `Display` gives the message,
/// which names the shape that is expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRefusal(pub String);

impl fmt::Display for GitRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GitRefusal {}

/// The six read-only git tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GitTool {
    /// `git_log`: commit history.
    Log,
    /// `git_show`: one object (commit, tag, tree or blob).
    Show,
    /// `git_diff`: changes between the index, the working tree and revisions.
    Diff,
    /// `git_blame`: who last changed each line of a file.
    Blame,
    /// `git_merge_base`: the best common ancestor of two revisions.
    MergeBase,
    /// `git_ls_files`: the files git tracks.
    LsFiles,
}

impl GitTool {
    /// Every tool, in the order of the README's "Tools and the argv they run".
    pub const ALL: [GitTool; 6] = [
        GitTool::Log,
        GitTool::Show,
        GitTool::Diff,
        GitTool::Blame,
        GitTool::MergeBase,
        GitTool::LsFiles,
    ];

    /// The tool for a name such as `"git_log"`, or `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// The tool's name as models call it, e.g. `"git_merge_base"`.
    pub fn name(&self) -> &'static str {
        match self {
            GitTool::Log => "git_log",
            GitTool::Show => "git_show",
            GitTool::Diff => "git_diff",
            GitTool::Blame => "git_blame",
            GitTool::MergeBase => "git_merge_base",
            GitTool::LsFiles => "git_ls_files",
        }
    }

    /// The params the tool takes, in its schema's order (engine/src/tools
    /// describes each; a test there keeps both in step).
    pub fn params(&self) -> &'static [&'static str] {
        match self {
            GitTool::Log => &["ref", "path", "maxCount", "since", "format"],
            GitTool::Show => &["ref", "path", "nameOnly"],
            GitTool::Diff => &["base", "head", "path", "nameOnly", "stat", "unified"],
            GitTool::Blame => &["path", "ref", "lineStart", "lineEnd"],
            GitTool::MergeBase => &["base", "head"],
            GitTool::LsFiles => &["path"],
        }
    }
}

impl fmt::Display for GitTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a revision looks like, for messages.
const REVISION_SHAPE: &str =
    "a string holding a git revision such as \"main\", \"HEAD~2\" or a commit hash";
/// What a path looks like, for messages.
const PATH_SHAPE: &str = "a string holding a path inside the repository such as \"src/lib.rs\"";

/// Reads a model's params for one tool; absent keys and `null` are "not given".
struct Params<'a> {
    tool: GitTool,
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Params<'a> {
    fn new(tool: GitTool, params: &'a Value) -> Result<Self, GitRefusal> {
        match params {
            Value::Null => Ok(Params { tool, map: None }),
            Value::Object(map) => {
                // As every tool's schema says (additionalProperties: false):
                // a key the tool does not take is refused, never ignored.
                let known = tool.params();
                if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
                    return Err(GitRefusal(format!(
                        "{tool}: unknown parameter {}: this tool takes only {}",
                        quote(key),
                        known.join(", ")
                    )));
                }
                Ok(Params {
                    tool,
                    map: Some(map),
                })
            }
            other => Err(GitRefusal(format!(
                "{tool}: params must be a JSON object such as {{\"path\": \"src/lib.rs\"}}, not {}",
                json_kind(other)
            ))),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(key)).filter(|v| !v.is_null())
    }

    fn refuse(&self, message: String) -> GitRefusal {
        GitRefusal(format!("{}: {message}", self.tool))
    }

    fn string(&self, key: &str, shape: &str) -> Result<Option<&'a str>, GitRefusal> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => {
                Err(self.refuse(format!("{key} must be {shape}, not {}", json_kind(other))))
            }
        }
    }

    fn bool(&self, key: &str) -> Result<bool, GitRefusal> {
        match self.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(self.refuse(format!(
                "{key} must be true or false, not {}",
                json_kind(other)
            ))),
        }
    }

    /// A number, forgiven as NeuroLink forgives it: floored, then clamped
    /// to `min..=max`. Only a value that is not a number is refused; `what`
    /// completes "must be …".
    fn clamped(
        &self,
        key: &str,
        min: i64,
        max: i64,
        what: &str,
    ) -> Result<Option<i64>, GitRefusal> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        match value {
            Value::Number(n) => Ok(Some(match n.as_i64() {
                Some(i) => i.clamp(min, max),
                // `as` saturates: ±1e300 lands on i64's ends, then the clamp.
                None => (n.as_f64().unwrap_or(0.0).floor() as i64).clamp(min, max),
            })),
            _ => Err(self.refuse(format!(
                "{key} must be {what}, not {}",
                json_value_for_message(value)
            ))),
        }
    }

    fn revision(&self, key: &str) -> Result<Option<String>, GitRefusal> {
        match self.string(key, REVISION_SHAPE)? {
            None => Ok(None),
            Some(s) => validate_ref_field(key, s)
                .map(Some)
                .map_err(|e| self.refuse(e.0)),
        }
    }

    fn required_revision(&self, key: &str) -> Result<String, GitRefusal> {
        self.revision(key)?
            .ok_or_else(|| self.refuse(format!("{key} is required: give {REVISION_SHAPE}")))
    }

    fn path(&self, key: &str, real_root: &Path) -> Result<Option<String>, GitRefusal> {
        match self.string(key, PATH_SHAPE)? {
            None => Ok(None),
            Some(s) => resolve_repo_path(real_root, s)
                .map(Some)
                .map_err(|e| self.refuse(e.0)),
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn json_value_for_message(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("the string {}", quote(s)),
        other => json_kind(other).to_string(),
    }
}

/// Parse a model's params (a JSON object; absent keys and JSON null both
/// mean "not given"; wrong types refused naming the expected shape, e.g.
/// "git_log: maxCount must be a number …"; numbers themselves are floored
/// and clamped, never refused) and build the args
/// after the prefix. `real_root` is the repository root paths must stay in
/// (the git process must run with it as its working directory, since paths
/// are passed relative to it). Keys a tool does not take are refused.
pub fn tool_args(
    tool: GitTool,
    params: &Value,
    real_root: &Path,
) -> Result<Vec<String>, GitRefusal> {
    let p = Params::new(tool, params)?;
    match tool {
        GitTool::Log => {
            let reference = p.revision("ref")?;
            let path = p.path("path", real_root)?;
            let max_count = p
                .clamped(
                    "maxCount",
                    1,
                    i64::from(args::MAX_MAX_COUNT),
                    &format!(
                        "a number (floored and clamped to 1..{})",
                        args::MAX_MAX_COUNT
                    ),
                )?
                .map_or(args::DEFAULT_MAX_COUNT, |n| n as u32);
            let since = match p.string(
                "since",
                "a string holding a date such as \"2 weeks ago\" or \"2024-01-31\"",
            )? {
                None => None,
                Some(s) => Some(validate_since(s).map_err(|e| p.refuse(e.0))?),
            };
            let format = match p.string("format", "one of \"oneline\", \"full\", \"stat\", \"name-only\"")? {
                None => LogFormat::default(),
                Some(name) => LogFormat::from_name(name.trim()).ok_or_else(|| {
                    p.refuse(format!(
                        "format must be one of \"oneline\", \"full\", \"stat\", \"name-only\", not {}",
                        quote(name)
                    ))
                })?,
            };
            Ok(args::log(&LogArgs {
                reference,
                path,
                max_count,
                since,
                format,
            }))
        }
        GitTool::Show => {
            let reference = p.required_revision("ref")?;
            let path = p.path("path", real_root)?;
            let name_only = p.bool("nameOnly")?;
            Ok(args::show(&ShowArgs {
                reference,
                path,
                name_only,
            }))
        }
        GitTool::Diff => {
            let base = p.revision("base")?;
            let head = p.revision("head")?;
            let path = p.path("path", real_root)?;
            let name_only = p.bool("nameOnly")?;
            let stat = p.bool("stat")?;
            let unified = p
                .clamped(
                    "unified",
                    0,
                    i64::from(args::MAX_UNIFIED),
                    &format!("a number (floored and clamped to 0..{})", args::MAX_UNIFIED),
                )?
                .map(|n| n as u32);
            if head.is_some() && base.is_none() {
                return Err(p.refuse(
                    "head needs a base: give base too (e.g. base \"main\", head \"HEAD\"), \
                     or give base alone to compare it with the working tree"
                        .to_string(),
                ));
            }
            Ok(args::diff(&DiffArgs {
                base,
                head,
                path,
                name_only,
                stat,
                unified,
            }))
        }
        GitTool::Blame => {
            let path = p
                .path("path", real_root)?
                .ok_or_else(|| p.refuse(format!("path is required: give {PATH_SHAPE}")))?;
            let reference = p.revision("ref")?;
            let line = |key: &str| {
                p.clamped(key, 1, i64::MAX, "a line number (floored, at least 1)")
                    .map(|n| n.map(|n| n as u64))
            };
            let lines = args::blame_range(line("lineStart")?, line("lineEnd")?)?;
            Ok(args::blame(&BlameArgs {
                path,
                reference,
                lines,
            }))
        }
        GitTool::MergeBase => {
            let base = p.required_revision("base")?;
            let head = p.required_revision("head")?;
            Ok(args::merge_base(&base, &head))
        }
        GitTool::LsFiles => {
            let path = p.path("path", real_root)?;
            Ok(args::ls_files(path.as_deref()))
        }
    }
}

/// The full argv: git executable + the hardening prefix + args.
///
/// The prefix is `--no-pager`, the three [`FIXED_PREFIX`] pairs
/// (`-c color.ui=false -c diff.external= -c core.fsmonitor=false`, in that
/// order) and then every [`HARDENING`] pair as `-c key=value`.
pub fn full_argv(git_executable: &str, args: &[String]) -> Vec<String> {
    let mut argv = Vec::with_capacity(2 + 2 * (FIXED_PREFIX.len() + HARDENING.len()) + args.len());
    argv.push(git_executable.to_string());
    argv.push("--no-pager".to_string());
    for (key, value) in FIXED_PREFIX.iter().chain(HARDENING) {
        argv.push("-c".to_string());
        argv.push(format!("{key}={value}"));
    }
    argv.extend(args.iter().cloned());
    argv
}

/// [`full_argv`] with the `-c` pairs of [`driver_overrides`] placed between
/// the hardening prefix and the tool's args.
pub fn full_argv_with_overrides(
    git_executable: &str,
    overrides: &[String],
    args: &[String],
) -> Vec<String> {
    let mut argv = full_argv(git_executable, overrides);
    argv.extend(args.iter().cloned());
    argv
}

/// The argv a tool call runs in `root`: [`full_argv_with_overrides`] with
/// the work tree pinned to `root` ([`work_tree_arg`]) right before the
/// tool's args.
pub fn pinned_argv(
    git_executable: &str,
    root: &Path,
    overrides: &[String],
    args: &[String],
) -> Vec<String> {
    let mut with = overrides.to_vec();
    with.push(work_tree_arg(root));
    full_argv_with_overrides(git_executable, &with, args)
}

/// The replaced environment, given the parent's PATH and HOME: `LANG=C`,
/// `LC_ALL=C`, `GIT_TERMINAL_PROMPT=0`, `GIT_OPTIONAL_LOCKS=0`,
/// `GIT_PAGER=cat`, then `PATH` and `HOME` when given. Nothing else may be
/// inherited (clear the environment before applying it).
pub fn git_env(path: Option<&str>, home: Option<&str>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("LANG", "C"),
        ("LC_ALL", "C"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_OPTIONAL_LOCKS", "0"),
        ("GIT_PAGER", "cat"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if let Some(path) = path {
        env.push(("PATH".to_string(), path.to_string()));
    }
    if let Some(home) = home {
        env.push(("HOME".to_string(), home.to_string()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

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
