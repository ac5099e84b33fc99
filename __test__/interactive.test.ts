// Interactive commands (SPEC §9): a pipe the host writes, a terminal the
// command runs in, and the command_input / command_list tools. Real programs
// throughout: cat, python3 reading input() and checking isatty and the
// window size, a SIGWINCH handler, a shell trap on INT.
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { groupMembers, logPath, nc, tempRoot, waitFor } from './helpers.ts'

const CAT = '/bin/cat'
const SH = '/bin/sh'
const PY = '/usr/bin/python3'

function host(): object {
  return { root: tempRoot('nlc-interactive-') }
}

function withPolicy(): object {
  const h = host()
  nc.setBackgroundCommandPolicy(h, {
    allowedExecutables: [CAT, SH, PY],
    cwdRoot: (h as { root: string }).root,
    defaultTimeoutMs: 60_000,
  })
  return h
}

async function stdoutText(h: object, taskId: string): Promise<string> {
  const page = await nc.readBackgroundCommandOutput(h, taskId, { stream: 'stdout', limit: 200_000 })
  return page.content
}

/** Wait until the command's stdout contains `needle`. */
async function waitForOutput(h: object, taskId: string, needle: string, ms = 15_000): Promise<string> {
  return waitFor(
    async () => {
      const text = await stdoutText(h, taskId)
      return text.includes(needle) ? text : ''
    },
    ms,
    `${JSON.stringify(needle)} in the output of ${taskId}`,
  )
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p
  } catch (e) {
    return e as Error
  }
  assert.fail('expected a rejection')
}

function thrown(f: () => unknown): Error {
  try {
    f()
  } catch (e) {
    return e as Error
  }
  assert.fail('expected a throw')
}

test('8 MiB written to cat arrive byte-exact while the event loop keeps ticking', async () => {
  const h = withPolicy()
  const data = randomBytes(8 * 1024 * 1024)
  const { taskId } = await nc.startBackgroundCommand(h, [CAT], { cwd: '.', stdin: 'pipe', maxOutputBytes: 64 * 1024 * 1024 })
  let ticks = 0
  const ticker = setInterval(() => ticks++, 1)
  const before = ticks
  const written = await nc.writeBackgroundCommandInput(h, taskId, data, { end: true })
  const during = ticks - before
  clearInterval(ticker)
  assert.deepEqual(written, { bytesWritten: data.length })
  // The write is far larger than a pipe (64 KiB): it could only finish while
  // cat read, and the JS thread ran timers all along.
  assert.ok(during >= 3, `the event loop ticked ${during} times during the write`)
  const st = await nc.awaitBackgroundCommand(h, taskId)
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 0)
  assert.equal(st.stdoutBytes, data.length)
  const got = readFileSync(logPath(taskId, 'stdout'))
  assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(data).digest('hex'))
  assert.equal(st.stdinOpen, false)
})

test('strings go as UTF-8, end closes the input, stdinOpen follows it', async () => {
  const h = withPolicy()
  // wc counts what it read once its input ends.
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'cat > got; wc -c < got; cat got'], { cwd: '.', stdin: 'pipe' })
  assert.equal(nc.getBackgroundCommandStatus(h, taskId).stdinOpen, true)
  assert.deepEqual(await nc.writeBackgroundCommandInput(h, taskId, 'héllo '), { bytesWritten: 7 })
  assert.equal(nc.getBackgroundCommandStatus(h, taskId).stdinOpen, true)
  assert.deepEqual(await nc.writeBackgroundCommandInput(h, taskId, Buffer.from('wörld'), { end: true }), { bytesWritten: 6 })
  assert.equal(nc.getBackgroundCommandStatus(h, taskId).stdinOpen, false)
  const st = await nc.awaitBackgroundCommand(h, taskId)
  assert.equal(st.state, 'exited')
  assert.equal(await stdoutText(h, taskId), '13\nhéllo wörld')
  // After end: the input is closed, and so after settling.
  const e = await rejection(nc.writeBackgroundCommandInput(h, taskId, 'more'))
  // code: NLC_NOT_RUNNING
  assert.match(e.message, /is not running \(it is exited\)/)
})

