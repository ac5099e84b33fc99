// Case 8 — waits and search (SPEC §10).
//
// Latency: a child prints `tick <time>` every 60 ms (CLOCK_MONOTONIC, which
// every process on the machine shares); the time from that print to
// awaitBackgroundCommandOutput resolving (ours) against a JS 'data' listener
// on the same child's pipe (the baseline), rounds alternating between the
// two so the machine's load falls on both alike.
//
// Search: a ~50 MiB log (ASCII and multi-byte lines); a whole-log search
// with searchBackgroundCommandOutput against `grep -n` on the same file
// (stdout piped to us, as a reader would, so grep cannot stop at the first
// match as it does with /dev/null), for three patterns: a substring found
// nowhere, one found on 147 lines spread over the log, and a regular
// expression found on the same lines. Ours and grep alternate repetition by
// repetition; the figures are medians, and every repetition checks that
// both found the same line numbers.

import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

import { flags, loadOurs, median, percentile, report, ROOT, scratch } from './common.mjs'

const f = flags()
const N = Number(f.n ?? 40)
const ROUNDS = Number(f.rounds ?? 3)
const REPS = Number(f.reps ?? 9)

const nc = loadOurs()
const root = scratch()
const host = {}
nc.setBackgroundCommandPolicy(host, { allowedExecutables: [process.execPath], cwdRoot: root, maxOutputBytes: 128 * 1024 * 1024 })

const mono = () => Number(process.hrtime.bigint()) / 1e6
const TICKER = `let i = 0; const t = setInterval(() => {
  process.stdout.write('noise '.repeat(20) + '\\n')
  process.stdout.write('tick ' + (Number(process.hrtime.bigint()) / 1e6) + '\\n')
  if (++i === ${N}) { clearInterval(t); setTimeout(() => process.exit(0), 50) }
}, 60)`

async function oursLatency() {
  const { taskId } = await nc.startBackgroundCommand(host, [process.execPath, '-e', TICKER], { cwd: '.' })
  const lat = []
  let from = 0
  for (;;) {
    const r = await nc.awaitBackgroundCommandOutput(host, taskId, { pattern: 'tick ', stream: 'stdout', from })
    if (!r.matched) break
    lat.push(mono() - Number(r.line.slice(5)))
    from = r.offset + 1
  }
  return lat
}

function jsLatency() {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['-e', TICKER], { stdio: ['ignore', 'pipe', 'ignore'] })
    const lat = []
    let buf = ''
    c.stdout.setEncoding('utf8')
    c.stdout.on('data', (d) => {
      const at = mono()
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i)
        buf = buf.slice(i + 1)
        if (line.startsWith('tick ')) lat.push(at - Number(line.slice(5)))
      }
    })
    c.on('close', () => resolve(lat))
  })
}

const lat = { ours: [], js: [] }
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2 === 0) {
    lat.ours.push(...(await oursLatency()))
    lat.js.push(...(await jsLatency()))
  } else {
    lat.js.push(...(await jsLatency()))
    lat.ours.push(...(await oursLatency()))
  }
}

// ---- search -----------------------------------------------------------------
const big = await nc.startBackgroundCommand(host, [process.execPath, path.join(ROOT, '__test__', 'fixtures', 'big-log.js')], { cwd: '.' })
const st = await nc.awaitBackgroundCommand(host, big.taskId)
if (st.exitCode !== 0) throw new Error(JSON.stringify(st))
const file = path.join(root, 'neurolink-commands', big.taskId, 'stdout.log')
const mib = st.stdoutBytes / 1048576

async function ours(pattern, regex) {
  const t0 = performance.now()
  const r = await nc.searchBackgroundCommandOutput(host, big.taskId, { pattern, regex, maxMatches: 1000 })
  const ms = performance.now() - t0
  if (r.hasMore) throw new Error('more than 1000 matches: not a whole-log scan')
  return { ms, lines: r.matches.map((m) => m.line) }
}

// grep's own start (a process started from this one, its output piped back)
// is timed too, on an empty file: the figure compared is grep's time on the
// log minus that, so grep is not charged for being a process of its own.
const EMPTY = path.join(root, 'empty.log')
fs.writeFileSync(EMPTY, '')

function grep(pattern, regex, on = file) {
  const t0 = performance.now()
  let out = ''
  try {
    out = execFileSync('grep', ['-n', regex ? '-E' : '-F', pattern, on], { encoding: 'latin1', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] })
  } catch (e) {
    if (e.status !== 1) throw e // 1: no line matched
  }
  const ms = performance.now() - t0
  return {
    ms,
    lines: out
      .split('\n')
      .filter(Boolean)
      .map((l) => Number(l.slice(0, l.indexOf(':')))),
  }
}

const patterns = {
  none: ['no such text', false, 'no such text'],
  sparse: ['0000 ', false, '0000 '],
  regex: ['0000 (ok|FAIL)', true, '0000 (ok|FAIL)'],
}
const search = {}
for (const [name, [ourPattern, regex, grepPattern]] of Object.entries(patterns)) {
  // Warm-up: the file in the page cache for both.
  await ours(ourPattern, regex)
  grep(grepPattern, regex)
  const runs = { ours: [], grep: [], grepStart: [] }
  let count
  for (let i = 0; i < REPS; i++) {
    let o
    let g
    if (i % 2 === 0) {
      o = await ours(ourPattern, regex)
      g = grep(grepPattern, regex)
    } else {
      g = grep(grepPattern, regex)
      o = await ours(ourPattern, regex)
    }
    runs.grepStart.push(grep(grepPattern, regex, EMPTY).ms)
    if (o.lines.join() !== g.lines.join()) {
      throw new Error(`${name}: ours found lines ${o.lines.slice(0, 5)}… (${o.lines.length}), grep ${g.lines.slice(0, 5)}… (${g.lines.length})`)
    }
    count = o.lines.length
    runs.ours.push(o.ms)
    runs.grep.push(g.ms)
  }
  const oursMs = median(runs.ours)
  const grepTotalMs = median(runs.grep)
  const grepStartMs = median(runs.grepStart)
  const grepMs = grepTotalMs - grepStartMs
  search[name] = {
    pattern: ourPattern,
    regex,
    matches: count,
    oursMs,
    grepMs,
    grepTotalMs,
    grepStartMs,
    oursMiBps: mib / (oursMs / 1000),
    grepMiBps: mib / (grepMs / 1000),
    ratio: oursMs / grepMs,
    runs,
  }
}

report({
  case: 'waits',
  latencyMs: {
    ours: { p50: median(lat.ours), p99: percentile(lat.ours, 99), n: lat.ours.length },
    jsDataListener: { p50: median(lat.js), p99: percentile(lat.js, 99), n: lat.js.length },
  },
  search: { mib, reps: REPS, ...search },
})
