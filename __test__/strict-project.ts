// A throwaway TypeScript project that sees this package only as a user does:
// `neurolink-commands` in node_modules (a link to the repository, so its
// package.json "types" and "main" are what resolve) and @types/node.
// `compile` runs tsc with --strict; what it emits can then be run with node.
import { execFile } from 'node:child_process'
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'

import { tempRoot } from './helpers.ts'

const run = promisify(execFile)
export const repo = resolve(__dirname, '..')
const TSC = join(repo, 'node_modules', 'typescript', 'bin', 'tsc')

/** Where the packages a project may also import are installed (the agent SDKs are dev dependencies; the MCP SDK is mcp/'s). */
const OTHER_MODULES: Record<string, string> = {
  ai: join(repo, 'node_modules', 'ai'),
  '@openai/agents': join(repo, 'node_modules', '@openai', 'agents'),
  zod: join(repo, 'node_modules', 'zod'),
  '@modelcontextprotocol/sdk': join(repo, 'mcp', 'node_modules', '@modelcontextprotocol', 'sdk'),
}

/**
 * A fresh project directory holding `files` (path → text) and a strict
 * tsconfig that lists them; `modules` names other packages it imports
 * (keys of OTHER_MODULES), linked from where they are installed.
 */
export function strictProject(files: Record<string, string>, prefix = 'nlc-strict-', modules: string[] = []): string {
  const dir = tempRoot(prefix)
  const nm = join(dir, 'node_modules')
  mkdirSync(join(nm, '@types'), { recursive: true })
  symlinkSync(repo, join(nm, 'neurolink-commands'))
  symlinkSync(realpathSync(join(repo, 'node_modules', '@types', 'node')), join(nm, '@types', 'node'))
  for (const m of modules) {
    mkdirSync(dirname(join(nm, m)), { recursive: true })
    symlinkSync(realpathSync(OTHER_MODULES[m]!), join(nm, m))
  }
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'nlc-strict-host', private: true }))
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: ['node'],
        outDir: 'dist',
        noEmitOnError: true,
        skipLibCheck: false,
        // JavaScript files (a README's CommonJS example) are type-checked too.
        allowJs: true,
        checkJs: true,
      },
      files: Object.keys(files),
    }),
  )
  return dir
}

/**
 * The Node that runs tsc: the host's own under qemu-user (set by the platform
 * runner), where an emulated tsc over the SDKs' declarations takes minutes;
 * type-checking does not depend on the platform.
 */
const TSC_NODE = process.env.NLC_TEST_HOST_NODE || process.execPath

/** tsc --strict over the project: resolves with its output, rejects with every diagnostic. */
export async function compile(dir: string, noEmit = false): Promise<string> {
  try {
    const { stdout } = await run(TSC_NODE, [TSC, '-p', 'tsconfig.json', '--strict', ...(noEmit ? ['--noEmit'] : [])], {
      cwd: dir,
      maxBuffer: 16 << 20,
      timeout: 180_000,
    })
    return stdout
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string }
    throw new Error(`tsc --strict failed in ${dir}:\n${x.stdout ?? ''}${x.stderr ?? ''}`)
  }
}

/** Run an emitted file with node; resolves with its stdout. */
export async function runNode(dir: string, file: string, args: string[] = []): Promise<string> {
  try {
    // The host's logs go under the project (removed with it), so nothing is left in the temp directory.
    const env = { ...process.env, NEUROLINK_COMMANDS_LOG_DIR: join(dir, 'logs') }
    const { stdout } = await run(process.execPath, [file, ...args], { cwd: dir, env, maxBuffer: 64 << 20, timeout: 120_000 })
    return stdout
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string }
    throw new Error(`node ${file} failed: ${x.message}\n${x.stdout ?? ''}${x.stderr ?? ''}`)
  }
}
