// Bad input from JS, export by export: wrong types and shapes for every
// argument, hostile hosts (frozen, Proxies, Proxies whose traps throw, revoked
// Proxies), and host callbacks (allowlist, bankArtifact, getToolContext) that
// throw, return the wrong thing or never settle. Every case must end in a
// clear Error (or the tools' in-band refusal) that names what was expected —
// never a crash, a hang, a raw trap message or a 10 MiB message.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { inspect } from 'node:util'

import { hostWith, nc, ownKeys, settle, SETTLED_STATES, tempRoot, WAIT_SCALE, waitFor } from './helpers.ts'

// Everything this file creates — temporary roots and the commands' log
// directories (under os.tmpdir()) — lives in one directory, removed at the end.
const FILE_TMP = mkdtempSync(join(tmpdir(), 'nlc-bad-input-'))
process.env.TMPDIR = FILE_TMP
after(() => rmSync(FILE_TMP, { recursive: true, force: true }))

const SH = '/bin/sh'
const TEN_MIB = 'x'.repeat(10 * 1024 * 1024)
/** A clear message repeats what it was given, but never a 10 MiB value. */
const MAX_MESSAGE = 2000

type Want = RegExp | string

/** A refusal's code (SPEC §7): a known NLC_* code, never the catch-all. */
function checkCode(what: string, code: unknown, msg: string): void {
  assert.ok(typeof code === 'string' && /^NLC_[A-Z_]+$/.test(code) && code !== 'NLC_INTERNAL', `${what}: a known NLC_* code, got ${inspect(code)} on: ${msg}`)
}

function checkMessage(what: string, e: unknown, want: Want[]): string {
  assert.ok(e instanceof Error, `${what}: expected an Error, got ${inspect(e)}`)
  const msg = e.message
  assert.ok(msg.length > 0, `${what}: empty message`)
  assert.ok(msg.length <= MAX_MESSAGE, `${what}: a ${msg.length}-character message`)
  for (const w of want) {
    if (typeof w === 'string') assert.ok(msg.includes(w), `${what}: ${JSON.stringify(w)} not in: ${msg}`)
    else assert.match(msg, w, what)
  }
  return msg
}

/** A synchronous export must throw a clear Error. */
function throws(what: string, call: () => unknown, ...want: Want[]): string {
  try {
    const r = call()
    assert.fail(`${what}: expected a throw, got ${inspect(r, { depth: 1 }).slice(0, 200)}`)
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e
    checkCode(what, (e as { code?: unknown } | null)?.code, String((e as Error)?.message))
    return checkMessage(what, e, want)
  }
}

/** An async export must reject (never throw synchronously) with a clear Error. */
async function rejects(what: string, call: () => Promise<unknown>, ...want: Want[]): Promise<string> {
  let p: Promise<unknown>
  try {
    p = call()
  } catch (e) {
    assert.fail(`${what}: threw synchronously instead of rejecting: ${inspect(e)}`)
  }
  assert.ok(p instanceof Promise, `${what}: did not return a promise`)
  try {
    const r = await p
    assert.fail(`${what}: expected a rejection, got ${inspect(r, { depth: 1 }).slice(0, 200)}`)
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e
    checkCode(what, (e as { code?: unknown } | null)?.code, String((e as Error)?.message))
    return checkMessage(what, e, want)
  }
}

/** A tool's execute must resolve (never reject) with an in-band refusal. */
async function refusedInBand(what: string, p: Promise<unknown>, ...want: Want[]): Promise<string> {
  const r = (await p) as { isError?: boolean; error?: unknown }
  assert.equal(r.isError, true, `${what}: expected { isError: true }, got ${inspect(r, { depth: 1 }).slice(0, 300)}`)
  assert.equal(typeof r.error, 'string')
  checkCode(what, (r as { code?: unknown }).code, String(r.error))
  return checkMessage(what, new Error(r.error as string), want)
}

/** A Proxy whose every trap throws. */
function trapsThrow(label = 'trap'): object {
  const boom = () => {
    throw new Error(`${label} exploded`)
  }
  return new Proxy(
    {},
    {
      get: boom,
      has: boom,
      ownKeys: boom,
      getOwnPropertyDescriptor: boom,
      getPrototypeOf: boom,
      set: boom,
      defineProperty: boom,
      deleteProperty: boom,
    },
  )
}

function revoked<T extends object>(target: T): T {
  const r = Proxy.revocable(target, {})
  r.revoke()
  return r.proxy
}

/** Values that are not objects, for object-typed parameters. */
const NOT_OBJECTS: [string, unknown, RegExp][] = [
  ['undefined', undefined, /undefined/],
  ['null', null, /null/],
  ['a number', 42, /the number 42/],
  ['NaN', NaN, /NaN/],
  ['a string', 'stdout', /the string "stdout"/],
  ['a symbol', Symbol('s'), /a symbol/],
  ['a boolean', true, /the boolean true/],
  ['a bigint', 10n, /a bigint/],
]

/** Values that are not strings, for string-typed parameters. */
const NOT_STRINGS: [string, unknown, RegExp][] = [
  ['a number', 7, /the number 7/],
  ['null', null, /null/],
  ['an object', { taskId: 'c1' }, /an object/],
  ['an array', ['c1'], /an array/],
  ['a symbol', Symbol('id'), /a symbol/],
  ['a function', () => 'c1', /a function/],
  ['a bigint', 1n, /a bigint/],
]

const BAD_HOSTS: [string, unknown][] = [
  ['undefined', undefined],
  ['null', null],
  ['a number', 1],
  ['a string', 'host'],
  ['a symbol', Symbol('host')],
  ['a boolean', false],
  ['a bigint', 3n],
]

/** A settled command of a fresh host, with some output on both streams. */
async function settledCommand(): Promise<{ host: object; root: string; taskId: string; st: nc.BackgroundCommandStatus }> {
  const root = tempRoot('nlc-bad-')
  const host = hostWith(root, [SH])
  const h = await nc.startBackgroundCommand(host, [SH, '-c', 'printf "hello world\\n"; printf oops >&2'], { cwd: '.' })
  const st = await settle(host, h.taskId)
  return { host, root, taskId: h.taskId, st }
}

describe('every export refuses a host that is not an object', () => {
  test('with a TypeError naming what a host is, synchronously for sync exports and as a rejection for async ones', async () => {
    const syncCalls: [string, (h: unknown) => unknown][] = [
      ['setBackgroundCommandPolicy', (h) => nc.setBackgroundCommandPolicy(h as object, { allowedExecutables: [], cwdRoot: '/' })],
      ['getBackgroundCommandPolicy', (h) => nc.getBackgroundCommandPolicy(h as object)],
      ['backgroundCommandCounts', (h) => nc.backgroundCommandCounts(h as object)],
      ['getBackgroundCommandStatus', (h) => nc.getBackgroundCommandStatus(h as object, 'c1')],
      ['listBackgroundCommands', (h) => nc.listBackgroundCommands(h as object)],
      ['readNewBackgroundCommandOutput', (h) => nc.readNewBackgroundCommandOutput(h as object, 'c1')],
      ['configureGitTools', (h) => nc.configureGitTools(h as object, { repoRoot: '/' })],
      ['createBackgroundCommandTools', (h) => nc.createBackgroundCommandTools(h as object)],
      ['createGitTools', (h) => nc.createGitTools(h as object)],
    ]
    const asyncCalls: [string, (h: unknown) => Promise<unknown>][] = [
      ['startBackgroundCommand', (h) => nc.startBackgroundCommand(h as object, [SH], { cwd: '.' })],
      ['startCommandWithPolicy', (h) => nc.startCommandWithPolicy(h as object, [SH], { cwd: '.' }, { allowedExecutables: [SH], cwdRoot: '/' })],
      ['awaitBackgroundCommand', (h) => nc.awaitBackgroundCommand(h as object, 'c1')],
      ['killBackgroundCommand', (h) => nc.killBackgroundCommand(h as object, 'c1')],
      ['killAllBackgroundCommands', (h) => nc.killAllBackgroundCommands(h as object)],
      ['readBackgroundCommandOutput', (h) => nc.readBackgroundCommandOutput(h as object, 'c1', { stream: 'stdout' })],
      ['runGitCommand', (h) => nc.runGitCommand(h as object, ['log'])],
    ]
    for (const [hostWhat, h] of BAD_HOSTS) {
      for (const [name, call] of syncCalls) {
        const msg = throws(`${name}(${hostWhat})`, () => call(h), /host must be an object/)
        assert.ok(msg.includes('the agent host instance'), msg)
      }
      for (const [name, call] of asyncCalls) {
        await rejects(`${name}(${hostWhat})`, () => call(h), /host must be an object/)
      }
    }
  })
})

