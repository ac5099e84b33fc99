// The holes an attacker finds, each closed as a class and paired
// with a control that shows the attack works without the protection.
// (The log-directory claims are tested with the logs-on-disk work.)
import assert from 'node:assert/strict'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { after, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { hostWith, NODE, nc, settle, tempRoot } from './helpers.ts'

const SH = '/bin/sh'
const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const roots: string[] = []
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true })
})
function fresh(prefix: string): string {
  const r = tempRoot(prefix)
  roots.push(r)
  return r
}

/** Run a CommonJS script in a child node process; its last stdout line is JSON. */
function child(script: string, opts: { env?: NodeJS.ProcessEnv; uid?: string; cwd?: string } = {}) {
  const argv = opts.uid ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', NODE, '-e', script] : [NODE, '-e', script]
  const r = spawnSync(argv[0]!, argv.slice(1), {
    env: { ...process.env, NLC_PKG: PKG, ...opts.env },
    cwd: opts.cwd,
    encoding: 'utf8',
    timeout: 120_000,
  })
  const lines = r.stdout.trim().split('\n')
  let out: unknown
  try {
    out = JSON.parse(lines[lines.length - 1] ?? '')
  } catch {
    out = undefined
  }
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, out: out as any }
}

function git(dir: string, ...args: string[]) {
  return execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', HOME: dir, GIT_CONFIG_NOSYSTEM: '1', LANG: 'C', LC_ALL: 'C' },
  })
}

/** A repository with two commits and uncommitted changes, and a directory outside it. */
function repoWithOutside(base: string) {
  const repo = join(base, 'repo')
  const outside = join(base, 'outside')
  mkdirSync(repo, { recursive: true })
  mkdirSync(outside, { recursive: true })
  git(repo, '-c', 'init.defaultBranch=main', 'init', '-q')
  git(repo, 'config', 'user.name', 'Test')
  git(repo, 'config', 'user.email', 'test@example.invalid')
  git(repo, 'config', 'commit.gpgsign', 'false')
  writeFileSync(join(repo, 'a.txt'), 'one\n')
  git(repo, 'add', '.')
  git(repo, 'commit', '-qm', 'first')
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n')
  return { repo, outside }
}

/**
 * Plant, in the repository's own configuration, every file-naming key of the
 * git hardening notes that the tools neutralise by value, each naming a file
 * outside with a unique secret line. Returns the secrets.
 */
function plantNeutralised(repo: string, outside: string): string[] {
  const secrets: string[] = []
  const plant = (key: string, name: string, secret: string, content: string) => {
    writeFileSync(join(outside, name), content)
    chmodSync(join(outside, name), 0o644)
    git(repo, 'config', key, join(outside, name))
    secrets.push(secret)
  }
  plant('mailmap.file', 'mailmap', 'SECRETMAILMAP', 'SECRETMAILMAP <test@example.invalid>\n')
  plant('core.attributesFile', 'attributes', 'SECRETATTR', '* SECRETATTR!x\n')
  plant('core.excludesFile', 'excludes', 'SECRETEXCLUDES', 'SECRETEXCLUDES!x\n')
  plant('diff.orderFile', 'order', 'SECRETORDER', 'SECRETORDER\n')
  plant('gpg.ssh.allowedSignersFile', 'signers', 'SECRETSIGNERS', 'SECRETSIGNERS ssh-ed25519 AAAA\n')
  plant('gpg.ssh.revocationFile', 'revoked', 'SECRETREVOKED', 'SECRETREVOKED\n')
  const wt = join(outside, 'worktree')
  mkdirSync(wt, { recursive: true })
  writeFileSync(join(wt, 'a.txt'), 'one\nSECRETWORKTREE\n')
  git(repo, 'config', 'core.worktree', wt)
  secrets.push('SECRETWORKTREE')
  return secrets
}

const GIT_CALLS: [string, Record<string, unknown>][] = [
  ['git_log', { format: 'full' }],
  ['git_show', { ref: 'HEAD' }],
  ['git_diff', {}],
  ['git_diff', { base: 'HEAD', stat: true }],
  ['git_blame', { path: 'a.txt' }],
  ['git_merge_base', { base: 'main', head: 'HEAD' }],
  ['git_ls_files', {}],
]

