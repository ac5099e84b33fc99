// `pnpm run bench`: the six cases, each measured side by side in one
// run — the JS reference runner (bench/reference-runner.mjs), execa where the
// case applies, ours, and the machine's limit (the same producer with no
// runner in between). Every measurement runs in a child process of its own
// (or one per heap size), so heaps, threads and allocators do not mix.
//
// Prints the table, and writes bench/results/latest.json, latest.svg and
// latest.md (the table docs/benchmarks.md includes).
//
//   node bench/run.mjs              the full run
//   node bench/run.mjs --only 3,5   some cases, results not written
//   node bench/run.mjs --only 10    the fast paths against the standard ones
//   node bench/run.mjs --render     rewrite the table, chart and notes from
//                                   results/latest.json without measuring

import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const REPO_ROOT = path.dirname(HERE)
const RESULTS = path.join(HERE, 'results')
const args = process.argv.slice(2)
const onlyArg = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined
const only = onlyArg ? new Set(onlyArg.split(',').map(Number)) : undefined
const previous = args.includes('--render') ? JSON.parse(fs.readFileSync(path.join(RESULTS, 'latest.json'), 'utf8')) : undefined
const want = (n) => !previous && (!only || only.has(n))

// ---- sizes (the issue's, unless said otherwise in the table) ----------------
const SIZES = previous?.sizes ?? {
  pagingMiB: 32,
  pagingRefEvery: 4,
  lagCommands: 8,
  lagMiB: 256,
  lagRounds: 3,
  throughputMiB: 1024,
  throughputReps: 3,
  spawnCommands: 300,
  spawnRounds: 2,
  spawnRepeats: 3,
  spawnHeaps: [50, 2048],
  fanout: 1000,
  memoryCommands: 20_000,
  memoryOutputCommands: 2000,
  memoryOutputBytes: 10_000,
  rssCommands: 5000,
  rssWarm: 200,
  rssRepeats: 3,
  confineCommands: 200,
  confineRounds: 5,
  waitTicks: 40,
  waitRounds: 3,
  searchReps: 9,
  manifestCommands: 300,
  manifestRounds: 5,
  recoverCommands: 10_000,
  pathsCommands: 300,
  pathsStatuses: 20_000,
  pathsRounds: 3,
}

// ---- scratch: every runner's logs go under one fresh directory -------------
const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'nlc-bench-')))
const childEnv = { ...process.env, TMPDIR: scratch, NLC_BENCH_SCRATCH: scratch }
process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }))

function fsType(dir) {
  // The filesystem the logs are written to: it shapes cases 3–6.
  try {
    const mounts = fs
      .readFileSync('/proc/self/mounts', 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
    let best = ['', '', '?']
    for (const m of mounts) if (dir.startsWith(m[1]) && m[1].length >= best[1].length) best = m
    return `${best[2]} (${best[1]})`
  } catch {
    return '?'
  }
}

function child(script, scriptArgs = [], nodeFlags = [], extraEnv = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...nodeFlags, path.join(HERE, script), ...scriptArgs], {
      env: { ...childEnv, ...extraEnv },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    p.stdout.on('data', (d) => (out += d))
    p.on('error', reject)
    p.on('close', (code, signal) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '))
      if (code !== 0 || !line) {
        reject(new Error(`${script} ${scriptArgs.join(' ')} failed (${signal ?? code}):\n${out}`))
      } else {
        resolve(JSON.parse(line.slice(7)))
      }
    })
  })
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor((s.length - 1) / 2)]
}
const step = (msg) => process.stderr.write(`[bench ${((performance.now() - T0) / 1000).toFixed(0)}s] ${msg}\n`)

const T0 = performance.now()
const startedAt = previous ? new Date(previous.date) : new Date()
const load0 = previous?.machine.loadAvgStart ?? os.loadavg()
const raw = previous?.raw ?? {}

// ---- 1. paging ---------------------------------------------------------------
if (want(1)) {
  step('case 1: paging a settled 32 MiB log')
  raw.paging = await child('case-paging.mjs', ['--mib', String(SIZES.pagingMiB), '--ref-every', String(SIZES.pagingRefEvery)])
}

// ---- 2. event-loop lag ------------------------------------------------------
if (want(2)) {
  raw.lag = { limit: [], ours: [], execa: [], reference: [] }
  for (let round = 0; round < SIZES.lagRounds; round++) {
    for (const runner of ['limit', 'ours', 'execa', 'reference']) {
      step(`case 2: event-loop lag, ${runner}, round ${round + 1}/${SIZES.lagRounds}`)
      raw.lag[runner].push(await child('case-lag.mjs', ['--runner', runner, '--n', String(SIZES.lagCommands), '--mib', String(SIZES.lagMiB)]))
    }
  }
}

// ---- 3. throughput ----------------------------------------------------------
if (want(3)) {
  raw.throughput = {}
  for (const runner of ['limit', 'ours', 'execa', 'reference']) {
    step(`case 3: capture throughput, ${runner}`)
    raw.throughput[runner] = await child('case-throughput.mjs', ['--runner', runner, '--mib', String(SIZES.throughputMiB), '--reps', String(SIZES.throughputReps)])
  }
}

// ---- 4. spawn cost vs heap --------------------------------------------------
if (want(4)) {
  // The heap sizes alternate (50, 2048, 50, 2048): a drift in the machine's
  // load then falls on both alike. Each child measures every runner.
  const children = Object.fromEntries(SIZES.spawnHeaps.map((h) => [h, []]))
  for (let rep = 0; rep < SIZES.spawnRepeats; rep++) {
    for (const heap of SIZES.spawnHeaps) {
      step(`case 4: spawn cost with a ${heap} MiB heap (${rep + 1}/${SIZES.spawnRepeats})`)
      children[heap].push(
        await child(
          'case-spawn.mjs',
          ['--heap', String(heap), '--n', String(SIZES.spawnCommands), '--rounds', String(SIZES.spawnRounds)],
          ['--expose-gc', `--max-old-space-size=${Math.max(1024, heap * 2)}`],
        ),
      )
    }
  }
  raw.spawn = {}
  for (const [heap, list] of Object.entries(children)) {
    const results = {}
    for (const mode of ['burst', 'seq']) {
      results[mode] = {}
      for (const kind of Object.keys(list[0].results[mode])) {
        const runsMs = list.flatMap((c) => c.results[mode][kind].runsMs)
        const one = { ms: median(runsMs), runsMs }
        if (list[0].results[mode][kind].blockMeanMs !== undefined) {
          one.blockMeanMs = list.reduce((a, c) => a + c.results[mode][kind].blockMeanMs, 0) / list.length
          one.blockP99Ms = Math.max(...list.map((c) => c.results[mode][kind].blockP99Ms))
        }
        results[mode][kind] = one
      }
    }
    if (list[0].results.floor) {
      results.floor = { blockMeanMs: list.reduce((a, c) => a + c.results.floor.blockMeanMs, 0) / list.length }
    }
    raw.spawn[heap] = { heapMiB: Number(heap), children: list.map(({ results, ...rest }) => rest), results }
  }
}

