// Declarations of the public API of neurolink-commands (index.js, a thin
// adapter over the generated binding.js / binding.d.ts).
/// <reference types="node" />

/**
 * What a host may execute. There is no default: until one is set, every start is refused.
 * `setBackgroundCommandPolicy` checks the types and values of every field at once, and
 * resolves a relative `cwdRoot` against the current directory at that moment; whether
 * `cwdRoot` exists (and is a directory) is checked at each start.
 */
export interface BackgroundCommandPolicy {
  /**
   * A list of names: argv[0] must equal one of these EXACTLY (no basename or PATH
   * matching between them). A bare name such as `"node"` is then found through the
   * PATH of the process; an absolute path runs that file. An empty list refuses everything.
   */
  allowedExecutables: string[]
  /** The sandbox: every cwd must resolve (symlinks followed) to this directory or below it. A relative root is resolved once, when the policy is set. */
  cwdRoot: string
  /** The final say after the allowlist and the sandbox: return `true` to allow, or a string that becomes the refusal. Called once per start with argv and the real cwd. */
  allowlist?: (argv: string[], cwd: string) => true | string
  /** Budget of a command that names none, in ms. @default 120000 */
  defaultTimeoutMs?: number
  /** Bytes kept per stream; reaching it stops the command with state `output-limit`. @default 10485760 */
  maxOutputBytes?: number
  /** Grace between SIGTERM and SIGKILL, in ms. @default 5000 */
  killGraceMs?: number
  /** Default idleTimeoutMs of the commands this policy starts (see {@link BackgroundCommandOptions.idleTimeoutMs}). @default none (no idle stop) */
  idleTimeoutMs?: number
  /** Default inputWaitMs of the commands this policy starts (see {@link BackgroundCommandOptions.inputWaitMs}). @default 2000 */
  inputWaitMs?: number
  /**
   * Resource limits of every command's whole process tree (SPEC §15); a start may only narrow them.
   * A limit that cannot be enforced for the whole tree here refuses the start (`NLC_LIMIT_UNAVAILABLE`).
   * See docs/guide/recovery-and-limits.md. @default no limits
   */
  limits?: BackgroundCommandLimits
  /**
   * Kernel confinement (Linux Landlock + seccomp) of every command this policy starts: what it, and
   * everything it starts, can write, read and reach. `false` (or absent) runs commands unconfined, as
   * NeuroLink does. When confinement is asked for and the kernel cannot enforce all of it, starts are
   * refused (`NLC_CONFINEMENT_UNAVAILABLE`). See docs/guide/confinement.md.
   * @default false
   */
  confine?: Confinement | false
}

/** What a confined command may touch (SPEC §8). Trees are existing directories, compared by real path. */
export interface Confinement {
  /** Trees the command may create and modify files in, recursively; given, the list replaces the default (list cwdRoot to keep it writable). @default [cwdRoot] */
  write?: string[]
  /**
   * What it may read (and run): `"system"` = /usr, /lib*, /bin, /sbin, /etc, /opt, /proc, /sys, the needed /dev nodes,
   * the git configuration files, cwdRoot, the write and exec trees and the executable's own directory (not $HOME);
   * `"all"` = every file the user can read (its connects to unix sockets are mediated: a daemon's socket outside the write
   * trees is refused with EACCES and counted in `status.confinementNotes`); a list = those trees plus /usr, /lib*, /bin,
   * /sbin, /proc and the /dev nodes.
   * @default "system"
   */
  read?: 'system' | 'all' | string[]
  /** Extra trees to read and execute, e.g. a toolchain under $HOME (~/.rustup, ~/.nvm). @default [] */
  exec?: string[]
  /**
   * Whether it may use the network. `false`: no TCP connect/bind, no UDP, no socket but AF_UNIX; each refused
   * socket fails at once (EACCES) and is counted in `status.confinementNotes`, and the command's environment gains
   * `npm_config_offline`/`pnpm_config_offline=true` and `npm_config_fetch_retries`/`pnpm_config_fetch_retries=0`
   * unless it names them. @default false
   */
  network?: boolean
  /** `"private"`: a fresh TMPDIR/TMP/TEMP per command, removed when it settles; `"shared"`: os.tmpdir() is writable instead. @default "private" */
  tmp?: 'private' | 'shared'
  /**
   * Paths relative to each write tree kept read-only for the command (besides every git repository's
   * `.git/hooks`, `.git/config` and `.git` itself, always protected at level `"full"`), e.g. `.npmrc`, `.vscode`.
   * Only paths that exist when the command starts are protected. Options add to the policy's. @default []
   */
  protect?: string[]
  /**
   * `"full"`: Landlock, seccomp and a namespace sandbox (user, mount, PID and, without network, network
   * namespaces: a read-only view of the system, no daemon sockets, protected git paths, the command as PID 1).
   * `"landlock"`: Landlock and seccomp only, for hosts that refuse user namespaces — weaker: see
   * docs/guide/confinement.md for its gaps. A start at `"full"` where namespaces are refused fails with
   * NLC_CONFINEMENT_UNAVAILABLE; nothing falls back silently. Options may not lower the policy's level.
   * @default "full"
   */
  level?: 'full' | 'landlock'
}

/** What kernel confinement this machine can enforce (`confinementSupport()`). */
export interface ConfinementSupport {
  /** The kernel's Landlock ABI version (0: no Landlock). Confinement needs 6. */
  landlockAbi: number
  /** Files can be confined (ABI ≥ 3). */
  filesystem: boolean
  /** TCP connect/bind can be refused (ABI ≥ 4). */
  network: boolean
  /** Signals and abstract unix sockets are scoped to the command's own processes (ABI ≥ 6). */
  signals: boolean
  /** seccomp filters are available (needed for `network: false`). */
  seccomp: boolean
  /** The engine can start commands in new user, mount and PID namespaces (needed for level `"full"`). */
  namespaces: boolean
  /** Why not, when `namespaces` is false. */
  namespacesWhyNot?: string
}

