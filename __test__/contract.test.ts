// The tools' contract is defined once, in the engine: the committed
// docs/tool-schemas.json is what it generates (stale output fails here),
// the tool objects hosts and the MCP server get carry exactly those specs,
// and the JS sources hold none of the shared limits or lists themselves.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { nc } from './helpers.ts'

const require = createRequire(import.meta.url)
const native = require('../binding.js')
const root = new URL('..', import.meta.url)

test('docs/tool-schemas.json is what the engine generates (run node scripts/tool-schemas.mjs when this fails)', () => {
  assert.equal(readFileSync(new URL('docs/tool-schemas.json', root), 'utf8'), native.toolContract())
})

test('every tool object carries its spec: description and inputSchema byte for byte', () => {
  const { tools } = JSON.parse(native.toolContract()) as { tools: { name: string; description: string; inputSchema: object; family: string }[] }
  const host = {}
  const made = { ...nc.createBackgroundCommandTools(host, { extra: ['command_input', 'command_list'] }), ...nc.createGitTools(host) } as Record<string, nc.CommandTool>
  const offered = tools.filter((t) => t.family !== 'mcp')
  assert.deepEqual(Object.keys(made).sort(), offered.map((t) => t.name).sort())
  for (const t of offered) {
    assert.equal(made[t.name].description, t.description, t.name)
    assert.equal(JSON.stringify(made[t.name].inputSchema), JSON.stringify(t.inputSchema), t.name)
  }
})

test('the shared limits are the engine\'s enforced values', () => {
  const { limits } = JSON.parse(native.toolContract())
  assert.equal(limits.defaultTimeoutMs, 120000)
  assert.equal(limits.defaultMaxOutputBytes, 10485760)
  assert.equal(limits.maxPageChars, 200000)
  assert.equal(limits.maxListEntries, 65536)
  assert.equal(limits.bankPreviewChars, 600)
  assert.deepEqual(limits.extraTools, ['command_input', 'command_list'])
})

test('the JS sources define none of the shared limits or lists again', () => {
  const files = ['index.js', 'lib/tools.js', 'lib/terms.js', 'lib/contract.js', 'mcp/lib/config.js', 'mcp/lib/server.js', 'mcp/lib/render.js']
  const again = [/\b120000\b/, /\b200000\b/, /\b65536\b/, /\b10485760\b/, /\b33554432\b/, /previewChars: \d/, /\/\^nlc-/, /\['command_input', 'command_list'\]/, /'allowedExecutables', 'cwdRoot'/, /'repoRoot', 'timeoutMs'/]
  for (const f of files) {
    const text = readFileSync(new URL(f, root), 'utf8')
    for (const re of again) assert.doesNotMatch(text, re, `${f} defines ${re} again; take it from lib/contract.js (the engine's contract)`)
  }
})
