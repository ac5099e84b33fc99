// Property tests (fast-check): random bytes written by a real command and
// paged with random windows must equal Node's own decoding sliced the same
// way; the argv, ref, date and path validators against generated inputs must
// agree with an independent model of the contract's rules.
//
// Bounded: every property has a small numRuns (the whole file stays well
// under 60 s). A failure prints fast-check's seed and the shrunk input;
// rerun with FC_SEED=<seed> to reproduce it.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

import * as fc from 'fast-check'

import { hostWith, logPath, nc, readPages, settle, tempRoot, waitFor } from './helpers.ts'

// Everything this file creates — temporary roots and the commands' log
// directories (under os.tmpdir()) — lives in one directory, removed at the end.
const FILE_TMP = mkdtempSync(join(tmpdir(), 'nlc-property-'))
process.env.TMPDIR = FILE_TMP
after(() => rmSync(FILE_TMP, { recursive: true, force: true }))

const SH = '/bin/sh'
const CAT = '/bin/cat'
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined
const params = (numRuns: number): fc.Parameters<unknown> => ({ numRuns, seed, endOnFailure: true })

/** fc.assert, with the failing assertion's own message in the test's error. */
async function check<T>(prop: fc.IAsyncProperty<T>, numRuns: number): Promise<void> {
  try {
    await fc.assert(prop, params(numRuns))
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause
    throw new Error(`${(e as Error).message}\nFailed with: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
}

// ---------------------------------------------------------------------------
// Bytes: valid, invalid and truncated UTF-8, CRLF, BOM, NUL, astral characters
// ---------------------------------------------------------------------------

const MULTI = ['é', 'ß', '€', '中', '\u{FFFD}', '😀', '\u{10FFFF}', '\u{1F600}', '\u0800', '\uFFFF']
const SPECIAL: Buffer[] = [
  Buffer.from('\r\n'),
  Buffer.from([0xef, 0xbb, 0xbf]), // BOM
  Buffer.from([0x00]), // NUL
  Buffer.from([0xf0, 0x9f, 0x98, 0x80]), // astral
  Buffer.from([0xc0, 0x80]), // overlong NUL
  Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate
  Buffer.from([0xf4, 0x90, 0x80, 0x80]), // above U+10FFFF
  Buffer.from([0x80]), // a lone continuation byte
  Buffer.from([0xf5]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xe0, 0x80, 0x80]), // overlong three bytes
]

const segment: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }).map((s) => Buffer.from(s, 'utf8')) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom(...MULTI), fc.nat()).map(([ch, n]) => {
      const b = Buffer.from(ch, 'utf8')
      return b.subarray(0, 1 + (n % (b.length - 1))) // truncated: 1..len-1 bytes
    }),
  },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((s) => Buffer.from(s)) },
)

/** A log: random segments, sometimes repeated past the 64 KiB index checkpoints. */
const logBytes: fc.Arbitrary<Buffer> = fc.tuple(fc.array(segment, { maxLength: 48 }), fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 4000 }))).map(([parts, times]) => {
  const one = Buffer.concat(parts)
  return one.length === 0 ? one : Buffer.concat(Array<Buffer>(times).fill(one)).subarray(0, 400_000)
})

/** A requested window: offsets relative to the decoded length, plus the odd values the contract clamps. */
const windowReq = fc.record({
  at: fc.oneof({ weight: 6, arbitrary: fc.double({ min: 0, max: 1.05, noNaN: true }) }, { weight: 1, arbitrary: fc.constantFrom(-1, -1e9, Number.NaN, -Infinity) }),
  limit: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 400 }) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 200_000 }) },
    { weight: 1, arbitrary: fc.constantFrom(0, -3, 0.5, 250_000, Number.NaN, undefined) },
  ),
})

/** The window the contract asks for, computed in JS. */
function expectedWindow(text: string, offset: number, limit: number | undefined) {
  const o = Number.isNaN(offset) || offset < 0 ? 0 : Math.floor(offset)
  const l = limit === undefined || Number.isNaN(limit) ? 50_000 : Math.min(Math.max(Math.floor(limit), 1), 200_000)
  return { offset: o, limit: l, content: text.slice(o, o + l), totalSize: text.length, hasMore: o + l < text.length }
}

/**
 * How many trailing bytes are a still-completable UTF-8 sequence (a lead byte
 * and fewer continuation bytes than it needs, each allowed after it): while a
 * command runs, those bytes are not counted yet.
 */
function heldBack(b: Buffer): number {
  for (let k = 1; k <= 3 && k <= b.length; k++) {
    const lead = b[b.length - k]!
    const need = lead >= 0xc2 && lead <= 0xdf ? 1 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : -1
    if (need < 0) continue
    if (k - 1 >= need) return 0 // complete (or over-long): nothing is held
    let ok = true
    for (let i = 1; i < k; i++) {
      const c = b[b.length - k + i]!
      const [lo, hi] =
        i === 1 && lead === 0xe0 ? [0xa0, 0xbf] : i === 1 && lead === 0xed ? [0x80, 0x9f] : i === 1 && lead === 0xf0 ? [0x90, 0xbf] : i === 1 && lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf]
      if (c < lo || c > hi) ok = false
    }
    return ok ? k : 0
  }
  return 0
}

let fileCounter = 0

test('pages of random bytes equal Buffer.toString("utf8") of the log sliced the same way, and concatenate to the whole', async () => {
  const root = tempRoot('nlc-prop-pages-')
  const host = hostWith(root, [CAT, SH])
  await check(
    fc.asyncProperty(logBytes, fc.boolean(), fc.array(windowReq, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 70_000 }), async (bytes, onStderr, windows, pageSize) => {
      const name = `data-${fileCounter++}`
      writeFileSync(join(root, name), bytes)
      const stream = onStderr ? 'stderr' : 'stdout'
      const argv = onStderr ? [SH, '-c', `exec ${CAT} ${name} >&2`] : [CAT, name]
      const h = await nc.startBackgroundCommand(host, argv, { cwd: '.' })
      const st = await settle(host, h.taskId)
      assert.equal(st.state, 'exited')
      assert.equal(onStderr ? st.stderrBytes : st.stdoutBytes, bytes.length)
      assert.equal(Buffer.compare(readFileSync(logPath(h.taskId, stream)), bytes), 0, 'the log holds exactly the bytes')
      const text = bytes.toString('utf8')
      for (const w of windows) {
        const offset = Number.isFinite(w.at) && w.at >= 0 ? Math.floor(w.at * text.length) : w.at
        const want = expectedWindow(text, offset, w.limit)
        const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream, offset, limit: w.limit })
        assert.deepEqual(
          { offset: page.offset, limit: page.limit, totalSize: page.totalSize, hasMore: page.hasMore },
          { offset: want.offset, limit: want.limit, totalSize: want.totalSize, hasMore: want.hasMore },
          `window ${offset}+${w.limit}`,
        )
        assert.equal(page.content, want.content, `window ${offset}+${w.limit}`)
      }
      // Whole pages, no more than ~60 of them, reassemble to the decoded log.
      const size = Math.max(pageSize, Math.ceil(text.length / 60))
      const { text: whole } = await readPages(host, h.taskId, stream, size)
      assert.equal(whole, text)
      if (st.stdout && stream === 'stdout') {
        const art = await nc.retrieveArtifact(st.stdout.artifactId, { offset: 0, limit: 200_000 })
        assert.equal(art.content, text.slice(0, 200_000))
        assert.equal(art.totalSize, text.length)
      }
    }),
    150,
  )
})

test('while the command runs, a trailing incomplete sequence is not counted; once it settles the pages are the whole decoding', async () => {
  const root = tempRoot('nlc-prop-live-')
  const host = hostWith(root, [SH])
  await check(
    fc.asyncProperty(logBytes, fc.array(windowReq, { minLength: 1, maxLength: 4 }), async (bytes, windows) => {
      const n = fileCounter++
      writeFileSync(join(root, `data-${n}`), bytes)
      const h = await nc.startBackgroundCommand(host, [SH, '-c', `cat data-${n}; while [ ! -e go-${n} ]; do sleep 0.01; done`], { cwd: '.' })
      await waitFor(
        () => {
          const s = nc.getBackgroundCommandStatus(host, h.taskId)
          return s.state === 'running' && s.stdoutBytes === bytes.length
        },
        10_000,
        'all bytes captured',
      )
      const live = bytes.subarray(0, bytes.length - heldBack(bytes)).toString('utf8')
      for (const w of windows) {
        const offset = Number.isFinite(w.at) && w.at >= 0 ? Math.floor(w.at * live.length) : w.at
        const want = expectedWindow(live, offset, w.limit)
        const page = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout', offset, limit: w.limit })
        assert.equal(page.totalSize, want.totalSize, 'live total excludes the incomplete tail')
        assert.equal(page.content, want.content)
        assert.equal(page.hasMore, want.hasMore)
      }
      assert.equal(nc.getBackgroundCommandStatus(host, h.taskId).state, 'running')
      writeFileSync(join(root, `go-${n}`), '')
      await settle(host, h.taskId)
      const text = bytes.toString('utf8')
      const { text: whole } = await readPages(host, h.taskId, 'stdout', Math.max(1, Math.ceil(text.length / 40)))
      assert.equal(whole, text)
    }),
    40,
  )
})

// ---------------------------------------------------------------------------
// Validators
// ---------------------------------------------------------------------------

const WHITE_SPACE = /\p{White_Space}/u // what Rust's char::is_whitespace tests
const SHELL = /[;&|<>$`\n\r]/
/** str::trim in Rust: White_Space at both ends (unlike JS trim, not U+FEFF; unlike it, U+0085). */
const rustTrim = (s: string) => s.replace(/^\p{White_Space}+|\p{White_Space}+$/gu, '')

const argvChar = fc.constantFrom(
  'a',
  'b',
  'z',
  '0',
  '9',
  '/',
  '.',
  '-',
  '_',
  '~',
  ' ',
  '\t',
  '\u00a0',
  '\u0085',
  '\u2028',
  '\u3000',
  '\ufeff',
  ';',
  '&',
  '|',
  '<',
  '>',
  '$',
  '`',
  '\n',
  '\r',
  '*',
  '?',
  '(',
  '"',
  "'",
  '\\',
  '\0',
  'é',
  '😀',
)

test('argv: NUL, then no shell, then the exact allowlist, in that order, for generated argv', async () => {
  const root = tempRoot('nlc-prop-argv-')
  await check(
    fc.asyncProperty(
      fc.array(argvChar, { minLength: 0, maxLength: 12 }).map((a) => `/nonexistent-nlc/${a.join('')}`),
      fc.boolean(),
      fc.array(
        fc.array(argvChar, { maxLength: 6 }).map((a) => a.join('')),
        { maxLength: 3 },
      ),
      async (exe, allowIt, args) => {
        const host = {}
        if (allowIt && exe.includes('\0')) {
          // A policy cannot even name such an executable.
          assert.throws(() => nc.setBackgroundCommandPolicy(host, { allowedExecutables: [SH, exe], cwdRoot: root }), /allowedExecutables entries must not contain NUL/)
          return
        }
        nc.setBackgroundCommandPolicy(host, { allowedExecutables: allowIt ? [SH, exe] : [SH], cwdRoot: root })
        const argv = [exe, ...args]
        const nul = argv.findIndex((a) => a.includes('\0'))
        let refusal: string | undefined
        let handle: nc.BackgroundCommandHandle | undefined
        try {
          handle = await nc.startBackgroundCommand(host, argv, { cwd: '.', timeoutMs: 5000 })
        } catch (e) {
          refusal = (e as Error).message
        }
        if (nul >= 0) {
          assert.match(refusal ?? '', new RegExp(`^argv\\[${nul}\\] contains a NUL character`))
        } else if (WHITE_SPACE.test(exe) || SHELL.test(exe)) {
          assert.match(refusal ?? '', /NO shell/)
        } else if (!allowIt) {
          // (Rust's Debug quoting escapes some characters JSON.stringify leaves alone, e.g. U+FEFF.)
          assert.match(refusal ?? '', /^Executable "\/nonexistent-nlc\/.*" is not allowed: argv\[0\] must equal one of allowedExecutables exactly/s)
        } else {
          assert.equal(refusal, undefined)
          // Allowed, but no such file: it settles "could not be started".
          const st = await settle(host, handle!.taskId)
          assert.equal(st.state, 'exited')
          assert.match(st.error ?? '', /could not be started: No such file or directory/)
        }
      },
    ),
    300,
  )
})

/** A repository with a commit, a directory, a file and links in and out. */
function fixtureRepo(): string {
  const root = tempRoot('nlc-prop-git-')
  mkdirSync(join(root, 'src', 'sub'), { recursive: true })
  writeFileSync(join(root, 'a.txt'), 'a\n')
  writeFileSync(join(root, 'src', 'sub', 'b.txt'), 'b\n')
  symlinkSync('src', join(root, 'link-in'))
  symlinkSync('/etc', join(root, 'link-out'))
  symlinkSync('../..', join(root, 'src', 'up-two'))
  const git = (...a: string[]) => execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { stdio: 'pipe' })
  git('init', '-q')
  git('add', '-A')
  git('commit', '-q', '-m', 'fixture')
  return root
}

function gitHost(root: string) {
  const host = {}
  nc.configureGitTools(host, { repoRoot: root, timeoutMs: 20_000 })
  return { host, tools: nc.createGitTools(host) }
}

const REF_OK = /^[A-Za-z0-9._/^~@{}:+-]{1,200}$/
const refChar = fc.constantFrom(
  'a',
  'Z',
  '0',
  '.',
  '_',
  '/',
  '^',
  '~',
  '@',
  '{',
  '}',
  ':',
  '+',
  '-',
  ' ',
  '\t',
  '\u0085',
  '\u00a0',
  '\ufeff',
  ';',
  '$',
  '`',
  '\\',
  '*',
  '?',
  '[',
  '\0',
  'é',
  '=',
  ',',
  '\n',
)
const refLike = fc.oneof(
  { weight: 4, arbitrary: fc.array(refChar, { maxLength: 16 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 195, max: 205 }), fc.constantFrom('a', 'H')).map(([n, c]) => c.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom('HEAD', 'HEAD~1', 'main^{tree}', ' -HEAD', '--output=x', '-', 'HEAD:a.txt', '@{0}') },
)

test('refs through git_show: a leading "-" (after trimming) is refused, then the character rule, else git runs with the trimmed ref', async () => {
  const root = fixtureRepo()
  const { tools } = gitHost(root)
  await check(
    fc.asyncProperty(refLike, async (ref) => {
      const r = (await tools.git_show!.execute({ ref, nameOnly: true })) as nc.GitToolResult & nc.ToolRefusal
      const t = rustTrim(ref)
      if (t.startsWith('-')) {
        assert.equal(r.isError, true, JSON.stringify(ref))
        assert.match(r.error, /^git_show \{.*?\}: ref .* must not start with "-"/)
      } else if (!REF_OK.test(t)) {
        assert.equal(r.isError, true, JSON.stringify(ref))
        assert.match(r.error, /^git_show \{.*?\}: ref .* is not a valid git revision/)
      } else {
        assert.equal(r.isError, undefined, `${JSON.stringify(ref)}: ${r.error}`)
        assert.deepEqual(r.command.slice(-1), [t])
        assert.ok(!r.command.includes(ref) || ref === t)
      }
    }),
    150,
  )
})

const SINCE_OK = /^[A-Za-z0-9 :,.+-]{1,64}$/
const sinceLike = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.constantFrom('2', '0', 'a', 'w', ' ', ':', ',', '.', '+', '-', '/', ';', '$', '\t', '\0', 'é', '='), { maxLength: 20 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 70 }).map((n) => '1'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom('2 weeks ago', '2024-01-31', ' 2024-01-31 12:00 ', '--all', '-1 day') },
)

