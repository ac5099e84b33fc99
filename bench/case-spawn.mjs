// Case 4 — spawn cost vs host memory: with the host holding --heap MiB of
// touched JS heap, start N `true` commands at once and time start-to-settle
// (all settled), and how long each start call blocks the JS thread. Each heap
// size runs in its own process; this process measures every runner in turn.

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

const MODE = f.mode ?? 'seq'

/** N commands: one after another (seq: each settled before the next starts) or all at once (burst). */
async function batch(r) {
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

const results = {}
for (const kind of RUNNERS) {
  const r = makeRunner(kind)
  await batch(r) // warm-up (code paths, the watchdog, thread pools)
  const runs = []
  let blocks = []
  for (let i = 0; i < ROUNDS; i++) {
    const b = await batch(r)
    runs.push(b.ms)
    blocks = blocks.concat(b.block)
  }
  results[kind] = {
    ms: median(runs),
    runsMs: runs,
    blockMeanMs: blocks.reduce((a, b) => a + b, 0) / blocks.length,
    blockP99Ms: percentile(blocks, 99),
  }
}

// The machine's limit: a small shell starting the same N commands, all at once.
const lim = []
for (let i = 0; i < ROUNDS; i++) {
  const t = now()
  const amp = MODE === 'seq' ? '' : ' &'
  await runDirect([SH, '-c', `i=0; while [ $i -lt ${N} ]; do ${TRUE}${amp}; i=$((i+1)); done; wait`])
  lim.push(now() - t)
}
results.limit = { ms: median(lim), runsMs: lim }

if (keep.length < 0) console.log(keep) // keep the heap alive to the end
report({ case: 'spawn', mode: MODE, heapMiB: HEAP_MIB, heapUsed, rss, fillMs, commands: N, results })
