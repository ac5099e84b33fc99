//! The changing part of a record and the values it is made of: the public
//! state, the refs a settled command is banked as, a removal, the settled
//! flag and the bank mode. Plain data below [`super::record`], which
//! re-exports it (callers name these `record::…`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::sync::Notify;

/// The public states of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not yet confirmed started by the OS.
    Queued,
    /// Started and not settled.
    Running,
    /// Ended on its own (or could not start).
    Exited,
    /// Stopped by a signal: a kill, an abort, a disposed host, a log write failure, or a signal nobody here sent.
    Killed,
    /// Stopped because it outlived its budget.
    Timeout,
    /// Stopped because a stream reached the byte cap.
    OutputLimit,
}

impl State {
    /// The name callers see.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Running => "running",
            State::Exited => "exited",
            State::Killed => "killed",
            State::Timeout => "timeout",
            State::OutputLimit => "output-limit",
        }
    }

    /// Whether this is a final state.
    pub fn is_settled(self) -> bool {
        !matches!(self, State::Queued | State::Running)
    }
}

/// A banked stream, as a host's bank or the built-in bank describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactRef {
    /// The bank's id ("" when banking failed).
    pub artifact_id: String,
    /// `"<label> [stdout]"`.
    pub label: String,
    /// Always `"command-output"` for refs this engine makes.
    pub kind: String,
    /// Bytes of the stream.
    pub size_bytes: f64,
    /// The first characters of the stream.
    pub preview: String,
    /// How to read the whole stream back.
    pub read_back_hint: String,
}

/// The part of a record that changes.
#[derive(Debug)]
pub struct Live {
    /// The public state (final only once refs are published).
    pub state: State,
    /// Exit code, when it exited with one.
    pub exit_code: Option<i32>,
    /// Number of the signal that ended it (its name is spelled when a status is built).
    pub signal: Option<i32>,
    /// What went wrong, if anything did.
    pub error: Option<String>,
    /// When the process ended (or failed to start).
    pub ended: Option<Instant>,
    /// Both refs, once banked.
    pub refs: Option<Refs>,
    /// Whether a caller looked at it after it settled.
    pub looked_at: bool,
    /// How many of its sockets its confinement refused (counted by the
    /// engine's seccomp listener; confined without network only).
    pub refused_sockets: u16,
    /// How many of its connects and sends to a unix socket outside its
    /// write trees its confinement refused (read set `"all"` only). Both
    /// counts saturate at 16 bits: a settled record stays within its
    /// memory budget.
    pub refused_unix: u16,
    /// Whether the runner or a caller stopped it.
    pub killed: bool,
    /// Where `readNewBackgroundCommandOutput` left off, per stream, in UTF-16 units.
    pub follow: [u64; 2],
    /// Set (under this lock, before any file is unlinked) when the logs
    /// were removed: every open of a log checks it under the same lock.
    pub removed: Option<Box<Removal>>,
    /// What its tree used, once settled (where measurable), and the
    /// resource limit that stopped it.
    pub usage: crate::process::limits::Packed,
}

impl Live {
    /// A command not yet started: queued, nothing read, nothing decided.
    pub fn queued() -> Self {
        Self {
            state: State::Queued,
            exit_code: None,
            signal: None,
            error: None,
            ended: None,
            refs: None,
            looked_at: false,
            refused_sockets: 0,
            refused_unix: 0,
            killed: false,
            follow: [0, 0],
            removed: None,
            usage: crate::process::limits::Packed::NONE,
        }
    }
}

/// When and why a command's logs were removed.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    /// Epoch ms of the removal.
    pub at_ms: f64,
    /// Why, e.g. "the log budget (maxTotalBytes 4194304) was exceeded".
    pub why: String,
}

/// A settled command's refs, as the record keeps them.
#[derive(Debug, Clone, PartialEq)]
pub enum Refs {
    /// In the built-in bank, where the log file is the artifact: the refs are
    /// rebuilt from the finished logs whenever a status asks (they cannot
    /// change), so a settled record keeps no copy of them.
    BuiltIn,
    /// What the host's bank gave (or the fallback refs saying why it did not).
    Kept(Box<[ArtifactRef; 2]>),
}

/// The settled flag and the waiters on it (an atomic and a `Notify`: far
/// smaller than a watch channel, which every record would keep forever).
#[derive(Debug, Default)]
pub struct Settled {
    flag: AtomicBool,
    notify: Notify,
}

impl Settled {
    /// Not settled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the settled state is published.
    pub fn get(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Publish the settled state and wake every waiter.
    pub fn publish(&self) {
        self.flag.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Resolve once the settled state is published.
    pub async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Registered before the check, so a publish in between still wakes it.
            notified.as_mut().enable();
            if self.get() {
                return;
            }
            notified.await;
        }
    }
}

/// How a settled command is banked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BankMode {
    /// The built-in bank: the log file is the artifact.
    BuiltIn,
    /// The host's `bankArtifact`, reached through the listener.
    Host,
}
