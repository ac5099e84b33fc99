// A reference host that behaves like NeuroLink for the purposes of the tool
// and git suites: an artifact store with retrieve_context-style paging, a
// session per tool context, a tiny tool registry, and a checklist tool whose
// list result carries the session's command counters.
import * as nc from '../index.js'

/** One artifact the host banked. */
export interface StoredArtifact {
  artifactId: string
  content: string
  kind: string
  label: string
  sessionId: string
  previewChars: number
}

/** A retrieve_context page: a window of an artifact in UTF-16 code units. */
export interface ContextPage {
  artifactId: string
  content: string
  offset: number
  limit: number
  totalSize: number
  hasMore: boolean
}

/** The checklist's list result. */
export interface ChecklistList {
  items: { text: string; done: boolean }[]
  commandsRunning: number
  commandsFinished: number
}

/** What a tool handler receives as its execution context. */
export interface HostToolContext {
  sessionId?: string
}

/** A tool the registry can execute. */
export interface HostTool {
  name: string
  description: string
  inputSchema: nc.JsonSchema
  execute(params: Record<string, unknown>, context?: HostToolContext): Promise<unknown>
}

/** Thrown by executeTool for a name nobody registered (never a refusal of the tool itself). */
export class UnknownToolError extends Error {}

let hostCounter = 0

export class ReferenceHost {
  /** The session getToolContext() reports; `undefined` makes it report none. */
  sessionId: string | undefined
  /** Every artifact banked through bankArtifact, by id. */
  readonly artifacts = new Map<string, StoredArtifact>()
  /** Every bankArtifact call, in order (content length, options). */
  readonly bankCalls: { size: number; options: nc.BankArtifactOptions }[] = []
  private readonly tools = new Map<string, HostTool>()
  private readonly checklists = new Map<string, { text: string; done: boolean }[]>()
  private readonly prefix: string
  private artifactCounter = 0

  constructor(sessionId: string | undefined = undefined, options: { neurolinkSessions?: boolean } = {}) {
    hostCounter += 1
    this.prefix = `ref${hostCounter}`
    this.sessionId = sessionId
    this.register(this.retrieveContextTool())
    this.register(this.checklistTool())
    if (options.neurolinkSessions) {
      // NeuroLink's swap line: the addon files every command under the
      // session its checklist reads.
      nc.setSessionResolver(this, (context) => this.resolveChecklistSessionId(context as HostToolContext | undefined))
      this.register(this.tasksListTool())
    }
  }

  /** NeuroLink's setToolContext: the session getToolContext() reports from now on. */
  setToolContext(context: { sessionId?: string }): void {
    this.sessionId = context.sessionId
  }

  /**
   * The checklist's session rule, as NeuroLink's checklist applies it: the
   * execution context's id, else the tool context's, each trimmed and
   * ignored when empty or synthetic (`fallback-<ms>`, what the tool-context
   * merge invents when no session was declared); else one stable session
   * per host.
   */
  resolveChecklistSessionId(context?: HostToolContext): string {
    const usable = (id: unknown): string | undefined => {
      if (typeof id !== 'string') return undefined
      const t = id.trim()
      return t.length === 0 || /^fallback-\d+$/.test(t) ? undefined : t
    }
    return usable(context?.sessionId) ?? usable(this.getToolContext().sessionId) ?? `${this.prefix}-checklist`
  }

  // --- NeuroLink's surface the addon reads -------------------------------

  getToolContext(): { sessionId?: string } {
    return this.sessionId === undefined ? {} : { sessionId: this.sessionId }
  }

  async bankArtifact(content: string, options: nc.BankArtifactOptions): Promise<nc.BankedArtifactRef> {
    this.artifactCounter += 1
    const artifactId = `${this.prefix}-art-${this.artifactCounter}`
    this.bankCalls.push({ size: content.length, options: { ...options } })
    this.artifacts.set(artifactId, {
      artifactId,
      content,
      kind: options.kind,
      label: options.label,
      sessionId: options.sessionId,
      previewChars: options.previewChars,
    })
    const preview = content.length > options.previewChars ? `${content.slice(0, options.previewChars)}…` : content
    return {
      artifactId,
      label: options.label,
      kind: 'command-output',
      sizeBytes: Buffer.byteLength(content, 'utf8'),
      preview,
      readBackHint: `retrieve_context({ "artifactId": "${artifactId}", "offset": 0, "limit": 50000 }) returns the complete text in pages`,
    }
  }

  // --- the host's own artifact API ----------------------------------------

  readArtifact(artifactId: string): string {
    const a = this.artifacts.get(artifactId)
    if (!a) throw new Error(`No artifact "${artifactId}" in this host's store`)
    return a.content
  }

  retrieveContext(artifactId: string, offset = 0, limit = 50000): ContextPage {
    const content = this.readArtifact(artifactId)
    const start = Math.max(0, Math.floor(offset))
    const size = Math.min(200000, Math.max(1, Math.floor(limit)))
    return {
      artifactId,
      content: content.slice(start, start + size),
      offset: start,
      limit: size,
      totalSize: content.length,
      hasMore: start + size < content.length,
    }
  }

