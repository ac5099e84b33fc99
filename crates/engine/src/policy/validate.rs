//! The policy a host declares, the options of one start, and the checks that
//! run before any process exists (the README's "Starting: the checks, in
//! order", steps 2–4 and 7).

use super::numbers::{bytes_or, positive, positive_or};
use crate::errors::{EngineError, EngineResult};

/// Default command budget.
pub const DEFAULT_TIMEOUT_MS: f64 = 120_000.0;
/// Default per-stream byte cap.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 10_485_760;
/// Default SIGTERM → SIGKILL grace.
pub const DEFAULT_KILL_GRACE_MS: f64 = 5_000.0;
/// Default quiet time before a command blocked on its input is reported.
pub const DEFAULT_INPUT_WAIT_MS: f64 = 2_000.0;

/// What a host allows: validated when it is set.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// argv[0] must equal one of these exactly.
    pub allowed_executables: Vec<String>,
    /// The sandbox root, as given.
    pub cwd_root: String,
    /// Budget of a command that names none, in ms.
    pub default_timeout_ms: f64,
    /// Per-stream cap, in bytes.
    pub max_output_bytes: u64,
    /// SIGTERM → SIGKILL grace, in ms.
    pub kill_grace_ms: f64,
    /// Kernel confinement of every command (`None`: unconfined).
    pub confine: Option<super::confine::Confinement>,
    /// Default `idleTimeoutMs` of the commands it starts (none: no idle stop).
    pub idle_timeout_ms: Option<f64>,
    /// Default `inputWaitMs` of the commands it starts.
    pub input_wait_ms: f64,
    /// Resource limits of every command's tree (SPEC §15); a start may narrow them.
    pub limits: Option<crate::process::limits::Limits>,
}

/// The numeric fields of a policy as the caller gave them (absent = default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyInput {
    /// argv[0] must equal one of these exactly.
    pub allowed_executables: Vec<String>,
    /// The sandbox root.
    pub cwd_root: String,
    /// `defaultTimeoutMs`.
    pub default_timeout_ms: Option<f64>,
    /// `maxOutputBytes`.
    pub max_output_bytes: Option<f64>,
    /// `killGraceMs`.
    pub kill_grace_ms: Option<f64>,
    /// `confine` (`None`: absent or `false`).
    pub confine: Option<super::confine::ConfinementInput>,
    /// `idleTimeoutMs`.
    pub idle_timeout_ms: Option<f64>,
    /// `inputWaitMs`.
    pub input_wait_ms: Option<f64>,
    /// `limits`.
    pub limits: Option<crate::process::limits::LimitsInput>,
}

impl Policy {
    /// Validate a policy: numbers must be positive finite, strings free of NUL.
    pub fn new(input: PolicyInput) -> EngineResult<Policy> {
        for exe in &input.allowed_executables {
            if exe.contains('\0') {
                return Err(EngineError::BadInput(
                    "allowedExecutables entries must not contain NUL characters".into(),
                ));
            }
        }
        if input.cwd_root.is_empty() || input.cwd_root.contains('\0') {
            return Err(EngineError::BadInput(
                "cwdRoot must be a non-empty path of an existing directory (without NUL characters)".into(),
            ));
        }
        let confine = match &input.confine {
            None => None,
            Some(c) => {
                let root = super::cwd::real_root(&input.cwd_root)?;
                Some(super::confine::resolve(c, &root, "policy.confine")?)
            }
        };
        Ok(Policy {
            confine,
            allowed_executables: input.allowed_executables,
            cwd_root: input.cwd_root,
            default_timeout_ms: positive_or(
                "defaultTimeoutMs",
                input.default_timeout_ms,
                DEFAULT_TIMEOUT_MS,
            )?,
            max_output_bytes: bytes_or(
                "maxOutputBytes",
                input.max_output_bytes,
                DEFAULT_MAX_OUTPUT_BYTES,
            )?,
            kill_grace_ms: positive_or("killGraceMs", input.kill_grace_ms, DEFAULT_KILL_GRACE_MS)?,
            idle_timeout_ms: input
                .idle_timeout_ms
                .map(|v| positive("idleTimeoutMs", v))
                .transpose()?,
            input_wait_ms: positive_or("inputWaitMs", input.input_wait_ms, DEFAULT_INPUT_WAIT_MS)?,
            limits: input
                .limits
                .map(|l| super::limits::validate(&l, "policy.limits"))
                .transpose()?
                .filter(|l| !l.is_empty()),
        })
    }
}

