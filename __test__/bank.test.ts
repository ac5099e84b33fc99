// Banking: through the host's bankArtifact (with the fallback ref when it
// fails), the built-in bank for hosts without one, and hosts kept apart.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'

import { hostWith, logPath, nc, NODE, ownKeys, settle, tempRoot, waitFor } from './helpers.ts'

const SH = '/bin/sh'
const root = tempRoot('nlc-bank-')
const allHosts: object[] = []

after(async () => {
  for (const h of allHosts) await nc.killAllBackgroundCommands(h)
})

type BankCall = { content: string; options: nc.BankArtifactOptions }

/** A host whose bankArtifact answers with `answer` and records every call. */
function bankingHost(answer: (content: string, options: nc.BankArtifactOptions, n: number) => unknown, extra: Record<string, unknown> = {}): { host: object; calls: BankCall[] } {
  const calls: BankCall[] = []
  const host = {
    ...extra,
    bankArtifact(content: string, options: nc.BankArtifactOptions) {
      calls.push({ content, options })
      return answer(content, options, calls.length)
    },
  }
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: [SH, NODE], cwdRoot: root })
  allHosts.push(host)
  return { host, calls }
}

function refFor(content: string, options: nc.BankArtifactOptions, n: number): nc.BankedArtifactRef {
  return {
    artifactId: `host-art-${n}`,
    label: options.label,
    kind: 'command-output',
    sizeBytes: Buffer.byteLength(content),
    preview: content.slice(0, options.previewChars),
    readBackHint: `retrieve_context({ artifactId: "host-art-${n}" })`,
  }
}

// Output with multi-byte and invalid bytes, so "decoded as UTF-8" is checked exactly.
const OUT_SCRIPT = "process.stdout.write(Buffer.concat([Buffer.from('line one €\\n' + 'x'.repeat(700)), Buffer.from([0xff, 0xe2, 0x82])])); process.stderr.write('warn ✓\\n')"

