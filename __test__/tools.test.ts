// The four model-facing command tools, driven the way an agent host drives
// them: through the reference host's executeTool registry.
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { nc, tempRoot, waitFor } from './helpers.ts'
import { ReferenceHost, type ChecklistList } from './reference-host.ts'

const SH = '/bin/sh'
const RUN_SHAPE = '{ argv: string[], cwd?: string, timeoutMs?: number, stdin?: boolean, terminal?: boolean }'
const STATUS_SHAPE = '{ taskId: string, waitMs?: number, waitFor?: string }'
const OUTPUT_SHAPE =
  '{ taskId: string, stream?: "stdout" | "stderr", offset?: number, limit?: number, tail?: number, grep?: string } | { artifactId: string, offset?: number, limit?: number, tail?: number, grep?: string }'
const KILL_SHAPE = '{ taskId: string }'

type Refusal = { isError: true; error: string; code: nc.BackgroundCommandErrorCode }
type RunResult = nc.BackgroundCommandHandle & nc.BackgroundCommandCounts
type StatusResult = nc.BackgroundCommandStatus & nc.BackgroundCommandCounts

let sessionCounter = 0
/** A session id no other test (or host) uses. */
function freshSession(what: string): string {
  sessionCounter += 1
  return `tools-${what}-${process.pid}-${sessionCounter}`
}

function isRefusal(v: unknown): v is Refusal {
  return typeof v === 'object' && v !== null && (v as Refusal).isError === true && typeof (v as Refusal).error === 'string'
}

function refusal(v: unknown): string {
  assert.ok(isRefusal(v), `expected { isError: true, error, code }, got ${JSON.stringify(v)}`)
  assert.deepEqual(Object.keys(v).sort(), ['code', 'error', 'isError'])
  assert.match(v.code, /^NLC_[A-Z_]+$/, `a refusal's code: ${JSON.stringify(v)}`)
  assert.notEqual(v.code, 'NLC_INTERNAL', `a refusal of a known kind: ${JSON.stringify(v)}`)
  return v.error
}

function ok<T>(v: unknown): T {
  assert.ok(!isRefusal(v), `expected a result, got the refusal ${JSON.stringify(v)}`)
  return v as T
}

/** A reference host whose policy allows the given executables under a fresh root. */
function commandHost(allowed: string[] = [SH], extra: Partial<nc.BackgroundCommandPolicy> = {}, session: string | undefined = freshSession('host')): { host: ReferenceHost; root: string } {
  const root = tempRoot('nlc-tools-')
  const host = new ReferenceHost(session)
  host.registerBackgroundCommandTools({ allowedExecutables: allowed, cwdRoot: root, killGraceMs: 500, ...extra })
  return { host, root }
}

/** A shell script that prints `one`, waits for `<root>/<gate>` to exist, then prints `two`. */
function gated(gate: string): string[] {
  return [SH, '-c', `echo one; while [ ! -e ${gate} ]; do sleep 0.01; done; echo two`]
}

test("without a policy every command tool refuses in-band, in the tool's terms (the host function is the host's)", async () => {
  const host = new ReferenceHost(freshSession('nopolicy'))
  host.registerCommandToolsOnly()
  const run = refusal(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'echo hi'] }))
  assert.ok(
    run.endsWith('No background command policy is set for this host, so no command can run: the host application has not enabled run_command_bg yet. No parameter changes that; tell the user.'),
    run,
  )
  assert.doesNotMatch(run, /setBackgroundCommandPolicy/)
  assert.ok(run.includes(RUN_SHAPE), run)
  assert.equal(nc.getBackgroundCommandPolicy(host), undefined)
  for (const name of ['command_status', 'command_output', 'command_kill']) {
    const e = refusal(await host.executeTool(name, { taskId: 'c1deadbeefcafe' }))
    assert.match(e, /No background command "c1deadbeefcafe"/)
    assert.match(e, /started none/)
  }
  assert.deepEqual(nc.listBackgroundCommands(host), [])
})