  // --- registration, as NeuroLink's register* methods do ------------------

  registerBackgroundCommandTools(policy: nc.BackgroundCommandPolicy): string[] {
    nc.setBackgroundCommandPolicy(this, policy)
    return this.registerAll(nc.createBackgroundCommandTools(this))
  }

  /** Registers the command tools without any policy (they must refuse in-band). */
  registerCommandToolsOnly(): string[] {
    return this.registerAll(nc.createBackgroundCommandTools(this))
  }

  registerGitTools(options: nc.GitToolsetOptions): nc.GitToolRuntimeSettings {
    const settings = nc.configureGitTools(this, options)
    this.registerAll(nc.createGitTools(this))
    return settings
  }

  /** Registers the git tools without configuring them (they must refuse in-band). */
  registerGitToolsOnly(): string[] {
    return this.registerAll(nc.createGitTools(this))
  }

  toolNames(): string[] {
    return [...this.tools.keys()]
  }

  tool(name: string): HostTool {
    const t = this.tools.get(name)
    if (!t) throw new UnknownToolError(`No tool "${name}" is registered; registered: ${this.toolNames().join(', ')}`)
    return t
  }

  /** Run a registered tool the way the agent loop does: the context's session, else the host's. */
  async executeTool(name: string, params: unknown, context?: HostToolContext): Promise<unknown> {
    const t = this.tool(name)
    return t.execute(params as Record<string, unknown>, context)
  }

  /** The session a tool call counts in: the execution context's, else the host's tool context's. */
  sessionFor(context?: HostToolContext): string | undefined {
    if (context && typeof context.sessionId === 'string' && context.sessionId.length > 0) return context.sessionId
    return this.getToolContext().sessionId
  }

  private register(t: HostTool): void {
    this.tools.set(t.name, t)
  }

  private registerAll(tools: nc.BackgroundCommandTools | nc.GitTools): string[] {
    const all: nc.CommandTool[] = Object.values(tools)
    for (const t of all) {
      this.register({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
        execute: (params, context) => t.execute(params, context),
      })
    }
    return Object.keys(tools)
  }

  private retrieveContextTool(): HostTool {
    return {
      name: 'retrieve_context',
      description: 'Read a banked artifact back, one page at a time.',
      inputSchema: {
        type: 'object',
        properties: {
          artifactId: { type: 'string' },
          offset: { type: 'integer', minimum: 0 },
          limit: { type: 'integer', minimum: 1, maximum: 200000 },
        },
        required: ['artifactId'],
        additionalProperties: false,
      },
      execute: async (params) => {
        try {
          const { artifactId, offset, limit } = params as { artifactId: unknown; offset?: number; limit?: number }
          if (typeof artifactId !== 'string') throw new Error('retrieve_context expects { artifactId: string }')
          return this.retrieveContext(artifactId, offset, limit)
        } catch (e) {
          return { isError: true, error: (e as Error).message }
        }
      },
    }
  }

  /** NeuroLink's `tasks_list`: the checklist's session, with that session's command counters. */
  private tasksListTool(): HostTool {
    return {
      name: 'tasks_list',
      description: "The session's checklist and how many background commands run or finished unread.",
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      execute: async (_params, context) => {
        const session = this.resolveChecklistSessionId(context)
        const counts = nc.sessionCommandCounts(session)
        const list: ChecklistList & { sessionId: string } = {
          sessionId: session,
          items: (this.checklists.get(session) ?? []).map((i) => ({ ...i })),
          commandsRunning: counts.running,
          commandsFinished: counts.finished,
        }
        return list
      },
    }
  }

  private checklistTool(): HostTool {
    return {
      name: 'checklist',
      description: 'A per-session checklist; its list shows how many background commands run or finished unread.',
      inputSchema: {
        type: 'object',
        properties: {
          action: { type: 'string', enum: ['add', 'done', 'list'] },
          text: { type: 'string' },
        },
        required: ['action'],
        additionalProperties: false,
      },
      execute: async (params, context) => {
        const session = this.sessionFor(context) ?? 'reference-host-default'
        const items = this.checklists.get(session) ?? []
        this.checklists.set(session, items)
        const { action, text } = params as { action: unknown; text?: unknown }
        if (action === 'add' && typeof text === 'string') items.push({ text, done: false })
        else if (action === 'done' && typeof text === 'string') {
          const item = items.find((i) => i.text === text)
          if (item) item.done = true
        } else if (action !== 'list') {
          return { isError: true, error: 'checklist expects { action: "add" | "done" | "list", text?: string }' }
        }
        const counts = nc.sessionCommandCounts(session)
        const list: ChecklistList = {
          items: items.map((i) => ({ ...i })),
          commandsRunning: counts.running,
          commandsFinished: counts.finished,
        }
        return list
      },
    }
  }
}
