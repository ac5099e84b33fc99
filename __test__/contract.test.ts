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

test("the shared limits are the engine's enforced values", () => {
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
  const again = [
    /\b120000\b/,
    /\b200000\b/,
    /\b65536\b/,
    /\b10485760\b/,
    /\b33554432\b/,
    /previewChars: \d/,
    /\/\^nlc-/,
    /\['command_input', 'command_list'\]/,
    /'allowedExecutables', 'cwdRoot'/,
    /'repoRoot', 'timeoutMs'/,
  ]
  for (const f of files) {
    const text = readFileSync(new URL(f, root), 'utf8')
    for (const re of again) assert.doesNotMatch(text, re, `${f} defines ${re} again; take it from lib/contract.js (the engine's contract)`)
  }
})

/** The d.ts fields of a `{ ... }` body: name, optional, type (comments dropped). */
function fields(body: string): { name: string; optional: boolean; type: string }[] {
  const code = body.replace(/\/\*\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
  return code
    .split(/[;\n]/)
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const m = /^(\w+)(\??):\s*(.+)$/.exec(l)
      assert.ok(m, `a field line: ${l}`)
      return { name: m[1], optional: m[2] === '?', type: m[3].trim() }
    })
}

test("index.d.ts declares each tool's params as its spec does (names, optionality, types)", () => {
  const dts = readFileSync(new URL('index.d.ts', root), 'utf8')
  const { tools } = JSON.parse(native.toolContract()) as {
    tools: { name: string; inputSchema: { properties: Record<string, { type: string; enum?: string[]; items?: { enum?: string[] } }>; required: string[] } }[]
  }
  const alias = (name: string) => {
    const m = new RegExp(`export type ${name} =([^]*?)\\n(?=export|\\n)`).exec(dts)
    assert.ok(m, `type ${name} in index.d.ts`)
    return m[1]
      .replace(/\/\*\*[\s\S]*?\*\//g, '')
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/^\| /, '')
  }
  const tsType = (s: { type: string; enum?: string[]; items?: { enum?: string[] } }) => {
    if (s.enum) return s.enum.map((v) => `'${v}'`).join(' | ')
    if (s.type === 'array') return s.items?.enum ? `${s.items.enum.map((v) => `'${v}'`).join(' | ')}[]` : 'string[]'
    return s.type === 'integer' ? 'number' : s.type
  }
  const objectFields = (name: string) => {
    const m = new RegExp(`export interface ${name} \\{([^]*?)\\n\\}`).exec(dts)
    assert.ok(m, `interface ${name} in index.d.ts`)
    return fields(m[1]).map((f) => [f.name, f.optional, f.type])
  }
  const declared = (type: string) => {
    const arr = /^(\w+)\[\]$/.exec(type)
    if (arr && /^[A-Z]/.test(arr[1])) return `${alias(arr[1])}[]`
    // an object param is an interface of its own: its fields are checked below
    if (/^[A-Z]\w*$/.test(type)) return 'object'
    return type
  }
  const interfaces: Record<string, string> = {
    run_command_bg: 'RunCommandParams',
    command_status: 'CommandStatusParams',
    command_kill: 'CommandKillParams',
    command_input: 'CommandInputParams',
    command_list: 'CommandListParams',
    git_log: 'GitLogParams',
    git_show: 'GitShowParams',
    git_diff: 'GitDiffParams',
    git_blame: 'GitBlameParams',
    git_merge_base: 'GitMergeBaseParams',
    git_ls_files: 'GitLsFilesParams',
  }
  for (const t of tools) {
    const props = t.inputSchema.properties
    if (t.name === 'command_output') {
      // A union of the two ways to name the text (SPEC §3: the rule lives in the description and the runtime).
      const branches = alias('CommandOutputParams')
        .split(/\s\|\s(?=\{)/)
        .map((b) => fields(b.trim().replace(/^\{|\}$/g, '')))
      const names = new Set(branches.flat().map((f) => f.name))
      assert.deepEqual([...names].sort(), Object.keys(props).sort(), 'command_output: the union names every param')
      for (const f of branches.flat()) assert.equal(declared(f.type), tsType(props[f.name]), `command_output.${f.name}`)
      continue
    }
    if (t.name === 'artifact_read') continue // the MCP server's own tool: no host-facing type
    const name = interfaces[t.name]
    const m = new RegExp(`export interface ${name} \\{([^]*?)\\n\\}`).exec(dts)
    assert.ok(m, `interface ${name} in index.d.ts`)
    const got = fields(m[1]).map((f) => [f.name, f.optional, declared(f.type)])
    const want = Object.entries(props).map(([k, s]) => [k, !t.inputSchema.required.includes(k), tsType(s)])
    assert.deepEqual(got, want, `${name} declares ${t.name}'s params as the spec does`)
    for (const f of fields(m[1]).filter((f) => declared(f.type) === 'object')) {
      const inner = (props[f.name] as unknown as { properties: Record<string, { type: string }> }).properties
      const wantInner = Object.entries(inner).map(([k, s]) => [k, true, tsType(s)])
      assert.deepEqual(objectFields(f.type), wantInner, `${f.type} declares ${t.name}.${f.name} as the spec does`)
    }
  }
})

test("the defaults and bounds index.d.ts documents are the engine's", () => {
  const dts = readFileSync(new URL('index.d.ts', root), 'utf8')
  const { limits: l } = JSON.parse(native.toolContract())
  const documented: [RegExp, number][] = [
    [/Budget of a command that names none, in ms\. @default (\d+)/, l.defaultTimeoutMs],
    [/state `output-limit`\. @default (\d+)/, l.defaultMaxOutputBytes],
    [/Grace between SIGTERM and SIGKILL, in ms\. @default (\d+)/, l.defaultKillGraceMs],
    [/inputWaitMs\}\)\. @default (\d+)/, l.defaultInputWaitMs],
    [/Characters, clamped to 1\.\.(\d+)\./, l.maxPageChars],
    [/Characters, clamped to 1\.\.\d+\. @default (\d+)/, l.defaultPageChars],
    [/The first (\d+) characters\. \*\//, l.bankPreviewChars],
    [/Budget per git run, in ms\. @default (\d+)/, l.gitDefaultTimeoutMs],
    [/Bytes kept per stream\. @default (\d+)/, l.gitDefaultMaxOutputBytes],
    [/preview, clamped to 1\.\.(\d+)\./, l.gitMaxPreviewChars],
    [/preview, clamped to 1\.\.\d+\. @default (\d+)/, l.gitDefaultPreviewChars],
    [/The first (\d+) characters of stderr/, l.gitStderrPreviewChars],
  ]
  for (const [re, want] of documented) {
    const m = re.exec(dts)
    assert.ok(m, `index.d.ts documents ${re}`)
    assert.equal(Number(m[1]), want, `index.d.ts: ${re} says ${m[1]}, the engine ${want}`)
  }
})
