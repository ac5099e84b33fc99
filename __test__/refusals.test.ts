// Every refusal of SPEC §2 "Starting", in the contract's order, with the
// phrases that name the fix; and what must NOT be refused (a budget above 2^31 ms).
import assert from 'node:assert/strict'
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'

import { hostWith, nc, ownKeys, settle, tempRoot } from './helpers.ts'

const SH = '/bin/sh'
const ECHO = '/bin/echo'

// A parent holding the root, a sibling sharing its name as a prefix, and an outside dir.
const parent = tempRoot('nlc-refusals-')
const root = join(parent, 'root')
const evil = join(parent, 'root-evil')
const outside = join(parent, 'outside')
for (const d of [root, join(root, 'sub', 'deeper'), evil, outside]) mkdirSync(d, { recursive: true })
symlinkSync(outside, join(root, 'escape'))
symlinkSync(join(root, 'sub'), join(root, 'inner-link'))
symlinkSync(root, join(parent, 'root-link'))
writeFileSync(join(root, 'a-file'), 'not a directory')

const hosts: object[] = []
function policyHost(extra: Partial<nc.BackgroundCommandPolicy> = {}, allowed = [SH, ECHO]): object {
  const h = hostWith(root, allowed, extra)
  hosts.push(h)
  return h
}

after(async () => {
  for (const h of hosts) await nc.killAllBackgroundCommands(h)
})

/** Assert the promise rejects with an Error whose message contains every phrase; returns the message. */
async function refused(p: Promise<unknown>, ...phrases: string[]): Promise<string> {
  let message = ''
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof Error, `an Error, got ${String(e)}`)
    const code = (e as Error & { code?: unknown }).code
    assert.ok(typeof code === 'string' && /^NLC_[A-Z_]+$/.test(code) && code !== 'NLC_INTERNAL', `a known NLC_* code, got ${String(code)} on: ${e.message}`)
    message = e.message
    for (const ph of phrases) assert.ok(e.message.includes(ph), `expected ${JSON.stringify(ph)} in: ${e.message}`)
    return true
  })
  return message
}

/** No refusal may leave a command behind. */
function assertNoCommands(h: object): void {
  assert.deepEqual(nc.listBackgroundCommands(h), [])
  assert.deepEqual(nc.backgroundCommandCounts(h), { running: 0, finished: 0 })
}

describe('1. a policy exists', () => {
  test('without a policy the start is refused naming setBackgroundCommandPolicy, before anything else is checked', async () => {
    const h = {}
    assert.equal(nc.getBackgroundCommandPolicy(h), undefined)
    await refused(nc.startBackgroundCommand(h, [ECHO, 'hi'], { cwd: root }), 'setBackgroundCommandPolicy')
    // Even a shell string and a bad cwd are reported as the missing policy first.
    await refused(nc.startBackgroundCommand(h, ['rm -rf /'], { cwd: '/nonexistent' }), 'setBackgroundCommandPolicy')
    assertNoCommands(h)
    assert.deepEqual(ownKeys(h), [])
  })

  test('a policy set on one host does not apply to another; startCommandWithPolicy brings its own', async () => {
    const a = policyHost()
    const b = {}
    await refused(nc.startBackgroundCommand(b, [ECHO, 'hi'], { cwd: root }), 'setBackgroundCommandPolicy')
    const hd = await nc.startCommandWithPolicy(b, [ECHO, 'own policy'], { cwd: '.' }, { allowedExecutables: [ECHO], cwdRoot: root })
    assert.equal((await settle(b, hd.taskId)).tailPreview, '[stdout tail]\nown policy\n')
    assert.equal(nc.getBackgroundCommandPolicy(b), undefined, 'startCommandWithPolicy does not store the policy')
    assert.deepEqual(nc.getBackgroundCommandPolicy(a), { allowedExecutables: [SH, ECHO], cwdRoot: root })
  })
})

