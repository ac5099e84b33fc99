// Its own session and descendants that cannot escape (SPEC §6).
//
// A command leads a session of its own: it has no controlling terminal, so
// opening /dev/tty fails with ENXIO — checked from a host that runs on a
// real terminal (under `script`), which itself can open /dev/tty.
//
// A descendant that leaves the command's process group and session
// (`setsid`, `setsid -f`, a double fork with setpgid, `nohup setsid`) is
// stopped with the command when the command runs in a cgroup of its own
// (containment "tree": a host that may create one — root here), after the
// settle, a kill, a timeout, the host's exit and the host's SIGKILL. A host
// that may not (run as `nobody`) reports containment "group", and the
// escaped descendants survive: the honest outcome, asserted as such. Each
// escapee writes its pid to a file; every process a run starts carries
// NLC_MARK, and whatever is left is killed after the test.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmodSync, readFileSync } from 'node:fs'
import { release } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'

import { marked, ours, tempRoot, WAIT_SCALE, waitFor } from './helpers.ts'

const ESCAPE_HOST = join(__dirname, 'fixtures', 'escape-host.js')
const TTY_HOST = join(__dirname, 'fixtures', 'tty-host.js')
const FORMS = ['setsid', 'setsid-f', 'double', 'nohup'] as const

/** Whether this process can give commands cgroups: root, with a cgroup v2
 * hierarchy mounted, on Linux 5.14 or later (cgroup.kill). */
function cgroupsPossible(): boolean {
  if (process.getuid?.() !== 0) return false
  const v2 = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' - ')[1]?.startsWith('cgroup2 '))
  const [major, minor] = release().split('.').map(Number)
  return v2 && (major > 5 || (major === 5 && minor >= 14))
}

interface Outcome {
  reported: { pid: number; containment: string; listed: string; state?: string }
  pids: Record<(typeof FORMS)[number], number>
  mark: string
  hostExited: Promise<unknown>
  hostPid: number
}

/** Run the escape host in `mode` (as `nobody` when `asNobody`) until it
 * has reported; the escapees' pids come from their files. */
async function runHost(t: TestContext, mode: string, asNobody = false): Promise<Outcome> {
  const dir = tempRoot('nlc-escape-')
  if (asNobody) chmodSync(dir, 0o777)
  const mark = randomUUID()
  const argv = [process.execPath, ESCAPE_HOST, mode, dir]
  const [cmd, ...args] = asNobody ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...argv] : argv
  // A host run as nobody keeps its logs under the shared directory.
  const env = { ...process.env, NLC_MARK: mark, ...(asNobody ? { TMPDIR: dir } : {}) }
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(async () => {
    try {
      child.kill('SIGKILL')
    } catch {
      // gone
    }
    for (const f of FORMS) {
      try {
        const pid = Number(readFileSync(join(dir, `${f}.pid`), 'utf8').trim())
        if (ours(pid, mark)) process.kill(pid, 'SIGKILL')
      } catch {
        // no file, or gone meanwhile
      }
    }
    // The host's watchdog (marked too) removes its cgroups: let it finish,
    // then stop whatever is still left.
    await waitFor(() => marked(mark).length === 0, 10_000, 'the watchdog to finish').catch(() => {})
    for (const pid of marked(mark)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
  })
  let out = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s))
  const hostExited = new Promise((r) => child.on('exit', r))
  const line = await waitFor(
    () => {
      if (child.exitCode !== null && !out.includes('{')) throw new Error(`the host ended without a report: ${err}`)
      return out.split('\n').find((l) => l.startsWith('{'))
    },
    20_000,
    'the host to report',
  )
  const reported = JSON.parse(line)
  const pids = Object.fromEntries(FORMS.map((f) => [f, Number(readFileSync(join(dir, `${f}.pid`), 'utf8').trim())])) as Outcome['pids']
  return { reported, pids, mark, hostExited, hostPid: child.pid! }
}

/** Wait until none of the escapees lives (zombies count as gone). */
async function allGone(o: Outcome, ms: number, what: string): Promise<void> {
  await waitFor(() => FORMS.every((f) => !ours(o.pids[f], o.mark)), ms, `${what}: every escapee gone (left: ${FORMS.filter((f) => ours(o.pids[f], o.mark)).join(', ')})`)
}

