// listBackgroundCommands and readNewBackgroundCommandOutput (SPEC §6).
import assert from 'node:assert/strict'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'

import { hostWith, nc, tempRoot, waitFor } from './helpers.ts'

const SH = '/bin/sh'
const KEYS = ['argv', 'containment', 'cwd', 'killed', 'label', 'running', 'startedAt', 'state', 'taskId']

function setup(t: TestContext, extra: Partial<nc.BackgroundCommandPolicy> = {}) {
  const root = tempRoot('nlc-list-')
  const host = hostWith(root, [SH], { killGraceMs: 500, ...extra })
  t.after(() => nc.killAllBackgroundCommands(host))
  return { root, host }
}

test('list: every command oldest first, with the right fields for each ending', async (t) => {
  const { root, host } = setup(t)
  mkdirSync(join(root, 'sub'))
  symlinkSync(join(root, 'sub'), join(root, 'sub-link'))
  const ids: string[] = []
  const startedAts: number[] = []
  const start = async (argv: string[], opts: Partial<nc.BackgroundCommandOptions> = {}) => {
    const h = await nc.startBackgroundCommand(host, argv, { cwd: '.', ...opts })
    ids.push(h.taskId)
    startedAts.push(h.startedAt)
    return h
  }
  const exited = await start([SH, '-c', 'exit 4'], { cwd: 'sub-link', label: '  four  ' })
  const signalled = await start([SH, '-c', 'kill -9 $$'])
  const killed = await start([SH, '-c', 'sleep 30'])
  const timedOut = await start([SH, '-c', 'sleep 30'], { timeoutMs: 200 })
  const capped = await start([SH, '-c', 'while :; do echo xxxxxxxx; done'], { maxOutputBytes: 1000 })
  const running = await start([SH, '-c', 'sleep 30'])
  for (const id of [exited, signalled, timedOut, capped].map((h) => h.taskId)) {
    await nc.awaitBackgroundCommand(host, id, { timeoutMs: 5_000 })
  }
  await nc.killBackgroundCommand(host, killed.taskId)

  const list = nc.listBackgroundCommands(host)
  assert.deepEqual(
    list.map((e) => e.taskId),
    ids,
    'every command, oldest first',
  )
  for (let i = 1; i < list.length; i++) assert.ok(list[i].startedAt >= list[i - 1].startedAt)
  for (const [i, e] of list.entries()) {
    assert.equal(e.startedAt, startedAts[i])
    for (const k of KEYS) assert.ok(k in e, `${e.taskId} has ${k}`)
    for (const k of Object.keys(e)) assert.ok([...KEYS, 'exitCode', 'signal', 'waitingForInput'].includes(k), `unexpected key ${k}`)
    // None of them has an input; where the platform can tell, none waits.
    assert.equal(e.waitingForInput, process.platform === 'linux' && process.env.NLC_TEST_QEMU !== '1' ? false : undefined)
    assert.equal(e.label, nc.getBackgroundCommandStatus(host, e.taskId).label)
  }
  const by = (id: string) => list.find((e) => e.taskId === id)!

  const ex = by(exited.taskId)
  assert.equal(ex.label, 'four')
  assert.deepEqual(ex.argv, [SH, '-c', 'exit 4'])
  assert.equal(ex.cwd, join(root, 'sub'), 'the real cwd (symlink followed)')
  assert.equal(ex.state, 'exited')
  assert.equal(ex.running, false)
  assert.equal(ex.exitCode, 4)
  assert.equal('signal' in ex, false, 'absent, not null')
  assert.equal(ex.killed, false)

  const sg = by(signalled.taskId)
  assert.equal(sg.state, 'killed')
  assert.equal(sg.signal, 'SIGKILL')
  assert.equal('exitCode' in sg, false)
  assert.equal(sg.killed, false, 'nobody here stopped it')
  assert.equal(sg.cwd, root)
  assert.equal(sg.label, 'sh -c kill -9 $$')

  const kd = by(killed.taskId)
  assert.equal(kd.state, 'killed')
  assert.equal(kd.signal, 'SIGTERM')
  assert.equal(kd.killed, true)
  assert.equal(kd.running, false)

  const to = by(timedOut.taskId)
  assert.equal(to.state, 'timeout')
  assert.equal(to.killed, true)

  const cp = by(capped.taskId)
  assert.equal(cp.state, 'output-limit')
  assert.equal(cp.killed, true)

  const rn = by(running.taskId)
  assert.equal(rn.state, 'running')
  assert.equal(rn.running, true)
  assert.equal(rn.killed, false)
  assert.equal('exitCode' in rn, false)
  assert.equal('signal' in rn, false)

  assert.deepEqual(
    nc.listBackgroundCommands(host, { running: true }).map((e) => e.taskId),
    [running.taskId],
  )
  assert.deepEqual(
    nc.listBackgroundCommands(host, { running: false }).map((e) => e.taskId),
    ids.slice(0, 5),
  )
  assert.deepEqual(
    nc.listBackgroundCommands(host, {}).map((e) => e.taskId),
    ids,
  )

  await nc.killBackgroundCommand(host, running.taskId)
  assert.deepEqual(nc.listBackgroundCommands(host, { running: true }), [])
  const after = nc.listBackgroundCommands(host).find((e) => e.taskId === running.taskId)!
  assert.equal(after.running, false)
  assert.equal(after.killed, true)
})

