// What wine cannot model (PLATFORMS.md), run only by the workflow's native
// Windows job; scripts/platforms/windows.sh leaves this file out:
// - SIGTERM as a console break (GenerateConsoleCtrlEvent fails under wine):
//   a command that heeds the break ends before killGraceMs, having seen it;
// - a junction out of the root (wine's mklink /J creates none): refused as
//   outside, with the control of a junction inside the root accepted.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { lstatSync, mkdirSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { NODE, hostWith, nc, rejection, run, samePath, script, tempRoot } from './helpers.mjs'

test('SIGTERM is a console break the command sees; a command that heeds it ends before the grace', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root, { killGraceMs: 30_000 })
  const heed = script(root, 'heed.js', "process.on('SIGBREAK', () => { process.stdout.write('break'); process.exit(7) })\nconsole.log('ready')\nsetInterval(() => {}, 1000)\n")
  const h = await nc.startBackgroundCommand(host, [NODE, heed], { cwd: '.' })
  const ready = await nc.awaitBackgroundCommandOutput(host, h.taskId, { pattern: 'ready', timeoutMs: 30_000 })
  assert.equal(ready.matched, true)
  const t0 = Date.now()
  const st = await nc.killBackgroundCommand(host, h.taskId, 'SIGTERM')
  assert.ok(Date.now() - t0 < 20_000, `ended by the break, not the 30 s grace (${Date.now() - t0} ms)`)
  assert.equal(st.state, 'killed', JSON.stringify(st))
  assert.equal(st.signal, 'SIGTERM')
  assert.match(await nc.readArtifact(st.stdout.artifactId), /break$/)
})

function junction(link, target) {
  execFileSync(process.env.ComSpec ?? 'cmd.exe', ['/d', '/c', 'mklink', '/J', link, target], { stdio: 'ignore' })
  // The refusal below must be of a junction that exists, not of a missing path.
  assert.ok(lstatSync(link).isSymbolicLink(), `${link} is a junction`)
  assert.ok(samePath(realpathSync.native(link), target), `${link} leads to ${target}`)
}

test('a junction out of the root is refused as outside; control: a junction inside the root is followed', async (t) => {
  const outside = tempRoot(t, 'nlc-win-outside-')
  const root = tempRoot(t)
  mkdirSync(join(root, 'inner'))
  junction(join(root, 'out'), outside)
  junction(join(root, 'in'), join(root, 'inner'))
  const host = hostWith(root)
  const e = await rejection(nc.startBackgroundCommand(host, [NODE, '-e', '1'], { cwd: 'out' }))
  assert.equal(e.code, 'NLC_OUTSIDE_ROOT', e.message)
  const [st, out] = await run(host, [NODE, '-e', 'process.stdout.write(process.cwd())'], { cwd: 'in' })
  assert.equal(st.exitCode, 0)
  assert.ok(samePath(out, join(root, 'inner')), `the command ran in the junction's target: ${out}`)
})
