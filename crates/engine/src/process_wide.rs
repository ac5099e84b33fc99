//! Everything that stays process-wide, named in one place. What an engine
//! owns — its registry (hosts, commands, recovered ids, refused recoveries,
//! listeners), spawn gate, host waits, log settings and sweeps, log-byte
//! count, spare log directories, private temp directories and runtime — is
//! in its [`crate::engine::Engine`] value, and every verb takes that value:
//! there is no global engine in this crate (the napi layer holds the one
//! engine of the addon, see `src/lib.rs`). What is left is a fact of the
//! machine or of the process, a cache keyed by something unique in the
//! process, or a helper process or thread there is one of. Each, and why:
//!
//! Defined here:
//! - [`NEXT_TASK`], [`NEXT_RECOVERED`]: task counters, unique among every
//!   engine's, because a counter keys the shared caches below (page
//!   resume, running cgroups).
//! - [`SALT`]: task ids are unguessable from another process's ids; engines
//!   are told apart by their registries, not by their spelling.
//! - [`RECOVERED_TEXT`]: the text of recovered ids by counter, so a record
//!   spells its id from its counter alone (a record's size is a budget).
//! - [`ENDED_SWEEP_CLAIMED`], [`ENDED_SWEEPS_DONE`]: what ended processes
//!   left is swept once per process, whichever engine starts first.
//!
//! Kept beside the code that uses them (listed here so none is missed):
//! - `jobs/record.rs` `RUNNING_CGROUPS`: running commands' cgroups by
//!   process-unique counter, beside the records so a settled record carries
//!   no slot; an engine's commands give theirs back as they settle, which
//!   dropping the engine waits for. (`BETWEEN` there is a test hook.) Not
//!   in the engine's state: the cgroups are taken from and given back to
//!   this process's one subtree (`process/cgroup.rs` `BASE`, `IDLE`), so
//!   the list is the running half of a process-wide pool, and its keys
//!   cannot collide between engines. A record reaches its cgroup by
//!   itself (`Record::signal_tree`, `Record::cgroup`): giving it the
//!   engine's list instead would take an 8-byte pointer back in every
//!   record (whose size is a budget, kept for the life of the process) or
//!   an engine argument on every signal and limit check of the supervisor.
//! - `text/paging.rs` `RESUME`: eight page-resume slots keyed by
//!   process-unique log keys: a cache.
//! - `text/logfile.rs` `BASES`: the trusted log directories held open by
//!   path (a directory is trusted or not for the whole process); `MARK`:
//!   this process's writer mark (pid and start time).
//! - `intern.rs` `STRINGS`, `PATHS`: interned sessions and directories,
//!   immutable and shared by every record.
//! - `text/capture.rs` `EMPTY_INDEX`: an immutable empty value.
//! - `jobs/bank.rs` `BOUND`, `jobs/manifest.rs` `OFF`,
//!   `jobs/running_input.rs` `OFF`: environment variables read once;
//!   `jobs/recover.rs` `UID`: the effective uid.
//! - `process/watchdog.rs` `WATCH`: the watchdog process, one per host
//!   process (it stops the process's command groups if the host dies).
//! - `process/tmp_dir.rs` `PREMADE`, `TMP_SEQ`: the private temp directory
//!   made ahead (taken by any engine's confined start, discarded by the
//!   exit hook) and the counter its names are made from.
//! - Kernel facts and helpers in `process/`: `cgroup.rs` `BASE`, `IDLE`
//!   (this process's cgroup subtree and its empty directories);
//!   `limits.rs` `MEMORY`, `PIDS` (controller probes), `V1_NEXT` (names);
//!   `probe.rs` `S` (Landlock support); `input_wait.rs` `OK`;
//!   `sandbox.rs` `K`, `L`, `R` (namespace keeper, last capability,
//!   probe); `seccomp.rs` `W` (the notification listener's watch);
//!   `vfork.rs` `SHARED_MEMORY`, `CLONE3` (what the kernel allowed),
//!   `NULL` (/dev/null), `STACK` (per-thread child stack), `environ`;
//!   `confine.rs` (the confining spawner threads, kept rulesets and paths,
//!   the hardened-thread flag); `policy/confine.rs` `LISTS` (system paths).
//! - Windows: `process/windows/trees.rs` `TREES`: each started command's
//!   Job Object and process handle by pid until reaped — the kernel's
//!   process table on Unix, which shared code reaches by pid; held
//!   process-wide so the jobs close (kill-on-close) when the process does.
//!   (`crates/windows` `pipe.rs` `NEXT` counts pipe names.)
//! - No signal handler: exits are watched through pidfds (on Windows the
//!   system's wait thread pool).
//!
//! In the napi layer (`src/`): `ENGINE` (the addon's one engine),
//! `OWNER_TAKEN` (the exit hook belongs to the first Node environment),
//! and per-thread `LISTENER`, `HOST_WAITS` and the object makers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{LazyLock, RwLock};

/// The next task counter. One counter for the whole process, so that a
/// counter names one command among every engine's: it keys the page-resume
/// slots ([`crate::text::paging`]) and the running cgroups
/// ([`crate::jobs::record`]), which are shared by the process.
pub static NEXT_TASK: AtomicU64 = AtomicU64::new(1);

/// The next recovered counter (added to `jobs::ids::RECOVERED_BASE`), for
/// the same reason.
pub static NEXT_RECOVERED: AtomicU64 = AtomicU64::new(0);

/// The salt task ids are spelled with: one per process, so that an id
/// cannot be guessed from another process's ids (engines are told apart by
/// their registries, not by their spelling).
pub static SALT: LazyLock<u64> = LazyLock::new(seed);

fn seed() -> u64 {
    let mut buf = [0u8; 8];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf))
        .is_ok()
    {
        u64::from_le_bytes(buf)
    } else {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        t.as_nanos() as u64 ^ (std::process::id() as u64) << 32
    }
}

/// The text of each recovered id, by its (process-wide) counter: a record
/// spells its id from its counter alone, so a record stays as small as it
/// was. Which engine recovered an id is its registry's business.
pub static RECOVERED_TEXT: LazyLock<RwLock<HashMap<u64, Box<str>>>> =
    LazyLock::new(Default::default);

/// The background sweep of ended processes' directories was claimed (by
/// the process's first start, whichever engine made it): what ended
/// processes left is the same whichever engine looks.
pub static ENDED_SWEEP_CLAIMED: AtomicBool = AtomicBool::new(false);
/// Background sweeps of ended processes' directories finished (0 or 1).
pub static ENDED_SWEEPS_DONE: AtomicU32 = AtomicU32::new(0);
