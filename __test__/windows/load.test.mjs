// Run by the official Windows node.exe (under wine here: scripts/platforms/
// windows.sh; natively in the workflow's Windows job; not part of the Linux
// suites). The package loads on Windows x64 through the generated loader and
// runs a command; the loader names the platform win32-x64-msvc, the package
// the workflow builds with MSVC.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { NODE, hostWith, run, tempRoot } from './helpers.mjs'

test('on Windows x64 the package loads and runs a command (node.exe, its output banked)', async (t) => {
  assert.equal(`${process.platform}-${process.arch}`, 'win32-x64', 'this file runs on the Windows node.exe')
  const root = tempRoot(t)
  const host = hostWith(root)
  const [st, out] = await run(host, [NODE, '-e', 'process.stdout.write("loaded on " + process.platform)'])
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.exitCode, 0)
  assert.equal(out, 'loaded on win32')
  assert.equal(st.containment, 'tree', 'every Windows command runs in its own Job Object')
})

test('a Windows exit code comes back whole (not cut to 8 bits as on Unix)', async (t) => {
  const host = hostWith(tempRoot(t))
  const [st] = await run(host, [NODE, '-e', 'process.exit(300)'])
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.exitCode, 300)
})

test('the loader names this platform win32-x64-msvc, one this version ships', () => {
  // lib/load.js decides what a failed load says; here it must see a shipped platform.
  const { currentPlatform, shippedPlatforms } = createRequire(import.meta.url)('../../lib/load.js')
  assert.equal(currentPlatform(), 'win32-x64-msvc')
  assert.ok(shippedPlatforms().includes('win32-x64-msvc'), shippedPlatforms().join(', '))
})
