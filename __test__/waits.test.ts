// Waiting for output, settle notices, tails and search (SPEC §10), with real processes.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'

import { hostWith, nc, NODE, settle, tempRoot, WAIT_SCALE, waitFor } from './helpers.ts'

const SH = '/bin/sh'
const api = nc as any

function setup(t: TestContext, extra: Partial<nc.BackgroundCommandPolicy> = {}) {
  const root = tempRoot('nlc-waits-')
  const host = hostWith(root, [SH, NODE], { killGraceMs: 500, ...extra })
  t.after(() => nc.killAllBackgroundCommands(host))
  return { root, host }
}

const SERVER = `
process.stdout.write('booting \\u{1F680} caf\\u00e9\\n')
setTimeout(() => {
  process.stdout.write('listening on http://127.0.0.1:3000 at ' + Date.now() + '\\n')
}, 700)
setTimeout(() => process.exit(0), 5000)
`

test('a server printing "listening on" after 700 ms is seen at once, with its offset and line', async (t) => {
  const { host } = setup(t)
  const h = await nc.startBackgroundCommand(host, [NODE, '-e', SERVER], { cwd: '.' })
  const started = Date.now()
  const r = await api.awaitBackgroundCommandOutput(host, h.taskId, { pattern: 'listening on', timeoutMs: 20_000 })
  const seen = Date.now()
  assert.equal(r.matched, true)
  assert.equal(r.stream, 'stdout')
  assert.equal(r.status.state, 'running', 'seen long before the server exits')
  const printedAt = Number(/at (\d+)$/.exec(r.line)![1])
  const latency = seen - printedAt
  t.diagnostic(`print → resolve latency ${latency} ms (started ${printedAt - started} ms before the print)`)
  assert.ok(latency < 1500, `resolved ${latency} ms after the print`)
  // A child Node's start is part of this bound: under qemu-user, WAIT_SCALE times slower.
  assert.ok(seen - started < 4000 * WAIT_SCALE, `seen ${seen - started} ms after the start`)
  const first = 'booting \u{1F680} caf\u00e9\n'
  assert.equal(r.offset, first.length, 'UTF-16 offset: the emoji counts two units')
  assert.match(r.line, /^listening on http:\/\/127\.0\.0\.1:3000 at \d+$/)
  const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })
  assert.equal(page.content.slice(r.offset, r.offset + 12), 'listening on')
})

test('from, regex, both streams, and a pattern split between two writes', async (t) => {
  const { host } = setup(t)
  const script = `printf 'ready one\\nready two\\n'; printf '\\360\\237\\231\\202 xx ab' >&2; sleep 0.3; printf 'cd port 8080\\n' >&2; sleep 0.3`
  const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.' })
  const split = await api.awaitBackgroundCommandOutput(host, h.taskId, { pattern: 'abcd', timeoutMs: 10_000 })
  assert.equal(split.matched, true)
  assert.equal(split.stream, 'stderr')
  assert.equal(split.offset, '\u{1F642} xx '.length)
  assert.equal(split.line, '\u{1F642} xx abcd port 8080')
  await settle(host, h.taskId)
  const one = await api.awaitBackgroundCommandOutput(host, h.taskId, { pattern: 'ready', stream: 'stdout' })
  assert.deepEqual([one.matched, one.offset, one.line], [true, 0, 'ready one'])
  const two = await api.awaitBackgroundCommandOutput(host, h.taskId, { pattern: 'ready', stream: 'stdout', from: 1 })
  assert.deepEqual([two.matched, two.offset, two.line], [true, 10, 'ready two'])
  const re = await api.awaitBackgroundCommandOutput(host, h.taskId, { pattern: 'port \\d{4}$', regex: true })
  assert.deepEqual([re.matched, re.stream, re.line], [true, 'stderr', '\u{1F642} xx abcd port 8080'])
  assert.equal(re.offset, '\u{1F642} xx abcd '.length)
  const none = await api.awaitBackgroundCommandOutput(host, h.taskId, { pattern: 'ready', stream: 'stderr' })
  assert.equal(none.matched, false)
  assert.equal('offset' in none, false)
  assert.equal(none.status.state, 'exited')
})

