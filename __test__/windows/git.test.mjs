// The git toolset on Windows, our side of it: how configureGitTools finds the
// git executable (PATH + PATHEXT, absolute entries only), the exact argv
// (the hardening `-c` overrides with their Windows values: NUL for the
// file-naming keys, the executable's own path for core.hooksPath, and the
// per-name overrides from the configuration listing), the replaced
// environment, the working directory, and what the tools refuse.
//
// There is no Git for Windows on the machine that runs this suite under
// wine, so git here is a stand-in: a `.cmd` (run by cmd.exe, as Git for
// Windows' own cmd\git.exe wrapper would not be, but through the engine's
// quoting for batch files) that starts node.exe with a script recording its
// argv, cwd and environment and printing canned answers. The real git run
// (init, status, log, diff, a planted hook not run) is NATIVE-ONLY:
// native-only.test.mjs, on the workflow's Windows runner with real git.exe.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { NODE, nc, rejection, script, tempRoot } from './helpers.mjs'

/** The code of a tool's refusal of a value. */
const REFUSAL_CODE = 'NLC_INVALID_ARGUMENT'
/** The environment git gets on Windows: the contract's variables, PATH, HOME and SystemRoot. */
const ENV_KEYS = ['GIT_OPTIONAL_LOCKS', 'GIT_PAGER', 'GIT_TERMINAL_PROMPT', 'HOME', 'LANG', 'LC_ALL', 'PATH', 'SYSTEMROOT']
/** What the system and cmd.exe add to a process's environment on their own (wine adds its WINE* too). */
const ADDED = /^(COMSPEC|PROMPT|SYSTEMDRIVE|WINE.*)$/

/** A stand-in git in its own directory: returns { dir, cmd, records() }. */
function standIn(t, prefix = 'nlc-fakegit-') {
  const dir = tempRoot(t, prefix)
  const log = join(dir, 'calls.jsonl')
  script(
    dir,
    'fake-git.mjs',
    `import { appendFileSync, existsSync, readFileSync } from 'node:fs'
const args = process.argv.slice(2)
appendFileSync(${JSON.stringify(log)}, JSON.stringify({ args, cwd: process.cwd(), env: process.env }) + '\\n')
// The subcommand: the first argument after --no-pager, the -c pairs and --work-tree=.
let i = 0
while (i < args.length && (args[i] === '--no-pager' || args[i].startsWith('--work-tree='))) i++
while (args[i] === '-c') {
  i += 2
  while (i < args.length && args[i].startsWith('--work-tree=')) i++
}
const sub = args[i]
if (sub === 'config' && args.includes('--show-scope')) {
  // the include check's listing: the repository include a test planted, if any
  if (existsSync(${JSON.stringify(join(dir, 'include.txt'))})) {
    const value = readFileSync(${JSON.stringify(join(dir, 'include.txt'))}, 'utf8')
    process.stdout.write('local\\0file:.git/config\\0include.path\\n' + value + '\\0')
  }
} else if (sub === 'config') {
  process.stdout.write('core.bare\\nfalse\\0filter.lfs.clean\\ngit-lfs clean -- %f\\0')
} else if (sub === 'rev-parse') {
  process.stderr.write('fatal: not a git repository\\n')
  process.exitCode = 128
} else {
  process.stdout.write('canned ' + sub + '\\n')
}
`,
  )
  // cmd.exe passes %* as the engine quoted it.
  const cmd = script(dir, 'git.cmd', `@"${NODE}" "${join(dir, 'fake-git.mjs')}" %*\r\n`)
  const records = () =>
    readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
  return { dir, cmd, records }
}

/** The hardening prefix as it runs on Windows with `git` at `exe`. */
function prefix(exe) {
  return [
    exe,
    '--no-pager',
    ...['color.ui=false', 'diff.external=', 'core.fsmonitor=false', 'core.pager=cat', `core.hooksPath=${exe}`]
      .concat([
        'log.showSignature=false',
        'format.pretty=medium',
        'gpg.program=',
        'gpg.openpgp.program=',
        'gpg.ssh.program=',
        'gpg.x509.program=',
        'protocol.allow=never',
        'diff.submodule=short',
        'diff.ignoreSubmodules=dirty',
        'submodule.recurse=false',
        'mailmap.file=NUL',
        'core.attributesFile=NUL',
        'core.excludesFile=NUL',
        'diff.orderFile=NUL',
        'gpg.ssh.allowedSignersFile=NUL',
        'gpg.ssh.revocationFile=NUL',
      ])
      .flatMap((pair) => ['-c', pair]),
  ]
}

/** Environment keys a recorded run had, without the ones Windows keeps per drive (`=C:`). */
function keys(env) {
  return Object.keys(env)
    .filter((k) => !k.startsWith('='))
    .map((k) => k.toUpperCase())
    .sort()
}

