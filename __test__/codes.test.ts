// SPEC §7: every Error of the host API and every tool refusal carries a
// stable NLC_* code, one per kind of refusal. Each row below produces its
// code from a real case — on the host API and, where a tool can meet the same
// refusal, in the tool's { isError, error, code } — and both must agree.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'

import { hostWith, logPath, nc, settle, tempRoot } from './helpers.ts'

const FILE_TMP = mkdtempSync(join(tmpdir(), 'nlc-codes-'))
process.env.TMPDIR = FILE_TMP
after(() => rmSync(FILE_TMP, { recursive: true, force: true }))

const SH = '/bin/sh'
const ROOT = tempRoot('nlc-codes-root-')

/** Every code index.d.ts declares in `BackgroundCommandErrorCode`. */
function declaredCodes(): string[] {
  const dts = readFileSync(join(import.meta.dirname, '..', 'index.d.ts'), 'utf8')
  const m = /export type BackgroundCommandErrorCode =([\s\S]*?)\n\n/.exec(dts)
  assert.ok(m, 'index.d.ts declares BackgroundCommandErrorCode')
  return [...m[1]!.matchAll(/'(NLC_[A-Z_]+)'/g)].map((x) => x[1]!)
}

/** The code of a rejection (or synchronous throw) of `call`, asserting it is an Error. */
async function hostCode(call: () => unknown): Promise<string> {
  try {
    await call()
  } catch (e) {
    assert.ok(e instanceof Error, `an Error, got ${String(e)}`)
    const code = (e as Error & { code?: unknown }).code
    assert.equal(typeof code, 'string', `a code on: ${e.message}`)
    return code as string
  }
  assert.fail('expected a refusal')
}

/** The code of a tool's in-band refusal. */
async function toolCode(result: Promise<unknown>): Promise<string> {
  const r = (await result) as { isError?: boolean; error?: string; code?: string }
  assert.equal(r.isError, true, `a refusal, got ${JSON.stringify(r)}`)
  assert.deepEqual(Object.keys(r).sort(), ['code', 'error', 'isError'])
  assert.equal(typeof r.error, 'string')
  return r.code!
}

function policyHost(extra: Partial<nc.BackgroundCommandPolicy> = {}): object {
  return hostWith(ROOT, [SH], extra)
}

type Row = {
  code: nc.BackgroundCommandErrorCode
  what: string
  host: () => unknown
  tool?: () => Promise<unknown>
}

const veto = (): object => policyHost({ allowlist: () => 'not on Fridays' })

const sparse = (n: number): string[] => {
  const a: string[] = []
  a.length = n
  return a
}

