/**
 * Agent scopes: the host's own per-agent tables. A registration made through an agent's context
 * lands here instead of in a global list, so dispatching an event about one agent never scans the
 * listeners of any other agent, and a plain agent that nobody registers into costs nothing.
 */
import type { Context, EventsService } from 'cordis'
import type { ErrorSink, Listener } from '../../lib/dispatch.ts'
import { AgentDisposedError } from '../../lib/errors.ts'
import type { SmallMap } from '../../lib/small-map.ts'
import type { Agent, ModelAdapter, ToolGuard } from '../../lib/types.ts'
import { Dispatch } from '../../cordis-glue/bridge.ts'

/**
 * Where an agent's scope is kept: on the host's agent object (made with it) and on the agent's
 * context (inherited by every context derived from it). Read it through `scopeOf`.
 */
export const kScope: unique symbol = Symbol.for('subagent-inprocess.scope') as never

export type { Listener }

/** Events whose subject is one agent: scoped listeners receive only their own agent's. */
export const scopedEvents: ReadonlySet<string> = new Set([
  'agent/created',
  'agent/disposed',
  'agent/pre-step',
  'agent/turn-stop',
  'agent/model-request',
  'session/event',
  'system-prompt/assemble',
  'tools/pre-execute',
  'tools/approve',
  'tools/post-execute',
  'tools/result',
])

export interface ScopedSection { name: string; order: number; text: string; seq: number }

export interface ScopedTool {
  name: string
  description: string
  parameters: { [key: string]: unknown }
  concurrent: boolean
  /** `ToolDefinition.readOnly`: the tool only reads (approval policies decide it by `readOnly`). */
  readOnly: boolean
  execute: (args: never, exec: never) => unknown
  available?: (agent: Agent) => boolean
}

/**
 * Values by name where the newest registration wins, and removing one (in any order) exposes the
 * newest one still registered: a removed entry never comes back.
 */
export class NameTable<T> {
  readonly #entries = new Map<string, T[]>()

  get size(): number {
    return this.#entries.size
  }

