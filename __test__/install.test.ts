// The install check: pack the package and its platform package as napi-rs
// publishes them, install both into a fresh TypeScript project with
// `npm install` (offline: no registry, no Rust), type-check host files
// against index.d.ts with `tsc --strict`, and run them; then install the MCP
// server's tarball with them into another fresh project (its SDK from a
// registry on the loopback serving what the repository's lockfile
// installed) and talk to its bin with the SDK's client. The
// platform package is the one of the Node running this suite, so the platform
// runner (`pnpm run test:platforms`) checks each Linux package on its own
// platform; every package's manifest is checked everywhere.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { basename, delimiter, dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'

import { tempRoot } from './helpers.ts'

const { platformOfTriple } = require('../lib/load.js') as { platformOfTriple: (t: string) => string | undefined }

const run = promisify(execFile)
const repo = resolve(__dirname, '..')

/** The napi-rs platform name of the running Node: `linux-arm64-musl`, `darwin-x64`, … */
function runningPlatform(): string {
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`
  // As npm decides: a glibc Node reports the glibc it runs on, a musl one does not.
  const header = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
  return `linux-${process.arch}-${header.glibcVersionRuntime ? 'gnu' : 'musl'}`
}

const SUPPORTED: Record<string, { triple: string; os: string; cpu: string; libc?: string }> = {
  'linux-x64-gnu': { triple: 'x86_64-unknown-linux-gnu', os: 'linux', cpu: 'x64', libc: 'glibc' },
  'linux-arm64-gnu': { triple: 'aarch64-unknown-linux-gnu', os: 'linux', cpu: 'arm64', libc: 'glibc' },
  'linux-x64-musl': { triple: 'x86_64-unknown-linux-musl', os: 'linux', cpu: 'x64', libc: 'musl' },
  'linux-arm64-musl': { triple: 'aarch64-unknown-linux-musl', os: 'linux', cpu: 'arm64', libc: 'musl' },
  'darwin-x64': { triple: 'x86_64-apple-darwin', os: 'darwin', cpu: 'x64' },
  'darwin-arm64': { triple: 'aarch64-apple-darwin', os: 'darwin', cpu: 'arm64' },
  'win32-x64-msvc': { triple: 'x86_64-pc-windows-msvc', os: 'win32', cpu: 'x64' },
}
const HERE = runningPlatform()
const PLATFORM = `neurolink-commands-${HERE}`
const BINARY = `neurolink-commands.${HERE}.node`
const TSC = join(repo, 'node_modules', 'typescript', 'bin', 'tsc')
/**
 * The Node that runs tsc: the type-check does not depend on the platform, and
 * under qemu-user tsc alone takes many minutes, so the arm64 platform runs
 * (scripts/platforms/test.sh) point this at the host's own Node. The host
 * files still run on the Node under test.
 */
const TSC_NODE = process.env.NLC_TEST_HOST_NODE || process.execPath
/** This machine's npm, run by the Node under test (see the install step). */
const NPM_CLI = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim())

/** The environment of every npm call: no Rust on PATH, no npm settings inherited from pnpm or the user, no registry. */
function cleanEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_|cargo|rustup)/i.test(k)) continue
    env[k] = v
  }
  env.PATH = ['/usr/local/bin', '/usr/bin', '/bin'].join(delimiter)
  env.HOME = home
  env.CARGO_HOME = join(home, 'no-cargo')
  env.RUSTUP_HOME = join(home, 'no-rustup')
  env.npm_config_registry = 'http://127.0.0.1:9/'
  env.npm_config_update_notifier = 'false'
  return env
}

async function sh(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  try {
    // Under qemu-user (the arm64 platform runs) tsc and npm take several times longer.
    return await run(file, args, { cwd, env, maxBuffer: 64 * 1024 * 1024, timeout: process.env.NLC_TEST_QEMU === '1' ? 600_000 : 120_000 })
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string }
    throw new Error(`${file} ${args.join(' ')} failed in ${cwd}: ${x.message}\n--- stdout\n${x.stdout ?? ''}\n--- stderr\n${x.stderr ?? ''}`)
  }
}

/** The files of a packed tarball, relative to its package/ directory. */
async function listTarball(tarball: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const { stdout } = await sh('tar', ['-tzf', tarball], cwd, env)
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('package/') && !l.endsWith('/'))
    .map((l) => l.slice('package/'.length))
    .sort()
}

const HOST_CJS = `
import * as nc from 'neurolink-commands'
import type {
  BackgroundCommandHost,
  BackgroundCommandPolicy,
  BackgroundCommandState,
  BackgroundCommandStatus,
  BankedArtifactRef,
} from 'neurolink-commands'

const host: BackgroundCommandHost = {}
const policy: BackgroundCommandPolicy = {
  allowedExecutables: ['/bin/echo', '/bin/sh'],
  cwdRoot: process.cwd(),
  killGraceMs: 500,
  allowlist: (argv: string[], _cwd: string) => (argv.includes('--forbidden') ? 'not that one' : true),
}
nc.setBackgroundCommandPolicy(host, policy)

async function main(): Promise<void> {
  const handle = await nc.startBackgroundCommand(host, ['/bin/echo', 'hello from the packed addon'], { cwd: '.', label: 'greeting' })
  const status: BackgroundCommandStatus = await nc.awaitBackgroundCommand(host, handle.taskId, { timeoutMs: 20000 })
  const ref: BankedArtifactRef | undefined = status.stdout
  const banked = ref ? await nc.readArtifact(ref.artifactId) : '(no ref)'
  const page = await nc.readBackgroundCommandOutput(host, handle.taskId, { stream: 'stdout', offset: 6 })
  let refusal = ''
  try {
    await nc.startBackgroundCommand(host, ['/bin/echo', '--forbidden'], { cwd: '.' })
  } catch (e) {
    refusal = e instanceof Error ? e.message : String(e)
  }
  const tools = nc.createBackgroundCommandTools(host)
  const started = await tools.run_command_bg.execute({ argv: ['/bin/sh', '-c', 'echo via the tool'] })
  if (nc.isToolRefusal(started)) throw new Error(started.error)
  const viaTool = await nc.awaitBackgroundCommand(host, started.taskId, { timeoutMs: 20000 })
  const loaded = Object.keys(require.cache).filter((k) => k.endsWith('.node'))
  console.log(JSON.stringify({
    state: status.state,
    exitCode: status.exitCode ?? null,
    label: status.label,
    banked,
    page: page.content,
    refusal,
    viaTool: viaTool.tailPreview,
    counts: nc.backgroundCommandCounts(host),
    loaded,
  }))
}

// Never called: these lines only have to fail type-checking, which proves the
// declarations are precise (with \`any\` they would compile and tsc would
// report the unused @ts-expect-error directives).
export function typeChecksOnly(status: BackgroundCommandStatus): void {
  // @ts-expect-error a state outside the union
  const bad: BackgroundCommandState = 'finished'
  // @ts-expect-error exitCode is optional, so it may be undefined
  status.exitCode.toFixed()
  // @ts-expect-error cwd is a string
  void nc.startBackgroundCommand(host, ['/bin/echo'], { cwd: 1 })
  // @ts-expect-error streams are stdout or stderr
  void nc.readBackgroundCommandOutput(host, 'c1', { stream: 'stdin' })
  // @ts-expect-error argv is a string array
  void nc.startBackgroundCommand(host, 'echo hi', { cwd: '.' })
  // @ts-expect-error the kind of a ref is fixed
  const r: BankedArtifactRef = { artifactId: '', label: '', kind: 'other', sizeBytes: 0, preview: '', readBackHint: '' }
  void bad
  void r
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
`

const HOST_ESM = `
import { awaitBackgroundCommand, readArtifact, setBackgroundCommandPolicy, startBackgroundCommand } from 'neurolink-commands'
import type { BackgroundCommandStatus } from 'neurolink-commands'

const host = {}
setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/echo'], cwdRoot: process.cwd() })
const { taskId } = await startBackgroundCommand(host, ['/bin/echo', 'hello from an ES module host'], { cwd: '.' })
const status: BackgroundCommandStatus = await awaitBackgroundCommand(host, taskId)
console.log(status.state, status.exitCode, JSON.stringify(await readArtifact(status.stdout.artifactId)))
`

test('pack:release packs the main package, its platform package and the MCP server; a user installs the tarballs, type-checks strictly and runs, and the installed MCP bin answers an MCP client', async () => {
  const built = join(repo, BINARY)
  assert.ok(existsSync(built), `${built} is missing: run \`pnpm run build\` first`)
  const work = tempRoot('nlc-install-')
  const home = join(work, 'home')
  const release = join(work, 'release')
  mkdirSync(home)
  const env = cleanEnv(home)
  assert.ok(
    env.PATH!.split(delimiter).every((d) => !existsSync(join(d, 'cargo')) && !existsSync(join(d, 'rustc'))),
    'no Rust toolchain on the PATH of the install',
  )

  // Library users never install the MCP SDK: only the workspace package mcp/ depends on it.
  const rootManifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
    assert.ok(!Object.keys(rootManifest[field] ?? {}).some((d) => d.startsWith('@modelcontextprotocol/')), `no MCP SDK in the root's ${field}`)
  }

  // 1. The maintainer's release path (the build already ran; --no-build keeps this test from rebuilding).
  const rootPkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    version: string
    napi: { targets: string[] }
    scripts: Record<string, string>
  }
  assert.equal(rootPkg.scripts['pack:release'], 'node scripts/pack-release.mjs')
  const packed = await sh(process.execPath, [join(repo, 'scripts', 'pack-release.mjs'), '--no-build', '--out', release], repo, process.env)
  const lines = packed.stdout.trim().split('\n')
  const made = JSON.parse(lines[lines.length - 1]!) as { main: string; mcp: string; platforms: Record<string, string>; skipped: string[] }
  assert.equal(made.main, join(release, `neurolink-commands-${rootPkg.version}.tgz`))
  assert.equal(made.mcp, join(release, `neurolink-commands-mcp-${rootPkg.version}.tgz`))
  assert.equal(made.platforms[HERE], join(release, `${PLATFORM}-${rootPkg.version}.tgz`))
  assert.deepEqual(readdirSync(release).sort(), [basename(made.main), basename(made.mcp), ...Object.values(made.platforms).map((t) => basename(t))].sort())
  // Every napi target is a platform package: packed when its binary exists, else reported.
  assert.equal(Object.keys(made.platforms).length + made.skipped.length, rootPkg.napi.targets.length)

  const mainFiles = await listTarball(made.main, work, env)
  for (const f of ['index.js', 'index.d.ts', 'binding.js', 'binding.d.ts', 'lib/tools.js', 'lib/load.js', 'package.json']) {
    assert.ok(mainFiles.includes(f), `the main tarball holds ${f}: ${mainFiles.join(', ')}`)
  }
  for (const f of mainFiles) {
    assert.ok(!f.endsWith('.node'), `no binary in the main package (it comes from ${PLATFORM}): ${f}`)
    assert.ok(!/^(src|crates|target|__test__|node_modules|scripts|mcp)\//.test(f) && f !== 'Cargo.toml', `no sources in the package: ${f}`)
  }
  const platFiles = await listTarball(made.platforms[HERE]!, work, env)
  assert.deepEqual(platFiles, ['README.md', BINARY, 'package.json'].sort())

  // 2. A fresh project; the user installs both tarballs from a local directory, as
  // the README says (an empty cache, no reachable registry).
  const proj = join(work, 'host-project')
  mkdirSync(proj)
  writeFileSync(join(proj, 'package.json'), JSON.stringify({ name: 'nlc-install-check', version: '1.0.0', private: true }, null, 2))
  cpSync(made.main, join(proj, basename(made.main)))
  cpSync(made.platforms[HERE]!, join(proj, basename(made.platforms[HERE]!)))
  // npm runs on the Node under test (an emulated arm64 or a musl Node too), as
  // on the user's machine, so it sees the platform it installs for. The one
  // flag, --offline, is for this machine, not the user: the main manifest names
  // all six platform packages as optional dependencies (as published), the
  // five other ones are not published from here and there is no registry, so
  // npm must not spend its retries looking for them; it skips them as
  // unavailable optional dependencies, which is what it does on a user's
  // machine for the packages of other platforms.
  await sh(process.execPath, [NPM_CLI, 'install', '--offline', `./${basename(made.main)}`, `./${basename(made.platforms[HERE]!)}`], proj, env)
  const installed = join(proj, 'node_modules')
  const installedMain = JSON.parse(readFileSync(join(installed, 'neurolink-commands', 'package.json'), 'utf8')) as Record<string, unknown>
  assert.deepEqual(
    installedMain.optionalDependencies,
    Object.fromEntries(rootPkg.napi.targets.map((t) => [`neurolink-commands-${platformOfTriple(t)}`, rootPkg.version])),
    'the optionalDependencies napi pre-publish writes: one per target',
  )
  assert.ok(existsSync(join(installed, PLATFORM, BINARY)), 'the binary comes from the platform package')
  assert.deepEqual(
    readdirSync(join(installed, 'neurolink-commands'), { recursive: true }).filter((f) => String(f).endsWith('.node')),
    [],
    'the main package holds no binary',
  )

  // 4. Type-check both host files strictly against the installed index.d.ts, then run them.
  // TypeScript and @types/node come from this repository's node_modules, not the network.
  mkdirSync(join(installed, '@types'))
  symlinkSync(realpathSync(join(repo, 'node_modules', '@types', 'node')), join(installed, '@types', 'node'))
  writeFileSync(join(proj, 'host.ts'), HOST_CJS)
  writeFileSync(join(proj, 'host-esm.mts'), HOST_ESM)
  writeFileSync(
    join(proj, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: ['node'],
        outDir: 'dist',
        noEmitOnError: true,
        skipLibCheck: false,
      },
      files: ['host.ts', 'host-esm.mts'],
    }),
  )
  const tsc = await sh(TSC_NODE, [TSC, '-p', 'tsconfig.json', '--strict', '--listFiles'], proj, env)
  const declarations = realpathSync(join(installed, 'neurolink-commands', 'index.d.ts'))
  assert.ok(
    tsc.stdout.split('\n').some((l) => l.trim() === declarations),
    `tsc checked against ${declarations}`,
  )

  const cjs = await sh(process.execPath, [join('dist', 'host.js')], proj, env)
  const report = JSON.parse(cjs.stdout.trim()) as Record<string, unknown>
  assert.deepEqual(report, {
    state: 'exited',
    exitCode: 0,
    label: 'greeting',
    banked: 'hello from the packed addon\n',
    page: 'from the packed addon\n',
    refusal: 'not that one',
    viaTool: '[stdout tail]\nvia the tool\n',
    counts: { running: 0, finished: 0 },
    loaded: [realpathSync(join(installed, PLATFORM, BINARY))],
  })

  const esm = await sh(process.execPath, [join('dist', 'host-esm.mjs')], proj, env)
  assert.equal(esm.stdout, 'exited 0 "hello from an ES module host\\n"\n')

  // 5. The main tarball alone (the platform package left out): loading it fails
  // with NLC_NATIVE_MISSING, naming the platform, the package and how to get it.
  const bare = join(work, 'no-platform-project')
  mkdirSync(bare)
  writeFileSync(join(bare, 'package.json'), JSON.stringify({ name: 'nlc-no-platform', version: '1.0.0', private: true }, null, 2))
  cpSync(made.main, join(bare, basename(made.main)))
  // (--omit=optional is how a user ends up without it; --offline keeps npm
  // from waiting on the unreachable registry for the omitted package's manifest.)
  await sh(process.execPath, [NPM_CLI, 'install', '--offline', '--omit=optional', `./${basename(made.main)}`], bare, env)
  assert.ok(!existsSync(join(bare, 'node_modules', PLATFORM)), 'no platform package installed')
  const probe = await sh(
    process.execPath,
    [
      '-e',
      "try { require('neurolink-commands'); console.log('loaded') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, platform: e.platform, packageName: e.packageName })) }",
    ],
    bare,
    env,
  )
  const missing = JSON.parse(probe.stdout) as { code: string; message: string; platform: string; packageName: string }
  assert.equal(missing.code, 'NLC_NATIVE_MISSING')
  assert.equal(missing.platform, HERE)
  assert.equal(missing.packageName, PLATFORM)
  assert.ok(missing.message.includes(`(${HERE})`), missing.message)
  assert.ok(missing.message.includes(`npm install ${PLATFORM}@${rootPkg.version}`), missing.message)
  assert.ok(missing.message.includes(`./${PLATFORM}-${rootPkg.version}.tgz`), missing.message)

  // 6. The MCP server's tarball: its manifest names this release's version of
  // the main package (not pnpm's workspace:*), and it holds its bin and lib only.
  const mcpFiles = await listTarball(made.mcp, work, env)
  assert.deepEqual(mcpFiles, ['README.md', 'bin/neurolink-commands-mcp.js', 'lib/config.js', 'lib/render.js', 'lib/server.js', 'package.json'])
  const mcpManifest = JSON.parse((await sh('tar', ['-xzOf', made.mcp, 'package/package.json'], work, env)).stdout) as {
    bin: Record<string, string>
    dependencies: Record<string, string>
  }
  const repoMcp = JSON.parse(readFileSync(join(repo, 'mcp', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  assert.deepEqual(mcpManifest.dependencies, { ...repoMcp.dependencies, 'neurolink-commands': rootPkg.version })
  assert.deepEqual(mcpManifest.bin, { 'neurolink-commands-mcp': 'bin/neurolink-commands-mcp.js' })

  // A fresh project installs the three tarballs at once, as the MCP README
  // says. The SDK and what it depends on come from a registry on the
  // loopback serving exactly the packages the lockfile installed here, so
  // this too needs no network; the other platforms' packages are not there
  // (404), which npm skips as unavailable optional dependencies.
  const mirror = await sdkRegistry(join(work, 'mirror'), env)
  try {
    const mcpProj = join(work, 'mcp-project')
    mkdirSync(mcpProj)
    writeFileSync(join(mcpProj, 'package.json'), JSON.stringify({ name: 'nlc-mcp-install-check', version: '1.0.0', private: true }, null, 2))
    const tarballs = [made.main, made.platforms[HERE]!, made.mcp]
    for (const t of tarballs) cpSync(t, join(mcpProj, basename(t)))
    const mcpEnv = { ...env, npm_config_registry: mirror.url }
    await sh(process.execPath, [NPM_CLI, 'install', ...tarballs.map((t) => `./${basename(t)}`)], mcpProj, mcpEnv)
    assert.ok(mirror.served.has('@modelcontextprotocol/sdk'), 'the SDK came from the mirror')
    const sdkVersion = (JSON.parse(readFileSync(join(mcpProj, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')) as { version: string }).version
    assert.equal(sdkVersion, repoMcp.dependencies['@modelcontextprotocol/sdk'])
    // The server's neurolink-commands is the installed main tarball, loading the platform package's binary.
    assert.equal(
      realpathSync(createRequire(join(mcpProj, 'node_modules', 'neurolink-commands-mcp', 'lib', 'server.js')).resolve('neurolink-commands')),
      realpathSync(join(mcpProj, 'node_modules', 'neurolink-commands', 'index.js')),
    )
    const bin = join(mcpProj, 'node_modules', '.bin', 'neurolink-commands-mcp')
    assert.ok(existsSync(bin), `${bin} is installed`)
    await talkToInstalledServer(bin, mcpProj, {
      ...mcpEnv,
      // The bin's `#!/usr/bin/env node` finds the Node under test first.
      PATH: [dirname(process.execPath), env.PATH].join(delimiter),
      TMPDIR: process.env.TMPDIR ?? '/tmp',
    })
  } finally {
    await mirror.close()
  }

  rmSync(work, { recursive: true, force: true })
})

/** The SDK's client from the repository's MCP package (the root package does not depend on the SDK). */
const mcpRequire = createRequire(join(repo, 'mcp', 'package.json'))

/**
 * Start the installed bin through the SDK's stdio client transport and use
 * it as a client would: initialize, list the tools, run a command, wait for
 * it and read its exact output.
 */
async function talkToInstalledServer(bin: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  // The parts of the SDK's classes this uses, typed here: the root's type
  // check does not see the MCP package's dependencies.
  type Transport = { stderr: NodeJS.ReadableStream | null }
  type McpClient = {
    connect(t: Transport): Promise<void>
    getServerVersion(): { name: string } | undefined
    listTools(): Promise<{ tools: { name: string }[] }>
    callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>
    close(): Promise<void>
  }
  const { Client } = mcpRequire('@modelcontextprotocol/sdk/client/index.js') as {
    Client: new (info: { name: string; version: string }) => McpClient
  }
  const { StdioClientTransport } = mcpRequire('@modelcontextprotocol/sdk/client/stdio.js') as {
    StdioClientTransport: new (o: { command: string; args: string[]; cwd: string; env: Record<string, string>; stderr: 'pipe' }) => Transport
  }
  const transport = new StdioClientTransport({
    command: bin,
    args: ['--root', cwd, '--allow', '/bin/sh'],
    cwd,
    env: env as Record<string, string>,
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const client = new Client({ name: 'nlc-install-check', version: '1.0.0' })
  try {
    await client.connect(transport)
    assert.equal(client.getServerVersion()?.name, 'neurolink-commands-mcp')
    const { tools } = await client.listTools()
    assert.deepEqual(tools.map((t) => t.name).sort(), ['command_input', 'command_kill', 'command_list', 'command_output', 'command_status', 'run_command_bg'])
    type Result = { isError?: boolean; content: { text?: string }[]; structuredContent?: Record<string, unknown> }
    const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const r = (await client.callTool({ name, arguments: args })) as Result
      assert.notEqual(r.isError, true, `${name}: ${r.content.map((c) => c.text).join('\n')}`)
      return r.structuredContent!
    }
    const started = await call('run_command_bg', { argv: ['/bin/sh', '-c', 'printf "installed %s\\n" server; printf "to stderr" >&2'] })
    const taskId = started.taskId as string
    assert.match(taskId, /^c\d+[0-9a-f]{12}$/)
    const status = await call('command_status', { taskId, waitMs: 30_000 })
    assert.equal(status.state, 'exited')
    assert.equal(status.exitCode, 0)
    const out = await call('command_output', { taskId, stream: 'stdout' })
    assert.equal(out.content, 'installed server\n')
    const err = await call('command_output', { taskId, stream: 'stderr' })
    assert.equal(err.content, 'to stderr')
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- server stderr\n${stderr}`)
  } finally {
    await client.close()
  }
}

/**
 * An npm registry on 127.0.0.1 serving the MCP SDK and every package it
 * depends on, as this repository's lockfile installed them under
 * mcp/node_modules (each packed from its installed directory, every version
 * found): what `npm install` of the MCP tarball fetches from the real
 * registry, without the network. `served` names the packuments asked for.
 */
async function sdkRegistry(dir: string, env: NodeJS.ProcessEnv): Promise<{ url: string; served: Set<string>; close: () => Promise<void> }> {
  mkdirSync(dir, { recursive: true })
  const start = realpathSync(join(repo, 'mcp', 'node_modules', '@modelcontextprotocol', 'sdk'))
  const found = new Map<string, { name: string; version: string; dir: string; manifest: Record<string, unknown> }>()
  const queue = [start]
  while (queue.length > 0) {
    const at = queue.pop()!
    const manifest = JSON.parse(readFileSync(join(at, 'package.json'), 'utf8')) as Record<string, unknown>
    const name = manifest.name as string
    const version = manifest.version as string
    if (found.has(`${name}@${version}`)) continue
    found.set(`${name}@${version}`, { name, version, dir: at, manifest })
    const deps = (f: string) => Object.keys((manifest[f] as Record<string, string> | undefined) ?? {})
    const peersMeta = (manifest.peerDependenciesMeta as Record<string, { optional?: boolean }> | undefined) ?? {}
    const optional = new Set([...deps('optionalDependencies'), ...deps('peerDependencies').filter((d) => peersMeta[d]?.optional)])
    for (const dep of new Set([...deps('dependencies'), ...deps('optionalDependencies'), ...deps('peerDependencies')])) {
      // Found as Node finds it: the nearest node_modules/<dep> above the package.
      let where: string | undefined
      for (let up = at; dirname(up) !== up && !where; up = dirname(up)) {
        if (existsSync(join(up, 'node_modules', dep, 'package.json'))) where = realpathSync(join(up, 'node_modules', dep))
      }
      if (where) queue.push(where)
      else assert.ok(optional.has(dep), `${name}@${version} needs ${dep}, which is not installed`)
    }
  }
  const packuments = new Map<string, { name: string; 'dist-tags': Record<string, string>; versions: Record<string, unknown> }>()
  const files = new Map<string, string>()
  let url = ''
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!.slice(1))
    const tarball = files.get(path)
    const packument = packuments.get(path)
    if (tarball) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(tarball))
    } else if (packument) {
      served.add(path)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument))
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}')
    }
  })
  const served = new Set<string>()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  for (const p of found.values()) {
    const file = `${p.name.replace('/', '__')}-${p.version}.tgz`
    const out = join(dir, file)
    // --hard-dereference: pnpm's store hard-links equal files, and npm
    // drops link entries when it unpacks a package.
    await sh('tar', ['-czf', out, '--hard-dereference', '-C', dirname(p.dir), '--transform', `s,^${basename(p.dir)},package,`, basename(p.dir)], dir, env)
    const bytes = readFileSync(out)
    files.set(`-/${file}`, out)
    const entry = packuments.get(p.name) ?? { name: p.name, 'dist-tags': {}, versions: {} }
    entry.versions[p.version] = {
      ...p.manifest,
      dist: {
        tarball: `${url}-/${file}`,
        shasum: createHash('sha1').update(bytes).digest('hex'),
        integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
      },
    }
    const latest = entry['dist-tags'].latest
    if (!latest || p.version.localeCompare(latest, undefined, { numeric: true }) > 0) entry['dist-tags'].latest = p.version
    packuments.set(p.name, entry)
  }
  return { url, served, close: () => new Promise<void>((r) => server.close(() => r())) }
}

test('every platform in napi.targets has its package under npm/ in the napi-rs layout', () => {
  const rootPkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    version: string
    license: string
    engines: unknown
    napi: { binaryName: string; targets: string[] }
  }
  assert.equal(rootPkg.napi.binaryName, 'neurolink-commands')
  assert.deepEqual(
    [...rootPkg.napi.targets].sort(),
    Object.values(SUPPORTED)
      .map((p) => p.triple)
      .sort(),
  )
  assert.deepEqual(readdirSync(join(repo, 'npm')).sort(), Object.keys(SUPPORTED).sort())
  for (const [name, want] of Object.entries(SUPPORTED)) {
    const binary = `neurolink-commands.${name}.node`
    const pkg = JSON.parse(readFileSync(join(repo, 'npm', name, 'package.json'), 'utf8')) as Record<string, unknown>
    assert.deepEqual(
      { name: pkg.name, version: pkg.version, os: pkg.os, cpu: pkg.cpu, libc: pkg.libc, main: pkg.main, files: pkg.files },
      {
        name: `neurolink-commands-${name}`,
        version: rootPkg.version,
        os: [want.os],
        cpu: [want.cpu],
        libc: want.libc ? [want.libc] : undefined,
        main: binary,
        files: [binary],
      },
      name,
    )
    assert.equal(pkg.license, rootPkg.license)
    assert.deepEqual(pkg.engines, rootPkg.engines)
  }
})
