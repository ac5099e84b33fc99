// Writes docs/tool-schemas.json: the tools' contract as the engine defines
// it (crates/engine/src/tools). Run after changing a tool spec or a shared
// limit, and commit the result; __test__/contract.test.ts fails while it
// is stale. `--check` only compares (exit 1 when stale).
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const native = require('../binding.js')
const file = fileURLToPath(new URL('../docs/tool-schemas.json', import.meta.url))
const text = native.toolContract()
if (process.argv.includes('--check')) {
  let old = ''
  try {
    old = readFileSync(file, 'utf8')
  } catch {
    // missing counts as stale
  }
  if (old !== text) {
    process.stderr.write('docs/tool-schemas.json is stale: run node scripts/tool-schemas.mjs\n')
    process.exit(1)
  }
} else {
  writeFileSync(file, text)
}