test('dates through git_log: the character rule on the trimmed value, passed as one --since= argument', async () => {
  const root = fixtureRepo()
  const { tools } = gitHost(root)
  await check(
    fc.asyncProperty(sinceLike, async (since) => {
      const r = (await tools.git_log!.execute({ since, maxCount: 1 })) as nc.GitToolResult & nc.ToolRefusal
      const t = rustTrim(since)
      if (SINCE_OK.test(t)) {
        assert.equal(r.isError, undefined, `${JSON.stringify(since)}: ${r.error}`)
        assert.ok(r.command.includes(`--since=${t}`), r.command.join(' '))
      } else {
        assert.equal(r.isError, true, JSON.stringify(since))
        assert.match(r.error, /^git_log \{.*?\}: since .* is not a valid date/)
      }
    }),
    100,
  )
})

/** The contract's path rule, modelled independently: symlinks followed where they exist, `..` lexical after that. */
function modelPath(root: string, input: string): { refused: RegExp } | { rel: string } {
  const t = rustTrim(input)
  if (t.startsWith('-')) return { refused: /must not start with "-"/ }
  if (t === '') return { refused: /path must not be empty/ }
  let hops = 40
  const resolve = (abs: string): string => {
    let resolved: string[] = []
    for (const part of abs.split('/')) {
      if (part === '' || part === '.') continue
      if (part === '..') {
        resolved.pop()
        continue
      }
      const next = `/${[...resolved, part].join('/')}`
      let link: string | undefined
      try {
        if (lstatSync(next).isSymbolicLink()) link = readlinkSync(next)
      } catch {
        // missing: kept as is
      }
      if (link !== undefined) {
        if (--hops < 0) throw new Error('too many links')
        const base = link.startsWith('/') ? link : `/${[...resolved, link].join('/')}`
        resolved = resolve(base)
          .split('/')
          .filter((p) => p !== '')
      } else {
        resolved.push(part)
      }
    }
    return `/${resolved.join('/')}`
  }
  const abs = resolve(t.startsWith('/') ? t : `${root}/${t}`)
  if (abs === root) return { rel: '.' }
  if (abs.startsWith(`${root}/`)) return { rel: abs.slice(root.length + 1) }
  return { refused: /outside the permitted root/ }
}

