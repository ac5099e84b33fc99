// Drop-in parity with NeuroLink on the paths its own suite does not pin:
// the session rule on the generate path (no declared session, synthetic
// `fallback-<ms>` ids, padded ids, setToolContext), forgiving git numbers,
// and registering git before the repository exists.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { nc, tempRoot, waitFor } from './helpers.ts'
import { ReferenceHost } from './reference-host.ts'

const SH = '/bin/sh'

interface Refusal {
  isError: true
  error: string
  code: string
}
function isRefusal(v: unknown): v is Refusal {
  return typeof v === 'object' && v !== null && (v as { isError?: unknown }).isError === true
}
function ok<T>(v: unknown): T {
  assert.ok(!isRefusal(v), `expected a result, got the refusal ${JSON.stringify(v)}`)
  return v as T
}

type TasksList = { sessionId: string; commandsRunning: number; commandsFinished: number }
type Started = { taskId: string; running: number; finished: number }
type StatusResult = nc.BackgroundCommandStatus & { running: number; finished: number }

/** A synthetic id of the shape NeuroLink's tool-context merge invents. */
let fallbackCounter = 0
function fallbackId(): string {
  fallbackCounter += 1
  return `fallback-${Date.now() + fallbackCounter}`
}

function neurolinkHost(): { host: ReferenceHost; root: string } {
  const root = tempRoot('nlc-parity-')
  const host = new ReferenceHost(undefined, { neurolinkSessions: true })
  host.registerBackgroundCommandTools({ allowedExecutables: [SH], cwdRoot: root })
  return { host, root }
}

test('generate path, no declared session: fallback ids land in the checklist session, 1 running then 1 finished', async () => {
  const { host } = neurolinkHost()
  // Each step of a generate call gets a fresh synthetic id, as NeuroLink's merge makes them.
  const started = ok<Started>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'read x < /dev/null; sleep 0.6'] }, { sessionId: fallbackId() }))
  assert.equal(started.running, 1, 'the start result counts the command it started')
  const checklistSession = host.resolveChecklistSessionId(undefined)
  assert.match(checklistSession, /-checklist$/)

  const running = ok<TasksList>(await host.executeTool('tasks_list', {}, { sessionId: fallbackId() }))
  assert.equal(running.sessionId, checklistSession)
  assert.deepEqual([running.commandsRunning, running.commandsFinished], [1, 0])
  // The literal synthetic id holds nothing.
  assert.deepEqual(nc.sessionCommandCounts(`fallback-${Date.now()}`), { running: 0, finished: 0 })

  // Settles without being looked at: the checklist shows it finished.
  const finished = await waitFor(
    async () => {
      const l = ok<TasksList>(await host.executeTool('tasks_list', {}, { sessionId: fallbackId() }))
      return l.commandsRunning === 0 ? l : null
    },
    15_000,
    'the command to settle',
  )
  assert.equal(finished.commandsFinished, 1)
  assert.deepEqual(nc.sessionCommandCounts(checklistSession), { running: 0, finished: 1 })

  // Looking at it through the tools (another fallback id) clears "finished".
  const s = ok<StatusResult>(await host.executeTool('command_status', { taskId: started.taskId }, { sessionId: fallbackId() }))
  assert.equal(s.state, 'exited')
  assert.deepEqual([s.running, s.finished], [0, 0])
})

test('generate path: command_status.running is 1 while a host-started command runs', async () => {
  const { host, root } = neurolinkHost()
  // Host code starts it without a sessionId: the resolver files it in the checklist session.
  const handle = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: root })
  try {
    await waitFor(() => nc.getBackgroundCommandStatus(host, handle.taskId).state === 'running', 10_000, 'the command to run')
    const s = ok<StatusResult>(await host.executeTool('command_status', { taskId: handle.taskId }, { sessionId: fallbackId() }))
    assert.equal(s.state, 'running')
    assert.equal(s.running, 1)
    const l = ok<TasksList>(await host.executeTool('tasks_list', {}, { sessionId: fallbackId() }))
    assert.equal(l.commandsRunning, 1)
    // The host API's counters agree with the checklist.
    assert.deepEqual(nc.backgroundCommandCounts(host), { running: 1, finished: 0 })
  } finally {
    await nc.killBackgroundCommand(host, handle.taskId)
  }
})

