//! Signal names as Node spells them, and sending signals to process groups.
//! The table is the kernel's: Linux has SIGSTKFLT and SIGPWR, macOS SIGINFO.

/// The signal names a caller may pass to a kill.
#[cfg(unix)]
pub const NAMES: &[&str] = &[
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGILL",
    "SIGTRAP",
    "SIGABRT",
    "SIGBUS",
    "SIGFPE",
    "SIGKILL",
    "SIGUSR1",
    "SIGSEGV",
    "SIGUSR2",
    "SIGPIPE",
    "SIGALRM",
    "SIGTERM",
    #[cfg(target_os = "linux")]
    "SIGSTKFLT",
    "SIGCHLD",
    "SIGCONT",
    "SIGSTOP",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGURG",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGWINCH",
    "SIGIO",
    #[cfg(target_os = "linux")]
    "SIGPWR",
    #[cfg(target_os = "macos")]
    "SIGINFO",
    "SIGSYS",
];

#[cfg(unix)]
const NUMBERS: &[i32] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGKILL,
    libc::SIGUSR1,
    libc::SIGSEGV,
    libc::SIGUSR2,
    libc::SIGPIPE,
    libc::SIGALRM,
    libc::SIGTERM,
    #[cfg(target_os = "linux")]
    libc::SIGSTKFLT,
    libc::SIGCHLD,
    libc::SIGCONT,
    libc::SIGSTOP,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGURG,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGWINCH,
    libc::SIGIO,
    #[cfg(target_os = "linux")]
    libc::SIGPWR,
    #[cfg(target_os = "macos")]
    libc::SIGINFO,
    libc::SIGSYS,
];

/// The signal names a caller may pass to a kill on Windows, where the runner
/// has two ways to stop a command (SPEC §14): `SIGKILL` terminates its Job
/// Object at once; the others are a console break to its process group,
/// then the job is terminated after `killGraceMs`.
#[cfg(windows)]
pub const NAMES: &[&str] = &["SIGHUP", "SIGINT", "SIGQUIT", "SIGKILL", "SIGTERM"];

/// Their numbers, as on Linux (a status reports the signal by name).
#[cfg(windows)]
const NUMBERS: &[i32] = &[1, 2, 3, 9, 15];

/// The number of a signal named like Node names it (`"SIGTERM"`).
pub fn from_name(name: &str) -> Option<i32> {
    NAMES.iter().position(|n| *n == name).map(|i| NUMBERS[i])
}

/// The name of a signal number, or `SIG<n>` for one without a name here.
pub fn name(sig: i32) -> String {
    NUMBERS
        .iter()
        .position(|n| *n == sig)
        .map(|i| NAMES[i].to_string())
        .unwrap_or_else(|| format!("SIG{sig}"))
}

/// Send `sig` to every process of group `pgid`; a group that is already
/// gone is not an error.
///
/// A confined command is PID 1 of its own PID namespace, and the kernel
/// delivers to such a process, from outside its namespace, only the
/// signals it has a handler for (and SIGKILL, SIGSTOP): a SIGTERM it does
/// not catch would be dropped and the command would run until the kill
/// grace. So when the leader is PID 1 of a namespace, `sig` would end an
/// ordinary process (its default action terminates) and the leader neither
/// catches nor ignores it, the group gets SIGKILL instead.
#[cfg(unix)]
pub fn signal_group(pgid: i32, sig: i32) {
    #[cfg(target_os = "linux")]
    let sig = if pgid > 1 && terminates_by_default(sig) && namespace_init_ignores(pgid, sig) {
        libc::SIGKILL
    } else {
        sig
    };
    let (Some(group), Some(sig)) = (
        rustix::process::Pid::from_raw(pgid).filter(|_| pgid > 1),
        rustix::process::Signal::from_named_raw(sig),
    ) else {
        return;
    };
    let _ = rustix::process::kill_process_group(group, sig);
}

/// Stop the command `pgid` leads as `sig` says (SPEC §14): `SIGKILL`
/// terminates its Job Object, the others send a console break (see
/// [`NAMES`]); a command that is already gone is not an error.
#[cfg(windows)]
pub fn signal_group(pgid: i32, sig: i32) {
    super::trees::stop(pgid, sig);
}

/// Whether an uncaught `sig` ends a process (not SIGCHLD, SIGCONT, SIGURG,
/// SIGWINCH nor the stop signals).
#[cfg(target_os = "linux")]
fn terminates_by_default(sig: i32) -> bool {
    !matches!(
        sig,
        libc::SIGCHLD
            | libc::SIGCONT
            | libc::SIGURG
            | libc::SIGWINCH
            | libc::SIGSTOP
            | libc::SIGTSTP
            | libc::SIGTTIN
            | libc::SIGTTOU
            | libc::SIGKILL
    ) && (1..=64).contains(&sig)
}

/// Whether `pid` is PID 1 of a PID namespace below ours that has no handler
/// for `sig` and does not ignore it (from `/proc/<pid>/status`).
#[cfg(target_os = "linux")]
fn namespace_init_ignores(pid: i32, sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    let init = field("NSpid:").is_some_and(|v| {
        let ids: Vec<&str> = v.split_whitespace().collect();
        ids.len() > 1 && ids.last() == Some(&"1")
    });
    if !init {
        return false;
    }
    let mask = |name: &str| {
        field(name)
            .and_then(|v| u64::from_str_radix(v, 16).ok())
            .unwrap_or(0)
    };
    let bit = 1u64 << (sig - 1);
    (mask("SigCgt:") | mask("SigIgn:")) & bit == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(NAMES.len(), NUMBERS.len());
        for n in NAMES {
            assert_eq!(name(from_name(n).unwrap()), *n);
        }
        assert_eq!(from_name("SIGTERM"), Some(15));
        assert_eq!(from_name("TERM"), None);
        assert_eq!(name(64), "SIG64");
    }

    #[test]
    #[cfg(unix)]
    fn every_named_signal_can_be_sent() {
        // signal_group drops a number rustix has no name for; every number a
        // caller can name must have one.
        for n in NUMBERS {
            assert!(
                rustix::process::Signal::from_named_raw(*n).is_some(),
                "{}",
                name(*n)
            );
        }
    }
}
