//! What stays process-wide, named in one place. See the end of this file's
//! header for the list; everything else an engine keeps is owned by its
//! [`crate::engine::Engine`] value.
//!
//! PLACEHOLDER-LIST

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
