//! The protected set of a `"full"` confinement (SPEC §8): the git
//! directories, submodules and `protect` entries inside the write trees
//! that a command may read but not change, found by walking the trees and
//! following what a symbolic link names, and the directories pinned so
//! none can be renamed away with a protection inside it.

use std::path::{Path, PathBuf};

use crate::process::confine::Protected;

/// Whether `path` is `tree` or lies below it (by components).
pub fn inside(path: &Path, tree: &Path) -> bool {
    path.starts_with(tree)
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

#[cfg(test)]
mod tests {
    use super::*;

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
