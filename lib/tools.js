'use strict'
// The model-facing tool objects: { name, description, inputSchema, execute }.
// execute never rejects: every refusal comes back as { isError: true, error,
// code } with the engine's message, which names the recovery step, put in
// the tool's own terms (lib/terms.js), and the same NLC_* code the host
// API's Error carries for that kind of refusal.

const { inToolTerms, resultInToolTerms } = require('./terms.js')

const DEFAULT_TIMEOUT_MS = 120000

/** An Error carrying an `NLC_*` code (SPEC §7), for refusals made here. */
function coded(message, code = 'NLC_INVALID_ARGUMENT') {
  const e = new Error(message)
  e.code = code
  return e
}

/**
 * The `NLC_*` code of whatever a tool call threw; never throws. Every API
 * call carries its code, so an uncoded throw is the model's params failing
 * to be read (a Proxy trap, a getter): an invalid argument.
 */
function codeOf(e) {
  try {
    const c = e !== null && typeof e === 'object' ? e.code : undefined
    if (typeof c === 'string' && c.startsWith('NLC_')) return c
  } catch {
    // a Proxy or a getter that throws
  }
  return 'NLC_INVALID_ARGUMENT'
}

function isObject(v) {
  try {
    return v !== null && typeof v === 'object' && !Array.isArray(v)
  } catch {
    return false // a revoked Proxy
  }
}

/** A param's value for a refusal; never throws (cycles, bigints, symbols, revoked Proxies). */
function shown(v) {
  if (typeof v === 'number' || typeof v === 'bigint') return String(v)
  if (typeof v === 'symbol') return 'a symbol'
  if (typeof v === 'function') return 'a function'
  try {
    return JSON.stringify(v) ?? typeof v
  } catch {
    return typeof v
  }
}

/**
 * An optional numeric param: absent or null is "not given" (as the git tools
 * read params); anything else must be a finite number passing `ok`, else the
 * refusal names the param as the model spelled it.
 */
function optionalNumber(params, key, what, ok = () => true) {
  const v = params[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) {
    throw coded(`${key} must be ${what} (got ${shown(v)})`)
  }
  return v
}

/** The message of whatever a tool call threw; never throws itself (execute never rejects). */
function messageOf(e) {
  try {
    if (e instanceof Error && typeof e.message === 'string') return e.message
  } catch {
    // a Proxy or a getter that throws again
  }
  try {
    return String(e)
  } catch {
    return 'the call failed with a value that cannot be described'
  }
}

/**
 * Refuse the keys the schema does not name (its `additionalProperties: false`
 * is a promise: a model that sent `shell: true` believed something false).
 */
function refuseUnknownKeys(params, known) {
  const unknown = Object.keys(params).filter((k) => !known.includes(k))
  if (unknown.length === 0) return
  const names = unknown.slice(0, 10).map((k) => JSON.stringify(k.length > 60 ? `${k.slice(0, 60)}…` : k))
  const more = unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''
  const takes = known.length === 0 ? 'no parameters' : `only ${known.join(', ')}`
  throw coded(`unknown parameter${unknown.length === 1 ? '' : 's'} ${names.join(', ')}${more}: this tool takes ${takes}`)
}

/**
 * One refusal style for every tool family: `<tool> <params shape>: <message>`
 * (a message that already names the tool, as the git validators' do, loses
 * that `<tool>: ` lead so the tool is named once).
 */
function refusalMessage(name, shape, msg) {
  const lead = `${name}: `
  const rest = msg.startsWith(lead) ? msg.slice(lead.length) : msg
  return `${name} ${shape}: ${rest}`
}

function toolObject(name, description, inputSchema, shape, run) {
  const known = Object.keys(inputSchema.properties)
  return {
    name,
    description,
    inputSchema,
    async execute(params, executionContext) {
      try {
        if (!isObject(params)) {
          throw coded(`params must be a JSON object of this shape (got ${shown(params)})`)
        }
        refuseUnknownKeys(params, known)
        return resultInToolTerms(await run(params, executionContext))
      } catch (e) {
        const code = codeOf(e)
        return { isError: true, error: refusalMessage(name, shape, inToolTerms(name, code, messageOf(e))), code }
      }
    },
  }
}

const taskIdSchema = { type: 'string', description: 'The taskId that run_command_bg returned.' }

/**
 * Each tool's `run(params, session)`: the session id the call files under,
 * as `sessionOf(executionContext)` gives it (the host's resolver's answer,
 * else the context's id; undefined: the host's session). The engine applies
 * the session rule to it, so a start and its counters always agree.
 */