/** Options of one start. */
export interface BackgroundCommandOptions {
  /**
   * Working directory inside the policy's cwdRoot (relative paths resolve
   * against the real root). @default the policy's cwdRoot (as the tools' cwd)
   */
  cwd?: string
  /** Budget in ms. @default policy.defaultTimeoutMs */
  timeoutMs?: number
  /** Bytes kept per stream. @default policy.maxOutputBytes */
  maxOutputBytes?: number
  /** When given, REPLACES the parent environment entirely; when omitted the command inherits it. */
  env?: Record<string, string>
  /** A label for the command. @default the executable's base name and its arguments, e.g. `npm run lint` for `["/usr/bin/npm", "run", "lint"]` (cut to 60 characters plus "…") */
  label?: string
  /** The session the command counts in. @default the host's getToolContext().sessionId, else the host's default session */
  sessionId?: string
  /** Aborting it kills the command (state `killed`). */
  abortSignal?: AbortSignal
  /** Stop the command when neither stream produced a byte for this long, in ms: SIGTERM, then SIGKILL after the grace; state `timeout`, `error` contains `no output for <n>ms`. @default policy.idleTimeoutMs (none) */
  idleTimeoutMs?: number
  /**
   * A command with an input (`stdin: "pipe"` or `terminal`) that printed nothing for this long, in ms,
   * while one of its processes is blocked reading that input is reported as waiting for input:
   * `waitingForInput: true` in its status and list row, and {@link onBackgroundCommandWaitingForInput}.
   * @default policy.inputWaitMs (2000)
   */
  inputWaitMs?: number
  /** Kernel confinement of this command: only narrows the policy's (a wider tree, `read: "all"`, `network: true` or `tmp: "shared"` the policy does not have is refused with `NLC_INVALID_ARGUMENT`); under an unconfined policy any confinement is accepted. Absent fields inherit the policy's. */
  confine?: Confinement
  /**
   * What the command reads: `"ignore"` is /dev/null; `"pipe"` is a pipe the
   * host writes with {@link writeBackgroundCommandInput}. @default "ignore"
   */
  stdin?: 'ignore' | 'pipe'
  /**
   * Run the command in a new session whose controlling terminal is a
   * pseudo-terminal of this size (`true`: 80×24; on Windows a pseudo
   * console): stdin, stdout and stderr are the terminal; what it shows
   * (escape sequences included) is captured in stdout.log under the same
   * byte cap and stderr.log stays empty. Input goes through
   * {@link writeBackgroundCommandInput}; `TERM` is `xterm-256color` unless
   * `env` names one. @default false
   */
  terminal?: boolean | TerminalSize
  /**
   * Resource limits of this command's whole tree: only narrows the policy's
   * (a value above the policy's is refused with `NLC_INVALID_ARGUMENT`); a
   * limit that cannot be enforced here is refused with `NLC_LIMIT_UNAVAILABLE`.
   * See docs/guide/recovery-and-limits.md. @default policy.limits
   */
  limits?: BackgroundCommandLimits
}

/** A terminal's window size, in character cells. */
export interface TerminalSize {
  /** Columns, an integer from 1 to 65535. @default 80 */
  cols?: number
  /** Rows, an integer from 1 to 65535. @default 24 */
  rows?: number
}

/** Options of one write to a command's input. */
export interface BackgroundCommandInputOptions {
  /**
   * Close the input after the data (the command reads end of file). In a
   * terminal, write the end-of-file character (ctrl-d; on Windows ctrl-z
   * and enter) after the data instead; the input stays open. @default false
   */
  end?: boolean
}

/** What a write to a command's input resolves with. */
export interface BackgroundCommandInputResult {
  /** The bytes written: the UTF-8 bytes of a string, a terminal's end of file for `end` included. */
  bytesWritten: number
}

/** The name of a tool {@link createBackgroundCommandTools} adds on request. */
export type ExtraBackgroundCommandToolName = 'command_input' | 'command_list'

/** Options of {@link createBackgroundCommandTools}. `E` is the extra tools named. */
export interface BackgroundCommandToolsOptions<E extends ExtraBackgroundCommandToolName = ExtraBackgroundCommandToolName> {
  /** Tools to add to NeuroLink's four; the returned object has exactly these keys besides the four (typed from the names written). @default [] */
  extra?: readonly E[]
}

/** Returned at once by a start; the command keeps running. */
export interface BackgroundCommandHandle {
  taskId: string
  argv: string[]
  /** Epoch milliseconds. */
  startedAt: number
}

/** `queued` and `running` are live; the rest are settled. */
export type BackgroundCommandState = BackgroundCommandLiveState | BackgroundCommandSettledState
/** The command has not ended yet. */
export type BackgroundCommandLiveState = 'queued' | 'running'
/** The command has ended: its output is final and banked. */
export type BackgroundCommandSettledState = 'exited' | 'killed' | 'timeout' | 'output-limit'

/** A banked stream: the complete output, read back through the bank. */
export interface BankedArtifactRef {
  /** The bank's id; `""` when the artifact could not be created (the hint says why). */
  artifactId: string
  /** `"<label> [stdout]"` or `"<label> [stderr]"`. */
  label: string
  kind: 'command-output'
  sizeBytes: number
  /** The first 600 characters. */
  preview: string
  /** The exact call that reads the whole stream back. */
  readBackHint: string
}

/** What every status carries, live or settled. */
export interface BackgroundCommandStatusBase {
  taskId: string
  label: string
  state: BackgroundCommandState
  durationMs: number
  /** Bytes in stdout.log (exact). */
  stdoutBytes: number
  /** Bytes in stderr.log (exact). */
  stderrBytes: number
  /** At most 2000 characters: the end of each stream. Orientation, never evidence. */
  tailPreview: string
  /** Why the runner stopped it, or why it could not start. A non-zero exit is not an error. */
  error?: string
  /** Whether it runs under kernel confinement (Landlock + seccomp). */
  confined: boolean
  /**
   * How much of its process tree the runner reaches (SPEC §6). `"tree"`:
   * every descendant, also one that left the command's process group or
   * session (`setsid`, a double fork, a daemon) — the command runs in a
   * cgroup of its own (a host that may create one: root, or a delegated
   * cgroup v2 subtree). `"group"`: its process group only; a descendant that
   * left it survives the command (a non-root host without delegation, macOS).
   */
  containment: BackgroundCommandContainment
  /**
   * What kernel confinement refused it so far, one sentence per kind naming
   * the way out — e.g. "network is off: 3 connection attempts were refused
   * (…); allow network with the policy's confine.network: true" — so that a
   * failure reads as confinement, not as a network outage. Absent when
   * nothing was refused (and for an unconfined command).
   */
  confinementNotes?: string[]
  /**
   * Whether its input takes writes: started with `stdin: "pipe"` or in a
   * terminal, not closed by `end: true` or by the command, and not settled.
   */
  stdinOpen: boolean
  /**
   * Whether a process of the command is blocked reading its input (its stdin pipe or its terminal)
   * and it printed nothing for `inputWaitMs`: write to it with {@link writeBackgroundCommandInput}.
   * Turns false when the command gets input or prints; always false with `stdin: "ignore"` and once
   * settled. Absent where the platform cannot tell (macOS; see the README).
   */
  waitingForInput?: boolean
}

