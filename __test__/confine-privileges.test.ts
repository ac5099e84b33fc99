// SPEC §8 "No privileges" and "What it was refused", with real processes,
// this kernel's seccomp and capabilities, a real terminal (tmux) and a real
// second user: each refused action is paired with the same action run
// unconfined, which succeeds.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'

import { nc, tempRoot } from './helpers.ts'
import { ReferenceHost } from './reference-host.ts'

const PY = '/usr/bin/python3'
const NODE = process.execPath
const PROBE = join(import.meta.dirname, 'fixtures', 'privileged.py')
const ADDON = join(import.meta.dirname, '..', 'index.js')
const AS_NOBODY = ['--reuid=nobody', '--regid=nogroup', '--clear-groups']

// Landlock is hidden under qemu-user (see confine.test.ts): there no confined
// command runs at all, which confine.test.ts checks.
const NATIVE = process.env.NLC_TEST_QEMU !== '1' && process.platform === 'linux'
/**
 * Root of the machine: uid 0 in the initial user namespace (the platform
 * runner's suites run as a namespace's root, which holds no privilege over
 * devices, BPF or other terminals, so the controls could not succeed there).
 */
const ROOT =
  process.getuid?.() === 0 &&
  (() => {
    try {
      return readFileSync('/proc/self/uid_map', 'utf8').trim().split(/\s+/).join(' ') === '0 0 4294967295'
    } catch {
      return false
    }
  })()

/** A root `nobody` can enter and write in (the probe makes device nodes there), holding the probe (a confined command reads nothing outside). */
function root(): string {
  const r = tempRoot('nlc-priv-')
  chmodSync(r, 0o777)
  copyFileSync(PROBE, join(r, 'privileged.py'))
  return r
}

/** The probe's lines as { action: outcome }. */
function lines(out: string): Record<string, string> {
  return Object.fromEntries(
    out
      .trim()
      .split(/\r?\n/)
      .map((l) => {
        const at = l.indexOf(' ')
        return [l.slice(0, at), l.slice(at + 1)]
      }),
  )
}

async function probe(r: string, actions: string[], confine: nc.Confinement | false, terminal = false): Promise<Record<string, string>> {
  const h = {}
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: [PY], cwdRoot: r, confine })
  const { taskId } = await nc.startBackgroundCommand(h, [PY, 'privileged.py', ...actions], { cwd: '.', terminal })
  const st = await nc.awaitBackgroundCommand(h, taskId)
  const out = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })).content
  const err = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stderr' })).content
  assert.equal(st.exitCode, 0, `${out}${err}`)
  assert.equal(st.confined, confine !== false)
  return lines(out)
}

const EMPTY = '0000000000000000'
const PRIVILEGED = ['caps', 'mknod=block', 'mknod=char', 'mknod=fifo', 'bpf', 'perf', 'add_key', 'mount']
// In the command's own terminal (its controlling one): TIOCSTI needs no
// capability there, so only the filter stands between it and the input.
const TTY = ['tiocsti=,x', 'tiocsti-high=,y', 'tioclinux=']

test('as root: a confined command holds no capabilities and is refused BPF, perf events, keyrings, device nodes and mounts', { skip: !NATIVE || !ROOT }, async () => {
  const r = root()
  const control = await probe(r, PRIVILEGED, false)
  assert.match(control.caps, /^CapInh=0{16} CapPrm=0*[1-9a-f][0-9a-f]* CapEff=0*[1-9a-f][0-9a-f]* CapBnd=0*[1-9a-f][0-9a-f]* CapAmb=0{16} NoNewPrivs=0$/)
  assert.deepEqual({ ...control, caps: undefined }, { caps: undefined, 'mknod-block': 'ok', 'mknod-char': 'ok', 'mknod-fifo': 'ok', bpf: 'ok', perf: 'ok', add_key: 'ok', mount: 'ok' })
  const confined = await probe(r, PRIVILEGED, {})
  assert.deepEqual(confined, {
    caps: `CapInh=${EMPTY} CapPrm=${EMPTY} CapEff=${EMPTY} CapBnd=${EMPTY} CapAmb=${EMPTY} NoNewPrivs=1`,
    'mknod-block': 'EPERM',
    'mknod-char': 'EPERM',
    // Not a device: allowed, in a write tree.
    'mknod-fifo': 'ok',
    bpf: 'EPERM',
    perf: 'EPERM',
    add_key: 'EPERM',
    // Landlock refuses every mount (and no capability is left to mount with).
    mount: 'EPERM',
  })
  // The probe removes what it made.
  assert.deepEqual(readdirSync(r), ['privileged.py'])
})

