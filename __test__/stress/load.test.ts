// Load: 500 commands started at once, a seeded random mix of fast exits, big
// outputs hitting the cap, timeouts, kills and grandchildren. Run by
// `pnpm run test:stress` (not by the main suite); see docs/internals/hardening.md for
// how long it takes. Reproduce a run with LOAD_SEED=<seed> (printed as a
// diagnostic).
//
// Checked for every command: it settles; its state (and exit code / signal)
// matches what it was made to do; stdoutBytes = the log file's size = the
// banked size (likewise stderr); pages reassemble to the log decoded as
// Buffer.toString does. Afterwards: no process of any command's group
// survives, no zombie child of this process remains, and this process's open
// descriptors and threads return to where they started (threads within a
// small constant: runtime threads that are created lazily and linger).
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { test } from 'node:test'

import { groupMembers, hostWith, logPath, nc, procStats, readPages, SETTLED_STATES, tempRoot, waitFor } from '../helpers.ts'

const SH = '/bin/sh'
const COUNT = Number(process.env.LOAD_COUNT ?? 500)
const CAP = 100_000
/** Threads a runtime may add lazily and keep for a while (tokio's blocking pool keeps idle threads ~10 s). */
const THREAD_SLACK = 2

type Kind = 'exit' | 'cap' | 'timeout' | 'kill' | 'grandchild-held' | 'grandchild-detached' | 'grandchild-kill'
const KINDS: Kind[] = ['exit', 'exit', 'cap', 'timeout', 'kill', 'grandchild-held', 'grandchild-detached', 'grandchild-kill']

/** mulberry32: a small seeded PRNG, so a failing mix can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function openFds(): number {
  return readdirSync('/proc/self/fd').length
}

function threads(): number {
  const m = /^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))
  return Number(m![1])
}

/** Children of this process that are zombies. */
function zombieChildren(): number[] {
  return procStats()
    .filter((p) => p.state === 'Z' && p.ppid === process.pid)
    .map((p) => p.pid)
}

interface Plan {
  kind: Kind
  script: string
  timeoutMs?: number
  exitCode?: number
  killAfterMs?: number
}

function plan(kind: Kind, r: () => number, i: number): Plan {
  switch (kind) {
    case 'exit': {
      const code = Math.floor(r() * 4)
      return { kind, exitCode: code, script: `echo $$; printf 'out %s\\n' ${i}; printf 'err %s' ${i} >&2; exit ${code}` }
    }
    case 'cap':
      return { kind, script: `echo $$; exec head -c ${CAP * 4} /dev/urandom` }
    case 'timeout':
      return { kind, timeoutMs: 200 + Math.floor(r() * 1300), script: 'echo $$; exec sleep 30' }
    case 'kill':
      return { kind, killAfterMs: Math.floor(r() * 400), script: 'echo $$; printf partial >&2; sleep 30' }
    case 'grandchild-held':
      // The leader exits; a grandchild keeps the pipes: settles after the drain grace, group stopped.
      return { kind, script: 'echo $$; sleep 30 & echo leader-done' }
    case 'grandchild-detached':
      return { kind, script: 'echo $$; sleep 30 >/dev/null 2>&1 & exit 0' }
    case 'grandchild-kill':
      return { kind, killAfterMs: Math.floor(r() * 400), script: 'echo $$; sleep 30 & sleep 30 & wait' }
  }
}

async function pidOf(host: object, taskId: string): Promise<number> {
  const line = await waitFor(
    async () => {
      const p = await nc.readBackgroundCommandOutput(host, taskId, { stream: 'stdout', limit: 32 })
      return p.content.includes('\n') && p.content.split('\n')[0]
    },
    60_000,
    `the pid line of ${taskId}`,
  )
  return Number(line)
}

function checkState(p: Plan, st: nc.BackgroundCommandStatus): void {
  const what = `${p.kind} ${st.taskId}: ${st.state} ${st.error ?? ''}`
  switch (p.kind) {
    case 'exit':
      assert.equal(st.state, 'exited', what)
      assert.equal(st.exitCode, p.exitCode, what)
      assert.equal(st.error, undefined, what)
      break
    case 'cap':
      assert.equal(st.state, 'output-limit', what)
      assert.equal(st.stdoutBytes, CAP, what)
      assert.match(st.error ?? '', /stdout reached the 100000-byte cap .*banked in full/, what)
      break
    case 'timeout':
      assert.equal(st.state, 'timeout', what)
      assert.equal(st.signal, 'SIGTERM', what)
      assert.match(st.error ?? '', new RegExp(`${p.timeoutMs}ms budget`), what)
      break
    case 'kill':
    case 'grandchild-kill':
      assert.equal(st.state, 'killed', what)
      assert.equal(st.signal, 'SIGTERM', what)
      assert.match(st.error ?? '', /killed with SIGTERM by the caller/, what)
      break
    case 'grandchild-held':
      assert.equal(st.state, 'exited', what)
      assert.equal(st.exitCode, 0, what)
      assert.match(st.error ?? '', /descendants still held its output open/, what)
      break
    case 'grandchild-detached':
      assert.equal(st.state, 'exited', what)
      assert.equal(st.exitCode, 0, what)
      break
  }
}

