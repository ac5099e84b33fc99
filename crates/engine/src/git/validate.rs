//! Validators for the values a model hands to the git tools.
//!
//! Every value ends up as one argv element of a `git` invocation. The rules
//! here make sure a value can only ever be read by git as a value — a
//! revision, a date, or a path inside the repository — and never as an
//! option. The character sets are checked by hand (no regex engine).

#[cfg(not(windows))]
use crate::platform::OsStrExt;
#[cfg(not(windows))]
use std::fs;
#[cfg(not(windows))]
use std::io;
#[cfg(not(windows))]
use std::path::Component;
use std::path::{Path, PathBuf};

use super::GitRefusal;

/// The longest revision accepted, in characters.
pub const MAX_REF_CHARS: usize = 200;

/// The longest `since` date accepted, in characters.
pub const MAX_SINCE_CHARS: usize = 64;

/// How many symbolic links one path resolution may follow (as Linux does).
#[cfg(not(windows))]
const MAX_SYMLINK_HOPS: u32 = 40;

/// The punctuation a revision may contain besides ASCII letters and digits.
const REF_PUNCTUATION: &str = "._/^~@{}:+-";

/// The punctuation a `since` date may contain besides ASCII letters and digits.
const SINCE_PUNCTUATION: &str = " :,.+-";

/// An example list shown in refusals, so the message names the fix.
const REF_EXAMPLES: &str = "e.g. \"main\", \"HEAD~2\", \"v1.0\", \"main^{tree}\" or a commit hash";

/// Show a value inside a message: escaped, quoted, and cut after 80 characters.
pub(crate) fn quote(value: &str) -> String {
    const LIMIT: usize = 80;
    if value.chars().count() <= LIMIT {
        format!("{value:?}")
    } else {
        let head: String = value.chars().take(LIMIT).collect();
        format!("{head:?}… ({} characters)", value.chars().count())
    }
}

/// Whether `c` may appear in a revision: `[A-Za-z0-9._/^~@{}:+-]`.
pub fn is_ref_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || REF_PUNCTUATION.contains(c)
}

/// Whether `c` may appear in a `since` date: `[A-Za-z0-9 :,.+-]`.
pub fn is_since_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || SINCE_PUNCTUATION.contains(c)
}

/// Refuse a trimmed value that git could read as an option.
fn refuse_leading_dash(
    field: &str,
    original: &str,
    trimmed: &str,
    fix: &str,
) -> Result<(), GitRefusal> {
    if trimmed.starts_with('-') {
        return Err(GitRefusal(format!(
            "{field} {} must not start with \"-\" (git would read it as an option); {fix}",
            quote(original)
        )));
    }
    Ok(())
}

/// Validate a revision named `field` ("ref", "base", "head"): trimmed, it must
/// not start with `-` and must match `^[A-Za-z0-9._/^~@{}:+-]{1,200}$`.
/// Returns the trimmed revision.
pub fn validate_ref_field(field: &str, input: &str) -> Result<String, GitRefusal> {
    let trimmed = input.trim();
    refuse_leading_dash(
        field,
        input,
        trimmed,
        &format!("give a git revision, {REF_EXAMPLES}"),
    )?;
    let count = trimmed.chars().count();
    if count == 0 || count > MAX_REF_CHARS || !trimmed.chars().all(is_ref_char) {
        return Err(GitRefusal(format!(
            "{field} {} is not a valid git revision; use 1 to {MAX_REF_CHARS} characters from \
             A-Z a-z 0-9 and . _ / ^ ~ @ {{ }} : + - ({REF_EXAMPLES})",
            quote(input)
        )));
    }
    Ok(trimmed.to_string())
}

/// Validate a revision (see [`validate_ref_field`]); messages call it "ref".
pub fn validate_ref(input: &str) -> Result<String, GitRefusal> {
    validate_ref_field("ref", input)
}