// ---- 5. fan-out -------------------------------------------------------------
if (want(5)) {
  raw.fanout = {}
  for (const runner of ['limit', 'ours', 'execa', 'reference']) {
    step(`case 5: fan-out of ${SIZES.fanout}, ${runner}`)
    raw.fanout[runner] = await child('case-fanout.mjs', ['--runner', runner, '--n', String(SIZES.fanout)])
  }
}

// ---- 6. memory per settled command ------------------------------------------
// V8's young generation is pinned at 1 MiB: left alone it grows with the
// allocation rate, and that sizing of the nursery is not memory a command keeps.
const MEMORY_FLAGS = ['--expose-gc', '--max-semi-space-size=1']
if (want(6)) {
  raw.memory = {}
  raw.memoryOutput = {}
  for (const runner of ['ours', 'reference']) {
    step(`case 6: memory over ${SIZES.memoryCommands} settled commands, ${runner}`)
    raw.memory[runner] = await child('case-memory.mjs', ['--runner', runner, '--n', String(SIZES.memoryCommands)], MEMORY_FLAGS)
    step(`case 6b: memory over ${SIZES.memoryOutputCommands} commands that print, ${runner}`)
    raw.memoryOutput[runner] = await child(
      'case-memory.mjs',
      ['--runner', runner, '--n', String(SIZES.memoryOutputCommands), '--warm', '200', '--output', String(SIZES.memoryOutputBytes)],
      MEMORY_FLAGS,
    )
  }
}

// ---- 6c. whole-process RSS per settled command (the protocol of docs/benchmarks.md) ---
// A fresh `node --expose-gc` with V8 at its defaults, commands one after
// another; the floor is the same loop with no command in it. The runners
// alternate, repeated, and the medians are reported.
if (want(6) && SIZES.rssCommands) {
  raw.rss = { ours: [], reference: [], floor: [] }
  for (let rep = 0; rep < SIZES.rssRepeats; rep++) {
    for (const runner of ['floor', 'ours', 'reference']) {
      step(`case 6c: whole RSS over ${SIZES.rssCommands} settled commands, ${runner} (${rep + 1}/${SIZES.rssRepeats})`)
      raw.rss[runner].push(await child('case-rss.mjs', ['--runner', runner, '--n', String(SIZES.rssCommands), '--warm', String(SIZES.rssWarm)], ['--expose-gc']))
    }
  }
}

// ---- 7. confinement at start -------------------------------------------------
if (want(7) && SIZES.confineCommands) {
  raw.confine = {}
  for (const heap of SIZES.spawnHeaps) {
    step(`case 7: confined vs unconfined start, ${heap} MiB heap`)
    raw.confine[heap] = await child('case-confine.mjs', ['--heap', String(heap), '--n', String(SIZES.confineCommands), '--rounds', String(SIZES.confineRounds)])
  }
  // The same in a real checkout (this repository's): what the look for
  // repositories to protect adds to each confined start.
  step('case 7c: confined vs unconfined start, this checkout as the write tree')
  raw.confine.checkout = await child('case-confine.mjs', ['--heap', String(SIZES.spawnHeaps[0]), '--n', String(SIZES.confineCommands), '--rounds', String(SIZES.confineRounds), '--root', REPO_ROOT])
}

// ---- 8. waits and search --------------------------------------------------------
if (want(8) && SIZES.waitTicks) {
  step('case 8: wait latency against a JS data listener; search against grep -n')
  raw.waits = await child('case-waits.mjs', ['--n', String(SIZES.waitTicks), '--rounds', String(SIZES.waitRounds), '--reps', String(SIZES.searchReps)])
}

// ---- 9. recovery ----------------------------------------------------------------
if (want(9) && SIZES.recoverCommands) {
  step('case 9: start → settle with and without manifests, with and without the input watch; recovering 10,000 settled commands')
  const cost = { on: [], off: [] }
  for (let r = 0; r < SIZES.manifestRounds; r++) {
    // Alternating, so the machine's load falls on both alike.
    for (const m of r % 2 ? ['off', 'on'] : ['on', 'off']) {
      const res = await child('case-recovery.mjs', ['--mode', 'cost', '--n', String(SIZES.manifestCommands)], [], m === 'off' ? { NEUROLINK_COMMANDS_BENCH_NO_MANIFEST: '1' } : {})
      cost[m].push((res.ms / res.n) * 1000)
    }
  }
  // The input watch, on commands that have an input (stdin: 'pipe').
  const watch = { on: [], off: [] }
  for (let r = 0; r < SIZES.manifestRounds; r++) {
    for (const m of r % 2 ? ['off', 'on'] : ['on', 'off']) {
      const res = await child(
        'case-recovery.mjs',
        ['--mode', 'cost', '--stdin', 'pipe', '--n', String(SIZES.manifestCommands)],
        [],
        m === 'off' ? { NEUROLINK_COMMANDS_BENCH_NO_INPUT_WATCH: '1' } : {},
      )
      watch[m].push((res.ms / res.n) * 1000)
    }
  }
  const dir = fs.mkdtempSync(path.join(scratch, 'recover-'))
  await child('case-recovery.mjs', ['--mode', 'make', '--n', String(SIZES.recoverCommands), '--dir', dir])
  const rec = await child('case-recovery.mjs', ['--mode', 'recover', '--n', String(SIZES.recoverCommands), '--dir', dir])
  fs.rmSync(dir, { recursive: true, force: true })
  raw.recovery = { withUs: cost.on, withoutUs: cost.off, watchUs: watch.on, noWatchUs: watch.off, recoverMs: rec.ms, recovered: rec.n }
}

// ---- 10. fast paths vs the standard ones ----------------------------------------
if (want(10) && SIZES.pathsCommands) {
  raw.paths = {}
  for (const heap of SIZES.spawnHeaps) {
    raw.paths[heap] = { fast: [], standard: [] }
    for (let r = 0; r < SIZES.pathsRounds; r++) {
      // Alternating, so the machine's load falls on both alike.
      for (const m of r % 2 ? ['standard', 'fast'] : ['fast', 'standard']) {
        step(`case 10: ${m} paths, ${heap} MiB heap (${r + 1}/${SIZES.pathsRounds})`)
        raw.paths[heap][m].push(
          await child(
            'case-paths.mjs',
            ['--heap', String(heap), '--n', String(SIZES.pathsCommands), '--statuses', String(SIZES.pathsStatuses)],
            ['--expose-gc', `--max-old-space-size=${Math.max(1024, heap * 2)}`],
            m === 'standard' ? { NEUROLINK_COMMANDS_STANDARD_PATHS: '1' } : {},
          ),
        )
      }
    }
  }
}

