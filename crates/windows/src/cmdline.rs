//! From an argv to a Windows command line, with no shell in between
//! (SPEC §14 "No shell").
//!
//! A Windows program receives one string and splits it itself; the C
//! runtime, `CommandLineToArgvW`, Rust and Node all split by the same rules:
//! whitespace separates arguments unless inside double quotes; `2n`
//! backslashes followed by a quote are `n` backslashes and a quote that opens
//! or closes; `2n+1` backslashes followed by a quote are `n` backslashes and a
//! literal quote; backslashes anywhere else are literal. [`push_arg`] writes
//! the form those rules read back exactly.
//!
//! A `.cmd`/`.bat` program is run by `cmd.exe`, which reads its command line
//! as a shell would. [`batch_args`] builds that line so `cmd.exe` cannot read
//! any argument as syntax, or refuses the argument: see its rule.

use std::fmt;
use std::path::Path;

/// An argument that cannot be passed: which one, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Its index in argv (0 is the program).
    pub index: usize,
    /// The argument as given.
    pub arg: String,
    /// Why it cannot be passed, as a clause ("contains a NUL character").
    pub reason: &'static str,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "argv[{}] {:?} {}", self.index, self.arg, self.reason)
    }
}

impl std::error::Error for Refusal {}

/// Appends `arg` so the C runtime's rules split it back to exactly `arg`.
/// Arguments without whitespace or quotes (and not empty) go as they are.
pub fn push_arg(out: &mut String, arg: &str) {
    let plain = !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\x0b', '"']);
    if plain {
        out.push_str(arg);
        return;
    }
    out.push('"');
    let mut backslashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                // Each backslash before a quote is doubled, and the quote escaped.
                push_n(out, '\\', backslashes * 2 + 1);
                out.push('"');
                backslashes = 0;
            }
            _ => {
                push_n(out, '\\', backslashes);
                out.push(c);
                backslashes = 0;
            }
        }
    }
    // Trailing backslashes precede the closing quote: doubled.
    push_n(out, '\\', backslashes * 2);
    out.push('"');
}

fn push_n(out: &mut String, c: char, n: usize) {
    out.extend(std::iter::repeat_n(c, n));
}

/// The command line of `args` (argv without the program), each written by
/// [`push_arg`]. NUL cannot be carried by a Windows command line: refused.
/// `first_index` is the argv index of `args[0]`, for the refusal.
pub fn args_line<S: AsRef<str>>(args: &[S], first_index: usize) -> Result<String, Refusal> {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        let a = a.as_ref();
        if a.contains('\0') {
            return Err(refuse(first_index + i, a, "contains a NUL character"));
        }
        if i > 0 {
            out.push(' ');
        }
        push_arg(&mut out, a);
    }
    Ok(out)
}

/// Whether `program` is one Windows runs through `cmd.exe`: its name ends in
/// `.cmd` or `.bat`, ignoring case and the trailing dots and spaces Windows
/// itself drops from a file name (`x.cmd.` opens `x.cmd`).
pub fn is_batch(program: &Path) -> bool {
    let Some(name) = program.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let name = name.trim_end_matches(['.', ' ']).to_ascii_lowercase();
    name.ends_with(".cmd") || name.ends_with(".bat")
}

/// Whether `cmd.exe` runs in `dir`: it refuses a UNC working directory
/// (`\\server\share\…`) and silently falls back to the Windows
/// directory, so a batch program must not be started there.
pub fn cmd_can_run_in(dir: &Path) -> bool {
    !dir.to_string_lossy().starts_with("\\\\")
}

/// The characters no argument of a batch program may hold: `"` would end
/// `cmd.exe`'s quoting (after which `&`, `|`, `<`, `>`, `^` are syntax
/// again), `%` starts a variable `cmd.exe` expands even inside quotes, and
/// a line break ends the command. NUL cannot be carried at all.
const BATCH_UNSAFE: [(char, &str); 5] = [
    (
        '"',
        "contains a double quote, which cmd.exe would read as the end of quoting",
    ),
    (
        '%',
        "contains %, which cmd.exe expands as a variable even inside quotes",
    ),
    (
        '\r',
        "contains a carriage return, which ends a cmd.exe command",
    ),
    ('\n', "contains a line feed, which ends a cmd.exe command"),
    ('\0', "contains a NUL character"),
];

/// The arguments of `cmd.exe` that run the batch file `script` with `args`
/// and nothing else:
///
/// `/d /e:ON /v:OFF /s /c ""<script>" "<arg1>" "<arg2>" …"` — no AutoRun
/// commands (`/d`), no delayed `!` expansion (`/v:OFF`), and `/s` strips
/// only the outer pair of quotes. Every argument is inside its own pair of
/// double quotes, written by [`push_arg`]'s rules (so a program the script
/// hands `%*` to splits them back exactly), and none may hold a character of
/// the refused set (`"`, `%`, CR, LF, NUL): inside quotes with no quote in
/// them `cmd.exe` reads `&`, `|`, `<`, `>`, `^`, `(`, `)`, `,`, `;`, `=` and
/// spaces as plain text. An argument it cannot pass is refused, named —
/// never run. `first_index` is the argv index of `args[0]`.
pub fn batch_args<S: AsRef<str>>(
    script: &str,
    args: &[S],
    first_index: usize,
) -> Result<String, Refusal> {
    check_batch(0, script)?;
    let mut out = String::from("/d /e:ON /v:OFF /s /c \"");
    push_quoted_always(&mut out, script);
    for (i, a) in args.iter().enumerate() {
        let a = a.as_ref();
        check_batch(first_index + i, a)?;
        out.push(' ');
        push_quoted_always(&mut out, a);
    }
    out.push('"');
    Ok(out)
}

