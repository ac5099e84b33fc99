// Case 9 — recovery (SPEC §15).
//
//   --mode cost --n N      N commands (`true`) one after another, each started
//                          and awaited (start → settle), ms in all; run.mjs
//                          runs it with and without manifests
//                          (NEUROLINK_COMMANDS_BENCH_NO_MANIFEST) in
//                          alternating rounds of the same run; with
//                          --stdin pipe each command has an input, and
//                          run.mjs compares it with and without the input
//                          watch (NEUROLINK_COMMANDS_BENCH_NO_INPUT_WATCH).
//   --mode make --n N      N settled commands (bursts of 250) whose logs go to
//                          --dir; the process then exits, leaving them behind.
//   --mode recover         a fresh process: recoverBackgroundCommands over
//                          --dir, timed, checked to recover --n commands.

import { flags, loadOurs, now, report, scratch, TRUE } from './common.mjs'

const f = flags()
const N = Number(f.n ?? 300)
const nc = loadOurs()
if (f.dir) nc.configureLogs({ dir: f.dir })
const host = {}
nc.setBackgroundCommandPolicy(host, { allowedExecutables: [TRUE], cwdRoot: scratch() })

if (f.mode === 'cost') {
  const opts = f.stdin === 'pipe' ? { cwd: '.', stdin: 'pipe' } : { cwd: '.' }
  // Warm-up: the watchdog, the log base, the thread pools.
  for (let i = 0; i < 20; i++) await nc.awaitBackgroundCommand(host, (await nc.startBackgroundCommand(host, [TRUE], opts)).taskId)
  const t = now()
  for (let i = 0; i < N; i++) {
    const { taskId } = await nc.startBackgroundCommand(host, [TRUE], opts)
    const st = await nc.awaitBackgroundCommand(host, taskId)
    if (st.state !== 'exited') throw new Error(JSON.stringify(st))
  }
  report({ ms: now() - t, n: N })
} else if (f.mode === 'make') {
  for (let done = 0; done < N; ) {
    const ids = []
    for (let i = 0; i < 250 && done < N; i++, done++) ids.push((await nc.startBackgroundCommand(host, [TRUE], { cwd: '.' })).taskId)
    await Promise.all(ids.map((id) => nc.awaitBackgroundCommand(host, id)))
  }
  report({ made: N })
} else if (f.mode === 'recover') {
  const t = now()
  const n = await nc.recoverBackgroundCommands(host)
  const ms = now() - t
  if (n !== N) throw new Error(`recovered ${n}, expected ${N}`)
  const rows = nc.listBackgroundCommands(host)
  const st = nc.getBackgroundCommandStatus(host, rows[0].taskId)
  if (st.recovered !== true || st.state !== 'exited') throw new Error(JSON.stringify(st))
  report({ ms, n })
} else {
  throw new Error('--mode cost | make | recover')
}
