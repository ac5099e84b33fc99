// The read-only git toolset (SPEC §5) against real repositories built here:
// real answers, banking, values-never-flags, the repository sandbox, a
// repository whose configuration names a program for every hook git has,
// the replaced environment and the exact result fields.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { nc, tempRoot } from './helpers.ts'
import { ReferenceHost } from './reference-host.ts'

const SH = '/bin/sh'
const GIT_TOOL_NAMES = ['git_log', 'git_show', 'git_diff', 'git_blame', 'git_merge_base', 'git_ls_files']
const PREFIX = ['--no-pager', '-c', 'color.ui=false', '-c', 'diff.external=', '-c', 'core.fsmonitor=false']

type Refusal = { isError: true; error: string }

function isRefusal(v: unknown): v is Refusal {
  return typeof v === 'object' && v !== null && (v as Refusal).isError === true
}

function refusal(v: unknown): string {
  assert.ok(isRefusal(v), `expected { isError: true, error }, got ${JSON.stringify(v)}`)
  assert.equal(typeof v.error, 'string')
  return v.error
}

function result(v: unknown): nc.GitToolResult {
  assert.ok(!isRefusal(v), `expected a git result, got the refusal ${JSON.stringify(v)}`)
  return v as nc.GitToolResult
}

let sessionCounter = 0
function freshSession(): string {
  sessionCounter += 1
  return `git-test-${process.pid}-${sessionCounter}`
}

// ---------------------------------------------------------------------------
// Fixture

interface Fixture {
  root: string
  repo: string
  first: string
  second: string
  feature: string
}

/** The environment the test's own git commands run in: no system or user configuration. */
function fixtureEnv(root: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    LANG: 'C',
    LC_ALL: 'C',
    ...extra,
  }
}

/** The environment SPEC §5 says the tools run git in. */
function toolEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
  }
  if (process.env.PATH !== undefined) env.PATH = process.env.PATH
  if (process.env.HOME !== undefined) env.HOME = process.env.HOME
  return env
}

