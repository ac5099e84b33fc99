// The MCP server on Windows (SPEC §12, §14): node.exe starts the server's bin
// as its child through the SDK's own client and stdio transport (Windows
// pipes both ways), and everything goes through the protocol — the tool list,
// a run paged back exactly, a tree killed, the refusals a Windows host makes
// in tool terms, and nothing left running once the client closes.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { NODE, allGone, alive, end, jsonFile, nc, script, tempRoot, treeScript, treeWithoutJob } from './helpers.mjs'

const MCP = fileURLToPath(new URL('../../mcp/', import.meta.url))
const BIN = join(MCP, 'bin', 'neurolink-commands-mcp.js')
// The SDK is the MCP package's dependency, loaded from its real directory
// (a junction natively; under wine Node's own realpath cannot see pnpm's
// links, the native one can), so its own dependencies are found beside it.
const SDK = realpathSync.native(join(MCP, 'node_modules', '@modelcontextprotocol', 'sdk'))
const sdk = createRequire(join(SDK, 'package.json'))
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport } = sdk('@modelcontextprotocol/sdk/client/stdio.js')
// Under wine the server resolves its modules the same way through this hook
// (windows.sh sets it; natively there is none).
const SERVER_FLAGS = process.env.NLC_WINE_IMPORT ? ['--import', pathToFileURL(process.env.NLC_WINE_IMPORT).href] : []

/** Starts the server with `args` and connects a client; `cleanup` is handed what closes it (e.g. a test's t.after). */
async function connect(cleanup, args) {
  // The whole environment: under wine the server finds the gnu addon through
  // NAPI_RS_NATIVE_LIBRARY_PATH, which the SDK's default environment drops.
  const transport = new StdioClientTransport({ command: NODE, args: [...SERVER_FLAGS, BIN, ...args], env: { ...process.env }, stderr: 'pipe' })
  let err = ''
  transport.stderr.on('data', (d) => {
    err += d.toString()
  })
  const client = new Client({ name: 'nlc-win-mcp-test', version: '1.0.0' })
  await client.connect(transport)
  const pid = transport.pid
  assert.ok(pid, 'the server has a pid')
  cleanup(async () => {
    await client.close().catch(() => {})
    end(pid)
  })
  return { client, pid, stderr: () => err }
}

async function call(s, name, args) {
  return await s.client.callTool({ name, arguments: args })
}

function text(r) {
  return r.content.map((c) => c.text ?? '').join('\n')
}

function ok(r) {
  assert.notEqual(r.isError, true, `expected a result, got the tool error ${text(r)}`)
  assert.ok(r.structuredContent, 'a result carries structuredContent')
  return r.structuredContent
}

/** A tool error: isError, the code in structuredContent and in the text. */
function refused(r, code) {
  assert.equal(r.isError, true, `expected a tool error, got ${text(r)}`)
  assert.equal(r.structuredContent.code, code, text(r))
  assert.ok(text(r).startsWith(`${code}: `), text(r))
  return r.structuredContent.error
}

// One server for all but the confined test (a server's start costs seconds
// under wine), allowing node.exe and a batch program, its root given as
// --root=<drive letter path>; the last of them closes it. A short grace:
// under wine SIGTERM's console break fails, so a stop waits out the grace
// before ending the job, and the client kills a server still running 2 s
// after closing its input (natively node.exe heeds the break).
let shared
let closeShared
let root
let cmd
before(async () => {
  root = realpathSync.native(mkdtempSync(join(tmpdir(), 'nlc-win-mcp-')))
  const echo = script(root, 'echo-argv.js', 'process.stdout.write(JSON.stringify(process.argv.slice(2)))\n')
  cmd = script(root, 'echo-args.cmd', `@echo off\r\n"${NODE}" "${echo}" %*\r\n`)
  assert.match(root, /^[A-Za-z]:\\/)
  shared = await connect((close) => (closeShared = close), [`--root=${root}`, '--allow', NODE, '--allow', cmd, '--kill-grace-ms', '300'])
})
after(async () => {
  await closeShared?.()
  rmSync(root, { recursive: true, force: true, maxRetries: 10 })
})

test("tools/list offers the library's command tools with their JSON Schemas unchanged", async () => {
  const { tools } = await shared.client.listTools()
  const host = {}
  nc.setBackgroundCommandPolicy(host, { cwdRoot: root, allowedExecutables: [NODE, cmd] })
  const lib = Object.values(nc.createBackgroundCommandTools(host, { extra: ['command_input', 'command_list'] }))
  assert.deepEqual(tools.map((x) => x.name).sort(), lib.map((x) => x.name).sort())
  for (const name of ['run_command_bg', 'command_status', 'command_output', 'command_kill']) {
    assert.ok(
      tools.some((x) => x.name === name),
      `${name} is offered`,
    )
  }
  for (const x of tools) {
    const mine = lib.find((l) => l.name === x.name)
    assert.deepEqual(x.inputSchema, JSON.parse(JSON.stringify(mine.inputSchema)), `${x.name}'s schema is the library's`)
    assert.equal(x.description, mine.description)
  }
})

