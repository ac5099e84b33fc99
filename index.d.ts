// Declarations of the public API of neurolink-commands (index.js, a thin
// adapter over the generated binding.js / binding.d.ts).

/** What a host may execute. There is no default: until one is set, every start is refused. */
export interface BackgroundCommandPolicy {
  /** argv[0] must equal one of these EXACTLY (no basename or PATH matching). An empty list refuses everything. */
  allowedExecutables: string[]
  /** The sandbox: every cwd must resolve (symlinks followed) to this directory or below it. */
  cwdRoot: string
  /** The final say after the allowlist and the sandbox: return `true` to allow, or a string that becomes the refusal. Called once per start with argv and the real cwd. */
  allowlist?: (argv: string[], cwd: string) => true | string
  /** Budget of a command that names none, in ms. @default 120000 */
  defaultTimeoutMs?: number
  /** Bytes kept per stream; reaching it stops the command with state `output-limit`. @default 10485760 */
  maxOutputBytes?: number
  /** Grace between SIGTERM and SIGKILL, in ms. @default 5000 */
  killGraceMs?: number
}

/** Options of one start. */
export interface BackgroundCommandOptions {
  /** Working directory inside the policy's cwdRoot (relative paths resolve against the real root). */
  cwd: string
  /** Budget in ms. @default policy.defaultTimeoutMs */
  timeoutMs?: number
  /** Bytes kept per stream. @default policy.maxOutputBytes */
  maxOutputBytes?: number
  /** When given, REPLACES the parent environment entirely; when omitted the command inherits it. */
  env?: Record<string, string>
  /** A label for the command. @default the first two argv entries (cut to 60 characters plus "…") */
  label?: string
  /** The session the command counts in. @default the host's getToolContext().sessionId, else the host's default session */
  sessionId?: string
  /** Aborting it kills the command (state `killed`). */
  abortSignal?: AbortSignal
  /**
   * What the command reads: `"ignore"` is /dev/null; `"pipe"` is a pipe the
   * host writes with {@link writeBackgroundCommandInput}. @default "ignore"
   */
  stdin?: 'ignore' | 'pipe'
  /**
   * Run the command in a new session whose controlling terminal is a
   * pseudo-terminal of this size (`true`: 80×24): stdin, stdout and stderr
   * are the terminal; what it shows (escape sequences included) is captured
   * in stdout.log under the same byte cap and stderr.log stays empty. Input
   * goes through {@link writeBackgroundCommandInput}; `TERM` is
   * `xterm-256color` unless `env` names one. @default false
   */
  terminal?: boolean | TerminalSize
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
   * terminal, write the end-of-file character (ctrl-d) after the data
   * instead; the input stays open. @default false
   */
  end?: boolean
}

/** What a write to a command's input resolves with. */
export interface BackgroundCommandInputResult {
  /** The bytes written: the UTF-8 bytes of a string, a terminal's ctrl-d for `end` included. */
  bytesWritten: number
}

/** Options of {@link createBackgroundCommandTools}. */
export interface BackgroundCommandToolsOptions {
  /** Tools to add to NeuroLink's four. @default [] */
  extra?: Array<'command_input' | 'command_list'>
}

/** Returned at once by a start; the command keeps running. */
export interface BackgroundCommandHandle {
  taskId: string
  argv: string[]
  /** Epoch milliseconds. */
  startedAt: number
}

/** `queued` and `running` are live; the rest are settled. */
export type BackgroundCommandState = 'queued' | 'running' | 'exited' | 'killed' | 'timeout' | 'output-limit'

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

/** Everything known about a command now (built fresh on each call). */
export interface BackgroundCommandStatus {
  taskId: string
  label: string
  state: BackgroundCommandState
  /** Present when the process exited with a code. */
  exitCode?: number
  /** The name of the signal that ended it, e.g. "SIGKILL". */
  signal?: string
  durationMs: number
  /** Bytes in stdout.log (exact). */
  stdoutBytes: number
  /** Bytes in stderr.log (exact). */
  stderrBytes: number
  /** Present exactly when the state is settled. */
  stdout?: BankedArtifactRef
  /** Present exactly when the state is settled. */
  stderr?: BankedArtifactRef
  /** At most 2000 characters: the end of each stream. Orientation, never evidence. */
  tailPreview: string
  /** Why the runner stopped it, or why it could not start. A non-zero exit is not an error. */
  error?: string
  /**
   * Whether its input takes writes: started with `stdin: "pipe"` or in a
   * terminal, not closed by `end: true` or by the command, and not settled.
   */
  stdinOpen: boolean
}