describe('hostile hosts work like any other object and are never changed', () => {
  const hosts: [string, () => object][] = [
    ['a frozen object', () => Object.freeze({})],
    ['a sealed object with a frozen prototype', () => Object.seal(Object.create(Object.freeze({})))],
    ['a transparent Proxy', () => new Proxy({}, {})],
    ['a Proxy whose every trap throws', () => trapsThrow('host')],
    ['a revoked Proxy', () => revoked({})],
    ['a function', () => function host() {}],
    [
      'an object whose bankArtifact and getToolContext getters throw',
      () =>
        Object.freeze({
          get bankArtifact(): never {
            throw new Error('bankArtifact getter exploded')
          },
          get getToolContext(): never {
            throw new Error('getToolContext getter exploded')
          },
        }),
    ],
  ]
  for (const [what, make] of hosts) {
    test(`${what}: policy, start, status, await, pages, follow, list, counts, kill, kill-all, git and the tools all work`, async () => {
      const root = tempRoot('nlc-host-')
      const host = make()
      // Reflect.ownKeys on the throwing Proxy would throw: compare only hosts that can be inspected.
      const inspectable = what !== 'a Proxy whose every trap throws' && what !== 'a revoked Proxy'
      const keysBefore = inspectable ? ownKeys(host) : []
      nc.setBackgroundCommandPolicy(host, { allowedExecutables: [SH], cwdRoot: root })
      assert.deepEqual(nc.getBackgroundCommandPolicy(host), { allowedExecutables: [SH], cwdRoot: root })
      const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo out; echo err >&2'], { cwd: '.' })
      const st = await settle(host, h.taskId)
      assert.equal(st.state, 'exited')
      assert.equal(st.exitCode, 0)
      // No bankArtifact could be read, so the built-in bank keeps the streams.
      assert.ok(st.stdout && st.stdout.artifactId.length > 0, inspect(st.stdout))
      assert.equal(await nc.readArtifact(st.stdout.artifactId), 'out\n')
      assert.equal(nc.getBackgroundCommandStatus(host, h.taskId).state, 'exited')
      const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stderr' })
      assert.equal(page.content, 'err\n')
      assert.equal(nc.readNewBackgroundCommandOutput(host, h.taskId).content, 'out\n')
      assert.deepEqual(
        nc.listBackgroundCommands(host).map((e) => e.taskId),
        [h.taskId],
      )
      // getToolContext could not be read, so the host's default session counts it.
      assert.deepEqual(nc.backgroundCommandCounts(host), { running: 0, finished: 0 })
      const long = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: '.' })
      assert.equal(nc.backgroundCommandCounts(host).running, 1)
      const killed = await nc.killBackgroundCommand(host, long.taskId)
      assert.equal(killed.state, 'killed')
      const third = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: '.' })
      assert.equal(await nc.killAllBackgroundCommands(host), 1)
      assert.equal((await settle(host, third.taskId)).state, 'killed')
      const tools = nc.createBackgroundCommandTools(host)
      const run = (await tools.run_command_bg.execute({ argv: [SH, '-c', 'echo tool'] })) as nc.RunCommandToolResult
      assert.equal(typeof run.taskId, 'string', inspect(run))
      const status = (await tools.command_status.execute({ taskId: run.taskId, waitMs: 10_000 })) as nc.CommandStatusToolResult
      assert.equal(status.state, 'exited')
      assert.equal(nc.configureGitTools(host, { repoRoot: root }).repoRoot, root)
      const git = await nc.runGitCommand(host, ['--version'])
      assert.equal(git.ok, true, git.stderrPreview)
      assert.match(git.preview, /^git version /)
      assert.match(git.output.artifactId, /^nlc-/)
      const listed = (await nc.createGitTools(host).git_ls_files!.execute({})) as nc.GitToolResult
      assert.deepEqual(listed.command.slice(-1), ['ls-files'])
      if (inspectable) {
        assert.deepEqual(ownKeys(host), keysBefore, 'no property appeared on the host')
        if (what === 'a frozen object') assert.ok(Object.isFrozen(host))
      }
    })
  }
})

