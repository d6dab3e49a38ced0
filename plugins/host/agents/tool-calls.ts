/**
 * Step 5 of the agent loop (SPEC §1.4, §8.1): runs one step's tool calls and appends their
 * `tool/result` events. Consecutive calls of concurrent tools run at once; any other call is a
 * barrier. Results are appended in model order whatever order the calls finish in, so the next
 * model request is the same as if the calls had run one by one.
 */
import { isThenable } from '../../../lib/async/thenable.ts'
import { toolCallBatches } from '../../../lib/tool-batches.ts'
import type { Agent, ToolCallBlock, ToolResult } from '../../../lib/types.ts'
import type { SessionLog } from '../sessions/session-store.ts'
import type { Tools } from '../tools/index.ts'

export interface StepCalls {
  readonly agent: Agent
  readonly session: SessionLog
  readonly tools: Tools
  readonly turn: number
  readonly step: number
  /**
   * The turn's cancellation: every call gets its signal (made only when a tool reads
   * `exec.signal`, see `Tools.executeTurnCall`); no batch starts after it aborted.
   */
  readonly cancellation: { readonly aborted: boolean; readonly signal: AbortSignal }
}

type Outcome = { result: ToolResult } | { fault: unknown }

/**
 * Starts one call through the pipeline, with the turn's cancellation as its signal source: its
 * result itself when the call met no promise on its way (`Tools.executeTurnCall`).
 */
function start(call: ToolCallBlock, step: StepCalls): ToolResult | Promise<ToolResult> {
  return step.tools.executeTurnCall(call, step.agent, step.cancellation)
}

/** The call's outcome; never rejects, even for a pipeline that throws synchronously. */
function settle(call: ToolCallBlock, step: StepCalls): Promise<Outcome> {
  try {
    return Promise.resolve(start(call, step)).then(
      (result) => ({ result }),
      (fault: unknown) => ({ fault }),
    )
  } catch (fault) {
    return Promise.resolve({ fault })
  }
}

/**
 * Runs `calls` and appends one `tool/result` per call that ran, in model order. Resolves once
 * every started call has returned (tools are awaited, even after an abort: one may need to clean
 * up). Starts nothing once the signal has aborted. Rejects only when the pipeline itself rejects,
 * and then only after every sibling of that call has returned; no result after it is appended.
 * Returns `undefined` instead of a promise when the step's one call finished at once (its
 * `tool/result` is appended then): a structured child's capture costs the loop no tick.
 */
export function runStepCalls(calls: readonly ToolCallBlock[], step: StepCalls): Promise<void> | undefined {
  // one call (most steps) needs no classification, and no async frame unless it answers with a promise
  return calls.length === 1 ? runCall(calls[0], step) : runBatches(calls, step)
}

function runCall(call: ToolCallBlock, step: StepCalls): Promise<void> | undefined {
  if (step.cancellation.aborted) return undefined
  const result = start(call, step)
  if (isThenable(result)) return recordLater(step, call, result)
  record(step, call, result)
  return undefined
}

async function recordLater(step: StepCalls, call: ToolCallBlock, result: PromiseLike<ToolResult>): Promise<void> {
  record(step, call, await result)
}

async function runBatches(calls: readonly ToolCallBlock[], step: StepCalls): Promise<void> {
  const { agent, tools, cancellation } = step
  for (const batch of toolCallBatches(calls, (call) => tools.isConcurrent(call.name, agent))) {
    if (cancellation.aborted) return
    if (batch.length === 1) {
      record(step, batch[0], await start(batch[0], step))
      continue
    }
    // every call enters its pipeline before any is awaited; each outcome is caught at once, so a
    // late sibling's rejection is never unhandled while an earlier one is still running
    const running = batch.map((call) => settle(call, step))
    let fault: { error: unknown } | undefined
    for (let index = 0; index < batch.length; index++) {
      const outcome = await running[index]
      if (fault) continue
      if ('fault' in outcome) fault = { error: outcome.fault }
      else record(step, batch[index], outcome.result)
    }
    if (fault) throw fault.error
  }
}

function record({ session, turn, step }: StepCalls, call: ToolCallBlock, result: ToolResult): void {
  // the pipeline's result is built from checked parts: no second JSON-data walk
  session.appendToolResult(turn, step, call.id, call.name, result.isError, result.content)
}
