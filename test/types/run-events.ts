/**
 * Type tests, checked by `npm run typecheck` (never run): the `run.events()` example of docs/watching.md
 * compiles as written, and a run event carries its lineage.
 */
import type { InProcessRun, RunEvent, SubagentStartRequest } from '../../index.ts'

declare const driver: InProcessRun
declare const request: SubagentStartRequest

export async function readmeExample(): Promise<void> {
  const run = await driver.spawn(request)
  for await (const { agentId, parentId, depth, event } of run.events()) {
    console.log(`${'  '.repeat(depth)}${agentId} (child of ${parentId}) #${event.seq} ${event.type}`)
    if (event.type === 'turn/end' && agentId === run.id) break
  }
  await run.result
}

export function lineage(item: RunEvent): void {
  const depth: number = item.depth
  // @ts-expect-error a run event is read-only
  item.agentId = 'other'
  void depth
}
