// Case 1 — paging: read every 50,000-character page of a settled 32 MiB log
// (ASCII with multi-byte text mixed in), reference vs ours, against one
// sequential read of the file into a string (the machine's limit).

import fs from 'node:fs'

import { flags, makeRunner, median, MiB, now, report, SH, shellQuote } from './common.mjs'

const f = flags()
const SIZE = Number(f.mib ?? 32) * MiB
// The reference's page costs the same wherever it is (it reads the whole file
// each time): with --ref-every K only every K-th page is timed, and the total
// is that mean times the number of pages.
const REF_EVERY = Number(f['ref-every'] ?? 1)
const PAGE = 50_000
const LINE = 'build step 0042 ok: héllo wörld, naïve café — 日本語のテキスト, ελληνικά, emoji 😀🚀 and plain ASCII padding text'
const producer = [SH, '-c', `yes ${shellQuote(LINE)} | head -c ${SIZE}`]

async function produce(kind) {
  const r = makeRunner(kind, { maxOutputBytes: SIZE * 2 })
  const id = await r.start(producer)
  const st = await r.wait(id)
  if (st.stdoutBytes !== SIZE) throw new Error(`${kind} captured ${st.stdoutBytes} bytes, expected ${SIZE}`)
  return { r, id }
}

/**
 * Every page in order (or every `every`-th); `whole` (when given) checks each
 * page read outside the timed part. `ms` is the time of the pages read.
 */
async function allPages(r, id, whole, every = 1) {
  let ms = 0
  let read = 0
  let offset = 0
  let total = whole?.length ?? Infinity
  for (let i = 0; offset < total; i++, offset += PAGE) {
    if (i % every !== 0) continue
    const t0 = now()
    const p = await r.page(id, { stream: 'stdout', offset, limit: PAGE })
    ms += now() - t0
    total = p.totalSize
    if (whole !== undefined && (p.content !== whole.slice(offset, offset + PAGE) || total !== whole.length)) {
      throw new Error(`${r.kind}: page at ${offset} differs from the same slice of the whole log`)
    }
    read++
  }
  return { ms, read }
}

const ours = await produce('ours')
const ref = await produce('reference')

// The limit: one sequential read of the whole file into a string. Ours:
// every page in order. Checked once against slices of the whole text, then
// both timed in alternating passes (so a change in the machine's load falls
// on both alike); the median of each is reported.
const path = ours.r.logPath(ours.id)
const whole = fs.readFileSync(path, 'utf8')
await allPages(ours.r, ours.id, whole)
const reads = []
const rawReads = []
const passes = []
for (let i = 0; i < 5; i++) {
  let t0 = now()
  fs.readFileSync(path, 'utf8')
  reads.push(now() - t0)
  t0 = now()
  fs.readFileSync(path)
  rawReads.push(now() - t0)
  passes.push((await allPages(ours.r, ours.id)).ms)
}
const refPass = await allPages(ref.r, ref.id, whole, REF_EVERY)
const pages = Math.ceil(whole.length / PAGE)

report({
  case: 'paging',
  bytes: SIZE,
  units: whole.length,
  pages,
  refPagesTimed: refPass.read,
  limitMs: median(reads),
  rawReadMs: median(rawReads),
  oursMs: median(passes),
  oursPassesMs: passes,
  refMs: (refPass.ms / refPass.read) * pages,
  oursPerPageMs: median(passes) / pages,
  refPerPageMs: refPass.ms / refPass.read,
})
