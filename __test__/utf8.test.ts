// Output pages measured in UTF-16 code units of the log decoded exactly as
// Node's buffer.toString('utf8') decodes it: multi-byte characters, invalid
// bytes, surrogate pairs cut by a window, and a trailing incomplete sequence
// while the command still runs.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'

import { gateScript, hostWith, logPath, nc, readPages, settle, tempRoot, waitFor } from './helpers.ts'

const SH = '/bin/sh'
const CAT = '/bin/cat'

const root = tempRoot('nlc-utf8-')
const host = hostWith(root, [SH, CAT])

after(async () => {
  await nc.killAllBackgroundCommands(host)
})

/** Small, hand-made and hostile: every kind of character and of broken UTF-8 Node knows. */
function trickyBytes(): Buffer {
  const parts: Buffer[] = [
    Buffer.from('A'.repeat(136)), // so the emoji's high surrogate is unit 136: a 137 window splits it
    Buffer.from('😀'),
    Buffer.from(' é € 𝄞 ü ß ✓ 中文 العربية \t\r\n'),
    Buffer.from([0xff, 0xfe, 0x80]), // never valid; a lone continuation byte
    Buffer.from([0xc3, 0x78]), // a 2-byte sequence cut short by "x"
    Buffer.from([0xe2, 0x82, 0x79]), // a 3-byte sequence cut short by "y"
    Buffer.from([0xf0, 0x9f, 0x98, 0x7a]), // a 4-byte sequence cut short by "z"
    Buffer.from([0xc0, 0xaf, 0xe0, 0x80, 0xaf]), // overlong encodings of "/"
    Buffer.from([0xed, 0xa0, 0x80, 0xed, 0xbf, 0xbf]), // UTF-8-encoded surrogates
    Buffer.from([0xf4, 0x90, 0x80, 0x80, 0xf5, 0xf8, 0xfc]), // above U+10FFFF and never-valid lead bytes
    Buffer.from([0x00, 0x01]), // NUL and a control character are just text
    Buffer.from('🎉🎉🎉 end of line\n'),
    Buffer.from([0xf0, 0x9f]), // the stream ends inside a character
  ]
  return Buffer.concat(parts)
}

/**
 * Larger text crossing the runner's internal checkpoints: a seeded mix of
 * 1- to 4-byte characters with invalid bytes sprinkled in.
 */
function mixedBytes(size: number, seed: number): Buffer {
  let s = seed >>> 0
  const rnd = (n: number): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s % n
  }
  const alphabet = ['a', 'Z', '0', ' ', '\n', 'é', 'ß', 'Ж', '€', '中', '✓', '😀', '𝄞', '🎉']
  const invalid = [[0xff], [0x80], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]
  const out: Buffer[] = []
  let len = 0
  while (len < size) {
    const b = rnd(40) === 0 ? Buffer.from(invalid[rnd(invalid.length)]!) : Buffer.from(alphabet[rnd(alphabet.length)]!)
    out.push(b)
    len += b.length
  }
  return Buffer.concat(out).subarray(0, size)
}

async function runToStream(file: string, bytes: Buffer, stream: 'stdout' | 'stderr'): Promise<string> {
  writeFileSync(join(root, file), bytes)
  const argv = stream === 'stdout' ? [CAT, file] : [SH, '-c', `cat ${file} >&2`]
  const h = await nc.startBackgroundCommand(host, argv, { cwd: '.' })
  const st = await settle(host, h.taskId)
  assert.equal(st.state, 'exited')
  assert.equal(st.exitCode, 0)
  assert.equal(stream === 'stdout' ? st.stdoutBytes : st.stderrBytes, bytes.length)
  assert.ok(readFileSync(logPath(h.taskId, stream)).equals(bytes), 'the log holds the bytes as written')
  return h.taskId
}

