//! What a confined command may touch (SPEC §8), as plain values: the
//! `confine` of a policy and of one start's options, their validation, the
//! narrowing rule, and the resolved plan the spawn applies
//! ([`crate::process::confine`]).
//!
//! Trees are compared by path components after `realpath`, so `/a/b` lies
//! inside `/a` but `/a-b` does not, and a symlink names the tree it points to.

use std::path::{Path, PathBuf};

use crate::errors::{clip, os_reason, EngineError, EngineResult};
use crate::process::confine::{Grant, Level, Plan, Protected, DEVICE_NODES};

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

/// Whether `path` is `tree` or lies below it (by components).
pub fn inside(path: &Path, tree: &Path) -> bool {
    path.starts_with(tree)
}

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

/// How many submodule git directories of one repository are protected at
/// most (nested ones included).
const SUBMODULES_SCANNED: usize = 64;

/// The git directories of the submodules of the repository whose git
/// directory is `git` (`modules/<name>`, names with slashes and nested
/// submodules included), each with its checkout's gitfile (`<worktree>/.git`,
/// from the module's `core.worktree`) when it is a file. What git itself
/// reads when the user's `git status` recurses into them.
fn submodules(git: &Path) -> Vec<(PathBuf, Option<PathBuf>)> {
    let mut found = Vec::new();
    let mut dirs = vec![(git.join("modules"), 0usize)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if found.len() >= SUBMODULES_SCANNED {
                return found;
            }
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let d = e.path();
            if d.join("HEAD").is_file() {
                let worktree = std::fs::read_to_string(d.join("config"))
                    .ok()
                    .and_then(|c| {
                        c.lines().find_map(|l| {
                            let (k, v) = l.split_once('=')?;
                            (k.trim() == "worktree").then(|| v.trim().to_string())
                        })
                    })
                    .and_then(|w| std::fs::canonicalize(d.join(w)).ok())
                    .map(|w| w.join(".git"))
                    .filter(|f| std::fs::symlink_metadata(f).is_ok_and(|m| m.is_file()));
                found.push((d.clone(), worktree));
                if depth < 8 {
                    dirs.push((d.join("modules"), depth + 1));
                }
            } else if depth < 8 {
                // A name with a slash: `modules/a/b`.
                dirs.push((d, depth + 1));
            }
        }
    }
    found
}

/// How deep below a write tree's top repositories are looked for: a `.git`
/// in `<tree>/a/b/c/d/` is found, one a level deeper is not.
pub const REPO_DEPTH: usize = 4;

/// How many directory entries the look for repositories reads at most in
/// one start, over all its write trees.
pub const REPO_ENTRIES: usize = 10_000;

/// Directories the look for repositories does not enter: package and build
/// trees, many files and no repository of the user's.
const NOT_ENTERED: [&str; 2] = ["node_modules", "target"];

/// The `.git` entries (directories, gitfiles, links) in `w` and below it,
/// breadth first down to [`REPO_DEPTH`], reading at most `budget` more
/// entries. Links to directories are not followed, git directories not
/// entered.
fn repositories(w: &Path, budget: &mut usize, found: &mut Vec<PathBuf>) {
    let mut queue = std::collections::VecDeque::from([(w.to_path_buf(), 0usize)]);
    while let Some((dir, depth)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            let name = e.file_name();
            if name == ".git" {
                found.push(e.path());
            } else if depth < REPO_DEPTH
                && !NOT_ENTERED.iter().any(|n| name == *n)
                && e.file_type().is_ok_and(|t| t.is_dir())
            {
                queue.push_back((e.path(), depth + 1));
            }
        }
    }
}

/// The file type bits of a mode (`S_IFMT`: the same on every Unix).
const TYPE_BITS: u32 = 0o170_000;
/// A directory's file type (`S_IFDIR`).
const DIR: u32 = 0o040_000;
/// A regular file's file type (`S_IFREG`).
const FILE: u32 = 0o100_000;

fn kind(m: &std::fs::Metadata) -> u32 {
    crate::platform::MetadataExt::mode(m) & TYPE_BITS
}

