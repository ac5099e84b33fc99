//! Every refusal and failure the engine reports, with the message a caller
//! sees. Messages name the fix: a host developer or a model reading one should
//! know what to do next without opening the docs.

use std::fmt;

/// Why a call was refused or failed. `Display` is the message callers see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// No policy was declared for this host.
    NoPolicy,
    /// A value has the wrong type or shape; the message says what was expected.
    BadInput(String),
    /// argv[0] looks like a shell line.
    ShellString(String),
    /// argv[0] is not in `allowedExecutables`.
    NotAllowed {
        executable: String,
        allowed: Vec<String>,
    },
    /// The cwd sandbox refused the directory.
    Sandbox(String),
    /// The policy's `allowlist` hook refused; the message is the hook's (or says what it returned).
    Vetoed(String),
    /// An unknown task id for this host.
    UnknownTask { task_id: String, known: Vec<String> },
    /// An unknown artifact id.
    UnknownArtifact(String),
    /// An unknown signal name.
    UnknownSignal(String),
    /// The git toolset was not configured for this host.
    GitNotConfigured,
    /// A step the git toolset runs before the tool's own git run (the
    /// configuration listing, `rev-parse`) failed or refused the repository;
    /// the message says which and how to fix it.
    GitFailed(String),
    /// The log directory could not be prepared.
    LogDir(String),
    /// A log or artifact could not be read, or the host has no file
    /// descriptor left; the message names the file and the fix.
    Io(String),
    /// The host process is exiting: nothing starts any more.
    HostExiting,
    /// The command is settled, or its input is closed, so it cannot take the
    /// call (input, resize); the message says which.
    NotRunning(String),
    /// The command's logs were removed (budget, age, prune); the message says when and why.
    LogsRemoved(String),
    /// The file at a log's place is not the log the runner created.
    LogReplaced(String),
    /// Anything else, already phrased.
    Other(String),
    /// Confinement was asked for and this kernel cannot enforce all of it;
    /// the text names what is missing.
    ConfinementUnavailable(String),
    /// A resource limit was asked for and cannot be enforced for the whole
    /// tree here; the text names the limit and why.
    LimitUnavailable(String),
    /// An argument a `.cmd`/`.bat` program would get through `cmd.exe`,
    /// which would read it as syntax (Windows, SPEC §14); the text names
    /// the argument. Same code as [`EngineError::ShellString`].
    ShellArgument(String),
    /// A task directory's manifest failed the ownership or identity checks
    /// when it was recovered; the text says which.
    RecoveryRefused(String),
    /// No native binary loads for this platform. The JS adapter raises it
    /// (the engine is not loaded then); the kind exists so the code table is
    /// one list.
    NativeMissing(String),
}