/** A window of a stream, in UTF-16 code units of its UTF-8 decoding. */
export interface BackgroundCommandPageRequest {
  stream: 'stdout' | 'stderr'
  /** First character. Negative values count as 0. @default 0 */
  offset?: number
  /** Characters, clamped to 1..200000. @default 50000 */
  limit?: number
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
  signal?: string
  /** The runner or a caller stopped it (kill, abort, timeout, output cap, disposal). */
  killed: boolean
}

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

/** A JSON Schema object (the subset the tools use). */
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
  additionalProperties?: boolean
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
}

export type RunCommandToolResult = BackgroundCommandHandle & BackgroundCommandCounts
export type CommandStatusToolResult = BackgroundCommandStatus & BackgroundCommandCounts

/** Any result of the command and git tools. */
export type CommandToolResult =
  | ToolRefusal
  | RunCommandToolResult
  | CommandStatusToolResult
  | BackgroundCommandOutputPage
  | GitToolResult
  | CommandInputToolResult
  | CommandListToolResult

/** A model-facing tool. `execute` never rejects. */
export interface CommandTool {
  name: string
  description: string
  inputSchema: JsonSchema
  execute(params: Record<string, unknown>, executionContext?: ToolExecutionContext): Promise<CommandToolResult>
}

/** The four command tools, plus the extra ones asked for (`command_input`, `command_list`). */
export interface BackgroundCommandTools extends Record<string, CommandTool> {
  run_command_bg: CommandTool
  command_status: CommandTool
  command_output: CommandTool
  command_kill: CommandTool
  // With `extra: ["command_input"]`: `command_input { taskId, text?, keys?, end? }`;
  // with `extra: ["command_list"]`: `command_list { running? }` (reached through the index signature).
}

/** What `command_input` returns. */
export type CommandInputToolResult = BackgroundCommandInputResult & BackgroundCommandStatus & BackgroundCommandCounts

/** What `command_list` returns. */
export type CommandListToolResult = { commands: BackgroundCommandListEntry[] } & BackgroundCommandCounts

/** The six read-only git tools. */
export interface GitTools extends Record<string, CommandTool> {
  git_log: CommandTool
  git_show: CommandTool
  git_diff: CommandTool
  git_blame: CommandTool
  git_merge_base: CommandTool
  git_ls_files: CommandTool
}

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
}

/** The git settings in force. */
export interface GitToolRuntimeSettings {
  /** The repository's real path. */
  repoRoot: string
  timeoutMs: number
  maxOutputBytes: number
  previewChars: number
  gitExecutable: string
}

/** The result of one git run. */
export interface GitToolResult {
  /** The exact argv that ran. */
  command: string[]
  /** Exit code 0. */
  ok: boolean
  exitCode?: number
  state: BackgroundCommandState
  /** The first previewChars characters of stdout, plus "…" when there is more. */
  preview: string
  /** stdout, banked in full. */
  output: BankedArtifactRef
  /** The output ref's hint. */
  readBackHint: string
  /** The first 600 characters of stderr ("…" when more); only when stderr is not empty. */
  stderrPreview?: string
}

