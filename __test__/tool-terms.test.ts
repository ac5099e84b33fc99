// A refusal a model reads speaks the tool's own terms (SPEC §3): each kind
// of refusal that can reach a tool result, driven through the tools, names
// the tools and parameters the model has and no host function; the host
// API's Error for the same call keeps naming the host function (it is read
// by the host's developer). Kinds this kernel cannot produce (confinement
// it lacks, a full temp directory) are checked on the engine's exact text.
import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'

import { hostWith, logPath, nc, settle, tempRoot } from './helpers.ts'
import terms from '../lib/terms.js'

const { HOST_FUNCTIONS, inToolTerms } = terms as {
  HOST_FUNCTIONS: string[]
  inToolTerms(name: string, code: string, message: string): string
}
const ROOT = tempRoot('nlc-terms-')
after(() => rmSync(ROOT, { recursive: true, force: true }))
const SH = '/bin/sh'
const CAT = '/bin/cat'
const EXTRA = { extra: ['command_input', 'command_list'] as ('command_input' | 'command_list')[] }

/** The refusal `r` must be: code, the tool-term phrase, and no host function or option path. */
function inTerms(r: unknown, code: string, phrase: string): string {
  assert.ok(nc.isToolRefusal(r), `a refusal: ${JSON.stringify(r)}`)
  assert.equal(r.code, code, r.error)
  assert.ok(r.error.includes(phrase), `"${phrase}" in: ${r.error}`)
  for (const f of [...HOST_FUNCTIONS, 'NeuroLink:', 'registerBackgroundCommandTools', 'registerGitTools']) {
    assert.ok(!r.error.includes(f), `no ${f} in: ${r.error}`)
  }
  assert.doesNotMatch(r.error, /\b(options|page|opts|policy)\.\w/, 'no host option path')
  return r.error
}

async function hostRejects(call: () => unknown, re: RegExp): Promise<void> {
  await assert.rejects(
    async () => call(),
    (e: Error) => {
      assert.match(e.message, re)
      return true
    },
  )
}

function dir(name: string): string {
  const d = join(ROOT, name)
  mkdirSync(d, { recursive: true })
  return d
}

test('no policy: run_command_bg says the host has not enabled it; the host API names setBackgroundCommandPolicy', async () => {
  const host = {}
  const r = await nc.createBackgroundCommandTools(host).run_command_bg.execute({ argv: [SH, '-c', 'true'] })
  inTerms(r, 'NLC_NO_POLICY', 'no command can run: the host application has not enabled run_command_bg yet. No parameter changes that; tell the user.')
  await hostRejects(() => nc.startBackgroundCommand(host, [SH]), /setBackgroundCommandPolicy/)
})

test('unknown task on a host that started none: every task tool says to use the taskId run_command_bg returned', async () => {
  const host = hostWith(dir('unknown'), [SH])
  const tools = nc.createBackgroundCommandTools(host, EXTRA)
  for (const name of ['command_status', 'command_output', 'command_kill', 'command_input'] as const) {
    const e = inTerms(await tools[name].execute({ taskId: 'c1feedfacecafe' }), 'NLC_UNKNOWN_TASK', 'This host has started none yet; use the taskId that run_command_bg returned.')
    assert.match(e, new RegExp(`^${name} \\{`))
  }
  assert.throws(() => nc.getBackgroundCommandStatus(host, 'c1feedfacecafe'), /use the taskId returned by startBackgroundCommand/)
  // the control: with a command started, the ids are listed (no advice needed)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'true'])
  const listed = await tools.command_status.execute({ taskId: 'c1feedfacecafe' })
  inTerms(listed, 'NLC_UNKNOWN_TASK', `Its task ids: ${h.taskId}`)
  await settle(host, h.taskId)
})

