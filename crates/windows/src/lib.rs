//! Windows process primitives of neurolink-commands (SPEC §14): the exact
//! command line of an argv ([`cmdline`]), the safe `cmd.exe` line of a
//! `.cmd`/`.bat` program or the refusal naming the argument, the `PATH` +
//! `PATHEXT` search ([`search`]), one Job Object per command (`job`), the
//! cwd check by a held directory handle (`dir`) and the start of one command
//! from all of these (`command`), and the log base under `%TEMP%` with its
//! ACL check and logs known by volume and file id (`logdir`), a
//! process's creation time for markers that outlive a pid (`proc`), and
//! standard-stream pipes whose runner side is overlapped (`pipe`), for a
//! runner that reads them through an I/O completion port.
//!
//! [`cmdline`] and [`search`] are plain logic, built and unit-tested on every
//! host; `job`, `dir`, `command`, `logdir`, `pipe`, `proc`, `conpty` and
//! `terminal` exist on Windows only and are tested there (under wine here,
//! natively in the workflow): `tests/windows.rs`.

pub mod cmdline;
#[cfg(windows)]
pub mod command;
#[cfg(windows)]
pub mod conpty;
#[cfg(windows)]
pub mod dir;
#[cfg(windows)]
pub mod job;
#[cfg(windows)]
pub mod logdir;
#[cfg(windows)]
pub mod pipe;
#[cfg(windows)]
pub mod proc;
pub mod search;
#[cfg(windows)]
pub mod terminal;
