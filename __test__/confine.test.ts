// Kernel confinement (SPEC §8) through the public exports, with real
// processes and this kernel's Landlock and seccomp. Every refused action is
// paired with the same action unconfined, which succeeds.
import assert from 'node:assert/strict'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import dgram from 'node:dgram'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { Worker } from 'node:worker_threads'

import { nc, tempRoot, waitFor } from './helpers.ts'

const SH = '/bin/sh'
const BASH = '/bin/bash'
const NODE = process.execPath
const SETSID = '/usr/bin/setsid'
const ALLOWED = [SH, BASH, NODE, SETSID]

const scratch: string[] = []
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

/** A directory directly in $HOME: outside every default tree. */
function homeDir(): string {
  const d = realpathSync(mkdtempSync(join(homedir(), '.nlc-confine-test-')))
  scratch.push(d)
  return d
}

function root(): string {
  return tempRoot('nlc-confine-')
}

function host(cwdRoot: string, confine?: nc.Confinement | false): object {
  const h = {}
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: ALLOWED, cwdRoot, ...(confine === undefined ? {} : { confine }) })
  return h
}

interface Ran {
  st: nc.BackgroundCommandStatus
  out: string
  err: string
}

async function run(h: object, argv: string[], options: Partial<nc.BackgroundCommandOptions> = {}): Promise<Ran> {
  const { taskId } = await nc.startBackgroundCommand(h, argv, { cwd: '.', ...options })
  const st = await nc.awaitBackgroundCommand(h, taskId)
  const out = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })).content
  const err = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stderr' })).content
  return { st, out, err }
}

const sh = (h: object, script: string, options: Partial<nc.BackgroundCommandOptions> = {}) => run(h, [SH, '-c', script], options)

/**
 * qemu-user (the arm64 runs of `pnpm run test:platforms`, which set
 * NLC_TEST_QEMU=1) does not pass Landlock's system calls on to the kernel:
 * the emulated addon finds no Landlock (ABI 0), so no confined command can run
 * there. Under it each test that needs Landlock checks what holds instead —
 * the fail-closed refusal next to an unconfined control ({@link failsClosedUnderQemu});
 * natively (and on arm64 hardware, in CI) its own body runs.
 */
const LANDLOCK_HIDDEN = process.env.NLC_TEST_QEMU === '1'

async function failsClosedUnderQemu(): Promise<void> {
  assert.equal(nc.confinementSupport().landlockAbi, 0, 'qemu-user hides Landlock')
  const r = root()
  const control = await sh(host(r, false), 'echo ran > unconfined; echo ok')
  assert.equal(control.st.exitCode, 0)
  assert.equal(control.out, 'ok\n')
  await assert.rejects(
    nc.startBackgroundCommand(host(r, {}), [SH, '-c', 'echo ran > ran'], { cwd: '.' }),
    coded('NLC_CONFINEMENT_UNAVAILABLE', /this kernel offers none \(ABI 0\).*Nothing was started/),
  )
  assert.equal(existsSync(join(r, 'ran')), false)
}

/** A test that needs Landlock: its body natively, {@link failsClosedUnderQemu} under qemu-user. */
function confinedTest(name: string, body: () => unknown): void {
  test(name, LANDLOCK_HIDDEN ? failsClosedUnderQemu : body)
}

confinedTest('confinementSupport() reports what this kernel enforces', () => {
  const s = nc.confinementSupport()
  assert.deepEqual(Object.keys(s).sort(), ['filesystem', 'landlockAbi', 'namespaces', 'network', 'seccomp', 'signals'])
  assert.ok(Number.isInteger(s.landlockAbi) && s.landlockAbi >= 6, `Landlock ABI ${s.landlockAbi}`)
  assert.deepEqual([s.filesystem, s.network, s.signals, s.seccomp, s.namespaces], [true, true, true, true, true])
})