const totalS = previous?.totalSeconds ?? (performance.now() - T0) / 1000
const load1 = previous?.machine.loadAvgEnd ?? os.loadavg()

// ---- the table ----------------------------------------------------------------
/**
 * A row: `better` says which direction wins ("lower" for times, "higher" for
 * throughput) — the chart uses it to show every row as "× the reference".
 */
const rows = []
const fmt = (v, digits = 1) => (v === undefined || v === null || Number.isNaN(v) ? '—' : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }))
const x = (v) => (v === undefined || Number.isNaN(v) ? '—' : `${fmt(v, v >= 10 ? 0 : v >= 1 ? 1 : 2)}×`)

if (raw.paging) {
  const p = raw.paging
  const ratio = p.oursMs / p.limitMs
  rows.push({
    id: '1',
    short: `1 paging, all pages of ${SIZES.pagingMiB} MiB`,
    case: `Paging: all ${p.pages} pages of 50,000 chars of a settled ${SIZES.pagingMiB} MiB log (ASCII + multi-byte)${p.refPagesTimed < p.pages ? `; reference: ${p.refPagesTimed} pages timed, × ${p.pages}/${p.refPagesTimed}` : ''}, ms`,
    unit: 'ms',
    better: 'lower',
    reference: p.refMs,
    ours: p.oursMs,
    limit: p.limitMs,
    ratio: `ours/limit ${x(ratio)} (reference/ours ${x(p.refMs / p.oursMs)})`,
    goal: 'ours ≤ 1.5× one sequential read',
    met: ratio <= 1.5,
  })
}
if (raw.lag) {
  const m = (r, k) => median(raw.lag[r].map((s) => s[k]))
  const ours = m('ours', 'p99')
  rows.push({
    id: '2',
    short: '2 event-loop lag p99',
    case: `Event-loop lag p99 while ${SIZES.lagCommands} commands write ${SIZES.lagMiB} MiB each (median of ${SIZES.lagRounds} runs), ms`,
    unit: 'ms',
    better: 'lower',
    reference: m('reference', 'p99'),
    execa: m('execa', 'p99'),
    ours,
    limit: m('limit', 'p99'),
    ratio: `reference/ours ${x(m('reference', 'p99') / ours)}`,
    goal: 'ours p99 ≤ 2 ms',
    met: ours <= 2,
  })
  rows.push({
    id: '2b',
    short: '2b event-loop lag max',
    chart: false,
    case: `… max lag in the same runs, ms`,
    unit: 'ms',
    better: 'lower',
    reference: m('reference', 'max'),
    execa: m('execa', 'max'),
    ours: m('ours', 'max'),
    limit: m('limit', 'max'),
    ratio: `reference/ours ${x(m('reference', 'max') / m('ours', 'max'))}`,
    goal: '(report)',
  })
  rows.push({
    id: '2c',
    short: '2c lag runs: wall time',
    case: `… wall time until all ${SIZES.lagCommands} settled, ms`,
    unit: 'ms',
    better: 'lower',
    reference: m('reference', 'wallMs'),
    execa: m('execa', 'wallMs'),
    ours: m('ours', 'wallMs'),
    limit: m('limit', 'wallMs'),
    ratio: `ours/limit ${x(m('ours', 'wallMs') / m('limit', 'wallMs'))}`,
    goal: '(report)',
  })
}
if (raw.throughput) {
  const t = raw.throughput
  const ratio = t.ours.mibPerS / t.limit.mibPerS
  rows.push({
    id: '3',
    short: '3 capture throughput 1 GiB',
    case: `Capture throughput: one command writes ${SIZES.throughputMiB} MiB to stdout (median of ${SIZES.throughputReps}), MiB/s`,
    unit: 'MiB/s',
    better: 'higher',
    reference: t.reference.mibPerS,
    execa: t.execa.mibPerS,
    ours: t.ours.mibPerS,
    limit: t.limit.mibPerS,
    ratio: `ours/limit ${x(ratio)}`,
    goal: 'ours ≥ 0.7× limit',
    met: ratio >= 0.7,
  })
  rows.push({
    id: '3b',
    short: '3b host CPU per GiB',
    chart: false,
    case: `… host CPU time spent per run (user+sys of the host process), ms`,
    unit: 'ms',
    better: 'lower',
    reference: t.reference.hostCpuMs,
    execa: t.execa.hostCpuMs,
    ours: t.ours.hostCpuMs,
    limit: t.limit.hostCpuMs,
    ratio: `reference/ours ${x(t.reference.hostCpuMs / t.ours.hostCpuMs)}`,
    goal: '(report)',
  })
}
if (raw.spawn) {
  const [small, big] = SIZES.spawnHeaps
  const s = raw.spawn
  const n = SIZES.spawnCommands
  for (const [heap, id] of [
    [small, '4a'],
    [big, '4b'],
  ]) {
    const b = s[heap].results.burst
    const ratio = b.reference.ms / b.ours.ms
    rows.push({
      id,
      short: `${id} spawn ${n} at once, ${heap} MiB heap`,
      case: `Spawn: ${n} \`true\` started at once, start to all settled, host heap ${heap} MiB (median of ${SIZES.spawnRounds * SIZES.spawnRepeats}), ms`,
      unit: 'ms',
      better: 'lower',
      reference: b.reference.ms,
      execa: b.execa.ms,
      ours: b.ours.ms,
      limit: b.limit.ms,
      ratio: `reference/ours ${x(ratio)}`,
      goal: heap === big ? 'reference/ours ≥ 5× at 2 GiB' : '(baseline for 4c)',
      met: heap === big ? ratio >= 5 : undefined,
    })
  }
  const change = Math.abs(s[big].results.burst.ours.ms - s[small].results.burst.ours.ms) / s[small].results.burst.ours.ms
  const pct = (k) => (s[big].results.burst[k].ms / s[small].results.burst[k].ms - 1) * 100
  rows.push({
    id: '4c',
    short: '4c heap change',
    chart: false,
    case: `… change of that figure from ${small} MiB to ${big} MiB of heap (limit: the same shell loop in both processes, i.e. the machine's drift), %`,
    unit: '%',
    better: 'lower',
    reference: pct('reference'),
    execa: pct('execa'),
    ours: pct('ours'),
    limit: pct('limit'),
    ratio: `|ours| ${fmt(change * 100)}%`,
    goal: 'ours changes < 20%',
    met: change < 0.2,
  })
  for (const [heap, id] of [
    [small, '4d'],
    [big, '4e'],
  ]) {
    const q = s[heap].results.seq
    rows.push({
      id,
      short: `${id} spawn ${n} one by one, ${heap} MiB heap`,
      case: `… the same ${n} one after another (each settled before the next starts), heap ${heap} MiB, ms`,
      unit: 'ms',
      better: 'lower',
      reference: q.reference.ms,
      execa: q.execa.ms,
      ours: q.ours.ms,
      limit: q.limit.ms,
      ratio: `reference/ours ${x(q.reference.ms / q.ours.ms)}`,
      goal: '(report)',
    })
  }
  const bb = s[big].results.burst
  rows.push({
    id: '4f',
    short: '4f JS thread per start',
    chart: false,
    case: `… JS thread blocked per start call, mean over all starts, heap ${big} MiB, ms`,
    unit: 'ms',
    better: 'lower',
    reference: bb.reference.blockMeanMs,
    execa: bb.execa.blockMeanMs,
    ours: bb.ours.blockMeanMs,
    ratio: `reference/ours ${x(bb.reference.blockMeanMs / bb.ours.blockMeanMs)}`,
    goal: '(report)',
  })
  for (const [heap, id] of [
    [small, '4g'],
    [big, '4h'],
  ]) {
    const b = s[heap].results.burst
    const floor = s[heap].results.floor?.blockMeanMs
    rows.push({
      id,
      short: `${id} JS-thread time per start, ${heap} MiB heap`,
      chart: false,
      case: `JS-thread time per start (the start call, mean over all burst starts), heap ${heap} MiB; limit: creating the log directory and its two files with sync fs calls in the same process, ms`,
      unit: 'ms',
      better: 'lower',
      reference: b.reference.blockMeanMs,
      execa: b.execa.blockMeanMs,
      ours: b.ours.blockMeanMs,
      limit: floor,
      ratio: floor ? `ours/limit ${x(b.ours.blockMeanMs / floor)}` : '—',
      goal: 'ours ≤ 0.1 ms',
      met: b.ours.blockMeanMs <= 0.1,
    })
  }
  const q = s[small].results.seq
  const seqRatio = q.ours.ms / q.limit.ms
  rows.push({
    id: '4i',
    short: `4i one by one vs a shell loop`,
    chart: false,
    case: `Start → settle of \`true\`, one after another (${n}, heap ${small} MiB, median of ${SIZES.spawnRounds * SIZES.spawnRepeats} interleaved rounds) against a shell loop that forks and execs the same \`true\` ${n} times, ms`,
    unit: 'ms',
    better: 'lower',
    // The reference and execa figures of these runs are row 4d's.
    ours: q.ours.ms,
    limit: q.limit.ms,
    ratio: `ours/limit ${x(seqRatio)}`,
    goal: 'ours ≤ 1.3× the shell loop',
    met: seqRatio <= 1.3,
  })
}
if (raw.fanout) {
  const f = raw.fanout
  rows.push({
    id: '5a',
    short: `5a fan-out ${SIZES.fanout}: time`,
    case: `Fan-out: ${SIZES.fanout} \`echo\` started at once, until all settled, ms`,
    unit: 'ms',
    better: 'lower',
    reference: f.reference.ms,
    execa: f.execa.ms,
    ours: f.ours.ms,
    limit: f.limit.ms,
    ratio: `reference/ours ${x(f.reference.ms / f.ours.ms)}`,
    goal: 'ahead of the reference',
    met: f.ours.ms < f.reference.ms,
  })
  const added = f.ours.threadsPeak - f.ours.threadsBefore
  rows.push({
    id: '5b',
    short: '5b fan-out: peak threads',
    chart: false,
    case: `… peak threads of the host process (before the run: ${f.ours.threadsBefore})`,
    unit: 'threads',
    better: 'lower',
    reference: f.reference.threadsPeak,
    execa: f.execa.threadsPeak,
    ours: f.ours.threadsPeak,
    ratio: `ours adds ${added}`,
    goal: 'bounded by a small constant (≤ 2 workers + 8 blocking)',
    met: added <= 10,
  })
}
if (raw.memory) {
  const m = raw.memory
  rows.push({
    id: '6',
    short: '6 memory / settled `true`',
    case: `Memory: private RSS growth per settled \`true\` command over ${SIZES.memoryCommands.toLocaleString('en-US')} (all statuses still answerable; V8 nursery pinned at 1 MiB), bytes`,
    unit: 'B',
    better: 'lower',
    reference: m.reference.anonPerCommand,
    ours: m.ours.anonPerCommand,
    ratio: `reference/ours ${x(m.reference.anonPerCommand / m.ours.anonPerCommand)}`,
    goal: 'ours ≤ 1 KiB per command',
    met: m.ours.anonPerCommand <= 1024,
  })
  const o = raw.memoryOutput
  rows.push({
    id: '6b',
    short: '6b memory / command with output',
    case: `… per command that printed ${SIZES.memoryOutputBytes.toLocaleString('en-US')} bytes to each stream (${SIZES.memoryOutputCommands.toLocaleString('en-US')} commands), bytes`,
    unit: 'B',
    better: 'lower',
    reference: o.reference.anonPerCommand,
    ours: o.ours.anonPerCommand,
    ratio: `reference/ours ${x(o.reference.anonPerCommand / o.ours.anonPerCommand)}`,
    goal: '(report)',
  })
}
if (raw.rss) {
  const m = (runner, k) => median(raw.rss[runner].map((r) => r[k]))
  const ours = m('ours', 'rssPerCommand')
  rows.push({
    id: '6c',
    short: '6c whole RSS / settled `true`',
    case: `… whole-process RSS (VmRSS) growth per settled \`true\` over ${SIZES.rssCommands.toLocaleString('en-US')} started and awaited one after another, fresh \`node --expose-gc\` with V8 at its defaults, after ${SIZES.rssWarm} warm-up commands and two \`gc()\` (median of ${SIZES.rssRepeats}; limit: the same loop with no command in it), bytes`,
    unit: 'B',
    better: 'lower',
    reference: m('reference', 'rssPerCommand'),
    ours,
    limit: m('floor', 'rssPerCommand'),
    ratio: `reference/ours ${x(m('reference', 'rssPerCommand') / ours)}; ours − limit ${fmt(ours - m('floor', 'rssPerCommand'), 0)} B`,
    goal: 'ours ≤ 1 KiB per command',
    met: ours <= 1024,
  })
}

