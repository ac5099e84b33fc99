//! `recoverBackgroundCommands` (SPEC §15): the commands of earlier
//! processes of this user, answerable again under their old task ids.
//!
//! Theory of operation: the current log base (trusted as every base is) is
//! listed; a task directory whose writer is gone (its marker names a
//! process that no longer runs) and that holds a manifest
//! ([`super::manifest`]) is checked — the directory and the manifest
//! opened without following links, owned by this user, not writable by
//! others, the manifest a single-link regular file naming the directory's
//! own task id, each log the very file its identity names (device, inode,
//! birth time), single-link and this user's — and only then read. A
//! directory that fails a check is never read further; its task id then
//! answers `NLC_RECOVERY_REFUSED` with the reason. A recovered command is
//! a settled record of the recovering host, its logs indexed as they are
//! on disk, its refs those of the built-in bank (the earlier host's bank is
//! gone with it), marked recovered and already looked at (nothing new to
//! see). A manifest without its settle line is a command whose host died
//! first: it is recovered as `killed`, saying so, with every byte its logs
//! hold.
//!
//! Recovered records take counters from a range of their own
//! ([`super::ids::RECOVERED_BASE`]): their ids were spelled by another
//! process, so [`super::ids`] keeps a table of them.

use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::AtomicI32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use serde_json::Value;

use super::ids::Ids;
use super::manifest;
use super::record::{BankMode, Link, Live, Record, Refs, Settled, State};
use super::state::State as Engine;
use crate::errors::{EngineError, EngineResult};
use crate::text::capture::{self, Stream, StreamLog};
use crate::text::logfile::{self, LogBase};

/// What `recoverBackgroundCommands` filters on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only commands of this session.
    pub session_id: Option<String>,
    /// Only commands started at or after this epoch ms.
    pub since_ms: Option<f64>,
}

