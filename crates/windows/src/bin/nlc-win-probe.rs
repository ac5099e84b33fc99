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
        "cwd" => writeln!(out, "{}", std::env::current_dir().unwrap().display()).unwrap(),
        _ => std::process::exit(2),
    }
}

#[cfg(not(windows))]
fn main() {
    eprintln!("nlc-win-probe runs on Windows only");
    std::process::exit(2);
}
