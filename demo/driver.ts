/**
 * `DemoDriver` (demo): creates a parent agent, gives it the context turn and the delegation task,
 * waits until no background child is pending and the turns their results started have ended, then
 * emits `loader/exit` — 0 when every turn and every child completed, else 1. With no API key the
 * parent and its children run on the scripted model (`demo/script.ts`).
 */
import { relative } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { rawService } from '../cordis-glue/bridge.ts'
import { isEvent } from '../lib/session/session-event.ts'
import type { Agent, TurnEndReason, Usage } from '../lib/types.ts'
import type {} from '../plugins/host/index.ts'
import type {} from '../plugins/inprocess-run/index.ts'
import type {} from '../plugins/loader/index.ts'
import type {} from '../plugins/mcp-tools/index.ts'
import type {} from '../plugins/scripted-model/index.ts'
import type {} from '../plugins/subagent-tool/index.ts'
import type { TreeBudget } from '../plugins/tree-budget/index.ts'
import { type Locale, localeOption, localizeConfig, text } from '../locales/index.ts'
import { canPlayDefinitionsScene, definitionsMessage } from './definitions-scene.ts'
import { PUBLISH_TOOL } from './release-scene.ts'
import { demoReply } from './script.ts'
import { story } from './story.ts'
import { formatTokens } from '../plugins/transcript/index.ts'

interface ModelChoice {
  provider: string
  model: string
  /** How the choice was made, for the header line. */
  note: string
}

/**
 * `auto`: the first provider whose key is in the environment; else `OPENAI_BASE_URL` alone (a
 * keyless local server: the `openai` entry reads it), with the model `OPENAI_MODEL` or the
 * config's names; else the scripted model.
 */
const keyedProviders = [
  { env: 'DEEPSEEK_API_KEY', provider: 'deepseek', model: 'deepseek-chat' },
  { env: 'OPENAI_API_KEY', provider: 'openai', model: 'gpt-4o-mini' },
]

export function chooseModel(config: DemoDriver.Config, env: NodeJS.ProcessEnv = process.env): ModelChoice {
  const locale = config.locale ?? 'en-US'
  if (config.provider !== 'auto') {
    return { provider: config.provider, model: config.model ?? 'demo', note: text(locale, 'demo.noteConfig') }
  }
  for (const { env: name, provider, model } of keyedProviders) {
    if (env[name]) return { provider, model: config.model ?? model, note: text(locale, 'demo.noteKey', { env: name }) }
  }
  const baseURL = env.OPENAI_BASE_URL
  if (baseURL) {
    const model = config.model ?? env.OPENAI_MODEL ?? 'gpt-4o-mini'
    return { provider: 'openai', model, note: text(locale, 'demo.noteBaseUrl', { url: baseURL }) }
  }
  return { provider: 'scripted', model: config.model ?? 'demo', note: text(locale, 'demo.noteScripted') }
}

function lastTurnEnd(agent: Agent): TurnEndReason | undefined {
  for (let index = agent.session.events.length - 1; index >= 0; index--) {
    const event = agent.session.events[index]
    if (isEvent(event, 'turn/end')) return event.data.reason
  }
  return undefined
}

function addUsage(total: Usage, usage: Usage | undefined): void {
  if (!usage) return
  total.inputTokens += usage.inputTokens
  total.outputTokens += usage.outputTokens
}

/** Why a run finished with problems, as one line: the parent's turn, or what its children did. */
function problemReason(agent: Agent, isComplete: boolean, children: { started: number; completed: number }, locale: Locale): string {
  if (!isComplete) {
    const end = lastTurnEnd(agent)
    const detail = end?.kind === 'error' ? `${end.kind}: ${end.error.message}` : (end?.kind ?? 'unknown')
    return text(locale, 'demo.reasonTurn', { reason: detail })
  }
  if (children.started === 0) return text(locale, 'demo.reasonNoChild')
  return text(locale, 'demo.reasonChildren', { failed: children.started - children.completed, started: children.started })
}

