//! The watchdog: one small `/bin/sh` process per host process that outlives
//! it just long enough to stop every command group still running when the
//! host dies in any way — SIGKILL included, which no in-process hook sees.
//!
//! The host keeps two things the watchdog shares:
//! - the write end of the watchdog's stdin, on which nothing is ever
//!   written: when the host dies the kernel closes it, and the watchdog,
//!   asleep in a read of that pipe all along, reads end-of-file;
//! - the list of running groups, a file of fixed-size slots (an anonymous
//!   memory file on Linux, an unlinked temporary file elsewhere) that is the
//!   watchdog's stdout. A group that starts is written into a free slot
//!   before the spawn gate opens, and its slot is blanked once the group is
//!   stopped and reaped: one `pwrite` each, which wakes nobody — the
//!   watchdog reads the list only once, after the host has died.
//!
//! Then the watchdog sends SIGTERM, and SIGKILL a moment later, to every
//! group still listed. Where commands run in cgroups of their own
//! ([`super::cgroup`]), it is given the host's cgroup subtree as its first
//! argument: every process in it gets SIGTERM with the groups, then the
//! whole subtree is killed at once (`cgroup.kill` of the base reaches every
//! command's tree, escaped descendants included) and removed. It runs in a process group of its own, so a
//! terminal's Ctrl-C or a kill of the host's group does not take it down
//! first.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{LazyLock, Mutex};

/// Bytes per slot: a group id right-aligned in 11 columns and a newline (a
/// free slot is spaces). Every `i32` fits.
const SLOT: usize = 12;

