// The MCP server after a restart (SPEC §15): with its logs kept, a new
// server answers the task ids an earlier one handed out; without, it does
// not (the control: nothing was kept to recover).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

import { NODE, tempRoot } from '../../__test__/helpers.ts'

const BIN = fileURLToPath(new URL('../bin/neurolink-commands-mcp.js', import.meta.url))
const SH = '/bin/sh'

type Result = { isError?: boolean; structuredContent?: Record<string, unknown> }

async function server(root: string, logs: string, keep: boolean): Promise<Client> {
  const env: Record<string, string> = { NEUROLINK_COMMANDS_LOG_DIR: logs }
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR
  if (keep) env.NEUROLINK_COMMANDS_MCP_KEEP_LOGS = '1'
  const transport = new StdioClientTransport({ command: NODE, args: [BIN, '--root', root, '--allow', SH], env, stderr: 'pipe' })
  const client = new Client({ name: 'nlc-mcp-recover-test', version: '1.0.0' })
  await client.connect(transport)
  return client
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  return (await c.callTool({ name, arguments: args })) as Result
}

for (const keep of [true, false]) {
  test(`a restarted server ${keep ? 'answers' : 'does not answer'} an earlier server's task id ${keep ? 'with its logs kept' : 'when its logs were removed'}`, async () => {
    const root = tempRoot('nlc-mcp-recover-')
    const logs = tempRoot('nlc-mcp-recover-logs-')
    const first = await server(root, logs, keep)
    const run = await call(first, 'run_command_bg', { argv: [SH, '-c', 'echo before the restart'] })
    const taskId = run.structuredContent!.taskId as string
    const done = await call(first, 'command_status', { taskId, waitMs: 10_000 })
    assert.equal(done.structuredContent!.state, 'exited')
    await first.close()

    const second = await server(root, logs, keep)
    try {
      const st = await call(second, 'command_status', { taskId })
      if (!keep) {
        assert.equal(st.isError, true)
        assert.equal(st.structuredContent!.code, 'NLC_UNKNOWN_TASK')
        return
      }
      assert.notEqual(st.isError, true)
      assert.equal(st.structuredContent!.state, 'exited')
      assert.equal(st.structuredContent!.recovered, true)
      const out = await call(second, 'command_output', { taskId, stream: 'stdout' })
      assert.equal(out.structuredContent!.content, 'before the restart\n')
    } finally {
      await second.close()
    }
  })
}