/** Runs the demo once per apply; unloading the plugin disposes the parent (and so its children). */
export function DemoDriver(ctx: Context, config: DemoDriver.Config): void {
  // --quiet (CI): only the final summary line
  const quiet = ctx.get('verbosity')?.level === 'quiet'
  const write = (line: string) => process.stdout.write(`${line}\n`)
  const say = (line: string) => quiet || write(line)
  const locale = config.locale ?? 'en-US'
  const texts = story(locale)
  const choice = chooseModel(config)
  let isActive = true
  ctx.effect(() => () => {
    isActive = false
  }, 'demo run')
  if (choice.provider === 'scripted') {
    // held directly: when the model plugin unloads first, the teardown must not go through `ctx`
    const scripted = rawService(ctx.scripted)
    ctx.effect(() => {
      scripted.repeat(demoReply)
      return () => scripted.repeat(undefined)
    }, 'demo script')
  }
  ctx.systemPrompt.section({ name: 'persona', order: 0, text: texts.persona })

  const children = { started: 0, completed: 0, usage: { inputTokens: 0, outputTokens: 0 } }
  ctx.on('subagent/start', () => {
    children.started++
  })
  ctx.on('subagent/end', (info) => {
    if (info.stopReason === 'completed') children.completed++
    addUsage(children.usage, info.usage)
  })

  const run = async (): Promise<number> => {
    say(text(locale, 'demo.title'))
    // the file the loader actually read, which need not be the cordis.yml of this checkout
    const configFile = ctx.get('hostConfigFile')
    if (configFile) say(text(locale, 'demo.config', { file: relative(process.cwd(), configFile) || configFile }))
    say(text(locale, 'demo.model', { provider: choice.provider, model: choice.model, note: choice.note }))
    say('')
    // with McpTools loaded, the agents start once its servers have connected (or failed)
    await ctx.get('mcpTools')?.ready()
    const startedAt = performance.now()
    const { agent } = await ctx.agents.create({ agentOptions: { provider: choice.provider, model: choice.model } })
    say(text(locale, 'demo.parent', { id: agent.id.slice(0, 8) }))
    const parentUsage: Usage = { inputTokens: 0, outputTokens: 0 }
    let isComplete = true
    const background = ctx.subagentTool
    for (const message of [texts.context, texts.task]) {
      agent.followup(message)
      await agent.whenIdle()
      if (lastTurnEnd(agent)?.kind !== 'completed') {
        isComplete = false
        break
      }
    }
    // background children report by starting turns of their own: the demo ends after those
    while (isComplete && isActive && background.pending(agent).length) {
      await background.settled(agent)
      await agent.whenIdle()
      if (lastTurnEnd(agent)?.kind !== 'completed') isComplete = false
    }
    // the approval scene (demo/release-scene.ts), when its tool is loaded: a child's call asks a person
    if (isComplete && isActive && ctx.get('tools')?.get(PUBLISH_TOOL)) {
      agent.followup(text(locale, 'demo.release'))
      await agent.whenIdle()
      if (lastTurnEnd(agent)?.kind !== 'completed') isComplete = false
    }
    // the agent definitions scene (demo/definitions-scene.ts), when agents/ is loaded: delegation by name
    if (isComplete && isActive && canPlayDefinitionsScene(ctx.inprocessRun.catalog())) {
      agent.followup(definitionsMessage(locale))
      await agent.whenIdle()
      if (lastTurnEnd(agent)?.kind !== 'completed') isComplete = false
    }
    // unloaded mid-run (hot reload): the parent is gone, and so is the audience
    if (!isActive) return 1
    for (const event of agent.session.events) {
      if (isEvent(event, 'assistant/message')) addUsage(parentUsage, event.data.usage)
    }
    // with TreeBudget loaded, the tree's own roll-up: every agent of the tree, each message once
    const budget = ctx.get('treeBudget') as TreeBudget | undefined
    const tree = budget?.usage(agent)
    const total = tree
      ? { inputTokens: tree.inputTokens, outputTokens: tree.outputTokens }
      : { inputTokens: parentUsage.inputTokens + children.usage.inputTokens, outputTokens: parentUsage.outputTokens + children.usage.outputTokens }
    const ok = isComplete && children.started > 0 && children.completed === children.started
    const reason = ok ? undefined : problemReason(agent, isComplete, children, locale)
    const params = {
      completed: children.completed,
      started: children.started,
      tokens: formatTokens(total, locale),
      ms: Math.round(performance.now() - startedAt),
    }
    write(
      tree
        ? text(locale, ok ? 'demo.doneTree' : 'demo.problemsTree', { ...params, requests: tree.modelRequests })
        : text(locale, ok ? 'demo.done' : 'demo.problems', params),
    )
    if (reason !== undefined) write(reason)
    return ok ? 0 : 1
  }

  run().then(
    (code) => {
      if (isActive) ctx.emit('loader/exit', code)
    },
    (error) => {
      if (!isActive) return
      ctx.logger.error(error)
      ctx.emit('loader/exit', 1)
    },
  )
}

export namespace DemoDriver {
  export const inject = ['agents', 'systemPrompt', 'scripted', 'inprocessRun', 'subagentTool']
  export interface Config {
    provider: string
    model?: string
    /** Language of the status lines and of the demo's messages to the model (default `en-US`). */
    locale?: Locale
  }
  // field descriptions: `config.demo` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({ provider: Schema.string().default('auto'), model: Schema.string(), locale: localeOption() }),
    'demo',
  )
}

export default DemoDriver
