//! Task ids: a process-wide counter spelled with a per-process salt, so an id
//! is unique in the process and cannot be guessed from another process's
//! ids. A record keeps only its counter and spells its id when asked; the
//! registry turns an id back into the counter it was spelled from.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, RwLock};

static COUNTER: AtomicU64 = AtomicU64::new(1);
static SALT: LazyLock<u64> = LazyLock::new(seed);

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

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A new task counter, unique in the process; [`task_id`] spells it.
pub fn new_task_seq() -> u64 {
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// The task id of counter `n`: `c<counter><12 hex chars>`. Records keep only
/// the counter and spell the id when asked.
pub fn task_id(n: u64) -> String {
    if n >= RECOVERED_BASE {
        return recovered_id(n);
    }
    format!("c{n}{:012x}", mix(*SALT ^ n) & 0xffff_ffff_ffff)
}

/// The counter of a task id, if the id is one [`task_id`] spells.
pub(crate) fn task_seq(task_id: &str) -> Option<u64> {
    own_seq(task_id).or_else(|| recovered_seq(task_id))
}

/// The counter of an id this process spelled.
fn own_seq(task_id: &str) -> Option<u64> {
    let digits = task_id
        .strip_prefix('c')?
        .get(..task_id.len().checked_sub(13)?)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    (self::task_id(n) == task_id).then_some(n)
}

/// The first counter of a recovered record ([`super::recover`]): ids an
/// earlier process spelled keep their text, looked up in a table here.
pub const RECOVERED_BASE: u64 = 1 << 62;

/// Recovered ids, by counter − [`RECOVERED_BASE`], and counters by id.
#[derive(Default)]
struct Recovered {
    ids: Vec<Box<str>>,
    seqs: HashMap<Box<str>, u64>,
}

static RECOVERED: LazyLock<RwLock<Recovered>> = LazyLock::new(Default::default);

/// The id of recovered counter `n`.
fn recovered_id(n: u64) -> String {
    let t = RECOVERED.read().unwrap_or_else(|e| e.into_inner());
    t.ids
        .get((n - RECOVERED_BASE) as usize)
        .map_or_else(String::new, |s| s.to_string())
}

/// The counter of a recovered id.
fn recovered_seq(id: &str) -> Option<u64> {
    RECOVERED
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .seqs
        .get(id)
        .copied()
}

/// A counter for recovered `id`; `None` when another recovery of this
/// process took it already.
pub fn claim_recovered(id: &str) -> Option<u64> {
    let mut t = RECOVERED.write().unwrap_or_else(|e| e.into_inner());
    if t.seqs.contains_key(id) {
        return None;
    }
    let n = RECOVERED_BASE + t.ids.len() as u64;
    t.ids.push(id.into());
    t.seqs.insert(id.into(), n);
    Some(n)
}
