// A worker thread may load the addon too; its teardown must not stop the
// commands the main thread started (the process-wide hooks belong to the
// first environment that loaded the addon).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'

import { alive, hostWith, nc, tempRoot, waitFor } from './helpers.ts'

test("a worker that loads the addon, runs a command and exits leaves the main thread's commands running", async (t) => {
  const root = tempRoot()
  const host = hostWith(root)
  const h = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'echo main; exec sleep 30'], { cwd: '.' })
  t.after(() => nc.killAllBackgroundCommands(host))

  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads')
    const nc = require(workerData.index)
    const host = {}
    nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh'], cwdRoot: workerData.root })
    nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'echo from-worker'], { cwd: '.' })
      .then((h) => nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 10000 }))
      .then((s) => parentPort.postMessage({ state: s.state, exitCode: s.exitCode, tail: s.tailPreview }))
    `,
    { eval: true, workerData: { index: require.resolve('../index.js'), root } },
  )
  const fromWorker = await new Promise<{ state: string; exitCode?: number; tail: string }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  assert.deepEqual(fromWorker, { state: 'exited', exitCode: 0, tail: '[stdout tail]\nfrom-worker\n' })
  const code = await new Promise<number>((resolve) => worker.once('exit', resolve))
  assert.equal(code, 0)

  // The worker's environment is gone; the main thread's command is untouched.
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 300 })
  assert.equal(st.state, 'running')
  await waitFor(() => nc.getBackgroundCommandStatus(host, h.taskId).stdoutBytes === 5, 5_000, 'the main command to print')
  const killed = await nc.killBackgroundCommand(host, h.taskId)
  assert.equal(killed.state, 'killed')
  assert.equal(killed.tailPreview, '[stdout tail]\nmain\n')
})

test("a worker's own commands are stopped when the worker goes away", async () => {
  const root = tempRoot()
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads')
    const nc = require(workerData.index)
    const host = {}
    nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh'], cwdRoot: workerData.root })
    nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'echo $$; exec sleep 30'], { cwd: '.' }).then(async (h) => {
      for (;;) {
        const out = nc.readNewBackgroundCommandOutput(host, h.taskId).content
        if (out) { parentPort.postMessage(Number(out.trim())); break }
        await new Promise((r) => setTimeout(r, 10))
      }
      // Go away only once the test has seen the command running.
      parentPort.once('message', () => process.exit(0))
    })
    `,
    { eval: true, workerData: { index: require.resolve('../index.js'), root } },
  )
  const pid = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  assert.ok(pid > 1 && alive(pid), `the worker's command runs (pid ${pid})`)
  const exited = new Promise((resolve) => worker.once('exit', resolve))
  worker.postMessage('exit')
  await exited
  await waitFor(() => !alive(pid), 5_000, "the worker's command to be stopped")
})
