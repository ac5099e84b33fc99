//! The Windows primitives against the real Windows APIs: run under wine here
//! (`bash scripts/platforms/run.sh win32-x64`) and natively in the
//! workflow's Windows job. What wine cannot model is in `native_only.rs`,
//! which only the native job runs.
#![cfg(windows)]

use std::io::{BufRead, BufReader, Read};
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use neurolink_commands_windows::cmdline::{args_line, batch_args};
use neurolink_commands_windows::dir::HeldDir;
use neurolink_commands_windows::job::Job;
use windows_sys::Win32::Foundation::{CloseHandle, WAIT_OBJECT_0};
use windows_sys::Win32::System::Threading::{
    OpenProcess, TerminateProcess, WaitForSingleObject, PROCESS_QUERY_LIMITED_INFORMATION,
    PROCESS_SYNCHRONIZE, PROCESS_TERMINATE,
};

const PROBE: &str = env!("CARGO_BIN_EXE_nlc-win-probe");

const HOSTILE: &[&str] = &[
    "",
    " ",
    "a b",
    "\"",
    "a\"b",
    "\\",
    "a\\",
    "a\\\\",
    "a\\\"b",
    "\\\"",
    "x\\\\\"",
    "\\\\server\\share\\",
    "C:\\Program Files\\",
    "&|<>^%PATH%!x!",
    "tab\there",
    "new\nline",
    "é中文😀",
    "trailing space ",
    "--x=\"y z\"",
    "\"\"",
    "a & calc",
];

/// The probe's output: one `[hex hex …]` line of UTF-16 units per argument.
fn decode(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| {
            let units: Vec<u16> = l
                .trim_matches(['[', ']'])
                .split(' ')
                .filter(|h| !h.is_empty())
                .map(|h| u16::from_str_radix(h, 16).unwrap())
                .collect();
            String::from_utf16(&units).unwrap()
        })
        .collect()
}

fn output(cmd: &mut Command) -> String {
    // Both streams are pipes: node.exe under wine cannot write to the Unix
    // descriptors the test itself inherited.
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd:?}: {:?} {err}", out.status);
    String::from_utf8(out.stdout).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nlc-win-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether process `pid` has ended within `ms` (or no longer exists).
fn gone_within(pid: u32, ms: u32) -> bool {
    // SAFETY: opening a process by id; the handle is closed below.
    let h = unsafe {
        OpenProcess(
            PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION,
            0,
            pid,
        )
    };
    if h.is_null() {
        return true;
    }
    // SAFETY: `h` is an open process handle with SYNCHRONIZE access.
    let r = unsafe { WaitForSingleObject(h, ms) };
    // SAFETY: closed once.
    unsafe { CloseHandle(h) };
    r == WAIT_OBJECT_0
}

fn terminate_pid(pid: u32) {
    // SAFETY: opening a process by id; the handle is closed below.
    let h = unsafe { OpenProcess(PROCESS_TERMINATE, 0, pid) };
    if !h.is_null() {
        // SAFETY: an open handle with terminate access, closed once.
        unsafe {
            TerminateProcess(h, 1);
            CloseHandle(h);
        }
    }
}

fn first_line(r: impl Read) -> String {
    let mut line = String::new();
    BufReader::new(r).read_line(&mut line).unwrap();
    line.trim().to_string()
}

#[test]
fn hostile_arguments_round_trip_through_both_windows_parsers() {
    let line = args_line(HOSTILE, 1).unwrap();
    for mode in ["argv", "argvw"] {
        let got = decode(&output(Command::new(PROBE).arg(mode).raw_arg(&line)));
        assert_eq!(got, HOSTILE, "{mode}: {line}");
    }
}

