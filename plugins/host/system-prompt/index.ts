import type { Context } from 'cordis'
import { PromptTextCache, promptText } from '../../../lib/text/prompt-text.ts'
import type { Agent, PromptAssembly, PromptSection } from '../../../lib/types.ts'
import { HostService } from '../host-service.ts'
import { type AgentScope, type HookDispatcher, installScoped, NameTable, type ScopedSection, scopeOf } from '../scope.ts'

declare module 'cordis' {
  interface Context {
    systemPrompt: SystemPrompt
  }
  interface Events {
    /**
     * Shapes one agent's prompt: a listener may add, drop or reorder `assembly.sections` and
     * returns the assembly (usually `next()` after editing). Synchronous: a listener that returns a
     * promise, or throws, fails the model step, which ends the turn with `error`. Scoped. @mode waterfall
     */
    'system-prompt/assemble'(
      assembly: PromptAssembly,
      info: { agent: Agent },
      next: () => PromptAssembly,
    ): PromptAssembly
  }
}

export interface AssembledPrompt {
  readonly sections: readonly PromptSection[]
  readonly text: string
}

let sectionCounter = 0

function assertSection(section: PromptSection): void {
  if (typeof section !== 'object' || section === null) throw new TypeError('prompt section must be an object')
  if (typeof section.name !== 'string' || !section.name) throw new TypeError('prompt section name must be a non-empty string')
  if (typeof section.order !== 'number' || !Number.isFinite(section.order)) {
    throw new TypeError(`prompt section "${section.name}" order must be a finite number`)
  }
  if (typeof section.text !== 'string') throw new TypeError(`prompt section "${section.name}" text must be a string`)
}

function freezeAssembled(assembled: AssembledPrompt): AssembledPrompt {
  for (const section of assembled.sections) Object.freeze(section)
  Object.freeze(assembled.sections)
  return Object.freeze(assembled)
}

/** System prompt sections and their assembly (SPEC §1.6). */
export class SystemPrompt extends HostService {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  private readonly globals = new NameTable<ScopedSection>()
  private globalCache?: AssembledPrompt
  /** The global sections in registration order, while no global section changes. */
  private globalEntries?: readonly ScopedSection[]
  private readonly texts = new PromptTextCache()

  constructor(ctx: Context, dispatcher: HookDispatcher) {
    super(ctx, 'systemPrompt', dispatcher)
  }

  /**
   * Adds a section for the calling context's lifetime. A scoped section shadows a global one of
   * the same name for its agent; a second global (or same-scope) section with a taken name
   * replaces it until removed.
   */
  section(section: PromptSection): () => void {
    assertSection(section)
    const entry: ScopedSection = { name: section.name, order: section.order, text: section.text, seq: ++sectionCounter }
    return installScoped(this.ctx, `ctx.systemPrompt.section(${section.name})`, (scope) => {
      const table = scope ? (scope.sections ??= new NameTable()) : this.globals
      const remove = table.add(entry.name, entry)
      if (!scope) this.globalsChanged()
      return () => {
        remove()
        if (!scope) this.globalsChanged()
      }
    })
  }

  /** Assembles the agent's prompt through the `system-prompt/assemble` waterfall. */
  assemble(agent: Agent): AssembledPrompt {
    const scope = scopeOf(agent)
    const dispatcher = this.dispatcher
    const isListened = dispatcher.has('system-prompt/assemble', scope)
    if (!scope?.sections?.size && !isListened) {
      // shared by every agent without scoped sections: frozen, so no caller can edit another's prompt
      return (this.globalCache ??= freezeAssembled(this.build(undefined)))
    }
    if (!isListened) return this.build(scope)
    // listeners edit this object and pass it on; the core hands back whatever reached it
    const initial: PromptAssembly = { sections: this.sections(scope) }
    const assembly = dispatcher.waterfall<PromptAssembly>(scope, 'system-prompt/assemble', [initial, { agent }], () => initial)
    if (typeof (assembly as unknown as PromiseLike<unknown> | null)?.then === 'function') {
      // the hook is synchronous: contain the promise, so its rejection does not go unhandled
      Promise.resolve(assembly).catch(() => {})
      throw new TypeError('a system-prompt/assemble listener returned a promise; the hook is synchronous')
    }
    if (!assembly || !Array.isArray(assembly.sections)) {
      throw new TypeError('a system-prompt/assemble listener returned no assembly')
    }
    const sections = assembly.sections.slice()
    return { sections, text: this.texts.text(sections) }
  }

  private globalsChanged(): void {
    this.globalCache = undefined
    this.globalEntries = undefined
  }

  private build(scope: AgentScope | undefined): AssembledPrompt {
    const sections = this.sections(scope)
    return { sections, text: promptText(sections) }
  }

  /** Fresh copies of the sections the agent of `scope` sees, in registration order. */
  private sections(scope: AgentScope | undefined): PromptSection[] {
    let entries: readonly ScopedSection[]
    if (scope?.sections?.size) {
      const merged = new Map<string, ScopedSection>(this.globals.current())
      for (const [name, section] of scope.sections.current()) merged.set(name, section)
      entries = [...merged.values()].sort((a, b) => a.seq - b.seq)
    } else {
      entries = this.globalEntries ??= [...this.globals.current()].map(([, section]) => section).sort((a, b) => a.seq - b.seq)
    }
    return entries.map(({ name, order, text }) => ({ name, order, text }))
  }
}
