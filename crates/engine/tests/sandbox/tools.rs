//! Everyday tools keep working in the sandbox: node's test runner, git
//! init, the private TMPDIR, npm and pnpm scripts, and cargo with its home
//! in the write tree.

use std::path::Path;

use neurolink_commands_engine::policy::confine::ConfinementInput;

use super::{confined, fixture, sandbox_here};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_test_and_git_init_keep_working() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    let script = r#"cat > t.test.js <<'EOF'
const test = require('node:test'); const assert = require('node:assert');
test('x', () => assert.equal(1, 1));
EOF
node --test t.test.js >/dev/null && echo node-test-ok; git init -q r && echo git-ok; echo "$TMPDIR" | grep -q neurolink-commands-tmp && touch "$TMPDIR/t" && echo tmp-ok; touch /tmp/private"#;
    let (st, out) = f.run(script, confined()).await;
    assert_eq!(
        (st.exit_code, out.as_str()),
        (
            Some(1),
            "node-test-ok\ngit-ok\ntmp-ok\ntouch: cannot touch '/tmp/private': Read-only file system\n"
        )
    );
    assert!(!Path::new("/tmp/private").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_pnpm_scripts_and_cargo_with_its_home_in_the_root_work() {
    if !sandbox_here() {
        return;
    }
    let f = fixture();
    std::fs::write(
        f.root().join("package.json"),
        r#"{"name":"p","version":"1.0.0","scripts":{"hi":"node -e \"console.log('script ran')\""}}"#,
    )
    .unwrap();
    let home = std::path::PathBuf::from(std::env::var("HOME").unwrap());
    let rustup = std::fs::canonicalize(home.join(".rustup")).unwrap();
    let cargo_bin = std::fs::canonicalize(home.join(".cargo/bin")).unwrap();
    let c = Some(ConfinementInput {
        exec: Some(vec![
            rustup.to_string_lossy().into(),
            cargo_bin.to_string_lossy().into(),
        ]),
        ..Default::default()
    });
    let script = format!(
        "npm run -s hi && pnpm run -s hi && export CARGO_HOME=$PWD/.cargo-home RUSTUP_HOME={} && {}/cargo new -q --offline p && cd p && {}/cargo run -q --offline",
        rustup.display(),
        cargo_bin.display(),
        cargo_bin.display()
    );
    let (st, out) = f.run(&script, c).await;
    // stdout first (pnpm adds its own notes on stderr).
    assert_eq!(st.exit_code, Some(0), "{out}");
    assert!(
        out.starts_with("script ran\nscript ran\nHello, world!\n"),
        "{out}"
    );
}