/** Resource limits of a command's whole process tree (every absent one is unlimited). */
export interface BackgroundCommandLimits {
  /** Bytes of memory the tree may use (a cgroup's memory limit; nothing goes to swap past it). */
  memoryBytes?: number
  /** Processes the tree may hold at once (the kernel's pids controller: threads count too). */
  processes?: number
  /** CPU time the whole tree may use, in ms (watched every 25 ms; it stops within about that). */
  cpuMs?: number
}

/** What a settled command's tree used. */
export interface BackgroundCommandUsage {
  /** CPU time of the whole tree, in ms (user + system). */
  cpuMs: number
  /** The tree's peak memory in bytes; present only where a memory cgroup measured it (a start with `limits.memoryBytes`, or a host whose cgroup v2 subtree has the memory controller). */
  peakMemoryBytes?: number
}

/** A command that has not ended: no exit code, no signal, no refs yet. `S` is its state. */
export interface LiveBackgroundCommandStatusIn<S extends BackgroundCommandLiveState = BackgroundCommandLiveState> extends BackgroundCommandStatusBase {
  state: S
  exitCode?: undefined
  signal?: undefined
  stdout?: undefined
  stderr?: undefined
  logsRemoved?: undefined
  usage?: undefined
  limit?: undefined
  recovered?: undefined
}

/** A command that has ended: both streams are banked. `S` is its state. */
export interface SettledBackgroundCommandStatusIn<S extends BackgroundCommandSettledState = BackgroundCommandSettledState> extends BackgroundCommandStatusBase {
  state: S
  /** Present when the process exited with a code. */
  exitCode?: number
  /** The name of the signal that ended it, e.g. "SIGKILL". */
  signal?: NodeJS.Signals
  /** The complete stdout, banked. */
  stdout: BankedArtifactRef
  /** The complete stderr, banked. */
  stderr: BankedArtifactRef
  /**
   * `true` once this settled command's logs were removed (a `configureLogs`
   * budget or age limit, or `pruneBackgroundCommandLogs`); absent otherwise.
   * The status stays, refs keep their ids, and every read of its output or
   * artifacts refuses with `NLC_LOGS_REMOVED`, saying when and why.
   */
  logsRemoved?: true
  /** What its tree used, where measurable (the runner made a cgroup for it: Linux, root or a delegated subtree). */
  usage?: BackgroundCommandUsage
  /** The resource limit that stopped it (state `killed`; `error` names the limit and its value). */
  limit?: 'memory' | 'processes' | 'cpu'
  /**
   * `true` for a command of an earlier host process made answerable again by
   * {@link recoverBackgroundCommands}; absent otherwise.
   */
  recovered?: true
}

/** A live status, one member per state (so `state !== 'queued' && state !== 'running'` narrows). */
export type LiveBackgroundCommandStatus = LiveBackgroundCommandStatusIn<'queued'> | LiveBackgroundCommandStatusIn<'running'>
/** A settled status, one member per state. */
export type SettledBackgroundCommandStatus =
  | SettledBackgroundCommandStatusIn<'exited'>
  | SettledBackgroundCommandStatusIn<'killed'>
  | SettledBackgroundCommandStatusIn<'timeout'>
  | SettledBackgroundCommandStatusIn<'output-limit'>

/** Everything known about a command now (built fresh on each call): narrow on `state`. */
export type BackgroundCommandStatus = LiveBackgroundCommandStatus | SettledBackgroundCommandStatus

/** A window of a stream, in UTF-16 code units of its UTF-8 decoding. */
export interface BackgroundCommandPageRequest {
  stream: 'stdout' | 'stderr'
  /** First character. Negative values count as 0. @default 0 */
  offset?: number
  /** Characters, clamped to 1..200000. @default 50000 */
  limit?: number
  /** Read the last `tail` characters instead (clamped like `limit`; not with `offset`); the page's `offset` says where it began. */
  tail?: number
}

/** One page of a stream. */
export interface BackgroundCommandOutputPage {
  taskId: string
  stream: 'stdout' | 'stderr'
  content: string
  offset: number
  limit: number
  /** The decoded length of the stream so far. */
  totalSize: number
  /** `offset + limit < totalSize` */
  hasMore: boolean
}

/** Completion counters a checklist reads. */
export interface BackgroundCommandCounts {
  /** Not settled. */
  running: number
  /** Settled and not yet looked at. */
  finished: number
}

/** Filter of `listBackgroundCommands`. */
export interface BackgroundCommandListFilter {
  sessionId?: string
  /** `true`: only unsettled commands; `false`: only settled ones. */
  running?: boolean
}

/** One row of `listBackgroundCommands`. */
export interface BackgroundCommandListEntry {
  taskId: string
  label: string
  argv: string[]
  /** The real directory it runs in. */
  cwd: string
  state: BackgroundCommandState
  startedAt: number
  running: boolean
  exitCode?: number
  signal?: NodeJS.Signals
  /** The runner or a caller stopped it (kill, abort, timeout, output cap, disposal). */
  killed: boolean
  /**
   * How much of its process tree the runner reaches (SPEC §6). `"tree"`:
   * every descendant, also one that left the command's process group or
   * session (`setsid`, a double fork, a daemon) — the command runs in a
   * cgroup of its own (a host that may create one: root, or a delegated
   * cgroup v2 subtree). `"group"`: its process group only; a descendant that
   * left it survives the command (a non-root host without delegation, macOS).
   */
  containment: BackgroundCommandContainment
  /** As {@link BackgroundCommandStatusBase.waitingForInput}: blocked reading its input, quiet. Absent where the platform cannot tell. */
  waitingForInput?: boolean
}