/// 300 arguments drawn from the characters the splitting rules care about
/// (a fixed-seed generator: the same arguments every run), in one start.
#[test]
fn generated_arguments_round_trip_exactly() {
    const ALPHABET: &[char] = &[
        '\\', '"', ' ', '\t', 'a', '&', '%', '^', '|', '<', '!', 'é', '😀', '\n',
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let args: Vec<String> = (0..300)
        .map(|_| {
            (0..next(9))
                .map(|_| ALPHABET[next(ALPHABET.len())])
                .collect()
        })
        .collect();
    let line = args_line(&args, 1).unwrap();
    for mode in ["argv", "argvw"] {
        assert_eq!(
            decode(&output(Command::new(PROBE).arg(mode).raw_arg(&line))),
            args,
            "{mode}"
        );
    }
}

/// Node's `process.argv` (what npm, pnpm and every Node tool read) splits
/// the same line back exactly. The official `node.exe`: `NLC_WIN_NODE` (the
/// wine run sets it), else `node.exe` on `PATH` (the native job's).
#[test]
fn hostile_arguments_round_trip_through_node() {
    let dir = scratch("node");
    let script = dir.join("argv.js");
    std::fs::write(
        &script,
        "for (const a of process.argv.slice(2)) console.log('[' + [...Array(a.length).keys()].map((i) => a.charCodeAt(i).toString(16).padStart(4, '0')).join(' ') + ']')\n",
    )
    .unwrap();
    let node = std::env::var_os("NLC_WIN_NODE").unwrap_or_else(|| "node.exe".into());
    let line = args_line(HOSTILE, 2).unwrap();
    let got = decode(&output(Command::new(node).arg(&script).raw_arg(&line)));
    assert_eq!(got, HOSTILE, "{line}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A batch file that hands its arguments (`%*`) to the probe, as npm.cmd
/// hands them to node.
fn echo_script(dir: &Path) -> PathBuf {
    let script = dir.join("echo args.cmd");
    std::fs::write(&script, format!("@\"{PROBE}\" argv %*\r\n")).unwrap();
    script
}

fn cmd_exe() -> PathBuf {
    std::env::var_os("ComSpec")
        .map(PathBuf::from)
        .unwrap_or_else(|| "C:\\Windows\\System32\\cmd.exe".into())
}

#[test]
fn batch_arguments_arrive_exactly_and_inject_nothing() {
    let dir = scratch("batch");
    let script = echo_script(&dir);
    let args = [
        "a & echo INJECTED>marker",
        "b|echo INJECTED>marker",
        "^d^",
        "x<y>z",
        "(p)",
        "a,b;c=d",
        "",
        "t\\",
        "sp ace",
        "&&",
        "é中",
    ];
    let line = batch_args(script.to_str().unwrap(), &args, 1).unwrap();
    let got = decode(&output(
        Command::new(cmd_exe()).raw_arg(&line).current_dir(&dir),
    ));
    assert_eq!(got, args);
    assert!(
        !dir.join("marker").exists(),
        "cmd.exe ran an injected command"
    );

    // The control: the same script and argument on a naive command line,
    // which cmd.exe reads as two commands.
    let naive = format!(
        "/d /c \"\"{}\" a & echo INJECTED>marker\"",
        script.display()
    );
    let _ = Command::new(cmd_exe())
        .raw_arg(naive)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        dir.join("marker").exists(),
        "the naive line should have run the injected echo"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn batch_arguments_cmd_would_read_are_refused_by_name() {
    for bad in ["%PATH%", "50%", "\"quoted\" & calc", "a\r\nb"] {
        let e = batch_args("C:\\x.cmd", &["ok", bad], 1).unwrap_err();
        assert_eq!((e.index, e.arg.as_str()), (2, bad));
    }
}

#[test]
fn terminating_the_job_ends_the_whole_tree() {
    let job = Job::new().unwrap();
    let mut cmd = Command::new(PROBE);
    cmd.args(["tree", "60000"]).stdout(Stdio::piped());
    let mut child = job.spawn(&mut cmd).unwrap();
    let grandchild: u32 = first_line(child.stdout.take().unwrap()).parse().unwrap();
    assert_eq!(job.active_processes().unwrap(), 2);
    job.terminate(7).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(7));
    assert!(
        gone_within(grandchild, 5000),
        "grandchild {grandchild} outlived its job"
    );
    assert_eq!(job.active_processes().unwrap(), 0);
}

#[test]
fn dropping_the_job_ends_the_whole_tree() {
    let job = Job::new().unwrap();
    let mut cmd = Command::new(PROBE);
    cmd.args(["tree", "60000"]).stdout(Stdio::piped());
    let mut child = job.spawn(&mut cmd).unwrap();
    let grandchild: u32 = first_line(child.stdout.take().unwrap()).parse().unwrap();
    drop(job);
    child.wait().unwrap();
    assert!(
        gone_within(grandchild, 5000),
        "grandchild {grandchild} outlived its job"
    );
}

#[test]
fn sigkill_terminates_the_whole_job_at_once() {
    use neurolink_commands_windows::job::{Stop, Stopped};
    let job = Job::new().unwrap();
    let mut cmd = Command::new(PROBE);
    cmd.args(["tree", "60000"]).stdout(Stdio::piped());
    let mut child = job.spawn(&mut cmd).unwrap();
    let grandchild: u32 = first_line(child.stdout.take().unwrap()).parse().unwrap();
    assert_eq!(
        job.stop(child.id(), Stop::Kill, 1).unwrap(),
        Stopped::Terminated
    );
    assert_eq!(child.wait().unwrap().code(), Some(1));
    assert!(gone_within(grandchild, 5000));
}

/// The leader ignores CTRL_BREAK (or, under wine, no break arrives): the
/// job is terminated once the grace has passed, not before.
#[test]
fn sigterm_terminates_the_job_after_the_grace() {
    use neurolink_commands_windows::job::{Stop, Stopped};
    let job = Job::new().unwrap();
    let mut cmd = Command::new(PROBE);
    cmd.args(["nobreak", "60000"]).stdout(Stdio::piped());
    let mut child = job.spawn(&mut cmd).unwrap();
    let grandchild: u32 = first_line(child.stdout.take().unwrap()).parse().unwrap();
    let t = std::time::Instant::now();
    let grace = std::time::Duration::from_millis(300);
    assert_eq!(
        job.stop(child.id(), Stop::Term { grace }, 1).unwrap(),
        Stopped::Terminated
    );
    assert!(t.elapsed() >= grace, "terminated after {:?}", t.elapsed());
    assert_eq!(child.wait().unwrap().code(), Some(1));
    assert!(gone_within(grandchild, 5000));
}

#[test]
fn a_killed_host_leaves_no_process_of_its_jobs() {
    let mut host = Command::new(PROBE)
        .args(["host", "job", "60000"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let grandchild: u32 = first_line(host.stdout.take().unwrap()).parse().unwrap();
    host.kill().unwrap();
    host.wait().unwrap();
    assert!(
        gone_within(grandchild, 5000),
        "grandchild {grandchild} outlived its killed host"
    );

    // The control: started without a job, the same grandchild outlives the
    // killed host.
    let mut host = Command::new(PROBE)
        .args(["host", "nojob", "60000"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let grandchild: u32 = first_line(host.stdout.take().unwrap()).parse().unwrap();
    host.kill().unwrap();
    host.wait().unwrap();
    let survived = !gone_within(grandchild, 500);
    terminate_pid(grandchild);
    assert!(
        survived,
        "without a job the grandchild should outlive the host"
    );
}

#[test]
fn a_held_directory_cannot_be_renamed_or_removed() {
    let base = scratch("held");
    let d = base.join("cwd");
    std::fs::create_dir(&d).unwrap();
    let held = HeldDir::open(&d).unwrap();
    assert!(std::fs::rename(&d, base.join("moved")).is_err());
    assert!(std::fs::remove_dir(&d).is_err());
    drop(held);
    // The control: released, the same rename succeeds.
    std::fs::rename(&d, base.join("moved")).unwrap();
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn the_command_starts_in_the_held_directory() {
    let base = scratch("start");
    let held = HeldDir::open(&base).unwrap();
    let job = Job::new().unwrap();
    let mut cmd = Command::new(PROBE);
    cmd.arg("cwd")
        .current_dir(held.path())
        .stdout(Stdio::piped());
    let child = job.spawn(&mut cmd).unwrap();
    let out = child.wait_with_output().unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        HeldDir::open(Path::new(printed.trim())).unwrap().id(),
        held.id()
    );
    drop(held);
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn the_sandbox_refuses_dotdot_and_another_volume() {
    let base = scratch("sandbox");
    let root_path = base.join("root");
    std::fs::create_dir_all(root_path.join("sub")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    let root = HeldDir::open(&root_path).unwrap();
    assert!(root.contains(&HeldDir::open(&root_path.join("sub")).unwrap()));
    assert!(root.contains(&HeldDir::open(&root_path.join("SUB")).unwrap()));
    assert!(!root.contains(&HeldDir::open(&root_path.join("sub\\..\\..\\outside")).unwrap()));
    assert!(!root.contains(&HeldDir::open(&root_path.join("..")).unwrap()));
    // Another drive (wine maps Z: to /, the native runners have D:).
    let root_drive = root
        .path()
        .to_str()
        .unwrap()
        .chars()
        .next()
        .unwrap()
        .to_ascii_uppercase();
    let other = ('C'..='Z')
        .filter(|d| *d != root_drive)
        .map(|d| PathBuf::from(format!("{d}:\\")))
        .find(|p| p.is_dir())
        .expect("a second volume to test against");
    assert!(!root.contains(&HeldDir::open(&other).unwrap()), "{other:?}");
    drop(root);
    std::fs::remove_dir_all(&base).unwrap();
}

mod start {
    use super::*;
    use neurolink_commands_windows::command::{start, Start, StartError};

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// Runs `argv` in `dir` with `env`, returning stdout.
    fn run(
        argv: &[&str],
        dir: &Path,
        env: Option<&[(String, String)]>,
    ) -> Result<String, StartError> {
        let held = HeldDir::open(dir).unwrap();
        let argv = strings(argv);
        let s = start(&Start {
            argv: &argv,
            dir: &held,
            env,
            stdin_pipe: false,
        })?;
        let out = s.child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{argv:?}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8(out.stdout).unwrap())
    }

    /// A directory holding `tool.cmd` (hands `%*` to the probe) and
    /// `mark.cmd` (leaves ran.txt behind), and the environment whose PATH is it.
    fn tools(name: &str) -> (PathBuf, Vec<(String, String)>) {
        let dir = scratch(name);
        std::fs::write(dir.join("tool.cmd"), format!("@\"{PROBE}\" argv %*\r\n")).unwrap();
        std::fs::write(dir.join("mark.cmd"), "@echo ran>ran.txt\r\n").unwrap();
        let env = vec![
            ("PATH".to_string(), dir.to_str().unwrap().to_string()),
            ("PATHEXT".to_string(), ".EXE;.CMD".to_string()),
        ];
        (dir, env)
    }

    #[test]
    fn a_bare_batch_name_is_found_through_path_and_its_arguments_arrive_exactly() {
        let (dir, env) = tools("start-batch");
        let args = ["a & echo INJECTED>marker", "x|y", "^", "(1)", "", "t\\"];
        let mut argv = vec!["tool"];
        argv.extend(args);
        assert_eq!(decode(&run(&argv, &dir, Some(&env)).unwrap()), args);
        assert!(!dir.join("marker").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_batch_argument_cmd_would_read_is_refused_by_name_and_nothing_runs() {
        let (dir, env) = tools("start-refused");
        for bad in ["%PATH%", "\"&echo x"] {
            match run(&["mark", "ok", bad], &dir, Some(&env)) {
                Err(StartError::Refused(r)) => assert_eq!((r.index, r.arg.as_str()), (2, bad)),
                other => panic!("{bad:?}: {other:?}"),
            }
            assert!(!dir.join("ran.txt").exists(), "{bad:?} ran");
        }
        // The control: a safe argument runs the same program.
        run(&["mark", "ok"], &dir, Some(&env)).unwrap();
        assert!(dir.join("ran.txt").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn check_refuses_what_start_refuses_and_starts_nothing() {
        use neurolink_commands_windows::command::check;
        let (dir, env) = tools("check");
        let held = HeldDir::open(&dir).unwrap();
        let argv = strings(&["mark", "ok", "%PATH%"]);
        let s = Start {
            argv: &argv,
            dir: &held,
            env: Some(&env),
            stdin_pipe: false,
        };
        match check(&s) {
            Err(StartError::Refused(r)) => assert_eq!((r.index, r.arg.as_str()), (2, "%PATH%")),
            other => panic!("{other:?}"),
        }
        assert!(!dir.join("ran.txt").exists());
        // The control: safe arguments pass, naming the program that would
        // run (cmd.exe for a batch file), and still nothing ran.
        let argv = strings(&["mark", "ok"]);
        let program = check(&Start { argv: &argv, ..s }).unwrap();
        assert!(
            program
                .to_string_lossy()
                .to_lowercase()
                .ends_with("\\cmd.exe"),
            "{program:?}"
        );
        assert!(!dir.join("ran.txt").exists());
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Everything the overlapped handle `h` gives until its writer is gone.
    fn read_overlapped(h: &std::os::windows::io::OwnedHandle) -> Vec<u8> {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Foundation::{GetLastError, ERROR_BROKEN_PIPE, ERROR_IO_PENDING};
        use windows_sys::Win32::Storage::FileSystem::ReadFile;
        use windows_sys::Win32::System::IO::{GetOverlappedResult, OVERLAPPED};
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: a plain-data struct for which all zeroes is valid.
            let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
            let mut n = 0u32;
            // SAFETY: the handle is open; `buf` and `ov` outlive the read,
            // which is waited for below before either is touched.
            let ok = unsafe {
                ReadFile(
                    h.as_raw_handle(),
                    buf.as_mut_ptr(),
                    buf.len() as u32,
                    &mut n,
                    &mut ov,
                )
            };
            // SAFETY: no pointers.
            let err = unsafe { GetLastError() };
            if ok == 0 && err != ERROR_IO_PENDING {
                assert_eq!(err, ERROR_BROKEN_PIPE, "read failed");
                return out;
            }
            // SAFETY: as above; waits for the read to finish.
            if unsafe { GetOverlappedResult(h.as_raw_handle(), &ov, &mut n, 1) } == 0 {
                // SAFETY: no pointers.
                assert_eq!(unsafe { GetLastError() }, ERROR_BROKEN_PIPE, "read failed");
                return out;
            }
            out.extend_from_slice(&buf[..n as usize]);
        }
    }

    #[test]
    fn overlapped_pipes_carry_the_streams_to_the_runner() {
        use neurolink_commands_windows::command::start_overlapped;
        let dir = scratch("overlapped");
        let held = HeldDir::open(&dir).unwrap();
        let probe = windows_path(PROBE);
        let argv = strings(&[&probe, "argv", "a b", "é"]);
        let (s, pipes) = start_overlapped(&Start {
            argv: &argv,
            dir: &held,
            env: None,
            stdin_pipe: false,
        })
        .unwrap();
        assert!(s.child.stdout.is_none() && s.child.stderr.is_none());
        assert!(pipes.stdin.is_none());
        // End of file once the child exits: the runner holds no copy of the
        // child's ends.
        let out = read_overlapped(&pipes.stdout);
        assert_eq!(decode(&String::from_utf8(out).unwrap()), ["a b", "é"]);
        assert_eq!(read_overlapped(&pipes.stderr), b"");
        let mut child = s.child;
        assert!(child.wait().unwrap().success());
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_batch_file_named_through_its_data_stream_is_refused() {
        let (dir, env) = tools("start-ads");
        match run(&[".\\mark.cmd::$DATA", "x"], &dir, Some(&env)) {
            Err(StartError::Refused(r)) => assert_eq!(r.index, 0),
            other => panic!("{other:?}"),
        }
        assert!(!dir.join("ran.txt").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stdin_is_a_pipe_the_runner_writes_or_reads_nothing() {
        use std::io::Write;
        let dir = scratch("start-stdin");
        let held = HeldDir::open(&dir).unwrap();
        let probe = windows_path(PROBE);
        let argv = strings(&[&probe, "cat"]);
        let mut s = start(&Start {
            argv: &argv,
            dir: &held,
            env: None,
            stdin_pipe: true,
        })
        .unwrap();
        let mut input = s.child.stdin.take().unwrap();
        input.write_all("héllo\r\n".as_bytes()).unwrap();
        drop(input);
        let out = s.child.wait_with_output().unwrap();
        assert_eq!(out.stdout, "héllo\r\n".as_bytes());
        // The control: without a pipe, stdin is NUL and reads nothing.
        assert_eq!(run(&[&probe, "cat"], &dir, None).unwrap(), "");
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Cargo names the probe by its Unix path when it cross-builds for
    /// wine, whose drive Z: is the Unix root.
    fn windows_path(p: &str) -> String {
        match p.strip_prefix('/') {
            Some(rest) => format!("Z:\\{}", rest.replace('/', "\\")),
            None => p.to_string(),
        }
    }

    #[test]
    fn the_environment_is_replaced_exactly() {
        let dir = scratch("start-env");
        let env: Vec<(String, String)> = vec![
            ("NLC_A".into(), "1".into()),
            ("NLC_B".into(), "x y=é".into()),
            ("PATH".into(), "C:\\nowhere".into()),
        ];
        let probe = windows_path(PROBE);
        let out = run(&[&probe, "env"], &dir, Some(&env)).unwrap();
        // Wine adds its own WINE* names and SystemDrive/SystemRoot to a
        // replaced environment (PLATFORMS.md); Windows adds nothing.
        let got: Vec<&str> = out
            .lines()
            .filter(|l| {
                !l.starts_with("WINE")
                    && !l.starts_with("SystemDrive=")
                    && !l.starts_with("SystemRoot=")
            })
            .collect();
        assert_eq!(got, ["NLC_A=1", "NLC_B=x y=é", "PATH=C:\\nowhere"]);
        // The control: inherited, the host's variables are there.
        let inherited = run(&[&probe, "env"], &dir, None).unwrap();
        assert!(inherited.lines().count() > 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_program_found_nowhere_is_not_found_and_the_cwd_is_not_searched() {
        let (dir, _) = tools("start-missing");
        let env = vec![("PATH".to_string(), "C:\\nowhere".to_string())];
        // tool.cmd sits in the command's own directory, which is never searched.
        match run(&["tool"], &dir, Some(&env)) {
            Err(StartError::NotFound(p)) => assert_eq!(p, "tool"),
            other => panic!("{other:?}"),
        }
        // The control: named as a path relative to that directory, it runs.
        assert_eq!(
            decode(&run(&[".\\tool", "x"], &dir, Some(&env)).unwrap()),
            ["x"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

mod logs {
    use super::*;
    use neurolink_commands_windows::logdir::{create_log, create_trusted, open_log, open_trusted};
    use std::io::Write;
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::Security::Authorization::{
        ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
    };
    use windows_sys::Win32::Security::{SetFileSecurityW, DACL_SECURITY_INFORMATION};

    /// Replaces the DACL of `path` with the one `sddl` spells.
    fn set_dacl(path: &Path, sddl: &str) {
        let s: Vec<u16> = sddl.encode_utf16().chain(Some(0)).collect();
        let p: Vec<u16> = path.as_os_str().encode_wide().chain(Some(0)).collect();
        let mut sd = std::ptr::null_mut();
        // SAFETY: NUL-terminated strings; `sd` is leaked (a test).
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                s.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                std::ptr::null_mut(),
            ) != 0
                && SetFileSecurityW(p.as_ptr(), DACL_SECURITY_INFORMATION, sd) != 0
        };
        assert!(ok, "{sddl}: {}", std::io::Error::last_os_error());
    }

    #[test]
    fn a_base_anyone_else_may_access_is_refused_and_the_created_one_is_trusted() {
        let dir = scratch("logbase");
        let path = dir.join("base");
        let base = create_trusted(&path)
            .unwrap()
            .expect("a base it created itself is trusted");
        drop(base);
        // Everyone (S-1-1-0) granted access: refused, naming whom.
        set_dacl(&path, "D:P(A;OICI;FA;;;WD)(A;OICI;FA;;;SY)");
        let why = open_trusted(&path)
            .unwrap()
            .err()
            .expect("a base everyone may access is refused");
        assert!(why.contains("grants access to S-1-1-0"), "{why}");
        // The control: at the same path, created again with access for its
        // owner and SYSTEM only, the base is trusted.
        std::fs::remove_dir(&path).unwrap();
        assert!(create_trusted(&path).unwrap().is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn logs_are_created_exclusively_and_known_by_their_identity() {
        let dir = scratch("logfiles");
        let base = create_trusted(&dir.join("base")).unwrap().unwrap();
        let (mut f, id) = create_log(&base, "out.log").unwrap();
        f.write_all(b"bytes").unwrap();
        drop(f);
        assert_eq!(
            create_log(&base, "out.log").unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        let mut text = String::new();
        open_log(&base, "out.log", id)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "bytes");
        // Another file moved into the log's place is refused by identity.
        let (g, _) = create_log(&base, "other.log").unwrap();
        drop(g);
        std::fs::remove_file(base.path.join("out.log")).unwrap();
        std::fs::rename(base.path.join("other.log"), base.path.join("out.log")).unwrap();
        let e = open_log(&base, "out.log", id).unwrap_err();
        assert!(
            e.to_string().contains("not the log the runner created"),
            "{e}"
        );
        for bad in ["..", "a\\b", "x:stream", ""] {
            assert_eq!(
                create_log(&base, bad).unwrap_err().kind(),
                std::io::ErrorKind::InvalidInput,
                "{bad:?}"
            );
        }
        drop(base);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_process_is_known_by_its_creation_time_only_while_it_runs() {
    use neurolink_commands_windows::proc::start_time;
    let me = start_time(std::process::id()).expect("this process is running");
    assert_eq!(start_time(std::process::id()), Some(me));
    let mut child = Command::new(PROBE)
        .args(["sleep", "60000"])
        .spawn()
        .unwrap();
    let born = start_time(child.id()).expect("the child is running");
    assert!(born >= me, "the child was created after this process");
    child.kill().unwrap();
    child.wait().unwrap();
    // Exited, though `child` still holds its handle (so the pid is not reused yet).
    assert_eq!(start_time(child.id()), None);
    drop(child);
}
