/**
 * The data shapes of the event types the agent loop writes (SPEC §1.4's table), checked where a
 * seed or a stored session is read back: readers (`messages()`, `readResult`, the budget's sums)
 * take a known event's fields as typed, so an `assistant/message` without `content` failed every
 * later turn of a resumed agent with a bare `TypeError`. Events of other types are a plugin's own
 * and are not checked. Pure: no cordis, no I/O.
 */
import { contentBlockProblem, kindOf } from '../content.ts'
import { BUDGET_LIMITS } from '../delegation/tree-budget.ts'

type Fields = Record<string, unknown>


/**
 * Why `data` is not the data of an event of `type`, as `<path> <problem>` rooted at `data`
 * (`data.content must be an array, got undefined`, `data.content[1] text must be a string, got
 * number`), or `undefined` when it is, or when `type` is not one the loop writes. Extra keys are
 * allowed. `data` must already be JSON data (`lib/json/json-data.ts`); reads each field at most once
 * and allocates nothing for valid data.
 */
export function eventDataProblem(type: string, data: unknown): string | undefined {
  switch (type) {
    case 'turn/start':
      if (!isFields(data)) return `data must be an object, got ${kindOf(data)}`
      return numberProblem(data.turn, 'data.turn') ?? (data.trigger === 'message' ? undefined : `data.trigger must be "message", got ${found(data.trigger)}`)
    case 'user/message':
      if (!isFields(data)) return `data must be an object, got ${kindOf(data)}`
      return contentProblem(data.content) ?? sourceProblem(data.source)
    case 'step/start':
      if (!isFields(data)) return `data must be an object, got ${kindOf(data)}`
      return numberProblem(data.turn, 'data.turn') ?? numberProblem(data.step, 'data.step')
    case 'assistant/delta':
      if (!isFields(data)) return `data must be an object, got ${kindOf(data)}`
      return numberProblem(data.turn, 'data.turn') ?? numberProblem(data.step, 'data.step') ?? stringProblem(data.text, 'data.text')
    case 'assistant/message':
      if (!isFields(data)) return `data must be an object, got ${kindOf(data)}`
      return (
        numberProblem(data.turn, 'data.turn') ??
        numberProblem(data.step, 'data.step') ??
        contentProblem(data.content) ??
        usageProblem(data.usage) ??
        (data.interrupted === undefined || data.interrupted === true ? undefined : `data.interrupted must be true when present, got ${found(data.interrupted)}`)
      )
    case 'tool/result':
      if (!isFields(data)) return `data must be an object, got ${kindOf(data)}`
      return (
        numberProblem(data.turn, 'data.turn') ??
        numberProblem(data.step, 'data.step') ??
        stringProblem(data.callId, 'data.callId') ??
        stringProblem(data.name, 'data.name') ??
        (typeof data.isError === 'boolean' ? undefined : `data.isError must be a boolean, got ${kindOf(data.isError)}`) ??
        contentProblem(data.content)
      )
    case 'turn/end':
      if (!isFields(data)) return `data must be an object, got ${kindOf(data)}`
      return numberProblem(data.turn, 'data.turn') ?? reasonProblem(data.reason)
    case 'session/end-seed':
      return isFields(data) ? undefined : `data must be an object, got ${kindOf(data)}`
    default:
      return undefined
  }
}

/**
 * Why `cause` is not a cancel cause (SPEC §1.2 `CancelCause`), as a phrase after its name
 * (`must be an object, got string`, `kind must be a string, got number`), or `undefined`. Only the
 * `kind` a reader names the cancellation by is required: a plugin may cancel with a kind of its own.
 */
export function cancelCauseProblem(cause: unknown): string | undefined {
  if (!isFields(cause)) return `must be an object, got ${kindOf(cause)}`
  return typeof cause.kind === 'string' ? undefined : `kind must be a string, got ${kindOf(cause.kind)}`
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A found value for a message: a string quoted (the first 40 characters), anything else by its kind. */
function found(value: unknown): string {
  if (typeof value !== 'string') return kindOf(value)
  return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}…` : JSON.stringify(value)
}

function numberProblem(value: unknown, path: string): string | undefined {
  return typeof value === 'number' ? undefined : `${path} must be a number, got ${kindOf(value)}`
}

function stringProblem(value: unknown, path: string): string | undefined {
  return typeof value === 'string' ? undefined : `${path} must be a string, got ${kindOf(value)}`
}

function contentProblem(content: unknown): string | undefined {
  if (!Array.isArray(content)) return `data.content must be an array, got ${kindOf(content)}`
  for (let i = 0; i < content.length; i++) {
    const problem = contentBlockProblem(content[i])
    if (problem) return `data.content[${i}] ${problem}`
  }
  return undefined
}

/** A source needs a string `kind`: `session.append` takes a plugin's own, and what it wrote must read back. */
function sourceProblem(source: unknown): string | undefined {
  if (!isFields(source)) return `data.source must be an object, got ${kindOf(source)}`
  return stringProblem(source.kind, 'data.source.kind')
}

/** The loop's rule for a finish part's usage: non-negative finite counts (a sum of them is a result's `usage`). */
function usageProblem(usage: unknown): string | undefined {
  if (usage === undefined) return undefined
  if (!isFields(usage)) return `data.usage must be an object, got ${kindOf(usage)}`
  if (!isCount(usage.inputTokens)) return `data.usage.inputTokens must be a non-negative number, got ${found(usage.inputTokens)}`
  if (!isCount(usage.outputTokens)) return `data.usage.outputTokens must be a non-negative number, got ${found(usage.outputTokens)}`
  return undefined
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && value >= 0
}

/**
 * A reason needs a string `kind`; the fields of the kinds that have them are checked. A kind of its
 * own is kept: `session.append` takes it, and result reading maps it to `error` (SPEC §2.4).
 */
function reasonProblem(reason: unknown): string | undefined {
  if (!isFields(reason)) return `data.reason must be an object, got ${kindOf(reason)}`
  const kind = reason.kind
  if (typeof kind !== 'string') return `data.reason.kind must be a string, got ${kindOf(kind)}`
  if (kind === 'aborted') {
    const problem = cancelCauseProblem(reason.cause)
    return problem ? `data.reason.cause ${problem}` : undefined
  }
  if (kind === 'error') return errorProblem(reason.error)
  if (kind === 'budget') return budgetProblem(reason)
  return undefined
}

function errorProblem(error: unknown): string | undefined {
  if (!isFields(error)) return `data.reason.error must be an object, got ${kindOf(error)}`
  return (
    stringProblem(error.message, 'data.reason.error.message') ??
    (error.code === undefined ? undefined : stringProblem(error.code, 'data.reason.error.code'))
  )
}

function budgetProblem(reason: Fields): string | undefined {
  const { limit, used, max } = reason
  if (typeof limit !== 'string' || !(BUDGET_LIMITS as readonly string[]).includes(limit)) {
    return `data.reason.limit must be "tokens", "modelRequests" or "children", got ${found(limit)}`
  }
  return (used === undefined ? undefined : numberProblem(used, 'data.reason.used')) ?? (max === undefined ? undefined : numberProblem(max, 'data.reason.max'))
}
