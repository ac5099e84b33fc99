//! The validators against an independent model of the contract's rules:
//! argv (NUL, no shell), refs, `since` dates, repository paths, env names,
//! labels, page windows and message clipping. Any panic is a bug.
#![no_main]

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use engine::errors::{clip, SHOWN_MAX};
use engine::git::validate::{resolve_repo_path, validate_ref, validate_since};
use engine::paging::Window;
use engine::policy::{check_argv, check_env, check_not_shell, label_for};
use libfuzzer_sys::fuzz_target;

/// A repository-like directory with a file, a directory and links in, out and in a loop.
fn repo() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("nlc-fuzz-repo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("src/sub")).unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::os::unix::fs::symlink("src", root.join("link-in")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("link-out")).unwrap();
        std::os::unix::fs::symlink("loop-b", root.join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", root.join("loop-b")).unwrap();
        std::os::unix::fs::symlink("../..", root.join("src/up-two")).unwrap();
        // libFuzzer ends with exit(): remove the fixture then.
        // SAFETY: registering a plain extern "C" function.
        unsafe { libc::atexit(remove_repo) };
        std::fs::canonicalize(&root).unwrap()
    })
}

extern "C" fn remove_repo() {
    let root = std::env::temp_dir().join(format!("nlc-fuzz-repo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(root);
}

fn ref_rule(t: &str) -> bool {
    let n = t.chars().count();
    (1..=200).contains(&n) && t.chars().all(|c| c.is_ascii_alphanumeric() || "._/^~@{}:+-".contains(c))
}

fn since_rule(t: &str) -> bool {
    let n = t.chars().count();
    (1..=64).contains(&n) && t.chars().all(|c| c.is_ascii_alphanumeric() || " :,.+-".contains(c))
}

fuzz_target!(|data: &[u8]| {
    let owned = String::from_utf8_lossy(data);
    let s: &str = &owned;
    let t = s.trim();

    // Refs: a leading "-" after trimming is refused first, then the character rule.
    match validate_ref(s) {
        Ok(v) => {
            assert_eq!(v, t);
            assert!(!t.starts_with('-') && ref_rule(t));
        }
        Err(e) => {
            if t.starts_with('-') {
                assert!(e.0.contains("must not start with \"-\""), "{}", e.0);
            } else {
                assert!(!ref_rule(t));
                assert!(e.0.contains("is not a valid git revision"), "{}", e.0);
            }
            // Bounded: the value is quoted cut to 80 characters, each escaped in at most 10.
            assert!(e.0.chars().count() < 80 * 10 + 400, "refusals stay short");
        }
    }

    // Dates: the character rule on the trimmed value.
    match validate_since(s) {
        Ok(v) => assert!(v == t && since_rule(t)),
        Err(e) => assert!(!since_rule(t) && e.0.contains("is not a valid date")),
    }

    // argv: entries split on U+0001; NUL refused first, then the shell check on argv[0].
    let argv: Vec<String> = s.split('\u{1}').map(String::from).collect();
    let nul = argv.iter().position(|a| a.contains('\0'));
    match check_argv(&argv) {
        Ok(()) => assert!(nul.is_none()),
        Err(e) => assert!(e.to_string().starts_with(&format!("argv[{}] contains a NUL", nul.unwrap()))),
    }
    let shell = argv[0].chars().any(|c| c.is_whitespace() || ";&|<>$`\n\r".contains(c));
    assert_eq!(check_not_shell(&argv[0]).is_err(), shell);
    let shell_msg = check_not_shell(&argv[0]).err().map(|e| e.to_string()).unwrap_or_default();
    // Bounded: a clipped argv[0], each character escaped in at most 10 ("\u{10ffff}").
    assert!(shell_msg.chars().count() < SHOWN_MAX * 10 + 400, "a shell refusal repeats at most a clipped argv[0]");

    // Labels: the base name and the arguments, cut to 60 characters plus "…".
    let label = label_for(None, &argv);
    assert!(label.chars().count() <= 61);
    assert!(label_for(Some(s), &argv).chars().count() <= s.chars().count().max(61));

    // Env: names non-empty without "=" or NUL, values without NUL.
    let env: Vec<(String, String)> = argv
        .chunks(2)
        .map(|p| (p[0].clone(), p.get(1).cloned().unwrap_or_default()))
        .collect();
    let env_ok = env
        .iter()
        .all(|(k, v)| !k.is_empty() && !k.contains('=') && !k.contains('\0') && !v.contains('\0'));
    assert_eq!(check_env(&env).is_ok(), env_ok);

    // Windows: any two doubles give a window the contract allows.
    if data.len() >= 16 {
        let o = f64::from_le_bytes(data[..8].try_into().unwrap());
        let l = f64::from_le_bytes(data[8..16].try_into().unwrap());
        let w = Window::new(Some(o), Some(l));
        assert!((1..=200_000).contains(&w.limit));
        if o.is_nan() || o <= 0.0 {
            assert_eq!(w.offset, 0);
        } else {
            assert_eq!(w.offset, o.floor() as u64);
        }
    }

    // Clipping: whole up to SHOWN_MAX characters, else cut with the length.
    let c = clip(s);
    if s.chars().count() <= SHOWN_MAX {
        assert_eq!(c, s);
    } else {
        assert!(c.starts_with(&s.chars().take(SHOWN_MAX).collect::<String>()));
        assert!(c.ends_with(&format!("…({} characters)", s.chars().count())));
    }

    // Repository paths: an accepted path is repository-relative, without "." or "..".
    let root = repo();
    if let Ok(rel) = resolve_repo_path(root, s) {
        assert!(!t.starts_with('-') && !t.is_empty() && !t.contains('\0'));
        if rel != "." {
            let p = Path::new(&rel);
            assert!(p.is_relative(), "{rel}");
            assert!(p.components().all(|c| matches!(c, Component::Normal(_))), "{rel}");
            assert!(!rel.ends_with('/'));
        }
    }
});