test('unknown artifact: command_output points at the refs of command_status and the git tools', async () => {
  const host = hostWith(dir('artifact'), [SH])
  const r = await nc.createBackgroundCommandTools(host).command_output.execute({ artifactId: 'no-such-artifact' })
  inTerms(r, 'NLC_UNKNOWN_ARTIFACT', "use the artifactId of a stdout or stderr ref in a settled command's command_status result, or of a git tool's output ref")
  await hostRejects(() => nc.retrieveArtifact('no-such-artifact'), /status\.stdout or status\.stderr/)
})

test('an executable not allowed: the allowed ones are listed as the host allows them; none at all says to tell the user', async () => {
  const root = dir('allowed')
  const some = await nc.createBackgroundCommandTools(hostWith(root, [SH])).run_command_bg.execute({ argv: ['/bin/ls'] })
  const e = inTerms(some, 'NLC_NOT_ALLOWED', 'argv[0] must equal one of the executables this host allows, spelled exactly (no basename or PATH matching). Allowed: "/bin/sh"')
  assert.match(e, /Executable "\/bin\/ls" is not allowed/)
  const none = hostWith(root, [])
  inTerms(await nc.createBackgroundCommandTools(none).run_command_bg.execute({ argv: [SH] }), 'NLC_NOT_ALLOWED', 'This host allows no executable at all, so no command can run; tell the user.')
  await hostRejects(() => nc.startBackgroundCommand(none, [SH]), /add it to allowedExecutables/)
})

