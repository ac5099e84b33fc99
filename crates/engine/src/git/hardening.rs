//! Configuration overrides that stop git from starting any program named by
//! repository or user configuration.
//!
//! Two layers: the static [`HARDENING`](super::prefix::HARDENING) pairs, appended to every argv after
//! the three fixed pairs of [`FIXED_PREFIX`](super::prefix::FIXED_PREFIX), and the per-name overrides
//! that [`driver_overrides`] derives from the configuration actually in
//! force (filter and diff drivers, protocol policies and submodules are
//! keyed by names that cannot be known in advance).

use crate::platform::OsStrExt;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::helper::{self, Failure};
use super::prefix::work_tree_arg;
use super::GitRefusal;
use crate::policy::confine::Confinement;

/// The most bytes a configuration listing may have before it is refused.
const MAX_LISTING_BYTES: usize = 16 * 1024 * 1024;

/// Push `-c key=value` for a configuration key with a subsection.
fn push_override(out: &mut Vec<String>, section: &str, name: &str, key: &str, value: &str) {
    out.push("-c".to_string());
    out.push(format!("{section}.{name}.{key}={value}"));
}

/// Turn configuration names (as printed by `git config --list --name-only`,
/// e.g. `filter.lfs.clean`) into `-c` overrides that neutralise every
/// program-starting driver they name:
///
/// - `filter.<n>.*` → `filter.<n>.clean=`, `filter.<n>.smudge=`,
///   `filter.<n>.process=`, `filter.<n>.required=false`
/// - `diff.<n>.*` → `diff.<n>.textconv=`, `diff.<n>.command=`
/// - `protocol.<n>.*` → `protocol.<n>.allow=never`
/// - `submodule.<n>.*` → `submodule.<n>.ignore=dirty`
///
/// Other names give nothing. The result is sorted and free of duplicates.
/// A name whose subsection holds `=` cannot be overridden with `-c` (git
/// splits `-c` at the first `=`), so it is refused rather than left open.
pub fn overrides_for_config_names<'a, I>(names: I) -> Result<Vec<String>, GitRefusal>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut drivers: BTreeSet<(String, String)> = BTreeSet::new();
    for name in names {
        let (Some(first_dot), Some(last_dot)) = (name.find('.'), name.rfind('.')) else {
            continue;
        };
        if first_dot == last_dot {
            continue; // no subsection
        }
        let section = name[..first_dot].to_ascii_lowercase();
        if !matches!(
            section.as_str(),
            "filter" | "diff" | "protocol" | "submodule"
        ) {
            continue;
        }
        let subsection = &name[first_dot + 1..last_dot];
        if subsection.contains('=') || subsection.contains('\n') {
            return Err(GitRefusal(format!(
                "the git configuration names a {section} entry {subsection:?} that cannot be \
                 overridden safely (its name holds \"=\" or a newline); rename or remove \
                 \"{name}\" from the git configuration"
            )));
        }
        drivers.insert((section, subsection.to_string()));
    }
    let mut out = Vec::new();
    for (section, name) in &drivers {
        match section.as_str() {
            "filter" => {
                for key in ["clean", "smudge", "process"] {
                    push_override(&mut out, section, name, key, "");
                }
                push_override(&mut out, section, name, "required", "false");
            }
            "diff" => {
                push_override(&mut out, section, name, "textconv", "");
                push_override(&mut out, section, name, "command", "");
            }
            "protocol" => push_override(&mut out, section, name, "allow", "never"),
            _ => push_override(&mut out, section, name, "ignore", "dirty"),
        }
    }
    Ok(out)
}

/// Run `git <hardened prefix> <args>` in `root` with exactly `env`, stdin
/// null, confined by `confine` when given (as the tool's own run is),
/// killing it after `timeout`.
fn run_hardened(
    git_executable: &str,
    root: &Path,
    env: &[(String, String)],
    args: &[String],
    timeout: Duration,
    confine: Option<&Confinement>,
) -> Result<helper::Output, GitRefusal> {
    let mut pinned = vec![work_tree_arg(root)];
    pinned.extend(args.iter().cloned());
    let argv = super::full_argv(git_executable, &pinned);
    let out = helper::run(&argv, root, env, confine, timeout, MAX_LISTING_BYTES).map_err(|f| {
        GitRefusal(match f {
            Failure::Start(err) => format!(
                "could not start {git_executable:?} to list the git configuration ({}); \
                 check gitExecutable and repoRoot",
                crate::errors::os_reason(&err)
            ),
            Failure::Timeout => format!(
                "listing the git configuration took longer than {} ms; retry, or raise timeoutMs",
                timeout.as_millis()
            ),
        })
    })?;
    if out.stdout.len() > MAX_LISTING_BYTES {
        return Err(GitRefusal(format!(
            "the git configuration listing exceeds {MAX_LISTING_BYTES} bytes; trim the git configuration"
        )));
    }
    Ok(out)
}