/// `c<digits><12 lowercase hex>`.
fn looks_like_task_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 13
        && b[0] == b'c'
        && b[1..b.len() - 12].iter().all(u8::is_ascii_digit)
        && b[b.len() - 12..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// What checking one task directory gave (see [`one`]).
type Checked = Result<Option<Arc<Record>>, String>;

/// The largest manifest read (argv is at most a few MiB).
const MANIFEST_MAX: u64 = 64 << 20;

/// Recover the settled commands of ended processes of this user in the
/// current log base for `host`; returns how many were recovered.
pub fn recover(eng: &Engine, host: u32, filter: &Filter, tmpdir: &Path) -> EngineResult<u32> {
    let reg = &eng.registry;
    let base = eng.retention.base_or_refusal(tmpdir)?;
    let log_bytes: &std::sync::atomic::AtomicU64 = eng.retention.log_bytes();
    let dir = rustix::fs::openat(
        &base.fd,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| EngineError::Io(format!("cannot list {}: {e}", base.path.display())))?;
    let names: Vec<String> = rustix::fs::Dir::read_from(&dir)
        .map_err(|e| EngineError::Io(format!("cannot list {}: {e}", base.path.display())))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| looks_like_task_id(n))
        .collect();
    let names: Vec<String> = names
        .into_iter()
        .filter(|n| reg.by_id(n).is_none())
        .collect();
    // The checks and reads are independent per directory: a few threads.
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let chunk = names.len().div_ceil(threads).max(1);
    let results: Vec<(String, Checked)> = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .chunks(chunk)
            .map(|part| {
                let base = &base;
                s.spawn(move || {
                    part.iter()
                        .map(|n| (n.clone(), one(&reg.ids, log_bytes, host, base, n, filter)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut count = 0;
    for (name, r) in results {
        match r {
            Ok(Some(rec)) => {
                reg.set_refusal(&name, None);
                reg.insert(rec);
                count += 1;
            }
            Ok(_) => {}
            Err(why) => {
                reg.set_refusal(&name, Some(why));
            }
        }
    }
    Ok(count)
}

/// Why a file or directory is not this user's own, or `None`.
fn not_own(st: &rustix::fs::Stat, what: &str) -> Option<String> {
    static UID: std::sync::LazyLock<u32> =
        std::sync::LazyLock::new(|| rustix::process::geteuid().as_raw());
    let uid = *UID;
    if st.st_uid != uid {
        return Some(format!(
            "{what} is owned by uid {}, not by this process's user (uid {uid})",
            st.st_uid
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Some(format!(
            "{what} is writable by group or others (mode {:04o})",
            st.st_mode & 0o7777
        ));
    }
    None
}

/// The writer a task directory names, by its attribute or marker file.
fn writer(dir: &OwnedFd) -> Option<String> {
    let mut buf = [0u8; 64];
    if let Ok(n) = rustix::fs::fgetxattr(dir, logfile::WRITER_XATTR, &mut buf[..]) {
        return std::str::from_utf8(buf.get(..n)?).ok().map(str::to_string);
    }
    let fd = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    rustix::fs::Dir::read_from(&fd)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with(".writer-"))
}

/// The value of attribute `name` of `dir`, if it has it.
fn attribute(dir: &OwnedFd, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    let n = rustix::fs::fgetxattr(dir, name, &mut buf[..]).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// A single-link regular file of this user, opened below `dir` without
/// following a link; its contents up to `max` bytes.
fn read_own_file(dir: &OwnedFd, name: &str, what: &str, max: u64) -> Result<Vec<u8>, String> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        if e == rustix::io::Errno::LOOP {
            format!("{what} is a symbolic link")
        } else {
            format!("{what} cannot be opened ({e})")
        }
    })?;
    let st = rustix::fs::fstat(&fd).map_err(|e| format!("{what}: {e}"))?;
    if st.st_mode & 0o170000 != 0o100000 {
        return Err(format!("{what} is not a regular file"));
    }
    if let Some(why) = not_own(&st, what) {
        return Err(why);
    }
    if st.st_nlink != 1 {
        return Err(format!(
            "{what} has {} links (a hard link to another file)",
            st.st_nlink
        ));
    }
    if st.st_size as u64 > max {
        return Err(format!("{what} is larger than {max} bytes"));
    }
    let mut out = Vec::with_capacity(st.st_size as usize);
    std::fs::File::from(fd)
        .take(max)
        .read_to_end(&mut out)
        .map_err(|e| format!("{what}: {e}"))?;
    Ok(out)
}

/// Check and read one task directory: `Ok(None)` when it is not for
/// recovery (a live writer's, no manifest, filtered out), `Err(why)` when
/// it fails a check.
fn one(
    ids: &Arc<Ids>,
    log_bytes: &std::sync::atomic::AtomicU64,
    host: u32,
    base: &Arc<LogBase>,
    name: &str,
    filter: &Filter,
) -> Result<Option<Arc<Record>>, String> {
    let shown = base.path.join(name);
    let dir = match rustix::fs::openat(
        &base.fd,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(d) => d,
        Err(rustix::io::Errno::LOOP) | Err(rustix::io::Errno::NOTDIR) => {
            return Err(format!(
            "The task directory {} is a symbolic link or not a directory: nothing of it is read",
            shown.display()
        ))
        }
        Err(_) => return Ok(None),
    };
    let st = rustix::fs::fstat(&dir).map_err(|e| e.to_string())?;
    if let Some(why) = not_own(&st, "its directory") {
        return Err(format!(
            "The task directory {} was not recovered: {why}; nothing of it is read",
            shown.display()
        ));
    }
    match writer(&dir) {
        Some(w) if w == logfile::own_marker() => return Ok(None),
        Some(w) if logfile::marker_alive(&w) != Some(false) => return Ok(None),
        _ => {}
    }
    let refuse = |why: &str| {
        format!(
            "The manifest of {} was not recovered: {why}; nothing of it is read",
            shown.display()
        )
    };
    let (first, second) = match attribute(&dir, manifest::START_XATTR) {
        Some(start) => (start, attribute(&dir, manifest::SETTLE_XATTR)),
        None => {
            let text = match read_own_file(&dir, manifest::FILE, "its manifest", MANIFEST_MAX) {
                Ok(t) => t,
                Err(_)
                    if rustix::fs::statat(
                        &dir,
                        manifest::FILE,
                        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                    )
                    .is_err() =>
                {
                    // No manifest: a directory of an older version, or one
                    // whose command never reached its supervisor.
                    return Ok(None);
                }
                Err(why) => {
                    return Err(format!(
                        "The task directory {} was not recovered: {why}; nothing of it is read",
                        shown.display()
                    ))
                }
            };
            let mut lines = text
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec);
            (lines.next().unwrap_or_default(), lines.next())
        }
    };
    let head: Value =
        serde_json::from_slice(&first).map_err(|_| refuse("its first line is not a manifest"))?;
    let end: Option<Value> = second.and_then(|l| serde_json::from_slice(&l).ok());
    if head["v"].as_u64() != Some(manifest::VERSION) {
        return Err(refuse("it is of an unknown version"));
    }
    if head["taskId"].as_str() != Some(name) {
        return Err(refuse("it names another task id than its directory"));
    }
    let argv: Vec<String> = head["argv"]
        .as_array()
        .filter(|a| !a.is_empty())
        .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect())
        .ok_or_else(|| refuse("its argv is not a list of strings"))?;
    let session = head["session"].as_str().unwrap_or("").to_string();
    let started_at = head["startedAt"].as_f64().unwrap_or(0.0);
    if filter.session_id.as_deref().is_some_and(|s| s != session) {
        return Ok(None);
    }
    if filter.since_ms.is_some_and(|s| started_at < s) {
        return Ok(None);
    }
    let mut idents = [0u64; 2];
    for (i, slot) in idents.iter_mut().enumerate() {
        *slot = head["idents"][i]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| refuse("its log identities are missing"))?;
    }
    // Each log: the file the manifest's identity names, this user's, one link.
    let streams = [StreamLog::new(), StreamLog::new()];
    for (i, s) in Stream::BOTH.into_iter().enumerate() {
        let (file, len) = logfile::open_log(base, name, s.file_name(), idents[i]).map_err(|e| {
            refuse(&format!(
                "{} is not the file its identity names (it points at another file: {e})",
                s.file_name()
            ))
        })?;
        let st = rustix::fs::fstat(file.as_fd()).map_err(|e| e.to_string())?;
        if let Some(why) = not_own(&st, s.file_name()) {
            return Err(refuse(&why));
        }
        if st.st_nlink != 1 || st.st_mode & 0o170000 != 0o100000 {
            return Err(refuse(&format!(
                "{} is not a single-link regular file",
                s.file_name()
            )));
        }
        let mut bytes = Vec::with_capacity(len as usize);
        (&file)
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(|e| refuse(&e.to_string()))?;
        if !bytes.is_empty() {
            capture::publish(&streams[i], &bytes, log_bytes);
        }
        streams[i].finish();
    }
    let mut live = Live::queued();
    let duration;
    match end
        .as_ref()
        .and_then(|e| Some((e, manifest::state_named(e["state"].as_str()?)?)))
    {
        Some((e, state)) => {
            live.state = state;
            live.exit_code = e["exitCode"].as_i64().map(|c| c as i32);
            live.signal = e["signal"]
                .as_str()
                .and_then(crate::process::signals::from_name);
            live.error = e["error"].as_str().map(str::to_string);
            live.killed = e["killed"].as_bool().unwrap_or(false);
            let usage = e["usage"]["cpuMs"]
                .as_f64()
                .map(|c| crate::process::limits::Usage {
                    cpu_ms: c,
                    peak_memory_bytes: e["usage"]["peakMemoryBytes"].as_u64(),
                });
            let limit = match e["limit"].as_str() {
                Some("memory") => Some(crate::process::limits::Kind::Memory),
                Some("processes") => Some(crate::process::limits::Kind::Processes),
                Some("cpu") => Some(crate::process::limits::Kind::Cpu),
                _ => None,
            };
            live.usage = crate::process::limits::Packed::new(usage, limit);
            duration = e["durationMs"].as_f64().unwrap_or(0.0);
        }
        None => {
            live.state = State::Killed;
            live.killed = true;
            let held = streams[0].bytes() + streams[1].bytes();
            live.error = Some(format!(
                "The host process that started this command ended before it settled, and the command was stopped with it; the {held} bytes its logs hold are kept (stdout {}, stderr {})",
                streams[0].bytes(),
                streams[1].bytes()
            ));
            // From the start to the last write to its logs.
            let modified = [Stream::Stdout, Stream::Stderr]
                .iter()
                .filter_map(|s| {
                    rustix::fs::statat(&dir, s.file_name(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                        .ok()
                })
                .map(|st| st.st_mtime as f64 * 1000.0 + st.st_mtime_nsec as f64 / 1e6)
                .fold(started_at, f64::max);
            duration = (modified - started_at).max(0.0);
        }
    }
    live.looked_at = true;
    live.refs = Some(Refs::BuiltIn);
    let now = Instant::now();
    let span = Duration::from_secs_f64(duration.max(0.0) / 1000.0);
    live.ended = Some(now);
    let label = head["label"].as_str().unwrap_or("").to_string();
    let derived = crate::policy::label_for(None, &argv);
    let containment = if head["containment"].as_str() == Some("tree") {
        crate::process::Containment::Tree
    } else {
        crate::process::Containment::Group
    };
    let Some(seq) = ids.claim_recovered(name) else {
        return Ok(None);
    };
    let rec = Record {
        seq,
        host,
        session: crate::intern::intern(&session),
        given_label: (!label.is_empty() && label != derived).then(|| label.into_boxed_str()),
        argv: argv.into_boxed_slice(),
        cwd: crate::intern::intern(head["cwd"].as_str().unwrap_or("")),
        started_at_ms: started_at,
        started: now.checked_sub(span).unwrap_or(now),
        streams,
        logs_root: base.clone(),
        idents,
        hidden: false,
        confined: head["confined"].as_bool().unwrap_or(false),
        kill_grace_ms: 0.0,
        bank: BankMode::BuiltIn,
        pgid: AtomicI32::new(0),
        containment,
        live: Mutex::new(live),
        settled: Settled::new(),
        link: Mutex::new(Link::Closed),
        input: None,
    };
    rec.settled.publish();
    Ok(Some(Arc::new(rec)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> (tempfile::TempDir, Arc<LogBase>) {
        let d = tempfile::tempdir().unwrap();
        let Ok(b) = logfile::named_base(d.path()) else {
            panic!("a temp directory is a trusted base")
        };
        (d, Arc::new(b))
    }

    /// A task directory written by a process that is gone, holding `manifest`.
    fn task_dir(root: &Path, name: &str, manifest: &str) {
        let dir = root.join(name);
        std::fs::create_dir(&dir).unwrap();
        // pid 1 runs, but not since clock tick 0: the writer is gone.
        std::fs::write(dir.join(".writer-1-0"), b"").unwrap();
        std::fs::write(dir.join(manifest::FILE), manifest).unwrap();
        for s in Stream::BOTH {
            std::fs::write(dir.join(s.file_name()), b"").unwrap();
        }
    }

    #[test]
    fn only_well_formed_manifests_of_ended_writers_are_taken() {
        let (d, b) = base();
        let f = Filter::default();
        let ids = Arc::new(Ids::new());
        // Not a manifest, and a manifest naming another task id: refused.
        task_dir(d.path(), "c1aaaaaaaaaaaa", "not json\n");
        let e = one(&ids, &Default::default(), 1, &b, "c1aaaaaaaaaaaa", &f).unwrap_err();
        assert!(e.contains("its first line is not a manifest"), "{e}");
        task_dir(
            d.path(),
            "c2aaaaaaaaaaaa",
            "{\"v\":1,\"taskId\":\"c3aaaaaaaaaaaa\",\"argv\":[\"x\"]}\n",
        );
        let e = one(&ids, &Default::default(), 1, &b, "c2aaaaaaaaaaaa", &f).unwrap_err();
        assert!(e.contains("names another task id"), "{e}");
        // Identities that are not the logs': refused as pointing elsewhere.
        task_dir(
            d.path(),
            "c4aaaaaaaaaaaa",
            "{\"v\":1,\"taskId\":\"c4aaaaaaaaaaaa\",\"argv\":[\"x\"],\"idents\":[\"1\",\"2\"]}\n",
        );
        let e = one(&ids, &Default::default(), 1, &b, "c4aaaaaaaaaaaa", &f).unwrap_err();
        assert!(e.contains("points at another file"), "{e}");
        // This process's own directory, and one without a manifest: skipped.
        let own = d.path().join("c5aaaaaaaaaaaa");
        std::fs::create_dir(&own).unwrap();
        std::fs::write(own.join(logfile::own_marker()), b"").unwrap();
        std::fs::write(own.join(manifest::FILE), "x").unwrap();
        assert!(one(&ids, &Default::default(), 1, &b, "c5aaaaaaaaaaaa", &f)
            .unwrap()
            .is_none());
        let bare = d.path().join("c6aaaaaaaaaaaa");
        std::fs::create_dir(&bare).unwrap();
        assert!(one(&ids, &Default::default(), 1, &b, "c6aaaaaaaaaaaa", &f)
            .unwrap()
            .is_none());
        assert!(looks_like_task_id("c12abcdef012345") && !looks_like_task_id("c1xyz"));
    }
}