/** `"tree"`: every descendant of the command is reached; `"group"`: its process group only. */
export type BackgroundCommandContainment = 'tree' | 'group'

/** What `readNewBackgroundCommandOutput` returns. */
export interface BackgroundCommandNewOutput {
  taskId: string
  stream: 'stdout' | 'stderr'
  /** Text the stream gained since the previous call for that stream (at most 200000 characters). */
  content: string
  /** Where `content` starts, in characters. */
  offset: number
  totalSize: number
  /** More text is already waiting. */
  hasMore: boolean
  state: BackgroundCommandState
  running: boolean
}

/** A page of a built-in artifact. */
export interface ArtifactPage {
  artifactId: string
  content: string
  offset: number
  limit: number
  totalSize: number
  hasMore: boolean
}

/** What the host's `bankArtifact` is called with as its second argument. */
export interface BankArtifactOptions {
  kind: 'command-output'
  label: string
  sessionId: string
  previewChars: number
}

/** Optional host methods the runner uses when present. */
export interface BackgroundCommandHost {
  bankArtifact?(content: string, options: BankArtifactOptions): Promise<BankedArtifactRef> | BankedArtifactRef
  getToolContext?(): { sessionId?: string } | undefined
}

/**
 * The JSON Schema of one tool parameter: a plain type with its bounds, no
 * composition keywords, so OpenAI's strict mode and every other client take it.
 */
export type ToolPropertySchema = {
  type: 'array' | 'string' | 'number' | 'integer' | 'boolean'
  description?: string
  items?: ToolPropertySchema
  enum?: string[]
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  minItems?: number
}

/**
 * A tool's `inputSchema` (SPEC §3): an object schema with named parameters,
 * closed (`additionalProperties: false`), and nothing at its top level that
 * the Anthropic API or OpenAI's strict function schemas refuse (no `oneOf`,
 * `anyOf`, `allOf`, `not` or `if`); rules across parameters (command_output's
 * "taskId or artifactId") are in the tool's description and checked when it
 * runs. Its shape is what both SDKs' parameter types ask for, so it is handed
 * over without a cast: the AI SDK's `jsonSchema(tool.inputSchema)`, the
 * OpenAI Agents SDK's `tool({ parameters: tool.inputSchema })` (strict mode,
 * its default, makes the optional parameters nullable; `null` counts as not
 * given), an MCP server's tool list. (A type alias, not an interface, so it
 * also fits the index signature of MCP's `Tool.inputSchema`.)
 */
export type ToolInputSchema = {
  type: 'object'
  properties: Record<string, ToolPropertySchema>
  /** The parameters a call must give (possibly none). */
  required: string[]
  additionalProperties: false
}

/** A JSON Schema object (a wider subset than tools use; see ToolInputSchema for theirs). */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean'
  description?: string
  properties?: Record<string, JsonSchema>
  items?: JsonSchema
  required?: string[]
  enum?: string[]
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  minItems?: number
  minLength?: number
  additionalProperties?: boolean
  /** Exactly one of these must hold. */
  oneOf?: JsonSchema[]
  /** This must not hold. */
  not?: JsonSchema
}

/** The context a tool call runs in. */
export interface ToolExecutionContext {
  sessionId?: string
}

/** A refusal or bad input, in-band. */
export interface ToolRefusal {
  isError: true
  /** The message, with the recovery step. */
  error: string
  /** The kind of refusal: the same code the host API's Error carries for it. */
  code: BackgroundCommandErrorCode
}

/**
 * The stable `code` of every Error the API throws or rejects with, and of
 * every tool refusal (SPEC §7): one per kind of refusal. Branch on it, never
 * on the message, which stays free to improve. docs/reference/errors.md lists
 * each with what it means and the fix.
 * - `NLC_NO_POLICY`: the host has no policy; call `setBackgroundCommandPolicy` first.
 * - `NLC_INVALID_ARGUMENT`: a value of the wrong type, shape or range (including an unknown signal or stream name).
 * - `NLC_SHELL_SYNTAX`: argv[0] looks like a shell line; pass the executable alone and each argument as its own entry.
 * - `NLC_NOT_ALLOWED`: argv[0] is not one of `allowedExecutables`, spelled exactly.
 * - `NLC_OUTSIDE_ROOT`: the cwd is not an existing directory inside `cwdRoot`.
 * - `NLC_VETOED`: the policy's `allowlist` hook refused (or threw, or returned something else).
 * - `NLC_UNKNOWN_TASK`: no command of this host has that taskId.
 * - `NLC_UNKNOWN_ARTIFACT`: the built-in bank never issued that artifactId.
 * - `NLC_LOG_DIR`: no trusted log directory could be had (it could not be created, or it is a symlink, another user's, or writable by group or others).
 * - `NLC_LOGS_REMOVED`: the command's logs were removed (budget, age limit, prune); the message says when and why.
 * - `NLC_LOG_REPLACED`: the file at a log's place is not the log the runner created (replaced, a symlink, a swapped directory); none of it is returned.
 * - `NLC_IO`: a log could not be read, or the host ran out of file descriptors.
 * - `NLC_GIT_NOT_CONFIGURED`: call `configureGitTools` first.
 * - `NLC_GIT_FAILED`: a step the git toolset runs before the tool's own git (its configuration listing, `rev-parse`) failed or refused the repository; the message says which and how to fix it.
 * - `NLC_HOST_EXITING`: the host process is exiting; nothing starts any more.
 * - `NLC_CONFINEMENT_UNAVAILABLE`: confinement was asked for and this kernel cannot enforce all of it (nothing started).
 * - `NLC_LIMIT_UNAVAILABLE`: a resource limit was asked for and cannot be enforced for the whole tree here (nothing started); the message names the limit and why.
 * - `NLC_RECOVERY_REFUSED`: that task id's manifest failed the ownership or identity checks when it was recovered; nothing of it is read.
 * - `NLC_NOT_RUNNING`: the command is settled or its input is closed, so it cannot take input or a resize.
 * - `NLC_INTERNAL`: a failure that is no refusal (a bug); the message says what happened.
 * - `NLC_NATIVE_MISSING`: no native binary loads on this platform (thrown by `require`/`import`); the message names the platform and the package that provides it.
 * - `NLC_UNSUPPORTED_PLATFORM`: this version ships no package for this platform (thrown by `require`/`import`); the message names the supported ones.
 */