if (raw.confine) {
  for (const [i, heap] of SIZES.spawnHeaps.entries()) {
    const c = raw.confine[heap]
    if (!c) continue
    rows.push({
      id: `7${'ab'[i]}`,
      short: `7${'ab'[i]} confined start, ${heap} MiB heap`,
      case: `Confinement: start → settle of one \`true\`, one after another, confined by the default Confinement at level "full" (ours) vs the same start unconfined (limit column) and vs bwrap with the same isolation started unconfined (in the ratio column, where bwrap is installed), alternating start by start, host heap ${heap} MiB (median of ${SIZES.confineRounds * SIZES.confineCommands} starts each), ms`,
      unit: 'ms',
      better: 'lower',
      ours: c.confinedMs,
      limit: c.plainMs,
      ratio: `confined/unconfined ${c.ratio.toFixed(2)}×${c.bwrapMs == null ? '' : `; bwrap ${c.bwrapMs.toFixed(2)} ms`}`,
      goal: 'confined ≤ 2× unconfined and below bwrap (where installed)',
      met: c.ratio <= 2 && (c.bwrapMs == null || c.confinedMs < c.bwrapMs),
    })
  }
}

if (raw.confine?.checkout) {
  const c = raw.confine.checkout
  rows.push({
    id: '7c',
    short: '7c confined start in a checkout',
    case: `… the same at ${SIZES.spawnHeaps[0]} MiB with this repository's checkout as the write tree (the look for repositories to protect reads its directories at each confined start: node_modules and target skipped, at most 10,000 entries), ms`,
    unit: 'ms',
    better: 'lower',
    ours: c.confinedMs,
    limit: c.plainMs,
    ratio: `confined/unconfined ${c.ratio.toFixed(2)}×${c.bwrapMs == null ? '' : `; bwrap ${c.bwrapMs.toFixed(2)} ms`}`,
    goal: '(report: the tree-dependent part of 7a)',
  })
}

