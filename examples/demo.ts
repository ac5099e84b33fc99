// The main job, end to end: a host runs three real commands at once with the
// built-in artifact bank, watches them live, and reads every byte back.
//
//   pnpm run demo
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, realpathSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'

import {
  awaitBackgroundCommand,
  confinementSupport,
  getBackgroundCommandStatus,
  readArtifact,
  readBackgroundCommandOutput,
  setBackgroundCommandPolicy,
  startBackgroundCommand,
  writeBackgroundCommandInput,
  type BackgroundCommandStatus,
} from '../index.js'

const color = process.stdout.isTTY
const paint = (code: number, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s)
const dim = (s: string) => paint(2, s)
const bold = (s: string) => paint(1, s)
const stateColor: Record<string, number> = { running: 36, queued: 36, exited: 32, killed: 31, timeout: 33, 'output-limit': 35 }

async function main(): Promise<void> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'neurolink-demo-')))
  const host = { name: 'demo host' }
  setBackgroundCommandPolicy(host, {
    allowedExecutables: ['/bin/sh'],
    cwdRoot: root,
    defaultTimeoutMs: 20_000,
    killGraceMs: 500,
  })
  console.log(bold('neurolink-commands demo'), dim(`— sandbox root ${root}`))
  console.log(dim('three commands, no shell between us and them: argv arrays, an exact allowlist, a realpath sandbox\n'))

  const build = await startBackgroundCommand(
    host,
    ['/bin/sh', '-c', 'for i in $(seq 1 16); do echo "[build] step $i/16: compiled module_$i ($((i * 37)) kB)"; sleep 0.2; done; echo "[build] done: 16 modules"'],
    { cwd: '.', label: 'build' },
  )
  const lint = await startBackgroundCommand(host, ['/bin/sh', '-c', 'sleep 0.5; echo "checked 41 files"; echo "src/app.ts:12:7  error  no-unused-vars  \'token\' is never used" >&2; exit 2'], {
    cwd: '.',
    label: 'lint',
  })
  const server = await startBackgroundCommand(host, ['/bin/sh', '-c', 'echo "dev server listening on http://localhost:5173"; while :; do sleep 1; done'], {
    cwd: '.',
    label: 'dev server',
    timeoutMs: 2000,
  })
  const ids = [build.taskId, lint.taskId, server.taskId]
  console.log(`started ${ids.map((id) => bold(id)).join(', ')} ${dim('(the handles came back before any of them finished)')}\n`)

  const line = (s: BackgroundCommandStatus) => {
    const last =
      s.tailPreview
        .split('\n')
        .filter((l) => l && !l.startsWith('[std'))
        .pop() ?? ''
    const state = paint(stateColor[s.state] ?? 0, s.state.padEnd(12))
    const bytes = `${String(s.stdoutBytes).padStart(5)} B out ${String(s.stderrBytes).padStart(4)} B err`
    return `  ${s.label.padEnd(11)} ${state} ${bytes}  ${dim(last.slice(0, 60))}`
  }

  // Watch them live: status is synchronous and built fresh on every call.
  for (let tick = 0; ; tick++) {
    const statuses = ids.map((id) => getBackgroundCommandStatus(host, id))
    console.log(dim(`t+${(tick * 0.5).toFixed(1)}s`))
    for (const s of statuses) console.log(line(s))
    if (statuses.every((s) => s.stdout !== undefined)) break
    await new Promise((r) => setTimeout(r, 500))
  }

  console.log(bold('\nfinal statuses'))
  for (const id of ids) {
    const s = await awaitBackgroundCommand(host, id)
    const code = s.exitCode !== undefined ? `exit ${s.exitCode}` : s.signal ? `signal ${s.signal}` : 'no exit code'
    console.log(`  ${s.label.padEnd(11)} ${paint(stateColor[s.state] ?? 0, s.state.padEnd(8))} ${code.padEnd(15)} ${s.durationMs} ms`)
    if (s.error) console.log(dim(`              ${s.error}`))
    console.log(dim(`              stdout ref ${s.stdout?.artifactId} (${s.stdout?.sizeBytes} B), stderr ref ${s.stderr?.artifactId} (${s.stderr?.sizeBytes} B)`))
  }

  // Page the build's full output back in small windows and check it against the bank.
  const pages: string[] = []
  let offset = 0
  for (;;) {
    const page = await readBackgroundCommandOutput(host, build.taskId, { stream: 'stdout', offset, limit: 200 })
    pages.push(page.content)
    if (!page.hasMore) break
    offset += page.limit
  }
  const whole = await readArtifact(getBackgroundCommandStatus(host, build.taskId).stdout!.artifactId)
  console.log(bold("\nthe build's output, paged back in 200-character windows"))
  console.log(
    pages
      .join('')
      .trimEnd()
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  )
  console.log(
    `\n  ${pages.length} pages, ${pages.join('').length} characters — ${pages.join('') === whole ? paint(32, 'identical to the banked artifact') : paint(31, 'DIFFERENT from the banked artifact')}`,
  )
  const lintErr = await readArtifact(getBackgroundCommandStatus(host, lint.taskId).stderr!.artifactId)
  console.log(bold("\nthe lint's stderr, as evidence:"), lintErr.trimEnd())

  // Kernel confinement: the same allowed shell, now unable to touch $HOME.
  const support = confinementSupport()
  console.log(bold('\nkernel confinement'), dim(`(Landlock ABI ${support.landlockAbi}, seccomp ${support.seccomp})`))
  if (support.signals && support.seccomp) {
    const confined = { name: 'confined demo host' }
    setBackgroundCommandPolicy(confined, { allowedExecutables: ['/bin/sh'], cwdRoot: root, confine: {} })
    const target = join(homedir(), '.neurolink-demo-should-not-exist')
    const attempt = await startBackgroundCommand(confined, ['/bin/sh', '-c', `echo ok > in-root.txt && echo "wrote in the root"; echo pwned > ${target} && echo "wrote $HOME"`], {
      cwd: '.',
      label: 'confined',
    })
    const s = await awaitBackgroundCommand(confined, attempt.taskId)
    const out = await readArtifact(s.stdout!.artifactId)
    const err = await readArtifact(s.stderr!.artifactId)
    console.log(`  confined: ${s.confined}, exit ${s.exitCode}`)
    console.log(`  stdout: ${out.trimEnd()}`)
    console.log(`  stderr: ${paint(31, err.trimEnd())} ${dim('(the kernel refused the write to $HOME)')}`)

    // Two ways out that a model might try: pushing a line into the terminal
    // the host runs in (TIOCSTI), and planting a git hook that the user's
    // next `git commit` would run outside the confinement.
    execFileSync('git', ['init', '-q'], { cwd: root })
    const escape = await startBackgroundCommand(
      confined,
      [
        '/bin/sh',
        '-c',
        'python3 -c \'import os, fcntl, termios\nfd = os.open("/dev/tty", os.O_RDWR)\nfcntl.ioctl(fd, termios.TIOCSTI, b"x")\nprint("pushed a key")\' 2>&1 | tail -n 1; ' +
          'printf "#!/bin/sh\\necho planted\\n" > .git/hooks/pre-commit && echo "planted a hook"',
      ],
      { cwd: '.', label: 'escape attempts' },
    )
    const e = await awaitBackgroundCommand(confined, escape.taskId)
    const said = (await readArtifact(e.stdout!.artifactId)) + (await readArtifact(e.stderr!.artifactId))
    console.log(`  escape attempts: ${paint(31, said.trimEnd().split('\n').join('; '))}`)
    console.log(`  ${dim('(no terminal to push into: the command leads its own session; .git/hooks is read-only in its view)')}`)
    console.log(`  planted hook present: ${existsSync(join(root, '.git', 'hooks', 'pre-commit'))}`)
  } else {
    console.log(dim('  this kernel cannot enforce confinement; a confined start would be refused (NLC_CONFINEMENT_UNAVAILABLE)'))
  }
  await interactive(host)
}