test('malformed params come back in-band, naming the expected shape', async () => {
  const { host } = commandHost([SH])
  const cases: [string, unknown, RegExp][] = [
    ['run_command_bg', {}, /argv must be an array of strings/],
    ['run_command_bg', { argv: 'ls -la' }, /argv must be an array of strings.*got the string "ls -la"/],
    ['run_command_bg', { argv: [SH, 7] }, /argv\[1\] is the number 7/],
    ['run_command_bg', { argv: [] }, /non-empty array of strings/],
    ['run_command_bg', { argv: [SH, '-c', 'true'], cwd: 5 }, /cwd must be a string/],
    ['run_command_bg', { argv: [SH, '-c', 'true'], timeoutMs: 'soon' }, /timeoutMs must be a positive number of milliseconds \(got "soon"\)/],
    ['run_command_bg', { argv: [SH, '-c', 'true'], timeoutMs: -5 }, /timeoutMs must be a positive number of milliseconds \(got -5\)/],
    ['run_command_bg', { argv: [SH, '-c', 'true'], timeoutMs: 0 }, /timeoutMs must be a positive number/],
    ['run_command_bg', { argv: ['sh -c ls'] }, /NO shell/],
    ['run_command_bg', { argv: ['/bin/ls'] }, /Executable "\/bin\/ls" is not allowed/],
    ['run_command_bg', { argv: [SH, '-c', 'true'], cwd: '/' }, /outside the permitted root/],
    ['command_status', {}, /taskId must be a string \(got undefined\)/],
    ['command_status', { taskId: 42 }, /taskId must be a string \(got the number 42\)/],
    ['command_output', { stream: 'stdout' }, /taskId or artifactId is required/],
    ['command_kill', { taskId: ['c1'] }, /taskId must be a string \(got an array\)/],
  ]
  const shapes: Record<string, string> = {
    run_command_bg: RUN_SHAPE,
    command_status: STATUS_SHAPE,
    command_output: OUTPUT_SHAPE,
    command_kill: KILL_SHAPE,
  }
  for (const [name, params, want] of cases) {
    const e = refusal(await host.executeTool(name, params))
    assert.match(e, want, `${name} ${JSON.stringify(params)}`)
    assert.ok(e.includes(shapes[name]), `${name}: ${e} should name ${shapes[name]}`)
  }
  // params that are not an object at all
  for (const name of Object.keys(shapes)) {
    for (const params of [null, undefined, 'echo hi', ['x'], 3]) {
      const e = refusal(await host.executeTool(name, params))
      assert.equal(e, `${name} ${shapes[name]}: params must be a JSON object of this shape (got ${params === undefined ? 'undefined' : JSON.stringify(params)})`)
    }
  }
  // nothing ran
  assert.deepEqual(nc.listBackgroundCommands(host), [])
  assert.deepEqual(nc.sessionCommandCounts(host.sessionId!), { running: 0, finished: 0 })
})

test('a bad stream or page of a real command is refused in-band', async () => {
  const { host } = commandHost([SH])
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'echo hi'] }))
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ taskId: run.taskId, stream: 'stdin' }, /stream must be "stdout" or "stderr"/],
    [{ taskId: run.taskId, offset: 'start' }, /^command_output .*: offset must be a character offset/],
    [{ taskId: run.taskId, limit: {} }, /: limit must be a number of characters/],
  ]
  for (const [params, want] of bad) {
    const e = refusal(await host.executeTool('command_output', params))
    assert.match(e, want)
    assert.ok(e.includes(OUTPUT_SHAPE), e)
  }
  const e = refusal(await host.executeTool('command_status', { taskId: run.taskId, waitMs: 'a while' }))
  assert.match(e, /: waitMs must be a number of milliseconds/)
  assert.match(refusal(await host.executeTool('command_status', { taskId: run.taskId, waitMs: -1 })), /: waitMs must be/)
  assert.ok(e.includes(STATUS_SHAPE), e)
  const other = refusal(await host.executeTool('command_status', { taskId: 'c9nothere000000' }))
  assert.match(other, /No background command "c9nothere000000"/)
  assert.ok(other.includes(run.taskId), `the refusal lists this host's task ids: ${other}`)
})

