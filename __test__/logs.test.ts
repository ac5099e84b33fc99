// Logs on disk (SPEC §2 "The log directory is trusted, and so are the logs",
// SPEC §13): the trusted directory against a real second local user
// (`nobody`), logs replaced after the fact, the budget, the age limit,
// remove-on-exit, prunes of ended processes' directories, the environment
// variable. Every case runs under a private temp directory (sticky 1777
// like /tmp) that is removed afterwards, so the real /tmp is never touched.
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import assert from 'node:assert/strict'

import { hostWith, nc, waitFor } from './helpers.js'

const SH = '/bin/sh'
const ADDON = join(__dirname, '..', 'index.js')
const BINDING = join(__dirname, '..', 'binding.js')
const UID = process.getuid!()
const savedTmp = process.env.TMPDIR
const made: string[] = []

after(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR
  else process.env.TMPDIR = savedTmp
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

/** A private temp directory, sticky and world-writable like /tmp, made the process's os.tmpdir(). */
function privateTmp(): string {
  const d = realpathSync(mkdtempSync('/tmp/nlc-logs-test-'))
  chmodSync(d, 0o1777)
  made.push(d)
  process.env.TMPDIR = d
  return d
}

/** Run a shell line as the unprivileged user `nobody`. */
function asNobody(line: string): string {
  return execFileSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '/bin/sh', '-c', line], { encoding: 'utf8' })
}

function nobodyCan(line: string): boolean {
  try {
    asNobody(line)
    return true
  } catch {
    return false
  }
}

async function run(host: object, line: string): Promise<nc.BackgroundCommandStatus> {
  const h = await nc.startBackgroundCommand(host, [SH, '-c', line], { cwd: '.' })
  return nc.awaitBackgroundCommand(host, h.taskId)
}

/** Every refusal of a removed or replaced log, for each read path: the codes seen. */
async function readCodes(host: object, taskId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const code = async (name: string, f: () => unknown) => {
    try {
      await f()
      out[name] = 'ok'
    } catch (e) {
      out[name] = (e as { code: string }).code
    }
  }
  await code('page', () => nc.readBackgroundCommandOutput(host, taskId, { stream: 'stdout' }))
  await code('follow', () => nc.readNewBackgroundCommandOutput(host, taskId, 'stdout'))
  await code('readArtifact', () => nc.readArtifact(`nlc-${taskId}-stdout`))
  await code('retrieveArtifact', () => nc.retrieveArtifact(`nlc-${taskId}-stdout`, { offset: 0 }))
  return out
}

// Back to the suite's settings (helpers.ts: removeOnExit) after each case.
const settingsReset = { dir: null, maxTotalBytes: null, maxAgeMs: null, removeOnExit: true, endedRetentionMs: null }

