// The model-facing tools on Windows, the loop an agent runs: run_command_bg →
// command_status (waiting) → command_output (paging, tail, grep) →
// command_kill, through createBackgroundCommandTools as a host registers them.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { NODE, hostWith, nc, script, tempRoot } from './helpers.mjs'

function ok(v) {
  assert.ok(!nc.isToolRefusal(v), `expected a result, got the refusal ${JSON.stringify(v)}`)
  return v
}

test('run_command_bg → command_status with waitMs → command_output pages and greps the banked output', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const tools = nc.createBackgroundCommandTools(host)
  const printer = script(root, 'lines.js', "for (let i = 1; i <= 500; i++) console.log(`line ${i} ☃`)\nconsole.error('warned')\nprocess.exitCode = 4\n")
  const started = ok(await tools.run_command_bg.execute({ argv: [NODE, printer] }))
  assert.match(started.taskId, /^c\d+[0-9a-f]{12}$/)
  assert.deepEqual(started.argv, [NODE, printer])

  const st = ok(await tools.command_status.execute({ taskId: started.taskId, waitMs: 60_000 }))
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.exitCode, 4)
  assert.equal(st.running, 0)
  const expected = Array.from({ length: 500 }, (_, i) => `line ${i + 1} ☃\n`).join('')
  assert.equal(st.stdoutBytes, Buffer.byteLength(expected))
  assert.equal(st.stderrBytes, 'warned\n'.length)

  const first = ok(await tools.command_output.execute({ taskId: started.taskId, offset: 0, limit: 100 }))
  assert.equal(first.content, expected.slice(0, 100))
  assert.equal(first.hasMore, true)
  const tail = ok(await tools.command_output.execute({ taskId: started.taskId, tail: 24 }))
  assert.equal(tail.content, expected.slice(-24))
  const err = ok(await tools.command_output.execute({ taskId: started.taskId, stream: 'stderr' }))
  assert.equal(err.content, 'warned\n')
  const grep = ok(await tools.command_output.execute({ taskId: started.taskId, grep: 'line 49' }))
  assert.deepEqual(
    grep.matches.map((m) => m.text.replace(/\r?\n$/, '')),
    ['line 49 ☃', ...Array.from({ length: 10 }, (_, i) => `line ${490 + i} ☃`)],
  )
})

test('command_kill ends a running command in-band; a refused cwd comes back in-band with its code', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const tools = nc.createBackgroundCommandTools(host)
  const started = ok(await tools.run_command_bg.execute({ argv: [NODE, '-e', 'setInterval(() => {}, 1000)'] }))
  const live = ok(await tools.command_status.execute({ taskId: started.taskId }))
  assert.ok(['queued', 'running'].includes(live.state), live.state)
  const killed = ok(await tools.command_kill.execute({ taskId: started.taskId }))
  assert.equal(killed.state, 'killed', JSON.stringify(killed))

  const refused = await tools.run_command_bg.execute({ argv: [NODE, '-e', '1'], cwd: '..' })
  assert.ok(nc.isToolRefusal(refused), JSON.stringify(refused))
  assert.equal(refused.code, 'NLC_OUTSIDE_ROOT')
})