confinedTest('a confined command cannot create files outside its write trees; the root and its private TMPDIR it can', async () => {
  const r = root()
  const sibling = root()
  const home = homeDir()
  const open = host(r)
  const confined = host(r, {})
  for (const dir of [sibling, home]) {
    const script = `echo x > ${dir}/made && echo wrote`
    const control = await sh(open, script)
    assert.equal(control.st.exitCode, 0, control.err)
    assert.equal(control.out, 'wrote\n')
    assert.equal(control.st.confined, false)
    rmSync(join(dir, 'made'))
    const refused = await sh(confined, script)
    assert.equal(refused.st.confined, true)
    assert.notEqual(refused.st.exitCode, 0)
    // Neither tree is in the command's view (its /tmp is its own).
    assert.match(refused.err, /Directory nonexistent/)
    assert.equal(existsSync(join(dir, 'made')), false)
  }
  const ok = await sh(confined, 'echo r > in-root && echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && echo "$TMPDIR" && [ "$TMP" = "$TMPDIR" ] && [ "$TEMP" = "$TMPDIR" ]')
  assert.equal(ok.st.exitCode, 0, ok.err)
  assert.equal(readFileSync(join(r, 'in-root'), 'utf8'), 'r\n')
  const [t, tmp] = ok.out.trimEnd().split('\n')
  assert.equal(t, 't')
  assert.match(tmp!, /neurolink-commands-tmp-/)
  assert.equal(existsSync(tmp!), false, 'the private TMPDIR is removed once the command settled')
  // A caller-named TMPDIR in a replacing env is kept (and not removed).
  const own = join(r, 'mytmp')
  mkdirSync(own)
  const named = await sh(confined, 'echo "$TMPDIR" && echo k > "$TMPDIR/k"', { env: { TMPDIR: own, PATH: '/usr/bin:/bin' } })
  assert.equal(named.out, `${own}\n`)
  assert.equal(readFileSync(join(own, 'k'), 'utf8'), 'k\n')
})

confinedTest("a host that exits leaves no private TMPDIR behind: neither its running command's (one that outlives it) nor the one made ahead", async () => {
  const r = root()
  const fixture = join(__dirname, 'fixtures', 'confined-exit-host.js')
  for (const how of ['exit', 'end']) {
    const child = spawnSync(NODE, [fixture, how, r], { encoding: 'utf8', timeout: 30_000 })
    assert.equal(child.status, 0, `${how}: ${child.stderr}`)
    const { pid, dirs } = JSON.parse(child.stdout) as { pid: number; dirs: string[] }
    // The control: while the host ran, both directories were there.
    assert.equal(dirs.length, 2, `${how}: the command's TMPDIR and the next one's, made ahead: ${dirs}`)
    await waitFor(() => readdirSync(tmpdir()).filter((n) => n.startsWith(`neurolink-commands-tmp-${pid}-`)).length === 0, 5_000, `${how}: every private TMPDIR of host ${pid} to be removed`)
  }
})

confinedTest("each private TMPDIR is its own command's: commands of one policy, one after another and side by side, cannot write each other's", async () => {
  const r = root()
  const confined = host(r, {})
  // One after another: the engine keeps one ruleset for the policy and
  // reuses it while each earlier command's TMPDIR is removed. A later
  // command cannot make an earlier one's TMPDIR again (the temp directory
  // itself is not writable); unconfined, the same mkdir works.
  const earlier: string[] = []
  for (let i = 0; i < 3; i++) {
    const one = await sh(confined, 'echo "$TMPDIR" && echo x > "$TMPDIR/x"')
    assert.equal(one.st.exitCode, 0, one.err)
    const tmp = one.out.trimEnd()
    assert.equal(existsSync(tmp), false)
    assert.ok(!earlier.includes(tmp), 'a fresh TMPDIR per command')
    earlier.push(tmp)
  }
  const again = await sh(confined, `mkdir ${earlier[0]} && echo made`)
  assert.notEqual(again.st.exitCode, 0)
  // The command's /tmp is its own, read-only but for its TMPDIR.
  assert.match(again.err, /Read-only file system/)
  assert.equal(existsSync(earlier[0]!), false)
  const againOpen = await sh(host(r), `mkdir ${earlier[0]} && echo made`)
  assert.equal(againOpen.out, 'made\n')
  rmSync(earlier[0]!, { recursive: true })
  // Side by side: while the first runs, a second cannot write into the
  // first's TMPDIR, and writes its own.
  const first = await nc.startBackgroundCommand(confined, [SH, '-c', 'echo "$TMPDIR"; read line; echo "$line" > "$TMPDIR/mine" && cat "$TMPDIR/mine"'], {
    cwd: '.',
    stdin: 'pipe',
  })
  const firstTmp = (
    await waitFor(async () => {
      const c = (await nc.readBackgroundCommandOutput(confined, first.taskId, { stream: 'stdout' })).content
      return c.endsWith('\n') && c
    })
  ).trimEnd()
  assert.match(firstTmp, /neurolink-commands-tmp-/)
  const second = await sh(confined, `echo own > "$TMPDIR/own" && cat "$TMPDIR/own"; echo theirs > ${firstTmp}/theirs`)
  assert.equal(second.out, 'own\n')
  assert.match(second.err, /Directory nonexistent/)
  assert.equal(existsSync(join(firstTmp, 'theirs')), false)
  // The control: unconfined, the same write into the first's TMPDIR works.
  const open = await sh(host(r), `echo theirs > ${firstTmp}/theirs && echo wrote`)
  assert.equal(open.out, 'wrote\n')
  await nc.writeBackgroundCommandInput(confined, first.taskId, 'still mine\n', { end: true })
  const done = await nc.awaitBackgroundCommand(confined, first.taskId)
  assert.equal(done.exitCode, 0)
  assert.equal((await nc.readBackgroundCommandOutput(confined, first.taskId, { stream: 'stdout' })).content, `${firstTmp}\nstill mine\n`)
  assert.equal(existsSync(firstTmp), false)
})