const rows: Row[] = [
  {
    code: 'NLC_INVALID_ARGUMENT',
    what: 'an invalid regular expression in a wait (the parser says why); an empty waitFor in the tool',
    host: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.' })
      return nc.awaitBackgroundCommandOutput(h, taskId, { pattern: '(x', regex: true })
    },
    tool: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.' })
      return nc.createBackgroundCommandTools(h).command_status.execute({ taskId, waitFor: '', waitMs: 10 })
    },
  },
  {
    code: 'NLC_INVALID_ARGUMENT',
    what: 'a negative maxMatches in a search; a negative tail in the tool',
    host: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.' })
      return nc.searchBackgroundCommandOutput(h, taskId, { pattern: 'x', maxMatches: -1 })
    },
    tool: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.' })
      return nc.createBackgroundCommandTools(h).command_output.execute({ taskId, tail: -1 })
    },
  },
  {
    code: 'NLC_INVALID_ARGUMENT',
    what: 'a sparse argv of length 2**32-1',
    host: () => nc.startBackgroundCommand(policyHost(), sparse(2 ** 32 - 1), { cwd: '.' }),
  },
  {
    code: 'NLC_INVALID_ARGUMENT',
    what: 'an allowedExecutables array above 65,536 entries',
    host: () => nc.setBackgroundCommandPolicy({}, { allowedExecutables: sparse(65537), cwdRoot: ROOT }),
  },
  {
    code: 'NLC_LOGS_REMOVED',
    what: 'a page of a command whose logs a prune removed',
    host: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'echo gone'], { cwd: '.' })
      await settle(h, taskId)
      await nc.pruneBackgroundCommandLogs({ keepBytes: 0 })
      return nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })
    },
    tool: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'echo gone'], { cwd: '.' })
      await settle(h, taskId)
      await nc.pruneBackgroundCommandLogs({ keepBytes: 0 })
      return nc.createBackgroundCommandTools(h).command_output.execute({ taskId })
    },
  },
  {
    code: 'NLC_LOG_REPLACED',
    what: 'a page of a log replaced by another file after it settled',
    host: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'echo real'], { cwd: '.' })
      await settle(h, taskId)
      const p = join(nc.configureLogs({}).dir, taskId, 'stdout.log')
      rmSync(p)
      writeFileSync(p, 'planted')
      return nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })
    },
  },
  {
    code: 'NLC_NO_POLICY',
    what: 'a start on a host without a policy',
    host: () => nc.startBackgroundCommand({}, [SH, '-c', 'true']),
    tool: () => nc.createBackgroundCommandTools({}).run_command_bg.execute({ argv: [SH, '-c', 'true'] }),
  },
  {
    code: 'NLC_INVALID_ARGUMENT',
    what: 'an empty argv',
    host: () => nc.startBackgroundCommand(policyHost(), [], { cwd: '.' }),
    tool: () => nc.createBackgroundCommandTools(policyHost()).run_command_bg.execute({ argv: [] }),
  },
  {
    code: 'NLC_INVALID_ARGUMENT',
    what: 'a host that is not an object (checked by the adapter)',
    host: () => nc.getBackgroundCommandStatus(null as unknown as object, 'x'),
  },
  {
    code: 'NLC_INVALID_ARGUMENT',
    what: 'an unknown signal name',
    host: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.' })
      await settle(h, taskId)
      return nc.killBackgroundCommand(h, taskId, 'SIGNOPE' as NodeJS.Signals)
    },
  },
  {
    code: 'NLC_INVALID_ARGUMENT',
    what: 'a page of a stream that does not exist (the tool checks its offset param itself)',
    host: async () => {
      const h = policyHost()
      const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.' })
      return nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdin' as 'stdout' })
    },
    tool: () => nc.createBackgroundCommandTools(policyHost()).command_output.execute({ taskId: 'x', offset: 'ten' }),
  },
  {
    code: 'NLC_SHELL_SYNTAX',
    what: 'a shell line as argv[0]',
    host: () => nc.startBackgroundCommand(policyHost(), ['ls -la'], { cwd: '.' }),
    tool: () => nc.createBackgroundCommandTools(policyHost()).run_command_bg.execute({ argv: ['ls -la'] }),
  },
  {
    code: 'NLC_NOT_ALLOWED',
    what: 'an executable outside the allowlist',
    host: () => nc.startBackgroundCommand(policyHost(), ['/bin/echo', 'hi'], { cwd: '.' }),
    tool: () => nc.createBackgroundCommandTools(policyHost()).run_command_bg.execute({ argv: ['/bin/echo', 'hi'] }),
  },
  {
    code: 'NLC_OUTSIDE_ROOT',
    what: 'a cwd outside the root',
    host: () => nc.startBackgroundCommand(policyHost(), [SH, '-c', 'true'], { cwd: '/' }),
    tool: () => nc.createBackgroundCommandTools(policyHost()).run_command_bg.execute({ argv: [SH, '-c', 'true'], cwd: '/' }),
  },
  {
    code: 'NLC_VETOED',
    what: "the policy's allowlist hook refusing",
    host: () => nc.startBackgroundCommand(veto(), [SH, '-c', 'true'], { cwd: '.' }),
    tool: () => nc.createBackgroundCommandTools(veto()).run_command_bg.execute({ argv: [SH, '-c', 'true'] }),
  },
  {
    code: 'NLC_UNKNOWN_TASK',
    what: 'a task id the host never started',
    host: () => nc.getBackgroundCommandStatus(policyHost(), 'bg-nope'),
    tool: () => nc.createBackgroundCommandTools(policyHost()).command_status.execute({ taskId: 'bg-nope' }),
  },
  {
    code: 'NLC_UNKNOWN_TASK',
    what: 'a kill of a task id the host never started',
    host: () => nc.killBackgroundCommand(policyHost(), 'bg-nope'),
    tool: () => nc.createBackgroundCommandTools(policyHost()).command_kill.execute({ taskId: 'bg-nope' }),
  },
  {
    code: 'NLC_UNKNOWN_ARTIFACT',
    what: 'an artifact id the built-in bank never issued',
    host: () => nc.retrieveArtifact('artifact-nope'),
  },
  {
    code: 'NLC_GIT_NOT_CONFIGURED',
    what: 'git on a host that never configured it',
    host: () => nc.runGitCommand({}, ['log']),
    tool: () => nc.createGitTools({}).git_ls_files.execute({}),
  },
]

