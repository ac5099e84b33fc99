// The sandbox check cannot be raced (SPEC §6). A separate process
// keeps swapping a directory under the root with a symlink out of it (to
// /etc, and — one component higher up — to a directory beside the root)
// while many commands start there. Every start is either refused or runs
// inside the root: the child enters the directory that was checked, by
// descriptor, so the path being swapped between check and spawn cannot move
// it. Each command prints `pwd -P` and the kernel's view of its cwd.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { hostWith, nc, tempRoot, waitFor } from './helpers.ts'

/**
 * The swapper, run by a separate node process: move a real directory and a
 * symlink in and out of `<root>/d` and `<root>/e`, each state held for a
 * random 0–100 µs (busy-waiting, so lookups are not starved by back-to-back
 * renames and see every state). Bounded by a count and a time; it prints `go`
 * when it starts and `done <n>` at the end.
 */
const SWAPPER = `
const { renameSync } = require('node:fs')
const [root, maxCount, maxMs] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])]
const p = (n) => root + '/' + n
const dwell = () => { const until = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * 100000)); while (process.hrtime.bigint() < until); }
const end = Date.now() + maxMs
let n = 0
process.stdout.write('go\\n')
while (n < maxCount && Date.now() < end) {
  renameSync(p('real-d'), p('d')); dwell(); renameSync(p('d'), p('real-d'))
  renameSync(p('link-d'), p('d')); dwell(); renameSync(p('d'), p('link-d'))
  renameSync(p('real-e'), p('e')); dwell(); renameSync(p('e'), p('real-e'))
  renameSync(p('link-e'), p('e')); dwell(); renameSync(p('e'), p('link-e'))
  n++
}
process.stdout.write('done ' + n + '\\n')
`

function inside(root: string, p: string): boolean {
  return p === root || p.startsWith(root + '/')
}

test('a directory swapped for a symlink to /etc while commands start there never lets one run outside the root', async (t) => {
  const root = tempRoot('nlc-race-')
  const outside = tempRoot('nlc-race-outside-')
  mkdirSync(join(root, 'real-d'))
  mkdirSync(join(root, 'real-e', 'sub'), { recursive: true })
  mkdirSync(join(outside, 'sub'))
  symlinkSync('/etc', join(root, 'link-d'))
  symlinkSync(outside, join(root, 'link-e'))
  const host = hostWith(root, ['/bin/sh'], { defaultTimeoutMs: 20_000, killGraceMs: 500 })

  const swapper = spawn(process.execPath, ['-e', SWAPPER, root, '50000000', '40000'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let swapOut = ''
  let swapErr = ''
  swapper.stdout.setEncoding('utf8').on('data', (s: string) => (swapOut += s))
  swapper.stderr.setEncoding('utf8').on('data', (s: string) => (swapErr += s))
  t.after(async () => {
    if (swapper.exitCode === null && swapper.signalCode === null) swapper.kill('SIGKILL')
    await nc.killAllBackgroundCommands(host)
  })
  await waitFor(() => swapOut.includes('go'), 10_000, 'the swapper to start')

  const SCRIPT = 'pwd -P; readlink /proc/$$/cwd'
  // Bounded by count and time: until 400 commands ran, 20000 starts or 20 s.
  const PER_BATCH = 40
  const t0 = Date.now()
  let starts = 0
  let ran = 0
  let refusedOutside = 0
  let refusedMissing = 0
  const seen = new Set<string>()
  for (let b = 0; ran < 400 && starts < 20_000 && Date.now() - t0 < 20_000; b++) {
    starts += PER_BATCH
    const batch = Array.from({ length: PER_BATCH }, (_, i) =>
      nc.startBackgroundCommand(host, ['/bin/sh', '-c', SCRIPT], { cwd: i % 2 === 0 ? 'd' : 'e/sub' }).then(
        (h) => ({ ok: true as const, h }),
        (e: Error) => ({ ok: false as const, e }),
      ),
    )
    for (const r of await Promise.all(batch)) {
      if (!r.ok) {
        if (/outside the permitted root/.test(r.e.message)) refusedOutside++
        else if (/No such file or directory/.test(r.e.message)) refusedMissing++
        else assert.fail(`unexpected refusal: ${r.e.message}`)
        continue
      }
      const st = await nc.awaitBackgroundCommand(host, r.h.taskId, { timeoutMs: 15_000 })
      assert.equal(st.state, 'exited', `${r.h.taskId}: ${st.error ?? ''}`)
      assert.equal(st.exitCode, 0)
      const page = await nc.readBackgroundCommandOutput(host, r.h.taskId, { stream: 'stdout' })
      const lines = page.content.split('\n').filter((l) => l !== '')
      assert.equal(lines.length, 2, `two lines from ${r.h.taskId}: ${JSON.stringify(page.content)}`)
      for (const l of lines) {
        assert.ok(inside(root, l), `command ${r.h.taskId} ran in ${l}, outside the root ${root}`)
        seen.add(l.slice(root.length))
      }
      ran++
    }
    assert.ok(swapper.exitCode === null, `the swapper kept swapping during batch ${b} (${swapErr})`)
  }
  const took = Date.now() - t0
  swapper.kill('SIGKILL')

  // Every listed command's recorded cwd is inside the root as well.
  const listed = nc.listBackgroundCommands(host)
  assert.equal(listed.length, ran)
  for (const e of listed) assert.ok(inside(root, e.cwd), `listed cwd ${e.cwd}`)

  t.diagnostic(
    `${starts} starts in ${took}ms: ${ran} ran inside the root, ${refusedOutside} refused as outside, ` + `${refusedMissing} refused (path absent mid-swap); cwds seen: ${[...seen].sort().join(' ')}`,
  )
  assert.equal(ran + refusedOutside + refusedMissing, starts)
  assert.ok(ran >= 100, `enough commands ran to mean something (${ran})`)
  assert.ok(refusedOutside > 0, 'the swapper was effective: some checks saw the symlink out of the root')
})
