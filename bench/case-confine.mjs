// Case 7 — the cost of kernel confinement at start: with the host holding
// --heap MiB of touched JS heap, time start → settle of `true`, one after
// another, confined (the default Confinement: Landlock + the seccomp socket
// filter, applied by a short-lived thread before posix_spawn) and unconfined,
// interleaved round by round so the machine's load hits both alike.

import { flags, loadOurs, median, now, report, scratch, TRUE } from './common.mjs'

const f = flags()
const HEAP_MIB = Number(f.heap ?? 50)
const N = Number(f.n ?? 200)
const ROUNDS = Number(f.rounds ?? 5)

const keep = []
const PER = 1 << 20
for (let i = 0; i < Math.round((HEAP_MIB * 1024 * 1024) / 8 / PER); i++) keep.push(new Array(PER).fill(i + 0.5))
globalThis.gc?.()

const nc = loadOurs()
const cwdRoot = scratch()
const plain = {}
nc.setBackgroundCommandPolicy(plain, { allowedExecutables: [TRUE], cwdRoot })
const confined = {}
nc.setBackgroundCommandPolicy(confined, { allowedExecutables: [TRUE], cwdRoot, confine: {} })

async function seq(host, want) {
  const t = now()
  for (let i = 0; i < N; i++) {
    const { taskId } = await nc.startBackgroundCommand(host, [TRUE], { cwd: '.' })
    const st = await nc.awaitBackgroundCommand(host, taskId)
    if (st.exitCode !== 0 || st.confined !== want) throw new Error(JSON.stringify(st))
  }
  return (now() - t) / N
}

await seq(plain, false) // warm-up
await seq(confined, true)
const runs = { plain: [], confined: [] }
for (let r = 0; r < ROUNDS; r++) {
  runs.plain.push(await seq(plain, false))
  runs.confined.push(await seq(confined, true))
}
if (keep.length < 0) console.log(keep)
const plainMs = median(runs.plain)
const confinedMs = median(runs.confined)
report({ case: 'confine', heapMiB: HEAP_MIB, commands: N, rounds: ROUNDS, plainMs, confinedMs, ratio: confinedMs / plainMs, runs })