test('a wait that times out, and one whose command exits without the pattern', async (t) => {
  const { host } = setup(t)
  const slow = await nc.startBackgroundCommand(host, [SH, '-c', 'echo working; sleep 10'], { cwd: '.' })
  const t0 = Date.now()
  const r = await api.awaitBackgroundCommandOutput(host, slow.taskId, { pattern: 'done', timeoutMs: 300 })
  assert.equal(r.matched, false)
  assert.equal(r.status.state, 'running')
  assert.ok(Date.now() - t0 >= 290)
  const quick = await nc.startBackgroundCommand(host, [SH, '-c', 'echo a; sleep 0.3; echo b; exit 3'], { cwd: '.' })
  const q = await api.awaitBackgroundCommandOutput(host, quick.taskId, { pattern: 'never' })
  assert.equal(q.matched, false)
  assert.equal(q.status.state, 'exited')
  assert.equal(q.status.exitCode, 3)
  assert.ok(q.status.stdout && q.status.stderr, 'settled status carries both refs')
})

test('bad wait and search input is refused with NLC_INVALID_ARGUMENT', async (t) => {
  const { host } = setup(t)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo hi'], { cwd: '.' })
  const cases: [unknown, RegExp][] = [
    [{ pattern: '(unclosed', regex: true }, /not a valid regular expression.*unclosed group/s],
    [{ pattern: 42 }, /pattern must be a string/],
    [{}, /pattern must be a string/],
    [{ pattern: '' }, /non-empty/],
    [{ pattern: 'a\nb' }, /line break/],
    [{ pattern: 'x', from: -1 }, /from must be a finite number/],
    [{ pattern: 'x', from: Infinity }, /from must be a finite number/],
    [{ pattern: 'x', timeoutMs: NaN }, /timeoutMs must be a finite number/],
    [{ pattern: 'x', timeoutMs: -5 }, /timeoutMs must be a finite number/],
    [{ pattern: 'x', stream: 'both' }, /stream must be/],
    [undefined, /options must be an object/],
  ]
  for (const [opts, msg] of cases) {
    await assert.rejects(api.awaitBackgroundCommandOutput(host, h.taskId, opts), (e: any) => {
      assert.equal(e.code, 'NLC_INVALID_ARGUMENT', String(e.message))
      assert.match(e.message, msg)
      return true
    })
  }
  for (const opts of [
    { pattern: 'x', maxMatches: -1 },
    { pattern: 'x', maxMatches: NaN },
    { pattern: 'x', stream: 'any' },
    { pattern: '[', regex: true },
  ]) {
    await assert.rejects(api.searchBackgroundCommandOutput(host, h.taskId, opts), { code: 'NLC_INVALID_ARGUMENT' })
  }
  for (const page of [
    { stream: 'stdout', tail: -1 },
    { stream: 'stdout', tail: Infinity },
    { stream: 'stdout', tail: 5, offset: 0 },
  ]) {
    await assert.rejects(nc.readBackgroundCommandOutput(host, h.taskId, page as any), { code: 'NLC_INVALID_ARGUMENT' })
  }
  await assert.rejects(api.awaitBackgroundCommandOutput(host, 'c0nope', { pattern: 'x' }), { code: 'NLC_UNKNOWN_TASK' })
})

test('idleTimeoutMs stops a silent command, not one that keeps printing; the policy gives a default', async (t) => {
  const { host } = setup(t)
  const silent = await nc.startBackgroundCommand(host, [SH, '-c', 'echo start; exec sleep 30'], { cwd: '.', idleTimeoutMs: 400 } as any)
  const s = await settle(host, silent.taskId)
  assert.equal(s.state, 'timeout')
  assert.equal(s.signal, 'SIGTERM')
  assert.match(s.error!, /no output for 400ms/)
  assert.ok(s.durationMs < 10_000)
  const chatty = await nc.startBackgroundCommand(host, [SH, '-c', 'i=0; while [ $i -lt 12 ]; do echo tick $i; sleep 0.1; i=$((i+1)); done'], {
    cwd: '.',
    idleTimeoutMs: 800,
  } as any)
  const c = await settle(host, chatty.taskId)
  assert.equal(c.state, 'exited')
  assert.equal(c.exitCode, 0)
  const { host: strict } = setup(t, { idleTimeoutMs: 300 } as any)
  const d = await nc.startBackgroundCommand(strict, [SH, '-c', 'exec sleep 30'], { cwd: '.' })
  const ds = await settle(strict, d.taskId)
  assert.equal(ds.state, 'timeout')
  assert.match(ds.error!, /no output for 300ms/)
  await assert.rejects(nc.startBackgroundCommand(host, [SH, '-c', 'true'], { cwd: '.', idleTimeoutMs: -1 } as any), {
    code: 'NLC_INVALID_ARGUMENT',
  })
})