test('a write after end: true, before the command settled, is refused as closed', async () => {
  const h = withPolicy()
  // The command keeps running after its input ended.
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'cat; echo done; sleep 30'], { cwd: '.', stdin: 'pipe' })
  await nc.writeBackgroundCommandInput(h, taskId, 'x', { end: true })
  await waitForOutput(h, taskId, 'done')
  const st = nc.getBackgroundCommandStatus(h, taskId)
  assert.equal(st.state, 'running')
  assert.equal(st.stdinOpen, false)
  const e = await rejection(nc.writeBackgroundCommandInput(h, taskId, 'y'))
  // code: NLC_NOT_RUNNING
  assert.match(e.message, /input of background command "c[0-9a-f]+" is closed \(by an earlier end: true/)
  await nc.killBackgroundCommand(h, taskId)
})

test('a command that closes its input: the write is refused, the output kept', async () => {
  const h = withPolicy()
  // head reads one line and exits; the shell then closes its stdin too.
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'head -n 1; exec 0<&-; echo closed; sleep 30'], { cwd: '.', stdin: 'pipe' })
  await nc.writeBackgroundCommandInput(h, taskId, 'first\n')
  await waitForOutput(h, taskId, 'closed')
  // More than a pipe holds, so the write must notice that nobody reads.
  const e = await rejection(nc.writeBackgroundCommandInput(h, taskId, Buffer.alloc(1024 * 1024, 0x61)))
  // code: NLC_NOT_RUNNING
  assert.match(e.message, /is closed: the command closed it/)
  const st = nc.getBackgroundCommandStatus(h, taskId)
  assert.equal(st.stdinOpen, false)
  assert.equal(await stdoutText(h, taskId), 'first\nclosed\n')
  await nc.killBackgroundCommand(h, taskId)
})

test('writing to a command without an input names stdin: "pipe"; resizing one names terminal', async () => {
  const h = withPolicy()
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'sleep 30'], { cwd: '.' })
  assert.equal(nc.getBackgroundCommandStatus(h, taskId).stdinOpen, false)
  const e = await rejection(nc.writeBackgroundCommandInput(h, taskId, 'x'))
  // code: NLC_INVALID_ARGUMENT
  assert.match(e.message, /was started without an input.*stdin: "pipe"/)
  const r = thrown(() => nc.resizeBackgroundCommandTerminal(h, taskId, { cols: 100, rows: 40 }))
  // code: NLC_INVALID_ARGUMENT
  assert.match(r.message, /does not run in a terminal.*terminal: true/)
  await nc.killBackgroundCommand(h, taskId)
})

test('bad input: data, end, stdin, terminal sizes and resize sizes are refused clearly', async () => {
  const h = withPolicy()
  const { taskId } = await nc.startBackgroundCommand(h, [CAT], { cwd: '.', stdin: 'pipe' })
  for (const data of [42, null, undefined, {}, [1, 2], new Uint16Array(2), new ArrayBuffer(4)]) {
    const e = await rejection(nc.writeBackgroundCommandInput(h, taskId, data as unknown as string))
    // code: NLC_INVALID_ARGUMENT
    assert.match(e.message, /data must be a string \(written as UTF-8\) or a Uint8Array/, String(data))
  }
  const e = await rejection(nc.writeBackgroundCommandInput(h, taskId, 'x', { end: 'yes' as unknown as boolean }))
  // code: NLC_INVALID_ARGUMENT
  assert.match(e.message, /options\.end must be a boolean/)
  for (const stdin of ['inherit', 1, true]) {
    const s = await rejection(nc.startBackgroundCommand(h, [CAT], { cwd: '.', stdin: stdin as 'pipe' }))
    // code: NLC_INVALID_ARGUMENT
    assert.match(s.message, /options\.stdin must be "ignore" \(the default: \/dev\/null\) or "pipe"/)
  }
  for (const terminal of [{ cols: 0 }, { rows: -3 }, { cols: 80.5 }, { cols: 70000 }, { cols: '80' }, 'yes', 3]) {
    const s = await rejection(nc.startBackgroundCommand(h, [CAT], { cwd: '.', terminal: terminal as nc.TerminalSize }))
    // code: NLC_INVALID_ARGUMENT
    assert.match(s.message, /options\.terminal/, JSON.stringify(terminal))
  }
  const t = await nc.startBackgroundCommand(h, [CAT], { cwd: '.', terminal: true })
  for (const size of [{ cols: 0, rows: 10 }, { cols: 10 }, { cols: 10, rows: 2.5 }, null, 'big']) {
    const r = thrown(() => nc.resizeBackgroundCommandTerminal(h, t.taskId, size as { cols: number; rows: number }))
    // code: NLC_INVALID_ARGUMENT
    assert.match(r.message, /size/, JSON.stringify(size))
  }
  // The commands are unharmed by all that.
  assert.deepEqual(await nc.writeBackgroundCommandInput(h, taskId, 'ok', { end: true }), { bytesWritten: 2 })
  assert.equal((await nc.awaitBackgroundCommand(h, taskId)).state, 'exited')
  assert.equal(await stdoutText(h, taskId), 'ok')
  await nc.killBackgroundCommand(h, t.taskId)
})

