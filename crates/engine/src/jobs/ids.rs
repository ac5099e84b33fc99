//! Task ids: a process-wide counter spelled with a per-process salt, so an
//! id is unique in the process (among every engine's) and cannot be guessed
//! from another process's ids. A record keeps only its counter and spells
//! its id when asked; an engine's registry turns an id back into the
//! counter it was spelled from, and knows only its own commands' counters,
//! so an id of one engine is unknown to another. The counters, the salt and
//! the text of recovered ids are process-wide ([`crate::process_wide`]).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::RwLock;

use crate::process_wide::{NEXT_RECOVERED, NEXT_TASK, RECOVERED_TEXT, SALT};

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A new task counter, unique in the process; [`task_id`] spells it.
pub fn new_task_seq() -> u64 {
    NEXT_TASK.fetch_add(1, Ordering::Relaxed)
}

/// The task id of counter `n`: `c<counter><12 hex chars>`. Records keep only
/// the counter and spell the id when asked.
pub fn task_id(n: u64) -> String {
    if n >= RECOVERED_BASE {
        return RECOVERED_TEXT
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&n)
            .map_or_else(String::new, |s| s.to_string());
    }
    format!("c{n}{:012x}", mix(*SALT ^ n) & 0xffff_ffff_ffff)
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
    (n < RECOVERED_BASE && self::task_id(n) == task_id).then_some(n)
}

/// The first counter of a recovered record ([`super::recover`]): ids an
/// earlier process spelled keep their text, looked up in a table here.
pub const RECOVERED_BASE: u64 = 1 << 62;

/// One engine's recovered ids ([`super::recover`]) and their counters: the
/// ids an earlier process spelled keep their text.
#[derive(Debug, Default)]
pub struct Ids {
    recovered: RwLock<HashMap<Box<str>, u64>>,
}

impl Ids {
    /// No recovered ids.
    pub fn new() -> Self {
        Self::default()
    }

    /// The counter of a task id, if the id is one [`task_id`] spells or one
    /// this engine recovered.
    pub(crate) fn task_seq(&self, task_id: &str) -> Option<u64> {
        own_seq(task_id).or_else(|| {
            self.recovered
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .get(task_id)
                .copied()
        })
    }

    /// A counter for recovered `id`; `None` when another recovery of this
    /// engine took it already.
    pub fn claim_recovered(&self, id: &str) -> Option<u64> {
        let mut t = self.recovered.write().unwrap_or_else(|e| e.into_inner());
        if t.contains_key(id) {
            return None;
        }
        let n = RECOVERED_BASE + NEXT_RECOVERED.fetch_add(1, Ordering::Relaxed);
        RECOVERED_TEXT
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(n, id.into());
        t.insert(id.into(), n);
        Some(n)
    }
}
