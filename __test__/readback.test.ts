// Every hint a tool result carries names a call the model
// can make with its tools. A "model" that sees only the JSON of tool results
// reads a ~100 KB git result back page by page, following nothing but the
// readBackHint, and what it gathers equals the exact output of the command.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'

import { hostWith, nc, tempRoot } from './helpers.ts'

const ROOT = tempRoot('nlc-readback-')
after(() => rmSync(ROOT, { recursive: true, force: true }))

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'R',
  GIT_AUTHOR_EMAIL: 'r@example.com',
  GIT_COMMITTER_NAME: 'R',
  GIT_COMMITTER_EMAIL: 'r@example.com',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, ...GIT_ENV } })
}

/** A real repository whose HEAD commit adds ~100 KB of text, multi-byte characters included. */
function bigRepo(): string {
  const repo = join(ROOT, 'repo')
  mkdirSync(repo)
  git(repo, 'init', '-q', '-b', 'main')
  writeFileSync(join(repo, 'README.md'), 'small\n')
  git(repo, 'add', '.')
  git(repo, 'commit', '-q', '-m', 'start')
  const lines: string[] = []
  for (let i = 0; lines.join('\n').length < 100_000; i++) lines.push(`line ${i}: grüße ✓ ${'x'.repeat(i % 40)}`)
  writeFileSync(join(repo, 'big.txt'), lines.join('\n') + '\n')
  git(repo, 'add', '.')
  git(repo, 'commit', '-q', '-m', 'add a big file')
  return repo
}

/** What a model does with a hint: find the one call it names and make it, with the arguments it names. */
function callNamedBy(hint: string): { tool: string; params: { artifactId: string; offset: number; limit: number } } {
  const m = /\b(command_output)\(\{ artifactId: "([^"]+)", offset: (\d+), limit: (\d+) \}\)/.exec(hint)
  assert.ok(m, `the hint names a command_output call: ${hint}`)
  return { tool: m[1]!, params: { artifactId: m[2]!, offset: Number(m[3]), limit: Number(m[4]) } }
}

test('a model pages a 100 KB git result back through command_output alone, following the hint', async () => {
  const repo = bigRepo()
  const host = hostWith(ROOT, ['/bin/sh'])
  nc.configureGitTools(host, { repoRoot: repo })
  const tools: Record<string, { execute(p: unknown): Promise<unknown> }> = { ...nc.createBackgroundCommandTools(host), ...nc.createGitTools(host) }
  // The model's view of a tool: JSON in, JSON out.
  const call = async (name: string, params: unknown): Promise<Record<string, unknown>> => JSON.parse(JSON.stringify(await tools[name]!.execute(params))) as Record<string, unknown>

  const shown = await call('git_show', { ref: 'HEAD' })
  assert.equal(shown.ok, true, JSON.stringify(shown).slice(0, 500))
  assert.equal(typeof shown.commandLine, 'string')
  assert.match(String(shown.commandLine), /^git show .*HEAD$/)
  assert.equal('command' in shown, false, 'the hardened argv is not in what the model sees')
  const hint = String(shown.readBackHint)
  assert.doesNotMatch(hint, /readArtifact|retrieveArtifact/, 'no function the model has no tool for')

  let { tool, params } = callNamedBy(hint)
  let gathered = ''
  let pages = 0
  for (;;) {
    const page = await call(tool, params)
    assert.notEqual(page.isError, true, JSON.stringify(page))
    assert.equal(page.artifactId, params.artifactId)
    assert.equal(page.offset, params.offset)
    gathered += String(page.content)
    pages++
    if (page.hasMore !== true) break
    params = { ...params, offset: params.offset + params.limit }
  }
  // The exact output of the same command, run here directly.
  const exact = execFileSync('git', ['--no-pager', ...String(shown.commandLine).split(' ').slice(1)], {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C', LC_ALL: 'C' },
  })
  assert.ok(Buffer.byteLength(exact) > 100_000, `~100 KB of output (${Buffer.byteLength(exact)} bytes)`)
  assert.equal(pages, Math.ceil(exact.length / 50_000))
  assert.equal(gathered, exact)
  // Paging is exactly retrieveArtifact's.
  const first = await nc.retrieveArtifact(params.artifactId, { offset: 50_000, limit: 1234 })
  const viaTool = await call('command_output', { artifactId: params.artifactId, offset: 50_000, limit: 1234 })
  assert.deepEqual(viaTool, { ...first })

  // A command's refs name the same call.
  const run = await call('run_command_bg', { argv: ['/bin/sh', '-c', 'printf "%s" "banked ✓"; printf e >&2'] })
  const st = await call('command_status', { taskId: run.taskId, waitMs: 20_000 })
  const outRef = st.stdout as { readBackHint: string; artifactId: string }
  const named = callNamedBy(outRef.readBackHint)
  assert.equal(named.params.artifactId, outRef.artifactId)
  const page = await call(named.tool, named.params)
  assert.equal(page.content, 'banked ✓')
  assert.equal(page.hasMore, false)
})

test('command_output reads only artifacts of its own host and refuses mixed or missing ids in-band', async () => {
  const a = hostWith(ROOT, ['/bin/sh'])
  const b = hostWith(ROOT, ['/bin/sh'])
  const h = await nc.startBackgroundCommand(a, ['/bin/sh', '-c', 'printf mine'], { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(a, h.taskId)
  const mine = await nc.createBackgroundCommandTools(a).command_output.execute({ artifactId: st.stdout.artifactId })
  assert.ok(!nc.isToolRefusal(mine) && 'content' in mine && mine.content === 'mine', JSON.stringify(mine))
  const theirs = await nc.createBackgroundCommandTools(b).command_output.execute({ artifactId: st.stdout.artifactId })
  assert.ok(nc.isToolRefusal(theirs), JSON.stringify(theirs))
  assert.equal(theirs.code, 'NLC_UNKNOWN_ARTIFACT')
  assert.match(theirs.error, /^command_output \{ taskId: string.*\| \{ artifactId: string.*\}: No artifact "/)
  const tools = nc.createBackgroundCommandTools(a)
  const both = await tools.command_output.execute({ taskId: h.taskId, artifactId: st.stdout.artifactId })
  assert.ok(nc.isToolRefusal(both) && both.code === 'NLC_INVALID_ARGUMENT' && /taskId or artifactId, not both/.test(both.error))
  const stream = await tools.command_output.execute({ artifactId: st.stdout.artifactId, stream: 'stderr' })
  assert.ok(nc.isToolRefusal(stream) && stream.code === 'NLC_INVALID_ARGUMENT' && /an artifactId names one stream/.test(stream.error))
  const none = await tools.command_output.execute({ offset: 0 })
  assert.ok(nc.isToolRefusal(none) && none.code === 'NLC_INVALID_ARGUMENT' && /taskId or artifactId is required/.test(none.error))
  // Control: the same host reads it by taskId as well.
  const byTask = await tools.command_output.execute({ taskId: h.taskId })
  assert.ok(!nc.isToolRefusal(byTask) && 'content' in byTask && byTask.content === 'mine')
})
