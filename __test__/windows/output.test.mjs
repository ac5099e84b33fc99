// Output and environment on Windows: a stream of multi-byte text pages back
// exactly (every page of any size, and the tail, slices the decoded stream;
// the pages reassemble to it), and `env` replaces the environment — the
// command sees exactly the given variables (minus the ones wine itself adds:
// WINE*, SystemDrive, SystemRoot), while without `env` it inherits the host's.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { NODE, hostWith, nc, run, script, tempRoot } from './helpers.mjs'

// ASCII, 2-, 3- and 4-byte UTF-8 (a surrogate pair in JS), a CRLF; 10 000 times ≈ 300 KB.
const UNIT = 'abc é ☃ 𝄞 日本語\r\n'
const TEXT = UNIT.repeat(10_000)

test('multi-byte output pages back exactly: pages of 137 and of 1 reassemble to the stream; the tail is its end', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const printer = script(root, 'print.js', `process.stdout.write(${JSON.stringify(UNIT)}.repeat(10000))\n`)
  const h = await nc.startBackgroundCommand(host, [NODE, printer], { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 60_000 })
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.stdoutBytes, Buffer.byteLength(TEXT))
  assert.equal(await nc.readArtifact(st.stdout.artifactId), TEXT)

  let joined = ''
  for (let offset = 0; ; ) {
    const p = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', offset, limit: 137 })
    assert.equal(p.totalSize, TEXT.length)
    assert.equal(p.content, TEXT.slice(offset, offset + 137))
    joined += p.content
    offset += p.content.length
    if (!p.hasMore) break
  }
  assert.equal(joined, TEXT)
  // Single characters straddling a 4-byte character (its two UTF-16 halves).
  const at = TEXT.indexOf('𝄞')
  for (const offset of [at - 1, at, at + 1, at + 2]) {
    const p = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', offset, limit: 1 })
    assert.equal(p.content, TEXT.slice(offset, offset + 1), `offset ${offset}`)
  }
  const tail = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', tail: 1000 })
  assert.equal(tail.offset + tail.content.length, TEXT.length)
  assert.equal(tail.content, TEXT.slice(tail.offset))
  assert.ok(tail.content.length >= 999 && tail.content.length <= 1000, `${tail.content.length}`)
})

const WINE_ADDS = /^(WINE.*|SystemDrive|SystemRoot)$/i

/** A command that prints its environment as JSON. */
function envPrinter(root) {
  return script(root, 'env.js', 'process.stdout.write(JSON.stringify(process.env))\n')
}

test('env replaces the environment: the command sees exactly the given variables', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  // node.exe needs SystemRoot to start natively; it is part of the given set.
  const given = { SystemRoot: process.env.SystemRoot ?? '', NLC_ONE: 'one', NLC_UNICODE: 'é ☃ 𝄞', NLC_SPACES: ' a = b ' }
  process.env.NLC_WIN_PARENT_ONLY = 'parent'
  t.after(() => delete process.env.NLC_WIN_PARENT_ONLY)
  const [st, out] = await run(host, [NODE, envPrinter(root)], { env: given })
  assert.equal(st.exitCode, 0, await nc.readArtifact(st.stderr.artifactId))
  const seen = JSON.parse(out)
  const strip = (env) => Object.fromEntries(Object.entries(env).filter(([k]) => !WINE_ADDS.test(k)))
  assert.deepEqual(strip(seen), strip(given))
  assert.equal(seen.SystemRoot, given.SystemRoot)
})

test('control: without env the command inherits the host’s environment', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  process.env.NLC_WIN_PARENT_ONLY = 'parent'
  t.after(() => delete process.env.NLC_WIN_PARENT_ONLY)
  const [st, out] = await run(host, [NODE, envPrinter(root)])
  assert.equal(st.exitCode, 0)
  assert.equal(JSON.parse(out).NLC_WIN_PARENT_ONLY, 'parent')
})