/// The most nested include levels followed (git's own limit is 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// Whether `path` is `root` or below it (both real paths).
fn inside(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// The real path of an include target, or of its nearest existing ancestor
/// joined with the rest (a target that does not exist yet is judged by
/// where it would be).
fn real_target(path: &Path) -> PathBuf {
    #[cfg(windows)]
    let canonicalize = super::windows::canonical;
    #[cfg(not(windows))]
    let canonicalize = |p: &Path| std::fs::canonicalize(p);
    if let Ok(real) = canonicalize(path) {
        return real;
    }
    let mut rest = Vec::new();
    let mut cur = path.to_path_buf();
    while let Some(parent) = cur.parent().map(Path::to_path_buf) {
        if let Some(name) = cur.file_name() {
            rest.push(name.to_os_string());
        }
        if let Ok(real) = canonicalize(&parent) {
            let mut out = real;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return out;
        }
        cur = parent;
    }
    path.to_path_buf()
}

/// Refuse a repository whose own configuration (local or worktree scope,
/// and every file it includes, followed to git's depth limit) includes a
/// file outside `repo_root` and the directory of the including file (the
/// git directory). `include.path` and every `includeIf.<condition>.path`
/// count, whatever the condition. An included file is parsed as
/// configuration: its values would reach the run (and its errors quote
/// values), so it must not come from outside the repository. The listing
/// runs with `--no-includes`, so no outside file is read while checking.
/// The user's and the system's own configuration may include what they like.
fn check_includes(
    git_executable: &str,
    repo_root: &Path,
    env: &[(String, String)],
    timeout: Duration,
    confine: Option<&Confinement>,
) -> Result<(), GitRefusal> {
    let home = env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v));
    // (listing args, directory relative origins are joined to)
    let mut todo: Vec<(Vec<String>, usize)> = vec![(
        strings(&[
            "config",
            "--list",
            "--no-includes",
            "--show-scope",
            "--show-origin",
            "-z",
        ]),
        0,
    )];
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    while let Some((args, depth)) = todo.pop() {
        let listing = run_hardened(git_executable, repo_root, env, &args, timeout, confine)?;
        if !listing.status.success() {
            return Err(GitRefusal(format!(
                "git could not list its configuration ({}): {}; fix the git configuration",
                listing.status,
                String::from_utf8_lossy(&listing.stderr).trim()
            )));
        }
        let fields: Vec<&[u8]> = listing.stdout.split(|&b| b == 0).collect();
        for entry in fields.chunks(3) {
            let [scope, origin, item] = entry else {
                continue;
            };
            if !matches!(*scope, b"local" | b"worktree" | b"command") {
                continue;
            }
            let mut parts = item.splitn(2, |&b| b == b'\n');
            let name =
                String::from_utf8_lossy(parts.next().unwrap_or_default()).to_ascii_lowercase();
            let value = parts.next().unwrap_or_default();
            let is_include = name == "include.path"
                || (name.starts_with("includeif.") && name.ends_with(".path"));
            if !is_include || value.is_empty() {
                continue;
            }
            let origin = origin.strip_prefix(b"file:").unwrap_or(origin);
            let origin = repo_root.join(std::ffi::OsStr::from_bytes(origin));
            let origin_dir = real_target(origin.parent().unwrap_or(repo_root));
            let value = std::ffi::OsStr::from_bytes(value);
            let target = match (value.as_bytes().strip_prefix(b"~/"), &home) {
                (Some(rest), Some(h)) => h.join(std::ffi::OsStr::from_bytes(rest)),
                (Some(_), None) => PathBuf::from("/"),
                (None, _) if Path::new(value).is_absolute() => PathBuf::from(value),
                (None, _) => origin.parent().unwrap_or(repo_root).join(value),
            };
            let real = real_target(&target);
            if !(inside(&real, repo_root) || inside(&real, &origin_dir)) {
                return Err(GitRefusal(format!(
                    "the repository's git configuration ({}) includes {:?} ({name}), a file outside \
                     the repository {:?}: git would read it, so the tool does not run; remove the \
                     include from the repository's configuration",
                    origin.display(),
                    value,
                    repo_root
                )));
            }
            if depth + 1 < MAX_INCLUDE_DEPTH && real.is_file() && seen.insert(real.clone()) {
                let mut nested = strings(&[
                    "config",
                    "--list",
                    "--no-includes",
                    "--show-scope",
                    "--show-origin",
                    "-z",
                    "--file",
                ]);
                nested.push(real.to_string_lossy().into_owned());
                todo.push((nested, depth + 1));
            }
        }
    }
    Ok(())
}

