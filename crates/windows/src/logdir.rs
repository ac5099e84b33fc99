//! The log base on Windows (SPEC §14 "Logs", as §2 and §13 on Linux): a
//! directory under `%TEMP%`, trusted only when it is a real directory (not a
//! junction or symbolic link) owned by this process's user whose ACL grants
//! no one else any access; held open without delete sharing, so it cannot
//! be renamed or replaced while the runner uses it. Logs are created
//! exclusively, never through a reparse point, and known afterwards by
//! (volume serial, file index): a later open refuses a file whose identity
//! differs.

use std::fs::{File, OpenOptions};
use std::io;
use std::mem::{size_of, zeroed};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};

use windows_sys::Win32::Foundation::{CloseHandle, LocalFree, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, GetSecurityInfo,
    SDDL_REVISION_1, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    EqualSid, GetAce, GetTokenInformation, IsWellKnownSid, TokenOwner, TokenUser,
    WinBuiltinAdministratorsSid, WinLocalSystemSid, ACCESS_ALLOWED_ACE, ACE_HEADER, ACL,
    DACL_SECURITY_INFORMATION, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
    SECURITY_ATTRIBUTES, TOKEN_INFORMATION_CLASS, TOKEN_OWNER, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateDirectoryW, CreateFileW, GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION,
    FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_LIST_DIRECTORY,
    FILE_READ_ATTRIBUTES, FILE_SHARE_READ, FILE_SHARE_WRITE, FILE_TRAVERSE, OPEN_EXISTING,
    READ_CONTROL,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// An ACE that allows access (the only kind that can grant it).
const ACCESS_ALLOWED_ACE_TYPE: u8 = 0;

/// A file's identity: (volume serial number, file index).
pub type FileId = (u32, u64);

/// A directory that passed the trust rule, held open.
pub struct LogBase {
    handle: HANDLE,
    /// Its path, as messages spell it.
    pub path: PathBuf,
}

// SAFETY: the handle is a process-wide kernel value, closed only in Drop.
unsafe impl Send for LogBase {}
// SAFETY: nothing mutates through a shared reference.
unsafe impl Sync for LogBase {}

impl Drop for LogBase {
    fn drop(&mut self) {
        // SAFETY: opened by `open_trusted`, closed once, here.
        unsafe { CloseHandle(self.handle) };
    }
}

impl LogBase {
    /// The directory's handle, owned by the caller from now on (the
    /// directory stays held while it is open).
    pub fn into_handle(self) -> std::os::windows::io::OwnedHandle {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so the handle is closed only by the
        // OwnedHandle made from it; the path is moved out once and dropped.
        unsafe {
            drop(std::ptr::read(&me.path));
            std::os::windows::io::FromRawHandle::from_raw_handle(me.handle)
        }
    }
}

fn wide(p: &Path) -> Vec<u16> {
    p.as_os_str().encode_wide().chain(Some(0)).collect()
}

fn info(h: HANDLE) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    // SAFETY: a plain-data struct for which all zeroes is a valid value.
    let mut i: BY_HANDLE_FILE_INFORMATION = unsafe { zeroed() };
    // SAFETY: the handle is open; `i` outlives the call.
    if unsafe { GetFileInformationByHandle(h, &mut i) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(i)
}

fn id_of(i: &BY_HANDLE_FILE_INFORMATION) -> FileId {
    (
        i.dwVolumeSerialNumber,
        (u64::from(i.nFileIndexHigh) << 32) | u64::from(i.nFileIndexLow),
    )
}

/// This process's user SID, as bytes (a SID is self-contained).
fn user_sid() -> io::Result<Vec<u8>> {
    token_sid(TokenUser)
}

/// The owner this process's new files get: its user, or — for an elevated
/// administrator's token — the Administrators group.
fn default_owner_sid() -> io::Result<Vec<u8>> {
    token_sid(TokenOwner)
}

/// The SID of this process's token that `class` (TokenUser or TokenOwner) names.
fn token_sid(class: TOKEN_INFORMATION_CLASS) -> io::Result<Vec<u8>> {
    let mut token: HANDLE = null_mut();
    // SAFETY: the pseudo-handle of this process; the token handle is closed below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 256];
    let mut needed = 0u32;
    // SAFETY: `buf` is writable for its length; the token is open.
    let ok = unsafe {
        GetTokenInformation(
            token,
            class,
            buf.as_mut_ptr().cast(),
            buf.len() as u32,
            &mut needed,
        )
    };
    let err = io::Error::last_os_error();
    // SAFETY: closed once.
    unsafe { CloseHandle(token) };
    if ok == 0 {
        return Err(err);
    }
    // SAFETY: the call filled `buf` with a TOKEN_USER or TOKEN_OWNER whose
    // SID points into `buf`.
    let sid = unsafe {
        if class == TokenUser {
            (*(buf.as_ptr() as *const TOKEN_USER)).User.Sid
        } else {
            (*(buf.as_ptr() as *const TOKEN_OWNER)).Owner
        }
    };
    // The SID's length: 8 bytes of header plus 4 per sub-authority (byte 1).
    // SAFETY: `sid` points at a valid SID inside `buf`.
    let len = 8 + 4 * usize::from(unsafe { *(sid as *const u8).add(1) });
    // SAFETY: the SID occupies `len` bytes from `sid`.
    Ok(unsafe { std::slice::from_raw_parts(sid as *const u8, len) }.to_vec())
}

/// A SID as `S-1-5-…`, for messages.
fn sid_string(sid: PSID) -> String {
    let mut s: *mut u16 = null_mut();
    // SAFETY: `sid` is a valid SID; the string is freed with LocalFree below.
    if unsafe { ConvertSidToStringSidW(sid, &mut s) } == 0 {
        return "an unreadable SID".into();
    }
    let mut n = 0;
    // SAFETY: a NUL-terminated string returned by the call.
    while unsafe { *s.add(n) } != 0 {
        n += 1;
    }
    // SAFETY: `n` units were read as initialised above.
    let out = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(s, n) });
    // SAFETY: allocated by ConvertSidToStringSidW.
    unsafe { LocalFree(s.cast()) };
    out
}