/**
 * Every text a git tool call can hand back: its result text, preview,
 * stderrPreview, error, and the banked output read back whole. Written as a
 * CommonJS body so the same code runs in a child as another user.
 */
const COLLECT = `
const nc = require(process.env.NLC_PKG + '/index.js')
async function collect(repoRoot, calls) {
  const host = {}
  nc.configureGitTools(host, { repoRoot })
  const tools = nc.createGitTools(host)
  const texts = []
  for (const [name, params] of calls) {
    let r
    try {
      r = await tools[name].execute(params, {})
    } catch (e) {
      texts.push(name + ' threw ' + String(e && e.message))
      continue
    }
    texts.push(name + ' ' + JSON.stringify(r))
  }
  for (const args of [['log', '--pretty=fuller'], ['diff'], ['blame', '--', 'a.txt'], ['show', 'HEAD']]) {
    try {
      const r = await nc.runGitCommand(host, args)
      texts.push(JSON.stringify(r))
      if (r.output.artifactId) texts.push(await nc.readArtifact(r.output.artifactId))
    } catch (e) {
      texts.push(args.join(' ') + ' rejected ' + String(e && e.message))
    }
  }
  return texts
}
`

describe('a hostile repository: git reads nothing outside it', () => {
  test('every neutralised key and core.worktree: no secret in any result, preview, error or banked output; a control shows git reads them', async () => {
    const base = fresh('nlc-sec-git-')
    const { repo, outside } = repoWithOutside(base)
    const secrets = plantNeutralised(repo, outside)
    const r = child(`${COLLECT}
collect(${JSON.stringify(repo)}, ${JSON.stringify(GIT_CALLS)}).then((t) => console.log(JSON.stringify(t)))`)
    assert.equal(r.status, 0, r.stderr)
    const all = (r.out as string[]).join('\n')
    for (const s of secrets) assert.ok(!all.includes(s), `${s} leaked: ${all.slice(0, 2000)}`)
    // the tools worked on the repository's own work tree
    assert.match(all, /\+two/)
    assert.match(all, /Test/)
    // control: plain git in the same repository reads the outside files
    const plain = spawnSync('git', ['diff'], { cwd: repo, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: base } })
    assert.match(plain.stdout + plain.stderr, /SECRETWORKTREE|SECRETATTR/)
  })

  test('a repository include of an outside file, and an outside blame.ignoreRevsFile, are refused naming the setting, never quoting the file', async () => {
    const base = fresh('nlc-sec-inc-')
    const { repo, outside } = repoWithOutside(base)
    writeFileSync(join(outside, 'creds'), '[core]\n\tabbrev = SECRETINCLUDE\n')
    writeFileSync(join(outside, 'revs'), 'deadbeefSECRETREVS\n')
    const host = {}
    nc.configureGitTools(host, { repoRoot: repo })
    const tools = nc.createGitTools(host)
    for (const [key, file, secret] of [
      ['include.path', 'creds', 'SECRETINCLUDE'],
      ['includeIf.gitdir:/.path', 'creds', 'SECRETINCLUDE'],
      ['blame.ignoreRevsFile', 'revs', 'SECRETREVS'],
    ] as const) {
      git(repo, 'config', key, join(outside, file))
      // control: git itself quotes the file
      const plain = spawnSync('git', ['blame', '--', 'a.txt'], { cwd: repo, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: base } })
      assert.ok(plain.stderr.includes(secret), `${key}: control ${plain.stderr}`)
      const err = await nc.runGitCommand(host, ['blame', '--', 'a.txt']).then(
        (v) => assert.fail(`${key}: ran ${JSON.stringify(v)}`),
        (e: Error) => e,
      )
      assert.ok(err.message.includes(key.startsWith('blame') ? 'blame.ignoreRevsFile' : 'outside'), err.message)
      assert.ok(!err.message.includes(secret), err.message)
      const t = (await tools.git_blame!.execute({ path: 'a.txt' }, {})) as { isError?: boolean; error?: string }
      assert.equal(t.isError, true)
      assert.ok(!JSON.stringify(t).includes(secret), JSON.stringify(t))
      git(repo, 'config', '--unset-all', key)
    }
    // with the settings gone the same host runs blame
    const ok = await nc.runGitCommand(host, ['blame', '--', 'a.txt'])
    assert.equal(ok.ok, true)
  })

  test('as another local user (nobody): the repository is theirs, the secrets are not; nothing leaks', async () => {
    const base = fresh('nlc-sec-nobody-')
    chmodSync(base, 0o755)
    const { repo, outside } = repoWithOutside(base)
    const secrets = plantNeutralised(repo, outside)
    writeFileSync(join(outside, 'creds'), '[core]\n\tabbrev = SECRETINCLUDE\n')
    chmodSync(join(outside, 'creds'), 0o644)
    const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }))
    const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }))
    execFileSync('chown', ['-R', `${uid}:${gid}`, repo])
    const tmp = join(base, 'tmp')
    mkdirSync(tmp)
    chownSync(tmp, uid, gid)
    // nobody owns the repository, so git's safe.directory does not stand in the way
    const home = join(base, 'home')
    mkdirSync(home)
    chownSync(home, uid, gid)
    const env = { TMPDIR: tmp, HOME: home, PATH: '/usr/bin:/bin' }
    const r = child(
      `${COLLECT}
(async () => {
  const first = await collect(${JSON.stringify(repo)}, ${JSON.stringify(GIT_CALLS)})
  require('child_process').execFileSync('git', ['config', 'include.path', ${JSON.stringify(join(outside, 'creds'))}], { cwd: ${JSON.stringify(repo)} })
  const second = await collect(${JSON.stringify(repo)}, [['git_log', {}]])
  console.log(JSON.stringify({ uid: process.getuid(), first, second }))
})()`,
      { uid: 'nobody', env },
    )
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.out.uid, uid)
    const first = (r.out.first as string[]).join('\n')
    for (const s of secrets) assert.ok(!first.includes(s), `${s} leaked as nobody: ${first.slice(0, 2000)}`)
    assert.match(first, /\+two/, 'the tools ran as nobody')
    const second = (r.out.second as string[]).join('\n')
    assert.match(second, /outside/)
    assert.ok(!second.includes('SECRETINCLUDE'), second)
  })
})

