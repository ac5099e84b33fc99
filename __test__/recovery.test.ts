// After a host restart (SPEC §15): real child host processes start
// commands and go — one exits, one is SIGKILLed while its command prints —
// and this fresh process recovers them: statuses, pages (byte-exact),
// search, tails, readArtifact, lists and the tools answer the old ids. A
// task directory of another user and a manifest that points at another
// file are refused (NLC_RECOVERY_REFUSED) and never read, each beside a
// control that is recovered.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { chownSync, lstatSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { marked, nc, NODE, tempRoot, waitFor } from './helpers.ts'

const INDEX = join(import.meta.dirname, '..', 'index.js')
const SH = '/bin/sh'
const PY = '/usr/bin/python3'
const ROOT = process.getuid?.() === 0

/** The exact bytes the multi-byte writer prints: 3000 lines of UTF-8, one invalid byte. */
function multiBytes(): Buffer {
  const parts: Buffer[] = []
  for (let i = 0; i < 3000; i++) parts.push(Buffer.from(`é€😀 line ${i}\n`, 'utf8'))
  parts.push(Buffer.from([0xff, 0x0a]))
  return Buffer.concat(parts)
}
const MULTI = 'import sys\nfor i in range(3000): sys.stdout.buffer.write(("é€😀 line %d\\n" % i).encode())\nsys.stdout.buffer.write(b"\\xff\\n")'

/** Run a host in a child Node process with `body` (it has `nc`, `host`, `out(v)`); resolves with what it printed. */
function childHost(logDir: string, cwd: string, body: string, onLine?: (line: string, child: ReturnType<typeof spawn>) => void): Promise<{ lines: string[]; signal: NodeJS.Signals | null }> {
  const script = `
const nc = require(${JSON.stringify(INDEX)})
nc.configureLogs({ dir: ${JSON.stringify(logDir)} })
const host = {}
nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh', '/usr/bin/python3'], cwdRoot: ${JSON.stringify(cwd)}, defaultTimeoutMs: 60000 })
const out = (v) => process.stdout.write(JSON.stringify(v) + '\\n')
;(async () => { ${body} })().catch((e) => { console.error(e); process.exit(1) })
`
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    const lines: string[] = []
    let buf = ''
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString()
      let i: number
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i)
        buf = buf.slice(i + 1)
        lines.push(line)
        onLine?.(line, child)
      }
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => (code === 0 || signal ? resolve({ lines, signal }) : reject(new Error(`child host exited ${code}`))))
  })
}

async function pages(h: object, taskId: string, stream: 'stdout' | 'stderr'): Promise<string> {
  let offset = 0
  let text = ''
  for (;;) {
    const p = await nc.readBackgroundCommandOutput(h, taskId, { stream, offset, limit: 7000 })
    text += p.content
    if (!p.hasMore) return text
    offset += p.limit
  }
}

function coded(code: string, re?: RegExp) {
  return (e: Error & { code?: string }) => e.code === code && (re === undefined || re.test(e.message))
}

