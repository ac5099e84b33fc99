// No orphans (SPEC §6): a child Node host starts commands, each with
// a background grandchild (one ignores SIGTERM), and then ends — process.exit,
// an uncaught exception, an unhandled rejection, SIGTERM, SIGINT, SIGKILL, a
// SIGKILL of its whole process group. Afterwards nothing it started may be
// left in /proc: not the commands, not their children, not the watchdog.
// Every process of a run carries NLC_MARK=<uuid> in its environment (the host
// gets it, the commands and the watchdog inherit it), so survivors are found
// by environment, whatever group or parent they ended up with.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'

import { alive, marked, ours, procState, tempRoot, WAIT_SCALE, waitFor } from './helpers.ts'

const FIXTURE = join(__dirname, 'fixtures', 'exit-host.js')

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return ''
  }
}

function describeLeft(mark: string): string {
  return marked(mark)
    .map((p) => `${p}: ${cmdline(p)}`)
    .join('; ')
}

interface Ready {
  ready: true
  pid: number
  commands: { leader: number; bg: number }[]
}

interface Run {
  child: ChildProcess
  mark: string
  ready: Ready
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  stderr: () => string
  go: () => void
  stdout: () => string
}

/** Start the fixture host and wait until its commands and grandchildren run.
 * Hosts in the exit/throw/reject modes end once `go` is written to their stdin. */
async function startHost(t: TestContext, mode: string, detached = false): Promise<Run> {
  const mark = randomUUID()
  const child = spawn(process.execPath, [FIXTURE, mode, tempRoot('nlc-exit-')], {
    env: { ...process.env, NLC_MARK: mark },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached,
  })
  let err = ''
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s))
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  t.after(() => {
    // Whatever happened, leave nothing behind.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    for (const pid of marked(mark)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  })
  let out = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s))
  const ready = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`the host exited early (${child.exitCode}): ${err}`)
      const line = out.split('\n').find((l) => l.startsWith('{'))
      return line ? (JSON.parse(line) as Ready) : null
    },
    // A host's start (a Node, the addon, three commands) takes seconds under qemu-user on a loaded machine.
    60_000,
    'the host to start its commands',
  )
  return { child, mark, ready, ended, stderr: () => err, go: () => child.stdin!.write('go\n'), stdout: () => out }
}

/** What must be running before the host ends: the host, 3 commands with grandchildren, the watchdog. */
function assertEverythingRuns(run: Run): number {
  const { mark, ready } = run
  assert.equal(ready.commands.length, 3)
  const live = marked(mark)
  assert.ok(live.includes(ready.pid), 'the host runs')
  for (const c of ready.commands) {
    assert.ok(live.includes(c.leader), `leader ${c.leader} runs`)
    assert.ok(live.includes(c.bg), `grandchild ${c.bg} runs`)
  }
  const watchdog = live.find((p) => cmdline(p).includes('neurolink-commands-watchdog'))
  assert.ok(watchdog, `a watchdog runs (marked: ${describeLeft(mark)})`)
  return watchdog
}

/** waitFor, failing with what is still left at the deadline. */
async function within(check: () => boolean, what: string, mark: string, ms = 10_000): Promise<void> {
  try {
    await waitFor(check, ms, what)
  } catch (e) {
    throw new Error(`${(e as Error).message}; still there: ${describeLeft(mark) || 'nothing marked'}`)
  }
}

/**
 * Wait until nothing marked is left; returns how long the leaders and the
 * last process took to go, measured from `t0`.
 */
async function assertNothingLeft(t: TestContext, run: Run, t0: number): Promise<void> {
  const { mark, ready } = run
  const leaders = ready.commands.map((c) => c.leader)
  await within(() => leaders.every((p) => !ours(p, mark)), 'the leaders to be gone', mark)
  const leadersGone = Date.now() - t0
  await within(() => marked(mark).length === 0, 'every process of the host to be gone', mark)
  const allGone = Date.now() - t0
  for (const c of ready.commands) {
    assert.ok(!ours(c.leader, mark) && !ours(c.bg, mark), `command ${c.leader} and its grandchild ${c.bg} are gone`)
  }
  t.diagnostic(`leaders gone after ${leadersGone}ms, everything after ${allGone}ms`)
  // The SIGTERM-ignoring grandchild needs the watchdog's SIGKILL (2 s after
  // the host died); nothing may take much longer than that (under qemu-user,
  // where every process runs several times slower, WAIT_SCALE times that).
  assert.ok(allGone < 6_000 * WAIT_SCALE, `the last process went after ${allGone}ms`)
}

const endings = [
  { how: 'exits normally (process.exit)', mode: 'exit', code: 0, stderr: undefined },
  { how: 'throws an uncaught exception', mode: 'throw', code: 1, stderr: /uncaught on purpose/ },
  { how: 'dies of an unhandled rejection', mode: 'reject', code: 1, stderr: /unhandled on purpose/ },
]

for (const { how, mode, code, stderr } of endings) {
  test(`host ${how}: nothing it started is left`, async (t) => {
    const run = await startHost(t, mode)
    assertEverythingRuns(run)
    const t0 = Date.now()
    run.go()
    const end = await run.ended
    assert.equal(end.code, code)
    if (stderr) assert.match(run.stderr(), stderr)
    await assertNothingLeft(t, run, t0)
  })
}

