/**
 * A second host process for the lease tests: `node --import tsx lease-process.ts <connection>
 * <schema> <command> <rootId>`, where command is `create` (a root with that id and one child) or
 * `resume` (the stored tree's root). It prints one JSON line — `{"ready": [ids]}` or
 * `{"error": message, "code": code}` — then stays up, holding what it published, until stdin closes.
 */
import { Context } from 'cordis'
import { thrownMessage } from '../../lib/errors.ts'
import { Host } from '../../plugins/host/index.ts'
import { ScriptedModel } from '../../plugins/scripted-model/index.ts'
import { SessionPostgres } from '../../plugins/session-postgres/index.ts'

const [connectionString, schema, command, rootId] = process.argv.slice(2)
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`)

const root = new Context()
await root.plugin(Host, { maxSteps: 8 })
await root.plugin(ScriptedModel, {} as ScriptedModel.Config)
await root.plugin(SessionPostgres, { connectionString, schema })
const agentOptions = { provider: 'scripted', model: 'test' }
try {
  if (command === 'create') {
    const parent = await root.agents.create({ sessionId: rootId, agentOptions })
    const child = await root.agents.create({ owner: parent.agent, header: { parentSession: rootId, origin: 'subagent', delegationDepth: 1 }, agentOptions })
    await root.sessionPostgres.flush()
    print({ ready: [parent.agent.id, child.agent.id] })
  } else {
    const resumed = await root.agents.resume(rootId as string, { agentOptions })
    print({ ready: [resumed.agent.id] })
  }
} catch (error) {
  print({ error: thrownMessage(error), code: (error as { code?: unknown }).code })
}
process.stdin.resume()
process.stdin.on('end', async () => {
  await root.sessionPostgres.flush()
  process.exit(0)
})
