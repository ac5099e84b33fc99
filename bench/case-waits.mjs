// Waits and search (SPEC §10): the latency from a line being written to
// awaitBackgroundCommandOutput resolving, against a JS 'data' listener on a
// child's pipe in the same run; and the throughput of a whole-log search
// against `grep -n` on the same file.

import { execFileSync, spawn } from 'node:child_process'
import { realpathSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const nc = require('../index.js')

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 40)
const wall = () => performance.timeOrigin + performance.now()
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const median = (xs) => pct(xs, 50)

// A child that prints a timestamped line every 60 ms.
const TICKER = `let i = 0; const t = setInterval(() => {
  process.stdout.write('noise '.repeat(20) + '\\n')
  process.stdout.write('tick ' + (performance.timeOrigin + performance.now()) + '\\n')
  if (++i === ${N}) { clearInterval(t); setTimeout(() => process.exit(0), 50) }
}, 60)`

const root = realpathSync(mkdtempSync(join(tmpdir(), 'nlc-bench-waits-')))
const host = {}
nc.setBackgroundCommandPolicy(host, { allowedExecutables: [process.execPath], cwdRoot: root, maxOutputBytes: 128 * 1024 * 1024 })

async function oursLatency() {
  const { taskId } = await nc.startBackgroundCommand(host, [process.execPath, '-e', TICKER], { cwd: '.' })
  const lat = []
  let from = 0
  for (;;) {
    const r = await nc.awaitBackgroundCommandOutput(host, taskId, { pattern: 'tick ', stream: 'stdout', from })
    if (!r.matched) break
    lat.push(wall() - Number(r.line.slice(5)))
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
      const at = wall()
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

const ours = await oursLatency()
const js = await jsLatency()

// Search: a ~50 MiB log, a whole-log scan (nothing matches) and a dense one.
const big = await nc.startBackgroundCommand(host, [process.execPath, join(import.meta.dirname, '..', '__test__', 'fixtures', 'big-log.js')], { cwd: '.' })
const st = await nc.awaitBackgroundCommand(host, big.taskId)
const file = join(tmpdir(), 'neurolink-commands', big.taskId, 'stdout.log')
function timeSearch(pattern) {
  return async () => {
    const t0 = performance.now()
    await nc.searchBackgroundCommandOutput(host, big.taskId, { pattern, maxMatches: 1000 })
    return performance.now() - t0
  }
}
function timeGrep(pattern) {
  return async () => {
    const t0 = performance.now()
    try {
      execFileSync('grep', ['-n', '-F', pattern, file], { stdio: ['ignore', 'ignore', 'ignore'] })
    } catch {
      // status 1: no match
    }
    return performance.now() - t0
  }
}
async function med(f, n = 5) {
  const xs = []
  for (let i = 0; i < n; i++) xs.push(await f())
  return median(xs)
}
const none = { ours: await med(timeSearch('no such text')), grep: await med(timeGrep('no such text')) }
const mib = st.stdoutBytes / 1048576

console.log(
  JSON.stringify(
    {
      case: 'waits',
      latencyMs: {
        ours: { p50: median(ours), p99: pct(ours, 99), n: ours.length },
        jsDataListener: { p50: median(js), p99: pct(js, 99), n: js.length },
      },
      search: { mib, noMatchMs: none, oursMiBps: mib / (none.ours / 1000), grepMiBps: mib / (none.grep / 1000), ratio: none.ours / none.grep },
    },
    null,
    2,
  ),
)
