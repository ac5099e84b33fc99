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
import { basename, delimiter, join, resolve } from 'node:path'
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

test('pack:release packs the main package and its platform package; a user installs both tarballs, type-checks strictly and runs', async () => {
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
  const made = JSON.parse(lines[lines.length - 1]!) as { main: string; platforms: Record<string, string>; skipped: string[] }
  assert.equal(made.main, join(release, `neurolink-commands-${rootPkg.version}.tgz`))
  assert.equal(made.platforms[HERE], join(release, `${PLATFORM}-${rootPkg.version}.tgz`))
  assert.deepEqual(readdirSync(release).sort(), [basename(made.main), ...Object.values(made.platforms).map((t) => basename(t))].sort())
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
    ['-e', "try { require('neurolink-commands'); console.log('loaded') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message, platform: e.platform, packageName: e.packageName })) }"],
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
