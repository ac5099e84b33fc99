// The baseline of the benchmark: the algorithm NeuroLink's background-command
// runner uses today, written in plain JS from its description, with the
// same API shape as neurolink-commands (start / await / readOutput / status /
// kill) as far as the benchmark cases need it.
//
// Everything happens on the host's JS thread:
// - `child_process.spawn(argv[0], argv.slice(1), { shell: false, stdio:
//   ["ignore", "pipe", "pipe"] })`;
// - every `data` chunk is counted, cut at the byte cap, appended to an
//   8000-byte rolling tail (Buffer.concat, keep the last 8000 bytes) and
//   written to an fs.createWriteStream (the pipe is paused on backpressure and
//   resumed on `drain`);
// - the command settles on the child's `close` event; then each whole log
//   file is read into a string (`fs.promises.readFile(path, "utf-8")`) and
//   banked;
// - the budget and the SIGTERM → SIGKILL escalation are `setTimeout`s;
// - an output page reads the whole log file into a string and slices it.
//
// Settled commands stay in the registry for the life of the process, with
// their two tails, as NeuroLink keeps them.

import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const TAIL_BYTES = 8000
const STREAMS = ['stdout', 'stderr']

let counter = 0

function labelFor(options, argv) {
  const given = typeof options.label === 'string' ? options.label.trim() : ''
  if (given) return given
  const joined = argv.slice(0, 2).join(' ')
  return joined.length > 60 ? `${joined.slice(0, 60)}…` : joined
}

function tailText(buf, max) {
  if (buf.length === 0) return ''
  let text = buf.toString('utf8')
  if (text.startsWith('\uFFFD')) text = text.slice(1)
  return text.length > max ? text.slice(text.length - max) : text
}

export class ReferenceRunner {
  /**
   * @param {{ cwdRoot?: string, defaultTimeoutMs?: number, maxOutputBytes?: number,
   *           killGraceMs?: number, bankArtifact?: (content: string, opts: object) => Promise<object> }} policy
   */
  constructor(policy = {}) {
    this.policy = {
      defaultTimeoutMs: 120_000,
      maxOutputBytes: 10 * 1024 * 1024,
      killGraceMs: 5000,
      ...policy,
    }
    /** taskId → task; never evicted. */
    this.tasks = new Map()
    this.artifacts = new Map()
  }

  /** Start a command; resolves with the handle at once. */
  async start(argv, options = {}) {
    const taskId = `r${++counter}${randomBytes(6).toString('hex')}`
    const dir = path.join(os.tmpdir(), 'reference-commands', taskId)
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const cwd = path.resolve(this.policy.cwdRoot ?? process.cwd(), options.cwd ?? '.')
    const task = {
      taskId,
      label: labelFor(options, argv),
      argv,
      cwd,
      startedAt: Date.now(),
      endedAt: undefined,
      state: 'queued',
      exitCode: undefined,
      signal: undefined,
      error: undefined,
      cap: options.maxOutputBytes ?? this.policy.maxOutputBytes,
      timeoutMs: options.timeoutMs ?? this.policy.defaultTimeoutMs,
      graceMs: this.policy.killGraceMs,
      bytes: { stdout: 0, stderr: 0 },
      tails: { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) },
      paths: { stdout: path.join(dir, 'stdout.log'), stderr: path.join(dir, 'stderr.log') },
      refs: undefined,
      stopping: undefined,
      child: undefined,
      timers: [],
      waiters: [],
    }
    this.tasks.set(taskId, task)

    const child = spawn(argv[0], argv.slice(1), {
      shell: false,
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd,
      env: options.env ?? process.env,
    })
    task.child = child
    child.on('spawn', () => {
      if (task.state === 'queued') task.state = 'running'
    })

    const writers = {}
    for (const name of STREAMS) {
      const ws = fs.createWriteStream(task.paths[name], { mode: 0o600 })
      writers[name] = ws
      const source = child[name]
      source.on('data', (chunk) => this.#onData(task, name, source, ws, chunk))
    }

    const budget = setTimeout(() => this.#stop(task, 'timeout', 'SIGTERM'), task.timeoutMs)
    task.timers.push(budget)

    let settled = false
    const settle = async (code, signal, startError) => {
      if (settled) return
      settled = true
      for (const t of task.timers) clearTimeout(t)
      task.timers = []
      task.endedAt = Date.now()
      task.exitCode = code ?? undefined
      task.signal = signal ?? undefined
      if (startError) {
        task.state = 'exited'
        task.error = `${JSON.stringify(argv[0])} could not be started: ${startError.message}`
      }
      await Promise.all(STREAMS.map((name) => finishWriter(writers[name])))
      task.refs = await this.#bankBoth(task)
      if (!startError) this.#finalState(task)
      task.child = undefined
      for (const w of task.waiters.splice(0)) w()
    }
    child.on('error', (e) => settle(null, null, e))
    child.on('close', (code, signal) => settle(code, signal, undefined))

    return { taskId, argv, startedAt: task.startedAt }
  }

  #onData(task, name, source, ws, chunk) {
    const room = task.cap - task.bytes[name]
    if (room <= 0) return
    let overflow = false
    if (chunk.length > room) {
      chunk = chunk.subarray(0, room)
      overflow = true
    }
    task.bytes[name] += chunk.length
    const joined = Buffer.concat([task.tails[name], chunk])
    task.tails[name] = joined.length > TAIL_BYTES ? Buffer.from(joined.subarray(joined.length - TAIL_BYTES)) : joined
    if (!ws.write(chunk)) {
      source.pause()
      ws.once('drain', () => source.resume())
    }
    if (overflow) this.#stop(task, 'output-limit', 'SIGTERM', name)
  }