  /** Registers `value` under `name`; the returned function removes exactly this registration. */
  add(name: string, value: T): () => void {
    let stack = this.#entries.get(name)
    if (!stack) this.#entries.set(name, (stack = []))
    stack.push(value)
    return () => {
      const index = stack.lastIndexOf(value)
      if (index < 0) return
      stack.splice(index, 1)
      if (!stack.length && this.#entries.get(name) === stack) this.#entries.delete(name)
    }
  }

  get(name: string): T | undefined {
    const stack = this.#entries.get(name)
    return stack?.[stack.length - 1]
  }

  /** The current value of every name. */
  *current(): IterableIterator<[string, T]> {
    for (const [name, stack] of this.#entries) yield [name, stack[stack.length - 1]]
  }
}

export interface Restriction { allow?: ReadonlySet<string>; deny?: ReadonlySet<string> }

/**
 * What an agent's scope holds once anything is made in it: its context and fiber, and the tables
 * of what was registered through it. Most children never get one (see `AgentScope`).
 */
class ScopeContents {
  /** The agent's own tools: a `SmallMap`, since a scope holds a few at most. */
  tools?: SmallMap<string, ScopedTool> = undefined
  sections?: NameTable<ScopedSection> = undefined
  /**
   * Listener lists by event name, flat: `[name, list, name, list, …]`. A scope listens to a few
   * events at most (a structured child: three), and an exact-size array of them is a fraction of a
   * `Map` and its table. Read it through `hooksFor`.
   */
  hooks?: readonly (string | Listener[])[] = undefined
  guards?: ToolGuard[] = undefined
  restrictions?: Restriction[] = undefined
  models?: NameTable<ModelAdapter> = undefined
  /** `AgentSlot` values, flat: `[slot, value, …]`. Kept after `clear()`: they go with the agent. */
  slots?: readonly unknown[] = undefined
  ctx?: Context = undefined
  fiber?: Context['fiber'] = undefined
}

/**
 * `hooks` with a pair for `name` added, in a new array of the exact size: a spread, a `filter` or
 * an empty array's first push reserves room for up to 17 entries, and `concat` with a string
 * among its arguments takes a slow path (arrays alone it copies at the exact size).
 */
function withEvent(hooks: readonly (string | Listener[])[] | undefined, name: string, listener: Listener): (string | Listener[])[] {
  if (!hooks) return [name, [listener]]
  const length = hooks.length
  const next = new Array<string | Listener[]>(length + 2)
  for (let index = 0; index < length; index++) next[index] = hooks[index]!
  next[length] = name
  next[length + 1] = [listener]
  return next
}

/**
 * Everything registered through one agent's context. Cleared when the agent is disposed.
 *
 * The tables, the context and the fiber live in one object made on the first write: a settled
 * child that nobody registers into holds six fields here instead of fourteen, and it is held for
 * as long as the child lives (reading any of them stays one property load through an accessor).
 */
export class AgentScope {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly agent: Agent
  declare readonly owner: Agent | undefined
  declare readonly callerCtx: Context
  #contents?: ScopeContents = undefined
  /** Bumped whenever the set of tools this agent sees may have changed. */
  declare toolsVersion: number
  /** Set by `clear()`: the agent is gone, and nothing may be registered into it again. */
  declare isDisposed: boolean

  /**
   * The agent's context is made under `owner`'s context when it has an owner agent, else under
   * `callerCtx` (the context that created it).
   */
  constructor(agent: Agent, owner: Agent | undefined, callerCtx: Context) {
    this.agent = agent
    this.owner = owner
    this.callerCtx = callerCtx
    this.toolsVersion = 0
    this.isDisposed = false
  }

  // `private`, not `#`: a class with #methods gives every instance a brand slot
  private made(): ScopeContents {
    return (this.#contents ??= new ScopeContents())
  }

  get tools(): SmallMap<string, ScopedTool> | undefined { return this.#contents?.tools }
  set tools(value: SmallMap<string, ScopedTool> | undefined) { this.made().tools = value }
  get sections(): NameTable<ScopedSection> | undefined { return this.#contents?.sections }
  set sections(value: NameTable<ScopedSection> | undefined) { this.made().sections = value }
  get hooks(): readonly (string | Listener[])[] | undefined { return this.#contents?.hooks }
  set hooks(value: readonly (string | Listener[])[] | undefined) { this.made().hooks = value }
  get guards(): ToolGuard[] | undefined { return this.#contents?.guards }
  set guards(value: ToolGuard[] | undefined) { this.made().guards = value }
  get restrictions(): Restriction[] | undefined { return this.#contents?.restrictions }
  set restrictions(value: Restriction[] | undefined) { this.made().restrictions = value }
  get models(): NameTable<ModelAdapter> | undefined { return this.#contents?.models }
  set models(value: NameTable<ModelAdapter> | undefined) { this.made().models = value }
  get slots(): readonly unknown[] | undefined { return this.#contents?.slots }
  set slots(value: readonly unknown[] | undefined) { this.made().slots = value }
  /** The agent's scope context, once it exists. */
  get ctx(): Context | undefined { return this.#contents?.ctx }
  set ctx(value: Context | undefined) { this.made().ctx = value }
  /** The cordis fiber behind that context, made only when something needs one (see agents). */
  get fiber(): Context['fiber'] | undefined { return this.#contents?.fiber }
  set fiber(value: Context['fiber'] | undefined) { this.made().fiber = value }

  /** The listeners of `name` registered through this scope, in order, or `undefined`. */
  hooksFor(name: string): Listener[] | undefined {
    const hooks = this.#contents?.hooks
    if (hooks) for (let i = 0; i < hooks.length; i += 2) if (hooks[i] === name) return hooks[i + 1] as Listener[]
    return undefined
  }

  /** Adds `listener` for `name` for the scope's whole life: no remover is made (`listenFor`). */
  keepHook(name: string, listener: Listener, prepend: boolean): void {
    const list = this.hooksFor(name)
    if (!list) this.hooks = withEvent(this.hooks, name, listener)
    else if (prepend) list.unshift(listener)
    else list.push(listener)
  }

  /** Adds `listener` for `name`; the returned function removes exactly this registration, once. */
  addHook(name: string, listener: Listener, prepend: boolean): () => void {
    this.keepHook(name, listener, prepend)
    // once only: the same listener may be registered twice, and each removal takes one
    let isRemoved = false
    return () => {
      if (isRemoved) return
      isRemoved = true
      const current = this.hooksFor(name)
      const index = current ? current.indexOf(listener) : -1
      if (index < 0) return
      current!.splice(index, 1)
      if (current!.length) return
      const hooks = this.hooks!
      // drops the pair: the name at an even index, its list after it
      const at = hooks.indexOf(name)
      this.hooks = hooks.length > 2 ? hooks.slice(0, at).concat(hooks.slice(at + 2)) : undefined
    }
  }

  /** Drops every table (the context and fiber stay readable: disposal has already ended the fiber). */
  clear(): void {
    this.isDisposed = true
    const contents = this.#contents
    if (contents) contents.tools = contents.sections = contents.hooks = contents.guards = contents.restrictions = contents.models = undefined
    this.toolsVersion++
  }
}

/**
 * One value per host agent, kept in the agent's scope (made with the agent, gone with it) rather
 * than in a `WeakMap`: entering a short-lived agent into a weak map costs several times a field
 * write (its ephemeron is traced by every scavenge that finds it), and a structured child is one.
 * `get` answers `undefined` for anything that is not a host agent, or an agent never given a value.
 */
export class AgentSlot<T> {
  /** The value for `agent`, or `undefined`. */
  get(agent: Agent | undefined): T | undefined {
    const slots = scopeOf(agent)?.slots
    if (slots) for (let i = 0; i < slots.length; i += 2) if (slots[i] === this) return slots[i + 1] as T
    return undefined
  }

  /** Gives `agent` this slot's value; throws a `TypeError` for an agent the host did not make. */
  set(agent: Agent, value: T): void {
    const scope = scopeOf(agent)
    if (!scope) throw new TypeError('agent slot needs an agent made by the host')
    const slots = scope.slots
    if (!slots) {
      scope.slots = [this, value]
      return
    }
    let at = -1
    for (let i = 0; i < slots.length && at < 0; i += 2) if (slots[i] === this) at = i
    if (at < 0) {
      // exact size: a push would reserve room for more entries than a scope ever holds
      scope.slots = slots.concat([this, value])
      return
    }
    const next = slots.slice()
    next[at + 1] = value
    scope.slots = next
  }
}

/**
 * The agent scope of a host agent, or of a context that is (derived from) an agent's context;
 * `undefined` for anything else. The one way to find a scope: hot paths read it once and hold it.
 */
export function scopeOf(subject: { readonly [kScope]: AgentScope }): AgentScope
export function scopeOf(subject: Context | Agent | undefined): AgentScope | undefined
export function scopeOf(subject: object | undefined): AgentScope | undefined {
  return subject ? (subject as { [kScope]?: AgentScope })[kScope] : undefined
}

/**
 * The scope of the agent whose own context `ctx` is (not one derived from it), where registrations
 * go straight into the agent's tables; `undefined` for any other context. Throws
 * `AgentDisposedError` when that agent is gone.
 */
function ownScope(ctx: Context): AgentScope | undefined {
  const scope = scopeOf(ctx)
  if (!scope || ctx !== scope.ctx) return undefined
  // a late caller (a setup that outlived its rolled-back creation, a tool that ignored its
  // signal) must not leave registrations in the tables of an agent that is gone
  if (scope.isDisposed) throw new AgentDisposedError(scope.agent.id)
  return scope
}

/**
 * Installs a registration for the lifetime of the calling context. A registration made directly
 * through an agent's context lives in that agent's tables and goes with them, so it spends no
 * cordis effect (nor fiber); any other one is an effect of the caller's fiber.
 */
export function installScoped(
  ctx: Context,
  label: string | (() => string),
  install: (scope: AgentScope | undefined) => () => void,
): () => void {
  const own = ownScope(ctx)
  if (own) {
    const remove = install(own)
    let done = false
    return () => {
      if (done) return
      done = true
      remove()
    }
  }
  // the label names the effect in cordis's listings; an agent's tables need none
  return ctx.effect(() => install(scopeOf(ctx)), typeof label === 'string' ? label : label()) as () => void
}

/** Throws a `TypeError` naming the event `name` when `listener` is not a function. */
export function assertListener(name: string, listener: unknown): asserts listener is Listener {
  if (typeof listener !== 'function') throw new TypeError(`listener for "${name}" must be a function`)
}

/**
 * Puts a listener for an event about one agent (`scopedEvents`) registered through an agent's
 * context, or one derived from it, into that agent's own table; `undefined` (cordis registers it)
 * for any other event or context. Throws a `TypeError` naming the event for a non-function.
 */
export function routeScopedListener(ctx: Context, name: string, listener: Listener, prepend: boolean): (() => void) | undefined {
  const scope = scopeOf(ctx)
  if (!scope || !scopedEvents.has(name)) return undefined
  assertListener(name, listener)
  // through the agent's own context (a plugin equipping its child, e.g. in `subagent/setup`): the table's own
  // once-only removal, without the closures an effect needs
  if (ownScope(ctx)) return scope.addHook(name, listener, prepend)
  return installScoped(ctx, () => `ctx.on(${JSON.stringify(name)})`, () => scope.addHook(name, listener, prepend))
}

/**
 * Dispatches events about one agent: global listeners first (in cordis's order), then the agent's
 * own. Nothing is scanned when nobody listens.
 */
export class HookDispatcher {
  readonly #dispatch: Dispatch

  constructor(events: EventsService, onError: ErrorSink) {
    this.#dispatch = new Dispatch(events, onError)
  }

  /** True when at least one listener would receive `name` for this scope. */
  has(name: string, scope: AgentScope | undefined): boolean {
    return this.#dispatch.has(name, scope?.hooksFor(name))
  }

  /** Observe-only dispatch: a throwing or rejecting listener is contained and reported. */
  emit(scope: AgentScope | undefined, name: string, ...args: unknown[]): void {
    this.#dispatch.emit(name, args, scope?.hooksFor(name))
  }

  /** First truthy answer wins; a throw propagates to the dispatcher's caller. */
  bail(scope: AgentScope | undefined, name: string, ...args: unknown[]): unknown {
    return this.#dispatch.bail(name, args, scope?.hooksFor(name))
  }

  /** Asks listeners in turn, awaited, until one answers (see `Dispatch.ask`). */
  ask(scope: AgentScope | undefined, name: string, ...args: unknown[]): Promise<unknown> {
    return this.#dispatch.ask(name, args, scope?.hooksFor(name))
  }

  /** Each listener gets `(...args, next)`; one that does not call `next()` short-circuits the core. */
  waterfall<R>(scope: AgentScope | undefined, name: string, args: unknown[], core: () => R): R {
    return this.#dispatch.waterfall(name, args, core, scope?.hooksFor(name))
  }

  /** `waterfall` where every `next()` (and the dispatch) returns a promise; throws become rejections. */
  waterfallAsync<R>(scope: AgentScope | undefined, name: string, args: unknown[], core: () => R | Promise<R>): Promise<R> {
    return this.#dispatch.waterfallAsync(name, args, core, scope?.hooksFor(name))
  }
}
