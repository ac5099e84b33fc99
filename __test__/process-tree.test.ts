// Whole process trees (SPEC §6): every signal the runner sends goes
// to the command's process group, a grandchild holding the pipes cannot make
// a command hang, and nothing of the group is left afterwards. Every check
// reads /proc; every process a test starts carries a unique NLC_MARK in its
// environment so survivors are found even if they left the group.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { test, type TestContext } from 'node:test'

import { alive, groupMembers, hostWith, marked, nc, ours, tempRoot, waitFor } from './helpers.ts'

const SH = '/bin/sh'

/** Signals that `pid` ignores (the SigIgn mask of /proc/<pid>/status). */
function ignoredMask(pid: number): bigint {
  try {
    const m = /SigIgn:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? BigInt('0x' + m[1]) : 0n
  } catch {
    return 0n
  }
}
const TERM_BIT = 1n << 14n // SIGTERM = 15

/** A host, a mark and an environment; everything is stopped after the test, pass or fail. */
function setup(t: TestContext, extra: Partial<nc.BackgroundCommandPolicy> = {}) {
  const root = tempRoot('nlc-tree-')
  const host = hostWith(root, [SH], extra)
  const mark = randomUUID()
  const env = { PATH: '/usr/bin:/bin', NLC_MARK: mark }
  t.after(async () => {
    await nc.killAllBackgroundCommands(host)
    for (const pid of marked(mark)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  })
  return { root, host, mark, env }
}

/** Wait until the command printed `pids <leader> <background child>`. */
async function pidsOf(host: object, taskId: string): Promise<{ leader: number; bg: number }> {
  return waitFor(
    async () => {
      const page = await nc.readBackgroundCommandOutput(host, taskId, { stream: 'stdout' })
      const m = /pids (\d+) (\d+)/.exec(page.content)
      return m ? { leader: Number(m[1]), bg: Number(m[2]) } : null
    },
    5_000,
    'the command to print its pids',
  )
}

async function assertAllGone(mark: string, pgid: number, pids: number[]): Promise<void> {
  await waitFor(
    () => groupMembers(pgid).length === 0 && marked(mark).length === 0 && pids.every((p) => !ours(p, mark)),
    5_000,
    `group ${pgid} and every marked process to be gone (left: group ${groupMembers(pgid)}, marked ${marked(mark)})`,
  )
}

const TREE = 'sleep 300 & echo "pids $$ $!"; sleep 300'

test('kill (SIGTERM) stops the leader and its background grandchild', async (t) => {
  const { host, mark, env } = setup(t, { killGraceMs: 500 })
  const h = await nc.startBackgroundCommand(host, [SH, '-c', TREE], { cwd: '.', env })
  const { leader, bg } = await pidsOf(host, h.taskId)
  assert.ok(alive(bg), 'the grandchild runs before the kill')
  assert.ok(groupMembers(leader).includes(bg), 'the grandchild is in the leader’s group')
  const st = await nc.killBackgroundCommand(host, h.taskId)
  assert.equal(st.state, 'killed')
  assert.equal(st.signal, 'SIGTERM')
  await assertAllGone(mark, leader, [leader, bg])
})

test('kill with SIGKILL reaches the whole group too', async (t) => {
  const { host, mark, env } = setup(t, { killGraceMs: 500 })
  const h = await nc.startBackgroundCommand(host, [SH, '-c', TREE], { cwd: '.', env })
  const { leader, bg } = await pidsOf(host, h.taskId)
  const st = await nc.killBackgroundCommand(host, h.taskId, 'SIGKILL')
  assert.equal(st.state, 'killed')
  assert.equal(st.signal, 'SIGKILL')
  await assertAllGone(mark, leader, [leader, bg])
})

test('timeout stops the whole group', async (t) => {
  const { host, mark, env } = setup(t, { killGraceMs: 500 })
  const h = await nc.startBackgroundCommand(host, [SH, '-c', TREE], { cwd: '.', env, timeoutMs: 400 })
  const { leader, bg } = await pidsOf(host, h.taskId)
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 5_000 })
  assert.equal(st.state, 'timeout')
  assert.match(st.error ?? '', /400ms budget/)
  await assertAllGone(mark, leader, [leader, bg])
})

test('the output cap stops a flooding command and its grandchild', async (t) => {
  const { host, mark, env } = setup(t, { killGraceMs: 500 })
  const script = 'sleep 300 & echo "pids $$ $!"; while :; do echo 0123456789abcdef0123456789abcdef; done'
  const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.', env, maxOutputBytes: 20_000 })
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 5_000 })
  assert.equal(st.state, 'output-limit')
  assert.equal(st.stdoutBytes, 20_000)
  const { leader, bg } = await pidsOf(host, h.taskId)
  await assertAllGone(mark, leader, [leader, bg])
})