describe('setBackgroundCommandPolicy / startCommandWithPolicy: the policy', () => {
  const root = tempRoot('nlc-policy-')
  const cases: [string, unknown, Want[]][] = [
    ...NOT_OBJECTS.map(([what, v, re]): [string, unknown, Want[]] => [what, v, [/policy must be an object/, re]]),
    ['a function', () => ({}), [/policy must be an object \(got a function\)/]],
    ['an array', [SH], [/policy must be an object \(got an array\)/]],
    ['no allowedExecutables', { cwdRoot: root }, [/policy\.allowedExecutables must be an array of strings.*got undefined/]],
    ['allowedExecutables a string', { allowedExecutables: SH, cwdRoot: root }, [/allowedExecutables must be an array of strings.*the string "\/bin\/sh"/]],
    ['allowedExecutables with a hole', { allowedExecutables: [, SH], cwdRoot: root }, [/allowedExecutables\[0\] is undefined/]],
    ['allowedExecutables with a symbol', { allowedExecutables: [SH, Symbol('x')], cwdRoot: root }, [/allowedExecutables\[1\] is a symbol/]],
    ['allowedExecutables array-like', { allowedExecutables: { 0: SH, length: 1 }, cwdRoot: root }, [/allowedExecutables must be an array/]],
    ['allowedExecutables with NUL', { allowedExecutables: ['/bin/s\0h'], cwdRoot: root }, [/NUL/]],
    ['no cwdRoot', { allowedExecutables: [SH] }, [/policy\.cwdRoot is required/]],
    ['cwdRoot a number', { allowedExecutables: [SH], cwdRoot: 1 }, [/policy\.cwdRoot must be a string \(got the number 1\)/]],
    ['cwdRoot empty', { allowedExecutables: [SH], cwdRoot: '' }, [/cwdRoot must be a non-empty path/]],
    ['cwdRoot with NUL', { allowedExecutables: [SH], cwdRoot: `${root}\0` }, [/cwdRoot .*NUL/]],
    ['allowlist not a function', { allowedExecutables: [SH], cwdRoot: root, allowlist: true }, [/policy\.allowlist must be a function/]],
    ['defaultTimeoutMs a string', { allowedExecutables: [SH], cwdRoot: root, defaultTimeoutMs: '100' }, [/policy\.defaultTimeoutMs must be a number \(got the string "100"\)/]],
    ['killGraceMs a bigint', { allowedExecutables: [SH], cwdRoot: root, killGraceMs: 5n }, [/policy\.killGraceMs must be a number \(got a bigint\)/]],
    ['maxOutputBytes -Infinity', { allowedExecutables: [SH], cwdRoot: root, maxOutputBytes: -Infinity }, [/maxOutputBytes must be a positive finite number of bytes \(got -Infinity\)/]],
    ['a Proxy whose traps throw', trapsThrow('policy'), [/reading policy\.allowedExecutables failed/, /policy exploded/]],
    ['a revoked Proxy', revoked({ allowedExecutables: [SH], cwdRoot: root }), [/reading policy\.allowedExecutables failed/, /revoked/]],
    [
      'a getter that throws',
      {
        allowedExecutables: [SH],
        get cwdRoot(): string {
          throw new Error('no root today')
        },
      },
      [/reading policy\.cwdRoot failed/, /no root today/],
    ],
    [
      'allowedExecutables a Proxy array whose get trap throws',
      {
        allowedExecutables: new Proxy([SH], {
          get() {
            throw new Error('list trap')
          },
        }),
        cwdRoot: root,
      },
      [/allowedExecutables/],
    ],
  ]
  test('setBackgroundCommandPolicy throws naming the field and what it must be; the host stays without a policy', () => {
    for (const [what, policy, want] of cases) {
      const host = {}
      throws(`setBackgroundCommandPolicy(${what})`, () => nc.setBackgroundCommandPolicy(host, policy as nc.BackgroundCommandPolicy), ...want)
      assert.equal(nc.getBackgroundCommandPolicy(host), undefined, what)
    }
  })
  test('startCommandWithPolicy rejects the same way, before any process exists', async () => {
    for (const [what, policy, want] of cases) {
      const host = {}
      await rejects(`startCommandWithPolicy(${what})`, () => nc.startCommandWithPolicy(host, [SH, '-c', 'true'], { cwd: '.' }, policy as nc.BackgroundCommandPolicy), ...want)
      assert.deepEqual(nc.listBackgroundCommands(host), [], what)
    }
  })
  test('a policy whose getter answers differently on a second read: what is enforced is what getBackgroundCommandPolicy returns', async () => {
    const host = {}
    let reads = 0
    const policy = {
      cwdRoot: root,
      get allowedExecutables(): string[] {
        reads++
        return reads === 1 ? [SH] : ['/bin/echo']
      },
    }
    nc.setBackgroundCommandPolicy(host, policy)
    const stored = nc.getBackgroundCommandPolicy(host)!
    const allowed = stored.allowedExecutables[0]!
    const other = allowed === SH ? '/bin/echo' : SH
    const h = await nc.startBackgroundCommand(host, [allowed, 'ok'], { cwd: '.' })
    assert.equal((await settle(host, h.taskId)).state, 'exited')
    await rejects('the other executable', () => nc.startBackgroundCommand(host, [other, 'no'], { cwd: '.' }), `Executable "${other}" is not allowed`)
  })
  test('a policy that can be read field by field but not enumerated (its ownKeys trap throws) is stored whole: each field is read once by name, never half-stored', () => {
    const host = {}
    const policy = new Proxy(
      { allowedExecutables: [SH], cwdRoot: root },
      {
        ownKeys() {
          throw new Error('no keys for you')
        },
      },
    )
    nc.setBackgroundCommandPolicy(host, policy)
    assert.deepEqual(nc.getBackgroundCommandPolicy(host), { allowedExecutables: [SH], cwdRoot: root })
  })
})

