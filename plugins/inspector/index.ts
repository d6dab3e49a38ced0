/**
 * `Inspector` (SPEC §10 live view): serves, on 127.0.0.1 only, a page with the live agent tree and
 * the selected agent's transcript as it streams. `readSavedSessions` + `InspectorServer` show a
 * folder of session files the same way (`subagent-inprocess inspect <dir>`).
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { type AgentView, applyEvent, viewOfHeader } from '../../lib/agent-view.ts'
import type { Session } from '../../lib/types.ts'
import { localizeConfig } from '../../locales/index.ts'
import { listenDirect } from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import { InspectorServer } from './server.ts'

export { readSavedSessions, skippedMessage, tornMessage } from './saved.ts'
export { type InspectorSource, InspectorServer, LOOPBACK, refusedHostMessage } from './server.ts'

declare module 'cordis' {
  interface Context {
    inspector: InspectorServer
  }
}

/** Logged (info) once the page is served. */
export const servingMessage = (url: string) => `inspector: ${url}`

/**
 * Listens on `port` (0: any free one) and provides `ctx.inspector`, without waiting for the host.
 * Agents are shown from the moment both are loaded (the ones already published included); disposed agents stay in the view.
 * Unloading it closes every stream and the port. A taken port rejects the plugin's load.
 */
export async function Inspector(ctx: Context, config: Inspector.Config): Promise<void> {
  const views = new Map<string, AgentView>()
  const sessions = new Map<string, Session>()
  const server = new InspectorServer(
    {
      agents: () => [...views.values()],
      events: (id) => sessions.get(id)?.events,
      problems: () => [],
    },
    'subagent-inprocess inspector',
  )
  const track = (session: Session) => {
    if (views.has(session.id)) return
    const view = viewOfHeader(session.header)
    const seedLength = session.header.seedLength ?? 0
    for (const event of session.events) applyEvent(view, event, seedLength)
    views.set(session.id, view)
    sessions.set(session.id, session)
    server.publishAgent(view)
  }
  const url = await server.listen(config?.port ?? 0)
  ctx.effect(() => () => void server.close(), 'inspector server')
  ctx.provide('inspector', server)
  ctx.logger('inspector').info(servingMessage(url))
  // the page is up before the host is: a CLI loads this plugin ahead of the config that adds it
  ctx.inject(['agents'], (inner) => {
    for (const agent of inner.agents.list()) track(agent.session)
    listenDirect(inner, 'agent/created', (agent) => track(agent.session))
    listenDirect(inner, 'session/event', (session, event) => {
      const view = views.get(session.id)
      if (!view) return track(session)
      const { status } = view
      const tokens = view.usage.inputTokens
      applyEvent(view, event, session.header.seedLength ?? 0, Date.now())
      if (view.status !== status || view.usage.inputTokens !== tokens) server.publishAgent(view)
      server.publishEvent(session.id, event)
    })
    listenDirect(inner, 'subagent/end', (info) => {
      const view = views.get(info.childId)
      if (!view || info.stopReason === undefined) return
      view.stopReason = info.stopReason
      view.endedAt ??= Date.now()
      server.publishAgent(view)
    })
  })
}

export namespace Inspector {
  export interface Config {
    port?: number
  }
  // field descriptions: `config.inspector` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(Schema.object({ port: Schema.natural().max(65535) }), 'inspector')
}

export default Inspector