/// Validate a `since` date: trimmed, it must match `^[A-Za-z0-9 :,.+-]{1,64}$`.
/// Returns the trimmed date. It is passed as `--since=<date>`, so a leading
/// `-` cannot become an option and is allowed by the character set.
pub fn validate_since(input: &str) -> Result<String, GitRefusal> {
    let trimmed = input.trim();
    let count = trimmed.chars().count();
    if count == 0 || count > MAX_SINCE_CHARS || !trimmed.chars().all(is_since_char) {
        return Err(GitRefusal(format!(
            "since {} is not a valid date; use 1 to {MAX_SINCE_CHARS} characters from \
             A-Z a-z 0-9, space and : , . + - (e.g. \"2024-01-31\", \"2 weeks ago\", \
             \"2024-01-31 12:00\")",
            quote(input)
        )));
    }
    Ok(trimmed.to_string())
}

/// Resolve `path` like realpath(3), but tolerate components that do not
/// exist: an existing component is followed through its symbolic links, a
/// missing one is appended as is, and `..` removes the last resolved
/// component (so `missing/..` is lexically nothing, as git normalises it).
/// `path` must be absolute. (Windows: `super::windows::resolve_lenient`.)
#[cfg(not(windows))]
fn resolve_lenient(path: &Path, hops: &mut u32) -> io::Result<PathBuf> {
    let mut resolved = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::RootDir => resolved = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Prefix(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "path prefixes are not supported",
                ))
            }
            Component::Normal(name) => {
                let next = resolved.join(name);
                match fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        if *hops == 0 {
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidInput,
                                "too many levels of symbolic links",
                            ));
                        }
                        *hops -= 1;
                        let target = fs::read_link(&next)?;
                        // A relative target is relative to the link's directory.
                        let base = resolved.join(target);
                        resolved = resolve_lenient(&base, hops)?;
                    }
                    // Existing (not a link) or missing: keep the name as is.
                    _ => resolved = next,
                }
            }
        }
    }
    Ok(resolved)
}

