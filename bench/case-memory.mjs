// Case 6 — memory per settled command: RSS growth over N settled `true`
// commands (run in batches so pids and descriptors are not exhausted), after
// a warm-up and a full GC on both sides; then every status is read back to
// show it is still answerable. Run with --expose-gc, one runner per process.

import fs from 'node:fs'

import { flags, makeRunner, now, report, SH, TRUE } from './common.mjs'

const f = flags()
const kind = f.runner
const N = Number(f.n ?? 20_000)
const WARM = Number(f.warm ?? 1000)
const BATCH = Number(f.batch ?? 100)
// With --output B, each command prints B bytes to stdout and B to stderr instead of being `true`.
const OUTPUT = Number(f.output ?? 0)
const ARGV = OUTPUT > 0 ? [SH, '-c', `yes stdout-line | head -c ${OUTPUT}; yes stderr-line | head -c ${OUTPUT} >&2`] : [TRUE]

if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc')

/** Private (anonymous) resident memory in bytes: RSS without shared file-backed pages such as node's own code. */
function rssAnon() {
  const m = /^RssAnon:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))
  return m ? Number(m[1]) * 1024 : NaN
}

async function settle() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc()
    await new Promise((r) => setTimeout(r, 20))
  }
  return { ...process.memoryUsage(), rssAnon: rssAnon() }
}

const r = makeRunner(kind)
async function run(count) {
  for (let done = 0; done < count; done += BATCH) {
    const n = Math.min(BATCH, count - done)
    const ids = await Promise.all(Array.from({ length: n }, () => r.start(ARGV)))
    await Promise.all(ids.map((id) => r.wait(id)))
  }
}

await run(WARM)
const m0 = await settle()
const t0 = now()
await run(N)
const ms = now() - t0
const m1 = await settle()

// Every command of the run is still answerable (outside the measurement).
const ids = r.ids()
let answerable = 0
for (const id of ids) {
  const s = r.status(id)
  if (s.state === 'exited' && s.stdout && s.stderr) answerable++
}
if (answerable !== WARM + N) throw new Error(`${kind}: ${answerable} of ${WARM + N} statuses answerable`)

report({
  case: 'memory',
  runner: kind,
  commands: N,
  outputBytesEach: OUTPUT,
  ms,
  rssBefore: m0.rss,
  rssAfter: m1.rss,
  rssAnonBefore: m0.rssAnon,
  rssAnonAfter: m1.rssAnon,
  anonPerCommand: (m1.rssAnon - m0.rssAnon) / N,
  heapBefore: m0.heapUsed,
  heapAfter: m1.heapUsed,
  externalBefore: m0.external + m0.arrayBuffers,
  externalAfter: m1.external + m1.arrayBuffers,
  bytesPerCommand: (m1.rss - m0.rss) / N,
  heapPerCommand: (m1.heapUsed - m0.heapUsed) / N,
  answerable,
})
