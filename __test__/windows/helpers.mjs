// Shared by the Windows suite (__test__/windows/*.test.mjs), run by the
// official node.exe: under wine here (scripts/platforms/windows.sh, the gnu
// build loaded through NAPI_RS_NATIVE_LIBRARY_PATH) and natively in the
// workflow's Windows job (the msvc build, found by the generated loader).
// Everything goes through the package's public API (index.js).
//
// What wine cannot model (PLATFORMS.md), so only the native job checks it:
// - SIGTERM as a console break (GenerateConsoleCtrlEvent fails under wine;
//   here SIGTERM ends the job after killGraceMs): native-only.test.mjs;
// - a junction out of the root (wine's mklink /J creates none):
//   native-only.test.mjs;
// - a held directory renamed while held (wine's GetFinalPathNameByHandleW
//   keeps the old path): crates/windows's tests;
// - terminal mode with ordinary console programs: under wine they do not
//   attach to a pseudo console (a program that opens the console by name is
//   served: terminal.test.mjs), and resizing one is not implemented:
//   native-only.test.mjs.
// node.exe's own output goes to a file under wine (it cannot write to a Unix
// pipe); the commands' output reaches the engine through Windows pipes.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The package, loaded as a Windows host loads it. */
export const nc = createRequire(import.meta.url)('../../index.js')
/** The node.exe running this suite: the command every test starts (no spaces in its path here or on the runner). */
export const NODE = process.execPath

/** A fresh directory under %TEMP% (its real path), removed after the test. */
export function tempRoot(t, prefix = 'nlc-win-') {
  const dir = realpathSync.native(mkdtempSync(join(tmpdir(), prefix)))
  t.after(() => {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
    } catch {
      // a process a failed test left behind may still hold it; the failure is reported by that test
    }
  })
  return dir
}

/** A host whose policy allows `allowed` (default: node.exe) under `root`. */
export function hostWith(root, extra = {}, allowed = [NODE]) {
  const host = {}
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: allowed, cwdRoot: root, killGraceMs: 500, ...extra })
  return host
}

/** Writes a script into `dir` and returns its path. */
export function script(dir, name, text) {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

/** A script that prints its arguments (process.argv after the script) as JSON on stdout. */
export function echoScript(dir) {
  return script(dir, 'echo-argv.js', 'process.stdout.write(JSON.stringify(process.argv.slice(2)))\n')
}

/**
 * A script that starts a DETACHED grandchild (so no job of libuv's holds it:
 * only the job the command runs in can end it), writes
 * `{ child, grandchild }` to the file named by its first argument, and stays.
 */
export function treeScript(dir) {
  return script(
    dir,
    'tree.js',
    `const { spawn } = require('node:child_process')
const fs = require('node:fs')
const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' })
g.unref()
fs.writeFileSync(process.argv[2] + '.tmp', JSON.stringify({ child: process.pid, grandchild: g.pid }))
fs.renameSync(process.argv[2] + '.tmp', process.argv[2])
setInterval(() => {}, 1000)
`,
  )
}

/**
 * The control of every "no process left" test: the tree script started
 * plainly (no job) and its child killed. Resolves with the detached
 * grandchild's pid once the child is gone and a second has passed; the
 * grandchild is ended after the test.
 */
export async function treeWithoutJob(t, dir) {
  const pidFile = join(dir, 'pids.json')
  const child = spawn(NODE, [treeScript(dir), pidFile], { stdio: 'ignore' })
  const pids = await jsonFile(pidFile)
  t.after(() => end(pids.grandchild))
  child.kill()
  await allGone([pids.child])
  await new Promise((r) => setTimeout(r, 1000))
  return pids.grandchild
}

/** Settles a command (awaitBackgroundCommand with a bound), failing if it does not. */
export async function settle(host, taskId, ms = 60_000) {
  const st = await nc.awaitBackgroundCommand(host, taskId, { timeoutMs: ms })
  assert.ok(st.state !== 'running' && st.state !== 'queued', `settled within ${ms} ms: ${JSON.stringify(st)}`)
  return st
}

/** Starts argv under `host`, settles it and returns [status, stdout text]. */
export async function run(host, argv, options = {}) {
  const h = await nc.startBackgroundCommand(host, argv, { cwd: '.', ...options })
  const st = await settle(host, h.taskId)
  return [st, await nc.readArtifact(st.stdout.artifactId)]
}

/** The error a promise rejects with (fails when it resolves). */
export async function rejection(p) {
  try {
    await p
  } catch (e) {
    return e
  }
  assert.fail('expected a refusal, the call succeeded')
}

/** Whether a process with this id runs (OpenProcess + its exit code, through libuv). */
export function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    if (e.code === 'ESRCH') return false
    throw e
  }
}

/** Waits until no process of `pids` runs; fails naming the survivors after `ms`. */
export async function allGone(pids, ms = 10_000) {
  const end = Date.now() + ms
  for (;;) {
    const left = pids.filter(alive)
    if (left.length === 0) return
    if (Date.now() > end) assert.fail(`still running after ${ms} ms: ${left.join(', ')}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Reads the JSON a process wrote to `path`, waiting up to `ms` for the file. */
export async function jsonFile(path, ms = 30_000) {
  const end = Date.now() + ms
  while (!existsSync(path)) {
    if (Date.now() > end) assert.fail(`${path} did not appear within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return JSON.parse(readFileSync(path, 'utf8'))
}

/** Ends a process by id if it still runs (the cleanup of a control). */
export function end(pid) {
  try {
    process.kill(pid)
  } catch {
    // already gone
  }
}

/** Same path on Windows: case-insensitive, either separator. */
export function samePath(a, b) {
  const norm = (p) => p.replace(/\//g, '\\').replace(/\\+$/, '').toLowerCase()
  return norm(a) === norm(b)
}

const ESC = String.fromCharCode(0x1b)
const BEL = String.fromCharCode(0x07)
const CURSOR_RIGHT = new RegExp(`${ESC}\\[(\\d*)C`, 'g')
const CSI = new RegExp(`${ESC}\\[[0-?]*[ -/]*[@-~]`, 'g')
const OSC = new RegExp(`${ESC}\\][^${BEL}${ESC}]*(${BEL}|${ESC}\\\\)`, 'g')

/** What the console showed as text: escape sequences dropped, a cursor move right read as the spaces it skips. */
export function screenText(raw) {
  return raw
    .replace(CURSOR_RIGHT, (_, n) => ' '.repeat(Number(n || 1)))
    .replace(CSI, '')
    .replace(OSC, '')
}

/** Waits until the terminal command `taskId` has shown `what` (as text); returns all it showed. */
export async function shown(host, taskId, what, ms = 30_000) {
  const end = Date.now() + ms
  for (;;) {
    const page = await nc.readBackgroundCommandOutput(host, taskId, { stream: 'stdout', offset: 0, limit: 1_000_000 })
    const text = screenText(page.content)
    if (text.includes(what)) return text
    if (Date.now() > end) assert.fail(`${JSON.stringify(what)} never shown: ${JSON.stringify(text)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