test('a terminal: isatty for all three streams, the requested size, TERM, its own session and group', async () => {
  const h = withPolicy()
  const script =
    'import os, shutil\n' +
    'print("tty", [os.isatty(i) for i in range(3)])\n' +
    'print("size", os.get_terminal_size(0).columns, os.get_terminal_size(0).lines)\n' +
    'print("term", os.environ.get("TERM"))\n' +
    'print("leader", os.getsid(0) == os.getpid(), os.getpgrp() == os.getpid(), os.tcgetpgrp(0) == os.getpid())\n' +
    'import sys; print("err", file=sys.stderr)\n'
  // An environment without TERM gets xterm-256color.
  const { taskId } = await nc.startBackgroundCommand(h, [PY, '-c', script], {
    cwd: '.',
    terminal: { cols: 123, rows: 45 },
    env: { PATH: '/usr/bin:/bin' },
  })
  const st = await nc.awaitBackgroundCommand(h, taskId)
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 0)
  // The terminal turns \n into \r\n; stderr went to the terminal too.
  assert.equal(await stdoutText(h, taskId), 'tty [True, True, True]\r\nsize 123 45\r\nterm xterm-256color\r\nleader True True True\r\nerr\r\n')
  assert.equal(st.stderrBytes, 0)
  assert.equal(readFileSync(logPath(taskId, 'stderr')).length, 0)

  // The default size, and a TERM the environment names.
  const d = await nc.startBackgroundCommand(h, [PY, '-c', 'import os; print(os.get_terminal_size(1), os.environ["TERM"])'], {
    cwd: '.',
    terminal: true,
    env: { TERM: 'dumb', PATH: '/usr/bin:/bin' },
  })
  await nc.awaitBackgroundCommand(h, d.taskId)
  assert.equal(await stdoutText(h, d.taskId), 'os.terminal_size(columns=80, lines=24) dumb\r\n')
  // The inherited environment keeps the host's TERM, if it names one.
  const inherited = await nc.startBackgroundCommand(h, [PY, '-c', 'import os; print(os.environ["TERM"])'], { cwd: '.', terminal: true })
  await nc.awaitBackgroundCommand(h, inherited.taskId)
  assert.equal(await stdoutText(h, inherited.taskId), `${process.env.TERM ?? 'xterm-256color'}\r\n`)
  // A plain command has no terminal.
  // It reads its input to the end, so the write below always finds it running.
  const p = await nc.startBackgroundCommand(h, [PY, '-c', 'import os, sys; print([os.isatty(i) for i in range(3)]); sys.stdin.read()'], {
    cwd: '.',
    stdin: 'pipe',
  })
  await nc.writeBackgroundCommandInput(h, p.taskId, '', { end: true })
  await nc.awaitBackgroundCommand(h, p.taskId)
  assert.equal(await stdoutText(h, p.taskId), '[False, False, False]\n')
})

