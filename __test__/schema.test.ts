// Each tool's inputSchema and its runtime agree. Examples
// are first judged by a small JSON Schema validator (the subset the schemas
// use); every schema-valid one is accepted by the tool, every schema-invalid
// one is refused in-band with NLC_INVALID_ARGUMENT. Refusals of both tool
// families start with the tool's name and params shape.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'

import { hostWith, nc, tempRoot } from './helpers.ts'

const ROOT = tempRoot('nlc-schema-')
after(() => rmSync(ROOT, { recursive: true, force: true }))
const SH = '/bin/sh'

/** Whether `v` satisfies `s` (type, enum, bounds, minLength, items, properties, required, additionalProperties, oneOf, not). */
function valid(s: nc.JsonSchema, v: unknown): boolean {
  const isObj = typeof v === 'object' && v !== null && !Array.isArray(v)
  switch (s.type) {
    case 'object':
      if (!isObj) return false
      break
    case 'array':
      if (!Array.isArray(v)) return false
      break
    case 'string':
      if (typeof v !== 'string') return false
      if (s.minLength !== undefined && v.length < s.minLength) return false
      break
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) return false
      break
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v)) return false
      break
    case 'boolean':
      if (typeof v !== 'boolean') return false
      break
  }
  if (s.enum && !s.enum.includes(v as string)) return false
  if (typeof v === 'number') {
    if (s.minimum !== undefined && v < s.minimum) return false
    if (s.maximum !== undefined && v > s.maximum) return false
    if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) return false
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems) return false
    if (s.items && !v.every((x) => valid(s.items!, x))) return false
  }
  if (isObj) {
    const o = v as Record<string, unknown>
    for (const r of s.required ?? []) if (!(r in o)) return false
    for (const [k, x] of Object.entries(o)) {
      const p = s.properties?.[k]
      if (p ? !valid(p, x) : s.additionalProperties === false) return false
    }
  }
  if (s.oneOf && s.oneOf.filter((x) => valid(x, v)).length !== 1) return false
  if (s.not && valid(s.not, v)) return false
  return true
}

test('the validator itself: a control of each keyword', () => {
  const s: nc.JsonSchema = {
    type: 'object',
    properties: { a: { type: 'integer', minimum: 1, maximum: 3 }, b: { type: 'array', items: { type: 'string' }, minItems: 1 }, c: { type: 'string', enum: ['x'] } },
    required: ['b'],
    additionalProperties: false,
    oneOf: [{ required: ['a'] }, { required: ['c'], not: { required: ['a'] } }],
  }
  assert.equal(valid(s, { a: 2, b: ['q'] }), true)
  assert.equal(valid(s, { c: 'x', b: ['q'] }), true)
  for (const bad of [{ a: 2 }, { a: 0, b: ['q'] }, { a: 4, b: ['q'] }, { a: 1.5, b: ['q'] }, { b: [] }, { b: [1] }, { a: 1, b: ['q'], z: 1 }, { c: 'y', b: ['q'] }, { b: ['q'] }, []])
    assert.equal(valid(s, bad), false, JSON.stringify(bad))
})

function fixture(): { host: object } {
  const repo = join(ROOT, 'repo')
  mkdirSync(repo)
  const env = { ...process.env, GIT_AUTHOR_NAME: 'S', GIT_AUTHOR_EMAIL: 's@example.com', GIT_COMMITTER_NAME: 'S', GIT_COMMITTER_EMAIL: 's@example.com' }
  const g = (...a: string[]) => execFileSync('git', a, { cwd: repo, env, stdio: 'ignore' })
  g('init', '-q', '-b', 'main')
  writeFileSync(join(repo, 'a.txt'), 'one\n')
  g('add', '.')
  g('commit', '-q', '-m', 'one')
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n')
  g('commit', '-q', '-am', 'two')
  const host = hostWith(ROOT, [SH, '/bin/cat'])
  nc.configureGitTools(host, { repoRoot: repo })
  return { host }
}