/// Refuse a configuration (any scope, includes followed) whose
/// `blame.ignoreRevsFile` names a file outside `repo_root` and its git
/// directory: `blame` reads every such file and quotes a line it cannot
/// parse in its error. No `-c` value can take an entry back (git keeps the
/// list sorted, so the empty "reset" entry always comes first), so the run
/// is refused instead; a file inside the repository (the usual
/// `.git-blame-ignore-revs`) is read as before.
fn check_ignore_revs(
    values: &[&[u8]],
    git_executable: &str,
    repo_root: &Path,
    env: &[(String, String)],
    timeout: Duration,
    confine: Option<&Confinement>,
) -> Result<(), GitRefusal> {
    if values.is_empty() {
        return Ok(());
    }
    let home = env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v));
    let git_dir = || {
        run_hardened(
            git_executable,
            repo_root,
            env,
            &strings(&["rev-parse", "--absolute-git-dir"]),
            timeout,
            confine,
        )
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            let mut b = o.stdout;
            while b.last() == Some(&b'\n') {
                b.pop();
            }
            real_target(Path::new(std::ffi::OsStr::from_bytes(&b)))
        })
    };
    for &value in values.iter().filter(|v| !v.is_empty()) {
        let os = std::ffi::OsStr::from_bytes(value);
        let target = match (value.strip_prefix(b"~/"), &home) {
            (Some(rest), Some(h)) => h.join(std::ffi::OsStr::from_bytes(rest)),
            (Some(_), None) => PathBuf::from("/"),
            (None, _) => repo_root.join(os),
        };
        let real = real_target(&target);
        let ok = inside(&real, repo_root) || git_dir().is_some_and(|g| inside(&real, &g));
        if !ok {
            return Err(GitRefusal(format!(
                "the git configuration sets blame.ignoreRevsFile to {os:?}, a file outside the \
                 repository {repo_root:?}: git would read it, so the tool does not run; remove \
                 that setting or point it at a file inside the repository"
            )));
        }
    }
    Ok(())
}

/// Split a `-z` listing into names (NUL-terminated; `--name-only` prints no value).
fn names_of(listing: &[u8]) -> Vec<String> {
    listing
        .split(|&b| b == 0)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            // Without --name-only an entry would be "name\nvalue": keep the name.
            let name = entry.split(|&b| b == b'\n').next().unwrap_or(entry);
            String::from_utf8_lossy(name).into_owned()
        })
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Work out the per-name `-c` overrides for the repository at `repo_root`
/// (see [`overrides_for_config_names`]). Runs git (with the hardened prefix,
/// exactly `env` — normally [`super::git_env`] —, stdin null, `timeout` per
/// run) to list:
///
/// 1. every configuration entry in force there (`config --list -z`:
///    system, global, local, worktree and included files, after
///    [`check_includes`] refused repository includes of outside files);
///    `blame.ignoreRevsFile` values naming a file outside are refused
///    ([`check_ignore_revs`]);
/// 2. the submodule names of `.gitmodules` (the worktree file, else the
///    index's, else HEAD's — the order git reads it in), found through
///    `rev-parse --show-toplevel`; absent in a bare repository or outside
///    one.
///
/// Put the result between the hardening prefix and the tool's args (see
/// [`super::full_argv_with_overrides`]). Any failure of step 1 is an error:
/// the caller must not run the tool without these overrides. The listing is
/// a snapshot: configuration written between this call and the tool's run
/// is not covered.
pub fn driver_overrides(
    git_executable: &str,
    repo_root: &Path,
    env: &[(String, String)],
    timeout: Duration,
) -> Result<Vec<String>, GitRefusal> {
    driver_overrides_confined(git_executable, repo_root, env, timeout, None)
}

