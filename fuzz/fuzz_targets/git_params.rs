//! A model's params for every git tool (any JSON): building the args never
//! panics, and an accepted call never lets a value become an option: every
//! argument that starts with "-" before "--" is one the builder itself adds,
//! and "--" is followed by exactly one repository-relative path.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use engine::git::{tool_args, GitTool};
use libfuzzer_sys::fuzz_target;

fn repo() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("nlc-fuzz-git-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "a").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        // libFuzzer ends with exit(): remove the fixture then.
        // SAFETY: registering a plain extern "C" function.
        unsafe { libc::atexit(remove_repo) };
        std::fs::canonicalize(&root).unwrap()
    })
}

extern "C" fn remove_repo() {
    let root = std::env::temp_dir().join(format!("nlc-fuzz-git-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(root);
}

const OWN_FLAGS: &[&str] = &[
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--oneline",
    "--pretty=fuller",
    "--stat",
    "--name-only",
    "-L",
];

fn own_flag(a: &str) -> bool {
    OWN_FLAGS.contains(&a)
        || a.strip_prefix("--max-count=").is_some_and(|n| n.parse::<u32>().is_ok())
        || a.starts_with("--since=")
        || a.strip_prefix("-U").is_some_and(|n| n.parse::<u32>().is_ok())
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for tool in GitTool::ALL {
        let Ok(args) = tool_args(tool, &value, repo()) else {
            continue;
        };
        assert!(args.iter().all(|a| !a.contains('\0')));
        let sep = args.iter().position(|a| a == "--");
        let before = &args[1..sep.unwrap_or(args.len())];
        for (i, a) in before.iter().enumerate() {
            if a.starts_with('-') {
                assert!(own_flag(a), "{tool}: value {a:?} would be read as an option: {args:?}");
            }
            if a == "-L" {
                let range = &before[i + 1];
                let (s, e) = range.split_once(',').expect("-L s,e");
                assert!(s.parse::<u64>().unwrap() >= 1 && e.parse::<u64>().unwrap() >= s.parse().unwrap());
            }
        }
        if let Some(i) = sep {
            assert_eq!(args.len(), i + 2, "{tool}: exactly one path after --: {args:?}");
            let p = Path::new(&args[i + 1]);
            assert!(p.is_relative(), "{tool}: {args:?}");
            assert!(
                p.components().all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir)),
                "{tool}: the path is repository-relative without '..': {args:?}"
            );
        }
    }
});