describe('a host with bankArtifact', () => {
  test('is called once per stream with the whole log decoded and the contract’s options; its refs become stdout and stderr', async () => {
    const session = `bank-${randomUUID()}`
    const { host, calls } = bankingHost(async (c, o, n) => refFor(c, o, n))
    const h = await nc.startBackgroundCommand(host, [NODE, '-e', OUT_SCRIPT], { cwd: '.', label: 'emit', sessionId: session })
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 0)
    assert.equal(calls.length, 2)

    const byLabel = new Map(calls.map((c) => [c.options.label, c]))
    const out = byLabel.get('emit [stdout]')!
    const err = byLabel.get('emit [stderr]')!
    assert.ok(out && err, JSON.stringify(calls.map((c) => c.options)))
    assert.deepEqual(out.options, { kind: 'command-output', label: 'emit [stdout]', sessionId: session, previewChars: 600 })
    assert.deepEqual(err.options, { kind: 'command-output', label: 'emit [stderr]', sessionId: session, previewChars: 600 })
    assert.equal(out.content, readFileSync(logPath(h.taskId, 'stdout')).toString('utf8'))
    assert.ok(out.content.endsWith('x\ufffd\ufffd'), 'invalid bytes decoded as Node decodes them')
    assert.equal(err.content, 'warn ✓\n')

    const n = (c: BankCall) => calls.indexOf(c) + 1
    assert.deepEqual(st.stdout, refFor(out.content, out.options, n(out)))
    assert.deepEqual(st.stderr, refFor(err.content, err.options, n(err)))
    assert.equal(st.stdoutBytes, Buffer.byteLength('line one €\n') + 700 + 3)
    // The host object is never visibly changed.
    assert.deepEqual(ownKeys(host), ['bankArtifact'])
  })

  test('the session given to the bank: the host’s getToolContext().sessionId, else one default per host', async () => {
    const ctxSession = `ctx-${randomUUID()}`
    const withCtx = bankingHost(async (c, o, n) => refFor(c, o, n), { getToolContext: () => ({ sessionId: ctxSession }) })
    const a = await nc.startBackgroundCommand(withCtx.host, [SH, '-c', 'echo a'], { cwd: '.' })
    await settle(withCtx.host, a.taskId)
    assert.deepEqual(
      withCtx.calls.map((c) => c.options.sessionId),
      [ctxSession, ctxSession],
    )

    const plain = bankingHost(async (c, o, n) => refFor(c, o, n))
    for (let i = 0; i < 2; i++) {
      const hd = await nc.startBackgroundCommand(plain.host, [SH, '-c', 'echo b'], { cwd: '.' })
      await settle(plain.host, hd.taskId)
    }
    const sessions = new Set(plain.calls.map((c) => c.options.sessionId))
    assert.equal(plain.calls.length, 4)
    assert.equal(sessions.size, 1, 'one default session per host')
    const [only] = sessions
    assert.ok(typeof only === 'string' && only.length > 0)
    assert.notEqual(only, ctxSession)
  })

  test('the settled state is published only together with both refs', async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((r) => (release = r))
    const { host, calls } = bankingHost(async (c, o, n) => {
      await held
      return refFor(c, o, n)
    })
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo banked'], { cwd: '.' })
    await waitFor(() => calls.length === 2, 10_000, 'both bank calls')
    // The process has ended and its output is in, but the bank has not answered.
    const mid = nc.getBackgroundCommandStatus(host, h.taskId)
    assert.ok(mid.state === 'running' || mid.state === 'queued', `state ${mid.state} before the refs exist`)
    assert.equal(mid.stdout, undefined)
    assert.equal(mid.stderr, undefined)
    assert.equal(mid.stdoutBytes, 7)
    const early = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 100 })
    assert.equal(early.stdout, undefined)
    assert.ok(early.state === 'running' || early.state === 'queued')
    release()
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.stdout?.artifactId.startsWith('host-art-'), true)
    assert.equal(st.stderr?.artifactId.startsWith('host-art-'), true)
  })

  const failures: [string, (c: string, o: nc.BankArtifactOptions, n: number) => unknown, string[]][] = [
    ['rejects', async () => Promise.reject(new Error('the artifact store is full')), ['the artifact store is full']],
    [
      'throws',
      () => {
        throw new Error('bank offline (ECONNREFUSED)')
      },
      ['bank offline (ECONNREFUSED)'],
    ],
    ['resolves to a non-ref object', async () => ({ id: 'nope' }), ['not a BankedArtifactRef']],
    ['resolves to undefined', async () => undefined, ['undefined', 'not a BankedArtifactRef']],
    ['returns a number', () => 42, ['42', 'not a BankedArtifactRef']],
  ]
  for (const [what, answer, why] of failures) {
    test(`a bankArtifact that ${what} still gives the outcome and a fallback ref saying why`, async () => {
      const { host, calls } = bankingHost(answer)
      const h = await nc.startBackgroundCommand(host, [SH, '-c', "i=0; while [ $i -lt 100 ]; do printf '%s' 'ABCDEFGHIJ'; i=$((i+1)); done; echo oops >&2; exit 3"], {
        cwd: '.',
        label: 'fails to bank',
      })
      const st = await settle(host, h.taskId)
      assert.equal(calls.length, 2)
      assert.equal(st.state, 'exited')
      assert.equal(st.exitCode, 3)
      assert.equal(st.stdoutBytes, 1000)
      assert.equal(st.stderrBytes, 5)
      for (const [ref, stream, bytes, preview] of [
        [st.stdout, 'stdout', 1000, 'ABCDEFGHIJ'.repeat(60)],
        [st.stderr, 'stderr', 5, 'oops\n'],
      ] as const) {
        assert.ok(ref, `${stream} ref present`)
        assert.equal(ref.artifactId, '')
        assert.equal(ref.label, `fails to bank [${stream}]`)
        assert.equal(ref.kind, 'command-output')
        assert.equal(ref.sizeBytes, bytes)
        assert.equal(ref.preview, preview)
        assert.ok(ref.readBackHint.includes('could NOT be created'), ref.readBackHint)
        for (const w of why) assert.ok(ref.readBackHint.includes(w), `${JSON.stringify(w)} in: ${ref.readBackHint}`)
        assert.ok(ref.readBackHint.includes(logPath(h.taskId, stream)), ref.readBackHint)
      }
      // The output itself is still fully readable.
      const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', limit: 200_000 })
      assert.equal(page.content, 'ABCDEFGHIJ'.repeat(100))
    })
  }

  test('one stream banked, the other failed: each ref stands on its own', async () => {
    const { host } = bankingHost(async (c, o, n) => {
      if (o.label.endsWith('[stderr]')) throw new Error('stderr refused')
      return refFor(c, o, n)
    })
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo out; echo err >&2'], { cwd: '.', label: 'half' })
    const st = await settle(host, h.taskId)
    assert.ok(st.stdout!.artifactId.startsWith('host-art-'))
    assert.equal(st.stdout!.sizeBytes, 4)
    assert.equal(st.stderr!.artifactId, '')
    assert.ok(st.stderr!.readBackHint.includes('could NOT be created') && st.stderr!.readBackHint.includes('stderr refused'))
  })
})