function bound(sessionOf, run) {
  return (params, executionContext) => {
    const id = sessionOf(executionContext)
    return run(params, id === undefined ? undefined : { sessionId: id })
  }
}

/**
 * The command tools bound to `host`. `sessionOf(executionContext)` is the
 * call's session candidate (see `bound`).
 */
/**
 * A status result of a command blocked on its input gains a `hint` saying
 * how to answer it, in the tools' own terms.
 */
function withInputHint(out) {
  if (out.waitingForInput === true) {
    out.hint = `The command is waiting for input (blocked reading it, nothing printed for a while): send it with command_input { "taskId": "${out.taskId}", "text": "…" } (in a terminal, add "keys": ["enter"] to submit a line).`
  }
  return out
}

function createBackgroundCommandTools(host, api, sessionOf) {
  const counters = (ctx) => api.backgroundCommandCounts(host, ctx?.sessionId)
  const tool = (name, description, inputSchema, shape, run) =>
    toolObject(name, description, inputSchema, shape, bound(sessionOf, run))

  const runShape = '{ argv: string[], cwd?: string, timeoutMs?: number, stdin?: boolean, terminal?: boolean }'
  const run_command_bg = tool(
    'run_command_bg',
    'Start a command in the background and get its taskId at once; keep working and check on it later with command_status. ' +
      'There is NO shell: argv is [executable, ...args], each argument its own entry (no pipes, redirects, && or globbing), and the executable must be one the host allowlisted, spelled exactly. ' +
      'cwd defaults to the sandbox root and must stay inside it. timeoutMs may shorten the budget the host set, never lengthen it. ' +
      'Both output streams are kept in full: the status tail is orientation only; the banked stdout/stderr refs (and command_output) are the evidence.',
    {
      type: 'object',
      properties: {
        argv: {
          type: 'array',
          items: { type: 'string' },
          minItems: 1,
          description: 'The executable and its arguments, e.g. ["/usr/bin/pnpm", "run", "lint"].',
        },
        cwd: { type: 'string', description: 'Working directory inside the sandbox root (relative paths resolve against the root).' },
        timeoutMs: { type: 'number', exclusiveMinimum: 0, description: "A shorter budget than the host's, in milliseconds." },
        stdin: { type: 'boolean', description: 'Give the command an input to write to with command_input (default: none, it reads end of file).' },
        terminal: {
          type: 'boolean',
          description: 'Run it in a terminal (80x24) for programs that need one (prompts, REPLs, TUIs); its input comes from command_input, its output (escape sequences included) is stdout.',
        },
        limits: {
          type: 'object',
          properties: {
            memoryBytes: { type: 'number', exclusiveMinimum: 0, description: 'Memory the whole process tree may use, in bytes.' },
            processes: { type: 'number', exclusiveMinimum: 0, description: 'Processes the tree may hold at once.' },
            cpuMs: { type: 'number', exclusiveMinimum: 0, description: 'CPU time the whole tree may use, in milliseconds.' },
          },
          additionalProperties: false,
          description: "Tighter resource limits than the host's (never wider); a command that goes over is stopped with state killed and limit naming which.",
        },
      },
      required: ['argv'],
      additionalProperties: false,
    },
    runShape,
    async (params, ctx) => {
      const policy = api.getBackgroundCommandPolicy(host)
      if (!policy) {
        // worded for the model by lib/terms.js, as the engine's own refusal is
        throw coded('No background command policy is set for this host', 'NLC_NO_POLICY')
      }
      const budget = policy.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS
      const requested = optionalNumber(params, 'timeoutMs', 'a positive number of milliseconds', (n) => n > 0)
      const timeoutMs = requested === undefined ? undefined : Math.min(requested, budget)
      const cwd = params.cwd ?? policy.cwdRoot
      if (typeof cwd !== 'string') throw coded(`cwd must be a string: a directory inside the sandbox root (got ${shown(cwd)})`)
      const options = { cwd, timeoutMs }
      if (ctx) options.sessionId = ctx.sessionId
      for (const key of ['stdin', 'terminal']) {
        const v = params[key]
        if (v !== undefined && v !== null && typeof v !== 'boolean') throw new Error(`${key} must be true or false (got ${shown(v)})`)
      }
      if (params.stdin === true) options.stdin = 'pipe'
      if (params.terminal === true) options.terminal = true
      if (params.limits !== undefined && params.limits !== null) options.limits = params.limits
      const handle = await api.startBackgroundCommand(host, params.argv, options)
      return { ...handle, ...counters(ctx) }
    },
  )

  const statusShape = '{ taskId: string, waitMs?: number, waitFor?: string }'
  const command_status = tool(
    'command_status',
    'The live status of a background command: state (running, exited, killed, timeout, output-limit), exit code, byte counts and a short tail. ' +
      'With waitMs it waits up to that long for the command to settle first; with waitFor as well, it returns as soon as that text appears in either stream ' +
      '(waitMatched, and waitLine: the line holding it) — e.g. waitFor "listening on" for a server. Once settled, stdout/stderr are banked refs holding the complete output. ' +
      'running/finished count your session\'s commands (finished = settled and not looked at yet). ' +
      'waitingForInput: true (with a hint) means it is blocked on a prompt, reading its input: answer it with command_input.',
    {
      type: 'object',
      properties: {
        taskId: taskIdSchema,
        waitMs: { type: 'number', minimum: 0, description: 'Wait at most this long for the command to settle (or for waitFor to appear).' },
        waitFor: {
          type: 'string',
          description: 'Text (a plain substring of one line) to wait for in stdout or stderr, up to waitMs; the result adds waitMatched and waitLine.',
        },
      },
      required: ['taskId'],
      additionalProperties: false,
    },
    statusShape,
    async (params, ctx) => {
      // null is "not given": a plain status, never an unbounded wait
      const waitMs = optionalNumber(params, 'waitMs', 'a number of milliseconds ≥ 0 to wait at most', (n) => n >= 0)
      const waitFor = params.waitFor
      if (waitFor !== undefined && waitFor !== null) {
        if (typeof waitFor !== 'string') throw coded(`waitFor must be a string: the text to wait for (got ${shown(waitFor)})`)
        const r = await api.awaitBackgroundCommandOutput(host, params.taskId, { pattern: waitFor, timeoutMs: waitMs ?? 0 })
        const out = withInputHint({ ...r.status, ...counters(ctx), waitMatched: r.matched })
        if (r.matched) out.waitLine = r.line
        return out
      }
      const status =
        waitMs === undefined
          ? api.getBackgroundCommandStatus(host, params.taskId)
          : await api.awaitBackgroundCommand(host, params.taskId, { timeoutMs: waitMs })
      return withInputHint({ ...status, ...counters(ctx) })
    },
  )

  const outputShape =
    '{ taskId: string, stream?: "stdout" | "stderr", offset?: number, limit?: number, tail?: number, grep?: string } | { artifactId: string, offset?: number, limit?: number, tail?: number, grep?: string }'
  const command_output = tool(
    'command_output',
    'Read one page of a command\'s complete output, while it runs or after, by taskId (and stream), or of a banked artifact by the artifactId a readBackHint names: ' +
      'offset and limit count characters (limit defaults to 50000, at most 200000); hasMore says whether to read on from offset + limit. ' +
      'Give taskId or artifactId, exactly one of them; stream goes with taskId only. ' +
      'tail reads the last characters instead (e.g. tail 5000 for the last screen). ' +
      'grep returns the lines holding that text instead of a page: { matches: [{ line, offset, text }], hasMore, scannedTo } (search again from offset: scannedTo for more).',
    {
      type: 'object',
      properties: {
        taskId: taskIdSchema,
        artifactId: { type: 'string', description: 'An artifactId from a stdout/stderr ref or a git result (instead of taskId and stream).' },
        stream: { type: 'string', enum: ['stdout', 'stderr'], description: 'Which stream of taskId (default stdout).' },
        offset: { type: 'integer', minimum: 0, description: 'First character (default 0).' },
        limit: { type: 'integer', minimum: 1, maximum: 200000, description: 'Characters to read (default 50000).' },
        tail: { type: 'integer', minimum: 0, maximum: 200000, description: 'Read the last this many characters instead of from offset.' },
        grep: { type: 'string', description: 'Return the lines holding this text (from offset, at most 100), not a page.' },
      },
      // "taskId or artifactId" is checked when it runs (below): a rule across
      // properties at the top of a tool schema is refused by the Anthropic API
      // and by OpenAI's strict mode (SPEC §3).
      required: [],
      additionalProperties: false,
    },
    outputShape,
    async (params) => {
      const given = (k) => params[k] !== undefined && params[k] !== null
      let taskId = params.taskId
      let stream = params.stream ?? 'stdout'
      // As the schema says: integers, offset ≥ 0, limit 1..200000 (the host
      // API is more forgiving: it counts a negative offset as 0 and clamps limit).
      const offset = optionalNumber(params, 'offset', 'a character offset (an integer ≥ 0)', (n) => Number.isInteger(n) && n >= 0)
      const limit = optionalNumber(
        params,
        'limit',
        'a number of characters (an integer from 1 to 200000)',
        (n) => Number.isInteger(n) && n >= 1 && n <= 200000,
      )
      if (given('artifactId')) {
        if (given('taskId')) throw coded('give taskId or artifactId, not both')
        if (given('stream')) throw coded('stream goes with taskId; an artifactId names one stream already')
        if (typeof params.artifactId !== 'string') throw coded(`artifactId must be a string (got ${shown(params.artifactId)})`)
        if (!given('tail') && !given('grep')) return api.retrieveArtifactOf(host, params.artifactId, { offset, limit })
        // tail and grep read the artifact's own log: this host's artifact
        // only (the read refuses any other), then its command and stream.
        await api.retrieveArtifactOf(host, params.artifactId, { offset: 0, limit: 1 })
        const m = /^nlc-(.+)-(stdout|stderr)$/.exec(params.artifactId)
        if (!m) throw coded(`artifact "${params.artifactId}" is not a command's output: page it with offset and limit`, 'NLC_UNKNOWN_ARTIFACT')
        taskId = m[1]
        stream = m[2]
      } else if (!given('taskId')) {
        throw coded('taskId or artifactId is required')
      }
      if (given('grep')) {
        if (typeof params.grep !== 'string') throw coded(`grep must be a string: the text to look for (got ${shown(params.grep)})`)
        return api.searchBackgroundCommandOutput(host, taskId, { pattern: params.grep, stream, from: offset })
      }
      const tail = optionalNumber(params, 'tail', 'a number of characters from the end (an integer from 0 to 200000)', (n) => Number.isInteger(n) && n >= 0 && n <= 200000)
      const page = { stream, offset, limit }
      if (tail !== undefined) {
        delete page.offset
        page.tail = tail
        if (offset !== undefined) page.offset = offset
      }
      return api.readBackgroundCommandOutput(host, taskId, page)
    },
  )

  const killShape = '{ taskId: string }'
  const command_kill = tool(
    'command_kill',
    'Stop a background command and its whole process group (SIGTERM, then SIGKILL after the grace period). Everything it printed stays banked and readable.',
    {
      type: 'object',
      properties: { taskId: taskIdSchema },
      required: ['taskId'],
      additionalProperties: false,
    },
    killShape,
    async (params, ctx) => {
      const status = await api.killBackgroundCommand(host, params.taskId)
      return { ...status, ...counters(ctx) }
    },
  )

  return { run_command_bg, command_status, command_output, command_kill }
}

