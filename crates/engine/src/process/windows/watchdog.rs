//! On Windows no watchdog process is needed: every command's Job Object is
//! kill-on-close, so when the host exits or is killed — by any means — the
//! system closes the job's last handle and ends every process in it (SPEC
//! §14 "Trees"). These keep the Unix watchdog's calls.

/// Nothing to start.
pub fn ensure_started() {}

/// Nothing to track: the job holds the tree.
pub fn track(_pgid: i32) {}

/// Nothing to untrack.
pub fn untrack(_pgid: i32) {}