impl EngineError {
    /// The stable `NLC_*` code of this kind of refusal (SPEC §7): host code
    /// branches on it, never on the message, which stays free to improve.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::NoPolicy => "NLC_NO_POLICY",
            EngineError::BadInput(_) | EngineError::UnknownSignal(_) => "NLC_INVALID_ARGUMENT",
            EngineError::ShellString(_) | EngineError::ShellArgument(_) => "NLC_SHELL_SYNTAX",
            EngineError::NotAllowed { .. } => "NLC_NOT_ALLOWED",
            EngineError::Sandbox(_) => "NLC_OUTSIDE_ROOT",
            EngineError::Vetoed(_) => "NLC_VETOED",
            EngineError::UnknownTask { .. } => "NLC_UNKNOWN_TASK",
            EngineError::UnknownArtifact(_) => "NLC_UNKNOWN_ARTIFACT",
            EngineError::GitNotConfigured => "NLC_GIT_NOT_CONFIGURED",
            EngineError::GitFailed(_) => "NLC_GIT_FAILED",
            EngineError::LogDir(_) => "NLC_LOG_DIR",
            EngineError::Io(_) => "NLC_IO",
            EngineError::HostExiting => "NLC_HOST_EXITING",
            EngineError::ConfinementUnavailable(_) => "NLC_CONFINEMENT_UNAVAILABLE",
            EngineError::LimitUnavailable(_) => "NLC_LIMIT_UNAVAILABLE",
            EngineError::RecoveryRefused(_) => "NLC_RECOVERY_REFUSED",
            EngineError::NotRunning(_) => "NLC_NOT_RUNNING",
            EngineError::LogsRemoved(_) => "NLC_LOGS_REMOVED",
            EngineError::LogReplaced(_) => "NLC_LOG_REPLACED",
            EngineError::Other(_) => "NLC_INTERNAL",
            EngineError::NativeMissing(_) => "NLC_NATIVE_MISSING",
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::NoPolicy => f.write_str(
                "No background command policy is set for this host: call setBackgroundCommandPolicy(host, { allowedExecutables: [...], cwdRoot: \"...\" }) before starting commands",
            ),
            EngineError::BadInput(m)
            | EngineError::Sandbox(m)
            | EngineError::Vetoed(m)
            | EngineError::LogDir(m)
            | EngineError::Io(m)
            | EngineError::NotRunning(m)
            | EngineError::LogsRemoved(m)
            | EngineError::LogReplaced(m)
            | EngineError::Other(m)
            | EngineError::GitFailed(m)
            | EngineError::RecoveryRefused(m)
            | EngineError::ShellArgument(m)
            | EngineError::NativeMissing(m) => f.write_str(m),
            EngineError::LimitUnavailable(m) => write!(
                f,
                "{m}. Nothing was started (nothing runs half-limited)"
            ),
            EngineError::HostExiting => f.write_str(
                "The host process is exiting: no background command starts any more",
            ),
            EngineError::ShellString(exe) => write!(
                f,
                "argv[0] {:?} looks like a shell command line, but commands run with NO shell: pass the executable alone as argv[0] and each argument as its own argv entry, e.g. [\"/usr/bin/pnpm\", \"run\", \"lint\"]",
                clip(exe)
            ),
            EngineError::NotAllowed { executable, allowed } => {
                write!(f, "Executable {:?} is not allowed: argv[0] must equal one of allowedExecutables exactly (no basename or PATH matching). ", clip(executable))?;
                if allowed.is_empty() {
                    f.write_str("The policy allows no executable at all; add it to allowedExecutables.")
                } else {
                    let list: Vec<String> =
                        allowed.iter().take(LIST_MAX).map(|a| format!("{:?}", clip(a))).collect();
                    write!(f, "Allowed: {}", list.join(", "))?;
                    if allowed.len() > LIST_MAX {
                        write!(f, " and {} more", allowed.len() - LIST_MAX)?;
                    }
                    Ok(())
                }
            }
            EngineError::UnknownTask { task_id, known } => {
                write!(f, "No background command \"{}\" for this host. ", clip(task_id))?;
                if known.is_empty() {
                    f.write_str("This host has started none yet; use the taskId returned by startBackgroundCommand.")
                } else {
                    // The newest ones are the likely meant ones; a long-lived
                    // host may have thousands.
                    let skip = known.len().saturating_sub(LIST_MAX);
                    if skip > 0 {
                        write!(f, "Its newest {LIST_MAX} of {} task ids: ", known.len())?;
                    } else {
                        f.write_str("Its task ids: ")?;
                    }
                    f.write_str(&known[skip..].join(", "))
                }
            }
            EngineError::UnknownArtifact(id) => write!(
                f,
                "No artifact \"{}\" in the built-in bank: use the artifactId from a settled command's status.stdout or status.stderr",
                clip(id)
            ),
            EngineError::UnknownSignal(name) => write!(
                f,
                "Unknown signal {:?}: use one of {}",
                clip(name),
                crate::process::signals::NAMES.join(", ")
            ),
            EngineError::ConfinementUnavailable(m) => write!(
                f,
                "Confinement was asked for, but this kernel cannot enforce all of it: {m}. Nothing was started (nothing runs half-confined). To run commands unconfined explicitly, set confine: false in the policy and leave options.confine out"
            ),
            EngineError::GitNotConfigured => f.write_str(
                "The git tools are not configured for this host: call configureGitTools(host, { repoRoot }) (NeuroLink: registerGitTools) first",
            ),
        }
    }
}

impl std::error::Error for EngineError {}

/// The longest caller-given value a message repeats, in characters.
pub const SHOWN_MAX: usize = 200;
/// The most entries of a caller-given list a message repeats.
const LIST_MAX: usize = 50;

/// A caller-given value as a message repeats it: whole up to [`SHOWN_MAX`]
/// characters, else its start, `…` and its length (a 10 MiB argument must not
/// become a 10 MiB message).
pub fn clip(value: &str) -> std::borrow::Cow<'_, str> {
    match value.char_indices().nth(SHOWN_MAX) {
        None => std::borrow::Cow::Borrowed(value),
        Some((cut, _)) => std::borrow::Cow::Owned(format!(
            "{}…({} characters)",
            &value[..cut],
            value.chars().count()
        )),
    }
}

