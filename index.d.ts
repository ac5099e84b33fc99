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
}

/** A command that has not ended: no exit code, no signal, no refs yet. `S` is its state. */
export interface LiveBackgroundCommandStatusIn<S extends BackgroundCommandLiveState = BackgroundCommandLiveState>
  extends BackgroundCommandStatusBase {
  state: S
  exitCode?: undefined
  signal?: undefined
  stdout?: undefined
  stderr?: undefined
}

/** A command that has ended: both streams are banked. `S` is its state. */
export interface SettledBackgroundCommandStatusIn<S extends BackgroundCommandSettledState = BackgroundCommandSettledState>
  extends BackgroundCommandStatusBase {
  state: S
  /** Present when the process exited with a code. */
  exitCode?: number
  /** The name of the signal that ended it, e.g. "SIGKILL". */
  signal?: NodeJS.Signals
  /** The complete stdout, banked. */
  stdout: BankedArtifactRef
  /** The complete stderr, banked. */
  stderr: BankedArtifactRef
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
  /** Exactly one of these must hold (command_output: taskId or artifactId). */
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
 * on the message, which stays free to improve. The README lists each with
 * what it means and the fix.
 * - `NLC_NO_POLICY`: the host has no policy; call `setBackgroundCommandPolicy` first.
 * - `NLC_INVALID_ARGUMENT`: a value of the wrong type, shape or range (including an unknown signal or stream name).
 * - `NLC_SHELL_SYNTAX`: argv[0] looks like a shell line; pass the executable alone and each argument as its own entry.
 * - `NLC_NOT_ALLOWED`: argv[0] is not one of `allowedExecutables`, spelled exactly.
 * - `NLC_OUTSIDE_ROOT`: the cwd is not an existing directory inside `cwdRoot`.
 * - `NLC_VETOED`: the policy's `allowlist` hook refused (or threw, or returned something else).
 * - `NLC_UNKNOWN_TASK`: no command of this host has that taskId.
 * - `NLC_UNKNOWN_ARTIFACT`: the built-in bank never issued that artifactId.
 * - `NLC_LOG_DIR`: the log directory under os.tmpdir() could not be created.
 * - `NLC_IO`: a log could not be read, or the host ran out of file descriptors.
 * - `NLC_GIT_NOT_CONFIGURED`: call `configureGitTools` first.
 * - `NLC_HOST_EXITING`: the host process is exiting; nothing starts any more.
 * - `NLC_CONFINEMENT_UNAVAILABLE`: reserved for kernel confinement (SPEC §8); not produced yet.
 * - `NLC_NOT_RUNNING`: reserved for input to a settled command (SPEC §9); not produced yet.
 * - `NLC_INTERNAL`: a failure that is no refusal (a bug); the message says what happened.
 * - `NLC_NATIVE_MISSING`: no native binary loads on this platform (thrown by `require`/`import`); the message names the platform and the package that provides it.
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
  | 'NLC_HOST_EXITING'
  | 'NLC_CONFINEMENT_UNAVAILABLE'
  | 'NLC_NOT_RUNNING'
  | 'NLC_INTERNAL'
  | 'NLC_NATIVE_MISSING'

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
}
/** What `run_command_bg` returns: the handle and the session's counters. */
export type RunCommandResult = BackgroundCommandHandle & BackgroundCommandCounts
/** @deprecated use RunCommandResult */
export type RunCommandToolResult = RunCommandResult

/** What `command_status` is called with. */
export interface CommandStatusParams {
  taskId: string
  /** Wait at most this long for the command to settle, in ms. */
  waitMs?: number
}
/** What `command_status` returns: the status (narrow on `state`) and the session's counters. */
export type CommandStatusResult = BackgroundCommandStatus & BackgroundCommandCounts
/** @deprecated use CommandStatusResult */
export type CommandStatusToolResult = CommandStatusResult

/** What `command_output` is called with: a command's stream by taskId, or a built-in artifact by artifactId. */
export type CommandOutputParams =
  | { taskId: string; stream?: 'stdout' | 'stderr'; offset?: number; limit?: number }
  | { artifactId: string; offset?: number; limit?: number }
/** What `command_output` returns: a page of a stream (`taskId` in it) or of an artifact (`artifactId` in it). */
export type CommandOutputResult = BackgroundCommandOutputPage | ArtifactPage

