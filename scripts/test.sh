#!/usr/bin/env bash
# The whole suite: the engine's cargo tests, then the node:test suites through
# the public exports (built first, so the suite never runs a stale binary).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -p neurolink-commands-engine --release
pnpm run build
node --import tsx --test --test-concurrency=2 __test__/*.test.ts