test('git is found through PATH and PATHEXT (absolute entries only); a relative gitExecutable is refused', async (t) => {
  const repo = tempRoot(t, 'nlc-repo-')
  const git = standIn(t)
  const host = {}
  const saved = process.env.PATH
  t.after(() => {
    process.env.PATH = saved
  })
  // A relative entry and the repository itself come first: neither is searched.
  script(repo, 'git.cmd', '@echo planted\r\n')
  process.env.PATH = ['.', 'bin', repo.replace(/^[A-Za-z]:/, ''), git.dir, saved].join(';')
  const s = nc.configureGitTools(host, { repoRoot: repo })
  assert.equal(s.gitExecutable.toLowerCase(), git.cmd.toLowerCase())
  // Control: the repository's own git.cmd is what an absolute entry naming it finds.
  process.env.PATH = [repo, git.dir].join(';')
  assert.equal(nc.configureGitTools({}, { repoRoot: repo }).gitExecutable.toLowerCase(), join(repo, 'git.cmd').toLowerCase())
  process.env.PATH = saved

  // An absolute path without its extension is completed by PATHEXT.
  const noExt = nc.configureGitTools({}, { repoRoot: repo, gitExecutable: join(git.dir, 'git') })
  assert.equal(noExt.gitExecutable.toLowerCase(), git.cmd.toLowerCase())

  for (const rel of ['.\\git', 'bin\\git', 'bin/git', '\\git', 'C:git']) {
    assert.throws(
      () => nc.configureGitTools({}, { repoRoot: repo, gitExecutable: rel }),
      (e) => (e.code === 'NLC_INVALID_ARGUMENT' && /is a relative path/.test(e.message)) || assert.fail(`${rel}: ${e.code} ${e.message}`),
    )
  }
  assert.throws(
    () => nc.configureGitTools({}, { repoRoot: repo, gitExecutable: 'no-such-git-here' }),
    (e) => e.code === 'NLC_INVALID_ARGUMENT' && /was not found in any absolute PATH entry with any PATHEXT extension/.test(e.message),
  )
})

test('runGitCommand: the exact hardened argv, per-name overrides, the replaced environment and the cwd', async (t) => {
  const repo = tempRoot(t, 'nlc-repo-')
  const git = standIn(t)
  const host = {}
  process.env.NLC_GIT_CANARY = 'must not reach git'
  t.after(() => {
    delete process.env.NLC_GIT_CANARY
  })
  const s = nc.configureGitTools(host, { repoRoot: repo, gitExecutable: git.cmd })
  assert.equal(s.confined, false)
  const r = await nc.runGitCommand(host, ['status', '--short'])
  assert.equal(r.ok, true, JSON.stringify(r))
  assert.equal(r.preview, 'canned status\n')
  const lfs = ['filter.lfs.clean=', 'filter.lfs.smudge=', 'filter.lfs.process=', 'filter.lfs.required=false'].flatMap((p) => ['-c', p])
  const expected = [...prefix(git.cmd), ...lfs, `--work-tree=${repo}`, 'status', '--short']
  assert.deepEqual(r.command, expected)
  assert.equal(r.commandLine, 'git status --short')

  const calls = git.records()
  // The include check, the listing, rev-parse (no top level), then the run.
  assert.deepEqual(
    calls.map((c) => c.args.slice(prefix(git.cmd).length - 1)),
    [
      [`--work-tree=${repo}`, 'config', '--list', '--no-includes', '--show-scope', '--show-origin', '-z'],
      [`--work-tree=${repo}`, 'config', '--list', '-z'],
      [`--work-tree=${repo}`, 'rev-parse', '--show-toplevel'],
      [...lfs, `--work-tree=${repo}`, 'status', '--short'],
    ],
  )
  for (const c of calls) {
    // argv[0] is the script's; what the .cmd received follows it, round-tripped exactly.
    assert.deepEqual(c.args.slice(0, prefix(git.cmd).length - 1), prefix(git.cmd).slice(1))
    assert.equal(c.cwd.toLowerCase(), repo.toLowerCase())
    assert.equal(c.env.LANG, 'C')
    assert.equal(c.env.LC_ALL, 'C')
    assert.equal(c.env.GIT_TERMINAL_PROMPT, '0')
    assert.equal(c.env.GIT_OPTIONAL_LOCKS, '0')
    assert.equal(c.env.GIT_PAGER, 'cat')
    assert.equal(c.env.NLC_GIT_CANARY, undefined)
    assert.equal(c.env.SystemRoot ?? c.env.SYSTEMROOT, process.env.SystemRoot)
    assert.equal(c.env.HOME, process.env.HOME ?? process.env.USERPROFILE)
    // PATH: the parent's absolute entries only.
    const want = process.env.PATH.split(';')
      .map((d) => d.trim().replace(/^"+|"+$/g, ''))
      .filter((d) => /^([A-Za-z]:[\\/]|\\\\)/.test(d))
    assert.deepEqual((c.env.PATH ?? c.env.Path).split(';'), want)
  }
  for (const c of calls) {
    assert.deepEqual(
      keys(c.env).filter((k) => !ADDED.test(k)),
      ENV_KEYS,
      JSON.stringify(keys(c.env)),
    )
  }
})

