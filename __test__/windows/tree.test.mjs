// Trees on Windows (SPEC §14): each command runs in its own Job Object, so a
// kill, a timeout and the output cap end the command AND a grandchild it
// started detached (outside any job of libuv's, so only the command's job can
// end it). The control starts the same tree with Node's child_process and
// kills the child alone: the grandchild survives, so the checks can fail.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'

import { NODE, allGone, alive, end, hostWith, jsonFile, nc, settle, tempRoot, treeScript, treeWithoutJob } from './helpers.mjs'

/** Starts tree.js as a command; returns its handle and the two pids once written. */
async function startTree(t, extraPolicy = {}, options = {}) {
  const root = tempRoot(t)
  const tree = treeScript(root)
  const host = hostWith(root, extraPolicy)
  const pidFile = join(root, 'pids.json')
  const h = await nc.startBackgroundCommand(host, [NODE, tree, pidFile], { cwd: '.', ...options })
  const pids = await jsonFile(pidFile)
  t.after(() => {
    end(pids.grandchild)
    end(pids.child)
  })
  assert.ok(alive(pids.child) && alive(pids.grandchild), `both run before the stop: ${JSON.stringify(pids)}`)
  return { host, h, pids }
}

test('SIGKILL ends the whole job at once: child and detached grandchild', async (t) => {
  const { host, h, pids } = await startTree(t)
  const st = await nc.killBackgroundCommand(host, h.taskId, 'SIGKILL')
  assert.equal(st.state, 'killed', JSON.stringify(st))
  assert.equal(st.signal, 'SIGKILL')
  await allGone([pids.child, pids.grandchild])
})

test('SIGTERM (the default) ends the whole job, after the grace at the latest', async (t) => {
  const { host, h, pids } = await startTree(t, { killGraceMs: 500 })
  const st = await nc.killBackgroundCommand(host, h.taskId)
  assert.equal(st.state, 'killed', JSON.stringify(st))
  assert.ok(['SIGTERM', 'SIGKILL'].includes(st.signal), `the status names the signal the runner used: ${st.signal}`)
  await allGone([pids.child, pids.grandchild])
})

test('a timeout ends the whole job', async (t) => {
  const { host, h, pids } = await startTree(t, { killGraceMs: 300 }, { timeoutMs: 4_000 })
  const st = await settle(host, h.taskId)
  assert.equal(st.state, 'timeout', JSON.stringify(st))
  assert.match(st.error ?? '', /4000ms/)
  await allGone([pids.child, pids.grandchild])
})

test('killAllBackgroundCommands ends every job of the host', async (t) => {
  const root = tempRoot(t)
  const tree = treeScript(root)
  const host = hostWith(root)
  const a = await nc.startBackgroundCommand(host, [NODE, tree, join(root, 'a.json')], { cwd: '.' })
  const b = await nc.startBackgroundCommand(host, [NODE, tree, join(root, 'b.json')], { cwd: '.' })
  const pa = await jsonFile(join(root, 'a.json'))
  const pb = await jsonFile(join(root, 'b.json'))
  t.after(() => [pa.child, pa.grandchild, pb.child, pb.grandchild].forEach(end))
  assert.equal(await nc.killAllBackgroundCommands(host), 2)
  assert.equal(nc.getBackgroundCommandStatus(host, a.taskId).state, 'killed')
  assert.equal(nc.getBackgroundCommandStatus(host, b.taskId).state, 'killed')
  await allGone([pa.child, pa.grandchild, pb.child, pb.grandchild])
})

test('the output cap stops a flooding command and its grandchild, keeping exactly the cap', async (t) => {
  const root = tempRoot(t)
  treeScript(root)
  const host = hostWith(root)
  const pidFile = join(root, 'pids.json')
  // tree.js's grandchild, then a flood of stdout.
  const flood = `require('./tree.js'); const line = '0123456789abcdef'.repeat(64) + '\\n'; (function w() { process.stdout.write(line, w) })()`
  const h = await nc.startBackgroundCommand(host, [NODE, '-e', `process.argv[2] = ${JSON.stringify(pidFile)}; ${flood}`], { cwd: '.', maxOutputBytes: 20_000 })
  const pids = await jsonFile(pidFile)
  t.after(() => [pids.child, pids.grandchild].forEach(end))
  const st = await settle(host, h.taskId)
  assert.equal(st.state, 'output-limit', JSON.stringify(st))
  assert.equal(st.stdoutBytes, 20_000)
  assert.equal(st.stdout.sizeBytes, 20_000)
  const kept = await nc.readArtifact(st.stdout.artifactId)
  assert.equal(kept, ('0123456789abcdef'.repeat(64) + '\n').repeat(20).slice(0, 20_000))
  await allGone([pids.child, pids.grandchild])
})

test('control: killing only the child (no job) leaves the detached grandchild running', async (t) => {
  const grandchild = await treeWithoutJob(t, tempRoot(t))
  assert.equal(alive(grandchild), true, 'the grandchild outlived its parent: only a job ends it')
})
