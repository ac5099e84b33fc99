// Faults: the log directory's filesystem fills up mid-run, the log directory
// cannot be created, the host runs out of file descriptors, commands are
// SIGSTOPped, and commands close their output early but keep running.
//
// The disk and descriptor faults run in a CHILD host (fixtures/fault-host.js)
// whose TMPDIR is a small tmpfs mounted here (we are root) or whose
// `ulimit -n` is low, so the fault hits that process only; the child reports
// what it saw as JSON and the assertions are made here. Mounts, children and
// files are cleaned up even when a test fails.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test, type TestContext } from 'node:test'

import { groupMembers, hostWith, nc, settle, tempRoot, waitFor } from './helpers.ts'

// Everything this file creates — temporary roots and the commands' log
// directories (under os.tmpdir()) — lives in one directory, removed at the end.
const FILE_TMP = mkdtempSync(join(tmpdir(), 'nlc-faults-'))
process.env.TMPDIR = FILE_TMP
after(() => rmSync(FILE_TMP, { recursive: true, force: true }))

const SH = '/bin/sh'
/** strerror(EMFILE) as the addon's libc spells it (musl words it differently from glibc). */
const EMFILE = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime ? 'Too many open files' : 'No file descriptors available'
const FIXTURE = join(__dirname, 'fixtures', 'fault-host.js')

/** Mount a tmpfs of `size` at a fresh directory; unmounted (lazily, so a busy mount cannot stick) after the test. */
function tmpfs(t: TestContext, size: string, readOnly = false): string {
  const dir = tempRoot('nlc-fault-mnt-')
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}${readOnly ? ',ro' : ''}`, 'nlc-fault', dir])
  t.after(() => {
    try {
      execFileSync('umount', ['-l', dir])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
  return dir
}

/** Run a fault scenario in a child host; resolves with its JSON report. */
function child(scenario: string, cfg: object, env: Record<string, string>, fdLimit?: number): Promise<Record<string, any>> {
  const args = [FIXTURE, scenario, JSON.stringify(cfg)]
  const [file, argv] = fdLimit === undefined ? [process.execPath, args] : [SH, ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...args]]
  return new Promise((resolve, reject) => {
    execFile(file, argv, { env: { ...process.env, ...env }, timeout: 50_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const line = stdout.trim().split('\n').pop() ?? ''
      let report: Record<string, any> | undefined
      try {
        report = JSON.parse(line)
      } catch {
        // reported below
      }
      if (err || !report || report.crashed) {
        reject(new Error(`child host ${scenario} failed (${err?.message ?? 'no error'}): ${report?.crashed ?? line}\n${stderr}`))
      } else {
        resolve(report)
      }
    })
  })
}

/** Run `fn` with os.tmpdir() pointing at `dir`, restoring it even on failure. */
async function withTmpdir<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.TMPDIR
  process.env.TMPDIR = dir
  try {
    return await fn()
  } finally {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
  }
}

test('the log filesystem fills up mid-run: the command is stopped (killed, error naming the stream and ENOSPC), every byte written is readable, the next command works', async (t) => {
  const root = tempRoot('nlc-fault-disk-')
  const healthy = tempRoot('nlc-fault-healthy-')
  t.after(() => rmSync(healthy, { recursive: true, force: true }))
  const pattern = randomBytes(4 << 20)
  writeFileSync(join(root, 'pattern.bin'), pattern)
  const mnt = tmpfs(t, '1m')
  const r = await child('diskFull', { root, healthy }, { TMPDIR: mnt })
  for (const stream of ['stdout', 'stderr'] as const) {
    const { st, logSize, prefixOk, pagesOk } = r[stream] as {
      st: nc.BackgroundCommandStatus
      logSize: number
      prefixOk: boolean
      pagesOk: boolean
    }
    assert.equal(st.state, 'killed', `${stream}: ${st.error}`)
    assert.match(st.error ?? '', new RegExp(`^Writing ${stream} to its log file .*/${stream}\\.log failed: No space left on device`))
    assert.match(st.error ?? '', /bytes written before the failure are kept/)
    assert.ok(logSize > 0 && logSize < pattern.length, `${stream}: ${logSize} bytes fit`)
    const bytes = stream === 'stdout' ? st.stdoutBytes : st.stderrBytes
    assert.equal(bytes, logSize, `${stream}Bytes is the log file's size`)
    assert.equal(st[stream]!.sizeBytes, logSize, 'the banked size too')
    assert.ok(prefixOk, `${stream}: the log is exactly the first ${logSize} bytes the command wrote`)
    assert.ok(pagesOk, `${stream}: the pages are exactly those bytes decoded`)
  }
  for (const where of ['healthy', 'freed'] as const) {
    assert.deepEqual(r.next[where], { state: 'exited', exitCode: 0, text: 'next\n' }, where)
  }
})