/// Why the directory behind `h` is not trusted, or `None` when it is: its
/// owner must be `user` or `owner` (the owner this process's own new files
/// get), and every allowing ACE of its DACL must name `user`, SYSTEM or the
/// Administrators (who can take any file anyway).
fn distrust(h: HANDLE, user: &[u8], own: &[u8]) -> io::Result<Option<String>> {
    let mut owner: PSID = null_mut();
    let mut dacl: *mut ACL = null_mut();
    let mut sd: PSECURITY_DESCRIPTOR = null_mut();
    // SAFETY: the handle is open with READ_CONTROL; the out-pointers point
    // into `sd`, which is freed with LocalFree below.
    let rc = unsafe {
        GetSecurityInfo(
            h,
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            null_mut(),
            &mut dacl,
            null_mut(),
            &mut sd,
        )
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc as i32));
    }
    let user_psid = user.as_ptr() as PSID;
    let own_psid = own.as_ptr() as PSID;
    let verdict = (|| {
        // SAFETY: all three SIDs are valid for the calls.
        if owner.is_null()
            || unsafe { EqualSid(owner, user_psid) == 0 && EqualSid(owner, own_psid) == 0 }
        {
            let who = if owner.is_null() {
                "no one".into()
            } else {
                sid_string(owner)
            };
            return Some(format!(
                "it is owned by {who}, not by this process's user ({})",
                sid_string(user_psid)
            ));
        }
        if dacl.is_null() {
            return Some("it has no DACL, which grants everyone full access".into());
        }
        // SAFETY: `dacl` points at the descriptor's valid ACL.
        let count = unsafe { (*dacl).AceCount };
        for i in 0..u32::from(count) {
            let mut ace: *mut core::ffi::c_void = null_mut();
            // SAFETY: `i` is below the ACL's ACE count.
            if unsafe { GetAce(dacl, i, &mut ace) } == 0 {
                return Some("its ACL cannot be read".into());
            }
            // SAFETY: every ACE starts with an ACE_HEADER.
            let header = unsafe { &*(ace as *const ACE_HEADER) };
            if header.AceType != ACCESS_ALLOWED_ACE_TYPE {
                continue;
            }
            // SAFETY: an ACCESS_ALLOWED_ACE, whose SID starts at SidStart.
            let sid =
                unsafe { &(*(ace as *const ACCESS_ALLOWED_ACE)).SidStart } as *const u32 as PSID;
            // SAFETY: valid SIDs for the comparisons.
            let trusted = unsafe {
                EqualSid(sid, user_psid) != 0
                    || IsWellKnownSid(sid, WinLocalSystemSid) != 0
                    || IsWellKnownSid(sid, WinBuiltinAdministratorsSid) != 0
            };
            if !trusted {
                return Some(format!("its ACL grants access to {}", sid_string(sid)));
            }
        }
        None
    })();
    // SAFETY: allocated by GetSecurityInfo.
    unsafe { LocalFree(sd.cast()) };
    Ok(verdict)
}