if (raw.waits) {
  const w = raw.waits
  const l = w.latencyMs
  for (const [id, k] of [
    ['8a', 'p50'],
    ['8b', 'p99'],
  ]) {
    rows.push({
      id,
      short: `${id} wait latency ${k}`,
      chart: false,
      case: `Waits: from a line being printed to awaitBackgroundCommandOutput resolving (ours) vs a JS 'data' listener on the same child's pipe (reference), ${k} of ${l.ours.n} lines each, ms`,
      unit: 'ms',
      better: 'lower',
      reference: l.jsDataListener[k],
      ours: l.ours[k],
      ratio: `ours/reference ${x(l.ours[k] / l.jsDataListener[k])}`,
      goal: '(report)',
    })
  }
  for (const [id, k, what] of [
    ['8c', 'none', 'a substring found nowhere'],
    ['8d', 'sparse', `a substring found on ${w.search.sparse?.matches} lines`],
    ['8e', 'regex', `a regular expression found on ${w.search.regex?.matches} lines`],
  ]) {
    const c = w.search[k]
    if (!c) continue
    rows.push({
      id,
      short: `${id} search ${k}`,
      case: `Search: searchBackgroundCommandOutput over a settled ${fmt(w.search.mib, 0)} MiB log, ${what} (ours), vs \`grep -n\` on the same file (limit column: grep's time less its own process start, timed on an empty file), median of ${w.search.reps}, ms`,
      unit: 'ms',
      better: 'lower',
      ours: c.oursMs,
      limit: c.grepMs,
      ratio: `ours/grep ${c.ratio.toFixed(2)}×`,
      goal: 'ours ≤ 2× grep -n',
      met: c.ratio <= 2,
    })
  }
}

if (raw.recovery) {
  const r = raw.recovery
  const on = median(r.withUs)
  const off = median(r.withoutUs)
  rows.push({
    id: '9a',
    short: '9a start → settle, manifests',
    chart: false,
    case: `Recovery: one command (\`true\`) started and awaited, one after another, with the task manifest written (ours) and without it (limit column), median of ${r.withUs.length} alternating rounds of ${SIZES.manifestCommands}, µs per command`,
    unit: 'µs',
    better: 'lower',
    ours: on,
    limit: off,
    ratio: `with/without ${(on / off).toFixed(3)}×`,
    goal: 'with ≤ 1.05× without (within the noise)',
    met: on <= off * 1.05,
  })
  if (r.watchUs?.length) {
    const w = median(r.watchUs)
    const nw = median(r.noWatchUs)
    rows.push({
      id: '9c',
      short: '9c start → settle, input watch',
      chart: false,
      case: `Input waits: one command (\`true\`) with \`stdin: "pipe"\` started and awaited, one after another, with the input watch (ours) and without it (limit column), median of ${r.watchUs.length} alternating rounds of ${SIZES.manifestCommands}, µs per command`,
      unit: 'µs',
      better: 'lower',
      ours: w,
      limit: nw,
      ratio: `with/without ${(w / nw).toFixed(3)}×`,
      goal: 'with ≤ 1.05× without (within the noise)',
      met: w <= nw * 1.05,
    })
  }
  rows.push({
    id: '9b',
    short: '9b recover 10,000',
    chart: false,
    case: `Recovery: recoverBackgroundCommands in a fresh process over ${fmt(r.recovered, 0)} settled commands of an ended one (every directory checked, every manifest and log read), ms`,
    unit: 'ms',
    better: 'lower',
    ours: r.recoverMs,
    ratio: `${fmt((r.recoverMs * 1000) / r.recovered, 0)} µs per command`,
    goal: 'well under 1000 ms',
    met: r.recoverMs < 500,
  })
}

