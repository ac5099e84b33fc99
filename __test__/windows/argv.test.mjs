// No shell on Windows (SPEC §14): argv becomes one command line that the C
// runtime's rules split back exactly — checked with node.exe as the command,
// echoing its process.argv as JSON. A .cmd program runs through cmd.exe only
// with arguments cmd.exe cannot read as syntax; what it would read is refused
// (NLC_SHELL_SYNTAX naming the argument) and nothing runs. Each refusal is
// paired with a control: the naive cmd.exe line, run by Node itself, does
// expand or inject.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { NODE, echoScript, hostWith, nc, rejection, run, script, tempRoot } from './helpers.mjs'

const HOSTILE = [
  'plain',
  'two words',
  '',
  ' ',
  '\t',
  '"',
  '""',
  'a"b',
  'a\\"b',
  'trailing\\',
  'trailing space\\ ',
  'two trailing\\\\',
  '\\\\server\\share\\',
  'C:\\Program Files\\x\\',
  '&|<>^%',
  '%PATH%',
  '!PATH!',
  '*?',
  '(x)',
  'new\nline',
  'cr\rhere',
  '--inspect',
  '-e',
  'unicode é ☃ 𝄞 日本',
  '\\"\\\\"',
]

test('hostile arguments reach node.exe exactly (process.argv as JSON)', async (t) => {
  const root = tempRoot(t)
  const echo = echoScript(root)
  const host = hostWith(root)
  const [st, out] = await run(host, [NODE, echo, ...HOSTILE])
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.exitCode, 0, await nc.readArtifact(st.stderr.artifactId))
  assert.deepEqual(JSON.parse(out), HOSTILE)
})

test('each hostile argument alone, between two others, round-trips', async (t) => {
  const root = tempRoot(t)
  const echo = echoScript(root)
  const host = hostWith(root)
  for (const arg of HOSTILE) {
    const [st, out] = await run(host, [NODE, echo, 'before', arg, 'after'])
    assert.equal(st.exitCode, 0, JSON.stringify(arg))
    assert.deepEqual(JSON.parse(out), ['before', arg, 'after'], JSON.stringify(arg))
  }
})

/** A batch program that hands its arguments (%*) to the echo script. */
function batch(root) {
  const echo = echoScript(root)
  return script(root, 'echo-args.cmd', `@echo off\r\n"${NODE}" "${echo}" %*\r\n`)
}

test('a .cmd program gets &, |, <, >, ^, ( ) and spaces exactly, and runs nothing they spell', async (t) => {
  const root = tempRoot(t)
  const cmd = batch(root)
  const marker = join(root, 'injected.txt')
  const host = hostWith(root, {}, [cmd])
  const args = [
    // the marker's path has no spaces (%TEMP% here and on the runner): no quote is needed to spell it
    `x & echo injected> ${marker}`,
    `x | echo injected> ${marker}`,
    `x > ${marker}`,
    '<nul',
    'a^b^^c',
    '(paren) ,;=',
    'two words',
    'trailing\\',
    'unicode é ☃',
  ]
  const [st, out] = await run(host, [cmd, ...args])
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.exitCode, 0, await nc.readArtifact(st.stderr.artifactId))
  assert.deepEqual(JSON.parse(out), args)
  assert.equal(existsSync(marker), false, 'no argument ran as a command')
})

test('control: the naive cmd.exe line runs the command an & argument spells', (t) => {
  const root = tempRoot(t)
  const cmd = batch(root)
  const marker = join(root, 'injected.txt')
  // What a runner that joins arguments with spaces would hand cmd.exe.
  const line = `/d /s /c ""${cmd}" x & echo injected> ${marker}"`
  const r = spawnSync(process.env.ComSpec ?? 'cmd.exe', [line], { windowsVerbatimArguments: true, encoding: 'utf8' })
  assert.equal(r.error, undefined)
  assert.equal(existsSync(marker), true, `the naive line injected the command (stdout ${r.stdout}, stderr ${r.stderr})`)
  assert.match(readFileSync(marker, 'utf8'), /injected/)
})

for (const [what, arg] of [
  ['%VAR%', '%NLC_WIN_SECRET%'],
  ['a lone %', '100%'],
  ['a quote', 'say "hi"'],
  ['a quote and &', '" & echo injected'],
  ['a line feed', 'two\nlines'],
]) {
  test(`a .cmd argument holding ${what} is refused with NLC_SHELL_SYNTAX naming it, and nothing runs`, async (t) => {
    const root = tempRoot(t)
    const cmd = batch(root)
    const host = hostWith(root, {}, [cmd])
    const e = await rejection(nc.startBackgroundCommand(host, [cmd, 'fine', arg], { cwd: '.', env: { ...process.env, NLC_WIN_SECRET: 'expanded' } }))
    assert.equal(e.code, 'NLC_SHELL_SYNTAX', e.message)
    assert.ok(e.message.includes('argv[2]'), `names the argument's index: ${e.message}`)
    assert.ok(e.message.includes(JSON.stringify(arg)) || e.message.includes(arg), `names the argument: ${e.message}`)
    assert.deepEqual(nc.listBackgroundCommands(host), [], 'nothing was started')
  })
}

test('control: the naive cmd.exe line expands %VAR% even inside quotes', (t) => {
  const root = tempRoot(t)
  const cmd = batch(root)
  const r = spawnSync(process.env.ComSpec ?? 'cmd.exe', [`/d /s /c ""${cmd}" "%NLC_WIN_SECRET%""`], {
    windowsVerbatimArguments: true,
    encoding: 'utf8',
    env: { ...process.env, NLC_WIN_SECRET: 'expanded' },
  })
  assert.equal(r.error, undefined)
  assert.deepEqual(JSON.parse(r.stdout), ['expanded'], r.stderr)
})

test('the same .cmd argument passes to node.exe (no cmd.exe there): % and quotes are plain text', async (t) => {
  const root = tempRoot(t)
  const echo = echoScript(root)
  const host = hostWith(root)
  const args = ['%NLC_WIN_SECRET%', '100%', 'say "hi"']
  const [st, out] = await run(host, [NODE, echo, ...args], { env: { ...process.env, NLC_WIN_SECRET: 'expanded' } })
  assert.equal(st.exitCode, 0)
  assert.deepEqual(JSON.parse(out), args)
})

test('a bare name is found through PATH and PATHEXT of the command environment; the allowlist matches it as given', async (t) => {
  const root = tempRoot(t)
  batch(root)
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(path|pathext)$/i.test(k)))
  env.PATH = `${root};${process.env.PATH ?? process.env.Path ?? ''}`
  env.PATHEXT = '.COM;.EXE;.BAT;.CMD'
  const host = hostWith(root, {}, ['echo-args'])
  const [st, out] = await run(host, ['echo-args', 'a & b'], { env })
  assert.equal(st.exitCode, 0, await nc.readArtifact(st.stderr.artifactId))
  assert.deepEqual(JSON.parse(out), ['a & b'])
  // Allowing the bare name allows only that spelling.
  const e = await rejection(nc.startBackgroundCommand(host, ['echo-args.cmd', 'x'], { cwd: '.', env }))
  assert.equal(e.code, 'NLC_NOT_ALLOWED', e.message)
})