/// Milliseconds as a Duration, saturating (a budget of 1e300 ms is "never").
pub fn duration_ms(ms: f64) -> std::time::Duration {
    const CAP: std::time::Duration = std::time::Duration::from_secs(60 * 60 * 24 * 365 * 100);
    if ms.is_nan() || ms <= 0.0 {
        return std::time::Duration::ZERO;
    }
    std::time::Duration::try_from_secs_f64(ms / 1000.0).map_or(CAP, |d| d.min(CAP))
}

/// Step 2: a non-empty argv with no NUL in any entry.
pub fn check_argv(argv: &[String]) -> EngineResult<()> {
    if argv.is_empty() {
        return Err(EngineError::BadInput(
            "argv must be a non-empty array of strings: [executable, ...args], e.g. [\"/usr/bin/git\", \"status\"]".into(),
        ));
    }
    if let Some(i) = argv.iter().position(|a| a.contains('\0')) {
        return Err(EngineError::BadInput(format!(
            "argv[{i}] contains a NUL character, which no process argument can carry: remove it"
        )));
    }
    Ok(())
}

/// Characters that betray a shell line in argv[0].
const SHELL_CHARS: &[char] = &[';', '&', '|', '<', '>', '$', '`', '\n', '\r'];

/// Step 3: argv[0] must not look like a shell line.
pub fn check_not_shell(exe: &str) -> EngineResult<()> {
    // Windows (SPEC §14): an absolute path to an existing file may hold
    // spaces (`C:\Program Files\nodejs\node.exe`); no shell line is one.
    let spaced_path = cfg!(windows) && {
        let p = std::path::Path::new(exe);
        p.is_absolute() && p.is_file()
    };
    if exe
        .chars()
        .any(|c| (c.is_whitespace() && !(spaced_path && c == ' ')) || SHELL_CHARS.contains(&c))
    {
        Err(EngineError::ShellString(exe.to_string()))
    } else {
        Ok(())
    }
}

/// Step 4: argv[0] must be allowlisted by exact string equality.
pub fn check_allowed(policy: &Policy, exe: &str) -> EngineResult<()> {
    if policy.allowed_executables.iter().any(|a| a == exe) {
        Ok(())
    } else {
        Err(EngineError::NotAllowed {
            executable: exe.to_string(),
            allowed: policy.allowed_executables.clone(),
        })
    }
}

/// Environment entries: names non-empty without `=` or NUL, values without NUL.
pub fn check_env(env: &[(String, String)]) -> EngineResult<()> {
    for (k, v) in env {
        if k.is_empty() || k.contains('=') || k.contains('\0') {
            return Err(EngineError::BadInput(format!(
                "env key {k:?} is not a valid variable name: use a non-empty name without \"=\" or NUL"
            )));
        }
        if v.contains('\0') {
            return Err(EngineError::BadInput(format!(
                "env[{k:?}] contains a NUL character: environment values cannot carry one"
            )));
        }
    }
    Ok(())
}