test('run_command_bg starts in-band; command_status with waitMs returns the settled state with finished 0', async () => {
  const { host } = commandHost([SH])
  const session = host.sessionId!
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'echo started; echo oops >&2; exit 3'] }))
  assert.match(run.taskId, /^c\d+[0-9a-f]{12}$/)
  assert.deepEqual(run.argv, [SH, '-c', 'echo started; echo oops >&2; exit 3'])
  assert.equal(typeof run.startedAt, 'number')
  assert.ok(Math.abs(run.startedAt - Date.now()) < 10_000)
  assert.equal(run.running + run.finished, 1, `the new command is counted: ${JSON.stringify(run)}`)

  const st = ok<StatusResult>(await host.executeTool('command_status', { taskId: run.taskId, waitMs: 20_000 }))
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 3)
  assert.equal(st.error, undefined, 'a non-zero exit is data, not an error')
  assert.equal(st.running, 0)
  assert.equal(st.finished, 0, 'the status just read marks it looked at')
  assert.equal(st.stdoutBytes, 'started\n'.length)
  assert.equal(st.stderrBytes, 'oops\n'.length)
  assert.match(st.tailPreview, /^\[stdout tail\]\nstarted\n+\[stderr tail\]\noops\n$/)
  // banked through the host's bankArtifact, readable through its store
  assert.ok(st.stdout && st.stderr)
  assert.equal(host.readArtifact(st.stdout.artifactId), 'started\n')
  assert.equal(host.readArtifact(st.stderr.artifactId), 'oops\n')
  assert.match(st.stdout.readBackHint, /retrieve_context/)
  const call = host.bankCalls.find((c) => c.options.label.endsWith('[stdout]'))
  assert.ok(call)
  assert.deepEqual(call.options, {
    kind: 'command-output',
    label: `${st.label} [stdout]`,
    sessionId: session,
    previewChars: 600,
  })
  assert.deepEqual(nc.sessionCommandCounts(session), { running: 0, finished: 0 })
})

test('command_status with a short waitMs returns the live state of a running command', async () => {
  const { host, root } = commandHost([SH])
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: gated('gate') }))
  const t0 = Date.now()
  const st = ok<StatusResult>(await host.executeTool('command_status', { taskId: run.taskId, waitMs: 50 }))
  assert.ok(Date.now() - t0 < 5000)
  assert.ok(st.state === 'running' || st.state === 'queued', st.state)
  assert.equal(st.stdout, undefined)
  assert.equal(st.running, 1)
  // null means "not given" (as models send it): a plain status, not an unbounded wait
  const t1 = Date.now()
  const nul = ok<StatusResult>(await host.executeTool('command_status', { taskId: run.taskId, waitMs: null }))
  assert.ok(nul.state === 'running' || nul.state === 'queued', nul.state)
  assert.ok(Date.now() - t1 < 2000)
  const page = ok<nc.BackgroundCommandOutputPage>(await host.executeTool('command_output', { taskId: run.taskId, stream: null, offset: null, limit: null }))
  assert.deepEqual([page.stream, page.offset, page.limit], ['stdout', 0, 50000])
  writeFileSync(join(root, 'gate'), '')
  const done = ok<StatusResult>(await host.executeTool('command_status', { taskId: run.taskId, waitMs: 20_000 }))
  assert.equal(done.state, 'exited')
  assert.deepEqual([done.running, done.finished], [0, 0])
})