test('a confined command cannot push input into its own terminal (TIOCSTI, also with high bits set) nor use TIOCLINUX', { skip: !NATIVE }, async () => {
  const r = root()
  // Unconfined the characters are pushed (TIOCSTI into its controlling
  // terminal needs no capability), and TIOCLINUX is unknown to a
  // pseudo-terminal.
  assert.deepEqual(await probe(r, TTY, false, true), { tiocsti: 'ok', 'tiocsti-high': 'ok', tioclinux: 'ENOTTY' })
  assert.deepEqual(await probe(r, TTY, {}, true), { tiocsti: 'EPERM', 'tiocsti-high': 'EPERM', tioclinux: 'EPERM' })
})

/** Run `script` (CommonJS, the addon as `nc`) in a node host as `nobody`; its stdout. */
function asNobody(script: string): string {
  const tmp = tempRoot('nlc-priv-tmp-')
  chmodSync(tmp, 0o777)
  const r = spawnSync(
    'setpriv',
    [
      ...AS_NOBODY,
      NODE,
      '-e',
      `const nc = require(${JSON.stringify(ADDON)});\nnc.configureLogs({ removeOnExit: true });\n(async () => {\n${script}\n})().catch((e) => { console.log('FAILED ' + e.stack); process.exitCode = 1 })`,
    ],
    {
      encoding: 'utf8',
      env: { ...process.env, HOME: '/nonexistent', TMPDIR: tmp },
      timeout: 60_000,
    },
  )
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`)
  return r.stdout
}

test('as nobody: a confined command holds no capabilities, gains none, and is refused perf events, keyrings and terminal input', { skip: !NATIVE || !ROOT }, () => {
  const r = root()
  const out = asNobody(`
    const run = async (actions, confine, terminal) => {
      const h = {}
      nc.setBackgroundCommandPolicy(h, { allowedExecutables: [${JSON.stringify(PY)}], cwdRoot: ${JSON.stringify(r)}, confine })
      const { taskId } = await nc.startBackgroundCommand(h, [${JSON.stringify(PY)}, 'privileged.py', ...actions], { cwd: '.', terminal })
      const st = await nc.awaitBackgroundCommand(h, taskId)
      const out = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })).content
      console.log(JSON.stringify({ confined: st.confined, exitCode: st.exitCode, out }))
    }
    await run(['caps', 'perf', 'add_key', 'mknod=block'], false, false)
    await run(['caps', 'perf', 'add_key', 'mknod=block'], {}, false)
    await run(${JSON.stringify(TTY)}, false, true)
    await run(${JSON.stringify(TTY)}, {}, true)
  `)
  const [control, confined, ttyControl, ttyConfined] = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { confined: boolean; exitCode: number; out: string })
  for (const x of [control, confined, ttyControl, ttyConfined]) assert.equal(x.exitCode, 0, JSON.stringify(x))
  assert.deepEqual([control.confined, confined.confined, ttyControl.confined, ttyConfined.confined], [false, true, false, true])
  const c = lines(control.out)
  // An ordinary user has no capabilities to drop, and no right to make a
  // device node confined or not; perf events and keyrings it has.
  assert.match(c.caps, new RegExp(`CapPrm=${EMPTY} CapEff=${EMPTY} .*NoNewPrivs=0`))
  assert.deepEqual({ perf: c.perf, add_key: c.add_key, mknod: c['mknod-block'] }, { perf: 'ok', add_key: 'ok', mknod: 'EPERM' })
  const k = lines(confined.out)
  assert.match(k.caps, new RegExp(`^CapInh=${EMPTY} CapPrm=${EMPTY} CapEff=${EMPTY} CapBnd=[0-9a-f]{16} CapAmb=${EMPTY} NoNewPrivs=1$`))
  assert.deepEqual({ perf: k.perf, add_key: k.add_key, mknod: k['mknod-block'] }, { perf: 'EPERM', add_key: 'EPERM', mknod: 'EPERM' })
  assert.deepEqual(lines(ttyControl.out), { tiocsti: 'ok', 'tiocsti-high': 'ok', tioclinux: 'ENOTTY' })
  assert.deepEqual(lines(ttyConfined.out), { tiocsti: 'EPERM', 'tiocsti-high': 'EPERM', tioclinux: 'EPERM' })
})

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', `nlc-priv-${process.pid}`, ...args], { encoding: 'utf8' })
}

/**
 * A host running in a real terminal (a tmux pane, its shell waiting below
 * it) starts a command that opens the pane's terminal and pushes
 * `touch <marker>` into it. Returns whether the shell ran it once the host
 * exited, and what the pane shows.
 */
async function pushIntoHostTerminal(confine: nc.Confinement | false): Promise<{ ran: boolean; pane: string }> {
  const r = root()
  const marker = join(r, 'pushed')
  const done = join(r, 'host-done')
  const hostScript = join(r, 'host.cjs')
  writeFileSync(
    hostScript,
    `const nc = require(${JSON.stringify(ADDON)})