/// The label: the given one trimmed, else the executable's base name and
/// the arguments after it, joined by spaces, cut to 60 characters plus `…`
/// (`/usr/bin/npm run lint` is `npm run lint`: the script's name shows).
pub fn label_for(label: Option<&str>, argv: &[String]) -> String {
    if let Some(l) = label.map(str::trim).filter(|l| !l.is_empty()) {
        return l.to_string();
    }
    const MAX: usize = 60;
    let exe = argv.first().map(|a| {
        std::path::Path::new(a)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(a)
    });
    // Built up to the cut only: an argv may hold a million entries.
    let mut out = String::new();
    let mut count = 0;
    for (i, part) in exe
        .into_iter()
        .chain(argv.iter().skip(1).map(String::as_str))
        .enumerate()
    {
        let sep = if i == 0 { None } else { Some(' ') };
        for c in sep.into_iter().chain(part.chars()) {
            if count == MAX {
                out.push('…');
                return out;
            }
            out.push(c);
            count += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allowed: &[&str]) -> Policy {
        Policy::new(PolicyInput {
            allowed_executables: allowed.iter().map(|s| s.to_string()).collect(),
            cwd_root: "/tmp".into(),
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn defaults_apply() {
        let p = policy(&[]);
        assert_eq!(p.default_timeout_ms, 120_000.0);
        assert_eq!(p.max_output_bytes, 10_485_760);
        assert_eq!(p.kill_grace_ms, 5_000.0);
    }

    #[test]
    fn numbers_must_be_positive_finite() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = positive("timeoutMs", bad).unwrap_err().to_string();
            assert!(
                e.contains("timeoutMs must be a positive finite number"),
                "{e}"
            );
        }
        assert_eq!(
            positive("timeoutMs", 2f64.powi(31) + 5.0).unwrap(),
            2147483653.0
        );
        assert!(positive("x", f64::NAN)
            .unwrap_err()
            .to_string()
            .contains("(got NaN)"));
        assert_eq!(bytes_or("maxOutputBytes", Some(1.5), 1).unwrap(), 2);
    }

    #[test]
    fn shell_lines_are_refused() {
        for exe in [
            "pnpm run lint",
            "a;b",
            "a&&b",
            "a|b",
            "a>b",
            "a<b",
            "$x",
            "`x`",
            "a\nb",
            "a\rb",
            "a\tb",
        ] {
            let e = check_not_shell(exe).unwrap_err().to_string();
            assert!(e.contains("NO shell"), "{e}");
        }
        check_not_shell("/usr/bin/git").unwrap();
    }

    #[test]
    fn allowlist_is_exact() {
        let p = policy(&["/usr/bin/git"]);
        check_allowed(&p, "/usr/bin/git").unwrap();
        let e = check_allowed(&p, "git").unwrap_err().to_string();
        assert!(e.contains("Executable \"git\" is not allowed"), "{e}");
        assert!(e.contains("\"/usr/bin/git\""), "{e}");
        let e = check_allowed(&policy(&[]), "/bin/true")
            .unwrap_err()
            .to_string();
        assert!(e.contains("allows no executable"), "{e}");
    }

    #[test]
    fn argv_shape() {
        assert!(check_argv(&[])
            .unwrap_err()
            .to_string()
            .contains("non-empty"));
        assert!(check_argv(&["a".into(), "b\0".into()])
            .unwrap_err()
            .to_string()
            .contains("argv[1]"));
    }

    #[test]
    fn labels() {
        let argv: Vec<String> = vec!["/bin/echo".into(), "hello".into(), "world".into()];
        assert_eq!(label_for(None, &argv), "echo hello world");
        assert_eq!(label_for(Some("  build  "), &argv), "build");
        assert_eq!(label_for(Some("   "), &argv), "echo hello world");
        let npm: Vec<String> = ["/usr/bin/npm", "run", "lint"].map(String::from).to_vec();
        assert_eq!(label_for(None, &npm), "npm run lint");
        assert_eq!(label_for(None, &["git".to_string()]), "git");
        // exactly 60 characters are not cut; 61 are
        let sixty = vec!["/bin/x".to_string(), "y".repeat(58)];
        assert_eq!(label_for(None, &sixty), format!("x {}", "y".repeat(58)));
        let over = vec!["/bin/x".to_string(), "y".repeat(59)];
        assert_eq!(label_for(None, &over), format!("x {}…", "y".repeat(58)));
        let long = vec!["x".repeat(70)];
        let l = label_for(None, &long);
        assert_eq!(l, format!("{}…", "x".repeat(60)));
    }

    #[test]
    fn env_names() {
        check_env(&[("A".into(), "1".into())]).unwrap();
        assert!(check_env(&[("A=B".into(), "1".into())]).is_err());
        assert!(check_env(&[("".into(), "1".into())]).is_err());
        assert!(check_env(&[("A".into(), "1\0".into())]).is_err());
    }
}
