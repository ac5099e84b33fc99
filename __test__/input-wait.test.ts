// Waiting for input (SPEC §15): a running command blocked reading its stdin
// pipe or its terminal, quiet for inputWaitMs, says so — in its status, its
// list row, the tools' results and once per episode to a listener. Real
// programs throughout: python3 input(), sh's read builtin, a node readline
// prompt (epoll), a terminal prompt; and the commands that must never count.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { NODE, nc, tempRoot, waitFor, WAIT_SCALE } from './helpers.ts'

const SH = '/bin/sh'
const PY = '/usr/bin/python3'
const SLEEP = '/bin/sleep'
const LINUX = process.platform === 'linux'
/** Where the runner can tell: Linux, natively (under qemu-user the kernel shows the emulator's calls). */
const SEES = LINUX && process.env.NLC_TEST_QEMU !== '1'
/** The quiet time the tests ask for, and how long after it a report may take at most. */
const WAIT_MS = 300
const BOUND_MS = 3000 * WAIT_SCALE

function withPolicy(extra: Partial<nc.BackgroundCommandPolicy> = {}): object {
  const h = {}
  nc.setBackgroundCommandPolicy(h, {
    allowedExecutables: [SH, PY, SLEEP, NODE],
    cwdRoot: tempRoot('nlc-input-wait-'),
    defaultTimeoutMs: 60_000,
    inputWaitMs: WAIT_MS,
    ...extra,
  })
  return h
}

function waiting(h: object, taskId: string): boolean | undefined {
  return nc.getBackgroundCommandStatus(h, taskId).waitingForInput
}

/** Poll (every 10 ms, with a deadline) until the status says waiting; how long it took from `since`. */
async function untilWaiting(h: object, taskId: string, since: number): Promise<number> {
  await waitFor(() => waiting(h, taskId) === true, WAIT_MS + BOUND_MS, `${taskId} waiting for input`)
  return Date.now() - since
}

/** The field stays exactly false over several of the watch's check periods. */
async function staysFalse(h: object, taskId: string, ms = WAIT_MS * 5): Promise<void> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    const st = nc.getBackgroundCommandStatus(h, taskId)
    assert.equal(st.waitingForInput, false, `${taskId} (${st.state}) reported waiting for input`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

async function stdoutText(h: object, taskId: string): Promise<string> {
  return (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout', limit: 200_000 })).content
}

test('python3 input() on a stdin pipe is waiting after inputWaitMs, and not after the answer', { skip: !SEES }, async () => {
  const h = withPolicy()
  const t0 = Date.now()
  const { taskId } = await nc.startBackgroundCommand(h, [PY, '-c', 'x = input(); print("got", x)'], { cwd: '.', stdin: 'pipe' })
  assert.equal(waiting(h, taskId), false)
  const took = await untilWaiting(h, taskId, t0)
  // Never before it has been quiet for inputWaitMs.
  assert.ok(took >= WAIT_MS, `reported after ${took}ms, before the ${WAIT_MS}ms of quiet`)
  const row = nc.listBackgroundCommands(h).find((r) => r.taskId === taskId)
  assert.equal(row?.waitingForInput, true)
  await nc.writeBackgroundCommandInput(h, taskId, 'Ada\n')
  assert.equal(waiting(h, taskId), false)
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(st.state, 'exited')
  assert.equal(st.waitingForInput, false)
  assert.equal(await stdoutText(h, taskId), 'got Ada\n')
})

test('a confined command (Landlock + seccomp) blocked on its pipe is seen the same way', { skip: !SEES }, async () => {
  const h = withPolicy({ confine: {} })
  const t0 = Date.now()
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'read x; echo "[$x]"'], { cwd: '.', stdin: 'pipe' })
  assert.equal(nc.getBackgroundCommandStatus(h, taskId).confined, true)
  await untilWaiting(h, taskId, t0)
  await nc.writeBackgroundCommandInput(h, taskId, 'c\n')
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(st.exitCode, 0)
  assert.equal(await stdoutText(h, taskId), '[c]\n')
})