test('the log directory cannot be created (read-only, under a file, impossible): the start is refused saying why, nothing runs, and the next start works', async (t) => {
  const root = tempRoot('nlc-fault-nodir-')
  const host = hostWith(root, [SH])
  writeFileSync(join(root, 'a-file'), '')
  nc.configureGitTools(host, { repoRoot: root })
  const ro = tmpfs(t, '1m', true)
  for (const [dir, os] of [
    [ro, 'Read-only file system'],
    [join(root, 'a-file', 'tmp'), 'Not a directory'],
    ['/proc/self/nlc-no-such-dir', 'No such file or directory'],
  ] as const) {
    await withTmpdir(dir, async () => {
      await assert.rejects(nc.startBackgroundCommand(host, [SH, '-c', 'echo never > ran'], { cwd: '.' }), (e: Error) => {
        assert.match(e.message, new RegExp(`^Cannot create the log directory ${dir}/neurolink-commands/c\\d+[0-9a-f]{12}: ${os}\\. `))
        assert.match(e.message, /point TMPDIR at a writable directory/)
        return true
      })
      await assert.rejects(nc.runGitCommand(host, ['--version']), /Cannot create the log directory/)
    })
  }
  assert.deepEqual(nc.listBackgroundCommands(host), [], 'nothing was started')
  assert.equal(existsSync(join(root, 'ran')), false)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo fine'], { cwd: '.' })
  const st = await settle(host, h.taskId)
  assert.equal(st.state, 'exited')
  assert.equal(st.tailPreview, '[stdout tail]\nfine\n')
})

