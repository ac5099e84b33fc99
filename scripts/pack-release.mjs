#!/usr/bin/env node
// The release path a maintainer runs (`pnpm run pack:release`): build, put
// each built binary into its npm/<platform> package, write the
// optionalDependencies that napi-rs's pre-publish step writes into the main
// manifest, and pack the main package, every platform package that has its
// binary, and the MCP server's package (mcp/) into one directory (default
// release/), ready for `npm publish <tarball>` or for a user's
// `npm install ./<main>.tgz ./<platform>.tgz [./<mcp>.tgz]`.
//
//   node scripts/pack-release.mjs [--out <dir>] [--no-build]
//
//   --out <dir>   where the tarballs go (default release/; old .tgz files there are removed)
//   --no-build    skip `pnpm run build` (about 45 s) and pack the binary already built
//
// The last line of stdout is JSON: { main, mcp, platforms: { <platform>: tarball }, skipped: [...] }.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const { platformOfTriple, currentPlatform } = require('../lib/load.js')

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const flag = (name) => args.includes(name)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 && args[i + 1] ? resolve(args[i + 1]) : fallback
}
const out = option('--out', join(repo, 'release'))

function run(file, argv, cwd) {
  return execFileSync(file, argv, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 })
}

/** `npm pack` of `dir` into `dest`; the tarball's path. */
function pack(dir, dest) {
  const json = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], dir)
  const [r] = JSON.parse(json.slice(json.indexOf('[')))
  return join(dest, r.filename)
}

const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
const binaryName = pkg.napi?.binaryName ?? pkg.name
const targets = pkg.napi?.targets ?? []
if (targets.length === 0) throw new Error('package.json names no napi.targets')

if (!flag('--no-build')) run('pnpm', ['run', 'build'], repo)

mkdirSync(out, { recursive: true })
for (const f of readdirSync(out)) if (f.endsWith('.tgz')) rmSync(join(out, f))

// Every napi target's npm/<platform> package gets its binary when this
// machine built it (napi build --platform writes <binaryName>.<platform>.node
// at the root) or a CI job put it there already; the others are reported,
// not packed. The optionalDependencies name every target.
const platforms = {}
const skipped = []
const optionalDependencies = {}
for (const triple of targets) {
  const platform = platformOfTriple(triple)
  if (!platform) throw new Error(`napi.targets names ${triple}, which this script cannot name a platform for`)
  const dir = join(repo, 'npm', platform)
  const manifestPath = join(dir, 'package.json')
  if (!existsSync(manifestPath)) throw new Error(`npm/${platform}/package.json is missing for target ${triple}`)
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
  if (manifest.version !== pkg.version) {
    throw new Error(`npm/${platform} is version ${manifest.version}, the package is ${pkg.version}: bump them together`)
  }
  optionalDependencies[manifest.name] = pkg.version
  const binary = `${binaryName}.${platform}.node`
  if (existsSync(join(repo, binary))) copyFileSync(join(repo, binary), join(dir, binary))
  if (!existsSync(join(dir, binary))) {
    skipped.push(platform)
    continue
  }
  platforms[platform] = pack(dir, out)
}
// Only this machine's binary is required (the others come from CI jobs of their platforms).
const here = currentPlatform()
if (targets.some((t) => platformOfTriple(t) === here) && !platforms[here]) {
  throw new Error(`the binary of this platform is missing: ${binaryName}.${here}.node (run pnpm run build)`)
}
if (Object.keys(platforms).length === 0) throw new Error(`no target has a built binary (looked for ${binaryName}.<platform>.node)`)

/**
 * The MCP server's package, packed as it is, then with its manifest's
 * `workspace:` dependency (pnpm's link to this repository's package, which
 * npm cannot resolve) replaced by this release's exact version, and packed again.
 */
function packMcp(stage) {
  const dir = join(repo, 'mcp')
  const own = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  if (own.version !== pkg.version) {
    throw new Error(`mcp/ is version ${own.version}, the package is ${pkg.version}: bump them together`)
  }
  const unpacked = join(stage, 'mcp')
  mkdirSync(unpacked)
  run('tar', ['-xzf', pack(dir, unpacked), '-C', unpacked], unpacked)
  const manifestPath = join(unpacked, 'package', 'package.json')
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
  for (const [name, spec] of Object.entries(manifest.dependencies ?? {})) {
    if (!String(spec).startsWith('workspace:')) continue
    if (name !== pkg.name) throw new Error(`mcp/ depends on ${name}@${spec}, which this script does not pack`)
    manifest.dependencies[name] = pkg.version
  }
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n')
  return pack(join(unpacked, 'package'), out)
}

// The main package: packed as it is, then its manifest gets the
// optionalDependencies on every platform package and is packed again.
const stage = mkdtempSync(join(tmpdir(), 'nlc-release-'))
try {
  const first = pack(repo, stage)
  run('tar', ['-xzf', first, '-C', stage], stage)
  const manifestPath = join(stage, 'package', 'package.json')
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
  manifest.optionalDependencies = { ...manifest.optionalDependencies, ...optionalDependencies }
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n')
  const main = pack(join(stage, 'package'), out)
  const mcp = packMcp(stage)
  for (const p of skipped) console.error(`pack:release: no binary for ${p}; its package was not packed`)
  console.log(JSON.stringify({ main, mcp, platforms, skipped }))
} finally {
  rmSync(stage, { recursive: true, force: true })
}