test('another user pre-creates <tmpdir>/neurolink-commands 0777 (or plants a symlink there): the host uses neurolink-commands-<uid> instead; with both taken the start is refused (NLC_LOG_DIR)', async () => {
  for (const attack of ['open-dir', 'symlink'] as const) {
    const tmp = privateTmp()
    const theirs = join(tmp, 'neurolink-commands')
    if (attack === 'open-dir') {
      asNobody(`mkdir ${theirs} && chmod 0777 ${theirs}`)
      // Control: the directory is really theirs and open to anyone.
      assert.equal(statSync(theirs).uid, Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })))
      assert.equal(statSync(theirs).mode & 0o777, 0o777)
    } else {
      asNobody(`mkdir ${tmp}/nobody-owned && chmod 0777 ${tmp}/nobody-owned && ln -s ${tmp}/nobody-owned ${theirs}`)
      assert.ok(nobodyCan(`touch ${theirs}/probe && rm ${theirs}/probe`), 'control: the user can write through the link')
    }
    const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
    const host = hostWith(root, [SH])
    const st = await run(host, 'echo mine')
    assert.equal(st.state, 'exited')
    const mine = join(tmp, `neurolink-commands-${UID}`)
    assert.equal(nc.configureLogs({}).dir, mine)
    assert.equal(readFileSync(join(mine, st.taskId, 'stdout.log'), 'utf8'), 'mine\n')
    assert.equal(statSync(mine).mode & 0o777, 0o700)
    assert.equal(statSync(mine).uid, UID)
    assert.equal(existsSync(join(theirs, st.taskId)), false, 'nothing was written into their directory')
    // The attacker cannot reach into ours (the control: they could into theirs).
    assert.equal(nobodyCan(`ls ${mine}/${st.taskId}`), false)
    assert.equal(nobodyCan(`mv ${mine}/${st.taskId} ${tmp}/stolen`), false)
    assert.equal(nobodyCan(`touch ${theirs}/probe2`), true, 'control: they could have swapped task directories in theirs')
    const page = await nc.readBackgroundCommandOutput(host, st.taskId, { stream: 'stdout' })
    assert.equal(page.content, 'mine\n')
  }
  // Both names taken by the other user: refused, saying why; nothing runs.
  const tmp = privateTmp()
  asNobody(`mkdir ${tmp}/neurolink-commands ${tmp}/neurolink-commands-${UID} && chmod 0777 ${tmp}/neurolink-commands ${tmp}/neurolink-commands-${UID}`)
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const host = hostWith(root, [SH])
  await assert.rejects(nc.startBackgroundCommand(host, [SH, '-c', 'touch ran'], { cwd: '.' }), (e: Error & { code: string }) => {
    assert.equal(e.code, 'NLC_LOG_DIR')
    assert.match(e.message, /neurolink-commands is not usable \(it is owned by uid \d+, not by this process's user/)
    assert.match(e.message, /writable by group or others/)
    return true
  })
  assert.equal(existsSync(join(root, 'ran')), false)
})

test('a log replaced after the fact (by a symlink to a file only the host can read, by another file, by a swapped task directory) is refused on every read path (NLC_LOG_REPLACED); none of its bytes are returned', async () => {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const secretFile = join(tmp, 'host-only-secret')
  writeFileSync(secretFile, 'TOP-SECRET-BYTES\n', { mode: 0o600 })
  const host = hostWith(root, [SH])
  const base = join(tmp, 'neurolink-commands')
  for (const how of ['symlink', 'other-file', 'swapped-dir'] as const) {
    const st = await run(host, 'echo genuine')
    const dir = join(base, st.taskId)
    const log = join(dir, 'stdout.log')
    if (how === 'symlink') {
      unlinkSync(log)
      symlinkSync(secretFile, log)
    } else if (how === 'other-file') {
      unlinkSync(log)
      writeFileSync(log, 'TOP-SECRET-BYTES\n')
    } else {
      renameSync(dir, `${dir}.moved`)
      mkdirSync(join(tmp, 'decoy'), { recursive: true })
      symlinkSync(secretFile, join(tmp, 'decoy', 'stdout.log'))
      symlinkSync(join(tmp, 'decoy'), dir)
    }
    // Control: following the path (as a plain reader would) gives the secret.
    assert.equal(readFileSync(log, 'utf8'), 'TOP-SECRET-BYTES\n', `${how}: the attack works on a path-following read`)
    assert.deepEqual(
      await readCodes(host, st.taskId),
      {
        page: 'NLC_LOG_REPLACED',
        follow: 'NLC_LOG_REPLACED',
        readArtifact: 'NLC_LOG_REPLACED',
        retrieveArtifact: 'NLC_LOG_REPLACED',
      },
      how,
    )
    await assert.rejects(nc.readBackgroundCommandOutput(host, st.taskId, { stream: 'stdout' }), /was replaced/)
    const status = nc.getBackgroundCommandStatus(host, st.taskId)
    assert.doesNotMatch(JSON.stringify(status), /TOP-SECRET/, `${how}: the status shows none of it`)
    assert.match(status.tailPreview, /was replaced/)
    // The other stream reads as before, unless its directory was swapped too.
    if (how === 'swapped-dir') {
      await assert.rejects(nc.readBackgroundCommandOutput(host, st.taskId, { stream: 'stderr' }), (e: Error & { code: string }) => e.code === 'NLC_LOG_REPLACED')
    } else {
      assert.equal((await nc.readBackgroundCommandOutput(host, st.taskId, { stream: 'stderr' })).content, '')
    }
  }
})

