// The runner end to end through the public exports: handles, states, exact
// capture, paging, the byte cap, kill / timeout / abort / kill-all, env,
// unstartable executables, bounded awaits, counters and unknown task ids.
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { after, describe, test } from 'node:test'

import { gateScript, hostWith as makeHost, logPath, nc, NODE, ownKeys, readPages, settle, tempRoot, waitFor } from './helpers.ts'

const SH = '/bin/sh'
/** A default label's cut: 60 characters, then "…". */
const cut60 = (s: string) => (s.length > 60 ? `${s.slice(0, 60)}…` : s)
const CAT = '/bin/cat'
const HEAD = '/usr/bin/head'
const ENV = '/usr/bin/env'

const root = tempRoot('nlc-runner-')
const hosts: object[] = []
/** A host with a policy, remembered so that `after` can stop whatever a failed test left running. */
function hostWith(...args: Parameters<typeof makeHost>): object {
  const h = makeHost(...args)
  hosts.push(h)
  return h
}
const host = hostWith(root, [SH, CAT, HEAD, ENV, NODE], { killGraceMs: 1000 })

after(async () => {
  // Nothing a failed test left blocked may keep this file's process alive.
  for (const h of hosts) await nc.killAllBackgroundCommands(h)
  rmSync(root, { recursive: true, force: true })
})

function has(o: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key)
}

/** A fresh gate file name and the function that opens it. */
function gate(): { name: string; open: () => void } {
  const name = `go-${randomUUID()}`
  return { name, open: () => writeFileSync(join(root, name), '') }
}

describe('starting', () => {
  test('the handle comes back before the command ends; it then settles exited 0 with its output in the tail', async () => {
    const g = gate()
    const before = Date.now()
    const argv = [SH, '-c', `${gateScript(g.name)}; echo finished`]
    const h = await nc.startBackgroundCommand(host, argv, { cwd: '.' })
    const afterStart = Date.now()

    assert.match(h.taskId, /^c\d+[0-9a-f]{12}$/)
    assert.deepEqual(h.argv, argv)
    assert.ok(h.startedAt >= before && h.startedAt <= afterStart, `startedAt ${h.startedAt} not in [${before}, ${afterStart}]`)

    const live = nc.getBackgroundCommandStatus(host, h.taskId)
    assert.ok(live.state === 'queued' || live.state === 'running', `state ${live.state}`)
    for (const k of ['exitCode', 'signal', 'stdout', 'stderr', 'error']) assert.equal(has(live, k), false, `${k} present while live`)
    assert.equal(live.tailPreview, '(no output yet)')
    assert.equal(live.label, cut60(`sh -c ${gateScript(g.name)}; echo finished`))
    assert.equal(live.stdoutBytes, 0)
    assert.equal(live.stderrBytes, 0)
    await waitFor(() => nc.getBackgroundCommandStatus(host, h.taskId).state === 'running', 5000, 'running')

    // The log directory and files exist with private modes while it runs.
    const out = logPath(h.taskId, 'stdout')
    assert.equal(statSync(dirname(out)).mode & 0o777, 0o700)
    assert.equal(statSync(out).mode & 0o777, 0o600)
    assert.equal(statSync(logPath(h.taskId, 'stderr')).mode & 0o777, 0o600)

    g.open()
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 0)
    assert.equal(has(st, 'error'), false)
    assert.equal(has(st, 'signal'), false)
    assert.equal(st.tailPreview, '[stdout tail]\nfinished\n')
    assert.equal(st.stdoutBytes, 9)
    assert.ok(st.stdout && st.stderr, 'both refs once settled')
    assert.deepEqual(ownKeys(host), [], 'the host object gained no property')
  })

  test('task ids are unique and labels follow the contract', async () => {
    const long = 'x'.repeat(100)
    const a = await nc.startBackgroundCommand(host, [SH, '-c', 'true'], { cwd: root, label: '  build step  ' })
    const b = await nc.startBackgroundCommand(host, [SH, long], { cwd: root })
    const c = await nc.startBackgroundCommand(host, [SH, '-c', 'true'], { cwd: root, label: '   ' })
    assert.equal(new Set([a.taskId, b.taskId, c.taskId]).size, 3)
    assert.equal((await settle(host, a.taskId)).label, 'build step')
    // The default: the executable's base name and what follows, cut to 60 characters plus "…".
    assert.equal((await settle(host, b.taskId)).label, `sh ${long}`.slice(0, 60) + '…')
    assert.equal((await settle(host, c.taskId)).label, 'sh -c true')
    const d = await nc.startBackgroundCommand(host, [SH, '-c', 'exit 0', 'sixty', 'y'.repeat(41)], { cwd: root })
    assert.equal((await settle(host, d.taskId)).label, `sh -c exit 0 sixty ${'y'.repeat(41)}`, 'exactly 60 characters are not cut')
    const sta = nc.getBackgroundCommandStatus(host, a.taskId)
    assert.equal(sta.stdout?.label, 'build step [stdout]')
    assert.equal(sta.stderr?.label, 'build step [stderr]')
  })

  test('options.cwd defaults to the policy root: no options, {} and cwd: undefined all run there; a given cwd still counts', async () => {
    const { mkdirSync, realpathSync } = await import('node:fs')
    mkdirSync(join(root, 'here'), { recursive: true })
    const real = realpathSync(root)
    const pwd = [SH, '-c', 'pwd -P']
    const runs = [
      await nc.startBackgroundCommand(host, pwd),
      await nc.startBackgroundCommand(host, pwd, {}),
      await nc.startBackgroundCommand(host, pwd, { cwd: undefined, label: 'no cwd' }),
      await nc.startCommandWithPolicy(host, pwd, undefined, { allowedExecutables: [SH], cwdRoot: root }),
    ]
    for (const h of runs) {
      const st = await settle(host, h.taskId)
      assert.equal(st.exitCode, 0)
      assert.equal((await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })).content, `${real}\n`)
    }
    // the control: a cwd given is the one used
    const sub = await nc.startBackgroundCommand(host, pwd, { cwd: 'here' })
    await settle(host, sub.taskId)
    assert.equal((await nc.readBackgroundCommandOutput(host, sub.taskId, { stream: 'stdout' })).content, `${join(real, 'here')}\n`)
  })
})