test('identical command_status calls return the live state, never a cached one', async () => {
  const { host, root } = commandHost([SH])
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: gated('go') }))
  const params = { taskId: run.taskId }
  const first = ok<StatusResult>(
    await waitFor(
      async () => {
        const s = ok<StatusResult>(await host.executeTool('command_status', params))
        return s.stdoutBytes === 4 ? s : undefined
      },
      10_000,
      'the first line',
    ),
  )
  assert.equal(first.state, 'running')
  assert.equal(first.tailPreview, '[stdout tail]\none\n')
  assert.deepEqual([first.running, first.finished], [1, 0])
  const again = ok<StatusResult>(await host.executeTool('command_status', params))
  assert.equal(again.state, 'running')
  assert.ok(again.durationMs >= first.durationMs)

  writeFileSync(join(root, 'go'), '')
  const last = ok<StatusResult>(
    await waitFor(
      async () => {
        const s = ok<StatusResult>(await host.executeTool('command_status', params))
        return s.state === 'exited' ? s : undefined
      },
      10_000,
      'the command to exit',
    ),
  )
  assert.equal(last.stdoutBytes, 8)
  assert.equal(last.tailPreview, '[stdout tail]\none\ntwo\n')
  assert.equal(last.exitCode, 0)
  assert.deepEqual([last.running, last.finished], [0, 0])
  // still answered fresh after settling: same state, new object
  const after = ok<StatusResult>(await host.executeTool('command_status', params))
  assert.notEqual(after, last)
  assert.deepEqual(after, last)
})

test('paging through command_output equals paging through readBackgroundCommandOutput', async () => {
  const { host, root } = commandHost(['/bin/cat'])
  // ASCII, 2-byte, 3-byte and 4-byte (surrogate pair) characters, so pages cut pairs
  const unit = 'line 😀 café — ✓ '
  let text = ''
  for (let i = 0; text.length < 120_000; i++) text += `${i} ${unit}\n`
  writeFileSync(join(root, 'big.txt'), text)
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: ['/bin/cat', 'big.txt'] }))
  const st = await nc.awaitBackgroundCommand(host, run.taskId)
  assert.equal(st.state, 'exited')

  // a page size that ends the first page between the halves of a surrogate pair
  const limit = text.indexOf('\u{1F600}', 7000) + 1
  assert.ok(/[\uD800-\uDBFF]$/.test(text.slice(0, limit)))
  let viaTool = ''
  let viaApi = ''
  let pages = 0
  let cutPairs = 0
  for (let offset = 0; ; offset += limit) {
    const a = ok<nc.BackgroundCommandOutputPage>(await host.executeTool('command_output', { taskId: run.taskId, stream: 'stdout', offset, limit }))
    const b = await nc.readBackgroundCommandOutput(host, run.taskId, { stream: 'stdout', offset, limit })
    assert.deepEqual(a, b, `page at ${offset}`)
    assert.equal(a.totalSize, text.length)
    assert.equal(a.content, text.slice(offset, offset + limit))
    if (/[\uD800-\uDBFF]$/.test(a.content)) cutPairs++
    viaTool += a.content
    viaApi += b.content
    pages++
    if (!a.hasMore) break
  }
  assert.equal(pages, Math.ceil(text.length / limit))
  assert.ok(cutPairs > 0, 'some page boundary fell inside a surrogate pair')
  assert.equal(viaTool, text)
  assert.equal(viaApi, text)
  // defaults: stdout, offset 0, limit 50000
  const d = ok<nc.BackgroundCommandOutputPage>(await host.executeTool('command_output', { taskId: run.taskId }))
  assert.deepEqual(d, await nc.readBackgroundCommandOutput(host, run.taskId, { stream: 'stdout' }))
  assert.deepEqual([d.stream, d.offset, d.limit, d.hasMore], ['stdout', 0, 50000, true])
  const e = ok<nc.BackgroundCommandOutputPage>(await host.executeTool('command_output', { taskId: run.taskId, stream: 'stderr' }))
  assert.deepEqual([e.content, e.totalSize, e.hasMore], ['', 0, false])
})

test("a model's timeoutMs narrows the policy budget", async () => {
  const { host } = commandHost([SH], { defaultTimeoutMs: 60_000, killGraceMs: 200 })
  const t0 = Date.now()
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'sleep 30'], timeoutMs: 300 }))
  const st = ok<StatusResult>(await host.executeTool('command_status', { taskId: run.taskId, waitMs: 20_000 }))
  assert.equal(st.state, 'timeout')
  assert.match(st.error ?? '', /\b300ms budget/)
  assert.ok(Date.now() - t0 < 10_000, 'ended by the narrowed budget, not the policy one')
})