test('killAllBackgroundCommands stops every group of the host', async (t) => {
  const { host, mark, env } = setup(t, { killGraceMs: 500 })
  const a = await nc.startBackgroundCommand(host, [SH, '-c', TREE], { cwd: '.', env })
  const b = await nc.startBackgroundCommand(host, [SH, '-c', TREE], { cwd: '.', env })
  const pa = await pidsOf(host, a.taskId)
  const pb = await pidsOf(host, b.taskId)
  assert.equal(await nc.killAllBackgroundCommands(host), 2)
  assert.equal(nc.getBackgroundCommandStatus(host, a.taskId).state, 'killed')
  assert.equal(nc.getBackgroundCommandStatus(host, b.taskId).state, 'killed')
  await assertAllGone(mark, pa.leader, [pa.leader, pa.bg])
  await assertAllGone(mark, pb.leader, [pb.leader, pb.bg])
})

test("sh -c 'sleep 300 & echo started' settles exited 0 within the drain grace and the sleep is gone", async (t) => {
  const { host, mark, env } = setup(t)
  const t0 = Date.now()
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 300 & echo started'], { cwd: '.', env })
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 10_000 })
  const took = Date.now() - t0
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 0)
  assert.ok(took < 5_000, `settled after ${took}ms, not within the drain grace`)
  assert.ok(took >= 900, `settled after ${took}ms: the drain grace (1000ms) was not waited for`)
  assert.match(st.error ?? '', /descendants/)
  assert.match(st.error ?? '', /stopped/)
  assert.equal(st.tailPreview, '[stdout tail]\nstarted\n')
  await waitFor(() => marked(mark).length === 0, 5_000, `the sleep to be gone (left: ${marked(mark)})`)
})

test('after the drain grace the state and exit code are the leader’s', async (t) => {
  const { host, mark, env } = setup(t)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 300 & echo "pids $$ $!"; exit 3'], { cwd: '.', env })
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 10_000 })
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 3)
  assert.equal('signal' in st, false)
  assert.match(st.error ?? '', /descendants/)
  const { leader, bg } = await pidsOf(host, h.taskId)
  await assertAllGone(mark, leader, [leader, bg])
})

test('a descendant that does not hold the pipes is stopped when the leader exits', async (t) => {
  const { host, mark, env } = setup(t)
  const t0 = Date.now()
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 300 >/dev/null 2>&1 & echo "pids $$ $!"'], { cwd: '.', env })
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 10_000 })
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 0)
  assert.ok(Date.now() - t0 < 3_000, 'no drain grace is needed when the pipes close with the leader')
  const { leader, bg } = await pidsOf(host, h.taskId)
  await assertAllGone(mark, leader, [leader, bg])
})

test('a grandchild that ignores SIGTERM (and holds the pipes) is gone after the grace', async (t) => {
  const { host, mark, env } = setup(t, { killGraceMs: 500 })
  const script = `(trap '' TERM; exec sleep 300) & echo "pids $$ $!"; sleep 300`
  const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.', env })
  const { leader, bg } = await pidsOf(host, h.taskId)
  await waitFor(() => (ignoredMask(bg) & TERM_BIT) !== 0n, 5_000, 'the grandchild to ignore SIGTERM')
  const t0 = Date.now()
  const st = await nc.killBackgroundCommand(host, h.taskId)
  assert.equal(st.state, 'killed')
  assert.ok(Date.now() - t0 < 3_000, `kill resolved after ${Date.now() - t0}ms`)
  await assertAllGone(mark, leader, [leader, bg])
})

test('a SIGTERM-ignoring grandchild that detached from the pipes is gone as soon as the leader ends', async (t) => {
  const { host, mark, env } = setup(t, { killGraceMs: 4_000 })
  const script = `(trap '' TERM; exec sleep 300 >/dev/null 2>&1) & echo "pids $$ $!"; sleep 300`
  const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.', env, timeoutMs: 300 })
  const { leader, bg } = await pidsOf(host, h.taskId)
  await waitFor(() => (ignoredMask(bg) & TERM_BIT) !== 0n, 5_000, 'the grandchild to ignore SIGTERM')
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 10_000 })
  assert.equal(st.state, 'timeout')
  assert.equal(st.signal, 'SIGTERM', 'the leader itself ended on SIGTERM')
  assert.ok(st.durationMs < 3_000, `settled after ${st.durationMs}ms: it waited for the 4000ms grace`)
  await assertAllGone(mark, leader, [leader, bg])
})

test('a process that calls setsid leaves the group: stopped with a cgroup ("tree"), not with the group only', async (t) => {
  const { host, mark, env } = setup(t, { killGraceMs: 500 })
  const script = 'setsid sleep 300 >/dev/null 2>&1 </dev/null & echo "pids $$ $!"; sleep 300'
  const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.', env })
  const { leader, bg } = await pidsOf(host, h.taskId)
  // setsid(1) forks when it is a group leader; it is not here, so $! is the sleep.
  await waitFor(() => alive(bg) && !groupMembers(leader).includes(bg), 5_000, 'the sleep to leave the group')
  const st = await nc.killBackgroundCommand(host, h.taskId)
  await waitFor(() => groupMembers(leader).length === 0, 5_000, 'the group to be gone')
  if (st.containment === 'tree') {
    await waitFor(() => !alive(bg), 1_000, 'the process in its own session to be stopped with the tree')
    assert.deepEqual(marked(mark), [])
  } else {
    assert.ok(alive(bg), 'a process in its own session is outside the group the runner signals')
    assert.deepEqual(marked(mark), [bg])
  }
  // t.after kills what is left.
})
