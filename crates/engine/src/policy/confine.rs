//! What a confined command may touch (SPEC §8), as plain values: the
//! `confine` of a policy and of one start's options, their validation, the
//! narrowing rule, and the resolved plan the spawn applies
//! ([`crate::process::confine`]).
//!
//! Trees are compared by path components after `realpath`, so `/a/b` lies
//! inside `/a` but `/a-b` does not, and a symlink names the tree it points to.

use std::path::{Path, PathBuf};

use crate::errors::{clip, os_reason, EngineError, EngineResult};
use crate::process::confine::{Grant, Level, Plan, DEVICE_NODES};

mod protect;
pub use protect::{inside, protected, REPO_DEPTH, REPO_ENTRIES};

/// The `read` of a confinement as given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ReadInput {
    /// The usual system trees plus the command's own trees.
    #[default]
    System,
    /// Every file the user can read.
    All,
    /// These trees plus the program and library trees.
    Trees(Vec<String>),
}

/// `tmp` of a confinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tmp {
    /// A fresh directory per command, removed when it settles.
    #[default]
    Private,
    /// The system temp directory is writable; no private one.
    Shared,
    /// No temp directory at all (the git toolset: it writes nothing).
    None,
}

/// A `Confinement` object as the caller gave it (absent fields are `None`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConfinementInput {
    /// `write`: trees the command may modify; absent = `[cwdRoot]`.
    pub write: Option<Vec<String>>,
    /// `read`: absent = `"system"`.
    pub read: Option<ReadInput>,
    /// `exec`: extra read+execute trees.
    pub exec: Option<Vec<String>>,
    /// `network`: absent = false.
    pub network: Option<bool>,
    /// `tmp`: absent = `"private"`.
    pub tmp: Option<Tmp>,
    /// `protect`: paths relative to each write tree kept read-only.
    pub protect: Option<Vec<String>>,
    /// `level`: absent = `"full"`.
    pub level: Option<Level>,
}

/// The read set, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadSet {
    /// System trees plus cwdRoot, the write and exec trees, the executable's directory.
    System,
    /// Everything.
    All,
    /// These (real) trees plus the program and library trees.
    Trees(Vec<PathBuf>),
}

/// A validated confinement: every tree an existing directory's real path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Writable trees.
    pub write: Vec<PathBuf>,
    /// Readable trees.
    pub read: ReadSet,
    /// Extra read+execute trees.
    pub exec: Vec<PathBuf>,
    /// Whether the network stays reachable.
    pub network: bool,
    /// The temp directory.
    pub tmp: Tmp,
    /// Extra readable files (the git toolset's configuration files); never
    /// given by callers.
    pub read_files: Vec<PathBuf>,
    /// Paths relative to each write tree kept read-only.
    pub protect: Vec<PathBuf>,
    /// How much of the confinement applies.
    pub level: Level,
}

/// The program and library trees every confined command can read and run.
pub const PROGRAM_TREES: &[&str] = &[
    "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
];

/// The rest of the `"system"` read set.
pub const SYSTEM_EXTRA_TREES: &[&str] = &["/etc", "/opt", "/proc", "/sys"];

/// The real path of an existing directory named in `field`.
fn real_dir(field: &str, p: &str) -> EngineResult<PathBuf> {
    if p.is_empty() || p.contains('\0') || !Path::new(p).is_absolute() {
        return Err(EngineError::BadInput(format!(
            "{field} entry {:?} must be an absolute path of an existing directory",
            clip(p)
        )));
    }
    let real = std::fs::canonicalize(p).map_err(|e| {
        EngineError::BadInput(format!(
            "{field} entry {:?} is not an existing directory ({}): confinement trees must exist when they are declared (a missing path could not be granted)",
            clip(p),
            os_reason(&e)
        ))
    })?;
    if !real.is_dir() {
        return Err(EngineError::BadInput(format!(
            "{field} entry {:?} (real path {:?}) is not a directory: confinement trees are directories",
            clip(p),
            real
        )));
    }
    Ok(real)
}

fn real_dirs(field: &str, list: &[String]) -> EngineResult<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(list.len());
    for p in list {
        let r = real_dir(field, p)?;
        if !out.contains(&r) {
            out.push(r);
        }
    }
    Ok(out)
}