confinedTest('a confined command cannot read a file in $HOME under the default read set', async () => {
  const r = root()
  const home = homeDir()
  writeFileSync(join(home, 'credentials'), 'aws_secret=1\n')
  const script = `cat ${home}/credentials`
  assert.equal((await sh(host(r), script)).out, 'aws_secret=1\n')
  const refused = await sh(host(r, {}), script)
  assert.notEqual(refused.st.exitCode, 0)
  // Not in the command's view at all.
  assert.match(refused.err, /No such file or directory/)
  assert.equal(refused.out, '')
  // Listed under read, it is readable.
  const listed = await sh(host(r, { read: [home] }), script)
  assert.equal(listed.out, 'aws_secret=1\n')
})

confinedTest('network: false — no TCP connect to a local listener, no UDP datagram delivered', async () => {
  const r = root()
  const server = net.createServer((s) => s.end())
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const tport = (server.address() as net.AddressInfo).port
  const udp = dgram.createSocket('udp4')
  const got: string[] = []
  udp.on('message', (m) => got.push(m.toString()))
  await new Promise<void>((ok) => udp.bind(0, '127.0.0.1', ok))
  const uport = udp.address().port
  const tcpJs = `require('net').connect(${tport},'127.0.0.1',()=>{console.log('connected');process.exit(0)}).on('error',e=>{console.error(e.code);process.exit(3)})`
  const udpJs = (tag: string) =>
    `const s=require('dgram').createSocket('udp4');s.on('error',e=>{console.error(e.code);process.exit(3)});s.send('${tag}',${uport},'127.0.0.1',e=>{if(e){console.error(e.code);process.exit(3)}console.log('sent');s.close()})`
  try {
    const control = await run(host(r), [NODE, '-e', tcpJs])
    assert.equal(control.out, 'connected\n', control.err)
    const refused = await run(host(r, {}), [NODE, '-e', tcpJs])
    assert.equal(refused.st.exitCode, 3)
    assert.match(refused.err, /EACCES|EPERM/)

    const sent = await run(host(r), [NODE, '-e', udpJs('open')])
    assert.equal(sent.out, 'sent\n', sent.err)
    await waitFor(() => got.includes('open'), 5000, 'the control datagram')
    const blocked = await run(host(r, {}), [NODE, '-e', udpJs('confined')])
    assert.equal(blocked.st.exitCode, 3)
    assert.match(blocked.err, /EACCES|EPERM/)
    // The control above arrived within milliseconds; give a stray one as long.
    await new Promise((ok) => setTimeout(ok, 300))
    assert.deepEqual(got, ['open'])

    // network: true where the policy allows it.
    const allowed = await run(host(r, { network: true }), [NODE, '-e', tcpJs])
    assert.equal(allowed.out, 'connected\n', allowed.err)
    assert.equal(allowed.st.confined, true)
  } finally {
    server.close()
    udp.close()
  }
})

confinedTest('a confined command cannot signal the host', async () => {
  const r = root()
  const script = `kill -0 ${process.pid} && echo reached`
  assert.equal((await sh(host(r), script)).out, 'reached\n')
  const refused = await sh(host(r, {}), script)
  assert.notEqual(refused.st.exitCode, 0)
  // The host is outside the command's PID namespace.
  assert.match(refused.err, /No such process/)
})