/// [`driver_overrides`], every git process it starts confined by `confine`
/// when given — the confinement of the tool's own run (SPEC §8).
pub fn driver_overrides_confined(
    git_executable: &str,
    repo_root: &Path,
    env: &[(String, String)],
    timeout: Duration,
    confine: Option<&Confinement>,
) -> Result<Vec<String>, GitRefusal> {
    check_includes(git_executable, repo_root, env, timeout, confine)?;
    let listing = run_hardened(
        git_executable,
        repo_root,
        env,
        &strings(&["config", "--list", "-z"]),
        timeout,
        confine,
    )?;
    if !listing.status.success() {
        return Err(GitRefusal(format!(
            "git could not list its configuration ({}): {}; fix the git configuration",
            listing.status,
            String::from_utf8_lossy(&listing.stderr).trim()
        )));
    }
    let mut names = names_of(&listing.stdout);
    let ignore_revs: Vec<&[u8]> = listing
        .stdout
        .split(|&b| b == 0)
        .filter_map(|entry| {
            let nl = entry.iter().position(|&b| b == b'\n')?;
            entry[..nl]
                .eq_ignore_ascii_case(b"blame.ignorerevsfile")
                .then(|| &entry[nl + 1..])
        })
        .collect();
    check_ignore_revs(
        &ignore_revs,
        git_executable,
        repo_root,
        env,
        timeout,
        confine,
    )?;

    let toplevel = run_hardened(
        git_executable,
        repo_root,
        env,
        &strings(&["rev-parse", "--show-toplevel"]),
        timeout,
        confine,
    )?;
    if toplevel.status.success() {
        let mut top = toplevel.stdout;
        while top.last() == Some(&b'\n') {
            top.pop();
        }
        let top = PathBuf::from(std::ffi::OsStr::from_bytes(&top));
        let file = top.join(".gitmodules");
        let mut sources: Vec<Vec<String>> = Vec::new();
        if file.exists() {
            sources.push(vec![
                "--file".to_string(),
                file.to_string_lossy().into_owned(),
            ]);
        } else {
            sources.push(strings(&["--blob", ":.gitmodules"]));
            sources.push(strings(&["--blob", "HEAD:.gitmodules"]));
        }
        for source in sources {
            let mut args = strings(&["config", "--list", "--name-only", "-z"]);
            args.extend(source);
            let modules = run_hardened(git_executable, &top, env, &args, timeout, confine)?;
            if modules.status.success() {
                names.extend(
                    names_of(&modules.stdout)
                        .into_iter()
                        .filter(|name| name.to_ascii_lowercase().starts_with("submodule.")),
                );
                break;
            }
        }
    }
    overrides_for_config_names(names.iter().map(String::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::prefix::{FIXED_PREFIX, HARDENING};

    #[test]
    fn names_become_overrides() {
        let names = [
            "user.name",
            "core.pager",
            "filter.lfs.clean",
            "filter.lfs.smudge",
            "filter.lfs.process",
            "filter.lfs.required",
            "diff.pdf.textconv",
            "diff.Odd.Name.command",
            "protocol.file.allow",
            "submodule.libs/x.url",
            "diff.external",
            "filter.plain",
        ];
        let got = overrides_for_config_names(names).unwrap();
        let want: Vec<String> = [
            "diff.Odd.Name.textconv=",
            "diff.Odd.Name.command=",
            "diff.pdf.textconv=",
            "diff.pdf.command=",
            "filter.lfs.clean=",
            "filter.lfs.smudge=",
            "filter.lfs.process=",
            "filter.lfs.required=false",
            "protocol.file.allow=never",
            "submodule.libs/x.ignore=dirty",
        ]
        .iter()
        .flat_map(|pair| ["-c".to_string(), pair.to_string()])
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn names_with_equals_are_refused() {
        let err = overrides_for_config_names(["filter.a=b.clean"])
            .unwrap_err()
            .0;
        assert!(err.contains("cannot be overridden safely"), "{err}");
        assert!(overrides_for_config_names(["user.a=b"]).unwrap().is_empty());
    }

    #[test]
    fn listing_is_split_on_nul() {
        assert_eq!(
            names_of(b"a.b\0filter.x.clean\0"),
            vec!["a.b", "filter.x.clean"]
        );
        assert_eq!(names_of(b"a.b\nvalue\0"), vec!["a.b"]);
        assert!(names_of(b"").is_empty());
    }

    #[test]
    fn hardening_keys_are_unique_and_distinct_from_the_fixed_prefix() {
        let mut keys: Vec<&str> = FIXED_PREFIX
            .iter()
            .chain(HARDENING)
            .map(|(k, _)| *k)
            .collect();
        let total = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), total);
    }

    #[test]
    fn markdown_lists_every_override() {
        let doc = include_str!("HARDENING.md");
        for (key, value) in FIXED_PREFIX.iter().chain(HARDENING) {
            let pair = format!("`{key}={value}`");
            assert!(doc.contains(&pair), "HARDENING.md does not mention {pair}");
        }
    }
}
