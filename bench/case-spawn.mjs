// Case 4 — spawn cost vs host memory: with the host holding --heap MiB of
// touched JS heap, time start-to-settle of N `true` commands — all started at
// once (burst) and one after another (seq: each settled before the next
// starts) — and how long each start call blocks the JS thread. Each heap size
// runs in its own process; this process measures every runner in turn.

import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

import { flags, makeRunner, median, now, percentile, report, runDirect, SH, TRUE } from './common.mjs'

const f = flags()
const HEAP_MIB = Number(f.heap ?? 50)
const N = Number(f.n ?? 300)
const RUNNERS = (f.runners ?? 'reference,execa,ours').split(',')
const ROUNDS = Number(f.rounds ?? 3)

// Touch the heap: arrays of doubles, 8 MB each, every element written.
const keep = []
const PER = 1 << 20
const t0 = now()
for (let i = 0; i < Math.round((HEAP_MIB * 1024 * 1024) / 8 / PER); i++) keep.push(new Array(PER).fill(i + 0.5))
const fillMs = now() - t0
globalThis.gc?.()
const heapUsed = process.memoryUsage().heapUsed
const rss = process.memoryUsage().rss

/** N commands: one after another (seq: each settled before the next starts) or all at once (burst). */
async function batch(r, MODE) {
  const block = []
  const t = now()
  const sts = []
  if (MODE === 'seq') {
    for (let i = 0; i < N; i++) {
      const b = now()
      const p = r.start([TRUE])
      block.push(now() - b)
      sts.push(await r.wait(await p))
    }
  } else {
    const ids = []
    for (let i = 0; i < N; i++) {
      const b = now()
      ids.push(r.start([TRUE]))
      block.push(now() - b)
    }
    sts.push(...(await Promise.all((await Promise.all(ids)).map((id) => r.wait(id)))))
  }
  const ms = now() - t
  for (const s of sts) if (s.state !== 'exited' || s.exitCode !== 0) throw new Error(`${r.kind}: ${JSON.stringify(s)}`)
  return { ms, block }
}

const results = { burst: {}, seq: {} }
const runners = Object.fromEntries(RUNNERS.map((k) => [k, makeRunner(k)]))
for (const kind of RUNNERS) await batch(runners[kind], 'burst') // warm-up (code paths, the watchdog, thread pools)
for (const mode of ['burst', 'seq']) {
  // Rounds interleave the runners, so a burst of load on the machine hits them alike.
  const runs = Object.fromEntries(RUNNERS.map((k) => [k, { ms: [], block: [] }]))
  runs.limit = { ms: [] }
  for (let i = 0; i < ROUNDS; i++) {
    for (const kind of RUNNERS) {
      const b = await batch(runners[kind], mode)
      runs[kind].ms.push(b.ms)
      runs[kind].block.push(...b.block)
    }
    // The machine's limit: a small shell starting the same N commands.
    const t = now()
    const sep = mode === 'seq' ? ';' : ' &'
    await runDirect([SH, '-c', `i=0; while [ $i -lt ${N} ]; do ${TRUE}${sep} i=$((i+1)); done; wait`])
    runs.limit.ms.push(now() - t)
  }
  for (const [kind, r] of Object.entries(runs)) {
    results[mode][kind] = { ms: median(r.ms), runsMs: r.ms }
    if (r.block) {
      results[mode][kind].blockMeanMs = r.block.reduce((a, b) => a + b, 0) / r.block.length
      results[mode][kind].blockP99Ms = percentile(r.block, 99)
    }
  }
}

// The floor under a start's JS-thread time: what any runner must do there
// before a process exists — create the log directory and its two files —
// done with plain synchronous fs calls in this same process and heap.
const floorRoot = mkdtempSync(path.join(tmpdir(), 'nlc-bench-floor-'))
const floor = []
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < N; i++) {
    const b = now()
    const dir = path.join(floorRoot, `${round}-${i}`)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    for (const name of ['stdout.log', 'stderr.log']) closeSync(openSync(path.join(dir, name), 'wx', 0o600))
    floor.push(now() - b)
  }
}
rmSync(floorRoot, { recursive: true, force: true })
results.floor = { blockMeanMs: floor.reduce((a, b) => a + b, 0) / floor.length, blockP99Ms: percentile(floor, 99) }

if (keep.length < 0) console.log(keep) // keep the heap alive to the end
report({ case: 'spawn', heapMiB: HEAP_MIB, heapUsed, rss, fillMs, commands: N, results })