test('list filters by session and never shows another host’s commands', async (t) => {
  const { root, host } = setup(t)
  const other = hostWith(root, [SH])
  t.after(() => nc.killAllBackgroundCommands(other))
  const a1 = await nc.startBackgroundCommand(host, [SH, '-c', 'exit 0'], { cwd: '.', sessionId: 'alpha' })
  const b1 = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: '.', sessionId: 'beta' })
  const a2 = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: '.', sessionId: 'alpha' })
  const d1 = await nc.startBackgroundCommand(host, [SH, '-c', 'exit 0'], { cwd: '.' })
  const o1 = await nc.startBackgroundCommand(other, [SH, '-c', 'exit 0'], { cwd: '.', sessionId: 'alpha' })
  await nc.awaitBackgroundCommand(host, a1.taskId, { timeoutMs: 5_000 })
  await nc.awaitBackgroundCommand(host, d1.taskId, { timeoutMs: 5_000 })
  await nc.awaitBackgroundCommand(other, o1.taskId, { timeoutMs: 5_000 })

  const ids = (f?: nc.BackgroundCommandListFilter) => nc.listBackgroundCommands(host, f).map((e) => e.taskId)
  assert.deepEqual(ids(), [a1.taskId, b1.taskId, a2.taskId, d1.taskId])
  assert.deepEqual(ids({ sessionId: 'alpha' }), [a1.taskId, a2.taskId])
  assert.deepEqual(ids({ sessionId: 'beta' }), [b1.taskId])
  assert.deepEqual(ids({ sessionId: 'nobody' }), [])
  assert.deepEqual(ids({ sessionId: 'alpha', running: true }), [a2.taskId])
  assert.deepEqual(ids({ sessionId: 'alpha', running: false }), [a1.taskId])
  assert.deepEqual(ids({ running: true }), [b1.taskId, a2.taskId])
  assert.deepEqual(
    nc.listBackgroundCommands(other).map((e) => e.taskId),
    [o1.taskId],
  )
  assert.deepEqual(nc.listBackgroundCommands({}), [], 'a fresh host has none')
})

test('list refuses a filter that is not an object of the right shape', (t) => {
  const { host } = setup(t)
  assert.throws(() => nc.listBackgroundCommands(host, 'alpha' as unknown as nc.BackgroundCommandListFilter), /filter/)
  assert.throws(() => nc.listBackgroundCommands(host, { running: 'yes' } as unknown as nc.BackgroundCommandListFilter), /running/)
  assert.throws(() => nc.listBackgroundCommands(host, { sessionId: 5 } as unknown as nc.BackgroundCommandListFilter), /sessionId/)
})