test('a terminal: resize delivers SIGWINCH with the new size', async () => {
  const h = withPolicy()
  const script =
    'import os, signal, sys, time\n' +
    'def on(s, f):\n' +
    '    z = os.get_terminal_size(0); print("winch", z.columns, z.lines, flush=True)\n' +
    '    if z.columns == 132: sys.exit(0)\n' +
    'signal.signal(signal.SIGWINCH, on)\n' +
    'print("ready", flush=True)\n' +
    'while True: time.sleep(0.05)\n'
  const { taskId } = await nc.startBackgroundCommand(h, [PY, '-c', script], { cwd: '.', terminal: { cols: 80, rows: 24 } })
  await waitForOutput(h, taskId, 'ready')
  nc.resizeBackgroundCommandTerminal(h, taskId, { cols: 100, rows: 30 })
  await waitForOutput(h, taskId, 'winch 100 30')
  nc.resizeBackgroundCommandTerminal(h, taskId, { cols: 132, rows: 43 })
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(st.state, 'exited')
  assert.equal(await stdoutText(h, taskId), 'ready\r\nwinch 100 30\r\nwinch 132 43\r\n')
  const e = thrown(() => nc.resizeBackgroundCommandTerminal(h, taskId, { cols: 90, rows: 20 }))
  // code: NLC_NOT_RUNNING
  assert.match(e.message, /is not running \(it is exited\), so its terminal is gone/)
})

test('a terminal: a python input() prompt answered through command_input', async () => {
  const h = withPolicy()
  const tools = nc.createBackgroundCommandTools(h, { extra: ['command_input', 'command_list'] })
  const started = (await tools.run_command_bg.execute({
    argv: [PY, '-c', 'name = input("Your name? "); print("Hello, " + name + "!")'],
    terminal: true,
  })) as nc.RunCommandToolResult
  assert.ok(started.taskId, JSON.stringify(started))
  await waitForOutput(h, started.taskId, 'Your name? ')
  const r = (await tools.command_input!.execute({ taskId: started.taskId, text: 'Ada', keys: ['enter'] })) as nc.CommandInputToolResult
  assert.equal(r.bytesWritten, 4)
  assert.equal(r.taskId, started.taskId)
  assert.equal(typeof r.running, 'number')
  assert.equal(typeof r.finished, 'number')
  const st = await nc.awaitBackgroundCommand(h, started.taskId, { timeoutMs: 15_000 })
  assert.equal(st.state, 'exited')
  // The terminal echoes what was typed.
  assert.equal(await stdoutText(h, started.taskId), 'Your name? Ada\r\nHello, Ada!\r\n')
})

test('a terminal: ctrl-c reaches a shell trap on INT through the line discipline', async () => {
  const h = withPolicy()
  const tools = nc.createBackgroundCommandTools(h, { extra: ['command_input'] })
  // The trap runs once the foreground `sleep` (same group) dies of SIGINT.
  const script = "trap 'echo got-INT; exit 3' INT; echo armed; while :; do sleep 1; done"
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', script], { cwd: '.', terminal: true })
  await waitForOutput(h, taskId, 'armed')
  const r = (await tools.command_input!.execute({ taskId, keys: ['ctrl-c'] })) as nc.CommandInputToolResult
  assert.equal(r.bytesWritten, 1)
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 15_000 })
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 3)
  // The line discipline echoes ctrl-c as ^C.
  assert.match(await stdoutText(h, taskId), /^armed\r\n(\^C)?got-INT\r\n$/)
})

test('a terminal: end writes ctrl-d and the input stays open; kill stops the whole group', async () => {
  const h = withPolicy()
  // cat reads lines until end of file, then the shell starts a grandchild.
  const { taskId } = await nc.startBackgroundCommand(h, [SH, '-c', 'cat; echo eof; sleep 300 & echo child $!; wait'], {
    cwd: '.',
    terminal: true,
  })
  const w = await nc.writeBackgroundCommandInput(h, taskId, 'line\r', { end: true })
  assert.deepEqual(w, { bytesWritten: 6 })
  const text = await waitForOutput(h, taskId, 'child ')
  assert.match(text, /^line\r\nline\r\neof\r\nchild \d+\r\n$/)
  const st = nc.getBackgroundCommandStatus(h, taskId)
  assert.equal(st.state, 'running')
  assert.equal(st.stdinOpen, true)
  const child = Number(/child (\d+)/.exec(text)![1])
  // The command leads its session and its group; the grandchild is in it.
  const pgid = Number(readFileSync(`/proc/${child}/stat`, 'utf8').split(') ')[1].split(' ')[2])
  assert.ok(groupMembers(pgid).includes(child))
  const killed = await nc.killBackgroundCommand(h, taskId)
  assert.equal(killed.state, 'killed')
  assert.equal(killed.stdinOpen, false)
  await waitFor(() => groupMembers(pgid).length === 0, 10_000, 'the whole group to be gone')
  const e = await rejection(nc.writeBackgroundCommandInput(h, taskId, 'x'))
  // code: NLC_NOT_RUNNING
  assert.match(e.message, /is not running \(it is killed\)/)
})

