//! The Windows side of the engine's platform code (SPEC §14; see the parent
//! module).
//!
//! Shared code holds descriptors; on Windows the same places hold handles.
//! Rather than a copy of that code per platform, the handle types carry the
//! descriptor names here: [`OwnedFd`] is an `OwnedHandle`, [`BorrowedFd`] a
//! `BorrowedHandle`, and [`AsFd::as_fd`] borrows any handle owner's handle.
//!
//! - [`pipe`]: a command's pipes as tokio readers and writers (overlapped
//!   named pipes on the runtime's I/O completion port).
//! - [`libc`]: the POSIX signal numbers the engine speaks (a status names the
//!   signal the runner used) that the Windows C runtime does not define.
//! - [`start_time`], [`file_id`]: a process's creation time and a file's
//!   (volume serial, file index, length).

use std::io;
use std::mem::zeroed;
use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, OwnedHandle, RawHandle};

use windows_sys::Win32::Storage::FileSystem::{
    GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION,
};

/// An owned handle, under the name shared code gives an owned descriptor.
pub type OwnedFd = OwnedHandle;
/// A borrowed handle, under the name shared code gives a borrowed descriptor.
pub type BorrowedFd<'a> = BorrowedHandle<'a>;

/// Borrow the handle of anything that owns one (`AsFd` on Unix).
pub trait AsFd {
    /// The handle, borrowed.
    fn as_fd(&self) -> BorrowedFd<'_>;
}

impl<T: AsHandle + ?Sized> AsFd for T {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.as_handle()
    }
}

/// The raw handle of anything that owns one (`AsRawFd` on Unix).
pub trait AsRawFd {
    /// The raw handle.
    fn as_raw_fd(&self) -> RawHandle;
}

impl<T: AsRawHandle + ?Sized> AsRawFd for T {
    fn as_raw_fd(&self) -> RawHandle {
        self.as_raw_handle()
    }
}

/// Reads at an offset (`std::os::unix::fs::FileExt`'s reads). Windows'
/// `seek_read` also moves the handle's cursor; every reader of a log opens
/// its own handle, so no one else's position moves.
pub trait FileExt {
    /// Read up to `buf.len()` bytes at `offset`.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Read exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "failed to fill whole buffer",
                    ))
                }
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl FileExt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        match std::os::windows::fs::FileExt::seek_read(self, buf, offset) {
            // Reading at or past the end of a file is end of file, not an error.
            Err(e) if e.raw_os_error() == Some(38) => Ok(0),
            r => r,
        }
    }
}

/// A path's bytes (`std::os::unix::ffi::OsStrExt`): its UTF-8 on Windows.
/// What git prints is UTF-8 there; bytes that are not become U+FFFD.
pub trait OsStrExt {
    /// The path of these bytes.
    fn from_bytes(b: &[u8]) -> &Self;
    /// The bytes of this path.
    fn as_bytes(&self) -> &[u8];
}

impl OsStrExt for std::ffi::OsStr {
    fn from_bytes(b: &[u8]) -> &Self {
        std::ffi::OsStr::new(std::str::from_utf8(b).unwrap_or("\u{FFFD}"))
    }
    fn as_bytes(&self) -> &[u8] {
        self.as_encoded_bytes()
    }
}

/// Permission bits (`std::os::unix::fs::PermissionsExt::mode`): Windows
/// has no execute bit (the file's extension decides what runs), so a file
/// reads as readable and runnable by its owner, writable unless read-only.
pub trait PermissionsExt {
    /// The bits.
    fn mode(&self) -> u32;
}

impl PermissionsExt for std::fs::Permissions {
    fn mode(&self) -> u32 {
        if self.readonly() {
            0o555
        } else {
            0o755
        }
    }
}

/// File-type bits (`std::os::unix::fs::MetadataExt::mode`'s `S_IFMT`
/// part, with the permission bits of [`PermissionsExt`]).
pub trait MetadataExt {
    /// The bits.
    fn mode(&self) -> u32;
}

impl MetadataExt for std::fs::Metadata {
    fn mode(&self) -> u32 {
        let t = self.file_type();
        let kind = if t.is_symlink() {
            0o120_000
        } else if t.is_dir() {
            0o040_000
        } else {
            0o100_000
        };
        kind | PermissionsExt::mode(&self.permissions())
    }
}