export type BackgroundCommandErrorCode =
  | 'NLC_NO_POLICY'
  | 'NLC_INVALID_ARGUMENT'
  | 'NLC_SHELL_SYNTAX'
  | 'NLC_NOT_ALLOWED'
  | 'NLC_OUTSIDE_ROOT'
  | 'NLC_VETOED'
  | 'NLC_UNKNOWN_TASK'
  | 'NLC_UNKNOWN_ARTIFACT'
  | 'NLC_LOG_DIR'
  | 'NLC_IO'
  | 'NLC_GIT_NOT_CONFIGURED'
  | 'NLC_GIT_FAILED'
  | 'NLC_HOST_EXITING'
  | 'NLC_CONFINEMENT_UNAVAILABLE'
  | 'NLC_LIMIT_UNAVAILABLE'
  | 'NLC_RECOVERY_REFUSED'
  | 'NLC_NOT_RUNNING'
  | 'NLC_INTERNAL'
  | 'NLC_LOGS_REMOVED'
  | 'NLC_LOG_REPLACED'
  | 'NLC_NATIVE_MISSING'
  | 'NLC_UNSUPPORTED_PLATFORM'

/** What every Error of the API is: an `Error` (a `TypeError` for a host that is not an object) with its `code`. */
export interface BackgroundCommandError extends Error {
  code: BackgroundCommandErrorCode
}

/** What `run_command_bg` is called with. */
export interface RunCommandParams {
  /** The executable and its arguments, e.g. `["/usr/bin/pnpm", "run", "lint"]`. */
  argv: string[]
  /** Working directory inside the sandbox root. @default the policy's cwdRoot */
  cwd?: string
  /** A shorter budget than the host's, in ms (never a longer one). */
  timeoutMs?: number
  /** Give the command an input to write to with `command_input`. @default false */
  stdin?: boolean
  /** Run it in an 80×24 terminal. @default false */
  terminal?: boolean
  /** Tighter resource limits than the host's (never wider). @default the policy's */
  limits?: BackgroundCommandLimits
}
/** What `run_command_bg` returns: the handle and the session's counters. */
export type RunCommandResult = BackgroundCommandHandle & BackgroundCommandCounts
/** @deprecated use RunCommandResult */
export type RunCommandToolResult = RunCommandResult

/** What `command_status` is called with. */
export interface CommandStatusParams {
  taskId: string
  /** Wait at most this long for the command to settle (or for `waitFor` to appear), in ms. */
  waitMs?: number
  /** Text to wait for in either stream, up to `waitMs`. */
  waitFor?: string
}
/** What `command_status` returns: the status (narrow on `state`) and the session's counters; `waitMatched` / `waitLine` when the call gave `waitFor`. */
export type CommandStatusResult = BackgroundCommandStatus &
  BackgroundCommandCounts & {
    waitMatched?: boolean
    waitLine?: string
    /** Present when `waitingForInput` is true: how to answer it with `command_input`. */
    hint?: string
  }
/** @deprecated use CommandStatusResult */
export type CommandStatusToolResult = CommandStatusResult

/** What `command_output` is called with: a command's stream by taskId, or a built-in artifact by artifactId. */
export type CommandOutputParams =
  | { taskId: string; stream?: 'stdout' | 'stderr'; offset?: number; limit?: number; tail?: number; grep?: string }
  | { artifactId: string; offset?: number; limit?: number; tail?: number; grep?: string }
/**
 * What `command_output` returns: a page of a stream (`taskId` in it; also for
 * `artifactId` with `tail`), a page of an artifact (`artifactId` in it), or
 * with `grep` the matching lines (`matches` in it).
 */
export type CommandOutputResult = BackgroundCommandOutputPage | ArtifactPage | BackgroundCommandSearchResult

/** What `command_kill` is called with. */
export interface CommandKillParams {
  taskId: string
}
/** What `command_kill` returns: the settled status and the session's counters. */
export type CommandKillResult = SettledBackgroundCommandStatus & BackgroundCommandCounts

/** A key `command_input` can send by name. */
export type CommandInputKey = 'enter' | 'tab' | 'escape' | 'backspace' | 'up' | 'down' | 'right' | 'left' | 'ctrl-c' | 'ctrl-d' | 'ctrl-z'
/** What `command_input` is called with. */
export interface CommandInputParams {
  taskId: string
  /** Text written as is. */
  text?: string
  /** Keys sent after the text, in order. */
  keys?: CommandInputKey[]
  /** Close the input afterwards (in a terminal: send end of file, ctrl-d; ctrl-z and enter on Windows). */
  end?: boolean
}
/** What `command_input` returns. */
export type CommandInputResult = BackgroundCommandInputResult &
  BackgroundCommandStatus &
  BackgroundCommandCounts & {
    /** Present when the command still waits for input after this write (e.g. a partial line in a terminal). */
    hint?: string
  }
/** @deprecated use CommandInputResult */
export type CommandInputToolResult = CommandInputResult

/** What `command_list` is called with. */
export interface CommandListParams {
  /** Only running (true) or only settled (false) commands. */
  running?: boolean
}
/** What `command_list` returns. */
export type CommandListResult = { commands: BackgroundCommandListEntry[] } & BackgroundCommandCounts
/** @deprecated use CommandListResult */
export type CommandListToolResult = CommandListResult

/**
 * A model-facing tool. `execute` never rejects: a refusal comes back in-band
 * (test it with `isToolRefusal`). `P` is the params shape the schema
 * describes; `execute` takes any value (a model's parsed JSON) and checks it.
 */
export interface CommandTool<P = unknown, R = unknown> {
  name: string
  description: string
  inputSchema: ToolInputSchema
  execute(params: P, executionContext?: ToolExecutionContext): Promise<R | ToolRefusal>
  execute(params: unknown, executionContext?: ToolExecutionContext): Promise<R | ToolRefusal>
}

/** NeuroLink's four command tools. */
export interface BackgroundCommandTools {
  run_command_bg: CommandTool<RunCommandParams, RunCommandResult>
  command_status: CommandTool<CommandStatusParams, CommandStatusResult>
  command_output: CommandTool<CommandOutputParams, CommandOutputResult>
  command_kill: CommandTool<CommandKillParams, CommandKillResult>
}