  #stop(task, why, signal, stream) {
    if (task.stopping || !task.child || task.endedAt !== undefined) return
    task.stopping = { why, signal, stream }
    task.child.kill(signal)
    const escalate = setTimeout(() => {
      if (task.child && task.endedAt === undefined) task.child.kill('SIGKILL')
    }, task.graceMs)
    task.timers.push(escalate)
  }

  #finalState(task) {
    const s = task.stopping
    if (!s) {
      if (task.signal) {
        task.state = 'killed'
        task.error = `The command was ended by ${task.signal}, a signal this runner did not send`
      } else {
        task.state = 'exited'
      }
      return
    }
    if (s.why === 'timeout') {
      task.state = 'timeout'
      task.error = `The command exceeded its ${task.timeoutMs}ms budget; its output up to then is banked in full`
    } else if (s.why === 'output-limit') {
      task.state = 'output-limit'
      task.error = `${s.stream} reached the ${task.cap}-byte cap; its output up to the cap is banked in full`
    } else {
      task.state = 'killed'
      task.error = `The command was killed with ${s.signal} by the caller; its output up to then is banked in full`
    }
  }

  async #bankBoth(task) {
    const refs = {}
    for (const name of STREAMS) {
      const label = `${task.label} [${name}]`
      try {
        const content = await fs.promises.readFile(task.paths[name], 'utf-8')
        refs[name] = await this.#bank(content, { kind: 'command-output', label, previewChars: 600 }, task, name)
      } catch (e) {
        refs[name] = {
          artifactId: '',
          label,
          kind: 'command-output',
          sizeBytes: task.bytes[name],
          preview: tailText(task.tails[name], 600),
          readBackHint: `The artifact could NOT be created: ${e.message}. The complete ${name} is in ${task.paths[name]}.`,
        }
      }
    }
    return refs
  }

  async #bank(content, opts, task, name) {
    if (typeof this.policy.bankArtifact === 'function') return this.policy.bankArtifact(content, opts)
    // The default bank keeps the ref; the log file is the artifact.
    const artifactId = `ref-${task.taskId}-${name}`
    const ref = {
      artifactId,
      label: opts.label,
      kind: opts.kind,
      sizeBytes: Buffer.byteLength(content),
      // A flat copy: a plain slice would keep the whole log's string alive.
      preview: Buffer.from(content.slice(0, opts.previewChars)).toString(),
      readBackHint: `retrieve_context("${artifactId}") returns the complete ${name}`,
    }
    this.artifacts.set(artifactId, task.paths[name])
    return ref
  }

  #task(taskId) {
    const task = this.tasks.get(taskId)
    if (!task) {
      throw new Error(`No background command "${taskId}"; started: ${[...this.tasks.keys()].join(', ') || 'none'}`)
    }
    return task
  }

  /** The live status, built from the record. */
  status(taskId) {
    const t = this.#task(taskId)
    const settled = t.refs !== undefined
    const withOutput = STREAMS.filter((n) => t.tails[n].length > 0)
    let tailPreview
    if (withOutput.length === 0) {
      tailPreview = settled ? '(the command wrote no output)' : '(no output yet)'
    } else {
      const share = 2000 / withOutput.length
      tailPreview = withOutput
        .map((n, i) => {
          const heading = `[${n} tail]\n`
          return heading + tailText(t.tails[n], share - heading.length - (i > 0 ? 1 : 0))
        })
        .join('\n')
    }
    const status = {
      taskId: t.taskId,
      label: t.label,
      state: settled ? t.state : t.state === 'queued' ? 'queued' : 'running',
      durationMs: (t.endedAt ?? Date.now()) - t.startedAt,
      stdoutBytes: t.bytes.stdout,
      stderrBytes: t.bytes.stderr,
      tailPreview,
    }
    if (settled) {
      if (t.exitCode !== undefined) status.exitCode = t.exitCode
      if (t.signal !== undefined) status.signal = t.signal
      status.stdout = t.refs.stdout
      status.stderr = t.refs.stderr
      if (t.error !== undefined) status.error = t.error
    }
    return status
  }

  /** Resolve when settled (or with the current status after `timeoutMs`). */
  async await(taskId, opts = {}) {
    const t = this.#task(taskId)
    if (t.refs === undefined) {
      await new Promise((resolve) => {
        t.waiters.push(resolve)
        if (opts.timeoutMs !== undefined) setTimeout(resolve, opts.timeoutMs)
      })
    }
    return this.status(taskId)
  }

  /** Kill with `signal` (SIGKILL after the grace) and resolve with the status. */
  async kill(taskId, signal = 'SIGTERM') {
    const t = this.#task(taskId)
    this.#stop(t, 'killed', signal)
    return this.await(taskId, { timeoutMs: t.graceMs * 2 })
  }

  /** One page: the whole log read into a string, then sliced. */
  async readOutput(taskId, page = {}) {
    const t = this.#task(taskId)
    const stream = page.stream ?? 'stdout'
    const offset = Math.max(0, Math.floor(page.offset ?? 0))
    const limit = Math.min(200_000, Math.max(1, Math.floor(page.limit ?? 50_000)))
    const text = await fs.promises.readFile(t.paths[stream], 'utf-8')
    return {
      taskId,
      stream,
      content: text.slice(offset, offset + limit),
      offset,
      limit,
      totalSize: text.length,
      hasMore: offset + limit < text.length,
    }
  }
}

function finishWriter(ws) {
  return new Promise((resolve) => {
    if (ws.closed) return resolve()
    ws.once('close', resolve)
    ws.once('error', resolve)
    ws.end()
  })
}
