/**
 * A host process for the Postgres crash test: `SessionPostgres` on the connection and schema given
 * as argv[2] and argv[3], a root agent whose first step starts a background child ("digger", whose
 * model streams and then waits) and calls `deploy`. `deploy`'s body runs to its end; then, before
 * its `tool/result` is appended, the store is flushed and `ready <rootId> <childId>` is written to
 * stdout — and the process waits there for the SIGKILL the test sends.
 */
import { Context } from 'cordis'
import type { Agent, ModelRequest } from '../../lib/types.ts'
import Host from '../../plugins/host/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import ScriptedModel from '../../plugins/scripted-model/index.ts'
import SessionPostgres from '../../plugins/session-postgres/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'

const [connectionString, schema] = process.argv.slice(2)
const root = new Context()
await root.plugin(Host, {} as Host.Config)
await root.plugin(ScriptedModel, {} as ScriptedModel.Config)
await root.plugin(SessionPostgres, { connectionString, schema })
await root.plugin(InProcessRun)
await root.plugin(SubagentTool, {} as SubagentTool.Config)

let child: Agent | undefined
root.tools.register({
  name: 'deploy',
  description: 'deploys the release',
  parameters: { type: 'object' },
  execute: async () => ({ isError: false, content: [{ type: 'text', text: 'deployed' }] }),
})
// after the body, before the result reaches the session: the window the crash falls into
root.on('tools/post-execute', async (exec, _result, next) => {
  if (exec.name !== 'deploy') return next()
  while (!child?.session.events.some((event) => event.type === 'assistant/delta')) await new Promise((resolve) => setTimeout(resolve, 5))
  await root.sessionPostgres.flush()
  process.stdout.write(`ready ${exec.agent!.id} ${child.id}\n`)
  return new Promise(() => {})
})
root.on('agent/created', (agent) => {
  if (agent.session.header.parentSession !== undefined) child = agent
})

const { agent } = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
const parentAnswer = {
  toolCalls: [
    { id: 'call_bg', name: 'subagent', arguments: { prompt: 'dig', label: 'digger', background: true } },
    { id: 'call_deploy', name: 'deploy', arguments: {} },
  ],
}
const route = (request: ModelRequest) => (request.agent === agent ? parentAnswer : ('hang' as const))
root.scripted.push(route, route)
agent.followup('release it')
