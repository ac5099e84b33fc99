// The documentation's links must lead somewhere: every relative link of the
// user-facing Markdown names a file of the repository (and, for a heading
// anchor, a heading of that file), and every `docs/….md` a source file or a
// page mentions exists. Moving a page without fixing its links fails here.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { type Dirent, existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { test } from 'node:test'

const repo = join(import.meta.dirname, '..')

/** The repository's files: git's list (tracked and new, ignored ones left out), or a walk outside a checkout. */
function tracked(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\0')
      .filter((f) => f !== '' && existsSync(join(repo, f)))
  } catch {
    const skip = new Set(['.git', 'node_modules', 'target', 'release'])
    return (readdirSync(repo, { recursive: true, withFileTypes: true }) as Dirent[])
      .filter((d) => d.isFile())
      .map((d) => relative(repo, join(d.parentPath ?? (d as Dirent & { path: string }).path, d.name)))
      .filter((f) => !f.split(sep).some((part) => skip.has(part)))
  }
}

/** The Markdown a reader follows links in: the root pages, the MCP server's page and everything under docs/. */
function pages(): string[] {
  return tracked().filter((f) => /^(README|CONTRIBUTING|SECURITY|CHANGELOG)\.md$/.test(f) || f === 'mcp/README.md' || (f.startsWith('docs/') && f.endsWith('.md')))
}

/** Markdown with fenced blocks and inline code blanked out (links inside them are not links). */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '``')
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>()
  const seen = new Map<string, number>()
  for (const m of markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const text = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  for (const m of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!)
  return out
}

/** The broken relative links of one page, as "page: target (why)". */
export function brokenLinks(page: string, markdown: string, root = repo): string[] {
  const bad: string[] = []
  const text = prose(markdown)
  const targets = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]!)
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // https:, mailto:
    const [path, anchor] = target.split('#', 2) as [string, string | undefined]
    if (path === '') {
      if (anchor !== undefined && !anchors(markdown).has(anchor)) bad.push(`${page}: ${target} (no heading #${anchor})`)
      continue
    }
    const file = resolve(root, dirname(page), decodeURIComponent(path))
    if (relative(root, file).startsWith('..')) {
      bad.push(`${page}: ${target} (outside the repository)`)
      continue
    }
    if (!existsSync(file)) {
      bad.push(`${page}: ${target} (no such file)`)
      continue
    }
    if (anchor !== undefined && file.endsWith('.md') && statSync(file).isFile()) {
      if (!anchors(readFileSync(file, 'utf8')).has(anchor)) bad.push(`${page}: ${target} (no heading #${anchor})`)
    }
  }
  return bad
}

test('every relative link of README, CONTRIBUTING, SECURITY, CHANGELOG, mcp/README and docs/ resolves, anchors included', () => {
  const list = pages()
  assert.ok(list.includes('README.md') && list.includes('CONTRIBUTING.md') && list.some((p) => p.startsWith('docs/guide/')), 'the pages are found')
  const bad = list.flatMap((p) => brokenLinks(p, readFileSync(join(repo, p), 'utf8')))
  assert.deepEqual(bad, [])
})

test('a link to a missing page or heading is reported (control)', () => {
  const page = 'docs/guide/x.md'
  const md = [
    '# Title',
    '[ok](../../README.md) [ok too](#title) [gone](../nowhere.md) [no heading](../../README.md#no-such-heading)',
    '`[in code](missing.md)` [web](https://example.com/x.md)',
    '```',
    '[in a block](missing.md)',
    '```',
  ].join('\n')
  assert.deepEqual(brokenLinks(page, md), ['docs/guide/x.md: ../nowhere.md (no such file)', 'docs/guide/x.md: ../../README.md#no-such-heading (no heading #no-such-heading)'])
})

test('every docs/….md that a source file or a page names exists', () => {
  // A path inside a fixture repository the git suite builds, not one of ours.
  const fixtures = new Set(['__test__/git.test.ts: docs/notes.md'])
  const self = '__test__/docs-links.test.ts'
  const bad: string[] = []
  for (const f of tracked()) {
    if (!/\.(md|ts|js|mjs|cjs|rs|toml|sh|yml|json)$/.test(f) || f.startsWith('node_modules/') || f === self) continue
    const text = readFileSync(join(repo, f), 'utf8')
    for (const m of text.matchAll(/(?<![\w./-])docs\/[\w./-]+?\.md\b/g)) {
      if (!existsSync(join(repo, m[0])) && !fixtures.has(`${f}: ${m[0]}`)) bad.push(`${f}: ${m[0]}`)
    }
  }
  assert.deepEqual(bad, [])
})
