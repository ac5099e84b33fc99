//! One command as the registry keeps it: identity, its two logs, and the
//! live part a supervisor updates. Statuses are built fresh from it. A record
//! lives as long as the process, so it keeps only what a status or a later
//! call needs: the task id, label and log paths are derived on demand, and
//! repeated strings are shared.

use crate::sync::Unpoisoned;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, Notify};

pub use super::control::{Control, KillReason};
use super::ids;
use super::input::InputState;
use crate::policy;
use crate::process::signals;
use crate::text::capture::{Stream, StreamLog};
use crate::text::decode::head_text;
use crate::text::logfile::{self, Ident, LogBase, LogGone};
use crate::text::window::tail_text;

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

/// One command.
#[derive(Debug)]
pub struct Record {
    /// The counter its task id is made from (the registry's key); the id
    /// itself is spelled by [`Record::task_id`].
    pub seq: u64,
    /// The host that started it.
    pub host: u32,
    /// Its session (interned: sessions repeat).
    pub session: Arc<str>,
    /// The caller's label, kept only when it differs from the label derived
    /// from argv; [`Record::label`] gives the label either way.
    pub given_label: Option<Box<str>>,
    /// Its argv.
    pub argv: Box<[String]>,
    /// The real directory it runs in (interned: directories repeat).
    pub cwd: Arc<str>,
    /// Epoch ms of the start call.
    pub started_at_ms: f64,
    /// Monotonic start.
    pub started: Instant,
    /// The trusted directory that holds this command's log directory
    /// (shared by the commands started under it); this command's is [`Record::dir`].
    pub logs_root: Arc<LogBase>,
    /// (device, inode) of stdout.log and stderr.log as created.
    pub idents: [Ident; 2],
    /// Runs the toolsets make for themselves (git) are not listed or counted.
    pub hidden: bool,
    /// Whether it runs under kernel confinement (SPEC §8).
    pub confined: bool,
    /// SIGTERM → SIGKILL grace in ms.
    pub kill_grace_ms: f64,
    /// How it is banked.
    pub bank: BankMode,
    /// stdout and stderr.
    pub streams: [StreamLog; 2],
    /// Process group id once started (0 before).
    pub pgid: AtomicI32,
    /// How much of its tree the runner reaches (SPEC §6). Its cgroup, when
    /// it has one, is kept beside the records while it runs
    /// ([`Record::cgroup`]), so a settled record does not carry the slot.
    pub containment: crate::process::Containment,
    /// The changing part.
    pub live: Mutex<Live>,
    /// Becomes true when the settled state is published.
    pub settled: Settled,
    /// The supervisor's mailbox, then the host bank's reply slot (one field:
    /// the two are never needed at once, and a settled record keeps neither).
    pub link: Mutex<Link>,
    /// Its input, when it was started with `stdin: "pipe"` or in a terminal.
    pub input: Option<Box<InputState>>,
}

/// What reaches a command from outside, by phase.
#[derive(Debug)]
pub enum Link {
    /// Running: the supervisor's mailbox.
    Supervisor(mpsc::UnboundedSender<Control>),
    /// Banking through the host: where the host's bank answers.
    Banking(oneshot::Sender<[BankOutcome; 2]>),
    /// Neither (the process ended, or it is settled).
    Closed,
}

/// What banking one stream through the host gave.
#[derive(Debug, Clone, PartialEq)]
pub enum BankOutcome {
    /// A proper ref.
    Ref(ArtifactRef),
    /// Why no ref could be had.
    Failed(String),
}

use crate::process::cgroup::Cgroup;

/// The cgroups of the commands that run, by task counter.
static RUNNING_CGROUPS: Mutex<Vec<(u64, Cgroup)>> = Mutex::new(Vec::new());

