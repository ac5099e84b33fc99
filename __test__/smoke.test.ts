import assert from 'node:assert/strict'
import { test } from 'node:test'

import { hostWith, nc, tempRoot } from './helpers.ts'

test('a command starts, settles exited 0 and keeps its output', async () => {
  const host = hostWith(tempRoot())
  const h = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'echo hello'], { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(host, h.taskId)
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 0)
  assert.equal(st.tailPreview, '[stdout tail]\nhello\n')
})