test('a child of the command blocked on the inherited pipe counts (the leader only waits for it)', { skip: !SEES }, async () => {
  const h = withPolicy()
  const t0 = Date.now()
  // sh forks python3 and sits in wait4; python3 reads the inherited stdin.
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', `${PY} -c 'print(input())'; echo done`], { cwd: '.', stdin: 'pipe' })
  await untilWaiting(h, taskId, t0)
  await nc.writeBackgroundCommandInput(h, taskId, 'kid\n')
  await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(await stdoutText(h, taskId), 'kid\ndone\n')
})

test('a node readline prompt (the event loop in epoll_wait on stdin) is waiting', { skip: !SEES }, async () => {
  const h = withPolicy()
  const script = "require('readline').createInterface({ input: process.stdin }).on('line', (l) => { console.log('got ' + l); process.exit(0) })"
  const t0 = Date.now()
  const { taskId } = await nc.startBackgroundCommand(h, [NODE, '-e', script], { cwd: '.', stdin: 'pipe' })
  await untilWaiting(h, taskId, t0)
  await nc.writeBackgroundCommandInput(h, taskId, 'Bob\n')
  assert.equal(waiting(h, taskId), false)
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(st.exitCode, 0)
  assert.equal(await stdoutText(h, taskId), 'got Bob\n')
})

test('select() and poll() watching stdin are waiting; watching another pipe is not', { skip: !SEES }, async () => {
  const h = withPolicy()
  const select = await nc.startBackgroundCommand(h, [PY, '-c', 'import select, sys; select.select([sys.stdin], [], []); print(sys.stdin.readline().strip())'], {
    cwd: '.',
    stdin: 'pipe',
  })
  const poll = await nc.startBackgroundCommand(h, [PY, '-c', 'import select, sys; p = select.poll(); p.register(0, select.POLLIN); p.poll(); print(sys.stdin.readline().strip())'], {
    cwd: '.',
    stdin: 'pipe',
  })
  // Its own pipe, never written: the wait is not on the command's input.
  const other = await nc.startBackgroundCommand(h, [PY, '-c', 'import os, select; r, w = os.pipe(); p = select.poll(); p.register(r, select.POLLIN); p.poll()'], {
    cwd: '.',
    stdin: 'pipe',
  })
  const t0 = Date.now()
  await Promise.all([untilWaiting(h, select.taskId, t0), untilWaiting(h, poll.taskId, t0)])
  await staysFalse(h, other.taskId)
  for (const { taskId } of [select, poll]) {
    await nc.writeBackgroundCommandInput(h, taskId, 'yes\n')
    const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
    assert.equal(st.exitCode, 0)
    assert.equal(await stdoutText(h, taskId), 'yes\n')
  }
  await nc.killBackgroundCommand(h, other.taskId)
})

test('a node process serving without reading its stdin pipe is not waiting', { skip: !SEES }, async () => {
  const h = withPolicy()
  // The same event loop in epoll_wait, but stdin is not in its interest list.
  const { taskId } = await nc.startBackgroundCommand(h, [NODE, '-e', 'setInterval(() => {}, 1000)'], { cwd: '.', stdin: 'pipe' })
  await new Promise((r) => setTimeout(r, 200))
  await staysFalse(h, taskId)
  await nc.killBackgroundCommand(h, taskId)
})

test('a terminal prompt is waiting; enter answers it', { skip: !SEES }, async () => {
  const h = withPolicy()
  const t0 = Date.now()
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'printf "name? "; read x; echo "hello $x"'], { cwd: '.', terminal: true })
  const took = await untilWaiting(h, taskId, t0)
  assert.ok(took >= WAIT_MS)
  assert.equal(await stdoutText(h, taskId), 'name? ')
  await nc.writeBackgroundCommandInput(h, taskId, 'Ada\r')
  assert.equal(waiting(h, taskId), false)
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(st.state, 'exited')
  assert.match(await stdoutText(h, taskId), /hello Ada/)
})

