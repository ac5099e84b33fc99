// The status, handle and artifact reference objects: the adapter's makers
// (registered with the binding at load, index.js) build exactly what the
// engine builds without them — the same keys in the same order, the same
// values — and the engine calls a registered maker with the values in field
// order, `undefined` for an absent one. Under NEUROLINK_COMMANDS_STANDARD_PATHS=1
// (`pnpm run test:standard-paths`) napi-rs's serde conversion builds them and
// no maker is called: the objects are still the same, key for key.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { hostWith, nc, tempRoot } from './helpers.ts'

const binding = createRequire(import.meta.url)('../binding.js')
const SH = '/bin/sh'
const STANDARD = process.env.NEUROLINK_COMMANDS_STANDARD_PATHS === '1'

/** Every key of `v` in order, nested objects included, and every value. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape)
  if (v !== null && typeof v === 'object') return Object.entries(v).map(([k, x]) => [k, shape(x)])
  return v
}

test('the objects the adapter makes are the ones the engine makes itself, key for key', async (t) => {
  const root = tempRoot('nlc-objects-')
  const host = hostWith(root, [SH, '/no/such/tool'], { killGraceMs: 200 })
  t.after(() => nc.killAllBackgroundCommands(host))
  // An exit with output on both streams (banked: two artifact references),
  // a kill (signal and its reason present), a program that cannot start
  // (no exit code, its reason present).
  const exited = await nc.startBackgroundCommand(host, [SH, '-c', 'echo out; echo err >&2; exit 3'], { cwd: '.' })
  const killed = await nc.startBackgroundCommand(host, [SH, '-c', 'exec sleep 30'], { cwd: '.' })
  const failed = await nc.startBackgroundCommand(host, ['/no/such/tool'], { cwd: '.' })
  const awaited = await nc.awaitBackgroundCommand(host, exited.taskId)
  await nc.killBackgroundCommand(host, killed.taskId)
  await nc.awaitBackgroundCommand(host, failed.taskId)
  const ids = [exited.taskId, killed.taskId, failed.taskId]
  const made = ids.map((id) => nc.getBackgroundCommandStatus(host, id))
  assert.deepEqual(
    made.map((s) => [s.state, s.exitCode, s.signal, typeof s.error]),
    [
      ['exited', 3, undefined, 'undefined'],
      ['killed', undefined, 'SIGTERM', 'string'],
      ['exited', undefined, undefined, 'string'],
    ],
  )
  assert.equal(made[0].stdout?.preview, 'out\n')
  assert.equal(made[0].stderr?.preview, 'err\n')
  assert.deepEqual(shape(awaited), shape(made[0]))
  const handle = await nc.startBackgroundCommand(host, [SH, '-c', 'exit 0'], { cwd: '.' })
  assert.deepEqual(Object.keys(handle), ['taskId', 'argv', 'startedAt'])

  // Unregistered: the engine builds the same objects itself.
  binding.setObjectMakers(null)
  try {
    const own = ids.map((id) => nc.getBackgroundCommandStatus(host, id))
    assert.deepEqual(shape(own), shape(made))
    const ownHandle = await nc.startBackgroundCommand(host, [SH, '-c', 'exit 0'], { cwd: '.' })
    assert.deepEqual(Object.keys(ownHandle), Object.keys(handle))
    assert.deepEqual(ownHandle.argv, handle.argv)
    assert.equal(typeof ownHandle.startedAt, 'number')
    await nc.awaitBackgroundCommand(host, ownHandle.taskId)
  } finally {
    // Makers that record what the engine passes them.
    const calls: Record<string, unknown[][]> = { status: [], handle: [], ref: [] }
    binding.setObjectMakers(
      (...v: unknown[]) => (calls.status.push(v), { made: 'status' }),
      // (With the task id, which the adapter tracks the command by.)
      (...v: unknown[]) => (calls.handle.push(v), { made: 'handle', taskId: v[0] }),
      (...v: unknown[]) => (calls.ref.push(v), { made: 'ref' }),
    )
    const s = nc.getBackgroundCommandStatus(host, killed.taskId) as unknown
    if (STANDARD) {
      // The standard path calls no maker: the same objects as before.
      assert.deepEqual(shape(s), shape(made[1]))
      const h = await nc.startBackgroundCommand(host, [SH, '-c', 'exit 0'], { cwd: '.' })
      assert.deepEqual(Object.keys(h), ['taskId', 'argv', 'startedAt'])
      assert.deepEqual(calls, { status: [], handle: [], ref: [] })
      await nc.awaitBackgroundCommand(host, h.taskId)
    } else {
      assert.deepEqual(s, { made: 'status' })
      assert.equal(calls.status.length, 1)
      const [v] = calls.status
      const m = made[1]
      // Field order; undefined where the key is absent.
      assert.deepEqual(v, [
        m.taskId,
        m.label,
        'killed',
        undefined,
        'SIGTERM',
        m.durationMs,
        m.stdoutBytes,
        m.stderrBytes,
        { made: 'ref' },
        { made: 'ref' },
        m.tailPreview,
        m.error,
        false,
        m.containment,
        false,
        m.waitingForInput,
        undefined,
        undefined,
        // usage (where a cgroup measured it), limit, recovered
        m.usage,
        undefined,
        undefined,
      ])
      assert.deepEqual(
        calls.ref.map((r) => r.slice(0, 3)),
        [
          [`nlc-${killed.taskId}-stdout`, m.stdout?.label, 'command-output'],
          [`nlc-${killed.taskId}-stderr`, m.stderr?.label, 'command-output'],
        ],
      )
      const h = await nc.startBackgroundCommand(host, [SH, '-c', 'exit 0'], { cwd: '.' })
      assert.equal(calls.handle.length, 1)
      assert.deepEqual(h, { made: 'handle', taskId: calls.handle[0][0] })
      assert.equal(calls.handle[0].length, 3)
      assert.deepEqual(calls.handle[0][1], [SH, '-c', 'exit 0'])
      assert.equal(typeof calls.handle[0][2], 'number')
      await nc.awaitBackgroundCommand(host, h.taskId)
    }
  }
})

test('setObjectMakers refuses what is not a function', () => {
  assert.throws(
    () =>
      binding.setObjectMakers(
        () => ({}),
        42,
        () => ({}),
      ),
    /expects three functions/,
  )
})
