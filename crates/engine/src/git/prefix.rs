//! The hardened command line and environment every git run gets.

use std::path::Path;

/// The three `-c` pairs every argv starts with (the README's "Git hardening"), in this order.
pub const FIXED_PREFIX: [(&str, &str); 3] = [
    ("color.ui", "false"),
    ("diff.external", ""),
    ("core.fsmonitor", "false"),
];

/// The extra `-c key=value` pairs appended after [`FIXED_PREFIX`] on every
/// git run. Each closes a way by which configuration could make `log`,
/// `show`, `diff`, `blame`, `merge-base` or `ls-files` start a program.
///
/// | `-c` override | What it closes |
/// |---|---|
/// | `core.pager=cat` | the configured pager (also closed by `--no-pager`, `GIT_PAGER=cat` and a non-tty stdout); `pager.<cmd>` is closed by `--no-pager`, which takes precedence over it |
/// | `core.hooksPath=/dev/null` | every hook in `$GIT_DIR/hooks` or a configured hooks directory (`/dev/null/<hook>` never exists); none of the six commands is known to run one, this is defence in depth |
/// | `log.showSignature=false` | signature verification of commits and merge tags by `log`/`show` (which would start `gpg.program`, `gpg.ssh.program` or `gpg.x509.program`) |
/// | `format.pretty=medium` | a configured default format (used by `show` and `log --stat/--name-only`) holding `%G?`, `%GS`, … which verify signatures; `medium` is git's built-in default |
/// | `gpg.program=` | the OpenPGP verifier (legacy key), should verification still be asked for: an empty program cannot start |
/// | `gpg.openpgp.program=` | the same, under its current key |
/// | `gpg.ssh.program=` | the SSH signature verifier (`ssh-keygen` by default) |
/// | `gpg.x509.program=` | the X.509 verifier (`gpgsm` by default) |
/// | `protocol.allow=never` | every transport, so the lazy fetch of a partial clone (promisor remote) cannot start `ssh`/`core.sshCommand`, `remote.<name>.uploadpack`, a remote helper or a credential helper or askpass; per-protocol `protocol.<name>.allow` settings are overridden by [`driver_overrides`](super::hardening::driver_overrides) |
/// | `diff.submodule=short` | `diff.submodule=diff`, which starts `git diff` inside each submodule without `--no-ext-diff`/`--no-textconv`, under the submodule's own configuration |
/// | `diff.ignoreSubmodules=dirty` | the `git status` that `diff` starts inside every checked-out submodule to check whether it is dirty (it would run the submodule's clean filters); commit changes of submodules are still shown. `submodule.<name>.ignore` (config or `.gitmodules`) outranks it, so [`driver_overrides`](super::hardening::driver_overrides) sets that per name |
/// | `submodule.recurse=false` | recursion into submodules for commands that support it |
/// | `mailmap.file=/dev/null` | a mailmap file named by configuration, whose names `log`, `show` and `blame` would print |
/// | `core.attributesFile=/dev/null` | an attributes file named by configuration |
/// | `core.excludesFile=/dev/null` | an excludes file named by configuration |
/// | `diff.orderFile=/dev/null` | an order file named by configuration (an empty value is an error; `/dev/null` is an empty order) |
/// | `gpg.ssh.allowedSignersFile=/dev/null` | the SSH allowed-signers file of signature verification |
/// | `gpg.ssh.revocationFile=/dev/null` | the SSH revocation file of signature verification |
///
/// Closed by the three [`FIXED_PREFIX`] pairs: `diff.external` (also by
/// `--no-ext-diff`) and `core.fsmonitor` (the fsmonitor hook, which even
/// `ls-files` would start). Closed by [`driver_overrides`](super::hardening::driver_overrides), one set per
/// configured name: `filter.<name>.clean=`, `.smudge=`, `.process=` (an
/// empty command means no filter) with `filter.<name>.required=false`;
/// `diff.<name>.textconv=` and `diff.<name>.command=` (empty: nothing can
/// start; `blame` of a path whose diff driver has a textconv then fails
/// with "cannot run"); `protocol.<name>.allow=never`;
/// `submodule.<name>.ignore=dirty`.
/// On Windows the file-naming pairs name `NUL` and `core.hooksPath` the
/// git executable itself (see `super::windows`).
pub const HARDENING: &[(&str, &str)] = &[
    ("core.pager", "cat"),
    ("core.hooksPath", NULL_FILE),
    ("log.showSignature", "false"),
    ("format.pretty", "medium"),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.x509.program", ""),
    ("protocol.allow", "never"),
    ("diff.submodule", "short"),
    ("diff.ignoreSubmodules", "dirty"),
    ("submodule.recurse", "false"),
    ("mailmap.file", NULL_FILE),
    ("core.attributesFile", NULL_FILE),
    ("core.excludesFile", NULL_FILE),
    ("diff.orderFile", NULL_FILE),
    ("gpg.ssh.allowedSignersFile", NULL_FILE),
    ("gpg.ssh.revocationFile", NULL_FILE),
];