test('a cwd outside the root says how to give cwd; a vanished root says to tell the user', async () => {
  const root = dir('sandbox')
  const host = hostWith(root, [SH])
  const run = nc.createBackgroundCommandTools(host).run_command_bg
  const e = inTerms(await run.execute({ argv: [SH], cwd: '/' }), 'NLC_OUTSIDE_ROOT', 'pass a cwd inside the sandbox root, or leave cwd out to run in the root itself')
  assert.match(e, /cwd "\/" resolves to "\/", which is outside the permitted root/)
  await hostRejects(() => nc.startBackgroundCommand(host, [SH], { cwd: '/' }), /pass a directory inside cwdRoot/)
  // the control: leaving cwd out runs in the root
  const ok = await run.execute({ argv: [SH, '-c', 'true'] })
  assert.ok(!nc.isToolRefusal(ok))
  await settle(host, ok.taskId)
  rmSync(root, { recursive: true })
  const gone = inTerms(await run.execute({ argv: [SH] }), 'NLC_OUTSIDE_ROOT', "the host's sandbox root is missing; tell the user")
  assert.ok(gone.includes(`The sandbox root ${JSON.stringify(root)} is not an existing directory`), gone)
  await hostRejects(() => nc.startBackgroundCommand(host, [SH]), /set the policy's cwdRoot to a directory that exists/)
})

test('git tools not configured, or pointed at no repository yet: the git tool says to tell the user', async () => {
  const host = hostWith(dir('git'), [SH])
  inTerms(
    await nc.createGitTools(host).git_log.execute({}),
    'NLC_GIT_NOT_CONFIGURED',
    'The git tools are not set up for this host: the host application has not given them a repository yet. No parameter changes that; tell the user.',
  )
  await hostRejects(() => nc.runGitCommand(host, ['log']), /configureGitTools/)
  const later = join(ROOT, 'repo-not-yet')
  nc.configureGitTools(host, { repoRoot: later })
  const e = inTerms(await nc.createGitTools(host).git_log.execute({}), 'NLC_OUTSIDE_ROOT', 'or tell the user that the git tools point at no repository')
  assert.ok(e.includes(`repoRoot ${JSON.stringify(later)} is not an existing directory (yet): create the repository there,`), e)
})

test('command_input to a command without an input names run_command_bg stdin: true; the host API names stdin: "pipe"', async () => {
  const host = hostWith(dir('stdin'), [CAT])
  const tools = nc.createBackgroundCommandTools(host, EXTRA)
  const started = await tools.run_command_bg.execute({ argv: [CAT] })
  assert.ok(!nc.isToolRefusal(started))
  inTerms(
    await tools.command_input.execute({ taskId: started.taskId, text: 'x' }),
    'NLC_INVALID_ARGUMENT',
    'was started without an input, so nothing can be written to it: start it with run_command_bg stdin: true (or terminal: true) to write to it with command_input',
  )
  await hostRejects(() => nc.writeBackgroundCommandInput(host, started.taskId, 'x'), /start it with stdin: "pipe"/)
  // the control: started with stdin: true, the same write lands
  const piped = await tools.run_command_bg.execute({ argv: [CAT], stdin: true })
  assert.ok(!nc.isToolRefusal(piped))
  const w = await tools.command_input.execute({ taskId: piped.taskId, text: 'x', end: true })
  assert.ok(!nc.isToolRefusal(w) && w.bytesWritten === 1, JSON.stringify(w))
  await settle(host, piped.taskId)
  // settled: no more input, and how to send more
  inTerms(await tools.command_input.execute({ taskId: piped.taskId, text: 'y' }), 'NLC_NOT_RUNNING', 'so it takes no more input: start it again with run_command_bg to send it input')
  await settle(host, started.taskId)
})

test('waitFor and grep refusals name waitFor and grep, not the host API pattern; tail with offset names both', async () => {
  const host = hostWith(dir('wait'), [SH])
  const tools = nc.createBackgroundCommandTools(host)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo hi'])
  await settle(host, h.taskId)
  const taskId = h.taskId
  inTerms(await tools.command_status.execute({ taskId, waitMs: 10, waitFor: '' }), 'NLC_INVALID_ARGUMENT', 'waitFor must be a non-empty string (the text to look for)')
  inTerms(await tools.command_status.execute({ taskId, waitMs: 10, waitFor: 'a\nb' }), 'NLC_INVALID_ARGUMENT', 'waitFor must not contain a line break')
  inTerms(await tools.command_output.execute({ taskId, grep: '' }), 'NLC_INVALID_ARGUMENT', 'grep must be a non-empty string (the text to look for)')
  inTerms(await tools.command_output.execute({ taskId, tail: 2, offset: 1 }), 'NLC_INVALID_ARGUMENT', 'tail reads the end of the stream, so it cannot be combined with offset: give one of them')
  await hostRejects(() => nc.readBackgroundCommandOutput(host, taskId, { stream: 'stdout', tail: 2, offset: 1 }), /page\.tail .* page\.offset/)
  // the controls: each alone works
  const hi = await tools.command_status.execute({ taskId, waitMs: 10, waitFor: 'hi' })
  assert.ok(!nc.isToolRefusal(hi) && hi.waitMatched === true)
  const tail = await tools.command_output.execute({ taskId, tail: 2 })
  assert.ok(!nc.isToolRefusal(tail) && 'content' in tail && tail.content === 'i\n')
})

test('shell syntax, a veto and a replaced log keep their own words, which name no host function', async () => {
  const root = dir('words')
  const vetoing = hostWith(root, [SH], { allowlist: () => 'builds only, please' })
  inTerms(await nc.createBackgroundCommandTools(vetoing).run_command_bg.execute({ argv: [SH, '-c', 'true'] }), 'NLC_VETOED', 'builds only, please')
  const host = hostWith(root, [SH])
  const tools = nc.createBackgroundCommandTools(host)
  inTerms(await tools.run_command_bg.execute({ argv: ['ls -la'] }), 'NLC_SHELL_SYNTAX', 'commands run with NO shell: pass the executable alone as argv[0]')
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo hi'])
  await settle(host, h.taskId)
  const log = logPath(h.taskId, 'stdout')
  writeFileSync(`${log}.planted`, 'planted\n')
  chmodSync(`${log}.planted`, 0o600)
  renameSync(`${log}.planted`, log)
  inTerms(await tools.command_output.execute({ taskId: h.taskId }), 'NLC_LOG_REPLACED', 'is not the file the runner created, so none of it is returned')
})

test('logs removed by a prune: the reason names the host, not its function', async () => {
  const host = hostWith(dir('pruned'), [SH])
  const tools = nc.createBackgroundCommandTools(host)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo hi'])
  await settle(host, h.taskId)
  // the control: readable before the prune
  const before = await tools.command_output.execute({ taskId: h.taskId })
  assert.ok(!nc.isToolRefusal(before) && 'content' in before && before.content === 'hi\n')
  await nc.pruneBackgroundCommandLogs({ olderThanMs: 0 })
  const e = inTerms(await tools.command_output.execute({ taskId: h.taskId }), 'NLC_LOGS_REMOVED', '(older than the log age limit (0 ms, by the host))')
  assert.match(e, /so its output can no longer be read/)
  await hostRejects(() => nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' }), /pruneBackgroundCommandLogs olderThanMs/)
})

test("kinds this kernel cannot produce here, on the engine's exact words", () => {
  const confine =
    'Confinement was asked for, but this kernel cannot enforce all of it: Landlock is not enabled. Nothing was started (nothing runs half-confined). To run commands unconfined explicitly, set confine: false in the policy and leave options.confine out'
  const c = inToolTerms('run_command_bg', 'NLC_CONFINEMENT_UNAVAILABLE', confine)
  assert.equal(
    c,
    "Confinement was asked for, but this kernel cannot enforce all of it: Landlock is not enabled. Nothing was started (nothing runs half-confined). Confinement is the host's setting, which no parameter changes; tell the user",
  )
  const tmp = 'Cannot create a private temp directory for a confined command in /tmp: No space left on device. Point TMPDIR at a writable directory with free space, or use confine.tmp: "shared".'
  assert.equal(
    inToolTerms('run_command_bg', 'NLC_LOG_DIR', tmp),
    "Cannot create a private temp directory for a confined command in /tmp: No space left on device. The host's temp directory is full or not writable; tell the user.",
  )
  const budget =
    'The logs of "c1" were removed at 2026-01-01T00:00:00.000Z (the logs on disk exceeded the log budget of 10 bytes (configureLogs maxTotalBytes) and it was the oldest settled command), so its output can no longer be read'
  assert.match(inToolTerms('command_output', 'NLC_LOGS_REMOVED', budget), /log budget of 10 bytes \(the host's setting\) and/)
  // a rule applies to its own code only
  assert.equal(inToolTerms('run_command_bg', 'NLC_SHELL_SYNTAX', confine), confine)
})

test("a killed command's status error names command_kill in a tool result, killBackgroundCommand in the host API", async () => {
  const host = hostWith(dir('killed'), [SH])
  const tools = nc.createBackgroundCommandTools(host)
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'])
  const r = await tools.command_kill.execute({ taskId: h.taskId })
  assert.ok(!nc.isToolRefusal(r), JSON.stringify(r))
  assert.equal(r.error, 'The command was killed with SIGTERM by command_kill (or by the host) (it ended on SIGTERM); its output up to then is banked in full')
  const s = await tools.command_status.execute({ taskId: h.taskId })
  assert.ok(!nc.isToolRefusal(s) && s.error === r.error, JSON.stringify(s))
  // the host API's status keeps the host's words, also after the tools read it
  assert.equal(
    nc.getBackgroundCommandStatus(host, h.taskId).error,
    'The command was killed with SIGTERM by the caller (killBackgroundCommand) (it ended on SIGTERM); its output up to then is banked in full',
  )
  const all = hostWith(dir('disposed'), [SH])
  const d = await nc.startBackgroundCommand(all, [SH, '-c', 'sleep 30'])
  await nc.killAllBackgroundCommands(all)
  const ds = await nc.createBackgroundCommandTools(all).command_status.execute({ taskId: d.taskId })
  assert.ok(!nc.isToolRefusal(ds))
  assert.match(ds.error!, /killed with SIGTERM because the host stopped all its commands/)
  for (const f of HOST_FUNCTIONS) assert.ok(!ds.error!.includes(f) && !r.error!.includes(f), f)
})