if (raw.paths) {
  // limit column: the standard path (std::process::Command, napi-rs's serde objects); ours: the fast one.
  for (const [i, heap] of SIZES.spawnHeaps.entries()) {
    const p = raw.paths[heap]
    if (!p) continue
    const m = (k, f) => median(p[k].map((r) => r[f]))
    const fast = m('fast', 'startSettleUs')
    const std = m('standard', 'startSettleUs')
    rows.push({
      id: `10${'ab'[i]}`,
      short: `10${'ab'[i]} start → settle, fast vs standard, ${heap} MiB`,
      chart: false,
      case: `Fast paths: start → settle of \`true\`, one after another (${SIZES.pathsCommands}, median of ${SIZES.pathsRounds} alternating rounds), host heap ${heap} MiB: the engine's clone-based spawn and object makers (ours) vs NEUROLINK_COMMANDS_STANDARD_PATHS=1 — std::process::Command and napi-rs's serde objects (limit column), µs per command`,
      unit: 'µs',
      better: 'lower',
      ours: fast,
      limit: std,
      ratio: `standard/fast ${(std / fast).toFixed(2)}× (${fmt(std - fast, 0)} µs)`,
      goal: '(report)',
    })
  }
  const p = raw.paths[SIZES.spawnHeaps[0]]
  const m = (k, f) => median(p[k].map((r) => r[f]))
  rows.push({
    id: '10c',
    short: '10c status object, fast vs standard',
    chart: false,
    case: `Fast paths: getBackgroundCommandStatus of a settled command (${SIZES.pathsStatuses.toLocaleString('en-US')} calls, median of ${SIZES.pathsRounds} rounds), the adapter's maker (ours) vs napi-rs's serde conversion (limit column), µs per call`,
    unit: 'µs',
    better: 'lower',
    ours: m('fast', 'statusUs'),
    limit: m('standard', 'statusUs'),
    ratio: `standard/fast ${(m('standard', 'statusUs') / m('fast', 'statusUs')).toFixed(2)}×`,
    goal: '(report)',
  })
}
// ---- print --------------------------------------------------------------------
const cell = (r, k) => (r[k] === undefined ? '—' : fmt(r[k], r.unit === 'threads' ? 0 : Math.abs(r[k]) >= 100 ? 0 : 2))
const metText = (r) => (r.met === undefined ? '' : r.met ? 'met' : 'NOT met')
const header = ['#', 'case', 'reference', 'execa', 'ours', 'limit', 'ratio', 'goal', 'met?']
const tableRows = rows.map((r) => [r.id, r.case, cell(r, 'reference'), cell(r, 'execa'), cell(r, 'ours'), cell(r, 'limit'), r.ratio, r.goal, metText(r)])

const widths = header.map((h, i) => Math.min(i === 1 ? 70 : 40, Math.max(h.length, ...tableRows.map((t) => String(t[i]).length))))
const pad = (s, w) => (String(s).length > w ? `${String(s).slice(0, w - 1)}…` : String(s).padEnd(w))
console.log(header.map((h, i) => pad(h, widths[i])).join(' | '))
console.log(widths.map((w) => '-'.repeat(w)).join('-|-'))
for (const t of tableRows) console.log(t.map((c, i) => pad(c, widths[i])).join(' | '))
console.log(`\nTotal: ${totalS.toFixed(0)} s on ${os.cpus().length} cores; logs under ${previous?.machine.logsOn ?? fsType(scratch)}`)

if (only) {
  console.log('(--only: results not written)')
  process.exit(0)
}

// ---- notes: one honest line per goal --------------------------------------------
const byId = Object.fromEntries(rows.map((r) => [r.id, r]))
const notes = []
if (byId['1']) {
  const p = raw.paging
  notes.push(
    `**1. Paging** — ${byId['1'].met ? 'met' : 'NOT met'}: every page costs ${fmt(p.oursPerPageMs, 2)} ms, so all ${p.pages} pages take ${fmt(p.oursMs, 0)} ms against ${fmt(p.limitMs, 0)} ms for one \`readFileSync(path, "utf8")\` of the file (${fmt(p.rawReadMs, 0)} ms of which is the raw read, the rest the UTF-8 decode; the two are timed in alternating passes, medians). A page read forward resumes decoding exactly where the page before it ended (otherwise at the checkpoint kept every 64 KiB of log), checks and converts the UTF-8 to UTF-16 in one pass straight into the page, opens the log with one \`openat2\` and one \`statx\` (identity and length checked as before), and runs on libuv's thread pool: one hop there and one back. A page whose text fits in Latin-1 becomes a one-byte string. The reference reads and decodes the whole file for every page: ${fmt(p.refPerPageMs, 0)} ms a page.`,
  )
}
if (byId['2']) {
  const r = byId['2']
  notes.push(
    `**2. Event-loop lag** — ${r.met ? 'met' : `NOT met (${fmt(r.ours, 2)} ms)`}: our JS thread does nothing per chunk (the bytes go pipe → file on the engine's two threads), so what is left is the machine: ${SIZES.lagCommands} producers on ${os.cpus().length} cores keep the CPUs busy and delay the timer itself — the limit column is the same probe with no runner at all (producers writing straight to files), p99 ${fmt(r.limit, 2)} ms. The reference handles every 64 KiB chunk on the JS thread and then decodes each 256 MiB log into a string on it (max ${fmt(byId['2b'].reference, 0)} ms).`,
  )
}
if (byId['3']) {
  const r = byId['3']
  notes.push(
    `**3. Throughput** — ${r.met ? 'met' : 'NOT met'}: ${fmt(r.ours, 0)} MiB/s against ${fmt(r.limit, 0)} MiB/s for the producer writing straight to the file. The pipe lets the producer and our writer run on both cores at once, and we write 64 KiB at a time where \`head\` writes to the file in small blocks, which is why ours can beat the "limit". Host CPU per GiB: ours ${fmt(byId['3b'].ours, 0)} ms, the reference ${fmt(byId['3b'].reference, 0)} ms (it also reads the 1 GiB log back to bank it, which fails: a 1 GiB string exceeds V8's maximum string length).`,
  )
}
if (byId['4b']) {
  const s4 = raw.spawn
  const a = byId['4b']
  const c = byId['4c']
  const lim4 = (heap) => s4[heap].results.burst.limit.ms
  notes.push(
    `**4. Spawn cost vs heap** — 4b ${a.met ? 'met' : `NOT met (${a.ratio})`}, 4c ${c.met ? 'met' : `NOT met (${c.ratio})`}. We start processes with posix_spawn (vfork) on an engine thread, so the host's heap does not enter into it; our JS thread spends ${fmt(byId['4f'].ours, 2)} ms per start (the checks, then creating the log directory and its two files, which is most of it), the reference ${fmt(byId['4f'].reference, 2)} ms (a fork of the whole host on the JS thread). On this machine that fork grows only by ${fmt(byId['4c'].reference, 0)}% with 2 GiB of heap, far less than the issue assumed, and the floor under every column is process creation itself: the limit column (a shell starting the same ${SIZES.spawnCommands} \`true\`) takes ${fmt(lim4(SIZES.spawnHeaps[1]), 0)} ms, so the best ratio any runner could reach against this reference is ${x(byId['4b'].reference / lim4(SIZES.spawnHeaps[1]))}; ours is ${x(byId['4b'].ours / lim4(SIZES.spawnHeaps[1]))} the limit. ${c.met ? '' : `The limit itself moved by ${fmt(byId['4c'].limit, 0)}% between the same two processes: the change in our figure is the machine's load drifting (other work on the 2 cores), not the heap. `}`,
  )
}
if (byId['5a']) {
  const f = raw.fanout
  notes.push(
    `**5. Fan-out** — time ${byId['5a'].met ? 'met' : 'NOT met'} (${byId['5a'].ratio}), threads ${byId['5b'].met ? 'met' : 'NOT met'} (${byId['5b'].ratio}: the engine's two tokio workers; no thread per command). Our JS thread is done starting all ${f.ours.commands} after ${fmt(f.ours.startLoopMs, 0)} ms (the reference's after ${fmt(f.reference.startLoopMs, 0)} ms: it forks each one on the JS thread); the rest of our time is the engine's per-command work on its two threads — spawning, watching three descriptors, reaping, the settle event — sharing the 2 cores with the ${f.ours.commands} processes, against ${fmt(f.limit.ms, 0)} ms for a shell that only forks them.`,
  )
}
if (byId['6']) {
  const r = byId['6']
  notes.push(
    `**6. Memory per settled command** — ${r.met ? 'met' : `NOT met: ${fmt(r.ours, 0)} bytes`}. ${r.met ? '' : "A settled record keeps the command's identity, argv, cwd, label, session, log paths, the two UTF-16 paging indexes, its outcome and the settled flag (≈1.1 KB of live allocations per command measured with heaptrack, about 60% of it the record struct itself); the rest is allocator overhead and fragmentation of the main arena, where records are allocated between short-lived buffers. Reaching 1 KiB needs a compact settled form of the record (interned session/cwd, paths derived from the task id, a frozen index), a redesign of the record rather than a trim. "}The reference keeps ${fmt(byId['6'].reference, 0)} bytes per \`true\` command and ${fmt(byId['6b'].reference, 0)} per command that printed (its two 8000-byte tails); ours keeps no output in memory (${fmt(byId['6b'].ours, 0)} bytes).`,
  )
}