test('settle listeners: once per command, only the host own, unsubscribe works, a throw stops nothing', async (t) => {
  const { host } = setup(t)
  const { host: other } = setup(t)
  const seen: nc.BackgroundCommandStatus[] = []
  const otherSeen: string[] = []
  const warnings: string[] = []
  const onWarning = (w: Error) => warnings.push(w.message)
  process.on('warning', onWarning)
  t.after(() => process.off('warning', onWarning))
  const offThrow = api.onBackgroundCommandSettled(host, () => {
    throw new Error('listener bug')
  })
  const off = api.onBackgroundCommandSettled(host, (s: nc.BackgroundCommandStatus) => seen.push(s))
  api.onBackgroundCommandSettled(other, (s: nc.BackgroundCommandStatus) => otherSeen.push(s.taskId))
  const ids: string[] = []
  for (const script of ['exit 0', 'echo out; exit 2', 'sleep 30']) {
    ids.push((await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.' })).taskId)
  }
  const o = await nc.startBackgroundCommand(other, [SH, '-c', 'echo other'], { cwd: '.' })
  await nc.killBackgroundCommand(host, ids[2])
  await settle(other, o.taskId)
  await waitFor(() => seen.length >= 3 && otherSeen.length >= 1, 10_000, 'three notices')
  await new Promise((r) => setTimeout(r, 200))
  assert.deepEqual(seen.map((s) => s.taskId).sort(), [...ids].sort())
  assert.deepEqual(otherSeen, [o.taskId])
  for (const s of seen) {
    assert.ok(['exited', 'killed'].includes(s.state))
    assert.ok(s.stdout && s.stderr, 'the status is final: both streams banked')
  }
  assert.equal(seen.find((s) => s.taskId === ids[1])!.exitCode, 2)
  assert.equal(warnings.filter((w) => w.includes('listener bug')).length, 3)
  off()
  offThrow()
  const later = await nc.startBackgroundCommand(host, [SH, '-c', 'true'], { cwd: '.' })
  await settle(host, later.taskId)
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(seen.length, 3, 'an unsubscribed listener hears nothing more')
  assert.throws(() => api.onBackgroundCommandSettled(host, 'nope'), { code: 'NLC_INVALID_ARGUMENT' })
})

test('tail pages: the last characters, clamped like limit, with the offset they start at', async (t) => {
  const { host } = setup(t)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', `printf 'abc\\360\\237\\231\\202def'`], { cwd: '.' })
  await settle(host, h.taskId)
  const all = 'abc\u{1F642}def'
  const p = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', tail: 4 } as any)
  assert.deepEqual([p.content, p.offset, p.limit, p.totalSize, p.hasMore], [all.slice(-4), all.length - 4, 4, all.length, false])
  const z = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', tail: 0 } as any)
  assert.deepEqual([z.content, z.offset, z.limit], ['f', all.length - 1, 1])
  const big = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', tail: 1e9 } as any)
  assert.deepEqual([big.content, big.offset, big.limit], [all, 0, 200_000])
})

test('search while running: complete lines only, scannedTo resumes without a gap', async (t) => {
  const { host } = setup(t)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', `printf 'x1 FAIL\\nok\\nx3 FAIL\\npartial FA'; sleep 1; printf 'IL\\n'`], { cwd: '.' })
  await api.awaitBackgroundCommandOutput(host, h.taskId, { pattern: 'partial' })
  const r = await api.searchBackgroundCommandOutput(host, h.taskId, { pattern: 'FAIL' })
  assert.deepEqual(r.matches, [
    { line: 1, offset: 0, text: 'x1 FAIL' },
    { line: 3, offset: 11, text: 'x3 FAIL' },
  ])
  assert.equal(r.hasMore, false)
  assert.equal(r.scannedTo, 19)
  await settle(host, h.taskId)
  const next = await api.searchBackgroundCommandOutput(host, h.taskId, { pattern: 'FAIL', from: r.scannedTo })
  assert.deepEqual(next.matches, [{ line: 4, offset: 19, text: 'partial FAIL' }])
  const one = await api.searchBackgroundCommandOutput(host, h.taskId, { pattern: 'FAIL', maxMatches: 1 })
  assert.deepEqual([one.matches.length, one.hasMore, one.scannedTo], [1, true, 11])
})

/** The lines of `text` holding `re`'s match at offset ≥ from, as the search reports them. */
function jsSearch(text: string, re: RegExp, from = 0) {
  const out: { line: number; offset: number; text: string }[] = []
  let offset = 0
  let n = 0
  for (const raw of text.split('\n')) {
    n++
    const end = offset + raw.length
    if (offset === text.length && raw === '') break
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    const g = new RegExp(re.source, 'g')
    let m: RegExpExecArray | null
    while ((m = g.exec(line))) {
      if (offset + m.index >= from) {
        out.push({ line: n, offset, text: line.length > 500 ? cut500(line) : line })
        break
      }
      g.lastIndex = m.index + 1
    }
    offset = end + 1
  }
  return out
}

function cut500(line: string) {
  let s = line.slice(0, 500)
  if (/[\uD800-\uDBFF]$/.test(s)) s = s.slice(0, -1)
  return s + '…'
}

test('tail and search on a 50 MiB log: exact, and the host grows by less than 20 MiB while searching', { timeout: 240_000 }, async (t) => {
  const root = tempRoot('nlc-waits-big-')
  // The child's logs go under its own TMPDIR: once it has exited they are an
  // ended process's, which any other process's start-up prune of the shared
  // os.tmpdir() may remove before they are read here (a window that qemu-user's
  // slowness widens to minutes).
  const out = execFileSync(NODE, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'search-host.js'), root, join(import.meta.dirname, 'fixtures', 'big-log.js')], {
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, TMPDIR: root },
  })
  const got = JSON.parse(out.toString())
  assert.equal(got.state, 'exited')
  const file = readFileSync(join(root, 'neurolink-commands', got.taskId, 'stdout.log'))
  assert.equal(got.bytes, file.length)
  assert.ok(file.length >= 50 * 1024 * 1024)
  const text = file.toString('utf8')
  assert.deepEqual(got.whole, { matches: [], hasMore: false, scannedTo: text.length })
  const expected = jsSearch(text, /FAIL/)
  assert.equal(got.first.matches.length, 1000)
  assert.equal(got.first.hasMore, true)
  assert.deepEqual(got.first.matches, expected.slice(0, 1000))
  assert.equal(got.first.scannedTo, expected[1000].offset)
  assert.deepEqual([...got.first.matches, ...got.rest], expected, 'resuming from scannedTo misses nothing')
  assert.equal(got.end, text.length)
  assert.ok(
    expected.some((m) => m.text.endsWith('…')),
    'long lines are cut',
  )
  assert.deepEqual(got.regex.matches, jsSearch(text, /line \d+5 FAIL/).slice(0, 5))
  assert.equal(got.tail.content, text.slice(-1000))
  assert.equal(got.tail.offset, text.length - 1000)
  assert.equal(got.tail.totalSize, text.length)
  const growth = got.peak - got.before
  t.diagnostic(`search of ${(file.length / 1048576).toFixed(1)} MiB: a whole-log scan took ${got.searchMs.toFixed(1)} ms; RSS growth ${(growth / 1048576).toFixed(2)} MiB`)
  assert.ok(growth < 20 * 1024 * 1024, `RSS grew by ${growth} bytes`)
})

