// What the MCP layer costs: the same tool calls made in-process (the
// library's tool objects) and through the server (the SDK's client over
// stdio), side by side in one run.
//
//   node mcp/bench/roundtrip.mjs        (after pnpm run build)
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import nc from 'neurolink-commands'

const BIN = fileURLToPath(new URL('../bin/neurolink-commands-mcp.js', import.meta.url))
const CALLS = 500
const PAGE_MIB = 16
const root = realpathSync(mkdtempSync(join(tmpdir(), 'nlc-mcp-bench-')))
const script = `const b=Buffer.alloc(1<<20,'é'.repeat(1)+'abcdefghij\\n');for(let i=0;i<${PAGE_MIB};i++)process.stdout.write(b)`

async function timed(fn) {
  const t0 = process.hrtime.bigint()
  await fn()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

// In-process: the tool objects the server serves.
const host = {}
nc.setBackgroundCommandPolicy(host, { cwdRoot: root, allowedExecutables: [process.execPath] })
const tools = nc.createBackgroundCommandTools(host)
const started = await tools.run_command_bg.execute({ argv: [process.execPath, '-e', script] })
await tools.command_status.execute({ taskId: started.taskId, waitMs: 60000 })
const direct = {
  status: await timed(async () => {
    for (let i = 0; i < CALLS; i++) await tools.command_status.execute({ taskId: started.taskId })
  }),
  pages: await timed(async () => {
    for (let offset = 0; ; offset += 200000) {
      const p = await tools.command_output.execute({ taskId: started.taskId, offset, limit: 200000 })
      if (!p.hasMore) break
    }
  }),
}

// Through the server.
const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--root', root, '--allow', process.execPath] })
const client = new Client({ name: 'bench', version: '1' })
await client.connect(transport)
const call = (name, args) => client.callTool({ name, arguments: args })
const s = await call('run_command_bg', { argv: [process.execPath, '-e', script] })
await call('command_status', { taskId: s.structuredContent.taskId, waitMs: 60000 })
const taskId = s.structuredContent.taskId
const mcp = {
  status: await timed(async () => {
    for (let i = 0; i < CALLS; i++) await call('command_status', { taskId })
  }),
  pages: await timed(async () => {
    for (let offset = 0; ; offset += 200000) {
      const p = await call('command_output', { taskId, offset, limit: 200000 })
      if (!p.structuredContent.hasMore) break
    }
  }),
}
await client.close()
rmSync(root, { recursive: true, force: true })

const row = (what, d, m) => `| ${what} | ${d.toFixed(1)} ms | ${m.toFixed(1)} ms | ${(m / d).toFixed(1)}× |`
console.log('| case | in-process tools | through MCP (stdio) | ratio |')
console.log('|---|---|---|---|')
console.log(row(`${CALLS} command_status calls`, direct.status, mcp.status))
console.log(row(`${PAGE_MIB} MiB paged back in 200000-character pages`, direct.pages, mcp.pages))