describe('capturing', () => {
  test('exit 7 with 40 + 4 bytes: both streams banked in full and read back byte-exact; a non-zero exit is data', async () => {
    const out40 = 'abcdefghij0123456789ABCDEFGHIJ!@#%^*()_+'
    assert.equal(Buffer.byteLength(out40), 40)
    const h = await nc.startBackgroundCommand(host, [SH, '-c', `printf '%s' '${out40}'; printf 'err!' >&2; exit 7`], {
      cwd: '.',
    })
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 7)
    assert.equal(has(st, 'error'), false, 'a non-zero exit is not an error')
    assert.equal(has(st, 'signal'), false)
    assert.equal(st.stdoutBytes, 40)
    assert.equal(st.stderrBytes, 4)
    assert.equal(st.tailPreview, `[stdout tail]\n${out40}\n[stderr tail]\nerr!`)

    const out = st.stdout!
    const err = st.stderr!
    assert.equal(out.kind, 'command-output')
    assert.equal(err.kind, 'command-output')
    assert.equal(out.sizeBytes, 40)
    assert.equal(err.sizeBytes, 4)
    const label = cut60(`sh -c printf '%s' '${out40}'; printf 'err!' >&2; exit 7`)
    assert.equal(out.label, `${label} [stdout]`)
    assert.equal(err.label, `${label} [stderr]`)
    assert.equal(out.preview, out40)
    assert.equal(err.preview, 'err!')
    assert.notEqual(out.artifactId, '')
    assert.notEqual(out.artifactId, err.artifactId)
    assert.ok(out.readBackHint.includes(`command_output({ artifactId: "${out.artifactId}", offset: 0, limit: 50000 })`), out.readBackHint)

    // The log files hold exactly the bytes; the bank and the pages give them back.
    assert.deepEqual(readFileSync(logPath(h.taskId, 'stdout')), Buffer.from(out40))
    assert.deepEqual(readFileSync(logPath(h.taskId, 'stderr')), Buffer.from('err!'))
    assert.equal(await nc.readArtifact(out.artifactId), out40)
    assert.equal(await nc.readArtifact(err.artifactId), 'err!')
    const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })
    assert.deepEqual(page, { taskId: h.taskId, stream: 'stdout', content: out40, offset: 0, limit: 50000, totalSize: 40, hasMore: false })
    const errPage = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stderr', offset: 1, limit: 2 })
    assert.deepEqual(errPage, { taskId: h.taskId, stream: 'stderr', content: 'rr', offset: 1, limit: 2, totalSize: 4, hasMore: true })
    const neg = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', offset: -5, limit: 0 })
    assert.equal(neg.offset, 0)
    assert.equal(neg.limit, 1)
    assert.equal(neg.content, 'a')
  })

  test('exit 1 with output on stderr only: state exited, exitCode 1, no error', async () => {
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo "no such thing" >&2; exit 1'], { cwd: '.' })
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 1)
    assert.equal(has(st, 'error'), false)
    assert.equal(st.tailPreview, '[stderr tail]\nno such thing\n')
    assert.equal(st.stdout!.sizeBytes, 0)
    assert.equal(await nc.readArtifact(st.stdout!.artifactId), '')
  })

  test('a long command polled to completion: seen running, partial output readable before it ends, all of it after', async () => {
    const g = gate()
    const script = `for i in 1 2 3 4 5; do echo "tick $i"; done; ${gateScript(g.name)}; for i in 6 7 8 9 10; do echo "tick $i"; sleep 0.05; done`
    const h = await nc.startBackgroundCommand(host, [SH, '-c', script], { cwd: '.' })
    const firstHalf = [1, 2, 3, 4, 5].map((i) => `tick ${i}\n`).join('')
    const all = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `tick ${i}\n`).join('')

    const partial = await waitFor(
      async () => {
        const p = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })
        return p.content === firstHalf ? p : null
      },
      10_000,
      'the first half of the output',
    )
    assert.equal(partial.totalSize, firstHalf.length)
    assert.equal(partial.hasMore, false)
    const mid = nc.getBackgroundCommandStatus(host, h.taskId)
    assert.equal(mid.state, 'running')
    assert.equal(mid.stdoutBytes, firstHalf.length)
    assert.equal(mid.tailPreview, `[stdout tail]\n${firstHalf}`)
    assert.equal(has(mid, 'stdout'), false)

    g.open()
    let polls = 0
    let sawRunningAfterGate = false
    const st = await waitFor(
      () => {
        polls++
        const s = nc.getBackgroundCommandStatus(host, h.taskId)
        if (s.state === 'running') sawRunningAfterGate = true
        return s.state === 'running' || s.state === 'queued' ? null : s
      },
      10_000,
      'the command to settle',
    )
    assert.ok(polls > 1 && sawRunningAfterGate, `polled ${polls} times`)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 0)
    assert.equal(st.stdoutBytes, all.length)
    assert.equal((await readPages(host, h.taskId, 'stdout', 7)).text, all)
    assert.equal(await nc.readArtifact(st.stdout!.artifactId), all)
    assert.ok(st.durationMs >= 200, `durationMs ${st.durationMs}`)
  })

  test('3 MiB of output pages back byte-exact in 200000-character pages; the tail preview stays within 2000 characters', async () => {
    const size = 3 * 1024 * 1024
    // Printable ASCII (one byte, one character) in random order: any misplaced window shows.
    const raw = randomBytes(size)
    for (let i = 0; i < size; i++) raw[i] = 0x21 + (raw[i]! % 94)
    raw[size - 1] = 0x0a
    writeFileSync(join(root, 'three-mib.txt'), raw)
    const data = raw.toString('latin1')

    const h = await nc.startBackgroundCommand(host, [CAT, 'three-mib.txt'], { cwd: '.' })
    const st = await settle(host, h.taskId, 30_000)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 0)
    assert.equal(st.stdoutBytes, size)
    assert.equal(st.stdout!.sizeBytes, size)
    assert.ok(st.tailPreview.length <= 2000, `tailPreview has ${st.tailPreview.length} characters`)
    assert.ok(st.tailPreview.startsWith('[stdout tail]\n'))
    const tail = st.tailPreview.slice('[stdout tail]\n'.length)
    assert.ok(tail.length > 1500 && data.endsWith(tail), 'the tail is the end of the stream')
    assert.equal(st.stdout!.preview, data.slice(0, 600))

    const { text, pages } = await readPages(host, h.taskId, 'stdout', 200_000)
    assert.equal(pages.length, Math.ceil(size / 200_000))
    assert.equal(pages.length, 16)
    assert.ok(pages.slice(0, -1).every((p) => p.content.length === 200_000 && p.hasMore))
    assert.equal(pages.at(-1)!.hasMore, false)
    assert.equal(pages[0]!.totalSize, size)
    assert.ok(text === data, 'the concatenated pages equal the output')
    assert.ok(Buffer.from(text, 'latin1').equals(readFileSync(logPath(h.taskId, 'stdout'))))

    // A limit above the maximum is clamped to 200000.
    const big = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', offset: 3_000_000, limit: 1_000_000 })
    assert.equal(big.limit, 200_000)
    assert.equal(big.content, data.slice(3_000_000, 3_200_000))
    assert.equal(big.hasMore, false)

    // The built-in bank pages the same text.
    const id = st.stdout!.artifactId
    assert.ok((await nc.readArtifact(id)) === data)
    const ap = await nc.retrieveArtifact(id, { offset: 1_000_001, limit: 200_000 })
    assert.deepEqual(
      { ...ap, content: ap.content.length },
      {
        artifactId: id,
        content: 200_000,
        offset: 1_000_001,
        limit: 200_000,
        totalSize: size,
        hasMore: true,
      },
    )
    assert.ok(ap.content === data.slice(1_000_001, 1_200_001))
  })

  test('the byte cap is exact inside a 64 KiB write: output-limit with every byte up to the cap kept', async () => {
    const pattern = randomBytes(1024 * 1024)
    writeFileSync(join(root, 'pattern.bin'), pattern)
    // Writes the pattern over and over in 64 KiB writes, forever: only the cap stops it.
    const script = `
      const fs = require('node:fs')
      const d = fs.readFileSync('pattern.bin')
      for (;;) for (let o = 0; o < d.length; o += 65536) {
        let off = o, n = 65536
        while (n > 0) { try { const k = fs.writeSync(1, d, off, n); off += k; n -= k } catch (e) { if (e.code !== 'EAGAIN') throw e } }
      }`
    const cap = 1_000_000
    assert.notEqual(cap % 65536, 0, 'the cap falls inside a write')
    const h = await nc.startBackgroundCommand(host, [NODE, '-e', script], { cwd: '.', maxOutputBytes: cap })
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'output-limit')
    assert.equal(st.stdoutBytes, cap)
    assert.equal(st.stdout!.sizeBytes, cap)
    assert.equal(st.stderrBytes, 0)
    assert.ok(st.error?.includes('stdout'), st.error)
    assert.ok(st.error?.includes('banked in full'), st.error)
    assert.equal(st.signal, 'SIGTERM')
    assert.equal(has(st, 'exitCode'), false)
    const log = readFileSync(logPath(h.taskId, 'stdout'))
    assert.equal(log.length, cap)
    assert.ok(log.equals(pattern.subarray(0, cap)), 'every byte up to the cap is the command’s')
  })

  test('a stream that exactly fills the cap is not overflow; a cap on stderr names stderr', async () => {
    const pattern = randomBytes(256 * 1024)
    writeFileSync(join(root, 'fill.bin'), pattern)
    const exact = await nc.startBackgroundCommand(host, [HEAD, '-c', '131072', 'fill.bin'], { cwd: '.', maxOutputBytes: 131072 })
    const st = await settle(host, exact.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 0)
    assert.equal(has(st, 'error'), false)
    assert.equal(st.stdoutBytes, 131072)
    assert.ok(readFileSync(logPath(exact.taskId, 'stdout')).equals(pattern.subarray(0, 131072)))

    const viaErr = await nc.startBackgroundCommand(host, [SH, '-c', 'head -c 5000 fill.bin >&2; exec sleep 30'], {
      cwd: '.',
      maxOutputBytes: 4096,
    })
    const se = await settle(host, viaErr.taskId)
    assert.equal(se.state, 'output-limit')
    assert.equal(se.stderrBytes, 4096)
    assert.equal(se.stdoutBytes, 0)
    assert.ok(se.error?.includes('stderr') && se.error.includes('banked in full'), se.error)
    assert.ok(readFileSync(logPath(viaErr.taskId, 'stderr')).equals(pattern.subarray(0, 4096)))
  })

  test('the policy’s maxOutputBytes and defaultTimeoutMs apply when a start names none', async () => {
    const limited = hostWith(root, [SH, HEAD], { maxOutputBytes: 1000, defaultTimeoutMs: 300, killGraceMs: 500 })
    writeFileSync(join(root, 'five-k.bin'), randomBytes(5000))
    const capped = await nc.startBackgroundCommand(limited, [SH, '-c', 'head -c 5000 five-k.bin; exec sleep 30'], { cwd: '.' })
    const sc = await settle(limited, capped.taskId)
    assert.equal(sc.state, 'output-limit')
    assert.equal(sc.stdoutBytes, 1000)
    assert.ok(sc.error?.includes('1000'), sc.error)
    const slow = await nc.startBackgroundCommand(limited, [SH, '-c', 'exec sleep 30'], { cwd: '.' })
    const ss = await settle(limited, slow.taskId)
    assert.equal(ss.state, 'timeout')
    assert.ok(ss.error?.includes('300ms budget'), ss.error)
    // A start's own numbers win over the policy's.
    const roomy = await nc.startBackgroundCommand(limited, [HEAD, '-c', '5000', 'five-k.bin'], { cwd: '.', maxOutputBytes: 5000, timeoutMs: 10_000 })
    const sr = await settle(limited, roomy.taskId)
    assert.equal(sr.state, 'exited')
    assert.equal(sr.stdoutBytes, 5000)
  })

  test('with both streams written, each gets its share of the 2000-character tail', async () => {
    const h = await nc.startBackgroundCommand(host, [NODE, '-e', "process.stdout.write('a'.repeat(3000)); process.stderr.write('b'.repeat(3000))"], {
      cwd: '.',
    })
    const st = await settle(host, h.taskId)
    assert.equal(st.exitCode, 0)
    assert.ok(st.tailPreview.length <= 2000, `${st.tailPreview.length}`)
    const m = /^\[stdout tail\]\n(a+)\n\[stderr tail\]\n(b+)$/.exec(st.tailPreview)
    assert.ok(m, st.tailPreview.slice(0, 40))
    assert.ok(('[stdout tail]\n' + m[1]).length <= 1000, 'stdout within its 1000')
    assert.ok(('\n[stderr tail]\n' + m[2]).length <= 1000, 'stderr within its 1000')
    assert.ok(m[1]!.length >= 900 && m[2]!.length >= 900, `${m[1]!.length} / ${m[2]!.length}`)
  })
})

