// Run by the official Windows node.exe (under wine here: scripts/platforms/
// windows.sh; not part of the Linux suites). Until the addon is built for
// Windows, loading the package there must fail with the coded error that
// names the supported platforms — and the generated loader must have looked
// for the binary under the name the msvc package will give it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** Every message in an error's chain of causes. */
function messages(e) {
  const out = []
  for (let c = e; c; c = c.cause) out.push(String(c.message ?? c))
  return out
}

test('on Windows x64 loading fails with NLC_UNSUPPORTED_PLATFORM naming the supported platforms', () => {
  assert.equal(`${process.platform}-${process.arch}`, 'win32-x64', 'this file runs on the Windows node.exe')
  let err
  try {
    require('../../index.js')
  } catch (e) {
    err = e
  }
  assert.ok(err, 'no Windows binary ships yet: loading must fail')
  assert.equal(err.code, 'NLC_UNSUPPORTED_PLATFORM', err.message)
  assert.equal(err.platform, 'win32-x64-msvc')
  assert.match(err.message, /^neurolink-commands has no native build for win32-x64\. /)
  for (const p of ['linux-x64-gnu', 'linux-arm64-musl', 'darwin-arm64']) {
    assert.ok(err.message.includes(p), `the message names ${p}: ${err.message}`)
  }
  // The generated loader tried the msvc binary's file and package names.
  const chain = messages(err.cause).join('\n')
  assert.match(chain, /neurolink-commands\.win32-x64-msvc\.node/)
  assert.match(chain, /neurolink-commands-win32-x64-msvc/)
})