if (byId['6c']) {
  const r = byId['6c']
  const runs = (k) => raw.rss[k].map((x) => fmt(x.rssPerCommand, 0)).join(', ')
  const part = (k, f) => median(raw.rss[k].map((x) => x[f]))
  notes.push(
    `**6c. Whole-process RSS per settled command** — ${r.met ? 'met' : `NOT met: ${fmt(r.ours, 0)} bytes (runs: ${runs('ours')})`}. The same loop with no command in it grows by ${fmt(r.limit, 0)} bytes a step (runs: ${runs('floor')}): Node's optimizing compiler first runs inside the measured loop (nothing is hot enough after ${SIZES.rssWarm} warm-up steps), which pages in ${fmt((part('floor', 'filePerCommand') * SIZES.rssCommands) / 2 ** 20, 1)} MiB of node's own code (${fmt(part('floor', 'filePerCommand'), 0)} bytes a step over ${SIZES.rssCommands.toLocaleString('en-US')}) and keeps its working memory; so the 1 KiB goal is below what this protocol measures for any runner. What ours adds to that floor (${fmt(r.ours - r.limit, 0)} bytes) is the settled record in the engine's main allocator arena (about 560 bytes a command in \`/proc/self/smaps\`: the record itself, one 448-byte allocation with identity, times, outcome, the two stream logs and the settled flag; argv; the registry's two entries) and V8's young generation sizing itself to the allocation rate of the statuses and promises a start and an await create (row 6 pins the nursery at 1 MiB and measures private memory only). The adapter keeps nothing per settled command in the JS heap.`,
  )
}
if (byId['4i']) {
  const r = byId['4i']
  const per = (v) => v / SIZES.spawnCommands
  notes.push(
    `**4i. One after another vs a shell loop** — ${r.met ? 'met' : `NOT met (${r.ratio})`}: ${fmt(per(r.ours), 2)} ms per command against ${fmt(per(r.limit), 2)} ms for the shell's fork + exec + wait. The difference (${fmt(per(r.ours - r.limit), 2)} ms) is made of work the shell does not do: the checks on the JS thread (the start call: row 4g), the log directory and its two log files the contract asks for (made ahead on an engine thread while the command before runs, its writer named in an extended attribute), the hop to an engine thread, the spawn there (the engine's vfork-style clone, which returns once the child has exec'd), the two pipes, the pidfd and their registration with the event loop, the watchdog's slot written at the group's start and blanked at its end, the engine thread's wake when the command exits and the JS thread's wake for the settled event. No drain grace is waited for: the command settles as soon as its pipes close. Its floor on this machine is measured without Node by \`cargo run --release -p neurolink-commands-engine --example sequential\` (the hand-off to another thread, then the same with the log directory made first) and is in docs/benchmarks.md.`,
  )
}
if (byId['7a']) {
  const a = byId['7a']
  const b = byId['7b']
  notes.push(
    `**7. Confinement at start** — ${a.met && b?.met ? 'met' : 'NOT met'} (${a.ratio} at ${SIZES.spawnHeaps[0]} MiB${b ? `, ${b.ratio} at ${SIZES.spawnHeaps[1]} MiB` : ''}). A confined start is handed by the JS thread straight to a thread already waiting (a spare the filtered spawner keeps, carrying the seccomp filter attached once), which restricts itself with a Landlock ruleset kept for the policy and posix_spawns the command with the engine's own posix_spawn, then ends; the kept ruleset is reused while every private TMPDIR it granted is removed (one after another, as here), and only the command's own TMPDIR is added to it; that TMPDIR is made ahead of time by the spawner once the previous confined command is spawned, and removed with one rmdir before the command settles. No fork of the host, so the heap does not enter into it. What is left over an unconfined start is the hand-off to the confining thread, the domain the kernel builds from the ruleset, the rmdir, and the spawner's work for the next start (a thread, a mkdir) competing with the command for the 2 cores (the ratio of the means in the same run: ${raw.confine[SIZES.spawnHeaps[0]].meanRatio?.toFixed(2) ?? '—'}× and ${raw.confine[SIZES.spawnHeaps[1]]?.meanRatio?.toFixed(2) ?? '—'}×).`,
  )
}

