// Helpers shared by the benchmark cases: loading our addon, the reference and
// execa runners behind one small interface, producers, timing and statistics.

import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { ReferenceRunner } from './reference-runner.mjs'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)

// Every case writes its logs under a scratch TMPDIR of its own run: run.mjs
// makes one for all its cases (NLC_BENCH_SCRATCH); a case run on its own
// makes its own here, removed when it exits. cleanLogs() then only ever
// removes this run's logs, never those of other processes that share the
// machine's temp directory (a test suite running meanwhile).
if (!process.env.NLC_BENCH_SCRATCH) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'nlc-bench-')))
  process.env.TMPDIR = dir
  process.env.NLC_BENCH_SCRATCH = dir
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
}

export const MiB = 1024 * 1024
export const GiB = 1024 * MiB

/** Executables the cases run (absolute paths: the policy matches argv[0] exactly). */
export const SH = '/bin/sh'
export const TRUE = fs.existsSync('/usr/bin/true') ? '/usr/bin/true' : '/bin/true'

/** Print the case's result for run.mjs to pick up. */
export function report(result) {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`)
}

/** Command-line flags: `--name value` pairs. */
export function flags() {
  const out = {}
  const a = process.argv.slice(2)
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith('--')) {
      const name = a[i].slice(2)
      out[name] = a[i + 1] !== undefined && !a[i + 1].startsWith('--') ? a[++i] : 'true'
    }
  }
  return out
}

/** The scratch directory every runner writes its logs under (run.mjs sets TMPDIR to it). */
export function scratch() {
  return fs.realpathSync(os.tmpdir())
}

/** Flush dirty pages so one measurement does not pay for the previous one's writeback. */
export function settleDisk() {
  try {
    execFileSync('sync')
  } catch {
    // best effort
  }
}

export function percentile(values, p) {
  if (values.length === 0) return NaN
  const sorted = Float64Array.from(values).sort()
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]
}

export function median(values) {
  return percentile(values, 50)
}

/** Threads of this process, from /proc/self/status. */
export function threadCount() {
  const m = /^Threads:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))
  return m ? Number(m[1]) : NaN
}

/** Run `argv` with no runner in between (the producer writing straight to its file). */
export function runDirect(argv) {
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0], argv.slice(1), { stdio: 'ignore' })
    c.on('error', reject)
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${argv.join(' ')} exited ${code}`))))
  })
}

export function shellQuote(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`
}

/** Our addon's public API. */
export function loadOurs() {
  // NLC_BENCH_BUILD names another build's directory (its index.js beside its
  // binary), for runs that compare two builds of ours case by case.
  return require(path.join(process.env.NLC_BENCH_BUILD || ROOT, 'index.js'))
}

const ALLOWED = [SH, TRUE, '/bin/echo']

/**
 * One interface over the three runners: `start(argv, opts) → id`,
 * `wait(id) → status-like { state, stdoutBytes }`.
 */
export function makeRunner(kind, { maxOutputBytes = 10 * MiB, timeoutMs = 600_000 } = {}) {
  const cwdRoot = scratch()
  if (kind === 'ours') {
    const nc = loadOurs()
    const host = {}
    nc.setBackgroundCommandPolicy(host, {
      allowedExecutables: ALLOWED,
      cwdRoot,
      maxOutputBytes,
      defaultTimeoutMs: timeoutMs,
    })
    return {
      kind,
      nc,
      host,
      start: async (argv, o = {}) => (await nc.startBackgroundCommand(host, argv, { cwd: '.', ...o })).taskId,
      wait: (id) => nc.awaitBackgroundCommand(host, id),
      status: (id) => nc.getBackgroundCommandStatus(host, id),
      page: (id, req) => nc.readBackgroundCommandOutput(host, id, req),
      ids: () => nc.listBackgroundCommands(host).map((e) => e.taskId),
      logPath: (id, stream = 'stdout') => path.join(cwdRoot, 'neurolink-commands', id, `${stream}.log`),
    }
  }
  if (kind === 'reference') {
    const r = new ReferenceRunner({ cwdRoot, maxOutputBytes, defaultTimeoutMs: timeoutMs })
    return {
      kind,
      runner: r,
      start: async (argv, o = {}) => (await r.start(argv, { cwd: '.', ...o })).taskId,
      wait: (id) => r.await(id),
      status: (id) => r.status(id),
      page: (id, req) => r.readOutput(id, req),
      ids: () => [...r.tasks.keys()],
      logPath: (id, stream = 'stdout') => r.tasks.get(id).paths[stream],
    }
  }
  if (kind === 'execa') {
    return makeExeca({ cwdRoot, timeoutMs })
  }
  throw new Error(`unknown runner ${kind}`)
}

let execaMod
async function loadExeca() {
  execaMod ??= await import('execa')
  return execaMod
}

/**
 * What a Node user would write with execa: each stream to its own log file
 * (`stdout: { file }`, which execa pipes through a write stream), no shell,
 * stdin ignored, execa's own timeout and SIGKILL escalation.
 */
function makeExeca({ cwdRoot, timeoutMs }) {
  const procs = new Map()
  let n = 0
  const startNow = (argv, o) => {
    const id = `e${++n}`
    const dir = path.join(cwdRoot, 'execa-commands', id)
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const p = execaMod.execa(argv[0], argv.slice(1), {
      cwd: cwdRoot,
      stdin: 'ignore',
      stdout: { file: path.join(dir, 'stdout.log') },
      stderr: { file: path.join(dir, 'stderr.log') },
      reject: false,
      buffer: false,
      timeout: o.timeoutMs ?? timeoutMs,
      forceKillAfterDelay: 5000,
    })
    procs.set(id, { p, dir })
    return id
  }
  return {
    kind: 'execa',
    // Synchronous up to the spawn (once execa is loaded), like the other
    // runners, so the time a start blocks the JS thread is measured alike.
    start: (argv, o = {}) => (execaMod ? Promise.resolve(startNow(argv, o)) : loadExeca().then(() => startNow(argv, o))),
    wait: async (id) => {
      const { p, dir } = procs.get(id)
      const r = await p
      procs.delete(id)
      return {
        state: r.timedOut ? 'timeout' : r.isTerminated ? 'killed' : 'exited',
        exitCode: r.exitCode,
        stdoutBytes: fs.statSync(path.join(dir, 'stdout.log')).size,
      }
    },
    logPath: (id) => path.join(cwdRoot, 'execa-commands', id, 'stdout.log'),
  }
}

/** Remove a runner's log directories (keeps the scratch disk small between measurements). */
export function cleanLogs() {
  const root = scratch()
  for (const d of ['neurolink-commands', 'reference-commands', 'execa-commands', 'direct']) {
    fs.rmSync(path.join(root, d), { recursive: true, force: true })
  }
}

/** A monotonic clock in ms. */
export const now = () => performance.now()