/** What `command_kill` is called with. */
export interface CommandKillParams {
  taskId: string
}
/** What `command_kill` returns: the settled status and the session's counters. */
export type CommandKillResult = SettledBackgroundCommandStatus & BackgroundCommandCounts

/**
 * A model-facing tool. `execute` never rejects: a refusal comes back in-band
 * (test it with `isToolRefusal`). `P` is the params shape the schema describes;
 * `execute` takes any value (a model's parsed JSON) and checks it.
 */
export interface CommandTool<P = unknown, R = unknown> {
  name: string
  description: string
  inputSchema: JsonSchema
  execute(params: P, executionContext?: ToolExecutionContext): Promise<R | ToolRefusal>
  execute(params: unknown, executionContext?: ToolExecutionContext): Promise<R | ToolRefusal>
}

/** Whether a tool result is an in-band refusal; narrows the result to the tool's own type otherwise. */
export declare function isToolRefusal(result: unknown): result is ToolRefusal

/** The four command tools. */
export interface BackgroundCommandTools {
  run_command_bg: CommandTool<RunCommandParams, RunCommandResult>
  command_status: CommandTool<CommandStatusParams, CommandStatusResult>
  command_output: CommandTool<CommandOutputParams, CommandOutputResult>
  command_kill: CommandTool<CommandKillParams, CommandKillResult>
}

/**
 * Tools beyond the four that a feature adds on request (merged into by the
 * declarations of each such tool: `{ command_input: CommandTool<…>, … }`).
 * Empty in this version.
 */
export interface ExtraBackgroundCommandTools {}
/** The name of an extra command tool. */
export type ExtraBackgroundCommandToolName = keyof ExtraBackgroundCommandTools

/** Options of `createBackgroundCommandTools`. */
export interface BackgroundCommandToolsOptions<E extends ExtraBackgroundCommandToolName = never> {
  /** Extra tools to create besides the four. @default [] */
  extra?: E[]
}

/** `git_log` params. */
export interface GitLogParams {
  ref?: string
  path?: string
  /** 1..500. @default 20 */
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
  /** 0..50 */
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
export type CommandToolResult =
  | ToolRefusal
  | RunCommandResult
  | CommandStatusResult
  | CommandOutputResult
  | GitToolResult

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

/** The result of one git run, as host code gets it from `runGitCommand`. */
export interface GitCommandResult {
  /** The exact argv that ran: the git executable, the hardening prefix (`--no-pager` and the `-c` pairs), then the tool's args. */
  command: string[]
  /** The command as a person would write it: `git` and the tool's args, the hardening prefix left out (e.g. `git log --no-color --no-ext-diff --no-textconv --max-count=20 --oneline`). */
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
export declare function awaitBackgroundCommand(host: object, taskId: string): Promise<SettledBackgroundCommandStatus>
export declare function awaitBackgroundCommand(
  host: object,
  taskId: string,
  opts?: { timeoutMs?: number },
): Promise<BackgroundCommandStatus>
/** Kill the command's process group (default SIGTERM, SIGKILL after the grace); resolves with the settled status. */
export declare function killBackgroundCommand(
  host: object,
  taskId: string,
  signal?: NodeJS.Signals,
): Promise<SettledBackgroundCommandStatus>
/** Terminate every unsettled command of the host; resolves with how many were signalled. */
export declare function killAllBackgroundCommands(host: object): Promise<number>
/** One window of a stream, while it runs or after. */
export declare function readBackgroundCommandOutput(
  host: object,
  taskId: string,
  page: BackgroundCommandPageRequest,
): Promise<BackgroundCommandOutputPage>
/** The four model-facing command tools bound to the host (plus the extra ones named in `options.extra`). */
export declare function createBackgroundCommandTools<E extends ExtraBackgroundCommandToolName = never>(
  host: object,
  options?: BackgroundCommandToolsOptions<E>,
): BackgroundCommandTools & Pick<ExtraBackgroundCommandTools, E>
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
export declare function runGitCommand(host: object, args: string[], sessionId?: string): Promise<GitCommandResult>
/** The six read-only git tools bound to the host. */
export declare function createGitTools(host: object): GitTools
