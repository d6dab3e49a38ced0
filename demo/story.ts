/**
 * What the demo asks: the same two user messages go to the scripted model and to a real one.
 */
import type { JsonSchema } from '../lib/types.ts'

/** Global system prompt of the demo (parent and children alike). */
export const PERSONA =
  'You are a concise engineering assistant for a small open-source library. Keep every answer under 80 words.'

/** Turn 1: context that a forked child will see and a spawned one will not. */
export const CONTEXT_MESSAGE =
  'We maintain tinyqueue, a 120-line TypeScript priority queue. Version 2.0 drops Node 16 and renames `peek()` to `top()`.'

/** The schema the third child answers with (the scripted parent sends this one). */
export const CHECKLIST_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    version: { type: 'string' },
    breaking: { type: 'boolean' },
    steps: { type: 'array', items: { type: 'string' } },
  },
  required: ['version', 'breaking', 'steps'],
  additionalProperties: false,
}

/** Turn 2: the delegation task. */
export const TASK_MESSAGE = [
  'Prepare the 2.0 release. Use the `subagent` tool three times, one call at a time:',
  '1. mode "spawn", label "migration-note": a two-sentence migration note about the rename (give it the facts it needs; it does not see this conversation);',
  '2. mode "fork", label "changelog": the 2.0 changelog entry (it sees this conversation);',
  '3. label "checklist", with an output_schema for {version: string, breaking: boolean, steps: string[]}: the release checklist.',
  'Then summarize the results for me in three short lines.',
].join('\n')
