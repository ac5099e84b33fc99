//! `runGitCommand`: git on the command engine under a private
//! one-executable policy rooted at the repository, with the hardened argv
//! prefix and the replaced environment. It neither needs nor widens the
//! host's command policy, and its runs stay out of the host's lists and
//! counters.

use std::path::{Path, PathBuf};

use crate::errors::{EngineError, EngineResult};
use crate::git;
use crate::jobs::commands::{self, StartContext, StartOptions};
use crate::jobs::record::{ArtifactRef, BankMode, State};
pub use crate::jobs::registry::GitSettings;
use crate::jobs::state::State as Engine;
use crate::policy::confine::{Confinement, ReadSet, Tmp};
use crate::policy::cwd;
use crate::policy::{self, Policy, PolicyInput};
use crate::text::capture::Stream;
use std::sync::Arc;

/// Default git budget.
pub const DEFAULT_TIMEOUT_MS: f64 = 60_000.0;
/// Default git output cap.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 33_554_432;
/// Default preview length.
pub const DEFAULT_PREVIEW_CHARS: u32 = 2000;
/// Longest preview a host may ask for.
pub const MAX_PREVIEW_CHARS: u32 = 4000;
/// Characters of stderr in a result's `stderrPreview`.
pub const STDERR_PREVIEW_CHARS: usize = 600;

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
    /// `confine`: `Some(false)` runs git unconfined even where the kernel
    /// could confine it.
    pub confine: Option<bool>,
}

/// Validate and store a host's git settings.
pub fn configure(eng: &Engine, host: u32, input: GitInput) -> EngineResult<GitSettings> {
    // A root that does not exist yet is accepted, as NeuroLink accepts it:
    // it is kept as an absolute path (resolved once, now) and every run
    // refuses until it exists (see `settings`). Anything else that is not a
    // directory is refused here.
    let (real, root_pending) = match cwd::real_root(&input.repo_root) {
        Ok(real) => (real, false),
        Err(_) if missing(&input.repo_root) => (
            std::path::absolute(&input.repo_root).map_err(|e| {
                EngineError::BadInput(format!(
                    "repoRoot {:?} cannot be made absolute ({e}): pass the path of the repository's working tree",
                    input.repo_root
                ))
            })?,
            true,
        ),
        Err(_) => {
            return Err(EngineError::BadInput(format!(
                "repoRoot {:?} is not an existing directory: pass the path of the repository's working tree",
                input.repo_root
            )))
        }
    };
    let git_executable = input.git_executable.unwrap_or_else(|| "git".to_string());
    if git_executable.trim().is_empty() {
        return Err(EngineError::BadInput(
            "gitExecutable must name the git executable (e.g. \"git\" or \"/usr/bin/git\"), not an empty string".into(),
        ));
    }
    policy::check_argv(std::slice::from_ref(&git_executable))?;
    policy::check_not_shell(&git_executable)?;
    let git_executable = resolve_executable(&git_executable, std::env::var_os("PATH").as_deref())?;
    let preview = match input.preview_chars {
        None => DEFAULT_PREVIEW_CHARS,
        Some(p) if p.is_nan() => {
            return Err(EngineError::BadInput(format!(
                "previewChars must be a number from 1 to {MAX_PREVIEW_CHARS}"
            )));
        }
        Some(p) => p.floor().clamp(1.0, f64::from(MAX_PREVIEW_CHARS)) as u32,
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
        root_pending,
        confined_why_not: if input.confine == Some(false) {
            Some("the git toolset was configured with confine: false".to_string())
        } else {
            crate::process::confine::missing(false)
        },
        confined: false,
    };
    let settings = GitSettings {
        confined: settings.confined_why_not.is_none(),
        ..settings
    };
    eng.registry
        .with_host(host, |h| h.git = Some(settings.clone()));
    Ok(settings)
}