describe('startBackgroundCommand: argv and options', () => {
  test('argv of the wrong type or shape is refused naming argv and an example', async () => {
    const root = tempRoot('nlc-argv-')
    const host = hostWith(root, [SH])
    const cases: [string, unknown, Want[]][] = [
      ...NOT_OBJECTS.map(([what, v, re]): [string, unknown, Want[]] => [what, v, [/argv must be an array of strings, e\.g\. \["\/usr\/bin\/git", "status"\]/, re]]),
      ['an object', { 0: SH }, [/argv must be an array of strings.*got an object/]],
      ['a function', () => [SH], [/argv must be an array of strings.*got a function/]],
      ['an array with a hole', [SH, , '-c'], [/argv\[1\] is undefined/]],
      ['a sparse array', new Array(3), [/argv\[0\] is undefined/]],
      ['an array holding null', [SH, null], [/argv\[1\] is null/]],
      ['an array holding a symbol', [SH, Symbol('a')], [/argv\[1\] is a symbol/]],
      ['an array holding an object', [SH, { toString: () => 'x' }], [/argv\[1\] is an object/]],
      ['an array holding a number', [SH, '-c', 1], [/argv\[2\] is the number 1/]],
      ['a Proxy of an array', new Proxy([SH, '-c', 'true'], {}), [/argv must be an array of strings/]],
      ['a revoked Proxy', revoked([SH]), [/argv must be an array of strings/]],
    ]
    for (const [what, argv, want] of cases) {
      await rejects(`argv ${what}`, () => nc.startBackgroundCommand(host, argv as string[], { cwd: '.' }), ...want)
    }
    assert.deepEqual(nc.listBackgroundCommands(host), [], 'nothing started')
  })

  test('options of the wrong type or shape are refused naming the field', async () => {
    const root = tempRoot('nlc-opts-')
    mkdirSync(join(root, 'sub'))
    const host = hostWith(root, [SH])
    const cases: [string, unknown, Want[]][] = [
      // undefined is no options at all: the command runs in cwdRoot (runner.test.ts)
      ...NOT_OBJECTS.filter(([what]) => what !== 'undefined').map(([what, v, re]): [string, unknown, Want[]] => [what, v, [/options must be an object like \{ cwd: /, re]]),
      ['an array', ['.'], [/options must be an object like.*got an array/]],
      ['a function', () => ({ cwd: '.' }), [/options must be an object like.*got a function/]],
      ['cwd a number', { cwd: 1 }, [/options\.cwd must be a string \(got the number 1\)/]],
      ['cwd a symbol', { cwd: Symbol('cwd') }, [/options\.cwd must be a string \(got a symbol\)/]],
      ['cwd with NUL', { cwd: 'sub\0/../..' }, [/cwd "sub\\0\/\.\.\/\.\." contains a NUL character/, root]],
      ['cwd of 10 MiB', { cwd: TEN_MIB }, [/cannot be used as a working directory/, /10485760 characters/]],
      ['timeoutMs a string', { cwd: '.', timeoutMs: '100' }, [/options\.timeoutMs must be a number \(got the string "100"\)/]],
      ['timeoutMs an object', { cwd: '.', timeoutMs: {} }, [/options\.timeoutMs must be a number \(got an object\)/]],
      ['maxOutputBytes a bigint', { cwd: '.', maxOutputBytes: 10n }, [/options\.maxOutputBytes must be a number \(got a bigint\)/]],
      ['env a string', { cwd: '.', env: 'PATH=/bin' }, [/options\.env must be an object/]],
      ['env an array', { cwd: '.', env: ['A=1'] }, [/options\.env must be an object \(got an array\)/]],
      ['env with a number value', { cwd: '.', env: { A: 1 } }, [/options\.env must map names to strings, but options\.env\["A"\] is the number 1/]],
      ['env with a name holding =', { cwd: '.', env: { 'A=B': 'x' } }, [/env key "A=B" is not a valid variable name/]],
      ['env with an empty name', { cwd: '.', env: { '': 'x' } }, [/env key "" is not a valid variable name/]],
      ['env with a NUL in a name', { cwd: '.', env: { 'A\0B': 'x' } }, [/options\.env key "A\\0B" contains a NUL character/]],
      ['env with a NUL in a value', { cwd: '.', env: { A: 'x\0y' } }, [/env\["A"\] contains a NUL character/]],
      ['env a Proxy whose traps throw', { cwd: '.', env: trapsThrow('env') }, [/options\.env must be a plain object mapping names to strings/, /env exploded/]],
      [
        'env with a throwing getter',
        {
          cwd: '.',
          env: {
            get A(): string {
              throw new Error('secret unavailable')
            },
          },
        },
        [/reading options\.env\.A failed/, /secret unavailable/],
      ],
      ['label a number', { cwd: '.', label: 5 }, [/options\.label must be a string \(got the number 5\)/]],
      ['sessionId an object', { cwd: '.', sessionId: {} }, [/options\.sessionId must be a string \(got an object\)/]],
      ['abortSignal a number', { cwd: '.', abortSignal: 1 }, [/options\.abortSignal must be an AbortSignal \(got the number 1\)/]],
      ['abortSignal a plain object', { cwd: '.', abortSignal: {} }, [/options\.abortSignal must be an AbortSignal \(got an object\)/]],
      ['a Proxy whose traps throw', trapsThrow('options'), [/options/, /options exploded/]],
      ['a revoked Proxy', revoked({ cwd: '.' }), [/reading options\.cwd failed/, /revoked/]],
      [
        'a cwd getter that throws',
        {
          get cwd(): string {
            throw new Error('cwd unknowable')
          },
        },
        [/reading options\.cwd failed/, /cwd unknowable/],
      ],
    ]
    for (const [what, options, want] of cases) {
      await rejects(`options ${what}`, () => nc.startBackgroundCommand(host, [SH, '-c', 'true'], options as nc.BackgroundCommandOptions), ...want)
    }
    assert.deepEqual(nc.listBackgroundCommands(host), [], 'nothing started')
  })

  test('a 100,000-entry argv runs; a 10 MiB argument or environment settles "could not be started" saying why', async () => {
    const root = tempRoot('nlc-big-')
    const host = hostWith(root, [SH])
    const many = [SH, '-c', 'echo $#', 'sh', ...Array<string>(100_000 - 4).fill('x')]
    const h = await nc.startBackgroundCommand(host, many, { cwd: '.' })
    assert.equal(h.argv.length, 100_000)
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.tailPreview, `[stdout tail]\n${100_000 - 4}\n`)
    assert.equal(st.label, `sh -c echo $# sh ${'x '.repeat(21)}x…`)

    for (const [what, argv, env] of [
      ['a 10 MiB argument', [SH, '-c', 'echo ${#1}', 'sh', TEN_MIB], undefined],
      ['a 10 MiB environment value', [SH, '-c', 'echo ${#BIG}'], { BIG: TEN_MIB }],
    ] as const) {
      const big = await nc.startBackgroundCommand(host, [...argv], { cwd: '.', ...(env ? { env } : {}) })
      const bs = await settle(host, big.taskId)
      assert.equal(bs.state, 'exited', what)
      assert.equal(bs.exitCode, undefined, what)
      checkMessage(what, new Error(bs.error), ['could not be started', 'Argument list too long', /through a file/])
      assert.ok(bs.stdout && bs.stderr, 'both (empty) streams are banked')
    }

    // A 10 MiB argv[0] is refused with a message of bounded size.
    const msg = await rejects('a 10 MiB argv[0]', () => nc.startBackgroundCommand(host, [TEN_MIB], { cwd: '.' }), /^Executable "x{200}…\(10485760 characters\)" is not allowed/, `Allowed: "${SH}"`)
    assert.ok(msg.length < 600, msg)
  })

  test('the policy hook: throws of any kind, wrong return types and a promise that never resolves are refusals that say what happened', async () => {
    const root = tempRoot('nlc-hook-')
    const revokedProxy = revoked({})
    const messageThrows = new Error('x')
    Object.defineProperty(messageThrows, 'message', {
      get() {
        throw new Error('message getter exploded')
      },
    })
    const cases: [string, () => unknown, Want[]][] = [
      [
        'throws a symbol',
        () => {
          throw Symbol('nope')
        },
        [/hook threw \(.*a symbol\)/],
      ],
      [
        'throws null',
        () => {
          throw null
        },
        [/hook threw \(.*null\)/],
      ],
      [
        'throws undefined',
        () => {
          throw undefined
        },
        [/hook threw \(.*undefined\)/],
      ],
      [
        'throws a revoked Proxy',
        () => {
          throw revokedProxy
        },
        [/hook threw \(.*an object\)/],
      ],
      [
        'throws an object whose toString throws',
        () => {
          throw {
            toString() {
              throw new Error('no string')
            },
          }
        },
        [/hook threw \(.*an object\)/],
      ],
      [
        'throws an Error whose message getter throws',
        () => {
          throw messageThrows
        },
        [/hook threw/],
      ],
      ['returns a promise that never resolves', () => new Promise(() => {}), [/returned a Promise instead of true or a refusal string/]],
      ['returns a Proxy whose traps throw', () => trapsThrow('verdict'), [/returned an object instead of true or a refusal string/]],
      ['returns a boxed true', () => new Boolean(true), [/returned an object instead of true/]],
      ['returns a symbol', () => Symbol('ok'), [/returned a symbol instead of true/]],
      ['returns a function', () => () => true, [/returned a function instead of true/]],
    ]
    for (const [what, hook, want] of cases) {
      const host = {}
      const t0 = Date.now()
      await rejects(
        `hook ${what}`,
        () =>
          nc.startCommandWithPolicy(
            host,
            [SH, '-c', 'echo never'],
            { cwd: '.' },
            {
              allowedExecutables: [SH],
              cwdRoot: root,
              allowlist: hook as (argv: string[], cwd: string) => true | string,
            },
          ),
        /the command was refused/,
        ...want,
      )
      assert.ok(Date.now() - t0 < 5000, `${what}: refused at once`)
      assert.deepEqual(nc.listBackgroundCommands(host), [], `${what}: nothing started`)
    }
    // A hook that is itself a Proxy of a function is called like one.
    const host = {}
    const proxied = new Proxy(() => true as const, {})
    const h = await nc.startCommandWithPolicy(host, [SH, '-c', 'echo allowed'], { cwd: '.' }, { allowedExecutables: [SH], cwdRoot: root, allowlist: proxied })
    assert.equal((await settle(host, h.taskId)).state, 'exited')
  })
})

