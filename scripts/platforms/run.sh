#!/usr/bin/env bash
# `pnpm run test:platforms`: on a Debian 12 x86_64 machine, install what is
# needed (setup.sh), then build each extra Linux target and run the engine's
# cargo tests and the node suite against it (build.sh, test.sh).
#   run.sh [platform...]   default: linux-arm64-gnu linux-x64-musl linux-arm64-musl
# The host's own linux-x64-gnu is the main suite's (`pnpm run test:background-commands`).
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$REPO"
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=("${LINUX_EXTRA[@]}")
start=$SECONDS
bash scripts/platforms/setup.sh
for p in "${platforms[@]}"; do
  t=$SECONDS
  bash scripts/platforms/build.sh "$p"
  bash scripts/platforms/test.sh "$p"
  log "$p: built and tested in $((SECONDS - t))s"
done
log "test:platforms passed (${platforms[*]}) in $((SECONDS - start))s"