fn running_cgroups() -> std::sync::MutexGuard<'static, Vec<(u64, Cgroup)>> {
    RUNNING_CGROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A status, built fresh on each call.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Task id.
    pub task_id: String,
    /// Label.
    pub label: String,
    /// Public state.
    pub state: State,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Ending signal's name.
    pub signal: Option<String>,
    /// Milliseconds from start to end (or to now).
    pub duration_ms: f64,
    /// Bytes in stdout.log.
    pub stdout_bytes: f64,
    /// Bytes in stderr.log.
    pub stderr_bytes: f64,
    /// Banked stdout.
    pub stdout: Option<ArtifactRef>,
    /// Banked stderr.
    pub stderr: Option<ArtifactRef>,
    /// The end of both streams, ≤ 2000 characters.
    pub tail_preview: String,
    /// What went wrong.
    pub error: Option<String>,
    /// Whether it runs under kernel confinement.
    pub confined: bool,
    /// How much of its tree the runner reaches.
    pub containment: crate::process::Containment,
    /// What its confinement refused it, each note naming the way out
    /// (SPEC §8 "What it was refused"); empty when nothing was.
    pub confinement_notes: Vec<String>,
    /// Whether its input takes writes (`stdin: "pipe"` or a terminal, not
    /// ended, not closed by the command, not settled).
    pub stdin_open: bool,
    /// Whether it is blocked reading its input and printed nothing for
    /// `inputWaitMs` (`None` where the platform cannot tell).
    pub waiting_for_input: Option<bool>,
    /// Whether the logs were removed (budget, age, prune).
    pub logs_removed: bool,
    /// What its tree used (settled, where measurable).
    pub usage: Option<crate::process::limits::Usage>,
    /// The resource limit that stopped it.
    pub limit: Option<crate::process::limits::Kind>,
    /// Whether it was recovered from an earlier process's manifest.
    pub recovered: bool,
}

/// The preview budget of a status, in UTF-16 units.
pub const TAIL_UNITS: usize = 2000;

impl Record {
    /// Its label: the one given at start, else one derived from argv.
    pub fn label(&self) -> String {
        match &self.given_label {
            Some(l) => l.to_string(),
            None => policy::label_for(None, &self.argv),
        }
    }

    /// The log of one stream.
    pub fn log(&self, s: Stream) -> &StreamLog {
        &self.streams[s as usize]
    }

    /// A number naming one stream's log for the life of the process
    /// (never 0).
    pub fn log_key(&self, s: Stream) -> u64 {
        self.seq
            .wrapping_mul(2)
            .wrapping_add(s as u64)
            .wrapping_add(1)
    }

    /// Its task id: `c<counter><12 hex>`.
    pub fn task_id(&self) -> String {
        ids::task_id(self.seq)
    }

    /// Its log directory, `<logs_root>/<task_id>`, holding both logs.
    pub fn dir(&self) -> PathBuf {
        self.logs_root.path.join(self.task_id())
    }

    /// The log file of one stream: `<dir>/stdout.log` or `<dir>/stderr.log`.
    pub fn log_path(&self, s: Stream) -> PathBuf {
        let mut path = self.dir();
        path.push(s.file_name());
        path
    }

    /// Open the log file of one stream for reading: refused when the logs
    /// were removed ([`LogGone::Removed`]) or the file is not the one the
    /// runner created ([`LogGone::Replaced`]). The removal flag is checked
    /// under the lock a removal sets it under, and the file is opened while
    /// holding it: a read either has the file open before any unlink (and
    /// reads exactly its bytes through the descriptor) or is refused.
    pub fn open_log(&self, s: Stream) -> io::Result<File> {
        let live = self.live.locked();
        if let Some(r) = &live.removed {
            return Err(LogGone::Removed(self.removal_message(r)).into_io());
        }
        let settled = live.state.is_settled();
        // The runner's count is taken before the file's length: it only
        // grows after the bytes are in the file, so a count taken first is
        // never more than the length of the runner's own file, however much
        // the command writes meanwhile. Taken after `settled`, it is final
        // when the command has settled.
        let wrote = self.log(s).bytes();
        let f = logfile::open_log(
            &self.logs_root,
            &self.task_id(),
            s.file_name(),
            self.idents[s as usize],
        );
        drop(live);
        let (f, len) = f?;
        // A file system may hand a new file the freed inode number within
        // the same clock tick (same birth time); the log's length, which the
        // runner knows exactly, tells such a file apart unless it also has
        // the very same length.
        if len < wrote || (settled && len != wrote) {
            return Err(LogGone::Replaced(format!(
                "The log {} was replaced (it holds {len} bytes where the runner wrote {wrote}): it is not the file the runner created, so none of it is returned",
                self.log_path(s).display()
            ))
            .into_io());
        }
        Ok(f)
    }