describe('status, await, kill and kill-all', () => {
  test('taskId of the wrong type is refused by every export that takes one', async () => {
    const { host } = await settledCommand()
    for (const [what, id, re] of NOT_STRINGS) {
      const want = [/taskId must be a string/, re]
      throws(`getBackgroundCommandStatus(${what})`, () => nc.getBackgroundCommandStatus(host, id as string), ...want)
      throws(`readNewBackgroundCommandOutput(${what})`, () => nc.readNewBackgroundCommandOutput(host, id as string), ...want)
      await rejects(`awaitBackgroundCommand(${what})`, () => nc.awaitBackgroundCommand(host, id as string), ...want)
      await rejects(`killBackgroundCommand(${what})`, () => nc.killBackgroundCommand(host, id as string), ...want)
      await rejects(`readBackgroundCommandOutput(${what})`, () => nc.readBackgroundCommandOutput(host, id as string, { stream: 'stdout' }), ...want)
    }
  })

  test('strange task ids (empty, NUL, 10 MiB) are unknown, with a bounded message listing this host’s ids', async () => {
    const { host, taskId } = await settledCommand()
    for (const [what, id, shown] of [
      ['empty', '', '""'],
      ['with NUL', `${taskId}\0`, `"${taskId}\0"`],
      ['10 MiB', TEN_MIB, `"${'x'.repeat(200)}…(10485760 characters)"`],
    ] as const) {
      const want = [`No background command ${shown}`, `Its task ids: ${taskId}`]
      throws(`status(${what})`, () => nc.getBackgroundCommandStatus(host, id), ...want)
      await rejects(`await(${what})`, () => nc.awaitBackgroundCommand(host, id), ...want)
      await rejects(`kill(${what})`, () => nc.killBackgroundCommand(host, id), ...want)
    }
  })

  test('await: opts of the wrong shape or a negative/NaN wait is refused; Infinity, 1e300 and 0 are waits, not errors', async () => {
    const { host, taskId } = await settledCommand()
    for (const [what, opts, want] of [
      ['a number', 5, [/opts must be an object \(got the number 5\)/]],
      ['a string', '5', [/opts must be an object \(got the string "5"\)/]],
      ['an array', [5], [/opts must be an object \(got an array\)/]],
      ['a symbol', Symbol('o'), [/opts must be an object \(got a symbol\)/]],
      ['timeoutMs a string', { timeoutMs: '5' }, [/opts\.timeoutMs must be a number \(got the string "5"\)/]],
      ['timeoutMs -1', { timeoutMs: -1 }, [/opts\.timeoutMs must be a number of milliseconds ≥ 0.*got -1/]],
      ['timeoutMs -Infinity', { timeoutMs: -Infinity }, [/≥ 0.*got -Infinity/]],
      ['timeoutMs NaN', { timeoutMs: NaN }, [/≥ 0.*got NaN/]],
      ['a Proxy whose traps throw', trapsThrow('opts'), [/reading opts\.timeoutMs failed/, /opts exploded/]],
    ] as const) {
      await rejects(`await opts ${what}`, () => nc.awaitBackgroundCommand(host, taskId, opts as { timeoutMs?: number }), ...want)
    }
    // A long command: Infinity and 1e300 wait for it to settle; 0 answers at once.
    const root = tempRoot('nlc-await-')
    const h2 = hostWith(root, [SH])
    const live = await nc.startBackgroundCommand(h2, [SH, '-c', 'while [ ! -e go ]; do sleep 0.02; done; echo done'], { cwd: '.' })
    const now = await nc.awaitBackgroundCommand(h2, live.taskId, { timeoutMs: 0 })
    assert.ok(!SETTLED_STATES.includes(now.state), now.state)
    const forever = nc.awaitBackgroundCommand(h2, live.taskId, { timeoutMs: Infinity })
    const huge = nc.awaitBackgroundCommand(h2, live.taskId, { timeoutMs: 1e300 })
    const plain = nc.awaitBackgroundCommand(h2, live.taskId, undefined)
    writeFileSync(join(root, 'go'), '')
    for (const st of await Promise.all([forever, huge, plain])) {
      assert.equal(st.state, 'exited')
      assert.equal(st.tailPreview, '[stdout tail]\ndone\n')
    }
  })

  test('kill: a signal of the wrong type or an unknown name is refused with the valid names, and the command keeps running', async () => {
    const root = tempRoot('nlc-kill-')
    const host = hostWith(root, [SH])
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'sleep 30'], { cwd: '.' })
    for (const [what, sig, want] of [
      ['a number', 9, [/signal must be a string \(got the number 9\)/]],
      ['a symbol', Symbol('SIGTERM'), [/signal must be a string \(got a symbol\)/]],
      ['an object', { name: 'SIGTERM' }, [/signal must be a string \(got an object\)/]],
      ['null', null, []],
      ['lower case', 'sigterm', [/Unknown signal "sigterm": use one of .*SIGTERM/]],
      ['without SIG', 'TERM', [/Unknown signal "TERM"/]],
      ['a number string', '15', [/Unknown signal "15"/]],
      ['empty', '', [/Unknown signal ""/]],
      ['padded', ' SIGKILL', [/Unknown signal " SIGKILL"/]],
      ['with NUL', 'SIGKILL\0', [/Unknown signal "SIGKILL\\0"/]],
      ['a real-time signal', 'SIGRTMIN', [/Unknown signal "SIGRTMIN"/]],
      ['10 MiB', TEN_MIB, [/Unknown signal "x{200}…\(10485760 characters\)": use one of SIGHUP/]],
    ] as const) {
      if (sig === null) continue // null is "not given": the default SIGTERM (checked last)
      await rejects(`kill(${what})`, () => nc.killBackgroundCommand(host, h.taskId, sig as NodeJS.Signals), ...want)
      assert.ok(!SETTLED_STATES.includes(nc.getBackgroundCommandStatus(host, h.taskId).state), `${what}: still running`)
    }
    const st = await nc.killBackgroundCommand(host, h.taskId, null as unknown as NodeJS.Signals)
    assert.equal(st.state, 'killed')
    assert.match(st.error ?? '', /SIGTERM/)
  })

  test('killAllBackgroundCommands on a host that never started anything resolves 0', async () => {
    for (const host of [{}, Object.freeze({}), trapsThrow('killall'), revoked({})]) {
      assert.equal(await nc.killAllBackgroundCommands(host), 0)
    }
  })
})

describe('counters and lists', () => {
  test('a sessionId of the wrong type is refused; any string (empty, NUL, 10 MiB) is a session', () => {
    const host = {}
    for (const [what, s, re] of NOT_STRINGS) {
      throws(`backgroundCommandCounts(${what})`, () => nc.backgroundCommandCounts(host, s as string), /sessionId must be a string/, re)
      throws(`sessionCommandCounts(${what})`, () => nc.sessionCommandCounts(s as string), /sessionId must be a string/, re)
    }
    throws('sessionCommandCounts()', () => (nc.sessionCommandCounts as (s?: string) => unknown)(), /sessionId must be a string \(got undefined\)/)
    for (const s of ['', 'a\0b', TEN_MIB]) {
      assert.deepEqual(nc.backgroundCommandCounts(host, s), { running: 0, finished: 0 })
      assert.deepEqual(nc.sessionCommandCounts(s), { running: 0, finished: 0 })
    }
  })

  test('list: a filter of the wrong shape is refused naming the field', async () => {
    const { host, taskId } = await settledCommand()
    for (const [what, filter, want] of [
      ['a number', 1, [/filter must be an object \(got the number 1\)/]],
      ['a string', 'running', [/filter must be an object \(got the string "running"\)/]],
      ['an array', [], [/filter must be an object \(got an array\)/]],
      ['a symbol', Symbol('f'), [/filter must be an object \(got a symbol\)/]],
      ['running a number', { running: 1 }, [/filter\.running must be a boolean \(got the number 1\)/]],
      ['running a string', { running: 'true' }, [/filter\.running must be a boolean \(got the string "true"\)/]],
      ['sessionId a number', { sessionId: 5 }, [/filter\.sessionId must be a string \(got the number 5\)/]],
      ['a Proxy whose traps throw', trapsThrow('filter'), [/reading filter\.sessionId failed/, /filter exploded/]],
    ] as const) {
      throws(`list(${what})`, () => nc.listBackgroundCommands(host, filter as nc.BackgroundCommandListFilter), ...want)
    }
    assert.deepEqual(
      nc.listBackgroundCommands(host, null as unknown as undefined).map((e) => e.taskId),
      [taskId],
    )
    assert.deepEqual(nc.listBackgroundCommands(host, { running: true }), [])
  })
})

