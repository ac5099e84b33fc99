//! Whether a command is blocked reading its input (SPEC §15) is read from
//! `/proc` on Linux; Windows gives no such view of another process's
//! pending reads, so the field stays absent there (the documentation says
//! so) and no watch is ever armed.

use crate::platform::BorrowedFd;

/// What a command reads, as the kernel names it: never known on Windows.
#[derive(Debug)]
pub enum Target {}

/// The platform cannot tell.
pub fn supported() -> bool {
    false
}

/// Never a target on Windows.
pub fn target_of(_fd: BorrowedFd<'_>, _terminal: bool) -> Option<Target> {
    None
}

/// Unreachable: there is no target.
pub fn waiting(_leader: i32, t: &Target, _fd: BorrowedFd<'_>) -> bool {
    match *t {}
}
