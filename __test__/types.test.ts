// A strict TypeScript host written against the public
// types only — no cast, no non-null assertion — reads every tool's result
// (the four command tools and the six git tools) and a settled status, then
// runs, so the types and the runtime are shown to agree.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { nc, tempRoot } from './helpers.ts'
import { compile, runNode, strictProject } from './strict-project.ts'

const HOST = `
import {
  awaitBackgroundCommand,
  configureGitTools,
  createBackgroundCommandTools,
  createGitTools,
  isToolRefusal,
  killBackgroundCommand,
  setBackgroundCommandPolicy,
  startBackgroundCommand,
} from 'neurolink-commands'
import type { BackgroundCommandStatus, GitToolResult, SettledBackgroundCommandStatus, ToolRefusal } from 'neurolink-commands'

const [root, repoRoot] = process.argv.slice(2)
if (root === undefined || repoRoot === undefined) throw new Error('usage: host <root> <repo>')
const host = {}
setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh', '/bin/cat'], cwdRoot: root, killGraceMs: 500 })
configureGitTools(host, { repoRoot })
const tools = createBackgroundCommandTools(host)
const git = createGitTools(host)
const report: Record<string, unknown> = {}

function fail(r: ToolRefusal): never {
  throw new Error(r.code + ': ' + r.error)
}

// What a model sends is parsed JSON: unknown until the tool checks it.
const fromModel: unknown = JSON.parse('{"argv":["/bin/sh","-c","printf out; printf err >&2"]}')
const started = await tools.run_command_bg.execute(fromModel)
if (isToolRefusal(started)) fail(started)
const taskId: string = started.taskId
report.counts = started.running + started.finished >= 0

const status = await tools.command_status.execute({ taskId, waitMs: 20000 })
if (isToolRefusal(status)) fail(status)
if (status.state === 'queued' || status.state === 'running') throw new Error('not settled in 20 s')
// Settled: both refs are there, no assertion needed.
report.status = { state: status.state, exitCode: status.exitCode, stdoutBytes: status.stdout.sizeBytes, stderrBytes: status.stderr.sizeBytes }

const byTask = await tools.command_output.execute({ taskId, stream: 'stderr' })
if (isToolRefusal(byTask)) fail(byTask)
report.byTask = 'content' in byTask ? byTask.content : 'a search'
const byArtifact = await tools.command_output.execute({ artifactId: status.stdout.artifactId, offset: 1, limit: 2 })
if (isToolRefusal(byArtifact)) fail(byArtifact)
report.byArtifact = 'artifactId' in byArtifact ? [byArtifact.artifactId === status.stdout.artifactId, byArtifact.content, byArtifact.hasMore] : 'a stream page'

const tail = await tools.command_output.execute({ taskId, tail: 2 })
if (isToolRefusal(tail)) fail(tail)
report.tail = 'content' in tail ? [tail.content, tail.offset] : 'a search'
const grep = await tools.command_output.execute({ taskId, grep: 'ou' })
if (isToolRefusal(grep)) fail(grep)
report.grep = 'matches' in grep ? grep.matches.map((m) => [m.line, m.offset, m.text]) : 'a page'

// The extra tools exist (and are typed) exactly when options.extra names them.
const more = createBackgroundCommandTools(host, { extra: ['command_input', 'command_list'] })
const cat = await more.run_command_bg.execute({ argv: ['/bin/cat'], stdin: true })
if (isToolRefusal(cat)) fail(cat)
const wrote = await more.command_input.execute({ taskId: cat.taskId, text: 'hi', keys: ['enter'], end: true })
if (isToolRefusal(wrote)) fail(wrote)
const waited = await more.command_status.execute({ taskId: cat.taskId, waitMs: 20000, waitFor: 'hi' })
if (isToolRefusal(waited)) fail(waited)
const listed = await more.command_list.execute({})
if (isToolRefusal(listed)) fail(listed)
report.extra = [wrote.bytesWritten, wrote.stdinOpen, waited.waitMatched, waited.waitLine, listed.commands.some((c) => c.taskId === cat.taskId && c.argv[0] === '/bin/cat')]

const sleeper = await tools.run_command_bg.execute({ argv: ['/bin/sh', '-c', 'exec sleep 30'] })
if (isToolRefusal(sleeper)) fail(sleeper)
const killed = await tools.command_kill.execute({ taskId: sleeper.taskId })
if (isToolRefusal(killed)) fail(killed)
const signal: NodeJS.Signals | undefined = killed.signal
report.killed = { state: killed.state, signal, refs: killed.stdout.artifactId.length > 0 && killed.stderr.artifactId.length > 0 }

// A refusal is in-band and typed: its code is one of the declared codes.
const refused = await tools.run_command_bg.execute({ argv: ['/bin/sh'], shell: true })
report.refused = isToolRefusal(refused) ? refused.code : 'started'

// The host API: a settled status from await (no timeout) and from kill.
const h = await startBackgroundCommand(host, ['/bin/sh', '-c', 'printf host'], { cwd: '.' })
const settled: SettledBackgroundCommandStatus = await awaitBackgroundCommand(host, h.taskId)
report.settled = [settled.state, settled.stdout.sizeBytes, settled.stderr.sizeBytes]
const live: BackgroundCommandStatus = await awaitBackgroundCommand(host, h.taskId, { timeoutMs: 1 })
report.narrowed = live.state === 'queued' || live.state === 'running' ? 'live' : live.stdout.label
const k = await startBackgroundCommand(host, ['/bin/sh', '-c', 'exec sleep 30'], { cwd: '.' })
const afterKill = await killBackgroundCommand(host, k.taskId, 'SIGKILL')
report.afterKill = [afterKill.state, afterKill.signal]

// Every git tool, each result read through its own type.
function gitRow(r: GitToolResult | ToolRefusal): string {
  if (isToolRefusal(r)) return 'refused ' + r.code
  return [r.commandLine, r.ok, r.state, r.output.artifactId.length > 0, r.readBackHint.includes(r.output.artifactId)].join(' | ')
}
report.git = [
  gitRow(await git.git_log.execute({ maxCount: 5 })),
  gitRow(await git.git_show.execute({ ref: 'HEAD', nameOnly: true })),
  gitRow(await git.git_diff.execute({ base: 'HEAD~1', head: 'HEAD', stat: true })),
  gitRow(await git.git_blame.execute({ path: 'a.txt', lineStart: 1, lineEnd: 1 })),
  gitRow(await git.git_merge_base.execute({ base: 'HEAD~1', head: 'HEAD' })),
  gitRow(await git.git_ls_files.execute({})),
  gitRow(await git.git_log.execute({ path: '../outside' })),
]
console.log(JSON.stringify(report))
`

