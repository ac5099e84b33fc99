//! The watchdog: one small `/bin/sh` process per host process that outlives
//! it just long enough to stop every command group still running when the
//! host dies in any way — SIGKILL included, which no in-process hook sees.
//!
//! The host keeps the write end of the watchdog's stdin and tells it `+<pgid>`
//! when a command starts and `-<pgid>` once its group is stopped. When the
//! host dies the kernel closes that pipe; the watchdog reads end-of-file and
//! sends SIGTERM, then SIGKILL a moment later, to every group it still knows.
//! It runs in a process group of its own, so a terminal's Ctrl-C or a kill of
//! the host's group does not take it down first.

use std::io::Write;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{LazyLock, Mutex};

const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT
groups=' '
while read -r op pg; do
  case "$op" in
    +) groups="$groups$pg " ;;
    -) case "$groups" in *" $pg "*) groups="${groups%% $pg *} ${groups#* $pg }" ;; esac ;;
  esac
done
[ "$groups" = ' ' ] && exit 0
for pg in $groups; do kill -s TERM -- "-$pg" 2>/dev/null; kill -s CONT -- "-$pg" 2>/dev/null; done
sleep 2
for pg in $groups; do kill -s KILL -- "-$pg" 2>/dev/null; done
exit 0
"#;

static PIPE: LazyLock<Mutex<Option<ChildStdin>>> = LazyLock::new(|| Mutex::new(start()));

fn start() -> Option<ChildStdin> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(SCRIPT)
        .arg("neurolink-commands-watchdog")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/");
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().ok()?;
    let stdin = child.stdin.take();
    // The watchdog is reaped by init once it exits after the host; a thread
    // here would wait on it for nothing.
    std::mem::forget(child);
    stdin
}

fn send(line: String) {
    let mut pipe = PIPE.lock().unwrap();
    if let Some(p) = pipe.as_mut() {
        if p.write_all(line.as_bytes()).is_err() {
            *pipe = None;
        }
    }
}

/// Start the watchdog now if it is not running yet.
pub fn ensure_started() {
    LazyLock::force(&PIPE);
}

/// A command group started.
pub fn track(pgid: i32) {
    send(format!("+ {pgid}\n"));
}

/// A command group is stopped and needs no watching.
pub fn untrack(pgid: i32) {
    send(format!("- {pgid}\n"));
}