describe('2. argv', () => {
  test('an empty argv, a NUL in an entry or a non-string entry is refused', async () => {
    const h = policyHost()
    await refused(nc.startBackgroundCommand(h, [], { cwd: '.' }), 'argv', 'non-empty')
    await refused(nc.startBackgroundCommand(h, [ECHO, 'a\0b'], { cwd: '.' }), 'argv[1]', 'NUL')
    await refused(nc.startBackgroundCommand(h, [ECHO, 42 as unknown as string], { cwd: '.' }), 'argv')
    await refused(nc.startBackgroundCommand(h, 'echo hi' as unknown as string[], { cwd: '.' }), 'argv')
    assertNoCommands(h)
  })
})

describe('3. no shell', () => {
  test('argv[0] with whitespace or a shell character is refused with "NO shell" and how to pass argv', async () => {
    const h = policyHost()
    for (const exe of ['echo hi', 'ls;rm', 'a&b', 'a|b', 'a<b', 'a>b', '$HOME', '`id`', 'a\nb', 'a\rb', 'a\tb']) {
      const msg = await refused(nc.startBackgroundCommand(h, [exe], { cwd: '.' }), 'NO shell', 'argv')
      assert.ok(!msg.includes('is not allowed'), 'the shell check comes before the allowlist')
    }
    // Checked before the allowlist even when the shell line is allowlisted verbatim.
    const lax = policyHost({}, ['/bin/echo hi'])
    await refused(nc.startBackgroundCommand(lax, ['/bin/echo hi'], { cwd: '.' }), 'NO shell')
    assertNoCommands(h)
  })
})

describe('4. the allowlist of executables', () => {
  test('an executable not allowlisted is refused naming it and listing what is allowed', async () => {
    const h = policyHost()
    await refused(nc.startBackgroundCommand(h, ['/usr/bin/curl', 'http://example.invalid'], { cwd: '.' }), 'Executable "/usr/bin/curl" is not allowed', `"${SH}"`, `"${ECHO}"`)
    assertNoCommands(h)
  })

  test('a basename never stands in for the allowlisted absolute path, nor the reverse', async () => {
    const abs = policyHost()
    await refused(nc.startBackgroundCommand(abs, ['echo', 'hi'], { cwd: '.' }), 'Executable "echo" is not allowed', `"${ECHO}"`)
    await refused(nc.startBackgroundCommand(abs, ['sh', '-c', 'true'], { cwd: '.' }), 'Executable "sh" is not allowed')
    await refused(nc.startBackgroundCommand(abs, ['/bin/../bin/echo', 'hi'], { cwd: '.' }), 'Executable "/bin/../bin/echo" is not allowed')
    const bare = policyHost({}, ['echo'])
    await refused(nc.startBackgroundCommand(bare, [ECHO, 'hi'], { cwd: '.' }), `Executable "${ECHO}" is not allowed`, '"echo"')
    assertNoCommands(abs)
    assertNoCommands(bare)
  })

  test('an empty allowlist refuses everything', async () => {
    const none = policyHost({}, [])
    await refused(nc.startBackgroundCommand(none, [ECHO, 'hi'], { cwd: '.' }), `Executable "${ECHO}" is not allowed`)
    assertNoCommands(none)
  })

  test('the allowlist is checked before the cwd', async () => {
    const h = policyHost()
    await refused(nc.startBackgroundCommand(h, ['/usr/bin/id'], { cwd: outside }), 'Executable "/usr/bin/id" is not allowed')
  })
})