if (byId['8c']) {
  const w = raw.waits
  const s8 = ['8c', '8d', '8e'].map((id) => byId[id]).filter(Boolean)
  notes.push(
    `**8. Waits and search** — wait latency p50 ${fmt(byId['8a'].ours, 2)} ms, p99 ${fmt(byId['8b'].ours, 2)} ms (a JS 'data' listener on the child's own pipe: ${fmt(byId['8a'].reference, 2)} / ${fmt(byId['8b'].reference, 2)} ms); our line passes through the engine's capture thread, the log file and a promise settled on the JS thread. Search ${s8.every((r) => r.met) ? 'met' : 'NOT met'} (${s8.map((r) => `${r.id} ${r.ratio}`).join(', ')}): the scan finds the pattern in 1 MiB reads (memchr's substring search, or the regex crate's own literal prefilter) and counts line ends as it goes, but counts UTF-16 units only from the stream's nearest index checkpoint to a line that may hold a match, and to where it stops — never over the whole log. grep's output is piped to the bench (with \`/dev/null\` GNU grep stops at the first match), grep is not charged for its process start (${fmt(w.search.none.grepStartMs, 1)} ms, timed on an empty file; its total was ${fmt(w.search.none.grepTotalMs, 1)} ms for 8c), and every repetition checks both found the same line numbers.`,
  )
}

// ---- files ------------------------------------------------------------------------
const machine = previous?.machine ?? {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model,
  memGiB: Math.round(os.totalmem() / 2 ** 30),
  kernel: os.release(),
  node: process.version,
  logsOn: fsType(scratch),
  loadAvgStart: load0.map((v) => +v.toFixed(2)),
  loadAvgEnd: load1.map((v) => +v.toFixed(2)),
}
fs.mkdirSync(RESULTS, { recursive: true })
const json = { date: startedAt.toISOString(), totalSeconds: +totalS.toFixed(1), machine, sizes: SIZES, rows, raw }
fs.writeFileSync(path.join(RESULTS, 'latest.json'), `${JSON.stringify(json, roundNumbers, 1)}\n`)
fs.writeFileSync(path.join(RESULTS, 'latest.svg'), svgChart(rows))

const md = []
md.push(`<!-- written by \`pnpm run bench\` (bench/run.mjs); do not edit by hand -->`)
md.push(
  `Measured ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machine.cpus} cores (${machine.cpuModel}), ${machine.memGiB} GiB, Linux ${machine.kernel}, Node ${machine.node}; logs on ${machine.logsOn}; load average ${machine.loadAvgStart[0]} at the start, ${machine.loadAvgEnd[0]} at the end. The whole run took ${totalS.toFixed(0)} s. Sizes are the issue's; every row is one run of every column, side by side.`,
)
md.push('')
md.push(`| ${header.join(' | ')} |`)
md.push(`|${header.map((_h, i) => (i >= 2 && i <= 5 ? '---:' : '---')).join('|')}|`)
for (const t of tableRows) md.push(`| ${t.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`)
md.push('')
md.push(
  'reference = bench/reference-runner.mjs (the JS algorithm NeuroLink uses today); execa = execa 9 with each stream piped to its log file; limit = the same producer with no runner in between (a shell writing straight to the files), or one plain `readFileSync` for paging.',
)
md.push('')
for (const n of notes) md.push(`- ${n}`)
md.push('')
md.push('![benchmark chart](latest.svg)')
fs.writeFileSync(path.join(RESULTS, 'latest.md'), `${md.join('\n')}\n`)
console.log(`\nWrote ${path.relative(process.cwd(), RESULTS)}/latest.{json,svg,md}`)

function roundNumbers(_key, value) {
  return typeof value === 'number' && !Number.isInteger(value) ? +value.toPrecision(5) : value
}

// ---- the chart: every row as "× better than the reference", log scale ----------
function svgChart(rows) {
  const series = [
    ['execa', '#9aa5b1'],
    ['ours', '#2f7d32'],
    ['limit', '#c4a000'],
  ]
  const plotted = rows.filter((r) => r.chart !== false && r.reference !== undefined && r.reference > 0)
  const factor = (r, k) => {
    const v = r[k]
    if (v === undefined || !(v > 0)) return undefined
    return r.better === 'higher' ? v / r.reference : r.reference / v
  }
  const values = plotted.flatMap((r) => series.map(([k]) => factor(r, k)).filter((v) => v !== undefined))
  const lo = Math.min(0.5, ...values)
  const hi = Math.max(2, ...values)
  const l0 = Math.floor(Math.log10(lo))
  const l1 = Math.ceil(Math.log10(hi))
  const left = 250
  const width = 860
  const plotW = width - left - 30
  const barH = 9
  const groupH = series.length * barH + 12
  const top = 58
  const height = top + plotted.length * groupH + 40
  const xOf = (v) => left + ((Math.log10(v) - l0) / (l1 - l0)) * plotW
  const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  const out = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`)
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`)
  out.push(`<text x="${left}" y="18" font-size="13" font-weight="bold">× better than the JS reference runner (log scale; 1 = the reference)</text>`)
  out.push(`<text x="${left + 3 * 90}" y="37" fill="#555">times and bytes: reference ÷ x; throughput: x ÷ reference</text>`)
  series.forEach(([k, c], i) => {
    out.push(`<rect x="${left + i * 90}" y="28" width="10" height="10" fill="${c}"/><text x="${left + i * 90 + 14}" y="37">${k}</text>`)
  })
  for (let e = l0; e <= l1; e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e
      if (v < 10 ** l0 || v > 10 ** l1) continue
      const xx = xOf(v).toFixed(1)
      out.push(`<line x1="${xx}" y1="${top - 6}" x2="${xx}" y2="${height - 30}" stroke="${m === 1 ? '#bbb' : '#eee'}"/>`)
      if (m === 1) out.push(`<text x="${xx}" y="${height - 16}" text-anchor="middle" fill="#555">${v >= 1 ? v : v.toFixed(-e)}×</text>`)
    }
  }
  const one = xOf(1).toFixed(1)
  out.push(`<line x1="${one}" y1="${top - 6}" x2="${one}" y2="${height - 30}" stroke="#c62828" stroke-width="1.5"/>`)
  plotted.forEach((r, gi) => {
    const y0 = top + gi * groupH
    out.push(`<text x="${left - 8}" y="${y0 + groupH / 2}" text-anchor="end">${esc(r.short ?? r.id)}</text>`)
    series.forEach(([k, c], si) => {
      const v = factor(r, k)
      if (v === undefined) return
      const y = y0 + si * barH
      const x1 = xOf(Math.min(v, 1))
      const x2 = xOf(Math.max(v, 1))
      out.push(`<rect x="${x1.toFixed(1)}" y="${y}" width="${Math.max(1, x2 - x1).toFixed(1)}" height="${barH - 2}" fill="${c}"/>`)
      out.push(`<text x="${(x2 + 3).toFixed(1)}" y="${y + barH - 2}" font-size="9" fill="#333">${v >= 10 ? v.toFixed(0) : v.toFixed(2)}</text>`)
    })
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
