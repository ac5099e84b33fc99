//! The six argv shapes of the git toolset (the part after the hardening
//! prefix). Every value here is already validated: revisions by
//! [`super::validate::validate_ref`], dates by
//! [`super::validate::validate_since`] and paths by
//! [`super::validate::resolve_repo_path`]. Paths always follow `--`.

use super::GitRefusal;

/// The default number of commits `git_log` shows.
pub const DEFAULT_MAX_COUNT: u32 = 20;
/// The largest `maxCount` accepted by `git_log`.
pub const MAX_MAX_COUNT: u32 = 500;
/// The largest `unified` context accepted by `git_diff`.
pub const MAX_UNIFIED: u32 = 50;
/// How many lines `git_blame` covers when only one end of the range is given.
pub const BLAME_SPAN: u64 = 100;

/// The output shape of `git_log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// `--oneline`: abbreviated hash and subject (the default).
    #[default]
    Oneline,
    /// `--pretty=fuller`: full headers and message.
    Full,
    /// `--stat`: the default header plus a diffstat.
    Stat,
    /// `--name-only`: the default header plus the changed paths.
    NameOnly,
}

impl LogFormat {
    /// Parse the tool's `format` value: `oneline`, `full`, `stat` or `name-only`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "oneline" => Some(Self::Oneline),
            "full" => Some(Self::Full),
            "stat" => Some(Self::Stat),
            "name-only" => Some(Self::NameOnly),
            _ => None,
        }
    }

    /// The git flag for this format.
    pub fn flag(self) -> &'static str {
        match self {
            Self::Oneline => "--oneline",
            Self::Full => "--pretty=fuller",
            Self::Stat => "--stat",
            Self::NameOnly => "--name-only",
        }
    }
}

/// Validated inputs of `git_log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogArgs {
    /// The revision (or range) to start from.
    pub reference: Option<String>,
    /// A repository-relative path to limit history to.
    pub path: Option<String>,
    /// How many commits to show (1..=500).
    pub max_count: u32,
    /// Only commits more recent than this date.
    pub since: Option<String>,
    /// The output shape.
    pub format: LogFormat,
}

/// Validated inputs of `git_show`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowArgs {
    /// The object to show.
    pub reference: String,
    /// A repository-relative path to limit the diff to.
    pub path: Option<String>,
    /// List changed paths only.
    pub name_only: bool,
}

/// Validated inputs of `git_diff`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffArgs {
    /// The revision to compare from (absent: the index against the working tree).
    pub base: Option<String>,
    /// The revision to compare to (absent: the working tree); needs `base`.
    pub head: Option<String>,
    /// A repository-relative path to limit the diff to.
    pub path: Option<String>,
    /// List changed paths only.
    pub name_only: bool,
    /// Show a diffstat.
    pub stat: bool,
    /// Lines of context (0..=50).
    pub unified: Option<u32>,
}

/// Validated inputs of `git_blame`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameArgs {
    /// The repository-relative file to annotate.
    pub path: String,
    /// The revision to annotate at (absent: the working tree).
    pub reference: Option<String>,
    /// The inclusive 1-based line range, from [`blame_range`].
    pub lines: Option<(u64, u64)>,
}

/// Work out `git blame -L` from the optional ends of the range: both ends
/// are used as given; a lone start spans [`BLAME_SPAN`] lines
/// (`s,s+99`); a lone end starts 99 lines before it, but not before line 1.
/// A start after the end, or a line below 1, is refused.
pub fn blame_range(start: Option<u64>, end: Option<u64>) -> Result<Option<(u64, u64)>, GitRefusal> {
    for (name, value) in [("lineStart", start), ("lineEnd", end)] {
        if value == Some(0) {
            return Err(GitRefusal(format!(
                "git_blame: {name} must be a positive integer (lines count from 1)"
            )));
        }
    }
    match (start, end) {
        (None, None) => Ok(None),
        (Some(s), None) => Ok(Some((s, s.saturating_add(BLAME_SPAN - 1)))),
        (None, Some(e)) => Ok(Some((e.saturating_sub(BLAME_SPAN - 1).max(1), e))),
        (Some(s), Some(e)) if s > e => Err(GitRefusal(format!(
            "git_blame: lineStart ({s}) must not be greater than lineEnd ({e}); give lineStart <= lineEnd"
        ))),
        (Some(s), Some(e)) => Ok(Some((s, e))),
    }
}