function git(fx: { root: string; repo: string }, args: string[], extra: Record<string, string> = {}): string {
  return execFileSync('git', args, { cwd: fx.repo, env: fixtureEnv(fx.root, extra), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

function write(path: string, content: string): void {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, content)
}

/**
 * A repository with two commits on main (Ada's layout, then Bea's change
 * that grows src/lib.txt and deletes legacy/old.txt) and one commit on
 * `feature`, branched from the first.
 */
function buildRepo(prefix = 'nlc-git-'): Fixture {
  const root = tempRoot(prefix)
  const repo = join(root, 'repo')
  mkdirSync(repo)
  const fx = { root, repo }
  git(fx, ['init', '-q', '-b', 'main'])
  git(fx, ['config', 'user.name', 'Ada Tester'])
  git(fx, ['config', 'user.email', 'ada@example.test'])
  git(fx, ['config', 'commit.gpgsign', 'false'])
  write(join(repo, 'README.md'), '# Fixture\n\nA repository built by git.test.ts.\n')
  write(join(repo, 'src/lib.txt'), 'one\ntwo\n')
  write(join(repo, 'src/fifteen-chars.x'), 'x\n')
  write(join(repo, 'legacy/old.txt'), 'old\n')
  git(fx, ['add', '-A'])
  const date1 = { GIT_AUTHOR_DATE: '2024-01-01T10:00:00Z', GIT_COMMITTER_DATE: '2024-01-01T10:00:00Z' }
  git(fx, ['commit', '-q', '-m', 'first: initial layout'], date1)
  write(join(repo, 'src/lib.txt'), 'one\ntwo\nthree\n')
  rmSync(join(repo, 'legacy'), { recursive: true })
  git(fx, ['add', '-A'])
  git(fx, ['commit', '-q', '-m', 'second: grow lib, drop legacy'], {
    GIT_AUTHOR_NAME: 'Bea Second',
    GIT_AUTHOR_EMAIL: 'bea@example.test',
    GIT_AUTHOR_DATE: '2024-01-02T10:00:00Z',
    GIT_COMMITTER_DATE: '2024-01-02T10:00:00Z',
  })
  const first = git(fx, ['rev-parse', 'HEAD~1']).trim()
  const second = git(fx, ['rev-parse', 'HEAD']).trim()
  git(fx, ['checkout', '-q', '-b', 'feature', first])
  write(join(repo, 'docs/notes.md'), 'notes on the feature\n')
  git(fx, ['add', '-A'])
  git(fx, ['commit', '-q', '-m', 'feature: notes'], {
    GIT_AUTHOR_DATE: '2024-01-03T10:00:00Z',
    GIT_COMMITTER_DATE: '2024-01-03T10:00:00Z',
  })
  const feature = git(fx, ['rev-parse', 'HEAD']).trim()
  git(fx, ['checkout', '-q', 'main'])
  return { root, repo, first, second, feature }
}

/** A reference host with the git tools registered for `repo`. */
function gitHost(repo: string, options: Partial<nc.GitToolsetOptions> = {}): ReferenceHost {
  const host = new ReferenceHost(freshSession())
  host.registerGitTools({ repoRoot: repo, ...options })
  return host
}

/** What git prints when the test runs `command` itself, in the tools' environment. */
function rerun(repo: string, command: string[]): string {
  return execFileSync(command[0]!, command.slice(1), { cwd: repo, env: toolEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** Every entry under `dir` (recursively) with its type, size and mtime. */
function snapshot(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name)
      const st = lstatSync(p)
      out.push(`${p} ${st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : 'f'} ${st.size} ${st.mtimeMs}`)
      if (st.isDirectory()) walk(p)
    }
  }
  walk(dir)
  return out
}

// ---------------------------------------------------------------------------

test('the six git tools answer real questions about the fixture', async () => {
  const fx = buildRepo()
  const host = gitHost(fx.repo, { previewChars: 4000 })
  const run = async (name: string, params: Record<string, unknown>) => {
    const r = result(await host.executeTool(name, params))
    assert.equal(r.state, 'exited', `${name}: ${JSON.stringify(r)}`)
    assert.equal(r.ok, true, `${name}: ${r.stderrPreview}`)
    assert.notEqual(r.output.artifactId, '', `${name}: the host banked the output (${r.output.readBackHint})`)
    const full = host.readArtifact(r.output.artifactId)
    // the banked output is exactly what git prints for the argv in `command`
    assert.equal(full, rerun(fx.repo, r.command), `${name}: banked output equals a rerun of its command`)
    return { r, full }
  }

  const ls = await run('git_ls_files', {})
  assert.equal(ls.full, 'README.md\nsrc/fifteen-chars.x\nsrc/lib.txt\n')

  const log = await run('git_log', {})
  const lines = log.full.trimEnd().split('\n')
  assert.equal(lines.length, 2)
  assert.match(lines[0]!, /^[0-9a-f]{7,} second: grow lib, drop legacy$/)
  assert.match(lines[1]!, /^[0-9a-f]{7,} first: initial layout$/)
  assert.ok(fx.second.startsWith(lines[0]!.split(' ')[0]!))
  assert.ok(fx.first.startsWith(lines[1]!.split(' ')[0]!))

  const full = await run('git_log', { format: 'full', maxCount: 1 })
  assert.match(full.full, new RegExp(`^commit ${fx.second}\nAuthor:     Bea Second <bea@example.test>\n`))
  assert.doesNotMatch(full.full, /first: initial layout/)
  const stat = await run('git_log', { format: 'stat', ref: 'feature' })
  assert.match(stat.full, /docs\/notes\.md \| 1 \+/)
  const names = await run('git_log', { format: 'name-only', path: 'src' })
  assert.match(names.full, /second: grow lib, drop legacy\n\nsrc\/lib\.txt\n/)
  const since = await run('git_log', { since: '2024-01-02 00:00 +0000' })
  assert.equal(since.full.trimEnd().split('\n').length, 1)

  const show = await run('git_show', { ref: fx.first })
  assert.match(show.full, new RegExp(`^commit ${fx.first}\n`))
  assert.match(show.full, /Author: Ada Tester <ada@example\.test>/)
  assert.match(show.full, /first: initial layout/)
  assert.match(show.full, /\+\+\+ b\/legacy\/old\.txt/)
  const showNames = await run('git_show', { ref: 'main', nameOnly: true })
  assert.match(showNames.full, /\n\nlegacy\/old\.txt\nsrc\/lib\.txt\n$/)

  const diff = await run('git_diff', { base: fx.first, head: 'main', nameOnly: true })
  assert.equal(diff.full, 'legacy/old.txt\nsrc/lib.txt\n')
  const diffPatch = await run('git_diff', { base: 'HEAD~1', head: 'HEAD', path: 'src/lib.txt', unified: 0 })
  assert.match(diffPatch.full, /\n@@ -2,0 \+3 @@.*\n\+three\n$/)
  const diffStat = await run('git_diff', { base: 'main', head: 'feature', stat: true })
  assert.match(diffStat.full, /3 files changed/)
  const clean = await run('git_diff', {})
  assert.equal(clean.full, '', 'the work tree is clean')

  const mb = await run('git_merge_base', { base: 'main', head: 'feature' })
  assert.equal(mb.full, `${fx.first}\n`)

  const blame = await run('git_blame', { path: 'src/lib.txt' })
  const blameLines = blame.full.trimEnd().split('\n')
  assert.equal(blameLines.length, 3)
  assert.match(blameLines[0]!, /\(Ada Tester +2024-01-01 .* 1\) one$/)
  assert.match(blameLines[1]!, /\(Ada Tester +2024-01-01 .* 2\) two$/)
  assert.match(blameLines[2]!, /\(Bea Second +2024-01-02 .* 3\) three$/)
  const blameRange = await run('git_blame', { path: 'src/lib.txt', ref: fx.first, lineStart: 2 })
  assert.equal(blameRange.full.trimEnd().split('\n').length, 1)
  assert.match(blameRange.full, /Ada Tester .* 2\) two\n$/)
  assert.ok(blameRange.r.command.includes('2,101'), 'a lone start spans 100 lines')
})

test('git output is banked in full; the preview is the first previewChars characters plus …', async () => {
  const fx = buildRepo()
  const host = gitHost(fx.repo, { previewChars: 20 })
  const session = freshSession()
  const r = result(await host.executeTool('git_log', { format: 'full' }, { sessionId: session }))
  assert.equal(r.ok, true)
  assert.notEqual(r.output.artifactId, '', `the host banked the output (${r.output.readBackHint})`)
  const full = host.readArtifact(r.output.artifactId)
  assert.ok(full.length > 200)
  assert.equal(full, rerun(fx.repo, r.command))
  assert.equal(r.preview, `${full.slice(0, 20)}…`)
  assert.equal(r.preview.length, 21)
  assert.equal(r.output.sizeBytes, Buffer.byteLength(full))
  assert.equal(r.output.kind, 'command-output')
  assert.equal(r.output.label, 'git log [stdout]')
  assert.equal(r.readBackHint, r.output.readBackHint)
  assert.match(r.readBackHint, /retrieve_context/)
  assert.ok(r.readBackHint.includes(r.output.artifactId))
  // the host was asked to bank it for the caller's session
  const call = host.bankCalls.find((c) => c.options.label === 'git log [stdout]')
  assert.deepEqual(call?.options, { kind: 'command-output', label: 'git log [stdout]', sessionId: session, previewChars: 600 })
  // without an execution context, the host's getToolContext() session
  const viaHost = result(await host.executeTool('git_merge_base', { base: 'main', head: 'feature' }))
  assert.equal(viaHost.ok, true)
  const hostCall = host.bankCalls.find((c) => c.options.label === 'git merge-base [stdout]')
  assert.equal(hostCall?.options.sessionId, host.sessionId)
  // read back the way the model would: retrieve_context pages
  let paged = ''
  for (let offset = 0; ; offset += 64) {
    const page = (await host.executeTool('retrieve_context', { artifactId: r.output.artifactId, offset, limit: 64 })) as {
      content: string
      hasMore: boolean
    }
    paged += page.content
    if (!page.hasMore) break
  }
  assert.equal(paged, full)

  // exactly previewChars characters: no ellipsis
  const exact = result(await host.executeTool('git_ls_files', { path: 'src/fifteen-chars.x' }))
  assert.equal(host.readArtifact(exact.output.artifactId), 'src/fifteen-chars.x\n')
  assert.equal(exact.preview, 'src/fifteen-chars.x\n')
  // shorter: no ellipsis
  const short = result(await host.executeTool('git_ls_files', { path: 'README.md' }))
  assert.equal(short.preview, 'README.md\n')

  // a host without bankArtifact: the built-in bank
  const plain = {}
  nc.configureGitTools(plain, { repoRoot: fx.repo, previewChars: 20 })
  const tools = nc.createGitTools(plain)
  const b = result(await tools.git_log.execute({ format: 'full' }))
  assert.ok(b.output.artifactId.length > 0)
  assert.equal(b.preview, `${full.slice(0, 20)}…`)
  assert.equal(await nc.readArtifact(b.output.artifactId), full)
  assert.ok(b.readBackHint.includes(`"${b.output.artifactId}"`), b.readBackHint)
  assert.match(b.readBackHint, /command_output\(\{ artifactId: "nlc-[^"]+", offset: 0, limit: 50000 \}\)/)
  let builtIn = ''
  for (let offset = 0; ; offset += 100) {
    const page = await nc.retrieveArtifact(b.output.artifactId, { offset, limit: 100 })
    assert.equal(page.totalSize, full.length)
    builtIn += page.content
    if (!page.hasMore) break
  }
  assert.equal(builtIn, full)
  // previewChars is clamped to 1..4000
  assert.equal(nc.configureGitTools({}, { repoRoot: fx.repo, previewChars: 0 }).previewChars, 1)
  assert.equal(nc.configureGitTools({}, { repoRoot: fx.repo, previewChars: 99999 }).previewChars, 4000)
  assert.equal(nc.configureGitTools({}, { repoRoot: fx.repo }).previewChars, 2000)
})

test('values, never flags: option-shaped values are refused and no file is created anywhere', async () => {
  const fx = buildRepo()
  const host = gitHost(fx.repo)
  const out = join(fx.root, 'out')
  mkdirSync(out)
  const before = snapshot(fx.root)
  const cwdBefore = readdirSync(process.cwd())
    .filter((n) => n.includes('pwned'))
    .sort()
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['git_log', { ref: `--output=${out}/pwned-log` }, /ref "--output=.*pwned-log" must not start with "-"/],
    ['git_log', { ref: '--output=pwned-rel' }, /must not start with "-"/],
    ['git_log', { ref: '  --output=pwned-space' }, /must not start with "-"/],
    ['git_show', { ref: `--output=${out}/pwned-show` }, /must not start with "-"/],
    ['git_diff', { base: `--output=${out}/pwned-diff` }, /base .* must not start with "-"/],
    ['git_diff', { base: 'main', head: `--output=${out}/pwned-head` }, /head .* must not start with "-"/],
    ['git_diff', { base: '--output', head: `${out}/pwned-split` }, /base "--output" must not start with "-"/],
    ['git_diff', { base: '--output=', head: 'pwned-split2' }, /must not start with "-"/],
    ['git_merge_base', { base: '--output=pwned-mb', head: 'main' }, /must not start with "-"/],
    ['git_blame', { path: 'src/lib.txt', ref: '--output=pwned-blame' }, /must not start with "-"/],
    ['git_ls_files', { path: '-x' }, /path "-x" must not start with "-"/],
    ['git_ls_files', { path: ' --others' }, /must not start with "-"/],
    ['git_blame', { path: '-L1,2' }, /must not start with "-"/],
    ['git_log', { path: '--output=pwned-path' }, /must not start with "-"/],
    ['git_log', { ref: 'main; rm -rf /' }, /not a valid git revision/],
    ['git_show', { ref: 'main && touch pwned-amp' }, /not a valid git revision/],
    ['git_log', { ref: '$(touch pwned-sub)' }, /not a valid git revision/],
    ['git_log', { since: '$(touch pwned-since)' }, /not a valid date/],
    ['git_diff', { head: 'main' }, /head needs a base/],
    ['git_diff', { head: '--output=pwned-nobase' }, /must not start with "-"|needs a base/],
  ]
  for (const [name, params, want] of cases) {
    const e = refusal(await host.executeTool(name, params))
    assert.match(e, want, `${name} ${JSON.stringify(params)}`)
    assert.ok(e.startsWith(name), `the refusal names the tool: ${e}`)
  }
  // the same values through runGitCommand's own tools API of another host without a bank
  const plainTools = (() => {
    const h = {}
    nc.configureGitTools(h, { repoRoot: fx.repo })
    return nc.createGitTools(h)
  })()
  assert.match(refusal(await plainTools.git_log.execute({ ref: '--output=pwned-plain' })), /must not start with "-"/)

  assert.deepEqual(snapshot(fx.root), before, 'nothing in the repository (or next to it) changed')
  assert.deepEqual(readdirSync(out), [])
  assert.deepEqual(
    readdirSync(process.cwd())
      .filter((n) => n.includes('pwned'))
      .sort(),
    cwdBefore,
  )
  assert.equal(existsSync('/pwned-rel'), false)
})

test('paths must stay inside the repository; a deleted path is a legitimate question', async () => {
  const fx = buildRepo()
  const host = gitHost(fx.repo)
  symlinkSync('/etc', join(fx.repo, 'etc-link'))
  mkdirSync(join(fx.root, 'repo-evil'))
  const outside: [string, Record<string, unknown>][] = [
    ['git_log', { path: '../../etc/passwd' }],
    ['git_log', { path: '/etc/passwd' }],
    ['git_blame', { path: '/etc/passwd' }],
    ['git_blame', { path: '../../etc/passwd' }],
    ['git_show', { ref: 'HEAD', path: '../repo-evil' }],
    ['git_diff', { path: 'src/../../repo-evil/x' }],
    ['git_ls_files', { path: 'etc-link/passwd' }],
    ['git_ls_files', { path: '..' }],
  ]
  for (const [name, params] of outside) {
    const e = refusal(await host.executeTool(name, params))
    assert.match(e, /outside the permitted root/, `${name} ${JSON.stringify(params)}`)
    assert.ok(e.includes(fx.repo), `the refusal names the root: ${e}`)
  }
  // deleted file and deleted directory: asked through the nearest existing ancestor
  const gone = result(await host.executeTool('git_ls_files', { path: 'legacy/old.txt' }))
  assert.equal(gone.ok, true)
  assert.equal(gone.preview, '')
  assert.equal(host.readArtifact(gone.output.artifactId), '')
  assert.deepEqual(gone.command.slice(-3), ['ls-files', '--', 'legacy/old.txt'])
  const history = result(await host.executeTool('git_log', { path: 'legacy/old.txt' }))
  assert.equal(history.ok, true)
  assert.match(history.preview, /second: grow lib, drop legacy\n.*first: initial layout\n$/)
  const never = result(await host.executeTool('git_log', { path: 'no/such/dir/file.txt' }))
  assert.equal(never.ok, true)
  assert.equal(never.preview, '')
  // an absolute path inside the repository is passed repository-relative
  const abs = result(await host.executeTool('git_ls_files', { path: join(fx.repo, 'src') }))
  assert.deepEqual(abs.command.slice(-2), ['--', 'src'])
  assert.equal(abs.preview, 'src/fifteen-chars.x\nsrc/lib.txt\n')
})

// ---------------------------------------------------------------------------
// A repository whose configuration names a program for every hook.

interface Hostile extends Fixture {
  marks: string
  bin: string
  signed: string[]
}

const HOOK_NAMES = ['pre-commit', 'post-checkout', 'post-index-change', 'fsmonitor-watchman', 'reference-transaction', 'post-rewrite']

/** Write an executable script `bin/<name>` that leaves `marks/<name>` behind, then does `body`. */
function hookScript(bin: string, marks: string, name: string, body = 'exit 0'): string {
  const p = join(bin, name)
  writeFileSync(p, `#!/bin/sh\ntouch '${marks}/${name}'\n${body}\n`)
  chmodSync(p, 0o755)
  return p
}

function fakeSignedCommit(fx: Hostile, parent: string, header: string, footer: string, subject: string): string {
  const tree = git(fx, ['rev-parse', `${parent}^{tree}`]).trim()
  const body =
    `tree ${tree}\nparent ${parent}\n` +
    'author Ada Tester <ada@example.test> 1704200000 +0000\n' +
    'committer Ada Tester <ada@example.test> 1704200000 +0000\n' +
    `gpgsig ${header}\n \n QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n ${footer}\n\n${subject}\n`
  return execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
    cwd: fx.repo,
    env: fixtureEnv(fx.root),
    input: body,
    encoding: 'utf8',
  }).trim()
}

