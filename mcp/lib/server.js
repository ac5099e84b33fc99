// The MCP server: neurolink-commands' tool objects (whatever the library
// returns, with their JSON Schemas unchanged) served over stdio through the
// SDK's low-level Server. One host and one session per server process.

import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'

import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import nc from 'neurolink-commands'

import { UsageError, USAGE, parseCommandLine } from './config.js'
import { isSettled, renderResult } from './render.js'

const require = createRequire(import.meta.url)
const { version } = require('../package.json')
// The tools' contract (names, schemas, limits) and artifact_read's tool
// object come from the library, as its other tools do.
const { limits, specs } = require('neurolink-commands/lib/contract.js')
const { createArtifactTool } = require('neurolink-commands/lib/tools.js')

/** The longest wait one call makes: under the ~60 s request timeout of common MCP clients. */
export const WAIT_CAP_MS = 50000
/** A wait is made of slices this long, so a cancelled wait leaves nothing waiting for long. */
const WAIT_SLICE_MS = 1000
/** Progress notifications during a wait come this often (the contract asks for at least one a second). */
const PROGRESS_EVERY_MS = 500
/** Arguments larger than this (as JSON) are refused before any tool sees them. */
export const MAX_ARGUMENTS_BYTES = 4 * 1024 * 1024
/** The stdio transport's buffer for one incoming message (the SDK's default is 10 MiB). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024
/** The code a refusal gets when the library gave it none. */
export const FALLBACK_CODE = 'NLC_INVALID_ARGUMENT'
/** The extra command tools asked for (§9, §10). */
const EXTRA_TOOLS = limits.extraTools
/** Which tools only read (an annotation for clients; unknown tools get none). */
const READ_ONLY = new Set(
  Object.values(specs)
    .filter((s) => s.readOnly)
    .map((s) => s.name),
)

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

function messageOf(e) {
  try {
    if (e instanceof Error) return e.message
    return String(e)
  } catch {
    return 'an error that cannot be described'
  }
}

function codeOf(e) {
  try {
    return typeof e?.code === 'string' && e.code.startsWith('NLC_') ? e.code : undefined
  } catch {
    return undefined
  }
}

/** A tool error as MCP carries it: isError, the code in structuredContent and in the text. */
export function refusal(message, code) {
  const c = typeof code === 'string' && code !== '' ? code : FALLBACK_CODE
  return {
    isError: true,
    content: [{ type: 'text', text: `${c}: ${message}` }],
    structuredContent: { error: message, code: c },
  }
}

/** structuredContent must be a JSON object; a result that is not one is wrapped. */
function structured(result) {
  if (Array.isArray(result)) return { commands: result }
  if (isObject(result)) return JSON.parse(JSON.stringify(result))
  return { value: result ?? null }
}

/**
 * The configured runtime: a host with its policy (and git settings), its
 * tools by name, its one session. Throws UsageError for a configuration the
 * library refuses.
 */