test('tools: command_status waitFor, command_output tail and grep, and their schemas', async (t) => {
  const { host } = setup(t)
  const tools = nc.createBackgroundCommandTools(host) as any
  assert.equal(tools.command_status.inputSchema.properties.waitFor.type, 'string')
  assert.equal(tools.command_output.inputSchema.properties.tail.type, 'integer')
  assert.equal(tools.command_output.inputSchema.properties.grep.type, 'string')
  const { taskId } = await tools.run_command_bg.execute({ argv: [SH, '-c', 'echo one; sleep 0.3; echo "server ready on 8080" >&2; echo two FAIL; sleep 5'] })
  const st = await tools.command_status.execute({ taskId, waitFor: 'ready on', waitMs: 10_000 })
  assert.equal(st.waitMatched, true)
  assert.equal(st.waitLine, 'server ready on 8080')
  assert.equal(st.state, 'running')
  assert.equal(typeof st.running, 'number')
  const no = await tools.command_status.execute({ taskId, waitFor: 'never', waitMs: 100 })
  assert.equal(no.waitMatched, false)
  assert.equal('waitLine' in no, false)
  await waitFor(async () => (await tools.command_output.execute({ taskId, grep: 'FAIL' })).matches?.length === 1)
  const g = await tools.command_output.execute({ taskId, grep: 'FAIL' })
  assert.deepEqual(g, { matches: [{ line: 2, offset: 4, text: 'two FAIL' }], hasMore: false, scannedTo: 13 })
  const tail = await tools.command_output.execute({ taskId, tail: 5 })
  assert.deepEqual([tail.content, tail.offset], ['FAIL\n', 8])
  const bad = await tools.command_output.execute({ taskId, grep: 7 })
  assert.deepEqual([bad.isError, bad.code], [true, 'NLC_INVALID_ARGUMENT'])
})
