#!/usr/bin/env bash
# `pnpm run test:platforms`: on a Debian 12 x86_64 machine, install what is
# needed (setup.sh), then build each extra Linux target and run the engine's
# cargo tests and the node suite against it (build.sh, test.sh); then
# type-check the macOS port for both darwin targets and link both with zig
# (no Darwin kernel here: their suite runs in CI, .github/workflows/ci.yml).
#   run.sh [platform...]   default: linux-arm64-gnu linux-x64-musl linux-arm64-musl darwin-x64 darwin-arm64
# The host's own linux-x64-gnu is the main suite's (`pnpm run test:background-commands`).
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$REPO"
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=("${LINUX_EXTRA[@]}" "${DARWIN[@]}")
start=$SECONDS
bash scripts/platforms/setup.sh
for p in "${platforms[@]}"; do
  t=$SECONDS
  case "$p" in
    darwin-*)
      cargo check --workspace --all-targets --target "$(triple_of "$p")"
      bash scripts/platforms/build.sh "$p"
      ;;
    *)
      bash scripts/platforms/build.sh "$p"
      bash scripts/platforms/test.sh "$p"
      ;;
  esac
  log "$p: done in $((SECONDS - t))s"
done
log "test:platforms passed (${platforms[*]}) in $((SECONDS - start))s"
