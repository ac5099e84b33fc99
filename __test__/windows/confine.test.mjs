// Confinement is not offered on Windows (SPEC §14): confinementSupport() says
// so, and a confined start is refused with NLC_CONFINEMENT_UNAVAILABLE naming
// Windows — nothing runs unconfined in its place. The control: the same
// command under the same policy without confine runs.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { NODE, hostWith, nc, rejection, run, tempRoot } from './helpers.mjs'

test('confinementSupport() reports nothing enforceable on Windows, saying why', () => {
  const s = nc.confinementSupport()
  assert.equal(s.landlockAbi, 0)
  assert.equal(s.filesystem, false)
  assert.equal(s.network, false)
  assert.equal(s.signals, false)
  assert.equal(s.seccomp, false)
  assert.equal(s.namespaces, false)
  // why: what it needs is Linux's (the engine's words name Linux or Windows)
  assert.match(s.namespacesWhyNot ?? '', /linux|windows/i)
})

test('a policy with confine refuses every start with NLC_CONFINEMENT_UNAVAILABLE naming Windows; nothing runs', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root, { confine: {} })
  const e = await rejection(nc.startBackgroundCommand(host, [NODE, '-e', '1'], { cwd: '.' }))
  assert.equal(e.code, 'NLC_CONFINEMENT_UNAVAILABLE', e.message)
  assert.match(e.message, /windows/i)
  assert.deepEqual(nc.listBackgroundCommands(host), [])
})

test('a start asking for confinement under an unconfined policy is refused the same way', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const e = await rejection(nc.startBackgroundCommand(host, [NODE, '-e', '1'], { cwd: '.', confine: { network: false } }))
  assert.equal(e.code, 'NLC_CONFINEMENT_UNAVAILABLE', e.message)
  assert.match(e.message, /windows/i)
})

test('control: the same command under the same policy without confine runs', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const [st, out] = await run(host, [NODE, '-e', 'process.stdout.write("ran")'])
  assert.equal(st.state, 'exited')
  assert.equal(st.confined, false)
  assert.equal(out, 'ran')
})
