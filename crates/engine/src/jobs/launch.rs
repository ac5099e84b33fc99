//! What a command's supervisor is started with ([`Launch`]), besides its
//! record: everything the checks in [`super::commands`] produced and only the
//! supervisor goes on to use — the held directory, the environment, the
//! confinement plan, the private temp directory, the open log files, the
//! mailbox and the [`Limits`]. The supervisor takes it apart as it starts.

use std::fs::File;

use tokio::sync::mpsc;

use super::control::Control;
use super::private_tmp::PrivateTmp;
use crate::policy::cwd::HeldDir;
use crate::process::spawn::Input;

/// What the supervisor needs besides the record.
pub struct Launch {
    /// The directory that passed the cwd check.
    pub dir: HeldDir,
    /// The replacing environment, when given.
    pub env: Option<Vec<(String, String)>>,
    /// The kernel confinement to apply, when confined (taken by
    /// [`super::supervisor::launch`], which hands the spawn to a confining
    /// thread).
    pub confine: Option<crate::process::confine::Plan>,
    /// The private temp directory, removed before the command settles.
    pub private_tmp: Option<PrivateTmp>,
    /// What the command reads.
    pub input: Input,
    /// stdout.log and stderr.log, open for writing.
    pub files: [File; 2],
    /// The mailbox.
    pub control: mpsc::UnboundedReceiver<Control>,
    /// The budget and the cap (only the supervisor needs them, so the
    /// record does not keep them).
    pub limits: Limits,
}

/// A command's budget and per-stream byte cap.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Budget in ms.
    pub timeout_ms: f64,
    /// Per-stream cap.
    pub max_output_bytes: u64,
    /// Stop the command when neither stream produced a byte for this long (ms).
    pub idle_timeout_ms: Option<f64>,
    /// Look for the command blocked on its input once it printed nothing
    /// for this long (ms).
    pub input_wait_ms: f64,
}