test('padded session ids are trimmed: the tools, the host API and the checklist read one session', async () => {
  const { host, root } = neurolinkHost()
  const session = `padded-${process.pid}-${Date.now()}`
  const started = ok<Started>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'sleep 30'] }, { sessionId: `  ${session}\t` }))
  try {
    assert.equal(started.running, 1)
    assert.deepEqual(nc.sessionCommandCounts(session), { running: 1, finished: 0 })
    assert.deepEqual(nc.sessionCommandCounts(`  ${session}\t`), { running: 0, finished: 0 })
    const l = ok<TasksList>(await host.executeTool('tasks_list', {}, { sessionId: ` ${session} ` }))
    assert.deepEqual([l.sessionId, l.commandsRunning], [session, 1])
    // A host-API start with a padded id lands in the same session.
    const h2 = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: root, sessionId: ` ${session}` })
    assert.deepEqual(nc.backgroundCommandCounts(host, `${session}  `), { running: 2, finished: 0 })
    await nc.killBackgroundCommand(host, h2.taskId)
  } finally {
    await nc.killBackgroundCommand(host, started.taskId)
  }
})

test('setToolContext then counts: backgroundCommandCounts(host) without an id honours the declared session', async () => {
  const root = tempRoot('nlc-parity-')
  // Without a resolver the built-in rule applies: the tool context is the second candidate.
  const host = new ReferenceHost(undefined)
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: [SH], cwdRoot: root })
  const declared = `declared-${process.pid}-${Date.now()}`
  host.setToolContext({ sessionId: declared })
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: root })
  try {
    assert.deepEqual(nc.backgroundCommandCounts(host), { running: 1, finished: 0 })
    assert.deepEqual(nc.sessionCommandCounts(declared), { running: 1, finished: 0 })
    // A synthetic or empty id counts as absent: the declared session again.
    assert.deepEqual(nc.backgroundCommandCounts(host, fallbackId()), { running: 1, finished: 0 })
    assert.deepEqual(nc.backgroundCommandCounts(host, '   '), { running: 1, finished: 0 })
    // A real id names its own session.
    assert.deepEqual(nc.backgroundCommandCounts(host, 'some-other-session'), { running: 0, finished: 0 })
    // Changing the tool context moves what "no id" means, not where the command is filed.
    host.setToolContext({ sessionId: `${declared}-next` })
    assert.deepEqual(nc.backgroundCommandCounts(host), { running: 0, finished: 0 })
    assert.deepEqual(nc.sessionCommandCounts(declared), { running: 1, finished: 0 })
  } finally {
    await nc.killBackgroundCommand(host, h.taskId)
  }
})

test('without a resolver, fallback ids fall back to the host session, and tools and counters agree', async () => {
  const root = tempRoot('nlc-parity-')
  const host = new ReferenceHost(undefined)
  host.registerBackgroundCommandTools({ allowedExecutables: [SH], cwdRoot: root })
  const started = ok<Started>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'sleep 30'] }, { sessionId: fallbackId() }))
  try {
    assert.equal(started.running, 1)
    assert.deepEqual(nc.backgroundCommandCounts(host), { running: 1, finished: 0 })
    const s = ok<StatusResult>(await host.executeTool('command_status', { taskId: started.taskId }, { sessionId: '' }))
    assert.equal(s.running, 1)
    assert.equal(nc.listBackgroundCommands(host, { running: true }).length, 1)
  } finally {
    await nc.killBackgroundCommand(host, started.taskId)
  }
})

