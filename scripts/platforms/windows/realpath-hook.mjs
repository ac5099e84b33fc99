// Loaded with `node.exe --import` under wine only (windows.sh names it in
// NLC_WINE_IMPORT): wine shows pnpm's symlinks as plain directories to
// Node's JS realpath, so a package in node_modules keeps its linked path and
// does not find its own dependencies beside its real location. The native
// realpath (GetFinalPathNameByHandleW) does resolve them: resolve every
// module to it, as Node does natively on Windows, where pnpm's links are
// junctions.
import { realpathSync } from 'node:fs'
import { register } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { isMainThread } from 'node:worker_threads'

/** A specifier naming a package (only those cross pnpm's links). */
const BARE = /^(?![./]|[a-z][a-z0-9+.-]*:)/i

/**
 * The module loader's resolve hook: the default resolution, then, for a
 * package's module, the native real path (a relative import of a module
 * already at its real path stays there: one lookup a package, not a module).
 */
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context)
  if (!BARE.test(specifier) || !found.url.startsWith('file:')) return found
  return { ...found, url: pathToFileURL(realpathSync.native(fileURLToPath(found.url))).href }
}

// The hooks run on their own thread, which loads this file again.
if (isMainThread) register(import.meta.url)
