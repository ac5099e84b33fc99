// Short text renderings of tool results, for the model; the full result goes
// out as structuredContent beside them. Renderers go by the result's shape,
// so a field or tool the library adds later still renders (as JSON at worst).

const SETTLED = new Set(['exited', 'killed', 'timeout', 'output-limit'])

/** True when a status's state is final. */
export function isSettled(state) {
  return SETTLED.has(state)
}

function seconds(ms) {
  if (typeof ms !== 'number') return '?'
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
}

function counters(r) {
  return typeof r.running === 'number' && typeof r.finished === 'number' ? `Session: ${r.running} running, ${r.finished} finished and not looked at yet.` : undefined
}

function outcome(s) {
  switch (s.state) {
    case 'queued':
      return 'queued (starting)'
    case 'running':
      return `running for ${seconds(s.durationMs)}`
    case 'exited':
      return s.exitCode === undefined ? `ended after ${seconds(s.durationMs)}` : `exited with code ${s.exitCode} after ${seconds(s.durationMs)}`
    case 'killed':
      return `killed${s.signal ? ` by ${s.signal}` : ''} after ${seconds(s.durationMs)}`
    case 'timeout':
      return `stopped at its time budget${s.signal ? ` (${s.signal})` : ''} after ${seconds(s.durationMs)}`
    case 'output-limit':
      return `stopped at the output cap after ${seconds(s.durationMs)}`
    default:
      return String(s.state)
  }
}

function status(s) {
  const lines = [`${s.taskId}${s.label ? ` (${s.label})` : ''}: ${outcome(s)}.`]
  lines.push(`stdout ${s.stdoutBytes ?? '?'} bytes, stderr ${s.stderrBytes ?? '?'} bytes.`)
  if (s.stdinOpen === true) lines.push('Its input is open (command_input writes to it).')
  if (s.waitingForInput === true) lines.push(s.hint ?? 'It is waiting for input: send it with command_input.')
  if (s.error) lines.push(`Note: ${s.error}`)
  for (const note of s.confinementNotes ?? []) lines.push(`Confinement: ${note}`)
  if (s.waitMatched === true) lines.push(`The awaited text appeared: ${s.waitLine ?? ''}`)
  else if (s.waitMatched === false) lines.push('The awaited text has not appeared.')
  if (s.tailPreview) lines.push(s.tailPreview)
  if (isSettled(s.state)) {
    lines.push(`The complete output: command_output { "taskId": "${s.taskId}", "stream": "stdout" } (or "stderr"), page by page.`)
  } else {
    lines.push(`Check again with command_status { "taskId": "${s.taskId}", "waitMs": 30000 }.`)
  }
  return lines
}

function page(p) {
  const end = p.offset + p.content.length
  const head = `${p.stream} of ${p.taskId}, characters ${p.offset}..${end} of ${p.totalSize}` + (p.hasMore ? ` (more: read on with offset ${end})` : ' (the end)') + ':'
  return [head, p.content]
}

function grep(r) {
  const lines = [`${r.matches.length} matching line${r.matches.length === 1 ? '' : 's'}${r.hasMore ? ' (more follow)' : ''}; scanned to character ${r.scannedTo}.`]
  for (const m of r.matches) lines.push(`${m.line}: ${m.text}`)
  return lines
}

function list(r) {
  const lines = [`${r.commands.length} command${r.commands.length === 1 ? '' : 's'} in this session, oldest first:`]
  for (const c of r.commands) {
    const end = c.running ? `${c.state}${c.waitingForInput === true ? ', waiting for input' : ''}` : `${c.state}${c.exitCode !== undefined ? ` ${c.exitCode}` : ''}${c.signal ? ` ${c.signal}` : ''}`
    lines.push(`- ${c.taskId} [${end}] ${c.label ?? (Array.isArray(c.argv) ? c.argv.join(' ') : '')}`)
  }
  return lines
}

/** The git argv without the hardening prefix (--no-pager and the -c pairs), as a model would type it. */
function gitCommandLine(argv) {
  let i = 1
  while (i < argv.length && (argv[i] === '--no-pager' || argv[i] === '-c')) i += argv[i] === '-c' ? 2 : 1
  return ['git', ...argv.slice(i)].join(' ')
}

function git(r, artifactTool) {
  const lines = [`$ ${gitCommandLine(r.command)}`, `${r.ok ? 'ok' : 'failed'}${r.exitCode !== undefined ? ` (exit code ${r.exitCode})` : ''}, ${r.state}.`]
  if (r.preview) lines.push(r.preview)
  if (r.stderrPreview) lines.push(`[stderr] ${r.stderrPreview}`)
  const ref = r.output
  const cut = typeof r.preview === 'string' && r.preview.endsWith('…')
  if (!cut) {
    if (ref && typeof ref.sizeBytes === 'number') lines.push(`(that is all of it: ${ref.sizeBytes} bytes)`)
  } else if (ref && typeof ref.artifactId === 'string' && ref.artifactId !== '' && artifactTool) {
    lines.push(`All of it (${ref.sizeBytes} bytes): ${artifactTool} { "artifactId": "${ref.artifactId}", "offset": 0 }.`)
  } else if (r.readBackHint) {
    lines.push(r.readBackHint)
  }
  return lines
}

function artifactPage(p) {
  const end = p.offset + p.content.length
  return [`characters ${p.offset}..${end} of ${p.totalSize}${p.hasMore ? ` (more: read on with offset ${end})` : ' (the end)'}:`, p.content]
}

function json(r) {
  try {
    return [JSON.stringify(r, null, 2)]
  } catch {
    return [String(r)]
  }
}

/** The text a model reads for a successful tool result. */
export function renderResult(result, { artifactTool } = {}) {
  let lines
  try {
    if (result && typeof result.content === 'string' && typeof result.totalSize === 'number' && typeof result.stream === 'string') {
      lines = page(result)
    } else if (result && typeof result.content === 'string' && typeof result.totalSize === 'number') {
      lines = artifactPage(result)
    } else if (result && Array.isArray(result.matches)) {
      lines = grep(result)
    } else if (result && Array.isArray(result.commands)) {
      lines = list(result)
    } else if (result && Array.isArray(result.command) && 'ok' in result) {
      lines = git(result, artifactTool)
    } else if (result && typeof result.taskId === 'string' && typeof result.state === 'string') {
      lines = status(result)
      if (typeof result.bytesWritten === 'number') lines.unshift(`Wrote ${result.bytesWritten} bytes.`)
    } else if (result && typeof result.taskId === 'string' && Array.isArray(result.argv)) {
      lines = [`Started ${result.taskId}: ${JSON.stringify(result.argv)}. It runs in the background; ` + `check it with command_status { "taskId": "${result.taskId}", "waitMs": 30000 }.`]
    } else if (result && typeof result.bytesWritten === 'number') {
      lines = [`Wrote ${result.bytesWritten} bytes.`]
    } else {
      lines = json(result)
    }
  } catch {
    lines = json(result)
  }
  const c = result && typeof result === 'object' ? counters(result) : undefined
  if (c) lines.push(c)
  return lines.join('\n')
}