/// What a protected path `p` stands for, with its file type: `p` itself,
/// or — when it is a symbolic link — what the link names, the link then
/// pinned in `out` so it cannot be replaced. A link naming nothing inside a
/// write tree has its target made (a directory when `make` is `Some(true)`,
/// an empty file when `Some(false)`, nothing when `None`) so that the
/// command cannot plant there; `made` says so. `None` when `p` does not
/// exist.
fn behind_link(
    p: &Path,
    make: Option<bool>,
    write: &[PathBuf],
    out: &mut Vec<Protected>,
) -> Option<Behind> {
    let m = std::fs::symlink_metadata(p).ok()?;
    if !m.file_type().is_symlink() {
        return Some(Behind {
            path: p.to_path_buf(),
            kind: kind(&m),
            made: false,
        });
    }
    out.push(Protected {
        path: p.to_path_buf(),
        pin: true,
        kind: kind(&m),
    });
    if let Ok(t) = std::fs::canonicalize(p) {
        let m = std::fs::metadata(&t).ok()?;
        return Some(Behind {
            path: t,
            kind: kind(&m),
            made: false,
        });
    }
    let dir = make?;
    let named = p.parent()?.join(std::fs::read_link(p).ok()?);
    let t = std::fs::canonicalize(named.parent()?)
        .ok()?
        .join(named.file_name()?);
    if !write.iter().any(|w| t.starts_with(w)) {
        return None;
    }
    let made = if dir {
        std::fs::create_dir(&t)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&t)
            .map(drop)
    };
    made.ok()?;
    Some(Behind {
        path: t,
        kind: if dir { DIR } else { FILE },
        made: true,
    })
}

/// What [`behind_link`] found.
struct Behind {
    path: PathBuf,
    kind: u32,
    /// Made just now, where a link pointed at nothing.
    made: bool,
}

impl Behind {
    fn read_only(self) -> Protected {
        Protected {
            path: self.path,
            pin: false,
            kind: self.kind,
        }
    }
}

