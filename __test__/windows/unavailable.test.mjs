// What the Windows build does not offer yet is refused before anything runs,
// each with its code, never run without it: terminal mode (no pseudo console
// yet: NLC_TERMINAL_UNAVAILABLE) and resource limits (no Job Object limits
// yet: NLC_LIMIT_UNAVAILABLE). Controls: the same command without them runs,
// and stdin as a pipe (what a command that needs input uses instead) works.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { NODE, hostWith, nc, rejection, settle, tempRoot } from './helpers.mjs'

const ECHO_STDIN = [NODE, '-e', "process.stdin.setEncoding('utf8'); let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => process.stdout.write(JSON.stringify(s)))"]

test('terminal mode is refused with NLC_TERMINAL_UNAVAILABLE; nothing runs', async (t) => {
  const host = hostWith(tempRoot(t))
  const e = await rejection(nc.startBackgroundCommand(host, [NODE, '-e', '1'], { cwd: '.', terminal: true }))
  assert.equal(e.code, 'NLC_TERMINAL_UNAVAILABLE', e.message)
  assert.match(e.message, /windows/i)
  assert.deepEqual(nc.listBackgroundCommands(host), [])
  // The tool refuses in-band with the same code.
  const tools = nc.createBackgroundCommandTools(host)
  const r = await tools.run_command_bg.execute({ argv: [NODE, '-e', '1'], terminal: true })
  assert.ok(nc.isToolRefusal(r), JSON.stringify(r))
  assert.equal(r.code, 'NLC_TERMINAL_UNAVAILABLE')
})

test('a resource limit is refused with NLC_LIMIT_UNAVAILABLE; nothing runs', async (t) => {
  const host = hostWith(tempRoot(t))
  for (const limits of [{ memoryBytes: 256 * 1024 * 1024 }, { processes: 10 }, { cpuMs: 60_000 }]) {
    const e = await rejection(nc.startBackgroundCommand(host, [NODE, '-e', '1'], { cwd: '.', limits }))
    assert.equal(e.code, 'NLC_LIMIT_UNAVAILABLE', `${JSON.stringify(limits)}: ${e.message}`)
  }
  assert.deepEqual(nc.listBackgroundCommands(host), [])
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
