//! `runGitCommand`: git on the command engine under a private
//! one-executable policy rooted at the repository, with the hardened argv
//! prefix and the replaced environment. It neither needs nor widens the
//! host's command policy, and its runs stay out of the host's lists and
//! counters.

use std::path::PathBuf;

use crate::errors::{EngineError, EngineResult};
use crate::git;
use crate::jobs::commands::{self, StartContext, StartOptions};
use crate::jobs::record::{ArtifactRef, BankMode, State};
use crate::jobs::registry;
pub use crate::jobs::registry::GitSettings;
use crate::policy::cwd;
use crate::policy::{self, Policy, PolicyInput};
use crate::text::capture::Stream;

/// Default git budget.
pub const DEFAULT_TIMEOUT_MS: f64 = 60_000.0;
/// Default git output cap.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 33_554_432;
/// Default preview length.
pub const DEFAULT_PREVIEW_CHARS: u32 = 2000;

/// Options as the caller gave them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GitInput {
    /// The repository (required).
    pub repo_root: String,
    /// Budget per git run.
    pub timeout_ms: Option<f64>,
    /// Cap per stream.
    pub max_output_bytes: Option<f64>,
    /// Preview length (clamped 1..4000).
    pub preview_chars: Option<f64>,
    /// The git executable.
    pub git_executable: Option<String>,
}

/// Validate and store a host's git settings.
pub fn configure(host: u32, input: GitInput) -> EngineResult<GitSettings> {
    let real = cwd::real_root(&input.repo_root).map_err(|_| {
        EngineError::BadInput(format!(
            "repoRoot {:?} is not an existing directory: pass the path of the repository's working tree",
            input.repo_root
        ))
    })?;
    let git_executable = input.git_executable.unwrap_or_else(|| "git".to_string());
    if git_executable.trim().is_empty() {
        return Err(EngineError::BadInput(
            "gitExecutable must name the git executable (e.g. \"git\" or \"/usr/bin/git\"), not an empty string".into(),
        ));
    }
    policy::check_argv(std::slice::from_ref(&git_executable))?;
    policy::check_not_shell(&git_executable)?;
    let preview = match input.preview_chars {
        None => DEFAULT_PREVIEW_CHARS,
        Some(p) if p.is_nan() => {
            return Err(EngineError::BadInput(
                "previewChars must be a number from 1 to 4000".into(),
            ));
        }
        Some(p) => p.floor().clamp(1.0, 4000.0) as u32,
    };
    let settings = GitSettings {
        repo_root: real,
        timeout_ms: policy::positive_or("timeoutMs", input.timeout_ms, DEFAULT_TIMEOUT_MS)?,
        max_output_bytes: policy::bytes_or(
            "maxOutputBytes",
            input.max_output_bytes,
            DEFAULT_MAX_OUTPUT_BYTES,
        )?,
        preview_chars: preview,
        git_executable,
    };
    registry::with_host(host, |h| h.git = Some(settings.clone()));
    Ok(settings)
}

/// The host's git settings, or the error that says how to configure them.
pub fn settings(host: u32) -> EngineResult<GitSettings> {
    registry::with_host(host, |h| h.git.clone()).ok_or(EngineError::GitNotConfigured)
}

/// The result of one git run.
#[derive(Debug, Clone, PartialEq)]
pub struct GitResult {
    /// The exact argv.
    pub command: Vec<String>,
    /// The command as a person would write it: `git` and the tool's args,
    /// without the fixed hardening prefix (`--no-pager` and the `-c` pairs).
    pub command_line: String,
    /// Exit 0.
    pub ok: bool,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Final state.
    pub state: State,
    /// The first previewChars characters of stdout, plus "…" when more.
    pub preview: String,
    /// stdout's ref.
    pub output: ArtifactRef,
    /// The output ref's hint.
    pub read_back_hint: String,
    /// The first 600 characters of stderr ("…" when more), when stderr is not empty.
    pub stderr_preview: Option<String>,
    /// The run's task id (for reading its logs).
    pub task_id: String,
}