const GIT_TOOLS = {
  git_log: {
    shape: '{ ref?: string, path?: string, maxCount?: number (1..500), since?: string, format?: "oneline" | "full" | "stat" | "name-only" }',
    description:
      'The commit log (read-only): newest first, at most maxCount commits (default 20), optionally from a ref, limited to a path or to commits since a date. format: oneline (default), full, stat or name-only.',
    properties: {
      ref: { type: 'string', description: 'A revision: branch, tag, commit, HEAD~2 … (never a flag).' },
      path: { type: 'string', description: 'Only commits touching this path (inside the repository).' },
      maxCount: { type: 'number', description: 'How many commits (default 20); floored and clamped to 1..500.' },
      since: { type: 'string', description: 'Only commits after this date, e.g. "2 weeks ago" or "2024-01-31".' },
      format: { type: 'string', enum: ['oneline', 'full', 'stat', 'name-only'] },
    },
    required: [],
  },
  git_show: {
    shape: '{ ref: string, path?: string, nameOnly?: boolean }',
    description: 'One commit (read-only): its message and diff, or only the names of the files it changed; optionally limited to a path.',
    properties: {
      ref: { type: 'string', description: 'The revision to show.' },
      path: { type: 'string', description: 'Only this path.' },
      nameOnly: { type: 'boolean', description: 'List changed file names instead of the diff.' },
    },
    required: ['ref'],
  },
  git_diff: {
    shape: '{ base?: string, head?: string, path?: string, nameOnly?: boolean, stat?: boolean, unified?: number (0..50) }',
    description:
      'A diff (read-only): the working tree against the index with no revisions, against base with one, or base..head with both (head needs a base). nameOnly or stat summarise it; unified sets the context lines.',
    properties: {
      base: { type: 'string', description: 'The revision to compare from.' },
      head: { type: 'string', description: 'The revision to compare to (needs base).' },
      path: { type: 'string', description: 'Only this path.' },
      nameOnly: { type: 'boolean' },
      stat: { type: 'boolean' },
      unified: { type: 'number', description: 'Context lines; floored and clamped to 0..50.' },
    },
    required: [],
  },
  git_blame: {
    shape: '{ path: string, ref?: string, lineStart?: number, lineEnd?: number }',
    description:
      'Who last changed each line of a file (read-only), optionally at a revision and for a line range (a lone lineStart spans 100 lines; a lone lineEnd covers the 100 lines up to it).',
    properties: {
      path: { type: 'string', description: 'The file, inside the repository.' },
      ref: { type: 'string', description: 'The revision to blame at.' },
      lineStart: { type: 'number', description: 'First line (floored; at least 1).' },
      lineEnd: { type: 'number', description: 'Last line (floored; at least 1; not before lineStart).' },
    },
    required: ['path'],
  },
  git_merge_base: {
    shape: '{ base: string, head: string }',
    description: 'The best common ancestor of two revisions (read-only).',
    properties: {
      base: { type: 'string', description: 'One revision.' },
      head: { type: 'string', description: 'The other revision.' },
    },
    required: ['base', 'head'],
  },
  git_ls_files: {
    shape: '{ path?: string }',
    description: 'The files git tracks (read-only), optionally under a path.',
    properties: { path: { type: 'string', description: 'Only files under this path.' } },
    required: [],
  },
}

