// Case 5 — fan-out: N commands started at once; the time until all settled
// and the peak thread count of the host process (/proc/self/status), one
// runner per process so the thread counts are the runner's alone.

import { flags, makeRunner, now, report, runDirect, SH, threadCount } from './common.mjs'

const f = flags()
const kind = f.runner
const N = Number(f.n ?? 1000)
const ECHO = '/bin/echo'

let peak = threadCount()
const before = peak
const sampler = setInterval(() => {
  peak = Math.max(peak, threadCount())
}, 2)

const t0 = now()
let startLoopMs
if (kind === 'limit') {
  await runDirect([SH, '-c', `i=0; while [ $i -lt ${N} ]; do ${ECHO} fan-out >/dev/null & i=$((i+1)); done; wait`])
} else {
  const r = makeRunner(kind)
  const ids = []
  for (let i = 0; i < N; i++) ids.push(r.start([ECHO, 'fan-out', String(i)]))
  startLoopMs = now() - t0
  const sts = await Promise.all((await Promise.all(ids)).map((id) => r.wait(id)))
  peak = Math.max(peak, threadCount())
  const bad = sts.filter((s) => s.state !== 'exited' || s.exitCode !== 0)
  if (bad.length) throw new Error(`${kind}: ${bad.length} commands did not exit 0: ${JSON.stringify(bad[0])}`)
}
const ms = now() - t0
clearInterval(sampler)

report({ case: 'fanout', runner: kind, commands: N, ms, startLoopMs, threadsBefore: before, threadsPeak: peak })