test('every tool: schema-valid examples are accepted, schema-invalid ones refused in-band naming the known keys', async () => {
  const fx = fixture()
  const h = await nc.startBackgroundCommand(fx.host, [SH, '-c', 'printf out; printf err >&2'], { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(fx.host, h.taskId)
  const T = h.taskId
  const A = st.stdout.artifactId
  const tools: Record<string, nc.CommandTool> = {
    ...nc.createBackgroundCommandTools(fx.host, { extra: ['command_input', 'command_list'] }),
    ...nc.createGitTools(fx.host),
  }
  // A running command that takes input, for command_input's accepted examples.
  const cat = await nc.startBackgroundCommand(fx.host, ['/bin/cat'], { cwd: '.', stdin: 'pipe' })
  const C = cat.taskId
  // runtime: schema-valid calls refused by a rule the description states and
  // the schema cannot (a tool schema has no oneOf/not at its top, SPEC §3;
  // a string's minLength is outside OpenAI's strict subset).
  const examples: Record<string, { ok: unknown[]; bad: unknown[]; runtime?: unknown[] }> = {
    run_command_bg: {
      ok: [{ argv: [SH, '-c', 'true'] }, { argv: [SH, '-c', 'true'], cwd: '.', timeoutMs: 5000 }, { argv: [SH, '-c', 'true'], stdin: true }, { argv: [SH, '-c', 'true'], terminal: false }],
      bad: [
        {},
        { argv: [] },
        { argv: [SH, 1] },
        { argv: 'sh -c true' },
        { argv: [SH], cwd: 5 },
        { argv: [SH], timeoutMs: 0 },
        { argv: [SH], timeoutMs: '9' },
        { argv: [SH], stdin: 'pipe' },
        { argv: [SH], terminal: 1 },
        { argv: [SH, '-c', 'true'], shell: true },
      ],
    },
    command_status: {
      ok: [{ taskId: T }, { taskId: T, waitMs: 0 }, { taskId: T, waitMs: 50 }, { taskId: T, waitMs: 10, waitFor: 'out' }],
      bad: [{}, { taskId: 7 }, { taskId: T, waitMs: -1 }, { taskId: T, waitFor: 3 }, { taskId: T, wait: 5 }],
      runtime: [{ taskId: T, waitFor: '' }],
    },
    command_output: {
      ok: [
        { taskId: T },
        { taskId: T, stream: 'stderr', offset: 0, limit: 1 },
        { taskId: T, tail: 2 },
        { taskId: T, grep: 'ou' },
        { artifactId: A },
        { artifactId: A, offset: 2, limit: 200000 },
        { artifactId: A, tail: 1 },
        { artifactId: A, grep: 'out' },
      ],
      runtime: [{}, { offset: 0 }, { taskId: T, artifactId: A }, { artifactId: A, stream: 'stdout' }, { taskId: T, grep: '' }],
      bad: [
        { taskId: T, stream: 'stdin' },
        { taskId: T, offset: -1 },
        { taskId: T, offset: 1.5 },
        { taskId: T, limit: 0 },
        { taskId: T, limit: 200001 },
        { taskId: T, tail: -1 },
        { taskId: T, tail: 200001 },
        { artifactId: 3 },
        { taskId: T, page: 2 },
      ],
    },
    command_kill: { ok: [{ taskId: T }], bad: [{}, { taskId: [T] }, { taskId: T, signal: 'SIGKILL' }] },
    command_input: {
      ok: [{ taskId: C, text: 'a' }, { taskId: C, keys: ['enter', 'tab'] }, { taskId: C }, { taskId: C, text: 'b', end: true }],
      bad: [{}, { taskId: C, text: 5 }, { taskId: C, keys: 'enter' }, { taskId: C, keys: ['f13'] }, { taskId: C, end: 'yes' }, { taskId: C, data: 'x' }],
    },
    command_list: { ok: [{}, { running: true }, { running: false }], bad: [{ running: 'yes' }, { sessionId: 'x' }] },
    git_log: {
      // maxCount is floored and clamped (0 → 1, 501 → 500), as its schema's description says.
      ok: [{}, { maxCount: 1, format: 'full' }, { maxCount: 0 }, { maxCount: 501.5 }, { ref: 'HEAD', path: 'a.txt', since: '2000-01-01' }],
      bad: [{ maxCount: '5' }, { format: 'json' }, { ref: 5 }, { author: 'me' }],
    },
    git_show: { ok: [{ ref: 'HEAD' }, { ref: 'HEAD', path: 'a.txt', nameOnly: true }], bad: [{}, { ref: 'HEAD', nameOnly: 'yes' }, { ref: 'HEAD', stat: true }] },
    git_diff: {
      ok: [{}, { base: 'HEAD~1', head: 'HEAD', unified: 0, nameOnly: false, stat: true }, { unified: 51 }],
      bad: [{ unified: '3' }, { stat: 1 }, { cached: true }],
    },
    git_blame: { ok: [{ path: 'a.txt' }, { path: 'a.txt', ref: 'HEAD', lineStart: 1, lineEnd: 2 }], bad: [{}, { path: 'a.txt', lineStart: '1' }, { path: 'a.txt', porcelain: true }] },
    git_merge_base: { ok: [{ base: 'HEAD~1', head: 'HEAD' }], bad: [{}, { base: 'HEAD' }, { base: 'HEAD', head: 'HEAD', all: true }] },
    git_ls_files: { ok: [{}, { path: '.' }], bad: [{ path: 1 }, { others: true }] },
  }
  assert.deepEqual(Object.keys(examples).sort(), Object.keys(tools).sort(), 'examples for every tool')
  for (const [name, { ok, bad, runtime = [] }] of Object.entries(examples)) {
    const t = tools[name]!
    assert.equal(t.inputSchema.additionalProperties, false, `${name} closes its schema`)
    const known = Object.keys(t.inputSchema.properties ?? {})
    for (const params of ok) {
      assert.equal(valid(t.inputSchema, params), true, `schema accepts ${name} ${JSON.stringify(params)}`)
      const r = await t.execute(params)
      assert.ok(!nc.isToolRefusal(r), `${name} accepts ${JSON.stringify(params)}: ${JSON.stringify(r)}`)
      if (name === 'run_command_bg' && !nc.isToolRefusal(r)) await nc.awaitBackgroundCommand(fx.host, (r as nc.RunCommandResult).taskId)
    }
    for (const params of [...bad, ...runtime]) {
      assert.equal(valid(t.inputSchema, params), !bad.includes(params), `schema ${bad.includes(params) ? 'refuses' : 'accepts'} ${name} ${JSON.stringify(params)}`)
      const r = await t.execute(params)
      assert.ok(nc.isToolRefusal(r), `${name} refuses ${JSON.stringify(params)}: ${JSON.stringify(r)}`)
      assert.equal(r.code, 'NLC_INVALID_ARGUMENT', `${name} ${JSON.stringify(params)}: ${r.error}`)
      assert.ok(r.error.startsWith(`${name} {`), `one style: the tool and its shape first: ${r.error}`)
      const extra = Object.keys(params as object).filter((k) => !known.includes(k))
      if (extra.length > 0) {
        assert.ok(r.error.includes(`unknown parameter ${JSON.stringify(extra[0])}: this tool takes only ${known.join(', ')}`), r.error)
      }
    }
  }
  await nc.awaitBackgroundCommand(fx.host, C, { timeoutMs: 10000 })
  // The control of the unknown-key refusal: without `shell`, the same call starts.
  const started = await tools.run_command_bg!.execute({ argv: [SH, '-c', 'true'] })
  assert.ok(!nc.isToolRefusal(started))
  void fx
})

test('refusals have one style across tool families: the params shape first, paths quoted alike', async () => {
  const fx = fixture2()
  const cmd = await nc.createBackgroundCommandTools(fx.host).run_command_bg.execute({ argv: [SH, '-c', 'true'], cwd: '/etc' })
  const gitR = await nc.createGitTools(fx.host).git_ls_files.execute({ path: '/etc' })
  assert.ok(nc.isToolRefusal(cmd) && nc.isToolRefusal(gitR))
  assert.match(
    cmd.error,
    /^run_command_bg \{ argv: string\[\], cwd\?: string, timeoutMs\?: number, stdin\?: boolean, terminal\?: boolean \}: cwd "\/etc" resolves to "\/etc", which is outside the permitted root "[^"]+"/,
  )
  assert.match(gitR.error, /^git_ls_files \{ path\?: string \}: path "\/etc" resolves to "\/etc", which is outside the permitted root "[^"]+"/)
  assert.equal(cmd.code, 'NLC_OUTSIDE_ROOT')
  assert.equal(gitR.code, 'NLC_INVALID_ARGUMENT')
})

function fixture2(): { host: object } {
  const root = join(ROOT, 'two')
  mkdirSync(root)
  execFileSync('git', ['init', '-q', root])
  const host = hostWith(root, [SH])
  nc.configureGitTools(host, { repoRoot: root })
  return { host }
}