/** The tools `options.extra` may add, by name. */
export interface ExtraBackgroundCommandTools {
  command_input: CommandTool<CommandInputParams, CommandInputResult>
  command_list: CommandTool<CommandListParams, CommandListResult>
}

/** `git_log` params. */
export interface GitLogParams {
  ref?: string
  path?: string
  /** Floored and clamped to 1..500. @default 20 */
  maxCount?: number
  since?: string
  /** @default "oneline" */
  format?: 'oneline' | 'full' | 'stat' | 'name-only'
}
/** `git_show` params. */
export interface GitShowParams {
  ref: string
  path?: string
  nameOnly?: boolean
}
/** `git_diff` params. */
export interface GitDiffParams {
  base?: string
  head?: string
  path?: string
  nameOnly?: boolean
  stat?: boolean
  /** Floored and clamped to 0..50. */
  unified?: number
}
/** `git_blame` params. */
export interface GitBlameParams {
  path: string
  ref?: string
  lineStart?: number
  lineEnd?: number
}
/** `git_merge_base` params. */
export interface GitMergeBaseParams {
  base: string
  head: string
}
/** `git_ls_files` params. */
export interface GitLsFilesParams {
  path?: string
}

/** The six read-only git tools. */
export interface GitTools {
  git_log: CommandTool<GitLogParams, GitToolResult>
  git_show: CommandTool<GitShowParams, GitToolResult>
  git_diff: CommandTool<GitDiffParams, GitToolResult>
  git_blame: CommandTool<GitBlameParams, GitToolResult>
  git_merge_base: CommandTool<GitMergeBaseParams, GitToolResult>
  git_ls_files: CommandTool<GitLsFilesParams, GitToolResult>
}

/** Any result of the command and git tools. */
export type CommandToolResult = ToolRefusal | RunCommandResult | CommandStatusResult | CommandOutputResult | CommandKillResult | GitToolResult | CommandInputResult | CommandListResult

/** Options of the read-only git toolset. */
export interface GitToolsetOptions {
  /** The repository's working tree (required). */
  repoRoot: string
  /** Budget per git run, in ms. @default 60000 */
  timeoutMs?: number
  /** Bytes kept per stream. @default 33554432 */
  maxOutputBytes?: number
  /** Characters of the result preview, clamped to 1..4000. @default 2000 */
  previewChars?: number
  /** The git executable. @default "git" */
  gitExecutable?: string
  /** Run git under kernel confinement wherever the kernel allows (read the repository and git's configuration, write only a private TMPDIR, no network). `false` runs it unconfined. @default true */
  confine?: boolean
}

/** The git settings in force. */
export interface GitToolRuntimeSettings {
  /** The repository's real path. */
  repoRoot: string
  timeoutMs: number
  maxOutputBytes: number
  previewChars: number
  gitExecutable: string
  /** Whether git runs under kernel confinement (reads the repository, its git directories, the system trees and git's configuration; writes nothing; no network). */
  confined: boolean
  /** Why git is not confined (the kernel lacks what confinement needs), when `confined` is false. */
  confinedWhyNot?: string
}

/** The result of one git run, as host code gets it from `runGitCommand`. */
export interface GitCommandResult {
  /** The exact argv that ran: the git executable, the hardening prefix (`--no-pager` and the `-c` pairs), then the tool's args. */
  command: string[]
  /** The command as a person would write it: `git` and the tool's args, the hardening prefix left out (e.g. `git log --max-count=20 --oneline`). */
  commandLine: string
  /** Exit code 0. */
  ok: boolean
  exitCode?: number
  state: BackgroundCommandSettledState
  /** The first previewChars characters of stdout, plus "…" when there is more. */
  preview: string
  /** stdout, banked in full. */
  output: BankedArtifactRef
  /** The output ref's hint: the call that pages it (`command_output({ artifactId, … })` in the built-in bank, the host's own under a host bank). */
  readBackHint: string
  /** The first 600 characters of stderr ("…" when more); only when stderr is not empty. */
  stderrPreview?: string
}

/**
 * The result a git tool gives: the run's result, where `command` (the exact
 * argv) is NOT enumerable, so `JSON.stringify(result)` — what a host sends
 * the model — carries `commandLine` only, while host code can still read
 * `result.command`.
 */
export type GitToolResult = GitCommandResult

/** Declare what this host may execute (validated now). */
export declare function setBackgroundCommandPolicy(host: object, policy: BackgroundCommandPolicy): void
/** The policy in force for a host, or undefined. */
export declare function getBackgroundCommandPolicy(host: object): BackgroundCommandPolicy | undefined
/**
 * Counters of a host's session. `sessionId` is the first candidate of the
 * session rule (trimmed; empty or `fallback-<digits>` counts as absent);
 * without one, the host's resolver (see `setSessionResolver`) or its
 * `getToolContext().sessionId` decides, else the host's default session.
 */