/** An interactive command: a prompt in a terminal, answered while it runs. */
async function interactive(host: object): Promise<void> {
  console.log(bold('\nan interactive command: a prompt in a terminal, answered while it runs'))
  const script =
    'if [ -t 0 ]; then echo "(stdin is a terminal)"; fi; ' +
    'printf "Deploy to which environment? "; read env; ' +
    'printf "Type yes to deploy to %s: " "$env"; read ok; ' +
    '[ "$ok" = yes ] && echo "deploying to $env… done" || echo "cancelled"'
  const cmd = await startBackgroundCommand(host, ['/bin/sh', '-c', script], { cwd: '.', label: 'deploy', terminal: { cols: 80, rows: 24 } })
  const screen = async () => (await readBackgroundCommandOutput(host, cmd.taskId, { stream: 'stdout' })).content
  const waitFor = async (prompt: string) => {
    for (let i = 0; i < 500 && !(await screen()).includes(prompt); i++) await new Promise((r) => setTimeout(r, 10))
  }
  for (const [prompt, answer] of [
    ['environment? ', 'staging'],
    ['to staging: ', 'yes'],
  ]) {
    await waitFor(prompt)
    console.log(dim(`  the command asks ${JSON.stringify(prompt)}; still ${getBackgroundCommandStatus(host, cmd.taskId).state}, we answer ${JSON.stringify(answer)}`))
    // \r is the enter key, as a terminal sends it.
    await writeBackgroundCommandInput(host, cmd.taskId, `${answer}\r`)
  }
  const st = await awaitBackgroundCommand(host, cmd.taskId)
  console.log(`  ${st.label} ${paint(stateColor[st.state] ?? 0, st.state)} exit ${st.exitCode}; the terminal showed:`)
  console.log(
    (await screen())
      .trimEnd()
      .split('\r\n')
      .map((l) => `    ${l}`)
      .join('\n'),
  )
}

main().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