describe('ending', () => {
  test('kill keeps what was printed; killing it again returns the same outcome', async () => {
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo "before kill"; echo "on stderr" >&2; exec sleep 30'], { cwd: '.' })
    await waitFor(
      () => {
        const s = nc.getBackgroundCommandStatus(host, h.taskId)
        return s.stdoutBytes === 12 && s.stderrBytes === 10
      },
      10_000,
      'both lines',
    )
    const t0 = Date.now()
    const st = await nc.killBackgroundCommand(host, h.taskId)
    assert.ok(Date.now() - t0 < 2000, 'sleep dies on SIGTERM at once')
    assert.equal(st.state, 'killed')
    assert.equal(st.signal, 'SIGTERM')
    assert.equal(has(st, 'exitCode'), false)
    assert.match(st.error ?? '', /killed/)
    assert.ok(st.error?.includes('SIGTERM') && st.error.includes('by the caller'), st.error)
    assert.equal(await nc.readArtifact(st.stdout!.artifactId), 'before kill\n')
    assert.equal(await nc.readArtifact(st.stderr!.artifactId), 'on stderr\n')
    assert.equal((await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })).content, 'before kill\n')

    const again = await nc.killBackgroundCommand(host, h.taskId, 'SIGKILL')
    assert.deepEqual(again, st)
    assert.deepEqual(nc.getBackgroundCommandStatus(host, h.taskId), st)
  })

  test('killing a command that exited returns its outcome unchanged', async () => {
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo done'], { cwd: '.' })
    const st = await settle(host, h.taskId)
    const k = await nc.killBackgroundCommand(host, h.taskId)
    assert.deepEqual(k, st)
    assert.equal(k.state, 'exited')
    assert.equal(k.exitCode, 0)
    assert.equal(has(k, 'error'), false)
  })

  test('a named signal is sent; an unknown one is refused with the valid names and the command keeps running', async () => {
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'exec sleep 30'], { cwd: '.' })
    await waitFor(() => nc.getBackgroundCommandStatus(host, h.taskId).state === 'running', 5000, 'running')
    await assert.rejects(nc.killBackgroundCommand(host, h.taskId, 'SIGBOGUS' as NodeJS.Signals), (e: unknown) => {
      assert.ok(e instanceof Error)
      assert.ok(e.message.includes('SIGBOGUS') && e.message.includes('SIGTERM') && e.message.includes('SIGKILL'), e.message)
      return true
    })
    assert.equal(nc.getBackgroundCommandStatus(host, h.taskId).state, 'running')
    const st = await nc.killBackgroundCommand(host, h.taskId, 'SIGINT')
    assert.equal(st.state, 'killed')
    assert.equal(st.signal, 'SIGINT')
    assert.ok(st.error?.includes('SIGINT') && st.error.includes('by the caller'), st.error)
  })

  test('a timeout says "<N>ms budget" and keeps the output', async () => {
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo started; exec sleep 30'], { cwd: '.', timeoutMs: 300 })
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'timeout')
    assert.ok(st.error?.includes('300ms budget'), st.error)
    assert.ok(st.error?.includes('banked in full'), st.error)
    assert.equal(st.signal, 'SIGTERM')
    assert.ok(st.durationMs >= 290 && st.durationMs < 5000, `durationMs ${st.durationMs}`)
    assert.equal(await nc.readArtifact(st.stdout!.artifactId), 'started\n')
  })

  test('a process that ignores SIGTERM still dies with SIGKILL after killGraceMs, on kill and on timeout', async () => {
    const h2 = hostWith(root, [NODE, SH], { killGraceMs: 300 })
    const stubborn = "process.on('SIGTERM', () => console.log('ignored SIGTERM')); console.log('ready'); setInterval(() => {}, 1000)"
    const a = await nc.startBackgroundCommand(h2, [NODE, '-e', stubborn], { cwd: root })
    await waitFor(() => nc.getBackgroundCommandStatus(h2, a.taskId).stdoutBytes === 6, 10_000, 'ready')
    const t0 = Date.now()
    const st = await nc.killBackgroundCommand(h2, a.taskId)
    const took = Date.now() - t0
    assert.equal(st.state, 'killed')
    assert.equal(st.signal, 'SIGKILL')
    assert.ok(st.error?.includes('SIGTERM') && st.error.includes('by the caller'), st.error)
    assert.ok(took >= 250 && took < 3000, `kill resolved after ${took}ms (grace 300ms)`)
    assert.equal(await nc.readArtifact(st.stdout!.artifactId), 'ready\nignored SIGTERM\n')

    // The shell traps SIGTERM (its sleep dies of it) and loops on: only SIGKILL ends it.
    const trapping = "trap 'echo ignored SIGTERM' TERM; echo ready; while :; do sleep 0.05; done"
    const b = await nc.startBackgroundCommand(h2, [SH, '-c', trapping], { cwd: root, timeoutMs: 1000 })
    const sb = await settle(h2, b.taskId)
    assert.equal(sb.state, 'timeout')
    assert.equal(sb.signal, 'SIGKILL')
    assert.ok(sb.error?.includes('1000ms budget'), sb.error)
    assert.ok(sb.durationMs >= 1250 && sb.durationMs < 6000, `durationMs ${sb.durationMs}`)
    assert.equal(await nc.readArtifact(sb.stdout!.artifactId), 'ready\nignored SIGTERM\n')
  })

  test('an abortSignal kills the command: already aborted, and aborted later', async () => {
    const pre = await nc.startBackgroundCommand(host, [SH, '-c', 'exec sleep 30'], { cwd: '.', abortSignal: AbortSignal.abort() })
    const s1 = await settle(host, pre.taskId, 5000)
    assert.equal(s1.state, 'killed')
    assert.ok(s1.error?.includes('abortSignal'), s1.error)

    const ac = new AbortController()
    const later = await nc.startBackgroundCommand(host, [SH, '-c', 'echo waiting; exec sleep 30'], { cwd: '.', abortSignal: ac.signal })
    await waitFor(() => nc.getBackgroundCommandStatus(host, later.taskId).stdoutBytes === 8, 10_000, 'waiting')
    assert.equal(nc.getBackgroundCommandStatus(host, later.taskId).state, 'running')
    ac.abort()
    const s2 = await settle(host, later.taskId, 5000)
    assert.equal(s2.state, 'killed')
    assert.equal(s2.signal, 'SIGTERM')
    assert.ok(s2.error?.includes('abortSignal'), s2.error)
    assert.equal(await nc.readArtifact(s2.stdout!.artifactId), 'waiting\n')

    // An abort after the command settled changes nothing.
    const ac2 = new AbortController()
    const quick = await nc.startBackgroundCommand(host, [SH, '-c', 'echo quick'], { cwd: '.', abortSignal: ac2.signal })
    const s3 = await settle(host, quick.taskId)
    ac2.abort()
    assert.deepEqual(nc.getBackgroundCommandStatus(host, quick.taskId), s3)
    assert.equal(s3.state, 'exited')
  })

  test('a signal nobody here sent: state killed with the signal’s name', async () => {
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'echo about to; kill -KILL $$'], { cwd: '.' })
    const st = await settle(host, h.taskId)
    assert.equal(st.state, 'killed')
    assert.equal(st.signal, 'SIGKILL')
    assert.equal(has(st, 'exitCode'), false)
    assert.equal(await nc.readArtifact(st.stdout!.artifactId), 'about to\n')
  })

  test('killAllBackgroundCommands stops every unsettled command of that host only and counts them', async () => {
    const a = hostWith(root, [SH], { killGraceMs: 500 })
    const b = hostWith(root, [SH])
    assert.equal(await nc.killAllBackgroundCommands(a), 0)
    const done = await nc.startBackgroundCommand(a, [SH, '-c', 'true'], { cwd: '.' })
    await settle(a, done.taskId)
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await nc.startBackgroundCommand(a, [SH, '-c', 'exec sleep 30'], { cwd: '.' })).taskId)
    const other = await nc.startBackgroundCommand(b, [SH, '-c', 'exec sleep 30'], { cwd: '.' })
    await waitFor(() => ids.every((id) => nc.getBackgroundCommandStatus(a, id).state === 'running') && nc.getBackgroundCommandStatus(b, other.taskId).state === 'running', 5000, 'all running')

    assert.equal(await nc.killAllBackgroundCommands(a), 3)
    for (const id of ids) {
      const st = nc.getBackgroundCommandStatus(a, id)
      assert.equal(st.state, 'killed')
      assert.ok(st.error?.includes('host was disposed'), st.error)
    }
    assert.equal(nc.getBackgroundCommandStatus(a, done.taskId).state, 'exited')
    assert.equal(nc.getBackgroundCommandStatus(b, other.taskId).state, 'running')
    assert.equal(await nc.killAllBackgroundCommands(a), 0)
    assert.equal(await nc.killAllBackgroundCommands(b), 1)
    assert.equal(nc.getBackgroundCommandStatus(b, other.taskId).state, 'killed')
  })
})

