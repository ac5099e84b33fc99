//! The cwd check by a held handle (SPEC §14 "Working directory"): a
//! directory is opened (following junctions and symbolic links, as the
//! Linux check follows symlinks) without sharing delete access, so while the
//! handle is held the directory can be neither renamed nor removed; its real
//! path and identity come from the handle, not from re-reading the path.

use std::ffi::OsString;
use std::io;
use std::mem::zeroed;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::io::{AsHandle, BorrowedHandle, IntoRawHandle};
use std::path::{Component, Path, PathBuf, Prefix};
use std::ptr::null;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, GetFileInformationByHandle, GetFinalPathNameByHandleW, BY_HANDLE_FILE_INFORMATION,
    FILE_ATTRIBUTE_DIRECTORY, FILE_FLAG_BACKUP_SEMANTICS, FILE_LIST_DIRECTORY,
    FILE_NAME_NORMALIZED, FILE_READ_ATTRIBUTES, FILE_SHARE_READ, FILE_SHARE_WRITE, FILE_TRAVERSE,
    OPEN_EXISTING, VOLUME_NAME_DOS,
};

/// An open directory: its real path and its identity (volume serial number,
/// file index), held until dropped.
pub struct HeldDir {
    handle: HANDLE,
    path: PathBuf,
    volume: u32,
    index: u64,
}

// SAFETY: the handle is a process-wide kernel value, only closed in Drop.
unsafe impl Send for HeldDir {}
// SAFETY: nothing mutates through a shared reference.
unsafe impl Sync for HeldDir {}

impl Drop for HeldDir {
    fn drop(&mut self) {
        // SAFETY: opened by `open`, closed once, here.
        unsafe { CloseHandle(self.handle) };
    }
}

impl AsHandle for HeldDir {
    fn as_handle(&self) -> BorrowedHandle<'_> {
        // SAFETY: the handle is open until `self` is dropped, which the
        // borrow outlives.
        unsafe { BorrowedHandle::borrow_raw(self.handle) }
    }
}

impl HeldDir {
    /// Opens the directory `path` names and holds it. Not a directory:
    /// `NotADirectory`-like error (`InvalidInput`).
    pub fn open(path: &Path) -> io::Result<HeldDir> {
        let wide: Vec<u16> = path.as_os_str().encode_wide().chain(Some(0)).collect();
        // SAFETY: `wide` is NUL-terminated and outlives the call; backup
        // semantics is what opens a directory; no FILE_SHARE_DELETE, so the
        // directory cannot be renamed or removed while this handle is open.
        let handle = unsafe {
            CreateFileW(
                wide.as_ptr(),
                FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES,
                FILE_SHARE_READ | FILE_SHARE_WRITE,
                null(),
                OPEN_EXISTING,
                FILE_FLAG_BACKUP_SEMANTICS,
                std::ptr::null_mut(),
            )
        };
        if handle == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        Self::from_raw(handle)
    }

    /// Another holder of the directory `h` names (a duplicate of the handle,
    /// with the same access): what a start holds while the checker keeps
    /// its own.
    pub fn duplicate(h: BorrowedHandle<'_>) -> io::Result<HeldDir> {
        Self::from_raw(h.try_clone_to_owned()?.into_raw_handle() as HANDLE)
    }

    /// Takes `handle` (open, owned by the caller until now) and reads the
    /// directory's identity and real path from it.
    fn from_raw(handle: HANDLE) -> io::Result<HeldDir> {
        let mut held = HeldDir {
            handle,
            path: PathBuf::new(),
            volume: 0,
            index: 0,
        };
        // SAFETY: a plain-data struct for which all zeroes is a valid value.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { zeroed() };
        // SAFETY: the handle is open; `info` outlives the call.
        if unsafe { GetFileInformationByHandle(handle, &mut info) } == 0 {
            return Err(io::Error::last_os_error());
        }
        if info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a directory",
            ));
        }
        held.volume = info.dwVolumeSerialNumber;
        held.index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
        held.path = final_path(handle)?;
        Ok(held)
    }

    /// The handle itself, owned by the caller from now on (the directory
    /// stays held while it is open).
    pub fn into_handle(self) -> std::os::windows::io::OwnedHandle {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so the handle is closed only by the
        // OwnedHandle made from it; the path is moved out once and dropped.
        unsafe {
            drop(std::ptr::read(&me.path));
            std::os::windows::io::FromRawHandle::from_raw_handle(me.handle)
        }
    }

    /// The directory's real path, as the handle names it (`C:\…` or
    /// `\\server\share\…`, without the `\\?\` prefix).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// (volume serial number, file index): the identity on disk.
    pub fn id(&self) -> (u32, u64) {
        (self.volume, self.index)
    }

    /// Whether `other` is this directory or lies below it: same volume, and
    /// this directory's real path is a prefix of the other's, component by
    /// component, ignoring case as NTFS does. A directory on another
    /// volume or share is never inside.
    pub fn contains(&self, other: &HeldDir) -> bool {
        if self.volume != other.volume {
            return false;
        }
        let mine: Vec<Component> = self.path.components().collect();
        let theirs: Vec<Component> = other.path.components().collect();
        theirs.len() >= mine.len()
            && mine.iter().zip(&theirs).all(|(a, b)| {
                a.as_os_str().to_string_lossy().to_lowercase()
                    == b.as_os_str().to_string_lossy().to_lowercase()
            })
    }
}

/// `GetFinalPathNameByHandleW`, without the `\\?\` (or `\\?\UNC\`) prefix.
fn final_path(handle: HANDLE) -> io::Result<PathBuf> {
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: `buf` is writable for its length; the handle is open.
        let n = unsafe {
            GetFinalPathNameByHandleW(
                handle,
                buf.as_mut_ptr(),
                buf.len() as u32,
                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
            )
        } as usize;
        if n == 0 {
            return Err(io::Error::last_os_error());
        }
        if n < buf.len() {
            buf.truncate(n);
            break;
        }
        buf.resize(n + 1, 0);
    }
    let verbatim = PathBuf::from(OsString::from_wide(&buf));
    Ok(strip_verbatim(&verbatim))
}

fn strip_verbatim(p: &Path) -> PathBuf {
    let mut parts = p.components();
    match parts.next() {
        Some(Component::Prefix(pre)) => match pre.kind() {
            Prefix::VerbatimDisk(d) => {
                let mut out = PathBuf::from(format!("{}:\\", d as char));
                out.extend(parts.filter(|c| !matches!(c, Component::RootDir)));
                out
            }
            Prefix::VerbatimUNC(server, share) => {
                let mut s = OsString::from("\\\\");
                s.push(server);
                s.push("\\");
                s.push(share);
                s.push("\\");
                let mut out = PathBuf::from(s);
                out.extend(parts.filter(|c| !matches!(c, Component::RootDir)));
                out
            }
            _ => p.to_path_buf(),
        },
        _ => p.to_path_buf(),
    }
}