    /// What a read of removed logs says.
    pub fn removal_message(&self, r: &Removal) -> String {
        format!(
            "The logs of \"{}\" were removed at {} ({}), so its output can no longer be read; its status (state, exit code, byte counts) stays answerable",
            self.task_id(),
            iso_utc(r.at_ms),
            r.why
        )
    }

    /// Mark the logs removed (a settled command's, or any with `force`, at
    /// exit). False if they already were, or the command has not settled.
    pub fn mark_removed(&self, why: &str, force: bool) -> bool {
        let mut live = self.live.locked();
        if live.removed.is_some() || !(force || live.state.is_settled()) {
            return false;
        }
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as f64)
            .unwrap_or(0.0);
        live.removed = Some(Box::new(Removal {
            at_ms,
            why: why.to_string(),
        }));
        true
    }

    /// Whether its logs were removed.
    pub fn logs_removed(&self) -> bool {
        self.live.locked().removed.is_some()
    }

    /// The first `units` UTF-16 units of a stream's decoded log (never
    /// splitting a surrogate pair), and whether more text follows. Reads only
    /// the bytes that many units can take.
    pub fn head(&self, s: Stream, units: usize) -> io::Result<(String, bool)> {
        let bytes = self.log(s).bytes();
        // Every unit takes at most 3 bytes, so this much always decodes to
        // more than `units` when the log is longer.
        let len = bytes.min((units * 3 + 4) as u64);
        if len == 0 {
            return Ok((String::new(), false));
        }
        let mut buf = vec![0u8; len as usize];
        crate::platform::FileExt::read_exact_at(&self.open_log(s)?, &mut buf, 0)?;
        let (text, cut) = head_text(&buf, units);
        Ok((text, cut || len < bytes))
    }

    /// Whether the settled state is published.
    pub fn is_settled(&self) -> bool {
        self.settled.get()
    }

    /// Build a status now. `look` marks a settled command looked at.
    /// `builtin_ref` spells the refs of streams in the built-in bank
    /// (`bank::builtin_ref`; passed in because the bank sits above the record).
    pub fn status(&self, look: bool, builtin_ref: fn(&Record, Stream) -> ArtifactRef) -> Status {
        // The byte counts are read before the state: output is read only
        // once the state is running, so a status never pairs "queued" with
        // bytes. Once settled the counts are final, and are read again.
        let early = Stream::BOTH.map(|s| self.log(s).bytes());
        #[cfg(test)]
        status_race::between_reads(self);
        let (
            state,
            exit_code,
            signal,
            error,
            ended,
            refs,
            removed,
            refused,
            usage,
            limit,
            recovered,
            refused_unix,
        ) = {
            let mut live = self.live.locked();
            if look && live.state.is_settled() {
                live.looked_at = true;
            }
            (
                live.state,
                live.exit_code,
                live.signal.map(signals::name),
                live.error.clone(),
                live.ended,
                live.refs.clone(),
                live.removed.clone(),
                live.refused_sockets,
                live.usage.usage().filter(|_| live.state.is_settled()),
                live.usage.limit(),
                // Recovered records take counters of their own range.
                self.seq >= super::ids::RECOVERED_BASE,
                live.refused_unix,
            )
        };
        let end = if state.is_settled() {
            ended.unwrap_or_else(Instant::now)
        } else {
            Instant::now()
        };
        let duration = end.saturating_duration_since(self.started);
        let counts = if state.is_settled() {
            Stream::BOTH.map(|s| self.log(s).bytes())
        } else {
            early
        };
        let (stdout, stderr) = match refs {
            Some(Refs::Kept(r)) => {
                let [a, b] = *r;
                (Some(a), Some(b))
            }
            Some(Refs::BuiltIn) => (
                Some(builtin_ref(self, Stream::Stdout)),
                Some(builtin_ref(self, Stream::Stderr)),
            ),
            None => (None, None),
        };
        Status {
            task_id: self.task_id(),
            label: self.label(),
            state,
            exit_code,
            signal,
            duration_ms: ms(duration),
            stdout_bytes: counts[0] as f64,
            stderr_bytes: counts[1] as f64,
            stdout,
            stderr,
            tail_preview: match &removed {
                Some(r) => format!("({})", self.removal_message(r)),
                None => self.tail_preview(state.is_settled()),
            },
            error,
            confined: self.confined,
            containment: self.containment,
            confinement_notes: confinement_notes(refused, refused_unix),
            stdin_open: !state.is_settled() && self.input.as_ref().is_some_and(|i| i.is_open()),
            waiting_for_input: self.waiting_for_input(state),
            logs_removed: removed.is_some(),
            usage,
            limit,
            recovered,
        }
    }

    /// Whether it waits for input in `state` (`None`: the platform cannot tell).
    pub fn waiting_for_input(&self, state: State) -> Option<bool> {
        crate::process::input_wait::supported()
            .then(|| !state.is_settled() && self.input.as_ref().is_some_and(|i| i.is_waiting()))
    }

    /// The tail preview: the end of each stream under its heading, ≤ 2000 units in all.
    pub fn tail_preview(&self, settled: bool) -> String {
        let lens = Stream::BOTH.map(|s| self.log(s).readable_bytes());
        let with_output: Vec<Stream> = Stream::BOTH
            .into_iter()
            .filter(|s| lens[*s as usize] > 0)
            .collect();
        if with_output.is_empty() {
            return if settled {
                "(the command wrote no output)"
            } else {
                "(no output yet)"
            }
            .to_string();
        }
        let share = TAIL_UNITS / with_output.len();
        let mut parts = Vec::with_capacity(2);
        for (i, s) in with_output.iter().enumerate() {
            let heading = format!("[{} tail]\n", s.name());
            // Headings and the newline between blocks count against each share.
            let budget = share - heading.len() - usize::from(i > 0);
            let text = self
                .open_log(*s)
                .and_then(|f| tail_text(&f, lens[*s as usize], budget))
                .unwrap_or_else(|e| format!("(the log could not be read: {e})"));
            parts.push(format!("{heading}{text}"));
        }
        parts.join("\n")
    }

    /// Mark looked at, if settled.
    pub fn look(&self) {
        let mut live = self.live.locked();
        if live.state.is_settled() {
            live.looked_at = true;
        }
    }

    /// Whether it counts as finished-and-unread.
    pub fn is_unread(&self) -> bool {
        let live = self.live.locked();
        live.state.is_settled() && !live.looked_at
    }

    /// Send the supervisor a message; false once settled.
    pub fn send(&self, msg: Control) -> bool {
        match &*self.link.locked() {
            Link::Supervisor(tx) => tx.send(msg).is_ok(),
            _ => false,
        }
    }

    /// Close the link (the supervisor's mailbox or the bank's reply slot).
    pub fn close_link(&self) {
        *self.link.locked() = Link::Closed;
    }

    /// Take the bank's reply slot, if the command is waiting on its host's bank.
    pub fn take_bank_reply(&self) -> Option<oneshot::Sender<[BankOutcome; 2]>> {
        let mut link = self.link.locked();
        match std::mem::replace(&mut *link, Link::Closed) {
            Link::Banking(tx) => Some(tx),
            other => {
                *link = other;
                None
            }
        }
    }

    /// Wait until settled, at most `limit` (forever when `None`).
    pub async fn wait_settled(self: &Arc<Self>, limit: Option<Duration>) -> bool {
        let wait = self.settled.wait();
        match limit {
            Some(d) => tokio::time::timeout(d, wait).await.is_ok(),
            None => {
                wait.await;
                true
            }
        }
    }

    /// The process group id, once started.
    pub fn pgid(&self) -> i32 {
        self.pgid.load(Ordering::Acquire)
    }

    /// Send `sig` to its whole tree: its process group, and every process
    /// of its cgroup when it has one (SIGKILL through `cgroup.kill`).
    pub fn signal_tree(&self, sig: i32) {
        let pg = self.pgid();
        if pg > 0 {
            signals::signal_group(pg, sig);
        }
        self.cgroup(|c| c.signal(sig, pg));
    }

    /// Run `f` with its cgroup, if it has one and still runs.
    pub fn cgroup(&self, f: impl FnOnce(&Cgroup)) {
        let all = running_cgroups();
        if let Some((_, c)) = all.iter().find(|(seq, _)| *seq == self.seq) {
            f(c);
        }
    }

    /// Give it `c`, its own cgroup, until [`Record::take_cgroup`].
    pub fn set_cgroup(&self, c: Cgroup) {
        running_cgroups().push((self.seq, c));
    }

    /// Take its cgroup back (it settles).
    pub fn take_cgroup(&self) -> Option<Cgroup> {
        let mut all = running_cgroups();
        let i = all.iter().position(|(seq, _)| *seq == self.seq)?;
        Some(all.swap_remove(i).1)
    }
}