describe('environment and unstartable commands', () => {
  test('an explicit env replaces the parent environment; an omitted env inherits it', async () => {
    const mark = `inherited-${randomUUID()}`
    process.env.NLC_RUNNER_TEST_MARK = mark
    try {
      const replaced = await nc.startBackgroundCommand(host, [ENV], { cwd: '.', env: { ONLY_VAR: 'x y', SECOND: '=2' } })
      const inherited = await nc.startBackgroundCommand(host, [ENV], { cwd: '.' })
      const empty = await nc.startBackgroundCommand(host, [ENV], { cwd: '.', env: {} })
      const r = await settle(host, replaced.taskId)
      assert.equal(r.exitCode, 0)
      const lines = (await nc.readArtifact(r.stdout!.artifactId)).split('\n').filter(Boolean).sort()
      assert.deepEqual(lines, ['ONLY_VAR=x y', 'SECOND==2'])

      const i = await settle(host, inherited.taskId)
      const env = (await nc.readArtifact(i.stdout!.artifactId)).split('\n')
      assert.ok(env.includes(`NLC_RUNNER_TEST_MARK=${mark}`), 'the parent variable is inherited')
      assert.ok(env.includes(`PATH=${process.env.PATH}`))

      const e = await settle(host, empty.taskId)
      assert.equal(e.exitCode, 0)
      assert.equal(e.stdoutBytes, 0)
      assert.equal(e.tailPreview, '(the command wrote no output)')
    } finally {
      delete process.env.NLC_RUNNER_TEST_MARK
    }
  })

  test('stdin is /dev/null: a command reading it sees end of input at once', async () => {
    const reader = await nc.startBackgroundCommand(host, [CAT], { cwd: '.' })
    const st = await settle(host, reader.taskId, 5000)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 0)
    assert.equal(st.stdoutBytes, 0)
    const fd0 = await nc.startBackgroundCommand(host, [SH, '-c', 'readlink /proc/self/fd/0'], { cwd: '.' })
    assert.equal((await settle(host, fd0.taskId)).tailPreview, '[stdout tail]\n/dev/null\n')
  })

  test('an allowlisted executable that does not exist settles "could not be started" with banked empty streams', async () => {
    const missing = '/nonexistent-nlc-dir/no-such-binary'
    const notExec = join(root, 'not-executable.sh')
    writeFileSync(notExec, '#!/bin/sh\necho hi\n', { mode: 0o644 })
    const h = hostWith(root, [missing, notExec])
    for (const exe of [missing, notExec]) {
      const hd = await nc.startBackgroundCommand(h, [exe, '--version'], { cwd: root })
      const st = await settle(h, hd.taskId, 5000)
      assert.equal(st.state, 'exited')
      assert.equal(has(st, 'exitCode'), false)
      assert.ok(st.error?.includes('could not be started'), st.error)
      assert.ok(st.error?.includes(exe), st.error)
      assert.equal(st.stdoutBytes, 0)
      assert.equal(st.stderrBytes, 0)
      assert.equal(st.stdout!.sizeBytes, 0)
      assert.equal(st.stderr!.sizeBytes, 0)
      assert.equal(await nc.readArtifact(st.stdout!.artifactId), '')
      assert.equal(await nc.readArtifact(st.stderr!.artifactId), '')
      assert.equal(st.tailPreview, '(the command wrote no output)')
      assert.equal(readFileSync(logPath(hd.taskId, 'stdout')).length, 0)
    }
    assert.deepEqual(nc.backgroundCommandCounts(h), { running: 0, finished: 0 })
  })
})