confinedTest('grandchildren, also one in a new session (setsid), are confined the same way', async () => {
  const r = root()
  const home = homeDir()
  const script = (tag: string) => `${SETSID} ${BASH} -c 'echo g > ${home}/${tag}; echo $? > ${r}/${tag}.status; kill -0 ${process.pid}; echo $? >> ${r}/${tag}.status' & wait`
  await sh(host(r), script('open'))
  await sh(host(r, {}), script('confined'))
  const status = (tag: string) =>
    waitFor(
      () => existsSync(join(r, `${tag}.status`)) && readFileSync(join(r, `${tag}.status`), 'utf8').split('\n').length > 2 && readFileSync(join(r, `${tag}.status`), 'utf8'),
      10_000,
      `${tag} grandchild`,
    )
  assert.equal(await status('open'), '0\n0\n')
  assert.equal(existsSync(join(home, 'open')), true)
  assert.equal(await status('confined'), '1\n1\n', 'the setsid grandchild can neither write $HOME nor signal the host')
  assert.equal(existsSync(join(home, 'confined')), false)
})

confinedTest('options.confine only narrows; policy.confine is validated', async () => {
  const r = root()
  const sibling = root()
  const h = host(r, {})
  mkdirSync(join(r, 'sub'))
  // Narrowing is accepted: only `sub` is writable now.
  const narrowed = await sh(h, 'echo a > sub/a && echo b > b', { confine: { write: [join(r, 'sub')] } })
  assert.notEqual(narrowed.st.exitCode, 0)
  assert.equal(existsSync(join(r, 'sub', 'a')), true)
  assert.equal(existsSync(join(r, 'b')), false)
  const widen: [nc.Confinement, RegExp][] = [
    [{ write: [sibling] }, /is not inside any of the policy's write trees/],
    [{ read: 'all' }, /read: "all" is allowed only where the policy's read is "all"/],
    [{ network: true }, /network: true is allowed only where the policy's network is true/],
    [{ tmp: 'shared' }, /tmp: "shared"/],
    [{ read: [homedir()] }, /is not inside the policy's read set/],
  ]
  for (const [confine, phrase] of widen) {
    await assert.rejects(nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.', confine }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'NLC_INVALID_ARGUMENT')
      assert.match(e.message, /options\.confine may only narrow the policy's confinement, never widen it/)
      assert.match(e.message, phrase)
      return true
    })
  }
  await assert.rejects(nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.', confine: false as never }), coded('NLC_INVALID_ARGUMENT', /options\.confine must be a Confinement object/))
  // Under an unconfined policy any options.confine narrows.
  const unconfined = host(r)
  const c = await sh(unconfined, `echo x > ${sibling}/x`, { confine: { read: 'all', network: true } })
  assert.equal(c.st.confined, true)
  assert.match(c.err, /Directory nonexistent/)
  assert.throws(() => host(r, { write: [join(r, 'missing')] }), coded('NLC_INVALID_ARGUMENT', /policy\.confine\.write entry .* is not an existing directory/))
  assert.throws(() => host(r, { tmp: 'nope' as never }), coded('NLC_INVALID_ARGUMENT', /policy\.confine\.tmp must be "private" or "shared"/))
  assert.throws(() => host(r, true as never), coded('NLC_INVALID_ARGUMENT', /policy\.confine must be false or a Confinement object/))
  // confine: false is the explicit way to run unconfined.
  assert.equal((await sh(host(r, false), 'true')).st.confined, false)
})

/** An assert.throws/rejects validator: the error carries `code` and its message matches `phrase`. */
function coded(code: string, phrase: RegExp): (e: Error & { code?: string }) => boolean {
  return (e) => {
    assert.equal(e.code, code, e.message)
    assert.match(e.message, phrase)
    return true
  }
}

/** Run a script in a fresh node process whose engine believes the given overrides. */
function withOverrides(env: Record<string, string>, body: string): string {
  const script = `
    const nc = require(${JSON.stringify(join(import.meta.dirname, '..', 'index.js'))});
    (async () => { ${body} })().catch((e) => { console.log('UNEXPECTED ' + e.message); process.exit(1) })`
  return execFileSync(NODE, ['-e', script], { env: { ...process.env, ...env }, encoding: 'utf8' })
}

test('fail closed: without the Landlock ABI needed nothing starts, and the refusal names what is missing and confine: false', () => {
  const r = root()
  const out = withOverrides(
    { NEUROLINK_COMMANDS_TEST_LANDLOCK_ABI: '0' },
    `
    const s = nc.confinementSupport();
    console.log(JSON.stringify(s));
    const h = {};
    nc.setBackgroundCommandPolicy(h, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(r)}, confine: {} });
    try { await nc.startBackgroundCommand(h, ['/bin/sh', '-c', 'echo ran > ran'], { cwd: '.' }); console.log('STARTED') }
    catch (e) { console.log('REFUSED ' + e.code + ' ' + e.message) }
    const u = {};
    nc.setBackgroundCommandPolicy(u, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(r)}, confine: false });
    const t = await nc.startBackgroundCommand(u, ['/bin/sh', '-c', 'echo ran > unconfined'], { cwd: '.' });
    const st = await nc.awaitBackgroundCommand(u, t.taskId);
    console.log('UNCONFINED ' + st.exitCode + ' ' + st.confined);
    `,
  )
  const [support, refused, unconfined] = out.trimEnd().split('\n')
  const { namespaces, namespacesWhyNot, ...landlock } = JSON.parse(support!)
  assert.deepEqual(landlock, { landlockAbi: 0, filesystem: false, network: false, signals: false, seccomp: true })
  // The namespaces are measured on their own (qemu-user does not make them
  // for a new process; natively they are there).
  if (!LANDLOCK_HIDDEN) assert.deepEqual([namespaces, namespacesWhyNot], [true, undefined])
  assert.match(refused!, /^REFUSED NLC_CONFINEMENT_UNAVAILABLE Confinement was asked for, but this kernel cannot enforce all of it: Landlock ABI 6 .* is needed, this kernel offers none \(ABI 0\)/)
  assert.match(refused!, /Nothing was started/)
  assert.match(refused!, /set confine: false in the policy/)
  assert.equal(existsSync(join(r, 'ran')), false)
  assert.equal(unconfined, 'UNCONFINED 0 false')
  assert.equal(readFileSync(join(r, 'unconfined'), 'utf8'), 'ran\n')
  // Under qemu-user the kernel's Landlock is hidden (ABI 0 whatever the cap;
  // see LANDLOCK_HIDDEN), so an ABI-4 cap and a seccomp-only refusal cannot be
  // told apart from "none": the refusal above is what holds there.
  if (LANDLOCK_HIDDEN) return

  // An older ABI is named; without seccomp every confined start is refused
  // (its filter refuses privileged calls whatever the network).
  const old = withOverrides(
    { NEUROLINK_COMMANDS_TEST_LANDLOCK_ABI: '4' },
    `const h = {}; nc.setBackgroundCommandPolicy(h, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(r)}, confine: { network: true } });
     try { await nc.startBackgroundCommand(h, ['/bin/sh', '-c', 'true'], { cwd: '.' }) } catch (e) { console.log(e.code + ' ' + e.message) }`,
  )
  assert.match(old, /^NLC_CONFINEMENT_UNAVAILABLE .*Landlock ABI 6 .* is needed, this kernel offers ABI 4/)
  const noSeccomp = withOverrides(
    { NEUROLINK_COMMANDS_TEST_SECCOMP: '0' },
    `const h = {}; nc.setBackgroundCommandPolicy(h, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(r)}, confine: { network: true } });
     try { await nc.startBackgroundCommand(h, ['/bin/sh', '-c', 'true'], { cwd: '.', confine: { network: false } }); console.log('STARTED') } catch (e) { console.log(e.code + ' ' + e.message) }
     try { await nc.startBackgroundCommand(h, ['/bin/sh', '-c', 'true'], { cwd: '.' }); console.log('STARTED') } catch (e) { console.log(e.code + ' ' + e.message) }`,
  )
  const [offline, online] = noSeccomp.trim().split('\n')
  assert.match(
    offline,
    /^NLC_CONFINEMENT_UNAVAILABLE .*seccomp filters \(to refuse BPF, perf events, keyrings, device nodes, terminal input injection, and UDP and non-unix sockets under network: false\) are not available/,
  )
  assert.match(online, /^NLC_CONFINEMENT_UNAVAILABLE .*seccomp filters \(to refuse BPF, perf events, keyrings, device nodes and terminal input injection\) are not available/)
})

function makeRepo(): string {
  const repo = root()
  const g = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.test', ...args], { cwd: repo, encoding: 'utf8' })
  g('init', '-q', '-b', 'main')
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n')
  g('add', '.')
  g('commit', '-q', '-m', 'first')
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\nthree\n')
  g('commit', '-q', '-am', 'second')
  return repo
}

confinedTest('the git toolset is confined and still answers all six tools on a real repository', async () => {
  const repo = makeRepo()
  const h = {}
  const s = nc.configureGitTools(h, { repoRoot: repo })
  assert.equal(s.confined, true)
  assert.equal(s.confinedWhyNot, undefined)
  const tools = nc.createGitTools(h)
  const ok = async (name: keyof nc.GitTools, params: object) => {
    const r = (await tools[name]!.execute(params)) as nc.GitToolResult
    assert.equal(r.ok, true, `${name}: ${JSON.stringify(r)}`)
    return r.preview
  }
  assert.match(await ok('git_log', {}), /second\n.*first/s)
  assert.match(await ok('git_show', { ref: 'HEAD' }), /\+three/)
  assert.match(await ok('git_diff', { base: 'HEAD~1', head: 'HEAD' }), /\+three/)
  assert.match(await ok('git_blame', { path: 'a.txt' }), /three/)
  assert.match(await ok('git_merge_base', { base: 'HEAD', head: 'HEAD~1' }), /^[0-9a-f]{40}\n$/)
  assert.equal(await ok('git_ls_files', {}), 'a.txt\n')

  // Switched off, it says so and runs unconfined.
  const off = {}
  const o = nc.configureGitTools(off, { repoRoot: repo, confine: false })
  assert.deepEqual([o.confined, o.confinedWhyNot], [false, 'the git toolset was configured with confine: false'])
  assert.equal((await nc.runGitCommand(off, ['ls-files'])).preview, 'a.txt\n')

  // Made to believe the kernel has no Landlock, git runs as before, unconfined.
  const out = withOverrides(
    { NEUROLINK_COMMANDS_TEST_LANDLOCK_ABI: '0' },
    `const h = {}; const s = nc.configureGitTools(h, { repoRoot: ${JSON.stringify(repo)} });
     console.log(JSON.stringify([s.confined, s.confinedWhyNot]));
     console.log((await nc.runGitCommand(h, ['ls-files'])).preview)`,
  )
  const [flags, listed] = out.split('\n')
  const [confined, why] = JSON.parse(flags!)
  assert.equal(confined, false)
  assert.match(why, /Landlock ABI 6 .* is needed, this kernel offers none/)
  assert.equal(listed, 'a.txt')
})

confinedTest("a hostile repository's programs, were they to run under the git toolset, could neither write nor reach the network", async () => {
  const repo = makeRepo()
  const home = homeDir()
  const server = net.createServer((s) => s.end())
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const port = (server.address() as net.AddressInfo).port
  // A "git" that first acts as a hostile program would (only when asked for
  // the log, so the configuration listing before the run stays plain), then
  // runs the real git.
  const bin = root()
  const fakeGit = join(bin, 'git')
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
  writeFileSync(
    fakeGit,
    `#!${BASH}
case " $* " in *" log "*)
  echo pwned 2>/dev/null > ${repo}/pwned-repo; echo "repo:$?" >&2
  echo pwned 2>/dev/null > ${home}/pwned-home; echo "home:$?" >&2
  (echo hi > /dev/tcp/127.0.0.1/${port}) 2>/dev/null; echo "tcp:$?" >&2
  ;;
esac
exec ${realGit} "$@"
`,
  )
  chmodSync(fakeGit, 0o755)
  try {
    const h = {}
    assert.equal(nc.configureGitTools(h, { repoRoot: repo, gitExecutable: fakeGit }).confined, true)
    const r = await nc.runGitCommand(h, ['log', '--oneline'])
    assert.equal(r.ok, true)
    assert.match(r.preview, /second/)
    assert.equal(r.stderrPreview, 'repo:1\nhome:1\ntcp:1\n')
    assert.equal(existsSync(join(repo, 'pwned-repo')), false)
    assert.equal(existsSync(join(home, 'pwned-home')), false)
    // Control: the same program run unconfined does all three.
    const ran = spawnSync(fakeGit, ['log', '--oneline'], { cwd: repo, encoding: 'utf8' })
    assert.equal(ran.stderr, 'repo:0\nhome:0\ntcp:0\n')
    assert.equal(existsSync(join(repo, 'pwned-repo')), true)
  } finally {
    server.close()
  }
})

confinedTest('the host is not confined afterwards: its main thread and a worker thread still write and connect', async () => {
  const r = root()
  const home = homeDir()
  const h = host(r, {})
  assert.equal((await sh(h, 'true')).st.confined, true)
  const server = net.createServer((s) => s.end())
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const port = (server.address() as net.AddressInfo).port
  try {
    writeFileSync(join(home, 'main-thread'), 'ok')
    await new Promise<void>((ok, fail) => net.connect(port, '127.0.0.1', ok).on('error', fail))
    const w = new Worker(
      `const { writeFileSync } = require('node:fs'); const net = require('node:net');
       const { parentPort, workerData } = require('node:worker_threads');
       writeFileSync(workerData.file, 'ok');
       net.connect(workerData.port, '127.0.0.1', () => parentPort.postMessage('connected')).on('error', (e) => parentPort.postMessage(e.code));`,
      { eval: true, workerData: { file: join(home, 'worker-thread'), port } },
    )
    const msg = await new Promise((ok) => w.once('message', ok))
    await w.terminate()
    assert.equal(msg, 'connected')
    assert.equal(readFileSync(join(home, 'worker-thread'), 'utf8'), 'ok')
  } finally {
    server.close()
  }
})

confinedTest('real tools work under the default confinement: node, npm and pnpm scripts, python3 multiprocessing, git', async () => {
  const r = root()
  writeFileSync(join(r, 'package.json'), JSON.stringify({ name: 'probe', version: '1.0.0', scripts: { hi: 'node -e "console.log(6*7)"' } }))
  writeFileSync(join(r, 'mp.py'), 'import multiprocessing as mp\nif __name__ == "__main__":\n    with mp.Pool(2) as p:\n        print(p.map(abs, [-1, -2]))\n')
  const tools = ['/usr/bin/npm', '/usr/bin/pnpm', '/usr/bin/python3', '/usr/bin/git'].filter((t) => existsSync(t))
  const h = {}
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: [NODE, SH, ...tools], cwdRoot: r, confine: {} })
  const ok = async (argv: string[]) => {
    const x = await run(h, argv)
    assert.equal(x.st.exitCode, 0, `${argv.join(' ')}: ${x.err}`)
    assert.equal(x.st.confined, true)
    return x.out
  }
  assert.equal(await ok([NODE, '-e', 'console.log(require("os").tmpdir().includes("neurolink-commands-tmp-"))']), 'true\n')
  if (tools.includes('/usr/bin/npm')) assert.match(await ok(['/usr/bin/npm', 'run', 'hi']), /\n42\n/)
  if (tools.includes('/usr/bin/pnpm')) assert.match(await ok(['/usr/bin/pnpm', 'run', 'hi']), /^42\n/m)
  if (tools.includes('/usr/bin/python3')) assert.equal(await ok(['/usr/bin/python3', 'mp.py']), '[1, 2]\n')
  assert.equal(await ok([SH, '-c', 'git init -q . && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m m && git log --format=%s']), 'm\n')
})

confinedTest('fail closed for real: where user namespaces are refused, level "full" starts nothing and names the ways out; level "landlock" runs', () => {
  const r = root()
  // The host runs in a user namespace of its own whose
  // user.max_user_namespaces is 0 (the same sysctl an administrator sets for
  // the whole machine); the control runs in one that allows them.
  const body = `
    const nc = require(${JSON.stringify(join(import.meta.dirname, '..', 'index.js'))});
    (async () => {
      const s = nc.confinementSupport();
      console.log(JSON.stringify([s.namespaces, s.namespacesWhyNot ?? null]));
      const h = {};
      nc.setBackgroundCommandPolicy(h, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(r)}, confine: {} });
      try {
        const t = await nc.startBackgroundCommand(h, ['/bin/sh', '-c', 'echo ran > full'], { cwd: '.' });
        console.log('FULL ' + (await nc.awaitBackgroundCommand(h, t.taskId)).exitCode);
      } catch (e) { console.log('REFUSED ' + e.code + ' ' + e.message) }
      const l = {};
      nc.setBackgroundCommandPolicy(l, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(r)}, confine: { level: 'landlock' } });
      const t = await nc.startBackgroundCommand(l, ['/bin/sh', '-c', 'echo ran > landlock'], { cwd: '.' });
      const st = await nc.awaitBackgroundCommand(l, t.taskId);
      console.log('LANDLOCK ' + st.exitCode + ' ' + st.confined);
    })().catch((e) => { console.log('UNEXPECTED ' + e.message); process.exit(1) })`
  const inNamespace = (limit: string) => execFileSync('unshare', ['-Ur', 'sh', '-c', `echo ${limit} > /proc/sys/user/max_user_namespaces && exec "$0" -e "$1"`, NODE, body], { encoding: 'utf8' })
  const [support, full, landlock] = inNamespace('0').trimEnd().split('\n')
  const [namespaces, whyNot] = JSON.parse(support!)
  assert.equal(namespaces, false)
  assert.match(whyNot, /user\.max_user_namespaces is 0/)
  assert.match(full!, /^REFUSED NLC_CONFINEMENT_UNAVAILABLE .*user namespaces are refused on this host/)
  assert.match(full!, /confine\.level: "landlock"/)
  assert.match(full!, /confine: false/)
  assert.equal(existsSync(join(r, 'full')), false)
  assert.equal(landlock, 'LANDLOCK 0 true')
  assert.equal(readFileSync(join(r, 'landlock'), 'utf8'), 'ran\n')
  // Control: with user namespaces allowed, the same "full" start runs.
  const [support2, full2] = inNamespace('100').trimEnd().split('\n')
  assert.equal(support2, '[true,null]')
  assert.equal(full2, 'FULL 0')
  assert.equal(readFileSync(join(r, 'full'), 'utf8'), 'ran\n')
})

confinedTest('as nobody: the sandbox holds for an unprivileged host too (metadata of its own files outside the write trees, a daemon socket it may use), with the unconfined control', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'nlc-nobody-')))
  scratch.push(base)
  const r = join(base, 'root')
  const d = join(base, 'data')
  const logs = join(base, 'logs')
  for (const p of [r, d, logs]) mkdirSync(p)
  writeFileSync(join(d, 'f'), 'mine\n')
  execFileSync('chown', ['-R', 'nobody:nogroup', base])
  chmodSync(base, 0o755)
  const sock = join(base, 'daemon.sock')
  const server = net.createServer((c) => c.end('hello\n'))
  const body = (confine: string) => `
    const nc = require(${JSON.stringify(join(import.meta.dirname, '..', 'index.js'))});
    (async () => {
      const h = {};
      nc.setBackgroundCommandPolicy(h, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(r)}, confine: ${confine} });
      const script = 'id -u; echo $$; echo w > mine && cat mine; chmod 600 ${d}/f; echo chmod=$?; ' +
        'python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect(\\'${sock}\\'); print(s.recv(6).decode(), end=\\'\\')" 2>/dev/null; echo connect=$?';
      const t = await nc.startBackgroundCommand(h, ['/bin/sh', '-c', script], { cwd: '.' });
      const st = await nc.awaitBackgroundCommand(h, t.taskId);
      console.log(JSON.stringify([st.confined, (await nc.readBackgroundCommandOutput(h, t.taskId, { stream: 'stdout' })).content]));
    })().catch((e) => { console.log('UNEXPECTED ' + e.message); process.exit(1) })`
  const asNobody = (confine: string) =>
    new Promise<string>((resolve, reject) => {
      const c = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', NODE, '-e', body(confine)], {
        env: { ...process.env, HOME: '/nonexistent', TMPDIR: logs },
        cwd: base,
      })
      let out = ''
      c.stdout.on('data', (b) => (out += b))
      c.on('error', reject)
      c.on('close', () => resolve(out))
    })
  return new Promise<void>((resolve, reject) => {
    server.listen(sock, async () => {
      try {
        chmodSync(sock, 0o777)
        const confined = JSON.parse(await asNobody('{}'))
        assert.deepEqual(confined, [true, '65534\n1\nw\nchmod=1\nconnect=1\n'])
        assert.equal(readFileSync(join(r, 'mine'), 'utf8'), 'w\n')
        // Control: the same host unconfined changes the mode and talks to the daemon.
        const open = JSON.parse(await asNobody('false'))
        assert.match(open[1], /^65534\n\d+\nw\nchmod=0\nhello\nconnect=0\n$/)
        resolve()
      } catch (e) {
        reject(e)
      } finally {
        server.close()
      }
    })
  })
})