function buildHostileRepo(): Hostile {
  const base = buildRepo('nlc-git-hostile-')
  const fx: Hostile = { ...base, marks: join(base.root, 'marks'), bin: join(base.root, 'bin'), signed: [] }
  mkdirSync(fx.marks)
  mkdirSync(fx.bin)
  // files under a diff driver and two filter drivers, committed before any driver exists
  write(join(fx.repo, '.gitattributes'), 'a.txt diff=evil filter=evilclean\nb.txt filter=evilproc\n*.bin diff=evil\n')
  write(join(fx.repo, 'a.txt'), 'alpha\n')
  write(join(fx.repo, 'b.txt'), 'beta\n')
  write(join(fx.repo, 'c.bin'), 'gamma\n')
  git(fx, ['add', '-A'])
  git(fx, ['commit', '-q', '-m', 'third: attributes'], { GIT_AUTHOR_DATE: '2024-01-04T10:00:00Z', GIT_COMMITTER_DATE: '2024-01-04T10:00:00Z' })
  write(join(fx.repo, 'a.txt'), 'alpha\nalpha 2\n')
  write(join(fx.repo, 'c.bin'), 'gamma\ngamma 2\n')
  git(fx, ['add', '-A'])
  git(fx, ['commit', '-q', '-m', 'fourth: grow a and c'], { GIT_AUTHOR_DATE: '2024-01-05T10:00:00Z', GIT_COMMITTER_DATE: '2024-01-05T10:00:00Z' })
  // commits carrying OpenPGP, SSH and X.509 signatures (not valid ones: verifying would start the verifier)
  let head = git(fx, ['rev-parse', 'HEAD']).trim()
  for (const [h, f, s] of [
    ['-----BEGIN PGP SIGNATURE-----', '-----END PGP SIGNATURE-----', 'pgp-signed'],
    ['-----BEGIN SSH SIGNATURE-----', '-----END SSH SIGNATURE-----', 'ssh-signed'],
    ['-----BEGIN SIGNED MESSAGE-----', '-----END SIGNED MESSAGE-----', 'x509-signed'],
  ] as const) {
    head = fakeSignedCommit(fx, head, h, f, s)
    fx.signed.push(head)
  }
  git(fx, ['update-ref', 'refs/heads/main', head])

  // every program-naming key, each pointing at a script that leaves a marker
  const cat = 'cat'
  const pager = hookScript(fx.bin, fx.marks, 'pager', cat)
  const allowedSigners = join(fx.root, 'allowed_signers')
  writeFileSync(allowedSigners, '')
  const hooksDir = join(fx.root, 'hooks')
  mkdirSync(hooksDir)
  const config: [string, string][] = [
    ['core.pager', pager],
    ['diff.external', hookScript(fx.bin, fx.marks, 'diff-external')],
    ['diff.evil.textconv', hookScript(fx.bin, fx.marks, 'textconv', 'cat "$1"')],
    ['diff.evil.command', hookScript(fx.bin, fx.marks, 'diff-driver-command')],
    ['diff.evil.binary', 'false'],
    ['filter.evilclean.clean', hookScript(fx.bin, fx.marks, 'filter-clean', cat)],
    ['filter.evilclean.smudge', hookScript(fx.bin, fx.marks, 'filter-smudge', cat)],
    ['filter.evilclean.required', 'true'],
    ['filter.evilproc.process', hookScript(fx.bin, fx.marks, 'filter-process', 'exit 1')],
    ['filter.evilproc.clean', hookScript(fx.bin, fx.marks, 'filter-proc-clean', cat)],
    ['core.fsmonitor', hookScript(fx.bin, fx.marks, 'fsmonitor')],
    ['core.hooksPath', hooksDir],
    ['log.showSignature', 'true'],
    ['format.pretty', '%H %G? %GS %s'],
    ['gpg.program', hookScript(fx.bin, fx.marks, 'gpg-program')],
    ['gpg.openpgp.program', hookScript(fx.bin, fx.marks, 'gpg-openpgp-program')],
    ['gpg.ssh.program', hookScript(fx.bin, fx.marks, 'gpg-ssh-program')],
    ['gpg.ssh.allowedSignersFile', allowedSigners],
    ['gpg.x509.program', hookScript(fx.bin, fx.marks, 'gpg-x509-program')],
    ['core.sshCommand', hookScript(fx.bin, fx.marks, 'ssh-command')],
    ['core.askPass', hookScript(fx.bin, fx.marks, 'askpass')],
    ['credential.helper', `!${hookScript(fx.bin, fx.marks, 'credential-helper')}`],
    ['diff.submodule', 'diff'],
  ]
  for (const cmd of ['log', 'show', 'diff', 'blame', 'merge-base', 'ls-files']) {
    config.push([`pager.${cmd}`, hookScript(fx.bin, fx.marks, `pager-${cmd}`, cat)])
  }
  for (const [k, v] of config) git(fx, ['config', k, v])
  for (const hook of HOOK_NAMES) {
    // in the configured hooks directory, and in .git/hooks should hooksPath be ignored
    for (const [dir, mark] of [
      [hooksDir, `hooks-path-${hook}`],
      [join(fx.repo, '.git', 'hooks'), `git-hooks-${hook}`],
    ] as const) {
      writeFileSync(join(dir, hook), `#!/bin/sh\ntouch '${fx.marks}/${mark}'\n`)
      chmodSync(join(dir, hook), 0o755)
    }
  }
  // modified tracked files under the filters and the diff driver
  write(join(fx.repo, 'a.txt'), 'alpha\nalpha 2\nalpha 3\n')
  write(join(fx.repo, 'b.txt'), 'beta\nbeta 2\n')
  write(join(fx.repo, 'c.bin'), 'gamma\ngamma 2\ngamma 3\n')
  return fx
}

