// What the Windows build does not offer yet is refused before anything runs,
// with its code, never run without it: resource limits (no Job Object
// limits yet: NLC_LIMIT_UNAVAILABLE). Control: stdin as a pipe carries
// exact bytes, and the same start without limits runs (confinement's
// refusal is in confine.test.mjs).
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { NODE, hostWith, nc, rejection, run, settle, tempRoot } from './helpers.mjs'

const ECHO_STDIN = [NODE, '-e', "process.stdin.setEncoding('utf8'); let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => process.stdout.write(JSON.stringify(s)))"]

test('a resource limit is refused with NLC_LIMIT_UNAVAILABLE; nothing runs', async (t) => {
  const host = hostWith(tempRoot(t))
  for (const limits of [{ memoryBytes: 256 * 1024 * 1024 }, { processes: 10 }, { cpuMs: 60_000 }]) {
    const e = await rejection(nc.startBackgroundCommand(host, [NODE, '-e', '1'], { cwd: '.', limits }))
    assert.equal(e.code, 'NLC_LIMIT_UNAVAILABLE', `${JSON.stringify(limits)}: ${e.message}`)
  }
  assert.deepEqual(nc.listBackgroundCommands(host), [])
  // Control: the same start without limits runs.
  const [st] = await run(host, [NODE, '-e', '1'])
  assert.equal(st.exitCode, 0, JSON.stringify(st))
})

test('control: stdin as a pipe carries exact bytes, and its end reaches the command', async (t) => {
  const host = hostWith(tempRoot(t))
  const h = await nc.startBackgroundCommand(host, ECHO_STDIN, { cwd: '.', stdin: 'pipe' })
  const sent = 'line one\r\nzwei ☃ 𝄞\n'
  const w = await nc.writeBackgroundCommandInput(host, h.taskId, sent, { end: true })
  assert.equal(w.bytesWritten, Buffer.byteLength(sent))
  const st = await settle(host, h.taskId)
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(await nc.readArtifact(st.stdout.artifactId), JSON.stringify(sent))
})
