// Case 6c — whole-process memory per settled `true`: growth of VmRSS (all of
// the process's resident memory: the heap, V8, the allocator's arenas, the
// pages of code the run touched) over N commands started and awaited one
// after another, in a fresh `node --expose-gc` process with V8 left at its
// defaults, after a warm-up and two gc() calls before and after.
//
// --runner floor runs the same loop with no command at all (each step one
// `fs.promises.stat` of the working directory): what Node and V8 themselves
// add over the same protocol — mostly the optimizing compiler, which first
// runs inside the measured loop, paging in its code and keeping its memory.

import fs from 'node:fs'

import { flags, makeRunner, report, TRUE } from './common.mjs'

const f = flags()
const kind = f.runner
const N = Number(f.n ?? 5000)
const WARM = Number(f.warm ?? 200)

if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc')

function status() {
  const s = fs.readFileSync('/proc/self/status', 'utf8')
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') }
}

const r = kind === 'floor' ? undefined : makeRunner(kind)
const step = r ? async () => r.wait(await r.start([TRUE])) : () => fs.promises.stat('.')

for (let i = 0; i < WARM; i++) await step()
globalThis.gc()
globalThis.gc()
const m0 = status()
for (let i = 0; i < N; i++) await step()
globalThis.gc()
globalThis.gc()
const m1 = status()

if (r) {
  // Every command of the run is still answerable (outside the measurement).
  let answerable = 0
  for (const id of r.ids()) if (r.status(id).state === 'exited') answerable++
  if (answerable !== WARM + N) throw new Error(`${kind}: ${answerable} of ${WARM + N} statuses answerable`)
}

report({
  case: 'rss',
  runner: kind,
  commands: N,
  rssPerCommand: (m1.rss - m0.rss) / N,
  anonPerCommand: (m1.anon - m0.anon) / N,
  filePerCommand: (m1.file - m0.file) / N,
  before: m0,
  after: m1,
})