describe('5. the cwd sandbox', () => {
  const realRoot = realpathSync(root)

  test('a cwd outside the root is refused with the real root and the resolved path', async () => {
    const h = policyHost()
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: outside }), 'outside the permitted root', realRoot, outside)
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: '..' }), 'outside the permitted root', realRoot, `"${parent}"`)
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: 'sub/../..' }), 'outside the permitted root', realRoot, `"${parent}"`)
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: '/' }), 'outside the permitted root', realRoot, '"/"')
    assertNoCommands(h)
  })

  test('a symlink inside the root that leads out is refused (symlinks are followed first)', async () => {
    const h = policyHost()
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: 'escape' }), 'outside the permitted root', realRoot, `"${outside}"`)
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: join(root, 'escape') }), 'outside the permitted root', `"${outside}"`)
    assertNoCommands(h)
  })

  test('a sibling sharing the root as a prefix (/root-evil) is outside /root', async () => {
    const h = policyHost()
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: evil }), 'outside the permitted root', `"${realRoot}"`, `"${evil}"`)
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: '../root-evil' }), 'outside the permitted root', `"${evil}"`)
    assertNoCommands(h)
  })

  test('missing directories, files and a missing root are refused; the root itself, subdirectories and inner links are allowed', async () => {
    const h = policyHost()
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: 'no-such-dir' }), 'no-such-dir', realRoot)
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: 'a-file' }), 'a-file')
    const gone = {}
    nc.setBackgroundCommandPolicy(gone, { allowedExecutables: [ECHO], cwdRoot: join(parent, 'never-created') })
    await refused(nc.startBackgroundCommand(gone, [ECHO], { cwd: '.' }), 'cwdRoot', 'never-created')
    assertNoCommands(h)

    const seen: string[] = []
    const hooked = policyHost({
      allowlist: (_argv, cwd) => {
        seen.push(cwd)
        return true
      },
    })
    for (const cwd of ['.', root, 'sub/deeper', 'inner-link']) {
      const hd = await nc.startBackgroundCommand(hooked, [ECHO, 'in'], { cwd })
      assert.equal((await settle(hooked, hd.taskId)).exitCode, 0)
    }
    // The hook sees the real directory the command runs in.
    assert.deepEqual(seen, [realRoot, realRoot, join(realRoot, 'sub', 'deeper'), join(realRoot, 'sub')])
    const entries = nc.listBackgroundCommands(hooked)
    assert.deepEqual(
      entries.map((e) => e.cwd),
      seen,
    )
  })

  test('a root named through a symlink is compared by its real path', async () => {
    const viaLink = {}
    hosts.push(viaLink)
    nc.setBackgroundCommandPolicy(viaLink, { allowedExecutables: [ECHO], cwdRoot: join(parent, 'root-link') })
    const hd = await nc.startBackgroundCommand(viaLink, [ECHO, 'ok'], { cwd: join(root, 'sub') })
    assert.equal((await settle(viaLink, hd.taskId)).exitCode, 0)
    await refused(nc.startBackgroundCommand(viaLink, [ECHO], { cwd: evil }), 'outside the permitted root', `"${realRoot}"`)
  })
})

describe('6. the policy hook', () => {
  test('a string from the hook is the refusal, verbatim; it is called once with argv and the real cwd; the next command still runs', async () => {
    const calls: [string[], string][] = []
    const h = policyHost({
      allowlist: (argv, cwd) => {
        calls.push([argv, cwd])
        return argv.includes('--force') ? 'Force pushes need a human: ask the user first.' : true
      },
    })
    const p = nc.startBackgroundCommand(h, [ECHO, 'push', '--force'], { cwd: 'sub' })
    assert.equal(calls.length, 1, 'the hook ran on the calling thread, before the promise settled')
    await assert.rejects(p, (e: unknown) => {
      assert.ok(e instanceof Error)
      assert.equal(e.message, 'Force pushes need a human: ask the user first.')
      return true
    })
    assert.deepEqual(calls[0], [[ECHO, 'push', '--force'], join(realpathSync(root), 'sub')])
    assertNoCommands(h)

    const next = await nc.startBackgroundCommand(h, [ECHO, 'push'], { cwd: 'sub' })
    const st = await settle(h, next.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.tailPreview, '[stdout tail]\npush\n')
    assert.equal(calls.length, 2)
  })

  test('a hook returning false, undefined, a number or a promise, or throwing, refuses saying what it returned or threw', async () => {
    const cases: [string, () => unknown, string[]][] = [
      ['false', () => false, ['returned', 'false']],
      ['undefined', () => undefined, ['returned', 'undefined']],
      ['1', () => 1, ['returned', 'number 1']],
      ['a promise', () => Promise.resolve(true), ['returned', 'Promise']],
      [
        'a throw',
        () => {
          throw new Error('hook exploded: no disk')
        },
        ['threw', 'hook exploded: no disk'],
      ],
    ]
    for (const [what, hook, phrases] of cases) {
      const h = policyHost({ allowlist: hook as (argv: string[], cwd: string) => true | string })
      const msg = await refused(nc.startBackgroundCommand(h, [ECHO, 'x'], { cwd: '.' }), ...phrases)
      assert.ok(msg.length > 0, what)
      assertNoCommands(h)
    }
  })

  test('the hook runs after the sandbox (a bad cwd never reaches it)', async () => {
    let called = 0
    const h = policyHost({
      allowlist: () => {
        called++
        return true
      },
    })
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: outside }), 'outside the permitted root')
    await refused(nc.startBackgroundCommand(h, ['/usr/bin/id'], { cwd: '.' }), 'is not allowed')
    assert.equal(called, 0)
  })
})

