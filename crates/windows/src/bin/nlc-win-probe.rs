//! A test program for tests/windows.rs (Windows only):
//!   argv ARGS...         prints each argument as UTF-16 hex, one per line,
//!                        as Rust's parser splits the command line
//!   argvw ARGS...        the same, as CommandLineToArgvW splits it
//!   sleep MS             sleeps
//!   nobreak MS           ignores CTRL_BREAK, then does what `tree MS` does
//!   tree MS              starts `sleep MS` (a child in its own job, if any),
//!                        prints the child's pid, then waits for it
//!   host job|nojob MS    the "host": starts `tree MS` inside a kill-on-close
//!                        job (job) or plainly (nojob), prints the grandchild's
//!                        pid, then sleeps
//!   cwd                  prints its working directory
//!   env                  prints its environment, NAME=value per line, sorted
//!   cat                  copies its stdin to its stdout
//!   console              on the console it is attached to, opened by name
//!                        (CONOUT$, CONIN$): prints "size COLSxROWS" (or
//!                        "size ?" when the console cannot say), "cwd <dir>",
//!                        "mark <%NLC_MARK%>", reads a line, prints
//!                        "read <line>", exits 7

#[cfg(windows)]
fn main() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::windows::ffi::OsStrExt;
    use std::process::{Command, Stdio};
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let mode = args.first().and_then(|a| a.to_str()).unwrap_or("");
    let ms = |i: usize| -> u64 {
        args.get(i)
            .and_then(|a| a.to_str())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    };
    let me = std::env::current_exe().unwrap();
    let mut out = std::io::stdout().lock();
    match mode {
        "argv" => {
            for a in &args[1..] {
                let hex: Vec<String> = a.encode_wide().map(|u| format!("{u:04x}")).collect();
                writeln!(out, "[{}]", hex.join(" ")).unwrap();
            }
        }
        "argvw" => {
            use windows_sys::Win32::System::Environment::GetCommandLineW;
            use windows_sys::Win32::UI::Shell::CommandLineToArgvW;
            let mut n = 0i32;
            // SAFETY: GetCommandLineW's string lives as long as the process;
            // CommandLineToArgvW returns `n` NUL-terminated strings in one
            // block, which is leaked (the process ends right after).
            let list = unsafe { CommandLineToArgvW(GetCommandLineW(), &mut n) };
            assert!(!list.is_null());
            for i in 2..n as usize {
                // SAFETY: `i < n`: each entry is a valid NUL-terminated string.
                let s = unsafe { *list.add(i) };
                let mut len = 0;
                // SAFETY: reading up to the terminating NUL of that string.
                while unsafe { *s.add(len) } != 0 {
                    len += 1;
                }
                // SAFETY: `len` units were just read as initialised.
                let units = unsafe { std::slice::from_raw_parts(s, len) };
                let hex: Vec<String> = units.iter().map(|u| format!("{u:04x}")).collect();
                writeln!(out, "[{}]", hex.join(" ")).unwrap();
            }
        }
        "sleep" => std::thread::sleep(std::time::Duration::from_millis(ms(1))),
        "nobreak" | "tree" => {
            if mode == "nobreak" {
                use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
                unsafe extern "system" fn ignore(_: u32) -> i32 {
                    1
                }
                // SAFETY: a handler that only returns; installed for the process's life.
                unsafe { SetConsoleCtrlHandler(Some(ignore), 1) };
            }
            let mut child = Command::new(&me)
                .arg("sleep")
                .arg(ms(1).to_string())
                .spawn()
                .unwrap();
            writeln!(out, "{}", child.id()).unwrap();
            out.flush().unwrap();
            child.wait().unwrap();
        }
        "host" => {
            let mut cmd = Command::new(&me);
            cmd.arg("tree")
                .arg(ms(2).to_string())
                .stdout(Stdio::piped());
            let job = neurolink_commands_windows::job::Job::new().unwrap();
            let mut child = if args[1] == "job" {
                job.spawn(&mut cmd).unwrap()
            } else {
                cmd.spawn().unwrap()
            };
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            write!(out, "{line}").unwrap();
            out.flush().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(ms(2)));
            drop(job);
        }
        "env" => {
            let mut vars: Vec<String> = std::env::vars_os()
                .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
                .collect();
            vars.sort();
            for v in vars {
                writeln!(out, "{v}").unwrap();
            }
        }
        "cat" => {
            std::io::copy(&mut std::io::stdin().lock(), &mut out).unwrap();
        }
        "console" => {
            let con = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("CONOUT$")
                .unwrap();
            let size = console_size(&con).map_or("?".to_string(), |(c, r)| format!("{c}x{r}"));
            console_print(&con, &format!("size {size}\r\n"));
            let cwd = std::env::current_dir().unwrap();
            console_print(&con, &format!("cwd {}\r\n", cwd.display()));
            let mark = std::env::var("NLC_MARK").unwrap_or_default();
            console_print(&con, &format!("mark {mark}\r\n"));
            let input = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("CONIN$")
                .unwrap();
            let line = console_line(&input);
            console_print(&con, &format!("read {line}\r\n"));
            std::process::exit(7);
        }
        "cwd" => writeln!(out, "{}", std::env::current_dir().unwrap().display()).unwrap(),
        _ => std::process::exit(2),
    }
}

/// Prints `s` on the console `con` as UTF-16 (WriteConsoleW): the text
/// itself, whatever the console's code page.
#[cfg(windows)]
fn console_print(con: &std::fs::File, s: &str) {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::System::Console::WriteConsoleW;
    let units: Vec<u16> = s.encode_utf16().collect();
    let mut done = 0u32;
    // SAFETY: an open console output handle; `units` outlives the call.
    let ok = unsafe {
        WriteConsoleW(
            con.as_raw_handle(),
            units.as_ptr().cast(),
            units.len() as u32,
            &mut done,
            std::ptr::null(),
        )
    };
    assert!(
        ok != 0,
        "WriteConsoleW: {}",
        std::io::Error::last_os_error()
    );
}

/// One line typed on the console `input` (ReadConsoleW, line input), without
/// its line end.
#[cfg(windows)]
fn console_line(input: &std::fs::File) -> String {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::System::Console::ReadConsoleW;
    let mut units = [0u16; 512];
    let mut got = 0u32;
    // SAFETY: an open console input handle; `units` is writable for its
    // length and outlives the call.
    let ok = unsafe {
        ReadConsoleW(
            input.as_raw_handle(),
            units.as_mut_ptr().cast(),
            units.len() as u32,
            &mut got,
            std::ptr::null(),
        )
    };
    assert!(ok != 0, "ReadConsoleW: {}", std::io::Error::last_os_error());
    String::from_utf16_lossy(&units[..got as usize])
        .trim_end_matches(['\r', '\n'])
        .to_string()
}

/// The visible window of the console `con` shows, as columns and rows.
#[cfg(windows)]
fn console_size(con: &std::fs::File) -> Option<(i16, i16)> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::System::Console::{
        GetConsoleScreenBufferInfo, CONSOLE_SCREEN_BUFFER_INFO,
    };
    // SAFETY: a plain-data struct for which all zeroes is a valid value.
    let mut info: CONSOLE_SCREEN_BUFFER_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: an open console output handle; `info` outlives the call.
    let ok = unsafe { GetConsoleScreenBufferInfo(con.as_raw_handle(), &mut info) } != 0;
    let w = info.srWindow;
    ok.then(|| (w.Right - w.Left + 1, w.Bottom - w.Top + 1))
}

#[cfg(not(windows))]
fn main() {
    eprintln!("nlc-win-probe runs on Windows only");
    std::process::exit(2);
}