/// What a start refused for want of file descriptors tells the host to do.
pub const OUT_OF_FDS_ADVICE: &str = "The host process has run out of file descriptors (each running command holds about five): let commands finish or raise the limit (ulimit -n), then start it again.";

/// Whether an OS error means the process (EMFILE) or the system (ENFILE) has
/// no file descriptor left.
pub fn out_of_fds(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

/// What to do about an OS error that kept a command from starting, when the
/// error itself is not about the executable.
pub fn start_failure_advice(e: &std::io::Error) -> Option<&'static str> {
    if out_of_fds(e) {
        Some(OUT_OF_FDS_ADVICE)
    } else if e.raw_os_error() == Some(libc::E2BIG) {
        Some("Its arguments and environment together exceed what the system lets one process receive (on Linux each argument may hold at most 128 KiB, all of them about 2 MiB): pass large data through a file instead.")
    } else if matches!(e.raw_os_error(), Some(libc::ENOMEM) | Some(libc::EAGAIN)) {
        Some("The system refused to create another process (memory or process limit): let commands finish, then start it again.")
    } else {
        None
    }
}

/// Shorthand for engine results.
pub type EngineResult<T> = Result<T, EngineError>;

/// An OS error without Rust's "(os error N)" suffix.
pub fn os_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// A number spelled as JS would print it.
pub fn js_number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else if v == v.trunc() && v.abs() < 1e21 {
        format!("{}", v as i128)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_task_lists_at_most_the_newest_fifty() {
        let known: Vec<String> = (0..120).map(|i| format!("c{i}")).collect();
        let m = EngineError::UnknownTask {
            task_id: "x".into(),
            known,
        }
        .to_string();
        assert!(
            m.starts_with(
                "No background command \"x\" for this host. Its newest 50 of 120 task ids: c70, "
            ),
            "{m}"
        );
        assert!(m.ends_with("c119"));
        let m = EngineError::UnknownTask {
            task_id: "x".into(),
            known: vec!["c1".into()],
        }
        .to_string();
        assert!(m.ends_with("Its task ids: c1"), "{m}");
    }

    #[test]
    fn each_kind_has_its_own_code() {
        let kinds = [
            EngineError::NoPolicy,
            EngineError::BadInput(String::new()),
            EngineError::ShellString(String::new()),
            EngineError::NotAllowed {
                executable: String::new(),
                allowed: vec![],
            },
            EngineError::Sandbox(String::new()),
            EngineError::Vetoed(String::new()),
            EngineError::UnknownTask {
                task_id: String::new(),
                known: vec![],
            },
            EngineError::UnknownArtifact(String::new()),
            EngineError::GitNotConfigured,
            EngineError::GitFailed(String::new()),
            EngineError::LogDir(String::new()),
            EngineError::Io(String::new()),
            EngineError::HostExiting,
            EngineError::ConfinementUnavailable(String::new()),
            EngineError::LimitUnavailable(String::new()),
            EngineError::RecoveryRefused(String::new()),
            EngineError::NotRunning(String::new()),
            EngineError::LogsRemoved(String::new()),
            EngineError::LogReplaced(String::new()),
            EngineError::Other(String::new()),
            EngineError::NativeMissing(String::new()),
        ];
        let codes: std::collections::HashSet<&str> = kinds.iter().map(|k| k.code()).collect();
        assert_eq!(codes.len(), kinds.len());
        assert!(codes.iter().all(|c| c.starts_with("NLC_")));
        // A bad signal name is an invalid argument like any other.
        assert_eq!(
            EngineError::UnknownSignal("X".into()).code(),
            "NLC_INVALID_ARGUMENT"
        );
        // A batch argument cmd.exe would read as syntax is shell syntax too.
        assert_eq!(
            EngineError::ShellArgument("X".into()).code(),
            "NLC_SHELL_SYNTAX"
        );
    }

    #[test]
    fn long_values_are_clipped() {
        let long = "a".repeat(10_000);
        let m = EngineError::UnknownSignal(long).to_string();
        assert!(
            m.len() < 1000 && m.contains("(10000 characters)"),
            "{}",
            m.len()
        );
    }
}