describe('7. numbers', () => {
  test('timeoutMs and maxOutputBytes of 0, -1, NaN or Infinity are refused (after the hook)', async () => {
    let called = 0
    const h = policyHost({
      allowlist: () => {
        called++
        return true
      },
    })
    for (const bad of [0, -1, NaN, Infinity, -Infinity]) {
      await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: '.', timeoutMs: bad }), 'timeoutMs', 'positive finite')
      await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: '.', maxOutputBytes: bad }), 'maxOutputBytes', 'positive finite')
    }
    assert.equal(called, 10, 'the numbers are checked after the hook')
    await refused(nc.startBackgroundCommand(h, [ECHO], { cwd: '.', timeoutMs: '100' as unknown as number }), 'timeoutMs')
    assertNoCommands(h)
  })

  test('policy numbers (killGraceMs, defaultTimeoutMs, maxOutputBytes) of 0, -1, NaN or Infinity are refused', async () => {
    for (const bad of [0, -1, NaN, Infinity]) {
      for (const field of ['killGraceMs', 'defaultTimeoutMs', 'maxOutputBytes'] as const) {
        const policy: nc.BackgroundCommandPolicy = { allowedExecutables: [ECHO], cwdRoot: root, [field]: bad }
        const h = {}
        assert.throws(
          () => nc.setBackgroundCommandPolicy(h, policy),
          (e: unknown) => {
            assert.ok(e instanceof Error && e.message.includes(field) && e.message.includes('positive finite'), String(e))
            return true
          },
        )
        assert.equal(nc.getBackgroundCommandPolicy(h), undefined, 'a refused policy is not stored')
        await refused(nc.startCommandWithPolicy(h, [ECHO], { cwd: '.' }, policy), field, 'positive finite')
        assertNoCommands(h)
      }
    }
  })

  test('a timeout above 2^31 ms is honoured, not wrapped into an instant kill', async () => {
    const h = policyHost({ defaultTimeoutMs: 2 ** 31 + 5 })
    const huge = await nc.startBackgroundCommand(h, [SH, '-c', 'sleep 0.4; echo survived'], { cwd: '.', timeoutMs: 2 ** 31 + 1000 })
    const byDefault = await nc.startBackgroundCommand(h, [SH, '-c', 'sleep 0.4; echo survived'], { cwd: '.' })
    const enormous = await nc.startBackgroundCommand(h, [SH, '-c', 'sleep 0.4; echo survived'], { cwd: '.', timeoutMs: 1e15 })
    for (const hd of [huge, byDefault, enormous]) {
      const st = await settle(h, hd.taskId)
      assert.equal(st.state, 'exited', st.error)
      assert.equal(st.exitCode, 0)
      assert.equal(st.tailPreview, '[stdout tail]\nsurvived\n')
      assert.ok(st.durationMs >= 390, `durationMs ${st.durationMs}`)
    }
  })
})
