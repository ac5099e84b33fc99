// No panic reaches the host: a panic inside an export — in its synchronous
// body or inside the future of the promise it returns — becomes an
// NLC_INTERNAL error that says it is a bug and names the call, and the host
// keeps answering. NEUROLINK_COMMANDS_TEST_PANIC (read once per process)
// names the exports made to panic, so each case runs in a child host.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'

import { tempRoot, WAIT_SCALE } from './helpers.ts'

const ROOT = join(__dirname, '..')

/** A child host that lists its commands (sync), reads a command's log
 * through the native export that returns a promise (async: called
 * directly, so a synchronous throw would show), then starts another
 * command, reads its status and awaits it: what each step gave, as JSON. */
const SCRIPT = `
const nc = require(${JSON.stringify(ROOT)})
const native = require(${JSON.stringify(join(ROOT, 'binding.js'))})
const outcome = (e) => ({ code: e.code, message: e.message, isError: e instanceof Error })
;(async () => {
  const host = {}
  nc.setBackgroundCommandPolicy(host, { cwdRoot: process.argv[1], allowedExecutables: ['/bin/sh'] })
  const first = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'printf first'], { cwd: '.' })
  await nc.awaitBackgroundCommand(host, first.taskId)
  const out = {}
  try {
    out.sync = { value: nc.listBackgroundCommands(host).length }
  } catch (e) {
    out.sync = outcome(e)
  }
  let pending
  try {
    pending = native.logText(first.taskId, 'stdout')
  } catch (e) {
    out.async = { threw: outcome(e) }
  }
  if (pending) {
    out.promise = pending instanceof Promise
    try {
      out.async = { value: await pending }
    } catch (e) {
      out.async = outcome(e)
    }
  }
  const second = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'printf second'], { cwd: '.' })
  out.status = nc.getBackgroundCommandStatus(host, second.taskId).taskId === second.taskId
  const settled = await nc.awaitBackgroundCommand(host, second.taskId)
  out.after = { state: settled.state, exitCode: settled.exitCode }
  console.log(JSON.stringify(out))
})()
`

function run(env: Record<string, string>): Record<string, any> {
  const stdout = execFileSync(process.execPath, ['-e', SCRIPT, tempRoot('nlc-panic-')], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    // The panic hook's report goes to stderr; keep it out of the test's output.
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 30_000 * WAIT_SCALE,
  })
  return JSON.parse(stdout.trim().split('\n').pop()!)
}

test('a panic in a sync export and in an async export is NLC_INTERNAL naming the call, and the host answers on', () => {
  const out = run({ NEUROLINK_COMMANDS_TEST_PANIC: 'listCommands,logText' })
  for (const [which, call] of [
    ['sync', 'listCommands'],
    ['async', 'logText'],
  ] as const) {
    assert.equal(out[which].code, 'NLC_INTERNAL', `${which}: ${JSON.stringify(out[which])}`)
    assert.equal(out[which].isError, true)
    assert.match(
      out[which].message,
      new RegExp(
        `^Internal error in neurolink-commands \\(a bug, not a refusal\\): ${call} panicked \\(NEUROLINK_COMMANDS_TEST_PANIC names ${call}\\)\\. That call failed; the host and its other commands keep working\\. Please report this message\\.$`,
      ),
    )
  }
  assert.equal(out.promise, true, 'the async export returned its promise and rejected it')
  // After both panics the host starts a command, gives its status and settles it.
  assert.equal(out.status, true)
  assert.deepEqual(out.after, { state: 'exited', exitCode: 0 })
})

test('the control: without the hook the same calls answer', () => {
  const out = run({ NEUROLINK_COMMANDS_TEST_PANIC: '' })
  assert.deepEqual(out.sync, { value: 1 })
  assert.deepEqual(out.async, { value: 'first' })
  assert.equal(out.promise, true)
  assert.equal(out.status, true)
  assert.deepEqual(out.after, { state: 'exited', exitCode: 0 })
})

test('a hook naming another export leaves these calls alone', () => {
  const out = run({ NEUROLINK_COMMANDS_TEST_PANIC: 'gitToolArgs' })
  assert.deepEqual(out.sync, { value: 1 })
  assert.deepEqual(out.async, { value: 'first' })
  assert.deepEqual(out.after, { state: 'exited', exitCode: 0 })
})

test('a panic while napi converts a status the engine built (after the export returned) is NLC_INTERNAL too, thrown or rejected', () => {
  // Only the status object panics: the start's handle is built, and the
  // synchronous status call throws while the await's promise rejects.
  const script = `
const nc = require(${JSON.stringify(ROOT)})
const outcome = (e) => ({ code: e.code, message: e.message })
;(async () => {
  const host = {}
  nc.setBackgroundCommandPolicy(host, { cwdRoot: process.argv[1], allowedExecutables: ['/bin/sh'] })
  const h = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'printf ok'], { cwd: '.' })
  const out = { started: typeof h.taskId }
  try { nc.getBackgroundCommandStatus(host, h.taskId); out.status = 'no error' } catch (e) { out.status = outcome(e) }
  try { await nc.awaitBackgroundCommand(host, h.taskId); out.awaited = 'no error' } catch (e) { out.awaited = outcome(e) }
  out.listed = nc.listBackgroundCommands(host).map((c) => c.taskId === h.taskId)
  console.log(JSON.stringify(out))
})()
`
  const stdout = execFileSync(process.execPath, ['-e', script, tempRoot('nlc-panic-')], {
    env: { ...process.env, NEUROLINK_COMMANDS_TEST_PANIC: 'statusObject' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 30_000 * WAIT_SCALE,
  })
  const out = JSON.parse(stdout.trim().split('\n').pop()!)
  assert.equal(out.started, 'string')
  const expected = {
    code: 'NLC_INTERNAL',
    message:
      'Internal error in neurolink-commands (a bug, not a refusal): building the status object panicked (NEUROLINK_COMMANDS_TEST_PANIC names statusObject). That call failed; the host and its other commands keep working. Please report this message.',
  }
  assert.deepEqual(out.status, expected)
  assert.deepEqual(out.awaited, expected)
  assert.deepEqual(out.listed, [true])
})
