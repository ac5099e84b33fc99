#!/usr/bin/env bash
# Windows x64 on this machine (SPEC §14, PLATFORMS.md "Windows under wine"):
# lint the Windows crate (crates/windows) for x86_64-pc-windows-gnu, build
# it with mingw-w64 and run its tests under wine — the real Job Object,
# CreateProcess, cmd.exe, CommandLineToArgvW, directory-handle and node.exe
# behaviour, not a model of it.
#
# Run here: tests/windows.rs and the crate's unit tests, the engine built
# for Windows and its tests/windows_engine.rs (real node.exe and cmd.exe
# trees in Job Objects), then the Node suite for Windows
# (__test__/windows/*.test.mjs) on the official node.exe. NOT run here (wine
# cannot model them; the workflow's native Windows job runs them):
# tests/native_only.rs —
#   sigterm_is_a_console_break_to_the_commands_group  (GenerateConsoleCtrlEvent)
#   sigterm_ends_a_tree_that_heeds_the_break_before_the_grace  (the same)
#   a_junction_out_of_the_root_is_outside              (mklink /J)
# and, for the engine, terminal mode on a pseudo console (refused on Windows
# for now: ordinary console children do not attach to a ConPTY under wine).
#
# The napi addon does not load on Windows yet: see docs/guide/windows.md
# for what is ported and what is not.
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$REPO"
use_wine
triple="$(triple_of win32-x64)"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine64
# The official node.exe, one of the command-line parsers the round trip is
# checked against (wine maps Z: to /).
NLC_WIN_NODE="Z:$(node_of win32-x64 | tr / '\\')"
export NLC_WIN_NODE
# Whatever happens, no wine process outlives the run.
trap 'wineserver -k 2>/dev/null || true' EXIT
log "win32-x64: cargo clippy -p neurolink-commands-windows --target $triple"
cargo clippy -p neurolink-commands-windows --all-targets --target "$triple" -- -D warnings
log "win32-x64: cargo test under wine (tests/windows.rs and unit tests)"
cargo test -p neurolink-commands-windows --release --target "$triple" --lib --bins --test windows
log "win32-x64: cargo clippy -p neurolink-commands-engine --target $triple"
cargo clippy -p neurolink-commands-engine --target "$triple" --test windows_engine --test windows_native_only -- -D warnings
log "win32-x64: the engine under wine (tests/windows_engine.rs)"
cargo test -p neurolink-commands-engine --release --target "$triple" --test windows_engine
# The Node suites for Windows (__test__/windows/) on the official node.exe.
# node.exe cannot write to a Unix pipe under wine: its output goes to a file,
# printed afterwards.
log "win32-x64: node.exe --test __test__/windows/ under wine"
out="$(mktemp)"
files=()
for f in __test__/windows/*.test.mjs; do files+=("Z:$(realpath "$f" | tr / '\\')"); done
rc=0
wine64 "$(node_of win32-x64)" --test "${files[@]}" >"$out" 2>&1 || rc=$?
cat "$out"
rm -f "$out"
exit "$rc"
