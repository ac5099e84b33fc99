'use strict'
// The model-facing tool objects: { name, description, inputSchema, execute }.
// Every tool is a spec from the engine (lib/contract.js): its schema, its
// refusal shape, and the check that turns the model's params into a
// request (unknown keys, types, bounds, timeout clamping, artifact ids).
// This file only reads the params once, hands them over, and calls the host
// functions the request names. execute never rejects: every refusal comes
// back as { isError: true, error, code } with the engine's message, which
// names the recovery step, put in the tool's own terms (lib/terms.js), and
// the same NLC_* code the host API's Error carries for that kind of refusal.

const { inToolTerms, resultInToolTerms } = require('./terms.js')
const { limits, specs, inputSchemaOf, toolRequest } = require('./contract.js')

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

/** A value as a refusal shows it; never throws (cycles, bigints, symbols, revoked Proxies). */
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

/** A value's kind as a git tool's refusal names it (what only JS can tell). */
function kindOf(v) {
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
 * One param value as the engine takes it: a JSON scalar as it is; anything
 * else as a marker holding how JS shows it and its kind (an array's items
 * too, one level down).
 */
function projected(v, top = true) {
  if (v === undefined) return { $js: 'undefined' }
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v
  const marker = { $js: kindOf(v), shown: shown(v) }
  if (top && marker.$js === 'an array') {
    try {
      marker.items = Array.from(v, (x) => projected(x, false))
    } catch {
      // an array that cannot be read is shown, not walked
    }
  } else if (top && marker.$js === 'an object' && typeof v === 'object') {
    try {
      // an object param (run_command_bg's limits): its own keys, one level down
      marker.props = Object.keys(v).map((k) => [k, projected(v[k], false)])
    } catch {
      // an object that cannot be read is shown, not walked
    }
  }
  return marker
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
 * One refusal style for every tool family: `<tool> <params shape>: <message>`
 * (a message that already names the tool, as the git validators' do, loses
 * that `<tool>: ` lead so the tool is named once).
 */
function refusalMessage(name, shape, msg) {
  const lead = `${name}: `
  const rest = msg.startsWith(lead) ? msg.slice(lead.length) : msg
  return `${name} ${shape}: ${rest}`
}

/**
 * The tool object of spec `name`. `run(request, raw, executionContext)`
 * makes the host calls; `policyOf()` is the host's policy view when the
 * check needs it (run_command_bg). The params are read once, here: each
 * key the schema names once (an unknown key's value is never read), and
 * what was read is what the engine checks and `raw` holds.
 */
function toolObject(name, run, policyOf) {
  const spec = specs[name]
  const known = new Set(Object.keys(spec.inputSchema.properties))
  return {
    name,
    description: spec.description,
    inputSchema: inputSchemaOf(name),
    async execute(params, executionContext) {
      try {
        const raw = Object.create(null)
        let pairs = null
        if (isObject(params)) {
          pairs = []
          for (const key of Object.keys(params)) {
            if (!known.has(key)) {
              pairs.push([key, null])
              continue
            }
            const v = params[key]
            raw[key] = v
            pairs.push([key, projected(v)])
          }
        }
        const policy = policyOf ? policyOf() : undefined
        const request = toolRequest(name, pairs, pairs === null ? shown(params) : undefined, policy)
        return resultInToolTerms(await run(request, raw, executionContext))
      } catch (e) {
        const code = codeOf(e)
        return { isError: true, error: refusalMessage(name, spec.shape, inToolTerms(name, code, messageOf(e))), code }
      }
    },
  }
}

/**
 * Each tool's `run(request, raw, session)`: the session id the call files
 * under, as `sessionOf(executionContext)` gives it (the host's resolver's
 * answer, else the context's id; undefined: the host's session). The engine
 * applies the session rule to it, so a start and its counters always agree.
 */
function bound(sessionOf, run) {
  return (request, raw, executionContext) => {
    const id = sessionOf(executionContext)
    return run(request, raw, id === undefined ? undefined : { sessionId: id })
  }
}

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

/** `options.extra` checked: the extra tool names, each known. */
function extraNames(options) {
  if (options === undefined || options === null) return []
  const EXTRA = limits.extraTools
  if (typeof options !== 'object') {
    throw new TypeError(`options must be an object like { extra: ${JSON.stringify(EXTRA).replace(/,/g, ', ')} } (got ${shown(options)})`)
  }
  const extra = options.extra
  if (extra === undefined || extra === null) return []
  if (!Array.isArray(extra)) {
    throw new TypeError(`options.extra must be an array of tool names from ${EXTRA.map((n) => JSON.stringify(n)).join(', ')} (got ${shown(extra)})`)
  }
  const names = []
  for (let i = 0; i < extra.length; i++) {
    const name = extra[i]
    if (!EXTRA.includes(name)) {
      throw new TypeError(`options.extra[${i}] is ${shown(name)}, not a tool this package adds: use ${EXTRA.map((n) => JSON.stringify(n)).join(' or ')}`)
    }
    names.push(name)
  }
  return names
}

/**
 * The command tools bound to `host`: the default four, plus the extra ones
 * `options.extra` names. `sessionOf(executionContext)` is the call's session
 * candidate (see `bound`).
 */
function createBackgroundCommandTools(host, api, sessionOf, options) {
  const extra = extraNames(options)
  const counters = (ctx) => api.backgroundCommandCounts(host, ctx?.sessionId)
  const withCounters = (status, ctx) => ({ ...status, ...counters(ctx) })
  const policyView = () => {
    const policy = api.getBackgroundCommandPolicy(host)
    return policy ? { cwdRoot: policy.cwdRoot, defaultTimeoutMs: policy.defaultTimeoutMs ?? undefined } : undefined
  }

  /** What each tool's request makes the host do. */
  const runs = {
    async run_command_bg(req, raw, ctx) {
      const options = { ...req.options }
      if (ctx) options.sessionId = ctx.sessionId
      return withCounters(await api.startBackgroundCommand(host, raw.argv, options), ctx)
    },
    async command_status(req, raw, ctx) {
      if (req.op === 'awaitOutput') {
        const r = await api.awaitBackgroundCommandOutput(host, raw.taskId, { pattern: req.pattern, timeoutMs: req.timeoutMs })
        const out = withInputHint({ ...withCounters(r.status, ctx), waitMatched: r.matched })
        if (r.matched) out.waitLine = r.line
        return out
      }
      const status = req.op === 'status' ? api.getBackgroundCommandStatus(host, raw.taskId) : await api.awaitBackgroundCommand(host, raw.taskId, { timeoutMs: req.timeoutMs })
      return withInputHint(withCounters(status, ctx))
    },
    async command_output(req, raw) {
      if (req.op === 'artifact') return api.retrieveArtifactOf(host, req.artifactId, req.window)
      if (req.op === 'artifactLog') {
        // tail and grep read the artifact's own log: this host's artifact
        // only (the read refuses any other), then its command and stream.
        await api.retrieveArtifactOf(host, req.artifactId, { offset: 0, limit: 1 })
        if (req.then.refusal) throw coded(req.then.refusal.message, req.then.refusal.code)
        req = req.then
      }
      const taskId = req.taskId ?? raw.taskId
      const stream = req.stream ?? raw.stream
      if (req.op === 'search') return api.searchBackgroundCommandOutput(host, taskId, { pattern: req.pattern, stream, from: req.from })
      return api.readBackgroundCommandOutput(host, taskId, { stream, ...req.page })
    },
    async command_kill(_req, raw, ctx) {
      return withCounters(await api.killBackgroundCommand(host, raw.taskId), ctx)
    },
    async command_input(req, raw, ctx) {
      // Nothing to write (no text, no keys, no end) is a write of 0 bytes:
      // it still checks that the command takes input, and returns its status.
      const { bytesWritten } = await api.writeBackgroundCommandInput(host, raw.taskId, req.data, { end: req.end })
      const status = api.getBackgroundCommandStatus(host, raw.taskId)
      return withInputHint({ bytesWritten, ...withCounters(status, ctx) })
    },
    async command_list(req, _raw, ctx) {
      // '' is "this call's session" under the session rule (the host's context, else its default).
      const filter = { sessionId: ctx?.sessionId ?? '' }
      if (req.running !== undefined) filter.running = req.running
      return { commands: api.listBackgroundCommands(host, filter), ...counters(ctx) }
    },
  }

  // NeuroLink's four first, then the extra ones in the order asked for.
  const names = [
    ...Object.values(specs)
      .filter((s) => s.family === 'command')
      .map((s) => s.name),
    ...extra,
  ]
  const tools = {}
  for (const name of names) {
    tools[name] = toolObject(name, bound(sessionOf, runs[name]), name === 'run_command_bg' ? policyView : undefined)
  }
  return tools
}

/**
 * The git tools bound to `host`; `gitToolArgs(name, params)` builds a tool's
 * args (the engine's validators), `sessionOf` as for the command tools.
 */
function createGitTools(host, api, gitToolArgs, sessionOf) {
  const tools = {}
  for (const spec of Object.values(specs)) {
    if (spec.family !== 'git') continue
    const name = spec.name
    tools[name] = toolObject(
      name,
      bound(sessionOf, async (req, _raw, ctx) => {
        const args = gitToolArgs(name, req.params)
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

/**
 * The MCP server's artifact_read: one page of a banked output through
 * `retrieveArtifact(artifactId, window)`, with the window as the model gave it.
 */
function createArtifactTool(retrieveArtifact) {
  return toolObject('artifact_read', (req, raw) => {
    const window = {}
    for (const key of req.window) window[key] = raw[key]
    return retrieveArtifact(raw.artifactId, window)
  })
}

/** Whether a tool result is an in-band refusal (`{ isError: true, error, code }`). Never throws. */
function isToolRefusal(r) {
  try {
    return isObject(r) && r.isError === true && typeof r.error === 'string' && typeof r.code === 'string'
  } catch {
    return false
  }
}

module.exports = { createBackgroundCommandTools, createGitTools, createArtifactTool, isToolRefusal }