/// Validate a confinement against the real `cwd_root` (the default write tree).
/// `what` names it in messages (`policy.confine` / `options.confine`).
pub fn resolve(input: &ConfinementInput, cwd_root: &Path, what: &str) -> EngineResult<Confinement> {
    let write = match &input.write {
        None => vec![cwd_root.to_path_buf()],
        Some(list) => real_dirs(&format!("{what}.write"), list)?,
    };
    let read = match &input.read {
        None | Some(ReadInput::System) => ReadSet::System,
        Some(ReadInput::All) => ReadSet::All,
        Some(ReadInput::Trees(list)) => ReadSet::Trees(real_dirs(&format!("{what}.read"), list)?),
    };
    let exec = match &input.exec {
        None => Vec::new(),
        Some(list) => real_dirs(&format!("{what}.exec"), list)?,
    };
    Ok(Confinement {
        write,
        read,
        exec,
        network: input.network.unwrap_or(false),
        tmp: input.tmp.unwrap_or_default(),
        read_files: Vec::new(),
        protect: protect_list(what, input.protect.as_deref().unwrap_or(&[]))?,
        level: input.level.unwrap_or_default(),
    })
}

impl Confinement {
    /// Whether `path` is readable under this confinement's read set (the
    /// trees it names; the executable's directory is not known here).
    fn reads(&self, path: &Path, cwd_root: &Path) -> bool {
        let own = self.write.iter().chain(&self.exec).any(|t| inside(path, t))
            || inside(path, cwd_root)
            || PROGRAM_TREES.iter().any(|t| inside(path, Path::new(t)));
        match &self.read {
            ReadSet::All => true,
            ReadSet::System => {
                own || SYSTEM_EXTRA_TREES
                    .iter()
                    .any(|t| inside(path, Path::new(t)))
            }
            ReadSet::Trees(list) => own || list.iter().any(|t| inside(path, t)),
        }
    }
}

/// The confinement one start runs under: the options' (which may only
/// narrow the policy's), else the policy's, else none.
pub fn effective(
    policy: Option<&Confinement>,
    options: Option<&ConfinementInput>,
    cwd_root: &Path,
) -> EngineResult<Option<Confinement>> {
    let Some(opts) = options else {
        return Ok(policy.cloned());
    };
    let Some(pol) = policy else {
        // Under an unconfined policy any confinement narrows.
        return resolve(opts, cwd_root, "options.confine").map(Some);
    };
    // Absent fields inherit the policy's.
    let mut c = resolve(opts, cwd_root, "options.confine")?;
    if opts.write.is_none() {
        c.write = pol.write.clone();
    }
    if opts.read.is_none() {
        c.read = pol.read.clone();
    }
    if opts.exec.is_none() {
        c.exec = pol.exec.clone();
    }
    if opts.network.is_none() {
        c.network = pol.network;
    }
    if opts.tmp.is_none() {
        c.tmp = pol.tmp;
    }
    // More protected paths only narrow: the policy's stay.
    for p in &pol.protect {
        if !c.protect.contains(p) {
            c.protect.push(p.clone());
        }
    }
    if opts.level.is_none() {
        c.level = pol.level;
    }
    let widen = |msg: String| {
        Err(EngineError::BadInput(format!(
            "options.confine may only narrow the policy's confinement, never widen it: {msg}"
        )))
    };
    for w in &c.write {
        if !pol.write.iter().any(|t| inside(w, t)) {
            return widen(format!(
                "write tree {w:?} is not inside any of the policy's write trees {:?}",
                pol.write
            ));
        }
    }
    for e in &c.exec {
        if !pol.exec.iter().any(|t| inside(e, t)) && !pol.reads(e, cwd_root) {
            return widen(format!(
                "exec tree {e:?} is not inside the policy's exec or read trees"
            ));
        }
    }
    match (&c.read, &pol.read) {
        (_, ReadSet::All) => {}
        (ReadSet::All, _) => {
            return widen("read: \"all\" is allowed only where the policy's read is \"all\"".into())
        }
        (ReadSet::System, ReadSet::Trees(_)) => {
            return widen(
                "read: \"system\" reads /etc, /opt, /proc and /sys, which the policy's read list does not; give a list of trees inside the policy's".into(),
            )
        }
        (ReadSet::System, ReadSet::System) => {}
        (ReadSet::Trees(list), _) => {
            for r in list {
                if !pol.reads(r, cwd_root) {
                    return widen(format!(
                        "read tree {r:?} is not inside the policy's read set"
                    ));
                }
            }
        }
    }
    if c.level == Level::Landlock && pol.level == Level::Full {
        return widen(
            "level: \"landlock\" drops the namespace sandbox the policy's level \"full\" asks for"
                .into(),
        );
    }
    if c.network && !pol.network {
        return widen("network: true is allowed only where the policy's network is true".into());
    }
    if c.tmp == Tmp::Shared && pol.tmp != Tmp::Shared {
        return widen(
            "tmp: \"shared\" makes the system temp directory writable, which the policy's tmp: \"private\" does not"
                .into(),
        );
    }
    Ok(Some(c))
}

