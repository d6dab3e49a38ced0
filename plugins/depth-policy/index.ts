import type { Context } from 'cordis'
import Schema from 'schemastery'
import { localizeConfig } from '../../locales/index.ts'
import { listenDirect, updateInPlace } from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'

/**
 * Deployment-wide depth cap (SPEC §4), applied through `subagent/prepare`. It only ever lowers the
 * effective cap; it never touches a persisted header depth. A config update applies in place and
 * takes effect for the next start; running children are not touched.
 */
export function DepthPolicy(ctx: Context, config: DepthPolicy.Config): void {
  let current = config
  // in place, not by cordis's restart: between a restart's unload and its apply no listener caps
  // depth, and a start landing there (a fan-out in flight during a config save) would have no cap
  updateInPlace<DepthPolicy.Config>(ctx, (next) => {
    current = next
  })
  // `listenDirect`: both fire on every start or model request, and cordis's listener wrapper costs
  // more than the listener
  listenDirect(ctx, 'subagent/prepare', (plan) => {
    plan.capDepth(current.maxDepth)
  })
  // what the model is shown, and whether it sees the delegation tool at all (SPEC §9)
  listenDirect(ctx, 'subagent/outlook', (outlook) => {
    outlook.capDepth(current.maxDepth)
  })
}

export namespace DepthPolicy {
  export const inject = ['inprocessRun']
  export interface Config {
    maxDepth: number
  }
  // field descriptions: `config.depthPolicy` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(Schema.object({ maxDepth: Schema.natural().default(3) }), 'depthPolicy')
}

export default DepthPolicy