export function createRuntime({ policy, git }) {
  if (policy.confine !== undefined && policy.confine !== false) {
    // Fail closed: never run unconfined when confinement was asked for.
    if (typeof nc.confinementSupport !== 'function') {
      throw new UsageError(
        'confinement was asked for (--confine or "confine" in the config file), but this build of neurolink-commands ' +
          'does not support kernel confinement (it exports no confinementSupport); the server will not run commands ' +
          'unconfined instead. Leave out --confine to run without it.',
      )
    }
    let support
    try {
      support = nc.confinementSupport()
    } catch (e) {
      throw new UsageError(`confinement was asked for, but confinementSupport() failed: ${messageOf(e)}`)
    }
    if (!support || support.filesystem !== true) {
      throw new UsageError(
        `confinement was asked for, but this kernel cannot enforce it (confinementSupport() = ${JSON.stringify(support)}); ` +
          'the server will not run commands unconfined instead. Leave out --confine to run without it.',
      )
    }
  }

  const sessionId = `mcp-${process.pid}-${randomBytes(4).toString('hex')}`
  // The host is the library's key for policy, commands and git settings. Its
  // tool context names the server's one session, so every start, count and
  // git run lands in it, also where an execution context is not passed.
  const host = { getToolContext: () => ({ sessionId }) }
  // The server's session ends with its process, and so does every way to
  // read its commands' logs: remove them when it exits (SPEC §13), unless
  // NEUROLINK_COMMANDS_MCP_KEEP_LOGS=1 asks to keep them.
  if (typeof nc.configureLogs === 'function' && process.env.NEUROLINK_COMMANDS_MCP_KEEP_LOGS !== '1') {
    nc.configureLogs({ removeOnExit: true })
  }
  try {
    nc.setBackgroundCommandPolicy(host, policy)
  } catch (e) {
    throw new UsageError(`the policy was refused: ${messageOf(e)}`)
  }

  // Ask for the extra tools; a library that lacks one of them (and refuses
  // the request) is asked for each alone, then for the default set.
  const tools = new Map()
  const add = (set) => {
    for (const t of Object.values(set ?? {})) if (t && typeof t.name === 'string') tools.set(t.name, t)
  }
  try {
    add(nc.createBackgroundCommandTools(host, { extra: EXTRA_TOOLS }))
  } catch {
    for (const extra of EXTRA_TOOLS) {
      try {
        add(nc.createBackgroundCommandTools(host, { extra: [extra] }))
      } catch {
        // this library does not have that tool
      }
    }
    if (tools.size === 0) add(nc.createBackgroundCommandTools(host))
  }

  if (git) {
    try {
      nc.configureGitTools(host, git)
    } catch (e) {
      throw new UsageError(`the git settings were refused: ${messageOf(e)}`)
    }
    for (const t of Object.values(nc.createGitTools(host))) tools.set(t.name, t)
    tools.set(
      'artifact_read',
      createArtifactTool((artifactId, window) => nc.retrieveArtifact(artifactId, window)),
    )
  }
  for (const [name, t] of tools) {
    if (!t || typeof t.execute !== 'function' || !isObject(t.inputSchema)) tools.delete(name)
  }
  return { host, sessionId, tools, policy, git }
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** A tool's execute, made total: whatever happens, a value comes back. */
async function execute(tool, args, context) {
  try {
    return await tool.execute(args, context)
  } catch (e) {
    return { isError: true, error: `${tool.name}: ${messageOf(e)}`, code: codeOf(e) }
  }
}

function toMcp(result, artifactToolName) {
  if (isObject(result) && result.isError === true) {
    return refusal(typeof result.error === 'string' ? result.error : 'the tool refused', result.code)
  }
  return {
    content: [{ type: 'text', text: renderResult(result, { artifactTool: artifactToolName }) }],
    structuredContent: structured(result),
  }
}

/** A command_status call that waits: what the server slices, reports progress on and caps. */
function waitOf(name, args) {
  if (name !== 'command_status') return undefined
  const w = args.waitMs
  return typeof w === 'number' && Number.isFinite(w) && w > 0 ? w : undefined
}

/**
 * command_status with waitMs: waits in slices (so a cancellation stops it at
 * once and leaves at most one short slice behind), sends progress when the
 * client gave a progressToken, and returns the current status once the wait
 * reaches WAIT_CAP_MS. The command is never touched by the wait.
 */
async function waitingStatus(tool, args, context, waitMs, extra) {
  const total = Math.min(waitMs, WAIT_CAP_MS)
  const started = Date.now()
  const token = extra?._meta?.progressToken
  const signal = extra?.signal
  let lastProgress = -1
  const progress = () => {
    if (token === undefined || signal?.aborted) return
    const elapsed = Math.min(Date.now() - started, total)
    const value = Math.max(elapsed, lastProgress + 1)
    if (value > total) return // the wait is over; its answer follows
    lastProgress = value
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: value,
          total,
          message: `waiting for ${args.taskId}: ${(elapsed / 1000).toFixed(1)} s of ${(total / 1000).toFixed(1)} s`,
        },
      })
      .catch(() => {})
  }
  let onAbort
  const aborted = new Promise((resolve) => {
    if (!signal) return
    onAbort = () => resolve('aborted')
    if (signal.aborted) resolve('aborted')
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  progress()
  const timer = token === undefined ? undefined : setInterval(progress, PROGRESS_EVERY_MS)
  try {
    for (;;) {
      const remaining = Math.max(0, total - (Date.now() - started))
      const slice = Math.min(remaining, WAIT_SLICE_MS)
      const sliceStarted = Date.now()
      const result = await Promise.race([execute(tool, { ...args, waitMs: slice }, context), aborted])
      if (result === 'aborted') {
        // The client has stopped listening for this answer; the command runs on.
        return { cancelled: true }
      }
      if (!isObject(result) || result.isError === true) return { result }
      if (isSettled(result.state) || result.waitMatched === true || remaining <= slice) {
        const capped = waitMs > WAIT_CAP_MS && !isSettled(result.state) && result.waitMatched !== true
        return { result, capped }
      }
      // A slice that came back at once without news (a tool that does not
      // wait) must not turn the wait into a busy loop.
      if (Date.now() - sliceStarted < 20 && (await Promise.race([delay(50), aborted])) === 'aborted') {
        return { cancelled: true }
      }
    }
  } finally {
    if (timer) clearInterval(timer)
    if (onAbort) signal.removeEventListener('abort', onAbort)
  }
}

function argumentsSize(args) {
  try {
    return Buffer.byteLength(JSON.stringify(args) ?? '')
  } catch {
    return Infinity
  }
}

/** The MCP Server with both handlers; `runtime` from createRuntime. */
export function createServer(runtime) {
  const { tools, sessionId, policy } = runtime
  const artifactToolName = tools.has('artifact_read') ? 'artifact_read' : undefined
  const server = new Server(
    { name: 'neurolink-commands-mcp', version },
    {
      capabilities: { tools: {} },
      instructions:
        `Runs commands in the background without a shell: argv[0] must be exactly one of ${JSON.stringify(policy.allowedExecutables)}, ` +
        `each argument its own argv entry, the working directory inside ${policy.cwdRoot}. ` +
        `Start with run_command_bg, follow with command_status (waitMs waits, at most ${WAIT_CAP_MS / 1000} s per call) and read every byte with command_output.`,
    },
  )

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map((t) => {
      const entry = { name: t.name, description: t.description, inputSchema: t.inputSchema }
      if (READ_ONLY.has(t.name)) entry.annotations = { readOnlyHint: true }
      return entry
    }),
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    try {
      const { name } = request.params
      const tool = tools.get(name)
      if (!tool) {
        return refusal(`Unknown tool ${JSON.stringify(name)}: this server offers ${[...tools.keys()].join(', ')}`, FALLBACK_CODE)
      }
      const args = request.params.arguments ?? {}
      if (!isObject(args)) return refusal(`${name} expects its arguments as an object`, FALLBACK_CODE)
      const size = argumentsSize(args)
      if (size > MAX_ARGUMENTS_BYTES) {
        return refusal(
          `${name}: the arguments are ${size === Infinity ? 'not serialisable' : `${size} bytes`}; this server takes at most ${MAX_ARGUMENTS_BYTES} bytes of arguments per call`,
          FALLBACK_CODE,
        )
      }
      const context = { sessionId }
      const waitMs = waitOf(name, args)
      if (waitMs === undefined) return toMcp(await execute(tool, args, context), artifactToolName)

      const waited = await waitingStatus(tool, args, context, waitMs, extra)
      if (waited.cancelled) return refusal('the wait was cancelled; the command keeps running', 'NLC_CANCELLED')
      const answer = toMcp(waited.result, artifactToolName)
      if (waited.capped) {
        answer.structuredContent.waitCappedMs = WAIT_CAP_MS
        answer.content[0].text += `\nThe wait stopped at ${WAIT_CAP_MS / 1000} s, the most this server waits in one call; the command keeps running — call command_status with waitMs again to wait longer.`
      }
      return answer
    } catch (e) {
      return refusal(`the server could not handle this call: ${messageOf(e)}`, FALLBACK_CODE)
    }
  })
  return server
}

