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
    /// The log directory could not be prepared.
    LogDir(String),
    /// Anything else, already phrased.
    Other(String),
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
            | EngineError::Other(m) => f.write_str(m),
            EngineError::ShellString(exe) => write!(
                f,
                "argv[0] {exe:?} looks like a shell command line, but commands run with NO shell: pass the executable alone as argv[0] and each argument as its own argv entry, e.g. [\"/usr/bin/pnpm\", \"run\", \"lint\"]"
            ),
            EngineError::NotAllowed { executable, allowed } => {
                write!(f, "Executable {executable:?} is not allowed: argv[0] must equal one of allowedExecutables exactly (no basename or PATH matching). ")?;
                if allowed.is_empty() {
                    f.write_str("The policy allows no executable at all; add it to allowedExecutables.")
                } else {
                    let list: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
                    write!(f, "Allowed: {}", list.join(", "))
                }
            }
            EngineError::UnknownTask { task_id, known } => {
                write!(f, "No background command \"{task_id}\" for this host. ")?;
                if known.is_empty() {
                    f.write_str("This host has started none yet; use the taskId returned by startBackgroundCommand.")
                } else {
                    write!(f, "Its task ids: {}", known.join(", "))
                }
            }
            EngineError::UnknownArtifact(id) => write!(
                f,
                "No artifact \"{id}\" in the built-in bank: use the artifactId from a settled command's status.stdout or status.stderr"
            ),
            EngineError::UnknownSignal(name) => write!(
                f,
                "Unknown signal {name:?}: use one of {}",
                crate::signals::NAMES.join(", ")
            ),
            EngineError::GitNotConfigured => f.write_str(
                "The git tools are not configured for this host: call configureGitTools(host, { repoRoot }) (NeuroLink: registerGitTools) first",
            ),
        }
    }
}

impl std::error::Error for EngineError {}

/// Shorthand for engine results.
pub type EngineResult<T> = Result<T, EngineError>;