/// Resolve `input` (relative to `real_root`, or absolute) to a path relative
/// to the repository root: `"."` for the root itself, otherwise components
/// joined by `/` with no `.` or `..`.
///
/// Existing paths are followed through their symbolic links (as realpath);
/// a missing path is resolved through its nearest existing ancestor, so a
/// deleted file stays askable. The result must lie inside the (canonical)
/// root, or the path is refused with a message naming the real root and the
/// resolved path. A path that, trimmed, is empty or starts with `-`, or that
/// contains a NUL byte, is refused too.
pub fn resolve_repo_path(real_root: &Path, input: &str) -> Result<String, GitRefusal> {
    const FIX: &str =
        "give a path inside the repository, relative to its root (e.g. \"src/lib.rs\")";
    let trimmed = input.trim();
    refuse_leading_dash("path", input, trimmed, FIX)?;
    if trimmed.is_empty() {
        return Err(GitRefusal(format!("path must not be empty; {FIX}")));
    }
    if trimmed.contains('\0') {
        return Err(GitRefusal(format!(
            "path {} must not contain a NUL character; {FIX}",
            quote(input)
        )));
    }
    // git reads a leading ':' as pathspec magic (":(top)", ":/x"), which can
    // reach past the root when the root is a subdirectory of a repository.
    if trimmed.starts_with(':') {
        return Err(GitRefusal(format!(
            "path {} must not start with \":\" (git would read it as pathspec magic); {FIX}",
            quote(input)
        )));
    }
    #[cfg(not(windows))]
    let root = fs::canonicalize(real_root).unwrap_or_else(|_| real_root.to_path_buf());
    #[cfg(windows)]
    let root = super::windows::canonical(real_root).unwrap_or_else(|_| real_root.to_path_buf());
    let candidate = if Path::new(trimmed).is_absolute() {
        PathBuf::from(trimmed)
    } else {
        root.join(trimmed)
    };
    #[cfg(windows)]
    let resolved = super::windows::resolve_lenient(&candidate);
    #[cfg(not(windows))]
    let resolved = {
        let mut hops = MAX_SYMLINK_HOPS;
        resolve_lenient(&candidate, &mut hops)
    };
    let resolved = resolved.map_err(|err| {
        GitRefusal(format!(
            "path {} could not be resolved ({err}); {FIX}",
            quote(input)
        ))
    })?;
    let relative = match resolved.strip_prefix(&root) {
        Ok(relative) => relative,
        Err(_) => {
            // Quoted as the command tools quote a cwd and its root.
            return Err(GitRefusal(format!(
                "path {} resolves to {:?}, which is outside the permitted root {:?}; {FIX}",
                quote(input),
                resolved,
                root
            )));
        }
    };
    if relative.as_os_str().is_empty() {
        return Ok(".".to_string());
    }
    // On Windows the components are joined by `/`, as git writes paths.
    #[cfg(windows)]
    let text = super::windows::slashed(relative);
    #[cfg(not(windows))]
    let text = std::str::from_utf8(relative.as_os_str().as_bytes())
        .ok()
        .map(str::to_string);
    text.ok_or_else(|| {
        GitRefusal(format!(
            "path {} resolves to {:?}, which is not valid UTF-8; {FIX}",
            quote(input),
            resolved
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::fs::symlink;

    fn refused(result: Result<String, GitRefusal>) -> String {
        match result {
            Ok(value) => panic!("expected a refusal, got Ok({value:?})"),
            Err(refusal) => refusal.0,
        }
    }

    #[test]
    fn refs_accepted() {
        for (input, want) in [
            ("main", "main"),
            ("HEAD~2", "HEAD~2"),
            ("main^{tree}", "main^{tree}"),
            ("v1.0", "v1.0"),
            ("@{upstream}", "@{upstream}"),
            ("origin/feature-x", "origin/feature-x"),
            ("HEAD:src/lib.rs", "HEAD:src/lib.rs"),
            ("main..feature", "main..feature"),
            ("  main  ", "main"),
            (
                "0123456789abcdef0123456789abcdef01234567",
                "0123456789abcdef0123456789abcdef01234567",
            ),
        ] {
            assert_eq!(validate_ref(input).unwrap(), want, "input {input:?}");
        }
        let longest = "a".repeat(200);
        assert_eq!(validate_ref(&longest).unwrap(), longest);
    }

    #[test]
    fn refs_starting_with_dash_refused() {
        for input in ["--output=/tmp/x", "-x", " -x", "\t--all", "-"] {
            let message = refused(validate_ref(input));
            assert!(
                message.contains("must not start with \"-\""),
                "{input:?}: {message}"
            );
            assert!(message.contains("HEAD~2"), "names the fix: {message}");
        }
    }

    #[test]
    fn refs_with_bad_characters_refused() {
        for input in [
            "main; rm -rf /",
            "a b",
            "main$(id)",
            "x|y",
            "",
            "   ",
            "ma\nin",
            "é",
        ] {
            let message = refused(validate_ref(input));
            assert!(
                message.contains("not a valid git revision"),
                "{input:?}: {message}"
            );
            assert!(
                message.contains("1 to 200 characters"),
                "names the fix: {message}"
            );
        }
        let message = refused(validate_ref(&"a".repeat(201)));
        assert!(message.contains("not a valid git revision"), "{message}");
        assert!(message.contains("201 characters"), "{message}");
    }

    #[test]
    fn ref_field_name_in_message() {
        let message = refused(validate_ref_field("base", "-x"));
        assert!(message.starts_with("base \"-x\""), "{message}");
    }

    #[test]
    fn since_rules() {
        for (input, want) in [
            ("2024-01-31", "2024-01-31"),
            ("2 weeks ago", "2 weeks ago"),
            ("2024-01-31 12:00:00 +0100", "2024-01-31 12:00:00 +0100"),
            ("Jan 5, 2024", "Jan 5, 2024"),
            (" yesterday ", "yesterday"),
        ] {
            assert_eq!(validate_since(input).unwrap(), want);
        }
        assert_eq!(validate_since(&"1".repeat(64)).unwrap(), "1".repeat(64));
        for input in ["", "  ", "1 day; rm -rf /", "$(date)", "a/b", "a_b", "x\ny"] {
            let message = refused(validate_since(input));
            assert!(message.contains("not a valid date"), "{input:?}: {message}");
            assert!(message.contains("2 weeks ago"), "names the fix: {message}");
        }
        assert!(refused(validate_since(&"1".repeat(65))).contains("1 to 64 characters"));
    }

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap().join("repo");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.rs"), "fn main() {}\n").unwrap();
        (dir, root)
    }

    #[test]
    fn paths_inside_are_relative() {
        let (_dir, root) = repo();
        assert_eq!(resolve_repo_path(&root, "src/a.rs").unwrap(), "src/a.rs");
        assert_eq!(resolve_repo_path(&root, " src/a.rs ").unwrap(), "src/a.rs");
        assert_eq!(
            resolve_repo_path(&root, "src/../src/a.rs").unwrap(),
            "src/a.rs"
        );
        assert_eq!(
            resolve_repo_path(&root, "./src/./a.rs").unwrap(),
            "src/a.rs"
        );
        assert_eq!(resolve_repo_path(&root, "src/").unwrap(), "src");
        assert_eq!(resolve_repo_path(&root, ".").unwrap(), ".");
        assert_eq!(resolve_repo_path(&root, "src/..").unwrap(), ".");
        let absolute = root.join("src/a.rs");
        assert_eq!(
            resolve_repo_path(&root, absolute.to_str().unwrap()).unwrap(),
            "src/a.rs"
        );
    }

    #[test]
    fn deleted_paths_stay_askable() {
        let (_dir, root) = repo();
        assert_eq!(
            resolve_repo_path(&root, "src/deleted.rs").unwrap(),
            "src/deleted.rs"
        );
        assert_eq!(
            resolve_repo_path(&root, "gone/dir/file.txt").unwrap(),
            "gone/dir/file.txt"
        );
        assert_eq!(
            resolve_repo_path(&root, "gone/../src/a.rs").unwrap(),
            "src/a.rs"
        );
        // A file used as a directory does not exist either.
        assert_eq!(
            resolve_repo_path(&root, "src/a.rs/x").unwrap(),
            "src/a.rs/x"
        );
    }

    #[test]
    fn paths_outside_refused() {
        let (_dir, root) = repo();
        for input in [
            "../../etc/passwd",
            "/etc/passwd",
            "..",
            "src/../../x",
            "gone/../../x",
            "gone/../../../../../../../../etc/passwd",
        ] {
            let message = refused(resolve_repo_path(&root, input));
            assert!(
                message.contains("outside the permitted root"),
                "{input:?}: {message}"
            );
            assert!(
                message.contains(&root.display().to_string()),
                "names the root: {message}"
            );
            assert!(message.contains("src/lib.rs"), "names the fix: {message}");
        }
        let message = refused(resolve_repo_path(&root, "/etc/passwd"));
        assert!(
            message.contains("resolves to \"/etc/passwd\","),
            "{message}"
        );
    }

    #[test]
    fn paths_with_dash_or_empty_refused() {
        let (_dir, root) = repo();
        for input in ["-x", " -x", "--output=/tmp/x"] {
            let message = refused(resolve_repo_path(&root, input));
            assert!(message.contains("must not start with \"-\""), "{message}");
        }
        assert!(refused(resolve_repo_path(&root, "  ")).contains("must not be empty"));
        assert!(refused(resolve_repo_path(&root, "a\0b")).contains("NUL"));
    }

    #[test]
    fn symlinks_are_followed() {
        let (dir, root) = repo();
        let outside = fs::canonicalize(dir.path()).unwrap().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret"), "s").unwrap();
        symlink(&outside, root.join("escape")).unwrap();
        symlink("../outside/secret", root.join("secret-link")).unwrap();
        symlink("/nonexistent-target-dir/x", root.join("dangling")).unwrap();
        symlink("src", root.join("src-alias")).unwrap();
        symlink("loop-b", root.join("loop-a")).unwrap();
        symlink("loop-a", root.join("loop-b")).unwrap();

        for input in [
            "escape",
            "escape/secret",
            "escape/missing.txt",
            "secret-link",
            "dangling",
        ] {
            let message = refused(resolve_repo_path(&root, input));
            assert!(
                message.contains("outside the permitted root"),
                "{input:?}: {message}"
            );
            assert!(
                message.contains(&outside.display().to_string()) || input == "dangling",
                "{message}"
            );
        }
        // gone/.. is lexically nothing, but the link after it is still followed.
        let message = refused(resolve_repo_path(&root, "gone/../escape/secret"));
        assert!(message.contains("outside the permitted root"), "{message}");

        assert_eq!(
            resolve_repo_path(&root, "src-alias/a.rs").unwrap(),
            "src/a.rs"
        );
        assert_eq!(
            resolve_repo_path(&root, "src-alias/new.rs").unwrap(),
            "src/new.rs"
        );
        let message = refused(resolve_repo_path(&root, "loop-a"));
        assert!(message.contains("could not be resolved"), "{message}");
    }

    #[test]
    fn root_given_through_a_symlink() {
        let (dir, root) = repo();
        let alias = dir.path().join("alias");
        symlink(&root, &alias).unwrap();
        assert_eq!(resolve_repo_path(&alias, "src/a.rs").unwrap(), "src/a.rs");
        let through_alias = alias.join("src/a.rs");
        assert_eq!(
            resolve_repo_path(&alias, through_alias.to_str().unwrap()).unwrap(),
            "src/a.rs"
        );
    }

    /// A strategy for characters a revision may contain.
    fn ref_char() -> impl Strategy<Value = char> {
        let set: Vec<char> = ('a'..='z')
            .chain('A'..='Z')
            .chain('0'..='9')
            .chain(REF_PUNCTUATION.chars())
            .collect();
        proptest::sample::select(set)
    }

    proptest! {
        // Failures are shrunk and reported, not written next to the crate.
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn any_leading_dash_is_refused(
            pad_left in "[ \t\r\n]{0,3}",
            rest in any::<String>(),
            pad_right in "[ \t]{0,3}",
        ) {
            let input = format!("{pad_left}-{rest}{pad_right}");
            prop_assume!(input.trim().starts_with('-'));
            let message = refused(validate_ref(&input));
            prop_assert!(message.contains("must not start with \"-\""));
            let dir = tempfile::tempdir().unwrap();
            let message = refused(resolve_repo_path(dir.path(), &input));
            prop_assert!(message.contains("must not start with \"-\""));
        }

        #[test]
        fn any_char_outside_the_set_is_refused(
            head in proptest::collection::vec(ref_char(), 1..20),
            bad in any::<char>(),
            tail in proptest::collection::vec(ref_char(), 1..20),
        ) {
            prop_assume!(!is_ref_char(bad));
            let head: String = head.into_iter().collect();
            let tail: String = tail.into_iter().collect();
            let input = format!("{head}{bad}{tail}");
            let message = refused(validate_ref(&input));
            prop_assert!(
                message.contains("not a valid git revision") || message.contains("must not start with")
            );
        }

        #[test]
        fn any_string_of_the_set_is_accepted(chars in proptest::collection::vec(ref_char(), 1..=200)) {
            let input: String = chars.into_iter().collect();
            prop_assume!(!input.starts_with('-'));
            prop_assert_eq!(validate_ref(&input).unwrap(), input);
        }

        #[test]
        fn since_outside_the_set_is_refused(
            head in "[a-z0-9]{1,10}",
            bad in any::<char>(),
            tail in "[a-z0-9]{1,10}",
        ) {
            prop_assume!(!is_since_char(bad));
            let input = format!("{head}{bad}{tail}");
            prop_assert!(refused(validate_since(&input)).contains("not a valid date"));
        }
    }

    #[test]
    fn pathspec_magic_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for p in [":(top)", ":/secret.txt", " :!x"] {
            let e = resolve_repo_path(dir.path(), p).unwrap_err().to_string();
            assert!(e.contains("pathspec magic"), "{p}: {e}");
        }
    }
}
