//! Finding a bare `argv[0]` through `PATH` and `PATHEXT` (SPEC §14), the
//! way Windows' own search does — except that the current directory is never
//! searched: a program dropped into the command's cwd must not win over the
//! one on `PATH`.

use std::path::{Path, PathBuf};

/// `PATHEXT` when the environment has none.
pub const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The file `program` names: a name holding a separator or a drive (`\`,
/// `/`, `:`) is taken as a path; a bare name is looked up in each directory
/// of `path` (`;`-separated) in order. A name with an extension is tried as
/// it is; a name without one is tried with each extension of `pathext` in
/// order. `is_file` says whether a candidate exists as a file.
pub fn find_program(
    program: &str,
    path: Option<&str>,
    pathext: Option<&str>,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    let exts: Vec<&str> = pathext
        .unwrap_or(DEFAULT_PATHEXT)
        .split(';')
        .map(str::trim)
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .collect();
    let has_ext = Path::new(program).extension().is_some();
    let candidates = |base: PathBuf| -> Option<PathBuf> {
        if has_ext {
            return is_file(&base).then_some(base);
        }
        exts.iter()
            .map(|e| {
                let mut s = base.clone().into_os_string();
                s.push(e);
                PathBuf::from(s)
            })
            .find(|c| is_file(c))
    };
    if program.contains(['\\', '/', ':']) {
        return candidates(PathBuf::from(program));
    }
    path?
        .split(';')
        .map(|d| d.trim().trim_matches('"'))
        .filter(|d| !d.is_empty())
        .find_map(|d| candidates(Path::new(d).join(program)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn fs(files: &[&str]) -> impl Fn(&Path) -> bool {
        let set: HashSet<PathBuf> = files.iter().map(PathBuf::from).collect();
        move |p| set.contains(p)
    }

    #[test]
    fn bare_names_follow_path_then_pathext_order() {
        // Candidates carry the extension as PATHEXT spells it (Windows matches
        // names without regard to case).
        let files = fs(&[
            "b/npm.CMD",
            "b/npm.EXE",
            "c/npm.EXE",
            "c/git.EXE",
            "b/npm.exe",
        ]);
        let path = Some("a;b;c");
        assert_eq!(
            find_program("npm", path, None, &files),
            Some(PathBuf::from("b/npm.EXE"))
        );
        assert_eq!(
            find_program("npm", path, Some(".CMD;.EXE"), &files),
            Some(PathBuf::from("b/npm.CMD"))
        );
        assert_eq!(
            find_program("git", path, None, &files),
            Some(PathBuf::from("c/git.EXE"))
        );
        assert_eq!(
            find_program("npm.exe", path, None, &files),
            Some(PathBuf::from("b/npm.exe"))
        );
        assert_eq!(find_program("nope", path, None, &files), None);
        assert_eq!(find_program("npm", None, None, &files), None);
    }

    #[test]
    fn paths_are_not_searched_and_the_cwd_never_is() {
        let files = fs(&["npm.CMD", "d/x.BAT"]);
        assert_eq!(find_program("npm", Some("a"), None, &files), None);
        assert_eq!(
            find_program("d/x", Some("a"), None, &files),
            Some(PathBuf::from("d/x.BAT"))
        );
        assert_eq!(find_program("d/y", Some("d"), None, &files), None);
    }
}