test('a resolver decides every session of its host; one that throws or answers a non-string falls back to the rule', async () => {
  const root = tempRoot('nlc-parity-')
  const host = new ReferenceHost(undefined)
  host.registerBackgroundCommandTools({ allowedExecutables: [SH], cwdRoot: root })
  const decided = `resolved-${process.pid}-${Date.now()}`
  const seen: unknown[] = []
  nc.setSessionResolver(host, (ctx) => {
    seen.push(ctx)
    return decided
  })
  const ctx = { sessionId: 'the-model-said-this' }
  const started = ok<Started>(await host.executeTool('run_command_bg', { argv: [SH, '-c', 'sleep 30'] }, ctx))
  try {
    assert.ok(seen.includes(ctx), 'the resolver receives the execution context')
    assert.deepEqual(nc.sessionCommandCounts(decided), { running: 1, finished: 0 })
    assert.deepEqual(nc.sessionCommandCounts('the-model-said-this'), { running: 0, finished: 0 })
    assert.deepEqual(nc.backgroundCommandCounts(host), { running: 1, finished: 0 })

    // A throwing resolver: the rule (context, then default) decides.
    host.setToolContext({ sessionId: `${decided}-ctx` })
    nc.setSessionResolver(host, () => {
      throw new Error('resolver broke')
    })
    const h2 = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: root })
    assert.deepEqual(nc.sessionCommandCounts(`${decided}-ctx`), { running: 1, finished: 0 })
    // A resolver answering a non-string: the same.
    nc.setSessionResolver(host, (() => 42) as unknown as () => string)
    assert.deepEqual(nc.backgroundCommandCounts(host), { running: 1, finished: 0 })
    // Removed: the rule again.
    nc.setSessionResolver(host, undefined)
    assert.deepEqual(nc.backgroundCommandCounts(host), { running: 1, finished: 0 })
    await nc.killBackgroundCommand(host, h2.taskId)
  } finally {
    await nc.killBackgroundCommand(host, started.taskId)
  }
  // Not a function: a coded refusal.
  assert.throws(
    () => nc.setSessionResolver(host, 'session-1' as unknown as () => string),
    (e: Error & { code?: string }) => e.code === 'NLC_INVALID_ARGUMENT' && /setSessionResolver expects a function/.test(e.message),
  )
})

// ---------------------------------------------------------------------------
// git: forgiving numbers and a root that does not exist yet

function git(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    input,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  })
}

/** A repository with `n` commits, made in one fast-import stream. */
function repoWithCommits(n: number): string {
  const root = tempRoot('nlc-parity-git-')
  const repo = join(root, 'repo')
  mkdirSync(repo)
  git(repo, ['init', '-q', '-b', 'main'])
  let stream = ''
  for (let i = 1; i <= n; i++) {
    const body = `line ${i}\n`
    const msg = `commit ${i}\n`
    stream +=
      `commit refs/heads/main\nmark :${i}\ncommitter Ada <ada@example.test> ${1700000000 + i} +0000\n` +
      `data ${Buffer.byteLength(msg)}\n${msg}` +
      (i > 1 ? `from :${i - 1}\n` : '') +
      `M 100644 inline file.txt\ndata ${Buffer.byteLength(body)}\n${body}\n`
  }
  git(repo, ['fast-import', '--quiet'], stream)
  git(repo, ['checkout', '-q', 'main'])
  return repo
}

type GitResult = nc.GitToolResult

test('git numbers are forgiving: maxCount 1000 gives 500 commits, 2.7 gives 2, 0 gives 1', async () => {
  const repo = repoWithCommits(510)
  const host = new ReferenceHost(`git-parity-${process.pid}`)
  host.registerGitTools({ repoRoot: repo })
  const count = async (maxCount: number): Promise<number> => {
    const r = ok<GitResult>(await host.executeTool('git_log', { maxCount }))
    assert.equal(r.ok, true)
    return host.readArtifact(r.output.artifactId).split('\n').filter(Boolean).length
  }
  assert.equal(await count(1000), 500)
  assert.equal(await count(2.7), 2)
  assert.equal(await count(0), 1)
  assert.equal(await count(-5), 1)
  // Not a number: still refused, in-band, with the code.
  const bad = await host.executeTool('git_log', { maxCount: '20' })
  assert.ok(isRefusal(bad))
  assert.equal(bad.code, 'NLC_INVALID_ARGUMENT')
  assert.match(bad.error, /maxCount must be a number/)
})