/// The user's git configuration git reads (`~/.gitconfig` and the XDG
/// `git` directory holding `config`, `attributes` and `ignore`), by their
/// real paths, for `HOME`/`XDG_CONFIG_HOME` of `env` (else this process's).
pub fn git_config_paths(env: Option<&[(String, String)]>) -> Vec<PathBuf> {
    let var = |k: &str| {
        match env {
            Some(e) => e.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone()),
            None => None,
        }
        .or_else(|| std::env::var(k).ok())
    };
    let mut out = Vec::new();
    if let Some(home) = var("HOME").filter(|h| h.starts_with('/')) {
        let home = PathBuf::from(home);
        let xdg = var("XDG_CONFIG_HOME")
            .filter(|x| x.starts_with('/'))
            .map_or_else(|| home.join(".config"), PathBuf::from);
        for p in [home.join(".gitconfig"), xdg.join("git")] {
            if let Ok(real) = std::fs::canonicalize(p) {
                out.push(real);
            }
        }
    }
    out
}

/// What makes terminals: the sandbox mounts a private instance instead.
const TERMINAL_DEVICES: &[&str] = &["/dev/ptmx", "/dev/pts"];

/// POSIX shared memory, writable to a command that may write anything.
pub const SHM: &str = "/dev/shm";

/// A shared list of fixed system paths and their grants.
type SystemPaths = std::sync::Arc<[(PathBuf, Grant)]>;

/// Which fixed system paths a read set grants.
#[derive(Clone, Copy)]
enum SystemKind {
    All,
    System,
    Trees,
}

/// The fixed system paths of a plan and how they are granted, built once
/// per kind of read set (and whether the command may write anything).
fn system_paths(kind: SystemKind, writes: bool) -> SystemPaths {
    use std::sync::OnceLock;
    static LISTS: [OnceLock<SystemPaths>; 6] = [const { OnceLock::new() }; 6];
    let i = kind as usize * 2 + usize::from(writes);
    LISTS[i]
        .get_or_init(|| {
            let mut system: Vec<(PathBuf, Grant)> = Vec::new();
            let trees: Vec<&str> = match kind {
                SystemKind::All => vec!["/"],
                SystemKind::System => PROGRAM_TREES
                    .iter()
                    .chain(SYSTEM_EXTRA_TREES)
                    .copied()
                    .collect(),
                // Landlock cannot name "the process's own /proc entries"
                // before the process exists; /proc stays readable, and the
                // entries of processes outside the command's domain stay
                // protected by Landlock's ptrace scoping.
                SystemKind::Trees => PROGRAM_TREES.iter().copied().chain(["/proc"]).collect(),
            };
            for t in trees {
                system.push((PathBuf::from(t), Grant::Read));
            }
            for d in DEVICE_NODES.iter().chain(TERMINAL_DEVICES) {
                system.push((PathBuf::from(d), Grant::Device));
            }
            // POSIX shared memory (python's multiprocessing, for one) lives
            // here; a command that may write nothing (the git toolset) gets
            // none.
            if writes {
                system.push((PathBuf::from(SHM), Grant::Write));
            }
            system.into()
        })
        .clone()
}

/// `protect` entries: relative paths without `..`.
fn protect_list(what: &str, list: &[String]) -> EngineResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in list {
        let path = Path::new(p);
        let fine = !p.is_empty()
            && !p.contains('\0')
            && path.is_relative()
            && path
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !fine {
            return Err(EngineError::BadInput(format!(
                "{what}.protect entry {:?} must be a path relative to each write tree, without \"..\" (e.g. \".npmrc\" or \".vscode\")",
                clip(p)
            )));
        }
        out.push(path.to_path_buf());
    }
    Ok(out)
}