test('the file-descriptor limit is exhausted (ulimit -n 64): clear errors, no crash, every operation answers, and it recovers once descriptors are free', async () => {
  const root = tempRoot('nlc-fault-fds-')
  const r = await child('fds', { root }, {}, 64)
  assert.ok(r.running >= 2, `some commands ran before the limit (${r.running})`)
  // The start that ran out says so and what to do, whichever of its steps ran
  // out: refused up front (the cwd check, the log directory) or settled
  // "could not be started" with both refs (the spawn's pipes).
  const outOfFds = new RegExp(`${EMFILE}\\. The host process has run out of file descriptors .*ulimit -n`)
  const ranOut = (f: { how: string; state?: string; exitCode?: number; error: string; hasRefs?: boolean }) => {
    assert.match(f.error, outOfFds, JSON.stringify(f))
    if (f.how === 'settled') {
      assert.equal(f.state, 'exited')
      assert.equal(f.exitCode, undefined)
      assert.equal(f.hasRefs, true)
      assert.match(f.error, new RegExp(`could not be started: ${EMFILE}\\.`))
    } else {
      assert.equal(f.how, 'rejected', JSON.stringify(f))
    }
  }
  ranOut(r.firstFailure)
  // Descriptors given back one at a time: each start on the way ran out
  // (the spawn's pipes, needing the most at once, among them), the last runs.
  const last = r.staircase.at(-1)
  assert.equal(last.how, 'running', JSON.stringify(r.staircase))
  for (const f of r.staircase.slice(0, -1)) ranOut(f)
  assert.ok(
    r.staircase.some((f: { how: string }) => f.how === 'settled'),
    `a start ran out at the spawn: ${JSON.stringify(r.staircase)}`,
  )
  assert.ok(
    r.staircase.some((f: { how: string }) => f.how === 'rejected'),
    `a start ran out before it: ${JSON.stringify(r.staircase)}`,
  )
  // With no descriptor left at all: a start is refused, a read fails, status and kill still answer.
  assert.ok(r.hogged >= 0)
  const during = JSON.stringify(r.during)
  assert.equal(r.during.start.how, 'rejected', during)
  assert.match(r.during.start.error, new RegExp(`^cwd "\\." could not be opened: ${EMFILE}\\. The host process has run out of file descriptors`))
  assert.equal(r.during.status.state, 'running', during)
  assert.equal(r.during.read.ok, false, during)
  assert.match(r.during.read.error, new RegExp(`^Cannot read the stdout log of "c\\d+[0-9a-f]{12}" \\(.*stdout\\.log\\): ${EMFILE}\\. The host process has run out of file descriptors`))
  assert.deepEqual(r.during.kill, { state: 'killed', signal: 'SIGKILL', hasRefs: true })
  // Listed: the running ones, and the start that ran out if it settled.
  assert.equal(r.during.list, r.during.running + (r.firstFailure.how === 'settled' ? 1 : 0))
  // Once the descriptors are free: everything that ran settles, new commands work.
  const settled = JSON.stringify(r.settled)
  assert.equal(r.settled.length, r.running, settled)
  assert.equal(r.settled.filter((s: { state: string; exitCode?: number }) => s.state === 'exited' && s.exitCode === 0).length, r.running - 1, settled)
  assert.equal(r.settled[1].state, 'killed', settled)
  for (let i = 0; i < 3; i++) assert.deepEqual(r.recovery[i], { state: 'exited', exitCode: 0, text: `again ${i}\n` }, JSON.stringify(r.recovery))
})

/** The pid (= process group) a command printed on its first line. */
async function firstLinePid(host: object, taskId: string): Promise<number> {
  const line = await waitFor(
    async () => {
      const p = await nc.readBackgroundCommandOutput(host, taskId, { stream: 'stdout' })
      return p.content.includes('\n') && p.content.split('\n')[0]
    },
    10_000,
    'the pid line',
  )
  return Number(line)
}

/** Process state letter from /proc (T = stopped), or undefined when gone. */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
  } catch {
    return undefined
  }
}

test('SIGSTOPped commands time out correctly: SIGTERM with SIGCONT ends them, SIGKILL after the grace if they ignore SIGTERM, the whole group goes', async () => {
  const root = tempRoot('nlc-fault-stop-')
  const host = hostWith(root, [SH], { killGraceMs: 400 })
  const cases = [
    ['stops itself', 'echo $$; kill -STOP $$; echo never', 'SIGTERM'],
    ['stops itself ignoring SIGTERM', 'trap "" TERM; echo $$; kill -STOP $$; sleep 30', 'SIGKILL'],
    ['a stopped grandchild, the leader waiting', 'echo $$; sleep 30 & kill -STOP $!; wait', 'SIGTERM'],
  ] as const
  const runs = await Promise.all(
    cases.map(async ([what, script, signal]) => {
      const t0 = Date.now()
      const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.', timeoutMs: 300 })
      const pid = await firstLinePid(host, h.taskId)
      const st = await settle(host, h.taskId)
      return { what, signal, st, pid, ms: Date.now() - t0 }
    }),
  )
  for (const { what, signal, st, pid, ms } of runs) {
    assert.equal(st.state, 'timeout', what)
    assert.equal(st.signal, signal, what)
    assert.equal(st.exitCode, undefined, what)
    assert.match(st.error ?? '', /exceeded its 300ms budget/, what)
    assert.ok(!st.tailPreview.includes('never'), what)
    assert.ok(ms >= 300 && ms < 5000, `${what}: settled after ${ms} ms`)
    await waitFor(() => groupMembers(pid).length === 0, 5000, `${what}: group ${pid} gone`)
  }
})

