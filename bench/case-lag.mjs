// Case 2 — event-loop lag under output: N commands each write M MiB while a
// 1 ms interval timer records how late the host's event loop runs it.
// One runner per process (--runner reference|execa|ours|limit), so the
// measurements do not share a heap or threads.

import path from 'node:path'

import { cleanLogs, flags, makeRunner, MiB, now, percentile, report, runDirect, scratch, settleDisk, SH } from './common.mjs'
import fs from 'node:fs'

const f = flags()
const kind = f.runner
const N = Number(f.n ?? 8)
const BYTES = Number(f.mib ?? 256) * MiB
const produce = (out) => (out ? `head -c ${BYTES} /dev/zero > ${out}` : `head -c ${BYTES} /dev/zero`)

cleanLogs()
settleDisk()

// The probe: a 1 ms interval; each tick's lateness beyond 1 ms is the lag.
const lags = []
let last = now()
const probe = setInterval(() => {
  const t = now()
  lags.push(Math.max(0, t - last - 1))
  last = t
}, 1)
await new Promise((r) => setTimeout(r, 200)) // let the probe settle in
lags.length = 0

const t0 = now()
let bytes = 0
if (kind === 'limit') {
  const dir = path.join(scratch(), 'direct')
  fs.mkdirSync(dir, { recursive: true })
  await Promise.all(Array.from({ length: N }, (_, i) => runDirect([SH, '-c', produce(path.join(dir, `${i}.log`))])))
  for (let i = 0; i < N; i++) bytes += fs.statSync(path.join(dir, `${i}.log`)).size
} else {
  const r = makeRunner(kind, { maxOutputBytes: BYTES * 2 })
  const ids = []
  for (let i = 0; i < N; i++) ids.push(await r.start([SH, '-c', produce()]))
  const sts = await Promise.all(ids.map((id) => r.wait(id)))
  for (const s of sts) bytes += s.stdoutBytes
}
const wallMs = now() - t0
clearInterval(probe)
if (bytes !== N * BYTES) throw new Error(`${kind}: ${bytes} bytes captured, expected ${N * BYTES}`)
cleanLogs()

report({
  case: 'lag',
  runner: kind,
  commands: N,
  bytesEach: BYTES,
  wallMs,
  ticks: lags.length,
  p50: percentile(lags, 50),
  p99: percentile(lags, 99),
  max: percentile(lags, 100),
})
