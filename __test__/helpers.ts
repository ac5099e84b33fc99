// Shared fixtures for the node:test suites: temporary roots, hosts with a
// policy, and bounded polling (never a bare sleep standing in for a result).
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { after } from 'node:test'

import * as nc from '../index.js'

export { nc }

// The suites leave nothing under the temp directory (SPEC §13): every suite
// imports this module, so each test process removes its own task directories
// when it exits, and at its end sweeps those of the child host processes it
// started that have ended (a child killed by a signal cannot clean up).
nc.configureLogs({ removeOnExit: true })
after(() => nc.pruneBackgroundCommandLogs())

// Every scratch root a test process made, removed when it exits (after its
// tests, before its commands are killed: a command still running in one only
// loses its working directory's name).
const scratchRoots: string[] = []
process.on('exit', () => {
  for (const dir of scratchRoots) {
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // A root a test made unremovable on purpose stays; the rest go.
    }
  }
})

/** A fresh directory under the OS temp dir, by its real path; removed when the test process exits. */
export function tempRoot(prefix = 'nlc-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  scratchRoots.push(dir)
  return dir
}

/** A host object with a policy that allows the given executables under `root`. */
export function hostWith(root: string, allowed: string[] = ['/bin/sh'], extra: Partial<nc.BackgroundCommandPolicy> = {}): object {
  const host = {}
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: allowed, cwdRoot: root, ...extra })
  return host
}

/** Poll `check` every few ms until it returns a truthy value or `ms` elapses. */
export async function waitFor<T>(check: () => T | Promise<T>, ms = 10_000, what = 'condition'): Promise<Exclude<T, null | undefined | false | 0 | ''>> {
  ms *= WAIT_SCALE
  const deadline = Date.now() + ms
  for (;;) {
    const v = await check()
    if (v) return v as Exclude<T, null | undefined | false | 0 | ''>
    if (Date.now() > deadline) throw new Error(`timed out after ${ms}ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** One line of /proc/<pid>/stat: the process's state letter, parent and group. */
export interface ProcStat {
  pid: number
  state: string
  ppid: number
  pgid: number
}

/** Every process in /proc, read now (processes that vanish meanwhile are skipped). */
export function procStats(): ProcStat[] {
  const out: ProcStat[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    const st = procStat(Number(d))
    if (st) out.push(st)
  }
  return out
}

function procStat(pid: number): ProcStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { pid, state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]) }
  } catch {
    return null
  }
}

/** Processes whose process group is `pgid` (from /proc), excluding zombies. */
export function groupMembers(pgid: number): number[] {
  return procStats()
    .filter((p) => p.pgid === pgid && p.state !== 'Z')
    .map((p) => p.pid)
}

/** The Node binary, for commands written as `node -e` scripts (allowlist it). */
export const NODE = process.execPath

/** The states a command ends in. */
export const SETTLED_STATES: readonly nc.BackgroundCommandState[] = ['exited', 'killed', 'timeout', 'output-limit']

/** Where the runner keeps one stream of a command (SPEC §2: `<os.tmpdir()>/neurolink-commands/<taskId>/`). */
export function logPath(taskId: string, stream: 'stdout' | 'stderr'): string {
  return join(tmpdir(), 'neurolink-commands', taskId, `${stream}.log`)
}

/** The settled status of a command; fails (never hangs) when it is still live after `ms`. */
export async function settle(host: object, taskId: string, ms = 15_000): Promise<nc.BackgroundCommandStatus> {
  ms *= WAIT_SCALE
  const st = await nc.awaitBackgroundCommand(host, taskId, { timeoutMs: ms })
  if (!SETTLED_STATES.includes(st.state)) {
    throw new Error(`command ${taskId} is still ${st.state} after ${ms}ms; tail: ${st.tailPreview}`)
  }
  return st
}

/**
 * Read a whole stream back in pages of `limit` characters, checking every
 * page's bookkeeping (offset, clamped limit, totalSize, hasMore, length).
 */
export async function readPages(host: object, taskId: string, stream: 'stdout' | 'stderr', limit: number): Promise<{ text: string; pages: nc.BackgroundCommandOutputPage[] }> {
  const pages: nc.BackgroundCommandOutputPage[] = []
  let text = ''
  let offset = 0
  const want = Math.min(Math.max(Math.floor(limit), 1), 200_000)
  for (;;) {
    const p = await nc.readBackgroundCommandOutput(host, taskId, { stream, offset, limit })
    const expectLen = Math.max(0, Math.min(want, p.totalSize - offset))
    if (
      p.taskId !== taskId ||
      p.stream !== stream ||
      p.offset !== offset ||
      p.limit !== want ||
      p.content.length !== expectLen ||
      p.hasMore !== offset + want < p.totalSize ||
      (pages.length > 0 && p.totalSize !== pages[0]!.totalSize)
    ) {
      throw new Error(`inconsistent page at offset ${offset}: ${JSON.stringify({ ...p, content: p.content.length })}`)
    }
    pages.push(p)
    text += p.content
    if (!p.hasMore) return { text, pages }
    offset += want
  }
}

/**
 * A shell snippet that blocks until the file `name` exists in the command's
 * cwd: the test decides when the command goes on, instead of guessing with sleeps.
 */
export function gateScript(name = 'go'): string {
  return `while [ ! -e ${name} ]; do sleep 0.02; done`
}

/** Whether an own property of any kind exists on `o` (the runner must add none to a host). */
export function ownKeys(o: object): (string | symbol)[] {
  return Reflect.ownKeys(o)
}

/** A process's state letter from /proc/<pid>/stat (null when it is gone). */
export function procState(pid: number): string | null {
  return procStat(pid)?.state ?? null
}

/** Alive = present in /proc and not a zombie. */
export function alive(pid: number): boolean {
  const s = procState(pid)
  return s !== null && s !== 'Z'
}

/** Live processes whose environment carries NLC_MARK=<mark> (tests mark what they start). */
export function marked(mark: string): number[] {
  const needle = `\0NLC_MARK=${mark}\0`
  const out: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const env = '\0' + readFileSync(`/proc/${d}/environ`, 'latin1')
      if (env.includes(needle) && alive(Number(d))) out.push(Number(d))
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return out
}

/** `pid` is alive and carries the mark (so a reused pid never counts). */
export function ours(pid: number, mark: string): boolean {
  try {
    return alive(pid) && ('\0' + readFileSync(`/proc/${pid}/environ`, 'latin1')).includes(`\0NLC_MARK=${mark}\0`)
  } catch {
    return false
  }
}

/**
 * How much longer bounded waits (waitFor, settle) may take: under qemu-user
 * (NLC_TEST_QEMU=1) every Node and every emulated child runs several times
 * slower. Only the bound on waiting for something that must happen grows;
 * no assertion about the outcome changes.
 */
export const WAIT_SCALE = process.env.NLC_TEST_QEMU === '1' ? 4 : 1