/**
 * Run the server on this process's stdio. Returns the exit code for a
 * configuration that cannot start (2); otherwise runs until stdin closes or a
 * terminating signal arrives, stops every command it started and exits.
 */
export async function main(argv = process.argv.slice(2)) {
  // stdout carries the protocol only.
  console.log = console.error
  console.info = console.error
  let runtime
  try {
    const parsed = parseCommandLine(argv)
    if (parsed.help) {
      process.stderr.write(USAGE)
      return 0
    }
    runtime = createRuntime(parsed)
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`neurolink-commands-mcp: ${e.message}\nRun neurolink-commands-mcp --help for the flags.\n`)
      return 2
    }
    throw e
  }

  // Logs kept across restarts: the ids an earlier server handed out answer
  // again (SPEC §15).
  if (process.env.NEUROLINK_COMMANDS_MCP_KEEP_LOGS === '1' && typeof nc.recoverBackgroundCommands === 'function') {
    try {
      const n = await nc.recoverBackgroundCommands(runtime.host)
      if (n > 0) process.stderr.write(`neurolink-commands-mcp: recovered ${n} commands of earlier runs\n`)
    } catch (e) {
      process.stderr.write(`neurolink-commands-mcp: recovering earlier commands failed: ${messageOf(e)}\n`)
    }
  }
  const server = createServer(runtime)
  const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: MAX_MESSAGE_BYTES })
  server.onerror = (e) => process.stderr.write(`neurolink-commands-mcp: ${messageOf(e)}\n`)

  let stopping = false
  const stop = async (why) => {
    if (stopping) return
    stopping = true
    // Whatever happens below, the process is gone well within 5 s: commands
    // still standing then get SIGTERM from the library's exit hook and
    // SIGKILL from its watchdog.
    const guard = setTimeout(() => process.exit(0), 3500)
    guard.unref?.()
    try {
      const stopped = await Promise.race([nc.killAllBackgroundCommands(runtime.host), delay(3000).then(() => 'not all yet')])
      process.stderr.write(`neurolink-commands-mcp: stopping (${why}); commands stopped: ${stopped}\n`)
    } catch (e) {
      process.stderr.write(`neurolink-commands-mcp: stopping the commands (${why}) failed: ${messageOf(e)}\n`)
    }
    try {
      await Promise.race([server.close(), delay(200)])
    } catch {
      // closing a transport that is already gone
    }
    process.exit(0)
  }

  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => void stop(sig))
  process.stdin.on('end', () => void stop('stdin closed'))
  process.stdin.on('close', () => void stop('stdin closed'))
  process.stdout.on('error', () => void stop('stdout closed'))
  server.onclose = () => void stop('connection closed')
  // A bug must not take the server down with its commands' evidence: report and go on.
  process.on('uncaughtException', (e) => process.stderr.write(`neurolink-commands-mcp: uncaught ${messageOf(e)}\n`))
  process.on('unhandledRejection', (e) => process.stderr.write(`neurolink-commands-mcp: unhandled ${messageOf(e)}\n`))

  await server.connect(transport)
  return undefined
}