function marks(fx: Hostile): string[] {
  return readdirSync(fx.marks).sort()
}

function clearMarks(fx: Hostile): void {
  for (const m of readdirSync(fx.marks)) rmSync(join(fx.marks, m))
}

/** Plain git (what an unhardened runner would do), to show the fixture's programs are real. */
function plainGit(fx: Hostile, args: string[]): void {
  try {
    execFileSync('git', args, { cwd: fx.repo, env: fixtureEnv(fx.root), stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 })
  } catch {
    // a program that fails may fail the command; the marker is what counts
  }
}

test('a repository naming programs for every hook: every tool runs, none of the programs ever executes', async () => {
  const fx = buildHostileRepo()

  // Controls: the same repository makes plain git start these programs.
  const controls: [string[], string[]][] = [
    [['diff', 'HEAD~6', 'HEAD~5'], ['diff-external']],
    [
      ['diff', '--no-ext-diff'],
      ['filter-clean', 'filter-process'],
    ],
    [['diff', 'HEAD~4', 'HEAD~3'], ['diff-driver-command']],
    [['blame', '--', 'c.bin'], ['textconv']],
    [['log', '-1', `${fx.signed[0]}`], ['gpg-openpgp-program']],
    [['log', '-1', `${fx.signed[1]}`], ['gpg-ssh-program']],
    [['log', '-1', `${fx.signed[2]}`], ['gpg-x509-program']],
    [['ls-files'], ['fsmonitor']],
  ]
  for (const [args, want] of controls) {
    clearMarks(fx)
    plainGit(fx, args)
    for (const m of want) assert.ok(marks(fx).includes(m), `control: plain git ${args.join(' ')} starts ${m} (saw ${marks(fx)})`)
  }
  // the pager needs a terminal; with one, plain git starts the configured pager
  clearMarks(fx)
  execFileSync('script', ['-qec', 'git --no-replace-objects log -1 --format=%s', '/dev/null'], {
    cwd: fx.repo,
    env: fixtureEnv(fx.root, { TERM: 'dumb' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 20_000,
  })
  assert.ok(
    marks(fx).some((m) => m.startsWith('pager')),
    `control: plain git on a terminal starts the pager (saw ${marks(fx)})`,
  )
  clearMarks(fx)

  const host = gitHost(fx.repo, { previewChars: 4000 })
  const calls: [string, Record<string, unknown>][] = [
    ['git_log', {}],
    ['git_log', { format: 'full' }],
    ['git_log', { format: 'stat' }],
    ['git_log', { format: 'name-only' }],
    ['git_log', { path: 'a.txt', format: 'full' }],
    ['git_log', { ref: fx.signed[1]!, maxCount: 1 }],
    ['git_show', { ref: 'HEAD' }],
    ['git_show', { ref: fx.signed[0]! }],
    ['git_show', { ref: fx.signed[1]! }],
    ['git_show', { ref: 'HEAD~3' }],
    ['git_show', { ref: 'HEAD~3', nameOnly: true }],
    ['git_diff', {}],
    ['git_diff', { stat: true }],
    ['git_diff', { nameOnly: true }],
    ['git_diff', { path: 'a.txt' }],
    ['git_diff', { base: 'HEAD' }],
    ['git_diff', { base: 'HEAD~4', head: 'HEAD' }],
    ['git_diff', { base: 'HEAD~4', head: 'HEAD~3', path: 'c.bin' }],
    ['git_blame', { path: 'b.txt' }],
    ['git_blame', { path: 'a.txt' }],
    ['git_blame', { path: 'src/lib.txt' }],
    ['git_blame', { path: 'c.bin' }],
    ['git_blame', { path: 'c.bin', ref: 'HEAD~3' }],
    ['git_merge_base', { base: 'main', head: 'feature' }],
    ['git_ls_files', {}],
    ['git_ls_files', { path: 'a.txt' }],
  ]
  const answered: string[] = []
  for (const [name, params] of calls) {
    const r = result(await host.executeTool(name, params))
    assert.equal(r.state, 'exited', `${name} ${JSON.stringify(params)} ran to its end`)
    assert.deepEqual(marks(fx), [], `${name} ${JSON.stringify(params)} started ${marks(fx)}; stderr: ${r.stderrPreview}`)
    if (r.ok) answered.push(name)
    else assert.match(r.stderrPreview ?? '', /cannot run|unable to read/, `${name} ${JSON.stringify(params)} failed for another reason`)
  }
  // the tools still answer: everything but blame through a textconv driver
  for (const name of GIT_TOOL_NAMES) assert.ok(answered.includes(name), `${name} answered at least once`)
  // the working-tree diff shows the file as it is (no clean filter, no textconv, no external diff)
  const wt = result(await host.executeTool('git_diff', { path: 'a.txt' }))
  assert.match(host.readArtifact(wt.output.artifactId), /\+alpha 3\n/)
  const binDiff = result(await host.executeTool('git_diff', { base: 'HEAD~4', head: 'HEAD~3', path: 'c.bin' }))
  assert.match(host.readArtifact(binDiff.output.artifactId), /\+gamma 2\n/)
  const signedLog = result(await host.executeTool('git_log', { ref: fx.signed[0]!, maxCount: 1, format: 'full' }))
  assert.doesNotMatch(host.readArtifact(signedLog.output.artifactId), /gpg:|Good signature|No signature/)
  // raw runGitCommand gets the same protection
  for (const args of [['diff'], ['log', '--show-signature', '-1', fx.signed[0]!], ['blame', '--', 'b.txt'], ['status', '--porcelain']]) {
    const r = await nc.runGitCommand(host, args)
    assert.equal(r.state, 'exited')
    assert.deepEqual(marks(fx), [], `runGitCommand ${args.join(' ')} started ${marks(fx)}`)
  }
  assert.deepEqual(marks(fx), [])
})

test('without configureGitTools, runGitCommand rejects naming registerGitTools; the tools refuse in their own terms', async () => {
  const fx = buildRepo()
  const host = new ReferenceHost(freshSession())
  host.registerGitToolsOnly()
  // another host's configuration does not count for this one
  nc.configureGitTools({}, { repoRoot: fx.repo })
  await assert.rejects(nc.runGitCommand(host, ['log']), /registerGitTools/)
  await assert.rejects(nc.runGitCommand(host, ['log']), /configureGitTools/)
  for (const name of GIT_TOOL_NAMES) {
    const e = refusal(await host.executeTool(name, {}))
    assert.match(e, /The git tools are not set up for this host: the host application has not given them a repository yet/, name)
    assert.doesNotMatch(e, /registerGitTools|configureGitTools/, name)
  }
  // bad options are refused when configuring
  // (a root that does not exist yet is accepted: see parity.test.ts; a file is not a root)
  assert.throws(() => nc.configureGitTools(host, { repoRoot: join(fx.repo, 'src/lib.txt') }), /repoRoot/)
  assert.throws(() => nc.configureGitTools(host, { repoRoot: fx.repo, gitExecutable: 'git; rm -rf /' }), /NO shell/)
  await assert.rejects(nc.runGitCommand(host, ['log']), /registerGitTools/)
  // configured, raw args are checked too
  nc.configureGitTools(host, { repoRoot: fx.repo })
  await assert.rejects(nc.runGitCommand(host, 'log' as unknown as string[]), /array of strings/)
  await assert.rejects(nc.runGitCommand(host, ['log', 'a\0b']), /NUL/)
  const r = await nc.runGitCommand(host, ['rev-parse', 'HEAD'])
  assert.equal(host.readArtifact(r.output.artifactId), `${fx.second}\n`)
})

test('registering git never lets run_command_bg run git, and git runs stay out of the host lists', async () => {
  const fx = buildRepo()
  const gitPath = execFileSync(SH, ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
  const session = freshSession()
  const host = new ReferenceHost(session)
  host.registerBackgroundCommandTools({ allowedExecutables: [SH], cwdRoot: fx.repo })
  host.registerGitTools({ repoRoot: fx.repo })
  host.registerGitTools({ repoRoot: fx.repo, gitExecutable: gitPath })
  for (const argv of [
    ['git', 'log'],
    [gitPath, 'log'],
  ]) {
    const e = refusal(await host.executeTool('run_command_bg', { argv }))
    assert.match(e, new RegExp(`Executable "${argv[0]}" is not allowed`))
  }
  await assert.rejects(nc.startBackgroundCommand(host, ['git', 'log'], { cwd: fx.repo }), /is not allowed/)
  assert.deepEqual(nc.getBackgroundCommandPolicy(host)?.allowedExecutables, [SH])

  const r = result(await host.executeTool('git_log', {}))
  assert.equal(r.ok, true)
  assert.equal(r.command[0], gitPath)
  assert.deepEqual(nc.getBackgroundCommandPolicy(host)?.allowedExecutables, [SH])
  assert.deepEqual(nc.listBackgroundCommands(host), [], 'git runs are not listed as host commands')
  assert.deepEqual(nc.sessionCommandCounts(session), { running: 0, finished: 0 })
  assert.deepEqual(nc.backgroundCommandCounts(host), { running: 0, finished: 0 })
  const list = (await host.executeTool('checklist', { action: 'list' })) as { commandsRunning: number; commandsFinished: number }
  assert.deepEqual([list.commandsRunning, list.commandsFinished], [0, 0])

  // a host with no command policy at all: git works, commands are still refused
  const noPolicy = new ReferenceHost(freshSession())
  noPolicy.registerCommandToolsOnly()
  noPolicy.registerGitTools({ repoRoot: fx.repo })
  assert.equal(result(await noPolicy.executeTool('git_ls_files', {})).ok, true)
  assert.match(refusal(await noPolicy.executeTool('run_command_bg', { argv: ['git', 'log'] })), /the host application has not enabled run_command_bg yet/)
  assert.equal(nc.getBackgroundCommandPolicy(noPolicy), undefined)
})

test('GitToolResult: exact fields, the argv that ran, the replaced environment', async () => {
  const fx = buildRepo()
  // a git executable that records its argv and its exact environment, then runs git
  const wrapper = join(fx.root, 'git-recorder')
  writeFileSync(wrapper, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > '${fx.root}/argv.last'\ncat /proc/$$/environ > '${fx.root}/env.last'\nexec git "$@"\n`)
  chmodSync(wrapper, 0o755)
  // Unconfined: the recorder writes beside the repository, where a confined
  // git may not (a confined run also gains its private TMPDIR/TMP/TEMP).
  const host = gitHost(fx.repo, { gitExecutable: wrapper, previewChars: 20, confine: false })

  const r = result(await host.executeTool('git_log', { maxCount: 2 }))
  assert.deepEqual(Object.keys(r).sort(), ['commandLine', 'exitCode', 'ok', 'output', 'preview', 'readBackHint', 'state'])
  assert.equal(r.commandLine, 'git log --no-color --no-ext-diff --no-textconv --max-count=2 --oneline')
  assert.equal(JSON.stringify(r).includes('"command":'), false, 'the exact argv is not in what the model is sent')
  const ran = readFileSync(join(fx.root, 'argv.last'), 'utf8').split('\n').slice(0, -1)
  assert.deepEqual(r.command, [wrapper, ...ran], 'command is the argv that ran')
  assert.deepEqual(r.command.slice(0, 8), [wrapper, ...PREFIX])
  assert.deepEqual(r.command.slice(-6), ['log', '--no-color', '--no-ext-diff', '--no-textconv', '--max-count=2', '--oneline'])
  // the work tree is pinned right before the tool's args
  assert.equal(r.command[r.command.length - 7], `--work-tree=${fx.repo}`)
  for (let i = 8; i < r.command.length - 7; i += 2) {
    assert.equal(r.command[i], '-c', `only -c overrides between the prefix and the args: ${r.command.join(' ')}`)
    assert.match(r.command[i + 1]!, /^[a-zA-Z0-9.]+=/)
  }
  assert.equal(r.ok, true)
  assert.equal(r.exitCode, 0)
  assert.equal(r.state, 'exited')
  const full = host.readArtifact(r.output.artifactId)
  assert.equal(r.preview, `${full.slice(0, 20)}…`)
  assert.deepEqual(Object.keys(r.output).sort(), ['artifactId', 'kind', 'label', 'preview', 'readBackHint', 'sizeBytes'])
  assert.equal(r.readBackHint, r.output.readBackHint)
  assert.match(r.readBackHint, /retrieve_context/)
  assert.equal('stderrPreview' in r, false, 'no stderrPreview when stderr is empty')

  // the environment is replaced: exactly the contract's variables
  const env = readFileSync(join(fx.root, 'env.last'), 'utf8').split('\0').filter(Boolean).sort()
  const want = Object.entries(toolEnv())
    .map(([k, v]) => `${k}=${v}`)
    .sort()
  assert.deepEqual(env, want)

  // the default executable "git" is resolved once to its absolute path
  const plain = gitHost(fx.repo)
  const p = result(await plain.executeTool('git_merge_base', { base: 'main', head: 'feature' }))
  const absGit = execFileSync(SH, ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
  assert.deepEqual(p.command.slice(0, 8), [absGit, ...PREFIX])
  assert.deepEqual(p.command.slice(-3), ['merge-base', 'main', 'feature'])
  assert.equal(p.preview, `${fx.first}\n`)

  // a failing run: ok false, the exit code, stderrPreview present
  const bad = result(await host.executeTool('git_show', { ref: 'no-such-branch' }))
  assert.deepEqual(Object.keys(bad).sort(), ['commandLine', 'exitCode', 'ok', 'output', 'preview', 'readBackHint', 'state', 'stderrPreview'])
  assert.equal(bad.ok, false)
  assert.equal(bad.exitCode, 128)
  assert.equal(bad.state, 'exited')
  assert.equal(bad.preview, '')
  assert.match(bad.stderrPreview!, /no-such-branch/)
  assert.ok(!bad.stderrPreview!.endsWith('…'))
  // stderr longer than 600 characters: cut, with …
  const long = await nc.runGitCommand(host, ['show', `x${'y'.repeat(700)}`])
  assert.equal(long.ok, false)
  assert.equal(long.stderrPreview!.length, 601)
  assert.ok(long.stderrPreview!.endsWith('…'))
  assert.ok(long.stderrPreview!.startsWith('fatal: '))
})

test('the parent environment does not reach git (no inherited alias, config or diff program)', async () => {
  const fx = buildRepo()
  const markDir = join(fx.root, 'marks')
  mkdirSync(markDir)
  const ext = join(fx.root, 'ext-diff')
  writeFileSync(ext, `#!/bin/sh\ntouch '${markDir}/external'\n`)
  chmodSync(ext, 0o755)
  write(join(fx.repo, 'src/lib.txt'), 'one\ntwo\nthree\nfour\n')
  const injected: Record<string, string> = {
    NLC_PARENT_SENTINEL: 'visible',
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'alias.nlcprobe',
    GIT_CONFIG_VALUE_0: 'ls-files',
    GIT_CONFIG_KEY_1: 'core.abbrev',
    GIT_CONFIG_VALUE_1: '12',
    GIT_EXTERNAL_DIFF: ext,
  }
  const saved = Object.fromEntries(Object.keys(injected).map((k) => [k, process.env[k]]))
  Object.assign(process.env, injected)
  try {
    // control: with the parent's environment, git sees the alias, the abbrev and the diff program
    const controlEnv = { ...fixtureEnv(fx.root), ...injected }
    assert.equal(execFileSync('git', ['nlcprobe'], { cwd: fx.repo, env: controlEnv, encoding: 'utf8' }), 'README.md\nsrc/fifteen-chars.x\nsrc/lib.txt\n')
    execFileSync('git', ['diff'], { cwd: fx.repo, env: controlEnv, stdio: 'ignore' })
    assert.deepEqual(readdirSync(markDir), ['external'])
    rmSync(join(markDir, 'external'))

    const host = gitHost(fx.repo, { previewChars: 4000 })
    const alias = await nc.runGitCommand(host, ['nlcprobe'])
    assert.equal(alias.ok, false)
    assert.match(alias.stderrPreview ?? '', /'nlcprobe' is not a git command/)
    const log = result(await host.executeTool('git_log', {}))
    for (const line of log.preview.trimEnd().split('\n')) assert.doesNotMatch(line, /^[0-9a-f]{12} /)
    const diff = result(await host.executeTool('git_diff', {}))
    assert.match(diff.preview, /\+four\n/)
    assert.deepEqual(readdirSync(markDir), [])
    // what git's own children see (an alias run by the test through the host API)
    const seen = await nc.runGitCommand(host, ['-c', 'alias.nlcenv=!env', 'nlcenv'])
    assert.equal(seen.ok, true)
    const vars = new Map(
      host
        .readArtifact(seen.output.artifactId)
        .trimEnd()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
    )
    for (const [k, v] of Object.entries(toolEnv())) {
      // git puts its exec-path in front of PATH for the programs it starts
      if (k === 'PATH') assert.ok(vars.get(k)?.endsWith(v!), `PATH ${vars.get(k)} ends with the parent's`)
      else assert.equal(vars.get(k), v, k)
    }
    for (const k of Object.keys(injected)) assert.equal(vars.has(k), false, `${k} leaked from the parent`)
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
})

test('every process the git tools start is confined: a gitExecutable wrapper cannot write outside the repository in any step', async (t) => {
  const s = nc.confinementSupport()
  const fx = buildRepo('nlc-git-steps-')
  const outside = tempRoot('nlc-git-outside-')
  // A wrapper that, before each git it runs, tries to leave a file named
  // after its pid outside the repository, holding its arguments.
  const wrapper = join(fx.root, 'git-writer')
  writeFileSync(wrapper, `#!/bin/sh\nprintf '%s ' "$@" > "${outside}/step-$$" 2>/dev/null\nexec git "$@"\n`)
  chmodSync(wrapper, 0o755)
  const steps = () => readdirSync(outside).map((f) => readFileSync(join(outside, f), 'utf8'))

  // The control: unconfined, every step runs the wrapper and writes — the
  // configuration listings before the run as well as the run itself.
  const open = {}
  nc.configureGitTools(open, { repoRoot: fx.repo, gitExecutable: wrapper, confine: false })
  const r0 = await nc.runGitCommand(open, ['log', '--oneline'])
  assert.equal(r0.ok, true)
  const written = steps()
  assert.ok(
    written.some((a) => / config --list /.test(a)),
    `a listing step wrote: ${written.join(' | ')}`,
  )
  assert.ok(
    written.some((a) => / rev-parse /.test(a)),
    `a rev-parse step wrote: ${written.join(' | ')}`,
  )
  assert.ok(
    written.some((a) => / log --oneline /.test(a)),
    `the run wrote: ${written.join(' | ')}`,
  )
  for (const f of readdirSync(outside)) rmSync(join(outside, f))

  const host = {}
  const settings = nc.configureGitTools(host, { repoRoot: fx.repo, gitExecutable: wrapper })
  if (!(s.filesystem && s.seccomp)) {
    // No Landlock here: git runs unconfined, and says so.
    assert.equal(settings.confined, false)
    assert.equal(typeof settings.confinedWhyNot, 'string')
    return
  }
  assert.equal(settings.confined, true)
  const r = await nc.runGitCommand(host, ['log', '--oneline'])
  assert.equal(r.ok, true, 'git itself still answers')
  assert.equal(r.preview, r0.preview)
  assert.deepEqual(readdirSync(outside), [], 'no step wrote outside the repository')
  t.diagnostic(`unconfined steps that wrote: ${written.length}`)
})

test('a configuration listing that fails is NLC_GIT_FAILED with git’s own words', async () => {
  const fx = buildRepo('nlc-git-listfail-')
  const wrapper = join(fx.root, 'git-no-config')
  writeFileSync(wrapper, `#!/bin/sh\ncase " $* " in *" config --list "*) echo 'fatal: bad config line 3 in file .git/config' >&2; exit 128;; esac\nexec git "$@"\n`)
  chmodSync(wrapper, 0o755)
  for (const confine of [false, undefined]) {
    const host = {}
    nc.configureGitTools(host, { repoRoot: fx.repo, gitExecutable: wrapper, ...(confine === false ? { confine } : {}) })
    await assert.rejects(nc.runGitCommand(host, ['log', '--oneline']), (e: nc.BackgroundCommandError) => {
      assert.equal(e.code, 'NLC_GIT_FAILED')
      assert.match(e.message, /git could not list its configuration \(exit code 128\): fatal: bad config line 3 in file \.git\/config; fix the git configuration/)
      return true
    })
    // The tool says the same, with the code.
    const r = (await nc.createGitTools(host).git_log.execute({})) as { isError: boolean; code: string; error: string }
    assert.equal(r.isError, true)
    assert.equal(r.code, 'NLC_GIT_FAILED')
    assert.match(r.error, /git could not list its configuration/)
  }
})