test(`${COUNT} commands at once: every one settles as it should, every byte is accounted for, nothing is left behind`, async (t) => {
  const seed = Number(process.env.LOAD_SEED ?? Date.now() % 2 ** 31)
  t.diagnostic(`LOAD_SEED=${seed}`)
  const r = rng(seed)
  const root = tempRoot('nlc-load-')
  const host = hostWith(root, [SH], { maxOutputBytes: CAP, killGraceMs: 2000 })
  const taskIds: string[] = []
  t.after(() => {
    for (const id of taskIds) rmSync(dirname(logPath(id, 'stdout')), { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  })

  // Warm up: the runtime, its blocking pool, libuv's pool and the watchdog exist before the baseline.
  const warm = await Promise.all(Array.from({ length: 8 }, () => nc.startBackgroundCommand(host, [SH, '-c', 'echo warm'], { cwd: '.' })))
  for (const h of warm) {
    taskIds.push(h.taskId)
    await nc.awaitBackgroundCommand(host, h.taskId)
    await Promise.all(Array.from({ length: 8 }, () => nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })))
  }
  await new Promise((res) => setTimeout(res, 200))
  const fdsBefore = openFds()
  const threadsBefore = threads()
  t.diagnostic(`baseline: ${fdsBefore} fds, ${threadsBefore} threads`)

  const plans = Array.from({ length: COUNT }, (_, i) => plan(KINDS[Math.floor(r() * KINDS.length)]!, r, i))
  const t0 = Date.now()
  const handles = await Promise.all(plans.map((p) => nc.startBackgroundCommand(host, [SH, '-c', p.script], { cwd: '.', ...(p.timeoutMs ? { timeoutMs: p.timeoutMs } : {}) })))
  const tStarted = Date.now() - t0
  for (const h of handles) taskIds.push(h.taskId)
  let peakFds = openFds()

  const results = await Promise.all(
    handles.map(async (h, i) => {
      const p = plans[i]!
      const pgid = await pidOf(host, h.taskId)
      peakFds = Math.max(peakFds, openFds())
      if (p.killAfterMs !== undefined) {
        await new Promise((res) => setTimeout(res, p.killAfterMs))
        const killed = await nc.killBackgroundCommand(host, h.taskId)
        assert.ok(SETTLED_STATES.includes(killed.state), `kill resolves with the settled status (${killed.state})`)
      }
      const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 60_000 })
      return { p, st, pgid }
    }),
  )
  const tSettled = Date.now() - t0

  const counts: Record<string, number> = {}
  for (const { p, st, pgid } of results) {
    counts[p.kind] = (counts[p.kind] ?? 0) + 1
    assert.ok(SETTLED_STATES.includes(st.state), `${st.taskId} settled (${st.state})`)
    checkState(p, st)
    for (const stream of ['stdout', 'stderr'] as const) {
      const bytes = stream === 'stdout' ? st.stdoutBytes : st.stderrBytes
      const file = logPath(st.taskId, stream)
      assert.equal(statSync(file).size, bytes, `${st.taskId} ${stream}Bytes = the log's size`)
      assert.equal(st[stream]!.sizeBytes, bytes, `${st.taskId} ${stream}: banked size`)
      const { text } = await readPages(host, st.taskId, stream, 200_000)
      assert.equal(text, readFileSync(file).toString('utf8'), `${st.taskId} ${stream}: pages reassemble to the log`)
    }
    assert.equal(readFileSync(logPath(st.taskId, 'stdout'), 'utf8').split('\n')[0], String(pgid))
  }
  const tChecked = Date.now() - t0

  // Nothing survives: no group member, no zombie child.
  await waitFor(() => results.every(({ pgid }) => groupMembers(pgid).length === 0), 10_000, 'every command group gone')
  await waitFor(() => zombieChildren().length === 0, 10_000, 'no zombie children')
  assert.deepEqual(nc.backgroundCommandCounts(host).running, 0)
  // Descriptors come back exactly; threads within the lazily-created slack.
  await waitFor(() => openFds() <= fdsBefore, 10_000, `open fds back to ${fdsBefore} (now ${openFds()})`)
  await waitFor(() => threads() <= threadsBefore + THREAD_SLACK, 20_000, `threads back to ${threadsBefore} + ${THREAD_SLACK} (now ${threads()})`)
  const tClean = Date.now() - t0

  t.diagnostic(`mix: ${JSON.stringify(counts)}`)
  t.diagnostic(`started all ${COUNT} in ${tStarted} ms; all settled after ${tSettled} ms; invariants checked after ${tChecked} ms; clean after ${tClean} ms`)
  t.diagnostic(`fds: ${fdsBefore} before, peak ${peakFds}, ${openFds()} after; threads: ${threadsBefore} before, ${threads()} after`)
})
