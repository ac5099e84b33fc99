// Case 10 — fast paths against the standard ones, in one process each:
// run.mjs runs this case with and without NEUROLINK_COMMANDS_STANDARD_PATHS=1
// (read once at load) in alternating rounds of the same run. With --heap MiB
// of touched JS heap it times:
//
//   start → settle of `true`, one after another (--n of them): the engine's
//   clone-based spawn and the adapter's object makers, or std::process::Command
//   (which forks the host for its pre_exec hook) and napi-rs's serde objects;
//
//   getBackgroundCommandStatus of a settled command (--statuses calls): the
//   status object built by the adapter's maker, or by napi-rs's serde
//   conversion.

import { flags, loadOurs, now, report, scratch, TRUE } from './common.mjs'

const f = flags()
const HEAP_MIB = Number(f.heap ?? 50)
const N = Number(f.n ?? 300)
const STATUSES = Number(f.statuses ?? 20_000)

const keep = []
const PER = 1 << 20
for (let i = 0; i < Math.round((HEAP_MIB * 1024 * 1024) / 8 / PER); i++) keep.push(new Array(PER).fill(i + 0.5))
globalThis.gc?.()

const nc = loadOurs()
const host = {}
nc.setBackgroundCommandPolicy(host, { allowedExecutables: [TRUE], cwdRoot: scratch() })

async function one() {
  const { taskId } = await nc.startBackgroundCommand(host, [TRUE], { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(host, taskId)
  if (st.state !== 'exited' || st.exitCode !== 0) throw new Error(JSON.stringify(st))
  return taskId
}

// Warm-up: the watchdog, the log base, the thread pools, the JIT.
let settled
for (let i = 0; i < 20; i++) settled = await one()
const t0 = now()
for (let i = 0; i < N; i++) await one()
const startSettleUs = ((now() - t0) * 1000) / N

for (let i = 0; i < 1000; i++) nc.getBackgroundCommandStatus(host, settled)
const t1 = now()
let keys = 0
for (let i = 0; i < STATUSES; i++) keys += Object.keys(nc.getBackgroundCommandStatus(host, settled)).length
const statusUs = ((now() - t1) * 1000) / STATUSES

report({
  standard: process.env.NEUROLINK_COMMANDS_STANDARD_PATHS === '1',
  heapMiB: HEAP_MIB,
  n: N,
  startSettleUs,
  statuses: STATUSES,
  statusUs,
  keysPerStatus: keys / STATUSES,
  keep: keep.length,
})
