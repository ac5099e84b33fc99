// The cwd sandbox on Windows (SPEC §14): the command starts in the directory
// the check held (its real path), and a cwd outside the root is refused
// (NLC_OUTSIDE_ROOT) and nothing runs: `..`, an absolute path elsewhere on
// the same volume, another volume. Each refusal has its control: a
// directory inside the root is accepted. A junction out of the root is in
// native-only.test.mjs (wine's mklink /J creates none).
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, parse } from 'node:path'
import { test } from 'node:test'

import { NODE, hostWith, nc, rejection, run, samePath, tempRoot } from './helpers.mjs'

const PRINT_CWD = [NODE, '-e', 'process.stdout.write(process.cwd())']

test('control: a directory inside the root is accepted, and the command starts in its real path', async (t) => {
  const root = tempRoot(t)
  mkdirSync(join(root, 'sub', 'deeper'), { recursive: true })
  const host = hostWith(root)
  for (const [cwd, want] of [
    ['.', root],
    ['sub', join(root, 'sub')],
    ['sub\\deeper', join(root, 'sub', 'deeper')],
    ['sub/deeper/..', join(root, 'sub')],
    [join(root, 'sub', 'deeper'), join(root, 'sub', 'deeper')],
    [join(root, 'SUB').toUpperCase(), join(root, 'sub')],
  ]) {
    const [st, out] = await run(host, PRINT_CWD, { cwd })
    assert.equal(st.exitCode, 0, `${cwd}: ${JSON.stringify(st)}`)
    assert.ok(samePath(out, want), `${cwd}: the command ran in ${out}, expected ${want}`)
  }
})

async function refused(host, cwd) {
  const e = await rejection(nc.startBackgroundCommand(host, PRINT_CWD, { cwd }))
  assert.equal(e.code, 'NLC_OUTSIDE_ROOT', `${cwd}: ${e.message}`)
  assert.deepEqual(nc.listBackgroundCommands(host), [], `${cwd}: nothing was started`)
}

test('.. out of the root is refused', async (t) => {
  const root = tempRoot(t)
  mkdirSync(join(root, 'sub'))
  const host = hostWith(join(root, 'sub'))
  await refused(host, '..')
  await refused(host, '..\\')
  await refused(host, '../sub/../..')
  await refused(host, join(root, 'sub', '..'))
})

test('an absolute directory elsewhere on the same volume is refused (a sibling named like the root too)', async (t) => {
  const root = tempRoot(t)
  const sibling = `${root}-sibling`
  mkdirSync(sibling)
  t.after(() => rmSync(sibling, { recursive: true, force: true }))
  const host = hostWith(root)
  await refused(host, tmpdir())
  await refused(host, sibling)
  await refused(host, parse(root).root)
})

test('a directory on another volume is refused', async (t) => {
  const root = tempRoot(t)
  const here = parse(root).root.toUpperCase()
  // Under wine Z: is the Unix root; on the runner the workspace is on D:.
  const other = ['Z:\\', 'D:\\', 'C:\\'].find((d) => d !== here && existsSync(d))
  assert.ok(other, `a second volume exists (the root is on ${here})`)
  const host = hostWith(root)
  await refused(host, other)
})
