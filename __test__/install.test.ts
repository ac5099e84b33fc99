// The install check: pack the package and its platform package as napi-rs
// publishes them, install both into a fresh TypeScript project with
// `npm install --ignore-scripts` (offline: no registry, no Rust), type-check
// host files against index.d.ts with `tsc --strict`, and run them. The
// platform package is the one of the Node running this suite, so the platform
// runner (`pnpm run test:platforms`) checks each Linux package on its own
// platform; every package's manifest is checked everywhere.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { delimiter, join, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'

import { tempRoot } from './helpers.ts'

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

type PackResult = { filename: string; files: { path: string }[] }[]

async function pack(dir: string, dest: string, env: NodeJS.ProcessEnv): Promise<{ tarball: string; files: string[] }> {
  const { stdout } = await sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], dir, env)
  const [r] = JSON.parse(stdout.slice(stdout.indexOf('['))) as PackResult
  assert.ok(r, `npm pack said: ${stdout}`)
  return { tarball: join(dest, r.filename), files: r.files.map((f) => f.path).sort() }
}

const HOST_CJS = `
import * as nc from 'neurolink-commands'
import type {
  BackgroundCommandHost,
  BackgroundCommandPolicy,
  BackgroundCommandState,
  BackgroundCommandStatus,
  BankedArtifactRef,
  CommandToolResult,
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
  const started: CommandToolResult = await tools.run_command_bg.execute({ argv: ['/bin/sh', '-c', 'echo via the tool'] })
  if ('isError' in started) throw new Error(started.error)
  if (!('taskId' in started)) throw new Error('run_command_bg returned no taskId')
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
  // @ts-expect-error cwd is required
  void nc.startBackgroundCommand(host, ['/bin/echo'], {})
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
console.log(status.state, status.exitCode, JSON.stringify(await readArtifact(status.stdout!.artifactId)))
`

test('the packed package and its platform package install into a fresh TypeScript project, type-check strictly and run', async () => {
  const built = join(repo, BINARY)
  assert.ok(existsSync(built), `${built} is missing: run \`pnpm run build\` first`)
  const work = tempRoot('nlc-install-')
  const home = join(work, 'home')
  const tarballs = join(work, 'tarballs')
  mkdirSync(home)
  mkdirSync(tarballs)
  const env = cleanEnv(home)
  assert.ok(
    env.PATH!.split(delimiter).every((d) => !existsSync(join(d, 'cargo')) && !existsSync(join(d, 'rustc'))),
    'no Rust toolchain on the PATH of the install',
  )

  // 1. The main package, packed from the repository as it is.
  const rootPkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string; optionalDependencies?: Record<string, string> }
  // Library users never install the MCP SDK: only the workspace package mcp/ depends on it.
  const rootManifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
    assert.ok(!Object.keys(rootManifest[field] ?? {}).some((d) => d.startsWith('@modelcontextprotocol/')), `no MCP SDK in the root's ${field}`)
  }
  const main = await pack(repo, tarballs, env)
  for (const f of ['index.js', 'index.d.ts', 'binding.js', 'binding.d.ts', 'lib/tools.js', 'package.json']) {
    assert.ok(main.files.includes(f), `the main tarball holds ${f}: ${main.files.join(', ')}`)
  }
  for (const f of main.files) {
    assert.ok(!f.endsWith('.node'), `no binary in the main package (it comes from ${PLATFORM}): ${f}`)
    assert.ok(!/^(src|crates|target|__test__|node_modules|mcp)\//.test(f) && f !== 'Cargo.toml', `no sources in the package: ${f}`)
  }

  // The published manifest names the platform package as an optional
  // dependency. napi-rs adds it at publish time (\`napi pre-publish\`) when the
  // repository does not carry it; stage the manifest the same way.
  let mainTarball = main.tarball
  if (rootPkg.optionalDependencies?.[PLATFORM] !== rootPkg.version) {
    const stage = join(work, 'stage')
    mkdirSync(stage)
    await sh('tar', ['-xzf', main.tarball, '-C', stage], work, env)
    const manifestPath = join(stage, 'package', 'package.json')
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>
    manifest.optionalDependencies = { ...(manifest.optionalDependencies as object | undefined), [PLATFORM]: rootPkg.version }
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n')
    const staged = join(tarballs, 'staged')
    mkdirSync(staged)
    const again = await pack(join(stage, 'package'), staged, env)
    assert.deepEqual(again.files, main.files, 'staging changed nothing but the manifest')
    mainTarball = again.tarball
  }

  // 2. The platform package: npm/<platform> plus the built binary, packed from a temporary copy.
  const want = SUPPORTED[HERE]
  assert.ok(want, `this suite runs on a supported platform, not ${HERE}`)
  const platDir = join(work, 'platform')
  cpSync(join(repo, 'npm', HERE), platDir, { recursive: true })
  cpSync(built, join(platDir, BINARY))
  const platPkg = JSON.parse(readFileSync(join(platDir, 'package.json'), 'utf8')) as Record<string, unknown>
  assert.equal(platPkg.name, PLATFORM)
  assert.equal(platPkg.version, rootPkg.version)
  assert.deepEqual(platPkg.os, [want.os])
  assert.deepEqual(platPkg.cpu, [want.cpu])
  assert.deepEqual(platPkg.libc, want.libc ? [want.libc] : undefined)
  assert.equal(platPkg.main, BINARY)
  assert.deepEqual(platPkg.files, [BINARY])
  const plat = await pack(platDir, tarballs, env)
  assert.ok(plat.files.includes(BINARY) && plat.files.includes('package.json'), plat.files.join(', '))

  // 3. A fresh project; both tarballs in one offline install with an empty cache and no reachable registry.
  // npm runs on the Node under test (an emulated arm64 or a musl Node too), so
  // it sees the platform it installs for; the flags say the same explicitly.
  const platformFlags = [`--os=${want.os}`, `--cpu=${want.cpu}`, ...(want.libc ? [`--libc=${want.libc}`] : [])]
  const proj = join(work, 'host-project')
  mkdirSync(proj)
  writeFileSync(join(proj, 'package.json'), JSON.stringify({ name: 'nlc-install-check', version: '1.0.0', private: true }, null, 2))
  await sh(
    process.execPath,
    [NPM_CLI, 'install', ...platformFlags, '--ignore-scripts', '--no-audit', '--no-fund', '--offline', '--cache', join(work, 'npm-cache'), mainTarball, plat.tarball],
    proj,
    env,
  )
  const installed = join(proj, 'node_modules')
  const installedMain = JSON.parse(readFileSync(join(installed, 'neurolink-commands', 'package.json'), 'utf8')) as Record<string, unknown>
  assert.deepEqual(installedMain.optionalDependencies, { [PLATFORM]: rootPkg.version })
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
  assert.ok(tsc.stdout.split('\n').some((l) => l.trim() === declarations), `tsc checked against ${declarations}`)

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

  rmSync(work, { recursive: true, force: true })
})

test('every platform in napi.targets has its package under npm/ in the napi-rs layout', () => {
  const rootPkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    version: string
    license: string
    engines: unknown
    napi: { binaryName: string; targets: string[] }
  }
  assert.equal(rootPkg.napi.binaryName, 'neurolink-commands')
  assert.deepEqual([...rootPkg.napi.targets].sort(), Object.values(SUPPORTED).map((p) => p.triple).sort())
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
