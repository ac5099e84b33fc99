// Every TypeScript and JavaScript code block of the README and of the guide
// pages is type-checked under --strict against the public types, so they cannot
// rot. A block preceded by `<!-- fragment -->` is wrapped in an async function
// (for snippets that are not whole modules); every other block must compile
// as a module on its own.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { compile, repo, strictProject } from './strict-project.ts'

interface Block {
  lang: 'ts' | 'js'
  line: number
  text: string
  fragment: boolean
}

function blocks(markdown: string): Block[] {
  const out: Block[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|typescript|js|javascript)\s*$/.exec(lines[i]!)
    if (!open) continue
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!)
    const lang = open[1]!.startsWith('t') ? 'ts' : 'js'
    out.push({ lang, line: start + 1, text: body.join('\n'), fragment: (lines[start - 1] ?? '').trim() === '<!-- fragment -->' })
  }
  return out
}

test('every TypeScript and JavaScript block of the README compiles under tsc --strict against the public types', async () => {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8')
  const found = blocks(readme)
  assert.ok(found.filter((b) => b.lang === 'ts').length >= 2, 'the README has its TypeScript examples')
  assert.ok(
    found.some((b) => b.lang === 'js' && b.text.includes("require('neurolink-commands')")),
    'and a CommonJS one',
  )
  // Every fenced block is either checked here or not code of ours (sh).
  for (const m of readme.matchAll(/^```(\S*)$/gm)) assert.ok(['ts', 'js', 'sh', ''].includes(m[1]!), `a ${m[1]} block`)
  const files: Record<string, string> = {}
  for (const b of found) {
    const name = `readme-line-${b.line}.${b.lang === 'ts' ? 'mts' : 'cjs'}`
    files[name] = b.fragment ? `export {}\nexport async function fragment(): Promise<void> {\n${b.text}\n}\n` : b.text + '\n'
  }
  const dir = strictProject(files, 'nlc-readme-')
  try {
    await compile(dir, true)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the README stays a short page for a user: at most 16 KiB', () => {
  const size = statSync(join(repo, 'README.md')).size
  assert.ok(size <= 16384, `README.md is ${size} bytes; move detail into docs/ (guide, reference or internals) and link it`)
  for (const section of ['## Install', '## Quick start', '## Tools', '## Errors', '## Platforms']) {
    assert.ok(readFileSync(join(repo, 'README.md'), 'utf8').includes(`\n${section}`), `the README has its ${section} section`)
  }
})

test('a README block that does not type-check fails the check (control)', async () => {
  const dir = strictProject({ 'bad.mts': "import { startBackgroundCommand } from 'neurolink-commands'\nawait startBackgroundCommand({}, ['x'], { cwdd: '.' })\n" }, 'nlc-readme-bad-')
  try {
    await assert.rejects(compile(dir, true), /cwdd/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('every TypeScript block of docs/guide/agent-frameworks.md compiles under tsc --strict with the SDKs it uses', async () => {
  const page = readFileSync(join(repo, 'docs', 'guide', 'agent-frameworks.md'), 'utf8')
  const found = blocks(page)
  assert.equal(found.filter((b) => b.lang === 'ts').length, 3, 'the AI SDK, the Agents SDK and an MCP client')
  for (const m of page.matchAll(/^```(\S*)$/gm)) assert.ok(['ts', ''].includes(m[1]!), `a ${m[1]} block`)
  const files: Record<string, string> = {}
  for (const b of found) files[`frameworks-line-${b.line}.mts`] = b.text + '\n'
  const dir = strictProject(files, 'nlc-frameworks-', ['ai', '@openai/agents', 'zod', '@modelcontextprotocol/sdk'])
  try {
    await compile(dir, true)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('every TypeScript and JavaScript block of the guide pages compiles under tsc --strict against the public types', async () => {
  // agent-frameworks.md has its own check above (it imports the SDKs); neurolink.md quotes NeuroLink's own code.
  const dir = join(repo, 'docs', 'guide')
  const names = readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'agent-frameworks.md' && f !== 'neurolink.md')
  const files: Record<string, string> = {}
  for (const name of names) {
    for (const b of blocks(readFileSync(join(dir, name), 'utf8'))) {
      const file = `${name.replace(/\.md$/, '')}-line-${b.line}.${b.lang === 'ts' ? 'mts' : 'cjs'}`
      files[file] = b.fragment ? `export {}\nexport async function fragment(): Promise<void> {\n${b.text}\n}\n` : b.text + '\n'
    }
  }
  assert.ok(
    Object.keys(files).some((f) => f.startsWith('host-api-')),
    'the host API page has its examples',
  )
  const project = strictProject(files, 'nlc-guide-')
  try {
    await compile(project, true)
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
})