describe('the git executable is resolved once, to an absolute path', () => {
  test('a git committed in the repository never runs with PATH ":/usr/bin:/bin"; control: a relative lookup would run it', () => {
    const base = fresh('nlc-sec-exe-')
    const { repo } = repoWithOutside(base)
    const marker = join(base, 'planted-git-ran')
    writeFileSync(join(repo, 'git'), `#!/bin/sh\necho ran > '${marker}'\necho PLANTED\n`)
    chmodSync(join(repo, 'git'), 0o755)
    git(repo, 'add', 'git')
    git(repo, 'commit', '-qm', 'plant')
    const realGit = ['/usr/bin/git', '/bin/git'].find((p) => existsSync(p))!
    const r = child(
      `const nc = require(process.env.NLC_PKG + '/index.js');
(async () => {
  const host = {}
  const settings = nc.configureGitTools(host, { repoRoot: ${JSON.stringify(repo)} })
  const res = await nc.runGitCommand(host, ['log', '--oneline'])
  let rel
  try { nc.configureGitTools({}, { repoRoot: ${JSON.stringify(repo)}, gitExecutable: './git' }) } catch (e) { rel = e.code }
  console.log(JSON.stringify({ exe: settings.gitExecutable, command0: res.command[0], ok: res.ok, preview: res.preview, rel }))
})()`,
      { env: { PATH: ':/usr/bin:/bin' }, cwd: repo },
    )
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.out.exe, realGit)
    assert.equal(r.out.command0, realGit)
    assert.equal(r.out.ok, true)
    assert.match(r.out.preview, /plant/)
    assert.equal(r.out.rel, 'NLC_INVALID_ARGUMENT')
    assert.equal(existsSync(marker), false, 'the planted git did not run')
    // control: a lookup that honours the empty PATH entry runs the planted git
    const control = spawnSync('git', ['--version'], { cwd: repo, env: { PATH: ':/usr/bin:/bin' }, encoding: 'utf8' })
    assert.match(control.stdout, /PLANTED/)
    assert.equal(existsSync(marker), true)
  })
})

