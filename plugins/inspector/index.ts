/**
 * `Inspector` (SPEC §10 live view): serves, on 127.0.0.1 only, a page with the live agent tree and
 * the selected agent's transcript as it streams. `readSavedSessions` + `InspectorServer` show a
 * folder of session files the same way (`subagent-inprocess inspect <dir>`).
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { thrownMessage } from '../../lib/errors.ts'
import type { Session } from '../../lib/types.ts'
import { localizeConfig } from '../../locales/index.ts'
import { listenDirect } from '../host/index.ts'
import type {} from '../approvals/index.ts'
import type {} from '../inprocess-run/index.ts'
import { ApprovalDesk } from './approval-desk.ts'
import { LiveTree } from './live-tree.ts'
import { FLUSH_WINDOW_MS, InspectorServer } from './server.ts'

export { ApprovalDesk, notPendingMessage } from './approval-desk.ts'
export { DECISION_PATH, foreignOriginMessage, SECRET_HEADER, wrongSecretMessage } from './decision-route.ts'
export { readSavedSessions, skippedMessage, tornMessage } from './saved.ts'
export {
  badTargetMessage,
  type InspectorServerOptions,
  type InspectorSource,
  InspectorServer,
  LOOPBACK,
  MAX_UNREAD_BYTES,
  refusedHostMessage,
} from './server.ts'

declare module 'cordis' {
  interface Context {
    inspector: InspectorServer
  }
}

/** Logged (info) once the page is served. */
export const servingMessage = (url: string) => `inspector: ${url}`

/** Logged (warn) for an error of the listening socket; the page is still served. */
export const serverErrorMessage = (message: string) => `inspector: the server's socket failed (${message}); still listening`

/**
 * Listens on `port` (0: any free one) and provides `ctx.inspector`, without waiting for the host.
 * Agents are shown from the moment both are loaded (the ones already published included); disposed agents stay in the view.
 * While an `Approvals` plugin is loaded, its pending requests are shown with Approve / Deny / Always.
 * Unloading it closes every stream and the port. A taken port rejects the plugin's load.
 */
export async function Inspector(ctx: Context, config: Inspector.Config): Promise<void> {
  let published: () => readonly Session[] = () => []
  const tree = new LiveTree(() => published())
  const desk = new ApprovalDesk()
  const server = new InspectorServer(tree, 'subagent-inprocess inspector', { approvals: desk })
  const url = await server.listen(config?.port ?? 0)
  ctx.effect(() => () => void server.close(), 'inspector server')
  ctx.provide('inspector', server)
  const logger = ctx.logger('inspector')
  server.on('server-error', (error) => logger.warn(serverErrorMessage(thrownMessage(error))))
  logger.info(servingMessage(url))
  // the page is up before the host is: a CLI loads this plugin ahead of the config that adds it
  ctx.inject(['agents', 'sessions'], (inner) => {
    // one call per fold: a service call through cordis's proxy costs microseconds
    const sessions = inner.sessions
    for (const agent of inner.agents.list()) tree.track(agent.session)
    // the only work on the host's path: one call per created agent and one per settled run, and
    // none per session event (the tree reads the sessions' own event lists when it folds)
    listenDirect(inner, 'agent/created', (agent) => tree.track(agent.session))
    listenDirect(inner, 'subagent/end', (info) => {
      if (info.stopReason !== undefined) tree.settle(info.childId, info.stopReason)
    })
    // folding on a timer even with no page open keeps turn-end times within one window
    inner.effect(() => {
      published = () => sessions.list()
      const timer = setInterval(() => tree.sync(), FLUSH_WINDOW_MS).unref()
      return () => {
        clearInterval(timer)
        // without the host no session grows any more: the next fold stops polling them all
        published = () => []
      }
    }, 'inspector fold')
  })
  // the approvals panel: live while an Approvals plugin is loaded
  ctx.inject(['approvals'], (inner) => {
    inner.effect(() => desk.attach(inner.approvals), 'inspector approvals')
    inner.on('approval/asked', (request) => desk.asked(request))
    inner.on('approval/decided', (request, decision) => desk.decided(request, decision))
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
