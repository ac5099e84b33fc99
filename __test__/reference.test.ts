// docs/reference/api.md is generated from index.d.ts; a declaration changed
// without regenerating the page fails here.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'

// @ts-expect-error: a plain .mjs script without declarations
import { render, SOURCE, TARGET } from '../scripts/gen-reference.mjs'

const run = promisify(execFile)
const repo = join(import.meta.dirname, '..')

test('docs/reference/api.md is what scripts/gen-reference.mjs makes of index.d.ts', async () => {
  const source = readFileSync(SOURCE, 'utf8')
  const page = readFileSync(TARGET, 'utf8')
  assert.equal(page, render(source), 'stale: run `node scripts/gen-reference.mjs` and commit docs/reference/api.md')
  // Every exported function has its section, with its JSDoc.
  for (const m of source.matchAll(/^export declare function (\w+)/gm)) assert.ok(page.includes(`\n### ${m[1]}\n`), `a section for ${m[1]}`)
  assert.match(page, /\| `defaultTimeoutMs\?` \| `number` \| 120000 \| Budget of a command that names none, in ms\. \|/)
  // The script's own check agrees.
  await run(process.execPath, [join(repo, 'scripts', 'gen-reference.mjs'), '--check'], { cwd: repo })
})

test('a changed declaration changes the page, so a stale page is caught (control)', () => {
  const source = readFileSync(SOURCE, 'utf8')
  const changed = source.replace('Budget of a command that names none, in ms. @default 120000', 'Budget of a command that names none, in ms. @default 60000')
  assert.notEqual(changed, source, 'the control edits a real declaration')
  assert.notEqual(render(changed), readFileSync(TARGET, 'utf8'))
  assert.match(render(changed), /\| `defaultTimeoutMs\?` \| `number` \| 60000 \|/)
})