describe('pages', () => {
  test('readBackgroundCommandOutput: a page of the wrong shape is refused naming the field', async () => {
    const { host, taskId } = await settledCommand()
    const cases: [string, unknown, Want[]][] = [
      ['undefined', undefined, [/page must be an object like \{ stream: "stdout"/]],
      ['null', null, [/page must be an object like/]],
      ['a string', 'stdout', [/page must be an object \(got the string "stdout"\)/]],
      ['a number', 0, [/page must be an object \(got the number 0\)/]],
      ['a function', () => 'stdout', [/page must be an object \(got a function\)/]],
      ['no stream', {}, [/page\.stream is required: "stdout" or "stderr"/]],
      ['stream upper case', { stream: 'STDOUT' }, [/stream must be "stdout" or "stderr" \(got "STDOUT"\)/]],
      ['stream a number', { stream: 1 }, [/page\.stream must be a string \(got the number 1\)/]],
      ['offset a string', { stream: 'stdout', offset: '0' }, [/page\.offset must be a number \(got the string "0"\)/]],
      ['limit a bigint', { stream: 'stdout', limit: 10n }, [/page\.limit must be a number \(got a bigint\)/]],
      ['limit an object', { stream: 'stdout', limit: {} }, [/page\.limit must be a number \(got an object\)/]],
      ['a Proxy whose traps throw', trapsThrow('page'), [/reading page\.stream failed/, /page exploded/]],
    ]
    for (const [what, page, want] of cases) {
      await rejects(`page ${what}`, () => nc.readBackgroundCommandOutput(host, taskId, page as nc.BackgroundCommandPageRequest), ...want)
    }
  })

  test('odd numbers are clamped as the contract says: negative/NaN offsets read from 0, +Infinity and 1e300 read past the end, limits clamp to 1..200000', async () => {
    const { host, taskId } = await settledCommand()
    const all = 'hello world\n'
    const page = (offset?: number, limit?: number) => nc.readBackgroundCommandOutput(host, taskId, { stream: 'stdout', offset, limit })
    for (const o of [-1, -Infinity, NaN, -0, 0.5]) {
      const p = await page(o)
      assert.equal(p.offset, 0, `offset ${o}`)
      assert.equal(p.content, all, `offset ${o}`)
    }
    for (const o of [Infinity, 1e300, 2 ** 64, 2 ** 53]) {
      const p = await page(o)
      assert.equal(p.content, '', `offset ${o}`)
      assert.equal(p.hasMore, false, `offset ${o}`)
      assert.equal(p.totalSize, all.length)
    }
    for (const [l, want] of [
      [NaN, 50_000],
      [-5, 1],
      [0, 1],
      [0.9, 1],
      [-Infinity, 1],
      [Infinity, 200_000],
      [1e300, 200_000],
      [3.7, 3],
    ] as const) {
      const p = await page(0, l)
      assert.equal(p.limit, want, `limit ${l}`)
      assert.equal(p.content, all.slice(0, want), `limit ${l}`)
      assert.equal(p.hasMore, want < all.length, `limit ${l}`)
    }
  })

  test('readNewBackgroundCommandOutput: a stream that is not a string is refused', async () => {
    const { host, taskId } = await settledCommand()
    for (const [what, s, re] of NOT_STRINGS) {
      if (s === null) continue
      throws(`readNew(${what})`, () => nc.readNewBackgroundCommandOutput(host, taskId, s as 'stdout'), /stream must be "stdout" or "stderr"/, re)
    }
  })
})

describe('the built-in bank', () => {
  test('readArtifact and retrieveArtifact refuse ids that are not strings and name unknown ids in a bounded message', async () => {
    const { st } = await settledCommand()
    for (const [what, id, re] of NOT_STRINGS) {
      await rejects(`readArtifact(${what})`, () => nc.readArtifact(id as string), /artifactId must be a string/, re)
      await rejects(`retrieveArtifact(${what})`, () => nc.retrieveArtifact(id as string), /artifactId must be a string/, re)
    }
    await rejects('readArtifact()', () => (nc.readArtifact as (id?: string) => Promise<string>)(), /artifactId must be a string \(got undefined\)/)
    for (const id of ['', 'nlc-', `${st.stdout!.artifactId}\0`, `${st.stdout!.artifactId}x`, TEN_MIB]) {
      const shown = id === TEN_MIB ? `"${'x'.repeat(200)}…(10485760 characters)"` : JSON.stringify(id).replace('\\u0000', '\0')
      await rejects(`readArtifact(${shown.slice(0, 30)})`, () => nc.readArtifact(id), `No artifact ${shown} in the built-in bank`)
      await rejects(`retrieveArtifact(${shown.slice(0, 30)})`, () => nc.retrieveArtifact(id), `No artifact ${shown} in the built-in bank`)
    }
  })

  test('retrieveArtifact: options of the wrong shape are refused; odd numbers are clamped like pages', async () => {
    const { st } = await settledCommand()
    const id = st.stdout!.artifactId
    for (const [what, opts, want] of [
      ['a number', 5, [/options must be an object \(got the number 5\)/]],
      ['a string', 'all', [/options must be an object \(got the string "all"\)/]],
      ['offset a string', { offset: '1' }, [/options\.offset must be a number \(got the string "1"\)/]],
      ['limit a symbol', { limit: Symbol('l') }, [/options\.limit must be a number \(got a symbol\)/]],
      ['a Proxy whose traps throw', trapsThrow('window'), [/reading options\.offset failed/, /window exploded/]],
    ] as const) {
      await rejects(`retrieveArtifact ${what}`, () => nc.retrieveArtifact(id, opts as { offset?: number }), ...want)
    }
    assert.equal((await nc.retrieveArtifact(id, { offset: -3, limit: NaN })).content, 'hello world\n')
    assert.equal((await nc.retrieveArtifact(id, { offset: Infinity })).content, '')
    assert.equal((await nc.retrieveArtifact(id, { offset: 6, limit: -1 })).content, 'w')
    assert.equal((await nc.retrieveArtifact(id, null as unknown as undefined)).content, 'hello world\n')
  })
})

describe('host callbacks', () => {
  test('getToolContext that throws, returns the wrong type or never resolves: the command counts in the host’s default session', async () => {
    const root = tempRoot('nlc-ctx-')
    const contexts: [string, () => unknown][] = [
      [
        'throws',
        () => {
          throw new Error('no context')
        },
      ],
      [
        'throws a symbol',
        () => {
          throw Symbol('ctx')
        },
      ],
      ['returns 42', () => 42],
      ['returns a string', () => 'session-1'],
      ['returns a number sessionId', () => ({ sessionId: 7 })],
      ['returns an empty sessionId', () => ({ sessionId: '' })],
      ['returns a promise that never resolves', () => new Promise(() => {})],
      ['returns a Proxy whose traps throw', () => trapsThrow('ctx')],
      ['returns a revoked Proxy', () => revoked({ sessionId: 'x' })],
    ]
    for (const [what, getToolContext] of contexts) {
      const host = { getToolContext }
      nc.setBackgroundCommandPolicy(host, { allowedExecutables: [SH], cwdRoot: root })
      const h = await nc.startBackgroundCommand(host, [SH, '-c', 'while [ ! -e go ]; do sleep 0.02; done'], { cwd: '.' })
      assert.deepEqual(nc.backgroundCommandCounts(host), { running: 1, finished: 0 }, what)
      const tools = nc.createBackgroundCommandTools(host)
      const st = (await tools.command_status.execute({ taskId: h.taskId })) as nc.CommandStatusToolResult
      assert.equal(st.running, 1, `${what}: the tools count it in the default session too`)
      await nc.killBackgroundCommand(host, h.taskId, 'SIGKILL')
    }
  })

  test('bankArtifact that throws oddly or resolves to a hostile value: the outcome is kept with a fallback ref saying why', async () => {
    const root = tempRoot('nlc-bankbad-')
    const banks: [string, () => unknown, Want[]][] = [
      [
        'throws a symbol',
        () => {
          throw Symbol('bank')
        },
        [/bankArtifact threw or rejected \(a symbol\)/],
      ],
      ['rejects with null', () => Promise.reject(null), [/bankArtifact threw or rejected \(null\)/]],
      ['rejects with a revoked Proxy', () => Promise.reject(revoked({})), [/bankArtifact threw or rejected \(an object\)/]],
      [
        'resolves to a ref whose artifactId getter throws',
        async () => ({
          get artifactId(): string {
            throw new Error('id getter exploded')
          },
        }),
        [/not a BankedArtifactRef/, /reading ref\.artifactId failed/, /id getter exploded/],
      ],
      [
        'resolves to a ref with sizeBytes a string',
        async () => ({ artifactId: 'a', label: 'l', kind: 'command-output', sizeBytes: '5', preview: '', readBackHint: 'h' }),
        [/not a BankedArtifactRef/, /ref\.sizeBytes must be a number/],
      ],
      ['resolves to an array', async () => [], [/resolved to an array, which is not a BankedArtifactRef/]],
      ['resolves to a symbol', async () => Symbol('ref'), [/resolved to a symbol, which is not a BankedArtifactRef/]],
    ]
    for (const [what, bankArtifact, want] of banks) {
      const host = { bankArtifact }
      nc.setBackgroundCommandPolicy(host, { allowedExecutables: [SH], cwdRoot: root })
      const h = await nc.startBackgroundCommand(host, [SH, '-c', 'printf kept; exit 5'], { cwd: '.' })
      const st = await settle(host, h.taskId)
      assert.equal(st.state, 'exited', what)
      assert.equal(st.exitCode, 5, what)
      for (const ref of [st.stdout!, st.stderr!]) {
        assert.equal(ref.artifactId, '', what)
        checkMessage(what, new Error(ref.readBackHint), ['could NOT be created', ...want])
      }
      assert.equal(st.stdout!.sizeBytes, 4)
      assert.equal(st.stdout!.preview, 'kept')
      assert.equal((await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })).content, 'kept')
    }
  })

  test('a bankArtifact that is not a function, or whose getter throws, leaves the host on the built-in bank', async () => {
    const root = tempRoot('nlc-bankget-')
    for (const host of [
      { bankArtifact: 42 },
      { bankArtifact: 'bank' },
      {
        get bankArtifact(): never {
          throw new Error('getter exploded')
        },
      },
    ]) {
      nc.setBackgroundCommandPolicy(host, { allowedExecutables: [SH], cwdRoot: root })
      const h = await nc.startBackgroundCommand(host, [SH, '-c', 'printf built-in'], { cwd: '.' })
      const st = await settle(host, h.taskId)
      assert.match(st.stdout!.artifactId, /^nlc-/)
      assert.equal(await nc.readArtifact(st.stdout!.artifactId), 'built-in')
    }
  })

  test(`a bankArtifact that never resolves cannot wedge awaitBackgroundCommand: the bound (NEUROLINK_COMMANDS_BANK_TIMEOUT_MS) falls back`, async () => {
    // The bound is read once per process, so a child host runs this with a
    // 300 ms bound instead of the default 30 s.
    const root = tempRoot('nlc-bankhang-')
    const script = `
      const nc = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
      const host = { bankArtifact: () => new Promise(() => {}) }
      nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(root)} })
      ;(async () => {
        const t0 = Date.now()
        const h = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'printf banked; exit 3'], { cwd: '.' })
        const st = await nc.awaitBackgroundCommand(host, h.taskId)
        const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })
        console.log(JSON.stringify({ ms: Date.now() - t0, st, page: page.content }))
        process.exit(0)
      })()
    `
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['-e', script],
        // A child Node: under qemu-user it starts several times slower (WAIT_SCALE).
        { env: { ...process.env, NEUROLINK_COMMANDS_BANK_TIMEOUT_MS: '300' }, timeout: 20_000 * WAIT_SCALE },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      )
    })
    const r = JSON.parse(out) as { ms: number; st: nc.BackgroundCommandStatus; page: string }
    assert.ok(r.ms >= 300 && r.ms < 10_000 * WAIT_SCALE, `settled after ${r.ms} ms`)
    assert.equal(r.st.state, 'exited')
    assert.equal(r.st.exitCode, 3)
    assert.equal(r.page, 'banked')
    for (const ref of [r.st.stdout!, r.st.stderr!]) {
      assert.equal(ref.artifactId, '')
      assert.match(ref.readBackHint, /could NOT be created: bankArtifact had not settled within 300ms/)
    }
    assert.equal(r.st.stdout!.sizeBytes, 6)
    assert.equal(r.st.stdout!.preview, 'banked')
  })
})

