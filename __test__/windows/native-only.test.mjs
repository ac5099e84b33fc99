// What wine cannot model (PLATFORMS.md), run only by the workflow's native
// Windows job; scripts/platforms/windows.sh leaves this file out:
// - SIGTERM as a console break (GenerateConsoleCtrlEvent fails under wine):
//   a command that heeds the break ends before killGraceMs, having seen it;
// - a junction out of the root (wine's mklink /J creates none): refused as
//   outside, with the control of a junction inside the root accepted;
// - the git toolset against real Git for Windows (none is installed where
//   wine runs; git.test.mjs tests our side there with a stand-in): a repo
//   is made, runGitCommand runs status, log and diff, and neither a planted
//   hook nor a configured fsmonitor program runs;
// - terminal mode with ordinary console programs (under wine they do not
//   attach to a pseudo console): one prints to its standard output and sees
//   a terminal, a resize reaches it, and `end: true` types the console's end
//   of input (ctrl-z, enter).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { NODE, hostWith, nc, rejection, run, samePath, screenText, script, settle, shown, tempRoot } from './helpers.mjs'

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

test('runGitCommand with real git.exe: status, log and diff; no planted hook or fsmonitor program runs', async (t) => {
  const repo = tempRoot(t, 'nlc-git-')
  const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' })
  git('init', '-q', '-b', 'main')
  git('config', 'user.email', 'a@example.com')
  git('config', 'user.name', 'A')
  writeFileSync(join(repo, 'a.txt'), 'one\n')
  git('add', 'a.txt')
  git('commit', '-q', '-m', 'first')
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n')
  const marker = join(repo, 'ran.txt').replace(/\\/g, '/')
  for (const hook of ['post-index-change', 'reference-transaction', 'pre-auto-gc', 'post-checkout']) {
    writeFileSync(join(repo, '.git', 'hooks', hook), `#!/bin/sh\necho ${hook} >> '${marker}'\n`)
  }
  git('config', 'core.fsmonitor', `echo fsmonitor >> '${marker}'; false`)
  const host = {}
  const s = nc.configureGitTools(host, { repoRoot: repo })
  assert.match(s.gitExecutable, /\\git\.(exe|cmd)$/i)
  const status = await nc.runGitCommand(host, ['status', '--short'])
  assert.equal(status.ok, true, JSON.stringify(status))
  assert.equal(status.preview, ' M a.txt\n')
  const log = await nc.runGitCommand(host, ['log', '--format=%s'])
  assert.equal(log.preview, 'first\n')
  const diff = await nc.runGitCommand(host, ['diff', '--no-color'])
  assert.match(diff.preview, /^\+two$/m)
  assert.equal(existsSync(marker), false, 'no hook and no fsmonitor program ran')
  // Control: the same status without the hardening starts the fsmonitor program.
  git('status', '--short')
  assert.equal(existsSync(marker), true, 'git without the hardening runs the configured fsmonitor')
})

const SORT = join(process.env.SystemRoot ?? 'C:\\Windows', 'System32', 'sort.exe')

test('terminal: an ordinary program prints on its console, sees a terminal, and a resize reaches it', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const s = script(
    root,
    'size.js',
    "const size = () => console.log('size ' + process.stdout.columns + 'x' + process.stdout.rows)\nconsole.log('tty ' + process.stdout.isTTY + ' ' + process.stdin.isTTY)\nconsole.error('on stderr too')\nsize()\nprocess.stdout.on('resize', () => { size(); process.exit(0) })\nsetInterval(() => {}, 1000)\n",
  )
  const h = await nc.startBackgroundCommand(host, [NODE, s], { cwd: '.', terminal: { cols: 100, rows: 30 } })
  const text = await shown(host, h.taskId, 'size 100x30')
  assert.match(text, /tty true true/)
  assert.match(text, /on stderr too/)
  nc.resizeBackgroundCommandTerminal(host, h.taskId, { cols: 120, rows: 40 })
  const st = await settle(host, h.taskId)
  assert.equal(st.exitCode, 0, JSON.stringify(st))
  assert.match(screenText(await nc.readArtifact(st.stdout.artifactId)), /size 120x40/)
  assert.equal(st.stderrBytes, 0)
})

test("terminal: end types the console's end of input (ctrl-z, enter); sort.exe reads to it", async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root, {}, [SORT])
  const h = await nc.startBackgroundCommand(host, [SORT], { cwd: '.', terminal: true })
  await nc.writeBackgroundCommandInput(host, h.taskId, 'pear\rapple\r', { end: true })
  const st = await settle(host, h.taskId)
  assert.equal(st.exitCode, 0, JSON.stringify(st))
  const lines = screenText(await nc.readArtifact(st.stdout.artifactId))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  assert.deepEqual(lines.slice(-2), ['apple', 'pear'], JSON.stringify(lines))
})
