#!/usr/bin/env bash
# The whole suite: the engine's cargo tests, then the node:test suites through
# the public exports (built first, so the suite never runs a stale binary).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p neurolink-commands-engine --release
pnpm run build
# The committed loader and declarations must be the ones this build generates.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git diff --exit-code --stat -- binding.js binding.d.ts ||
    { echo "binding.js / binding.d.ts differ from what the build generates: commit the regenerated files" >&2; exit 1; }
fi
node --import tsx --test --test-concurrency=2 __test__/*.test.ts mcp/__test__/*.test.ts
# Again on the standard paths (std::process::Command, napi-rs's serde objects):
# every fast path must keep the contract the standard one keeps.
pnpm run test:standard-paths