fn check_batch(index: usize, arg: &str) -> Result<(), Refusal> {
    for (c, reason) in BATCH_UNSAFE {
        if arg.contains(c) {
            return Err(refuse(index, arg, reason));
        }
    }
    Ok(())
}

/// [`push_arg`], but always inside quotes (cmd.exe needs them around `&`).
/// The argument holds no `"` (checked before), so only trailing backslashes
/// need doubling.
fn push_quoted_always(out: &mut String, arg: &str) {
    out.push('"');
    out.push_str(arg);
    let trailing = arg.len() - arg.trim_end_matches('\\').len();
    push_n(out, '\\', trailing);
    out.push('"');
}

fn refuse(index: usize, arg: &str, reason: &'static str) -> Refusal {
    Refusal {
        index,
        arg: arg.to_string(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C runtime's splitting rules (the module docs), for checking
    /// [`push_arg`] on any host; the real parsers are checked under Windows
    /// by tests/windows.rs.
    fn split(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut in_arg = false;
        let mut quoted = false;
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' {
                let start = i;
                while i < chars.len() && chars[i] == '\\' {
                    i += 1;
                }
                let n = i - start;
                in_arg = true;
                if i < chars.len() && chars[i] == '"' {
                    push_n(&mut cur, '\\', n / 2);
                    if n % 2 == 1 {
                        cur.push('"');
                        i += 1;
                    }
                } else {
                    push_n(&mut cur, '\\', n);
                }
                continue;
            }
            if c == '"' {
                in_arg = true;
                // Inside quotes, "" is a literal quote (msvcrt 2008 and later).
                if quoted && chars.get(i + 1) == Some(&'"') {
                    cur.push('"');
                    i += 2;
                    continue;
                }
                quoted = !quoted;
            } else if (c == ' ' || c == '\t') && !quoted {
                if in_arg {
                    out.push(std::mem::take(&mut cur));
                    in_arg = false;
                }
            } else {
                in_arg = true;
                cur.push(c);
            }
            i += 1;
        }
        if in_arg {
            out.push(cur);
        }
        out
    }

    pub(crate) const HOSTILE: &[&str] = &[
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
    ];

    #[test]
    fn hostile_arguments_split_back_exactly() {
        let line = args_line(HOSTILE, 1).unwrap();
        assert_eq!(split(&line), HOSTILE);
        for a in HOSTILE {
            let mut one = String::new();
            push_arg(&mut one, a);
            assert_eq!(split(&one), vec![a.to_string()], "{a:?} written as {one:?}");
        }
    }

    #[test]
    fn plain_arguments_go_as_they_are() {
        assert_eq!(args_line(&["-n", "a\\b", "x&y"], 1).unwrap(), "-n a\\b x&y");
        assert_eq!(args_line(&["a b", ""], 1).unwrap(), "\"a b\" \"\"");
        assert_eq!(args_line(&["a\\ b\\"], 1).unwrap(), "\"a\\ b\\\\\"");
    }

    #[test]
    fn nul_is_refused_by_index() {
        let e = args_line(&["ok", "a\0b"], 1).unwrap_err();
        assert_eq!((e.index, e.arg.as_str()), (2, "a\0b"));
    }

    #[test]
    fn batch_detection_ignores_case_and_trailing_dots() {
        for p in [
            "x.cmd",
            "X.CMD",
            "a\\b\\npm.Cmd",
            "x.bat",
            "x.cmd.",
            "x.bat . .",
        ] {
            assert!(is_batch(Path::new(p)), "{p}");
        }
        for p in ["x.exe", "cmd", "x.cmdx", "x.com", "bat"] {
            assert!(!is_batch(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn cmd_runs_on_a_drive_but_not_in_a_unc_directory() {
        assert!(cmd_can_run_in(Path::new("C:\\work\\repo")));
        assert!(!cmd_can_run_in(Path::new("\\\\server\\share\\repo")));
    }

    #[test]
    fn batch_arguments_are_each_quoted() {
        let line = batch_args("C:\\a b\\x.cmd", &["a & echo x", "b|c", "^", "", "t\\"], 1).unwrap();
        assert_eq!(
            line,
            "/d /e:ON /v:OFF /s /c \"\"C:\\a b\\x.cmd\" \"a & echo x\" \"b|c\" \"^\" \"\" \"t\\\\\"\""
        );
    }

    #[test]
    fn batch_refuses_quotes_percent_and_line_breaks_naming_the_argument() {
        for (bad, word) in [
            ("%PATH%", "%"),
            ("a\"&b", "double quote"),
            ("a\rb", "carriage"),
            ("a\nb", "line feed"),
        ] {
            let e = batch_args("x.cmd", &["fine", bad], 1).unwrap_err();
            assert_eq!((e.index, e.arg.as_str()), (2, bad));
            assert!(e.to_string().contains(word), "{e}");
            assert!(e.to_string().starts_with("argv[2] "), "{e}");
        }
        assert_eq!(batch_args("a%b.cmd", &["x"], 1).unwrap_err().index, 0);
    }
}