test('a budget of 4 MiB is held while 200 commands write 12.5 MiB: the oldest settled logs go, running ones stay, every removed read is refused (NLC_LOGS_REMOVED), every kept read is exact', async () => {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const host = hostWith(root, [SH])
  const budget = 4 << 20
  const each = 64 << 10
  const base = nc.configureLogs({ maxTotalBytes: budget }).dir
  try {
    const onDisk = () => {
      let n = 0
      for (const d of readdirSync(base))
        for (const f of ['stdout.log', 'stderr.log']) {
          try {
            n += statSync(join(base, d, f)).size
          } catch {}
        }
      return n
    }
    // Two running commands with 512 KiB each, alive through the whole run.
    const running = []
    for (let i = 0; i < 2; i++) {
      const h = await nc.startBackgroundCommand(host, [SH, '-c', `yes run${i} | head -c 524288; exec sleep 60`], { cwd: '.' })
      running.push(h.taskId)
    }
    await waitFor(
      async () => {
        for (const id of running) if (nc.getBackgroundCommandStatus(host, id).stdoutBytes < 524288) return false
        return true
      },
      20_000,
      'the running commands to write',
    )
    const expected = (i: number) => `${i}\n`.repeat(Math.ceil(each / `${i}\n`.length)).slice(0, each)
    const ids: string[][] = []
    let maxSeen = 0
    for (let batch = 0; batch < 20; batch++) {
      const hs = await Promise.all(Array.from({ length: 10 }, (_, k) => nc.startBackgroundCommand(host, [SH, '-c', `yes ${batch * 10 + k} | head -c ${each}`], { cwd: '.' })))
      await Promise.all(hs.map((h) => nc.awaitBackgroundCommand(host, h.taskId)))
      ids.push(hs.map((h) => h.taskId))
      // The sweep runs off the writers' path: the budget holds again within moments.
      await waitFor(() => onDisk() <= budget, 10_000, `batch ${batch}: logs on disk back under the budget`)
      maxSeen = Math.max(maxSeen, onDisk())
    }
    assert.ok(maxSeen <= budget)
    let removed = 0
    let lastRemovedBatch = -1
    let firstKeptBatch = Infinity
    for (let batch = 0; batch < 20; batch++) {
      for (let k = 0; k < 10; k++) {
        const id = ids[batch][k]
        const st = nc.getBackgroundCommandStatus(host, id)
        assert.equal(st.stdoutBytes, each, 'the byte count stays')
        assert.equal(st.stdout?.artifactId, `nlc-${id}-stdout`, 'refs keep their ids')
        if (st.logsRemoved) {
          removed++
          lastRemovedBatch = Math.max(lastRemovedBatch, batch)
          assert.deepEqual(await readCodes(host, id), { page: 'NLC_LOGS_REMOVED', follow: 'NLC_LOGS_REMOVED', readArtifact: 'NLC_LOGS_REMOVED', retrieveArtifact: 'NLC_LOGS_REMOVED' })
          await assert.rejects(nc.readBackgroundCommandOutput(host, id, { stream: 'stderr' }), (e: Error & { code: string }) => {
            assert.equal(e.code, 'NLC_LOGS_REMOVED')
            assert.match(e.message, /were removed at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(the logs on disk exceeded the log budget of 4194304 bytes/)
            return true
          })
          assert.match(st.tailPreview, /were removed at/)
          assert.equal(existsSync(join(base, id)), false)
        } else {
          firstKeptBatch = Math.min(firstKeptBatch, batch)
          const page = await nc.readBackgroundCommandOutput(host, id, { stream: 'stdout', limit: 200000 })
          assert.equal(page.content, expected(batch * 10 + k))
          assert.equal(await nc.readArtifact(`nlc-${id}-stdout`), expected(batch * 10 + k))
        }
      }
    }
    assert.ok(removed >= 200 - (budget - 2 * 524288) / each, `${removed} removed`)
    assert.ok(lastRemovedBatch <= firstKeptBatch, `the oldest go first (last removed batch ${lastRemovedBatch}, first kept ${firstKeptBatch})`)
    for (let i = 0; i < 2; i++) {
      const st = nc.getBackgroundCommandStatus(host, running[i])
      assert.equal(st.state, 'running')
      assert.equal(st.logsRemoved, undefined)
      const page = await nc.readBackgroundCommandOutput(host, running[i], { stream: 'stdout', limit: 200000 })
      assert.equal(page.content, `run${i}\n`.repeat(40000).slice(0, 200000))
      await nc.killBackgroundCommand(host, running[i])
    }
  } finally {
    nc.configureLogs(settingsReset)
  }
})

test('the budget is kept as a running command writes, not only at settle: its growth removes the oldest settled logs while it runs', async () => {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const host = hostWith(root, [SH])
  const settled = []
  for (let i = 0; i < 8; i++) settled.push((await run(host, `yes ${i} | head -c 131072`)).taskId)
  nc.configureLogs({ maxTotalBytes: 1 << 20 })
  try {
    assert.ok(
      settled.every((id) => !nc.getBackgroundCommandStatus(host, id).logsRemoved),
      'under the budget, nothing goes',
    )
    const h = await nc.startBackgroundCommand(host, [SH, '-c', 'yes grow | head -c 600000; exec sleep 60'], { cwd: '.' })
    await waitFor(() => nc.getBackgroundCommandStatus(host, h.taskId).stdoutBytes === 600000, 20_000, 'the writer')
    await waitFor(() => nc.getBackgroundCommandStatus(host, settled[0]).logsRemoved, 10_000, 'the oldest removed while the writer runs')
    assert.equal(nc.getBackgroundCommandStatus(host, h.taskId).state, 'running')
    assert.ok(nc.getBackgroundCommandStatus(host, settled[7]).logsRemoved === undefined, 'the newest settled stays')
    await nc.killBackgroundCommand(host, h.taskId)
  } finally {
    nc.configureLogs(settingsReset)
  }
})

test("an age limit removes settled logs once they are older than maxAgeMs, never a running command's", async () => {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const host = hostWith(root, [SH])
  nc.configureLogs({ maxAgeMs: 1500 })
  try {
    const long = await nc.startBackgroundCommand(host, [SH, '-c', 'echo long; exec sleep 4'], { cwd: '.' })
    const st = await run(host, 'echo short')
    assert.equal((await nc.readBackgroundCommandOutput(host, st.taskId, { stream: 'stdout' })).content, 'short\n', 'young logs read')
    await waitFor(() => nc.getBackgroundCommandStatus(host, st.taskId).logsRemoved, 10_000, 'the age limit')
    await assert.rejects(nc.readBackgroundCommandOutput(host, st.taskId, { stream: 'stdout' }), (e: Error & { code: string }) => {
      assert.equal(e.code, 'NLC_LOGS_REMOVED')
      assert.match(e.message, /older than the log age limit \(1500 ms, configureLogs maxAgeMs\)/)
      return true
    })
    // The running one, started before, is older than the limit yet kept.
    assert.equal(nc.getBackgroundCommandStatus(host, long.taskId).state, 'running')
    assert.equal((await nc.readBackgroundCommandOutput(host, long.taskId, { stream: 'stdout' })).content, 'long\n')
    const ended = await nc.awaitBackgroundCommand(host, long.taskId)
    assert.equal(ended.state, 'exited')
    await waitFor(() => nc.getBackgroundCommandStatus(host, long.taskId).logsRemoved, 10_000, 'its age limit after it settled')
  } finally {
    nc.configureLogs(settingsReset)
  }
})

test('a read racing a removal gets the exact bytes or NLC_LOGS_REMOVED, never anything else', async () => {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const host = hostWith(root, [SH])
  const ids = []
  for (let i = 0; i < 30; i++) ids.push((await run(host, `yes r${i} | head -c 100000`)).taskId)
  const want = (i: number) => `r${i}\n`.repeat(40000).slice(0, 100000)
  const reads = ids.flatMap((id, i) =>
    Array.from({ length: 4 }, async () => {
      try {
        const p = await nc.readBackgroundCommandOutput(host, id, { stream: 'stdout', limit: 200000 })
        assert.equal(p.content, want(i))
        return 'exact'
      } catch (e) {
        assert.equal((e as { code: string }).code, 'NLC_LOGS_REMOVED', String(e))
        return 'refused'
      }
    }),
  )
  const pruned = nc.pruneBackgroundCommandLogs({ keepBytes: 0 })
  const outcomes = await Promise.all(reads)
  const r = await pruned
  assert.ok(r.removed >= 30, `removed ${r.removed}`)
  assert.ok(r.freedBytes >= 30 * 100000)
  assert.ok(outcomes.every((o) => o === 'exact' || o === 'refused'))
  for (const id of ids) assert.equal(nc.getBackgroundCommandStatus(host, id).logsRemoved, true)
})

/** Run a child host script with the addon as `nc`; resolves with its stdout lines once it printed `lines` of them (or exited). */
function child(script: string, env: NodeJS.ProcessEnv): { lines: Promise<string[]>; exited: Promise<number | null>; stdin: NodeJS.WritableStream } {
  const p = spawn(process.execPath, ['-e', `const nc = require(${JSON.stringify(ADDON)}); (async () => { ${script} })().catch((e) => { console.log('ERR', e.code, e.message); process.exit(1) })`], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let out = ''
  const lines = new Promise<string[]>((resolve) => {
    p.stdout.on('data', (d) => {
      out += d
      if (out.includes('READY\n')) resolve(out.split('\n').filter(Boolean))
    })
    p.on('exit', () => resolve(out.split('\n').filter(Boolean)))
  })
  const exited = new Promise<number | null>((r) => p.on('exit', (c) => r(c)))
  return { lines, exited, stdin: p.stdin }
}

const startThree = (root: string) => `
  const host = {}
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(root)} })
  for (let i = 0; i < 3; i++) {
    const h = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'echo child ' + i], { cwd: '.' })
    await nc.awaitBackgroundCommand(host, h.taskId)
    console.log(h.taskId)
  }
`

test('removeOnExit: a host process that exits normally leaves none of its task directories; without it they stay (the control)', async () => {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const base = join(tmp, 'neurolink-commands')
  for (const remove of [true, false]) {
    const c = child(`nc.configureLogs({ removeOnExit: ${remove} }); ${startThree(root)} console.log('READY')`, { TMPDIR: tmp })
    const ids = (await c.lines).filter((l) => l !== 'READY')
    assert.equal(await c.exited, 0)
    assert.equal(ids.length, 3, ids.join())
    for (const id of ids) assert.equal(existsSync(join(base, id)), !remove, `${id} with removeOnExit ${remove}`)
  }
  // The control's directories are an ended process's: a prune takes them.
  const r = await nc.pruneBackgroundCommandLogs()
  assert.ok(r.removed >= 3)
  assert.deepEqual(readdirSync(base), [])
})

test("a prune at start-up removes the directories an ended process left and never a live process's", async () => {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const base = join(tmp, 'neurolink-commands')
  const ended = child(`${startThree(root)} console.log('READY')`, { TMPDIR: tmp })
  const endedIds = (await ended.lines).filter((l) => l !== 'READY')
  assert.equal(await ended.exited, 0)
  const live = child(`nc.configureLogs({ removeOnExit: true }); ${startThree(root)} console.log('READY'); process.stdin.resume(); process.stdin.on('end', () => process.exit(0))`, { TMPDIR: tmp })
  const liveIds = (await live.lines).filter((l) => l !== 'READY')
  assert.equal(liveIds.length, 3)
  for (const id of [...endedIds, ...liveIds]) assert.ok(existsSync(join(base, id, 'stdout.log')), id)
  // A new host process starting up sweeps.
  const pruner = child(`const r = await nc.pruneBackgroundCommandLogs(); console.log(JSON.stringify(r)); console.log('READY')`, { TMPDIR: tmp })
  const [result] = await pruner.lines
  assert.equal(await pruner.exited, 0)
  assert.deepEqual(JSON.parse(result), { removed: 3, freedBytes: endedIds.reduce((n, _, i) => n + `child ${i}\n`.length, 0) })
  for (const id of endedIds) assert.equal(existsSync(join(base, id)), false, `${id} of the ended process is gone`)
  for (const id of liveIds) assert.equal(readFileSync(join(base, id, 'stdout.log'), 'utf8').startsWith('child '), true, `${id} of the live process stays`)
  live.stdin.end()
  assert.equal(await live.exited, 0)
  for (const id of liveIds) assert.equal(existsSync(join(base, id)), false, 'and it removed its own at exit')
})

test('NEUROLINK_COMMANDS_LOG_DIR and configureLogs({ dir }) choose the directory, under the same trust rule', async () => {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const chosen = join(tmp, 'chosen', 'logs')
  const c = child(`${startThree(root)} console.log(nc.configureLogs({}).dir); console.log('READY')`, { TMPDIR: tmp, NEUROLINK_COMMANDS_LOG_DIR: chosen })
  const lines = await c.lines
  assert.equal(await c.exited, 0)
  assert.equal(lines[3], chosen)
  for (const [i, id] of lines.slice(0, 3).entries()) assert.equal(readFileSync(join(chosen, id, 'stdout.log'), 'utf8'), `child ${i}\n`)
  assert.equal(statSync(chosen).mode & 0o777, 0o700)
  assert.equal(existsSync(join(tmp, 'neurolink-commands')), false, 'the default was not used')
  // Another user's open directory named by the environment: refused.
  const open = join(tmp, 'open-logs')
  asNobody(`mkdir ${open} && chmod 0777 ${open}`)
  const bad = child(startThree(root), { TMPDIR: tmp, NEUROLINK_COMMANDS_LOG_DIR: open })
  const [err] = await bad.lines
  assert.equal(await bad.exited, 1)
  assert.match(err, /^ERR NLC_LOG_DIR The log directory .*open-logs is not trusted: it is owned by uid/)
  // configureLogs({ dir }): a symlink and an open directory are refused; a private one is used.
  const link = join(tmp, 'link-logs')
  symlinkSync(chosen, link)
  for (const d of [link, open])
    assert.throws(
      () => nc.configureLogs({ dir: d }),
      (e: Error & { code: string }) => e.code === 'NLC_LOG_DIR' && /not trusted/.test(e.message),
    )
  assert.throws(
    () => nc.configureLogs({ dir: 'relative/logs' }),
    (e: Error & { code: string }) => e.code === 'NLC_INVALID_ARGUMENT',
  )
  assert.throws(
    () => nc.configureLogs({ maxTotalBytes: -1 }),
    (e: Error & { code: string }) => e.code === 'NLC_INVALID_ARGUMENT',
  )
  const mine = join(tmp, 'mine-logs')
  try {
    assert.equal(nc.configureLogs({ dir: mine }).dir, mine)
    const host = hostWith(root, [SH])
    const st = await run(host, 'echo configured')
    assert.equal(readFileSync(join(mine, st.taskId, 'stdout.log'), 'utf8'), 'configured\n')
  } finally {
    nc.configureLogs(settingsReset)
  }
  rmSync(chosen, { recursive: true, force: true })
})

test("defaults change nothing: with no limit set, settled logs stay and a prune without options removes none of this process's", async () => {
  // In a fresh host process: this one has already opened other bases (the
  // shared temp directory through helpers.ts), where other suites' ended
  // processes leave directories a prune rightly takes.
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const c = child(
    `
    const now = nc.configureLogs({})
    console.log(JSON.stringify([now.dir, now.maxTotalBytes ?? null, now.maxAgeMs ?? null]))
    ${startThree(root)}
    console.log(JSON.stringify(await nc.pruneBackgroundCommandLogs()))
    const list = nc.listBackgroundCommands(host)
    for (const t of list) {
      const page = await nc.readBackgroundCommandOutput(host, t.taskId, { stream: 'stdout' })
      console.log(JSON.stringify([page.content, nc.getBackgroundCommandStatus(host, t.taskId).logsRemoved ?? null]))
    }
    console.log('READY')`,
    { TMPDIR: tmp },
  )
  const lines = await c.lines
  assert.equal(await c.exited, 0, lines.join('\n'))
  assert.deepEqual(JSON.parse(lines[0]), [join(tmp, 'neurolink-commands'), null, null])
  const ids = lines.slice(1, 4)
  assert.deepEqual(JSON.parse(lines[4]), { removed: 0, freedBytes: 0 })
  assert.deepEqual(
    lines.slice(5, 8).map((l) => JSON.parse(l)),
    [0, 1, 2].map((i) => [`child ${i}\n`, null]),
  )
  for (const [i, id] of ids.entries()) assert.equal(readFileSync(join(tmp, 'neurolink-commands', id, 'stdout.log'), 'utf8'), `child ${i}\n`)
  assert.equal(lines[8], 'READY')
})

const SEVEN_DAYS = 7 * 24 * 3600 * 1000

test('getLogSettings returns the settings in force without changing them: endedRetentionMs defaults to 7 days, follows configureLogs, null restores it, 0 is allowed, a negative one is refused', () => {
  const before = nc.getLogSettings()
  assert.equal(before.endedRetentionMs, SEVEN_DAYS)
  assert.equal(before.removeOnExit, true, 'helpers.ts set it')
  assert.deepEqual(nc.getLogSettings(), before, 'asking twice changes nothing')
  try {
    const set = nc.configureLogs({ endedRetentionMs: 1500.7, maxAgeMs: 60000 })
    assert.equal(set.endedRetentionMs, 1500)
    assert.deepEqual(nc.getLogSettings(), set)
    assert.equal(nc.configureLogs({ endedRetentionMs: 0 }).endedRetentionMs, 0)
    assert.deepEqual(nc.getLogSettings(), { ...set, endedRetentionMs: 0 })
    assert.throws(
      () => nc.configureLogs({ endedRetentionMs: -1 }),
      (e: Error & { code: string }) =>
        e.code === 'NLC_INVALID_ARGUMENT' && /endedRetentionMs must be a finite number ≥ 0 \(got -1\); pass 0 to keep what ended processes left, or null for the default of 7 days$/.test(e.message),
    )
    assert.equal(nc.getLogSettings().endedRetentionMs, 0, 'a refused call changes nothing')
    assert.equal(nc.configureLogs({ endedRetentionMs: null }).endedRetentionMs, SEVEN_DAYS)
  } finally {
    nc.configureLogs(settingsReset)
  }
  assert.deepEqual(nc.getLogSettings(), before)
})

/** Set the times of a task directory and its files to `ms` ago (the files first: that leaves the directory's own mtime alone). */
function age(dir: string, ms: number): void {
  const t = new Date(Date.now() - ms)
  for (const f of readdirSync(dir)) utimesSync(join(dir, f), t, t)
  utimesSync(dir, t, t)
}

/**
 * In a fresh log directory: the directories of a process that ended (one
 * made old, one left young) and of a live host process (made old), then a
 * new host process that starts one command with `configure` applied and
 * waits until its background sweep is over. What is left on disk.
 */
async function endedSweep(configure: string): Promise<{ lines: string[]; deadOld: boolean; deadYoung: boolean; liveOld: boolean; live: ReturnType<typeof child> }> {
  const tmp = privateTmp()
  const root = realpathSync(mkdtempSync(join(tmp, 'root-')))
  const base = join(tmp, 'logs')
  const env = { TMPDIR: tmp, NEUROLINK_COMMANDS_LOG_DIR: base }
  // These two never sweep (retention 0), so only the last process's sweep decides.
  const live = child(
    `nc.configureLogs({ removeOnExit: true, endedRetentionMs: 0 }); ${startThree(root)} console.log('READY'); process.stdin.resume(); process.stdin.on('end', () => process.exit(0))`,
    env,
  )
  const liveIds = (await live.lines).filter((l) => l !== 'READY')
  const dead = child(`nc.configureLogs({ endedRetentionMs: 0 }); ${startThree(root)} console.log('READY')`, env)
  const deadIds = (await dead.lines).filter((l) => l !== 'READY')
  assert.equal(await dead.exited, 0)
  assert.equal(liveIds.length + deadIds.length, 6)
  age(join(base, deadIds[0]!), SEVEN_DAYS + 3600_000)
  age(join(base, liveIds[0]!), 30 * 24 * 3600_000)
  age(join(base, deadIds[1]!), SEVEN_DAYS - 3600_000)
  const sweeper = child(
    `
    const native = require(${JSON.stringify(BINDING)})
    ${configure}
    console.log(JSON.stringify(nc.getLogSettings()))
    const host = {}
    nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/sh'], cwdRoot: ${JSON.stringify(root)} })
    const h = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', 'echo sweeper'], { cwd: '.' })
    await nc.awaitBackgroundCommand(host, h.taskId)
    const deadline = Date.now() + 20000
    while (native.endedSweepsDone() < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
    console.log(native.endedSweepsDone())
    console.log('READY')`,
    env,
  )
  const lines = await sweeper.lines
  assert.equal(await sweeper.exited, 0, lines.join('\n'))
  assert.equal(lines[1], '1', 'the background sweep finished')
  const there = (id: string) => existsSync(join(base, id, 'stdout.log'))
  for (const id of [...liveIds.slice(1), deadIds[2]!]) assert.ok(there(id), `${id} (young) stays`)
  return { lines, deadOld: there(deadIds[0]!), deadYoung: there(deadIds[1]!), liveOld: there(liveIds[0]!), live }
}

test("after a first start, a background sweep removes what ended processes left once older than endedRetentionMs (7 days by default); a live process's old directories and a young one stay", async () => {
  const r = await endedSweep('nc.configureLogs({ removeOnExit: true })')
  try {
    assert.equal(JSON.parse(r.lines[0]!).endedRetentionMs, SEVEN_DAYS)
    assert.deepEqual({ deadOld: r.deadOld, deadYoung: r.deadYoung, liveOld: r.liveOld }, { deadOld: false, deadYoung: true, liveOld: true })
  } finally {
    r.live.stdin.end()
    assert.equal(await r.live.exited, 0)
  }
})

test("endedRetentionMs: 0 turns the background sweep off: an ended process's old directory stays; a shorter retention takes the young one too", async () => {
  const off = await endedSweep('nc.configureLogs({ removeOnExit: true, endedRetentionMs: 0 })')
  try {
    assert.equal(JSON.parse(off.lines[0]!).endedRetentionMs, 0)
    assert.deepEqual({ deadOld: off.deadOld, deadYoung: off.deadYoung, liveOld: off.liveOld }, { deadOld: true, deadYoung: true, liveOld: true })
  } finally {
    off.live.stdin.end()
    assert.equal(await off.live.exited, 0)
  }
  const day = await endedSweep('nc.configureLogs({ removeOnExit: true, endedRetentionMs: 24 * 3600 * 1000 })')
  try {
    assert.deepEqual({ deadOld: day.deadOld, deadYoung: day.deadYoung, liveOld: day.liveOld }, { deadOld: false, deadYoung: false, liveOld: true })
  } finally {
    day.live.stdin.end()
    assert.equal(await day.live.exited, 0)
  }
})