/// What the file-naming overrides point at: an empty file on every system.
#[cfg(not(windows))]
const NULL_FILE: &str = "/dev/null";
#[cfg(windows)]
use super::windows::NULL_FILE;

/// The global option that pins the work tree to the repository root:
/// `core.worktree` in the repository's configuration (which `-c` cannot
/// override: git reads it from the repository's own file while setting up)
/// could otherwise point `diff` and `blame` at files outside it.
pub fn work_tree_arg(root: &Path) -> String {
    format!("--work-tree={}", root.to_string_lossy())
}

/// The full argv: git executable + the hardening prefix + args.
///
/// The prefix is `--no-pager`, the three [`FIXED_PREFIX`] pairs
/// (`-c color.ui=false -c diff.external= -c core.fsmonitor=false`, in that
/// order) and then every [`HARDENING`] pair as `-c key=value`.
pub fn full_argv(git_executable: &str, args: &[String]) -> Vec<String> {
    let mut argv = Vec::with_capacity(2 + 2 * (FIXED_PREFIX.len() + HARDENING.len()) + args.len());
    argv.push(git_executable.to_string());
    argv.push("--no-pager".to_string());
    for (key, value) in FIXED_PREFIX.iter().chain(HARDENING) {
        #[cfg(windows)]
        let value: &str = if *key == "core.hooksPath" {
            super::windows::hooks_path(git_executable)
        } else {
            value
        };
        argv.push("-c".to_string());
        argv.push(format!("{key}={value}"));
    }
    argv.extend(args.iter().cloned());
    argv
}

/// [`full_argv`] with the `-c` pairs of [`driver_overrides`](super::hardening::driver_overrides) placed between
/// the hardening prefix and the tool's args.
pub fn full_argv_with_overrides(
    git_executable: &str,
    overrides: &[String],
    args: &[String],
) -> Vec<String> {
    let mut argv = full_argv(git_executable, overrides);
    argv.extend(args.iter().cloned());
    argv
}

/// The argv a tool call runs in `root`: [`full_argv_with_overrides`] with
/// the work tree pinned to `root` ([`work_tree_arg`]) right before the
/// tool's args.
pub fn pinned_argv(
    git_executable: &str,
    root: &Path,
    overrides: &[String],
    args: &[String],
) -> Vec<String> {
    let mut with = overrides.to_vec();
    with.push(work_tree_arg(root));
    full_argv_with_overrides(git_executable, &with, args)
}

/// The replaced environment, given the parent's PATH and HOME: `LANG=C`,
/// `LC_ALL=C`, `GIT_TERMINAL_PROMPT=0`, `GIT_OPTIONAL_LOCKS=0`,
/// `GIT_PAGER=cat`, then `PATH` and `HOME` when given. Nothing else may be
/// inherited (clear the environment before applying it).
pub fn git_env(path: Option<&str>, home: Option<&str>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("LANG", "C"),
        ("LC_ALL", "C"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_OPTIONAL_LOCKS", "0"),
        ("GIT_PAGER", "cat"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if let Some(path) = path {
        env.push(("PATH".to_string(), path.to_string()));
    }
    if let Some(home) = home {
        env.push(("HOME".to_string(), home.to_string()));
    }
    env
}
