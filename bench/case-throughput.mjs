// Case 3 — capture throughput: one command writes M MiB to stdout; the time
// from the start call to the settled status, per runner (one per process),
// against the same producer writing straight to a file (--runner limit).

import fs from 'node:fs'
import path from 'node:path'

import { cleanLogs, flags, makeRunner, median, MiB, now, report, runDirect, scratch, settleDisk, SH } from './common.mjs'

const f = flags()
const kind = f.runner
const BYTES = Number(f.mib ?? 1024) * MiB
const REPS = Number(f.reps ?? 3)
const produce = (out) => (out ? `head -c ${BYTES} /dev/zero > ${out}` : `head -c ${BYTES} /dev/zero`)

const runner = kind === 'limit' ? undefined : makeRunner(kind, { maxOutputBytes: BYTES * 2 })
const times = []
const cpu = []
for (let rep = 0; rep < REPS; rep++) {
  cleanLogs()
  settleDisk()
  const c0 = process.cpuUsage()
  const t0 = now()
  let bytes
  if (kind === 'limit') {
    const dir = path.join(scratch(), 'direct')
    fs.mkdirSync(dir, { recursive: true })
    const out = path.join(dir, 'out.log')
    await runDirect([SH, '-c', produce(out)])
    bytes = fs.statSync(out).size
  } else {
    const id = await runner.start([SH, '-c', produce()])
    bytes = (await runner.wait(id)).stdoutBytes
  }
  times.push(now() - t0)
  const c = process.cpuUsage(c0)
  cpu.push((c.user + c.system) / 1000)
  if (bytes !== BYTES) throw new Error(`${kind}: ${bytes} bytes, expected ${BYTES}`)
}
cleanLogs()

const ms = median(times)
report({
  case: 'throughput',
  runner: kind,
  bytes: BYTES,
  reps: REPS,
  timesMs: times,
  ms,
  mibPerS: BYTES / MiB / (ms / 1000),
  hostCpuMs: median(cpu),
})