/// Build the plan of `c` for a command in `cwd_root` running `exe_dirs`
/// (argv[0]'s directory, and its real one), with its private temp directory
/// `private_tmp` or the shared `shared_tmp`.
pub fn plan(
    c: &Confinement,
    cwd_root: &Path,
    exe_dirs: &[PathBuf],
    private_tmp: Option<&Path>,
    shared_tmp: &Path,
) -> Plan {
    let mut rules: Vec<(PathBuf, Grant)> = Vec::new();
    let read =
        |rules: &mut Vec<(PathBuf, Grant)>, p: &Path| rules.push((p.to_path_buf(), Grant::Read));
    let kind = match &c.read {
        ReadSet::All => SystemKind::All,
        ReadSet::System => {
            read(&mut rules, cwd_root);
            // git refuses to run when it cannot read its own configuration.
            for f in git_config_paths(None) {
                read(&mut rules, &f);
            }
            SystemKind::System
        }
        ReadSet::Trees(list) => {
            for t in list {
                read(&mut rules, t);
            }
            SystemKind::Trees
        }
    };
    // The fixed system paths, whose descriptors the spawn keeps: the same
    // shared list for every plan of this kind.
    let system = system_paths(kind, !c.write.is_empty());
    for t in c.exec.iter().chain(exe_dirs) {
        read(&mut rules, t);
    }
    for f in &c.read_files {
        rules.push((f.clone(), Grant::Read));
    }
    for w in &c.write {
        rules.push((w.clone(), Grant::Write));
    }
    let mut private = None;
    match c.tmp {
        Tmp::Private => private = private_tmp.map(Path::to_path_buf),
        Tmp::Shared => rules.push((shared_tmp.to_path_buf(), Grant::Write)),
        Tmp::None => {}
    }
    Plan {
        system,
        rules,
        private_tmp: private,
        network: c.network,
        protect: if c.level == Level::Full {
            protected(&c.write, &c.protect)
        } else {
            Vec::new()
        },
        level: c.level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&Path]) -> Vec<String> {
        v.iter().map(|p| p.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn defaults_and_validation() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let c = resolve(&ConfinementInput::default(), &root, "policy.confine").unwrap();
        assert_eq!(c.write, vec![root.clone()]);
        assert_eq!(c.read, ReadSet::System);
        assert!(!c.network);
        assert_eq!(c.tmp, Tmp::Private);
        let bad = ConfinementInput {
            write: Some(vec![root.join("missing").to_string_lossy().into_owned()]),
            ..Default::default()
        };
        // code: NLC_INVALID_ARGUMENT
        let e = resolve(&bad, &root, "policy.confine")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("policy.confine.write entry") && e.contains("not an existing directory"),
            "{e}"
        );
        let rel = ConfinementInput {
            exec: Some(vec!["relative".into()]),
            ..Default::default()
        };
        let e = resolve(&rel, &root, "policy.confine")
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be an absolute path"), "{e}");
    }

    #[test]
    fn options_only_narrow() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let sibling = tempfile::tempdir().unwrap();
        let pol = resolve(&ConfinementInput::default(), &root, "policy.confine").unwrap();

        let narrower = ConfinementInput {
            write: Some(s(&[&root.join("sub")])),
            read: Some(ReadInput::Trees(s(&[&root]))),
            ..Default::default()
        };
        let c = effective(Some(&pol), Some(&narrower), &root)
            .unwrap()
            .unwrap();
        assert_eq!(c.write, vec![root.join("sub")]);

        let cases: Vec<(ConfinementInput, &str)> = vec![
            (
                ConfinementInput {
                    write: Some(s(&[sibling.path()])),
                    ..Default::default()
                },
                "is not inside any of the policy's write trees",
            ),
            (
                ConfinementInput {
                    read: Some(ReadInput::All),
                    ..Default::default()
                },
                "read: \"all\" is allowed only",
            ),
            (
                ConfinementInput {
                    network: Some(true),
                    ..Default::default()
                },
                "network: true is allowed only",
            ),
            (
                ConfinementInput {
                    tmp: Some(Tmp::Shared),
                    ..Default::default()
                },
                "tmp: \"shared\"",
            ),
            (
                ConfinementInput {
                    read: Some(ReadInput::Trees(s(&[sibling.path()]))),
                    ..Default::default()
                },
                "is not inside the policy's read set",
            ),
        ];
        for (input, phrase) in cases {
            // code: NLC_INVALID_ARGUMENT
            let e = effective(Some(&pol), Some(&input), &root)
                .unwrap_err()
                .to_string();
            assert!(e.contains("may only narrow") && e.contains(phrase), "{e}");
        }
        // Under an unconfined policy, anything narrows.
        let wide = ConfinementInput {
            read: Some(ReadInput::All),
            network: Some(true),
            ..Default::default()
        };
        assert!(effective(None, Some(&wide), &root).unwrap().is_some());
        assert_eq!(effective(None, None, &root).unwrap(), None);
        assert_eq!(effective(Some(&pol), None, &root).unwrap(), Some(pol));
    }
}
