'use strict'
// Loads the native binding through the generated loader (binding.js). On a
// platform without a prebuilt package the loader's own error only lists the
// files it tried; this one names the platforms there are packages for.

/** The platforms with a prebuilt package (napi-rs names, as in npm/). */
const SUPPORTED_PLATFORMS = Object.freeze([
  'linux-x64-gnu',
  'linux-arm64-gnu',
  'linux-x64-musl',
  'linux-arm64-musl',
  'darwin-x64',
  'darwin-arm64',
])

function isSupported(platform, arch) {
  return (platform === 'linux' || platform === 'darwin') && (arch === 'x64' || arch === 'arm64')
}

function load() {
  try {
    return require('../binding.js')
  } catch (cause) {
    if (isSupported(process.platform, process.arch)) throw cause
    const error = new Error(
      `neurolink-commands has no native build for ${process.platform}-${process.arch}. ` +
        `Prebuilt packages exist for ${SUPPORTED_PLATFORMS.join(', ')} ` +
        '(Windows is planned). Run the host on one of those, e.g. in a Linux container.',
    )
    error.code = 'NLC_UNSUPPORTED_PLATFORM'
    error.cause = cause
    throw error
  }
}

module.exports = { load, SUPPORTED_PLATFORMS }