describe('awaiting and counting', () => {
  test('an await with timeoutMs bounds the wait, not the command', async () => {
    const g = gate()
    const h = await nc.startBackgroundCommand(host, [SH, '-c', `${gateScript(g.name)}; echo ok`], { cwd: '.' })
    const t0 = Date.now()
    const st = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 200 })
    const waited = Date.now() - t0
    assert.ok(st.state === 'running' || st.state === 'queued', st.state)
    assert.ok(waited >= 180 && waited < 3000, `waited ${waited}ms`)
    assert.equal(has(st, 'stdout'), false)
    const zero = await nc.awaitBackgroundCommand(host, h.taskId, { timeoutMs: 0 })
    assert.ok(zero.state === 'running' || zero.state === 'queued', zero.state)
    await waitFor(() => nc.getBackgroundCommandStatus(host, h.taskId).state === 'running', 5000, 'running, not settled')
    g.open()
    const done = await nc.awaitBackgroundCommand(host, h.taskId)
    assert.equal(done.state, 'exited')
    assert.equal(done.tailPreview, '[stdout tail]\nok\n')
  })

  test('counters: running until settled, finished until looked at by status, await, kill or an output read', async () => {
    const session = `sess-${randomUUID()}`
    const g = gate()
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      ids.push((await nc.startBackgroundCommand(host, [SH, '-c', `${gateScript(g.name)}; echo ${i}`], { cwd: '.', sessionId: session })).taskId)
    }
    const other = await nc.startBackgroundCommand(host, [SH, '-c', 'true'], { cwd: '.', sessionId: `${session}-other` })
    assert.deepEqual(nc.backgroundCommandCounts(host, session), { running: 4, finished: 0 })
    assert.deepEqual(nc.sessionCommandCounts(session), { running: 4, finished: 0 })
    // Looking at a command while it runs does not use up its "finished".
    nc.getBackgroundCommandStatus(host, ids[0]!)
    await nc.readBackgroundCommandOutput(host, ids[1]!, { stream: 'stdout' })

    g.open()
    await waitFor(() => nc.backgroundCommandCounts(host, session).running === 0, 10_000, 'all settled')
    assert.deepEqual(nc.backgroundCommandCounts(host, session), { running: 0, finished: 4 })
    assert.deepEqual(nc.sessionCommandCounts(session), { running: 0, finished: 4 })

    assert.equal(nc.getBackgroundCommandStatus(host, ids[0]!).state, 'exited')
    assert.deepEqual(nc.backgroundCommandCounts(host, session), { running: 0, finished: 3 })
    await nc.awaitBackgroundCommand(host, ids[1]!)
    assert.deepEqual(nc.backgroundCommandCounts(host, session), { running: 0, finished: 2 })
    await nc.killBackgroundCommand(host, ids[2]!)
    assert.deepEqual(nc.backgroundCommandCounts(host, session), { running: 0, finished: 1 })
    await nc.readBackgroundCommandOutput(host, ids[3]!, { stream: 'stderr' })
    assert.deepEqual(nc.backgroundCommandCounts(host, session), { running: 0, finished: 0 })
    assert.deepEqual(nc.sessionCommandCounts(session), { running: 0, finished: 0 })
    // Looking again changes nothing; settled commands stay answerable.
    nc.getBackgroundCommandStatus(host, ids[0]!)
    assert.deepEqual(nc.backgroundCommandCounts(host, session), { running: 0, finished: 0 })
    await settle(host, other.taskId)
    assert.deepEqual(nc.sessionCommandCounts(`${session}-other`), { running: 0, finished: 0 })
  })

  test('the session: options.sessionId, else the host’s getToolContext().sessionId, else the host’s default session', async () => {
    const ctxSession = `ctx-${randomUUID()}`
    const ctxHost = {
      getToolContext() {
        return { sessionId: ctxSession }
      },
    }
    nc.setBackgroundCommandPolicy(ctxHost, { allowedExecutables: [SH], cwdRoot: root })
    hosts.push(ctxHost)
    const g = gate()
    await nc.startBackgroundCommand(ctxHost, [SH, '-c', gateScript(g.name)], { cwd: '.' })
    const named = `named-${randomUUID()}`
    await nc.startBackgroundCommand(ctxHost, [SH, '-c', gateScript(g.name)], { cwd: '.', sessionId: named })
    assert.deepEqual(nc.sessionCommandCounts(ctxSession), { running: 1, finished: 0 })
    assert.deepEqual(nc.backgroundCommandCounts(ctxHost, ctxSession), { running: 1, finished: 0 })
    assert.deepEqual(nc.sessionCommandCounts(named), { running: 1, finished: 0 })

    const plain = hostWith(root, [SH])
    await nc.startBackgroundCommand(plain, [SH, '-c', gateScript(g.name)], { cwd: '.' })
    await nc.startBackgroundCommand(plain, [SH, '-c', gateScript(g.name)], { cwd: '.', sessionId: named })
    assert.deepEqual(nc.backgroundCommandCounts(plain), { running: 1, finished: 0 }, 'the default session holds one')
    assert.deepEqual(nc.sessionCommandCounts(named), { running: 2, finished: 0 }, 'a session spans hosts')
    assert.deepEqual(nc.backgroundCommandCounts(ctxHost, named), { running: 1, finished: 0 })
    g.open()
    await waitFor(() => nc.sessionCommandCounts(named).running === 0 && nc.backgroundCommandCounts(plain).running === 0, 10_000, 'settled')
    assert.deepEqual(nc.sessionCommandCounts(named), { running: 0, finished: 2 })
    assert.deepEqual(nc.backgroundCommandCounts(plain), { running: 0, finished: 1 })
    assert.deepEqual(ownKeys(ctxHost), ['getToolContext'])
  })
})