/** Declare what this host may execute (validated now). */
export declare function setBackgroundCommandPolicy(host: object, policy: BackgroundCommandPolicy): void
/** The policy in force for a host, or undefined. */
export declare function getBackgroundCommandPolicy(host: object): BackgroundCommandPolicy | undefined
/** Counters of a host's session (its default session when none is named). */
export declare function backgroundCommandCounts(host: object, sessionId?: string): BackgroundCommandCounts
/** Counters of a session across every host: what a checklist reads. */
export declare function sessionCommandCounts(sessionId: string): BackgroundCommandCounts
/** Start a command in the background; resolves with its handle at once. Rejects (before any process exists) with a message that names the fix. */
export declare function startBackgroundCommand(
  host: object,
  argv: string[],
  options: BackgroundCommandOptions,
): Promise<BackgroundCommandHandle>
/** Like startBackgroundCommand, under the given policy instead of the host's. */
export declare function startCommandWithPolicy(
  host: object,
  argv: string[],
  options: BackgroundCommandOptions,
  policy: BackgroundCommandPolicy,
): Promise<BackgroundCommandHandle>
/** The live status (synchronous). Throws for an unknown task id. */
export declare function getBackgroundCommandStatus(host: object, taskId: string): BackgroundCommandStatus
/** Resolves once settled; with timeoutMs, with the current status when that WAIT elapses. */
export declare function awaitBackgroundCommand(
  host: object,
  taskId: string,
  opts?: { timeoutMs?: number },
): Promise<BackgroundCommandStatus>
/** Kill the command's process group (default SIGTERM, SIGKILL after the grace); resolves with the settled status. */
export declare function killBackgroundCommand(
  host: object,
  taskId: string,
  signal?: string,
): Promise<BackgroundCommandStatus>
/** Terminate every unsettled command of the host; resolves with how many were signalled. */
export declare function killAllBackgroundCommands(host: object): Promise<number>
/** One window of a stream, while it runs or after. */
export declare function readBackgroundCommandOutput(
  host: object,
  taskId: string,
  page: BackgroundCommandPageRequest,
): Promise<BackgroundCommandOutputPage>
/**
 * The model-facing command tools bound to the host: NeuroLink's four
 * (`run_command_bg`, `command_status`, `command_output`, `command_kill`),
 * plus `command_input` / `command_list` when `options.extra` names them.
 */
export declare function createBackgroundCommandTools(
  host: object,
  options?: BackgroundCommandToolsOptions,
): BackgroundCommandTools
/** The host's commands, oldest first. */
export declare function listBackgroundCommands(
  host: object,
  filter?: BackgroundCommandListFilter,
): BackgroundCommandListEntry[]
/** What a stream gained since the previous call of this function for it (default stdout). */
export declare function readNewBackgroundCommandOutput(
  host: object,
  taskId: string,
  stream?: 'stdout' | 'stderr',
): BackgroundCommandNewOutput
/** The whole text of a built-in artifact. */
export declare function readArtifact(artifactId: string): Promise<string>
/** One page of a built-in artifact, in the units of output pages. */
export declare function retrieveArtifact(
  artifactId: string,
  options?: { offset?: number; limit?: number },
): Promise<ArtifactPage>
/** Configure the read-only git toolset for a host. */
export declare function configureGitTools(host: object, options: GitToolsetOptions): GitToolRuntimeSettings
/** Run git (hardened prefix, replaced environment) in the configured repository; resolves when it settled. */
export declare function runGitCommand(host: object, args: string[], sessionId?: string): Promise<GitToolResult>
/** The six read-only git tools bound to the host. */
export declare function createGitTools(host: object): GitTools
/**
 * Write to the input of a command started with `stdin: "pipe"` or in a
 * terminal. A string is written as UTF-8, a Uint8Array (or Buffer) as its
 * bytes. Resolves once the last byte is in the pipe (waiting while the pipe
 * is full, never blocking the JS thread). A command without an input is an
 * invalid argument (start it with `stdin: "pipe"`); a settled command, or
 * one whose input is closed, is refused as not running.
 */
export declare function writeBackgroundCommandInput(
  host: object,
  taskId: string,
  data: string | Uint8Array,
  options?: BackgroundCommandInputOptions,
): Promise<BackgroundCommandInputResult>
/**
 * Change the window size of a command running in a terminal; the command
 * gets SIGWINCH. Both sizes are integers from 1 to 65535. A command without
 * a terminal is an invalid argument; a settled one is refused as not running.
 */
export declare function resizeBackgroundCommandTerminal(
  host: object,
  taskId: string,
  size: { cols: number; rows: number },
): void