export declare function backgroundCommandCounts(host: object, sessionId?: string): BackgroundCommandCounts
/** Counters of a session across every host: what a checklist reads. */
export declare function sessionCommandCounts(sessionId: string): BackgroundCommandCounts
/** Start a command in the background; resolves with its handle at once. Rejects (before any process exists) with a message that names the fix. */
export declare function startBackgroundCommand(host: object, argv: string[], options?: BackgroundCommandOptions): Promise<BackgroundCommandHandle>
/** Like startBackgroundCommand, under the given policy instead of the host's. */
export declare function startCommandWithPolicy(host: object, argv: string[], options: BackgroundCommandOptions | undefined, policy: BackgroundCommandPolicy): Promise<BackgroundCommandHandle>
/** Whether a tool result is an in-band refusal; narrows the result to the tool's own type otherwise. */
export declare function isToolRefusal(result: unknown): result is ToolRefusal
/** The live status (synchronous). Throws for an unknown task id. */
export declare function getBackgroundCommandStatus(host: object, taskId: string): BackgroundCommandStatus
/** Resolves once settled; with timeoutMs, with the current status when that WAIT elapses. */
export declare function awaitBackgroundCommand(host: object, taskId: string): Promise<SettledBackgroundCommandStatus>
export declare function awaitBackgroundCommand(host: object, taskId: string, opts?: { timeoutMs?: number }): Promise<BackgroundCommandStatus>
/** Kill the command's process group (default SIGTERM, SIGKILL after the grace); resolves with the settled status. */
export declare function killBackgroundCommand(host: object, taskId: string, signal?: NodeJS.Signals): Promise<SettledBackgroundCommandStatus>
/** Terminate every unsettled command of the host; resolves with how many were signalled. */
export declare function killAllBackgroundCommands(host: object): Promise<number>
/** One window of a stream, while it runs or after. */
export declare function readBackgroundCommandOutput(host: object, taskId: string, page: BackgroundCommandPageRequest): Promise<BackgroundCommandOutputPage>
/**
 * The model-facing command tools bound to the host: NeuroLink's four
 * (`run_command_bg`, `command_status`, `command_output`, `command_kill`),
 * plus `command_input` / `command_list` when `options.extra` names them.
 * The type follows the names written: `createBackgroundCommandTools(host)`
 * has no `command_input` key, `{ extra: ['command_input'] }` has it (and no
 * `command_list`). An `extra` whose names are not literals (an array
 * typed `ExtraBackgroundCommandToolName[]`, e.g. read from configuration) types both as
 * present: test `'command_input' in tools` there.
 */
export declare function createBackgroundCommandTools<E extends ExtraBackgroundCommandToolName = never>(
  host: object,
  options?: BackgroundCommandToolsOptions<E>,
): BackgroundCommandTools & Pick<ExtraBackgroundCommandTools, E>
/** The host's commands, oldest first. */
export declare function listBackgroundCommands(host: object, filter?: BackgroundCommandListFilter): BackgroundCommandListEntry[]
/** What a stream gained since the previous call of this function for it (default stdout). */
export declare function readNewBackgroundCommandOutput(host: object, taskId: string, stream?: 'stdout' | 'stderr'): BackgroundCommandNewOutput
/** The whole text of a built-in artifact. */
export declare function readArtifact(artifactId: string): Promise<string>
/** One page of a built-in artifact, in the units of output pages. */
export declare function retrieveArtifact(artifactId: string, options?: { offset?: number; limit?: number }): Promise<ArtifactPage>
/** Configure the read-only git toolset for a host. */
export declare function configureGitTools(host: object, options: GitToolsetOptions): GitToolRuntimeSettings
/** Run git (hardened prefix, replaced environment) in the configured repository; resolves when it settled. */
export declare function runGitCommand(host: object, args: string[], sessionId?: string): Promise<GitCommandResult>
/** The six read-only git tools bound to the host. */
export declare function createGitTools(host: object): GitTools
/**
 * Hand every session decision of this host to `resolve` (a start without
 * `sessionId`, every tool call, `backgroundCommandCounts(host)` without an
 * id): it receives the tool call's execution context (undefined for host API
 * calls) and returns the session id. A resolver that throws or returns a
 * non-string falls back to the built-in rule. `undefined` removes it.
 * NeuroLink: `setSessionResolver(this, (ctx) => resolveChecklistSessionId(this, ctx))`.
 */
export declare function setSessionResolver(host: object, resolve: ((executionContext?: object) => string) | undefined): void
/** What kernel confinement this machine supports (measured once per process). */
export declare function confinementSupport(): ConfinementSupport
/**
 * Write to the input of a command started with `stdin: "pipe"` or in a
 * terminal. A string is written as UTF-8, a Uint8Array (or Buffer) as its
 * bytes. Resolves once the last byte is in the pipe (waiting while the pipe
 * is full, never blocking the JS thread). A command without an input is an
 * invalid argument (start it with `stdin: "pipe"`); a settled command, or
 * one whose input is closed, is refused as not running.
 */
export declare function writeBackgroundCommandInput(host: object, taskId: string, data: string | Uint8Array, options?: BackgroundCommandInputOptions): Promise<BackgroundCommandInputResult>
/**
 * Change the window size of a command running in a terminal; the command
 * gets SIGWINCH (on Windows, a console resize). Both sizes are integers from 1 to 65535. A command without
 * a terminal is an invalid argument; a settled one is refused as not running.
 */
export declare function resizeBackgroundCommandTerminal(host: object, taskId: string, size: { cols: number; rows: number }): void

/** What to wait for in a command's output. */
export interface BackgroundCommandOutputWait {
  /** A substring of one line (the default), or with `regex: true` a regular expression in the syntax of Rust's `regex` crate (linear time). Non-empty, no line break. */
  pattern: string
  /** Treat `pattern` as a regular expression (`^`/`$` anchor at line ends). @default false */
  regex?: boolean
  /** Which stream to watch. @default "any" */
  stream?: 'stdout' | 'stderr' | 'any'
  /** Only matches starting at or after this UTF-16 offset count (a finite number ≥ 0). @default 0 */
  from?: number
  /** Resolve with `matched: false` after this many ms (a finite number ≥ 0). @default until the command settles */
  timeoutMs?: number
}

/** The end of a wait for output. */
export interface BackgroundCommandOutputWaitResult {
  /** Whether the pattern appeared. */
  matched: boolean
  /** The stream it appeared in (when matched). */
  stream?: 'stdout' | 'stderr'
  /** UTF-16 offset of the match's start in that stream, as pages count (when matched). */
  offset?: number
  /** The line holding the match, without its line ending, at most 2000 characters (when matched). */
  line?: string
  /** The command's status when the wait ended. */
  status: BackgroundCommandStatus
}

/** A search of one stream's log. */
export interface BackgroundCommandSearchRequest {
  /** A substring of one line, or with `regex: true` a regular expression (Rust `regex` syntax). Non-empty, no line break. */
  pattern: string
  /** Treat `pattern` as a regular expression. @default false */
  regex?: boolean
  /** Which stream. @default "stdout" */
  stream?: 'stdout' | 'stderr'
  /** Only matches starting at or after this UTF-16 offset (a finite number ≥ 0). @default 0 */
  from?: number
  /** At most this many lines, clamped to 1..1000. @default 100 */
  maxMatches?: number
}

/** One matching line. */
export interface BackgroundCommandSearchMatch {
  /** 1-based line number from the start of the stream. */
  line: number
  /** UTF-16 offset of the line's start (a page `offset` to read around it). */
  offset: number
  /** The line without its ending, cut to 500 characters plus `…`. */
  text: string
}