describe('every refusal kind carries its code, the same on the host API and in the tool', () => {
  for (const row of rows) {
    test(`${row.code}: ${row.what}`, async () => {
      assert.equal(await hostCode(row.host), row.code, 'host API')
      if (row.tool) assert.equal(await toolCode(row.tool()), row.code, 'tool refusal')
    })
  }

  test('NLC_LOG_DIR: the log directory cannot be created (TMPDIR is a file)', async () => {
    const file = join(FILE_TMP, 'not-a-dir')
    writeFileSync(file, 'x')
    const saved = process.env.TMPDIR
    process.env.TMPDIR = file
    try {
      assert.equal(await hostCode(() => nc.startBackgroundCommand(policyHost(), [SH, '-c', 'true'], { cwd: '.' })), 'NLC_LOG_DIR')
      assert.equal(await toolCode(nc.createBackgroundCommandTools(policyHost()).run_command_bg.execute({ argv: [SH, '-c', 'true'] })), 'NLC_LOG_DIR')
    } finally {
      process.env.TMPDIR = saved
    }
    // The control: the same start with a usable TMPDIR runs.
    const h = policyHost()
    const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'true'], { cwd: '.' })
    assert.equal((await settle(h, taskId)).state, 'exited')
  })

  test('NLC_IO: a log removed from under the runner cannot be read', async () => {
    const h = policyHost()
    const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'echo hi'], { cwd: '.' })
    await settle(h, taskId)
    // The control: the log reads before it is removed.
    assert.equal((await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })).content, 'hi\n')
    rmSync(logPath(taskId, 'stdout'))
    assert.equal(await hostCode(() => nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout' })), 'NLC_IO')
    assert.equal(await toolCode(nc.createBackgroundCommandTools(h).command_output.execute({ taskId })), 'NLC_IO')
  })

  test('NLC_HOST_EXITING: once the exit hook ran, a start is refused (in a child process)', async () => {
    const dir = mkdtempSync(join(FILE_TMP, 'exiting-'))
    mkdirSync(join(dir, 'root'))
    const script = `
      const nc = require(${JSON.stringify(join(import.meta.dirname, '..', 'index.js'))})
      const host = {}
      nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(join(dir, 'root'))} })
      const out = {}
      ;(async () => {
        const before = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'true'], { cwd: '.' })
        out.before = typeof before.taskId
        process.emit('exit', 0) // runs the adapter's exit hook, as the host's exit would
        await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'true'], { cwd: '.' }).catch((e) => { out.host = e.code })
        const r = await nc.createBackgroundCommandTools(host).run_command_bg.execute({ argv: ['/bin/sh', '-c', 'true'] })
        out.tool = r.code
        process.stdout.write(JSON.stringify(out))
      })()
    `
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['-e', script], { timeout: 30_000, env: { ...process.env, TMPDIR: dir } }, (err, so) => (err ? reject(err) : resolve(so)))
    })
    assert.deepEqual(JSON.parse(stdout), { before: 'string', host: 'NLC_HOST_EXITING', tool: 'NLC_HOST_EXITING' })
  })
})