/// Append `-- path` when a path is given.
fn push_path(argv: &mut Vec<String>, path: Option<&str>) {
    if let Some(path) = path {
        argv.push("--".to_string());
        argv.push(path.to_string());
    }
}

/// `log --no-color --no-ext-diff --no-textconv --max-count=N <format> [--since=S] [ref] [-- path]`
pub fn log(a: &LogArgs) -> Vec<String> {
    let mut argv: Vec<String> = ["log", "--no-color", "--no-ext-diff", "--no-textconv"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.push(format!("--max-count={}", a.max_count));
    argv.push(a.format.flag().to_string());
    if let Some(since) = &a.since {
        argv.push(format!("--since={since}"));
    }
    if let Some(reference) = &a.reference {
        argv.push(reference.clone());
    }
    push_path(&mut argv, a.path.as_deref());
    argv
}

/// `show --no-color --no-ext-diff --no-textconv [--name-only] ref [-- path]`
pub fn show(a: &ShowArgs) -> Vec<String> {
    let mut argv: Vec<String> = ["show", "--no-color", "--no-ext-diff", "--no-textconv"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if a.name_only {
        argv.push("--name-only".to_string());
    }
    argv.push(a.reference.clone());
    push_path(&mut argv, a.path.as_deref());
    argv
}

/// `diff --no-color --no-ext-diff --no-textconv [--name-only] [--stat] [-U<n>] [base] [head] [-- path]`
///
/// The caller must refuse a `head` without a `base` (see [`super::tool_args`]).
pub fn diff(a: &DiffArgs) -> Vec<String> {
    let mut argv: Vec<String> = ["diff", "--no-color", "--no-ext-diff", "--no-textconv"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if a.name_only {
        argv.push("--name-only".to_string());
    }
    if a.stat {
        argv.push("--stat".to_string());
    }
    if let Some(n) = a.unified {
        argv.push(format!("-U{n}"));
    }
    if let Some(base) = &a.base {
        argv.push(base.clone());
    }
    if let Some(head) = &a.head {
        argv.push(head.clone());
    }
    push_path(&mut argv, a.path.as_deref());
    argv
}

/// `blame [-L s,e] [ref] -- path`
pub fn blame(a: &BlameArgs) -> Vec<String> {
    let mut argv = vec!["blame".to_string()];
    if let Some((s, e)) = a.lines {
        argv.push("-L".to_string());
        argv.push(format!("{s},{e}"));
    }
    if let Some(reference) = &a.reference {
        argv.push(reference.clone());
    }
    argv.push("--".to_string());
    argv.push(a.path.clone());
    argv
}

/// `merge-base base head`
pub fn merge_base(base: &str, head: &str) -> Vec<String> {
    vec!["merge-base".to_string(), base.to_string(), head.to_string()]
}

/// `ls-files [-- path]`
pub fn ls_files(path: Option<&str>) -> Vec<String> {
    let mut argv = vec!["ls-files".to_string()];
    push_path(&mut argv, path);
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn log_shapes() {
        let mut a = LogArgs {
            reference: None,
            path: None,
            max_count: 20,
            since: None,
            format: LogFormat::default(),
        };
        assert_eq!(
            log(&a),
            v(&[
                "log",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--max-count=20",
                "--oneline"
            ])
        );
        a.format = LogFormat::Full;
        a.max_count = 500;
        a.since = Some("2 weeks ago".into());
        a.reference = Some("main".into());
        a.path = Some("src/a.rs".into());
        assert_eq!(
            log(&a),
            v(&[
                "log",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--max-count=500",
                "--pretty=fuller",
                "--since=2 weeks ago",
                "main",
                "--",
                "src/a.rs"
            ])
        );
        a.format = LogFormat::Stat;
        assert_eq!(log(&a)[5], "--stat");
        a.format = LogFormat::NameOnly;
        assert_eq!(log(&a)[5], "--name-only");
    }

    #[test]
    fn log_format_names() {
        assert_eq!(LogFormat::from_name("oneline"), Some(LogFormat::Oneline));
        assert_eq!(LogFormat::from_name("full"), Some(LogFormat::Full));
        assert_eq!(LogFormat::from_name("stat"), Some(LogFormat::Stat));
        assert_eq!(LogFormat::from_name("name-only"), Some(LogFormat::NameOnly));
        assert_eq!(LogFormat::from_name("raw"), None);
    }

    #[test]
    fn show_shapes() {
        let mut a = ShowArgs {
            reference: "HEAD".into(),
            path: None,
            name_only: false,
        };
        assert_eq!(
            show(&a),
            v(&[
                "show",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "HEAD"
            ])
        );
        a.name_only = true;
        a.path = Some("src".into());
        assert_eq!(
            show(&a),
            v(&[
                "show",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--name-only",
                "HEAD",
                "--",
                "src"
            ])
        );
    }

    #[test]
    fn diff_shapes() {
        let prefix = ["diff", "--no-color", "--no-ext-diff", "--no-textconv"];
        assert_eq!(diff(&DiffArgs::default()), v(&prefix));
        let a = DiffArgs {
            base: Some("main".into()),
            head: Some("HEAD".into()),
            path: Some("a.txt".into()),
            name_only: true,
            stat: true,
            unified: Some(0),
        };
        let mut want = v(&prefix);
        want.extend(v(&[
            "--name-only",
            "--stat",
            "-U0",
            "main",
            "HEAD",
            "--",
            "a.txt",
        ]));
        assert_eq!(diff(&a), want);
        let a = DiffArgs {
            base: Some("HEAD~1".into()),
            unified: Some(50),
            ..DiffArgs::default()
        };
        let mut want = v(&prefix);
        want.extend(v(&["-U50", "HEAD~1"]));
        assert_eq!(diff(&a), want);
    }

    #[test]
    fn blame_shapes() {
        let mut a = BlameArgs {
            path: "a.txt".into(),
            reference: None,
            lines: None,
        };
        assert_eq!(blame(&a), v(&["blame", "--", "a.txt"]));
        a.reference = Some("HEAD~1".into());
        a.lines = Some((5, 104));
        assert_eq!(
            blame(&a),
            v(&["blame", "-L", "5,104", "HEAD~1", "--", "a.txt"])
        );
    }

    #[test]
    fn blame_ranges() {
        assert_eq!(blame_range(None, None).unwrap(), None);
        assert_eq!(blame_range(Some(5), None).unwrap(), Some((5, 104)));
        assert_eq!(blame_range(None, Some(150)).unwrap(), Some((51, 150)));
        assert_eq!(blame_range(None, Some(100)).unwrap(), Some((1, 100)));
        assert_eq!(blame_range(None, Some(30)).unwrap(), Some((1, 30)));
        assert_eq!(blame_range(Some(3), Some(3)).unwrap(), Some((3, 3)));
        assert_eq!(blame_range(Some(3), Some(9)).unwrap(), Some((3, 9)));
        assert_eq!(
            blame_range(Some(u64::MAX), None).unwrap(),
            Some((u64::MAX, u64::MAX))
        );
        let err = blame_range(Some(9), Some(3)).unwrap_err().0;
        assert!(err.contains("must not be greater than lineEnd"), "{err}");
        let err = blame_range(Some(0), None).unwrap_err().0;
        assert!(err.contains("positive integer"), "{err}");
    }

    #[test]
    fn merge_base_and_ls_files_shapes() {
        assert_eq!(
            merge_base("main", "HEAD"),
            v(&["merge-base", "main", "HEAD"])
        );
        assert_eq!(ls_files(None), v(&["ls-files"]));
        assert_eq!(ls_files(Some("src")), v(&["ls-files", "--", "src"]));
    }
}