/** What a search found. */
export interface BackgroundCommandSearchResult {
  /** The matching lines, in order. */
  matches: BackgroundCommandSearchMatch[]
  /** More matching lines follow. */
  hasMore: boolean
  /** Search again with `from: scannedTo` to continue: nothing after the matches returned is missed. */
  scannedTo: number
}

/** Resolve as soon as `pattern` appears in the command's output (matched in the engine as output arrives), or `matched: false` when it settles without it or `timeoutMs` elapses. */
export declare function awaitBackgroundCommandOutput(host: object, taskId: string, options: BackgroundCommandOutputWait): Promise<BackgroundCommandOutputWaitResult>

/** The lines of one stream that hold `pattern`, streaming the log (memory bounded whatever its size); works while running and after. */
export declare function searchBackgroundCommandOutput(host: object, taskId: string, options: BackgroundCommandSearchRequest): Promise<BackgroundCommandSearchResult>

/** Call `listener` on the JS thread once for every command of `host` as it settles (both streams banked: the status is final). A listener that throws is reported as a process warning and disturbs nothing. Returns the unsubscribe function. */
export declare function onBackgroundCommandSettled(host: object, listener: (status: BackgroundCommandStatus) => void): () => void

/**
 * Call `listener` on the JS thread once each time a running command of `host` begins waiting for
 * input (blocked reading its stdin pipe or terminal, nothing printed for `inputWaitMs`): once per
 * episode, again after it got input or printed and then waits again. The status is the live one
 * (by the time it runs, the command may have moved on). A listener that throws is reported as a
 * process warning and disturbs nothing. Returns the unsubscribe function. Never called where the
 * platform cannot tell (macOS).
 */
export declare function onBackgroundCommandWaitingForInput(host: object, listener: (status: BackgroundCommandStatus) => void): () => void

/** `configureLogs` options (SPEC §13). A field left out keeps its setting; `null` returns it to the default. */
export interface LogOptions {
  /**
   * The directory task directories are made in, for commands started afterwards.
   * Must be absolute; created 0700 if missing; refused (`NLC_LOG_DIR`) unless it is
   * a real directory owned by this user and not writable by group or others.
   * @default the `NEUROLINK_COMMANDS_LOG_DIR` environment variable, else `<os.tmpdir()>/neurolink-commands` (or `neurolink-commands-<uid>` when that one is not trusted)
   */
  dir?: string | null
  /**
   * The most bytes all of this process's logs on disk may take: past it, the
   * oldest settled commands' logs are removed (never a running command's).
   * Checked as bytes are written and at every settle. @default none (nothing is removed)
   */
  maxTotalBytes?: number | null
  /** Settled commands' logs older than this (since they settled) are removed. @default none */
  maxAgeMs?: number | null
  /** Remove this process's task directories when it exits. @default false */
  removeOnExit?: boolean | null
  /**
   * Task directories that ENDED processes of this user left in the log
   * directory are removed once nothing in them changed for this long, by a
   * sweep in the background after this process's first start (never a live
   * process's directories, never on the start's own path). `0` turns it off.
   * Set it before the first start for it to apply to that sweep.
   * @default 604800000 (7 days)
   */
  endedRetentionMs?: number | null
}

/** The log settings in force. */
export interface LogSettings {
  /** The directory commands started now keep their logs in. */
  dir: string
  /** The budget, when one is set. */
  maxTotalBytes?: number
  /** The age limit, when one is set. */
  maxAgeMs?: number
  /** Whether this process's task directories are removed when it exits. */
  removeOnExit: boolean
  /** How long ended processes' task directories stay before the background sweep removes them, in ms (0: off). */
  endedRetentionMs: number
}

/** `pruneBackgroundCommandLogs` options. */
export interface PruneLogsOptions {
  /** Remove settled commands' logs older than this. @default the configured `maxAgeMs` (none: no age rule) */
  olderThanMs?: number
  /** Remove the oldest settled commands' logs until at most this many bytes stay. @default the configured `maxTotalBytes` (none: no size rule) */
  keepBytes?: number
}

/** What a prune removed. */
export interface PruneLogsResult {
  /** Task directories removed (this process's and those ended processes left). */
  removed: number
  /** Bytes of log they held. */
  freedBytes: number
}

/**
 * Where logs go, how much they may take and how long they stay (process-wide;
 * SPEC §13). Returns the settings in force. Defaults change nothing of a live
 * process: none of its logs is removed unless a limit is set; what ended
 * processes left goes after `endedRetentionMs` (7 days).
 */
export declare function configureLogs(options: LogOptions): LogSettings
/**
 * The log settings in force, changing none of them (`dir` is the directory a
 * command started now would use). Throws `NLC_LOG_DIR` when that directory is
 * not usable.
 */
export declare function getLogSettings(): LogSettings
/**
 * An explicit sweep: settled logs by age / size (the options, else the
 * configured limits), and every task directory an ended process of this user
 * left under the log directories in use (a live process's never). What a
 * long-lived host runs at start-up.
 */
export declare function pruneBackgroundCommandLogs(options?: PruneLogsOptions): Promise<PruneLogsResult>

/** What {@link recoverBackgroundCommands} recovers. */
export interface RecoverOptions {
  /** Only commands of this session. @default every session */
  sessionId?: string
  /** Only commands started at or after this epoch time, in ms. @default every start */
  sinceMs?: number
}

/**
 * After a host restart: make the commands of earlier, ended processes of this user in the current
 * log base (`configureLogs`) answerable again for `host` under their old task ids — status, pages,
 * search, tails, `readArtifact`, lists and the tools — each marked `recovered: true`. A command whose
 * host died before it settled is recovered as `killed`, its `error` saying the host process ended,
 * with every byte its logs hold. Each task directory is checked first (this user's, not writable by
 * others, its manifest and logs the very files it names); one that fails is never read, and its task id
 * answers `NLC_RECOVERY_REFUSED`. Recovered commands never count as `finished`. Resolves with how many
 * were recovered (commands already known to this process are skipped). See docs/guide/recovery-and-limits.md.
 */
export declare function recoverBackgroundCommands(host: object, options?: RecoverOptions): Promise<number>