test('follow: only what is new, in order, nothing twice, while a command writes for ~1.5 s', async (t) => {
  const { host } = setup(t)
  const N = 150
  const script = `i=0; while [ $i -lt ${N} ]; do echo "line $i"; echo "err $i" >&2; i=$((i+1)); sleep 0.01; done`
  const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.' })
  const got: Record<'stdout' | 'stderr', string[]> = { stdout: [], stderr: [] }
  const next: Record<'stdout' | 'stderr', number> = { stdout: 0, stderr: 0 }
  let calls = 0
  let last: nc.BackgroundCommandNewOutput | undefined
  const deadline = Date.now() + 15_000
  for (;;) {
    assert.ok(Date.now() < deadline, 'the command settled in time')
    // Default stream is stdout.
    const out = calls % 2 === 0 ? nc.readNewBackgroundCommandOutput(host, h.taskId) : nc.readNewBackgroundCommandOutput(host, h.taskId, 'stdout')
    const err = nc.readNewBackgroundCommandOutput(host, h.taskId, 'stderr')
    calls++
    for (const r of [out, err]) {
      assert.equal(r.taskId, h.taskId)
      assert.equal(r.offset, next[r.stream], `${r.stream} continues where the previous call ended`)
      assert.ok(r.totalSize >= r.offset + r.content.length)
      assert.equal(r.hasMore, r.offset + r.content.length < r.totalSize)
      assert.equal(r.running, r.state === 'queued' || r.state === 'running')
      next[r.stream] += r.content.length
      if (r.content !== '') got[r.stream].push(r.content)
    }
    last = out
    if (!out.running && !err.running && !out.hasMore && !err.hasMore) break
    await new Promise((r) => setTimeout(r, 5))
  }
  assert.equal(last!.state, 'exited')

  for (const [stream, prefix] of [
    ['stdout', 'line'],
    ['stderr', 'err'],
  ] as const) {
    const whole = got[stream].join('')
    const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream, limit: 200_000 })
    assert.equal(whole, page.content, `${stream}: the follow reads concatenate to the whole log`)
    assert.equal(whole, Array.from({ length: N }, (_, i) => `${prefix} ${i}\n`).join(''), `${stream}: in order, nothing twice`)
    assert.ok(got[stream].length >= 10, `${stream} arrived in many pieces (${got[stream].length}), not all at the end`)
  }
  // Settled and fully read: further calls return nothing new.
  const again = nc.readNewBackgroundCommandOutput(host, h.taskId)
  assert.equal(again.content, '')
  assert.equal(again.offset, next.stdout)
  assert.equal(again.hasMore, false)
  assert.equal(again.state, 'exited')
  t.diagnostic(`${calls} follow rounds; stdout came in ${got.stdout.length} pieces, stderr in ${got.stderr.length}`)
})

test('follow: reads while a command writes as fast as it can are never refused, and concatenate exactly', async (t) => {
  const { host, root } = setup(t)
  // The command writes blocks of lines until the stop file exists; the test
  // makes it after 300 reads that found new bytes of the running command (or
  // 2,000,000 characters read), so the reads overlap the writes however fast
  // or slow (qemu) the machine is.
  const BLOCK = 1000
  const stop = join(root, 'stop')
  const script = `i=0; while [ ! -e '${stop}' ]; do j=0; while [ $j -lt ${BLOCK} ]; do echo "line $i"; i=$((i+1)); j=$((j+1)); done; done`
  const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.' })
  const parts: string[] = []
  let runningReads = 0
  let read = 0
  let stopped = false
  const deadline = Date.now() + 120_000
  for (;;) {
    assert.ok(Date.now() < deadline, 'the command settled in time')
    // A refusal (NLC_LOG_REPLACED for a log the runner is still writing) throws here.
    const r = nc.readNewBackgroundCommandOutput(host, h.taskId)
    parts.push(r.content)
    if (!r.running) {
      if (!r.hasMore) break
    } else if (r.content.length > 0) {
      runningReads++
      read += r.content.length
      // Where reads are slower than the writes (qemu), each one is a full
      // page: stop at 2,000,000 characters instead.
      if (!stopped && (runningReads === 300 || read >= 2_000_000)) {
        writeFileSync(stop, '')
        stopped = true
      }
    }
    await new Promise((r) => setImmediate(r))
  }
  assert.ok(stopped, `the test stopped the command while it ran (${runningReads} reads)`)
  const whole = parts.join('')
  const lines = whole.split('\n').length - 1
  assert.ok(lines > 0 && lines % BLOCK === 0, `whole blocks were written (${lines} lines)`)
  const want = Array.from({ length: lines }, (_, i) => `line ${i}\n`).join('')
  assert.equal(whole.length, want.length)
  assert.ok(whole === want, 'every line once, in order')
})