describe('the built-in bank', () => {
  test('a host without bankArtifact gets refs readable with readArtifact and retrieveArtifact, as the hint spells', async () => {
    const host = hostWith(root, [SH])
    allHosts.push(host)
    const text = 'héllo wörld\n'.repeat(100)
    writeFileSync(join(root, 'builtin.txt'), text)
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'cat builtin.txt; printf warn >&2'], { cwd: '.', label: 'builtin' })
    const st = await settle(host, h.taskId)
    const out = st.stdout!
    assert.notEqual(out.artifactId, '')
    assert.equal(out.label, 'builtin [stdout]')
    assert.equal(out.kind, 'command-output')
    assert.equal(out.sizeBytes, Buffer.byteLength(text))
    assert.equal(out.preview, text.slice(0, 600))
    // The hint names a call the model can make with its tools.
    assert.ok(out.readBackHint.includes(`command_output({ artifactId: "${out.artifactId}", offset: 0, limit: 50000 })`), out.readBackHint)

    assert.equal(await nc.readArtifact(out.artifactId), text)
    assert.equal(await nc.readArtifact(st.stderr!.artifactId), 'warn')
    const first = await nc.retrieveArtifact(out.artifactId)
    assert.deepEqual(first, { artifactId: out.artifactId, content: text, offset: 0, limit: 50_000, totalSize: text.length, hasMore: false })
    const mid = await nc.retrieveArtifact(out.artifactId, { offset: 12, limit: 12 })
    assert.deepEqual(mid, { artifactId: out.artifactId, content: text.slice(12, 24), offset: 12, limit: 12, totalSize: text.length, hasMore: true })
    const clamped = await nc.retrieveArtifact(out.artifactId, { offset: -3, limit: 0 })
    assert.equal(clamped.offset, 0)
    assert.equal(clamped.limit, 1)
    assert.equal(clamped.content, 'h')
    // The bank's artifact is the log file itself.
    assert.equal(readFileSync(logPath(h.taskId, 'stdout'), 'utf8'), text)
  })

  test('an unknown artifact id rejects naming the id', async () => {
    for (const id of ['no-such-artifact', '', 'nlc-c0000000000000000-stdout']) {
      await assert.rejects(nc.readArtifact(id), (e: unknown) => {
        assert.ok(e instanceof Error && e.message.includes(`"${id}"`), String(e))
        return true
      })
      await assert.rejects(nc.retrieveArtifact(id, { offset: 0 }), (e: unknown) => {
        assert.ok(e instanceof Error && e.message.includes(`"${id}"`), String(e))
        return true
      })
    }
  })
})

describe('hosts are kept apart', () => {
  test('two hosts never see each other’s commands, counts, policies or kills', async () => {
    const a = hostWith(root, [SH])
    const b = {}
    allHosts.push(a, b)
    const session = `shared-${randomUUID()}`
    const ha = await nc.startBackgroundCommand(a, [SH, '-c', 'echo from-a; exec sleep 30'], { cwd: '.', sessionId: session })
    await waitFor(() => nc.getBackgroundCommandStatus(a, ha.taskId).stdoutBytes === 7, 10_000, 'a’s output')

    assert.equal(nc.getBackgroundCommandPolicy(b), undefined)
    await assert.rejects(nc.startBackgroundCommand(b, [SH, '-c', 'true'], { cwd: root }), /setBackgroundCommandPolicy/)
    nc.setBackgroundCommandPolicy(b, { allowedExecutables: ['/bin/echo'], cwdRoot: root })
    await assert.rejects(nc.startBackgroundCommand(b, [SH, '-c', 'true'], { cwd: root }), /Executable "\/bin\/sh" is not allowed/)
    assert.deepEqual(nc.getBackgroundCommandPolicy(a)?.allowedExecutables, [SH])

    const unknown = new RegExp(`No background command "${ha.taskId}"`)
    assert.throws(() => nc.getBackgroundCommandStatus(b, ha.taskId), unknown)
    await assert.rejects(nc.readBackgroundCommandOutput(b, ha.taskId, { stream: 'stdout' }), unknown)
    await assert.rejects(nc.killBackgroundCommand(b, ha.taskId), unknown)
    await assert.rejects(nc.awaitBackgroundCommand(b, ha.taskId, { timeoutMs: 10 }), unknown)
    assert.deepEqual(nc.listBackgroundCommands(b), [])
    assert.deepEqual(nc.backgroundCommandCounts(b, session), { running: 0, finished: 0 })
    assert.deepEqual(nc.backgroundCommandCounts(a, session), { running: 1, finished: 0 })
    assert.equal(await nc.killAllBackgroundCommands(b), 0)
    assert.equal(nc.getBackgroundCommandStatus(a, ha.taskId).state, 'running', 'b’s kill-all left a’s command alone')

    const hb = await nc.startBackgroundCommand(b, ['/bin/echo', 'from-b'], { cwd: '.' })
    await settle(b, hb.taskId)
    assert.deepEqual(
      nc.listBackgroundCommands(b).map((e) => e.taskId),
      [hb.taskId],
    )
    assert.ok(!nc.listBackgroundCommands(a).some((e) => e.taskId === hb.taskId))
    assert.throws(() => nc.getBackgroundCommandStatus(a, hb.taskId), new RegExp(`No background command "${hb.taskId}"`))

    const st = await nc.killBackgroundCommand(a, ha.taskId)
    assert.equal(st.state, 'killed')
    assert.equal(await nc.readArtifact(st.stdout!.artifactId), 'from-a\n')
    assert.deepEqual(ownKeys(a), [])
    assert.deepEqual(ownKeys(b), [])
  })
})