describe('unknown task ids', () => {
  test('unknown and other-host task ids are refused naming the id and listing this host’s ids', async () => {
    const fresh = hostWith(root, [SH])
    const check = (what: string, id: string, expectIds: string[] | 'none') => (e: unknown) => {
      assert.ok(e instanceof Error, `${what}: an Error`)
      assert.ok(e.message.includes(`No background command "${id}"`), `${what}: ${e.message}`)
      if (expectIds === 'none') assert.ok(e.message.includes('started none'), `${what}: ${e.message}`)
      else for (const t of expectIds) assert.ok(e.message.includes(t), `${what} lists ${t}: ${e.message}`)
      return true
    }
    assert.throws(() => nc.getBackgroundCommandStatus(fresh, 'c0nope'), check('status', 'c0nope', 'none'))

    const mine = await nc.startBackgroundCommand(host, [SH, '-c', 'true'], { cwd: '.' })
    await settle(host, mine.taskId)
    // The fresh host cannot see it: every entry point refuses.
    assert.throws(() => nc.getBackgroundCommandStatus(fresh, mine.taskId), check('status', mine.taskId, 'none'))
    await assert.rejects(nc.awaitBackgroundCommand(fresh, mine.taskId), check('await', mine.taskId, 'none'))
    await assert.rejects(nc.killBackgroundCommand(fresh, mine.taskId), check('kill', mine.taskId, 'none'))
    await assert.rejects(nc.readBackgroundCommandOutput(fresh, mine.taskId, { stream: 'stdout' }), check('read', mine.taskId, 'none'))

    const own = await nc.startBackgroundCommand(fresh, [SH, '-c', 'true'], { cwd: '.' })
    await settle(fresh, own.taskId)
    assert.throws(
      () => nc.getBackgroundCommandStatus(fresh, mine.taskId),
      (e: unknown) => {
        check('status', mine.taskId, [own.taskId])(e)
        assert.ok(e instanceof Error && e.message.split(mine.taskId).length === 2, 'the other host’s id is named once, never listed')
        return true
      },
    )
    await assert.rejects(nc.awaitBackgroundCommand(host, 'c999999deadbeefcafe'), check('await', 'c999999deadbeefcafe', [mine.taskId]))
  })
})