test('the tools refuse flags and paths outside the repository (drive-relative, another drive, ..) with their codes', async (t) => {
  const repo = tempRoot(t, 'nlc-repo-')
  const git = standIn(t)
  mkdirSync(join(repo, 'src'))
  writeFileSync(join(repo, 'src', 'a.txt'), 'a\n')
  const host = {}
  nc.configureGitTools(host, { repoRoot: repo, gitExecutable: git.cmd })
  const tools = nc.createGitTools(host)

  const flag = await tools.git_log.execute({ ref: '--output=C:\\x' })
  assert.ok(nc.isToolRefusal(flag), JSON.stringify(flag))
  assert.equal(flag.code, REFUSAL_CODE)
  assert.match(flag.error, /must not start with "-"/)

  const outside = [
    { path: '..\\escape.txt' },
    { path: '../escape.txt' },
    { path: 'src\\..\\..\\escape.txt' },
    { path: join(repo, '..', 'escape.txt') },
    { path: join(process.env.SystemRoot, 'win.ini') },
  ]
  for (const params of outside) {
    const e = await tools.git_log.execute(params)
    assert.ok(nc.isToolRefusal(e), JSON.stringify(params))
    assert.equal(e.code, REFUSAL_CODE)
    assert.match(e.error, /outside the permitted root/, JSON.stringify(params))
  }
  // Controls: inside paths, with either separator and an absolute form, run
  // with the repository-relative path after `--`, written with `/`.
  for (const path of ['src\\a.txt', 'src/a.txt', join(repo, 'src', 'a.txt'), 'src\\gone\\..\\a.txt']) {
    const r = await tools.git_log.execute({ path })
    assert.ok(!nc.isToolRefusal(r), JSON.stringify(r))
    assert.deepEqual(r.command.slice(-2), ['--', 'src/a.txt'], path)
  }
  const deleted = await tools.git_log.execute({ path: 'src\\deleted\\x.txt' })
  assert.deepEqual(deleted.command.slice(-2), ['--', 'src/deleted/x.txt'])
})

test('a gitExecutable in a directory with a space (as C:\\Program Files\\Git is) runs, and is core.hooksPath', async (t) => {
  const repo = tempRoot(t, 'nlc-repo-')
  const git = standIn(t, 'nlc fake git-')
  assert.match(git.cmd, / /)
  const host = {}
  assert.equal(nc.configureGitTools(host, { repoRoot: repo, gitExecutable: git.cmd }).gitExecutable, git.cmd)
  const r = await nc.runGitCommand(host, ['log', '--oneline'])
  assert.equal(r.ok, true, JSON.stringify(r))
  assert.equal(r.preview, 'canned log\n')
  const last = git.records().at(-1)
  assert.ok(last.args.includes(`core.hooksPath=${git.cmd}`), JSON.stringify(last.args))
  assert.deepEqual(last.args.slice(-2), ['log', '--oneline'])
})

test('a repository include of a file outside the repository is refused; one inside runs (Windows real paths)', async (t) => {
  const repo = tempRoot(t, 'nlc-repo-')
  const git = standIn(t)
  const host = {}
  nc.configureGitTools(host, { repoRoot: repo, gitExecutable: git.cmd })
  const outside = join(process.env.SystemRoot, 'win.ini')
  for (const value of [outside, outside.replace(/\\/g, '/'), '..\\..\\escape.cfg', '../../escape.cfg']) {
    writeFileSync(join(git.dir, 'include.txt'), value)
    const e = await rejection(nc.runGitCommand(host, ['status']))
    assert.equal(e.code, 'NLC_GIT_FAILED', `${value}: ${e.message}`)
    assert.match(e.message, /includes .* \(include\.path\), a file outside the repository/, value)
  }
  // Controls: an include in the git directory and one in the work tree run.
  for (const value of ['extra.cfg', join(repo, 'shared.cfg'), repo.replace(/\\/g, '/') + '/shared.cfg']) {
    writeFileSync(join(git.dir, 'include.txt'), value)
    const r = await nc.runGitCommand(host, ['status'])
    assert.equal(r.ok, true, `${value}: ${JSON.stringify(r)}`)
  }
})