test("a model's timeoutMs never widens the policy budget", async () => {
  const { host } = commandHost([SH], { defaultTimeoutMs: 300, killGraceMs: 200 })
  const t0 = Date.now()
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'sleep 30'], timeoutMs: 3_600_000 }))
  const st = ok<StatusResult>(await host.executeTool('command_status', { taskId: run.taskId, waitMs: 20_000 }))
  assert.equal(st.state, 'timeout')
  assert.match(st.error ?? '', /\b300ms budget/)
  assert.doesNotMatch(st.error ?? '', /3600000/)
  assert.ok(Date.now() - t0 < 10_000)
})

test('cwd defaults to cwdRoot; a relative cwd resolves under it', async () => {
  const { host, root } = commandHost(['/bin/pwd'])
  mkdirSync(join(root, 'sub'))
  const a = ok<RunResult>(await host.executeTool('run_command_bg', { argv: ['/bin/pwd'] }))
  const b = ok<RunResult>(await host.executeTool('run_command_bg', { argv: ['/bin/pwd'], cwd: 'sub' }))
  const c = ok<RunResult>(await host.executeTool('run_command_bg', { argv: ['/bin/pwd'], cwd: null }))
  for (const [r, want] of [
    [a, root],
    [b, join(root, 'sub')],
    [c, root],
  ] as const) {
    const st = await nc.awaitBackgroundCommand(host, r.taskId)
    assert.equal(st.exitCode, 0)
    const out = await nc.readBackgroundCommandOutput(host, r.taskId, { stream: 'stdout' })
    assert.equal(out.content, `${want}\n`)
  }
  assert.deepEqual(
    nc.listBackgroundCommands(host).map((e) => e.cwd),
    [root, join(root, 'sub'), root],
  )
})

test('checklist counters: running 1 → finished 1 once it ends → finished 0 once read; another session sees 0', async () => {
  const { host, root } = commandHost([SH], {}, undefined)
  const mine = { sessionId: freshSession('checklist') }
  const other = { sessionId: freshSession('other') }
  const list = async (ctx: { sessionId: string }) => ok<ChecklistList>(await host.executeTool('checklist', { action: 'list' }, ctx))
  await host.executeTool('checklist', { action: 'add', text: 'run the build' }, mine)

  assert.deepEqual(await list(mine), { items: [{ text: 'run the build', done: false }], commandsRunning: 0, commandsFinished: 0 })
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: gated('release') }, mine))
  assert.deepEqual([run.running, run.finished], [1, 0])
  const l1 = await list(mine)
  assert.deepEqual([l1.commandsRunning, l1.commandsFinished], [1, 0])
  const o1 = await list(other)
  assert.deepEqual([o1.commandsRunning, o1.commandsFinished], [0, 0])

  writeFileSync(join(root, 'release'), '')
  // the checklist reading the counters does not count as looking at the command
  const l2 = await waitFor(
    async () => {
      const l = await list(mine)
      return l.commandsFinished === 1 ? l : undefined
    },
    10_000,
    'the command to finish',
  )
  assert.equal(l2.commandsRunning, 0)
  const l2b = await list(mine)
  assert.deepEqual([l2b.commandsRunning, l2b.commandsFinished], [0, 1])
  const o2 = await list(other)
  assert.deepEqual([o2.commandsRunning, o2.commandsFinished], [0, 0])

  const st = ok<StatusResult>(await host.executeTool('command_status', { taskId: run.taskId }, mine))
  assert.equal(st.state, 'exited')
  assert.deepEqual([st.running, st.finished], [0, 0])
  await host.executeTool('checklist', { action: 'done', text: 'run the build' }, mine)
  assert.deepEqual(await list(mine), { items: [{ text: 'run the build', done: true }], commandsRunning: 0, commandsFinished: 0 })
  assert.deepEqual(await list(other), { items: [], commandsRunning: 0, commandsFinished: 0 })
})