describe('sparse arrays never decide an allocation', () => {
  test('argv, allowedExecutables and git args with length 2**32-1 or above the limits are refused with NLC_INVALID_ARGUMENT; the child process survives', () => {
    const root = fresh('nlc-sec-sparse-')
    const r = child(`const nc = require(process.env.NLC_PKG + '/index.js')
const sparse = (n) => { const a = []; a.length = n; return a }
const root = ${JSON.stringify(root)}
const codes = {}
const host = {}
nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh'], cwdRoot: root })
nc.configureGitTools(host, { repoRoot: root })
const tryIt = async (name, f) => { try { await f(); codes[name] = 'accepted' } catch (e) { codes[name] = e.code } }
;(async () => {
  await tryIt('argv', () => nc.startBackgroundCommand(host, sparse(2 ** 32 - 1), { cwd: root }))
  await tryIt('argvLimit', () => nc.startBackgroundCommand(host, sparse(1048577), { cwd: root }))
  await tryIt('setPolicy', () => nc.setBackgroundCommandPolicy({}, { allowedExecutables: sparse(2 ** 32 - 1), cwdRoot: root }))
  await tryIt('withPolicy', () => nc.startCommandWithPolicy({}, ['/bin/sh', '-c', 'true'], { cwd: root }, { allowedExecutables: sparse(2 ** 32 - 1), cwdRoot: root }))
  await tryIt('allowedLimit', () => nc.setBackgroundCommandPolicy({}, { allowedExecutables: sparse(65537), cwdRoot: root }))
  await tryIt('gitArgs', () => nc.runGitCommand(host, sparse(2 ** 32 - 1)))
  await tryIt('gitArgsLimit', () => nc.runGitCommand(host, sparse(65537)))
  // controls: at the limits, real arrays are accepted
  await tryIt('allowedAtLimit', () => nc.setBackgroundCommandPolicy({}, { allowedExecutables: Array.from({ length: 65536 }, (_, i) => '/bin/x' + i), cwdRoot: root }))
  const long = ['/bin/sh', '-c', 'exit 0', ...Array.from({ length: 1000 }, () => 'a')]
  await tryIt('argvLong', async () => { const h = await nc.startBackgroundCommand(host, long, { cwd: root }); await nc.awaitBackgroundCommand(host, h.taskId) })
  console.log(JSON.stringify(codes))
})()`)
    assert.equal(r.signal, null, `the child was killed: ${r.stderr}`)
    assert.equal(r.status, 0, r.stderr)
    assert.deepEqual(r.out, {
      argv: 'NLC_INVALID_ARGUMENT',
      argvLimit: 'NLC_INVALID_ARGUMENT',
      setPolicy: 'NLC_INVALID_ARGUMENT',
      withPolicy: 'NLC_INVALID_ARGUMENT',
      allowedLimit: 'NLC_INVALID_ARGUMENT',
      gitArgs: 'NLC_INVALID_ARGUMENT',
      gitArgsLimit: 'NLC_INVALID_ARGUMENT',
      allowedAtLimit: 'accepted',
      argvLong: 'accepted',
    })
  })

  test('the refusal says the limit', async () => {
    const root = fresh('nlc-sec-sparse-msg-')
    const host = hostWith(root)
    const a: string[] = []
    a.length = 2 ** 32 - 1
    await assert.rejects(nc.startBackgroundCommand(host, a, { cwd: root }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'NLC_INVALID_ARGUMENT')
      assert.match(e.message, /4294967295 entries, more than the 1048576 allowed/)
      return true
    })
  })
})