describe('pages of a settled stream', () => {
  for (const stream of ['stdout', 'stderr'] as const) {
    test(`hostile UTF-8 on ${stream}: pages of 137 and of 1 reassemble to exactly Buffer.toString("utf8") of the log`, async () => {
      const bytes = trickyBytes()
      const id = await runToStream(`tricky-${stream}.bin`, bytes, stream)
      const expected = readFileSync(logPath(id, stream)).toString('utf8')
      assert.equal(expected, bytes.toString('utf8'))

      for (const limit of [137, 1, 3, 50_000]) {
        const { text, pages } = await readPages(host, id, stream, limit)
        assert.equal(pages[0]!.totalSize, expected.length, `totalSize with limit ${limit}`)
        assert.equal(pages.length, Math.ceil(expected.length / limit))
        pages.forEach((p, i) => {
          assert.equal(p.content, expected.slice(i * limit, i * limit + limit), `page ${i} of ${limit}`)
        })
        assert.ok(text === expected, `pages of ${limit} reassemble exactly`)
      }

      // The emoji is split across the first two 137 windows, exactly as slice splits it.
      const [p0, p1] = (await readPages(host, id, stream, 137)).pages
      assert.equal(p0!.content.charCodeAt(136), 0xd83d, 'the first page ends with the high surrogate')
      assert.equal(p1!.content.charCodeAt(0), 0xde00, 'the second page starts with the low surrogate')
      assert.equal(p0!.content.slice(-1) + p1!.content.slice(0, 1), '😀')
      // The unfinished sequence at the end decodes to one U+FFFD, as in Node.
      assert.ok(expected.endsWith('end of line\n\ufffd'))
      const last = await nc.readBackgroundCommandOutput(host, id, { stream, offset: expected.length - 1, limit: 5 })
      assert.equal(last.content, '\ufffd')
      assert.equal(last.hasMore, false)
      const past = await nc.readBackgroundCommandOutput(host, id, { stream, offset: expected.length + 10, limit: 5 })
      assert.equal(past.content, '')
      assert.equal(past.totalSize, expected.length)
      assert.equal(past.hasMore, false)
    })
  }

  test('300 KB of mixed text and broken bytes: every window, at any offset and size, is the slice of the decoded log', async () => {
    const bytes = mixedBytes(300_000, 0x5eed)
    const id = await runToStream('mixed.bin', bytes, 'stdout')
    const expected = bytes.toString('utf8')
    assert.equal(readFileSync(logPath(id, 'stdout')).toString('utf8'), expected)

    for (const limit of [137, 65_537, 200_000]) {
      const { text, pages } = await readPages(host, id, 'stdout', limit)
      assert.equal(pages[0]!.totalSize, expected.length)
      assert.ok(text === expected, `pages of ${limit} reassemble exactly`)
    }
    // Random windows, including ones that start or end inside a surrogate pair.
    let s = 7
    for (let i = 0; i < 300; i++) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0
      const offset = s % expected.length
      const limit = 1 + ((s >>> 8) % 3000)
      const p = await nc.readBackgroundCommandOutput(host, id, { stream: 'stdout', offset, limit })
      assert.equal(p.content, expected.slice(offset, offset + limit), `window ${offset}+${limit}`)
      assert.equal(p.hasMore, offset + limit < expected.length)
    }

    // The built-in bank decodes and pages the same way.
    const st = nc.getBackgroundCommandStatus(host, id)
    const artifact = st.stdout!.artifactId
    assert.ok((await nc.readArtifact(artifact)) === expected)
    let joined = ''
    for (let off = 0; ; off += 13_337) {
      const p = await nc.retrieveArtifact(artifact, { offset: off, limit: 13_337 })
      assert.equal(p.totalSize, expected.length)
      joined += p.content
      if (!p.hasMore) break
    }
    assert.ok(joined === expected, 'artifact pages reassemble exactly')
    // The ref's preview is the start of the decoded text.
    assert.ok(expected.startsWith(st.stdout!.preview))
    assert.ok(st.stdout!.preview.length >= 599 && st.stdout!.preview.length <= 600, `${st.stdout!.preview.length}`)
  })
})

describe('a stream that is still being written', () => {
  test('a trailing incomplete sequence is not counted while the command runs, and completes when its bytes arrive', async () => {
    const gate = `go-${randomUUID()}`
    // "ab" and the first two bytes of "€" (e2 82 ac); then, once the gate opens, its last byte and "c".
    const h = await nc.startBackgroundCommand(host, [SH, '-c', `printf 'ab\\342\\202'; ${gateScript(gate)}; printf '\\254c'`], { cwd: '.' })
    await waitFor(() => nc.getBackgroundCommandStatus(host, h.taskId).stdoutBytes === 4, 10_000, '4 bytes')
    const mid = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })
    assert.equal(nc.getBackgroundCommandStatus(host, h.taskId).state, 'running')
    assert.equal(mid.content, 'ab')
    assert.equal(mid.totalSize, 2)
    assert.equal(mid.hasMore, false)
    writeFileSync(join(root, gate), '')
    await settle(host, h.taskId)
    const done = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })
    assert.equal(done.content, 'ab€c')
    assert.equal(done.totalSize, 4)
    assert.ok(readFileSync(logPath(h.taskId, 'stdout')).equals(Buffer.from('ab€c')))
  })

  test('a stream that ends inside a character decodes it to U+FFFD once settled, as Node does', async () => {
    const h = await nc.startBackgroundCommand(host, [SH, '-c', "printf 'ab\\342\\202'"], { cwd: '.' })
    await settle(host, h.taskId)
    const p = await nc.readBackgroundCommandOutput(host, h.taskId, { stream: 'stdout' })
    const node = readFileSync(logPath(h.taskId, 'stdout')).toString('utf8')
    assert.equal(node, 'ab\ufffd')
    assert.equal(p.content, node)
    assert.equal(p.totalSize, 3)
  })
})

describe('tail previews of multi-byte output', () => {
  test('a tail cut inside a character drops the replacement character at its start', async () => {
    for (const [ch, bytesPer] of [
      ['é', 2],
      ['€', 3],
      ['😀', 4],
    ] as const) {
      const count = Math.ceil(9001 / bytesPer)
      const h = await nc.startBackgroundCommand(host, ['/bin/sh', '-c', `i=0; while [ $i -lt ${count} ]; do printf '${ch}'; i=$((i+1)); done`], { cwd: '.' })
      const st = await settle(host, h.taskId)
      assert.equal(st.stdoutBytes, count * bytesPer)
      assert.ok(st.tailPreview.length <= 2000, `${st.tailPreview.length}`)
      assert.ok(st.tailPreview.startsWith('[stdout tail]\n'))
      const body = st.tailPreview.slice('[stdout tail]\n'.length)
      assert.ok(!body.includes('\ufffd'), `no replacement character in the ${ch} tail`)
      assert.ok(body.length >= 1900, `${ch}: ${body.length} characters`)
      assert.equal(body, ch.repeat(body.length / ch.length), `${ch}: whole characters only`)
    }
  })
})