test('python3 input() in a terminal (GNU readline) is waiting', { skip: !SEES }, async () => {
  const h = withPolicy()
  const t0 = Date.now()
  const { taskId } = await nc.startBackgroundCommand(h, [PY, '-c', 'print("hi " + input("name? "))'], { cwd: '.', terminal: true })
  await untilWaiting(h, taskId, t0)
  await nc.writeBackgroundCommandInput(h, taskId, 'Lin\r')
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(st.exitCode, 0)
  assert.match(await stdoutText(h, taskId), /hi Lin/)
})

test('the listener hears each episode once: the first prompt, then the second', { skip: !SEES }, async () => {
  const h = withPolicy()
  const heard: nc.BackgroundCommandStatus[] = []
  const off = nc.onBackgroundCommandWaitingForInput(h, (s) => heard.push(s))
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'read a; echo "first $a"; read b; echo "second $b"'], { cwd: '.', stdin: 'pipe' })
  await waitFor(() => heard.length === 1, WAIT_MS + BOUND_MS, 'the first notice')
  assert.equal(heard[0].taskId, taskId)
  assert.equal(heard[0].state, 'running')
  // Still the same episode over several more checks: no second notice.
  await new Promise((r) => setTimeout(r, WAIT_MS * 4))
  assert.equal(heard.length, 1)
  assert.equal(waiting(h, taskId), true)
  await nc.writeBackgroundCommandInput(h, taskId, '1\n')
  await waitFor(() => heard.length === 2, WAIT_MS + BOUND_MS, 'the second notice')
  assert.match(await stdoutText(h, taskId), /^first 1\n$/)
  assert.equal(heard[1].waitingForInput, true)
  off()
  await nc.writeBackgroundCommandInput(h, taskId, '2\n', { end: true })
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(st.waitingForInput, false)
  assert.equal(await stdoutText(h, taskId), 'first 1\nsecond 2\n')
  assert.equal(heard.length, 2)
})

test('a listener that throws is a process warning; the others still hear', { skip: !SEES }, async () => {
  const h = withPolicy()
  const warnings: Error[] = []
  const onWarning = (w: Error) => warnings.push(w)
  process.on('warning', onWarning)
  try {
    const offBad = nc.onBackgroundCommandWaitingForInput(h, () => {
      throw new Error('boom')
    })
    let heard = 0
    const offGood = nc.onBackgroundCommandWaitingForInput(h, () => heard++)
    const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'read x'], { cwd: '.', stdin: 'pipe' })
    await waitFor(() => heard === 1, WAIT_MS + BOUND_MS, 'the notice')
    await waitFor(() => warnings.length > 0, 5000, 'the warning')
    assert.equal((warnings[0] as Error & { code?: string }).code, 'NLC_LISTENER_THREW')
    assert.match(warnings[0].message, /waiting-for-input listener threw \(boom\)/)
    offBad()
    offGood()
    await nc.writeBackgroundCommandInput(h, taskId, '', { end: true })
    await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  } finally {
    process.off('warning', onWarning)
  }
})

test('never waiting: sleep with a stdin pipe, a reader of /dev/null or of a closed pipe, a reader that keeps printing', { skip: !SEES }, async () => {
  const h = withPolicy()
  let notices = 0
  const off = nc.onBackgroundCommandWaitingForInput(h, () => notices++)
  const sleeper = await nc.startBackgroundCommand(h, [SLEEP, '5'], { cwd: '.', stdin: 'pipe' })
  // read gets end of file from /dev/null at once; then it sleeps.
  const nullReader = await nc.startBackgroundCommand(h, [SH, '-c', 'read x; sleep 5'], { cwd: '.' })
  // A background loop prints every 50 ms while the shell sits in read.
  // (Its own inputWaitMs, far above the 50 ms between lines, so a loaded
  // machine's scheduling pause cannot make it quiet.)
  const chatty = await nc.startBackgroundCommand(h, [SH, '-c', 'while :; do echo tick; sleep 0.05; done & read x; kill $!'], {
    cwd: '.',
    stdin: 'pipe',
    inputWaitMs: 2000,
  })
  // A pipe closed by the host: read gets end of file, and nothing is written any more.
  const closed = await nc.startBackgroundCommand(h, [SH, '-c', 'read x; read y; sleep 5'], { cwd: '.', stdin: 'pipe' })
  await nc.writeBackgroundCommandInput(h, closed.taskId, '', { end: true })
  await Promise.all([sleeper, nullReader, chatty, closed].map((c) => staysFalse(h, c.taskId, 3000)))
  assert.ok((await stdoutText(h, chatty.taskId)).includes('tick'))
  for (const r of nc.listBackgroundCommands(h)) assert.equal(r.waitingForInput, false)
  assert.equal(notices, 0)
  off()
  await nc.killAllBackgroundCommands(h)
})