test('the terminal output counts against the same exact byte cap', async () => {
  const h = withPolicy()
  const { taskId } = await nc.startBackgroundCommand(h, [PY, '-c', 'import sys\nwhile True: sys.stdout.write("x" * 4096)'], {
    cwd: '.',
    terminal: true,
    maxOutputBytes: 100_001,
  })
  const st = await nc.awaitBackgroundCommand(h, taskId, { timeoutMs: 30_000 })
  assert.equal(st.state, 'output-limit')
  assert.equal(st.stdoutBytes, 100_001)
  assert.equal(readFileSync(logPath(taskId, 'stdout')).length, 100_001)
  assert.ok(st.stdout && st.stdout.sizeBytes === 100_001)
})

test('tools: the default set stays four; extra adds command_input and command_list; bad extras throw', async () => {
  const h = withPolicy()
  assert.deepEqual(Object.keys(nc.createBackgroundCommandTools(h)).sort(), ['command_kill', 'command_output', 'command_status', 'run_command_bg'])
  const all = nc.createBackgroundCommandTools(h, { extra: ['command_input', 'command_list'] })
  assert.deepEqual(Object.keys(all).sort(), ['command_input', 'command_kill', 'command_list', 'command_output', 'command_status', 'run_command_bg'])
  assert.deepEqual(Object.keys(nc.createBackgroundCommandTools(h, { extra: ['command_list'] })).length, 5)
  for (const options of [{ extra: ['command_shell'] }, { extra: 'command_input' }, 7]) {
    const e = thrown(() => nc.createBackgroundCommandTools(h, options as nc.BackgroundCommandToolsOptions))
    assert.ok(e instanceof TypeError)
    assert.match(e.message, /command_input/)
  }
  const props = (all.run_command_bg.inputSchema.properties ?? {}) as Record<string, { type: string }>
  assert.equal(props.stdin.type, 'boolean')
  assert.equal(props.terminal.type, 'boolean')
  const inputProps = (all.command_input!.inputSchema.properties ?? {}) as Record<string, { items?: { enum: string[] } }>
  assert.deepEqual(inputProps.keys.items!.enum, ['enter', 'tab', 'escape', 'backspace', 'up', 'down', 'right', 'left', 'ctrl-c', 'ctrl-d', 'ctrl-z'])
})

