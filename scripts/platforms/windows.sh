#!/usr/bin/env bash
# Windows x64 on this machine (SPEC §14, PLATFORMS.md "Windows under wine"):
# lint the Windows crate (crates/windows) and the addon for
# x86_64-pc-windows-gnu, build them with mingw-w64 and run their tests under
# wine — the real Job Object, CreateProcess, cmd.exe, CommandLineToArgvW,
# directory-handle and node.exe behaviour, not a model of it.
#
# Run here: tests/windows.rs, tests/console.rs (a pseudo console) and the
# crate's unit tests, the engine built
# for Windows and its tests/windows_engine.rs (real node.exe and cmd.exe
# trees in Job Objects), then the addon's Windows suite
# (__test__/windows/*.test.mjs) on the official node.exe against the gnu
# build of the addon. NOT run here (wine cannot model them; the workflow's
# native Windows job runs them):
# crates/windows/tests/native_only.rs —
#   sigterm_is_a_console_break_to_the_commands_group  (GenerateConsoleCtrlEvent)
#   sigterm_ends_a_tree_that_heeds_the_break_before_the_grace  (the same)
#   a_junction_out_of_the_root_is_outside              (mklink /J)
# crates/engine/tests/windows_native_only.rs and
# __test__/windows/native-only.test.mjs — the same through the engine and
# the addon; terminal mode with ordinary console programs, a resize and the
# console's end of input (under wine only a program that opens the console
# by name is served, which the wine run covers); the git
# toolset against real git.exe (there is no Git for Windows here:
# __test__/windows/git.test.mjs tests our side with a stand-in git).
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$REPO"
use_wine
triple="$(triple_of win32-x64)"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine64
# One optimized profile without LTO, as run.sh sets it (a run of this script
# alone stays a few minutes).
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-false}"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-16}"
# napi-build links a windows-gnu addon against libnode; napi-rs resolves the
# N-API functions from the loading node.exe at run time, so an empty
# libnode.dll and an empty import archive satisfy the link.
libnode="$REPO/target/libnode-win32-x64"
mkdir -p "$libnode"
[ -f "$libnode/libnode.dll" ] || : >"$libnode/libnode.dll"
[ -f "$libnode/libnode.a" ] || x86_64-w64-mingw32-ar rcs "$libnode/libnode.a"
export LIBNODE_PATH="$libnode"
# The official node.exe, one of the command-line parsers the round trip is
# checked against (wine maps Z: to /).
node_exe="$(node_of win32-x64)"
NLC_WIN_NODE="Z:$(echo "$node_exe" | tr / '\\')"
export NLC_WIN_NODE
# Whatever happens, no wine process outlives the run.
trap 'wineserver -k 2>/dev/null || true' EXIT
log "win32-x64: cargo clippy (the Windows crate, the addon) --target $triple"
cargo clippy -p neurolink-commands-windows --all-targets --target "$triple" -- -D warnings
cargo clippy -p neurolink-commands --target "$triple" -- -D warnings
log "win32-x64: cargo test under wine (tests/windows.rs, tests/console.rs, unit tests)"
cargo test -p neurolink-commands-windows --release --target "$triple" --lib --bins --test windows --test console
log "win32-x64: cargo clippy -p neurolink-commands-engine --target $triple"
cargo clippy -p neurolink-commands-engine --target "$triple" --test windows_engine --test windows_native_only -- -D warnings
log "win32-x64: the engine under wine (tests/windows_engine.rs)"
cargo test -p neurolink-commands-engine --release --target "$triple" --test windows_engine
# The addon, built outside the repository root: a file named
# neurolink-commands.win32-x64-msvc.node there would be packed into the msvc
# package by pack:release. The suite loads it through the generated loader's
# override, NAPI_RS_NATIVE_LIBRARY_PATH.
out_dir="$REPO/target/win32-x64-gnu"
log "win32-x64: napi build --target $triple (the addon, into target/win32-x64-gnu)"
npx napi build --platform --release --target "$triple" --no-js --output-dir "$out_dir" --dts platform.d.ts
addon="$out_dir/neurolink-commands.win32-x64-gnu.node"
test -f "$addon"
NAPI_RS_NATIVE_LIBRARY_PATH="Z:$(echo "$addon" | tr / '\\')"
export NAPI_RS_NATIVE_LIBRARY_PATH
# Under wine Node's JS realpath sees no symlinks, so a package pnpm linked in
# does not find its dependencies; the MCP suite starts its server with this
# hook, which resolves packages through the native realpath.
NLC_WINE_IMPORT="Z:$(echo "$REPO/scripts/platforms/windows/realpath-hook.mjs" | tr / '\\')"
export NLC_WINE_IMPORT
# The Windows suite on the official node.exe. node.exe cannot write to a
# Unix pipe under wine: its output goes to a file, printed afterwards.
log "win32-x64: node.exe --test __test__/windows/ under wine"
out="$(mktemp)"
files=()
for f in __test__/windows/*.test.mjs; do
  case "$f" in */native-only.test.mjs) continue ;; esac
  files+=("Z:$(realpath "$f" | tr / '\\')")
done
rc=0
wine64 "$node_exe" --test --test-concurrency=1 "${files[@]}" >"$out" 2>&1 || rc=$?
cat "$out"
rm -f "$out"
exit "$rc"
