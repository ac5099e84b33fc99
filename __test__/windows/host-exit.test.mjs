// No command outlives its host on Windows (SPEC §14): the command's job is
// kill-on-close, so when the host node.exe exits — or is killed, which runs
// none of its code — the command and its detached grandchild end. The
// control: the same tree started by the host with Node's child_process
// (detached, so no job of libuv's holds the grandchild) survives the host.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { NODE, allGone, alive, end, jsonFile, script, tempRoot, treeScript } from './helpers.mjs'

const INDEX = resolve(fileURLToPath(import.meta.url), '..', '..', '..', 'index.js')

/** A host program: starts tree.js (as a command, or with child_process for the control), then exits or waits to be killed. */
function hostScript(root) {
  return script(
    root,
    'host.js',
    `const [mode, how, root] = process.argv.slice(2)
const path = require('node:path')
const tree = path.join(root, 'tree.js')
const pidFile = path.join(root, 'pids.json')
// 'exit': exit normally once the test has seen the tree running (it writes the file go).
const done = () => setInterval(() => { if (how === 'exit' && require('node:fs').existsSync(path.join(root, 'go'))) process.exit(0) }, 50)
if (mode === 'command') {
  const nc = require(${JSON.stringify(INDEX)})
  const host = {}
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: [process.execPath], cwdRoot: root })
  nc.startBackgroundCommand(host, [process.execPath, tree, pidFile], { cwd: '.' }).then(() => {
    const wait = setInterval(() => { if (require('node:fs').existsSync(pidFile)) { clearInterval(wait); done() } }, 50)
  }, (e) => { console.error(e); process.exit(9) })
} else {
  const c = require('node:child_process').spawn(process.execPath, [tree, pidFile], { detached: true, stdio: 'ignore' })
  c.unref()
  const wait = setInterval(() => { if (require('node:fs').existsSync(pidFile)) { clearInterval(wait); done() } }, 50)
}
`,
  )
}

/** Runs host.js; returns the host process and the tree's pids once it started them. */
async function startHost(t, mode, how) {
  const root = tempRoot(t)
  treeScript(root)
  const hostJs = hostScript(root)
  const hostProc = spawn(NODE, [hostJs, mode, how, root], { stdio: 'ignore' })
  const exited = new Promise((r) => hostProc.once('exit', (code, signal) => r({ code, signal })))
  const pids = await jsonFile(join(root, 'pids.json'))
  t.after(() => [pids.child, pids.grandchild, hostProc.pid].forEach(end))
  assert.ok(alive(pids.child) && alive(pids.grandchild), 'the tree runs while the host does')
  return { hostProc, exited, pids, go: () => writeFileSync(join(root, 'go'), '') }
}

test('when the host node.exe exits, its command and the command’s detached grandchild end', async (t) => {
  const { exited, pids, go } = await startHost(t, 'command', 'exit')
  go()
  assert.deepEqual(await exited, { code: 0, signal: null })
  await allGone([pids.child, pids.grandchild])
})

test('when the host node.exe is killed (TerminateProcess), its command and the grandchild end', async (t) => {
  const { hostProc, exited, pids } = await startHost(t, 'command', 'stay')
  hostProc.kill('SIGKILL')
  await exited
  await allGone([pids.child, pids.grandchild])
})

test('control: a detached tree the host started with child_process survives the host’s kill', async (t) => {
  const { hostProc, exited, pids } = await startHost(t, 'control', 'stay')
  hostProc.kill('SIGKILL')
  await exited
  await new Promise((r) => setTimeout(r, 1500))
  assert.equal(alive(pids.child), true, 'without a kill-on-close job the child outlives the host')
  assert.equal(alive(pids.grandchild), true, 'and so does its grandchild')
})