test('NLC_NATIVE_MISSING: a copy of the package with no binary and no platform package fails to load, naming both (in a child process)', async () => {
  const repoDir = join(import.meta.dirname, '..')
  const copy = tempRoot('nlc-codes-nobinary-')
  try {
    for (const f of ['index.js', 'binding.js', 'package.json']) writeFileSync(join(copy, f), readFileSync(join(repoDir, f)))
    mkdirSync(join(copy, 'lib'))
    for (const f of ['tools.js', 'load.js']) writeFileSync(join(copy, 'lib', f), readFileSync(join(repoDir, 'lib', f)))
    const probe = `try { require(${JSON.stringify(join(copy, 'index.js'))}); console.log('loaded') } catch (e) { console.log(JSON.stringify([e.code, e.packageName, e.message])) }`
    const { stdout } = await new Promise<{ stdout: string }>((res, rej) => execFile(process.execPath, ['-e', probe], { cwd: copy }, (err, stdout) => (err ? rej(err) : res({ stdout }))))
    const [code, pkg, message] = JSON.parse(stdout) as [string, string, string]
    // The platform of the Node running this suite (the platform runs use arm64 and musl Nodes).
    const { currentPlatform } = require(join(repoDir, 'lib', 'load.js')) as { currentPlatform: () => string }
    const here = currentPlatform()
    assert.equal(code, 'NLC_NATIVE_MISSING')
    assert.equal(pkg, `neurolink-commands-${here}`)
    assert.ok(message.includes(`(${here})`) && message.includes(`npm install neurolink-commands-${here}@`), message)
    // The control: the repository itself, binary next to it, loads.
    const ok = await new Promise<string>((res, rej) =>
      execFile(process.execPath, ['-e', `require(${JSON.stringify(join(repoDir, 'index.js'))}); console.log('loaded')`], (err, out) => (err ? rej(err) : res(out))),
    )
    assert.equal(ok, 'loaded\n')
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
})

test('the codes produced are the declared ones, distinct per kind', () => {
  const declared = declaredCodes()
  assert.equal(new Set(declared).size, declared.length, 'no code declared twice')
  for (const r of rows) assert.ok(declared.includes(r.code), `${r.code} is declared`)
  for (const c of ['NLC_LOG_DIR', 'NLC_IO', 'NLC_HOST_EXITING', 'NLC_NATIVE_MISSING', 'NLC_UNSUPPORTED_PLATFORM']) assert.ok(declared.includes(c), `${c} is declared`)
  // SPEC §7's list is declared in full.
  for (const c of [
    'NLC_NO_POLICY',
    'NLC_INVALID_ARGUMENT',
    'NLC_SHELL_SYNTAX',
    'NLC_NOT_ALLOWED',
    'NLC_OUTSIDE_ROOT',
    'NLC_VETOED',
    'NLC_UNKNOWN_TASK',
    'NLC_LOG_DIR',
    'NLC_GIT_NOT_CONFIGURED',
    'NLC_CONFINEMENT_UNAVAILABLE',
    'NLC_NOT_RUNNING',
    'NLC_HOST_EXITING',
  ])
    assert.ok(declared.includes(c), `${c} is declared`)
  // The error reference has a row (meaning and fix) for each declared code, and the README points to it.
  const page = readFileSync(join(import.meta.dirname, '..', 'docs', 'reference', 'errors.md'), 'utf8')
  for (const c of declared) assert.match(page, new RegExp('^\\| `' + c + '` \\| [^|]+ \\| [^|]+ \\|$', 'm'), `docs/reference/errors.md has a row for ${c}`)
  const listed = [...page.matchAll(/^\| `(NLC_\w+)` \|/gm)].map((m) => m[1]!)
  assert.deepEqual([...listed].sort(), [...declared].sort(), 'and no row for a code that is not declared')
  const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8')
  assert.ok(readme.includes('](docs/reference/errors.md)'), 'the README links the error reference')
})

test('the binding exports no check* function: each API verb is one native call', () => {
  const binding = createRequire(import.meta.url)('../binding.js') as Record<string, unknown>
  const checks = Object.keys(binding).filter((k) => /^check[A-Z]/.test(k))
  assert.deepEqual(checks, [])
  assert.equal(typeof binding.startCommand, 'function', 'the control: the binding loaded')
})