test('command_kill stops a command in-band and returns the settled status with counters', async () => {
  const { host } = commandHost([SH], { killGraceMs: 200 })
  const run = ok<RunResult>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'echo up; sleep 30'] }))
  await waitFor(() => nc.getBackgroundCommandStatus(host, run.taskId).stdoutBytes === 3, 10_000, 'output')
  const st = ok<StatusResult>(await host.executeTool('command_kill', { taskId: run.taskId }))
  assert.equal(st.state, 'killed')
  assert.equal(st.signal, 'SIGTERM')
  assert.match(st.error ?? '', /SIGTERM/)
  assert.deepEqual([st.running, st.finished], [0, 0])
  assert.equal(host.readArtifact(st.stdout!.artifactId), 'up\n')
  const again = ok<StatusResult>(await host.executeTool('command_kill', { taskId: run.taskId }))
  assert.equal(again.state, 'killed')
  assert.equal(again.stdout!.artifactId, st.stdout!.artifactId)
})

test('session resolution: execution context → host getToolContext() → one default per host', async () => {
  const root = tempRoot('nlc-tools-')
  const policy = { allowedExecutables: [SH], cwdRoot: root }
  const ctxSession = freshSession('ctx')
  const execSession = freshSession('exec')
  const host = new ReferenceHost(ctxSession)
  host.registerBackgroundCommandTools(policy)
  const argv = [SH, '-c', 'echo x']

  // 1. the execution context wins
  const a = ok<RunResult>(await host.executeTool('run_command_bg', { argv }, { sessionId: execSession }))
  // 2. else the host's getToolContext()
  const b = ok<RunResult>(await host.executeTool('run_command_bg', { argv }))
  // an empty execution-context session is no session
  const c = ok<RunResult>(await host.executeTool('run_command_bg', { argv }, { sessionId: '' }))
  await Promise.all([a, b, c].map((r) => nc.awaitBackgroundCommand(host, r.taskId)))
  const ids = (s: string) => nc.listBackgroundCommands(host, { sessionId: s }).map((e) => e.taskId)
  assert.deepEqual(ids(execSession), [a.taskId])
  assert.deepEqual(ids(ctxSession), [b.taskId, c.taskId])
  // awaiting marked them looked at; the counters per session agree
  assert.deepEqual(nc.sessionCommandCounts(execSession), { running: 0, finished: 0 })

  // counters in a result are the resolved session's
  const d = ok<RunResult>(await host.executeTool('run_command_bg', { argv: gated('never') }, { sessionId: execSession }))
  assert.deepEqual([d.running, d.finished], [1, 0])
  const sd = ok<StatusResult>(await host.executeTool('command_status', { taskId: d.taskId }))
  assert.deepEqual([sd.running, sd.finished], [0, 0], 'the host session has nothing running')
  const se = ok<StatusResult>(await host.executeTool('command_status', { taskId: d.taskId }, { sessionId: execSession }))
  assert.deepEqual([se.running, se.finished], [1, 0])
  await host.executeTool('command_kill', { taskId: d.taskId })

  // 3. no session anywhere: one default session per host
  const anon1 = new ReferenceHost(undefined)
  const anon2 = new ReferenceHost(undefined)
  anon1.registerBackgroundCommandTools(policy)
  anon2.registerBackgroundCommandTools(policy)
  const e = ok<RunResult>(await anon1.executeTool('run_command_bg', { argv: gated('never2') }))
  assert.deepEqual([e.running, e.finished], [1, 0])
  assert.deepEqual(nc.backgroundCommandCounts(anon1), { running: 1, finished: 0 })
  assert.deepEqual(nc.backgroundCommandCounts(anon2), { running: 0, finished: 0 })
  const f = ok<RunResult>(await anon2.executeTool('run_command_bg', { argv: gated('never2') }))
  assert.deepEqual([f.running, f.finished], [1, 0], "anon2's default session is not anon1's")
  const sessions = [anon1, anon2].map((h) => nc.listBackgroundCommands(h).length)
  assert.deepEqual(sessions, [1, 1])
  const s1 = ok<StatusResult>(await anon1.executeTool('command_kill', { taskId: e.taskId }))
  assert.deepEqual([s1.running, s1.finished], [0, 0])
  const s2 = ok<StatusResult>(await anon2.executeTool('command_kill', { taskId: f.taskId }))
  assert.deepEqual([s2.running, s2.finished], [0, 0])
  // a host's task ids are its own
  assert.match(refusal(await anon2.executeTool('command_status', { taskId: e.taskId })), /No background command/)
})