test('several awaits of one running command all resolve, once it settles, with its settled status and both refs; a bounded await in between is not', async () => {
  const h2 = hostWith(root, [SH])
  const g = gate()
  const h = await nc.startBackgroundCommand(h2, [SH, '-c', `${gateScript(g.name)}; printf out; printf err >&2`], { cwd: '.' })
  const waits = [nc.awaitBackgroundCommand(h2, h.taskId), nc.awaitBackgroundCommand(h2, h.taskId), nc.awaitBackgroundCommand(h2, h.taskId)]
  // Control: a bounded await resolves with the live status while the others still wait.
  const bounded = await nc.awaitBackgroundCommand(h2, h.taskId, { timeoutMs: 50 })
  assert.ok(bounded.state === 'queued' || bounded.state === 'running', bounded.state)
  assert.deepEqual(nc.backgroundCommandCounts(h2), { running: 1, finished: 0 })
  g.open()
  const all = await Promise.all(waits)
  for (const st of all) {
    assert.equal(st.taskId, h.taskId)
    assert.equal(st.state, 'exited')
    assert.equal(st.exitCode, 0)
    assert.deepEqual([st.stdoutBytes, st.stderrBytes], [3, 3])
    assert.equal(st.stdout?.preview, 'out')
    assert.equal(st.stderr?.preview, 'err')
    assert.deepEqual(st, all[0])
  }
  // The awaits looked at it: it no longer counts as finished-and-unread.
  assert.deepEqual(nc.backgroundCommandCounts(h2), { running: 0, finished: 0 })
  // An await of the settled command resolves at once with the same status.
  assert.deepEqual(await nc.awaitBackgroundCommand(h2, h.taskId), all[0])
})