describe('the git toolset', () => {
  test('configureGitTools: options of the wrong type or shape are refused naming the field', () => {
    const root = tempRoot('nlc-gitopts-')
    const host = {}
    const cases: [string, unknown, Want[]][] = [
      ...NOT_OBJECTS.map(([what, v, re]): [string, unknown, Want[]] => [what, v, [/options must be an object/, re]]),
      ['no repoRoot', {}, [/options\.repoRoot is required/]],
      ['repoRoot a number', { repoRoot: 1 }, [/options\.repoRoot must be a string \(got the number 1\)/]],
      ['repoRoot with NUL', { repoRoot: `${root}\0` }, [/repoRoot .* is not an existing directory/]],
      // (a repoRoot that does not exist yet is accepted: parity.test.ts)
      ['timeoutMs NaN', { repoRoot: root, timeoutMs: NaN }, [/timeoutMs must be a positive finite number of milliseconds \(got NaN\)/]],
      ['timeoutMs -1', { repoRoot: root, timeoutMs: -1 }, [/timeoutMs must be a positive finite number/]],
      ['timeoutMs Infinity', { repoRoot: root, timeoutMs: Infinity }, [/timeoutMs must be a positive finite number.*Infinity/]],
      ['maxOutputBytes 0', { repoRoot: root, maxOutputBytes: 0 }, [/maxOutputBytes must be a positive finite number of bytes/]],
      ['previewChars NaN', { repoRoot: root, previewChars: NaN }, [/previewChars must be a number from 1 to 4000/]],
      ['previewChars a string', { repoRoot: root, previewChars: '10' }, [/options\.previewChars must be a number/]],
      ['gitExecutable empty', { repoRoot: root, gitExecutable: '' }, [/gitExecutable must name the git executable/]],
      ['gitExecutable a shell line', { repoRoot: root, gitExecutable: 'git log' }, [/NO shell/]],
      ['gitExecutable with NUL', { repoRoot: root, gitExecutable: 'git\0' }, [/NUL/]],
      ['a Proxy whose traps throw', trapsThrow('gitopts'), [/reading options\.repoRoot failed/, /gitopts exploded/]],
    ]
    for (const [what, options, want] of cases) {
      throws(`configureGitTools(${what})`, () => nc.configureGitTools(host, options as nc.GitToolsetOptions), ...want)
    }
    // Clamped, not refused: previewChars outside 1..4000.
    assert.equal(nc.configureGitTools(host, { repoRoot: root, previewChars: -5 }).previewChars, 1)
    assert.equal(nc.configureGitTools(host, { repoRoot: root, previewChars: Infinity }).previewChars, 4000)
  })

  test('runGitCommand: args and sessionId of the wrong type are refused; without configuration it names registerGitTools', async () => {
    const root = tempRoot('nlc-gitargs-')
    const host = {}
    await rejects('unconfigured', () => nc.runGitCommand(host, ['log']), /registerGitTools/)
    nc.configureGitTools(host, { repoRoot: root })
    for (const [what, args, want] of [
      ['undefined', undefined, [/args must be an array of strings, e\.g\. \["log", "--oneline"\] \(got undefined\)/]],
      ['a string', 'log', [/args must be an array of strings.*got the string "log"/]],
      ['a hole', ['log', , '-1'], [/args\[1\] is undefined/]],
      ['a number', ['log', 5], [/args\[1\] is the number 5/]],
      ['a NUL', ['log\0'], [/args\[0\] contains a NUL character/]],
      ['a symbol', [Symbol('log')], [/args\[0\] is a symbol/]],
    ] as const) {
      await rejects(`runGitCommand(${what})`, () => nc.runGitCommand(host, args as unknown as string[]), ...want)
    }
    for (const [what, s, re] of NOT_STRINGS) {
      if (s === null) continue
      await rejects(`runGitCommand sessionId ${what}`, () => nc.runGitCommand(host, ['--version'], s as string), /sessionId must be a string/, re)
    }
  })

  test('the git tools answer hostile params in-band: cycles, deep nesting, symbols, functions, Proxies, getters', async () => {
    const root = tempRoot('nlc-gittools-')
    const host = {}
    nc.configureGitTools(host, { repoRoot: root })
    const tools = nc.createGitTools(host)
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 100_000; i++) deep = { d: deep }
    const cases: [string, unknown, Want[]][] = [
      ['a cyclic ref', { ref: cyclic }, [/^git_log \{.*?\}: ref must be a string, not an object$/]],
      ['100,000 levels of nesting in path', { path: deep }, [/^git_log \{.*?\}: path must be a string, not an object$/]],
      ['an array ref', { ref: ['HEAD'] }, [/^git_log \{.*?\}: ref must be a string, not an array$/]],
      ['a symbol ref', { ref: Symbol('HEAD') }, [/^git_log \{.*?\}: ref must be a string, not a symbol$/]],
      ['a function ref', { ref: () => 'HEAD' }, [/^git_log \{.*?\}: ref must be a string, not a function$/]],
      ['a bigint maxCount', { maxCount: 5n }, [/^git_log \{.*?\}: maxCount must be a number, not a bigint$/]],
      ['a Proxy whose traps throw', trapsThrow('git params'), [/git params exploded/]],
      [
        'a getter that throws',
        {
          get ref(): string {
            throw new Error('ref getter exploded')
          },
        },
        [/ref getter exploded/],
      ],
      ['a 10 MiB ref', { ref: TEN_MIB }, [/not a valid git revision/, /10485760 characters/]],
      ['maxCount NaN', { maxCount: NaN }, [/^git_log \{.*?\}: maxCount must be a number, not NaN$/]],
      ['maxCount Infinity', { maxCount: Infinity }, [/^git_log \{.*?\}: maxCount must be a number, not Infinity$/]],
      // (a negative or huge finite maxCount is clamped, not refused: parity.test.ts)
      ['format an object', { format: {} }, [/^git_log \{.*?\}: format must be one of "oneline", "full", "stat", "name-only", not an object$/]],
    ]
    for (const [what, params, want] of cases) {
      await refusedInBand(`git_log ${what}`, tools.git_log!.execute(params as Record<string, unknown>), ...want)
    }
    await refusedInBand('git_diff unified -Infinity', tools.git_diff!.execute({ unified: -Infinity }), /^git_diff \{.*?\}: unified must be a number, not -Infinity$/)
    await refusedInBand('git_blame lineStart NaN', tools.git_blame!.execute({ path: 'a', lineStart: NaN }), /^git_blame \{.*?\}: lineStart must be a number, not NaN$/)
    await refusedInBand('git_show nameOnly a string', tools.git_show!.execute({ ref: 'HEAD', nameOnly: 'yes' }), /nameOnly must be true or false/)
    // Keys a tool does not know are refused, whatever they hold (a cycle, NaN, a symbol), naming the known ones.
    await refusedInBand('git_ls_files unknown keys', tools.git_ls_files!.execute({ extra: cyclic, n: NaN, s: Symbol('s') }), /: unknown parameters "extra", "n", "s": this tool takes only path$/)
    void inspect
    for (const params of [null, undefined, 42, 'HEAD', [], Symbol('p'), revoked({})]) {
      await refusedInBand(`git_show(${String(typeof params)})`, tools.git_show!.execute(params as Record<string, unknown>), /^git_show \{.*?\}: params must be a JSON object of this shape/)
    }
  })
})