test('git numbers are forgiving: unified 100 → 50 (floored), lineStart 0 → 1; lineStart > lineEnd is still refused', async () => {
  const repo = repoWithCommits(3)
  writeFileSync(join(repo, 'file.txt'), `${Array.from({ length: 120 }, (_, i) => `row ${i + 1}`).join('\n')}\n`)
  const host = new ReferenceHost(`git-parity-${process.pid}`)
  host.registerGitTools({ repoRoot: repo })
  const diff = ok<GitResult>(await host.executeTool('git_diff', { unified: 100 }))
  assert.ok(diff.command.includes('-U50'), diff.command.join(' '))
  const floored = ok<GitResult>(await host.executeTool('git_diff', { unified: 3.9 }))
  assert.ok(floored.command.includes('-U3'), floored.command.join(' '))

  const blame = ok<GitResult>(await host.executeTool('git_blame', { path: 'file.txt', ref: 'HEAD', lineStart: 0, lineEnd: 1 }))
  assert.ok(blame.command.includes('1,1'), blame.command.join(' '))
  assert.equal(blame.ok, true)
  assert.equal(host.readArtifact(blame.output.artifactId).split('\n').filter(Boolean).length, 1)

  const reversed = await host.executeTool('git_blame', { path: 'file.txt', lineStart: 5, lineEnd: 2 })
  assert.ok(isRefusal(reversed))
  assert.equal(reversed.code, 'NLC_INVALID_ARGUMENT')
  assert.match(reversed.error, /lineStart \(5\) must not be greater than lineEnd \(2\)/)
  const notNumber = await host.executeTool('git_blame', { path: 'file.txt', lineStart: 'one' })
  assert.ok(isRefusal(notNumber))
  assert.match(notNumber.error, /lineStart must be a line number/)
})

test('registering git with a repository root that does not exist yet: each call refuses until it exists, then runs', async () => {
  const base = tempRoot('nlc-parity-late-')
  const repo = join(base, 'checkout')
  const host = new ReferenceHost(`git-parity-${process.pid}`)
  // NeuroLink registers at start-up, before the checkout exists: no throw.
  const settings = host.registerGitTools({ repoRoot: repo })
  assert.equal(settings.repoRoot, repo)

  const refused = await host.executeTool('git_log', {})
  assert.ok(isRefusal(refused))
  assert.equal(refused.code, 'NLC_OUTSIDE_ROOT')
  assert.match(refused.error, /is not an existing directory/)
  assert.ok(refused.error.includes(repo), refused.error)
  await assert.rejects(nc.runGitCommand(host, ['log']), (e: Error & { code?: string }) => {
    return e.code === 'NLC_OUTSIDE_ROOT' && /is not an existing directory/.test(e.message)
  })

  // The checkout appears: the same registration now answers.
  mkdirSync(repo)
  git(repo, ['init', '-q', '-b', 'main'])
  writeFileSync(join(repo, 'a.txt'), 'a\n')
  git(repo, ['add', 'a.txt'])
  git(repo, ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.test', 'commit', '-q', '-m', 'first'])
  const r = ok<GitResult>(await host.executeTool('git_ls_files', {}))
  assert.equal(r.ok, true)
  assert.equal(host.readArtifact(r.output.artifactId), 'a.txt\n')
  const log = ok<GitResult>(await host.executeTool('git_log', {}))
  assert.match(host.readArtifact(log.output.artifactId), /first/)

  // What is there but is not a directory is still refused when configuring.
  assert.throws(
    () => nc.configureGitTools({}, { repoRoot: join(repo, 'a.txt') }),
    (e: Error & { code?: string }) => e.code === 'NLC_INVALID_ARGUMENT' && /repoRoot/.test(e.message),
  )
})