describe('kill and kill-all resolve settled, with both refs', () => {
  test('30 kills with killGraceMs 1 all resolve settled with both refs', async () => {
    const root = fresh('nlc-sec-kill-')
    const host = hostWith(root, [SH], { killGraceMs: 1 })
    const handles = await Promise.all(Array.from({ length: 30 }, () => nc.startBackgroundCommand(host, [SH, '-c', 'trap "" TERM; echo up; sleep 30'], { cwd: root })))
    const statuses = await Promise.all(handles.map((h) => nc.killBackgroundCommand(host, h.taskId)))
    for (const st of statuses) {
      assert.equal(st.state, 'killed', JSON.stringify(st))
      assert.ok(st.stdout && st.stderr, `both refs: ${JSON.stringify(st)}`)
    }
  })

  test('a host bank slower than twice the grace: killBackgroundCommand, command_kill and killAll resolve settled with refs', async () => {
    const root = fresh('nlc-sec-slowbank-')
    let n = 0
    const host = {
      async bankArtifact(content: string, options: { label: string }) {
        await new Promise((r) => setTimeout(r, 500))
        n++
        return { artifactId: `slow-${n}`, label: options.label, kind: 'command-output', sizeBytes: content.length, preview: content.slice(0, 10), readBackHint: 'slow bank' }
      },
    }
    nc.setBackgroundCommandPolicy(host, { allowedExecutables: [SH], cwdRoot: root, killGraceMs: 50 })
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: root })
    const st = await nc.killBackgroundCommand(host, h.taskId)
    assert.equal(st.state, 'killed')
    assert.match(st.stdout?.artifactId ?? '', /^slow-/)
    assert.match(st.stderr?.artifactId ?? '', /^slow-/)

    const tools = nc.createBackgroundCommandTools(host)
    const h2 = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: root })
    const t = JSON.stringify(await tools.command_kill!.execute({ taskId: h2.taskId }, {}))
    assert.match(t, /"state":"killed"/)
    assert.match(t, /slow-/)

    const h3 = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: root })
    assert.equal(await nc.killAllBackgroundCommands(host), 1)
    const st3 = nc.getBackgroundCommandStatus(host, h3.taskId)
    assert.equal(st3.state, 'killed')
    assert.ok(st3.stdout && st3.stderr, JSON.stringify(st3))
  })
})

describe('the cwd check compares identities', () => {
  test('a cwd in another mount namespace through /proc/<pid>/root is refused; the same path in ours is accepted', async () => {
    const root = fresh('nlc-sec-ns-')
    mkdirSync(join(root, 'inner'))
    writeFileSync(join(root, 'inner', 'ours.txt'), 'ours\n')
    const ready = join(root, 'ready')
    // another mount namespace with its own tmpfs on <root>/inner
    const other = spawn(
      'unshare',
      [
        '-m',
        '--propagation',
        'private',
        SH,
        '-c',
        `mount -t tmpfs nlc-sec none '${join(root, 'inner')}' 2>/dev/null || mount -t tmpfs none '${join(root, 'inner')}' && echo theirs > '${join(root, 'inner', 'theirs.txt')}' && : > '${ready}' && exec sleep 60`,
      ],
      { stdio: 'ignore' },
    )
    try {
      const deadline = Date.now() + 10_000
      while (!existsSync(ready) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      assert.ok(existsSync(ready), 'the other namespace is up')
      const theirs = `/proc/${other.pid}/root${root}/inner`
      assert.ok(existsSync(join(theirs, 'theirs.txt')), 'their tmpfs is reachable through /proc/<pid>/root')
      assert.equal(existsSync(join(root, 'inner', 'theirs.txt')), false, 'and is not ours')
      // their sleep is the shell exec'd; its root is the same /, so the path string reads as inside
      const host = hostWith(root, [SH])
      await assert.rejects(nc.startBackgroundCommand(host, [SH, '-c', 'ls'], { cwd: theirs }), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'NLC_OUTSIDE_ROOT')
        assert.match(e.message, /outside the permitted root/)
        return true
      })
      // control: the same form of path in our own namespace is accepted and runs there
      const h = await nc.startBackgroundCommand(host, [SH, '-c', 'ls'], { cwd: `/proc/${process.pid}/root${root}/inner` })
      const st = await settle(host, h.taskId)
      assert.equal(st.exitCode, 0)
      const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })
      assert.equal(page.content, 'ours.txt\n')
    } finally {
      other.kill('SIGKILL')
    }
  })
})

