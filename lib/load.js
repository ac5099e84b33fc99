'use strict'
// Loading the native binary, and the error a user meets when none loads,
// instead of the loader's guess: on a platform this version ships a package
// for, it names the platform, the package that should have provided the binary
// and how to get it (code NLC_NATIVE_MISSING); on any other platform, it names
// the supported ones (code NLC_UNSUPPORTED_PLATFORM).

const PACKAGE = 'neurolink-commands'

/** The platform name of a Rust target triple, as napi-rs names npm/<platform> packages (undefined for one it does not know). */
function platformOfTriple(triple) {
  const m = /^(x86_64|aarch64|i686|armv7)-(unknown-linux|apple-darwin|pc-windows)-?(gnu|musl|gnueabihf|musleabihf|msvc)?$/.exec(triple)
  if (!m) return undefined
  const arch = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }[m[1]]
  const os = { 'unknown-linux': 'linux', 'apple-darwin': 'darwin', 'pc-windows': 'win32' }[m[2]]
  return m[3] ? `${os}-${arch}-${m[3]}` : `${os}-${arch}`
}

/** The platform name of this process, e.g. "linux-x64-gnu", "linux-arm64-musl", "darwin-arm64", "win32-x64-msvc". */
function currentPlatform() {
  const base = `${process.platform}-${process.arch}`
  // Windows packages are named for their toolchain, as napi-rs names them.
  if (process.platform === 'win32') return `${base}-msvc`
  if (process.platform !== 'linux') return base
  let glibc = true
  try {
    const report = process.report && process.report.getReport()
    glibc = Boolean(report && report.header && report.header.glibcVersionRuntime)
  } catch {
    // keep the glibc guess
  }
  return `${base}-${glibc ? 'gnu' : 'musl'}`
}

/** The platforms this version ships a binary for (from package.json's napi.targets). */
function shippedPlatforms() {
  try {
    const pkg = require('../package.json')
    return (pkg.napi?.targets ?? []).map(platformOfTriple).filter(Boolean)
  } catch {
    return []
  }
}

function version() {
  try {
    return require('../package.json').version
  } catch {
    return undefined
  }
}

/** Run `load` (the napi loader); when it throws, throw an Error with code NLC_NATIVE_MISSING or NLC_UNSUPPORTED_PLATFORM that says what to do. */
function loadNative(load) {
  try {
    return load()
  } catch (cause) {
    const platform = currentPlatform()
    const wanted = `${PACKAGE}-${platform}`
    const v = version()
    const shipped = shippedPlatforms()
    if (!shipped.includes(platform)) {
      const e = new Error(
        `${PACKAGE} has no native build for ${process.platform}-${process.arch}. ` +
          `Prebuilt packages exist for ${shipped.length > 0 ? shipped.join(', ') : 'no platform'}. ` +
          'Run the host on one of those (e.g. in a Linux container), or build from source (cargo and pnpm run build in a clone of the repository).',
      )
      e.code = 'NLC_UNSUPPORTED_PLATFORM'
      e.cause = cause
      e.platform = platform
      throw e
    }
    const message =
      `No native binary of ${PACKAGE} loads on this platform (${platform}): it comes from the package ${wanted}, ` +
      `an optional dependency of ${PACKAGE}, which is missing or broken. Install it next to ${PACKAGE} ` +
      `(npm install ${wanted}${v ? `@${v}` : ''}, or reinstall ${PACKAGE} without --omit=optional / --no-optional; from release tarballs install both: ` +
      `npm install ./${PACKAGE}-${v ?? '<version>'}.tgz ./${wanted}-${v ?? '<version>'}.tgz).`
    const e = new Error(`${message} The loader said: ${cause instanceof Error ? cause.message : String(cause)}`)
    e.code = 'NLC_NATIVE_MISSING'
    e.cause = cause
    e.platform = platform
    e.packageName = wanted
    throw e
  }
}

module.exports = { loadNative, platformOfTriple, currentPlatform, shippedPlatforms }
