//! The six tools and the argv each call becomes.

use std::fmt;
use std::path::Path;

use serde_json::{Map, Value};

use super::args::{self, BlameArgs, DiffArgs, LogArgs, LogFormat, ShowArgs};
use super::validate::{quote, resolve_repo_path, validate_ref_field, validate_since};
use super::GitRefusal;

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
            Value::Object(map) => Ok(Params {
                tool,
                map: Some(map),
            }),
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
/// are passed relative to it). Keys a tool does not know are ignored.
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
                    "a number (floored and clamped to 1..500)",
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
                    "a number (floored and clamped to 0..50)",
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