test('inputSchema is a plain JSON Schema object for all ten tools', async () => {
  const root = tempRoot('nlc-tools-')
  const host = new ReferenceHost(freshSession('schema'))
  const commandTools = nc.createBackgroundCommandTools(host)
  nc.configureGitTools(host, { repoRoot: root })
  const gitTools = nc.createGitTools(host)
  const all = { ...commandTools, ...gitTools }
  assert.deepEqual(Object.keys(commandTools), ['run_command_bg', 'command_status', 'command_output', 'command_kill'])
  assert.deepEqual(Object.keys(gitTools).sort(), ['git_blame', 'git_diff', 'git_log', 'git_ls_files', 'git_merge_base', 'git_show'])
  const isPlain = (v: unknown, path: string): void => {
    if (v === null || typeof v !== 'object') {
      assert.ok(['string', 'number', 'boolean'].includes(typeof v), `${path} is ${typeof v}`)
      return
    }
    const proto = Object.getPrototypeOf(v)
    assert.ok(proto === Object.prototype || proto === Array.prototype, `${path} is a plain object or array`)
    for (const [k, x] of Object.entries(v)) isPlain(x, `${path}.${k}`)
  }
  for (const [key, t] of Object.entries(all)) {
    assert.equal(t.name, key)
    assert.equal(typeof t.description, 'string')
    assert.ok(t.description.length > 40, `${key} has a description written for a model`)
    assert.equal(typeof t.execute, 'function')
    const s = t.inputSchema
    isPlain(s, `${key}.inputSchema`)
    assert.deepEqual(JSON.parse(JSON.stringify(s)), s, `${key}: JSON round-trip`)
    assert.equal(s.type, 'object')
    assert.equal(s.additionalProperties, false)
    assert.ok(s.properties && typeof s.properties === 'object')
    assert.ok(Array.isArray(s.required))
    for (const r of s.required!) assert.ok(r in s.properties!, `${key}: required ${r} is a property`)
    for (const [p, ps] of Object.entries(s.properties!)) {
      assert.ok(['string', 'number', 'integer', 'boolean', 'array', 'object'].includes(ps.type ?? ''), `${key}.${p} has a JSON Schema type`)
    }
  }
  assert.deepEqual(commandTools.run_command_bg.inputSchema.required, ['argv'])
  assert.deepEqual(commandTools.run_command_bg.inputSchema.properties!.argv, {
    ...commandTools.run_command_bg.inputSchema.properties!.argv,
    type: 'array',
    items: { type: 'string' },
  })
  for (const name of ['command_status', 'command_kill'] as const) {
    assert.deepEqual(commandTools[name].inputSchema.required, ['taskId'])
  }
  // command_output takes a taskId or an artifactId (exactly one): a rule its
  // description states and its runtime checks, not its schema's top level.
  for (const [key, t] of Object.entries(all)) {
    assert.deepEqual(Object.keys(t.inputSchema), ['type', 'properties', 'required', 'additionalProperties'], `${key}: nothing else at the top`)
  }
  assert.match(commandTools.command_output.description, /Give taskId or artifactId, exactly one of them; stream goes with taskId only/)
  assert.match(commandTools.run_command_bg.description, /NO shell/)
  assert.match(commandTools.command_status.description, /tail/)
  assert.deepEqual(gitTools.git_show.inputSchema.required, ['ref'])
  assert.deepEqual(gitTools.git_blame.inputSchema.required, ['path'])
  assert.deepEqual([...gitTools.git_merge_base.inputSchema.required!].sort(), ['base', 'head'])
  // the registry hands them out unchanged
  host.registerGitToolsOnly()
  assert.deepEqual(host.tool('git_log').inputSchema, gitTools.git_log.inputSchema)
})