test('command_status adds a hint naming command_input only while the command waits', { skip: !SEES }, async () => {
  const h = withPolicy()
  const tools = nc.createBackgroundCommandTools(h, { extra: ['command_input', 'command_list'] })
  const started = (await tools.run_command_bg.execute({ argv: [SH, '-c', 'read x; echo "[$x]"; sleep 5'], cwd: '.', stdin: true })) as nc.RunCommandResult
  const { taskId } = started
  const before = (await tools.command_status.execute({ taskId })) as nc.CommandStatusResult
  assert.equal(before.waitingForInput, false)
  assert.equal(before.hint, undefined)
  await untilWaiting(h, taskId, Date.now())
  const during = (await tools.command_status.execute({ taskId })) as nc.CommandStatusResult
  assert.equal(during.waitingForInput, true)
  assert.match(during.hint ?? '', new RegExp(`command_input \\{ "taskId": "${taskId}", "text"`))
  const list = (await tools.command_list!.execute({})) as nc.CommandListResult
  assert.equal(list.commands.find((c) => c.taskId === taskId)?.waitingForInput, true)
  const answered = (await tools.command_input!.execute({ taskId, text: 'ok', keys: ['enter'] })) as nc.CommandInputResult
  assert.equal(answered.waitingForInput, false)
  assert.equal(answered.hint, undefined)
  const after = (await tools.command_status.execute({ taskId })) as nc.CommandStatusResult
  assert.equal(after.hint, undefined)
  await nc.killBackgroundCommand(h, taskId)
})

test('inputWaitMs defaults to 2000 and is checked like the other durations', { skip: !SEES }, async () => {
  const h = withPolicy({ inputWaitMs: undefined })
  assert.throws(
    () => nc.setBackgroundCommandPolicy({}, { allowedExecutables: [SH], cwdRoot: tempRoot(), inputWaitMs: -1 }),
    (e: Error & { code?: string }) => e.code === 'NLC_INVALID_ARGUMENT' && /inputWaitMs must be a positive finite number of milliseconds/.test(e.message),
  )
  await assert.rejects(
    async () => nc.startBackgroundCommand(h, [SH, '-c', 'read x'], { cwd: '.', stdin: 'pipe', inputWaitMs: 0 }),
    (e: Error & { code?: string }) => e.code === 'NLC_INVALID_ARGUMENT' && /inputWaitMs/.test(e.message),
  )
  const t0 = Date.now()
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'read x'], { cwd: '.', stdin: 'pipe' })
  const took = await untilWaiting(h, taskId, t0)
  assert.ok(took >= 2000, `reported after ${took}ms under the 2000ms default`)
  await nc.writeBackgroundCommandInput(h, taskId, '', { end: true })
  await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
})

test('the field is a boolean on Linux and absent where the platform cannot tell', async () => {
  const h = withPolicy()
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'read x'], { cwd: '.', stdin: 'pipe' })
  const st = nc.getBackgroundCommandStatus(h, taskId)
  if (SEES) assert.equal(st.waitingForInput, false)
  else assert.equal('waitingForInput' in st, false)
  await nc.killBackgroundCommand(h, taskId)
})
