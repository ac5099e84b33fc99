// Case 7 — the cost of kernel confinement at start: with the host holding
// --heap MiB of touched JS heap, time start → settle of `true`, one after
// another, confined (the default Confinement at level "full": Landlock
// scopes, the seccomp socket filter, and the namespace sandbox the engine's
// own clone makes) and unconfined — and, where bubblewrap is installed,
// unconfined `bwrap` running `true` with the same isolation (user, mount and
// PID namespaces, a new session, the system read-only, the root writable, a
// fresh /proc and /dev).
//
// The two alternate start by start (which of the pair goes first alternates
// too), so the machine's load — other work on a shared box — falls on both
// alike; the figure is the median over every start of each kind, and the
// ratio is the ratio of those medians. Each round's ratio and the means are
// reported as well.

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

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
// The write tree: a fresh empty directory (the cost of the mechanism), or
// with --root a real tree (a checkout: the look for repositories to protect
// reads its directories at every confined start).
const fresh = f.root ? null : mkdtempSync(join(scratch(), 'nlc-confine-'))
const cwdRoot = f.root ?? fresh
const plain = {}
nc.setBackgroundCommandPolicy(plain, { allowedExecutables: [TRUE], cwdRoot })
const confined = {}
nc.setBackgroundCommandPolicy(confined, { allowedExecutables: [TRUE], cwdRoot, confine: {} })
const BWRAP = ['/usr/bin/bwrap', '/bin/bwrap'].find((p) => existsSync(p))
const bwrapHost = {}
const BWRAP_ARGV = BWRAP && [BWRAP, '--unshare-user', '--unshare-pid', '--new-session', '--ro-bind', '/', '/', '--bind', cwdRoot, cwdRoot, '--proc', '/proc', '--dev', '/dev', TRUE]
if (BWRAP) nc.setBackgroundCommandPolicy(bwrapHost, { allowedExecutables: [BWRAP], cwdRoot })

async function one(host, want, argv = [TRUE]) {
  const t = now()
  const { taskId } = await nc.startBackgroundCommand(host, argv, { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(host, taskId)
  const ms = now() - t
  if (st.exitCode !== 0 || st.confined !== want) throw new Error(JSON.stringify(st))
  return ms
}

async function round(n) {
  const out = { plain: [], confined: [], bwrap: [] }
  for (let i = 0; i < n; i++) {
    if (BWRAP) out.bwrap.push(await one(bwrapHost, false, BWRAP_ARGV))
    if (i % 2 === 0) {
      out.plain.push(await one(plain, false))
      out.confined.push(await one(confined, true))
    } else {
      out.confined.push(await one(confined, true))
      out.plain.push(await one(plain, false))
    }
  }
  return out
}

await round(Math.max(20, N / 10)) // warm-up
const all = { plain: [], confined: [], bwrap: [] }
const rounds = []
for (let r = 0; r < ROUNDS; r++) {
  const x = await round(N)
  all.plain.push(...x.plain)
  all.confined.push(...x.confined)
  all.bwrap.push(...x.bwrap)
  rounds.push({ plainMs: median(x.plain), confinedMs: median(x.confined), ratio: median(x.confined) / median(x.plain) })
}
if (keep.length < 0) console.log(keep)
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
const plainMs = median(all.plain)
const confinedMs = median(all.confined)
if (fresh) rmSync(fresh, { recursive: true, force: true })
report({
  case: 'confine',
  root: f.root ? 'tree' : 'empty',
  entries: f.root ? readdirSync(f.root).length : 0,
  heapMiB: HEAP_MIB,
  commands: N,
  rounds: ROUNDS,
  plainMs,
  confinedMs,
  ratio: confinedMs / plainMs,
  bwrapMs: BWRAP ? median(all.bwrap) : null,
  meanRatio: mean(all.confined) / mean(all.plain),
  perRound: rounds,
})