/// How many names an open file has (0 once it was removed).
pub fn links(fd: impl AsFd) -> io::Result<u32> {
    // SAFETY: a plain-data struct for which all zeroes is a valid value.
    let mut i: BY_HANDLE_FILE_INFORMATION = unsafe { zeroed() };
    // SAFETY: the handle is open for the borrow; `i` outlives the call.
    if unsafe { GetFileInformationByHandle(fd.as_fd().as_raw_handle(), &mut i) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(i.nNumberOfLinks)
}

/// The POSIX signal numbers the engine speaks, with Linux's values: what a
/// caller names in a kill and what a status reports. On Windows they are
/// the runner's vocabulary only: `SIGKILL` terminates the command's Job
/// Object, the others are a console break, then the job is terminated
/// after the grace (`process::signals`).
pub mod libc {
    pub use ::libc::*;
    /// Kill: ends the whole job at once.
    pub const SIGKILL: i32 = 9;
    /// Continue: nothing to do on Windows (no process is stopped by a signal).
    pub const SIGCONT: i32 = 18;
}

/// When the running process `pid` was created (100 ns units since 1601), if
/// it exists and runs.
pub fn start_time(pid: i32) -> Option<u64> {
    nlc_windows::proc::start_time(u32::try_from(pid).ok()?)
}

/// The identity of an open file: (volume serial, file index, 0, length) —
/// SPEC §14 identifies a log by volume and file id. The creation time is
/// left out: wine reports the Linux change time there, which moves with
/// every write.
pub fn file_id(fd: impl AsFd) -> io::Result<(u64, u64, u64, u64)> {
    // SAFETY: a plain-data struct for which all zeroes is a valid value.
    let mut i: BY_HANDLE_FILE_INFORMATION = unsafe { zeroed() };
    // SAFETY: the handle is open for the borrow; `i` outlives the call.
    if unsafe { GetFileInformationByHandle(fd.as_fd().as_raw_handle(), &mut i) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let index = (u64::from(i.nFileIndexHigh) << 32) | u64::from(i.nFileIndexLow);
    let len = (u64::from(i.nFileSizeHigh) << 32) | u64::from(i.nFileSizeLow);
    Ok((u64::from(i.dwVolumeSerialNumber), index, 0, len))
}

/// A command's pipes for the supervisor's select loop, with the
/// constructors tokio's Unix pipes have: the runner's ends are overlapped
/// named pipes (`nlc_windows::pipe`), driven by the runtime's I/O
/// completion port like any tokio named pipe — no thread per pipe.
pub mod pipe {
    use super::OwnedFd;
    use std::io;
    use std::os::windows::io::{AsHandle, BorrowedHandle, IntoRawHandle};
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
    use tokio::net::windows::named_pipe::NamedPipeServer;

    fn server(fd: OwnedFd) -> io::Result<NamedPipeServer> {
        // SAFETY: the handle is the overlapped server end of a named pipe
        // (`nlc_windows::pipe::pair`), owned until now and handed over whole.
        unsafe { NamedPipeServer::from_raw_handle(fd.into_raw_handle()) }
    }

    /// The runner's end of a command's stdout or stderr.
    pub struct Receiver(NamedPipeServer);

    impl Receiver {
        /// Take the runner's (overlapped) end of a pipe; needs a tokio runtime.
        pub fn from_owned_fd(fd: OwnedFd) -> io::Result<Receiver> {
            server(fd).map(Receiver)
        }

        /// As [`Receiver::from_owned_fd`] (nothing else to check on Windows).
        pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<Receiver> {
            Self::from_owned_fd(fd)
        }
    }

    impl AsyncRead for Receiver {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_read(cx, buf)
        }
    }

    /// The runner's end of a command's stdin.
    pub struct Sender(NamedPipeServer);

    impl Sender {
        /// Take the runner's (overlapped) end of a pipe; needs a tokio runtime.
        pub fn from_owned_fd(fd: OwnedFd) -> io::Result<Sender> {
            server(fd).map(Sender)
        }

        /// As [`Sender::from_owned_fd`] (nothing else to check on Windows).
        pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<Sender> {
            Self::from_owned_fd(fd)
        }
    }

    impl AsHandle for Sender {
        fn as_handle(&self) -> BorrowedHandle<'_> {
            self.0.as_handle()
        }
    }

    impl AsyncWrite for Sender {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.0).poll_write(cx, buf)
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_flush(cx)
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_shutdown(cx)
        }
    }
}
