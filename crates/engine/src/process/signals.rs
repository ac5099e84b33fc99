//! Signal names as Node spells them, and sending signals to process groups.
//! The table is the kernel's: Linux has SIGSTKFLT and SIGPWR, macOS SIGINFO.

/// The signal names a caller may pass to a kill.
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
pub fn signal_group(pgid: i32, sig: i32) {
    let (Some(group), Some(sig)) = (
        rustix::process::Pid::from_raw(pgid).filter(|_| pgid > 1),
        rustix::process::Signal::from_named_raw(sig),
    ) else {
        return;
    };
    let _ = rustix::process::kill_process_group(group, sig);
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
