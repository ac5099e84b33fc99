// Terminal mode on Windows: the command runs attached to a pseudo console
// (ConPTY) of its own; what the console shows is its stdout, what is
// written to it is typed there. Under wine only a program that opens the
// console by name (\\.\CONOUT$, \\.\CONIN$) is served, so these commands
// do; an ordinary program printing to its standard output, a resize and
// the end of input are in native-only.test.mjs.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { NODE, allGone, alive, hostWith, nc, screenText, script, settle, shown, tempRoot } from './helpers.mjs'

/** A node script that talks to the console it is attached to by name. */
function consoleScript(dir, body) {
  return script(
    dir,
    'console.js',
    `const fs = require('node:fs')
const out = fs.openSync('\\\\\\\\.\\\\CONOUT$', 'r+')
const input = fs.openSync('\\\\\\\\.\\\\CONIN$', 'r+')
const show = (s) => fs.writeSync(out, s + '\\r\\n')
const line = () => {
  const b = Buffer.alloc(512)
  return b.toString('utf8', 0, fs.readSync(input, b, 0, 512, null)).trim()
}
${body}
`,
  )
}

test('a terminal command shows on its console, reads what is typed, exits with its code', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const s = consoleScript(root, "show('ready ' + process.cwd())\nshow('read [' + line() + ']')\nprocess.exit(3)")
  const h = await nc.startBackgroundCommand(host, [NODE, s], { cwd: '.', terminal: { cols: 100, rows: 30 } })
  const st0 = nc.getBackgroundCommandStatus(host, h.taskId)
  assert.equal(st0.stdinOpen, true, JSON.stringify(st0))
  await shown(host, h.taskId, `ready ${root}`)
  const w = await nc.writeBackgroundCommandInput(host, h.taskId, 'typed ☃\r')
  assert.equal(w.bytesWritten, Buffer.byteLength('typed ☃\r'))
  const st = await settle(host, h.taskId)
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.exitCode, 3)
  assert.equal(st.error, undefined, JSON.stringify(st))
  const text = screenText(await nc.readArtifact(st.stdout.artifactId))
  // The console echoes what was typed: the UTF-8 written arrived as the one
  // character it encodes.
  assert.match(text, /typed ☃\r\n/)
  // The program read the line (ReadFile gives it in the console's code
  // page, where ☃ is one unmappable character).
  assert.match(text, /read \[typed \S\]/)
  // Everything it shows is on the console: no stderr of its own.
  assert.equal(st.stderrBytes, 0)
})

test('the tools run a terminal command and type into it', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const tools = nc.createBackgroundCommandTools(host, { extra: ['command_input'] })
  const s = consoleScript(root, "show('name?')\nshow('hello ' + line())\nprocess.exit(0)")
  const started = await tools.run_command_bg.execute({ argv: [NODE, s], terminal: true })
  assert.ok(!nc.isToolRefusal(started), JSON.stringify(started))
  await shown(host, started.taskId, 'name?')
  const typed = await tools.command_input.execute({ taskId: started.taskId, text: 'Ada', keys: ['enter'] })
  assert.ok(!nc.isToolRefusal(typed), JSON.stringify(typed))
  const st = await tools.command_status.execute({ taskId: started.taskId, waitMs: 60_000 })
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.exitCode, 0)
  assert.match(screenText(await nc.readArtifact(st.stdout.artifactId)), /hello Ada/)
})

test('killing a terminal command ends its whole tree, and it settles', async (t) => {
  const root = tempRoot(t)
  const host = hostWith(root)
  const s = consoleScript(
    root,
    "const g = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' })\nshow('pid ' + g.pid + ' end')\nsetInterval(() => {}, 1000)",
  )
  const h = await nc.startBackgroundCommand(host, [NODE, s], { cwd: '.', terminal: true })
  const text = await shown(host, h.taskId, ' end')
  const pid = Number(/pid (\d+) end/.exec(text)[1])
  assert.ok(alive(pid), 'control: the grandchild runs before the kill')
  const st = await nc.killBackgroundCommand(host, h.taskId, 'SIGKILL')
  assert.equal(st.state, 'killed', JSON.stringify(st))
  assert.equal(st.signal, 'SIGKILL')
  await allGone([pid])
  // A settled terminal takes no input and no resize.
  const e = await nc.writeBackgroundCommandInput(host, h.taskId, 'x').then(
    () => assert.fail('a write to a settled command succeeded'),
    (err) => err,
  )
  assert.equal(e.code, 'NLC_NOT_RUNNING', e.message)
  assert.throws(() => nc.resizeBackgroundCommandTerminal(host, h.taskId, { cols: 90, rows: 20 }), { code: 'NLC_NOT_RUNNING' })
})
