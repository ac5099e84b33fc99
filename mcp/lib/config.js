// Command line and config file → the policy and git options the server hands
// to neurolink-commands. Everything wrong here is a UsageError: the bin prints
// its message and exits with code 2 before any tool exists.

import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { parseArgs } from 'node:util'

// The library's defaults and field lists, defined once in its engine.
const { limits } = createRequire(import.meta.url)('neurolink-commands/lib/contract.js')

/** A configuration the server refuses to start with (exit code 2). */
export class UsageError extends Error {
  constructor(message) {
    super(message)
    this.name = 'UsageError'
  }
}

/**
 * The git budget when none is configured: below the roughly 60 s after which
 * common MCP clients give up on a request (the library's own default is limits.gitDefaultTimeoutMs).
 */
export const DEFAULT_GIT_TIMEOUT_MS = 50000

/**
 * The SIGTERM → SIGKILL grace when none is configured (the library's own
 * default is limits.defaultKillGraceMs): short enough that stopping the server, which waits for
 * every command to settle, is done within its 5 s.
 */
export const DEFAULT_KILL_GRACE_MS = 2000

export const USAGE = `Usage: neurolink-commands-mcp --root <dir> --allow <exe> [--allow <exe> ...]
                             [--git <repoRoot>] [--timeout-ms N] [--max-output-bytes N]
                             [--kill-grace-ms N] [--confine [--write <dir> ...] [--network]]
       neurolink-commands-mcp --config <file.json> [flags that override the file]

A stdio MCP server: the model runs the allowlisted executables (exact paths, no
shell) inside <dir> in the background and reads their complete output.

  --root <dir>            the sandbox root (policy cwdRoot); commands run in it or below
  --allow <exe>           an executable the model may run, spelled exactly as argv[0]
                          must be (repeat for more; policy allowedExecutables)
  --git <repoRoot>        also offer the six read-only git tools on that repository
  --timeout-ms N          each command's budget (policy defaultTimeoutMs, default ${limits.defaultTimeoutMs})
  --max-output-bytes N    the cap per stream (policy maxOutputBytes, default ${limits.defaultMaxOutputBytes})
  --kill-grace-ms N       SIGTERM to SIGKILL grace (policy killGraceMs; default ${DEFAULT_KILL_GRACE_MS}
                          here, so stopping the server ends every command within 5 s)
  --confine               confine commands with the kernel (Landlock, seccomp)
  --write <dir>           with --confine: a tree commands may write (repeatable;
                          default the root)
  --network               with --confine: allow network access
  --config <file.json>    the policy in its own field names: { cwdRoot,
                          allowedExecutables, defaultTimeoutMs, maxOutputBytes,
                          killGraceMs, idleTimeoutMs, confine, git: { repoRoot, ... } }
  --help                  this text
`

/** The policy fields a JSON file can hold (not the callbacks), as the library reads them. */
const FILE_POLICY_FIELDS = limits.policyFields.filter((f) => !limits.callbackFields.includes(f))
const POLICY_FIELDS = [...FILE_POLICY_FIELDS, 'git']
const GIT_FIELDS = limits.gitOptionFields
const NUMBER_FIELDS = ['defaultTimeoutMs', 'maxOutputBytes', 'killGraceMs', 'idleTimeoutMs', 'inputWaitMs']

function positiveInteger(text, flag) {
  if (!/^[0-9]+$/.test(text) || Number(text) <= 0 || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${flag} needs a positive whole number, got ${JSON.stringify(text)}`)
  }
  return Number(text)
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

function readConfigFile(file) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new UsageError(`--config ${file}: cannot read it (${e.code ?? e.message})`)
  }
  let config
  try {
    config = JSON.parse(text)
  } catch (e) {
    throw new UsageError(`--config ${file}: not valid JSON (${e.message})`)
  }
  if (!isPlainObject(config)) throw new UsageError(`--config ${file}: must hold a JSON object`)
  // An unknown field is refused rather than ignored: a misspelt "confine" must
  // never mean running unconfined.
  for (const key of Object.keys(config)) {
    if (!POLICY_FIELDS.includes(key)) {
      throw new UsageError(`--config ${file}: unknown field ${JSON.stringify(key)} (known: ${POLICY_FIELDS.join(', ')})`)
    }
  }
  const base = dirname(resolve(file))
  if (config.cwdRoot !== undefined) {
    if (typeof config.cwdRoot !== 'string' || config.cwdRoot === '') {
      throw new UsageError(`--config ${file}: cwdRoot must be a directory path`)
    }
    config.cwdRoot = resolve(base, config.cwdRoot)
  }
  if (config.allowedExecutables !== undefined) {
    const list = config.allowedExecutables
    if (!Array.isArray(list) || !list.every((e) => typeof e === 'string' && e !== '')) {
      throw new UsageError(`--config ${file}: allowedExecutables must be an array of executable paths`)
    }
  }
  for (const key of NUMBER_FIELDS) {
    const v = config[key]
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)) {
      throw new UsageError(`--config ${file}: ${key} must be a positive number`)
    }
  }
  if (config.confine !== undefined && config.confine !== false && !isPlainObject(config.confine)) {
    throw new UsageError(`--config ${file}: confine must be false or an object ({ write?, read?, exec?, network?, tmp? })`)
  }
  if (config.git !== undefined) {
    if (!isPlainObject(config.git)) throw new UsageError(`--config ${file}: git must be an object ({ repoRoot, ... })`)
    for (const key of Object.keys(config.git)) {
      if (!GIT_FIELDS.includes(key)) {
        throw new UsageError(`--config ${file}: unknown git field ${JSON.stringify(key)} (known: ${GIT_FIELDS.join(', ')})`)
      }
    }
    if (typeof config.git.repoRoot !== 'string' || config.git.repoRoot === '') {
      throw new UsageError(`--config ${file}: git.repoRoot must be the repository's directory`)
    }
    config.git = { ...config.git, repoRoot: resolve(base, config.git.repoRoot) }
  }
  return config
}

