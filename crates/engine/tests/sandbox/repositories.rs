//! Every repository of a write tree, down to the documented depth: a
//! directory holding one cannot be renamed away, protected paths that are
//! links are protected where they point, a path of another kind by the
//! start fails it, and git work goes on in each.

use std::path::Path;

use neurolink_commands_engine::policy::confine::{ConfinementInput, ReadInput};
use neurolink_commands_engine::process::confine::Level;

use super::git::{add_submodule, git, repo, FSMONITOR, HOOK};
use super::{confined, fixture, landlock_only, sandbox_here};

/// A repository at `dir` (made with its parents) with one commit.
fn repo_in(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    repo(dir);
}

/// A write tree holding repositories at every depth the sandbox looks at:
/// one at the top with a submodule at `libs/sub`, `app` (a child),
/// `packages/a` (two levels down), `x/y/z` (three). Returns the
/// submodule's upstream, which must outlive the tree.
fn repositories(root: &Path) -> tempfile::TempDir {
    let upstream = tempfile::tempdir().unwrap();
    repo(upstream.path());
    repo(root);
    add_submodule(root, upstream.path(), "libs/sub");
    for d in ["app", "packages/a", "x/y/z"] {
        repo_in(&root.join(d));
    }
    upstream
}

/// Lays out a fresh write tree; returns what must outlive it.
type Layout = fn(&Path) -> Option<tempfile::TempDir>;

/// Whether a `PLANTED` file exists anywhere in `dir`.
fn planted(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        e.file_name() == "PLANTED"
            || (e.file_type().unwrap().is_dir() && e.file_name() != ".git" && planted(&e.path()))
    })
}

/// The user's own git, unconfined, in each of `dirs` (those that are
/// repositories): a status and a commit.
fn users_git(root: &Path, dirs: &[&str]) {
    for d in dirs {
        let dir = root.join(d);
        if dir.is_dir() {
            git(&dir, &["status"]);
            git(&dir, &["commit", "-q", "--allow-empty", "-m", "user"]);
        }
    }
}

/// In a fresh tree laid out by `layout`, `plant` run confined fails with
/// `phrase`, and the user's git in `dirs` afterwards runs nothing planted.
/// Control: in another fresh tree the same `plant` at the `"landlock"`
/// level (no view, so nothing protected) succeeds, and the user's git runs
/// what it planted.
async fn refused_with_control(layout: Layout, plant: &str, phrase: &str, dirs: &[&str]) {
    let f = fixture();
    let _keep = layout(f.root());
    let (st, out) = f.run(plant, confined()).await;
    assert_ne!(st.exit_code, Some(0), "{plant}: {out}");
    assert!(out.contains(phrase), "{plant}: {out}");
    users_git(f.root(), dirs);
    assert!(!planted(f.root()), "{plant}: {out}");
    let c = fixture();
    let _keep = layout(c.root());
    let (st, out) = c.run(plant, landlock_only()).await;
    assert_eq!(st.exit_code, Some(0), "control {plant}: {out}");
    users_git(c.root(), dirs);
    assert!(planted(c.root()), "control {plant}: nothing ran");
}

const BUSY: &str = "Device or resource busy";

const READ_ONLY: &str = "Read-only file system";

/// A directory holding a protected path — a child repository's, a deeper
/// one's, a submodule's checkout, a submodule's git directory — cannot be
/// renamed away to leave a new `.git` (or gitfile) at its old name: every
/// directory from the write tree's top down to each protected path is a
/// mount point of itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_holding_a_repository_cannot_be_renamed_away() {
    if !sandbox_here() {
        return;
    }
    let dirs = ["", "app", "packages/a", "x/y/z", "libs/sub"];
    let layout: Layout = |r| Some(repositories(r));
    let ways = [
        format!("mv app app2 && mkdir app && git -C app init -q && {FSMONITOR} >> app/.git/config"),
        format!("mv app app2 && mkdir app && cp -r app2/.git evil && {FSMONITOR} >> evil/config && echo 'gitdir: ../evil' > app/.git"),
        format!("mv packages p2 && mkdir -p packages/a && git -C packages/a init -q && {FSMONITOR} >> packages/a/.git/config"),
        format!("mv packages/a packages/a2 && mkdir packages/a && git -C packages/a init -q && {FSMONITOR} >> packages/a/.git/config"),
        format!("mv x x2 && mkdir -p x/y/z && git -C x/y/z init -q && {FSMONITOR} >> x/y/z/.git/config"),
        format!("mv libs libs2 && mkdir -p libs/sub && git -C libs/sub init -q && {FSMONITOR} >> libs/sub/.git/config"),
        format!("mv libs/sub libs/sub2 && mkdir libs/sub && git -C libs/sub init -q && {FSMONITOR} >> libs/sub/.git/config"),
        format!("mv .git/modules/libs/sub .git/modules/libs/sub2 && cp -r .git/modules/libs/sub2 .git/modules/libs/sub && {FSMONITOR} >> .git/modules/libs/sub/config"),
        format!("mv .git/modules .git/m2 && cp -r .git/m2 .git/modules && {FSMONITOR} >> .git/modules/libs/sub/config"),
    ];
    for plant in &ways {
        refused_with_control(layout, plant, BUSY, &dirs).await;
    }
}