test('commands of a host that exited and of one SIGKILLed mid-output answer their old ids in a fresh process', async () => {
  const logDir = tempRoot('nlc-recover-logs-')
  const cwd = tempRoot('nlc-recover-cwd-')
  const mark = `recover-${process.pid}-${Date.now()}`

  // 1. A host that starts commands and exits (one of them still running).
  const exited = await childHost(
    logDir,
    cwd,
    `
const a = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', "printf 'out-A\\\\n'; printf 'err-A' >&2; exit 3"], { cwd: '.', label: 'the A command', sessionId: 'sess-1' })
const b = await nc.startBackgroundCommand(host, ['/usr/bin/python3', '-c', ${JSON.stringify(MULTI)}], { cwd: '.', sessionId: 'sess-2' })
const c = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'echo started; exec sleep 1000'], { cwd: '.', sessionId: 'sess-1' })
const sa = await nc.awaitBackgroundCommand(host, a.taskId)
await nc.awaitBackgroundCommand(host, b.taskId)
while (nc.getBackgroundCommandStatus(host, c.taskId).stdoutBytes === 0) await new Promise((r) => setTimeout(r, 10))
out({ a: a.taskId, b: b.taskId, c: c.taskId, aDuration: sa.durationMs, aStarted: a.startedAt })
process.exit(0)
`,
  )
  const ids = JSON.parse(exited.lines[0]!) as { a: string; b: string; c: string; aDuration: number; aStarted: number }

  // 2. A host SIGKILLed while its command prints.
  let printer = ''
  const killed = await childHost(
    logDir,
    cwd,
    `
const d = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'i=0; while :; do echo "line $i"; i=$((i+1)); sleep 0.002; done'], { cwd: '.', env: { PATH: '/usr/bin:/bin', NLC_MARK: ${JSON.stringify(mark)} } })
out({ d: d.taskId })
`,
    (line, child) => {
      printer = (JSON.parse(line) as { d: string }).d
      const log = join(logDir, printer, 'stdout.log')
      const poll = setInterval(() => {
        try {
          if (statSync(log).size > 2000) {
            clearInterval(poll)
            child.kill('SIGKILL')
          }
        } catch {
          // not yet
        }
      }, 5)
    },
  )
  assert.equal(killed.signal, 'SIGKILL')
  // The watchdog stops what the dead host left; then its log is final.
  await waitFor(() => marked(mark).length === 0, 10_000, 'the printer stopped after its host died')
  const printed = readFileSync(join(logDir, printer, 'stdout.log'))
  assert.ok(printed.length > 2000)

  // 3. This process is the fresh one.
  nc.configureLogs({ dir: logDir })
  const h = {}
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: [SH], cwdRoot: cwd })
  // Before recovery the old ids are unknown here.
  assert.throws(() => nc.getBackgroundCommandStatus(h, ids.a), coded('NLC_UNKNOWN_TASK'))
  // sinceMs after every start: nothing; a session: only its commands.
  assert.equal(await nc.recoverBackgroundCommands(h, { sinceMs: Date.now() + 60_000 }), 0)
  assert.equal(await nc.recoverBackgroundCommands(h, { sessionId: 'sess-2' }), 1)
  assert.equal(nc.getBackgroundCommandStatus(h, ids.b).recovered, true)
  assert.throws(() => nc.getBackgroundCommandStatus(h, ids.a), coded('NLC_UNKNOWN_TASK'))
  assert.equal(await nc.recoverBackgroundCommands(h), 3)
  // Again: nothing new.
  assert.equal(await nc.recoverBackgroundCommands(h), 0)

  // A: settled in its host — everything as it was.
  const a = nc.getBackgroundCommandStatus(h, ids.a)
  assert.equal(a.state, 'exited')
  assert.equal(a.exitCode, 3)
  assert.equal(a.label, 'the A command')
  assert.equal(a.recovered, true)
  assert.equal(a.stdoutBytes, 6)
  assert.equal(a.stderrBytes, 5)
  assert.equal(a.error, undefined)
  assert.ok(Math.abs(a.durationMs - ids.aDuration) < 1, `${a.durationMs} vs ${ids.aDuration}`)
  assert.equal(await pages(h, ids.a, 'stdout'), 'out-A\n')
  assert.equal(await pages(h, ids.a, 'stderr'), 'err-A')
  assert.match(a.tailPreview, /\[stdout tail\]\nout-A\n[\s\S]*\[stderr tail\]\nerr-A/)
  assert.equal(await nc.readArtifact(a.stdout!.artifactId), 'out-A\n')

  // B: multi-byte output, paged byte-exactly; search and tail.
  const expected = multiBytes()
  const b = nc.getBackgroundCommandStatus(h, ids.b)
  assert.equal(b.stdoutBytes, expected.length)
  assert.equal(await pages(h, ids.b, 'stdout'), expected.toString('utf8'))
  const found = await nc.searchBackgroundCommandOutput(h, ids.b, { pattern: 'line 2999' })
  assert.deepEqual(
    found.matches.map((m) => [m.line, m.text]),
    [[3000, 'é€😀 line 2999']],
  )
  const tail = await nc.readBackgroundCommandOutput(h, ids.b, { stream: 'stdout', tail: 20 })
  assert.equal(tail.content, expected.toString('utf8').slice(-20))

  // C: running when its host exited — killed with its bytes (the exiting
  // host's own stop may still have settled it, or not: either way killed).
  const c = nc.getBackgroundCommandStatus(h, ids.c)
  assert.equal(c.state, 'killed')
  assert.equal(c.recovered, true)
  assert.match(c.error ?? '', /host process that started this command ended before it settled|ended by SIGTERM/)
  assert.equal(await pages(h, ids.c, 'stdout'), 'started\n')

  // D: its host SIGKILLed mid-output — every byte its log holds.
  const d = nc.getBackgroundCommandStatus(h, printer)
  assert.equal(d.state, 'killed')
  assert.match(d.error ?? '', /ended before it settled.*the \d+ bytes its logs hold are kept/)
  assert.equal(d.stdoutBytes, printed.length)
  assert.equal(await pages(h, printer, 'stdout'), printed.toString('utf8'))
  assert.ok(d.stdout && d.stderr, 'a recovered command carries both refs')

  // Lists, counters and the tools answer the old ids; nothing counts as finished.
  const rows = nc.listBackgroundCommands(h)
  assert.deepEqual(new Set(rows.map((r) => r.taskId)), new Set([ids.a, ids.b, ids.c, printer]))
  assert.equal(rows.find((r) => r.taskId === ids.a)!.cwd, cwd)
  assert.deepEqual(nc.backgroundCommandCounts(h, 'sess-1'), { running: 0, finished: 0 })
  const tools = nc.createBackgroundCommandTools(h)
  const st = (await tools.command_status.execute({ taskId: ids.a })) as Record<string, unknown>
  assert.equal(st.state, 'exited')
  assert.equal(st.recovered, true)
  const page = (await tools.command_output.execute({ taskId: ids.b, stream: 'stdout', offset: 0, limit: 9 })) as Record<string, unknown>
  assert.equal(page.content, 'é€😀 line')
  const art = (await tools.command_output.execute({ artifactId: a.stderr!.artifactId })) as Record<string, unknown>
  assert.equal(art.content, 'err-A')
  // Another host of this process does not see them.
  const other = {}
  nc.setBackgroundCommandPolicy(other, { allowedExecutables: [SH], cwdRoot: cwd })
  assert.throws(() => nc.getBackgroundCommandStatus(other, ids.a), coded('NLC_UNKNOWN_TASK'))
  // New commands of this process still start and settle beside them.
  const fresh = await nc.startBackgroundCommand(h, [SH, '-c', 'echo new'], { cwd: '.' })
  assert.equal((await nc.awaitBackgroundCommand(h, fresh.taskId)).state, 'exited')
})

