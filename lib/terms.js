'use strict'
// A refusal in the tool's own terms (SPEC §3). The engine phrases every
// refusal for the host developer who called the API: it names host
// functions (startBackgroundCommand, setBackgroundCommandPolicy …) and
// option paths (options.cwd, page.tail). A model has neither: it has tools
// and their parameters. This is the one place a tool refusal is rephrased,
// by its NLC_* code, so the host API's Errors keep their wording and each
// tool result speaks the model's; __test__/tool-terms.test.ts drives every
// kind through the tools, so an engine message that changes its wording
// fails there instead of leaking a host function name to a model.

/** Host-configuration refusals the model cannot fix: what it is told instead. */
const FIXED = {
  NLC_NO_POLICY: 'No background command policy is set for this host, so no command can run: the host application has not enabled run_command_bg yet. No parameter changes that; tell the user.',
  NLC_GIT_NOT_CONFIGURED: 'The git tools are not set up for this host: the host application has not given them a repository yet. No parameter changes that; tell the user.',
}

/**
 * `[code or undefined for any, what the engine says, what the tool says]`,
 * applied in order; each replaces every occurrence.
 */
const REPHRASED = [
  ['NLC_UNKNOWN_TASK', 'use the taskId returned by startBackgroundCommand.', 'use the taskId that run_command_bg returned.'],
  [
    'NLC_UNKNOWN_ARTIFACT',
    "use the artifactId from a settled command's status.stdout or status.stderr",
    "use the artifactId of a stdout or stderr ref in a settled command's command_status result, or of a git tool's output ref",
  ],
  ['NLC_NOT_ALLOWED', 'argv[0] must equal one of allowedExecutables exactly', 'argv[0] must equal one of the executables this host allows, spelled exactly'],
  ['NLC_NOT_ALLOWED', 'The policy allows no executable at all; add it to allowedExecutables.', 'This host allows no executable at all, so no command can run; tell the user.'],
  ['NLC_OUTSIDE_ROOT', 'pass a directory inside cwdRoot', 'pass a cwd inside the sandbox root, or leave cwd out to run in the root itself'],
  ['NLC_OUTSIDE_ROOT', "set the policy's cwdRoot to a directory that exists", "the host's sandbox root is missing; tell the user"],
  ['NLC_OUTSIDE_ROOT', "set the policy's cwdRoot to a directory", "the host's sandbox root is not a directory; tell the user"],
  ['NLC_OUTSIDE_ROOT', 'cwdRoot "', 'The sandbox root "'],
  ['NLC_OUTSIDE_ROOT', "or call configureGitTools (NeuroLink: registerGitTools) again with the path of the repository's working tree", 'or tell the user that the git tools point at no repository'],
  [
    'NLC_CONFINEMENT_UNAVAILABLE',
    'To run commands unconfined explicitly, set confine: false in the policy and leave options.confine out',
    "Confinement is the host's setting, which no parameter changes; tell the user",
  ],
  ['NLC_LOG_DIR', 'Point TMPDIR at a writable directory with free space, or use confine.tmp: "shared".', "The host's temp directory is full or not writable; tell the user."],
  ['NLC_INVALID_ARGUMENT', 'start it with stdin: "pipe" (or terminal: true) to write to it', 'start it with run_command_bg stdin: true (or terminal: true) to write to it with command_input'],
  ['NLC_NOT_RUNNING', 'start it again to send it', 'start it again with run_command_bg to send it'],
  ['NLC_LOGS_REMOVED', ', configureLogs maxAgeMs)', ", the host's setting)"],
  ['NLC_LOGS_REMOVED', ', pruneBackgroundCommandLogs olderThanMs)', ', by the host)'],
  ['NLC_LOGS_REMOVED', '(configureLogs maxTotalBytes)', "(the host's setting)"],
  ['NLC_LOGS_REMOVED', '(pruneBackgroundCommandLogs keepBytes)', '(set by the host)'],
]

/**
 * The names the engine gives a tool's parameters (the host API's option
 * paths) → the parameter the model sent, per tool.
 */
const PARAMS = {
  run_command_bg: { 'options.cwd': 'cwd', 'options.timeoutMs': 'timeoutMs' },
  command_status: { pattern: 'waitFor', 'options.pattern': 'waitFor', 'options.timeoutMs': 'waitMs', 'opts.timeoutMs': 'waitMs' },
  command_output: {
    pattern: 'grep',
    'options.pattern': 'grep',
    'options.from': 'offset',
    'page.tail': 'tail',
    'page.offset': 'offset',
    'page.limit': 'limit',
    'page.stream': 'stream',
    'options.offset': 'offset',
    'options.limit': 'limit',
  },
  command_input: { 'options.end': 'end' },
  // the MCP server's own tool (mcp/lib/server.js)
  artifact_read: { 'options.offset': 'offset', 'options.limit': 'limit' },
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Per tool: one regex for its engine names, as whole words. */
const PARAM_PATTERNS = Object.fromEntries(
  Object.entries(PARAMS).map(([tool, names]) => [
    tool,
    new RegExp(
      `(?<![\\w.])(${Object.keys(names)
        .sort((a, b) => b.length - a.length)
        .map(escape)
        .join('|')})(?![\\w])`,
      'g',
    ),
  ]),
)

/** `message` (the engine's, for host code) as tool `name`'s refusal says it. Never throws. */
function inToolTerms(name, code, message) {
  if (Object.hasOwn(FIXED, code)) return FIXED[code]
  let out = message
  for (const [c, host, tool] of REPHRASED) {
    if (c === undefined || c === code) out = out.split(host).join(tool)
  }
  const names = PARAMS[name]
  if (names) out = out.replace(PARAM_PATTERNS[name], (m) => names[m])
  return out
}

/**
 * A settled status's `error` names who stopped the command; a tool result
 * says it in the model's terms. (Data, not a refusal: only these two name a
 * host function.)
 */
const STATUS_REPHRASED = [
  ['by the caller (killBackgroundCommand)', 'by command_kill (or by the host)'],
  ['because the host was disposed (killAllBackgroundCommands)', 'because the host stopped all its commands'],
]

/**
 * A tool's result with its status `error` in the model's terms. Only the
 * result's own `error` is rewritten: the tools build their results afresh
 * (a spread of the status), so no status another caller holds changes.
 */
function resultInToolTerms(result) {
  try {
    if (result !== null && typeof result === 'object' && result.isError !== true && typeof result.error === 'string') {
      let e = result.error
      for (const [host, tool] of STATUS_REPHRASED) e = e.split(host).join(tool)
      result.error = e
    }
  } catch {
    // a result that cannot be rewritten is returned as it is
  }
  return result
}

/** The host function names no tool result may carry (what the tests look for). */
const HOST_FUNCTIONS = [
  'setBackgroundCommandPolicy',
  'getBackgroundCommandPolicy',
  'startBackgroundCommand',
  'startCommandWithPolicy',
  'getBackgroundCommandStatus',
  'awaitBackgroundCommand',
  'killBackgroundCommand',
  'killAllBackgroundCommands',
  'readBackgroundCommandOutput',
  'writeBackgroundCommandInput',
  'resizeBackgroundCommandTerminal',
  'searchBackgroundCommandOutput',
  'configureGitTools',
  'configureLogs',
  'pruneBackgroundCommandLogs',
  'recoverBackgroundCommands',
  'retrieveArtifact',
  'readArtifact',
]

module.exports = { inToolTerms, resultInToolTerms, HOST_FUNCTIONS }