/// True when `root` names nothing at all (no file, no directory, no link),
/// i.e. a repository root that may still be created.
fn missing(root: &str) -> bool {
    !root.is_empty()
        && !root.contains('\0')
        && matches!(std::fs::symlink_metadata(root), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// The git executable as an absolute path, resolved once at configuration
/// (SPEC §5). An absolute `name` is used as it is; a bare name is looked up
/// in the absolute entries of `path` only — an empty or relative entry
/// (`:/usr/bin`, `.`, `bin`) would resolve against the child's working
/// directory, the repository, so a `git` committed there could run; those
/// entries are skipped. A relative path with a slash (`./git`, `bin/git`)
/// would resolve against the repository too, and is refused.
#[cfg(not(windows))]
pub fn resolve_executable(name: &str, path: Option<&std::ffi::OsStr>) -> EngineResult<String> {
    use crate::platform::PermissionsExt;
    let p = std::path::Path::new(name);
    if p.is_absolute() {
        return Ok(name.to_string());
    }
    if name.contains('/') {
        return Err(EngineError::BadInput(format!(
            "gitExecutable {name:?} is a relative path, which would resolve inside the repository: \
             pass an absolute path such as \"/usr/bin/git\" or a bare name such as \"git\" (looked up in PATH)"
        )));
    }
    let mut skipped = Vec::new();
    if let Some(path) = path {
        for dir in std::env::split_paths(path) {
            if !dir.is_absolute() {
                skipped.push(dir.to_string_lossy().into_owned());
                continue;
            }
            let candidate = dir.join(name);
            let runnable = std::fs::metadata(&candidate)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false);
            if runnable {
                return Ok(candidate.to_string_lossy().into_owned());
            }
        }
    }
    let skipped = if skipped.is_empty() {
        String::new()
    } else {
        format!(
            " (relative or empty entries are skipped: {})",
            skipped
                .iter()
                .map(|d| format!("{d:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(EngineError::BadInput(format!(
        "gitExecutable {name:?} was not found in any absolute PATH entry{skipped}: \
         pass its absolute path (e.g. \"/usr/bin/git\") or fix PATH"
    )))
}

/// [`resolve_executable`] on Windows: `PATHEXT` completes the name, and a
/// path is absolute when it starts with a drive or `\\server\share`.
#[cfg(windows)]
pub fn resolve_executable(name: &str, path: Option<&std::ffi::OsStr>) -> EngineResult<String> {
    git::windows::resolve_executable(name, path, std::env::var("PATHEXT").ok().as_deref())
}

/// The host's git settings, or the error that says how to configure them.
/// A root that did not exist when configured is resolved here, at each run,
/// until it exists; from then on its real path is kept.
pub fn settings(eng: &Engine, host: u32) -> EngineResult<GitSettings> {
    let s = eng
        .registry
        .with_host(host, |h| h.git.clone())
        .ok_or(EngineError::GitNotConfigured)?;
    if !s.root_pending {
        return Ok(s);
    }
    let given = s.repo_root.to_string_lossy().into_owned();
    let real = cwd::real_root(&given).map_err(|_| {
        EngineError::Sandbox(format!(
            "repoRoot {given:?} is not an existing directory (yet): create the repository there, \
             or call configureGitTools (NeuroLink: registerGitTools) again with the path of the repository's working tree"
        ))
    })?;
    let pending_root = s.repo_root.clone();
    let resolved = GitSettings {
        repo_root: real,
        root_pending: false,
        ..s
    };
    // Keep the real path, unless the host configured git again meanwhile.
    eng.registry.with_host(host, |h| {
        if h.git
            .as_ref()
            .is_some_and(|g| g.root_pending && g.repo_root == pending_root)
        {
            h.git = Some(resolved.clone());
        }
    });
    Ok(resolved)
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
    eng: &Arc<Engine>,
    host: u32,
    args: &[String],
    session: Option<String>,
    tmpdir: PathBuf,
    bank: BankMode,
) -> EngineResult<String> {
    let s = settings(eng, host)?;
    let env = env();
    // One confinement for every git process of this call: the listings
    // before the run and the run itself.
    let confinement = s.confined.then(|| git_confinement(&s.repo_root, &env));
    let overrides = git::driver_overrides_confined(
        &s.git_executable,
        &s.repo_root,
        &env,
        crate::policy::duration_ms(s.timeout_ms),
        confinement.as_ref(),
    )
    .map_err(|e| EngineError::GitFailed(format!("git refused to run: {e}")))?;
    let root = s.repo_root.to_string_lossy().into_owned();
    // The work tree is pinned: `core.worktree` from the repository's own
    // configuration could point outside it (see the hardening notes).
    let argv = git::pinned_argv(&s.git_executable, &s.repo_root, &overrides, args);
    let mut policy = Policy::new(PolicyInput {
        allowed_executables: vec![s.git_executable.clone()],
        cwd_root: root.clone(),
        default_timeout_ms: Some(s.timeout_ms),
        max_output_bytes: Some(s.max_output_bytes as f64),
        kill_grace_ms: None,
        confine: None,
        idle_timeout_ms: None,
        input_wait_ms: None,
        limits: None,
    })?;
    policy.confine = confinement;
    let label = format!("git {}", args.first().map(String::as_str).unwrap_or(""));
    let handle = commands::start(
        eng,
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

/// What git may touch: read the system trees, the repository, its git
/// directory and common directory, and the configuration files git reads;
/// write nothing but its private temp directory; no network.
fn git_confinement(repo: &Path, env: &[(String, String)]) -> Confinement {
    let mut read_files: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        if let Ok(real) = std::fs::canonicalize(&p) {
            if !read_files.contains(&real) {
                read_files.push(real);
            }
        }
    };
    // A linked worktree or a submodule has a `.git` file naming its git
    // directory, which names its common directory in `commondir`.
    let dot_git = repo.join(".git");
    if let Ok(text) = std::fs::read_to_string(&dot_git) {
        if let Some(dir) = text.trim_end().strip_prefix("gitdir: ") {
            let gitdir = repo.join(dir);
            if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
                add(gitdir.join(common.trim_end()));
            }
            add(gitdir);
        }
    }
    for p in crate::policy::confine::git_config_paths(Some(env)) {
        add(p);
    }
    Confinement {
        write: Vec::new(),
        read: ReadSet::System,
        exec: Vec::new(),
        network: false,
        // git writes temp files for some answers (blame, diff of blobs):
        // a private TMPDIR, removed when the run settles.
        tmp: Tmp::Private,
        read_files,
        protect: Vec::new(),
        level: Default::default(),
    }
}

/// The replaced environment: the contract's variables plus PATH and HOME from this process.
fn env() -> Vec<(String, String)> {
    // Only the absolute PATH entries: git looks up helper programs in PATH,
    // and an empty or relative entry would find them in the repository.
    let path = std::env::var("PATH").ok().map(|p| absolute_entries(&p));
    #[cfg(not(windows))]
    let home = std::env::var("HOME").ok();
    // Windows has no HOME as a rule: git takes the user's profile for it.
    #[cfg(windows)]
    let home = std::env::var("HOME")
        .or_else(|_| std::env::var("USERPROFILE"))
        .ok();
    #[allow(unused_mut)]
    let mut env = git::git_env(path.as_deref(), home.as_deref());
    // Windows programs need SystemRoot (the system directory; its absence
    // breaks the C runtime's and Winsock's start-up).
    #[cfg(windows)]
    if let Ok(root) = std::env::var("SystemRoot") {
        env.push(("SystemRoot".to_string(), root));
    }
    env
}

/// The absolute entries of a PATH value, in order, joined by `;` (an
/// absolute entry starts with a drive or `\\server\share`).
#[cfg(windows)]
pub fn absolute_entries(path: &str) -> String {
    git::windows::absolute_entries(path)
}

/// The absolute entries of a PATH value, in order, joined by `:`.
#[cfg(not(windows))]
pub fn absolute_entries(path: &str) -> String {
    path.split(':')
        .filter(|d| d.starts_with('/'))
        .collect::<Vec<_>>()
        .join(":")
}

/// Wait for a started git run to settle and describe it.
pub async fn result(eng: &Engine, host: u32, task_id: &str) -> EngineResult<GitResult> {
    let s = settings(eng, host)?;
    let st = commands::await_settled(eng, host, task_id, None).await?;
    let rec = eng.registry.lookup(host, task_id)?;
    let preview = head(&rec, Stream::Stdout, s.preview_chars as usize);
    let stderr_preview =
        (st.stderr_bytes > 0.0).then(|| head(&rec, Stream::Stderr, STDERR_PREVIEW_CHARS));
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
/// `--no-pager`, every leading `-c key=value` pair and the pinned
/// `--work-tree=<root>` are left out (no tool's args start with either: the
/// first is always the subcommand). An argument
/// that is not plain is single-quoted as a POSIX shell would need it.
pub fn command_line(argv: &[String]) -> String {
    let mut rest = argv.get(1..).unwrap_or_default();
    if rest.first().map(String::as_str) == Some("--no-pager") {
        rest = &rest[1..];
    }
    loop {
        match rest.first().map(String::as_str) {
            Some("-c") if rest.len() >= 2 => rest = &rest[2..],
            Some(a) if a.starts_with("--work-tree=") => rest = &rest[1..],
            _ => break,
        }
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
    eng: &Arc<Engine>,
    host: u32,
    args: Vec<String>,
    session: Option<String>,
    tmpdir: PathBuf,
    bank: BankMode,
) -> EngineResult<GitResult> {
    let e = eng.clone();
    let id = tokio::task::spawn_blocking(move || start(&e, host, &args, session, tmpdir, bank))
        .await
        .map_err(|e| EngineError::Other(format!("git could not be started: {e}")))??;
    result(eng, host, &id).await
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
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn git_is_resolved_in_absolute_path_entries_only() {
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        for dir in ["rel", "abs"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
            let exe = base.join(dir).join("tool");
            std::fs::write(&exe, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // "", "." and "rel" would all find a tool relative to a cwd; skipped.
        let path = format!(":.:rel:{}", base.join("abs").display());
        let got = resolve_executable("tool", Some(std::ffi::OsStr::new(&path))).unwrap();
        assert_eq!(got, base.join("abs/tool").to_string_lossy());
        let err = resolve_executable("tool", Some(std::ffi::OsStr::new(":.:rel")))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not found in any absolute PATH entry"),
            "{err}"
        );
        assert!(err.contains("\"rel\""), "{err}");
        assert_eq!(
            resolve_executable("/opt/x/git", None).unwrap(),
            "/opt/x/git"
        );
        let err = resolve_executable("./git", None).unwrap_err().to_string();
        assert!(err.contains("relative path"), "{err}");
        assert_eq!(absolute_entries(":.:/usr/bin:bin:/bin:"), "/usr/bin:/bin");
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
            "--work-tree=/srv/repo",
            "-c",
            "diff.tool=",
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