/// Repositories two and three levels down are protected like a child's: their
/// hooks and config are read-only and their `.git` pinned. Control in the
/// same confined run: a repository five levels down (past the depth looked
/// at) and one inside `node_modules` (not entered) stay writable, as
/// documented.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeper_repositories_are_protected_down_to_the_documented_depth() {
    if !sandbox_here() {
        return;
    }
    let dirs = ["packages/a", "x/y/z"];
    let layout: Layout = |r| Some(repositories(r));
    for d in dirs {
        for plant in [
            format!(
                "printf '{HOOK}' > {d}/.git/hooks/pre-commit && chmod +x {d}/.git/hooks/pre-commit"
            ),
            format!("{FSMONITOR} >> {d}/.git/config"),
        ] {
            refused_with_control(layout, &plant, READ_ONLY, &dirs).await;
        }
        let renamed =
            format!("mv {d}/.git {d}/g2 && git -C {d} init -q && {FSMONITOR} >> {d}/.git/config");
        refused_with_control(layout, &renamed, BUSY, &dirs).await;
    }
    // Past the limits, in a confined run.
    let f = fixture();
    let _keep = repositories(f.root());
    let deep = "d1/d2/d3/d4/d5";
    let modules = "node_modules/dep";
    repo_in(&f.root().join(deep));
    repo_in(&f.root().join(modules));
    let script = format!(
        "{FSMONITOR} >> {deep}/.git/config && {FSMONITOR} >> {modules}/.git/config && echo planted; {FSMONITOR} >> packages/a/.git/config"
    );
    let (st, out) = f.run(&script, confined()).await;
    assert_ne!(st.exit_code, Some(0));
    assert!(
        out.starts_with("planted\n") && out.contains(READ_ONLY),
        "{out}"
    );
    users_git(f.root(), &["packages/a"]);
    assert!(!planted(f.root()));
    users_git(f.root(), &[deep, modules]);
    assert!(f.root().join(deep).join("PLANTED").exists());
    assert!(f.root().join(modules).join("PLANTED").exists());
}

/// A protected path that is a symbolic link is pinned (it cannot be removed
/// or replaced) and what it names inside the write tree is protected in its
/// place: `.git/hooks` linked to a directory of the tree, `.git` linked to
/// a git directory elsewhere in the tree, `.git/config` linked to a file of
/// the tree, and `.git/hooks` or `.git` linked to a directory that does not
/// exist yet (made, empty and read-only, at the start).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_paths_that_are_links_cannot_be_planted_through() {
    if !sandbox_here() {
        return;
    }
    let hooks_link: Layout = |r| {
        repo(r);
        std::fs::remove_dir_all(r.join(".git/hooks")).unwrap();
        std::fs::create_dir(r.join("shared-hooks")).unwrap();
        std::os::unix::fs::symlink("../shared-hooks", r.join(".git/hooks")).unwrap();
        None
    };
    let git_link: Layout = |r| {
        repo_in(&r.join("app"));
        std::fs::create_dir(r.join("store")).unwrap();
        std::fs::rename(r.join("app/.git"), r.join("store/app.git")).unwrap();
        std::os::unix::fs::symlink("../store/app.git", r.join("app/.git")).unwrap();
        None
    };
    let config_link: Layout = |r| {
        repo(r);
        std::fs::rename(r.join(".git/config"), r.join("cfg")).unwrap();
        std::os::unix::fs::symlink("../cfg", r.join(".git/config")).unwrap();
        None
    };
    let dangling: Layout = |r| {
        repo(r);
        std::fs::remove_dir_all(r.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink("../later-hooks", r.join(".git/hooks")).unwrap();
        None
    };
    let dangling_git: Layout = |r| {
        repo_in(&r.join("app"));
        std::fs::create_dir(r.join("store")).unwrap();
        std::fs::remove_dir_all(r.join("app/.git")).unwrap();
        std::os::unix::fs::symlink("../store/app.git", r.join("app/.git")).unwrap();
        None
    };
    let hook = |d: &str| format!("printf '{HOOK}' > {d}/pre-commit && chmod +x {d}/pre-commit");
    let cases: Vec<(Layout, String, &str)> = vec![
        (hooks_link, hook("shared-hooks"), READ_ONLY),
        (hooks_link, format!("rm .git/hooks && mkdir .git/hooks && {}", hook(".git/hooks")), BUSY),
        (hooks_link, format!("mv shared-hooks sh2 && mkdir shared-hooks && {}", hook("shared-hooks")), BUSY),
        (git_link, hook("store/app.git/hooks"), READ_ONLY),
        (git_link, format!("{FSMONITOR} >> store/app.git/config"), READ_ONLY),
        (git_link, format!("rm app/.git && git -C app init -q && {FSMONITOR} >> app/.git/config"), BUSY),
        (git_link, format!("mv store store2 && mkdir store && cp -r store2/app.git store/ && {FSMONITOR} >> store/app.git/config"), BUSY),
        (git_link, format!("mv store/app.git store/a2 && cp -r store/a2 store/app.git && {FSMONITOR} >> store/app.git/config"), BUSY),
        (config_link, format!("{FSMONITOR} >> cfg"), READ_ONLY),
        (config_link, format!("rm .git/config && cp cfg .git/config && {FSMONITOR} >> .git/config"), BUSY),
        (dangling, format!("mkdir -p later-hooks && {}", hook("later-hooks")), READ_ONLY),
        (dangling_git, format!("git init -q t && {FSMONITOR} >> t/.git/config && mv -T t/.git store/app.git"), BUSY),
    ];
    for (layout, plant, phrase) in &cases {
        refused_with_control(*layout, plant, phrase, &["", "app"]).await;
    }
}

