// The tools driven through the real agent clients, as a host hands them
// over (SPEC §3: every client takes the schemas as they are): the Vercel AI
// SDK with its mock language model, and the OpenAI Agents SDK in its default
// strict mode with a model of our own behind its Model interface. Each runs
// the whole loop a model would — run_command_bg, command_status { waitFor },
// command_output — and the bytes read back are the command's exact output.
// Every schema (command tools with the extras, git tools, the MCP server's
// list) is checked against the Anthropic API's rules for a tool schema's top.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { Agent, run, setTracingDisabled, tool as agentTool, Usage } from '@openai/agents'
import type { AgentInputItem, Model, ModelRequest, ModelResponse } from '@openai/agents'
import { generateText, jsonSchema, stepCountIs, tool as aiTool } from 'ai'
import type { ToolSet } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

import { Client } from '../mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js'
import { StdioClientTransport } from '../mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js'
import { hostWith, NODE, nc, tempRoot } from './helpers.ts'

type LanguageModelV4CallOptions = Parameters<MockLanguageModelV4['doGenerate']>[0]
type LanguageModelV4GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>

setTracingDisabled(true)
const ROOT = tempRoot('nlc-clients-')
after(() => rmSync(ROOT, { recursive: true, force: true }))
const SH = '/bin/sh'
/** What the command prints: UTF-8 beyond ASCII, a quote, a tab, and the line the wait looks for. */
const OUT = 'build ok: ünïcødé "quoted"\ttab\nready\n'
const SCRIPT = `printf '%s' '${OUT.replace(/'/g, `'\\''`)}'`

/** The three calls of the loop, from what the previous results say. */
function nextCall(results: Record<string, unknown>[]): { name: string; args: Record<string, unknown> } | undefined {
  if (results.length === 0) return { name: 'run_command_bg', args: { argv: [SH, '-c', SCRIPT] } }
  const taskId = results[0]!.taskId as string
  if (results.length === 1) return { name: 'command_status', args: { taskId, waitMs: 10_000, waitFor: 'ready' } }
  if (results.length === 2) return { name: 'command_output', args: { taskId } }
  return undefined
}

function checkLoop(results: Record<string, unknown>[]): void {
  assert.equal(results.length, 3, JSON.stringify(results))
  assert.match(results[0]!.taskId as string, /^c\d+[0-9a-f]{12}$/)
  assert.equal(results[1]!.waitMatched, true, JSON.stringify(results[1]))
  assert.equal(results[1]!.waitLine, 'ready')
  assert.equal(results[2]!.content, OUT, 'the exact output, every byte')
  assert.equal(results[2]!.totalSize, OUT.length)
}

test('the Vercel AI SDK: jsonSchema(inputSchema) as it is, a mock model runs the loop, the output is exact', async () => {
  const host = hostWith(ROOT, [SH])
  const ours = nc.createBackgroundCommandTools(host)
  const tools: ToolSet = {}
  for (const t of Object.values(ours)) {
    tools[t.name] = aiTool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: (input) => t.execute(input) })
  }
  const seen: Record<string, unknown>[] = []
  let calls = 0
  const model = new MockLanguageModelV4({
    doGenerate: async (options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
      // what the SDK sent the model: our schemas, unchanged
      const sent = options.tools ?? []
      assert.deepEqual(Object.fromEntries(sent.map((t) => [t.name, t.type === 'function' ? t.inputSchema : undefined])), Object.fromEntries(Object.values(ours).map((t) => [t.name, t.inputSchema])))
      const results: Record<string, unknown>[] = []
      for (const m of options.prompt) {
        if (m.role !== 'tool') continue
        for (const part of m.content) {
          if (part.type === 'tool-result' && part.output.type === 'json') results.push(part.output.value as Record<string, unknown>)
        }
      }
      seen.splice(0, seen.length, ...results)
      const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
      const call = nextCall(results)
      if (!call) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
      calls += 1
      return {
        content: [{ type: 'tool-call', toolCallId: `call-${calls}`, toolName: call.name, input: JSON.stringify(call.args) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      }
    },
  })
  const r = await generateText({ model, tools, prompt: 'build it', stopWhen: stepCountIs(10) })
  assert.equal(r.text, 'done')
  checkLoop(seen)
})

/** A model behind the Agents SDK's Model interface that plays the loop and records what it was sent. */
class LoopModel implements Model {
  requests: ModelRequest[] = []
  results: Record<string, unknown>[] = []
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request)
    const items = (typeof request.input === 'string' ? [] : request.input) as AgentInputItem[]
    this.results = []
    for (const item of items) {
      if (item.type !== 'function_call_result') continue
      const out = item.output as unknown
      const text = typeof out === 'string' ? out : (out as { text: string }).text
      this.results.push(JSON.parse(text) as Record<string, unknown>)
    }
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 })
    const call = nextCall(this.results)
    if (!call) {
      return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }] }
    }
    // As OpenAI's strict mode has a model send them: every parameter, null for those not given.
    const tool = request.tools.find((t) => t.type === 'function' && t.name === call.name)
    assert.ok(tool && tool.type === 'function')
    const args: Record<string, unknown> = {}
    for (const k of Object.keys(tool.parameters.properties)) args[k] = call.args[k] ?? null
    return {
      usage,
      output: [{ type: 'function_call', callId: `call-${this.results.length}`, name: call.name, arguments: JSON.stringify(args), status: 'completed' }],
    }
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed in this test')
  }
}

test('the OpenAI Agents SDK in strict mode: tool({ parameters: inputSchema }) as it is, nulls for what is not given, the output is exact', async () => {
  const host = hostWith(ROOT, [SH])
  const ours = nc.createBackgroundCommandTools(host)
  const given: Record<string, unknown>[] = []
  const tools = Object.values(ours).map((t) =>
    agentTool({
      name: t.name,
      description: t.description,
      parameters: t.inputSchema,
      execute: async (input) => {
        given.push(input as Record<string, unknown>)
        return t.execute(input)
      },
    }),
  )
  for (const t of tools) assert.equal(t.strict, true, `${t.name}: strict, the default`)
  const model = new LoopModel()
  const agent = new Agent({ name: 'builder', instructions: 'build it', model, tools })
  const r = await run(agent, 'build it', { maxTurns: 10 })
  assert.equal(r.finalOutput, 'done')
  checkLoop(model.results)
  // What strict mode sent the model: every parameter required, the optional ones nullable.
  const status = model.requests[0]!.tools.find((t) => t.type === 'function' && t.name === 'command_status')
  assert.ok(status && status.type === 'function' && status.strict === true)
  assert.deepEqual(status.parameters.required, ['taskId', 'waitMs', 'waitFor'])
  assert.deepEqual((status.parameters.properties as Record<string, unknown>).waitMs, {
    description: ours.command_status.inputSchema.properties.waitMs!.description,
    anyOf: [ours.command_status.inputSchema.properties.waitMs, { type: 'null' }],
  })
  // The nulls the model sent for what it left out reached the tool as not given.
  assert.deepEqual(given[2], { taskId: model.results[0]!.taskId })
})

/** The Anthropic API's rules for a tool's input_schema top level, and OpenAI strict mode's keywords. */
function checkSchema(where: string, s: Record<string, unknown>): void {
  assert.equal(s.type, 'object', `${where}: type "object"`)
  for (const k of ['oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else']) assert.ok(!(k in s), `${where}: no ${k} at the top`)
  assert.equal(s.additionalProperties, false, `${where}: closed`)
  assert.ok(s.properties && typeof s.properties === 'object', `${where}: properties`)
  const walk = (v: unknown, path: string): void => {
    if (v === null || typeof v !== 'object') return
    for (const k of ['oneOf', 'allOf', 'not', 'if', 'minLength', 'maxLength', 'patternProperties']) {
      assert.ok(!(k in (v as object)), `${path}: ${k} is outside OpenAI's strict subset`)
    }
    for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`)
  }
  walk(s.properties, `${where}.properties`)
}

test("every tool schema — command tools with the extras, git tools, the MCP server's list — has a top the Anthropic API takes", async () => {
  const repo = join(ROOT, 'repo')
  execFileSync('git', ['init', '-q', repo])
  writeFileSync(join(repo, 'a.txt'), 'a\n')
  const host = hostWith(ROOT, [SH])
  nc.configureGitTools(host, { repoRoot: repo })
  const all = {
    ...nc.createBackgroundCommandTools(host, { extra: ['command_input', 'command_list'] }),
    ...nc.createGitTools(host),
  }
  assert.equal(Object.keys(all).length, 12)
  for (const t of Object.values(all)) {
    checkSchema(t.name, t.inputSchema as unknown as Record<string, unknown>)
    // and the Agents SDK takes each in strict mode
    assert.doesNotThrow(() => agentTool({ name: t.name, description: t.description, parameters: t.inputSchema, execute: async () => '' }), t.name)
  }
  const bin = fileURLToPath(new URL('../mcp/bin/neurolink-commands-mcp.js', import.meta.url))
  const env: Record<string, string> = {}
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR
  const transport = new StdioClientTransport({ command: NODE, args: [bin, '--root', repo, '--allow', SH, '--git', repo], env, stderr: 'pipe' })
  const client = new Client({ name: 'nlc-clients-test', version: '1.0.0' })
  await client.connect(transport)
  try {
    const { tools } = await client.listTools()
    assert.ok(tools.length >= 13, tools.map((t) => t.name).join(', '))
    for (const t of tools) checkSchema(`mcp ${t.name}`, t.inputSchema as Record<string, unknown>)
  } finally {
    await client.close()
  }
})

const HAND_OVER = `import { createBackgroundCommandTools, createGitTools } from 'neurolink-commands'
import type { CommandTool } from 'neurolink-commands'
import { jsonSchema, tool as aiTool } from 'ai'
import type { ToolSet } from 'ai'
import { tool as agentTool } from '@openai/agents'
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'