const expectTree = cgroupsPossible()

for (const mode of ['settle', 'kill', 'timeout'] as const) {
  test(`escaped descendants are stopped when the command ${mode === 'settle' ? 'settles' : mode === 'kill' ? 'is killed' : 'times out'} (containment "tree")`, async (t) => {
    const o = await runHost(t, mode)
    assert.equal(o.reported.containment, expectTree ? 'tree' : 'group')
    assert.equal(o.reported.listed, o.reported.containment, 'the list row says the same')
    assert.equal(o.reported.state, { settle: 'exited', kill: 'killed', timeout: 'timeout' }[mode])
    if (o.reported.containment === 'tree') {
      // Settled: the tree was stopped before the status was published.
      await allGone(o, 1_000, `after ${mode}`)
    } else {
      assert.ok(
        FORMS.every((f) => ours(o.pids[f], o.mark)),
        'with group containment they survive',
      )
    }
  })
}

test('escaped descendants are stopped when the host exits normally', async (t) => {
  const o = await runHost(t, 'exit')
  assert.equal(o.reported.containment, expectTree ? 'tree' : 'group')
  await o.hostExited
  if (o.reported.containment === 'tree') await allGone(o, 6_000, 'after the host exited')
})

test('escaped descendants are stopped within seconds when the host is SIGKILLed', async (t) => {
  const o = await runHost(t, 'wait')
  assert.equal(o.reported.containment, expectTree ? 'tree' : 'group')
  assert.ok(
    FORMS.every((f) => ours(o.pids[f], o.mark)),
    'the control: all four run while the host lives',
  )
  process.kill(o.hostPid, 'SIGKILL')
  await o.hostExited
  if (o.reported.containment === 'tree') await allGone(o, 6_000, 'after the host was SIGKILLed')
})

// A host without the right to make cgroups (as root here: the host is run
// as `nobody`; a non-root suite runs it as itself): only the process group
// is covered, and the escapees outlive the command and the host.
const asRoot = process.getuid?.() === 0
for (const mode of ['settle', 'kill', 'exit'] as const) {
  test(`a host that may not make cgroups states containment "group" and escapees survive (${mode})`, async (t) => {
    const o = await runHost(t, mode, asRoot)
    if (!asRoot && o.reported.containment === 'tree') return // a delegated subtree: the tests above cover it
    assert.equal(o.reported.containment, 'group')
    assert.equal(o.reported.listed, 'group')
    await o.hostExited
    // Past the watchdog's two seconds: what it could stop, it has.
    await new Promise((r) => setTimeout(r, 3_000 * WAIT_SCALE))
    const left = FORMS.filter((f) => ours(o.pids[f], o.mark))
    assert.deepEqual(left, [...FORMS], 'every escapee outlived the command and the host')
  })
}

test('a command has no controlling terminal; a terminal command has its own', async (t) => {
  const dir = tempRoot('nlc-tty-')
  const mark = randomUUID()
  t.after(() => {
    for (const pid of marked(mark)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone
      }
    }
  })
  // `script` runs the host on a new pseudo-terminal, its controlling one.
  const out = execFileSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(TTY_HOST)} ${JSON.stringify(dir)}`, '/dev/null'], {
    env: { ...process.env, NLC_MARK: mark },
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
    timeout: 30_000,
  })
  const r = JSON.parse(
    out
      .split('\n')
      .find((l) => l.trim().startsWith('{'))!
      .trim(),
  )
  // The control: the host itself has a controlling terminal.
  assert.match(r.hostTty, /^\/dev\/pts\/\d+$/)
  // errno 6 (ENXIO), tty_nr 0, and the command leads its session.
  assert.equal(r.unconfined.out, 'probe 6 0 True\n')
  if (r.confined) assert.equal(r.confined.out, 'probe 6 0 True\n')
  const tty = r.terminal.out.trim()
  assert.match(tty, /^\/dev\/pts\/\d+$/)
  assert.notEqual(tty, r.hostTty, 'its own terminal, not the host’s')
})