/// Epoch milliseconds as an ISO 8601 UTC time, e.g. `2026-12-01T11:42:05.123Z`.
pub fn iso_utc(ms: f64) -> String {
    let total = ms.max(0.0) as i64;
    let (secs, milli) = (total.div_euclid(1000), total.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// What a command's confinement refused it (see
/// [`Status::confinement_notes`]), from the counts of refused sockets and
/// of refused connects to unix sockets outside its write trees.
fn confinement_notes(refused_sockets: u16, refused_unix: u16) -> Vec<String> {
    // A saturated count reads as "65535 or more".
    let counted = |n: u16| {
        let shown = if n == u16::MAX {
            format!("{n} or more")
        } else {
            n.to_string()
        };
        if n == 1 {
            (shown, "attempt", "was")
        } else {
            (shown, "attempts", "were")
        }
    };
    let mut notes = Vec::new();
    if refused_sockets != 0 {
        let (n, attempts, were) = counted(refused_sockets);
        notes.push(format!(
            "network is off: {n} connection {attempts} {were} refused (a confined command may open unix sockets only); allow network with the policy's confine.network: true"
        ));
    }
    if refused_unix != 0 {
        let (n, attempts, were) = counted(refused_unix);
        notes.push(format!(
            "{n} connection {attempts} to a unix socket outside the write trees {were} refused (a daemon's socket is not reachable from a confined command); to allow one, make the socket's directory a write tree with the policy's confine.write"
        ));
    }
    notes
}

/// A duration in whole milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_millis() as f64
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A settled record is kept for the life of the process: its size is a
    /// memory budget (bench row 6c), checked here so that a field added
    /// without thought shows up. 432 bytes: with its `Arc` header, one
    /// 464-byte allocation (Linux's sizes: other systems' locks and clocks
    /// differ); the last 8 are what its tree used and the limit that
    /// stopped it (SPEC §15).
    #[test]
    fn a_record_stays_small() {
        assert!(
            std::mem::size_of::<Record>() <= 432,
            "Record is {} bytes",
            std::mem::size_of::<Record>()
        );
        // A stream that printed nothing holds no index: its log is the
        // counters and two empty slots.
        assert!(std::mem::size_of::<StreamLog>() <= 48);
    }
}

/// What a status may see when the command moves between its two reads (the
/// counts, then the state): a test puts the supervisor's work there, the
/// worst moment for it to happen.
#[cfg(test)]
mod status_race {
    use std::cell::RefCell;
    use std::sync::atomic::AtomicI32;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use super::{BankMode, Link, Live, Record, Settled, State};
    use crate::sync::Unpoisoned;
    use crate::text::capture::{self, Stream, StreamLog};
    use crate::text::logfile;

    /// Something done to a record.
    type Meanwhile = Box<dyn Fn(&Record)>;

    thread_local! {
        /// What happens between a status's two reads, on this thread.
        static BETWEEN: RefCell<Option<Meanwhile>> = const { RefCell::new(None) };
    }

    /// Called by [`Record::status`] between its reads.
    pub(super) fn between_reads(rec: &Record) {
        BETWEEN.with(|b| {
            if let Some(f) = b.borrow().as_ref() {
                f(rec);
            }
        });
    }

    fn queued_record(dir: &std::path::Path) -> Record {
        let logfile::Candidate::Trusted(base) = logfile::try_dir(dir) else {
            panic!("a fresh temp directory is a trusted log base");
        };
        Record {
            seq: crate::jobs::ids::new_task_seq(),
            host: 0,
            session: Arc::from("s"),
            given_label: None,
            argv: vec!["printf".to_string(), "out\\n".to_string()].into_boxed_slice(),
            cwd: Arc::from("/"),
            started_at_ms: 0.0,
            started: Instant::now(),
            logs_root: Arc::new(base),
            idents: [0, 0],
            hidden: true,
            confined: false,
            kill_grace_ms: 0.0,
            bank: BankMode::BuiltIn,
            streams: [StreamLog::new(), StreamLog::new()],
            pgid: AtomicI32::new(0),
            containment: crate::process::Containment::Group,
            live: Mutex::new(Live::queued()),
            settled: Settled::new(),
            link: Mutex::new(Link::Closed),
            input: None,
        }
    }

    /// Run `status` with `meanwhile` done between its two reads.
    fn status_while(rec: &Record, meanwhile: impl Fn(&Record) + 'static) -> super::Status {
        BETWEEN.with(|b| *b.borrow_mut() = Some(Box::new(meanwhile)));
        let st = rec.status(false, crate::jobs::bank::builtin_ref);
        BETWEEN.with(|b| *b.borrow_mut() = None);
        st
    }

    /// A queued command that starts and prints while a status is read is
    /// seen either queued with no bytes or running: never queued with
    /// bytes (the supervisor sets "running" before it reads any output).
    #[test]
    fn a_status_never_pairs_queued_with_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let rec = queued_record(dir.path());
        let st = status_while(&rec, |r| {
            r.live.locked().state = State::Running;
            capture::publish(r.log(Stream::Stdout), b"out\n", &Default::default());
        });
        assert!(
            !(st.state == State::Queued && st.stdout_bytes > 0.0),
            "queued with {} bytes",
            st.stdout_bytes
        );
        // The counts are those of the moment before the state was read.
        assert_eq!((st.state, st.stdout_bytes), (State::Running, 0.0));
        // Read again, the same record is running with its bytes.
        let st = rec.status(false, crate::jobs::bank::builtin_ref);
        assert_eq!((st.state, st.stdout_bytes), (State::Running, 4.0));
    }

    /// A command that prints its last bytes and settles while a status is
    /// read is seen settled with its final counts.
    #[test]
    fn a_settled_status_carries_the_final_counts() {
        let dir = tempfile::tempdir().unwrap();
        let rec = queued_record(dir.path());
        rec.live.locked().state = State::Running;
        capture::publish(rec.log(Stream::Stderr), b"e", &Default::default());
        let st = status_while(&rec, |r| {
            capture::publish(r.log(Stream::Stdout), b"out\n", &Default::default());
            capture::publish(r.log(Stream::Stderr), b"rr\n", &Default::default());
            let mut live = r.live.locked();
            live.state = State::Exited;
            live.exit_code = Some(0);
            live.ended = Some(Instant::now());
        });
        assert_eq!(st.state, State::Exited);
        assert_eq!((st.stdout_bytes, st.stderr_bytes), (4.0, 4.0));
    }
}