const host = {}
const all: CommandTool[] = [
  ...Object.values(createBackgroundCommandTools(host, { extra: ['command_input', 'command_list'] })),
  ...Object.values(createGitTools(host)),
]
// Every inputSchema to each client as it is: no cast anywhere.
const forAi: ToolSet = {}
for (const t of all) {
  forAi[t.name] = aiTool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: (input) => t.execute(input) })
}
const forAgents = all.map((t) =>
  agentTool({ name: t.name, description: t.description, parameters: t.inputSchema, execute: (input) => t.execute(input) }),
)
const forMcp: McpTool[] = all.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))
export { forAi, forAgents, forMcp }
`

test('a strict TypeScript host hands every inputSchema to the AI SDK, the Agents SDK and an MCP tool list without a cast', async () => {
  const { compile, strictProject } = await import('./strict-project.ts')
  const dir = strictProject({ 'hand-over.mts': HAND_OVER }, 'nlc-clients-ts-', ['ai', '@openai/agents', 'zod', '@modelcontextprotocol/sdk'])
  try {
    await compile(dir, true)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  // the control: a schema typed as a general JSON Schema is refused by the Agents SDK's type
  const loose = `import type { JsonSchema } from 'neurolink-commands'
import { tool } from '@openai/agents'
const s: JsonSchema = { type: 'object', properties: {} }
export const t = tool({ name: 'x', description: 'x', parameters: s, execute: async () => '' })
`
  const bad = strictProject({ 'loose.mts': loose }, 'nlc-clients-ts-bad-', ['@openai/agents', 'zod'])
  try {
    await assert.rejects(compile(bad, true), /loose\.mts\(4,\d+\): error TS/)
  } finally {
    rmSync(bad, { recursive: true, force: true })
  }
})

test('the AI SDK recipe of docs/guide/agent-frameworks.md: a refusal thrown from execute reaches the model as a tool error', async () => {
  const host = hostWith(ROOT, [SH])
  const status = nc.createBackgroundCommandTools(host).command_status
  const seen: { type: string; value: unknown }[] = []
  const model = () =>
    new MockLanguageModelV4({
      doGenerate: async (options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
        const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
        const tool = options.prompt.filter((m) => m.role === 'tool')
        if (tool.length > 0) {
          for (const m of tool) for (const p of m.content) if (p.type === 'tool-result') seen.push(p.output as { type: string; value: unknown })
          return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
        }
        return {
          content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'command_status', input: JSON.stringify({ taskId: 'c1feedfacecafe' }) }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        }
      },
    })
  const recipe = aiTool({
    description: status.description,
    inputSchema: jsonSchema(status.inputSchema),
    execute: async (input) => {
      const result = await status.execute(input)
      if (nc.isToolRefusal(result)) throw new Error(`${result.code}: ${result.error}`)
      return result
    },
  })
  await generateText({ model: model(), tools: { command_status: recipe }, prompt: 'status', stopWhen: stepCountIs(3) })
  assert.equal(seen.length, 1)
  assert.equal(seen[0]!.type, 'error-text', JSON.stringify(seen[0]))
  assert.match(String(seen[0]!.value), /^(Error: )?NLC_UNKNOWN_TASK: command_status \{.*use the taskId that run_command_bg returned\.$/)
  // the control: returned as it is, the refusal is an ordinary JSON result
  seen.length = 0
  const plain = aiTool({ description: status.description, inputSchema: jsonSchema(status.inputSchema), execute: (input) => status.execute(input) })
  await generateText({ model: model(), tools: { command_status: plain }, prompt: 'status', stopWhen: stepCountIs(3) })
  assert.equal(seen[0]!.type, 'json')
  assert.equal((seen[0]!.value as { isError: boolean }).isError, true)
})

test('null for every optional parameter, as a strict-mode model sends it to a client that passes it on, counts as not given', async () => {
  const repo = join(ROOT, 'nulls')
  const env = { ...process.env, GIT_AUTHOR_NAME: 'N', GIT_AUTHOR_EMAIL: 'n@example.com', GIT_COMMITTER_NAME: 'N', GIT_COMMITTER_EMAIL: 'n@example.com' }
  execFileSync('git', ['init', '-q', repo])
  writeFileSync(join(repo, 'a.txt'), 'a\n')
  execFileSync('git', ['add', '.'], { cwd: repo, env })
  execFileSync('git', ['commit', '-q', '-m', 'a'], { cwd: repo, env })
  const host = hostWith(repo, [SH])
  nc.configureGitTools(host, { repoRoot: repo })
  const all = { ...nc.createBackgroundCommandTools(host, { extra: ['command_input', 'command_list'] }), ...nc.createGitTools(host) }
  const done = await nc.startBackgroundCommand(host, [SH, '-c', 'printf x'])
  await nc.awaitBackgroundCommand(host, done.taskId)
  const piped = await nc.startBackgroundCommand(host, [SH, '-c', 'cat'], { stdin: 'pipe' })
  const required: Record<string, Record<string, unknown>> = {
    run_command_bg: { argv: [SH, '-c', 'true'] },
    command_status: { taskId: done.taskId },
    command_output: { taskId: done.taskId },
    command_kill: { taskId: done.taskId },
    command_input: { taskId: piped.taskId },
    command_list: {},
    git_log: {},
    git_show: { ref: 'HEAD' },
    git_diff: {},
    git_blame: { path: 'a.txt' },
    git_merge_base: { base: 'HEAD', head: 'HEAD' },
    git_ls_files: {},
  }
  assert.deepEqual(Object.keys(required).sort(), Object.keys(all).sort())
  for (const t of Object.values(all)) {
    const args: Record<string, unknown> = { ...required[t.name] }
    for (const k of Object.keys(t.inputSchema.properties)) if (!(k in args)) args[k] = null
    const r = await t.execute(args)
    assert.ok(!nc.isToolRefusal(r), `${t.name} ${JSON.stringify(args)}: ${JSON.stringify(r)}`)
    if (t.name === 'command_output') assert.equal((r as { content: string }).content, 'x', 'stream null is stdout, the default')
    if (t.name === 'run_command_bg') await nc.awaitBackgroundCommand(host, (r as { taskId: string }).taskId)
  }
  await nc.killBackgroundCommand(host, piped.taskId)
})