/// Opens `path` as a directory without following a reparse point and checks
/// the trust rule on what was opened. `Ok(Err(why))`: it exists but is not
/// trusted.
pub fn open_trusted(path: &Path) -> io::Result<Result<LogBase, String>> {
    let w = wide(path);
    // SAFETY: `w` is NUL-terminated and outlives the call; the handle is
    // owned by the LogBase (or closed below). No delete sharing: the
    // directory stays where it is while held.
    let h = unsafe {
        CreateFileW(
            w.as_ptr(),
            READ_CONTROL
                | FILE_LIST_DIRECTORY
                | FILE_TRAVERSE
                | FILE_READ_ATTRIBUTES
                | FILE_ADD_FILE
                | FILE_ADD_SUBDIRECTORY,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            null(),
            OPEN_EXISTING,
            FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
            null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    let base = LogBase {
        handle: h,
        path: path.to_path_buf(),
    };
    let i = info(h)?;
    if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Ok(Err(
            "it is a reparse point (a junction or symbolic link)".into()
        ));
    }
    if i.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY == 0 {
        return Ok(Err("it is not a directory".into()));
    }
    Ok(match distrust(h, &user_sid()?, &default_owner_sid()?)? {
        None => Ok(base),
        Some(why) => Err(why),
    })
}

/// Creates `path` as a directory only this process's user (and SYSTEM) can
/// reach — a protected DACL, nothing inherited from `%TEMP%` — unless it
/// exists; then opens it by [`open_trusted`].
pub fn create_trusted(path: &Path) -> io::Result<Result<LogBase, String>> {
    let sd = OwnerOnly::new("OICI")?;
    let attrs = sd.attributes();
    let w = wide(path);
    // SAFETY: `w` is NUL-terminated; `attrs` and the descriptor it points
    // to outlive the call.
    let ok = unsafe { CreateDirectoryW(w.as_ptr(), &attrs) };
    let err = io::Error::last_os_error();
    if ok == 0 && err.kind() != io::ErrorKind::AlreadyExists {
        return Err(err);
    }
    open_trusted(path)
}

/// A protected security descriptor granting this process's user and SYSTEM
/// full access and no one else any (inheriting nothing from the parent).
pub(crate) struct OwnerOnly(PSECURITY_DESCRIPTOR);

impl OwnerOnly {
    /// With `inherit` as the ACEs' inheritance flags (`"OICI"` for a
    /// directory whose files take it, `""` for an object without children).
    pub(crate) fn new(inherit: &str) -> io::Result<OwnerOnly> {
        let user = user_sid()?;
        let sddl = format!(
            "D:P(A;{inherit};FA;;;{})(A;{inherit};FA;;;SY)\0",
            sid_string(user.as_ptr() as PSID)
        );
        let sddl: Vec<u16> = sddl.encode_utf16().collect();
        let mut sd: PSECURITY_DESCRIPTOR = null_mut();
        // SAFETY: `sddl` is NUL-terminated; `sd` is freed with LocalFree in Drop.
        if unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                null_mut(),
            )
        } == 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(OwnerOnly(sd))
    }

    /// Attributes that point at it (valid while `self` lives), not inheritable.
    pub(crate) fn attributes(&self) -> SECURITY_ATTRIBUTES {
        SECURITY_ATTRIBUTES {
            nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: self.0,
            bInheritHandle: 0,
        }
    }
}

impl Drop for OwnerOnly {
    fn drop(&mut self) {
        // SAFETY: allocated by the conversion in `new`, freed once.
        unsafe { LocalFree(self.0.cast()) };
    }
}

/// A name inside the base: one plain component (no separator, no `..`, no
/// `:` — which would name an alternate data stream).
fn child(base: &LogBase, name: &str) -> io::Result<PathBuf> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['\\', '/', ':', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a plain file name"),
        ));
    }
    Ok(base.path.join(name))
}

/// Creates the log `name` in the base exclusively (it must not exist, as
/// anything — a file, a junction, a symbolic link) and returns it with its
/// identity.
pub fn create_log(base: &LogBase, name: &str) -> io::Result<(File, FileId)> {
    let f = OpenOptions::new()
        .write(true)
        .read(true)
        .create_new(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(child(base, name)?)?;
    let id = id_of(&info(f.as_raw_handle() as HANDLE)?);
    Ok((f, id))
}

/// Opens the log `name` for reading without following a reparse point, and
/// only if it is still the file `id` names.
pub fn open_log(base: &LogBase, name: &str, id: FileId) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(child(base, name)?)?;
    let i = info(f.as_raw_handle() as HANDLE)?;
    if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 || id_of(&i) != id {
        return Err(io::Error::other(format!(
            "{name} is not the log the runner created"
        )));
    }
    Ok(f)
}

/// The log base's default place: `neurolink-commands` under `%TEMP%`.
pub fn default_path() -> PathBuf {
    std::env::temp_dir().join("neurolink-commands")
}