describe('the policy and options are read exactly once per call', () => {
  /** A Proxy over `target` that counts the reads of each property. */
  function counted<T extends object>(target: T): { proxy: T; reads: Map<string, number> } {
    const reads = new Map<string, number>()
    const proxy = new Proxy(target, {
      get(t, k, r) {
        if (typeof k === 'string') reads.set(k, (reads.get(k) ?? 0) + 1)
        return Reflect.get(t, k, r)
      },
    })
    return { proxy, reads }
  }
  const atMostOnce = (reads: Map<string, number>, what: string) => {
    for (const [k, n] of reads) assert.ok(n <= 1, `${what}.${k} was read ${n} times`)
  }

  test('an allowlist getter that refuses first and is undefined afterwards refuses (the hook read is the hook called)', async () => {
    const root = fresh('nlc-sec-once-')
    let reads = 0
    let calls = 0
    const policy = {
      allowedExecutables: [SH],
      cwdRoot: root,
      get allowlist() {
        reads++
        return reads === 1
          ? () => {
              calls++
              return 'refused by the first read'
            }
          : undefined
      },
    }
    await assert.rejects(nc.startCommandWithPolicy({}, [SH, '-c', 'true'], { cwd: root }, policy), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'NLC_VETOED')
      assert.equal(e.message, 'refused by the first read')
      return true
    })
    assert.equal(reads, 1)
    assert.equal(calls, 1)
    // the same for a stored policy
    reads = 0
    calls = 0
    const host = {}
    nc.setBackgroundCommandPolicy(host, policy)
    await assert.rejects(nc.startBackgroundCommand(host, [SH, '-c', 'true'], { cwd: root }), /refused by the first read/)
    assert.equal(reads, 1)
    assert.equal(calls, 1)
    // control: a policy whose allowlist is absent runs the command
    const h = await nc.startCommandWithPolicy({}, [SH, '-c', 'true'], { cwd: root }, { allowedExecutables: [SH], cwdRoot: root })
    assert.ok(h.taskId)
  })

  test('Proxies count one read per field: policy, options, git options, page, await and list requests', async () => {
    const root = fresh('nlc-sec-proxy-')
    const pol = counted({ allowedExecutables: [SH], cwdRoot: root, allowlist: () => true as const, defaultTimeoutMs: 60_000, maxOutputBytes: 1 << 20, killGraceMs: 100 })
    const opts = counted({ cwd: root, timeoutMs: 60_000, maxOutputBytes: 1 << 20, env: { PATH: '/usr/bin:/bin' }, label: 'x', sessionId: 's' })
    const host = {}
    const h = await nc.startCommandWithPolicy(host, [SH, '-c', 'echo hi'], opts.proxy, pol.proxy)
    atMostOnce(pol.reads, 'policy')
    atMostOnce(opts.reads, 'options')
    for (const k of ['allowedExecutables', 'cwdRoot', 'allowlist']) assert.equal(pol.reads.get(k), 1, k)
    for (const k of ['cwd', 'env']) assert.equal(opts.reads.get(k), 1, k)

    const stored = counted({ allowedExecutables: [SH], cwdRoot: root, allowlist: () => true as const })
    nc.setBackgroundCommandPolicy(host, stored.proxy)
    atMostOnce(stored.reads, 'setBackgroundCommandPolicy policy')
    const opts2 = counted({ cwd: root })
    const h2 = await nc.startBackgroundCommand(host, [SH, '-c', 'true'], opts2.proxy)
    atMostOnce(opts2.reads, 'startBackgroundCommand options')
    assert.equal(stored.reads.get('allowlist'), 1, 'stored: the hook is not read again at start')

    const wait = counted({ timeoutMs: 15_000 })
    await nc.awaitBackgroundCommand(host, h.taskId, wait.proxy)
    await nc.awaitBackgroundCommand(host, h2.taskId)
    atMostOnce(wait.reads, 'await opts')
    const page = counted({ stream: 'stdout' as const, offset: 0, limit: 100 })
    const p = await nc.readBackgroundCommandOutput(host, h.taskId, page.proxy)
    assert.equal(p.content, 'hi\n')
    atMostOnce(page.reads, 'page')

    const gopts = counted({ repoRoot: root, timeoutMs: 60_000, previewChars: 100, maxOutputBytes: 1 << 20 })
    nc.configureGitTools(host, gopts.proxy)
    atMostOnce(gopts.reads, 'git options')
    assert.equal(gopts.reads.get('repoRoot'), 1)
  })
})
