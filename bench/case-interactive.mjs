// Interactive commands, measured side by side in one run:
//   a. input throughput — 256 MiB written to `cat` through
//      writeBackgroundCommandInput (cat's output captured in stdout.log as
//      usual), against the limit: a shell piping the same bytes into cat
//      writing the same kind of file (`head -c 256M /dev/zero | cat > file`);
//   b. per-start cost — N `true` started one after another (each settled
//      before the next starts), in a terminal against plain.
// Prints the rows and writes bench/results/interactive.{json,md}.
//
//   node bench/case-interactive.mjs [--mib 256] [--reps 3] [--n 200]

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

import { cleanLogs, flags, loadOurs, median, MiB, now, ROOT, runDirect, settleDisk, SH, TRUE } from './common.mjs'

const f = flags()
const MIB = Number(f.mib ?? 256)
const REPS = Number(f.reps ?? 3)
const N = Number(f.n ?? 200)

const scratchDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'nlc-bench-interactive-')))
process.env.TMPDIR = scratchDir
process.on('exit', () => fs.rmSync(scratchDir, { recursive: true, force: true }))

const nc = loadOurs()
const host = {}
nc.setBackgroundCommandPolicy(host, {
  allowedExecutables: ['/bin/cat', SH, TRUE],
  cwdRoot: scratchDir,
  maxOutputBytes: (MIB + 1) * MiB,
  defaultTimeoutMs: 600_000,
})
const data = Buffer.alloc(MIB * MiB, 0x61)

async function oursThroughput() {
  settleDisk()
  const t = now()
  const { taskId } = await nc.startBackgroundCommand(host, ['/bin/cat'], { cwd: '.', stdin: 'pipe' })
  const { bytesWritten } = await nc.writeBackgroundCommandInput(host, taskId, data, { end: true })
  const st = await nc.awaitBackgroundCommand(host, taskId)
  const ms = now() - t
  if (bytesWritten !== data.length || st.state !== 'exited' || st.stdoutBytes !== data.length) {
    throw new Error(`ours: ${bytesWritten} written, ${JSON.stringify(st)}`)
  }
  cleanLogs()
  return ms
}

async function limitThroughput() {
  settleDisk()
  const out = path.join(scratchDir, 'limit.out')
  const t = now()
  await runDirect([SH, '-c', `head -c ${MIB * MiB} /dev/zero | cat > ${out}`])
  const ms = now() - t
  if (fs.statSync(out).size !== MIB * MiB) throw new Error('limit: wrong size')
  fs.rmSync(out)
  return ms
}

async function starts(terminal) {
  const t = now()
  for (let i = 0; i < N; i++) {
    const { taskId } = await nc.startBackgroundCommand(host, [TRUE], { cwd: '.', terminal })
    const st = await nc.awaitBackgroundCommand(host, taskId)
    if (st.state !== 'exited' || st.exitCode !== 0) throw new Error(JSON.stringify(st))
  }
  const ms = (now() - t) / N
  cleanLogs()
  return ms
}

// Warm-up, then rounds that interleave the columns.
await oursThroughput()
await starts(true)
const runs = { ours: [], limit: [], plain: [], terminal: [] }
for (let i = 0; i < REPS; i++) {
  runs.ours.push(await oursThroughput())
  runs.limit.push(await limitThroughput())
  runs.plain.push(await starts(false))
  runs.terminal.push(await starts(true))
}
const mibps = (ms) => MIB / (ms / 1000)
const oursMiBs = mibps(median(runs.ours))
const limitMiBs = mibps(median(runs.limit))
const plainMs = median(runs.plain)
const terminalMs = median(runs.terminal)
const result = {
  measuredAt: new Date().toISOString(),
  cores: os.cpus().length,
  node: process.version,
  sizes: { mib: MIB, reps: REPS, n: N },
  runs,
  oursMiBs,
  limitMiBs,
  plainMs,
  terminalMs,
}
const fmt = (v, d = 0) => v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
const md = [
  '<!-- written by `pnpm run bench:interactive` (bench/case-interactive.mjs); do not edit by hand -->',
  `Measured ${result.measuredAt.slice(0, 16).replace('T', ' ')} UTC on ${result.cores} cores, Node ${result.node}; median of ${REPS}.`,
  '',
  '| # | case | ours | limit | ratio |',
  '|---|---|---:|---:|---|',
  `| 7a | Input: ${MIB} MiB written to \`cat\` with writeBackgroundCommandInput (cat's output captured to stdout.log), MiB/s | ${fmt(oursMiBs)} | ${fmt(limitMiBs)} | ours/limit ${fmt(oursMiBs / limitMiBs, 2)}× |`,
  `| 7b | Start cost: \`true\` started and settled one after another (${N}), plain, ms per command | ${fmt(plainMs, 2)} | — | (baseline for 7c) |`,
  `| 7c | … the same in a terminal (pty + own posix_spawn with SETSID), ms per command | ${fmt(terminalMs, 2)} | — | terminal/plain ${fmt(terminalMs / plainMs, 2)}× |`,
  '',
  `limit = \`head -c ${MIB}M /dev/zero | cat > file\`: a shell piping the same bytes into cat writing a file, with no runner in between.`,
  '',
].join('\n')
process.stdout.write(md)
if (!f.quiet) {
  fs.writeFileSync(path.join(ROOT, 'bench', 'results', 'interactive.json'), `${JSON.stringify(result, null, 2)}\n`)
  fs.writeFileSync(path.join(ROOT, 'bench', 'results', 'interactive.md'), md)
}