test('a task directory of another user, and manifests that point at other files, are refused and never read', { skip: !ROOT && 'making a directory of another user needs root' }, async () => {
  const logDir = tempRoot('nlc-recover-logs-')
  const cwd = tempRoot('nlc-recover-cwd-')
  const run = await childHost(
    logDir,
    cwd,
    `
const ids = []
for (const word of ['theirs', 'linked', 'swapped', 'control']) {
  const { taskId } = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'echo ' + word], { cwd: '.' })
  await nc.awaitBackgroundCommand(host, taskId)
  ids.push(taskId)
}
out(ids)
`,
  )
  const [theirs, linked, swapped, control] = JSON.parse(run.lines[0]!) as string[]
  // Another user's task directory (its manifest and logs theirs too).
  for (const f of readdirSync(join(logDir, theirs!))) chownSync(join(logDir, theirs!, f), 65534, 65534)
  chownSync(join(logDir, theirs!), 65534, 65534)
  // A log replaced by a link to a file the command never wrote.
  const secret = join(logDir, 'secret.txt')
  writeFileSync(secret, 'not the output\n', { mode: 0o600 })
  rmSync(join(logDir, linked!, 'stdout.log'))
  symlinkSync(secret, join(logDir, linked!, 'stdout.log'))
  assert.ok(lstatSync(join(logDir, linked!, 'stdout.log')).isSymbolicLink())
  // A manifest whose log identities are another task's (the control's). The
  // manifest is kept in an attribute of the task directory (or manifest.json).
  const manifest = (id: string) =>
    execFileSync(PY, ['-c', 'import os,sys; sys.stdout.write(os.getxattr(sys.argv[1], "user.neurolink-commands.manifest").decode())', join(logDir, id)], { encoding: 'utf8' })
  const head = JSON.parse(manifest(swapped!)) as { idents: string[] }
  head.idents = (JSON.parse(manifest(control!)) as { idents: string[] }).idents
  execFileSync(PY, ['-c', 'import os,sys; os.setxattr(sys.argv[1], "user.neurolink-commands.manifest", sys.argv[2].encode())', join(logDir, swapped!), JSON.stringify(head)])
  nc.configureLogs({ dir: logDir })
  const h = {}
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: [SH], cwdRoot: cwd })
  // Only the control is recovered.
  assert.equal(await nc.recoverBackgroundCommands(h), 1)
  const ok = nc.getBackgroundCommandStatus(h, control!)
  assert.equal(ok.recovered, true)
  assert.equal(await pages(h, control!, 'stdout'), 'control\n')
  assert.throws(() => nc.getBackgroundCommandStatus(h, theirs!), coded('NLC_RECOVERY_REFUSED', /owned by uid 65534, not by this process's user/))
  await assert.rejects(nc.readBackgroundCommandOutput(h, theirs!, { stream: 'stdout' }), coded('NLC_RECOVERY_REFUSED'))
  assert.throws(() => nc.getBackgroundCommandStatus(h, linked!), coded('NLC_RECOVERY_REFUSED', /stdout\.log is not the file its identity names/))
  assert.throws(() => nc.getBackgroundCommandStatus(h, swapped!), coded('NLC_RECOVERY_REFUSED', /points at another file/))
  // The refusals are for good: a second recovery refuses them again and reads none of them.
  assert.equal(await nc.recoverBackgroundCommands(h), 0)
  assert.throws(() => nc.getBackgroundCommandStatus(h, theirs!), coded('NLC_RECOVERY_REFUSED'))
  const tools = nc.createBackgroundCommandTools(h)
  const refused = (await tools.command_status.execute({ taskId: linked })) as { isError?: boolean; code?: string }
  assert.equal(refused.code, 'NLC_RECOVERY_REFUSED')
  // Nothing of the secret leaked into a list or a status.
  assert.ok(!JSON.stringify(nc.listBackgroundCommands(h)).includes('not the output'))
  // Let the suite's cleanup remove what is not ours.
  execFileSync('/bin/chown', ['-R', '0:0', join(logDir, theirs!)])
})