confinedTest('read "all": a daemon\'s socket outside the write trees is refused (EACCES) and counted; granted or unconfined it is reached', async () => {
  const r = root()
  const home = homeDir()
  const path = join(home, 'd.sock')
  let connections = 0
  const server = net.createServer((c) => {
    connections++
    c.destroy()
  })
  await new Promise<void>((resolve) => server.listen(path, resolve))
  const js = `require('net').connect(${JSON.stringify(path)},()=>{console.log('connected');process.exit(0)}).on('error',e=>{console.log(e.code);process.exit(3)})`
  try {
    const refused = await run(host(r, { read: 'all' }), [NODE, '-e', js])
    assert.equal(refused.out, 'EACCES\n', refused.err)
    assert.deepEqual(refused.st.confinementNotes, [
      "1 connection attempt to a unix socket outside the write trees was refused (a daemon's socket is not reachable from a confined command); to allow one, make the socket's directory a write tree with the policy's confine.write",
    ])
    assert.equal(connections, 0)
    // Controls: the directory a write tree, and unconfined.
    const granted = await run(host(r, { read: 'all', write: [r, home] }), [NODE, '-e', js])
    assert.equal(granted.out, 'connected\n', granted.err)
    assert.equal(granted.st.confinementNotes, undefined)
    const control = await run(host(r, false), [NODE, '-e', js])
    assert.equal(control.out, 'connected\n', control.err)
    await waitFor(() => connections === 2, 5_000, 'both connections')
  } finally {
    server.close()
  }
})
