// Shared fixtures for the node:test suites: temporary roots, hosts with a
// policy, and bounded polling (never a bare sleep standing in for a result).
import { mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import * as nc from '../index.js'

export { nc }

/** A fresh directory under the OS temp dir, by its real path. */
export function tempRoot(prefix = 'nlc-test-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)))
}

/** A host object with a policy that allows the given executables under `root`. */
export function hostWith(root: string, allowed: string[] = ['/bin/sh'], extra: Partial<nc.BackgroundCommandPolicy> = {}): object {
  const host = {}
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: allowed, cwdRoot: root, ...extra })
  return host
}

/** Poll `check` every few ms until it returns a truthy value or `ms` elapses. */
export async function waitFor<T>(check: () => T | Promise<T>, ms = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await check()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out after ${ms}ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Processes whose process group is `pgid` (from /proc), excluding zombies. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const state = rest[0]
      const pg = Number(rest[2])
      if (pg === pgid && state !== 'Z') out.push(Number(d))
    } catch {
      // gone meanwhile
    }
  }
  return out
}