/// Start git with `args` after the hardened prefix and the per-name
/// overrides that `git::driver_overrides` found; returns its task id.
pub fn start(
    host: u32,
    args: &[String],
    session: Option<String>,
    tmpdir: PathBuf,
    bank: BankMode,
) -> EngineResult<String> {
    let s = settings(host)?;
    let env = env();
    let overrides = git::driver_overrides(
        &s.git_executable,
        &s.repo_root,
        &env,
        crate::policy::duration_ms(s.timeout_ms),
    )
    .map_err(|e| EngineError::Other(format!("git refused to run: {e}")))?;
    let root = s.repo_root.to_string_lossy().into_owned();
    let argv = git::full_argv_with_overrides(&s.git_executable, &overrides, args);
    let policy = Policy::new(PolicyInput {
        allowed_executables: vec![s.git_executable.clone()],
        cwd_root: root.clone(),
        default_timeout_ms: Some(s.timeout_ms),
        max_output_bytes: Some(s.max_output_bytes as f64),
        kill_grace_ms: None,
    })?;
    let label = format!("git {}", args.first().map(String::as_str).unwrap_or(""));
    let handle = commands::start(
        argv,
        StartOptions {
            cwd: root,
            env: Some(env),
            label: Some(label),
            session_id: session,
            ..Default::default()
        },
        StartContext {
            host,
            policy: Some(policy),
            veto: None,
            tmpdir,
            context_session: None,
            bank,
            hidden: true,
        },
    )?;
    Ok(handle.task_id)
}

/// The replaced environment: the contract's variables plus PATH and HOME from this process.
fn env() -> Vec<(String, String)> {
    git::git_env(
        std::env::var("PATH").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    )
}

/// Wait for a started git run to settle and describe it.
pub async fn result(host: u32, task_id: &str) -> EngineResult<GitResult> {
    let s = settings(host)?;
    let st = commands::await_settled(host, task_id, None).await?;
    let rec = registry::lookup(host, task_id)?;
    let preview = head(&rec, Stream::Stdout, s.preview_chars as usize);
    let stderr_preview = (st.stderr_bytes > 0.0).then(|| head(&rec, Stream::Stderr, 600));
    let output = st
        .stdout
        .clone()
        .ok_or_else(|| EngineError::Other("a settled git run has no stdout ref".into()))?;
    Ok(GitResult {
        command_line: command_line(&rec.argv),
        command: rec.argv.to_vec(),
        ok: st.exit_code == Some(0),
        exit_code: st.exit_code,
        state: st.state,
        preview,
        read_back_hint: output.read_back_hint.clone(),
        output,
        stderr_preview,
        task_id: task_id.to_string(),
    })
}

/// `git <args>` from a hardened argv: argv[0] becomes `git`, and
/// `--no-pager` and every leading `-c key=value` pair are left out (no tool's
/// args start with `-c`: the first is always the subcommand). An argument
/// that is not plain is single-quoted as a POSIX shell would need it.
pub fn command_line(argv: &[String]) -> String {
    let mut rest = argv.get(1..).unwrap_or_default();
    if rest.first().map(String::as_str) == Some("--no-pager") {
        rest = &rest[1..];
    }
    while rest.len() >= 2 && rest[0] == "-c" {
        rest = &rest[2..];
    }
    let mut line = String::from("git");
    for a in rest {
        line.push(' ');
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=.,/:@%+^~".contains(c));
        if plain {
            line.push_str(a);
        } else {
            line.push('\'');
            line.push_str(&a.replace('\'', "'\\''"));
            line.push('\'');
        }
    }
    line
}

/// Start git and wait for the result. Listing the configuration runs git,
/// so the start happens on a blocking thread.
pub async fn run(
    host: u32,
    args: Vec<String>,
    session: Option<String>,
    tmpdir: PathBuf,
    bank: BankMode,
) -> EngineResult<GitResult> {
    let id = tokio::task::spawn_blocking(move || start(host, &args, session, tmpdir, bank))
        .await
        .map_err(|e| EngineError::Other(format!("git could not be started: {e}")))??;
    result(host, &id).await
}

/// The first `chars` characters of a stream, plus "…" when there is more.
fn head(rec: &crate::jobs::record::Record, s: Stream, chars: usize) -> String {
    match rec.head(s, chars) {
        Ok((mut text, more)) => {
            if more {
                text.push('…');
            }
            text
        }
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod command_line_tests {
    use super::command_line;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_hardening_prefix_is_left_out_and_odd_arguments_are_quoted() {
        let argv = v(&[
            "/usr/bin/git",
            "--no-pager",
            "-c",
            "color.ui=false",
            "-c",
            "core.fsmonitor=false",
            "log",
            "--max-count=20",
            "--oneline",
            "--since=2 weeks ago",
            "--",
            "it's.txt",
        ]);
        assert_eq!(
            command_line(&argv),
            "git log --max-count=20 --oneline '--since=2 weeks ago' -- 'it'\\''s.txt'"
        );
        assert_eq!(command_line(&v(&["git"])), "git");
    }
}