const { readlinkSync } = require('node:fs')
;(async () => {
  const pts = readlinkSync('/proc/self/fd/0')
  const h = {}
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: [${JSON.stringify(PY)}], cwdRoot: ${JSON.stringify(r)}, confine: ${JSON.stringify(confine)} })
  const { taskId } = await nc.startBackgroundCommand(h, [${JSON.stringify(PY)}, 'privileged.py', 'tiocsti=' + pts + ',touch ${marker}\\\\n'], { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(h, taskId)
  const out = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })).content
  const err = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stderr' })).content.trim()
  console.log('HOST ' + st.confined + ' ' + out.trim() + (err ? ' ERR ' + err.split('\\n').pop() : ''))
})()
`,
  )
  const session = `p${process.pid}`
  tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '50', '/bin/bash', '--norc', '--noprofile')
  // kill-server leaves the server's socket file behind: removed too.
  const socket = tmux('display-message', '-p', '-t', session, '#{socket_path}').trim()
  try {
    tmux('send-keys', '-t', session, `${NODE} ${hostScript}; touch ${done}`, 'Enter')
    const deadline = Date.now() + 30_000
    while (!existsSync(done) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50))
    assert.ok(existsSync(done), tmux('capture-pane', '-p', '-t', session))
    // Whatever was pushed sits in the terminal's input after the host's
    // line: the shell reads it next. A command that marks its end shows
    // when the shell has read everything before it.
    const end = join(r, 'shell-read')
    tmux('send-keys', '-t', session, `touch ${end}`, 'Enter')
    while (!existsSync(end) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50))
    assert.ok(existsSync(end), tmux('capture-pane', '-p', '-t', session))
    return { ran: existsSync(marker), pane: tmux('capture-pane', '-p', '-t', session) }
  } finally {
    tmux('kill-server')
    rmSync(socket, { force: true })
    rmSync(r, { recursive: true, force: true })
  }
}

test('a confined command cannot push input into the terminal the host runs in (tmux): the shell runs nothing', { skip: !NATIVE || !ROOT }, async () => {
  const control = await pushIntoHostTerminal(false)
  assert.equal(control.ran, true, control.pane)
  assert.match(control.pane, /HOST false tiocsti ok/)
  // Level "full": the host's terminal is not even in the command's view
  // (its /dev/pts is a private instance).
  const confined = await pushIntoHostTerminal({})
  assert.match(confined.pane, /HOST true +ERR FileNotFoundError: \[Errno 2\] No such file or directory: '\/dev\/pts\/\d+'/)
  assert.equal(confined.ran, false, confined.pane)
  // Level "landlock": the terminal can be opened, and the filter refuses the push.
  const filtered = await pushIntoHostTerminal({ level: 'landlock' })
  assert.match(filtered.pane, /HOST true tiocsti EPERM/)
  assert.equal(filtered.ran, false, filtered.pane)
})

/** A node script making `n` TCP connection attempts to 127.0.0.1:`port`, printing each outcome. */
function connects(port: number, n: number): string {
  return `const net = require('node:net')