test('a command stopped from outside times out, and a stopped command is killed promptly', async () => {
  const root = tempRoot('nlc-fault-stop2-')
  const host = hostWith(root, [SH], { killGraceMs: 400 })
  const loop = 'echo $$; while :; do sleep 0.05; done'
  const a = await nc.startBackgroundCommand(host, [SH, '-c', loop], { cwd: '.', timeoutMs: 600 })
  const b = await nc.startBackgroundCommand(host, [SH, '-c', loop], { cwd: '.' })
  const [pa, pb] = await Promise.all([firstLinePid(host, a.taskId), firstLinePid(host, b.taskId)])
  process.kill(pa, 'SIGSTOP')
  process.kill(pb, 'SIGSTOP')
  await waitFor(() => procState(pa) === 'T' && procState(pb) === 'T', 5000, 'both stopped')
  assert.equal(nc.getBackgroundCommandStatus(host, b.taskId).state, 'running', 'stopped is not settled')
  const t0 = Date.now()
  const killed = await nc.killBackgroundCommand(host, b.taskId)
  assert.equal(killed.state, 'killed')
  assert.equal(killed.signal, 'SIGTERM')
  assert.ok(Date.now() - t0 < 2000, 'no wait for the SIGKILL grace: SIGCONT let SIGTERM act')
  const st = await settle(host, a.taskId)
  assert.equal(st.state, 'timeout')
  assert.equal(st.signal, 'SIGTERM')
  for (const pid of [pa, pb]) await waitFor(() => groupMembers(pid).length === 0, 5000, `group ${pid} gone`)
})

test('a command that closes stdout early but keeps running stays supervised and settles on its exit', async () => {
  const root = tempRoot('nlc-fault-close-')
  const host = hostWith(root, [SH])
  const gate = (n: string) => `while [ ! -e ${n} ]; do sleep 0.02; done`
  // stdout closed, stderr still open
  const a = await nc.startBackgroundCommand(host, [SH, '-c', `echo before; exec 1>&-; touch closed-a; ${gate('go-a')}; echo after >&2; exit 4`], { cwd: '.' })
  // both closed
  const b = await nc.startBackgroundCommand(host, [SH, '-c', `echo both >&2; exec 1>&- 2>&-; touch closed-b; ${gate('go-b')}; exit 6`], { cwd: '.' })
  // both closed, never exits: the budget still applies
  const c = await nc.startBackgroundCommand(host, [SH, '-c', `exec 1>&- 2>&-; touch closed-c; ${gate('go-never')}`], { cwd: '.', timeoutMs: 700 })
  await waitFor(() => ['a', 'b', 'c'].every((x) => existsSync(join(root, `closed-${x}`))), 10_000, 'the streams closed')
  for (const h of [a, b]) {
    // Poll for a while: the command stays running with its streams closed.
    const until = Date.now() + 300
    while (Date.now() < until) {
      assert.equal(nc.getBackgroundCommandStatus(host, h.taskId).state, 'running')
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  writeFileSync(join(root, 'go-a'), '')
  writeFileSync(join(root, 'go-b'), '')
  const sa = await settle(host, a.taskId)
  assert.equal(sa.state, 'exited')
  assert.equal(sa.exitCode, 4)
  assert.equal(sa.error, undefined)
  assert.equal(sa.tailPreview, '[stdout tail]\nbefore\n\n[stderr tail]\nafter\n')
  const sb = await settle(host, b.taskId)
  assert.equal(sb.state, 'exited')
  assert.equal(sb.exitCode, 6)
  assert.equal(sb.error, undefined)
  assert.equal(sb.stderrBytes, 5)
  const sc = await settle(host, c.taskId)
  assert.equal(sc.state, 'timeout')
  assert.match(sc.error ?? '', /700ms budget/)
  assert.equal(sc.tailPreview, '(the command wrote no output)')
})

test('the fault tests leave no mount behind', () => {
  // Runs last: every tmpfs above was unmounted by its test's after hook.
  const left = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('nlc-fault '))
  assert.deepEqual(left, [])
})