/// Add, commit, branch, checkout, merge, tag and stash keep working,
/// confined, in the repository at the top, a child, repositories two and
/// three levels down, and a submodule (its checkout on a branch of its own);
/// so does `git mv` within a repository's directory. With either read set,
/// the directory holding a repository stays pinned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_git_work_in_every_repository_of_the_tree() {
    if !sandbox_here() {
        return;
    }
    // With each read set: the protected paths are cloned from the view,
    // whose base differs (a tmpfs, or the clone of `/`).
    let all = Some(ConfinementInput {
        read: Some(ReadInput::All),
        ..Default::default()
    });
    for confine in [confined(), all] {
        let f = fixture();
        let _keep = repositories(f.root());
        let work = "G='git -c user.name=t -c user.email=t@t'; $G checkout -q -b w && echo b > b && $G add b && $G commit -qm two && $G branch x && $G checkout -q x && echo c > c && $G add c && $G commit -qm three && $G checkout -q w && $G merge -q x && $G tag v1 && echo d > d && $G add d && $G stash -q && $G stash pop -q && $G mv b b2 && $G commit -qam four && $G log --oneline | wc -l";
        let script = ["", "app", "packages/a", "x/y/z", "libs/sub"]
            .iter()
            .map(|d| format!("(cd ./{d} && {work}) &&"))
            .collect::<Vec<_>>()
            .join(" ")
            + " echo ok";
        let script = script + "; mv packages p2";
        let (st, out) = f.run(&script, confine).await;
        assert_eq!(
            (st.exit_code, out.as_str()),
            (
                Some(1),
                "5\n4\n4\n4\n4\nok\nmv: cannot move 'packages' to 'p2': Device or resource busy\n"
            ),
            "{script}"
        );
    }
}

/// The child checks each protected path's file type against what the
/// parent found: a path replaced by another kind between the look and the
/// view's mounts (here a directory found, a link there by the start) fails
/// the start with `ESTALE` instead of pinning the link and leaving what it
/// names writable. Control: the same view with the type it has starts.
#[test]
fn a_protected_path_of_another_kind_by_the_start_fails_it() {
    use neurolink_commands_engine::process::plan::{Grant, Plan, Protected};
    use neurolink_commands_engine::process::{sandbox::View, vfork};
    use std::os::fd::AsFd;
    use std::path::PathBuf;
    if !sandbox_here() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir(root.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", root.join(".git/hooks")).unwrap();
    let start = |kind: u32| {
        let plan = Plan {
            system: ["/usr", "/lib", "/lib64", "/bin"]
                .iter()
                .filter(|t| Path::new(t).exists())
                .map(|t| (PathBuf::from(t), Grant::Read))
                .collect(),
            rules: vec![(root.clone(), Grant::Write)],
            private_tmp: None,
            network: false,
            protect: vec![Protected {
                path: root.join(".git/hooks"),
                pin: false,
                kind,
            }],
            level: Level::Full,
        };
        let dir = std::fs::File::open(&root).unwrap();
        let view = View::prepare(&plan, dir.as_fd(), None).unwrap();
        vfork::probe(&view, dir.as_fd())
    };
    let e = start(libc::S_IFDIR).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ESTALE), "{e}");
    start(libc::S_IFLNK).unwrap();
}