/** What a git tool param must be, from its schema, for refusals. */
function expected(schema) {
  if (schema.enum) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`
  if (schema.type === 'boolean') return 'true or false'
  if (schema.type === 'number') return 'a number'
  if (schema.type === 'integer') {
    return schema.maximum === undefined
      ? `an integer ≥ ${schema.minimum}`
      : `an integer from ${schema.minimum} to ${schema.maximum}`
  }
  return 'a string'
}

function describeParam(v) {
  if (typeof v === 'number') return String(v)
  if (typeof v === 'bigint') return 'a bigint'
  if (typeof v === 'symbol') return 'a symbol'
  if (typeof v === 'function') return 'a function'
  try {
    return Array.isArray(v) ? 'an array' : 'an object'
  } catch {
    return 'an object' // a revoked Proxy
  }
}

/**
 * The params a git tool knows, each read once, as JSON values (unknown keys
 * were refused before). A value JSON cannot hold — an
 * object or array (all git params are scalars; a cycle or deep nesting
 * included), a function, a symbol, a bigint, NaN or ±Infinity — is refused
 * here, naming the param and what it must be.
 */
function jsonParams(name, properties, params) {
  const out = {}
  for (const [key, schema] of Object.entries(properties)) {
    const v = params[key]
    if (v === undefined || v === null) continue
    const ok = typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))
    if (!ok) throw coded(`${name}: ${key} must be ${expected(schema)}, not ${describeParam(v)}`)
    out[key] = v
  }
  return out
}

/**
 * The git tools bound to `host`; `gitToolArgs(name, params)` builds a tool's
 * args (the engine's validators), `sessionOf` as for the command tools.
 */
function createGitTools(host, api, gitToolArgs, sessionOf) {
  const tools = {}
  for (const [name, spec] of Object.entries(GIT_TOOLS)) {
    tools[name] = toolObject(
      name,
      `${spec.description} Values only, never flags: a ref or path starting with "-" is refused, and paths must stay inside the repository. ` +
        'git runs with a fixed read-only hardening prefix (no pager, colour, hooks, external diff or filter programs) that commandLine leaves out. ' +
        'The preview is the start of the output; output is the banked ref with all of it (its readBackHint says how to page it).',
      { type: 'object', properties: spec.properties, required: spec.required, additionalProperties: false },
      spec.shape,
      bound(sessionOf, async (params, ctx) => {
        const args = gitToolArgs(name, jsonParams(name, spec.properties, params))
        // The model sees the command as a person would write it (commandLine).
        // The exact argv with the hardening prefix stays readable by host code
        // as a non-enumerable `command`, so JSON.stringify — what a host sends
        // the model — leaves its ~40 entries out.
        const { command, ...result } = await api.runGitCommand(host, args, ctx?.sessionId)
        Object.defineProperty(result, 'command', { value: command, enumerable: false, writable: true, configurable: true })
        return result
      }),
    )
  }
  return tools
}

/** Whether a tool result is an in-band refusal (`{ isError: true, error, code }`). Never throws. */
function isToolRefusal(r) {
  try {
    return isObject(r) && r.isError === true && typeof r.error === 'string' && typeof r.code === 'string'
  } catch {
    return false
  }
}

module.exports = { createBackgroundCommandTools, createGitTools, isToolRefusal, toolObject, bound, taskIdSchema, shown, withInputHint }