/// The watchdog's script. The first loop sleeps in a read of the pipe no
/// one writes to; end-of-file means the host has died. The slots are then
/// read from the shared file (fd 1, whose offset nobody has moved: the host
/// writes with `pwrite`); `read` drops the padding, and a blank slot gives
/// an empty line.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT
while read -r _; do :; done
base=$1
groups=
while read -r pg; do [ -n "$pg" ] && groups="$groups $pg"; done <&1
procs=
[ -n "$base" ] && procs=$(cat "$base"/*/cgroup.procs 2>/dev/null)
if [ -n "$groups$procs" ]; then
  for pg in $groups; do kill -s TERM -- "-$pg" 2>/dev/null; kill -s CONT -- "-$pg" 2>/dev/null; done
  for p in $procs; do kill -s TERM "$p" 2>/dev/null; kill -s CONT "$p" 2>/dev/null; done
  sleep 2
  for pg in $groups; do kill -s KILL -- "-$pg" 2>/dev/null; done
fi
[ -z "$base" ] && exit 0
echo 1 2>/dev/null >"$base/cgroup.kill"
i=0
while [ $i -lt 50 ]; do
  [ -d "$base" ] || exit 0
  for d in "$base"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
  rmdir "$base" 2>/dev/null && exit 0
  sleep 0.1
  i=$((i + 1))
done
exit 0
"#;

/// The running watchdog, as the host sees it.
struct Watch {
    /// Held, never written: its closing at the host's death wakes the watchdog.
    _alive: ChildStdin,
    /// The slots file.
    slots: File,
    /// The group in each slot (0: free).
    used: Vec<i32>,
}

static WATCH: LazyLock<Mutex<Option<Watch>>> = LazyLock::new(|| Mutex::new(start()));

/// A file only this process and its watchdog hold.
#[cfg(target_os = "linux")]
fn slots_file() -> std::io::Result<File> {
    use rustix::fs::{memfd_create, MemfdFlags};
    Ok(File::from(memfd_create(
        "neurolink-commands-watchdog",
        MemfdFlags::CLOEXEC,
    )?))
}

/// A file only this process and its watchdog hold: created exclusively in
/// the temp directory (or /tmp), and unlinked at once.
#[cfg(not(target_os = "linux"))]
fn slots_file() -> std::io::Result<File> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let name = format!(
        ".neurolink-commands-watchdog-{}-{nanos}",
        std::process::id()
    );
    let mut last = None;
    for dir in [std::env::temp_dir(), std::path::PathBuf::from("/tmp")] {
        let path = dir.join(&name);
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temp directory")))
}

fn start() -> Option<Watch> {
    let slots = slots_file().ok()?;
    let alive = spawn_watchdog(&slots, super::cgroup::base_path())?;
    Some(Watch {
        _alive: alive,
        slots,
        used: Vec::new(),
    })
}

/// Start `/bin/sh` with the script, reading the list from `slots` (and
/// the host's cgroup subtree, when it has one); returns the pipe whose
/// closing sets it off.
fn spawn_watchdog(slots: &File, cgroups: Option<&std::path::Path>) -> Option<ChildStdin> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(SCRIPT)
        .arg("neurolink-commands-watchdog")
        .arg(cgroups.map_or(std::ffi::OsStr::new(""), |p| p.as_os_str()))
        .stdin(Stdio::piped())
        .stdout(Stdio::from(slots.try_clone().ok()?))
        .stderr(Stdio::null())
        .current_dir("/");
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().ok()?;
    let alive = child.stdin.take()?;
    // The watchdog is reaped by init once it exits after the host; a thread
    // here would wait on it for nothing.
    std::mem::forget(child);
    Some(alive)
}

/// One slot's bytes: `pgid` right-aligned, or spaces for 0.
fn slot_bytes(pgid: i32) -> [u8; SLOT] {
    let mut b = [b' '; SLOT];
    b[SLOT - 1] = b'\n';
    if pgid != 0 {
        let digits = pgid.to_string();
        b[SLOT - 1 - digits.len()..SLOT - 1].copy_from_slice(digits.as_bytes());
    }
    b
}

/// Put `new` in the first slot holding `old` (a free slot is 0; with none
/// free, a new slot at the end).
fn set(old: i32, new: i32) {
    let mut watch = WATCH.lock().unwrap_or_else(|e| e.into_inner());
    let Some(w) = watch.as_mut() else {
        return;
    };
    let i = match w.used.iter().position(|&p| p == old) {
        Some(i) => i,
        None if old == 0 => {
            w.used.push(0);
            w.used.len() - 1
        }
        None => return,
    };
    w.used[i] = new;
    // A failed write (out of memory) leaves the slot as it was: the
    // watchdog then misses this group, as it would without a watchdog.
    let _ = w.slots.write_at(&slot_bytes(new), (i * SLOT) as u64);
}

/// Start the watchdog now if it is not running yet.
pub fn ensure_started() {
    LazyLock::force(&WATCH);
}

/// A command group started.
pub fn track(pgid: i32) {
    if pgid > 0 {
        set(0, pgid);
    }
}

/// A command group is stopped and needs no watching.
pub fn untrack(pgid: i32) {
    if pgid > 0 {
        set(pgid, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::Unpoisoned;

    /// The slots file as the watchdog would read it at the host's death.
    fn listed() -> Vec<i32> {
        let watch = WATCH.locked();
        let w = watch.as_ref().expect("the watchdog runs");
        let mut buf = vec![0u8; w.slots.metadata().unwrap().len() as usize];
        w.slots.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(buf.len() % SLOT, 0, "whole slots only");
        std::str::from_utf8(&buf)
            .unwrap()
            .lines()
            .filter_map(|l| {
                let t = l.trim();
                (!t.is_empty()).then(|| t.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn slots_list_running_groups_and_reuse_freed_ones() {
        assert_eq!(slot_bytes(0), *b"           \n");
        assert_eq!(slot_bytes(42), *b"         42\n");
        assert_eq!(slot_bytes(i32::MAX), *b" 2147483647\n");
        ensure_started();
        // Group ids no process of this test has (the list is only written;
        // nothing is signalled while the host lives).
        let (a, b, c) = (i32::MAX - 3, i32::MAX - 2, i32::MAX - 1);
        track(a);
        track(b);
        let now = listed();
        assert!(now.contains(&a) && now.contains(&b), "{now:?}");
        let slots_before = WATCH.locked().as_ref().unwrap().used.len();
        untrack(a);
        assert!(!listed().contains(&a));
        // The freed slot is taken again: the file does not grow.
        track(c);
        assert_eq!(WATCH.locked().as_ref().unwrap().used.len(), slots_before);
        let now = listed();
        assert!(
            now.contains(&b) && now.contains(&c) && !now.contains(&a),
            "{now:?}"
        );
        untrack(b);
        untrack(c);
        // Untracking what is not listed changes nothing.
        untrack(a);
        let now = listed();
        assert!(!now.contains(&b) && !now.contains(&c), "{now:?}");
    }

    #[test]
    fn the_script_stops_listed_groups_once_the_pipe_closes() {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        let group = |cmd: &str| {
            Command::new("/bin/sh")
                .args(["-c", cmd])
                .process_group(0)
                .spawn()
                .unwrap()
        };
        // A listed group, a group whose slot was blanked, and a slot of
        // padding only.
        let mut listed = group("exec sleep 30");
        let mut unlisted = group("exec sleep 30");
        let slots = slots_file().unwrap();
        slots.write_at(&slot_bytes(0), 0).unwrap();
        slots
            .write_at(&slot_bytes(listed.id() as i32), SLOT as u64)
            .unwrap();
        slots.write_at(&slot_bytes(0), 2 * SLOT as u64).unwrap();
        let alive = spawn_watchdog(&slots, None).expect("/bin/sh runs");
        // The control: while the pipe is open nothing is signalled.
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(listed.try_wait().unwrap().is_none());
        drop(alive);
        let status = listed.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(
            unlisted.try_wait().unwrap().is_none(),
            "a group not listed is left alone"
        );
        unlisted.kill().unwrap();
        unlisted.wait().unwrap();
    }
}