test('tools: command_input sends every named key as a terminal sends it, and refuses bad input in-band', async () => {
  const h = withPolicy()
  const tools = nc.createBackgroundCommandTools(h, { extra: ['command_input'] })
  const ctx = { sessionId: `interactive-keys-${process.pid}` }
  const run = (await tools.run_command_bg.execute({ argv: [CAT], stdin: true }, ctx)) as nc.RunCommandToolResult
  const keys = ['enter', 'tab', 'escape', 'backspace', 'up', 'down', 'right', 'left', 'ctrl-c', 'ctrl-d', 'ctrl-z']
  const r = (await tools.command_input!.execute({ taskId: run.taskId, text: 'k:', keys, end: true }, ctx)) as nc.CommandInputToolResult
  const expected = 'k:\r\t\x1b\x7f\x1b[A\x1b[B\x1b[C\x1b[D\x03\x04\x1a'
  assert.equal(r.bytesWritten, Buffer.byteLength(expected))
  assert.equal(r.stdinOpen, false)
  assert.equal(typeof r.running, 'number')
  await nc.awaitBackgroundCommand(h, run.taskId)
  assert.equal(readFileSync(logPath(run.taskId, 'stdout'), 'latin1'), expected)

  const live = (await tools.run_command_bg.execute({ argv: [CAT], stdin: true }, ctx)) as nc.RunCommandToolResult
  const refusals: Array<[Record<string, unknown>, RegExp]> = [
    [{ taskId: live.taskId, keys: ['enter', 'f13'] }, /keys\[1\] "f13" is not a key name: use enter, tab, escape/],
    [{ taskId: live.taskId, keys: 'enter' }, /keys must be an array of key names/],
    [{ taskId: live.taskId, text: 5 }, /text must be a string/],
    [{ taskId: live.taskId, text: 'a', end: 'yes' }, /end must be true or false/],
    [{ taskId: live.taskId, data: 'a' }, /unknown parameter "data": this tool takes only taskId, text, keys, end/],
    [{ taskId: 'c0nope', text: 'a' }, /No background command "c0nope"/],
  ]
  for (const [params, pattern] of refusals) {
    const out = (await tools.command_input!.execute(params, ctx)) as { isError: true; error: string }
    // code: NLC_INVALID_ARGUMENT (the unknown task: NLC_UNKNOWN_TASK)
    assert.equal(out.isError, true, JSON.stringify(out))
    assert.match(out.error, pattern)
  }
  // Nothing to write is a write of 0 bytes: the status comes back, the input stays open.
  const poll = await tools.command_input.execute({ taskId: live.taskId }, ctx)
  assert.ok(!nc.isToolRefusal(poll), JSON.stringify(poll))
  assert.equal(poll.bytesWritten, 0)
  assert.equal(poll.stdinOpen, true)
  assert.equal(poll.state, 'running')
  const noInput = (await tools.run_command_bg.execute({ argv: [SH, '-c', 'sleep 30'] }, ctx)) as nc.RunCommandToolResult
  const out = (await tools.command_input!.execute({ taskId: noInput.taskId, text: 'a' }, ctx)) as { isError: true; error: string }
  // code: NLC_INVALID_ARGUMENT
  assert.match(out.error, /start it with run_command_bg stdin: true \(or terminal: true\)/)
  const empty = await tools.command_input.execute({ taskId: noInput.taskId }, ctx)
  assert.ok(nc.isToolRefusal(empty) && /run_command_bg stdin: true/.test(empty.error), 'an empty write still checks that the command takes input')
  const bad = (await tools.run_command_bg.execute({ argv: [CAT], stdin: 'yes' }, ctx)) as { isError: true; error: string }
  // code: NLC_INVALID_ARGUMENT
  assert.match(bad.error, /stdin must be true or false/)
  await nc.killBackgroundCommand(h, live.taskId)
  await nc.killBackgroundCommand(h, noInput.taskId)
})

test('tools: command_list gives the session rows oldest first, filtered by running, plus counters', async () => {
  const h = withPolicy()
  const tools = nc.createBackgroundCommandTools(h, { extra: ['command_list'] })
  const ctx = { sessionId: `interactive-list-${process.pid}` }
  const a = (await tools.run_command_bg.execute({ argv: [SH, '-c', 'exit 0'] }, ctx)) as nc.RunCommandToolResult
  await nc.awaitBackgroundCommand(h, a.taskId)
  const b = (await tools.run_command_bg.execute({ argv: [SH, '-c', 'sleep 30'] }, ctx)) as nc.RunCommandToolResult
  // Another session's command is not listed.
  await tools.run_command_bg.execute({ argv: [SH, '-c', 'sleep 30'] }, { sessionId: `${ctx.sessionId}-other` })
  type ListResult = nc.CommandListToolResult
  const all = (await tools.command_list!.execute({}, ctx)) as ListResult
  assert.deepEqual(
    all.commands.map((c) => c.taskId),
    [a.taskId, b.taskId],
  )
  assert.equal(all.running, 1)
  const running = (await tools.command_list!.execute({ running: true }, ctx)) as ListResult
  assert.deepEqual(
    running.commands.map((c) => c.taskId),
    [b.taskId],
  )
  const settled = (await tools.command_list!.execute({ running: false }, ctx)) as ListResult
  assert.deepEqual(
    settled.commands.map((c) => [c.taskId, c.state, c.exitCode]),
    [[a.taskId, 'exited', 0]],
  )
  const refused = (await tools.command_list!.execute({ running: 'yes' }, ctx)) as { isError: true; error: string }
  // code: NLC_INVALID_ARGUMENT
  assert.match(refused.error, /running must be true or false/)
  await nc.killAllBackgroundCommands(h)
})
