// The load-time error on a platform without a prebuilt package: a child Node
// whose process.platform / process.arch a preloaded script overrides loads the
// package and must get an Error with code NLC_UNSUPPORTED_PLATFORM naming
// every supported platform. A shipped platform whose package is absent (Windows
// x64 faked here: no win32 package is installed on this machine) gets
// NLC_NATIVE_MISSING naming that package instead. The control (the real
// platform, through the same preload) loads and runs a command.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'

import { tempRoot } from './helpers.ts'

const run = promisify(execFile)
const repo = resolve(__dirname, '..')
const SUPPORTED = ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']

const dir = tempRoot('nlc-platforms-')
const preload = join(dir, 'fake-platform.cjs')
writeFileSync(
  preload,
  `if (process.env.FAKE_PLATFORM) Object.defineProperty(process, 'platform', { value: process.env.FAKE_PLATFORM })
if (process.env.FAKE_ARCH) Object.defineProperty(process, 'arch', { value: process.env.FAKE_ARCH })
`,
)
const probe = `
try {
  const nc = require(${JSON.stringify(repo)})
  const host = {}
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/echo'], cwdRoot: ${JSON.stringify(dir)} })
  nc.startBackgroundCommand(host, ['/bin/echo', 'loaded'], { cwd: '.' })
    .then((h) => nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 20000 }))
    .then((s) => nc.readArtifact(s.stdout.artifactId))
    .then((out) => console.log(JSON.stringify({ loaded: out, platform: process.platform, arch: process.arch })))
} catch (e) {
  console.log(JSON.stringify({ code: e.code, message: e.message, cause: e.cause ? e.cause.message : null, platform: process.platform, arch: process.arch }))
}
`

async function loadAs(platform?: string, arch?: string): Promise<Record<string, string | null>> {
  const env = { ...process.env, FAKE_PLATFORM: platform ?? '', FAKE_ARCH: arch ?? '' }
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH
  const { stdout } = await run(process.execPath, ['--require', preload, '-e', probe], { env, timeout: 120_000 })
  return JSON.parse(stdout.trim()) as Record<string, string | null>
}

for (const [platform, arch] of [
  ['win32', 'arm64'],
  ['freebsd', 'x64'],
  ['linux', 'riscv64'],
  ['darwin', 'ia32'],
]) {
  test(`on ${platform}-${arch} loading fails with NLC_UNSUPPORTED_PLATFORM naming the supported platforms`, async () => {
    const r = await loadAs(platform, arch)
    assert.equal(r.platform, platform, 'the preload faked the platform')
    assert.equal(r.arch, arch, 'the preload faked the architecture')
    assert.equal(r.code, 'NLC_UNSUPPORTED_PLATFORM', JSON.stringify(r))
    assert.match(r.message!, new RegExp(`^neurolink-commands has no native build for ${platform}-${arch}\\. `))
    for (const p of SUPPORTED) assert.ok(r.message!.includes(p), `the message names ${p}: ${r.message}`)
    assert.ok(r.cause, 'the loader’s own error is kept as the cause')
  })
}

test('on win32-x64 without its package loading fails with NLC_NATIVE_MISSING naming neurolink-commands-win32-x64-msvc', async () => {
  const r = await loadAs('win32', 'x64')
  assert.equal(r.platform, 'win32', 'the preload faked the platform')
  assert.equal(r.code, 'NLC_NATIVE_MISSING', JSON.stringify(r))
  assert.match(r.message!, /^No native binary of neurolink-commands loads on this platform \(win32-x64-msvc\): it comes from the package neurolink-commands-win32-x64-msvc, /)
  assert.match(r.message!, /npm install neurolink-commands-win32-x64-msvc@/)
  assert.ok(r.cause, 'the loader’s own error is kept as the cause')
})

test('control: through the same preload, the real platform loads and runs a command', async () => {
  const r = await loadAs()
  assert.deepEqual(r, { loaded: 'loaded\n', platform: process.platform, arch: process.arch })
})
