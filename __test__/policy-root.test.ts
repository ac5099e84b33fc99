// A relative cwdRoot is resolved once, when the policy is
// set; a later process.chdir does not move the sandbox. A root that does not
// exist yet is accepted then and refused at each start until it exists.
// (In a child process: chdir would disturb the other suites.)
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { promisify } from 'node:util'

import { tempRoot } from './helpers.ts'

const run = promisify(execFile)
const BASE = tempRoot('nlc-chdir-')
after(() => rmSync(BASE, { recursive: true, force: true }))

const CHILD = `
const nc = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
const { mkdirSync } = require('node:fs')
const [first, second] = process.argv.slice(1)
const out = {}
async function main() {
  process.chdir(first)
  const host = {}
  nc.setBackgroundCommandPolicy(host, { allowedExecutables: ['/bin/pwd'], cwdRoot: 'work' })
  out.policyRoot = nc.getBackgroundCommandPolicy(host).cwdRoot
  process.chdir(second)
  const h = await nc.startBackgroundCommand(host, ['/bin/pwd'], { cwd: '.' })
  const st = await nc.awaitBackgroundCommand(host, h.taskId)
  out.ranIn = await nc.readArtifact(st.stdout.artifactId)

  // A root that does not exist yet: accepted now, refused at the start, fine once created.
  const later = {}
  nc.setBackgroundCommandPolicy(later, { allowedExecutables: ['/bin/pwd'], cwdRoot: 'not-yet' })
  try {
    await nc.startBackgroundCommand(later, ['/bin/pwd'], { cwd: '.' })
    out.refused = 'started'
  } catch (e) {
    out.refused = e.code
  }
  mkdirSync('not-yet')
  process.chdir(first)
  const h2 = await nc.startBackgroundCommand(later, ['/bin/pwd'], { cwd: '.' })
  const st2 = await nc.awaitBackgroundCommand(later, h2.taskId)
  out.laterRanIn = await nc.readArtifact(st2.stdout.artifactId)
  console.log(JSON.stringify(out))
}
main().catch((e) => { console.error(e); process.exit(1) })
`

test('a relative cwdRoot is resolved once at setBackgroundCommandPolicy: process.chdir afterwards does not move the sandbox', async () => {
  const first = join(BASE, 'first')
  const second = join(BASE, 'second')
  for (const d of [join(first, 'work'), join(second, 'work')]) mkdirSync(d, { recursive: true })
  const { stdout } = await run(process.execPath, ['-e', CHILD, first, second], { timeout: 60_000 })
  assert.deepEqual(JSON.parse(stdout), {
    policyRoot: join(first, 'work'),
    ranIn: `${join(first, 'work')}\n`,
    refused: 'NLC_OUTSIDE_ROOT',
    laterRanIn: `${join(second, 'not-yet')}\n`,
  })
})