/** Things the types must refuse: each line fails to compile, and tsc reports an unused directive if it compiles. */
const MUST_NOT_COMPILE = `
import { createBackgroundCommandTools, createGitTools } from 'neurolink-commands'
import type { BackgroundCommandStatus } from 'neurolink-commands'

export async function checks(host: object, status: BackgroundCommandStatus): Promise<void> {
  const tools = createBackgroundCommandTools(host)
  // @ts-expect-error the tools have known keys, no index signature
  void tools.nope
  // @ts-expect-error command_input exists only when options.extra names it
  void tools.command_input
  // @ts-expect-error command_list too
  void createBackgroundCommandTools(host, { extra: ['command_input'] }).command_list
  void createBackgroundCommandTools(host, { extra: ['command_input'] }).command_input.name
  // @ts-expect-error the git tools too
  void createGitTools(host).git_push
  const r = await tools.run_command_bg.execute({ argv: ['x'] })
  // @ts-expect-error a result must be checked for a refusal first
  void r.taskId
  // @ts-expect-error a live status has no refs: narrow on state first
  void status.stdout.artifactId
  if (status.state === 'exited') {
    // @ts-expect-error signal is a Node signal name, not any string
    const s: 'SIGNOPE' = status.signal
    void s
  }
}
`

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com' } })
}

test('a strict host reads every tool result and a settled status through the public types alone, and runs', async () => {
  assert.ok(!/\sas\s/.test(HOST), 'no cast in the host')
  assert.ok(!/[\w)\]]!(?!=)/.test(HOST), 'no non-null assertion in the host')
  const root = tempRoot('nlc-types-root-')
  const repoRoot = join(root, 'repo')
  mkdirSync(repoRoot)
  git(repoRoot, 'init', '-q', '-b', 'main')
  writeFileSync(join(repoRoot, 'a.txt'), 'one\n')
  git(repoRoot, 'add', '.')
  git(repoRoot, 'commit', '-q', '-m', 'first')
  writeFileSync(join(repoRoot, 'a.txt'), 'one\ntwo\n')
  git(repoRoot, 'commit', '-q', '-am', 'second')

  const dir = strictProject({ 'host.mts': HOST, 'checks.mts': MUST_NOT_COMPILE })
  await compile(dir)
  const out = JSON.parse(await runNode(dir, join('dist', 'host.mjs'), [root, repoRoot])) as Record<string, unknown>
  assert.deepEqual(out, {
    counts: true,
    status: { state: 'exited', exitCode: 0, stdoutBytes: 3, stderrBytes: 3 },
    byTask: 'err',
    tail: ['ut', 1],
    grep: [[1, 0, 'out']],
    extra: [3, false, true, 'hi', true],
    byArtifact: [true, 'ut', false],
    killed: { state: 'killed', signal: 'SIGTERM', refs: true },
    refused: 'NLC_INVALID_ARGUMENT',
    settled: ['exited', 4, 0],
    narrowed: 'sh -c printf host [stdout]',
    afterKill: ['killed', 'SIGKILL'],
    git: [
      'git log --no-color --no-ext-diff --no-textconv --max-count=5 --oneline | true | exited | true | true',
      'git show --no-color --no-ext-diff --no-textconv --name-only HEAD | true | exited | true | true',
      'git diff --no-color --no-ext-diff --no-textconv --stat HEAD~1 HEAD | true | exited | true | true',
      'git blame -L 1,1 -- a.txt | true | exited | true | true',
      'git merge-base HEAD~1 HEAD | true | exited | true | true',
      'git ls-files | true | exited | true | true',
      'refused NLC_INVALID_ARGUMENT',
    ],
  })
  rmSync(root, { recursive: true, force: true })
  rmSync(dir, { recursive: true, force: true })
  void nc
  void readFileSync
})