test('follow: more than 200000 characters come in windows with hasMore', async (t) => {
  const { host } = setup(t)
  // 500000 bytes of ASCII.
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'head -c 500000 /dev/zero | tr "\\0" a'], { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 10_000 })
  assert.equal(st.stdoutBytes, 500_000)
  const a = nc.readNewBackgroundCommandOutput(host, h.taskId, 'stdout')
  const b = nc.readNewBackgroundCommandOutput(host, h.taskId, 'stdout')
  const c = nc.readNewBackgroundCommandOutput(host, h.taskId, 'stdout')
  const d = nc.readNewBackgroundCommandOutput(host, h.taskId, 'stdout')
  assert.deepEqual(
    [a, b, c, d].map((r) => [r.offset, r.content.length, r.totalSize, r.hasMore]),
    [
      [0, 200_000, 500_000, true],
      [200_000, 200_000, 500_000, true],
      [400_000, 100_000, 500_000, false],
      [500_000, 0, 500_000, false],
    ],
  )
  assert.equal(a.content + b.content + c.content, 'a'.repeat(500_000))
  // The stderr cursor is independent and empty.
  const e = nc.readNewBackgroundCommandOutput(host, h.taskId, 'stderr')
  assert.deepEqual([e.offset, e.content, e.totalSize, e.hasMore], [0, '', 0, false])
})

test('follow: an incomplete UTF-8 sequence is not returned until it is complete', async (t) => {
  const { root, host } = setup(t)
  // The command prints the first two bytes of 😀 (F0 9F 98 80), waits for the
  // file `go`, then prints the rest and é.
  const script = `printf 'a\\360\\237'; while [ ! -e go ]; do sleep 0.02; done; printf '\\230\\200\\303\\251'`
  const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.' })
  await waitFor(() => nc.getBackgroundCommandStatus(host, h.taskId).stdoutBytes === 3, 5_000, 'the first three bytes')
  const first = nc.readNewBackgroundCommandOutput(host, h.taskId)
  assert.equal(first.content, 'a', 'the half-written character is held back')
  assert.equal(first.running, true)
  const { writeFileSync } = await import('node:fs')
  writeFileSync(join(root, 'go'), '')
  await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 5_000 })
  const rest = nc.readNewBackgroundCommandOutput(host, h.taskId)
  assert.equal(rest.offset, 1)
  assert.equal(rest.content, '😀é')
  assert.equal(first.content + rest.content, 'a😀é')
  assert.equal(rest.state, 'exited')
})

test('follow: a truncated UTF-8 sequence at the end becomes U+FFFD once the command settled', async (t) => {
  const { host } = setup(t)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', `printf 'x\\360\\237'`], { cwd: '.' })
  await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 5_000 })
  const r = nc.readNewBackgroundCommandOutput(host, h.taskId)
  assert.equal(r.content, Buffer.from([0x78, 0xf0, 0x9f]).toString('utf8'))
  assert.equal(nc.readNewBackgroundCommandOutput(host, h.taskId).content, '')
})

test('follow: unknown task ids and bad stream names are refused', (t) => {
  const { host } = setup(t)
  assert.throws(() => nc.readNewBackgroundCommandOutput(host, 'c0nope'), /No background command "c0nope"/)
  assert.throws(() => nc.readNewBackgroundCommandOutput(host, 'c0nope', 'stdout'), /No background command/)
})

test('follow: a bad stream name is refused with the valid names', async (t) => {
  const { host } = setup(t)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'exit 0'], { cwd: '.' })
  assert.throws(() => nc.readNewBackgroundCommandOutput(host, h.taskId, 'both' as unknown as 'stdout'), /stdout.*stderr|stderr.*stdout/)
  await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 5_000 })
})