describe('the command tools', () => {
  test('hostile params and execution contexts never reject: refusals in-band, contexts that cannot be read count as none', async () => {
    const root = tempRoot('nlc-tools-')
    const host = hostWith(root, [SH])
    const tools = nc.createBackgroundCommandTools(host)
    for (const [name, params, want] of [
      ['run_command_bg', trapsThrow('params'), [/params exploded/]],
      ['run_command_bg', revoked({ argv: [SH] }), [/^run_command_bg \{.*?\}: params must be a JSON object of this shape/]],
      ['run_command_bg', { argv: [SH, , 'x'] }, [/argv\[1\] is undefined/]],
      ['run_command_bg', { argv: [SH, '-c', 'true'], cwd: 'a\0b' }, [/contains a NUL character/]],
      ['run_command_bg', { argv: [TEN_MIB] }, [/is not allowed/, /10485760 characters/]],
      ['run_command_bg', { argv: [SH, '-c', 'true'], timeoutMs: Infinity }, [/timeoutMs must be a positive number of milliseconds/]],
      [
        'command_status',
        {
          get taskId(): string {
            throw new Error('id getter exploded')
          },
        },
        [/id getter exploded/],
      ],
      ['command_status', { taskId: 'c1', waitMs: NaN }, [/waitMs must be a number of milliseconds/]],
      ['command_output', { taskId: 'c1', offset: Symbol('o') }, [/offset must be/]],
      ['command_kill', { taskId: Symbol('t') }, [/taskId must be a string \(got a symbol\)/]],
    ] as const) {
      await refusedInBand(`${name}`, tools[name].execute(params as Record<string, unknown>), ...want)
    }
    for (const ctx of [
      42,
      'session',
      null,
      trapsThrow('ctx'),
      revoked({ sessionId: 's' }),
      {
        get sessionId(): string {
          throw new Error('x')
        },
      },
      { sessionId: 5 },
    ]) {
      const run = (await tools.run_command_bg.execute({ argv: [SH, '-c', 'echo ctx'] }, ctx as nc.ToolExecutionContext)) as nc.RunCommandToolResult
      assert.equal(typeof run.taskId, 'string', `context ${inspect(ctx)}: ${inspect(run)}`)
      assert.ok(run.running + run.finished >= 1, 'counted in the host’s session')
      await settle(host, run.taskId)
    }
  })

  test('a 100,000-entry argv through run_command_bg runs, and a wait of Infinity through command_status is refused in-band', async () => {
    const root = tempRoot('nlc-toolbig-')
    const host = hostWith(root, [SH])
    const tools = nc.createBackgroundCommandTools(host)
    const run = (await tools.run_command_bg.execute({ argv: [SH, '-c', 'echo $#', 'sh', ...Array<string>(99_996).fill('y')] })) as nc.RunCommandToolResult
    assert.equal(typeof run.taskId, 'string', inspect(run).slice(0, 300))
    const st = await waitFor(
      async () => {
        const s = (await tools.command_status.execute({ taskId: run.taskId, waitMs: 1000 })) as nc.CommandStatusToolResult
        return SETTLED_STATES.includes(s.state) && s
      },
      15_000,
      'the big argv command',
    )
    assert.equal(st.tailPreview, '[stdout tail]\n99996\n')
    const msg = await refusedInBand('waitMs Infinity', tools.command_status.execute({ taskId: run.taskId, waitMs: Infinity }), /waitMs must be a number of milliseconds ≥ 0/)
    assert.match(msg, /Infinity/, 'the refusal shows the value given')
  })
})