let left = ${n}
const next = () => {
  if (left-- === 0) return
  const s = net.connect(${port}, '127.0.0.1')
  s.on('connect', () => { console.log('connected'); s.end(); next() })
  s.on('error', (e) => { console.log(e.code); next() })
}
next()`
}

test("a confined command's refused connections are named in its status and in command_status: network is off, with the count", { skip: !NATIVE }, async () => {
  const server = net.createServer((s) => s.end())
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res))
  const port = (server.address() as net.AddressInfo).port
  try {
    const r = tempRoot('nlc-refused-')
    const h = {}
    nc.setBackgroundCommandPolicy(h, { allowedExecutables: [NODE], cwdRoot: r, confine: { network: true } })
    const run = async (confine: nc.Confinement) => {
      const t0 = Date.now()
      const { taskId } = await nc.startBackgroundCommand(h, [NODE, '-e', connects(port, 3)], { cwd: '.', confine })
      const st = await nc.awaitBackgroundCommand(h, taskId)
      const out = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })).content
      return { st, out, ms: Date.now() - t0 }
    }
    const control = await run({ network: true })
    assert.equal(control.out, 'connected\nconnected\nconnected\n')
    assert.equal(control.st.confined, true)
    assert.equal(control.st.confinementNotes, undefined)
    const refused = await run({ network: false })
    assert.equal(refused.out, 'EACCES\nEACCES\nEACCES\n')
    assert.deepEqual(refused.st.confinementNotes, [
      "network is off: 3 connection attempts were refused (a confined command may open unix sockets only); allow network with the policy's confine.network: true",
    ])
    assert.ok(refused.ms < 10_000, `${refused.ms} ms`)
    // The status stays so, and an unconfined command has no notes.
    assert.deepEqual(nc.getBackgroundCommandStatus(h, refused.st.taskId).confinementNotes, refused.st.confinementNotes)

    // The tool result carries it too.
    const host = new ReferenceHost(`priv-tools-${process.pid}`)
    host.registerBackgroundCommandTools({ allowedExecutables: [NODE], cwdRoot: r, confine: {} })
    const started = (await host.executeTool('run_command_bg', { argv: [NODE, '-e', connects(port, 1)] })) as nc.BackgroundCommandHandle
    const status = (await host.executeTool('command_status', { taskId: started.taskId, waitMs: 20_000 })) as nc.BackgroundCommandStatus
    assert.equal(status.state, 'exited')
    assert.deepEqual(status.confinementNotes, [
      "network is off: 1 connection attempt was refused (a confined command may open unix sockets only); allow network with the policy's confine.network: true",
    ])
  } finally {
    server.close()
  }
})

test('a confined npm fails fast against a registry, and its status says network is off', { skip: !NATIVE }, async () => {
  const npm = execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim()
  const r = tempRoot('nlc-npm-')
  const h = {}
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: [npm], cwdRoot: r, confine: {} })
  const t0 = Date.now()
  const { taskId } = await nc.startBackgroundCommand(h, [npm, 'ping', '--registry', 'https://registry.npmjs.org/'], {
    cwd: '.',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: r, npm_config_cache: join(r, 'cache') },
  })
  const st = await nc.awaitBackgroundCommand(h, taskId)
  const ms = Date.now() - t0
  const err = (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stderr' })).content
  assert.notEqual(st.exitCode, 0, err)
  assert.ok(ms < 15_000, `npm took ${ms} ms: ${err}`)
  assert.equal(st.confinementNotes?.length, 1, err)
  assert.match(st.confinementNotes![0], /^network is off: \d+ connection attempts? (was|were) refused .*confine\.network: true$/)

  // An install fails as fast: offline, from an empty cache.
  writeFileSync(join(r, 'package.json'), '{"name":"x","version":"1.0.0"}')
  const t1 = Date.now()
  const install = await nc.startBackgroundCommand(h, [npm, 'install', 'left-pad'], {
    cwd: '.',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: r, npm_config_cache: join(r, 'cache') },
  })
  const ist = await nc.awaitBackgroundCommand(h, install.taskId)
  const ierr = (await nc.readBackgroundCommandOutput(h, install.taskId, { stream: 'stderr' })).content
  assert.notEqual(ist.exitCode, 0, ierr)
  assert.ok(Date.now() - t1 < 15_000, `npm install took ${Date.now() - t1} ms: ${ierr}`)
  assert.match(ierr, /ENOTCACHED/)

  // pnpm too (offline: from its empty store, without a connection attempt).
  const pnpm = execFileSync('sh', ['-c', 'command -v pnpm || true'], { encoding: 'utf8' }).trim()
  if (pnpm === '') return
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: [npm, pnpm], cwdRoot: r, confine: {} })
  const t2 = Date.now()
  const add = await nc.startBackgroundCommand(h, [pnpm, 'add', 'left-pad'], {
    cwd: '.',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: r, XDG_CACHE_HOME: join(r, 'xdg'), npm_config_store_dir: join(r, 'store') },
  })
  const ast = await nc.awaitBackgroundCommand(h, add.taskId)
  const aout = (await nc.readBackgroundCommandOutput(h, add.taskId, { stream: 'stdout' })).content
  assert.notEqual(ast.exitCode, 0, aout)
  assert.ok(Date.now() - t2 < 15_000, `pnpm add took ${Date.now() - t2} ms: ${aout}`)
})

const ALL = 'npm_config_fetch_retries=0\nnpm_config_offline=true\npnpm_config_fetch_retries=0\npnpm_config_offline=true\n'

test('without network npm is told to work offline and not to retry, unless the environment names it; with network it is not', { skip: !NATIVE }, async () => {
  const r = tempRoot('nlc-npmenv-')
  const h = {}
  nc.setBackgroundCommandPolicy(h, { allowedExecutables: ['/bin/sh'], cwdRoot: r, confine: { network: true } })
  const npmVars = async (confine: nc.Confinement, env?: Record<string, string>) => {
    const { taskId } = await nc.startBackgroundCommand(h, ['/bin/sh', '-c', 'env | grep -i "^p\\?npm_config_" | LC_ALL=C sort'], { cwd: '.', confine, env })
    await nc.awaitBackgroundCommand(h, taskId)
    return (await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })).content
  }
  assert.equal(await npmVars({ network: true }, { PATH: '/usr/bin:/bin' }), '')
  assert.equal(await npmVars({ network: false }, { PATH: '/usr/bin:/bin' }), ALL)
  assert.equal(
    await npmVars({ network: false }, { PATH: '/usr/bin:/bin', NPM_CONFIG_OFFLINE: 'false' }),
    'NPM_CONFIG_OFFLINE=false\nnpm_config_fetch_retries=0\npnpm_config_fetch_retries=0\npnpm_config_offline=true\n',
  )
  // The host's environment, inherited, gains them too.
  const inherited = (await npmVars({ network: false })).split('\n')
  for (const line of ALL.trim().split('\n')) {
    const name = line.split('=')[0]
    const hosts = Object.keys(process.env).find((k) => k.toLowerCase() === name)
    assert.ok(inherited.includes(hosts === undefined ? line : `${hosts}=${process.env[hosts]}`), `${line}: ${inherited.join(' ')}`)
  }
})
