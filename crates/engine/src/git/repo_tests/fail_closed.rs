//! What must refuse rather than run: a partial clone cannot fetch missing
//! objects lazily (which would run the upload-pack program its configuration
//! names), and configuration that cannot be listed or safely overridden
//! refuses the tool.

use std::fs;
use std::time::Duration;

use serde_json::json;

use super::*;

#[test]
fn partial_clone_cannot_fetch_lazily() {
    let fx = Fixture::new();
    let src = fx.base.join("src");
    fx.init_repo(&src);
    fs::write(src.join("f.txt"), "one\n").unwrap();
    fx.setup_git(&src, &["add", "."]);
    fx.setup_git(&src, &["commit", "-qm", "one"]);
    fs::write(src.join("f.txt"), "one\ntwo\n").unwrap();
    fx.setup_git(&src, &["commit", "-qam", "two"]);
    fx.setup_git(&src, &["config", "uploadpack.allowFilter", "true"]);
    fx.setup_git(&src, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let url = format!("file://{}", src.display());
    fx.setup_git(
        &fx.base,
        &[
            "clone",
            "-q",
            "--no-local",
            "--filter=blob:none",
            "--no-checkout",
            &url,
            "pc",
        ],
    );
    let pc = fx.base.join("pc");
    let uploadpack = fx.script("uploadpack", "exit 1");
    fx.setup_git(&pc, &["config", "remote.origin.uploadpack", &uploadpack]);
    fx.setup_git(&pc, &["config", "protocol.file.allow", "always"]);
    fx.clear_markers();

    for (tool, params) in [
        (GitTool::Show, json!({"ref": "HEAD"})),
        (GitTool::Log, json!({"format": "stat"})),
        (GitTool::Blame, json!({"path": "f.txt", "ref": "HEAD"})),
        (GitTool::Diff, json!({"base": "HEAD~1", "head": "HEAD"})),
    ] {
        let (_, out) = fx.run_tool(&pc, tool, &params);
        assert!(
            !out.status.success(),
            "{tool}: the blobs are missing, so it cannot succeed"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not allowed"), "{tool}: {stderr}");
        assert!(fx.markers().is_empty(), "{tool}: {:?}", fx.markers());
    }
    let (_, out) = fx.run_tool(&pc, GitTool::Log, &json!({}));
    assert!(
        out.status.success(),
        "commits are present: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Without the per-name override, protocol.file.allow=always reopens the transport.
    let args: Vec<String> = [
        "show",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "HEAD",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    fx.run(&pc, &full_argv(GIT, &args));
    assert!(
        fx.markers().contains(&"uploadpack".to_string()),
        "{:?}",
        fx.markers()
    );
}

#[test]
fn listing_fails_closed() {
    let fx = Fixture::new();
    let root = fx.base.join("broken");
    fx.init_repo(&root);
    let config = root.join(".git/config");
    let mut text = fs::read_to_string(&config).unwrap();
    text.push_str("[filter \"a=b\"]\n\tclean = x\n");
    fs::write(&config, text).unwrap();
    let err = driver_overrides(GIT, &root, &fx.env(), Duration::from_secs(60)).unwrap_err();
    assert!(err.0.contains("cannot be overridden safely"), "{err}");

    fs::write(&config, "[core\n").unwrap();
    let err = driver_overrides(GIT, &root, &fx.env(), Duration::from_secs(60)).unwrap_err();
    assert!(err.0.contains("could not list its configuration"), "{err}");

    let err = driver_overrides(
        "/nonexistent/git",
        &fx.base,
        &fx.env(),
        Duration::from_secs(5),
    )
    .unwrap_err();
    // The engine's own spawn reports a failed exec also under qemu-user
    // (through its report pipe).
    assert!(err.0.contains("could not start"), "{err}");

    // Outside any repository only the user's configuration is listed.
    let plain = fx.base.join("plain");
    fs::create_dir_all(&plain).unwrap();
    assert_eq!(
        driver_overrides(GIT, &plain, &fx.env(), Duration::from_secs(60)).unwrap(),
        Vec::<String>::new()
    );
}
