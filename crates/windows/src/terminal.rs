//! Starting one command attached to a pseudo console (SPEC §14 "Terminal
//! mode"): the same program, command line, environment, working directory
//! and Job Object as [`crate::command::start`], with the console given to
//! `CreateProcessW` through an attribute list (the standard library's
//! `Command` has no stable way to pass one).
//!
//! Its standard handles are set to none on purpose: a console program whose
//! parent's own standard handles are pipes would otherwise be handed
//! duplicates of those and print into the host's output instead of the
//! console. With none given, it uses the console it is attached to.

use std::ffi::OsStr;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{FromRawHandle, OwnedHandle};
use std::path::PathBuf;
use std::ptr::{null, null_mut};

use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, InitializeProcThreadAttributeList,
    UpdateProcThreadAttribute, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT,
    EXTENDED_STARTUPINFO_PRESENT, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION,
    PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

use crate::command::{resolve, Start, StartError};
use crate::conpty::PseudoConsole;
use crate::job::Job;

/// A command started on a pseudo console.
#[derive(Debug)]
pub struct TerminalStarted {
    /// The command's Job Object.
    pub job: Job,
    /// Its main process.
    pub process: OwnedHandle,
    /// Its main process's id.
    pub pid: u32,
    /// The program that runs (`cmd.exe` for a batch program).
    pub program: PathBuf,
    /// The console it is attached to (closing it ends the output).
    pub console: PseudoConsole,
    /// Where the runner writes what is typed (overlapped).
    pub input: OwnedHandle,
    /// Where the runner reads what the console shows (overlapped).
    pub output: OwnedHandle,
}

fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(Some(0)).collect()
}

/// The environment block of a replaced environment: `NAME=value` strings,
/// sorted by name ignoring case (as Windows keeps its own), each ended by
/// a NUL, then one more NUL.
fn env_block(vars: &[(String, String)]) -> io::Result<Vec<u16>> {
    let mut sorted: Vec<&(String, String)> = vars.iter().collect();
    sorted.sort_by_key(|(k, _)| k.to_uppercase());
    let mut block = Vec::new();
    for (k, v) in sorted {
        if k.is_empty()
            || k.chars().skip(1).any(|c| c == '=')
            || k.contains('\0')
            || v.contains('\0')
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("environment variable {k:?} cannot be passed to a Windows program"),
            ));
        }
        block.extend(OsStr::new(k).encode_wide());
        block.push(u16::from(b'='));
        block.extend(OsStr::new(v).encode_wide());
        block.push(0);
    }
    if block.is_empty() {
        block.push(0);
    }
    block.push(0);
    Ok(block)
}

/// An initialised attribute list naming one pseudo console; deleted on drop.
struct Attributes {
    buf: Vec<u64>,
}

impl Attributes {
    fn with_console(console: &PseudoConsole) -> io::Result<Attributes> {
        let mut size = 0usize;
        // SAFETY: a null list asks for the size only (the call "fails" with
        // ERROR_INSUFFICIENT_BUFFER and writes `size`).
        unsafe { InitializeProcThreadAttributeList(null_mut(), 1, 0, &mut size) };
        if size == 0 {
            return Err(io::Error::last_os_error());
        }
        // u64 cells: the list is pointer-aligned.
        let mut a = Attributes {
            buf: vec![0u64; size.div_ceil(8)],
        };
        // SAFETY: the buffer is `size` bytes or more, aligned, and lives in
        // `a`, which deletes the list on drop only once it was initialised
        // (a failed initialisation returns before `a` escapes, below).
        if unsafe { InitializeProcThreadAttributeList(a.list(), 1, 0, &mut size) } == 0 {
            let e = io::Error::last_os_error();
            std::mem::forget(a);
            return Err(e);
        }
        // SAFETY: PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE takes the HPCON value
        // itself as the pointer-sized "value"; the console outlives the
        // process creation that reads it.
        let ok = unsafe {
            UpdateProcThreadAttribute(
                a.list(),
                0,
                PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE as usize,
                console.raw() as *const core::ffi::c_void,
                size_of::<isize>(),
                null_mut(),
                null(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(a)
    }

    fn list(&mut self) -> LPPROC_THREAD_ATTRIBUTE_LIST {
        self.buf.as_mut_ptr().cast()
    }
}

impl Drop for Attributes {
    fn drop(&mut self) {
        // SAFETY: the list was initialised (see `with_console`) and is
        // deleted once.
        unsafe { DeleteProcThreadAttributeList(self.list()) };
    }
}

/// Starts `s` attached to a new `cols` × `rows` pseudo console, inside a
/// Job Object of its own from its first instruction (created suspended,
/// assigned, resumed). `s.stdin_pipe` is ignored: the console is its input.
pub fn start_terminal(s: &Start<'_>, cols: u16, rows: u16) -> Result<TerminalStarted, StartError> {
    let resolved = resolve(s)?;
    let env = s.env.map(env_block).transpose().map_err(StartError::Io)?;
    let opened = PseudoConsole::open(cols, rows).map_err(StartError::Io)?;
    let mut attrs = Attributes::with_console(&opened.console).map_err(StartError::Io)?;
    let job = Job::new().map_err(StartError::Io)?;

    let application = wide(resolved.program.as_os_str());
    // The program's name, always quoted (a path has no `"`), then its
    // arguments as `resolve` quoted them.
    let mut line = format!("\"{}\"", resolved.program.display());
    if !resolved.args.is_empty() {
        line.push(' ');
        line.push_str(&resolved.args);
    }
    let mut line = wide(OsStr::new(&line));
    let dir = wide(s.dir.path().as_os_str());

    // SAFETY: a plain-data struct for which all zeroes is a valid value.
    let mut si: STARTUPINFOEXW = unsafe { zeroed() };
    si.StartupInfo.cb = size_of::<STARTUPINFOEXW>() as u32;
    // No standard handles: the console's own (see the module docs).
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.lpAttributeList = attrs.list();
    // SAFETY: likewise plain data, written by the call.
    let mut pi: PROCESS_INFORMATION = unsafe { zeroed() };
    // SAFETY: every string is NUL-terminated and outlives the call (`line`
    // is writable, as CreateProcessW wants); the environment block is
    // double-NUL-terminated UTF-16 (CREATE_UNICODE_ENVIRONMENT) or null to
    // inherit; `si` is a STARTUPINFOEXW (EXTENDED_STARTUPINFO_PRESENT) whose
    // attribute list lives in `attrs`; no handle is inherited.
    let ok = unsafe {
        CreateProcessW(
            application.as_ptr(),
            line.as_mut_ptr(),
            null(),
            null(),
            0,
            EXTENDED_STARTUPINFO_PRESENT | CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT,
            env.as_ref().map_or(null(), |b| b.as_ptr().cast()),
            dir.as_ptr(),
            &si.StartupInfo,
            &mut pi,
        )
    };
    if ok == 0 {
        return Err(StartError::Io(io::Error::last_os_error()));
    }
    // SAFETY: both handles were just returned open by CreateProcessW and
    // are owned by nothing else.
    let (process, thread) = unsafe {
        (
            OwnedHandle::from_raw_handle(pi.hProcess),
            OwnedHandle::from_raw_handle(pi.hThread),
        )
    };
    job.adopt(&process, thread).map_err(StartError::Io)?;
    drop(attrs);
    Ok(TerminalStarted {
        job,
        process,
        pid: pi.dwProcessId,
        program: resolved.program,
        console: opened.console,
        input: opened.input,
        output: opened.output,
    })
}
