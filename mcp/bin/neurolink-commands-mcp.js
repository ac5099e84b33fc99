#!/usr/bin/env node
// neurolink-commands-mcp: the stdio MCP server (see the package README).
import { main } from '../lib/server.js'

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code
  },
  (e) => {
    process.stderr.write(`neurolink-commands-mcp: ${e instanceof Error ? e.stack : String(e)}\n`)
    process.exit(1)
  },
)