function existingDirectory(dir, what) {
  let st
  try {
    st = statSync(dir)
  } catch {
    throw new UsageError(`${what} ${dir}: not an existing directory`)
  }
  if (!st.isDirectory()) throw new UsageError(`${what} ${dir}: not a directory`)
}

/**
 * Parse the command line (flags override the config file).
 * Returns `{ help: true }` for --help, else `{ policy, git }` where `git` is
 * the options for configureGitTools or undefined (no git tools).
 */
export function parseCommandLine(argv) {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        root: { type: 'string' },
        allow: { type: 'string', multiple: true },
        git: { type: 'string' },
        'timeout-ms': { type: 'string' },
        'max-output-bytes': { type: 'string' },
        'kill-grace-ms': { type: 'string' },
        confine: { type: 'boolean' },
        write: { type: 'string', multiple: true },
        network: { type: 'boolean' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (e) {
    throw new UsageError(e.message)
  }
  const v = parsed.values
  if (v.help) return { help: true }

  const file = v.config === undefined ? {} : readConfigFile(v.config)
  const policy = {}
  for (const key of FILE_POLICY_FIELDS) {
    if (file[key] !== undefined) policy[key] = file[key]
  }
  if (v.root !== undefined) {
    if (v.root === '') throw new UsageError('--root needs a directory')
    policy.cwdRoot = resolve(v.root)
  }
  if (v.allow !== undefined) {
    if (v.allow.some((e) => e === '')) throw new UsageError('--allow needs an executable path')
    policy.allowedExecutables = v.allow
  }
  if (v['timeout-ms'] !== undefined) policy.defaultTimeoutMs = positiveInteger(v['timeout-ms'], '--timeout-ms')
  if (v['max-output-bytes'] !== undefined) policy.maxOutputBytes = positiveInteger(v['max-output-bytes'], '--max-output-bytes')
  if (v['kill-grace-ms'] !== undefined) policy.killGraceMs = positiveInteger(v['kill-grace-ms'], '--kill-grace-ms')

  const fileConfines = isPlainObject(policy.confine)
  if (v.confine || v.write !== undefined || v.network) {
    if (!v.confine && !fileConfines) {
      throw new UsageError(`${v.write !== undefined ? '--write' : '--network'} only means something with --confine`)
    }
    const confine = fileConfines ? { ...policy.confine } : {}
    if (v.write !== undefined) confine.write = v.write.map((d) => resolve(d))
    if (v.network) confine.network = true
    policy.confine = confine
  }

  if (policy.cwdRoot === undefined) {
    throw new UsageError('missing --root <dir>: the directory commands run in (or cwdRoot in the --config file)')
  }
  if (policy.allowedExecutables === undefined || policy.allowedExecutables.length === 0) {
    const example = process.platform === 'win32' ? '"C:\\Program Files\\nodejs\\node.exe"' : '/usr/bin/make'
    throw new UsageError(`missing --allow <exe>: at least one executable the model may run, e.g. --allow ${example} (or allowedExecutables in the --config file)`)
  }
  existingDirectory(policy.cwdRoot, '--root')
  if (policy.killGraceMs === undefined) policy.killGraceMs = DEFAULT_KILL_GRACE_MS

  let git = file.git ? { ...file.git } : undefined
  if (v.git !== undefined) {
    if (v.git === '') throw new UsageError('--git needs the repository directory')
    git = { ...git, repoRoot: resolve(v.git) }
  }
  if (git) {
    existingDirectory(git.repoRoot, '--git')
    if (git.timeoutMs === undefined) git.timeoutMs = DEFAULT_GIT_TIMEOUT_MS
  }
  return { policy, git }
}