for (const sig of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
  test(`host receives ${sig}: nothing it started is left`, async (t) => {
    const run = await startHost(t, 'wait')
    assertEverythingRuns(run)
    const t0 = Date.now()
    run.child.kill(sig)
    const end = await run.ended
    assert.equal(end.signal, sig)
    await assertNothingLeft(t, run, t0)
  })
}

test("SIGKILL of the host's whole process group: the watchdog (in its own group) still stops everything", async (t) => {
  const run = await startHost(t, 'wait', true)
  const watchdog = assertEverythingRuns(run)
  assert.notEqual(procState(watchdog), null)
  const t0 = Date.now()
  process.kill(-run.ready.pid, 'SIGKILL')
  const end = await run.ended
  assert.equal(end.signal, 'SIGKILL')
  await assertNothingLeft(t, run, t0)
})

test('without the watchdog, the in-process exit hook alone still sends SIGTERM to every group', async (t) => {
  const run = await startHost(t, 'exit')
  const watchdog = assertEverythingRuns(run)
  process.kill(watchdog, 'SIGKILL')
  await waitFor(() => !alive(watchdog), 5_000, 'the watchdog to be gone')
  const t0 = Date.now()
  run.go()
  const end = await run.ended
  assert.equal(end.code, 0)
  const [plain, ignoresTerm, detached] = run.ready.commands
  await within(() => [plain.leader, plain.bg, ignoresTerm.leader, detached.leader, detached.bg].every((p) => !ours(p, run.mark)), 'every process that honours SIGTERM to be gone', run.mark, 5_000)
  t.diagnostic(`SIGTERM-honouring processes gone after ${Date.now() - t0}ms`)
  // What only the watchdog's SIGKILL would have stopped: the grandchild that
  // ignores SIGTERM outlives a host whose watchdog was killed (t.after stops it).
  assert.deepEqual(marked(run.mark), [ignoresTerm.bg])
})

test('host exits while the engine is still spawning a burst of commands: none of them is left', async (t) => {
  // Three rounds: the window between a spawn and its bookkeeping is short.
  for (let round = 0; round < 3; round++) {
    const run = await startHost(t, 'burst')
    assertEverythingRuns(run)
    const t0 = Date.now()
    run.go()
    const end = await run.ended
    assert.equal(end.code, 0)
    await assertNothingLeft(t, run, t0)
  }
})

test('host killed by a signal in the middle of a burst of starts: only a start in flight can survive SIGKILL (at most 2), none survives SIGTERM/SIGINT', async (t) => {
  // The documented limit: a start whose process exists but whose group the
  // watchdog has not been told yet (one per engine worker thread, of which
  // there are 2) is not stopped when the host dies without running its exit
  // hook. Everything else is.
  const survivors: string[] = []
  for (const sig of ['SIGKILL', 'SIGTERM', 'SIGINT'] as const) {
    const run = await startHost(t, 'burst-wait')
    assertEverythingRuns(run)
    run.go()
    await waitFor(() => run.stdout().includes('burst'), 10_000, 'the burst to begin')
    run.child.kill(sig)
    const end = await run.ended
    assert.equal(end.signal, sig)
    // The watchdog's SIGKILL comes 2 s after the host died; wait past it.
    const watchdogDone = () =>
      !marked(run.mark).some((p) => {
        const c = cmdline(p)
        return c.includes('neurolink-commands-watchdog') || c === 'sleep 2'
      })
    await within(watchdogDone, 'the watchdog to finish', run.mark)
    const leaders = run.ready.commands.map((c) => c.leader)
    // The watchdog's last SIGKILL may still be landing: poll, bounded.
    await within(() => run.ready.commands.every((c) => !ours(c.leader, run.mark) && !ours(c.bg, run.mark)), 'the commands started before the burst to be gone', run.mark, 5_000)
    const left = marked(run.mark)
    // The adapter's own SIGTERM/SIGINT listener (the host has none) stops
    // spawning and every group before the signal takes its default course.
    if (sig !== 'SIGKILL') assert.deepEqual(left, [], `nothing survives ${sig}: ${describeLeft(run.mark)}`)
    assert.ok(left.length <= 4, `at most 2 commands (a leader and its child each) survive, not ${left.length}: ${describeLeft(run.mark)}`)
    for (const p of left) {
      assert.ok(!leaders.includes(p))
      assert.match(cmdline(p), /^(sleep 300|\/bin\/sh -c sleep 300 & exec sleep 300)$/)
    }
    survivors.push(`${sig}: ${left.length} process(es)`)
  }
  t.diagnostic(`survivors after a signal mid-burst — ${survivors.join(', ')}`)
})

test('a host that turns SIGTERM/SIGINT into process.exit leaves nothing, even mid-burst', async (t) => {
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    const run = await startHost(t, 'burst-trap')
    assertEverythingRuns(run)
    run.go()
    await waitFor(() => run.stdout().includes('burst'), 10_000, 'the burst to begin')
    const t0 = Date.now()
    run.child.kill(sig)
    const end = await run.ended
    assert.equal(end.code, sig === 'SIGTERM' ? 143 : 130)
    await assertNothingLeft(t, run, t0)
  }
})