/// What stays protected inside the write trees (SPEC §8), sorted so that
/// each path comes after the directories holding it (the order it is
/// bound). For every git repository found — the one each write tree lies in
/// (its `.git` found walking up), and each `.git` at a write tree's top or
/// below it down to [`REPO_DEPTH`] levels (see [`repositories`]) — `.git`
/// pinned (a mount point cannot be renamed or removed) and its `hooks` and
/// `config` read-only; for a linked worktree (`.git` a file), the file, and
/// its git directory's and common directory's `config` and `hooks`; for
/// each submodule of a repository, its git directory's `hooks` and `config`
/// and its checkout's gitfile; then each `extra` path that exists under a
/// write tree. A protected path that is a symbolic link is pinned and what
/// it names protected in its place (see [`behind_link`]). Every directory
/// between a write tree's top and a protected path is pinned too, so that
/// none can be renamed away with the protection inside it. A missing
/// `hooks` directory is made (empty, as `git init` makes it) so it can be
/// protected. Paths outside the write trees (read-only in the view) are
/// left out.
pub fn protected(write: &[PathBuf], extra: &[PathBuf]) -> Vec<Protected> {
    let mut gits: Vec<PathBuf> = Vec::new();
    let mut budget = REPO_ENTRIES;
    for w in write {
        for dir in w.ancestors() {
            let g = dir.join(".git");
            if std::fs::symlink_metadata(&g).is_ok() {
                gits.push(g);
                break;
            }
        }
        repositories(w, &mut budget, &mut gits);
    }
    let mut out: Vec<Protected> = Vec::new();
    let git_dir_parts = |d: &Path, out: &mut Vec<Protected>| {
        let hooks = d.join("hooks");
        let mut h = behind_link(&hooks, Some(true), write, out);
        if h.is_none() && std::fs::create_dir(&hooks).is_ok() {
            h = Some(Behind {
                path: hooks,
                kind: DIR,
                made: true,
            });
        }
        let c = behind_link(&d.join("config"), Some(false), write, out);
        out.extend(h.into_iter().chain(c).map(Behind::read_only));
    };
    let mut seen: Vec<PathBuf> = Vec::new();
    for g in gits {
        if seen.contains(&g) {
            continue;
        }
        seen.push(g.clone());
        let Some(real) = behind_link(&g, Some(true), write, &mut out) else {
            continue;
        };
        if real.made {
            // An empty directory where a `.git` link pointed: kept empty.
            out.push(real.read_only());
            continue;
        }
        if real.kind == DIR {
            let d = real.path;
            out.push(Protected {
                path: d.clone(),
                pin: true,
                kind: DIR,
            });
            git_dir_parts(&d, &mut out);
            for (module, gitfile) in submodules(&d) {
                git_dir_parts(&module, &mut out);
                if let Some(f) = gitfile.and_then(|f| behind_link(&f, None, write, &mut out)) {
                    out.push(f.read_only());
                }
            }
        } else if real.kind == FILE {
            let f = real.path.clone();
            out.push(real.read_only());
            // gitdir: <path> → the worktree's git directory, whose
            // `commondir` names the main one.
            let target = std::fs::read_to_string(&f).ok().and_then(|t| {
                let t = t.strip_prefix("gitdir:")?.trim().to_string();
                let p = g.parent()?.join(t);
                std::fs::canonicalize(p).ok()
            });
            if let Some(gd) = target {
                git_dir_parts(&gd, &mut out);
                let common = std::fs::read_to_string(gd.join("commondir"))
                    .ok()
                    .and_then(|c| std::fs::canonicalize(gd.join(c.trim())).ok());
                if let Some(c) = common {
                    out.push(Protected {
                        path: c.clone(),
                        pin: true,
                        kind: DIR,
                    });
                    git_dir_parts(&c, &mut out);
                }
                let wt = gd.join("config.worktree");
                if let Some(t) = behind_link(&wt, Some(false), write, &mut out) {
                    out.push(t.read_only());
                }
            }
        }
    }
    for w in write {
        for e in extra {
            let p = w.join(e);
            // Its directory by its real path (a link there names another).
            let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
                continue;
            };
            let Ok(dir) = std::fs::canonicalize(dir) else {
                continue;
            };
            if let Some(t) = behind_link(&dir.join(name), None, write, &mut out) {
                out.push(t.read_only());
            }
        }
    }
    // Every directory between the outermost write tree holding a path and
    // the path, pinned.
    let mut all: Vec<Protected> = Vec::new();
    for p in out {
        let Some(w) = write
            .iter()
            .filter(|w| p.path.starts_with(w))
            .min_by_key(|w| w.components().count())
        else {
            continue;
        };
        for a in p.path.ancestors().skip(1) {
            if a == w.as_path() || !a.starts_with(w) {
                break;
            }
            all.push(Protected {
                path: a.to_path_buf(),
                pin: true,
                kind: DIR,
            });
        }
        all.push(p);
    }
    // A directory before what it holds (a prefix sorts first byte by byte,
    // which is cheaper than comparing by components); read-only wins over
    // a pin.
    all.sort_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
    all.dedup_by(|later, kept| {
        if later.path.as_os_str() == kept.path.as_os_str() {
            kept.pin &= later.pin;
            true
        } else {
            false
        }
    });
    all
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

    #[test]
    fn repositories_are_found_down_to_the_depth_and_what_holds_them_pinned() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let all = [
            "",
            "app",
            "packages/a",
            "x/y/z",
            "d1/d2/d3/d4",
            "d1/d2/d3/d4/d5",
            "node_modules/dep",
            "target/t",
        ];
        for rel in all {
            std::fs::create_dir_all(root.join(rel).join(".git")).unwrap();
            std::fs::write(root.join(rel).join(".git/config"), "").unwrap();
        }
        let p = protected(std::slice::from_ref(&root), &[]);
        let got: Vec<(String, bool)> = p
            .iter()
            .map(|p| {
                let rel = p.path.strip_prefix(&root).unwrap();
                (rel.to_string_lossy().into_owned(), p.pin)
            })
            .collect();
        let want: Vec<(String, bool)> = [
            (".git", true),
            (".git/config", false),
            (".git/hooks", false),
            ("app", true),
            ("app/.git", true),
            ("app/.git/config", false),
            ("app/.git/hooks", false),
            ("d1", true),
            ("d1/d2", true),
            ("d1/d2/d3", true),
            ("d1/d2/d3/d4", true),
            ("d1/d2/d3/d4/.git", true),
            ("d1/d2/d3/d4/.git/config", false),
            ("d1/d2/d3/d4/.git/hooks", false),
            ("packages", true),
            ("packages/a", true),
            ("packages/a/.git", true),
            ("packages/a/.git/config", false),
            ("packages/a/.git/hooks", false),
            ("x", true),
            ("x/y", true),
            ("x/y/z", true),
            ("x/y/z/.git", true),
            ("x/y/z/.git/config", false),
            ("x/y/z/.git/hooks", false),
        ]
        .iter()
        .map(|(p, pin)| (p.to_string(), *pin))
        .collect();
        assert_eq!(got, want);
        // The hooks directories were made, as `git init` makes them.
        assert!(root.join("x/y/z/.git/hooks").is_dir());
        assert!(!root.join("d1/d2/d3/d4/d5/.git/hooks").exists());
        // The look stops after its budget of entries.
        let mut found = Vec::new();
        let mut budget = 2;
        repositories(&root, &mut budget, &mut found);
        assert_eq!(budget, 0);
        assert!(found.len() <= 1, "{found:?}");
    }

    #[test]
    fn inside_is_by_components() {
        assert!(inside(Path::new("/a/b"), Path::new("/a")));
        assert!(inside(Path::new("/a"), Path::new("/a")));
        assert!(!inside(Path::new("/a-b"), Path::new("/a")));
    }
}