test('run_command_bg of node.exe printing multi-byte text → command_status waits until settled → command_output gives it exactly', async () => {
  const unit = 'abc é ☃ 𝄞 日本語\r\n'
  const expected = unit.repeat(2_000)
  const printer = script(root, 'print.js', `process.stdout.write(${JSON.stringify(unit)}.repeat(2000))\n`)
  const started = ok(await call(shared, 'run_command_bg', { argv: [NODE, printer] }))
  assert.match(started.taskId, /^c\d+[0-9a-f]{12}$/)
  const st = ok(await call(shared, 'command_status', { taskId: started.taskId, waitMs: 30_000 }))
  assert.equal(st.state, 'exited', JSON.stringify(st))
  assert.equal(st.exitCode, 0)
  assert.equal(st.stdoutBytes, Buffer.byteLength(expected))
  let got = ''
  for (let offset = 0; ; ) {
    // 997 code units a page: boundaries fall inside surrogate pairs too.
    const page = ok(await call(shared, 'command_output', { taskId: started.taskId, offset, limit: 997 }))
    assert.equal(page.totalSize, expected.length)
    got += page.content
    if (!page.hasMore) break
    offset += 997
  }
  assert.equal(got, expected)
})

test('command_kill ends the command and its detached grandchild (the job)', async (t) => {
  const tree = treeScript(root)
  const pidFile = join(root, 'kill-pids.json')
  const started = ok(await call(shared, 'run_command_bg', { argv: [NODE, tree, pidFile] }))
  const pids = await jsonFile(pidFile)
  t.after(() => [pids.grandchild, pids.child].forEach(end))
  assert.ok(alive(pids.child) && alive(pids.grandchild), 'both run before the kill')
  const killed = ok(await call(shared, 'command_kill', { taskId: started.taskId }))
  assert.equal(killed.state, 'killed', JSON.stringify(killed))
  await allGone([pids.child, pids.grandchild])
})

test('confine: the server refuses to start (exit 2, as on a Linux kernel that cannot confine); nothing runs', () => {
  const marker = join(root, 'ran.txt')
  // Through a config file whose cwdRoot resolves against its own directory (a drive letter path).
  const config = join(root, 'sub', 'mcp.json')
  mkdirSync(join(root, 'sub'))
  writeFileSync(config, JSON.stringify({ cwdRoot: '..', allowedExecutables: [NODE], confine: {} }))
  const r = spawnSync(NODE, [...SERVER_FLAGS, BIN, '--config', config], { encoding: 'utf8', input: '', timeout: 60_000 })
  assert.equal(r.status, 2, r.stderr)
  assert.match(r.stderr, /confinement was asked for, but this kernel cannot enforce it/)
  assert.match(r.stderr, /Leave out --confine to run without it/)
  assert.equal(r.stdout, '')
  assert.equal(existsSync(marker), false)
})

test('control: the same command runs on a server without --confine', async () => {
  const marker = join(root, 'ran.txt')
  const argv = [NODE, '-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x')`]
  const started = ok(await call(shared, 'run_command_bg', { argv }))
  assert.equal(ok(await call(shared, 'command_status', { taskId: started.taskId, waitMs: 30_000 })).exitCode, 0)
  assert.equal(existsSync(marker), true)
})

test('a .cmd argument cmd.exe would read as syntax is refused in tool terms (NLC_SHELL_SYNTAX); a plain one runs', async () => {
  const before = ok(await call(shared, 'command_list', {})).commands.length
  const error = refused(await call(shared, 'run_command_bg', { argv: [cmd, 'fine', '%PATH%'] }), 'NLC_SHELL_SYNTAX')
  assert.ok(error.includes('argv[2]'), error)
  assert.equal(ok(await call(shared, 'command_list', {})).commands.length, before, 'nothing was started')
  // The control: arguments cmd.exe cannot misread reach the program exactly.
  const started = ok(await call(shared, 'run_command_bg', { argv: [cmd, 'a & b', '(x)'] }))
  const st = ok(await call(shared, 'command_status', { taskId: started.taskId, waitMs: 30_000 }))
  assert.equal(st.exitCode, 0, JSON.stringify(st))
  assert.deepEqual(JSON.parse(ok(await call(shared, 'command_output', { taskId: started.taskId })).content), ['a & b', '(x)'])
})

test('when the client closes, the server stops its commands (tree included) and exits', async (t) => {
  const tree = treeScript(root)
  const pidFile = join(root, 'close-pids.json')
  ok(await call(shared, 'run_command_bg', { argv: [NODE, tree, pidFile] }))
  const pids = await jsonFile(pidFile)
  t.after(() => [pids.grandchild, pids.child].forEach(end))
  assert.ok(alive(pids.child) && alive(pids.grandchild), 'both run before the close')
  await shared.client.close()
  await allGone([shared.pid, pids.child, pids.grandchild])
  assert.match(shared.stderr(), /stopping \(stdin closed\); commands stopped: 1\r?\n/)
})

test('without an allowed executable the server exits with code 2, its example a Windows path', () => {
  const r = spawnSync(NODE, [...SERVER_FLAGS, BIN, '--root', root], { encoding: 'utf8', input: '', timeout: 60_000 })
  assert.equal(r.status, 2, r.stderr)
  assert.match(r.stderr, /missing --allow <exe>: .* e\.g\. --allow "C:\\Program Files\\nodejs\\node\.exe"/)
  assert.equal(r.stdout, '')
})

test('control: a detached grandchild outlives its parent when no job holds it', async (t) => {
  const grandchild = await treeWithoutJob(t, tempRoot(t))
  assert.equal(alive(grandchild), true, 'only a job ends it')
})
