'use strict'
// The tools beyond NeuroLink's four, added with
// createBackgroundCommandTools(host, { extra: [...] }): command_input (write
// to a running command, named keys included) and command_list.

const { toolObject, bound, taskIdSchema, shown, withInputHint } = require('./tools.js')

/** What each key name sends, as a terminal sends it. */
const KEYS = {
  enter: '\r',
  tab: '\t',
  escape: '\x1b',
  backspace: '\x7f',
  up: '\x1b[A',
  down: '\x1b[B',
  right: '\x1b[C',
  left: '\x1b[D',
  'ctrl-c': '\x03',
  'ctrl-d': '\x04',
  'ctrl-z': '\x1a',
}
const KEY_NAMES = Object.keys(KEYS)

const EXTRA_TOOLS = ['command_input', 'command_list']

/** `options.extra` checked: the extra tool names, each known. */
function extraNames(options) {
  if (options === undefined || options === null) return []
  if (typeof options !== 'object') {
    throw new TypeError(`options must be an object like { extra: ["command_input", "command_list"] } (got ${shown(options)})`)
  }
  const extra = options.extra
  if (extra === undefined || extra === null) return []
  if (!Array.isArray(extra)) {
    throw new TypeError(`options.extra must be an array of tool names from ${EXTRA_TOOLS.map((n) => JSON.stringify(n)).join(', ')} (got ${shown(extra)})`)
  }
  const names = []
  for (let i = 0; i < extra.length; i++) {
    const name = extra[i]
    if (!EXTRA_TOOLS.includes(name)) {
      throw new TypeError(`options.extra[${i}] is ${shown(name)}, not a tool this package adds: use ${EXTRA_TOOLS.map((n) => JSON.stringify(n)).join(' or ')}`)
    }
    names.push(name)
  }
  return names
}

/** The text and keys of a command_input call as one string. */
function inputText(params) {
  const { text, keys } = params
  if (text !== undefined && text !== null && typeof text !== 'string') {
    throw new Error(`text must be a string (got ${shown(text)})`)
  }
  let out = typeof text === 'string' ? text : ''
  if (keys !== undefined && keys !== null) {
    if (!Array.isArray(keys)) throw new Error(`keys must be an array of key names (got ${shown(keys)})`)
    keys.forEach((k, i) => {
      if (typeof k !== 'string' || !Object.hasOwn(KEYS, k)) {
        throw new Error(`keys[${i}] ${shown(k)} is not a key name: use ${KEY_NAMES.join(', ')}`)
      }
      out += KEYS[k]
    })
  }
  return out
}

/**
 * The extra tools `options.extra` names, bound to `host`. `counters(ctx)` and
 * `sessionOf(executionContext)` are the command tools' own session rules.
 */
function createExtraTools(host, api, counters, sessionOf, options) {
  const tool = (name, description, inputSchema, shape, run) =>
    toolObject(name, description, inputSchema, shape, bound(sessionOf, run))
  const tools = {}
  for (const name of extraNames(options)) {
    if (name === 'command_input') {
      const shape = '{ taskId: string, text?: string, keys?: string[], end?: boolean }'
      tools.command_input = tool(
        'command_input',
        'Write to a running command started with stdin: true or terminal: true: text is sent as is, then each of keys in order, as a terminal sends them ' +
          `(${KEY_NAMES.join(', ')}). In a terminal a line is submitted with the enter key. end: true closes the input after (in a terminal: sends ctrl-d). ` +
          'Returns bytesWritten and the status (with nothing to write: 0 and the status); read what it printed with command_output.',
        {
          type: 'object',
          properties: {
            taskId: taskIdSchema,
            text: { type: 'string', description: 'Text to write as is.' },
            keys: { type: 'array', items: { type: 'string', enum: KEY_NAMES }, description: 'Named keys to send after the text, in order.' },
            end: { type: 'boolean', description: 'Close the input afterwards (in a terminal: send ctrl-d).' },
          },
          required: ['taskId'],
          additionalProperties: false,
        },
        shape,
        async (params, ctx) => {
          const data = inputText(params)
          const end = params.end
          if (end !== undefined && end !== null && typeof end !== 'boolean') throw new Error(`end must be true or false (got ${shown(end)})`)
          // Nothing to write (no text, no keys, no end) is a write of 0 bytes:
          // it still checks that the command takes input, and returns its status.
          const { bytesWritten } = await api.writeBackgroundCommandInput(host, params.taskId, data, { end: end === true })
          const status = api.getBackgroundCommandStatus(host, params.taskId)
          return withInputHint({ bytesWritten, ...status, ...counters(ctx) })
        },
      )
    } else if (name === 'command_list') {
      tools.command_list = tool(
        'command_list',
        "Your session's background commands, oldest first: taskId, label, argv, state, exit code, and waitingForInput (true: it is blocked on a prompt; answer with command_input). running: true lists only those still running, false only settled ones.",
        {
          type: 'object',
          properties: { running: { type: 'boolean', description: 'Only running (true) or only settled (false) commands.' } },
          required: [],
          additionalProperties: false,
        },
        '{ running?: boolean }',
        async (params, ctx) => {
          const running = params.running
          if (running !== undefined && running !== null && typeof running !== 'boolean') {
            throw new Error(`running must be true or false (got ${shown(running)})`)
          }
          // '' is "this call's session" under the session rule (the host's context, else its default).
          const filter = { sessionId: ctx?.sessionId ?? '' }
          if (typeof running === 'boolean') filter.running = running
          return { commands: api.listBackgroundCommands(host, filter), ...counters(ctx) }
        },
      )
    }
  }
  return tools
}

module.exports = { createExtraTools, KEYS, EXTRA_TOOLS }