test('paths through git_ls_files: inside the repository (links followed, missing parts allowed) or refused as outside', async () => {
  const root = fixtureRepo()
  const { tools } = gitHost(root)
  const part = fc.constantFrom('src', 'sub', 'a.txt', 'b.txt', '..', '.', '', 'link-in', 'link-out', 'up-two', 'missing', ' ', '-x', 'é')
  const pathLike = fc
    .tuple(fc.constantFrom('', '', '', '/', `${root}/`, '/etc/', ' ', '  -'), fc.array(part, { minLength: 0, maxLength: 6 }), fc.constantFrom('', '/', ' '))
    .map(([head, parts, tail]) => `${head}${parts.join('/')}${tail}`)
  await check(
    fc.asyncProperty(pathLike, async (path) => {
      const r = (await tools.git_ls_files!.execute({ path })) as nc.GitToolResult & nc.ToolRefusal
      const want = modelPath(root, path)
      if ('refused' in want) {
        assert.equal(r.isError, true, `${JSON.stringify(path)} should be refused`)
        assert.match(r.error, want.refused, JSON.stringify(path))
      } else {
        assert.equal(r.isError, undefined, `${JSON.stringify(path)}: ${r.error}`)
        assert.deepEqual(r.command.slice(-2), ['--', want.rel], JSON.stringify(path))
      }
    }),
    200,
  )
})
