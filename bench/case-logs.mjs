// Case 7 — the cost of keeping a log budget (SPEC §13): N commands that each
// print 4 KiB, one after another (each settled before the next starts), with
// no log limit and with a budget small enough that every settle removes the
// oldest logs, rounds interleaved in one process. Reported: start-to-settle
// per command and the JS-thread time of each start call, both modes.

import { flags, makeRunner, median, now, report, SH } from './common.mjs'

const f = flags()
const N = Number(f.n ?? 300)
const ROUNDS = Number(f.rounds ?? 5)
const r = makeRunner('ours')
const BUDGET = Number(f.budget ?? 256 * 1024)
// Leave no task directory behind.
r.nc.configureLogs({ removeOnExit: true })

async function batch() {
  const block = []
  const t = now()
  for (let i = 0; i < N; i++) {
    const b = now()
    const p = r.start([SH, '-c', 'printf %04096d 0'])
    block.push(now() - b)
    const st = await r.wait(await p)
    if (st.state !== 'exited' || st.stdoutBytes !== 4096) throw new Error(JSON.stringify(st))
  }
  return { perCommandMs: (now() - t) / N, blockMeanMs: block.reduce((a, b) => a + b, 0) / N }
}

await batch() // warm-up
const runs = { none: [], budget: [] }
for (let i = 0; i < ROUNDS; i++) {
  for (const mode of i % 2 ? ['budget', 'none'] : ['none', 'budget']) {
    r.nc.configureLogs({ maxTotalBytes: mode === 'budget' ? BUDGET : null })
    runs[mode].push(await batch())
  }
}
r.nc.configureLogs({ maxTotalBytes: null })
await r.nc.pruneBackgroundCommandLogs({ keepBytes: 0 })
const summary = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, { perCommandMs: median(v.map((x) => x.perCommandMs)), blockMeanMs: median(v.map((x) => x.blockMeanMs)), runs: v }]))
summary.ratio = summary.budget.perCommandMs / summary.none.perCommandMs
summary.blockRatio = summary.budget.blockMeanMs / summary.none.blockMeanMs
report({ case: 'logs', commands: N, budgetBytes: BUDGET, results: summary })
